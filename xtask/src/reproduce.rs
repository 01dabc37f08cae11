//! `cargo xtask reproduce [EXPERIMENT] [--profile quick|paper] [--out DIR] [--seed N]`.
//!
//! With no experiment name, runs every experiment in `dp_bench::experiments::REGISTRY`.
//! Afterwards writes `OUT/index.md`, linking the report and figures of every experiment
//! found in `OUT`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use dp_bench::experiments::{self, ExperimentConfig, Profile};
use dp_bench::runner::ProgressMode;

/// Arguments of `cargo xtask reproduce`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Experiment to run (e.g. `dp-cd`); every registered experiment when omitted.
    pub experiment: Option<String>,
    /// Grid size: `quick` (minutes on 2 cores), `paper` (the paper's full grid) or `smoke` (tiny, for tests).
    #[arg(long, default_value = "quick")]
    pub profile: String,
    /// Output directory; each experiment writes into `OUT/<experiment>/`.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Base seed of every run.
    #[arg(long, default_value_t = 20_221_021)]
    pub seed: u64,
    /// Print only one line per finished block (no progress bar).
    #[arg(long)]
    pub quiet: bool,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let profile: Profile = args.profile.parse()?;
    let selected: Vec<&experiments::Experiment> = match &args.experiment {
        Some(name) => vec![experiments::find(name)?],
        None => experiments::REGISTRY.iter().collect(),
    };
    let config = ExperimentConfig {
        profile,
        out_dir: args.out.clone(),
        seed: args.seed,
        progress: if args.quiet {
            ProgressMode::Lines
        } else {
            ProgressMode::Auto
        },
    };
    let start = Instant::now();
    for e in selected {
        eprintln!("== {} ({})", e.name, e.about);
        let t = Instant::now();
        (e.run)(&config)?;
        eprintln!(
            "== {} done in {:.1} s -> {}",
            e.name,
            t.elapsed().as_secs_f64(),
            args.out.join(e.name).display()
        );
    }
    let index = experiments::write_index(&args.out)?;
    eprintln!(
        "reproduce: total {:.1} s; index of the results in {}",
        start.elapsed().as_secs_f64(),
        index.display()
    );
    Ok(())
}
