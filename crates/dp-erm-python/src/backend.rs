//! The one place where the Python estimators meet the library: the data as Python holds
//! it -> THE pipeline of `dp_erm` ([`dp_erm::Pipeline`]: declared or privately
//! estimated bounds, clipping and scaling folded into the model, the private fit, the
//! released model in the user's units with the guarantee of the whole pipeline).
//!
//! Pure Rust (no PyO3): the bindings in `lib.rs` only convert arrays and errors, and the
//! Rust test `tests/seeded_fit.rs` calls [`fit`] and the pipeline directly, so a fit
//! through Python and the same seeded fit in Rust are the same computation
//! (`test_rust_parity.py` checks it bit for bit).
//!
//! # Privacy
//! Everything is the pipeline's ([`dp_erm::pipeline`] states the relation, the steps
//! and the proof). This module only copies the caller's array into the pipeline's
//! design (a dense array into a `DenseDesign`; a scipy CSC matrix's buffers, read in
//! place, into a `SparseDesign`, never densified) and passes the estimator's parameters
//! through; it reads nothing from the data.
#![forbid(unsafe_code)]

use dp_erm::{
    Algorithm, FeatureBounds, FitReport, LossKind, PenaltyKind, Pipeline, TargetBound, Task,
};
use dp_models::{Dataset, DenseDesign, SparseDesign};
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

impl From<dp_erm::PipelineError> for BackendError {
    fn from(e: dp_erm::PipelineError) -> Self {
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

/// Everything a fit needs besides the data: what the estimator's parameters say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitSpec {
    /// Classification (labels `{-1, +1}`) or regression.
    pub task: Task,
    /// Loss.
    pub loss: LossKind,
    /// Penalty.
    pub penalty: PenaltyKind,
    /// Penalty strength (on the pipeline's scaled problem).
    pub alpha: f64,
    /// Algorithm.
    pub algorithm: Algorithm,
    /// Target epsilon of the whole pipeline.
    pub epsilon: f64,
    /// Target delta of the whole pipeline.
    pub delta: f64,
    /// Fit an intercept.
    pub fit_intercept: bool,
    /// Declared public `[lo, hi]` per feature; `None`: estimated privately with
    /// `feature_share` of epsilon (charged).
    #[serde(default)]
    pub feature_ranges: Option<Vec<(f64, f64)>>,
    /// Share of epsilon for private feature bounds.
    #[serde(default)]
    pub feature_share: Option<f64>,
    /// Declared public target range (regression); `None`: estimated privately.
    #[serde(default)]
    pub target_range: Option<(f64, f64)>,
    /// Share of epsilon for a private target bound.
    #[serde(default)]
    pub target_share: Option<f64>,
    /// Passes over the data (`None`: the pipeline's default).
    #[serde(default)]
    pub passes: Option<u64>,
    /// Step scale (`None`: the pipeline's default).
    #[serde(default)]
    pub step_scale: Option<f64>,
    /// Clipping threshold (`None`: the pipeline's default).
    #[serde(default)]
    pub clip: Option<f64>,
    /// Mini-batch size (DP-SGD, DP-SCD).
    #[serde(default)]
    pub batch_size: Option<u64>,
    /// Worker threads of the coordinate solvers (seeded fits reproduce per count);
    /// `None`: [`default_threads`] of the rows.
    #[serde(default)]
    pub threads: Option<usize>,
}

/// The thread count of a fit that names none: the command line's rule
/// (`dp-erm fit`, `default_threads` in `crates/dp-erm-cli/src/fit.rs`): 2 for at least
/// 32,768 rows, else 1. Each coordinate step's sweep is then split into two fixed pieces
/// (rows `0..h` and `h..n`, `h` a multiple of 64 near `n / 2`) whose sums are added
/// left + right; with a second core the second piece runs on a persistent worker
/// thread, on one core the pieces run one after the other, with the same bits. A rule
/// on the public `n` only, never on the machine, so a seeded fit replays bit for bit
/// everywhere. On the 160,000 x 50 logistic fit with the other work of the machine
/// paused, two pieces took the default fit from 1.00 s to 0.57 s (docs/python.md,
/// "Speed"); an earlier measurement that found them slower (1.68 s against 1.17 s) was
/// not reproduced. When another process keeps the second core busy the caller runs
/// both pieces itself (`dp_optim`'s two-thread sweep), so two pieces then cost little
/// more than one. Sparse designs are swept in one piece whatever the count.
pub fn default_threads(n: usize) -> usize {
    if n >= 32_768 {
        2
    } else {
        1
    }
}

/// The feature data as Python hands it over, borrowed (no copy before the pipeline's).
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
    /// Compressed sparse columns (scipy's `csc_matrix` buffers, int32 or int64 indices
    /// as scipy stores them).
    SparseCsc {
        /// Non-zero values.
        data: &'a [f64],
        /// Row index of each value.
        indices: Indices<'a>,
        /// Column `j`'s values are `indptr[j]..indptr[j + 1]`.
        indptr: Indices<'a>,
        /// Rows.
        n: usize,
        /// Columns.
        p: usize,
    },
}

/// An index buffer of a scipy sparse matrix, in its own dtype (read without a copy).
#[derive(Debug, Clone, Copy)]
pub enum Indices<'a> {
    /// `int32` indices (scipy's default).
    I32(&'a [i32]),
    /// `int64` indices.
    I64(&'a [i64]),
}

impl Indices<'_> {
    fn len(&self) -> usize {
        match self {
            Indices::I32(v) => v.len(),
            Indices::I64(v) => v.len(),
        }
    }
    fn get(&self, k: usize) -> i64 {
        match self {
            Indices::I32(v) => i64::from(v[k]),
            Indices::I64(v) => v[k],
        }
    }
}

/// A sparse design from CSC buffers: the stored values, checked, as triplets (already in
/// column order); duplicates are summed and explicit zeros dropped, as scipy does.
fn sparse_design(
    data: &[f64],
    indices: Indices<'_>,
    indptr: Indices<'_>,
    n: usize,
    p: usize,
) -> Result<SparseDesign> {
    if indptr.len() != p + 1 || data.len() != indices.len() {
        return err(format!(
            "malformed CSC matrix: indptr has {} entries for {p} columns, data {} and indices {}",
            indptr.len(),
            data.len(),
            indices.len()
        ));
    }
    let mut triplets = Vec::with_capacity(data.len());
    for j in 0..p {
        let (a, b) = (indptr.get(j), indptr.get(j + 1));
        if a < 0 || b < a || b as usize > data.len() {
            return err(format!("malformed CSC matrix: column {j} spans {a}..{b}"));
        }
        for (k, &v) in data.iter().enumerate().take(b as usize).skip(a as usize) {
            let i = indices.get(k);
            if i < 0 || i as usize >= n {
                return err(format!(
                    "malformed CSC matrix: row index {i} outside 0..{n}"
                ));
            }
            triplets.push((i as usize, j, v));
        }
    }
    Ok(SparseDesign::from_triplets(n, p, &triplets)?)
}

/// The design of `x`, in the pipeline's layout (column-major, on huge pages when large):
/// the one copy of the data a fit makes, written straight into the design's buffer and
/// then handed to the pipeline, which clips and scales it in place
/// ([`dp_erm::Pipeline::fit_owned`]; the caller's array is never written). A C-ordered
/// array is transposed once, tile by tile ([`dp_models::design::transpose_into`]); a
/// Fortran-ordered one is copied column by column as it is.
fn design(x: Features<'_>) -> Result<DenseDesign> {
    match x {
        Features::Dense {
            values,
            n,
            p,
            row_major,
        } => {
            if Some(values.len()) != n.checked_mul(p) {
                return err(format!(
                    "X has {} values for shape ({n}, {p})",
                    values.len()
                ));
            }
            empty_check(n, p)?;
            Ok(if row_major {
                DenseDesign::from_row_major_deferred_rows(n, p, values)?
            } else {
                DenseDesign::from_col_major_with(n, p, |cols| cols.copy_from_slice(values))?
            })
        }
        Features::SparseCsc { .. } => err("internal: a sparse matrix is never densified here"),
    }
}

fn empty_check(n: usize, p: usize) -> Result<()> {
    if n == 0 || p == 0 {
        return err(format!(
            "X has shape ({n}, {p}): a fit needs at least one row and one feature"
        ));
    }
    Ok(())
}

/// The pipeline the spec describes.
pub fn pipeline(spec: &FitSpec, n: usize, seed: Option<u64>) -> Pipeline {
    let mut pl = Pipeline::new(spec.task, spec.algorithm)
        .loss(spec.loss)
        .penalty(spec.penalty, spec.alpha)
        .privacy(spec.epsilon, spec.delta)
        .intercept(spec.fit_intercept)
        .seed(seed)
        .threads(spec.threads.unwrap_or_else(|| default_threads(n)))
        .feature_bounds(match (&spec.feature_ranges, spec.feature_share) {
            (Some(r), _) => FeatureBounds::Ranges(r.clone()),
            (None, Some(share)) => FeatureBounds::Private { share },
            (None, None) => FeatureBounds::private(),
        });
    if spec.task == Task::Regression {
        pl = pl.target_bound(match (spec.target_range, spec.target_share) {
            (Some((lo, hi)), _) => TargetBound::Range(lo, hi),
            (None, Some(share)) => TargetBound::Private { share },
            (None, None) => TargetBound::private(),
        });
    }
    if let Some(v) = spec.passes {
        pl = pl.passes(v);
    }
    if let Some(v) = spec.step_scale {
        pl = pl.step_scale(v);
    }
    if let Some(v) = spec.clip {
        pl = pl.clip(v);
    }
    if let Some(v) = spec.batch_size {
        pl = pl.batch_size(v);
    }
    pl
}

/// Fits the estimator `spec` describes on `(x, y)` through the pipeline; `seed` replays
/// the noise (tests, reproduction), `None` draws from the operating system. `y` holds
/// labels in `{-1, +1}` for classification, the raw target for regression.
/// A scipy sparse matrix goes to the pipeline as a sparse design (declared bounds only:
/// the pipeline refuses private ranges on sparse data, saying why).
pub fn fit(x: Features<'_>, y: &[f64], spec: &FitSpec, seed: Option<u64>) -> Result<FitReport> {
    let n = match x {
        Features::Dense { n, .. } | Features::SparseCsc { n, .. } => n,
    };
    if y.len() != n {
        return err(format!("X has {n} rows but y has {} values", y.len()));
    }
    let report = match x {
        Features::SparseCsc {
            data,
            indices,
            indptr,
            n,
            p,
        } => {
            empty_check(n, p)?;
            let design = sparse_design(data, indices, indptr, n, p)?;
            pipeline(spec, n, seed).fit_owned(Dataset::new(design, y.to_vec())?)?
        }
        Features::Dense { .. } => {
            let design = design(x)?;
            pipeline(spec, n, seed).fit_owned(Dataset::new(design, y.to_vec())?)?
        }
    };
    if let Some(i) = report
        .model
        .coefficients
        .iter()
        .position(|c| !c.is_finite())
    {
        return err(format!(
            "the fit returned a non-finite coefficient ({} at {i}); refusing it",
            report.model.coefficients[i]
        ));
    }
    Ok(report)
}
