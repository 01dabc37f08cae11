//! `cargo xtask study NAME [ARGS..]`: one registered measurement study of
//! `dp_bench::studies` (its table or JSON on standard output); `cargo xtask study` alone
//! lists them. `cargo xtask adult-export DIR`: the adult experiment's splits as CSV for
//! the peer script (`benches/peers/adult.py`).

use std::path::PathBuf;

use anyhow::Result;
use dp_bench::studies::{find, STUDIES};

/// Arguments of `cargo xtask study`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The study (`cargo xtask study` lists them).
    pub name: Option<String>,
    /// The study's own arguments, passed on as given.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let Some(name) = args.name else {
        println!("Studies (cargo xtask study NAME ARGS):\n");
        for s in STUDIES {
            println!(
                "  {:<24} {}\n  {:<24} args: {}\n",
                s.name, s.about, "", s.usage
            );
        }
        return Ok(());
    };
    let study = find(&name)?;
    (study.run)(&args.args).map_err(|e| e.context(format!("study {name} (args: {})", study.usage)))
}

/// Arguments of `cargo xtask adult-export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Directory to write `{train,test,tune_fit,tune_val}.csv` and `meta.json` into.
    pub dir: PathBuf,
}

/// Writes the adult experiment's splits (`dp_bench::experiments::adult::export_splits`).
pub fn export(args: ExportArgs) -> Result<()> {
    dp_bench::experiments::adult::export_splits(&args.dir)?;
    eprintln!("adult-export: wrote the splits to {}", args.dir.display());
    Ok(())
}
