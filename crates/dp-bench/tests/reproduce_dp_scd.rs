//! End-to-end tests of `cargo xtask reproduce dp-scd` (smoke profile): a run stopped after
//! some blocks and resumed gives the same records as an uninterrupted run; a checkpoint of
//! other settings is refused; the problem filter says what it left out.

mod common;

use std::path::Path;

use dp_bench::experiments::dp_scd::{self, RunOptions, Settings};
use dp_bench::experiments::Profile;

use common::{smoke, temp_dir};

/// `summary.json` without what legitimately differs between two runs of the same blocks:
/// the date, the wall time and the measured seconds per run. Everything else (every
/// metric, tuned hyperparameter, curve point and claim) is compared as written, digit for
/// digit.
fn comparable_summary(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("dp-scd/summary.json"))
        .unwrap()
        .lines()
        .filter(|l| {
            !["\"date\"", "\"wall_seconds\"", "\"seconds_per_run\""]
                .iter()
                .any(|k| l.contains(k))
        })
        .map(str::to_owned)
        .collect()
}

const PROBLEMS: [&str; 2] = ["yearpredictionmsd-like/ridge", "website-phishing-svm"];

fn opts(resume: bool, stop: Option<usize>) -> RunOptions {
    RunOptions {
        resume,
        problems: PROBLEMS.iter().map(|s| s.to_string()).collect(),
        stop_after_blocks: stop,
    }
}

#[test]
fn interrupted_and_resumed_run_matches_an_uninterrupted_one() {
    let s = Settings::for_profile(Profile::Smoke);
    let whole = temp_dir("dp-scd-whole");
    dp_scd::run_with_options(&smoke(&whole, 5), &s, &opts(false, None)).unwrap();
    let expected = comparable_summary(&whole);
    assert!(expected.iter().any(|l| l.contains("\"records\"")));

    // Smoke blocks per problem: 6 Fig. 1 records, then (ridge only) 4 Fig. 2 curves and
    // 1 Fig. 3 curve. Stop inside the ridge's Fig. 2, then again inside the second
    // problem, then finish: three processes share the checkpoint.
    let cut = temp_dir("dp-scd-cut");
    let err = dp_scd::run_with_options(&smoke(&cut, 5), &s, &opts(false, Some(7)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("stopped after 7 new blocks"), "{err}");
    assert!(!cut.join("dp-scd/summary.json").exists());
    let err = dp_scd::run_with_options(&smoke(&cut, 5), &s, &opts(true, Some(5)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("stopped after 5 new blocks"), "{err}");
    dp_scd::run_with_options(&smoke(&cut, 5), &s, &opts(true, None)).unwrap();
    let got = comparable_summary(&cut);
    assert_eq!(got.len(), expected.len());
    for (a, b) in got.iter().zip(&expected) {
        assert_eq!(a, b);
    }
    let report = std::fs::read_to_string(cut.join("dp-scd/report.md")).unwrap();
    assert!(
        report.contains("computed by 3 processes") && report.contains("17 in all"),
        "{report}"
    );

    // A resumed run whose blocks are all saved recomputes nothing and loads no data.
    let before = std::fs::read_to_string(cut.join("dp-scd/checkpoint.json")).unwrap();
    dp_scd::run_with_options(&smoke(&cut, 5), &s, &opts(true, None)).unwrap();
    assert_eq!(comparable_summary(&cut), expected);
    let after = std::fs::read_to_string(cut.join("dp-scd/checkpoint.json")).unwrap();
    assert_eq!(
        before.matches("\"fig").count(),
        after.matches("\"fig").count()
    );

    // Another seed is refused, naming the difference; nothing is mixed.
    let err = dp_scd::run_with_options(&smoke(&cut, 6), &s, &opts(true, None))
        .unwrap_err()
        .to_string();
    assert!(err.contains("seed: 5 vs 6"), "{err}");
    // So are other grids.
    let mut other = s.clone();
    other.scd_clips = vec![0.25];
    let err = dp_scd::run_with_options(&smoke(&cut, 5), &other, &opts(true, None))
        .unwrap_err()
        .to_string();
    assert!(err.contains("settings.scd_clips: [0.5] vs [0.25]"), "{err}");
    for d in [whole, cut] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn filtered_run_says_which_problems_and_claims_were_not_run() {
    let s = Settings::for_profile(Profile::Smoke);
    let out = temp_dir("dp-scd-filter");
    let o = RunOptions {
        problems: vec!["website-phishing".into()],
        ..RunOptions::default()
    };
    dp_scd::run_with_options(&smoke(&out, 5), &s, &o).unwrap();
    let text = std::fs::read_to_string(out.join("dp-scd/summary.json")).unwrap();
    let sum: dp_scd::Summary = serde_json::from_str(&text).unwrap();
    assert!(sum
        .records
        .iter()
        .all(|r| r.problem.starts_with("website-phishing/")));
    assert_eq!(
        sum.problems_not_run,
        [
            "yearpredictionmsd-like/ridge",
            "adult/logistic",
            "adult/svm"
        ]
    );
    // Fig. 2 and Fig. 3 need the ridge problem; the SVM claim is checked on phishing only.
    assert_eq!(sum.claims[3].verdict, "not run");
    assert_eq!(sum.claims[4].verdict, "not run");
    assert!(sum.claims[0].verdict.ends_with(" on the problems run"));
    assert!(sum.claims[0]
        .measured
        .starts_with("not run here (--problems): yearpredictionmsd-like/ridge, adult/svm."));
    let report = std::fs::read_to_string(out.join("dp-scd/report.md")).unwrap();
    assert!(report.contains("**Problems not run**"));
    assert!(report.contains("--problems website-phishing"));

    let bad = RunOptions {
        problems: vec!["phishing".into()],
        ..RunOptions::default()
    };
    let err = dp_scd::run_with_options(&smoke(&out, 5), &s, &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown dp-scd problem 'phishing'") && err.contains("adult/svm"),
        "{err}"
    );
    std::fs::remove_dir_all(out).unwrap();
}
