//! The DP-CD experiment's connection to the data sets, the reference solver and the
//! private solvers of `dp-optim`.

use anyhow::{bail, Result};
use dp_models::{Dataset, DenseDesign, Design, Logistic, Loss, Penalty, Squared, L1, L2};

use super::{Accounting, Algorithm, Model, Problem, ProblemName};
use crate::runner::FitFn;

/// Standardises every column to zero mean and unit (population) variance; non-private.
fn standardize(d: &Dataset<DenseDesign>) -> Result<Dataset<DenseDesign>> {
    let x = d.x();
    let (n, p) = (x.n_samples(), x.n_features());
    let mut cols = Vec::with_capacity(n * p);
    for j in 0..p {
        let c = x.col(j);
        let mean = c.iter().sum::<f64>() / n as f64;
        let var = c.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        let sd = var.sqrt();
        if sd.is_nan() || sd <= 0.0 {
            bail!("column {j} is constant: it cannot be standardised");
        }
        cols.extend(c.iter().map(|v| (v - mean) / sd));
    }
    Ok(Dataset::new(
        DenseDesign::from_col_major(n, p, &cols)?,
        d.y().to_vec(),
    )?)
}

/// The problem's data set, preprocessed.
pub(super) fn load_data(name: ProblemName) -> Result<Dataset<DenseDesign>> {
    match name {
        ProblemName::CaliforniaRaw => crate::data::california(),
        ProblemName::CaliforniaStd => standardize(&crate::data::california()?),
        ProblemName::ElectricityRaw => crate::data::electricity(),
        ProblemName::ElectricityStd => standardize(&crate::data::electricity()?),
        ProblemName::SparseLasso => {
            bail!("the Sparse LASSO generator (dp_bench::synthetic) has not landed yet")
        }
    }
}

/// Cyclic proximal coordinate descent with steps `1/M_j` until the KKT violation is below
/// `1e-12` relative to the largest coordinate gradient at 0 (non-private).
fn prox_cd<L: Loss, P: Penalty>(
    d: &Dataset<DenseDesign>,
    loss: &L,
    pen: &P,
) -> Result<(Vec<f64>, (f64, String))> {
    let x = d.x();
    let y = d.y();
    let (n, p) = (x.n_samples(), x.n_features());
    let c = loss.curvature_bound().unwrap_or(1.0);
    let m: Vec<f64> = (0..p).map(|j| c * x.col_sq_norm(j) / n as f64).collect();
    let mut w = vec![0.0; p];
    let mut z = vec![0.0; n];
    let grad = |j: usize, z: &[f64]| -> f64 {
        x.col(j)
            .iter()
            .zip(z)
            .zip(y)
            .map(|((&xij, &zi), &yi)| loss.derivative(zi, yi) * xij)
            .sum::<f64>()
            / n as f64
    };
    let scale = (0..p)
        .map(|j| grad(j, &z).abs())
        .fold(0.0, f64::max)
        .max(1e-300);
    for _epoch in 0..200_000 {
        for j in 0..p {
            if m[j] <= 0.0 {
                continue;
            }
            let g = grad(j, &z);
            let new = pen.prox_1d(j, w[j] - g / m[j], 1.0 / m[j]);
            let delta = new - w[j];
            if delta != 0.0 {
                x.col_axpy(j, delta, &mut z);
                w[j] = new;
            }
        }
        let kkt = (0..p)
            .map(|j| pen.subdiff_distance(j, w[j], grad(j, &z)))
            .fold(0.0, f64::max);
        if kkt <= 1e-12 * scale {
            return Ok((w, (kkt, "KKT violation".into())));
        }
    }
    bail!("reference solver did not converge")
}

/// The certified minimiser and its certificate.
pub(super) fn reference(
    d: &Dataset<DenseDesign>,
    model: Model,
) -> Result<(Vec<f64>, (f64, String))> {
    match model {
        Model::Lasso { lambda } => prox_cd(d, &Squared::full(), &L1::new(lambda)?),
        Model::LogisticL2 { lambda } => prox_cd(d, &Logistic, &L2::new(lambda)?),
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
