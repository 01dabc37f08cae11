//! The public parameters of a fit ([`Job`]), a party's private data ([`PartyData`]) and
//! the party role ([`PartyHost`]) that both transports drive.

use crate::error::{FedError, Result};
use crate::pb;
use dp_accounting::calibrate::Accountant;
use dp_optim::dist_fw::{Party, RadiusMode};
use dp_optim::{DistDpFw, DistDpFwParams};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::path::Path;

/// The public parameters of one private fit: what the server announces to every party.
/// Nothing here is secret (no data, no noise seed).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// l1 radius `eta`.
    pub radius: f64,
    /// Per-party radius mode.
    pub radius_mode: RadiusMode,
    /// Rounds `T`.
    pub rounds: u64,
    /// Sketch dimension `m`.
    pub sketch_dim: usize,
    /// Public seed of the sketch `J`.
    pub sketch_seed: u64,
    /// Coordinates sampled per party per round (`None`: the smallest block).
    pub tau: Option<usize>,
    /// Target epsilon of the whole fit.
    pub epsilon: f64,
    /// Target delta of the whole fit.
    pub delta: f64,
    /// Public bound `B >= |A_rj|`.
    pub feature_bound: f64,
    /// Public bound `Y >= |y_r|`.
    pub label_bound: f64,
    /// Fraction of each round's budget spent on the selection.
    pub selection_share: f64,
    /// Residual clip `C_res` (`None`: the default `B K r_k + Y`).
    pub residual_clip: Option<f64>,
}

impl Job {
    /// A job with the defaults of [`DistDpFwParams`] (per-party radius, selection share
    /// 1/2, default residual clip, `tau` = the smallest block).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        radius: f64,
        rounds: u64,
        sketch_dim: usize,
        sketch_seed: u64,
        epsilon: f64,
        delta: f64,
        feature_bound: f64,
        label_bound: f64,
    ) -> Self {
        Self {
            radius,
            radius_mode: RadiusMode::PerParty,
            rounds,
            sketch_dim,
            sketch_seed,
            tau: None,
            epsilon,
            delta,
            feature_bound,
            label_bound,
            selection_share: 0.5,
            residual_clip: None,
        }
    }

    /// The solver these parameters describe for `parties` parties (checks and
    /// calibrates: eps <= 0, delta outside (0, 1), m = 0 ... are refused here).
    pub fn solver(&self, parties: usize) -> Result<DistDpFw> {
        let mut p = DistDpFwParams::new(self.radius)
            .epsilon(self.epsilon)
            .delta(self.delta)
            .parties(parties)
            .iterations(self.rounds)
            .sketch_dim(self.sketch_dim)
            .sketch_seed(self.sketch_seed)
            .feature_bound(self.feature_bound)
            .label_bound(self.label_bound)
            .radius_mode(self.radius_mode)
            .selection_share(self.selection_share);
        if let Some(t) = self.tau {
            p = p.tau(t);
        }
        if let Some(c) = self.residual_clip {
            p = p.residual_clip(c);
        }
        Ok(p.build()?)
    }

    /// The setup message to party `party` of `parties`, for `n` rows and `p` features.
    pub fn to_setup(&self, party: usize, parties: usize, n: usize, p: usize) -> pb::Setup {
        pb::Setup {
            party: party as u32,
            parties: parties as u32,
            samples: n as u64,
            dim: p as u64,
            rounds: self.rounds,
            sketch_dim: self.sketch_dim as u64,
            sketch_seed: self.sketch_seed,
            radius: self.radius,
            radius_mode: self.radius_mode.name().into(),
            tau: self.tau.map_or(0, |t| t as u64),
            epsilon: self.epsilon,
            delta: self.delta,
            feature_bound: self.feature_bound,
            label_bound: self.label_bound,
            selection_share: self.selection_share,
            residual_clip: self.residual_clip.unwrap_or(0.0),
        }
    }

    /// Reads a setup message back.
    pub fn from_setup(s: &pb::Setup) -> Result<Self> {
        let radius_mode = match s.radius_mode.as_str() {
            "per-party" => RadiusMode::PerParty,
            "split" => RadiusMode::Split,
            other => {
                return Err(FedError::Config(format!(
                    "unknown radius mode {other:?} (expected per-party or split)"
                )))
            }
        };
        Ok(Self {
            radius: s.radius,
            radius_mode,
            rounds: s.rounds,
            sketch_dim: usize::try_from(s.sketch_dim)
                .map_err(|_| FedError::Config("sketch_dim too large".into()))?,
            sketch_seed: s.sketch_seed,
            tau: (s.tau > 0).then_some(s.tau as usize),
            epsilon: s.epsilon,
            delta: s.delta,
            feature_bound: s.feature_bound,
            label_bound: s.label_bound,
            selection_share: s.selection_share,
            residual_clip: (s.residual_clip != 0.0).then_some(s.residual_clip),
        })
    }
}

/// One party's private data: its columns (global feature indices `features`) and the
/// labels. Only the party that holds it ever reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartyData {
    /// Global indices of the columns, increasing.
    pub features: Vec<usize>,
    /// The columns, each of length `n`.
    pub columns: Vec<Vec<f64>>,
    /// The labels (length `n`).
    pub labels: Vec<f64>,
}

impl PartyData {
    /// Checks shapes and values: at least one row and one column, equal lengths,
    /// strictly increasing feature indices, finite values.
    pub fn new(features: Vec<usize>, columns: Vec<Vec<f64>>, labels: Vec<f64>) -> Result<Self> {
        if labels.is_empty() {
            return Err(FedError::Data("the party has no rows".into()));
        }
        if features.is_empty() || features.len() != columns.len() {
            return Err(FedError::Data(format!(
                "{} feature indices for {} columns (need at least one)",
                features.len(),
                columns.len()
            )));
        }
        if features.windows(2).any(|w| w[0] >= w[1]) {
            return Err(FedError::Data(
                "feature indices must be strictly increasing".into(),
            ));
        }
        for (j, c) in features.iter().zip(&columns) {
            if c.len() != labels.len() {
                return Err(FedError::Data(format!(
                    "column {j} has {} rows, the labels {}",
                    c.len(),
                    labels.len()
                )));
            }
            if let Some(r) = c.iter().position(|v| !v.is_finite()) {
                return Err(FedError::Data(format!("column {j}, row {r} is not finite")));
            }
        }
        if let Some(r) = labels.iter().position(|v| !v.is_finite()) {
            return Err(FedError::Data(format!("label of row {r} is not finite")));
        }
        Ok(Self {
            features,
            columns,
            labels,
        })
    }

    /// Reads a party's column file: a CSV whose header is `y` followed by the global
    /// indices of the party's features (e.g. `y,4,5,6`), then one row per individual:
    /// the label, then the party's values.
    pub fn read_csv(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .map_err(|e| FedError::Data(format!("{name}: {e}")))?;
        let header = rdr
            .headers()
            .map_err(|e| FedError::Data(format!("{name}: {e}")))?
            .clone();
        if header.get(0).map(str::trim) != Some("y") {
            return Err(FedError::Data(format!(
                "{name}: the header must start with `y`, then the global feature indices"
            )));
        }
        let features = header
            .iter()
            .skip(1)
            .map(|h| {
                h.trim().parse::<usize>().map_err(|_| {
                    FedError::Data(format!("{name}: header cell {h:?} is not a feature index"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut columns = vec![Vec::new(); features.len()];
        let mut labels = Vec::new();
        for (r, rec) in rdr.records().enumerate() {
            let rec = rec.map_err(|e| FedError::Data(format!("{name}: {e}")))?;
            if rec.len() != features.len() + 1 {
                return Err(FedError::Data(format!(
                    "{name}: row {} has {} cells, expected {}",
                    r + 1,
                    rec.len(),
                    features.len() + 1
                )));
            }
            let mut cells = rec.iter().map(|c| c.trim().parse::<f64>());
            let y = cells.next().and_then(|c| c.ok()).ok_or_else(|| {
                FedError::Data(format!("{name}: row {}: the label is not a number", r + 1))
            })?;
            labels.push(y);
            for (j, c) in cells.enumerate() {
                columns[j].push(c.map_err(|_| {
                    FedError::Data(format!(
                        "{name}: row {}, column {}: not a number",
                        r + 1,
                        j + 1
                    ))
                })?);
            }
        }
        Self::new(features, columns, labels)
    }

    /// Writes the file [`PartyData::read_csv`] reads (values in Rust's shortest
    /// round-trip form, so reading back is bit-exact).
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        let mut out = String::from("y");
        for j in &self.features {
            out.push_str(&format!(",{j}"));
        }
        out.push('\n');
        for (r, y) in self.labels.iter().enumerate() {
            out.push_str(&format!("{y:?}"));
            for c in &self.columns {
                out.push_str(&format!(",{:?}", c[r]));
            }
            out.push('\n');
        }
        std::fs::write(path, out)
            .map_err(|e| FedError::io(format!("writing {}", path.display()), e))
    }
}

/// The two secret generators of a party: coordinate sampling and noise. They never
/// leave the party.
#[derive(Debug, Clone)]
pub struct PartySecrets {
    /// Coordinate sampling.
    pub sampling: ChaCha20Rng,
    /// Mechanism noise.
    pub noise: ChaCha20Rng,
}

impl PartySecrets {
    /// Both generators from one secret 32-byte seed (sampling first, then noise).
    pub fn from_seed(seed: [u8; 32]) -> Self {
        let mut parent = ChaCha20Rng::from_seed(seed);
        let mut child = || {
            let mut s = [0u8; 32];
            parent.fill_bytes(&mut s);
            ChaCha20Rng::from_seed(s)
        };
        let sampling = child();
        let noise = child();
        Self { sampling, noise }
    }
    /// Both generators from a 32-byte seed drawn from the operating system's entropy:
    /// the default of a party process, which leaves no seed that could replay its noise.
    pub fn from_os_entropy() -> Result<Self> {
        let mut seed = [0u8; 32];
        ChaCha20Rng::try_from_os_rng()
            .map_err(|e| FedError::Config(format!("no operating-system entropy: {e}")))?
            .fill_bytes(&mut seed);
        Ok(Self::from_seed(seed))
    }
    /// Both generators from a secret `u64` (for demos and tests: anyone who knows the
    /// seed can replay the noise).
    pub fn from_u64(seed: u64) -> Self {
        let mut s = [0u8; 32];
        ChaCha20Rng::seed_from_u64(seed).fill_bytes(&mut s);
        Self::from_seed(s)
    }
}

/// A fault a test party injects on purpose (never set in normal use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InjectedFault {
    /// Behave.
    #[default]
    None,
    /// Exit abruptly when round `t` arrives.
    ExitAt(u64),
    /// Stop answering from round `t` on.
    HangAt(u64),
    /// Answer round `t` with a sketch one entry short.
    MalformedAt(u64),
    /// Answer round `t` with the round number `t + 1`.
    WrongRoundAt(u64),
}

impl std::str::FromStr for InjectedFault {
    type Err = String;
    /// `none`, `exit:T`, `hang:T`, `malformed:T`, `wrong-round:T`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "none" {
            return Ok(Self::None);
        }
        let (kind, t) = s
            .split_once(':')
            .ok_or_else(|| format!("{s:?}: expected KIND:ROUND"))?;
        let t: u64 = t.parse().map_err(|_| format!("{t:?} is not a round"))?;
        match kind {
            "exit" => Ok(Self::ExitAt(t)),
            "hang" => Ok(Self::HangAt(t)),
            "malformed" => Ok(Self::MalformedAt(t)),
            "wrong-round" => Ok(Self::WrongRoundAt(t)),
            _ => Err(format!(
                "{kind:?}: expected exit, hang, malformed or wrong-round"
            )),
        }
    }
}

/// What the party role answers to a round.
#[derive(Debug)]
pub enum RoundReply {
    /// The uplink to send.
    Uplink(pb::Uplink),
    /// (Injected fault) never answer.
    Hang,
    /// (Injected fault) exit now.
    Exit,
}

/// The party role: its private data and secret generators, and once configured the
/// protocol [`Party`] of `dp-optim`. It answers describe / configure / round / stop, in
/// that order; it answers each round `0..T` at most once and in order, so it never
/// releases more than its ledger was charged for, and after a stop it answers nothing.
#[derive(Debug)]
pub struct PartyHost {
    data: PartyData,
    secrets: Option<PartySecrets>,
    party: Option<Party>,
    id: usize,
    rounds: u64,
    next_round: u64,
    stopped: bool,
    parties: usize,
    max_epsilon: f64,
    fault: InjectedFault,
}

impl PartyHost {
    /// A party with its data and secret generators, configured (by its operator, not by
    /// the server) for a protocol of `parties` parties. It refuses a job that announces
    /// another number of parties or assigns it another block than the columns it holds,
    /// and any job whose **joint** guarantee would exceed `max_epsilon`
    /// (`f64::INFINITY`: accept the job's target); see [`PartyHost::configure`].
    pub fn new(data: PartyData, secrets: PartySecrets, parties: usize, max_epsilon: f64) -> Self {
        Self {
            data,
            secrets: Some(secrets),
            party: None,
            id: 0,
            rounds: 0,
            next_round: 0,
            stopped: false,
            parties,
            max_epsilon,
            fault: InjectedFault::None,
        }
    }
    /// Injects a fault (tests only).
    pub fn with_fault(mut self, fault: InjectedFault) -> Self {
        self.fault = fault;
        self
    }
    /// The public shape of the party's data.
    pub fn describe(&self) -> pb::Shape {
        pb::Shape {
            samples: self.data.labels.len() as u64,
            features: self.data.features.iter().map(|&j| j as u64).collect(),
        }
    }

    /// Configures the party for the announced job: checks the announced number of
    /// parties `K` against its own configuration, recomputes the public setup itself (so
    /// the server cannot make it under-noise), checks its block and its data bounds,
    /// checks its cap against the joint guarantee, and charges its ledger for all `T`
    /// rounds before any draw.
    ///
    /// # Privacy
    /// Replace-one neighbours: one person's row, which is split across **every** party
    /// (each holds some of its columns) and whose label every party holds. What one
    /// person is exposed to is therefore the composition of all `K` parties' releases,
    /// not this party's alone. Every party runs the same per-round mechanisms for the
    /// same `T` rounds (they follow from the public setup, which this party recomputes),
    /// so the joint ledger is `K` copies of this party's ledger, and the party computes
    /// its guarantee (zCDP composition, as `DistDpFw` reports it) from public values only.
    /// The cap `max_epsilon` is compared with that joint epsilon. A server announcing a
    /// smaller `K` than the party was configured for would make every party under-count
    /// the composition (and a wrong `K` moves the blocks): a mismatch is refused.
    pub fn configure(&mut self, s: &pb::Setup) -> std::result::Result<pb::SetupReply, String> {
        if self.party.is_some() || self.stopped {
            return Err("already configured".into());
        }
        let job = Job::from_setup(s).map_err(|e| e.to_string())?;
        let k = s.parties as usize;
        let id = s.party as usize;
        if k != self.parties {
            return Err(format!(
                "the job announces K = {k} parties, this party was configured for K = {}",
                self.parties
            ));
        }
        if id >= k {
            return Err(format!("party index {id} is not below K = {k}"));
        }
        let n = self.data.labels.len();
        if s.samples as usize != n {
            return Err(format!(
                "the job has n = {} rows, this party holds {n}",
                s.samples
            ));
        }
        let solver = job.solver(k).map_err(|e| e.to_string())?;
        let setup = solver.setup(n, s.dim as usize).map_err(|e| e.to_string())?;
        if setup.blocks[id] != self.data.features {
            return Err(format!(
                "the plan assigns features {:?}..={:?} to party {id}, this party holds {:?}..={:?}",
                setup.blocks[id].first(),
                setup.blocks[id].last(),
                self.data.features.first(),
                self.data.features.last()
            ));
        }
        // The stated public bounds must hold on this party's columns and labels: they
        // are the preconditions of the sensitivities.
        for (j, c) in self.data.features.iter().zip(&self.data.columns) {
            if let Some(v) = c.iter().find(|v| v.abs() > job.feature_bound) {
                return Err(format!(
                    "column {j} has |x| = {} above the feature bound {}",
                    v.abs(),
                    job.feature_bound
                ));
            }
        }
        if let Some(v) = self.data.labels.iter().find(|v| v.abs() > job.label_bound) {
            return Err(format!(
                "a label has |y| = {} above the label bound {}",
                v.abs(),
                job.label_bound
            ));
        }
        let secrets = self.secrets.take().ok_or("no secret generators")?;
        let party = Party::new(
            id,
            self.data.features.clone(),
            self.data.columns.clone(),
            self.data.labels.clone(),
            setup.sketch,
            setup.tau,
            setup.mechanisms,
            job.rounds,
            secrets.sampling,
            secrets.noise,
        )
        .map_err(|e| e.to_string())?;
        let delta = dp_accounting::Delta::new(job.delta).map_err(|e| e.to_string())?;
        let eps = party
            .ledger()
            .guarantee(delta, Accountant::Zcdp)
            .map_err(|e| e.to_string())?;
        // The joint ledger: K copies of this party's (see # Privacy above).
        let mut joint = dp_accounting::ledger::Ledger::new();
        for _ in 0..k {
            for c in party.ledger().entries() {
                joint.charge(c.clone()).map_err(|e| e.to_string())?;
            }
        }
        let joint_eps = joint
            .guarantee(delta, Accountant::Zcdp)
            .map_err(|e| e.to_string())?;
        if joint_eps > self.max_epsilon {
            return Err(format!(
                "the joint guarantee of the K = {k} parties' releases (one person's row is at \
                 every party) would be epsilon = {joint_eps} at delta = {}, above this \
                 party's cap {} (its own releases alone: epsilon = {eps})",
                job.delta, self.max_epsilon
            ));
        }
        self.party = Some(party);
        self.id = id;
        self.rounds = job.rounds;
        Ok(pb::SetupReply {
            party: id as u32,
            ledger_epsilon: eps,
        })
    }

    /// Answers round `d.round` (which must be the next one, below `T`).
    pub fn round(&mut self, d: &pb::Downlink) -> std::result::Result<RoundReply, String> {
        if self.stopped {
            return Err("stopped: this party releases nothing more".into());
        }
        let party = self.party.as_mut().ok_or("not configured")?;
        if d.round != self.next_round || d.round >= self.rounds {
            return Err(format!(
                "asked for round {}, expected round {} of {}",
                d.round, self.next_round, self.rounds
            ));
        }
        match self.fault {
            InjectedFault::ExitAt(t) if t == d.round => return Ok(RoundReply::Exit),
            InjectedFault::HangAt(t) if t <= d.round => return Ok(RoundReply::Hang),
            _ => {}
        }
        self.next_round += 1;
        let down = dp_optim::dist_fw::Downlink {
            round: d.round,
            q_hat: d.q_hat.clone(),
        };
        let up = party.round(&down).map_err(|e| e.to_string())?;
        let mut msg = pb::Uplink {
            party: up.party as u32,
            round: up.round,
            index: up.index as u64,
            sign: i32::from(up.sign),
            sketch: up.sketch,
        };
        match self.fault {
            InjectedFault::MalformedAt(t) if t == d.round => {
                msg.sketch.pop();
            }
            InjectedFault::WrongRoundAt(t) if t == d.round => msg.round += 1,
            _ => {}
        }
        Ok(RoundReply::Uplink(msg))
    }

    /// Stops: no more rounds are answered.
    pub fn stop(&mut self) {
        self.stopped = true;
        self.party = None;
    }
    /// The party's index once configured.
    pub fn id(&self) -> usize {
        self.id
    }
}
