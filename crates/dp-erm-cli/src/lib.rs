//! The `dp-erm` command-line program, as a library so that `cargo xtask fit / predict /
//! privacy` (aliases kept for the repository's scripts) run the same code.
//!
//! ```text
//! dp-erm fit --data train.csv --target class --positive UP --negative DOWN \
//!     --loss logistic --algorithm dp-cd --epsilon 1 --delta 1e-6 --feature-bound 1 \
//!     --test-fraction 0.2 --model-out model.json
//! dp-erm predict --model model.json --data new.csv --out predictions.csv
//! dp-erm privacy epsilon --mechanism gaussian --sigma 2 --steps 100 --delta 1e-5
//! ```
//!
//! Install it with `cargo install --path crates/dp-erm-cli` (the binary is `dp-erm`).

pub mod fit;
pub mod input;
pub mod privacy;

use clap::{Parser, Subcommand};

/// The `dp-erm` program's arguments.
#[derive(Parser, Debug)]
#[command(
    name = "dp-erm",
    about = "Differentially private linear models from your own data, and a privacy calculator",
    version
)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands of `dp-erm`.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Train a private linear model on a CSV / LIBSVM file and save the releasable model.
    Fit(Box<fit::FitArgs>),
    /// Predict with a saved model (and score it when the file has labels).
    Predict(fit::PredictArgs),
    /// Privacy calculator: epsilon of a plan, the noise for a target, RDP at an order.
    Privacy(privacy::Args),
}

/// Runs one command.
///
/// # Errors
/// The command's error (bad arguments, unreadable data, a fit that fails), to be
/// printed as `error: ...` with exit code 2.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Fit(args) => fit::run_fit(*args),
        Command::Predict(args) => fit::run_predict(args),
        Command::Privacy(args) => privacy::run(args),
    }
}

/// Parses the arguments the way both `dp-erm` and `cargo xtask` do: help and version
/// print in full with exit code 0; bad arguments print clap's whole error (what is
/// wrong, the possible values, the usage line) and exit with code 2.
pub fn parse_or_exit<P: Parser>() -> P {
    match P::try_parse() {
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
            // Colours only on a terminal; plain text when captured.
            let _ = err.print();
            std::process::exit(2);
        }
    }
}

/// Prints `error: ...` (with its whole chain of causes) and exits with code 2 when
/// `result` is an error.
pub fn exit_on_error(result: anyhow::Result<()>) {
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(2);
    }
}
