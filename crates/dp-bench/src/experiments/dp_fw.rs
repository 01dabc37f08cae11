//! Validation of the distributed private Frank-Wolfe of Lou & Cheung ("Uplink communication
//! efficient differentially private sparse optimization with feature-wise distributed
//! data", AAAI 2018) against the central private Frank-Wolfe of Talwar, Thakurta & Zhang
//! ("Nearly optimal private LASSO", NeurIPS 2015).
//!
//! The paper has no experiments; it proves rates. This experiment measures the shapes those
//! rates predict on a synthetic LASSO over an l1 ball and on one real data set:
//!
//! * **excess risk against `n * eps`** for Talwar et al.'s private FW and for Algorithm 2
//!   (both bounds scale as `(n eps)^{-2/3}` up to log factors), with the fitted log-log
//!   slope, beside the non-private floors (Jaggi's FW, Algorithm 2's update with exact gradients (called BCFW before: it is not Algorithm 1's BCFW-AS, see `Alg::Bcfw`)) and the
//!   JL-only ablation (Algorithm 2 with the sketch but no noise);
//! * the dependence on the **sampling rate** `p = tau / |P_k|` (Theorem 3's bound grows as
//!   `1/p^2`) and on the number of **parties** `K`;
//! * the **uplink** per party: `T` signed indices and `T m` floats, checked exactly against
//!   the server's counters (`K T m` floats in total), beside the unsketched baseline that
//!   ships each selected column in full (`n` floats per round);
//! * California housing with its 8 features split across parties.
//!
//! Excess risk is `F(w) - F*` with `F(w) = (1/(2n)) ||A w - y||^2` and `F*` the certified
//! optimum over the **same** feasible set ([`frank_wolfe_reference`], duality gap below
//! `ref_tol`): the l1 ball of radius `eta` for FW and Talwar's FW, the product of the
//! parties' l1 balls of radius `eta` for Algorithm 2's exact update and Algorithm 2 (the paper's server update,
//! [`RadiusMode::PerParty`]).

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use dp_models::constraint::{frank_wolfe_reference, L1Ball, L1BallProduct};
use dp_models::preprocess::clip_to_bound;
use dp_models::{Dataset, DenseDesign, Design, Squared};
use dp_optim::dist_fw::{run_protocol, Party, PartyMechanisms, RadiusMode, Server, Sketch};
use dp_optim::plan::SolverPlan;
use dp_optim::{
    Accounting, BcfwParams, DistCalibration, DistDpFwParams, DpFwParams, FwParams, Solver,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{ExperimentConfig, Profile};

pub mod transport;
use crate::figures::{save_headline, BandPoint, ErrorFigure, Pick, Series};
use crate::report::{
    load_average, machine_description, markdown_table, process_cpu_seconds, reading_section, sci,
    write_atomic, write_json_atomic, Metadata, Verdict,
};
use crate::runner::{stable_seed, Stats};
use transport::{TransportCheck, TransportResult};

/// The experiment's name (output subdirectory).
pub const NAME: &str = "dp-fw";
/// The l1 radius `eta` (the synthetic truth has `||x*||_1 = eta`).
pub const ETA: f64 = 1.0;
/// Public bound on `|A_rj|` after preprocessing.
pub const FEATURE_BOUND: f64 = 1.0;
/// Public bound on `|y_r|` after preprocessing.
pub const LABEL_BOUND: f64 = 1.0;
/// Non-zeros of the synthetic truth.
pub const SUPPORT: usize = 10;
/// Standard deviation of the synthetic label noise.
pub const LABEL_NOISE: f64 = 0.1;
/// Bytes of one uplink float (`f64`).
pub const FLOAT_BYTES: u64 = 8;
/// Bytes of one signed index (one `i64`, `s (i + 1)`).
pub const INDEX_BYTES: u64 = 8;

/// The grid of one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Synthetic dimension `d`.
    pub d: usize,
    /// Sample sizes of the `n eps` sweep (at `epsilon`).
    pub n_grid: Vec<usize>,
    /// Further sample sizes of the `n eps` sweep for the central algorithms only (FW and
    /// Talwar et al.'s private FW cost `O(n d)` per step, Algorithm 2 `O(K m n)` per round).
    pub n_grid_central: Vec<usize>,
    /// Epsilon of the synthetic sweeps.
    pub epsilon: f64,
    /// Parties `K` of the `n eps` sweep and of the `p` sweep.
    pub parties: usize,
    /// `tau` of the `n eps` sweep and of the `K` sweep, as a fraction of the block size.
    pub tau_fraction: f64,
    /// `n` of the `p` and `K` sweeps.
    pub n_fixed: usize,
    /// `tau` values of the `p` sweep (at `parties`).
    pub taus: Vec<usize>,
    /// `K` values of the `K` sweep.
    pub ks: Vec<usize>,
    /// Sketch dimensions `m` of the sketch-dimension sweep (at `n_fixed`, `parties`).
    pub sketch_dims: Vec<usize>,
    /// JL accuracy `iota`: `m = ceil(c_jl iota^-2 ln(2T/delta))`.
    pub iota: f64,
    /// JL constant `c_jl`.
    pub c_jl: f64,
    /// Cap of `m` as a fraction of `n` (the sketch must compress: `m < n`).
    pub m_max_fraction: f64,
    /// Seeds per configuration.
    pub runs: usize,
    /// Duality-gap tolerance of the reference optimum.
    pub ref_tol: f64,
    /// Run the California housing block.
    pub california: bool,
    /// Rows of California used (`None`: all 20,640).
    pub california_rows: Option<usize>,
    /// Duality-gap tolerance of California's reference optimum (its design is badly
    /// conditioned, so the reference converges slowly).
    pub california_ref_tol: f64,
    /// Epsilons of the California block.
    pub california_eps: Vec<f64>,
    /// Parties of the California block (8 features split evenly).
    pub california_parties: usize,
    /// `tau` of the California block.
    pub california_tau: usize,
    /// The gRPC-against-in-process check of one small configuration (`None`: skipped).
    pub transport: Option<TransportCheck>,
}

impl Settings {
    /// The grid of `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        match profile {
            Profile::Smoke => Settings {
                d: 16,
                n_grid: vec![128, 256],
                n_grid_central: vec![512],
                epsilon: 1.0,
                parties: 2,
                tau_fraction: 0.5,
                n_fixed: 128,
                taus: vec![1, 8],
                ks: vec![1, 2],
                sketch_dims: vec![8, 32],
                iota: 0.5,
                c_jl: 1.0,
                m_max_fraction: 0.25,
                runs: 1,
                ref_tol: 1e-8,
                california: true,
                california_rows: Some(400),
                california_ref_tol: 1e-7,
                california_eps: vec![1.0],
                california_parties: 2,
                california_tau: 2,
                transport: Some(TransportCheck {
                    n: 400,
                    p: 12,
                    parties: 2,
                    rounds: 20,
                    sketch_dim: 16,
                    epsilon: 1.0,
                    reps: 1,
                }),
            },
            Profile::Quick => Settings {
                d: 64,
                n_grid: vec![256, 512, 1024, 2048, 4096, 8192],
                n_grid_central: vec![16384, 32768],
                epsilon: 1.0,
                parties: 4,
                tau_fraction: 0.5,
                n_fixed: 2048,
                taus: vec![1, 2, 4, 8, 16],
                ks: vec![1, 2, 4, 8],
                sketch_dims: vec![16, 64, 256, 1024],
                iota: 0.5,
                c_jl: 1.0,
                m_max_fraction: 0.25,
                runs: 4,
                ref_tol: 1e-9,
                california: true,
                california_rows: None,
                california_ref_tol: 1e-7,
                california_eps: vec![0.1, 1.0],
                california_parties: 2,
                california_tau: 2,
                transport: Some(TransportCheck {
                    n: 4000,
                    p: 60,
                    parties: 3,
                    rounds: 100,
                    sketch_dim: 100,
                    epsilon: 1.0,
                    reps: 5,
                }),
            },
            Profile::Paper => Settings {
                d: 256,
                n_grid: vec![1024, 2048, 4096, 8192, 16384, 32768],
                n_grid_central: vec![65536, 131072],
                epsilon: 1.0,
                parties: 4,
                tau_fraction: 0.5,
                n_fixed: 8192,
                taus: vec![1, 4, 16, 32, 64],
                ks: vec![1, 2, 4, 8],
                sketch_dims: vec![16, 64, 256, 1024, 4096],
                iota: 0.5,
                c_jl: 1.0,
                m_max_fraction: 0.25,
                runs: 10,
                ref_tol: 1e-10,
                california: true,
                california_rows: None,
                california_ref_tol: 1e-7,
                california_eps: vec![0.1, 0.5, 1.0, 2.0],
                california_parties: 2,
                california_tau: 2,
                transport: Some(TransportCheck {
                    n: 4000,
                    p: 60,
                    parties: 3,
                    rounds: 100,
                    sketch_dim: 100,
                    epsilon: 1.0,
                    reps: 11,
                }),
            },
        }
    }
}

/// One configuration: an algorithm at one point of one sweep, over `runs` seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `synthetic-n<n>` or `california`.
    pub problem: String,
    /// Sweep: `n-eps`, `sampling-rate`, `parties`, `sketch-dim` or `california`.
    pub panel: String,
    /// `fw`, `dp-fw-paper`, `alg2-exact`, `dist-dp-fw-paper`, `dp-fw`, `dist-dp-fw` or `jl-only`.
    pub algorithm: String,
    /// How the noise is calibrated (`zcdp`), `none` for the non-private runs.
    pub accounting: String,
    /// Target epsilon of the private runs (`null` for the non-private ones).
    pub epsilon: Option<f64>,
    /// Target delta (`1/n^2`).
    pub delta: f64,
    /// `n eps` (the x axis of the main figure; `eps` of the sweep for the non-private runs).
    pub n_eps: f64,
    /// Rows `n`.
    pub n_samples: usize,
    /// Features `d`.
    pub n_features: usize,
    /// Parties `K` (1 for the central algorithms).
    pub parties: usize,
    /// Coordinates sampled per party per round (`|P_k|` for the central algorithms).
    pub tau: usize,
    /// Sampling rate `p = tau / max_k |P_k|`.
    pub sampling_rate: f64,
    /// Iterations (rounds) `T`.
    pub iterations: u64,
    /// Sketch dimension `m` (`null` without a sketch).
    pub sketch_dim: Option<usize>,
    /// Fresh runs.
    pub runs: usize,
    /// Mean excess risk `F(w) - F*` (`null` if a run failed).
    pub excess_risk_mean: Option<f64>,
    /// Minimum.
    pub excess_risk_min: Option<f64>,
    /// Maximum.
    pub excess_risk_max: Option<f64>,
    /// Each run's excess risk.
    pub excess_risk_runs: Vec<Option<f64>>,
    /// `F*` over the algorithm's feasible set.
    pub objective_star: f64,
    /// Duality gap certifying `F*` (`F* - min <= gap`).
    pub reference_gap: f64,
    /// Epsilon reported by the solver's ledger (mean over runs; `null` if not private).
    pub reported_epsilon: Option<f64>,
    /// Scale of the selection noise (Gumbel scale of the report-noisy-max) from the
    /// solver's plan (`null` if not private).
    pub selection_noise_scale: Option<f64>,
    /// `F(0) - F*`: the excess risk of the starting point, the level a selection that
    /// ignores the data cannot beat for long.
    pub excess_risk_at_zero: f64,
    /// `||grad F(0)||_inf`: the largest score at the start (computed without privacy, for
    /// the benchmark's diagnosis only).
    pub max_score_at_zero: f64,
    /// Uplink floats per party, as counted by the server (party 0 for the private solver,
    /// the maximum over parties for the JL-only protocol runs).
    pub uplink_floats_per_party: Option<u64>,
    /// Uplink signed indices per party.
    pub uplink_indices_per_party: Option<u64>,
    /// Uplink bytes per party (`8` per float and per signed index).
    pub uplink_bytes_per_party: Option<u64>,
    /// Uplink floats summed over the parties (JL-only protocol runs: the server's
    /// counters; the private solver: party 0 times `K`).
    pub uplink_floats_total: Option<u64>,
    /// Uplink floats per party of the unsketched baseline (the selected column in full,
    /// `n` floats per round).
    pub unsketched_floats_per_party: Option<u64>,
    /// Whether every run's counters equal `T m` per party and `K T m` in total.
    pub uplink_identity_holds: Option<bool>,
    /// Mean solver seconds per run.
    pub seconds_per_run: Option<f64>,
    /// Runs whose fit returned an error.
    pub failed_runs: usize,
}

/// A fitted log-log slope with its theoretical counterpart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlopeFit {
    /// The curve (`algorithm` over `panel`).
    pub curve: String,
    /// Least-squares slope of `log excess` on `log x`.
    pub slope: Option<f64>,
    /// Points used.
    pub points: usize,
    /// The exponent the theory states (without log factors; `null` where it states none).
    pub theory_exponent: Option<f64>,
    /// The local slope of the theory's bound including its log factors, over the same x.
    pub theory_slope_with_logs: Option<f64>,
}

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Metadata of the run.
    #[serde(flatten)]
    pub meta: Metadata,
    /// The grid.
    pub settings: Settings,
    /// Every configuration.
    pub records: Vec<Record>,
    /// Fitted slopes.
    pub slopes: Vec<SlopeFit>,
    /// Number of records whose uplink counters were checked; all of them held.
    pub uplink_identity_checked: usize,
    /// The gRPC-against-in-process check (`None` when the profile skips it).
    pub transport: Option<TransportResult>,
}

/// `T = ceil((n eps)^{2/3})` (the paper's Theorem 3 and Talwar et al.'s choice).
pub fn iterations_for(n: usize, eps: f64) -> u64 {
    ((n as f64 * eps).powf(2.0 / 3.0)).ceil().max(1.0) as u64
}

/// `m = ceil(c_jl iota^-2 ln(2T/delta))`, capped at `m_max_fraction n`, at least 1.
pub fn sketch_dim_for(s: &Settings, n: usize, t: u64, delta: f64) -> usize {
    let m = (s.c_jl / (s.iota * s.iota) * (2.0 * t as f64 / delta).ln()).ceil();
    let cap = (s.m_max_fraction * n as f64).floor().max(1.0);
    m.min(cap).max(1.0) as usize
}

/// The synthetic LASSO of the experiment (Lou & Cheung's Eq. 12): `A_rj` uniform
/// on `{-1, +1}`, `x*` with [`SUPPORT`] non-zeros of random signs and `||x*||_1 = eta`,
/// `y = clip(A x* + N(0, 0.1^2), -1, 1)`. Public bounds `|A_rj| <= 1`, `|y_r| <= 1` hold
/// by construction.
pub fn synthetic(n: usize, d: usize, seed: u64) -> Result<Dataset<DenseDesign>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let support = rand::seq::index::sample(&mut rng, d, SUPPORT.min(d)).into_vec();
    let mut truth = vec![0.0; d];
    for &j in &support {
        let s = if rand::Rng::random_bool(&mut rng, 0.5) {
            1.0
        } else {
            -1.0
        };
        truth[j] = s * ETA / support.len() as f64;
    }
    let noise = Normal::new(0.0, LABEL_NOISE)?;
    let mut a = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let mut z = 0.0;
        for t in truth.iter() {
            let v = if rand::Rng::random_bool(&mut rng, 0.5) {
                1.0
            } else {
                -1.0
            };
            z += v * t;
            a.push(v);
        }
        y.push((z + noise.sample(&mut rng)).clamp(-LABEL_BOUND, LABEL_BOUND));
    }
    Ok(Dataset::new(DenseDesign::from_row_major(n, d, &a)?, y)?)
}

/// California housing mapped into `[-1, 1]` with **public, data-independent** ranges (the
/// census top-codes and California's geography), never statistics of the data: a
/// log transform for the skewed ratios and counts, an affine map of the public range onto
/// `[-1, 1]`, then [`clip_to_bound`] (a per-record map, free privacy-wise). The label
/// `MedHouseVal` (top-coded at 5.00001) maps `[0.15, 5.00001]` onto `[-1, 1]`.
pub fn california_bounded(rows: Option<usize>) -> Result<Dataset<DenseDesign>> {
    let raw = crate::data::california()?;
    // (log transform, public lower end, public upper end) per column: MedInc, HouseAge,
    // AveRooms, AveBedrms, Population, AveOccup, Latitude, Longitude.
    const RANGES: [(bool, f64, f64); 8] = [
        (true, 0.5, 15.0),
        (false, 1.0, 52.0),
        (true, 1.0, 10.0),
        (true, 0.5, 2.0),
        (true, 3.0, 36_000.0),
        (true, 1.0, 10.0),
        (false, 32.0, 42.0),
        (false, -124.5, -114.0),
    ];
    let x = raw.x();
    if x.n_features() != RANGES.len() {
        bail!("california: expected 8 features, got {}", x.n_features());
    }
    let n = rows.map_or(x.n_samples(), |r| r.min(x.n_samples()));
    let mut a = Vec::with_capacity(n * RANGES.len());
    for i in 0..n {
        for (&v, &(log, lo, hi)) in x.row(i).iter().zip(&RANGES) {
            let (v, lo, hi) = if log {
                (v.max(f64::MIN_POSITIVE).ln(), lo.ln(), hi.ln())
            } else {
                (v, lo, hi)
            };
            a.push(2.0 * (v - lo) / (hi - lo) - 1.0);
        }
    }
    let y: Vec<f64> = raw.y()[..n]
        .iter()
        .map(|&v| (2.0 * (v - 0.15) / (5.00001 - 0.15) - 1.0).clamp(-LABEL_BOUND, LABEL_BOUND))
        .collect();
    let mut data = Dataset::new(DenseDesign::from_row_major(n, RANGES.len(), &a)?, y)?;
    // The clipped count is a non-private statistic: it is not reported.
    let _ = clip_to_bound(&mut data, FEATURE_BOUND)?;
    Ok(data)
}

/// Which algorithm a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alg {
    Fw,
    /// Talwar et al.'s private FW, our accounting (Gumbel selection, zCDP).
    DpFw,
    /// Talwar et al.'s private FW with the paper's accounting (Laplace report-noisy-max,
    /// advanced composition).
    DpFwPaper,
    /// Algorithm 2's update (every coordinate shrinks by `1 - gamma`, the sampled
    /// parties' vertices added) with exact gradients and exact selection: non-private.
    /// Not BCFW-AS as Algorithm 1 states it (which updates only the sampled blocks): on
    /// an l1 ball, a non-separable set, that partial update leaves the feasible set
    /// (with `||x||_1 = r` held outside the sampled coordinates, the update adds up to
    /// `gamma r`), so the row is named for what it runs.
    Bcfw,
    JlOnly,
    DistDpFw,
    /// Algorithm 2 at the paper's nominal noise scales (`DistCalibration::PaperNominal`;
    /// the paper's claim is not proven, our accounting of the same scales is reported).
    DistDpFwPaper,
}

impl Alg {
    fn name(self) -> &'static str {
        match self {
            Alg::Fw => "fw",
            Alg::DpFw => "dp-fw",
            Alg::DpFwPaper => "dp-fw-paper",
            Alg::Bcfw => "alg2-exact",
            Alg::JlOnly => "jl-only",
            Alg::DistDpFw => "dist-dp-fw",
            Alg::DistDpFwPaper => "dist-dp-fw-paper",
        }
    }
    fn private(self) -> bool {
        matches!(
            self,
            Alg::DpFw | Alg::DpFwPaper | Alg::DistDpFw | Alg::DistDpFwPaper
        )
    }
    fn central(self) -> bool {
        matches!(self, Alg::Fw | Alg::DpFw | Alg::DpFwPaper)
    }
    fn accounting(self) -> &'static str {
        match self {
            Alg::DpFw | Alg::DistDpFw => "zcdp",
            Alg::DpFwPaper => "paper: Laplace, advanced composition",
            Alg::DistDpFwPaper => "paper's nominal scales (its claim not proven; ours reported)",
            _ => "none",
        }
    }
}

/// One configuration to run over the seeds.
#[derive(Debug, Clone)]
struct Job {
    panel: &'static str,
    problem: usize,
    alg: Alg,
    eps: f64,
    parties: usize,
    tau: usize,
    /// Sketch dimension override (`None`: [`sketch_dim_for`]).
    m: Option<usize>,
}

/// A data set with its references.
struct Problem {
    name: String,
    data: Dataset<DenseDesign>,
    delta: f64,
    /// `(K, F*, gap)`; `K = 0` is the l1 ball.
    references: Vec<(usize, f64, f64)>,
    /// `F(0)`.
    f_zero: f64,
    /// `||grad F(0)||_inf`.
    max_score_zero: f64,
}

impl Problem {
    fn new(name: String, data: Dataset<DenseDesign>, ks: &[usize], tol: f64) -> Result<Self> {
        let (n, d) = (data.x().n_samples(), data.x().n_features());
        let loss = Squared::half();
        let mut references = Vec::new();
        let ball = L1Ball::new(ETA, d)?;
        let r = frank_wolfe_reference(data.x(), data.y(), &loss, &ball, tol, 200_000)
            .with_context(|| format!("{name}: reference over the l1 ball"))?;
        references.push((0, r.objective, r.gap));
        for &k in ks {
            if references.iter().any(|x| x.0 == k) {
                continue;
            }
            let set = L1BallProduct::contiguous(ETA, d, k)?;
            let r = frank_wolfe_reference(data.x(), data.y(), &loss, &set, tol, 200_000)
                .with_context(|| format!("{name}: reference over the product of {k} balls"))?;
            references.push((k, r.objective, r.gap));
        }
        let y = data.y();
        let f_zero = y.iter().map(|v| v * v).sum::<f64>() / (2.0 * n as f64);
        let mut g = vec![0.0; d];
        data.x().matvec_t(y, &mut g);
        let max_score_zero = g.iter().fold(0.0f64, |a, v| a.max(v.abs())) / n as f64;
        Ok(Problem {
            name,
            data,
            delta: 1.0 / (n as f64 * n as f64),
            references,
            f_zero,
            max_score_zero,
        })
    }
    fn reference(&self, alg: Alg, k: usize) -> (f64, f64) {
        let key = if alg.central() { 0 } else { k };
        self.references
            .iter()
            .find(|r| r.0 == key)
            .map_or((f64::NAN, f64::NAN), |r| (r.1, r.2))
    }
}

/// What one seeded run returns.
#[derive(Debug, Clone, Default)]
struct RunResult {
    objective: f64,
    seconds: f64,
    reported_epsilon: Option<f64>,
    selection_scale: Option<f64>,
    floats_per_party: Vec<u64>,
    indices_per_party: Vec<u64>,
}

fn block_size(d: usize, k: usize) -> usize {
    d.div_ceil(k)
}

fn tau_of(fraction: f64, d: usize, k: usize) -> usize {
    let smallest = d / k;
    ((fraction * smallest as f64).round() as usize).clamp(1, smallest.max(1))
}

fn run_one(p: &Problem, job: &Job, s: &Settings, seed: u64) -> Result<RunResult> {
    let data = &p.data;
    let (n, d) = (data.x().n_samples(), data.x().n_features());
    let t = iterations_for(n, job.eps);
    let m = job.m.unwrap_or_else(|| sketch_dim_for(s, n, t, p.delta));
    let loss = Squared::half();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let start = Instant::now();
    let fitted = match job.alg {
        Alg::Fw => FwParams::new(loss, L1Ball::new(ETA, d)?)
            .iterations(t)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::DpFw => DpFwParams::new(loss, ETA)
            .epsilon(job.eps)
            .delta(p.delta)
            .accounting(Accounting::Exact)
            .iterations(t)
            .feature_bound(FEATURE_BOUND)
            .label_bound(LABEL_BOUND)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::DpFwPaper => DpFwParams::new(loss, ETA)
            .epsilon(job.eps)
            .delta(p.delta)
            .accounting(Accounting::Paper)
            .iterations(t)
            .feature_bound(FEATURE_BOUND)
            .label_bound(LABEL_BOUND)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::Bcfw => BcfwParams::new(loss, ETA)
            .parties(job.parties)
            .tau(job.tau)
            .iterations(t)
            .radius_mode(RadiusMode::PerParty)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::DistDpFw | Alg::DistDpFwPaper => DistDpFwParams::new(ETA)
            .calibration(if job.alg == Alg::DistDpFwPaper {
                DistCalibration::PaperNominal
            } else {
                DistCalibration::Zcdp
            })
            .epsilon(job.eps)
            .delta(p.delta)
            .parties(job.parties)
            .tau(job.tau)
            .iterations(t)
            .sketch_dim(m)
            .sketch_seed(seed ^ 0x5eed)
            .feature_bound(FEATURE_BOUND)
            .label_bound(LABEL_BOUND)
            .radius_mode(RadiusMode::PerParty)
            .build()?
            .fit_with_rng(data, &mut rng)?,
        Alg::JlOnly => return jl_only(data, job, t, m, seed, start),
    };
    let seconds = start.elapsed().as_secs_f64();
    let mut out = RunResult {
        objective: fitted.diagnostics.objective,
        seconds,
        ..RunResult::default()
    };
    if fitted.model.coefficients.iter().any(|v| !v.is_finite()) {
        bail!("{}: non-finite coefficients", job.alg.name());
    }
    if let Some(pr) = &fitted.model.privacy {
        out.reported_epsilon = Some(pr.guarantee.epsilon);
        if let SolverPlan::DpFw(dp_optim::fw_plan::FwPlan::Central(plan)) = &pr.plan {
            out.selection_scale = Some(plan.noise_scale);
        }
        if let SolverPlan::DpFw(dp_optim::fw_plan::FwPlan::Distributed(plan)) = &pr.plan {
            out.selection_scale = Some(plan.selection_scale);
            // The server's counter for party 0; every party sends the same count.
            out.floats_per_party = vec![plan.uplink_floats_per_party; plan.parties];
            out.indices_per_party = vec![t; plan.parties];
        }
    }
    Ok(out)
}

/// The JL-only ablation: Algorithm 2's protocol with the public sketch and the same
/// residual clip (`C_res = B K eta + Y`, the solver's default), but no noise, run party by party through [`run_protocol`] so the server's own
/// counters are read for every party.
fn jl_only(
    data: &Dataset<DenseDesign>,
    job: &Job,
    t: u64,
    m: usize,
    seed: u64,
    start: Instant,
) -> Result<RunResult> {
    let (x, y) = (data.x(), data.y());
    let (n, d) = (x.n_samples(), x.n_features());
    let set = L1BallProduct::contiguous(ETA, d, job.parties)?;
    let largest = set.blocks().iter().map(Vec::len).max().unwrap_or(1);
    let sketch = Sketch::generate(m, n, seed ^ 0x5eed)?;
    let mechanisms = PartyMechanisms {
        selection: None,
        sketch_noise: None,
        residual_clip: FEATURE_BOUND * job.parties as f64 * ETA + LABEL_BOUND,
    };
    let mut parties = Vec::with_capacity(job.parties);
    for (id, block) in set.blocks().iter().enumerate() {
        let cols = block
            .iter()
            .map(|&j| {
                let mut c = vec![0.0; n];
                x.for_each_in_col(j, |i, v| c[i] = v);
                c
            })
            .collect();
        let stream = stable_seed(seed, &["jl-only", "party"], &[id as u64]);
        parties.push(Party::new(
            id,
            block.clone(),
            cols,
            y.to_vec(),
            sketch.clone(),
            job.tau,
            mechanisms.clone(),
            t,
            ChaCha20Rng::seed_from_u64(stream),
            ChaCha20Rng::seed_from_u64(stream ^ 1),
        )?);
    }
    let mut server = Server::new(d, m, job.parties, ETA, job.tau as f64 / largest as f64);
    run_protocol(&mut server, &mut parties, t)?;
    let seconds = start.elapsed().as_secs_f64();
    let w = server.x();
    if w.iter().any(|v| !v.is_finite()) {
        bail!("jl-only: non-finite coefficients");
    }
    let mut z = vec![0.0; n];
    x.matvec(w, &mut z);
    let objective = dp_models::constraint::average_loss(&Squared::half(), &z, y);
    Ok(RunResult {
        objective,
        seconds,
        reported_epsilon: None,
        selection_scale: None,
        floats_per_party: server.uplink_floats().to_vec(),
        indices_per_party: server.uplink_indices().to_vec(),
    })
}

fn record_of(p: &Problem, job: &Job, s: &Settings, results: &[Result<RunResult>]) -> Record {
    let (n, d) = (p.data.x().n_samples(), p.data.x().n_features());
    let t = iterations_for(n, job.eps);
    let sketched = matches!(job.alg, Alg::JlOnly | Alg::DistDpFw | Alg::DistDpFwPaper);
    let m = job.m.unwrap_or_else(|| sketch_dim_for(s, n, t, p.delta));
    let (f_star, gap) = p.reference(job.alg, job.parties);
    let runs: Vec<Option<f64>> = results
        .iter()
        .map(|r| r.as_ref().ok().map(|r| r.objective - f_star))
        .collect();
    let failed = results.iter().filter(|r| r.is_err()).count();
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        eprintln!("dp-fw: {} {} failed: {e:#}", p.name, job.alg.name());
    }
    let ok: Vec<f64> = runs.iter().flatten().copied().collect();
    let stats = (failed == 0 && !ok.is_empty()).then(|| Stats::of(&ok));
    let oks: Vec<&RunResult> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    let mean_of = |f: &dyn Fn(&RunResult) -> Option<f64>| {
        let v: Vec<f64> = oks.iter().filter_map(|r| f(r)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let (floats, indices, total, identity) = if sketched && !oks.is_empty() {
        let per = oks
            .iter()
            .flat_map(|r| r.floats_per_party.iter())
            .copied()
            .max()
            .unwrap_or(0);
        let idx = oks
            .iter()
            .flat_map(|r| r.indices_per_party.iter())
            .copied()
            .max()
            .unwrap_or(0);
        let total: u64 = oks[0].floats_per_party.iter().sum();
        let holds = oks.iter().all(|r| {
            r.floats_per_party.len() == job.parties
                && r.floats_per_party.iter().all(|&f| f == t * m as u64)
                && r.indices_per_party.iter().all(|&i| i == t)
                && r.floats_per_party.iter().sum::<u64>() == job.parties as u64 * t * m as u64
        });
        (Some(per), Some(idx), Some(total), Some(holds))
    } else {
        (None, None, None, None)
    };
    let (tau, rate) = if job.alg.central() {
        (d, 1.0)
    } else {
        (job.tau, job.tau as f64 / block_size(d, job.parties) as f64)
    };
    Record {
        problem: p.name.clone(),
        panel: job.panel.to_owned(),
        algorithm: job.alg.name().to_owned(),
        accounting: job.alg.accounting().to_owned(),
        epsilon: job.alg.private().then_some(job.eps),
        delta: p.delta,
        n_eps: n as f64 * job.eps,
        n_samples: n,
        n_features: d,
        parties: if job.alg.central() { 1 } else { job.parties },
        tau,
        sampling_rate: rate,
        iterations: t,
        sketch_dim: sketched.then_some(m),
        runs: results.len(),
        excess_risk_mean: stats.map(|s| s.mean),
        excess_risk_min: stats.map(|s| s.min),
        excess_risk_max: stats.map(|s| s.max),
        excess_risk_runs: runs,
        objective_star: f_star,
        reference_gap: gap,
        reported_epsilon: mean_of(&|r| r.reported_epsilon),
        selection_noise_scale: mean_of(&|r| r.selection_scale),
        excess_risk_at_zero: p.f_zero - f_star,
        max_score_at_zero: p.max_score_zero,
        uplink_floats_per_party: floats,
        uplink_indices_per_party: indices,
        uplink_bytes_per_party: floats
            .zip(indices)
            .map(|(f, i)| f * FLOAT_BYTES + i * INDEX_BYTES),
        uplink_floats_total: total,
        unsketched_floats_per_party: sketched.then_some(t * n as u64),
        uplink_identity_holds: identity,
        seconds_per_run: mean_of(&|r| Some(r.seconds)),
        failed_runs: failed,
    }
}

/// Least-squares slope of `log y` on `log x` over the points with `y > 0`.
pub fn log_log_slope(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0 && x.is_finite() && y.is_finite())
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let k = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Runs the experiment at `config.profile`.
pub fn run(config: &ExperimentConfig) -> Result<()> {
    run_with(config, &Settings::for_profile(config.profile))
}

/// [`run`] with explicit settings.
pub fn run_with(config: &ExperimentConfig, s: &Settings) -> Result<()> {
    let wall = Instant::now();
    let cpu0 = process_cpu_seconds();
    let load0 = load_average();
    let dir = config.out_dir.join(NAME);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    eprintln!(
        "dp-fw: profile {}, d = {}, n in {:?}, eps = {}, K = {}, {} runs per point",
        config.profile.name(),
        s.d,
        s.n_grid,
        s.epsilon,
        s.parties,
        s.runs
    );
    // Problems: one synthetic data set per n (n_fixed included), then California.
    let mut ns = s.n_grid.clone();
    ns.extend(
        s.n_grid_central
            .iter()
            .copied()
            .filter(|n| !s.n_grid.contains(n)),
    );
    if !ns.contains(&s.n_fixed) {
        ns.push(s.n_fixed);
    }
    let mut ks: Vec<usize> = s.ks.clone();
    ks.push(s.parties);
    let mut problems = Vec::new();
    let setup = Instant::now();
    for &n in &ns {
        let data = synthetic(
            n,
            s.d,
            stable_seed(config.seed, &["synthetic"], &[n as u64]),
        )?;
        let kk: Vec<usize> = if n == s.n_fixed {
            ks.clone()
        } else {
            vec![s.parties]
        };
        problems.push(Problem::new(
            format!("synthetic-n{n}"),
            data,
            &kk,
            s.ref_tol,
        )?);
    }
    if s.california {
        let data = california_bounded(s.california_rows)?;
        problems.push(Problem::new(
            "california".into(),
            data,
            &[s.california_parties],
            s.california_ref_tol,
        )?);
    }
    let setup_seconds = setup.elapsed().as_secs_f64();
    eprintln!("dp-fw: data and reference optima in {setup_seconds:.1} s");

    let mut jobs = Vec::new();
    let tau_main = tau_of(s.tau_fraction, s.d, s.parties);
    for (i, &n) in ns.iter().enumerate() {
        let algs: &[Alg] = if s.n_grid.contains(&n) {
            &[
                Alg::Fw,
                Alg::DpFw,
                Alg::DpFwPaper,
                Alg::Bcfw,
                Alg::JlOnly,
                Alg::DistDpFw,
                Alg::DistDpFwPaper,
            ]
        } else if s.n_grid_central.contains(&n) {
            &[Alg::Fw, Alg::DpFw, Alg::DpFwPaper]
        } else {
            &[]
        };
        for &alg in algs {
            jobs.push(Job {
                panel: "n-eps",
                problem: i,
                alg,
                eps: s.epsilon,
                parties: s.parties,
                tau: tau_main,
                m: None,
            });
        }
    }
    let fixed = ns
        .iter()
        .position(|&n| n == s.n_fixed)
        .context("n_fixed is not a problem")?;
    for &tau in &s.taus {
        if tau == 0 || tau > s.d / s.parties {
            bail!("tau {tau} is outside 1..={}", s.d / s.parties);
        }
        for alg in [Alg::Bcfw, Alg::JlOnly, Alg::DistDpFw] {
            jobs.push(Job {
                panel: "sampling-rate",
                problem: fixed,
                alg,
                eps: s.epsilon,
                parties: s.parties,
                tau,
                m: None,
            });
        }
    }
    for &k in &s.ks {
        for alg in [Alg::Bcfw, Alg::JlOnly, Alg::DistDpFw] {
            jobs.push(Job {
                panel: "parties",
                problem: fixed,
                alg,
                eps: s.epsilon,
                parties: k,
                tau: tau_of(s.tau_fraction, s.d, k),
                m: None,
            });
        }
    }
    for &m in &s.sketch_dims {
        for alg in [Alg::JlOnly, Alg::DistDpFw] {
            jobs.push(Job {
                panel: "sketch-dim",
                problem: fixed,
                alg,
                eps: s.epsilon,
                parties: s.parties,
                tau: tau_main,
                m: Some(m),
            });
        }
    }
    if s.california {
        let c = problems.len() - 1;
        for &eps in &s.california_eps {
            for alg in [
                Alg::Fw,
                Alg::DpFw,
                Alg::DpFwPaper,
                Alg::Bcfw,
                Alg::JlOnly,
                Alg::DistDpFw,
                Alg::DistDpFwPaper,
            ] {
                jobs.push(Job {
                    panel: "california",
                    problem: c,
                    alg,
                    eps,
                    parties: s.california_parties,
                    tau: s.california_tau,
                    m: None,
                });
            }
        }
    }
    // Every (job, seed) pair in parallel; results are gathered in order.
    let pairs: Vec<(usize, usize)> = (0..jobs.len())
        .flat_map(|j| (0..s.runs).map(move |r| (j, r)))
        .collect();
    let results: Vec<Result<RunResult>> = pairs
        .par_iter()
        .map(|&(j, r)| {
            let job = &jobs[j];
            let p = &problems[job.problem];
            let seed = stable_seed(
                config.seed,
                &[&p.name, job.panel, job.alg.name()],
                &[
                    job.parties as u64,
                    job.tau as u64,
                    job.eps.to_bits(),
                    job.m.unwrap_or(0) as u64,
                    r as u64,
                ],
            );
            run_one(p, job, s, seed)
        })
        .collect();
    let mut records = Vec::with_capacity(jobs.len());
    for (j, job) in jobs.iter().enumerate() {
        let rs = &results[j * s.runs..(j + 1) * s.runs];
        let rec = record_of(&problems[job.problem], job, s, rs);
        eprintln!(
            "dp-fw: {} {} {} K={} tau={} eps={}: excess {} (T = {}, m = {:?})",
            rec.panel,
            rec.problem,
            rec.algorithm,
            rec.parties,
            rec.tau,
            job.eps,
            rec.excess_risk_mean.map_or("-".into(), sci),
            rec.iterations,
            rec.sketch_dim
        );
        records.push(rec);
    }
    let slopes = slopes(&records, s);
    let checked = records
        .iter()
        .filter(|r| r.uplink_identity_holds.is_some())
        .count();
    if let Some(r) = records
        .iter()
        .find(|r| r.uplink_identity_holds == Some(false))
    {
        bail!(
            "uplink identity violated: {} {} {} K={}: {:?} floats per party, {:?} in total, \
             expected T m = {} and K T m = {}",
            r.panel,
            r.problem,
            r.algorithm,
            r.parties,
            r.uplink_floats_per_party,
            r.uplink_floats_total,
            r.iterations * r.sketch_dim.unwrap_or(0) as u64,
            r.parties as u64 * r.iterations * r.sketch_dim.unwrap_or(0) as u64
        );
    }
    let transport = match &s.transport {
        Some(c) => {
            let r = transport::run(c, stable_seed(config.seed, &["transport"], &[]))?;
            eprintln!(
                "dp-fw: gRPC check (K = {}, n = {}, T = {}): iterates bit-identical {}, bytes \
                 equal {}, gRPC / in-process time {:.2}",
                c.parties,
                c.n,
                c.rounds,
                r.iterates_bit_identical,
                r.bytes_equal,
                r.grpc_over_in_process
            );
            Some(r)
        }
        None => None,
    };
    let wall_seconds = wall.elapsed().as_secs_f64();
    let summary = Summary {
        meta: Metadata::collect(NAME, config.profile.name(), config.seed, Some(wall_seconds)),
        settings: s.clone(),
        records,
        slopes,
        uplink_identity_checked: checked,
        transport,
    };
    write_json_atomic(&dir.join("summary.json"), &summary)?;
    write_figures(&dir, &summary)?;
    let cpu = cpu0.zip(process_cpu_seconds()).map(|(a, b)| b - a);
    let report = render_report(
        config,
        &summary,
        setup_seconds,
        cpu,
        (load0, load_average()),
    );
    write_atomic(&dir.join("report.md"), report.as_bytes())?;
    eprintln!(
        "dp-fw: wrote summary, report and figures to {} in {:.1} s",
        dir.display(),
        wall.elapsed().as_secs_f64()
    );
    Ok(())
}

fn curve<'r>(records: &'r [Record], panel: &str, alg: &str) -> Vec<&'r Record> {
    records
        .iter()
        .filter(|r| r.panel == panel && r.algorithm == alg)
        .collect()
}

/// The local slope of `g(x)` in log-log over `xs`, by least squares on `(x, g(x))`.
fn slope_of_fn(xs: &[f64], g: impl Fn(f64) -> f64) -> Option<f64> {
    let pts: Vec<(f64, f64)> = xs.iter().map(|&x| (x, g(x))).collect();
    log_log_slope(&pts)
}

fn slopes(records: &[Record], s: &Settings) -> Vec<SlopeFit> {
    let mut out = Vec::new();
    for alg in [
        "dp-fw",
        "dp-fw-paper",
        "dist-dp-fw",
        "dist-dp-fw-paper",
        "jl-only",
        "alg2-exact",
        "fw",
    ] {
        let c = curve(records, "n-eps", alg);
        let pts: Vec<(f64, f64)> = c
            .iter()
            .filter_map(|r| r.excess_risk_mean.map(|e| (r.n_eps, e)))
            .collect();
        let xs: Vec<f64> = c.iter().map(|r| r.n_eps).collect();
        // Talwar et al.: log(n |S|) sqrt(log(1/delta)) / (n eps)^{2/3}, |S| = 2d,
        // delta = 1/n^2 (eps fixed, so n = x / eps). Lou & Cheung's Theorem 3:
        // log(2 G eta K tau n) / (p^2 (n eps)^{2/3}); C_g, C_l carry sqrt(log(1/delta)).
        // The non-private floors: FW's O(1/T) with T = (n eps)^{2/3}.
        let eps = s.epsilon;
        let d = s.d as f64;
        let kt = (s.parties * tau_of(s.tau_fraction, s.d, s.parties)) as f64;
        let with_logs: Option<f64> = match alg {
            "dp-fw" | "dp-fw-paper" => slope_of_fn(&xs, |x| {
                let n = x / eps;
                (n * 2.0 * d).ln() * (2.0 * n.ln()).sqrt() * x.powf(-2.0 / 3.0)
            }),
            "dist-dp-fw" | "dist-dp-fw-paper" => slope_of_fn(&xs, |x| {
                let n = x / eps;
                (2.0 * 2.0 * ETA * kt * n).ln() * (2.0 * n.ln() + eps).sqrt() * x.powf(-2.0 / 3.0)
            }),
            _ => slope_of_fn(&xs, |x| x.powf(-2.0 / 3.0)),
        };
        out.push(SlopeFit {
            curve: format!("{alg} vs n*eps"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: Some(-2.0 / 3.0),
            theory_slope_with_logs: with_logs,
        });
    }
    for alg in ["dist-dp-fw", "jl-only", "alg2-exact"] {
        let pts: Vec<(f64, f64)> = curve(records, "sampling-rate", alg)
            .iter()
            .filter_map(|r| r.excess_risk_mean.map(|e| (r.sampling_rate, e)))
            .collect();
        out.push(SlopeFit {
            curve: format!("{alg} vs p"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: Some(-2.0),
            theory_slope_with_logs: None,
        });
    }
    for alg in ["dist-dp-fw", "jl-only", "alg2-exact"] {
        let pts: Vec<(f64, f64)> = curve(records, "parties", alg)
            .iter()
            .filter_map(|r| r.excess_risk_mean.map(|e| (r.parties as f64, e)))
            .collect();
        out.push(SlopeFit {
            curve: format!("{alg} vs K"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: None,
            theory_slope_with_logs: None,
        });
    }
    for alg in ["jl-only", "dist-dp-fw"] {
        let pts: Vec<(f64, f64)> = curve(records, "sketch-dim", alg)
            .iter()
            .filter_map(|r| Some((r.sketch_dim? as f64, r.excess_risk_mean?)))
            .collect();
        out.push(SlopeFit {
            curve: format!("{alg} vs m"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: None,
            theory_slope_with_logs: None,
        });
    }
    // Uplink floats per party against n (theory: T m ~ (n eps)^{2/3} log(T/delta)).
    let c = curve(records, "n-eps", "dist-dp-fw");
    let pts: Vec<(f64, f64)> = c
        .iter()
        .filter_map(|r| r.uplink_floats_per_party.map(|f| (r.n_eps, f as f64)))
        .collect();
    let xs: Vec<f64> = c.iter().map(|r| r.n_eps).collect();
    out.push(SlopeFit {
        curve: "uplink floats per party vs n*eps".into(),
        slope: log_log_slope(&pts),
        points: pts.len(),
        theory_exponent: Some(2.0 / 3.0),
        theory_slope_with_logs: slope_of_fn(&xs, |x| {
            let n = x / s.epsilon;
            let t = x.powf(2.0 / 3.0);
            t * (2.0 * t * n * n).ln()
        }),
    });
    out
}

fn color(alg: &str) -> (u8, u8, u8) {
    match alg {
        // One hue per algorithm from the qualitative palette.
        "fw" => crate::figures::PALETTE[7],
        "alg2-exact" => crate::figures::PALETTE[2],
        "dp-fw" => crate::figures::PALETTE[0],
        "dp-fw-paper" => crate::figures::PALETTE[1],
        "jl-only" => crate::figures::PALETTE[4],
        "dist-dp-fw" => crate::figures::PALETTE[3],
        "dist-dp-fw-paper" => crate::figures::PALETTE[5],
        _ => (0, 0, 0),
    }
}

fn label(alg: &str) -> &'static str {
    match alg {
        "fw" => "FW (non-private)",
        "alg2-exact" => "Algorithm 2's update, exact (non-private)",
        "dp-fw" => "private FW (Talwar), zCDP",
        "dp-fw-paper" => "private FW (Talwar), Laplace + adv. comp. (paper)",
        "jl-only" => "sketch, no noise",
        "dist-dp-fw" => "Algorithm 2, zCDP",
        "dist-dp-fw-paper" => "Algorithm 2, paper's noise scales",
        _ => "?",
    }
}

fn series_of(records: &[Record], panel: &str, alg: &str, x: impl Fn(&Record) -> f64) -> Series {
    Series {
        label: label(alg).to_owned(),
        points: curve(records, panel, alg)
            .iter()
            .filter_map(|r| {
                Some(BandPoint {
                    x: x(r),
                    mean: r.excess_risk_mean?,
                    min: r.excess_risk_min?,
                    max: r.excess_risk_max?,
                })
            })
            .collect(),
        color: Some(color(alg)),
    }
}

/// A figure's headline rows (labels may carry a fitted slope after the name): Algorithm 2
/// with the proven (zCDP) calibration, Algorithm 2 at the paper's noise scales, the
/// stronger of the two private FW baselines (Talwar et al.), non-private FW and Algorithm
/// 2's exact update; the sketch without noise and the other Talwar row go to `-more`.
fn headline_picks() -> Vec<Pick<'static>> {
    fn is(alg: &'static str) -> impl Fn(&str) -> bool {
        move |l: &str| l.starts_with(label(alg))
    }
    static DIST: fn(&str) -> bool = |l| is("dist-dp-fw")(l);
    static DIST_PAPER: fn(&str) -> bool = |l| is("dist-dp-fw-paper")(l);
    static TALWAR: fn(&str) -> bool = |l| is("dp-fw")(l) || is("dp-fw-paper")(l);
    static FW: fn(&str) -> bool = |l| is("fw")(l);
    static EXACT: fn(&str) -> bool = |l| is("alg2-exact")(l);
    vec![
        Pick::Lowest(&DIST),
        Pick::Lowest(&DIST_PAPER),
        Pick::Lowest(&TALWAR),
        Pick::Lowest(&FW),
        Pick::Lowest(&EXACT),
    ]
}

/// Saves `fig` as a headline figure at `path` ([`headline_picks`]) and its other rows,
/// with non-private FW repeated, beside it.
fn save_with_headline(fig: &ErrorFigure, path: &Path) -> Result<()> {
    let fw: Vec<&str> = fig
        .series
        .iter()
        .map(|s| s.label.as_str())
        .filter(|l| l.starts_with(label("fw")))
        .collect();
    save_headline(fig, &[], &headline_picks(), &fw, path)?;
    Ok(())
}

fn write_figures(dir: &Path, summary: &Summary) -> Result<()> {
    let s = &summary.settings;
    let rec = &summary.records;
    let slope = |c: &str| {
        summary
            .slopes
            .iter()
            .find(|f| f.curve == c)
            .and_then(|f| f.slope)
    };
    // Figure 1: excess risk against n eps, with the fitted slopes.
    let mut series = Vec::new();
    for alg in [
        "fw",
        "alg2-exact",
        "dp-fw",
        "dp-fw-paper",
        "jl-only",
        "dist-dp-fw",
        "dist-dp-fw-paper",
    ] {
        let mut sr = series_of(rec, "n-eps", alg, |r| r.n_eps);
        if let Some(b) = slope(&format!("{alg} vs n*eps")) {
            sr.label = format!("{} (slope {b:.2})", sr.label);
        }
        series.push(sr);
    }
    let tau_main = tau_of(s.tau_fraction, s.d, s.parties);
    let p_main = tau_main as f64 / block_size(s.d, s.parties) as f64;
    let fig = ErrorFigure {
        title: format!(
            "Excess risk vs n*eps (eps = {}, delta = 1/n^2, d = {}, K = {}, p = {p_main})",
            s.epsilon, s.d, s.parties
        ),
        x_label: "n * eps".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series,
    };
    save_with_headline(&fig, &dir.join("fig-excess-vs-neps.svg"))?;
    // Figure 2: uplink bytes per party against n.
    let c = curve(rec, "n-eps", "dist-dp-fw");
    let pt = |x: f64, y: f64| BandPoint {
        x,
        mean: y,
        min: y,
        max: y,
    };
    let sketched: Vec<BandPoint> = c
        .iter()
        .filter_map(|r| Some(pt(r.n_samples as f64, r.uplink_bytes_per_party? as f64)))
        .collect();
    let unsketched: Vec<BandPoint> = c
        .iter()
        .filter_map(|r| {
            Some(pt(
                r.n_samples as f64,
                (r.unsketched_floats_per_party? * FLOAT_BYTES + r.iterations * INDEX_BYTES) as f64,
            ))
        })
        .collect();
    ErrorFigure {
        title: format!(
            "Uplink bytes per party (eps = {}, delta = 1/n^2, K = {})",
            s.epsilon, s.parties
        ),
        x_label: "n".into(),
        y_label: "bytes per party".into(),
        log_x: true,
        series: vec![
            Series {
                label: "Algorithm 2 (index + m floats)".into(),
                points: sketched,
                color: Some(color("dist-dp-fw")),
            },
            Series {
                label: "unsketched (index + n floats)".into(),
                points: unsketched,
                color: Some((127, 127, 127)),
            },
        ],
    }
    .save_svg_legend_right(&dir.join("fig-uplink-bytes.svg"))?;
    // Figure 3: sampling rate.
    ErrorFigure {
        title: format!(
            "Excess risk vs sampling rate p (n = {}, eps = {}, delta = 1/n^2, K = {})",
            s.n_fixed, s.epsilon, s.parties
        ),
        x_label: "p = tau / |P_k|".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series: ["alg2-exact", "jl-only", "dist-dp-fw"]
            .iter()
            .map(|a| series_of(rec, "sampling-rate", a, |r| r.sampling_rate))
            .collect(),
    }
    .save_svg_legend_right(&dir.join("fig-sampling-rate.svg"))?;
    // Figure 4: parties.
    ErrorFigure {
        title: format!(
            "Excess risk vs parties K (n = {}, eps = {}, delta = 1/n^2, p = {})",
            s.n_fixed, s.epsilon, s.tau_fraction
        ),
        x_label: "K".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series: ["alg2-exact", "jl-only", "dist-dp-fw"]
            .iter()
            .map(|a| series_of(rec, "parties", a, |r| r.parties as f64))
            .collect(),
    }
    .save_svg_legend_right(&dir.join("fig-parties.svg"))?;
    ErrorFigure {
        title: format!(
            "Excess risk vs sketch dimension m (n = {}, eps = {}, delta = 1/n^2, K = {}, p = {p_main})",
            s.n_fixed, s.epsilon, s.parties
        ),
        x_label: "m".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series: ["jl-only", "dist-dp-fw"]
            .iter()
            .map(|a| series_of(rec, "sketch-dim", a, |r| r.sketch_dim.unwrap_or(0) as f64))
            .collect(),
    }
    .save_svg_legend_right(&dir.join("fig-sketch-dim.svg"))?;
    if s.california {
        let n = rec
            .iter()
            .find(|r| r.panel == "california")
            .map_or(0, |r| r.n_samples);
        let fig = ErrorFigure {
            title: format!(
                "California housing: excess risk vs eps (n = {n}, delta = 1/n^2, K = {})",
                s.california_parties
            ),
            x_label: "eps".into(),
            y_label: "F(w) - F*".into(),
            log_x: true,
            series: [
                "fw",
                "alg2-exact",
                "dp-fw",
                "dp-fw-paper",
                "jl-only",
                "dist-dp-fw",
                "dist-dp-fw-paper",
            ]
            .iter()
            .map(|a| series_of(rec, "california", a, |r| r.n_eps / r.n_samples as f64))
            .collect(),
        };
        save_with_headline(&fig, &dir.join("fig-california.svg"))?;
    }
    Ok(())
}

/// The verdicts, in words, from the numbers.
fn findings(summary: &Summary) -> String {
    let rec = &summary.records;
    let find = |c: &str| summary.slopes.iter().find(|f| f.curve == c);
    let n_eps = |alg: &str| curve(rec, "n-eps", alg);
    let last = |alg: &str| {
        n_eps(alg)
            .into_iter()
            .max_by(|a, b| a.n_samples.cmp(&b.n_samples))
    };
    let mut o = String::from("## Findings\n\n");
    for (alg, name) in [
        ("dp-fw", "Talwar et al.'s private FW (zCDP)"),
        (
            "dp-fw-paper",
            "Talwar et al.'s private FW (the paper's Laplace + advanced composition)",
        ),
        ("dist-dp-fw", "Algorithm 2 (zCDP)"),
        (
            "dist-dp-fw-paper",
            "Algorithm 2 at the paper's nominal noise scales (the paper's claim not proven; their epsilon by our analysis in the table)",
        ),
    ] {
        let (Some(f), Some(l)) = (find(&format!("{alg} vs n*eps")), last(alg)) else {
            continue;
        };
        if let Some(line) = below_trivial(&n_eps(alg)) {
            o.push_str(&format!("- **{name}, against `F(0) - F*`**: {line}\n"));
        }
        let ratio = l
            .selection_noise_scale
            .map(|v| v / l.max_score_at_zero)
            .unwrap_or(f64::NAN);
        let frac = l.excess_risk_mean.unwrap_or(f64::NAN) / l.excess_risk_at_zero;
        o.push_str(&format!(
            "- **{name}**: excess risk against n eps has log-log slope {} where the theory's \
             exponent is -2/3 ({} with its log factors over this grid): {}. At the largest \
             n ({}) its excess risk is {} of the trivial `F(0) - F*` and its selection noise \
             is {:.2} times the largest score; {}\n",
            slope_cell(f.slope),
            slope_cell(f.theory_slope_with_logs),
            match f.slope {
                Some(b) if (b + 2.0 / 3.0).abs() <= 0.15 => "the shape holds".to_owned(),
                Some(b) => format!("flatter by {:.2}", b + 2.0 / 3.0),
                None => "not measured".to_owned(),
            },
            l.n_samples,
            if frac.is_finite() {
                format!("{:.0} %", 100.0 * frac)
            } else {
                "-".into()
            },
            ratio,
            if frac >= 0.8 {
                "it has barely learnt anything yet: the grid is in the pre-asymptotic regime \
                 where the noise decides the selection, and the error tends to the level of \
                 `w = 0` (the average of nearly random vertices) rather than following the \
                 rate."
            } else {
                "it is learning, but the noise still spoils a large share of the selections, \
                 so the curve is still bending towards its asymptotic slope."
            }
        ));
    }
    if let (Some(j), Some(b)) = (find("jl-only vs n*eps"), find("alg2-exact vs n*eps")) {
        o.push_str(&format!(
            "- **Sketch, no noise** (the JL-only ablation): slope {} against n eps, where Algorithm 2's update \
             with the exact residual has {}. The sketch alone leaves an error floor that does \
             not fall with n (Section 2, sketch dimension: slope {} against m). Lou & \
             Cheung's Theorem 3 treats the sketch error as a gradient inexactness that must \
             shrink with the step size; with `m = O(iota^-2 log(T/delta))` it does not.\n",
            slope_cell(j.slope),
            slope_cell(b.slope),
            slope_cell(find("jl-only vs m").and_then(|f| f.slope)),
        ));
    }
    if let Some(f) = find("dist-dp-fw vs p") {
        o.push_str(&format!(
            "- **Sampling rate**: Algorithm 2's excess risk against p has slope {}; Theorem 3's \
             bound has `1/p^2` (slope -2): {}.\n",
            slope_cell(f.slope),
            match f.slope {
                Some(b) if b >= -2.15 => "milder than the bound, as an upper bound allows",
                Some(_) => "steeper than the bound",
                None => "not measured",
            }
        ));
    }
    if let Some(f) = find("dist-dp-fw vs K") {
        o.push_str(&format!(
            "- **Parties**: at fixed p, Algorithm 2's excess risk against K has slope {}: {}\n",
            slope_cell(f.slope),
            match f.slope {
                Some(b) if b > 0.0 =>
                    "it grows with K, as the theory's constants and the \
                                       composition over the K parties' releases both predict.",
                Some(_) =>
                    "it does not grow with K, although the theory's constants and the \
                            composition over the K parties' releases predict growth.",
                None => "not measured.",
            }
        ));
    }
    o.push_str(&format!(
        "- **Uplink**: `T m` floats and `T` indices per party, `K T m` floats in total, \
         exactly, in all {} sketched configurations.\n\n",
        summary.uplink_identity_checked
    ));
    o
}

/// Where a curve of the `n eps` sweep falls below the trivial excess `F(0) - F*`: the
/// smallest n measured there, or, when it never does, the n at which the least-squares
/// line of `log(excess / (F(0) - F*))` on `log n` crosses 0 (an extrapolation from the
/// measured slope).
fn below_trivial(c: &[&Record]) -> Option<String> {
    let pts: Vec<(f64, f64)> = c
        .iter()
        .filter_map(|r| {
            let e = r.excess_risk_mean?;
            (e > 0.0 && r.excess_risk_at_zero > 0.0)
                .then(|| (r.n_samples as f64, e / r.excess_risk_at_zero))
        })
        .collect();
    if pts.is_empty() {
        return None;
    }
    let ratios = pts
        .iter()
        .map(|(n, r)| format!("{:.0} % at n = {n}", 100.0 * r))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some((n, r)) = pts
        .iter()
        .filter(|p| p.1 < 1.0)
        .min_by(|a, b| a.0.total_cmp(&b.0))
    {
        return Some(format!(
            "below it from n = {n} on ({:.0} % of it there; {ratios})",
            100.0 * r
        ));
    }
    let b = log_log_slope(&pts)?;
    let k = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0.ln()).sum::<f64>() / k,
        pts.iter().map(|p| p.1.ln()).sum::<f64>() / k,
    );
    Some(if b < 0.0 {
        format!(
            "never below it on this grid ({ratios}); the measured slope of excess / (F(0) - F*)              against n, {b:.2}, reaches 1 at n = {:.3e} (extrapolated)",
            (mx - my / b).exp()
        )
    } else {
        format!("never below it on this grid ({ratios}), and not decreasing (slope {b:.2})")
    })
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), sci)
}

fn slope_cell(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

fn render_report(
    config: &ExperimentConfig,
    summary: &Summary,
    setup_seconds: f64,
    cpu: Option<f64>,
    load: (Option<f64>, Option<f64>),
) -> String {
    let s = &summary.settings;
    let rec = &summary.records;
    let find = |c: &str| summary.slopes.iter().find(|f| f.curve == c);
    let mut o = String::new();
    o.push_str(
        "# Distributed private Frank-Wolfe (Lou & Cheung, AAAI 2018): validation of the \
         predicted shapes\n\n",
    );
    o.push_str(&format!(
        "Profile `{}`, seed {}, {} on {}; wall time {:.1} s (data and reference optima {:.1} s), \
         CPU {} s, load average {} before / {} after. Command: `cargo xtask reproduce dp-fw \
         --profile {}`.\n\n",
        config.profile.name(),
        config.seed,
        summary.meta.date,
        machine_description(),
        summary.meta.wall_seconds.unwrap_or(f64::NAN),
        setup_seconds,
        cpu.map_or("?".into(), |c| format!("{c:.1}")),
        load.0.map_or("?".into(), |l| format!("{l:.2}")),
        load.1.map_or("?".into(), |l| format!("{l:.2}")),
        config.profile.name()
    ));
    o.push_str(
        "The paper proves rates and reports no experiments, so there are no paper numbers to \
         match: this report checks the **shapes** its theorems predict. Problem: \
         `F(w) = (1/(2n)) ||A w - y||^2` over an l1 ball of radius eta = 1 (Lou & Cheung's \
         Eq. 12). Synthetic data: `A_rj` uniform on {-1, +1}, a 10-sparse truth with \
         `||x*||_1 = 1`, `y = clip(A x* + N(0, 0.1^2), -1, 1)`, so the public bounds \
         `|A_rj| <= 1` and `|y_r| <= 1` that the privacy proofs need hold by construction. \
         Every run uses `T = ceil((n eps)^{2/3})` iterations, `delta = 1/n^2` and the \
         sketch dimension `m = ceil(c iota^-2 ln(2T/delta))` with ",
    );
    o.push_str(&format!(
        "c = {}, iota = {} (capped at {} n). Excess risk is `F(w) - F*` against a certified \
         optimum over the **same** feasible set (duality gap <= {:e}): the l1 ball for FW and \
         Talwar et al.'s private FW, the product of the K parties' l1 balls of radius 1 for \
         Algorithm 2's exact update, the JL-only ablation and Algorithm 2 (the paper's server update moves every \
         party's block inside its own ball). Each point is the mean over {} seeds; figures \
         show the min-max band. Algorithm 2 and Talwar's FW are calibrated in zCDP to the \
         stated (eps, delta), with every party's releases composed (one person's row touches \
         all K parties).\n\n",
        s.c_jl, s.iota, s.m_max_fraction, s.ref_tol, s.runs
    ));

    o.push_str(&findings(summary));
    o.push_str("## 1. Excess risk against n * eps\n\n");
    o.push_str(&format!(
        "Grid: d = {}, n in {:?}, eps = {}, K = {} parties, tau = {} of each party's {} \
         features per round. Figure: `fig-excess-vs-neps.svg` (Algorithm 2 proven and at the \
         paper's noise, the stronger private FW, FW and Algorithm 2's exact update; the other \
         rows in `fig-excess-vs-neps-more.svg`).\n\n",
        s.d,
        s.n_grid,
        s.epsilon,
        s.parties,
        tau_of(s.tau_fraction, s.d, s.parties),
        block_size(s.d, s.parties)
    ));
    let mut all_n: Vec<usize> = s.n_grid.iter().chain(&s.n_grid_central).copied().collect();
    all_n.sort_unstable();
    all_n.dedup();
    let mut rows = Vec::new();
    let ratio = |r: Option<&Record>| {
        r.and_then(|r| Some(r.selection_noise_scale? / r.max_score_at_zero))
            .map_or("-".into(), |v| format!("{v:.2}"))
    };
    for &n in &all_n {
        let name = format!("synthetic-n{n}");
        let get = |alg: &str| {
            rec.iter()
                .find(|r| r.panel == "n-eps" && r.problem == name && r.algorithm == alg)
        };
        let Some(any) = get("dp-fw") else {
            continue;
        };
        rows.push(vec![
            n.to_string(),
            format!("{}", any.n_eps),
            any.iterations.to_string(),
            get("dist-dp-fw")
                .and_then(|r| r.sketch_dim)
                .map_or("-".into(), |m| m.to_string()),
            sci(any.excess_risk_at_zero),
            opt(get("fw").and_then(|r| r.excess_risk_mean)),
            opt(get("alg2-exact").and_then(|r| r.excess_risk_mean)),
            opt(get("dp-fw").and_then(|r| r.excess_risk_mean)),
            opt(get("dp-fw-paper").and_then(|r| r.excess_risk_mean)),
            opt(get("jl-only").and_then(|r| r.excess_risk_mean)),
            opt(get("dist-dp-fw").and_then(|r| r.excess_risk_mean)),
            opt(get("dist-dp-fw-paper").and_then(|r| r.excess_risk_mean)),
            get("dist-dp-fw-paper")
                .and_then(|r| r.reported_epsilon)
                .map_or("-".into(), |e| format!("{e:.3}")),
            ratio(get("dp-fw")),
            ratio(get("dist-dp-fw")),
        ]);
    }
    o.push_str(&markdown_table(
        &[
            "n",
            "n eps",
            "T",
            "m",
            "F(0) - F*",
            "FW",
            "Alg. 2 update, exact",
            "private FW (Talwar), zCDP",
            "private FW (Talwar), paper accounting",
            "sketch, no noise",
            "Algorithm 2, zCDP",
            "Algorithm 2, paper's noise scales",
            "their epsilon by our analysis (the paper claims the target)",
            "noise / signal, Talwar",
            "noise / signal, Alg. 2",
        ],
        &rows,
    ));
    o.push_str(&format!(
        "\nThe rows with n in {:?} run only the central algorithms (Algorithm 2 costs `O(K m n)` \
         per round). 'Noise / signal' is the selection noise scale (the Gumbel scale of the \
         report-noisy-max, from the solver's plan) over the largest score at the start, \
         `||grad F(0)||_inf` (computed without privacy, for this diagnosis only). The largest \
         of `2d` Gumbel draws exceeds the scale by about `ln(2d)`, so while this ratio is \
         near or above `1 / ln(2d)` the selection is mostly noise and the excess risk stays \
         near `F(0) - F*`.\n",
        s.n_grid_central
    ));
    o.push_str("\nFitted log-log slopes against the theory:\n\n");
    let mut rows = Vec::new();
    for alg in [
        "dp-fw",
        "dp-fw-paper",
        "dist-dp-fw",
        "dist-dp-fw-paper",
        "jl-only",
        "alg2-exact",
        "fw",
    ] {
        if let Some(f) = find(&format!("{alg} vs n*eps")) {
            let th = f.theory_exponent.unwrap_or(f64::NAN);
            let verdict = match f.slope {
                Some(b) if (b - th).abs() <= 0.15 => "holds (within 0.15)",
                Some(b) if b < 0.0 => "decreasing, but off by more than 0.15",
                Some(_) => "does not hold (not decreasing)",
                None => "not enough points",
            };
            rows.push(vec![
                label(alg).to_owned(),
                slope_cell(f.slope),
                format!("{th:.2}"),
                slope_cell(f.theory_slope_with_logs),
                slope_cell(f.slope.map(|b| b - th)),
                verdict.to_owned(),
            ]);
        }
    }
    o.push_str(&markdown_table(
        &[
            "curve",
            "measured slope",
            "theory exponent",
            "theory with its log factors",
            "measured - theory",
            "verdict",
        ],
        &rows,
    ));
    o.push_str(
        "\nThe theory: Talwar et al. (2015) bound the excess risk of private FW over the l1 \
         ball by `O(log(n |S|) sqrt(log(1/delta)) / (n eps)^{2/3})` with `|S| = 2d` vertices; \
         Lou & Cheung (2018, Theorem 3) bound Algorithm 2 by \
         `O(log(2 G eta K tau n) / (p^2 (n eps)^{2/3}))` with `sqrt(log(1/delta) + eps)` inside \
         their constants. Both are upper bounds with exponent -2/3 on `n eps`; the third \
         column is the local slope of the full bound, log factors included, over the same \
         grid (with `delta = 1/n^2` the logs grow with n and flatten the slope). The \
         non-private FW and exact-update floors also fall as `(n eps)^{-2/3}` here only because T \
         does (Jaggi's `O(1/T)` optimisation error). A measured slope steeper than the bound \
         is not a contradiction: a bound only caps the error, and once the selection finds \
         the right vertices the noise stops mattering.\n\n",
    );

    o.push_str("## 2. Sampling rate p and number of parties K\n\n");
    o.push_str(&format!(
        "n = {}, eps = {}, delta = 1/n^2. Figures: `fig-sampling-rate.svg`, `fig-parties.svg`.\n\n",
        s.n_fixed, s.epsilon
    ));
    let mut rows = Vec::new();
    for r in rec.iter().filter(|r| r.panel == "sampling-rate") {
        if r.algorithm != "dist-dp-fw" {
            continue;
        }
        let other = |alg: &str| {
            rec.iter()
                .find(|x| x.panel == "sampling-rate" && x.algorithm == alg && x.tau == r.tau)
        };
        rows.push(vec![
            r.tau.to_string(),
            format!("{:.4}", r.sampling_rate),
            opt(other("alg2-exact").and_then(|x| x.excess_risk_mean)),
            opt(other("jl-only").and_then(|x| x.excess_risk_mean)),
            opt(r.excess_risk_mean),
        ]);
    }
    o.push_str(&format!("K = {}:\n\n", s.parties));
    o.push_str(&markdown_table(
        &[
            "tau",
            "p",
            "Alg. 2 update, exact",
            "sketch, no noise",
            "Algorithm 2",
        ],
        &rows,
    ));
    let mut rows = Vec::new();
    for r in rec.iter().filter(|r| r.panel == "parties") {
        if r.algorithm != "dist-dp-fw" {
            continue;
        }
        let other = |alg: &str| {
            rec.iter()
                .find(|x| x.panel == "parties" && x.algorithm == alg && x.parties == r.parties)
        };
        rows.push(vec![
            r.parties.to_string(),
            r.tau.to_string(),
            format!("{:.3}", r.sampling_rate),
            opt(other("alg2-exact").and_then(|x| x.excess_risk_mean)),
            opt(other("jl-only").and_then(|x| x.excess_risk_mean)),
            opt(r.excess_risk_mean),
            r.reported_epsilon.map_or("-".into(), |e| format!("{e:.3}")),
        ]);
    }
    o.push_str("\nParties (tau = half of each block, so p stays fixed):\n\n");
    o.push_str(&markdown_table(
        &[
            "K",
            "tau",
            "p",
            "Alg. 2 update, exact",
            "sketch, no noise",
            "Algorithm 2",
            "reported eps",
        ],
        &rows,
    ));
    let pslope = find("dist-dp-fw vs p").and_then(|f| f.slope);
    let kslope = find("dist-dp-fw vs K").and_then(|f| f.slope);
    o.push_str(&format!(
        "\nMeasured log-log slope of Algorithm 2's excess risk against p: {}; Theorem 3's \
         bound grows as `1/p^2` (slope -2), an upper bound: {}. Against K (p fixed): slope {}. \
         Theorem 3 predicts growth with K at fixed p through `C_g` (proportional to \
         `K iota nnz(a) + K^{{3/2}} sqrt(nnz(a)) sigma(J)^2`) and the curvature; our \
         accounting adds its own reason: a person's row is spread over all K parties, so \
         their `K T` releases compose and each party's noise grows like `sqrt(K)` at a fixed \
         total budget.\n\n",
        slope_cell(pslope),
        match pslope {
            Some(b) if b >= -2.0 - 0.15 => "the measured dependence is within the bound",
            Some(_) => "the measured dependence is steeper than the bound",
            None => "not measured",
        },
        slope_cell(kslope)
    ));

    o.push_str(&format!(
        "### Sketch dimension\n\nn = {}, K = {}, tau = {}, eps = {}; m set by hand \
         (the other sweeps use `m = ceil(iota^-2 ln(2T/delta))`). Figure: \
         `fig-sketch-dim.svg`.\n\n",
        s.n_fixed,
        s.parties,
        tau_of(s.tau_fraction, s.d, s.parties),
        s.epsilon
    ));
    let mut rows = Vec::new();
    for r in curve(rec, "sketch-dim", "jl-only") {
        let alg2 = rec.iter().find(|x| {
            x.panel == "sketch-dim" && x.algorithm == "dist-dp-fw" && x.sketch_dim == r.sketch_dim
        });
        rows.push(vec![
            r.sketch_dim.map_or("-".into(), |m| m.to_string()),
            opt(r.excess_risk_mean),
            opt(alg2.and_then(|x| x.excess_risk_mean)),
            alg2.and_then(|x| x.selection_noise_scale)
                .map_or("-".into(), |v| format!("{:.2}", v / r.max_score_at_zero)),
        ]);
    }
    o.push_str(&markdown_table(
        &[
            "m",
            "sketch, no noise",
            "Algorithm 2",
            "noise / signal, Alg. 2",
        ],
        &rows,
    ));
    o.push_str(&format!(
        "\nMeasured slopes against m: sketch only {}, Algorithm 2 {}. The sketch enters the \
         scores through `a_i^T J^T J (A x) / n`: a Johnson-Lindenstrauss sketch keeps this \
         inner product within a relative error of about `1/sqrt(m)` of `||a_i|| ||A x|| / n`, \
         which does not shrink with n, so at fixed m (or m growing like log n, as the \
         theory's `m = O(iota^-2 log(T/delta))`) the sketch alone leaves an error floor that \
         more data cannot remove.\n\n",
        slope_cell(find("jl-only vs m").and_then(|f| f.slope)),
        slope_cell(find("dist-dp-fw vs m").and_then(|f| f.slope)),
    ));
    o.push_str("## 3. Uplink communication\n\n");
    let mut rows = Vec::new();
    for r in curve(rec, "n-eps", "dist-dp-fw") {
        let jl = rec
            .iter()
            .find(|x| x.panel == "n-eps" && x.algorithm == "jl-only" && x.problem == r.problem);
        rows.push(vec![
            r.n_samples.to_string(),
            r.iterations.to_string(),
            r.sketch_dim.map_or("-".into(), |m| m.to_string()),
            r.uplink_indices_per_party
                .map_or("-".into(), |v| v.to_string()),
            r.uplink_floats_per_party
                .map_or("-".into(), |v| v.to_string()),
            jl.and_then(|x| x.uplink_floats_total)
                .map_or("-".into(), |v| v.to_string()),
            r.uplink_bytes_per_party
                .map_or("-".into(), |v| v.to_string()),
            r.unsketched_floats_per_party.map_or("-".into(), |v| {
                (v * FLOAT_BYTES + r.iterations * INDEX_BYTES).to_string()
            }),
            match (r.uplink_bytes_per_party, r.unsketched_floats_per_party) {
                (Some(b), Some(u)) => {
                    format!(
                        "{:.1}",
                        (u * FLOAT_BYTES + r.iterations * INDEX_BYTES) as f64 / b as f64
                    )
                }
                _ => "-".into(),
            },
        ]);
    }
    o.push_str(&format!(
        "Per party per round: one signed index ({INDEX_BYTES} bytes) and m floats \
         ({FLOAT_BYTES} bytes each); the unsketched baseline ships the selected column in \
         full (n floats). K = {}. Figure: `fig-uplink-bytes.svg`.\n\n",
        s.parties
    ));
    o.push_str(&markdown_table(
        &[
            "n",
            "T",
            "m",
            "indices per party",
            "floats per party",
            "floats, all parties (server counters, JL-only run)",
            "bytes per party",
            "unsketched bytes per party",
            "saving",
        ],
        &rows,
    ));
    let up = find("uplink floats per party vs n*eps");
    o.push_str(&format!(
        "\nThe identity `uplink floats = T m` per party and `K T m` in total was checked \
         exactly for every sketched configuration ({} records, every seed): for the JL-only \
         runs against the server's per-party counters (`Server::uplink_floats`), for \
         Algorithm 2 against the count the solver reports from its server (party 0). It \
         holds everywhere (the run stops with an error otherwise). Growth with n: measured \
         slope of floats per party against n eps {}, Corollary 1's \
         `O(iota^-2 log((n eps)^{{1/3}}) K (n eps)^{{2/3}})` has exponent 2/3 ({} with the \
         log factor over this grid; here m is {}). The unsketched baseline grows as \
         `T n ~ n^{{5/3}}`.\n\n",
        summary.uplink_identity_checked,
        slope_cell(up.and_then(|f| f.slope)),
        slope_cell(up.and_then(|f| f.theory_slope_with_logs)),
        if curve(rec, "n-eps", "dist-dp-fw")
            .iter()
            .any(|r| r.sketch_dim.map(|m| m as f64)
                == Some((s.m_max_fraction * r.n_samples as f64).floor()))
        {
            "capped at a fraction of n for the smallest n, which steepens the slope"
        } else {
            "never capped"
        }
    ));

    o.push_str("## 4. The JL-only ablation and the floors\n\n");
    o.push_str(
        "'Sketch, no noise' runs Algorithm 2's protocol with the public sketch and neither \
         selection noise nor sketch noise: its gap to Algorithm 2's exact update (same sampling, exact residual) is \
         the error the JL sketch alone causes; its gap to Algorithm 2 is the cost of privacy. \
         FW (Jaggi 2013) and Algorithm 2's exact update are the non-private floors with the same T.\n\n",
    );
    let mut rows = Vec::new();
    for &n in &s.n_grid {
        let name = format!("synthetic-n{n}");
        let get = |alg: &str| {
            rec.iter()
                .find(|r| r.panel == "n-eps" && r.problem == name && r.algorithm == alg)
                .and_then(|r| r.excess_risk_mean)
        };
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.1}", a / b),
            _ => "-".into(),
        };
        rows.push(vec![
            n.to_string(),
            ratio(get("jl-only"), get("alg2-exact")),
            ratio(get("dist-dp-fw"), get("jl-only")),
            ratio(get("dp-fw"), get("fw")),
        ]);
    }
    o.push_str(&markdown_table(
        &[
            "n",
            "sketch-only / exact update",
            "Algorithm 2 / sketch-only",
            "private FW / FW",
        ],
        &rows,
    ));

    if s.california {
        o.push_str("\n## 5. California housing, features split across parties\n\n");
        o.push_str(&format!(
            "{} districts{}, 8 features split into K = {} contiguous blocks (tau = {} per \
             round). Preprocessing for the bounds the privacy proofs state (`|A_rj| <= 1`, \
             `|y_r| <= 1`), with public ranges only, never statistics of the data: log of \
             MedInc, AveRooms, AveBedrms, Population, AveOccup; each feature's public range \
             (census top-codes, California's latitude 32-42 and longitude -124.5 to -114) \
             mapped onto [-1, 1] and clipped there; the label MedHouseVal (top-coded at \
             5.00001) mapped from [0.15, 5.00001] onto [-1, 1]. The ranges were chosen by us \
             from the data set's documentation. Reference optima certified to a duality gap \
             of {:e}. Figure: `fig-california.svg` (other rows: `fig-california-more.svg`).\n\n",
            rec.iter()
                .find(|r| r.panel == "california")
                .map_or(0, |r| r.n_samples),
            s.california_rows
                .map_or(String::new(), |_| " (a prefix of the 20,640 rows only)"
                    .to_owned()),
            s.california_parties,
            s.california_tau,
            s.california_ref_tol
        ));
        let mut rows = Vec::new();
        for &eps in &s.california_eps {
            let get = |alg: &str| {
                rec.iter().find(|r| {
                    r.panel == "california"
                        && r.algorithm == alg
                        && (r.n_eps / r.n_samples as f64 - eps).abs() < 1e-12
                })
            };
            let any = get("dist-dp-fw");
            rows.push(vec![
                format!("{eps}"),
                any.map_or("-".into(), |r| r.iterations.to_string()),
                any.and_then(|r| r.sketch_dim)
                    .map_or("-".into(), |m| m.to_string()),
                opt(get("fw").and_then(|r| r.excess_risk_mean)),
                opt(get("alg2-exact").and_then(|r| r.excess_risk_mean)),
                opt(get("dp-fw").and_then(|r| r.excess_risk_mean)),
                opt(get("jl-only").and_then(|r| r.excess_risk_mean)),
                opt(get("dist-dp-fw").and_then(|r| r.excess_risk_mean)),
            ]);
        }
        o.push_str(&markdown_table(
            &[
                "eps",
                "T",
                "m",
                "FW",
                "Alg. 2 update, exact",
                "private FW (Talwar)",
                "sketch, no noise",
                "Algorithm 2",
            ],
            &rows,
        ));
        if let Some(r) = rec.iter().find(|r| r.panel == "california") {
            o.push_str(&format!(
                "\n`F*` = {} over the l1 ball (and {} over the product of the parties' balls).\n",
                sci(r.objective_star),
                rec.iter()
                    .find(|r| r.panel == "california" && r.algorithm == "dist-dp-fw")
                    .map_or("-".into(), |r| sci(r.objective_star))
            ));
        }
    }
    if let Some(t) = &summary.transport {
        o.push_str(&transport::render(t));
    }
    o.push_str(
        "\n## Caveats\n\n\
         - The paper's constants are not reproduced: our Algorithm 2 is the self-consistent \
           reading in `docs/dp-fw.md` (exponential-mechanism selection on clipped \
           reconstructed residuals, Gaussian sketch noise calibrated to the sketch's largest \
           column norm, zCDP composition over all K parties), so only shapes are compared.\n\
         - Uplink bytes assume 8 bytes per float and per signed index; the bytes of a real \
           wire encoding are measured over gRPC in section 6.\n\
         - Seeds are public benchmark seeds; nothing here is a release of anyone's data.\n",
    );
    o.push_str(&reading_section(
        &format!(
            "The shapes the theorems predict (Talwar, Thakurta & Zhang 2015; Lou & Cheung, AAAI 2018), checked \
             on this run ({} profile; a slope meets its target within 0.15).",
            config.profile.name()
        ),
        &fw_verdicts(summary),
    ));
    o
}

/// The predicted shapes as verdicts for the closing "Reading" section.
fn fw_verdicts(summary: &Summary) -> Vec<Verdict> {
    let rec = &summary.records;
    let find = |c: &str| summary.slopes.iter().find(|f| f.curve == c);
    let mut out = Vec::new();
    for (alg, name) in [
        ("dp-fw", "Talwar et al.'s private FW"),
        ("dist-dp-fw", "Algorithm 2"),
    ] {
        let target = format!("{name}: excess risk falls as (n eps)^(-2/3)");
        let Some(f) = find(&format!("{alg} vs n*eps")) else {
            out.push(Verdict::new(target, None, "not run"));
            continue;
        };
        let Some(b) = f.slope else {
            out.push(Verdict::new(target, None, "not enough points"));
            continue;
        };
        let mut v = Verdict::new(
            target,
            Some((b + 2.0 / 3.0).abs() <= 0.15),
            format!(
                "slope {b:.2} against -0.67 (off by {:+.2}; {:.2} with the bound's log factors over this grid)",
                b + 2.0 / 3.0,
                f.theory_slope_with_logs.unwrap_or(f64::NAN)
            ),
        );
        let last = curve(rec, "n-eps", alg)
            .into_iter()
            .max_by(|a, b| a.n_samples.cmp(&b.n_samples));
        if let (Some(l), false) = (last, (b + 2.0 / 3.0).abs() <= 0.15) {
            let frac = l.excess_risk_mean.unwrap_or(f64::NAN) / l.excess_risk_at_zero;
            let ratio = l
                .selection_noise_scale
                .map_or(f64::NAN, |v| v / l.max_score_at_zero);
            v = v.because(format!(
                "at the largest n ({}) the excess risk is still {:.0} % of F(0) - F* and the selection noise is \
                 {ratio:.2} times the largest score: the grid is pre-asymptotic",
                l.n_samples,
                100.0 * frac
            ));
        }
        out.push(v);
    }
    let target =
        "Algorithm 2: excess risk against the sampling rate p no steeper than Theorem 3's 1/p^2";
    out.push(match find("dist-dp-fw vs p").and_then(|f| f.slope) {
        Some(b) => Verdict::new(target, Some(b >= -2.15), format!("slope {b:.2} against -2")),
        None => Verdict::new(target, None, "not enough points"),
    });
    let target = "Algorithm 2: excess risk grows with the number of parties K at fixed p";
    out.push(match find("dist-dp-fw vs K").and_then(|f| f.slope) {
        Some(b) => Verdict::new(target, Some(b > 0.0), format!("slope {b:.2} against K")),
        None => Verdict::new(target, None, "not enough points"),
    });
    out.push(Verdict::new(
        "Algorithm 2 sends T m floats and T indices per party (K T m floats in total)",
        (summary.uplink_identity_checked > 0).then_some(true),
        format!(
            "exact in all {} sketched configurations (a mismatch stops the run)",
            summary.uplink_identity_checked
        ),
    ));
    out
}
