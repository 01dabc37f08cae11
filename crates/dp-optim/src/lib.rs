//! # dp-optim
//!
//! Differentially private solvers for composite empirical risk minimisation, each with
//! its non-private twin. The only crate that joins data, model and mechanism.

pub mod dp_gcd;
