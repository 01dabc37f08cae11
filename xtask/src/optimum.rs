//! `cargo xtask optimum` (not implemented yet).

/// Arguments of `cargo xtask optimum`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("cargo xtask optimum is not implemented yet")
}
