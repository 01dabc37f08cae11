//! The party role ([`PartyHost`]) that both transports drive, a party's private data
//! ([`PartyData`]) and secret generators ([`PartySecrets`]). The job a party runs is
//! `dp_optim`'s [`DistDpFwParams`](dp_optim::DistDpFwParams), read from the setup
//! message by [`crate::wire`].

use crate::error::{ConfigError, DataError, FedError, Result};
use crate::pb;
use crate::wire;
use dp_accounting::calibrate::Accountant;
use dp_optim::dist_fw::Party;
use dp_optim::OptimError;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::path::Path;

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
            return Err(DataError::NoRows.into());
        }
        if features.is_empty() || features.len() != columns.len() {
            return Err(DataError::FeatureCount {
                features: features.len(),
                columns: columns.len(),
            }
            .into());
        }
        if features.windows(2).any(|w| w[0] >= w[1]) {
            return Err(DataError::FeatureOrder.into());
        }
        for (j, c) in features.iter().zip(&columns) {
            if c.len() != labels.len() {
                return Err(DataError::ColumnLength {
                    feature: *j,
                    rows: c.len(),
                    labels: labels.len(),
                }
                .into());
            }
            if let Some(r) = c.iter().position(|v| !v.is_finite()) {
                return Err(DataError::NonFinite {
                    feature: *j,
                    row: r,
                }
                .into());
            }
        }
        if let Some(r) = labels.iter().position(|v| !v.is_finite()) {
            return Err(DataError::NonFiniteLabel { row: r }.into());
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
        let file = || path.to_path_buf();
        let csv_err = |source| DataError::Csv {
            file: file(),
            source,
        };
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .map_err(csv_err)?;
        let header = rdr.headers().map_err(csv_err)?.clone();
        if header.get(0).map(str::trim) != Some("y") {
            return Err(DataError::Header { file: file() }.into());
        }
        let features = header
            .iter()
            .skip(1)
            .map(|h| {
                h.trim().parse::<usize>().map_err(|_| {
                    DataError::HeaderCell {
                        file: file(),
                        cell: h.to_string(),
                    }
                    .into()
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut columns = vec![Vec::new(); features.len()];
        let mut labels = Vec::new();
        for (r, rec) in rdr.records().enumerate() {
            let rec = rec.map_err(csv_err)?;
            if rec.len() != features.len() + 1 {
                return Err(DataError::RowLength {
                    file: file(),
                    row: r + 1,
                    cells: rec.len(),
                    expected: features.len() + 1,
                }
                .into());
            }
            let mut cells = rec.iter().map(|c| c.trim().parse::<f64>());
            let y = cells
                .next()
                .and_then(|c| c.ok())
                .ok_or_else(|| DataError::Label {
                    file: file(),
                    row: r + 1,
                })?;
            labels.push(y);
            for (j, c) in cells.enumerate() {
                columns[j].push(c.map_err(|_| DataError::Value {
                    file: file(),
                    row: r + 1,
                    column: j + 1,
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
        ChaCha20Rng::try_from_rng(&mut rand::rngs::OsRng)
            .map_err(ConfigError::Entropy)?
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

/// Why a party refused a request. It travels to the server as the detail of a
/// [`Fault::Refused`](crate::Fault::Refused), so each message is complete on its own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// A second setup, or a setup after a stop.
    #[error("already configured")]
    AlreadyConfigured,
    /// The job announces another number of parties than the party's own configuration.
    #[error("the job announces K = {announced} parties, this party was configured for K = {own}")]
    PartyCount {
        /// `K` of the job.
        announced: usize,
        /// `K` the party was configured for.
        own: usize,
    },
    /// The party index is not below `K`.
    #[error("party index {index} is not below K = {parties}")]
    PartyIndex {
        /// The index announced.
        index: usize,
        /// `K`.
        parties: usize,
    },
    /// The job announces another number of rows than the party holds.
    #[error("the job has n = {announced} rows, this party holds {held}")]
    Rows {
        /// `n` of the job.
        announced: u64,
        /// Rows the party holds.
        held: usize,
    },
    /// The plan gives the party other features than the columns it holds.
    #[error(
        "the plan assigns features {:?}..={:?} to party {party}, this party holds {:?}..={:?}",
        planned.0, planned.1, held.0, held.1
    )]
    Block {
        /// The party's index.
        party: usize,
        /// First and last feature of the planned block.
        planned: (Option<usize>, Option<usize>),
        /// First and last feature the party holds.
        held: (Option<usize>, Option<usize>),
    },
    /// A column breaks the job's public feature bound.
    #[error("column {feature} has |x| = {value} above the feature bound {bound}")]
    FeatureBound {
        /// Global index of the column.
        feature: usize,
        /// The offending `|x|`.
        value: f64,
        /// The bound `B`.
        bound: f64,
    },
    /// A label breaks the job's public label bound.
    #[error("a label has |y| = {value} above the label bound {bound}")]
    LabelBound {
        /// The offending `|y|`.
        value: f64,
        /// The bound `Y`.
        bound: f64,
    },
    /// The joint guarantee of all parties' releases would exceed the party's cap.
    #[error(
        "the joint guarantee of the K = {parties} parties' releases (one person's row is at \
         every party) would be epsilon = {joint} at delta = {delta}, above this party's cap \
         {cap} (its own releases alone: epsilon = {own})"
    )]
    Cap {
        /// `K`.
        parties: usize,
        /// The joint epsilon.
        joint: f64,
        /// The job's delta.
        delta: f64,
        /// The party's cap.
        cap: f64,
        /// The party's own epsilon.
        own: f64,
    },
    /// The party's generators were already handed to a protocol party.
    #[error("no secret generators")]
    NoSecrets,
    /// A round after a stop.
    #[error("stopped: this party releases nothing more")]
    Stopped,
    /// A round before the setup.
    #[error("not configured")]
    NotConfigured,
    /// A round out of order or beyond `T`.
    #[error("asked for round {asked}, expected round {expected} of {rounds}")]
    Round {
        /// The round asked for.
        asked: u64,
        /// The next round the party answers.
        expected: u64,
        /// `T`.
        rounds: u64,
    },
    /// The setup message does not describe a job.
    #[error(transparent)]
    Setup(#[from] FedError),
    /// The solver layer refused the job (parameters, calibration, ledger).
    #[error(transparent)]
    Optim(#[from] OptimError),
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
    pub fn configure(&mut self, s: &pb::Setup) -> std::result::Result<pb::SetupReply, Refusal> {
        if self.party.is_some() || self.stopped {
            return Err(Refusal::AlreadyConfigured);
        }
        let params = wire::params(s)?;
        let k = s.parties as usize;
        let id = s.party as usize;
        if k != self.parties {
            return Err(Refusal::PartyCount {
                announced: k,
                own: self.parties,
            });
        }
        if id >= k {
            return Err(Refusal::PartyIndex {
                index: id,
                parties: k,
            });
        }
        let n = self.data.labels.len();
        if s.samples as usize != n {
            return Err(Refusal::Rows {
                announced: s.samples,
                held: n,
            });
        }
        let job = params.build()?;
        let setup = job.setup(n, s.dim as usize)?;
        let block = &setup.layout.blocks[id];
        if *block != self.data.features {
            return Err(Refusal::Block {
                party: id,
                planned: (block.first().copied(), block.last().copied()),
                held: (
                    self.data.features.first().copied(),
                    self.data.features.last().copied(),
                ),
            });
        }
        // The stated public bounds must hold on this party's columns and labels: they
        // are the preconditions of the sensitivities.
        let (feature_bound, label_bound) = job.bounds();
        for (j, c) in self.data.features.iter().zip(&self.data.columns) {
            if let Some(v) = c.iter().find(|v| v.abs() > feature_bound) {
                return Err(Refusal::FeatureBound {
                    feature: *j,
                    value: v.abs(),
                    bound: feature_bound,
                });
            }
        }
        if let Some(v) = self.data.labels.iter().find(|v| v.abs() > label_bound) {
            return Err(Refusal::LabelBound {
                value: v.abs(),
                bound: label_bound,
            });
        }
        let secrets = self.secrets.take().ok_or(Refusal::NoSecrets)?;
        let party = Party::new(
            id,
            self.data.features.clone(),
            self.data.columns.clone(),
            self.data.labels.clone(),
            setup.sketch,
            setup.layout.tau,
            setup.mechanisms,
            job.iterations(),
            secrets.sampling,
            secrets.noise,
        )?;
        let delta = job.privacy().delta;
        let eps = party
            .ledger()
            .guarantee(delta, Accountant::Zcdp)
            .map_err(OptimError::from)?;
        // The joint ledger: K copies of this party's (see # Privacy above).
        let mut joint = dp_accounting::ledger::Ledger::new();
        for _ in 0..k {
            for c in party.ledger().entries() {
                joint.charge(c.clone()).map_err(OptimError::from)?;
            }
        }
        let joint_eps = joint
            .guarantee(delta, Accountant::Zcdp)
            .map_err(OptimError::from)?;
        if joint_eps > self.max_epsilon {
            return Err(Refusal::Cap {
                parties: k,
                joint: joint_eps,
                delta: delta.get(),
                cap: self.max_epsilon,
                own: eps,
            });
        }
        self.party = Some(party);
        self.id = id;
        self.rounds = job.iterations();
        Ok(pb::SetupReply {
            party: id as u32,
            ledger_epsilon: eps,
        })
    }

    /// Answers round `d.round` (which must be the next one, below `T`).
    pub fn round(&mut self, d: &pb::Downlink) -> std::result::Result<RoundReply, Refusal> {
        if self.stopped {
            return Err(Refusal::Stopped);
        }
        let party = self.party.as_mut().ok_or(Refusal::NotConfigured)?;
        if d.round != self.next_round || d.round >= self.rounds {
            return Err(Refusal::Round {
                asked: d.round,
                expected: self.next_round,
                rounds: self.rounds,
            });
        }
        match self.fault {
            InjectedFault::ExitAt(t) if t == d.round => return Ok(RoundReply::Exit),
            InjectedFault::HangAt(t) if t <= d.round => return Ok(RoundReply::Hang),
            _ => {}
        }
        self.next_round += 1;
        let up = party.round(&wire::downlink_from_pb(d))?;
        let mut msg = wire::uplink_to_pb(up);
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
