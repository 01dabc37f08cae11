//! UCI Adult (`adult.data`, byte-identical to UCI's file) with the DP-SCD paper's
//! encoding: `fnlwgt` and `education` dropped, missing values (`?`) of the categorical
//! columns imputed with the column's most frequent value in UCI's published training
//! file (a fixed constant, [`ADULT_IMPUTE`]), categoricals one-hot encoded with the
//! first (alphabetical) category dropped, label `>50K` = +1, `<=50K` = -1. Scaling
//! (standardising the integer columns, MaxAbs, row normalisation) is left to the
//! caller, which fits it on its training split.
//!
//! **Public schema.** The categories of each column are UCI's documented lists
//! ([`ADULT_CATEGORIES`], from `adult.names`), never the values seen in the text, and
//! the imputed value is a constant: the encoding is then a fixed map applied record by
//! record, so the design's width, its column names and every other record's encoding do
//! not depend on any one record. (Taking the categories from the data, as this loader
//! did before, let one record with a category no other record has add a column, which
//! changes `p`, the release plan and the model's shape; taking the imputed value from
//! the data let one record change the encoding of every record with a missing value.)
//! A value outside the documented list is an error naming the record and the column.

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

/// UCI's documented categories of each column of [`ADULT_CATEGORICAL`] (`adult.names`,
/// "Attribute Information"), in the order listed there; the encoding sorts them.
pub const ADULT_CATEGORIES: [&[&str]; 7] = [
    &[
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
    ],
    &[
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
    ],
    &[
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
    ],
    &[
        "Wife",
        "Own-child",
        "Husband",
        "Not-in-family",
        "Other-relative",
        "Unmarried",
    ],
    &[
        "White",
        "Asian-Pac-Islander",
        "Amer-Indian-Eskimo",
        "Other",
        "Black",
    ],
    &["Female", "Male"],
    &[
        "United-States",
        "Cambodia",
        "England",
        "Puerto-Rico",
        "Canada",
        "Germany",
        "Outlying-US(Guam-USVI-etc)",
        "India",
        "Japan",
        "Greece",
        "South",
        "China",
        "Cuba",
        "Iran",
        "Honduras",
        "Philippines",
        "Italy",
        "Poland",
        "Jamaica",
        "Vietnam",
        "Mexico",
        "Portugal",
        "Ireland",
        "France",
        "Dominican-Republic",
        "Laos",
        "Ecuador",
        "Taiwan",
        "Haiti",
        "Columbia",
        "Hungary",
        "Guatemala",
        "Nicaragua",
        "Scotland",
        "Thailand",
        "Yugoslavia",
        "El-Salvador",
        "Trinadad&Tobago",
        "Peru",
        "Hong",
        "Holand-Netherlands",
    ],
];

/// The value a missing (`?`) entry of each column of [`ADULT_CATEGORICAL`] takes: the
/// most frequent value of UCI's published `adult.data` (`Private`, `Prof-specialty`,
/// `United-States` for the three columns with missing values), fixed here as
/// constants so that the imputation is a per-record map that reads no other record.
pub const ADULT_IMPUTE: [&str; 7] = [
    "Private",
    "Married-civ-spouse",
    "Prof-specialty",
    "Husband",
    "White",
    "Male",
    "United-States",
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
    // The documented categories per column (sorted: the first is the dropped reference).
    let cats: Vec<Vec<&str>> = ADULT_CATEGORIES
        .iter()
        .map(|c| {
            let mut c = c.to_vec();
            c.sort_unstable();
            c
        })
        .collect();
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
            let v = if r[c] == "?" { ADULT_IMPUTE[j] } else { r[c] };
            let Some(pos) = cats[j].iter().position(|s| *s == v) else {
                bail!(
                    "adult record {}: {} '{v}' is not one of UCI's documented categories",
                    k + 1,
                    ADULT_CATEGORICAL[j]
                );
            };
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

    /// Two neighbouring files (replace-one: the last record differs) where only one
    /// holds a native-country that no other record has. Before, the categories came
    /// from the values seen, so that record added a column (p, the plan and the model's
    /// shape told the files apart); now both designs have UCI's documented columns.
    #[test]
    fn columns_are_the_documented_categories_not_the_values_seen() {
        let base = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K\n\
                    50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K\n\
                    38, ?, 215646, HS-grad, 9, Divorced, ?, Not-in-family, White, Male, 0, 0, 40, ?, <=50K\n";
        let a = format!("{base}53, Private, 234721, 11th, 7, Married-civ-spouse, Handlers-cleaners, Husband, Black, Male, 0, 0, 40, United-States, <=50K\n");
        let b = format!("{base}28, Private, 338409, Bachelors, 13, Married-civ-spouse, Prof-specialty, Wife, Black, Female, 0, 0, 40, Cuba, <=50K\n");
        let (da, na) = parse_adult(&a).unwrap();
        let (db, nb) = parse_adult(&b).unwrap();
        assert_eq!(na, nb);
        assert_eq!(da.n_features(), db.n_features());
        let documented: usize = ADULT_CATEGORIES.iter().map(|c| c.len() - 1).sum();
        assert_eq!(da.n_features(), ADULT_NUMERIC.len() + documented);
        // The record with missing values is imputed with the constants, whatever the
        // other records hold: identical in both designs.
        assert_eq!(da.x().row(2), db.x().row(2));
        let col = |name: &str| na.iter().position(|n| n == name).unwrap();
        assert_eq!(da.x().row(2)[col("workclass=Private")], 1.0);
        assert_eq!(da.x().row(2)[col("native-country=United-States")], 1.0);
        // A value outside the documented list is an error naming it.
        let c = format!("{base}28, Private, 338409, Bachelors, 13, Married-civ-spouse, Prof-specialty, Wife, Black, Female, 0, 0, 40, Atlantis, <=50K\n");
        let e = parse_adult(&c).unwrap_err().to_string();
        assert!(
            e.contains("record 4") && e.contains("native-country 'Atlantis'"),
            "{e}"
        );
    }

    #[test]
    fn malformed_lines_are_errors() {
        assert!(parse_adult("1, 2, 3").is_err());
        assert!(parse_adult("").is_err());
    }
}
