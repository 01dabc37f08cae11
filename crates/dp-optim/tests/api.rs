//! Public API: parameter validation, plans against independently computed noise
//! multipliers, reports and ledgers.

use dp_models::constants::Tagged;
use dp_models::{Dataset, DenseDesign, Hinge, Logistic, Squared, L1, L2};
use dp_optim::*;

fn data(n: usize, p: usize) -> Dataset<DenseDesign> {
    let x: Vec<f64> = (0..n * p)
        .map(|k| (((k * 7919) % 1009) as f64 / 504.5 - 1.0) * (1 + k % p) as f64)
        .collect();
    let y = (0..n).map(|i| x[i * p] - 0.3 * x[i * p + 1]).collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn lasso() -> DpCdParams<Squared, L1> {
    DpCdParams::new(Squared::full(), L1::new(0.1).unwrap())
        .epsilon(1.0)
        .delta(1e-6)
        .passes(2)
        .clip(1.0)
        .allow_non_private_constants(true)
}

fn message<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn bad_parameters_are_errors_that_name_the_problem() {
    assert!(message(lasso().epsilon(0.0).build()).contains("epsilon"));
    assert!(message(lasso().epsilon(-1.0).build()).contains("epsilon"));
    assert!(message(lasso().epsilon(f64::NAN).build()).contains("epsilon"));
    assert!(message(lasso().delta(0.0).build()).contains("delta"));
    assert!(message(lasso().delta(1.0).build()).contains("delta"));
    assert!(message(lasso().passes(0).build()).contains("passes"));
    assert!(message(lasso().clip(0.0).build()).contains("clip"));
    assert!(message(lasso().step_scale(f64::INFINITY).build()).contains("step_scale"));
    let e = message(
        DpCdParams::new(Hinge, L2::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(1)
            .clip(1.0)
            .build(),
    );
    assert!(e.contains("hinge") && e.contains("smooth"), "{e}");
    let e = message(
        DpCdParams::new(Squared::full(), L1::new(0.1).unwrap())
            .delta(1e-6)
            .passes(1)
            .clip(1.0)
            .build(),
    );
    assert!(e.contains("epsilon"), "{e}");
    assert!(message(
        DpSgdParams::new(Logistic, L2::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(2.0)
            .passes(1)
            .clip(1.0)
            .build()
    )
    .contains("delta"));
    assert!(message(
        CdParams::new(Squared::full(), L1::new(0.1).unwrap())
            .passes(0)
            .build()
    )
    .contains("passes"));
}

#[test]
fn data_problems_are_errors() {
    // NaN in the data is refused when the dataset is built.
    let e = DenseDesign::from_row_major(2, 1, &[1.0, f64::NAN]).unwrap_err();
    assert!(e.to_string().contains("non-finite"), "{e}");
    let d = data(20, 3);
    let solver = lasso().initial_point(vec![0.0; 4]).build().unwrap();
    assert!(message(solver.fit_seeded(&d, 1)).contains("initial point"));
    let solver = lasso()
        .smoothness(Smoothness::Given(Tagged::public(vec![1.0; 2])))
        .build()
        .unwrap();
    assert!(message(solver.fit_seeded(&d, 1)).contains("shape"));
    let solver = lasso()
        .smoothness(Smoothness::Given(Tagged::public(vec![1.0, 0.0, 1.0])))
        .build()
        .unwrap();
    assert!(message(solver.fit_seeded(&d, 1)).contains("M_1"));
    // Logistic needs labels in {-1, +1}.
    let solver = DpCdParams::new(Logistic, L2::new(0.1).unwrap())
        .epsilon(1.0)
        .delta(1e-6)
        .passes(1)
        .clip(1.0)
        .allow_non_private_constants(true)
        .build()
        .unwrap();
    assert!(message(solver.fit_seeded(&d, 1)).contains("label"));
}

#[test]
fn non_private_constants_need_an_explicit_opt_in() {
    let d = data(30, 3);
    let refused = lasso().allow_non_private_constants(false).build().unwrap();
    let e = message(refused.fit_seeded(&d, 1));
    assert!(e.contains("without privacy"), "{e}");
    let given = lasso()
        .allow_non_private_constants(false)
        .smoothness(Smoothness::Given(Tagged::data_non_private(vec![1.0; 3])))
        .build()
        .unwrap();
    assert!(given.fit_seeded(&d, 1).is_err());
    // Public constants need no opt-in.
    let public = lasso()
        .allow_non_private_constants(false)
        .smoothness(Smoothness::Given(Tagged::public(vec![1.0, 2.0, 3.0])))
        .build()
        .unwrap();
    let r = public.fit_seeded(&d, 1).unwrap();
    assert_eq!(r.coefficients.len(), 3);
    let sgd = DpSgdParams::new(Squared::full(), L1::new(0.1).unwrap())
        .epsilon(1.0)
        .delta(1e-6)
        .passes(1)
        .clip(1.0)
        .build()
        .unwrap();
    assert!(message(sgd.fit_seeded(&d, 1)).contains("without privacy"));
}

/// Noise multipliers against values computed independently (Python, 50-digit decimal):
/// Eq. (18) inverted in closed form, `s = sqrt(g/2) (sqrt(a + eps) + sqrt(a)) / eps`
/// with `a = ln(1/delta)`, `g = passes * p`; and the GDP multiplier by bisection on the
/// analytic Gaussian curve `delta(eps; mu = sqrt(g)/s)`.
#[test]
fn plans_match_independent_noise_multipliers() {
    let cases = [
        // (n, p, eps, passes, s_paper, s_exact)
        (
            20640usize,
            8usize,
            1.0,
            2u64,
            25.529216978287394,
            21.406886336810803,
        ),
        (20640, 8, 1.0, 50, 127.64608489143697, 107.03443168405401),
        (
            1000,
            1000,
            10.0,
            2,
            27.186_214_804_876_43,
            24.198138753517256,
        ),
    ];
    for (n, p, eps, passes, s_paper, s_exact) in cases {
        let delta = 1.0 / (n as f64 * n as f64);
        for (acc, want) in [(Accounting::Paper, s_paper), (Accounting::Exact, s_exact)] {
            let solver = DpCdParams::new(Squared::full(), L1::new(0.1).unwrap())
                .epsilon(eps)
                .delta(delta)
                .passes(passes)
                .clip(2.0)
                .accounting(acc)
                .build()
                .unwrap();
            let m = vec![1.0; p];
            let plan = solver
                .plan(n, &m, dp_models::constants::Provenance::PublicBound)
                .unwrap();
            let s = plan.noise_multiplier;
            // Never below the exact multiplier (no overshoot), and close to it.
            assert!(s >= want * (1.0 - 1e-9), "{acc:?} n={n}: {s} < {want}");
            assert!(s <= want * (1.0 + 1e-4), "{acc:?} n={n}: {s} >> {want}");
            assert_eq!(plan.releases, passes * p as u64);
            assert!(plan.calibration.epsilon <= eps);
            // Balanced M: C_j = C / sqrt(p), sensitivity 2 C_j / n, std = s * sensitivity.
            let cj = 2.0 / (p as f64).sqrt();
            assert!((plan.clip_thresholds[0] - cj).abs() < 1e-12 * cj);
            assert!((plan.sensitivities[3] - 2.0 * cj / n as f64).abs() < 1e-12 * cj);
            assert!((plan.noise_std[1] - s * 2.0 * cj / n as f64).abs() < 1e-12 * s * cj);
        }
    }
}

#[test]
fn report_carries_plan_ledger_and_guarantee() {
    let d = data(200, 3);
    for acc in [Accounting::Paper, Accounting::Exact] {
        let solver = lasso().accounting(acc).passes(3).build().unwrap();
        let r = solver.fit_seeded(&d, 5).unwrap();
        assert_eq!(r.algorithm, "dp-cd");
        assert_eq!(r.iterations, 9);
        assert_eq!(r.seed, Some(5));
        let privacy = r.privacy.unwrap();
        assert!(privacy.guarantee.epsilon <= 1.0);
        assert!(
            privacy.guarantee.epsilon > 0.9,
            "{}",
            privacy.guarantee.epsilon
        );
        assert_eq!(privacy.guarantee.adjacency, Adjacency::ReplaceOne);
        assert_eq!(privacy.ledger.entries().len(), 1);
        let SolverPlan::DpCd(plan) = privacy.plan else {
            panic!("not a DP-CD plan")
        };
        assert_eq!(Some(plan.noise_multiplier), r.noise_multiplier);
        // M_j proportional to the column scales 1, 2, 3: C_j = sqrt(M_j / tr M) C.
        let tr: f64 = plan.smoothness.iter().sum();
        for j in 0..3 {
            let cj = (plan.smoothness[j] / tr).sqrt();
            assert!((plan.clip_thresholds[j] - cj).abs() < 1e-12);
        }
        let json = serde_json::to_string(&privacy.ledger).unwrap();
        assert!(json.contains("Gaussian"));
    }
}
