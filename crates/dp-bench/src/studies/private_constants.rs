//! Private per-coordinate constants and adaptive clipping, measured on real data.
//!
//! ```text
//! cargo xtask study private-constants errors [SEEDS]
//! cargo xtask study private-constants adult [SEEDS]
//! cargo xtask study private-constants adult-variants [SEEDS]
//! ```
//!
//! * `errors`: relative error of private estimates of the coordinate smoothness
//!   constants `M_j` against the true ones, at budget fractions 0.01 .. 0.2 of
//!   epsilon = 1, on Adult (DP-SCD preprocessing), California and Electricity (raw).
//!   Mechanisms: the DP-CD paper's eq. (126) (`paper`), and the one-release estimate
//!   from row bounds with per-feature bounds only (`bounded-b`), a row-norm bound only
//!   (`bounded-R`) and both (`bounded-bR`), shifted to upper bounds with probability
//!   0.95, or not shifted (`-unbiased`, clamped only); `gaussian-R`: one Gaussian
//!   release from the row-norm bound (`private_coordinate_smoothness_gaussian`) whose
//!   noise multiplier takes the fraction of the Gaussian-DP budget `mu^2` of
//!   `(epsilon = 1, delta = 1/n^2)`, as DP-CD's `Smoothness::PrivateGaussian` does. Bounds on the raw data are twice the data's maxima (as the DP-CD
//!   paper does; not private, so these rows measure the mechanism, not a deployable
//!   bound); on Adult they are the preprocessing's `|x_ij| <= 1`, `||x_i|| <= 1`.
//! * `adult`: test accuracy on UCI Adult (one-hot, MaxAbs, rows L2-normalised; 80/20
//!   train/test, n_train = 26,049, p = 80, delta = 1/n^2, logistic + 1e-5/2 ||w||^2),
//!   hyperparameters tuned on a validation split of the training set (20 %, not
//!   charged, as in the papers), then refitted on the whole training set with SEEDS
//!   fresh seeds (default 5).

use anyhow::{bail, Result};

use super::percentile;
use dp_models::constants::{
    coordinate_smoothness, private_coordinate_smoothness_bounded,
    private_coordinate_smoothness_gaussian, private_coordinate_smoothness_with,
    BoundedSmoothnessOptions, PrivateSmoothnessOptions, SmoothnessBounds, Tagged,
};
use dp_models::split::{select, split_indices};
use dp_models::{Dataset, DenseDesign, Design, Logistic, Loss, Squared, L2};
use dp_optim::{
    AdaptiveClipping, DpCdParams, DpSgdParams, Fitted, GlobalSmoothness, Smoothness, Solver,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

pub(super) fn run(args: &[String]) -> Result<()> {
    let seeds: u64 = super::arg(args, 1, 0)?;
    super::no_more(
        &args[args.len().min(2)..],
        "errors|adult|adult-variants [SEEDS]",
    )?;
    match args.first().map(String::as_str) {
        Some("errors") => errors(if seeds == 0 { 20 } else { seeds }),
        Some("adult") => adult(if seeds == 0 { 5 } else { seeds }, false),
        Some("adult-variants") => adult(if seeds == 0 { 5 } else { seeds }, true),
        _ => bail!("usage: private-constants errors|adult|adult-variants [SEEDS]"),
    }
}

/// Adult with the DP-SCD paper's preprocessing, split 80/20 (seed 0): the shared
/// pipeline of `crate::data::scaling` (the one the `adult` and `dp-scd` experiments use).
fn adult_split() -> Result<(Dataset<DenseDesign>, Dataset<DenseDesign>)> {
    crate::data::adult_train_test(0.2, 0)
}

fn errors(seeds: u64) -> Result<()> {
    let adult = adult_split()?.0;
    let sets: Vec<(&str, Dataset<DenseDesign>, bool)> = vec![
        ("adult", adult, true),
        ("california-raw", crate::data::california()?, false),
        ("electricity-raw", crate::data::electricity()?, false),
    ];
    let fractions = [0.01, 0.02, 0.05, 0.1, 0.2];
    println!("Relative error |M_j^priv - M_j| / M_j at epsilon_M = fraction x 1 (mean over {seeds} seeds of the median / 90th percentile over coordinates), and the share of coordinates whose estimate is >= M_j.\n");
    println!(
        "| data | n | p | mechanism | {} |",
        fractions.map(|f| format!("{f}")).join(" | ")
    );
    println!("|---|---|---|---|{}", "---|".repeat(fractions.len()));
    for (name, d, normalised) in &sets {
        let x = d.x();
        let (n, p) = (x.n_samples(), x.n_features());
        // California is a LASSO problem (squared loss), the others logistic; the
        // relative error does not depend on the curvature c.
        let loss: Box<dyn Loss> = if *name == "california-raw" {
            Box::new(Squared::full())
        } else {
            Box::new(Logistic)
        };
        let truth = coordinate_smoothness(loss.as_ref(), x)?.value;
        let (fb, r): (Vec<f64>, f64) = if *normalised {
            (vec![1.0; p], 1.0)
        } else {
            (
                (0..p).map(|j| 2.0 * x.col_max_abs(j)).collect(),
                2.0 * (0..n).map(|i| x.row_sq_norm(i)).fold(0.0, f64::max).sqrt(),
            )
        };
        for mech in [
            "paper",
            "bounded-b",
            "bounded-b-unbiased",
            "bounded-R",
            "bounded-R-unbiased",
            "bounded-bR",
            "gaussian-R",
            "gaussian-R-unbiased",
        ] {
            // Shifted to upper bounds with probability 0.95, or only clamped.
            let opts = BoundedSmoothnessOptions {
                failure_probability: (!mech.ends_with("-unbiased")).then_some(0.05),
                ..BoundedSmoothnessOptions::default()
            };
            let mut cells = Vec::new();
            for &f in &fractions {
                let eps = dp_accounting::Epsilon::new(f)?;
                let (mut med, mut p90, mut upper) = (0.0, 0.0, 0.0);
                for s in 0..seeds {
                    let mut rng = ChaCha20Rng::seed_from_u64(1000 + s);
                    let mut ledger = dp_accounting::ledger::Ledger::new();
                    let est = match mech {
                        "paper" => {
                            private_coordinate_smoothness_with(
                                loss.as_ref(),
                                x,
                                &fb,
                                eps,
                                &PrivateSmoothnessOptions::default(),
                                &mut rng,
                                &mut ledger,
                            )?
                            .estimates
                            .value
                        }
                        m if m.starts_with("gaussian-R") => {
                            // Share f of the GDP budget mu^2 of (1, 1/n^2): the
                            // multiplier DP-CD's `Smoothness::PrivateGaussian` uses.
                            let delta = 1.0 / (n as f64 * n as f64);
                            let whole = dp_accounting::calibrate::calibrate_sigma(
                                &dp_accounting::calibrate::Plan {
                                    mechanism: dp_accounting::calibrate::PlanMechanism::Gaussian,
                                    steps: 1,
                                    accountant: dp_accounting::calibrate::Accountant::Gdp,
                                },
                                dp_accounting::Epsilon::new(1.0)?,
                                dp_accounting::Delta::new(delta)?,
                            )?;
                            private_coordinate_smoothness_gaussian(
                                loss.as_ref(),
                                x,
                                SmoothnessBounds {
                                    feature_bounds: None,
                                    row_norm_bound: Some(r),
                                },
                                whole.noise_multiplier / f.sqrt(),
                                &opts,
                                &mut rng,
                                &mut ledger,
                            )?
                            .estimates
                            .value
                        }
                        m => {
                            let b = SmoothnessBounds {
                                feature_bounds: (!m.starts_with("bounded-R")).then_some(&fb[..]),
                                row_norm_bound: (!m.starts_with("bounded-b-") && m != "bounded-b")
                                    .then_some(r),
                            };
                            private_coordinate_smoothness_bounded(
                                loss.as_ref(),
                                x,
                                b,
                                eps,
                                &opts,
                                &mut rng,
                                &mut ledger,
                            )?
                            .estimates
                            .value
                        }
                    };
                    let mut rel: Vec<f64> = est
                        .iter()
                        .zip(&truth)
                        .filter(|(_, t)| **t > 0.0)
                        .map(|(e, t)| (e - t).abs() / t)
                        .collect();
                    upper +=
                        est.iter().zip(&truth).filter(|(e, t)| e >= t).count() as f64 / p as f64;
                    med += percentile(&mut rel, 0.5);
                    p90 += percentile(&mut rel, 0.9);
                }
                let k = seeds as f64;
                cells.push(format!(
                    "{:.3} / {:.3} / {:.2}",
                    med / k,
                    p90 / k,
                    upper / k
                ));
            }
            println!("| {name} | {n} | {p} | {mech} | {} |", cells.join(" | "));
        }
    }
    Ok(())
}

/// A fit from (epsilon, delta, grid point, data, seed).
type FitFn = Box<dyn Fn(f64, f64, [f64; 3], &Dataset<DenseDesign>, u64) -> Result<Fitted>>;

/// One method of the Adult comparison.
struct Method {
    name: &'static str,
    grid: Vec<[f64; 3]>,
    fit: FitFn,
}

fn cd_grid() -> Vec<[f64; 3]> {
    super::grid3(&[2.0, 5.0, 10.0], &[0.3, 1.0, 3.0], &[0.1, 0.3, 1.0, 3.0])
}

/// DP-CD with the public bound `M_j = c R^2` everywhere: its steps `gamma / M_j` are
/// small on every coordinate, so its grid reaches larger step scales.
fn public_grid() -> Vec<[f64; 3]> {
    super::grid3(
        &[2.0, 5.0, 10.0],
        &[1.0, 3.0, 10.0, 30.0],
        &[0.1, 0.3, 1.0, 3.0],
    )
}

/// The clip multiplies the private 0.9-quantile of `|g_ij|` at `w0 = 0`.
fn adaptive_grid() -> Vec<[f64; 3]> {
    super::grid3(&[2.0, 5.0, 10.0], &[0.3, 1.0, 3.0], &[0.5, 1.0, 2.0, 4.0])
}

fn sgd_grid() -> Vec<[f64; 3]> {
    super::grid3(&[1.0, 3.0, 10.0], &[0.1, 0.3, 1.0, 3.0], &[0.3, 1.0])
}

/// DP-CD with `smoothness` (`None`: the `M_j` of the data the fit sees, without privacy,
/// floored at `1e-8` for columns that are all zero in that split) and, with
/// `Some(q)`, adaptive clipping at quantile `q`.
fn dp_cd(smoothness: Option<Smoothness>, adaptive: Option<f64>) -> FitFn {
    Box::new(move |eps, delta, h, d, seed| {
        let cfg = AdaptiveClipping {
            quantile: adaptive.unwrap_or(0.9),
            ..AdaptiveClipping::default()
        };
        let allow = smoothness.is_none();
        let smoothness = match &smoothness {
            Some(s) => s.clone(),
            None => Smoothness::Given(
                coordinate_smoothness(&Logistic, d.x())?
                    .map(|m| m.into_iter().map(|v| v.max(1e-8)).collect()),
            ),
        };
        Ok(DpCdParams::new(Logistic, L2::new(1e-5)?)
            .epsilon(eps)
            .delta(delta)
            .passes(h[0] as u64)
            .step_scale(h[1])
            .clip(h[2])
            .accounting(dp_optim::Accounting::Exact)
            .smoothness(smoothness)
            .adaptive_clipping(adaptive.map(|_| cfg))
            .allow_non_private_constants(allow)
            .build()?
            .fit_seeded(d, seed)?)
    })
}

/// `variants`: instead of the main comparison, DP-CD with other settings of the private
/// `M_j` (budget share, unbiased or shifted).
fn adult(seeds: u64, variants: bool) -> Result<()> {
    let (train, test) = adult_split()?;
    let (n, p) = (train.n_samples(), train.n_features());
    let delta = 1.0 / (n as f64 * n as f64);
    let (fit_idx, val_idx) = split_indices(n, 0.2, 1)?;
    let (tune_fit, tune_val) = (select(&train, &fit_idx)?, select(&train, &val_idx)?);
    let private = Smoothness::PrivateBounded {
        feature_bounds: Some(Tagged::public(vec![1.0; p])),
        row_norm_bound: Some(Tagged::public(1.0)),
        budget_fraction: 0.05,
        failure_probability: Some(0.05),
    };
    let methods = vec![
        Method {
            name: "DP-CD, public M_j = 1/4 (fully private)",
            grid: public_grid(),
            fit: dp_cd(Some(Smoothness::Given(Tagged::public(vec![0.25; p]))), None),
        },
        Method {
            name: "DP-CD, private M_j (5 % of eps, fully private)",
            grid: cd_grid(),
            fit: dp_cd(Some(private.clone()), None),
        },
        Method {
            name: "DP-CD, private M_j + adaptive clipping q = 0.9 (fully private)",
            grid: adaptive_grid(),
            fit: dp_cd(Some(private.clone()), Some(0.9)),
        },
        Method {
            name: "DP-CD, private M_j + adaptive clipping q = 0.99 (fully private)",
            grid: adaptive_grid(),
            fit: dp_cd(Some(private), Some(0.99)),
        },
        Method {
            name: "DP-CD, M_j from the data (not fully private)",
            grid: cd_grid(),
            fit: dp_cd(None, None),
        },
        Method {
            name: "DP-SGD, public beta = 1/4, batch 256",
            grid: sgd_grid(),
            fit: Box::new(move |eps, delta, h, d, seed| {
                Ok(DpSgdParams::new(Logistic, L2::new(1e-5)?)
                    .epsilon(eps)
                    .delta(delta)
                    .passes(h[0] as u64)
                    .step_scale(h[1])
                    .clip(h[2])
                    .batch_size(256)
                    .accounting(dp_optim::Accounting::Exact)
                    .smoothness(GlobalSmoothness::Given(Tagged::public(0.25)))
                    .build()?
                    .fit_seeded(d, seed)?)
            }),
        },
    ];
    let variant = |fraction: f64, beta: Option<f64>| Smoothness::PrivateBounded {
        feature_bounds: Some(Tagged::public(vec![1.0; p])),
        row_norm_bound: Some(Tagged::public(1.0)),
        budget_fraction: fraction,
        failure_probability: beta,
    };
    let methods = if variants {
        vec![
            Method {
                name: "DP-CD, private M_j, 5 % of eps, unbiased (no shift)",
                grid: cd_grid(),
                fit: dp_cd(Some(variant(0.05, None)), None),
            },
            Method {
                name: "DP-CD, private M_j, 2 % of eps, shifted (beta 0.05)",
                grid: cd_grid(),
                fit: dp_cd(Some(variant(0.02, Some(0.05))), None),
            },
            Method {
                name: "DP-CD, private M_j, 10 % of eps, shifted (beta 0.05)",
                grid: cd_grid(),
                fit: dp_cd(Some(variant(0.1, Some(0.05))), None),
            },
        ]
    } else {
        methods
    };
    let epsilons = [0.1, 0.5, 1.0, 2.0, 5.0];
    println!(
        "Adult: n_train = {n}, p = {p}, n_test = {}, delta = 1/n^2 = {delta:.3e}; test accuracy, mean over {seeds} fresh seeds (tuned on a validation split: 2 runs per grid point).\n",
        test.n_samples()
    );
    println!(
        "| method | {} |",
        epsilons.map(|e| format!("eps {e}")).join(" | ")
    );
    println!("|---|{}", "---|".repeat(epsilons.len()));
    let start = std::time::Instant::now();
    for m in &methods {
        let mut cells = Vec::new();
        for &eps in &epsilons {
            let val_delta = 1.0 / (tune_fit.n_samples() as f64).powi(2);
            let mut best = (f64::NEG_INFINITY, m.grid[0]);
            for &h in &m.grid {
                let mut acc = 0.0;
                for s in 0..2 {
                    acc += match (m.fit)(eps, val_delta, h, &tune_fit, 77 + s) {
                        Ok(f) => f.model.accuracy(&tune_val)?,
                        Err(_) => 0.0,
                    };
                }
                if acc > best.0 {
                    best = (acc, h);
                }
            }
            let mut acc = 0.0;
            for s in 0..seeds {
                acc += (m.fit)(eps, delta, best.1, &train, 10_000 + s)?
                    .model
                    .accuracy(&test)?;
            }
            cells.push(format!(
                "{:.3} ({}/{}/{})",
                acc / seeds as f64,
                best.1[0],
                best.1[1],
                best.1[2]
            ));
        }
        println!("| {} | {} |", m.name, cells.join(" | "));
    }
    println!(
        "\nCells: accuracy (tuned passes / step scale / clip). Wall time {:.0} s.",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
