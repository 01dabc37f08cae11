//! The DP-CD problem-definition sweep (`crate::experiments::dp_cd::sweep`): which lambda,
//! label convention and coordinate order reproduce the DP-CD paper's Table 2 on California
//! and Electricity. Prints the markdown table of `docs/reproduction-log.md`.
//!
//! ```sh
//! cargo xtask study definition-sweep [--seed N] [--rows FILE] [--skip N] [--smoke]
//! cargo xtask study definition-sweep --render FILE
//! ```
//! `--skip N` leaves out the first N candidates (to resume a sweep). `--rows FILE` appends each finished (candidate, problem)'s rows to FILE as JSON lines, so
//! an interrupted sweep keeps what it measured; `--render FILE` scores and prints the rows of
//! such a file without running anything. `--smoke` runs one candidate per data set on a
//! one-point grid (seconds; the numbers mean nothing).

use std::io::Write;

use crate::experiments::dp_cd::sweep::{self, SweepRow, SweepSettings};
use crate::experiments::dp_cd::{Model, Settings, PASSES};
use crate::experiments::Profile;
use anyhow::{Context, Result};

pub(super) fn run(args: &[String]) -> Result<()> {
    super::known_flags(
        args,
        &["--seed", "--rows", "--render", "--skip"],
        &["--smoke"],
    )?;
    let seed = super::opt_num(args, "--seed", 20_221_021u64)?;
    let rows_file = super::opt(args, "--rows");
    let render = super::opt(args, "--render");
    let smoke = args.iter().any(|a| a == "--smoke");
    let skip = super::opt_num(args, "--skip", 0usize)?;
    let mut s = SweepSettings::standard(seed);
    if smoke {
        s.grids = Settings::for_profile(Profile::Smoke);
        s.grids.passes = PASSES.to_vec();
        s.candidates.retain(|c| match c.1.model {
            Model::Lasso { lambda } => lambda == 1.0 && !c.1.centre_labels,
            Model::LogisticL2 { lambda } => lambda == 1e-5,
        });
    }
    let all = s.candidates.clone();
    s.candidates.drain(..skip.min(s.candidates.len()));
    let result = if let Some(path) = render {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
        let mut rows = Vec::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let row: SweepRow = serde_json::from_str(line)
                .with_context(|| format!("{path}: line {} is not a sweep row", i + 1))?;
            rows.push(row);
        }
        sweep::result_of(&all, rows)
    } else {
        let start = std::time::Instant::now();
        let mut out = rows_file
            .map(|path| {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path);
                file.with_context(|| format!("opening {path}"))
            })
            .transpose()?;
        let result = sweep::run(&s, |rows| {
            if let Some(f) = out.as_mut() {
                for r in rows {
                    writeln!(f, "{}", serde_json::to_string(r)?)?;
                }
                f.flush()?;
            }
            Ok(())
        })?;
        eprintln!("sweep: {:.1} s wall", start.elapsed().as_secs_f64());
        result
    };
    println!("{}", sweep::render(&result, &s));
    Ok(())
}
