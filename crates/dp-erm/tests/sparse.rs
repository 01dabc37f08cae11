//! Sparse designs, row normalisation and a declared support bound through the one
//! pipeline (`Pipeline::fit` on a `SparseDesign`, `normalize_rows`, `max_nonzeros`).

use dp_erm::models::{Dataset, DenseDesign, Design, SparseDesign};
use dp_erm::optim::SolverPlan;
use dp_erm::{Algorithm, FeatureBounds, Pipeline, PipelineError, Task};

/// `n x p` classification data with about half of the values 0 (row-major values, labels).
fn half_zeros(n: usize, p: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n * p];
    let mut y = vec![0.0; n];
    for i in 0..n {
        let mut z = 0.0;
        for j in 0..p {
            let v = (((i * 7919 + j * 104_729) % 1000) as f64 / 500.0) - 1.0;
            let v = if v.abs() < 0.5 { 0.0 } else { v };
            x[i * p + j] = v;
            z += v * if j % 2 == 0 { 1.0 } else { -0.5 };
        }
        y[i] = if z > 0.0 { 1.0 } else { -1.0 };
    }
    (x, y)
}

fn both(n: usize, p: usize) -> (Dataset<DenseDesign>, Dataset<SparseDesign>) {
    let (x, y) = half_zeros(n, p);
    let dense = DenseDesign::from_row_major(n, p, &x).unwrap();
    let sparse = SparseDesign::from_dense(&dense);
    (
        Dataset::new(dense, y.clone()).unwrap(),
        Dataset::new(sparse, y).unwrap(),
    )
}

fn dp_cd() -> Pipeline {
    Pipeline::new(Task::Classification, Algorithm::DpCd)
        .privacy(1.0, 1e-6)
        .feature_bounds(FeatureBounds::Uniform(1.0))
        .seed(Some(7))
}

/// The same seeded fit on the dense and the sparse layout of one matrix: the same plan,
/// the same guarantee, and coefficients equal up to rounding. Not bit for bit: the dense
/// column kernels sum in four (SIMD) partial sums, the sparse ones in one sequential
/// sum over the stored entries, so the last bits of each gradient differ.
#[test]
fn a_sparse_fit_is_the_dense_fit_up_to_rounding() {
    let (dense, sparse) = both(2000, 6);
    for intercept in [false, true] {
        let pipe = dp_cd().intercept(intercept).test_fraction(0.2);
        let a = pipe.fit(&dense).unwrap();
        let b = pipe.fit(&sparse).unwrap();
        let (ga, gb) = (a.guarantee().unwrap(), b.guarantee().unwrap());
        assert_eq!(ga.epsilon, gb.epsilon);
        assert_eq!(ga.ledger, gb.ledger);
        assert_eq!(ga.plan, gb.plan);
        assert!(ga.plan.is_some());
        assert_eq!(a.model.intercept.is_some(), intercept);
        for (u, v) in a.model.coefficients.iter().zip(&b.model.coefficients) {
            assert!((u - v).abs() <= 1e-9 * (1.0 + u.abs()), "{u} vs {v}");
        }
        assert_eq!(a.diagnostics.scores.len(), b.diagnostics.scores.len());
        // Seeded sparse fits reproduce bit for bit.
        let c = pipe.fit(&sparse).unwrap();
        assert_eq!(b.model, c.model);
    }
}

/// A design of 60,000 x 60,000 (28.8 GB if it were dense, more than this machine
/// holds) with three non-zeros per row fits and predicts: the pipeline never densifies.
#[test]
fn a_huge_sparse_design_fits_without_densifying() {
    let (n, p) = (60_000usize, 60_000usize);
    let mut t = Vec::with_capacity(3 * n);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let a = ((i * 7919) % 1000) as f64 / 500.0 - 1.0;
        t.push((i, i % p, a));
        t.push((i, (i * 31 + 7) % p, 0.5));
        t.push((i, p - 1, if i % 3 == 0 { 1.0 } else { -1.0 }));
        y.push(if a + 0.3 * if i % 3 == 0 { 1.0 } else { -1.0 } > 0.0 {
            1.0
        } else {
            -1.0
        });
    }
    let data = Dataset::new(SparseDesign::from_triplets(n, p, &t).unwrap(), y).unwrap();
    let r = dp_cd().passes(1).test_fraction(0.1).fit(&data).unwrap();
    assert_eq!(r.model.coefficients.len(), p);
    assert!(r.guarantee().unwrap().epsilon <= 1.0);
    let z = r.model.predict(data.x()).unwrap();
    assert_eq!(z.len(), n);
}

/// Private ranges are refused on sparse data, naming why; declared ranges must hold 0.
#[test]
fn sparse_input_refuses_what_would_fill_its_zeros() {
    let (_, sparse) = both(200, 3);
    let err = dp_cd()
        .feature_bounds(FeatureBounds::private())
        .fit(&sparse)
        .unwrap_err();
    assert!(matches!(err, PipelineError::Unsupported(_)), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("private feature ranges need dense data") && msg.contains("median 0"),
        "{msg}"
    );
    let err = dp_cd()
        .feature_bounds(FeatureBounds::Ranges(vec![
            (-1.0, 1.0),
            (0.5, 2.0),
            (-1.0, 1.0),
        ]))
        .fit(&sparse)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("must contain 0") && err.contains("feature 1"),
        "{err}"
    );
    // Non-private ranges computed from the data hold 0, and the fit keeps the pattern.
    let r = Pipeline::new(Task::Classification, Algorithm::Cd)
        .feature_bounds(FeatureBounds::NonPrivateFromData)
        .seed(Some(1))
        .fit(&sparse)
        .unwrap();
    assert!(r
        .model
        .feature_ranges
        .iter()
        .all(|&(lo, hi)| lo <= 0.0 && hi >= 0.0));
}

/// A model whose ranges exclude 0 (fitted on dense data) predicts the same on the dense
/// and the sparse layout of new rows: an absent value is 0, clipped to the range.
#[test]
fn a_dense_model_predicts_on_sparse_rows() {
    let (dense, sparse) = both(500, 3);
    let r = dp_cd()
        .feature_bounds(FeatureBounds::Ranges(vec![
            (0.25, 1.0),
            (-1.0, -0.1),
            (-1.0, 1.0),
        ]))
        .fit(&dense)
        .unwrap();
    let a = r.model.decision_function(dense.x()).unwrap();
    let b = r.model.decision_function(sparse.x()).unwrap();
    for (u, v) in a.iter().zip(&b) {
        assert!((u - v).abs() <= 1e-12 * (1.0 + u.abs()), "{u} vs {v}");
    }
}

/// `normalize_rows`: the fit sees unit rows (no bound needed: every value is then in
/// [-1, 1]), the model records it, and `predict` normalises too, so scaling a raw row
/// does not change its prediction. Dense and sparse normalise to the same bits.
#[test]
fn normalised_rows_fit_and_predict_scale_free() {
    let (dense, sparse) = both(1000, 4);
    let pipe = Pipeline::new(Task::Classification, Algorithm::DpScd)
        .privacy(1.0, 1e-6)
        .penalty(dp_erm::PenaltyKind::L2, 0.1)
        .normalize_rows(true)
        .seed(Some(3));
    // With the dual's intercept column the rows are divided by sqrt(1 + 1) only.
    let with_intercept = pipe.clone().fit(&dense).unwrap();
    assert!(with_intercept.model.intercept.is_some());
    for (w, v) in with_intercept
        .model
        .coefficients
        .iter()
        .zip(&with_intercept.model.scaled.coefficients)
    {
        assert!(
            (w - v / 2f64.sqrt()).abs() <= 1e-15 * (1.0 + w.abs()),
            "{w} vs {v}"
        );
    }
    let pipe = pipe.intercept(false);
    let r = pipe.fit(&dense).unwrap();
    assert!(r.model.normalize_rows && r.chosen.normalize_rows);
    assert_eq!(r.model.feature_ranges, vec![(-1.0, 1.0); 4]);
    // Unit rows need no division by sqrt(p): the scaled model is the raw one.
    assert_eq!(r.model.coefficients, r.model.scaled.coefficients);
    let z = r.model.decision_function(dense.x()).unwrap();
    let (x, _) = half_zeros(1000, 4);
    let tripled: Vec<f64> = x.iter().map(|v| 3.0 * v).collect();
    let big = DenseDesign::from_row_major(1000, 4, &tripled).unwrap();
    let z3 = r.model.decision_function(&big).unwrap();
    for (u, v) in z.iter().zip(&z3) {
        assert!((u - v).abs() <= 1e-12, "{u} vs {v}");
    }
    // Without normalisation at predict time, tripled rows would move the margins.
    let mut plain = r.model.clone();
    plain.normalize_rows = false;
    let moved = plain.decision_function(&big).unwrap();
    assert!(z.iter().zip(&moved).any(|(u, v)| (u - v).abs() > 1e-6));
    // The sparse layout: the same normalised rows, so the same dual fit (row-wise
    // kernels sum the stored entries in the same order).
    let s = pipe.fit(&sparse).unwrap();
    for (u, v) in r.model.coefficients.iter().zip(&s.model.coefficients) {
        assert!((u - v).abs() <= 1e-9 * (1.0 + u.abs()), "{u} vs {v}");
    }
}

/// `max_nonzeros(k)`: DP-CD charges `k` releases per record and pass, projects the
/// records with more non-zeros (counted, not named), and other solvers refuse it.
#[test]
fn a_support_bound_charges_what_a_record_can_move() {
    let (dense, sparse) = both(600, 6);
    let nnz_max = (0..600)
        .map(|i| {
            let mut k = 0;
            dense
                .x()
                .for_each_in_row(i, |_, v| k += usize::from(v != 0.0));
            k
        })
        .max()
        .unwrap();
    assert!(nnz_max > 2);
    for intercept in [false, true] {
        let r = dp_cd()
            .intercept(intercept)
            .passes(4)
            .max_nonzeros(2)
            .fit(&sparse)
            .unwrap();
        let Some(SolverPlan::DpCd(plan)) = &r.guarantee().unwrap().plan else {
            panic!("a DP-CD plan")
        };
        let k = 2 + u64::from(intercept);
        assert_eq!(plan.charged_releases, Some(4 * k), "{plan:?}");
        assert!(r.guarantee().unwrap().epsilon <= 1.0);
        let projected = r.diagnostics.projected_records.unwrap();
        assert!(projected > 0 && projected <= 600, "{projected}");
        assert_eq!(r.chosen.max_nonzeros, Some(2));
    }
    predict_projects_as_the_fit_did(&dense, &sparse);
    let err = Pipeline::new(Task::Classification, Algorithm::DpSgd)
        .privacy(1.0, 1e-6)
        .feature_bounds(FeatureBounds::Uniform(1.0))
        .max_nonzeros(2)
        .fit(&dense)
        .unwrap_err()
        .to_string();
    assert!(err.contains("max_nonzeros applies to dp-cd only"), "{err}");
    let err = dp_cd().max_nonzeros(0).fit(&dense).unwrap_err().to_string();
    assert!(err.contains("max_nonzeros"), "{err}");
}

/// A model fitted under `max_nonzeros(k)` applies the fit's projection to new rows: its
/// decisions on the raw rows are the solver's scaled model on the clipped, scaled and
/// projected rows (`RowSupport::project`, as the fit ran it), for dense and sparse
/// input alike; without the projection some decisions differ.
fn predict_projects_as_the_fit_did(dense: &Dataset<DenseDesign>, sparse: &Dataset<SparseDesign>) {
    use dp_erm::optim::RowSupport;
    let r = dp_cd().passes(4).max_nonzeros(2).fit(dense).unwrap();
    let m = &r.model;
    assert_eq!(m.max_nonzeros, Some(2));
    let (n, p) = (dense.n_samples(), dense.n_features());
    let mut scaled = vec![0.0; n * p];
    for i in 0..n {
        dense.x().for_each_in_row(i, |j, v| {
            let (lo, hi) = m.feature_ranges[j];
            scaled[i * p + j] = (v.clamp(lo, hi) - 0.0) / lo.abs().max(hi.abs());
        });
    }
    let mut projected = DenseDesign::from_row_major(n, p, &scaled).unwrap();
    assert!(RowSupport::AtMost(2).project(&mut projected).unwrap() > 0);
    let z = m.decision_function(dense.x()).unwrap();
    for (i, zi) in z.iter().enumerate() {
        let want: f64 = projected
            .row(i)
            .iter()
            .zip(&m.scaled.coefficients)
            .map(|(x, w)| x * w)
            .sum::<f64>()
            + m.scaled.intercept.unwrap_or(0.0);
        assert!(
            (zi - want).abs() <= 1e-9 * (1.0 + want.abs()),
            "row {i}: {zi} vs {want}"
        );
    }
    assert_eq!(m.decision_function(sparse.x()).unwrap(), z);
    let mut unprojected = m.clone();
    unprojected.max_nonzeros = None;
    let moved = unprojected.decision_function(dense.x()).unwrap();
    assert!(z.iter().zip(&moved).any(|(u, v)| (u - v).abs() > 1e-9));
}
