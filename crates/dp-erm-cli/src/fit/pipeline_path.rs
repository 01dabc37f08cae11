//! `dp-erm fit` through the library pipeline (`dp_erm::Pipeline`): every fit. A CSV file
//! is a dense design, a LIBSVM file a sparse one (`dp_models::SparseDesign`, kept
//! sparse by the pipeline: declared bounds, no centring; `--feature-bound auto` is
//! refused there, saying why). `--normalize-rows` and `--max-nonzeros` are pipeline
//! options (`Pipeline::normalize_rows`, `Pipeline::max_nonzeros`).
//!
//! The pipeline estimates (or takes) the per-column feature ranges and the target range,
//! clips and scales record by record, fits, and folds the scaling into a model that
//! predicts on raw rows in the user's units. The private ranges are charged to the same
//! ledger as the fit, and the printed guarantee composes both (docs/pipeline.md). This
//! module only maps the command line onto the pipeline and prints its report in the
//! CLI's order: guarantee, scores, what was chosen, non-private diagnostics.
//!
//! The model file has its own kind (`"dp-erm pipeline model v1"`) and holds the
//! [`dp_erm::PipelineModel`] with the public schema of the data (a CSV's feature names,
//! label column and label texts; a LIBSVM file's format and, in the model, its declared
//! width); `predict` recognises it by its kind.
//!
//! # What is public
//! Every value that shapes the release plan is public: a CSV's columns are its header
//! row (a schema, not a record); a LIBSVM file's width is the declared `--n-features`,
//! never the largest index present (docs/privacy/threat-model.md); `n` is public under
//! replace-one; `--feature-bound`, `--target-bound` and `--max-nonzeros` are declared
//! without looking at the data. The neighbouring relation, the steps and their proofs
//! are the pipeline's (`dp_erm::pipeline`).

use super::{
    check_labels, check_predict_format, check_unique_names, default_threads, load, num,
    predictions_csv_for, write_atomic, Algorithm, BoundArg, Data, FitArgs, LossArg, PenaltyArg,
    PredictArgs, Report,
};
use crate::input::Format;
use anyhow::{bail, Context, Result};
use dp_erm::{
    FeatureBounds, LossKind, PenaltyKind, Pipeline, PipelineDesign, PipelineModel, TargetBound,
    Task, DEFAULT_FEATURE_SHARE, DEFAULT_TARGET_SHARE,
};
use dp_models::io::{load_libsvm, read_csv_for_prediction, FeatureCount, LabelMap};
use dp_models::metrics::{accuracy, log_loss, mean_squared_error};
use dp_models::{Dataset, Design};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The kind of a model file written through the pipeline.
pub(super) const PIPELINE_KIND: &str = "dp-erm pipeline model v1";

/// A model file written through the pipeline: the releasable [`PipelineModel`] (ranges,
/// coefficients and intercept in the user's units, the guarantee with its ledger; no
/// seed) and the public schema needed to read new data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineFile {
    /// Always "dp-erm pipeline model v1".
    pub kind: String,
    /// File format of the training data (`predict` reads new data in it).
    pub format: Format,
    /// The loss the model was fitted with.
    pub loss: LossArg,
    /// The penalty.
    pub penalty: PenaltyArg,
    /// Penalty strength.
    pub lambda: f64,
    /// Feature column names, in the model's coefficient order (CSV; `None` for LIBSVM,
    /// whose features are the indices 1 ..= p).
    pub feature_names: Option<Vec<String>>,
    /// The label column's name (CSV).
    pub target: Option<String>,
    /// Label texts of a classification CSV (positive, negative).
    pub labels: Option<(String, String)>,
    /// The declared public feature bound `|x| <= B` (`--feature-bound B`); `None` for
    /// private or non-private ranges. The model's `feature_ranges` hold what `predict`
    /// clips to in every case.
    #[serde(default)]
    pub feature_bound: Option<f64>,
    /// The releasable model, predicting on raw rows.
    pub model: PipelineModel,
}

/// True when `text` is a model file written through the pipeline (by its kind).
pub(super) fn is_pipeline_file(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .is_some_and(|k| k == PIPELINE_KIND)
}

pub(super) fn loss_kind(arg: LossArg) -> LossKind {
    match arg {
        LossArg::Logistic => LossKind::Logistic,
        LossArg::Squared => LossKind::Squared,
        LossArg::SquaredHinge => LossKind::SquaredHinge,
        LossArg::Huber => LossKind::Huber,
    }
}

pub(super) fn penalty_kind(arg: PenaltyArg) -> PenaltyKind {
    match arg {
        PenaltyArg::None => PenaltyKind::None,
        PenaltyArg::L1 => PenaltyKind::L1,
        PenaltyArg::L2 => PenaltyKind::L2,
        PenaltyArg::ElasticNet => PenaltyKind::ElasticNet,
    }
}

fn algorithm(arg: Algorithm) -> dp_erm::Algorithm {
    match arg {
        Algorithm::DpCd => dp_erm::Algorithm::DpCd,
        Algorithm::DpGcd => dp_erm::Algorithm::DpGcd,
        Algorithm::DpSgd => dp_erm::Algorithm::DpSgd,
        Algorithm::Cd => dp_erm::Algorithm::Cd,
        Algorithm::DpScd => dp_erm::Algorithm::DpScd,
        Algorithm::Sdca => dp_erm::Algorithm::Sdca,
    }
}

/// The checks of the pipeline path, each error naming the flag and the fix; all run
/// before the data are read.
fn check_args(args: &FitArgs, format: Format) -> Result<()> {
    let what = match (args.feature_bound, args.target_bound) {
        (Some(BoundArg::Auto), _) => "--feature-bound auto",
        (_, Some(_)) => "--target-bound",
        _ => "this fit",
    };
    if format != Format::Csv && args.feature_bound == Some(BoundArg::Auto) {
        bail!(
            "{what} supports CSV input only: a LIBSVM file is read as a sparse design, \
             and a private range is a private median and spread of its column; a sparse \
             column, mostly zeros, has median 0 and spread 0, so the released range would \
             clip every non-zero value away. For LIBSVM input declare a public bound with \
             --feature-bound B (a number, chosen without looking at the data), or pass \
             --normalize-rows (every value is then in [-1, 1])"
        );
    }
    let classification = args.loss.classification();
    if classification && args.target_bound.is_some() {
        bail!(
            "--target-bound applies to regression (--loss squared or huber): with --loss \
             {} the labels are the two classes, which need no bound; drop --target-bound",
            loss_kind(args.loss)
        );
    }
    let private = !matches!(args.algorithm, Algorithm::Cd | Algorithm::Sdca);
    let dual = matches!(args.algorithm, Algorithm::DpScd | Algorithm::Sdca);
    // What is missing or misplaced is listed at once, so that a new user does not meet
    // one problem per run.
    let mut missing: Vec<String> = Vec::new();
    if private
        && !dual
        && args.feature_bound.is_none()
        && !args.non_private_constants_from_data
        && !args.normalize_rows
    {
        missing.push(
            "the step sizes need smoothness constants: declare a public bound with \
             --feature-bound B (|x_ij| <= B, chosen without looking at the data), estimate \
             per-column ranges privately with --feature-bound auto, or accept ranges \
             computed from the data without privacy with --non-private-constants-from-data"
                .into(),
        );
    }
    match (format, args.input.n_features) {
        (Format::Csv, Some(p)) => missing.push(format!(
            "--n-features {p} applies to LIBSVM files only: a CSV file's features are the \
             columns of its header row (a public schema)"
        )),
        (Format::Libsvm, n_features) => {
            if args.input.target.is_some() {
                missing.push(
                    "--target applies to CSV files only (LIBSVM labels come first on each \
                     line)"
                        .into(),
                );
            }
            if args.input.positive.is_some() || args.input.negative.is_some() {
                missing.push(
                    "--positive / --negative apply to CSV files only: LIBSVM labels are the \
                     numbers written (+1 / -1 for classification)"
                        .into(),
                );
            }
            if n_features.is_none() {
                missing.push(crate::fit::NEEDS_N_FEATURES.into());
            }
        }
        (Format::Csv, None) => {}
    }
    match missing.as_slice() {
        [] => {}
        [one] => bail!("{one}"),
        many => bail!(
            "{} things to fix in the flags of this fit:\n{}",
            many.len(),
            many.iter()
                .enumerate()
                .map(|(k, m)| format!("  {}. {m}", k + 1))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
    if let Some(BoundArg::Value(b)) = args.feature_bound {
        // 1e150: the pipeline's limit, so that b^2 and the folded coefficients stay finite.
        if !(b.is_finite() && b > 0.0 && b < 1e150) {
            bail!(
                "invalid --feature-bound {}: the bound must be finite, > 0 and < 1e150, or \
                 `auto`",
                num(b)
            );
        }
    }
    if let Some(BoundArg::Value(y)) = args.target_bound {
        if !(y.is_finite() && y > 0.0 && y < 1e150) {
            bail!(
                "invalid --target-bound {}: the bound must be finite, > 0 and < 1e150, or `auto`",
                num(y)
            );
        }
    }
    if args.non_private_constants_from_data && args.feature_bound.is_some() {
        bail!(
            "--feature-bound and --non-private-constants-from-data exclude each other: the \
             pipeline takes its constants from the (declared, private or non-private) ranges"
        );
    }
    if let Some(k) = args.max_nonzeros {
        if args.algorithm != Algorithm::DpCd {
            bail!(
                "--max-nonzeros applies to --algorithm dp-cd only (its accounting is per \
                 coordinate release)"
            );
        }
        if k == 0 {
            bail!(
                "invalid --max-nonzeros 0: a record must be allowed at least one non-zero feature"
            );
        }
        if intercept(args, format) && k.checked_add(1).is_none() {
            bail!(
                "invalid --max-nonzeros {k}: with --intercept the bound is {k} + 1 (the \
                 intercept column), which overflows"
            );
        }
    }
    if private {
        match (args.epsilon, args.delta) {
            (None, None) => bail!(
                "a private algorithm needs --epsilon and --delta (e.g. --epsilon 1 \
                 --delta 1e-6; delta well below 1 / n, commonly at most 1 / n^2)"
            ),
            (None, Some(_)) => bail!("a private algorithm needs --epsilon (e.g. --epsilon 1)"),
            (Some(_), None) => bail!(
                "a private algorithm needs --delta too (e.g. --delta 1e-6: well below 1 / n, \
                 commonly at most 1 / n^2; the Python estimators' default is min(1e-5, 1 / n^2))"
            ),
            (Some(_), Some(_)) => {}
        }
    }
    if !private && (args.epsilon.is_some() || args.delta.is_some()) {
        bail!("--algorithm cd / sdca is not private: drop --epsilon / --delta, or choose dp-cd, dp-gcd, dp-sgd or dp-scd");
    }
    super::check_lambda(args)?;
    if matches!(args.algorithm, Algorithm::DpScd | Algorithm::Sdca) {
        let name = if args.algorithm == Algorithm::DpScd {
            "dp-scd"
        } else {
            "sdca"
        };
        if args.penalty != PenaltyArg::L2 || args.lambda <= 0.0 {
            bail!(
                "--algorithm {name} solves the dual of an L2-penalised problem, which needs \
                 strong convexity: pass --penalty l2 --lambda L with L > 0 (the paper uses 1e-4)"
            );
        }
        if !matches!(args.loss, LossArg::Squared | LossArg::Logistic) {
            bail!(
                "--algorithm {name} supports --loss squared or logistic (the dual coordinate \
                 steps exist for these losses only)"
            );
        }
    }
    if private
        && dual
        && args.feature_bound.is_none()
        && !args.non_private_constants_from_data
        && !args.normalize_rows
    {
        bail!(
            "DP-SCD needs every row to have L2 norm at most 1: pass --normalize-rows to \
             divide each row by its norm (record by record, no privacy cost), or declare \
             --feature-bound B / auto (the pipeline then scales each row to norm <= 1)"
        );
    }
    if !classification && args.target_bound.is_none() && !non_private_target(args) {
        bail!(
            "regression needs --target-bound auto or --target-bound Y: the targets are \
             clipped to a range and scaled so that the fit sees values of size 1, and the \
             model predicts in your units. `auto` estimates the range privately on {} % of \
             epsilon; Y declares |y| <= Y (chosen without looking at the data)",
            DEFAULT_TARGET_SHARE * 100.0
        );
    }
    if args.threads == Some(0) {
        bail!("invalid --threads 0: at least one piece per sweep");
    }
    Ok(())
}

/// The feature bounds the command line asks for: `--feature-bound B` declares a public
/// bound, `auto` estimates per-column ranges privately; without either, the ranges are
/// the data's min and max **without privacy** — the caller's opt-in by name
/// (`--non-private-constants-from-data`), or a non-private algorithm (cd, sdca), whose
/// fit has no guarantee to lose.
/// With `--normalize-rows` and neither, the pipeline's own public bound of normalised
/// rows (every value in [-1, 1]).
fn feature_bounds(args: &FitArgs) -> Option<FeatureBounds> {
    match args.feature_bound {
        Some(BoundArg::Value(b)) => Some(FeatureBounds::Uniform(b)),
        Some(BoundArg::Auto) => Some(FeatureBounds::private()),
        None if args.normalize_rows && !args.non_private_constants_from_data => None,
        None => Some(FeatureBounds::NonPrivateFromData),
    }
}

/// Whether the fit has an intercept. The pipeline fits one by default; LIBSVM,
/// `--normalize-rows` and `--max-nonzeros` fits only with `--intercept` (as before they
/// ran through the pipeline: with a support bound the intercept column is one more
/// release per record).
fn intercept(args: &FitArgs, format: Format) -> bool {
    let opt_in = format == Format::Libsvm || args.normalize_rows || args.max_nonzeros.is_some();
    if args.intercept {
        true
    } else {
        !(args.no_intercept || opt_in)
    }
}

/// A regression without `--target-bound` takes the targets' min and max **without
/// privacy** where the caller already accepted non-private ranges: by name
/// (`--non-private-constants-from-data`) or with a non-private algorithm (cd, sdca).
fn non_private_target(args: &FitArgs) -> bool {
    args.target_bound.is_none()
        && (args.non_private_constants_from_data
            || matches!(args.algorithm, Algorithm::Cd | Algorithm::Sdca))
}

/// Runs `fit` through the pipeline; writes the model file and returns the report.
pub(super) fn fit_report(args: &FitArgs, format: Format) -> Result<Report> {
    check_args(args, format)?;
    let labels = args.input.positive.clone().zip(args.input.negative.clone());
    // The loaders' errors name the file, the line, the column and the value.
    match load(
        &args.input.data,
        format,
        args.input.n_features,
        &args.input.target,
        labels.clone(),
    )? {
        Data::Dense(data, names, target) => {
            check_unique_names(&args.input.data, &names, &target)?;
            check_labels(&args.input.data, args.loss, labels.is_some(), data.y())?;
            fit_with(args, format, data, names, Some(target), labels)
        }
        Data::Sparse(data) => {
            check_labels(&args.input.data, args.loss, false, data.y())?;
            // LIBSVM features are the indices 1 ..= p (the declared --n-features).
            let names = (1..=data.n_features())
                .map(|j| format!("feature {j}"))
                .collect();
            fit_with(args, format, data, names, None, labels)
        }
    }
}

/// The pipeline on a loaded design (dense from a CSV, sparse from a LIBSVM file), handed
/// over to it ([`Pipeline::fit_owned`]: a dense design is clipped and scaled in place).
fn fit_with<D: PipelineDesign>(
    args: &FitArgs,
    format: Format,
    data: Dataset<D>,
    names: Vec<String>,
    target: Option<String>,
    labels: Option<(String, String)>,
) -> Result<Report> {
    let task = if args.loss.classification() {
        Task::Classification
    } else {
        Task::Regression
    };
    let threads = args
        .threads
        .unwrap_or_else(|| default_threads(data.n_samples(), !D::SPARSE));
    let with_intercept = intercept(args, format);
    let mut pipe = Pipeline::new(task, algorithm(args.algorithm))
        .loss(loss_kind(args.loss))
        .penalty(penalty_kind(args.penalty), args.lambda)
        .seed(args.seed)
        .threads(threads)
        .feature_names(names.clone())
        .normalize_rows(args.normalize_rows)
        .intercept(with_intercept);
    if let Some(fb) = feature_bounds(args) {
        pipe = pipe.feature_bounds(fb);
    }
    if let Some(k) = args.max_nonzeros {
        pipe = pipe.max_nonzeros(k);
    }
    if let (Some(e), Some(d)) = (args.epsilon, args.delta) {
        pipe = pipe.privacy(e, d);
    }
    match args.target_bound {
        Some(BoundArg::Auto) => pipe = pipe.target_bound(TargetBound::private()),
        Some(BoundArg::Value(y)) => pipe = pipe.target_bound(TargetBound::Declared(y)),
        None if task == Task::Regression && non_private_target(args) => {
            pipe = pipe.target_bound(TargetBound::NonPrivateFromData)
        }
        None => {}
    }
    if let Some(f) = args.test_fraction {
        pipe = pipe.test_fraction(f);
    }
    if let Some(v) = args.passes {
        pipe = pipe.passes(v);
    }
    if let Some(v) = args.step {
        pipe = pipe.step_scale(v);
    }
    if let Some(v) = args.clip {
        pipe = pipe.clip(v);
    }
    if let Some(v) = args.batch_size {
        pipe = pipe.batch_size(v);
    }
    let fit = pipe
        .fit_owned(data)
        .context("the pipeline (private bounds, clipping and scaling, fit) failed")?;

    // 1. The guarantee.
    let mut out = Report::default();
    let n_train = fit.diagnostics.n_train;
    match fit.guarantee() {
        Some(g) => {
            out.push("epsilon", g.epsilon);
            out.push("delta", g.delta);
            out.push("adjacency", g.adjacency.name());
            out.push("accounting", g.how.clone());
            if let Some(dp_optim::SolverPlan::DpCd(plan)) = &g.plan {
                if let Some(charged) = plan.charged_releases {
                    out.push(
                        "charged_releases",
                        format!(
                            "{charged} of {} coordinate releases (at most --max-nonzeros \
                             per record and pass)",
                            plan.releases
                        ),
                    );
                }
            }
            out.push("bounds_epsilon", g.preprocessing_epsilon);
            out.push("bounds_delta", g.preprocessing_delta);
            out.push("fit_epsilon", g.fit.epsilon);
            out.push("fit_delta", g.fit.delta);
            out.push(
                "ledger",
                format!(
                    "{} charges on one ledger, the bounds' releases first, then the fit's \
                     (the model file holds them)",
                    g.ledger.entries().len()
                ),
            );
            out.push("uses_non_private_inputs", g.uses_non_private_inputs);
            // The delta the user asked for (the guarantee's is a hair below it).
            let asked = args.delta.unwrap_or(g.delta);
            if asked * n_train as f64 >= 1.0 {
                out.warn(format!(
                    "delta = {} is at least 1/n = 1/{n_train}: a mechanism may then \
                     publish one whole record and still meet (epsilon, delta); choose \
                     delta well below 1/n (e.g. 1/n^2 = {})",
                    num(asked),
                    num(1.0 / (n_train as f64 * n_train as f64))
                ));
            }
        }
        None => out.push("privacy", "none: this algorithm is not private"),
    }
    // 2. The scores (non-private).
    if fit.diagnostics.n_test > 0 {
        out.push("n_test", fit.diagnostics.n_test);
        for (k, v) in &fit.diagnostics.scores {
            out.push(k, *v);
        }
        out.push(
            "score_privacy",
            "held-out scores are computed from the data without privacy: not covered by the guarantee",
        );
    } else {
        out.push(
            "score",
            "none: pass --test-fraction F to hold out rows and score on them",
        );
    }
    // 3. What was chosen.
    let c = &fit.chosen;
    out.push("algorithm", c.algorithm.as_str());
    out.push("loss", c.loss.as_str());
    out.push(
        "penalty",
        format!("{} (lambda = {})", c.penalty, num(c.lambda)),
    );
    let mut hyper = if c.algorithm == dp_erm::Algorithm::DpGcd {
        format!("passes {} (greedy iterations)", c.passes)
    } else {
        format!("passes {}", c.passes)
    };
    if let Some(s) = c.step_scale {
        hyper.push_str(&format!(", step scale {}", num(s)));
    }
    if let Some(v) = c.clip {
        hyper.push_str(&format!(", clip {}", num(v)));
    }
    if let Some(b) = c.batch_size {
        hyper.push_str(&format!(", batch size {b}"));
    }
    hyper.push_str(&format!(", threads {threads}"));
    hyper.push_str(&if c.given.is_empty() {
        format!(" (chosen: {})", c.note)
    } else {
        format!(" (given: {}; the others: {})", c.given.join(", "), c.note)
    });
    out.push("hyperparameters", hyper);
    if let Some((e, d)) = c.fit_budget {
        out.push(
            "fit_budget",
            format!(
                "the fit was calibrated to epsilon {}, delta {} (what the bounds left)",
                num(e),
                num(d)
            ),
        );
    }
    out.push("n_train", n_train);
    out.push("p", names.len());
    let model = &fit.model;
    // Per column, in the file's column order.
    let ranges_json = |ranges: &[(f64, f64)]| {
        names
            .iter()
            .zip(ranges)
            .map(|(name, (lo, hi))| (name.clone(), json!([lo, hi])))
            .collect::<Vec<_>>()
    };
    if args.normalize_rows {
        out.push(
            "normalize_rows",
            "every row divided by its Euclidean norm before the clipping (record by record; \
             predict does the same)",
        );
    }
    match args.feature_bound {
        Some(BoundArg::Value(b)) => out.push(
            "feature_bound",
            format!("|x| <= {} (declared public bound)", num(b)),
        ),
        None if fit.model.feature_bounds_source == dp_erm::BoundSource::Declared => out.push(
            "feature_bound",
            "|x| <= 1 after --normalize-rows (public: a normalised row has no value beyond 1)",
        ),
        None => out.push(
            "feature_bound",
            "none: each column's range is its min and max on the training rows, computed \
             WITHOUT privacy (--non-private-constants-from-data, or a non-private algorithm)",
        ),
        Some(BoundArg::Auto) => out.push(
            "feature_bound",
            format!(
                "private per-column ranges on {:.1} % of epsilon (the share rule of \
                 dp_erm::feature_share_rule: 20-50 %, up to 60 % with one release per column, \
                 more where the rows are few; {}; charged, included in bounds_epsilon)",
                fit.chosen.feature_share.unwrap_or(DEFAULT_FEATURE_SHARE) * 100.0,
                match fit.chosen.feature_range_rule {
                    Some(dp_erm::RangeRule::SignedMedian) => {
                        "one private median c per column, range c +- |c| (dp_erm::feature_range_rule: \
                         two releases per column would be unreliable at this budget)"
                    }
                    Some(dp_erm::RangeRule::AbsMedian) => {
                        "one private median m of |x| per column, range +- 3 m"
                    }
                    _ => "a private median and spread per column",
                }
            ),
        ),
    }
    out.push_ordered("feature_ranges", ranges_json(&model.feature_ranges));
    if let Some((lo, hi)) = model.target_range {
        out.push(
            "target_bound",
            match args.target_bound {
                Some(BoundArg::Value(y)) => {
                    format!("|y| <= {} (declared public bound)", num(y))
                }
                None => "none: the targets' min and max on the training rows, computed \
                         WITHOUT privacy (--non-private-constants-from-data, or a \
                         non-private algorithm)"
                    .to_string(),
                Some(BoundArg::Auto) => format!(
                    "private range on {} % of epsilon (charged, included in bounds_epsilon)",
                    fit.chosen.target_share.unwrap_or(DEFAULT_TARGET_SHARE) * 100.0
                ),
            },
        );
        out.push("target_range", json!([lo, hi]));
    }
    match model.intercept {
        Some(b) => out.push("intercept", b),
        None => out.push("intercept", "none"),
    }
    // The pipeline says only that none was asked for; say why this command asked for
    // none, and how to get one.
    let note = if !with_intercept && !args.no_intercept {
        format!(
            "none: {} fits have no intercept unless you pass --intercept (one more \
             coordinate of the same private solver; with --max-nonzeros the intercept's \
             column is one more release per record)",
            if format == Format::Libsvm {
                "LIBSVM"
            } else if args.normalize_rows {
                "--normalize-rows"
            } else {
                "--max-nonzeros"
            }
        )
    } else if args.no_intercept {
        "none: turned off by --no-intercept".to_owned()
    } else {
        c.intercept_note.clone()
    };
    out.push("intercept_note", note);
    out.push(
        "predict",
        "the model takes raw rows: predict clips each column to its range and answers in your units",
    );
    out.push("model_out", args.model_out.display().to_string());
    // Every warning the pipeline's result carries (the public ones, the typed ones of
    // the rules and the solver, the non-private diagnostics), whatever their kind.
    for w in fit.all_warnings() {
        out.warn(w);
    }
    // 4. Diagnostics (non-private).
    let d = &fit.diagnostics;
    let p = names.len();
    let total: usize = d.clipped_per_column.iter().sum();
    out.push(
        "clipped",
        match args.feature_bound {
            Some(BoundArg::Value(b)) => format!(
                "{total} of {} values clipped to the declared bound |x| <= {} (training rows; \
                 a count from the data, not private: do not publish)",
                n_train * p,
                num(b)
            ),
            _ => format!(
                "{total} of {} training values clipped to their feature ranges (a count from \
                 the data, not private: do not publish)",
                n_train * p
            ),
        },
    );
    let per = names
        .iter()
        .zip(&d.clipped_per_column)
        .map(|(name, &k)| (name.clone(), json!(k)))
        .collect();
    out.push_ordered("clipped_per_column", per);
    if let (Some(c), Some(k)) = (d.projected_records, args.max_nonzeros) {
        out.push(
            "projected",
            format!(
                "{c} of {n_train} records had more than --max-nonzeros {k} non-zero features \
                 and kept their {k} largest in magnitude (a count from the data, not \
                 private: do not publish)"
            ),
        );
    }
    if let (Some(k), Some((lo, hi))) = (d.target_clipped, model.target_range) {
        out.push(
            "target_clipped",
            format!(
                "{k} of {n_train} training targets clipped to [{}, {}] (a count from the data, \
                 not private: do not publish)",
                num(lo),
                num(hi)
            ),
        );
    }
    out.push("diagnostics_privacy", d.privacy.clone());
    out.push("solver_seconds", d.solver_seconds);
    if args.seed.is_some() {
        out.push(
            "note",
            "--seed given: the run is reproducible, and the seed replays the noise; it is not in the model file, keep it secret",
        );
    }

    let file = PipelineFile {
        kind: PIPELINE_KIND.into(),
        format,
        loss: args.loss,
        penalty: args.penalty,
        lambda: args.lambda,
        feature_names: (format == Format::Csv).then_some(names),
        target,
        labels,
        feature_bound: match args.feature_bound {
            Some(BoundArg::Value(b)) => Some(b),
            _ => None,
        },
        model: fit.model,
    };
    let text = serde_json::to_string_pretty(&file)?;
    write_atomic(&args.model_out, text.as_bytes())?;
    Ok(out)
}

/// `predict` with a pipeline model file: raw rows in, predictions in the user's units
/// (the label texts for classification) out.
pub(super) fn predict_report(args: &PredictArgs, text: &str) -> Result<Report> {
    let file: PipelineFile = serde_json::from_str(text).with_context(|| {
        format!(
            "{} says it is a {PIPELINE_KIND:?} file but does not parse as one",
            args.model.display()
        )
    })?;
    check_predict_format(&args.data, file.format)?;
    match file.format {
        Format::Csv => {
            let Some(names) = &file.feature_names else {
                bail!(
                    "{}: a CSV model file without feature names",
                    args.model.display()
                );
            };
            let target = args.target.clone().or(file.target.clone());
            let labels = LabelMap::from_pair(file.labels.clone());
            let (x, y) = read_csv_for_prediction(&args.data, names, target.as_deref(), &labels)?;
            predict_with(args, &file, &x, y.as_deref())
        }
        Format::Libsvm => {
            if args.target.is_some() {
                bail!("--target applies to CSV files only (LIBSVM labels come first on each line)");
            }
            // The model's width is the declared --n-features of the fit.
            let p = file.model.coefficients.len();
            let d = load_libsvm(&args.data, FeatureCount::Public(p))?;
            predict_with(args, &file, d.x(), Some(d.y()))
        }
    }
}

/// The predictions and scores of a pipeline model on raw rows `x` (labels `y`, if the
/// file has them).
fn predict_with<D: Design>(
    args: &PredictArgs,
    file: &PipelineFile,
    x: &D,
    y: Option<&[f64]>,
) -> Result<Report> {
    let model = &file.model;
    let classification = model.task == Task::Classification;
    let z = model.predict(x)?;
    let proba = if model.loss == LossKind::Logistic {
        Some(model.predict_proba(x)?)
    } else {
        None
    };
    let mut out = Report::default();
    match y {
        Some(y) if classification => {
            out.push("accuracy", accuracy(y, &z)?);
            if let Some(p) = &proba {
                out.push("log_loss", log_loss(y, p)?);
            }
        }
        Some(y) => out.push("mse", mean_squared_error(y, &z)?),
        None => out.push("score", "none: the file has no label column"),
    }
    out.push("rows", z.len());
    if let Some(path) = &args.out {
        let rows: Vec<(f64, Option<f64>)> = match &proba {
            Some(p) => z.iter().copied().zip(p.iter().copied().map(Some)).collect(),
            None => z.iter().map(|&v| (v, None)).collect(),
        };
        let csv = predictions_csv_for(file.labels.as_ref(), classification, &rows);
        write_atomic(path, csv.as_bytes())?;
        out.push("predictions_written_to", path.display().to_string());
    } else {
        out.push("note", "predictions not written: pass --out FILE");
    }
    Ok(out)
}
