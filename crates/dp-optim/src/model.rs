//! What a fit returns: the releasable [`LinearModel`] and the non-private
//! [`Diagnostics`], kept apart so that publishing the model can never publish what lets
//! a reader replay the noise.

use crate::error::{OptimError, Result};
use crate::plan::PrivacyReport;
use crate::privacy::Guarantee;
use dp_models::{Dataset, Design};
use serde::{Deserialize, Serialize};

/// The releasable result of a fit: coefficients, the plan, the ledger and the guarantee.
///
/// # Privacy
/// For a private solver, everything here is a post-processing of the fit's charged
/// releases and of public inputs (the stated `(epsilon, delta)`, the hyperparameters,
/// `n` where the relation makes it public, and the constants with their provenance), so
/// publishing it is covered by [`PrivacyReport::guarantee`] — unless
/// [`PrivacyReport::uses_non_private_constants`] is true (the caller opted in to
/// constants computed from the data without privacy, which the plan then reveals).
///
/// It never contains the seed or any generator state: those are in [`Diagnostics`],
/// which must not be published (whoever holds the seed can replay the noise and
/// subtract it).
///
/// It serialises with serde (e.g. `serde_json::to_string(&fit.model)`) and loads back
/// with the same type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearModel {
    /// Solver name ("dp-cd", "dp-cd-p", "cd", "dp-sgd", "sgd", "dp-gcd", ...).
    pub algorithm: String,
    /// The returned coefficients `w` (length `p`); the prediction for a row `x` is
    /// `x^T w`.
    pub coefficients: Vec<f64>,
    /// The intercept `b` (prediction `x^T w + b`), when the model was fitted with a
    /// constant column ([`with_intercept_column`] and [`LinearModel::split_intercept`]).
    #[serde(default)]
    pub intercept: Option<f64>,
    /// Number of updates performed (coordinate updates for CD methods, stochastic steps
    /// for SGD, iterations for greedy CD).
    pub iterations: u64,
    /// Plan, ledger and achieved guarantee; `None` for non-private solvers.
    pub privacy: Option<PrivacyReport>,
}

impl LinearModel {
    /// The guarantee of the fit, `None` for a non-private solver.
    pub fn guarantee(&self) -> Option<&Guarantee> {
        self.privacy.as_ref().map(|p| &p.guarantee)
    }

    /// Number of features the model expects.
    pub fn n_features(&self) -> usize {
        self.coefficients.len()
    }

    /// `x_i^T w + b` for every row of `x` (the decision function; a regression's
    /// prediction).
    pub fn decision_function<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        if x.n_features() != self.coefficients.len() {
            return Err(OptimError::Shape(format!(
                "the model has {} coefficients but the data has {} features",
                self.coefficients.len(),
                x.n_features()
            )));
        }
        let mut z = vec![0.0; x.n_samples()];
        x.matvec(&self.coefficients, &mut z);
        if let Some(b) = self.intercept {
            z.iter_mut().for_each(|v| *v += b);
        }
        Ok(z)
    }

    /// Labels in {-1, +1}: the sign of the decision function (+1 at 0).
    pub fn predict_labels<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        Ok(self
            .decision_function(x)?
            .into_iter()
            .map(|z| if z >= 0.0 { 1.0 } else { -1.0 })
            .collect())
    }

    /// `P(y = +1 | x) = 1 / (1 + exp(-x^T w))`, meaningful for a logistic model.
    pub fn predict_proba<D: Design>(&self, x: &D) -> Result<Vec<f64>> {
        Ok(self
            .decision_function(x)?
            .into_iter()
            .map(|z| {
                if z >= 0.0 {
                    1.0 / (1.0 + (-z).exp())
                } else {
                    let e = z.exp();
                    e / (1.0 + e)
                }
            })
            .collect())
    }

    /// Fraction of rows whose predicted label (sign) equals the label in {-1, +1}.
    pub fn accuracy<D: Design>(&self, data: &Dataset<D>) -> Result<f64> {
        let pred = self.predict_labels(data.x())?;
        Ok(dp_models::metrics::accuracy(data.y(), &pred)?)
    }

    /// Mean squared error `(1/n) sum (x_i^T w - y_i)^2`.
    pub fn mean_squared_error<D: Design>(&self, data: &Dataset<D>) -> Result<f64> {
        let z = self.decision_function(data.x())?;
        Ok(dp_models::metrics::mean_squared_error(data.y(), &z)?)
    }
}

/// Quantities computed from the private data **without privacy protection**, and the
/// seed when one was given.
///
/// They are for the analyst running experiments (objective value for error curves,
/// time, how often a step was zero). Releasing them is not covered by the fit's privacy
/// guarantee. In particular `seed` lets anyone replay the fit's noise: never publish it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// `F(w)` at the returned coefficients.
    pub objective: f64,
    /// Number of updates that left the iterate unchanged (e.g. soft-thresholded at 0).
    pub zero_steps: u64,
    /// Wall-clock seconds of the fit (validation, planning and loop; objective excluded).
    pub seconds: f64,
    /// `F(w^t)` after every iteration, when the solver was asked to record it.
    pub objective_trajectory: Vec<f64>,
    /// The coordinate selected at each iteration (greedy methods).
    pub selected: Vec<usize>,
    /// The duality gap `P(w) - D(alpha)` at the returned coefficients, an upper bound on
    /// `F(w) - F*` (dual methods: SDCA).
    #[serde(default)]
    pub duality_gap: Option<f64>,
    /// The duality gap after every pass, when the solver was asked to record it.
    #[serde(default)]
    pub duality_gap_trajectory: Vec<f64>,
    /// The seed of [`Solver::fit_seeded`](crate::Solver::fit_seeded); `None` for fits
    /// drawing from OS entropy or a caller's generator. **Secret**: with it, the noise
    /// can be replayed.
    pub seed: Option<u64>,
    /// DP-CD with a declared row-support bound ([`DpCdParams::row_support`](crate::DpCdParams::row_support)):
    /// how many records had more non-zeros than the bound allows and were projected
    /// onto it before the fit ([`RowSupport::project`](crate::RowSupport::project));
    /// `None` without a bound. Computed from the data without privacy.
    #[serde(default)]
    pub support_projected: Option<usize>,
    /// What the user should know about this fit ([`FitWarning`]). Unlike the rest of
    /// this struct, every warning is computed from public inputs and released values
    /// only (post-processing), so showing it costs no privacy.
    #[serde(default)]
    pub warnings: Vec<FitWarning>,
}

/// A typed warning about a fit, for front ends to show (the library never prints).
/// Each is a function of public inputs and released values only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FitWarning {
    /// `floored` of the `of` privately estimated smoothness constants `M_j` were
    /// indistinguishable from 0 under the release's noise and were raised to its noise
    /// level (`dp_models::constants::noise_floor`): their steps `1 / M_j` are as long
    /// as the noise can justify, and those coordinates may move little.
    SmoothnessFloored {
        /// Estimates raised to the floor.
        floored: usize,
        /// Estimates released.
        of: usize,
    },
    /// The budget is too small for the data: the no-tuning rule wanted `wanted` passes,
    /// fewer than the minimum `used` it runs, so the noise dominates the updates and the
    /// model may be no better than a constant prediction. Raise epsilon, gather more
    /// rows, or use fewer features.
    BudgetTooSmall {
        /// The rule's unclamped passes.
        wanted: f64,
        /// The passes the fit uses.
        used: u64,
    },
    /// The released model predicts the same class for every row inside the declared
    /// bounds (`|intercept| > max over the bounds of |x^T w|`): a constant classifier,
    /// typically the noise at a small budget (see [`FitWarning::BudgetTooSmall`]).
    ConstantPrediction {
        /// The intercept.
        intercept: f64,
        /// `max |x^T w|` over rows within the declared bounds.
        largest_swing: f64,
    },
    /// Ranges estimated privately before the fit (by a front end's pipeline, e.g.
    /// `dp_erm::Pipeline`) from releases that each had too little epsilon for the rows:
    /// the exponential mechanism's margin `eps n / 4` is below `needed = ln K + 3` for
    /// `K` candidates, so the ranges may be off by orders of magnitude and the model with
    /// them. A function of epsilon, `n` and the public grid only.
    UnreliableRanges {
        /// What the ranges bound: "feature" or "target".
        of: String,
        /// Epsilon of each release.
        epsilon: f64,
        /// Rows the releases were computed on.
        rows: usize,
        /// `epsilon * rows / 4`.
        margin: f64,
        /// The margin a reliable release needs.
        needed: f64,
    },
}

impl std::fmt::Display for FitWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitWarning::SmoothnessFloored { floored, of } => write!(
                f,
                "{floored} of {of} private smoothness estimates M_j were indistinguishable \
                 from 0 under their noise and were raised to the noise level (their steps \
                 are as long as the noise justifies; those coordinates may move little)"
            ),
            FitWarning::BudgetTooSmall { wanted, used } => write!(
                f,
                "the privacy budget is too small for this data: the no-tuning rule wanted \
                 {wanted:.2} passes and the fit runs the minimum {used}; the noise \
                 dominates and the model may be no better than a constant prediction \
                 (raise epsilon, use more rows or fewer features)"
            ),
            FitWarning::UnreliableRanges {
                of,
                epsilon,
                rows,
                margin,
                needed,
            } => write!(
                f,
                "the private {of} ranges may be far off (orders of magnitude), and the \
                 model with them: each release had epsilon {epsilon:.3} on {rows} rows \
                 (eps n / 4 = {margin:.1} < {needed:.1}); declare the {of} bounds, raise \
                 epsilon, or use more rows"
            ),
            FitWarning::ConstantPrediction {
                intercept,
                largest_swing,
            } => write!(
                f,
                "the model predicts one class for every row within the declared bounds \
                 (|intercept| = {:.4} > {:.4}, the largest |x^T w| there): a constant \
                 classifier",
                intercept.abs(),
                largest_swing
            ),
        }
    }
}

/// What every solver returns: the model to release, and what must stay with the analyst.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The releasable model.
    pub model: LinearModel,
    /// Non-private diagnostics (never publish).
    pub diagnostics: Diagnostics,
}

impl Fitted {
    /// The coefficients of the model.
    pub fn coefficients(&self) -> &[f64] {
        &self.model.coefficients
    }
    /// The guarantee of the fit, `None` for a non-private solver.
    pub fn guarantee(&self) -> Option<&Guarantee> {
        self.model.guarantee()
    }
    /// The privacy report, `None` for a non-private solver.
    pub fn privacy(&self) -> Option<&PrivacyReport> {
        self.model.privacy.as_ref()
    }
}

/// Designs that can grow a constant column: how an intercept is fitted.
///
/// # Privacy
/// The intercept is the coefficient of a column whose every entry is the same public
/// constant. It is fitted by the same private solver as the other coefficients, as one
/// more coordinate: DP-CD and DP-GCD clip its per-sample gradients at their threshold
/// `C_j` and release it with the same Gaussian (or Laplace) mechanism, DP-SGD includes it
/// in the per-example L2 clip. Its releases are part of the plan's count and charged
/// with the rest, so the guarantee covers it with nothing extra to charge. Its
/// smoothness constant is `c * value^2`, a public bound.
pub trait AppendConstantColumn: Design + Sized {
    /// A copy of the design with one more column, every entry equal to `value`.
    fn with_constant_column(&self, value: f64) -> Result<Self>;
}

impl AppendConstantColumn for dp_models::DenseDesign {
    fn with_constant_column(&self, value: f64) -> Result<Self> {
        let (n, p) = (self.n_samples(), self.n_features());
        let mut data = Vec::with_capacity(n * (p + 1));
        for j in 0..p {
            data.extend_from_slice(self.col(j));
        }
        data.extend(std::iter::repeat_n(value, n));
        // Taken by value, the row-major copy deferred to the first row access: a
        // coordinate solver never builds it.
        Ok(dp_models::DenseDesign::from_col_major_deferred_rows(
            n,
            p + 1,
            data,
        )?)
    }
}

impl AppendConstantColumn for dp_models::SparseDesign {
    fn with_constant_column(&self, value: f64) -> Result<Self> {
        let (n, p) = (self.n_samples(), self.n_features());
        let mut t = Vec::with_capacity(self.nnz() + n);
        for j in 0..p {
            self.for_each_in_col(j, |i, v| t.push((i, j, v)));
        }
        t.extend((0..n).map(|i| (i, p, value)));
        Ok(dp_models::SparseDesign::from_triplets(n, p + 1, &t)?)
    }
}

/// `data` with a constant column of ones appended (see [`AppendConstantColumn`]); fit on
/// it, then call [`LinearModel::split_intercept`].
pub fn with_intercept_column<D: AppendConstantColumn>(data: &Dataset<D>) -> Result<Dataset<D>> {
    Ok(Dataset::new(
        data.x().with_constant_column(1.0)?,
        data.y().to_vec(),
    )?)
}

impl LinearModel {
    /// Moves the last coefficient (fitted on the constant column of
    /// [`with_intercept_column`]) into [`LinearModel::intercept`]. Post-processing: no
    /// privacy cost.
    pub fn split_intercept(mut self) -> Result<Self> {
        if self.intercept.is_some() {
            return Err(OptimError::Unsupported(
                "the model already has an intercept".into(),
            ));
        }
        let b = self.coefficients.pop().ok_or_else(|| {
            OptimError::Shape("a model without coefficients has no intercept column".into())
        })?;
        self.intercept = Some(b);
        Ok(self)
    }
}
