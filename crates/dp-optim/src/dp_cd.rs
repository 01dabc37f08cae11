//! DP-CD (Mangold, Bellet, Salmon & Tommasi, ICML 2022, Algorithm 1) and DP-CD-P (the
//! same with privately estimated smoothness constants, Sec. 5.2 / App. F).
//!
//! The user states `(epsilon, delta)`; [`DpCdParams::build`] checks the parameters once
//! and [`DpCd::fit`] derives the plan (noise multiplier, per-coordinate clipping
//! thresholds, sensitivities and noise), charges it to a ledger and spends exactly it.
//! See `docs/privacy/dp-cd.md` for the derivation.

use crate::cd::{
    check_problem, check_smoothness, run_cd, Averaging, CdProblem, CoordinateOrder, Schedule,
};
use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::{objective_from_predictor, ColumnKernels, NoNoise, PerCoordinate};
use crate::privacy::{Accounting, Adjacency, CoordGaussian, Guarantee, PrivacyReport, SolverPlan};
use crate::report::{Diagnostics, FitReport, Streams, Switches};
use dp_accounting::calibrate::{self, Calibration, Plan, PlanMechanism};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::Gaussian;
use dp_accounting::{Delta, Epsilon};
use dp_models::constants::{
    coordinate_smoothness, private_coordinate_smoothness_with, PrivateSmoothnessOptions,
    Provenance, Tagged,
};
use dp_models::{Dataset, Loss, Penalty};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Where DP-CD's coordinate smoothness constants `M_j` come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Smoothness {
    /// `M_j = (c/n) sum_i x_ij^2` computed from the data **without privacy**. Refused
    /// unless the caller opts in with [`DpCdParams::allow_non_private_constants`] (the
    /// paper's DP-CD experiments do this). The default.
    FromData,
    /// Constants supplied by the caller with their provenance (a
    /// [`Provenance::DataNonPrivate`] value needs the same opt-in as `FromData`).
    Given(Tagged<Vec<f64>>),
    /// DP-CD-P: estimate the `M_j` with the Laplace mechanism of the paper's App. F
    /// (`dp_models::constants::private_coordinate_smoothness`) from public per-feature
    /// bounds `|x_ij| <= feature_bounds[j]`, spending `budget_fraction * epsilon`
    /// (pure DP); the optimisation gets the rest, `(1 - budget_fraction) * epsilon`, at
    /// the same delta. The paper uses `budget_fraction = 0.1`.
    Private {
        /// Public bounds `b_j >= |x_ij|` (the paper: twice the maximal absolute value).
        feature_bounds: Vec<f64>,
        /// Fraction of epsilon spent on the estimate, in (0, 1).
        budget_fraction: f64,
    },
}

impl Smoothness {
    /// DP-CD-P as in the paper: 10 % of epsilon on the estimate.
    pub fn private(feature_bounds: Vec<f64>) -> Self {
        Smoothness::Private {
            feature_bounds,
            budget_fraction: 0.1,
        }
    }
}

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
    epsilon: Option<f64>,
    delta: Option<f64>,
    passes: Option<u64>,
    step_scale: f64,
    clip: Option<f64>,
    accounting: Accounting,
    averaging: Averaging,
    order: CoordinateOrder,
    smoothness: Smoothness,
    allow_non_private: bool,
    w0: Option<Vec<f64>>,
}

impl<L: Loss, P: Penalty> DpCdParams<L, P> {
    /// Starts a builder for `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + penalty(w)`.
    ///
    /// Defaults: step scale 1, [`Accounting::Paper`], [`Averaging::LastIterate`],
    /// [`Smoothness::FromData`] (refused without the opt-in), `w0 = 0`.
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            epsilon: None,
            delta: None,
            passes: None,
            step_scale: 1.0,
            clip: None,
            accounting: Accounting::Paper,
            averaging: Averaging::LastIterate,
            order: CoordinateOrder::Uniform,
            smoothness: Smoothness::FromData,
            allow_non_private: false,
            w0: None,
        }
    }
    /// Target epsilon of the whole fit (> 0).
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }
    /// Target delta of the whole fit, in (0, 1).
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = Some(delta);
        self
    }
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
    /// Calibration of the noise.
    pub fn accounting(mut self, accounting: Accounting) -> Self {
        self.accounting = accounting;
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
    /// guarantee of [`DpCd::fit`] holds unchanged: the same `T*K` Gaussian releases of
    /// sensitivity `2 C_j / n` compose the same way whichever coordinate each one
    /// touches. The paper's *utility* bounds (Theorems 3.2–3.3) assume
    /// [`CoordinateOrder::Uniform`]; cyclic and permutation orders have none from it.
    pub fn coordinate_order(mut self, order: CoordinateOrder) -> Self {
        self.order = order;
        self
    }
    /// Source of the coordinate smoothness constants.
    pub fn smoothness(mut self, smoothness: Smoothness) -> Self {
        self.smoothness = smoothness;
        self
    }
    /// Accept constants computed from the data without privacy (the `M_j` of
    /// [`Smoothness::FromData`]). Their release is **not** covered by the guarantee;
    /// the paper's DP-CD experiments make this choice.
    pub fn allow_non_private_constants(mut self, allow: bool) -> Self {
        self.allow_non_private = allow;
        self
    }
    /// Initial point (default 0).
    pub fn initial_point(mut self, w0: Vec<f64>) -> Self {
        self.w0 = Some(w0);
        self
    }

    /// Checks every data-independent parameter once.
    pub fn build(self) -> Result<DpCd<L, P>> {
        let epsilon = Epsilon::new(self.epsilon.ok_or(OptimError::Missing("epsilon"))?)?;
        let delta = Delta::new(self.delta.ok_or(OptimError::Missing("delta"))?)?;
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
        if let Smoothness::Private {
            feature_bounds,
            budget_fraction,
        } = &self.smoothness
        {
            if !(budget_fraction.is_finite() && *budget_fraction > 0.0 && *budget_fraction < 1.0) {
                return Err(OptimError::InvalidParameter {
                    name: "budget_fraction",
                    value: budget_fraction.to_string(),
                    expected: "the fraction of epsilon spent on smoothness must be in (0, 1)",
                });
            }
            for &b in feature_bounds {
                positive("feature bound", b)?;
            }
        }
        Ok(DpCd {
            loss: self.loss,
            penalty: self.penalty,
            epsilon,
            delta,
            passes,
            step_scale: self.step_scale,
            clip,
            accounting: self.accounting,
            averaging: self.averaging,
            order: self.order,
            smoothness: self.smoothness,
            allow_non_private: self.allow_non_private,
            w0: self.w0,
        })
    }
}

/// DP-CD with checked parameters (see [`DpCdParams`]).
#[derive(Debug, Clone)]
pub struct DpCd<L, P> {
    loss: L,
    penalty: P,
    epsilon: Epsilon,
    delta: Delta,
    passes: u64,
    step_scale: f64,
    clip: f64,
    accounting: Accounting,
    averaging: Averaging,
    order: CoordinateOrder,
    smoothness: Smoothness,
    allow_non_private: bool,
    w0: Option<Vec<f64>>,
}

/// Everything DP-CD spends, derived once from the parameters, the data's shape and the
/// smoothness constants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpCdPlan {
    /// "paper", "exact" or the custom accountant's name.
    pub accounting: String,
    /// Epsilon given to the optimisation (the target, or `(1 - fraction)` of it for
    /// DP-CD-P).
    pub epsilon_optimisation: f64,
    /// Epsilon spent estimating the `M_j` (DP-CD-P), else `None`.
    pub epsilon_smoothness: Option<f64>,
    /// delta (all of it goes to the optimisation; the Laplace estimate is pure DP).
    pub delta: f64,
    /// Loop structure (`T`, `K`).
    pub schedule: Schedule,
    /// Coordinate order (data-independent; absent in older reports = uniform).
    #[serde(default)]
    pub coordinate_order: CoordinateOrder,
    /// Number of Gaussian coordinate releases, `T * K`.
    pub releases: u64,
    /// Noise multiplier `s` (noise std of release `j` = `s * 2 C_j / n`).
    pub noise_multiplier: f64,
    /// The calibration returned by `dp-accounting` (achieved epsilon, order, ...).
    pub calibration: Calibration,
    /// Coordinate smoothness constants used.
    pub smoothness: Vec<f64>,
    /// Their provenance.
    pub smoothness_provenance: Provenance,
    /// Step sizes `gamma_j = step_scale / M_j`.
    pub step_sizes: Vec<f64>,
    /// Global clipping threshold `C`.
    pub clip: f64,
    /// Coordinate thresholds `C_j = sqrt(M_j / tr M) C`.
    pub clip_thresholds: Vec<f64>,
    /// L2 sensitivities `2 C_j / n` of the clipped coordinate gradients (replace-one).
    pub sensitivities: Vec<f64>,
    /// Noise standard deviations `sigma_j = s * 2 C_j / n`.
    pub noise_std: Vec<f64>,
}

impl<L: Loss, P: Penalty> DpCd<L, P> {
    /// Name used in reports: "dp-cd", or "dp-cd-p" with private smoothness.
    pub fn name(&self) -> &'static str {
        match self.smoothness {
            Smoothness::Private { .. } => "dp-cd-p",
            _ => "dp-cd",
        }
    }

    /// Fits on `data`, drawing randomness from `rng` (seed not recorded).
    ///
    /// # Privacy
    ///
    /// *Precondition:* neighbouring datasets have the same size `n` and differ in one
    /// record (replace-one). The step scale, `C`, the number of passes, the averaging
    /// mode and the initial point do not depend on the data; the `M_j` are public,
    /// privately estimated (DP-CD-P, charged), or computed from the data with the
    /// caller's explicit opt-in (then the guarantee does not cover what they reveal).
    ///
    /// *Claim:* the sequence of all iterates (hence the output) is
    /// `(epsilon, delta)`-DP, with the achieved epsilon (at most the target) in the
    /// report's [`Guarantee`].
    ///
    /// *Proof sketch* (`docs/privacy/dp-cd.md`): step `k` picks `j` independently of the
    /// data (uniformly, cyclically or by a per-pass permutation, see
    /// [`CoordinateOrder`]; the order only decides which coordinate each release
    /// touches, not how many releases there are or their sensitivities) and releases `g_j = (1/n) sum_i clip(grad_j loss(theta; d_i), C_j) + N(0,
    /// sigma_j^2)`. Each clipped term lies in `[-C_j, C_j]`, so replacing one record moves
    /// `g_j` by at most `2 C_j / n` (paper Sec. 5.1, Lemma A.2); with
    /// `sigma_j = s * 2 C_j / n` every release is a Gaussian mechanism of noise multiplier
    /// `s`, `(alpha, alpha / (2 s^2))`-RDP (Mironov 2017, Cor. 3) and `1/s`-GDP. The
    /// releases compose adaptively (each gradient is taken at the previous released
    /// iterate): `T*K` of them are `(alpha, T K alpha / (2 s^2))`-RDP (paper Thm B.5) and
    /// exactly `sqrt(T K)/s`-GDP (Dong, Roth & Su 2022, Cor. 3.3). The prox step and the
    /// averaging are post-processing. `s` is the smallest multiplier whose accounted
    /// epsilon meets the target (paper accounting: Eq. 18; exact: analytic Gaussian
    /// curve), taken on the passing side of the calibration search. DP-CD-P adds a pure
    /// `eps'`-DP Laplace release of the `M_j`, composed sequentially
    /// (`eps' + eps_opt <= epsilon`, same delta).
    pub fn fit<D: ColumnKernels, R: Rng + ?Sized>(
        &self,
        data: &Dataset<D>,
        rng: &mut R,
    ) -> Result<FitReport> {
        self.fit_inner(data, Streams::from_rng(rng), None, Switches::ON)
    }

    /// Fits on `data` with a `ChaCha20Rng` seeded by `seed` (recorded in the report).
    /// See [`DpCd::fit`] for the privacy guarantee.
    pub fn fit_seeded<D: ColumnKernels>(&self, data: &Dataset<D>, seed: u64) -> Result<FitReport> {
        self.fit_inner(data, Streams::from_seed(seed), Some(seed), Switches::ON)
    }

    /// The plan for a dataset of `n` samples given the smoothness constants `m`
    /// (no privacy is spent; useful to inspect the noise before fitting).
    pub fn plan(&self, n: usize, m: &[f64], provenance: Provenance) -> Result<DpCdPlan> {
        let (eps_opt, eps_m) = self.budget_split();
        self.plan_with(n, m, provenance, eps_opt, eps_m)
    }

    fn budget_split(&self) -> (f64, Option<f64>) {
        let eps = self.epsilon.get();
        match &self.smoothness {
            Smoothness::Private {
                budget_fraction, ..
            } => {
                let eps_m = budget_fraction * eps;
                (eps - eps_m, Some(eps_m))
            }
            _ => (eps, None),
        }
    }

    fn plan_with(
        &self,
        n: usize,
        m: &[f64],
        provenance: Provenance,
        eps_opt: f64,
        eps_m: Option<f64>,
    ) -> Result<DpCdPlan> {
        let p = m.len();
        check_smoothness(m, p)?;
        let schedule = Schedule::new(self.averaging, self.passes, p)?;
        let releases = schedule.updates();
        let plan = Plan {
            mechanism: PlanMechanism::Gaussian,
            steps: releases,
            accountant: self.accounting.for_dp_cd(),
        };
        let calibration = calibrate::calibrate_sigma(&plan, Epsilon::new(eps_opt)?, self.delta)?;
        let s = calibration.noise_multiplier;
        let trace: f64 = m.iter().sum();
        let clip_thresholds: Vec<f64> =
            m.iter().map(|mj| (mj / trace).sqrt() * self.clip).collect();
        let sensitivities: Vec<f64> = clip_thresholds.iter().map(|c| 2.0 * c / n as f64).collect();
        let noise_std: Vec<f64> = sensitivities.iter().map(|d| s * d).collect();
        let step_sizes = m.iter().map(|mj| self.step_scale / mj).collect();
        Ok(DpCdPlan {
            accounting: self.accounting.name(),
            epsilon_optimisation: eps_opt,
            epsilon_smoothness: eps_m,
            delta: self.delta.get(),
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
        })
    }

    pub(crate) fn fit_inner<D: ColumnKernels>(
        &self,
        data: &Dataset<D>,
        mut streams: Streams,
        seed: Option<u64>,
        switches: Switches,
    ) -> Result<FitReport> {
        let start = std::time::Instant::now();
        check_problem("DP-CD", data, &self.loss, &self.penalty, self.w0.as_deref())?;
        let (n, p) = (data.n_samples(), data.n_features());
        let mut ledger = Ledger::new();
        let (eps_opt, eps_m) = self.budget_split();

        // 1. The smoothness constants (DP-CD-P: a pure DP Laplace release, charged by
        //    dp-models to the ledger before any noise is drawn).
        let (tagged, eps_opt, eps_m) = match &self.smoothness {
            Smoothness::FromData => (coordinate_smoothness(&self.loss, data.x())?, eps_opt, None),
            Smoothness::Given(t) => (t.clone(), eps_opt, None),
            Smoothness::Private { feature_bounds, .. } => {
                let released = private_coordinate_smoothness_with(
                    &self.loss,
                    data.x(),
                    feature_bounds,
                    Epsilon::new(eps_m.unwrap_or(0.0))?,
                    &PrivateSmoothnessOptions::default(),
                    &mut streams.constants,
                    &mut ledger,
                )?;
                // What was actually charged (each of the p releases is rounded up), and
                // the rest of the budget, shaved by a few ulps so that the basic
                // composition `charged + eps_gauss` cannot exceed the target in floating
                // point.
                let charged = released.epsilon_per_coordinate * p as f64;
                let rest = (self.epsilon.get() - charged) * (1.0 - 4.0 * f64::EPSILON);
                if rest.is_nan() || rest <= 0.0 {
                    return Err(OptimError::InvalidParameter {
                        name: "budget_fraction",
                        value: format!("{charged} of epsilon {}", self.epsilon.get()),
                        expected: "the smoothness estimate must leave a positive budget for the optimisation",
                    });
                }
                (released.estimates, rest, Some(charged))
            }
        };
        let provenance = tagged.provenance;
        let m = tagged.require_private(self.allow_non_private)?;
        check_smoothness(&m, p)?;

        // 2. The plan, charged in full before the first release.
        let plan = self.plan_with(n, &m, provenance, eps_opt, eps_m)?;
        ledger.charge(Charge::Gaussian {
            noise_multiplier: plan.noise_multiplier,
            count: plan.releases,
        })?;
        let guarantee = self.guarantee(&plan)?;
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
        let objective = objective_from_predictor(&self.loss, &self.penalty, &w, &z, data.y());
        Ok(FitReport {
            algorithm: self.name().into(),
            coefficients: w,
            iterations: plan.releases,
            noise_multiplier: Some(plan.noise_multiplier),
            privacy: Some(PrivacyReport {
                target_epsilon: self.epsilon.get(),
                target_delta: self.delta.get(),
                plan: SolverPlan::DpCd(plan),
                ledger,
                guarantee,
            }),
            seed,
            diagnostics: Diagnostics {
                objective,
                zero_steps,
                seconds,
            },
        })
    }

    /// The guarantee of the plan: the Gaussian releases' epsilon at delta from the same
    /// accountant, plus (DP-CD-P) the Laplace estimate's pure epsilon by basic sequential
    /// composition.
    fn guarantee(&self, plan: &DpCdPlan) -> Result<Guarantee> {
        let acc = Plan {
            mechanism: PlanMechanism::Gaussian,
            steps: plan.releases,
            accountant: self.accounting.for_dp_cd(),
        };
        let s = dp_accounting::NoiseMultiplier::new(plan.noise_multiplier)?;
        let eps_gauss = calibrate::epsilon(&acc, s, self.delta)?;
        let eps_total = eps_gauss + plan.epsilon_smoothness.unwrap_or(0.0);
        let how = match plan.epsilon_smoothness {
            Some(e) => format!(
                "{} accounting of {} Gaussian releases ({eps_gauss}) + Laplace estimate of M ({e}-DP), basic composition",
                plan.accounting, plan.releases
            ),
            None => format!("{} accounting of {} Gaussian releases", plan.accounting, plan.releases),
        };
        Ok(Guarantee {
            epsilon: eps_total,
            delta: self.delta.get(),
            adjacency: Adjacency::ReplaceOne,
            how,
        })
    }
}
