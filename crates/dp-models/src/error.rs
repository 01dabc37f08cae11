//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong in `dp-models`.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// Dimensions that must agree do not.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// The data are empty (no samples or no features).
    #[error("empty data: {0}")]
    Empty(String),
    /// A value in the data is NaN or infinite.
    #[error("non-finite value in {what} at {location}: {value}")]
    NonFinite {
        /// Which input ("design", "labels", "weights", ...).
        what: &'static str,
        /// Where in it (e.g. "row 3, column 7").
        location: String,
        /// The offending value.
        value: f64,
    },
    /// A parameter is out of range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// Name of the parameter.
        name: &'static str,
        /// The value that was given.
        value: f64,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A combination that is not supported (e.g. a non-smooth loss given to a solver
    /// that needs smoothness).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A constant computed from the data without privacy was given to a private solver
    /// that was not told to accept it.
    #[error("non-private constant refused: {0}")]
    NonPrivateConstant(String),
    /// An iterative solver stopped before meeting its tolerance.
    #[error("did not converge: {0}")]
    NotConverged(String),
    /// An error from the privacy accounting layer.
    #[error(transparent)]
    Accounting(#[from] dp_accounting::AccountingError),
    /// A data file could not be read or parsed (see [`crate::io`]).
    #[error(transparent)]
    Load(Box<crate::io::LoadError>),
}

impl From<crate::io::LoadError> for ModelError {
    fn from(e: crate::io::LoadError) -> Self {
        ModelError::Load(Box::new(e))
    }
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, ModelError>;

/// Checks that `value` is finite and > 0.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ModelError::InvalidParameter {
            name,
            value,
            expected: "must be finite and > 0",
        })
    }
}

/// Checks that `value` is finite and >= 0.
pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(ModelError::InvalidParameter {
            name,
            value,
            expected: "must be finite and >= 0",
        })
    }
}
