//! Probe of DP-SCD through the pipeline (issue 25): breast_cancer / diabetes with the
//! file's min/max bounds (non-private, a probe), a grid of lambda, clip, batch, passes.
//! `cargo run --release -p dp-erm --example scd_probe -- runs eps lambdas clips batches passes`
//! (lists comma-separated; 0 = the default).
//!
//! Each run is seeded (seeds 0..runs) so that the measurement can be repeated bit for bit:
//! a seed replays the noise, so a model fitted this way is a measurement, never a
//! release. A real fit leaves the seed unset (operating-system entropy).

use dp_erm::models::io::{load_csv_data, CsvOptions, Target};
use dp_erm::models::{Dataset, DenseDesign};
use dp_erm::{Algorithm, FeatureBounds, PenaltyKind, Pipeline, TargetBound, Task};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn load(name: &str, opts: &CsvOptions) -> Dataset<DenseDesign> {
    let p = format!("{}/../dp-bench/data/{name}.csv", env!("CARGO_MANIFEST_DIR"));
    load_csv_data(p, opts).expect("embedded data").dataset
}

fn score(r: &dp_erm::FitReport, key: &str) -> f64 {
    r.diagnostics
        .scores
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .expect("score")
}

fn list(s: &str) -> Vec<f64> {
    s.split(',').map(|v| v.parse().unwrap()).collect()
}

fn main() -> Res<()> {
    let a: Vec<String> = std::env::args().collect();
    let runs: u64 = a[1].parse()?;
    let (epss, lambdas, clips, batches, passes) = (
        list(&a[2]),
        list(&a[3]),
        list(&a[4]),
        list(&a[5]),
        list(&a[6]),
    );
    let which = a.get(7).cloned().unwrap_or("both".into());
    let bc = load(
        "breast_cancer",
        &CsvOptions::classification(Target::Name("diagnosis".into()), "benign", "malignant"),
    );
    let db = load(
        "diabetes",
        &CsvOptions::regression(Target::Name("target".into())),
    );
    let tb = |p: Pipeline, task: Task| {
        if task == Task::Regression {
            p.target_bound(TargetBound::NonPrivateFromData)
        } else {
            p
        }
    };
    for (name, data, task) in [
        ("breast_cancer", &bc, Task::Classification),
        ("diabetes", &db, Task::Regression),
    ] {
        if which != "both" && which != name {
            continue;
        }
        let key = if task == Task::Classification {
            "accuracy"
        } else {
            "mse"
        };
        for &lambda in &lambdas {
            let (mut np, mut base) = (0.0, 0.0);
            for seed in 0..runs {
                let r = tb(
                    Pipeline::new(task, Algorithm::Sdca)
                        .penalty(PenaltyKind::L2, lambda)
                        .passes(100)
                        .feature_bounds(FeatureBounds::NonPrivateFromData)
                        .test_fraction(0.2)
                        .seed(Some(seed)),
                    task,
                )
                .fit(data)?;
                np += score(&r, key) / runs as f64;
                base += score(
                    &r,
                    if task == Task::Classification {
                        "majority_accuracy"
                    } else {
                        "mean_mse"
                    },
                ) / runs as f64;
            }
            println!("{name} lambda {lambda}: sdca {np:.3} baseline {base:.3}");
            for &eps in &epss {
                for &b in &batches {
                    for &k in &passes {
                        let mut line = format!("  eps {eps} batch {b} passes {k}:");
                        for &clip in &clips {
                            let mut v = Vec::new();
                            let mut err = None;
                            for seed in 0..runs {
                                let mut p = tb(
                                    Pipeline::new(task, Algorithm::DpScd)
                                        .penalty(PenaltyKind::L2, lambda)
                                        .privacy(eps, 1e-5)
                                        .feature_bounds(FeatureBounds::NonPrivateFromData)
                                        .test_fraction(0.2)
                                        .seed(Some(seed)),
                                    task,
                                );
                                let ntr = (data.n_samples() as f64 * 0.8).ceil();
                                let bb = if b > 0.0 { b } else { ntr.sqrt().round() };
                                if clip > 0.0 {
                                    p = p.clip(clip);
                                } else if clip < 0.0 {
                                    // relative: |clip| lambda n / L
                                    p = p.clip(-clip * lambda * ntr / bb);
                                }
                                if b > 0.0 {
                                    p = p.batch_size(b as u64);
                                }
                                if k > 0.0 {
                                    p = p.passes(k as u64);
                                }
                                match p.fit(data) {
                                    Ok(r) => v.push(score(&r, key)),
                                    Err(e) => err = Some(e.to_string()),
                                }
                            }
                            let m = v.iter().sum::<f64>() / v.len().max(1) as f64;
                            match err {
                                None => line += &format!(" c{clip}: {m:.3} |"),
                                Some(e) => line += &format!(" c{clip}: ERR {e} |"),
                            }
                        }
                        println!("{line}");
                    }
                }
            }
        }
    }
    Ok(())
}
