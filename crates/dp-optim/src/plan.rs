//! What each private solver spends, written down before the first release: the plans,
//! and the privacy part of a released model ([`PrivacyReport`]).
//!
//! Plans are data-independent up to the public inputs they name (the number of records
//! `n` under replace-one or as a stated public input, and the constants with their
//! provenance).

use crate::privacy::{Adjacency, Guarantee};
use crate::schedule::{CoordinateOrder, Schedule};
use crate::support::RowSupport;
use dp_accounting::calibrate::Calibration;
use dp_accounting::ledger::Ledger;
use dp_models::constants::Provenance;
use serde::{Deserialize, Serialize};

/// Everything DP-CD spends, derived once from the parameters, the data's shape and the
/// smoothness constants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpCdPlan {
    /// "paper", "exact" or the custom accountant's name.
    pub accounting: String,
    /// Epsilon of the optimisation's Gaussian releases alone, under the plan's
    /// accountant (the whole guarantee when nothing was spent before them).
    pub epsilon_optimisation: f64,
    /// Epsilon spent on the `M_j`: DP-CD-P's Laplace estimate, or the cost recorded in
    /// the provenance of privately estimated constants given by the caller; `None` when
    /// they cost nothing (public bounds) or were computed without privacy.
    pub epsilon_smoothness: Option<f64>,
    /// delta (all of it goes to the optimisation; the Laplace estimate is pure DP).
    pub delta: f64,
    /// Loop structure (`T`, `K`).
    pub schedule: Schedule,
    /// Coordinate order (data-independent; absent in older reports = uniform).
    #[serde(default)]
    pub coordinate_order: CoordinateOrder,
    /// Number of Gaussian coordinate releases, `T * K`.
    pub releases: u64,
    /// The public row-support bound of the accounting, if any
    /// ([`DpCdParams::row_support`](crate::DpCdParams::row_support)).
    #[serde(default)]
    pub row_support: Option<RowSupport>,
    /// With a row-support bound: the releases charged to the ledger,
    /// `min(T K, k ceil(T K / p))`, the most that one record can move (`None`: all
    /// `releases` are charged).
    #[serde(default)]
    pub charged_releases: Option<u64>,
    /// The neighbouring relation the sensitivities are for (absent in older reports =
    /// replace-one). Under add/remove `n` below is the stated public count.
    #[serde(default)]
    pub adjacency: Adjacency,
    /// Noise multiplier `s` (noise std of release `j` = `s` times its sensitivity).
    pub noise_multiplier: f64,
    /// The calibration returned by `dp-accounting` (achieved epsilon, order, ...).
    pub calibration: Calibration,
    /// Coordinate smoothness constants used.
    pub smoothness: Vec<f64>,
    /// Their provenance.
    pub smoothness_provenance: Provenance,
    /// Step sizes `gamma_j = step_scale / M_j`.
    pub step_sizes: Vec<f64>,
    /// Global clipping threshold `C`.
    pub clip: f64,
    /// Coordinate thresholds `C_j = sqrt(M_j / tr M) C`.
    pub clip_thresholds: Vec<f64>,
    /// Sensitivities of the clipped coordinate gradients: `2 C_j / n` under replace-one,
    /// `C_j / N` under add/remove (`N` the stated public count that normalises them).
    pub sensitivities: Vec<f64>,
    /// Noise standard deviations `sigma_j = s * sensitivities[j]`.
    pub noise_std: Vec<f64>,
    /// How many privately estimated `M_j` the noise made indistinguishable from 0 and
    /// were raised to the floor of their release (its noise level, see
    /// `dp_models::constants::private_coordinate_smoothness_gaussian`), so that no step
    /// `1 / M_j` is longer than the noise can justify. `None`: the constants were not
    /// estimated in this fit. A function of the noisy release and public constants
    /// (post-processing), hence releasable.
    #[serde(default)]
    pub smoothness_floored: Option<usize>,
    /// How many privately estimated `M_j` were lowered to their public ceiling
    /// `c min(b_j^2, R^2)` (`None`: not estimated in this fit).
    #[serde(default)]
    pub smoothness_ceiled: Option<usize>,
    /// True when the sweep ran in mixed precision ([`Precision`](crate::Precision)):
    /// `f32` terms clipped at `dp_models::simd::margin::release_clip(C_j, n)` (slightly
    /// below `C_j`, so that the sensitivities above hold with every rounding error
    /// included). Absent in older reports = `f64`.
    #[serde(default)]
    pub mixed_precision: bool,
}

impl DpCdPlan {
    /// The number of Gaussian releases charged to the ledger (`charged_releases`, or
    /// `releases` without a row-support bound).
    pub fn charged(&self) -> u64 {
        self.charged_releases.unwrap_or(self.releases)
    }
}

/// How DP-SGD draws its batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum BatchSampling {
    /// Each record joins the batch independently with probability `q = b / n` (Poisson
    /// subsampling; analysed under add/remove, Mironov, Talwar & Zhang 2019).
    Poisson,
    /// A uniformly random subset of exactly `b` of the `n` records, drawn afresh at
    /// every step (sampling without replacement; analysed under replace-one, Wang,
    /// Balle & Kasiviswanathan 2019). The default, matching DP-CD's relation.
    #[default]
    WithoutReplacement,
    /// Shuffled passes: each pass draws a uniformly random permutation of the `n`
    /// records and cuts it into consecutive batches of `b`, so every record is in
    /// exactly one batch per pass (DP-SCD with [`crate::DualNoise::Hidden`]; no
    /// amplification by sampling is claimed, see its proof).
    Shuffled,
}

impl BatchSampling {
    /// "poisson", "without-replacement" or "shuffled".
    pub fn name(&self) -> &'static str {
        match self {
            BatchSampling::Poisson => "poisson",
            BatchSampling::WithoutReplacement => "without-replacement",
            BatchSampling::Shuffled => "shuffled",
        }
    }
}

/// Everything DP-SGD spends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpSgdPlan {
    /// "paper", "exact" or the custom accountant's name.
    pub accounting: String,
    /// The neighbouring relation of the guarantee.
    pub adjacency: Adjacency,
    /// How batches are drawn.
    pub sampling: BatchSampling,
    /// The number of records the plan is built on: the dataset's `n` under replace-one
    /// (public by definition of the relation), the caller's stated `public_n` under
    /// add/remove (never read from the data).
    pub planned_n: usize,
    /// Epsilon of the noisy steps alone, under the plan's accountant (the whole
    /// guarantee when nothing was spent before them).
    pub epsilon: f64,
    /// delta.
    pub delta: f64,
    /// Number of noisy steps.
    pub steps: u64,
    /// Sampling rate `q = b / planned_n`.
    pub sampling_rate: f64,
    /// Batch size `b` (expected size under Poisson sampling, exact size otherwise).
    pub batch_size: u64,
    /// Noise multiplier `s`: noise std = `s * sensitivity`.
    pub noise_multiplier: f64,
    /// The calibration returned by `dp-accounting`.
    pub calibration: Calibration,
    /// Per-example L2 clipping threshold `C`.
    pub clip: f64,
    /// L2 sensitivity of the summed clipped batch gradient under `adjacency`: `C` under
    /// add/remove, `2 C` under replace-one.
    pub sensitivity: f64,
    /// Noise std per coordinate of the summed gradient, `s * sensitivity`.
    pub noise_std: f64,
    /// Global smoothness `beta`.
    pub beta: f64,
    /// Provenance of `beta`.
    pub beta_provenance: Provenance,
    /// Constant step `eta = step_scale / beta`.
    pub step: f64,
}

/// What DP-GCD spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpGcdPlan {
    /// "laplace" (the paper's) or "zcdp" (ours).
    pub variant: String,
    /// The greedy selection rule ("GS-L", "GS-s", "GS-r", "GS-q").
    pub rule: String,
    /// Iterations `T` (one full clipped gradient, one selection and one update each).
    pub iterations: u64,
    /// Step-size multiplier `gamma` (coordinate `j` moves with `gamma / M_j`).
    pub step_scale: f64,
    /// Global clipping threshold `C` (`C_j = C sqrt(M_j / tr M)`).
    pub clip: f64,
    /// Ridge strength in the smooth part.
    pub ridge: f64,
    /// Epsilon given to the iterations (the target minus what the constants cost).
    pub epsilon: f64,
    /// Update noise scale over its sensitivity `2 C_j / n` (Laplace scale / Delta for
    /// the Laplace variant, std / Delta for the zCDP variant).
    pub update_multiplier: f64,
    /// Selection noise scale over the score sensitivity `Delta_u`.
    pub selection_multiplier: f64,
    /// Score sensitivity `Delta_u = 2 C / (n sqrt(tr M))`.
    pub score_sensitivity: f64,
    /// Per-step pure epsilon `eps'` (Laplace variant).
    pub step_epsilon: Option<f64>,
    /// zCDP budget of one selection and one update (zCDP variant).
    pub rho_selection: Option<f64>,
    /// zCDP budget of one update (zCDP variant).
    pub rho_update: Option<f64>,
    /// zCDP budget of the final support test (zCDP variant with a support test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho_support_test: Option<f64>,
    /// How many coordinates the support test set to zero (a post-processing of its
    /// private release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support_test_dropped: Option<usize>,
    /// Coordinate smoothness constants used (ridge included).
    pub smoothness: Vec<f64>,
    /// Their provenance.
    pub smoothness_provenance: Provenance,
    /// How many privately estimated `M_j` were raised to their release's floor (its
    /// noise level); `None`: not estimated in this fit (see
    /// [`DpCdPlan::smoothness_floored`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoothness_floored: Option<usize>,
    /// How many were lowered to their public ceiling; `None`: not estimated in this fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoothness_ceiled: Option<usize>,
}

/// Everything DP-SCD (or SEQDP-SCD) spends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpScdPlan {
    /// "paper", "exact" or the custom accountant's name.
    pub accounting: String,
    /// The neighbouring relation of the guarantee (replace-one, or add/remove with a
    /// stated `public_n`).
    pub adjacency: Adjacency,
    /// How the batches are drawn: exactly `L` without replacement (replace-one) or
    /// Poisson with rate `L / public_n` (add/remove).
    #[serde(default)]
    pub sampling: BatchSampling,
    /// How the steps of one mini-batch are combined: "independent" (DP-SCD) or
    /// "sequential" (SEQDP-SCD).
    pub updates: String,
    /// Which dual variables are perturbed: "every-record", "sampled-records" (the
    /// paper's) or "hidden" (none: the duals are never released).
    pub dual_noise: String,
    /// The number of records `n` (public under replace-one; the stated `public_n` under
    /// add/remove).
    pub planned_n: usize,
    /// Epsilon given to the optimisation.
    pub epsilon: f64,
    /// delta.
    pub delta: f64,
    /// Number of noisy mini-batch steps `T`.
    pub steps: u64,
    /// Sampling fraction `q = L / n`.
    pub sampling_rate: f64,
    /// Mini-batch size `L` (drawn without replacement, afresh at every step; the
    /// expected size of a Poisson batch).
    pub batch_size: u64,
    /// Noise multiplier `s`: noise std = `s * sensitivity`.
    pub noise_multiplier: f64,
    /// The calibration returned by `dp-accounting`.
    pub calibration: Calibration,
    /// Bound `C` on every dual coordinate step: the requested one, capped at the loss's
    /// data-independent bound on a dual step (1 for the hinge loss, `1 - 2e-4` for the
    /// logistic loss; none for the squared loss).
    pub clip: f64,
    /// Public bound on the rows' L2 norms the sensitivity assumes.
    pub row_norm_bound: f64,
    /// L2 sensitivity of one step's update of `(alpha, v)` under `adjacency`.
    pub sensitivity: f64,
    /// Noise std per coordinate, `s * sensitivity`.
    pub noise_std: f64,
    /// Ridge strength `lambda`.
    pub lambda: f64,
}

/// The solver-specific plan a fit spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SolverPlan {
    /// DP-CD / DP-CD-P.
    DpCd(DpCdPlan),
    /// DP-SGD.
    DpSgd(DpSgdPlan),
    /// DP-GCD.
    DpGcd(DpGcdPlan),
    /// DP-SCD / SEQDP-SCD.
    DpScd(DpScdPlan),
    /// Private Frank-Wolfe (central or feature-wise distributed).
    DpFw(crate::fw_plan::FwPlan),
}

/// The privacy part of a released model: what was promised, what was spent, and the
/// guarantee of everything spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrivacyReport {
    /// Target epsilon stated by the user.
    pub target_epsilon: f64,
    /// Target delta stated by the user.
    pub target_delta: f64,
    /// The number of records the plan used, a public input (see [`Adjacency`]).
    pub n_samples: usize,
    /// The plan (noise, sensitivities, number of releases).
    pub plan: SolverPlan,
    /// Every mechanism invocation of the fit, charged before it was drawn.
    pub ledger: Ledger,
    /// The guarantee of everything in the ledger (at most the target).
    pub guarantee: Guarantee,
    /// The same releases under other valid analyses, for comparison.
    #[serde(default)]
    pub other_guarantees: Vec<Guarantee>,
    /// True when some constant the plan used was computed from the data without
    /// privacy (the caller opted in): the guarantee then does not cover what that
    /// constant reveals.
    pub uses_non_private_constants: bool,
}
