//! `dp-erm fit` and `dp-erm predict` (aliases `cargo xtask fit / predict`): train a
//! private linear model on your own CSV or LIBSVM file, save the releasable model, and use
//! it on new data.
//!
//! ```text
//! dp-erm fit --data FILE [--format csv|libsvm] [--n-features P (LIBSVM, required)] [--target COL] [--positive X --negative Y]
//!     --loss logistic|squared|squared-hinge|huber --penalty none|l1|l2|elastic-net [--lambda L]
//!     --algorithm dp-cd|dp-gcd|dp-sgd|cd|dp-scd|sdca [--intercept] [--normalize-rows] --epsilon E --delta D
//!     [--passes P] [--step S] [--clip C] [--batch-size B] [--test-fraction F] [--seed N] [--threads K]
//!     (--feature-bound B | --non-private-constants-from-data | --feature-bound auto)
//!     [--target-bound Y|auto (regression)] [--no-intercept] --model-out model.json [--json]
//! dp-erm predict --model model.json --data FILE [--target COL] [--out predictions.csv] [--json]
//! ```
//!
//! Every CSV fit runs the library pipeline `dp_erm::Pipeline` (module `pipeline_path`):
//! declared, private (`auto`) or, by name, non-private ranges, charged with the fit, the
//! library's no-tuning hyperparameters, a model that predicts on raw rows
//! (docs/pipeline.md). Still on the direct solver path here (not yet in the pipeline):
//! LIBSVM input, `--normalize-rows` and `--max-nonzeros`.
//!
//! The model file holds the releasable model only (coefficients, intercept, plan, ledger,
//! guarantee) and the public schema needed to read new data (feature names, label
//! texts); never a seed.
//!
//! What the output reports beyond the model is computed from the data **without**
//! privacy and is for the analyst, not for publication: how many values were clipped to
//! `--feature-bound`, and the held-out scores of `--test-fraction`.
//!
//! The report is ordered as a reader wants it: the guarantee, then the scores, then what
//! was chosen (every default shown), then the diagnostics and warnings. `--json` prints
//! the same fields, in the same order, as one object.

mod pipeline_path;

use crate::input::{DataArgs, Format};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use dp_models::choice::{AnyLoss, AnyPenalty, LossKind, PenaltyKind};
use dp_models::constants::Tagged;
use dp_models::io::{
    load_csv_data, load_libsvm, read_csv_for_prediction, CsvOptions, FeatureCount, LabelMap, Target,
};
use dp_models::metrics::{accuracy, log_loss, mean_squared_error};
use dp_models::preprocess::{clip_to_bound, normalize_rows};
use dp_models::split::{train_test_split, SelectRows};
use dp_models::{
    ClipValues, Dataset, DenseDesign, Design, Logistic, Loss, Penalty, SparseDesign, Squared, L2,
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

/// Arguments of `dp-erm fit`.
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
    /// privately with the others under the same guarantee). CSV fits (the library
    /// pipeline) fit one by default for every algorithm but dp-scd / sdca; LIBSVM,
    /// `--normalize-rows` and `--max-nonzeros` fits only with this flag.
    #[arg(long)]
    intercept: bool,
    /// Target epsilon (> 0) of the whole fit (private algorithms).
    #[arg(long, allow_negative_numbers = true)]
    epsilon: Option<f64>,
    /// Target delta, in (0, 1) (private algorithms).
    #[arg(long, allow_negative_numbers = true)]
    delta: Option<f64>,
    /// Passes over the data (CD: `p` coordinate updates each; SGD: `n / b` steps each;
    /// DP-GCD: one greedy iteration each). Default for the private algorithms on CSV
    /// input: the library's no-tuning rules (`dp_optim::auto`, printed under
    /// `hyperparameters`); otherwise 10.
    #[arg(long, allow_negative_numbers = true)]
    passes: Option<u64>,
    /// Step scale `gamma` (steps `gamma / M_j`, or `gamma / beta` for SGD). Default for
    /// dp-cd, dp-gcd and dp-sgd on CSV input: the rules' choice (1); otherwise 0.5.
    #[arg(long, allow_negative_numbers = true)]
    step: Option<f64>,
    /// Clipping threshold `C` (private algorithms). Default on CSV input: the rules'
    /// choice (printed); otherwise 1.
    #[arg(long, allow_negative_numbers = true)]
    clip: Option<f64>,
    /// DP-SGD / DP-SCD batch size (at most the number of training rows). Default on CSV
    /// input: the rules' round(sqrt(n)); otherwise 64 (DP-SGD, or all the rows when there
    /// are fewer) and 1 (DP-SCD, SDCA). Batches are drawn without replacement under
    /// replace-one neighbours and accounted with subsampling amplification (Wang, Balle
    /// & Kasiviswanathan 2019).
    #[arg(long, allow_negative_numbers = true)]
    batch_size: Option<u64>,
    /// Declared public bound `|x_ij| <= B`, chosen without looking at the data. Values
    /// beyond it are clipped to it (the output says how many); the smoothness constants
    /// follow from it, so no privacy is spent on them. Or `auto` (CSV input): per-column
    /// ranges estimated privately on a share of epsilon (printed), charged to the same
    /// ledger as the fit. Every CSV fit runs through the library pipeline
    /// `dp_erm::Pipeline`, which clips and scales each column to its range and folds the
    /// scaling into the model, so `predict` takes raw data (docs/pipeline.md).
    #[arg(long, allow_negative_numbers = true, value_name = "B|auto")]
    feature_bound: Option<BoundArg>,
    /// Regression (CSV input): clip the targets to a range and scale them, through the
    /// library pipeline `dp_erm::Pipeline`; the model predicts in your units. `Y`: the
    /// declared public bound `|y| <= Y`; `auto`: a range estimated privately on 15 % of
    /// epsilon, charged to the same ledger as the fit. Required for regression on CSV
    /// input.
    #[arg(long, allow_negative_numbers = true, value_name = "Y|auto")]
    target_bound: Option<BoundArg>,
    /// CSV input (the library pipeline): fit no intercept. The pipeline fits one by
    /// default (one more coordinate of the same private solver, no separate charge);
    /// LIBSVM, `--normalize-rows` and `--max-nonzeros` fits only with `--intercept`.
    #[arg(long, conflicts_with = "intercept")]
    no_intercept: bool,
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
    /// Split each coordinate sweep over a dense design into K fixed pieces run on the
    /// machine's cores (cd and dp-cd). Default: 2 for at least 32,768 rows, else 1 (a
    /// rule on n only, so a seeded fit gives the same bits on any machine; different K
    /// differ in the last bits).
    #[arg(long)]
    threads: Option<usize>,
    /// Where to write the model (JSON).
    #[arg(long)]
    model_out: PathBuf,
    /// Print one JSON object instead of text lines.
    #[arg(long)]
    json: bool,
}

/// A bound given on the command line: a number, or `auto` (estimated privately).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoundArg {
    /// Estimated privately by the library pipeline (charged).
    Auto,
    /// A declared public bound.
    Value(f64),
}

impl std::str::FromStr for BoundArg {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(BoundArg::Auto);
        }
        s.trim()
            .parse::<f64>()
            .map(BoundArg::Value)
            .map_err(|_| format!("{s:?} is neither `auto` nor a number (a declared public bound)"))
    }
}

impl FitArgs {
    /// The declared public feature bound, if a number was given.
    fn declared_bound(&self) -> Option<f64> {
        match self.feature_bound {
            Some(BoundArg::Value(b)) => Some(b),
            _ => None,
        }
    }
    /// True when the fit goes through the library pipeline (`dp_erm::Pipeline`) for
    /// any input (a CSV-only path: other formats get an error naming the flag).
    fn uses_pipeline(&self) -> bool {
        self.feature_bound == Some(BoundArg::Auto) || self.target_bound.is_some()
    }
    /// True when a CSV fit goes through the library pipeline: every CSV fit with a
    /// declared bound, with `--non-private-constants-from-data`, or with a non-private
    /// algorithm. Left on the direct solver path (not yet in the pipeline):
    /// `--normalize-rows` and `--max-nonzeros`, and the refusals of a private fit with
    /// neither a bound nor the non-private opt-in (they name the flags to pass).
    fn pipeline_takes_csv(&self) -> bool {
        !self.normalize_rows
            && self.max_nonzeros.is_none()
            && (self.feature_bound.is_some()
                || self.non_private_constants_from_data
                || matches!(self.algorithm, Algorithm::Cd | Algorithm::Sdca))
    }
}

/// Arguments of `dp-erm predict`.
#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// A model file written by `dp-erm fit`.
    #[arg(long)]
    model: PathBuf,
    /// Data to predict (same format and feature columns as the training file).
    #[arg(long)]
    data: PathBuf,
    /// CSV label column, if the file has one under another name than in training.
    #[arg(long)]
    target: Option<String>,
    /// Write one prediction per row here (CSV: `prediction`, the class as the training
    /// file wrote it or the predicted value, and for logistic models
    /// `probability_<positive label>`).
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

/// Runs `dp-erm fit`.
///
/// # Errors
/// Bad arguments, unreadable or malformed data, or a fit that fails; each error names
/// the problem (and the file, line and column for data errors).
pub fn run_fit(args: FitArgs) -> Result<()> {
    let out = fit_report(&args)?;
    out.print(args.json);
    Ok(())
}

/// What `fit` and `predict` print: `key = value` lines in the order they were added
/// (guarantee, scores, what was chosen, diagnostics), or one JSON object with the same
/// fields in the same order. Warnings are collected under `warnings` (one
/// `warning = ...` line each in text).
#[derive(Debug, Default, Clone)]
pub struct Report {
    entries: Vec<(String, serde_json::Value)>,
    /// Fields holding an object whose keys keep the order given (the columns' order),
    /// by their index in `entries` (`serde_json::Map` sorts its keys).
    ordered: Vec<(usize, Vec<(String, serde_json::Value)>)>,
    warnings: Vec<String>,
}

impl Report {
    /// Adds a field (a `null` value is kept in JSON and skipped in text).
    pub fn push(&mut self, key: &str, value: impl Into<serde_json::Value>) {
        self.entries.push((key.to_string(), value.into()));
    }
    /// Adds a field holding an object whose keys are printed in the order given (in
    /// text and JSON), e.g. one entry per feature column in the file's column order.
    pub fn push_ordered(&mut self, key: &str, pairs: Vec<(String, serde_json::Value)>) {
        let map: serde_json::Map<String, serde_json::Value> = pairs.iter().cloned().collect();
        self.ordered.push((self.entries.len(), pairs));
        self.entries
            .push((key.to_string(), serde_json::Value::Object(map)));
    }
    /// The JSON text of the field at `index`: its ordered object if it has one.
    fn json_text(&self, index: usize) -> String {
        match self.ordered.iter().find(|(i, _)| *i == index) {
            Some((_, pairs)) => format!(
                "{{{}}}",
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}:{v}", json!(k)))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            None => self.entries[index].1.to_string(),
        }
    }
    /// Adds a warning line.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.warnings.push(text.into());
    }
    /// The value of a field.
    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// The warnings, in the order they were added.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// One JSON object, fields in order, the warnings last (as an array).
    pub fn to_json(&self) -> String {
        let mut parts: Vec<String> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, (k, _))| format!("{}:{}", json!(k), self.json_text(i)))
            .collect();
        parts.push(format!("\"warnings\":{}", json!(self.warnings)));
        format!("{{{}}}", parts.join(","))
    }
    /// Prints the report (text lines or JSON) on standard output, and every warning as a
    /// `warning: ...` line on standard error, so that a user who sends the report to a
    /// file still sees them.
    pub fn print(&self, as_json: bool) {
        for w in &self.warnings {
            eprintln!("warning: {w}");
        }
        if as_json {
            println!("{}", self.to_json());
            return;
        }
        for (i, (k, v)) in self.entries.iter().enumerate() {
            match v {
                serde_json::Value::Object(_) => println!("{k} = {}", self.json_text(i)),
                serde_json::Value::String(s) => println!("{k} = {s}"),
                serde_json::Value::Null => {}
                serde_json::Value::Number(x) if x.is_f64() => {
                    println!("{k} = {}", num(x.as_f64().unwrap_or(f64::NAN)));
                }
                other => println!("{k} = {other}"),
            }
        }
        for w in &self.warnings {
            println!("warning = {w}");
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

fn fit_report(args: &FitArgs) -> Result<Report> {
    let format = format_of(&args.input.data, args.input.format)?;
    if let (Some(pos), Some(neg)) = (&args.input.positive, &args.input.negative) {
        if pos.trim() == neg.trim() {
            bail!(
                "--positive and --negative are both {:?}: they must name the two different \
                 classes of the label column",
                pos.trim()
            );
        }
    }
    if args.loss.classification() != args.input.positive.is_some() && args.input.positive.is_some()
    {
        bail!(
            "--positive / --negative name classes: use them with --loss logistic or squared-hinge"
        );
    }
    if args.batch_size.is_some()
        && !matches!(
            args.algorithm,
            Algorithm::DpSgd | Algorithm::DpScd | Algorithm::Sdca
        )
    {
        bail!("--batch-size applies to --algorithm dp-sgd, dp-scd and sdca only");
    }
    if args.uses_pipeline() || (format == Format::Csv && args.pipeline_takes_csv()) {
        return pipeline_path::fit_report(args, format);
    }
    let dual = matches!(args.algorithm, Algorithm::DpScd | Algorithm::Sdca);
    if dual {
        check_dual_args(args)?;
    }
    if !matches!(args.algorithm, Algorithm::Cd | Algorithm::Sdca) {
        if args.epsilon.is_none() || args.delta.is_none() {
            bail!("a private algorithm needs --epsilon and --delta");
        }
        if !dual && args.declared_bound().is_none() && !args.non_private_constants_from_data {
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
    if let Some(b) = args.declared_bound() {
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
    if args.normalize_rows && format == Format::Libsvm {
        bail!("--normalize-rows supports CSV input only: normalise the LIBSVM rows beforehand");
    }
    check_lambda(args)?;
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
    let (report, model) = match data {
        Data::Dense(d, names, target) => {
            check_unique_names(&args.input.data, &names, &target)?;
            check_labels(&args.input.data, args.loss, labels.is_some(), d.y())?;
            let d = if args.normalize_rows {
                let (x, y) = d.into_parts();
                Dataset::new(normalize_rows(&x)?, y)?
            } else {
                d
            };
            let (j, m) = fit_data(args, d, Some(&names), seed)?;
            (j, (m, Some(names), Some(target)))
        }
        Data::Sparse(d) => {
            check_labels(&args.input.data, args.loss, false, d.y())?;
            let (j, m) = fit_data(args, d, None, seed)?;
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
        feature_bound: args.declared_bound(),
        normalize_rows: args.normalize_rows,
        model,
    };
    let text = serde_json::to_string_pretty(&file)?;
    write_atomic(&args.model_out, text.as_bytes())?;
    Ok(report)
}

/// `fit` refuses a CSV whose header names a column twice: the model file finds its
/// columns by name, so `predict` could not tell them apart.
/// The penalty strength: finite, >= 0, and 0 without a penalty (both fit paths).
pub(crate) fn check_lambda(args: &FitArgs) -> Result<()> {
    if !(args.lambda.is_finite() && args.lambda >= 0.0) {
        bail!(
            "invalid --lambda {}: the penalty strength must be finite and >= 0",
            args.lambda
        );
    }
    if args.penalty == PenaltyArg::None && args.lambda != 0.0 {
        bail!("--lambda given with --penalty none");
    }
    Ok(())
}

fn check_unique_names(path: &Path, names: &[String], target: &str) -> Result<()> {
    let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
    all.push(target);
    for (k, a) in all.iter().enumerate() {
        if let Some(j) = all[..k].iter().position(|b| b == a) {
            bail!(
                "{}: line 1: the header names column {a:?} twice (columns {j} and {k}, \
                 0-based counting the label column): rename one, since `predict` finds \
                 the columns by name",
                path.display()
            );
        }
    }
    Ok(())
}

/// Classification labels without `--positive / --negative` must be the numbers -1 and
/// +1; anything else (0/1 labels) is refused here with the row and the fix, before any
/// solver sees it.
fn check_labels(path: &Path, loss: LossArg, mapped: bool, y: &[f64]) -> Result<()> {
    if !loss.classification() || mapped {
        return Ok(());
    }
    if let Some(i) = y.iter().position(|&v| v != 1.0 && v != -1.0) {
        let hint = if y.iter().all(|&v| v == 0.0 || v == 1.0) {
            " (the labels are 0 and 1: pass --positive 1 --negative 0)"
        } else {
            " (name the classes with --positive TEXT --negative TEXT)"
        };
        bail!(
            "{}: data row {} (1-based, header not counted): label {} is not -1 or +1, which \
             --loss {} needs without --positive / --negative{hint}",
            path.display(),
            i + 1,
            num(y[i]),
            loss.to_possible_value()
                .map_or("?".into(), |v| v.get_name().to_string())
        );
    }
    Ok(())
}

/// Writes through a temporary file and a rename, so that a failed run leaves any
/// previous file intact.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp-write");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// The run-time loss: the library's choice type (`dp_models::choice::AnyLoss`), which
/// forwards every `Loss` method, the SIMD kernels and the residual form included, so a
/// fit from the command line runs the typed code (before issue 25 a local copy here
/// forwarded only `value` and `derivative`, and every pass ran the scalar defaults).
fn any_loss(arg: LossArg) -> Result<AnyLoss> {
    Ok(AnyLoss::from_kind(match arg {
        LossArg::Logistic => LossKind::Logistic,
        LossArg::Squared => LossKind::Squared,
        LossArg::SquaredHinge => LossKind::SquaredHinge,
        LossArg::Huber => LossKind::Huber,
    }))
}

/// The penalty on `p` features (the library's `AnyPenalty`), the intercept (if any, the
/// last coordinate) unpenalised.
fn any_penalty(arg: PenaltyArg, lambda: f64, p: usize, intercept: bool) -> Result<AnyPenalty> {
    let kind = match arg {
        PenaltyArg::None => PenaltyKind::None,
        PenaltyArg::L1 => PenaltyKind::L1,
        PenaltyArg::L2 => PenaltyKind::L2,
        PenaltyArg::ElasticNet => PenaltyKind::ElasticNet,
    };
    let weights = (intercept && arg != PenaltyArg::None).then(|| {
        let mut w = vec![1.0; p];
        w.push(0.0);
        w
    });
    Ok(AnyPenalty::from_kind(kind, lambda, weights)?)
}

/// Values of each column beyond `|x| <= bound` (counted before clipping).
fn clipped_per_column<D: Design>(x: &D, bound: f64) -> Vec<usize> {
    (0..x.n_features())
        .map(|j| {
            let mut k = 0;
            x.for_each_in_col(j, |_, v| k += usize::from(v.abs() > bound));
            k
        })
        .collect()
}

/// The default number of pieces each dense coordinate sweep is split into
/// (`CdParams::threads`): 2 for columns of at least 32,768 rows (where the sweep is
/// long enough to pay for a second core, now a persistent worker: Electricity's 45,312
/// rows, docs/performance.md "The user's path"), else 1. A rule on the public `n` only, never on the machine's cores, so a seeded fit
/// gives the same bits on any machine.
pub fn default_threads(n_rows: usize, dense: bool) -> usize {
    if dense && n_rows >= 32_768 {
        2
    } else {
        1
    }
}

/// Clips, splits, fits and scores; returns the report and the releasable model.
fn fit_data<D>(
    args: &FitArgs,
    mut data: Dataset<D>,
    names: Option<&[String]>,
    seed: Option<u64>,
) -> Result<(Report, LinearModel)>
where
    D: ColumnKernels + AppendConstantColumn + SelectRows + ClipValues,
{
    let (n_all, p) = (data.n_samples(), data.n_features());
    let total = n_all * p;
    if let Some(b) = args.declared_bound() {
        // The constants and the row-norm bound grow as p B^2: refuse a bound for which
        // they are not finite numbers instead of reporting `inf`.
        let row_sq = (p as f64 + 1.0) * b * b;
        if !row_sq.is_finite() {
            bail!(
                "invalid --feature-bound {}: with {p} features the squared row-norm bound \
                 p B^2 overflows; declare the bound your features really have",
                num(b)
            );
        }
    }
    let per_column = args
        .declared_bound()
        .map(|b| clipped_per_column(data.x(), b));
    let clipped = match args.declared_bound() {
        Some(b) => Some(clip_to_bound(&mut data, b)?),
        None => None,
    };
    let dense = names.is_some();
    let threads = match args.threads {
        Some(0) => bail!("invalid --threads 0: at least one piece per sweep"),
        Some(t) => t,
        None => default_threads(n_all, dense),
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
    let public_m = args.declared_bound().map(|b| {
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
    let defaults_note: Option<String>;
    let fit: Fitted = match args.algorithm {
        Algorithm::Cd => {
            let (passes, step) = (args.passes.unwrap_or(10), args.step.unwrap_or(0.5));
            defaults_note = Some(format!(
                "passes {passes}, step scale {step} ({}), threads {threads}",
                given_or_default(args.passes.is_some() && args.step.is_some())
            ));
            let solver = CdParams::new(loss, penalty)
                .passes(passes)
                .step_scale(step)
                .smoothness(smoothness.clone())
                .threads(threads)
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
            let solver = match args.declared_bound() {
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
                        "passes {passes}, step scale {step}, clip {}, threads {threads} (given or chosen by \
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
                        .threads(threads)
                        .build()?
                }
                _ => {
                    let (passes, step, clip) = (
                        args.passes.unwrap_or(10),
                        args.step.unwrap_or(0.5),
                        args.clip.unwrap_or(1.0),
                    );
                    defaults_note = Some(format!(
                        "passes {passes}, step scale {step}, clip {}, threads {threads} ({})",
                        num(clip),
                        given_or_default(!missing)
                    ));
                    DpCdParams::new(loss, penalty)
                        .epsilon(args.epsilon.unwrap_or(f64::NAN))
                        .delta(args.delta.unwrap_or(f64::NAN))
                        .passes(passes)
                        .step_scale(step)
                        .clip(clip)
                        .smoothness(smoothness.clone())
                        .allow_non_private_constants(args.non_private_constants_from_data)
                        .coordinate_order(order)
                        .row_support(support)
                        .threads(threads)
                        .build()?
                }
            };
            run(&solver, train_fit, seed)?
        }
        Algorithm::DpGcd => {
            let (passes, step, clip) = (
                args.passes.unwrap_or(10),
                args.step.unwrap_or(0.5),
                args.clip.unwrap_or(1.0),
            );
            let (rule, rule_name) = if args.penalty == PenaltyArg::None {
                (SelectionRule::GsL, "GS-L")
            } else {
                (SelectionRule::GsR, "GS-r")
            };
            defaults_note = Some(format!(
                "passes {passes} (greedy iterations), step scale {step}, clip {}, selection \
                 rule {rule_name}, zCDP variant ({})",
                num(clip),
                given_or_default(
                    args.passes.is_some() && args.step.is_some() && args.clip.is_some()
                )
            ));
            let solver = DpGcdParams::new(loss, penalty)
                .epsilon(args.epsilon.unwrap_or(f64::NAN))
                .delta(args.delta.unwrap_or(f64::NAN))
                .passes(passes)
                .step_scale(step)
                .clip(clip)
                .variant(Variant::Zcdp)
                .rule(rule)
                .smoothness(smoothness.clone())
                .allow_non_private_constants(args.non_private_constants_from_data)
                .build()?;
            run(&solver, train_fit, seed)?
        }
        Algorithm::DpSgd => {
            // beta <= c max_i ||x_i||^2 <= c (p B^2 + intercept).
            let beta = args
                .declared_bound()
                .map(|b| c * (p as f64 * b * b + if args.intercept { 1.0 } else { 0.0 }));
            let (passes, step, clip) = (
                args.passes.unwrap_or(10),
                args.step.unwrap_or(0.5),
                args.clip.unwrap_or(1.0),
            );
            let batch = batch_size(args.batch_size, train_fit.n_samples())?;
            defaults_note = Some(format!(
                "passes {passes} (epochs), step scale {step}, clip {}, batch size {batch} ({})",
                num(clip),
                given_or_default(
                    args.passes.is_some()
                        && args.step.is_some()
                        && args.clip.is_some()
                        && args.batch_size.is_some()
                )
            ));
            let solver = DpSgdParams::new(loss, penalty)
                .epsilon(args.epsilon.unwrap_or(f64::NAN))
                .delta(args.delta.unwrap_or(f64::NAN))
                .passes(passes)
                .step_scale(step)
                .clip(clip)
                .batch_size(batch)
                .smoothness(match beta {
                    Some(beta) => GlobalSmoothness::Given(Tagged::public(beta)),
                    None => GlobalSmoothness::FromData,
                })
                .allow_non_private_constants(args.non_private_constants_from_data)
                .build()?;
            run(&solver, train_fit, seed)?
        }
        Algorithm::DpScd | Algorithm::Sdca => {
            let batch = args.batch_size.unwrap_or(1);
            defaults_note = Some(if args.algorithm == Algorithm::DpScd {
                format!(
                    "passes {} (epochs), mini-batch {batch}, clip {} ({})",
                    args.passes.unwrap_or(10),
                    num(args.clip.unwrap_or(1.0)),
                    given_or_default(
                        args.passes.is_some() && args.clip.is_some() && args.batch_size.is_some()
                    )
                )
            } else {
                format!(
                    "passes {} (epochs), mini-batch {batch} ({})",
                    args.passes.unwrap_or(10),
                    given_or_default(args.passes.is_some() && args.batch_size.is_some())
                )
            });
            fit_dual(args, train_fit, seed)?
        }
    };
    let solver_seconds = fit.diagnostics.seconds;
    let model = if args.intercept {
        fit.model.split_intercept()?
    } else {
        fit.model
    };
    // The report: the guarantee, the scores, what was chosen, the diagnostics.
    let mut out = Report::default();
    let n_train = train.n_samples();
    match &model.privacy {
        Some(pr) => {
            out.push("epsilon", pr.guarantee.epsilon);
            out.push("delta", pr.guarantee.delta);
            out.push("adjacency", pr.guarantee.adjacency.name());
            out.push("accounting", pr.guarantee.how.clone());
            if let dp_optim::SolverPlan::DpCd(plan) = &pr.plan {
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
            out.push("uses_non_private_constants", pr.uses_non_private_constants);
            if pr.guarantee.delta * n_train as f64 >= 1.0 {
                out.warn(format!(
                    "delta = {} is at least 1/n = 1/{n_train}: a mechanism may then \
                     publish one whole record and still meet (epsilon, delta); choose \
                     delta well below 1/n (e.g. 1/n^2 = {})",
                    num(pr.guarantee.delta),
                    num(1.0 / (n_train as f64 * n_train as f64))
                ));
            }
        }
        None => {
            out.push("privacy", "none: this algorithm is not private");
        }
    }
    if let Some(test) = &test {
        out.push("n_test", test.n_samples());
        for (k, v) in score(&model, test, args.loss)? {
            out.push(k, v);
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
    out.push("algorithm", model.algorithm.clone());
    out.push("loss", loss.name());
    out.push(
        "penalty",
        format!("{penalty_name} (lambda = {})", num(args.lambda)),
    );
    out.push(
        "hyperparameters",
        defaults_note.unwrap_or_else(|| "see --help".to_string()),
    );
    out.push("n_train", n_train);
    out.push("p", p);
    match args.declared_bound() {
        Some(b) => out.push(
            "feature_bound",
            format!("|x| <= {} (declared public bound)", num(b)),
        ),
        None => out.push(
            "feature_bound",
            "none (constants computed from the data without privacy)",
        ),
    }
    if args.intercept {
        out.push("intercept", model.intercept);
    } else {
        out.push(
            "intercept",
            "none: the model has no intercept (pass --intercept to fit one)",
        );
    }
    out.push("model_out", args.model_out.display().to_string());
    if let (Some(k), Some(b)) = (clipped, args.declared_bound()) {
        out.push(
            "clipped",
            format!(
                "{k} of {total} values clipped to the declared bound |x| <= {} (a count from the data, not private: do not publish)",
                num(b)
            ),
        );
    }
    if let (Some(cols), Some(b)) = (&per_column, args.declared_bound()) {
        let name = |j: usize| {
            names
                .and_then(|n| n.get(j).cloned())
                .unwrap_or_else(|| format!("feature {}", j + 1))
        };
        let per = cols
            .iter()
            .enumerate()
            .map(|(j, &k)| (name(j), json!(k)))
            .collect();
        out.push_ordered("clipped_per_column", per);
        for (j, &k) in cols.iter().enumerate() {
            if k * 10 > n_all {
                out.warn(format!(
                    "column {:?}: {k} of {n_all} values ({:.0} %) were beyond |x| <= {} and \
                     clipped; the bound may be too small for this column (a count from \
                     the data, not private: do not publish)",
                    name(j),
                    100.0 * k as f64 / n_all as f64,
                    num(b)
                ));
            }
        }
    }
    if let (Some(c), Some(k)) = (projected, args.max_nonzeros) {
        out.push(
            "projected",
            format!(
                "{c} of {n_all} records had more than --max-nonzeros {k} non-zero features \
                 and kept their {k} largest in magnitude (a count from the data, not \
                 private: do not publish)"
            ),
        );
    }
    out.push("solver_seconds", solver_seconds);
    if seed.is_some() {
        out.push(
            "note",
            "--seed given: the run is reproducible, and the seed replays the noise; it is not in the model file, keep it secret",
        );
    }
    Ok((out, model))
}

/// How a set of hyperparameters was chosen.
fn given_or_default(all_given: bool) -> &'static str {
    if all_given {
        "given"
    } else {
        "given or the defaults of --help"
    }
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
            "--algorithm {name} solves the dual of an L2-penalised problem, which needs \
             strong convexity: pass --penalty l2 --lambda L with L > 0 (the paper uses 1e-4)"
        );
    }
    if !matches!(args.loss, LossArg::Squared | LossArg::Logistic) {
        bail!(
            "--algorithm {name} supports --loss squared or logistic (the dual coordinate steps \
             exist for these losses only)"
        );
    }
    if args.intercept {
        bail!(
            "--algorithm {name} fits no intercept (the dual needs the same penalty on every \
             coefficient): drop --intercept, or add a constant column to the data yourself \
             (it then counts in the row norm and is penalised)"
        );
    }
    if args.declared_bound().is_some() || args.non_private_constants_from_data {
        bail!(
            "--algorithm {name} needs no smoothness constants: drop --feature-bound / \
             --non-private-constants-from-data (DP-SCD needs rows of L2 norm <= 1 instead: \
             --normalize-rows)"
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
                            "DP-SCD needs every row to have L2 norm at most 1: pass \
                             --normalize-rows to divide each row by its norm",
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

/// Runs `dp-erm predict`.
///
/// # Errors
/// An unreadable or foreign model file, data that do not match its schema (columns,
/// labels), or an unwritable `--out` file.
pub fn run_predict(args: PredictArgs) -> Result<()> {
    let out = predict_report(&args)?;
    out.print(args.json);
    Ok(())
}

fn predict_report(args: &PredictArgs) -> Result<Report> {
    let text = std::fs::read_to_string(&args.model)
        .with_context(|| format!("reading the model file {}", args.model.display()))?;
    if pipeline_path::is_pipeline_file(&text) {
        return pipeline_path::predict_report(args, &text);
    }
    let file: ModelFile = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a model file written by `dp-erm fit`",
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
    let mut out = Report::default();
    for (k, v) in scores {
        out.push(k, v);
    }
    if out.get("accuracy").is_none() && out.get("mse").is_none() {
        out.push("score", "none: the file has no label column");
    }
    out.push("rows", n);
    if let Some(path) = &args.out {
        let csv = predictions_csv(&file, &z);
        write_atomic(path, csv.as_bytes())?;
        out.push("predictions_written_to", path.display().to_string());
    } else {
        out.push("note", "predictions not written: pass --out FILE");
    }
    Ok(out)
}

/// The `--out` file: one row per data row. Classification: the predicted class as the
/// training file wrote it (its label text for a CSV with `--positive / --negative`, else
/// `1` / `-1`) and, for logistic models, `probability_<positive label>`, the
/// probability of the positive class. Regression: the predicted value.
fn predictions_csv(file: &ModelFile, z: &[(f64, Option<f64>)]) -> String {
    predictions_csv_for(file.labels.as_ref(), file.loss.classification(), z)
}

/// [`predictions_csv`] from the label texts and the task.
fn predictions_csv_for(
    labels: Option<&(String, String)>,
    classification: bool,
    z: &[(f64, Option<f64>)],
) -> String {
    let (pos, neg) = match labels {
        Some((p, n)) => (p.clone(), n.clone()),
        None => ("1".to_string(), "-1".to_string()),
    };
    let with_probability = z.first().is_some_and(|(_, p)| p.is_some());
    let mut csv = if with_probability {
        format!("prediction,{}\n", csv_field(&format!("probability_{pos}")))
    } else {
        String::from("prediction\n")
    };
    for (pred, prob) in z {
        let shown = if classification {
            csv_field(if *pred > 0.0 { &pos } else { &neg })
        } else {
            format!("{pred}")
        };
        match prob {
            Some(p) => csv.push_str(&format!("{shown},{p}\n")),
            None => csv.push_str(&format!("{shown}\n")),
        }
    }
    csv
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use dp_models::{Huber, SquaredHinge, L1};

    /// The run-time loss must run each loss's own kernels: the scalar defaults of the
    /// `Loss` trait sum in another order (and are 3.5-4x slower), so a hook left
    /// unforwarded shows up here as a different bit pattern or a wrong flag.
    #[test]
    fn any_loss_forwards_the_fast_hooks() {
        let n = 1000;
        let x: Vec<f64> = (0..n)
            .map(|i| ((i * 7919 % 1000) as f64 / 500.0) - 1.0)
            .collect();
        let z: Vec<f64> = (0..n)
            .map(|i| ((i * 31 % 101) as f64 / 25.0) - 2.0)
            .collect();
        let y: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        fn check<L: Loss + Copy>(typed: L, any: AnyLoss, x: &[f64], z: &[f64], y: &[f64]) {
            assert_eq!(
                typed.is_residual_loss(),
                any.is_residual_loss(),
                "{}",
                typed.name()
            );
            assert_eq!(typed.is_smooth(), any.is_smooth());
            for clip in [None, Some(0.3)] {
                assert_eq!(
                    typed.dense_col_grad_sum(x, z, Some(y), clip).to_bits(),
                    any.dense_col_grad_sum(x, z, Some(y), clip).to_bits(),
                    "{}",
                    typed.name()
                );
                let (mut z1, mut z2) = (z.to_vec(), z.to_vec());
                assert_eq!(
                    typed
                        .dense_step_grad_sum((x, 0.25), x, &mut z1, Some(y), clip)
                        .to_bits(),
                    any.dense_step_grad_sum((x, 0.25), x, &mut z2, Some(y), clip)
                        .to_bits()
                );
                assert_eq!(z1, z2);
            }
            let (mut d1, mut d2) = (vec![0.0; z.len()], vec![0.0; z.len()]);
            typed.derivatives(z, y, &mut d1);
            any.derivatives(z, y, &mut d2);
            assert!(d1.iter().zip(&d2).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        check(Logistic, any_loss(LossArg::Logistic).unwrap(), &x, &z, &y);
        check(
            Squared::half(),
            any_loss(LossArg::Squared).unwrap(),
            &x,
            &z,
            &y,
        );
        check(
            SquaredHinge,
            any_loss(LossArg::SquaredHinge).unwrap(),
            &x,
            &z,
            &y,
        );
        let huber = Huber::new(1.0).unwrap();
        check(huber, any_loss(LossArg::Huber).unwrap(), &x, &z, &y);
        assert!(any_loss(LossArg::Squared).unwrap().is_residual_loss());
    }

    /// A seeded CD fit through the run-time choice is bit for bit the typed fit.
    #[test]
    fn cd_through_any_loss_is_the_typed_fit() {
        let (n, p) = (500, 4);
        let x: Vec<f64> = (0..n * p)
            .map(|k| ((k * 7919 % 1000) as f64 / 500.0) - 1.0)
            .collect();
        let y: Vec<f64> = (0..n).map(|i| 2.0 * x[i * p] - x[i * p + 1]).collect();
        let data = Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap();
        let typed = CdParams::new(Squared::half(), L1::new(0.01).unwrap())
            .passes(3)
            .build()
            .unwrap()
            .fit_seeded(&data, 7)
            .unwrap();
        let any = CdParams::new(
            any_loss(LossArg::Squared).unwrap(),
            any_penalty(PenaltyArg::L1, 0.01, p, false).unwrap(),
        )
        .passes(3)
        .build()
        .unwrap()
        .fit_seeded(&data, 7)
        .unwrap();
        let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&typed.model.coefficients),
            bits(&any.model.coefficients)
        );
    }
}
