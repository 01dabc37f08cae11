//! The Adult experiment's methods: one fit closure per row (DP-CD with public, private or
//! data constants, DP-GCD, DP-SGD, the defaults and the charged selection) and their grids
//! ([`methods`]).

use super::*;

/// The DP-CD builder every DP-CD row shares: logistic + L2 at the point's `lambda`,
/// `Accounting::Exact` (GDP), the point's passes, step scale and clip, `constants`,
/// `averaging`; under add/remove with the split's size as the public count.
pub(super) fn dp_cd_params(
    constants: Constants,
    averaging: Averaging,
    adjacency: Adjacency,
    f: &FitInput<'_>,
) -> Result<DpCdParams<Logistic, L2>> {
    let (smoothness, allow) = constants.smoothness(f.data)?;
    let params = DpCdParams::new(Logistic, L2::new(f.point.lambda)?)
        .epsilon(f.epsilon)
        .delta(f.delta)
        .passes(f.point.passes)
        .step_scale(f.point.step)
        .clip(f.point.clip)
        .averaging(averaging)
        .accounting(Accounting::Exact)
        .smoothness(smoothness)
        .allow_non_private_constants(allow);
    Ok(match adjacency {
        Adjacency::ReplaceOne => params,
        Adjacency::AddRemove => params
            .adjacency(Adjacency::AddRemove)
            .public_n(f.data.n_samples()),
    })
}

/// DP-CD (Mangold et al. 2022) with `constants`, `Accounting::Exact` (GDP), last
/// iterate or `averaging`.
pub fn dp_cd(constants: Constants, averaging: Averaging) -> FitFn {
    Box::new(move |f: &FitInput<'_>| {
        Ok(
            dp_cd_params(constants, averaging, Adjacency::ReplaceOne, f)?
                .build()?
                .fit_seeded(f.data, f.seed)?,
        )
    })
}

/// DP-CD as [`dp_cd`] (last iterate) but under add/remove, Opacus' neighbouring
/// relation: every release (and the private `M_j`) normalised by the number of records
/// stated as public (here the size of the split it is fitted on, as Opacus takes the
/// expected batch size `q N` as public), with the add/remove sensitivities (`C_j / N`
/// per release, half the replace-one `2 C_j / n`). A guarantee under another relation
/// from the replace-one rows: shown so that the comparison with Opacus is like for like.
pub fn dp_cd_add_remove(constants: Constants) -> FitFn {
    Box::new(move |f: &FitInput<'_>| {
        Ok(
            dp_cd_params(constants, Averaging::LastIterate, Adjacency::AddRemove, f)?
                .build()?
                .fit_seeded(f.data, f.seed)?,
        )
    })
}

/// Adult's public row-support bound: at most one indicator of each one-hot encoded
/// column is non-zero (`dp_bench::data::one_hot_groups`), so a record has at most
/// `k = 12` non-zero features of the `p = 81` (five numeric columns, seven groups).
/// Derived from the encoding once per process.
pub(super) fn adult_row_support() -> Result<RowSupport> {
    static SUPPORT: std::sync::OnceLock<std::result::Result<RowSupport, String>> =
        std::sync::OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            crate::data::adult()
                .map(|(_, names)| RowSupport::one_hot(crate::data::one_hot_groups(&names)))
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| anyhow::anyhow!("adult row support: {e}"))
}

/// DP-CD as [`dp_cd`] (last iterate) with the public row-support bound of Adult's
/// one-hot design (`adult_row_support`): each pass is charged as the `k = 12`
/// releases one record can move instead of all `p = 81`
/// ([`DpCdParams::row_support`]), in a fresh random permutation of the coordinates per
/// pass (which the bound needs), under `adjacency` (with the split's size as the public
/// count under add/remove, as [`dp_cd_add_remove`]).
pub fn dp_cd_support(constants: Constants, adjacency: Adjacency) -> FitFn {
    dp_cd_support_averaged(constants, adjacency, Averaging::LastIterate)
}

/// [`dp_cd_support`] returning `averaging`'s iterate instead of the last one
/// (post-processing of the released iterates: the guarantee is unchanged).
pub fn dp_cd_support_averaged(
    constants: Constants,
    adjacency: Adjacency,
    averaging: Averaging,
) -> FitFn {
    Box::new(move |f: &FitInput<'_>| {
        Ok(dp_cd_params(constants, averaging, adjacency, f)?
            .coordinate_order(CoordinateOrder::Permutation)
            .row_support(Some(adult_row_support()?))
            .build()?
            .fit_seeded(f.data, f.seed)?)
    })
}

/// DP-GCD, our zCDP variant (Gaussian updates, Gumbel report-noisy-max; Mangold et al.
/// 2023 with zCDP accounting), GS-L rule, with `constants`.
pub fn dp_gcd(constants: Constants) -> FitFn {
    Box::new(move |f: &FitInput<'_>| {
        let (smoothness, allow) = constants.smoothness(f.data)?;
        Ok(DpGcdParams::new(Logistic, L2::new(f.point.lambda)?)
            .epsilon(f.epsilon)
            .delta(f.delta)
            .passes(f.point.passes)
            .step_scale(f.point.step)
            .clip(f.point.clip)
            .variant(Variant::Zcdp)
            .smoothness(smoothness)
            .allow_non_private_constants(allow)
            .build()?
            .fit_seeded(f.data, f.seed)?)
    })
}

/// DP-SGD (batches without replacement, replace-one, RDP of the sampled Gaussian with
/// the improved conversion) with public `beta = c R^2 = 1/4` or (`private_beta`) the
/// private estimate of `GlobalSmoothness::Private` on [`CONSTANTS_FRACTION`] of epsilon.
pub fn dp_sgd(private_beta: bool) -> FitFn {
    let cache = CalibrationCache::new();
    Box::new(move |f: &FitInput<'_>| {
        let beta = if private_beta {
            GlobalSmoothness::Private {
                row_norm_bound: Tagged::public(1.0),
                budget_fraction: CONSTANTS_FRACTION,
                failure_probability: Some(0.05),
            }
        } else {
            GlobalSmoothness::Given(Tagged::public(0.25))
        };
        Ok(DpSgdParams::new(Logistic, L2::new(f.point.lambda)?)
            .epsilon(f.epsilon)
            .delta(f.delta)
            .passes(f.point.passes)
            .step_scale(f.point.step)
            .clip(f.point.clip)
            .batch_size(f.point.batch.unwrap_or(256))
            .accounting(Accounting::Exact)
            .smoothness(beta)
            .calibration_cache(cache.clone())
            .build()?
            .fit_seeded(f.data, f.seed)?)
    })
}

/// DP-SGD under add/remove with Poisson sampling (Opacus' neighbouring relation, a
/// different guarantee from the replace-one rows: replacing a record is removing one
/// and adding one, so an add/remove guarantee at `eps` gives replace-one only at about
/// `2 eps`), public `beta = 1/4`, the number of records stated as public. Shown so
/// that the comparison with Opacus can be read like for like.
pub fn dp_sgd_add_remove() -> FitFn {
    let cache = CalibrationCache::new();
    Box::new(move |f: &FitInput<'_>| {
        Ok(DpSgdParams::new(Logistic, L2::new(f.point.lambda)?)
            .epsilon(f.epsilon)
            .delta(f.delta)
            .passes(f.point.passes)
            .step_scale(f.point.step)
            .clip(f.point.clip)
            .batch_size(f.point.batch.unwrap_or(256))
            .adjacency(Adjacency::AddRemove)
            .public_n(f.data.n_samples())
            .accounting(Accounting::Exact)
            .smoothness(GlobalSmoothness::Given(Tagged::public(0.25)))
            .calibration_cache(cache.clone())
            .build()?
            .fit_seeded(f.data, f.seed)?)
    })
}

/// The public bounds of the preprocessed rows: `|x_ij| <= 1`, `||x_i|| <= 1`, and with
/// `support` the one-hot row-support bound (`adult_row_support`).
pub(super) fn adult_bounds(p: usize, support: bool) -> Result<PublicBounds> {
    let b = PublicBounds::uniform(p, 1.0).with_row_norm(1.0);
    Ok(if support {
        b.with_row_support(adult_row_support()?)
    } else {
        b
    })
}

/// The no-tuning rule of `dp_optim::auto` (DP-CD): passes, step scale and clip from
/// epsilon, delta, `n`, `p`, the logistic loss and the public bounds only (with
/// `support`, the one-hot row-support bound too).
pub fn dp_cd_defaults_rule(support: bool) -> RuleFn {
    Box::new(move |eps, delta, n, p| {
        let d = dp_cd_defaults(&Logistic, eps, delta, &adult_bounds(p, support)?, n, p)?;
        Ok(Point {
            passes: d.passes,
            step: d.step_scale,
            clip: d.clip,
            batch: None,
            lambda: LAMBDA,
        })
    })
}

/// DP-CD built by `DpCdParams::defaults_for` (the library's no-tuning defaults: private
/// `M_j` in one Gaussian release on 5 % of `mu^2`, `Accounting::Exact`); refuses to fit if the point it is
/// handed is not the one the rule chose (the record must show the point used).
pub fn dp_cd_defaults_fit(support: bool) -> FitFn {
    Box::new(move |f: &FitInput<'_>| {
        let p = f.data.n_features();
        let (params, chosen) = DpCdParams::defaults_for(
            Logistic,
            L2::new(LAMBDA)?,
            f.epsilon,
            f.delta,
            &adult_bounds(p, support)?,
            f.data.n_samples(),
            p,
        )?;
        anyhow::ensure!(
            chosen.passes == f.point.passes
                && chosen.step_scale == f.point.step
                && chosen.clip == f.point.clip,
            "the defaults chose {chosen:?}, the record says {:?}",
            f.point
        );
        Ok(params.build()?.fit_seeded(f.data, f.seed)?)
    })
}

/// Private selection (`dp_optim::select`, the library's default stopping rule:
/// truncated negative binomial with `eta = 1`, i.e. geometric with mean 10, Papernot &
/// Steinke 2022, 10 % of each run's `mu^2` on the noisy validation accuracy) over DP-CD
/// grid points with `constants`. The selection's fits are trained on `fit_rows` and
/// scored on `validation`; its guarantee is replace-one on their union.
pub fn dp_cd_selection(constants: Constants, support: bool) -> SelectFn {
    Box::new(move |s: &SelectInput<'_>| {
        let (smoothness, allow) = constants.smoothness(s.fit_rows)?;
        anyhow::ensure!(!allow, "a private selection takes private constants only");
        let row_support = if support {
            Some(adult_row_support()?)
        } else {
            None
        };
        let build = |pt: &Point,
                     privacy: PrivacyParams|
         -> dp_optim::Result<Box<dyn Solver<DenseDesign>>> {
            let params = DpCdParams::new(Logistic, L2::new(pt.lambda)?)
                .privacy(privacy)
                .passes(pt.passes)
                .step_scale(pt.step)
                .clip(pt.clip)
                .smoothness(smoothness.clone());
            let params = match &row_support {
                Some(bound) => params
                    .coordinate_order(CoordinateOrder::Permutation)
                    .row_support(Some(bound.clone())),
                None => params,
            };
            Ok(Box::new(params.build()?))
        };
        let params = SelectionParams::new(s.epsilon, s.delta);
        let mut rng = ChaCha20Rng::seed_from_u64(s.seed);
        let sel = select_with_rng(&params, s.grid, build, s.fit_rows, s.validation, &mut rng)?;
        Ok(SelectOutcome {
            model: sel.model,
            point: sel.choice,
            fit_epsilon: sel.plan.fit_epsilon,
            expected_runs: sel.plan.expected_runs,
        })
    })
}

/// The rows of the comparison, in report order. Adding a row (e.g. fixed defaults or a
/// charged private selection) is one more entry here.
pub fn methods(s: &Settings) -> Vec<Method> {
    let cd = s.cd_grid(&s.cd_steps, &[LAMBDA]);
    let pct = (CONSTANTS_FRACTION * 100.0).round();
    let mut m = vec![
        Method {
            key: "dp-cd-public",
            label: "DP-CD, public M_j = 1/4".into(),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: s.cd_grid(&s.cd_public_steps, &[LAMBDA]),
            fit: dp_cd(Constants::Public, Averaging::LastIterate),
        },
        Method {
            key: "dp-cd-private",
            label: format!("DP-CD, private M_j ({pct} % of eps)"),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: cd.clone(),
            fit: dp_cd(
                Constants::Private(CONSTANTS_FRACTION),
                Averaging::LastIterate,
            ),
        },
        Method {
            key: "dp-cd-gaussian",
            label: format!("DP-CD, private M_j (Gaussian, {pct} % of mu^2)"),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: cd.clone(),
            fit: dp_cd(
                Constants::PrivateGaussian(CONSTANTS_FRACTION),
                Averaging::LastIterate,
            ),
        },
        Method {
            key: "dp-cd-support",
            label: format!(
                "DP-CD, private M_j (Gaussian, {pct} % of mu^2), one-hot support accounting \
                 (12 of 81 features per record), permutation order"
            ),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: cd.clone(),
            fit: dp_cd_support(
                Constants::PrivateGaussian(CONSTANTS_FRACTION),
                Adjacency::ReplaceOne,
            ),
        },
        Method {
            key: "dp-cd-support-lambda",
            label: format!(
                "DP-CD, private M_j (Gaussian, {pct} % of mu^2), one-hot support accounting, \
                 lambda tuned in {:?}",
                s.support_lambdas
            ),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: s.cd_grid(&s.support_steps, &s.support_lambdas),
            fit: dp_cd_support(
                Constants::PrivateGaussian(CONSTANTS_FRACTION),
                Adjacency::ReplaceOne,
            ),
        },
        Method {
            key: "dp-cd-public-support",
            label: "DP-CD, public M_j = 1/4, one-hot support accounting, permutation order".into(),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: s.cd_grid(&s.cd_public_steps, &[LAMBDA]),
            fit: dp_cd_support(Constants::Public, Adjacency::ReplaceOne),
        },
        Method {
            key: "dp-gcd-public",
            label: "DP-GCD zCDP, public M_j = 1/4".into(),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: s.gcd_grid(),
            fit: dp_gcd(Constants::Public),
        },
        Method {
            key: "dp-gcd-private",
            label: format!("DP-GCD zCDP, private M_j ({pct} % of eps)"),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: s.gcd_grid(),
            fit: dp_gcd(Constants::Private(CONSTANTS_FRACTION)),
        },
        Method {
            key: "dp-gcd-gaussian",
            label: format!("DP-GCD zCDP, private M_j (Gaussian, {pct} % of rho)"),
            group: Group::FullyPrivate,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: s.gcd_grid(),
            fit: dp_gcd(Constants::PrivateGaussian(CONSTANTS_FRACTION)),
        },
        Method {
            key: "dp-sgd-public",
            label: "DP-SGD, public beta = 1/4".into(),
            group: Group::FullyPrivate,
            family: Family::Sgd,
            tuning: Tuning::Validation,
            grid: s.sgd_grid(),
            fit: dp_sgd(false),
        },
        Method {
            key: "dp-sgd-private",
            label: format!("DP-SGD, private beta ({pct} % of eps)"),
            group: Group::FullyPrivate,
            family: Family::Sgd,
            tuning: Tuning::Validation,
            grid: s.sgd_grid(),
            fit: dp_sgd(true),
        },
        Method {
            key: "dp-cd-data",
            label: "DP-CD, M_j from the data (not fully private)".into(),
            group: Group::DataConstants,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: cd.clone(),
            fit: dp_cd(Constants::Data, Averaging::LastIterate),
        },
        Method {
            key: "dp-gcd-data",
            label: "DP-GCD zCDP, M_j from the data (not fully private)".into(),
            group: Group::DataConstants,
            family: Family::Coordinate,
            tuning: Tuning::Validation,
            grid: s.gcd_grid(),
            fit: dp_gcd(Constants::Data),
        },
    ];
    m.push(Method {
        key: "dp-cd-defaults",
        label: format!(
            "DP-CD, no-tuning defaults (dp_optim::auto; private M_j, Gaussian, {pct} % of mu^2)"
        ),
        group: Group::Defaults,
        family: Family::Coordinate,
        tuning: Tuning::Rule(dp_cd_defaults_rule(false)),
        grid: Vec::new(),
        fit: dp_cd_defaults_fit(false),
    });
    m.push(Method {
        key: "dp-cd-defaults-support",
        label: format!(
            "DP-CD, no-tuning defaults with the one-hot support bound (dp_optim::auto; \
             private M_j, Gaussian, {pct} % of mu^2)"
        ),
        group: Group::Defaults,
        family: Family::Coordinate,
        tuning: Tuning::Rule(dp_cd_defaults_rule(true)),
        grid: Vec::new(),
        fit: dp_cd_defaults_fit(true),
    });
    m.push(Method {
        key: "dp-cd-gaussian-select",
        label: format!(
            "DP-CD, private M_j (Gaussian, {pct} % of mu^2), private selection over its \
             grid (charged)"
        ),
        group: Group::Selection,
        family: Family::Coordinate,
        tuning: Tuning::Selection(dp_cd_selection(
            Constants::PrivateGaussian(CONSTANTS_FRACTION),
            false,
        )),
        grid: cd.clone(),
        fit: dp_cd(
            Constants::PrivateGaussian(CONSTANTS_FRACTION),
            Averaging::LastIterate,
        ),
    });
    m.push(Method {
        key: "dp-cd-support-select",
        label: format!(
            "DP-CD, private M_j (Gaussian, {pct} % of mu^2), one-hot support accounting, \
             private selection over its grid (charged)"
        ),
        group: Group::Selection,
        family: Family::Coordinate,
        tuning: Tuning::Selection(dp_cd_selection(
            Constants::PrivateGaussian(CONSTANTS_FRACTION),
            true,
        )),
        grid: cd.clone(),
        fit: dp_cd_support(
            Constants::PrivateGaussian(CONSTANTS_FRACTION),
            Adjacency::ReplaceOne,
        ),
    });
    m.push(Method {
        key: "dp-sgd-add-remove",
        label: "DP-SGD, add/remove + Poisson (Opacus' relation; not comparable to the \
                replace-one rows)"
            .into(),
        group: Group::OtherRelation,
        family: Family::Sgd,
        tuning: Tuning::Validation,
        grid: s.sgd_grid(),
        fit: dp_sgd_add_remove(),
    });
    m.push(Method {
        key: "dp-cd-gaussian-add-remove",
        label: format!("DP-CD, Gaussian M_j ({pct} %), add/remove (as Opacus)"),
        group: Group::OtherRelation,
        family: Family::Coordinate,
        tuning: Tuning::Validation,
        grid: cd.clone(),
        fit: dp_cd_add_remove(Constants::PrivateGaussian(CONSTANTS_FRACTION)),
    });
    m.push(Method {
        key: "dp-cd-support-add-remove",
        label: format!(
            "DP-CD, Gaussian M_j ({pct} %), one-hot support accounting, add/remove (as Opacus)"
        ),
        group: Group::OtherRelation,
        family: Family::Coordinate,
        tuning: Tuning::Validation,
        grid: cd.clone(),
        fit: dp_cd_support(
            Constants::PrivateGaussian(CONSTANTS_FRACTION),
            Adjacency::AddRemove,
        ),
    });
    if s.variants {
        m.extend([
            Method {
                key: "dp-cd-private-lambda",
                label: format!("DP-CD, private M_j, lambda tuned in {:?}", s.lambdas),
                group: Group::Variant,
                family: Family::Coordinate,
                tuning: Tuning::Validation,
                grid: s.cd_grid(&s.cd_steps, &s.lambdas),
                fit: dp_cd(
                    Constants::Private(CONSTANTS_FRACTION),
                    Averaging::LastIterate,
                ),
            },
            Method {
                key: "dp-cd-private-epoch-avg",
                label: "DP-CD, private M_j, epoch averaging (K = p)".into(),
                group: Group::Variant,
                family: Family::Coordinate,
                tuning: Tuning::Validation,
                grid: cd.clone(),
                fit: dp_cd(Constants::Private(CONSTANTS_FRACTION), Averaging::Every(81)),
            },
            Method {
                key: "dp-cd-support-epoch-avg",
                label: "DP-CD, private M_j (Gaussian), one-hot support accounting, epoch \
                        averaging (K = p)"
                    .into(),
                group: Group::Variant,
                family: Family::Coordinate,
                tuning: Tuning::Validation,
                grid: cd.clone(),
                fit: dp_cd_support_averaged(
                    Constants::PrivateGaussian(CONSTANTS_FRACTION),
                    Adjacency::ReplaceOne,
                    Averaging::Every(81),
                ),
            },
            Method {
                key: "dp-cd-private-2pct",
                label: "DP-CD, private M_j (2 % of eps)".into(),
                group: Group::Variant,
                family: Family::Coordinate,
                tuning: Tuning::Validation,
                grid: cd.clone(),
                fit: dp_cd(Constants::Private(0.02), Averaging::LastIterate),
            },
            Method {
                key: "dp-gcd-private-2pct",
                label: "DP-GCD zCDP, private M_j (2 % of eps)".into(),
                group: Group::Variant,
                family: Family::Coordinate,
                tuning: Tuning::Validation,
                grid: s.gcd_grid(),
                fit: dp_gcd(Constants::Private(0.02)),
            },
        ]);
    }
    if !s.only.is_empty() {
        m.retain(|x| s.only.iter().any(|k| k == x.key));
    }
    m
}
