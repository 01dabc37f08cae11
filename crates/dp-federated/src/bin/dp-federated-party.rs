//! One party of the distributed private Frank-Wolfe, as its own process: serves the
//! `Party` gRPC service (mutual TLS) on `--listen` with its column file, until the
//! server sends Stop or no request comes for `--idle-secs`. Prints
//! `listening on HOST:PORT` on its first line of output.

use clap::Parser;

/// Run one party.
#[derive(Parser)]
#[command(name = "dp-federated-party", version)]
struct Cli {
    #[command(flatten)]
    args: dp_federated::cli::PartyArgs,
}

fn main() {
    match dp_federated::cli::run_party(Cli::parse().args) {
        Ok(dp_federated::grpc::Served::ExitInjected) => {
            eprintln!("dp-federated-party: exiting on the injected `exit` fault");
            std::process::exit(3);
        }
        Ok(_) => {}
        Err(e) => {
            eprintln!("dp-federated-party: {e}");
            std::process::exit(1);
        }
    }
}
