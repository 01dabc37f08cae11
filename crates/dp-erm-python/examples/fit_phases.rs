//! Where the time of the Python package's 160,000 x 50 default logistic fit goes, on
//! the Rust side alone (no Python, no numpy): the extension's copy of a C-ordered array
//! into the column-major design (the transpose, with its finiteness check), and whole
//! fits through `backend::fit` (what `DPLogisticRegression.fit` calls) with 1 pass and
//! with the default 50, 9 runs each.
//!
//! ```text
//! cargo run --release -p dp-erm-python --example fit_phases
//! ```
//!
//! The data are spread uniformly over [-1, 1] with a linear rule and label noise, as the
//! Python benchmark's `synthetic()` (not the same values); the bounds are (-1, 1).
//!
//! The fits are seeded (1, 2, ...), and a seed lets anyone replay the noise: this is a
//! timing harness, never a released model (a published model is fitted without a seed,
//! from OS entropy).
use dp_erm_python::backend::{fit, Features, FitSpec};
use dp_models::DenseDesign;
use std::time::Instant;

fn median_of_9(mut run: impl FnMut()) -> (f64, f64) {
    let mut t: Vec<f64> = (0..9)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[4], t[0])
}

fn main() {
    let (n, p) = (160_000usize, 50usize);
    // Uniform in [-1, 1) without a generator: the additive recurrences of two irrational
    // numbers (equidistributed), one for the features and one for the label noise.
    let x: Vec<f64> = (0..n * p)
        .map(|k| (k as f64 * 0.618_033_988_749_895).fract() * 2.0 - 1.0)
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let noise = (i as f64 * 0.414_213_562_373_095).fract() * 2.0 - 1.0;
            if x[i * p] + 0.5 * x[i * p + 1] + 0.3 * noise > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let (med, min) = median_of_9(|| {
        std::hint::black_box(DenseDesign::from_row_major_deferred_rows(n, p, &x).expect("design"));
    });
    println!("transpose + finite check: median {med:.4} s (fastest {min:.4})");
    for passes in [1u64, 50] {
        let spec: FitSpec = serde_json::from_value(serde_json::json!({
            "task": "classification", "loss": "logistic", "penalty": "l2", "alpha": 1e-4,
            "algorithm": "dp-cd", "epsilon": 1.0, "delta": 1e-5, "fit_intercept": true,
            "feature_ranges": vec![(-1.0, 1.0); p], "passes": passes,
        }))
        .expect("spec");
        let mut seed = 0;
        let (med, min) = median_of_9(|| {
            seed += 1;
            let features = Features::Dense {
                values: &x,
                n,
                p,
                row_major: true,
            };
            std::hint::black_box(fit(features, &y, &spec, Some(seed)).expect("fit"));
        });
        println!("fit, {passes:2} passes:         median {med:.4} s (fastest {min:.4})");
    }
}
