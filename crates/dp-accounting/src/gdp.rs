//! Gaussian differential privacy and the analytic Gaussian mechanism.
//!
//! # Privacy
//!
//! A mechanism is mu-GDP (Dong, Roth & Su 2022) if distinguishing neighbours is at
//! least as hard as distinguishing N(0,1) from N(mu,1). The Gaussian mechanism with L2
//! sensitivity `Delta` and noise `z Delta` is exactly `1/z`-GDP, and the adaptive
//! composition of mu_j-GDP mechanisms is exactly `sqrt(sum mu_j^2)`-GDP (Dong, Roth &
//! Su 2022, Cor. 3.3). So `T` Gaussian releases at multiplier `z` are exactly
//! `sqrt(T)/z`-GDP, with no slack; DP-CD releases only such Gaussian coordinate
//! gradients (the coordinate choice is data-independent), so this accounting is exact
//! for it.
//!
//! mu-GDP holds if and only if `(eps, delta(eps))`-DP holds for every eps >= 0 with
//! (Balle & Wang 2018, Thm 8; Dong, Roth & Su 2022, Cor. 2.13)
//!
//! `delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`.
//!
//! Both terms are evaluated in log space with an accurate log Phi (erfc, and a continued
//! fraction in the far tail), so the curve is accurate where both terms underflow and
//! where e^eps overflows.

use crate::error::{AccountingError, Result};
use crate::num::{log_ndtr, log_sub_exp, round_up};
use crate::params::Delta;

fn check_mu(mu: f64) -> Result<f64> {
    if mu.is_finite() && mu > 0.0 {
        Ok(mu)
    } else {
        Err(AccountingError::InvalidParameter {
            name: "GDP parameter mu",
            value: mu,
            expected: "must be finite and > 0",
        })
    }
}

/// ln delta(eps) of mu-GDP (unchecked).
pub(crate) fn log_delta_unchecked(mu: f64, eps: f64) -> f64 {
    let la = log_ndtr(-eps / mu + mu / 2.0);
    let lb = eps + log_ndtr(-eps / mu - mu / 2.0);
    log_sub_exp(la, lb)
}

/// The smallest delta for which a mu-GDP mechanism is (eps, delta)-DP:
/// `Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`, rounded up.
///
/// Errors if `mu` is not finite and > 0 or `eps` is NaN or negative.
pub fn gdp_delta(mu: f64, eps: f64) -> Result<f64> {
    let mu = check_mu(mu)?;
    if eps.is_nan() || eps < 0.0 {
        return Err(AccountingError::InvalidParameter {
            name: "epsilon",
            value: eps,
            expected: "must be >= 0",
        });
    }
    let d = log_delta_unchecked(mu, eps).exp();
    Ok(round_up(d).min(1.0))
}

/// ln delta(eps) of mu-GDP, accurate when delta is far below the f64 range, rounded up
/// (by `1e-13 |ln delta|` plus one ulp).
pub fn gdp_log_delta(mu: f64, eps: f64) -> Result<f64> {
    let mu = check_mu(mu)?;
    if eps.is_nan() || eps < 0.0 {
        return Err(AccountingError::InvalidParameter {
            name: "epsilon",
            value: eps,
            expected: "must be >= 0",
        });
    }
    let v = log_delta_unchecked(mu, eps);
    Ok(crate::num::next_up(v + crate::num::REPORT_MARGIN * v.abs()))
}

/// The smallest epsilon with `delta(eps) <= delta` for a mu-GDP mechanism, as an upper
/// bound: the passing end of a bisection on the decreasing map `eps -> delta(eps)`,
/// then rounded up. Returns 0 when even eps = 0 meets `delta`.
///
/// Errors if `mu` is not finite and > 0.
pub fn gdp_epsilon(mu: f64, delta: Delta) -> Result<f64> {
    let mu = check_mu(mu)?;
    let target = delta.get().ln();
    // A safety margin on the comparison: the computed log delta has relative error of a
    // few ulp in delta; asking for log delta <= target - 1e-12 makes the passing side
    // pass for the exact curve too.
    let passes = |eps: f64| log_delta_unchecked(mu, eps) <= target - 1e-12;
    if passes(0.0) {
        return Ok(0.0);
    }
    // Upper bracket: the RDP bound mu^2/2 + mu sqrt(2 log(1/delta)) is always valid, so
    // the exact curve passes there; double until the computed curve agrees.
    let mut hi = 0.5 * mu * mu + mu * (2.0 * (-target)).sqrt() + 1e-3;
    let mut tries = 0;
    while !passes(hi) {
        hi *= 2.0;
        tries += 1;
        if tries > 60 || !hi.is_finite() {
            return Err(AccountingError::Numerical(format!(
                "GDP epsilon search found no passing epsilon for mu = {mu}, delta = {}",
                delta.get()
            )));
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 1e-15 * hi {
            break;
        }
        if passes(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(round_up(hi))
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
    fn delta_matches_mpmath_references() {
        // tests/reference/gdp.py (mpmath, 120 digits):
        // ncdf(-e/mu + mu/2) - exp(e) * ncdf(-e/mu - mu/2)
        let cases = [
            (1.0, 1.0, 0.126_936_737_506_643_945_8),
            (2.5, 13.0, 1.433_359_413_270_362_8e-5),
            (50.0, 1000.0, 0.999_999_680_326_507_7),
        ];
        for (mu, eps, want) in cases {
            let got = gdp_delta(mu, eps).unwrap();
            assert!(got >= want, "rounded outward: {got} {want}");
            assert!(((got - want) / want).abs() < 1e-12, "{got} {want}");
        }
        // far tail, below the f64 range: log delta
        let got = gdp_log_delta(0.1, 5.0).unwrap();
        let want = -1258.548_016_964_243_4;
        assert!((got - want).abs() < 1e-9 * want.abs(), "{got} {want}");
    }

    #[test]
    fn epsilon_matches_mpmath_references() {
        // tests/reference/gdp.py: bisection on the mpmath delta(eps) curve.
        // (2.5, 1e-5) is the landmark: sigma = 4, 100 steps -> exact 13.2067.
        let cases = [
            (2.5, 1e-5, 13.206_712_240_451_987),
            (1.0, 1e-5, 4.377_178_095_681_224_6),
            (0.05, 1e-10, 0.280_326_833_600_950_45),
            (20.0, 1e-10, 326.358_950_514_882_7),
            (0.01, 1e-18, 0.079_706_799_524_485_29),
        ];
        for (mu, delta, want) in cases {
            let got = gdp_epsilon(mu, Delta::new(delta).unwrap()).unwrap();
            assert!(got >= want * (1.0 - 1e-12), "{mu} {delta}: {got} {want}");
            assert!(
                ((got - want) / want).abs() < 1e-10,
                "{mu} {delta}: {got} {want}"
            );
        }
    }

    #[test]
    fn bad_inputs() {
        assert!(gdp_delta(0.0, 1.0).is_err());
        assert!(gdp_delta(1.0, -1.0).is_err());
        assert!(gdp_delta(f64::NAN, 1.0).is_err());
        assert!(gdp_epsilon(f64::INFINITY, Delta::new(1e-5).unwrap()).is_err());
    }
}
