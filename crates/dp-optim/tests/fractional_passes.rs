//! Fractional passes: DP-CD and DP-SGD run an exact number of steps (`steps`), e.g. the
//! 0.001-0.1 passes of the DP-GCD paper's competitors; the ledger charges exactly that
//! many releases and the guarantee still meets the target.

use dp_accounting::ledger::Charge;
use dp_models::{Dataset, DenseDesign, Squared, L1};
use dp_optim::*;

fn data(n: usize, p: usize) -> Dataset<DenseDesign> {
    let x: Vec<f64> = (0..n * p)
        .map(|k| ((k * 7919) % 1009) as f64 / 504.5 - 1.0)
        .collect();
    let y = (0..n).map(|i| x[i * p] - 0.3 * x[i * p + 1]).collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn releases(fit: &Fitted) -> u64 {
    fit.privacy()
        .unwrap()
        .ledger
        .entries()
        .iter()
        .map(|c| match c {
            Charge::Gaussian { count, .. }
            | Charge::SubsampledGaussian { count, .. }
            | Charge::SampledWithoutReplacementGaussian { count, .. }
            | Charge::PureDp { count, .. }
            | Charge::ExponentialMechanism { count, .. } => *count,
            // A whole private search; never charged by a single fit.
            Charge::Selection { .. } => panic!("a single fit charged a selection"),
        })
        .sum()
}

#[test]
fn dp_cd_runs_a_fraction_of_a_pass() {
    let d = data(200, 50);
    let cd = || {
        DpCdParams::new(Squared::half(), L1::new(0.01).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .clip(1.0)
            .allow_non_private_constants(true)
    };
    // 0.1 pass of p = 50 coordinates: 5 updates.
    let fit = cd().steps(5).build().unwrap().fit_seeded(&d, 1).unwrap();
    assert_eq!(releases(&fit), 5);
    assert!(fit.guarantee().unwrap().epsilon <= 1.0);
    assert!(fit.model.coefficients.iter().filter(|v| **v != 0.0).count() <= 5);
    // Fewer releases, less noise per release than one whole pass.
    let pass = cd().passes(1).build().unwrap().fit_seeded(&d, 1).unwrap();
    assert_eq!(releases(&pass), 50);
    let e = cd().steps(0).build().unwrap_err().to_string();
    assert!(e.contains("steps"), "{e}");
    let e = cd().steps(3).passes(1).build().unwrap_err().to_string();
    assert!(e.contains("not both"), "{e}");
    let e = cd().build().unwrap_err().to_string();
    assert!(e.contains("passes"), "{e}");
}

#[test]
fn dp_sgd_runs_a_fraction_of_a_pass() {
    let d = data(200, 5);
    let sgd = || {
        DpSgdParams::new(Squared::half(), L1::new(0.01).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .clip(1.0)
            .allow_non_private_constants(true)
    };
    // 0.05 pass of n = 200 records with batches of 1: 10 steps.
    let fit = sgd().steps(10).build().unwrap().fit_seeded(&d, 2).unwrap();
    assert_eq!(releases(&fit), 10);
    assert!(fit.guarantee().unwrap().epsilon <= 1.0);
    let e = sgd().steps(0).build().unwrap_err().to_string();
    assert!(e.contains("steps"), "{e}");
    let e = sgd().steps(3).passes(1).build().unwrap_err().to_string();
    assert!(e.contains("not both"), "{e}");
}
