//! Scaling of a CD / DP-CD pass with the size of the design, and fixed costs; one size
//! per process (so that the peak memory `VmHWM` of `/proc/self/status` is that size's
//! own), one JSON object on stdout. `benches/scaling.py` runs every size and writes the
//! `## Scaling` section of `docs/performance.md` from these objects.
//!
//! ```sh
//! cargo build --release -p xtask
//! # one size: time CD and DP-CD passes; prints one JSON object
//! target/release/xtask study scaling pass --kind dense|sparse --n N --p P \
//!     [--density 0.01] [--build matrix|slice|deferred] [--max-passes 20] [--no-fit]
//! # PLD calibration of a Poisson-subsampled Gaussian plan (epsilon 1, delta 1e-5)
//! target/release/xtask study scaling pld [--steps 10000] [--rates 0.001,0.01,0.1] [--reps 3]
//! ```
//!
//! Problem: ridge regression, loss `(1/2)(z - y)^2`, penalty `L2(1e-3)`, so every step
//! moves its coordinate (no zero steps of an L1 penalty: the work per pass does not
//! depend on the data). Features uniform on `[-1, 1]` (sparse: each entry present with
//! probability `density`, positions drawn by geometric skips), labels uniform on
//! `[-1, 1]`, fixed seeds. Public smoothness bounds `M_j = 1` (`|x_ij| <= 1`; the bound
//! is loose for sparse columns, which does not change the work of a pass). DP-CD at
//! `epsilon = 1`, `delta = 1 / n^2`, clip 1.
//!
//! Dense `--build` modes (the peak memory is what differs):
//! * `matrix`: the generated column-major buffer moves into a `DMatrix` (no copy), then
//!   `DenseDesign::from_matrix` adds the row-major copy: two copies of the values.
//! * `slice`: `DenseDesign::from_col_major(n, p, &buffer)` as a caller holding its own
//!   buffer does (e.g. the `pass-times` study): the buffer, the `DMatrix` copy and the
//!   row-major copy, three copies.
//! * `deferred`: `DenseDesign::from_matrix_deferred_rows`: one copy (CD / DP-CD read
//!   columns only, so the row-major copy is never built).
//!
//! Timing: after a discarded warm-up fit of one pass, fits of 1 and `P` passes, each the
//! fastest of `inner` back-to-back fits (other processes only add time); the marginal
//! cost of a pass is `(t(P) - t(1)) / (P - 1)`. DP-CD's calibration (its public `plan`,
//! timed on a fresh solver, fastest of `inner`) is subtracted from its fits, since its
//! cost differs between 1 and `P` passes. `P` and `inner` are chosen from the warm-up
//! fit so that small sizes are timed over enough work.

use anyhow::{bail, Context, Result};
use dp_accounting::calibrate::{
    calibrate_sigma, epsilon, Accountant, Plan, PlanMechanism, RdpConversion,
};
use dp_accounting::{Delta, Epsilon, NoiseMultiplier, SamplingRate};
use dp_models::constants::{Provenance, Tagged};
use dp_models::{Dataset, DenseDesign, Design, SparseDesign, Squared, L2};
use dp_optim::kernel::ColumnKernels;
use dp_optim::{CdParams, DpCdParams, Smoothness, Solver};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::time::Instant;

use super::{opt, opt_num};

const DATA_SEED: u64 = 20_261_124;
const FIT_SEED: u64 = 1;
const LAMBDA: f64 = 1e-3;

pub(super) fn run(args: &[String]) -> Result<()> {
    let out = match args.first().map(String::as_str) {
        Some("pass") => {
            let values = [
                "--kind",
                "--n",
                "--p",
                "--density",
                "--build",
                "--max-passes",
            ];
            super::known_flags(&args[1..], &values, &["--no-fit"])?;
            pass(&args[1..])?
        }
        Some("pld") => {
            super::known_flags(&args[1..], &["--steps", "--rates", "--reps"], &[])?;
            pld(&args[1..])?
        }
        _ => bail!("usage: scaling pass --kind dense|sparse --n N --p P [...] | scaling pld [...]"),
    };
    println!("{out}");
    Ok(())
}

/// `VmHWM` and `VmRSS` of this process, in bytes.
fn memory() -> Result<Value> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let field = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    };
    Ok(json!({"vm_hwm_bytes": field("VmHWM:"), "vm_rss_bytes": field("VmRSS:")}))
}

fn uniform_vec(rng: &mut ChaCha8Rng, len: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(len);
    v.extend((0..len).map(|_| rng.random_range(-1.0..1.0)));
    v
}

fn pass(args: &[String]) -> Result<Value> {
    let kind = opt(args, "--kind").context("--kind dense|sparse")?;
    let n: usize = opt_num(args, "--n", 0)?;
    let p: usize = opt_num(args, "--p", 0)?;
    let density: f64 = opt_num(args, "--density", 0.01)?;
    let max_passes: u64 = opt_num(args, "--max-passes", 20)?;
    let build = opt(args, "--build").unwrap_or("matrix");
    let no_fit = args.iter().any(|a| a == "--no-fit");
    if n == 0 || p == 0 {
        bail!("--n and --p must be positive");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(DATA_SEED);
    let start = Instant::now();
    let mut out = match kind {
        "dense" => {
            let values = uniform_vec(&mut rng, n * p);
            let y = uniform_vec(&mut rng, n);
            let x = match build {
                "matrix" => DenseDesign::from_matrix(DMatrix::from_vec(n, p, values))?,
                "slice" => DenseDesign::from_col_major(n, p, &values)?,
                "deferred" => {
                    DenseDesign::from_matrix_deferred_rows(DMatrix::from_vec(n, p, values))?
                }
                other => bail!("--build {other}: matrix, slice or deferred"),
            };
            let data = Dataset::new(x, y)?;
            let built = start.elapsed().as_secs_f64();
            let mut out = json!({"build": build, "row_copy_built": data.x().has_row_copy()});
            finish(&mut out, &data, built, max_passes, no_fit)?;
            out["row_copy_built_after_fits"] = json!(data.x().has_row_copy());
            out
        }
        "sparse" => {
            if !(density > 0.0 && density < 1.0) {
                bail!("--density must be in (0, 1)");
            }
            // Geometric skips: the gap to the next present entry of a column.
            let log_q = (1.0 - density).ln();
            let expected = (n as f64 * p as f64 * density * 1.01) as usize + 16;
            let mut triplets = Vec::with_capacity(expected);
            for j in 0..p {
                let mut i = 0usize;
                loop {
                    let u: f64 = 1.0 - rng.random::<f64>(); // in (0, 1]
                    let gap = (u.ln() / log_q).floor();
                    if gap >= (n - i) as f64 {
                        break;
                    }
                    i += gap as usize;
                    triplets.push((i, j, rng.random_range(-1.0..1.0)));
                    i += 1;
                    if i >= n {
                        break;
                    }
                }
            }
            let y = uniform_vec(&mut rng, n);
            let x = SparseDesign::from_triplets(n, p, &triplets)?;
            drop(triplets);
            let data = Dataset::new(x, y)?;
            let built = start.elapsed().as_secs_f64();
            let mut out = json!({"density_asked": density});
            finish(&mut out, &data, built, max_passes, no_fit)?;
            out
        }
        other => bail!("--kind {other}: dense or sparse"),
    };
    out["kind"] = json!(kind);
    Ok(out)
}

/// Times CD and DP-CD on `data` and fills `out`.
fn finish<D: ColumnKernels>(
    out: &mut Value,
    data: &Dataset<D>,
    build_seconds: f64,
    max_passes: u64,
    no_fit: bool,
) -> Result<()> {
    let x = data.x();
    let (n, p, nnz) = (x.n_samples(), x.n_features(), x.nnz());
    out["n"] = json!(n);
    out["p"] = json!(p);
    out["nnz"] = json!(nnz);
    out["value_bytes"] = json!(8 * nnz);
    out["build_seconds"] = json!(build_seconds);
    out["memory_after_build"] = memory()?;
    if no_fit {
        return Ok(());
    }
    let ones = vec![1.0; p];
    let m = || Smoothness::Given(Tagged::public(ones.clone()));
    let make_cd = |k: u64| -> Result<_> {
        Ok(CdParams::new(Squared::half(), L2::new(LAMBDA)?)
            .passes(k)
            .smoothness(m())
            .build()?)
    };
    let make_dp = |k: u64| -> Result<_> {
        Ok(DpCdParams::new(Squared::half(), L2::new(LAMBDA)?)
            .epsilon(1.0)
            .delta(1.0 / (n as f64 * n as f64))
            .passes(k)
            .clip(1.0)
            .smoothness(m())
            .build()?)
    };
    // Passes and repetitions from one warm-up fit of one pass.
    let warm = {
        let s = make_cd(1)?;
        let t = Instant::now();
        s.fit_seeded(data, FIT_SEED)?;
        t.elapsed().as_secs_f64()
    };
    let passes = if warm < 0.05 {
        max_passes
    } else if warm < 0.5 {
        max_passes.min(10)
    } else {
        max_passes.min(4)
    }
    .max(2);
    let inner = ((1.0 / (warm * (passes + 1) as f64)).round() as usize).clamp(2, 30);
    out["warmup_seconds"] = json!(warm);
    out["passes"] = json!([1, passes]);
    out["inner"] = json!(inner);

    let mut results = Vec::new();
    {
        let (t1, tp) = time_fits(data, passes, inner, make_cd, |_| Ok(()))?;
        results.push(summary("cd", t1, tp, [0.0, 0.0], passes, nnz));
    }
    {
        let plan = |s: &dp_optim::DpCd<Squared, L2>| -> Result<()> {
            s.plan(n, &ones, Provenance::PublicBound)?;
            Ok(())
        };
        make_dp(1)?.fit_seeded(data, FIT_SEED)?; // warm-up
        let (t1, tp) = time_fits(data, passes, inner, make_dp, plan)?;
        let cal = [t1.1, tp.1];
        results.push(summary("dp-cd", t1, tp, cal, passes, nnz));
    }
    out["results"] = json!(results);
    out["memory_at_end"] = memory()?;
    Ok(())
}

/// (fastest fit, fastest calibration) at 1 and at `passes` passes.
type Pair = (f64, f64);

fn time_fits<D, S, F, C>(
    data: &Dataset<D>,
    passes: u64,
    inner: usize,
    make: F,
    plan: C,
) -> Result<(Pair, Pair)>
where
    D: Design,
    S: Solver<D>,
    F: Fn(u64) -> Result<S>,
    C: Fn(&S) -> Result<()>,
{
    let mut best = [(f64::INFINITY, f64::INFINITY); 2];
    // Alternate 1 and P passes so that a slow spell of the machine hits both.
    for _ in 0..inner {
        for (slot, k) in [(0, 1), (1, passes)] {
            let s = make(k)?;
            let t = Instant::now();
            s.fit_seeded(data, FIT_SEED)?;
            best[slot].0 = best[slot].0.min(t.elapsed().as_secs_f64());
            let s = make(k)?;
            let t = Instant::now();
            plan(&s)?;
            best[slot].1 = best[slot].1.min(t.elapsed().as_secs_f64());
        }
    }
    Ok((best[0], best[1]))
}

fn summary(solver: &str, t1: Pair, tp: Pair, cal: [f64; 2], passes: u64, nnz: usize) -> Value {
    let per_pass = ((tp.0 - cal[1]) - (t1.0 - cal[0])) / (passes - 1) as f64;
    json!({
        "solver": solver,
        "fit_seconds": [t1.0, tp.0],
        "calibration_seconds": cal,
        "seconds_per_pass": per_pass,
        "ns_per_nonzero": per_pass * 1e9 / nnz as f64,
        "gb_per_s": 8.0 * nnz as f64 / per_pass / 1e9,
    })
}

/// PLD calibration of `steps` Poisson-subsampled Gaussian releases at epsilon 1,
/// delta 1e-5, for each sampling rate (fastest of `reps`, and every time).
fn pld(args: &[String]) -> Result<Value> {
    let steps: u64 = opt_num(args, "--steps", 10_000)?;
    let reps: usize = opt_num(args, "--reps", 3)?;
    let rates: Vec<f64> = opt(args, "--rates")
        .unwrap_or("0.001,0.01,0.1")
        .split(',')
        .map(|s| s.parse::<f64>().context("--rates"))
        .collect::<Result<_>>()?;
    let (eps, delta) = (Epsilon::new(1.0)?, Delta::new(1e-5)?);
    let mut rows = Vec::new();
    for q in rates {
        let plan = Plan {
            mechanism: PlanMechanism::SubsampledGaussian {
                sampling_rate: SamplingRate::new(q)?,
            },
            steps,
            accountant: Accountant::Pld,
        };
        let mut times = Vec::new();
        let mut cal = None;
        for _ in 0..reps {
            let t = Instant::now();
            let c = calibrate_sigma(&plan, eps, delta)?;
            times.push(t.elapsed().as_secs_f64());
            cal = Some(c);
        }
        let c = cal.context("--reps must be positive")?;
        // What the search is made of: one PLD evaluation at the result, and the RDP
        // calibration that gives the PLD search its starting point.
        let (mut one_eval, mut rdp) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..reps {
            let t = Instant::now();
            epsilon(&plan, NoiseMultiplier::new(c.noise_multiplier)?, delta)?;
            one_eval = one_eval.min(t.elapsed().as_secs_f64());
            let rdp_plan = Plan {
                accountant: Accountant::Rdp(RdpConversion::Improved),
                ..plan
            };
            let t = Instant::now();
            calibrate_sigma(&rdp_plan, eps, delta)?;
            rdp = rdp.min(t.elapsed().as_secs_f64());
        }
        rows.push(json!({
            "one_pld_epsilon_seconds": one_eval, "rdp_calibration_seconds": rdp,
            "sampling_rate": q, "steps": steps,
            "seconds": times,
            "seconds_min": times.iter().copied().fold(f64::INFINITY, f64::min),
            "noise_multiplier": c.noise_multiplier, "epsilon": c.epsilon, "delta": c.delta,
        }));
    }
    Ok(json!({"target_epsilon": 1.0, "delta": 1e-5, "results": rows}))
}
