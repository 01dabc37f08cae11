//! LIBSVM / SVMlight text loading.

use std::path::Path;

use super::error::{read_file, LoadError, Problem};
use super::Result;
use crate::dataset::Dataset;
use crate::design::{DenseDesign, SparseDesign};

/// Largest feature index [`parse_libsvm`] accepts (10 million). It guards against a
/// corrupt index allocating an absurd design; real LIBSVM data sets stay far below it.
pub const MAX_LIBSVM_FEATURES: usize = 10_000_000;

/// Where a LIBSVM file's number of features `p` comes from.
///
/// LIBSVM text does not state its width. `p` sets the number of coefficients, of
/// coordinate releases and the noise multiplier of a private fit, and is written into
/// the model, so it must be **public**: taking it from the largest index present would
/// let one record (the only one with index 40 among files whose indices stop at 5)
/// change the release plan and the model's shape, which tells an observer with
/// certainty whether that record was in the data. A private fit therefore declares it
/// ([`FeatureCount::Public`]), and an index above it is an error naming the file, the
/// line and the index. Reading it from the data is possible only by naming that choice
/// ([`FeatureCount::FromDataNotPrivate`]), for non-private tools (the exact optimum, data
/// inspection), never for a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureCount {
    /// The declared public number of features, chosen without looking at the data (the
    /// data set's documented dimension, or a schema). Indices above it are refused.
    Public(usize),
    /// The largest index present in the file: computed from the data WITHOUT privacy.
    /// Not for anything that is released under a privacy guarantee.
    FromDataNotPrivate,
}

impl FeatureCount {
    /// The declared count, if public.
    pub fn public(self) -> Option<usize> {
        match self {
            Self::Public(p) => Some(p),
            Self::FromDataNotPrivate => None,
        }
    }
}

/// Reads a sparse dataset from a LIBSVM file. See [`parse_libsvm`]; errors name the file.
///
/// ```no_run
/// use dp_models::io::{load_libsvm, FeatureCount};
/// // heart_scale has 13 documented features (public), whatever indices a file holds.
/// let data = load_libsvm("heart_scale", FeatureCount::Public(13))?;
/// # Ok::<(), dp_models::io::LoadError>(())
/// ```
pub fn load_libsvm(
    path: impl AsRef<Path>,
    n_features: FeatureCount,
) -> Result<Dataset<SparseDesign>> {
    let path = path.as_ref();
    let bytes = read_file(path)?;
    parse_libsvm(&bytes, n_features).map_err(|e| e.in_file(path))
}

/// Parses LIBSVM text: one sample per line, `label idx:value idx:value ...`, indices
/// 1-based and strictly increasing, labels kept as the numbers written (`+1` / `-1`
/// for the binary sets). Blank lines and `#` comments are skipped.
///
/// `n_features`: the number of columns, declared ([`FeatureCount::Public`]: an index
/// above it is an error naming the line and the index) or, for non-private uses only,
/// the largest index seen ([`FeatureCount::FromDataNotPrivate`]). An index above
/// [`MAX_LIBSVM_FEATURES`] is always an error.
///
/// Errors are [`LoadError::Parse`] naming the 1-based line, the offending token and the
/// reason: empty input, a missing or non-numeric label, a token that is not
/// `idx:value`, index 0, non-increasing indices, a non-numeric or non-finite value,
/// invalid UTF-8.
///
/// ```
/// use dp_models::io::{parse_libsvm, FeatureCount};
/// use dp_models::Design;
///
/// let data = parse_libsvm(b"+1 1:0.5 3:2\n-1 2:-1 # a comment\n", FeatureCount::Public(4))?;
/// assert_eq!((data.n_samples(), data.n_features()), (2, 4));
/// assert_eq!(data.x().row(0), (&[0usize, 2][..], &[0.5, 2.0][..]));
///
/// let err = parse_libsvm(b"+1 1:0.5\n-1 9:1\n", FeatureCount::Public(4)).unwrap_err();
/// assert_eq!(err.to_string(), r#"line 2: bad pair "9:1": index 9 exceeds the declared n_features = 4"#);
///
/// let err = parse_libsvm(b"+1 1:0.5\n-1 2:abc\n", FeatureCount::Public(4)).unwrap_err();
/// assert_eq!(err.to_string(), r#"line 2: bad pair "2:abc": value "abc" is not a number"#);
/// # Ok::<(), dp_models::io::LoadError>(())
/// ```
pub fn parse_libsvm(bytes: &[u8], n_features: FeatureCount) -> Result<Dataset<SparseDesign>> {
    parse_raw(bytes, n_features)?.into_sparse()
}

/// [`parse_libsvm`] into a dense design (absent entries are 0), for small files.
///
/// ```
/// use dp_models::io::{parse_libsvm_dense, FeatureCount};
/// let data = parse_libsvm_dense(b"1 2:3\n-1 1:1\n", FeatureCount::Public(3))?;
/// assert_eq!(data.x().row(0), &[0.0, 3.0, 0.0]);
/// # Ok::<(), dp_models::io::LoadError>(())
/// ```
pub fn parse_libsvm_dense(bytes: &[u8], n_features: FeatureCount) -> Result<Dataset<DenseDesign>> {
    parse_raw(bytes, n_features)?.into_dense()
}

/// Parsed LIBSVM content before it becomes a design.
struct Raw {
    n: usize,
    p: usize,
    triplets: Vec<(usize, usize, f64)>,
    labels: Vec<f64>,
}

impl Raw {
    fn into_sparse(self) -> Result<Dataset<SparseDesign>> {
        let x = SparseDesign::from_triplets(self.n, self.p, &self.triplets)?;
        Ok(Dataset::new(x, self.labels)?)
    }

    fn into_dense(self) -> Result<Dataset<DenseDesign>> {
        let size = self
            .n
            .checked_mul(self.p)
            .ok_or_else(|| LoadError::InvalidOption {
                name: "n_features",
                value: self.p.to_string(),
                expected: format!("too many for a dense design of {} rows", self.n),
            })?;
        let mut values = vec![0.0; size];
        for &(i, j, v) in &self.triplets {
            values[i * self.p + j] = v;
        }
        let x = DenseDesign::from_row_major(self.n, self.p, &values)?;
        Ok(Dataset::new(x, self.labels)?)
    }
}

fn parse_raw(bytes: &[u8], n_features: FeatureCount) -> Result<Raw> {
    let n_features = n_features.public();
    if let Some(p) = n_features {
        if p == 0 {
            return Err(LoadError::InvalidOption {
                name: "n_features",
                value: "0".into(),
                expected: "a design needs at least one feature".into(),
            });
        }
        if p > MAX_LIBSVM_FEATURES {
            return Err(LoadError::InvalidOption {
                name: "n_features",
                value: p.to_string(),
                expected: format!("exceeds the supported maximum {MAX_LIBSVM_FEATURES}"),
            });
        }
    }
    let limit = n_features.unwrap_or(MAX_LIBSVM_FEATURES);
    let mut labels = Vec::new();
    let mut triplets = Vec::new();
    let mut max_index = 0usize;
    for (k, raw_line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = k as u64 + 1;
        let line = std::str::from_utf8(raw_line)
            .map_err(|_| LoadError::on_line(line_no, Problem::InvalidUtf8))?;
        let line = match line.find('#') {
            Some(pos) => &line[..pos],
            None => line,
        };
        let mut tokens = line.split_ascii_whitespace();
        let Some(label_text) = tokens.next() else {
            continue; // blank line or comment only
        };
        let bad_label = |reason: &str| {
            LoadError::on_line(
                line_no,
                Problem::BadLabel {
                    value: label_text.into(),
                    reason: reason.into(),
                },
            )
        };
        let label: f64 = label_text
            .parse()
            .map_err(|_| bad_label("the first field must be a number"))?;
        if !label.is_finite() {
            return Err(bad_label("not finite (NaN or infinity)"));
        }
        let row = labels.len();
        let mut prev = 0usize;
        for tok in tokens {
            let bad = |reason: String| {
                LoadError::on_line(
                    line_no,
                    Problem::BadPair {
                        token: tok.into(),
                        reason,
                    },
                )
            };
            let (idx_text, val_text) = tok
                .split_once(':')
                .ok_or_else(|| bad("expected idx:value".into()))?;
            let idx: usize = idx_text
                .parse()
                .map_err(|_| bad(format!("index {idx_text:?} is not a positive integer")))?;
            if idx == 0 {
                return Err(bad("zero index (LIBSVM indices are 1-based)".into()));
            }
            if idx <= prev {
                return Err(bad(format!(
                    "index {idx} is not increasing (previous index {prev})"
                )));
            }
            if idx > limit {
                return Err(bad(match n_features {
                    Some(p) => format!("index {idx} exceeds the declared n_features = {p}"),
                    None => {
                        format!("index {idx} exceeds the supported maximum {MAX_LIBSVM_FEATURES}")
                    }
                }));
            }
            let v: f64 = val_text
                .parse()
                .map_err(|_| bad(format!("value {val_text:?} is not a number")))?;
            if !v.is_finite() {
                return Err(bad(format!(
                    "value {val_text:?} is not finite (NaN or infinity)"
                )));
            }
            prev = idx;
            max_index = max_index.max(idx);
            triplets.push((row, idx - 1, v));
        }
        labels.push(label);
    }
    if labels.is_empty() {
        return Err(LoadError::whole(Problem::EmptyInput { format: "LIBSVM" }));
    }
    let p = match n_features {
        Some(p) => p,
        None if max_index == 0 => return Err(LoadError::whole(Problem::NoFeatures)),
        None => max_index,
    };
    Ok(Raw {
        n: labels.len(),
        p,
        triplets,
        labels,
    })
}
