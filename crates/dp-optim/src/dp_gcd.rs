//! DP-GCD: differentially private greedy coordinate descent (Mangold, Bellet, Salmon &
//! Tommasi, AISTATS 2023, Algorithms 1 and 2), its proximal selection rules, a tighter
//! zCDP variant, and the non-private twin.
//!
//! The problem is
//!
//! ```text
//! F(w) = (1/n) sum_i loss(x_i^T w, y_i) + (ridge/2) ||w||^2 + sum_j psi_j(w_j)
//! ```
//!
//! with a smooth per-sample loss, an optional smooth ridge term (the paper's L2
//! problems put it in the smooth part: its gradient is data-independent and needs no
//! clipping or noise) and a separable penalty `psi` handled by its prox (L1 for the
//! paper's LASSO / sparse-logistic problems).
//!
//! From `w0 = 0`, each of the `T` iterations
//! 1. computes the full clipped gradient
//!    `g_j = (1/n) sum_i clip(phi'(z_i, y_i) x_ij, C_j) + ridge w_j` in O(nnz(X)) from
//!    the maintained predictor `z = X w` (in parallel over coordinates for large
//!    designs);
//! 2. **privately selects** one coordinate `j` by the greedy rule (GS-L for smooth
//!    problems, GS-s / GS-r / GS-q for proximal ones; [`SelectionRule`]);
//! 3. **privately updates** it: `w_j <- prox_{gamma_j psi_j}(w_j - gamma_j (g_j + eta))`
//!    with fresh noise `eta` and `gamma_j = gamma / M_j`; `z += (w_j' - w_j) X_{:,j}`.
//!
//! The output is the last iterate. Clipping thresholds come from one `C` as in DP-CD:
//! `C_j = C sqrt(M_j / tr M)`.
//!
//! Two privacy variants share this interface ([`Variant`]):
//! * [`Variant::Laplace`], the paper's: Laplace noise on the update, Laplace
//!   report-noisy-max for the selection, `2T` pure-DP steps composed by advanced
//!   composition (eq. (2), solved numerically).
//! * [`Variant::Zcdp`], ours: Gaussian noise on the update, the exponential mechanism
//!   (Gumbel report-noisy-max) for the selection, composed in zCDP (bounded-range bound
//!   `eps0^2/8` for the selection).
//!
//! The full derivations are in `docs/privacy/dp-gcd.md`; each private step below has a
//! `# Privacy` section.
//!
//! ```no_run
//! use dp_models::{Dataset, DenseDesign, L1, Squared};
//! use dp_optim::dp_gcd::{DpGcd, SelectionRule};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let x = DenseDesign::from_row_major(3, 2, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0])?;
//! let data = Dataset::new(x, vec![1.0, -1.0, 0.5])?;
//! let plan = DpGcd::new(Squared::half(), L1::new(0.1)?)
//!     .epsilon(1.0)
//!     .delta(1e-6)
//!     .iterations(5)
//!     .step(0.5)
//!     .clip(1.0)
//!     .rule(SelectionRule::GsR)
//!     .allow_non_private_constants(true)
//!     .build()?;
//! let report = plan.fit_seeded(&data, 42)?;
//! println!("{:?} at eps = {}", report.coefficients, report.guarantee.epsilon);
//! # Ok(())
//! # }
//! ```

pub mod calibration;
pub mod error;
mod gradient;
pub mod rules;
pub mod twin;

pub use calibration::{LaplaceComposition, ZcdpSplit};
pub use error::{DpGcdError, Result};
pub use rules::SelectionRule;
pub use twin::greedy_cd;

use calibration::{laplace_step_epsilon, zcdp_split};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::{Gaussian, Laplace, ReportNoisyMax, RnmNoise};
use dp_accounting::zcdp::{epsilon_from_rho, ZcdpConversion};
use dp_accounting::Delta;
use dp_models::constants::{coordinate_smoothness, Provenance, Tagged};
use dp_models::{Dataset, Design, Loss, Penalty};
use error::invalid;
use gradient::SelectionNoise;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

/// Which noise and accountant pair DP-GCD uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Variant {
    /// The paper's: Laplace update noise, Laplace report-noisy-max selection, pure-DP
    /// steps composed by advanced composition. Reported as `dp-gcd`.
    Laplace,
    /// Ours: Gaussian update noise, Gumbel report-noisy-max (exponential mechanism)
    /// selection, composed in zCDP. Reported as `dp-gcd-zcdp`.
    Zcdp,
}

impl Variant {
    /// The algorithm name used in reports: `dp-gcd` or `dp-gcd-zcdp`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Laplace => "dp-gcd",
            Variant::Zcdp => "dp-gcd-zcdp",
        }
    }
}

/// How the Laplace variant's report-noisy-max is calibrated (the monotone /
/// non-monotone question, spec G6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RnmCalibration {
    /// Default. Laplace noise of scale `2 Delta_u / eps'` added to the deterministic
    /// scores `u_j` (each of sensitivity `Delta_u`): report-noisy-max for non-monotone
    /// queries, `eps'`-DP for every rule (Dwork & Roth 2014, Claim 3.9's proof without
    /// monotonicity gives the factor 2).
    Conservative,
    /// The paper's Algorithm 1 literally: noise `chi_j ~ Lap(Delta_j / eps')` added to the
    /// gradient **inside** the score (`|g_j + chi_j| / sqrt(M_j)` for GS-L). The paper
    /// claims `eps'`-DP citing report-noisy-max, whose textbook proof needs monotone
    /// scores; gradient scores are not monotone. Kept to reproduce the paper; the report
    /// marks its guarantee as not proven (see `docs/privacy/dp-gcd.md`).
    Paper,
}

/// Parameters of DP-GCD (a builder; [`DpGcd::build`] checks them into a [`DpGcdPlan`]).
#[derive(Debug, Clone)]
pub struct DpGcd<L, P> {
    loss: L,
    penalty: P,
    ridge: f64,
    epsilon: f64,
    delta: f64,
    iterations: u64,
    step: f64,
    clip: f64,
    rule: SelectionRule,
    variant: Variant,
    rnm: RnmCalibration,
    composition: LaplaceComposition,
    selection_share: f64,
    noise: bool,
    allow_non_private_constants: bool,
    smoothness: Option<Tagged<Vec<f64>>>,
    record_trajectory: bool,
}

impl<L: Loss, P: Penalty> DpGcd<L, P> {
    /// DP-GCD for `loss` and the separable `penalty`, with defaults: epsilon and delta
    /// unset (must be given), 1 iteration, step `gamma = 1`, clipping `C = 1`, rule
    /// GS-L, [`Variant::Laplace`], [`RnmCalibration::Conservative`],
    /// [`LaplaceComposition::Advanced`], no ridge, selection share 1/2 (zCDP variant).
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            ridge: 0.0,
            epsilon: f64::NAN,
            delta: f64::NAN,
            iterations: 1,
            step: 1.0,
            clip: 1.0,
            rule: SelectionRule::GsL,
            variant: Variant::Laplace,
            rnm: RnmCalibration::Conservative,
            composition: LaplaceComposition::Advanced,
            selection_share: 0.5,
            noise: true,
            allow_non_private_constants: false,
            smoothness: None,
            record_trajectory: false,
        }
    }
    /// Target epsilon (> 0).
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }
    /// Target delta, in (0, 1).
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = delta;
        self
    }
    /// Number of iterations `T >= 1` (one iteration = one pass over the data).
    pub fn iterations(mut self, iterations: u64) -> Self {
        self.iterations = iterations;
        self
    }
    /// Step-size multiplier `gamma > 0` (coordinate `j` uses `gamma / M_j`).
    pub fn step(mut self, gamma: f64) -> Self {
        self.step = gamma;
        self
    }
    /// Clipping threshold `C > 0`; coordinate `j` clips per-sample gradient entries to
    /// `[-C_j, C_j]` with `C_j = C sqrt(M_j / tr M)`. `f64::INFINITY` disables clipping
    /// (only allowed with [`DpGcd::noise_off`]).
    pub fn clip(mut self, clip: f64) -> Self {
        self.clip = clip;
        self
    }
    /// Smooth ridge term `(ridge/2) ||w||^2` (>= 0), added to the gradient without
    /// clipping or noise and to every `M_j`.
    pub fn ridge(mut self, ridge: f64) -> Self {
        self.ridge = ridge;
        self
    }
    /// The greedy selection rule.
    pub fn rule(mut self, rule: SelectionRule) -> Self {
        self.rule = rule;
        self
    }
    /// The privacy variant.
    pub fn variant(mut self, variant: Variant) -> Self {
        self.variant = variant;
        self
    }
    /// Report-noisy-max calibration of the Laplace variant.
    pub fn rnm_calibration(mut self, rnm: RnmCalibration) -> Self {
        self.rnm = rnm;
        self
    }
    /// Composition theorem of the Laplace variant.
    pub fn composition(mut self, composition: LaplaceComposition) -> Self {
        self.composition = composition;
        self
    }
    /// zCDP variant: fraction in (0, 1) of each iteration's rho spent on the selection.
    pub fn selection_share(mut self, share: f64) -> Self {
        self.selection_share = share;
        self
    }
    /// Switches all noise off: the fit is **not private** (its report says so). With
    /// clipping disabled too, DP-GCD equals its non-private twin [`greedy_cd`].
    pub fn noise_off(mut self) -> Self {
        self.noise = false;
        self
    }
    /// Accepts smoothness constants computed from the data without privacy (the paper's
    /// experiments do this; the guarantee then does not cover what `M_j` reveal).
    pub fn allow_non_private_constants(mut self, allow: bool) -> Self {
        self.allow_non_private_constants = allow;
        self
    }
    /// Coordinate smoothness constants `M_j` of the data-fit term (ridge excluded), with
    /// their provenance; by default they are computed from the data
    /// ([`Provenance::DataNonPrivate`]).
    pub fn smoothness(mut self, m: Tagged<Vec<f64>>) -> Self {
        self.smoothness = Some(m);
        self
    }
    /// Records the exact objective after every iteration (non-private diagnostic).
    pub fn record_trajectory(mut self, record: bool) -> Self {
        self.record_trajectory = record;
        self
    }

    /// Checks the parameters and calibrates the per-step noise (data-independent part).
    pub fn build(self) -> Result<DpGcdPlan<L, P>> {
        if self.iterations == 0 {
            return Err(invalid(
                "iterations",
                0.0,
                "DP-GCD needs at least one iteration (T >= 1)",
            ));
        }
        if !(self.step.is_finite() && self.step > 0.0) {
            return Err(invalid(
                "step",
                self.step,
                "the step multiplier gamma must be finite and > 0",
            ));
        }
        if self.clip.is_nan() || self.clip <= 0.0 {
            return Err(invalid(
                "clip",
                self.clip,
                "the clipping threshold C must be > 0",
            ));
        }
        if self.noise && !self.clip.is_finite() {
            return Err(invalid(
                "clip",
                self.clip,
                "a private fit needs a finite clipping threshold (it bounds the sensitivity)",
            ));
        }
        if !(self.ridge.is_finite() && self.ridge >= 0.0) {
            return Err(invalid(
                "ridge",
                self.ridge,
                "the ridge strength must be finite and >= 0",
            ));
        }
        if self.loss.curvature_bound().is_none() {
            return Err(DpGcdError::Unsupported(format!(
                "the {} loss is not smooth; DP-GCD needs a smooth loss (logistic, squared, ...)",
                self.loss.name()
            )));
        }
        let calibration = if !self.noise {
            Calibration::Off
        } else {
            match self.variant {
                Variant::Laplace => Calibration::Laplace {
                    step_epsilon: laplace_step_epsilon(
                        self.epsilon,
                        self.delta,
                        self.iterations,
                        self.composition,
                    )?,
                },
                Variant::Zcdp => Calibration::Zcdp(zcdp_split(
                    self.epsilon,
                    self.delta,
                    self.iterations,
                    self.selection_share,
                )?),
            }
        };
        Ok(DpGcdPlan {
            params: self,
            calibration,
        })
    }
}

/// The data-independent calibration of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Calibration {
    /// Laplace variant: every selection and every update is `step_epsilon`-DP.
    Laplace {
        /// The per-step pure epsilon `eps'`.
        step_epsilon: f64,
    },
    /// zCDP variant.
    Zcdp(ZcdpSplit),
    /// Noise switched off: not private.
    Off,
}

/// A checked DP-GCD configuration: `fit` spends exactly this plan.
#[derive(Debug, Clone)]
pub struct DpGcdPlan<L, P> {
    params: DpGcd<L, P>,
    calibration: Calibration,
}

/// A privacy guarantee `(epsilon, delta)` under a named accountant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Guarantee {
    /// The accountant / analysis that gives it.
    pub accountant: String,
    /// Epsilon (rounded up).
    pub epsilon: f64,
    /// Delta.
    pub delta: f64,
    /// zCDP rho, when the analysis is in zCDP.
    pub rho: Option<f64>,
    /// False when the analysis rests on a claim without a proof we accept (the paper's
    /// report-noisy-max calibration, [`RnmCalibration::Paper`]).
    pub proven: bool,
}

/// Noise actually used by a fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseUsed {
    /// Update noise scale over its sensitivity `2 C_j / n` (Laplace scale / Delta for the
    /// Laplace variant, sigma / Delta for the zCDP variant; 0 without noise).
    pub update_multiplier: f64,
    /// Selection noise scale over the score sensitivity `Delta_u` (Laplace or Gumbel
    /// scale; 0 without noise).
    pub selection_multiplier: f64,
    /// Score sensitivity `Delta_u = 2 C / (n sqrt(tr M))`.
    pub score_sensitivity: f64,
    /// Per-step pure epsilon `eps'` (Laplace variant).
    pub step_epsilon: Option<f64>,
    /// zCDP split (zCDP variant).
    pub zcdp: Option<ZcdpSplit>,
}

/// Diagnostics computed from the private data **without privacy**: for plots and
/// debugging only, never to be released as part of a private output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NonPrivateDiagnostics {
    /// Exact objective `F(w^t)` for `t = 0..=T` (empty unless requested).
    pub objective_trajectory: Vec<f64>,
}

/// The result of a DP-GCD fit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DpGcdReport {
    /// `dp-gcd`, `dp-gcd-zcdp`, or `greedy-cd (noise off: not private)`.
    pub algorithm: String,
    /// The selection rule.
    pub rule: SelectionRule,
    /// The last iterate `w^T`.
    pub coefficients: Vec<f64>,
    /// Iterations run (`T`).
    pub iterations: u64,
    /// The coordinate selected at each iteration (a private output).
    pub selected: Vec<usize>,
    /// Step multiplier `gamma`.
    pub step: f64,
    /// Clipping threshold `C`.
    pub clip: f64,
    /// Update noise multiplier (as [`NoiseUsed::update_multiplier`]).
    pub noise_multiplier: f64,
    /// The noise used.
    pub noise: NoiseUsed,
    /// The guarantee under the variant's own accountant (`None` without noise).
    pub guarantee: Guarantee,
    /// The same run under other valid analyses (e.g. the Laplace variant in zCDP).
    pub other_guarantees: Vec<Guarantee>,
    /// Every mechanism invocation, run-length encoded.
    pub ledger: Ledger,
    /// Where the smoothness constants came from.
    pub smoothness_provenance: Provenance,
    /// The seed, when fitted with [`DpGcdPlan::fit_seeded`].
    pub seed: Option<u64>,
    /// Non-private diagnostics.
    pub diagnostics: NonPrivateDiagnostics,
}

/// The exact objective `(1/n) sum_i loss(z_i, y_i) + (ridge/2)||w||^2 + psi(w)` from the
/// predictor `z = X w`.
pub fn objective_value<L: Loss + ?Sized, P: Penalty + ?Sized>(
    loss: &L,
    penalty: &P,
    ridge: f64,
    y: &[f64],
    z: &[f64],
    w: &[f64],
) -> f64 {
    let fit: f64 = z
        .iter()
        .zip(y)
        .map(|(&zi, &yi)| loss.value(zi, yi))
        .sum::<f64>()
        / y.len() as f64;
    let r = if ridge > 0.0 {
        0.5 * ridge * w.iter().map(|v| v * v).sum::<f64>()
    } else {
        0.0
    };
    fit + r + penalty.value(w)
}

impl<L: Loss, P: Penalty> DpGcdPlan<L, P> {
    /// The calibration of this plan.
    pub fn calibration(&self) -> Calibration {
        self.calibration
    }

    /// Fits with a ChaCha20 generator seeded by `seed` (recorded in the report):
    /// bit-for-bit reproducible.
    pub fn fit_seeded<D: Design>(&self, data: &Dataset<D>, seed: u64) -> Result<DpGcdReport> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut report = self.fit(data, &mut rng)?;
        report.seed = Some(seed);
        Ok(report)
    }

    /// Runs DP-GCD on `data`, drawing all noise from `rng`.
    ///
    /// Errors on labels unfit for the loss, a penalty of the wrong dimension, smoothness
    /// constants of the wrong length or not > 0 (an all-zero column without ridge),
    /// non-private constants without opt-in, and divergence (a non-finite iterate, e.g.
    /// from a too-large step).
    ///
    /// # Privacy
    ///
    /// Replace-one neighbouring datasets. Preconditions: the loss is smooth, the
    /// smoothness constants `M_j` and the clipping threshold `C` are public (or their
    /// provenance is accepted explicitly). Each iteration accesses the data twice, through
    /// the selection and the update below; everything else is post-processing of their
    /// outputs and of `w` (itself a post-processing). The claim (the `guarantee` of the
    /// report) follows by composition over `T` iterations, see [`calibration`].
    pub fn fit<D: Design, R: Rng + ?Sized>(
        &self,
        data: &Dataset<D>,
        rng: &mut R,
    ) -> Result<DpGcdReport> {
        let prm = &self.params;
        let x = data.x();
        let y = data.y();
        let n = x.n_samples();
        let p = x.n_features();
        data.check_labels_for(&prm.loss)?;
        prm.penalty.check_dimension(p)?;
        // GS-q's score is only Lipschitz in floating point through the penalty's
        // cancellation-free closed form (rules.rs, docs/privacy/dp-gcd.md); the naive
        // evaluation's rounding near d_j = 0 exceeds the score sensitivity.
        if prm.noise
            && prm.rule == SelectionRule::GsQ
            && p > 0
            && prm
                .penalty
                .quadratic_decrease_root(0, 0.0, 0.0, 1.0, 1.0)
                .is_none()
        {
            return Err(DpGcdError::Unsupported(format!(
                "private GS-q with the '{}' penalty: it provides no cancellation-free \
                 closed form of the GS-q score (Penalty::quadratic_decrease_root), and the \
                 naive score sqrt(2 d) loses its Lipschitz bound to floating-point \
                 cancellation near d = 0, breaking the selection's sensitivity; use GS-r, \
                 GS-s or GS-L, or the non-private twin",
                prm.penalty.name()
            )));
        }

        // Smoothness constants and their provenance.
        let tagged = match &prm.smoothness {
            Some(m) => m.clone(),
            None => coordinate_smoothness(&prm.loss, x)?,
        };
        let provenance = tagged.provenance;
        let m_data = if prm.noise {
            tagged.require_private(prm.allow_non_private_constants)?
        } else {
            tagged.value
        };
        if m_data.len() != p {
            return Err(DpGcdError::Unsupported(format!(
                "{} smoothness constants given for a design with {p} features",
                m_data.len()
            )));
        }
        let m: Vec<f64> = m_data.iter().map(|&v| v + prm.ridge).collect();
        if let Some(j) = m.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(DpGcdError::Unsupported(format!(
                "coordinate smoothness M_{j} = {} must be finite and > 0 (an all-zero column \
                 without ridge: drop the column or add a ridge term)",
                m[j]
            )));
        }
        let sqrt_m: Vec<f64> = m.iter().map(|v| v.sqrt()).collect();
        let trace: f64 = m.iter().sum();
        let inv_n = 1.0 / n as f64;
        // C_j = C sqrt(M_j / tr M); sensitivities Delta_j = 2 C_j / n (replace-one).
        let clip_j: Vec<f64> = sqrt_m.iter().map(|s| prm.clip * s / trace.sqrt()).collect();
        let score_sensitivity = 2.0 * prm.clip * inv_n / trace.sqrt();

        let mut ledger = Ledger::new();
        let t_iter = prm.iterations;
        // Per-iteration mechanisms (data-independent scales up to Delta_j).
        let (selection_noise, update_multiplier, selection_multiplier) = match self.calibration {
            Calibration::Off => (SelectionNoise::Off, 0.0, 0.0),
            Calibration::Laplace { step_epsilon } => {
                ledger.charge(Charge::PureDp {
                    epsilon: step_epsilon,
                    count: t_iter,
                    label: "dp-gcd selection (Laplace report-noisy-max)".into(),
                })?;
                ledger.charge(Charge::PureDp {
                    epsilon: step_epsilon,
                    count: t_iter,
                    label: "dp-gcd update (Laplace mechanism)".into(),
                })?;
                match prm.rnm {
                    RnmCalibration::Conservative => {
                        let mult = 2.0 / step_epsilon;
                        // Laplace(2 Delta_u / eps') on each score: rnm_epsilon(Delta_u, b,
                        // monotone = false) = eps'.
                        let scale = Laplace::new(mult * score_sensitivity)?.scale();
                        (
                            SelectionNoise::LaplaceOnScore { scale },
                            1.0 / step_epsilon,
                            mult,
                        )
                    }
                    RnmCalibration::Paper => (
                        // chi_j ~ Lap(lambda'_j), lambda'_j = Delta_j / eps' = (2 / (n eps')) C_j.
                        SelectionNoise::LaplaceInside {
                            factor: 2.0 * inv_n / step_epsilon,
                        },
                        1.0 / step_epsilon,
                        1.0 / step_epsilon,
                    ),
                }
            }
            Calibration::Zcdp(split) => {
                // Exponential mechanism: eps0-DP and eps0-bounded-range with
                // eps0 = 2 Delta_u / beta; Gaussian: rho = 1 / (2 z^2).
                let mult = 2.0 / split.selection_epsilon;
                let z = 1.0 / (2.0 * split.rho_update).sqrt();
                ledger.charge(Charge::ExponentialMechanism {
                    epsilon: split.selection_epsilon,
                    count: t_iter,
                })?;
                ledger.charge(Charge::Gaussian {
                    noise_multiplier: z,
                    count: t_iter,
                })?;
                let scale =
                    ReportNoisyMax::new(RnmNoise::Gumbel, mult * score_sensitivity)?.scale();
                (SelectionNoise::GumbelOnScore { scale }, z, mult)
            }
        };

        // Buffers: allocated once.
        let mut w = vec![0.0; p];
        let mut z = vec![0.0; n];
        let mut deriv = vec![0.0; n];
        let mut grad = vec![0.0; p];
        let mut scores = vec![0.0; p];
        let mut selected = Vec::with_capacity(t_iter as usize);
        let mut trajectory = Vec::new();
        if prm.record_trajectory {
            trajectory.push(objective_value(
                &prm.loss,
                &prm.penalty,
                prm.ridge,
                y,
                &z,
                &w,
            ));
        }
        let clip_off = !prm.clip.is_finite();
        let ctx = gradient::Ctx {
            x,
            penalty: &prm.penalty,
            rule: prm.rule,
            ridge: prm.ridge,
            inv_n,
            m: &m,
            sqrt_m: &sqrt_m,
            clip: if clip_off { None } else { Some(&clip_j) },
        };

        for t in 0..t_iter {
            for ((d, &zi), &yi) in deriv.iter_mut().zip(&z).zip(y) {
                *d = prm.loss.derivative(zi, yi);
            }
            // --- Selection -------------------------------------------------------------
            // # Privacy
            // Conservative / zCDP: the scores u_j = phi_j(g_j) are 1/sqrt(M_j)-Lipschitz
            // functions of the clipped gradient g_j (sensitivity Delta_j = 2 C_j / n),
            // so each moves by at most Delta_u = 2 C / (n sqrt(tr M)) (rules.rs).
            // Report-noisy-max with Laplace scale 2 Delta_u / eps' is eps'-DP for
            // non-monotone scores (Dwork & Roth 2014, Claim 3.9); with Gumbel scale
            // beta = 2 Delta_u / eps0 it is the exponential mechanism, eps0-DP and
            // eps0-bounded-range, i.e. eps0^2/8-zCDP (Cesar & Rogers 2021, Thm 3.3).
            // Only the index is released.
            // Paper: chi_j ~ Lap(Delta_j / eps') inside the score, as Algorithm 1 line 3;
            // the paper's eps'-DP claim is reproduced, not proven (docs/privacy/dp-gcd.md).
            let mut seed = [0u8; 32];
            if !matches!(selection_noise, SelectionNoise::Off) {
                rng.fill_bytes(&mut seed);
            }
            let j = gradient::pass(
                &ctx,
                &deriv,
                &w,
                selection_noise,
                seed,
                &mut grad,
                &mut scores,
            );
            if scores.iter().any(|s| s.is_nan()) {
                return Err(diverged(t));
            }
            // --- Update ------------------------------------------------------------------
            // # Privacy
            // The clipped coordinate gradient g_j (ridge term excluded: data-independent)
            // has sensitivity Delta_j = 2 C_j / n under replace-one. Fresh Laplace noise
            // of scale Delta_j / eps' makes its release eps'-DP (Dwork & Roth 2014,
            // Thm 3.6); fresh Gaussian noise of std z Delta_j makes it 1/(2 z^2)-zCDP
            // (Bun & Steinke 2016, Prop. 1.6). The prox step is post-processing.
            let delta_j = 2.0 * clip_j[j] * inv_n;
            let noisy = match self.calibration {
                Calibration::Off => grad[j],
                Calibration::Laplace { .. } => {
                    grad[j] + Laplace::new(update_multiplier * delta_j)?.sample(rng)
                }
                Calibration::Zcdp(_) => {
                    grad[j] + Gaussian::new(update_multiplier * delta_j)?.sample(rng)
                }
            };
            let gamma_j = prm.step / m[j];
            let new_wj = prm.penalty.prox_1d(j, w[j] - gamma_j * noisy, gamma_j);
            if !new_wj.is_finite() {
                return Err(diverged(t));
            }
            let step = new_wj - w[j];
            if step != 0.0 {
                x.col_axpy(j, step, &mut z);
            }
            w[j] = new_wj;
            selected.push(j);
            if prm.record_trajectory {
                trajectory.push(objective_value(
                    &prm.loss,
                    &prm.penalty,
                    prm.ridge,
                    y,
                    &z,
                    &w,
                ));
            }
        }

        let (guarantee, other_guarantees) = self.guarantees()?;
        Ok(DpGcdReport {
            algorithm: match self.calibration {
                Calibration::Off => "greedy-cd (noise off: not private)".to_string(),
                _ => prm.variant.name().to_string(),
            },
            rule: prm.rule,
            coefficients: w,
            iterations: t_iter,
            selected,
            step: prm.step,
            clip: prm.clip,
            noise_multiplier: update_multiplier,
            noise: NoiseUsed {
                update_multiplier,
                selection_multiplier,
                score_sensitivity,
                step_epsilon: match self.calibration {
                    Calibration::Laplace { step_epsilon } => Some(step_epsilon),
                    _ => None,
                },
                zcdp: match self.calibration {
                    Calibration::Zcdp(s) => Some(s),
                    _ => None,
                },
            },
            guarantee,
            other_guarantees,
            ledger,
            smoothness_provenance: provenance,
            seed: None,
            diagnostics: NonPrivateDiagnostics {
                objective_trajectory: trajectory,
            },
        })
    }

    /// The guarantee of this plan under its own accountant, and under the other
    /// analyses that apply. Data-independent.
    pub fn guarantees(&self) -> Result<(Guarantee, Vec<Guarantee>)> {
        let prm = &self.params;
        let t = prm.iterations;
        match self.calibration {
            Calibration::Off => Ok((
                Guarantee {
                    accountant: "none (noise off: not private)".into(),
                    epsilon: f64::INFINITY,
                    delta: 1.0,
                    rho: None,
                    proven: false,
                },
                Vec::new(),
            )),
            Calibration::Laplace { step_epsilon } => {
                let proven = prm.rnm == RnmCalibration::Conservative;
                let k = 2 * t;
                let (eps_adv, del_adv) = dp_accounting::composition::advanced_composition(
                    step_epsilon,
                    0.0,
                    k,
                    prm.delta,
                )?;
                let main = Guarantee {
                    accountant: format!(
                        "advanced composition of 2T = {k} pure eps' = {step_epsilon:.6e} steps (paper eq. 2)"
                    ),
                    epsilon: eps_adv,
                    delta: del_adv,
                    rho: None,
                    proven,
                };
                let mut others = Vec::new();
                // zCDP view: each eps'-DP step is eps'^2/2-zCDP (Bun & Steinke 2016, Prop. 1.4).
                let rho = dp_accounting::zcdp::pure_dp_rho(step_epsilon)? * k as f64;
                let eps_z = epsilon_from_rho(rho, Delta::new(prm.delta)?, ZcdpConversion::Cks20)?;
                others.push(Guarantee {
                    accountant: "zCDP (pure eps' -> eps'^2/2 per step), CKS20 conversion".into(),
                    epsilon: eps_z,
                    delta: prm.delta,
                    rho: Some(rho),
                    proven,
                });
                let basic = dp_accounting::composition::composed_epsilon(
                    step_epsilon,
                    k,
                    Delta::new(prm.delta)?,
                    dp_accounting::composition::CompositionMethod::Basic,
                )?;
                others.push(Guarantee {
                    accountant: "basic composition".into(),
                    epsilon: basic,
                    delta: 0.0,
                    rho: None,
                    proven,
                });
                if !proven && prm.rule == SelectionRule::GsL {
                    // The paper's GS-L selection (noise inside |.|, factor 1) is provably
                    // 2 eps'-DP (docs/privacy/dp-gcd.md); with the eps'-DP update, in zCDP.
                    let rho = t as f64
                        * (dp_accounting::zcdp::pure_dp_rho(2.0 * step_epsilon)?
                            + dp_accounting::zcdp::pure_dp_rho(step_epsilon)?);
                    let eps = epsilon_from_rho(rho, Delta::new(prm.delta)?, ZcdpConversion::Cks20)?;
                    others.push(Guarantee {
                        accountant: "proven bound for the paper's calibration: selection 2 eps', update eps', zCDP".into(),
                        epsilon: eps,
                        delta: prm.delta,
                        rho: Some(rho),
                        proven: true,
                    });
                }
                Ok((main, others))
            }
            Calibration::Zcdp(split) => {
                let rho = t as f64 * (split.rho_selection + split.rho_update);
                let eps = epsilon_from_rho(rho, Delta::new(prm.delta)?, ZcdpConversion::Cks20)?;
                let main = Guarantee {
                    accountant: "zCDP (exponential mechanism eps0^2/8 + Gaussian 1/(2z^2) per iteration), CKS20 conversion".into(),
                    epsilon: eps,
                    delta: prm.delta,
                    rho: Some(rho),
                    proven: true,
                };
                let eps_bs =
                    epsilon_from_rho(rho, Delta::new(prm.delta)?, ZcdpConversion::BunSteinke)?;
                let others = vec![Guarantee {
                    accountant: "zCDP, Bun-Steinke conversion rho + 2 sqrt(rho ln(1/delta))".into(),
                    epsilon: eps_bs,
                    delta: prm.delta,
                    rho: Some(rho),
                    proven: true,
                }];
                Ok((main, others))
            }
        }
    }
}

fn diverged(t: u64) -> DpGcdError {
    DpGcdError::InvalidParameter {
        name: "step",
        value: t as f64,
        expected: "the iterates diverged (non-finite value at the iteration given as value); \
                   lower the step multiplier gamma",
    }
}

/// Index of the largest score, lowest index on ties (spec G21). NaN never wins.
pub(crate) fn argmax(scores: &[f64]) -> usize {
    let mut best = 0;
    let mut best_val = f64::NEG_INFINITY;
    for (j, &s) in scores.iter().enumerate() {
        if s > best_val {
            best_val = s;
            best = j;
        }
    }
    best
}

#[cfg(test)]
mod tests;
