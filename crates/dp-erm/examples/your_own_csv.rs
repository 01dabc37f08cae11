//! Your own CSV file through the pipeline, with the defaults a user gets: no bound
//! declared (per-column ranges released privately on a share of epsilon chosen by a
//! public rule, charged), an intercept, the no-tuning hyperparameters of DP-CD, and the
//! typed warnings of the result printed.
//!
//! ```text
//! cargo run -p dp-erm --example your_own_csv -- [FILE TARGET [POSITIVE NEGATIVE]] [--epsilon E]
//! ```
//!
//! With `POSITIVE NEGATIVE` (the two label texts) the task is classification (logistic
//! loss), without them regression (squared loss, the target's range released privately
//! too). Defaults: scikit-learn's breast_cancer, raw features (`diagnosis`, malignant /
//! benign), epsilon 1, delta `min(1e-5, 1 / n^2)`. The model file `model.json` holds the
//! releasable model (no seed); the scores are computed from the held-out rows without
//! privacy: for you, not for publication.

use dp_erm::models::io::{load_csv_data, CsvOptions, Target};
use dp_erm::{Algorithm, FeatureBounds, Pipeline, TargetBound, Task};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut epsilon = 1.0;
    if let Some(i) = args.iter().position(|a| a == "--epsilon") {
        epsilon = args.get(i + 1).ok_or("--epsilon needs a value")?.parse()?;
        args.drain(i..i + 2);
    }
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dp-bench/data/breast_cancer.csv"
    );
    let (path, target, labels) = match args.as_slice() {
        [] => (
            default.to_string(),
            "diagnosis".to_string(),
            Some(("malignant".to_string(), "benign".to_string())),
        ),
        [f, t] => (f.clone(), t.clone(), None),
        [f, t, pos, neg] => (f.clone(), t.clone(), Some((pos.clone(), neg.clone()))),
        _ => {
            return Err(
                "usage: your_own_csv [FILE TARGET [POSITIVE NEGATIVE]] [--epsilon E]".into(),
            )
        }
    };
    let (task, opts) = match &labels {
        Some((pos, neg)) => (
            Task::Classification,
            CsvOptions::classification(Target::Name(target), pos, neg),
        ),
        None => (
            Task::Regression,
            CsvOptions::regression(Target::Name(target)),
        ),
    };
    let data = load_csv_data(&path, &opts)?.dataset;
    let n = data.n_samples() as f64;
    let delta = 1e-5f64.min(1.0 / (n * n));
    let mut pipeline = Pipeline::new(task, Algorithm::DpCd)
        .privacy(epsilon, delta)
        .feature_bounds(FeatureBounds::private())
        .test_fraction(0.2); // OS entropy: no seed
    if task == Task::Regression {
        pipeline = pipeline.target_bound(TargetBound::private());
    }
    let report = pipeline.fit(&data)?;

    let g = report.guarantee().ok_or("a private fit has a guarantee")?;
    println!(
        "guarantee: ({:.4}, {:.2e})-DP under {}, of which the private ranges {:.4}",
        g.epsilon,
        g.delta,
        g.adjacency.name(),
        g.preprocessing_epsilon
    );
    for (k, v) in &report.diagnostics.scores {
        println!("held-out {k} = {v:.4} (not private)");
    }
    let c = &report.chosen;
    println!(
        "chosen: {} passes, step scale {:?}, clip {:?}, feature share {:?}, intercept: {}",
        c.passes, c.step_scale, c.clip, c.feature_share, c.intercept_note
    );
    for w in &report.warnings {
        println!("warning: {w}");
    }
    std::fs::write("model.json", serde_json::to_string_pretty(&report.model)?)?;
    println!("model written to model.json (predicts on raw rows, in your units)");
    Ok(())
}
