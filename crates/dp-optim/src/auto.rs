//! Hyperparameters that need no tuning: DP-CD's passes, step scale, clipping threshold
//! and the budget share of its private constants, chosen from public quantities only
//! (`epsilon`, `delta`, the loss, the public bounds, `n` and `p`).
//!
//! # The rules (derivation in `docs/defaults.md`)
//!
//! Write `G0 = max_y |phi'(0, y)|` (the per-sample derivative at the initial point, over
//! the labels `y = +-1`; `1/2` for the logistic loss), `c` the loss's curvature bound and
//! `R` the effective public row-norm bound (`min(R, ||b||_2)` for a row bound `R` and
//! per-feature bounds `b`).
//!
//! * **Constants:** estimated privately from the bounds in one Gaussian release
//!   ([`Smoothness::PrivateGaussian`], shifted into upper bounds with probability 0.95,
//!   [`private_smoothness`]) with 5 % of the Gaussian-DP budget `mu^2`: the step sizes
//!   then follow the data's imbalance instead of the bound.
//! * **Step scale `gamma = 1`:** Theorem 3.3 of the DP-CD paper (Mangold et al. 2022)
//!   uses steps `1/M_j`; with upper-bound estimates of `M_j` this step cannot overshoot.
//! * **Clipping `C = G0 R`:** the thresholds are `C_j = C sqrt(M_j / tr M)` with
//!   `sum_j C_j^2 = C^2`, and a per-sample gradient at `w0 = 0` has L2 norm at most
//!   `G0 R`: `C` is the scale of the gradients the fit starts from. The paper's
//!   bounds assume no clipping (`C_j >= L_j`), which with `C_j` proportional to
//!   `sqrt(M_j)` would need `C = G sqrt(p)`-sized thresholds and `sqrt(p)` times the
//!   noise; the bias of clipping the largest coordinates is the smaller price.
//! * **Passes:** the convex case of Theorem 3.3 balances an optimisation term
//!   `p R_M^2 / K` against a noise term `||L||_{M^-1}^2 K log(1/delta) / (n eps)^2`,
//!   which gives `K = R_M n eps sqrt(p) / (||L||_{M^-1} sqrt(log(1/delta)))` up to a
//!   constant. With the clipped `L_j = C_j`, `||L||_{M^-1}^2 = p C^2 / tr M`, and
//!   `tr M <= c R^2`, `R_M = 1` (a margin of order one, the scale at which a logistic
//!   model is confident) and `C = G0 R`, the number of passes `K / p` is
//!   `kappa n eps sqrt(c) / (p G0 sqrt(log(1/delta)))`, clamped to `[2, 50]` (the
//!   paper's grid). The constant `kappa` is measured (`docs/defaults.md`).
//! * **With a row-support bound** ([`PublicBounds::row_support`], `k` releases charged
//!   per pass instead of `p`): the noise term is charged `K k / p` releases instead of
//!   `K`, so the balance moves to `K sqrt(p / k)`: the passes rule is multiplied by
//!   `sqrt(p / k)` (then clamped), and the fit uses the bound with a fresh permutation
//!   of the coordinates per pass.
//!
//! Everything here is a function of public inputs: the choice costs no privacy.

use crate::constants::Smoothness;
use crate::dp_cd::DpCdParams;
use crate::dp_gcd::{DpGcdParams, SelectionRule, Variant};
use crate::dp_scd::DpScdParams;
use crate::dp_sgd::DpSgdParams;
use crate::error::{positive, OptimError, Result};
use crate::model::{FitWarning, LinearModel};
use crate::privacy::{Accounting, PrivacyParams};
use crate::schedule::CoordinateOrder;
use crate::support::RowSupport;
use dp_models::constants::Tagged;
use dp_models::{DualLoss, Loss, Penalty, L2};
use serde::{Deserialize, Serialize};

/// The constant of the passes rule (measured, see `docs/defaults.md`).
pub const PASSES_CONSTANT: f64 = 0.3;
/// Multiplier of the clipping rule `C = CLIP_CONSTANT * G0 * R`.
pub const CLIP_CONSTANT: f64 = 1.0;
/// Share of the budget spent on the private `M_j` (of the Gaussian-DP `mu^2`, see
/// [`private_smoothness`]).
pub const SMOOTHNESS_SHARE: f64 = 0.05;
/// Range of the passes rule.
pub const PASSES_RANGE: (u64, u64) = (2, 50);

/// What the user can state about the data without looking at it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PublicBounds {
    /// `|x_ij| <= b_j` for every row.
    pub feature_bounds: Option<Vec<f64>>,
    /// `||x_i||_2 <= R` for every row.
    pub row_norm_bound: Option<f64>,
    /// How many features of a row can be non-zero ([`RowSupport`]): DP-CD then charges
    /// each pass as the `k` releases one record can move, and the passes rule scales
    /// by `sqrt(p / k)` (see the module docs).
    #[serde(default)]
    pub row_support: Option<RowSupport>,
}

impl PublicBounds {
    /// The same bound `b` on each of `p` features.
    pub fn uniform(p: usize, b: f64) -> Self {
        Self {
            feature_bounds: Some(vec![b; p]),
            row_norm_bound: None,
            row_support: None,
        }
    }
    /// Adds a row-support bound ([`DpCdParams::row_support`]).
    pub fn with_row_support(mut self, support: RowSupport) -> Self {
        self.row_support = Some(support);
        self
    }
    /// Adds a row-norm bound.
    pub fn with_row_norm(mut self, r: f64) -> Self {
        self.row_norm_bound = Some(r);
        self
    }
    /// `min(R, ||b||_2)`: a bound on every row's L2 norm.
    pub fn effective_row_norm(&self) -> Result<f64> {
        let from_b = self
            .feature_bounds
            .as_ref()
            .map(|b| b.iter().map(|v| v * v).sum::<f64>().sqrt());
        let r = match (self.row_norm_bound, from_b) {
            (Some(r), Some(b)) => r.min(b),
            (Some(r), None) => r,
            (None, Some(b)) => b,
            (None, None) => {
                return Err(OptimError::Missing(
                    "a public feature bound or row-norm bound (the defaults need one)",
                ))
            }
        };
        positive("public row-norm bound", r)
    }
    fn check(&self, p: usize) -> Result<()> {
        if let Some(b) = &self.feature_bounds {
            if b.len() != p {
                return Err(OptimError::Shape(format!(
                    "{} feature bounds for {p} features",
                    b.len()
                )));
            }
            for &v in b {
                positive("feature bound", v)?;
            }
        }
        if let Some(r) = self.row_norm_bound {
            positive("row norm bound", r)?;
        }
        if let Some(k) = &self.row_support {
            k.check(p)?;
        }
        Ok(())
    }
}

/// The hyperparameters the rules chose, with the quantities they used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpCdDefaults {
    /// Passes over the coordinates.
    pub passes: u64,
    /// Step scale `gamma` (steps `gamma / M_j`).
    pub step_scale: f64,
    /// Clipping threshold `C`.
    pub clip: f64,
    /// Share of the Gaussian-DP budget `mu^2` spent on the private `M_j`.
    pub smoothness_share: f64,
    /// `G0`, the derivative scale at the initial point.
    pub g0: f64,
    /// The effective row-norm bound `R`.
    pub row_norm: f64,
    /// The unclamped passes of the rule.
    pub passes_unclamped: f64,
    /// [`FitWarning::BudgetTooSmall`] when the rule wanted fewer passes than its
    /// minimum (the budget pays for less than the shortest run the rules allow).
    #[serde(default)]
    pub warnings: Vec<FitWarning>,
}

/// `max |phi'(0, y)|` over `y = +-1`.
fn g0<L: Loss + ?Sized>(loss: &L) -> Result<f64> {
    let g = loss
        .derivative(0.0, 1.0)
        .abs()
        .max(loss.derivative(0.0, -1.0).abs());
    positive("the loss's derivative at 0", g)
}

/// The rules of the module docs for DP-CD on `n` rows and `p` features (`p` counts an
/// intercept column if one is fitted; its bound 1 must then be in `bounds`).
pub fn dp_cd_defaults<L: Loss + ?Sized>(
    loss: &L,
    epsilon: f64,
    delta: f64,
    bounds: &PublicBounds,
    n: usize,
    p: usize,
) -> Result<DpCdDefaults> {
    let privacy = PrivacyParams::new(epsilon, delta).check()?;
    if n == 0 || p == 0 {
        return Err(OptimError::Shape(format!(
            "the defaults need n >= 1 and p >= 1 (got n = {n}, p = {p})"
        )));
    }
    bounds.check(p)?;
    let c = loss.curvature_bound().ok_or_else(|| {
        OptimError::Unsupported(format!(
            "DP-CD needs a smooth loss; the {} loss has no curvature bound",
            loss.name()
        ))
    })?;
    let g = g0(loss)?;
    let r = bounds.effective_row_norm()?;
    let clip = CLIP_CONSTANT * g * r;
    let eps = privacy.epsilon.get();
    let log_inv_delta = -privacy.delta.get().ln();
    // With a row-support bound a pass is charged k releases, not p (module docs).
    let support_gain = match &bounds.row_support {
        Some(k) => (p as f64 / k.releases_per_pass(p)? as f64).sqrt(),
        None => 1.0,
    };
    let raw = PASSES_CONSTANT * n as f64 * eps * c.sqrt() * support_gain
        / (p as f64 * g * log_inv_delta.sqrt());
    let passes = raw
        .round()
        .clamp(PASSES_RANGE.0 as f64, PASSES_RANGE.1 as f64) as u64;
    Ok(DpCdDefaults {
        passes,
        step_scale: 1.0,
        clip,
        smoothness_share: SMOOTHNESS_SHARE,
        g0: g,
        row_norm: r,
        passes_unclamped: raw,
        warnings: budget_warning(raw, passes),
    })
}

/// The private estimate of the `M_j` the defaults use: one Gaussian release of all
/// the `M_j` from `bounds` ([`Smoothness::PrivateGaussian`]: L2 sensitivity of order
/// `c R^2 / n` whatever `p`, composed exactly with DP-CD's steps in Gaussian DP) with
/// `share` of the budget's `mu^2`, shifted into upper bounds with probability 0.95.
///
/// The Gaussian release replaced the Laplace one ([`Smoothness::PrivateBounded`]), which
/// is charged as a pure epsilon and composed with the Gaussian steps only basically,
/// whose union-bound shift grows like `ln(p / beta)` (the Gaussian's like
/// `sqrt(2 ln(p / beta))`), and whose L1 sensitivity without a row bound grows like the
/// sum of the `c b_j^2` (the Gaussian's L2 like their root sum of squares). The Gaussian
/// defaults are at least as accurate in every cell of the five validation data sets at
/// eps 0.5 to 5 (`docs/defaults.md`).
pub fn private_smoothness(bounds: &PublicBounds, share: f64) -> Smoothness {
    Smoothness::PrivateGaussian {
        feature_bounds: bounds.feature_bounds.clone().map(Tagged::public),
        row_norm_bound: bounds.row_norm_bound.map(Tagged::public),
        budget_fraction: share,
        failure_probability: Some(0.05),
    }
}

impl<L: Loss, P: Penalty> DpCdParams<L, P> {
    /// A DP-CD builder with hyperparameters chosen by [`dp_cd_defaults`] from public
    /// inputs only, and the `M_j` estimated privately from `bounds` (charged), with
    /// [`Accounting::Exact`]. Returns the choice with the builder (to print it).
    ///
    /// ```
    /// use dp_models::{Logistic, L2};
    /// use dp_optim::auto::PublicBounds;
    /// use dp_optim::DpCdParams;
    /// let bounds = PublicBounds::uniform(80, 1.0).with_row_norm(1.0);
    /// let (params, chosen) =
    ///     DpCdParams::defaults_for(Logistic, L2::new(1e-5).unwrap(), 1.0, 1e-9, &bounds, 26_000, 80)
    ///         .unwrap();
    /// assert_eq!(chosen.step_scale, 1.0);
    /// assert!(chosen.passes >= 2 && chosen.passes <= 50);
    /// let solver = params.build().unwrap();
    /// # let _ = solver;
    /// ```
    pub fn defaults_for(
        loss: L,
        penalty: P,
        epsilon: f64,
        delta: f64,
        bounds: &PublicBounds,
        n: usize,
        p: usize,
    ) -> Result<(Self, DpCdDefaults)> {
        let d = dp_cd_defaults(&loss, epsilon, delta, bounds, n, p)?;
        let params = DpCdParams::new(loss, penalty)
            .privacy(PrivacyParams::new(epsilon, delta).accounting(Accounting::Exact))
            .passes(d.passes)
            .step_scale(d.step_scale)
            .clip(d.clip)
            .smoothness(private_smoothness(bounds, d.smoothness_share));
        let params = match &bounds.row_support {
            Some(k) => params
                .coordinate_order(CoordinateOrder::Permutation)
                .row_support(Some(k.clone())),
            None => params,
        };
        Ok((params, d))
    }
}

/// [`FitWarning::BudgetTooSmall`] when the passes rule wanted fewer than the minimum
/// it runs (`raw < PASSES_RANGE.0`).
fn budget_warning(raw: f64, used: u64) -> Vec<FitWarning> {
    if raw < PASSES_RANGE.0 as f64 {
        vec![FitWarning::BudgetTooSmall { wanted: raw, used }]
    } else {
        Vec::new()
    }
}

/// [`FitWarning::ConstantPrediction`] when the released `model` predicts the same sign
/// for every row within `bounds`: `|b| > max |x^T w|` over those rows, bounded by
/// `min(sum_j |w_j| b_j, R ||w||_2)` (the feature bounds and the row-norm bound, as
/// given). The model must have its intercept split off
/// ([`LinearModel::split_intercept`]) and `bounds` must describe its features (without
/// the intercept column). A function of the released model and public bounds only.
pub fn constant_prediction(
    model: &LinearModel,
    bounds: &PublicBounds,
) -> Result<Option<FitWarning>> {
    let Some(b) = model.intercept else {
        return Ok(None);
    };
    let w = &model.coefficients;
    let mut swing = f64::INFINITY;
    if let Some(fb) = &bounds.feature_bounds {
        if fb.len() != w.len() {
            return Err(OptimError::Shape(format!(
                "{} feature bounds for a model of {} coefficients",
                fb.len(),
                w.len()
            )));
        }
        swing = swing.min(w.iter().zip(fb).map(|(w, b)| w.abs() * b).sum());
    }
    if let Some(r) = bounds.row_norm_bound {
        swing = swing.min(r * w.iter().map(|v| v * v).sum::<f64>().sqrt());
    }
    Ok((b.abs() > swing).then_some(FitWarning::ConstantPrediction {
        intercept: b,
        largest_swing: swing,
    }))
}

/// The hyperparameters the rules chose for DP-GCD, DP-SGD or DP-SCD (the fields that do
/// not apply are `None`), with the quantities they used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmDefaults {
    /// Passes (DP-SGD, DP-SCD) or iterations (DP-GCD: one selection and one update each).
    pub passes: u64,
    /// Step scale (DP-GCD: steps `gamma / M_j`; DP-SGD: step `gamma / beta`).
    pub step_scale: Option<f64>,
    /// Clipping threshold.
    pub clip: f64,
    /// Batch size (DP-SGD, DP-SCD).
    pub batch_size: Option<u64>,
    /// The public `beta = c R^2` (DP-SGD).
    pub beta: Option<f64>,
    /// The unclamped value of the passes (iterations) rule.
    pub passes_unclamped: f64,
    /// [`FitWarning::BudgetTooSmall`] when the rule wanted less than its minimum.
    pub warnings: Vec<FitWarning>,
}

/// The fewest iterations DP-GCD's rule runs (the most is `50 p`, see
/// [`dp_gcd_defaults`]).
pub const GCD_ITERATIONS_MIN: u64 = 2;

/// The batch size of the stochastic rules: `round(sqrt(n))`, in `[1, n]`.
fn sqrt_batch(n: usize) -> u64 {
    ((n as f64).sqrt().round() as u64).clamp(1, n as u64)
}

/// DP-GCD (zCDP variant, Gaussian update noise, Gumbel selection) on `n` rows and `p`
/// features (an intercept column counts, with bound 1 in `bounds`).
///
/// The DP-CD balance gives the number of noisy coordinate updates `K_cd = passes * p`
/// (see [`dp_cd_defaults`]); a DP-GCD iteration spends its share of the budget on one
/// selection and one update (selection share 1/2), so it is charged like two DP-CD
/// releases: `T = K_cd / 2`, rounded, clamped to `[2, 50 p]`. Step `gamma = 1` and clip
/// `C = G0 R` as for DP-CD; the `M_j` are estimated privately in one Gaussian release
/// with 5 % of the zCDP budget ([`private_smoothness`]).
pub fn dp_gcd_defaults<L: Loss + ?Sized>(
    loss: &L,
    epsilon: f64,
    delta: f64,
    bounds: &PublicBounds,
    n: usize,
    p: usize,
) -> Result<AlgorithmDefaults> {
    let cd = dp_cd_defaults(loss, epsilon, delta, &without_support(bounds), n, p)?;
    let raw = cd.passes_unclamped * p as f64 / 2.0;
    let hi = (PASSES_RANGE.1 * p as u64).max(GCD_ITERATIONS_MIN);
    let iterations = (raw.round() as u64).clamp(GCD_ITERATIONS_MIN, hi);
    Ok(AlgorithmDefaults {
        passes: iterations,
        step_scale: Some(1.0),
        clip: cd.clip,
        batch_size: None,
        beta: None,
        passes_unclamped: raw,
        warnings: budget_warning(cd.passes_unclamped, cd.passes),
    })
}

/// DP-SGD with batches of `round(sqrt(n))` rows, the public `beta = c R^2` (no budget
/// spent on it), step `1 / beta`, clip `C = G0 R` (a per-sample gradient's norm at
/// `w0 = 0`), and the passes of [`dp_cd_defaults`] (the same optimisation / noise
/// balance per unit of budget; not refitted for SGD).
pub fn dp_sgd_defaults<L: Loss + ?Sized>(
    loss: &L,
    epsilon: f64,
    delta: f64,
    bounds: &PublicBounds,
    n: usize,
    p: usize,
) -> Result<AlgorithmDefaults> {
    let cd = dp_cd_defaults(loss, epsilon, delta, &without_support(bounds), n, p)?;
    let c = loss.curvature_bound().ok_or_else(|| {
        OptimError::Unsupported(format!(
            "DP-SGD's step needs a smooth loss; the {} loss has no curvature bound",
            loss.name()
        ))
    })?;
    let beta = positive("beta = c R^2", c * cd.row_norm * cd.row_norm)?;
    Ok(AlgorithmDefaults {
        passes: cd.passes,
        step_scale: Some(1.0),
        clip: cd.clip,
        batch_size: Some(sqrt_batch(n)),
        beta: Some(beta),
        passes_unclamped: cd.passes_unclamped,
        warnings: cd.warnings,
    })
}

/// DP-SCD with hidden duals ([`crate::DualNoise::Hidden`], which
/// [`DpScdParams::defaults_for`] sets): batches of `L = ceil(n / 4)` rows, clip
/// `C = kappa lambda n / (L R^2)`, and `m` times the passes of [`dp_cd_defaults`]
/// (unclamped, rounded, then clamped to `[10, 50]`); `kappa = 3, m = 10` for the losses
/// with a bounded dual step (logistic, hinge), `kappa = min(1, epsilon / 5), m = 1` for
/// the squared loss.
///
/// Derivation. With hidden duals each record is in one batch per pass and the guarantee
/// is `passes` Gaussian mechanisms: the noise std per step is `s 2 C R` with `s` of
/// order `sqrt(passes)`, whatever `L`, so fewer, larger batches put less noise in
/// `v` per pass (`ceil(n / L)` draws), at the cost of smaller steps (the subproblem is
/// scaled by `L`). The dual step of record `j` is about its residual over the
/// subproblem's curvature `k_j = L ||x_j||^2 / (lambda n)`, so the steps live on the
/// scale `lambda n / (L R^2)`; the old `C = 1` was up to `L / (lambda n)` times larger
/// than every step (`4,600` times on breast_cancer at `lambda = 1e-4`), and the noise
/// scales with `C`. The dual ascent from `alpha = 0` is slower than DP-CD (the
/// logistic dual's entropy keeps the first steps short), hence more passes for the
/// bounded-dual losses; for the squared loss, whose dual step is unbounded, the noise
/// in `w = v / (lambda n)` grows with the passes and the clip, and the best clip
/// measured on diabetes shrank with epsilon (`lambda n / L` at eps 5, a third of it at
/// eps 1, a tenth at eps 0.5, each with 10 passes). The constants were measured through
/// `dp_erm::Pipeline` on breast_cancer and diabetes at eps 1 and 5
/// (`cargo run --release -p dp-erm --example scd_probe`, `docs/defaults.md`); they are
/// not validated elsewhere.
pub fn dp_scd_defaults<L: Loss + ?Sized>(
    loss: &L,
    lambda: f64,
    epsilon: f64,
    delta: f64,
    bounds: &PublicBounds,
    n: usize,
    p: usize,
) -> Result<AlgorithmDefaults> {
    positive("lambda", lambda)?;
    let cd = dp_cd_defaults(loss, epsilon, delta, &without_support(bounds), n, p)?;
    let (kappa, m) = if loss.is_residual_loss() {
        ((epsilon / 5.0).min(1.0), 1.0)
    } else {
        (3.0, 10.0)
    };
    let raw = m * cd.passes_unclamped;
    let passes = (raw.round().max(0.0) as u64).clamp(SCD_PASSES_MIN, SCD_PASSES_MAX);
    let batch = (n.div_ceil(4) as u64).clamp(1, n.max(1) as u64);
    let r2 = cd.row_norm * cd.row_norm;
    let clip = positive(
        "clip = kappa lambda n / (L R^2)",
        kappa * lambda * n as f64 / (batch as f64 * r2),
    )?;
    Ok(AlgorithmDefaults {
        passes,
        step_scale: None,
        clip,
        batch_size: Some(batch),
        beta: None,
        passes_unclamped: raw,
        // The budget pays for fewer passes than the rule's minimum.
        warnings: if raw < SCD_PASSES_MIN as f64 {
            vec![FitWarning::BudgetTooSmall {
                wanted: raw,
                used: passes,
            }]
        } else {
            Vec::new()
        },
    })
}

/// The fewest passes of DP-SCD's rule ([`dp_scd_defaults`]).
pub const SCD_PASSES_MIN: u64 = 10;
/// The most passes of DP-SCD's rule ([`dp_scd_defaults`]).
pub const SCD_PASSES_MAX: u64 = 50;

/// The bounds without a row-support bound (only DP-CD uses one).
fn without_support(bounds: &PublicBounds) -> PublicBounds {
    PublicBounds {
        row_support: None,
        ..bounds.clone()
    }
}

impl<L: Loss, P: Penalty> DpGcdParams<L, P> {
    /// A DP-GCD builder (zCDP variant, rule GS-r, which handles every separable
    /// penalty) with the choices of [`dp_gcd_defaults`] and the `M_j` estimated
    /// privately from `bounds` (charged).
    pub fn defaults_for(
        loss: L,
        penalty: P,
        epsilon: f64,
        delta: f64,
        bounds: &PublicBounds,
        n: usize,
        p: usize,
    ) -> Result<(Self, AlgorithmDefaults)> {
        let d = dp_gcd_defaults(&loss, epsilon, delta, bounds, n, p)?;
        let params = DpGcdParams::new(loss, penalty)
            .privacy(PrivacyParams::new(epsilon, delta))
            .variant(Variant::Zcdp)
            .rule(SelectionRule::GsR)
            .passes(d.passes)
            .step_scale(d.step_scale.unwrap_or(1.0))
            .clip(d.clip)
            .smoothness(private_smoothness(bounds, SMOOTHNESS_SHARE));
        Ok((params, d))
    }
}

impl<L: Loss, P: Penalty> DpSgdParams<L, P> {
    /// A DP-SGD builder with the choices of [`dp_sgd_defaults`] (public `beta`).
    pub fn defaults_for(
        loss: L,
        penalty: P,
        epsilon: f64,
        delta: f64,
        bounds: &PublicBounds,
        n: usize,
        p: usize,
    ) -> Result<(Self, AlgorithmDefaults)> {
        let d = dp_sgd_defaults(&loss, epsilon, delta, bounds, n, p)?;
        // DP-SGD's defaults always state the public beta = c R^2; absent is an internal
        // error, never a NaN handed to the solver.
        let beta = d.beta.ok_or_else(|| {
            OptimError::Unsupported("internal: DP-SGD's defaults carry no beta".into())
        })?;
        let params = DpSgdParams::new(loss, penalty)
            .privacy(PrivacyParams::new(epsilon, delta).accounting(Accounting::Exact))
            .passes(d.passes)
            .step_scale(d.step_scale.unwrap_or(1.0))
            .clip(d.clip)
            .batch_size(d.batch_size.unwrap_or(1))
            .smoothness(crate::constants::GlobalSmoothness::Given(Tagged::public(
                beta,
            )));
        Ok((params, d))
    }
}

impl<L: DualLoss> DpScdParams<L> {
    /// A DP-SCD builder with the choices of [`dp_scd_defaults`] (`penalty` must have
    /// `lambda > 0`: the dual needs strong convexity).
    pub fn defaults_for(
        loss: L,
        penalty: L2,
        epsilon: f64,
        delta: f64,
        bounds: &PublicBounds,
        n: usize,
        p: usize,
    ) -> Result<(Self, AlgorithmDefaults)> {
        let d = dp_scd_defaults(&loss, penalty.lambda(), epsilon, delta, bounds, n, p)?;
        let params = DpScdParams::new(loss, penalty)
            .dual_noise(crate::DualNoise::Hidden)
            .privacy(PrivacyParams::new(epsilon, delta).accounting(Accounting::Exact))
            .passes(d.passes)
            .clip(d.clip)
            .batch_size(d.batch_size.unwrap_or(1));
        Ok((params, d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_models::{Logistic, Squared, L2};

    #[test]
    fn a_row_support_bound_scales_the_passes_and_reaches_the_fit() {
        let b = PublicBounds::uniform(9, 1.0).with_row_norm(1.0);
        let plain = dp_cd_defaults(&Logistic, 0.5, 1e-6, &b, 5_000, 9).unwrap();
        let k = RowSupport::one_hot(vec![vec![2, 3, 4], vec![5, 6, 7, 8]]); // k = 4
        let bs = b.clone().with_row_support(k.clone());
        let sparse = dp_cd_defaults(&Logistic, 0.5, 1e-6, &bs, 5_000, 9).unwrap();
        let ratio = sparse.passes_unclamped / plain.passes_unclamped;
        assert!((ratio - (9.0f64 / 4.0).sqrt()).abs() < 1e-12, "{ratio}");
        let (params, _) =
            DpCdParams::defaults_for(Logistic, L2::new(1e-4).unwrap(), 0.5, 1e-6, &bs, 5_000, 9)
                .unwrap();
        let solver = params.build().unwrap();
        let plan = solver
            .plan(
                5_000,
                &[0.25; 9],
                dp_models::constants::Provenance::PublicBound,
            )
            .unwrap();
        assert_eq!(plan.row_support, Some(k));
        assert_eq!(plan.coordinate_order, CoordinateOrder::Permutation);
        assert_eq!(plan.charged(), 4 * sparse.passes);
        // A bound naming a feature the data lack is refused.
        let bad = b.with_row_support(RowSupport::one_hot(vec![vec![9]]));
        assert!(dp_cd_defaults(&Logistic, 0.5, 1e-6, &bad, 5_000, 9).is_err());
    }

    #[test]
    fn defaults_estimate_the_constants_in_one_gaussian_release_charged_with_the_steps() {
        use crate::solver::Solver;
        use dp_accounting::ledger::Charge;
        use dp_models::{Dataset, DenseDesign};
        use rand::{Rng, SeedableRng};
        let (n, p) = (2_000, 5);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        // Rows of norm <= 1 (|x_ij| <= 1 / sqrt(p)).
        let x: Vec<f64> = (0..n * p)
            .map(|_| rng.random_range(-1.0..1.0) / (p as f64).sqrt())
            .collect();
        let y = (0..n)
            .map(|i| {
                if x[i * p] + x[i * p + 1] > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let d = Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap();
        let b = PublicBounds::uniform(p, 1.0).with_row_norm(1.0);
        let (params, chosen) =
            DpCdParams::defaults_for(Logistic, L2::new(1e-5).unwrap(), 1.0, 1e-6, &b, n, p)
                .unwrap();
        let fitted = params.build().unwrap().fit_seeded(&d, 3).unwrap();
        let report = fitted.privacy().unwrap();
        assert!(
            report.guarantee.epsilon <= 1.0,
            "{}",
            report.guarantee.epsilon
        );
        // Only Gaussian releases (none of the Laplace estimate's pure-DP charges): one for
        // the M_j, the steps' `passes * p` at their own multiplier.
        let entries = report.ledger.entries();
        assert!(
            entries.iter().all(|c| matches!(c, Charge::Gaussian { .. })),
            "{entries:?}"
        );
        let count: u64 = entries
            .iter()
            .map(|c| match c {
                Charge::Gaussian { count, .. } => *count,
                _ => 0,
            })
            .sum();
        assert_eq!(count, 1 + chosen.passes * p as u64, "{entries:?}");
        // The M_j's share of mu^2: (1/z_M^2) / sum(count / z^2) = SMOOTHNESS_SHARE.
        let inv: Vec<(f64, u64)> = entries
            .iter()
            .map(|c| match c {
                Charge::Gaussian {
                    noise_multiplier,
                    count,
                } => (1.0 / noise_multiplier.powi(2), *count),
                _ => unreachable!(),
            })
            .collect();
        let total: f64 = inv.iter().map(|(v, c)| v * *c as f64).sum();
        let single = inv.iter().find(|(_, c)| *c == 1).map(|(v, _)| *v).unwrap();
        assert!(
            (single / total - SMOOTHNESS_SHARE).abs() < 1e-6,
            "{}",
            single / total
        );
        assert!(fitted.model.coefficients.iter().all(|w| w.is_finite()));
    }

    #[test]
    fn other_algorithms_defaults_build_fit_and_warn_when_the_budget_is_too_small() {
        use crate::solver::Solver;
        use dp_models::{Dataset, DenseDesign};
        let (n, p) = (400, 4);
        let x: Vec<f64> = (0..n * p)
            .map(|k| ((k * 37 % 101) as f64 / 50.0 - 1.0) * 0.5)
            .collect();
        let y = (0..n)
            .map(|i| if x[i * p] > 0.0 { 1.0 } else { -1.0 })
            .collect();
        let d = Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap();
        let b = PublicBounds::uniform(p, 1.0);
        let l2 = || L2::new(1e-3).unwrap();
        let (g, gd) = DpGcdParams::defaults_for(Logistic, l2(), 1.0, 1e-6, &b, n, p).unwrap();
        assert!(gd.passes >= GCD_ITERATIONS_MIN);
        let fit = g.build().unwrap().fit_seeded(&d, 1).unwrap();
        assert!(fit.guarantee().unwrap().epsilon <= 1.0 + 1e-9);
        let (s, sd) = DpSgdParams::defaults_for(Logistic, l2(), 1.0, 1e-6, &b, n, p).unwrap();
        assert_eq!(sd.batch_size, Some(20));
        assert_eq!(sd.beta, Some(0.25 * 4.0));
        let fit = s.build().unwrap().fit_seeded(&d, 1).unwrap();
        assert!(fit.guarantee().unwrap().epsilon <= 1.0 + 1e-9);
        let (c, _) = DpScdParams::defaults_for(Logistic, l2(), 1.0, 1e-6, &b, n, p).unwrap();
        let fit = c.build().unwrap().fit_seeded(&d, 1).unwrap();
        assert!(fit.guarantee().unwrap().epsilon <= 1.0 + 1e-9);
        // eps 0.01 on 400 rows: the rule wants far fewer than 2 passes.
        let tiny = dp_cd_defaults(&Logistic, 0.01, 1e-6, &b, n, p).unwrap();
        assert!(matches!(
            tiny.warnings.as_slice(),
            [FitWarning::BudgetTooSmall { used: 2, .. }]
        ));
        assert!(dp_cd_defaults(&Logistic, 5.0, 1e-6, &b, 100_000, p)
            .unwrap()
            .warnings
            .is_empty());
    }

    #[test]
    fn a_model_whose_intercept_outweighs_every_row_is_flagged_constant() {
        let b = PublicBounds::uniform(2, 1.0);
        let model = |w: Vec<f64>, b0: f64| LinearModel {
            algorithm: "dp-cd".into(),
            coefficients: w,
            intercept: Some(b0),
            iterations: 1,
            privacy: None,
        };
        // max |x^T w| over the box = 0.3 + 0.2 = 0.5 < 0.6.
        let w = constant_prediction(&model(vec![0.3, -0.2], 0.6), &b).unwrap();
        assert!(matches!(w, Some(FitWarning::ConstantPrediction { .. })));
        assert!(constant_prediction(&model(vec![0.3, -0.2], 0.4), &b)
            .unwrap()
            .is_none());
        // A row-norm bound tightens the swing: R ||w|| = 0.5 * 0.36 = 0.18 < 0.4.
        let r = b.clone().with_row_norm(0.5);
        assert!(constant_prediction(&model(vec![0.3, -0.2], 0.4), &r)
            .unwrap()
            .is_some());
        assert!(constant_prediction(&model(vec![0.3], 0.4), &b).is_err());
    }

    #[test]
    fn rules_follow_the_formulas_and_refuse_bad_input() {
        let b = PublicBounds::uniform(4, 1.0);
        let d = dp_cd_defaults(&Logistic, 1.0, 1e-6, &b, 10_000, 4).unwrap();
        assert_eq!(d.g0, 0.5);
        assert_eq!(d.row_norm, 2.0);
        assert_eq!(d.clip, CLIP_CONSTANT);
        let raw = PASSES_CONSTANT * 10_000.0 * 0.5 / (4.0 * 0.5 * (1e6f64).ln().sqrt());
        assert!((d.passes_unclamped - raw).abs() < 1e-9 * raw);
        // More privacy budget or more rows: more passes (until the clamp).
        let more = dp_cd_defaults(&Logistic, 0.2, 1e-6, &b, 10_000, 4).unwrap();
        assert!(more.passes_unclamped < d.passes_unclamped);
        let tiny = dp_cd_defaults(&Logistic, 0.01, 1e-6, &b, 100, 4).unwrap();
        assert_eq!(tiny.passes, PASSES_RANGE.0);
        // The row bound wins when it is tighter.
        let r = PublicBounds::uniform(4, 1.0).with_row_norm(1.0);
        assert_eq!(
            dp_cd_defaults(&Logistic, 1.0, 1e-6, &r, 100, 4)
                .unwrap()
                .row_norm,
            1.0
        );
        // Squared loss: G0 = |0 - y| = 1.
        // Squared loss: G0 = max |0 - y| = 1 (phi = (z - y)^2 gives 2).
        assert!(
            dp_cd_defaults(&Squared::full(), 1.0, 1e-6, &b, 100, 4)
                .unwrap()
                .g0
                >= 1.0
        );
        assert!(dp_cd_defaults(&Logistic, 1.0, 1e-6, &PublicBounds::default(), 100, 4).is_err());
        assert!(
            dp_cd_defaults(&Logistic, 1.0, 1e-6, &PublicBounds::uniform(3, 1.0), 100, 4).is_err()
        );
        assert!(dp_cd_defaults(&Logistic, -1.0, 1e-6, &b, 100, 4).is_err());
        assert!(
            dp_cd_defaults(&Logistic, 1.0, 1e-6, &PublicBounds::uniform(4, 0.0), 100, 4).is_err()
        );
    }
}
