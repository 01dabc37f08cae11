//! Diagnostic: where DP-SCD's classification accuracy goes. For Adult logistic / SVM
//! (the DP-SCD experiment's preprocessing, quick profile), prints the test accuracy of
//! DP-SCD under each noise placement, with the noise std the plan puts on `w` per
//! coordinate (`noise_std * sqrt(T) / (lambda n)`) beside `||w_sdca||_inf`.
//! `cargo xtask study scd-noise [EPS,..] [CLIPS,..]` (default grids: epsilon
//! `1,10,1000,1000000`, clip `0.1,0.5`).

use crate::experiments::dp_scd::{self, load_problem, App, Data, Settings, DELTA, LAMBDA};
use crate::experiments::Profile;
use dp_models::{DualLoss, Hinge, Logistic, Loss, L2};
use dp_optim::{DpScdParams, DualNoise, SdcaParams, Solver, SolverPlan};

fn measure<L: DualLoss + Loss + Clone>(
    loss: L,
    app: App,
    eps_grid: &[f64],
    clip_grid: &[f64],
) -> anyhow::Result<()> {
    let s = Settings::for_profile(Profile::Quick);
    let p = load_problem(Data::Adult, app, &s, 20221021)?;
    let n = p.fit.n_samples();
    let sdca = SdcaParams::new(loss.clone(), L2::new(LAMBDA)?)
        .passes(20)
        .build()?
        .fit_seeded(&p.fit, 1)?;
    let w = &sdca.model.coefficients;
    let winf = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let wnorm = w.iter().map(|v| v * v).sum::<f64>().sqrt();
    let majority = super::majority(&p.test);
    println!(
        "{} n = {n} p = {} sdca acc {} ||w||_inf {winf:.3} ||w||_2 {wnorm:.3} majority {majority:.4}",
        p.name(),
        p.fit.n_features(),
        shown(dp_scd::measure(app, &p.test, w), 4)
    );
    println!("eps | E | L | C | noise | w-noise std/coord | acc (3 seeds) | ||w||_2");
    for &eps in eps_grid {
        for &epochs in &[1u64, 5, 20] {
            for &batch in &[100u64, 1000] {
                for &clip in clip_grid {
                    for dn in [DualNoise::EveryRecord, DualNoise::SampledRecords] {
                        let solver = DpScdParams::new(loss.clone(), L2::new(LAMBDA)?)
                            .epsilon(eps)
                            .delta(DELTA)
                            .passes(epochs)
                            .batch_size(batch)
                            .clip(clip)
                            .dual_noise(dn)
                            .build()?;
                        let mut accs = Vec::new();
                        let mut norm = 0.0;
                        let mut wstd = 0.0;
                        for seed in 0..3 {
                            let f = solver.fit_seeded(&p.fit, seed)?;
                            accs.push(dp_scd::measure(app, &p.test, &f.model.coefficients));
                            norm = f
                                .model
                                .coefficients
                                .iter()
                                .map(|v| v * v)
                                .sum::<f64>()
                                .sqrt();
                            if let Some(SolverPlan::DpScd(plan)) = f.privacy().map(|q| &q.plan) {
                                wstd = plan.noise_std * (plan.steps as f64).sqrt()
                                    / (LAMBDA * n as f64);
                            }
                        }
                        println!(
                            "{eps} | {epochs} | {batch} | {clip} | {} | {wstd:.3} | {} | {norm:.2}",
                            dn.name(),
                            accs.iter()
                                .map(|&a| shown(a, 3))
                                .collect::<Vec<_>>()
                                .join(" ")
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

pub(super) fn run(args: &[String]) -> anyhow::Result<()> {
    let eps = super::list(args, 0, &[1.0, 10.0, 1e3, 1e6])?;
    let clips = super::list(args, 1, &[0.1, 0.5])?;
    super::no_more(&args[args.len().min(2)..], "[EPS,..] [CLIPS,..]")?;
    measure(Logistic, App::Logistic, &eps, &clips)?;
    measure(Hinge, App::Svm, &eps, &clips)
}

/// A metric to print: `diverged` where the coefficients were not finite.
fn shown(metric: Option<f64>, digits: usize) -> String {
    metric.map_or_else(|| "diverged".to_string(), |a| format!("{a:.digits$}"))
}
