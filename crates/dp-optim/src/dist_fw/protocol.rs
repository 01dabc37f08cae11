//! The private protocol's roles and messages: the sketch, the parties (each its own
//! ledger and samplers), the server (which validates every uplink once), one round's
//! downlink and uplinks, and [`run_protocol`] to drive them in one process. The
//! transports of `dp-federated` carry the same messages.

use super::*;

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
    pub(super) m: usize,
    pub(super) n: usize,
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

// `UplinkFault` and `RejectedUplink` live in `crate::error` (the crate's error type
// wraps a refused uplink, and the error module imports nothing from the solvers); they
// are re-exported here, where the protocol names them.
pub use crate::error::{RejectedUplink, UplinkFault};

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
