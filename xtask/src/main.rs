//! Project commands: `cargo xtask reproduce`, `cargo xtask privacy`, `cargo xtask optimum`.
//!
//! Each subcommand lives in its own module; this file only dispatches.

mod optimum;
mod privacy;
mod reproduce;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// dp-erm project commands.
#[derive(Parser)]
#[command(name = "xtask", about = "dp-erm project commands", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce the papers' experiments (every experiment at the quick profile by default).
    Reproduce(reproduce::Args),
    /// Privacy calculator: epsilon of a plan, the noise for a target, RDP at an order.
    Privacy(privacy::Args),
    /// Certified non-private optimum F* of a problem on a data file.
    Optimum(optimum::Args),
}

fn main() {
    // Bad arguments get a one-line error (help and version still print in full).
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            use clap::error::ErrorKind;
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                err.exit();
            }
            let text = err.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!("{}", first.trim());
            std::process::exit(2);
        }
    };
    let result: Result<()> = match cli.command {
        Command::Reproduce(args) => reproduce::run(args),
        Command::Privacy(args) => privacy::run(args),
        Command::Optimum(args) => optimum::run(args),
    };
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(2);
    }
}
