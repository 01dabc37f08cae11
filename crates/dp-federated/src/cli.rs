//! The party and server processes' command lines, shared by the `dp-federated-party` /
//! `dp-federated-server` binaries and `cargo xtask federated-party` / `federated-server`.

use crate::coordinator;
use crate::grpc::{serve_party, CoordinatorTls, ExitMode, Grpc, PartyTls, Served};
use crate::job::{InjectedFault, Job, PartyData, PartyHost, PartySecrets};
use crate::tls::read_pem;
use crate::FedError;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of a party process.
#[derive(Debug, clap::Args)]
pub struct PartyArgs {
    /// The party's column file (CSV: header `y,<global feature indices>`).
    #[arg(long)]
    pub data: PathBuf,
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
    /// File holding a secret seed (a decimal u64) for the party's generators, for
    /// reproducible tests and demos only: anyone who reads it can replay the party's
    /// noise. Without it (the default) the generators are seeded from the operating
    /// system's entropy and nothing that replays the noise exists outside the process.
    #[arg(long)]
    pub seed_file: Option<PathBuf>,
    /// The party's TLS certificate (PEM, name `party-K`).
    #[arg(long)]
    pub cert: PathBuf,
    /// The party's TLS key (PEM).
    #[arg(long)]
    pub key: PathBuf,
    /// CA the server's client certificate must chain to (PEM).
    #[arg(long)]
    pub client_ca: PathBuf,
    /// The number of parties K of the protocol this party takes part in (its own
    /// configuration: a job announcing another K is refused).
    #[arg(long)]
    pub parties: usize,
    /// Refuse any job whose joint epsilon exceeds this: the composition of all K
    /// parties' releases, since one person's row is at every party (computed by the party
    /// from the public setup).
    #[arg(long, default_value_t = f64::INFINITY)]
    pub max_epsilon: f64,
    /// Exit when no request came for this long.
    #[arg(long, default_value_t = 120)]
    pub idle_secs: u64,
    /// Test only: misbehave on purpose (exit:T, hang:T, malformed:T, wrong-round:T).
    #[arg(long, default_value = "none", hide = true)]
    pub inject_fault: InjectedFault,
}

/// Runs a party until the server's Stop or its idle time; prints
/// `listening on HOST:PORT` first.
pub fn run_party(args: PartyArgs) -> Result<Served, FedError> {
    let data = PartyData::read_csv(&args.data)?;
    let secrets = match &args.seed_file {
        Some(path) => {
            let seed_text = std::fs::read_to_string(path)
                .map_err(|e| FedError::io(format!("reading {}", path.display()), e))?;
            let seed: u64 = seed_text.trim().parse().map_err(|_| {
                FedError::Data(format!("{}: not a decimal u64 seed", path.display()))
            })?;
            PartySecrets::from_u64(seed)
        }
        None => PartySecrets::from_os_entropy()?,
    };
    let tls = PartyTls {
        cert: read_pem(&args.cert)?,
        key: read_pem(&args.key)?,
        client_ca: read_pem(&args.client_ca)?,
    };
    let host =
        PartyHost::new(data, secrets, args.parties, args.max_epsilon).with_fault(args.inject_fault);
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

/// Arguments of a server process.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Party addresses, in party order (repeat once per party).
    #[arg(long = "party", required = true)]
    pub parties: Vec<String>,
    /// The server's client certificate (PEM).
    #[arg(long)]
    pub cert: PathBuf,
    /// The server's client key (PEM).
    #[arg(long)]
    pub key: PathBuf,
    /// CA every party's certificate must chain to (PEM).
    #[arg(long)]
    pub party_ca: PathBuf,
    /// l1 radius eta.
    #[arg(long)]
    pub radius: f64,
    /// Rounds T.
    #[arg(long)]
    pub rounds: u64,
    /// Sketch dimension m.
    #[arg(long)]
    pub sketch_dim: usize,
    /// Public sketch seed.
    #[arg(long, default_value_t = 0)]
    pub sketch_seed: u64,
    /// Target epsilon.
    #[arg(long)]
    pub epsilon: f64,
    /// Target delta.
    #[arg(long)]
    pub delta: f64,
    /// Public bound on |x_ij|.
    #[arg(long)]
    pub feature_bound: f64,
    /// Public bound on |y_i|.
    #[arg(long)]
    pub label_bound: f64,
    /// Coordinates sampled per party per round (default: the smallest block).
    #[arg(long)]
    pub tau: Option<usize>,
    /// Deadline of every answer, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub deadline_ms: u64,
    /// Include every iterate in the output.
    #[arg(long)]
    pub iterates: bool,
}

/// Runs one fit and returns its JSON (the iterates also as raw `u64` bits).
pub fn run_server(args: ServerArgs) -> Result<String, FedError> {
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
