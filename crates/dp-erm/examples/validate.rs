//! Measures the pipeline on raw real data (issue 25's "done when"):
//!
//! * diabetes (442 x 10, raw targets 25..346), regression with private feature and target
//!   bounds: held-out MSE at eps 1 and 5 against predicting the training mean and against
//!   the non-private fit (CD, 200 passes, bounds from the data), mean over runs;
//! * breast_cancer (569 x 30, raw features), classification with private feature bounds
//!   against bounds declared by hand: the per-column minimum and maximum of the file (what
//!   a user who min-max scales the data by hand declares), the power of ten above each
//!   column's largest value (as read from a codebook), and one uniform bound 5,000;
//! * every private algorithm (DP-CD, DP-GCD, DP-SGD, DP-SCD with L2 1e-3, which it needs)
//!   through the pipeline with its no-tuning defaults and private bounds, on both files at
//!   eps 0.1, 1 and 5;
//! * Adult (32,561 x 104 after one-hot encoding, raw numeric columns) at eps 0.1 and 1:
//!   accuracy and the typed warnings the fit result carries.
//!
//! Every run holds out 20 % (a seeded split, the same for every method of a run); the
//! seeds replay the noise, so these fits are measurements, never releases.
//! `cargo run --release -p dp-erm --example validate [runs]` (default 5).

use dp_erm::models::io::{load_csv_data, CsvOptions, Target};
use dp_erm::models::{Dataset, DenseDesign};
use dp_erm::{Algorithm, FeatureBounds, PenaltyKind, Pipeline, TargetBound, Task};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn data_path(name: &str) -> String {
    format!("{}/../dp-bench/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn load(name: &str, opts: &CsvOptions) -> Dataset<DenseDesign> {
    load_csv_data(data_path(&format!("{name}.csv")), opts)
        .expect("embedded data")
        .dataset
}

/// UCI's `adult.data`: the five numeric columns raw, the seven categorical ones one-hot
/// (every category of the file, the reference category included: a codebook's list),
/// label `>50K` = +1.
fn adult() -> Res<Dataset<DenseDesign>> {
    let text = std::fs::read_to_string(data_path("adult.data"))?;
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(str::trim).collect())
        .collect();
    let numeric = [0usize, 4, 10, 11, 12];
    let categorical = [1usize, 5, 6, 7, 8, 9, 13];
    let mut levels: Vec<Vec<&str>> = vec![Vec::new(); categorical.len()];
    for r in &rows {
        for (k, &c) in categorical.iter().enumerate() {
            if !levels[k].contains(&r[c]) {
                levels[k].push(r[c]);
            }
        }
    }
    let p = numeric.len() + levels.iter().map(Vec::len).sum::<usize>();
    let mut x = Vec::with_capacity(rows.len() * p);
    let mut y = Vec::with_capacity(rows.len());
    for r in &rows {
        for &c in &numeric {
            x.push(r[c].parse::<f64>()?);
        }
        for (k, &c) in categorical.iter().enumerate() {
            x.extend(levels[k].iter().map(|&v| if v == r[c] { 1.0 } else { 0.0 }));
        }
        y.push(if r[14].starts_with(">50K") { 1.0 } else { -1.0 });
    }
    Ok(Dataset::new(
        DenseDesign::from_row_major(rows.len(), p, &x)?,
        y,
    )?)
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

/// The pipeline of `alg` with its no-tuning defaults (DP-SCD needs an L2 penalty).
fn private(task: Task, alg: Algorithm, eps: f64, seed: u64) -> Pipeline {
    let p = Pipeline::new(task, alg)
        .privacy(eps, 1e-5)
        .feature_bounds(FeatureBounds::private())
        .test_fraction(0.2)
        .seed(Some(seed));
    let p = if alg == Algorithm::DpScd {
        p.penalty(PenaltyKind::L2, 1e-3)
    } else {
        p
    };
    if task == Task::Regression {
        p.target_bound(TargetBound::private())
    } else {
        p
    }
}

fn main() -> Res<()> {
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
        let mut share = 0.0;
        for seed in 0..runs {
            let r = private(Task::Regression, Algorithm::DpCd, eps, seed).fit(&diabetes)?;
            mse.push(score(&r, "mse"));
            share = r.chosen.feature_share.unwrap_or(f64::NAN);
        }
        println!(
            "  dp-cd eps {eps}, auto bounds (feature share {share:.2}): {:.0} ({:.2}x the mean's, {:.2}x the non-private)  runs: {:?}",
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
    let minmax: Vec<(f64, f64)> = (0..bc.n_features())
        .map(|j| {
            let c = bc.x().col(j);
            let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        })
        .collect();
    let codebook: Vec<f64> = minmax
        .iter()
        .map(|&(lo, hi)| 10f64.powf(lo.abs().max(hi.abs()).log10().ceil()))
        .collect();
    println!(
        "breast_cancer classification, held-out accuracy, mean of {runs} runs (20 % test; \
         runs at or below the majority class in brackets)"
    );
    for eps in [0.5, 1.0, 5.0] {
        let mut acc = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        let mut at_majority = [0; 4];
        let mut share = 0.0;
        for seed in 0..runs {
            let bounds = [
                FeatureBounds::private(),
                FeatureBounds::Ranges(minmax.clone()),
                FeatureBounds::PerColumn(codebook.clone()),
                FeatureBounds::Uniform(5000.0),
            ];
            for (k, b) in bounds.into_iter().enumerate() {
                let r = private(Task::Classification, Algorithm::DpCd, eps, seed)
                    .feature_bounds(b)
                    .fit(&bc)?;
                if k == 0 {
                    share = r.chosen.feature_share.unwrap_or(f64::NAN);
                }
                acc[k].push(score(&r, "accuracy"));
                if score(&r, "accuracy") <= score(&r, "majority_accuracy") {
                    at_majority[k] += 1;
                }
            }
        }
        println!(
            "  dp-cd eps {eps}: auto bounds (share {share:.2}) {:.3} ({})   hand min/max {:.3} ({})   hand codebook {:.3} ({})   hand uniform 5000 {:.3} ({})",
            mean(&acc[0]),
            at_majority[0],
            mean(&acc[1]),
            at_majority[1],
            mean(&acc[2]),
            at_majority[2],
            mean(&acc[3]),
            at_majority[3]
        );
    }

    println!(
        "every private algorithm through the pipeline, no-tuning defaults, private bounds, \
         mean of {runs} runs (20 % test)"
    );
    println!("| data | eps | dp-cd | dp-gcd | dp-sgd | dp-scd (L2 1e-3) | baseline |");
    println!("|---|---|---|---|---|---|---|");
    let algs = [
        Algorithm::DpCd,
        Algorithm::DpGcd,
        Algorithm::DpSgd,
        Algorithm::DpScd,
    ];
    for eps in [0.1, 1.0, 5.0] {
        let mut cells = Vec::new();
        for alg in algs {
            let mut v = Vec::new();
            let mut failed = None;
            for seed in 0..runs {
                match private(Task::Regression, alg, eps, seed).fit(&diabetes) {
                    Ok(r) => v.push(score(&r, "mse") / score(&r, "mean_mse")),
                    Err(e) => failed = Some(e),
                }
            }
            cells.push(match failed {
                None => format!("{:.2}x", mean(&v)),
                Some(e) => format!("error: {e}"),
            });
        }
        println!(
            "| diabetes (MSE / mean's) | {eps} | {} | 1x |",
            cells.join(" | ")
        );
    }
    for eps in [0.1, 1.0, 5.0] {
        let mut cells = Vec::new();
        let mut maj = Vec::new();
        for alg in algs {
            let mut v = Vec::new();
            let mut failed = None;
            for seed in 0..runs {
                match private(Task::Classification, alg, eps, seed).fit(&bc) {
                    Ok(r) => {
                        v.push(score(&r, "accuracy"));
                        maj.push(score(&r, "majority_accuracy"));
                    }
                    Err(e) => failed = Some(e),
                }
            }
            cells.push(match failed {
                None => format!("{:.3}", mean(&v)),
                Some(e) => format!("error: {e}"),
            });
        }
        println!(
            "| breast_cancer (accuracy) | {eps} | {} | {:.3} (majority) |",
            cells.join(" | "),
            mean(&maj)
        );
    }

    let adult = adult()?;
    println!(
        "Adult ({} x {}, raw numeric columns, one-hot categories), dp-cd with private bounds, \
         20 % test",
        adult.n_samples(),
        adult.n_features()
    );
    for eps in [0.1, 1.0] {
        for seed in 0..runs.min(3) {
            let r = private(Task::Classification, Algorithm::DpCd, eps, seed).fit(&adult)?;
            let kinds: Vec<String> = r
                .warnings
                .iter()
                .map(|w| {
                    format!("{w:?}")
                        .split([' ', '{'])
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
                .collect();
            println!(
                "  eps {eps} run {seed}: accuracy {:.3} (majority {:.3}), passes {}, typed warnings {:?}",
                score(&r, "accuracy"),
                score(&r, "majority_accuracy"),
                r.chosen.passes,
                kinds
            );
        }
    }
    Ok(())
}
