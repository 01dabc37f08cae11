//! The released model: prediction in the user's units, and the non-private held-out
//! scores of the pipeline's diagnostics.

use super::*;

/// Non-private held-out scores with their baselines.
pub(super) fn score<D: Design>(
    model: &PipelineModel,
    train: &Dataset<D>,
    test: &Dataset<D>,
) -> Result<Vec<(String, f64)>> {
    let z = model.decision_function(test.x())?;
    let y = test.y();
    let mut out = Vec::new();
    match model.task {
        Task::Classification => {
            let labels: Vec<f64> = z
                .iter()
                .map(|&v| if v >= 0.0 { 1.0 } else { -1.0 })
                .collect();
            out.push(("accuracy".into(), accuracy(y, &labels)?));
            if model.loss == LossKind::Logistic {
                let p: Vec<f64> = z.iter().map(|&v| dp_models::loss::sigmoid(v)).collect();
                out.push(("log_loss".into(), log_loss(y, &p)?));
            }
            let pos = train.y().iter().filter(|&&v| v > 0.0).count();
            let maj = if 2 * pos >= train.n_samples() {
                1.0
            } else {
                -1.0
            };
            let base: Vec<f64> = vec![maj; y.len()];
            out.push(("majority_accuracy".into(), accuracy(y, &base)?));
        }
        Task::Regression => {
            out.push(("mse".into(), mean_squared_error(y, &z)?));
            let m = train.y().iter().sum::<f64>() / train.n_samples() as f64;
            out.push(("mean_mse".into(), mean_squared_error(y, &vec![m; y.len()])?));
        }
    }
    Ok(out)
}

impl PipelineModel {
    /// `sum_j w_j clip(x_j, b_j) + intercept` for every raw row of `x` (a regression's
    /// prediction in the user's units; a classifier's margin).
    pub fn decision_function<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        let p = self.coefficients.len();
        if x.n_features() != p {
            return Err(PipelineError::Model(dp_models::ModelError::Shape(format!(
                "the model has {p} features but the data has {}",
                x.n_features()
            ))));
        }
        let mut z = vec![self.intercept.unwrap_or(0.0); x.n_samples()];
        if x.nnz() < x.n_samples() * p && self.max_nonzeros.is_none() {
            return self.sparse_decision(x, z);
        }
        let mut row = vec![0.0; p];
        let mut order: Vec<usize> = Vec::with_capacity(p);
        for (i, zi) in z.iter_mut().enumerate() {
            row.iter_mut().for_each(|v| *v = 0.0);
            x.for_each_in_row(i, |j, v| row[j] = v);
            if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                return Err(PipelineError::Model(dp_models::ModelError::NonFinite {
                    what: "design",
                    location: format!("row {i}, column {j}"),
                    value: row[j],
                }));
            }
            if self.normalize_rows {
                // As in the fit (dp_models::preprocess::normalize_rows).
                let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
                let s = if norm > 0.0 { 1.0 / norm } else { 1.0 };
                row.iter_mut().for_each(|v| *v *= s);
            }
            for (v, &(lo, hi)) in row.iter_mut().zip(&self.feature_ranges) {
                *v = v.clamp(lo, hi);
            }
            if let Some(k) = self.max_nonzeros {
                self.project_row(&mut row, k, &mut order);
            }
            for (&v, &w) in row.iter().zip(&self.coefficients) {
                *zi += w * v;
            }
        }
        Ok(z)
    }

    /// The fit's support projection of one clipped row: with more than `k` non-zero
    /// scaled values `v_j / s_j` (`s_j = max(|lo_j|, |hi_j|)`, the uncentred scale a
    /// support bound uses), all but the `k` largest in magnitude (ties: the lower
    /// feature index) are set to 0, as `RowSupport::project` did to the training rows.
    fn project_row(&self, row: &mut [f64], k: usize, order: &mut Vec<usize>) {
        let scaled = |j: usize| {
            let (lo, hi) = self.feature_ranges[j];
            (row[j] - 0.0) / lo.abs().max(hi.abs())
        };
        order.clear();
        order.extend((0..row.len()).filter(|&j| scaled(j) != 0.0));
        if order.len() <= k {
            return;
        }
        order.sort_by(|&a, &b| scaled(b).abs().total_cmp(&scaled(a).abs()).then(a.cmp(&b)));
        for &j in &order[k..] {
            row[j] = 0.0;
        }
    }
    /// [`PipelineModel::decision_function`] on a design that does not store every
    /// value: a pass over the stored entries of each row only (no dense row of `p`).
    /// An absent value is 0, clipped to `clamp(0, lo_j, hi_j)`; their part of every
    /// row's sum is one constant, and each stored entry adds its difference from it.
    /// When every range holds 0 (a model fitted on sparse data) the constant is 0 and
    /// the sum is the dense one, term for term.
    fn sparse_decision<D: Design>(&self, x: &D, mut z: Vec<f64>) -> Result<Vec<f64>> {
        let zero: Vec<f64> = self
            .feature_ranges
            .iter()
            .map(|&(lo, hi)| 0.0f64.clamp(lo, hi))
            .collect();
        let base: f64 = zero
            .iter()
            .zip(&self.coefficients)
            .map(|(c, w)| w * c)
            .sum();
        for (i, zi) in z.iter_mut().enumerate() {
            let mut bad = None;
            let mut sq = 0.0;
            x.for_each_in_row(i, |j, v| {
                if !v.is_finite() && bad.is_none() {
                    bad = Some((j, v));
                }
                sq += v * v;
            });
            if let Some((j, v)) = bad {
                return Err(PipelineError::Model(dp_models::ModelError::NonFinite {
                    what: "design",
                    location: format!("row {i}, column {j}"),
                    value: v,
                }));
            }
            // As in the fit (dp_models::preprocess::normalize_rows).
            let s = if self.normalize_rows && sq > 0.0 {
                1.0 / sq.sqrt()
            } else {
                1.0
            };
            let mut acc = *zi + base;
            x.for_each_in_row(i, |j, v| {
                let (lo, hi) = self.feature_ranges[j];
                let v = if self.normalize_rows { v * s } else { v };
                acc += self.coefficients[j] * (v.clamp(lo, hi) - zero[j]);
            });
            *zi = acc;
        }
        Ok(z)
    }
    /// Predicted labels `{-1, +1}` (classification) or values (regression).
    pub fn predict<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        let z = self.decision_function(x)?;
        Ok(match self.task {
            Task::Classification => z
                .into_iter()
                .map(|v| if v >= 0.0 { 1.0 } else { -1.0 })
                .collect(),
            Task::Regression => z,
        })
    }
    /// `P(y = +1 | x)` of a logistic model; an error for other losses.
    pub fn predict_proba<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        if self.loss != LossKind::Logistic {
            return Err(PipelineError::Unsupported(format!(
                "probabilities need a logistic model; this one was fitted with {}",
                self.loss
            )));
        }
        Ok(self
            .decision_function(x)?
            .into_iter()
            .map(dp_models::loss::sigmoid)
            .collect())
    }
}
