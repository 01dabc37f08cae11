//! Private Frank-Wolfe over the l1 ball (Talwar, Thakurta & Zhang 2015, "Nearly optimal
//! private LASSO", Algorithm 2): Frank-Wolfe whose vertex is chosen privately among the
//! `2p` vertices `+-r e_j` by report-noisy-max on the scores `u_s = -<s, grad F(w)>`.
//! Its non-private twin is [`crate::fw::Fw`] with [`crate::fw::FwStep::Standard`] over
//! the same [`L1Ball`].
//!
//! `F(w) = (1/n) sum_i loss(x_i^T w, y_i)`, `w_0 = 0`, `T` iterations of
//! `w <- (1 - gamma_t) w + gamma_t s_t`, `gamma_t = 2 / (t + 2)`. The output is `w_T`.
//!
//! # Privacy
//!
//! Replace-one neighbours (`n` public). Preconditions (checked; a violation is a named
//! error, never a silent clip): `||x_i||_inf <= B` and `|y_i| <= Y` for public `B`, `Y`
//! ([`DpFwParams::feature_bound`], [`DpFwParams::label_bound`]); clip the data first with
//! `dp_models::preprocess` if needed.
//!
//! **Score sensitivity.** For `w` in the ball, `|z_i| = |x_i^T w| <= ||x_i||_inf ||w||_1
//! <= B r`, so `|phi'(z_i, y_i)| <= G := max_{z = +-B r, y = +-Y} |phi'(z, y)|` (for
//! the losses of `dp-models`, `phi'` is monotone in `z` and, for regression losses, a
//! monotone function of `z - y`, so the supremum over the box is at a corner;
//! classification labels are exactly `+-1`). The score of vertex `s = +-r e_j` is
//! `u_s(D) = -(1/n) sum_i <s, phi'(z_i, y_i) x_i>`; replacing record `i` by `i'` changes
//! one term, so `|u_s(D) - u_s(D')| <= (1/n) (|<s, g_i>| + |<s, g_i'>|)
//! <= 2 ||s||_1 ||g_i||_inf / n <= 2 r B G / n =: Delta`, with `g_i = phi'(z_i, y_i) x_i`.
//! `w` itself is a post-processing of the earlier selections, so this holds at every
//! step of the adaptive composition.
//!
//! **Selection.** Report-noisy-max over the `2p` scores with noise scale `2 Delta / eps0`:
//! Laplace noise is `eps0`-DP for non-monotone scores (Dwork & Roth 2014, Claim 3.9's
//! proof without monotonicity); Gumbel noise is the exponential mechanism, `eps0`-DP and
//! `eps0`-bounded-range, hence `eps0^2 / 8`-zCDP (Cesar & Rogers 2021). Only the index is
//! released.
//!
//! **Composition.** [`Accounting::Paper`]: Laplace selection,
//! `T` steps by advanced composition (Dwork & Roth 2014, Thm 3.20), Talwar et al.'s
//! analysis. [`Accounting::Exact`]: Gumbel selection in zCDP
//! (Bun & Steinke 2016). The per-step `eps0` is solved from the target, charged to the
//! ledger before the first draw, checked against the ledger's guarantee (and shrunk by
//! `1e-12` relative steps while above it), and the reported guarantee is the ledger's.

use crate::driver::{Declared, Model, PrivateFit, Proof, Report};
use crate::error::{invalid, OptimError, Result};
use crate::fw::{check_data, fw_update, standard_step};
use crate::fw_plan::{DpFwPlan, FwPlan};
use crate::model::{Diagnostics, Fitted};
use crate::plan::SolverPlan;
use crate::privacy::{privacy_setters, Accounting, Adjacency, CheckedPrivacy, PrivacyParams};
use crate::solver::{Solver, Streams, Switches};
use dp_accounting::calibrate::{shrink_to_target, Accountant};
use dp_accounting::composition::{per_step_epsilon, CompositionMethod};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::RnmNoise;
use dp_models::constraint::{average_loss, average_loss_gradient, ConstraintSet, L1Ball};
use dp_models::{Dataset, Design, Loss};
use rand::RngCore;

/// Builder of the central private Frank-Wolfe. Required: `epsilon`, `delta`, the
/// radius and the public bounds `feature_bound` and `label_bound`.
#[derive(Debug, Clone)]
pub struct DpFwParams<L> {
    loss: L,
    radius: f64,
    privacy: PrivacyParams,
    iterations: u64,
    feature_bound: Option<f64>,
    label_bound: Option<f64>,
    switches: Switches,
}

impl<L: Loss> DpFwParams<L> {
    /// Private Frank-Wolfe for `loss` over the l1 ball of `radius`; 100 iterations.
    pub fn new(loss: L, radius: f64) -> Self {
        Self {
            loss,
            radius,
            privacy: PrivacyParams::default(),
            iterations: 100,
            feature_bound: None,
            label_bound: None,
            switches: Switches::ON,
        }
    }
    privacy_setters!();
    /// Iterations `T >= 1` (fixed in advance: the noise depends on it).
    pub fn iterations(mut self, t: u64) -> Self {
        self.iterations = t;
        self
    }
    /// Public bound `B` on `||x_i||_inf` (checked at fit time).
    pub fn feature_bound(mut self, b: f64) -> Self {
        self.feature_bound = Some(b);
        self
    }
    /// Public bound `Y` on `|y_i|` (checked at fit time).
    pub fn label_bound(mut self, y: f64) -> Self {
        self.label_bound = Some(y);
        self
    }
    #[cfg(test)]
    pub(crate) fn switches(mut self, s: Switches) -> Self {
        self.switches = s;
        self
    }

    /// Checks the parameters and calibrates the per-step epsilon.
    pub fn build(self) -> Result<DpFw<L>> {
        let privacy = self.privacy.check()?;
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(invalid("radius", self.radius, "must be finite and > 0"));
        }
        if self.iterations == 0 {
            return Err(invalid(
                "iterations",
                0.0,
                "private Frank-Wolfe needs T >= 1",
            ));
        }
        let (b, yb) = check_data_bounds(self.feature_bound, self.label_bound)?;
        if self.loss.curvature_bound().is_none() {
            return Err(OptimError::Unsupported(format!(
                "private Frank-Wolfe needs a smooth loss; {} is not smooth",
                self.loss.name()
            )));
        }
        let (noise, accountant) = match privacy.accounting {
            Accounting::Paper => (
                RnmNoise::Laplace,
                Accountant::Composition(CompositionMethod::Advanced),
            ),
            Accounting::Exact => (RnmNoise::Gumbel, Accountant::Zcdp),
            Accounting::Custom(_) => {
                return Err(OptimError::Unsupported(
                    "private Frank-Wolfe supports Accounting::Paper (Laplace, advanced \
                     composition) and Accounting::Exact (exponential mechanism, zCDP)"
                        .into(),
                ))
            }
        };
        let step_epsilon = match noise {
            RnmNoise::Laplace => per_step_epsilon(
                privacy.epsilon,
                privacy.delta,
                self.iterations,
                CompositionMethod::Advanced,
            )?,
            RnmNoise::Gumbel => {
                let rho = dp_accounting::zcdp::rho_for_target(privacy.epsilon, privacy.delta)?;
                (8.0 * rho / self.iterations as f64).sqrt()
            }
        };
        // Fit to the ledger: the reported guarantee is the ledger's, never above target.
        let step_epsilon = shrink_to_target(
            step_epsilon,
            |&e| planned_ledger(noise, e, self.iterations),
            |e, shrink| e * shrink,
            privacy.epsilon,
            privacy.delta,
            accountant,
        )?;
        Ok(DpFw {
            derivative_bound: derivative_sup(&self.loss, b * self.radius, yb),
            bounds: (b, yb),
            params: self,
            privacy,
            noise,
            accountant,
            step_epsilon,
        })
    }
}

/// `max |phi'(z, y)|` over `z in {-zb, zb}`, `y in {-yb, yb}` (and `y = +-1` for
/// classification losses), capped by the loss's own derivative bound: the supremum of
/// `|phi'|` over the box for the losses of `dp-models` (see the module docs).
pub(crate) fn derivative_sup<L: Loss + ?Sized>(loss: &L, zb: f64, yb: f64) -> f64 {
    let labels = if loss.is_classification() {
        [-1.0, 1.0]
    } else {
        [-yb, yb]
    };
    let mut g = 0.0f64;
    for z in [-zb, zb] {
        for y in labels {
            g = g.max(loss.derivative(z, y).abs());
        }
    }
    match loss.derivative_bound(yb) {
        Some(d) => g.min(d),
        None => g,
    }
}

/// The `t` vertex selections at `eps0` each: Laplace report-noisy-max (pure DP) or the
/// exponential mechanism (Gumbel noise).
fn selection_release(noise: RnmNoise, eps0: f64, t: u64) -> Charge {
    match noise {
        RnmNoise::Laplace => Charge::PureDp {
            epsilon: eps0,
            count: t,
            label: "private Frank-Wolfe vertex selection (Laplace report-noisy-max)".into(),
        },
        RnmNoise::Gumbel => Charge::ExponentialMechanism {
            epsilon: eps0,
            count: t,
        },
    }
}

fn planned_ledger(noise: RnmNoise, eps0: f64, t: u64) -> dp_accounting::Result<Ledger> {
    let mut ledger = Ledger::new();
    ledger.charge(selection_release(noise, eps0, t))?;
    Ok(ledger)
}

/// The central private Frank-Wolfe with checked parameters (see [`DpFwParams`]).
#[derive(Debug, Clone)]
pub struct DpFw<L> {
    params: DpFwParams<L>,
    privacy: CheckedPrivacy,
    noise: RnmNoise,
    accountant: Accountant,
    step_epsilon: f64,
    derivative_bound: f64,
    /// The public bounds `(B, Y)` on `|x_ij|` and `|y_i|`, checked at build.
    bounds: (f64, f64),
}

impl<L> DpFw<L> {
    /// The per-selection pure epsilon `eps0`.
    pub fn step_epsilon(&self) -> f64 {
        self.step_epsilon
    }
}

/// Checks `||x_i||_inf <= b` and `|y_i| <= yb`, naming the first violation.
pub(crate) fn check_bounds<D: Design>(data: &Dataset<D>, b: f64, yb: f64) -> Result<()> {
    let x = data.x();
    for j in 0..x.n_features() {
        if x.col_max_abs(j) > b {
            return Err(OptimError::InvalidParameter {
                name: "feature_bound",
                value: format!("{b} (column {j} has |x_ij| = {})", x.col_max_abs(j)),
                expected: "every |x_ij| must be at most the public feature bound: clip the \
                           data to it first (dp_models::preprocess) or state a larger bound",
            });
        }
    }
    if let Some(i) = data.y().iter().position(|v| v.abs() > yb) {
        return Err(OptimError::InvalidParameter {
            name: "label_bound",
            value: format!("{yb} (label {i} is {})", data.y()[i]),
            expected: "every |y_i| must be at most the public label bound",
        });
    }
    Ok(())
}

impl<D: Design, L: Loss> Solver<D> for DpFw<L> {
    /// Runs private Frank-Wolfe (see the module docs for the privacy claim).
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        let fit = PrivateFit::begin(&self.privacy, Adjacency::ReplaceOne);
        let prm = &self.params;
        let (x, y) = (data.x(), data.y());
        let (n, p) = (x.n_samples(), x.n_features());
        let set = L1Ball::new(prm.radius, p)?;
        check_data(data, p)?;
        data.check_labels_for(&prm.loss)?;
        let (b, yb) = self.bounds;
        if prm.switches.clip {
            check_bounds(data, b, yb)?;
        }
        let mut streams = Streams::from_rng(rng);
        let sensitivity = 2.0 * prm.radius * b * self.derivative_bound / n as f64;
        // Everything is charged before the first draw (noise off: nothing, a non-private
        // comparison run), and the sampler is the charged release's own (scale
        // 2 Delta / eps0).
        let release = selection_release(self.noise, self.step_epsilon, prm.iterations);
        let selection = release.report_noisy_max(sensitivity.max(f64::MIN_POSITIVE))?;
        let scale = selection.scale();
        let fit = if prm.switches.noise {
            Ok(fit.charge(Declared {
                releases: vec![release],
                calibrated: None,
                accountant: self.accountant,
                proof: Proof::Proven,
            })?)
        } else {
            Err(fit)
        };
        let rnm = match &fit {
            Ok(charged) => Some(
                charged
                    .release(0)?
                    .report_noisy_max(sensitivity.max(f64::MIN_POSITIVE))?,
            ),
            Err(_) => None,
        };
        let mut w = vec![0.0; p];
        let mut z = vec![0.0; n];
        let (mut deriv, mut grad) = (vec![0.0; n], vec![0.0; p]);
        // Candidates (j, -r), (j, +r) for j = 0..p: scores u = -<s, g>.
        let mut scores = vec![0.0; 2 * p];
        let mut s = vec![0.0; p];
        let mut selected = Vec::with_capacity(prm.iterations as usize);
        for t in 0..prm.iterations {
            average_loss_gradient(x, &prm.loss, &z, y, &mut deriv, &mut grad);
            for (j, g) in grad.iter().enumerate() {
                scores[2 * j] = prm.radius * g;
                scores[2 * j + 1] = -prm.radius * g;
            }
            if scores.iter().any(|v| !v.is_finite()) {
                return Err(OptimError::Diverged(format!(
                    "private Frank-Wolfe's gradient became non-finite at iteration {t}"
                )));
            }
            // # Privacy: report-noisy-max over the 2p scores, each of sensitivity
            // Delta = 2 r B G / n; eps0-DP (module docs). Only the index is released.
            let k = match &rnm {
                Some(m) => m.select(&mut streams.noise, &scores)?,
                None => crate::dp_gcd::argmax(&scores),
            };
            let (j, sign) = (k / 2, if k % 2 == 0 { -1.0 } else { 1.0 });
            s.iter_mut().for_each(|v| *v = 0.0);
            s[j] = sign * prm.radius;
            fw_update(&mut w, &s, standard_step(t));
            x.matvec(&w, &mut z);
            selected.push(j);
        }
        debug_assert!(w.iter().any(|v| !v.is_finite()) || set.contains(&w, 1e-9));
        average_loss_gradient(x, &prm.loss, &z, y, &mut deriv, &mut grad);
        let gap = set.gap(&grad, &w);
        let model = Model {
            algorithm: if prm.switches.noise { "dp-fw" } else { "fw" }.into(),
            coefficients: w,
            iterations: prm.iterations,
            diagnostics: Diagnostics {
                selected,
                duality_gap: Some(gap),
                ..Diagnostics::default()
            },
        };
        let objective = |_: &[f64]| average_loss(&prm.loss, &z, y);
        let (solver, hint) = ("private Frank-Wolfe", "check the data");
        let fit = match fit {
            Ok(fit) => fit,
            Err(off) => return off.finish_not_private(solver, hint, model, objective),
        };
        let report = Report {
            n_samples: n,
            plan: SolverPlan::DpFw(FwPlan::Central(DpFwPlan {
                selection: match self.noise {
                    RnmNoise::Laplace => "laplace-advanced".into(),
                    RnmNoise::Gumbel => "exponential-zcdp".into(),
                },
                iterations: prm.iterations,
                radius: prm.radius,
                feature_bound: b,
                label_bound: yb,
                derivative_bound: self.derivative_bound,
                score_sensitivity: sensitivity,
                step_epsilon: self.step_epsilon,
                noise_scale: scale,
            })),
            other_guarantees: Vec::new(),
            uses_non_private_constants: false,
        };
        fit.finish(solver, hint, model, report, objective)
    }
}

/// The stated public bounds `|x_ij| <= B` (finite, > 0) and `|y_i| <= Y` (finite, >= 0)
/// on which the score and sketch sensitivities rest; both are required.
pub(crate) fn check_data_bounds(
    feature_bound: Option<f64>,
    label_bound: Option<f64>,
) -> Result<(f64, f64)> {
    let b = feature_bound.ok_or(OptimError::Missing("feature_bound"))?;
    if !(b.is_finite() && b > 0.0) {
        return Err(invalid("feature_bound", b, "must be finite and > 0"));
    }
    let yb = label_bound.ok_or(OptimError::Missing("label_bound"))?;
    if !(yb.is_finite() && yb >= 0.0) {
        return Err(invalid("label_bound", yb, "must be finite and >= 0"));
    }
    Ok((b, yb))
}
