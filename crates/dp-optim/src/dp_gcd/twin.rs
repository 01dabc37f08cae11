//! The non-private twin of DP-GCD: (proximal) greedy coordinate descent with the same
//! selection rules, exact gradients and no clipping. Written as plainly as possible; it
//! is the reference that DP-GCD with noise and clipping off must equal bit for bit.

use super::rules::{score, SelectionRule};
use crate::error::{OptimError, Result};
use dp_models::constants::coordinate_smoothness;
use dp_models::{Dataset, Design, Loss, Penalty};

/// Result of [`greedy_cd`].
#[derive(Debug, Clone, PartialEq)]
pub struct GreedyCdResult {
    /// The last iterate.
    pub coefficients: Vec<f64>,
    /// The coordinate chosen at each iteration.
    pub selected: Vec<usize>,
    /// `F(w^t)` for `t = 0..=T`.
    pub objective_trajectory: Vec<f64>,
}

/// Non-private greedy coordinate descent from `w = 0` for `iterations` steps on
/// `(1/n) sum_i loss(x_i^T w, y_i) + (ridge/2)||w||^2 + psi(w)`: each step picks
/// `argmax_j rule(grad_j)` (lowest index on ties) and sets
/// `w_j <- prox_{gamma_j psi_j}(w_j - gamma_j grad_j)` with `gamma_j = step / M_j`,
/// `M_j = (c/n)||X_{:,j}||^2 + ridge`.
///
/// Not private: it reads the data freely.
#[allow(clippy::too_many_arguments)]
pub fn greedy_cd<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized>(
    data: &Dataset<D>,
    loss: &L,
    penalty: &P,
    ridge: f64,
    rule: SelectionRule,
    step: f64,
    iterations: u64,
) -> Result<GreedyCdResult> {
    data.check_labels_for(loss)?;
    penalty.check_dimension(data.n_features())?;
    let x = data.x();
    let y = data.y();
    let (n, p) = (x.n_samples(), x.n_features());
    let m: Vec<f64> = coordinate_smoothness(loss, x)?
        .value
        .into_iter()
        .map(|v| v + ridge)
        .collect();
    if let Some(j) = m.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(OptimError::Unsupported(format!(
            "coordinate smoothness M_{j} = {} must be finite and > 0",
            m[j]
        )));
    }
    let inv_n = 1.0 / n as f64;
    let mut w = vec![0.0; p];
    let mut z = vec![0.0; n];
    let mut d = vec![0.0; n];
    let mut scores = vec![0.0; p];
    let mut grad = vec![0.0; p];
    let mut selected = Vec::new();
    let mut traj = vec![super::objective_value(loss, penalty, ridge, y, &z, &w)];
    for _ in 0..iterations {
        for i in 0..n {
            d[i] = loss.derivative(z[i], y[i]);
        }
        for j in 0..p {
            let mut g = x.col_dot(j, &d) * inv_n;
            if ridge > 0.0 {
                g += ridge * w[j];
            }
            grad[j] = g;
            scores[j] = score(rule, penalty, j, g, w[j], m[j], m[j].sqrt());
        }
        let j = super::argmax(&scores);
        let gamma = step / m[j];
        let new = penalty.prox_1d(j, w[j] - gamma * grad[j], gamma);
        let delta = new - w[j];
        if delta != 0.0 {
            x.col_axpy(j, delta, &mut z);
        }
        w[j] = new;
        selected.push(j);
        traj.push(super::objective_value(loss, penalty, ridge, y, &z, &w));
    }
    Ok(GreedyCdResult {
        coefficients: w,
        selected,
        objective_trajectory: traj,
    })
}
