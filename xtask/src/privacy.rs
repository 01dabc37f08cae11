//! `cargo xtask privacy` (not implemented yet).

/// Arguments of `cargo xtask privacy`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("cargo xtask privacy is not implemented yet")
}
