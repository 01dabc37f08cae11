//! Bad input gets a clear error, compared by value (variant, parameter name, value, rule).

use dp_accounting::calibrate::{calibrate_sigma, epsilon, Accountant, Plan, PlanMechanism};
use dp_accounting::composition::{
    advanced_composition, optimal_composition_epsilon, per_step_epsilon, CompositionMethod,
};
use dp_accounting::gdp::{gdp_delta, gdp_epsilon};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::{laplace_rdp, rnm_epsilon, Gaussian, Laplace};
use dp_accounting::rdp::{rdp_to_epsilon, OrderGrid, RdpConversion};
use dp_accounting::subsampled::subsampled_gaussian_rdp;
use dp_accounting::zcdp::{epsilon_from_rho, ZcdpConversion};
use dp_accounting::{AccountingError, Delta, Epsilon, NoiseMultiplier, Norm, Sensitivity};

fn param(name: &'static str, value: f64, expected: &'static str) -> AccountingError {
    AccountingError::InvalidParameter {
        name,
        value,
        expected,
    }
}

#[test]
fn parameter_errors_by_value() {
    let pos = "must be finite and > 0";
    assert_eq!(
        Gaussian::new(-2.0).unwrap_err(),
        param("Gaussian standard deviation", -2.0, pos)
    );
    assert_eq!(
        Laplace::new(0.0).unwrap_err(),
        param("Laplace scale", 0.0, pos)
    );
    assert_eq!(
        laplace_rdp(3.0, -1.0).unwrap_err(),
        param("Laplace scale / sensitivity", -1.0, pos)
    );
    let s = Sensitivity::new(1.0, Norm::LInf).unwrap();
    assert_eq!(
        rnm_epsilon(s, -3.0, true).unwrap_err(),
        param("report-noisy-max scale", -3.0, pos)
    );
    assert_eq!(
        rdp_to_epsilon(0.5, 1.0, Delta::new(0.1).unwrap(), RdpConversion::Improved).unwrap_err(),
        param("Renyi order (alpha)", 0.5, "must be finite and > 1")
    );
    assert_eq!(
        subsampled_gaussian_rdp(1.5, 1.0, 2.0).unwrap_err(),
        param("sampling rate", 1.5, "must be in (0, 1]")
    );
    assert_eq!(
        subsampled_gaussian_rdp(0.5, 1.0, 600.5).unwrap_err(),
        param(
            "Renyi order (alpha)",
            600.5,
            "fractional orders are evaluated in [1.0001, 512]; use an integer order"
        )
    );
    assert_eq!(
        gdp_delta(-1.0, 1.0).unwrap_err(),
        param("GDP parameter mu", -1.0, pos)
    );
    assert_eq!(
        gdp_delta(1.0, -0.5).unwrap_err(),
        param("epsilon", -0.5, "must be >= 0")
    );
    assert_eq!(
        gdp_epsilon(f64::INFINITY, Delta::new(0.1).unwrap()).unwrap_err(),
        param("GDP parameter mu", f64::INFINITY, pos)
    );
    assert_eq!(
        epsilon_from_rho(-1.0, Delta::new(0.1).unwrap(), ZcdpConversion::Cks20).unwrap_err(),
        param("rho", -1.0, pos)
    );
    assert_eq!(
        advanced_composition(0.1, 0.0, 10, 1.0).unwrap_err(),
        param(
            "delta slack (delta')",
            1.0,
            "must be in the open interval (0, 1)"
        )
    );
    assert_eq!(
        optimal_composition_epsilon(0.1, 10, 0.0).unwrap_err(),
        param("delta", 0.0, "must be in the open interval (0, 1)")
    );
    assert_eq!(
        OrderGrid::custom(vec![2.0, 1.0], true).unwrap_err(),
        param("Renyi order (alpha)", 1.0, "must be finite and > 1")
    );
}

#[test]
fn count_errors_by_value() {
    let d = Delta::new(1e-5).unwrap();
    assert_eq!(
        per_step_epsilon(
            Epsilon::new(1.0).unwrap(),
            d,
            0,
            CompositionMethod::Advanced
        )
        .unwrap_err(),
        AccountingError::InvalidCount {
            name: "number of composed mechanisms (k)",
            value: 0,
            expected: "must be at least 1"
        }
    );
    assert_eq!(
        optimal_composition_epsilon(0.1, 20_000_000, 1e-5).unwrap_err(),
        AccountingError::InvalidCount {
            name: "number of composed mechanisms (k)",
            value: 20_000_000,
            expected:
                "must be at most 10^7 for the optimal (KOV) composition; use the advanced one"
        }
    );
    let p = Plan {
        mechanism: PlanMechanism::Gaussian,
        steps: 0,
        accountant: Accountant::Gdp,
    };
    let want = AccountingError::InvalidCount {
        name: "number of steps",
        value: 0,
        expected: "must be at least 1",
    };
    assert_eq!(
        epsilon(&p, NoiseMultiplier::new(1.0).unwrap(), d).unwrap_err(),
        want
    );
    assert_eq!(
        calibrate_sigma(&p, Epsilon::new(1.0).unwrap(), d).unwrap_err(),
        want
    );
    let mut l = Ledger::new();
    assert_eq!(
        l.charge(Charge::ExponentialMechanism {
            epsilon: 0.1,
            count: 0
        })
        .unwrap_err(),
        AccountingError::InvalidCount {
            name: "charge count",
            value: 0,
            expected: "must be at least 1"
        }
    );
    assert_eq!(
        l.charge(Charge::SubsampledGaussian {
            sampling_rate: 0.0,
            noise_multiplier: 1.0,
            count: 1
        })
        .unwrap_err(),
        param("sampling rate", 0.0, "must be in (0, 1]")
    );
    assert!(l.entries().is_empty());
}

#[test]
fn unreachable_targets_are_errors_not_panics() {
    // the moments accountant cannot go below ln(1/delta)/128
    let p = Plan {
        mechanism: PlanMechanism::Gaussian,
        steps: 10,
        accountant: Accountant::MomentsAccountant,
    };
    let e =
        calibrate_sigma(&p, Epsilon::new(0.01).unwrap(), Delta::new(1e-5).unwrap()).unwrap_err();
    assert!(matches!(e, AccountingError::Unreachable(_)), "{e}");
    assert!(e.to_string().contains("epsilon = 0.01"), "{e}");
}
