//! End to end: the DP-CD experiment at the `smoke` profile on two problems, into a temporary
//! directory; the outputs must parse and agree with each other and with the grid.

mod common;

use dp_bench::experiments::dp_cd::{
    paper_table2, run_with, variants, Algorithm, ProblemName, Record, Settings, PASSES,
};
use dp_bench::experiments::Profile;
use dp_bench::report::Summary;
use std::collections::HashMap;

use common::{smoke, temp_dir};

#[test]
fn smoke_profile_writes_consistent_outputs() {
    let out = temp_dir("dp-cd-smoke");
    let mut settings = Settings::for_profile(Profile::Smoke);
    settings.problems = vec![ProblemName::CaliforniaStd, ProblemName::SparseLasso];
    let config = smoke(&out, 11);
    run_with(&config, &settings).unwrap();
    let dir = out.join("dp-cd");

    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let summary: Summary<Record> = serde_json::from_str(&text).unwrap();
    assert_eq!(summary.meta.experiment, "dp-cd");
    assert_eq!(summary.meta.profile, "smoke");
    assert_eq!(summary.meta.seed, 11);
    assert_eq!(summary.meta.crate_version, env!("CARGO_PKG_VERSION"));
    assert!(summary.meta.date.ends_with('Z') && summary.meta.date.len() == 20);
    assert!(summary.meta.machine.logical_cpus >= 1);
    let records = summary.records;
    let expected: usize = settings
        .problems
        .iter()
        .map(|&p| variants(p).len() * settings.passes.len())
        .sum();
    assert_eq!(records.len(), expected);
    assert!(!dir.join("summary.partial.json").exists());

    let mut f_star: HashMap<String, f64> = HashMap::new();
    for r in &records {
        assert_eq!(r.runs, settings.final_runs, "{r:?}");
        assert_eq!(r.rel_error_runs.len(), r.runs);
        assert_eq!(r.failed_runs, 0, "{r:?}");
        let (mean, min, max) = (
            r.rel_error_mean.unwrap(),
            r.rel_error_min.unwrap(),
            r.rel_error_max.unwrap(),
        );
        assert!(min <= mean && mean <= max, "{r:?}");
        let errs: Vec<f64> = r.rel_error_runs.iter().map(|e| e.unwrap()).collect();
        let m = errs.iter().sum::<f64>() / errs.len() as f64;
        assert!((m - mean).abs() <= 1e-12 * m.abs().max(1.0));
        // Relative errors are (F - F*)/F* with a certified F*: never meaningfully negative.
        assert!(min > -1e-8, "{r:?}");
        assert!(r.objective_star > 0.0);
        let first = *f_star.entry(r.problem.clone()).or_insert(r.objective_star);
        assert_eq!(first, r.objective_star);
        let steps = match r.algorithm.as_str() {
            "dp-sgd" => &settings.sgd_steps,
            _ => &settings.cd_steps,
        };
        // (JSON parsing may differ from the written value in the last bit.)
        let on_grid = |grid: &[f64], v: f64| grid.iter().any(|g| (g - v).abs() <= 1e-12 * g);
        assert!(on_grid(steps, r.step), "{r:?}");
        let clips: &[f64] = match r.algorithm.as_str() {
            "dp-sgd" => &settings.sgd_clips,
            "cd" => &[1.0],
            _ => &settings.cd_clips,
        };
        assert!(on_grid(clips, r.clip), "{r:?}");
        assert!(r.seconds_per_run.unwrap() >= 0.0);
        // The paper's Table 2 value is attached exactly where the paper has one.
        let problem = settings
            .problems
            .iter()
            .find(|p| p.as_str() == r.problem)
            .copied()
            .unwrap();
        let alg = match r.algorithm.as_str() {
            "dp-cd" => Some(Algorithm::DpCd),
            "dp-cd-cyclic" => Some(Algorithm::DpCdCyclic),
            "dp-sgd" => Some(Algorithm::DpSgd),
            _ => None,
        };
        let i = PASSES.iter().position(|&p| p == r.passes).unwrap();
        let want = alg.and_then(|a| paper_table2(problem, a)).map(|t| t[i].0);
        assert_eq!(r.paper_rel_error, want, "{r:?}");
        assert!(r.delta > 0.0 && r.delta < 1e-5);
    }

    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for needle in [
        "Table 2",
        "Table 3",
        "california-std",
        "sparse-lasso",
        "dp-sgd",
        "dp-cd-cyclic",
    ] {
        assert!(report.contains(needle), "report misses {needle}");
    }
    for name in ["fig2-california-std.svg", "fig2-sparse-lasso.svg"] {
        let svg = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("dp-cd") && svg.contains("dp-sgd"));
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn same_seed_same_summary() {
    let run = |tag: &str| {
        let out = temp_dir(tag);
        let mut settings = Settings::for_profile(Profile::Smoke);
        settings.problems = vec![ProblemName::CaliforniaStd];
        let config = smoke(&out, 5);
        run_with(&config, &settings).unwrap();
        let text = std::fs::read_to_string(out.join("dp-cd/summary.json")).unwrap();
        std::fs::remove_dir_all(&out).unwrap();
        let summary: Summary<Record> = serde_json::from_str(&text).unwrap();
        summary
            .records
            .into_iter()
            .map(|r| (r.algorithm, r.accounting, r.step, r.clip, r.rel_error_runs))
            .collect::<Vec<_>>()
    };
    // Runs execute in parallel in any order; the results must not depend on it.
    assert_eq!(run("det-a"), run("det-b"));
}

/// The DP-SCD row (the DP-CD paper's Fig. 1 baseline) runs on raw Electricity only, at
/// every budget, tuned over its own grid (`L` on the step axis, `C`), without failures.
#[test]
fn dp_scd_row_on_raw_electricity() {
    let out = temp_dir("dp-cd-scd");
    let mut settings = Settings::for_profile(Profile::Smoke);
    settings.problems = vec![ProblemName::ElectricityRaw];
    let config = smoke(&out, 3);
    run_with(&config, &settings).unwrap();
    let text = std::fs::read_to_string(out.join("dp-cd/summary.json")).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    let summary: Summary<Record> = serde_json::from_str(&text).unwrap();
    let scd: Vec<&Record> = summary
        .records
        .iter()
        .filter(|r| r.algorithm == Algorithm::DpScd.as_str())
        .collect();
    assert_eq!(scd.len(), settings.passes.len());
    for r in scd {
        assert_eq!(r.failed_runs, 0, "{r:?}");
        assert_eq!(r.diverged_runs, 0, "{r:?}");
        let on_grid = |grid: &[f64], v: f64| grid.iter().any(|g| (g - v).abs() <= 1e-12 * g);
        assert!(on_grid(&settings.scd_batches, r.step), "{r:?}");
        assert!(on_grid(&settings.scd_clips, r.clip), "{r:?}");
        let mean = r.rel_error_mean.unwrap();
        assert!(mean.is_finite() && mean > -1e-8, "{r:?}");
    }
    assert!(!variants(ProblemName::CaliforniaStd).contains(&(
        Algorithm::DpScd,
        dp_bench::experiments::dp_cd::Accounting::Paper
    )));
}
