//! The non-private reference solver: a certified optimum `F*` for every relative error
//! `(F(w) - F*) / F*` the experiments report.
//!
//! # Algorithm
//!
//! Cyclic proximal coordinate descent with step `gamma_j = 1/M_j`,
//! `M_j = (c/n) ||X_{:,j}||^2` (exact coordinate minimisation for the squared loss):
//!
//! ```text
//! for j = 1..p:  g_j = (1/n) sum_i phi'(z_i, y_i) x_ij        (maintained predictor z = X w)
//!                w_j <- prox_{psi_j / M_j}(w_j - g_j / M_j);  z += (w_j^new - w_j^old) X_{:,j}
//! ```
//!
//! Columns with `M_j = 0` do not affect the loss: `w_j` is set to the minimiser of
//! `psi_j` (a prox with an infinite step). Every `check_every` passes the predictor is
//! recomputed from scratch (so rounding drift cannot build up) and a certificate is
//! computed; the solver stops when it is at most `tol` relative. Every `K` passes
//! (`ReferenceOptions::anderson`, default 10) an Anderson extrapolation of the last
//! `K + 1` iterates is tried and kept only if it lowers `F`.
//!
//! # Certificates
//!
//! **Duality gap** (when the loss provides [`Loss::conjugate`] and the penalty
//! [`Penalty::conjugate_1d`] with `dual_radius > 0` on every coordinate: LASSO, elastic
//! net, ridge, L1- / L2-logistic, Huber and squared hinge with those penalties). For
//! `P(w) = (1/n) sum_i phi_i(x_i^T w) + sum_j psi_j(w_j)` the Fenchel dual is
//!
//! ```text
//! D(alpha) = -(1/n) sum_i phi_i*(-alpha_i) - sum_j psi_j*( (1/n) (X^T alpha)_j ),
//! ```
//!
//! and `P(w) >= D(alpha)` for every `w`, `alpha` (add the Fenchel-Young inequalities
//! `phi_i(z_i) + phi_i*(-alpha_i) >= -alpha_i z_i` and
//! `psi(w) + psi*(v) >= <v, w>` with `v = (1/n) X^T alpha`; the `z` and `w` terms cancel
//! because `z = X w`). The candidate is `alpha = -s phi'(z, y)`, i.e. `-alpha_i = s u_i`
//! with `u_i = phi'(z_i, y_i)` and `v_j = -s grad_j f(w)`; it is optimal at `w*`
//! (`s = 1` there). The rescaling `s = min(1, min_j r_j / |grad_j f(w)|)`, with `r_j` the
//! radius of the domain of `psi_j*` (`lambda omega_j` for L1, infinite when there is an
//! L2 part), makes `v` dual-feasible, and since every loss conjugate's domain is an
//! interval containing 0, `s u_i` stays in it. Then `gap = P(w) - D(alpha) >= P(w) - F*`
//! bounds the suboptimality of the returned objective. Conjugates used (derived in
//! [`crate::loss`] and [`crate::penalty`]): squared `(c/2)(z-y)^2 -> u y + u^2/(2c)`;
//! logistic `-> s log s + (1-s) log(1-s)`, `s = -u y in [0, 1]`; L1 `lambda|w| ->`
//! indicator of `[-lambda, lambda]`; L2 `(lambda/2) w^2 -> v^2 / (2 lambda)`; elastic net
//! `a|w| + (b/2) w^2 -> max(|v| - a, 0)^2 / (2b)`.
//! Stopping rule: `gap <= tol * |P(w)|`. The reported gap is at least
//! `f64::EPSILON * |P(w)|`: once `P` and `D` agree to rounding the computed difference is
//! noise (it can even come out negative) and no tighter claim is made.
//!
//! **KKT norm** (otherwise: no penalty, box constraints, zero penalty weights):
//! `max_j dist(-grad_j f(w), d psi_j(w_j))`, which is zero exactly at a minimiser.
//! Stopping rule: at most `tol` times its value at the starting point (a `1/tol`-fold
//! reduction). Unlike the gap it does not bound `F(w) - F*` by itself.

use crate::constants::curvature_of;
use crate::design::Design;
use crate::error::{ModelError, Result};
use crate::loss::Loss;
use crate::objective::Objective;
use crate::penalty::Penalty;
use serde::{Deserialize, Serialize};

/// Options of [`solve`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceOptions {
    /// Relative tolerance of the certificate (default `1e-10`; at most `1e-10` is what
    /// the experiments need: `F*` must be far more accurate than the smallest relative
    /// errors the papers report, which are below `1e-3`).
    pub tol: f64,
    /// Maximum number of passes over the coordinates (default 1,000,000).
    pub max_passes: u64,
    /// Passes between two certificate evaluations (default 10; each costs about one pass).
    pub check_every: u64,
    /// Starting point (default: zero).
    pub w0: Option<Vec<f64>>,
    /// Anderson extrapolation memory `K` (default 10; 0 disables): every `K` passes the
    /// last `K + 1` iterates are combined as in skglm (Bertrand & Massias 2021) and the
    /// combination replaces the iterate only if it lowers the objective, so the
    /// certificate logic is unchanged.
    pub anderson: usize,
}

impl Default for ReferenceOptions {
    fn default() -> Self {
        Self {
            tol: 1e-10,
            max_passes: 1_000_000,
            check_every: 10,
            w0: None,
            anderson: 10,
        }
    }
}

/// The kind of certificate a [`Certified`] result carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CertificateKind {
    /// `P(w) - D(alpha)`: an upper bound on `F(w) - F*`.
    DualityGap,
    /// `max_j dist(-grad_j f(w), d psi_j(w_j))`.
    KktNorm,
}

impl std::fmt::Display for CertificateKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::DualityGap => "duality gap",
            Self::KktNorm => "KKT norm",
        })
    }
}

/// A solution with its optimality certificate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certified {
    /// The coefficients.
    pub w: Vec<f64>,
    /// `F(w)`, computed from a fresh predictor `X w`.
    pub objective: f64,
    /// The certificate's value (absolute): a duality gap or a KKT norm, see `kind`.
    pub certificate: f64,
    /// The certificate divided by its scale (`|F(w)|` for a gap, the starting KKT norm
    /// for a KKT norm); at most the requested tolerance.
    pub relative_certificate: f64,
    /// Which certificate.
    pub kind: CertificateKind,
    /// Passes over the coordinates (each pass updates every coordinate once).
    pub iterations: u64,
}

impl Certified {
    /// Number of non-zero coefficients.
    pub fn support_size(&self) -> usize {
        self.w.iter().filter(|&&v| v != 0.0).count()
    }
}

/// Whether a duality gap is available for this loss and penalty.
fn gap_available<L: Loss + ?Sized, P: Penalty + ?Sized>(loss: &L, pen: &P, p: usize) -> bool {
    loss.conjugate(0.0, 1.0).is_some()
        && (0..p).all(|j| matches!(pen.dual_radius(j), Some(r) if r > 0.0))
}

/// The duality gap at `w` with predictor `z` (see the module docs). Returns
/// `(primal, gap)`.
pub fn duality_gap<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized>(
    obj: &Objective<'_, D, L, P>,
    w: &[f64],
    z: &[f64],
) -> Result<(f64, f64)> {
    let p = obj.n_features();
    let (loss, pen) = (obj.loss(), obj.penalty());
    if !gap_available(loss, pen, p) {
        return Err(ModelError::Unsupported(format!(
            "no duality gap for the {} loss with the {} penalty",
            loss.name(),
            pen.name()
        )));
    }
    let primal = obj.value_from_predictor(w, z)?;
    let mut grad = vec![0.0; p];
    obj.gradient(z, &mut grad)?;
    // Rescaling factor s: largest in (0, 1] keeping |s grad_j| <= r_j.
    let mut s = 1.0f64;
    for (j, g) in grad.iter().enumerate() {
        let r = pen.dual_radius(j).unwrap_or(0.0);
        if g.abs() > r {
            s = s.min(r / g.abs());
        }
    }
    let mut loss_conj = 0.0;
    for (&zi, &yi) in z.iter().zip(obj.y()) {
        let u = s * loss.derivative(zi, yi);
        loss_conj += loss.conjugate(u, yi).unwrap_or(f64::INFINITY);
    }
    let mut pen_conj = 0.0;
    for (j, g) in grad.iter().enumerate() {
        // v_j = (1/n)(X^T alpha)_j = -s grad_j f(w); clamp to the domain against rounding.
        let mut v = -s * g;
        let r = pen.dual_radius(j).unwrap_or(0.0);
        v = v.clamp(-r, r);
        pen_conj += pen.conjugate_1d(j, v).unwrap_or(f64::INFINITY);
    }
    let dual = -loss_conj / obj.n_samples() as f64 - pen_conj;
    Ok((primal, primal - dual))
}

/// Solves `min_w F(w)` to a certified tolerance (see the module docs).
///
/// Fails for a non-smooth loss, a bad starting point or options, and with
/// [`ModelError::NotConverged`] (naming the certificate reached) after `max_passes`.
pub fn solve<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized>(
    obj: &Objective<'_, D, L, P>,
    opts: &ReferenceOptions,
) -> Result<Certified> {
    let (n, p) = (obj.n_samples(), obj.n_features());
    let (loss, pen) = (obj.loss(), obj.penalty());
    curvature_of(loss)?;
    if !(opts.tol.is_finite() && opts.tol > 0.0) {
        return Err(ModelError::InvalidParameter {
            name: "tol",
            value: opts.tol,
            expected: "must be finite and > 0",
        });
    }
    if opts.check_every == 0 {
        return Err(ModelError::InvalidParameter {
            name: "check_every",
            value: 0.0,
            expected: "must be at least 1",
        });
    }
    let m = obj.coordinate_smoothness()?.value;
    let mut w = match &opts.w0 {
        Some(w0) => {
            if w0.len() != p {
                return Err(ModelError::Shape(format!(
                    "w0 has length {}, expected {p}",
                    w0.len()
                )));
            }
            if let Some(j) = w0.iter().position(|v| !v.is_finite()) {
                return Err(ModelError::NonFinite {
                    what: "w0",
                    location: format!("coordinate {j}"),
                    value: w0[j],
                });
            }
            w0.clone()
        }
        None => vec![0.0; p],
    };
    // Project the start onto the penalty's domain (box constraints).
    for (j, wj) in w.iter_mut().enumerate() {
        if !pen.value_1d(j, *wj).is_finite() {
            *wj = pen.prox_1d(j, *wj, 1.0);
        }
    }
    let use_gap = gap_available(loss, pen, p);
    let kind = if use_gap {
        CertificateKind::DualityGap
    } else {
        CertificateKind::KktNorm
    };
    let mut z = vec![0.0; n];
    obj.predictor(&w, &mut z)?;
    let kkt0 = if use_gap {
        0.0
    } else {
        obj.kkt_violation(&w, &z)?
    };

    let mut anderson = (opts.anderson > 0).then(|| Anderson::new(opts.anderson, n));
    let mut passes = 0u64;
    loop {
        // Certificate at the current point (fresh predictor).
        obj.predictor(&w, &mut z)?;
        let (objective, certificate, scale) = if use_gap {
            let (primal, gap) = duality_gap(obj, &w, &z)?;
            // Near the optimum the computed gap is rounding noise and can even be
            // negative; never claim more than one ulp of the objective.
            (primal, gap.max(f64::EPSILON * primal.abs()), primal.abs())
        } else {
            (
                obj.value_from_predictor(&w, &z)?,
                obj.kkt_violation(&w, &z)?,
                kkt0,
            )
        };
        if !objective.is_finite() || !certificate.is_finite() {
            return Err(ModelError::NotConverged(format!(
                "the objective or certificate became non-finite after {passes} passes \
                 (objective {objective}, {kind} {certificate})"
            )));
        }
        let relative = if scale > 0.0 {
            certificate / scale
        } else if certificate == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        if relative <= opts.tol {
            return Ok(Certified {
                w,
                objective,
                certificate,
                relative_certificate: relative,
                kind,
                iterations: passes,
            });
        }
        if passes >= opts.max_passes {
            return Err(ModelError::NotConverged(format!(
                "after {passes} passes the relative {kind} is {relative:e} > tol = {:e} \
                 (objective {objective})",
                opts.tol
            )));
        }
        let batch = opts.check_every.min(opts.max_passes - passes);
        for _ in 0..batch {
            cd_pass(obj, &m, &mut w, &mut z);
            if let Some(acc) = anderson.as_mut() {
                acc.push_and_extrapolate(obj, &mut w, &mut z)?;
            }
        }
        passes += batch;
    }
}

/// Anderson extrapolation of the CD iterates (offline, "regularised nonlinear
/// acceleration" as used by skglm): with `U = [w_1 - w_0, ..., w_K - w_{K-1}]`, solve
/// `(U^T U) c = 1`, normalise `c` to sum 1, and propose `sum_k c_k w_k`.
struct Anderson {
    k: usize,
    history: Vec<Vec<f64>>,
    z_try: Vec<f64>,
}

impl Anderson {
    fn new(k: usize, n: usize) -> Self {
        Self {
            k,
            history: Vec::with_capacity(k + 1),
            z_try: vec![0.0; n],
        }
    }

    fn push_and_extrapolate<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized>(
        &mut self,
        obj: &Objective<'_, D, L, P>,
        w: &mut [f64],
        z: &mut [f64],
    ) -> Result<()> {
        self.history.push(w.to_vec());
        if self.history.len() < self.k + 1 {
            return Ok(());
        }
        let history = std::mem::take(&mut self.history);
        let k = self.k;
        let u: Vec<Vec<f64>> = (0..k)
            .map(|i| {
                history[i + 1]
                    .iter()
                    .zip(&history[i])
                    .map(|(a, b)| a - b)
                    .collect()
            })
            .collect();
        let mut c = nalgebra::DMatrix::<f64>::zeros(k, k);
        for a in 0..k {
            for b in 0..k {
                c[(a, b)] = u[a].iter().zip(&u[b]).map(|(x, y)| x * y).sum();
            }
        }
        let trace: f64 = (0..k).map(|a| c[(a, a)]).sum();
        if !(trace > 0.0 && trace.is_finite()) {
            return Ok(());
        }
        // A tiny ridge keeps the system solvable when the differences are collinear.
        for a in 0..k {
            c[(a, a)] += 1e-12 * trace;
        }
        let Some(sol) = c.lu().solve(&nalgebra::DVector::from_element(k, 1.0)) else {
            return Ok(());
        };
        let total: f64 = sol.iter().sum();
        if !(total.is_finite() && total != 0.0) {
            return Ok(());
        }
        // w_try = sum_i c_i w_{i+1}, on the current support only (as skglm does on its
        // working set): coordinates at 0 stay at 0, so sparsity is not destroyed.
        let mut w_try = vec![0.0; w.len()];
        for (i, ci) in sol.iter().enumerate() {
            let ci = ci / total;
            for ((t, &h), &cur) in w_try.iter_mut().zip(&history[i + 1]).zip(w.iter()) {
                if cur != 0.0 {
                    *t += ci * h;
                }
            }
        }
        if w_try.iter().any(|v| !v.is_finite()) {
            return Ok(());
        }
        obj.predictor(&w_try, &mut self.z_try)?;
        let f_try = obj.value_from_predictor(&w_try, &self.z_try)?;
        let f_now = obj.value_from_predictor(w, z)?;
        // Demand a decrease well above rounding noise: on flat valleys a rounding-level
        // "improvement" would otherwise be accepted and undo the progress of CD.
        if f_try < f_now - 16.0 * f64::EPSILON * f_now.abs() {
            w.copy_from_slice(&w_try);
            z.copy_from_slice(&self.z_try);
        }
        Ok(())
    }
}

/// One cyclic pass of proximal coordinate descent with steps `1/M_j`. No allocation.
#[inline]
pub fn cd_pass<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized>(
    obj: &Objective<'_, D, L, P>,
    m: &[f64],
    w: &mut [f64],
    z: &mut [f64],
) {
    let pen = obj.penalty();
    for (j, (wj, &mj)) in w.iter_mut().zip(m).enumerate() {
        let old = *wj;
        let new = if mj > 0.0 {
            let g = obj.coordinate_gradient(j, z);
            pen.prox_1d(j, old - g / mj, 1.0 / mj)
        } else {
            // The coordinate does not enter the loss: minimise psi_j alone.
            pen.prox_1d(j, old, f64::MAX)
        };
        if new != old {
            *wj = new;
            obj.update_predictor(j, new - old, z);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        BoxConstraint, Dataset, DenseDesign, ElasticNet, Hinge, Logistic, NoPenalty, Squared, L1,
        L2,
    };
    use nalgebra::{DMatrix, DVector};

    fn random_data(n: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        // Small deterministic generator (tests must not depend on rand's stream).
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let x: Vec<f64> = (0..n * p).map(|_| next()).collect();
        let y: Vec<f64> = (0..n).map(|_| next()).collect();
        (x, y)
    }

    #[test]
    fn ridge_matches_closed_form() {
        let (n, p, lam) = (40, 6, 0.3);
        let (xs, y) = random_data(n, p, 7);
        let x = DenseDesign::from_row_major(n, p, &xs).unwrap();
        let xm = x.matrix().clone_owned();
        let d = Dataset::new(x, y.clone()).unwrap();
        let loss = Squared::half();
        let pen = L2::new(lam).unwrap();
        let obj = Objective::new(&d, &loss, &pen).unwrap();
        let sol = solve(&obj, &ReferenceOptions::default()).unwrap();
        assert_eq!(sol.kind, CertificateKind::DualityGap);
        assert!(sol.relative_certificate <= 1e-10);
        // (X^T X / n + lam I) w = X^T y / n
        let a = xm.transpose() * &xm / n as f64 + DMatrix::identity(p, p) * lam;
        let b = xm.transpose() * DVector::from_vec(y) / n as f64;
        let w = a.lu().solve(&b).unwrap();
        let f_exact = obj.value(w.as_slice()).unwrap();
        assert!(sol.objective >= f_exact - 1e-14);
        assert!(sol.objective - f_exact <= sol.certificate + 1e-15);
        for j in 0..p {
            assert!(
                (sol.w[j] - w[j]).abs() < 1e-5,
                "{j}: {} vs {}",
                sol.w[j],
                w[j]
            );
        }
    }

    #[test]
    fn lasso_on_orthogonal_design_matches_hand_solution() {
        // Columns of a 4x4 Hadamard matrix: X^T X = 4 I = n I, so with 1/(2n)||Xw - y||^2
        // + lam ||w||_1 the solution is w_j = soft(X_j^T y / n, lam).
        let h = [
            1.0, 1.0, 1.0, 1.0, //
            1.0, -1.0, 1.0, -1.0, //
            1.0, 1.0, -1.0, -1.0, //
            1.0, -1.0, -1.0, 1.0,
        ];
        let x = DenseDesign::from_row_major(4, 4, &h).unwrap();
        let y = vec![3.0, 1.0, -0.5, 2.0];
        // X^T y = [5.5, -0.5, 2.5, 4.5], / 4 = [1.375, -0.125, 0.625, 1.125].
        let lam = 0.7;
        let hand = [1.375 - 0.7, 0.0, 0.0, 1.125 - 0.7];
        let d = Dataset::new(x, y).unwrap();
        let loss = Squared::half();
        let pen = L1::new(lam).unwrap();
        let obj = Objective::new(&d, &loss, &pen).unwrap();
        let sol = solve(&obj, &ReferenceOptions::default()).unwrap();
        for (j, (&a, &b)) in sol.w.iter().zip(&hand).enumerate() {
            assert!((a - b).abs() < 1e-12, "{j}: {a} vs {b}");
        }
        assert_eq!(sol.support_size(), 2);
        assert!(sol.certificate <= 1e-10 * sol.objective);
    }

    #[test]
    fn every_loss_penalty_pair_certifies() {
        let (n, p) = (30, 5);
        let (xs, y) = random_data(n, p, 3);
        let x = DenseDesign::from_row_major(n, p, &xs).unwrap();
        let yc: Vec<f64> = y
            .iter()
            .map(|&v| if v > 0.0 { 1.0 } else { -1.0 })
            .collect();
        let dr = Dataset::new(x.clone(), y).unwrap();
        let dc = Dataset::new(x, yc).unwrap();
        let l1 = L1::new(0.05).unwrap();
        let l2 = L2::new(0.1).unwrap();
        let en = ElasticNet::new(0.05, 0.1).unwrap();
        let bx = BoxConstraint::symmetric(p, 0.2).unwrap();
        macro_rules! run {
            ($d:expr, $loss:expr, $pen:expr, $kind:expr) => {{
                let loss = $loss;
                let obj = Objective::new($d, &loss, $pen).unwrap();
                let sol = solve(&obj, &ReferenceOptions::default()).unwrap();
                assert_eq!(sol.kind, $kind, "{} + {}", loss.name(), $pen.name());
                assert!(sol.relative_certificate <= 1e-10);
                // No coordinate move improves the objective.
                for j in 0..p {
                    for h in [1e-4, -1e-4] {
                        let mut w = sol.w.clone();
                        w[j] += h;
                        let f = obj.value(&w).unwrap();
                        assert!(
                            f >= sol.objective - 1e-12,
                            "{} + {}",
                            loss.name(),
                            $pen.name()
                        );
                    }
                }
                sol
            }};
        }
        run!(&dr, Squared::half(), &l1, CertificateKind::DualityGap);
        run!(&dr, Squared::full(), &en, CertificateKind::DualityGap);
        run!(
            &dr,
            crate::Huber::new(0.5).unwrap(),
            &l2,
            CertificateKind::DualityGap
        );
        run!(&dr, Squared::half(), &NoPenalty, CertificateKind::KktNorm);
        run!(&dr, Squared::half(), &bx, CertificateKind::KktNorm);
        run!(&dc, Logistic, &l1, CertificateKind::DualityGap);
        run!(&dc, Logistic, &l2, CertificateKind::DualityGap);
        run!(&dc, crate::SquaredHinge, &en, CertificateKind::DualityGap);
        run!(
            &dc,
            crate::SquaredHinge,
            &NoPenalty,
            CertificateKind::KktNorm
        );
    }

    #[test]
    fn anderson_changes_speed_not_the_answer() {
        let (n, p) = (60, 12);
        let (mut xs, y) = random_data(n, p, 21);
        // Strongly correlated, badly scaled columns make plain CD slow.
        for i in 0..n {
            let common = xs[i * p];
            for j in 1..p {
                xs[i * p + j] = (common + 0.05 * xs[i * p + j]) * (1.0 + 3.0 * j as f64);
            }
        }
        let x = DenseDesign::from_row_major(n, p, &xs).unwrap();
        let d = Dataset::new(x, y).unwrap();
        let loss = Squared::full();
        let pen = L1::new(0.001).unwrap();
        let obj = Objective::new(&d, &loss, &pen).unwrap();
        let plain = solve(
            &obj,
            &ReferenceOptions {
                anderson: 0,
                ..Default::default()
            },
        )
        .unwrap();
        let acc = solve(&obj, &ReferenceOptions::default()).unwrap();
        assert!(
            (plain.objective - acc.objective).abs() <= plain.certificate + acc.certificate,
            "{} vs {}",
            plain.objective,
            acc.objective
        );
        assert!(
            acc.iterations <= plain.iterations,
            "{} > {}",
            acc.iterations,
            plain.iterations
        );
        assert!(
            plain.iterations >= 50,
            "too easy: {} vs {}",
            plain.iterations,
            acc.iterations
        );
    }

    #[test]
    fn gap_bounds_suboptimality_at_any_point() {
        let (n, p) = (25, 4);
        let (xs, y) = random_data(n, p, 11);
        let x = DenseDesign::from_row_major(n, p, &xs).unwrap();
        let yc: Vec<f64> = y
            .iter()
            .map(|&v| if v > 0.0 { 1.0 } else { -1.0 })
            .collect();
        let d = Dataset::new(x, yc).unwrap();
        let pen = L1::new(0.02).unwrap();
        let obj = Objective::new(&d, &Logistic, &pen).unwrap();
        let star = solve(&obj, &ReferenceOptions::default()).unwrap();
        for w in [[0.0; 4], [1.0, -1.0, 0.5, 0.0], [3.0, 2.0, -2.0, 1.0]] {
            let mut z = vec![0.0; n];
            obj.predictor(&w, &mut z).unwrap();
            let (primal, gap) = duality_gap(&obj, &w, &z).unwrap();
            assert!(
                gap >= primal - star.objective - 1e-12,
                "{gap} < {}",
                primal - star.objective
            );
        }
    }

    #[test]
    fn rejects_bad_input() {
        let x = DenseDesign::from_row_major(2, 1, &[1.0, -1.0]).unwrap();
        let d = Dataset::new(x, vec![1.0, -1.0]).unwrap();
        let obj = Objective::new(&d, &Hinge, &NoPenalty).unwrap();
        assert!(solve(&obj, &ReferenceOptions::default()).is_err());
        let obj = Objective::new(&d, &Logistic, &NoPenalty).unwrap();
        // Separable data without a penalty has no minimiser: the solver must give up.
        let e = solve(
            &obj,
            &ReferenceOptions {
                max_passes: 50,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(e, ModelError::NotConverged(_)), "{e}");
        let o = ReferenceOptions {
            w0: Some(vec![f64::NAN]),
            ..Default::default()
        };
        assert!(solve(&obj, &o).is_err());
        let o = ReferenceOptions {
            tol: 0.0,
            ..Default::default()
        };
        assert!(solve(&obj, &o).is_err());
    }
}
