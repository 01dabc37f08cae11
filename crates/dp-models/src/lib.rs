#![doc = include_str!("../README.md")]

pub mod choice;
pub mod constants;
pub mod constraint;
pub mod dataset;
pub mod design;
pub mod dual;
pub mod error;
pub mod io;
pub mod loss;
pub mod metrics;
pub mod objective;
pub mod pages;
pub mod penalty;
pub mod preprocess;
pub mod reference;
pub mod simd;
pub mod split;

pub use choice::{AnyDualLoss, AnyLoss, AnyPenalty, LossKind, PenaltyKind};
pub use constants::{Provenance, Tagged};
pub use constraint::{BoxSet, ConstraintSet, L1Ball, L1BallProduct, Simplex, Vertex};
pub use dataset::Dataset;
pub use design::{ClipValues, DenseDesign, Design, SparseDesign};
pub use dual::DualLoss;
pub use error::{ModelError, Result};
pub use loss::{Hinge, Huber, Logistic, Loss, Squared, SquaredHinge};
pub use objective::Objective;
pub use penalty::{
    l1_quadratic_decrease_root, BoxConstraint, ElasticNet, NoPenalty, Penalty, L1, L2,
};
pub use reference::{solve, CertificateKind, Certified, ReferenceOptions};
pub use split::{train_test_split, SelectRows};
