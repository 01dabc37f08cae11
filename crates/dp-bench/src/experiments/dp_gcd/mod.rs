//! The DP-GCD paper's experiments (Mangold, Bellet, Salmon, Tommasi, AISTATS 2023; Sec. 5
//! and Appendix D of the paper): the eight problems of Figure 1, DP-GCD
//! (the paper's Laplace / advanced-composition version and our zCDP variant) against
//! DP-CD and DP-SGD, Table 3 (support recovery and suboptimality on the L1 problems) and
//! Figures 1-2.
//!
//! Every decision the paper leaves open is in `docs/reproduction-log.md` (DP-GCD section).

use dp_optim::Solver;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use dp_models::constants::Tagged;
use dp_models::objective::Objective;
use dp_models::reference::{solve, ReferenceOptions};
use dp_models::{
    AnyLoss, AnyPenalty, Dataset, DenseDesign, Design, Logistic, Loss, NoPenalty, Penalty,
    SparseDesign, Squared, L1, L2,
};
use dp_optim::dp_gcd::{DpGcdParams, RnmCalibration, SelectionRule, Variant};
use dp_optim::kernel::ColumnKernels;
use dp_optim::privacy::Accounting;
use dp_optim::{CalibrationCache, DpCdParams, DpSgdParams, GlobalSmoothness};
use plotters::prelude::*;
use serde::Serialize;

use super::harness::{Run, Usage};
use super::{objective_value, ExperimentConfig, Profile};
use crate::figures::{
    format_tick, save_headline, BandPoint, ErrorFigure, Pick, RefLine, Series, PALETTE,
    PAPER_COLORS,
};
use crate::report::{
    err4, finite, machine_description, markdown_table, or_diverged, reading_section, sci,
    write_atomic, Summary, Verdict,
};
use crate::runner::{logspace, timed, BlockResult, FitFn, Grid, Hyper, RunOutput, Task, TaskId};

mod report;
mod solvers;
use report::*;
use solvers::*;

/// The experiment's name (output subdirectory).
pub const NAME: &str = "dp-gcd";

/// Target epsilon of every problem (delta is `1/n^2`), as in the DP-GCD paper, Sec. 5.
pub const EPSILON: f64 = 1.0;

/// Which objective a problem uses. Logistic labels are in {-1, +1}; least squares is
/// `(1/2)(x^T w - y)^2`; L2 is `(lambda/2)||w||^2`; L1 is `lambda ||w||_1`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Model {
    /// Logistic + L2.
    LogisticL2 {
        /// lambda.
        lambda: f64,
    },
    /// Least squares + L2.
    LeastSquaresL2 {
        /// lambda.
        lambda: f64,
    },
    /// LASSO.
    Lasso {
        /// lambda.
        lambda: f64,
    },
    /// Logistic + L1.
    LogisticL1 {
        /// lambda.
        lambda: f64,
    },
}

impl Model {
    /// The loss and penalty of `F`; an error for an invalid `lambda`.
    fn loss_and_penalty(self) -> Result<(AnyLoss, AnyPenalty)> {
        Ok(match self {
            Model::LogisticL2 { lambda } => (
                AnyLoss::Logistic(Logistic),
                AnyPenalty::L2(L2::new(lambda)?),
            ),
            Model::LeastSquaresL2 { lambda } => (
                AnyLoss::Squared(Squared::half()),
                AnyPenalty::L2(L2::new(lambda)?),
            ),
            Model::Lasso { lambda } => (
                AnyLoss::Squared(Squared::half()),
                AnyPenalty::L1(L1::new(lambda)?),
            ),
            Model::LogisticL1 { lambda } => (
                AnyLoss::Logistic(Logistic),
                AnyPenalty::L1(L1::new(lambda)?),
            ),
        })
    }
    fn is_l1(self) -> bool {
        matches!(self, Model::Lasso { .. } | Model::LogisticL1 { .. })
    }
    fn lambda(self) -> f64 {
        match self {
            Model::LogisticL2 { lambda }
            | Model::LeastSquaresL2 { lambda }
            | Model::Lasso { lambda }
            | Model::LogisticL1 { lambda } => lambda,
        }
    }
    fn label(self) -> String {
        match self {
            Model::LogisticL2 { lambda } => format!("logistic + L2 ({lambda})"),
            Model::LeastSquaresL2 { lambda } => format!("least squares + L2 ({lambda})"),
            Model::Lasso { lambda } => format!("LASSO ({lambda})"),
            Model::LogisticL1 { lambda } => format!("logistic + L1 ({lambda})"),
        }
    }
}

/// One cell of the paper's Table 3: (correct, incorrect, relative suboptimality).
pub type PaperCell = (f64, f64, f64);

/// A problem of Figure 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemName {
    /// 1(a) log1.
    Log1,
    /// 1(b) log2.
    Log2,
    /// 1(c) mtp (stand-in).
    MtpLike,
    /// 1(d) madelon, logistic + L2 (stand-in).
    MadelonL2,
    /// 1(e) square.
    Square,
    /// 1(f) california.
    California,
    /// 1(g) dorothea (stand-in).
    DorotheaLike,
    /// 1(h) madelon, logistic + L1 (stand-in).
    MadelonL1,
}

impl ProblemName {
    /// Figure 1 order.
    pub const ALL: [ProblemName; 8] = [
        ProblemName::Log1,
        ProblemName::Log2,
        ProblemName::MtpLike,
        ProblemName::MadelonL2,
        ProblemName::Square,
        ProblemName::California,
        ProblemName::DorotheaLike,
        ProblemName::MadelonL1,
    ];
    /// Name in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemName::Log1 => "log1",
            ProblemName::Log2 => "log2",
            ProblemName::MtpLike => "mtp-like",
            ProblemName::MadelonL2 => "madelon-like-l2",
            ProblemName::Square => "square",
            ProblemName::California => "california",
            ProblemName::DorotheaLike => "dorothea-like",
            ProblemName::MadelonL1 => "madelon-like-l1",
        }
    }
    /// Figure 1 panel.
    pub fn panel(self) -> &'static str {
        match self {
            ProblemName::Log1 => "1(a)",
            ProblemName::Log2 => "1(b)",
            ProblemName::MtpLike => "1(c)",
            ProblemName::MadelonL2 => "1(d)",
            ProblemName::Square => "1(e)",
            ProblemName::California => "1(f)",
            ProblemName::DorotheaLike => "1(g)",
            ProblemName::MadelonL1 => "1(h)",
        }
    }
    /// Synthetic stand-in for a dataset we cannot ship.
    pub fn stand_in(self) -> bool {
        matches!(
            self,
            ProblemName::MtpLike
                | ProblemName::MadelonL2
                | ProblemName::DorotheaLike
                | ProblemName::MadelonL1
        )
    }
    /// The objective (the DP-GCD paper's Figure 1 captions; the scaling conventions the paper
    /// leaves open are in `docs/reproduction-log.md`).
    pub fn model(self) -> Model {
        match self {
            ProblemName::Log1 | ProblemName::Log2 => Model::LogisticL2 {
                lambda: crate::synthetic::LOG_LAMBDA,
            },
            ProblemName::MtpLike => Model::LeastSquaresL2 { lambda: 5e-8 },
            ProblemName::MadelonL2 => Model::LogisticL2 { lambda: 1.0 },
            ProblemName::Square => Model::Lasso {
                lambda: crate::synthetic::SQUARE_LAMBDA,
            },
            ProblemName::California => Model::Lasso { lambda: 0.1 },
            ProblemName::DorotheaLike => Model::LogisticL1 { lambda: 0.01 },
            ProblemName::MadelonL1 => Model::LogisticL1 { lambda: 0.05 },
        }
    }
    /// The paper's Table 3 row for this problem, `||w*||_0` first:
    /// `(||w*||_0, [(correct, incorrect, gap); DP-CD, DP-SGD, DP-GCD])`.
    pub fn paper_table3(self) -> Option<(usize, [PaperCell; 3])> {
        match self {
            ProblemName::Square => {
                Some((7, [(0.0, 0.0, 0.75), (0.0, 3.0, 0.75), (2.0, 0.0, 0.35)]))
            }
            ProblemName::California => Some((
                3,
                [(3.0, 2.0, 0.0024), (3.0, 5.0, 0.020), (2.0, 0.0, 0.00056)],
            )),
            ProblemName::DorotheaLike => {
                Some((72, [(1.0, 1.0, 0.77), (0.0, 0.0, 0.78), (1.0, 0.0, 0.64)]))
            }
            ProblemName::MadelonL1 => Some((
                3,
                [(0.0, 0.0, 0.0085), (0.0, 0.0, 0.012), (1.0, 0.0, 0.0015)],
            )),
            _ => None,
        }
    }
}

/// Seeds of the generated problems (documented in `docs/reproduction-log.md`).
pub const DATA_SEED: u64 = 0;
/// madelon-like seed: the seed whose L1 solution has the paper's `||w*||_0 = 3`
/// (`docs/datasets.md`).
pub const MADELON_SEED: u64 = 1;

/// An algorithm of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// DP-GCD as the paper: Laplace noise, Laplace report-noisy-max (the paper's
    /// calibration), advanced composition (eq. 2).
    DpGcd,
    /// DP-GCD with Gaussian updates and the exponential mechanism, zCDP.
    DpGcdZcdp,
    /// [`Algorithm::DpGcdZcdp`] ending with the private support test
    /// (`DpGcdParams::support_test`), on the L1 problems.
    DpGcdZcdpSupport,
    /// DP-CD (uniform coordinates), RDP accounting as the paper.
    DpCd,
    /// DP-SGD (batch 1 drawn without replacement, replace-one as DP-GCD), RDP of
    /// Wang, Balle & Kasiviswanathan 2019 with Mironov's conversion.
    DpSgd,
}

impl Algorithm {
    /// Name in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::DpGcd => "dp-gcd",
            Algorithm::DpGcdZcdp => "dp-gcd-zcdp",
            Algorithm::DpGcdZcdpSupport => "dp-gcd-zcdp-support",
            Algorithm::DpCd => "dp-cd",
            Algorithm::DpSgd => "dp-sgd",
        }
    }
    fn accounting(self) -> &'static str {
        match self {
            Algorithm::DpGcd => "paper (Laplace, RNM factor 1, advanced composition eq. 2)",
            Algorithm::DpGcdZcdp => "zcdp (Gaussian + exponential mechanism, proven)",
            Algorithm::DpGcdZcdpSupport => {
                "zcdp (Gaussian + exponential mechanism + Gaussian support test, proven)"
            }
            Algorithm::DpCd => "paper (RDP, Mironov conversion)",
            Algorithm::DpSgd => "paper (RDP of batches without replacement, replace-one)",
        }
    }
}

/// Grids and run counts of a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// DP-GCD iterations `T` (one iteration = one pass).
    pub gcd_iterations: Vec<u64>,
    /// DP-GCD and DP-CD step scales (`gamma / M_j`).
    pub cd_steps: Vec<f64>,
    /// DP-SGD step scales.
    pub sgd_steps: Vec<f64>,
    /// Clipping thresholds.
    pub clips: Vec<f64>,
    /// DP-CD passes.
    pub passes: Vec<u64>,
    /// DP-SGD passes.
    pub sgd_passes: Vec<u64>,
    /// DP-SGD clipping thresholds (a DP-SGD fit costs more than a DP-CD fit, so the
    /// quick profile gives it a coarser clip axis).
    pub sgd_clips: Vec<f64>,
    /// DP-CD passes on dorothea-like.
    pub cd_passes_dorothea: Vec<u64>,
    /// DP-SGD passes on dorothea-like (its dense noise costs n p per pass).
    pub sgd_passes_dorothea: Vec<u64>,
    /// DP-SGD step scales on dorothea-like.
    pub sgd_steps_dorothea: Vec<f64>,
    /// DP-SGD clipping thresholds on dorothea-like.
    pub sgd_clips_dorothea: Vec<f64>,
    /// Proximal rules run on the L1 problems (the paper's Figure 1 uses GS-r).
    pub rules: Vec<SelectionRule>,
    /// zCDP variant: fractions of each iteration's rho spent on the selection, tuned with
    /// (T, step, clip) (tuning is not charged, as in the papers).
    pub zcdp_selection_shares: Vec<f64>,
    /// `dp-gcd-zcdp-support`: fractions of the total rho spent on the final support test
    /// (tuned; L1 problems only).
    pub support_test_fractions: Vec<f64>,
    /// `dp-gcd-zcdp-support`: selection shares (a sub-grid of `zcdp_selection_shares`).
    pub support_selection_shares: Vec<f64>,
    /// DP-CD and DP-SGD budgets below one pass, in thousandths of a pass (the paper's
    /// 0.001, 0.01 and 0.1 passes): `ceil(f p)` coordinate updates / `ceil(f n)` steps.
    pub fractional_milli_passes: Vec<u64>,
    /// Tuning runs per grid point.
    pub tuning_runs: usize,
    /// Fresh runs at the tuned point.
    pub final_runs: usize,
    /// Problems.
    #[serde(skip)]
    pub problems: Vec<ProblemName>,
}

fn every(v: &[f64], start: usize, k: usize) -> Vec<f64> {
    v.iter().skip(start).step_by(k).copied().collect()
}

impl Settings {
    /// The grids of a profile: `paper` is the DP-GCD paper's Table 2 (with its 0.001-0.1
    /// passes of DP-CD / DP-SGD), `quick` takes sub-grids of it.
    pub fn for_profile(profile: Profile) -> Self {
        let cd_steps = logspace(1e-2, 10.0, 10);
        let sgd_steps = logspace(1e-6, 1.0, 10);
        let clips = logspace(1e-4, 1e6, 50);
        match profile {
            Profile::Paper => Self {
                gcd_iterations: vec![1, 2, 4, 7, 10, 15, 20],
                cd_steps,
                sgd_steps: sgd_steps.clone(),
                clips: clips.clone(),
                passes: vec![1, 2, 3, 5, 10, 20],
                sgd_passes: vec![1, 2, 3, 5, 10, 20],
                sgd_clips: clips.clone(),
                cd_passes_dorothea: vec![1, 2, 3, 5, 10, 20],
                sgd_passes_dorothea: vec![1, 2, 3, 5, 10, 20],
                sgd_steps_dorothea: sgd_steps.clone(),
                sgd_clips_dorothea: clips.clone(),
                rules: vec![SelectionRule::GsR, SelectionRule::GsS, SelectionRule::GsQ],
                zcdp_selection_shares: vec![0.2, 0.35, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95],
                support_test_fractions: vec![0.05, 0.1, 0.2, 0.3],
                support_selection_shares: vec![0.5, 0.7, 0.85, 0.95],
                fractional_milli_passes: vec![1, 10, 100],
                tuning_runs: 5,
                final_runs: 5,
                problems: ProblemName::ALL.to_vec(),
            },
            Profile::Quick => Self {
                gcd_iterations: vec![2, 5, 10],
                cd_steps: vec![cd_steps[3], cd_steps[5], cd_steps[6]],
                sgd_steps: every(&sgd_steps, 1, 3),
                clips: every(&clips[14..], 0, 3),
                passes: vec![1, 3, 10],
                sgd_passes: vec![1, 3],
                sgd_clips: every(&clips[14..], 0, 6),
                cd_passes_dorothea: vec![1, 3],
                sgd_passes_dorothea: vec![1],
                sgd_steps_dorothea: vec![sgd_steps[0], sgd_steps[2], sgd_steps[4]],
                sgd_clips_dorothea: vec![clips[20]],
                rules: vec![SelectionRule::GsR],
                // The shares that won in the wider quick runs of docs/reproduction-log.md (the
                // selection, a max over p noisy scores, needs the larger share); a short
                // axis also keeps the winner's curse of tuning on 3 runs small.
                zcdp_selection_shares: vec![0.7, 0.85],
                support_test_fractions: vec![0.1, 0.3],
                support_selection_shares: vec![0.85],
                fractional_milli_passes: vec![1, 10, 100],
                tuning_runs: 3,
                final_runs: 5,
                problems: ProblemName::ALL.to_vec(),
            },
            Profile::Smoke => Self {
                gcd_iterations: vec![2],
                cd_steps: vec![cd_steps[4]],
                sgd_steps: vec![sgd_steps[6]],
                clips: vec![clips[20], clips[30]],
                passes: vec![1],
                sgd_passes: vec![1],
                sgd_clips: vec![clips[20], clips[30]],
                cd_passes_dorothea: vec![1],
                sgd_passes_dorothea: vec![1],
                sgd_steps_dorothea: vec![sgd_steps[6]],
                sgd_clips_dorothea: vec![clips[20]],
                rules: vec![SelectionRule::GsR],
                zcdp_selection_shares: vec![0.5],
                support_test_fractions: vec![0.2],
                support_selection_shares: vec![0.5],
                fractional_milli_passes: vec![100],
                tuning_runs: 1,
                final_runs: 2,
                problems: vec![ProblemName::California, ProblemName::Log1],
            },
        }
    }
}

/// A loaded problem with its certified optimum.
pub struct Problem<D: Design> {
    /// Which one.
    pub name: ProblemName,
    /// Data (preprocessed).
    pub data: Dataset<D>,
    /// Objective.
    pub model: Model,
    /// Certified minimiser.
    pub w_star: Vec<f64>,
    /// `F*`.
    pub objective_star: f64,
    /// Certificate (relative) and its kind.
    pub certificate: (f64, String),
    /// `(F(0) - F*) / F*`.
    pub plateau: f64,
    /// Global smoothness `beta = (c/n) lambda_max(X^T X)` of the data-fit term, computed
    /// once (non-private, as the paper) for DP-SGD's step `gamma / beta`.
    pub beta: f64,
    /// Seconds to generate / load and solve.
    pub setup_seconds: f64,
    /// The model's loss and penalty (`lambda` checked once, at load).
    loss: AnyLoss,
    penalty: AnyPenalty,
}

impl<D: Design> Problem<D> {
    /// `delta = 1/n^2`.
    pub fn delta(&self) -> f64 {
        let n = self.data.n_samples() as f64;
        1.0 / (n * n)
    }
    /// `F(w)`.
    pub fn objective(&self, w: &[f64]) -> f64 {
        objective_value(self.data.x(), self.data.y(), &self.loss, &self.penalty, w)
    }
    /// Non-zeros of `w*`.
    pub fn support_size(&self) -> usize {
        self.w_star.iter().filter(|v| **v != 0.0).count()
    }
}

fn standardized(d: &Dataset<DenseDesign>, intercept: bool) -> Result<Dataset<DenseDesign>> {
    let (x, _) = dp_models::preprocess::standardize(d.x())?;
    let x = if intercept {
        let (n, p) = (x.n_samples(), x.n_features());
        let mut cols = Vec::with_capacity(n * (p + 1));
        for j in 0..p {
            cols.extend_from_slice(x.col(j));
        }
        cols.extend(std::iter::repeat_n(1.0, n));
        DenseDesign::from_col_major(n, p + 1, &cols)?
    } else {
        x
    };
    Ok(Dataset::new(x, d.y().to_vec())?)
}

fn load_dense(name: ProblemName) -> Result<Dataset<DenseDesign>> {
    use crate::synthetic as s;
    Ok(match name {
        ProblemName::Log1 => s::log1(DATA_SEED)?.into_dataset(),
        ProblemName::Log2 => s::log2(DATA_SEED)?.into_dataset(),
        ProblemName::MtpLike => s::mtp_like(DATA_SEED)?.into_dataset(),
        ProblemName::Square => s::square(s::SQUARE_SEED)?.into_dataset(),
        ProblemName::California => standardized(&crate::data::california()?, false)?,
        ProblemName::MadelonL2 | ProblemName::MadelonL1 => {
            standardized(&s::madelon_like(MADELON_SEED, false)?.into_dataset(), true)?
        }
        ProblemName::DorotheaLike => return Err(anyhow!("dorothea-like is sparse")),
    })
}

fn certify<D: Design, L: Loss, P: Penalty>(
    d: &Dataset<D>,
    loss: &L,
    pen: &P,
) -> Result<(Vec<f64>, (f64, String))> {
    let obj = Objective::new(d, loss, pen)?;
    let c = solve(&obj, &ReferenceOptions::default())?;
    Ok((
        c.w,
        (c.relative_certificate, format!("relative {:?}", c.kind)),
    ))
}

fn finish<D: Design>(name: ProblemName, data: Dataset<D>, start: Instant) -> Result<Problem<D>> {
    let model = name.model();
    let (w_star, certificate) = match model {
        Model::LogisticL2 { lambda } => certify(&data, &Logistic, &L2::new(lambda)?),
        Model::LeastSquaresL2 { lambda } => certify(&data, &Squared::half(), &L2::new(lambda)?),
        Model::Lasso { lambda } => certify(&data, &Squared::half(), &L1::new(lambda)?),
        Model::LogisticL1 { lambda } => certify(&data, &Logistic, &L1::new(lambda)?),
    }
    .with_context(|| format!("certified optimum of {}", name.as_str()))?;
    let beta = match model {
        Model::LogisticL2 { .. } | Model::LogisticL1 { .. } => {
            dp_models::constants::global_smoothness(&Logistic, data.x())?.value
        }
        _ => dp_models::constants::global_smoothness(&Squared::half(), data.x())?.value,
    };
    let (loss, penalty) = model.loss_and_penalty()?;
    let objective = |w: &[f64]| objective_value(data.x(), data.y(), &loss, &penalty, w);
    let objective_star = objective(&w_star);
    let plateau = (objective(&vec![0.0; data.n_features()]) - objective_star) / objective_star;
    Ok(Problem {
        name,
        data,
        model,
        w_star,
        objective_star,
        certificate,
        plateau,
        beta,
        setup_seconds: start.elapsed().as_secs_f64(),
        loss,
        penalty,
    })
}

/// Loads a dense problem and certifies its optimum.
pub fn load_dense_problem(name: ProblemName) -> Result<Problem<DenseDesign>> {
    let start = Instant::now();
    let data = load_dense(name).with_context(|| format!("loading {}", name.as_str()))?;
    finish(name, data, start)
}

/// Loads dorothea-like and certifies its optimum.
pub fn load_dorothea() -> Result<Problem<SparseDesign>> {
    let start = Instant::now();
    let data = crate::synthetic::dorothea_like(DATA_SEED)?.into_dataset();
    finish(ProblemName::DorotheaLike, data, start)
}

// ---------------------------------------------------------------------------------------
// Fit closures
// ---------------------------------------------------------------------------------------

/// DP-CD and DP-SGD budgets of the runner are in thousandths of a pass (so that the
/// paper's 0.001-0.1 passes fit the runner's integer budgets); DP-GCD's are iterations.
pub const MILLI_PASSES: u64 = 1000;

// ---------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------

/// One record of `summary.json`: one (problem, algorithm, rule, budget) block at its tuned
/// step and clip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Problem name.
    pub problem: String,
    /// Figure 1 panel.
    pub panel: String,
    /// Objective.
    pub model: String,
    /// `dp-gcd`, `dp-gcd-zcdp`, `dp-cd` or `dp-sgd`.
    pub algorithm: String,
    /// How the noise is calibrated.
    pub accounting: String,
    /// DP-GCD selection rule (`gs-l`, `gs-r`, `gs-s`, `gs-q`), `null` for DP-CD / DP-SGD.
    pub rule: Option<String>,
    /// zCDP DP-GCD: fraction of each iteration's rho spent on the selection (tuned).
    pub selection_share: Option<f64>,
    /// `dp-gcd-zcdp-support`: fraction of the total rho spent on the support test (tuned).
    pub support_test: Option<f64>,
    /// Passes over the data (= iterations for DP-GCD; 0.001-0.1 are fractions of a pass
    /// for DP-CD / DP-SGD).
    pub passes: f64,
    /// Iterations: `T` (DP-GCD), `ceil(passes p)` (DP-CD), `ceil(passes n)` (DP-SGD, batches of 1).
    pub iterations: u64,
    /// Whether this budget is the one tuned jointly with step and clip (lowest tuning mean).
    pub tuned_budget: bool,
    /// Fresh runs.
    pub runs: usize,
    /// Mean relative error `(F(w) - F*)/F*` of the fresh runs (`null` if one diverged).
    pub rel_error_mean: Option<f64>,
    /// Minimum.
    pub rel_error_min: Option<f64>,
    /// Maximum.
    pub rel_error_max: Option<f64>,
    /// Mean relative error of the tuning runs at the tuned point.
    pub tuning_rel_error_mean: Option<f64>,
    /// Mean over the fresh runs of the number of coordinates non-zero in both `w` and `w*`
    /// (`null` without fresh runs).
    pub support_correct: Option<f64>,
    /// Mean over the fresh runs of the number of coordinates non-zero in `w` but zero in `w*`
    /// (`null` without fresh runs).
    pub support_incorrect: Option<f64>,
    /// Tuned step scale.
    pub step: f64,
    /// Tuned clipping threshold.
    pub clip: f64,
    /// Whether the tuned step is at an end of its grid.
    pub step_on_grid_edge: bool,
    /// Whether the tuned clip is at an end of its grid.
    pub clip_on_grid_edge: bool,
    /// Mean solver seconds per fresh run.
    pub seconds_per_run: Option<f64>,
    /// `F*`.
    pub objective_star: f64,
    /// `||w*||_0`.
    pub support_star: usize,
    /// Synthetic stand-in for a dataset the project cannot ship.
    pub stand_in: bool,
    /// Epsilon.
    pub epsilon: f64,
    /// Delta.
    pub delta: f64,
    /// Failed runs (fit returned an error) over tuning and fresh runs.
    pub failed_runs: usize,
    /// Fresh runs whose result is not finite (diverged iterates or a failed fit); the
    /// statistics over the fresh runs are `null` when this is not 0.
    pub diverged_runs: usize,
}

/// Mean correct and incorrect non-zeros of `ws` against `w_star`; `None` without runs.
fn support_counts(ws: &[Vec<f64>], w_star: &[f64]) -> Option<(f64, f64)> {
    if ws.is_empty() {
        return None;
    }
    let (mut c, mut i) = (0usize, 0usize);
    for w in ws {
        for (a, b) in w.iter().zip(w_star) {
            if *a != 0.0 {
                if *b != 0.0 {
                    c += 1;
                } else {
                    i += 1;
                }
            }
        }
    }
    Some((c as f64 / ws.len() as f64, i as f64 / ws.len() as f64))
}

fn record_of<D: Design>(b: &BlockResult, p: &Problem<D>) -> Record {
    let support = support_counts(&b.final_coefficients, &p.w_star);
    let alg = b.id.algorithm.as_str();
    let (passes, iterations) = match alg {
        "dp-cd" => (
            b.budget as f64 / MILLI_PASSES as f64,
            (b.budget * p.data.n_features() as u64).div_ceil(MILLI_PASSES),
        ),
        "dp-sgd" => (
            b.budget as f64 / MILLI_PASSES as f64,
            (b.budget * p.data.n_samples() as u64).div_ceil(MILLI_PASSES),
        ),
        _ => (b.budget as f64, b.budget),
    };
    let extra = |key: &str| -> Option<f64> {
        b.id.extra
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.parse().ok())
    };
    Record {
        problem: b.id.problem.clone(),
        panel: p.name.panel().into(),
        model: p.model.label(),
        algorithm: b.id.algorithm.clone(),
        accounting: b.id.accounting.clone(),
        rule: b
            .id
            .extra
            .iter()
            .find(|(k, _)| k == "rule")
            .map(|(_, v)| v.clone()),
        selection_share: extra("selection_share"),
        support_test: extra("support_test"),
        passes,
        iterations,
        tuned_budget: false,
        runs: b.final_rel_errors.len(),
        rel_error_mean: finite(b.final_stats.mean),
        rel_error_min: finite(b.final_stats.min),
        rel_error_max: finite(b.final_stats.max),
        tuning_rel_error_mean: finite(b.tuning_stats.mean),
        support_correct: support.map(|s| s.0),
        support_incorrect: support.map(|s| s.1),
        step: b.tuned.step,
        clip: b.tuned.clip,
        step_on_grid_edge: b.tuned_on_edge.0,
        clip_on_grid_edge: b.tuned_on_edge.1,
        seconds_per_run: b.seconds_per_run,
        objective_star: b.objective_star,
        support_star: p.support_size(),
        stand_in: p.name.stand_in(),
        epsilon: EPSILON,
        delta: p.delta(),
        failed_runs: b.failures.0,
        diverged_runs: b.final_rel_errors.iter().filter(|e| !e.is_finite()).count(),
    }
}

/// Marks, for each (problem, algorithm, rule), the budget with the lowest tuning mean.
fn mark_tuned(records: &mut [Record]) {
    let keys: Vec<(String, String, Option<String>)> = records
        .iter()
        .map(|r| (r.problem.clone(), r.algorithm.clone(), r.rule.clone()))
        .collect();
    for key in &keys {
        let best = records
            .iter()
            .enumerate()
            .filter(|(_, r)| (&r.problem, &r.algorithm, &r.rule) == (&key.0, &key.1, &key.2))
            .min_by(|(_, a), (_, b)| {
                let ka = a.tuning_rel_error_mean.unwrap_or(f64::INFINITY);
                let kb = b.tuning_rel_error_mean.unwrap_or(f64::INFINITY);
                ka.total_cmp(&kb)
            })
            .map(|(i, _)| i);
        if let Some(i) = best {
            records[i].tuned_budget = true;
        }
    }
}

/// A problem's summary line for the report.
#[derive(Debug, Clone, Serialize)]
struct ProblemInfo {
    name: &'static str,
    panel: &'static str,
    model: String,
    n: usize,
    p: usize,
    nnz: usize,
    objective_star: f64,
    certificate: (f64, String),
    support_star: usize,
    plateau: f64,
    alpha5: f64,
    stand_in: bool,
    setup_seconds: f64,
    #[serde(skip)]
    abs_w_star: Vec<f64>,
}

fn info_of<D: Design>(p: &Problem<D>) -> ProblemInfo {
    let mut a: Vec<f64> = p.w_star.iter().map(|v| v.abs()).collect();
    let mut sorted = a.clone();
    sorted.sort_by(|x, y| y.total_cmp(x));
    a.retain(|v| v.is_finite());
    ProblemInfo {
        name: p.name.as_str(),
        panel: p.name.panel(),
        model: p.model.label(),
        n: p.data.n_samples(),
        p: p.data.n_features(),
        nnz: p.data.x().nnz(),
        objective_star: p.objective_star,
        certificate: p.certificate.clone(),
        support_star: p.support_size(),
        plateau: p.plateau,
        alpha5: sorted.get(5).copied().unwrap_or(0.0),
        stand_in: p.name.stand_in(),
        setup_seconds: p.setup_seconds,
        abs_w_star: a,
    }
}

/// Runs the experiment and writes `summary.json`, `report.md` and the figures into
/// `config.out_dir/dp-gcd/`.
pub fn run(config: &ExperimentConfig) -> Result<()> {
    run_with(config, &Settings::for_profile(config.profile))
}

fn run_problem<D: ColumnKernels>(
    p: &Problem<D>,
    settings: &Settings,
    run: &Run<'_>,
    records: &mut Vec<Record>,
) -> Result<()> {
    let tasks = build_tasks(p, settings);
    run.tune(&tasks, settings.tuning_runs, settings.final_runs, |b| {
        records.push(record_of(b, p));
        run.save_partial(&*records)
    })?;
    Ok(())
}

fn log_problem<D: Design>(p: &Problem<D>) {
    eprintln!(
        "dp-gcd: {} n={} p={} F*={:.10e} ({} {:.1e}), (F(0)-F*)/F* = {:.4}, ||w*||_0 = {}, {:.2} s",
        p.name.as_str(),
        p.data.n_samples(),
        p.data.n_features(),
        p.objective_star,
        p.certificate.1,
        p.certificate.0,
        p.plateau,
        p.support_size(),
        p.setup_seconds
    );
}

/// [`run`] with explicit settings.
pub fn run_with(config: &ExperimentConfig, settings: &Settings) -> Result<()> {
    let run = Run::start(config, NAME)?;
    eprintln!(
        "dp-gcd: profile {}, {} problems, DP-GCD T {:?}, passes {:?}, {} tuning + {} final runs per point",
        config.profile.name(),
        settings.problems.len(),
        settings.gcd_iterations,
        settings.passes,
        settings.tuning_runs,
        settings.final_runs
    );
    let mut records = Vec::new();
    let mut infos = Vec::new();
    for &name in &settings.problems {
        if name == ProblemName::DorotheaLike {
            let p = load_dorothea()?;
            log_problem(&p);
            infos.push(info_of(&p));
            run_problem(&p, settings, &run, &mut records)?;
        } else {
            let p = load_dense_problem(name)?;
            log_problem(&p);
            infos.push(info_of(&p));
            run_problem(&p, settings, &run, &mut records)?;
        }
    }
    mark_tuned(&mut records);
    let seconds = run.wall_seconds();
    let summary = Summary {
        meta: run.metadata(seconds),
        records,
    };
    run.write_summary(&summary)?;
    let records = summary.records;
    write_error_figures(run.dir(), &records)?;
    write_histograms(run.dir(), &infos)?;
    let usage = Usage {
        wall: seconds,
        ..run.usage()
    };
    let report = render_report(config, settings, &infos, &records, &usage);
    run.write_report(&report)?;
    eprintln!(
        "dp-gcd: wrote {} records, report and figures to {} in {:.1} s",
        records.len(),
        run.dir().display(),
        seconds
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ProgressMode;

    #[test]
    fn settings_are_sub_grids_of_the_paper() {
        let paper = Settings::for_profile(Profile::Paper);
        let quick = Settings::for_profile(Profile::Quick);
        assert_eq!(paper.gcd_iterations, vec![1, 2, 4, 7, 10, 15, 20]);
        assert_eq!(paper.clips.len(), 50);
        assert_eq!(paper.cd_steps.len(), 10);
        for v in quick
            .cd_steps
            .iter()
            .chain(&quick.clips)
            .chain(&quick.sgd_clips)
        {
            assert!(paper.cd_steps.contains(v) || paper.clips.contains(v), "{v}");
        }
        assert_eq!(quick.final_runs, 5);
        assert_eq!(quick.problems.len(), 8);
        for q in [&quick, &paper] {
            for v in &q.support_selection_shares {
                assert!(q.zcdp_selection_shares.contains(v), "{v}");
            }
            assert!(q.zcdp_selection_shares.iter().all(|v| *v > 0.0 && *v < 1.0));
            assert!(q
                .support_test_fractions
                .iter()
                .all(|v| *v > 0.0 && *v < 1.0));
        }
        for v in &quick.zcdp_selection_shares {
            assert!(paper.zcdp_selection_shares.contains(v), "{v}");
        }
        assert_eq!(paper.fractional_milli_passes, vec![1, 10, 100]);
    }

    #[test]
    fn support_counts_compare_exact_non_zeros() {
        let w_star = [1.0, 0.0, -2.0, 0.0];
        let ws = vec![vec![0.5, 0.1, 0.0, 0.0], vec![1.0, 0.0, 1.0, 3.0]];
        assert_eq!(support_counts(&ws, &w_star), Some((1.5, 1.0)));
        assert_eq!(support_counts(&[], &w_star), None);
    }

    /// End to end on the smoke profile: writes summary.json with the contract's fields,
    /// report.md with Table 3 and the figures.
    #[test]
    fn smoke_run_writes_every_output() {
        let dir = std::env::temp_dir().join(format!("dp-gcd-smoke-{}", std::process::id()));
        let config = ExperimentConfig {
            profile: Profile::Smoke,
            out_dir: dir.clone(),
            seed: 1,
            progress: ProgressMode::Silent,
        };
        run(&config).unwrap();
        let out = dir.join(NAME);
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["experiment"], NAME);
        assert_eq!(summary["profile"], "smoke");
        assert_eq!(summary["seed"], 1);
        assert!(summary["date"].as_str().unwrap().ends_with('Z'));
        assert!(summary.get("git_commit").is_some() && summary.get("machine").is_some());
        let recs = summary["records"].as_array().unwrap();
        // california (L1): dp-gcd, dp-gcd-zcdp, dp-gcd-zcdp-support with one budget each,
        // dp-cd and dp-sgd with 0.1 and 1 pass; log1 (L2): the same without the support test.
        assert_eq!(recs.len(), 13);
        let fractional = recs
            .iter()
            .filter(|r| r["passes"] == 0.1)
            .map(|r| {
                (
                    r["algorithm"].as_str().unwrap(),
                    r["iterations"].as_u64().unwrap(),
                )
            })
            .collect::<Vec<_>>();
        // 0.1 pass: ceil(0.1 p) coordinate updates, ceil(0.1 n) SGD steps.
        assert!(fractional.contains(&("dp-cd", 1)), "{fractional:?}"); // california p = 8
        assert!(fractional.contains(&("dp-sgd", 2064)), "{fractional:?}"); // n = 20,640
        for r in recs {
            for key in [
                "problem",
                "algorithm",
                "rule",
                "iterations",
                "rel_error_mean",
                "rel_error_min",
                "rel_error_max",
                "support_correct",
                "support_incorrect",
                "objective_star",
                "stand_in",
            ] {
                assert!(r.get(key).is_some(), "missing {key} in {r}");
            }
            let alg = r["algorithm"].as_str().unwrap();
            assert!([
                "dp-gcd",
                "dp-gcd-zcdp",
                "dp-gcd-zcdp-support",
                "dp-cd",
                "dp-sgd"
            ]
            .contains(&alg));
            if alg.starts_with("dp-gcd-zcdp") {
                assert_eq!(r["selection_share"], 0.5);
            }
            assert_eq!(r["stand_in"], false);
        }
        let report = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(report.contains("Table 3"));
        assert!(report.contains("dp-gcd-zcdp-support"));
        let reading = &report[report.find("## Reading").unwrap()..];
        assert!(reading.contains("targets met"), "{reading}");
        // Built at run time so the source holds no path into the shared directory.
        let shared = ["../sha", "red"].concat();
        assert!(!report.contains(&shared) && !report.contains("spec "));
        assert!(out.join("fig1-california.svg").exists());
        assert!(out.join("fig2-histograms.svg").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
