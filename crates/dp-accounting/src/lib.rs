#![doc = include_str!("../README.md")]

mod binomial;
pub mod calibrate;
pub mod composition;
pub mod discrete;
pub mod error;
pub mod gdp;
pub mod ledger;
pub mod mechanisms;
pub mod num;
pub mod params;
pub mod pld;
pub mod rdp;
pub mod release;
pub mod sampled_wor;
pub mod selection;
pub mod subsampled;
#[cfg(feature = "testing")]
pub mod testing;
pub mod zcdp;

pub use error::{AccountingError, Result};
pub use params::{Delta, Epsilon, NoiseMultiplier, Norm, Rho, SamplingRate, Sensitivity};
