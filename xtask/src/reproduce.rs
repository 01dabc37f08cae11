//! `cargo xtask reproduce [EXPERIMENT] [--profile quick|paper] [--out DIR] [--seed N]`
//! (`dp-scd` also takes `--problems A,B` and `--resume`; `adult` takes `--methods A,B`).
//!
//! With no experiment name, runs every experiment in `dp_bench::experiments::REGISTRY`.
//! Afterwards writes `OUT/index.md`, linking the report and figures of every experiment
//! found in `OUT`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
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
    /// dp-scd only: continue the run saved in `OUT/dp-scd/checkpoint.json`, skipping its
    /// finished blocks (a checkpoint of other settings, seed, profile, code or data is
    /// refused). Without it a dp-scd run starts afresh and moves the checkpoint aside.
    #[arg(long)]
    pub resume: bool,
    /// dp-scd only: the problems to run, comma-separated, as the report names them
    /// (`adult/svm` or `adult-svm`) or by data set (`adult`); all when omitted.
    #[arg(long, value_delimiter = ',')]
    pub problems: Vec<String>,
    /// adult only: the methods to run, comma-separated, by their keys in
    /// `summary.json` (e.g. `dp-cd-support,dp-sgd-private`); all when omitted. The report
    /// then holds those rows (and the peers' and baselines').
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<String>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let profile: Profile = args.profile.parse()?;
    let selected: Vec<&experiments::Experiment> = match &args.experiment {
        Some(name) => vec![experiments::find(name)?],
        None => experiments::REGISTRY.iter().collect(),
    };
    if (args.resume || !args.problems.is_empty())
        && selected.iter().any(|e| e.name != experiments::dp_scd::NAME)
    {
        bail!(
            "--resume and --problems apply to the dp-scd experiment only: run `cargo xtask reproduce dp-scd ...`"
        );
    }
    if !args.methods.is_empty() && selected.iter().any(|e| e.name != experiments::adult::NAME) {
        bail!("--methods applies to the adult experiment only: run `cargo xtask reproduce adult --methods ...`");
    }
    let scd_options = experiments::dp_scd::RunOptions {
        resume: args.resume,
        problems: args.problems.clone(),
        stop_after_blocks: None,
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
        if e.name == experiments::dp_scd::NAME {
            let settings = experiments::dp_scd::Settings::for_profile(config.profile);
            experiments::dp_scd::run_with_options(&config, &settings, &scd_options)?;
        } else if e.name == experiments::adult::NAME && !args.methods.is_empty() {
            let settings = experiments::adult::Settings {
                only: args.methods.clone(),
                ..experiments::adult::Settings::for_profile(config.profile)
            };
            experiments::adult::run_with(&config, &settings)?;
        } else {
            (e.run)(&config)?;
        }
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
