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
//! Every fit runs the library pipeline `dp_erm::Pipeline` (module `pipeline_path`):
//! CSV input as a dense design, LIBSVM input as a sparse one (kept sparse: declared
//! bounds, no centring), `--normalize-rows` and `--max-nonzeros` as pipeline options;
//! declared, private (`auto`, dense input) or, by name, non-private ranges, charged with
//! the fit, the library's no-tuning hyperparameters, a model that predicts on raw rows
//! (docs/pipeline.md). `predict` still reads the model files of the direct solver path
//! that earlier versions wrote (kind `dp-erm linear model v1`).
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
use dp_models::io::{
    load_csv_data, load_libsvm, read_csv_for_prediction, CsvOptions, FeatureCount, LabelMap, Target,
};
use dp_models::metrics::{accuracy, log_loss, mean_squared_error};
use dp_models::preprocess::{clip_to_bound, normalize_rows};
use dp_models::{ClipValues, Dataset, DenseDesign, Design, SparseDesign};
use dp_optim::LinearModel;
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
    /// privately with the others under the same guarantee). CSV fits fit one by default
    /// for every algorithm but dp-scd / sdca; LIBSVM, `--normalize-rows` and
    /// `--max-nonzeros` fits only with this flag.
    #[arg(long)]
    intercept: bool,
    /// Target epsilon (> 0) of the whole fit (private algorithms).
    #[arg(long, allow_negative_numbers = true)]
    epsilon: Option<f64>,
    /// Target delta, in (0, 1) (private algorithms).
    #[arg(long, allow_negative_numbers = true)]
    delta: Option<f64>,
    /// Passes over the data (CD: `p` coordinate updates each; SGD: `n / b` steps each;
    /// DP-GCD: one greedy iteration each). Default for the private algorithms: the
    /// library's no-tuning rules (`dp_optim::auto`, printed under `hyperparameters`);
    /// for cd and sdca 10.
    #[arg(long, allow_negative_numbers = true)]
    passes: Option<u64>,
    /// Step scale `gamma` (steps `gamma / M_j`, or `gamma / beta` for SGD). Default for
    /// dp-cd, dp-gcd and dp-sgd: the rules' choice (1); for cd 0.5.
    #[arg(long, allow_negative_numbers = true)]
    step: Option<f64>,
    /// Clipping threshold `C` (private algorithms). Default: the rules' choice
    /// (printed).
    #[arg(long, allow_negative_numbers = true)]
    clip: Option<f64>,
    /// DP-SGD / DP-SCD batch size (at most the number of training rows). Default: the
    /// rules' choice (printed); 1 for SDCA. Batches are drawn without replacement under
    /// replace-one neighbours and accounted with subsampling amplification (Wang, Balle
    /// & Kasiviswanathan 2019).
    #[arg(long, allow_negative_numbers = true)]
    batch_size: Option<u64>,
    /// Declared public bound `|x_ij| <= B`, chosen without looking at the data. Values
    /// beyond it are clipped to it (the output says how many); the smoothness constants
    /// follow from it, so no privacy is spent on them. Or `auto` (CSV input; refused for
    /// LIBSVM, a sparse design, saying why): per-column ranges estimated privately on a
    /// share of epsilon (printed), charged to the same ledger as the fit. Every fit runs
    /// through the library pipeline `dp_erm::Pipeline`, which clips and scales each
    /// column to its range and folds the scaling into the model, so `predict` takes raw
    /// data (docs/pipeline.md).
    #[arg(long, allow_negative_numbers = true, value_name = "B|auto")]
    feature_bound: Option<BoundArg>,
    /// Regression: clip the targets to a range and scale them, through the library
    /// pipeline `dp_erm::Pipeline`; the model predicts in your units. `Y`: the declared
    /// public bound `|y| <= Y`; `auto`: a range estimated privately on 15 % of epsilon,
    /// charged to the same ledger as the fit. Required for a private regression.
    #[arg(long, allow_negative_numbers = true, value_name = "Y|auto")]
    target_bound: Option<BoundArg>,
    /// Fit no intercept. CSV fits have one by default (one more coordinate of the same
    /// private solver, no separate charge); LIBSVM, `--normalize-rows` and
    /// `--max-nonzeros` fits only with `--intercept`.
    #[arg(long, conflicts_with = "intercept")]
    no_intercept: bool,
    /// Declared public bound: every record has at most K non-zero features, chosen
    /// without looking at the data (e.g. the numeric columns plus one per one-hot
    /// encoded column). dp-cd then charges each pass as the K releases one record can
    /// move instead of all p (the intercept column counts as one more), which lowers
    /// the noise at the same epsilon, and visits the coordinates in a fresh random
    /// permutation per pass. A record with more non-zeros keeps its K largest in
    /// magnitude after the clipping and scaling (the others become 0: a fixed
    /// per-record map, so the guarantee holds; the output says how many training
    /// records, a non-private count). The columns are not centred. dp-cd only.
    #[arg(long)]
    max_nonzeros: Option<usize>,
    /// Take each column's range (and a regression target's) from the training data
    /// WITHOUT privacy (as the papers' experiments take their constants). The guarantee
    /// then does not cover what they reveal, and the model file says so. Without this
    /// flag, `--feature-bound` (or `--normalize-rows`) is required.
    #[arg(long)]
    non_private_constants_from_data: bool,
    /// Divide every row by its L2 norm (zero rows unchanged), so that `||x_i|| <= 1`, as
    /// DP-SCD's sensitivity requires. Each row is rescaled using that row alone, so the
    /// map is applied record by record and reads nothing else: replacing one record
    /// changes one normalised record, and the guarantee holds for the normalised data as
    /// for the raw data. Every value is then in [-1, 1], the public bound used when no
    /// `--feature-bound` is given. The model file records it and `predict` normalises
    /// new rows the same way.
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
        Err(e) => bail!(
            "{e}: pass --format csv, or --format libsvm with --n-features P (the public \
             number of features)"
        ),
    }
}

/// `predict` reads new data in the model's format. A file whose extension names the
/// other format (`.csv` for a LIBSVM model, `.libsvm` / `.svm` for a CSV one) is refused
/// with both formats named, instead of failing on its first line in the wrong parser
/// (a CSV header read as a LIBSVM label). Files with another extension are read in the
/// model's format.
fn check_predict_format(path: &Path, model: Format) -> Result<()> {
    let by_name = match dp_models::io::Format::from_path(path) {
        Ok(dp_models::io::Format::Csv) => Format::Csv,
        Ok(dp_models::io::Format::Libsvm) => Format::Libsvm,
        _ => return Ok(()),
    };
    if by_name != model {
        let name = |f: Format| match f {
            Format::Csv => "CSV",
            Format::Libsvm => "LIBSVM",
        };
        bail!(
            "{}: the model was fitted on {} data and predicts from files in that format, \
             but this file's extension says {}; give the new rows as {} with the training \
             file's features",
            path.display(),
            name(model),
            name(by_name),
            name(model)
        );
    }
    Ok(())
}

/// Why a LIBSVM fit needs `--n-features` (also listed with the other missing flags
/// before the data are read, `pipeline_path::check_args`).
pub(crate) const NEEDS_N_FEATURES: &str = "LIBSVM input needs --n-features P, the public \
    number of features chosen without looking at the data (e.g. the data set's documented \
    dimension): P sets the number of coefficients, releases and the noise, so taking it \
    from the largest index in the file would reveal whether the one record holding that \
    index is in the data";

/// A loaded file: dense with feature names, or sparse.
enum Data {
    Dense(Dataset<DenseDesign>, Vec<String>, String),
    Sparse(Dataset<SparseDesign>),
}

/// Loads the training file. Every value of it that shapes the release plan is public:
/// a CSV's columns are its header row (a public schema: the header is not a record), a
/// LIBSVM file's width is the declared `--n-features` (never the largest index present,
/// which one record can move: docs/privacy/threat-model.md). The flags that do not
/// apply to the format were refused before (`pipeline_path::check_args`).
fn load(
    path: &Path,
    format: Format,
    n_features: Option<usize>,
    target: &Option<String>,
    labels: Option<(String, String)>,
) -> Result<Data> {
    match format {
        Format::Csv => {
            let opts = CsvOptions {
                target: Target::parse(target.as_deref()),
                labels: LabelMap::from_pair(labels),
                ..CsvOptions::default()
            };
            let csv = load_csv_data(path, &opts)?;
            Ok(Data::Dense(csv.dataset, csv.feature_names, csv.target_name))
        }
        Format::Libsvm => {
            let Some(p) = n_features else {
                bail!("{NEEDS_N_FEATURES}");
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
                serde_json::Value::Number(x) => match x.as_f64().filter(|_| x.is_f64()) {
                    Some(f) => println!("{k} = {}", num(f)),
                    None => println!("{k} = {x}"),
                },
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
    // Every fit, CSV or LIBSVM, dense or sparse, runs the library pipeline.
    pipeline_path::fit_report(args, format)
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
    check_predict_format(&args.data, file.format)?;
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
    use dp_models::choice::{AnyLoss, AnyPenalty};
    use dp_models::{Huber, Logistic, Loss, Squared, SquaredHinge, L1};
    use dp_optim::{CdParams, Solver};

    /// The run-time loss of a `--loss` value: the library's choice type, as the
    /// pipeline builds it from the kind the command line maps to.
    fn any_loss(arg: LossArg) -> Result<AnyLoss> {
        Ok(AnyLoss::from_kind(pipeline_path::loss_kind(arg)))
    }

    /// The run-time penalty of a `--penalty` value on `p` features (the intercept, if
    /// any, the last coordinate and unpenalised).
    fn any_penalty(arg: PenaltyArg, lambda: f64, p: usize, intercept: bool) -> Result<AnyPenalty> {
        let weights = (intercept && arg != PenaltyArg::None).then(|| {
            let mut w = vec![1.0; p];
            w.push(0.0);
            w
        });
        Ok(AnyPenalty::from_kind(
            pipeline_path::penalty_kind(arg),
            lambda,
            weights,
        )?)
    }

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
