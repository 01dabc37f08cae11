//! The pipeline: data -> bounds -> clipping and scaling -> split -> fit -> releasable
//! model with the scaling folded in -> scores.
//!
//! # Privacy of the whole pipeline
//!
//! **Neighbouring relation:** replace-one (datasets of the same public size that differ
//! in one record), the relation of every solver the pipeline runs.
//!
//! **What is released:** the [`PipelineModel`] — the coefficients and intercept in the
//! user's units, the clipping bounds, the plan and the combined ledger. Everything else
//! in a [`FitReport`] (`diagnostics`) is computed from the data without privacy.
//!
//! **Steps and their cost, all charged to one [`Ledger`] before anything is drawn:**
//! 1. The split into training and test rows uses a permutation drawn independently of the
//!    data: free. Only the training rows are used by steps 2-4; the test rows only feed
//!    the non-private scores.
//! 2. Bounds: declared ones are public (free); private ones are one or two
//!    exponential-mechanism releases per feature column ([`feature_range_rule`]) and two
//!    for the target ([`crate::bounds`]), charged as
//!    `Charge::ExponentialMechanism`. Their `(eps_pre, delta_pre)` is the better of basic
//!    composition of the pure releases (`delta_pre = 0`) and the zCDP composition
//!    (`eps^2 / 8` each, Bun & Steinke 2016 Prop 1.3 at `delta_pre = share * delta`):
//!    the per-release epsilons are chosen so that the ledger's own guarantee of these
//!    charges is at most `share * epsilon`.
//! 3. Clipping each value to its bound and dividing by it is applied to each record
//!    alone with public (declared) or already released (private) bounds: a record-wise
//!    map, so replacing one record changes one scaled record and the fit's guarantee
//!    holds for the raw data.
//! 4. The fit runs on the scaled data at `(epsilon - eps_pre, delta - delta_pre)`. Its
//!    constants follow from the scaled bound 1 (public), or, for DP-CD's no-tuning
//!    defaults, are estimated privately inside the fit's own budget.
//! 5. The total is basic composition (Dwork & Roth 2014, Thm 3.16):
//!    `(eps_pre + eps_fit, delta_pre + delta_fit)`, at most the target; the combined
//!    ledger holds every charge of steps 2 and 4.
//! 6. Folding the scaling into the coefficients is post-processing.
//!
//! **Intercept.** On by default for the primal algorithms: it is the coefficient of a
//! constant column, fitted by the same private solver as one more coordinate, its
//! releases counted in the plan and charged with the rest (`dp_optim::model`), so it adds
//! no separate charge — its noise shares the calibrated budget. The dual algorithms
//! (DP-SCD, SDCA) fit none: their dual needs the same L2 penalty on every coefficient;
//! [`FitReport::chosen`] says so.

use std::borrow::Cow;

use crate::bounds::{
    private_bound_epsilon, private_feature_range, private_range, BoundGrid, RangeRule,
};
use crate::design::PipelineDesign;
use crate::error::{invalid, PipelineError, Result};
use dp_accounting::calibrate::Accountant;
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::Delta;
use dp_models::choice::{AnyDualLoss, AnyLoss, AnyPenalty, LossKind, PenaltyKind};
use dp_models::constants::Tagged;
use dp_models::metrics::{accuracy, log_loss, mean_squared_error};
use dp_models::split::train_test_split;
use dp_models::{Dataset, Design, Loss, L2};
use dp_optim::auto::{
    constant_prediction, dp_gcd_defaults, dp_scd_defaults, dp_sgd_defaults, AlgorithmDefaults,
    PublicBounds,
};
use dp_optim::dp_gcd::{DpGcdParams, SelectionRule, Variant};
use dp_optim::{
    with_intercept_column, Accounting, Adjacency, CdParams, DpCdParams, DpScdParams, DpSgdParams,
    DualNoise, FitWarning, Fitted, GlobalSmoothness, Guarantee, LinearModel, RowSupport,
    SdcaParams, Smoothness, Solver, SolverPlan,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

mod model;
mod rules;
mod solver;
mod stages;

use model::score;
pub use rules::{feature_range_rule, feature_share_rule};
use rules::{plan_preprocessing, reliable_margin, reliable_margin_of, PrePlan};
use stages::ScaledShape;

/// What is predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// Labels in `{-1, +1}` (the loaders map the user's two label texts to them).
    Classification,
    /// Real-valued targets.
    Regression,
}

/// The solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Private randomized coordinate descent (Mangold et al. 2022); no-tuning defaults.
    DpCd,
    /// Private greedy coordinate descent, zCDP variant (Mangold et al. 2023).
    DpGcd,
    /// Private proximal SGD (replace-one, batches without replacement).
    DpSgd,
    /// Private stochastic dual coordinate descent (Damaskinos et al. 2021): L2 penalty
    /// with `lambda > 0`, squared or logistic loss, no intercept.
    DpScd,
    /// Non-private coordinate descent (no guarantee; for comparison).
    Cd,
    /// Non-private SDCA (no guarantee; for comparison).
    Sdca,
}

impl Algorithm {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::DpCd => "dp-cd",
            Algorithm::DpGcd => "dp-gcd",
            Algorithm::DpSgd => "dp-sgd",
            Algorithm::DpScd => "dp-scd",
            Algorithm::Cd => "cd",
            Algorithm::Sdca => "sdca",
        }
    }
    /// True for the private algorithms.
    pub fn is_private(self) -> bool {
        !matches!(self, Algorithm::Cd | Algorithm::Sdca)
    }
    /// True for the dual algorithms (no intercept, L2 penalty only).
    pub fn is_dual(self) -> bool {
        matches!(self, Algorithm::DpScd | Algorithm::Sdca)
    }
}

impl std::str::FromStr for Algorithm {
    type Err = PipelineError;
    fn from_str(s: &str) -> Result<Self> {
        [
            Algorithm::DpCd,
            Algorithm::DpGcd,
            Algorithm::DpSgd,
            Algorithm::DpScd,
            Algorithm::Cd,
            Algorithm::Sdca,
        ]
        .into_iter()
        .find(|a| a.as_str() == s)
        .ok_or_else(|| {
            invalid(
                "algorithm",
                format!("{s:?}"),
                "one of dp-cd, dp-gcd, dp-sgd, dp-scd, cd, sdca",
            )
        })
    }
}

/// Bounds on the features `|x_ij| <= b_j`, in the user's units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeatureBounds {
    /// The same declared public bound on every feature, chosen without looking at the
    /// data.
    Uniform(f64),
    /// One declared public bound per feature.
    PerColumn(Vec<f64>),
    /// One declared public range `[lo, hi]` per feature.
    Ranges(Vec<(f64, f64)>),
    /// Estimated privately ([`crate::bounds`]) with `share` of epsilon (and of delta if
    /// the zCDP composition is the better), charged to the pipeline's ledger.
    Private {
        /// Fraction of the target epsilon, in (0, 1).
        share: f64,
    },
    /// Estimated privately as [`FeatureBounds::Private`], with the share chosen by
    /// [`feature_share_rule`] from public quantities (epsilon, delta, the training rows
    /// `n`, the features `p`, the grid): the smallest share in
    /// [`DEFAULT_FEATURE_SHARE`] ..= [`MAX_FEATURE_SHARE`] at which every release is
    /// reliable. What [`FeatureBounds::private()`] returns.
    PrivateAuto,
    /// `max_i |x_ij|` computed from the training data **without privacy**: the guarantee
    /// does not cover what the bounds reveal, and the model says so. Naming this variant
    /// is the opt-in.
    NonPrivateFromData,
}

/// A bound on the regression target `|y_i| <= Y`, in the user's units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetBound {
    /// A declared public bound `|y| <= Y`.
    Declared(f64),
    /// A declared public range `[lo, hi]`.
    Range(f64, f64),
    /// Estimated privately with `share` of epsilon (see [`FeatureBounds::Private`]).
    Private {
        /// Fraction of the target epsilon, in (0, 1).
        share: f64,
    },
    /// `max_i |y_i|` computed **without privacy** (opt-in by name).
    NonPrivateFromData,
}

/// Default share of epsilon for private feature bounds: the smallest share
/// [`feature_share_rule`] chooses.
pub const DEFAULT_FEATURE_SHARE: f64 = 0.2;
/// The largest share of epsilon [`feature_share_rule`] spends on private feature bounds.
pub const MAX_FEATURE_SHARE: f64 = 0.5;
/// The largest share of epsilon [`feature_share_rule`] spends on private feature bounds
/// of one release per column ([`RangeRule::SignedMedian`], [`RangeRule::AbsMedian`]):
/// chosen where the two-release rule is unreliable, so the fit is then short of budget
/// anyway; measured on breast_cancer at eps 1 (docs/pipeline.md): 0.4 / 0.5 / 0.6 / 0.7
/// / 0.8 gave 0.851 / 0.881 / 0.899 / 0.894 / 0.879.
pub const MAX_ONE_RELEASE_SHARE: f64 = 0.6;
/// Default share of epsilon for a private target bound.
pub const DEFAULT_TARGET_SHARE: f64 = 0.15;

impl FeatureBounds {
    /// Private bounds with the share of [`feature_share_rule`]
    /// ([`FeatureBounds::PrivateAuto`]).
    pub fn private() -> Self {
        FeatureBounds::PrivateAuto
    }
}

impl TargetBound {
    /// A private bound with the default share ([`DEFAULT_TARGET_SHARE`]).
    pub fn private() -> Self {
        TargetBound::Private {
            share: DEFAULT_TARGET_SHARE,
        }
    }
}

/// How a bound was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoundSource {
    /// Declared by the user (public).
    Declared,
    /// Released privately (charged).
    Private,
    /// Computed from the data without privacy (the caller opted in).
    NonPrivate,
}

/// The pipeline's settings (a builder). See the crate docs for an example.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    task: Task,
    algorithm: Algorithm,
    loss: Option<LossKind>,
    penalty: PenaltyKind,
    lambda: f64,
    epsilon: Option<f64>,
    delta: Option<f64>,
    feature_bounds: Option<FeatureBounds>,
    target_bound: Option<TargetBound>,
    intercept: Option<bool>,
    seed: Option<u64>,
    threads: usize,
    test_fraction: Option<f64>,
    passes: Option<u64>,
    step_scale: Option<f64>,
    clip: Option<f64>,
    batch_size: Option<u64>,
    grid: BoundGrid,
    feature_names: Option<Vec<String>>,
    normalize_rows: bool,
    max_nonzeros: Option<usize>,
}

/// The hyperparameters the fit used, each with whether it was given or chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chosen {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The loss.
    pub loss: LossKind,
    /// The penalty and its strength.
    pub penalty: PenaltyKind,
    /// Penalty strength.
    pub lambda: f64,
    /// Whether an intercept was fitted.
    pub intercept: bool,
    /// Why (or why not) an intercept.
    pub intercept_note: String,
    /// Passes over the data.
    pub passes: u64,
    /// Step scale (`None` for the dual algorithms, which have none).
    pub step_scale: Option<f64>,
    /// Clipping threshold (private algorithms).
    pub clip: Option<f64>,
    /// Mini-batch size (DP-SGD, DP-SCD, SDCA).
    pub batch_size: Option<u64>,
    /// Which of the above the caller gave (the others come from the rules or defaults).
    pub given: Vec<String>,
    /// How the unset values were chosen.
    pub note: String,
    /// The epsilon and delta the fit itself was calibrated to (after preprocessing).
    pub fit_budget: Option<(f64, f64)>,
    /// The share of epsilon spent on private feature bounds (`None`: declared bounds).
    #[serde(default)]
    pub feature_share: Option<f64>,
    /// The share of epsilon spent on a private target bound.
    #[serde(default)]
    pub target_share: Option<f64>,
    /// The rule of the private feature ranges (`None`: declared bounds).
    #[serde(default)]
    pub feature_range_rule: Option<RangeRule>,
    /// Warnings that follow from public quantities only (e.g. a budget too small for
    /// reliable private ranges).
    pub warnings: Vec<String>,
    /// Whether every row was divided by its Euclidean norm first
    /// ([`Pipeline::normalize_rows`]).
    #[serde(default)]
    pub normalize_rows: bool,
    /// The declared support bound ([`Pipeline::max_nonzeros`]), if any.
    #[serde(default)]
    pub max_nonzeros: Option<usize>,
}

/// The privacy of the whole pipeline (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineGuarantee {
    /// Total epsilon (basic composition of preprocessing and fit; at most the target).
    pub epsilon: f64,
    /// Total delta.
    pub delta: f64,
    /// The neighbouring relation.
    pub adjacency: Adjacency,
    /// How the total is obtained.
    pub how: String,
    /// Epsilon of the private bounds (0 when none were estimated).
    pub preprocessing_epsilon: f64,
    /// Delta of the private bounds.
    pub preprocessing_delta: f64,
    /// The fit's own guarantee.
    pub fit: Guarantee,
    /// Every charge: the bounds' releases, then the fit's.
    pub ledger: Ledger,
    /// True when a bound or a constant was computed from the data without privacy (the
    /// caller opted in): the guarantee does not cover what it reveals.
    pub uses_non_private_inputs: bool,
    /// The fit's public release plan (noise, sensitivities, number of releases, and with
    /// [`Pipeline::max_nonzeros`] the releases charged per record).
    #[serde(default)]
    pub plan: Option<SolverPlan>,
}

/// The releasable model: predictions on **raw** data in the user's units.
///
/// The prediction for a raw row `x` is `sum_j coefficients_j clip(x_j, lo_j, hi_j) +
/// intercept` over the [`PipelineModel::feature_ranges`]. It holds no seed and nothing
/// computed from the data without privacy (unless `privacy.uses_non_private_inputs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineModel {
    /// The task.
    pub task: Task,
    /// The loss the model was fitted with.
    pub loss: LossKind,
    /// The per-feature clipping ranges `[lo, hi]`, in the user's units.
    pub feature_ranges: Vec<(f64, f64)>,
    /// How the feature bounds were obtained.
    pub feature_bounds_source: BoundSource,
    /// The target's clipping range (regression), in the user's units.
    pub target_range: Option<(f64, f64)>,
    /// How the target bound was obtained.
    pub target_bound_source: Option<BoundSource>,
    /// Coefficients on the clipped raw features, in the user's units.
    pub coefficients: Vec<f64>,
    /// The intercept in the user's units (`None`: no intercept was fitted).
    pub intercept: Option<f64>,
    /// The privacy of the whole pipeline (`None` for the non-private algorithms).
    pub privacy: Option<PipelineGuarantee>,
    /// The solver's model on the scaled data (with its plan and ledger).
    pub scaled: LinearModel,
    /// Every raw row is divided by its Euclidean norm before the clipping (as in the
    /// fit, [`Pipeline::normalize_rows`]).
    #[serde(default)]
    pub normalize_rows: bool,
    /// The declared support bound of the fit ([`Pipeline::max_nonzeros`]): a row with
    /// more non-zero scaled values keeps its `k` largest (ties: the lower feature
    /// index) before the coefficients apply, the map the fit applied to its training
    /// rows (`dp_optim::support::RowSupport::project`).
    #[serde(default)]
    pub max_nonzeros: Option<usize>,
}

/// Quantities computed from the data **without privacy**: for the analyst, not for
/// publication, and not covered by the guarantee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// Always "computed from the data without privacy: do not publish".
    pub privacy: String,
    /// Training rows.
    pub n_train: usize,
    /// Held-out rows.
    pub n_test: usize,
    /// Per feature, how many training values were clipped to the bound.
    pub clipped_per_column: Vec<usize>,
    /// How many training targets were clipped (regression).
    pub target_clipped: Option<usize>,
    /// With [`Pipeline::max_nonzeros`]: how many records had more non-zero features and
    /// were projected onto their largest ones (training rows).
    #[serde(default)]
    pub projected_records: Option<usize>,
    /// Warnings (e.g. a column with more than 10 % of its values clipped).
    pub warnings: Vec<String>,
    /// Held-out scores: `accuracy`, `log_loss` (logistic) or `mse`, and the baseline
    /// (`majority_accuracy` or `mean_mse`: predicting the training majority / mean).
    pub scores: Vec<(String, f64)>,
    /// The objective at the returned coefficients (scaled problem).
    pub objective: f64,
    /// Seconds spent in the solver.
    pub solver_seconds: f64,
}

/// What [`Pipeline::fit`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    /// The releasable model (its `privacy` field is the guarantee).
    pub model: PipelineModel,
    /// The hyperparameters used.
    pub chosen: Chosen,
    /// Typed warnings about the fit, for the front ends to show (the command line prints
    /// them, the Python package raises a `UserWarning` subclass for each). Every one is a
    /// function of public inputs and released values only, so showing it costs no
    /// privacy:
    /// * [`FitWarning::BudgetTooSmall`]: the no-tuning passes rule, at the budget the
    ///   bounds left and on the training rows, wanted fewer passes than its minimum;
    /// * [`FitWarning::ConstantPrediction`]: the released classifier predicts one class
    ///   for every row within the released (or declared) ranges;
    /// * [`FitWarning::SmoothnessFloored`]: a private constant was raised to its noise
    ///   level.
    /// * [`FitWarning::UnreliableRanges`]: the private feature or target ranges had too
    ///   little epsilon per release for the rows (likely wrong by orders of magnitude).
    ///
    /// Their text is also in [`Chosen::warnings`] (with the string warnings about the
    /// private ranges), so a front end that prints only that list shows them too.
    pub warnings: Vec<FitWarning>,
    /// Non-private diagnostics.
    pub diagnostics: Diagnostics,
}

impl FitReport {
    /// The guarantee of the whole pipeline (`None` for a non-private algorithm).
    pub fn guarantee(&self) -> Option<&PipelineGuarantee> {
        self.model.privacy.as_ref()
    }
    /// Every warning of the fit, as text for a front end to show: [`Chosen::warnings`]
    /// (public: the private ranges' reliability, and the text of every typed
    /// [`FitReport::warnings`]), then the non-private [`Diagnostics::warnings`] (those
    /// say so in their text).
    pub fn all_warnings(&self) -> Vec<String> {
        self.chosen
            .warnings
            .iter()
            .chain(&self.diagnostics.warnings)
            .cloned()
            .collect()
    }
}

fn share_ok(name: &'static str, s: f64) -> Result<f64> {
    if s.is_finite() && s > 0.0 && s < 1.0 {
        Ok(s)
    } else {
        Err(invalid(name, s, "a share of epsilon must be in (0, 1)"))
    }
}

impl Pipeline {
    /// A pipeline for `task` with `algorithm`; the loss defaults to logistic
    /// (classification) or squared (regression), no penalty, an intercept where it is
    /// free (see the module docs), one thread, draws from OS entropy.
    pub fn new(task: Task, algorithm: Algorithm) -> Self {
        Self {
            task,
            algorithm,
            loss: None,
            penalty: PenaltyKind::None,
            lambda: 0.0,
            epsilon: None,
            delta: None,
            feature_bounds: None,
            target_bound: None,
            intercept: None,
            seed: None,
            threads: 1,
            test_fraction: None,
            passes: None,
            step_scale: None,
            clip: None,
            batch_size: None,
            grid: BoundGrid::default(),
            feature_names: None,
            normalize_rows: false,
            max_nonzeros: None,
        }
    }
    /// The per-sample loss.
    pub fn loss(mut self, loss: LossKind) -> Self {
        self.loss = Some(loss);
        self
    }
    /// The penalty and its strength.
    pub fn penalty(mut self, penalty: PenaltyKind, lambda: f64) -> Self {
        self.penalty = penalty;
        self.lambda = lambda;
        self
    }
    /// Target `(epsilon, delta)` of the whole pipeline (private algorithms).
    pub fn privacy(mut self, epsilon: f64, delta: f64) -> Self {
        self.epsilon = Some(epsilon);
        self.delta = Some(delta);
        self
    }
    /// How the feature bounds are obtained (required).
    pub fn feature_bounds(mut self, bounds: FeatureBounds) -> Self {
        self.feature_bounds = Some(bounds);
        self
    }
    /// How the target bound is obtained (regression; required there).
    pub fn target_bound(mut self, bound: TargetBound) -> Self {
        self.target_bound = Some(bound);
        self
    }
    /// Fit an intercept or not (default: yes for the primal algorithms, no for the dual
    /// ones, which cannot).
    pub fn intercept(mut self, intercept: bool) -> Self {
        self.intercept = Some(intercept);
        self
    }
    /// `Some(seed)`: a reproducible run (the seed replays the noise: keep it secret; it
    /// is never in the model). `None` (default): OS entropy.
    pub fn seed(mut self, seed: Option<u64>) -> Self {
        self.seed = seed;
        self
    }
    /// Worker threads for the coordinate solvers (DP-CD, CD); seeded fits reproduce for
    /// a given thread count.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }
    /// Hold out this fraction of the rows for the (non-private) scores.
    pub fn test_fraction(mut self, f: f64) -> Self {
        self.test_fraction = Some(f);
        self
    }
    /// Passes over the data (default: the no-tuning rule for DP-CD, else 10).
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
        self
    }
    /// Step scale (default: DP-CD's rule, else 0.5).
    pub fn step_scale(mut self, s: f64) -> Self {
        self.step_scale = Some(s);
        self
    }
    /// Clipping threshold (default: DP-CD's rule, else 1).
    pub fn clip(mut self, c: f64) -> Self {
        self.clip = Some(c);
        self
    }
    /// Mini-batch size (DP-SGD default: 64 or all rows; DP-SCD / SDCA default 1).
    pub fn batch_size(mut self, b: u64) -> Self {
        self.batch_size = Some(b);
        self
    }
    /// The feature columns' names, used in the warnings' text only (default
    /// `feature j`, 0-based). One per feature.
    pub fn feature_names(mut self, names: Vec<String>) -> Self {
        self.feature_names = Some(names);
        self
    }
    /// The public grid of the private bounds.
    pub fn bound_grid(mut self, grid: BoundGrid) -> Self {
        self.grid = grid;
        self
    }
    /// Divide every raw row by its Euclidean norm (zero rows unchanged) before anything
    /// else, in the fit and in [`PipelineModel::predict`]. A map of each record alone
    /// (it reads no other record), so replacing one record changes one normalised
    /// record and the guarantee holds for the raw data. Afterwards every value is in
    /// `[-1, 1]`: without [`Pipeline::feature_bounds`] the bounds are that public
    /// `FeatureBounds::Uniform(1.0)`, and the solvers' row-norm bound follows from it
    /// (DP-SCD / SDCA then need no division by `sqrt(p)`).
    pub fn normalize_rows(mut self, on: bool) -> Self {
        self.normalize_rows = on;
        self
    }
    /// A declared public support bound: every record has at most `k` non-zero features
    /// (chosen without looking at the data; e.g. the numeric columns plus one per
    /// one-hot encoded column). DP-CD only: each pass is charged as the `k` releases one
    /// record can move (the intercept column counts as one more) instead of all `p`,
    /// and the coordinates are visited in a fresh permutation per pass
    /// (`dp_optim::support`). A record with more non-zeros keeps its `k` largest in
    /// magnitude after the clipping and scaling (a fixed map of each record, so the
    /// accounting holds for the projected data; how many were projected is a
    /// non-private count in [`Diagnostics::projected_records`]). The columns are not
    /// centred (centring would fill every row). The model records `k`, and prediction
    /// projects new rows the same way ([`PipelineModel::max_nonzeros`]).
    pub fn max_nonzeros(mut self, k: usize) -> Self {
        self.max_nonzeros = Some(k);
        self
    }

    fn loss_kind(&self) -> Result<LossKind> {
        let loss = self.loss.unwrap_or(match self.task {
            Task::Classification => LossKind::Logistic,
            Task::Regression => LossKind::Squared,
        });
        let want = self.task == Task::Classification;
        if loss.is_classification() != want {
            return Err(PipelineError::Unsupported(format!(
                "loss {loss} is a {} loss but the task is {}: choose {}",
                if loss.is_classification() {
                    "classification"
                } else {
                    "regression"
                },
                if want { "classification" } else { "regression" },
                if want {
                    "logistic, squared-hinge or hinge"
                } else {
                    "squared or huber"
                }
            )));
        }
        Ok(loss)
    }

    /// Runs the pipeline on raw `data` (labels `{-1, +1}` for classification), dense
    /// ([`dp_models::DenseDesign`]) or sparse ([`dp_models::SparseDesign`]: zeros stay
    /// zeros, declared bounds only; see [`crate::design`]).
    pub fn fit<D: PipelineDesign>(&self, data: &Dataset<D>) -> Result<FitReport> {
        self.fit_cow(Cow::Borrowed(data))
    }

    /// [`Pipeline::fit`] of a dataset the caller hands over (the front ends' path: the
    /// command line and the Python package build the design for the fit and need it no
    /// more). The same report bit for bit. Without a test split (which keeps the
    /// training rows for the held-out scores) a dense design is clipped and scaled in
    /// place ([`PipelineDesign::clip_and_scale_owned`]) and its intercept column
    /// appended in the room its buffer keeps for one, so the fit holds one `n x p`
    /// buffer instead of two (row normalisation still makes its normalised copy, and a
    /// support bound's intercept column is still appended by a copy).
    pub fn fit_owned<D: PipelineDesign>(&self, data: Dataset<D>) -> Result<FitReport> {
        self.fit_cow(Cow::Owned(data))
    }

    fn fit_cow<D: PipelineDesign>(&self, data: Cow<'_, Dataset<D>>) -> Result<FitReport> {
        let c = self.check(&data)?;
        // 0. Row normalisation, record by record (before the split: each row alone).
        let data = if self.normalize_rows {
            Cow::Owned(Dataset::new(
                data.x().normalized_rows()?,
                data.y().to_vec(),
            )?)
        } else {
            data
        };
        let mut rng = match self.seed {
            Some(s) => ChaCha20Rng::seed_from_u64(s),
            None => ChaCha20Rng::from_os_rng(),
        };
        // 1. Split (data-independent permutation).
        // Without a test split the training set is `data` itself, borrowed (a copy of a
        // large design costs as much as a few passes of the solver).
        let (train, test) = match self.test_fraction {
            Some(f) => {
                let split_seed: u64 = rng.random();
                let (tr, te) = train_test_split(&data, f, split_seed)?;
                (Cow::Owned(tr), Some(te))
            }
            None => (data, None),
        };
        let loss = AnyLoss::from_kind(c.loss_kind);
        train.check_labels_for(&loss)?;
        let (n, p) = (train.n_samples(), train.n_features());
        // 2. Bounds: plan and charge the private releases before drawing any.
        let b = self.bounds(&c, &train, &mut rng)?;
        // 3. Clip and scale, record by record. The training set is kept for the scores
        // when there is a test set; otherwise it is handed to the step (an owned one is
        // mapped in place).
        let (s, kept) = if test.is_some() {
            (self.scale(&c, &b, Cow::Borrowed(&*train))?, Some(train))
        } else {
            (self.scale(&c, &b, train)?, None)
        };
        // 4. Fit, on what the bounds left of the budget.
        let fit_budget = Self::fit_budget(&c, &b)?;
        let weights = (c.intercept && !s.dual_intercept).then(|| {
            let mut w = vec![1.0; p];
            w.push(0.0);
            w
        });
        let penalty = AnyPenalty::from_kind(self.penalty, self.lambda, weights)?;
        let (fitted, mut chosen, mut fit_warnings) =
            self.run_solver(loss, penalty, &s.data, fit_budget, &mut rng, &s.shape)?;
        // The solver's own warnings (e.g. `SmoothnessFloored`) travel with the rules'.
        fit_warnings.extend(fitted.diagnostics.warnings.iter().cloned());
        self.record_choices(&mut chosen, &mut fit_warnings, &c, &b, &s, fit_budget);
        // 5. Guarantee.
        let row_scale = s.shape.row_scale;
        let scaled_model = if s.dual_intercept {
            // The last coefficient multiplies the column 1 / row_scale.
            let mut m = fitted.model.clone().split_intercept()?;
            m.intercept = m.intercept.map(|b| b / row_scale);
            m
        } else if c.intercept {
            fitted.model.clone().split_intercept()?
        } else {
            fitted.model.clone()
        };
        // A classifier that predicts one class on every row inside the ranges: every
        // scaled feature lies in [-1, 1] (1 / sqrt(p) for the dual algorithms, which fit
        // no intercept and so are never flagged), a public bound; the check reads only
        // the released model (post-processing).
        if c.budget.is_some() && self.task == Task::Classification {
            let bounds = PublicBounds::uniform(p, 1.0 / row_scale);
            if let Some(w) = constant_prediction(&scaled_model, &bounds)? {
                fit_warnings.push(w);
            }
        }
        for w in &fit_warnings {
            chosen.warnings.push(w.to_string());
        }
        let privacy = self.guarantee(&c, &b, &fitted)?;
        // 6. Fold the scaling into the coefficients.
        let model = self.fold(&c, &b, &s, scaled_model, privacy)?;

        // Non-private diagnostics.
        let warnings = self.clipping_warnings(&b, &s, n);
        let scores = match (&test, &kept) {
            (Some(t), Some(train)) => score(&model, train, t)?,
            _ => Vec::new(),
        };
        let diagnostics = Diagnostics {
            privacy: "computed from the data without privacy: do not publish".into(),
            n_train: n,
            n_test: test.as_ref().map_or(0, |t| t.n_samples()),
            clipped_per_column: s.clipped_per_column,
            target_clipped: s.target_clipped,
            projected_records: s.projected_records,
            warnings,
            scores,
            objective: fitted.diagnostics.objective,
            solver_seconds: fitted.diagnostics.seconds,
        };
        Ok(FitReport {
            model,
            chosen,
            warnings: fit_warnings,
            diagnostics,
        })
    }
}
