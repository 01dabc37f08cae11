//! Dense CSV / TSV loading, for training (a target column) and for prediction (the
//! model's feature columns, by name).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::{read_file, Column, LoadError, Location, Problem};
use super::Result;
use crate::dataset::Dataset;
use crate::design::DenseDesign;

/// Which column of the CSV holds the label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// The column with this header name (needs `header: true`).
    Name(String),
    /// The column at this 0-based position.
    Index(usize),
    /// The last column.
    Last,
}

impl Target {
    /// A command-line style target: a 0-based index when `text` is an unsigned integer,
    /// otherwise a header name; [`Target::Last`] for `None`.
    ///
    /// ```
    /// use dp_models::io::Target;
    /// assert_eq!(Target::parse(Some("2")), Target::Index(2));
    /// assert_eq!(Target::parse(Some("price")), Target::Name("price".into()));
    /// assert_eq!(Target::parse(None), Target::Last);
    /// ```
    pub fn parse(text: Option<&str>) -> Self {
        match text {
            None => Self::Last,
            Some(t) => match t.trim().parse::<usize>() {
                Ok(i) => Self::Index(i),
                Err(_) => Self::Name(t.to_string()),
            },
        }
    }
}

/// How the label field is turned into a number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LabelMap {
    /// Parse the label as a finite number (regression, or classes written -1 / +1).
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

impl LabelMap {
    /// [`LabelMap::Binary`] for `Some((positive, negative))`, [`LabelMap::Numeric`]
    /// for `None`.
    pub fn from_pair(pair: Option<(String, String)>) -> Self {
        match pair {
            Some((positive, negative)) => Self::Binary { positive, negative },
            None => Self::Numeric,
        }
    }
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

/// A dense dataset read from a CSV, with its column names.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvData {
    /// The design (every column but the target) and the labels.
    pub dataset: Dataset<DenseDesign>,
    /// One name per column of the design, in order (`column1`, `column2`, ... when the
    /// file has no header: 1-based positions in the file).
    pub feature_names: Vec<String>,
    /// Name of the label column.
    pub target_name: String,
}

/// Reads a dense dataset from a CSV file. See [`parse_csv`] for the rules and errors.
pub fn load_csv(path: impl AsRef<Path>, opts: &CsvOptions) -> Result<Dataset<DenseDesign>> {
    Ok(load_csv_data(path, opts)?.dataset)
}

/// [`load_csv`], keeping the column names. Errors name the file.
pub fn load_csv_data(path: impl AsRef<Path>, opts: &CsvOptions) -> Result<CsvData> {
    let path = path.as_ref();
    let bytes = read_file(path)?;
    parse_csv(&bytes, opts).map_err(|e| e.in_file(path))
}

/// The first record and the others, after refusing empty input.
fn records(
    bytes: &[u8],
    delimiter: u8,
) -> Result<(::csv::ByteRecord, ::csv::ByteRecordsIntoIter<&[u8]>)> {
    let empty = || LoadError::whole(Problem::EmptyInput { format: "CSV" });
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(empty());
    }
    let reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(bytes);
    let mut records = reader.into_byte_records();
    let first = match records.next() {
        Some(r) => r.map_err(|e| csv_error(&e))?,
        None => return Err(empty()),
    };
    Ok((first, records))
}

/// The trimmed header names of the first record.
fn header_names(first: &::csv::ByteRecord) -> Result<Vec<String>> {
    first
        .iter()
        .enumerate()
        .map(|(k, f)| {
            std::str::from_utf8(f)
                .map(|s| s.trim().to_string())
                .map_err(|_| {
                    LoadError::at(
                        Location::cell(
                            1,
                            Column {
                                index: k,
                                name: None,
                            },
                        ),
                        Problem::InvalidUtf8,
                    )
                })
        })
        .collect()
}

/// The 1-based line on which a record starts. The csv reader records a position before
/// it consumes the line breaks that precede the record: after a `\r\n` the `\n` (and
/// any blank line) is still ahead, so its line was one too low on CRLF files (issue 25).
/// The breaks between the recorded byte and the record's first byte are counted here.
fn line_of(rec: &::csv::ByteRecord, bytes: &[u8]) -> u64 {
    rec.position().map_or(0, |p| {
        let skipped = usize::try_from(p.byte())
            .ok()
            .and_then(|start| bytes.get(start..))
            .map_or(0, |rest| {
                rest.iter()
                    .take_while(|&&b| b == b'\r' || b == b'\n')
                    .filter(|&&b| b == b'\n')
                    .count()
            });
        p.line() + skipped as u64
    })
}

/// The trimmed UTF-8 text of a field.
fn field_text(field: &[u8], line: u64, column: impl FnOnce() -> Column) -> Result<&str> {
    std::str::from_utf8(field)
        .map(str::trim)
        .map_err(|_| LoadError::at(Location::cell(line, column()), Problem::InvalidUtf8))
}

/// Parses CSV bytes into a dense dataset.
///
/// Every row must have as many fields as the first record; every field except the
/// target must be a finite number (surrounding spaces are allowed). Errors are
/// [`LoadError::Parse`] naming the 1-based line, the column (name and 0-based index) and
/// the offending value: empty input, no data rows, ragged rows, empty or non-numeric
/// fields, NaN / infinite values, labels outside the [`LabelMap`], a target that does
/// not exist, invalid UTF-8.
///
/// ```
/// use dp_models::io::{parse_csv, CsvOptions, Target};
/// use dp_models::Design;
///
/// let text = "size,rooms,price\n50,2,1.5\n80,3,2.25\n";
/// let data = parse_csv(text.as_bytes(), &CsvOptions::regression(Target::Name("price".into())))?;
/// assert_eq!(data.feature_names, ["size", "rooms"]);
/// assert_eq!(data.dataset.y(), &[1.5, 2.25]);
/// assert_eq!(data.dataset.x().row(1), &[80.0, 3.0]);
///
/// let err = parse_csv(b"size,price\n50,1.5\nfifty,2\n", &CsvOptions::default()).unwrap_err();
/// assert_eq!(err.to_string(), r#"line 3, column "size" (index 0): "fifty" is not a number"#);
/// # Ok::<(), dp_models::io::LoadError>(())
/// ```
pub fn parse_csv(bytes: &[u8], opts: &CsvOptions) -> Result<CsvData> {
    let (first, records) = records(bytes, opts.delimiter)?;
    let n_cols = first.len();
    let header = if opts.header {
        Some(header_names(&first)?)
    } else {
        None
    };
    if n_cols < 2 {
        return Err(LoadError::on_line(
            1,
            Problem::TooFewColumns { found: n_cols },
        ));
    }
    let column = |k: usize| Column {
        index: k,
        name: header.as_ref().map(|h| h[k].clone()),
    };
    let target = match &opts.target {
        Target::Name(name) => {
            let Some(names) = &header else {
                return Err(LoadError::whole(Problem::TargetNeedsHeader {
                    name: name.clone(),
                }));
            };
            names.iter().position(|c| c == name.trim()).ok_or_else(|| {
                LoadError::on_line(
                    1,
                    Problem::TargetNotFound {
                        name: name.clone(),
                        columns: names.clone(),
                    },
                )
            })?
        }
        Target::Index(k) => {
            if *k >= n_cols {
                return Err(LoadError::whole(Problem::TargetOutOfRange {
                    index: *k,
                    n_columns: n_cols,
                }));
            }
            *k
        }
        Target::Last => n_cols - 1,
    };

    let p = n_cols - 1;
    let mut values: Vec<f64> = Vec::new();
    let mut labels: Vec<f64> = Vec::new();
    let mut handle = |rec: &::csv::ByteRecord, line: u64| -> Result<()> {
        if rec.len() != n_cols {
            return Err(LoadError::on_line(
                line,
                Problem::Ragged {
                    found: rec.len(),
                    expected: n_cols,
                },
            ));
        }
        for (k, field) in rec.iter().enumerate() {
            let text = field_text(field, line, || column(k))?;
            if k == target {
                labels.push(parse_label(text, &opts.labels, line, || column(k))?);
            } else {
                values.push(parse_number(text, line, || column(k))?);
            }
        }
        Ok(())
    };
    if header.is_none() {
        handle(&first, line_of(&first, bytes).max(1))?;
    }
    for rec in records {
        let rec = rec.map_err(|e| csv_error(&e))?;
        let line = line_of(&rec, bytes);
        handle(&rec, line)?;
    }
    if labels.is_empty() {
        return Err(LoadError::whole(Problem::NoDataRows));
    }
    let n = labels.len();
    let x = DenseDesign::from_row_major(n, p, &values)?;
    let dataset = Dataset::new(x, labels)?;
    let mut names = header.unwrap_or_else(|| (1..=n_cols).map(|k| format!("column{k}")).collect());
    let target_name = names.remove(target);
    Ok(CsvData {
        dataset,
        feature_names: names,
        target_name,
    })
}

/// Reads new data for a fitted model: a comma-separated file with a header that holds
/// the model's feature columns, by name, in any order (they are put in
/// `feature_names` order), and optionally the target column.
///
/// Returns the design and, when `target` is given and the file has that column, the
/// labels (converted with `labels`). A feature column the file lacks, a column that is
/// neither a feature nor the target, and a repeated column name are errors that name
/// them; values follow the rules of [`parse_csv`]. Errors name the file.
pub fn read_csv_for_prediction(
    path: impl AsRef<Path>,
    feature_names: &[String],
    target: Option<&str>,
    labels: &LabelMap,
) -> Result<(DenseDesign, Option<Vec<f64>>)> {
    let path = path.as_ref();
    let bytes = read_file(path)?;
    parse_csv_for_prediction(&bytes, feature_names, target, labels).map_err(|e| e.in_file(path))
}

/// [`read_csv_for_prediction`] on bytes in memory.
///
/// ```
/// use dp_models::io::{parse_csv_for_prediction, LabelMap};
/// use dp_models::Design;
///
/// let features = vec!["a".to_string(), "b".to_string()];
/// // Columns in another order, with the label column: both come back in model order.
/// let (x, y) = parse_csv_for_prediction(b"b,y,a\n2,yes,1\n4,no,3\n", &features, Some("y"),
///     &LabelMap::Binary { positive: "yes".into(), negative: "no".into() })?;
/// assert_eq!(x.row(0), &[1.0, 2.0]);
/// assert_eq!(y, Some(vec![1.0, -1.0]));
/// // Without the label column: no labels.
/// let (x, y) = parse_csv_for_prediction(b"a,b\n1,2\n", &features, Some("y"), &LabelMap::Numeric)?;
/// assert_eq!((x.n_samples(), y), (1, None));
/// // A column the model does not know is an error naming it.
/// let e = parse_csv_for_prediction(b"a,b,c\n1,2,3\n", &features, None, &LabelMap::Numeric)
///     .unwrap_err();
/// assert!(e.to_string().contains(r#"unexpected column(s) "c""#), "{e}");
/// # Ok::<(), dp_models::io::LoadError>(())
/// ```
pub fn parse_csv_for_prediction(
    bytes: &[u8],
    feature_names: &[String],
    target: Option<&str>,
    labels: &LabelMap,
) -> Result<(DenseDesign, Option<Vec<f64>>)> {
    if feature_names.is_empty() {
        return Err(LoadError::InvalidOption {
            name: "feature_names",
            value: "[]".into(),
            expected: "the model's feature column names (at least one)".into(),
        });
    }
    let (first, records) = records(bytes, b',')?;
    let names = header_names(&first)?;
    for (k, name) in names.iter().enumerate() {
        if names[..k].contains(name) {
            return Err(LoadError::at(
                Location::cell(
                    1,
                    Column {
                        index: k,
                        name: Some(name.clone()),
                    },
                ),
                Problem::DuplicateColumn { name: name.clone() },
            ));
        }
    }
    let expected: Vec<String> = feature_names.iter().map(|f| f.trim().to_string()).collect();
    let target = target.map(str::trim);
    if let Some(t) = target {
        if expected.iter().any(|f| f == t) {
            return Err(LoadError::InvalidOption {
                name: "target",
                value: format!("{t:?}"),
                expected: "the label column cannot also be a feature column of the model".into(),
            });
        }
    }
    let mut positions = Vec::with_capacity(expected.len());
    let mut missing = Vec::new();
    for f in &expected {
        match names.iter().position(|c| c == f) {
            Some(k) => positions.push(k),
            None => missing.push(f.clone()),
        }
    }
    if !missing.is_empty() {
        return Err(LoadError::on_line(
            1,
            Problem::MissingColumns {
                missing,
                expected: expected.clone(),
            },
        ));
    }
    let target_pos = target.and_then(|t| names.iter().position(|c| c == t));
    let unexpected: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|&(k, _)| !positions.contains(&k) && Some(k) != target_pos)
        .map(|(_, c)| c.clone())
        .collect();
    if !unexpected.is_empty() {
        return Err(LoadError::on_line(
            1,
            Problem::UnexpectedColumns {
                unexpected,
                expected,
                target: target.map(str::to_string),
            },
        ));
    }
    let n_cols = names.len();
    let column = |k: usize| Column {
        index: k,
        name: Some(names[k].clone()),
    };
    let p = positions.len();
    let mut values = Vec::new();
    let mut y = Vec::new();
    for rec in records {
        let rec = rec.map_err(|e| csv_error(&e))?;
        let line = line_of(&rec, bytes);
        if rec.len() != n_cols {
            return Err(LoadError::on_line(
                line,
                Problem::Ragged {
                    found: rec.len(),
                    expected: n_cols,
                },
            ));
        }
        for &k in &positions {
            let text = field_text(&rec[k], line, || column(k))?;
            values.push(parse_number(text, line, || column(k))?);
        }
        if let Some(k) = target_pos {
            let text = field_text(&rec[k], line, || column(k))?;
            y.push(parse_label(text, labels, line, || column(k))?);
        }
    }
    if values.is_empty() {
        return Err(LoadError::whole(Problem::NoDataRows));
    }
    let n = values.len() / p;
    let x = DenseDesign::from_row_major(n, p, &values)?;
    Ok((x, target_pos.map(|_| y)))
}

fn csv_error(e: &::csv::Error) -> LoadError {
    let problem = Problem::MalformedCsv {
        message: e.to_string(),
    };
    match e.position() {
        Some(pos) => LoadError::on_line(pos.line(), problem),
        None => LoadError::whole(problem),
    }
}

/// A feature value: a finite number.
fn parse_number(text: &str, line: u64, column: impl FnOnce() -> Column) -> Result<f64> {
    let problem = match text.parse::<f64>() {
        Ok(v) if v.is_finite() => return Ok(v),
        Ok(_) => Problem::NonFinite { value: text.into() },
        Err(_) if text.is_empty() => Problem::EmptyField,
        Err(_) => Problem::NotANumber { value: text.into() },
    };
    Err(LoadError::at(Location::cell(line, column()), problem))
}

/// A label, converted by the [`LabelMap`].
fn parse_label(
    text: &str,
    map: &LabelMap,
    line: u64,
    column: impl FnOnce() -> Column,
) -> Result<f64> {
    let bad = |reason: String| {
        LoadError::at(
            Location::cell(line, column()),
            Problem::BadLabel {
                value: text.into(),
                reason,
            },
        )
    };
    match map {
        LabelMap::Numeric => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            Ok(_) => Err(bad("not finite (NaN or infinity)".into())),
            Err(_) if text.is_empty() => Err(bad("empty field (missing value)".into())),
            Err(_) => Err(bad(
                "not a number (for class names, give the positive and negative texts)".into(),
            )),
        },
        LabelMap::Binary { positive, negative } => {
            if text == positive.trim() {
                Ok(1.0)
            } else if text == negative.trim() {
                Ok(-1.0)
            } else {
                Err(bad(format!(
                    "expected {positive:?} (+1) or {negative:?} (-1)"
                )))
            }
        }
    }
}
