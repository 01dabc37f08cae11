//! # dp-bench
//!
//! Datasets, experiments, the tuning runner, reports and figures: the crate that joins
//! `dp-accounting`, `dp-models` and `dp-optim` to reproduce the papers (`cargo xtask
//! reproduce`), and the registered measurement studies of the docs (`cargo xtask study
//! NAME`, [`studies`]). Decisions and results are in the workspace's `docs/reproduction-log.md`.
//!
//! # Example: the papers' tuning protocol on embedded data
//!
//! DP-CD on the DP-CD paper's California LASSO (standardised features), tuned on a small
//! grid as the papers do: every (step, clip) point is run `tuning_runs` times, the best
//! mean is re-run `final_runs` times with fresh seeds, and errors are relative to a
//! certified optimum `F*`. As in the papers, the smoothness constants come from the data
//! without privacy and the tuning is not charged to the budget.
//!
//! ```
//! use dp_bench::data::california;
//! use dp_bench::runner::{run_tasks, timed, Grid, Hyper, ProgressMode, Protocol, RunOutput, Task, TaskId};
//! use dp_models::objective::Objective;
//! use dp_models::preprocess::standardize;
//! use dp_models::reference::{solve, ReferenceOptions};
//! use dp_models::{Dataset, Squared, L1};
//! use dp_optim::{DpCdParams, Solver};
//!
//! let raw = california()?; // embedded: no download
//! let data = Dataset::new(standardize(raw.x())?.0, raw.y().to_vec())?;
//! let (loss, penalty) = (Squared::full(), L1::new(0.1)?);
//! let objective = Objective::new(&data, &loss, &penalty)?;
//! let f_star = solve(&objective, &ReferenceOptions::default())?.objective;
//! let n = data.n_samples() as f64;
//! let at_zero = (objective.value(&vec![0.0; data.n_features()])? - f_star) / f_star;
//!
//! let fit = |h: &Hyper, seed: u64| -> anyhow::Result<RunOutput> {
//!     let solver = DpCdParams::new(loss, penalty.clone())
//!         .epsilon(1.0)
//!         .delta(1.0 / (n * n))
//!         .passes(h.budget)
//!         .step_scale(h.step)
//!         .clip(h.clip)
//!         .allow_non_private_constants(true) // M_j from the data, as in the papers
//!         .build()?;
//!     let (fitted, fit_seconds) = timed(|| solver.fit_seeded(&data, seed));
//!     Ok(RunOutput { coefficients: fitted?.model.coefficients, fit_seconds })
//! };
//! let task = Task {
//!     id: TaskId::new("california-std", "dp-cd", "paper"),
//!     grid: Grid { steps: vec![0.3, 1.0], clips: vec![30.0, 300.0], budgets: vec![2] },
//!     fit: Box::new(fit),
//!     objective: Box::new(|w: &[f64]| objective.value(w).unwrap_or(f64::INFINITY)),
//!     objective_star: f_star,
//! };
//! let protocol = Protocol { tuning_runs: 2, final_runs: 3, seed: 1 };
//! let blocks = run_tasks(&[task], &protocol, ProgressMode::Silent, |_| Ok(()))?;
//! let b = &blocks[0];
//! // The mean relative error (F(w) - F*) / F* of the fresh runs beats the start, w = 0.
//! assert!(b.final_stats.mean < at_zero);
//! println!("step {}, clip {}: {:.4} (w = 0: {at_zero:.4})", b.tuned.step, b.tuned.clip, b.final_stats.mean);
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod checkpoint;
pub mod data;
pub mod experiments;
pub mod figures;
pub mod report;
pub mod runner;
pub mod studies;
pub mod synthetic;
