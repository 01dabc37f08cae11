//! Datasets: the real data embedded in the crate, and loaders for CSV and LIBSVM files.
//!
//! The embedded files live in `crates/dp-bench/data/` (provenance, licences and sha256
//! checksums in `crates/dp-bench/data/SOURCES.md`) and are compiled into the binary with
//! `include_str!`, so nothing is read from disk at run time.
//!
//! | function | n x p | label | source |
//! |---|---|---|---|
//! | [`california()`] | 20,640 x 8 | `MedHouseVal` (median house value, units of $100,000), regression | scikit-learn's `fetch_california_housing` layout |
//! | [`electricity()`] | 45,312 x 8 | `class`: `UP` = +1, `DOWN` = -1 | Elec2 normalised (OpenML 151), all 8 features |
//! | [`heart_scale()`] | 270 x 13 | +1 / -1 | LIBSVM's `heart_scale` (Statlog heart, scaled to \[-1, 1\]) |
//! | [`adult()`] | 32,561 x 5 numeric + one-hot | `>50K` = +1 | UCI Adult training file, encoded as in the DP-SCD paper |
//! | [`website_phishing()`] | 1,250 x 9 | `is_phishing` 1 = +1 | UCI Website Phishing, a stand-in for LIBSVM `phishing` |
//!
//! Every function returns the **raw** features as shipped, without an intercept column;
//! standardisation (the DP-CD paper's "balanced" variants) is left to
//! `dp_models::preprocess`. See `docs/datasets.md` for what each paper does with them.
//!
//! Loaders: the CSV, LIBSVM and format-dispatch loaders live in [`dp_models::io`] and
//! are re-exported here ([`load_csv`], [`load_libsvm`] / [`parse_libsvm`], [`load`],
//! ...; their errors are the typed [`LoadError`], one line naming the file, line,
//! column and value). [`parse_csv`] and [`load_csv_named`] wrap theirs to return a
//! [`NamedDataset`]. [`load_nips2003_dense`] / [`load_nips2003_sparse`] read the NIPS
//! 2003 challenge files of madelon and dorothea (with [`drop_empty_columns`]). Malformed
//! input is an error whose message names the line and the reason; the loaders never
//! panic.

mod adult;
mod nips2003;
pub mod scaling;

pub use adult::{
    adult, one_hot_groups, parse_adult, ADULT_CATEGORICAL, ADULT_CATEGORIES, ADULT_IMPUTE,
    ADULT_NUMERIC,
};
pub use scaling::{adult_train_test, scale_and_normalise_rows};

pub use dp_models::io::{
    load, load_csv, load_csv_data, load_libsvm, parse_libsvm, parse_libsvm_dense, CsvData,
    CsvOptions, FeatureCount, Format, LabelMap, LoadError, Loaded, Target, MAX_LIBSVM_FEATURES,
};
pub use nips2003::{
    drop_empty_columns, load_nips2003_dense, load_nips2003_sparse, parse_nips2003_dense,
    parse_nips2003_labels, parse_nips2003_sparse,
};

use std::path::Path;

use anyhow::{Context, Result};
use dp_models::{Dataset, DenseDesign, Design};

/// Parses CSV bytes into a dense dataset named `"csv"`: [`dp_models::io::parse_csv`]
/// (see it for the rules and the errors) with the result as a [`NamedDataset`].
pub fn parse_csv(
    bytes: &[u8],
    opts: &CsvOptions,
) -> std::result::Result<NamedDataset<DenseDesign>, LoadError> {
    Ok(NamedDataset::from_csv(
        "csv",
        dp_models::io::parse_csv(bytes, opts)?,
    ))
}

/// [`load_csv`], keeping the column names; the dataset is named after the file stem.
pub fn load_csv_named(
    path: impl AsRef<Path>,
    opts: &CsvOptions,
) -> std::result::Result<NamedDataset<DenseDesign>, LoadError> {
    let path = path.as_ref();
    let data = dp_models::io::load_csv_data(path, opts)?;
    let name = path
        .file_stem()
        .map_or_else(|| "csv".into(), |s| s.to_string_lossy().into_owned());
    Ok(NamedDataset::from_csv(name, data))
}

/// A dataset together with its name, feature names and whether it is a stand-in.
#[derive(Debug, Clone)]
pub struct NamedDataset<D: Design> {
    /// Short identifier used in reports (e.g. `"california"`, `"dorothea-like"`).
    pub name: String,
    /// The design and labels.
    pub dataset: Dataset<D>,
    /// One name per column of the design.
    pub feature_names: Vec<String>,
    /// Name of the label column.
    pub target_name: String,
    /// `true` when this is a synthetic stand-in for a dataset the project cannot ship
    /// (its name then ends in `-like`); `false` for real data and for the papers' own
    /// synthetic problems.
    pub stand_in: bool,
}

impl NamedDataset<DenseDesign> {
    /// Real (not stand-in) data read from a CSV, named `name`.
    pub fn from_csv(name: impl Into<String>, data: CsvData) -> Self {
        Self {
            name: name.into(),
            dataset: data.dataset,
            feature_names: data.feature_names,
            target_name: data.target_name,
            stand_in: false,
        }
    }
}

/// The 8 California housing features, in column order.
pub const CALIFORNIA_FEATURES: [&str; 8] = [
    "MedInc",
    "HouseAge",
    "AveRooms",
    "AveBedrms",
    "Population",
    "AveOccup",
    "Latitude",
    "Longitude",
];

/// The California housing label column (median house value in units of $100,000).
pub const CALIFORNIA_TARGET: &str = "MedHouseVal";

/// The 8 Electricity (Elec2) features, in column order. `day` is 1..7, the others are
/// normalised to \[0, 1\].
pub const ELECTRICITY_FEATURES: [&str; 8] = [
    "date",
    "day",
    "period",
    "nswprice",
    "nswdemand",
    "vicprice",
    "vicdemand",
    "transfer",
];

/// The Electricity label column (`UP` / `DOWN`).
pub const ELECTRICITY_TARGET: &str = "class";

/// Number of features of `heart_scale`.
pub const HEART_SCALE_FEATURES: usize = 13;

const CALIFORNIA_CSV: &str = include_str!("../../data/california_housing.csv");
const ELECTRICITY_CSV: &str = include_str!("../../data/electricity.csv");
const HEART_SCALE_TXT: &str = include_str!("../../data/heart_scale");
const WEBSITE_PHISHING_CSV: &str = include_str!("../../data/website_phishing.csv");
const BREAST_CANCER_CSV: &str = include_str!("../../data/breast_cancer.csv");
const DIABETES_CSV: &str = include_str!("../../data/diabetes.csv");

/// The breast_cancer label column (`benign` / `malignant`).
pub const BREAST_CANCER_TARGET: &str = "diagnosis";

/// The diabetes target column (disease progression after one year, 25 to 346).
pub const DIABETES_TARGET: &str = "target";

/// Breast Cancer Wisconsin (Diagnostic; Wolberg et al. 1993) as scikit-learn ships it:
/// 569 x 30 **raw, unscaled** features (areas up to about 4,250), label `benign` = +1
/// (357 records), `malignant` = -1 (212). No intercept column.
pub fn breast_cancer() -> Result<NamedDataset<DenseDesign>> {
    let opts = CsvOptions::classification(
        Target::Name(BREAST_CANCER_TARGET.into()),
        "benign",
        "malignant",
    );
    let mut d = parse_csv(BREAST_CANCER_CSV.as_bytes(), &opts)
        .context("parsing the embedded breast_cancer file")?;
    d.name = "breast_cancer".into();
    Ok(d)
}

/// Diabetes (Efron et al. 2004) as scikit-learn ships it unscaled: 442 x 10 **raw**
/// features (`age`, `sex` in {1, 2}, `bmi`, `bp`, six serum measurements), target
/// `target` between 25 and 346. A regression problem; no intercept column.
pub fn diabetes() -> Result<NamedDataset<DenseDesign>> {
    let opts = CsvOptions::regression(Target::Name(DIABETES_TARGET.into()));
    let mut d =
        parse_csv(DIABETES_CSV.as_bytes(), &opts).context("parsing the embedded diabetes file")?;
    d.name = "diabetes".into();
    Ok(d)
}

/// UCI **Website Phishing** (Abdelhamid et al. 2014) as shipped by `creme`: 1,250 x 9,
/// features in \[0, 1\], label `is_phishing` 1 = +1 (548 records), 0 = -1. A
/// **stand-in** for LIBSVM's `phishing` (11,055 x 68) used by the DP-SCD paper, which
/// the project cannot ship; the label polarity of this copy is unverified (see
/// `crates/dp-bench/data/SOURCES.md`).
pub fn website_phishing() -> Result<Dataset<DenseDesign>> {
    let opts = CsvOptions::classification(Target::Name("is_phishing".into()), "1", "0");
    Ok(parse_csv(WEBSITE_PHISHING_CSV.as_bytes(), &opts)
        .context("parsing the embedded Website Phishing file")?
        .dataset)
}

/// California housing (Pace & Barry 1997), 20,640 x 8, raw features in the order of
/// [`CALIFORNIA_FEATURES`], label `MedHouseVal` (units of $100,000), no intercept.
pub fn california() -> Result<Dataset<DenseDesign>> {
    Ok(california_named()?.dataset)
}

/// [`california()`] with its name and feature names.
pub fn california_named() -> Result<NamedDataset<DenseDesign>> {
    let opts = CsvOptions::regression(Target::Name(CALIFORNIA_TARGET.into()));
    let mut d = parse_csv(CALIFORNIA_CSV.as_bytes(), &opts)
        .context("parsing the embedded California housing file")?;
    d.name = "california".into();
    Ok(d)
}

/// Electricity (Elec2, Harries 1999; normalised version of OpenML 151), 45,312 x 8, all
/// 8 features in the order of [`ELECTRICITY_FEATURES`], label `UP` = +1, `DOWN` = -1
/// (19,237 UP, 26,075 DOWN), for the logistic loss as in the DP-CD paper. No intercept.
pub fn electricity() -> Result<Dataset<DenseDesign>> {
    Ok(electricity_named()?.dataset)
}

/// [`electricity()`] with its name and feature names.
pub fn electricity_named() -> Result<NamedDataset<DenseDesign>> {
    let opts = CsvOptions::classification(Target::Name(ELECTRICITY_TARGET.into()), "UP", "DOWN");
    let mut d = parse_csv(ELECTRICITY_CSV.as_bytes(), &opts)
        .context("parsing the embedded Electricity file")?;
    d.name = "electricity".into();
    Ok(d)
}

/// LIBSVM's `heart_scale` (Statlog heart, features scaled to \[-1, 1\]), 270 x 13 as a
/// dense design (absent entries are 0), labels +1 / -1.
pub fn heart_scale() -> Result<Dataset<DenseDesign>> {
    dp_models::io::parse_libsvm_dense(
        HEART_SCALE_TXT.as_bytes(),
        dp_models::io::FeatureCount::Public(HEART_SCALE_FEATURES),
    )
    .context("parsing the embedded heart_scale file")
}

#[cfg(test)]
mod tests;
