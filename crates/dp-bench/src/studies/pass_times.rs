//! Our side of the peer benchmark (`benches/peers/run.py`): writes the shared problems to
//! files once, then times our solvers on them with 1 and `hi` passes so that the
//! benchmark script can take the marginal cost of a pass, `(t(hi) - t(1)) / (hi - 1)`,
//! fixed costs (validation, calibration, objective) cancelling.
//!
//! ```sh
//! cargo build --release -p xtask
//! # write the dense LASSO and the sparse dorothea-like problems (raw little-endian files)
//! target/release/xtask study pass-times write DIR [--dense-n N]
//! # time our solvers on one problem; prints one JSON object
//! target/release/xtask study pass-times time DIR dense|sparse|electricity [--hi 11] [--batch-size 64] [--inner 3]
//! ```
//!
//! Files in `DIR` (all little-endian, read by numpy with `fromfile`):
//! * `dense_x.f64` (`n * p` values, column-major), `dense_y.f64`, `dense.json` (shape,
//!   seed, lambda);
//! * `sparse_indptr.i64`, `sparse_indices.i64`, `sparse_data.f64` (CSC), `sparse_y.f64`,
//!   `sparse.json`.
//!
//! Electricity is read from `crates/dp-bench/data/electricity.csv` by both sides (label
//! column `class`, `UP` = +1, `DOWN` = -1, every other column a feature, values clipped
//! to the public bound `|x| <= 1` as in the `csv_logistic_*` examples).

use crate::synthetic::{self, Coefficients, LinearParams, Response, Support};
use anyhow::{bail, Context, Result};
use dp_models::constants::{Provenance, Tagged};
use dp_models::io::{load_csv, CsvOptions, Target};
use dp_models::preprocess::clip_to_bound;
use dp_models::{
    Dataset, DenseDesign, Design, ElasticNet, Logistic, Loss, Penalty, SparseDesign, Squared, L1,
    L2,
};
use dp_optim::kernel::ColumnKernels;
use dp_optim::{
    Adjacency, CdParams, CoordinateOrder, DpCd, DpCdParams, DpSgd, DpSgdParams, Smoothness, Solver,
};
use serde_json::{json, Value};

use super::opt_num;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Dense LASSO: standard normal features, 10 active coefficients.
const DENSE_SEED: u64 = 20_240_601;
const DENSE_N: usize = 100_000;
const DENSE_P: usize = 100;
const DENSE_ACTIVE: usize = 10;
const DENSE_NOISE: f64 = 0.1;
/// `(1/2n) ||y - Xw||^2 + lambda ||w||_1`.
const DENSE_LAMBDA: f64 = 0.01;
/// Dorothea-like sparse LASSO (`dp_bench::synthetic::dorothea_like`, density about 0.9 %).
const SPARSE_SEED: u64 = 7;
const SPARSE_LAMBDA: f64 = 0.001;
/// Electricity: logistic + L2, as in the `csv_logistic_*` examples.
const ELEC_LAMBDA: f64 = 1e-5;
const ELEC_BOUND: f64 = 1.0;
/// Passes of the long fit and fits per timing (the fastest is kept).
type Timing = (u64, usize);
/// Seed of the timed fits (timing only).
const FIT_SEED: u64 = 1;

pub(super) fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("write") => {
            let dir = PathBuf::from(args.get(1).context("write DIR")?);
            super::known_flags(&args[2..], &["--dense-n"], &[])?;
            let n = opt_num(args, "--dense-n", DENSE_N)?;
            write(&dir, n)
        }
        Some("time") => {
            let dir = PathBuf::from(args.get(1).context("time DIR PROBLEM")?);
            let problem = args.get(2).context("time DIR PROBLEM")?.clone();
            super::known_flags(&args[3..], &["--hi", "--batch-size", "--inner"], &[])?;
            let hi: u64 = opt_num(args, "--hi", 11)?;
            let b: u64 = opt_num(args, "--batch-size", 64)?;
            let inner = opt_num(args, "--inner", 3usize)?.max(1);
            if hi < 2 {
                bail!("--hi must be at least 2");
            }
            let out = match problem.as_str() {
                "dense" => time_dense(&dir, (hi, inner))?,
                "sparse" => time_sparse(&dir, (hi, inner))?,
                "electricity" => time_electricity((hi, inner), b)?,
                other => bail!("unknown problem {other:?} (dense, sparse, electricity)"),
            };
            println!("{out}");
            Ok(())
        }
        _ => bail!("usage: pass-times write DIR [--dense-n N] | pass-times time DIR dense|sparse|electricity [--hi H] [--batch-size B] [--inner K]"),
    }
}

fn write_f64(path: &Path, v: impl IntoIterator<Item = f64>) -> Result<()> {
    let bytes: Vec<u8> = v.into_iter().flat_map(f64::to_le_bytes).collect();
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn write_i64(path: &Path, v: impl IntoIterator<Item = usize>) -> Result<()> {
    let bytes: Vec<u8> = v
        .into_iter()
        .flat_map(|k| (k as i64).to_le_bytes())
        .collect();
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn read_f64(path: &Path) -> Result<Vec<f64>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

fn read_usize(path: &Path) -> Result<Vec<usize>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    bytes
        .chunks_exact(8)
        .map(|c| {
            let k = i64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
            usize::try_from(k).context("negative index")
        })
        .collect()
}

fn read_meta(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(serde_json::from_str(&text)?)
}

fn meta_usize(meta: &Value, key: &str) -> Result<usize> {
    meta[key]
        .as_u64()
        .map(|v| v as usize)
        .with_context(|| format!("metadata field {key}"))
}

fn meta_f64(meta: &Value, key: &str) -> Result<f64> {
    meta[key]
        .as_f64()
        .with_context(|| format!("metadata field {key}"))
}

/// Writes the dense and the sparse problem to `dir`.
fn write(dir: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let params = LinearParams {
        n,
        p: DENSE_P,
        support: Support::Random { k: DENSE_ACTIVE },
        coefficients: Coefficients::Normal { std: 1.0 },
        noise_std: DENSE_NOISE,
        response: Response::Real,
    };
    let dense = synthetic::linear(&params, DENSE_SEED, "dense-lasso", false)?;
    let d = dense.dataset();
    let x = d.x();
    write_f64(
        &dir.join("dense_x.f64"),
        (0..x.n_features()).flat_map(|j| x.col(j).iter().copied()),
    )?;
    write_f64(&dir.join("dense_y.f64"), d.y().iter().copied())?;
    let meta = json!({
        "name": "dense LASSO",
        "generator": "dp_bench::synthetic::linear: X_ij ~ N(0,1) i.i.d., 10 active N(0,1) coefficients at random positions, y = Xw + N(0, 0.1^2)",
        "n": x.n_samples(), "p": x.n_features(), "nnz": x.nnz(),
        "active": DENSE_ACTIVE, "noise_std": DENSE_NOISE, "seed": DENSE_SEED,
        "lambda": DENSE_LAMBDA,
    });
    std::fs::write(dir.join("dense.json"), meta.to_string())?;

    let sparse = synthetic::dorothea_like(SPARSE_SEED)?;
    let s = sparse.dataset();
    let x = s.x();
    let mut indptr = vec![0usize];
    let (mut indices, mut data) = (Vec::with_capacity(x.nnz()), Vec::with_capacity(x.nnz()));
    for j in 0..x.n_features() {
        let (rows, vals) = x.col(j);
        indices.extend_from_slice(rows);
        data.extend_from_slice(vals);
        indptr.push(indices.len());
    }
    write_i64(&dir.join("sparse_indptr.i64"), indptr)?;
    write_i64(&dir.join("sparse_indices.i64"), indices)?;
    write_f64(&dir.join("sparse_data.f64"), data)?;
    write_f64(&dir.join("sparse_y.f64"), s.y().iter().copied())?;
    let meta = json!({
        "name": "dorothea-like sparse LASSO",
        "generator": "dp_bench::synthetic::dorothea_like (binary features, labels +1/-1)",
        "n": x.n_samples(), "p": x.n_features(), "nnz": x.nnz(),
        "density": x.nnz() as f64 / (x.n_samples() as f64 * x.n_features() as f64),
        "seed": SPARSE_SEED, "lambda": SPARSE_LAMBDA,
    });
    std::fs::write(dir.join("sparse.json"), meta.to_string())?;
    println!("{}", json!({"written": dir.display().to_string()}));
    Ok(())
}

/// One timed fit: wall-clock seconds around `fit_seeded`, and the solver's own
/// `diagnostics.seconds` (what `cargo xtask fit --json` reports as `solver_seconds`).
fn timed<D: Design, S: Solver<D>>(solver: &S, data: &Dataset<D>) -> Result<(f64, f64)> {
    let start = Instant::now();
    let fit = solver.fit_seeded(data, FIT_SEED)?;
    let wall = start.elapsed().as_secs_f64();
    Ok((wall, fit.diagnostics.seconds))
}

/// Times `make(passes)` at 1 and `hi` passes after one discarded warm-up fit, each the
/// fastest of `inner` fits.
///
/// For a private solver, `plan` times its calibration (the solver's public `plan`
/// method, on a fresh solver so that no memoised calibration is reused): the plan of
/// `hi` passes costs more or less than the plan of one, so it would not cancel in the
/// difference; `calibration_seconds` lets the caller subtract it, as the Opacus side
/// calibrates outside its timed region.
fn passes_json<D, S, F, C>(
    name: &str,
    what: &str,
    data: &Dataset<D>,
    (hi, inner): Timing,
    make: F,
    plan: C,
) -> Result<Value>
where
    D: Design,
    S: Solver<D>,
    F: Fn(u64) -> Result<S>,
    C: Fn(&S) -> Result<()>,
{
    timed(&make(1)?, data)?;
    let (mut seconds, mut solver_seconds, mut calibration) = (vec![], vec![], vec![]);
    for k in [1, hi] {
        // The fastest of `inner` back-to-back fits: interference from other processes
        // only ever adds time.
        let (mut wall, mut own, mut cal) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        for _ in 0..inner {
            let (w, s) = timed(&make(k)?, data)?;
            if w < wall {
                (wall, own) = (w, s);
            }
            let solver = make(k)?;
            let start = Instant::now();
            plan(&solver)?;
            cal = cal.min(start.elapsed().as_secs_f64());
        }
        seconds.push(wall);
        solver_seconds.push(own);
        calibration.push(cal);
    }
    Ok(json!({
        "solver": name, "what": what, "passes": [1, hi], "inner": inner,
        "seconds": seconds, "solver_seconds": solver_seconds,
        "calibration_seconds": calibration,
    }))
}

/// No calibration (non-private solvers).
fn no_plan<S>(_: &S) -> Result<()> {
    Ok(())
}

/// One plain read of the design: a column dot product with a residual per column
/// (median of 5).
fn plain_read<D: Design>(x: &D) -> f64 {
    let r: Vec<f64> = (0..x.n_samples()).map(|i| (i % 7) as f64 - 3.0).collect();
    let mut times = Vec::new();
    let mut sink = 0.0;
    for _ in 0..5 {
        let start = Instant::now();
        for j in 0..x.n_features() {
            sink += x.col_dot(j, &r);
        }
        times.push(start.elapsed().as_secs_f64());
    }
    std::hint::black_box(sink);
    times.sort_by(f64::total_cmp);
    times[2]
}

fn cd_pair<D, P>(
    data: &Dataset<D>,
    penalty: P,
    t: Timing,
    label: &str,
    two_threads: bool,
) -> Result<Vec<Value>>
where
    D: ColumnKernels,
    P: Penalty + Clone,
{
    let (n, p) = (data.n_samples(), data.n_features());
    // Squared loss (1/2)(z - y)^2: curvature 1. M_j = 1 is a data-independent choice
    // (E x_ij^2 = 1 for the dense generator; |x_ij| <= 1 for the binary sparse one).
    let ones = vec![1.0; p];
    let m = || Smoothness::Given(Tagged::public(ones.clone()));
    let make_cd = |k| {
        Ok(CdParams::new(Squared::half(), penalty.clone())
            .passes(k)
            .smoothness(m())
            .build()?)
    };
    let cd = passes_json("cd", &format!("CD, {label}"), data, t, make_cd, no_plan)?;
    // The same CD in cyclic order, scikit-learn's order: a uniform random coordinate
    // (our default, and DP-CD's analysis) reads the design at random places, which costs
    // cache and TLB misses on wide sparse designs.
    let make_cyclic = |k| {
        Ok(CdParams::new(Squared::half(), penalty.clone())
            .passes(k)
            .smoothness(m())
            .coordinate_order(CoordinateOrder::Cyclic)
            .build()?)
    };
    let what = format!("CD, {label}, cyclic order (as sklearn)");
    let cyclic = passes_json("cd-cyclic", &what, data, t, make_cyclic, no_plan)?;
    let make_dp = |k| {
        Ok(DpCdParams::new(Squared::half(), penalty.clone())
            .epsilon(1.0)
            .delta(1.0 / (n as f64 * n as f64))
            .passes(k)
            .clip(1.0)
            .smoothness(m())
            .build()?)
    };
    let plan_dp = |s: &DpCd<Squared, P>| Ok(s.plan(n, &ones, Provenance::PublicBound).map(drop)?);
    let what = format!("DP-CD (public M_j = 1, eps = 1), {label}");
    let dp = passes_json("dp-cd", &what, data, t, make_dp, plan_dp)?;
    let mut out = vec![cd, cyclic, dp];
    if two_threads {
        // The same two solvers with each step's sweep split over two cores
        // (`threads(2)`): not like for like with the single-threaded peers.
        let make_cd2 = |k| {
            Ok(CdParams::new(Squared::half(), penalty.clone())
                .passes(k)
                .smoothness(m())
                .threads(2)
                .build()?)
        };
        let what = format!("CD, {label}, two threads (threads(2); the peers use one)");
        out.push(passes_json("cd-2t", &what, data, t, make_cd2, no_plan)?);
        let make_dp2 = |k| {
            Ok(DpCdParams::new(Squared::half(), penalty.clone())
                .epsilon(1.0)
                .delta(1.0 / (n as f64 * n as f64))
                .passes(k)
                .clip(1.0)
                .smoothness(m())
                .threads(2)
                .build()?)
        };
        let what = format!("DP-CD (public M_j = 1, eps = 1), {label}, two threads (threads(2))");
        out.push(passes_json("dp-cd-2t", &what, data, t, make_dp2, plan_dp)?);
    }
    Ok(out)
}

/// CD started from the solution `w*` that the benchmark script wrote to
/// `{prefix}_wstar.f64` (if it did): the counterpart of sklearn's warm-started rows,
/// where gap safe screening can discard the inactive features before the first epoch.
fn cd_warm<D, P>(
    dir: &Path,
    prefix: &str,
    data: &Dataset<D>,
    penalty: P,
    t: Timing,
) -> Result<Option<Value>>
where
    D: ColumnKernels,
    P: Penalty + Clone,
{
    let path = dir.join(format!("{prefix}_wstar.f64"));
    if !path.exists() {
        return Ok(None);
    }
    let w_star = read_f64(&path)?;
    let p = data.n_features();
    if w_star.len() != p {
        bail!(
            "{}: {} values for {p} features",
            path.display(),
            w_star.len()
        );
    }
    let make = |k| {
        Ok(CdParams::new(Squared::half(), penalty.clone())
            .passes(k)
            .smoothness(Smoothness::Given(Tagged::public(vec![1.0; p])))
            .initial_point(w_star.clone())
            .build()?)
    };
    let what = "CD, L1, started at the solution w*";
    Ok(Some(passes_json("cd-warm", what, data, t, make, no_plan)?))
}

fn header<D: Design>(problem: &str, data: &Dataset<D>, design_bytes: usize, t: Timing) -> Value {
    let x = data.x();
    json!({
        "problem": problem, "n": x.n_samples(), "p": x.n_features(), "nnz": x.nnz(),
        "design_bytes": design_bytes, "hi": t.0, "inner": t.1,
        "plain_read_seconds": plain_read(x),
    })
}

fn time_dense(dir: &Path, t: Timing) -> Result<Value> {
    let meta = read_meta(&dir.join("dense.json"))?;
    let (n, p) = (meta_usize(&meta, "n")?, meta_usize(&meta, "p")?);
    let lambda = meta_f64(&meta, "lambda")?;
    let x = DenseDesign::from_col_major(n, p, &read_f64(&dir.join("dense_x.f64"))?)?;
    let data = Dataset::new(x, read_f64(&dir.join("dense_y.f64"))?)?;
    let mut out = header("dense", &data, n * p * 8, t);
    let mut results = cd_pair(&data, L1::new(lambda)?, t, "L1", true)?;
    // sklearn ElasticNet(alpha = 2 lambda, l1_ratio = 0.5) = lambda (|w|_1 + |w|^2 / 2).
    let make = |k| {
        Ok(
            CdParams::new(Squared::half(), ElasticNet::new(lambda, lambda)?)
                .passes(k)
                .smoothness(Smoothness::Given(Tagged::public(vec![1.0; p])))
                .build()?,
        )
    };
    results.extend(cd_warm(dir, "dense", &data, L1::new(lambda)?, t)?);
    results.push(passes_json(
        "cd-enet",
        "CD, elastic net",
        &data,
        t,
        make,
        no_plan,
    )?);
    out["results"] = json!(results);
    Ok(out)
}

fn time_sparse(dir: &Path, t: Timing) -> Result<Value> {
    let meta = read_meta(&dir.join("sparse.json"))?;
    let (n, p) = (meta_usize(&meta, "n")?, meta_usize(&meta, "p")?);
    let lambda = meta_f64(&meta, "lambda")?;
    let indptr = read_usize(&dir.join("sparse_indptr.i64"))?;
    let indices = read_usize(&dir.join("sparse_indices.i64"))?;
    let values = read_f64(&dir.join("sparse_data.f64"))?;
    if indptr.len() != p + 1 || indices.len() != values.len() {
        bail!("inconsistent CSC files in {}", dir.display());
    }
    let mut triplets = Vec::with_capacity(values.len());
    for j in 0..p {
        for k in indptr[j]..indptr[j + 1] {
            triplets.push((indices[k], j, values[k]));
        }
    }
    let x = SparseDesign::from_triplets(n, p, &triplets)?;
    let nnz = x.nnz();
    let data = Dataset::new(x, read_f64(&dir.join("sparse_y.f64"))?)?;
    // CSC: one f64 value and one usize row index per non-zero.
    let mut out = header("sparse", &data, nnz * 16, t);
    let mut results = cd_pair(&data, L1::new(lambda)?, t, "L1", false)?;
    results.extend(cd_warm(dir, "sparse", &data, L1::new(lambda)?, t)?);
    out["results"] = json!(results);
    Ok(out)
}

fn time_electricity(t: Timing, b: u64) -> Result<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/electricity.csv");
    let opts = CsvOptions::classification(Target::Name("class".into()), "UP", "DOWN");
    let mut data = load_csv(path, &opts)?;
    clip_to_bound(&mut data, ELEC_BOUND)?;
    let (n, p) = (data.n_samples(), data.n_features());
    let c = Logistic.curvature_bound().context("logistic is smooth")?;
    let m_vec = vec![c * ELEC_BOUND * ELEC_BOUND; p];
    let m = || Smoothness::Given(Tagged::public(m_vec.clone()));
    let beta = c * p as f64 * ELEC_BOUND * ELEC_BOUND;
    let delta = 1.0 / (n as f64 * n as f64);
    let pen = || L2::new(ELEC_LAMBDA);
    let mut out = header("electricity", &data, n * p * 8, t);
    let make_cd = |k| {
        Ok(CdParams::new(Logistic, pen()?)
            .passes(k)
            .smoothness(m())
            .build()?)
    };
    let make_dp_cd = |k| {
        Ok(DpCdParams::new(Logistic, pen()?)
            .epsilon(1.0)
            .delta(delta)
            .passes(k)
            .clip(1.0)
            .smoothness(m())
            .build()?)
    };
    let plan_dp_cd =
        |s: &DpCd<Logistic, L2>| Ok(s.plan(n, &m_vec, Provenance::PublicBound).map(drop)?);
    let mut results = vec![
        passes_json("cd", "CD, logistic + L2", &data, t, make_cd, no_plan)?,
        passes_json(
            "dp-cd",
            "DP-CD (public bound), logistic + L2",
            &data,
            t,
            make_dp_cd,
            plan_dp_cd,
        )?,
    ];
    for (name, what, adjacency) in [
        (
            "dp-sgd",
            "DP-SGD, batches without replacement (replace-one)",
            Adjacency::ReplaceOne,
        ),
        (
            "dp-sgd-poisson",
            "DP-SGD, Poisson batches (add/remove, as Opacus)",
            Adjacency::AddRemove,
        ),
    ] {
        let make = |k| {
            Ok(DpSgdParams::new(Logistic, pen()?)
                .epsilon(1.0)
                .delta(delta)
                .passes(k)
                .batch_size(b)
                .step_scale(1.0)
                .clip(1.0)
                .adjacency(adjacency)
                .public_n(n)
                .smoothness(Tagged::public(beta))
                .build()?)
        };
        let plan =
            |s: &DpSgd<Logistic, L2>| Ok(s.plan(n, beta, Provenance::PublicBound).map(drop)?);
        results.push(passes_json(name, what, &data, t, make, plan)?);
    }
    out["batch_size"] = json!(b);
    out["results"] = json!(results);
    Ok(out)
}
