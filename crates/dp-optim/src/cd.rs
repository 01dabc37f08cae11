//! Randomized proximal coordinate descent: the engine shared by DP-CD (Algorithm 1 of
//! Mangold et al. 2022) and its non-private twin [`Cd`].
//!
//! One step picks a coordinate `j` — by default uniformly from `{0..p-1}` with
//! replacement (Algorithm 1), or in another data-independent [`CoordinateOrder`] — computes
//! `g_j = (1/n) sum_i clip(phi'(z_i, y_i) x_ij, C_j)` from the maintained predictor
//! `z = X w` in O(nnz of column j), perturbs it (DP-CD only), and sets
//! `w_j <- prox_{gamma_j psi_j}(w_j - gamma_j g_j)` with `gamma_j = step_scale / M_j`.
//! The predictor update `z += (w_j^new - w_j^old) X_{:,j}` is skipped when the step is
//! zero (frequent with soft-thresholding at 0). Nothing is allocated inside the loop.
//!
//! Periodic averaging (Algorithm 1, line 9: `wbar^{t+1} = (1/K) sum_{k=1}^K theta^k`) is
//! done lazily in O(1) per step plus O(p) and one `X wbar` per epoch (our implementation
//! choice; the paper does not describe one).

use crate::constants::{resolve_for_twin, Smoothness};
use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::{
    objective_from_predictor, with_margin_sweeper, with_sweeper, ClipRule, ColumnKernels,
    CoordNoise, Folded, NoClip, NoNoise, Sweeper,
};
use crate::model::{Diagnostics, Fitted, LinearModel};
pub use crate::schedule::{Averaging, CoordinateOrder, Schedule};
use crate::schedule::{CoordinateSelector, LOOKAHEAD};
use crate::solver::{check_finite, Solver, Streams};
use dp_models::simd::margin::MarginKernel;
use dp_models::simd::rows::prefetch;
use dp_models::{Dataset, Design, Loss, Penalty};
use rand::{Rng, RngCore};

/// What one coordinate-descent run needs besides its state.
pub(crate) struct CdProblem<'a, D, L: ?Sized, P: ?Sized> {
    pub x: &'a D,
    pub y: &'a [f64],
    pub loss: &'a L,
    pub penalty: &'a P,
    /// `gamma_j = step_scale / M_j`.
    pub steps: &'a [f64],
    /// Pieces each step's sweep is split into (1: one sweep on the calling thread;
    /// see [`ColumnKernels::step_grad_sum_chunked`]).
    pub chunks: usize,
    /// `1 / N`, the normaliser of the gradient sum: `1 / n` (the data's size) for CD and
    /// DP-CD under replace-one, `1 / public_n` for DP-CD under add/remove.
    pub inv_n: f64,
    /// The mixed-precision kernel of a margin loss, when the sweep runs in `f32` over
    /// label-folded columns (a dense design and a non-residual loss only;
    /// [`crate::dp_cd::Precision`]), `None` for the `f64` sweep.
    pub margin: Option<MarginKernel>,
}

/// Runs Algorithm 1's loops from the state `(w, z = X w)` and leaves `z = X w` of the
/// final `w` (up to rounding); returns the number of zero steps. `clip` and `noise` are the privacy hooks (identity for the non-private twin).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_cd<D, L, P, C, N, R>(
    prob: &CdProblem<'_, D, L, P>,
    schedule: Schedule,
    order: CoordinateOrder,
    clip: &C,
    noise: &mut N,
    coord_rng: &mut R,
    w: &mut [f64],
    z: &mut [f64],
) -> u64
where
    D: ColumnKernels,
    L: Loss + ?Sized,
    P: Penalty + ?Sized,
    C: ClipRule,
    N: CoordNoise,
    R: Rng + ?Sized,
{
    let p = w.len();
    let inv_n = prob.inv_n;
    let mut zero_steps = 0u64;
    let mut selector = CoordinateSelector::new(order, p);
    // For a loss of z - y (squared, Huber) keep the residual r = X w - y in `z`: the
    // kernels then read two streams (column, residual) instead of three.
    let residual = prob.loss.is_residual_loss();
    let y = if residual { None } else { Some(prob.y) };
    if residual {
        z.iter_mut().zip(prob.y).for_each(|(zi, &yi)| *zi -= yi);
    }
    // The predictor update of a step is applied in the same sweep as the next step's
    // gradient (`step_grad_sum`): one pass over the data per step instead of two. The
    // coordinate stream is drawn in the same order as before, so the iterates are the
    // same as with a separate update.
    let mut pending: Option<(usize, f64)> = None;
    let hint = selector.hints();
    // Lazy averaging state: acc_j = sum of theta_j^k over the k already
    // passed, last_j = first index k whose value is the current w_j.
    let (mut acc, mut last) = if schedule.averaged {
        (vec![0.0; p], vec![1u64; p])
    } else {
        (Vec::new(), Vec::new())
    };
    // The sweeps run in blocks of epochs between which the whole predictor is
    // needed: one block of every epoch without averaging, one block per epoch with it
    // (the epoch ends with `z = X wbar`). A two-thread sweeper (`with_sweeper`) keeps
    // its worker for a whole block.
    let (blocks, per_block) = if schedule.averaged {
        (schedule.outer, 1)
    } else {
        (1, schedule.outer)
    };
    // With the mixed-precision sweep, the label-folded f32 copy of the design is built
    // once per run; each block starts its f32 margins from the f64 predictor and ends
    // with `z = X w` recomputed in f64 (below).
    let folded = match (prob.margin, prob.x.as_dense()) {
        (Some(kernel), Some(d)) if !residual => Some(Folded::new(d, prob.y, kernel)),
        _ => None,
    };
    for _block in 0..blocks {
        let body = |sweep: &mut Sweeper<'_, '_, D, L>| {
            for _t in 0..per_block {
                if schedule.averaged {
                    acc.iter_mut().for_each(|a| *a = 0.0);
                    last.iter_mut().for_each(|l| *l = 1);
                }
                for k in 0..schedule.inner {
                    let j = selector.next(coord_rng);
                    // Cache hints for coordinates drawn ahead (they change no result): a
                    // coordinate's column, iterate and step sit at random places of arrays
                    // of length p in random order.
                    if hint {
                        if let Some(far) = selector.ahead(LOOKAHEAD) {
                            prob.x.prefetch_col_start(far);
                        }
                        if let Some(near) = selector.ahead(LOOKAHEAD / 2) {
                            prob.x.prefetch_col(near);
                            prefetch(&w[near]);
                            prefetch(&prob.steps[near]);
                            clip.prefetch(near);
                            noise.prefetch(near);
                        }
                    }
                    let g = sweep.step(pending.take(), j, clip.for_coord(j)) * inv_n;
                    let g = noise.perturb(j, g);
                    let old = w[j];
                    let step = prob.steps[j];
                    let new = prob.penalty.prox_1d(j, old - step * g, step);
                    if new != old {
                        if schedule.averaged {
                            acc[j] += old * ((k + 1 - last[j]) as f64);
                            last[j] = k + 1;
                        }
                        pending = Some((j, new - old));
                        w[j] = new;
                    } else {
                        zero_steps += 1;
                    }
                }
                if schedule.averaged {
                    let kk = schedule.inner;
                    for j in 0..p {
                        acc[j] += w[j] * ((kk + 1 - last[j]) as f64);
                        w[j] = acc[j] / kk as f64;
                    }
                }
            }
        };
        match &folded {
            Some(f) => with_margin_sweeper(f, z, prob.y, prob.chunks, body),
            None => with_sweeper(prob.x, prob.loss, z, y, prob.chunks, body),
        }
        if schedule.averaged || folded.is_some() {
            // z is recomputed from w (averaged, or after an f32 sweep that kept margins
            // only): a pending update is obsolete.
            pending = None;
            prob.x.matvec(w, z);
            if residual {
                z.iter_mut().zip(prob.y).for_each(|(zi, &yi)| *zi -= yi);
            }
        }
    }
    if let Some((k, a)) = pending {
        prob.x.col_axpy(k, a, z);
    }
    if residual {
        z.iter_mut().zip(prob.y).for_each(|(zi, &yi)| *zi += yi);
    }
    zero_steps
}

/// The predictor `z = X w` a run starts from: no pass over the data for the default
/// `w = 0`, whose predictor is 0 (a product's -0 and this +0 give the kernels the same
/// sums and updates).
pub(crate) fn predictor<D: Design>(x: &D, w: &[f64]) -> Vec<f64> {
    let mut z = vec![0.0; x.n_samples()];
    if w.iter().any(|&v| v != 0.0) {
        x.matvec(w, &mut z);
    }
    z
}

/// Validates a coordinate-smoothness vector for a `p`-feature problem.
pub(crate) fn check_smoothness(m: &[f64], p: usize) -> Result<()> {
    if m.len() != p {
        return Err(OptimError::Shape(format!(
            "{} coordinate smoothness constants given for a design with {p} features",
            m.len()
        )));
    }
    for (j, &mj) in m.iter().enumerate() {
        if !(mj.is_finite() && mj > 0.0) {
            return Err(OptimError::InvalidParameter {
                name: "coordinate smoothness M_j",
                value: format!("M_{j} = {mj}"),
                expected: "every M_j must be finite and > 0 (an all-zero feature column \
                           gives M_j = 0: drop that column)",
            });
        }
    }
    Ok(())
}

/// Checks the loss / penalty / data combination coordinate descent needs.
pub(crate) fn check_problem<D: ColumnKernels, L: Loss + ?Sized, P: Penalty + ?Sized>(
    solver: &str,
    data: &Dataset<D>,
    loss: &L,
    penalty: &P,
    w0: Option<&[f64]>,
) -> Result<()> {
    if !loss.is_smooth() {
        return Err(OptimError::Unsupported(format!(
            "{solver} needs a smooth loss (a finite curvature bound for its step sizes); \
             the {} loss is not smooth — use squared hinge, logistic, squared or Huber",
            loss.name()
        )));
    }
    data.check_labels_for(loss)?;
    penalty.check_dimension(data.n_features())?;
    check_initial_point(data.n_features(), penalty, w0)
}

/// Checks an optional initial point: length `p`, finite, in the penalty's domain.
pub(crate) fn check_initial_point<P: Penalty + ?Sized>(
    p: usize,
    penalty: &P,
    w0: Option<&[f64]>,
) -> Result<()> {
    if let Some(w0) = w0 {
        if w0.len() != p {
            return Err(OptimError::Shape(format!(
                "initial point has {} entries but the design has {p} features",
                w0.len(),
            )));
        }
        if let Some(j) = w0.iter().position(|v| !v.is_finite()) {
            return Err(OptimError::InvalidParameter {
                name: "initial point",
                value: format!("w0[{j}] = {}", w0[j]),
                expected: "every entry must be finite",
            });
        }
        if let Some(j) = (0..w0.len()).find(|&j| !penalty.value_1d(j, w0[j]).is_finite()) {
            return Err(OptimError::InvalidParameter {
                name: "initial point",
                value: format!("w0[{j}] = {}", w0[j]),
                expected: "the initial point must be in the penalty's domain",
            });
        }
    }
    Ok(())
}

/// Builder of non-private randomized proximal coordinate descent, DP-CD's twin.
///
/// Same loops, same step sizes `gamma_j = step_scale / M_j`, same coordinate order and
/// coordinate stream as [`crate::DpCd`]; no clipping and no noise.
#[derive(Debug, Clone)]
pub struct CdParams<L, P> {
    loss: L,
    penalty: P,
    passes: Option<u64>,
    step_scale: f64,
    averaging: Averaging,
    order: CoordinateOrder,
    chunks: usize,
    smoothness: Smoothness,
    w0: Option<Vec<f64>>,
}

impl<L: Loss, P: Penalty> CdParams<L, P> {
    /// Starts a builder for `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + penalty(w)`.
    /// Defaults: step scale 1 (`gamma_j = 1/M_j`, the theory), last iterate, `w0 = 0`.
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            passes: None,
            step_scale: 1.0,
            averaging: Averaging::LastIterate,
            order: CoordinateOrder::Uniform,
            chunks: 1,
            smoothness: Smoothness::FromData,
            w0: None,
        }
    }
    /// Number of passes (one pass = `p` coordinate updates). Required.
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
        self
    }
    /// Step scale `gamma` (steps `gamma / M_j`).
    pub fn step_scale(mut self, gamma: f64) -> Self {
        self.step_scale = gamma;
        self
    }
    /// Averaging mode.
    pub fn averaging(mut self, averaging: Averaging) -> Self {
        self.averaging = averaging;
        self
    }
    /// Splits each coordinate step's sweep over a dense design (the gradient of a
    /// column and the pending predictor update) into `threads` fixed pieces run on
    /// rayon's thread pool, with a fixed reduction order. Default 1 (one sweep on the
    /// calling thread). Results are bit-for-bit reproducible for a given `threads`
    /// whatever the number of cores, and differ from `threads = 1` in the last bits
    /// only. Sparse designs ignore it. Worth it only for long columns (see
    /// `docs/performance.md`, "Two cores").
    pub fn threads(mut self, threads: usize) -> Self {
        self.chunks = threads;
        self
    }
    /// Coordinate order (default [`CoordinateOrder::Uniform`]).
    pub fn coordinate_order(mut self, order: CoordinateOrder) -> Self {
        self.order = order;
        self
    }
    /// Coordinate smoothness constants (default [`Smoothness::FromData`]; any
    /// provenance is accepted: the twin claims no privacy).
    pub fn smoothness(mut self, smoothness: impl Into<Smoothness>) -> Self {
        self.smoothness = smoothness.into();
        self
    }
    /// Initial point (default 0).
    pub fn initial_point(mut self, w0: Vec<f64>) -> Self {
        self.w0 = Some(w0);
        self
    }
    /// Checks the parameters once.
    pub fn build(self) -> Result<Cd<L, P>> {
        let passes = positive_count("passes", self.passes.ok_or(OptimError::Missing("passes"))?)?;
        positive("step_scale", self.step_scale)?;
        if let Averaging::Every(k) = self.averaging {
            positive_count("averaging period K", k)?;
        }
        positive_count("threads", self.chunks as u64)?;
        Ok(Cd {
            loss: self.loss,
            penalty: self.penalty,
            passes,
            step_scale: self.step_scale,
            averaging: self.averaging,
            order: self.order,
            chunks: self.chunks,
            smoothness: self.smoothness,
            w0: self.w0,
        })
    }
}

/// Non-private randomized proximal coordinate descent (checked parameters; see
/// [`CdParams`]).
#[derive(Debug, Clone)]
pub struct Cd<L, P> {
    loss: L,
    penalty: P,
    passes: u64,
    step_scale: f64,
    averaging: Averaging,
    order: CoordinateOrder,
    chunks: usize,
    smoothness: Smoothness,
    w0: Option<Vec<f64>>,
}

impl<L, P> Cd<L, P> {
    /// Name used in reports.
    pub fn name(&self) -> &'static str {
        "cd"
    }
}

impl<D: ColumnKernels, L: Loss, P: Penalty> Solver<D> for Cd<L, P> {
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        let mut streams = Streams::from_rng(rng);
        let start = std::time::Instant::now();
        check_problem("CD", data, &self.loss, &self.penalty, self.w0.as_deref())?;
        let p = data.n_features();
        let m = resolve_for_twin(&self.smoothness, &self.loss, data.x(), "CD")?;
        check_smoothness(&m, p)?;
        let steps: Vec<f64> = m.iter().map(|mj| self.step_scale / mj).collect();
        let schedule = Schedule::new(self.averaging, self.passes, p)?;
        let mut w = self.w0.clone().unwrap_or_else(|| vec![0.0; p]);
        let mut z = predictor(data.x(), &w);
        let prob = CdProblem {
            x: data.x(),
            y: data.y(),
            loss: &self.loss,
            penalty: &self.penalty,
            steps: &steps,
            chunks: self.chunks,
            inv_n: 1.0 / data.n_samples() as f64,
            margin: None,
        };
        let zero_steps = run_cd(
            &prob,
            schedule,
            self.order,
            &NoClip,
            &mut NoNoise,
            &mut streams.coordinates,
            &mut w,
            &mut z,
        );
        let seconds = start.elapsed().as_secs_f64();
        check_finite("CD", &w, "lower the step scale")?;
        let objective = objective_from_predictor(&self.loss, &self.penalty, &w, &z, data.y());
        Ok(Fitted {
            model: LinearModel {
                algorithm: "cd".into(),
                coefficients: w,
                intercept: None,
                iterations: schedule.updates(),
                privacy: None,
            },
            diagnostics: Diagnostics {
                objective,
                zero_steps,
                seconds,
                ..Diagnostics::default()
            },
        })
    }
}
