//! The mixed-precision fused step of a margin loss (logistic): DP-CD's sweep over large
//! dense designs in `f32`, with block sums carried in `f64`, and the clipping threshold
//! that keeps the released sum's sensitivity at what the calibration assumed.
//!
//! # What is computed
//!
//! For a margin loss `phi(z, y) = l(y z)` with labels `y = +-1`, the coordinate
//! gradient term is `phi'(z_i, y_i) x_ij = l'(m_i) x'_ij` with the *margin*
//! `m_i = y_i z_i` and the *folded* feature `x'_ij = y_i x_ij` (exact: a sign flip).
//! Storing the folded columns and the margins in `f32` halves the bytes a sweep reads
//! and doubles the lanes of every vector operation; the sweep is memory and
//! `exp`-bound, so one pass costs about half the `f64` kernel's (measured in
//! `docs/performance.md`). One call of a [`MarginKernel`]:
//!
//! 1. applies the pending predictor update `m_i += a x'_ik` (a separate `f32` multiply
//!    and add, identical on every CPU), skipped when there is none;
//! 2. returns `sum_i clamp(l'(m_i) x'_ij, c)` of column `j`, where `clamp(v, c)` is
//!    `v < c ? v : c`, then `v > -c ? v : -c` (a NaN becomes `c`), so that every
//!    computed term lies in `[-c, c]` whatever the data.
//!
//! The terms are added in `f32` within fixed blocks of at most [`BLOCK_TERMS`]
//! consecutive records (the block boundaries depend only on the length of the slice and
//! the CPU's vector width, never on values); each block sum is converted to `f64`
//! (exactly) and the block sums are added in `f64`.
//!
//! # Accuracy
//!
//! The logistic `exp` here is a degree-6 polynomial after the usual `2^k` reduction,
//! within about `2^-22` relative of the exact value, and the sigmoid about as close;
//! a term is therefore within a few `f32` ulps (`6e-8` relative) of the `f64` kernel's,
//! and a block sum within `gamma_255 sum |t_i|` of the exact sum of its terms. DP-CD's
//! noise is many orders of magnitude larger (its standard deviation is a multiple of
//! `2 C_j / n`), which is why the mixed-precision sweep is used only for large `n`
//! (`dp_optim::Precision`).
//!
//! # Privacy: the released sum's sensitivity ([`release_clip`])
//!
//! *Neighbouring relation:* replace-one (same public `n`, one record differs).
//! *Precondition:* each margin `m_i` is a function of record `i` and of public state
//! only (the released steps), as DP-CD's predictor is; the caller splits the sweep at
//! a point that depends on `n` only.
//! *Claim:* with `c = release_clip(C, n)`, the computed sum (blocks added in `f64`, in
//! any order and grouping fixed by `n`) moves by at most `2 C` between neighbouring
//! datasets, *including every rounding error*, so the Gaussian noise calibrated for the
//! sensitivity `2 C / n` of the exact clipped sum covers the floating-point sum.
//! *Proof.* Let `u = 2^-24` (`f32`), `v = 2^-53` (`f64`), `gamma_k(u) = k u / (1 - k u)`
//! (Higham 2002, Lemma 3.1), `B = 256`, and `N_b` a bound on the number of blocks of
//! `n` records ([`block_count_bound`]). Every computed term satisfies `|t_i| <= c`.
//! A block of at most `B` terms, summed in any order, is within
//! `gamma_{B-1}(u) sum |t_i| <= gamma_B(u) B c` of its exact sum (Higham 2002, eq. 4.4,
//! which holds for every summation tree), so `|block| <= (1 + gamma_B(u)) sum |t_i|`.
//! Replacing record `i` changes its term only (its margin and feature belong to it, the
//! others' are the same functions of the same public state), hence only the one block
//! that holds `i`, by at most `2c + 2 gamma_B(u) B c` (two exact sums `2c` apart, each
//! computed within `gamma_B(u) B c`). The `f64` sum of the `N_b` block sums is within
//! `gamma_{N_b}(v) sum |block| <= gamma_{N_b}(v) (1 + gamma_B(u)) n c` of their exact
//! sum, on either dataset. So the two computed sums differ by at most
//! `2c [(1 + B gamma_B(u)) + gamma_{N_b}(v) (1 + gamma_B(u)) n] = 2 c kappa(n)` with
//! [`clip_factor`]`(n) = kappa(n)`, and `c <= C / kappa(n)` makes it at most `2 C`.
//! [`release_clip`] returns the largest `f32` below `C / kappa(n)` (with a relative
//! margin of `1e-9` on `kappa` for the rounding of that division). `kappa(160 000)` is
//! about `1 + 4e-3`: the terms are clipped `0.4 %` tighter than the `f64` kernel's.
//! The `f64` kernels are analysed, as usual, in exact arithmetic; this one is not, because
//! its `f32` roundings are large enough to matter.
//!
//! *Add/remove* shifts every later record by one place, moving the block boundaries
//! under all of them; the bound above does not hold there, and `dp_optim` uses this
//! kernel under replace-one only. The tests check the claim on adversarial neighbouring
//! pairs as well as this derivation (`tests::neighbouring_sums_stay_within_the_sensitivity`).
//! The allowance is not hypothetical: with the terms clipped at `C` itself, that test
//! finds two neighbouring sums `2C + 2.4e-7` apart (`n = 300`, `C = 0.5`, the record at
//! 255 replaced).

use super::arch;
use pulp::{Simd, WithSimd};

/// At most this many consecutive records are added in `f32` before the partial sum is
/// carried into `f64`.
pub const BLOCK_TERMS: usize = 256;

/// A mixed-precision fused step (see the module docs): `(update, x, m, c)` applies
/// `m += a xk` for `update = Some((xk, a))` and returns the clamped sum over the folded
/// column `x` at the updated margins `m`. `m` and `xk` must be at least as long as `x`.
pub type MarginKernel = fn(Option<(&[f32], f32)>, &[f32], &mut [f32], f32) -> f64;

/// `1.5 * 2^23`: adding it rounds an `f32` of magnitude below `2^22` to an integer.
const SHIFTER: f32 = 12_582_912.0;
/// `ln 2` split in a part with zero low bits and the remainder, for the reduction.
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;
/// Arguments are raised to this before the reduction: `exp(-87) > 2^-126` is normal,
/// so `2^k` is a normal power of two for every argument (`exp` of less than `-87` is
/// below `1.7e-38`: its sigmoid terms are zero to `f32` precision anyway).
const EXP_LO: f32 = -87.0;

/// `exp(x)` lane by lane for `x <= 0` (NaN and anything below [`EXP_LO`] give
/// `exp(EXP_LO)`): `2^k p(r)` with `x = k ln 2 + r`, `|r| <= ln 2 / 2`, and the degree-6
/// Taylor polynomial `p`.
#[inline(always)]
fn exp_nonpos<S: Simd>(s: S, x: S::f32s) -> S::f32s {
    let lo = s.splat_f32s(EXP_LO);
    let x = s.select_f32s(s.greater_than_f32s(x, lo), x, lo);
    let t = s.mul_add_e_f32s(
        x,
        s.splat_f32s(std::f32::consts::LOG2_E),
        s.splat_f32s(SHIFTER),
    );
    let k = s.sub_f32s(t, s.splat_f32s(SHIFTER));
    let r = s.negate_mul_add_e_f32s(k, s.splat_f32s(LN2_HI), x);
    let r = s.negate_mul_add_e_f32s(k, s.splat_f32s(LN2_LO), r);
    let mut q = s.splat_f32s(1.0 / 720.0);
    for c in [1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0f32] {
        q = s.mul_add_e_f32s(q, r, s.splat_f32s(c));
    }
    // 2^k: the low mantissa bits of `k + 127 + SHIFTER` hold the biased exponent
    // `k + 127` (in 1..=127 here), which the shift moves into the exponent field.
    let biased = s.transmute_u32s_f32s(s.add_f32s(k, s.splat_f32s(127.0 + SHIFTER)));
    let pow2 = s.transmute_f32s_u32s(s.wrapping_dyn_shl_u32s(biased, s.splat_u32s(23)));
    s.mul_f32s(q, pow2)
}

/// The clamped logistic term `clamp(-sigmoid(-m) x, c)` lane by lane.
#[inline(always)]
fn logistic_term<S: Simd>(s: S, m: S::f32s, x: S::f32s, c: S::f32s, nc: S::f32s) -> S::f32s {
    let one = s.splat_f32s(1.0);
    let e = exp_nonpos(s, s.neg_f32s(s.abs_f32s(m)));
    let r = s.div_f32s(one, s.add_f32s(one, e));
    // sigmoid(-m): e / (1 + e) for m >= 0, 1 / (1 + e) otherwise (and for NaN).
    let sg = s.select_f32s(
        s.greater_than_or_equal_f32s(m, s.splat_f32s(0.0)),
        s.mul_f32s(e, r),
        r,
    );
    let t = s.mul_f32s(s.neg_f32s(sg), x);
    let t = s.select_f32s(s.less_than_f32s(t, c), t, c);
    s.select_f32s(s.greater_than_f32s(t, nc), t, nc)
}

/// The scalar form of [`logistic_term`] for the tail (in `f64`, then clamped in `f32`
/// terms: the bound `|t| <= c` is what the analysis needs).
#[inline]
fn logistic_term_scalar(m: f32, x: f32, c: f32) -> f32 {
    // sigmoid(-m) = e / (1 + e) for m >= 0, 1 / (1 + e) otherwise, e = exp(-|m|).
    let m = f64::from(m);
    let e = (-m.abs()).exp();
    let sg = if m >= 0.0 {
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + e)
    };
    let t = (-sg * f64::from(x)) as f32;
    let t = if t < c { t } else { c };
    if t > -c {
        t
    } else {
        -c
    }
}

struct LogisticStep<'a> {
    update: Option<(&'a [f32], f32)>,
    x: &'a [f32],
    m: &'a mut [f32],
    clip: f32,
}

impl WithSimd for LogisticStep<'_> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) -> f64 {
        let n = self.x.len();
        let m = &mut self.m[..n];
        match self.update {
            Some((xk, a)) => logistic_blocks::<S, true>(s, Some(&xk[..n]), a, self.x, m, self.clip),
            None => logistic_blocks::<S, false>(s, None, 0.0, self.x, m, self.clip),
        }
    }
}

#[inline(always)]
fn logistic_blocks<S: Simd, const UPDATE: bool>(
    s: S,
    xk: Option<&[f32]>,
    a: f32,
    x: &[f32],
    m: &mut [f32],
    clip: f32,
) -> f64 {
    let (mh, mt) = S::as_mut_simd_f32s(m);
    let (xh, xt) = S::as_simd_f32s(x);
    let (kh, kt) = S::as_simd_f32s(xk.unwrap_or(x));
    let (c, nc, av) = (s.splat_f32s(clip), s.splat_f32s(-clip), s.splat_f32s(a));
    let zero = s.splat_f32s(0.0);
    let per_block = (BLOCK_TERMS / S::F32_LANES).max(1);
    let nv = mh.len();
    let mut total = 0.0f64;
    let mut i = 0;
    while i < nv {
        let end = (i + per_block).min(nv);
        let mut acc = [zero; 4];
        let mut u = 0;
        while i < end {
            let mi = if UPDATE {
                let mi = s.add_f32s(mh[i], s.mul_f32s(av, kh[i]));
                mh[i] = mi;
                mi
            } else {
                mh[i]
            };
            acc[u & 3] = s.add_f32s(acc[u & 3], logistic_term(s, mi, xh[i], c, nc));
            u += 1;
            i += 1;
        }
        let block = s.add_f32s(s.add_f32s(acc[0], acc[1]), s.add_f32s(acc[2], acc[3]));
        total += f64::from(s.reduce_sum_f32s(block));
    }
    // The tail (fewer records than one vector): one more block.
    let mut tail = 0.0f32;
    for ((mi, &xi), &ki) in mt.iter_mut().zip(xt).zip(kt) {
        if UPDATE {
            *mi += a * ki;
        }
        tail += logistic_term_scalar(*mi, xi, clip);
    }
    total + f64::from(tail)
}

/// The logistic loss's [`MarginKernel`]: `l'(m) = -sigmoid(-m)`.
pub fn logistic_step(update: Option<(&[f32], f32)>, x: &[f32], m: &mut [f32], clip: f32) -> f64 {
    arch().dispatch(LogisticStep { update, x, m, clip })
}

/// `gamma_k(u) = k u / (1 - k u)` (Higham 2002, Lemma 3.1), `+inf` when `k u >= 1`.
fn gamma(k: f64, u: f64) -> f64 {
    let ku = k * u;
    if ku < 1.0 {
        ku / (1.0 - ku)
    } else {
        f64::INFINITY
    }
}

/// A bound on the number of blocks a sweep of `n` records is summed in, split at one
/// point into two pieces: each piece of length `L` has at most `ceil(L / 256)` full or
/// partial vector blocks and one tail block.
pub fn block_count_bound(n: usize) -> usize {
    n.div_ceil(BLOCK_TERMS) + 4
}

/// `kappa(n) = (1 + B gamma_B(u)) + gamma_{N_b}(v) (1 + gamma_B(u)) n` of the module's
/// proof (`B = 256`, `u = 2^-24`, `v = 2^-53`, `N_b = block_count_bound(n)`), times
/// `1 + 1e-9` for the rounding of the expressions that use it.
pub fn clip_factor(n: usize) -> f64 {
    let (u, v) = (f64::from(f32::EPSILON) / 2.0, f64::EPSILON / 2.0);
    let b = BLOCK_TERMS as f64;
    let g32 = gamma(b, u);
    let g64 = gamma(block_count_bound(n) as f64, v);
    ((1.0 + b * g32) + g64 * (1.0 + g32) * n as f64) * (1.0 + 1e-9)
}

/// The `f32` clipping threshold that keeps the mixed-precision sum of `n` records within
/// sensitivity `2 C` (module docs): the largest `f32` at most `C / kappa(n)`. `+inf`
/// stays `+inf` (no clipping); `0` when `kappa(n)` is infinite (`n` beyond any real
/// dataset).
pub fn release_clip(threshold: f64, n: usize) -> f32 {
    clip_below(threshold, clip_factor(n))
}

/// [`release_clip`] with `kappa(n)` computed once by the caller ([`clip_factor`]): the
/// largest `f32` at most `threshold / factor` (`+inf` stays `+inf`). A sweep calls it
/// once per step with its run's factor.
pub fn clip_below(threshold: f64, factor: f64) -> f32 {
    if threshold == f64::INFINITY {
        return f32::INFINITY;
    }
    let target = threshold / factor;
    let c = target as f32;
    if f64::from(c) > target {
        c.next_down()
    } else {
        c
    }
}

#[cfg(test)]
mod tests;
