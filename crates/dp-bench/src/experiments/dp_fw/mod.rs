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

use anyhow::{anyhow, bail, Context, Result};
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
use serde::{Deserialize, Serialize};

use super::harness::{Run, Usage};
use super::{ExperimentConfig, Profile};

mod figures;
mod report;
mod runs;
pub mod transport;
use crate::figures::{save_headline, BandPoint, ErrorFigure, Pick, Series};
use crate::report::{machine_description, markdown_table, reading_section, sci, Metadata, Verdict};
use crate::runner::{par_runs, stable_seed, Stats};
use figures::*;
use report::*;
use runs::*;
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
    /// `(F*, gap)` over the feasible set of `alg` with `k` parties; an error when the
    /// problem was built without that set's reference.
    fn reference(&self, alg: Alg, k: usize) -> Result<(f64, f64)> {
        let key = if alg.central() { 0 } else { k };
        self.references
            .iter()
            .find(|r| r.0 == key)
            .map(|r| (r.1, r.2))
            .ok_or_else(|| anyhow!("{}: no reference for K = {key}", self.name))
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
    let run = Run::start(config, NAME)?;
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
    let results: Vec<Result<RunResult>> = par_runs(jobs.len() * s.runs, |i| {
        let (j, r) = (i / s.runs, i % s.runs);
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
    });
    let mut records = Vec::with_capacity(jobs.len());
    for (j, job) in jobs.iter().enumerate() {
        let rs = &results[j * s.runs..(j + 1) * s.runs];
        let rec = record_of(&problems[job.problem], job, s, rs)?;
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
    let summary = Summary {
        meta: run.metadata(run.wall_seconds()),
        settings: s.clone(),
        records,
        slopes,
        uplink_identity_checked: checked,
        transport,
    };
    run.write_summary(&summary)?;
    write_figures(run.dir(), &summary)?;
    let report = render_report(config, &summary, setup_seconds, &run.usage());
    run.write_report(&report)?;
    eprintln!(
        "dp-fw: wrote summary, report and figures to {} in {:.1} s",
        run.dir().display(),
        run.wall_seconds()
    );
    Ok(())
}
