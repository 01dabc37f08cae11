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
    /// centred (centring would fill every row). Prediction does not project.
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
        let loss_kind = self.loss_kind()?;
        let private = self.algorithm.is_private();
        let (epsilon, delta) = match (private, self.epsilon, self.delta) {
            (true, Some(e), Some(d)) => {
                if !(e.is_finite() && e > 0.0) {
                    return Err(invalid("epsilon", e, "must be finite and > 0"));
                }
                if !(d > 0.0 && d < 1.0) {
                    return Err(invalid("delta", d, "must be in (0, 1)"));
                }
                (e, d)
            }
            (true, _, _) => {
                return Err(PipelineError::Missing(format!(
                    "privacy(epsilon, delta): {} is private",
                    self.algorithm.as_str()
                )))
            }
            (false, None, None) => (f64::NAN, f64::NAN),
            (false, _, _) => {
                return Err(PipelineError::Unsupported(format!(
                    "{} is not private: drop privacy(..) or choose a private algorithm",
                    self.algorithm.as_str()
                )))
            }
        };
        if self.threads == 0 {
            return Err(invalid("threads", 0, "must be at least 1"));
        }
        self.grid.check()?;
        let fb = match (self.feature_bounds.clone(), self.normalize_rows) {
            (Some(b), _) => b,
            // Normalised rows have every value in [-1, 1]: a public bound.
            (None, true) => FeatureBounds::Uniform(1.0),
            (None, false) => {
                return Err(PipelineError::Missing(
                    "feature_bounds: declare them (FeatureBounds::Uniform / PerColumn, chosen \
                     without looking at the data), estimate them privately \
                     (FeatureBounds::private()), or opt in to FeatureBounds::NonPrivateFromData"
                        .into(),
                ))
            }
        };
        if D::SPARSE
            && matches!(
                fb,
                FeatureBounds::Private { .. } | FeatureBounds::PrivateAuto
            )
        {
            return Err(PipelineError::Unsupported(
                "private feature ranges need dense data: each range is a private median and \
                 spread of its column, and a sparse column, mostly zeros, has median 0 and \
                 spread 0, so the released range would clip every non-zero value to the \
                 grid's smallest interval and the feature would vanish from the fit. Declare \
                 public bounds (FeatureBounds::Uniform / PerColumn / Ranges containing 0, \
                 chosen without looking at the data), or normalise the rows \
                 (normalize_rows: every value is then in [-1, 1])"
                    .into(),
            ));
        }
        let support = match self.max_nonzeros {
            None => None,
            Some(0) => {
                return Err(invalid(
                    "max_nonzeros",
                    0,
                    "a record must be allowed at least one non-zero feature",
                ))
            }
            Some(_) if self.algorithm != Algorithm::DpCd => {
                return Err(PipelineError::Unsupported(format!(
                    "max_nonzeros applies to dp-cd only (its accounting is per coordinate \
                     release), not {}",
                    self.algorithm.as_str()
                )))
            }
            Some(k) => Some(k),
        };
        let tb = match (self.task, &self.target_bound) {
            (Task::Regression, None) => {
                return Err(PipelineError::Missing(
                    "target_bound: regression targets need a bound (TargetBound::Declared(Y), \
                     TargetBound::private(), or TargetBound::NonPrivateFromData)"
                        .into(),
                ))
            }
            (Task::Classification, Some(_)) => {
                return Err(PipelineError::Unsupported(
                    "target_bound applies to regression only (classification labels are +-1)"
                        .into(),
                ))
            }
            (_, t) => t.clone(),
        };
        // The dual algorithms fit it as one more coefficient under the same L2 penalty
        // (their dual needs an unweighted ridge): a penalised intercept, as LIBLINEAR's.
        let intercept = self.intercept.unwrap_or(true);
        let (n_all, p) = (data.n_samples(), data.n_features());
        if n_all < 2 || p == 0 {
            return Err(PipelineError::Model(dp_models::ModelError::Empty(format!(
                "{n_all} rows and {p} features: the pipeline needs at least 2 rows and 1 feature"
            ))));
        }
        if let Some(names) = &self.feature_names {
            check_len("feature names", names.len(), p)?;
        }
        // The support bound the solver charges: the intercept column is one more
        // non-zero in every record.
        let support = match support {
            Some(k) => Some(k.checked_add(usize::from(intercept)).ok_or_else(|| {
                invalid(
                    "max_nonzeros",
                    k,
                    "with an intercept the bound is k + 1 (the intercept column), which overflows",
                )
            })?),
            None => None,
        };
        // 0. Row normalisation, record by record (before the split: each row alone).
        let normalized;
        let data = if self.normalize_rows {
            normalized = Dataset::new(data.x().normalized_rows()?, data.y().to_vec())?;
            &normalized
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
                let (tr, te) = train_test_split(data, f, split_seed)?;
                (Cow::Owned(tr), Some(te))
            }
            None => (Cow::Borrowed(data), None),
        };
        let loss = AnyLoss::from_kind(loss_kind);
        train.check_labels_for(&loss)?;
        let n = train.n_samples();

        // 2. Bounds: plan and charge the private releases before drawing any.
        let tgt_share = match &tb {
            Some(TargetBound::Private { share }) => Some(share_ok("target bound share", *share)?),
            _ => None,
        };
        // The feature ranges' rule: RangeRule::Auto is resolved from public quantities
        // (feature_range_rule) for FeatureBounds::private(), and is the two-release
        // MedianSpread otherwise.
        let grid = match &fb {
            FeatureBounds::PrivateAuto if private => BoundGrid {
                rule: feature_range_rule(self.task, epsilon, delta, n, p, tgt_share, &self.grid)?,
                ..self.grid
            },
            _ if self.grid.rule == RangeRule::Auto => BoundGrid {
                rule: RangeRule::MedianSpread,
                ..self.grid
            },
            _ => self.grid,
        };
        let feat_share = match &fb {
            FeatureBounds::Private { share } => Some(share_ok("feature bound share", *share)?),
            FeatureBounds::PrivateAuto if private => {
                Some(feature_share_rule(epsilon, delta, n, p, tgt_share, &grid)?)
            }
            FeatureBounds::PrivateAuto => Some(DEFAULT_FEATURE_SHARE),
            _ => None,
        };
        if (feat_share.is_some() || tgt_share.is_some()) && !private {
            return Err(PipelineError::Unsupported(format!(
                "private bounds need a private algorithm and a budget: {} is not private \
                 (declare the bounds instead)",
                self.algorithm.as_str()
            )));
        }
        let mut ledger = Ledger::new();
        let releases = grid.feature_releases(p);
        let pre = plan_preprocessing(epsilon, delta, releases, feat_share, tgt_share)?;
        pre.charge(&mut ledger, releases)?;
        let (pre_eps, pre_delta) = pre.spent(releases)?;
        let (feature_ranges, feature_source) = match &fb {
            FeatureBounds::Uniform(b) => {
                positive_bound("feature bound", *b)?;
                (vec![(-*b, *b); p], BoundSource::Declared)
            }
            FeatureBounds::PerColumn(v) => {
                check_len("feature bounds", v.len(), p)?;
                for &b in v {
                    positive_bound("feature bound", b)?;
                }
                (v.iter().map(|&b| (-b, b)).collect(), BoundSource::Declared)
            }
            FeatureBounds::Ranges(v) => {
                check_len("feature ranges", v.len(), p)?;
                for &r in v {
                    check_range("feature range", r)?;
                }
                if D::SPARSE {
                    if let Some(j) = v.iter().position(|&(lo, hi)| lo > 0.0 || hi < 0.0) {
                        return Err(invalid(
                            "feature range",
                            format!("[{}, {}] (feature {j})", v[j].0, v[j].1),
                            "a sparse design's ranges must contain 0 (clipping to a range \
                             without 0 would make every absent feature present)",
                        ));
                    }
                }
                (v.clone(), BoundSource::Declared)
            }
            FeatureBounds::Private { .. } | FeatureBounds::PrivateAuto => {
                let e = pre.feature_epsilon.expect("planned above");
                let mut out = Vec::with_capacity(p);
                for j in 0..p {
                    out.push(private_feature_range(
                        &train.x().column_values(j),
                        e,
                        &grid,
                        &mut rng,
                    )?);
                }
                (out, BoundSource::Private)
            }
            FeatureBounds::NonPrivateFromData => (
                (0..p)
                    .map(|j| {
                        let (lo, hi) = data_range(&train.x().column_values(j));
                        // A sparse design's zeros stay zeros: the range holds 0.
                        if D::SPARSE {
                            (lo.min(0.0), hi.max(0.0))
                        } else {
                            (lo, hi)
                        }
                    })
                    .collect(),
                BoundSource::NonPrivate,
            ),
        };
        let target = match &tb {
            None => None,
            Some(TargetBound::Declared(y)) => {
                positive_bound("target bound", *y)?;
                Some(((-*y, *y), BoundSource::Declared))
            }
            Some(TargetBound::Range(lo, hi)) => {
                check_range("target range", (*lo, *hi))?;
                Some(((*lo, *hi), BoundSource::Declared))
            }
            Some(TargetBound::Private { .. }) => {
                let e = pre.target_epsilon.expect("planned above");
                Some((
                    private_range(train.y(), e, &self.grid, &mut rng)?,
                    BoundSource::Private,
                ))
            }
            Some(TargetBound::NonPrivateFromData) => {
                Some((data_range(train.y()), BoundSource::NonPrivate))
            }
        };
        // Centre and half-width of each range: centred only with an intercept (without
        // one, centring would hide an offset in the model), else [-max|.|, max|.|]. The
        // features of a sparse design, or under a support bound, are never centred
        // (centring would fill every row; the intercept column takes the offset).
        let centre_features = intercept && !D::SPARSE && support.is_none();
        let centre_scale = |(lo, hi): (f64, f64), centre: bool| -> (f64, f64) {
            if centre {
                ((lo + hi) / 2.0, (hi - lo) / 2.0)
            } else {
                (0.0, lo.abs().max(hi.abs()))
            }
        };
        let (centres, mut scales): (Vec<f64>, Vec<f64>) = feature_ranges
            .iter()
            .map(|&r| centre_scale(r, centre_features))
            .unzip();
        // A public bound on the scaled rows' Euclidean norm: sqrt(p) from the entries in
        // [-1, 1]; after row normalisation, with every range holding 0 and no centring,
        // also 1 / min_j s_j (|clamp(x_j)| <= |x_j| and ||x|| <= 1).
        let normalised_norm = (self.normalize_rows
            && centres.iter().all(|&c| c == 0.0)
            && feature_ranges
                .iter()
                .all(|&(lo, hi)| lo <= 0.0 && hi >= 0.0))
        .then(|| 1.0 / scales.iter().copied().fold(f64::INFINITY, f64::min));

        // 3. Clip and scale, record by record. The dual algorithms need rows of L2 norm
        // <= 1: each scaled feature, and their constant intercept column, is further
        // divided by sqrt(p + 1) (sqrt(p) without an intercept; public), or by
        // sqrt(R^2 + 1) with the smaller row-norm bound R of normalised rows.
        let row_scale = if self.algorithm.is_dual() {
            match normalised_norm {
                Some(r) if r * r < p as f64 => (r * r + f64::from(u8::from(intercept))).sqrt(),
                _ => ((p + usize::from(intercept)) as f64).sqrt(),
            }
        } else {
            1.0
        };
        scales.iter_mut().for_each(|s| *s *= row_scale);
        let dual_intercept = self.algorithm.is_dual() && intercept;
        // The scaled columns followed by the intercept's constant column when there is
        // one (the solver fits it as one more coordinate): 1, or 1 / row_scale for the
        // dual algorithms (their rows, this column included, must have L2 norm <= 1).
        // Under a support bound the column is appended after the projection (the
        // intercept is one more non-zero of every record, never projected away).
        let constant = intercept.then_some(if self.algorithm.is_dual() {
            1.0 / row_scale
        } else {
            1.0
        });
        let (x, clipped_per_column, projected_records) = match self.max_nonzeros {
            Some(k) => {
                let (mut x, clipped) =
                    train
                        .x()
                        .clip_and_scale(&feature_ranges, &centres, &scales, None)?;
                // The declared support bound: a record with more non-zeros keeps its
                // largest (a fixed map of each record; dp_optim::support).
                let projected = RowSupport::AtMost(k).project(&mut x)?;
                let x = if intercept {
                    // DP-CD only (checked above): the constant is 1.
                    with_intercept_column(&Dataset::new(x, vec![0.0; n])?)?
                        .into_parts()
                        .0
                } else {
                    x
                };
                (x, clipped, Some(projected))
            }
            None => {
                let (x, clipped) =
                    train
                        .x()
                        .clip_and_scale(&feature_ranges, &centres, &scales, constant)?;
                (x, clipped, None)
            }
        };
        let shape = ScaledShape {
            row_scale,
            row_norm: normalised_norm.map(|r| r.min((p as f64).sqrt()) / row_scale),
            support,
            intercept,
        };
        let (target_cs, y, target_clipped) = match target {
            Some(((lo, hi), _)) => {
                let (c, s) = centre_scale((lo, hi), intercept);
                let k = train.y().iter().filter(|&&v| v < lo || v > hi).count();
                (
                    Some((c, s)),
                    train
                        .y()
                        .iter()
                        .map(|v| (v.clamp(lo, hi) - c) / s)
                        .collect(),
                    Some(k),
                )
            }
            None => (None, train.y().to_vec(), None),
        };
        let fit_data = Dataset::new(x, y)?;
        // 4. Fit.
        // The shave keeps the basic composition `pre + fit` at most the target despite
        // rounding; without private bounds there is no sum to round, and the fit gets
        // the target itself (so a declared-bounds fit reports the delta asked for).
        let shave = if pre_eps == 0.0 && pre_delta == 0.0 {
            1.0
        } else {
            1.0 - 4.0 * f64::EPSILON
        };
        let fit_eps = if private {
            let rest = (epsilon - pre_eps) * shave;
            if rest.is_nan() || rest <= 0.0 {
                return Err(invalid(
                    "bound shares",
                    format!("{pre_eps} of epsilon {epsilon}"),
                    "the private bounds must leave a positive budget for the fit",
                ));
            }
            rest
        } else {
            f64::NAN
        };
        let fit_delta = if private {
            (delta - pre_delta) * shave
        } else {
            f64::NAN
        };
        let weights = (intercept && !dual_intercept).then(|| {
            let mut w = vec![1.0; p];
            w.push(0.0);
            w
        });
        let penalty = AnyPenalty::from_kind(self.penalty, self.lambda, weights)?;
        let (fitted, chosen, mut fit_warnings) = self.run_solver(
            loss, penalty, &fit_data, fit_eps, fit_delta, &mut rng, &shape,
        )?;
        fit_warnings.extend(fitted.diagnostics.warnings.iter().cloned());
        let mut chosen = chosen;
        // The solver's own warnings (e.g. `SmoothnessFloored`) travel with the rules'.
        chosen.loss = loss_kind;
        chosen.intercept = intercept;
        chosen.intercept_note = if dual_intercept {
            format!(
                "fitted and penalised: the coefficient of a constant column 1/sqrt(p + 1), under \
                 the same L2 penalty as every coefficient ({} needs an unweighted ridge), \
                 one more coordinate of the same private solver, no separate charge",
                self.algorithm.as_str()
            )
        } else if intercept {
            "fitted: the coefficient of a constant column, one more coordinate of the same \
             private solver, no separate charge"
                .into()
        } else {
            "none: turned off by the caller".into()
        };
        chosen.fit_budget = private.then_some((fit_eps, fit_delta));
        chosen.feature_share = feat_share;
        chosen.feature_range_rule = feat_share.map(|_| grid.rule);
        chosen.target_share = tgt_share;
        chosen.normalize_rows = self.normalize_rows;
        chosen.max_nonzeros = self.max_nonzeros;
        // Reliability of the private ranges, from public quantities: the exponential
        // mechanism picks a candidate near the median with high probability when
        // eps n / 4 clearly exceeds ln(#candidates) (McSherry & Talwar 2007, Thm 8).
        for (what, e, need) in [
            ("feature", pre.feature_epsilon, reliable_margin(&grid)),
            (
                "target",
                pre.target_epsilon,
                reliable_margin_of(crate::bounds::signed_candidates(&self.grid).len()),
            ),
        ] {
            if let Some(e) = e {
                let margin = e * n as f64 / 4.0;
                if margin < need {
                    fit_warnings.push(FitWarning::UnreliableRanges {
                        of: what.to_string(),
                        epsilon: e,
                        rows: n,
                        margin,
                        needed: need,
                    });
                }
            }
        }

        // 5. Guarantee.
        let scaled_model = if dual_intercept {
            // The last coefficient multiplies the column 1 / row_scale.
            let mut m = fitted.model.clone().split_intercept()?;
            m.intercept = m.intercept.map(|b| b / row_scale);
            m
        } else if intercept {
            fitted.model.clone().split_intercept()?
        } else {
            fitted.model.clone()
        };
        // A classifier that predicts one class on every row inside the ranges: every
        // scaled feature lies in [-1, 1] (1 / sqrt(p) for the dual algorithms, which fit
        // no intercept and so are never flagged), a public bound; the check reads only
        // the released model (post-processing).
        if private && self.task == Task::Classification {
            let bounds = PublicBounds::uniform(p, 1.0 / row_scale);
            if let Some(w) = constant_prediction(&scaled_model, &bounds)? {
                fit_warnings.push(w);
            }
        }
        for w in &fit_warnings {
            chosen.warnings.push(w.to_string());
        }
        let non_private_inputs = feature_source == BoundSource::NonPrivate
            || matches!(target, Some((_, BoundSource::NonPrivate)));
        let privacy = match fitted.model.privacy.as_ref() {
            Some(report) => {
                for c in report.ledger.entries() {
                    ledger.charge(c.clone())?;
                }
                let g = &report.guarantee;
                let total_eps = pre_eps + g.epsilon;
                let total_delta = pre_delta + g.delta;
                if total_eps > epsilon || total_delta > delta {
                    return Err(PipelineError::Unsupported(format!(
                        "internal: the composed guarantee ({total_eps}, {total_delta}) is above \
                         the target ({epsilon}, {delta})"
                    )));
                }
                Some(PipelineGuarantee {
                    epsilon: total_eps,
                    delta: total_delta,
                    adjacency: g.adjacency,
                    how: format!(
                        "basic composition (Dwork & Roth 2014, Thm 3.16) of the private bounds \
                         ({}) and the fit ({})",
                        pre.how, g.how
                    ),
                    preprocessing_epsilon: pre_eps,
                    preprocessing_delta: pre_delta,
                    fit: g.clone(),
                    ledger,
                    uses_non_private_inputs: non_private_inputs
                        || report.uses_non_private_constants,
                    plan: Some(report.plan.clone()),
                })
            }
            None => None,
        };

        // 6. Fold the scaling: y = sy (sum_j w_j (clip(x_j) - c_j) / s_j + w0) + cy.
        let (cy, sy) = target_cs.unwrap_or((0.0, 1.0));
        let coefficients: Vec<f64> = scaled_model
            .coefficients
            .iter()
            .zip(&scales)
            .map(|(w, s)| sy * w / s)
            .collect();
        let offset: f64 = scaled_model
            .coefficients
            .iter()
            .zip(centres.iter().zip(&scales))
            .map(|(w, (c, s))| w * c / s)
            .sum();
        let model = PipelineModel {
            task: self.task,
            loss: loss_kind,
            feature_ranges: feature_ranges.clone(),
            feature_bounds_source: feature_source,
            target_range: target.map(|t| t.0),
            target_bound_source: target.map(|t| t.1),
            coefficients,
            intercept: scaled_model.intercept.map(|b| sy * (b - offset) + cy),
            privacy,
            scaled: scaled_model,
            normalize_rows: self.normalize_rows,
        };
        if model
            .coefficients
            .iter()
            .chain(model.intercept.iter())
            .any(|v| !v.is_finite())
        {
            return Err(PipelineError::Optim(dp_optim::OptimError::Diverged(
                "a coefficient in the user's units is not finite (a bound too small for f64?)"
                    .into(),
            )));
        }

        // Non-private diagnostics.
        let name = |j: usize| match &self.feature_names {
            Some(names) => format!("column {:?}", names[j]),
            None => format!("feature {j}"),
        };
        let mut warnings = Vec::new();
        for (j, &k) in clipped_per_column.iter().enumerate() {
            if k * 10 > n {
                warnings.push(format!(
                    "{}: {k} of {n} training values ({:.0} %) were outside [{}, {}] and \
                     clipped; the range may be too narrow for this column (a count from \
                     the data, not private: do not publish)",
                    name(j),
                    100.0 * k as f64 / n as f64,
                    feature_ranges[j].0,
                    feature_ranges[j].1
                ));
            }
        }
        if let (Some(k), Some(((lo, hi), _))) = (target_clipped, target) {
            if k * 10 > n {
                warnings.push(format!(
                    "target: {k} of {n} training values ({:.0} %) were outside [{lo}, {hi}] \
                     and clipped; predictions stay inside that range (a count from the \
                     data, not private: do not publish)",
                    100.0 * k as f64 / n as f64,
                ));
            }
        }
        let scores = match &test {
            Some(t) => score(&model, &train, t)?,
            None => Vec::new(),
        };
        let diagnostics = Diagnostics {
            privacy: "computed from the data without privacy: do not publish".into(),
            n_train: n,
            n_test: test.as_ref().map_or(0, |t| t.n_samples()),
            clipped_per_column,
            target_clipped,
            projected_records,
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

    /// Takes the no-tuning rules of `dp_optim::auto` for DP-GCD, DP-SGD or DP-SCD (from
    /// public inputs only: the fit's epsilon and delta, the loss, the scaled bound, `n`
    /// and `p`) for every hyperparameter the caller did not give, and their warnings when
    /// the passes are the rule's. For regression the rule's clip `G0 R` is divided by
    /// `sqrt(p)` as for DP-CD (the centred, scaled rows sit mostly near 0).
    fn take_rules(
        &self,
        chosen: &mut Chosen,
        warnings: &mut Vec<FitWarning>,
        name: &str,
        rules: &AlgorithmDefaults,
        q: usize,
    ) {
        chosen.passes = self.passes.unwrap_or(rules.passes);
        if self.passes.is_none() {
            warnings.extend(rules.warnings.iter().cloned());
        }
        chosen.step_scale = rules.step_scale.map(|s| self.step_scale.unwrap_or(s));
        let rule_clip = if self.task == Task::Regression && rules.step_scale.is_some() {
            rules.clip / (q as f64).sqrt()
        } else {
            rules.clip
        };
        chosen.clip = Some(self.clip.unwrap_or(rule_clip));
        chosen.note = format!(
            "no-tuning rules of dp_optim::auto ({name}) from epsilon, delta, the loss, the \
             scaled bound, n and p (rule values: passes {}, step scale {}, clip {}{}); \
             constants from the scaled bound (public)",
            rules.passes,
            rules
                .step_scale
                .map_or("none".to_string(), |s| s.to_string()),
            rules.clip,
            rules
                .batch_size
                .map_or(String::new(), |b| format!(", batch size {b}")),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn run_solver<D: PipelineDesign>(
        &self,
        loss: AnyLoss,
        penalty: AnyPenalty,
        data: &Dataset<D>,
        eps: f64,
        delta: f64,
        rng: &mut ChaCha20Rng,
        shape: &ScaledShape,
    ) -> Result<(Fitted, Chosen, Vec<FitWarning>)> {
        let q = data.n_features();
        let n = data.n_samples();
        let mut given = Vec::new();
        if self.passes.is_some() {
            given.push("passes".to_string());
        }
        if self.step_scale.is_some() {
            given.push("step_scale".to_string());
        }
        if self.clip.is_some() {
            given.push("clip".to_string());
        }
        if self.batch_size.is_some() {
            given.push("batch_size".to_string());
        }
        let mut chosen = Chosen {
            algorithm: self.algorithm,
            loss: loss.kind(),
            penalty: self.penalty,
            lambda: self.lambda,
            intercept: false,
            intercept_note: String::new(),
            passes: self.passes.unwrap_or(10),
            step_scale: Some(self.step_scale.unwrap_or(0.5)),
            clip: self
                .algorithm
                .is_private()
                .then(|| self.clip.unwrap_or(1.0)),
            batch_size: None,
            given,
            note: "library defaults (passes 10, step scale 0.5, clip 1)".into(),
            fit_budget: None,
            feature_share: None,
            target_share: None,
            feature_range_rule: None,
            warnings: Vec::new(),
            normalize_rows: false,
            max_nonzeros: None,
        };
        // The scaled features are in [-1, 1], the intercept column is 1: public M_j = c.
        let need_c = || {
            loss.curvature_bound().ok_or_else(|| {
                PipelineError::Unsupported(format!(
                    "{} needs a smooth loss; {} has no curvature bound (use dp-scd / sdca)",
                    self.algorithm.as_str(),
                    loss.name()
                ))
            })
        };
        let mut warnings = Vec::new();
        let fitted = match self.algorithm {
            Algorithm::Cd => {
                let c = need_c()?;
                let s = CdParams::new(loss, penalty)
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(0.5))
                    .smoothness(Smoothness::Given(Tagged::public(vec![c; q])))
                    .threads(self.threads)
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpCd => {
                let c = need_c()?;
                let mut bounds = PublicBounds::uniform(q, 1.0);
                if let Some(r) = shape.row_norm {
                    // The intercept column adds 1 to the squared norm.
                    bounds = bounds.with_row_norm(if shape.intercept {
                        (r * r + 1.0).sqrt()
                    } else {
                        r
                    });
                }
                // A declared support bound scales the passes rule (sqrt(p / k)) and sets
                // the permutation order and the per-record charge.
                if let Some(k) = shape.support {
                    bounds = bounds.with_row_support(RowSupport::AtMost(k));
                }
                let (params, rules) =
                    DpCdParams::defaults_for(loss, penalty, eps, delta, &bounds, n, q)?;
                chosen.passes = self.passes.unwrap_or(rules.passes);
                if self.passes.is_none() {
                    warnings.extend(rules.warnings.iter().cloned());
                }
                chosen.step_scale = Some(self.step_scale.unwrap_or(rules.step_scale));
                // Regression on centred, scaled targets: the rule's C = G0 R assumes a
                // residual of 1 and a row of norm R = sqrt(q) at w = 0; centred targets
                // and features sit mostly near 0, and C = G0 (the rule over sqrt(q)) is
                // what we measured to work on diabetes (`examples/validate.rs`; at eps 5,
                // C = G0 R gave 1.7x the non-private MSE, C = G0 gave 1.0x). A choice
                // from public inputs: free. Validated on diabetes only.
                let rule_clip = if self.task == Task::Regression {
                    rules.clip / (q as f64).sqrt()
                } else {
                    rules.clip
                };
                chosen.clip = Some(self.clip.unwrap_or(rule_clip));
                chosen.note = format!(
                    "no-tuning rules of dp_optim::auto from epsilon, delta, the loss, the \
                     scaled bound 1, n and p (rule values: passes {}, step scale {}, clip {}; \
                     regression: clip divided by sqrt(p), see the source); \
                     M_j = c from the scaled bound 1 (public; the rules' private estimate \
                     with {} % of the budget is not used, see the source)",
                    rules.passes,
                    rules.step_scale,
                    rules.clip,
                    rules.smoothness_share * 100.0
                );
                // Public M_j = c from the scaled bound 1 instead of the rules' private
                // estimate: a column that the ranges squeeze towards a constant has a
                // tiny true M_j, and an estimate near it (or at its floor) gives a step
                // the noise cannot justify (issue 25 item 3; on diabetes at eps 1 one of
                // 20 runs had a coefficient of -232 on the scaled data). The public
                // constant costs nothing and never overshoots.
                let s = params
                    .smoothness(Smoothness::Given(Tagged::public(vec![c; q])))
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(1.0))
                    .clip(chosen.clip.unwrap_or(1.0))
                    .threads(self.threads)
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpGcd => {
                let c = need_c()?;
                let bounds = PublicBounds::uniform(q, 1.0);
                let rules = dp_gcd_defaults(&loss, eps, delta, &bounds, n, q)?;
                self.take_rules(&mut chosen, &mut warnings, "dp_gcd_defaults", &rules, q);
                // GS-L for a smooth objective, GS-r (which handles every separable
                // penalty) with a penalty.
                let (rule, rule_name) = if self.penalty == PenaltyKind::None {
                    (SelectionRule::GsL, "GS-L")
                } else {
                    (SelectionRule::GsR, "GS-r")
                };
                chosen.note = format!("{}; selection rule {rule_name}, zCDP variant", chosen.note);
                let s = DpGcdParams::new(loss, penalty)
                    .epsilon(eps)
                    .delta(delta)
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(1.0))
                    .clip(chosen.clip.unwrap_or(1.0))
                    .variant(Variant::Zcdp)
                    .rule(rule)
                    .smoothness(Smoothness::Given(Tagged::public(vec![c; q])))
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpSgd => {
                let c = need_c()?;
                let bounds = PublicBounds::uniform(q, 1.0);
                let rules = dp_sgd_defaults(&loss, eps, delta, &bounds, n, q)?;
                self.take_rules(&mut chosen, &mut warnings, "dp_sgd_defaults", &rules, q);
                let b = match self.batch_size {
                    None => rules.batch_size.unwrap_or(1),
                    Some(b) if b == 0 || b > n as u64 => {
                        return Err(invalid(
                            "batch size",
                            b,
                            format!("1 ..= {n} (the training rows)"),
                        ))
                    }
                    Some(b) => b,
                };
                chosen.batch_size = Some(b);
                // beta <= c max_i ||x_i||^2 <= c q (every scaled entry in [-1, 1]).
                let s = DpSgdParams::new(loss, penalty)
                    .epsilon(eps)
                    .delta(delta)
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(1.0))
                    .clip(chosen.clip.unwrap_or(1.0))
                    .batch_size(b)
                    .smoothness(GlobalSmoothness::Given(Tagged::public(c * q as f64)))
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpScd | Algorithm::Sdca => {
                let lambda = match penalty {
                    AnyPenalty::L2(_) if self.lambda > 0.0 => self.lambda,
                    _ => {
                        return Err(PipelineError::Unsupported(format!(
                            "{} solves the dual of an L2-penalised problem: penalty(l2, lambda) \
                             with lambda > 0",
                            self.algorithm.as_str()
                        )))
                    }
                };
                let dual = AnyDualLoss::from_kind(loss.kind())?;
                let b = if self.algorithm == Algorithm::DpScd {
                    // Rows of norm <= 1 (each scaled entry, the intercept column
                    // included, divided by the row-norm bound: sqrt(q), or less after
                    // row normalisation).
                    let p = shape.row_scale;
                    let bounds = PublicBounds::uniform(q, 1.0 / p).with_row_norm(1.0);
                    let rules = dp_scd_defaults(&loss, lambda, eps, delta, &bounds, n, q)?;
                    self.take_rules(&mut chosen, &mut warnings, "dp_scd_defaults", &rules, q);
                    let rule_b = rules.batch_size.unwrap_or(1);
                    let b = self.batch_size.unwrap_or(rule_b);
                    if self.clip.is_none() && b > 0 {
                        // The rule's clip is on the scale of the steps, lambda n / (L R^2):
                        // kept on that scale for a batch size given by the caller.
                        chosen.clip = Some(rules.clip * rule_b as f64 / b as f64);
                    }
                    b
                } else {
                    self.batch_size.unwrap_or(1)
                };
                if b == 0 || b > n as u64 {
                    return Err(invalid(
                        "batch size",
                        b,
                        format!("1 ..= {n} (the training rows)"),
                    ));
                }
                chosen.batch_size = Some(b);
                chosen.step_scale = None;
                if self.algorithm == Algorithm::Sdca {
                    SdcaParams::new(dual, L2::new(lambda)?)
                        .passes(chosen.passes)
                        .batch_size(b)
                        .build()?
                        .fit_with_rng(data, rng)?
                } else {
                    DpScdParams::new(dual, L2::new(lambda)?)
                        .dual_noise(DualNoise::Hidden)
                        // RDP over continuous orders: the moments accountant's integer
                        // orders (at most 129) cannot reach eps below about
                        // ln(1/delta) / 128 (0.095 at delta 5e-6) at any noise.
                        .accounting(Accounting::Exact)
                        .epsilon(eps)
                        .delta(delta)
                        .passes(chosen.passes)
                        .batch_size(b)
                        .clip(chosen.clip.unwrap_or(1.0))
                        .build()?
                        .fit_with_rng(data, rng)?
                }
            }
        };
        Ok((fitted, chosen, warnings))
    }
}

fn check_len(name: &'static str, got: usize, p: usize) -> Result<()> {
    if got == p {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("{got} given"),
            format!("one per feature: the data has {p} features"),
        ))
    }
}

fn check_range(name: &'static str, (lo, hi): (f64, f64)) -> Result<()> {
    if lo.is_finite() && hi.is_finite() && lo < hi && lo.abs().max(hi.abs()) < 1e150 {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("[{lo}, {hi}]"),
            "finite, lo < hi, both within +-1e150",
        ))
    }
}

/// `[min, max]` of the values, computed WITHOUT privacy (widened by 1 on each side
/// when constant).
fn data_range(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo < hi {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

fn positive_bound(name: &'static str, b: f64) -> Result<()> {
    // 1e150: so that b^2 and the folded coefficients stay finite.
    if b.is_finite() && b > 0.0 && b < 1e150 {
        Ok(())
    } else {
        Err(invalid(name, b, "must be finite, > 0 and < 1e150"))
    }
}

/// The per-release epsilons of the private bounds and how they compose.
struct PrePlan {
    feature_epsilon: Option<f64>,
    target_epsilon: Option<f64>,
    /// The feature releases: `None` pure (basic composition, delta 0); `Some(d)`: zCDP
    /// at delta `d`. The target's two releases are always pure.
    feature_zcdp_delta: Option<f64>,
    how: String,
}

impl PrePlan {
    /// Charges the planned releases: `m` for the features (two per column, centre and
    /// half-width, or one per column: [`BoundGrid::feature_releases`]), two for the
    /// target.
    fn charge(&self, ledger: &mut Ledger, m: usize) -> Result<()> {
        self.charge_features(ledger, m)?;
        self.charge_target(ledger)
    }
    fn charge_features(&self, ledger: &mut Ledger, m: usize) -> Result<()> {
        if let Some(e) = self.feature_epsilon {
            ledger.charge(Charge::ExponentialMechanism {
                epsilon: private_bound_epsilon(e)?,
                count: m as u64,
            })?;
        }
        Ok(())
    }
    fn charge_target(&self, ledger: &mut Ledger) -> Result<()> {
        if let Some(e) = self.target_epsilon {
            ledger.charge(Charge::ExponentialMechanism {
                epsilon: private_bound_epsilon(e)?,
                count: 2,
            })?;
        }
        Ok(())
    }
    /// `(eps, delta)` of the planned releases: the feature part by the ledger's zCDP
    /// accountant (or basic composition when pure), plus the target part by basic
    /// composition (Dwork & Roth 2014, Thm 3.16).
    fn spent(&self, m: usize) -> Result<(f64, f64)> {
        let pure = |l: &Ledger| {
            let mut e = 0.0;
            for c in l.entries() {
                if let Charge::ExponentialMechanism { epsilon, count } = c {
                    e += epsilon * *count as f64;
                }
            }
            if e > 0.0 {
                dp_accounting::num::round_up(e)
            } else {
                0.0
            }
        };
        let mut f = Ledger::new();
        self.charge_features(&mut f, m)?;
        let (fe, fd) = match (self.feature_epsilon, self.feature_zcdp_delta) {
            (None, _) => (0.0, 0.0),
            (Some(_), Some(d)) => (f.guarantee(Delta::new(d)?, Accountant::Zcdp)?, d),
            (Some(_), None) => (pure(&f), 0.0),
        };
        let mut t = Ledger::new();
        self.charge_target(&mut t)?;
        let te = pure(&t);
        Ok((
            if te > 0.0 {
                dp_accounting::num::round_up(fe + te)
            } else {
                fe
            },
            fd,
        ))
    }
}

/// The margin `eps n / 4` at which a range release is reliable: `ln(K) + 3` for `K`
/// candidates (McSherry & Talwar 2007, Thm 8: the exponential mechanism picks a
/// candidate whose score is within `(2 / eps) (ln K + t)` of the best with probability
/// at least `1 - e^-t`; the median's interval scores 0 and candidates half the data away
/// score `-n/4` or less).
fn reliable_margin(grid: &BoundGrid) -> f64 {
    reliable_margin_of(grid.feature_candidates())
}

/// `ln(K) + 3` for `K` candidates (see [`reliable_margin`]).
fn reliable_margin_of(k: usize) -> f64 {
    (k as f64).ln() + 3.0
}

/// The share of epsilon for [`FeatureBounds::PrivateAuto`]: the smallest share `s` in
/// [`DEFAULT_FEATURE_SHARE`] ..= [`MAX_FEATURE_SHARE`] at which each of the `2p` range
/// releases, as planned by the pipeline's own composition for `s * epsilon`, has
/// `eps_release n / 4 >= ln(K) + 3` (the reliability condition of the warnings);
/// [`MAX_FEATURE_SHARE`] when none does. A function of public quantities only
/// (epsilon, delta, the public training size `n` under replace-one, `p`, the target's
/// share and the public grid): choosing it costs no privacy.
///
/// Why spend more than a fifth of a small budget on the ranges: ranges picked at random
/// from the grid (what an unreliable release gives) scale some columns to nothing and
/// clip others to a constant, and no fit recovers from that, while the no-tuning fit at
/// a small budget runs the fewest passes anyway and loses little from a smaller share.
/// Measured on breast_cancer at eps 1 (20 runs, `examples/validate.rs`): a share of 0.2
/// gave 0.697 test accuracy (9 runs at or below the majority class), 0.5 gave 0.849
/// (none); diabetes at eps 1: 1.00x and 0.91x the MSE of predicting the mean.
pub fn feature_share_rule(
    epsilon: f64,
    delta: f64,
    n: usize,
    p: usize,
    target_share: Option<f64>,
    grid: &BoundGrid,
) -> Result<f64> {
    let lo = DEFAULT_FEATURE_SHARE;
    // Leave room for the target's share and for the fit.
    let max = if grid.rule.releases_per_column() == 1 {
        MAX_ONE_RELEASE_SHARE
    } else {
        MAX_FEATURE_SHARE
    };
    let hi = max.min(0.9 - target_share.unwrap_or(0.0));
    if hi <= lo {
        return Ok(hi.max(0.05));
    }
    let need = reliable_margin(grid);
    let ok = |s: f64| -> Result<bool> {
        let plan = plan_preprocessing(
            epsilon,
            delta,
            grid.feature_releases(p),
            Some(s),
            target_share,
        )?;
        Ok(plan.feature_epsilon.unwrap_or(0.0) * n as f64 / 4.0 >= need)
    };
    if ok(lo)? {
        return Ok(lo);
    }
    if !ok(hi)? {
        return Ok(hi);
    }
    let (mut a, mut b) = (lo, hi);
    for _ in 0..40 {
        let m = 0.5 * (a + b);
        if ok(m)? {
            b = m;
        } else {
            a = m;
        }
    }
    Ok(b)
}

/// The rule of [`FeatureBounds::private()`]'s ranges when the grid leaves it to the
/// pipeline ([`RangeRule::Auto`]); any other rule of the grid is kept. A function of
/// public quantities only (the task, epsilon, delta, the public training size `n`, `p`,
/// the target's share and the grid): choosing it costs no privacy.
///
/// [`RangeRule::SignedMedian`] (one release per column, range `c +- |c|`) for
/// classification where the `2p` releases of [`RangeRule::MedianSpread`] fail the
/// reliability condition `eps n / 4 >= ln K + 3` even at [`MAX_FEATURE_SHARE`];
/// [`RangeRule::MedianSpread`] otherwise (and always for regression).
///
/// Why: with `p` releases instead of `2p` each gets about `sqrt 2` times the epsilon
/// under zCDP, and the exponential mechanism's chance of a range far from the data
/// falls like `K exp(-eps n / 4)`; at breast_cancer's 455 rows and 30 columns at eps 1,
/// 23 % of the two-release ranges missed their column's interquartile range and 50 %
/// were over 20 times as wide (the column is lost either way), against 20 % and 11 %
/// with one release at share 0.6. Measured (20 seeds, docs/pipeline.md): breast_cancer
/// at eps 0.5 / 1 / 2: 0.630 / 0.849 / 0.921 before, 0.773 / 0.899 / 0.928 after (hand
/// min/max 0.846 / 0.883 / 0.915); eps 5 keeps MedianSpread (0.957). Not for regression:
/// on diabetes the one-release ranges gave 1.3x the MSE of predicting the mean at eps 1
/// (MedianSpread 0.91x), because `c +- |c|` is several times wider than the data on
/// columns whose spread is small beside their median.
pub fn feature_range_rule(
    task: Task,
    epsilon: f64,
    delta: f64,
    n: usize,
    p: usize,
    target_share: Option<f64>,
    grid: &BoundGrid,
) -> Result<RangeRule> {
    if grid.rule != RangeRule::Auto {
        return Ok(grid.rule);
    }
    if task == Task::Regression {
        return Ok(RangeRule::MedianSpread);
    }
    let two = BoundGrid {
        rule: RangeRule::MedianSpread,
        ..*grid
    };
    let hi = MAX_FEATURE_SHARE.min(0.9 - target_share.unwrap_or(0.0));
    if hi <= 0.0 {
        return Ok(RangeRule::MedianSpread);
    }
    let plan = plan_preprocessing(
        epsilon,
        delta,
        two.feature_releases(p),
        Some(hi),
        target_share,
    )?;
    let reliable = plan.feature_epsilon.unwrap_or(0.0) * n as f64 / 4.0 >= reliable_margin(&two);
    Ok(if reliable {
        RangeRule::MedianSpread
    } else {
        RangeRule::SignedMedian
    })
}

/// Splits `share * epsilon` over the bound releases: `m` feature releases
/// ([`BoundGrid::feature_releases`]: `2p` or `p`) on the feature share (the better of pure and zCDP at `delta_pre = share * delta`), 2 pure
/// target releases on the target share.
fn plan_preprocessing(
    epsilon: f64,
    delta: f64,
    m: usize,
    feat: Option<f64>,
    tgt: Option<f64>,
) -> Result<PrePlan> {
    let share = feat.unwrap_or(0.0) + tgt.unwrap_or(0.0);
    if share == 0.0 {
        return Ok(PrePlan {
            feature_epsilon: None,
            target_epsilon: None,
            feature_zcdp_delta: None,
            how: "no private bounds".into(),
        });
    }
    if share >= 1.0 {
        return Err(invalid(
            "bound shares",
            share,
            "the feature and target shares must add up to less than 1",
        ));
    }
    let shave = 1.0 - 1e-9;
    let target_epsilon = tgt.map(|s| s * epsilon * shave / 2.0);
    let (feature_epsilon, feature_zcdp_delta, how_f) = match feat {
        None => (None, None, String::new()),
        Some(s) => {
            let pre = s * epsilon * shave;
            let pure = pre / m as f64;
            // zCDP: rho from eps_pre at delta_pre (Bun & Steinke 2016, Prop 1.3
            // inverted: sqrt(rho) = sqrt(L + eps) - sqrt(L), L = ln(1/delta)), each
            // release eps^2/8 (Cesar & Rogers 2021).
            let d_pre = s * delta;
            let l = -d_pre.ln();
            let rho = ((l + pre).sqrt() - l.sqrt()).powi(2);
            let z = (8.0 * rho / m as f64).sqrt();
            if z > pure {
                (
                    Some(z),
                    Some(d_pre),
                    format!(
                        "feature ranges: {m} exponential mechanisms in zCDP at delta {d_pre:e}"
                    ),
                )
            } else {
                (
                    Some(pure),
                    None,
                    format!("feature ranges: {m} pure exponential mechanisms"),
                )
            }
        }
    };
    let mut how = vec![];
    if !how_f.is_empty() {
        how.push(how_f);
    }
    if tgt.is_some() {
        how.push("target range: 2 pure exponential mechanisms".into());
    }
    let plan = PrePlan {
        feature_epsilon,
        target_epsilon,
        feature_zcdp_delta,
        how: if how.is_empty() {
            "no private bounds".into()
        } else {
            how.join("; ")
        },
    };
    // Check with the ledger's own accounting that the plan fits share * epsilon.
    let (e, d) = plan.spent(m)?;
    if e > share * epsilon || d > share * delta {
        return Err(invalid(
            "bound shares",
            format!("{e} spent of {}", share * epsilon),
            "internal: the bounds' plan exceeds its share",
        ));
    }
    Ok(plan)
}

/// What the solver needs to know about the scaled design (all public).
struct ScaledShape {
    /// Each scaled feature was further divided by this (the dual algorithms; else 1).
    row_scale: f64,
    /// A bound on the scaled rows' Euclidean norm (without the intercept column) when
    /// it is below the `sqrt(p)` that the entries in `[-1, 1]` give (normalised rows).
    row_norm: Option<f64>,
    /// The support bound the solver charges (intercept column included).
    support: Option<usize>,
    /// Whether the design has the intercept column (last).
    intercept: bool,
}

/// Non-private held-out scores with their baselines.
fn score<D: Design>(
    model: &PipelineModel,
    train: &Dataset<D>,
    test: &Dataset<D>,
) -> Result<Vec<(String, f64)>> {
    let z = model.decision_function(test.x())?;
    let y = test.y();
    let mut out = Vec::new();
    match model.task {
        Task::Classification => {
            let labels: Vec<f64> = z
                .iter()
                .map(|&v| if v >= 0.0 { 1.0 } else { -1.0 })
                .collect();
            out.push(("accuracy".into(), accuracy(y, &labels)?));
            if model.loss == LossKind::Logistic {
                let p: Vec<f64> = z.iter().map(|&v| dp_models::loss::sigmoid(v)).collect();
                out.push(("log_loss".into(), log_loss(y, &p)?));
            }
            let pos = train.y().iter().filter(|&&v| v > 0.0).count();
            let maj = if 2 * pos >= train.n_samples() {
                1.0
            } else {
                -1.0
            };
            let base: Vec<f64> = vec![maj; y.len()];
            out.push(("majority_accuracy".into(), accuracy(y, &base)?));
        }
        Task::Regression => {
            out.push(("mse".into(), mean_squared_error(y, &z)?));
            let m = train.y().iter().sum::<f64>() / train.n_samples() as f64;
            out.push(("mean_mse".into(), mean_squared_error(y, &vec![m; y.len()])?));
        }
    }
    Ok(out)
}

impl PipelineModel {
    /// `sum_j w_j clip(x_j, b_j) + intercept` for every raw row of `x` (a regression's
    /// prediction in the user's units; a classifier's margin).
    pub fn decision_function<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        let p = self.coefficients.len();
        if x.n_features() != p {
            return Err(PipelineError::Model(dp_models::ModelError::Shape(format!(
                "the model has {p} features but the data has {}",
                x.n_features()
            ))));
        }
        let mut z = vec![self.intercept.unwrap_or(0.0); x.n_samples()];
        if x.nnz() < x.n_samples() * p {
            return self.sparse_decision(x, z);
        }
        let mut row = vec![0.0; p];
        for (i, zi) in z.iter_mut().enumerate() {
            row.iter_mut().for_each(|v| *v = 0.0);
            x.for_each_in_row(i, |j, v| row[j] = v);
            if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                return Err(PipelineError::Model(dp_models::ModelError::NonFinite {
                    what: "design",
                    location: format!("row {i}, column {j}"),
                    value: row[j],
                }));
            }
            if self.normalize_rows {
                // As in the fit (dp_models::preprocess::normalize_rows).
                let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
                let s = if norm > 0.0 { 1.0 / norm } else { 1.0 };
                row.iter_mut().for_each(|v| *v *= s);
            }
            for ((&v, &(lo, hi)), &w) in
                row.iter().zip(&self.feature_ranges).zip(&self.coefficients)
            {
                *zi += w * v.clamp(lo, hi);
            }
        }
        Ok(z)
    }
    /// [`PipelineModel::decision_function`] on a design that does not store every
    /// value: a pass over the stored entries of each row only (no dense row of `p`).
    /// An absent value is 0, clipped to `clamp(0, lo_j, hi_j)`; their part of every
    /// row's sum is one constant, and each stored entry adds its difference from it.
    /// When every range holds 0 (a model fitted on sparse data) the constant is 0 and
    /// the sum is the dense one, term for term.
    fn sparse_decision<D: Design>(&self, x: &D, mut z: Vec<f64>) -> Result<Vec<f64>> {
        let zero: Vec<f64> = self
            .feature_ranges
            .iter()
            .map(|&(lo, hi)| 0.0f64.clamp(lo, hi))
            .collect();
        let base: f64 = zero
            .iter()
            .zip(&self.coefficients)
            .map(|(c, w)| w * c)
            .sum();
        for (i, zi) in z.iter_mut().enumerate() {
            let mut bad = None;
            let mut sq = 0.0;
            x.for_each_in_row(i, |j, v| {
                if !v.is_finite() && bad.is_none() {
                    bad = Some((j, v));
                }
                sq += v * v;
            });
            if let Some((j, v)) = bad {
                return Err(PipelineError::Model(dp_models::ModelError::NonFinite {
                    what: "design",
                    location: format!("row {i}, column {j}"),
                    value: v,
                }));
            }
            // As in the fit (dp_models::preprocess::normalize_rows).
            let s = if self.normalize_rows && sq > 0.0 {
                1.0 / sq.sqrt()
            } else {
                1.0
            };
            let mut acc = *zi + base;
            x.for_each_in_row(i, |j, v| {
                let (lo, hi) = self.feature_ranges[j];
                let v = if self.normalize_rows { v * s } else { v };
                acc += self.coefficients[j] * (v.clamp(lo, hi) - zero[j]);
            });
            *zi = acc;
        }
        Ok(z)
    }
    /// Predicted labels `{-1, +1}` (classification) or values (regression).
    pub fn predict<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        let z = self.decision_function(x)?;
        Ok(match self.task {
            Task::Classification => z
                .into_iter()
                .map(|v| if v >= 0.0 { 1.0 } else { -1.0 })
                .collect(),
            Task::Regression => z,
        })
    }
    /// `P(y = +1 | x)` of a logistic model; an error for other losses.
    pub fn predict_proba<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        if self.loss != LossKind::Logistic {
            return Err(PipelineError::Unsupported(format!(
                "probabilities need a logistic model; this one was fitted with {}",
                self.loss
            )));
        }
        Ok(self
            .decision_function(x)?
            .into_iter()
            .map(dp_models::loss::sigmoid)
            .collect())
    }
}
