//! Row kernels of the stochastic and dual methods (DP-SGD, SDCA, DP-SCD), with the
//! runtime dispatch of the parent module.
//!
//! * [`row_dot`]: `x^T w` for a dense row, the same kernel (and the same summation
//!   order) as [`super::dot`] from [`SHORT_ROW`] entries on, four scalar partial sums
//!   below.
//! * [`row_axpy`]: `out += a x`, a separate multiply and add per lane, bit-for-bit the
//!   scalar loop on every CPU (it is [`super::axpy`], or that loop for short rows).
//! * [`dot_axpy`] and [`dot_axpy_into`]: one dual coordinate step on a dense row in one
//!   dispatch: `d = x^T v`, `a = step(d)` (any scalar function), then `v += a x` (or
//!   `out += a x`). The dot product is bit-for-bit [`row_dot`] and the update bit-for-bit
//!   [`row_axpy`]; fusing them saves a dispatch and a second load of the row, which
//!   matter on short rows (8 features on Electricity), where the call overhead is a
//!   sizeable part of a step.
//! * [`derivatives`]: `out_i = phi'(z_i, y_i)` for a whole mini-batch through a
//!   [`LaneDerivative`] (the vectorised sigmoid for the logistic loss), so that DP-SGD
//!   evaluates the derivatives of a batch in vectors instead of one scalar `exp` per
//!   sampled row.
//!
//! Sparse rows keep the scalar loops of [`crate::Design`]: the rows of the sparse data
//! this workspace uses are short (Adult: 14 non-zeros of 104 one-hot features), so a
//! gathered load would cost more than it saves, and `pulp` has no safe gather.
//!
//! # Reproducibility
//!
//! As in the parent module: the dot products use `4 x lanes` partial sums in a fixed
//! order (bit-for-bit reproducible on one machine, the last bits may differ between
//! AVX-512, AVX2 and scalar code); the updates are identical everywhere; the
//! derivatives follow [`super::sigmoid_lanes`]' error bound (`2^-49` relative against
//! the scalar sigmoid) for the logistic loss and are exact for the others.

use super::{arch, LaneDerivative};
use pulp::{Simd, WithSimd};

/// Rows shorter than this take a scalar path, without the dispatch: on 8 features
/// (Electricity) one vector of AVX-512 lanes gains nothing over four scalar partial
/// sums, and its horizontal reduction and the dispatch lengthen the dependency chain of
/// sequential dual steps (measured: SDCA on Electricity 20-35 % slower through the
/// vector path).
pub const SHORT_ROW: usize = 16;

/// `x^T w` over the common length: [`super::dot`] (vectorised, `4 x lanes` partial
/// sums) from [`SHORT_ROW`] entries on; below, four scalar partial sums
/// `(s0 + s1) + (s2 + s3)` plus the remainder in order (the same on every CPU).
#[inline]
pub fn row_dot(x: &[f64], w: &[f64]) -> f64 {
    let n = x.len().min(w.len());
    if n < SHORT_ROW {
        short_dot(&x[..n], &w[..n])
    } else {
        super::dot(x, w)
    }
}

/// Four scalar partial sums (short rows).
#[inline(always)]
fn short_dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (a4, b4) in ac.zip(bc) {
        for u in 0..4 {
            acc[u] += a4[u] * b4[u];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (&a, &b) in ar.iter().zip(br) {
        s += a * b;
    }
    s
}

/// `out_i += a x_i` over the common length, bit-for-bit the scalar loop on every CPU
/// (see [`super::axpy`]; rows shorter than [`SHORT_ROW`] run the scalar loop itself).
#[inline]
pub fn row_axpy(a: f64, x: &[f64], out: &mut [f64]) {
    if x.len().min(out.len()) < SHORT_ROW {
        for (o, &xi) in out.iter_mut().zip(x) {
            *o += a * xi;
        }
    } else {
        super::axpy(a, x, out)
    }
}

/// A hint that `x` will be read soon (x86-64: `prefetcht0` through the safe wrapper of
/// `safe_arch`; elsewhere nothing). It never changes a result. The dual methods call
/// it for the per-record values (`alpha_j`, `y_j`, `||x_j||^2`) of the rows they have
/// drawn ahead, which sit at random places in arrays of length `n`.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(x);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// `sum_i a_i b_i` with `4 x lanes` partial sums, combined as `(a0 + a1) + (a2 + a3)`;
/// also the body of [`super::dot`], so the row and column dot products agree bit for bit.
#[inline(always)]
pub(super) fn dot_lanes<S: Simd>(
    s: S,
    ah: &[S::f64s],
    at: &[f64],
    bh: &[S::f64s],
    bt: &[f64],
) -> f64 {
    let mut acc = [s.splat_f64s(0.0); 4];
    let mut ac = ah.chunks_exact(4);
    let mut bc = bh.chunks_exact(4);
    if ah.len() * S::F64_LANES >= super::PREFETCH_MIN_LEN {
        for (k, (a4, b4)) in (&mut ac).zip(&mut bc).enumerate() {
            for u in 0..4 {
                super::prefetch_ahead(ah, 4 * k + u, S::F64_LANES);
                super::prefetch_ahead(bh, 4 * k + u, S::F64_LANES);
                acc[u] = s.mul_add_e_f64s(a4[u], b4[u], acc[u]);
            }
        }
    } else {
        for (a4, b4) in (&mut ac).zip(&mut bc) {
            for u in 0..4 {
                acc[u] = s.mul_add_e_f64s(a4[u], b4[u], acc[u]);
            }
        }
    }
    for (u, (&a, &b)) in ac.remainder().iter().zip(bc.remainder()).enumerate() {
        acc[u] = s.mul_add_e_f64s(a, b, acc[u]);
    }
    let t = s.mul_f64s(s.partial_load_f64s(at), s.partial_load_f64s(bt));
    acc[3] = s.add_f64s(acc[3], t);
    let total = s.add_f64s(s.add_f64s(acc[0], acc[1]), s.add_f64s(acc[2], acc[3]));
    s.reduce_sum_f64s(total)
}

/// `o_i += a x_i` with a separate multiply and add (identical on every level).
#[inline(always)]
fn axpy_lanes<S: Simd>(
    s: S,
    a: f64,
    xh: &[S::f64s],
    xt: &[f64],
    oh: &mut [S::f64s],
    ot: &mut [f64],
) {
    let av = s.splat_f64s(a);
    for (o, &x) in oh.iter_mut().zip(xh) {
        *o = s.add_f64s(*o, s.mul_f64s(av, x));
    }
    for (o, &x) in ot.iter_mut().zip(xt) {
        *o += a * x;
    }
}

/// One dual coordinate step on a dense row, in place: `d = x^T v`, `a = step(d)`,
/// `v += a x`; returns `a`. Bit-for-bit `let a = step(row_dot(x, v)); row_axpy(a, x, v)`.
///
/// Works over the common length of `x` and `v` (callers pass `v` of length `p`).
pub fn dot_axpy<F: FnOnce(f64) -> f64>(x: &[f64], v: &mut [f64], step: F) -> f64 {
    if x.len().min(v.len()) < SHORT_ROW {
        let a = step(row_dot(x, v));
        row_axpy(a, x, v);
        return a;
    }
    struct K<'a, F> {
        x: &'a [f64],
        v: &'a mut [f64],
        step: F,
    }
    impl<F: FnOnce(f64) -> f64> WithSimd for K<'_, F> {
        type Output = f64;
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) -> f64 {
            let n = self.x.len().min(self.v.len());
            let (xh, xt) = S::as_simd_f64s(&self.x[..n]);
            let d = {
                let (vh, vt) = S::as_simd_f64s(&self.v[..n]);
                dot_lanes(s, xh, xt, vh, vt)
            };
            let a = (self.step)(d);
            let (vh, vt) = S::as_mut_simd_f64s(&mut self.v[..n]);
            axpy_lanes(s, a, xh, xt, vh, vt);
            a
        }
    }
    arch().dispatch(K { x, v, step })
}

/// One dual coordinate step on a dense row that reads `v` and writes `out`:
/// `d = x^T v`, `a = step(d)`, `out += a x`; returns `a`. Bit-for-bit
/// `let a = step(row_dot(x, v)); row_axpy(a, x, out)` (the independent updates of a
/// DP-SCD mini-batch, summed into a buffer).
pub fn dot_axpy_into<F: FnOnce(f64) -> f64>(x: &[f64], v: &[f64], out: &mut [f64], step: F) -> f64 {
    if x.len().min(v.len()).min(out.len()) < SHORT_ROW {
        let a = step(row_dot(x, v));
        row_axpy(a, x, out);
        return a;
    }
    struct K<'a, F> {
        x: &'a [f64],
        v: &'a [f64],
        out: &'a mut [f64],
        step: F,
    }
    impl<F: FnOnce(f64) -> f64> WithSimd for K<'_, F> {
        type Output = f64;
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) -> f64 {
            let n = self.x.len().min(self.v.len()).min(self.out.len());
            let (xh, xt) = S::as_simd_f64s(&self.x[..n]);
            let (vh, vt) = S::as_simd_f64s(&self.v[..n]);
            let a = (self.step)(dot_lanes(s, xh, xt, vh, vt));
            let (oh, ot) = S::as_mut_simd_f64s(&mut self.out[..n]);
            axpy_lanes(s, a, xh, xt, oh, ot);
            a
        }
    }
    arch().dispatch(K { x, v, out, step })
}

/// `out_i = phi'(z_i, y_i)` lane by lane over the common length of `z`, `y` and `out`
/// (the derivatives of a mini-batch; `deriv` is a loss's [`LaneDerivative`]).
pub fn derivatives<D: LaneDerivative>(deriv: D, z: &[f64], y: &[f64], out: &mut [f64]) {
    struct K<'a, D> {
        deriv: D,
        z: &'a [f64],
        y: &'a [f64],
        out: &'a mut [f64],
    }
    impl<D: LaneDerivative> WithSimd for K<'_, D> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) {
            let n = self.z.len().min(self.y.len()).min(self.out.len());
            let (zh, zt) = S::as_simd_f64s(&self.z[..n]);
            let (yh, yt) = S::as_simd_f64s(&self.y[..n]);
            let (oh, ot) = S::as_mut_simd_f64s(&mut self.out[..n]);
            for ((o, &z), &y) in oh.iter_mut().zip(zh).zip(yh) {
                *o = self.deriv.derivative(s, z, y);
            }
            if !ot.is_empty() {
                // Padded lanes compute phi'(0, 0), finite for every loss, never stored.
                let d = self
                    .deriv
                    .derivative(s, s.partial_load_f64s(zt), s.partial_load_f64s(yt));
                s.partial_store_f64s(ot, d);
            }
        }
    }
    arch().dispatch(K { deriv, z, y, out })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn random(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        (0..n).map(|_| rng.random_range(-2.0..2.0)).collect()
    }

    #[test]
    fn fused_steps_equal_the_separate_kernels_bit_for_bit() {
        for p in [0, 1, 3, 7, 8, 9, 16, 31, 33, 90, 104, 257] {
            let x = random(p, p as u64);
            let v0 = random(p, 1000 + p as u64);
            let step = |d: f64| 0.3 * d - 0.1;
            // in place
            let mut v = v0.clone();
            let a = dot_axpy(&x, &mut v, step);
            let mut r = v0.clone();
            let ar = step(row_dot(&x, &r));
            row_axpy(ar, &x, &mut r);
            assert_eq!(a.to_bits(), ar.to_bits(), "p = {p}");
            assert!(v.iter().zip(&r).all(|(a, b)| a.to_bits() == b.to_bits()));
            // into a buffer
            let mut out = random(p, 2000 + p as u64);
            let mut out_r = out.clone();
            let a = dot_axpy_into(&x, &v0, &mut out, step);
            let ar = step(row_dot(&x, &v0));
            row_axpy(ar, &x, &mut out_r);
            assert_eq!(a.to_bits(), ar.to_bits(), "p = {p}");
            assert!(out
                .iter()
                .zip(&out_r)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
            if p >= SHORT_ROW {
                assert_eq!(
                    row_dot(&x, &v0).to_bits(),
                    crate::simd::dot(&x, &v0).to_bits()
                );
            }
            // and the dot product is a dot product
            let exact: f64 = x.iter().zip(&v0).map(|(a, b)| a * b).sum();
            assert!((row_dot(&x, &v0) - exact).abs() <= 1e-13 * (1.0 + exact.abs()));
        }
    }

    #[test]
    fn the_update_is_the_scalar_loop() {
        let x = random(45, 5);
        let mut v = random(45, 6);
        let mut r = v.clone();
        row_axpy(-0.7, &x, &mut v);
        for (o, &xi) in r.iter_mut().zip(&x) {
            *o += -0.7 * xi;
        }
        assert!(v.iter().zip(&r).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    /// `-y sigmoid(-y z)`, the logistic derivative lane by lane.
    #[derive(Clone, Copy)]
    struct Logistic;
    impl LaneDerivative for Logistic {
        fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
            let ny = s.neg_f64s(y);
            s.mul_f64s(ny, super::super::sigmoid_lanes(s, s.mul_f64s(ny, z)))
        }
    }

    #[test]
    fn batch_derivatives_match_the_scalar_sigmoid() {
        for n in [0, 1, 5, 8, 13, 64, 100] {
            let mut z = random(n, 10 + n as u64);
            // extremes the clipping must survive
            if n >= 5 {
                z[0] = 1e300;
                z[1] = -1e300;
                z[2] = 745.0;
                z[3] = -800.0;
            }
            let y: Vec<f64> = (0..n)
                .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
                .collect();
            let mut out = vec![f64::NAN; n];
            derivatives(Logistic, &z, &y, &mut out);
            for i in 0..n {
                let want = -y[i] * crate::loss::sigmoid(-y[i] * z[i]);
                let err = (out[i] - want).abs();
                assert!(
                    err <= 2f64.powi(-49) * want.abs(),
                    "n = {n}, i = {i}: {} vs {want}",
                    out[i]
                );
            }
        }
    }
}
