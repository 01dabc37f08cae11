//! Errors of DP-GCD.

use thiserror::Error;

/// Everything that can go wrong building or fitting DP-GCD.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DpGcdError {
    /// A parameter is out of range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// Name of the parameter.
        name: &'static str,
        /// The value that was given.
        value: f64,
        /// What would have been accepted, and how to fix it.
        expected: &'static str,
    },
    /// A combination of options or inputs that DP-GCD does not support.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An error from the model layer (shapes, labels, non-private constants, ...).
    #[error(transparent)]
    Model(#[from] dp_models::ModelError),
    /// An error from the privacy accounting layer.
    #[error(transparent)]
    Accounting(#[from] dp_accounting::AccountingError),
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, DpGcdError>;

pub(crate) fn invalid(name: &'static str, value: f64, expected: &'static str) -> DpGcdError {
    DpGcdError::InvalidParameter {
        name,
        value,
        expected,
    }
}
