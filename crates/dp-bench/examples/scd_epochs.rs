//! Per-epoch CPU cost of SDCA and DP-SCD against the CD pass, side by side in one run,
//! measured in **thread CPU time** (`/proc/thread-self/schedstat`, nanoseconds on the
//! CPU), which, unlike wall time, does not count the time the thread waits for a core
//! on a loaded machine. The same problems and solvers as the criterion bench
//! `benches/dp_scd.rs` (Electricity logistic + (1e-4/2)||w||^2 and a dense 20,000 x 90
//! ridge problem, rows normalised; CD with the coordinate constants, SDCA with L = 1,
//! DP-SCD at epsilon 1, delta 1e-3, C = 0.5, L = 1 and 100). Every fit is timed with 1 and
//! `P` passes, rounds interleave the solvers, and the per-epoch cost is
//! `(median T(P) - median T(1)) / (P - 1)`: the fixed costs of a fit cancel.
//!
//! `cargo run --release -p dp-bench --example scd_epochs [-- ROUNDS]` (Linux only).
//!
//! The fits use fixed seeds so that runs compare; a seed lets anyone replay the noise, so
//! these fits are measurements, never releases. A model meant for publication is fitted
//! with `fit` (noise from the operating system), which leaves no seed behind.

use anyhow::{Context, Result};
use dp_models::constants::coordinate_smoothness;
use dp_models::preprocess::normalize_rows;
use dp_models::{Dataset, DenseDesign, DualLoss, Logistic, Loss, Squared, L2};
use dp_optim::{CdParams, DpScdParams, SdcaParams, Smoothness, Solver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

const P: u64 = 5;
/// Thread CPU time per measurement (the counter advances in scheduler ticks, ~4 ms).
const MIN_NS: u64 = 300_000_000;
/// One timed fit.
type Fit<'a> = Box<dyn Fn() -> Result<()> + 'a>;

const SOLVERS: [&str; 4] = ["cd", "sdca", "dp-scd L=1", "dp-scd L=100"];

fn thread_cpu_ns() -> Result<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat")
        .context("reading /proc/thread-self/schedstat")?;
    s.split_whitespace()
        .next()
        .context("empty schedstat")?
        .parse()
        .context("parsing schedstat")
}

fn normalised(d: &Dataset<DenseDesign>) -> Result<Dataset<DenseDesign>> {
    Ok(Dataset::new(normalize_rows(d.x())?, d.y().to_vec())?)
}

fn synthetic(n: usize, p: usize) -> Result<Dataset<DenseDesign>> {
    let mut rng = ChaCha20Rng::seed_from_u64(2021);
    let x: Vec<f64> = (0..n * p).map(|_| rng.random::<f64>() - 0.5).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| (0..10).map(|j| x[i * p + j]).sum::<f64>() + 0.1 * rng.random::<f64>())
        .collect();
    normalised(&Dataset::new(DenseDesign::from_row_major(n, p, &x)?, y)?)
}

/// Median thread-CPU milliseconds of one fit of each (solver, passes in {1, P}).
fn measure<L: DualLoss + Loss + Clone>(
    data: &Dataset<DenseDesign>,
    loss: L,
    rounds: usize,
) -> Result<Vec<[f64; 2]>> {
    let pen = L2::new(1e-4)?;
    let m = coordinate_smoothness(&loss, data.x())?;
    let mut fits: Vec<Vec<Fit<'_>>> = Vec::new();
    for s in SOLVERS {
        let mut per = Vec::new();
        for passes in [1, P] {
            let f: Fit<'_> = match s {
                "cd" => {
                    let cd = CdParams::new(loss.clone(), pen.clone())
                        .passes(passes)
                        .smoothness(Smoothness::Given(m.clone()))
                        .build()?;
                    Box::new(move || cd.fit_seeded(data, 1).map(|_| ()).map_err(Into::into))
                }
                "sdca" => {
                    let sd = SdcaParams::new(loss.clone(), pen.clone())
                        .passes(passes)
                        .build()?;
                    Box::new(move || sd.fit_seeded(data, 1).map(|_| ()).map_err(Into::into))
                }
                _ => {
                    let batch = if s.ends_with("=1") { 1 } else { 100 };
                    let dp = DpScdParams::new(loss.clone(), pen.clone())
                        .epsilon(1.0)
                        .delta(1e-3)
                        .passes(passes)
                        .batch_size(batch)
                        .clip(0.5)
                        .build()?;
                    dp.fit_seeded(data, 1)?; // the calibration is memoised per solver
                    Box::new(move || dp.fit_seeded(data, 1).map(|_| ()).map_err(Into::into))
                }
            };
            per.push(f);
        }
        fits.push(per);
    }
    let mut times = vec![[Vec::new(), Vec::new()]; SOLVERS.len()];
    for _ in 0..rounds {
        for (si, per) in fits.iter().enumerate() {
            for (k, f) in per.iter().enumerate() {
                let t0 = thread_cpu_ns()?;
                let mut reps = 0u32;
                let mut t1 = t0;
                while t1 - t0 < MIN_NS {
                    f()?;
                    reps += 1;
                    t1 = thread_cpu_ns()?;
                }
                times[si][k].push((t1 - t0) as f64 / 1e6 / f64::from(reps));
            }
        }
    }
    Ok(times
        .into_iter()
        .map(|[a, b]| [median(a), median(b)])
        .collect())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn main() -> Result<()> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(5);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "command: cargo run --release -p dp-bench --example scd_epochs -- {rounds}\n\
         thread CPU time, median of {rounds} rounds (each: repeated fits for >= 0.3 s of CPU), P = {P}; load average {}\n",
        load.split_whitespace().next().unwrap_or("?")
    );
    let elec = normalised(&dp_bench::data::electricity()?)?;
    let ridge = synthetic(20_000, 90)?;
    let results = [
        ("electricity-logistic", measure(&elec, Logistic, rounds)?),
        (
            "synthetic-ridge-20000x90",
            measure(&ridge, Squared::half(), rounds)?,
        ),
    ];
    println!("| problem | solver | fit x1 ms | fit x{P} ms | epoch ms |");
    println!("|---|---|---|---|---|");
    let epoch = |t: &[f64; 2]| (t[1] - t[0]) / (P - 1) as f64;
    for (name, r) in &results {
        for (s, t) in SOLVERS.iter().zip(r) {
            println!(
                "| {name} | {s} | {:.3} | {:.3} | {:.3} |",
                t[0],
                t[1],
                epoch(t)
            );
        }
    }
    println!("\n| problem | ratio | per epoch | whole 1-pass fit | target |");
    println!("|---|---|---|---|---|");
    for (name, r) in &results {
        for (num, den, target) in [(1, 0, 1.5), (2, 1, 1.3), (3, 1, 1.3)] {
            println!(
                "| {name} | {} / {} | {:.2} | {:.2} | <= {target} |",
                SOLVERS[num],
                SOLVERS[den],
                epoch(&r[num]) / epoch(&r[den]),
                r[num][0] / r[den][0]
            );
        }
    }
    Ok(())
}
