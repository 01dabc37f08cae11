//! The harness every experiment runs on: its output folder, its clocks, its partial and
//! final `summary.json`, its report and the papers' tuning protocol.
//!
//! An experiment is data ([`super::Experiment`]: a name, a line saying what it reproduces
//! and a run function) plus, in its folder `experiments/<name>/`, its settings and methods
//! (`mod.rs`) and its report (`report.rs`). The run function opens a [`Run`], hands its
//! tasks to [`Run::tune`] (the [`crate::runner`] protocol: tuning runs at every grid point,
//! fresh runs at the best) or to its own loop where the paper's protocol differs, saves
//! every finished block with [`Run::save_partial`], and closes with
//! [`Run::write_summary`] and [`Run::write_report`]. The wall time, the CPU time and the
//! load average come from the run ([`Run::usage`]), so every report states them the same
//! way.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use super::ExperimentConfig;
use crate::report::{load_average, process_cpu_seconds, write_atomic, write_json_atomic, Metadata};
use crate::runner::{run_tasks, BlockResult, Protocol, Task};

/// Resources a run used: wall seconds, CPU seconds of the process (user + system, `None`
/// where the platform does not tell) and the 1-minute load average at its start and end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Wall seconds since [`Run::start`].
    pub wall: f64,
    /// CPU seconds of the process since [`Run::start`].
    pub cpu: Option<f64>,
    /// Load average at the start and now.
    pub load: (Option<f64>, Option<f64>),
}

/// One run of one experiment: where it writes and since when it runs.
#[derive(Debug)]
pub struct Run<'c> {
    /// The configuration it was started with.
    pub config: &'c ExperimentConfig,
    name: &'static str,
    dir: PathBuf,
    wall: Instant,
    cpu0: Option<f64>,
    load0: Option<f64>,
}

impl<'c> Run<'c> {
    /// Starts the clocks and creates `config.out_dir/<name>/`.
    pub fn start(config: &'c ExperimentConfig, name: &'static str) -> Result<Self> {
        let wall = Instant::now();
        let cpu0 = process_cpu_seconds();
        let load0 = load_average();
        let dir = config.out_dir.join(name);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Self {
            config,
            name,
            dir,
            wall,
            cpu0,
            load0,
        })
    }

    /// The experiment's output folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Wall seconds since the start.
    pub fn wall_seconds(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }

    /// CPU seconds of the process since the start (`None` where unknown).
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.cpu0.zip(process_cpu_seconds()).map(|(a, b)| b - a)
    }

    /// Wall, CPU and load now.
    pub fn usage(&self) -> Usage {
        Usage {
            wall: self.wall_seconds(),
            cpu: self.cpu_seconds(),
            load: (self.load0, load_average()),
        }
    }

    /// The metadata block of `summary.json` with the given wall seconds.
    pub fn metadata(&self, wall_seconds: f64) -> Metadata {
        Metadata::collect(
            self.name,
            self.config.profile.name(),
            self.config.seed,
            Some(wall_seconds),
        )
    }

    fn partial_path(&self) -> PathBuf {
        self.dir.join("summary.partial.json")
    }

    /// Saves the records so far to `summary.partial.json` (what an interrupted run leaves).
    pub fn save_partial<T: Serialize + ?Sized>(&self, records: &T) -> Result<()> {
        write_json_atomic(&self.partial_path(), records)
    }

    /// Writes `summary.json` and removes `summary.partial.json`.
    pub fn write_summary<T: Serialize + ?Sized>(&self, summary: &T) -> Result<()> {
        write_json_atomic(&self.dir.join("summary.json"), summary)?;
        let _ = std::fs::remove_file(self.partial_path());
        Ok(())
    }

    /// Writes `report.md`.
    pub fn write_report(&self, report: &str) -> Result<()> {
        write_atomic(&self.dir.join("report.md"), report.as_bytes())
    }

    /// The papers' tuning protocol ([`run_tasks`]) over `tasks` with the run's seed and
    /// progress mode: every finished block goes to `on_block` (which typically turns it
    /// into a record and calls [`Run::save_partial`]).
    pub fn tune(
        &self,
        tasks: &[Task<'_>],
        tuning_runs: usize,
        final_runs: usize,
        on_block: impl FnMut(&BlockResult) -> Result<()>,
    ) -> Result<Vec<BlockResult>> {
        let protocol = Protocol {
            tuning_runs,
            final_runs,
            seed: self.config.seed,
        };
        run_tasks(tasks, &protocol, self.config.progress, on_block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Profile;
    use crate::runner::{Grid, Hyper, ProgressMode, RunOutput, TaskId};

    #[test]
    fn a_run_writes_partial_then_summary_and_report() {
        let out = std::env::temp_dir().join(format!("dp-bench-harness-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let config = ExperimentConfig {
            profile: Profile::Smoke,
            out_dir: out.clone(),
            seed: 5,
            progress: ProgressMode::Silent,
        };
        let run = Run::start(&config, "toy").unwrap();
        assert!(run.dir().is_dir());
        let task = Task {
            id: TaskId::new("toy", "exact", "none"),
            grid: Grid {
                steps: vec![1.0, 2.0],
                clips: vec![1.0],
                budgets: vec![1],
            },
            fit: Box::new(|h: &Hyper, _| {
                Ok(RunOutput {
                    coefficients: vec![h.step],
                    fit_seconds: 0.0,
                })
            }),
            objective: Box::new(|w: &[f64]| (w[0] - 2.0).powi(2) + 1.0),
            objective_star: 1.0,
        };
        let mut records = Vec::new();
        let blocks = run
            .tune(&[task], 1, 2, |b| {
                records.push(b.final_stats.mean);
                run.save_partial(&records)
            })
            .unwrap();
        assert_eq!(blocks[0].tuned.step, 2.0);
        assert!(run.dir().join("summary.partial.json").is_file());
        let summary = crate::report::Summary {
            meta: run.metadata(run.wall_seconds()),
            records,
        };
        run.write_summary(&summary).unwrap();
        run.write_report("# toy\n").unwrap();
        assert!(!run.dir().join("summary.partial.json").exists());
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.dir().join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(v["experiment"], "toy");
        assert_eq!(v["seed"], 5);
        assert_eq!(v["records"], serde_json::json!([0.0]));
        assert_eq!(
            std::fs::read_to_string(run.dir().join("report.md")).unwrap(),
            "# toy\n"
        );
        let u = run.usage();
        assert!(u.wall >= 0.0);
        std::fs::remove_dir_all(&out).unwrap();
    }
}
