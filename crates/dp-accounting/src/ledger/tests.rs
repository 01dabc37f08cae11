//! Tests of the ledger (`ledger.rs`).
use super::*;
use crate::calibrate::{Plan, PlanMechanism};
use crate::params::{NoiseMultiplier, SamplingRate};
use crate::release::bad;

fn d(x: f64) -> Delta {
    Delta::new(x).unwrap()
}

#[test]
fn run_length_encoding_and_serde() {
    let mut l = Ledger::new();
    for _ in 0..5 {
        l.charge(Charge::Gaussian {
            noise_multiplier: 2.0,
            count: 1,
        })
        .unwrap();
    }
    l.charge(Charge::PureDp {
        epsilon: 0.1,
        count: 1,
        label: "smoothness".into(),
    })
    .unwrap();
    l.charge(Charge::Gaussian {
        noise_multiplier: 2.0,
        count: 3,
    })
    .unwrap();
    assert_eq!(l.entries().len(), 3);
    assert_eq!(
        l.entries()[0],
        Charge::Gaussian {
            noise_multiplier: 2.0,
            count: 5
        }
    );
    let s = serde_json::to_string(&l).unwrap();
    let back: Ledger = serde_json::from_str(&s).unwrap();
    assert_eq!(back, l);
    // invalid content is refused on deserialisation
    let broken = s.replace("2.0", "-2.0");
    assert!(serde_json::from_str::<Ledger>(&broken).is_err());
}

#[test]
fn gaussian_only_ledger_matches_plan() {
    use crate::calibrate::{epsilon, Plan, PlanMechanism};
    use crate::params::NoiseMultiplier;
    let mut l = Ledger::new();
    l.charge(Charge::Gaussian {
        noise_multiplier: 4.0,
        count: 100,
    })
    .unwrap();
    for acc in [
        Accountant::Gdp,
        Accountant::Zcdp,
        Accountant::Rdp(RdpConversion::Improved),
    ] {
        let p = Plan {
            mechanism: PlanMechanism::Gaussian,
            steps: 100,
            accountant: acc,
        };
        let want = epsilon(&p, NoiseMultiplier::new(4.0).unwrap(), d(1e-5)).unwrap();
        let got = l.guarantee(d(1e-5), acc).unwrap();
        assert!((got - want).abs() <= 1e-9 * want, "{acc:?}: {got} {want}");
    }
}

#[test]
fn budget_refusal_leaves_ledger_unchanged() {
    let mut l = Ledger::with_budget(Epsilon::new(1.0).unwrap(), d(1e-5));
    l.charge(Charge::PureDp {
        epsilon: 0.4,
        count: 2,
        label: "a".into(),
    })
    .unwrap();
    let before = l.clone();
    let e = l
        .charge(Charge::PureDp {
            epsilon: 0.4,
            count: 1,
            label: "a".into(),
        })
        .unwrap_err();
    assert!(matches!(e, AccountingError::BudgetExceeded(_)), "{e}");
    assert_eq!(l, before);
    let e = l
        .charge(Charge::Gaussian {
            noise_multiplier: 0.0,
            count: 1,
        })
        .unwrap_err();
    assert_eq!(e, bad("noise multiplier", 0.0, "must be finite and > 0"));
    let e = l
        .charge(Charge::Gaussian {
            noise_multiplier: 1.0,
            count: 0,
        })
        .unwrap_err();
    assert!(matches!(
        e,
        AccountingError::InvalidCount {
            name: "charge count",
            ..
        }
    ));
    assert_eq!(l, before);
}

#[test]
fn guarantee_under_each_accountant() {
    let mut l = Ledger::new();
    l.charge(Charge::Gaussian {
        noise_multiplier: 8.0,
        count: 200,
    })
    .unwrap();
    l.charge(Charge::Gaussian {
        noise_multiplier: 4.0,
        count: 50,
    })
    .unwrap();
    l.charge(Charge::ExponentialMechanism {
        epsilon: 0.01,
        count: 10,
    })
    .unwrap();
    let dd = d(1e-6);
    let gdp = l.guarantee(dd, Accountant::Gdp).unwrap();
    // closed form: mu^2 = 200/64 + 50/16 = 6.25, mu = 2.5; plus 10 * 0.01 added
    let want = crate::gdp::gdp_epsilon(2.5, dd).unwrap() + 0.1;
    assert!((gdp - want).abs() < 1e-9 * want, "{gdp} {want}");
    let pld = l.guarantee(dd, Accountant::Pld).unwrap();
    assert!(
        pld >= gdp * (1.0 - 1e-12) && pld < gdp * 1.001,
        "{pld} {gdp}"
    );
    let rdp = l
        .guarantee(dd, Accountant::Rdp(RdpConversion::Improved))
        .unwrap();
    let mir = l
        .guarantee(dd, Accountant::Rdp(RdpConversion::Mironov))
        .unwrap();
    let zc = l.guarantee(dd, Accountant::Zcdp).unwrap();
    let ma = l.guarantee(dd, Accountant::MomentsAccountant).unwrap();
    assert!(
        gdp < rdp && rdp < mir && mir <= ma * (1.0 + 1e-12),
        "{gdp} {rdp} {mir} {ma}"
    );
    assert!(rdp <= zc * (1.0 + 1e-9), "{rdp} {zc}");
    assert_eq!(l.best_guarantee(dd).unwrap(), gdp);
    // a subsampled charge is refused by Gdp and Zcdp, accepted by Rdp
    l.charge(Charge::SubsampledGaussian {
        sampling_rate: 0.01,
        noise_multiplier: 1.0,
        count: 100,
    })
    .unwrap();
    assert!(matches!(
        l.guarantee(dd, Accountant::Gdp),
        Err(AccountingError::Unreachable(_))
    ));
    assert!(matches!(
        l.guarantee(dd, Accountant::Zcdp),
        Err(AccountingError::Unreachable(_))
    ));
    assert!(
        l.guarantee(dd, Accountant::Rdp(RdpConversion::Improved))
            .unwrap()
            > rdp
    );
}

#[test]
fn pure_dp_guarantees() {
    let mut l = Ledger::new();
    l.charge(Charge::PureDp {
        epsilon: 0.1,
        count: 10,
        label: "x".into(),
    })
    .unwrap();
    let gdp = l.guarantee(d(1e-5), Accountant::Gdp).unwrap();
    assert!((gdp - 1.0).abs() < 1e-12);
    // zCDP: rho = 10 * 0.1^2 / 2 = 0.05; Bun-Steinke 0.05 + 2 sqrt(0.05 ln 1e5) = 1.5674.
    let zc = l.guarantee(d(1e-5), Accountant::Zcdp).unwrap();
    let bs = 0.05 + 2.0 * (0.05 * 1e5f64.ln()).sqrt();
    assert!(zc <= bs * (1.0 + 1e-12) && zc > 1.0, "{zc}");
    // RDP with the randomised-response curve beats basic composition here, and cannot
    // beat the optimal (KOV) composition, 0.99369117675933586 (tests/reference/composition.py).
    let rdp = l
        .guarantee(d(1e-5), Accountant::Rdp(RdpConversion::Improved))
        .unwrap();
    let kov = 0.993_691_176_759_335_9;
    assert!(rdp >= kov && rdp < 1.0, "{rdp}");
    assert_eq!(l.best_guarantee(d(1e-5)).unwrap(), rdp);
    assert_eq!(
        Ledger::new().guarantee(d(1e-5), Accountant::Gdp).unwrap(),
        0.0
    );
}

#[test]
fn pure_and_gaussian_take_the_better_of_joint_and_basic_composition() {
    let dd = d(1e-6);
    let gaussian = Charge::Gaussian {
        noise_multiplier: 30.0,
        count: 100,
    };
    let mut gauss = Ledger::new();
    gauss.charge(gaussian.clone()).unwrap();
    for pure_eps in [0.3, 3.0] {
        let mut l = Ledger::new();
        l.charge(Charge::PureDp {
            epsilon: pure_eps,
            count: 1,
            label: "constants".into(),
        })
        .unwrap();
        l.charge(gaussian.clone()).unwrap();
        for acc in [
            Accountant::Rdp(RdpConversion::Mironov),
            Accountant::Rdp(RdpConversion::Improved),
            Accountant::Zcdp,
            Accountant::MomentsAccountant,
            Accountant::Gdp,
            Accountant::Pld,
        ] {
            let got = l.guarantee(dd, acc).unwrap();
            let alone = gauss.guarantee(dd, acc).unwrap();
            let basic = round_up(alone + pure_eps);
            assert!(got <= basic, "{acc:?} {pure_eps}: {got} > {basic}");
            assert!(got > alone, "{acc:?} {pure_eps}: the pure charge is free");
        }
    }
    // zCDP charges a 3-DP release 4.5 of rho, far more than basic composition.
    let mut l = Ledger::new();
    l.charge(Charge::PureDp {
        epsilon: 3.0,
        count: 1,
        label: "constants".into(),
    })
    .unwrap();
    l.charge(gaussian).unwrap();
    let joint = l.joint_detail(dd, Accountant::Zcdp).unwrap().epsilon;
    let got = l.guarantee(dd, Accountant::Zcdp).unwrap();
    assert!(got < joint);
    assert_eq!(
        got,
        round_up(gauss.guarantee(dd, Accountant::Zcdp).unwrap() + 3.0)
    );
}

#[test]
fn composition_accountant_composes_the_largest_pure_group() {
    use crate::composition::{composed_epsilon, CompositionMethod};
    let dd = d(1e-5);
    let mut l = Ledger::new();
    l.charge(Charge::PureDp {
        epsilon: 0.05,
        count: 1,
        label: "constants".into(),
    })
    .unwrap();
    for label in ["selection", "update"] {
        l.charge(Charge::PureDp {
            epsilon: 0.01,
            count: 200,
            label: label.into(),
        })
        .unwrap();
    }
    for m in [
        CompositionMethod::Basic,
        CompositionMethod::Advanced,
        CompositionMethod::BestOf,
    ] {
        let want = round_up(composed_epsilon(0.01, 400, dd, m).unwrap() + 0.05);
        assert_eq!(l.guarantee(dd, Accountant::Composition(m)).unwrap(), want);
    }
    l.charge(Charge::Gaussian {
        noise_multiplier: 3.0,
        count: 1,
    })
    .unwrap();
    assert!(l
        .guarantee(dd, Accountant::Composition(CompositionMethod::Advanced))
        .is_err());
}

#[test]
fn calibration_over_a_dry_run_ledger_reports_its_guarantee() {
    use crate::calibrate::{calibrate_ledger, calibrate_sigma};
    use crate::params::Epsilon;
    let dd = d(1e-6);
    let target = Epsilon::new(1.0).unwrap();
    let plan = Plan {
        mechanism: PlanMechanism::SampledWithoutReplacementGaussian {
            sampling_rate: SamplingRate::new(0.01).unwrap(),
        },
        steps: 500,
        accountant: Accountant::Rdp(RdpConversion::Improved),
    };
    let mut prior = Ledger::new();
    prior
        .charge(Charge::PureDp {
            epsilon: 0.2,
            count: 1,
            label: "beta".into(),
        })
        .unwrap();
    let with = calibrate_ledger(&prior, &plan, target, dd).unwrap();
    let charged = prior
        .dry_run(plan.charge(NoiseMultiplier::new(with.noise_multiplier).unwrap()))
        .unwrap();
    assert_eq!(
        charged.guarantee(dd, plan.accountant).unwrap(),
        with.epsilon
    );
    assert!(with.epsilon <= 1.0);
    // The prior costs noise: more than the plan alone needs ...
    let alone = calibrate_sigma(&plan, target, dd).unwrap();
    assert!(with.noise_multiplier > alone.noise_multiplier);
    // ... but never more than giving the plan only what basic composition leaves.
    let rest = calibrate_sigma(&plan, Epsilon::new(0.8).unwrap(), dd).unwrap();
    assert!(with.noise_multiplier <= rest.noise_multiplier * (1.0 + 1e-8));
    // A prior that exhausts the target leaves nothing.
    let mut full = Ledger::new();
    full.charge(Charge::PureDp {
        epsilon: 1.0,
        count: 1,
        label: "all".into(),
    })
    .unwrap();
    assert!(calibrate_ledger(&full, &plan, target, dd).is_err());
}
