//! # dp-accounting
//!
//! Privacy measures, mechanisms, accountants, calibration and a budget ledger.
//! This crate knows nothing of machine learning: every other crate of the workspace
//! spends privacy through it.

pub mod discrete;
pub mod error;
pub mod params;
pub mod pld;

pub use error::{AccountingError, Result};
pub use params::{Delta, Epsilon, NoiseMultiplier, Norm, Rho, SamplingRate, Sensitivity};
