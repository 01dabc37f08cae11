//! The private-fit driver: the one privacy pipeline every private solver's fit runs
//! through.
//!
//! A private fit (1) resolves its constants, charging what they cost to its ledger,
//! (2) declares its releases and calibrates their noise over that ledger, (3) charges
//! them before the first draw, (4) runs its loop with samplers built from the charged
//! releases and (5) reports the guarantee of everything charged. The driver owns the
//! ledger and the clock, the calibration (2), the charge (3), the guarantee (5) and the
//! released model; a solver is left with "resolve the constants into the driver's
//! ledger, declare the releases, run the loop".
//!
//! The order is structural, as OpenDP binds a measurement to its privacy map:
//!
//! ```text
//! PrivateFit::begin(privacy, adjacency)   clock started, empty ledger
//!     .ledger_mut()                       constants charge what they cost here
//! calibrate_over(fit.ledger(), plan, ..)  the noise multiplier, over the ledger so far
//! fit.charge(Declared { releases, .. })   -> Charged: every release charged, guarantee
//!                                            computed; samplers come from here only
//! charged.release(i)?.gaussian(..)        the loop draws from the charged releases
//! charged.finish(model, report, obj)      clock stopped, non-finite refused, model written
//! ```
//!
//! A sampler cannot be built before its release is charged: [`Charged`] (the only source
//! of the releases a loop draws from) exists only once [`PrivateFit::charge`] succeeded.
//!
//! # Privacy
//! The driver adds no mechanism: it composes what the solvers declare. Its guarantee is
//! [`ledger_guarantee`] of the ledger holding the constants' charges followed by the
//! declared releases (calibrated over that same ledger, or by a solver's closed form
//! fitted to it with [`dp_accounting::calibrate::shrink_to_target`]); an epsilon above
//! the target is an internal error, never a released model.

use crate::error::Result;
use crate::model::{Diagnostics, Fitted, LinearModel};
use crate::plan::{PrivacyReport, SolverPlan};
use crate::privacy::{
    guarantee_of, ledger_guarantee, remaining_epsilon, Accounting, Adjacency, CheckedPrivacy,
    Guarantee, LedgerCalibration,
};
use crate::solver::check_finite;
use dp_accounting::calibrate::{self, Accountant, Plan};
use dp_accounting::ledger::Ledger;
use dp_accounting::release::Release;
use dp_accounting::Epsilon;
use std::time::Instant;

/// How a plan's releases share the target with what was charged before them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Split {
    /// The accounting's own rule ([`calibrate_releases`]): under
    /// [`Accounting::Paper`](crate::Accounting::Paper) with a pure-DP cost charged
    /// before, the papers' basic-composition split; otherwise the whole ledger.
    Accounting,
    /// Always the whole ledger (the prior charges hold a Gaussian release, which the
    /// papers' pure-DP split does not cover).
    WholeLedger,
}

/// Calibrates the noise multiplier of `plan`'s releases, to be charged after `prior`
/// (whose pure epsilon is `spent`), with `split`; memoised in `cache` when given.
///
/// The one calibration entry point of the private solvers: a fit calls it on
/// [`PrivateFit::ledger`] (what its constants cost so far), a data-free preview on a
/// prior ledger of its own, so the two cannot calibrate differently.
///
/// # Privacy
/// See [`calibrate_releases`] (the accounting's rule) and
/// [`calibrate::calibrate_ledger`] (the whole ledger): the returned multiplier is on the
/// passing side of the target.
pub(crate) fn calibrate_over(
    prior: &Ledger,
    spent: f64,
    plan: &Plan,
    privacy: &CheckedPrivacy,
    split: Split,
    cache: Option<&CalibrationCache>,
) -> Result<LedgerCalibration> {
    match (split, cache) {
        (Split::WholeLedger, _) => Ok(LedgerCalibration {
            calibration: calibrate::calibrate_ledger(prior, plan, privacy.epsilon, privacy.delta)?,
            whole_ledger: true,
        }),
        (Split::Accounting, Some(cache)) => cache.calibrate(prior, spent, plan, privacy),
        (Split::Accounting, None) => calibrate_releases(prior, spent, plan, privacy),
    }
}

/// Calibrates the noise multiplier of `plan`'s releases, to be charged after `prior`
/// (what the fit charged before them; `spent` is its pure epsilon).
///
/// # Privacy
/// * [`Accounting::Paper`] with something spent before: the papers' budget split. The
///   releases alone are calibrated to `target - spent` (shaved by a few ulps,
///   [`remaining_epsilon`]), and the whole ledger is then at most the target by basic
///   composition (Dwork & Roth 2014, Thm 3.16); its reported guarantee is the ledger's
///   own accounting, which is never above that.
/// * Otherwise: [`calibrate::calibrate_ledger`] searches over the guarantee of the
///   dry-run ledger `prior + plan`, the very function that reports the fit's
///   guarantee, so the reported epsilon is exactly the calibrated one.
///
/// Errors, naming the constants, when `spent` leaves nothing for the releases.
pub(crate) fn calibrate_releases(
    prior: &Ledger,
    spent: f64,
    plan: &Plan,
    privacy: &CheckedPrivacy,
) -> Result<LedgerCalibration> {
    let target = privacy.epsilon.get();
    let rest = remaining_epsilon(target, spent, "smoothness constants")?;
    if spent > 0.0 && privacy.accounting == Accounting::Paper {
        let calibration = calibrate::calibrate_sigma(plan, Epsilon::new(rest)?, privacy.delta)?;
        return Ok(LedgerCalibration {
            calibration,
            whole_ledger: false,
        });
    }
    let calibration = calibrate::calibrate_ledger(prior, plan, privacy.epsilon, privacy.delta)?;
    Ok(LedgerCalibration {
        calibration,
        whole_ledger: true,
    })
}

/// Calibrations already computed, shared by every solver built with it
/// (`calibration_cache` on [`DpSgdParams`](crate::DpSgdParams) and
/// [`DpScdParams`](crate::DpScdParams); a solver without one keeps its own). Calibrating
/// a sampled plan takes 0.01-1 s, and tuning grids, repeated runs and audits fit many
/// solvers whose plans are the same.
///
/// A hit returns exactly what a new search would, bit for bit: the key is everything the
/// search reads (the plan, the ledger charged before it and its pure epsilon, the target
/// epsilon and delta, the accounting choice), compared exactly, and the search is
/// deterministic. The values are data-independent (a plan depends on the data only
/// through the public `n`), so the cache holds nothing a user could not publish; cloning
/// it shares it (an `Arc`). At most [`CalibrationCache::CAPACITY`] entries are kept;
/// later plans are calibrated afresh.
#[derive(Debug, Clone, Default)]
pub struct CalibrationCache(std::sync::Arc<std::sync::Mutex<Vec<CacheEntry>>>);

#[derive(Debug)]
struct CacheEntry {
    plan: Plan,
    prior: Ledger,
    spent: u64,
    epsilon: u64,
    delta: u64,
    accounting: Accounting,
    value: LedgerCalibration,
}

impl CacheEntry {
    fn matches(&self, prior: &Ledger, spent: f64, plan: &Plan, privacy: &CheckedPrivacy) -> bool {
        self.plan == *plan
            && self.spent == spent.to_bits()
            && self.epsilon == privacy.epsilon.get().to_bits()
            && self.delta == privacy.delta.get().to_bits()
            && self.accounting == privacy.accounting
            && self.prior == *prior
    }
}

impl CalibrationCache {
    /// The most entries kept.
    pub const CAPACITY: usize = 256;

    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of calibrations held.
    pub fn len(&self) -> usize {
        self.0.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`calibrate_releases`], memoised.
    pub(crate) fn calibrate(
        &self,
        prior: &Ledger,
        spent: f64,
        plan: &Plan,
        privacy: &CheckedPrivacy,
    ) -> Result<LedgerCalibration> {
        if let Ok(memo) = self.0.lock() {
            if let Some(e) = memo.iter().find(|e| e.matches(prior, spent, plan, privacy)) {
                return Ok(e.value);
            }
        }
        // Searched outside the lock, so parallel fits of different plans do not wait on
        // each other (two fits of one new plan may both search; they find the same value).
        let value = calibrate_releases(prior, spent, plan, privacy)?;
        if let Ok(mut memo) = self.0.lock() {
            if memo.len() < Self::CAPACITY
                && !memo.iter().any(|e| e.matches(prior, spent, plan, privacy))
            {
                memo.push(CacheEntry {
                    plan: *plan,
                    prior: prior.clone(),
                    spent: spent.to_bits(),
                    epsilon: privacy.epsilon.get().to_bits(),
                    delta: privacy.delta.get().to_bits(),
                    accounting: privacy.accounting,
                    value,
                });
            }
        }
        Ok(value)
    }
}

/// What a solver declares before its loop: the releases it will draw from, charged in
/// this order, and how they were calibrated.
#[derive(Debug, Clone)]
pub(crate) struct Declared {
    /// The releases of the loop (at least one).
    pub releases: Vec<Release>,
    /// How their noise was calibrated against the ledger; `None` when a solver's closed
    /// form was fitted to the planned ledger (the ledger is then accounted once).
    pub calibrated: Option<LedgerCalibration>,
    /// The accountant the guarantee is reported under.
    pub accountant: Accountant,
    /// Whether the analysis is proven.
    pub proof: Proof,
}

/// Whether a declared analysis rests on a proof this library accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Proof {
    /// Proven (cited next to the mechanism).
    Proven,
    /// A paper's claim reproduced without a proof this library accepts: the guarantee
    /// is marked `proven = false` (its solver's docs say why).
    Unproven,
    /// As `Unproven`, and the guarantee's description says why.
    UnprovenBecause(&'static str),
    /// A paper's nominal noise scales, not calibrated to the target: what our (proven)
    /// analysis of them gives is reported as is, possibly above the target, and the
    /// guarantee's description starts with the note.
    Nominal(String),
}

/// A private fit before its releases are charged: the target, the neighbouring
/// relation, the ledger (what the constants cost so far) and the clock.
#[derive(Debug)]
pub(crate) struct PrivateFit<'a> {
    privacy: &'a CheckedPrivacy,
    adjacency: Adjacency,
    ledger: Ledger,
    start: Instant,
}

impl<'a> PrivateFit<'a> {
    /// Starts the clock with an empty ledger.
    pub(crate) fn begin(privacy: &'a CheckedPrivacy, adjacency: Adjacency) -> Self {
        Self {
            privacy,
            adjacency,
            ledger: Ledger::new(),
            start: Instant::now(),
        }
    }

    /// What was charged so far (the constants).
    pub(crate) fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The ledger the constants charge what they cost to, before the releases.
    pub(crate) fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    /// Charges every declared release (before any is drawn) and computes the guarantee
    /// of the whole ledger; the returned [`Charged`] fit is where the loop's samplers
    /// come from.
    ///
    /// # Privacy
    /// With `calibrated` over the whole ledger its epsilon is the ledger's guarantee
    /// (the search ran on exactly this dry run); otherwise the ledger is accounted
    /// under `accountant` ([`ledger_guarantee`]). Above the target: an error, and
    /// nothing is drawn.
    pub(crate) fn charge(mut self, declared: Declared) -> Result<Charged<'a>> {
        if declared.calibrated.is_some() && matches!(declared.proof, Proof::Nominal(_)) {
            return Err(crate::error::OptimError::Unsupported(
                "internal: nominal scales declared with a calibration".into(),
            ));
        }
        for release in &declared.releases {
            self.ledger.charge(release.clone())?;
        }
        let mut guarantee = match &declared.calibrated {
            Some(calibrated) => ledger_guarantee(
                &self.ledger,
                calibrated,
                self.privacy,
                declared.accountant,
                self.adjacency,
            )?,
            None => guarantee_of(
                &self.ledger,
                self.ledger
                    .guarantee(self.privacy.delta, declared.accountant)?,
                self.privacy,
                declared.accountant,
                self.adjacency,
                true,
                !matches!(declared.proof, Proof::Nominal(_)),
            )?,
        };
        match declared.proof {
            Proof::Proven => {}
            Proof::Unproven => guarantee.proven = false,
            Proof::UnprovenBecause(why) => {
                guarantee.proven = false;
                guarantee.how = format!("{}; NOT PROVEN: {why}", guarantee.how);
            }
            Proof::Nominal(note) => guarantee.how = format!("{note}: {}", guarantee.how),
        }
        Ok(Charged {
            fit: self,
            releases: declared.releases,
            guarantee,
        })
    }
}

/// A private fit whose releases are charged: the source of its samplers.
#[derive(Debug)]
pub(crate) struct Charged<'a> {
    fit: PrivateFit<'a>,
    releases: Vec<Release>,
    guarantee: Guarantee,
}

/// What the loop produced: the model's coefficients and the non-private diagnostics.
#[derive(Debug)]
pub(crate) struct Model {
    /// The solver's name in the model ("dp-cd", ...).
    pub algorithm: String,
    /// The coefficients.
    pub coefficients: Vec<f64>,
    /// Updates performed.
    pub iterations: u64,
    /// The non-private diagnostics (`seconds` and `objective` are the driver's).
    pub diagnostics: Diagnostics,
}

/// What the solver adds to the privacy report besides the ledger and its guarantee.
#[derive(Debug)]
pub(crate) struct Report {
    /// The number of records the plan used (public).
    pub n_samples: usize,
    /// The solver's plan.
    pub plan: SolverPlan,
    /// The same releases under other analyses, for comparison.
    pub other_guarantees: Vec<Guarantee>,
    /// Some constant was computed from the data without privacy (opted in).
    pub uses_non_private_constants: bool,
}

/// Stops the clock, refuses non-finite coefficients and evaluates the objective.
fn end(
    start: Instant,
    solver: &str,
    hint: &str,
    model: Model,
    objective: impl FnOnce(&[f64]) -> f64,
    privacy: Option<PrivacyReport>,
) -> Result<Fitted> {
    let seconds = start.elapsed().as_secs_f64();
    check_finite(solver, &model.coefficients, hint)?;
    let objective = objective(&model.coefficients);
    Ok(Fitted {
        model: LinearModel {
            algorithm: model.algorithm,
            coefficients: model.coefficients,
            intercept: None,
            iterations: model.iterations,
            privacy,
        },
        diagnostics: Diagnostics {
            objective,
            seconds,
            ..model.diagnostics
        },
    })
}

impl PrivateFit<'_> {
    /// Ends a fit whose noise was switched off before anything was charged (DP-GCD's
    /// `noise_off`, a comparison run): the model carries no privacy report.
    pub(crate) fn finish_not_private(
        self,
        solver: &str,
        hint: &str,
        model: Model,
        objective: impl FnOnce(&[f64]) -> f64,
    ) -> Result<Fitted> {
        end(self.start, solver, hint, model, objective, None)
    }
}

impl Charged<'_> {
    /// The `i`-th declared release, charged: what the loop's samplers are built from.
    pub(crate) fn release(&self, i: usize) -> Result<&Release> {
        self.releases.get(i).ok_or_else(|| {
            crate::error::OptimError::Unsupported(format!(
                "internal: release {i} was asked of a fit that declared {}",
                self.releases.len()
            ))
        })
    }

    /// Ends the fit: stops the clock, refuses non-finite coefficients (`solver`, `hint`
    /// name the problem and the fix), evaluates `objective` on them and writes the
    /// released model with its privacy report.
    pub(crate) fn finish(
        self,
        solver: &str,
        hint: &str,
        model: Model,
        report: Report,
        objective: impl FnOnce(&[f64]) -> f64,
    ) -> Result<Fitted> {
        let privacy = PrivacyReport {
            target_epsilon: self.fit.privacy.epsilon.get(),
            target_delta: self.fit.privacy.delta.get(),
            n_samples: report.n_samples,
            plan: report.plan,
            ledger: self.fit.ledger,
            guarantee: self.guarantee,
            other_guarantees: report.other_guarantees,
            uses_non_private_constants: report.uses_non_private_constants,
        };
        end(
            self.fit.start,
            solver,
            hint,
            model,
            objective,
            Some(privacy),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::SolverPlan;
    use crate::privacy::PrivacyParams;
    use dp_accounting::calibrate::RdpConversion;

    fn privacy() -> CheckedPrivacy {
        PrivacyParams::new(1.0, 1e-6).check().unwrap()
    }

    fn declared(noise_multiplier: f64, proof: Proof) -> Declared {
        Declared {
            releases: vec![Release::Gaussian {
                noise_multiplier,
                count: 100,
            }],
            calibrated: None,
            accountant: Accountant::Rdp(RdpConversion::Improved),
            proof,
        }
    }

    fn model(w: Vec<f64>) -> Model {
        Model {
            algorithm: "test".into(),
            coefficients: w,
            iterations: 1,
            diagnostics: Diagnostics::default(),
        }
    }

    #[test]
    fn releases_above_the_target_are_refused_before_any_sampler_exists() {
        let privacy = privacy();
        let fit = PrivateFit::begin(&privacy, Adjacency::ReplaceOne);
        let e = fit.charge(declared(0.5, Proof::Proven)).unwrap_err();
        assert!(e.to_string().contains("exceeds the target"), "{e}");
    }

    #[test]
    fn nominal_scales_are_reported_as_analysed_even_above_the_target() {
        let privacy = privacy();
        let fit = PrivateFit::begin(&privacy, Adjacency::ReplaceOne);
        let charged = fit
            .charge(declared(0.5, Proof::Nominal("the paper's scales".into())))
            .unwrap();
        assert!(charged.guarantee.epsilon > 1.0);
        assert!(charged.guarantee.how.starts_with("the paper's scales: "));
        assert!(charged.guarantee.proven);
        assert!(charged.release(1).is_err());
    }

    #[test]
    fn the_model_holds_the_charged_ledger_and_non_finite_coefficients_are_refused() {
        let privacy = privacy();
        let mut fit = PrivateFit::begin(&privacy, Adjacency::ReplaceOne);
        fit.ledger_mut()
            .charge(Release::PureDp {
                epsilon: 0.1,
                count: 1,
                label: "constants".into(),
            })
            .unwrap();
        let charged = fit
            .charge(declared(200.0, Proof::UnprovenBecause("a paper's claim")))
            .unwrap();
        let gaussian = charged.release(0).unwrap().gaussian(2.0).unwrap();
        assert_eq!(gaussian.std_dev(), 400.0);
        let guarantee = charged.guarantee.clone();
        assert!(!guarantee.proven && guarantee.how.ends_with("NOT PROVEN: a paper's claim"));
        let plan = crate::DpScdParams::new(dp_models::Logistic, dp_models::L2::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(1)
            .batch_size(1)
            .clip(1.0)
            .build()
            .unwrap()
            .plan(10)
            .unwrap();
        let report = |plan| Report {
            n_samples: 10,
            plan: SolverPlan::DpScd(plan),
            other_guarantees: Vec::new(),
            uses_non_private_constants: false,
        };
        let fitted = charged
            .finish(
                "test",
                "hint",
                model(vec![1.0, 2.0]),
                report(plan.clone()),
                |w| w[0],
            )
            .unwrap();
        let pr = fitted.model.privacy.unwrap();
        assert_eq!(pr.ledger.entries().len(), 2);
        assert_eq!(pr.guarantee, guarantee);
        assert_eq!(fitted.diagnostics.objective, 1.0);

        let fit = PrivateFit::begin(&privacy, Adjacency::ReplaceOne);
        let charged = fit.charge(declared(200.0, Proof::Proven)).unwrap();
        let e = charged
            .finish(
                "test",
                "lower the step",
                model(vec![f64::NAN]),
                report(plan),
                |_| 0.0,
            )
            .unwrap_err();
        assert!(e.to_string().contains("lower the step"), "{e}");
    }
}
