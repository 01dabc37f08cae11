//! Frank-Wolfe with feature-wise (vertically) distributed data (Lou & Cheung, AAAI 2018,
//! "Uplink communication efficient differentially private sparse optimization with
//! feature-wise distributed data"):
//!
//! * [`Bcfw`]: the non-private `(K, tau)`-distributed block-coordinate Frank-Wolfe
//!   with Algorithm 2's update (every coordinate shrinks by `1 - gamma_t`) and exact
//!   gradients and selection. It is not the paper's Algorithm 1 (BCFW-AS) as printed,
//!   which updates only the sampled blocks: on the non-separable l1 ball that partial
//!   update leaves the feasible set (with `||x||_1 = r` held outside the sampled
//!   coordinates, it adds up to `gamma r`); and
//! * [`DistDpFw`]: the private protocol (the paper's Algorithm 2, in a self-consistent
//!   reading documented in `docs/dp-fw.md`), run in-process by [`Party`] and [`Server`]
//!   values that exchange [`Uplink`] and [`Downlink`] messages, so that a transport can
//!   later carry them unchanged.
//!
//! # Problem and partition
//! LASSO-type `F(x) = (1/(2n)) ||A x - y||^2` (the mean squared loss,
//! [`dp_models::Squared::half`]) over the product of per-party l1 balls
//! `{x : ||x_{P_k}||_1 <= r_k}` ([`L1BallProduct`]): the features are split into `K`
//! contiguous blocks `P_k` (permute the columns beforehand for a random split). With
//! [`RadiusMode::PerParty`] (the paper's update, default) `r_k = eta`, so
//! `||x||_1 <= K eta`; with [`RadiusMode::Split`] `r_k = eta / K`, so `x` is in the l1
//! ball of radius `eta`. Both coincide for `K = 1`.
//!
//! # One round `t` (both algorithms)
//! Each party `k` samples `tau` of its features uniformly without replacement from its
//! own stream, estimates the partial gradients `g_i`, and selects one signed index
//! `(i_k, s_k)` maximising `s g_i` over its `2 tau` candidates (privately in
//! [`DistDpFw`]); the vertex is `-r_k s_k e_{i_k}`. The server moves
//! `x <- (1 - gamma_t) x + gamma_t sum_k (-r_k s_k e_{i_k})` with
//! `gamma_t = 2 / (p t + 2)`, `p = tau / max_k |P_k|` (every coordinate shrinks, as
//! the paper's server update does).
//!
//! # Private protocol ([`DistDpFw`])
//! `q_hat` (length `m`) tracks `(1/n) J A x` for a public Gaussian sketch `J` (`m x n`,
//! entries `N(0, 1/m)`, [`Sketch`]). Party `k` holds `A_{P_k}`, `y`, `J`, its own ledger
//! and its own secret noise generator. Per round it
//! 1. reconstructs the residual `rho = clip(n J^T q_hat - y, C_res)` entrywise and
//!    scores `g_i = (1/n) a_i^T rho` (without the clip, `g_i = (J a_i)^T q_hat - a_i^T y / n`,
//!    the paper's sketched gradient);
//! 2. selects `(i_k, s_k)` by the exponential mechanism (Gumbel report-noisy-max) over
//!    the `2 tau` scores `s g_i`;
//! 3. sends the signed index and `z_k = (1/n) J a_{i_k} + N(0, sigma^2 I_m)`.
//!
//! The server, which never sees `A` or `y`, updates `x` as above and
//! `q_hat <- (1 - gamma_t) q_hat + gamma_t sum_k (-r_k s_k) z_k`, and broadcasts `q_hat`.
//! With the noise off, `q_hat = (1/n) J A x` at every round.
//!
//! # Privacy
//! Replace-one neighbours: one individual's row (all parties' features and the label)
//! changes. Preconditions (checked): `|A_rj| <= B`, `|y_r| <= Y`. Per party and round:
//! the scores have sensitivity `2 B C_res / n` (only row `r`'s term of `a_i^T rho`
//! changes, and `q_hat` is a post-processing of earlier releases), the sketch has L2
//! sensitivity `2 B max_r ||J[:, r]||_2 / n` (`J` is fixed and public). Each party's
//! ledger holds `T` exponential-mechanism selections and `T` Gaussian releases; since
//! every party's releases depend on the same row, the reported guarantee composes all
//! `K` ledgers in zCDP (`K T` of each). Proofs: `docs/privacy/dp-fw.md`.

use crate::dp_fw::check_data_bounds;
use crate::dp_gcd::calibration::zcdp_split;
use crate::driver::{Declared, Model, PrivateFit, Proof, Report};
use crate::error::{invalid, OptimError, Result};
use crate::fw::{check_data, fw_update};
use crate::fw_plan::{DistDpFwPlan, FwPlan};
use crate::model::{Diagnostics, Fitted, LinearModel};
use crate::plan::SolverPlan;
use crate::privacy::{guarantee_of, privacy_setters, Adjacency, CheckedPrivacy, PrivacyParams};
use crate::solver::{check_finite, Solver, Streams, Switches};
use dp_accounting::calibrate::{shrink_to_target, Accountant};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::{Gaussian, ReportNoisyMax, RnmNoise};
use dp_accounting::release::Release;
use dp_models::constraint::{average_loss, average_loss_gradient, ConstraintSet, L1BallProduct};
use dp_models::{Dataset, Design, Loss, Squared};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// The radius of each party's l1 ball.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum RadiusMode {
    /// `eta` per party (the paper's server update): `||x||_1 <= K eta`.
    #[default]
    PerParty,
    /// `eta / K` per party: `||x||_1 <= eta`.
    Split,
}

impl RadiusMode {
    /// The name used in reports and in the protocol's setup message.
    pub fn name(self) -> &'static str {
        match self {
            RadiusMode::PerParty => "per-party",
            RadiusMode::Split => "split",
        }
    }
    fn party_radius(self, eta: f64, k: usize) -> f64 {
        match self {
            RadiusMode::PerParty => eta,
            RadiusMode::Split => eta / k as f64,
        }
    }
}

fn check_shape(parties: usize, tau: usize, blocks: &[Vec<usize>]) -> Result<usize> {
    if parties == 0 {
        return Err(invalid(
            "parties",
            0.0,
            "the number of parties K must be >= 1",
        ));
    }
    let smallest = blocks.iter().map(Vec::len).min().unwrap_or(0);
    if tau == 0 || tau > smallest {
        return Err(invalid(
            "tau",
            tau as f64,
            "each party samples tau coordinates of its block: 1 <= tau <= min_k |P_k|",
        ));
    }
    Ok(blocks.iter().map(Vec::len).max().unwrap_or(1))
}

/// Draws one seed per party from `rng`, in party order.
fn party_streams<R: Rng + ?Sized>(rng: &mut R, k: usize) -> Vec<ChaCha20Rng> {
    (0..k)
        .map(|_| {
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            ChaCha20Rng::from_seed(seed)
        })
        .collect()
}

/// `tau` distinct local positions of `0..len`, uniformly (without replacement).
fn sample_positions(rng: &mut ChaCha20Rng, len: usize, tau: usize) -> Vec<usize> {
    rand::seq::index::sample(rng, len, tau).into_vec()
}

/// The signed index maximising `s g_i` over the candidates `(i, +1), (i, -1)`, first
/// position on ties (so a zero gradient picks `s = +1`, vertex `-r e_i`, like
/// [`L1BallProduct::block_lmo_among`]).
fn best_signed(scores: &[f64]) -> usize {
    crate::dp_gcd::argmax(scores)
}

// ------------------------------------------------------------------ non-private BCFW

/// Builder of the non-private `(K, tau)`-distributed block-coordinate Frank-Wolfe.
#[derive(Debug, Clone)]
pub struct BcfwParams<L> {
    loss: L,
    radius: f64,
    parties: usize,
    tau: Option<usize>,
    iterations: u64,
    radius_mode: RadiusMode,
}

impl<L: Loss> BcfwParams<L> {
    /// BCFW for `loss` with per-party radius from `radius` (see [`RadiusMode`]);
    /// defaults: 1 party, `tau` = the smallest block, 100 iterations.
    pub fn new(loss: L, radius: f64) -> Self {
        Self {
            loss,
            radius,
            parties: 1,
            tau: None,
            iterations: 100,
            radius_mode: RadiusMode::PerParty,
        }
    }
    /// Number of parties `K` (`1 <= K <= p`).
    pub fn parties(mut self, k: usize) -> Self {
        self.parties = k;
        self
    }
    /// Coordinates sampled per party per round (default: all of the smallest block).
    pub fn tau(mut self, tau: usize) -> Self {
        self.tau = Some(tau);
        self
    }
    /// Rounds `T >= 1`.
    pub fn iterations(mut self, t: u64) -> Self {
        self.iterations = t;
        self
    }
    /// Per-party radius mode.
    pub fn radius_mode(mut self, mode: RadiusMode) -> Self {
        self.radius_mode = mode;
        self
    }
    /// Checks the data-independent parameters.
    pub fn build(self) -> Result<Bcfw<L>> {
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(invalid("radius", self.radius, "must be finite and > 0"));
        }
        if self.parties == 0 {
            return Err(invalid(
                "parties",
                0.0,
                "the number of parties K must be >= 1",
            ));
        }
        if self.iterations == 0 {
            return Err(invalid("iterations", 0.0, "BCFW needs T >= 1"));
        }
        if self.loss.curvature_bound().is_none() {
            return Err(OptimError::Unsupported(format!(
                "BCFW needs a smooth loss; {} is not smooth",
                self.loss.name()
            )));
        }
        Ok(Bcfw { params: self })
    }
}

/// The non-private `(K, tau)` BCFW with checked parameters.
#[derive(Debug, Clone)]
pub struct Bcfw<L> {
    params: BcfwParams<L>,
}

impl<D: Design, L: Loss> Solver<D> for Bcfw<L> {
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        let start = std::time::Instant::now();
        let prm = &self.params;
        let (x, y) = (data.x(), data.y());
        let (n, p) = (x.n_samples(), x.n_features());
        check_data(data, p)?;
        data.check_labels_for(&prm.loss)?;
        let k = prm.parties;
        let radius = prm.radius_mode.party_radius(prm.radius, k);
        let set = L1BallProduct::contiguous(radius, p, k)?;
        let smallest = set.blocks().iter().map(Vec::len).min().unwrap_or(0);
        let tau = prm.tau.unwrap_or(smallest);
        let largest = check_shape(k, tau, set.blocks())?;
        let p_samp = tau as f64 / largest as f64;
        let mut streams = Streams::from_rng(rng);
        let mut sampling = party_streams(&mut streams.coordinates, k);
        let mut w = vec![0.0; p];
        let mut z = vec![0.0; n];
        let mut deriv = vec![0.0; n];
        let mut s = vec![0.0; p];
        let mut selected = Vec::new();
        let inv_n = 1.0 / n as f64;
        for t in 0..prm.iterations {
            for ((d, &zi), &yi) in deriv.iter_mut().zip(&z).zip(y) {
                *d = inv_n * prm.loss.derivative(zi, yi);
            }
            s.iter_mut().for_each(|v| *v = 0.0);
            for (b, block) in set.blocks().iter().enumerate() {
                let pos = sample_positions(&mut sampling[b], block.len(), tau);
                let mut scores = Vec::with_capacity(2 * tau);
                for &l in &pos {
                    let g = x.col_dot(block[l], &deriv);
                    scores.push(g);
                    scores.push(-g);
                }
                let c = best_signed(&scores);
                let j = block[pos[c / 2]];
                let sign = if c.is_multiple_of(2) { 1.0 } else { -1.0 };
                s[j] = -radius * sign;
                selected.push(j);
            }
            fw_update(&mut w, &s, 2.0 / (p_samp * t as f64 + 2.0));
            x.matvec(&w, &mut z);
        }
        check_finite("BCFW", &w, "check the data")?;
        let mut grad = vec![0.0; p];
        average_loss_gradient(x, &prm.loss, &z, y, &mut deriv, &mut grad);
        Ok(Fitted {
            model: LinearModel {
                algorithm: "bcfw".into(),
                coefficients: w.clone(),
                intercept: None,
                iterations: prm.iterations,
                privacy: None,
            },
            diagnostics: Diagnostics {
                objective: average_loss(&prm.loss, &z, y),
                seconds: start.elapsed().as_secs_f64(),
                selected,
                duality_gap: Some(set.gap(&grad, &w)),
                ..Diagnostics::default()
            },
        })
    }
}

// ------------------------------------------------------------------ messages

/// Server to every party, at the start of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Downlink {
    /// Round `t`.
    pub round: u64,
    /// The sketched running vector `q_hat` (length `m`), tracking `(1/n) J A x^t`.
    pub q_hat: Vec<f64>,
}

/// One party to the server, once per round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Uplink {
    /// Sender `k`.
    pub party: usize,
    /// Round `t`.
    pub round: u64,
    /// Global feature index `i_k` of the selected vertex.
    pub index: usize,
    /// Sign `s_k` in `{-1, +1}` of the selected candidate; the vertex is
    /// `-r_k s_k e_{i_k}`.
    pub sign: i8,
    /// `(1/n) J a_{i_k}` plus Gaussian noise (length `m`).
    pub sketch: Vec<f64>,
}

// ------------------------------------------------------------------ public sketch

/// The Gaussian sketch `J` (`m x n`, entries `N(0, 1/m)`), generated column by column
/// from a **public** seed: column `r` comes from `ChaCha20Rng::seed_from_u64(seed)` on
/// stream `r`, so every party regenerates bit-identical columns.
///
/// # Privacy
/// `J` is data-independent; the guarantee holds for every fixed `J` (the sensitivity
/// uses the generated `J`'s largest column norm), so publishing its seed costs nothing.
/// The noise generators of the parties, in contrast, must stay secret.
#[derive(Debug, Clone, PartialEq)]
pub struct Sketch {
    m: usize,
    n: usize,
    seed: u64,
    /// Column-major `m x n`.
    entries: Vec<f64>,
}

impl Sketch {
    /// Generates `J` (`m, n >= 1`).
    pub fn generate(m: usize, n: usize, seed: u64) -> Result<Self> {
        if m == 0 {
            return Err(invalid(
                "sketch_dim",
                0.0,
                "the sketch dimension m must be >= 1",
            ));
        }
        let scale = 1.0 / (m as f64).sqrt();
        let mut entries = Vec::with_capacity(m * n);
        for r in 0..n {
            let mut g = ChaCha20Rng::seed_from_u64(seed);
            g.set_stream(r as u64);
            for _ in 0..m {
                let v: f64 = StandardNormal.sample(&mut g);
                entries.push(scale * v);
            }
        }
        Ok(Self {
            m,
            n,
            seed,
            entries,
        })
    }
    /// Column `r` of `J`.
    pub fn column(&self, r: usize) -> &[f64] {
        &self.entries[r * self.m..(r + 1) * self.m]
    }
    /// `max_r ||J[:, r]||_2`.
    pub fn max_column_norm(&self) -> f64 {
        (0..self.n)
            .map(|r| self.column(r).iter().map(|v| v * v).sum::<f64>().sqrt())
            .fold(0.0, f64::max)
    }
    /// `out = scale * J a` for a dense column `a` (length `n`).
    pub fn apply(&self, a: &[f64], scale: f64, out: &mut [f64]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        for (r, &ar) in a.iter().enumerate() {
            if ar != 0.0 {
                for (o, j) in out.iter_mut().zip(self.column(r)) {
                    *o += scale * ar * j;
                }
            }
        }
    }
    /// `out = J^T q` (length `n`).
    pub fn apply_t(&self, q: &[f64], out: &mut [f64]) {
        for (r, o) in out.iter_mut().enumerate() {
            *o = self.column(r).iter().zip(q).map(|(a, b)| a * b).sum();
        }
    }
}

// ------------------------------------------------------------------ party and server

/// One data holder: its own columns, the labels, the public sketch, its own ledger and
/// its own secret noise generator. It only ever reads [`Downlink`]s and answers with
/// [`Uplink`]s.
#[derive(Debug)]
pub struct Party {
    id: usize,
    features: Vec<usize>,
    cols: Vec<Vec<f64>>,
    y: Vec<f64>,
    sketch: Sketch,
    radius_clip: f64,
    tau: usize,
    selection: Option<ReportNoisyMax>,
    sketch_noise: Option<Gaussian>,
    ledger: Ledger,
    sampling: ChaCha20Rng,
    noise: ChaCha20Rng,
    resid: Vec<f64>,
}

/// The per-round releases of a party (`None`: noise off, not private), each with the
/// sensitivity its sampler is built for; [`Party::new`] charges them for every round and
/// builds its samplers from the charged releases.
#[derive(Debug, Clone)]
pub struct PartyMechanisms {
    /// One round's selection over the signed candidates (the exponential mechanism, or
    /// Laplace report-noisy-max as a pure-DP release) and the score sensitivity.
    pub selection: Option<(Release, f64)>,
    /// One round's Gaussian release of the sketch and the sketch's L2 sensitivity.
    pub sketch_noise: Option<(Release, f64)>,
    /// Clipping bound `C_res` of the reconstructed residual (`f64::INFINITY`: none).
    pub residual_clip: f64,
}

impl Party {
    /// Party `id` holding `features` (global indices) with their columns `cols` (each of
    /// length `n`) and labels `y`. Its ledger is charged with all `rounds` rounds of its
    /// mechanisms here, before any draw.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: usize,
        features: Vec<usize>,
        cols: Vec<Vec<f64>>,
        y: Vec<f64>,
        sketch: Sketch,
        tau: usize,
        mechanisms: PartyMechanisms,
        rounds: u64,
        sampling: ChaCha20Rng,
        noise: ChaCha20Rng,
    ) -> Result<Self> {
        if features.len() != cols.len() || cols.iter().any(|c| c.len() != y.len()) {
            return Err(OptimError::Shape(format!(
                "party {id}: {} features, {} columns, {} labels",
                features.len(),
                cols.len(),
                y.len()
            )));
        }
        if tau == 0 || tau > features.len() {
            return Err(invalid("tau", tau as f64, "1 <= tau <= |P_k|"));
        }
        // Every round's releases are charged here, before any draw, and the samplers
        // are the charged releases' own.
        let mut ledger = Ledger::new();
        let selection = match &mechanisms.selection {
            Some((release, sensitivity)) => {
                let charged = release.repeated(rounds)?;
                ledger.charge(charged.clone())?;
                Some(charged.report_noisy_max(*sensitivity)?)
            }
            None => None,
        };
        let sketch_noise = match &mechanisms.sketch_noise {
            Some((release, sensitivity)) => {
                let charged = release.repeated(rounds)?;
                ledger.charge(charged.clone())?;
                Some(charged.gaussian(*sensitivity)?)
            }
            None => None,
        };
        let n = y.len();
        Ok(Self {
            id,
            features,
            cols,
            y,
            sketch,
            radius_clip: mechanisms.residual_clip,
            tau,
            selection,
            sketch_noise,
            ledger,
            sampling,
            noise,
            resid: vec![0.0; n],
        })
    }
    /// The party's ledger (everything it will release, charged up front).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }
    /// The global feature indices this party holds.
    pub fn features(&self) -> &[usize] {
        &self.features
    }

    /// Answers one round.
    pub fn round(&mut self, msg: &Downlink) -> Result<Uplink> {
        let n = self.y.len();
        let nf = n as f64;
        // rho = clip(n J^T q_hat - y, C_res)
        self.sketch.apply_t(&msg.q_hat, &mut self.resid);
        for (r, yr) in self.resid.iter_mut().zip(&self.y) {
            *r = (nf * *r - yr).clamp(-self.radius_clip, self.radius_clip);
        }
        let pos = sample_positions(&mut self.sampling, self.features.len(), self.tau);
        let mut scores = Vec::with_capacity(2 * self.tau);
        for &l in &pos {
            let g: f64 = self.cols[l]
                .iter()
                .zip(&self.resid)
                .map(|(a, b)| a * b)
                .sum::<f64>()
                / nf;
            scores.push(g);
            scores.push(-g);
        }
        // # Privacy: exponential mechanism over 2 tau scores of sensitivity
        // 2 B C_res / n (module docs); only the signed index is released.
        let c = match &self.selection {
            Some(m) => m.select(&mut self.noise, &scores)?,
            None => best_signed(&scores),
        };
        let l = pos[c / 2];
        let mut sketch = vec![0.0; self.sketch.m];
        self.sketch.apply(&self.cols[l], 1.0 / nf, &mut sketch);
        // # Privacy: Gaussian mechanism on (1/n) J a, L2 sensitivity
        // 2 B max_r ||J[:, r]|| / n.
        if let Some(g) = &self.sketch_noise {
            for v in &mut sketch {
                *v += g.sample(&mut self.noise);
            }
        }
        Ok(Uplink {
            party: self.id,
            round: msg.round,
            index: self.features[l],
            sign: if c % 2 == 0 { 1 } else { -1 },
            sketch,
        })
    }
}

/// Why the server refused an uplink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UplinkFault {
    /// It claims another sender or another round than the one expected.
    OutOfRound,
    /// Its sign is not +-1, its sketch has the wrong length or non-finite entries, or its
    /// feature lies outside the sender's block.
    Malformed,
}

/// An uplink the [`Server`] refused: which party, which round, why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("party {party}, round {round}: {detail}")]
pub struct RejectedUplink {
    /// The party the uplink was expected from.
    pub party: usize,
    /// The server's round.
    pub round: u64,
    /// The kind of fault.
    pub kind: UplinkFault,
    /// What exactly is wrong.
    pub detail: String,
}

/// The coordinator: holds `x`, `q_hat` and the step schedule, never the data.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    x: Vec<f64>,
    q_hat: Vec<f64>,
    radius: f64,
    p_samp: f64,
    round: u64,
    uplink_floats: Vec<u64>,
    uplink_indices: Vec<u64>,
    /// Each party's block of features, when known: an uplink naming a feature outside its
    /// sender's block is refused (see [`Server::with_blocks`]).
    blocks: Option<Vec<Vec<usize>>>,
}

impl Server {
    /// A server for `parties` parties, dimension `dim`, sketch dimension `m`, per-party
    /// radius and sampling probability `p_samp` of the step `2 / (p_samp t + 2)`.
    pub fn new(dim: usize, m: usize, parties: usize, radius: f64, p_samp: f64) -> Self {
        Self {
            x: vec![0.0; dim],
            q_hat: vec![0.0; m],
            radius,
            p_samp,
            round: 0,
            uplink_floats: vec![0; parties],
            uplink_indices: vec![0; parties],
            blocks: None,
        }
    }
    /// Also checks that every uplink's feature lies in its sender's block (`blocks[k]`:
    /// the features of party `k`, as in [`ProtocolLayout::blocks`]). A party can
    /// only move its own coordinates; without this check a faulty or malicious party
    /// could move another party's.
    pub fn with_blocks(mut self, blocks: Vec<Vec<usize>>) -> Self {
        self.blocks = Some(blocks);
        self
    }
    /// The broadcast of the current round.
    pub fn downlink(&self) -> Downlink {
        Downlink {
            round: self.round,
            q_hat: self.q_hat.clone(),
        }
    }
    /// Takes one uplink from every party, in party order (`uplinks[k]` from party `k`),
    /// and performs the round's update. This is where every uplink is validated (a
    /// transport only decodes): sender and round, sign, sketch length, finite entries,
    /// and the feature inside the sender's block (or below `dim` without blocks). The
    /// first refused uplink stops the round, names its party ([`RejectedUplink`]) and
    /// nothing of the round is applied.
    pub fn receive(&mut self, uplinks: &[Uplink]) -> Result<()> {
        let k = self.uplink_floats.len();
        if uplinks.len() != k {
            return Err(OptimError::Shape(format!(
                "round {}: {} uplinks for {k} parties",
                self.round,
                uplinks.len()
            )));
        }
        for (i, u) in uplinks.iter().enumerate() {
            self.check(i, u)?;
        }
        let gamma = 2.0 / (self.p_samp * self.round as f64 + 2.0);
        self.x.iter_mut().for_each(|v| *v *= 1.0 - gamma);
        self.q_hat.iter_mut().for_each(|v| *v *= 1.0 - gamma);
        for u in uplinks {
            let v = -self.radius * f64::from(u.sign);
            self.x[u.index] += gamma * v;
            for (q, z) in self.q_hat.iter_mut().zip(&u.sketch) {
                *q += gamma * v * z;
            }
            self.uplink_floats[u.party] += u.sketch.len() as u64;
            self.uplink_indices[u.party] += 1;
        }
        self.round += 1;
        Ok(())
    }
    /// Validates the uplink expected from party `k` in the current round.
    fn check(&self, k: usize, u: &Uplink) -> std::result::Result<(), RejectedUplink> {
        let reject = |kind, detail: String| RejectedUplink {
            party: k,
            round: self.round,
            kind,
            detail,
        };
        if u.party != k || u.round != self.round {
            return Err(reject(
                UplinkFault::OutOfRound,
                format!("uplink says party {} round {}", u.party, u.round),
            ));
        }
        if u.sign != 1 && u.sign != -1 {
            return Err(reject(
                UplinkFault::Malformed,
                format!("sign {} is not +-1", u.sign),
            ));
        }
        if u.sketch.len() != self.q_hat.len() {
            return Err(reject(
                UplinkFault::Malformed,
                format!(
                    "sketch has {} entries, expected m = {}",
                    u.sketch.len(),
                    self.q_hat.len()
                ),
            ));
        }
        if u.sketch.iter().any(|v| !v.is_finite()) {
            return Err(reject(
                UplinkFault::Malformed,
                "sketch has non-finite entries".into(),
            ));
        }
        let own = match &self.blocks {
            Some(blocks) => blocks
                .get(k)
                .is_some_and(|b| b.binary_search(&u.index).is_ok()),
            None => u.index < self.x.len(),
        };
        if !own {
            return Err(reject(
                UplinkFault::Malformed,
                format!("index {} is not one of the party's features", u.index),
            ));
        }
        Ok(())
    }
    /// The current iterate.
    pub fn x(&self) -> &[f64] {
        &self.x
    }
    /// The current `q_hat`.
    pub fn q_hat(&self) -> &[f64] {
        &self.q_hat
    }
    /// Floats received from each party so far.
    pub fn uplink_floats(&self) -> &[u64] {
        &self.uplink_floats
    }
    /// Signed indices received from each party so far.
    pub fn uplink_indices(&self) -> &[u64] {
        &self.uplink_indices
    }
}

/// Runs `rounds` synchronous rounds between `server` and `parties`.
pub fn run_protocol(server: &mut Server, parties: &mut [Party], rounds: u64) -> Result<()> {
    for _ in 0..rounds {
        let down = server.downlink();
        let ups = parties
            .iter_mut()
            .map(|p| p.round(&down))
            .collect::<Result<Vec<_>>>()?;
        server.receive(&ups)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ the private solver

/// Builder of the private distributed Frank-Wolfe. Required: `epsilon`, `delta`,
/// `feature_bound`, `label_bound`, `sketch_dim`.
#[derive(Debug, Clone)]
pub struct DistDpFwParams {
    radius: f64,
    privacy: PrivacyParams,
    parties: usize,
    tau: Option<usize>,
    iterations: u64,
    sketch_dim: Option<usize>,
    sketch_seed: u64,
    feature_bound: Option<f64>,
    label_bound: Option<f64>,
    residual_clip: Option<f64>,
    radius_mode: RadiusMode,
    selection_share: f64,
    calibration: DistCalibration,
    switches: Switches,
}

impl DistDpFwParams {
    /// The protocol for the l1 radius `eta`; defaults: 1 party, `tau` = the smallest
    /// block, 100 rounds, sketch seed 0, [`RadiusMode::PerParty`], selection share 1/2.
    pub fn new(radius: f64) -> Self {
        Self {
            radius,
            privacy: PrivacyParams::default(),
            parties: 1,
            tau: None,
            iterations: 100,
            sketch_dim: None,
            sketch_seed: 0,
            feature_bound: None,
            label_bound: None,
            residual_clip: None,
            radius_mode: RadiusMode::PerParty,
            selection_share: 0.5,
            calibration: DistCalibration::Zcdp,
            switches: Switches::ON,
        }
    }
    /// How the noise is calibrated (default [`DistCalibration::Zcdp`], proven;
    /// [`DistCalibration::PaperNominal`]: the paper's scales, with what they cost by our analysis).
    pub fn calibration(mut self, calibration: DistCalibration) -> Self {
        self.calibration = calibration;
        self
    }
    privacy_setters!();
    /// Number of parties `K` (`1 <= K <= p`).
    pub fn parties(mut self, k: usize) -> Self {
        self.parties = k;
        self
    }
    /// Coordinates sampled per party per round.
    pub fn tau(mut self, tau: usize) -> Self {
        self.tau = Some(tau);
        self
    }
    /// Rounds `T >= 1` (fixed in advance).
    pub fn iterations(mut self, t: u64) -> Self {
        self.iterations = t;
        self
    }
    /// Sketch dimension `m >= 1`.
    pub fn sketch_dim(mut self, m: usize) -> Self {
        self.sketch_dim = Some(m);
        self
    }
    /// The public seed of `J` (not a secret, see [`Sketch`]).
    pub fn sketch_seed(mut self, seed: u64) -> Self {
        self.sketch_seed = seed;
        self
    }
    /// Public bound `B >= |A_rj|`.
    pub fn feature_bound(mut self, b: f64) -> Self {
        self.feature_bound = Some(b);
        self
    }
    /// Public bound `Y >= |y_r|`.
    pub fn label_bound(mut self, y: f64) -> Self {
        self.label_bound = Some(y);
        self
    }
    /// Clipping bound `C_res` of the reconstructed residual entries (default
    /// `B K r_k + Y`, the bound on `|A_r x - y_r|` over the feasible set).
    pub fn residual_clip(mut self, c: f64) -> Self {
        self.residual_clip = Some(c);
        self
    }
    /// Per-party radius mode.
    pub fn radius_mode(mut self, mode: RadiusMode) -> Self {
        self.radius_mode = mode;
        self
    }
    /// Fraction in (0, 1) of each round's zCDP budget spent on the selection.
    pub fn selection_share(mut self, share: f64) -> Self {
        self.selection_share = share;
        self
    }
    #[cfg(test)]
    pub(crate) fn switches(mut self, s: Switches) -> Self {
        self.switches = s;
        self
    }

    /// Checks the parameters and calibrates the per-round budgets.
    pub fn build(self) -> Result<DistDpFw> {
        let privacy = self.privacy.check()?;
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(invalid("radius", self.radius, "must be finite and > 0"));
        }
        if self.parties == 0 {
            return Err(invalid(
                "parties",
                0.0,
                "the number of parties K must be >= 1",
            ));
        }
        if self.iterations == 0 {
            return Err(invalid("iterations", 0.0, "the protocol needs T >= 1"));
        }
        let m = self.sketch_dim.ok_or(OptimError::Missing("sketch_dim"))?;
        if m == 0 {
            return Err(invalid(
                "sketch_dim",
                0.0,
                "the sketch dimension m must be >= 1",
            ));
        }
        let bounds = check_data_bounds(self.feature_bound, self.label_bound)?;
        if let Some(c) = self.residual_clip {
            if c.is_nan() || c <= 0.0 || (self.switches.noise && !c.is_finite()) {
                return Err(invalid(
                    "residual_clip",
                    c,
                    "must be finite and > 0 (it bounds the score sensitivity)",
                ));
            }
        }
        let rounds = (self.parties as u64)
            .checked_mul(self.iterations)
            .ok_or_else(|| invalid("iterations", self.iterations as f64, "K T overflows"))?;
        let split = zcdp_split(
            privacy.epsilon.get(),
            privacy.delta.get(),
            rounds,
            self.selection_share,
        )?;
        // Fit to the joint ledger (all parties) under zCDP.
        let split = shrink_to_target(
            split,
            |s| {
                let z = 1.0 / (2.0 * s.rho_update).sqrt();
                joint_ledger(self.parties, s.selection_epsilon, z, self.iterations)
            },
            |mut s, shrink| {
                s.selection_epsilon *= shrink;
                s.rho_update *= shrink;
                s
            },
            privacy.epsilon,
            privacy.delta,
            Accountant::Zcdp,
        )?;
        Ok(DistDpFw {
            params: self,
            privacy,
            selection_epsilon: split.selection_epsilon,
            noise_multiplier: 1.0 / (2.0 * split.rho_update).sqrt(),
            bounds,
        })
    }
}

/// One party's ledger: `T` selections then `T` sketches.
fn party_ledger(eps0: f64, z: f64, t: u64) -> dp_accounting::Result<Ledger> {
    let mut l = Ledger::new();
    l.charge(Charge::ExponentialMechanism {
        epsilon: eps0,
        count: t,
    })?;
    l.charge(Charge::Gaussian {
        noise_multiplier: z,
        count: t,
    })?;
    Ok(l)
}

/// All `K` parties' ledgers, concatenated: what the transcript composes.
fn joint_ledger(k: usize, eps0: f64, z: f64, t: u64) -> dp_accounting::Result<Ledger> {
    let mut l = Ledger::new();
    for _ in 0..k {
        for c in party_ledger(eps0, z, t)?.entries() {
            l.charge(c.clone())?;
        }
    }
    Ok(l)
}

/// How [`DistDpFw`] calibrates its noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum DistCalibration {
    /// Our calibration (the default): Gumbel selection (the exponential mechanism) and
    /// Gaussian sketches, composed over the `K T` releases of every party in zCDP and
    /// fitted to the target on the joint ledger. Proven.
    #[default]
    Zcdp,
    /// Lou & Cheung's nominal noise scales (Sec. "Algorithm Description", A and B):
    /// Laplace report-noisy-max at scale `b = (2 G eta / (K n)) sqrt(2 T ln(2/delta)) /
    /// (eps / (4 K))` with `G = B (K r_k B + Y)` (the public bound on a per-sample
    /// gradient entry over the feasible set), and Gaussian sketch noise of std
    /// `pi = sigma(J) sqrt(K T) sqrt(2 (ln(1/delta) + eps/2)) / (n eps / 2)` with
    /// `sigma(J)` the leading singular value of `J`. The paper's claim that these scales
    /// give the target epsilon is **not proven** (its score scale is not a sensitivity
    /// bound of the scores the parties compute, `2 B C_res / n`, and its sketch scale
    /// omits the factor `2 B` of a replaced record). The fit charges what these scales
    /// are under our sensitivity analysis (Laplace report-noisy-max of
    /// `eps0 = 2 Delta_score / b`, Gaussian of multiplier `pi / Delta_sketch`) and
    /// reports that ledger's epsilon, which is proven but not fitted to the target: it
    /// may be above or below it.
    PaperNominal,
}

/// The leading singular value of the sketch `J` (power iteration on `J^T J` from a
/// fixed start, 200 steps; `J` is public, so this is a public quantity).
fn sketch_spectral_norm(sketch: &Sketch) -> f64 {
    let n = sketch.n;
    let mut v: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.01).collect();
    let mut u = vec![0.0; sketch.m];
    let mut sigma = 0.0;
    for _ in 0..200 {
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm == 0.0 {
            return 0.0;
        }
        v.iter_mut().for_each(|a| *a /= norm);
        sketch.apply(&v, 1.0, &mut u);
        sigma = u.iter().map(|a| a * a).sum::<f64>().sqrt();
        sketch.apply_t(&u, &mut v);
    }
    sigma
}

/// The private distributed Frank-Wolfe with checked parameters.
#[derive(Debug, Clone)]
pub struct DistDpFw {
    params: DistDpFwParams,
    privacy: CheckedPrivacy,
    selection_epsilon: f64,
    noise_multiplier: f64,
    /// The public bounds `(B, Y)` on `|x_ij|` and `|y_i|`, checked at build.
    bounds: (f64, f64),
}

/// The part of the public setup the server needs: the partition and the step schedule.
/// It depends only on the public parameters and on `(n, p)`; unlike [`ProtocolSetup`]
/// it has no sketch (the server never touches `J`, an `m x n` matrix).
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolLayout {
    /// The contiguous feature blocks `P_k`, in party order.
    pub blocks: Vec<Vec<usize>>,
    /// Per-party radius `r_k`.
    pub party_radius: f64,
    /// Coordinates sampled per party per round.
    pub tau: usize,
    /// `p = tau / max_k |P_k|` of the step `2 / (p t + 2)`.
    pub sampling_probability: f64,
}

/// The public setup of one run of the private protocol: everything the parties and the
/// server agree on before round 0. It depends only on the public parameters and on the
/// public shape `(n, p)`, never on the data or on a secret seed, so every party can
/// compute it for itself (a transport in another crate does exactly that).
#[derive(Debug, Clone)]
pub struct ProtocolSetup {
    /// The partition and the step schedule (all the server needs).
    pub layout: ProtocolLayout,
    /// The public sketch `J`.
    pub sketch: Sketch,
    /// `max_r ||J[:, r]||_2`.
    pub sketch_max_column_norm: f64,
    /// Residual clip `C_res`.
    pub residual_clip: f64,
    /// Sensitivity `2 B C_res / n` of each score.
    pub score_sensitivity: f64,
    /// L2 sensitivity `2 B max_r ||J[:, r]|| / n` of a sketch.
    pub sketch_sensitivity: f64,
    /// Scale of the selection noise (Gumbel; Laplace under
    /// [`DistCalibration::PaperNominal`]).
    pub selection_scale: f64,
    /// The per-selection epsilon `eps0` charged (`2 Delta_score / scale`).
    pub selection_epsilon: f64,
    /// Standard deviation of the sketch noise.
    pub sketch_noise_std: f64,
    /// Its noise multiplier (std over the sketch sensitivity), charged.
    pub sketch_noise_multiplier: f64,
    /// The per-round mechanisms of every party.
    pub mechanisms: PartyMechanisms,
}

impl DistDpFw {
    /// The server's part of the public setup for `n` rows and `p` features (see
    /// [`ProtocolLayout`]): no sketch is generated.
    pub fn layout(&self, n: usize, p: usize) -> Result<ProtocolLayout> {
        let prm = &self.params;
        if n == 0 {
            return Err(OptimError::Shape("the data has no rows".into()));
        }
        let k = prm.parties;
        let party_radius = prm.radius_mode.party_radius(prm.radius, k);
        let set = L1BallProduct::contiguous(party_radius, p, k)?;
        let smallest = set.blocks().iter().map(Vec::len).min().unwrap_or(0);
        let tau = prm.tau.unwrap_or(smallest);
        let largest = check_shape(k, tau, set.blocks())?;
        Ok(ProtocolLayout {
            blocks: set.blocks().to_vec(),
            party_radius,
            tau,
            sampling_probability: tau as f64 / largest as f64,
        })
    }

    /// The public setup for `n` rows and `p` features (see [`ProtocolSetup`]). The
    /// data bounds are not checked here: each party checks its own columns.
    pub fn setup(&self, n: usize, p: usize) -> Result<ProtocolSetup> {
        let prm = &self.params;
        let layout = self.layout(n, p)?;
        let (k, radius) = (prm.parties, layout.party_radius);
        let (b, yb) = self.bounds;
        let m = prm.sketch_dim.unwrap_or(1);
        let sketch = Sketch::generate(m, n, prm.sketch_seed)?;
        let jmax = sketch.max_column_norm();
        let c_res = match (prm.switches.clip, prm.residual_clip) {
            (false, _) => f64::INFINITY,
            (true, Some(c)) => c,
            (true, None) => b * k as f64 * radius + yb,
        };
        let nf = n as f64;
        let score_sensitivity = 2.0 * b * c_res / nf;
        let sketch_sensitivity = 2.0 * b * jmax / nf;
        let (rnm, selection_scale, selection_epsilon, sketch_std, multiplier) = match prm
            .calibration
        {
            DistCalibration::Zcdp => (
                RnmNoise::Gumbel,
                2.0 * score_sensitivity / self.selection_epsilon,
                self.selection_epsilon,
                self.noise_multiplier * sketch_sensitivity,
                self.noise_multiplier,
            ),
            DistCalibration::PaperNominal => {
                // # Privacy: the paper's nominal scales (its claim is not proven); what they
                // cost under our sensitivities is charged (see DistCalibration).
                let (e, d) = (self.privacy.epsilon.get(), self.privacy.delta.get());
                let t = prm.iterations as f64;
                let g = b * (b * k as f64 * radius + yb);
                let scale = 2.0 * g * prm.radius * (32.0 * t * (2.0 / d).ln()).sqrt() / (nf * e);
                let std = sketch_spectral_norm(&sketch)
                    * (k as f64 * t).sqrt()
                    * (2.0 * ((1.0 / d).ln() + e / 2.0)).sqrt()
                    / (nf * e / 2.0);
                (
                    RnmNoise::Laplace,
                    scale,
                    2.0 * score_sensitivity / scale,
                    std,
                    std / sketch_sensitivity,
                )
            }
        };
        // The samplers are those of the releases every party charges (one round's):
        // report-noisy-max of scale 2 Delta_score / eps0, Gaussian of std z Delta_sketch.
        // (Under the paper's nominal calibration eps0 and z are derived from its scales,
        // so the samplers rebuilt from them equal those scales to the last bit or two.)
        let selection_release = match rnm {
            RnmNoise::Gumbel => Charge::ExponentialMechanism {
                epsilon: selection_epsilon,
                count: 1,
            },
            RnmNoise::Laplace => Charge::PureDp {
                epsilon: selection_epsilon,
                count: 1,
                label: "Laplace report-noisy-max".into(),
            },
        };
        let sketch_release = Charge::Gaussian {
            noise_multiplier: multiplier,
            count: 1,
        };
        let mechanisms = PartyMechanisms {
            selection: prm
                .switches
                .noise
                .then_some((selection_release, score_sensitivity)),
            sketch_noise: prm
                .switches
                .noise
                .then_some((sketch_release, sketch_sensitivity)),
            residual_clip: c_res,
        };
        Ok(ProtocolSetup {
            layout,
            sketch,
            sketch_max_column_norm: jmax,
            residual_clip: c_res,
            score_sensitivity,
            sketch_sensitivity,
            selection_scale,
            selection_epsilon,
            sketch_noise_std: sketch_std,
            sketch_noise_multiplier: multiplier,
            mechanisms,
        })
    }
    /// Rounds `T`.
    pub fn iterations(&self) -> u64 {
        self.params.iterations
    }
    // The checked public parameters, read back: what a transport sends to the parties
    // (dp-federated's `wire` module), so that the job has one shape, this one.
    /// The l1 radius `eta`.
    pub fn radius(&self) -> f64 {
        self.params.radius
    }
    /// The per-party radius mode.
    pub fn radius_mode(&self) -> RadiusMode {
        self.params.radius_mode
    }
    /// The number of parties `K`.
    pub fn parties(&self) -> usize {
        self.params.parties
    }
    /// Coordinates sampled per party per round, if set (`None`: the smallest block).
    pub fn tau(&self) -> Option<usize> {
        self.params.tau
    }
    /// The sketch dimension `m`.
    pub fn sketch_dim(&self) -> usize {
        self.params.sketch_dim.unwrap_or(1)
    }
    /// The public seed of the sketch `J`.
    pub fn sketch_seed(&self) -> u64 {
        self.params.sketch_seed
    }
    /// The checked target `(epsilon, delta)` and accounting.
    pub fn privacy(&self) -> CheckedPrivacy {
        self.privacy
    }
    /// The public bounds `(B, Y)` on `|x_ij|` and `|y_i|`.
    pub fn bounds(&self) -> (f64, f64) {
        self.bounds
    }
    /// The fraction of each round's budget spent on the selection.
    pub fn selection_share(&self) -> f64 {
        self.params.selection_share
    }
    /// The residual clip `C_res`, if set (`None`: the default `B K r_k + Y`).
    pub fn residual_clip(&self) -> Option<f64> {
        self.params.residual_clip
    }
    /// How the noise is calibrated.
    pub fn calibration(&self) -> DistCalibration {
        self.params.calibration
    }
}

/// The `(sampling, noise)` generators of `k` parties as [`DistDpFw`] derives them from
/// the caller's generator (so that a transport can reproduce its fit bit for bit).
pub fn party_generators(rng: &mut dyn RngCore, k: usize) -> Vec<(ChaCha20Rng, ChaCha20Rng)> {
    let mut streams = Streams::from_rng(rng);
    let sampling = party_streams(&mut streams.coordinates, k);
    let noise = party_streams(&mut streams.noise, k);
    sampling.into_iter().zip(noise).collect()
}

impl<D: Design> Solver<D> for DistDpFw {
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        let fit = PrivateFit::begin(&self.privacy, Adjacency::ReplaceOne);
        let prm = &self.params;
        let (x, y) = (data.x(), data.y());
        let (n, p) = (x.n_samples(), x.n_features());
        check_data(data, p)?;
        let k = prm.parties;
        let (b, yb) = self.bounds;
        if prm.switches.clip {
            crate::dp_fw::check_bounds(data, b, yb)?;
        }
        let ProtocolSetup {
            layout:
                ProtocolLayout {
                    blocks,
                    party_radius: radius,
                    tau,
                    sampling_probability: p_samp,
                },
            sketch,
            sketch_max_column_norm: jmax,
            residual_clip: c_res,
            score_sensitivity,
            sketch_sensitivity,
            selection_scale,
            selection_epsilon,
            sketch_noise_std: sketch_std,
            sketch_noise_multiplier,
            mechanisms,
        } = self.setup(n, p)?;
        let set = L1BallProduct::new(radius, p, blocks.clone())?;
        let m = sketch.m;
        let mut parties = Vec::with_capacity(k);
        for (id, (block, (samp, nz))) in blocks.iter().zip(party_generators(rng, k)).enumerate() {
            let cols = block
                .iter()
                .map(|&j| {
                    let mut c = vec![0.0; n];
                    x.for_each_in_col(j, |i, v| c[i] = v);
                    c
                })
                .collect();
            parties.push(Party::new(
                id,
                block.clone(),
                cols,
                y.to_vec(),
                sketch.clone(),
                tau,
                mechanisms.clone(),
                prm.iterations,
                samp,
                nz,
            )?);
        }
        // The joint ledger: every party's releases (each charged in its own ledger by
        // `Party::new`), charged to the fit before the first round. Our calibration is
        // fitted to the target (enforced); the paper's nominal one is reported with what
        // its scales cost under our analysis (proven, not fitted: it may exceed the
        // target). Noise off: nothing is charged (a non-private comparison run).
        let accountant = Accountant::Zcdp;
        let fit = if prm.switches.noise {
            Ok(fit.charge(Declared {
                releases: parties
                    .iter()
                    .flat_map(|party| party.ledger().entries().iter().cloned())
                    .collect(),
                calibrated: None,
                accountant,
                proof: match prm.calibration {
                    DistCalibration::Zcdp => Proof::Proven,
                    DistCalibration::PaperNominal => Proof::Nominal(format!(
                        "the paper's nominal noise scales (Laplace selection scale \
                         {selection_scale:.4e}, sketch std {sketch_std:.4e}); the paper's \
                         claim that they give epsilon {} is NOT PROVEN; what our analysis of \
                         these scales gives is the epsilon reported",
                        self.privacy.epsilon.get()
                    )),
                },
            })?)
        } else {
            Err(fit)
        };
        let mut server = Server::new(p, m, k, radius, p_samp).with_blocks(set.blocks().to_vec());
        run_protocol(&mut server, &mut parties, prm.iterations)?;
        let w = server.x().to_vec();
        let loss = Squared::half();
        let mut z = vec![0.0; n];
        x.matvec(&w, &mut z);
        let (mut deriv, mut grad) = (vec![0.0; n], vec![0.0; p]);
        average_loss_gradient(x, &loss, &z, y, &mut deriv, &mut grad);
        let model = Model {
            algorithm: if prm.switches.noise {
                "dist-dp-fw"
            } else {
                "dist-fw-sketched"
            }
            .into(),
            coefficients: w.clone(),
            iterations: prm.iterations,
            diagnostics: Diagnostics {
                duality_gap: Some(set.gap(&grad, &w)),
                ..Diagnostics::default()
            },
        };
        let objective = |_: &[f64]| average_loss(&loss, &z, y);
        let (solver, hint) = ("distributed private Frank-Wolfe", "check the data");
        let fit = match fit {
            Ok(fit) => fit,
            Err(off) => return off.finish_not_private(solver, hint, model, objective),
        };
        let fitted = prm.calibration == DistCalibration::Zcdp;
        let own = parties[0].ledger();
        let per_party = guarantee_of(
            own,
            own.guarantee(self.privacy.delta, accountant)?,
            &self.privacy,
            accountant,
            Adjacency::ReplaceOne,
            true,
            fitted,
        )?;
        let t = prm.iterations as f64;
        let (e, d) = (self.privacy.epsilon.get(), self.privacy.delta.get());
        let g_paper = b * (b * k as f64 * radius + yb);
        let report = Report {
            n_samples: n,
            plan: SolverPlan::DpFw(FwPlan::Distributed(DistDpFwPlan {
                parties: k,
                blocks,
                tau,
                iterations: prm.iterations,
                party_radius: radius,
                radius_mode: prm.radius_mode.name().into(),
                sampling_probability: p_samp,
                sketch_dim: m,
                sketch_seed: prm.sketch_seed,
                sketch_max_column_norm: jmax,
                feature_bound: b,
                label_bound: yb,
                residual_clip: c_res,
                score_sensitivity,
                sketch_sensitivity,
                selection_epsilon,
                selection_scale,
                sketch_noise_multiplier,
                sketch_noise_std: sketch_std,
                paper_laplace_scale: 2.0
                    * g_paper
                    * prm.radius
                    * (32.0 * t * (2.0 / d).ln()).sqrt()
                    / (n as f64 * e),
                uplink_floats_per_party: server.uplink_floats()[0],
                per_party_guarantee: per_party,
            })),
            other_guarantees: Vec::new(),
            uses_non_private_constants: false,
        };
        fit.finish(solver, hint, model, report, objective)
    }
}
