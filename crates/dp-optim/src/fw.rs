//! Frank-Wolfe (conditional gradient) for smooth ERM over a compact convex set
//! (Jaggi 2013, "Revisiting Frank-Wolfe: projection-free sparse convex optimization"),
//! the non-private sanity floor of the private Frank-Wolfe solvers.
//!
//! From `w_0 = ` the set's initial point (zero for l1 balls), each iteration computes the
//! full gradient `g = (1/n) X^T phi'(X w, y)`, calls the linear minimisation oracle
//! `s = argmin_{s in C} <g, s>` and moves `w <- (1 - gamma_t) w + gamma_t s` with
//! * [`FwStep::Standard`]: `gamma_t = 2 / (t + 2)`, `t = 0, 1, ...` (Jaggi 2013), the
//!   schedule of the private version, or
//! * [`FwStep::LineSearch`]: the short step `min(1, gap / (c/n ||X (s - w)||^2))`, exact
//!   line search for the squared loss.
//!
//! The diagnostics carry the Frank-Wolfe duality gap at the returned point (an upper
//! bound on `F(w) - min_C F`).

use crate::error::{invalid, OptimError, Result};
use crate::model::{Diagnostics, Fitted, LinearModel};
use crate::solver::{check_finite, Solver};
use dp_models::constraint::{average_loss, average_loss_gradient, ConstraintSet};
use dp_models::{Dataset, Design, Loss};
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// The Frank-Wolfe step size rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum FwStep {
    /// `gamma_t = 2 / (t + 2)`.
    #[default]
    Standard,
    /// Short step (exact line search for the squared loss).
    LineSearch,
}

/// Builder of non-private Frank-Wolfe.
#[derive(Debug, Clone)]
pub struct FwParams<L, C> {
    loss: L,
    set: C,
    iterations: u64,
    step: FwStep,
    record_trajectory: bool,
}

impl<L: Loss, C: ConstraintSet> FwParams<L, C> {
    /// Frank-Wolfe for `loss` over `set`; defaults: 100 iterations, standard step.
    pub fn new(loss: L, set: C) -> Self {
        Self {
            loss,
            set,
            iterations: 100,
            step: FwStep::Standard,
            record_trajectory: false,
        }
    }
    /// Iterations `T >= 1`.
    pub fn iterations(mut self, t: u64) -> Self {
        self.iterations = t;
        self
    }
    /// Step rule.
    pub fn step(mut self, step: FwStep) -> Self {
        self.step = step;
        self
    }
    /// Records `F(w_t)` after every iteration.
    pub fn record_trajectory(mut self, record: bool) -> Self {
        self.record_trajectory = record;
        self
    }
    /// Checks the parameters.
    pub fn build(self) -> Result<Fw<L, C>> {
        if self.iterations == 0 {
            return Err(invalid("iterations", 0.0, "Frank-Wolfe needs T >= 1"));
        }
        if self.loss.curvature_bound().is_none() {
            return Err(OptimError::Unsupported(format!(
                "Frank-Wolfe needs a smooth loss; {} is not smooth",
                self.loss.name()
            )));
        }
        Ok(Fw { params: self })
    }
}

/// Frank-Wolfe with checked parameters.
#[derive(Debug, Clone)]
pub struct Fw<L, C> {
    params: FwParams<L, C>,
}

/// `2 / (t + 2)`.
pub(crate) fn standard_step(t: u64) -> f64 {
    2.0 / (t as f64 + 2.0)
}

/// Checks the design and labels are finite and the shapes agree with `dim`.
pub(crate) fn check_data<D: Design>(data: &Dataset<D>, dim: usize) -> Result<()> {
    let x = data.x();
    if x.n_features() != dim {
        return Err(OptimError::Shape(format!(
            "the constraint set has dimension {dim} but the data has {} features",
            x.n_features()
        )));
    }
    for j in 0..x.n_features() {
        let mut bad = None;
        x.for_each_in_col(j, |i, v| {
            if !v.is_finite() && bad.is_none() {
                bad = Some((i, v));
            }
        });
        if let Some((i, v)) = bad {
            return Err(OptimError::Model(dp_models::ModelError::NonFinite {
                what: "design",
                location: format!("row {i}, column {j}"),
                value: v,
            }));
        }
    }
    Ok(())
}

impl<D: Design, L: Loss, C: ConstraintSet> Solver<D> for Fw<L, C> {
    fn fit_with_rng(&self, data: &Dataset<D>, _rng: &mut dyn RngCore) -> Result<Fitted> {
        let start = std::time::Instant::now();
        let prm = &self.params;
        let (x, y) = (data.x(), data.y());
        let (n, p) = (x.n_samples(), x.n_features());
        check_data(data, prm.set.dim())?;
        data.check_labels_for(&prm.loss)?;
        let c = prm.loss.curvature_bound().unwrap_or(0.0);
        let mut w = prm.set.initial_point();
        let mut z = vec![0.0; n];
        x.matvec(&w, &mut z);
        let (mut deriv, mut grad, mut xd) = (vec![0.0; n], vec![0.0; p], vec![0.0; n]);
        let mut trajectory = Vec::new();
        for t in 0..prm.iterations {
            average_loss_gradient(x, &prm.loss, &z, y, &mut deriv, &mut grad);
            let s = prm.set.lmo(&grad).to_dense(p);
            let gamma = match prm.step {
                FwStep::Standard => standard_step(t),
                FwStep::LineSearch => {
                    let gap = prm.set.gap(&grad, &w);
                    x.matvec(&s, &mut xd);
                    xd.iter_mut().zip(&z).for_each(|(a, b)| *a -= b);
                    let curv = c * xd.iter().map(|v| v * v).sum::<f64>() / n as f64;
                    if curv > 0.0 {
                        (gap / curv).clamp(0.0, 1.0)
                    } else {
                        1.0
                    }
                }
            };
            fw_update(&mut w, &s, gamma);
            x.matvec(&w, &mut z);
            if prm.record_trajectory {
                trajectory.push(average_loss(&prm.loss, &z, y));
            }
        }
        check_finite("Frank-Wolfe", &w, "check the data and the constraint set")?;
        average_loss_gradient(x, &prm.loss, &z, y, &mut deriv, &mut grad);
        let gap = prm.set.gap(&grad, &w);
        Ok(Fitted {
            model: LinearModel {
                algorithm: "fw".into(),
                coefficients: w,
                intercept: None,
                iterations: prm.iterations,
                privacy: None,
            },
            diagnostics: Diagnostics {
                objective: average_loss(&prm.loss, &z, y),
                seconds: start.elapsed().as_secs_f64(),
                objective_trajectory: trajectory,
                duality_gap: Some(gap),
                ..Diagnostics::default()
            },
        })
    }
}

/// `w <- (1 - gamma) w + gamma s`.
pub(crate) fn fw_update(w: &mut [f64], s: &[f64], gamma: f64) {
    for (wj, sj) in w.iter_mut().zip(s) {
        *wj = (1.0 - gamma) * *wj + gamma * sj;
    }
}
