//! Property tests: calibration never overshoots; composition is monotone in steps and
//! in 1/sigma; conversions are monotone; the subsampled Gaussian at q = 1 is the
//! Gaussian; RDP is non-decreasing in the order; per-step epsilons never overshoot.

use dp_accounting::calibrate::{calibrate_sigma, epsilon, Accountant, Plan, RdpConversion};
use dp_accounting::composition::{composed_epsilon, per_step_epsilon, CompositionMethod};
use dp_accounting::gdp::gdp_epsilon;
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::rdp::rdp_to_epsilon;
use dp_accounting::subsampled::subsampled_gaussian_rdp;
use dp_accounting::testing::accountant::check_gaussian_accountant;
use dp_accounting::testing::strategies::{gaussian_plan, log_uniform, subsampled_plan};
use dp_accounting::zcdp::{epsilon_from_rho, ZcdpConversion};
use dp_accounting::{Delta, Epsilon, NoiseMultiplier};
use proptest::prelude::*;

fn check_calibration(plan: Plan, target: f64, delta: f64) -> Result<(), TestCaseError> {
    let t = Epsilon::new(target).unwrap();
    let d = Delta::new(delta).unwrap();
    match calibrate_sigma(&plan, t, d) {
        Ok(c) => {
            prop_assert!(c.epsilon <= target, "{plan:?}: {} > {target}", c.epsilon);
            // recomputing at the returned multiplier gives the same passing epsilon
            let again =
                epsilon(&plan, NoiseMultiplier::new(c.noise_multiplier).unwrap(), d).unwrap();
            prop_assert!(again <= target, "{plan:?}: recomputed {again} > {target}");
            prop_assert_eq!(again, c.epsilon);
        }
        // The moments accountant stops at order 129, so its epsilon is always above
        // ln(1/delta)/128: smaller targets are unreachable, and must be reported as such.
        Err(dp_accounting::AccountingError::Unreachable(_))
            if plan.accountant == Accountant::MomentsAccountant
                && target < (1.0 / delta).ln() / 128.0 => {}
        Err(e) => prop_assert!(false, "{plan:?} target {target} delta {delta}: {e}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn calibration_never_overshoots_gaussian(
        plan in gaussian_plan(),
        target in log_uniform(0.01, 50.0),
        delta in log_uniform(1e-12, 0.1),
    ) {
        check_calibration(plan, target, delta)?;
    }

    #[test]
    fn composition_monotone_in_steps_and_inverse_sigma(
        plan in gaussian_plan(),
        sigma in log_uniform(0.3, 100.0),
        delta in log_uniform(1e-12, 0.1),
    ) {
        // The public accountant checks: monotone in noise, steps and delta, never below
        // one step, never below the exact Gaussian composition.
        let acc = |s: f64, k: u64, d: f64| {
            epsilon(&Plan { steps: k, ..plan }, NoiseMultiplier::new(s)?, Delta::new(d)?)
        };
        let verdict = check_gaussian_accountant(acc, sigma, plan.steps, delta, 1e-12).unwrap();
        prop_assert!(verdict.is_ok(), "{plan:?}: {verdict:?}");
    }

    #[test]
    fn conversions_monotone(
        rdp in log_uniform(1e-6, 100.0),
        factor in 1.0f64..3.0,
        order in log_uniform(1.01, 1e4),
        delta in log_uniform(1e-15, 0.5),
        mu in log_uniform(1e-3, 30.0),
    ) {
        let d = Delta::new(delta).unwrap();
        let d_small = Delta::new(delta / 10.0).unwrap();
        for conv in [RdpConversion::Improved, RdpConversion::Mironov] {
            let e1 = rdp_to_epsilon(order, rdp, d, conv).unwrap();
            prop_assert!(rdp_to_epsilon(order, rdp * factor, d, conv).unwrap() >= e1);
            prop_assert!(rdp_to_epsilon(order, rdp, d_small, conv).unwrap() >= e1);
        }
        let g = gdp_epsilon(mu, d).unwrap();
        prop_assert!(gdp_epsilon(mu * factor, d).unwrap() >= g * (1.0 - 1e-12));
        prop_assert!(gdp_epsilon(mu, d_small).unwrap() >= g * (1.0 - 1e-12));
        for conv in [ZcdpConversion::BunSteinke, ZcdpConversion::Cks20] {
            let z = epsilon_from_rho(rdp, d, conv).unwrap();
            prop_assert!(epsilon_from_rho(rdp * factor, d, conv).unwrap() >= z * (1.0 - 1e-12));
        }
    }

    #[test]
    fn subsampled_at_q_one_is_gaussian(z in log_uniform(0.3, 100.0), order in log_uniform(1.01, 1e4)) {
        let got = subsampled_gaussian_rdp(1.0, z, order).unwrap();
        let want = dp_accounting::mechanisms::gaussian_rdp(order, NoiseMultiplier::new(z).unwrap()).unwrap();
        prop_assert_eq!(got, want);
        prop_assert!(((got - order / (2.0 * z * z)) / got).abs() < 1e-12);
    }

    #[test]
    fn per_step_epsilon_never_overshoots(
        target in log_uniform(0.01, 20.0),
        delta in log_uniform(1e-12, 0.1),
        k in log_uniform(1.0, 5e4),
        method in prop_oneof![
            Just(CompositionMethod::Basic),
            Just(CompositionMethod::Advanced),
            Just(CompositionMethod::Optimal),
            Just(CompositionMethod::BestOf),
        ],
    ) {
        let k = k as u64;
        let d = Delta::new(delta).unwrap();
        let e0 = per_step_epsilon(Epsilon::new(target).unwrap(), d, k, method).unwrap();
        prop_assert!(composed_epsilon(e0, k, d, method).unwrap() <= target);
        // and it is tight: 1e-6 more overshoots (or the composed value is already at the target)
        let up = composed_epsilon(e0 * (1.0 + 1e-6), k, d, method).unwrap();
        prop_assert!(up > target * (1.0 - 1e-5), "{method:?} {e0} {up} {target}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn calibration_never_overshoots_subsampled(
        plan in subsampled_plan(),
        target in log_uniform(0.1, 20.0),
        delta in log_uniform(1e-10, 1e-3),
    ) {
        check_calibration(plan, target, delta)?;
    }

    #[test]
    fn subsampled_composition_monotone_in_steps_and_inverse_sigma(
        plan in subsampled_plan(),
        sigma in log_uniform(0.3, 30.0),
        delta in log_uniform(1e-10, 1e-3),
    ) {
        let d = Delta::new(delta).unwrap();
        let s = NoiseMultiplier::new(sigma).unwrap();
        let e = epsilon(&plan, s, d).unwrap();
        let more = Plan { steps: plan.steps + 1 + plan.steps / 3, ..plan };
        prop_assert!(epsilon(&more, s, d).unwrap() >= e * (1.0 - 1e-12));
        let noisier = NoiseMultiplier::new(sigma * 1.01).unwrap();
        prop_assert!(epsilon(&plan, noisier, d).unwrap() <= e * (1.0 + 1e-12));
    }

    /// The order search is never beaten by an integer order it skipped: above 512 (where
    /// only integer orders are evaluated) every integer order up to 2,048 is checked one
    /// by one, on plans whose optimum often sits just before the knee of the curve.
    #[test]
    fn subsampled_rdp_search_beats_every_integer_order_above_512(
        q in log_uniform(1e-4, 3e-3),
        sigma in log_uniform(4.0, 12.0),
        delta in log_uniform(1e-10, 1e-5),
        steps in 1u64..4,
    ) {
        use dp_accounting::calibrate::{epsilon_detail, PlanMechanism};
        use dp_accounting::SamplingRate;
        let d = Delta::new(delta).unwrap();
        let plan = Plan {
            mechanism: PlanMechanism::SubsampledGaussian {
                sampling_rate: SamplingRate::new(q).unwrap(),
            },
            steps,
            accountant: Accountant::Rdp(RdpConversion::Improved),
        };
        let got = epsilon_detail(&plan, NoiseMultiplier::new(sigma).unwrap(), d).unwrap();
        for a in 513..=2048u32 {
            let a = f64::from(a);
            let r = steps as f64 * subsampled_gaussian_rdp(q, sigma, a).unwrap();
            let e = rdp_to_epsilon(a, r, d, RdpConversion::Improved).unwrap();
            prop_assert!(got.epsilon <= e * (1.0 + 1e-12), "{got:?} > {e} at order {a}");
        }
    }

    #[test]
    fn subsampled_rdp_non_decreasing_in_order(
        q in log_uniform(1e-6, 0.99),
        z in log_uniform(0.3, 100.0),
        a in log_uniform(1.01, 300.0),
        step in log_uniform(1e-3, 50.0),
    ) {
        let lo = subsampled_gaussian_rdp(q, z, a).unwrap();
        let hi = subsampled_gaussian_rdp(q, z, a + step).unwrap();
        prop_assert!(hi >= lo * (1.0 - 1e-12), "q={q} z={z} a={a}: {lo} > {hi} at {}", a + step);
        prop_assert!(lo.is_finite() && lo >= 0.0);
    }

    #[test]
    fn ledger_budget_is_never_exceeded(
        charges in proptest::collection::vec((0u8..3, log_uniform(0.5, 20.0), 1u64..50), 1..12),
        budget in log_uniform(0.5, 10.0),
    ) {
        let d = Delta::new(1e-6).unwrap();
        let mut l = Ledger::with_budget(Epsilon::new(budget).unwrap(), d);
        for (kind, x, count) in charges {
            let c = match kind {
                0 => Charge::Gaussian { noise_multiplier: x, count },
                1 => Charge::PureDp { epsilon: 0.05 / x, count, label: "p".into() },
                _ => Charge::SubsampledGaussian { sampling_rate: 0.01, noise_multiplier: x, count },
            };
            let before = l.clone();
            if l.charge(c).is_err() {
                prop_assert_eq!(&l, &before);
            }
            prop_assert!(l.best_guarantee(d).unwrap() <= budget);
        }
    }
}

/// At a small sampling rate the subsampled Gaussian's RDP stays tiny up to a knee near
/// `2 z^2 ln(1/q)` and then jumps by orders of magnitude, so the best order is the last
/// integer before the knee (orders above 512 are integers only). The search must land on
/// it: one integer short, the reported epsilon rose with more noise or fell with more
/// steps (`subsampled_composition_monotone_in_steps_and_inverse_sigma` failed about once
/// in 60 runs). Here the search gave order 560 (0.012067) before the integer walk.
#[test]
fn subsampled_rdp_finds_the_last_order_before_the_knee() {
    use dp_accounting::calibrate::{epsilon_detail, PlanMechanism};
    use dp_accounting::SamplingRate;
    let (q, sigma, delta) = (
        5.957648264510003e-4,
        6.148599160964256,
        7.744365494853808e-7,
    );
    let d = Delta::new(delta).unwrap();
    let plan = Plan {
        mechanism: PlanMechanism::SubsampledGaussian {
            sampling_rate: SamplingRate::new(q).unwrap(),
        },
        steps: 1,
        accountant: Accountant::Rdp(RdpConversion::Improved),
    };
    let got = epsilon_detail(&plan, NoiseMultiplier::new(sigma).unwrap(), d).unwrap();
    // Every integer order from 513 to 2048, evaluated one by one.
    let (best_e, best_a) = (513..=2048u32)
        .map(|a| {
            let a = f64::from(a);
            let r = subsampled_gaussian_rdp(q, sigma, a).unwrap();
            (rdp_to_epsilon(a, r, d, RdpConversion::Improved).unwrap(), a)
        })
        .fold((f64::INFINITY, 0.0), |b, x| if x.0 < b.0 { x } else { b });
    assert_eq!(
        got.order,
        Some(best_a),
        "{got:?} against {best_e} at {best_a}"
    );
    assert!(
        got.epsilon >= best_e && got.epsilon <= best_e * (1.0 + 1e-12),
        "{got:?} {best_e}"
    );
    // and the guarantee is monotone around it
    let noisier = epsilon(&plan, NoiseMultiplier::new(sigma * 1.01).unwrap(), d).unwrap();
    let more = epsilon(
        &Plan { steps: 2, ..plan },
        NoiseMultiplier::new(sigma).unwrap(),
        d,
    )
    .unwrap();
    assert!(
        noisier <= got.epsilon && more >= got.epsilon,
        "{noisier} {more} {got:?}"
    );
}
