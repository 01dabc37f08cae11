//! Composition of pure eps0-DP mechanisms: basic, advanced (Dwork-Rothblum-Vadhan) and
//! optimal (Kairouz-Oh-Viswanath), and the inverse problem: the largest per-step eps0
//! meeting a target.
//!
//! # Privacy
//!
//! * Basic composition (Dwork & Roth 2014, Thm 3.16): k mechanisms, each eps0-DP, are
//!   `k eps0`-DP (for every delta >= 0).
//! * Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20):
//!   the k-fold adaptive composition of `(eps0, delta0)`-DP mechanisms is
//!   `(sqrt(2 k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1), k delta0 + delta')`-DP for
//!   every `delta' > 0`. DP-GCD's Eq. (2) is this with `k = 2T`, `delta0 = 0`,
//!   `delta' = delta`.
//! * Optimal composition (Kairouz, Oh & Viswanath 2015, Thm 3.3): see
//!   [`optimal_composition_epsilon`].
//!
//! All epsilons returned are rounded up; `per_step_epsilon` returns the passing side of a
//! bisection on a monotone map, so composing k copies of the returned eps0 never exceeds
//! the target.

use crate::error::{AccountingError, Result};
use crate::num::round_up;
use crate::params::{Delta, Epsilon};
use serde::{Deserialize, Serialize};

/// How k-fold composition of pure eps0-DP mechanisms is accounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CompositionMethod {
    /// `k eps0` (Dwork & Roth Thm 3.16); delta unused.
    Basic,
    /// DRV: `sqrt(2k ln(1/delta)) eps0 + k eps0 (e^eps0 - 1)` exactly as DP-GCD's Eq. (2)
    /// (Dwork & Roth Thm 3.20 with delta0 = 0, delta' = delta).
    Advanced,
    /// Kairouz, Oh & Viswanath 2015, Thm 3.3 (the exact optimum for k-fold eps0-DP).
    Optimal,
    /// The smallest of the above (each is valid, so the minimum is).
    BestOf,
}

fn check_eps0(eps0: f64) -> Result<f64> {
    if eps0.is_finite() && eps0 > 0.0 {
        Ok(eps0)
    } else {
        Err(AccountingError::InvalidParameter {
            name: "per-step epsilon (eps0)",
            value: eps0,
            expected: "must be finite and > 0",
        })
    }
}

fn check_k(k: u64) -> Result<u64> {
    if k == 0 {
        Err(AccountingError::InvalidCount {
            name: "number of composed mechanisms (k)",
            value: 0,
            expected: "must be at least 1",
        })
    } else {
        Ok(k)
    }
}

fn check_optimal_k(k: u64, method: CompositionMethod) -> Result<()> {
    if method == CompositionMethod::Optimal && k > MAX_OPTIMAL_K {
        return Err(AccountingError::InvalidCount {
            name: "number of composed mechanisms (k)",
            value: k,
            expected:
                "must be at most 10^7 for the optimal (KOV) composition; use the advanced one",
        });
    }
    Ok(())
}

/// Unrounded DRV epsilon; may be +inf for absurd eps0 (callers handle it).
fn drv_epsilon(eps0: f64, k: u64, log_inv_delta: f64) -> f64 {
    let k = k as f64;
    (2.0 * k * log_inv_delta).sqrt() * eps0 + k * eps0 * eps0.exp_m1()
}

/// Advanced composition (Dwork & Roth 2014, Thm 3.20): the k-fold adaptive composition
/// of `(eps0, delta0)`-DP mechanisms is `(eps, k delta0 + delta_slack)`-DP with
/// `eps = sqrt(2 k ln(1/delta_slack)) eps0 + k eps0 (e^eps0 - 1)`. Both values rounded up.
///
/// No intermediate overflows for any k representable in u64; if the exact epsilon
/// exceeds the f64 range an error is returned rather than infinity.
pub fn advanced_composition(
    eps0: f64,
    delta0: f64,
    k: u64,
    delta_slack: f64,
) -> Result<(f64, f64)> {
    let eps0 = check_eps0(eps0)?;
    let k = check_k(k)?;
    if !(delta0.is_finite() && (0.0..1.0).contains(&delta0)) {
        return Err(AccountingError::InvalidParameter {
            name: "per-step delta (delta0)",
            value: delta0,
            expected: "must be in [0, 1)",
        });
    }
    let slack = Delta::new(delta_slack).map_err(|_| AccountingError::InvalidParameter {
        name: "delta slack (delta')",
        value: delta_slack,
        expected: "must be in the open interval (0, 1)",
    })?;
    let eps = drv_epsilon(eps0, k, -slack.get().ln());
    if !eps.is_finite() {
        return Err(AccountingError::Numerical(format!(
            "advanced composition of {k} mechanisms at eps0 = {eps0} exceeds the f64 range"
        )));
    }
    let delta = round_up(k as f64 * delta0 + slack.get());
    Ok((round_up(eps), delta))
}

/// Largest k for which the exact optimal composition is computed (O(k) memory and time).
pub const MAX_OPTIMAL_K: u64 = 10_000_000;

/// The optimal epsilon for the k-fold composition of eps0-DP mechanisms at `delta`
/// (Kairouz, Oh & Viswanath 2015), rounded up.
///
/// # Privacy
/// By KOV Thm 3.4 the k-fold composition of eps0-randomized-response dominates every
/// k-fold adaptive composition of eps0-DP mechanisms, and its exact hockey-stick curve is
///
/// `delta(eps) = sum_{l : (k-2l) eps0 > eps} C(k,l) (e^{(k-l) eps0} - e^{eps + l eps0}) / (1+e^eps0)^k`,
///
/// whose values at `eps = (k-2i) eps0` are KOV's Thm 3.3 `delta_i`. The returned eps is
/// the passing end of a bisection on this decreasing curve (with a 1e-12 relative
/// safety margin on delta). Every term is computed in log space from prefix sums, so
/// nothing overflows at any k (the peers overflow computing binomials at k ~ 1000).
/// Errors for k > [`MAX_OPTIMAL_K`].
pub fn optimal_composition_epsilon(eps0: f64, k: u64, delta: f64) -> Result<f64> {
    let eps0 = check_eps0(eps0)?;
    let k = check_k(k)?;
    let delta = Delta::new(delta)?;
    if k > MAX_OPTIMAL_K {
        return Err(AccountingError::InvalidCount {
            name: "number of composed mechanisms (k)",
            value: k,
            expected:
                "must be at most 10^7 for the optimal (KOV) composition; use the advanced one",
        });
    }
    Ok(round_up(kov_unrounded(eps0, k, delta.get().ln())))
}

/// Exact composition curve of k eps0-randomized-response.
///
/// With `p = e^eps0 / (1 + e^eps0)`, the curve is
/// `delta(eps) = P[Bin(k, 1-p) < m] - e^eps P[Bin(k, p) < m]`, `m = #{l : (k-2l) eps0 > eps}`.
/// Binomial probabilities come from Loader's algorithm (accurate to a few ulp in log
/// space at any k), summed in log space over the window of `l` within 45 standard
/// deviations of the mode of `Bin(k, 1-p)` (and `l <= k/2`); terms outside are below
/// `e^-1000` of the largest and are dropped (for `l < k/2`, `P[Bin(k,p) = l] <= P[Bin(k,1-p) = l]`).
struct KovCurve {
    eps0: f64,
    kf: f64,
    /// first index l of the window
    start: usize,
    /// log_s1[i] = log sum_{start <= l < start + i} P[Bin(k,1-p) = l]
    log_s1: Vec<f64>,
    /// log_s2[i] = log sum_{start <= l < start + i} P[Bin(k,p) = l]
    log_s2: Vec<f64>,
}

impl KovCurve {
    fn new(eps0: f64, k: u64) -> KovCurve {
        use crate::num::log_add_exp;
        let kf = k as f64;
        // 1 - p = 1/(1+e^eps0), p = 1/(1+e^-eps0), both accurate
        let q = 1.0 / (1.0 + eps0.exp());
        let p = 1.0 / (1.0 + (-eps0).exp());
        let mode = kf * q;
        let sd = (kf * p * q).sqrt();
        let half = k / 2;
        let start = (mode - 45.0 * sd - 45.0).floor().max(0.0) as u64;
        let end = ((mode + 45.0 * sd + 45.0).ceil().max(0.0) as u64).min(half);
        let start = start.min(end);
        let len = (end - start + 1) as usize;
        let mut log_s1 = Vec::with_capacity(len + 1);
        let mut log_s2 = Vec::with_capacity(len + 1);
        log_s1.push(f64::NEG_INFINITY);
        log_s2.push(f64::NEG_INFINITY);
        for i in 0..len {
            let l = (start + i as u64) as f64;
            let a = log_add_exp(log_s1[i], crate::binomial::log_binom_pmf(l, kf, q, p));
            let b = log_add_exp(log_s2[i], crate::binomial::log_binom_pmf(l, kf, p, q));
            log_s1.push(a);
            log_s2.push(b);
        }
        KovCurve {
            eps0,
            kf,
            start: start as usize,
            log_s1,
            log_s2,
        }
    }

    /// log delta(eps), summing only strictly positive terms.
    fn log_delta(&self, eps: f64) -> f64 {
        use crate::num::log_sub_exp;
        // m = number of l >= 0 with (k - 2l) eps0 > eps
        let mut m = ((self.kf - eps / self.eps0) / 2.0).ceil().max(0.0) as usize;
        while m > 0 && (self.kf - 2.0 * (m - 1) as f64) * self.eps0 <= eps {
            m -= 1;
        }
        // terms l in [start, m)
        if m <= self.start {
            return f64::NEG_INFINITY;
        }
        let i = (m - self.start).min(self.log_s1.len() - 1);
        log_sub_exp(self.log_s1[i], eps + self.log_s2[i])
    }
}

fn kov_unrounded(eps0: f64, k: u64, log_delta: f64) -> f64 {
    let curve = KovCurve::new(eps0, k);
    let target = log_delta - 1e-12;
    if curve.log_delta(0.0) <= target {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, k as f64 * eps0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 1e-15 * hi {
            break;
        }
        if curve.log_delta(mid) <= target {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The composed epsilon of k eps0-DP mechanisms under `method` (rounded up).
pub fn composed_epsilon(eps0: f64, k: u64, delta: Delta, method: CompositionMethod) -> Result<f64> {
    let eps0 = check_eps0(eps0)?;
    let k = check_k(k)?;
    check_optimal_k(k, method)?;
    Ok(round_up(composed_unrounded(
        eps0,
        k,
        delta.get().ln(),
        method,
    )))
}

fn composed_unrounded(eps0: f64, k: u64, log_delta: f64, method: CompositionMethod) -> f64 {
    match method {
        CompositionMethod::Basic => k as f64 * eps0,
        CompositionMethod::Advanced => drv_epsilon(eps0, k, -log_delta),
        CompositionMethod::Optimal => kov_unrounded(eps0, k, log_delta),
        CompositionMethod::BestOf => {
            let b = k as f64 * eps0;
            let a = drv_epsilon(eps0, k, -log_delta);
            let o = if k <= MAX_OPTIMAL_K {
                kov_unrounded(eps0, k, log_delta)
            } else {
                f64::INFINITY
            };
            b.min(a).min(o)
        }
    }
}

/// The largest per-step pure eps0 such that the k-fold composition of eps0-DP
/// mechanisms is (target, delta)-DP under `method`.
///
/// Bisection on the increasing map `eps0 -> composed epsilon (rounded up)`; the passing
/// side (composed epsilon <= target) is returned. For `Basic` the result is
/// (essentially) `target / k`, for `Advanced` it solves DP-GCD's Eq. (2).
pub fn per_step_epsilon(
    target: Epsilon,
    delta: Delta,
    k: u64,
    method: CompositionMethod,
) -> Result<f64> {
    let k = check_k(k)?;
    check_optimal_k(k, method)?;
    let t = target.get();
    let log_delta = delta.get().ln();
    let passes = |e: f64| round_up(composed_unrounded(e, k, log_delta, method)) <= t;
    // Bracket [lo, hi] with lo passing and hi failing: start at the basic-composition
    // value target/k (halving while it fails, which DRV can), then grow hi from target.
    let mut lo = t / k as f64;
    while !passes(lo) {
        lo *= 0.5;
        if lo < f64::MIN_POSITIVE {
            return Err(AccountingError::Unreachable(format!(
                "no per-step epsilon meets epsilon = {t} over {k} steps"
            )));
        }
    }
    let mut hi = t.max(lo * 2.0);
    let mut grow = 0;
    while passes(hi) {
        lo = hi;
        hi *= 2.0;
        grow += 1;
        if grow > 1100 || !hi.is_finite() {
            return Ok(lo);
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if passes(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // lo passes by construction
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eps(x: f64) -> Epsilon {
        Epsilon::new(x).unwrap()
    }
    fn del(x: f64) -> Delta {
        Delta::new(x).unwrap()
    }

    #[test]
    fn dp_gcd_table_4_3_advanced() {
        // The DP-GCD paper's eq. (2) (Appendix A) with k = 2T solved for eps', eps = 1,
        // delta = 1/n^2, computed independently of this crate (6 printed digits). Independently: the fixed point of eq. (2) is re-checked below.
        let cases = [
            (1e-6, 1, 0.129688),
            (1e-6, 2, 0.091764),
            (1e-6, 4, 0.064917),
            (1e-6, 7, 0.049086),
            (1e-6, 10, 0.041074),
            (1e-6, 15, 0.033541),
            (1e-6, 20, 0.029049),
            (1.5625e-6, 1, 0.131678),
            (1.5625e-6, 20, 0.029497),
            (1.0 / (20640.0 * 20640.0), 1, 0.109335),
            (1.0 / (20640.0 * 20640.0), 20, 0.024473),
        ];
        for (delta, t, want) in cases {
            let got =
                per_step_epsilon(eps(1.0), del(delta), 2 * t, CompositionMethod::Advanced).unwrap();
            assert!(
                (got - want).abs() < 6e-7,
                "delta={delta} T={t}: {got} vs {want}"
            );
            // closed form of eq. (2) at the result is <= 1 and within 1e-12 of it
            let k = (2 * t) as f64;
            let e = (2.0 * k * (1.0 / delta).ln()).sqrt() * got + k * got * got.exp_m1();
            assert!(e <= 1.0 && e > 1.0 - 1e-11, "{e}");
        }
    }

    #[test]
    fn dp_gcd_table_basic() {
        for t in [1u64, 2, 4, 7, 10, 15, 20] {
            let got =
                per_step_epsilon(eps(1.0), del(1e-6), 2 * t, CompositionMethod::Basic).unwrap();
            let want = 1.0 / (2 * t) as f64;
            assert!(got <= want && got > want * (1.0 - 1e-12), "{got} {want}");
            assert!((2 * t) as f64 * got <= 1.0);
        }
    }

    #[test]
    fn bad_inputs_by_value() {
        assert_eq!(
            per_step_epsilon(eps(1.0), del(1e-6), 0, CompositionMethod::Basic).unwrap_err(),
            AccountingError::InvalidCount {
                name: "number of composed mechanisms (k)",
                value: 0,
                expected: "must be at least 1"
            }
        );
        assert_eq!(
            advanced_composition(-1.0, 0.0, 3, 1e-5).unwrap_err(),
            AccountingError::InvalidParameter {
                name: "per-step epsilon (eps0)",
                value: -1.0,
                expected: "must be finite and > 0"
            }
        );
        assert!(advanced_composition(0.1, 1.0, 3, 1e-5).is_err());
        assert!(advanced_composition(0.1, 0.0, 3, 0.0).is_err());
        assert!(optimal_composition_epsilon(0.1, 3, 1.5).is_err());
    }

    #[test]
    fn advanced_composition_large_k_is_finite() {
        let (e, d) = advanced_composition(0.01, 1e-9, 1_000_000, 1e-6).unwrap();
        let want = (2.0e6 * (1e6f64).ln()).sqrt() * 0.01 + 1e6 * 0.01 * 0.01f64.exp_m1();
        assert!(e >= want && (e - want) / want < 1e-12);
        assert!(d >= 1e-3 + 1e-6);
    }
}
