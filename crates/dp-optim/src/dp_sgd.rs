//! DP-SGD as the DP-CD paper runs it (Sec. 6): proximal SGD with per-example L2
//! clipping, Gaussian noise on the summed batch gradient, a constant step
//! `step_scale / beta`, batches of (expected) size `b` (the papers use `b = 1`) and the
//! last iterate as output. See `docs/privacy/dp-sgd.md`.
//!
//! Two neighbouring relations, each with the sampling its analysis needs:
//!
//! | adjacency | batches | sensitivity of the clipped sum | accountant |
//! |---|---|---|---|
//! | replace-one (default, as DP-CD and DP-GCD) | `b` of `n` without replacement | `2 C` | subsampled RDP, Wang, Balle & Kasiviswanathan 2019 |
//! | add/remove (with a stated `public_n`) | Poisson, rate `b / public_n` | `C` | sampled Gaussian RDP (Mironov, Talwar & Zhang 2019) or PLD |

use crate::constants::resolve_beta_private;
use crate::driver::{
    calibrate_over, CalibrationCache, Declared, Model, PrivateFit, Proof, Report, Split,
};
use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::objective_from_predictor;
use crate::model::{Diagnostics, Fitted};
use crate::plan::{BatchSampling, DpSgdPlan, SolverPlan};
use crate::privacy::{
    charge_pre_spent, pre_spent_epsilon, privacy_setters, Adjacency, CheckedPrivacy,
    LedgerCalibration, PrivacyParams,
};
use crate::sgd::{
    check_sgd_problem, row_norms, run_sgd_by_pass, steps_for, GlobalSmoothness, L2ClipAt,
    NoVecNoise, SgdProblem, SgdScratch, VecNoise,
};
use crate::solver::{Solver, Streams, Switches};
use dp_accounting::calibrate::{self, Plan, PlanMechanism};
use dp_accounting::ledger::Ledger;
use dp_accounting::mechanisms::Gaussian;
use dp_accounting::{NoiseMultiplier, SamplingRate};
use dp_models::constants::Provenance;
use dp_models::{Dataset, Design, Loss, Penalty};
use rand::{Rng, RngCore};

/// Builder of DP-SGD. Required: `epsilon`, `delta`, `passes` (or `steps`), `clip`; with
/// [`Adjacency::AddRemove`] also `public_n`.
///
/// ```
/// use dp_optim::{Adjacency, DpSgdParams};
/// use dp_models::{Logistic, L2};
/// let replace_one = DpSgdParams::new(Logistic, L2::new(1e-3).unwrap())
///     .epsilon(1.0).delta(1e-6).passes(5).clip(1.0).batch_size(64)
///     .build().unwrap();
/// // Under add/remove the number of records is private: state a public one.
/// let add_remove = DpSgdParams::new(Logistic, L2::new(1e-3).unwrap())
///     .epsilon(1.0).delta(1e-6).passes(5).clip(1.0).batch_size(64)
///     .adjacency(Adjacency::AddRemove)
///     .public_n(10_000)
///     .build().unwrap();
/// # let _ = (replace_one, add_remove);
/// ```
#[derive(Debug, Clone)]
pub struct DpSgdParams<L, P> {
    loss: L,
    penalty: P,
    privacy: PrivacyParams,
    passes: Option<u64>,
    steps: Option<u64>,
    step_scale: f64,
    clip: Option<f64>,
    batch_size: u64,
    adjacency: Adjacency,
    public_n: Option<usize>,
    smoothness: GlobalSmoothness,
    w0: Option<Vec<f64>>,
    record_trajectory: bool,
    calibrations: Option<CalibrationCache>,
}

impl<L: Loss, P: Penalty> DpSgdParams<L, P> {
    /// Starts a builder. Defaults: step scale 1, batch size 1,
    /// [`Adjacency::ReplaceOne`] (batches without replacement),
    /// [`Accounting::Paper`](crate::Accounting::Paper), `beta` from the data (refused
    /// without the opt-in), `w0 = 0`.
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            privacy: PrivacyParams::default(),
            passes: None,
            steps: None,
            step_scale: 1.0,
            clip: None,
            batch_size: 1,
            adjacency: Adjacency::ReplaceOne,
            public_n: None,
            smoothness: GlobalSmoothness::FromData,
            w0: None,
            record_trajectory: false,
            calibrations: None,
        }
    }
    privacy_setters!();
    /// Record `F(w)` after every pass in [`Diagnostics::objective_trajectory`] (a
    /// non-private diagnostic computed from the data; it changes no release, and the
    /// returned model is bit for bit the same).
    pub fn record_trajectory(mut self, record: bool) -> Self {
        self.record_trajectory = record;
        self
    }
    /// Number of passes (one pass = `ceil(n / b)` steps).
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
        self
    }
    /// Exact number of noisy gradient steps (of one batch each) instead of whole passes (a fraction of a pass: the DP-GCD
    /// paper runs DP-CD and DP-SGD for 0.001 to 0.1 passes, i.e. that many noisy gradient steps (of one batch each)).
    /// Mutually exclusive with `passes`; the noise is calibrated to exactly this count.
    pub fn steps(mut self, steps: u64) -> Self {
        self.steps = Some(steps);
        self
    }
    /// Step scale `gamma` (`eta = gamma / beta`).
    pub fn step_scale(mut self, gamma: f64) -> Self {
        self.step_scale = gamma;
        self
    }
    /// Per-example L2 clipping threshold `C`.
    pub fn clip(mut self, clip: f64) -> Self {
        self.clip = Some(clip);
        self
    }
    /// Batch size `b` (exact without replacement; expected under Poisson sampling).
    pub fn batch_size(mut self, b: u64) -> Self {
        self.batch_size = b;
        self
    }
    /// The neighbouring relation of the guarantee, which fixes the batch sampling (see
    /// the module docs). Default [`Adjacency::ReplaceOne`].
    pub fn adjacency(mut self, adjacency: Adjacency) -> Self {
        self.adjacency = adjacency;
        self
    }
    /// The number of records stated as public (required under
    /// [`Adjacency::AddRemove`], where the true `n` is private: the sampling rate and the
    /// number of steps are computed from this value, never from the data). Ignored
    /// under replace-one, where `n` is public by definition.
    pub fn public_n(mut self, n: usize) -> Self {
        self.public_n = Some(n);
        self
    }
    /// Source of the global smoothness `beta`.
    /// (A [`GlobalSmoothness`], or a `Tagged<f64>` for [`GlobalSmoothness::Given`].)
    pub fn smoothness(mut self, s: impl Into<GlobalSmoothness>) -> Self {
        self.smoothness = s.into();
        self
    }
    /// Initial point (default 0).
    pub fn initial_point(mut self, w0: Vec<f64>) -> Self {
        self.w0 = Some(w0);
        self
    }
    /// Shares `cache` for the noise calibration (see [`CalibrationCache`]): solvers
    /// built with one cache calibrate each plan once. The results are the same, bit for
    /// bit, with or without it. Default: a cache of this solver's own.
    pub fn calibration_cache(mut self, cache: CalibrationCache) -> Self {
        self.calibrations = Some(cache);
        self
    }
    /// Checks every data-independent parameter once.
    pub fn build(self) -> Result<DpSgd<L, P>> {
        let privacy = self.privacy.check()?;
        let (passes, steps) = match (self.passes, self.steps) {
            (Some(_), Some(_)) => {
                return Err(OptimError::InvalidParameter {
                    name: "steps",
                    value: "both passes and steps".into(),
                    expected: "set either passes or steps, not both",
                })
            }
            (None, None) => return Err(OptimError::Missing("passes (or steps)")),
            (Some(p), None) => (positive_count("passes", p)?, None),
            (None, Some(s)) => (0, Some(positive_count("steps", s)?)),
        };
        positive("step_scale", self.step_scale)?;
        let clip = positive("clip", self.clip.ok_or(OptimError::Missing("clip"))?)?;
        positive_count("batch_size", self.batch_size)?;
        let public_n = match self.adjacency {
            Adjacency::ReplaceOne => None,
            Adjacency::AddRemove => {
                let n = self.public_n.ok_or(OptimError::Missing(
                    "public_n (under add/remove the number of records is private: state a public one)",
                ))?;
                positive_count("public_n", n as u64)?;
                if self.batch_size as usize > n {
                    return Err(OptimError::InvalidParameter {
                        name: "batch_size",
                        value: self.batch_size.to_string(),
                        expected: "the expected batch size must be at most public_n",
                    });
                }
                Some(n)
            }
        };
        Ok(DpSgd {
            loss: self.loss,
            penalty: self.penalty,
            privacy,
            passes,
            steps,
            step_scale: self.step_scale,
            clip,
            batch_size: self.batch_size,
            adjacency: self.adjacency,
            public_n,
            smoothness: self.smoothness,
            w0: self.w0,
            record_trajectory: self.record_trajectory,
            calibrations: self.calibrations.unwrap_or_default(),
        })
    }
}

/// DP-SGD with checked parameters (see [`DpSgdParams`]).
#[derive(Debug, Clone)]
pub struct DpSgd<L, P> {
    loss: L,
    penalty: P,
    privacy: CheckedPrivacy,
    passes: u64,
    /// Exact steps (instead of `passes * ceil(n / b)`).
    steps: Option<u64>,
    step_scale: f64,
    clip: f64,
    batch_size: u64,
    adjacency: Adjacency,
    public_n: Option<usize>,
    smoothness: GlobalSmoothness,
    w0: Option<Vec<f64>>,
    record_trajectory: bool,
    calibrations: CalibrationCache,
}

/// Gaussian noise on every coordinate of the summed gradient.
struct IsoGaussian<'a, R: Rng + ?Sized> {
    mechanism: Gaussian,
    rng: &'a mut R,
}

impl<R: Rng + ?Sized> VecNoise for IsoGaussian<'_, R> {
    #[inline]
    fn perturb(&mut self, g: &mut [f64]) {
        for v in g.iter_mut() {
            *v += self.mechanism.sample(self.rng);
        }
    }
}

impl<L, P> DpSgd<L, P> {
    /// Name used in reports.
    pub fn name(&self) -> &'static str {
        "dp-sgd"
    }
}

impl<D: Design, L: Loss, P: Penalty> Solver<D> for DpSgd<L, P> {
    /// # Privacy
    ///
    /// *Neighbouring relation:* as set by [`DpSgdParams::adjacency`].
    /// *Preconditions:* `beta`, `C`, `b`, the step, the number of passes and the planned
    /// `n` do not depend on the data beyond what the relation makes public (replace-one:
    /// `n`; add/remove: nothing — the caller's `public_n` is used), or the caller opted
    /// in to a `beta` computed from the data, which the guarantee then does not cover.
    ///
    /// *Claim:* the sequence of iterates is `(epsilon, delta)`-DP under that relation,
    /// with the achieved epsilon reported in the model's guarantee, at most the target.
    ///
    /// *Proof sketch:* each step releases `S + N(0, s^2 Delta^2 I)` where `S` is the sum
    /// of the per-example gradients of the batch, each rescaled to L2 norm at most `C`.
    /// * Replace-one, batch = uniform `b`-subset of the `n` records: if the replaced
    ///   record is not in the batch `S` is unchanged, otherwise it moves by
    ///   `||g_i - g_i'|| <= 2 C = Delta`. This is the Gaussian mechanism of sensitivity
    ///   `2 C` (noise multiplier `s`) applied to a subsample drawn without replacement,
    ///   whose RDP under replace-one is bounded by Wang, Balle & Kasiviswanathan (2019,
    ///   Thm 9).
    /// * Add/remove, Poisson batch of rate `q = b / public_n`: `S` moves by at most
    ///   `C = Delta` when the record is sampled; the step is the sampled Gaussian
    ///   mechanism of Mironov, Talwar & Zhang (2019, Sec. 3.3); `q` and the number of
    ///   steps are public since `public_n` is.
    ///
    /// The gradient is evaluated at the previous (released) iterate, so the steps
    /// compose adaptively (Mironov 2017, Prop. 1); dividing by `b` and the prox are
    /// post-processing. `s` is the smallest noise multiplier whose accounted epsilon
    /// over all steps meets the target (passing side of the calibration search).
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        self.fit_inner(data, Streams::from_rng(rng), Switches::ON)
    }
}

impl<L: Loss, P: Penalty> DpSgd<L, P> {
    fn sampling(&self) -> BatchSampling {
        match self.adjacency {
            Adjacency::ReplaceOne => BatchSampling::WithoutReplacement,
            Adjacency::AddRemove => BatchSampling::Poisson,
        }
    }

    fn accountant_plan(&self, steps: u64, q: f64) -> Result<Plan> {
        let sampling_rate = SamplingRate::new(q)?;
        Ok(match self.adjacency {
            Adjacency::ReplaceOne => Plan {
                mechanism: PlanMechanism::SampledWithoutReplacementGaussian { sampling_rate },
                steps,
                accountant: self.privacy.accounting.for_sampled_without_replacement(),
            },
            Adjacency::AddRemove => Plan {
                mechanism: PlanMechanism::SubsampledGaussian { sampling_rate },
                steps,
                accountant: self.privacy.accounting.for_poisson_subsampled(),
            },
        })
    }

    /// The number of records the plan is built on: `n` under replace-one, the stated
    /// `public_n` under add/remove.
    fn planned_n(&self, n: usize) -> usize {
        self.public_n.unwrap_or(n)
    }

    /// The plan for a dataset of `n` samples given `beta` (no privacy is spent). Under
    /// add/remove `n` is ignored in favour of the stated `public_n`. What `beta` cost
    /// is read from its provenance.
    pub fn plan(&self, n: usize, beta: f64, beta_provenance: Provenance) -> Result<DpSgdPlan> {
        let mut prior = Ledger::new();
        let spent = charge_pre_spent(
            &mut prior,
            pre_spent_epsilon(&beta_provenance),
            "global smoothness",
        )?;
        self.plan_with(n, beta, beta_provenance, &prior, spent)
            .map(|(plan, ..)| plan)
    }

    fn plan_with(
        &self,
        n: usize,
        beta: f64,
        beta_provenance: Provenance,
        prior: &Ledger,
        spent: f64,
    ) -> Result<(DpSgdPlan, LedgerCalibration, Plan)> {
        positive("global smoothness beta", beta)?;
        let n = self.planned_n(n);
        if self.batch_size as usize > n {
            return Err(OptimError::InvalidParameter {
                name: "batch_size",
                value: self.batch_size.to_string(),
                expected: "the batch size must be at most n (sampling rate b/n <= 1)",
            });
        }
        let steps = match self.steps {
            Some(s) => s,
            None => steps_for(self.passes, n, self.batch_size)?,
        };
        let q = self.batch_size as f64 / n as f64;
        let plan = self.accountant_plan(steps, q)?;
        let calibrated = calibrate_over(
            prior,
            spent,
            &plan,
            &self.privacy,
            Split::Accounting,
            Some(&self.calibrations),
        )?;
        let calibration = calibrated.calibration;
        // The steps' own epsilon (the whole ledger's when nothing was spent before).
        let epsilon = if spent == 0.0 {
            calibration.epsilon
        } else {
            calibrate::epsilon(
                &plan,
                NoiseMultiplier::new(calibration.noise_multiplier)?,
                self.privacy.delta,
            )?
        };
        let s = calibration.noise_multiplier;
        let sensitivity = match self.adjacency {
            Adjacency::ReplaceOne => 2.0 * self.clip,
            Adjacency::AddRemove => self.clip,
        };
        let sgd_plan = DpSgdPlan {
            accounting: self.privacy.accounting.name(),
            adjacency: self.adjacency,
            sampling: self.sampling(),
            planned_n: n,
            epsilon,
            delta: self.privacy.delta.get(),
            steps,
            sampling_rate: q,
            batch_size: self.batch_size,
            noise_multiplier: s,
            calibration,
            clip: self.clip,
            sensitivity,
            noise_std: s * sensitivity,
            beta,
            beta_provenance,
            step: self.step_scale / beta,
        };
        Ok((sgd_plan, calibrated, plan))
    }

    pub(crate) fn fit_inner<D: Design>(
        &self,
        data: &Dataset<D>,
        mut streams: Streams,
        switches: Switches,
    ) -> Result<Fitted> {
        let mut fit = PrivateFit::begin(&self.privacy, self.adjacency);
        let (n, p) = (data.n_samples(), data.n_features());
        let planned_n = self.planned_n(n);
        check_sgd_problem(
            data,
            &self.loss,
            &self.penalty,
            self.batch_size,
            planned_n,
            self.w0.as_deref(),
        )?;
        if self.sampling() == BatchSampling::WithoutReplacement && self.batch_size as usize > n {
            return Err(OptimError::InvalidParameter {
                name: "batch_size",
                value: self.batch_size.to_string(),
                expected: "the batch size must be at most n",
            });
        }
        if matches!(self.smoothness, GlobalSmoothness::Private { .. })
            && self.adjacency != Adjacency::ReplaceOne
        {
            return Err(OptimError::Unsupported(
                "the private estimate of beta is analysed under replace-one neighbours; \
                 under add/remove give a public or separately estimated beta"
                    .into(),
            ));
        }
        // A private estimate of beta is drawn (and charged) here, first.
        let (tagged, drawn_cost, bound_non_private) = resolve_beta_private(
            &self.smoothness,
            &self.loss,
            data.x(),
            self.privacy.epsilon.get(),
            self.privacy.allow_non_private_constants,
            &mut streams.constants,
            fit.ledger_mut(),
        )?;
        let provenance = tagged.provenance;
        let uses_non_private = !tagged.is_private() || bound_non_private;
        let spent = if drawn_cost > 0.0 {
            drawn_cost
        } else {
            charge_pre_spent(
                fit.ledger_mut(),
                pre_spent_epsilon(&provenance),
                "global smoothness",
            )?
        };
        let beta = tagged.require_private(self.privacy.allow_non_private_constants)?;
        // The plan, calibrated over the ledger charged so far plus its steps, and
        // charged in full before the first step.
        let (plan, calibrated, releases) =
            self.plan_with(n, beta, provenance, fit.ledger(), spent)?;
        let fit = fit.charge(Declared {
            releases: vec![releases.charge(NoiseMultiplier::new(plan.noise_multiplier)?)],
            calibrated: Some(calibrated),
            accountant: releases.accountant,
            proof: Proof::Proven,
        })?;
        let norms = row_norms(data.x());
        let prob = SgdProblem {
            x: data.x(),
            y: data.y(),
            loss: &self.loss,
            penalty: &self.penalty,
            row_norms: &norms,
            eta: plan.step,
            sampling_rate: plan.sampling_rate,
            batch: self.batch_size as f64,
            steps: plan.steps,
            sampling: plan.sampling,
        };
        let mut w = self.w0.clone().unwrap_or_else(|| vec![0.0; p]);
        let mut g = vec![0.0; p];
        let mut scratch = SgdScratch::new(n);
        // The switches exist for the twin test only (crate-private).
        let clip = L2ClipAt(if switches.clip {
            self.clip
        } else {
            f64::INFINITY
        });
        let mut trajectory = Vec::new();
        let per_pass = steps_for(1, self.planned_n(n), self.batch_size)?;
        if switches.noise {
            let mut noise = IsoGaussian {
                // The charged release's sampler: std s * Delta.
                mechanism: fit.release(0)?.gaussian(plan.sensitivity)?,
                rng: &mut streams.noise,
            };
            run_sgd_by_pass(
                &prob,
                clip,
                &mut noise,
                &mut streams.coordinates,
                &mut w,
                &mut g,
                &mut scratch,
                per_pass,
                self.record_trajectory.then_some(&mut trajectory),
            );
        } else {
            run_sgd_by_pass(
                &prob,
                clip,
                &mut NoVecNoise,
                &mut streams.coordinates,
                &mut w,
                &mut g,
                &mut scratch,
                per_pass,
                self.record_trajectory.then_some(&mut trajectory),
            );
        }
        fit.finish(
            "DP-SGD",
            "the step scale or the clipping threshold is too large for this data",
            Model {
                algorithm: "dp-sgd".into(),
                coefficients: w,
                iterations: plan.steps,
                diagnostics: Diagnostics {
                    objective_trajectory: trajectory,
                    ..Diagnostics::default()
                },
            },
            Report {
                n_samples: planned_n,
                plan: SolverPlan::DpSgd(plan),
                other_guarantees: Vec::new(),
                uses_non_private_constants: uses_non_private,
            },
            |w| {
                let mut z = vec![0.0; n];
                data.x().matvec(w, &mut z);
                objective_from_predictor(&self.loss, &self.penalty, w, &z, data.y())
            },
        )
    }
}
