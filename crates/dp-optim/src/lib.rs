#![doc = include_str!("../README.md")]

pub mod cd;
pub mod dp_cd;
pub mod dp_gcd;
pub mod dp_sgd;
pub mod error;
pub mod kernel;
pub mod privacy;
pub mod report;
pub mod sgd;

pub use cd::{Averaging, Cd, CdParams, CdSmoothness, CoordinateOrder, Schedule};
pub use dp_cd::{DpCd, DpCdParams, DpCdPlan, Smoothness};
pub use dp_sgd::{DpSgd, DpSgdParams, DpSgdPlan};
pub use error::{OptimError, Result};
pub use kernel::ColumnKernels;
pub use privacy::{Accounting, Adjacency, Guarantee, PrivacyReport, SolverPlan};
pub use report::{Diagnostics, FitReport};
pub use sgd::{GlobalSmoothness, Sgd, SgdParams};

#[cfg(test)]
mod tests;
