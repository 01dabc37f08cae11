//! The full clipped gradient and the selection scores, in one pass over the design.
//!
//! Cost O(nnz(X)) per call (each column visited once, only its stored entries for a
//! sparse design), no allocation; parallel over blocks of coordinates with rayon when the
//! design is large. Each coordinate's sum is computed by one thread in a fixed order,
//! so the result does not depend on the number of threads (seeded runs stay
//! bit-reproducible).
//!
//! With clipping, the gradient cannot be maintained incrementally (every per-sample term
//! is clipped separately and every coordinate's clipped sum changes when the predictor
//! changes: spec G22), so it is recomputed; without clipping (the non-private twin) a
//! column is `col_dot(j, phi')`, which the dense design vectorises.

use super::rules::{score, SelectionRule};
use dp_models::{Design, Penalty};
use rayon::prelude::*;

/// Designs with at least this many stored entries are processed in parallel.
const PAR_MIN_NNZ: usize = 1 << 16;
/// Coordinates per parallel block.
const BLOCK: usize = 256;

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

/// `grad[j] = (1/n) sum_i clip(deriv_i x_ij, C_j) + ridge w_j` and
/// `scores[j] = rule(grad[j] + noise[j])` for all `j`.
pub(crate) fn gradient_and_scores<D: Design, P: Penalty + ?Sized>(
    ctx: &Ctx<'_, D, P>,
    deriv: &[f64],
    w: &[f64],
    noise: Option<&[f64]>,
    grad: &mut [f64],
    scores: &mut [f64],
) {
    let block = |start: usize, g: &mut [f64], s: &mut [f64]| {
        for (k, (gj, sj)) in g.iter_mut().zip(s.iter_mut()).enumerate() {
            let j = start + k;
            let data = match ctx.clip {
                None => ctx.x.col_dot(j, deriv) * ctx.inv_n,
                Some(c) => {
                    let cj = c[j];
                    let mut acc = 0.0;
                    ctx.x
                        .for_each_in_col(j, |i, xij| acc += (deriv[i] * xij).clamp(-cj, cj));
                    acc * ctx.inv_n
                }
            };
            let gval = if ctx.ridge > 0.0 {
                data + ctx.ridge * w[j]
            } else {
                data
            };
            *gj = gval;
            let h = match noise {
                Some(nz) => gval + nz[j],
                None => gval,
            };
            *sj = score(ctx.rule, ctx.penalty, j, h, w[j], ctx.m[j], ctx.sqrt_m[j]);
        }
    };
    if ctx.x.nnz() >= PAR_MIN_NNZ && grad.len() > BLOCK {
        grad.par_chunks_mut(BLOCK)
            .zip(scores.par_chunks_mut(BLOCK))
            .enumerate()
            .for_each(|(b, (g, s))| block(b * BLOCK, g, s));
    } else {
        block(0, grad, scores);
    }
}
