//! The distributed private Frank-Wolfe protocol of Lou & Cheung (AAAI 2018, "Uplink
//! communication efficient differentially private sparse optimization with feature-wise
//! distributed data") with parties and a server that really run apart.
//!
//! The algorithm is `dp_optim::dist_fw` ([`dp_optim::DistDpFw`]): this crate only moves
//! its messages. Roles:
//!
//! * a party ([`job::PartyHost`]) holds its own columns, the labels and two secret
//!   generators; it recomputes the calibration from the public parameters itself,
//!   charges its own ledger for all `T` rounds before any draw, and answers each round
//!   once, in order;
//! * the server ([`coordinator::run`]) holds `x` and `q_hat`, never any data; it checks
//!   every uplink (party, round, shape, finiteness, index in the party's block) and stops
//!   the fit at the first failure, naming the party and the round.
//!
//! They talk through a [`coordinator::Transport`]:
//!
//! * [`inproc::InProcess`]: one thread per party, protobuf-encoded bytes over channels;
//! * [`grpc::Grpc`] / [`grpc::serve_party`]: gRPC over HTTP/2 (tonic), mutual TLS
//!   ([`tls`]); the binaries `dp-federated-party` and `dp-federated-server` run each role
//!   in its own OS process, and [`loopback::run`] runs one configuration on loopback.
//!
//! Both transports give bit-identical iterates for the same seeds and count the same
//! encoded bytes per party and direction ([`coordinator::Traffic`]).
//!
//! # Example (in-process transport)
//! ```
//! use dp_federated::{coordinator, inproc::InProcess, job::{Job, PartyHost, PartySecrets}, split_contiguous};
//! use std::time::Duration;
//!
//! // 40 people, 6 features in 2 parties (columns 0..3 and 3..6); |x| <= 1, |y| <= 1.
//! let n = 40;
//! let columns: Vec<Vec<f64>> = (0..6)
//!     .map(|j| (0..n).map(|i| (((i * 7 + j * 3) % 11) as f64 / 10.0) - 0.5).collect())
//!     .collect();
//! let labels: Vec<f64> = (0..n).map(|i| columns[0][i] * 0.8 - columns[4][i] * 0.5).collect();
//! let parties = split_contiguous(columns, labels, 2).unwrap();
//! // Public job: radius 1, T = 20 rounds, sketch m = 8 (seed 7), (eps, delta) = (1, 1e-5).
//! let job = Job::new(1.0, 20, 8, 7, 1.0, 1e-5, 1.0, 1.0);
//! let hosts = parties
//!     .into_iter()
//!     .enumerate()
//!     .map(|(k, d)| PartyHost::new(d, PartySecrets::from_u64(100 + k as u64), 2, f64::INFINITY))
//!     .collect();
//! let mut transport = InProcess::start(hosts, Duration::from_secs(10));
//! let fit = coordinator::run(&mut transport, &job, false).unwrap();
//! assert_eq!(fit.coefficients.len(), 6);
//! // 20 uplinks per party, each carrying 8 doubles (plus the index and sign).
//! assert!(fit.traffic.up.iter().all(|&b| b > 20 * 8 * 8));
//! ```
//!
//! # Privacy
//! Replace-one neighbours (one person's row across all parties and the label). What each
//! process learns and what goes over the wire: `docs/privacy/dp-fw.md`. The parties'
//! generators never leave them; only the public sketch seed is shared.

pub mod cli;
pub mod coordinator;
pub mod error;
pub mod grpc;
pub mod inproc;
pub mod job;
pub mod loopback;
pub mod processes;
pub mod tls;

/// The protobuf messages and the gRPC service, generated from `proto/federated.proto`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("dpfederated");
}

pub use error::{Fault, FedError, Phase, Result};

/// Splits whole columns into the `K` contiguous blocks `DistDpFw` assigns (the first
/// `p mod K` parties hold one column more), each with a copy of the labels.
pub fn split_contiguous(
    columns: Vec<Vec<f64>>,
    labels: Vec<f64>,
    k: usize,
) -> Result<Vec<job::PartyData>> {
    let p = columns.len();
    let set = dp_models::constraint::L1BallProduct::contiguous(1.0, p, k)
        .map_err(|e| FedError::Config(e.to_string()))?;
    let mut cols = columns.into_iter();
    set.blocks()
        .iter()
        .map(|b| {
            let c: Vec<Vec<f64>> = cols.by_ref().take(b.len()).collect();
            job::PartyData::new(b.clone(), c, labels.clone())
        })
        .collect()
}
