//! DP-GCD experiment's fit closures: one per (algorithm, rule, accounting), and the runner's
//! tasks built from them ([`build_tasks`]).

use super::*;

/// The options of a zCDP DP-GCD task (ignored by the paper's variant).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct GcdOpts {
    /// Fraction of each iteration's rho spent on the selection.
    selection_share: f64,
    /// Fraction of the total rho spent on the final support test, if any.
    support_test: Option<f64>,
}

impl Default for GcdOpts {
    fn default() -> Self {
        Self {
            selection_share: 0.5,
            support_test: None,
        }
    }
}

/// Steps for a budget of `milli` thousandths of a pass over `units` coordinates (DP-CD)
/// or records (DP-SGD): `None` for whole passes (the solvers' `passes`), else
/// `ceil(milli units / 1000) >= 1` steps.
pub(super) fn fractional_steps(milli: u64, units: usize) -> Option<u64> {
    if milli.is_multiple_of(MILLI_PASSES) {
        None
    } else {
        Some((milli * units as u64).div_ceil(MILLI_PASSES).max(1))
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn gcd_run<D: Design, L: Loss + Clone, P: Penalty + Clone>(
    data: &Dataset<D>,
    loss: &L,
    pen: &P,
    ridge: f64,
    rule: SelectionRule,
    variant: Variant,
    opts: GcdOpts,
    delta: f64,
    h: &Hyper,
    seed: u64,
) -> Result<RunOutput> {
    let params = DpGcdParams::new(loss.clone(), pen.clone())
        .epsilon(EPSILON)
        .delta(delta)
        .passes(h.budget)
        .step_scale(h.step)
        .clip(h.clip)
        .ridge(ridge)
        .rule(rule)
        .variant(variant)
        .rnm_calibration(RnmCalibration::Paper)
        .allow_non_private_constants(true);
    let params = if variant == Variant::Zcdp {
        let p = params.selection_share(opts.selection_share);
        match opts.support_test {
            Some(f) => p.support_test(f),
            None => p,
        }
    } else {
        params
    };
    let plan = params.build()?;
    let (rep, secs) = timed(|| plan.fit_seeded(data, seed));
    Ok(RunOutput {
        coefficients: rep?.model.coefficients,
        fit_seconds: secs,
    })
}

pub(super) fn cd_run<D: ColumnKernels, L: Loss + Clone, P: Penalty + Clone>(
    data: &Dataset<D>,
    loss: &L,
    pen: &P,
    delta: f64,
    h: &Hyper,
    seed: u64,
) -> Result<RunOutput> {
    let solver = DpCdParams::new(loss.clone(), pen.clone())
        .epsilon(EPSILON)
        .delta(delta);
    let solver = match fractional_steps(h.budget, data.n_features()) {
        Some(steps) => solver.steps(steps),
        None => solver.passes(h.budget / MILLI_PASSES),
    };
    let solver = solver
        .step_scale(h.step)
        .clip(h.clip)
        .accounting(Accounting::Paper)
        .allow_non_private_constants(true)
        .build()?;
    let (rep, secs) = timed(|| solver.fit_seeded(data, seed));
    Ok(RunOutput {
        coefficients: rep?.model.coefficients,
        fit_seconds: secs,
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn sgd_run<D: Design, L: Loss + Clone, P: Penalty + Clone>(
    data: &Dataset<D>,
    loss: &L,
    pen: &P,
    beta: f64,
    delta: f64,
    h: &Hyper,
    seed: u64,
    cache: &CalibrationCache,
) -> Result<RunOutput> {
    let solver = DpSgdParams::new(loss.clone(), pen.clone())
        .calibration_cache(cache.clone())
        .epsilon(EPSILON)
        .delta(delta);
    let solver = match fractional_steps(h.budget, data.n_samples()) {
        Some(steps) => solver.steps(steps),
        None => solver.passes(h.budget / MILLI_PASSES),
    };
    let solver = solver
        .step_scale(h.step)
        .clip(h.clip)
        .accounting(Accounting::Paper)
        .smoothness(GlobalSmoothness::Given(Tagged::data_non_private(beta)))
        .allow_non_private_constants(true)
        .build()?;
    let (rep, secs) = timed(|| solver.fit_seeded(data, seed));
    Ok(RunOutput {
        coefficients: rep?.model.coefficients,
        fit_seconds: secs,
    })
}

pub(super) fn fit_fn<'a, D: ColumnKernels>(
    p: &'a Problem<D>,
    alg: Algorithm,
    rule: SelectionRule,
    opts: GcdOpts,
) -> Box<FitFn<'a>> {
    let data = &p.data;
    let delta = p.delta();
    let model = p.model;
    let lam = model.lambda();
    let beta = p.beta;
    // DP-SGD's calibrations, shared by the task's runs (bit-identical fits, one search
    // per distinct plan).
    let cache = CalibrationCache::new();
    Box::new(move |h: &Hyper, seed: u64| -> Result<RunOutput> {
        let variant = if matches!(alg, Algorithm::DpGcdZcdp | Algorithm::DpGcdZcdpSupport) {
            Variant::Zcdp
        } else {
            Variant::Laplace
        };
        match (alg, model) {
            (
                Algorithm::DpGcd | Algorithm::DpGcdZcdp | Algorithm::DpGcdZcdpSupport,
                Model::LogisticL2 { .. },
            ) => gcd_run(
                data,
                &Logistic,
                &NoPenalty,
                lam,
                SelectionRule::GsL,
                variant,
                opts,
                delta,
                h,
                seed,
            ),
            (
                Algorithm::DpGcd | Algorithm::DpGcdZcdp | Algorithm::DpGcdZcdpSupport,
                Model::LeastSquaresL2 { .. },
            ) => gcd_run(
                data,
                &Squared::half(),
                &NoPenalty,
                lam,
                SelectionRule::GsL,
                variant,
                opts,
                delta,
                h,
                seed,
            ),
            (
                Algorithm::DpGcd | Algorithm::DpGcdZcdp | Algorithm::DpGcdZcdpSupport,
                Model::Lasso { .. },
            ) => gcd_run(
                data,
                &Squared::half(),
                &L1::new(lam)?,
                0.0,
                rule,
                variant,
                opts,
                delta,
                h,
                seed,
            ),
            (
                Algorithm::DpGcd | Algorithm::DpGcdZcdp | Algorithm::DpGcdZcdpSupport,
                Model::LogisticL1 { .. },
            ) => gcd_run(
                data,
                &Logistic,
                &L1::new(lam)?,
                0.0,
                rule,
                variant,
                opts,
                delta,
                h,
                seed,
            ),
            (Algorithm::DpCd, Model::LogisticL2 { .. }) => {
                cd_run(data, &Logistic, &L2::new(lam)?, delta, h, seed)
            }
            (Algorithm::DpCd, Model::LeastSquaresL2 { .. }) => {
                cd_run(data, &Squared::half(), &L2::new(lam)?, delta, h, seed)
            }
            (Algorithm::DpCd, Model::Lasso { .. }) => {
                cd_run(data, &Squared::half(), &L1::new(lam)?, delta, h, seed)
            }
            (Algorithm::DpCd, Model::LogisticL1 { .. }) => {
                cd_run(data, &Logistic, &L1::new(lam)?, delta, h, seed)
            }
            (Algorithm::DpSgd, Model::LogisticL2 { .. }) => sgd_run(
                data,
                &Logistic,
                &L2::new(lam)?,
                beta,
                delta,
                h,
                seed,
                &cache,
            ),
            (Algorithm::DpSgd, Model::LeastSquaresL2 { .. }) => sgd_run(
                data,
                &Squared::half(),
                &L2::new(lam)?,
                beta,
                delta,
                h,
                seed,
                &cache,
            ),
            (Algorithm::DpSgd, Model::Lasso { .. }) => sgd_run(
                data,
                &Squared::half(),
                &L1::new(lam)?,
                beta,
                delta,
                h,
                seed,
                &cache,
            ),
            (Algorithm::DpSgd, Model::LogisticL1 { .. }) => sgd_run(
                data,
                &Logistic,
                &L1::new(lam)?,
                beta,
                delta,
                h,
                seed,
                &cache,
            ),
        }
    })
}

pub(super) fn build_tasks<'a, D: ColumnKernels>(p: &'a Problem<D>, s: &Settings) -> Vec<Task<'a>> {
    let mut tasks = Vec::new();
    let rules: Vec<SelectionRule> = if p.model.is_l1() {
        s.rules.clone()
    } else {
        vec![SelectionRule::GsL]
    };
    let mut push_with = |alg: Algorithm,
                         rule: Option<SelectionRule>,
                         opts: Option<GcdOpts>,
                         steps: &[f64],
                         clips: &[f64],
                         budgets: &[u64]| {
        let mut id = TaskId::new(p.name.as_str(), alg.as_str(), alg.accounting());
        if let Some(r) = rule {
            id.extra.push(("rule".into(), r.name().into()));
        }
        if let Some(o) = opts {
            id.extra
                .push(("selection_share".into(), o.selection_share.to_string()));
            if let Some(f) = o.support_test {
                id.extra.push(("support_test".into(), f.to_string()));
            }
        }
        tasks.push(Task {
            id,
            grid: Grid {
                steps: steps.to_vec(),
                clips: clips.to_vec(),
                budgets: budgets.to_vec(),
            },
            fit: fit_fn(
                p,
                alg,
                rule.unwrap_or(SelectionRule::GsL),
                opts.unwrap_or_default(),
            ),
            objective: Box::new(move |w: &[f64]| p.objective(w)),
            objective_star: p.objective_star,
        });
    };
    for &r in &rules {
        push_with(
            Algorithm::DpGcd,
            Some(r),
            None,
            &s.cd_steps,
            &s.clips,
            &s.gcd_iterations,
        );
    }
    for &r in &rules {
        for &share in &s.zcdp_selection_shares {
            let opts = GcdOpts {
                selection_share: share,
                support_test: None,
            };
            push_with(
                Algorithm::DpGcdZcdp,
                Some(r),
                Some(opts),
                &s.cd_steps,
                &s.clips,
                &s.gcd_iterations,
            );
        }
    }
    if p.model.is_l1() {
        // The support test only acts through a sparsity-inducing penalty; GS-r as Fig. 1.
        for &share in &s.support_selection_shares {
            for &f in &s.support_test_fractions {
                let opts = GcdOpts {
                    selection_share: share,
                    support_test: Some(f),
                };
                push_with(
                    Algorithm::DpGcdZcdpSupport,
                    Some(SelectionRule::GsR),
                    Some(opts),
                    &s.cd_steps,
                    &s.clips,
                    &s.gcd_iterations,
                );
            }
        }
    }
    let milli = |passes: &[u64]| -> Vec<u64> {
        let mut b = s.fractional_milli_passes.clone();
        b.extend(passes.iter().map(|v| v * MILLI_PASSES));
        b
    };
    if p.name == ProblemName::DorotheaLike {
        push_with(
            Algorithm::DpCd,
            None,
            None,
            &s.cd_steps,
            &s.clips,
            &milli(&s.cd_passes_dorothea),
        );
    } else {
        push_with(
            Algorithm::DpCd,
            None,
            None,
            &s.cd_steps,
            &s.clips,
            &milli(&s.passes),
        );
    }
    if p.name == ProblemName::DorotheaLike {
        push_with(
            Algorithm::DpSgd,
            None,
            None,
            &s.sgd_steps_dorothea,
            &s.sgd_clips_dorothea,
            &milli(&s.sgd_passes_dorothea),
        );
    } else {
        push_with(
            Algorithm::DpSgd,
            None,
            None,
            &s.sgd_steps,
            &s.sgd_clips,
            &milli(&s.sgd_passes),
        );
    }
    tasks
}
