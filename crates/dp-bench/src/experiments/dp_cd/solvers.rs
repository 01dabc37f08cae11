//! The DP-CD experiment's connection to the data sets, the reference solver and the
//! private solvers of `dp-optim`.

use anyhow::{bail, Result};
use dp_models::objective::Objective;
use dp_models::reference::{solve, ReferenceOptions};
use dp_models::{Dataset, DenseDesign, Logistic, Loss, Penalty, Squared, L1, L2};

use super::{Accounting, Algorithm, Model, Problem, ProblemName};
use crate::runner::FitFn;

/// Standardised ("balanced") copy: zero mean, unit variance per column (non-private, not
/// charged to the budget, as in the paper; see `dp_models::preprocess`).
fn standardize(d: &Dataset<DenseDesign>) -> Result<Dataset<DenseDesign>> {
    let (x, _) = dp_models::preprocess::standardize(d.x())?;
    Ok(Dataset::new(x, d.y().to_vec())?)
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

/// The fit closure of (problem, algorithm, accounting).
pub(super) fn fit_fn<'a>(
    p: &'a Problem,
    alg: Algorithm,
    acc: Accounting,
) -> Result<Box<FitFn<'a>>> {
    let _ = (p, alg, acc);
    bail!("the DP-CD / DP-SGD solvers of dp-optim have not landed yet")
}
