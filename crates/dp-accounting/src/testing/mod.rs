//! Test utilities for users' own privacy mechanisms and accountants (cargo feature
//! `testing`): proptest [`strategies`], the empirical [`Auditor`], statistical tests of
//! [`samplers`], and [`accountant`] property checks. The crate's own test suites and
//! the solvers' privacy audits are written with them (see `docs/testing.md`).

pub mod accountant;
mod audit;
pub mod samplers;
pub mod strategies;

pub use audit::{clopper_pearson, AuditReport, Auditor, Event, Score, Side};
