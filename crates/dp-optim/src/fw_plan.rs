//! What the private Frank-Wolfe solvers spend: the central private Frank-Wolfe of
//! Talwar, Thakurta & Zhang (2015) and the feature-wise distributed private Frank-Wolfe
//! of Lou & Cheung (AAAI 2018). Part of the plan layer (imports nothing from the
//! solvers).

use crate::privacy::Guarantee;
use serde::{Deserialize, Serialize};

/// The plan of a private Frank-Wolfe fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FwPlan {
    /// Central private Frank-Wolfe over an l1 ball (Talwar, Thakurta & Zhang 2015).
    Central(DpFwPlan),
    /// Feature-wise distributed private Frank-Wolfe (Lou & Cheung 2018, Algorithm 2).
    Distributed(DistDpFwPlan),
}

/// Everything the central private Frank-Wolfe spends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpFwPlan {
    /// "laplace-advanced" (Laplace report-noisy-max, advanced composition) or
    /// "exponential-zcdp" (exponential mechanism, zCDP via bounded range).
    pub selection: String,
    /// Iterations `T` (one private vertex selection each).
    pub iterations: u64,
    /// Radius `r` of the l1 ball.
    pub radius: f64,
    /// Public bound `B >= ||x_i||_inf`.
    pub feature_bound: f64,
    /// Public bound `Y >= |y_i|`.
    pub label_bound: f64,
    /// `sup |phi'(z, y)|` over `|z| <= B r`, `|y| <= Y`.
    pub derivative_bound: f64,
    /// Score sensitivity `Delta = 2 r B sup|phi'| / n` (replace-one).
    pub score_sensitivity: f64,
    /// Per-selection pure epsilon `eps0`.
    pub step_epsilon: f64,
    /// Noise scale `2 Delta / eps0` on each of the `2p` scores (Laplace or Gumbel).
    pub noise_scale: f64,
}

/// Everything the distributed private Frank-Wolfe spends, per party and in total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistDpFwPlan {
    /// Number of parties `K`.
    pub parties: usize,
    /// Feature indices held by each party.
    pub blocks: Vec<Vec<usize>>,
    /// Coordinates sampled per party per round `tau`.
    pub tau: usize,
    /// Rounds `T`.
    pub iterations: u64,
    /// Radius of each party's vertices ("per-party": `eta`; "split": `eta / K`).
    pub party_radius: f64,
    /// "per-party" or "split".
    pub radius_mode: String,
    /// Sampling probability `p = tau / max_k |P_k|` of the step `2 / (p t + 2)`.
    pub sampling_probability: f64,
    /// Sketch dimension `m`.
    pub sketch_dim: usize,
    /// The public seed of the sketch matrix `J` (public by design: `J` is
    /// data-independent, see `docs/privacy/dp-fw.md`).
    pub sketch_seed: u64,
    /// `max_r ||J[:, r]||_2` of the generated `J`.
    pub sketch_max_column_norm: f64,
    /// Public bound `B >= |A_rj|`.
    pub feature_bound: f64,
    /// Public bound `Y >= |y_r|`.
    pub label_bound: f64,
    /// Clipping bound `C_res` of the reconstructed residual entries.
    pub residual_clip: f64,
    /// Score sensitivity `2 B C_res / n` of one party's scores (replace-one).
    pub score_sensitivity: f64,
    /// L2 sensitivity `2 B max_r ||J[:, r]|| / n` of one released sketch (replace-one).
    pub sketch_sensitivity: f64,
    /// Per-selection epsilon `eps0` (exponential mechanism, `eps0`-bounded-range).
    pub selection_epsilon: f64,
    /// Gumbel scale `2 Delta_score / eps0`.
    pub selection_scale: f64,
    /// Gaussian noise multiplier `z` of the sketches (std / sensitivity).
    pub sketch_noise_multiplier: f64,
    /// Gaussian std on each sketch entry, `z * sketch_sensitivity`.
    pub sketch_noise_std: f64,
    /// For comparison only: the paper's nominal Laplace scale
    /// `b = 2 G eta sqrt(32 T ln(2/delta)) / (n eps)` with `G = B (K eta B + Y)`, the public
    /// per-sample bound. Not used by the fit.
    pub paper_laplace_scale: f64,
    /// Uplink floats per party over the run (`T * m`; the indices are counted apart).
    pub uplink_floats_per_party: u64,
    /// Each party's own ledger's guarantee (what one party's releases alone cost).
    pub per_party_guarantee: Guarantee,
}
