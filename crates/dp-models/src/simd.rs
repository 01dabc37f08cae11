//! Vectorised math and the dense column kernels of coordinate methods, with runtime
//! CPU dispatch.
//!
//! The build targets baseline x86-64 (SSE2). [`pulp`] detects the CPU once at run time
//! and runs the same generic code on the widest instruction set it finds: AVX-512
//! (`V4`, 8 lanes of `f64`), AVX2 + FMA (`V3`, 4 lanes) or plain scalar code (1 lane)
//! elsewhere. Everything here is safe Rust; the `unsafe` of the intrinsics stays inside
//! `pulp`, behind its CPU-feature tokens.
//!
//! # Accuracy
//!
//! [`exp`] (and the lane function behind it) is within a relative error of `2^-51` of
//! `f64::exp` for every normal result (about 2 ulp; the tests measure the maximum over
//! the whole range, 2.2e-16 on the machines we ran them on), saturates exactly (`0`
//! below `-745.2`, `+inf` above `709.79`), keeps NaN, maps `+inf -> +inf` and
//! `-inf -> 0`, and is at most `2^-1074` (one unit of the smallest subnormal) from
//! `f64::exp` in the subnormal range (one rounding, after an exact scaling).
//! [`sigmoid`] (`1 / (1 + e)` or `e / (1 + e)` with `e = exp(-|t|)`) is within `2^-49`
//! relative error of the scalar `crate::loss::sigmoid` for every input. The tests
//! check these bounds on every level the CPU offers.
//!
//! # Reproducibility
//!
//! For a given instruction-set level the order of every operation is fixed, so results
//! are bit-for-bit reproducible run to run on the same machine. They may differ in the
//! last bits between levels: sums are accumulated in `4 x lanes` partial sums (32 on
//! AVX-512, 16 on AVX2, 4 in scalar code) before a fixed-order reduction, and the
//! polynomial of `exp` uses fused multiply-adds on AVX2 / AVX-512 but separate
//! multiplies and adds in scalar code. The predictor update (`z += a x`) uses a separate
//! multiply and add on every level and is identical everywhere.

use pulp::{Arch, Simd, WithSimd};
use std::sync::OnceLock;

/// The instruction-set level found at run time (detected once per process).
#[inline]
pub fn arch() -> Arch {
    static ARCH: OnceLock<Arch> = OnceLock::new();
    *ARCH.get_or_init(Arch::new)
}

/// The name of the instruction-set level used by the kernels on this CPU
/// (`"avx512"`, `"avx2"` or `"scalar"`), for reports.
pub fn level_name() -> &'static str {
    struct Name;
    impl WithSimd for Name {
        type Output = &'static str;
        #[inline(always)]
        fn with_simd<S: Simd>(self, _s: S) -> &'static str {
            match S::F64_LANES {
                8 => "avx512",
                4 => "avx2",
                1 => "scalar",
                _ => "simd",
            }
        }
    }
    arch().dispatch(Name)
}

const LOG2E: f64 = std::f64::consts::LOG2_E;
/// `ln 2` split so that `k * LN2_HI` is exact for `|k| < 2^11` (fdlibm's constants).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// `1.5 * 2^52`: adding it rounds to an integer held in the low mantissa bits.
const SHIFTER: f64 = 6_755_399_441_055_744.0;
/// Below this `exp` is 0 (`exp(-746) < 2^-1075`), above the other one `+inf`.
const EXP_LO: f64 = -746.0;
const EXP_HI: f64 = 710.0;
/// `1/k!` for `k = 2..=13` (Taylor coefficients of `e^r`).
const INV_FACT: [f64; 12] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

/// `2^k` for an integer-valued `k` in `[-1022, 1023]` held as `f64`.
#[inline(always)]
fn pow2i<S: Simd>(s: S, k: S::f64s) -> S::f64s {
    // bits(SHIFTER + m) = bits(SHIFTER) + m for 0 <= m < 2^51; multiplying the bits by
    // 2^52 (wrapping) moves m = k + 1023 into the exponent field and drops the
    // shifter's own bits (its low 12 bits are zero).
    let biased = s.add_f64s(k, s.splat_f64s(1023.0 + SHIFTER));
    let bits = s.mul_u64s(s.transmute_u64s_f64s(biased), s.splat_u64s(1u64 << 52));
    s.transmute_f64s_u64s(bits)
}

/// `e^x` lane by lane. See the module documentation for the error bound.
#[inline(always)]
pub fn exp_lanes<S: Simd>(s: S, x: S::f64s) -> S::f64s {
    let hi = s.splat_f64s(EXP_HI);
    let lo = s.splat_f64s(EXP_LO);
    // Saturate (NaN becomes EXP_HI here and is put back at the end).
    let xc = s.select_f64s(s.less_than_f64s(x, hi), x, hi);
    let xc = s.select_f64s(s.greater_than_f64s(xc, lo), xc, lo);
    let (p, k) = exp_reduced(s, xc);
    let y = scale_split(s, p, k);
    // NaN in, NaN out.
    s.select_f64s(s.equal_f64s(x, x), y, x)
}

/// `(p, k)` with `e^xc = p 2^k` for a saturated `xc` in `[EXP_LO, EXP_HI]`: `k` the
/// integer nearest `xc / ln 2` (as `f64`), `p = e^r` by its Taylor polynomial at
/// `r = xc - k ln 2`.
#[inline(always)]
fn exp_reduced<S: Simd>(s: S, xc: S::f64s) -> (S::f64s, S::f64s) {
    // x = k ln 2 + r, |r| <= ln(2)/2 (plus rounding), k integer in [-1076, 1025].
    let shifter = s.splat_f64s(SHIFTER);
    let t = s.mul_add_e_f64s(xc, s.splat_f64s(LOG2E), shifter);
    let k = s.sub_f64s(t, shifter);
    let r = s.negate_mul_add_e_f64s(k, s.splat_f64s(LN2_HI), xc);
    let r = s.negate_mul_add_e_f64s(k, s.splat_f64s(LN2_LO), r);
    // e^r = 1 + r + r^2 q(r): Taylor to degree 13, truncation < |r|^14/14! e^|r| < 2^-57.
    let mut q = s.splat_f64s(INV_FACT[11]);
    for &c in INV_FACT[..11].iter().rev() {
        q = s.mul_add_e_f64s(q, r, s.splat_f64s(c));
    }
    let r2 = s.mul_f64s(r, r);
    let p = s.add_f64s(s.mul_add_e_f64s(r2, q, r), s.splat_f64s(1.0));
    (p, k)
}

/// `p 2^k` as `(p 2^k1) 2^k2` with `k1 = round(k / 2)`, `k2 = k - k1`: both factors
/// normal, so that subnormal results are rounded once (in the last multiply) and
/// `k = 1024` (finite results near `f64::MAX`) works.
#[inline(always)]
fn scale_split<S: Simd>(s: S, p: S::f64s, k: S::f64s) -> S::f64s {
    let shifter = s.splat_f64s(SHIFTER);
    let k1 = s.sub_f64s(
        s.add_f64s(s.mul_f64s(k, s.splat_f64s(0.5)), shifter),
        shifter,
    );
    let k2 = s.sub_f64s(k, k1);
    s.mul_f64s(s.mul_f64s(p, pow2i(s, k1)), pow2i(s, k2))
}

/// Arguments at or above this give `k >= -1020` in [`exp_reduced`] (`-707 log2(e)` is
/// `-1019.99`), so that `p 2^k` is normal (`p > 0.7`) and one multiply by `2^k` is exact.
const EXP_ONE_SCALE_LO: f64 = -707.0;

/// [`exp_lanes`] for arguments `x <= 0` (or NaN): the sigmoid's `exp(-|t|)`, bit for
/// bit the same results with fewer operations. No upper saturation (`x <= 0 < EXP_HI`;
/// a NaN, saturated to `EXP_LO` here instead of `EXP_HI`, is put back at the end either
/// way), and, when every lane is at least [`EXP_ONE_SCALE_LO`], the scaling by `2^k` in
/// one multiply: `p 2^k1` and `(p 2^k1) 2^k2` are then normal, so both multiplies of
/// [`scale_split`] are exact and give the same value as the one multiply `p 2^k`
/// (exact too). A vector with a lane below it (rare: `|t| > 707`, where the sigmoid
/// is within `1e-307` of 0 or 1) takes the two multiplies.
#[inline(always)]
fn exp_nonpos_lanes<S: Simd>(s: S, x: S::f64s) -> S::f64s {
    let lo = s.splat_f64s(EXP_LO);
    let xc = s.select_f64s(s.greater_than_f64s(x, lo), x, lo);
    let (p, k) = exp_reduced(s, xc);
    let far = s.less_than_f64s(xc, s.splat_f64s(EXP_ONE_SCALE_LO));
    let y = if s.first_true_m64s(far) < S::F64_LANES {
        scale_split(s, p, k)
    } else {
        s.mul_f64s(p, pow2i(s, k))
    };
    // NaN in, NaN out.
    s.select_f64s(s.equal_f64s(x, x), y, x)
}

/// The logistic sigmoid `1 / (1 + e^-t)` lane by lane, stable for every `t`
/// (one `exp` of a non-positive argument, no overflow): `1/(1+e)` for `t >= 0`,
/// `e/(1+e)` otherwise, with `e = exp(-|t|)`. NaN in, NaN out.
#[inline(always)]
pub fn sigmoid_lanes<S: Simd>(s: S, t: S::f64s) -> S::f64s {
    let e = exp_nonpos_lanes(s, s.neg_f64s(s.abs_f64s(t)));
    let r = s.div_f64s(s.splat_f64s(1.0), s.add_f64s(s.splat_f64s(1.0), e));
    s.select_f64s(
        s.greater_than_or_equal_f64s(t, s.splat_f64s(0.0)),
        r,
        s.mul_f64s(e, r),
    )
}

/// Applies a lane function to every element of `v` in place.
struct Map<'a, F> {
    v: &'a mut [f64],
    f: F,
}

/// A function of one `f64` lane vector.
pub trait LaneFn: Copy {
    /// Applies the function lane by lane.
    fn apply<S: Simd>(self, s: S, x: S::f64s) -> S::f64s;
}

impl<F: LaneFn> WithSimd for Map<'_, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let (head, tail) = S::as_mut_simd_f64s(self.v);
        for x in head {
            *x = self.f.apply(s, *x);
        }
        if !tail.is_empty() {
            let x = s.partial_load_f64s(tail);
            s.partial_store_f64s(tail, self.f.apply(s, x));
        }
    }
}

#[derive(Clone, Copy)]
struct ExpFn;
impl LaneFn for ExpFn {
    #[inline(always)]
    fn apply<S: Simd>(self, s: S, x: S::f64s) -> S::f64s {
        exp_lanes(s, x)
    }
}

#[derive(Clone, Copy)]
struct SigmoidFn;
impl LaneFn for SigmoidFn {
    #[inline(always)]
    fn apply<S: Simd>(self, s: S, x: S::f64s) -> S::f64s {
        sigmoid_lanes(s, x)
    }
}

/// `v_i <- exp(v_i)` for every element, vectorised (error bound in the module docs).
pub fn exp_in_place(v: &mut [f64]) {
    arch().dispatch(Map { v, f: ExpFn });
}

/// `v_i <- sigmoid(v_i)` for every element, vectorised.
pub fn sigmoid_in_place(v: &mut [f64]) {
    arch().dispatch(Map { v, f: SigmoidFn });
}

/// `e^x` of one value through the vectorised code (same result as [`exp_in_place`]).
pub fn exp(x: f64) -> f64 {
    let mut v = [x];
    exp_in_place(&mut v);
    v[0]
}

/// The sigmoid of one value through the vectorised code.
pub fn sigmoid(x: f64) -> f64 {
    let mut v = [x];
    sigmoid_in_place(&mut v);
    v[0]
}

/// A loss derivative `phi'(z, y)` lane by lane (the per-sample factor of a coordinate
/// gradient). `y` is all zeros when the kernel runs on a residual `z - y`.
pub trait LaneDerivative: Copy {
    /// `phi'(z, y)` lane by lane.
    fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s;
}

/// Clips lane by lane to `[-c, c]` with the same selects as the scalar `Clamp` of the
/// solvers: `v < c ? v : c`, then `v > -c ? v : -c` (NaN becomes `c`).
#[inline(always)]
fn clamp_lanes<S: Simd>(s: S, v: S::f64s, c: S::f64s, neg_c: S::f64s) -> S::f64s {
    let v = s.select_f64s(s.less_than_f64s(v, c), v, c);
    s.select_f64s(s.greater_than_f64s(v, neg_c), v, neg_c)
}

/// How far ahead (in `f64`s, 8 KiB) the long-vector kernels (the column gradient with
/// its fused predictor update, [`dot`], [`axpy`]) hint the data they will read, through
/// the safe `prefetcht0` wrapper of `safe_arch`. A hint never changes a result.
///
/// The hardware prefetcher alone does not keep two streams (a column and the residual)
/// far enough ahead: `cargo run --release -p dp-models --example col_read` times the
/// 1e5 x 100 column sweep with and without hints at several distances (see
/// `docs/performance.md`).
pub const PREFETCH_AHEAD: usize = 1024;
/// Shortest vector (in `f64`s, 512 KiB) the kernels prefetch ahead for: shorter ones
/// (e.g. the 45,312-row columns of Electricity, whose logistic kernel is compute-bound)
/// measured 6-9 % slower with the hint.
pub const PREFETCH_MIN_LEN: usize = 64 * 1024;

/// Prefetch hint for the vector `v[i + PREFETCH_AHEAD / lanes]` (clamped to the last
/// one). Never changes a result.
#[inline(always)]
fn prefetch_ahead<T>(v: &[T], i: usize, lanes: usize) {
    if let Some(last) = v.len().checked_sub(1) {
        rows::prefetch(&v[(i + PREFETCH_AHEAD / lanes).min(last)]);
    }
}

/// One clipped per-sample term `clip(phi'(z, y) x)`, lane by lane.
///
/// With clipping, a lane whose feature `x` is zero gives the term `+0` whatever the
/// derivative: a non-finite `phi'` (an overflowed predictor) times `0` is NaN, which
/// the clamp would turn into `c`, and a zero feature must contribute nothing to a
/// private release (DP-CD's support-aware accounting counts on it). Finite derivatives
/// give the same sum as without the select (a `-0` term becomes `+0`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn term<S: Simd, D: LaneDerivative, const CLIP: bool>(
    s: S,
    deriv: D,
    z: S::f64s,
    x: S::f64s,
    y: S::f64s,
    c: S::f64s,
    neg_c: S::f64s,
) -> S::f64s {
    let v = s.mul_f64s(deriv.derivative(s, z, y), x);
    if CLIP {
        let zero = s.splat_f64s(0.0);
        s.select_f64s(s.equal_f64s(x, zero), zero, clamp_lanes(s, v, c, neg_c))
    } else {
        v
    }
}

/// `sum_i term(z_i, x_i, y_i)` over whole vectors with four partial sums (fixed order),
/// plus a precomputed term of the zero-padded tail. `zat(i)` yields the `i`-th vector of
/// the predictor (after its update, for the fused kernel).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn sum_terms<S: Simd, D: LaneDerivative, const CLIP: bool, const LABELS: bool, const PF: bool>(
    s: S,
    deriv: D,
    xh: &[S::f64s],
    yh: &[S::f64s],
    mut zat: impl FnMut(usize) -> S::f64s,
    c: S::f64s,
    neg_c: S::f64s,
    tail: S::f64s,
) -> f64 {
    let zero = s.splat_f64s(0.0);
    let mut acc = [zero; 4];
    let nv = xh.len();
    let yh = if LABELS { &yh[..nv] } else { yh };
    let mut i = 0;
    while i + 4 <= nv {
        if PF {
            for u in 0..4 {
                prefetch_ahead(xh, i + u, S::F64_LANES);
                if LABELS {
                    prefetch_ahead(yh, i + u, S::F64_LANES);
                }
            }
        }
        for (u, a) in acc.iter_mut().enumerate() {
            let yi = if LABELS { yh[i + u] } else { zero };
            let t = term::<S, D, CLIP>(s, deriv, zat(i + u), xh[i + u], yi, c, neg_c);
            *a = s.add_f64s(*a, t);
        }
        i += 4;
    }
    let mut u = 0;
    while i < nv {
        let yi = if LABELS { yh[i] } else { zero };
        let t = term::<S, D, CLIP>(s, deriv, zat(i), xh[i], yi, c, neg_c);
        acc[u] = s.add_f64s(acc[u], t);
        i += 1;
        u += 1;
    }
    acc[3] = s.add_f64s(acc[3], tail);
    let total = s.add_f64s(s.add_f64s(acc[0], acc[1]), s.add_f64s(acc[2], acc[3]));
    s.reduce_sum_f64s(total)
}

/// The coordinate-gradient kernel, optionally fused with the pending predictor update
/// `z_i += a xk_i` (a separate multiply and add, as the scalar update does).
struct StepGrad<'a, D> {
    deriv: D,
    x: &'a [f64],
    z: Pred<'a>,
    y: Option<&'a [f64]>,
    clip: Option<f64>,
}

/// The predictor: read-only, or updated by `a xk` first.
enum Pred<'a> {
    Read(&'a [f64]),
    Update(&'a mut [f64], &'a [f64], f64),
}

impl<D: LaneDerivative> StepGrad<'_, D> {
    #[inline(always)]
    fn run<S: Simd, const CLIP: bool, const LABELS: bool, const PF: bool>(self, s: S) -> f64 {
        let n = self.x.len();
        let deriv = self.deriv;
        let clip = self.clip.unwrap_or(f64::INFINITY);
        let (c, neg_c) = (s.splat_f64s(clip), s.splat_f64s(-clip));
        let zero = s.splat_f64s(0.0);
        let (xh, xt) = S::as_simd_f64s(self.x);
        let (yh, yt) = match self.y {
            Some(y) if LABELS => S::as_simd_f64s(&y[..n]),
            _ => (&[][..], &[][..]),
        };
        let yt = if LABELS {
            s.partial_load_f64s(yt)
        } else {
            zero
        };
        let xtv = s.partial_load_f64s(xt);
        // Zero-padded tail lanes: x = 0 there and phi'(0, 0) is finite for every
        // loss, so the padded terms are zeros (and padded lanes are never stored).
        match self.z {
            Pred::Read(z) => {
                let (zh, zt) = S::as_simd_f64s(&z[..n]);
                let tail = if xt.is_empty() {
                    zero
                } else {
                    term::<S, D, CLIP>(s, deriv, s.partial_load_f64s(zt), xtv, yt, c, neg_c)
                };
                let zh = &zh[..xh.len()];
                let zat = |i: usize| {
                    if PF {
                        prefetch_ahead(zh, i, S::F64_LANES);
                    }
                    zh[i]
                };
                sum_terms::<S, D, CLIP, LABELS, PF>(s, deriv, xh, yh, zat, c, neg_c, tail)
            }
            Pred::Update(z, xk, a) => {
                let av = s.splat_f64s(a);
                let (kh, kt) = S::as_simd_f64s(&xk[..n]);
                let (zh, zt) = S::as_mut_simd_f64s(&mut z[..n]);
                let tail = if xt.is_empty() {
                    zero
                } else {
                    let zi = s.partial_load_f64s(zt);
                    let zi = s.add_f64s(zi, s.mul_f64s(av, s.partial_load_f64s(kt)));
                    s.partial_store_f64s(zt, zi);
                    term::<S, D, CLIP>(s, deriv, zi, xtv, yt, c, neg_c)
                };
                let kh = &kh[..xh.len()];
                let zh = &mut zh[..xh.len()];
                let zat = |i: usize| {
                    if PF {
                        prefetch_ahead(zh, i, S::F64_LANES);
                        prefetch_ahead(kh, i, S::F64_LANES);
                    }
                    let zi = s.add_f64s(zh[i], s.mul_f64s(av, kh[i]));
                    zh[i] = zi;
                    zi
                };
                sum_terms::<S, D, CLIP, LABELS, PF>(s, deriv, xh, yh, zat, c, neg_c, tail)
            }
        }
    }
}

impl<D: LaneDerivative> WithSimd for StepGrad<'_, D> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) -> f64 {
        let pf = self.x.len() >= PREFETCH_MIN_LEN;
        match (self.clip.is_some(), self.y.is_some(), pf) {
            (false, false, false) => self.run::<S, false, false, false>(s),
            (false, true, false) => self.run::<S, false, true, false>(s),
            (true, false, false) => self.run::<S, true, false, false>(s),
            (true, true, false) => self.run::<S, true, true, false>(s),
            (false, false, true) => self.run::<S, false, false, true>(s),
            (false, true, true) => self.run::<S, false, true, true>(s),
            (true, false, true) => self.run::<S, true, false, true>(s),
            (true, true, true) => self.run::<S, true, true, true>(s),
        }
    }
}

/// `sum_i clip(phi'(z_i, y_i) x_i)` over a dense column `x`, vectorised, where
/// `clip(v) = v < c ? v : c`, then `v > -c ? v : -c` for `clip = Some(c)` (the scalar
/// `Clamp` of the solvers, lane by lane) and the identity for `None`, and `y_i = 0`
/// when `y` is `None` (`z` then holds the residual `X w - y` of a loss of `z - y`).
///
/// `z` and `y` must be at least as long as `x` (a shorter slice panics, as slice
/// indexing does).
pub fn col_grad_sum<D: LaneDerivative>(
    deriv: D,
    x: &[f64],
    z: &[f64],
    y: Option<&[f64]>,
    clip: Option<f64>,
) -> f64 {
    arch().dispatch(StepGrad {
        deriv,
        x,
        z: Pred::Read(z),
        y,
        clip,
    })
}

/// The fused kernel of one coordinate step: `z_i += a xk_i` for every `i` (skipped
/// when `a == 0`), then [`col_grad_sum`] at the updated `z`, in one sweep. The
/// updated `z` is bit-for-bit the scalar loop's `z[i] += a * xk[i]`.
pub fn step_grad_sum<D: LaneDerivative>(
    deriv: D,
    update: (&[f64], f64),
    x: &[f64],
    z: &mut [f64],
    y: Option<&[f64]>,
    clip: Option<f64>,
) -> f64 {
    let (xk, a) = update;
    let z = if a == 0.0 {
        Pred::Read(z)
    } else {
        Pred::Update(z, xk, a)
    };
    arch().dispatch(StepGrad {
        deriv,
        x,
        z,
        y,
        clip,
    })
}

/// `out_i += a x_i`, vectorised, with a separate multiply and add (so the result is
/// the same on every CPU and equal to the scalar loop's).
pub fn axpy(a: f64, x: &[f64], out: &mut [f64]) {
    struct Axpy<'a> {
        a: f64,
        x: &'a [f64],
        out: &'a mut [f64],
    }
    impl WithSimd for Axpy<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) {
            let n = self.x.len().min(self.out.len());
            let (xh, xt) = S::as_simd_f64s(&self.x[..n]);
            let (oh, ot) = S::as_mut_simd_f64s(&mut self.out[..n]);
            let av = s.splat_f64s(self.a);
            if n >= PREFETCH_MIN_LEN {
                for (i, (o, &x)) in oh.iter_mut().zip(xh).enumerate() {
                    prefetch_ahead(xh, i, S::F64_LANES);
                    *o = s.add_f64s(*o, s.mul_f64s(av, x));
                }
            } else {
                for (o, &x) in oh.iter_mut().zip(xh) {
                    *o = s.add_f64s(*o, s.mul_f64s(av, x));
                }
            }
            for (o, &x) in ot.iter_mut().zip(xt) {
                *o += self.a * x;
            }
        }
    }
    arch().dispatch(Axpy { a, x, out });
}

/// `sum_i a_i b_i` over the common length, vectorised with `4 x lanes` partial sums
/// (fixed order per instruction-set level; see the module docs).
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    struct Dot<'a> {
        a: &'a [f64],
        b: &'a [f64],
    }
    impl WithSimd for Dot<'_> {
        type Output = f64;
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) -> f64 {
            let n = self.a.len().min(self.b.len());
            let (ah, at) = S::as_simd_f64s(&self.a[..n]);
            let (bh, bt) = S::as_simd_f64s(&self.b[..n]);
            rows::dot_lanes(s, ah, at, bh, bt)
        }
    }
    arch().dispatch(Dot { a, b })
}

pub mod margin;
pub mod rows;

#[cfg(test)]
mod tests;
