use super::*;
use dp_models::constants::Tagged;
use dp_models::{DenseDesign, Hinge, Logistic, NoPenalty, SparseDesign, Squared, L1};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn gaussian_data(n: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut x = vec![0.0; n * p];
    for v in x.iter_mut() {
        // A crude but deterministic bell shape (sum of uniforms).
        *v = (0..4).map(|_| rng.random::<f64>() - 0.5).sum::<f64>();
    }
    // A few large true coefficients: quasi-sparse truth.
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = 3.0 * x[i * p] - 2.0 * x[i * p + 1 % p] + 0.1 * (rng.random::<f64>() - 0.5);
    }
    (x, y)
}

fn regression(n: usize, p: usize, seed: u64) -> Dataset<DenseDesign> {
    let (x, y) = gaussian_data(n, p, seed);
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn classification(n: usize, p: usize, seed: u64) -> Dataset<DenseDesign> {
    let (x, y) = gaussian_data(n, p, seed);
    let y = y
        .iter()
        .map(|&v| if v >= 0.0 { 1.0 } else { -1.0 })
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

const RULES: [SelectionRule; 4] = [
    SelectionRule::GsL,
    SelectionRule::GsS,
    SelectionRule::GsR,
    SelectionRule::GsQ,
];

#[test]
fn noise_off_equals_the_non_private_twin() {
    let data = regression(60, 12, 1);
    let pen = L1::new(0.05).unwrap();
    for rule in RULES {
        for step in [0.5, 1.0] {
            let plan = DpGcdParams::new(Squared::half(), pen.clone())
                .passes(15)
                .step_scale(step)
                .clip(f64::INFINITY)
                .rule(rule)
                .noise_off()
                .record_trajectory(true)
                .build()
                .unwrap();
            let rep = plan.fit_seeded(&data, 3).unwrap();
            let twin = greedy_cd(&data, &Squared::half(), &pen, 0.0, rule, step, 15).unwrap();
            assert_eq!(
                bits(&rep.model.coefficients),
                bits(&twin.coefficients),
                "{rule:?}"
            );
            assert_eq!(rep.diagnostics.selected, twin.selected);
            assert_eq!(
                bits(&rep.diagnostics.objective_trajectory),
                bits(&twin.objective_trajectory)
            );
            // Not private: the model carries no privacy report and says what it is.
            assert!(rep.model.privacy.is_none());
            assert_eq!(rep.model.algorithm, "greedy-cd");
        }
    }
    // Logistic with a smooth ridge term, GS-L.
    let data = classification(80, 10, 2);
    let plan = DpGcdParams::new(Logistic, NoPenalty)
        .ridge(1e-2)
        .passes(20)
        .clip(f64::INFINITY)
        .noise_off()
        .build()
        .unwrap();
    let rep = plan.fit_seeded(&data, 0).unwrap();
    let twin = greedy_cd(
        &data,
        &Logistic,
        &NoPenalty,
        1e-2,
        SelectionRule::GsL,
        1.0,
        20,
    )
    .unwrap();
    assert_eq!(bits(&rep.model.coefficients), bits(&twin.coefficients));
}

#[test]
fn parallel_sparse_path_equals_the_twin() {
    // nnz >= 2^16 and p > 256 triggers the rayon path.
    let (n, p) = (200, 600);
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let mut trip = Vec::new();
    for i in 0..n {
        for j in 0..p {
            if rng.random::<f64>() < 0.6 || j == i % p {
                trip.push((i, j, rng.random::<f64>() - 0.3));
            }
        }
    }
    assert!(trip.len() >= 1 << 16);
    let x = SparseDesign::from_triplets(n, p, &trip).unwrap();
    let y: Vec<f64> = (0..n)
        .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
        .collect();
    let data = Dataset::new(x, y).unwrap();
    let plan = DpGcdParams::new(Logistic, L1::new(1e-3).unwrap())
        .passes(8)
        .rule(SelectionRule::GsR)
        .clip(f64::INFINITY)
        .noise_off()
        .build()
        .unwrap();
    let rep = plan.fit_seeded(&data, 0).unwrap();
    let twin = greedy_cd(
        &data,
        &Logistic,
        &L1::new(1e-3).unwrap(),
        0.0,
        SelectionRule::GsR,
        1.0,
        8,
    )
    .unwrap();
    assert_eq!(bits(&rep.model.coefficients), bits(&twin.coefficients));
}

#[test]
fn greedy_twin_descends_and_stays_sparse() {
    let data = classification(100, 15, 4);
    let r = greedy_cd(
        &data,
        &Logistic,
        &NoPenalty,
        1e-3,
        SelectionRule::GsL,
        1.0,
        12,
    )
    .unwrap();
    for t in 1..r.objective_trajectory.len() {
        assert!(r.objective_trajectory[t] <= r.objective_trajectory[t - 1] + 1e-15);
        let support = r.coefficients.iter().filter(|v| **v != 0.0).count();
        assert!(support <= 12);
    }
    assert!(r.objective_trajectory[12] < r.objective_trajectory[0]);
    // Separable quadratic: orthogonal columns; the first pick maximises |g_j|/sqrt(M_j).
    let x =
        DenseDesign::from_row_major(3, 3, &[2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5]).unwrap();
    // g_j = -(1/3) x_jj y_j, M_j = x_jj^2/3 -> |g_j|/sqrt(M_j) = |y_j|/sqrt(3).
    let data = Dataset::new(x, vec![1.0, 3.0, 2.0]).unwrap();
    let r = greedy_cd(
        &data,
        &Squared::half(),
        &NoPenalty,
        0.0,
        SelectionRule::GsL,
        1.0,
        3,
    )
    .unwrap();
    assert_eq!(r.selected, vec![1, 2, 0]);
    // With step 1/M_j each coordinate is solved exactly in one step.
    assert!((r.coefficients[0] - 0.5).abs() < 1e-12);
    assert!((r.coefficients[1] - 3.0).abs() < 1e-12);
    assert!((r.coefficients[2] - 4.0).abs() < 1e-12);
}

fn private_plan(variant: Variant, rnm: RnmCalibration) -> DpGcd<Squared, L1> {
    DpGcdParams::new(Squared::half(), L1::new(0.01).unwrap())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(10)
        .step_scale(0.5)
        .clip(2.0)
        .rule(SelectionRule::GsR)
        .variant(variant)
        .rnm_calibration(rnm)
        .allow_non_private_constants(true)
        .record_trajectory(true)
        .build()
        .unwrap()
}

#[test]
fn seeded_fits_reproduce_bit_for_bit() {
    let data = regression(50, 20, 5);
    for (variant, rnm) in [
        (Variant::Laplace, RnmCalibration::Conservative),
        (Variant::Laplace, RnmCalibration::Paper),
        (Variant::Zcdp, RnmCalibration::Conservative),
    ] {
        let plan = private_plan(variant, rnm);
        let a = plan.fit_seeded(&data, 11).unwrap();
        let b = plan.fit_seeded(&data, 11).unwrap();
        let c = plan.fit_seeded(&data, 12).unwrap();
        assert_eq!(bits(&a.model.coefficients), bits(&b.model.coefficients));
        assert_eq!(a.diagnostics.selected, b.diagnostics.selected);
        assert_ne!(
            bits(&a.model.coefficients),
            bits(c.coefficients()),
            "{variant:?}"
        );
        assert_eq!(a.diagnostics.seed, Some(11));
        assert_eq!(a.model.algorithm, variant.name());
        assert_eq!(
            a.guarantee().unwrap().proven,
            rnm == RnmCalibration::Conservative
        );
        // Iterates are sparse: at most one new coordinate per iteration.
        assert!(a.model.coefficients.iter().filter(|v| **v != 0.0).count() <= 10);
    }
}

#[test]
fn calibration_and_guarantees_meet_the_target() {
    let plan = private_plan(Variant::Laplace, RnmCalibration::Conservative);
    let eps_step = match plan.calibration() {
        Calibration::Laplace { step_epsilon } => step_epsilon,
        other => panic!("{other:?}"),
    };
    let want = laplace_step_epsilon(1.0, 1e-5, 10, LaplaceComposition::Advanced).unwrap();
    assert_eq!(eps_step, want);
    let data = regression(50, 20, 5);
    let rep = plan.fit_seeded(&data, 1).unwrap();
    assert!(
        rep.guarantee().unwrap().epsilon <= 1.0 + 1e-9,
        "{:?}",
        rep.guarantee()
    );
    assert!(rep.guarantee().unwrap().delta <= 1e-5 * (1.0 + 1e-9));
    let gcd = |rep: &Fitted| match rep.privacy().map(|p| p.plan.clone()) {
        Some(SolverPlan::DpGcd(g)) => g,
        other => panic!("{other:?}"),
    };
    assert!((gcd(&rep).update_multiplier - 1.0 / eps_step).abs() < 1e-12);
    assert!((gcd(&rep).selection_multiplier - 2.0 / eps_step).abs() < 1e-12);
    assert_eq!(rep.privacy().unwrap().ledger.entries().len(), 2);

    let plan = private_plan(Variant::Zcdp, RnmCalibration::Conservative);
    let rep = plan.fit_seeded(&data, 1).unwrap();
    assert!(
        rep.guarantee().unwrap().epsilon <= 1.0,
        "{:?}",
        rep.guarantee()
    );
    assert!(gcd(&rep).rho_update.unwrap() > 0.0 && gcd(&rep).rho_selection.unwrap() > 0.0);
    // At the same target the zCDP variant's update noise (std / Delta) is smaller than
    // the Laplace variant's (std / Delta = sqrt(2) / eps').
    assert!(gcd(&rep).update_multiplier < 2f64.sqrt() / eps_step);
}

#[test]
fn bad_input_is_an_error_naming_the_problem() {
    let base = || {
        DpGcdParams::new(Squared::half(), L1::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .allow_non_private_constants(true)
    };
    let msg = |r: Result<DpGcd<Squared, L1>>| r.unwrap_err().to_string();
    assert!(msg(base().epsilon(0.0).build())
        .to_lowercase()
        .contains("epsilon"));
    assert!(msg(base().epsilon(f64::NAN).build())
        .to_lowercase()
        .contains("epsilon"));
    assert!(msg(base().delta(1.0).build())
        .to_lowercase()
        .contains("delta"));
    assert!(msg(base().delta(-0.1).build())
        .to_lowercase()
        .contains("delta"));
    assert!(msg(base().passes(0).build()).contains("passes"));
    assert!(msg(base().step_scale(0.0).build()).contains("step"));
    assert!(msg(base().step_scale(f64::INFINITY).build()).contains("step"));
    assert!(msg(base().clip(-1.0).build()).contains("clip"));
    assert!(msg(base().clip(f64::INFINITY).build()).contains("clip"));
    assert!(msg(base().ridge(-1.0).build()).contains("ridge"));
    assert!(
        msg(base().variant(Variant::Zcdp).selection_share(1.5).build()).contains("selection_share")
    );
    let hinge = DpGcdParams::new(Hinge, NoPenalty)
        .epsilon(1.0)
        .delta(1e-6)
        .build();
    assert!(hinge.unwrap_err().to_string().contains("hinge"));

    let data = regression(20, 5, 1);
    // Non-private constants need an explicit opt-in.
    let strict = DpGcdParams::new(Squared::half(), L1::new(0.1).unwrap())
        .epsilon(1.0)
        .delta(1e-6)
        .build()
        .unwrap();
    assert!(strict.fit_seeded(&data, 0).is_err());
    // Labels must suit the loss.
    let plan = DpGcdParams::new(Logistic, NoPenalty)
        .epsilon(1.0)
        .delta(1e-6)
        .allow_non_private_constants(true)
        .build()
        .unwrap();
    assert!(plan
        .fit_seeded(&data, 0)
        .unwrap_err()
        .to_string()
        .contains("label"));
    // Penalty weights of the wrong dimension.
    let plan = base().build().unwrap();
    let plan_w = DpGcdParams::new(
        Squared::half(),
        L1::new(0.1).unwrap().with_weights(vec![1.0; 3]).unwrap(),
    )
    .epsilon(1.0)
    .delta(1e-6)
    .allow_non_private_constants(true)
    .build()
    .unwrap();
    assert!(plan_w.fit_seeded(&data, 0).is_err());
    // Wrong number of given smoothness constants, and an all-zero column.
    let plan_m = base()
        .smoothness(Tagged::public(vec![1.0; 4]))
        .build()
        .unwrap();
    assert!(plan_m
        .fit_seeded(&data, 0)
        .unwrap_err()
        .to_string()
        .contains("smoothness"));
    let x = DenseDesign::from_row_major(2, 2, &[1.0, 0.0, 2.0, 0.0]).unwrap();
    let zero_col = Dataset::new(x, vec![1.0, 2.0]).unwrap();
    assert!(plan
        .fit_seeded(&zero_col, 0)
        .unwrap_err()
        .to_string()
        .contains("M_1"));
    // A diverging step is reported, not a panic.
    let wild = base()
        .step_scale(1e300)
        .clip(1e300)
        .passes(5)
        .build()
        .unwrap();
    let _ = wild.fit_seeded(&data, 0);
}

/// Selection sanity: with one dominant coordinate the private selection
/// picks it more and more often as epsilon grows.
#[test]
fn selection_concentrates_as_noise_vanishes() {
    let rows = [
        1.0, 0.1, 0.1, 1.0, 0.1, -0.1, 1.0, -0.1, 0.1, 1.0, -0.1, -0.1,
    ];
    let x: Vec<f64> = (0..10).flat_map(|_| rows).collect();
    let x = DenseDesign::from_row_major(40, 3, &x).unwrap();
    let data = Dataset::new(x, vec![2.0; 40]).unwrap();
    for variant in [Variant::Laplace, Variant::Zcdp] {
        let mut freq = Vec::new();
        for eps in [0.05, 5.0, 500.0] {
            let plan = DpGcdParams::new(Squared::half(), NoPenalty)
                .epsilon(eps)
                .delta(1e-6)
                .clip(2.5)
                .variant(variant)
                .allow_non_private_constants(true)
                .build()
                .unwrap();
            let hits = (0..200u64)
                .filter(|&s| plan.fit_seeded(&data, s).unwrap().diagnostics.selected[0] == 0)
                .count();
            freq.push(hits);
        }
        assert!(freq[2] >= 195, "{variant:?} {freq:?}");
        assert!(freq[0] < freq[2], "{variant:?} {freq:?}");
    }
}

/// Seeded private fits do not depend on the number of rayon threads (the selection noise
/// streams are tied to fixed coordinate blocks).
#[test]
fn private_fits_do_not_depend_on_the_thread_count() {
    let (n, p) = (100, 3000);
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let mut trip = Vec::new();
    for j in 0..p {
        for i in 0..n {
            if rng.random::<f64>() < 0.25 || i == j % n {
                trip.push((i, j, 1.0));
            }
        }
    }
    assert!(trip.len() >= 1 << 16);
    let x = SparseDesign::from_triplets(n, p, &trip).unwrap();
    let y: Vec<f64> = (0..n)
        .map(|i| if i % 4 == 0 { 1.0 } else { -1.0 })
        .collect();
    let data = Dataset::new(x, y).unwrap();
    for (variant, rnm) in [
        (Variant::Laplace, RnmCalibration::Conservative),
        (Variant::Laplace, RnmCalibration::Paper),
        (Variant::Zcdp, RnmCalibration::Conservative),
    ] {
        let plan = DpGcdParams::new(Logistic, L1::new(1e-3).unwrap())
            .epsilon(1.0)
            .delta(1e-4)
            .passes(6)
            .clip(1.0)
            .rule(SelectionRule::GsR)
            .variant(variant)
            .rnm_calibration(rnm)
            .allow_non_private_constants(true)
            .build()
            .unwrap();
        let fit_with = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| plan.fit_seeded(&data, 5).unwrap())
        };
        let (a, b) = (fit_with(1), fit_with(3));
        assert_eq!(
            a.diagnostics.selected, b.diagnostics.selected,
            "{variant:?} {rnm:?}"
        );
        assert_eq!(bits(&a.model.coefficients), bits(&b.model.coefficients));
    }
}

/// An L1 penalty without the cancellation-free GS-q closed form (the trait default).
#[derive(Debug)]
struct NaiveL1(L1);

impl Penalty for NaiveL1 {
    fn name(&self) -> &'static str {
        "naive-l1"
    }
    fn value_1d(&self, j: usize, wj: f64) -> f64 {
        self.0.value_1d(j, wj)
    }
    fn prox_1d(&self, j: usize, v: f64, step: f64) -> f64 {
        self.0.prox_1d(j, v, step)
    }
    fn subdiff_distance(&self, j: usize, wj: f64, grad_j: f64) -> f64 {
        self.0.subdiff_distance(j, wj, grad_j)
    }
}

/// Private GS-q needs the closed form (its naive score is not Lipschitz in floating
/// point); other rules and the non-private twin still accept such a penalty.
#[test]
fn private_gs_q_refuses_a_penalty_without_closed_form() {
    let data = regression(30, 4, 9);
    let plan = |rule: SelectionRule| {
        DpGcdParams::new(Squared::half(), NaiveL1(L1::new(0.05).unwrap()))
            .epsilon(1.0)
            .delta(1e-5)
            .passes(5)
            .step_scale(0.5)
            .clip(1.0)
            .rule(rule)
            .allow_non_private_constants(true)
            .build()
            .unwrap()
    };
    let err = plan(SelectionRule::GsQ)
        .fit_seeded(&data, 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("GS-q") && err.contains("naive-l1"), "{err}");
    assert!(err.contains("floating-point"), "{err}");
    plan(SelectionRule::GsR).fit_seeded(&data, 1).unwrap();
    let pen = NaiveL1(L1::new(0.05).unwrap());
    let twin = greedy_cd(
        &data,
        &Squared::half(),
        &pen,
        0.0,
        SelectionRule::GsQ,
        0.5,
        5,
    )
    .unwrap();
    assert_eq!(twin.selected.len(), 5);
    // And the built-in L1 (with the closed form) is accepted privately.
    DpGcdParams::new(Squared::half(), L1::new(0.05).unwrap())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(5)
        .clip(1.0)
        .rule(SelectionRule::GsQ)
        .allow_non_private_constants(true)
        .build()
        .unwrap()
        .fit_seeded(&data, 1)
        .unwrap();
}

/// Standard normal CDF (Numerical Recipes' `erfcc`, relative error < 1.2e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = -x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z.abs());
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    0.5 * if z >= 0.0 { erfc } else { 2.0 - erfc }
}

fn gcd_plan(rep: &Fitted) -> DpGcdPlan {
    match rep.privacy().map(|p| p.plan.clone()) {
        Some(SolverPlan::DpGcd(g)) => g,
        other => panic!("{other:?}"),
    }
}

/// The support test's budget by derivation: it is charged before the first draw (one
/// more Gaussian entry in the ledger), the iterations get the rest of `rho_total`, the
/// reported guarantee still meets the target, and the test only removes coordinates.
#[test]
fn support_test_is_charged_and_composes_within_the_target() {
    let data = regression(80, 20, 3);
    let base = || {
        DpGcdParams::new(Squared::half(), L1::new(0.05).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(8)
            .step_scale(0.5)
            .clip(2.0)
            .rule(SelectionRule::GsR)
            .variant(Variant::Zcdp)
            .selection_share(0.3)
            .allow_non_private_constants(true)
    };
    let plain = base().build().unwrap().fit_seeded(&data, 4).unwrap();
    let tested = base()
        .support_test(0.25)
        .build()
        .unwrap()
        .fit_seeded(&data, 4)
        .unwrap();
    let (a, b) = (gcd_plan(&plain), gcd_plan(&tested));
    let rho_total = dp_accounting::zcdp::rho_for_target(
        dp_accounting::Epsilon::new(1.0).unwrap(),
        dp_accounting::Delta::new(1e-5).unwrap(),
    )
    .unwrap();
    let rho_test = b.rho_support_test.unwrap();
    let per_iter = b.rho_selection.unwrap() + b.rho_update.unwrap();
    assert!(8.0 * per_iter + rho_test <= rho_total);
    assert!((rho_test / rho_total - 0.25).abs() < 1e-9, "{rho_test}");
    // The iterations' share shrinks by 3/4, the split between them is kept.
    assert!((b.rho_update.unwrap() / a.rho_update.unwrap() - 0.75).abs() < 1e-9);
    assert!(b.rho_support_test.is_some() && a.rho_support_test.is_none());
    let ledger = &tested.privacy().unwrap().ledger;
    assert_eq!(ledger.entries().len(), 3);
    match &ledger.entries()[2] {
        Charge::Gaussian {
            noise_multiplier,
            count: 1,
        } => assert!((noise_multiplier - 1.0 / (2.0 * rho_test).sqrt()).abs() < 1e-12),
        other => panic!("{other:?}"),
    }
    let g = tested.guarantee().unwrap();
    assert!(g.proven && g.epsilon <= 1.0 && g.delta <= 1e-5, "{g:?}");
    // Noise off (the twin with the test): deterministic, and the test only zeroes
    // coordinates of the support, never adds one.
    let off = |test: bool| {
        let p = DpGcdParams::new(Squared::half(), L1::new(0.05).unwrap())
            .noise_off()
            .clip(f64::INFINITY)
            .passes(8)
            .variant(Variant::Zcdp);
        let p = if test { p.support_test(0.5) } else { p };
        p.build().unwrap().fit_seeded(&data, 0).unwrap()
    };
    let (w0, w1) = (off(false), off(true));
    for (u, v) in w0.model.coefficients.iter().zip(&w1.model.coefficients) {
        assert!(*v == *u || *v == 0.0, "{u} -> {v}");
    }
}

#[test]
fn support_test_refuses_bad_settings() {
    let base = || {
        DpGcdParams::new(Squared::half(), L1::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .allow_non_private_constants(true)
    };
    for f in [0.0, 1.0, -0.5, f64::NAN] {
        let e = base()
            .variant(Variant::Zcdp)
            .support_test(f)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("support_test"), "{e}");
    }
    let e = base().support_test(0.2).build().unwrap_err();
    assert!(e.to_string().contains("Zcdp"), "{e}");
}

/// The support test draws the noise its charge pays for. One feature equal to 1, all
/// labels +1, logistic loss with `C = 0.01`: every per-sample gradient stays clipped, so
/// `g = -C` at every iterate, the single update is `w = gamma (C - eta - lambda) / M`
/// (`eta ~ N(0, s_u^2)`), and the test keeps `w` iff
/// `gamma (C - eta - lambda) + C - eta' > lambda`, `eta' ~ N(0, s_t^2)`. With
/// `a = C - lambda` and `gamma = 1e-3` the final `w` is zero with probability
/// `1 - Phi(a / s_u) + Phi(a / s_u) (1 - Phi(a / s_t))` up to `O(gamma)`; `a = s_t` puts it
/// near 0.16, where a factor 2 error in `s_t` would move it to 0.02 or 0.31.
#[test]
fn support_test_noise_matches_its_charge() {
    let n = 1000usize;
    let x = DenseDesign::from_row_major(n, 1, &vec![1.0; n]).unwrap();
    let data = Dataset::new(x, vec![1.0; n]).unwrap();
    let clip = 0.01;
    let delta_j = 2.0 * clip / n as f64;
    let plan = |lambda: f64| {
        DpGcdParams::new(Logistic, L1::new(lambda).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(1)
            .step_scale(1e-3)
            .clip(clip)
            .rule(SelectionRule::GsR)
            .variant(Variant::Zcdp)
            .support_test(0.05)
            .allow_non_private_constants(true)
            .build()
            .unwrap()
    };
    // Read the noise scales off a first fit's plan.
    let probe = gcd_plan(&plan(0.001).fit_seeded(&data, 0).unwrap());
    let s_u = probe.update_multiplier * delta_j;
    let s_t = delta_j / (2.0 * probe.rho_support_test.unwrap()).sqrt();
    assert!(s_t > 2.5 * s_u, "{s_t} {s_u}");
    let a = s_t;
    let solver = plan(clip - a);
    let runs = 4000u64;
    let zeros = (0..runs)
        .filter(|&seed| solver.fit_seeded(&data, seed).unwrap().model.coefficients[0] == 0.0)
        .count() as f64
        / runs as f64;
    let phi_u = normal_cdf(a / s_u);
    let want = (1.0 - phi_u) + phi_u * (1.0 - normal_cdf(a / s_t));
    let se = (want * (1.0 - want) / runs as f64).sqrt();
    // The test has power: half or twice the noise would be outside the tolerance.
    for wrong in [0.5, 2.0] {
        let other = (1.0 - phi_u) + phi_u * (1.0 - normal_cdf(a / (wrong * s_t)));
        assert!(
            (other - want).abs() > 10.0 * se,
            "{wrong}: {other} vs {want}"
        );
    }
    assert!(
        (zeros - want).abs() < 5.0 * se,
        "zero rate {zeros} vs {want} (5 se = {})",
        5.0 * se
    );
}

/// `Smoothness::PrivateGaussian` in the zCDP variant: one Gaussian release of all `M_j`
/// charged first, at its share of the zCDP budget; the iterations (and a support test)
/// get what is left, and the ledger composes to at most the target. The Laplace variant
/// refuses it before anything is charged.
#[test]
fn gaussian_constants_take_their_share_of_rho_and_compose_within_the_target() {
    // Rows of norm <= 1, labels +-1.
    let (n, p) = (400, 6);
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let x: Vec<f64> = (0..n * p)
        .map(|_| rng.random_range(-1.0..1.0) / (p as f64).sqrt())
        .collect();
    let y = (0..n)
        .map(|i| if x[i * p] > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let data = Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap();
    let smoothness = Smoothness::PrivateGaussian {
        feature_bounds: None,
        row_norm_bound: Some(Tagged::public(1.0)),
        budget_fraction: 0.1,
        failure_probability: Some(0.05),
    };
    let base = |support: Option<f64>| {
        let b = DpGcdParams::new(Logistic, NoPenalty)
            .epsilon(1.0)
            .delta(1e-5)
            .passes(10)
            .step_scale(1.0)
            .clip(1.0)
            .rule(SelectionRule::GsL)
            .variant(Variant::Zcdp)
            .smoothness(smoothness.clone());
        match support {
            Some(f) => b.support_test(f),
            None => b,
        }
    };
    let rho_total = dp_accounting::zcdp::rho_for_target(
        dp_accounting::Epsilon::new(1.0).unwrap(),
        dp_accounting::Delta::new(1e-5).unwrap(),
    )
    .unwrap();
    for support in [None, Some(0.2)] {
        let fitted = base(support).build().unwrap().fit_seeded(&data, 5).unwrap();
        let report = fitted.privacy().unwrap();
        assert!(!report.uses_non_private_constants);
        let entries = report.ledger.entries();
        // First the constants' release, at 10 % of rho (never above).
        let Charge::Gaussian {
            noise_multiplier: z_m,
            count: 1,
        } = entries[0]
        else {
            panic!("{entries:?}")
        };
        let rho_m = 1.0 / (2.0 * z_m * z_m);
        assert!(rho_m <= 0.1 * rho_total, "{rho_m}");
        assert!(
            (rho_m / rho_total - 0.1).abs() < 1e-9,
            "{}",
            rho_m / rho_total
        );
        // The iterations take the rest (and the support test its share).
        let plan = gcd_plan(&fitted);
        let iterations = 10.0 * (plan.rho_selection.unwrap() + plan.rho_update.unwrap());
        let test = plan.rho_support_test.unwrap_or(0.0);
        assert!(rho_m + iterations + test <= rho_total);
        let expected = 1.0 - 0.1 - support.unwrap_or(0.0);
        assert!(
            (iterations / rho_total - expected).abs() < 1e-9,
            "{}",
            iterations / rho_total
        );
        if let Some(f) = support {
            assert!((test / rho_total - f).abs() < 1e-9, "{test}");
        }
        let g = fitted.guarantee().unwrap();
        assert!(g.proven && g.epsilon <= 1.0 && g.delta <= 1e-5, "{g:?}");
        assert!(fitted.model.coefficients.iter().all(|w| w.is_finite()));
    }
    // Shares that leave nothing for the iterations are refused.
    assert!(DpGcdParams::new(Logistic, NoPenalty)
        .epsilon(1.0)
        .delta(1e-5)
        .passes(10)
        .clip(1.0)
        .variant(Variant::Zcdp)
        .smoothness(Smoothness::PrivateGaussian {
            feature_bounds: None,
            row_norm_bound: Some(Tagged::public(1.0)),
            budget_fraction: 0.6,
            failure_probability: Some(0.05),
        })
        .support_test(0.5)
        .build()
        .is_err());
    // The Laplace variant refuses the Gaussian release.
    let e = base(None)
        .variant(Variant::Laplace)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("Variant::Zcdp"), "{e}");
}
