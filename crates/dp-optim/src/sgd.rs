//! Proximal stochastic gradient descent with Poisson subsampling: the engine shared by
//! DP-SGD and its non-private twin [`Sgd`].
//!
//! One step includes each sample independently with probability `q = b/n` (Poisson
//! subsampling, drawn in O(|batch| + 1) by geometric skips), sums the per-example
//! gradients `phi'(x_i^T w, y_i) x_i` — each rescaled to L2 norm at most `C` in DP-SGD —
//! adds noise (DP-SGD only), divides by the expected batch size `b`, and takes a
//! proximal step `w <- prox_{eta psi}(w - eta g)` with the constant step
//! `eta = step_scale / beta`. Returns the last iterate.

use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::objective_from_predictor;
use crate::model::{Diagnostics, Fitted, LinearModel};
pub use crate::plan::BatchSampling;
use crate::solver::{check_finite, Solver, Streams};
use dp_models::{Dataset, Design, Loss, Penalty};
use rand::{Rng, RngCore};

/// Per-example L2 clipping of `g_i = d x_i`: the coefficient `d min(1, C / ||g_i||)`.
pub(crate) trait L2Clip: Copy {
    /// The clipped coefficient for `g_i = d x_i` with `||x_i|| = row_norm`.
    fn coef(self, d: f64, row_norm: f64) -> f64;
}

/// No clipping (the coefficient is `d`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoL2Clip;
impl L2Clip for NoL2Clip {
    #[inline(always)]
    fn coef(self, d: f64, _row_norm: f64) -> f64 {
        d
    }
}

/// Clipping at `C > 0` (may be `+inf`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct L2ClipAt(pub f64);
impl L2Clip for L2ClipAt {
    #[inline(always)]
    fn coef(self, d: f64, row_norm: f64) -> f64 {
        let c = self.0;
        let norm = d.abs() * row_norm;
        if norm <= c {
            d
        } else if norm.is_finite() {
            d * (c / norm)
        } else if d.is_nan() || row_norm == 0.0 {
            // # Privacy
            // An overflowed derivative (`phi'(z, y) = inf` or NaN for an extreme record)
            // must not turn into `inf * 0 = NaN`: that would mark the output of one
            // neighbour only. Any vector of norm <= C keeps the sensitivity; a NaN
            // derivative or a zero row contributes the zero vector.
            0.0
        } else {
            // `|d| = inf` (or `||x_i||` overflowed): the direction of `d x_i` at norm C
            // (0 when `||x_i||` itself is infinite).
            (c / row_norm).copysign(d)
        }
    }
}

/// Noise added to the summed batch gradient.
pub(crate) trait VecNoise {
    /// Adds noise to every coordinate of `g` (or nothing).
    fn perturb(&mut self, g: &mut [f64]);
}

/// No noise.
pub(crate) struct NoVecNoise;
impl VecNoise for NoVecNoise {
    #[inline(always)]
    fn perturb(&mut self, _g: &mut [f64]) {}
}

/// The loop's inputs.
pub(crate) struct SgdProblem<'a, D, L: ?Sized, P: ?Sized> {
    pub x: &'a D,
    pub y: &'a [f64],
    pub loss: &'a L,
    pub penalty: &'a P,
    /// `||x_i||_2` for every sample.
    pub row_norms: &'a [f64],
    /// Constant step `eta`.
    pub eta: f64,
    /// Sampling rate `q = b / n`.
    pub sampling_rate: f64,
    /// Expected batch size `b` (the normaliser).
    pub batch: f64,
    /// Number of steps.
    pub steps: u64,
    /// How batches are drawn.
    pub sampling: BatchSampling,
}

/// Number of samples skipped before the next Poisson-included one: `Geometric(q)`
/// failures, drawn by inversion (`floor(ln U / ln(1 - q))`, `U` uniform in (0, 1]).
#[inline]
pub(crate) fn geometric_skip<R: Rng + ?Sized>(rng: &mut R, log1m_q: f64) -> usize {
    let u = 1.0 - rng.random::<f64>(); // (0, 1]
    let g = (u.ln() / log1m_q).floor();
    // q = 1 gives ln(1-q) = -inf and g = -0: include everything. Saturating cast.
    if g >= 0.0 {
        g as usize
    } else {
        0
    }
}

/// How many sampled rows [`run_sgd`] processes together: their predictors, labels and
/// derivatives sit in the buffers of [`SgdScratch`], so the derivatives of a mini-batch
/// go through the loss's vectorised kernel ([`Loss::derivatives`]; the logistic loss's
/// sigmoid in SIMD lanes) instead of one scalar `exp` per row. Batches larger than this
/// (and Poisson batches, whose size is random) are processed in chunks of it; the
/// iterate is fixed within a step, so the chunking changes nothing in the result.
pub(crate) const SGD_CHUNK: usize = 256;

/// The per-fit buffers of [`run_sgd`] (allocated once per fit; nothing is allocated
/// per step or per example).
pub(crate) struct SgdScratch {
    /// A permutation of `0..n` (sampling without replacement).
    pub perm: Vec<usize>,
    /// The sampled rows of the current chunk.
    idx: Vec<usize>,
    /// Their predictors `x_i^T w`, then their derivatives `phi'(x_i^T w, y_i)`.
    z: Vec<f64>,
    /// Their labels.
    y: Vec<f64>,
    /// Their derivatives.
    d: Vec<f64>,
}

impl SgdScratch {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            perm: (0..n).collect(),
            idx: Vec::with_capacity(SGD_CHUNK),
            z: vec![0.0; SGD_CHUNK],
            y: vec![0.0; SGD_CHUNK],
            d: vec![0.0; SGD_CHUNK],
        }
    }
}

/// Adds the (clipped) per-example gradients of the rows in `scratch.idx` to `g`, in
/// the order of `idx`, and empties `idx`: `g += clip(phi'(x_i^T w, y_i)) x_i`, with the
/// derivatives of all the rows computed in one vectorised call.
#[inline]
fn flush_chunk<D, L, P, C>(
    prob: &SgdProblem<'_, D, L, P>,
    clip: C,
    w: &[f64],
    g: &mut [f64],
    scratch: &mut SgdScratch,
) where
    D: Design,
    L: Loss + ?Sized,
    P: Penalty + ?Sized,
    C: L2Clip,
{
    let m = scratch.idx.len();
    if m == 0 {
        return;
    }
    for (k, &i) in scratch.idx.iter().enumerate() {
        scratch.z[k] = prob.x.row_dot(i, w);
        scratch.y[k] = prob.y[i];
    }
    prob.loss
        .derivatives(&scratch.z[..m], &scratch.y[..m], &mut scratch.d[..m]);
    for (&i, &d) in scratch.idx.iter().zip(&scratch.d[..m]) {
        let coef = clip.coef(d, prob.row_norms[i]);
        prob.x.row_axpy(i, coef, g);
    }
    scratch.idx.clear();
}

/// Runs the SGD loop from `w`; `g` is a length-`p` scratch buffer and `scratch` the
/// per-fit buffers (its `perm` a permutation of `0..n`, used by sampling without
/// replacement). Returns the total number of sampled examples.
///
/// Each step computes the per-example gradients of the batch at the current iterate,
/// [`SGD_CHUNK`] rows at a time: the predictors `x_i^T w` (vectorised row dot
/// products), the derivatives of the chunk in one vectorised call, the clipped
/// coefficients, and `g += coef x_i` (vectorised row update). No per-example
/// allocation; the summation into `g` is in sampling order.
pub(crate) fn run_sgd<D, L, P, C, N, R>(
    prob: &SgdProblem<'_, D, L, P>,
    clip: C,
    noise: &mut N,
    sample_rng: &mut R,
    w: &mut [f64],
    g: &mut [f64],
    scratch: &mut SgdScratch,
) -> u64
where
    D: Design,
    L: Loss + ?Sized,
    P: Penalty + ?Sized,
    C: L2Clip,
    N: VecNoise,
    R: Rng + ?Sized,
{
    let n = prob.y.len();
    let log1m_q = (-prob.sampling_rate).ln_1p();
    let scale = prob.eta / prob.batch;
    let b = prob.batch as usize;
    let mut sampled = 0u64;
    for _ in 0..prob.steps {
        g.iter_mut().for_each(|v| *v = 0.0);
        match prob.sampling {
            BatchSampling::Poisson => {
                let mut i = geometric_skip(sample_rng, log1m_q);
                while i < n {
                    scratch.idx.push(i);
                    if scratch.idx.len() == SGD_CHUNK {
                        flush_chunk(prob, clip, w, g, scratch);
                    }
                    sampled += 1;
                    i = i
                        .saturating_add(1)
                        .saturating_add(geometric_skip(sample_rng, log1m_q));
                }
            }
            // DP-SGD never plans shuffled passes (DP-SCD's hidden-dual mode only).
            BatchSampling::WithoutReplacement | BatchSampling::Shuffled => {
                // A uniformly random b-subset: the first b draws of a Fisher–Yates
                // shuffle of the index buffer (uniform whatever order the buffer is
                // left in by the previous step). O(b) per step, no allocation.
                for k in 0..b {
                    let r = sample_rng.random_range(k..n);
                    scratch.perm.swap(k, r);
                    scratch.idx.push(scratch.perm[k]);
                    if scratch.idx.len() == SGD_CHUNK {
                        flush_chunk(prob, clip, w, g, scratch);
                    }
                }
                sampled += b as u64;
            }
        }
        flush_chunk(prob, clip, w, g, scratch);
        noise.perturb(g);
        for (j, (wj, &gj)) in w.iter_mut().zip(g.iter()).enumerate() {
            *wj = prob.penalty.prox_1d(j, *wj - scale * gj, prob.eta);
        }
    }
    sampled
}

/// [`run_sgd`] pass by pass, recording `F(w)` after each (`per_pass` steps a pass, the
/// last pass possibly shorter) into `trajectory` when it is `Some`: a non-private
/// diagnostic. The steps are the same as one call's (the loop keeps no state between
/// steps but `w` and the generators' streams), so the returned `w` is bit for bit the
/// same with or without recording. Returns the number of sampled examples.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_sgd_by_pass<D, L, P, C, N, R>(
    prob: &SgdProblem<'_, D, L, P>,
    clip: C,
    noise: &mut N,
    sample_rng: &mut R,
    w: &mut [f64],
    g: &mut [f64],
    scratch: &mut SgdScratch,
    per_pass: u64,
    trajectory: Option<&mut Vec<f64>>,
) -> u64
where
    D: Design,
    L: Loss + ?Sized,
    P: Penalty + ?Sized,
    C: L2Clip,
    N: VecNoise,
    R: Rng + ?Sized,
{
    let Some(trajectory) = trajectory else {
        return run_sgd(prob, clip, noise, sample_rng, w, g, scratch);
    };
    let mut z = vec![0.0; prob.y.len()];
    let (mut left, mut sampled) = (prob.steps, 0u64);
    while left > 0 {
        let k = per_pass.max(1).min(left);
        let chunk = SgdProblem { steps: k, ..*prob };
        sampled += run_sgd(&chunk, clip, noise, sample_rng, w, g, scratch);
        left -= k;
        prob.x.matvec(w, &mut z);
        trajectory.push(crate::kernel::objective_from_predictor(
            prob.loss,
            prob.penalty,
            w,
            &z,
            prob.y,
        ));
    }
    sampled
}

/// Checks what SGD-type solvers need from the problem.
pub(crate) fn check_sgd_problem<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized>(
    data: &Dataset<D>,
    loss: &L,
    penalty: &P,
    batch_size: u64,
    planned_n: usize,
    w0: Option<&[f64]>,
) -> Result<()> {
    data.check_labels_for(loss)?;
    penalty.check_dimension(data.n_features())?;
    if batch_size as usize > planned_n {
        return Err(OptimError::InvalidParameter {
            name: "batch_size",
            value: batch_size.to_string(),
            expected: "the expected batch size must be at most n (sampling rate b/n <= 1)",
        });
    }
    crate::cd::check_initial_point(data.n_features(), penalty, w0)
}

pub(crate) use crate::constants::resolve_beta;
pub use crate::constants::GlobalSmoothness;

/// `||x_i||_2` for every row.
///
/// # Privacy
///
/// DP-SGD's clipping relies on this norm. A squared norm that underflows (every entry
/// below ~1e-154 gives 0, and then a huge derivative times a tiny row went unclipped)
/// or overflows is recomputed with the row scaled by its largest entry; in the safe
/// range the plain `sqrt(row_sq_norm)` is kept (bit-for-bit as before).
pub(crate) fn row_norms<D: Design>(x: &D) -> Vec<f64> {
    (0..x.n_samples())
        .map(|i| {
            let s = x.row_sq_norm(i);
            if s.is_finite() && s >= 1e-200 {
                s.sqrt()
            } else {
                scaled_row_norm(x, i)
            }
        })
        .collect()
}

/// `||x_i||_2` as `m sqrt(sum (x_ij / m)^2)` with `m = max_j |x_ij|` (no underflow or
/// spurious overflow).
fn scaled_row_norm<D: Design>(x: &D, i: usize) -> f64 {
    let mut m = 0.0f64;
    x.for_each_in_row(i, |_, v| m = m.max(v.abs()));
    if m == 0.0 || !m.is_finite() {
        return m;
    }
    let mut s = 0.0;
    x.for_each_in_row(i, |_, v| {
        let t = v / m;
        s += t * t;
    });
    m * s.sqrt()
}

/// Builder of non-private proximal SGD with Poisson subsampling, DP-SGD's twin.
#[derive(Debug, Clone)]
pub struct SgdParams<L, P> {
    loss: L,
    penalty: P,
    passes: Option<u64>,
    step_scale: f64,
    batch_size: u64,
    sampling: BatchSampling,
    smoothness: GlobalSmoothness,
    w0: Option<Vec<f64>>,
    record_trajectory: bool,
}

impl<L: Loss, P: Penalty> SgdParams<L, P> {
    /// Starts a builder. Defaults: step scale 1 (`eta = 1/beta`), batch size 1, `w0 = 0`.
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            passes: None,
            step_scale: 1.0,
            batch_size: 1,
            sampling: BatchSampling::WithoutReplacement,
            smoothness: GlobalSmoothness::FromData,
            w0: None,
            record_trajectory: false,
        }
    }
    /// Record `F(w)` after every pass in [`Diagnostics::objective_trajectory`].
    pub fn record_trajectory(mut self, record: bool) -> Self {
        self.record_trajectory = record;
        self
    }
    /// How batches are drawn (default [`BatchSampling::WithoutReplacement`], as DP-SGD
    /// under replace-one).
    pub fn sampling(mut self, sampling: BatchSampling) -> Self {
        self.sampling = sampling;
        self
    }
    /// Number of passes (one pass = `ceil(n / b)` steps). Required.
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
        self
    }
    /// Step scale `gamma` (`eta = gamma / beta`).
    pub fn step_scale(mut self, gamma: f64) -> Self {
        self.step_scale = gamma;
        self
    }
    /// Expected batch size `b` (sampling rate `b / n`).
    pub fn batch_size(mut self, b: u64) -> Self {
        self.batch_size = b;
        self
    }
    /// Source of `beta`.
    /// (A [`GlobalSmoothness`], or a `Tagged<f64>` for [`GlobalSmoothness::Given`].)
    pub fn smoothness(mut self, s: impl Into<GlobalSmoothness>) -> Self {
        self.smoothness = s.into();
        self
    }
    /// Initial point (default 0).
    pub fn initial_point(mut self, w0: Vec<f64>) -> Self {
        self.w0 = Some(w0);
        self
    }
    /// Checks the parameters once.
    pub fn build(self) -> Result<Sgd<L, P>> {
        let passes = positive_count("passes", self.passes.ok_or(OptimError::Missing("passes"))?)?;
        positive("step_scale", self.step_scale)?;
        positive_count("batch_size", self.batch_size)?;
        Ok(Sgd {
            loss: self.loss,
            penalty: self.penalty,
            passes,
            step_scale: self.step_scale,
            batch_size: self.batch_size,
            sampling: self.sampling,
            smoothness: self.smoothness,
            w0: self.w0,
            record_trajectory: self.record_trajectory,
        })
    }
}

/// Non-private proximal SGD (checked parameters; see [`SgdParams`]).
#[derive(Debug, Clone)]
pub struct Sgd<L, P> {
    loss: L,
    penalty: P,
    passes: u64,
    step_scale: f64,
    batch_size: u64,
    sampling: BatchSampling,
    smoothness: GlobalSmoothness,
    w0: Option<Vec<f64>>,
    record_trajectory: bool,
}

/// Steps per pass: `ceil(n / b)`.
pub(crate) fn steps_for(passes: u64, n: usize, b: u64) -> Result<u64> {
    passes
        .checked_mul((n as u64).div_ceil(b))
        .ok_or_else(|| OptimError::InvalidParameter {
            name: "passes",
            value: passes.to_string(),
            expected: "passes * n / b overflows u64; use fewer passes",
        })
}

impl<L, P> Sgd<L, P> {
    /// Name used in reports.
    pub fn name(&self) -> &'static str {
        "sgd"
    }
}

impl<D: Design, L: Loss, P: Penalty> Solver<D> for Sgd<L, P> {
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        let mut streams = Streams::from_rng(rng);
        let start = std::time::Instant::now();
        check_sgd_problem(
            data,
            &self.loss,
            &self.penalty,
            self.batch_size,
            data.n_samples(),
            self.w0.as_deref(),
        )?;
        let (n, p) = (data.n_samples(), data.n_features());
        let beta = resolve_beta(&self.smoothness, &self.loss, data.x())?.value;
        let norms = row_norms(data.x());
        let prob = SgdProblem {
            x: data.x(),
            y: data.y(),
            loss: &self.loss,
            penalty: &self.penalty,
            row_norms: &norms,
            eta: self.step_scale / beta,
            sampling_rate: self.batch_size as f64 / n as f64,
            batch: self.batch_size as f64,
            steps: steps_for(self.passes, n, self.batch_size)?,
            sampling: self.sampling,
        };
        let mut w = self.w0.clone().unwrap_or_else(|| vec![0.0; p]);
        let mut g = vec![0.0; p];
        let mut scratch = SgdScratch::new(n);
        let mut trajectory = Vec::new();
        run_sgd_by_pass(
            &prob,
            NoL2Clip,
            &mut NoVecNoise,
            &mut streams.coordinates,
            &mut w,
            &mut g,
            &mut scratch,
            steps_for(1, n, self.batch_size)?,
            self.record_trajectory.then_some(&mut trajectory),
        );
        let seconds = start.elapsed().as_secs_f64();
        check_finite("SGD", &w, "lower the step scale")?;
        let mut z = vec![0.0; n];
        data.x().matvec(&w, &mut z);
        let objective = objective_from_predictor(&self.loss, &self.penalty, &w, &z, data.y());
        Ok(Fitted {
            model: LinearModel {
                algorithm: "sgd".into(),
                coefficients: w,
                intercept: None,
                iterations: prob.steps,
                privacy: None,
            },
            diagnostics: Diagnostics {
                objective,
                seconds,
                objective_trajectory: trajectory,
                ..Diagnostics::default()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_models::{DenseDesign, Logistic, Squared, L2};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// The loop before batching: one example at a time, scalar derivative.
    fn per_example_reference<D: Design, L: Loss, P: Penalty, C: L2Clip>(
        prob: &SgdProblem<'_, D, L, P>,
        clip: C,
        rng: &mut ChaCha20Rng,
        w: &mut [f64],
    ) {
        let n = prob.y.len();
        let log1m_q = (-prob.sampling_rate).ln_1p();
        let scale = prob.eta / prob.batch;
        let mut perm: Vec<usize> = (0..n).collect();
        let mut g = vec![0.0; w.len()];
        for _ in 0..prob.steps {
            g.iter_mut().for_each(|v| *v = 0.0);
            let example = |i: usize, g: &mut [f64]| {
                let d = prob.loss.derivative(prob.x.row_dot(i, w), prob.y[i]);
                prob.x.row_axpy(i, clip.coef(d, prob.row_norms[i]), g);
            };
            match prob.sampling {
                BatchSampling::Poisson => {
                    let mut i = geometric_skip(rng, log1m_q);
                    while i < n {
                        example(i, &mut g);
                        i = i
                            .saturating_add(1)
                            .saturating_add(geometric_skip(rng, log1m_q));
                    }
                }
                BatchSampling::WithoutReplacement | BatchSampling::Shuffled => {
                    for k in 0..prob.batch as usize {
                        let r = rng.random_range(k..n);
                        perm.swap(k, r);
                        example(perm[k], &mut g);
                    }
                }
            }
            for (j, (wj, &gj)) in w.iter_mut().zip(g.iter()).enumerate() {
                *wj = prob.penalty.prox_1d(j, *wj - scale * gj, prob.eta);
            }
        }
    }

    fn check<L: Loss>(loss: &L, y: &[f64], x: &DenseDesign, exact: bool) {
        let norms = row_norms(x);
        let pen = L2::new(0.1).unwrap();
        for sampling in [BatchSampling::WithoutReplacement, BatchSampling::Poisson] {
            for b in [1usize, 7, SGD_CHUNK - 1, SGD_CHUNK, SGD_CHUNK + 1, 600] {
                let prob = SgdProblem {
                    x,
                    y,
                    loss,
                    penalty: &pen,
                    row_norms: &norms,
                    eta: 0.05,
                    sampling_rate: b as f64 / y.len() as f64,
                    batch: b as f64,
                    steps: 5,
                    sampling,
                };
                let clip = L2ClipAt(0.8);
                let mut w = vec![0.1; x.n_features()];
                let mut g = vec![0.0; x.n_features()];
                let mut scratch = SgdScratch::new(y.len());
                let mut rng = ChaCha20Rng::seed_from_u64(b as u64);
                run_sgd(
                    &prob,
                    clip,
                    &mut NoVecNoise,
                    &mut rng,
                    &mut w,
                    &mut g,
                    &mut scratch,
                );
                let mut r = vec![0.1; x.n_features()];
                per_example_reference(
                    &prob,
                    clip,
                    &mut ChaCha20Rng::seed_from_u64(b as u64),
                    &mut r,
                );
                for (a, e) in w.iter().zip(&r) {
                    if exact {
                        assert_eq!(a.to_bits(), e.to_bits(), "{sampling:?} b = {b}");
                    } else {
                        assert!((a - e).abs() <= 1e-12 * (1.0 + e.abs()), "{a} {e}");
                    }
                }
            }
        }
    }

    #[test]
    fn chunked_batches_equal_the_per_example_loop() {
        let (n, p) = (700, 5);
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let v: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.5..1.5)).collect();
        let x = DenseDesign::from_row_major(n, p, &v).unwrap();
        let y: Vec<f64> = (0..n).map(|i| v[i * p] - 0.5 * v[i * p + 1]).collect();
        // The squared loss's batch derivative is exact: bit for bit.
        check(&Squared::half(), &y, &x, true);
        // The logistic one goes through the vectorised sigmoid (2^-49 relative).
        let labels: Vec<f64> = y
            .iter()
            .map(|&t| if t >= 0.0 { 1.0 } else { -1.0 })
            .collect();
        check(&Logistic, &labels, &x, false);
    }
}
