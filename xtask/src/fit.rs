//! `cargo xtask fit` and `cargo xtask predict`: train a private linear model on your own
//! CSV or LIBSVM file, save the releasable model, and use it on new data.
//!
//! ```text
//! cargo xtask fit --data FILE [--format csv|libsvm] [--n-features P (LIBSVM, required)] [--target COL] [--positive X --negative Y]
//!     --loss logistic|squared|squared-hinge|huber --penalty none|l1|l2|elastic-net [--lambda L]
//!     --algorithm dp-cd|dp-gcd|dp-sgd|cd|dp-scd|sdca [--intercept] [--normalize-rows] --epsilon E --delta D
//!     [--passes P] [--step S] [--clip C] [--batch-size B] [--test-fraction F] [--seed N]
//!     (--feature-bound B | --non-private-constants-from-data)
//!     --model-out model.json [--json]
//! cargo xtask predict --model model.json --data FILE [--target COL] [--out predictions.csv] [--json]
//! ```
//!
//! The model file holds the releasable model only (coefficients, intercept, plan, ledger,
//! guarantee) and the public schema needed to read new data (feature names, label
//! texts); never a seed.
//!
//! What the output reports beyond the model is computed from the data **without**
//! privacy and is for the analyst, not for publication: how many values were clipped to
//! `--feature-bound`, and the held-out scores of `--test-fraction`.

use crate::input::{DataArgs, Format};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use dp_models::choice::{AnyLoss, AnyPenalty};
use dp_models::constants::Tagged;
use dp_models::io::{
    load_csv_data, load_libsvm, read_csv_for_prediction, CsvOptions, FeatureCount, LabelMap, Target,
};
use dp_models::metrics::{accuracy, log_loss, mean_squared_error};
use dp_models::preprocess::{clip_to_bound, normalize_rows};
use dp_models::split::{train_test_split, SelectRows};
use dp_models::{
    ClipValues, Dataset, DenseDesign, Design, ElasticNet, Huber, Logistic, Loss, NoPenalty,
    Penalty, SparseDesign, Squared, SquaredHinge, L1, L2,
};
use dp_optim::auto::PublicBounds;
use dp_optim::dp_gcd::{DpGcdParams, SelectionRule, Variant};
use dp_optim::kernel::ColumnKernels;
use dp_optim::{
    with_intercept_column, AppendConstantColumn, CdParams, CoordinateOrder, DpCdParams,
    DpScdParams, DpSgdParams, Fitted, GlobalSmoothness, LinearModel, RowSupport, SdcaParams,
    Smoothness, Solver,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Per-sample losses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossArg {
    /// `log(1 + exp(-y z))`, labels +-1 (classification).
    Logistic,
    /// `1/2 (z - y)^2` (regression).
    Squared,
    /// `max(0, 1 - y z)^2`, labels +-1 (classification).
    SquaredHinge,
    /// Huber with threshold 1 (robust regression).
    Huber,
}

impl LossArg {
    fn classification(self) -> bool {
        matches!(self, LossArg::Logistic | LossArg::SquaredHinge)
    }
}

/// Penalties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PenaltyArg {
    /// No penalty.
    None,
    /// `lambda ||w||_1`.
    L1,
    /// `(lambda/2) ||w||_2^2`.
    L2,
    /// `lambda (||w||_1 + (1/2) ||w||_2^2)`.
    ElasticNet,
}

/// Solvers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Algorithm {
    /// Private randomized coordinate descent (Mangold et al. 2022).
    DpCd,
    /// Private greedy coordinate descent, zCDP variant (Mangold et al. 2023).
    DpGcd,
    /// Private proximal SGD (replace-one, batches without replacement).
    DpSgd,
    /// Non-private coordinate descent (no guarantee; for comparison).
    Cd,
    /// Private stochastic dual coordinate descent (Damaskinos et al. 2021): needs
    /// `--penalty l2 --lambda L` with `L > 0` (the dual needs strong convexity), loss
    /// `squared` or `logistic`, no intercept, and every row of L2 norm at most 1 (rows
    /// can be rescaled with `--normalize-rows`). `--batch-size` is its mini-batch `L`,
    /// `--clip` its bound `C` on each dual step; `--step` is not used.
    DpScd,
    /// Non-private SDCA, DP-SCD's twin (no guarantee; for comparison); same
    /// requirements as `dp-scd` except the row norms.
    Sdca,
}

/// Arguments of `cargo xtask fit`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("format", |a| a.help(
    "File format (default: from the extension, `.csv` or `.libsvm` / `.svm`)"
)))]
pub struct FitArgs {
    /// The training data and how to read them.
    #[command(flatten)]
    input: DataArgs,
    /// Per-sample loss.
    #[arg(long, value_enum)]
    loss: LossArg,
    /// Penalty.
    #[arg(long, value_enum, default_value = "none")]
    penalty: PenaltyArg,
    /// Penalty strength (>= 0).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    lambda: f64,
    /// Solver.
    #[arg(long, value_enum)]
    algorithm: Algorithm,
    /// Fit an intercept (an unpenalised coefficient on a constant column of ones, fitted
    /// privately with the others under the same guarantee).
    #[arg(long)]
    intercept: bool,
    /// Target epsilon (> 0) of the whole fit (private algorithms).
    #[arg(long, allow_negative_numbers = true)]
    epsilon: Option<f64>,
    /// Target delta, in (0, 1) (private algorithms).
    #[arg(long, allow_negative_numbers = true)]
    delta: Option<f64>,
    /// Passes over the data (CD: `p` coordinate updates each; SGD: `n / b` steps each;
    /// DP-GCD: one greedy iteration each). Default for dp-cd with `--feature-bound`:
    /// chosen by the no-tuning rules of `dp_optim::auto` (printed); otherwise 10.
    #[arg(long, allow_negative_numbers = true)]
    passes: Option<u64>,
    /// Step scale `gamma` (steps `gamma / M_j`, or `gamma / beta` for SGD). Default for
    /// dp-cd with `--feature-bound`: the rules' choice (1); otherwise 0.5.
    #[arg(long, allow_negative_numbers = true)]
    step: Option<f64>,
    /// Clipping threshold `C` (private algorithms). Default for dp-cd with
    /// `--feature-bound`: the rules' choice; otherwise 1.
    #[arg(long, allow_negative_numbers = true)]
    clip: Option<f64>,
    /// DP-SGD batch size (at most the number of training rows). Default: 64, or all the
    /// rows when there are fewer. Batches are drawn without replacement under
    /// replace-one neighbours and accounted with subsampling amplification (Wang, Balle
    /// & Kasiviswanathan 2019).
    #[arg(long, allow_negative_numbers = true)]
    batch_size: Option<u64>,
    /// Declared public bound `|x_ij| <= B`, chosen without looking at the data. Values
    /// beyond it are clipped to it (the output says how many); the smoothness constants
    /// follow from it, so no privacy is spent on them.
    #[arg(long, allow_negative_numbers = true)]
    feature_bound: Option<f64>,
    /// Declared public bound: every record has at most K non-zero features, chosen
    /// without looking at the data (e.g. the numeric columns plus one per one-hot
    /// encoded column). dp-cd then charges each pass as the K releases one record can
    /// move instead of all p (the intercept column counts as one more), which lowers
    /// the noise at the same epsilon, and visits the coordinates in a fresh random
    /// permutation per pass. A record with more non-zeros keeps its K largest in
    /// magnitude (the others become 0: a fixed per-record map, so the guarantee holds;
    /// the output says how many records, a non-private count). dp-cd only.
    #[arg(long)]
    max_nonzeros: Option<usize>,
    /// Compute the smoothness constants from the data WITHOUT privacy (as the papers'
    /// experiments do). The guarantee then does not cover what they reveal, and the
    /// model file says so. Without this flag, `--feature-bound` is required.
    #[arg(long)]
    non_private_constants_from_data: bool,
    /// Divide every row by its L2 norm (zero rows unchanged), so that `||x_i|| <= 1`, as
    /// DP-SCD's sensitivity requires. Each row is rescaled using that row alone, so the
    /// map is applied record by record and reads nothing else: replacing one record
    /// changes one normalised record, and the guarantee holds for the normalised data as
    /// for the raw data. The model file records it and `predict` normalises new rows the
    /// same way. CSV input only.
    #[arg(long)]
    normalize_rows: bool,
    /// Hold out this fraction of the rows (in (0, 1)) and report the score on them.
    #[arg(long, allow_negative_numbers = true)]
    test_fraction: Option<f64>,
    /// Seed for the split and the fit (reproducible runs). It replays the noise: it is
    /// not written to the model file, and must not be published. Default: OS entropy.
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Where to write the model (JSON).
    #[arg(long)]
    model_out: PathBuf,
    /// Print one JSON object instead of text lines.
    #[arg(long)]
    json: bool,
}

/// Arguments of `cargo xtask predict`.
#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// A model file written by `cargo xtask fit`.
    #[arg(long)]
    model: PathBuf,
    /// Data to predict (same format and feature columns as the training file).
    #[arg(long)]
    data: PathBuf,
    /// CSV label column, if the file has one under another name than in training.
    #[arg(long)]
    target: Option<String>,
    /// Write one prediction per row here (CSV: `prediction` and, for logistic models,
    /// `probability`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one JSON object instead of text lines.
    #[arg(long)]
    json: bool,
}

/// What a model file holds: the releasable model and the public schema of the data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// Always "dp-erm linear model v1".
    pub kind: String,
    /// File format of the training data.
    pub format: Format,
    /// The loss the model was fitted with.
    pub loss: LossArg,
    /// The penalty and its strength.
    pub penalty: PenaltyArg,
    /// Penalty strength.
    pub lambda: f64,
    /// Feature column names (CSV), in the model's coefficient order.
    pub feature_names: Option<Vec<String>>,
    /// The CSV label column's name.
    pub target: Option<String>,
    /// Label texts of a classification CSV (positive, negative).
    pub labels: Option<(String, String)>,
    /// The declared public feature bound (new data is clipped to it too).
    pub feature_bound: Option<f64>,
    /// Whether every row was divided by its L2 norm (new data is normalised too).
    #[serde(default)]
    pub normalize_rows: bool,
    /// The releasable model (no seed).
    pub model: LinearModel,
}

const KIND: &str = "dp-erm linear model v1";

fn format_of(path: &Path, given: Option<Format>) -> Result<Format> {
    if let Some(f) = given {
        return Ok(f);
    }
    match dp_models::io::Format::from_path(path) {
        Ok(dp_models::io::Format::Csv) => Ok(Format::Csv),
        Ok(dp_models::io::Format::Libsvm) => Ok(Format::Libsvm),
        Ok(dp_models::io::Format::Tsv) => bail!(
            "{}: tab-separated files are not supported by fit / predict; convert to CSV",
            path.display()
        ),
        Err(e) => bail!("{e}: pass --format csv or --format libsvm"),
    }
}

/// A loaded file: dense with feature names, or sparse.
enum Data {
    Dense(Dataset<DenseDesign>, Vec<String>, String),
    Sparse(Dataset<SparseDesign>),
}

/// Loads the training file. Every value of it that shapes the release plan is public:
/// a CSV's columns are its header row (a public schema: the header is not a record), a
/// LIBSVM file's width is the declared `--n-features` (never the largest index present,
/// which one record can move: docs/privacy/threat-model.md).
fn load(
    path: &Path,
    format: Format,
    n_features: Option<usize>,
    target: &Option<String>,
    labels: Option<(String, String)>,
) -> Result<Data> {
    match format {
        Format::Csv => {
            if let Some(p) = n_features {
                bail!(
                    "--n-features {p} applies to LIBSVM files only: a CSV file's features are \
                     the columns of its header row (a public schema)"
                );
            }
            let opts = CsvOptions {
                target: Target::parse(target.as_deref()),
                labels: LabelMap::from_pair(labels),
                ..CsvOptions::default()
            };
            let csv = load_csv_data(path, &opts)?;
            Ok(Data::Dense(csv.dataset, csv.feature_names, csv.target_name))
        }
        Format::Libsvm => {
            if target.is_some() {
                bail!("--target applies to CSV files only (LIBSVM labels come first on each line)");
            }
            if labels.is_some() {
                bail!(
                    "--positive / --negative apply to CSV files only: LIBSVM labels are \
                     the numbers written (+1 / -1 for classification)"
                );
            }
            let Some(p) = n_features else {
                bail!(
                    "LIBSVM input needs --n-features P, the public number of features chosen \
                     without looking at the data (e.g. the data set's documented dimension): \
                     P sets the number of coefficients, releases and the noise, so taking it \
                     from the largest index in the file would reveal whether the one record \
                     holding that index is in the data"
                );
            };
            Ok(Data::Sparse(load_libsvm(path, FeatureCount::Public(p))?))
        }
    }
}

/// Runs `cargo xtask fit`.
pub fn run_fit(args: FitArgs) -> Result<()> {
    let out = fit_to_json(&args)?;
    print_report(&out, args.json);
    Ok(())
}

fn print_report(out: &serde_json::Value, as_json: bool) {
    if as_json {
        println!("{out}");
        return;
    }
    if let Some(obj) = out.as_object() {
        for (k, v) in obj {
            match v {
                serde_json::Value::String(s) => println!("{k} = {s}"),
                serde_json::Value::Null => {}
                serde_json::Value::Number(x) if x.is_f64() => {
                    println!("{k} = {}", num(x.as_f64().unwrap_or(f64::NAN)));
                }
                other => println!("{k} = {other}"),
            }
        }
    }
}

/// A float for people: plain decimal between 1e-4 and 1e15 in magnitude (and for 0),
/// scientific notation beyond, so that `1e-300` does not print 300 zeros. The text
/// parses back to the same `f64`.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn fit_to_json(args: &FitArgs) -> Result<serde_json::Value> {
    let format = format_of(&args.input.data, args.input.format)?;
    if args.loss.classification() != args.input.positive.is_some() && args.input.positive.is_some()
    {
        bail!(
            "--positive / --negative name classes: use them with --loss logistic or squared-hinge"
        );
    }
    let dual = matches!(args.algorithm, Algorithm::DpScd | Algorithm::Sdca);
    if dual {
        check_dual_args(args)?;
    }
    if !matches!(args.algorithm, Algorithm::Cd | Algorithm::Sdca) {
        if args.epsilon.is_none() || args.delta.is_none() {
            bail!("a private algorithm needs --epsilon and --delta");
        }
        if !dual && args.feature_bound.is_none() && !args.non_private_constants_from_data {
            bail!(
                "the step sizes need smoothness constants: declare a public bound with \
                 --feature-bound B (|x_ij| <= B, chosen without looking at the data), or \
                 accept constants computed from the data without privacy with \
                 --non-private-constants-from-data"
            );
        }
    } else if args.epsilon.is_some() || args.delta.is_some() {
        bail!("--algorithm cd / sdca is not private: drop --epsilon / --delta, or choose dp-cd, dp-gcd, dp-sgd or dp-scd");
    }
    if let Some(b) = args.feature_bound {
        if !(b.is_finite() && b > 0.0) {
            bail!("invalid --feature-bound {b}: the bound must be finite and > 0");
        }
        if args.non_private_constants_from_data {
            bail!("--feature-bound and --non-private-constants-from-data exclude each other");
        }
    }
    if args.max_nonzeros.is_some() && args.algorithm != Algorithm::DpCd {
        bail!(
            "--max-nonzeros applies to --algorithm dp-cd only (its accounting is per \
             coordinate release)"
        );
    }
    if args.max_nonzeros == Some(0) {
        bail!("invalid --max-nonzeros 0: a record must be allowed at least one non-zero feature");
    }
    if args.batch_size.is_some()
        && !matches!(
            args.algorithm,
            Algorithm::DpSgd | Algorithm::DpScd | Algorithm::Sdca
        )
    {
        bail!("--batch-size applies to --algorithm dp-sgd, dp-scd and sdca only");
    }
    if args.normalize_rows && format == Format::Libsvm {
        bail!("--normalize-rows supports CSV input only: normalise the LIBSVM rows beforehand");
    }
    if !(args.lambda.is_finite() && args.lambda >= 0.0) {
        bail!(
            "invalid --lambda {}: the penalty strength must be finite and >= 0",
            args.lambda
        );
    }
    if args.penalty == PenaltyArg::None && args.lambda != 0.0 {
        bail!("--lambda given with --penalty none");
    }
    let labels = args.input.positive.clone().zip(args.input.negative.clone());
    // The loaders' errors name the file, the line, the column and the value.
    let data = load(
        &args.input.data,
        format,
        args.input.n_features,
        &args.input.target,
        labels.clone(),
    )?;
    let seed = args.seed;
    let (json, model) = match data {
        Data::Dense(d, names, target) => {
            let d = if args.normalize_rows {
                let (x, y) = d.into_parts();
                Dataset::new(normalize_rows(&x)?, y)?
            } else {
                d
            };
            let (j, m) = fit_data(args, d, seed)?;
            (j, (m, Some(names), Some(target)))
        }
        Data::Sparse(d) => {
            let (j, m) = fit_data(args, d, seed)?;
            (j, (m, None, None))
        }
    };
    let (model, feature_names, target) = model;
    let file = ModelFile {
        kind: KIND.into(),
        format,
        loss: args.loss,
        penalty: args.penalty,
        lambda: args.lambda,
        feature_names,
        target,
        labels,
        feature_bound: args.feature_bound,
        normalize_rows: args.normalize_rows,
        model,
    };
    let text = serde_json::to_string_pretty(&file)?;
    write_atomic(&args.model_out, text.as_bytes())?;
    let mut json = json;
    json["model_out"] = json!(args.model_out.display().to_string());
    Ok(json)
}

/// Writes through a temporary file and a rename, so that a failed run leaves any
/// previous file intact.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp-write");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

// The run-time loss and penalty are the library's (`dp_models::choice`), which forward
// every trait method, the vectorised kernels included: the CLI runs the typed code.
fn any_loss(arg: LossArg) -> Result<AnyLoss> {
    Ok(match arg {
        LossArg::Logistic => AnyLoss::Logistic(Logistic),
        LossArg::Squared => AnyLoss::Squared(Squared::half()),
        LossArg::SquaredHinge => AnyLoss::SquaredHinge(SquaredHinge),
        LossArg::Huber => AnyLoss::Huber(Huber::new(1.0)?),
    })
}

/// The penalty on `p` features, the intercept (if any, the last coordinate) unpenalised.
fn any_penalty(arg: PenaltyArg, lambda: f64, p: usize, intercept: bool) -> Result<AnyPenalty> {
    let weights = || {
        let mut w = vec![1.0; p];
        w.push(0.0);
        w
    };
    Ok(match (arg, intercept) {
        (PenaltyArg::None, _) => AnyPenalty::None(NoPenalty),
        (PenaltyArg::L1, false) => AnyPenalty::L1(L1::new(lambda)?),
        (PenaltyArg::L1, true) => AnyPenalty::L1(L1::new(lambda)?.with_weights(weights())?),
        (PenaltyArg::L2, false) => AnyPenalty::L2(L2::new(lambda)?),
        (PenaltyArg::L2, true) => AnyPenalty::L2(L2::new(lambda)?.with_weights(weights())?),
        (PenaltyArg::ElasticNet, false) => AnyPenalty::ElasticNet(ElasticNet::new(lambda, lambda)?),
        (PenaltyArg::ElasticNet, true) => {
            AnyPenalty::ElasticNet(ElasticNet::new(lambda, lambda)?.with_weights(weights())?)
        }
    })
}

/// Clips, splits, fits and scores; returns the output fields and the releasable model.
fn fit_data<D>(
    args: &FitArgs,
    mut data: Dataset<D>,
    seed: Option<u64>,
) -> Result<(serde_json::Value, LinearModel)>
where
    D: ColumnKernels + AppendConstantColumn + SelectRows + ClipValues,
{
    let (n_all, p) = (data.n_samples(), data.n_features());
    let total = n_all * p;
    let clipped = match args.feature_bound {
        Some(b) => Some(clip_to_bound(&mut data, b)?),
        None => None,
    };
    // A declared support bound: a record with more non-zeros keeps its k largest in
    // magnitude (a fixed per-record map, so the support accounting holds for the
    // projected data: dp_optim::support); how many were projected is a count from the
    // data, reported as non-private below.
    let (data, projected) = match args.max_nonzeros {
        Some(k) => {
            let (mut x, y) = data.into_parts();
            let count = RowSupport::AtMost(k).project(&mut x)?;
            (Dataset::new(x, y)?, Some(count))
        }
        None => (data, None),
    };
    let split_seed = seed.unwrap_or_else(rand::random);
    let (train, test) = match args.test_fraction {
        Some(f) => {
            let (tr, te) = train_test_split(&data, f, split_seed)?;
            (tr, Some(te))
        }
        None => (data, None),
    };
    let with_intercept;
    let train_fit: &Dataset<D> = if args.intercept {
        with_intercept = with_intercept_column(&train)?;
        &with_intercept
    } else {
        &train
    };
    let loss = any_loss(args.loss)?;
    let penalty = any_penalty(args.penalty, args.lambda, p, args.intercept)?;
    let penalty_name = penalty.name();
    let c = loss
        .curvature_bound()
        .context("the loss has no curvature bound")?;
    // Public smoothness constants from the declared bound (the intercept column is 1).
    let public_m = args.feature_bound.map(|b| {
        let mut m = vec![c * b * b; p];
        if args.intercept {
            m.push(c);
        }
        m
    });
    // Coordinate constants: public from the bound, else computed from the data (which
    // the private solvers accept only with the explicit non-private flag).
    let smoothness = match &public_m {
        Some(m) => Smoothness::Given(Tagged::public(m.clone())),
        None => Smoothness::FromData,
    };
    let mut defaults_note: Option<String> = None;
    let fit: Fitted = match args.algorithm {
        Algorithm::Cd => {
            let solver = CdParams::new(loss, penalty)
                .passes(args.passes.unwrap_or(10))
                .step_scale(args.step.unwrap_or(0.5))
                .smoothness(smoothness.clone())
                .build()?;
            run(&solver, train_fit, seed)?
        }
        Algorithm::DpCd => {
            let missing = args.passes.is_none() || args.step.is_none() || args.clip.is_none();
            // The declared support bound (the intercept column is one more non-zero),
            // with the order it needs.
            let support = match args.max_nonzeros {
                Some(k) => Some(RowSupport::AtMost(
                    k.checked_add(usize::from(args.intercept))
                        .with_context(|| {
                            format!(
                                "invalid --max-nonzeros {k}: with --intercept the bound is \
                             {k} + 1 (the intercept column), which overflows"
                            )
                        })?,
                )),
                None => None,
            };
            let order = if support.is_some() {
                CoordinateOrder::Permutation
            } else {
                CoordinateOrder::Uniform
            };
            let solver = match args.feature_bound {
                // No (or not every) hyperparameter given: the no-tuning rules choose the
                // missing ones from public inputs, and the M_j are estimated privately
                // from the declared bounds (charged).
                Some(b) if missing && !args.non_private_constants_from_data => {
                    let q = train_fit.n_features();
                    let mut bounds = PublicBounds::uniform(q, b);
                    if args.normalize_rows {
                        bounds =
                            bounds.with_row_norm(if args.intercept { 2f64.sqrt() } else { 1.0 });
                    }
                    if args.intercept {
                        if let Some(fb) = bounds.feature_bounds.as_mut() {
                            fb[q - 1] = 1.0;
                        }
                    }
                    // A declared support bound also scales the passes rule (sqrt(p / k)).
                    if let Some(k) = &support {
                        bounds = bounds.with_row_support(k.clone());
                    }
                    let (params, chosen) = DpCdParams::defaults_for(
                        loss,
                        penalty,
                        args.epsilon.unwrap_or(f64::NAN),
                        args.delta.unwrap_or(f64::NAN),
                        &bounds,
                        train_fit.n_samples(),
                        q,
                    )?;
                    let passes = args.passes.unwrap_or(chosen.passes);
                    let step = args.step.unwrap_or(chosen.step_scale);
                    let clip = args.clip.unwrap_or(chosen.clip);
                    defaults_note = Some(format!(
                        "passes {passes}, step scale {step}, clip {} (given or chosen by \
                         the no-tuning rules of dp_optim::auto from epsilon, delta, the \
                         loss, the bounds, n and p; rule values: passes {}, step {}, clip \
                         {}); M_j estimated privately from the bounds in one Gaussian release with {} % \
                         of the Gaussian-DP budget mu^2",
                        num(clip),
                        chosen.passes,
                        chosen.step_scale,
                        num(chosen.clip),
                        chosen.smoothness_share * 100.0
                    ));
                    params
                        .passes(passes)
                        .step_scale(step)
                        .clip(clip)
                        .coordinate_order(order)
                        .row_support(support)
                        .build()?
                }
                _ => DpCdParams::new(loss, penalty)
                    .epsilon(args.epsilon.unwrap_or(f64::NAN))
                    .delta(args.delta.unwrap_or(f64::NAN))
                    .passes(args.passes.unwrap_or(10))
                    .step_scale(args.step.unwrap_or(0.5))
                    .clip(args.clip.unwrap_or(1.0))
                    .smoothness(smoothness.clone())
                    .allow_non_private_constants(args.non_private_constants_from_data)
                    .coordinate_order(order)
                    .row_support(support)
                    .build()?,
            };
            run(&solver, train_fit, seed)?
        }
        Algorithm::DpGcd => {
            let solver = DpGcdParams::new(loss, penalty)
                .epsilon(args.epsilon.unwrap_or(f64::NAN))
                .delta(args.delta.unwrap_or(f64::NAN))
                .passes(args.passes.unwrap_or(10))
                .step_scale(args.step.unwrap_or(0.5))
                .clip(args.clip.unwrap_or(1.0))
                .variant(Variant::Zcdp)
                .rule(if args.penalty == PenaltyArg::None {
                    SelectionRule::GsL
                } else {
                    SelectionRule::GsR
                })
                .smoothness(smoothness.clone())
                .allow_non_private_constants(args.non_private_constants_from_data)
                .build()?;
            run(&solver, train_fit, seed)?
        }
        Algorithm::DpSgd => {
            // beta <= c max_i ||x_i||^2 <= c (p B^2 + intercept).
            let beta = args
                .feature_bound
                .map(|b| c * (p as f64 * b * b + if args.intercept { 1.0 } else { 0.0 }));
            let solver = DpSgdParams::new(loss, penalty)
                .epsilon(args.epsilon.unwrap_or(f64::NAN))
                .delta(args.delta.unwrap_or(f64::NAN))
                .passes(args.passes.unwrap_or(10))
                .step_scale(args.step.unwrap_or(0.5))
                .clip(args.clip.unwrap_or(1.0))
                .batch_size(batch_size(args.batch_size, train_fit.n_samples())?)
                .smoothness(match beta {
                    Some(beta) => GlobalSmoothness::Given(Tagged::public(beta)),
                    None => GlobalSmoothness::FromData,
                })
                .allow_non_private_constants(args.non_private_constants_from_data)
                .build()?;
            run(&solver, train_fit, seed)?
        }
        Algorithm::DpScd | Algorithm::Sdca => fit_dual(args, train_fit, seed)?,
    };
    let solver_seconds = fit.diagnostics.seconds;
    let model = if args.intercept {
        fit.model.split_intercept()?
    } else {
        fit.model
    };
    let mut out = serde_json::Map::new();
    out.insert("algorithm".into(), json!(model.algorithm));
    out.insert("loss".into(), json!(loss.name()));
    out.insert(
        "penalty".into(),
        json!(format!("{penalty_name} (lambda = {})", num(args.lambda))),
    );
    out.insert("n_train".into(), json!(train.n_samples()));
    out.insert("n_test".into(), json!(test.as_ref().map(|t| t.n_samples())));
    out.insert("p".into(), json!(p));
    out.insert("intercept".into(), json!(model.intercept));
    if let (Some(k), Some(b)) = (clipped, args.feature_bound) {
        out.insert(
            "clipped".into(),
            json!(format!(
                "{k} of {total} values clipped to the declared bound |x| <= {} (a count from the data, not private: do not publish)",
                num(b)
            )),
        );
    }
    if let (Some(c), Some(k)) = (projected, args.max_nonzeros) {
        out.insert(
            "projected".into(),
            json!(format!(
                "{c} of {n_all} records had more than --max-nonzeros {k} non-zero features \
                 and kept their {k} largest in magnitude (a count from the data, not \
                 private: do not publish)"
            )),
        );
    }
    match &model.privacy {
        Some(pr) => {
            out.insert("epsilon".into(), json!(pr.guarantee.epsilon));
            out.insert("delta".into(), json!(pr.guarantee.delta));
            out.insert("adjacency".into(), json!(pr.guarantee.adjacency.name()));
            out.insert("accounting".into(), json!(pr.guarantee.how));
            if let dp_optim::SolverPlan::DpCd(plan) = &pr.plan {
                if let Some(charged) = plan.charged_releases {
                    out.insert(
                        "charged_releases".into(),
                        json!(format!(
                            "{charged} of {} coordinate releases (at most --max-nonzeros \
                             per record and pass)",
                            plan.releases
                        )),
                    );
                }
            }
            out.insert(
                "uses_non_private_constants".into(),
                json!(pr.uses_non_private_constants),
            );
        }
        None => {
            out.insert(
                "privacy".into(),
                json!("none: the cd algorithm is not private"),
            );
        }
    }
    if let Some(test) = &test {
        for (k, v) in score(&model, test, args.loss)? {
            out.insert(k.into(), json!(v));
        }
        out.insert(
            "score_privacy".into(),
            json!("held-out scores are computed from the data without privacy: not covered by the guarantee"),
        );
    }
    if let Some(note) = defaults_note {
        out.insert("hyperparameters".into(), json!(note));
    }
    out.insert("solver_seconds".into(), json!(solver_seconds));
    if seed.is_some() {
        out.insert(
            "note".into(),
            json!("--seed given: the run is reproducible, and the seed replays the noise; it is not in the model file, keep it secret"),
        );
    }
    Ok((serde_json::Value::Object(out), model))
}

/// The checks of `--algorithm dp-scd | sdca`, each error naming the problem.
fn check_dual_args(args: &FitArgs) -> Result<()> {
    let name = if args.algorithm == Algorithm::DpScd {
        "dp-scd"
    } else {
        "sdca"
    };
    if args.penalty != PenaltyArg::L2
        || args.lambda.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
    {
        bail!(
            "--algorithm {name} solves the dual of an L2-penalised problem, which needs              strong convexity: pass --penalty l2 --lambda L with L > 0 (the paper uses 1e-4)"
        );
    }
    if !matches!(args.loss, LossArg::Squared | LossArg::Logistic) {
        bail!(
            "--algorithm {name} supports --loss squared or logistic (the dual coordinate steps              exist for these losses only)"
        );
    }
    if args.intercept {
        bail!(
            "--algorithm {name} fits no intercept (the dual needs the same penalty on every              coefficient): drop --intercept, or add a constant column to the data yourself              (it then counts in the row norm and is penalised)"
        );
    }
    if args.feature_bound.is_some() || args.non_private_constants_from_data {
        bail!(
            "--algorithm {name} needs no smoothness constants: drop --feature-bound /              --non-private-constants-from-data (DP-SCD needs rows of L2 norm <= 1 instead:              --normalize-rows)"
        );
    }
    Ok(())
}

/// DP-SCD or SDCA on `data` (checked by [`check_dual_args`]).
fn fit_dual<D: Design>(args: &FitArgs, data: &Dataset<D>, seed: Option<u64>) -> Result<Fitted> {
    let pen = L2::new(args.lambda)?;
    let batch = args.batch_size.unwrap_or(1);
    let n = data.n_samples() as u64;
    if batch == 0 || batch > n {
        bail!("invalid --batch-size {batch}: the mini-batch needs 1 to {n} rows");
    }
    macro_rules! fit_with {
        ($loss:expr) => {
            match args.algorithm {
                Algorithm::Sdca => run(
                    &SdcaParams::new($loss, pen)
                        .passes(args.passes.unwrap_or(10))
                        .batch_size(batch)
                        .build()?,
                    data,
                    seed,
                ),
                _ => run(
                    &DpScdParams::new($loss, pen)
                        .epsilon(args.epsilon.unwrap_or(f64::NAN))
                        .delta(args.delta.unwrap_or(f64::NAN))
                        .passes(args.passes.unwrap_or(10))
                        .batch_size(batch)
                        .clip(args.clip.unwrap_or(1.0))
                        .build()?,
                    data,
                    seed,
                )
                .map_err(|e| {
                    if args.normalize_rows {
                        e
                    } else {
                        e.context(
                            "DP-SCD needs every row to have L2 norm at most 1: pass                              --normalize-rows to divide each row by its norm",
                        )
                    }
                }),
            }
        };
    }
    match args.loss {
        LossArg::Squared => fit_with!(Squared::half()),
        _ => fit_with!(Logistic),
    }
}

/// The DP-SGD batch size: the given one (1 ..= n), or 64 (all `n` rows when fewer).
fn batch_size(given: Option<u64>, n: usize) -> Result<u64> {
    let n = n as u64;
    match given {
        None => Ok(n.min(64)),
        Some(0) => bail!("invalid --batch-size 0: a batch needs at least one row"),
        Some(b) if b > n => bail!("invalid --batch-size {b}: larger than the {n} training rows"),
        Some(b) => Ok(b),
    }
}

fn run<D: Design, S: Solver<D>>(
    solver: &S,
    data: &Dataset<D>,
    seed: Option<u64>,
) -> Result<Fitted> {
    Ok(match seed {
        Some(s) => solver.fit_seeded(data, s)?,
        None => solver.fit(data)?,
    })
}

/// Held-out scores: accuracy (and log-loss for logistic) or mean squared error.
fn score<D: Design>(
    model: &LinearModel,
    data: &Dataset<D>,
    loss: LossArg,
) -> Result<Vec<(&'static str, f64)>> {
    let y = data.y();
    if loss.classification() {
        let labels = model.predict_labels(data.x())?;
        let mut out = vec![("accuracy", accuracy(y, &labels)?)];
        if loss == LossArg::Logistic {
            let p = model.predict_proba(data.x())?;
            out.push(("log_loss", log_loss(y, &p)?));
        }
        Ok(out)
    } else {
        let z = model.decision_function(data.x())?;
        Ok(vec![("mse", mean_squared_error(y, &z)?)])
    }
}

/// Runs `cargo xtask predict`.
pub fn run_predict(args: PredictArgs) -> Result<()> {
    let out = predict_to_json(&args)?;
    print_report(&out, args.json);
    Ok(())
}

fn predict_to_json(args: &PredictArgs) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(&args.model)
        .with_context(|| format!("reading the model file {}", args.model.display()))?;
    let file: ModelFile = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a model file written by `cargo xtask fit`",
            args.model.display()
        )
    })?;
    if file.kind != KIND {
        bail!(
            "{}: unknown model kind {:?} (expected {KIND:?})",
            args.model.display(),
            file.kind
        );
    }
    let target = args.target.clone().or(file.target.clone());
    let (z, scores, n) = match file.format {
        Format::Csv => {
            let names = file.feature_names.clone().unwrap_or_default();
            let labels = LabelMap::from_pair(file.labels.clone());
            match read_csv_for_prediction(&args.data, &names, target.as_deref(), &labels)? {
                (x, Some(y)) => {
                    let x = if file.normalize_rows {
                        normalize_rows(&x)?
                    } else {
                        x
                    };
                    let mut d = Dataset::new(x, y)?;
                    clip_new(&mut d, file.feature_bound)?;
                    let s = score(&file.model, &d, file.loss)?;
                    (predictions(&file, d.x())?, s, d.n_samples())
                }
                (x, None) => {
                    let x = if file.normalize_rows {
                        normalize_rows(&x)?
                    } else {
                        x
                    };
                    let x = clip_design(x, file.feature_bound)?;
                    let n = x.n_samples();
                    (predictions(&file, &x)?, Vec::new(), n)
                }
            }
        }
        Format::Libsvm => {
            let mut d = load_libsvm(&args.data, FeatureCount::Public(file.model.n_features()))?;
            clip_new(&mut d, file.feature_bound)?;
            let s = score(&file.model, &d, file.loss)?;
            (predictions(&file, d.x())?, s, d.n_samples())
        }
    };
    let mut out = serde_json::Map::new();
    out.insert("rows".into(), json!(n));
    for (k, v) in scores {
        out.insert(k.into(), json!(v));
    }
    if let Some(path) = &args.out {
        let with_probability = z.first().is_some_and(|(_, p)| p.is_some());
        let mut csv = String::from(if with_probability {
            "prediction,probability\n"
        } else {
            "prediction\n"
        });
        for (pred, prob) in &z {
            match prob {
                Some(p) => csv.push_str(&format!("{pred},{p}\n")),
                None => csv.push_str(&format!("{pred}\n")),
            }
        }
        write_atomic(path, csv.as_bytes())?;
        out.insert(
            "predictions_written_to".into(),
            json!(path.display().to_string()),
        );
    } else {
        out.insert(
            "note".into(),
            json!("predictions not written: pass --out FILE"),
        );
    }
    Ok(serde_json::Value::Object(out))
}

fn clip_new<D: ClipValues>(d: &mut Dataset<D>, bound: Option<f64>) -> Result<()> {
    if let Some(b) = bound {
        clip_to_bound(d, b)?;
    }
    Ok(())
}

fn clip_design(mut x: DenseDesign, bound: Option<f64>) -> Result<DenseDesign> {
    if let Some(b) = bound {
        x.clip_values(b)?;
    }
    Ok(x)
}

/// One prediction per row: the label (classification) or the value (regression), and
/// the probability of +1 for logistic models.
fn predictions<D: Design>(file: &ModelFile, x: &D) -> Result<Vec<(f64, Option<f64>)>> {
    if file.loss.classification() {
        let labels = file.model.predict_labels(x)?;
        if file.loss == LossArg::Logistic {
            let p = file.model.predict_proba(x)?;
            Ok(labels.into_iter().zip(p.into_iter().map(Some)).collect())
        } else {
            Ok(labels.into_iter().map(|l| (l, None)).collect())
        }
    } else {
        Ok(file
            .model
            .decision_function(x)?
            .into_iter()
            .map(|z| (z, None))
            .collect())
    }
}
