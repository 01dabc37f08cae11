//! One configuration over real gRPC on loopback (parties as tasks of this process, each
//! behind its own TCP listener and TLS identity), for experiments: iterates, bytes per
//! party and direction, wall time.

use crate::coordinator::{self, FitOutcome};
use crate::error::{ConfigError, FedError, Result};
use crate::grpc::{serve_party, CoordinatorTls, ExitMode, Grpc, PartyTls};
use crate::inproc::InProcess;
use crate::party::{PartyData, PartyHost, PartySecrets};
use crate::tls::TestPki;
use dp_optim::DistDpFw;
use serde::Serialize;
use std::time::{Duration, Instant};

/// One run's result.
#[derive(Debug, Clone, Serialize)]
pub struct LoopbackRun {
    /// The fit (with every iterate when asked for).
    pub fit: FitOutcome,
    /// Wall time of the fit in seconds, connection and setup included (party services
    /// already listening; certificate generation excluded).
    pub seconds: f64,
}

/// Runs `job` over gRPC with mutual TLS on 127.0.0.1: `data[k]` and `secrets[k]` go to
/// party `k`. `deadline` bounds every answer.
pub fn run(
    job: &DistDpFw,
    data: Vec<PartyData>,
    secrets: Vec<PartySecrets>,
    deadline: Duration,
    keep_iterates: bool,
) -> Result<LoopbackRun> {
    let k = data.len();
    if secrets.len() != k {
        return Err(ConfigError::SecretCount {
            parties: k,
            secrets: secrets.len(),
        }
        .into());
    }
    let pki = TestPki::generate(k)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| FedError::io("starting the party runtime", e))?;
    let mut addrs = Vec::with_capacity(k);
    let mut tasks = Vec::with_capacity(k);
    for (i, (d, s)) in data.into_iter().zip(secrets).enumerate() {
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .map_err(|e| FedError::io("binding a loopback port", e))?;
        addrs.push(
            listener
                .local_addr()
                .map_err(|e| FedError::io("reading the bound address", e))?
                .to_string(),
        );
        let tls = PartyTls {
            cert: pki.parties[i].cert.clone(),
            key: pki.parties[i].key.clone(),
            client_ca: pki.coordinator_ca.clone(),
        };
        let host = PartyHost::new(d, s, k, f64::INFINITY);
        tasks.push(rt.spawn(async move {
            serve_party(
                host,
                listener,
                &tls,
                Duration::from_secs(60),
                ExitMode::Service,
            )
            .await
        }));
    }
    let ctls = CoordinatorTls {
        cert: pki.coordinator.cert.clone(),
        key: pki.coordinator.key.clone(),
        party_ca: pki.party_ca.clone(),
    };
    let start = Instant::now();
    let result = Grpc::connect(&addrs, &ctls, deadline)
        .and_then(|mut t| coordinator::run(&mut t, job, keep_iterates));
    let seconds = start.elapsed().as_secs_f64();
    // The parties stop on the server's Stop; a party that did not is ended here.
    rt.shutdown_timeout(Duration::from_secs(2));
    Ok(LoopbackRun {
        fit: result?,
        seconds,
    })
}

/// The same configuration through the in-process transport, timed the same way.
pub fn run_in_process(
    job: &DistDpFw,
    data: Vec<PartyData>,
    secrets: Vec<PartySecrets>,
    deadline: Duration,
    keep_iterates: bool,
) -> Result<LoopbackRun> {
    let k = data.len();
    if secrets.len() != k {
        return Err(ConfigError::SecretCount {
            parties: k,
            secrets: secrets.len(),
        }
        .into());
    }
    let hosts = data
        .into_iter()
        .zip(secrets)
        .map(|(d, s)| PartyHost::new(d, s, k, f64::INFINITY))
        .collect();
    let start = Instant::now();
    let mut t = InProcess::start(hosts, deadline);
    let fit = coordinator::run(&mut t, job, keep_iterates)?;
    Ok(LoopbackRun {
        fit,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// A small synthetic LASSO problem for demos and tests: `n x p` features uniform in
/// `[-1, 1]` (returned as columns), labels `y = 0.5 x_0 - 0.3 x_1 + 0.2 x_2 + noise`,
/// clipped to `[-1, 1]`; deterministic in `seed`. Bounds: `B = 1`, `Y = 1`.
pub fn synthetic_lasso(n: usize, p: usize, seed: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
    use rand::{Rng, SeedableRng};
    let mut g = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|_| (0..n).map(|_| g.random_range(-1.0..=1.0)).collect())
        .collect();
    let truth = [0.5, -0.3, 0.2];
    let labels = (0..n)
        .map(|i| {
            let s: f64 = truth
                .iter()
                .zip(&columns)
                .map(|(w, c)| w * c[i])
                .sum::<f64>();
            (s + 0.05 * g.random_range(-1.0..=1.0)).clamp(-1.0, 1.0)
        })
        .collect();
    (columns, labels)
}
