//! Loss-level pieces of dual coordinate methods (SDCA, DP-SCD) for L2-regularised
//! linear models.
//!
//! For `F(w) = (1/n) sum_i phi(x_i^T w, y_i) + (lambda/2) ||w||^2` the dual (Shalev-Shwartz
//! & Zhang 2013; in the notation of Damaskinos et al., "Differentially Private Stochastic
//! Coordinate Descent", AAAI 2021, Eq. 3) is
//!
//! ```text
//! min_alpha  (1/n) sum_i phi_i*(-alpha_i) + ||X^T alpha||^2 / (2 lambda n^2),
//! w(alpha) = X^T alpha / (lambda n) = v / (lambda n),   v = X^T alpha,
//! ```
//!
//! where `phi*(u, y) = sup_z { u z - phi(z, y) }`. A [`DualLoss`] provides the dual loss
//! term `phi*(-alpha, y)` and the step `zeta` of one dual coordinate: the (approximate)
//! minimiser of the local subproblem of the paper (Eq. 8),
//!
//! ```text
//! G(zeta) = (1/n) phi*(-(alpha + zeta)) + (1/(2 lambda n^2)) (2 x^T v zeta + s ||x||^2 zeta^2),
//! ```
//!
//! with `s = 1` for sequential updates and `s = L` (the mini-batch size) for the
//! independent updates of one mini-batch, which makes the sum of the `L` steps a
//! separable upper bound of the dual objective (Ma et al. 2015). Multiplying the
//! derivative by `n` and writing `p = x^T v / (lambda n)` (the margin of the current
//! primal model) and `k = s ||x||^2 / (lambda n)`, the stationarity condition reads
//! `d/dalpha phi*(-alpha) + p + k zeta = 0`; this is what each implementation solves.

use crate::loss::{Hinge, Logistic, Loss, Squared};

/// A loss with a dual coordinate step (see the module docs).
pub trait DualLoss: Loss {
    /// The dual loss term `phi*(-alpha, y)`; `+inf` outside the dual domain.
    fn dual_loss(&self, alpha: f64, y: f64) -> f64;
    /// The step `zeta` of the dual coordinate `alpha` for the margin `p = x^T w` of the
    /// current primal model and the curvature `k = s ||x||^2 / (lambda n) >= 0` of the
    /// quadratic part of the subproblem (see the module docs). Always finite for finite
    /// inputs.
    fn dual_step(&self, alpha: f64, p: f64, y: f64, k: f64) -> f64;
    /// A bound on `|dual_step(..)|` that holds for every input with a label in
    /// `{-1, +1}` (the width of a bounded dual domain), or `None` when the step is
    /// unbounded (the squared loss). A private solver may cap its clipping threshold at
    /// it: clipping beyond it never acts, and the smaller threshold is a smaller
    /// sensitivity. Data-independent.
    fn step_bound(&self) -> Option<f64> {
        None
    }
}

/// Box margin of the logistic dual: `y alpha` is kept in `[b, 1 - b]` where the
/// conjugate's derivative is finite (the authors' code of DP-SCD uses `b = 1e-4`).
pub const LOGISTIC_DUAL_BOX: f64 = 1e-4;

/// `phi = (c/2)(z - y)^2`: `phi*(-alpha) = alpha^2/(2c) - alpha y`; the subproblem is a
/// quadratic with minimiser `zeta = (y - p - alpha/c) / (1/c + k)` (exact).
impl DualLoss for Squared {
    fn dual_loss(&self, alpha: f64, y: f64) -> f64 {
        alpha * alpha / (2.0 * self.factor()) - alpha * y
    }
    #[inline]
    fn dual_step(&self, alpha: f64, p: f64, y: f64, k: f64) -> f64 {
        let ic = 1.0 / self.factor();
        (y - p - alpha * ic) / (ic + k)
    }
}

/// `phi = max(0, 1 - y z)`: `phi*(-alpha) = -alpha y` on `y alpha in [0, 1]`. The
/// subproblem is linear plus quadratic on an interval: the unconstrained minimiser
/// `(1 - y p) / k` (in `y alpha` units) projected onto the box (exact). With `k = 0` (a
/// zero row) the linear term alone decides the end of the box.
impl DualLoss for Hinge {
    fn dual_loss(&self, alpha: f64, y: f64) -> f64 {
        let a = alpha * y;
        if (0.0..=1.0).contains(&a) {
            -a
        } else {
            f64::INFINITY
        }
    }
    #[inline]
    fn dual_step(&self, alpha: f64, p: f64, y: f64, k: f64) -> f64 {
        let a = (alpha * y).clamp(0.0, 1.0);
        let slack = 1.0 - y * p;
        let a_new = if k > 0.0 {
            (a + slack / k).clamp(0.0, 1.0)
        } else if slack > 0.0 {
            1.0
        } else if slack < 0.0 {
            0.0
        } else {
            a
        };
        y * a_new - y * a
    }
    /// `a, a_new in [0, 1]` and `|y| = 1`.
    fn step_bound(&self) -> Option<f64> {
        Some(1.0)
    }
}

/// `phi = log(1 + exp(-y z))`: `phi*(-alpha) = a log a + (1 - a) log(1 - a)` with
/// `a = y alpha in [0, 1]`. One projected Newton step from the clamped point
/// `a_c = clamp(a, b, 1 - b)`, `b = LOGISTIC_DUAL_BOX` (the paper: "a single Newton
/// step"): `g = y log(a_c / (1 - a_c)) + p`, `h = 1/(a_c (1 - a_c)) + k`,
/// `a_new = clamp(a_c - y g / h, b, 1 - b)`, and the step is `y (a_new - a_c)`, measured
/// from the clamped point as in the authors' code.
impl DualLoss for Logistic {
    fn dual_loss(&self, alpha: f64, y: f64) -> f64 {
        let a = alpha * y;
        if (0.0..=1.0).contains(&a) {
            let xlogx = |t: f64| if t > 0.0 { t * t.ln() } else { 0.0 };
            xlogx(a) + xlogx(1.0 - a)
        } else {
            f64::INFINITY
        }
    }
    #[inline]
    fn dual_step(&self, alpha: f64, p: f64, y: f64, k: f64) -> f64 {
        let b = LOGISTIC_DUAL_BOX;
        let a = (alpha * y).clamp(b, 1.0 - b);
        let g = y * (a / (1.0 - a)).ln() + p;
        let h = 1.0 / (a * (1.0 - a)) + k;
        let a_new = (a - y * g / h).clamp(b, 1.0 - b);
        y * (a_new - a)
    }
    /// `a, a_new in [b, 1 - b]` and `|y| = 1`.
    fn step_bound(&self) -> Option<f64> {
        Some(1.0 - 2.0 * LOGISTIC_DUAL_BOX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n * G(zeta)` up to a constant, for a brute-force check of the step.
    fn sub<L: DualLoss>(l: &L, alpha: f64, p: f64, y: f64, k: f64, zeta: f64) -> f64 {
        l.dual_loss(alpha + zeta, y) + p * zeta + 0.5 * k * zeta * zeta
    }

    fn brute<L: DualLoss>(l: &L, alpha: f64, p: f64, y: f64, k: f64) -> f64 {
        let mut best = (f64::INFINITY, 0.0);
        for i in -200_000..=200_000 {
            let z = i as f64 * 2e-5;
            let v = sub(l, alpha, p, y, k, z);
            if v < best.0 {
                best = (v, z);
            }
        }
        best.1
    }

    #[test]
    fn exact_steps_minimise_the_subproblem() {
        for &(alpha, p, y, k) in &[
            (0.0, 0.3, 1.0, 0.7),
            (0.4, -0.2, -1.0, 2.0),
            (-0.3, 1.5, 1.0, 0.05),
            (0.9, 0.1, 1.0, 10.0),
        ] {
            for l in [Squared::half(), Squared::full()] {
                let z = l.dual_step(alpha, p, y, k);
                assert!((z - brute(&l, alpha, p, y, k)).abs() < 1e-4, "{l:?}");
            }
            // hinge: alpha must be dual-feasible
            let ah = y * alpha.abs().min(1.0);
            let z = Hinge.dual_step(ah, p, y, k);
            assert!(
                (z - brute(&Hinge, ah, p, y, k)).abs() < 1e-4,
                "hinge {ah} {p} {y} {k}"
            );
        }
    }

    #[test]
    fn logistic_newton_step_decreases_the_subproblem() {
        for &(a, p, y, k) in &[
            (0.3, 0.5, 1.0, 0.5),
            (0.7, -1.0, -1.0, 3.0),
            (0.5, 0.0, 1.0, 1.0),
        ] {
            let alpha = y * a;
            let z = Logistic.dual_step(alpha, p, y, k);
            let after = sub(&Logistic, alpha, p, y, k, z);
            assert!(after <= sub(&Logistic, alpha, p, y, k, 0.0));
            // close to the exact minimiser (Newton on a smooth 1-d problem)
            let zb = brute(&Logistic, alpha, p, y, k);
            assert!((z - zb).abs() < 0.1, "{z} vs {zb}");
            assert!(((alpha + z) * y) >= LOGISTIC_DUAL_BOX);
        }
        // from alpha = 0 (outside the box) the step lands inside it
        let z = Logistic.dual_step(0.0, 0.0, -1.0, 1.0);
        assert!(z.is_finite() && -z > 0.0);
    }

    #[test]
    fn dual_losses_are_the_conjugates() {
        // phi*(-alpha) from Loss::conjugate where it exists.
        for &alpha in &[-0.7, 0.0, 0.3, 0.99] {
            for &y in &[-1.0, 1.0] {
                for l in [Squared::half(), Squared::full()] {
                    let c = l.conjugate(-alpha, y).unwrap();
                    assert!((l.dual_loss(alpha, y) - c).abs() < 1e-12);
                }
                let c = Logistic.conjugate(-alpha, y).unwrap();
                let d = Logistic.dual_loss(alpha, y);
                assert!(c == d || (c - d).abs() < 1e-12, "{c} {d}");
            }
        }
        assert_eq!(Hinge.dual_loss(0.5, 1.0), -0.5);
        assert_eq!(Hinge.dual_loss(0.5, -1.0), f64::INFINITY);
    }
}
