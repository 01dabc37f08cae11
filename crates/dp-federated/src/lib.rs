//! The distributed private Frank-Wolfe protocol of Lou & Cheung (AAAI 2018, "Uplink
//! communication efficient differentially private sparse optimization with feature-wise
//! distributed data") with parties and a server that really run apart.
//!
//! The algorithm is `dp_optim::dist_fw` ([`dp_optim::DistDpFw`]): this crate only moves
//! its messages. Roles:
//!
//! * a party ([`party::PartyHost`]) holds its own columns, the labels and two secret
//!   generators; it recomputes the calibration from the public parameters itself,
//!   charges its own ledger for all `T` rounds before any draw, and answers each round
//!   once, in order;
//! * the server ([`coordinator::run`]) holds `x` and `q_hat`, never any data nor the
//!   sketch; its [`Server`](dp_optim::dist_fw::Server) validates every uplink, once
//!   (sender, round, shape, finiteness, index in the party's block), and the fit stops
//!   at the first failure, naming the party and the round.
//!
//! The job is `dp_optim`'s own [`DistDpFwParams`](dp_optim::DistDpFwParams) (with `K`
//! set to the number of parties), built into a [`DistDpFw`](dp_optim::DistDpFw);
//! [`wire`] converts it and the round messages to and from the protobuf messages of
//! `proto/federated.proto`, in one place. The roles talk through a
//! [`coordinator::Transport`]:
//!
//! * [`inproc::InProcess`]: one thread per party, protobuf-encoded bytes over channels;
//! * [`grpc::Grpc`] / [`grpc::serve_party`]: gRPC over HTTP/2 (tonic), mutual TLS
//!   ([`tls`]); the binaries `dp-federated-party` and `dp-federated-server` run each role
//!   in its own OS process, and [`loopback::run`] runs one configuration on loopback.
//!
//! Both transports give bit-identical iterates for the same seeds. The encoded bytes per
//! party and direction ([`coordinator::Traffic`]) are counted once, by the server role,
//! whatever the transport.
//!
//! # Example (in-process transport)
//! ```
//! use dp_federated::{coordinator, inproc::InProcess, party::{PartyHost, PartySecrets}, split_contiguous};
//! use dp_optim::DistDpFwParams;
//! use std::time::Duration;
//!
//! // 40 people, 6 features in 2 parties (columns 0..3 and 3..6); |x| <= 1, |y| <= 1.
//! let n = 40;
//! let columns: Vec<Vec<f64>> = (0..6)
//!     .map(|j| (0..n).map(|i| (((i * 7 + j * 3) % 11) as f64 / 10.0) - 0.5).collect())
//!     .collect();
//! let labels: Vec<f64> = (0..n).map(|i| columns[0][i] * 0.8 - columns[4][i] * 0.5).collect();
//! let parties = split_contiguous(columns, labels, 2).unwrap();
//! // Public job: radius 1, K = 2 parties, T = 20 rounds, sketch m = 8 (seed 7),
//! // (eps, delta) = (1, 1e-5), bounds B = Y = 1.
//! let job = DistDpFwParams::new(1.0)
//!     .parties(2)
//!     .iterations(20)
//!     .sketch_dim(8)
//!     .sketch_seed(7)
//!     .epsilon(1.0)
//!     .delta(1e-5)
//!     .feature_bound(1.0)
//!     .label_bound(1.0)
//!     .build()
//!     .unwrap();
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
pub mod loopback;
pub mod party;
pub mod processes;
pub mod tls;
pub mod wire;

/// The protobuf messages and the gRPC service, generated from `proto/federated.proto`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("dpfederated");
}

pub use error::{ConfigError, DataError, Fault, FedError, Phase, Result, TlsError};

/// Splits whole columns into the `K` contiguous blocks `DistDpFw` assigns (the first
/// `p mod K` parties hold one column more), each with a copy of the labels.
pub fn split_contiguous(
    columns: Vec<Vec<f64>>,
    labels: Vec<f64>,
    k: usize,
) -> Result<Vec<party::PartyData>> {
    let p = columns.len();
    let set = dp_models::constraint::L1BallProduct::contiguous(1.0, p, k)
        .map_err(|e| FedError::Optim(e.into()))?;
    let mut cols = columns.into_iter();
    set.blocks()
        .iter()
        .map(|b| {
            let c: Vec<Vec<f64>> = cols.by_ref().take(b.len()).collect();
            party::PartyData::new(b.clone(), c, labels.clone())
        })
        .collect()
}
