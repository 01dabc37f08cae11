//! Stochastic dual coordinate ascent (SDCA; Shalev-Shwartz & Zhang 2013) for
//! L2-regularised linear models, and the dual coordinate engine it shares with DP-SCD
//! ([`crate::dp_scd`]).
//!
//! The problem is `min_w (1/n) sum_i phi(x_i^T w, y_i) + (lambda/2) ||w||^2`; its dual and
//! the coordinate steps are in [`dp_models::dual`]. The engine keeps the dual variables
//! `alpha` and the shared vector `v = X^T alpha` (the primal model is
//! `w = v / (lambda n)`), updated incrementally: each step samples a mini-batch of `L`
//! distinct records uniformly at random and either
//!
//! * [`BatchUpdates::Independent`]: computes the `L` steps from one frozen `(alpha, v)`
//!   with the local subproblem scaled by `L` (Damaskinos et al., AAAI 2021, Eq. 8: the
//!   CoCoA+ "adding" aggregation with `sigma' = L`, `gamma = 1`) and then adds them all;
//!   or
//! * [`BatchUpdates::Sequential`]: applies the steps one after the other, each with the
//!   latest `(alpha, v)` and the plain SDCA subproblem (`sigma' = 1`).
//!
//! With `L = 1` both are plain SDCA. The duality gap `P(w) - D(alpha) >= P(w) - P*` is the
//! certificate ([`Diagnostics::duality_gap`]): it is computed with `X^T alpha` recomputed
//! from scratch (the maintained `v` is only used for the returned `w`), so rounding in
//! the incremental updates cannot make it claim too much.

use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::objective_from_predictor;
use crate::model::{Diagnostics, Fitted, LinearModel};
use crate::solver::{check_finite, Solver, Streams};
use dp_accounting::mechanisms::Gaussian;
use dp_models::dual::DualLoss;
use dp_models::simd::rows::prefetch;
use dp_models::{Dataset, Design, Penalty, L2};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};

/// How the `L` coordinate steps of one mini-batch are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum BatchUpdates {
    /// Independent steps from one snapshot, local subproblem scaled by `L`, summed (the
    /// DP-SCD paper's Algorithm 1). The default.
    #[default]
    Independent,
    /// Sequential steps, each on the latest iterate, unscaled subproblem (SDCA within the
    /// batch; the DP-SCD paper's SEQDP-SCD baseline).
    Sequential,
}

impl BatchUpdates {
    /// "independent" or "sequential".
    pub fn name(&self) -> &'static str {
        match self {
            BatchUpdates::Independent => "independent",
            BatchUpdates::Sequential => "sequential",
        }
    }
}

/// The data and constants of one dual coordinate run.
pub(crate) struct DualProblem<'a, D, L> {
    pub x: &'a D,
    pub y: &'a [f64],
    pub loss: &'a L,
    /// `1 / (lambda n)`.
    pub inv_lambda_n: f64,
    /// `||x_i||^2` for every row.
    pub sq_norms: &'a [f64],
}

/// The dual state: `alpha` (length `n`) and `v = X^T alpha` (length `p`), maintained
/// incrementally.
pub(crate) struct DualState {
    pub alpha: Vec<f64>,
    pub v: Vec<f64>,
}

/// Gaussian perturbation of the dual state after every mini-batch (DP-SCD).
pub(crate) struct StateNoise<'a, R: Rng + ?Sized> {
    /// Noise on every coordinate of `v` and on the dual variables.
    pub gaussian: Gaussian,
    pub rng: &'a mut R,
    /// `Some(pending)`: every record's dual variable is perturbed at every step, drawn
    /// lazily (`pending[j]` = first step whose noise on `alpha_j` is not yet added; the
    /// sum of `m` independent draws is one draw with `m` times the variance). `None`:
    /// only the sampled records' dual variables are perturbed (the paper's Algorithm 1),
    /// or none of them if `duals` is false.
    pub pending: Option<Vec<u64>>,
    /// False: the dual variables get no noise at all (they are never released; only
    /// `v` is perturbed, see `DualNoise::Hidden` in [`crate::dp_scd`]).
    pub duals: bool,
}

impl<R: Rng + ?Sized> StateNoise<'_, R> {
    /// Adds to `alpha_j` the noise of the steps before `t` not yet added.
    #[inline]
    fn catch_up(&mut self, j: usize, t: u64, alpha: &mut f64) {
        if let Some(pending) = self.pending.as_mut() {
            let m = t - pending[j];
            if m > 0 {
                *alpha += (m as f64).sqrt() * self.gaussian.sample(self.rng);
            }
            pending[j] = t;
        }
    }
    /// The noise of step `t`: on the sampled duals (paper variant) and on all of `v`.
    #[inline]
    fn after_batch(&mut self, batch: &[usize], alpha: &mut [f64], v: &mut [f64]) {
        if self.pending.is_none() && self.duals {
            for &j in batch {
                alpha[j] += self.gaussian.sample(self.rng);
            }
        }
        for vi in v.iter_mut() {
            *vi += self.gaussian.sample(self.rng);
        }
    }
}

/// Loop structure of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DualLoop {
    pub batch: usize,
    pub updates: BatchUpdates,
    /// Bound `C` on every coordinate step (`f64::INFINITY`: none).
    pub clip: f64,
    /// `Some(q)`: Poisson batches, each record joining every step independently with
    /// probability `q`; `batch` is then the public expected size `L`, which scales the
    /// local subproblem (never the realised size, which depends on the data). Only with
    /// [`BatchUpdates::Independent`]. `None`: exactly `batch` records drawn without
    /// replacement.
    pub poisson: Option<f64>,
    /// True (with `poisson: None`): shuffled passes instead of fresh batches. Each pass
    /// (`ceil(n / L)` steps, starting at a multiple of it) draws a uniformly random
    /// permutation of the records and cuts it into consecutive batches of `L` (the last
    /// one shorter when `L` does not divide `n`), so that every record is in exactly one
    /// batch per pass. Independent updates only; the subproblem is scaled by `L` for
    /// every batch.
    pub shuffled: bool,
}

/// Scratch buffers of the engine (allocated once per fit).
pub(crate) struct DualScratch {
    /// A permutation of `0..n`; after [`draw_batch`] its first `L` entries are the
    /// next batch (drawn one step ahead, so that its rows can be prefetched).
    pub perm: Vec<usize>,
    /// The batch being processed (a copy of `perm[..L]` taken before the next draw).
    pub batch: Vec<usize>,
    /// The summed update of `v` (independent updates with `L > 1`).
    pub dv: Vec<f64>,
    /// The batch's steps (independent updates).
    pub zeta: Vec<f64>,
}

impl DualScratch {
    pub(crate) fn new(n: usize, p: usize, batch: usize) -> Self {
        Self {
            perm: (0..n).collect(),
            batch: vec![0; batch],
            dv: vec![0.0; p],
            zeta: vec![0.0; batch],
        }
    }
    /// Buffers for Poisson batches of expected size `batch`: room for a batch six
    /// standard deviations above its mean, so that the buffers almost never grow (they
    /// grow by amortised doubling if a batch is larger, never shrink).
    pub(crate) fn poisson(p: usize, batch: usize) -> Self {
        let cap = batch + 6 * (batch as f64).sqrt().ceil() as usize + 16;
        Self {
            perm: Vec::new(),
            batch: Vec::with_capacity(cap),
            dv: vec![0.0; p],
            zeta: Vec::with_capacity(cap),
        }
    }
}

/// A uniformly random `b`-subset into `perm[..b]`: the first `b` draws of a Fisher-Yates
/// shuffle of the current permutation.
#[inline]
fn draw_batch<R: Rng + ?Sized>(perm: &mut [usize], b: usize, rng: &mut R) {
    let n = perm.len();
    for k in 0..b {
        let r = rng.random_range(k..n);
        perm.swap(k, r);
    }
}

/// How many rows ahead of the one being processed the engine prefetches (the rows are
/// read in random order, so the hardware prefetcher cannot guess them; a few steps of
/// work hide a cache miss).
const AHEAD: usize = 8;

/// Runs steps `first..first + steps` of the dual coordinate method (no allocation).
///
/// The batches are drawn from `sample_rng` with the same draws, in the same order, as
/// drawing each at the start of its step; draws are only made earlier (never past the
/// last step), so that the rows `AHEAD` places ahead in the processing order can be
/// prefetched ([`Design::prefetch_row`]). The noise has its own generator, so its draws
/// are unchanged too. With `L = 1` the independent and the sequential updates are the
/// same computation, and the step is added to `v` directly (the same floating-point
/// operations as going through the zeroed buffer `dv`: `0 + a = a`, and `v` never
/// holds `-0.0`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_dual<D: Design, L: DualLoss, R: Rng + ?Sized, N: Rng + ?Sized>(
    prob: &DualProblem<'_, D, L>,
    lp: DualLoop,
    state: &mut DualState,
    scratch: &mut DualScratch,
    first: u64,
    steps: u64,
    sample_rng: &mut R,
    noise: Option<&mut StateNoise<'_, N>>,
) {
    if steps == 0 {
        return;
    }
    if let Some(q) = lp.poisson {
        run_poisson(prob, lp, q, state, scratch, first, steps, sample_rng, noise);
    } else if lp.shuffled {
        run_shuffled(prob, lp, state, scratch, first, steps, sample_rng, noise);
    } else if lp.batch == 1 {
        run_single(
            prob, lp.clip, state, scratch, first, steps, sample_rng, noise,
        );
    } else {
        run_batched(prob, lp, state, scratch, first, steps, sample_rng, noise);
    }
}

/// The coordinate step of record `j` as a function of `d = x_j^T v`, from `alpha_j` and
/// bounded by `c`: `clamp(dual_step(alpha_j, d / (lambda n), y_j, k_j), -c, c)` with
/// `k_j = scale ||x_j||^2 / (lambda n)`. Passed to the fused row kernels
/// ([`Design::row_dot_axpy`]), which compute `d`, call it and add the step times `x_j`
/// in one dispatch.
#[inline(always)]
fn dual_step<'a, D: Design, L: DualLoss>(
    prob: &'a DualProblem<'_, D, L>,
    scale: f64,
    c: f64,
    alpha_j: f64,
    j: usize,
) -> impl FnOnce(f64) -> f64 + 'a {
    let k = scale * prob.sq_norms[j] * prob.inv_lambda_n;
    let y = prob.y[j];
    move |d| {
        prob.loss
            .dual_step(alpha_j, d * prob.inv_lambda_n, y, k)
            .clamp(-c, c)
    }
}

/// Prefetches the per-record values of record `j` (drawn ahead): `alpha_j`, `y_j`,
/// `||x_j||^2` and, with lazy dual noise, its pending step. A hint only: the results
/// are unchanged.
#[inline(always)]
fn prefetch_record<D: Design, L: DualLoss, N: Rng + ?Sized>(
    prob: &DualProblem<'_, D, L>,
    alpha: &[f64],
    noise: Option<&StateNoise<'_, N>>,
    j: usize,
) {
    prefetch(&alpha[j]);
    prefetch(&prob.y[j]);
    prefetch(&prob.sq_norms[j]);
    if let Some(pending) = noise.and_then(|nz| nz.pending.as_ref()) {
        prefetch(&pending[j]);
    }
}

/// `L = 1`: the record of each step is drawn up to `AHEAD` steps early into a ring.
#[allow(clippy::too_many_arguments)]
fn run_single<D: Design, L: DualLoss, R: Rng + ?Sized, N: Rng + ?Sized>(
    prob: &DualProblem<'_, D, L>,
    c: f64,
    state: &mut DualState,
    scratch: &mut DualScratch,
    first: u64,
    steps: u64,
    sample_rng: &mut R,
    mut noise: Option<&mut StateNoise<'_, N>>,
) {
    let DualState { alpha, v } = state;
    let perm = &mut scratch.perm;
    let mut ring = [0usize; AHEAD];
    let mut drawn = 0u64;
    let mut draw = |drawn: &mut u64, ring: &mut [usize; AHEAD]| {
        draw_batch(perm, 1, sample_rng);
        let j = perm[0];
        ring[(*drawn % AHEAD as u64) as usize] = j;
        prob.x.prefetch_row(j);
        *drawn += 1;
        j
    };
    while drawn < steps.min(AHEAD as u64) {
        let j = draw(&mut drawn, &mut ring);
        prefetch_record(prob, alpha, noise.as_deref(), j);
    }
    for (i, t) in (first..first + steps).enumerate() {
        let j = ring[i % AHEAD];
        if drawn < steps {
            // Overwrites slot `i % AHEAD`, already read.
            let next = draw(&mut drawn, &mut ring);
            prefetch_record(prob, alpha, noise.as_deref(), next);
        }
        if let Some(nz) = noise.as_deref_mut() {
            nz.catch_up(j, t, &mut alpha[j]);
        }
        let z = prob
            .x
            .row_dot_axpy(j, v, dual_step(prob, 1.0, c, alpha[j], j));
        alpha[j] += z;
        if let Some(nz) = noise.as_deref_mut() {
            nz.after_batch(std::slice::from_ref(&j), alpha, v);
        }
    }
}

/// `L > 1`: the next batch is drawn one step early, into `perm[..L]`.
#[allow(clippy::too_many_arguments)]
fn run_batched<D: Design, L: DualLoss, R: Rng + ?Sized, N: Rng + ?Sized>(
    prob: &DualProblem<'_, D, L>,
    lp: DualLoop,
    state: &mut DualState,
    scratch: &mut DualScratch,
    first: u64,
    steps: u64,
    sample_rng: &mut R,
    mut noise: Option<&mut StateNoise<'_, N>>,
) {
    let b = lp.batch;
    let c = lp.clip;
    let scale = match lp.updates {
        BatchUpdates::Independent => b as f64,
        BatchUpdates::Sequential => 1.0,
    };
    let DualState { alpha, v } = state;
    let DualScratch {
        perm,
        batch,
        dv,
        zeta,
    } = scratch;
    let last = first + steps - 1;
    draw_batch(perm, b, sample_rng);
    for &j in perm[..b.min(AHEAD)].iter() {
        prob.x.prefetch_row(j);
    }
    for &j in perm[..b].iter() {
        prefetch_record(prob, alpha, noise.as_deref(), j);
    }
    for t in first..=last {
        batch.copy_from_slice(&perm[..b]);
        let has_next = t < last;
        if has_next {
            draw_batch(perm, b, sample_rng);
            for &j in perm[..b].iter() {
                prefetch_record(prob, alpha, noise.as_deref(), j);
            }
        }
        // The row `AHEAD` places after `batch[s]` in the processing order.
        let prefetch_after = |s: usize| {
            let a = s + AHEAD;
            if a < b {
                prob.x.prefetch_row(batch[a]);
            } else if has_next && a - b < b {
                prob.x.prefetch_row(perm[a - b]);
            }
        };
        if let Some(nz) = noise.as_deref_mut() {
            for &j in batch.iter() {
                nz.catch_up(j, t, &mut alpha[j]);
            }
        }
        match lp.updates {
            BatchUpdates::Independent => {
                dv.iter_mut().for_each(|d| *d = 0.0);
                for (s, &j) in batch.iter().enumerate() {
                    prefetch_after(s);
                    let step = dual_step(prob, scale, c, alpha[j], j);
                    zeta[s] = prob.x.row_dot_axpy_into(j, v, dv, step);
                }
                for (&j, &z) in batch.iter().zip(zeta.iter()) {
                    alpha[j] += z;
                }
                for (vi, &d) in v.iter_mut().zip(dv.iter()) {
                    *vi += d;
                }
            }
            BatchUpdates::Sequential => {
                for (s, &j) in batch.iter().enumerate() {
                    prefetch_after(s);
                    let z = prob
                        .x
                        .row_dot_axpy(j, v, dual_step(prob, scale, c, alpha[j], j));
                    alpha[j] += z;
                }
            }
        }
        if let Some(nz) = noise.as_deref_mut() {
            nz.after_batch(batch, alpha, v);
        }
    }
}

/// Poisson batches (independent updates only): at every step each record joins the
/// batch independently with probability `q` (geometric skips, as DP-SGD's engine), the
/// steps are computed from one frozen `(alpha, v)` with the subproblem scaled by the
/// public expected size `L = lp.batch`, and then added with the step's noise.
#[allow(clippy::too_many_arguments)]
fn run_poisson<D: Design, L: DualLoss, R: Rng + ?Sized, N: Rng + ?Sized>(
    prob: &DualProblem<'_, D, L>,
    lp: DualLoop,
    q: f64,
    state: &mut DualState,
    scratch: &mut DualScratch,
    first: u64,
    steps: u64,
    sample_rng: &mut R,
    mut noise: Option<&mut StateNoise<'_, N>>,
) {
    debug_assert_eq!(lp.updates, BatchUpdates::Independent);
    let scale = lp.batch as f64;
    let c = lp.clip;
    let n = prob.y.len();
    let log1m_q = (-q).ln_1p();
    let DualState { alpha, v } = state;
    let DualScratch {
        batch, dv, zeta, ..
    } = scratch;
    for t in first..first + steps {
        batch.clear();
        let mut i = crate::sgd::geometric_skip(sample_rng, log1m_q);
        while i < n {
            batch.push(i);
            i = i
                .saturating_add(1)
                .saturating_add(crate::sgd::geometric_skip(sample_rng, log1m_q));
        }
        if let Some(nz) = noise.as_deref_mut() {
            for &j in batch.iter() {
                nz.catch_up(j, t, &mut alpha[j]);
            }
        }
        dv.iter_mut().for_each(|d| *d = 0.0);
        zeta.clear();
        for &j in batch.iter() {
            let step = dual_step(prob, scale, c, alpha[j], j);
            zeta.push(prob.x.row_dot_axpy_into(j, v, dv, step));
        }
        for (&j, &z) in batch.iter().zip(zeta.iter()) {
            alpha[j] += z;
        }
        for (vi, &d) in v.iter_mut().zip(dv.iter()) {
            *vi += d;
        }
        if let Some(nz) = noise.as_deref_mut() {
            nz.after_batch(batch, alpha, v);
        }
    }
}

/// Shuffled passes (independent updates only, see [`DualLoop::shuffled`]): step `t` is
/// batch `t mod ceil(n / L)` of the permutation drawn at the start of its pass.
#[allow(clippy::too_many_arguments)]
fn run_shuffled<D: Design, L: DualLoss, R: Rng + ?Sized, N: Rng + ?Sized>(
    prob: &DualProblem<'_, D, L>,
    lp: DualLoop,
    state: &mut DualState,
    scratch: &mut DualScratch,
    first: u64,
    steps: u64,
    sample_rng: &mut R,
    mut noise: Option<&mut StateNoise<'_, N>>,
) {
    debug_assert_eq!(lp.updates, BatchUpdates::Independent);
    let b = lp.batch;
    let scale = b as f64;
    let c = lp.clip;
    let n = prob.y.len();
    let per_pass = n.div_ceil(b) as u64;
    let DualState { alpha, v } = state;
    let DualScratch { perm, dv, zeta, .. } = scratch;
    for t in first..first + steps {
        let pos = (t % per_pass) as usize;
        if pos == 0 {
            // A full Fisher-Yates shuffle.
            draw_batch(perm, n, sample_rng);
        }
        let batch = &perm[pos * b..((pos + 1) * b).min(n)];
        dv.iter_mut().for_each(|d| *d = 0.0);
        for (s, &j) in batch.iter().enumerate() {
            let step = dual_step(prob, scale, c, alpha[j], j);
            zeta[s] = prob.x.row_dot_axpy_into(j, v, dv, step);
        }
        for (&j, &z) in batch.iter().zip(zeta.iter()) {
            alpha[j] += z;
        }
        for (vi, &d) in v.iter_mut().zip(dv.iter()) {
            *vi += d;
        }
        if let Some(nz) = noise.as_deref_mut() {
            nz.after_batch(batch, alpha, v);
        }
    }
}

/// `||x_i||^2` for every row.
pub(crate) fn row_sq_norms<D: Design>(x: &D) -> Vec<f64> {
    (0..x.n_samples()).map(|i| x.row_sq_norm(i)).collect()
}

/// The L2 strength `lambda` of an unweighted ridge penalty, or an error.
pub(crate) fn ridge_strength(penalty: &L2, p: usize, solver: &str) -> Result<f64> {
    penalty.check_dimension(p)?;
    let lambda = penalty.lambda();
    if (0..p).any(|j| penalty.strength(j) != lambda) {
        return Err(OptimError::Unsupported(format!(
            "{solver} needs the unweighted ridge penalty (lambda/2)||w||^2; per-coordinate \
             weights are not supported"
        )));
    }
    Ok(lambda)
}

/// Checks `lambda > 0` (the dual needs a strongly convex regulariser).
pub(crate) fn check_lambda(penalty: &L2) -> Result<f64> {
    let lambda = penalty.lambda();
    if lambda > 0.0 {
        Ok(lambda)
    } else {
        Err(OptimError::InvalidParameter {
            name: "lambda",
            value: lambda.to_string(),
            expected: "the ridge strength must be > 0: the dual (and w = X^T alpha / (lambda n)) \
                       needs a strongly convex regulariser",
        })
    }
}

/// Mini-batches per pass, `ceil(n / L)`, times `passes`.
pub(crate) fn dual_steps(passes: u64, n: usize, batch: u64) -> Result<u64> {
    crate::sgd::steps_for(passes, n, batch)
}

/// Checks `1 <= L <= n`.
pub(crate) fn check_batch(batch: u64, n: usize) -> Result<usize> {
    if batch == 0 || batch as usize > n {
        return Err(OptimError::InvalidParameter {
            name: "batch_size",
            value: batch.to_string(),
            expected: "the mini-batch size must be between 1 and the number of records n",
        });
    }
    Ok(batch as usize)
}

/// `(P(w), P(w) - D(alpha))` with `w` the returned model, `P(w)` evaluated from
/// `z = X w` (computed into `z`, length `n`; the same value as the fit's reported
/// objective) and `D` evaluated at `alpha` with `X^T alpha` recomputed into `u` (length
/// `p`): a valid upper bound on `P(w) - P*` by weak duality, whatever rounding the
/// maintained `v` accumulated.
#[allow(clippy::too_many_arguments)]
pub(crate) fn duality_gap<D: Design, L: DualLoss>(
    x: &D,
    y: &[f64],
    loss: &L,
    penalty: &L2,
    alpha: &[f64],
    w: &[f64],
    z: &mut [f64],
    u: &mut [f64],
) -> (f64, f64) {
    x.matvec(w, z);
    let p_val = objective_from_predictor(loss, penalty, w, z, y);
    (
        p_val,
        p_val - dual_value(x, y, loss, penalty.lambda(), alpha, u),
    )
}

/// `D(alpha) = -(1/n) sum_i phi_i*(-alpha_i) - ||X^T alpha||^2 / (2 lambda n^2)`, with
/// `X^T alpha` computed into `u`.
fn dual_value<D: Design, L: DualLoss>(
    x: &D,
    y: &[f64],
    loss: &L,
    lambda: f64,
    alpha: &[f64],
    u: &mut [f64],
) -> f64 {
    let n = alpha.len() as f64;
    let dual_loss: f64 = alpha
        .iter()
        .zip(y)
        .map(|(&a, &yi)| loss.dual_loss(a, yi))
        .sum();
    x.matvec_t(alpha, u);
    let u2: f64 = u.iter().map(|t| t * t).sum();
    -dual_loss / n - u2 / (2.0 * lambda * n * n)
}

/// Builder of SDCA. Required: `passes`.
///
/// ```
/// use dp_models::{Dataset, DenseDesign, Squared, L2};
/// use dp_optim::{SdcaParams, Solver};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let x = DenseDesign::from_row_major(4, 2, &[0.6, 0.8, -0.8, 0.6, 1.0, 0.0, 0.0, -1.0])?;
/// let data = Dataset::new(x, vec![1.0, 0.5, -1.0, 0.8])?;
/// let fit = SdcaParams::new(Squared::half(), L2::new(0.1)?)
///     .passes(200)
///     .tolerance(1e-10)
///     .build()?
///     .fit_seeded(&data, 1)?;
/// assert!(fit.diagnostics.duality_gap.unwrap() <= 1e-10 * fit.diagnostics.objective.abs());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SdcaParams<L> {
    loss: L,
    penalty: L2,
    passes: Option<u64>,
    batch_size: u64,
    updates: BatchUpdates,
    tolerance: Option<f64>,
    record_gap: bool,
    record_trajectory: bool,
}

impl<L: DualLoss> SdcaParams<L> {
    /// Starts a builder. Defaults: batch size 1, [`BatchUpdates::Independent`], no
    /// tolerance (run every pass), gap not recorded per pass.
    pub fn new(loss: L, penalty: L2) -> Self {
        Self {
            loss,
            penalty,
            passes: None,
            batch_size: 1,
            updates: BatchUpdates::Independent,
            tolerance: None,
            record_gap: false,
            record_trajectory: false,
        }
    }
    /// Record `F(w)` after every pass in [`Diagnostics::objective_trajectory`].
    pub fn record_trajectory(mut self, record: bool) -> Self {
        self.record_trajectory = record;
        self
    }
    /// Maximum number of passes (one pass = `ceil(n / L)` mini-batches).
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
        self
    }
    /// Mini-batch size `L` (1 to `n`).
    pub fn batch_size(mut self, b: u64) -> Self {
        self.batch_size = b;
        self
    }
    /// How the steps of one mini-batch are combined.
    pub fn updates(mut self, updates: BatchUpdates) -> Self {
        self.updates = updates;
        self
    }
    /// Stop after the first pass whose duality gap is at most `tol * |P(w)|` (> 0).
    pub fn tolerance(mut self, tol: f64) -> Self {
        self.tolerance = Some(tol);
        self
    }
    /// Record the duality gap after every pass in
    /// [`Diagnostics::duality_gap_trajectory`].
    pub fn record_gap(mut self, record: bool) -> Self {
        self.record_gap = record;
        self
    }
    /// Checks every data-independent parameter once.
    pub fn build(self) -> Result<Sdca<L>> {
        let passes = positive_count("passes", self.passes.ok_or(OptimError::Missing("passes"))?)?;
        positive_count("batch_size", self.batch_size)?;
        check_lambda(&self.penalty)?;
        if let Some(t) = self.tolerance {
            positive("tolerance", t)?;
        }
        Ok(Sdca {
            loss: self.loss,
            penalty: self.penalty,
            passes,
            batch_size: self.batch_size,
            updates: self.updates,
            tolerance: self.tolerance,
            record_gap: self.record_gap,
            record_trajectory: self.record_trajectory,
        })
    }
}

/// SDCA with checked parameters (see [`SdcaParams`]); DP-SCD's non-private twin.
#[derive(Debug, Clone)]
pub struct Sdca<L> {
    loss: L,
    penalty: L2,
    passes: u64,
    batch_size: u64,
    updates: BatchUpdates,
    tolerance: Option<f64>,
    record_gap: bool,
    record_trajectory: bool,
}

impl<L> Sdca<L> {
    /// Name used in reports.
    pub fn name(&self) -> &'static str {
        "sdca"
    }
}

impl<D: Design, L: DualLoss> Solver<D> for Sdca<L> {
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        self.fit_inner(data, Streams::from_rng(rng))
    }
}

impl<L: DualLoss> Sdca<L> {
    pub(crate) fn fit_inner<D: Design>(
        &self,
        data: &Dataset<D>,
        mut streams: Streams,
    ) -> Result<Fitted> {
        let start = std::time::Instant::now();
        let (n, p) = (data.n_samples(), data.n_features());
        data.check_labels_for(&self.loss)?;
        let lambda = ridge_strength(&self.penalty, p, "SDCA")?;
        let batch = check_batch(self.batch_size, n)?;
        let per_pass = dual_steps(1, n, self.batch_size)?;
        let sq = row_sq_norms(data.x());
        let prob = DualProblem {
            x: data.x(),
            y: data.y(),
            loss: &self.loss,
            inv_lambda_n: 1.0 / (lambda * n as f64),
            sq_norms: &sq,
        };
        let lp = DualLoop {
            batch,
            updates: self.updates,
            clip: f64::INFINITY,
            poisson: None,
            shuffled: false,
        };
        let mut state = DualState {
            alpha: vec![0.0; n],
            v: vec![0.0; p],
        };
        let mut scratch = DualScratch::new(n, p, batch);
        let mut w = vec![0.0; p];
        let mut u = vec![0.0; p];
        let mut z = vec![0.0; n];
        let mut trajectory = Vec::new();
        let mut gap = None;
        let mut steps = 0u64;
        let check = self.tolerance.is_some() || self.record_gap;
        let mut objectives = Vec::new();
        for _ in 0..self.passes {
            run_dual::<_, _, _, rand_chacha::ChaCha20Rng>(
                &prob,
                lp,
                &mut state,
                &mut scratch,
                steps,
                per_pass,
                &mut streams.coordinates,
                None,
            );
            steps += per_pass;
            if self.record_trajectory && !check {
                primal_of(&state.v, prob.inv_lambda_n, &mut w);
                data.x().matvec(&w, &mut z);
                objectives.push(objective_from_predictor(
                    &self.loss,
                    &self.penalty,
                    &w,
                    &z,
                    data.y(),
                ));
            }
            if check {
                primal_of(&state.v, prob.inv_lambda_n, &mut w);
                let (pv, g) = duality_gap(
                    data.x(),
                    data.y(),
                    &self.loss,
                    &self.penalty,
                    &state.alpha,
                    &w,
                    &mut z,
                    &mut u,
                );
                if self.record_gap {
                    trajectory.push(g);
                }
                if self.record_trajectory {
                    objectives.push(pv);
                }
                gap = Some(g);
                if let Some(tol) = self.tolerance {
                    if g <= tol * pv.abs() {
                        break;
                    }
                }
            }
        }
        primal_of(&state.v, prob.inv_lambda_n, &mut w);
        let seconds = start.elapsed().as_secs_f64();
        check_finite("SDCA", &w, "the problem is too badly scaled for this data")?;
        // One product `z = X w` serves the objective and the gap's primal value.
        data.x().matvec(&w, &mut z);
        let objective = objective_from_predictor(&self.loss, &self.penalty, &w, &z, data.y());
        if gap.is_none() {
            let d = dual_value(data.x(), data.y(), &self.loss, lambda, &state.alpha, &mut u);
            gap = Some(objective - d);
        }
        Ok(Fitted {
            model: LinearModel {
                algorithm: "sdca".into(),
                coefficients: w,
                intercept: None,
                iterations: steps,
                privacy: None,
            },
            diagnostics: Diagnostics {
                objective,
                seconds,
                duality_gap: gap,
                duality_gap_trajectory: trajectory,
                objective_trajectory: objectives,
                ..Diagnostics::default()
            },
        })
    }
}

/// `w = v / (lambda n)`.
pub(crate) fn primal_of(v: &[f64], inv_lambda_n: f64, w: &mut [f64]) {
    for (wi, &vi) in w.iter_mut().zip(v) {
        *wi = vi * inv_lambda_n;
    }
}
