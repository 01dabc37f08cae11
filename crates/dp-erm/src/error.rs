//! The pipeline's one error type.

use thiserror::Error;

/// Everything that can go wrong in [`crate::Pipeline::fit`] and in prediction. Each
/// message names the parameter or the data, the value, and what would be accepted.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A setting is out of range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// The setting.
        name: &'static str,
        /// The value given.
        value: String,
        /// What would be accepted.
        expected: String,
    },
    /// A setting the chosen path needs was not given.
    #[error("missing {0}")]
    Missing(String),
    /// A combination the pipeline does not support (e.g. a regression loss for a
    /// classification task).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Something would be computed from the data without privacy and the caller did not
    /// opt in by name.
    #[error("refused: {0}")]
    NonPrivateRefused(String),
    /// From the data layer (shapes, non-finite values, labels, loaders).
    #[error(transparent)]
    Model(#[from] dp_models::ModelError),
    /// From a solver (invalid hyperparameters, divergence, ...).
    #[error(transparent)]
    Optim(#[from] dp_optim::OptimError),
    /// From the accounting layer.
    #[error(transparent)]
    Accounting(#[from] dp_accounting::AccountingError),
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, PipelineError>;

pub(crate) fn invalid(
    name: &'static str,
    value: impl std::fmt::Display,
    expected: impl Into<String>,
) -> PipelineError {
    PipelineError::InvalidParameter {
        name,
        value: value.to_string(),
        expected: expected.into(),
    }
}
