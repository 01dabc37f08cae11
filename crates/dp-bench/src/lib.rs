//! # dp-bench
//!
//! Datasets, experiments, the tuning runner, reports and figures.

pub mod data;
pub mod synthetic;
