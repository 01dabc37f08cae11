//! Whole-process benchmark of the distributed private Frank-Wolfe (Algorithm 2) on the
//! synthetic LASSO of [`synthetic_lasso`], one transport per call, for timing two
//! builds (or two transports) side by side from outside the process:
//!
//! ```text
//! cargo build --release -p dp-federated --bins --example dist_fw_bench
//! target/release/examples/dist_fw_bench MODE N P K T M FITS
//! ```
//!
//! `MODE` is one of
//! - `solver`: `DistDpFw` as a [`dp_optim::Solver`] on one dense dataset (every party
//!   simulated in the caller's thread; what the DP-FW experiment runs),
//! - `inproc`: the protocol over the in-process transport (parties on threads, protobuf
//!   bytes over channels),
//! - `tasks`: gRPC with mutual TLS on 127.0.0.1, parties as tasks of this process,
//! - `procs`: gRPC with mutual TLS on 127.0.0.1, every party and the server as its own
//!   OS process (`dp-federated-party` / `dp-federated-server` beside this example's
//!   directory, as `cargo build --release -p dp-federated --bins` leaves them).
//!
//! Each of the `FITS` fits uses the same seeds (sketch seed 7, party seeds 1000 + k, the
//! solver's generator seeded 2018; the solver mode builds its solver, calibration
//! included, in every fit), so every fit of a mode prints the same line: the FNV-1a hash
//! of the coefficients' bits (the bit-equality check between two builds), the first
//! coefficient's bits, the fit's wall seconds in this process (certificates and process
//! starts included) and `inner`, the transport's own timing of the fit (connections,
//! setup and rounds: the clock of the DP-FW report's transport section; `-` for the
//! solver). Benchmark seeds on synthetic data: never a release.

use dp_federated::loopback::{self, synthetic_lasso};
use dp_federated::party::PartySecrets;
use dp_federated::processes::{run_server, Launcher, Processes};
use dp_federated::split_contiguous;
use dp_federated::tls::TestPki;
use dp_models::{Dataset, DenseDesign};
use dp_optim::{DistDpFw, DistDpFwParams, Solver};
use rand::SeedableRng;
use std::error::Error;
use std::path::PathBuf;
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn Error>>;

fn fnv(v: &[f64]) -> u64 {
    v.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
        x.to_bits()
            .to_le_bytes()
            .iter()
            .fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
    })
}

fn make_job(k: usize, t: u64, m: usize) -> Res<DistDpFw> {
    Ok(DistDpFwParams::new(1.0)
        .parties(k)
        .iterations(t)
        .sketch_dim(m)
        .sketch_seed(7)
        .epsilon(1.0)
        .delta(1e-5)
        .feature_bound(1.0)
        .label_bound(1.0)
        .build()?)
}

fn main() -> Res<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 7 {
        return Err("usage: dist_fw_bench solver|inproc|tasks|procs N P K T M FITS".into());
    }
    let mode = a[0].as_str();
    let num = |i: usize| -> Res<usize> { Ok(a[i].parse::<usize>()?) };
    let (n, p, k, t, m, fits) = (num(1)?, num(2)?, num(3)?, num(4)? as u64, num(5)?, num(6)?);
    let job = make_job(k, t, m)?;
    let (cols, y) = synthetic_lasso(n, p, 2018);
    let seeds: Vec<u64> = (0..k as u64).map(|i| 1000 + i).collect();
    let secrets = || {
        seeds
            .iter()
            .map(|&s| PartySecrets::from_u64(s))
            .collect::<Vec<_>>()
    };
    let deadline = Duration::from_secs(60);
    let flat: Vec<f64> = cols.iter().flatten().copied().collect();
    let dataset = Dataset::new(DenseDesign::from_col_major(n, p, &flat)?, y.clone())?;
    let data = split_contiguous(cols, y, k)?;
    let here = std::env::current_exe()?;
    let bin_dir: PathBuf = here
        .parent()
        .and_then(|d| d.parent())
        .ok_or("no binary directory")?
        .to_path_buf();
    for _ in 0..fits {
        let start = Instant::now();
        let (coefficients, inner): (Vec<f64>, Option<f64>) = match mode {
            "solver" => {
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2018);
                let fit = make_job(k, t, m)?.fit_with_rng(&dataset, &mut rng)?;
                (fit.coefficients().to_vec(), None)
            }
            "inproc" => {
                let r = loopback::run_in_process(&job, data.clone(), secrets(), deadline, false)?;
                (r.fit.coefficients, Some(r.seconds))
            }
            "tasks" => {
                let r = loopback::run(&job, data.clone(), secrets(), deadline, false)?;
                (r.fit.coefficients, Some(r.seconds))
            }
            "procs" => {
                let dir =
                    std::env::temp_dir().join(format!("dist-fw-bench-{}", std::process::id()));
                let pki = TestPki::generate(k)?;
                let party = Launcher::binary(bin_dir.join("dp-federated-party"));
                let server = Launcher::binary(bin_dir.join("dp-federated-server"));
                let mut procs = Processes::start_parties(&party, &dir, &data, &seeds, &pki, &[])?;
                let out = run_server(
                    &server,
                    &dir,
                    &procs.addrs,
                    &job,
                    deadline,
                    false,
                    Duration::from_secs(600),
                );
                procs.wait_all(Duration::from_secs(5));
                drop(procs);
                let _ = std::fs::remove_dir_all(&dir);
                let out = out?;
                let x = out
                    .coefficient_bits
                    .into_iter()
                    .map(f64::from_bits)
                    .collect();
                (x, Some(out.seconds))
            }
            _ => return Err(format!("unknown mode {mode}").into()),
        };
        println!(
            "{mode} n={n} p={p} k={k} t={t} m={m} hash={:016x} x0={:016x} seconds={:.4} inner={}",
            fnv(&coefficients),
            coefficients.first().map_or(0, |v| v.to_bits()),
            start.elapsed().as_secs_f64(),
            inner.map_or("-".to_string(), |s| format!("{s:.4}"))
        );
    }
    Ok(())
}
