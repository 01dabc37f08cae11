//! Does the paper's tuning protocol close the gap to the DP-CD paper's Table 2 on the raw
//! problems? The quick profile tunes DP-CD over 5 steps x 15 clips with 3 runs per point;
//! the paper tunes over 10 steps x 100 clips with 5 runs per point and reports the mean of
//! 10 fresh runs. This runs the DP-CD experiment on the named problems with exactly the
//! paper's DP-CD grid and run counts, at the named pass counts only (DP-SGD and DP-SCD get
//! one grid point each: they are not what this measures), and writes the usual
//! `summary.json` / `report.md` into `OUT/dp-cd/`.
//!
//! ```sh
//! cargo xtask study table2-tuning OUT [PROBLEMS] [PASSES]
//! # e.g. OUT = /tmp/t2, PROBLEMS = electricity-raw,california-raw, PASSES = 50
//! ```

use crate::experiments::dp_cd::{run_with, ProblemName, Settings};
use crate::experiments::{ExperimentConfig, Profile};
use crate::runner::ProgressMode;
use anyhow::{bail, Result};

pub(super) fn run(args: &[String]) -> Result<()> {
    let Some(out) = args.first() else {
        bail!("usage: table2-tuning OUT [PROBLEMS] [PASSES]");
    };
    let names = args
        .get(1)
        .map(String::as_str)
        .unwrap_or("electricity-raw,california-raw");
    let passes: Vec<u64> = super::list(args, 2, &[50])?;
    super::no_more(&args[args.len().min(3)..], "OUT [PROBLEMS] [PASSES]")?;
    let mut problems = Vec::new();
    for name in names.split(',') {
        match ProblemName::ALL.iter().find(|p| p.as_str() == name) {
            Some(&p) => problems.push(p),
            None => bail!("unknown problem {name:?}"),
        }
    }
    let mut settings = Settings::for_profile(Profile::Paper);
    settings.sgd_steps.truncate(1);
    settings.sgd_clips = settings.sgd_clips.get(44).into_iter().copied().collect();
    settings.scd_batches.truncate(1);
    settings.scd_clips.truncate(1);
    settings.passes = passes;
    settings.problems = problems;
    let config = ExperimentConfig {
        profile: Profile::Paper,
        out_dir: out.into(),
        seed: 20221021,
        progress: ProgressMode::Lines,
    };
    run_with(&config, &settings)
}
