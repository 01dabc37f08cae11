//! Project commands: `cargo xtask reproduce`, `cargo xtask study`, `cargo xtask adult-export`,
//! `cargo xtask privacy`, `cargo xtask optimum`, `cargo xtask fit`, `cargo xtask predict`,
//! `cargo xtask federated-demo`.
//!
//! Each subcommand lives in its own module; this file only dispatches.

mod federated;
mod optimum;
mod reproduce;
mod study;

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
    /// Run one registered measurement study of the docs (`dp_bench::studies`): prints its
    /// table or JSON; without a name, lists them.
    Study(study::Args),
    /// Write the adult experiment's splits as CSV for the peer script
    /// (`benches/peers/adult.py`).
    AdultExport(study::ExportArgs),
    /// Privacy calculator: epsilon of a plan, the noise for a target, RDP at an order
    /// (alias of `dp-erm privacy`).
    Privacy(dp_erm_cli::privacy::Args),
    /// Certified non-private optimum F* of a problem on a data file.
    Optimum(optimum::Args),
    /// Train a private linear model on a CSV / LIBSVM file and save the releasable model
    /// (alias of `dp-erm fit`).
    Fit(Box<dp_erm_cli::fit::FitArgs>),
    /// Predict with a saved model, and score it when the file has labels (alias of
    /// `dp-erm predict`).
    Predict(dp_erm_cli::fit::PredictArgs),
    /// Run the distributed private Frank-Wolfe with K party processes and a server
    /// process on loopback (gRPC, mutual TLS); check it against the in-process run.
    FederatedDemo(federated::Args),
    /// Run one party of the distributed private Frank-Wolfe (gRPC service, mutual TLS)
    /// with its column file; prints `listening on HOST:PORT`.
    FederatedParty(dp_federated::cli::PartyArgs),
    /// Run the server of one distributed private Frank-Wolfe fit against the parties'
    /// addresses; prints the fit as JSON.
    FederatedServer(dp_federated::cli::ServerArgs),
}

fn main() {
    // Help and version print in full with exit code 0; bad arguments print clap's whole
    // error (what is wrong, the possible values, the usage line) with exit code 2.
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
            // Colours only on a terminal; plain text when captured.
            let _ = err.print();
            std::process::exit(2);
        }
    };
    let result: Result<()> = match cli.command {
        Command::Reproduce(args) => reproduce::run(args),
        Command::Study(args) => study::run(args),
        Command::AdultExport(args) => study::export(args),
        Command::Privacy(args) => dp_erm_cli::privacy::run(args),
        Command::Optimum(args) => optimum::run(args),
        Command::Fit(args) => dp_erm_cli::fit::run_fit(*args),
        Command::Predict(args) => dp_erm_cli::fit::run_predict(args),
        Command::FederatedDemo(args) => federated::run(args),
        Command::FederatedParty(args) => match dp_federated::cli::run_party(args) {
            Ok(dp_federated::grpc::Served::ExitInjected) => {
                eprintln!("party: exiting on the injected `exit` fault");
                std::process::exit(3);
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e.into()),
        },
        Command::FederatedServer(args) => dp_federated::cli::run_server(args)
            .map(|json| println!("{json}"))
            .map_err(Into::into),
    };
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(2);
    }
}
