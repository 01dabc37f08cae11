//! Dense CSV loader.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use dp_models::{Dataset, DenseDesign};

use super::NamedDataset;

/// Which column of the CSV holds the label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The column with this header name (needs `header: true`).
    Name(String),
    /// The column at this 0-based position.
    Index(usize),
    /// The last column.
    Last,
}

/// How the label field is turned into a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelMap {
    /// Parse the label as a finite number (regression).
    Numeric,
    /// Binary classification: the field equal to `positive` (after trimming spaces)
    /// becomes +1, the one equal to `negative` becomes -1, anything else is an error.
    /// For numeric 0/1 labels use `positive: "1", negative: "0"`.
    Binary {
        /// Text of the positive class.
        positive: String,
        /// Text of the negative class.
        negative: String,
    },
}

/// Options for [`load_csv`] / [`parse_csv`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvOptions {
    /// The label column; every other column is a feature and must be numeric.
    pub target: Target,
    /// Whether the first record is a header of column names.
    pub header: bool,
    /// Field delimiter (default `b','`).
    pub delimiter: u8,
    /// Label conversion.
    pub labels: LabelMap,
}

impl Default for CsvOptions {
    /// Header, comma-separated, last column is a numeric target.
    fn default() -> Self {
        Self {
            target: Target::Last,
            header: true,
            delimiter: b',',
            labels: LabelMap::Numeric,
        }
    }
}

impl CsvOptions {
    /// Regression on the given target column (header, comma-separated).
    pub fn regression(target: Target) -> Self {
        Self {
            target,
            ..Self::default()
        }
    }

    /// Binary classification on the given target column: `positive` -> +1,
    /// `negative` -> -1 (header, comma-separated).
    pub fn classification(target: Target, positive: &str, negative: &str) -> Self {
        Self {
            target,
            labels: LabelMap::Binary {
                positive: positive.into(),
                negative: negative.into(),
            },
            ..Self::default()
        }
    }
}

/// Reads a dense dataset from a CSV file. See [`parse_csv`] for the rules and errors.
pub fn load_csv(path: impl AsRef<Path>, opts: &CsvOptions) -> Result<Dataset<DenseDesign>> {
    Ok(load_csv_named(path, opts)?.dataset)
}

/// [`load_csv`], keeping the column names; the dataset is named after the file stem.
pub fn load_csv_named(
    path: impl AsRef<Path>,
    opts: &CsvOptions,
) -> Result<NamedDataset<DenseDesign>> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut d = parse_csv(&bytes, opts).with_context(|| format!("in {}", path.display()))?;
    if let Some(stem) = path.file_stem() {
        d.name = stem.to_string_lossy().into_owned();
    }
    Ok(d)
}

/// Parses CSV bytes into a dense dataset.
///
/// Every row must have as many fields as the first record; every field except the
/// target must be a finite number (surrounding spaces are allowed). Errors name the
/// 1-based line and the column: empty input, no data rows, ragged rows, empty or
/// non-numeric fields, NaN / infinite values, labels outside the [`LabelMap`], a target
/// that does not exist, invalid UTF-8.
pub fn parse_csv(bytes: &[u8], opts: &CsvOptions) -> Result<NamedDataset<DenseDesign>> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        bail!("empty CSV input: no header and no data rows");
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(opts.delimiter)
        .from_reader(bytes);
    let mut records = reader.byte_records();

    let first = match records.next() {
        Some(r) => r.map_err(|e| csv_error(&e))?,
        None => bail!("empty CSV input: no header and no data rows"),
    };
    let n_cols = first.len();
    let names: Vec<String> = if opts.header {
        first
            .iter()
            .enumerate()
            .map(|(k, f)| {
                std::str::from_utf8(f)
                    .map(|s| s.trim().to_string())
                    .map_err(|_| anyhow!("line 1: header field {} is not valid UTF-8", k + 1))
            })
            .collect::<Result<_>>()?
    } else {
        (0..n_cols).map(|k| format!("column{}", k + 1)).collect()
    };
    if n_cols < 2 {
        bail!(
            "line 1: the CSV has {n_cols} column(s); need a target column and at least one feature column"
        );
    }
    let target = match &opts.target {
        Target::Name(name) => {
            if !opts.header {
                bail!("target column given by name ({name:?}) but the options say the CSV has no header; use Target::Index");
            }
            names.iter().position(|c| c == name.trim()).ok_or_else(|| {
                anyhow!(
                    "target column {name:?} not found in the header (columns: {})",
                    names.join(", ")
                )
            })?
        }
        Target::Index(k) => {
            if *k >= n_cols {
                bail!("target column index {k} is out of range: the CSV has {n_cols} columns (0-based indices 0..{})", n_cols - 1);
            }
            *k
        }
        Target::Last => n_cols - 1,
    };

    let p = n_cols - 1;
    let mut values: Vec<f64> = Vec::new();
    let mut labels: Vec<f64> = Vec::new();
    let mut handle = |rec: &csv::ByteRecord, line: u64| -> Result<()> {
        if rec.len() != n_cols {
            bail!(
                "line {line}: ragged row with {} field(s), expected {n_cols} as in line 1",
                rec.len()
            );
        }
        for (k, field) in rec.iter().enumerate() {
            let text = std::str::from_utf8(field)
                .map_err(|_| {
                    anyhow!(
                        "line {line}, column {:?}: field is not valid UTF-8",
                        names[k]
                    )
                })?
                .trim();
            if k == target {
                labels.push(parse_label(text, &opts.labels, line, &names[k])?);
            } else {
                values.push(parse_number(text, line, &names[k])?);
            }
        }
        Ok(())
    };
    if !opts.header {
        handle(&first, first.position().map_or(1, |p| p.line()))?;
    }
    for rec in records {
        let rec = rec.map_err(|e| csv_error(&e))?;
        let line = rec.position().map_or(0, |p| p.line());
        handle(&rec, line)?;
    }
    if labels.is_empty() {
        bail!("the CSV has a header but no data rows");
    }
    let n = labels.len();
    let x = DenseDesign::from_row_major(n, p, &values).context("building the design matrix")?;
    let dataset = Dataset::new(x, labels).context("pairing design and labels")?;
    let mut feature_names = names.clone();
    let target_name = feature_names.remove(target);
    Ok(NamedDataset {
        name: "csv".into(),
        dataset,
        feature_names,
        target_name,
        stand_in: false,
    })
}

fn csv_error(e: &csv::Error) -> anyhow::Error {
    match e.position() {
        Some(pos) => anyhow!("line {}: malformed CSV: {e}", pos.line()),
        None => anyhow!("malformed CSV: {e}"),
    }
}

fn parse_number(text: &str, line: u64, column: &str) -> Result<f64> {
    if text.is_empty() {
        bail!("line {line}, column {column:?}: empty field (missing value)");
    }
    let v: f64 = text
        .parse()
        .map_err(|_| anyhow!("line {line}, column {column:?}: {text:?} is not a number"))?;
    if !v.is_finite() {
        bail!("line {line}, column {column:?}: value {text:?} is not finite (NaN or infinity)");
    }
    Ok(v)
}

fn parse_label(text: &str, map: &LabelMap, line: u64, column: &str) -> Result<f64> {
    match map {
        LabelMap::Numeric => {
            parse_number(text, line, column).map_err(|e| anyhow!("bad label: {e}"))
        }
        LabelMap::Binary { positive, negative } => {
            if text == positive.trim() {
                Ok(1.0)
            } else if text == negative.trim() {
                Ok(-1.0)
            } else {
                bail!(
                    "line {line}, column {column:?}: bad label {text:?}: expected {positive:?} (+1) or {negative:?} (-1)"
                )
            }
        }
    }
}
