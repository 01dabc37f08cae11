//! Errors of the protocol: every failure of a party names the party and the round.

use std::fmt;

/// What went wrong with one party.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The party's process or thread is gone (connection closed, channel dropped).
    Died,
    /// No answer before the deadline.
    Timeout,
    /// The answer does not decode, or has the wrong shape or non-finite values.
    Malformed,
    /// The answer belongs to another round or claims to come from another party.
    OutOfRound,
    /// The party refused the request (bad setup, budget above its cap, bad data).
    Refused,
    /// The connection could not be set up or authenticated.
    Connect,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::Died => "died",
            Fault::Timeout => "missed the deadline",
            Fault::Malformed => "sent a malformed message",
            Fault::OutOfRound => "sent an out-of-round message",
            Fault::Refused => "refused",
            Fault::Connect => "could not be reached or authenticated",
        })
    }
}

/// Where a party failed: in the setup phase or in round `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Before round 0 (describe / configure).
    Setup,
    /// Round `t` (0-based).
    Round(u64),
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Setup => f.write_str("setup"),
            Phase::Round(t) => write!(f, "round {t}"),
        }
    }
}

/// Errors of `dp-federated`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FedError {
    /// A party failed; the fit was stopped and nothing was released after this point.
    #[error("party {party} {fault} in {phase}: {detail} (the fit was stopped; nothing is released after this point)")]
    Party {
        /// Index `k` of the party.
        party: usize,
        /// Setup or round.
        phase: Phase,
        /// What went wrong.
        fault: Fault,
        /// Details (the transport's or the validator's message).
        detail: String,
    },
    /// The job is for another number of parties than the transport reaches.
    #[error("the job is for K = {job} parties, the transport reaches {transport}")]
    PartyCount {
        /// `K` of the job.
        job: usize,
        /// Parties the transport reaches.
        transport: usize,
    },
    /// A setup message that does not describe a job (an unknown radius mode, a value out
    /// of range), or a job the protocol cannot carry.
    #[error("setup field {field}: {detail}")]
    Setup {
        /// The field of `pb::Setup` (or of the job).
        field: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// The server process (launched by `processes::run_server`) failed; its own message
    /// (which names the party and the round of a party failure) follows.
    #[error("the server process failed: {stderr}")]
    ServerProcess {
        /// Its exit status.
        status: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// The server process did not finish in time (it was killed).
    #[error("the server did not finish within {0:?}")]
    ServerTimeout(std::time::Duration),
    /// Bad parameters or inconsistent parties (shapes, blocks).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Bad input data (file, values).
    #[error("invalid data: {0}")]
    Data(String),
    /// The solver layer refused (parameters, calibration).
    #[error(transparent)]
    Optim(#[from] dp_optim::OptimError),
    /// TLS material could not be made or read.
    #[error("TLS: {0}")]
    Tls(String),
    /// I/O (files, sockets, processes).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl FedError {
    /// A party failure.
    pub fn party(party: usize, phase: Phase, fault: Fault, detail: impl Into<String>) -> Self {
        FedError::Party {
            party,
            phase,
            fault,
            detail: detail.into(),
        }
    }
    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        FedError::Io {
            context: context.into(),
            source,
        }
    }
}

/// `Result` with [`FedError`].
pub type Result<T> = std::result::Result<T, FedError>;
