//! The DP-CD experiment's connection to the data sets, the reference solver and the
//! private solvers of `dp-optim`.

use anyhow::Result;
use dp_models::objective::Objective;
use dp_models::reference::{solve, ReferenceOptions};
use dp_models::{Dataset, DenseDesign, Logistic, Loss, Penalty, Squared, L1, L2};
use dp_optim::Solver;

use super::{Accounting, Algorithm, Model, Problem, ProblemName};
use dp_models::constants::{coordinate_smoothness, global_smoothness, Tagged};
use dp_models::Design;
use dp_optim::{
    Averaging, CdParams, CoordinateOrder, DpCdParams, DpSgdParams, GlobalSmoothness, Smoothness,
};

use crate::runner::{FitFn, Hyper, RunOutput};

/// Standardised ("balanced") copy: zero mean, unit variance per column (non-private, not
/// charged to the budget, as in the paper; see `dp_models::preprocess`).
fn standardize(d: &Dataset<DenseDesign>) -> Result<Dataset<DenseDesign>> {
    let (x, _) = dp_models::preprocess::standardize(d.x())?;
    Ok(Dataset::new(x, d.y().to_vec())?)
}

/// The same data with the label mean subtracted (non-private, not charged; the sweep's
/// "centred labels" convention).
pub(super) fn centre_labels(d: &Dataset<DenseDesign>) -> Result<Dataset<DenseDesign>> {
    let y = d.y();
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let centred: Vec<f64> = y.iter().map(|v| v - mean).collect();
    Ok(Dataset::new(d.x().clone(), centred)?)
}

/// The problem's data set, preprocessed.
pub(super) fn load_data(name: ProblemName) -> Result<Dataset<DenseDesign>> {
    match name {
        ProblemName::CaliforniaRaw => crate::data::california(),
        ProblemName::CaliforniaStd => standardize(&crate::data::california()?),
        ProblemName::ElectricityRaw => crate::data::electricity(),
        ProblemName::ElectricityStd => standardize(&crate::data::electricity()?),
        ProblemName::SparseLasso => {
            Ok(crate::synthetic::sparse_lasso(super::SPARSE_LASSO_SEED)?.into_dataset())
        }
    }
}

fn certified<L: Loss, P: Penalty>(
    d: &Dataset<DenseDesign>,
    loss: &L,
    pen: &P,
) -> Result<(Vec<f64>, (f64, String))> {
    let obj = Objective::new(d, loss, pen)?;
    let c = solve(&obj, &ReferenceOptions::default())?;
    Ok((
        c.w,
        (c.relative_certificate, format!("relative {}", c.kind)),
    ))
}

/// The certified minimiser (`dp_models::reference::solve` at relative tolerance 1e-10)
/// and its certificate.
pub(super) fn reference(
    d: &Dataset<DenseDesign>,
    model: Model,
) -> Result<(Vec<f64>, (f64, String))> {
    match model {
        Model::Lasso { lambda } => certified(d, &Squared::full(), &L1::new(lambda)?),
        Model::LogisticL2 { lambda } => certified(d, &Logistic, &L2::new(lambda)?),
    }
}

/// Constants computed once per problem (non-private, as the paper's experiments do; the
/// solvers refuse them unless told `allow_non_private_constants(true)`).
pub(super) struct Constants {
    /// `M_j = (c/n) ||X_j||^2`.
    m: Tagged<Vec<f64>>,
    /// `beta = (c/n) lambda_max(X^T X)` for DP-SGD's step `gamma / beta`.
    beta: Tagged<f64>,
    /// DP-CD-P's public feature bounds: twice the largest `|x_ij|` of each column (the
    /// paper's "crude bound", Sec. 6.1; derived from the data and not charged, as in the paper).
    /// DP-CD-P's bounds `|x_ij| <= B_j`: the paper takes twice the maximal absolute
    /// value of each feature, which is computed from the data without privacy (tagged
    /// so, and accepted through the experiment's explicit opt-in).
    feature_bounds: Tagged<Vec<f64>>,
}

fn constants_for<L: Loss>(d: &Dataset<DenseDesign>, loss: &L) -> Result<Constants> {
    let x = d.x();
    Ok(Constants {
        m: coordinate_smoothness(loss, x)?,
        beta: global_smoothness(loss, x)?,
        feature_bounds: Tagged::data_non_private(
            (0..x.n_features())
                .map(|j| 2.0 * x.col_max_abs(j))
                .collect(),
        ),
    })
}

/// The problem's constants.
pub(super) fn constants_of(d: &Dataset<DenseDesign>, model: Model) -> Result<Constants> {
    match model {
        Model::Lasso { .. } => constants_for(d, &Squared::full()),
        Model::LogisticL2 { .. } => constants_for(d, &Logistic),
    }
}

fn accounting(acc: Accounting) -> dp_optim::Accounting {
    match acc {
        Accounting::Paper => dp_optim::Accounting::Paper,
        // The non-private baseline never reaches a private solver.
        Accounting::Exact | Accounting::None => dp_optim::Accounting::Exact,
    }
}

fn report_output(r: dp_optim::Fitted) -> RunOutput {
    RunOutput {
        fit_seconds: r.diagnostics.seconds,
        coefficients: r.model.coefficients,
    }
}

fn fit_with<'a, L, P>(
    p: &'a Problem,
    c: &'a Constants,
    loss: L,
    pen: P,
    alg: Algorithm,
    acc: Accounting,
) -> Box<FitFn<'a>>
where
    L: Loss + Clone + 'a,
    P: Penalty + Clone + 'a,
{
    let eps = p.name.epsilon();
    let delta = p.delta();
    match alg {
        Algorithm::DpCd | Algorithm::DpCdCyclic | Algorithm::DpCdP => {
            Box::new(move |h: &Hyper, seed: u64| {
                let smoothness = if alg == Algorithm::DpCdP {
                    Smoothness::private(c.feature_bounds.clone())
                } else {
                    Smoothness::Given(c.m.clone())
                };
                let order = if alg == Algorithm::DpCdCyclic {
                    CoordinateOrder::Cyclic
                } else {
                    CoordinateOrder::Uniform
                };
                let solver = DpCdParams::new(loss.clone(), pen.clone())
                    .epsilon(eps)
                    .delta(delta)
                    .passes(h.budget)
                    .step_scale(h.step)
                    .clip(h.clip)
                    .accounting(accounting(acc))
                    .averaging(Averaging::LastIterate)
                    .coordinate_order(order)
                    .smoothness(smoothness)
                    .allow_non_private_constants(true)
                    .build()?;
                Ok(report_output(solver.fit_seeded(&p.data, seed)?))
            })
        }
        Algorithm::Cd => Box::new(move |h: &Hyper, seed: u64| {
            let solver = CdParams::new(loss.clone(), pen.clone())
                .passes(h.budget)
                .step_scale(h.step)
                .averaging(Averaging::LastIterate)
                .build()?;
            Ok(report_output(solver.fit_seeded(&p.data, seed)?))
        }),
        Algorithm::DpSgd => Box::new(move |h: &Hyper, seed: u64| {
            let solver = DpSgdParams::new(loss.clone(), pen.clone())
                .epsilon(eps)
                .delta(delta)
                .passes(h.budget)
                .step_scale(h.step)
                .clip(h.clip)
                .batch_size(1)
                .accounting(accounting(acc))
                .smoothness(GlobalSmoothness::Given(c.beta.clone()))
                .allow_non_private_constants(true)
                .build()?;
            Ok(report_output(solver.fit_seeded(&p.data, seed)?))
        }),
    }
}

/// The fit closure of (problem, algorithm, accounting).
pub(super) fn fit_fn<'a>(
    p: &'a Problem,
    c: &'a Constants,
    alg: Algorithm,
    acc: Accounting,
) -> Result<Box<FitFn<'a>>> {
    Ok(match p.model {
        Model::Lasso { lambda } => fit_with(p, c, Squared::full(), L1::new(lambda)?, alg, acc),
        Model::LogisticL2 { lambda } => fit_with(p, c, Logistic, L2::new(lambda)?, alg, acc),
    })
}
