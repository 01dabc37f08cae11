//! # dp-erm: one pipeline from raw data to a private linear model
//!
//! The facade of the workspace. It re-exports the layers ([`accounting`], [`models`],
//! [`optim`]) and holds **the** pipeline that every front end (the command line, the
//! Python package, the examples) calls:
//!
//! ```text
//! raw data -> declared or privately estimated bounds -> clipping and scaling -> split
//!          -> fit -> releasable model (scaling folded in: predict takes raw data) -> scores
//! ```
//!
//! Every private step is charged to one ledger before it is drawn, and the model's
//! guarantee composes all of them ([`pipeline`] states the relation, the steps and the
//! proof). What is computed from the data without privacy (clipping counts, held-out
//! scores) is in [`Diagnostics`], marked as such; bounds computed from the data without
//! privacy are refused unless the caller names [`FeatureBounds::NonPrivateFromData`] /
//! [`TargetBound::NonPrivateFromData`].
//!
//! ```
//! use dp_erm::models::io::{load_csv_data, CsvOptions, Target};
//! use dp_erm::{Algorithm, FeatureBounds, Pipeline, Task};
//!
//! // scikit-learn's breast_cancer, raw (unscaled) features, 569 rows x 30.
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../dp-bench/data/breast_cancer.csv");
//! let opts = CsvOptions::classification(Target::Name("diagnosis".into()), "benign", "malignant");
//! let data = load_csv_data(path, &opts)?.dataset;
//!
//! let report = Pipeline::new(Task::Classification, Algorithm::DpCd)
//!     .privacy(1.0, 1e-5)
//!     .feature_bounds(FeatureBounds::private()) // 20-50 % of epsilon by a public rule, charged
//!     .test_fraction(0.2)
//!     .seed(Some(7)) // reproducible; the seed is never in the model
//!     .fit(&data)?;
//!
//! let g = report.guarantee().expect("a private fit");
//! assert!(g.epsilon <= 1.0 && g.delta <= 1e-5);
//! assert!(g.preprocessing_epsilon > 0.0); // the bounds were charged
//! // The model predicts on raw rows, in the user's units.
//! let labels = report.model.predict(data.x())?;
//! assert_eq!(labels.len(), 569);
//! // It serialises without any seed.
//! let json = serde_json::to_string(&report.model).unwrap();
//! assert!(!json.contains("seed"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bounds;
pub mod design;
pub mod error;
pub mod pipeline;

pub use dp_accounting as accounting;
pub use dp_models as models;
pub use dp_optim as optim;

pub use bounds::{BoundGrid, RangeRule};
pub use design::PipelineDesign;
pub use dp_models::choice::{AnyDualLoss, AnyLoss, AnyPenalty, LossKind, PenaltyKind};
pub use error::{PipelineError, Result};
pub use pipeline::{
    feature_range_rule, feature_share_rule, Algorithm, BoundSource, Chosen, Diagnostics,
    FeatureBounds, FitReport, Pipeline, PipelineGuarantee, PipelineModel, TargetBound, Task,
    DEFAULT_FEATURE_SHARE, DEFAULT_TARGET_SHARE, MAX_FEATURE_SHARE, MAX_ONE_RELEASE_SHARE,
};
