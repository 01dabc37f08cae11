//! DP-CD with no tuning, tuned for free, and tuned privately, on five data sets.
//!
//! ```text
//! cargo xtask study defaults-and-selection compare [SEEDS]
//! cargo xtask study defaults-and-selection calibrate [SEEDS [F_T,.. [F_C,..]]]
//! cargo xtask study defaults-and-selection algorithms [SEEDS]
//! ```
//!
//! * `compare` (default SEEDS = 3): for each data set and epsilon in {0.1, 0.5, 1, 2, 5}
//!   (`delta = 1/n_train^2`), test accuracy (mean of SEEDS fits) of DP-CD
//!   - **tuned**: passes x step scale x clip tuned on a validation split (one fit per grid
//!     point, **not charged**, as in the papers), refitted on all training rows;
//!   - **defaults**: `DpCdParams::defaults_for` (no tuning, no validation rows);
//!   - **selection**: `dp_optim::select` over the same grid (geometric number of runs,
//!     mean 10), fitted on the training rows minus the validation rows and scored on
//!     those, **charged**: the reported model's guarantee is the whole search's;
//!   - **selection near defaults**: the same over 18 points around the defaults
//!     (passes x {1/3, 1, 3}, step scale x {1/2, 1}, clip x {1/2, 1, 2}).
//!
//!   All three are fully private otherwise: the `M_j` are estimated privately from the
//!   public bounds (one Gaussian release, 5 % of the Gaussian-DP budget `mu^2`,
//!   `dp_optim::auto::private_smoothness`, as the defaults do), and every fit's
//!   guarantee is at most epsilon (the tuned row's search excepted).
//! * `calibrate`: the defaults with the passes rule's constant and the clipping rule's
//!   constant multiplied by factors, on the same data (how `docs/defaults.md` chose them).
//! * `algorithms [SEEDS]` (default 5): the no-tuning defaults of every private algorithm
//!   (`DpCdParams / DpGcdParams / DpSgdParams / DpScdParams::defaults_for`, logistic loss,
//!   L2 `1e-5`) at eps 0.1, 1 and 5, test accuracy (mean of SEEDS fits) against the
//!   non-private optimum (CD, 200 passes) and the majority class. DP-SCD's sensitivity
//!   needs rows of norm at most 1: its rows are divided by the public `sqrt(p)` (Adult's
//!   rows already have norm 1), as the pipeline does.
//!
//! Data (public bounds in brackets): Adult (DP-SCD preprocessing, rows of norm 1, no
//! intercept as in the Adult experiment [|x_ij| <= 1, ||x_i|| <= 1]); Electricity (features clipped to
//! [0, 1], intercept [1]); California housing (standardised with the training rows'
//! statistics, clipped to 3 standard deviations and divided by 3, label: value above the
//! training median; intercept [1]); Website Phishing (the stand-in for LIBSVM phishing,
//! features clipped to [0, 1], intercept [1]); synthetic (n = 20,000, p = 50, feature scales
//! log-spaced over [0.01, 1], labels from a noisy linear model; intercept [1]).

use anyhow::{bail, Result};

use super::{accuracy_or_zero, majority};
use dp_models::split::{select, split_indices};
use dp_models::{Dataset, DenseDesign, Logistic, L2};
use dp_optim::auto::{dp_cd_defaults, PublicBounds, PASSES_RANGE};
use dp_optim::select::{select_with_rng, SelectionParams};
use dp_optim::{with_intercept_column, Accounting, DpCdParams, PrivacyParams, Smoothness, Solver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

const EPSILONS: [f64; 5] = [0.1, 0.5, 1.0, 2.0, 5.0];
const LAMBDA: f64 = 1e-5;

struct Prepared {
    name: &'static str,
    /// All training rows.
    train: Dataset<DenseDesign>,
    /// Training rows minus the validation rows.
    fit_part: Dataset<DenseDesign>,
    validation: Dataset<DenseDesign>,
    test: Dataset<DenseDesign>,
    bounds: PublicBounds,
}

type Grid = (u64, f64, f64);

fn grid() -> Vec<Grid> {
    let g = super::grid3(
        &[2.0, 5.0, 10.0, 20.0, 50.0],
        &[0.1, 0.3, 1.0, 3.0, 10.0],
        &[0.1, 0.3, 1.0, 3.0],
    );
    g.into_iter().map(|[t, s, c]| (t as u64, s, c)).collect()
}

pub(super) fn run(args: &[String]) -> Result<()> {
    let seeds: u64 = super::arg(args, 1, 3)?;
    let start = std::time::Instant::now();
    let usage = "compare [SEEDS] | calibrate [SEEDS [F_T,.. [F_C,..]]] | algorithms [SEEDS]";
    match args.first().map(String::as_str) {
        Some("compare") | None => {
            super::no_more(&args[args.len().min(2)..], usage)?;
            compare(seeds)?
        }
        Some("calibrate") => {
            super::no_more(&args[args.len().min(4)..], usage)?;
            calibrate(
                seeds,
                &super::list(args, 2, &[0.3, 1.0, 3.0])?,
                &super::list(args, 3, &[0.3, 1.0, 3.0])?,
            )?
        }
        Some("algorithms") => {
            super::no_more(&args[args.len().min(2)..], usage)?;
            algorithms(super::arg(args, 1, 5)?)?
        }
        _ => bail!("usage: defaults-and-selection {usage}"),
    }
    println!("\nWall time {:.0} s.", start.elapsed().as_secs_f64());
    Ok(())
}

/// Splits `d` 80/20 into train / test (seed 0), and the training rows 80/20 into the
/// fit part / validation (seed 1).
fn splits(
    name: &'static str,
    d: &Dataset<DenseDesign>,
    bounds: PublicBounds,
    prep: impl Fn(&Dataset<DenseDesign>, &Dataset<DenseDesign>) -> Result<Dataset<DenseDesign>>,
) -> Result<Prepared> {
    let (tr, te) = split_indices(d.n_samples(), 0.2, 0)?;
    let (tr, te) = (select(d, &tr)?, select(d, &te)?);
    let (train, test) = (prep(&tr, &tr)?, prep(&tr, &te)?);
    let (f, v) = split_indices(train.n_samples(), 0.2, 1)?;
    Ok(Prepared {
        name,
        fit_part: select(&train, &f)?,
        validation: select(&train, &v)?,
        train,
        test,
        bounds,
    })
}

fn rows_of(
    d: &Dataset<DenseDesign>,
    f: impl Fn(&[f64]) -> Vec<f64>,
) -> Result<Dataset<DenseDesign>> {
    let n = d.n_samples();
    let mut rows = Vec::new();
    let mut p = 0;
    for i in 0..n {
        let r = f(d.x().row(i));
        p = r.len();
        rows.extend(r);
    }
    Ok(Dataset::new(
        DenseDesign::from_row_major(n, p, &rows)?,
        d.y().to_vec(),
    )?)
}

fn datasets() -> Result<Vec<Prepared>> {
    let mut out = Vec::new();
    // Adult: the DP-SCD paper's preprocessing (statistics from the training rows).
    let (adult, _) = crate::data::adult()?;
    let p = adult.n_features();
    out.push(splits(
        "adult",
        &adult,
        PublicBounds::uniform(p, 1.0).with_row_norm(1.0),
        |tr, d| {
            let n = tr.n_samples() as f64;
            let (mut shift, mut scale) = (vec![0.0; p], vec![1.0; p]);
            for j in 0..5 {
                let c = tr.x().col(j);
                let m = c.iter().sum::<f64>() / n;
                let sd = (c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt();
                shift[j] = m;
                scale[j] = if sd > 0.0 { sd } else { 1.0 };
            }
            let mut maxabs = vec![0.0f64; p];
            for (j, m) in maxabs.iter_mut().enumerate() {
                for &v in tr.x().col(j) {
                    *m = m.max(((v - shift[j]) / scale[j]).abs());
                }
                if *m == 0.0 {
                    *m = 1.0;
                }
            }
            rows_of(d, |x| {
                let r: Vec<f64> = (0..p)
                    .map(|j| ((x[j] - shift[j]) / scale[j] / maxabs[j]).clamp(-1.0, 1.0))
                    .collect();
                let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
                r.iter()
                    .map(|v| if norm > 0.0 { v / norm } else { *v })
                    .collect()
            })
        },
    )?);
    // Electricity and Phishing: features in [0, 1]; an intercept column.
    for (name, d) in [
        ("electricity", crate::data::electricity()?),
        ("phishing", crate::data::website_phishing()?),
    ] {
        let p = d.n_features() + 1;
        out.push(splits(name, &d, PublicBounds::uniform(p, 1.0), |_, d| {
            Ok(with_intercept_column(&rows_of(d, |x| {
                x.iter().map(|v| v.clamp(0.0, 1.0)).collect()
            })?)?)
        })?);
    }
    // California: standardised, clipped at 3 sd, / 3; label above the training median.
    let cal = crate::data::california()?;
    let p = cal.n_features() + 1;
    out.push(splits(
        "california",
        &cal,
        PublicBounds::uniform(p, 1.0),
        |tr, d| {
            let n = tr.n_samples() as f64;
            let q = tr.n_features();
            let mut stats = Vec::with_capacity(q);
            for j in 0..q {
                let c = tr.x().col(j);
                let m = c.iter().sum::<f64>() / n;
                let sd = (c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt();
                stats.push((m, if sd > 0.0 { sd } else { 1.0 }));
            }
            let mut ys = tr.y().to_vec();
            ys.sort_by(f64::total_cmp);
            let median = ys[ys.len() / 2];
            let x = rows_of(d, |x| {
                x.iter()
                    .zip(&stats)
                    .map(|(v, (m, s))| ((v - m) / s).clamp(-3.0, 3.0) / 3.0)
                    .collect()
            })?;
            let y = d
                .y()
                .iter()
                .map(|&v| if v > median { 1.0 } else { -1.0 })
                .collect();
            Ok(with_intercept_column(&Dataset::new(x.x().clone(), y)?)?)
        },
    )?);
    // Synthetic: imbalanced feature scales.
    let (n, q) = (20_000, 50);
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    let scales: Vec<f64> = (0..q)
        .map(|j| 10f64.powf(-2.0 * j as f64 / (q - 1) as f64))
        .collect();
    let w: Vec<f64> = (0..q).map(|_| rng.random_range(-1.0..1.0) * 4.0).collect();
    let mut rows = Vec::with_capacity(n * q);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let r: Vec<f64> = scales
            .iter()
            .map(|s| s * rng.random_range(-1.0..1.0))
            .collect();
        let z: f64 = r.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + 0.3;
        let noise: f64 = rng.random_range(-1.0..1.0) * 0.5;
        y.push(if z + noise > 0.0 { 1.0 } else { -1.0 });
        rows.extend(r);
    }
    let synth = Dataset::new(DenseDesign::from_row_major(n, q, &rows)?, y)?;
    out.push(splits(
        "synthetic",
        &synth,
        PublicBounds::uniform(q + 1, 1.0),
        |_, d| Ok(with_intercept_column(d)?),
    )?);
    Ok(out)
}

/// The defaults' private `M_j` (every row of the comparison uses the same estimate).
fn smoothness(b: &PublicBounds) -> Smoothness {
    dp_optim::auto::private_smoothness(b, dp_optim::auto::SMOOTHNESS_SHARE)
}

fn solver(
    b: &PublicBounds,
    privacy: PrivacyParams,
    &(passes, step, clip): &Grid,
) -> dp_optim::Result<dp_optim::DpCd<Logistic, L2>> {
    DpCdParams::new(Logistic, L2::new(LAMBDA)?)
        .privacy(privacy)
        .passes(passes)
        .step_scale(step)
        .clip(clip)
        .smoothness(smoothness(b))
        .build()
}

/// Test accuracy of `g` refitted on all training rows, mean over `seeds` (a diverged fit
/// counts as accuracy 0).
fn refit(d: &Prepared, eps: f64, g: &Grid, seeds: u64) -> Result<f64> {
    let delta = 1.0 / (d.train.n_samples() as f64).powi(2);
    let s = solver(
        &d.bounds,
        PrivacyParams::new(eps, delta).accounting(Accounting::Exact),
        g,
    )?;
    mean_accuracy(&s, &d.train, &d.test, seeds)
}

/// The grid point with the best validation accuracy (one seeded fit each, uncharged).
fn tune(d: &Prepared, eps: f64) -> Result<Grid> {
    let delta = 1.0 / (d.train.n_samples() as f64).powi(2);
    let privacy = PrivacyParams::new(eps, delta).accounting(Accounting::Exact);
    let mut best = (f64::NEG_INFINITY, grid()[0]);
    for g in grid() {
        // A fixed seed so that runs compare; it replays the noise, so never publish such a fit.
        let fit = solver(&d.bounds, privacy.clone(), &g)?.fit_seeded(&d.fit_part, 7);
        let acc = accuracy_or_zero(fit, &d.validation)?;
        if acc > best.0 {
            best = (acc, g);
        }
    }
    Ok(best.1)
}

fn defaults_grid(d: &Prepared, eps: f64, pass_factor: f64, clip_factor: f64) -> Result<Grid> {
    let (n, p) = (d.train.n_samples(), d.train.n_features());
    let delta = 1.0 / (n as f64).powi(2);
    let c = dp_cd_defaults(&Logistic, eps, delta, &d.bounds, n, p)?;
    let passes = (c.passes_unclamped * pass_factor)
        .round()
        .clamp(PASSES_RANGE.0 as f64, PASSES_RANGE.1 as f64) as u64;
    Ok((passes, c.step_scale, c.clip * clip_factor))
}

/// 18 grid points around the defaults: passes x {1/3, 1, 3} (clamped), step scale
/// {0.5, 1}, clip x {1/2, 1, 2}.
fn near_defaults(&(passes, step, clip): &Grid) -> Vec<Grid> {
    let mut g = Vec::new();
    for fp in [1.0 / 3.0, 1.0, 3.0] {
        let pp = (passes as f64 * fp)
            .round()
            .clamp(PASSES_RANGE.0 as f64, PASSES_RANGE.1 as f64) as u64;
        for st in [0.5 * step, step] {
            for fc in [0.5, 1.0, 2.0] {
                g.push((pp, st, clip * fc));
            }
        }
    }
    g
}

fn fmt_grid(g: &Grid) -> String {
    format!("{}/{}/{}", g.0, g.1, (g.2 * 1000.0).round() / 1000.0)
}

fn compare(seeds: u64) -> Result<()> {
    println!(
        "Test accuracy, mean of {seeds} seeded fits. Cells: accuracy (passes / step scale / clip). \
         tuned: uncharged validation tuning over 100 grid points; defaults: no tuning; \
         selection: private selection over the same grid (geometric K, mean 10), charged, \
         selected grid point of the first seed shown.\n"
    );
    println!("| data | n_train | p | eps | tuned | defaults | defaults - tuned | selection | selection - tuned | selection near defaults | near - tuned | majority |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for d in datasets()? {
        let (n, p) = (d.train.n_samples(), d.train.n_features());
        let delta = 1.0 / (n as f64).powi(2);
        for eps in EPSILONS {
            let tuned_g = tune(&d, eps)?;
            let tuned = refit(&d, eps, &tuned_g, seeds)?;
            let def_g = defaults_grid(&d, eps, 1.0, 1.0)?;
            // The API the rules are exposed through, to check it agrees.
            let (params, chosen) =
                DpCdParams::defaults_for(Logistic, L2::new(LAMBDA)?, eps, delta, &d.bounds, n, p)?;
            if (chosen.passes, chosen.step_scale, chosen.clip) != def_g {
                bail!("defaults_for chose {chosen:?}, the rules {def_g:?}");
            }
            let def = mean_accuracy(&params.build()?, &d.train, &d.test, seeds)?;
            // Private selection, charged.
            let sel_params = SelectionParams::new(eps, delta);
            let build = |g: &Grid,
                         privacy: PrivacyParams|
             -> dp_optim::Result<Box<dyn Solver<DenseDesign>>> {
                Ok(Box::new(solver(&d.bounds, privacy, g)?))
            };
            // Mean test accuracy of the selected models over `seeds` selections (rng seeds
            // `seed0`, `seed0 + 1`, ..), and the choice and per-fit epsilon of the first.
            let selection = |grid: &[Grid], seed0: u64| -> Result<(f64, Option<(Grid, f64)>)> {
                let (mut sum, mut first) = (0.0, None);
                for seed in 0..seeds {
                    let mut rng = ChaCha20Rng::seed_from_u64(seed0 + seed);
                    let r = select_with_rng(
                        &sel_params,
                        grid,
                        build,
                        &d.fit_part,
                        &d.validation,
                        &mut rng,
                    )?;
                    check_epsilon(&r.model, eps)?;
                    sum += r.model.accuracy(&d.test)?;
                    first.get_or_insert((r.choice, r.plan.fit_epsilon));
                }
                Ok((sum / seeds as f64, first))
            };
            let (sel, first) = selection(&grid(), 5000)?;
            let (sel_g, fit_eps) = first.unwrap_or_default();
            // Private selection over 18 points around the defaults.
            let (sel_near, _) = selection(&near_defaults(&def_g), 6000)?;
            println!(
                "| {} | {n} | {p} | {eps} | {tuned:.3} ({}) | {def:.3} ({}) | {:+.3} | {sel:.3} ({}, per-fit eps {fit_eps:.3}) | {:+.3} | {sel_near:.3} | {:+.3} | {:.3} |",
                d.name,
                fmt_grid(&tuned_g),
                fmt_grid(&def_g),
                def - tuned,
                fmt_grid(&sel_g),
                sel - tuned,
                sel_near - tuned,
                majority(&d.test),
            );
        }
    }
    Ok(())
}

fn calibrate(seeds: u64, pass_factors: &[f64], clip_factors: &[f64]) -> Result<()> {
    println!(
        "Defaults with the passes constant x f_T and the clip constant x f_C: test accuracy, mean of {seeds} seeded fits.\n"
    );
    let mut header = String::from("| data | eps |");
    for &ft in pass_factors {
        for &fc in clip_factors {
            header.push_str(&format!(" T x{ft}, C x{fc} |"));
        }
    }
    println!("{header}");
    println!(
        "|---|---|{}",
        "---|".repeat(pass_factors.len() * clip_factors.len())
    );
    for d in datasets()? {
        for eps in EPSILONS {
            let mut line = format!("| {} | {eps} |", d.name);
            for &ft in pass_factors {
                for &fc in clip_factors {
                    let g = defaults_grid(&d, eps, ft, fc)?;
                    line.push_str(&format!(" {:.3} ({}) |", refit(&d, eps, &g, seeds)?, g.0));
                }
            }
            println!("{line}");
        }
    }
    Ok(())
}

/// Test accuracy of `s`, mean over `seeds` seeded fits (seeds 1000, 1001, ..; a diverged
/// fit counts 0).
fn mean_accuracy<S: Solver<DenseDesign> + ?Sized>(
    s: &S,
    train: &Dataset<DenseDesign>,
    test: &Dataset<DenseDesign>,
    seeds: u64,
) -> Result<f64> {
    let mut sum = 0.0;
    for seed in 0..seeds {
        sum += accuracy_or_zero(s.fit_seeded(train, 1000 + seed), test)?;
    }
    Ok(sum / seeds as f64)
}

/// Refuses a selected model whose guarantee is missing or above `eps`.
fn check_epsilon(model: &dp_optim::model::LinearModel, eps: f64) -> Result<()> {
    match model.guarantee() {
        Some(g) if g.epsilon <= eps => Ok(()),
        Some(g) => bail!("selection epsilon {} > {eps}", g.epsilon),
        None => bail!("a selected model without its guarantee"),
    }
}

/// Rows divided by `r` (public), for DP-SCD's rows of norm at most 1.
fn rows_divided(d: &Dataset<DenseDesign>, r: f64) -> Result<Dataset<DenseDesign>> {
    rows_of(d, |x| x.iter().map(|v| v / r).collect())
}

fn algorithms(seeds: u64) -> Result<()> {
    use dp_optim::{CdParams, DpGcdParams, DpScdParams, DpSgdParams};
    println!(
        "No-tuning defaults of each private algorithm: test accuracy, mean of {seeds} seeded fits \
         (passes, or DP-GCD iterations, in brackets). Logistic loss, L2 {LAMBDA}, delta = 1 / n_train^2.\n"
    );
    println!("| data | eps | dp-cd | dp-gcd | dp-sgd | dp-scd | non-private | majority |");
    println!("|---|---|---|---|---|---|---|---|");
    for d in datasets()? {
        let (n, p) = (d.train.n_samples(), d.train.n_features());
        let delta = 1.0 / (n as f64).powi(2);
        let l2 = || L2::new(LAMBDA);

        // Non-private: the M_j = c mean_i x_ij^2 computed from the data (no privacy here),
        // with c for an all-zero training column (whose coefficient stays 0).
        let m: Vec<f64> = (0..p)
            .map(|j| {
                let c = d.train.x().col(j);
                let v = 0.25 * c.iter().map(|x| x * x).sum::<f64>() / n as f64;
                if v > 0.0 {
                    v
                } else {
                    0.25
                }
            })
            .collect();
        let nonpriv = CdParams::new(Logistic, l2()?)
            .passes(200)
            .smoothness(Smoothness::Given(
                dp_models::constants::Tagged::data_non_private(m),
            ))
            .build()?;
        let np_acc = mean_accuracy(&nonpriv, &d.train, &d.test, 1)?;
        // DP-SCD: rows of norm <= 1.
        let r = d.bounds.effective_row_norm()?.max(1.0);
        let (scd_train, scd_test) = if r > 1.0 {
            (rows_divided(&d.train, r)?, rows_divided(&d.test, r)?)
        } else {
            (d.train.clone(), d.test.clone())
        };
        let scd_bounds = PublicBounds::uniform(p, 1.0 / r).with_row_norm(1.0);
        for eps in [0.1, 1.0, 5.0] {
            let (cd, cdd) = DpCdParams::defaults_for(Logistic, l2()?, eps, delta, &d.bounds, n, p)?;
            let (gcd, gcdd) =
                DpGcdParams::defaults_for(Logistic, l2()?, eps, delta, &d.bounds, n, p)?;
            let (sgd, sgdd) =
                DpSgdParams::defaults_for(Logistic, l2()?, eps, delta, &d.bounds, n, p)?;
            let (scd, scdd) = DpScdParams::defaults_for(
                dp_models::Logistic,
                l2()?,
                eps,
                delta,
                &scd_bounds,
                n,
                p,
            )?;
            let a_cd = mean_accuracy(&cd.build()?, &d.train, &d.test, seeds)?;
            let a_gcd = mean_accuracy(&gcd.build()?, &d.train, &d.test, seeds)?;
            let a_sgd = mean_accuracy(&sgd.build()?, &d.train, &d.test, seeds)?;
            let a_scd = mean_accuracy(&scd.build()?, &scd_train, &scd_test, seeds)?;
            println!(
                "| {} | {eps} | {a_cd:.3} ({}) | {a_gcd:.3} ({}) | {a_sgd:.3} ({}) | {a_scd:.3} ({}) | {np_acc:.3} | {:.3} |",
                d.name,
                cdd.passes,
                gcdd.passes,
                sgdd.passes,
                scdd.passes,
                majority(&d.test)
            );
        }
    }
    Ok(())
}
