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

/// log(expm1(x)) for x > 0, stable for tiny and huge x.
fn log_expm1(x: f64) -> f64 {
    if x > 30.0 {
        x + (-(-x).exp()).ln_1p()
    } else {
        x.exp_m1().ln()
    }
}

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

/// RDP at order `alpha` of the subsampled Gaussian, without validation. Returns +inf at
/// orders where no evaluation is available (so a curve minimiser ignores them).
pub(crate) fn rdp_unchecked(q: f64, z: f64, alpha: f64) -> f64 {
    if q >= 1.0 {
        return alpha / (2.0 * z * z);
    }
    if alpha.fract() == 0.0 && (2.0..=1e7).contains(&alpha) {
        let lam1 = log_a_minus_1_int(q, z, alpha as u64);
        // log A = log1p(A - 1) = log_add_exp(0, log(A-1))
        let log_a = log_add_exp(0.0, lam1);
        return log_a / (alpha - 1.0);
    }
    f64::INFINITY
}

/// RDP at order `alpha` of the Poisson-subsampled Gaussian with sampling rate `q` and
/// noise multiplier `z` (see the module docs for the claim).
///
/// Errors on `q` outside (0, 1], `z` not finite and > 0, or an order that is not an
/// integer >= 2 (fractional orders are not available yet).
pub fn subsampled_gaussian_rdp(q: f64, z: f64, alpha: f64) -> Result<f64> {
    if !(q.is_finite() && q > 0.0 && q <= 1.0) {
        return Err(AccountingError::InvalidParameter {
            name: "sampling rate",
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
    let v = rdp_unchecked(q, z, alpha);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(AccountingError::InvalidParameter {
            name: "Renyi order (alpha)",
            value: alpha,
            expected: "fractional orders of the subsampled Gaussian are not available yet; use an integer order >= 2",
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
            assert_eq!(
                subsampled_gaussian_rdp(1.0, z, a).unwrap(),
                a / (2.0 * z * z)
            );
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
