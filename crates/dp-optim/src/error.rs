//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong in `dp-optim`.
///
/// Messages name the parameter, the value given and what would be accepted.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum OptimError {
    /// A solver parameter is missing, NaN, infinite or out of range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// Name of the parameter as the builder spells it (e.g. "passes").
        name: &'static str,
        /// The value given, formatted (or "missing").
        value: String,
        /// What would have been accepted, and how to fix it.
        expected: &'static str,
    },
    /// A required parameter was never set on the builder.
    #[error("missing parameter {0}: set it on the builder before build()")]
    Missing(&'static str),
    /// Dimensions that must agree do not.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// The solver does not support this loss / penalty / option combination.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The iterates left the finite range (e.g. an absurd step size or clipping
    /// threshold); nothing is returned.
    #[error("diverged: {0}")]
    Diverged(String),
    /// The data break a bound the caller stated as public (e.g. a
    /// [`RowSupport`](crate::support::RowSupport)); nothing was charged or drawn.
    #[error("the data break a stated public bound: {0}")]
    BoundViolated(String),
    /// The distributed protocol's server refused a party's uplink (see
    /// [`dist_fw::Server::receive`](crate::dist_fw::Server::receive)); the round was not
    /// applied.
    #[error(transparent)]
    Uplink(#[from] RejectedUplink),
    /// The operating system's entropy source failed.
    #[error("no entropy: {0}")]
    Entropy(String),
    /// An error from the model layer (data validation, smoothness constants, ...).
    #[error(transparent)]
    Model(#[from] dp_models::ModelError),
    /// An error from the privacy accounting layer (invalid epsilon / delta, calibration,
    /// budget exceeded, ...).
    #[error(transparent)]
    Accounting(#[from] dp_accounting::AccountingError),
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, OptimError>;

/// Checks that `value` is finite and > 0.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(OptimError::InvalidParameter {
            name,
            value: format!("{value}"),
            expected: "must be finite and > 0",
        })
    }
}

/// Checks that a count is > 0.
pub(crate) fn positive_count(name: &'static str, value: u64) -> Result<u64> {
    if value > 0 {
        Ok(value)
    } else {
        Err(OptimError::InvalidParameter {
            name,
            value: "0".into(),
            expected: "must be at least 1",
        })
    }
}

/// An [`OptimError::InvalidParameter`] for a numeric value.
pub(crate) fn invalid(name: &'static str, value: f64, expected: &'static str) -> OptimError {
    OptimError::InvalidParameter {
        name,
        value: value.to_string(),
        expected,
    }
}

/// Why the server refused an uplink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UplinkFault {
    /// It claims another sender or another round than the one expected.
    OutOfRound,
    /// Its sign is not +-1, its sketch has the wrong length or non-finite entries, or its
    /// feature lies outside the sender's block.
    Malformed,
}

/// An uplink the [`Server`](crate::dist_fw::Server) refused: which party, which round, why.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("party {party}, round {round}: {detail}")]
pub struct RejectedUplink {
    /// The party the uplink was expected from.
    pub party: usize,
    /// The server's round.
    pub round: u64,
    /// The kind of fault.
    pub kind: UplinkFault,
    /// What exactly is wrong.
    pub detail: String,
}
