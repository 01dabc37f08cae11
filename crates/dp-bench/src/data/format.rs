//! Choosing a loader from a file name or a format name.

use std::path::Path;

use anyhow::{bail, Result};
use dp_models::{Dataset, DenseDesign, SparseDesign};

use super::{load_csv, load_libsvm, CsvOptions};

/// A file format the loaders read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values ([`load_csv`]).
    Csv,
    /// Tab-separated values ([`load_csv`] with a tab delimiter).
    Tsv,
    /// LIBSVM / SVMlight sparse text ([`load_libsvm`]).
    Libsvm,
}

const ACCEPTED: &str = ".csv, .tsv, .libsvm, .svm, .svmlight";

impl Format {
    /// The format named by a file's extension (case-insensitive): `.csv`, `.tsv`,
    /// `.libsvm` / `.svm` / `.svmlight`. Anything else, or no extension, is an error
    /// that lists the accepted extensions (LIBSVM files often have none, e.g.
    /// `heart_scale`: name the format with [`Format::from_name`] then).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let Some(ext) = path.extension() else {
            bail!(
                "cannot tell the format of {}: it has no extension (accepted: {ACCEPTED}); name the format explicitly",
                path.display()
            );
        };
        let ext = ext.to_string_lossy().to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Ok(Self::Csv),
            "tsv" => Ok(Self::Tsv),
            "libsvm" | "svm" | "svmlight" => Ok(Self::Libsvm),
            _ => bail!(
                "unknown file extension .{ext} of {} (accepted: {ACCEPTED}); name the format explicitly",
                path.display()
            ),
        }
    }

    /// The format with this name (case-insensitive): `csv`, `tsv`, `libsvm` (or `svm`,
    /// `svmlight`).
    pub fn from_name(name: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "csv" => Ok(Self::Csv),
            "tsv" => Ok(Self::Tsv),
            "libsvm" | "svm" | "svmlight" => Ok(Self::Libsvm),
            other => bail!("unknown data format {other:?} (accepted: csv, tsv, libsvm)"),
        }
    }
}

/// A loaded dataset, dense (CSV / TSV) or sparse (LIBSVM).
#[derive(Debug, Clone)]
pub enum Loaded {
    /// From a CSV / TSV file.
    Dense(Dataset<DenseDesign>),
    /// From a LIBSVM file.
    Sparse(Dataset<SparseDesign>),
}

/// Loads `path` in `format` (or the format its extension names, when `None`):
/// CSV / TSV with `csv` (the delimiter is forced to a tab for TSV), LIBSVM with
/// `n_features`.
pub fn load(
    path: impl AsRef<Path>,
    format: Option<Format>,
    csv: &CsvOptions,
    n_features: Option<usize>,
) -> Result<Loaded> {
    let path = path.as_ref();
    let format = match format {
        Some(f) => f,
        None => Format::from_path(path)?,
    };
    Ok(match format {
        Format::Csv => Loaded::Dense(load_csv(path, csv)?),
        Format::Tsv => Loaded::Dense(load_csv(
            path,
            &CsvOptions {
                delimiter: b'\t',
                ..csv.clone()
            },
        )?),
        Format::Libsvm => Loaded::Sparse(load_libsvm(path, n_features)?),
    })
}
