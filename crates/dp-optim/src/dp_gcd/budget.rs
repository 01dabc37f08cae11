//! What a DP-GCD fit charges and how its iterations are calibrated: the budget, its
//! releases, the accountant of the reported guarantee.

use super::*;

/// The releases of DP-GCD's iterations (see [`GcdBudget::releases`]).
pub(super) struct GcdReleases {
    pub(super) selection: Charge,
    pub(super) update: Charge,
    pub(super) support: Option<Charge>,
}

/// What a DP-GCD fit charges and how its iterations are calibrated.
#[derive(Debug, Clone)]
pub(super) struct GcdBudget {
    /// What the constants cost, charged before the iterations.
    pub(super) prior: Ledger,
    /// The iterations' share of the target (the target minus `spent`).
    pub(super) epsilon: f64,
    pub(super) calibration: Calibration,
    /// zCDP budget of the final support test (zCDP variant with
    /// [`DpGcdParams::support_test`]), charged with the iterations.
    pub(super) support_rho: Option<f64>,
}

impl GcdBudget {
    /// Calibrates the iterations after `prior` (pure epsilon `spent`): a closed form of
    /// the composition theorem, checked against the planned ledger
    /// ([`GcdBudget::fit_to_ledger`]).
    pub(super) fn calibrate<L, P>(
        prm: &DpGcdParams<L, P>,
        privacy: &CheckedPrivacy,
        prior: Ledger,
        spent: f64,
    ) -> Result<GcdBudget> {
        let epsilon = remaining_epsilon(privacy.epsilon.get(), spent, "smoothness constants")?;
        let delta = privacy.delta.get();
        let mut support_rho = None;
        // zCDP of the Gaussian charges in `prior` (the private M_j's release): the
        // iterations are calibrated on what is left of rho (pure-DP charges are in
        // `spent`, composed basically).
        let prior_rho: f64 = prior
            .entries()
            .iter()
            .map(|c| match c {
                Charge::Gaussian {
                    noise_multiplier,
                    count,
                } => *count as f64 / (2.0 * noise_multiplier * noise_multiplier),
                _ => 0.0,
            })
            .sum();
        if prior_rho > 0.0 && prm.variant != Variant::Zcdp {
            return Err(OptimError::Unsupported(
                "a Gaussian release of the constants needs DP-GCD's Variant::Zcdp".into(),
            ));
        }
        let calibration = if !prm.noise {
            Calibration::Off
        } else {
            match prm.variant {
                Variant::Laplace => Calibration::Laplace {
                    step_epsilon: laplace_step_epsilon(
                        epsilon,
                        delta,
                        prm.iterations,
                        prm.composition,
                    )?,
                },
                Variant::Zcdp => {
                    let prior_share = if prior_rho > 0.0 {
                        let rho = dp_accounting::zcdp::rho_for_target(
                            Epsilon::new(epsilon)?,
                            privacy.delta,
                        )?;
                        prior_rho / rho
                    } else {
                        0.0
                    };
                    let support_share = prm.support_test.unwrap_or(0.0);
                    if prior_share + support_share >= 1.0 {
                        return Err(invalid(
                            "budget_fraction",
                            prior_share + support_share,
                            "the private constants' and the support test's shares of the \
                             zCDP budget must sum to less than 1",
                        ));
                    }
                    let (split, reserved) = zcdp_split_reserving(
                        epsilon,
                        delta,
                        prm.iterations,
                        prm.selection_share,
                        prior_share + support_share,
                    )?;
                    if prm.support_test.is_some() {
                        // What the reserve holds beyond the constants' release.
                        let rest = next_down(reserved - prior_rho);
                        if rest.is_nan() || rest <= 0.0 {
                            return Err(invalid(
                                "support_test",
                                support_share,
                                "the support test's zCDP budget rounds to zero; use a \
                                 larger fraction",
                            ));
                        }
                        support_rho = Some(rest);
                    }
                    Calibration::Zcdp(split)
                }
            }
        };
        let mut budget = GcdBudget {
            prior,
            epsilon,
            calibration,
            support_rho,
        };
        budget.fit_to_ledger(prm, privacy)?;
        Ok(budget)
    }
}

impl GcdBudget {
    /// The charges of one fit, in order: the constants' cost (if any), then `T`
    /// selections and `T` updates. Data-independent.
    pub(super) fn charges<L, P>(&self, prm: &DpGcdParams<L, P>) -> Result<Vec<Charge>> {
        let Some(r) = self.releases(prm) else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Charge> = self.prior.entries().to_vec();
        out.push(r.selection);
        out.push(r.update);
        out.extend(r.support);
        Ok(out)
    }

    /// The iterations' releases (`None` when the noise is off): `T` selections, `T`
    /// updates and the optional support test. The fit charges them and draws from
    /// their samplers.
    pub(super) fn releases<L, P>(&self, prm: &DpGcdParams<L, P>) -> Option<GcdReleases> {
        let t = prm.iterations;
        match self.calibration {
            Calibration::Off => None,
            Calibration::Laplace { step_epsilon } => Some(GcdReleases {
                selection: Charge::PureDp {
                    epsilon: step_epsilon,
                    count: t,
                    label: "dp-gcd selection (Laplace report-noisy-max)".into(),
                },
                update: Charge::PureDp {
                    epsilon: step_epsilon,
                    count: t,
                    label: "dp-gcd update (Laplace mechanism)".into(),
                },
                support: None,
            }),
            Calibration::Zcdp(split) => Some(GcdReleases {
                selection: Charge::ExponentialMechanism {
                    epsilon: split.selection_epsilon,
                    count: t,
                },
                update: Charge::Gaussian {
                    noise_multiplier: update_noise_multiplier(&split),
                    count: t,
                },
                support: self.support_rho.map(|rho| Charge::Gaussian {
                    noise_multiplier: 1.0 / (2.0 * rho).sqrt(),
                    count: 1,
                }),
            }),
        }
    }

    /// The ledger a fit charges before its first draw.
    pub(super) fn planned_ledger<L, P>(&self, prm: &DpGcdParams<L, P>) -> Result<Ledger> {
        let mut ledger = Ledger::new();
        for c in self.charges(prm)? {
            ledger.charge(c)?;
        }
        Ok(ledger)
    }

    /// Checks the closed-form calibration against the guarantee of the planned ledger,
    /// the function that reports the fit's guarantee, and shrinks the per-step budget
    /// by relative steps of `1e-12` while the ledger is above the target (the closed
    /// forms invert the same composition, so this only absorbs floating-point
    /// rounding in the ledger's recomputation of the per-step costs).
    pub(super) fn fit_to_ledger<L, P>(
        &mut self,
        prm: &DpGcdParams<L, P>,
        privacy: &CheckedPrivacy,
    ) -> Result<()> {
        if self.calibration == Calibration::Off {
            return Ok(());
        }
        *self = shrink_to_target(
            self.clone(),
            |b| {
                b.planned_ledger(prm)
                    .map_err(|e| AccountingError::Unreachable(e.to_string()))
            },
            |mut b, shrink| {
                b.calibration = match b.calibration {
                    Calibration::Laplace { step_epsilon } => Calibration::Laplace {
                        step_epsilon: step_epsilon * shrink,
                    },
                    Calibration::Zcdp(split) => Calibration::Zcdp(ZcdpSplit {
                        rho_total: split.rho_total * shrink,
                        rho_selection: split.rho_selection * shrink,
                        rho_update: split.rho_update * shrink,
                        selection_epsilon: split.selection_epsilon * shrink,
                    }),
                    Calibration::Off => Calibration::Off,
                };
                b.support_rho = b.support_rho.map(|r| r * shrink);
                b
            },
            privacy.epsilon,
            privacy.delta,
            budget_accountant(prm),
        )?;
        Ok(())
    }
}

/// The accountant of the reported guarantee: the composition theorem the Laplace
/// variant's calibration inverts, or zCDP.
pub(super) fn budget_accountant<L, P>(prm: &DpGcdParams<L, P>) -> Accountant {
    match prm.variant {
        Variant::Laplace => Accountant::Composition(prm.composition.method()),
        Variant::Zcdp => Accountant::Zcdp,
    }
}

/// The Gaussian update's noise multiplier `z = 1 / sqrt(2 rho_update)` (zCDP variant).
pub(super) fn update_noise_multiplier(split: &ZcdpSplit) -> f64 {
    1.0 / (2.0 * split.rho_update).sqrt()
}
