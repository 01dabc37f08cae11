//! The seeded fit that `test_rust_parity.py` repeats through Python: the backend's fit
//! equals, bit for bit, the same fit written directly against the library's pipeline
//! (`dp_erm::Pipeline`), and both
//! equal the recorded `tests/data/seeded_fit.json` (coefficient bits), which the Python
//! test compares its own fit with. Re-record with `DP_ERM_BLESS=1` after a deliberate
//! change of the solver.

use dp_erm::{Algorithm, FeatureBounds, LossKind, PenaltyKind, Pipeline, Task};
use dp_erm_python::backend::{self, Features, FitSpec};
use dp_models::{Dataset, DenseDesign};
use std::path::PathBuf;

const SEED: u64 = 7;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// breast_cancer.csv (embedded in dp-bench): 569 rows, 30 features, label `diagnosis` (benign / malignant).
fn breast_cancer() -> (Vec<f64>, Vec<f64>, usize, usize) {
    let text =
        std::fs::read_to_string(manifest().join("../dp-bench/data/breast_cancer.csv")).unwrap();
    let mut lines = text.lines();
    let p = lines.next().unwrap().split(',').count() - 1;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        x.extend(f[..p].iter().map(|s| s.parse::<f64>().unwrap()));
        // Python's classes_ are sorted: ["benign", "malignant"]; classes_[1] is +1.
        y.push(if f[p] == "malignant" { 1.0 } else { -1.0 });
    }
    let n = y.len();
    (x, y, n, p)
}

fn ranges(x: &[f64], n: usize, p: usize) -> Vec<(f64, f64)> {
    (0..p)
        .map(|j| {
            let col = (0..n).map(|i| x[i * p + j]);
            (
                col.clone().fold(f64::INFINITY, f64::min),
                col.fold(f64::NEG_INFINITY, f64::max),
            )
        })
        .collect()
}

/// What `DPLogisticRegression(epsilon=1, bounds_X=(min, max), random_state=7)` sends.
fn spec(x: &[f64], n: usize, p: usize) -> FitSpec {
    FitSpec {
        task: Task::Classification,
        loss: LossKind::Logistic,
        penalty: PenaltyKind::L2,
        alpha: 1.0 / (1.0 * n as f64),
        algorithm: Algorithm::DpCd,
        epsilon: 1.0,
        delta: 1e-5f64.min(1.0 / ((n * n) as f64)),
        fit_intercept: true,
        feature_ranges: Some(ranges(x, n, p)),
        feature_share: None,
        target_range: None,
        target_share: None,
        passes: None,
        step_scale: None,
        clip: None,
        batch_size: None,
        threads: None,
    }
}

fn bits(v: &[f64]) -> Vec<String> {
    v.iter().map(|c| format!("{:016x}", c.to_bits())).collect()
}

#[test]
fn the_backend_is_the_library_fit_and_matches_the_recorded_one() {
    let (x, y, n, p) = breast_cancer();
    let spec = spec(&x, n, p);
    let features = Features::Dense {
        values: &x,
        n,
        p,
        row_major: true,
    };
    let out = backend::fit(features, &y, &spec, Some(SEED)).unwrap();

    // The same fit written against the pipeline directly.
    let design = DenseDesign::from_row_major(n, p, &x).unwrap();
    let data = Dataset::new(design, y).unwrap();
    let direct = Pipeline::new(Task::Classification, Algorithm::DpCd)
        .loss(LossKind::Logistic)
        .penalty(PenaltyKind::L2, spec.alpha)
        .privacy(1.0, spec.delta)
        .feature_bounds(FeatureBounds::Ranges(ranges(&x, n, p)))
        .intercept(true)
        .seed(Some(SEED))
        .fit(&data)
        .unwrap();
    assert_eq!(
        bits(&direct.model.coefficients),
        bits(&out.model.coefficients)
    );
    assert_eq!(direct.model, out.model);
    let intercept = out.model.intercept.unwrap();

    let recorded = serde_json::json!({
        "what": "DPLogisticRegression(epsilon=1.0, bounds_X=(per-column min, max), random_state=7) on crates/dp-bench/data/breast_cancer.csv, all rows; IEEE-754 bits of coef_ and intercept_",
        "coef_bits": bits(&out.model.coefficients),
        "intercept_bits": format!("{:016x}", intercept.to_bits()),
        "epsilon": out.model.privacy.as_ref().map(|g| g.epsilon),
    });
    let path = manifest().join("tests/data/seeded_fit.json");
    if std::env::var_os("DP_ERM_BLESS").is_some() {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&recorded).unwrap() + "\n",
        )
        .unwrap();
    }
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (record it with DP_ERM_BLESS=1)", path.display())),
    )
    .unwrap();
    assert_eq!(file["coef_bits"], recorded["coef_bits"]);
    assert_eq!(file["intercept_bits"], recorded["intercept_bits"]);
}

/// A scipy sparse matrix reaches the pipeline as a sparse design, read from its CSC
/// buffers (int32 or int64 indices): the backend's fit is the pipeline's fit on
/// `SparseDesign` bit for bit, and never a densified copy.
#[test]
fn a_sparse_backend_fit_is_the_library_sparse_fit() {
    use dp_erm_python::backend::Indices;
    use dp_models::{Design, SparseDesign};
    let (mut x, y, n, p) = breast_cancer();
    // Half of the values to 0 (below each column's median), as a sparse matrix holds.
    for j in 0..p {
        let mut col: Vec<f64> = (0..n).map(|i| x[i * p + j]).collect();
        col.sort_by(f64::total_cmp);
        let median = col[n / 2];
        for i in 0..n {
            if x[i * p + j] < median {
                x[i * p + j] = 0.0;
            }
        }
    }
    let sparse = SparseDesign::from_dense(&DenseDesign::from_row_major(n, p, &x).unwrap());
    // CSC buffers as scipy holds them.
    let (mut data, mut idx, mut ptr) = (Vec::new(), Vec::new(), vec![0i64]);
    for j in 0..p {
        sparse.for_each_in_col(j, |i, v| {
            data.push(v);
            idx.push(i as i64);
        });
        ptr.push(data.len() as i64);
    }
    let (idx32, ptr32): (Vec<i32>, Vec<i32>) = (
        idx.iter().map(|&v| v as i32).collect(),
        ptr.iter().map(|&v| v as i32).collect(),
    );
    let mut spec = spec(&x, n, p);
    // Ranges that hold 0, as a sparse design needs.
    spec.feature_ranges = Some(
        ranges(&x, n, p)
            .into_iter()
            .map(|(lo, hi)| (lo.min(0.0), hi.max(0.0)))
            .collect(),
    );
    let direct = dp_erm_python::backend::pipeline(&spec, n, Some(SEED))
        .fit(&Dataset::new(sparse, y.clone()).unwrap())
        .unwrap();
    for (indices, indptr) in [
        (Indices::I64(&idx), Indices::I64(&ptr)),
        (Indices::I32(&idx32), Indices::I32(&ptr32)),
    ] {
        let features = Features::SparseCsc {
            data: &data,
            indices,
            indptr,
            n,
            p,
        };
        let out = backend::fit(features, &y, &spec, Some(SEED)).unwrap();
        assert_eq!(direct.model, out.model);
    }
    // Private ranges are refused on sparse data, with the library's reason.
    spec.feature_ranges = None;
    let features = Features::SparseCsc {
        data: &data,
        indices: Indices::I64(&idx),
        indptr: Indices::I64(&ptr),
        n,
        p,
    };
    let err = backend::fit(features, &y, &spec, Some(SEED)).unwrap_err();
    assert!(
        err.0.contains("private feature ranges need dense data"),
        "{err}"
    );
}

/// A large fit with two threads (`n_jobs=2`; long enough columns for the paired sweep):
/// the C-ordered and the Fortran-ordered copies of the same array give the same bits,
/// and both equal the pipeline's own fit with `threads(2)` on the design built the
/// library's plain way (`from_row_major`: no tiled transpose, no deferred rows).
#[test]
fn a_two_thread_fit_is_the_same_from_either_layout_and_equals_the_pipeline_fit() {
    let (n, p) = (70_037, 3);
    assert_eq!(backend::default_threads(n), 2);
    // Deterministic pseudo-data (no RNG needed): a smooth mix of sines.
    let x: Vec<f64> = (0..n * p)
        .map(|k| ((k as f64) * 0.618_034).sin() * 1.5)
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if x[i * p] + 0.5 * x[i * p + 1] > 0.1 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let mut x_f = vec![0.0; n * p];
    for i in 0..n {
        for j in 0..p {
            x_f[j * n + i] = x[i * p + j];
        }
    }
    let mut spec = spec(&x, n, p);
    spec.feature_ranges = Some(vec![(-1.0, 1.0); p]); // values beyond are clipped
    spec.passes = Some(3);
    spec.threads = Some(2);
    let c = backend::fit(
        Features::Dense {
            values: &x,
            n,
            p,
            row_major: true,
        },
        &y,
        &spec,
        Some(SEED),
    )
    .unwrap();
    let f = backend::fit(
        Features::Dense {
            values: &x_f,
            n,
            p,
            row_major: false,
        },
        &y,
        &spec,
        Some(SEED),
    )
    .unwrap();
    assert_eq!(bits(&c.model.coefficients), bits(&f.model.coefficients));
    assert_eq!(c.model, f.model);

    let data = Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y.clone()).unwrap();
    let direct = Pipeline::new(Task::Classification, Algorithm::DpCd)
        .loss(LossKind::Logistic)
        .penalty(PenaltyKind::L2, spec.alpha)
        .privacy(1.0, spec.delta)
        .feature_bounds(FeatureBounds::Ranges(vec![(-1.0, 1.0); p]))
        .intercept(true)
        .passes(3)
        .threads(2)
        .seed(Some(SEED))
        .fit(&data)
        .unwrap();
    assert_eq!(
        bits(&direct.model.coefficients),
        bits(&c.model.coefficients)
    );
    assert_eq!(direct.model, c.model);
    // The default at this n is the same two pieces (the same bits), and the count is
    // honoured: one thread gives other last bits (the sums are added in another order).
    spec.threads = None;
    let default = backend::fit(
        Features::Dense {
            values: &x,
            n,
            p,
            row_major: true,
        },
        &y,
        &spec,
        Some(SEED),
    )
    .unwrap();
    assert_eq!(
        bits(&default.model.coefficients),
        bits(&c.model.coefficients)
    );
    spec.threads = Some(1);
    let one = backend::fit(
        Features::Dense {
            values: &x,
            n,
            p,
            row_major: true,
        },
        &y,
        &spec,
        Some(SEED),
    )
    .unwrap();
    assert_ne!(bits(&one.model.coefficients), bits(&c.model.coefficients));
}
