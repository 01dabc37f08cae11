//! Loader for the NIPS 2003 feature-selection challenge format (madelon, dorothea, ...),
//! for users who have the real files.
//!
//! The challenge ships each split as `<name>_<split>.data` and `<name>_<split>.labels`:
//! - dense sets (madelon, arcene, gisette): one sample per line, whitespace-separated
//!   numbers;
//! - sparse binary sets (dorothea): one sample per line, the whitespace-separated 1-based
//!   indices of its non-zero (= 1) features, increasing;
//! - labels: one `+1` / `-1` (any finite number is accepted) per line.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use dp_models::{Dataset, DenseDesign, Design, SparseDesign};

use super::MAX_LIBSVM_FEATURES;

/// Reads a dense NIPS 2003 split (e.g. `madelon_train.data` + `madelon_train.labels`).
pub fn load_nips2003_dense(
    data: impl AsRef<Path>,
    labels: impl AsRef<Path>,
) -> Result<Dataset<DenseDesign>> {
    let (d, l) = (data.as_ref(), labels.as_ref());
    let db = std::fs::read(d).with_context(|| format!("reading {}", d.display()))?;
    let lb = std::fs::read(l).with_context(|| format!("reading {}", l.display()))?;
    parse_nips2003_dense(&db, &lb).with_context(|| format!("in {} / {}", d.display(), l.display()))
}

/// Reads a sparse binary NIPS 2003 split (e.g. `dorothea_train.data` +
/// `dorothea_train.labels`). `n_features`: `None` takes the largest index (dorothea has
/// 100,000 features; pass `Some(100_000)` to keep them all).
pub fn load_nips2003_sparse(
    data: impl AsRef<Path>,
    labels: impl AsRef<Path>,
    n_features: Option<usize>,
) -> Result<Dataset<SparseDesign>> {
    let (d, l) = (data.as_ref(), labels.as_ref());
    let db = std::fs::read(d).with_context(|| format!("reading {}", d.display()))?;
    let lb = std::fs::read(l).with_context(|| format!("reading {}", l.display()))?;
    parse_nips2003_sparse(&db, &lb, n_features)
        .with_context(|| format!("in {} / {}", d.display(), l.display()))
}

/// Parses the labels file: one finite number per non-blank line.
pub fn parse_nips2003_labels(bytes: &[u8]) -> Result<Vec<f64>> {
    let mut y = Vec::new();
    for (k, line) in lines(bytes) {
        let line = line.map_err(|_| anyhow!("labels line {k}: not valid UTF-8"))?;
        let mut tokens = line.split_ascii_whitespace();
        let Some(t) = tokens.next() else { continue };
        if tokens.next().is_some() {
            bail!("labels line {k}: more than one field");
        }
        let v: f64 = t
            .parse()
            .map_err(|_| anyhow!("labels line {k}: bad label {t:?}: not a number"))?;
        if !v.is_finite() {
            bail!("labels line {k}: bad label {t:?}: not finite (NaN or infinity)");
        }
        y.push(v);
    }
    if y.is_empty() {
        bail!("empty labels file");
    }
    Ok(y)
}

/// Parses a dense data file and its labels. Errors name the line: ragged rows,
/// non-numeric or non-finite values, empty input, a label count that differs from the
/// row count.
pub fn parse_nips2003_dense(data: &[u8], labels: &[u8]) -> Result<Dataset<DenseDesign>> {
    let y = parse_nips2003_labels(labels)?;
    let mut values = Vec::new();
    let mut p = None;
    let mut n = 0usize;
    for (k, line) in lines(data) {
        let line = line.map_err(|_| anyhow!("line {k}: not valid UTF-8"))?;
        let before = values.len();
        for t in line.split_ascii_whitespace() {
            let v: f64 = t
                .parse()
                .map_err(|_| anyhow!("line {k}: {t:?} is not a number"))?;
            if !v.is_finite() {
                bail!("line {k}: value {t:?} is not finite (NaN or infinity)");
            }
            values.push(v);
        }
        let width = values.len() - before;
        if width == 0 {
            continue;
        }
        match p {
            None => p = Some(width),
            Some(p) if p != width => {
                bail!("line {k}: ragged row with {width} values, expected {p} as in the first row")
            }
            Some(_) => {}
        }
        n += 1;
    }
    let Some(p) = p else {
        bail!("empty data file: no rows");
    };
    if y.len() != n {
        bail!(
            "the labels file has {} labels but the data file has {n} rows",
            y.len()
        );
    }
    let x = DenseDesign::from_row_major(n, p, &values).context("building the design")?;
    Dataset::new(x, y).context("pairing design and labels")
}

/// Parses a sparse binary data file (1-based feature indices per line) and its labels.
/// Errors name the line: non-integer, zero, non-increasing or too large indices, empty
/// input, a label count that differs from the row count. A blank line is a sample with
/// no active feature.
pub fn parse_nips2003_sparse(
    data: &[u8],
    labels: &[u8],
    n_features: Option<usize>,
) -> Result<Dataset<SparseDesign>> {
    let y = parse_nips2003_labels(labels)?;
    if n_features == Some(0) {
        bail!("n_features = 0: a design needs at least one feature");
    }
    if let Some(p) = n_features.filter(|&p| p > MAX_LIBSVM_FEATURES) {
        bail!("n_features = {p} exceeds the supported maximum {MAX_LIBSVM_FEATURES}");
    }
    let limit = n_features
        .unwrap_or(MAX_LIBSVM_FEATURES)
        .min(MAX_LIBSVM_FEATURES);
    let mut triplets = Vec::new();
    let mut n = 0usize;
    let mut max_index = 0usize;
    let all: Vec<_> = lines(data).collect();
    // A final empty line after the last newline is not a sample.
    let count = match all.last() {
        Some((_, Ok(l))) if l.trim().is_empty() => all.len() - 1,
        _ => all.len(),
    };
    for (k, line) in all.into_iter().take(count) {
        let line = line.map_err(|_| anyhow!("line {k}: not valid UTF-8"))?;
        let mut prev = 0usize;
        for t in line.split_ascii_whitespace() {
            let j: usize = t
                .parse()
                .map_err(|_| anyhow!("line {k}: index {t:?} is not a positive integer"))?;
            if j == 0 {
                bail!("line {k}: zero index (indices are 1-based)");
            }
            if j <= prev {
                bail!("line {k}: index {j} is not increasing (previous index {prev})");
            }
            if j > limit {
                bail!("line {k}: index {j} exceeds n_features = {limit}");
            }
            prev = j;
            max_index = max_index.max(j);
            triplets.push((n, j - 1, 1.0));
        }
        n += 1;
    }
    if n == 0 {
        bail!("empty data file: no rows");
    }
    if y.len() != n {
        bail!(
            "the labels file has {} labels but the data file has {n} rows",
            y.len()
        );
    }
    let p = match n_features {
        Some(p) => p,
        None if max_index == 0 => bail!("no feature appears in any line; pass n_features"),
        None => max_index,
    };
    let x = SparseDesign::from_triplets(n, p, &triplets).context("building the sparse design")?;
    Dataset::new(x, y).context("pairing design and labels")
}

/// Removes the columns that are zero in every sample (as the DP-GCD paper presumably did
/// to get dorothea's 88,119 of 100,000 columns). Returns the reduced dataset and, for
/// each kept column, its index in the input.
pub fn drop_empty_columns(
    ds: &Dataset<SparseDesign>,
) -> Result<(Dataset<SparseDesign>, Vec<usize>)> {
    let x = ds.x();
    let kept: Vec<usize> = (0..x.n_features()).filter(|&j| x.col_nnz(j) > 0).collect();
    if kept.is_empty() {
        bail!("every column is empty");
    }
    let mut triplets = Vec::with_capacity(x.nnz());
    for (new_j, &j) in kept.iter().enumerate() {
        let (rows, vals) = x.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            triplets.push((i, new_j, v));
        }
    }
    let reduced = SparseDesign::from_triplets(x.n_samples(), kept.len(), &triplets)
        .context("building the reduced design")?;
    Ok((
        Dataset::new(reduced, ds.y().to_vec()).context("pairing")?,
        kept,
    ))
}

/// Lines with 1-based numbers, `\r` stripped.
fn lines(
    bytes: &[u8],
) -> impl Iterator<Item = (usize, std::result::Result<&str, std::str::Utf8Error>)> {
    bytes.split(|&b| b == b'\n').enumerate().map(|(k, l)| {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        (k + 1, std::str::from_utf8(l))
    })
}
