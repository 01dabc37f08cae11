//! `threads(k)`: each coordinate step's sweep over a dense design split into `k` fixed
//! pieces (rayon), reduced in a fixed order. Reproducible bit for bit for a given `k`,
//! whatever the pool size; equal to one sweep up to rounding; same privacy charge.

use dp_models::{Dataset, DenseDesign, Logistic, Squared, L1, L2};
use dp_optim::*;

fn data(n: usize, p: usize, labels: bool) -> Dataset<DenseDesign> {
    let x: Vec<f64> = (0..n * p)
        .map(|k| ((k * 7919) % 1009) as f64 / 504.5 - 1.0)
        .collect();
    let y = (0..n)
        .map(|i| {
            let t = x[i * p] - 0.3 * x[i * p + 1];
            if labels {
                if t > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            } else {
                t
            }
        })
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn close(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn split_sweeps_match_one_sweep_and_reproduce() {
    // 1,000 rows: split at 448 (k = 2) or into pieces of 192-256 rows (k = 4, 3).
    let d = data(1000, 12, false);
    let cd = |k: usize| {
        CdParams::new(Squared::half(), L1::new(0.01).unwrap())
            .passes(20)
            .threads(k)
            .build()
            .unwrap()
            .fit_seeded(&d, 3)
            .unwrap()
            .model
            .coefficients
    };
    let one = cd(1);
    for k in [2, 3, 4] {
        let a = cd(k);
        assert!(
            close(&a, &one) < 1e-9,
            "threads({k}) vs one sweep: {a:?} vs {one:?}"
        );
        assert_eq!(a, cd(k), "threads({k}) reproduces bit for bit");
        // The same on a single-thread pool: the result depends on k, not on the cores.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| cd(k)), a, "threads({k}) on one core");
    }
    assert!(one.iter().any(|&v| v != 0.0));

    let dl = data(1000, 12, true);
    let dp = |k: usize| {
        DpCdParams::new(Logistic, L2::new(1e-3).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(10)
            .clip(1.0)
            .threads(k)
            .allow_non_private_constants(true)
            .build()
            .unwrap()
            .fit_seeded(&dl, 5)
            .unwrap()
    };
    let (f1, f2) = (dp(1), dp(2));
    assert!(close(&f1.model.coefficients, &f2.model.coefficients) < 1e-9);
    assert_eq!(f2.model.coefficients, dp(2).model.coefficients);
    let (g1, g2) = (f1.privacy().unwrap(), f2.privacy().unwrap());
    assert_eq!(g1.ledger.entries(), g2.ledger.entries(), "same charges");
}

#[test]
fn zero_threads_is_refused() {
    let e = CdParams::new(Squared::half(), L1::new(0.01).unwrap())
        .passes(1)
        .threads(0)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("threads"), "{e}");
    let e = DpCdParams::new(Squared::half(), L1::new(0.01).unwrap())
        .epsilon(1.0)
        .delta(1e-6)
        .passes(1)
        .clip(1.0)
        .threads(0)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("threads"), "{e}");
}
