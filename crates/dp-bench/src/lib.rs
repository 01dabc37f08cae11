//! # dp-bench
//!
//! Datasets, experiments, the tuning runner, reports and figures.

pub mod data;
pub mod experiments;
pub mod figures;
pub mod report;
pub mod runner;
pub mod synthetic;
