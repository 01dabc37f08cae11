//! The papers' experiments, each runnable from `cargo xtask reproduce <name>`.
//!
//! An experiment is a name and a function from an [`ExperimentConfig`] to files under
//! `config.out_dir/<name>/`. [`REGISTRY`] lists them; adding an experiment is one line there.

pub mod dp_cd;
pub mod dp_gcd;
pub mod dp_scd;

use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{bail, Result};
use dp_models::{Design, Loss, Penalty};

use crate::runner::ProgressMode;

/// How much of the paper's grid to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// A coarse grid sized to finish every experiment in a few minutes on 2 cores.
    Quick,
    /// The paper's full grid and run counts.
    Paper,
    /// A tiny grid for end-to-end tests (seconds in debug builds); numbers are not meaningful.
    Smoke,
}

impl Profile {
    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Paper => "paper",
            Profile::Smoke => "smoke",
        }
    }
}

impl FromStr for Profile {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "quick" => Ok(Profile::Quick),
            "paper" => Ok(Profile::Paper),
            "smoke" => Ok(Profile::Smoke),
            other => bail!("unknown profile '{other}': expected quick, paper or smoke"),
        }
    }
}

/// What every experiment receives.
#[derive(Debug, Clone)]
pub struct ExperimentConfig {
    /// Grid size.
    pub profile: Profile,
    /// Base output directory; the experiment writes into `out_dir/<name>/`.
    pub out_dir: PathBuf,
    /// Base seed of every run.
    pub seed: u64,
    /// Progress display.
    pub progress: ProgressMode,
}

/// A registered experiment.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// Name on the command line and output subdirectory.
    pub name: &'static str,
    /// One-line description.
    pub about: &'static str,
    /// Runs it.
    pub run: fn(&ExperimentConfig) -> Result<()>,
}

/// Every experiment, in the order `cargo xtask reproduce` runs them.
pub const REGISTRY: &[Experiment] = &[
    Experiment {
        name: "dp-cd",
        about: "DP-CD paper (Mangold et al. 2022): Table 2, Table 3, Figures 1-2",
        run: dp_cd::run,
    },
    Experiment {
        name: "dp-gcd",
        about: "DP-GCD paper (Mangold et al. 2023): Table 3, Figures 1-2",
        run: dp_gcd::run,
    },
    Experiment {
        name: "dp-scd",
        about: "DP-SCD paper (Damaskinos et al. 2021): Figures 1-3",
        run: dp_scd::run,
    },
];

/// Looks an experiment up by name.
pub fn find(name: &str) -> Result<&'static Experiment> {
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<_> = REGISTRY.iter().map(|e| e.name).collect();
        anyhow::anyhow!(
            "unknown experiment '{name}': available are {}",
            names.join(", ")
        )
    })
}

/// `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + psi(w)`, evaluated directly (O(nnz)); used for
/// the relative error of every run, outside the timed solver region.
pub fn objective_value<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized>(
    x: &D,
    y: &[f64],
    loss: &L,
    penalty: &P,
    w: &[f64],
) -> f64 {
    if w.len() != x.n_features() || w.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    let mut z = vec![0.0; x.n_samples()];
    x.matvec(w, &mut z);
    let data: f64 = z
        .iter()
        .zip(y)
        .map(|(&zi, &yi)| loss.value(zi, yi))
        .sum::<f64>()
        / x.n_samples() as f64;
    data + penalty.value(w)
}
