//! Block kernels: the coordinate gradients of several dense columns from one sweep of
//! the predictor.
//!
//! A coordinate step reads its column and the predictor `z` (or the residual), as long
//! as a column. When the steps in between are zero steps (`z` unchanged, frequent with
//! soft-thresholding), the gradients of the next few drawn coordinates can all be
//! computed from one sweep of `z`: [`block_grad_sums`] reads `z` once per block instead
//! of once per column, and evaluates the loss derivative `phi'(z_i, y_i)` (for the
//! logistic loss an `exp`) once per sample instead of once per sample and column.
//!
//! # Same bits as the one-column kernel
//!
//! Each column keeps its own four vector partial sums and adds its terms in the order
//! of [`super::col_grad_sum`] (groups of four vectors, then the remaining vectors, then
//! the zero-padded tail into the last partial sum, then the fixed reduction); the rows
//! are only visited in tiles so that the tile of `z` and of the derivatives stays in
//! the L1 cache while the block's columns are read. Every term `clip(phi'(z_i, y_i)
//! x_ij)` is the same floating-point computation as in the one-column kernel (the
//! derivative is a pure function of `(z_i, y_i)`), so every output is bit-for-bit
//! [`super::step_grad_sum`] / [`super::col_grad_sum`] of that column at the updated `z`
//! (tested in `super::tests` on every instruction-set level the CPU offers).

use super::{arch, clamp_lanes, LaneDerivative};
use pulp::{Simd, WithSimd};

/// The most columns one call of [`block_grad_sums`] takes.
pub const MAX_BLOCK: usize = 8;

/// Vectors of `z` per row tile (a multiple of 4, so every tile but the last holds
/// whole groups of four vectors): 64 vectors are 4 KiB of `z` (and 4 KiB of
/// derivatives) on AVX-512.
const TILE: usize = 64;

/// The coordinate gradients of up to [`MAX_BLOCK`] dense columns from one sweep:
/// first `z_i += a xk_i` for every `i` when `update = Some((xk, a))` with `a != 0` (a
/// separate multiply and add, as [`super::axpy`]), then for every column `c`
/// `out[c] = sum_i clip_c(phi'(z_i, y_i) xs[c]_i)` at the updated `z`, with `y_i = 0`
/// when `y` is `None` and the clipping of [`super::col_grad_sum`] at `clips[c]`
/// (`clips = None`: no clipping).
///
/// `out[c]` is bit-for-bit what [`super::step_grad_sum`] (first column) and
/// [`super::col_grad_sum`] (the others, at the updated `z`) return for that column.
///
/// # Panics
///
/// If there are more than [`MAX_BLOCK`] columns, if the columns do not all have the
/// same length `n`, if `z`, `y` or `xk` are shorter than `n`, or if `out` or `clips`
/// are shorter than `xs` (caller bugs; the solvers size everything from the design).
pub fn block_grad_sums<D: LaneDerivative>(
    deriv: D,
    update: Option<(&[f64], f64)>,
    xs: &[&[f64]],
    z: &mut [f64],
    y: Option<&[f64]>,
    clips: Option<&[f64]>,
    out: &mut [f64],
) {
    assert!(
        xs.len() <= MAX_BLOCK,
        "at most {MAX_BLOCK} columns per block"
    );
    assert!(out.len() >= xs.len() && clips.is_none_or(|c| c.len() >= xs.len()));
    if xs.is_empty() {
        if let Some((xk, a)) = update {
            if a != 0.0 {
                super::axpy(a, xk, z);
            }
        }
        return;
    }
    let n = xs[0].len();
    assert!(
        xs.iter().all(|x| x.len() == n),
        "columns of different lengths"
    );
    let update = update.filter(|&(_, a)| a != 0.0);
    arch().dispatch(Block {
        deriv,
        update,
        xs,
        z: &mut z[..n],
        y: y.map(|y| &y[..n]),
        clips,
        out,
    });
}

struct Block<'a, D> {
    deriv: D,
    update: Option<(&'a [f64], f64)>,
    xs: &'a [&'a [f64]],
    z: &'a mut [f64],
    y: Option<&'a [f64]>,
    clips: Option<&'a [f64]>,
    out: &'a mut [f64],
}

impl<D: LaneDerivative> WithSimd for Block<'_, D> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        match (self.clips.is_some(), self.y.is_some()) {
            (false, false) => self.run::<S, false, false>(s),
            (false, true) => self.run::<S, false, true>(s),
            (true, false) => self.run::<S, true, false>(s),
            (true, true) => self.run::<S, true, true>(s),
        }
    }
}

impl<D: LaneDerivative> Block<'_, D> {
    #[inline(always)]
    fn run<S: Simd, const CLIP: bool, const LABELS: bool>(self, s: S) {
        let m = self.xs.len();
        let deriv = self.deriv;
        let zero = s.splat_f64s(0.0);
        // Per-column clipping bounds (unused lanes: +inf).
        let mut c = [zero; MAX_BLOCK];
        let mut neg_c = [zero; MAX_BLOCK];
        if let Some(clips) = self.clips {
            for k in 0..m {
                c[k] = s.splat_f64s(clips[k]);
                neg_c[k] = s.splat_f64s(-clips[k]);
            }
        }
        let mut xh: [&[S::f64s]; MAX_BLOCK] = [&[]; MAX_BLOCK];
        let mut xt: [&[f64]; MAX_BLOCK] = [&[]; MAX_BLOCK];
        for k in 0..m {
            let (h, t) = S::as_simd_f64s(self.xs[k]);
            xh[k] = h;
            xt[k] = t;
        }
        let nv = xh[0].len();
        let (yh, yt) = match self.y {
            Some(y) if LABELS => S::as_simd_f64s(y),
            _ => (&[][..], &[][..]),
        };
        let ytv = if LABELS {
            s.partial_load_f64s(yt)
        } else {
            zero
        };
        let (kh, kt, av) = match self.update {
            Some((xk, a)) => {
                let (kh, kt) = S::as_simd_f64s(&xk[..self.z.len()]);
                (kh, kt, s.splat_f64s(a))
            }
            None => (&[][..], &[][..], zero),
        };
        let upd = self.update.is_some();
        let (zh, zt) = S::as_mut_simd_f64s(self.z);
        // The zero-padded tail, as the one-column kernel computes it (and adds it last).
        let mut tails = [zero; MAX_BLOCK];
        if !xt[0].is_empty() {
            let mut zi = s.partial_load_f64s(zt);
            if upd {
                zi = s.add_f64s(zi, s.mul_f64s(av, s.partial_load_f64s(kt)));
                s.partial_store_f64s(zt, zi);
            }
            let d = deriv.derivative(s, zi, ytv);
            for k in 0..m {
                tails[k] = term::<S, CLIP>(s, d, s.partial_load_f64s(xt[k]), c[k], neg_c[k]);
            }
        }
        let mut acc = [[zero; 4]; MAX_BLOCK];
        let mut dbuf = [zero; TILE];
        let mut i0 = 0;
        while i0 < nv {
            let len = TILE.min(nv - i0);
            // The tile of z (updated) and of the derivatives, read once for the block.
            for (v, d) in dbuf[..len].iter_mut().enumerate() {
                let i = i0 + v;
                let mut zi = zh[i];
                if upd {
                    zi = s.add_f64s(zi, s.mul_f64s(av, kh[i]));
                    zh[i] = zi;
                }
                let yi = if LABELS { yh[i] } else { zero };
                *d = deriv.derivative(s, zi, yi);
            }
            let dt = &dbuf[..len];
            for k in 0..m {
                let x = &xh[k][i0..i0 + len];
                let (ck, nck) = (c[k], neg_c[k]);
                let mut a = acc[k];
                let mut v = 0;
                while v + 4 <= len {
                    for (u, au) in a.iter_mut().enumerate() {
                        *au = s.add_f64s(*au, term::<S, CLIP>(s, dt[v + u], x[v + u], ck, nck));
                    }
                    v += 4;
                }
                // Only the last tile can end with fewer than four vectors: they go to
                // the first partial sums, as in the one-column kernel.
                let mut u = 0;
                while v < len {
                    a[u] = s.add_f64s(a[u], term::<S, CLIP>(s, dt[v], x[v], ck, nck));
                    v += 1;
                    u += 1;
                }
                acc[k] = a;
            }
            i0 += len;
        }
        for k in 0..m {
            let mut a = acc[k];
            a[3] = s.add_f64s(a[3], tails[k]);
            let total = s.add_f64s(s.add_f64s(a[0], a[1]), s.add_f64s(a[2], a[3]));
            self.out[k] = s.reduce_sum_f64s(total);
        }
    }
}

/// `clip(d x)` lane by lane, `d` the derivative (the one-column kernel's `term`).
#[inline(always)]
fn term<S: Simd, const CLIP: bool>(
    s: S,
    d: S::f64s,
    x: S::f64s,
    c: S::f64s,
    neg_c: S::f64s,
) -> S::f64s {
    let v = s.mul_f64s(d, x);
    if CLIP {
        clamp_lanes(s, v, c, neg_c)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::super::{sigmoid_lanes, Pred, StepGrad};
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// A nonlinear derivative with an `exp` (the logistic one's shape).
    #[derive(Clone, Copy)]
    struct Logit;
    impl LaneDerivative for Logit {
        #[inline(always)]
        fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
            let ny = s.neg_f64s(y);
            s.mul_f64s(ny, sigmoid_lanes(s, s.mul_f64s(ny, z)))
        }
    }

    /// `0.7 (z - y)`.
    #[derive(Clone, Copy)]
    struct Sq;
    impl LaneDerivative for Sq {
        #[inline(always)]
        fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
            s.mul_f64s(s.splat_f64s(0.7), s.sub_f64s(z, y))
        }
    }

    struct Case<'a> {
        update: Option<(&'a [f64], f64)>,
        xs: &'a [&'a [f64]],
        y: Option<&'a [f64]>,
        clips: Option<&'a [f64]>,
    }

    /// Gradient sums and the predictor after the update.
    type SumsAndZ = (Vec<f64>, Vec<f64>);

    /// The block kernel and the one-column kernels on one instruction-set level;
    /// returns (block sums, z after), (one-column sums, z after).
    fn both<S: Simd, D: LaneDerivative>(
        s: S,
        d: D,
        case: &Case<'_>,
        z0: &[f64],
    ) -> (SumsAndZ, SumsAndZ) {
        let m = case.xs.len();
        let mut zb = z0.to_vec();
        let mut out = vec![f64::NAN; m];
        let update = case.update.filter(|&(_, a)| a != 0.0);
        s.vectorize(Block {
            deriv: d,
            update,
            xs: case.xs,
            z: &mut zb,
            y: case.y,
            clips: case.clips,
            out: &mut out,
        });
        let mut zr = z0.to_vec();
        let mut want = Vec::new();
        for (k, x) in case.xs.iter().enumerate() {
            let clip = case.clips.map(|c| c[k]);
            let z = match update {
                Some((xk, a)) if k == 0 => Pred::Update(&mut zr, xk, a),
                _ => Pred::Read(&zr),
            };
            want.push(s.vectorize(StepGrad {
                deriv: d,
                x,
                z,
                y: case.y,
                clip,
            }));
        }
        ((out, zb), (want, zr))
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    fn check_level<S: Simd>(s: S, name: &str) {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        // Lengths around the vector widths, the groups of four vectors and the tiles.
        for n in [
            1usize, 3, 4, 5, 8, 13, 31, 32, 33, 100, 255, 256, 257, 511, 512, 513, 2053,
        ] {
            let cols: Vec<Vec<f64>> = (0..MAX_BLOCK)
                .map(|_| (0..n).map(|_| rng.random_range(-2.0..2.0)).collect())
                .collect();
            let xk: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let y: Vec<f64> = (0..n)
                .map(|_| if rng.random_bool(0.5) { 1.0 } else { -1.0 })
                .collect();
            let mut z0: Vec<f64> = (0..n).map(|_| rng.random_range(-3.0..3.0)).collect();
            if n > 20 {
                // Extreme predictors: clipping must hold whatever they are.
                z0[1] = f64::INFINITY;
                z0[2] = -1e300;
                z0[3] = f64::NAN;
            }
            let clips: Vec<f64> = (0..MAX_BLOCK)
                .map(|k| [0.05, 0.5, f64::INFINITY, 3.0][k % 4])
                .collect();
            for m in 1..=MAX_BLOCK {
                let xs: Vec<&[f64]> = cols[..m].iter().map(|c| &c[..]).collect();
                for update in [None, Some((&xk[..], 0.0)), Some((&xk[..], -0.37))] {
                    for labels in [None, Some(&y[..])] {
                        for clip in [None, Some(&clips[..])] {
                            let case = Case {
                                update,
                                xs: &xs,
                                y: labels,
                                clips: clip,
                            };
                            let what = format!(
                                "{name} n={n} m={m} update={:?} labels={} clip={}",
                                update.map(|u| u.1),
                                labels.is_some(),
                                clip.is_some()
                            );
                            let ((a, za), (b, zb)) = both(s, Logit, &case, &z0);
                            assert_eq!(bits(&a), bits(&b), "logit sums {what}");
                            assert_eq!(bits(&za), bits(&zb), "logit z {what}");
                            let ((a, za), (b, zb)) = both(s, Sq, &case, &z0);
                            assert_eq!(bits(&a), bits(&b), "squared sums {what}");
                            assert_eq!(bits(&za), bits(&zb), "squared z {what}");
                            if clip.is_some() {
                                for (k, v) in a.iter().enumerate() {
                                    if clips[k].is_finite() {
                                        assert!(v.abs() <= clips[k] * n as f64, "{what}");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Every output of the block kernel is bit for bit the one-column kernel's, and
    /// the updated predictor is the same, on every level the CPU offers.
    #[test]
    fn block_sums_are_the_one_column_sums_bit_for_bit() {
        check_level(pulp::Scalar, "scalar");
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(l) = pulp::x86::V3::try_new() {
                check_level(l, "avx2");
            }
            if let Some(l) = pulp::x86::V4::try_new() {
                check_level(l, "avx512");
            }
        }
    }

    #[test]
    fn empty_block_applies_the_update() {
        let xk = [1.0, 2.0, 3.0];
        let mut z = [0.5, 0.5, 0.5];
        block_grad_sums(Sq, Some((&xk, 2.0)), &[], &mut z, None, None, &mut []);
        assert_eq!(z, [2.5, 4.5, 6.5]);
    }
}
