//! RDP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019).
//!
//! # Privacy
//! Precondition: each record is included independently with probability `q`; the summed
//! contributions of the included records have L2 sensitivity `Delta` under add/remove-one
//! neighbours, and Gaussian noise of standard deviation `z Delta` is added. Claim
//! (Mironov, Talwar & Zhang 2019, Thm 4 and Sec. 3.3): the mechanism is
//! `(alpha, log(A_alpha)/(alpha-1))`-RDP with
//!
//! `A_alpha = E_{x ~ N(0, z^2)} [ (1 - q + q exp((2x - 1)/(2 z^2)))^alpha ]`,
//!
//! which at integer alpha is the finite binomial sum
//! `A_alpha = sum_{k=0}^{alpha} C(alpha,k) (1-q)^{alpha-k} q^k exp((k^2-k)/(2 z^2))`.
//!
//! # Numerics (integer orders)
//! Since the binomial probabilities sum to one, `A - 1 = sum_{k>=2} C(alpha,k)
//! (1-q)^{alpha-k} q^k expm1((k^2-k)/(2 z^2))`: every term is positive, so it is summed
//! in log space (incremental log-binomials, `log expm1` computed stably) and
//! `log A = log1p(A - 1)`. This keeps full relative precision when `A - 1` is tiny
//! (small q, large z), and never overflows (orders up to 10^5 and beyond).

use crate::error::{AccountingError, Result};
use crate::num::log_add_exp;

use crate::num::log_expm1;

/// log(A_alpha - 1) at integer order `alpha >= 2` (unchecked; q in (0,1), z > 0).
fn log_a_minus_1_int(q: f64, z: f64, alpha: u64) -> f64 {
    let a = alpha as f64;
    let lq = q.ln();
    let l1q = (-q).ln_1p();
    let inv2s2 = 1.0 / (2.0 * z * z);
    // log C(alpha, k), starting at k = 2
    let mut log_binom = (a * (a - 1.0) / 2.0).ln();
    let mut acc = f64::NEG_INFINITY;
    for k in 2..=alpha {
        let kf = k as f64;
        let t = log_binom + (a - kf) * l1q + kf * lq + log_expm1((kf * kf - kf) * inv2s2);
        acc = log_add_exp(acc, t);
        log_binom += ((a - kf) / (kf + 1.0)).ln();
    }
    acc
}

/// Largest fractional order evaluated by quadrature; above it, callers snap to integers.
pub const MAX_FRACTIONAL_ORDER: f64 = 512.0;

/// Smallest fractional order evaluated (closer to 1 the integrand is a difference at the
/// rounding level, and such orders never help: the conversion adds `ln(1/delta)/(alpha-1)`).
pub const MIN_FRACTIONAL_ORDER: f64 = 1.0001;

/// `log g` with `g = (1+x)^a - 1 - a x >= 0` for `x = q (e^u - 1) > -1`, accurate in
/// relative terms (power series when `a |x|` is small, log space when large; no
/// overflow for huge `u`).
fn log_g(q: f64, u: f64, a: f64) -> f64 {
    if u > 30.0 {
        // x = q (e^u - 1) >= 1e13 q; work with lx = log x
        let lx = q.ln() + u + (-(-u).exp()).ln_1p();
        return log_g_large(lx, a);
    }
    let x = q * u.exp_m1();
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.abs() * a.max(1.0) < 0.25 {
        // sum_{k>=2} C(a,k) x^k; terms shrink at least 4x per step in magnitude
        let mut c = a * (a - 1.0) / 2.0;
        let mut p = x * x;
        let mut sum = c * p;
        let mut k = 2.0;
        loop {
            c *= (a - k) / (k + 1.0);
            p *= x;
            let t = c * p;
            sum += t;
            k += 1.0;
            if t.abs() <= 1e-18 * sum.abs() || k > 200.0 {
                break;
            }
        }
        return sum.ln();
    }
    if x > 0.0 {
        return log_g_large(x.ln(), a);
    }
    // -1 < x < 0: (1+x)^a in (0,1); g > 0 by convexity
    let g = (a * x.ln_1p()).exp() - 1.0 - a * x;
    g.ln()
}

/// `log((1+x)^a - 1 - a x)` for `x = e^lx > 0` with `a |x| >= 0.25`.
fn log_g_large(lx: f64, a: f64) -> f64 {
    let log1px = crate::num::log_add_exp(0.0, lx); // log(1 + x)
    let la = a * log1px; // log (1+x)^a
    let l1ax = crate::num::log_add_exp(0.0, a.ln() + lx); // log(1 + a x)
                                                          // g = (1+x)^a (1 - (1 + a x) / (1+x)^a), the ratio is < 1 by convexity
    let d = l1ax - la;
    if d >= 0.0 {
        // only at orders within ~1e-14 of 1, which are not evaluated
        return f64::NAN;
    }
    la + (-d.exp()).ln_1p()
}

/// Gauss-Kronrod 15-point nodes (non-negative half) and weights.
#[allow(clippy::excessive_precision)]
const GK_X: [f64; 8] = [
    0.991_455_371_120_812_6,
    0.949_107_912_342_758_5,
    0.864_864_423_359_769_1,
    0.741_531_185_599_394_4,
    0.586_087_235_467_691_1,
    0.405_845_151_377_397_2,
    0.207_784_955_007_898_5,
    0.0,
];
#[allow(clippy::excessive_precision)]
const GK_WK: [f64; 8] = [
    0.022_935_322_010_529_22,
    0.063_092_092_629_978_55,
    0.104_790_010_322_250_2,
    0.140_653_259_715_525_9,
    0.169_004_726_639_267_9,
    0.190_350_578_064_785_4,
    0.204_432_940_075_298_9,
    0.209_482_141_084_727_8,
];
#[allow(clippy::excessive_precision)]
const GK_WG: [f64; 4] = [
    0.129_484_966_168_869_7,
    0.279_705_391_489_276_7,
    0.381_830_050_505_118_9,
    0.417_959_183_673_469_4,
];

/// Kronrod estimate and |Kronrod - Gauss| of the integral of `f` on [a, b].
fn gk15<F: Fn(f64) -> f64>(f: &F, a: f64, b: f64) -> (f64, f64) {
    let c = 0.5 * (a + b);
    let h = 0.5 * (b - a);
    let fc = f(c);
    let mut k = GK_WK[7] * fc;
    let mut g = GK_WG[3] * fc;
    for i in 0..7 {
        let dx = h * GK_X[i];
        let s = f(c - dx) + f(c + dx);
        k += GK_WK[i] * s;
        if i % 2 == 1 {
            g += GK_WG[i / 2] * s;
        }
    }
    (k * h, ((k - g) * h).abs())
}

fn adaptive<F: Fn(f64) -> f64>(f: &F, a: f64, b: f64, tol: f64, depth: u32) -> f64 {
    let (k, err) = gk15(f, a, b);
    if err <= tol || depth == 0 {
        return k;
    }
    let m = 0.5 * (a + b);
    adaptive(f, a, m, 0.5 * tol, depth - 1) + adaptive(f, m, b, 0.5 * tol, depth - 1)
}

/// log(A_alpha - 1) at any real order alpha > 1 by quadrature of the non-negative
/// integrand `g(x) phi(x)`, `g = (1 + q Y)^alpha - 1 - alpha q Y`, `Y = e^{(2x-1)/(2z^2)} - 1`
/// (the subtracted terms have expectation 1 and 0). In the variable `t = x / z` every
/// binomial component of the integrand is a unit-variance Gaussian bump centred at
/// `k / z`, `0 <= k <= ceil(alpha)`; a unit-step scan over that range locates the mass,
/// then adaptive Gauss-Kronrod integrates the log-scaled integrand where it exceeds
/// `e^-70` of its maximum. NaN if the range is too long (order / z > 10^5).
fn log_a_minus_1_quad(q: f64, z: f64, alpha: f64) -> f64 {
    let inv_z = 1.0 / z;
    let c = 0.5 * inv_z * inv_z;
    let h = |t: f64| log_g(q, t * inv_z - c, alpha) - 0.5 * t * t;
    let t_lo = -40.0;
    let t_hi = (alpha.ceil() + 1.0) * inv_z + 40.0;
    const STEP: f64 = 2.0;
    let n = ((t_hi - t_lo) / STEP).ceil() as usize + 1;
    if n > 50_000 {
        return f64::NAN;
    }
    let mut hmax = f64::NEG_INFINITY;
    let mut vals = Vec::with_capacity(n);
    for i in 0..n {
        let v = h(t_lo + STEP * i as f64);
        if v > hmax {
            hmax = v;
        }
        vals.push(v);
    }
    if !hmax.is_finite() {
        return f64::NAN;
    }
    // Mass below e^-45 of the peak (and more than 2 scan steps away from any scan point
    // above that level) is dropped: a relative error < 1e-17 per unit length.
    const CUT: f64 = 45.0;
    let first = vals.iter().position(|&v| v > hmax - CUT).unwrap_or(0);
    let last = vals.iter().rposition(|&v| v > hmax - CUT).unwrap_or(n - 1);
    let est: f64 = STEP
        * vals[first..=last]
            .iter()
            .map(|&v| (v - hmax).exp())
            .sum::<f64>();
    let a = t_lo + STEP * first as f64 - 2.0 * STEP;
    let b = t_lo + STEP * last as f64 + 2.0 * STEP;
    let f = |t: f64| (h(t) - hmax).exp();
    let panels = ((b - a) / 2.0).ceil() as usize;
    let width = (b - a) / panels as f64;
    // |K15 - G7| overestimates the K15 error by orders of magnitude on smooth panels
    // (it is the G7 error); 1e-9 of the total keeps the K15 error far below 1e-13.
    let tol = 1e-9 * est / panels as f64;
    let mut total = 0.0;
    for p in 0..panels {
        let pa = a + p as f64 * width;
        total += adaptive(&f, pa, pa + width, tol, 12);
    }
    hmax + total.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
}

/// RDP at order `alpha` of the subsampled Gaussian, without validation. Returns +inf at
/// fractional orders outside [[`MIN_FRACTIONAL_ORDER`], [`MAX_FRACTIONAL_ORDER`]] (so a
/// curve minimiser ignores them)
/// and NaN if a numerical routine fails.
pub(crate) fn rdp_unchecked(q: f64, z: f64, alpha: f64) -> f64 {
    if q >= 1.0 {
        return alpha / (2.0 * z * z);
    }
    let lam1 = if alpha.fract() == 0.0 && (2.0..=1e7).contains(&alpha) {
        log_a_minus_1_int(q, z, alpha as u64)
    } else if (MIN_FRACTIONAL_ORDER..=MAX_FRACTIONAL_ORDER).contains(&alpha) {
        log_a_minus_1_quad(q, z, alpha)
    } else {
        return f64::INFINITY;
    };
    // log A = log1p(A - 1) = log_add_exp(0, log(A-1))
    log_add_exp(0.0, lam1) / (alpha - 1.0)
}

/// Checks a sampling rate in (0, 1], a finite noise multiplier > 0 and a finite order
/// > 1, naming the first that is not.
pub(crate) fn check_sampled_gaussian_args(
    rate_name: &'static str,
    q: f64,
    z: f64,
    alpha: f64,
) -> Result<()> {
    if !(q.is_finite() && q > 0.0 && q <= 1.0) {
        return Err(AccountingError::InvalidParameter {
            name: rate_name,
            value: q,
            expected: "must be in (0, 1]",
        });
    }
    if !(z.is_finite() && z > 0.0) {
        return Err(AccountingError::InvalidParameter {
            name: "noise multiplier (sigma)",
            value: z,
            expected: "must be finite and > 0",
        });
    }
    if !(alpha.is_finite() && alpha > 1.0) {
        return Err(AccountingError::InvalidParameter {
            name: "Renyi order (alpha)",
            value: alpha,
            expected: "must be finite and > 1",
        });
    }
    Ok(())
}

/// RDP at order `alpha` of the Poisson-subsampled Gaussian with sampling rate `q` and
/// noise multiplier `z` (see the module docs for the claim), rounded up.
///
/// Errors on `q` outside (0, 1], `z` not finite and > 0, an order that is not finite
/// and > 1, or a fractional order outside [[`MIN_FRACTIONAL_ORDER`],
/// [`MAX_FRACTIONAL_ORDER`]].
pub fn subsampled_gaussian_rdp(q: f64, z: f64, alpha: f64) -> Result<f64> {
    check_sampled_gaussian_args("sampling rate", q, z, alpha)?;
    let v = rdp_unchecked(q, z, alpha);
    if v.is_nan() {
        return Err(AccountingError::Numerical(format!(
            "subsampled-Gaussian RDP failed at q = {q}, sigma = {z}, order = {alpha}"
        )));
    }
    if v.is_finite() {
        Ok(crate::num::round_up(v))
    } else {
        Err(AccountingError::InvalidParameter {
            name: "Renyi order (alpha)",
            value: alpha,
            expected: "fractional orders are evaluated in [1.0001, 512]; use an integer order",
        })
    }
}

#[cfg(test)]
#[allow(
    clippy::excessive_precision,
    clippy::inconsistent_digit_grouping,
    clippy::approx_constant
)]
mod tests {
    use super::*;

    #[test]
    fn q_one_is_the_gaussian() {
        for (z, a) in [(0.5, 2.0), (1.1, 7.0), (4.0, 100.0)] {
            let want = crate::mechanisms::gaussian_rdp(a, crate::NoiseMultiplier::new(z).unwrap());
            assert_eq!(subsampled_gaussian_rdp(1.0, z, a).unwrap(), want.unwrap());
        }
    }

    #[test]
    fn integer_order_matches_exact_rational_reference() {
        // Reference: mpmath at 60 digits of log(sum_k C(a,k)(1-q)^(a-k) q^k exp((k^2-k)/(2 z^2)))/(a-1)
        // (tests/reference/subsampled.py).
        let cases = [
            (0.01, 1.1, 2.0, 1.285_100_816_051_618_3e-4),
            (0.01, 1.1, 5.0, 3.401_579_663_329_667_4e-4),
            (1e-6, 100.0, 2.0, 1.000_050_001_666_708_3e-16),
            (1e-6, 0.3, 64.0, 341.520_751_179_210_9),
            (0.5, 0.3, 1000.0, 5554.861_714_533_974),
            (0.001, 5.0, 256.0, 5.279_396_656_579_024e-6),
            (1e-6, 1.0, 10000.0, 4986.183_107_752_811),
        ];
        for (q, z, a, want) in cases {
            let got = subsampled_gaussian_rdp(q, z, a).unwrap();
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "{q} {z} {a}: {got} {want}"
            );
        }
    }

    #[test]
    fn fractional_order_matches_mpmath_quadrature() {
        // Reference: tests/reference/subsampled.py, rdp_frac (mpmath tanh-sinh quadrature
        // at 50 digits; it reproduces the exact binomial sum at integer orders to 20 digits).
        let cases = [
            (0.01, 1.1, 2.5, 1.620_774_093_700_037_5e-4),
            (0.01, 1.1, 4.5, 3.030_393_494_134_55e-4),
            (1e-6, 100.0, 1.5, 7.500_375_012_125_263e-17),
            (1e-6, 0.3, 10.5, 43.063_558_506_109_66),
            (0.5, 0.3, 3.3, 17.338_817_813_410_93),
            (0.001, 5.0, 1.01, 2.060_859_746_908_234_5e-8),
            (0.2, 2.0, 60.7, 5.951_104_669_579_095),
            (1e-5, 1.0, 1.1, 9.450_320_226_427_266e-11),
        ];
        for (q, z, a, want) in cases {
            let got = subsampled_gaussian_rdp(q, z, a).unwrap();
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "{q} {z} {a}: {got} {want} rel {}",
                (got - want) / want
            );
        }
    }

    #[test]
    fn quadrature_agrees_with_binomial_sum_at_integer_orders() {
        for &q in &[1e-6, 1e-3, 0.05, 0.5, 0.99] {
            for &z in &[0.3, 0.7, 1.1, 4.0, 30.0, 100.0] {
                for &a in &[2u64, 3, 7, 20, 64, 256] {
                    let exact = log_a_minus_1_int(q, z, a);
                    let quad = log_a_minus_1_quad(q, z, a as f64);
                    let (ea, qa) = (log_add_exp(0.0, exact), log_add_exp(0.0, quad));
                    assert!(
                        ((ea - qa) / ea).abs() < 1e-12,
                        "q={q} z={z} a={a}: {ea} {qa}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_inputs_by_value() {
        assert_eq!(
            subsampled_gaussian_rdp(0.0, 1.0, 2.0).unwrap_err(),
            AccountingError::InvalidParameter {
                name: "sampling rate",
                value: 0.0,
                expected: "must be in (0, 1]"
            }
        );
        assert!(subsampled_gaussian_rdp(0.5, -1.0, 2.0).is_err());
        assert!(subsampled_gaussian_rdp(0.5, 1.0, 1.0).is_err());
    }
}
