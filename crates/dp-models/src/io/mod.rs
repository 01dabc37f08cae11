//! Reading data files: dense CSV / TSV and sparse LIBSVM, for training and for
//! prediction.
//!
//! | function | reads | returns |
//! |---|---|---|
//! | [`load_csv`] / [`load_csv_data`] / [`parse_csv`] | CSV with a target column chosen by [`Target`], labels converted by [`LabelMap`] | [`Dataset<DenseDesign>`](crate::Dataset) / [`CsvData`] (with column names) |
//! | [`read_csv_for_prediction`] / [`parse_csv_for_prediction`] | CSV holding a model's feature columns by name, optionally its label column | the design and the labels if present |
//! | [`load_libsvm`] / [`parse_libsvm`] / [`parse_libsvm_dense`] | LIBSVM / SVMlight text | sparse (or dense) dataset |
//! | [`load`] with [`Format`] | any of them, chosen by extension or name | [`Loaded`] |
//!
//! The loaders never panic on malformed input. Every failure is a [`LoadError`] whose
//! one-line message names the file (for the `load_*` / `read_*` functions), the 1-based
//! line, the column (header name and 0-based index) and the offending value where they
//! apply, e.g.
//!
//! ```text
//! data/train.csv, line 3, column "size" (index 0): "fifty" is not a number
//! ```
//!
//! The [`Location`] and [`Problem`] of a parse error are also available as values.
//!
//! ```
//! use dp_models::io::{parse_csv, CsvOptions, LoadError, Problem, Target};
//!
//! let opts = CsvOptions::classification(Target::Name("class".into()), "UP", "DOWN");
//! let data = parse_csv(b"price,class\n0.5,UP\n0.25,DOWN\n", &opts)?;
//! assert_eq!(data.dataset.y(), &[1.0, -1.0]);
//!
//! let err = parse_csv(b"price,class\n0.5,UP\n0.25,SIDEWAYS\n", &opts).unwrap_err();
//! assert_eq!(err.location().unwrap().line, Some(3));
//! assert!(matches!(err.problem(), Some(Problem::BadLabel { value, .. }) if value == "SIDEWAYS"));
//! # Ok::<(), LoadError>(())
//! ```

mod delimited;
mod error;
mod format;
mod libsvm;

pub use delimited::{
    load_csv, load_csv_data, parse_csv, parse_csv_for_prediction, read_csv_for_prediction, CsvData,
    CsvOptions, LabelMap, Target,
};
pub use error::{Column, LoadError, Location, Problem, ACCEPTED_EXTENSIONS};
pub use format::{load, Format, Loaded};
pub use libsvm::{
    load_libsvm, parse_libsvm, parse_libsvm_dense, FeatureCount, MAX_LIBSVM_FEATURES,
};

/// Result of the loaders.
pub type Result<T> = std::result::Result<T, LoadError>;

#[cfg(test)]
mod tests;
