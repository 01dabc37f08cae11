//! Crate-internal tests of SDCA and DP-SCD: twins, certificates, errors, reproducibility.

use crate::dp_scd::ROW_NORM_BOUND;
use crate::sdca::{run_dual, BatchUpdates, DualLoop, DualProblem, DualScratch, DualState};
use crate::solver::{Streams, Switches};
use crate::tests::{classification, regression};
use crate::*;
use dp_models::dual::DualLoss;
use dp_models::preprocess::normalize_rows;
use dp_models::{Dataset, DenseDesign, Design, Hinge, Logistic, Objective, Squared, L2};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// `data` with every row scaled to L2 norm 1 (the paper's preprocessing).
fn normalised(data: &Dataset<DenseDesign>) -> Dataset<DenseDesign> {
    Dataset::new(normalize_rows(data.x()).unwrap(), data.y().to_vec()).unwrap()
}

fn twin_check<L: DualLoss + Clone>(loss: L, data: &Dataset<DenseDesign>) {
    for updates in [BatchUpdates::Independent, BatchUpdates::Sequential] {
        for batch in [1u64, 3, 7] {
            let private = DpScdParams::new(loss.clone(), L2::new(0.05).unwrap())
                .epsilon(1.0)
                .delta(1e-5)
                .passes(4)
                .batch_size(batch)
                .updates(updates)
                .clip(0.5)
                .build()
                .unwrap()
                .fit_inner(data, Streams::from_seed(11), Switches::OFF)
                .unwrap();
            let twin = SdcaParams::new(loss.clone(), L2::new(0.05).unwrap())
                .passes(4)
                .batch_size(batch)
                .updates(updates)
                .build()
                .unwrap()
                .fit_inner(data, Streams::from_seed(11))
                .unwrap();
            assert_eq!(private.model.iterations, twin.model.iterations);
            assert_eq!(
                private.model.coefficients, twin.model.coefficients,
                "{loss:?} {updates:?} L = {batch}"
            );
            // With the switches on, the noise changes the result (the test can fail).
            let noisy = DpScdParams::new(loss.clone(), L2::new(0.05).unwrap())
                .epsilon(1.0)
                .delta(1e-5)
                .passes(4)
                .batch_size(batch)
                .updates(updates)
                .clip(0.5)
                .build()
                .unwrap()
                .fit_inner(data, Streams::from_seed(11), Switches::ON)
                .unwrap();
            assert_ne!(noisy.model.coefficients, twin.model.coefficients);
        }
    }
}

#[test]
fn dp_scd_without_noise_and_clipping_is_sdca_bit_for_bit() {
    twin_check(Squared::half(), &normalised(&regression(40, 3, 1)));
    twin_check(Logistic, &normalised(&classification(40, 3, 2)));
    twin_check(Hinge, &normalised(&classification(40, 3, 3)));
}

#[test]
fn sdca_ridge_gap_certifies_and_matches_the_reference_solver() {
    let data = regression(60, 4, 5);
    let lambda = 0.1;
    let pen = L2::new(lambda).unwrap();
    for (batch, updates) in [
        (1, BatchUpdates::Independent),
        (6, BatchUpdates::Independent),
        (6, BatchUpdates::Sequential),
    ] {
        let fit = SdcaParams::new(Squared::half(), pen.clone())
            .passes(5_000)
            .batch_size(batch)
            .updates(updates)
            .tolerance(1e-8)
            .record_gap(true)
            .build()
            .unwrap()
            .fit_seeded(&data, 3)
            .unwrap();
        let gap = fit.diagnostics.duality_gap.unwrap();
        assert!(
            gap <= 1e-8 * fit.diagnostics.objective,
            "L = {batch} {updates:?}: gap {gap}"
        );
        assert!(gap >= -1e-12);
        // The trajectory ends where the solver stopped, after many passes.
        assert_eq!(fit.diagnostics.duality_gap_trajectory.last(), Some(&gap));
        assert!(fit.diagnostics.duality_gap_trajectory.len() > 2);
        let sq_loss = Squared::half();
        let obj = Objective::new(&data, &sq_loss, &pen).unwrap();
        let reference = dp_models::solve(&obj, &Default::default()).unwrap();
        for (a, b) in fit.coefficients().iter().zip(&reference.w) {
            assert!((a - b).abs() < 1e-4, "L = {batch}: {a} vs {b}");
        }
        assert!(fit.diagnostics.objective - reference.objective <= gap + 1e-12);
    }
}

#[test]
fn sdca_hinge_and_logistic_close_the_gap() {
    let data = classification(80, 3, 8);
    let lambda = 0.05;
    for (name, gap) in [
        (
            "hinge",
            SdcaParams::new(Hinge, L2::new(lambda).unwrap())
                .passes(300)
                .build()
                .unwrap()
                .fit_seeded(&data, 1)
                .unwrap()
                .diagnostics,
        ),
        (
            "logistic",
            SdcaParams::new(Logistic, L2::new(lambda).unwrap())
                .passes(300)
                .build()
                .unwrap()
                .fit_seeded(&data, 1)
                .unwrap()
                .diagnostics,
        ),
    ]
    .map(|(n, d)| (n, d.duality_gap.unwrap() / d.objective))
    {
        // Hinge: exact steps. Logistic: the dual box margin 1e-4 limits the accuracy.
        let tol = if name == "hinge" { 1e-6 } else { 1e-3 };
        assert!((0.0..=tol).contains(&gap), "{name}: relative gap {gap}");
    }
}

/// With noise and clipping off, the maintained `v` stays `X^T alpha` (up to rounding)
/// for every loss and both update modes.
#[test]
fn maintained_v_is_x_transpose_alpha() {
    let data = normalised(&classification(30, 4, 4));
    let sq: Vec<f64> = (0..30).map(|i| data.x().row_sq_norm(i)).collect();
    for updates in [BatchUpdates::Independent, BatchUpdates::Sequential] {
        let prob = DualProblem {
            x: data.x(),
            y: data.y(),
            loss: &Logistic,
            inv_lambda_n: 1.0 / (0.01 * 30.0),
            sq_norms: &sq,
        };
        let mut st = DualState {
            alpha: vec![0.0; 30],
            v: vec![0.0; 4],
        };
        let mut scratch = DualScratch::new(30, 4, 5);
        let lp = DualLoop {
            batch: 5,
            updates,
            clip: f64::INFINITY,
            poisson: None,
            shuffled: false,
        };
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        run_dual::<_, _, _, ChaCha20Rng>(&prob, lp, &mut st, &mut scratch, 0, 50, &mut rng, None);
        let mut u = vec![0.0; 4];
        data.x().matvec_t(&st.alpha, &mut u);
        for (a, b) in u.iter().zip(&st.v) {
            assert!((a - b).abs() < 1e-12, "{updates:?}: {a} vs {b}");
        }
    }
}

fn base() -> DpScdParams<Squared> {
    DpScdParams::new(Squared::half(), L2::new(0.1).unwrap())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(3)
        .batch_size(4)
        .clip(0.5)
}

fn err_text<T: std::fmt::Debug>(r: std::result::Result<T, OptimError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn bad_inputs_name_the_problem() {
    let data = normalised(&regression(20, 3, 6));
    assert!(err_text(base().epsilon(0.0).build()).contains("epsilon"));
    assert!(err_text(base().epsilon(-1.0).build()).contains("epsilon"));
    assert!(err_text(base().epsilon(f64::NAN).build()).contains("epsilon"));
    assert!(err_text(base().delta(0.0).build()).contains("delta"));
    assert!(err_text(base().delta(1.0).build()).contains("delta"));
    assert!(err_text(base().batch_size(0).build()).contains("batch_size"));
    assert!(
        err_text(base().batch_size(21).build().unwrap().fit_seeded(&data, 1))
            .contains("batch_size")
    );
    assert!(err_text(base().clip(0.0).build()).contains("clip"));
    assert!(err_text(base().passes(0).build()).contains("passes"));
    assert!(err_text(
        DpScdParams::new(Squared::half(), L2::new(0.0).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(1)
            .clip(1.0)
            .build()
    )
    .contains("lambda"));
    assert!(L2::new(-1.0).is_err());
    assert!(err_text(
        SdcaParams::new(Squared::half(), L2::new(0.0).unwrap())
            .passes(1)
            .build()
    )
    .contains("lambda"));
    assert!(err_text(
        SdcaParams::new(Squared::half(), L2::new(1.0).unwrap())
            .passes(1)
            .tolerance(f64::NAN)
            .build()
    )
    .contains("tolerance"));
    // Rows of norm above 1 are refused, naming the row.
    let raw = regression(20, 3, 6);
    let e = err_text(base().build().unwrap().fit_seeded(&raw, 1));
    assert!(e.contains("rows") && e.contains("normalise"), "{e}");
    // Classification labels must be +-1.
    let e = err_text(
        DpScdParams::new(Logistic, L2::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(1)
            .clip(1.0)
            .build()
            .unwrap()
            .fit_seeded(&data, 1),
    );
    assert!(!e.is_empty());
    // NaN data never reaches the solver: the design refuses it.
    assert!(DenseDesign::from_row_major(1, 2, &[f64::NAN, 0.0]).is_err());
    assert!(Dataset::new(
        DenseDesign::from_row_major(1, 2, &[0.5, 0.0]).unwrap(),
        vec![f64::NAN]
    )
    .is_err());
}

#[test]
fn absurd_parameters_are_errors_not_non_finite_coefficients() {
    let data = normalised(&regression(20, 3, 7));
    for clip in [1e300, f64::MAX, 1e200] {
        match base().clip(clip).build() {
            Err(e) => assert!(e.to_string().contains("clip"), "{e}"),
            Ok(s) => match s.fit_seeded(&data, 1) {
                Err(e) => assert!(e.to_string().contains("clip"), "{e}"),
                Ok(f) => assert!(f.coefficients().iter().all(|v| v.is_finite())),
            },
        }
    }
    let e = err_text(
        base()
            .passes(u64::MAX)
            .build()
            .unwrap()
            .fit_seeded(&data, 1),
    );
    assert!(e.contains("passes"), "{e}");
    // A tiny lambda with huge labels: finite or a named error.
    let big = Dataset::new(data.x().clone(), vec![1e300; 20]).unwrap();
    match DpScdParams::new(Squared::half(), L2::new(1e-300).unwrap())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(2)
        .clip(1e10)
        .build()
        .unwrap()
        .fit_seeded(&big, 1)
    {
        Ok(f) => assert!(f.coefficients().iter().all(|v| v.is_finite())),
        Err(e) => assert!(e.to_string().contains("non-finite"), "{e}"),
    }
}

#[test]
fn seeded_fits_reproduce_bit_for_bit() {
    let data = normalised(&classification(50, 3, 9));
    for noise in [DualNoise::EveryRecord, DualNoise::SampledRecords] {
        for updates in [BatchUpdates::Independent, BatchUpdates::Sequential] {
            let s = DpScdParams::new(Hinge, L2::new(0.1).unwrap())
                .epsilon(0.5)
                .delta(1e-5)
                .passes(3)
                .batch_size(5)
                .clip(0.2)
                .updates(updates)
                .dual_noise(noise)
                .build()
                .unwrap();
            let a = s.fit_seeded(&data, 42).unwrap();
            let b = s.fit_seeded(&data, 42).unwrap();
            let c = s.fit_seeded(&data, 43).unwrap();
            assert_eq!(a.model, b.model);
            assert_ne!(a.model.coefficients, c.model.coefficients);
            assert_eq!(a.diagnostics.seed, Some(42));
            assert!(!serde_json::to_string(&a.model).unwrap().contains("seed"));
        }
    }
}

#[test]
fn guarantee_never_exceeds_the_target() {
    let data = normalised(&regression(64, 3, 10));
    for accounting in [Accounting::Paper, Accounting::Exact] {
        for eps in [0.1, 1.0, 4.0] {
            for (batch, updates) in [
                (1, BatchUpdates::Independent),
                (8, BatchUpdates::Independent),
                (64, BatchUpdates::Independent),
                (8, BatchUpdates::Sequential),
            ] {
                let fit = base()
                    .epsilon(eps)
                    .accounting(accounting)
                    .batch_size(batch)
                    .updates(updates)
                    .build()
                    .unwrap()
                    .fit_seeded(&data, 5)
                    .unwrap();
                let pr = fit.privacy().unwrap();
                assert!(pr.guarantee.epsilon <= eps, "{accounting:?} {eps}: {pr:?}");
                assert!(pr.guarantee.epsilon > 0.5 * eps, "calibration too loose");
                assert!(pr.guarantee.proven);
                assert_eq!(pr.guarantee.adjacency, Adjacency::ReplaceOne);
                let SolverPlan::DpScd(plan) = &pr.plan else {
                    panic!("not a DP-SCD plan")
                };
                let r2 = ROW_NORM_BOUND * ROW_NORM_BOUND;
                let want = match updates {
                    BatchUpdates::Independent => 2.0 * 0.5 * (1.0 + r2).sqrt(),
                    BatchUpdates::Sequential => {
                        2.0 * 0.5 * (batch as f64 * (1.0 + batch as f64 * r2)).sqrt()
                    }
                };
                assert_eq!(plan.sensitivity, want);
                assert_eq!(plan.noise_std, plan.noise_multiplier * want);
                assert_eq!(plan.steps, 3 * 64u64.div_ceil(batch));
                if accounting == Accounting::Paper {
                    // The moments accountant's integer orders.
                    let o = plan.calibration.order.unwrap();
                    assert_eq!(o, o.round(), "order {o}");
                }
            }
        }
    }
    // The paper's noise placement reports the same accounting, marked unproven.
    let fit = base()
        .dual_noise(DualNoise::SampledRecords)
        .build()
        .unwrap()
        .fit_seeded(&data, 5)
        .unwrap();
    let g = fit.guarantee().unwrap();
    assert!(!g.proven && g.how.contains("NOT PROVEN") && g.epsilon <= 1.0);
}

/// More noise for SEQDP-SCD than DP-SCD at the same budget (sensitivity grows with L).
#[test]
fn sequential_variant_needs_more_noise() {
    let a = base().batch_size(8).build().unwrap().plan(64).unwrap();
    let b = base()
        .batch_size(8)
        .updates(BatchUpdates::Sequential)
        .build()
        .unwrap()
        .plan(64)
        .unwrap();
    assert_eq!(a.noise_multiplier, b.noise_multiplier);
    assert!(b.noise_std > 2.9 * a.noise_std);
}

/// DP-SCD at a generous budget gets close to the optimum of a ridge problem.
#[test]
fn dp_scd_is_useful_at_a_large_epsilon() {
    let data = normalised(&regression(2_000, 3, 12));
    let pen = L2::new(0.01).unwrap();
    let sq_loss = Squared::half();
    let obj = Objective::new(&data, &sq_loss, &pen).unwrap();
    let best = dp_models::solve(&obj, &Default::default())
        .unwrap()
        .objective;
    let zero = obj.value(&[0.0; 3]).unwrap();
    let fit = DpScdParams::new(Squared::half(), pen)
        .epsilon(10.0)
        .delta(1e-5)
        .passes(10)
        .batch_size(100)
        .clip(0.5)
        .build()
        .unwrap()
        .fit_seeded(&data, 1)
        .unwrap();
    let f = fit.diagnostics.objective;
    assert!(
        f - best < 0.5 * (zero - best),
        "F = {f}, F* = {best}, F(0) = {zero}"
    );
}

/// A clip above the dual box width never acts: the plan caps it at the loss's step
/// bound (so the noise does not grow with it), and leaves the squared loss's alone.
#[test]
fn clip_is_capped_at_the_dual_step_bound() {
    let plan = |clip: f64| {
        DpScdParams::new(Logistic, L2::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(2)
            .batch_size(10)
            .clip(clip)
            .build()
            .unwrap()
            .plan(1000)
            .unwrap()
    };
    let (big, at_bound) = (plan(100.0), plan(Logistic.step_bound().unwrap()));
    assert_eq!(big.clip, Logistic.step_bound().unwrap());
    assert_eq!(big.noise_std, at_bound.noise_std);
    assert!(plan(0.5).noise_std < big.noise_std);
    let hinge = DpScdParams::new(Hinge, L2::new(0.1).unwrap())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(2)
        .clip(3.0)
        .build()
        .unwrap()
        .plan(1000)
        .unwrap();
    assert_eq!(hinge.clip, 1.0);
    let squared = base().clip(3.0).build().unwrap().plan(1000).unwrap();
    assert_eq!(squared.clip, 3.0);
}

/// `DualNoise::Hidden`: the plan charges one Gaussian mechanism per pass at sensitivity
/// `2 C R` (the duals are not released), the batches are shuffled passes, the builder
/// refuses the relations and updates the proof does not cover, a seeded fit reproduces
/// bit for bit, and without noise and clipping every record's dual moves in every pass
/// (each record is in exactly one batch per pass).
#[test]
fn hidden_duals_charge_one_gaussian_per_pass() {
    let data = normalised(&classification(30, 4, 3));
    let params = DpScdParams::new(Logistic, L2::new(0.05).unwrap())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(3)
        .batch_size(7)
        .clip(0.5)
        .dual_noise(DualNoise::Hidden);
    let solver = params.clone().build().unwrap();
    let plan = solver.plan(30).unwrap();
    assert_eq!(plan.sampling, crate::plan::BatchSampling::Shuffled);
    assert_eq!(plan.steps, 3 * 5); // ceil(30 / 7) = 5 batches per pass
    assert_eq!(plan.sensitivity, 2.0 * 0.5 * ROW_NORM_BOUND);
    assert_eq!(plan.dual_noise, "hidden");
    let fit = solver.fit_seeded(&data, 4).unwrap();
    let report = fit.privacy().unwrap();
    assert_eq!(
        report.ledger.entries(),
        &[dp_accounting::ledger::Charge::Gaussian {
            noise_multiplier: plan.noise_multiplier,
            count: 3,
        }]
    );
    assert!(report.guarantee.proven && report.guarantee.epsilon <= 1.0);
    let again = solver.fit_seeded(&data, 4).unwrap();
    let bits = |f: &Fitted| -> Vec<u64> { f.coefficients().iter().map(|v| v.to_bits()).collect() };
    assert_eq!(bits(&fit), bits(&again));
    assert_ne!(bits(&fit), bits(&solver.fit_seeded(&data, 5).unwrap()));
    for refused in [
        params.clone().adjacency(Adjacency::AddRemove).public_n(30),
        params.clone().updates(BatchUpdates::Sequential),
    ] {
        assert!(err_text(refused.build()).contains("Hidden"));
    }
    // One pass without noise or clipping: every dual variable takes its step.
    let prob_sq: Vec<f64> = (0..30).map(|i| data.x().row_sq_norm(i)).collect();
    let prob = DualProblem {
        x: data.x(),
        y: data.y(),
        loss: &Logistic,
        inv_lambda_n: 1.0 / (0.05 * 30.0),
        sq_norms: &prob_sq,
    };
    let mut st = DualState {
        alpha: vec![0.0; 30],
        v: vec![0.0; 4],
    };
    let mut scratch = DualScratch::new(30, 4, 7);
    let lp = DualLoop {
        batch: 7,
        updates: BatchUpdates::Independent,
        clip: f64::INFINITY,
        poisson: None,
        shuffled: true,
    };
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    run_dual::<_, _, _, ChaCha20Rng>(&prob, lp, &mut st, &mut scratch, 0, 5, &mut rng, None);
    assert!(st.alpha.iter().all(|&a| a != 0.0), "{:?}", st.alpha);
}
