//! 100 small private fits on real data with the no-tuning defaults: does any private
//! coefficient explode against the non-private solution, and how many private `M_j`
//! estimates were floored?
//!
//! ```text
//! cargo xtask study constants-sweep          # the sweep, 4 seeds per cell
//! cargo xtask study constants-sweep SEEDS    # SEEDS per cell
//! cargo xtask study constants-sweep search SIZE EPS SEEDS [LAMBDA]
//! ```
//!
//! Data, scaled as a user would with declared bounds: breast_cancer (569 x 30,
//! logistic loss) and diabetes (442 x 10, squared loss, target divided by its declared
//! bound 350), every feature mapped to [-1, 1] by its column's min and max (the user's
//! own preprocessing, not private: the sweep measures the fit, not the scaling), an
//! intercept column (bound 1), declared feature bound 1; no penalty in the private fits
//! (the command line's default). The reference `w*` is the ridge optimum with
//! `(1e-3 / 2) ||w||^2` (an unpenalised logistic optimum does not exist on separable
//! subsamples such as 49 rows in 31 dimensions).
//! Cells: each data set x subsample size {49, 200, all rows} x epsilon {0.1, 0.3, 1,
//! 3, 10} (delta 1e-5), SEEDS seeded fits each (default 4: 2 x 3 x 5 x 4 = 120 fits),
//! DP-CD through `DpCdParams::defaults_for`. For each fit: `ratio = max_j |w_j| /
//! max_j |w*_j|`, `w*` the non-private ridge optimum (CD from the data's own `M_j`, 500
//! passes) on the same rows, and the number of floored estimates reported in the
//! model's plan. `search SIZE EPS SEEDS [LAMBDA]` lists the breast_cancer seeds that
//! floored an estimate or exploded (how the regression tests' seeds were found).

use anyhow::{bail, Context, Result};
use dp_models::split::select;
use dp_models::{Dataset, DenseDesign, Logistic, Loss, Squared, L2};
use dp_optim::auto::PublicBounds;
use dp_optim::plan::SolverPlan;
use dp_optim::{with_intercept_column, CdParams, DpCdParams, Smoothness, Solver};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const EPSILONS: [f64; 5] = [0.1, 0.3, 1.0, 3.0, 10.0];
const SIZES: [usize; 3] = [49, 200, usize::MAX];
const LAMBDA: f64 = 1e-3;
const DELTA: f64 = 1e-5;

/// Every column mapped to [-1, 1] by its min and max (constant columns to 0).
fn scale_features(d: &Dataset<DenseDesign>, y_scale: f64) -> Result<Dataset<DenseDesign>> {
    let (n, p) = (d.n_samples(), d.n_features());
    let mut cols = Vec::with_capacity(n * p);
    for j in 0..p {
        let c = d.x().col(j);
        let (lo, hi) = c
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let w = hi - lo;
        cols.extend(c.iter().map(|&v| {
            if w > 0.0 {
                2.0 * (v - lo) / w - 1.0
            } else {
                0.0
            }
        }));
    }
    let y = d.y().iter().map(|v| v / y_scale).collect();
    Ok(Dataset::new(DenseDesign::from_col_major(n, p, &cols)?, y)?)
}

/// One fit's outcome.
struct Outcome {
    ratio: f64,
    floored: usize,
    max_private: f64,
    max_optimum: f64,
}

fn fit_one<L: Loss + Clone>(
    loss: L,
    data: &Dataset<DenseDesign>,
    eps: f64,
    seed: u64,
    optimum: &[f64],
    lambda: f64,
) -> Result<Outcome> {
    let (n, q) = (data.n_samples(), data.n_features());
    let mut bounds = PublicBounds::uniform(q, 1.0);
    if let Some(b) = bounds.feature_bounds.as_mut() {
        b[q - 1] = 1.0;
    }
    let (params, _) = DpCdParams::defaults_for(loss, L2::new(lambda)?, eps, DELTA, &bounds, n, q)?;
    // A fixed seed so the sweep reproduces: it replays the noise, never publish such a fit.
    let fit = params.build()?.fit_seeded(data, seed)?;
    let privacy = fit
        .privacy()
        .context("a private fit without its guarantee")?;
    let floored = match &privacy.plan {
        SolverPlan::DpCd(p) => p.smoothness_floored.unwrap_or(0),
        _ => 0,
    };
    let max_private = fit
        .model
        .coefficients
        .iter()
        .fold(0.0f64, |a, w| a.max(w.abs()));
    let max_optimum = optimum.iter().fold(0.0f64, |a, w| a.max(w.abs()));
    Ok(Outcome {
        ratio: max_private / max_optimum,
        floored,
        max_private,
        max_optimum,
    })
}

fn optimum<L: Loss + Clone>(loss: L, data: &Dataset<DenseDesign>) -> Result<Vec<f64>> {
    let fit = CdParams::new(loss, L2::new(LAMBDA)?)
        .passes(500)
        .step_scale(1.0)
        .smoothness(Smoothness::FromData)
        .build()?
        .fit_seeded(data, 0)?; // non-private CD: the seed draws no noise
    Ok(fit.model.coefficients)
}

/// `size` rows of `data` drawn once (seed 7), with the intercept column.
fn subsample(data: &Dataset<DenseDesign>, size: usize) -> Result<Dataset<DenseDesign>> {
    let mut rows: Vec<usize> = (0..data.n_samples()).collect();
    rows.shuffle(&mut ChaCha20Rng::seed_from_u64(7));
    rows.truncate(size.min(data.n_samples()));
    rows.sort_unstable();
    Ok(with_intercept_column(&select(data, &rows)?)?)
}

/// `search SIZE EPS SEEDS`: breast_cancer only, every seed whose fit floored an estimate
/// or exploded (how the regression tests' seeds were found).
fn search(args: &[String]) -> Result<()> {
    if args.len() < 4 || args.len() > 5 {
        bail!("usage: constants-sweep search SIZE EPS SEEDS [LAMBDA]");
    }
    let size: usize = super::arg(args, 1, 0)?;
    let eps: f64 = super::arg(args, 2, 0.0)?;
    let seeds: u64 = super::arg(args, 3, 0)?;
    // The private fits' penalty (the optimum keeps LAMBDA): 0 is the CLI's default.
    let lambda: f64 = super::arg(args, 4, LAMBDA)?;
    let bc = scale_features(&crate::data::breast_cancer()?.dataset, 1.0)?;
    let sub = subsample(&bc, size)?;
    let star = optimum(Logistic, &sub)?;
    for seed in 0..seeds {
        let o = fit_one(Logistic, &sub, eps, seed, &star, lambda)?;
        if o.floored > 0 || o.ratio > 100.0 {
            println!(
                "seed {seed}: floored {}, ratio {:.3} (max |w| {:.3e}, optimum {:.3e})",
                o.floored, o.ratio, o.max_private, o.max_optimum
            );
        }
    }
    Ok(())
}

pub(super) fn run(args: &[String]) -> Result<()> {
    if args.first().map(String::as_str) == Some("search") {
        return search(args);
    }
    let seeds: u64 = super::arg(args, 0, 4)?;
    super::no_more(
        &args[args.len().min(1)..],
        "[SEEDS] | search SIZE EPS SEEDS [LAMBDA]",
    )?;
    let bc = scale_features(&crate::data::breast_cancer()?.dataset, 1.0)?;
    let diab = scale_features(&crate::data::diabetes()?.dataset, 350.0)?;
    println!(
        "| data | n | eps | fits | max ratio max|w| / max|w*| | floored estimates (fits with any) |"
    );
    println!("|---|---|---|---|---|---|");
    let (mut total, mut worst, mut floored_fits, mut exploded) = (0, 0.0f64, 0, 0);
    for (name, data) in [("breast_cancer", &bc), ("diabetes", &diab)] {
        for &size in &SIZES {
            let sub = subsample(data, size)?;
            let star = if name == "diabetes" {
                optimum(Squared::half(), &sub)?
            } else {
                optimum(Logistic, &sub)?
            };
            for &eps in &EPSILONS {
                let (mut cell_worst, mut cell_floored, mut cell_any) = (0.0f64, 0, 0);
                let mut note = String::new();
                for seed in 0..seeds {
                    let o = if name == "diabetes" {
                        fit_one(Squared::half(), &sub, eps, seed, &star, 0.0)?
                    } else {
                        fit_one(Logistic, &sub, eps, seed, &star, 0.0)?
                    };
                    total += 1;
                    cell_worst = cell_worst.max(o.ratio);
                    cell_floored += o.floored;
                    if o.floored > 0 {
                        cell_any += 1;
                        floored_fits += 1;
                    }
                    if o.ratio > 100.0 {
                        exploded += 1;
                        note = format!(
                            " (seed {seed}: max |w| {:.3e} against {:.3e})",
                            o.max_private, o.max_optimum
                        );
                    }
                }
                worst = worst.max(cell_worst);
                println!(
                    "| {name} | {} | {eps} | {seeds} | {cell_worst:.3}{note} | {cell_floored} ({cell_any}) |",
                    sub.n_samples()
                );
            }
        }
    }
    println!(
        "\n{total} fits: largest ratio {worst:.3}; {exploded} fits above 100x; {floored_fits} \
         fits with a floored estimate."
    );
    Ok(())
}
