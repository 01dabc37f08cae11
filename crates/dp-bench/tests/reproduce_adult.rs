//! End to end: the Adult experiment at the `smoke` profile (2,000 training rows, one
//! epsilon) into a temporary directory; the outputs must parse and agree with the
//! settings, every guarantee must meet its target, and only the rows labelled so may use
//! constants computed from the data.

mod common;

use dp_bench::experiments::adult::{methods, run_with, Record, Settings};
use dp_bench::experiments::Profile;
use dp_bench::report::Summary;

use common::{smoke, temp_dir};

#[test]
fn smoke_profile_writes_consistent_outputs() {
    let out = temp_dir("adult-smoke");
    let settings = Settings::for_profile(Profile::Smoke);
    let config = smoke(&out, 5);
    run_with(&config, &settings).unwrap();
    let dir = out.join("adult");
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let summary: Summary<Record> = serde_json::from_str(&text).unwrap();
    assert_eq!(summary.meta.experiment, "adult");
    assert_eq!(summary.meta.profile, "smoke");
    let ms = methods(&settings);
    let records = &summary.records;
    // Two baselines, then one record per method and epsilon.
    assert_eq!(records.len(), 2 + ms.len() * settings.epsilons.len());
    for m in &ms {
        for &e in &settings.epsilons {
            let r = records
                .iter()
                .find(|r| r.method == m.key && r.epsilon == Some(e))
                .unwrap_or_else(|| panic!("{} at {e} missing", m.key));
            assert_eq!(r.failed_runs, 0, "{r:?}");
            assert_eq!(r.accuracy_runs.len(), settings.final_runs);
            let (lo, mean, hi) = (
                r.accuracy_min.unwrap(),
                r.accuracy_mean.unwrap(),
                r.accuracy_max.unwrap(),
            );
            assert!(0.0 <= lo && lo <= mean && mean <= hi && hi <= 1.0, "{r:?}");
            let achieved = r.achieved_epsilon_max.unwrap();
            assert!(achieved > 0.0 && achieved <= e, "{r:?}");
            // Only the data-constants rows use constants computed without privacy.
            assert_eq!(r.fully_private, r.group != "data-constants", "{r:?}");
            // The point each fresh run used is recorded: the rule's (no grid), the
            // tuned one, or one the selection picked from the grid.
            assert_eq!(r.points_used.len(), settings.final_runs, "{r:?}");
            if m.grid.is_empty() {
                assert!(r.points_used.iter().all(|p| Some(*p) == r.tuned), "{r:?}");
            } else {
                assert!(m.grid.contains(&r.tuned.unwrap()));
                assert!(r.points_used.iter().all(|p| m.grid.contains(p)), "{r:?}");
            }
            // A selection reports what each of its fits was handed (less than the total).
            assert_eq!(r.selection_fit_epsilon.is_some(), r.group == "selection");
            if let Some(fe) = r.selection_fit_epsilon {
                assert!(fe > 0.0 && fe < e, "{r:?}");
            }
        }
    }
    let maj = records.iter().find(|r| r.method == "majority").unwrap();
    let np = records.iter().find(|r| r.method == "non-private").unwrap();
    assert!(np.accuracy_mean.unwrap() > maj.accuracy_mean.unwrap());
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## Fully private"), "{report}");
    assert!(report.contains("not charged"), "{report}");
    assert!(report.contains("## Reading"), "{report}");
    // Every kind of row ran: tuned, no-tuning defaults, charged private selection, and
    // the Gaussian release of the M_j; the reading states the targets.
    for group in ["fully-private", "defaults", "selection", "data-constants"] {
        assert!(records.iter().any(|r| r.group == group), "{group}");
    }
    assert!(records.iter().any(|r| r.method == "dp-cd-gaussian"));
    assert!(report.contains("## No-tuning defaults"), "{report}");
    assert!(
        report.contains("## Private selection (charged)"),
        "{report}"
    );
    // The reading is a verdict per declared target, then the comparisons behind them.
    assert!(report.contains(": eps 1, no-tuning defaults:"), "{report}");
    assert!(
        report.contains(": eps 1, private selection (charged):"),
        "{report}"
    );
    assert!(report.contains("targets met"), "{report}");
    assert!(
        report.contains("### Every comparison behind the verdicts"),
        "{report}"
    );
    // A missed selection target names the fully private alternative that spends nothing
    // on a search: the no-tuning defaults.
    for line in report
        .lines()
        .filter(|l| l.starts_with("- **missed**: eps") && l.contains("private selection (charged)"))
    {
        assert!(line.contains("the no-tuning defaults ("), "{line}");
    }
    assert!(dir.join("fig-accuracy.svg").is_file());
    // More rows than a readable figure holds: the headline keeps six (every save refuses
    // more, or a shared colour or marker), the rest are beside it.
    assert!(dir.join("fig-accuracy-more.svg").is_file());
    let headline = std::fs::read_to_string(dir.join("fig-accuracy.svg")).unwrap();
    assert!(headline.contains("non-private"));
    assert!(!dir.join("summary.partial.json").exists());
    std::fs::remove_dir_all(&out).unwrap();
}

/// `Settings::only` (`cargo xtask reproduce adult --methods ...`): the run holds the
/// named rows and the baselines only, and an unknown key is refused with the list of
/// known ones before anything runs.
#[test]
fn a_method_filter_runs_the_named_rows_only() {
    let out = temp_dir("adult-only");
    let config = smoke(&out, 5);
    let only = vec![
        "dp-cd-support".to_owned(),
        "dp-cd-defaults-support".to_owned(),
    ];
    let settings = Settings {
        only: only.clone(),
        ..Settings::for_profile(Profile::Smoke)
    };
    run_with(&config, &settings).unwrap();
    let text = std::fs::read_to_string(out.join("adult").join("summary.json")).unwrap();
    let summary: Summary<Record> = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<&str> = summary
        .records
        .iter()
        .filter(|r| r.epsilon.is_some())
        .map(|r| r.method.as_str())
        .collect();
    keys.dedup();
    assert_eq!(keys, only);
    let bad = Settings {
        only: vec!["dp-cd-nonesuch".to_owned()],
        ..Settings::for_profile(Profile::Smoke)
    };
    let e = run_with(&config, &bad).unwrap_err().to_string();
    assert!(
        e.contains("dp-cd-nonesuch") && e.contains("dp-cd-support"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
