//! LIBSVM / SVMlight text loader.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use dp_models::{Dataset, DenseDesign, SparseDesign};

/// Largest feature index [`parse_libsvm`] accepts (10 million). It guards against a
/// corrupt index allocating an absurd design; real LIBSVM data sets stay far below it.
pub const MAX_LIBSVM_FEATURES: usize = 10_000_000;

/// Reads a sparse dataset from a LIBSVM file. See [`parse_libsvm`].
pub fn load_libsvm(
    path: impl AsRef<Path>,
    n_features: Option<usize>,
) -> Result<Dataset<SparseDesign>> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    parse_libsvm(&bytes, n_features).with_context(|| format!("in {}", path.display()))
}

/// Parses LIBSVM text: one sample per line, `label idx:value idx:value ...`, indices
/// 1-based and strictly increasing, labels kept as the numbers written (`+1` / `-1`
/// for the binary sets). Blank lines and `#` comments are skipped.
///
/// `n_features`: the number of columns; `None` takes the largest index seen. An index
/// above `n_features` (or above [`MAX_LIBSVM_FEATURES`]) is an error.
///
/// Errors name the 1-based line and the reason: empty input, a missing or non-numeric
/// label, a token that is not `idx:value`, index 0, non-increasing indices, a
/// non-numeric or non-finite value, invalid UTF-8.
pub fn parse_libsvm(bytes: &[u8], n_features: Option<usize>) -> Result<Dataset<SparseDesign>> {
    parse_raw(bytes, n_features)?.into_sparse()
}

/// Parsed LIBSVM content before it becomes a design.
pub(crate) struct Raw {
    n: usize,
    p: usize,
    triplets: Vec<(usize, usize, f64)>,
    labels: Vec<f64>,
}

impl Raw {
    pub(crate) fn into_sparse(self) -> Result<Dataset<SparseDesign>> {
        let x = SparseDesign::from_triplets(self.n, self.p, &self.triplets)
            .context("building the sparse design")?;
        Dataset::new(x, self.labels).context("pairing design and labels")
    }

    pub(crate) fn into_dense(self) -> Result<Dataset<DenseDesign>> {
        let mut values = vec![0.0; self.n * self.p];
        for &(i, j, v) in &self.triplets {
            values[i * self.p + j] = v;
        }
        let x = DenseDesign::from_row_major(self.n, self.p, &values)
            .context("building the dense design")?;
        Dataset::new(x, self.labels).context("pairing design and labels")
    }
}

pub(crate) fn parse_raw(bytes: &[u8], n_features: Option<usize>) -> Result<Raw> {
    if n_features == Some(0) {
        bail!("n_features = 0: a design needs at least one feature");
    }
    if let Some(p) = n_features {
        if p > MAX_LIBSVM_FEATURES {
            bail!("n_features = {p} exceeds the supported maximum {MAX_LIBSVM_FEATURES}");
        }
    }
    let limit = n_features.unwrap_or(MAX_LIBSVM_FEATURES);
    let mut labels = Vec::new();
    let mut triplets = Vec::new();
    let mut max_index = 0usize;
    for (k, raw_line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = k + 1;
        let line = std::str::from_utf8(raw_line)
            .map_err(|_| anyhow!("line {line_no}: not valid UTF-8"))?;
        let line = match line.find('#') {
            Some(pos) => &line[..pos],
            None => line,
        };
        let mut tokens = line.split_ascii_whitespace();
        let Some(label_text) = tokens.next() else {
            continue; // blank line or comment only
        };
        let label: f64 = label_text.parse().map_err(|_| {
            anyhow!("line {line_no}: bad label {label_text:?}: the first field must be a number")
        })?;
        if !label.is_finite() {
            bail!("line {line_no}: bad label {label_text:?}: not finite (NaN or infinity)");
        }
        let row = labels.len();
        let mut prev = 0usize;
        for tok in tokens {
            let (idx_text, val_text) = tok
                .split_once(':')
                .ok_or_else(|| anyhow!("line {line_no}: bad pair {tok:?}: expected idx:value"))?;
            let idx: usize = idx_text.parse().map_err(|_| {
                anyhow!("line {line_no}: bad pair {tok:?}: index {idx_text:?} is not a positive integer")
            })?;
            if idx == 0 {
                bail!("line {line_no}: bad pair {tok:?}: zero index (LIBSVM indices are 1-based)");
            }
            if idx <= prev {
                bail!("line {line_no}: bad pair {tok:?}: index {idx} is not increasing (previous index {prev})");
            }
            if idx > limit {
                match n_features {
                    Some(p) => bail!("line {line_no}: bad pair {tok:?}: index {idx} exceeds n_features = {p}"),
                    None => bail!("line {line_no}: bad pair {tok:?}: index {idx} exceeds the supported maximum {MAX_LIBSVM_FEATURES}"),
                }
            }
            let v: f64 = val_text.parse().map_err(|_| {
                anyhow!("line {line_no}: bad pair {tok:?}: value {val_text:?} is not a number")
            })?;
            if !v.is_finite() {
                bail!("line {line_no}: bad pair {tok:?}: value is not finite (NaN or infinity)");
            }
            prev = idx;
            max_index = max_index.max(idx);
            triplets.push((row, idx - 1, v));
        }
        labels.push(label);
    }
    if labels.is_empty() {
        bail!("empty LIBSVM input: no data lines");
    }
    let p = match n_features {
        Some(p) => p,
        None if max_index == 0 => {
            bail!("no feature appears in any line; pass n_features to build an all-zero design")
        }
        None => max_index,
    };
    Ok(Raw {
        n: labels.len(),
        p,
        triplets,
        labels,
    })
}
