//! Property tests: dense == sparse per loss, M_j bounds the curvature along each
//! coordinate, prox optimality.

use dp_models::{
    BoxConstraint, Dataset, DenseDesign, Design, ElasticNet, Huber, Logistic, Loss, NoPenalty,
    Objective, Penalty, SparseDesign, Squared, SquaredHinge, L1, L2,
};
use proptest::prelude::*;

/// A small dense matrix with many exact zeros, labels in {-1, +1} or real, and a w.
fn problem() -> impl Strategy<Value = (usize, usize, Vec<f64>, Vec<f64>, Vec<f64>)> {
    (1usize..7, 1usize..5).prop_flat_map(|(n, p)| {
        (
            Just(n),
            Just(p),
            prop::collection::vec(prop_oneof![Just(0.0), -3.0f64..3.0, -3.0f64..3.0], n * p),
            prop::collection::vec(-2.0f64..2.0, n),
            prop::collection::vec(-2.0f64..2.0, p),
        )
    })
}

fn labels(y: &[f64], classification: bool) -> Vec<f64> {
    if classification {
        y.iter()
            .map(|&v| if v >= 0.0 { 1.0 } else { -1.0 })
            .collect()
    } else {
        y.to_vec()
    }
}

fn dense_equals_sparse<L: Loss>(loss: &L, n: usize, p: usize, xs: &[f64], y: &[f64], w: &[f64]) {
    let dx = DenseDesign::from_row_major(n, p, xs).unwrap();
    let sx = SparseDesign::from_dense(&dx);
    let y = labels(y, loss.is_classification());
    let dd = Dataset::new(dx, y.clone()).unwrap();
    let sd = Dataset::new(sx, y).unwrap();
    let pen = ElasticNet::new(0.3, 0.2).unwrap();
    let od = Objective::new(&dd, loss, &pen).unwrap();
    let os = Objective::new(&sd, loss, &pen).unwrap();
    let (mut zd, mut zs) = (vec![0.0; n], vec![0.0; n]);
    od.predictor(w, &mut zd).unwrap();
    os.predictor(w, &mut zs).unwrap();
    for (a, b) in zd.iter().zip(&zs) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()));
    }
    let (vd, vs) = (od.value(w).unwrap(), os.value(w).unwrap());
    assert!((vd - vs).abs() <= 1e-12 * (1.0 + vd.abs()), "{vd} vs {vs}");
    for j in 0..p {
        let (a, b) = (
            od.coordinate_gradient(j, &zd),
            os.coordinate_gradient(j, &zs),
        );
        assert!(
            (a - b).abs() <= 1e-12 * (1.0 + a.abs()),
            "grad {j}: {a} vs {b}"
        );
    }
    let md = od.coordinate_smoothness().unwrap().value;
    let ms = os.coordinate_smoothness().unwrap().value;
    assert_eq!(md, ms);
    assert!((od.kkt_violation(w, &zd).unwrap() - os.kkt_violation(w, &zs).unwrap()).abs() < 1e-12);
}

/// Along each coordinate, the coordinate gradient's change over a step t is at most
/// M_j |t| (coordinate-wise smoothness), and the function lies below its quadratic
/// upper model f(w) + t g_j + (M_j/2) t^2.
fn smoothness_bounds_curvature<L: Loss>(
    loss: &L,
    n: usize,
    p: usize,
    xs: &[f64],
    y: &[f64],
    w: &[f64],
    t: f64,
) {
    let dx = DenseDesign::from_row_major(n, p, xs).unwrap();
    let d = Dataset::new(dx, labels(y, loss.is_classification())).unwrap();
    let obj = Objective::new(&d, loss, &NoPenalty).unwrap();
    let m = obj.coordinate_smoothness().unwrap().value;
    let mut z = vec![0.0; n];
    obj.predictor(w, &mut z).unwrap();
    let f0 = obj.data_fit(&z).unwrap();
    for (j, &mj) in m.iter().enumerate() {
        let g0 = obj.coordinate_gradient(j, &z);
        let mut zt = z.clone();
        obj.update_predictor(j, t, &mut zt);
        let g1 = obj.coordinate_gradient(j, &zt);
        let f1 = obj.data_fit(&zt).unwrap();
        let tol = 1e-12 * (1.0 + g0.abs() + g1.abs());
        assert!(
            (g1 - g0).abs() <= mj * t.abs() + tol,
            "{} j={j}: |{g1} - {g0}| > {} * {t}",
            loss.name(),
            mj
        );
        let model = f0 + t * g0 + 0.5 * mj * t * t;
        assert!(
            f1 <= model + 1e-12 * (1.0 + f0.abs() + model.abs()),
            "{} j={j}: {f1} > {model}",
            loss.name()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn dense_equals_sparse_every_loss((n, p, xs, y, w) in problem()) {
        dense_equals_sparse(&Squared::half(), n, p, &xs, &y, &w);
        dense_equals_sparse(&Squared::full(), n, p, &xs, &y, &w);
        dense_equals_sparse(&Logistic, n, p, &xs, &y, &w);
        dense_equals_sparse(&SquaredHinge, n, p, &xs, &y, &w);
        dense_equals_sparse(&Huber::new(0.6).unwrap(), n, p, &xs, &y, &w);
    }

    #[test]
    fn coordinate_smoothness_bounds_curvature((n, p, xs, y, w) in problem(), t in -3.0f64..3.0) {
        smoothness_bounds_curvature(&Squared::half(), n, p, &xs, &y, &w, t);
        smoothness_bounds_curvature(&Squared::full(), n, p, &xs, &y, &w, t);
        smoothness_bounds_curvature(&Logistic, n, p, &xs, &y, &w, t);
        smoothness_bounds_curvature(&SquaredHinge, n, p, &xs, &y, &w, t);
        smoothness_bounds_curvature(&Huber::new(0.6).unwrap(), n, p, &xs, &y, &w, t);
    }

    /// The prox output u = prox_{g psi_j}(v) satisfies 0 in u - v + g d psi_j(u), i.e.
    /// dist(-(u - v)/g, d psi_j(u)) = 0, and it beats nearby points on the subproblem.
    #[test]
    fn prox_satisfies_its_optimality_condition(v in -5.0f64..5.0, g in 0.01f64..10.0, lam in 0.0f64..3.0, mu in 0.0f64..3.0, r in 0.0f64..4.0, om in 0.0f64..2.0) {
        let pens: Vec<Box<dyn Penalty>> = vec![
            Box::new(NoPenalty),
            Box::new(L1::new(lam).unwrap()),
            Box::new(L1::new(lam).unwrap().with_weights(vec![om]).unwrap()),
            Box::new(L2::new(lam).unwrap()),
            Box::new(L2::new(lam).unwrap().with_weights(vec![om]).unwrap()),
            Box::new(ElasticNet::new(lam, mu).unwrap()),
            Box::new(ElasticNet::new(lam, mu).unwrap().with_weights(vec![om]).unwrap()),
            Box::new(BoxConstraint::new(vec![-r], vec![0.5 * r]).unwrap()),
        ];
        for pen in &pens {
            let u = pen.prox_1d(0, v, g);
            let grad = (u - v) / g; // gradient of the smooth part (u - v)^2 / (2 g)
            let viol = pen.subdiff_distance(0, u, grad);
            prop_assert!(viol <= 1e-9 * (1.0 + v.abs() / g), "{}: violation {viol} at v={v} g={g}", pen.name());
            let obj = |x: f64| (x - v) * (x - v) / (2.0 * g) + pen.value_1d(0, x);
            for h in [1e-3, -1e-3, 0.1, -0.1] {
                prop_assert!(obj(u) <= obj(u + h) + 1e-12, "{}: {} > {}", pen.name(), obj(u), obj(u + h));
            }
        }
    }
}

#[test]
fn dense_zero_column_is_handled() {
    let x = DenseDesign::from_row_major(2, 2, &[0.0, 1.0, 0.0, 2.0]).unwrap();
    assert_eq!(x.col_sq_norm(0), 0.0);
    let s = SparseDesign::from_dense(&x);
    assert_eq!(s.col_nnz(0), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The reference solver certifies the same optimum on the dense and the sparse
    /// layout of one problem (LASSO and L1-logistic).
    #[test]
    fn reference_optimum_is_layout_independent((n, p, xs, y, _w) in problem(), lam in 0.01f64..0.5) {
        use dp_models::reference::{solve, ReferenceOptions};
        let dx = DenseDesign::from_row_major(n, p, &xs).unwrap();
        let sx = SparseDesign::from_dense(&dx);
        for classification in [false, true] {
            let yy = labels(&y, classification);
            let dd = Dataset::new(dx.clone(), yy.clone()).unwrap();
            let sd = Dataset::new(sx.clone(), yy).unwrap();
            let pen = L1::new(lam).unwrap();
            let (a, b) = if classification {
                let od = Objective::new(&dd, &Logistic, &pen).unwrap();
                let os = Objective::new(&sd, &Logistic, &pen).unwrap();
                (solve(&od, &ReferenceOptions::default()).unwrap(), solve(&os, &ReferenceOptions::default()).unwrap())
            } else {
                let loss = Squared::half();
                let od = Objective::new(&dd, &loss, &pen).unwrap();
                let os = Objective::new(&sd, &loss, &pen).unwrap();
                (solve(&od, &ReferenceOptions::default()).unwrap(), solve(&os, &ReferenceOptions::default()).unwrap())
            };
            prop_assert!((a.objective - b.objective).abs() <= a.certificate + b.certificate + 1e-15,
                "dense {} vs sparse {}", a.objective, b.objective);
        }
    }
}

/// Hinge is not differentiable at y z = 1, but away from the kink its derivative is the
/// slope, and everywhere it is a subgradient: phi(t) >= phi(z) + phi'(z) (t - z).
#[test]
fn hinge_derivative_is_a_subgradient() {
    use dp_models::Hinge;
    for &y in &[-1.0, 1.0] {
        for k in -40..=40 {
            let z = k as f64 * 0.1 + 0.013;
            let g = Hinge.derivative(z, y);
            let h = 1e-6;
            let fd = (Hinge.value(z + h, y) - Hinge.value(z - h, y)) / (2.0 * h);
            assert!((g - fd).abs() < 1e-6, "z={z} y={y}: {g} vs {fd}");
            for m in -30..=30 {
                let t = m as f64 * 0.17;
                assert!(Hinge.value(t, y) >= Hinge.value(z, y) + g * (t - z) - 1e-12);
            }
        }
    }
}
