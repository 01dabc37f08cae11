//! DP-SGD as the DP-CD paper runs it (Sec. 6; spec section 5.1): proximal SGD with
//! per-example L2 clipping, Gaussian noise on the summed batch gradient, a constant step
//! `step_scale / beta`, Poisson subsampling at rate `q = b / n` (the papers use `b = 1`)
//! and the last iterate as output. The noise is calibrated from `(epsilon, delta)` with
//! the sampled Gaussian mechanism's RDP (Mironov, Talwar & Zhang 2019) or the PLD
//! accountant. See `docs/privacy/dp-sgd.md`.

use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::objective_from_predictor;
use crate::privacy::{Accounting, Adjacency, Guarantee, PrivacyReport, SolverPlan};
use crate::report::{Diagnostics, FitReport, Streams, Switches};
use crate::sgd::{
    check_sgd_problem, resolve_beta, row_norms, run_sgd, steps_for, GlobalSmoothness, L2ClipAt,
    NoVecNoise, SgdProblem, VecNoise,
};
use dp_accounting::calibrate::{self, Calibration, Plan, PlanMechanism};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::Gaussian;
use dp_accounting::{Delta, Epsilon, NoiseMultiplier, SamplingRate};
use dp_models::constants::Provenance;
use dp_models::{Dataset, Design, Loss, Penalty};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Builder of DP-SGD. Required: `epsilon`, `delta`, `passes`, `clip`.
#[derive(Debug, Clone)]
pub struct DpSgdParams<L, P> {
    loss: L,
    penalty: P,
    epsilon: Option<f64>,
    delta: Option<f64>,
    passes: Option<u64>,
    step_scale: f64,
    clip: Option<f64>,
    batch_size: u64,
    accounting: Accounting,
    smoothness: GlobalSmoothness,
    allow_non_private: bool,
    w0: Option<Vec<f64>>,
}

impl<L: Loss, P: Penalty> DpSgdParams<L, P> {
    /// Starts a builder. Defaults: step scale 1, batch size 1, [`Accounting::Paper`]
    /// (sampled Gaussian RDP, Mironov conversion), `beta` from the data (refused without
    /// the opt-in), `w0 = 0`.
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            epsilon: None,
            delta: None,
            passes: None,
            step_scale: 1.0,
            clip: None,
            batch_size: 1,
            accounting: Accounting::Paper,
            smoothness: GlobalSmoothness::FromData,
            allow_non_private: false,
            w0: None,
        }
    }
    /// Target epsilon (> 0).
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }
    /// Target delta, in (0, 1).
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = Some(delta);
        self
    }
    /// Number of passes (one pass = `ceil(n / b)` steps).
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
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
    /// Expected batch size `b` (Poisson sampling rate `b / n`; the papers use 1).
    pub fn batch_size(mut self, b: u64) -> Self {
        self.batch_size = b;
        self
    }
    /// Calibration of the noise ([`Accounting::Exact`] = PLD for DP-SGD).
    pub fn accounting(mut self, accounting: Accounting) -> Self {
        self.accounting = accounting;
        self
    }
    /// Source of the global smoothness `beta`.
    pub fn smoothness(mut self, s: GlobalSmoothness) -> Self {
        self.smoothness = s;
        self
    }
    /// Accept a `beta` computed from the data without privacy (not covered by the
    /// guarantee; the paper's experiments do this).
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
    pub fn build(self) -> Result<DpSgd<L, P>> {
        let epsilon = Epsilon::new(self.epsilon.ok_or(OptimError::Missing("epsilon"))?)?;
        let delta = Delta::new(self.delta.ok_or(OptimError::Missing("delta"))?)?;
        let passes = positive_count("passes", self.passes.ok_or(OptimError::Missing("passes"))?)?;
        positive("step_scale", self.step_scale)?;
        let clip = positive("clip", self.clip.ok_or(OptimError::Missing("clip"))?)?;
        positive_count("batch_size", self.batch_size)?;
        Ok(DpSgd {
            loss: self.loss,
            penalty: self.penalty,
            epsilon,
            delta,
            passes,
            step_scale: self.step_scale,
            clip,
            batch_size: self.batch_size,
            accounting: self.accounting,
            smoothness: self.smoothness,
            allow_non_private: self.allow_non_private,
            w0: self.w0,
        })
    }
}

/// DP-SGD with checked parameters (see [`DpSgdParams`]).
#[derive(Debug, Clone)]
pub struct DpSgd<L, P> {
    loss: L,
    penalty: P,
    epsilon: Epsilon,
    delta: Delta,
    passes: u64,
    step_scale: f64,
    clip: f64,
    batch_size: u64,
    accounting: Accounting,
    smoothness: GlobalSmoothness,
    allow_non_private: bool,
    w0: Option<Vec<f64>>,
}

/// Everything DP-SGD spends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpSgdPlan {
    /// "paper", "exact" or the custom accountant's name.
    pub accounting: String,
    /// Target epsilon.
    pub epsilon: f64,
    /// delta.
    pub delta: f64,
    /// Number of noisy steps.
    pub steps: u64,
    /// Poisson sampling rate `q = b / n`.
    pub sampling_rate: f64,
    /// Expected batch size `b`.
    pub batch_size: u64,
    /// Noise multiplier `s`: noise std on the summed clipped gradients = `s C`.
    pub noise_multiplier: f64,
    /// The calibration returned by `dp-accounting`.
    pub calibration: Calibration,
    /// Per-example L2 clipping threshold `C` (= the L2 sensitivity of the summed batch
    /// gradient under add/remove adjacency).
    pub clip: f64,
    /// Noise std per coordinate of the summed gradient, `s C`.
    pub noise_std: f64,
    /// Global smoothness `beta` and its provenance.
    pub beta: f64,
    /// Provenance of `beta`.
    pub beta_provenance: Provenance,
    /// Constant step `eta = step_scale / beta`.
    pub step: f64,
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

impl<L: Loss, P: Penalty> DpSgd<L, P> {
    /// Fits on `data`, drawing randomness from `rng` (seed not recorded).
    ///
    /// # Privacy
    ///
    /// *Precondition:* neighbouring datasets differ by adding or removing one record
    /// (see `docs/privacy/dp-sgd.md` for replace-one). `beta`, `C`, `b`, the step and the
    /// number of passes do not depend on the data (or the caller opted in to a `beta`
    /// computed from it, which the guarantee then does not cover).
    ///
    /// *Claim:* the sequence of iterates is `(epsilon, delta)`-DP with the achieved
    /// epsilon reported in [`FitReport::privacy`], at most the target.
    ///
    /// *Proof sketch:* each step releases `sum_{i in B} clip(g_i, C) + N(0, s^2 C^2 I)`
    /// with `B` a Poisson sample of rate `q`: under add/remove adjacency the clipped sum
    /// has L2 sensitivity `C`, so the step is the sampled Gaussian mechanism of noise
    /// multiplier `s`, whose RDP is given by Mironov, Talwar & Zhang (2019, Sec. 3.3);
    /// the gradient `g_i` is evaluated at the previous (already released) iterate, so
    /// the steps compose adaptively (Mironov 2017, Prop. 1), and the division by `b`
    /// and the prox are post-processing. `s` is the smallest noise multiplier whose
    /// accounted epsilon over `steps` releases meets the target (`dp-accounting`
    /// calibration, passing side of the search).
    pub fn fit<D: Design, R: Rng + ?Sized>(
        &self,
        data: &Dataset<D>,
        rng: &mut R,
    ) -> Result<FitReport> {
        self.fit_inner(data, Streams::from_rng(rng), None, Switches::ON)
    }
    /// Fits on `data` with a `ChaCha20Rng` seeded by `seed` (recorded in the report).
    /// See [`DpSgd::fit`] for the privacy guarantee.
    pub fn fit_seeded<D: Design>(&self, data: &Dataset<D>, seed: u64) -> Result<FitReport> {
        self.fit_inner(data, Streams::from_seed(seed), Some(seed), Switches::ON)
    }

    fn accountant_plan(&self, steps: u64, q: f64) -> Result<Plan> {
        Ok(Plan {
            mechanism: PlanMechanism::SubsampledGaussian {
                sampling_rate: SamplingRate::new(q)?,
            },
            steps,
            accountant: self.accounting.for_dp_sgd(),
        })
    }

    /// The plan for `n` samples given `beta` (no privacy is spent).
    pub fn plan(&self, n: usize, beta: f64, beta_provenance: Provenance) -> Result<DpSgdPlan> {
        positive("global smoothness beta", beta)?;
        if self.batch_size as usize > n {
            return Err(OptimError::InvalidParameter {
                name: "batch_size",
                value: self.batch_size.to_string(),
                expected: "the expected batch size must be at most n (sampling rate b/n <= 1)",
            });
        }
        let steps = steps_for(self.passes, n, self.batch_size)?;
        let q = self.batch_size as f64 / n as f64;
        let plan = self.accountant_plan(steps, q)?;
        let calibration = calibrate::calibrate_sigma(&plan, self.epsilon, self.delta)?;
        let s = calibration.noise_multiplier;
        Ok(DpSgdPlan {
            accounting: self.accounting.name(),
            epsilon: self.epsilon.get(),
            delta: self.delta.get(),
            steps,
            sampling_rate: q,
            batch_size: self.batch_size,
            noise_multiplier: s,
            calibration,
            clip: self.clip,
            noise_std: s * self.clip,
            beta,
            beta_provenance,
            step: self.step_scale / beta,
        })
    }

    pub(crate) fn fit_inner<D: Design>(
        &self,
        data: &Dataset<D>,
        mut streams: Streams,
        seed: Option<u64>,
        switches: Switches,
    ) -> Result<FitReport> {
        let start = std::time::Instant::now();
        check_sgd_problem(
            data,
            &self.loss,
            &self.penalty,
            self.batch_size,
            self.w0.as_deref(),
        )?;
        let (n, p) = (data.n_samples(), data.n_features());
        let tagged = resolve_beta(&self.smoothness, &self.loss, data.x())?;
        let provenance = tagged.provenance;
        let beta = tagged.require_private(self.allow_non_private)?;
        let plan = self.plan(n, beta, provenance)?;
        let mut ledger = Ledger::new();
        ledger.charge(Charge::SubsampledGaussian {
            sampling_rate: plan.sampling_rate,
            noise_multiplier: plan.noise_multiplier,
            count: plan.steps,
        })?;
        let eps = calibrate::epsilon(
            &self.accountant_plan(plan.steps, plan.sampling_rate)?,
            NoiseMultiplier::new(plan.noise_multiplier)?,
            self.delta,
        )?;
        let guarantee = Guarantee {
            epsilon: eps,
            delta: self.delta.get(),
            adjacency: Adjacency::AddRemove,
            how: format!(
                "{} accounting of {} sampled Gaussian steps (q = {})",
                plan.accounting, plan.steps, plan.sampling_rate
            ),
        };
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
        };
        let mut w = self.w0.clone().unwrap_or_else(|| vec![0.0; p]);
        let mut g = vec![0.0; p];
        // The switches exist for the twin test only (crate-private).
        let clip = L2ClipAt(if switches.clip {
            self.clip
        } else {
            f64::INFINITY
        });
        if switches.noise {
            let mut noise = IsoGaussian {
                mechanism: Gaussian::new(plan.noise_std)?,
                rng: &mut streams.noise,
            };
            run_sgd(
                &prob,
                clip,
                &mut noise,
                &mut streams.coordinates,
                &mut w,
                &mut g,
            );
        } else {
            run_sgd(
                &prob,
                clip,
                &mut NoVecNoise,
                &mut streams.coordinates,
                &mut w,
                &mut g,
            );
        }
        let seconds = start.elapsed().as_secs_f64();
        let mut z = vec![0.0; n];
        data.x().matvec(&w, &mut z);
        let objective = objective_from_predictor(&self.loss, &self.penalty, &w, &z, data.y());
        Ok(FitReport {
            algorithm: "dp-sgd".into(),
            coefficients: w,
            iterations: plan.steps,
            noise_multiplier: Some(plan.noise_multiplier),
            privacy: Some(PrivacyReport {
                target_epsilon: self.epsilon.get(),
                target_delta: self.delta.get(),
                plan: SolverPlan::DpSgd(plan),
                ledger,
                guarantee,
            }),
            seed,
            diagnostics: Diagnostics {
                objective,
                zero_steps: 0,
                seconds,
            },
        })
    }
}
