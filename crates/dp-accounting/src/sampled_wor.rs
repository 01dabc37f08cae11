//! RDP of the Gaussian mechanism on a batch sampled **without replacement**, under
//! **replace-one** neighbours (Wang, Balle & Kasiviswanathan 2019).
//!
//! # Privacy
//! Neighbouring relation: replace-one (`D` and `D'` both have `n` records and differ in
//! one of them; `n` is public).
//!
//! Precondition: every step draws a uniformly random subset of exactly `m` of the `n`
//! records (`gamma = m / n`), computes a function of the batch whose L2 sensitivity
//! under replacing one record of the batch is `Delta` (for a sum of per-example
//! gradients clipped to norm `C`, `Delta = 2 C`), and adds Gaussian noise of standard
//! deviation `z Delta`. The base mechanism (the Gaussian on the batch) is then
//! `(alpha, eps(alpha))`-RDP with `eps(alpha) = alpha / (2 z^2)` for every order, and
//! `eps(infinity) = infinity`.
//!
//! Claim (Wang, Balle & Kasiviswanathan 2019, "Subsampled Renyi Differential Privacy
//! and Analytical Moments Accountant", AISTATS, Theorem 9): at every integer
//! `alpha >= 2` the subsampled mechanism is `(alpha, eps'(alpha))`-RDP with
//!
//! ```text
//! eps'(alpha) <= 1/(alpha-1) * log( 1
//!     + gamma^2 C(alpha,2) min{ 4 (e^{eps(2)} - 1), 2 e^{eps(2)} }
//!     + sum_{j=3}^{alpha} gamma^j C(alpha,j) 2 e^{(j-1) eps(j)} )
//! ```
//!
//! (the theorem's `min{2, (e^{eps(inf)} - 1)^j}` is `2` for the Gaussian). At a
//! fractional order the bound interpolates `(alpha-1) eps'(alpha)` linearly between the
//! neighbouring integers (their Corollary 10: `(alpha-1) D_alpha` is convex in `alpha`
//! and vanishes at `alpha = 1`, so the chord through upper bounds lies above it). At
//! every order the result is also capped by the plain Gaussian's `alpha / (2 z^2)`: by
//! quasi-convexity of the Renyi divergence over the common choice of batch, sampling
//! never hurts.
//!
//! The same paper's Theorem 27 (its "strengthened" bound, which Google's `dp_accounting`
//! implements) replaces the `j >= 3` terms by
//!
//! ```text
//! gamma^j C(alpha,j) min{ 4 sqrt(B(2 floor(j/2)) B(2 ceil(j/2))), 2 e^{(j-1) eps(j)} }
//! ```
//!
//! where `B(m)` is the `m`-th forward difference at 0 of `l -> e^{(l-1) eps(l)}`, i.e.
//! `B(m) = E[(e^U - 1)^m]` with `U ~ N(-t, 2t)`, `t = 1/(2 z^2)` (the Gaussian's
//! privacy-loss variable). Computed directly, `B(m)` is an alternating sum that cancels
//! catastrophically in floating point. We use instead a provable upper bound: from
//! `|e^U - 1| = 2 e^{U/2} |sinh(U/2)| <= |U| (1 + e^U) / 2` (since `|sinh y| <= |y| cosh y`),
//!
//! ```text
//! B(m) <= 2^{-m} sum_k C(m,k) E[U^m e^{kU}]
//!       = 2^{-m} sum_k C(m,k) e^{-k t + k^2 t} E[V_k^m],   V_k ~ N((2k - 1) t, 2t),
//! ```
//!
//! and for even `m` every Gaussian moment `E[V^m] = sum_{i even} C(m,i) |mean|^{m-i}
//! (2t)^{i/2} (i-1)!!` is a sum of non-negative terms: no cancellation anywhere. A larger
//! `B` only enlarges a term, so the bound stays valid; against `dp_accounting`'s exact
//! forward differences it costs a few per cent of epsilon (e.g. 1.45 against 1.37 at
//! `gamma = 0.043, z = 5`, 240 steps, `delta = 1e-5`, Mironov's conversion, integer
//! orders). The strengthened terms are used for `j <= `[`STRENGTHENED_TERMS`]; beyond,
//! Theorem 9's term (the other argument of the minimum, hence also valid) is used.
//!
//! Without the strengthening, Theorem 9's terms do not vanish as `z` grows (they tend to
//! `2 gamma^j C(alpha, j)`), so for long runs at small epsilon the bound falls back to
//! the plain Gaussian and sampling buys nothing.
//!
//! # Numerics
//! Every term is positive and summed in log space with incremental log-binomials, so
//! nothing overflows (orders in the thousands are fine). The table of `B(m)` is built
//! once per noise multiplier ([`SampledWorCurve`]), `O(J^3)` with
//! `J = `[`STRENGTHENED_TERMS`]; an order then costs `O(alpha)`.

use crate::error::{AccountingError, Result};
use crate::num::{log_add_exp, log_expm1};

/// Largest order at which the subsampled bound is evaluated; above it the plain
/// Gaussian's `alpha / (2 z^2)` is returned (valid at every order). An order costs
/// `O(alpha)`, and orders above 256 are not where the optimum lies for the sampled
/// mechanism (Google's `dp_accounting` evaluates the same bound up to 256 too).
pub const MAX_ORDER: f64 = 256.0;

/// Number of `j >= 3` terms that use Theorem 27's strengthened form.
pub const STRENGTHENED_TERMS: u64 = 40;

/// `log E[(mean + s Z)^m]` for even `m` (`s2 = s^2`), a sum of non-negative terms.
fn log_even_gaussian_moment(mean: f64, s2: f64, m: u64) -> f64 {
    let lm = mean.abs().ln(); // -inf when mean == 0: only the i = m term survives
    let ls2 = s2.ln();
    let mf = m as f64;
    let mut acc = f64::NEG_INFINITY;
    // i = 0: C(m,0) |mean|^m
    let mut log_binom = 0.0; // log C(m, i)
    let mut log_dfact = 0.0; // log (i-1)!!
    let mut i = 0u64;
    loop {
        let fi = i as f64;
        let pow_mean = if m == i { 0.0 } else { (mf - fi) * lm };
        acc = log_add_exp(acc, log_binom + pow_mean + 0.5 * fi * ls2 + log_dfact);
        if i + 2 > m {
            break;
        }
        // C(m, i+2) = C(m, i) (m-i)(m-i-1) / ((i+1)(i+2)); (i+1)!! = (i-1)!! (i+1)
        log_binom += ((mf - fi) * (mf - fi - 1.0) / ((fi + 1.0) * (fi + 2.0))).ln();
        log_dfact += (fi + 1.0).ln();
        i += 2;
    }
    acc
}

/// `log` of the upper bound on `B(m)` (module docs), even `m >= 2`.
fn log_forward_difference_bound(z: f64, m: u64) -> f64 {
    let t = 1.0 / (2.0 * z * z);
    let s2 = 2.0 * t;
    let mf = m as f64;
    let mut acc = f64::NEG_INFINITY;
    let mut log_binom = 0.0; // log C(m, k)
    for k in 0..=m {
        let kf = k as f64;
        let mean = (2.0 * kf - 1.0) * t;
        let term = log_binom + (kf * kf - kf) * t + log_even_gaussian_moment(mean, s2, m);
        acc = log_add_exp(acc, term);
        log_binom += ((mf - kf) / (kf + 1.0)).ln();
    }
    acc - mf * std::f64::consts::LN_2
}

/// The RDP curve of the Gaussian with noise multiplier `z` on batches of a fraction
/// `gamma` drawn without replacement (module docs). Build once per `(gamma, z)`, then
/// evaluate at many orders.
#[derive(Debug, Clone)]
pub struct SampledWorCurve {
    gamma: f64,
    z: f64,
    /// `log B(m)` bound for even `m`, indexed by `m / 2`.
    log_b: Vec<f64>,
}

impl SampledWorCurve {
    /// The curve for sampling fraction `gamma` in (0, 1] and multiplier `z > 0`
    /// (unchecked; see [`sampled_wor_gaussian_rdp`] for the checked entry point).
    pub fn new(gamma: f64, z: f64) -> Self {
        let max_m = STRENGTHENED_TERMS + 1;
        let log_b = (0..=max_m / 2 + 1)
            .map(|h| {
                if h == 0 {
                    0.0
                } else {
                    log_forward_difference_bound(z, 2 * h)
                }
            })
            .collect();
        Self { gamma, z, log_b }
    }

    /// `(alpha - 1) eps'(alpha)` at integer `alpha >= 2`, or any value above `cap` once
    /// the partial sum exceeds it (every term is positive, so the sum can only grow; the
    /// caller takes the minimum with `cap`, the plain Gaussian's value).
    fn log_moment_int(&self, alpha: u64, cap: f64) -> f64 {
        let (gamma, z) = (self.gamma, self.z);
        let a = alpha as f64;
        let lg = gamma.ln();
        let inv2z2 = 1.0 / (2.0 * z * z);
        let eps2 = 2.0 * inv2z2;
        let ln2 = std::f64::consts::LN_2;
        // j = 2
        let mut log_binom = (a * (a - 1.0) / 2.0).ln();
        let t2 = (2.0 * ln2 + log_expm1(eps2)).min(ln2 + eps2);
        let mut acc = log_add_exp(0.0, 2.0 * lg + log_binom + t2);
        for j in 3..=alpha {
            let jf = j as f64;
            log_binom += ((a - jf + 1.0) / jf).ln();
            // Theorem 9: 2 e^{(j-1) eps(j)} with eps(j) = j / (2 z^2)
            let mut inner = ln2 + (jf - 1.0) * jf * inv2z2;
            if j <= STRENGTHENED_TERMS {
                // Theorem 27: 4 sqrt(B(2 floor(j/2)) B(2 ceil(j/2)))
                let lo = self.log_b[(j / 2) as usize];
                let hi = self.log_b[j.div_ceil(2) as usize];
                inner = inner.min(2.0 * ln2 + 0.5 * (lo + hi));
            }
            acc = log_add_exp(acc, jf * lg + log_binom + inner);
            if acc > cap {
                break;
            }
        }
        acc
    }

    /// The bound at order `alpha > 1` (NaN for `alpha <= 1`).
    pub fn rdp(&self, alpha: f64) -> f64 {
        let z = self.z;
        let plain = alpha / (2.0 * z * z);
        if self.gamma >= 1.0 || alpha > MAX_ORDER {
            return plain;
        }
        if alpha.is_nan() || alpha <= 1.0 {
            return f64::NAN;
        }
        let lo = alpha.floor();
        let hi = alpha.ceil();
        // At each integer k, the smaller of two valid bounds on (k - 1) D_k: the
        // theorem's and the plain Gaussian's (k - 1) k / (2 z^2) (the partial sums stop
        // once above it). Interpolating valid upper bounds of a convex function that
        // vanishes at 1 gives a valid upper bound in between.
        let cgf = |k: f64| {
            if k < 2.0 {
                0.0 // (alpha - 1) eps'(alpha) = 0 at alpha = 1
            } else {
                let plain_cgf = (k - 1.0) * k / (2.0 * z * z);
                self.log_moment_int(k as u64, plain_cgf).min(plain_cgf)
            }
        };
        let v = if lo == hi {
            cgf(lo) / (alpha - 1.0)
        } else {
            let t = alpha - lo;
            ((1.0 - t) * cgf(lo) + t * cgf(hi)) / (alpha - 1.0)
        };
        v.min(plain)
    }
}

/// The bound at any order `alpha > 1` (unchecked; builds the curve for one order).
pub(crate) fn rdp_unchecked(gamma: f64, z: f64, alpha: f64) -> f64 {
    SampledWorCurve::new(gamma, z).rdp(alpha)
}

/// RDP at order `alpha` of the Gaussian mechanism with noise multiplier `z` (std over
/// the replace-one sensitivity) on a batch of `gamma n` records drawn without
/// replacement (see the module docs), rounded up.
///
/// Errors on `gamma` outside (0, 1], `z` not finite and > 0, or an order that is not
/// finite and > 1.
///
/// ```
/// use dp_accounting::sampled_wor::sampled_wor_gaussian_rdp;
/// // Sampling 1 % of the records: far below the plain Gaussian's alpha / (2 z^2) = 1.
/// let e = sampled_wor_gaussian_rdp(0.01, 1.0, 2.0).unwrap();
/// assert!(e < 1e-3);
/// ```
pub fn sampled_wor_gaussian_rdp(gamma: f64, z: f64, alpha: f64) -> Result<f64> {
    crate::subsampled::check_sampled_gaussian_args(
        "sampling fraction (batch size / n)",
        gamma,
        z,
        alpha,
    )?;
    let v = rdp_unchecked(gamma, z, alpha);
    if v.is_nan() {
        return Err(AccountingError::Numerical(format!(
            "sampled-without-replacement Gaussian RDP failed at gamma = {gamma}, sigma = {z}, order = {alpha}"
        )));
    }
    Ok(crate::num::round_up(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of `dp_accounting` 0.6.0 (`_compute_rdp_sample_wor_gaussian_scalar`, an
    /// independent implementation of the same paper) where its Theorem 27 and our
    /// Theorem 9 coincide (small gamma), and where ours is only an upper bound.
    #[test]
    fn matches_dp_accounting_where_the_theorems_agree_and_bounds_it_elsewhere() {
        let agree = [
            (0.01, 1.0, 2.0, 0.0005435086381094331),
            (0.01, 1.0, 3.0, 0.0008348726849544131),
            (0.01, 1.0, 8.0, 0.002684165012688936),
            (0.01, 1.0, 32.0, 11.26863552351778),
            (0.01, 0.8, 8.0, 1.0881254217847451),
            (0.001, 0.7, 3.0, 2.3546095017811918e-05),
            (0.001, 0.7, 32.0, 25.544834716526303),
        ];
        for (g, z, a, want) in agree {
            let got = sampled_wor_gaussian_rdp(g, z, a).unwrap();
            assert!(
                got >= want && got <= want * (1.0 + 1e-9),
                "gamma={g} z={z} alpha={a}: {got} vs {want}"
            );
        }
        // Where the exact forward differences matter, ours (an upper bound on them)
        // stays at or above dp_accounting's value, below Theorem 9 alone (the values
        // our earlier Theorem-9-only version gave: 0.0045047, 0.1330716, 0.0153651),
        // and below the plain Gaussian.
        let strengthened = [
            (0.05, 2.0, 3.0, 0.0043542507255702806, 0.004504653275109732),
            (0.2, 5.0, 8.0, 0.027724991316395612, 0.13307159841918656),
            (0.05, 2.0, 8.0, 0.012784276621227062, 0.015365070739096367),
        ];
        for (g, z, a, thm27, thm9) in strengthened {
            let got = sampled_wor_gaussian_rdp(g, z, a).unwrap();
            assert!(got >= thm27 * (1.0 - 1e-12), "{got} < {thm27}");
            assert!(got < thm9, "{got} >= Theorem 9's {thm9}");
            assert!(got <= a / (2.0 * z * z));
        }
    }

    #[test]
    fn full_batch_is_the_plain_gaussian_and_sampling_only_helps() {
        assert_eq!(rdp_unchecked(1.0, 1.3, 5.5), 5.5 / (2.0 * 1.3 * 1.3));
        for &g in &[1e-4, 1e-2, 0.3, 0.9] {
            for &a in &[1.5, 2.0, 7.25, 64.0, 1000.0] {
                let v = rdp_unchecked(g, 1.1, a);
                assert!(v.is_finite() && v >= 0.0 && v <= a / (2.0 * 1.21) + 1e-15);
            }
        }
    }

    #[test]
    fn monotone_in_the_order_and_in_gamma() {
        // (alpha - 1) eps'(alpha) is convex and 0 at 1, so eps' is non-decreasing.
        let mut prev = 0.0;
        for k in 0..200 {
            let a = 1.05 + 0.37 * k as f64;
            let v = rdp_unchecked(0.02, 0.9, a);
            assert!(v >= prev * (1.0 - 1e-12), "order {a}: {v} < {prev}");
            prev = v;
        }
        let mut prev = 0.0;
        for k in 1..100 {
            let g = k as f64 / 100.0;
            let v = rdp_unchecked(g, 0.9, 6.0);
            assert!(v >= prev, "gamma {g}");
            prev = v;
        }
    }

    /// The bound on the forward differences is above the exact value, computed here by
    /// the alternating sum where it does not cancel much (moderate z, small m), and
    /// close to it at large z (within 1.07x at z = 5, m = 4; 1.36x at m = 8, measured
    /// against 50-digit mpmath). At small z it is loose (200x at z = 0.7, m = 4), but
    /// there Theorem 9's term is the smaller one anyway.
    #[test]
    fn forward_difference_bound_is_above_the_exact_value() {
        for &z in &[0.7, 1.0, 1.5, 3.0, 5.0] {
            for m in [2u64, 4, 6, 8] {
                let t = 1.0 / (2.0 * z * z);
                let mut exact = 0.0;
                let mut binom = 1.0;
                for l in 0..=m {
                    let sign = if (m - l) % 2 == 0 { 1.0 } else { -1.0 };
                    exact += sign * binom * ((l * l) as f64 * t - l as f64 * t).exp();
                    binom = binom * (m - l) as f64 / (l + 1) as f64;
                }
                let bound = log_forward_difference_bound(z, m).exp();
                assert!(
                    bound >= exact * (1.0 - 1e-6),
                    "z={z} m={m}: {bound} < {exact}"
                );
                if z >= 3.0 {
                    assert!(bound <= 3.0 * exact, "z={z} m={m}: {bound} vs {exact}");
                }
            }
        }
    }

    /// Long runs at small epsilon: the strengthened terms make sampling pay (Theorem 9
    /// alone needs the plain Gaussian's noise here).
    #[test]
    fn long_runs_are_amplified() {
        let (g, z) = (0.043, 5.0);
        let wor = SampledWorCurve::new(g, z);
        let a = 9.0;
        assert!(wor.rdp(a) < 0.1 * a / (2.0 * z * z), "{}", wor.rdp(a));
    }

    #[test]
    fn bad_inputs_are_named() {
        assert!(sampled_wor_gaussian_rdp(0.0, 1.0, 2.0)
            .unwrap_err()
            .to_string()
            .contains("sampling fraction"));
        assert!(sampled_wor_gaussian_rdp(0.1, f64::NAN, 2.0).is_err());
        assert!(sampled_wor_gaussian_rdp(0.1, 1.0, 1.0).is_err());
    }
}
