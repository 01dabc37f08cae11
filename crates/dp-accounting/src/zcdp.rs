//! Zero-concentrated differential privacy (Bun & Steinke 2016).
//!
//! A mechanism is rho-zCDP if its Renyi divergences satisfy `D_alpha <= rho alpha` for
//! every alpha > 1; rho adds up under adaptive composition (Bun & Steinke 2016, Lemma 2.3).
//!
//! # Privacy
//! * Gaussian mechanism, L2 sensitivity `Delta`, noise `sigma`: `rho = Delta^2/(2 sigma^2)`
//!   (Bun & Steinke 2016, Prop. 1.6).
//! * Any eps-DP mechanism: `rho = eps^2/2` (Bun & Steinke 2016, Prop. 1.4).
//! * An eps-bounded-range mechanism (the exponential mechanism / Gumbel report-noisy-max
//!   at privacy parameter eps): `rho = eps^2/8` (Cesar & Rogers 2021, Thm 3.3).
//! * Conversions to (eps, delta)-DP: [`ZcdpConversion::BunSteinke`]
//!   `eps = rho + 2 sqrt(rho ln(1/delta))` (Bun & Steinke 2016, Prop. 1.3), and
//!   [`ZcdpConversion::Cks20`] `eps = inf_{alpha>1} alpha rho + ln(1-1/alpha) -
//!   (ln delta + ln alpha)/(alpha-1)` (Canonne, Kamath & Steinke 2020, Prop. 12 applied
//!   to the RDP curve `alpha rho`), which is never larger.

use crate::error::{AccountingError, Result};
use crate::num::{golden_section, round_up};
use crate::params::{Delta, Epsilon};
use crate::rdp::{convert_unchecked, RdpConversion, RdpEpsilon};
use serde::{Deserialize, Serialize};

/// How rho-zCDP is converted to (eps, delta)-DP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ZcdpConversion {
    /// `rho + 2 sqrt(rho ln(1/delta))` (Bun & Steinke 2016, Prop. 1.3).
    BunSteinke,
    /// The CKS20 conversion optimised over continuous alpha (never larger).
    Cks20,
}

fn check_nonneg(name: &'static str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(AccountingError::InvalidParameter {
            name,
            value: v,
            expected: "must be finite and > 0",
        })
    }
}

/// rho of the Gaussian mechanism: `sensitivity_l2^2 / (2 std_dev^2)`.
pub fn gaussian_rho(sensitivity_l2: f64, std_dev: f64) -> Result<f64> {
    let d = check_nonneg("L2 sensitivity", sensitivity_l2)?;
    let s = check_nonneg("Gaussian standard deviation", std_dev)?;
    Ok(round_up(d * d / (2.0 * s * s)))
}

/// rho of an eps0-DP mechanism: `eps0^2 / 2`.
pub fn pure_dp_rho(eps0: f64) -> Result<f64> {
    let e = check_nonneg("epsilon", eps0)?;
    Ok(round_up(e * e / 2.0))
}

/// rho of an eps0-bounded-range mechanism (exponential mechanism): `eps0^2 / 8`.
pub fn bounded_range_rho(eps0: f64) -> Result<f64> {
    let e = check_nonneg("epsilon", eps0)?;
    Ok(round_up(e * e / 8.0))
}

/// Minimises the converted epsilon of the linear RDP curve `alpha -> rho alpha` over
/// continuous alpha. Golden-section search in `t = ln(alpha - 1)` around Mironov's
/// closed-form optimum `alpha0 = 1 + sqrt(ln(1/delta)/rho)`; the closed-form point itself
/// is also evaluated, so the result is never worse than it. Unrounded.
pub(crate) fn linear_curve_epsilon(
    rho: f64,
    log_delta: f64,
    conversion: RdpConversion,
) -> RdpEpsilon {
    let f = |t: f64| {
        let a = 1.0 + t.exp();
        convert_unchecked(a, rho * a, log_delta, conversion)
    };
    let t0 = (-log_delta / rho).sqrt().ln();
    let f0 = f(t0);
    let (t, v) = golden_section(f, t0 - 6.0, t0 + 6.0, 1e-13, 300);
    let (t, v) = if v < f0 { (t, v) } else { (t0, f0) };
    RdpEpsilon {
        epsilon: v,
        order: 1.0 + t.exp(),
    }
}

/// (eps, delta)-DP of rho-zCDP under `conversion`, rounded up.
pub fn epsilon_from_rho(rho: f64, delta: Delta, conversion: ZcdpConversion) -> Result<f64> {
    let rho = check_nonneg("rho", rho)?;
    let la = -delta.get().ln();
    let bs = rho + 2.0 * (rho * la).sqrt();
    let v = match conversion {
        ZcdpConversion::BunSteinke => bs,
        ZcdpConversion::Cks20 => linear_curve_epsilon(rho, -la, RdpConversion::Improved)
            .epsilon
            .min(bs),
    };
    Ok(round_up(v))
}

/// The largest rho whose CKS20 conversion meets `(target_eps, delta)`: the passing side
/// of a bisection on the increasing map `rho -> epsilon_from_rho(rho, delta, Cks20)`.
pub fn rho_for_target(target_eps: Epsilon, delta: Delta) -> Result<f64> {
    let t = target_eps.get();
    let passes = |r: f64| epsilon_from_rho(r, delta, ZcdpConversion::Cks20).map(|e| e <= t);
    // Bun-Steinke's inverse is a lower bound on the answer: sqrt(rho) = sqrt(a + t) - sqrt(a).
    let la = -delta.get().ln();
    let mut lo = ((la + t).sqrt() - la.sqrt()).powi(2) * (1.0 - 1e-9);
    while !passes(lo)? {
        lo *= 0.5;
        if lo < 1e-300 {
            return Err(AccountingError::Unreachable(format!(
                "no rho meets epsilon = {t}"
            )));
        }
    }
    let mut hi = lo * 2.0;
    while passes(hi)? {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return Ok(lo);
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if passes(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

#[cfg(test)]
#[allow(clippy::excessive_precision, clippy::inconsistent_digit_grouping)]
mod tests {
    use super::*;

    #[test]
    fn bun_steinke_closed_form_and_cks_tighter() {
        let d = Delta::new(1e-5).unwrap();
        for rho in [1e-4, 0.01, 0.5, 3.0, 100.0] {
            let bs = epsilon_from_rho(rho, d, ZcdpConversion::BunSteinke).unwrap();
            let want = rho + 2.0 * (rho * 1e5f64.ln()).sqrt();
            assert!(bs >= want && (bs - want) / want < 1e-12);
            let c = epsilon_from_rho(rho, d, ZcdpConversion::Cks20).unwrap();
            assert!(c < bs, "{rho}: {c} {bs}");
        }
    }

    #[test]
    fn cks20_matches_mpmath() {
        // tests/reference/zcdp.py: stationarity rho = -(ln delta + ln a)/(a-1)^2 solved at 50 digits
        let cases = [
            (0.01, 1e-5, 0.545_725_548_274_002_4),
            (1.0, 1e-6, 7.766_216_625_311_720_7),
            (100.0, 1e-3, 150.100_233_546_569_47),
            (1e-6, 1e-10, 0.007_427_583_685_432_304),
        ];
        for (rho, delta, want) in cases {
            let got =
                epsilon_from_rho(rho, Delta::new(delta).unwrap(), ZcdpConversion::Cks20).unwrap();
            assert!(
                got >= want && (got - want) / want < 1e-11,
                "{rho} {delta}: {got} {want}"
            );
        }
    }

    #[test]
    fn rho_for_target_is_passing_and_tight() {
        let d = Delta::new(1e-6).unwrap();
        for t in [0.1, 1.0, 8.0] {
            let r = rho_for_target(Epsilon::new(t).unwrap(), d).unwrap();
            let e = epsilon_from_rho(r, d, ZcdpConversion::Cks20).unwrap();
            assert!(e <= t);
            let e2 = epsilon_from_rho(r * (1.0 + 1e-9), d, ZcdpConversion::Cks20).unwrap();
            assert!(e2 > t * (1.0 - 1e-8));
        }
    }

    #[test]
    fn bad_inputs() {
        assert!(gaussian_rho(0.0, 1.0).is_err());
        assert!(gaussian_rho(1.0, f64::NAN).is_err());
        assert!(pure_dp_rho(-1.0).is_err());
        assert!(epsilon_from_rho(
            f64::INFINITY,
            Delta::new(0.1).unwrap(),
            ZcdpConversion::Cks20
        )
        .is_err());
        assert!((bounded_range_rho(2.0).unwrap() - 0.5).abs() < 1e-12);
    }
}
