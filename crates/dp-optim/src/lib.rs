#![doc = include_str!("../README.md")]

pub mod auto;
pub mod cd;
pub mod constants;
pub mod dist_fw;
pub mod dp_cd;
pub mod dp_fw;
pub mod dp_gcd;
pub mod dp_scd;
pub mod dp_sgd;
mod driver;
pub mod error;
pub mod fw;
pub mod fw_plan;
pub mod kernel;
pub mod model;
pub mod plan;
pub mod privacy;
pub mod schedule;
pub mod sdca;
pub mod select;
pub mod sgd;
pub mod solver;
pub mod support;

pub use cd::{Cd, CdParams};
pub use constants::{GlobalSmoothness, Smoothness};
pub use dist_fw::{Bcfw, BcfwParams, DistCalibration, DistDpFw, DistDpFwParams};
pub use dp_cd::{AdaptiveClipping, DpCd, DpCdParams, Precision, MIXED_MIN_ROWS};
pub use dp_fw::{DpFw, DpFwParams};
pub use dp_gcd::{DpGcd, DpGcdParams};
pub use dp_scd::{DpScd, DpScdParams, DualNoise};
pub use dp_sgd::{DpSgd, DpSgdParams};
pub use driver::CalibrationCache;
pub use error::{OptimError, Result};
pub use fw::{Fw, FwParams, FwStep};
pub use kernel::ColumnKernels;
pub use model::{
    with_intercept_column, AppendConstantColumn, Diagnostics, FitWarning, Fitted, LinearModel,
};
pub use plan::{
    BatchSampling, DpCdPlan, DpGcdPlan, DpScdPlan, DpSgdPlan, PrivacyReport, SolverPlan,
};
pub use privacy::{Accounting, Adjacency, CheckedPrivacy, Guarantee, PrivacyParams};
pub use schedule::{Averaging, CoordinateOrder, Schedule};
pub use sdca::{BatchUpdates, Sdca, SdcaParams};
pub use sgd::{Sgd, SgdParams};
pub use solver::Solver;
pub use support::{FeatureGroup, RowSupport};

/// Everything needed to build and fit a solver: `use dp_optim::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Accounting, Adjacency, BatchSampling, BatchUpdates, Bcfw, BcfwParams, Cd, CdParams,
        DistDpFw, DistDpFwParams, DpCd, DpCdParams, DpFw, DpFwParams, DpGcd, DpGcdParams, DpScd,
        DpScdParams, DpSgd, DpSgdParams, DualNoise, Fitted, Fw, FwParams, GlobalSmoothness,
        LinearModel, PrivacyParams, Sdca, SdcaParams, Sgd, SgdParams, Smoothness, Solver,
    };
}

#[cfg(test)]
mod fw_tests;
#[cfg(test)]
mod scd_tests;
#[cfg(test)]
mod tests;
