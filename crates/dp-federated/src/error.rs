//! Errors of the protocol: every failure of a party names the party and the round.

use std::fmt;
use std::path::PathBuf;

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
    Config(#[from] ConfigError),
    /// Bad input data (file, values).
    #[error("invalid data: {0}")]
    Data(#[from] DataError),
    /// The solver layer refused (parameters, calibration).
    #[error(transparent)]
    Optim(#[from] dp_optim::OptimError),
    /// TLS material could not be made, or the TLS service could not be set up or run.
    #[error("TLS: {0}")]
    Tls(#[from] TlsError),
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

/// What is inconsistent in a job, its parties or the processes that run it
/// ([`FedError::Config`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The transport described another number of parties than it reaches.
    #[error("the transport returned {shapes} shapes for {parties} parties")]
    ShapeCount {
        /// Shapes returned.
        shapes: usize,
        /// Parties the transport reaches.
        parties: usize,
    },
    /// The parties' features are not contiguous blocks `0..` in party order.
    #[error(
        "party {party} holds feature {found} where feature {expected} was expected: the \
         parties must hold contiguous blocks 0.., in party order"
    )]
    NonContiguousFeatures {
        /// The party.
        party: usize,
        /// The feature it holds.
        found: u64,
        /// The feature the partition needs there.
        expected: u64,
    },
    /// A party's block has another size than the job's partition gives it.
    #[error("party {party} holds {held} features, the plan for p = {p}, K = {parties} gives it {planned}")]
    BlockSize {
        /// The party.
        party: usize,
        /// Features it holds.
        held: usize,
        /// Features the partition gives it.
        planned: usize,
        /// Features in all.
        p: usize,
        /// Parties in all.
        parties: usize,
    },
    /// Data and secrets were given for different numbers of parties.
    #[error("{parties} parties, {secrets} secrets")]
    SecretCount {
        /// Parties (data sets).
        parties: usize,
        /// Secrets.
        secrets: usize,
    },
    /// The operating system gave no entropy for a party's secret seed.
    #[error("no operating-system entropy: {0}")]
    Entropy(#[source] rand::rand_core::OsError),
    /// A party process did not print its address.
    #[error("party {party} did not start (printed {printed:?})")]
    PartyStart {
        /// The party.
        party: usize,
        /// Its first line of output.
        printed: String,
    },
    /// No such party process.
    #[error("no party {0}")]
    NoParty(usize),
    /// The server process's output does not decode as its JSON result.
    #[error("the server's output is not its JSON: {0}")]
    ServerOutput(#[source] serde_json::Error),
    /// The server's result could not be encoded as JSON.
    #[error("the server's result could not be written as JSON: {0}")]
    EncodeOutput(#[source] serde_json::Error),
}

/// What is wrong with a party's data ([`FedError::Data`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// No rows.
    #[error("the party has no rows")]
    NoRows,
    /// No columns, or not one feature index per column.
    #[error("{features} feature indices for {columns} columns (need at least one)")]
    FeatureCount {
        /// Feature indices given.
        features: usize,
        /// Columns given.
        columns: usize,
    },
    /// Feature indices not strictly increasing.
    #[error("feature indices must be strictly increasing")]
    FeatureOrder,
    /// A column has another length than the labels.
    #[error("column {feature} has {rows} rows, the labels {labels}")]
    ColumnLength {
        /// The column's feature index.
        feature: usize,
        /// Its rows.
        rows: usize,
        /// Labels.
        labels: usize,
    },
    /// A value that is not finite (0-based row).
    #[error("column {feature}, row {row} is not finite")]
    NonFinite {
        /// The column's feature index.
        feature: usize,
        /// The row.
        row: usize,
    },
    /// A label that is not finite (0-based row).
    #[error("label of row {row} is not finite")]
    NonFiniteLabel {
        /// The row.
        row: usize,
    },
    /// A file could not be read as CSV.
    #[error("{}: {source}", .file.display())]
    Csv {
        /// The file.
        file: PathBuf,
        /// The CSV reader's error.
        source: csv::Error,
    },
    /// The header does not start with `y`.
    #[error("{}: the header must start with `y`, then the global feature indices", .file.display())]
    Header {
        /// The file.
        file: PathBuf,
    },
    /// A header cell is not a feature index.
    #[error("{}: header cell {cell:?} is not a feature index", .file.display())]
    HeaderCell {
        /// The file.
        file: PathBuf,
        /// The cell.
        cell: String,
    },
    /// A row has the wrong number of cells (1-based row).
    #[error("{}: row {row} has {cells} cells, expected {expected}", .file.display())]
    RowLength {
        /// The file.
        file: PathBuf,
        /// The row.
        row: usize,
        /// Its cells.
        cells: usize,
        /// Cells of the header.
        expected: usize,
    },
    /// A label is not a number (1-based row).
    #[error("{}: row {row}: the label is not a number", .file.display())]
    Label {
        /// The file.
        file: PathBuf,
        /// The row.
        row: usize,
    },
    /// A value is not a number (1-based row and column).
    #[error("{}: row {row}, column {column}: not a number", .file.display())]
    Value {
        /// The file.
        file: PathBuf,
        /// The row.
        row: usize,
        /// The column.
        column: usize,
    },
    /// A seed file does not hold a decimal `u64`.
    #[error("{}: not a decimal u64 seed", .file.display())]
    Seed {
        /// The file.
        file: PathBuf,
        /// The parser's error.
        source: std::num::ParseIntError,
    },
}

/// What failed with TLS ([`FedError::Tls`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A key or certificate could not be made.
    #[error("{0}")]
    Certificate(#[source] rcgen::Error),
    /// The party service's TLS configuration was refused.
    #[error("{0}")]
    ServerConfig(#[source] tonic::transport::Error),
    /// The party service failed while serving.
    #[error("party service: {0}")]
    Serve(#[source] tonic::transport::Error),
}

/// `Result` with [`FedError`].
pub type Result<T> = std::result::Result<T, FedError>;
