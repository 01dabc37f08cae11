//! Project commands: `cargo xtask reproduce`, `cargo xtask privacy`, `cargo xtask optimum`.

use anyhow::Result;
use clap::{Parser, Subcommand};

/// dp-erm project commands.
#[derive(Parser)]
#[command(name = "xtask", about = "dp-erm project commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce the papers' experiments (all of them at the quick profile by default).
    Reproduce,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Reproduce => {
            anyhow::bail!("no experiment is implemented yet")
        }
    }
}
