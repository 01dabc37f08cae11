//! One party of the distributed private Frank-Wolfe, as its own process: serves the
//! `Party` gRPC service (mutual TLS) on `--listen` with its column file, until the
//! server sends Stop or no request comes for `--idle-secs`. Prints
//! `listening on HOST:PORT` on its first line of output.

use clap::Parser;
use dp_federated::grpc::{serve_party, ExitMode, PartyTls};
use dp_federated::job::{InjectedFault, PartyData, PartyHost, PartySecrets};
use dp_federated::tls::read_pem;
use dp_federated::FedError;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Run one party.
#[derive(Parser)]
#[command(name = "dp-federated-party", version)]
struct Args {
    /// The party's column file (CSV: header `y,<global feature indices>`).
    #[arg(long)]
    data: PathBuf,
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// File holding the party's secret seed (a decimal u64). It never leaves the party.
    #[arg(long)]
    seed_file: PathBuf,
    /// The party's TLS certificate (PEM, name `party-K`).
    #[arg(long)]
    cert: PathBuf,
    /// The party's TLS key (PEM).
    #[arg(long)]
    key: PathBuf,
    /// CA the server's client certificate must chain to (PEM).
    #[arg(long)]
    client_ca: PathBuf,
    /// Refuse any job whose epsilon for this party's own releases exceeds this.
    #[arg(long, default_value_t = f64::INFINITY)]
    max_epsilon: f64,
    /// Exit when no request came for this long.
    #[arg(long, default_value_t = 120)]
    idle_secs: u64,
    /// Test only: misbehave on purpose (exit:T, hang:T, malformed:T, wrong-round:T).
    #[arg(long, default_value = "none", hide = true)]
    inject_fault: InjectedFault,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(args) {
        eprintln!("dp-federated-party: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), FedError> {
    let data = PartyData::read_csv(&args.data)?;
    let seed_text = std::fs::read_to_string(&args.seed_file)
        .map_err(|e| FedError::io(format!("reading {}", args.seed_file.display()), e))?;
    let seed: u64 = seed_text.trim().parse().map_err(|_| {
        FedError::Data(format!(
            "{}: not a decimal u64 seed",
            args.seed_file.display()
        ))
    })?;
    let tls = PartyTls {
        cert: read_pem(&args.cert)?,
        key: read_pem(&args.key)?,
        client_ca: read_pem(&args.client_ca)?,
    };
    let host = PartyHost::new(data, PartySecrets::from_u64(seed), args.max_epsilon)
        .with_fault(args.inject_fault);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| FedError::io("starting the runtime", e))?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| FedError::io(format!("binding {}", args.listen), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| FedError::io("reading the bound address", e))?;
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on {addr}");
        let _ = out.flush();
        serve_party(
            host,
            listener,
            &tls,
            Duration::from_secs(args.idle_secs),
            ExitMode::Process,
        )
        .await
    })
}
