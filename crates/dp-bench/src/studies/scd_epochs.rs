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
//! `cargo xtask study scd-epochs [ROUNDS [PROBLEM]]` (Linux
//! only; `PROBLEM`: only the problems whose name contains it). It also prints two
//! per-row costs that bound the ratios: a logistic Newton step in a dependent chain
//! (sequential SDCA cannot overlap them) and one normal draw from ChaCha20 (DP-SCD draws
//! `p + 1` of them per step at `L = 1`).

use anyhow::Result;

use super::{median, thread_cpu_ns};
use dp_accounting::mechanisms::Gaussian;
use dp_models::constants::coordinate_smoothness;
use dp_models::preprocess::normalize_rows;
use dp_models::{Dataset, DenseDesign, DualLoss, Logistic, Loss, Squared, L2};
use dp_optim::{CdParams, DpScdParams, SdcaParams, Smoothness, Solver};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

const P: u64 = 5;
/// Thread CPU time per measurement (the counter advances in scheduler ticks, ~4 ms).
const MIN_NS: u64 = 300_000_000;
/// One timed fit.
type Fit<'a> = Box<dyn Fn() -> Result<()> + 'a>;

const SOLVERS: [&str; 4] = ["cd", "sdca", "dp-scd L=1", "dp-scd L=100"];

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
    // Fixed seeds (timing only): a seed replays the noise, so never publish these fits.
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

/// Thread-CPU nanoseconds per call of `f` (repeated for >= 0.3 s of CPU).
fn per_call_ns(mut f: impl FnMut() -> f64) -> Result<f64> {
    let t0 = thread_cpu_ns()?;
    let (mut t1, mut calls, mut sink) = (t0, 0u64, 0.0);
    while t1 - t0 < MIN_NS {
        sink += f();
        calls += 1;
        t1 = thread_cpu_ns()?;
    }
    std::hint::black_box(sink);
    Ok((t1 - t0) as f64 / calls as f64)
}

/// The per-row costs that bound a dual epoch, each over `n` rows, in ns per row:
/// `n` logistic Newton steps in a dependent chain (each step's `p` depends on the
/// previous step, as in sequential SDCA) and one standard normal draw from ChaCha20
/// (the noise of DP-SCD: `p` draws on `v` and one on `alpha` per step at `L = 1`), and
/// the ChaCha20 output one draw consumes (one `next_u64`).
fn components(n: usize) -> Result<(f64, f64, f64)> {
    let newton = per_call_ns(|| {
        let mut d = 0.1;
        for i in 0..n {
            let y = if i % 2 == 0 { 1.0 } else { -1.0 };
            let alpha = y * 0.3;
            d = 0.5 * d + Logistic.dual_step(alpha, d, y, 0.7);
        }
        d
    })? / n as f64;
    let gauss = Gaussian::new(1.0)?;
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let normal = per_call_ns(|| (0..n).map(|_| gauss.sample(&mut rng)).sum::<f64>())? / n as f64;
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let raw = per_call_ns(|| (0..n).map(|_| rng.next_u64() as f64).sum::<f64>())? / n as f64;
    Ok((newton, normal, raw))
}

pub(super) fn run(args: &[String]) -> Result<()> {
    let rounds: usize = super::arg(args, 0, 5)?;
    // Optional: only the problems whose name contains this string.
    let only = args.get(1).cloned().unwrap_or_default();
    super::no_more(&args[args.len().min(2)..], "[ROUNDS [PROBLEM]]")?;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let only_arg = if only.is_empty() {
        String::new()
    } else {
        format!(" {only}")
    };
    println!(
        "command: cargo xtask study scd-epochs {rounds}{only_arg}\n\
         thread CPU time, median of {rounds} rounds (each: repeated fits for >= 0.3 s of CPU), P = {P}; load average {}; SIMD level {}\n",
        load.split_whitespace().next().unwrap_or("?"),
        dp_models::simd::level_name()
    );
    let mut results = Vec::new();
    if "electricity-logistic".contains(only.as_str()) {
        let elec = normalised(&crate::data::electricity()?)?;
        results.push(("electricity-logistic", measure(&elec, Logistic, rounds)?));
    }
    if "synthetic-ridge-20000x90".contains(only.as_str()) {
        let ridge = synthetic(20_000, 90)?;
        results.push((
            "synthetic-ridge-20000x90",
            measure(&ridge, Squared::half(), rounds)?,
        ));
    }
    let (newton, normal, raw) = components(45_312)?;
    println!(
        "per-row components: logistic Newton step in a dependent chain {newton:.1} ns; \
         one N(0, 1) draw from ChaCha20 (ziggurat) {normal:.1} ns, of which the 8 bytes \
         of ChaCha20 output (one next_u64) {raw:.1} ns\n"
    );
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
