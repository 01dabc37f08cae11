//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong in `dp-accounting`.
///
/// Messages name the parameter, the value given and what would be accepted,
/// so a caller can print them as they are.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AccountingError {
    /// A parameter is NaN, infinite or outside its allowed range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// Name of the parameter as the user knows it (e.g. "epsilon").
        name: &'static str,
        /// The value that was given.
        value: f64,
        /// What would have been accepted (e.g. "must be finite and > 0").
        expected: &'static str,
    },
    /// An integer parameter (a count of steps, an order, ...) is out of range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidCount {
        /// Name of the parameter.
        name: &'static str,
        /// The value that was given.
        value: u64,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A target cannot be met (for example no noise level reaches the requested epsilon
    /// within the search range).
    #[error("target cannot be met: {0}")]
    Unreachable(String),
    /// A charge would exceed the budget set on a ledger.
    #[error("budget exceeded: {0}")]
    BudgetExceeded(String),
    /// A numerical routine failed to produce a finite, trustworthy result.
    #[error("numerical failure: {0}")]
    Numerical(String),
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, AccountingError>;
