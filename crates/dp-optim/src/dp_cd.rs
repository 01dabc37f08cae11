//! DP-CD (Mangold, Bellet, Salmon & Tommasi, ICML 2022, Algorithm 1) and DP-CD-P (the
//! same with privately estimated smoothness constants, Sec. 5.2 / App. F).
//!
//! The user states `(epsilon, delta)`; [`DpCdParams::build`] checks the parameters once
//! and [`DpCd::fit`] derives the plan (noise multiplier, per-coordinate clipping
//! thresholds, sensitivities and noise), charges it to a ledger and spends exactly it.
//! See `docs/privacy/dp-cd.md` for the derivation.

use crate::cd::{check_problem, check_smoothness, run_cd, CdProblem};
use crate::constants::{resolve_private, ResolvedSmoothness};
use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::{objective_from_predictor, ColumnKernels, CoordNoise, NoNoise, PerCoordinate};
use crate::model::{Diagnostics, Fitted, LinearModel};
use crate::plan::{DpCdPlan, PrivacyReport, SolverPlan};
use crate::privacy::{
    calibrate_releases, charge_pre_spent, ledger_guarantee, pre_spent_epsilon, privacy_setters,
    Adjacency, CheckedPrivacy, LedgerCalibration, PrivacyParams,
};
use crate::schedule::{Averaging, CoordinateOrder, Schedule};
use crate::solver::{check_finite, Solver, Streams, Switches};
use dp_accounting::calibrate::{self, Plan, PlanMechanism};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::Gaussian;
use dp_accounting::NoiseMultiplier;
use dp_models::constants::Provenance;
use dp_models::{Dataset, Loss, Penalty};
use rand::{Rng, RngCore};

pub use crate::constants::Smoothness;

/// Builder of DP-CD. Required: `epsilon`, `delta`, `passes`, `clip`.
///
/// ```
/// use dp_optim::{DpCdParams, Accounting};
/// use dp_models::{Squared, L1};
/// let solver = DpCdParams::new(Squared::full(), L1::new(0.1).unwrap())
///     .epsilon(1.0)
///     .delta(1e-6)
///     .passes(10)
///     .step_scale(0.5)
///     .clip(1.0)
///     .accounting(Accounting::Exact)
///     .build()
///     .unwrap();
/// # let _ = solver;
/// ```
#[derive(Debug, Clone)]
pub struct DpCdParams<L, P> {
    loss: L,
    penalty: P,
    privacy: PrivacyParams,
    passes: Option<u64>,
    step_scale: f64,
    clip: Option<f64>,
    averaging: Averaging,
    order: CoordinateOrder,
    smoothness: Smoothness,
    w0: Option<Vec<f64>>,
}

impl<L: Loss, P: Penalty> DpCdParams<L, P> {
    /// Starts a builder for `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + penalty(w)`.
    ///
    /// Defaults: step scale 1, [`Accounting::Paper`](crate::Accounting::Paper),
    /// [`Averaging::LastIterate`], [`Smoothness::FromData`] (refused without the
    /// opt-in), `w0 = 0`.
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            privacy: PrivacyParams::default(),
            passes: None,
            step_scale: 1.0,
            clip: None,
            averaging: Averaging::LastIterate,
            order: CoordinateOrder::Uniform,
            smoothness: Smoothness::FromData,
            w0: None,
        }
    }
    privacy_setters!();
    /// Number of passes (one pass = `p` coordinate updates; `T*K >= passes * p`).
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
        self
    }
    /// Step scale `gamma`: coordinate `j` moves with step `gamma / M_j`.
    pub fn step_scale(mut self, gamma: f64) -> Self {
        self.step_scale = gamma;
        self
    }
    /// Global clipping threshold `C`: coordinate `j` clips per-sample gradients at
    /// `C_j = sqrt(M_j / tr M) C`.
    pub fn clip(mut self, clip: f64) -> Self {
        self.clip = Some(clip);
        self
    }
    /// Averaging mode (default: last iterate, `K = 1`).
    pub fn averaging(mut self, averaging: Averaging) -> Self {
        self.averaging = averaging;
        self
    }
    /// Coordinate order (default [`CoordinateOrder::Uniform`], Algorithm 1 as printed).
    ///
    /// # Privacy
    ///
    /// Every order is independent of the data (a fixed sweep, or drawn from the
    /// coordinate-selection stream, which is separate from the noise stream), so the
    /// guarantee of the fit holds unchanged: the same `T*K` Gaussian releases of
    /// sensitivity `2 C_j / n` compose the same way whichever coordinate each one
    /// touches. The paper's *utility* bounds (Theorems 3.2–3.3) assume
    /// [`CoordinateOrder::Uniform`]; cyclic and permutation orders have none from it.
    pub fn coordinate_order(mut self, order: CoordinateOrder) -> Self {
        self.order = order;
        self
    }
    /// Source of the coordinate smoothness constants (a [`Smoothness`], or a
    /// [`Tagged`](dp_models::constants::Tagged) vector for [`Smoothness::Given`]).
    pub fn smoothness(mut self, smoothness: impl Into<Smoothness>) -> Self {
        self.smoothness = smoothness.into();
        self
    }
    /// Initial point (default 0).
    pub fn initial_point(mut self, w0: Vec<f64>) -> Self {
        self.w0 = Some(w0);
        self
    }

    /// Checks every data-independent parameter once.
    pub fn build(self) -> Result<DpCd<L, P>> {
        let privacy = self.privacy.check()?;
        let passes = positive_count("passes", self.passes.ok_or(OptimError::Missing("passes"))?)?;
        positive("step_scale", self.step_scale)?;
        let clip = positive("clip", self.clip.ok_or(OptimError::Missing("clip"))?)?;
        if let Averaging::Every(k) = self.averaging {
            positive_count("averaging period K", k)?;
        }
        if !self.loss.is_smooth() {
            return Err(OptimError::Unsupported(format!(
                "DP-CD needs a smooth loss (step sizes gamma / M_j need a curvature bound); \
                 the {} loss is not smooth — use logistic, squared, squared hinge or Huber",
                self.loss.name()
            )));
        }
        self.smoothness.check()?;
        Ok(DpCd {
            loss: self.loss,
            penalty: self.penalty,
            privacy,
            passes,
            step_scale: self.step_scale,
            clip,
            averaging: self.averaging,
            order: self.order,
            smoothness: self.smoothness,
            w0: self.w0,
        })
    }
}

/// DP-CD with checked parameters (see [`DpCdParams`]).
#[derive(Debug, Clone)]
pub struct DpCd<L, P> {
    loss: L,
    penalty: P,
    privacy: CheckedPrivacy,
    passes: u64,
    step_scale: f64,
    clip: f64,
    averaging: Averaging,
    order: CoordinateOrder,
    smoothness: Smoothness,
    w0: Option<Vec<f64>>,
}

/// Per-coordinate Gaussian noise for DP-CD: coordinate `j`'s release gets an
/// independent draw of `N(0, sigma_j^2)` from the noise stream.
struct CoordGaussian<'a, R: Rng + ?Sized> {
    mechanisms: &'a [Gaussian],
    rng: &'a mut R,
}

impl<R: Rng + ?Sized> CoordNoise for CoordGaussian<'_, R> {
    #[inline]
    fn perturb(&mut self, j: usize, g: f64) -> f64 {
        g + self.mechanisms[j].sample(self.rng)
    }
}

impl<L, P> DpCd<L, P> {
    /// Name used in reports.
    pub fn name(&self) -> &'static str {
        match self.smoothness {
            Smoothness::Private { .. } => "dp-cd-p",
            _ => "dp-cd",
        }
    }
}

impl<D: ColumnKernels, L: Loss, P: Penalty> Solver<D> for DpCd<L, P> {
    /// # Privacy
    ///
    /// *Neighbouring relation:* replace-one — neighbouring datasets have the same size
    /// `n` (public) and differ in one record. *Preconditions:* the step scale, `C`, the
    /// number of passes, the averaging mode, the coordinate order and the initial point
    /// do not depend on the data; the `M_j` are public, privately estimated (charged),
    /// or computed from the data with the caller's explicit opt-in (then the guarantee
    /// does not cover what they reveal, and the report says so).
    ///
    /// *Claim:* the sequence of all iterates (hence the released model) is
    /// `(epsilon, delta)`-DP, with the achieved epsilon (at most the target) in the
    /// report's guarantee, which composes everything charged to the ledger.
    ///
    /// *Proof sketch* (`docs/privacy/dp-cd.md`): step `k` picks `j` independently of the
    /// data and releases `g_j = (1/n) sum_i clip(grad_j loss(theta; d_i), C_j) + N(0,
    /// sigma_j^2)`. Each clipped term lies in `[-C_j, C_j]`, so replacing one record
    /// moves `g_j` by at most `2 C_j / n` (paper Sec. 5.1, Lemma A.2); with
    /// `sigma_j = s * 2 C_j / n` every release is a Gaussian mechanism of noise
    /// multiplier `s`, `(alpha, alpha / (2 s^2))`-RDP (Mironov 2017, Cor. 3) and
    /// `1/s`-GDP. The releases compose adaptively: `T*K` of them are
    /// `(alpha, T K alpha / (2 s^2))`-RDP (paper Thm B.5) and exactly `sqrt(T K)/s`-GDP
    /// (Dong, Roth & Su 2022, Cor. 3.3). The prox step and the averaging are
    /// post-processing. `s` is the smallest multiplier whose accounted epsilon meets the
    /// optimisation's share of the target (passing side of the search). Constants that
    /// cost privacy (DP-CD-P's Laplace estimate, or privately estimated constants given
    /// by the caller) are pure-DP charges composed sequentially with the releases.
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        self.fit_inner(data, Streams::from_rng(rng), Switches::ON)
    }
}

impl<L: Loss, P: Penalty> DpCd<L, P> {
    /// The plan for a dataset of `n` samples given the smoothness constants `m`
    /// (no privacy is spent; useful to inspect the noise before fitting).
    ///
    /// What the constants cost before the releases is taken from `provenance`
    /// (privately estimated constants) or, for DP-CD-P, from the budget fraction of its
    /// Laplace estimate (charged in the fit as `p` releases of `epsilon_m / p` each; the
    /// preview charges one release of `epsilon_m`, so with non-paper accounting the
    /// fit's multiplier may differ from the preview's in the last digits).
    pub fn plan(&self, n: usize, m: &[f64], provenance: Provenance) -> Result<DpCdPlan> {
        let spent = match self.smoothness.budget_fraction() {
            Some(fraction) => Some(fraction * self.privacy.epsilon.get()),
            None => {
                let e = pre_spent_epsilon(&provenance);
                (e > 0.0).then_some(e)
            }
        };
        let mut prior = Ledger::new();
        if let Some(e) = spent {
            charge_pre_spent(&mut prior, e, "smoothness constants")?;
        }
        self.plan_with(n, m, provenance, &prior, spent)
            .map(|(plan, _)| plan)
    }

    fn gaussian_plan(&self, releases: u64) -> Plan {
        Plan {
            mechanism: PlanMechanism::Gaussian,
            steps: releases,
            accountant: self.privacy.accounting.for_gaussian(),
        }
    }

    /// The plan of the releases that follow the charges of `prior` (`spent`: their
    /// pure epsilon), calibrated against the ledger (see
    /// [`calibrate_releases`](crate::privacy)).
    fn plan_with(
        &self,
        n: usize,
        m: &[f64],
        provenance: Provenance,
        prior: &Ledger,
        spent: Option<f64>,
    ) -> Result<(DpCdPlan, LedgerCalibration)> {
        let p = m.len();
        check_smoothness(m, p)?;
        let schedule = Schedule::new(self.averaging, self.passes, p)?;
        let releases = schedule.updates();
        let gaussian = self.gaussian_plan(releases);
        let calibrated = calibrate_releases(prior, spent.unwrap_or(0.0), &gaussian, &self.privacy)?;
        let calibration = calibrated.calibration;
        // The releases' own epsilon (the whole ledger's when nothing was spent before).
        let eps_opt = if spent.is_none() {
            calibration.epsilon
        } else {
            calibrate::epsilon(
                &gaussian,
                NoiseMultiplier::new(calibration.noise_multiplier)?,
                self.privacy.delta,
            )?
        };
        let s = calibration.noise_multiplier;
        let trace: f64 = m.iter().sum();
        let clip_thresholds: Vec<f64> =
            m.iter().map(|mj| (mj / trace).sqrt() * self.clip).collect();
        let sensitivities: Vec<f64> = clip_thresholds.iter().map(|c| 2.0 * c / n as f64).collect();
        let noise_std: Vec<f64> = sensitivities.iter().map(|d| s * d).collect();
        let step_sizes = m.iter().map(|mj| self.step_scale / mj).collect();
        let plan = DpCdPlan {
            accounting: self.privacy.accounting.name(),
            epsilon_optimisation: eps_opt,
            epsilon_smoothness: spent,
            delta: self.privacy.delta.get(),
            schedule,
            coordinate_order: self.order,
            releases,
            noise_multiplier: s,
            calibration,
            smoothness: m.to_vec(),
            smoothness_provenance: provenance,
            step_sizes,
            clip: self.clip,
            clip_thresholds,
            sensitivities,
            noise_std,
        };
        Ok((plan, calibrated))
    }

    pub(crate) fn fit_inner<D: ColumnKernels>(
        &self,
        data: &Dataset<D>,
        mut streams: Streams,
        switches: Switches,
    ) -> Result<Fitted> {
        let start = std::time::Instant::now();
        check_problem("DP-CD", data, &self.loss, &self.penalty, self.w0.as_deref())?;
        let (n, p) = (data.n_samples(), data.n_features());
        let target = self.privacy.epsilon.get();
        let allow = self.privacy.allow_non_private_constants;
        let mut ledger = Ledger::new();

        // 1. The smoothness constants. Whatever they cost is charged before any noise
        //    is drawn; the optimisation gets what is left of the target.
        let ResolvedSmoothness {
            tagged,
            spent,
            uses_non_private,
        } = resolve_private(
            &self.smoothness,
            &self.loss,
            data.x(),
            target,
            allow,
            &mut streams.constants,
            &mut ledger,
        )?;
        let provenance = tagged.provenance;
        let m = tagged.value;
        check_smoothness(&m, p)?;
        // 2. The plan, calibrated over the ledger charged so far plus its releases, and
        //    charged in full before the first release.
        let (plan, calibrated) = self.plan_with(n, &m, provenance, &ledger, spent)?;
        ledger.charge(Charge::Gaussian {
            noise_multiplier: plan.noise_multiplier,
            count: plan.releases,
        })?;
        let guarantee = ledger_guarantee(
            &ledger,
            &calibrated,
            &self.privacy,
            self.privacy.accounting.for_gaussian(),
            Adjacency::ReplaceOne,
        )?;
        let mechanisms = plan
            .noise_std
            .iter()
            .map(|&sd| Gaussian::new(sd))
            .collect::<std::result::Result<Vec<_>, _>>()?;

        // 3. Algorithm 1.
        let mut w = self.w0.clone().unwrap_or_else(|| vec![0.0; p]);
        let mut z = vec![0.0; n];
        data.x().matvec(&w, &mut z);
        let prob = CdProblem {
            x: data.x(),
            y: data.y(),
            loss: &self.loss,
            penalty: &self.penalty,
            steps: &plan.step_sizes,
        };
        // The switches exist for the twin test only (crate-private): with noise and
        // clipping off this is exactly the non-private `Cd`.
        let no_clip;
        let clip = if switches.clip {
            PerCoordinate(&plan.clip_thresholds)
        } else {
            no_clip = vec![f64::INFINITY; p];
            PerCoordinate(&no_clip)
        };
        let zero_steps = if switches.noise {
            let mut noise = CoordGaussian {
                mechanisms: &mechanisms,
                rng: &mut streams.noise,
            };
            run_cd(
                &prob,
                plan.schedule,
                self.order,
                &clip,
                &mut noise,
                &mut streams.coordinates,
                &mut w,
                &mut z,
            )
        } else {
            run_cd(
                &prob,
                plan.schedule,
                self.order,
                &clip,
                &mut NoNoise,
                &mut streams.coordinates,
                &mut w,
                &mut z,
            )
        };
        let seconds = start.elapsed().as_secs_f64();
        check_finite(
            "DP-CD",
            &w,
            "the step scale or the clipping threshold is too large for this data",
        )?;
        let objective = objective_from_predictor(&self.loss, &self.penalty, &w, &z, data.y());
        let algorithm = self.name().to_string();
        Ok(Fitted {
            model: LinearModel {
                algorithm,
                coefficients: w,
                intercept: None,
                iterations: plan.releases,
                privacy: Some(PrivacyReport {
                    target_epsilon: target,
                    target_delta: self.privacy.delta.get(),
                    n_samples: n,
                    plan: SolverPlan::DpCd(plan),
                    ledger,
                    guarantee,
                    other_guarantees: Vec::new(),
                    uses_non_private_constants: uses_non_private,
                }),
            },
            diagnostics: Diagnostics {
                objective,
                zero_steps,
                seconds,
                ..Diagnostics::default()
            },
        })
    }
}
