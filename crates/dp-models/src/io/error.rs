//! Typed errors of the loaders: what is wrong, and where (file, line, column, value).

use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::error::ModelError;

/// A column of a delimited file: its 0-based position in the row and, when the file has
/// a header, its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// 0-based position of the field in its row (as `Target::Index` counts).
    pub index: usize,
    /// The header name, when the file has a header.
    pub name: Option<String>,
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "column {name:?} (index {})", self.index),
            None => write!(f, "column index {}", self.index),
        }
    }
}

/// Where in the input a problem was found. Every part is optional: bytes parsed in
/// memory have no file, a problem with the whole input has no line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The file, when the input was read from one.
    pub file: Option<PathBuf>,
    /// The 1-based line.
    pub line: Option<u64>,
    /// The column (delimited files).
    pub column: Option<Column>,
}

impl Location {
    /// A location on a line (no file, no column).
    pub fn line(line: u64) -> Self {
        Self {
            line: Some(line),
            ..Self::default()
        }
    }

    /// A location on a line and in a column.
    pub fn cell(line: u64, column: Column) -> Self {
        Self {
            line: Some(line),
            column: Some(column),
            ..Self::default()
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::with_capacity(3);
        if let Some(file) = &self.file {
            parts.push(file.display().to_string());
        }
        if let Some(line) = self.line {
            parts.push(format!("line {line}"));
        }
        if let Some(column) = &self.column {
            parts.push(column.to_string());
        }
        if parts.is_empty() {
            f.write_str("input")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// What is wrong with a piece of input (the "where" is a [`Location`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Problem {
    /// No data at all (empty or whitespace-only input, or only comments).
    #[error("empty {format} input: no data")]
    EmptyInput {
        /// "CSV" or "LIBSVM".
        format: &'static str,
    },
    /// A header and no data rows.
    #[error("the CSV has a header but no data rows")]
    NoDataRows,
    /// Fewer than two columns (a target and a feature are needed).
    #[error("the CSV has {found} column(s); need a target column and at least one feature column")]
    TooFewColumns {
        /// Number of columns found.
        found: usize,
    },
    /// The target column named in the options is not in the header.
    #[error(
        "target column {name:?} not found in the header (columns: {})",
        quoted(columns)
    )]
    TargetNotFound {
        /// The name asked for.
        name: String,
        /// The header's columns.
        columns: Vec<String>,
    },
    /// The target column index is past the last column.
    #[error(
        "target column index {index} is out of range: the CSV has {n_columns} columns (0-based indices 0..{})",
        n_columns.saturating_sub(1)
    )]
    TargetOutOfRange {
        /// The index asked for.
        index: usize,
        /// Number of columns.
        n_columns: usize,
    },
    /// A target given by name for a file read without a header.
    #[error(
        "target column given by name ({name:?}) but the options say the CSV has no header; use Target::Index"
    )]
    TargetNeedsHeader {
        /// The name asked for.
        name: String,
    },
    /// A row with another number of fields than the first.
    #[error("ragged row with {found} field(s), expected {expected} as in line 1")]
    Ragged {
        /// Fields in this row.
        found: usize,
        /// Fields in the first row.
        expected: usize,
    },
    /// An empty feature field.
    #[error("empty field (missing value)")]
    EmptyField,
    /// A feature field that does not parse as a number.
    #[error("{value:?} is not a number")]
    NotANumber {
        /// The field's text.
        value: String,
    },
    /// A feature field that parses as NaN or infinity.
    #[error("value {value:?} is not finite (NaN or infinity)")]
    NonFinite {
        /// The field's text.
        value: String,
    },
    /// A label that is not a finite number, or not one of the two class texts.
    #[error("bad label {value:?}: {reason}")]
    BadLabel {
        /// The label's text.
        value: String,
        /// Why it is refused and what was expected.
        reason: String,
    },
    /// Bytes that are not UTF-8.
    #[error("not valid UTF-8")]
    InvalidUtf8,
    /// The CSV reader refused the input.
    #[error("malformed CSV: {message}")]
    MalformedCsv {
        /// The reader's message.
        message: String,
    },
    /// Feature columns of the model that the file lacks.
    #[error(
        "missing feature column(s) {}: the model needs the columns {}",
        quoted(missing),
        quoted(expected)
    )]
    MissingColumns {
        /// The model's columns not in the header.
        missing: Vec<String>,
        /// All of the model's feature columns.
        expected: Vec<String>,
    },
    /// Columns that are neither a feature of the model nor the target.
    #[error(
        "unexpected column(s) {}: the model's feature columns are {}{}",
        quoted(unexpected),
        quoted(expected),
        match target { Some(t) => format!(" and the target column is {t:?}"), None => String::new() }
    )]
    UnexpectedColumns {
        /// The header's columns that are not expected.
        unexpected: Vec<String>,
        /// The model's feature columns.
        expected: Vec<String>,
        /// The target column, if one was named.
        target: Option<String>,
    },
    /// A column name that appears twice in the header.
    #[error("column name {name:?} appears more than once in the header")]
    DuplicateColumn {
        /// The repeated name.
        name: String,
    },
    /// A LIBSVM `index:value` token that is malformed or out of range.
    #[error("bad pair {token:?}: {reason}")]
    BadPair {
        /// The token as written.
        token: String,
        /// What is wrong with it.
        reason: String,
    },
    /// LIBSVM input in which no feature appears, read without a feature count.
    #[error("no feature appears in any line; pass n_features to build an all-zero design")]
    NoFeatures,
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything that can go wrong while loading data. Each message is one line naming the
/// file, the line, the column and the offending value where they apply.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read (missing, unreadable).
    #[error("cannot read {}: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error kind.
        kind: std::io::ErrorKind,
        /// The operating system's message.
        message: String,
    },
    /// The input is malformed at `at`.
    #[error("{at}: {problem}")]
    Parse {
        /// Where (boxed to keep the error small).
        at: Box<Location>,
        /// What.
        problem: Problem,
    },
    /// A loader option is out of range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// Its value, as text.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// A file name without an extension, and no format given.
    #[error(
        "cannot tell the format of {}: it has no extension (accepted: {ACCEPTED_EXTENSIONS}); name the format explicitly",
        path.display()
    )]
    NoExtension {
        /// The file.
        path: PathBuf,
    },
    /// A file extension that names no known format.
    #[error(
        "unknown file extension .{extension} of {} (accepted: {ACCEPTED_EXTENSIONS}); name the format explicitly",
        path.display()
    )]
    UnknownExtension {
        /// The file.
        path: PathBuf,
        /// Its extension (lower case, without the dot).
        extension: String,
    },
    /// A format name that is not known.
    #[error("unknown data format {name:?} (accepted: csv, tsv, libsvm)")]
    UnknownFormat {
        /// The name given.
        name: String,
    },
    /// The parsed values were refused by the design or dataset constructor.
    #[error("building the dataset: {0}")]
    Model(Box<ModelError>),
}

/// The extensions [`Format::from_path`](super::Format::from_path) recognises.
pub const ACCEPTED_EXTENSIONS: &str =
    ".csv, .tsv, .libsvm, .svm, .svmlight, each optionally followed by .gz";

impl LoadError {
    /// A parse error at `at`.
    pub(crate) fn at(at: Location, problem: Problem) -> Self {
        Self::Parse {
            at: Box::new(at),
            problem,
        }
    }

    /// A parse error on a line.
    pub(crate) fn on_line(line: u64, problem: Problem) -> Self {
        Self::at(Location::line(line), problem)
    }

    /// A parse error of the whole input.
    pub(crate) fn whole(problem: Problem) -> Self {
        Self::at(Location::default(), problem)
    }

    /// Records the file a parse error was found in (no effect on other errors, or when a
    /// file is already recorded).
    pub fn in_file(mut self, path: &Path) -> Self {
        if let Self::Parse { at, .. } = &mut self {
            if at.file.is_none() {
                at.file = Some(path.to_path_buf());
            }
        }
        self
    }

    /// The location of a parse error.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Self::Parse { at, .. } => Some(at),
            _ => None,
        }
    }

    /// The problem of a parse error.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Self::Parse { problem, .. } => Some(problem),
            _ => None,
        }
    }
}

impl From<ModelError> for LoadError {
    fn from(e: ModelError) -> Self {
        Self::Model(Box::new(e))
    }
}

/// The first two bytes of a gzip stream (RFC 1952); no CSV or LIBSVM text starts with
/// them (`0x1f` is a control character).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a whole file, naming it in the error; a gzip-compressed file (recognised by its
/// first bytes, whatever its name) is decompressed, every member of it.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    let bytes = std::fs::read(path).map_err(|e| LoadError::Read {
        path: path.to_path_buf(),
        kind: e.kind(),
        message: e.to_string(),
    })?;
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
        .map_err(|e| LoadError::Read {
            path: path.to_path_buf(),
            kind: e.kind(),
            message: format!("it starts as a gzip file but does not decompress: {e}"),
        })?;
    Ok(out)
}
