//! breast_cancer through the pipeline (DP-CD, no-tuning defaults): the private feature
//! range rules of [`dp_erm::RangeRule`] against bounds given by hand, and two oracles
//! that are NOT private (the exact median +- 3 MAD per column, declared as if by hand)
//! which split the gap into what the share of epsilon costs the fit and what the noise
//! of the releases costs the ranges. Mean test accuracy over seeds 0..runs with its
//! standard error (issue 25).
//! `cargo run --release -p dp-erm --example bounds_rules -- runs eps [filter]`; with the
//! filter `diabetes`, the same rules on diabetes regression (private feature and target
//! ranges; held-out MSE against predicting the mean and the non-private CD). The
//! environment variable `ALG` (`dp-gcd`, `dp-sgd`, `dp-scd` with L2 1e-3) replaces DP-CD
//! on breast_cancer.
//!
//! Each run is seeded (seeds 0..runs) so that the measurement can be repeated bit for bit:
//! a seed replays the noise, so a model fitted this way is a measurement, never a
//! release. A real fit leaves the seed unset (operating-system entropy).

use dp_erm::models::io::{load_csv_data, CsvOptions, Target};
use dp_erm::{Algorithm, BoundGrid, FeatureBounds, Pipeline, RangeRule, TargetBound, Task};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn score(r: &dp_erm::FitReport, k: &str) -> f64 {
    r.diagnostics
        .scores
        .iter()
        .find(|(key, _)| key == k)
        .map(|(_, v)| *v)
        .expect("score")
}

fn mean_se(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() as f64 - 1.0);
    (m, (var / v.len() as f64).sqrt())
}

fn rules() -> Vec<(&'static str, BoundGrid)> {
    let rule = |r: RangeRule, m: f64| BoundGrid {
        rule: r,
        multiplier: m,
        ..BoundGrid::default()
    };
    vec![
        ("default (auto rule)", BoundGrid::default()),
        ("median-spread x3", rule(RangeRule::MedianSpread, 3.0)),
        ("abs-median x3", rule(RangeRule::AbsMedian, 3.0)),
        ("abs-median x2", rule(RangeRule::AbsMedian, 2.0)),
        ("signed-median c+-|c|", rule(RangeRule::SignedMedian, 3.0)),
        (
            "signed-median c+-1.5|c|",
            rule(RangeRule::SignedMedian, 4.5),
        ),
        (
            "median-relspread x3",
            rule(RangeRule::MedianRelativeSpread, 3.0),
        ),
        (
            "median-cappedspread x3",
            rule(RangeRule::MedianCappedSpread, 3.0),
        ),
        (
            "signed-median c+-|c| 1 step/oct",
            BoundGrid {
                steps_per_octave: 1,
                ..rule(RangeRule::SignedMedian, 3.0)
            },
        ),
    ]
}

fn diabetes(runs: u64, eps: f64) -> Res<()> {
    let path = format!(
        "{}/../dp-bench/data/diabetes.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    let d = load_csv_data(path, &CsvOptions::regression(Target::Name("target".into())))?.dataset;
    let (mut base, mut np) = (Vec::new(), Vec::new());
    for seed in 0..runs {
        let r = Pipeline::new(Task::Regression, Algorithm::Cd)
            .passes(200)
            .feature_bounds(FeatureBounds::NonPrivateFromData)
            .target_bound(TargetBound::NonPrivateFromData)
            .test_fraction(0.2)
            .seed(Some(seed))
            .fit(&d)?;
        base.push(score(&r, "mean_mse"));
        np.push(score(&r, "mse"));
    }
    let (b, _) = mean_se(&base);
    let (n, _) = mean_se(&np);
    println!(
        "diabetes, DP-CD defaults, eps {eps}, delta 1e-5, private feature and target ranges, 20 % test, {runs} seeds"
    );
    println!("  predicting the mean {b:.0}   non-private CD {n:.0}");
    for (name, g) in rules() {
        let mut v = Vec::new();
        for seed in 0..runs {
            let r = Pipeline::new(Task::Regression, Algorithm::DpCd)
                .privacy(eps, 1e-5)
                .feature_bounds(FeatureBounds::private())
                .target_bound(TargetBound::private())
                .bound_grid(g)
                .test_fraction(0.2)
                .seed(Some(seed))
                .fit(&d)?;
            v.push(score(&r, "mse"));
        }
        let (m, se) = mean_se(&v);
        println!(
            "  {name:<32} mse {m:.0} +- {se:.0} (se)   {:.2}x the mean's, {:.2}x the non-private",
            m / b,
            m / n
        );
    }
    Ok(())
}

fn main() -> Res<()> {
    let a: Vec<String> = std::env::args().collect();
    let runs: u64 = a.get(1).map_or(Ok(20), |s| s.parse())?;
    let eps: f64 = a.get(2).map_or(Ok(1.0), |s| s.parse())?;
    let filter = a.get(3).cloned().unwrap_or_default();
    let alg: Algorithm = std::env::var("ALG")
        .unwrap_or_else(|_| "dp-cd".into())
        .parse()?;
    if filter == "diabetes" {
        return diabetes(runs, eps);
    }
    let path = format!(
        "{}/../dp-bench/data/breast_cancer.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    let bc = load_csv_data(
        path,
        &CsvOptions::classification(Target::Name("diagnosis".into()), "benign", "malignant"),
    )?
    .dataset;
    let p = bc.n_features();
    let minmax: Vec<(f64, f64)> = (0..p)
        .map(|j| {
            let c = bc.x().col(j);
            let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        })
        .collect();
    // NOT private: the exact median +- 3 MAD of every column (all rows).
    let med_mad: Vec<(f64, f64)> = (0..p)
        .map(|j| {
            let mut c: Vec<f64> = bc.x().col(j).to_vec();
            let m = median(&mut c);
            let mut d: Vec<f64> = c.iter().map(|v| (v - m).abs()).collect();
            let t = median(&mut d);
            (m - 3.0 * t, m + 3.0 * t)
        })
        .collect();
    // NOT private, for the diagnosis only: the quartiles of every column. A released
    // range "misses" a column when it does not overlap its interquartile range, and is
    // "loose" when it is more than 20 times as wide as it.
    let quartiles: Vec<(f64, f64)> = (0..p)
        .map(|j| {
            let mut c: Vec<f64> = bc.x().col(j).to_vec();
            c.sort_by(f64::total_cmp);
            (c[c.len() / 4], c[3 * c.len() / 4])
        })
        .collect();
    let d = BoundGrid::default();
    // (name, bounds, grid, the epsilon of the whole pipeline)
    let mut configs: Vec<(String, FeatureBounds, BoundGrid, f64)> = vec![
        (
            "hand min/max".into(),
            FeatureBounds::Ranges(minmax.clone()),
            d,
            eps,
        ),
        (
            "hand min/max, half eps".into(),
            FeatureBounds::Ranges(minmax),
            d,
            eps / 2.0,
        ),
        (
            "oracle med+-3mad (NOT private)".into(),
            FeatureBounds::Ranges(med_mad.clone()),
            d,
            eps,
        ),
        (
            "oracle med+-3mad, half eps".into(),
            FeatureBounds::Ranges(med_mad),
            d,
            eps / 2.0,
        ),
    ];
    for (name, g) in rules() {
        configs.push((format!("auto {name}"), FeatureBounds::private(), g, eps));
    }
    for (name, g) in rules() {
        if !(name.starts_with("median") || name == "signed-median c+-|c|") {
            continue;
        }
        for share in [0.4, 0.6, 0.7, 0.8] {
            configs.push((
                format!("auto {name} share {share}"),
                FeatureBounds::Private { share },
                g,
                eps,
            ));
        }
    }
    println!(
        "breast_cancer, {} defaults, eps {eps}, delta 1e-5, 20 % test, {runs} seeds",
        alg.as_str()
    );
    for (name, fb, g, e) in configs {
        if !name.contains(filter.as_str()) {
            continue;
        }
        let mut v = Vec::new();
        let mut at_majority = 0;
        let mut share = None;
        let (mut misses, mut loose) = (0usize, 0usize);
        for seed in 0..runs {
            let pl = Pipeline::new(Task::Classification, alg);
            let pl = if alg == Algorithm::DpScd {
                pl.penalty(dp_erm::PenaltyKind::L2, 1e-3)
            } else {
                pl
            };
            let r = pl
                .privacy(e, 1e-5)
                .feature_bounds(fb.clone())
                .bound_grid(g)
                .test_fraction(0.2)
                .seed(Some(seed))
                .fit(&bc)?;
            share = r.chosen.feature_share;
            for (&(lo, hi), &(q1, q3)) in r.model.feature_ranges.iter().zip(&quartiles) {
                if hi < q1 || lo > q3 {
                    misses += 1;
                } else if hi - lo > 20.0 * (q3 - q1) {
                    loose += 1;
                }
            }
            let get = |k: &str| score(&r, k);
            v.push(get("accuracy"));
            if get("accuracy") <= get("majority_accuracy") {
                at_majority += 1;
            }
        }
        let (m, se) = mean_se(&v);
        let share = share.map_or("-".to_string(), |s| format!("{s:.2}"));
        let cols = (runs as usize * p) as f64;
        println!(
            "  {name:<32} eps {e:<4} share {share:<4} {m:.3} +- {se:.3} (se)   at or below the majority: {at_majority}   ranges missing the IQR {:.0} %, over 20x it {:.0} %",
            100.0 * misses as f64 / cols,
            100.0 * loose as f64 / cols
        );
    }
    Ok(())
}
