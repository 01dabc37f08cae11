//! Noise calibration of DP-GCD: from a target `(epsilon, delta)` and a number of
//! iterations `T` to per-step privacy parameters. Data-independent (the sensitivities,
//! which depend on `n` and the clipping thresholds, are applied at fit time).
//!
//! # Privacy
//!
//! * **Laplace variant (the paper's).** Each iteration runs two pure-DP mechanisms on the
//!   data: the private selection (report-noisy-max) and the Laplace release of the chosen
//!   gradient coordinate. Calibrating each to `eps'`-DP, the `2T`-fold adaptive
//!   composition is `(eps, delta)`-DP with
//!   `eps = sqrt(2 (2T) ln(1/delta)) eps' + 2T eps' (e^eps' - 1)` (Dwork & Roth 2014,
//!   Thm 3.20 with `k = 2T`, `delta' = delta`; the paper's eq. (2), Appendix A).
//!   [`laplace_step_epsilon`] returns the largest `eps'` meeting the target, found by
//!   `dp_accounting::composition::per_step_epsilon` (the passing side of a bisection, so
//!   it never overshoots). The paper's experiments solve eq. (2) numerically exactly
//!   like this (Remark 4.3); Theorem 4.2's closed form `eps / (4 sqrt(T ln(1/delta)))`
//!   ([`theorem_4_2_step_epsilon`]) is looser and only valid for `eps <= 1`.
//! * **zCDP variant (ours).** The selection is the exponential mechanism (Gumbel
//!   report-noisy-max), which is `eps0`-bounded-range and hence `eps0^2 / 8`-zCDP
//!   (Cesar & Rogers 2021, Thm 3.3); the update is the Gaussian mechanism, `Delta^2 /
//!   (2 sigma^2)`-zCDP (Bun & Steinke 2016, Prop. 1.6). zCDP composes additively
//!   (Bun & Steinke 2016, Lemma 2.3), so `T` iterations cost
//!   `rho = T (rho_sel + rho_upd)`. [`zcdp_split`] takes the largest `rho` whose
//!   conversion to `(eps, delta)` meets the target (`dp_accounting::zcdp::rho_for_target`)
//!   and splits each iteration's share between selection and update.

use crate::error::{invalid, OptimError, Result};
use dp_accounting::composition::{per_step_epsilon, CompositionMethod};
use dp_accounting::{Delta, Epsilon};
use serde::{Deserialize, Serialize};

/// How the `2T` pure-DP steps of the Laplace variant are composed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LaplaceComposition {
    /// Advanced composition exactly as the paper's eq. (2) (the default: reproduces the
    /// paper).
    Advanced,
    /// The best of basic, advanced and optimal (Kairouz-Oh-Viswanath) composition: the
    /// same mechanism, a tighter analysis (less noise for the same guarantee).
    BestOf,
}

impl LaplaceComposition {
    pub(crate) fn method(self) -> CompositionMethod {
        match self {
            LaplaceComposition::Advanced => CompositionMethod::Advanced,
            LaplaceComposition::BestOf => CompositionMethod::BestOf,
        }
    }
    /// Short name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            LaplaceComposition::Advanced => "advanced (paper eq. 2)",
            LaplaceComposition::BestOf => "best of basic / advanced / optimal",
        }
    }
}

fn check_target(epsilon: f64, delta: f64, iterations: u64) -> Result<(Epsilon, Delta)> {
    let eps = Epsilon::new(epsilon).map_err(OptimError::from)?;
    let del = Delta::new(delta).map_err(OptimError::from)?;
    if iterations == 0 {
        return Err(invalid(
            "iterations",
            0.0,
            "DP-GCD needs at least one iteration (T >= 1)",
        ));
    }
    Ok((eps, del))
}

/// The per-step pure epsilon `eps'` of the Laplace variant: the largest value such that
/// `2T` adaptively composed `eps'`-DP mechanisms are `(epsilon, delta)`-DP under
/// `composition`. See the module docs for the claim.
pub fn laplace_step_epsilon(
    epsilon: f64,
    delta: f64,
    iterations: u64,
    composition: LaplaceComposition,
) -> Result<f64> {
    let (eps, del) = check_target(epsilon, delta, iterations)?;
    let k = iterations.checked_mul(2).ok_or_else(|| {
        invalid(
            "iterations",
            iterations as f64,
            "too many iterations (2T overflows)",
        )
    })?;
    Ok(per_step_epsilon(eps, del, k, composition.method())?)
}

/// Theorem 4.2's closed form `eps' = eps / (4 sqrt(T ln(1/delta)))` (valid for
/// `eps, delta` in `(0, 1]`; looser than solving eq. (2), kept for comparison).
pub fn theorem_4_2_step_epsilon(epsilon: f64, delta: f64, iterations: u64) -> Result<f64> {
    let (eps, del) = check_target(epsilon, delta, iterations)?;
    if eps.get() > 1.0 {
        return Err(invalid(
            "epsilon",
            eps.get(),
            "Theorem 4.2's closed form needs epsilon <= 1; use laplace_step_epsilon",
        ));
    }
    Ok(eps.get() / (4.0 * (iterations as f64 * (1.0 / del.get()).ln()).sqrt()))
}

/// Per-iteration zCDP budget of the zCDP variant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ZcdpSplit {
    /// Total rho over the `T` iterations (the largest meeting the `(eps, delta)` target).
    pub rho_total: f64,
    /// rho of one selection (exponential mechanism).
    pub rho_selection: f64,
    /// rho of one update (Gaussian mechanism).
    pub rho_update: f64,
    /// The bounded-range parameter `eps0 = sqrt(8 rho_selection)` of one selection.
    pub selection_epsilon: f64,
}

/// Splits the largest zCDP budget meeting `(epsilon, delta)` over `T` iterations, a
/// fraction `selection_share` in (0, 1) of each iteration's rho going to the selection.
pub fn zcdp_split(
    epsilon: f64,
    delta: f64,
    iterations: u64,
    selection_share: f64,
) -> Result<ZcdpSplit> {
    let (eps, del) = check_target(epsilon, delta, iterations)?;
    if !(selection_share > 0.0 && selection_share < 1.0) {
        return Err(invalid(
            "selection_share",
            selection_share,
            "the selection's share of each iteration's zCDP budget must be in (0, 1)",
        ));
    }
    let rho_total = dp_accounting::zcdp::rho_for_target(eps, del)?;
    let per_iter = rho_total / iterations as f64;
    // Round the shares down so that their sum never exceeds rho_total / T.
    let rho_selection = next_down(per_iter * selection_share);
    let rho_update = next_down(per_iter - rho_selection).min(per_iter * (1.0 - selection_share));
    let selection_epsilon = next_down((8.0 * rho_selection).sqrt());
    Ok(ZcdpSplit {
        rho_total,
        rho_selection,
        rho_update,
        selection_epsilon,
    })
}

/// [`zcdp_split`] with a fraction `reserve` in `[0, 1)` of the total zCDP budget set aside
/// for a final step (DP-GCD's support test, [`crate::dp_gcd::DpGcdParams::support_test`]):
/// the `T` iterations share `(1 - reserve) rho_total`, and the second value is the
/// reserved `rho` (0 when `reserve = 0`). zCDP composes additively (Bun & Steinke 2016,
/// Lemma 2.3), so `T (rho_selection + rho_update) + rho_reserved <= rho_total`.
pub fn zcdp_split_reserving(
    epsilon: f64,
    delta: f64,
    iterations: u64,
    selection_share: f64,
    reserve: f64,
) -> Result<(ZcdpSplit, f64)> {
    if !(0.0..1.0).contains(&reserve) {
        return Err(invalid(
            "support_test",
            reserve,
            "the fraction of the zCDP budget reserved for the support test must be in [0, 1)",
        ));
    }
    let full = zcdp_split(epsilon, delta, iterations, selection_share)?;
    if reserve == 0.0 {
        return Ok((full, 0.0));
    }
    let keep = 1.0 - reserve;
    let rho_selection = next_down(full.rho_selection * keep);
    let rho_update = next_down(full.rho_update * keep);
    let reserved = next_down(full.rho_total * reserve).min(next_down(
        full.rho_total - iterations as f64 * (rho_selection + rho_update),
    ));
    if reserved.is_nan() || reserved <= 0.0 {
        return Err(invalid(
            "support_test",
            reserve,
            "the reserved zCDP budget rounds to zero; use a larger fraction",
        ));
    }
    Ok((
        ZcdpSplit {
            rho_total: full.rho_total,
            rho_selection,
            rho_update,
            selection_epsilon: next_down((8.0 * rho_selection).sqrt()),
        },
        reserved,
    ))
}

/// The next representable f64 below a positive finite `x`.
pub(crate) fn next_down(x: f64) -> f64 {
    if x > 0.0 && x.is_finite() {
        f64::from_bits(x.to_bits() - 1)
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// eps' solving the DP-GCD paper's eq. (2) (Appendix A) with eps = 1, delta = 1/n^2, recomputed
    /// independently with python3's `decimal` at 50 digits (bisection, 200 halvings).
    #[test]
    fn advanced_composition_matches_independent_values() {
        let cases: &[(f64, &[(u64, f64)])] = &[
            (
                1000.0,
                &[
                    (1, 0.1296883728737283),
                    (2, 0.09176442019673173),
                    (4, 0.0649171345897158),
                    (7, 0.049085894523597254),
                    (10, 0.041073735461036084),
                    (15, 0.033540789616034725),
                    (20, 0.029049349614335567),
                ],
            ),
            (
                800.0,
                &[
                    (1, 0.1316781901096136),
                    (10, 0.04170689881703426),
                    (20, 0.029497427509752042),
                ],
            ),
            (
                2600.0,
                &[(1, 0.12208464635044362), (20, 0.027338356120478986)],
            ),
            (4450.0, &[(1, 0.1183548310706543), (20, 0.0264997507034612)]),
            (
                20640.0,
                &[(1, 0.10933477414588032), (20, 0.024473350827711127)],
            ),
        ];
        for &(n, rows) in cases {
            let delta = 1.0 / (n * n);
            for &(t, want) in rows {
                let got =
                    laplace_step_epsilon(1.0, delta, t, LaplaceComposition::Advanced).unwrap();
                // Passing side: never above the exact root, and within 1e-9 relative.
                assert!(got <= want * (1.0 + 1e-12), "n={n} T={t}: {got} > {want}");
                assert!((want - got) / want < 1e-9, "n={n} T={t}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn closed_form_is_looser_than_eq_2() {
        for t in [1u64, 2, 4, 7, 10, 15, 20] {
            let adv = laplace_step_epsilon(1.0, 1e-6, t, LaplaceComposition::Advanced).unwrap();
            let closed = theorem_4_2_step_epsilon(1.0, 1e-6, t).unwrap();
            assert!(closed < adv, "T={t}: closed {closed} adv {adv}");
            // Theorem 4.2's closed-form noise scale: 8 sqrt(T ln(1/delta))/n, i.e. 2/(n eps'); at T = 1, n = 1000
            // this is 0.0297354.
            if t == 1 {
                assert!((2.0 / (1000.0 * closed) - 0.0297354).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn best_of_never_adds_noise() {
        for t in [1u64, 5, 20, 200] {
            let adv = laplace_step_epsilon(1.0, 1e-6, t, LaplaceComposition::Advanced).unwrap();
            let best = laplace_step_epsilon(1.0, 1e-6, t, LaplaceComposition::BestOf).unwrap();
            assert!(best >= adv * (1.0 - 1e-9), "T={t}: best {best} adv {adv}");
        }
        // Below T ~ ln(1/delta), basic composition eps/(2T) beats the advanced composition
        // of the DP-GCD paper's eq. (2) (Appendix A); at T = 1 it gives eps/2.
        let best = laplace_step_epsilon(1.0, 1e-6, 1, LaplaceComposition::BestOf).unwrap();
        assert!(best >= 0.5 * (1.0 - 1e-9));
    }

    #[test]
    fn zcdp_split_spends_at_most_the_budget() {
        let s = zcdp_split(1.0, 1e-6, 10, 0.5).unwrap();
        assert!(10.0 * (s.rho_selection + s.rho_update) <= s.rho_total);
        assert!((s.selection_epsilon.powi(2) / 8.0) <= s.rho_selection);
        assert!(s.rho_selection > 0.0 && s.rho_update > 0.0);
    }

    #[test]
    fn reserving_keeps_the_total_and_the_shares() {
        let (full, zero) = zcdp_split_reserving(1.0, 1e-6, 10, 0.3, 0.0).unwrap();
        assert_eq!(zero, 0.0);
        assert_eq!(full, zcdp_split(1.0, 1e-6, 10, 0.3).unwrap());
        let (s, r) = zcdp_split_reserving(1.0, 1e-6, 10, 0.3, 0.2).unwrap();
        assert!(10.0 * (s.rho_selection + s.rho_update) + r <= s.rho_total);
        // Within rounding, 20 % is reserved and the rest keeps the 30 / 70 split.
        assert!((r / s.rho_total - 0.2).abs() < 1e-12);
        assert!((s.rho_selection / (s.rho_selection + s.rho_update) - 0.3).abs() < 1e-12);
        assert!((10.0 * (s.rho_selection + s.rho_update) / s.rho_total - 0.8).abs() < 1e-12);
        for bad in [-0.1, 1.0, f64::NAN] {
            let e = zcdp_split_reserving(1.0, 1e-6, 10, 0.3, bad).unwrap_err();
            assert!(e.to_string().contains("support_test"), "{e}");
        }
    }

    #[test]
    fn bad_targets_are_errors() {
        assert!(laplace_step_epsilon(0.0, 1e-6, 1, LaplaceComposition::Advanced).is_err());
        assert!(laplace_step_epsilon(f64::NAN, 1e-6, 1, LaplaceComposition::Advanced).is_err());
        assert!(laplace_step_epsilon(1.0, 1.0, 1, LaplaceComposition::Advanced).is_err());
        assert!(laplace_step_epsilon(1.0, 0.0, 1, LaplaceComposition::Advanced).is_err());
        let e = laplace_step_epsilon(1.0, 1e-6, 0, LaplaceComposition::Advanced).unwrap_err();
        assert!(e.to_string().contains("iterations"), "{e}");
        assert!(zcdp_split(1.0, 1e-6, 1, 1.0).is_err());
        assert!(zcdp_split(1.0, 1e-6, 1, 0.0).is_err());
        assert!(theorem_4_2_step_epsilon(2.0, 1e-6, 1).is_err());
    }
}
