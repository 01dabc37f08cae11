//! # dp-models
//!
//! The math of the objective
//! `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + sum_j psi_j(w_j)`:
//! design matrices, per-sample losses, separable penalties and their prox operators.

pub mod dataset;
pub mod design;
pub mod error;
pub mod loss;
pub mod penalty;

pub use dataset::Dataset;
pub use design::{DenseDesign, Design, SparseDesign};
pub use error::{ModelError, Result};
pub use loss::{Hinge, Huber, Logistic, Loss, Squared, SquaredHinge};
pub use penalty::{BoxConstraint, ElasticNet, NoPenalty, Penalty, L1, L2};
