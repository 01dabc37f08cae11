//! UCI Adult, fully private: our coordinate methods against our DP-SGD and the peers
//! (our benchmark of fully private fits), at `epsilon in {0.1, 0.5, 1, 2, 5}`, `delta = 1/n^2`.
//!
//! Data: [`adult_train_test`] (the DP-SCD paper's preprocessing: one-hot, the integer
//! columns standardised, MaxAbs, rows L2-normalised to 1, statistics from the training
//! rows), split 80/20 with seed 0: `n_train = 26,049`, `n_test = 6,512`, `p = 81`.
//! After the preprocessing `|x_ij| <= 1` and `||x_i||_2 <= 1` hold for every record, so
//! they are public bounds: "fully private" rows take every constant from them or from
//! a private estimate charged to the fit's ledger. Rows whose constants come from the
//! data without privacy (the papers' setting) are shown apart and labelled so. Two rows
//! are private under add/remove, Opacus' relation, instead of replace-one (DP-SGD with
//! Poisson batches, DP-CD with `DpCdParams::adjacency`), for a like-for-like reading of
//! the Opacus row; they are shown apart.
//!
//! Protocol (the papers', whose tuning is not charged): the training rows are split
//! 80/20 (seed 1) into a tuning-fit and a validation part; every grid point of a method
//! is fitted `tuning_runs` times on the tuning-fit part at the same epsilon (delta
//! `1/n_fit^2`) and scored on the validation part; the point with the best mean
//! validation accuracy is refitted on all training rows with `final_runs` fresh seeds
//! and scored on the test rows (mean / min / max). The tuning is **not charged** to the
//! privacy budget, as in the papers; the report says so. A method is one entry of
//! [`methods`]: a grid, a fit closure and its [`Tuning`] protocol, so that rows with
//! fixed defaults or a charged private selection are one more entry.
//!
//! Baselines: the majority class of the training rows and non-private L2-regularised
//! logistic regression (the certified reference solver, `lambda` tuned on the same
//! validation split). Peers (diffprivlib, Opacus) are run by `benches/peers/adult.py` on
//! the same splits (exported by `cargo xtask adult-export DIR`) and read from
//! `benches/peers/results/adult.json` when present.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use dp_models::constants::{coordinate_smoothness, Tagged};
use dp_models::objective::Objective;
use dp_models::reference::{solve, ReferenceOptions};
use dp_models::split::{select, split_indices};
use dp_models::{Dataset, DenseDesign, Logistic, L2};
use dp_optim::auto::{dp_cd_defaults, PublicBounds};
use dp_optim::dp_gcd::Variant;
use dp_optim::select::{select_with_rng, SelectionParams};
use dp_optim::{
    Accounting, Adjacency, Averaging, CalibrationCache, CoordinateOrder, DpCdParams, DpGcdParams,
    DpSgdParams, Fitted, GlobalSmoothness, LinearModel, PrivacyParams, RowSupport, Smoothness,
    Solver,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use super::harness::Run;
use super::{ExperimentConfig, Profile};
use crate::data::adult_train_test;
use crate::figures::{save_headline, BandPoint, ErrorFigure, Pick, Series};
use crate::report::{markdown_table, write_atomic, write_json_atomic, Summary};
use crate::runner::{best_index, par_runs, stable_seed, Goal, Stats};

mod methods;
mod report;
mod tuning;
pub use methods::*;
use report::*;
use tuning::*;

/// Experiment name (output subdirectory, `cargo xtask reproduce adult`).
pub const NAME: &str = "adult";

/// The privacy levels of the benchmark.
pub const EPSILONS: [f64; 5] = [0.1, 0.5, 1.0, 2.0, 5.0];

/// Fraction of the training rows held out for validation (tuning).
pub const VALID_FRACTION: f64 = 0.2;

/// Fraction of the records held out for the test set.
pub const TEST_FRACTION: f64 = 0.2;

/// Default L2 strength (`lambda/2 ||w||^2`), the benchmark's value.
pub const LAMBDA: f64 = 1e-5;

/// Budget share of the private constants (`M_j` and DP-SGD's `beta`), as measured in
/// `docs/private-constants.md` (2 %-10 % within 0.2 points at eps >= 0.5).
pub const CONSTANTS_FRACTION: f64 = 0.05;

/// Where the peer script writes its results, relative to the workspace root.
pub const PEERS_JSON: &str = "benches/peers/results/adult.json";

/// One hyperparameter setting of a method (fields a method does not use are `None`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Passes over the data (DP-GCD: iterations, one full gradient each).
    pub passes: u64,
    /// Step scale `gamma` (step `gamma / M_j`, or `gamma / beta` for DP-SGD).
    pub step: f64,
    /// Clipping threshold `C`.
    pub clip: f64,
    /// Batch size (DP-SGD only).
    pub batch: Option<u64>,
    /// L2 strength `lambda` of `lambda/2 ||w||^2`.
    pub lambda: f64,
}

impl Point {
    fn short(&self) -> String {
        let mut s = format!("{}/{}/{}", self.passes, self.step, self.clip);
        if let Some(b) = self.batch {
            s.push_str(&format!("/b{b}"));
        }
        if self.lambda != LAMBDA {
            s.push_str(&format!("/l{:e}", self.lambda));
        }
        s
    }
}

/// How a method's hyperparameters are chosen.
pub enum Tuning {
    /// Best mean validation accuracy over the grid, **not charged** (the papers').
    Validation,
    /// No tuning: the grid has one point, used as is.
    Fixed,
    /// No tuning: the point is a function of public inputs only (epsilon, delta, `n`,
    /// `p`, the loss and the bounds), computed at each epsilon; the grid is empty.
    Rule(RuleFn),
    /// Private hyperparameter selection over the grid (`dp_optim::select`), **charged**:
    /// the released model's guarantee covers the search.
    Selection(SelectFn),
}

impl Tuning {
    /// Name in the report and `summary.json`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Tuning::Validation => "validation (not charged)",
            Tuning::Fixed => "fixed (no tuning)",
            Tuning::Rule(_) => "no-tuning rule (public inputs only)",
            Tuning::Selection(_) => "private selection (charged)",
        }
    }
}

/// A no-tuning rule: the point used at `(epsilon, delta)` on `n` rows of `p` features.
pub type RuleFn = Box<dyn Fn(f64, f64, usize, usize) -> Result<Point> + Send + Sync>;

/// What a private selection receives.
pub struct SelectInput<'a> {
    /// Target epsilon of the whole selection.
    pub epsilon: f64,
    /// Target delta.
    pub delta: f64,
    /// The grid.
    pub grid: &'a [Point],
    /// Rows the selection's fits are trained on.
    pub fit_rows: &'a Dataset<DenseDesign>,
    /// Rows of the noisy validation score.
    pub validation: &'a Dataset<DenseDesign>,
    /// Seed (replays the selection's noise: a measurement, never a release).
    pub seed: u64,
}

/// What a private selection returns.
pub struct SelectOutcome {
    /// The released model (its guarantee is the selection's).
    pub model: LinearModel,
    /// The selected point.
    pub point: Point,
    /// The target epsilon each run's fit was handed.
    pub fit_epsilon: f64,
    /// Expected number of runs of the stopping rule.
    pub expected_runs: f64,
}

/// A private selection.
pub type SelectFn = Box<dyn Fn(&SelectInput<'_>) -> Result<SelectOutcome> + Send + Sync>;

/// Which group of the report a method belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Group {
    /// Every constant public or privately estimated and charged: the comparison.
    FullyPrivate,
    /// Constants computed from the data without privacy (the papers' setting).
    DataConstants,
    /// A variant measured to try an idea (fully private), reported in its own table.
    Variant,
    /// Fully private under another neighbouring relation (add/remove, as Opacus).
    OtherRelation,
    /// Fully private, hyperparameters from no-tuning rules (nothing tuned).
    Defaults,
    /// Fully private, hyperparameters chosen by a charged private selection.
    Selection,
}

/// The kind of algorithm (for the reading: coordinate methods against DP-SGD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Family {
    /// DP-CD, DP-GCD.
    Coordinate,
    /// DP-SGD.
    Sgd,
}

/// What a fit closure receives.
pub struct FitInput<'a> {
    /// Target epsilon.
    pub epsilon: f64,
    /// Target delta.
    pub delta: f64,
    /// Hyperparameters.
    pub point: &'a Point,
    /// Training rows.
    pub data: &'a Dataset<DenseDesign>,
    /// Seed of the fit (replays its noise: these fits are measurements, never releases).
    pub seed: u64,
}

/// A fit of one method.
pub type FitFn = Box<dyn Fn(&FitInput<'_>) -> Result<Fitted> + Send + Sync>;

/// One row of the comparison.
pub struct Method {
    /// Stable key (`summary.json`, seeds).
    pub key: &'static str,
    /// Label in the report.
    pub label: String,
    /// Group.
    pub group: Group,
    /// Family.
    pub family: Family,
    /// Tuning protocol.
    pub tuning: Tuning,
    /// Hyperparameter grid (one point for [`Tuning::Fixed`], empty for
    /// [`Tuning::Rule`], the searched grid for [`Tuning::Selection`]).
    pub grid: Vec<Point>,
    /// The fit.
    pub fit: FitFn,
}

/// Grid sizes, epsilons and run counts of a profile.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Privacy levels.
    pub epsilons: Vec<f64>,
    /// Fits per grid point in the tuning.
    pub tuning_runs: usize,
    /// Fresh fits of the tuned point (test accuracy).
    pub final_runs: usize,
    /// Keep only the first rows of the training and test splits (smoke tests).
    pub subsample: Option<(usize, usize)>,
    /// Run the variant rows (ideas measured).
    pub variants: bool,
    /// Passes of DP-CD.
    pub cd_passes: Vec<u64>,
    /// Step scales of DP-CD with private / data constants.
    pub cd_steps: Vec<f64>,
    /// Step scales of DP-CD with the public `M_j = 1/4` (larger: every step is small).
    pub cd_public_steps: Vec<f64>,
    /// Clipping thresholds of DP-CD and DP-GCD.
    pub cd_clips: Vec<f64>,
    /// Iterations of DP-GCD.
    pub gcd_iterations: Vec<u64>,
    /// Step scales of DP-GCD.
    pub gcd_steps: Vec<f64>,
    /// Batch sizes of DP-SGD.
    pub sgd_batches: Vec<u64>,
    /// Passes of DP-SGD.
    pub sgd_passes: Vec<u64>,
    /// Step scales of DP-SGD (`eta = gamma / beta`).
    pub sgd_steps: Vec<f64>,
    /// Clipping thresholds of DP-SGD.
    pub sgd_clips: Vec<f64>,
    /// L2 strengths of the `lambda`-tuned variant.
    pub lambdas: Vec<f64>,
    /// Step scales of the support-aware DP-CD row that also tunes `lambda`.
    pub support_steps: Vec<f64>,
    /// L2 strengths of the support-aware DP-CD row that tunes `lambda`.
    pub support_lambdas: Vec<f64>,
    /// Run only these methods (their keys, as in `summary.json`); all when empty.
    pub only: Vec<String>,
}

impl Settings {
    /// The settings of `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        match profile {
            Profile::Paper => Settings {
                epsilons: EPSILONS.to_vec(),
                tuning_runs: 2,
                final_runs: 10,
                subsample: None,
                variants: true,
                // Widened where the last paper run's tuned points sat on an edge
                // (DP-CD 20 passes, DP-GCD 200 iterations, DP-SGD 30 passes, clip 0.1).
                cd_passes: vec![2, 5, 10, 20, 50],
                cd_steps: vec![0.1, 0.3, 1.0, 3.0],
                cd_public_steps: vec![1.0, 3.0, 10.0, 30.0],
                cd_clips: vec![0.1, 0.3, 1.0, 3.0],
                gcd_iterations: vec![20, 50, 100, 200, 500],
                gcd_steps: vec![0.3, 1.0, 3.0],
                sgd_batches: vec![64, 256, 1024],
                sgd_passes: vec![1, 3, 10, 30, 60],
                sgd_steps: vec![0.3, 1.0, 3.0, 10.0],
                sgd_clips: vec![0.03, 0.1, 0.3, 1.0],
                lambdas: vec![1e-5, 1e-4, 1e-3],
                // One more step scale (the support row's tuned step sat on 3, the edge, at
                // eps 0.1) and one more lambda (the lambda-tuned variant picked 1e-3, the
                // edge, at eps 0.1).
                support_steps: vec![0.1, 0.3, 1.0, 3.0, 10.0],
                support_lambdas: vec![1e-5, 1e-4, 1e-3, 1e-2],
                only: Vec::new(),
            },
            Profile::Quick => Settings {
                epsilons: EPSILONS.to_vec(),
                tuning_runs: 1,
                final_runs: 3,
                subsample: None,
                variants: false,
                // 20 passes: the last paper run tuned DP-CD there at 4 of 5 epsilons.
                cd_passes: vec![5, 10, 20],
                cd_steps: vec![0.3, 1.0, 3.0],
                cd_public_steps: vec![3.0, 10.0, 30.0],
                cd_clips: vec![0.3, 1.0, 3.0],
                gcd_iterations: vec![50, 100],
                gcd_steps: vec![1.0, 3.0],
                sgd_batches: vec![256, 1024],
                sgd_passes: vec![3, 10],
                sgd_steps: vec![1.0, 3.0, 10.0],
                sgd_clips: vec![0.3, 1.0],
                lambdas: vec![1e-5, 1e-3],
                support_steps: vec![0.3, 1.0, 3.0],
                support_lambdas: vec![1e-5, 1e-3],
                only: Vec::new(),
            },
            Profile::Smoke => Settings {
                epsilons: vec![1.0],
                tuning_runs: 1,
                final_runs: 2,
                subsample: Some((2000, 1000)),
                variants: true,
                cd_passes: vec![1],
                cd_steps: vec![1.0],
                cd_public_steps: vec![10.0],
                cd_clips: vec![1.0],
                gcd_iterations: vec![10],
                gcd_steps: vec![1.0],
                sgd_batches: vec![256],
                sgd_passes: vec![1],
                sgd_steps: vec![1.0],
                sgd_clips: vec![1.0],
                lambdas: vec![1e-5, 1e-3],
                support_steps: vec![1.0],
                support_lambdas: vec![1e-5, 1e-3],
                only: Vec::new(),
            },
        }
    }

    fn cd_grid(&self, steps: &[f64], lambdas: &[f64]) -> Vec<Point> {
        let mut g = Vec::new();
        for &passes in &self.cd_passes {
            for &step in steps {
                for &clip in &self.cd_clips {
                    for &lambda in lambdas {
                        g.push(Point {
                            passes,
                            step,
                            clip,
                            batch: None,
                            lambda,
                        });
                    }
                }
            }
        }
        g
    }

    fn gcd_grid(&self) -> Vec<Point> {
        let mut g = Vec::new();
        for &passes in &self.gcd_iterations {
            for &step in &self.gcd_steps {
                for &clip in &self.cd_clips {
                    g.push(Point {
                        passes,
                        step,
                        clip,
                        batch: None,
                        lambda: LAMBDA,
                    });
                }
            }
        }
        g
    }

    fn sgd_grid(&self) -> Vec<Point> {
        let mut g = Vec::new();
        for &b in &self.sgd_batches {
            for &passes in &self.sgd_passes {
                for &step in &self.sgd_steps {
                    for &clip in &self.sgd_clips {
                        g.push(Point {
                            passes,
                            step,
                            clip,
                            batch: Some(b),
                            lambda: LAMBDA,
                        });
                    }
                }
            }
        }
        g
    }
}

/// Where DP-CD / DP-GCD take the `M_j` from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constants {
    /// `M_j = c R^2 = 1/4` for every `j` (public: logistic `c = 1/4`, `R = 1`).
    Public,
    /// `Smoothness::PrivateBounded` from `|x_ij| <= 1`, `||x_i|| <= 1` with this share
    /// of epsilon, shifted into upper bounds with probability 0.95.
    Private(f64),
    /// `Smoothness::PrivateGaussian` from `||x_i|| <= 1` with this share of the
    /// Gaussian-DP budget `mu^2` (one Gaussian release composed with DP-CD's steps in
    /// GDP; for DP-GCD a share of its zCDP budget `rho`, composed in zCDP), shifted into
    /// upper bounds with probability 0.95.
    PrivateGaussian(f64),
    /// `M_j` of the training rows without privacy (floored at `1e-8` for columns that
    /// are all zero in the split): **not fully private**.
    Data,
}

impl Constants {
    fn smoothness(self, d: &Dataset<DenseDesign>) -> Result<(Smoothness, bool)> {
        let p = d.n_features();
        Ok(match self {
            Constants::Public => (Smoothness::Given(Tagged::public(vec![0.25; p])), false),
            Constants::Private(fraction) => (
                Smoothness::PrivateBounded {
                    feature_bounds: Some(Tagged::public(vec![1.0; p])),
                    row_norm_bound: Some(Tagged::public(1.0)),
                    budget_fraction: fraction,
                    failure_probability: Some(0.05),
                },
                false,
            ),
            Constants::PrivateGaussian(fraction) => (
                Smoothness::PrivateGaussian {
                    feature_bounds: Some(Tagged::public(vec![1.0; p])),
                    row_norm_bound: Some(Tagged::public(1.0)),
                    budget_fraction: fraction,
                    failure_probability: Some(0.05),
                },
                false,
            ),
            Constants::Data => (
                Smoothness::Given(
                    coordinate_smoothness(&Logistic, d.x())?
                        .map(|m| m.into_iter().map(|v| v.max(1e-8)).collect()),
                ),
                true,
            ),
        })
    }
}

/// The four splits the protocol uses.
pub struct Splits {
    /// All training rows (final fits).
    pub train: Dataset<DenseDesign>,
    /// Test rows (reported accuracy).
    pub test: Dataset<DenseDesign>,
    /// Training rows the tuning fits see.
    pub tune_fit: Dataset<DenseDesign>,
    /// Validation rows (tuning score).
    pub tune_val: Dataset<DenseDesign>,
}

/// Adult split as the experiment uses it (see the module docs); `subsample` keeps the
/// first rows of the train / test splits.
pub fn load_splits(subsample: Option<(usize, usize)>) -> Result<Splits> {
    let (mut train, mut test) = adult_train_test(TEST_FRACTION, 0)?;
    if let Some((a, b)) = subsample {
        let first = |k: usize, n: usize| (0..k.min(n)).collect::<Vec<_>>();
        train = select(&train, &first(a, train.n_samples()))?;
        test = select(&test, &first(b, test.n_samples()))?;
    }
    let (fit_idx, val_idx) = split_indices(train.n_samples(), VALID_FRACTION, 1)?;
    let (tune_fit, tune_val) = (select(&train, &fit_idx)?, select(&train, &val_idx)?);
    Ok(Splits {
        train,
        test,
        tune_fit,
        tune_val,
    })
}

/// One record of `summary.json`: one method at one epsilon (baselines: `epsilon` null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Stable key of the method.
    pub method: String,
    /// Label in the report.
    pub label: String,
    /// `fully-private`, `defaults`, `selection`, `data-constants`, `variant`,
    /// `other-relation` or `baseline`.
    pub group: String,
    /// Algorithm name of the fitted model (`dp-cd`, `dp-cd-p`, `dp-gcd-zcdp`, `dp-sgd`, ...).
    pub algorithm: String,
    /// How the noise is calibrated.
    pub accounting: String,
    /// How the hyperparameters were chosen.
    pub tuning: String,
    /// Target epsilon (`null` for the baselines).
    pub epsilon: Option<f64>,
    /// Target delta of the final fits (`1/n_train^2`; `null` for the baselines).
    pub delta: Option<f64>,
    /// Largest epsilon of the final fits' guarantees (what the ledgers compose).
    pub achieved_epsilon_max: Option<f64>,
    /// Whether every final fit's guarantee covers every constant it used.
    pub fully_private: bool,
    /// Fresh runs.
    pub runs: usize,
    /// Mean test accuracy of the fresh runs (`null` if a run failed).
    pub accuracy_mean: Option<f64>,
    /// Minimum.
    pub accuracy_min: Option<f64>,
    /// Maximum.
    pub accuracy_max: Option<f64>,
    /// Test accuracy of each fresh run.
    pub accuracy_runs: Vec<f64>,
    /// Mean validation accuracy of the tuning runs at the tuned point.
    pub validation_accuracy: Option<f64>,
    /// The tuned (or fixed, or rule) point; for a private selection the point it
    /// selected most often over the fresh runs.
    pub tuned: Option<Point>,
    /// The point each fresh run used (a selection picks per run).
    #[serde(default)]
    pub points_used: Vec<Point>,
    /// Private selection: the target epsilon each of its fits was handed.
    #[serde(default)]
    pub selection_fit_epsilon: Option<f64>,
    /// Private selection: the expected number of runs of its stopping rule.
    #[serde(default)]
    pub selection_expected_runs: Option<f64>,
    /// Grid points tried.
    pub grid_points: usize,
    /// Axes (`passes`, `step`, `clip`, `batch`, `lambda`) whose tuned value is at an end
    /// of a grid axis with more than one value (a hint that the grid is too narrow).
    pub on_grid_edge: Vec<String>,
    /// Whether `step` is in `on_grid_edge` (the other experiments' field).
    pub step_on_grid_edge: bool,
    /// Whether `clip` is in `on_grid_edge`.
    pub clip_on_grid_edge: bool,
    /// Failed fits (tuning and fresh).
    pub failed_runs: usize,
    /// Mean solver seconds per fresh run.
    pub seconds_per_run: Option<f64>,
}

/// The peers' results file (`benches/peers/adult.py`).
#[derive(Debug, Clone, Deserialize)]
pub struct PeerFile {
    /// When it was run (UTC).
    pub date: String,
    /// Package versions.
    #[serde(default)]
    pub versions: serde_json::Value,
    /// Machine.
    #[serde(default)]
    pub machine: serde_json::Value,
    /// Seeds per cell.
    pub final_runs: usize,
    /// Peers the run left out (not measured).
    #[serde(default)]
    pub absent: Vec<String>,
    /// One record per (peer, epsilon).
    pub records: Vec<PeerRecord>,
}

/// One peer at one epsilon.
#[derive(Debug, Clone, Deserialize)]
pub struct PeerRecord {
    /// `diffprivlib` or `opacus`.
    pub method: String,
    /// Label.
    pub label: String,
    /// Epsilon.
    pub epsilon: f64,
    /// Mean test accuracy.
    pub accuracy_mean: f64,
    /// Minimum.
    pub accuracy_min: f64,
    /// Maximum.
    pub accuracy_max: f64,
    /// Tuned hyperparameters as the script names them.
    #[serde(default)]
    pub tuned: serde_json::Value,
}

fn group_name(g: Group) -> &'static str {
    match g {
        Group::FullyPrivate => "fully-private",
        Group::DataConstants => "data-constants",
        Group::Variant => "variant",
        Group::OtherRelation => "other-relation",
        Group::Defaults => "defaults",
        Group::Selection => "selection",
    }
}

/// The baselines: majority class of the training rows, and non-private logistic
/// regression with `lambda` tuned on the validation split (reference solver).
fn baselines(splits: &Splits) -> Result<Vec<Record>> {
    let pos = splits.train.y().iter().filter(|&&v| v > 0.0).count();
    let majority = if 2 * pos > splits.train.n_samples() {
        1.0
    } else {
        -1.0
    };
    let maj_acc = splits.test.y().iter().filter(|&&v| v == majority).count() as f64
        / splits.test.n_samples() as f64;
    let baseline = |key: &str, label: &str, acc: f64, tuned: Option<Point>, grid: usize| Record {
        method: key.to_owned(),
        label: label.to_owned(),
        group: "baseline".to_owned(),
        algorithm: key.to_owned(),
        accounting: "none (not private)".to_owned(),
        tuning: if grid > 1 {
            Tuning::Validation.as_str().to_owned()
        } else {
            Tuning::Fixed.as_str().to_owned()
        },
        epsilon: None,
        delta: None,
        achieved_epsilon_max: None,
        fully_private: false,
        runs: 1,
        accuracy_mean: Some(acc),
        accuracy_min: Some(acc),
        accuracy_max: Some(acc),
        accuracy_runs: vec![acc],
        validation_accuracy: None,
        tuned,
        points_used: Vec::new(),
        selection_fit_epsilon: None,
        selection_expected_runs: None,
        grid_points: grid,
        on_grid_edge: Vec::new(),
        step_on_grid_edge: false,
        clip_on_grid_edge: false,
        failed_runs: 0,
        seconds_per_run: None,
    };
    let fit = |d: &Dataset<DenseDesign>, lambda: f64| -> Result<LinearModel> {
        let pen = L2::new(lambda)?;
        let obj = Objective::new(d, &Logistic, &pen)?;
        let sol = solve(&obj, &ReferenceOptions::default())?;
        Ok(LinearModel {
            algorithm: "reference".into(),
            coefficients: sol.w,
            intercept: None,
            iterations: sol.iterations,
            privacy: None,
        })
    };
    let lambdas = [1e-6, 1e-5, 1e-4, 1e-3];
    let mut best = (f64::NEG_INFINITY, LAMBDA);
    for &l in &lambdas {
        let a = fit(&splits.tune_fit, l)?.accuracy(&splits.tune_val)?;
        if a > best.0 {
            best = (a, l);
        }
    }
    let acc = fit(&splits.train, best.1)?.accuracy(&splits.test)?;
    Ok(vec![
        baseline("majority", "majority class (not private)", maj_acc, None, 1),
        baseline(
            "non-private",
            "logistic regression, non-private (lambda tuned)",
            acc,
            Some(Point {
                passes: 0,
                step: 0.0,
                clip: 0.0,
                batch: None,
                lambda: best.1,
            }),
            lambdas.len(),
        ),
    ])
}

/// Fits a run of `settings` makes: tuning fits plus fresh fits, a private selection
/// counted at its expected number of runs (10, the default stopping rule's mean) per
/// fresh run.
pub fn fit_count(settings: &Settings) -> usize {
    let per_eps: usize = methods(settings)
        .iter()
        .map(|m| match m.tuning {
            Tuning::Validation => m.grid.len() * settings.tuning_runs + settings.final_runs,
            Tuning::Fixed | Tuning::Rule(_) => settings.final_runs,
            Tuning::Selection(_) => 10 * settings.final_runs,
        })
        .sum();
    per_eps * settings.epsilons.len()
}

/// Runs the experiment with the profile's settings.
pub fn run(config: &ExperimentConfig) -> Result<()> {
    run_with(config, &Settings::for_profile(config.profile))
}

/// Reads the peers' file at `path`: `Ok(None)` when it does not exist.
pub fn read_peers(path: &Path) -> Result<Option<PeerFile>> {
    if !path.is_file() {
        return Ok(None);
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(Some(
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?,
    ))
}

/// The workspace root (two levels above this crate's manifest).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// [`run`] with explicit settings.
pub fn run_with(config: &ExperimentConfig, settings: &Settings) -> Result<()> {
    if !settings.only.is_empty() {
        let all = methods(&Settings {
            only: Vec::new(),
            ..settings.clone()
        });
        let known: Vec<&str> = all.iter().map(|m| m.key).collect();
        for k in &settings.only {
            anyhow::ensure!(
                known.contains(&k.as_str()),
                "adult: no method '{k}' in this profile; the methods are: {}",
                known.join(", ")
            );
        }
    }
    let run = Run::start(config, NAME)?;
    let splits = load_splits(settings.subsample)?;
    let methods = methods(settings);
    eprintln!(
        "adult: profile {}, n_train {}, n_test {}, p {}, {} methods x {} epsilons, {} tuning + {} final runs",
        config.profile.name(),
        splits.train.n_samples(),
        splits.test.n_samples(),
        splits.train.n_features(),
        methods.len(),
        settings.epsilons.len(),
        settings.tuning_runs,
        settings.final_runs
    );
    eprintln!(
        "adult: {} fits to run (the paper profile: {} fits at full size)",
        fit_count(settings),
        fit_count(&Settings::for_profile(Profile::Paper))
    );
    let mut records = baselines(&splits)?;
    for m in &methods {
        for &eps in &settings.epsilons {
            let t = Instant::now();
            let r = run_method(m, eps, &splits, settings, config.seed)?;
            if config.progress != crate::runner::ProgressMode::Silent {
                eprintln!(
                    "adult: {} eps {eps}: {} ({}), {:.1} s",
                    m.key,
                    r.accuracy_mean.map_or("-".into(), |a| format!("{a:.4}")),
                    r.tuned.map_or(String::new(), |p| p.short()),
                    t.elapsed().as_secs_f64()
                );
            }
            records.push(r);
            run.save_partial(&records)?;
        }
    }
    let seconds = run.wall_seconds();
    let summary = Summary {
        meta: run.metadata(seconds),
        records,
    };
    run.write_summary(&summary)?;
    let peers_path = workspace_root().join(PEERS_JSON);
    let peers = read_peers(&peers_path)?;
    write_figure(run.dir(), &summary.records, peers.as_ref())?;
    let report = render_report(
        config,
        settings,
        &splits,
        &summary.records,
        peers.as_ref(),
        seconds,
    );
    run.write_report(&report)?;
    eprintln!(
        "adult: wrote {} records, report and figure to {} in {seconds:.1} s",
        summary.records.len(),
        run.dir().display()
    );
    Ok(())
}

/// Writes the four splits of [`load_splits`] as CSV (`x0..x{p-1},y` with `y` in
/// `{-1, 1}`) into `dir`: `train.csv`, `test.csv`, `tune_fit.csv`, `tune_val.csv`, and
/// `meta.json` (sizes, epsilons, delta of the final and tuning fits).
pub fn export_splits(dir: &Path) -> Result<()> {
    let s = load_splits(None)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, d: &Dataset<DenseDesign>| -> Result<()> {
        let p = d.n_features();
        let mut out = String::new();
        for j in 0..p {
            out.push_str(&format!("x{j},"));
        }
        out.push_str("y\n");
        for i in 0..d.n_samples() {
            for v in d.x().row(i) {
                // Shortest representation that parses back to the same f64.
                out.push_str(&format!("{v:?},"));
            }
            out.push_str(&format!("{}\n", d.y()[i]));
        }
        write_atomic(&dir.join(name), out.as_bytes())
    };
    write("train.csv", &s.train)?;
    write("test.csv", &s.test)?;
    write("tune_fit.csv", &s.tune_fit)?;
    write("tune_val.csv", &s.tune_val)?;
    let n = s.train.n_samples() as f64;
    let nf = s.tune_fit.n_samples() as f64;
    let meta = serde_json::json!({
        "n_train": s.train.n_samples(),
        "n_test": s.test.n_samples(),
        "n_tune_fit": s.tune_fit.n_samples(),
        "n_tune_val": s.tune_val.n_samples(),
        "p": s.train.n_features(),
        "epsilons": EPSILONS,
        "delta": 1.0 / (n * n),
        "tune_delta": 1.0 / (nf * nf),
        "row_norm_bound": 1.0,
        "lambda": LAMBDA,
    });
    write_json_atomic(&dir.join("meta.json"), &meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_differences_never_print_a_signed_zero() {
        assert_eq!(pts(0.0004), "0.0");
        assert_eq!(pts(-0.0004), "0.0");
        assert_eq!(pts(0.0123), "+1.2");
        assert_eq!(pts(-0.0123), "-1.2");
    }

    #[test]
    fn grid_edges_flag_only_multi_valued_axes() {
        let g: Vec<Point> = [0.1, 1.0, 10.0]
            .iter()
            .map(|&step| Point {
                passes: 5,
                step,
                clip: 1.0,
                batch: None,
                lambda: LAMBDA,
            })
            .collect();
        assert_eq!(edges(&g, &g[0]), vec!["step".to_owned()]);
        assert!(edges(&g, &g[1]).is_empty());
    }

    #[test]
    fn every_profile_has_one_row_per_method_and_distinct_keys() {
        for p in [Profile::Smoke, Profile::Quick, Profile::Paper] {
            let s = Settings::for_profile(p);
            let m = methods(&s);
            let mut keys: Vec<&str> = m.iter().map(|m| m.key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), m.len());
            assert!(m
                .iter()
                .filter(|m| matches!(m.tuning, Tuning::Fixed))
                .all(|m| m.grid.len() == 1));
            assert!(m
                .iter()
                .all(|m| m.grid.is_empty() == matches!(m.tuning, Tuning::Rule(_))));
        }
    }
}
