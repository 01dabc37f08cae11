//! Tests of the Frank-Wolfe solvers: twins, ledger truth, named errors, reproducibility,
//! utility trends and the distributed protocol's invariants.

use crate::dist_fw::{
    run_protocol, BcfwParams, DistDpFwParams, Downlink, Party, PartyMechanisms, RadiusMode, Server,
    Sketch, UplinkFault,
};
use crate::dp_fw::DpFwParams;
use crate::fw::{FwParams, FwStep};
use crate::fw_plan::FwPlan;
use crate::plan::SolverPlan;
use crate::solver::{Solver, Switches};
use crate::{Accounting, OptimError};
use dp_models::constraint::{frank_wolfe_reference, ConstraintSet, L1Ball, L1BallProduct};
use dp_models::{Dataset, DenseDesign, Design, Squared};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Synthetic sparse LASSO: `x_ij` uniform in [-1, 1], 3 active features with l1 norm
/// 1, labels clipped to [-1, 1].
fn lasso(n: usize, p: usize, seed: u64) -> Dataset<DenseDesign> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let data: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = DenseDesign::from_row_major(n, p, &data).unwrap();
    let y = (0..n)
        .map(|i| {
            let r = x.row(i);
            (0.5 * r[0] - 0.3 * r[1] + 0.2 * r[2] + 0.05 * rng.random_range(-1.0..1.0))
                .clamp(-1.0, 1.0)
        })
        .collect();
    Dataset::new(x, y).unwrap()
}

fn dp_fw(eps: f64, t: u64) -> DpFwParams<Squared> {
    DpFwParams::new(Squared::half(), 1.0)
        .epsilon(eps)
        .delta(1e-6)
        .iterations(t)
        .feature_bound(1.0)
        .label_bound(1.0)
}

#[test]
fn fw_gap_certifies_and_line_search_converges() {
    let data = lasso(80, 6, 1);
    let set = L1Ball::new(0.5, 6).unwrap();
    let star =
        frank_wolfe_reference(data.x(), data.y(), &Squared::half(), &set, 1e-10, 100_000).unwrap();
    for (step, t) in [(FwStep::Standard, 200), (FwStep::LineSearch, 200)] {
        let fit = FwParams::new(Squared::half(), set.clone())
            .iterations(t)
            .step(step)
            .build()
            .unwrap()
            .fit_seeded(&data, 0)
            .unwrap();
        let gap = fit.diagnostics.duality_gap.unwrap();
        let excess = fit.diagnostics.objective - star.objective;
        assert!(excess >= -1e-9 && excess <= gap + 1e-12, "{excess} {gap}");
        assert!(set.contains(fit.coefficients(), 1e-12));
        // Jaggi 2013: F(w_t) - F* <= 2 C_f / (t + 2) with C_f <= (c/n) max ||X d||^2,
        // ||d||_1 <= 2r and |x_ij| <= 1 give C_f <= 4 r^2 = 1.
        assert!(excess <= 2.0 / (t as f64 + 2.0), "{excess}");
    }
}

#[test]
fn private_fw_with_noise_off_is_its_twin() {
    let data = lasso(50, 8, 2);
    for acc in [Accounting::Paper, Accounting::Exact] {
        let private = dp_fw(1.0, 40)
            .accounting(acc)
            .switches(Switches::OFF)
            .build()
            .unwrap()
            .fit_seeded(&data, 7)
            .unwrap();
        let twin = FwParams::new(Squared::half(), L1Ball::new(1.0, 8).unwrap())
            .iterations(40)
            .build()
            .unwrap()
            .fit_seeded(&data, 7)
            .unwrap();
        assert_eq!(private.coefficients(), twin.coefficients());
        assert!(private.model.privacy.is_none());
        // With noise on, the selections differ from the twin's somewhere.
        let noisy = dp_fw(0.01, 40)
            .accounting(acc)
            .build()
            .unwrap()
            .fit_seeded(&data, 7)
            .unwrap();
        assert_ne!(noisy.coefficients(), twin.coefficients());
    }
}

#[test]
fn guarantees_equal_the_ledger_and_never_exceed_the_target() {
    let data = lasso(40, 5, 3);
    for acc in [Accounting::Paper, Accounting::Exact] {
        for (eps, t) in [(0.1, 10), (1.0, 100), (8.0, 1000)] {
            let fit = dp_fw(eps, t)
                .accounting(acc)
                .build()
                .unwrap()
                .fit_seeded(&data, 1)
                .unwrap();
            let pr = fit.privacy().unwrap();
            assert!(
                pr.guarantee.epsilon <= eps,
                "{} > {eps}",
                pr.guarantee.epsilon
            );
            assert!(
                pr.guarantee.epsilon > 0.9 * eps,
                "calibration wastes budget"
            );
            let acct = match acc {
                Accounting::Paper => dp_accounting::calibrate::Accountant::Composition(
                    dp_accounting::composition::CompositionMethod::Advanced,
                ),
                _ => dp_accounting::calibrate::Accountant::Zcdp,
            };
            let d = dp_accounting::Delta::new(1e-6).unwrap();
            assert_eq!(pr.guarantee.epsilon, pr.ledger.guarantee(d, acct).unwrap());
        }
    }
    let dist = DistDpFwParams::new(1.0)
        .epsilon(0.5)
        .delta(1e-6)
        .parties(2)
        .iterations(20)
        .sketch_dim(8)
        .feature_bound(1.0)
        .label_bound(1.0)
        .build()
        .unwrap()
        .fit_seeded(&data, 1)
        .unwrap();
    let pr = dist.privacy().unwrap();
    let d = dp_accounting::Delta::new(1e-6).unwrap();
    let ledger_eps = pr
        .ledger
        .guarantee(d, dp_accounting::calibrate::Accountant::Zcdp)
        .unwrap();
    assert_eq!(pr.guarantee.epsilon, ledger_eps);
    assert!(ledger_eps <= 0.5);
    let SolverPlan::DpFw(FwPlan::Distributed(plan)) = &pr.plan else {
        panic!("wrong plan")
    };
    // One party alone spends less than the whole transcript.
    assert!(plan.per_party_guarantee.epsilon < pr.guarantee.epsilon);
    assert_eq!(plan.uplink_floats_per_party, 20 * 8);
}

#[test]
fn bad_inputs_are_named_errors() {
    let name = |e: OptimError| e.to_string();
    let name2 = |e: &OptimError| e.to_string();
    assert!(name(dp_fw(0.0, 5).build().unwrap_err()).contains("epsilon"));
    assert!(name(dp_fw(-1.0, 5).build().unwrap_err()).contains("epsilon"));
    for d in [0.0, 1.0, 1.5] {
        let e = dp_fw(1.0, 5).delta(d).build().unwrap_err();
        assert!(name(e).contains("delta"));
    }
    let e = DpFwParams::new(Squared::half(), 0.0)
        .epsilon(1.0)
        .delta(1e-6)
        .feature_bound(1.0)
        .label_bound(1.0)
        .build()
        .unwrap_err();
    assert!(name(e).contains("radius"));
    assert!(name(dp_fw(1.0, 0).build().unwrap_err()).contains("iterations"));
    // Data outside the public bounds: refused, naming the bound.
    let x = DenseDesign::from_row_major(2, 2, &[1.0, 2.0, 0.0, 0.5]).unwrap();
    let data = Dataset::new(x, vec![0.5, 0.5]).unwrap();
    let e = dp_fw(1.0, 5)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap_err();
    assert!(name(e).contains("feature_bound"));
    let x = DenseDesign::from_row_major(2, 2, &[1.0, 0.2, 0.0, 0.5]).unwrap();
    let data = Dataset::new(x, vec![0.5, 3.0]).unwrap();
    let e = dp_fw(1.0, 5)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap_err();
    assert!(name(e).contains("label_bound"));
    // NaN data cannot even be built into a dataset; NaN labels are refused.
    assert!(DenseDesign::from_row_major(1, 1, &[f64::NAN]).is_err());
    let x = DenseDesign::from_row_major(1, 1, &[1.0]).unwrap();
    assert!(Dataset::new(x, vec![f64::NAN]).is_err());
    // K = 0 and K > p.
    let data = lasso(10, 3, 0);
    let dist = |k: usize| {
        DistDpFwParams::new(1.0)
            .epsilon(1.0)
            .delta(1e-6)
            .parties(k)
            .sketch_dim(4)
            .feature_bound(1.0)
            .label_bound(1.0)
    };
    assert!(name(dist(0).build().unwrap_err()).contains("parties"));
    let e = dist(4).build().unwrap().fit_seeded(&data, 0).unwrap_err();
    assert!(name2(&e).contains("parties"), "{e}");
    let e = dist(1)
        .tau(5)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap_err();
    assert!(name2(&e).contains("tau"), "{e}");
    let e = dist(1).epsilon(0.0).build().unwrap_err();
    assert!(name(e).contains("epsilon"));
    let e = BcfwParams::new(Squared::half(), 1.0)
        .parties(4)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap_err();
    assert!(name2(&e).contains("parties"), "{e}");
}

#[test]
fn seeded_runs_reproduce_bit_for_bit() {
    let data = lasso(30, 6, 4);
    let a = dp_fw(1.0, 30).build().unwrap();
    assert_eq!(
        a.fit_seeded(&data, 11).unwrap().model,
        a.fit_seeded(&data, 11).unwrap().model
    );
    assert_ne!(
        a.fit_seeded(&data, 11).unwrap().model.coefficients,
        a.fit_seeded(&data, 12).unwrap().model.coefficients
    );
    let d = DistDpFwParams::new(1.0)
        .epsilon(1.0)
        .delta(1e-6)
        .parties(3)
        .tau(1)
        .iterations(15)
        .sketch_dim(6)
        .feature_bound(1.0)
        .label_bound(1.0)
        .build()
        .unwrap();
    assert_eq!(
        d.fit_seeded(&data, 5).unwrap().model,
        d.fit_seeded(&data, 5).unwrap().model
    );
}

#[test]
fn private_fw_excess_risk_decreases_with_n_epsilon() {
    let data = lasso(400, 10, 5);
    let set = L1Ball::new(1.0, 10).unwrap();
    let star =
        frank_wolfe_reference(data.x(), data.y(), &Squared::half(), &set, 1e-9, 100_000).unwrap();
    let mean_excess = |eps: f64| {
        let solver = dp_fw(eps, 30)
            .accounting(Accounting::Exact)
            .build()
            .unwrap();
        (0..8)
            .map(|s| solver.fit_seeded(&data, s).unwrap().diagnostics.objective - star.objective)
            .sum::<f64>()
            / 8.0
    };
    let (lo, mid, hi) = (mean_excess(0.05), mean_excess(1.0), mean_excess(100.0));
    assert!(lo > mid && mid > hi, "{lo} {mid} {hi}");
    assert!(hi >= 0.0);
}

fn dist_noise_off(k: usize, tau: usize, m: usize, t: u64) -> DistDpFwParams {
    DistDpFwParams::new(0.5)
        .epsilon(1.0)
        .delta(1e-6)
        .parties(k)
        .tau(tau)
        .iterations(t)
        .sketch_dim(m)
        .feature_bound(1.0)
        .label_bound(1.0)
        .switches(Switches::OFF)
}

#[test]
fn sketched_protocol_without_noise_tracks_bcfw() {
    let data = lasso(60, 8, 6);
    let bcfw = BcfwParams::new(Squared::half(), 0.5)
        .parties(2)
        .tau(2)
        .iterations(60)
        .build()
        .unwrap()
        .fit_seeded(&data, 3)
        .unwrap();
    let star = frank_wolfe_reference(
        data.x(),
        data.y(),
        &Squared::half(),
        &L1BallProduct::contiguous(0.5, 8, 2).unwrap(),
        1e-9,
        100_000,
    )
    .unwrap();
    let excess = |f: f64| f - star.objective;
    // m much larger than n: J^T J is close to the identity.
    let big = dist_noise_off(2, 2, 6000, 60)
        .build()
        .unwrap()
        .fit_seeded(&data, 3)
        .unwrap();
    let small = dist_noise_off(2, 2, 3, 60)
        .build()
        .unwrap()
        .fit_seeded(&data, 3)
        .unwrap();
    let (eb, es, e0) = (
        excess(big.diagnostics.objective),
        excess(small.diagnostics.objective),
        excess(bcfw.diagnostics.objective),
    );
    assert!(
        (eb - e0).abs() <= 0.1 * e0 + 1e-3,
        "sketched {eb} vs bcfw {e0}"
    );
    assert!(es > eb, "a tiny sketch should hurt: {es} vs {eb}");
    // K = 1, tau = p and a huge sketch: the same vertices as full Frank-Wolfe, so the
    // iterates agree up to the sketch's error.
    let fw = FwParams::new(Squared::half(), L1Ball::new(0.5, 8).unwrap())
        .iterations(30)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap();
    let one = dist_noise_off(1, 8, 6000, 30)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap();
    let bc1 = BcfwParams::new(Squared::half(), 0.5)
        .iterations(30)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap();
    assert_eq!(bc1.coefficients(), fw.coefficients());
    let diff: f64 = one
        .coefficients()
        .iter()
        .zip(fw.coefficients())
        .map(|(a, b)| (a - b).abs())
        .sum();
    assert!(diff < 0.05, "{diff}");
}

/// Runs the protocol by hand (no noise) and checks the server's invariants.
fn manual_protocol(k: usize, m: usize, t: u64, radius_mode: RadiusMode) -> (Server, Vec<Party>) {
    let data = lasso(40, 6, 7);
    let (x, y) = (data.x(), data.y());
    let eta = 0.8;
    let r = match radius_mode {
        RadiusMode::PerParty => eta,
        RadiusMode::Split => eta / k as f64,
    };
    let set = L1BallProduct::contiguous(r, 6, k).unwrap();
    let sketch = Sketch::generate(m, 40, 99).unwrap();
    let mech = PartyMechanisms {
        selection: None,
        sketch_noise: None,
        residual_clip: f64::INFINITY,
    };
    let mut parties: Vec<Party> = set
        .blocks()
        .iter()
        .enumerate()
        .map(|(id, b)| {
            let cols = b.iter().map(|&j| x.col(j).to_vec()).collect();
            Party::new(
                id,
                b.clone(),
                cols,
                y.to_vec(),
                sketch.clone(),
                1,
                mech.clone(),
                t,
                ChaCha20Rng::seed_from_u64(id as u64),
                ChaCha20Rng::seed_from_u64(100 + id as u64),
            )
            .unwrap()
        })
        .collect();
    let mut server = Server::new(6, m, k, r, 1.0 / 3.0);
    for _ in 0..t {
        run_protocol(&mut server, &mut parties, 1).unwrap();
        // q_hat = (1/n) J A x at every round (noise off).
        let mut ax = vec![0.0; 40];
        x.matvec(server.x(), &mut ax);
        let mut q = vec![0.0; m];
        sketch.apply(&ax, 1.0 / 40.0, &mut q);
        for (a, b) in q.iter().zip(server.q_hat()) {
            assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
        }
        assert!(set.contains(server.x(), 1e-12));
    }
    let total: f64 = server.x().iter().map(|v| v.abs()).sum();
    assert!(total <= k as f64 * r + 1e-12);
    (server, parties)
}

#[test]
fn protocol_tracks_q_and_counts_uplink_exactly() {
    for (k, m, t) in [(1, 5, 7), (2, 3, 11), (3, 4, 9)] {
        for mode in [RadiusMode::PerParty, RadiusMode::Split] {
            let (server, _) = manual_protocol(k, m, t, mode);
            assert_eq!(server.uplink_floats(), vec![t * m as u64; k].as_slice());
            assert_eq!(server.uplink_indices(), vec![t; k].as_slice());
            assert_eq!(
                server.uplink_floats().iter().sum::<u64>(),
                (k as u64) * t * m as u64
            );
        }
    }
    // A malformed round is refused.
    let mut server = Server::new(3, 2, 2, 1.0, 1.0);
    let down: Downlink = server.downlink();
    assert_eq!(down.round, 0);
    let up = crate::dist_fw::Uplink {
        party: 0,
        round: 0,
        index: 1,
        sign: 1,
        sketch: vec![0.0; 2],
    };
    assert!(server.receive(std::slice::from_ref(&up)).is_err());
    assert!(server.receive(&[up.clone(), up]).is_err());
}

#[test]
fn server_refuses_features_outside_the_senders_block_and_non_finite_sketches() {
    let blocks = vec![vec![0, 1], vec![2]];
    let up = |party: usize, index: usize, z: f64| crate::dist_fw::Uplink {
        party,
        round: 0,
        index,
        sign: 1,
        sketch: vec![z; 2],
    };
    // Party 0 naming party 1's feature 2 is refused, with both in the message.
    let mut server = Server::new(3, 2, 2, 1.0, 1.0).with_blocks(blocks.clone());
    let err = server.receive(&[up(0, 2, 0.0), up(1, 2, 0.0)]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("party 0") && msg.contains("index 2 is not one of the party's features"),
        "{msg}"
    );
    assert!(
        matches!(&err, OptimError::Uplink(r) if r.party == 0 && r.round == 0 && r.kind == UplinkFault::Malformed),
        "{err:?}"
    );
    assert_eq!(
        server.x(),
        &[0.0; 3],
        "nothing is applied from a refused round"
    );
    // A non-finite sketch entry is refused.
    let err = server
        .receive(&[up(0, 1, f64::NAN), up(1, 2, 0.0)])
        .unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
    // Uplinks come in party order, each for the server's round: party 1's uplink in
    // party 0's place, or an uplink for another round, is out of round.
    for bad in [
        vec![up(1, 2, 0.0), up(0, 1, 0.0)],
        vec![
            crate::dist_fw::Uplink {
                round: 3,
                ..up(0, 1, 0.0)
            },
            up(1, 2, 0.0),
        ],
    ] {
        let err = server.receive(&bad).unwrap_err();
        assert!(
            matches!(&err, OptimError::Uplink(r) if r.party == 0 && r.kind == UplinkFault::OutOfRound),
            "{err:?}"
        );
    }
    // A sign other than +-1 and a sketch of the wrong length are malformed.
    let mut bad_sign = up(1, 2, 0.0);
    bad_sign.sign = 0;
    let mut short = up(1, 2, 0.0);
    short.sketch.pop();
    for (bad, what) in [
        (bad_sign, "sign 0 is not +-1"),
        (short, "sketch has 1 entries, expected m = 2"),
    ] {
        let err = server.receive(&[up(0, 1, 0.0), bad]).unwrap_err();
        assert!(
            matches!(&err, OptimError::Uplink(r) if r.party == 1 && r.kind == UplinkFault::Malformed && r.detail == what),
            "{err:?}"
        );
    }
    assert_eq!(
        server.x(),
        &[0.0; 3],
        "nothing is applied from a refused round"
    );
    // The same round with every feature in its sender's block goes through.
    server.receive(&[up(0, 1, 0.5), up(1, 2, 0.0)]).unwrap();
    assert!(server.x()[1] != 0.0 && server.x()[2] != 0.0);
    // Without blocks the server cannot tell (the old behaviour, kept for callers that do
    // not know the plan).
    let mut open = Server::new(3, 2, 2, 1.0, 1.0);
    open.receive(&[up(0, 2, 0.0), up(1, 2, 0.0)]).unwrap();
}

#[test]
fn one_feature_sign_test() {
    // y = x with one positive feature: the gradient at 0 is negative, so x moves up.
    let x = DenseDesign::from_row_major(4, 1, &[0.5, -0.5, 1.0, -1.0]).unwrap();
    let data = Dataset::new(x, vec![0.5, -0.5, 1.0, -1.0]).unwrap();
    let fit = dist_noise_off(1, 1, 500, 5)
        .build()
        .unwrap()
        .fit_seeded(&data, 0)
        .unwrap();
    assert!(fit.coefficients()[0] > 0.0);
    let fit = dp_fw(1.0, 5)
        .switches(Switches::OFF)
        .build()
        .unwrap()
        .fit_seeded(&data, 0);
    assert!(fit.unwrap().coefficients()[0] > 0.0);
}

/// Algorithm 2 at the paper's nominal calibration: Laplace selection at the paper's
/// scale, Gaussian sketch noise at `sigma(J) sqrt(KT) ...`; the ledger charges what these
/// scales cost under our sensitivities, the guarantee is that ledger's (not fitted to the
/// target), and it says that the paper's own claim is not proven.
#[test]
fn algorithm_2_at_the_paper_calibration_reports_what_its_scales_cost() {
    use crate::dist_fw::DistCalibration;
    let data = lasso(200, 6, 9);
    let fit = DistDpFwParams::new(1.0)
        .epsilon(1.0)
        .delta(1e-4)
        .parties(2)
        .tau(2)
        .iterations(10)
        .sketch_dim(8)
        .feature_bound(1.0)
        .label_bound(1.0)
        .calibration(DistCalibration::PaperNominal)
        .build()
        .unwrap()
        .fit_seeded(&data, 3)
        .unwrap();
    let pr = fit.privacy().unwrap();
    assert!(pr.guarantee.how.contains("nominal"), "{}", pr.guarantee.how);
    assert!(
        pr.guarantee.how.contains("NOT PROVEN"),
        "{}",
        pr.guarantee.how
    );
    let SolverPlan::DpFw(FwPlan::Distributed(plan)) = &pr.plan else {
        panic!("not a distributed plan")
    };
    assert_eq!(plan.selection_scale, plan.paper_laplace_scale);
    // The charged eps0 is what the Laplace scale gives for the scores' sensitivity.
    assert!(
        (plan.selection_epsilon - 2.0 * plan.score_sensitivity / plan.selection_scale).abs()
            < 1e-12
    );
    // The sketch's leading singular value is at least its largest column norm.
    let sigma_min =
        plan.sketch_max_column_norm * (2.0f64 * 10.0).sqrt() * (2.0 * ((1e4f64).ln() + 0.5)).sqrt()
            / (200.0 * 0.5);
    assert!(
        plan.sketch_noise_std >= sigma_min * (1.0 - 1e-9),
        "{} vs {sigma_min}",
        plan.sketch_noise_std
    );
    let ledger = pr
        .ledger
        .guarantee(
            dp_accounting::Delta::new(1e-4).unwrap(),
            dp_accounting::calibrate::Accountant::Zcdp,
        )
        .unwrap();
    assert_eq!(pr.guarantee.epsilon, ledger);
    assert!(fit.coefficients().iter().all(|w| w.is_finite()));
}
