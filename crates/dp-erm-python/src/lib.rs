//! The Rust side of the Python package `dp_erm` (built by maturin with the `python`
//! feature; the scikit-learn estimators themselves are Python, in `python/dp_erm/`).
//!
//! * [`backend`]: the one call from the estimators into the library: `dp_erm`'s
//!   pipeline (bounds, scaling folded into the model, the private fit, the guarantee).
//!   Pure Rust.
//! * [`accounting`]: `dp_erm.accounting`'s questions, answered by `dp_accounting`.
//! * The `python` feature adds the extension module `dp_erm._core`, which only converts
//!   arrays and errors and releases the GIL while the solver runs.
//!
//! # Unsafe code
//! The workspace forbids `unsafe_code`; this crate only denies it, because the code that
//! PyO3's macros generate for the bindings below uses `unsafe` internally (with its own
//! `allow`). No `unsafe` is written by hand here, and the backend modules forbid it.

pub mod accounting;
pub mod backend;

#[cfg(feature = "python")]
mod bindings {
    use crate::backend::{self, Features, FitSpec};
    use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
    use pyo3::exceptions::{PyTypeError, PyValueError};
    use pyo3::prelude::*;

    fn value_error(e: impl std::fmt::Display) -> PyErr {
        PyValueError::new_err(e.to_string())
    }

    fn finish<'py>(
        py: Python<'py>,
        out: backend::Result<dp_erm::FitReport>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, f64, String)> {
        let out = out.map_err(value_error)?;
        // The releasable model and the hyperparameters; not the diagnostics (computed
        // from the data without privacy) and never a seed.
        // The typed warnings (public: functions of public inputs and released values),
        // each with its text, for the estimators to raise as Python warnings.
        let warnings: Vec<serde_json::Value> = out
            .warnings
            .iter()
            .map(|w| serde_json::json!({ "detail": w, "message": w.to_string() }))
            .collect();
        let report = serde_json::json!({
            "model": out.model,
            "chosen": out.chosen,
            "warnings": warnings,
        });
        Ok((
            PyArray1::from_vec(py, out.model.coefficients.clone()),
            out.model.intercept.unwrap_or(0.0),
            report.to_string(),
        ))
    }

    fn parse_spec(spec: &str) -> PyResult<FitSpec> {
        serde_json::from_str(spec).map_err(|e| PyValueError::new_err(format!("fit spec: {e}")))
    }

    /// Fits on a dense float64 array (C or Fortran order, read in place); returns
    /// `(coef, intercept, report_json)`. The GIL is released while the solver runs.
    #[pyfunction]
    #[pyo3(signature = (x, y, spec, seed=None))]
    fn fit_dense<'py>(
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        y: PyReadonlyArray1<'py, f64>,
        spec: &str,
        seed: Option<u64>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, f64, String)> {
        let spec = parse_spec(spec)?;
        let shape = x.shape();
        let (n, p) = (shape[0], shape[1]);
        let row_major = x.is_c_contiguous();
        let values = x.as_slice().map_err(|_| {
            PyTypeError::new_err("X must be a contiguous float64 array (C or Fortran order)")
        })?;
        let y = y
            .as_slice()
            .map_err(|_| PyTypeError::new_err("y must be a contiguous float64 array"))?;
        let features = Features::Dense {
            values,
            n,
            p,
            row_major,
        };
        let out = py.detach(|| backend::fit(features, y, &spec, seed));
        finish(py, out)
    }

    /// A scipy index buffer in its own dtype (int32 or int64), borrowed.
    enum IndexArray<'py> {
        I32(PyReadonlyArray1<'py, i32>),
        I64(PyReadonlyArray1<'py, i64>),
    }

    impl<'py> IndexArray<'py> {
        fn new(a: &Bound<'py, PyAny>, name: &str) -> PyResult<Self> {
            if let Ok(v) = a.extract::<PyReadonlyArray1<'py, i32>>() {
                return Ok(Self::I32(v));
            }
            if let Ok(v) = a.extract::<PyReadonlyArray1<'py, i64>>() {
                return Ok(Self::I64(v));
            }
            Err(PyTypeError::new_err(format!(
                "{name} must be a 1-d int32 or int64 array"
            )))
        }
        fn indices(&self) -> PyResult<backend::Indices<'_>> {
            let contiguous = |_| PyTypeError::new_err("sparse buffers must be contiguous");
            Ok(match self {
                Self::I32(v) => backend::Indices::I32(v.as_slice().map_err(contiguous)?),
                Self::I64(v) => backend::Indices::I64(v.as_slice().map_err(contiguous)?),
            })
        }
    }

    /// Fits on a scipy CSC matrix's buffers (read in place, int32 or int64 indices, as
    /// a sparse design: never densified); returns `(coef, intercept, report_json)`. The
    /// GIL is released while the solver runs.
    #[pyfunction]
    #[pyo3(signature = (data, indices, indptr, n, p, y, spec, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit_sparse<'py>(
        py: Python<'py>,
        data: PyReadonlyArray1<'py, f64>,
        indices: &Bound<'py, PyAny>,
        indptr: &Bound<'py, PyAny>,
        n: usize,
        p: usize,
        y: PyReadonlyArray1<'py, f64>,
        spec: &str,
        seed: Option<u64>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, f64, String)> {
        let spec = parse_spec(spec)?;
        let contiguous = |_| PyTypeError::new_err("sparse buffers must be contiguous");
        let (indices, indptr) = (
            IndexArray::new(indices, "indices")?,
            IndexArray::new(indptr, "indptr")?,
        );
        let features = Features::SparseCsc {
            data: data.as_slice().map_err(contiguous)?,
            indices: indices.indices()?,
            indptr: indptr.indices()?,
            n,
            p,
        };
        let y = y.as_slice().map_err(contiguous)?;
        let out = py.detach(|| backend::fit(features, y, &spec, seed));
        finish(py, out)
    }

    /// `dp_erm.accounting.epsilon`: returns a JSON object.
    #[pyfunction]
    #[pyo3(signature = (mechanism, steps, delta, sigma=None, scale=None, sensitivity=None, sampling_rate=None, accountant=None))]
    #[allow(clippy::too_many_arguments)]
    fn epsilon(
        py: Python<'_>,
        mechanism: &str,
        steps: u64,
        delta: f64,
        sigma: Option<f64>,
        scale: Option<f64>,
        sensitivity: Option<f64>,
        sampling_rate: Option<f64>,
        accountant: Option<&str>,
    ) -> PyResult<String> {
        let r = py.detach(|| {
            crate::accounting::epsilon(
                mechanism,
                steps,
                delta,
                sigma,
                scale,
                sensitivity,
                sampling_rate,
                accountant,
            )
        });
        Ok(r.map_err(value_error)?.to_string())
    }

    /// `dp_erm.accounting.sigma`: returns a JSON object.
    #[pyfunction]
    #[pyo3(signature = (mechanism, steps, epsilon, delta, sampling_rate=None, accountant=None))]
    fn sigma(
        py: Python<'_>,
        mechanism: &str,
        steps: u64,
        epsilon: f64,
        delta: f64,
        sampling_rate: Option<f64>,
        accountant: Option<&str>,
    ) -> PyResult<String> {
        let r = py.detach(|| {
            crate::accounting::sigma(mechanism, steps, epsilon, delta, sampling_rate, accountant)
        });
        Ok(r.map_err(value_error)?.to_string())
    }

    /// The accountants: `[(name, what it accounts)]`.
    #[pyfunction]
    fn accountants() -> Vec<(&'static str, &'static str)> {
        crate::accounting::ACCOUNTANTS.to_vec()
    }

    /// The extension module `dp_erm._core`.
    #[pymodule]
    fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(fit_dense, m)?)?;
        m.add_function(wrap_pyfunction!(fit_sparse, m)?)?;
        m.add_function(wrap_pyfunction!(epsilon, m)?)?;
        m.add_function(wrap_pyfunction!(sigma, m)?)?;
        m.add_function(wrap_pyfunction!(accountants, m)?)?;
        Ok(())
    }
}
