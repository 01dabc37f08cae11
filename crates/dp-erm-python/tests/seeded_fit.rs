//! The seeded fit that `test_rust_parity.py` repeats through Python: the backend's fit
//! equals, bit for bit, the same fit written directly against the library
//! (`DpCdParams::defaults_for` on the design scaled by the public bounds), and both
//! equal the recorded `tests/data/seeded_fit.json` (coefficient bits), which the Python
//! test compares its own fit with. Re-record with `DP_ERM_BLESS=1` after a deliberate
//! change of the solver.

use dp_erm_python::backend::{self, Algorithm, Features, FitSpec, LossName, PenaltyName};
use dp_models::{Dataset, DenseDesign, Logistic, L2};
use dp_optim::auto::PublicBounds;
use dp_optim::{DpCdParams, Solver};
use std::path::PathBuf;

const SEED: u64 = 7;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// breast_cancer.csv (embedded in dp-bench): 569 rows, 30 features, label `diagnosis`.
fn breast_cancer() -> (Vec<f64>, Vec<f64>, usize, usize) {
    let text =
        std::fs::read_to_string(manifest().join("../dp-bench/data/breast_cancer.csv")).unwrap();
    let mut lines = text.lines();
    let p = lines.next().unwrap().split(',').count() - 1;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let v: Vec<f64> = line.split(',').map(|s| s.trim().parse().unwrap()).collect();
        x.extend_from_slice(&v[..p]);
        y.push(if v[p] == 1.0 { 1.0 } else { -1.0 });
    }
    let n = y.len();
    (x, y, n, p)
}

/// What `DPLogisticRegression(epsilon=1, bounds_X=(min, max), random_state=7)` sends.
fn spec(x: &[f64], n: usize, p: usize) -> FitSpec {
    let lower: Vec<f64> = (0..p)
        .map(|j| (0..n).map(|i| x[i * p + j]).fold(f64::INFINITY, f64::min))
        .collect();
    let upper: Vec<f64> = (0..p)
        .map(|j| {
            (0..n)
                .map(|i| x[i * p + j])
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    FitSpec {
        loss: LossName::Logistic,
        penalty: PenaltyName::L2,
        alpha: 1.0 / (1.0 * n as f64),
        l1_ratio: 0.5,
        algorithm: Algorithm::DpCd,
        epsilon: 1.0,
        delta: 1e-5f64.min(1.0 / ((n * n) as f64)),
        fit_intercept: true,
        lower,
        upper,
        y_bounds: None,
        passes: None,
        step_scale: None,
        clip: None,
        batch_size: None,
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

    // The same fit written against the library directly.
    let mut cols = Vec::with_capacity(n * (p + 1));
    let (mut mid, mut half) = (vec![0.0; p], vec![0.0; p]);
    for j in 0..p {
        mid[j] = (spec.lower[j] + spec.upper[j]) / 2.0;
        half[j] = (spec.upper[j] - spec.lower[j]) / 2.0;
        for i in 0..n {
            cols.push(((x[i * p + j] - mid[j]) / half[j]).clamp(-1.0, 1.0));
        }
    }
    cols.extend(std::iter::repeat_n(1.0, n));
    let data = Dataset::new(DenseDesign::from_col_major(n, p + 1, &cols).unwrap(), y).unwrap();
    let mut weights = vec![1.0; p + 1];
    weights[p] = 0.0;
    let penalty = L2::new(spec.alpha).unwrap().with_weights(weights).unwrap();
    let bounds = PublicBounds::uniform(p + 1, 1.0);
    let (params, _) =
        DpCdParams::defaults_for(Logistic, penalty, 1.0, spec.delta, &bounds, n, p + 1).unwrap();
    let direct = params.build().unwrap().fit_seeded(&data, SEED).unwrap();
    assert_eq!(
        bits(&direct.model.coefficients),
        bits(&out.model.coefficients)
    );
    assert_eq!(direct.model.privacy, out.model.privacy);
    let w = &direct.model.coefficients;
    let mut intercept = w[p];
    let coef: Vec<f64> = (0..p)
        .map(|j| {
            let c = w[j] / half[j];
            intercept -= c * mid[j];
            c
        })
        .collect();
    assert_eq!(bits(&coef), bits(&out.coef));
    assert_eq!(intercept.to_bits(), out.intercept.to_bits());

    let recorded = serde_json::json!({
        "what": "DPLogisticRegression(epsilon=1.0, bounds_X=(per-column min, max), random_state=7) on crates/dp-bench/data/breast_cancer.csv, all rows; IEEE-754 bits of coef_ and intercept_",
        "coef_bits": bits(&out.coef),
        "intercept_bits": format!("{:016x}", out.intercept.to_bits()),
        "epsilon": out.model.guarantee().map(|g| g.epsilon),
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
