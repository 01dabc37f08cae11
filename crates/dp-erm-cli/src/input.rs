//! The data-input arguments shared by `cargo xtask fit` and `cargo xtask optimum`:
//! `--data`, `--format`, `--n-features`, `--target`, `--positive`, `--negative`.
//!
//! Both commands read `--format`'s default from the extension (`.csv`, `.libsvm` /
//! `.svm`); each keeps its own detection (`fit` also refuses `.tsv` by name) and sets its
//! own help text for `--format` with `#[command(mut_arg("format", ...))]`.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// File formats. The serde names (`csv`, `libsvm`) are written to `fit`'s model files:
/// do not change them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Comma-separated values with a header row.
    Csv,
    /// LIBSVM / SVMlight sparse text.
    Libsvm,
}

/// Where the data come from and how to read them.
#[derive(clap::Args, Debug)]
pub struct DataArgs {
    /// Data file (CSV with a header row, or LIBSVM; either may be gzip-compressed, e.g.
    /// `train.csv.gz`).
    #[arg(long)]
    pub data: PathBuf,
    /// File format (the default depends on the command; see its help).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// LIBSVM: the public number of features P, chosen without looking at the data (the
    /// data set's documented dimension). Required by `fit` for LIBSVM input: it sets the
    /// number of coefficients, releases and the noise, so reading it from the largest
    /// index in the file would reveal whether the record holding that index is present.
    /// An index above P is an error naming the file, line and index. (`optimum`, which is
    /// not private, takes the largest index when it is omitted.) CSV: the columns come
    /// from the header row, a public schema; this flag is refused.
    #[arg(long)]
    pub n_features: Option<usize>,
    /// CSV label column, by header name or 0-based index (default: the last column).
    #[arg(long)]
    pub target: Option<String>,
    /// CSV text of the positive class in the label column (with `--negative`); without
    /// it, classification labels must be the numbers -1 and +1.
    #[arg(long, requires = "negative")]
    pub positive: Option<String>,
    /// CSV text of the negative class (with `--positive`).
    #[arg(long, requires = "positive")]
    pub negative: Option<String>,
}
