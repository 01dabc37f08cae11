//! The Adult protocol for one method at one epsilon ([`run_method`]): validation-tuned,
//! fixed, rule-chosen or privately selected points (chosen with the runner's
//! [`best_index`]), then the fresh fits on the training rows.

use super::*;

pub(super) fn edges(grid: &[Point], t: &Point) -> Vec<String> {
    let mut out = Vec::new();
    let mut axis = |name: &str, vals: Vec<f64>, v: f64| {
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if lo < hi && (v == lo || v == hi) {
            out.push(name.to_owned());
        }
    };
    axis(
        "passes",
        grid.iter().map(|p| p.passes as f64).collect(),
        t.passes as f64,
    );
    axis("step", grid.iter().map(|p| p.step).collect(), t.step);
    axis("clip", grid.iter().map(|p| p.clip).collect(), t.clip);
    if let Some(b) = t.batch {
        axis(
            "batch",
            grid.iter()
                .filter_map(|p| p.batch)
                .map(|b| b as f64)
                .collect(),
            b as f64,
        );
    }
    axis("lambda", grid.iter().map(|p| p.lambda).collect(), t.lambda);
    out
}

/// Runs one method at one epsilon: tuning (per its [`Tuning`]), then the fresh fits.
pub(super) fn run_method(
    m: &Method,
    eps: f64,
    splits: &Splits,
    settings: &Settings,
    base_seed: u64,
) -> Result<Record> {
    let n = splits.train.n_samples() as f64;
    let n_fit = splits.tune_fit.n_samples() as f64;
    let (delta, val_delta) = (1.0 / (n * n), 1.0 / (n_fit * n_fit));
    let eps_key = eps.to_bits();
    let n_train = splits.train.n_samples();
    let p = splits.train.n_features();
    // The point the final fits use (`None`: a selection, which picks per run).
    let (point, validation, mut failed): (Option<Point>, Option<f64>, usize) = match &m.tuning {
        Tuning::Fixed => {
            anyhow::ensure!(
                m.grid.len() == 1,
                "{}: a fixed method has one point, got {}",
                m.key,
                m.grid.len()
            );
            (Some(m.grid[0]), None, 0)
        }
        Tuning::Rule(rule) => (Some(rule(eps, delta, n_train, p)?), None, 0),
        Tuning::Selection(_) => (None, None, 0),
        Tuning::Validation => {
            let scores: Vec<(f64, usize)> = par_runs(m.grid.len(), |g| {
                let (mut acc, mut fails) = (0.0, 0);
                for r in 0..settings.tuning_runs {
                    let seed = stable_seed(
                        base_seed,
                        &[NAME, m.key, "tune"],
                        &[eps_key, g as u64, r as u64],
                    );
                    let fit = (m.fit)(&FitInput {
                        epsilon: eps,
                        delta: val_delta,
                        point: &m.grid[g],
                        data: &splits.tune_fit,
                        seed,
                    });
                    match fit.and_then(|f| Ok(f.model.accuracy(&splits.tune_val)?)) {
                        Ok(a) => acc += a,
                        Err(_) => fails += 1,
                    }
                }
                // A point with a failed run is not eligible.
                let score = if fails > 0 {
                    f64::NEG_INFINITY
                } else {
                    acc / settings.tuning_runs as f64
                };
                (score, fails)
            });
            let failed: usize = scores.iter().map(|s| s.1).sum();
            // First best in grid order (deterministic).
            let accuracies: Vec<f64> = scores.iter().map(|s| s.0).collect();
            let best = best_index(&accuracies, Goal::Higher).unwrap_or(0);
            let v = scores[best].0;
            (Some(m.grid[best]), v.is_finite().then_some(v), failed)
        }
    };
    // One fresh run: (test accuracy, solver seconds, model, point used, per-fit epsilon
    // of a selection).
    type Run = (f64, f64, LinearModel, Point, Option<f64>, Option<f64>);
    let finals: Vec<Result<Run>> = par_runs(settings.final_runs, |r| {
        let seed = stable_seed(base_seed, &[NAME, m.key, "final"], &[eps_key, r as u64]);
        let t = Instant::now();
        let (model, used, fit_eps, runs) = match (&m.tuning, point) {
            (Tuning::Selection(select), _) => {
                let o = select(&SelectInput {
                    epsilon: eps,
                    delta,
                    grid: &m.grid,
                    fit_rows: &splits.tune_fit,
                    validation: &splits.tune_val,
                    seed,
                })?;
                (o.model, o.point, Some(o.fit_epsilon), Some(o.expected_runs))
            }
            (_, Some(point)) => {
                let f = (m.fit)(&FitInput {
                    epsilon: eps,
                    delta,
                    point: &point,
                    data: &splits.train,
                    seed,
                })?;
                (f.model, point, None, None)
            }
            (_, None) => anyhow::bail!("{}: no point to fit", m.key),
        };
        let secs = t.elapsed().as_secs_f64();
        Ok((
            model.accuracy(&splits.test)?,
            secs,
            model,
            used,
            fit_eps,
            runs,
        ))
    });
    let mut accs = Vec::new();
    let mut secs = Vec::new();
    let mut points = Vec::new();
    let mut fit_epsilon: Option<f64> = None;
    let mut expected_runs: Option<f64> = None;
    let mut achieved: Option<f64> = None;
    let mut algorithm = String::new();
    let mut accounting = String::new();
    let mut fully_private = m.group != Group::DataConstants;
    for f in finals {
        match f {
            Ok((a, s, model, used, fe, er)) => {
                accs.push(a);
                secs.push(s);
                points.push(used);
                fit_epsilon = fe.or(fit_epsilon);
                expected_runs = er.or(expected_runs);
                algorithm = model.algorithm.clone();
                if let Some(pr) = &model.privacy {
                    achieved = Some(achieved.unwrap_or(0.0).max(pr.guarantee.epsilon));
                    accounting = pr.guarantee.how.clone();
                    fully_private &= !pr.uses_non_private_constants;
                } else {
                    fully_private = false;
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("adult: {} at eps {eps}: a final fit failed: {e}", m.key);
            }
        }
    }
    let complete = accs.len() == settings.final_runs && !accs.is_empty();
    // The point shown: the tuned / rule point, or the one a selection chose most often
    // (first in grid order on ties).
    let shown = point.or_else(|| {
        m.grid
            .iter()
            .max_by_key(|g| {
                (
                    points.iter().filter(|q| q == g).count(),
                    std::cmp::Reverse(m.grid.iter().position(|h| h == *g)),
                )
            })
            .filter(|g| points.contains(g))
            .copied()
    });
    let edge = shown.map_or_else(Vec::new, |pt| edges(&m.grid, &pt));
    let st = Stats::of(&accs);
    Ok(Record {
        method: m.key.to_owned(),
        label: m.label.clone(),
        group: group_name(m.group).to_owned(),
        algorithm,
        accounting,
        tuning: m.tuning.as_str().to_owned(),
        epsilon: Some(eps),
        delta: Some(delta),
        achieved_epsilon_max: achieved,
        fully_private,
        runs: settings.final_runs,
        accuracy_mean: complete.then_some(st.mean),
        accuracy_min: complete.then_some(st.min),
        accuracy_max: complete.then_some(st.max),
        accuracy_runs: accs,
        validation_accuracy: validation,
        tuned: shown,
        points_used: points,
        selection_fit_epsilon: fit_epsilon,
        selection_expected_runs: expected_runs,
        grid_points: m.grid.len(),
        step_on_grid_edge: edge.iter().any(|a| a == "step"),
        clip_on_grid_edge: edge.iter().any(|a| a == "clip"),
        on_grid_edge: edge,
        failed_runs: failed,
        seconds_per_run: (!secs.is_empty()).then(|| secs.iter().sum::<f64>() / secs.len() as f64),
    })
}
