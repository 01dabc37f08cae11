//! The server role (the coordinator) and the [`Transport`] trait it talks through.

use crate::error::{ConfigError, Fault, FedError, Phase, Result};
use crate::pb;
use crate::wire;
use dp_optim::dist_fw::{Server, UplinkFault};
use dp_optim::{DistDpFw, OptimError};
use prost::Message;
use serde::Serialize;

/// Bytes of the encoded protobuf messages, per party and direction: the protobuf
/// encoding of each message sent or received (the gRPC frame header, HTTP/2 and TLS
/// overhead are not included). Counted once, by [`run`], whatever the transport.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// Server to party `k`, setup messages.
    pub setup_down: Vec<u64>,
    /// Party `k` to server, setup messages.
    pub setup_up: Vec<u64>,
    /// Server to party `k`, round messages ([`pb::Downlink`]).
    pub down: Vec<u64>,
    /// Party `k` to server, round messages ([`pb::Uplink`]).
    pub up: Vec<u64>,
}

impl Traffic {
    /// Zero counts for `k` parties.
    pub fn new(k: usize) -> Self {
        Self {
            setup_down: vec![0; k],
            setup_up: vec![0; k],
            down: vec![0; k],
            up: vec![0; k],
        }
    }
}

/// Adds each message's encoded length to its party's count.
fn count<M: Message>(bytes: &mut [u64], messages: &[M]) {
    for (b, m) in bytes.iter_mut().zip(messages) {
        *b += m.encoded_len() as u64;
    }
}

/// Adds the encoded length of one message sent to every party.
fn count_broadcast<M: Message>(bytes: &mut [u64], message: &M) {
    let len = message.encoded_len() as u64;
    bytes.iter_mut().for_each(|b| *b += len);
}

/// How the server reaches the parties. One call per protocol step; each returns one
/// answer per party, in party order, or the first party failure (naming the party and
/// the phase). A transport moves and decodes messages; it neither validates them (the
/// server role does) nor counts their bytes ([`run`] does).
pub trait Transport {
    /// Number of parties.
    fn parties(&self) -> usize;
    /// Asks every party for the public shape of its data.
    fn describe(&mut self) -> Result<Vec<pb::Shape>>;
    /// Sends each party its setup (`setups[k]` to party `k`).
    fn configure(&mut self, setups: &[pb::Setup]) -> Result<Vec<pb::SetupReply>>;
    /// Broadcasts the downlink of a round and collects every party's uplink.
    fn round(&mut self, down: &pb::Downlink) -> Result<Vec<pb::Uplink>>;
    /// Tells every party to stop (best effort: a dead party is skipped).
    fn stop(&mut self, reason: &str);
}

/// The result of a completed fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitOutcome {
    /// The final iterate `x^T` (the model's coefficients).
    pub coefficients: Vec<f64>,
    /// Every iterate `x^1 .. x^T` when asked for (bit-equality checks), else empty.
    pub iterates: Vec<Vec<f64>>,
    /// Rounds run.
    pub rounds: u64,
    /// Rows `n`, features `p`, parties `K`.
    pub samples: usize,
    /// Features `p`.
    pub dim: usize,
    /// Parties `K`.
    pub parties: usize,
    /// Each party's own epsilon for what it released (as it reported it).
    pub party_epsilon: Vec<f64>,
    /// Target `(epsilon, delta)` of the whole fit; the parties' joint releases compose
    /// to at most this (`DistDpFw` calibrates to the joint ledger).
    pub epsilon: f64,
    /// Target delta.
    pub delta: f64,
    /// Encoded bytes per party and direction.
    pub traffic: Traffic,
    /// Encoded bytes one party's uplinks would take without the sketch (the column
    /// `(1/n) a_{i_k}` of length `n` in place of the sketch of length `m`), over all
    /// rounds: the unsketched baseline.
    pub unsketched_uplink_bytes: u64,
}

impl FitOutcome {
    /// Whether the final coefficients and every kept iterate equal `other`'s bit for bit
    /// (the cross-transport check).
    pub fn same_bits(&self, other: &FitOutcome) -> bool {
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        same(&self.coefficients, &other.coefficients)
            && self.iterates.len() == other.iterates.len()
            && self
                .iterates
                .iter()
                .zip(&other.iterates)
                .all(|(a, b)| same(a, b))
    }
}

/// Runs the whole fit of `job` through `transport`: describe, configure, `T` rounds,
/// stop. On any failure it tells the parties to stop and returns the error; no iterate
/// is returned (nothing is released after a failure). With `keep_iterates` every `x^t`
/// is kept (for bit-equality checks).
pub fn run(
    transport: &mut dyn Transport,
    job: &DistDpFw,
    keep_iterates: bool,
) -> Result<FitOutcome> {
    match run_inner(transport, job, keep_iterates) {
        Ok(out) => {
            transport.stop("");
            Ok(out)
        }
        Err(e) => {
            transport.stop(&e.to_string());
            Err(e)
        }
    }
}

fn run_inner(
    transport: &mut dyn Transport,
    job: &DistDpFw,
    keep_iterates: bool,
) -> Result<FitOutcome> {
    let k = transport.parties();
    if k != job.parties() {
        return Err(FedError::PartyCount {
            job: job.parties(),
            transport: k,
        });
    }
    let mut traffic = Traffic::new(k);
    let shapes = transport.describe()?;
    if shapes.len() != k {
        return Err(ConfigError::ShapeCount {
            shapes: shapes.len(),
            parties: k,
        }
        .into());
    }
    count_broadcast(&mut traffic.setup_down, &pb::Describe {});
    count(&mut traffic.setup_up, &shapes);
    let n = shapes[0].samples as usize;
    let mut next = 0u64;
    for (i, s) in shapes.iter().enumerate() {
        if s.samples as usize != n {
            return Err(FedError::party(
                i,
                Phase::Setup,
                Fault::Refused,
                format!("holds {} rows, party 0 holds {n}", s.samples),
            ));
        }
        // Contiguous blocks in party order: the partition DistDpFw uses.
        for &j in &s.features {
            if j != next {
                return Err(ConfigError::NonContiguousFeatures {
                    party: i,
                    found: j,
                    expected: next,
                }
                .into());
            }
            next += 1;
        }
    }
    let p = next as usize;
    // The server's part of the public setup: the partition and the step schedule (the
    // sketch is the parties' business).
    let layout = job.layout(n, p)?;
    for (i, (s, b)) in shapes.iter().zip(&layout.blocks).enumerate() {
        if s.features.len() != b.len() {
            return Err(ConfigError::BlockSize {
                party: i,
                held: s.features.len(),
                planned: b.len(),
                p,
                parties: k,
            }
            .into());
        }
    }
    let setups = (0..k)
        .map(|i| wire::setup(job, i, n, p))
        .collect::<Result<Vec<_>>>()?;
    let replies = transport.configure(&setups)?;
    count(&mut traffic.setup_down, &setups);
    count(&mut traffic.setup_up, &replies);
    let m = job.sketch_dim();
    let mut server = Server::new(p, m, k, layout.party_radius, layout.sampling_probability)
        .with_blocks(layout.blocks);
    let mut iterates = Vec::new();
    for t in 0..job.iterations() {
        let down = wire::downlink_to_pb(server.downlink());
        let ups = transport.round(&down)?;
        count_broadcast(&mut traffic.down, &down);
        count(&mut traffic.up, &ups);
        let ups = ups
            .into_iter()
            .enumerate()
            .map(|(i, u)| {
                wire::uplink_from_pb(u).map_err(|(f, d)| FedError::party(i, Phase::Round(t), f, d))
            })
            .collect::<Result<Vec<_>>>()?;
        // The one validation of the uplinks: the server role's.
        server.receive(&ups).map_err(|e| match e {
            OptimError::Uplink(r) => FedError::party(
                r.party,
                Phase::Round(r.round),
                match r.kind {
                    UplinkFault::OutOfRound => Fault::OutOfRound,
                    _ => Fault::Malformed,
                },
                r.detail,
            ),
            other => FedError::Optim(other),
        })?;
        if keep_iterates {
            iterates.push(server.x().to_vec());
        }
    }
    let x = server.x().to_vec();
    if x.iter().any(|v| !v.is_finite()) {
        return Err(FedError::Optim(OptimError::Diverged(
            "the iterate is not finite: check the data and bounds".into(),
        )));
    }
    let rounds = job.iterations();
    let baseline = pb::Uplink {
        party: (k - 1) as u32,
        round: rounds.saturating_sub(1),
        index: (p - 1) as u64,
        sign: -1,
        sketch: vec![0.0; n],
    }
    .encoded_len() as u64
        * rounds;
    let privacy = job.privacy();
    Ok(FitOutcome {
        coefficients: x,
        iterates,
        rounds,
        samples: n,
        dim: p,
        parties: k,
        party_epsilon: replies.iter().map(|r| r.ledger_epsilon).collect(),
        epsilon: privacy.epsilon.get(),
        delta: privacy.delta.get(),
        traffic,
        unsketched_uplink_bytes: baseline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(coefficients: Vec<f64>, iterates: Vec<Vec<f64>>) -> FitOutcome {
        FitOutcome {
            coefficients,
            iterates,
            rounds: 2,
            samples: 4,
            dim: 2,
            parties: 1,
            party_epsilon: vec![1.0],
            epsilon: 1.0,
            delta: 1e-5,
            traffic: Traffic::new(1),
            unsketched_uplink_bytes: 0,
        }
    }

    #[test]
    fn same_bits_sees_one_bit_and_a_missing_iterate() {
        let a = outcome(vec![0.5, -0.25], vec![vec![0.0, 0.1], vec![0.5, -0.25]]);
        assert!(a.same_bits(&a.clone()));
        let mut b = a.clone();
        b.iterates[0][1] = f64::from_bits(0.1f64.to_bits() + 1);
        assert!(!a.same_bits(&b));
        let mut c = a.clone();
        c.iterates.pop();
        assert!(!a.same_bits(&c));
        // 0.0 and -0.0 compare equal as floats but not as bits.
        let d = outcome(vec![-0.0, -0.25], a.iterates.clone());
        let e = outcome(vec![0.0, -0.25], a.iterates.clone());
        assert!(!d.same_bits(&e));
    }
}
