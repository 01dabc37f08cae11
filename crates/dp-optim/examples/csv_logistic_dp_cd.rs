//! Private logistic regression from a CSV file with DP-CD (Mangold et al. 2022).
//!
//! ```sh
//! cargo run --release -p dp-optim --example csv_logistic_dp_cd -- [DATA.csv] [MODEL.json]
//! ```
//!
//! Defaults: the Electricity data embedded in this repository (label column `class`,
//! `UP` = +1, `DOWN` = -1) and `dp_cd_model.json`. For your own file, change the label
//! column, the class names and the feature bound below.
//!
//! * The smoothness constants follow from a feature bound declared **without looking at
//!   the data**, and values beyond it are clipped, so they cost no privacy.
//! * The randomness comes from the operating system: there is no seed to keep secret.
//! * Only the releasable model (coefficients, plan, ledger, guarantee) is saved.
//! * The held-out accuracy is computed without privacy, and the hyperparameters below
//!   were picked by hand on this data: neither is covered by the guarantee.

use dp_models::constants::Tagged;
use dp_models::io::{load_csv, CsvOptions, Target};
use dp_models::metrics::accuracy;
use dp_models::preprocess::clip_to_bound;
use dp_models::split::train_test_split;
use dp_models::{Logistic, Loss, L2};
use dp_optim::{DpCdParams, Smoothness, Solver};

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
    let out = args.next().unwrap_or_else(|| "dp_cd_model.json".into());
    let opts = CsvOptions::classification(Target::Name("class".into()), "UP", "DOWN");

    let mut data = load_csv(&path, &opts)?;
    clip_to_bound(&mut data, FEATURE_BOUND)?; // a per-value map: no privacy cost
    let (train, test) = train_test_split(&data, 0.25, 0)?; // fixed, public split
    let (n, p) = (train.n_samples(), train.n_features());
    // M_j <= c B^2 for a loss of curvature c: a public bound, no privacy spent on it.
    let m_j = Logistic.curvature_bound().ok_or("logistic is smooth")? * FEATURE_BOUND.powi(2);
    let solver = DpCdParams::new(Logistic, L2::new(1e-5)?)
        .epsilon(1.0)
        .delta(1.0 / (n * n) as f64)
        .passes(2000)
        .step_scale(1.9)
        .clip(2.0)
        .smoothness(Smoothness::Given(Tagged::public(vec![m_j; p])))
        .build()?;
    let fit = solver.fit(&train)?; // fresh OS entropy
    let acc = accuracy(test.y(), &fit.model.predict_labels(test.x())?)?;

    let g = fit.guarantee().ok_or("a private fit has a guarantee")?;
    let (eps, delta, adjacency) = (g.epsilon, g.delta, g.adjacency.name());
    let up = test.y().iter().filter(|&&y| y > 0.0).count() as f64 / test.n_samples() as f64;
    let majority = up.max(1.0 - up);
    println!("{path}: {n} training rows, {p} features");
    println!("guarantee: ({eps}, {delta:e})-DP, {adjacency} neighbours");
    println!("held-out accuracy: {acc:.4} (majority class: {majority:.4})");
    std::fs::write(&out, serde_json::to_string_pretty(&fit.model)?)?;
    println!("releasable model written to {out}");
    Ok(())
}
