//! A fit through the run-time choices of `dp_models::choice` (`AnyLoss`, `AnyPenalty`,
//! `AnyDualLoss`) is bit-identical to the typed fit, for every loss, penalty and solver:
//! the wrappers forward every trait method, the vectorised kernels included, so the
//! user's path (command line, Python) runs the library's code, not a scalar fallback
//! with another summation order.

use dp_models::choice::{AnyDualLoss, AnyLoss, AnyPenalty, LossKind, PenaltyKind};
use dp_models::constants::Tagged;
use dp_models::{
    Dataset, DenseDesign, DualLoss, ElasticNet, Huber, Logistic, Loss, NoPenalty, Penalty, Squared,
    SquaredHinge, L1, L2,
};
use dp_optim::dp_gcd::{DpGcdParams, Variant};
use dp_optim::{
    CdParams, DpCdParams, DpScdParams, DpSgdParams, GlobalSmoothness, SdcaParams, Smoothness,
    Solver,
};

fn data(row_norm_one: bool) -> Dataset<DenseDesign> {
    let (n, p) = (67, 5);
    let mut x = Vec::with_capacity(n * p);
    for i in 0..n {
        for j in 0..p {
            let v = (((i * 31 + j * 17) % 23) as f64 / 11.0 - 1.0) * 0.9;
            x.push(if row_norm_one {
                v / (p as f64).sqrt()
            } else {
                v
            });
        }
    }
    let y = (0..n)
        .map(|i| if (i * 7 + 3) % 5 < 2 { 1.0 } else { -1.0 })
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn bits(w: &[f64]) -> Vec<u64> {
    w.iter().map(|v| v.to_bits()).collect()
}

fn primal_fits<L: Loss + Clone, P: Penalty + Clone>(
    loss: L,
    pen: P,
    d: &Dataset<DenseDesign>,
) -> Vec<(&'static str, Vec<u64>)> {
    let p = d.n_features();
    let c = loss.curvature_bound().unwrap();
    let m = || Smoothness::Given(Tagged::public(vec![c; p]));
    let mut out = Vec::new();
    let cd = CdParams::new(loss.clone(), pen.clone())
        .passes(3)
        .smoothness(m())
        .build()
        .unwrap();
    out.push(("cd", bits(cd.fit_seeded(d, 5).unwrap().coefficients())));
    let dpcd = DpCdParams::new(loss.clone(), pen.clone())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(3)
        .smoothness(m())
        .build()
        .unwrap();
    out.push(("dp-cd", bits(dpcd.fit_seeded(d, 5).unwrap().coefficients())));
    let gcd = DpGcdParams::new(loss.clone(), pen.clone())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(3)
        .variant(Variant::Zcdp)
        .smoothness(m())
        .build()
        .unwrap();
    out.push(("dp-gcd", bits(gcd.fit_seeded(d, 5).unwrap().coefficients())));
    let sgd = DpSgdParams::new(loss, pen)
        .epsilon(1.0)
        .delta(1e-5)
        .passes(3)
        .batch_size(16)
        .smoothness(GlobalSmoothness::Given(Tagged::public(c * p as f64)))
        .build()
        .unwrap();
    out.push(("dp-sgd", bits(sgd.fit_seeded(d, 5).unwrap().coefficients())));
    out
}

fn typed_penalties() -> Vec<(PenaltyKind, f64)> {
    vec![
        (PenaltyKind::None, 0.0),
        (PenaltyKind::L1, 0.01),
        (PenaltyKind::L2, 0.01),
        (PenaltyKind::ElasticNet, 0.01),
    ]
}

fn check_loss<L: Loss + Clone>(typed: L, kind: LossKind, d: &Dataset<DenseDesign>) {
    for (pk, lambda) in typed_penalties() {
        let any = primal_fits(
            AnyLoss::from_kind(kind),
            AnyPenalty::from_kind(pk, lambda, None).unwrap(),
            d,
        );
        let want = match pk {
            PenaltyKind::None => primal_fits(typed.clone(), NoPenalty, d),
            PenaltyKind::L1 => primal_fits(typed.clone(), L1::new(lambda).unwrap(), d),
            PenaltyKind::L2 => primal_fits(typed.clone(), L2::new(lambda).unwrap(), d),
            PenaltyKind::ElasticNet => {
                primal_fits(typed.clone(), ElasticNet::new(lambda, lambda).unwrap(), d)
            }
        };
        assert_eq!(any.len(), want.len());
        for ((solver, a), (_, b)) in any.iter().zip(&want) {
            assert_eq!(
                a, b,
                "{kind} + {pk} through {solver}: run-time choice differs from the typed fit"
            );
        }
    }
}

#[test]
fn primal_fits_through_the_run_time_choice_are_bit_identical() {
    let d = data(false);
    check_loss(Logistic, LossKind::Logistic, &d);
    check_loss(Squared::half(), LossKind::Squared, &d);
    check_loss(SquaredHinge, LossKind::SquaredHinge, &d);
    check_loss(Huber::new(1.0).unwrap(), LossKind::Huber, &d);
}

fn dual_fits<L: DualLoss + Clone>(loss: L, d: &Dataset<DenseDesign>) -> Vec<Vec<u64>> {
    let sdca = SdcaParams::new(loss.clone(), L2::new(0.01).unwrap())
        .passes(3)
        .build()
        .unwrap();
    let dpscd = DpScdParams::new(loss, L2::new(0.01).unwrap())
        .epsilon(1.0)
        .delta(1e-5)
        .passes(3)
        .batch_size(4)
        .build()
        .unwrap();
    vec![
        bits(sdca.fit_seeded(d, 9).unwrap().coefficients()),
        bits(dpscd.fit_seeded(d, 9).unwrap().coefficients()),
    ]
}

#[test]
fn dual_fits_through_the_run_time_choice_are_bit_identical() {
    let d = data(true);
    let any = |k| dual_fits(AnyDualLoss::from_kind(k).unwrap(), &d);
    assert_eq!(any(LossKind::Squared), dual_fits(Squared::half(), &d));
    assert_eq!(any(LossKind::Logistic), dual_fits(Logistic, &d));
}
