//! Choosing a loader from a file name or a format name.

use std::path::Path;

use super::error::LoadError;
use super::{load_csv, load_libsvm, CsvOptions, FeatureCount, Result};
use crate::dataset::Dataset;
use crate::design::{DenseDesign, SparseDesign};

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

impl Format {
    /// The format named by a file's extension (case-insensitive): `.csv`, `.tsv`,
    /// `.libsvm` / `.svm` / `.svmlight`, each possibly followed by `.gz` (the loaders
    /// decompress a gzip file, whatever its name). Anything else, or no extension, is an
    /// error that lists the accepted extensions (LIBSVM files often have none, e.g.
    /// `heart_scale`: name the format with [`Format::from_name`] then).
    ///
    /// ```
    /// use dp_models::io::Format;
    /// assert_eq!(Format::from_path("train.CSV")?, Format::Csv);
    /// assert_eq!(Format::from_path("phishing.csv.gz")?, Format::Csv);
    /// assert!(Format::from_path("heart_scale").unwrap_err().to_string().contains("no extension"));
    /// # Ok::<(), dp_models::io::LoadError>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let Some(ext) = path.extension() else {
            return Err(LoadError::NoExtension {
                path: path.to_path_buf(),
            });
        };
        let mut ext = ext.to_string_lossy().to_ascii_lowercase();
        if ext == "gz" {
            // `data.csv.gz`: the format is the extension before `.gz` (the loaders
            // decompress the file).
            let inner = path.file_stem().map(Path::new).and_then(Path::extension);
            let Some(inner) = inner else {
                return Err(LoadError::UnknownExtension {
                    path: path.to_path_buf(),
                    extension: ext,
                });
            };
            ext = inner.to_string_lossy().to_ascii_lowercase();
        }
        match ext.as_str() {
            "csv" => Ok(Self::Csv),
            "tsv" => Ok(Self::Tsv),
            "libsvm" | "svm" | "svmlight" => Ok(Self::Libsvm),
            _ => Err(LoadError::UnknownExtension {
                path: path.to_path_buf(),
                extension: ext,
            }),
        }
    }

    /// The format with this name (case-insensitive): `csv`, `tsv`, `libsvm` (or `svm`,
    /// `svmlight`).
    pub fn from_name(name: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "csv" => Ok(Self::Csv),
            "tsv" => Ok(Self::Tsv),
            "libsvm" | "svm" | "svmlight" => Ok(Self::Libsvm),
            other => Err(LoadError::UnknownFormat { name: other.into() }),
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
/// CSV / TSV with `csv` (the delimiter is forced to a tab for TSV; the columns are the
/// header's, a public schema), LIBSVM with `n_features` (see [`FeatureCount`]: public
/// for anything released privately; ignored for CSV / TSV).
pub fn load(
    path: impl AsRef<Path>,
    format: Option<Format>,
    csv: &CsvOptions,
    n_features: FeatureCount,
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
