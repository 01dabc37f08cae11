//! The server (coordinator) of the distributed private Frank-Wolfe, as its own process:
//! dials every party (`--party HOST:PORT`, in party order) over gRPC with mutual TLS,
//! runs the fit and prints the result as JSON on standard output (the iterates also as
//! raw `u64` bits). On a party failure it stops every party, prints the error (naming
//! the party and the round) and exits 1.

use clap::Parser;

/// Run the server of one fit.
#[derive(Parser)]
#[command(name = "dp-federated-server", version)]
struct Cli {
    #[command(flatten)]
    args: dp_federated::cli::ServerArgs,
}

fn main() {
    match dp_federated::cli::run_server(Cli::parse().args) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("dp-federated-server: {e}");
            std::process::exit(1);
        }
    }
}
