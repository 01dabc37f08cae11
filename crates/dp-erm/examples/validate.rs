//! Measures the pipeline on raw real data (issue 25's "done when"):
//!
//! * diabetes (442 x 10, raw targets 25..346), regression with private feature and target
//!   bounds: held-out MSE at eps 1 and 5 against predicting the training mean and against
//!   the non-private fit (CD, 200 passes, bounds from the data), mean over runs;
//! * breast_cancer (569 x 30, raw features), classification with private feature bounds
//!   against bounds declared by hand (per column, the power of ten above the column's
//!   largest value, as read from a codebook; and one uniform bound 5,000), mean accuracy
//!   over runs.
//!
//! Every run holds out 20 % (a seeded split, the same for every method of a run).
//! `cargo run --release -p dp-erm --example validate [runs]` (default 5).

use dp_erm::models::io::{load_csv_data, CsvOptions, Target};
use dp_erm::models::{Dataset, DenseDesign};
use dp_erm::{Algorithm, FeatureBounds, Pipeline, TargetBound, Task};

fn load(name: &str, opts: &CsvOptions) -> Dataset<DenseDesign> {
    let path = format!("{}/../dp-bench/data/{name}.csv", env!("CARGO_MANIFEST_DIR"));
    load_csv_data(&path, opts).expect("embedded data").dataset
}

fn score(r: &dp_erm::FitReport, key: &str) -> f64 {
    r.diagnostics
        .scores
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .expect("score")
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: u64 = std::env::args().nth(1).map_or(Ok(5), |s| s.parse())?;
    let diabetes = load(
        "diabetes",
        &CsvOptions::regression(Target::Name("target".into())),
    );
    println!("diabetes regression, held-out MSE, mean of {runs} runs (20 % test)");
    let mut nonpriv = Vec::new();
    let mut base = Vec::new();
    for seed in 0..runs {
        let r = Pipeline::new(Task::Regression, Algorithm::Cd)
            .passes(200)
            .feature_bounds(FeatureBounds::NonPrivateFromData)
            .target_bound(TargetBound::NonPrivateFromData)
            .test_fraction(0.2)
            .seed(Some(seed))
            .fit(&diabetes)?;
        nonpriv.push(score(&r, "mse"));
        base.push(score(&r, "mean_mse"));
    }
    println!(
        "  predicting the mean: {:.0}   non-private CD: {:.0}",
        mean(&base),
        mean(&nonpriv)
    );
    for eps in [1.0, 5.0] {
        let mut mse = Vec::new();
        for seed in 0..runs {
            let r = Pipeline::new(Task::Regression, Algorithm::DpCd)
                .privacy(eps, 1e-5)
                .feature_bounds(FeatureBounds::private())
                .target_bound(TargetBound::private())
                .test_fraction(0.2)
                .seed(Some(seed))
                .fit(&diabetes)?;
            mse.push(score(&r, "mse"));
        }
        println!(
            "  dp-cd eps {eps}, auto bounds: {:.0} ({:.2}x the mean's, {:.2}x the non-private)  runs: {:?}",
            mean(&mse),
            mean(&mse) / mean(&base),
            mean(&mse) / mean(&nonpriv),
            mse.iter().map(|v| v.round()).collect::<Vec<_>>()
        );
    }

    let bc = load(
        "breast_cancer",
        &CsvOptions::classification(Target::Name("diagnosis".into()), "benign", "malignant"),
    );
    let hand: Vec<f64> = (0..bc.n_features())
        .map(|j| {
            let m = bc.x().col(j).iter().fold(0.0f64, |a, v| a.max(v.abs()));
            10f64.powf(m.log10().ceil())
        })
        .collect();
    println!("breast_cancer classification, held-out accuracy, mean of {runs} runs (20 % test)");
    for eps in [0.5, 1.0, 5.0] {
        let mut acc = [Vec::new(), Vec::new(), Vec::new()];
        for seed in 0..runs {
            let bounds = [
                FeatureBounds::private(),
                FeatureBounds::PerColumn(hand.clone()),
                FeatureBounds::Uniform(5000.0),
            ];
            for (k, b) in bounds.into_iter().enumerate() {
                let r = Pipeline::new(Task::Classification, Algorithm::DpCd)
                    .privacy(eps, 1e-5)
                    .feature_bounds(b)
                    .test_fraction(0.2)
                    .seed(Some(seed))
                    .fit(&bc)?;
                acc[k].push(score(&r, "accuracy"));
            }
        }
        println!(
            "  dp-cd eps {eps}: auto bounds {:.3}   hand per-column {:.3}   hand uniform 5000 {:.3}",
            mean(&acc[0]),
            mean(&acc[1]),
            mean(&acc[2])
        );
    }
    Ok(())
}
