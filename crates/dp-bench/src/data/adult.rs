//! UCI Adult (`adult.data`, byte-identical to UCI's file) with the DP-SCD paper's
//! encoding: `fnlwgt` and `education` dropped, missing values (`?`) of the categorical
//! columns imputed with the column's most frequent value, categoricals one-hot encoded
//! with the first (alphabetical) category dropped, label `>50K` = +1, `<=50K` = -1.
//! Scaling (standardising the integer columns, MaxAbs, row normalisation) is left to
//! the caller, which fits it on its training split.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use dp_models::{Dataset, DenseDesign};

const ADULT_DATA: &str = include_str!("../../data/adult.data");

/// The integer columns kept (`fnlwgt` dropped), in output order: they are the first
/// five columns of [`adult()`]'s design.
pub const ADULT_NUMERIC: [&str; 5] = [
    "age",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
];

/// The categorical columns kept (`education` dropped, it duplicates `education-num`).
pub const ADULT_CATEGORICAL: [&str; 7] = [
    "workclass",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
];

// Column indices of the 15 fields of a line.
const NUMERIC_IDX: [usize; 5] = [0, 4, 10, 11, 12];
const CATEGORICAL_IDX: [usize; 7] = [1, 5, 6, 7, 8, 9, 13];
const LABEL_IDX: usize = 14;

/// The encoded Adult training file: `n = 32,561` records, the five integer columns of
/// [`ADULT_NUMERIC`] (raw) followed by the one-hot dummies, with feature names.
pub fn adult() -> Result<(Dataset<DenseDesign>, Vec<String>)> {
    parse_adult(ADULT_DATA)
}

/// The one-hot groups of [`adult()`]'s design: for each column of
/// [`ADULT_CATEGORICAL`], the indices of its indicator columns (named `column=value`).
/// A record is in one category of each, so at most one indicator of a group is
/// non-zero (none for the dropped reference category); with the five numeric columns
/// a record has at most 12 non-zero features, whatever the scaling (which maps zeros
/// to zeros for the indicators). The structure comes from the encoding, not from the
/// values, so it is a public bound ([`dp_optim::RowSupport::one_hot`]).
pub fn one_hot_groups(names: &[String]) -> Vec<Vec<usize>> {
    ADULT_CATEGORICAL
        .iter()
        .map(|c| {
            let prefix = format!("{c}=");
            names
                .iter()
                .enumerate()
                .filter(|(_, n)| n.starts_with(&prefix))
                .map(|(j, _)| j)
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect()
}

/// Parses text in the layout of UCI's `adult.data` (see [`adult()`]).
pub fn parse_adult(text: &str) -> Result<(Dataset<DenseDesign>, Vec<String>)> {
    let mut rows: Vec<Vec<&str>> = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 15 {
            bail!(
                "adult line {}: {} fields, expected 15: {line}",
                k + 1,
                fields.len()
            );
        }
        rows.push(fields);
    }
    if rows.is_empty() {
        bail!("adult: no records");
    }
    // Categories per column (sorted), and the most frequent value for imputation.
    let mut cats: Vec<Vec<String>> = Vec::new();
    let mut modes: Vec<String> = Vec::new();
    for &c in &CATEGORICAL_IDX {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &rows {
            if r[c] != "?" {
                *counts.entry(r[c]).or_default() += 1;
            }
        }
        let mode = counts
            .iter()
            .max_by_key(|(_, &n)| n)
            .map(|(v, _)| (*v).to_owned())
            .with_context(|| format!("adult: column {c} has only missing values"))?;
        cats.push(counts.keys().map(|s| (*s).to_owned()).collect());
        modes.push(mode);
    }
    let mut names: Vec<String> = ADULT_NUMERIC.iter().map(|s| (*s).to_owned()).collect();
    for (j, c) in cats.iter().enumerate() {
        // drop_first: the first category is the reference level.
        for v in c.iter().skip(1) {
            names.push(format!("{}={v}", ADULT_CATEGORICAL[j]));
        }
    }
    let p = names.len();
    let mut x = Vec::with_capacity(rows.len() * p);
    let mut y = Vec::with_capacity(rows.len());
    for (k, r) in rows.iter().enumerate() {
        for &c in &NUMERIC_IDX {
            let v: f64 = r[c]
                .parse()
                .with_context(|| format!("adult record {}: '{}' is not a number", k + 1, r[c]))?;
            x.push(v);
        }
        for (j, &c) in CATEGORICAL_IDX.iter().enumerate() {
            let v = if r[c] == "?" { modes[j].as_str() } else { r[c] };
            let pos = cats[j].iter().position(|s| s == v).unwrap_or(0);
            for m in 1..cats[j].len() {
                x.push(if m == pos { 1.0 } else { 0.0 });
            }
        }
        y.push(match r[LABEL_IDX] {
            ">50K" | ">50K." => 1.0,
            "<=50K" | "<=50K." => -1.0,
            other => bail!("adult record {}: unknown label '{other}'", k + 1),
        });
    }
    let design = DenseDesign::from_row_major(rows.len(), p, &x)?;
    Ok((Dataset::new(design, y)?, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_adult_has_the_uci_shape() {
        let (d, names) = adult().unwrap();
        assert_eq!(d.n_samples(), 32_561);
        assert_eq!(d.n_features(), names.len());
        // 7,841 records of the UCI file earn more than 50K.
        assert_eq!(d.y().iter().filter(|&&v| v > 0.0).count(), 7_841);
        // The first record: age 39, education-num 13, capital-gain 2174.
        assert_eq!(&d.x().row(0)[..3], &[39.0, 13.0, 2174.0]);
        // One dummy per category but the first; every record has at most 7 ones.
        assert!(d.x().row(0)[5..].iter().sum::<f64>() <= 7.0);
    }

    #[test]
    fn one_hot_groups_cover_the_indicators_and_bound_every_record() {
        let (d, names) = adult().unwrap();
        let groups = one_hot_groups(&names);
        assert_eq!(groups.len(), ADULT_CATEGORICAL.len());
        let grouped: usize = groups.iter().map(Vec::len).sum();
        assert_eq!(grouped + ADULT_NUMERIC.len(), d.n_features());
        let bound = dp_optim::RowSupport::one_hot(groups);
        assert_eq!(bound.releases_per_pass(d.n_features()).unwrap(), 12);
        bound.validate(d.x()).unwrap();
    }

    #[test]
    fn malformed_lines_are_errors() {
        assert!(parse_adult("1, 2, 3").is_err());
        assert!(parse_adult("").is_err());
    }
}
