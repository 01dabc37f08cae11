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
//! ```
//! use dp_models::{Dataset, DenseDesign, L1, Squared};
//! use dp_models::constants::Tagged;
//! use dp_optim::dp_gcd::{DpGcdParams, SelectionRule};
//! use dp_optim::Solver;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let x = DenseDesign::from_row_major(3, 2, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0])?;
//! let data = Dataset::new(x, vec![1.0, -1.0, 0.5])?;
//! let solver = DpGcdParams::new(Squared::half(), L1::new(0.1)?)
//!     .epsilon(1.0)
//!     .delta(1e-6)
//!     .passes(5)
//!     .step_scale(0.5)
//!     .clip(1.0)
//!     .rule(SelectionRule::GsR)
//!     // |x_ij| <= 1 is public: M_j <= 1 for the 1/2-scaled squared loss.
//!     .smoothness(Tagged::public(vec![1.0, 1.0]))
//!     .build()?;
//! let fit = solver.fit(&data)?; // randomness from the OS: nothing secret to keep
//! println!("{:?} at eps = {}", fit.model.coefficients, fit.guarantee().unwrap().epsilon);
//! # Ok(())
//! # }
//! ```

pub mod calibration;
mod gradient;
pub mod rules;
pub mod twin;

pub use calibration::{LaplaceComposition, ZcdpSplit};
pub use rules::SelectionRule;
pub use twin::greedy_cd;

use crate::constants::{resolve_private_any, zcdp_smoothness_multiplier, Smoothness};
use crate::driver::{Charged, Declared, Model, PrivateFit, Proof, Report};
use crate::error::{invalid, OptimError, Result};
use crate::model::{Diagnostics, FitWarning, Fitted};
use crate::plan::{DpGcdPlan, SolverPlan};
use crate::privacy::{
    charge_pre_spent, guarantee_of, pre_spent_epsilon, privacy_setters, remaining_epsilon,
    Adjacency, CheckedPrivacy, Guarantee, PrivacyParams,
};
use crate::solver::Solver;
use calibration::{laplace_step_epsilon, next_down, zcdp_split_reserving};
use dp_accounting::calibrate::{shrink_to_target, Accountant, RdpConversion};
use dp_accounting::composition::CompositionMethod;
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::{LaplaceFamily, ReportNoisyMax};
use dp_accounting::{AccountingError, Epsilon};
use dp_models::constants::coordinate_smoothness;
use dp_models::{Dataset, Design, Loss, Penalty};
use gradient::SelectionNoise;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

mod budget;
mod params;

use budget::{budget_accountant, update_noise_multiplier, GcdBudget};
pub use params::{DpGcdParams, RnmCalibration, Variant};

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

/// DP-GCD with checked parameters and calibrated noise (see [`DpGcdParams`]).
#[derive(Debug, Clone)]
pub struct DpGcd<L, P> {
    params: DpGcdParams<L, P>,
    privacy: CheckedPrivacy,
    budget: GcdBudget,
}

/// The report-noisy-max of the charged selection release, over scores of per-score
/// sensitivity `score_sensitivity` (scale `2 Delta_u / eps'`).
fn selection_rnm(releases: &Option<Drawn>, score_sensitivity: f64) -> Result<ReportNoisyMax> {
    match releases {
        Some(r) => Ok(r.selection.report_noisy_max(score_sensitivity)?),
        None => Err(OptimError::Unsupported(
            "internal: DP-GCD's selection has no charged release".into(),
        )),
    }
}

/// The charged releases of a fit's iterations, in the order they were declared to the
/// driver: what the loop's samplers are built from.
struct Drawn<'r> {
    selection: &'r Charge,
    update: &'r Charge,
    support: Option<&'r Charge>,
}

impl<'r> Drawn<'r> {
    fn of(fit: &'r Charged<'_>) -> Result<Self> {
        Ok(Drawn {
            selection: fit.release(0)?,
            update: fit.release(1)?,
            support: fit.release(2).ok(),
        })
    }
}

/// The Laplace family of the charged selection release (the paper's noise inside the
/// score), for sensitivities `unit * C_j`.
fn selection_laplace(releases: &Option<Drawn>, unit: f64) -> Result<LaplaceFamily> {
    match releases {
        Some(r) => Ok(r.selection.laplace_family(unit)?),
        None => Err(OptimError::Unsupported(
            "internal: DP-GCD's selection has no charged release".into(),
        )),
    }
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
    let r = if ridge > 0.0 {
        0.5 * ridge * w.iter().map(|v| v * v).sum::<f64>()
    } else {
        0.0
    };
    crate::kernel::objective_from_predictor(loss, penalty, w, z, y) + r
}

/// DP-GCD's smoothness constants as a fit uses them (`DpGcd::constants`).
struct Constants {
    /// `M_j` (plus the ridge).
    m: Vec<f64>,
    sqrt_m: Vec<f64>,
    /// `C_j = C sqrt(M_j / tr M)`.
    clip_j: Vec<f64>,
    /// `Delta_u = 2 C / (n sqrt(tr M))`, the scores' sensitivity.
    score_sensitivity: f64,
    provenance: dp_models::constants::Provenance,
    uses_non_private: bool,
    /// Estimates floored and ceiled by a private estimate.
    adjusted: Option<(usize, usize)>,
}

impl<L, P> DpGcd<L, P> {
    /// Name used in reports.
    pub fn name(&self) -> &'static str {
        match self.budget.calibration {
            Calibration::Off => "greedy-cd",
            _ => self.params.variant.name(),
        }
    }
}

impl<D: Design, L: Loss, P: Penalty> Solver<D> for DpGcd<L, P> {
    /// Runs DP-GCD on `data`.
    ///
    /// Errors on labels unfit for the loss, a penalty of the wrong dimension, smoothness
    /// constants of the wrong length or not > 0 (an all-zero column without ridge),
    /// non-private constants without opt-in, and divergence (a non-finite iterate, e.g.
    /// from a too-large step).
    ///
    /// # Privacy
    ///
    /// Replace-one neighbouring datasets (`n` public). Preconditions: the loss is
    /// smooth, the smoothness constants `M_j` and the clipping threshold `C` are public
    /// (or privately estimated and charged, or their provenance is accepted explicitly).
    /// Each iteration accesses the data twice, through the selection and the update
    /// below; everything else is post-processing of their outputs and of `w` (itself a
    /// post-processing). The claim (the model's guarantee) follows by composition over
    /// `T` iterations, see [`calibration`], plus the constants' pure epsilon by basic
    /// composition.
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        self.fit_inner(data, rng)
    }
}

impl<L: Loss, P: Penalty> DpGcd<L, P> {
    /// The calibration of this solver.
    pub fn calibration(&self) -> Calibration {
        self.budget.calibration
    }

    fn fit_inner<D: Design, R: Rng + ?Sized>(
        &self,
        data: &Dataset<D>,
        rng: &mut R,
    ) -> Result<Fitted> {
        let mut fit = PrivateFit::begin(&self.privacy, Adjacency::ReplaceOne);
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
            return Err(OptimError::Unsupported(format!(
                "private GS-q with the '{}' penalty: it provides no cancellation-free \
                 closed form of the GS-q score (Penalty::quadratic_decrease_root), and the \
                 naive score sqrt(2 d) loses its Lipschitz bound to floating-point \
                 cancellation near d = 0, breaking the selection's sensitivity; use GS-r, \
                 GS-s or GS-L, or the non-private twin",
                prm.penalty.name()
            )));
        }

        let (c, fit_budget) = self.constants(&mut fit, x, rng)?;
        let budget = fit_budget.as_ref().unwrap_or(&self.budget);
        let inv_n = 1.0 / n as f64;

        // Everything is charged before the first draw: the ledger the calibration was
        // checked against (`GcdBudget::fit_to_ledger`), the constants' charges followed
        // by the iterations' releases. Noise off: nothing is charged.
        let fit = match budget.releases(prm) {
            Some(r) => {
                if fit.ledger() != &budget.prior {
                    return Err(OptimError::Unsupported(
                        "internal: DP-GCD's constants charged other than its calibration \
                         planned"
                            .into(),
                    ));
                }
                let mut releases = vec![r.selection, r.update];
                releases.extend(r.support);
                Ok(fit.charge(Declared {
                    releases,
                    calibrated: None,
                    accountant: budget_accountant(prm),
                    proof: if self.proven() {
                        Proof::Proven
                    } else {
                        Proof::Unproven
                    },
                })?)
            }
            None => Err(fit),
        };
        // The samplers are the charged releases' own.
        let releases = match &fit {
            Ok(charged) => Some(Drawn::of(charged)?),
            Err(_) => None,
        };
        let t_iter = prm.iterations;
        // Per-iteration mechanisms (data-independent scales up to Delta_j).
        let (selection_noise, update_multiplier, selection_multiplier) =
            self.mechanisms(budget.calibration, &releases, c.score_sensitivity, inv_n)?;

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
            m: &c.m,
            sqrt_m: &c.sqrt_m,
            clip: if clip_off { None } else { Some(&c.clip_j) },
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
            let delta_j = 2.0 * c.clip_j[j] * inv_n;
            let noisy = match (&budget.calibration, &releases) {
                (Calibration::Laplace { .. }, Some(r)) => {
                    grad[j] + r.update.laplace(delta_j)?.sample(rng)
                }
                (Calibration::Zcdp(_), Some(r)) => {
                    grad[j] + r.update.gaussian(delta_j)?.sample(rng)
                }
                _ => grad[j],
            };
            let gamma_j = prm.step / c.m[j];
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

        // --- Support test (optional) -------------------------------------------------
        // # Privacy
        // See [`DpGcdParams::support_test`]: S = supp(w) is public (post-processing of the
        // released iterate); (g_j / Delta_j)_{j in S} has L2 sensitivity sqrt(|S|) under
        // replace-one, so Gaussian noise of std sqrt(|S|) Delta_j / sqrt(2 rho_test) on
        // each g_j is rho_test-zCDP (Bun & Steinke 2016, Prop. 1.6), charged above as one
        // Gaussian release of multiplier 1 / sqrt(2 rho_test). Zeroing is post-processing.
        let mut support_dropped = 0usize;
        if prm.support_test.is_some() {
            let test_multiplier = match (budget.calibration, budget.support_rho) {
                (Calibration::Off, _) => Some(0.0),
                (_, Some(rho)) => Some(1.0 / (2.0 * rho).sqrt()),
                _ => None,
            };
            let support = w.iter().filter(|v| **v != 0.0).count();
            if let (Some(mult), true) = (test_multiplier, support > 0) {
                for ((d, &zi), &yi) in deriv.iter_mut().zip(&z).zip(y) {
                    *d = prm.loss.derivative(zi, yi);
                }
                gradient::pass(
                    &ctx,
                    &deriv,
                    &w,
                    SelectionNoise::Off,
                    [0u8; 32],
                    &mut grad,
                    &mut scores,
                );
                let spread = (support as f64).sqrt();
                // The support test's release (charged with the iterations) on the vector
                // (g_j / Delta_j) of L2 sensitivity sqrt(|S|), rescaled by Delta_j.
                let test = match releases.as_ref().and_then(|r| r.support) {
                    Some(release) if mult > 0.0 => Some(release.gaussian(spread)?),
                    None if mult > 0.0 => {
                        return Err(OptimError::Unsupported(
                            "internal: DP-GCD's support test has no charged release".into(),
                        ))
                    }
                    _ => None,
                };
                for j in 0..p {
                    if w[j] == 0.0 {
                        continue;
                    }
                    let delta_j = 2.0 * c.clip_j[j] * inv_n;
                    let noisy = match test {
                        Some(g) => grad[j] + g.scaled(delta_j)?.sample(rng),
                        None => grad[j],
                    };
                    let inv_m = 1.0 / c.m[j];
                    let keep = prm.penalty.prox_1d(j, w[j] - inv_m * noisy, inv_m);
                    if keep.is_nan() {
                        return Err(diverged(t_iter));
                    }
                    if keep == 0.0 {
                        x.col_axpy(j, -w[j], &mut z);
                        w[j] = 0.0;
                        support_dropped += 1;
                    }
                }
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
        }

        let model = Model {
            algorithm: self.name().to_string(),
            coefficients: w,
            iterations: t_iter,
            diagnostics: Diagnostics {
                objective_trajectory: trajectory,
                selected,
                warnings: match c.adjusted {
                    Some((floored, _)) if floored > 0 => {
                        vec![FitWarning::SmoothnessFloored { floored, of: p }]
                    }
                    _ => Vec::new(),
                },
                ..Diagnostics::default()
            },
        };
        let objective = |w: &[f64]| objective_value(&prm.loss, &prm.penalty, prm.ridge, y, &z, w);
        let hint = "lower the step scale";
        let fit = match fit {
            Ok(fit) => fit,
            Err(off) => return off.finish_not_private("DP-GCD", hint, model, objective),
        };
        let report = self.report(
            n,
            budget,
            c,
            (update_multiplier, selection_multiplier),
            support_dropped,
        )?;
        fit.finish("DP-GCD", hint, model, report, objective)
    }

    /// DP-GCD's smoothness constants and what follows from them (step sizes, clipping
    /// thresholds, the score sensitivity), with the iterations' calibration on what a
    /// private estimate actually cost (`None`: the build's). A private estimate is drawn
    /// and charged to `fit` here, before the iterations' releases.
    fn constants<D: Design, R: Rng + ?Sized>(
        &self,
        fit: &mut PrivateFit<'_>,
        x: &D,
        rng: &mut R,
    ) -> Result<(Constants, Option<GcdBudget>)> {
        let prm = &self.params;
        let (n, p) = (x.n_samples(), x.n_features());
        // Smoothness constants and their provenance. A private estimate is drawn (and
        // charged) first, and the iterations are calibrated on what it actually cost.
        let mut fit_budget = None;
        let mut bounds_non_private = false;
        let mut adjusted = None;
        let tagged = match &prm.smoothness {
            Smoothness::Given(m) => {
                // What the given constants cost, charged as the build's plan did.
                if prm.noise {
                    charge_pre_spent(
                        fit.ledger_mut(),
                        pre_spent_epsilon(&m.provenance),
                        "smoothness constants",
                    )?;
                }
                m.clone()
            }
            Smoothness::Private { .. }
            | Smoothness::PrivateBounded { .. }
            | Smoothness::PrivateGaussian { .. }
                if prm.noise =>
            {
                let mut seed = [0u8; 32];
                rng.fill_bytes(&mut seed);
                let mut constants_rng = ChaCha20Rng::from_seed(seed);
                // The Gaussian release (if any) is charged at its share of the zCDP
                // budget; `calibrate` gives the iterations what is left.
                let resolved = resolve_private_any(
                    &prm.smoothness,
                    &prm.loss,
                    x,
                    &self.privacy,
                    dp_models::constants::Neighbours::ReplaceOne,
                    &mut constants_rng,
                    fit.ledger_mut(),
                    &|f| zcdp_smoothness_multiplier(&self.privacy, f),
                )?;
                let spent = resolved.spent.unwrap_or(0.0);
                bounds_non_private = resolved.uses_non_private;
                adjusted = resolved.adjusted;
                fit_budget = Some(GcdBudget::calibrate(
                    prm,
                    &self.privacy,
                    fit.ledger().clone(),
                    spent,
                )?);
                resolved.tagged
            }
            _ => coordinate_smoothness(&prm.loss, x)?,
        };
        let provenance = tagged.provenance;
        let uses_non_private = !tagged.is_private() || bounds_non_private;
        let m_data = if prm.noise {
            tagged.require_private(self.privacy.allow_non_private_constants)?
        } else {
            tagged.value
        };
        if m_data.len() != p {
            return Err(OptimError::Shape(format!(
                "{} smoothness constants given for a design with {p} features",
                m_data.len()
            )));
        }
        let m: Vec<f64> = m_data.iter().map(|&v| v + prm.ridge).collect();
        if let Some(j) = m.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(OptimError::Unsupported(format!(
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
        Ok((
            Constants {
                m,
                sqrt_m,
                clip_j,
                score_sensitivity,
                provenance,
                uses_non_private,
                adjusted,
            },
            fit_budget,
        ))
    }

    /// The per-iteration mechanisms (data-independent scales up to `Delta_j`), from the
    /// charged releases' samplers: the selection's noise, and the update's and the
    /// selection's noise multipliers as the plan reports them.
    fn mechanisms(
        &self,
        calibration: Calibration,
        releases: &Option<Drawn>,
        score_sensitivity: f64,
        inv_n: f64,
    ) -> Result<(SelectionNoise, f64, f64)> {
        let prm = &self.params;
        Ok(match calibration {
            Calibration::Off => (SelectionNoise::Off, 0.0, 0.0),
            Calibration::Laplace { step_epsilon } => {
                match prm.rnm {
                    RnmCalibration::Conservative => {
                        let mult = 2.0 / step_epsilon;
                        // Laplace(2 Delta_u / eps') on each score: rnm_epsilon(Delta_u, b,
                        // monotone = false) = eps'.
                        (
                            SelectionNoise::OnScore(selection_rnm(releases, score_sensitivity)?),
                            1.0 / step_epsilon,
                            mult,
                        )
                    }
                    RnmCalibration::Paper => (
                        // chi_j ~ Lap(lambda'_j), lambda'_j = Delta_j / eps' = (2 / (n eps')) C_j:
                        // the charged selection release's Laplace at sensitivity (2 / n) C_j.
                        SelectionNoise::LaplaceInside(selection_laplace(releases, 2.0 * inv_n)?),
                        1.0 / step_epsilon,
                        1.0 / step_epsilon,
                    ),
                }
            }
            Calibration::Zcdp(split) => {
                // Exponential mechanism: eps0-DP and eps0-bounded-range with
                // eps0 = 2 Delta_u / beta; Gaussian: rho = 1 / (2 z^2).
                let mult = 2.0 / split.selection_epsilon;
                let z = update_noise_multiplier(&split);
                (
                    SelectionNoise::OnScore(selection_rnm(releases, score_sensitivity)?),
                    z,
                    mult,
                )
            }
        })
    }

    /// The fit's report: the plan with its constants and multipliers.
    fn report(
        &self,
        n: usize,
        budget: &GcdBudget,
        c: Constants,
        (update_multiplier, selection_multiplier): (f64, f64),
        support_dropped: usize,
    ) -> Result<Report> {
        let prm = &self.params;
        let (rho_selection, rho_update) = match budget.calibration {
            Calibration::Zcdp(s) => (Some(s.rho_selection), Some(s.rho_update)),
            _ => (None, None),
        };
        Ok(Report {
            n_samples: n,
            plan: SolverPlan::DpGcd(DpGcdPlan {
                variant: match prm.variant {
                    Variant::Laplace => "laplace".into(),
                    Variant::Zcdp => "zcdp".into(),
                },
                rule: format!("{:?}", prm.rule),
                iterations: prm.iterations,
                step_scale: prm.step,
                clip: prm.clip,
                ridge: prm.ridge,
                epsilon: budget.epsilon,
                update_multiplier,
                selection_multiplier,
                score_sensitivity: c.score_sensitivity,
                step_epsilon: match budget.calibration {
                    Calibration::Laplace { step_epsilon } => Some(step_epsilon),
                    _ => None,
                },
                rho_selection,
                rho_update,
                rho_support_test: budget.support_rho,
                support_test_dropped: prm.support_test.map(|_| support_dropped),
                smoothness: c.m,
                smoothness_provenance: c.provenance,
                smoothness_floored: c.adjusted.map(|a| a.0),
                smoothness_ceiled: c.adjusted.map(|a| a.1),
            }),
            other_guarantees: self.other_guarantees(budget)?,
            uses_non_private_constants: c.uses_non_private,
        })
    }

    /// The guarantee of this solver: its planned ledger under the analysis the
    /// calibration used, and under the other accountants that apply. Data-independent.
    /// The first is never above the target.
    pub fn guarantees(&self) -> Result<(Guarantee, Vec<Guarantee>)> {
        self.guarantees_for(&self.budget)
    }

    fn guarantees_for(&self, budget: &GcdBudget) -> Result<(Guarantee, Vec<Guarantee>)> {
        let prm = &self.params;
        if budget.calibration == Calibration::Off {
            return Err(OptimError::Unsupported(
                "noise is off: the fit is not private and has no guarantee".into(),
            ));
        }
        let ledger = budget.planned_ledger(prm)?;
        let accountant = budget_accountant(prm);
        let main = guarantee_of(
            &ledger,
            ledger.guarantee(self.privacy.delta, accountant)?,
            &self.privacy,
            accountant,
            Adjacency::ReplaceOne,
            self.proven(),
            true,
        )?;
        Ok((main, self.other_guarantees(budget)?))
    }

    /// False for the paper's report-noisy-max calibration of the Laplace variant, whose
    /// `eps'`-DP claim this library reproduces without accepting its proof.
    fn proven(&self) -> bool {
        !(self.params.variant == Variant::Laplace && self.params.rnm == RnmCalibration::Paper)
    }

    /// The planned ledger of `budget` under the other accountants that apply (for
    /// comparison; not bounded by the target).
    fn other_guarantees(&self, budget: &GcdBudget) -> Result<Vec<Guarantee>> {
        let prm = &self.params;
        let delta = self.privacy.delta;
        if budget.calibration == Calibration::Off {
            return Ok(Vec::new());
        }
        let ledger = budget.planned_ledger(prm)?;
        let proven = self.proven();
        let mut others = Vec::new();
        let other_accountants: &[Accountant] = match prm.variant {
            Variant::Laplace => &[
                Accountant::Zcdp,
                Accountant::Composition(CompositionMethod::Basic),
            ],
            Variant::Zcdp => &[Accountant::Rdp(RdpConversion::Improved)],
        };
        for &acc in other_accountants {
            if let Ok(e) = ledger.guarantee(delta, acc) {
                others.push(guarantee_of(
                    &ledger,
                    e,
                    &self.privacy,
                    acc,
                    Adjacency::ReplaceOne,
                    proven,
                    false,
                )?);
            }
        }
        if !proven
            && matches!(budget.calibration, Calibration::Laplace { .. })
            && prm.rule == SelectionRule::GsL
        {
            // The paper's GS-L selection (noise inside |.|, factor 1) is provably
            // 2 eps'-DP (docs/privacy/dp-gcd.md): the same fit charged that way.
            let mut alt = Ledger::new();
            for c in budget.charges(prm)? {
                alt.charge(match c {
                    Charge::PureDp {
                        epsilon,
                        count,
                        label,
                    } if label.starts_with("dp-gcd selection") => Charge::PureDp {
                        epsilon: 2.0 * epsilon,
                        count,
                        label: format!("{label}, provably 2 eps'-DP"),
                    },
                    other => other,
                })?;
            }
            let e = alt.guarantee(delta, Accountant::Zcdp)?;
            others.push(guarantee_of(
                &alt,
                e,
                &self.privacy,
                Accountant::Zcdp,
                Adjacency::ReplaceOne,
                true,
                false,
            )?);
        }
        Ok(others)
    }
}

fn diverged(t: u64) -> OptimError {
    OptimError::Diverged(format!(
        "DP-GCD's iterate became non-finite at iteration {t}; lower the step scale gamma"
    ))
}

/// Index of the largest score, lowest index on ties (the paper leaves ties open; they have
/// probability zero with continuous noise, and this keeps seeded runs reproducible). NaN
/// never wins.
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
