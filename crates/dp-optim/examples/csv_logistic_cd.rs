//! Logistic regression from a CSV file with CD, the **non-private** twin of DP-CD: the
//! same coordinate descent without clipping or noise, to compare the private examples
//! (`csv_logistic_dp_cd`, `csv_logistic_dp_gcd`, `csv_logistic_dp_sgd`) against.
//!
//! ```sh
//! cargo run --release -p dp-optim --example csv_logistic_cd -- [DATA.csv] [MODEL.json]
//! ```
//!
//! Defaults: the Electricity data embedded in this repository (label column `class`,
//! `UP` = +1, `DOWN` = -1) and `cd_model.json`. For your own file, change the label
//! column, the class names and the feature bound below.
//!
//! The model is **not private**: it has no guarantee and must not be published as if
//! it had one. The smoothness constants follow from the same declared feature bound as
//! in the private examples, so the comparison isolates the cost of privacy.

use dp_models::constants::Tagged;
use dp_models::io::{load_csv, CsvOptions, Target};
use dp_models::metrics::accuracy;
use dp_models::preprocess::clip_to_bound;
use dp_models::split::train_test_split;
use dp_models::{Logistic, Loss, L2};
use dp_optim::{CdParams, Smoothness, Solver};

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../dp-bench/data/electricity.csv"
);
/// Public bound `|x_ij| <= B`. Electricity's features are normalised to [0, 1] except
/// `day` (1 to 7), which clipping turns into a constant column: it acts as an intercept.
const FEATURE_BOUND: f64 = 1.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| DATA.into());
    let out = args.next().unwrap_or_else(|| "cd_model.json".into());
    let opts = CsvOptions::classification(Target::Name("class".into()), "UP", "DOWN");

    let mut data = load_csv(&path, &opts)?;
    clip_to_bound(&mut data, FEATURE_BOUND)?; // a per-value map: no privacy cost
    let (train, test) = train_test_split(&data, 0.25, 0)?; // fixed, public split
    let (n, p) = (train.n_samples(), train.n_features());
    // M_j <= c B^2 for a loss of curvature c.
    let m_j = Logistic.curvature_bound().ok_or("logistic is smooth")? * FEATURE_BOUND.powi(2);
    let solver = CdParams::new(Logistic, L2::new(1e-5)?)
        .passes(2000)
        .step_scale(1.9)
        .smoothness(Smoothness::Given(Tagged::public(vec![m_j; p])))
        .build()?;
    let fit = solver.fit(&train)?; // coordinates drawn from fresh OS entropy
    let acc = accuracy(test.y(), &fit.model.predict_labels(test.x())?)?;

    let up = test.y().iter().filter(|&&y| y > 0.0).count() as f64 / test.n_samples() as f64;
    let majority = up.max(1.0 - up);
    println!("{path}: {n} training rows, {p} features");
    println!("guarantee: none (not private)");
    println!("held-out accuracy: {acc:.4} (majority class: {majority:.4})");
    std::fs::write(&out, serde_json::to_string_pretty(&fit.model)?)?;
    println!("model (not private) written to {out}");
    Ok(())
}
