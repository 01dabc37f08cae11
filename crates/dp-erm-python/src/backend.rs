//! The one place where the Python estimators meet the library: public bounds -> the
//! scaled design (bounds folded into the model) -> a private solver -> the released
//! model in the user's units, with its guarantee.
//!
//! Pure Rust (no PyO3): the bindings in `lib.rs` only convert arrays and errors, and the
//! Rust tests call [`fit`] directly, so a fit through Python and the same seeded fit in
//! Rust are the same computation (`tests/seeded_fit.rs` and the Python test
//! `test_rust_parity.py` check it bit for bit).
//!
//! # Privacy
//! *Neighbouring relation:* the solver's (replace-one for every algorithm offered here:
//! `n` and `p` are then public, as are the bounds, the labels' two classes and the
//! hyperparameters, all given by the caller).
//!
//! *Preprocessing:* every feature is mapped by a fixed affine map computed from the
//! caller's **public** bounds only (dense data: `x' = (x - mid_j) / half_j` with
//! `mid_j = (lo_j + hi_j) / 2`, `half_j = (hi_j - lo_j) / 2`; sparse data: `x' = x / s_j`,
//! `s_j = max(|lo_j|, |hi_j|)`, which keeps zeros), then clipped to `[-1, 1]`. A map
//! applied record by record with public constants does not change the neighbouring
//! relation, so the solver's guarantee holds for the original records. Regression
//! targets are mapped to `[-1, 1]` by `bounds_y` the same way. Nothing here reads the data
//! to choose a constant: the smoothness constants follow from `|x'| <= 1` (public) or are
//! estimated privately and charged (DP-CD's defaults, [`dp_optim::auto`]).
//!
//! *Post-processing:* the coefficients are mapped back to the user's units by the
//! inverse of the same public map ([`Scaling::unscale`]), which costs nothing.
#![forbid(unsafe_code)]

use dp_models::dual::DualLoss;
use dp_models::{
    Dataset, DenseDesign, ElasticNet, Logistic, Loss, NoPenalty, Penalty, SparseDesign, Squared,
    SquaredHinge, L1, L2,
};
use dp_optim::auto::PublicBounds;
use dp_optim::dp_gcd::{DpGcdParams, SelectionRule, Variant};
use dp_optim::kernel::ColumnKernels;
use dp_optim::{
    DpCdParams, DpScdParams, DpSgdParams, Fitted, GlobalSmoothness, LinearModel, Smoothness, Solver,
};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// Errors of the backend: a message naming the problem (Python raises `ValueError`).
#[derive(Debug, Clone, PartialEq)]
pub struct BackendError(pub String);

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BackendError {}

impl From<dp_optim::OptimError> for BackendError {
    fn from(e: dp_optim::OptimError) -> Self {
        Self(e.to_string())
    }
}

impl From<dp_models::ModelError> for BackendError {
    fn from(e: dp_models::ModelError) -> Self {
        Self(e.to_string())
    }
}

/// `Result` with [`BackendError`].
pub type Result<T> = std::result::Result<T, BackendError>;

fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(BackendError(msg.into()))
}

/// The loss of an estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossName {
    /// `log(1 + exp(-y z))` (DPLogisticRegression).
    Logistic,
    /// `max(0, 1 - y z)^2` (DPLinearSVC).
    SquaredHinge,
    /// `(z - y)^2 / 2` (the regressors).
    Squared,
}

/// The penalty of an estimator (the intercept is never penalised, except by DP-SCD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PenaltyName {
    /// No penalty.
    None,
    /// `alpha ||w||_1`.
    L1,
    /// `(alpha / 2) ||w||_2^2`.
    L2,
    /// `alpha (l1_ratio ||w||_1 + (1 - l1_ratio) / 2 ||w||_2^2)`.
    Elasticnet,
}

/// The private algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// Private coordinate descent (default; hyperparameters by `dp_optim::auto`).
    #[serde(rename = "dp-cd")]
    DpCd,
    /// Private greedy coordinate descent (zCDP variant).
    #[serde(rename = "dp-gcd")]
    DpGcd,
    /// Proximal DP-SGD.
    #[serde(rename = "dp-sgd")]
    DpSgd,
    /// Private stochastic dual coordinate ascent (L2 penalty, squared or logistic loss).
    #[serde(rename = "dp-scd")]
    DpScd,
}

/// Everything a fit needs besides the data: what the estimator's parameters say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitSpec {
    /// Loss.
    pub loss: LossName,
    /// Penalty.
    pub penalty: PenaltyName,
    /// Penalty strength on the scaled problem (features and target in `[-1, 1]`).
    pub alpha: f64,
    /// Elastic-net mixing (`1` = LASSO).
    #[serde(default = "half")]
    pub l1_ratio: f64,
    /// Algorithm.
    pub algorithm: Algorithm,
    /// Target epsilon.
    pub epsilon: f64,
    /// Target delta.
    pub delta: f64,
    /// Fit an intercept (a constant column, unpenalised).
    pub fit_intercept: bool,
    /// Public lower bound of every feature.
    pub lower: Vec<f64>,
    /// Public upper bound of every feature.
    pub upper: Vec<f64>,
    /// Public bounds of the regression target.
    #[serde(default)]
    pub y_bounds: Option<(f64, f64)>,
    /// Passes over the data (`None`: the algorithm's default).
    #[serde(default)]
    pub passes: Option<u64>,
    /// Step scale (`None`: the algorithm's default).
    #[serde(default)]
    pub step_scale: Option<f64>,
    /// Clipping threshold (`None`: the algorithm's default).
    #[serde(default)]
    pub clip: Option<f64>,
    /// Mini-batch size (DP-SGD, DP-SCD).
    #[serde(default)]
    pub batch_size: Option<u64>,
}

fn half() -> f64 {
    0.5
}

/// The feature data as Python hands it over, borrowed (no copy before the scaling).
#[derive(Debug, Clone, Copy)]
pub enum Features<'a> {
    /// `n x p` dense values, row-major (C order) or column-major (Fortran order).
    Dense {
        /// The values.
        values: &'a [f64],
        /// Rows.
        n: usize,
        /// Columns.
        p: usize,
        /// C order (`true`) or Fortran order (`false`).
        row_major: bool,
    },
    /// Compressed sparse columns (scipy's `csc_matrix` buffers).
    SparseCsc {
        /// Non-zero values.
        data: &'a [f64],
        /// Row index of each value.
        indices: &'a [i64],
        /// Column `j`'s values are `indptr[j]..indptr[j + 1]`.
        indptr: &'a [i64],
        /// Rows.
        n: usize,
        /// Columns.
        p: usize,
    },
}

impl Features<'_> {
    fn shape(&self) -> (usize, usize) {
        match *self {
            Features::Dense { n, p, .. } | Features::SparseCsc { n, p, .. } => (n, p),
        }
    }
}

/// The public affine map of every feature (and of the target): `x' = (x - shift) / scale`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    /// Per-feature shift (`mid_j` for dense data, 0 for sparse data).
    pub shift: Vec<f64>,
    /// Per-feature scale (`half_j` or `s_j`; 0 for a column whose bounds are equal: it is
    /// constant, carries no information, and its coefficient is 0).
    pub scale: Vec<f64>,
    /// The target's `(shift, scale)` for a regression.
    pub target: Option<(f64, f64)>,
    /// Scale of every column (incl. the intercept's) for DP-SCD's row-norm bound
    /// (`1 / sqrt(columns)`), 1 otherwise.
    pub row_factor: f64,
}

impl Scaling {
    /// Coefficients and intercept in the user's units from the solver's coefficients
    /// (`w` on the scaled features, the intercept column last when fitted).
    pub fn unscale(&self, w: &[f64], fit_intercept: bool) -> (Vec<f64>, f64) {
        let p = self.scale.len();
        let b = if fit_intercept {
            w[p] * self.row_factor
        } else {
            0.0
        };
        let mut coef = vec![0.0; p];
        let mut intercept = b;
        for j in 0..p {
            if self.scale[j] > 0.0 {
                let c = w[j] * self.row_factor / self.scale[j];
                coef[j] = c;
                intercept -= c * self.shift[j];
            }
        }
        if let Some((ys, yh)) = self.target {
            coef.iter_mut().for_each(|c| *c *= yh);
            intercept = intercept * yh + ys;
        }
        (coef, intercept)
    }
}

/// What a fit returns.
#[derive(Debug, Clone, PartialEq)]
pub struct FitOutput {
    /// Coefficients in the user's units.
    pub coef: Vec<f64>,
    /// Intercept in the user's units (0 without one).
    pub intercept: f64,
    /// The released model of the scaled problem: coefficients, plan, ledger, guarantee.
    /// Never a seed.
    pub model: LinearModel,
    /// The public map between the user's units and the scaled problem.
    pub scaling: Scaling,
    /// The hyperparameters used (given or chosen from public inputs).
    pub hyperparameters: serde_json::Value,
}

fn check_bounds(spec: &FitSpec, p: usize) -> Result<()> {
    if spec.lower.len() != p || spec.upper.len() != p {
        return err(format!(
            "bounds_X has {} lower and {} upper bounds but X has {p} features",
            spec.lower.len(),
            spec.upper.len()
        ));
    }
    for j in 0..p {
        let (lo, hi) = (spec.lower[j], spec.upper[j]);
        if !lo.is_finite() || !hi.is_finite() || lo > hi {
            return err(format!(
                "bounds_X for feature {j} are ({lo}, {hi}): they must be finite with lower <= upper"
            ));
        }
    }
    if let Some((lo, hi)) = spec.y_bounds {
        if !lo.is_finite() || !hi.is_finite() || lo >= hi {
            return err(format!(
                "bounds_y are ({lo}, {hi}): they must be finite with lower < upper"
            ));
        }
    }
    Ok(())
}

fn scaled_target(y: &[f64], spec: &FitSpec) -> Result<(Vec<f64>, Option<(f64, f64)>)> {
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return err(format!("y[{i}] is {}: the target must be finite", y[i]));
    }
    match (spec.loss, spec.y_bounds) {
        (LossName::Squared, Some((lo, hi))) => {
            let (mid, h) = ((lo + hi) / 2.0, (hi - lo) / 2.0);
            let t = y.iter().map(|v| ((v - mid) / h).clamp(-1.0, 1.0)).collect();
            Ok((t, Some((mid, h))))
        }
        (LossName::Squared, None) => err(
            "a private regression needs public bounds on the target: pass bounds_y=(lower, upper)",
        ),
        (_, _) => {
            if let Some(i) = y.iter().position(|&v| v != 1.0 && v != -1.0) {
                return err(format!(
                    "label {} at row {i}: the backend expects labels in {{-1, +1}}",
                    y[i]
                ));
            }
            Ok((y.to_vec(), None))
        }
    }
}

fn scaling_of(spec: &FitSpec, sparse: bool, target: Option<(f64, f64)>, q: usize) -> Scaling {
    let p = spec.lower.len();
    let mut shift = vec![0.0; p];
    let mut scale = vec![0.0; p];
    for j in 0..p {
        let (lo, hi) = (spec.lower[j], spec.upper[j]);
        if sparse {
            scale[j] = lo.abs().max(hi.abs());
        } else {
            shift[j] = (lo + hi) / 2.0;
            scale[j] = (hi - lo) / 2.0;
        }
    }
    let row_factor = if spec.algorithm == Algorithm::DpScd {
        1.0 / (q as f64).sqrt()
    } else {
        1.0
    };
    Scaling {
        shift,
        scale,
        target,
        row_factor,
    }
}

#[inline]
fn map_value(v: f64, shift: f64, scale: f64, factor: f64) -> f64 {
    if scale > 0.0 {
        ((v - shift) / scale).clamp(-1.0, 1.0) * factor
    } else {
        0.0
    }
}

fn non_finite(i: usize, j: usize, v: f64) -> BackendError {
    BackendError(format!(
        "X[{i}, {j}] is {v}: the features must be finite (no NaN or infinity)"
    ))
}

/// The scaled dense design (column-major, no row-major copy until a row method asks):
/// the one copy of the data a fit makes, with the public map applied on the way.
fn dense_design(
    values: &[f64],
    n: usize,
    p: usize,
    row_major: bool,
    s: &Scaling,
    intercept: bool,
) -> Result<DenseDesign> {
    if values.len() != n * p {
        return err(format!(
            "X has {} values for shape ({n}, {p})",
            values.len()
        ));
    }
    let q = p + usize::from(intercept);
    let mut cols = Vec::with_capacity(n * q);
    for j in 0..p {
        let (sh, sc) = (s.shift[j], s.scale[j]);
        for i in 0..n {
            let v = if row_major {
                values[i * p + j]
            } else {
                values[j * n + i]
            };
            if !v.is_finite() {
                return Err(non_finite(i, j, v));
            }
            cols.push(map_value(v, sh, sc, s.row_factor));
        }
    }
    if intercept {
        cols.extend(std::iter::repeat_n(s.row_factor, n));
    }
    Ok(DenseDesign::from_matrix_deferred_rows(DMatrix::from_vec(
        n, q, cols,
    ))?)
}

fn sparse_design(
    data: &[f64],
    indices: &[i64],
    indptr: &[i64],
    n: usize,
    p: usize,
    s: &Scaling,
    intercept: bool,
) -> Result<SparseDesign> {
    if indptr.len() != p + 1 || data.len() != indices.len() {
        return err(format!(
            "malformed CSC matrix: indptr has {} entries for {p} columns, data {} and indices {}",
            indptr.len(),
            data.len(),
            indices.len()
        ));
    }
    let mut t = Vec::with_capacity(data.len() + if intercept { n } else { 0 });
    for j in 0..p {
        let (a, b) = (indptr[j], indptr[j + 1]);
        if a < 0 || b < a || b as usize > data.len() {
            return err(format!("malformed CSC matrix: column {j} spans {a}..{b}"));
        }
        for k in a as usize..b as usize {
            let i = indices[k];
            if i < 0 || i as usize >= n {
                return err(format!(
                    "malformed CSC matrix: row index {i} outside 0..{n}"
                ));
            }
            let v = data[k];
            if !v.is_finite() {
                return Err(non_finite(i as usize, j, v));
            }
            let x = map_value(v, 0.0, s.scale[j], s.row_factor);
            if x != 0.0 {
                t.push((i as usize, j, x));
            }
        }
    }
    if intercept {
        t.extend((0..n).map(|i| (i, p, s.row_factor)));
    }
    Ok(SparseDesign::from_triplets(
        n,
        p + usize::from(intercept),
        &t,
    )?)
}

/// Fits the estimator `spec` describes on `(x, y)`; `seed` replays the noise (tests,
/// reproduction), `None` draws from the operating system. `y` holds labels in `{-1, +1}`
/// for the classifiers, the raw target for the regressors.
pub fn fit(x: Features<'_>, y: &[f64], spec: &FitSpec, seed: Option<u64>) -> Result<FitOutput> {
    let (n, p) = x.shape();
    if n == 0 || p == 0 {
        return err(format!(
            "X has shape ({n}, {p}): a fit needs at least one row and one feature"
        ));
    }
    if y.len() != n {
        return err(format!("X has {n} rows but y has {} values", y.len()));
    }
    check_bounds(spec, p)?;
    let (labels, target) = scaled_target(y, spec)?;
    let q = p + usize::from(spec.fit_intercept);
    let sparse = matches!(x, Features::SparseCsc { .. });
    let scaling = scaling_of(spec, sparse, target, q);
    let (fitted, hyper) = match x {
        Features::Dense {
            values,
            n,
            p,
            row_major,
        } => {
            let d = dense_design(values, n, p, row_major, &scaling, spec.fit_intercept)?;
            let data = Dataset::new(d, labels)?;
            dispatch(&data, spec, seed)?
        }
        Features::SparseCsc {
            data,
            indices,
            indptr,
            n,
            p,
        } => {
            let d = sparse_design(data, indices, indptr, n, p, &scaling, spec.fit_intercept)?;
            let data = Dataset::new(d, labels)?;
            dispatch(&data, spec, seed)?
        }
    };
    let model = fitted.model;
    if let Some(i) = model.coefficients.iter().position(|c| !c.is_finite()) {
        return err(format!(
            "the fit returned a non-finite coefficient ({} at {i}); refusing it",
            model.coefficients[i]
        ));
    }
    let (coef, intercept) = scaling.unscale(&model.coefficients, spec.fit_intercept);
    Ok(FitOutput {
        coef,
        intercept,
        model,
        scaling,
        hyperparameters: hyper,
    })
}

/// The penalty on `q` coordinates, the intercept column (last) unpenalised.
fn weights(q: usize, intercept: bool) -> Vec<f64> {
    let mut w = vec![1.0; q];
    if intercept {
        w[q - 1] = 0.0;
    }
    w
}

fn dispatch<D: ColumnKernels>(
    data: &Dataset<D>,
    spec: &FitSpec,
    seed: Option<u64>,
) -> Result<(Fitted, serde_json::Value)> {
    let q = data.n_features();
    // DP-SCD penalises every coefficient alike (its dual needs it), the intercept too.
    let unpen = spec.fit_intercept && spec.algorithm != Algorithm::DpScd;
    let w = weights(q, unpen);
    macro_rules! with_penalty {
        ($loss:expr) => {
            match spec.penalty {
                PenaltyName::None => run(data, spec, seed, $loss, NoPenalty),
                PenaltyName::L1 => run(
                    data,
                    spec,
                    seed,
                    $loss,
                    L1::new(spec.alpha)?.with_weights(w)?,
                ),
                PenaltyName::L2 => run(
                    data,
                    spec,
                    seed,
                    $loss,
                    L2::new(spec.alpha)?.with_weights(w)?,
                ),
                PenaltyName::Elasticnet => {
                    if !(0.0..=1.0).contains(&spec.l1_ratio) {
                        return err(format!(
                            "l1_ratio is {}: it must be in [0, 1]",
                            spec.l1_ratio
                        ));
                    }
                    run(
                        data,
                        spec,
                        seed,
                        $loss,
                        ElasticNet::new(
                            spec.alpha * spec.l1_ratio,
                            spec.alpha * (1.0 - spec.l1_ratio),
                        )?
                        .with_weights(w)?,
                    )
                }
            }
        };
    }
    if spec.algorithm == Algorithm::DpScd {
        if spec.penalty != PenaltyName::L2 || spec.alpha <= 0.0 {
            return err(
                "algorithm='dp-scd' solves the dual of an L2-penalised problem: it needs penalty 'l2' with a strength > 0",
            );
        }
        return match spec.loss {
            LossName::Logistic => run_scd(data, spec, seed, Logistic),
            LossName::Squared => run_scd(data, spec, seed, Squared::half()),
            LossName::SquaredHinge => err(
                "algorithm='dp-scd' supports the logistic and squared losses only (DPLogisticRegression, DPLinearRegression, DPLasso/DPElasticNet with l1_ratio=0)",
            ),
        };
    }
    match spec.loss {
        LossName::Logistic => with_penalty!(Logistic),
        LossName::SquaredHinge => with_penalty!(SquaredHinge),
        LossName::Squared => with_penalty!(Squared::half()),
    }
}

fn solve<D: dp_models::Design, S: Solver<D>>(
    solver: &S,
    data: &Dataset<D>,
    seed: Option<u64>,
) -> Result<Fitted> {
    Ok(match seed {
        Some(s) => solver.fit_seeded(data, s)?,
        None => solver.fit(data)?,
    })
}

fn run<D: ColumnKernels, L: Loss, P: Penalty>(
    data: &Dataset<D>,
    spec: &FitSpec,
    seed: Option<u64>,
    loss: L,
    penalty: P,
) -> Result<(Fitted, serde_json::Value)> {
    let (n, q) = (data.n_samples(), data.n_features());
    let c = loss
        .curvature_bound()
        .ok_or_else(|| BackendError(format!("the {} loss is not smooth", loss.name())))?;
    // Every scaled value is in [-1, 1] (the intercept column is 1): public bounds.
    let bounds = PublicBounds::uniform(q, 1.0);
    match spec.algorithm {
        Algorithm::DpCd => {
            let (params, chosen) =
                DpCdParams::defaults_for(loss, penalty, spec.epsilon, spec.delta, &bounds, n, q)?;
            let passes = spec.passes.unwrap_or(chosen.passes);
            let step = spec.step_scale.unwrap_or(chosen.step_scale);
            let clip = spec.clip.unwrap_or(chosen.clip);
            let solver = params.passes(passes).step_scale(step).clip(clip).build()?;
            let fitted = solve(&solver, data, seed)?;
            let hyper = serde_json::json!({
                "passes": passes, "step_scale": step, "clip": clip,
                "rule": "dp_optim::auto (public inputs only); M_j estimated privately (charged)",
                "smoothness_share": chosen.smoothness_share,
            });
            Ok((fitted, hyper))
        }
        Algorithm::DpGcd => {
            let passes = spec.passes.unwrap_or(10);
            let step = spec.step_scale.unwrap_or(0.5);
            let clip = spec.clip.unwrap_or(1.0);
            let rule = if spec.penalty == PenaltyName::None {
                SelectionRule::GsL
            } else {
                SelectionRule::GsR
            };
            let solver = DpGcdParams::new(loss, penalty)
                .epsilon(spec.epsilon)
                .delta(spec.delta)
                .passes(passes)
                .step_scale(step)
                .clip(clip)
                .variant(Variant::Zcdp)
                .rule(rule)
                .smoothness(Smoothness::Given(dp_models::Tagged::public(vec![c; q])))
                .build()?;
            let fitted = solve(&solver, data, seed)?;
            let hyper = serde_json::json!({"passes": passes, "step_scale": step, "clip": clip,
                "variant": "zcdp", "smoothness": "public: c * 1^2 per coordinate"});
            Ok((fitted, hyper))
        }
        Algorithm::DpSgd => {
            let passes = spec.passes.unwrap_or(10);
            let step = spec.step_scale.unwrap_or(0.5);
            let clip = spec.clip.unwrap_or(1.0);
            let batch = spec.batch_size.unwrap_or(64.min(n as u64));
            // beta <= c max_i ||x_i||^2 <= c q (every scaled value in [-1, 1]).
            let solver = DpSgdParams::new(loss, penalty)
                .epsilon(spec.epsilon)
                .delta(spec.delta)
                .passes(passes)
                .step_scale(step)
                .clip(clip)
                .batch_size(batch)
                .smoothness(GlobalSmoothness::Given(dp_models::Tagged::public(
                    c * q as f64,
                )))
                .build()?;
            let fitted = solve(&solver, data, seed)?;
            let hyper = serde_json::json!({"passes": passes, "step_scale": step, "clip": clip,
                "batch_size": batch, "smoothness": "public: c * q"});
            Ok((fitted, hyper))
        }
        Algorithm::DpScd => err("internal: dp-scd is dispatched by run_scd"),
    }
}

fn run_scd<D: dp_models::Design, L: DualLoss>(
    data: &Dataset<D>,
    spec: &FitSpec,
    seed: Option<u64>,
    loss: L,
) -> Result<(Fitted, serde_json::Value)> {
    let passes = spec.passes.unwrap_or(10);
    let clip = spec.clip.unwrap_or(1.0);
    let batch = spec.batch_size.unwrap_or(1);
    let solver = DpScdParams::new(loss, L2::new(spec.alpha)?)
        .epsilon(spec.epsilon)
        .delta(spec.delta)
        .passes(passes)
        .batch_size(batch)
        .clip(clip)
        .build()?;
    let fitted = solve(&solver, data, seed)?;
    let hyper = serde_json::json!({"passes": passes, "clip": clip, "batch_size": batch,
        "row_norm": "rows scaled by 1/sqrt(columns) (public) so that ||x_i|| <= 1"});
    Ok((fitted, hyper))
}
