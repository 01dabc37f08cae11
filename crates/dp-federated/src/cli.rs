//! The party and server processes' command lines, shared by the `dp-federated-party` /
//! `dp-federated-server` binaries and `cargo xtask federated-party` / `federated-server`.

use crate::coordinator;
use crate::grpc::{serve_party, CoordinatorTls, ExitMode, Grpc, PartyTls, Served};
use crate::party::{InjectedFault, PartyData, PartyHost, PartySecrets};
use crate::tls::read_pem;
use crate::{wire, ConfigError, DataError, FedError};
use dp_optim::dist_fw::RadiusMode;
use dp_optim::{DistDpFw, DistDpFwParams};
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
            let seed: u64 = seed_text.trim().parse().map_err(|e| DataError::Seed {
                file: path.clone(),
                source: e,
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
    /// The public parameters of the fit.
    #[command(flatten)]
    pub job: JobArgs,
    /// Deadline of every answer, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub deadline_ms: u64,
    /// Include every iterate in the output.
    #[arg(long)]
    pub iterates: bool,
}

/// The job's flags on the server's command line: every public parameter of a
/// [`DistDpFwParams`] the protocol carries (`K` is the number of `--party` addresses).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct JobArgs {
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
    /// Radius of each party's l1 ball: per-party (eta each) or split (eta / K each).
    #[arg(long, default_value = "per-party", value_parser = parse_radius_mode)]
    pub radius_mode: RadiusMode,
    /// Fraction of each round's budget spent on the selection.
    #[arg(long, default_value_t = 0.5)]
    pub selection_share: f64,
    /// Residual clip C_res (default: B K r_k + Y).
    #[arg(long)]
    pub residual_clip: Option<f64>,
}

fn parse_radius_mode(s: &str) -> Result<RadiusMode, String> {
    wire::radius_mode(s).ok_or_else(|| format!("{s:?}: expected per-party or split"))
}

impl JobArgs {
    /// The job for `parties` parties (checked by the caller's `build()`).
    pub fn params(&self, parties: usize) -> DistDpFwParams {
        let mut p = DistDpFwParams::new(self.radius)
            .parties(parties)
            .iterations(self.rounds)
            .sketch_dim(self.sketch_dim)
            .sketch_seed(self.sketch_seed)
            .epsilon(self.epsilon)
            .delta(self.delta)
            .feature_bound(self.feature_bound)
            .label_bound(self.label_bound)
            .radius_mode(self.radius_mode)
            .selection_share(self.selection_share);
        if let Some(t) = self.tau {
            p = p.tau(t);
        }
        if let Some(c) = self.residual_clip {
            p = p.residual_clip(c);
        }
        p
    }

    /// The flags that give back `job` (numbers in Rust's shortest round-trip form, so
    /// the server process runs exactly this job). A job the protocol cannot carry is
    /// refused as [`wire::setup`] refuses it.
    pub fn to_args(job: &DistDpFw) -> Result<Vec<String>, FedError> {
        // The same check as the setup message (the calibration).
        wire::setup(job, 0, 1, 1)?;
        let privacy = job.privacy();
        let (b, y) = job.bounds();
        let mut out: Vec<String> = [
            ("--radius", job.radius().to_string()),
            ("--rounds", job.iterations().to_string()),
            ("--sketch-dim", job.sketch_dim().to_string()),
            ("--sketch-seed", job.sketch_seed().to_string()),
            ("--epsilon", privacy.epsilon.get().to_string()),
            ("--delta", privacy.delta.get().to_string()),
            ("--feature-bound", b.to_string()),
            ("--label-bound", y.to_string()),
            ("--radius-mode", job.radius_mode().name().to_string()),
            ("--selection-share", job.selection_share().to_string()),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_string(), v])
        .collect();
        if let Some(t) = job.tau() {
            out.extend(["--tau".to_string(), t.to_string()]);
        }
        if let Some(c) = job.residual_clip() {
            out.extend(["--residual-clip".to_string(), c.to_string()]);
        }
        Ok(out)
    }
}

/// Runs one fit and returns its JSON (the iterates also as raw `u64` bits).
pub fn run_server(args: ServerArgs) -> Result<String, FedError> {
    let job = args.job.params(args.parties.len()).build()?;
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
    serde_json::to_string(&out).map_err(|e| ConfigError::EncodeOutput(e).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Server {
        #[command(flatten)]
        job: JobArgs,
    }

    /// The process launcher starts the server with `JobArgs::to_args(job)`: the server
    /// must rebuild exactly `job`, the optional parameters included (before, the
    /// launcher dropped the radius mode, the selection share and the residual clip, so
    /// a process run of such a job ran another one).
    #[test]
    fn the_job_flags_give_back_the_job() {
        let base = DistDpFwParams::new(0.7)
            .parties(3)
            .iterations(12)
            .sketch_dim(5)
            .sketch_seed(99)
            .epsilon(0.1 + 0.2)
            .delta(1.0 / 3.0 * 1e-5)
            .feature_bound(1.5)
            .label_bound(0.25);
        let full = base
            .clone()
            .tau(2)
            .radius_mode(RadiusMode::Split)
            .selection_share(0.35)
            .residual_clip(2.75);
        for prm in [base, full] {
            let job = prm.build().unwrap();
            let mut argv = vec!["server".to_string()];
            argv.extend(JobArgs::to_args(&job).unwrap());
            let back = Server::parse_from(argv).job.params(3).build().unwrap();
            assert_eq!(
                wire::setup(&back, 0, 10, 6).unwrap(),
                wire::setup(&job, 0, 10, 6).unwrap()
            );
        }
    }
}
