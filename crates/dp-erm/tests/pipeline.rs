//! The pipeline's contract: guarantee within the target and charged bounds, bit-for-bit
//! reproduction with a seed, no seed in the model, the scaling folded in exactly, clear
//! errors for bad input, and regression that no longer fails silently on raw targets.

use dp_erm::accounting::ledger::Charge;
use dp_erm::models::io::{load_csv_data, CsvOptions, Target};
use dp_erm::models::{Dataset, DenseDesign};
use dp_erm::{
    Algorithm, FeatureBounds, LossKind, PenaltyKind, Pipeline, PipelineError, RangeRule,
    TargetBound, Task,
};

fn diabetes() -> Dataset<DenseDesign> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../dp-bench/data/diabetes.csv");
    load_csv_data(path, &CsvOptions::regression(Target::Name("target".into())))
        .unwrap()
        .dataset
}

fn breast_cancer() -> Dataset<DenseDesign> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dp-bench/data/breast_cancer.csv"
    );
    let opts = CsvOptions::classification(Target::Name("diagnosis".into()), "benign", "malignant");
    load_csv_data(path, &opts).unwrap().dataset
}

fn score(r: &dp_erm::FitReport, key: &str) -> f64 {
    r.diagnostics
        .scores
        .iter()
        .find(|(k, _)| k == key)
        .unwrap()
        .1
}

fn auto_regression(eps: f64, seed: u64) -> Pipeline {
    Pipeline::new(Task::Regression, Algorithm::DpCd)
        .privacy(eps, 1e-5)
        .feature_bounds(FeatureBounds::private())
        .target_bound(TargetBound::private())
        .test_fraction(0.2)
        .seed(Some(seed))
}

#[test]
fn the_guarantee_composes_the_charged_bounds_and_the_fit() {
    let d = diabetes();
    let r = auto_regression(1.0, 3).fit(&d).unwrap();
    let g = r.guarantee().unwrap();
    assert!(g.epsilon <= 1.0 && g.delta <= 1e-5, "{g:?}");
    assert!(g.preprocessing_epsilon > 0.0);
    assert!((g.epsilon - (g.preprocessing_epsilon + g.fit.epsilon)).abs() < 1e-12);
    // 2 releases per feature column and 2 for the target, charged in the ledger.
    let em: u64 = g
        .ledger
        .entries()
        .iter()
        .map(|c| match c {
            Charge::ExponentialMechanism { count, .. } => *count,
            _ => 0,
        })
        .sum();
    assert_eq!(em, 2 * 10 + 2);
    assert!(!g.uses_non_private_inputs);
    // The fit itself got what the bounds left.
    let (fe, fd) = r.chosen.fit_budget.unwrap();
    assert!(fe + g.preprocessing_epsilon <= 1.0 && fd + g.preprocessing_delta <= 1e-5);
}

#[test]
fn seeded_runs_reproduce_bit_for_bit_and_the_model_holds_no_seed() {
    let d = diabetes();
    let a = auto_regression(2.0, 11).fit(&d).unwrap();
    let b = auto_regression(2.0, 11).fit(&d).unwrap();
    let (ja, jb) = (
        serde_json::to_string(&a.model).unwrap(),
        serde_json::to_string(&b.model).unwrap(),
    );
    assert_eq!(ja, jb);
    assert!(!ja.contains("seed"), "the model must not hold the seed");
    let c = auto_regression(2.0, 12).fit(&d).unwrap();
    assert_ne!(ja, serde_json::to_string(&c.model).unwrap());
    // The model loads back and predicts the same.
    let back: dp_erm::PipelineModel = serde_json::from_str(&ja).unwrap();
    assert_eq!(
        back.predict(d.x()).unwrap(),
        a.model.predict(d.x()).unwrap()
    );
}

#[test]
fn the_folded_model_predicts_raw_data_as_the_scaled_model_predicts_scaled_data() {
    let d = diabetes();
    let r = Pipeline::new(Task::Regression, Algorithm::Cd)
        .passes(20)
        .feature_bounds(FeatureBounds::NonPrivateFromData)
        .target_bound(TargetBound::NonPrivateFromData)
        .fit(&d)
        .unwrap();
    let m = &r.model;
    let (ylo, yhi) = m.target_range.unwrap();
    let (cy, sy) = ((ylo + yhi) / 2.0, (yhi - ylo) / 2.0);
    let z = m.decision_function(d.x()).unwrap();
    for (i, zi) in z.iter().enumerate().step_by(37) {
        let mut s = m.scaled.intercept.unwrap();
        for (j, &(lo, hi)) in m.feature_ranges.iter().enumerate() {
            let x = d.x().col(j)[i].clamp(lo, hi);
            s += m.scaled.coefficients[j] * (x - (lo + hi) / 2.0) / ((hi - lo) / 2.0);
        }
        let want = sy * s + cy;
        assert!(
            (zi - want).abs() <= 1e-9 * want.abs().max(1.0),
            "row {i}: {zi} vs {want}"
        );
    }
    assert!(m.privacy.is_none());
}

/// Issue 25: `fit --loss squared` on raw diabetes at eps 1 returned MSE 31,122 where
/// the mean gives about 5,300. Through the pipeline with private bounds, no seeded run
/// at eps 1 is worse than 1.25x the mean predictor (the mean of 5 is about 1.02x: the
/// "beats the mean" target is NOT met, see docs/pipeline.md), and the mean of 5 runs
/// is within 1.5x the non-private fit at eps 5.
#[test]
fn regression_on_raw_targets_beats_the_mean() {
    let d = diabetes();
    let mean = |eps: f64| {
        let (mut mse, mut base, mut worst) = (0.0, 0.0, 0.0f64);
        for seed in 0..5 {
            let r = auto_regression(eps, seed).fit(&d).unwrap();
            mse += score(&r, "mse") / 5.0;
            base += score(&r, "mean_mse") / 5.0;
            worst = worst.max(score(&r, "mse") / score(&r, "mean_mse"));
        }
        (mse, base, worst)
    };
    let mut nonpriv = 0.0;
    for seed in 0..5 {
        let r = Pipeline::new(Task::Regression, Algorithm::Cd)
            .passes(200)
            .feature_bounds(FeatureBounds::NonPrivateFromData)
            .target_bound(TargetBound::NonPrivateFromData)
            .test_fraction(0.2)
            .seed(Some(seed))
            .fit(&d)
            .unwrap();
        nonpriv += score(&r, "mse") / 5.0;
    }
    let (mse1, base, worst) = mean(1.0);
    assert!(
        worst < 1.25,
        "eps 1: a run at {worst}x the mean's MSE ({mse1} vs {base})"
    );
    let (mse5, _, _) = mean(5.0);
    assert!(
        mse5 < 1.5 * nonpriv,
        "eps 5: {mse5} vs non-private {nonpriv}"
    );
}

#[test]
fn private_bounds_classify_breast_cancer_as_well_as_hand_bounds() {
    let d = breast_cancer();
    let hand: Vec<f64> = (0..d.n_features())
        .map(|j| {
            let m = d.x().col(j).iter().fold(0.0f64, |a, v| a.max(v.abs()));
            10f64.powf(m.log10().ceil())
        })
        .collect();
    let (mut auto, mut by_hand) = (0.0, 0.0);
    for seed in 0..5 {
        let fit = |b: FeatureBounds| {
            Pipeline::new(Task::Classification, Algorithm::DpCd)
                .privacy(1.0, 1e-5)
                .feature_bounds(b)
                .test_fraction(0.2)
                .seed(Some(seed))
                .fit(&d)
                .unwrap()
        };
        auto += score(&fit(FeatureBounds::private()), "accuracy") / 5.0;
        by_hand += score(&fit(FeatureBounds::PerColumn(hand.clone())), "accuracy") / 5.0;
    }
    assert!(auto >= by_hand, "auto {auto} vs hand {by_hand}");
}

#[test]
fn clipping_is_counted_per_column_and_warned_above_ten_percent() {
    let d = diabetes();
    let r = Pipeline::new(Task::Regression, Algorithm::Cd)
        .feature_bounds(FeatureBounds::Uniform(50.0))
        .target_bound(TargetBound::Declared(400.0))
        .fit(&d)
        .unwrap();
    let c = &r.diagnostics.clipped_per_column;
    assert_eq!(c.len(), 10);
    // age (column 0) runs to 79: some clipped; sex (1, 2) never.
    assert!(c[0] > 0 && c[1] == 0, "{c:?}");
    assert!(r
        .diagnostics
        .warnings
        .iter()
        .any(|w| w.starts_with("feature 0:")));
    assert!(r.diagnostics.privacy.contains("without privacy"));
}

#[test]
fn bad_input_gets_a_clear_error() {
    let d = diabetes();
    let base = || {
        Pipeline::new(Task::Regression, Algorithm::DpCd)
            .privacy(1.0, 1e-5)
            .feature_bounds(FeatureBounds::Uniform(400.0))
            .target_bound(TargetBound::Declared(400.0))
    };
    let msg = |r: Result<dp_erm::FitReport, PipelineError>| r.unwrap_err().to_string();
    assert!(msg(base().privacy(0.0, 1e-5).fit(&d)).contains("epsilon"));
    assert!(msg(base().privacy(1.0, 1.0).fit(&d)).contains("delta"));
    assert!(msg(base()
        .feature_bounds(FeatureBounds::Uniform(f64::NAN))
        .fit(&d))
    .contains("feature bound"));
    assert!(msg(base()
        .feature_bounds(FeatureBounds::PerColumn(vec![1.0; 3]))
        .fit(&d))
    .contains("10 features"));
    assert!(msg(base()
        .feature_bounds(FeatureBounds::Private { share: 1.5 })
        .fit(&d))
    .contains("share"));
    assert!(msg(base().loss(LossKind::Logistic).fit(&d)).contains("classification loss"));
    let no_bounds = Pipeline::new(Task::Regression, Algorithm::DpCd).privacy(1.0, 1e-5);
    assert!(msg(no_bounds.fit(&d)).contains("NonPrivateFromData"));
    let no_target = Pipeline::new(Task::Regression, Algorithm::DpCd)
        .privacy(1.0, 1e-5)
        .feature_bounds(FeatureBounds::Uniform(1.0));
    assert!(msg(no_target.fit(&d)).contains("target_bound"));
    let scd = Pipeline::new(Task::Regression, Algorithm::DpScd)
        .privacy(1.0, 1e-5)
        .penalty(PenaltyKind::L1, 1e-3)
        .feature_bounds(FeatureBounds::Uniform(400.0))
        .target_bound(TargetBound::Declared(400.0));
    assert!(msg(scd.fit(&d)).contains("penalty(l2, lambda)"));
    assert!(msg(Pipeline::new(Task::Regression, Algorithm::Cd)
        .privacy(1.0, 1e-5)
        .feature_bounds(FeatureBounds::Uniform(1.0))
        .target_bound(TargetBound::Declared(1.0))
        .fit(&d))
    .contains("not private"));
    // Prediction: wrong width, non-finite values.
    let m = base().seed(Some(1)).fit(&d).unwrap().model;
    let narrow = DenseDesign::from_row_major(1, 2, &[1.0, 2.0]).unwrap();
    assert!(m
        .predict(&narrow)
        .unwrap_err()
        .to_string()
        .contains("10 features"));
}

#[test]
fn every_algorithm_runs_through_the_pipeline() {
    let d = breast_cancer();
    for (alg, pen, lambda) in [
        (Algorithm::DpCd, PenaltyKind::None, 0.0),
        (Algorithm::DpGcd, PenaltyKind::L1, 1e-3),
        (Algorithm::DpSgd, PenaltyKind::L2, 1e-3),
        (Algorithm::DpScd, PenaltyKind::L2, 1e-3),
    ] {
        let r = Pipeline::new(Task::Classification, alg)
            .privacy(1.0, 1e-5)
            .penalty(pen, lambda)
            .feature_bounds(FeatureBounds::private())
            .test_fraction(0.2)
            .seed(Some(4))
            .fit(&d)
            .unwrap_or_else(|e| panic!("{alg:?}: {e}"));
        let g = r.guarantee().unwrap();
        assert!(g.epsilon <= 1.0, "{alg:?}: {}", g.epsilon);
        assert!(r.model.coefficients.iter().all(|v| v.is_finite()));
        // DP-SCD's is penalised with the coefficients (its dual needs an unweighted ridge).
        assert!(r.chosen.intercept, "{alg:?}");
    }
}

/// Issue 25: at eps 1 on breast_cancer (455 training rows, 30 columns) the fixed 20 %
/// share gave each of the 60 range releases so little epsilon that the ranges were
/// picked almost at random, and 9 of 20 runs were at or below the majority class. The
/// share rule spends up to half of epsilon there; every run now clears the majority.
#[test]
fn private_ranges_at_eps_1_leave_no_run_at_the_majority_class() {
    let d = breast_cancer();
    let mut worst = f64::INFINITY;
    for seed in 0..10 {
        let r = Pipeline::new(Task::Classification, Algorithm::DpCd)
            .privacy(1.0, 1e-5)
            .feature_bounds(FeatureBounds::private())
            .test_fraction(0.2)
            .seed(Some(seed))
            .fit(&d)
            .unwrap();
        let share = r.chosen.feature_share.unwrap();
        // One release per column here (feature_range_rule), whose share may reach 0.6.
        assert!(
            (dp_erm::DEFAULT_FEATURE_SHARE..=dp_erm::MAX_ONE_RELEASE_SHARE).contains(&share),
            "{share}"
        );
        let g = r.guarantee().unwrap();
        assert!(g.preprocessing_epsilon <= share * 1.0 + 1e-12, "{g:?}");
        worst = worst.min(score(&r, "accuracy") - score(&r, "majority_accuracy"));
    }
    assert!(
        worst > 0.05,
        "a run within 0.05 of the majority class: {worst}"
    );
}

/// Issue 25, "classification on breast_cancer-sized data stays at least as accurate as
/// with bounds given by hand": at eps 1 the two releases per column (median and spread,
/// 60 releases on 455 rows) gave 0.849 over 20 seeds against 0.883 with the exact
/// per-column min/max declared by hand; one release per column (`feature_range_rule`:
/// `RangeRule::SignedMedian` at share 0.6) gives 0.899. Fails on the old rule.
#[test]
fn private_ranges_at_eps_1_are_as_accurate_as_the_exact_min_max_on_breast_cancer() {
    let d = breast_cancer();
    let p = d.n_features();
    let minmax: Vec<(f64, f64)> = (0..p)
        .map(|j| {
            let c = d.x().col(j);
            let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        })
        .collect();
    let mean_accuracy = |fb: FeatureBounds| {
        let mut acc = 0.0;
        for seed in 0..20 {
            let r = Pipeline::new(Task::Classification, Algorithm::DpCd)
                .privacy(1.0, 1e-5)
                .feature_bounds(fb.clone())
                .test_fraction(0.2)
                .seed(Some(seed))
                .fit(&d)
                .unwrap();
            if fb == FeatureBounds::private() {
                assert_eq!(r.chosen.feature_range_rule, Some(RangeRule::SignedMedian));
                // p releases charged, not 2p.
                let charged: u64 = r
                    .guarantee()
                    .unwrap()
                    .ledger
                    .entries()
                    .iter()
                    .filter_map(|c| match c {
                        Charge::ExponentialMechanism { count, .. } => Some(*count),
                        _ => None,
                    })
                    .sum();
                assert_eq!(charged, p as u64);
            }
            acc += score(&r, "accuracy") / 20.0;
        }
        acc
    };
    let auto = mean_accuracy(FeatureBounds::private());
    let hand = mean_accuracy(FeatureBounds::Ranges(minmax));
    assert!(auto >= hand, "private ranges {auto} < hand min/max {hand}");
}

/// The rule of `FeatureBounds::private()`'s ranges is a function of public quantities:
/// one release per column only for classification where the two-release rule is
/// unreliable; a rule named in the grid is kept.
#[test]
fn the_range_rule_follows_the_task_and_the_reliability_of_two_releases() {
    use dp_erm::{feature_range_rule, BoundGrid};
    let g = BoundGrid::default();
    let c = Task::Classification;
    let rule = |task, eps, n| feature_range_rule(task, eps, 1e-5, n, 30, None, &g).unwrap();
    assert_eq!(rule(c, 1.0, 455), RangeRule::SignedMedian);
    assert_eq!(rule(c, 5.0, 455), RangeRule::MedianSpread);
    assert_eq!(rule(c, 1.0, 100_000), RangeRule::MedianSpread);
    assert_eq!(rule(Task::Regression, 1.0, 455), RangeRule::MedianSpread);
    let named = BoundGrid {
        rule: RangeRule::AbsMedian,
        ..g
    };
    assert_eq!(
        feature_range_rule(c, 5.0, 1e-5, 455, 30, None, &named).unwrap(),
        RangeRule::AbsMedian
    );
}

#[test]
fn the_share_rule_is_the_smallest_reliable_share_within_its_range() {
    use dp_erm::{feature_share_rule, BoundGrid, DEFAULT_FEATURE_SHARE, MAX_FEATURE_SHARE};
    let g = BoundGrid::default();
    // Plenty of rows: the minimum share is reliable.
    let big = feature_share_rule(1.0, 1e-5, 1_000_000, 30, None, &g).unwrap();
    assert_eq!(big, DEFAULT_FEATURE_SHARE);
    // breast_cancer's size at eps 1: even half of epsilon is not enough, so the most.
    let bc = feature_share_rule(1.0, 1e-5, 455, 30, None, &g).unwrap();
    assert_eq!(bc, MAX_FEATURE_SHARE);
    // In between, strictly inside the range, and smaller with a larger budget.
    let mid = feature_share_rule(5.0, 1e-5, 455, 30, None, &g).unwrap();
    let more = feature_share_rule(8.0, 1e-5, 455, 30, None, &g).unwrap();
    assert!(
        DEFAULT_FEATURE_SHARE < mid && mid < MAX_FEATURE_SHARE,
        "{mid}"
    );
    assert!(more < mid, "{more} vs {mid}");
    // The target's share leaves room for the fit.
    let t = feature_share_rule(1.0, 1e-5, 455, 30, Some(0.6), &g).unwrap();
    assert!(t + 0.6 < 1.0, "{t}");
}

/// Issue 25: a budget too small for the data gave a majority-class model with no word.
/// The pipeline's result now carries the typed warning (and its text in `chosen`).
#[test]
fn a_budget_too_small_for_the_data_is_a_typed_warning() {
    use dp_erm::optim::FitWarning;
    let d = breast_cancer();
    let fit = |eps: f64| {
        Pipeline::new(Task::Classification, Algorithm::DpCd)
            .privacy(eps, 1e-5)
            .feature_bounds(FeatureBounds::private())
            .test_fraction(0.2)
            .seed(Some(1))
            .fit(&d)
            .unwrap()
    };
    let small = fit(0.1);
    let w = small
        .warnings
        .iter()
        .find(|w| matches!(w, FitWarning::BudgetTooSmall { used: 2, .. }))
        .expect("BudgetTooSmall at eps 0.1 on 455 rows");
    assert!(small.chosen.warnings.contains(&w.to_string()));
    // One sentence, no run of spaces left by a broken line continuation.
    assert!(!w.to_string().contains("  "), "{w}");
    let large = fit(5.0);
    assert!(
        !large
            .warnings
            .iter()
            .any(|w| matches!(w, FitWarning::BudgetTooSmall { .. })),
        "{:?}",
        large.warnings
    );
}

/// Issue 25: DP-GCD, DP-SGD and DP-SCD ran fixed library settings (10 passes, step 0.5,
/// clip 1, batch 64 or 1) through the pipeline, not the no-tuning rules of
/// `dp_optim::auto`; they now take the rules for whatever the caller leaves unset.
#[test]
fn every_private_algorithm_takes_its_no_tuning_rules() {
    let d = breast_cancer();
    for (alg, pen, rule) in [
        (Algorithm::DpGcd, PenaltyKind::L1, "dp_gcd_defaults"),
        (Algorithm::DpSgd, PenaltyKind::L2, "dp_sgd_defaults"),
        (Algorithm::DpScd, PenaltyKind::L2, "dp_scd_defaults"),
    ] {
        let fit = |p: Pipeline| {
            p.privacy(1.0, 1e-5)
                .penalty(pen, 1e-3)
                .feature_bounds(FeatureBounds::Uniform(5000.0))
                .test_fraction(0.2)
                .seed(Some(2))
                .fit(&d)
                .unwrap()
        };
        let r = fit(Pipeline::new(Task::Classification, alg));
        assert!(r.chosen.note.contains(rule), "{alg:?}: {}", r.chosen.note);
        assert!(r.chosen.given.is_empty());
        let n = r.diagnostics.n_train;
        if alg == Algorithm::DpSgd {
            // Batches of round(sqrt(n_train)) rows.
            let b = (n as f64).sqrt().round() as u64;
            assert_eq!(r.chosen.batch_size, Some(b), "{alg:?}");
        }
        if alg == Algorithm::DpScd {
            // Batches of ceil(n_train / 4) rows (shuffled passes, hidden duals).
            assert_eq!(r.chosen.batch_size, Some(n.div_ceil(4) as u64));
        }
        // What the caller gives wins over the rule.
        let given = fit(Pipeline::new(Task::Classification, alg).passes(3).clip(0.7));
        assert_eq!((given.chosen.passes, given.chosen.clip), (3, Some(0.7)));
    }
}

/// Issue 25: at eps 0.1 on diabetes's 354 training rows every range release has far too
/// little epsilon, and the fit's MSE was thousands of times the mean's with only a string
/// note; the result now carries a typed warning naming both ranges.
#[test]
fn unreliable_private_ranges_are_a_typed_warning() {
    use dp_erm::optim::FitWarning;
    let d = diabetes();
    let r = auto_regression(0.1, 1).fit(&d).unwrap();
    for of in ["feature", "target"] {
        assert!(
            r.warnings.iter().any(|w| matches!(
                w,
                FitWarning::UnreliableRanges { of: o, margin, needed, .. } if o == of && margin < needed
            )),
            "{of}: {:?}",
            r.warnings
        );
    }
    let big = auto_regression(50.0, 1).fit(&d).unwrap();
    assert!(!big
        .warnings
        .iter()
        .any(|w| matches!(w, FitWarning::UnreliableRanges { .. })));
}

/// Issue 25: DP-SCD through the pipeline was broken, not mistuned: on breast_cancer at
/// eps 5 it scored 0.43-0.59 (the majority class is 0.63-0.65) and on diabetes its MSE
/// was 1e4-7e4 times the mean's. Causes (measured, `docs/defaults.md`): the released,
/// noise-dominated dual variables steered the steps; the clip 1 was thousands of times
/// the dual steps (the noise scales with it); no intercept and uncentred features. With
/// hidden duals (`DualNoise::Hidden`), the clip on the steps' scale and a penalised
/// intercept, the mean over 3 seeds must clear the majority class by 0.15 and the mean's
/// MSE by 20 %. Failed before (this test run against the code of b227b78 on
/// 2026-12-02): `accuracy 0.5380116959064327, majority 0.652046783625731`.
#[test]
fn dp_scd_through_the_pipeline_beats_the_majority_class_and_the_mean_at_eps_5() {
    let bc = breast_cancer();
    let (mut acc, mut maj) = (0.0, 0.0);
    for seed in 0..3 {
        let r = Pipeline::new(Task::Classification, Algorithm::DpScd)
            .privacy(5.0, 1e-5)
            .penalty(PenaltyKind::L2, 1e-3)
            .feature_bounds(FeatureBounds::private())
            .test_fraction(0.2)
            .seed(Some(seed))
            .fit(&bc)
            .unwrap();
        acc += score(&r, "accuracy") / 3.0;
        maj += score(&r, "majority_accuracy") / 3.0;
    }
    assert!(acc > maj + 0.15, "accuracy {acc}, majority {maj}");
    let d = diabetes();
    let (mut mse, mut base) = (0.0, 0.0);
    for seed in 0..3 {
        let r = Pipeline::new(Task::Regression, Algorithm::DpScd)
            .privacy(5.0, 1e-5)
            .penalty(PenaltyKind::L2, 1e-3)
            .feature_bounds(FeatureBounds::private())
            .target_bound(TargetBound::private())
            .test_fraction(0.2)
            .seed(Some(seed))
            .fit(&d)
            .unwrap();
        mse += score(&r, "mse") / 3.0;
        base += score(&r, "mean_mse") / 3.0;
    }
    assert!(
        mse < 0.8 * base,
        "mse {mse}, the mean's {base}: ratio {}",
        mse / base
    );
    // At eps 0.1 (where it was an error: the moments accountant could not calibrate)
    // it returns a model, and one that says the budget is too small for the data.
    use dp_erm::optim::FitWarning;
    let r = Pipeline::new(Task::Classification, Algorithm::DpScd)
        .privacy(0.1, 1e-5)
        .penalty(PenaltyKind::L2, 1e-3)
        .feature_bounds(FeatureBounds::private())
        .test_fraction(0.2)
        .seed(Some(0))
        .fit(&bc)
        .unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, FitWarning::BudgetTooSmall { .. })),
        "{:?}",
        r.warnings
    );
}

/// `fit_owned` (the front ends' path: a dense design clipped and scaled in place, the
/// intercept column appended in the room its buffer keeps) gives the report of `fit`
/// bit for bit, in every configuration that reaches step 3 differently: with and
/// without an intercept, the dual algorithms' row scale, a support bound, private
/// bounds, a test split (the training set kept for the scores), row normalisation, a
/// regression target; and for a sparse design.
#[test]
fn fit_owned_reports_what_fit_reports() {
    fn same<D: dp_erm::PipelineDesign>(pl: &Pipeline, d: &Dataset<D>, what: &str) {
        let mut a = pl.fit(d).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut b = pl.fit_owned(d.clone()).unwrap();
        a.diagnostics.solver_seconds = 0.0;
        b.diagnostics.solver_seconds = 0.0;
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}");
    }
    let bc = breast_cancer();
    let ranges = FeatureBounds::Ranges(
        (0..bc.n_features())
            .map(|j| {
                let col = bc.x().col(j);
                let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                // narrower than the data, so that some values are clipped
                (lo, lo + 0.8 * (hi - lo))
            })
            .collect(),
    );
    let classify = |alg| {
        Pipeline::new(Task::Classification, alg)
            .privacy(1.0, 1e-5)
            .seed(Some(7))
            .feature_bounds(ranges.clone())
    };
    let configurations = [
        ("dp-cd", classify(Algorithm::DpCd)),
        (
            "dp-cd without intercept",
            classify(Algorithm::DpCd).intercept(false),
        ),
        (
            "dp-scd",
            classify(Algorithm::DpScd).penalty(PenaltyKind::L2, 1e-3),
        ),
        ("dp-sgd", classify(Algorithm::DpSgd)),
        (
            "dp-cd, support bound",
            classify(Algorithm::DpCd).max_nonzeros(10),
        ),
        (
            "dp-cd, private bounds",
            classify(Algorithm::DpCd).feature_bounds(FeatureBounds::private()),
        ),
        (
            "dp-cd, test split",
            classify(Algorithm::DpCd).test_fraction(0.2),
        ),
        (
            "dp-cd, normalised rows",
            classify(Algorithm::DpCd).normalize_rows(true),
        ),
    ];
    for (what, pl) in &configurations {
        same(pl, &bc, what);
    }
    // Some values were clipped (the ranges are narrower than the data).
    let r = classify(Algorithm::DpCd).fit_owned(bc.clone()).unwrap();
    assert!(r.diagnostics.clipped_per_column.iter().sum::<usize>() > 0);
    let d = diabetes();
    same(&auto_regression(1.0, 3), &d, "regression, private bounds");
    // A sparse design takes the borrowed path's code: the same report.
    let sparse = Dataset::new(
        dp_erm::models::SparseDesign::from_dense(d.x()),
        d.y().to_vec(),
    )
    .unwrap();
    let pl = Pipeline::new(Task::Regression, Algorithm::DpCd)
        .privacy(1.0, 1e-5)
        .feature_bounds(FeatureBounds::Uniform(0.3))
        .target_bound(TargetBound::Declared(400.0))
        .seed(Some(2));
    same(&pl, &sparse, "sparse");
}
