//! The server (coordinator) of the distributed private Frank-Wolfe, as its own process:
//! dials every party (`--party HOST:PORT`, in party order) over gRPC with mutual TLS,
//! runs the fit and prints the result as JSON on standard output (the iterates also as
//! raw `u64` bits). On a party failure it
//! stops every party, prints the error (naming the party and the round) and exits 1.

use clap::Parser;
use dp_federated::coordinator;
use dp_federated::grpc::{CoordinatorTls, Grpc};
use dp_federated::job::Job;
use dp_federated::tls::read_pem;
use dp_federated::FedError;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Run the server of one fit.
#[derive(Parser)]
#[command(name = "dp-federated-server", version)]
struct Args {
    /// Party addresses, in party order (repeat once per party).
    #[arg(long = "party", required = true)]
    parties: Vec<String>,
    /// The server's client certificate (PEM).
    #[arg(long)]
    cert: PathBuf,
    /// The server's client key (PEM).
    #[arg(long)]
    key: PathBuf,
    /// CA every party's certificate must chain to (PEM).
    #[arg(long)]
    party_ca: PathBuf,
    /// l1 radius eta.
    #[arg(long)]
    radius: f64,
    /// Rounds T.
    #[arg(long)]
    rounds: u64,
    /// Sketch dimension m.
    #[arg(long)]
    sketch_dim: usize,
    /// Public sketch seed.
    #[arg(long, default_value_t = 0)]
    sketch_seed: u64,
    /// Target epsilon.
    #[arg(long)]
    epsilon: f64,
    /// Target delta.
    #[arg(long)]
    delta: f64,
    /// Public bound on |x_ij|.
    #[arg(long)]
    feature_bound: f64,
    /// Public bound on |y_i|.
    #[arg(long)]
    label_bound: f64,
    /// Coordinates sampled per party per round (default: the smallest block).
    #[arg(long)]
    tau: Option<usize>,
    /// Deadline of every answer, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    deadline_ms: u64,
    /// Include every iterate in the output.
    #[arg(long)]
    iterates: bool,
}

fn main() {
    let args = Args::parse();
    match run(args) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("dp-federated-server: {e}");
            std::process::exit(1);
        }
    }
}

fn run(args: Args) -> Result<String, FedError> {
    let mut job = Job::new(
        args.radius,
        args.rounds,
        args.sketch_dim,
        args.sketch_seed,
        args.epsilon,
        args.delta,
        args.feature_bound,
        args.label_bound,
    );
    job.tau = args.tau;
    let tls = CoordinatorTls {
        cert: read_pem(&args.cert)?,
        key: read_pem(&args.key)?,
        party_ca: read_pem(&args.party_ca)?,
    };
    let start = Instant::now();
    let mut t = Grpc::connect(&args.parties, &tls, Duration::from_millis(args.deadline_ms))?;
    let fit = coordinator::run(&mut t, &job, args.iterates)?;
    let seconds = start.elapsed().as_secs_f64();
    // The iterates also as raw bits, so that a reader can check bit-equality without
    // relying on its float parser.
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<u64>>();
    let iterate_bits: Vec<Vec<u64>> = fit.iterates.iter().map(|x| bits(x)).collect();
    let out = serde_json::json!({
        "coefficient_bits": bits(&fit.coefficients),
        "iterate_bits": iterate_bits,
        "fit": fit,
        "seconds": seconds,
    });
    serde_json::to_string(&out).map_err(|e| FedError::Config(e.to_string()))
}
