//! One DP-GCD iteration's data pass: the full clipped gradient, the selection scores,
//! the selection noise and the argmax, fused in one pass over the design.
//!
//! Cost O(nnz(X) + p) per call (each column visited once, only its stored entries for a
//! sparse design), no allocation; parallel over fixed blocks of coordinates with rayon
//! when the design is large. Each block draws its selection noise from its own ChaCha20
//! stream (`stream = block index`) keyed by a per-iteration seed drawn from the caller's
//! generator, and each coordinate's sum is computed by one thread in a fixed order, so the
//! result does not depend on the number of threads or on scheduling: seeded runs stay
//! bit-reproducible.
//!
//! With clipping, the gradient cannot be maintained incrementally (every per-sample term
//! is clipped separately and every coordinate's clipped sum changes when the predictor
//! changes), so it is recomputed; without clipping (the non-private twin) a
//! column is `col_dot(j, phi')`, which the dense design vectorises.

use super::rules::{score, SelectionRule};
use crate::kernel::{Clamp, Clip};
use dp_accounting::mechanisms::{LaplaceFamily, ReportNoisyMax};
use dp_models::{Design, Penalty};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

/// Designs with at least this many stored entries are processed in parallel.
const PAR_MIN_NNZ: usize = 1 << 16;
/// Coordinates per block (fixed: the noise streams are tied to blocks).
const BLOCK: usize = 1024;

pub(crate) struct Ctx<'a, D, P: ?Sized> {
    pub x: &'a D,
    pub penalty: &'a P,
    pub rule: SelectionRule,
    pub ridge: f64,
    pub inv_n: f64,
    pub m: &'a [f64],
    pub sqrt_m: &'a [f64],
    /// Per-coordinate clipping thresholds `C_j`, or `None` for no clipping.
    pub clip: Option<&'a [f64]>,
}

/// Selection noise of one iteration.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SelectionNoise {
    /// None: exact argmax.
    Off,
    /// `argmax_j u_j + noise`: the charged selection release's report-noisy-max
    /// (Laplace noise, or Gumbel noise: the exponential mechanism).
    OnScore(ReportNoisyMax),
    /// `argmax_j phi_j(g_j + Lap(Delta_j / eps'))`: noise inside the score (the paper's),
    /// drawn from the charged selection release's Laplace family at `c = C_j`
    /// (`Delta_j = (2 / n) C_j`).
    LaplaceInside(LaplaceFamily),
}

/// Fills `grad[j] = (1/n) sum_i clip(deriv_i x_ij, C_j) + ridge w_j` and
/// `scores[j] = rule(grad[j])` (the deterministic scores) for all `j`, and returns the
/// selected coordinate: `argmax_j` of the noisy scores under `noise`, lowest index on
/// ties. `seed` keys the per-block noise streams.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pass<D: Design, P: Penalty + ?Sized>(
    ctx: &Ctx<'_, D, P>,
    deriv: &[f64],
    w: &[f64],
    noise: SelectionNoise,
    seed: [u8; 32],
    grad: &mut [f64],
    scores: &mut [f64],
) -> usize {
    let block = |b: usize, g: &mut [f64], s: &mut [f64]| -> (f64, usize) {
        let start = b * BLOCK;
        let mut rng = ChaCha20Rng::from_seed(seed);
        rng.set_stream(b as u64);
        let mut best = (f64::NEG_INFINITY, start);
        for (k, (gj, sj)) in g.iter_mut().zip(s.iter_mut()).enumerate() {
            let j = start + k;
            let data = match ctx.clip {
                None => ctx.x.col_dot(j, deriv) * ctx.inv_n,
                Some(c) => {
                    let cj = c[j];
                    let mut acc = 0.0;
                    ctx.x
                        .for_each_in_col(j, |i, xij| acc += Clamp(cj).clip(deriv[i] * xij));
                    acc * ctx.inv_n
                }
            };
            let gval = if ctx.ridge > 0.0 {
                data + ctx.ridge * w[j]
            } else {
                data
            };
            *gj = gval;
            let (m, sm) = (ctx.m[j], ctx.sqrt_m[j]);
            let noisy = match noise {
                SelectionNoise::Off => {
                    *sj = score(ctx.rule, ctx.penalty, j, gval, w[j], m, sm);
                    *sj
                }
                SelectionNoise::OnScore(rnm) => {
                    *sj = score(ctx.rule, ctx.penalty, j, gval, w[j], m, sm);
                    *sj + rnm.noise_draw(&mut rng)
                }
                SelectionNoise::LaplaceInside(family) => {
                    let cj = ctx.clip.map_or(0.0, |c| c[j]);
                    let h = gval + family.sample(cj, &mut rng);
                    *sj = score(ctx.rule, ctx.penalty, j, h, w[j], m, sm);
                    *sj
                }
            };
            if noisy > best.0 {
                best = (noisy, j);
            }
        }
        best
    };
    let reduce = |a: (f64, usize), b: (f64, usize)| {
        // Blocks are combined in index order: strictly larger wins, so ties keep the
        // lowest index, as the sequential argmax does. NaN never wins.
        if b.0 > a.0 || (a.0.is_nan() && !b.0.is_nan()) {
            b
        } else {
            a
        }
    };
    let identity = (f64::NEG_INFINITY, 0usize);
    if ctx.x.nnz() >= PAR_MIN_NNZ && grad.len() > BLOCK {
        grad.par_chunks_mut(BLOCK)
            .zip(scores.par_chunks_mut(BLOCK))
            .enumerate()
            .map(|(b, (g, s))| block(b, g, s))
            .reduce(|| identity, reduce)
            .1
    } else {
        grad.chunks_mut(BLOCK)
            .zip(scores.chunks_mut(BLOCK))
            .enumerate()
            .map(|(b, (g, s))| block(b, g, s))
            .fold(identity, reduce)
            .1
    }
}
