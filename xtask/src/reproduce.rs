//! `cargo xtask reproduce` (not implemented yet).

/// Arguments of `cargo xtask reproduce`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("cargo xtask reproduce is not implemented yet")
}
