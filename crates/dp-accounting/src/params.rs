//! Validated privacy parameters.
//!
//! Each type can only hold a value that makes sense for it, so a function that takes
//! an [`Epsilon`] never has to check for NaN, a negative value or infinity again.
//! Construction fails with [`AccountingError::InvalidParameter`], naming the parameter.

use crate::error::{AccountingError, Result};
use serde::{Deserialize, Serialize};

/// Checks that `value` is finite and > 0, naming the parameter in the error.
pub(crate) fn finite_positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(AccountingError::InvalidParameter {
            name,
            value,
            expected: "must be finite and > 0",
        })
    }
}

/// Privacy loss bound epsilon of (epsilon, delta)-DP: finite and > 0.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Epsilon(f64);

impl Epsilon {
    /// Validates `value`: finite and strictly positive.
    pub fn new(value: f64) -> Result<Self> {
        finite_positive("epsilon", value).map(Self)
    }
    /// The raw value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// Failure probability delta of (epsilon, delta)-DP: strictly inside (0, 1).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Delta(f64);

impl Delta {
    /// Validates `value`: finite and in the open interval (0, 1).
    pub fn new(value: f64) -> Result<Self> {
        if value.is_finite() && value > 0.0 && value < 1.0 {
            Ok(Self(value))
        } else {
            Err(AccountingError::InvalidParameter {
                name: "delta",
                value,
                expected: "must be in the open interval (0, 1)",
            })
        }
    }
    /// The raw value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// zCDP parameter rho: finite and > 0.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Rho(f64);

impl Rho {
    /// Validates `value`: finite and strictly positive.
    pub fn new(value: f64) -> Result<Self> {
        finite_positive("rho", value).map(Self)
    }
    /// The raw value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// Noise multiplier: standard deviation of the Gaussian noise divided by the L2
/// sensitivity of the released quantity. Finite and > 0.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct NoiseMultiplier(f64);

impl NoiseMultiplier {
    /// Validates `value`: finite and strictly positive.
    pub fn new(value: f64) -> Result<Self> {
        finite_positive("noise multiplier (sigma)", value).map(Self)
    }
    /// The raw value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// Poisson sampling rate q in (0, 1].
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct SamplingRate(f64);

impl SamplingRate {
    /// Validates `value`: finite and in (0, 1].
    pub fn new(value: f64) -> Result<Self> {
        if value.is_finite() && value > 0.0 && value <= 1.0 {
            Ok(Self(value))
        } else {
            Err(AccountingError::InvalidParameter {
                name: "sampling rate",
                value,
                expected: "must be in (0, 1]",
            })
        }
    }
    /// The raw value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// The norm in which a sensitivity is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Norm {
    /// L1 norm (Laplace-type mechanisms).
    L1,
    /// L2 norm (Gaussian-type mechanisms).
    L2,
    /// L-infinity norm (report-noisy-max score sensitivity).
    LInf,
}

/// Sensitivity of a query: sup over neighbouring datasets of the norm of the change.
/// The value is finite and > 0; the norm says how it was measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SensitivityRepr")]
pub struct Sensitivity {
    value: f64,
    norm: Norm,
}

#[derive(Deserialize)]
struct SensitivityRepr {
    value: f64,
    norm: Norm,
}

impl TryFrom<SensitivityRepr> for Sensitivity {
    type Error = AccountingError;
    fn try_from(r: SensitivityRepr) -> Result<Sensitivity> {
        Sensitivity::new(r.value, r.norm)
    }
}

impl Sensitivity {
    /// Validates `value` (finite and > 0) measured in `norm`.
    pub fn new(value: f64, norm: Norm) -> Result<Self> {
        finite_positive("sensitivity", value).map(|value| Self { value, norm })
    }
    /// The raw value.
    pub fn get(self) -> f64 {
        self.value
    }
    /// The norm the sensitivity is measured in.
    pub fn norm(self) -> Norm {
        self.norm
    }
}

macro_rules! impl_conversions {
    ($($t:ident),*) => {$(
        impl TryFrom<f64> for $t {
            type Error = AccountingError;
            fn try_from(value: f64) -> Result<Self> {
                Self::new(value)
            }
        }
        impl From<$t> for f64 {
            fn from(value: $t) -> f64 {
                value.0
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    )*};
}
impl_conversions!(Epsilon, Delta, Rho, NoiseMultiplier, SamplingRate);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_values_by_name() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = Epsilon::new(bad).unwrap_err();
            assert!(err.to_string().contains("epsilon"), "{err}");
        }
        for bad in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            let err = Delta::new(bad).unwrap_err();
            assert!(err.to_string().contains("delta"), "{err}");
        }
        assert!(SamplingRate::new(1.0).is_ok());
        assert!(SamplingRate::new(0.0).is_err());
        assert!(Sensitivity::new(f64::NAN, Norm::L2).is_err());
        assert_eq!(Delta::new(1e-5).unwrap().get(), 1e-5);
    }

    #[test]
    fn serde_round_trip_validates() {
        let e: Epsilon = serde_json::from_str("1.5").unwrap();
        assert_eq!(e.get(), 1.5);
        assert!(serde_json::from_str::<Delta>("2.0").is_err());
        let s = Sensitivity::new(2.0, Norm::L1).unwrap();
        let back: Sensitivity = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        assert!(serde_json::from_str::<Sensitivity>(r#"{"value":0.0,"norm":"l2"}"#).is_err());
        assert_eq!(serde_json::to_string(&e).unwrap(), "1.5");
    }
}
