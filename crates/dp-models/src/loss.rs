//! Per-sample losses of a linear predictor `z = x^T w` with label `y`.
//!
//! The objective is `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + penalty(w)`. A [`Loss`]
//! gives the value `phi(z, y)`, the derivative `phi'(z, y)` in `z`, the curvature bound
//! `c = sup_z phi''(z, y)` (so the coordinate-wise smoothness constant of `F` along `j`
//! is `M_j = (c/n) sum_i x_ij^2`), and a bound on `|phi'|` where one exists.
//! A loss that has no such bound says so (`None`): it never guesses.
//!
//! Classification losses take labels in `{-1, +1}`.
//!
//! The dense column kernels of coordinate methods ([`Loss::dense_col_grad_sum`],
//! [`Loss::dense_step_grad_sum`]) are vectorised for the smooth losses (squared,
//! logistic, squared hinge, Huber) through [`crate::simd`]; other losses use a scalar
//! default built on [`Loss::derivative`].

use crate::simd::margin::MarginKernel;
use crate::simd::{self, LaneDerivative};
use pulp::Simd;

/// A per-sample loss `phi(z, y)` of the predictor `z = x^T w`.
pub trait Loss: Send + Sync + std::fmt::Debug {
    /// Short name used in reports ("squared", "logistic", ...).
    fn name(&self) -> &'static str;
    /// `phi(z, y)`.
    fn value(&self, z: f64, y: f64) -> f64;
    /// `d phi / d z` at `(z, y)` (a subgradient for non-smooth losses).
    fn derivative(&self, z: f64, y: f64) -> f64;
    /// `c = sup_z phi''(z, y)` over all `z` and admissible labels, or `None` when the loss
    /// is not smooth (hinge). The coordinate-wise smoothness of the average loss is
    /// `M_j = (c/n) sum_i x_ij^2`.
    fn curvature_bound(&self) -> Option<f64>;
    /// A bound `B` on `|phi'(z, y)|` valid for every `z` and every label with
    /// `|y| <= label_bound`, or `None` when no such bound exists (least squares,
    /// squared hinge: the derivative grows with `|z|`).
    fn derivative_bound(&self, label_bound: f64) -> Option<f64>;
    /// True when [`Loss::curvature_bound`] is finite, i.e. the loss is smooth.
    fn is_smooth(&self) -> bool {
        self.curvature_bound().is_some()
    }
    /// True when labels must be in `{-1, +1}`.
    fn is_classification(&self) -> bool;
    /// The convex conjugate in `z`, `phi*(u, y) = sup_z { u z - phi(z, y) }`, used for
    /// duality gaps: `Some(f64::INFINITY)` outside its domain, `None` when the loss does
    /// not provide it. Every provided conjugate has a domain that is an interval
    /// containing 0, so shrinking `u` towards 0 stays inside it.
    fn conjugate(&self, u: f64, y: f64) -> Option<f64> {
        let _ = (u, y);
        None
    }
    /// True when `phi(z, y) = h(z - y)` for some `h` (squared, Huber): a solver may then
    /// keep the residual `r = X w - y` instead of `X w` and pass `y = None` to the dense
    /// kernels, which evaluate `phi'(r_i, 0)` without reading the labels.
    fn is_residual_loss(&self) -> bool {
        false
    }
    /// The coordinate-gradient kernel over a dense column `x`:
    /// `sum_i clip(phi'(z_i, y_i) x_i)`, with `y_i = 0` when `y` is `None` (see
    /// [`Loss::is_residual_loss`]) and, for `clip = Some(c)`, the per-sample clipping
    /// `v < c ? v : c`, then `v > -c ? v : -c` (equal to `sign(v) min(|v|, c)` for every
    /// non-NaN `v`; NaN becomes `c`, so a clipped term is always in `[-c, c]`).
    /// `clip = None` is the identity. `z` and `y` must be at least as long as `x`.
    ///
    /// The default is a scalar loop over [`Loss::derivative`] with four partial sums;
    /// the smooth losses of this module override it with a vectorised kernel. The
    /// summation order is fixed for a given CPU feature level (see [`crate::simd`]).
    fn dense_col_grad_sum(
        &self,
        x: &[f64],
        z: &[f64],
        y: Option<&[f64]>,
        clip: Option<f64>,
    ) -> f64 {
        scalar_col_grad_sum(self, x, z, y, clip)
    }
    /// `out_i = phi'(z_i, y_i)` over the common length of `z`, `y` and `out` (the
    /// derivatives of a mini-batch, for DP-SGD). The default is a scalar loop over
    /// [`Loss::derivative`]; the smooth losses of this module override it with a
    /// vectorised kernel (`dp_models::simd::rows::derivatives`; for the logistic loss
    /// within `2^-49` relative of the scalar derivative, see [`crate::simd`]).
    fn derivatives(&self, z: &[f64], y: &[f64], out: &mut [f64]) {
        for ((o, &zi), &yi) in out.iter_mut().zip(z).zip(y) {
            *o = self.derivative(zi, yi);
        }
    }
    /// One coordinate step fused into one sweep: `z_i += a xk_i` (skipped when `a` is
    /// 0; a separate multiply and add, identical on every CPU), then
    /// [`Loss::dense_col_grad_sum`] of column `x` at the updated `z`.
    fn dense_step_grad_sum(
        &self,
        update: (&[f64], f64),
        x: &[f64],
        z: &mut [f64],
        y: Option<&[f64]>,
        clip: Option<f64>,
    ) -> f64 {
        let (xk, a) = update;
        if a != 0.0 {
            simd::axpy(a, xk, z);
        }
        self.dense_col_grad_sum(x, z, y, clip)
    }
    /// The mixed-precision fused step of a margin loss over label-folded `f32` columns
    /// and margins ([`crate::simd::margin`], which states its accuracy and the
    /// clipping that keeps its sensitivity), or `None` (the default) when the loss has
    /// none. Only a loss `phi(z, y) = l(y z)` with labels `+-1` may return one: its
    /// kernel computes the terms `l'(y_i z_i) y_i x_i = phi'(z_i, y_i) x_i`. DP-CD
    /// uses it on large dense designs (`dp_optim::Precision`).
    fn margin_kernel(&self) -> Option<MarginKernel> {
        None
    }
}

/// The scalar default of [`Loss::dense_col_grad_sum`].
fn scalar_col_grad_sum<L: Loss + ?Sized>(
    loss: &L,
    x: &[f64],
    z: &[f64],
    y: Option<&[f64]>,
    clip: Option<f64>,
) -> f64 {
    let n = x.len();
    let z = &z[..n];
    let c = clip.unwrap_or(f64::INFINITY);
    let term = |zi: f64, yi: f64, xi: f64| {
        let v = loss.derivative(zi, yi) * xi;
        if clip.is_some() {
            let v = if v < c { v } else { c };
            if v > -c {
                v
            } else {
                -c
            }
        } else {
            v
        }
    };
    let mut acc = [0.0f64; 4];
    match y {
        Some(y) => {
            for (i, (&xi, (&zi, &yi))) in x.iter().zip(z.iter().zip(&y[..n])).enumerate() {
                acc[i % 4] += term(zi, yi, xi);
            }
        }
        None => {
            for (i, (&xi, &zi)) in x.iter().zip(z).enumerate() {
                acc[i % 4] += term(zi, 0.0, xi);
            }
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// Overrides the dense kernels of a loss with the vectorised ones, given a
/// [`LaneDerivative`] built from the loss.
macro_rules! simd_kernels {
    ($lanes:expr) => {
        fn dense_col_grad_sum(
            &self,
            x: &[f64],
            z: &[f64],
            y: Option<&[f64]>,
            clip: Option<f64>,
        ) -> f64 {
            #[allow(clippy::redundant_closure_call)]
            simd::col_grad_sum($lanes(self), x, z, y, clip)
        }
        fn dense_step_grad_sum(
            &self,
            update: (&[f64], f64),
            x: &[f64],
            z: &mut [f64],
            y: Option<&[f64]>,
            clip: Option<f64>,
        ) -> f64 {
            #[allow(clippy::redundant_closure_call)]
            simd::step_grad_sum($lanes(self), update, x, z, y, clip)
        }
        fn derivatives(&self, z: &[f64], y: &[f64], out: &mut [f64]) {
            #[allow(clippy::redundant_closure_call)]
            simd::rows::derivatives($lanes(self), z, y, out)
        }
    };
}

/// `factor (z - y)` lane by lane.
#[derive(Clone, Copy)]
struct SquaredLanes(f64);
impl LaneDerivative for SquaredLanes {
    #[inline(always)]
    fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
        s.mul_f64s(s.splat_f64s(self.0), s.sub_f64s(z, y))
    }
}

/// `-y sigmoid(-y z)` lane by lane.
#[derive(Clone, Copy)]
struct LogisticLanes;
impl LaneDerivative for LogisticLanes {
    #[inline(always)]
    fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
        let ny = s.neg_f64s(y);
        s.mul_f64s(ny, simd::sigmoid_lanes(s, s.mul_f64s(ny, z)))
    }
}

/// `-2 y max(0, 1 - y z)` lane by lane (NaN margins give 0, as `f64::max` does).
#[derive(Clone, Copy)]
struct SquaredHingeLanes;
impl LaneDerivative for SquaredHingeLanes {
    #[inline(always)]
    fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
        let zero = s.splat_f64s(0.0);
        let m = s.sub_f64s(s.splat_f64s(1.0), s.mul_f64s(y, z));
        let m = s.select_f64s(s.greater_than_f64s(m, zero), m, zero);
        s.mul_f64s(s.mul_f64s(s.splat_f64s(-2.0), y), m)
    }
}

/// `clamp(z - y, -delta, delta)` lane by lane (NaN stays NaN, as `f64::clamp`).
#[derive(Clone, Copy)]
struct HuberLanes(f64);
impl LaneDerivative for HuberLanes {
    #[inline(always)]
    fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
        let (d, nd) = (s.splat_f64s(self.0), s.splat_f64s(-self.0));
        let r = s.sub_f64s(z, y);
        let r = s.select_f64s(s.greater_than_f64s(r, d), d, r);
        s.select_f64s(s.less_than_f64s(r, nd), nd, r)
    }
}

/// `t log t` with `0 log 0 = 0`.
#[inline]
fn xlogx(t: f64) -> f64 {
    if t > 0.0 {
        t * t.ln()
    } else {
        0.0
    }
}

/// Squared loss `(factor / 2) (z - y)^2`.
///
/// [`Squared::half`] is `1/2 (z - y)^2` (the default, curvature 1); [`Squared::full`] is
/// `(z - y)^2`, the DP-CD paper's convention (footnote 4; curvature 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Squared {
    factor: f64,
}

impl Squared {
    /// `1/2 (z - y)^2`.
    pub fn half() -> Self {
        Self { factor: 1.0 }
    }
    /// `(z - y)^2` (DP-CD paper).
    pub fn full() -> Self {
        Self { factor: 2.0 }
    }
    /// The factor `c` in `(c/2)(z - y)^2`.
    pub fn factor(&self) -> f64 {
        self.factor
    }
}

impl Default for Squared {
    fn default() -> Self {
        Self::half()
    }
}

impl Loss for Squared {
    fn name(&self) -> &'static str {
        "squared"
    }
    #[inline]
    fn value(&self, z: f64, y: f64) -> f64 {
        let r = z - y;
        0.5 * self.factor * r * r
    }
    #[inline]
    fn derivative(&self, z: f64, y: f64) -> f64 {
        self.factor * (z - y)
    }
    fn curvature_bound(&self) -> Option<f64> {
        Some(self.factor)
    }
    fn derivative_bound(&self, _label_bound: f64) -> Option<f64> {
        None
    }
    fn is_classification(&self) -> bool {
        false
    }
    /// `phi(z) = (c/2)(z - y)^2` gives `phi*(u) = u y + u^2 / (2c)` (finite everywhere).
    fn conjugate(&self, u: f64, y: f64) -> Option<f64> {
        Some(u * y + u * u / (2.0 * self.factor))
    }
    fn is_residual_loss(&self) -> bool {
        true
    }
    simd_kernels!(|l: &Self| SquaredLanes(l.factor));
}

/// Logistic loss `log(1 + exp(-y z))`, labels in `{-1, +1}`; computed stably for large `|z|`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Logistic;

/// `log(1 + exp(t))` without overflow or loss of precision.
#[inline]
pub fn log1p_exp(t: f64) -> f64 {
    if t > 0.0 {
        t + (-t).exp().ln_1p()
    } else {
        t.exp().ln_1p()
    }
}

/// The logistic sigmoid `1 / (1 + exp(-t))`, stable for large `|t|`.
#[inline]
pub fn sigmoid(t: f64) -> f64 {
    // One exp of a non-positive argument (no overflow) and a select, no data-dependent
    // branch around the exp: 1/(1+e^-t) for t >= 0, e^t/(1+e^t) otherwise.
    let e = (-t.abs()).exp();
    let r = 1.0 / (1.0 + e);
    if t >= 0.0 {
        r
    } else {
        e * r
    }
}

impl Loss for Logistic {
    fn name(&self) -> &'static str {
        "logistic"
    }
    #[inline]
    fn value(&self, z: f64, y: f64) -> f64 {
        log1p_exp(-y * z)
    }
    #[inline]
    fn derivative(&self, z: f64, y: f64) -> f64 {
        -y * sigmoid(-y * z)
    }
    fn curvature_bound(&self) -> Option<f64> {
        Some(0.25)
    }
    fn derivative_bound(&self, label_bound: f64) -> Option<f64> {
        Some(label_bound)
    }
    fn is_classification(&self) -> bool {
        true
    }
    fn margin_kernel(&self) -> Option<MarginKernel> {
        Some(simd::margin::logistic_step)
    }
    /// With `g(t) = log(1 + e^{-t})` and `phi(z, y) = g(y z)`, `y = +-1`:
    /// `phi*(u, y) = g*(u y)`, and `g*(v) = s log s + (1 - s) log(1 - s)` with `s = -v`
    /// for `v in [-1, 0]`, `+inf` otherwise (so `phi*` is finite iff `s = -u y in [0, 1]`).
    fn conjugate(&self, u: f64, y: f64) -> Option<f64> {
        let s = -u * y;
        Some(if (0.0..=1.0).contains(&s) {
            xlogx(s) + xlogx(1.0 - s)
        } else {
            f64::INFINITY
        })
    }
    simd_kernels!(|_: &Self| LogisticLanes);
}

/// Squared hinge `max(0, 1 - y z)^2`, labels in `{-1, +1}` (curvature 2, derivative unbounded).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SquaredHinge;

impl Loss for SquaredHinge {
    fn name(&self) -> &'static str {
        "squared-hinge"
    }
    #[inline]
    fn value(&self, z: f64, y: f64) -> f64 {
        let m = (1.0 - y * z).max(0.0);
        m * m
    }
    #[inline]
    fn derivative(&self, z: f64, y: f64) -> f64 {
        -2.0 * y * (1.0 - y * z).max(0.0)
    }
    fn curvature_bound(&self) -> Option<f64> {
        Some(2.0)
    }
    fn derivative_bound(&self, _label_bound: f64) -> Option<f64> {
        None
    }
    fn is_classification(&self) -> bool {
        true
    }
    /// With `g(t) = max(0, 1 - t)^2` and `phi(z, y) = g(y z)`: `phi*(u, y) = g*(u y)`,
    /// `g*(v) = v + v^2 / 4` for `v <= 0` (the sup over `t` is attained at `t = 1 + v/2`),
    /// `+inf` for `v > 0` (let `t -> inf`).
    fn conjugate(&self, u: f64, y: f64) -> Option<f64> {
        let v = u * y;
        Some(if v <= 0.0 {
            v + 0.25 * v * v
        } else {
            f64::INFINITY
        })
    }
    simd_kernels!(|_: &Self| SquaredHingeLanes);
}

/// Huber loss with threshold `delta`: `r^2 / 2` for `|r| <= delta`, else
/// `delta (|r| - delta / 2)`, where `r = z - y` (curvature 1, `|phi'| <= delta`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Huber {
    delta: f64,
}

impl Huber {
    /// Huber loss with threshold `delta` (finite, > 0).
    pub fn new(delta: f64) -> crate::Result<Self> {
        crate::error::positive("huber delta", delta).map(|delta| Self { delta })
    }
    /// The threshold.
    pub fn delta(&self) -> f64 {
        self.delta
    }
}

impl Loss for Huber {
    fn name(&self) -> &'static str {
        "huber"
    }
    #[inline]
    fn value(&self, z: f64, y: f64) -> f64 {
        let r = (z - y).abs();
        if r <= self.delta {
            0.5 * r * r
        } else {
            self.delta * (r - 0.5 * self.delta)
        }
    }
    #[inline]
    fn derivative(&self, z: f64, y: f64) -> f64 {
        (z - y).clamp(-self.delta, self.delta)
    }
    fn curvature_bound(&self) -> Option<f64> {
        Some(1.0)
    }
    fn derivative_bound(&self, _label_bound: f64) -> Option<f64> {
        Some(self.delta)
    }
    fn is_classification(&self) -> bool {
        false
    }
    /// `phi(z, y) = h(z - y)`; the Huber function's conjugate is `h*(u) = u^2 / 2` on
    /// `|u| <= delta` (`+inf` outside), so `phi*(u, y) = u y + u^2 / 2` there.
    fn conjugate(&self, u: f64, y: f64) -> Option<f64> {
        Some(if u.abs() <= self.delta {
            u * y + 0.5 * u * u
        } else {
            f64::INFINITY
        })
    }
    fn is_residual_loss(&self) -> bool {
        true
    }
    simd_kernels!(|l: &Self| HuberLanes(l.delta));
}

/// Hinge loss `max(0, 1 - y z)`, labels in `{-1, +1}`. Not smooth: it suits dual methods
/// (SDCA / DP-SCD) and Frank-Wolfe, which this workspace does not implement; solvers that
/// need smoothness reject it because [`Loss::curvature_bound`] is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Hinge;

impl Loss for Hinge {
    fn name(&self) -> &'static str {
        "hinge"
    }
    #[inline]
    fn value(&self, z: f64, y: f64) -> f64 {
        (1.0 - y * z).max(0.0)
    }
    #[inline]
    fn derivative(&self, z: f64, y: f64) -> f64 {
        if y * z < 1.0 {
            -y
        } else {
            0.0
        }
    }
    fn curvature_bound(&self) -> Option<f64> {
        None
    }
    fn derivative_bound(&self, label_bound: f64) -> Option<f64> {
        Some(label_bound)
    }
    fn is_classification(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd<L: Loss>(l: &L, z: f64, y: f64) -> f64 {
        let h = 1e-6;
        (l.value(z + h, y) - l.value(z - h, y)) / (2.0 * h)
    }

    fn check<L: Loss>(l: &L) {
        for &z in &[-3.3, -0.45, 0.2, 1.7, 4.1] {
            for &y in &[-1.0, 1.0] {
                let (a, b) = (l.derivative(z, y), fd(l, z, y));
                assert!(
                    (a - b).abs() < 1e-6,
                    "{}: z={z} y={y}: {a} vs {b}",
                    l.name()
                );
            }
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        check(&Squared::half());
        check(&Squared::full());
        check(&Logistic);
        check(&SquaredHinge);
        check(&Huber::new(0.7).unwrap());
    }

    /// Fenchel-Young: phi(z) + phi*(u) >= u z, with equality at u = phi'(z); and a brute
    /// force sup over a grid of z matches the closed form.
    fn check_conjugate<L: Loss>(l: &L) {
        for &y in &[-1.0f64, 1.0, 0.4] {
            if l.is_classification() && y.abs() != 1.0 {
                continue;
            }
            for &z in &[-2.5, -0.3, 0.0, 0.8, 3.0] {
                let u = l.derivative(z, y);
                let c = l.conjugate(u, y).unwrap();
                let fy = l.value(z, y) + c - u * z;
                assert!(
                    fy.abs() < 1e-12,
                    "{} equality at z={z} y={y}: {fy}",
                    l.name()
                );
                // Brute-force sup over a fine grid never exceeds the closed form by more
                // than rounding, and comes close to it.
                let mut best = f64::NEG_INFINITY;
                for k in -40_000..=40_000 {
                    let t = k as f64 * 1e-3;
                    best = best.max(u * t - l.value(t, y));
                }
                assert!(best <= c + 1e-12, "{}: grid {best} > {c}", l.name());
                assert!(best >= c - 1e-5, "{}: grid {best} << {c}", l.name());
            }
        }
    }

    #[test]
    fn conjugates_are_correct() {
        check_conjugate(&Squared::half());
        check_conjugate(&Squared::full());
        check_conjugate(&Logistic);
        check_conjugate(&SquaredHinge);
        check_conjugate(&Huber::new(0.7).unwrap());
        assert_eq!(Logistic.conjugate(0.5, 1.0), Some(f64::INFINITY));
        assert_eq!(SquaredHinge.conjugate(0.5, 1.0), Some(f64::INFINITY));
        assert_eq!(
            Huber::new(0.7).unwrap().conjugate(0.8, 0.0),
            Some(f64::INFINITY)
        );
        assert_eq!(Logistic.conjugate(0.0, 1.0), Some(0.0));
        assert!(Hinge.conjugate(0.0, 1.0).is_none());
    }

    #[test]
    fn logistic_is_stable_for_large_margins() {
        assert_eq!(Logistic.value(1000.0, 1.0), 0.0);
        assert!((Logistic.value(-1000.0, 1.0) - 1000.0).abs() < 1e-9);
        assert!(Logistic.derivative(-1e4, 1.0).is_finite());
        assert!((Logistic.value(0.0, 1.0) - 2f64.ln()).abs() < 1e-15);
    }

    /// The vectorised dense kernels equal the scalar default up to rounding, for every
    /// smooth loss, clipping, length (tails) and the residual form.
    #[test]
    fn vectorised_kernels_match_the_scalar_default() {
        fn check<L: Loss>(l: &L) {
            for n in [1usize, 3, 8, 13, 64, 257] {
                let x: Vec<f64> = (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.3).collect();
                let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.77).sin() * 4.0).collect();
                let y: Vec<f64> = (0..n)
                    .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
                    .collect();
                for clip in [None, Some(0.2), Some(f64::INFINITY)] {
                    let a = l.dense_col_grad_sum(&x, &z, Some(&y), clip);
                    let b = scalar_col_grad_sum(l, &x, &z, Some(&y), clip);
                    assert!(
                        (a - b).abs() <= 1e-13 * (1.0 + b.abs()),
                        "{}: {a} {b}",
                        l.name()
                    );
                    let (mut z1, mut z2) = (z.clone(), z.clone());
                    let a = l.dense_step_grad_sum((&y, 0.3), &x, &mut z1, Some(&y), clip);
                    for (zi, yi) in z2.iter_mut().zip(&y) {
                        *zi += 0.3 * yi;
                    }
                    let b = scalar_col_grad_sum(l, &x, &z2, Some(&y), clip);
                    assert_eq!(z1, z2);
                    assert!(
                        (a - b).abs() <= 1e-13 * (1.0 + b.abs()),
                        "{}: {a} {b}",
                        l.name()
                    );
                    // The batch derivatives (DP-SGD) against the scalar derivative.
                    let mut d = vec![f64::NAN; n];
                    l.derivatives(&z, &y, &mut d);
                    for ((&di, &zi), &yi) in d.iter().zip(&z).zip(&y) {
                        let want = l.derivative(zi, yi);
                        assert!(
                            (di - want).abs() <= 2f64.powi(-49) * want.abs(),
                            "{}: {di} {want}",
                            l.name()
                        );
                    }
                    if l.is_residual_loss() {
                        let r: Vec<f64> = z.iter().zip(&y).map(|(z, y)| z - y).collect();
                        let a = l.dense_col_grad_sum(&x, &r, None, clip);
                        let b = scalar_col_grad_sum(l, &x, &z, Some(&y), clip);
                        assert!((a - b).abs() <= 1e-13 * (1.0 + b.abs()), "{a} {b}");
                    }
                }
            }
        }
        check(&Squared::half());
        check(&Squared::full());
        check(&Logistic);
        check(&SquaredHinge);
        check(&Huber::new(0.7).unwrap());
        check(&Hinge);
    }

    #[test]
    fn bounds_are_declared_honestly() {
        assert!(Squared::full().derivative_bound(1.0).is_none());
        assert!(!Hinge.is_smooth());
        assert_eq!(Logistic.curvature_bound(), Some(0.25));
        assert!(Huber::new(-1.0).is_err());
    }
}
