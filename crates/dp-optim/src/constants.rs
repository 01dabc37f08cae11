//! How a solver knows its smoothness constants: one vocabulary for every solver.
//!
//! * [`Smoothness`]: the coordinate constants `M_j` of the coordinate methods (DP-CD,
//!   DP-CD-P, CD, DP-GCD and its twin).
//! * [`GlobalSmoothness`]: the global constant `beta` of the gradient methods (DP-SGD,
//!   SGD).
//!
//! Each is known in one of three ways: a **public bound** ([`Tagged::public`], e.g. from
//! a declared feature bound `|x_ij| <= B`, free), **privately estimated** (its cost is
//! charged to the fit's ledger before any other release), or **computed from the data
//! without privacy**, refused by every private solver unless the caller opts in by name
//! ([`PrivacyParams::allow_non_private_constants`](crate::PrivacyParams::allow_non_private_constants)).
//! Both enums convert from a [`Tagged`] value, so `.smoothness(Tagged::public(..))`
//! works on every builder.

use crate::error::{positive, OptimError, Result};
use crate::privacy::{charge_pre_spent, pre_spent_epsilon, remaining_epsilon, PreSpent};
use dp_accounting::ledger::Ledger;
use dp_accounting::Epsilon;
use dp_models::constants::{
    coordinate_smoothness, global_smoothness, private_coordinate_smoothness_bounded,
    private_coordinate_smoothness_gaussian, private_coordinate_smoothness_with,
    private_global_smoothness, BoundedSmoothnessOptions, Neighbours, PrivateSmoothnessOptions,
    SmoothnessBounds, Tagged,
};
use dp_models::{Design, Loss};
use rand_chacha::ChaCha20Rng;

/// Where the coordinate smoothness constants `M_j` come from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Smoothness {
    /// `M_j = (c/n) sum_i x_ij^2` computed from the data **without privacy**. Private
    /// solvers refuse it unless the caller opts in with `allow_non_private_constants`
    /// (the papers' experiments do this). The default.
    #[default]
    FromData,
    /// Constants supplied by the caller with their provenance. A
    /// [`Provenance::DataNonPrivate`](dp_models::constants::Provenance) value needs the
    /// same opt-in as `FromData`; a
    /// [`Provenance::PrivatelyEstimated`](dp_models::constants::Provenance) value's
    /// epsilon is charged to the fit's ledger and taken out of the optimisation's budget.
    Given(Tagged<Vec<f64>>),
    /// DP-CD-P: estimate the `M_j` with the Laplace mechanism of the DP-CD paper's
    /// App. F (`dp_models::constants::private_coordinate_smoothness`) from per-feature
    /// bounds `|x_ij| <= feature_bounds[j]`, spending `budget_fraction * epsilon` (pure
    /// DP); the optimisation gets the rest at the same delta. The paper uses
    /// `budget_fraction = 0.1`. Supported by DP-CD (as DP-CD-P) and DP-GCD, which charge
    /// the estimate to the fit's ledger before calibrating the rest on it.
    Private {
        /// Bounds `B_j >= |x_ij|` with their provenance: [`Tagged::public`] for bounds
        /// known without looking at the data; bounds computed from the data (the paper
        /// takes twice the maximal absolute value) are
        /// [`Provenance::DataNonPrivate`](dp_models::constants::Provenance) and need the
        /// opt-in, like any other constant computed without privacy.
        feature_bounds: Tagged<Vec<f64>>,
        /// Fraction of epsilon spent on the estimate, in (0, 1).
        budget_fraction: f64,
    },
    /// Estimate all `M_j` at once from public row bounds with one Laplace release
    /// (`dp_models::constants::private_coordinate_smoothness_bounded`, proof there):
    /// a row-norm bound `||x_i||_2 <= R` makes the noise independent of `p`
    /// (`2 c R^2 / (n eps_m)` per coordinate), per-feature bounds alone halve the
    /// paper's. The estimates are shifted up so that, with probability at least
    /// `1 - failure_probability`, every one is an upper bound (what the step sizes
    /// `1/M_j` need), then clamped between a public floor and the public ceiling
    /// `c min(b_j^2, R^2)`. `budget_fraction * epsilon` is spent (pure DP); the
    /// optimisation gets the rest. Supported by DP-CD (as DP-CD-P) and DP-GCD.
    PrivateBounded {
        /// Bounds `b_j >= |x_ij|` with their provenance (`None`: not stated).
        feature_bounds: Option<Tagged<Vec<f64>>>,
        /// Bound `R >= ||x_i||_2` with its provenance (`None`: not stated). At least one
        /// of the two must be given.
        row_norm_bound: Option<Tagged<f64>>,
        /// Fraction of epsilon spent on the estimate, in (0, 1).
        budget_fraction: f64,
        /// Probability that some estimate is below the constant it estimates, in (0, 1);
        /// `None` releases the unbiased estimate (clamped).
        failure_probability: Option<f64>,
    },
    /// Estimate all `M_j` at once from public row bounds with **one Gaussian release**
    /// (`dp_models::constants::private_coordinate_smoothness_gaussian`, proof there):
    /// the vector `(c x_ij^2)_j` of a row has L2 norm at most `c R^2`, so the replace-one
    /// L2 sensitivity of the mean is `sqrt(2) c R^2 / n` for any `p`. Its noise
    /// multiplier is set so that it takes `budget_fraction` of the budget in the
    /// Gaussian-DP sense (`mu_m^2 = budget_fraction * mu^2`, `mu` the GDP parameter of
    /// the whole target); it is charged to the fit's ledger as a Gaussian release, and
    /// the optimisation's noise is calibrated on the whole ledger, so under
    /// [`Accounting::Exact`](crate::Accounting::Exact) (GDP for DP-CD) the estimate and
    /// the steps compose exactly (`1/z^2` adds). The estimates are shifted up so that,
    /// with probability at least `1 - failure_probability`, every one is an upper bound,
    /// then clamped between a public floor and the ceiling `c min(b_j^2, R^2)`.
    /// Supported by DP-CD (as DP-CD-P) and by DP-GCD's zCDP variant, where
    /// `budget_fraction` is a share of the zCDP budget instead (`rho_m = budget_fraction *
    /// rho`, composed additively with the iterations); DP-GCD's Laplace variant (pure-DP
    /// composition) refuses it.
    PrivateGaussian {
        /// Bounds `b_j >= |x_ij|` with their provenance (`None`: not stated).
        feature_bounds: Option<Tagged<Vec<f64>>>,
        /// Bound `R >= ||x_i||_2` with its provenance (`None`: not stated). At least one
        /// of the two must be given.
        row_norm_bound: Option<Tagged<f64>>,
        /// Share of the budget's `mu^2` spent on the estimate, in (0, 1).
        budget_fraction: f64,
        /// Probability that some estimate is below the constant it estimates, in (0, 1);
        /// `None` releases the unbiased estimate (clamped).
        failure_probability: Option<f64>,
    },
}

impl Smoothness {
    /// DP-CD-P as in the paper: 10 % of epsilon on the estimate.
    pub fn private(feature_bounds: Tagged<Vec<f64>>) -> Self {
        Smoothness::Private {
            feature_bounds,
            budget_fraction: 0.1,
        }
    }

    /// The one-release estimate from public row bounds
    /// ([`Smoothness::PrivateBounded`]) with 10 % of epsilon and a 5 % chance that some
    /// estimate is not an upper bound.
    pub fn private_bounded(
        feature_bounds: Option<Tagged<Vec<f64>>>,
        row_norm_bound: Option<Tagged<f64>>,
    ) -> Self {
        Smoothness::PrivateBounded {
            feature_bounds,
            row_norm_bound,
            budget_fraction: 0.1,
            failure_probability: Some(0.05),
        }
    }

    /// The Gaussian-DP share of [`Smoothness::PrivateGaussian`] (`None` otherwise).
    pub(crate) fn gaussian_fraction(&self) -> Option<f64> {
        match self {
            Smoothness::PrivateGaussian {
                budget_fraction, ..
            } => Some(*budget_fraction),
            _ => None,
        }
    }

    /// Checks the data-independent parts (the budget fraction and the bounds).
    pub(crate) fn check(&self) -> Result<()> {
        if let Some(budget_fraction) = self.budget_fraction().or(self.gaussian_fraction()) {
            if !(budget_fraction.is_finite() && budget_fraction > 0.0 && budget_fraction < 1.0) {
                return Err(OptimError::InvalidParameter {
                    name: "budget_fraction",
                    value: budget_fraction.to_string(),
                    expected: "the fraction of epsilon spent on smoothness must be in (0, 1)",
                });
            }
        }
        match self {
            Smoothness::Private { feature_bounds, .. } => {
                for &b in &feature_bounds.value {
                    positive("feature bound", b)?;
                }
            }
            Smoothness::PrivateBounded {
                feature_bounds,
                row_norm_bound,
                failure_probability,
                ..
            }
            | Smoothness::PrivateGaussian {
                feature_bounds,
                row_norm_bound,
                failure_probability,
                ..
            } => {
                if feature_bounds.is_none() && row_norm_bound.is_none() {
                    return Err(OptimError::Missing(
                        "feature_bounds or row_norm_bound (the private estimate needs one)",
                    ));
                }
                for &b in feature_bounds.iter().flat_map(|t| &t.value) {
                    positive("feature bound", b)?;
                }
                if let Some(r) = row_norm_bound {
                    positive("row norm bound", r.value)?;
                }
                if let Some(beta) = failure_probability {
                    if !(beta.is_finite() && *beta > 0.0 && *beta < 1.0) {
                        return Err(OptimError::InvalidParameter {
                            name: "failure_probability",
                            value: beta.to_string(),
                            expected: "the probability that an estimate is not an upper \
                                       bound must be in (0, 1)",
                        });
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The fraction of the target spent on estimating the constants (`Private` and
    /// `PrivateBounded` only).
    pub(crate) fn budget_fraction(&self) -> Option<f64> {
        match self {
            Smoothness::Private {
                budget_fraction, ..
            }
            | Smoothness::PrivateBounded {
                budget_fraction, ..
            } => Some(*budget_fraction),
            _ => None,
        }
    }
}

impl From<Tagged<Vec<f64>>> for Smoothness {
    fn from(t: Tagged<Vec<f64>>) -> Self {
        Smoothness::Given(t)
    }
}

/// Where the global smoothness `beta` (for SGD's step `step_scale / beta`) comes from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum GlobalSmoothness {
    /// `beta = (c/n) lambda_max(X^T X)` computed from the data (without privacy: private
    /// solvers refuse it unless the caller opts in). The default.
    #[default]
    FromData,
    /// A value supplied by the caller with its provenance.
    Given(Tagged<f64>),
    /// Estimated in the fit from a row-norm bound `||x_i||_2 <= R` with one Laplace
    /// release of sensitivity `c R^2 / n` on `(c/n) lambda_max` of the row-clipped
    /// data (`dp_models::constants::private_global_smoothness`, proof there), shifted
    /// into an upper bound with probability `1 - failure_probability` and clamped to
    /// `(0, c R^2]`. `budget_fraction * epsilon` is charged first (pure DP); the steps
    /// get the rest. DP-SGD under replace-one only.
    Private {
        /// `R` with its provenance (a data-derived bound needs the opt-in).
        row_norm_bound: Tagged<f64>,
        /// Fraction of epsilon spent on the estimate, in (0, 1).
        budget_fraction: f64,
        /// Probability that the estimate is below `beta`, in (0, 1); `None`: unbiased.
        failure_probability: Option<f64>,
    },
}

impl GlobalSmoothness {
    /// The private estimate with 10 % of epsilon and a 5 % chance of not being an
    /// upper bound.
    pub fn private(row_norm_bound: Tagged<f64>) -> Self {
        GlobalSmoothness::Private {
            row_norm_bound,
            budget_fraction: 0.1,
            failure_probability: Some(0.05),
        }
    }
}

impl From<Tagged<f64>> for GlobalSmoothness {
    fn from(t: Tagged<f64>) -> Self {
        GlobalSmoothness::Given(t)
    }
}

/// `beta` with its provenance, checked finite and > 0.
pub(crate) fn resolve_beta<D: Design, L: Loss + ?Sized>(
    source: &GlobalSmoothness,
    loss: &L,
    x: &D,
) -> Result<Tagged<f64>> {
    let t = match source {
        GlobalSmoothness::FromData => global_smoothness(loss, x)?,
        GlobalSmoothness::Given(t) => t.clone(),
        GlobalSmoothness::Private { .. } => {
            return Err(OptimError::Unsupported(
                "the private estimate of beta is drawn by a private fit (DP-SGD); a \
                 non-private solver takes GlobalSmoothness::FromData or Given"
                    .into(),
            ))
        }
    };
    positive("global smoothness beta", t.value)?;
    Ok(t)
}

/// `beta` for a private fit with what it cost: `GlobalSmoothness::Private` is drawn
/// here, charged to `ledger` before the data are read (the bound's own cost first);
/// other sources go through [`resolve_beta`] (the caller charges a pre-spent cost).
/// Returns the tagged value and the pure epsilon charged here (0 for other sources).
///
/// # Privacy
/// See `dp_models::constants::private_global_smoothness` (replace-one; the caller
/// refuses add/remove).
pub(crate) fn resolve_beta_private<D: Design, L: Loss + ?Sized>(
    source: &GlobalSmoothness,
    loss: &L,
    x: &D,
    target_epsilon: f64,
    allow_non_private: bool,
    rng: &mut ChaCha20Rng,
    ledger: &mut Ledger,
) -> Result<(Tagged<f64>, f64, bool)> {
    match source {
        GlobalSmoothness::Private {
            row_norm_bound,
            budget_fraction,
            failure_probability,
        } => {
            if !(budget_fraction.is_finite() && *budget_fraction > 0.0 && *budget_fraction < 1.0) {
                return Err(OptimError::InvalidParameter {
                    name: "budget_fraction",
                    value: budget_fraction.to_string(),
                    expected: "the fraction of epsilon spent on beta must be in (0, 1)",
                });
            }
            let non_private = !row_norm_bound.is_private();
            let bound_cost = charge_pre_spent(
                ledger,
                pre_spent_epsilon(&row_norm_bound.provenance),
                "row norm bound",
            )?;
            let r = row_norm_bound.clone().require_private(allow_non_private)?;
            let budget = remaining_epsilon(
                budget_fraction * target_epsilon,
                bound_cost,
                "row norm bound",
            )?;
            let t = private_global_smoothness(
                loss,
                x,
                r,
                Epsilon::new(budget)?,
                &BoundedSmoothnessOptions {
                    failure_probability: *failure_probability,
                    ..BoundedSmoothnessOptions::default()
                },
                rng,
                ledger,
            )?;
            // The estimate is pure DP (its provenance records its epsilon).
            let cost = match pre_spent_epsilon(&t.provenance) {
                PreSpent::Pure(e) => e + bound_cost,
                PreSpent::Gaussian => {
                    return Err(OptimError::Unsupported(
                        "internal: the private estimate of beta has no pure epsilon".into(),
                    ))
                }
            };
            positive("global smoothness beta", t.value)?;
            Ok((t, cost, non_private))
        }
        other => {
            let t = resolve_beta(other, loss, x)?;
            let np = !t.is_private();
            Ok((t, 0.0, np))
        }
    }
}

/// The coordinate constants a non-private twin uses (any provenance is accepted: the
/// twin claims no privacy).
pub(crate) fn resolve_for_twin<D: Design, L: Loss + ?Sized>(
    source: &Smoothness,
    loss: &L,
    x: &D,
    solver: &str,
) -> Result<Vec<f64>> {
    match source {
        Smoothness::FromData => Ok(coordinate_smoothness(loss, x)?.value),
        Smoothness::Given(t) => Ok(t.value.clone()),
        Smoothness::Private { .. }
        | Smoothness::PrivateBounded { .. }
        | Smoothness::PrivateGaussian { .. } => Err(OptimError::Unsupported(format!(
            "{solver} is non-private and does not estimate constants privately; give \
             Smoothness::FromData or Smoothness::Given"
        ))),
    }
}

/// Under add/remove, refuses an input whose privacy was paid before the fit (`cost`
/// is its pure epsilon, NaN for a Gaussian release): its [`Provenance`] records a cost
/// but not the neighbouring relation it was analysed under, and a replace-one guarantee
/// is not an add/remove one (releasing `n` is replace-one private for free).
///
/// [`Provenance`]: dp_models::constants::Provenance
fn refuse_pre_spent_under_add_remove(
    neighbours: Neighbours,
    cost: PreSpent,
    what: &str,
) -> Result<()> {
    if neighbours != Neighbours::ReplaceOne && !cost.is_free() {
        return Err(OptimError::Unsupported(format!(
            "under add/remove the {what} cannot be privately estimated before the fit: their \
             provenance records a cost but not the neighbouring relation it holds under; give \
             public {what}, or let the fit estimate the M_j (Smoothness::PrivateBounded or \
             Smoothness::PrivateGaussian)"
        )));
    }
    Ok(())
}

/// The constants a private fit will use, and what they cost.
pub(crate) struct ResolvedSmoothness {
    /// The constants with their provenance (already checked against the opt-in).
    pub tagged: Tagged<Vec<f64>>,
    /// The pure epsilon charged for them (`None`: nothing).
    pub spent: Option<f64>,
    /// Whether something computed from the data without privacy was used (the
    /// constants themselves, or DP-CD-P's feature bounds).
    pub uses_non_private: bool,
    /// Whether a Gaussian release was charged for them (then the optimisation must be
    /// calibrated on the whole ledger: the papers' pure-DP budget split does not cover
    /// it).
    pub gaussian: bool,
    /// How many released estimates were raised to their floor and how many lowered to
    /// their ceiling (`None`: nothing was estimated in the fit). Functions of the noisy
    /// release and public constants: publishable.
    pub adjusted: Option<(usize, usize)>,
}

/// Resolves the coordinate constants of a private fit, charging `ledger` for whatever
/// they cost **before** any other release.
///
/// # Privacy
/// * `FromData` and `DataNonPrivate` values are refused without the opt-in.
/// * A `PrivatelyEstimated { epsilon }` value was released before the fit; its epsilon
///   is charged as one pure-DP release.
/// * `Private`: the feature bounds' own cost (if privately estimated) is charged, then
///   the Laplace estimate of `dp_models::constants::private_coordinate_smoothness`
///   charges its `p` releases (each at `epsilon_m / p`, rounded up) as it draws them,
///   with `epsilon_m = budget_fraction * target` minus the bounds' cost. Its sensitivity
///   and proof are at that function.
///
/// The returned `spent` is what was charged, so that the optimisation's budget
/// (`remaining_epsilon(target, spent)`) plus `spent` never exceeds the target.
///
/// Under add/remove (`neighbours`, DP-CD only) `PrivateBounded` is released with its
/// add/remove sensitivity and the stated public count (proof at
/// `dp_models::constants::private_coordinate_smoothness_bounded`); `Private` (analysed
/// under replace-one only) and inputs privately estimated before the fit are refused
/// before anything is charged.
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve_private<D: Design, L: Loss + ?Sized>(
    source: &Smoothness,
    loss: &L,
    x: &D,
    target_epsilon: f64,
    allow_non_private: bool,
    neighbours: Neighbours,
    rng: &mut ChaCha20Rng,
    ledger: &mut Ledger,
) -> Result<ResolvedSmoothness> {
    let p = x.n_features();
    let resolved = match source {
        Smoothness::FromData => ResolvedSmoothness {
            tagged: coordinate_smoothness(loss, x)?,
            spent: None,
            uses_non_private: true,
            gaussian: false,
            adjusted: None,
        },
        Smoothness::Given(t) => {
            refuse_pre_spent_under_add_remove(
                neighbours,
                pre_spent_epsilon(&t.provenance),
                "smoothness constants",
            )?;
            let cost = charge_pre_spent(
                ledger,
                pre_spent_epsilon(&t.provenance),
                "smoothness constants",
            )?;
            ResolvedSmoothness {
                tagged: t.clone(),
                spent: (cost > 0.0).then_some(cost),
                uses_non_private: !t.is_private(),
                gaussian: false,
                adjusted: None,
            }
        }
        Smoothness::Private { .. } if neighbours != Neighbours::ReplaceOne => {
            return Err(OptimError::Unsupported(
                "Smoothness::Private (the DP-CD paper's per-coordinate Laplace estimate) is \
                 analysed under replace-one only; under add/remove use \
                 Smoothness::PrivateBounded or Smoothness::PrivateGaussian"
                    .into(),
            ))
        }
        Smoothness::Private {
            feature_bounds,
            budget_fraction,
        } => {
            let bounds_non_private = !feature_bounds.is_private();
            let bounds = feature_bounds.clone().require_private(allow_non_private)?;
            if bounds.len() != p {
                return Err(OptimError::Shape(format!(
                    "{} feature bounds given for a design with {p} features",
                    bounds.len()
                )));
            }
            let bound_cost = charge_pre_spent(
                ledger,
                pre_spent_epsilon(&feature_bounds.provenance),
                "feature bounds",
            )?;
            let budget_m = remaining_epsilon(
                budget_fraction * target_epsilon,
                bound_cost,
                "feature bounds",
            )?;
            let released = private_coordinate_smoothness_with(
                loss,
                x,
                &bounds,
                Epsilon::new(budget_m)?,
                &PrivateSmoothnessOptions::default(),
                rng,
                ledger,
            )?;
            // What was actually charged (each of the p releases is rounded up).
            let charged = released.epsilon_per_coordinate * p as f64 + bound_cost;
            ResolvedSmoothness {
                tagged: released.estimates,
                spent: Some(charged),
                uses_non_private: bounds_non_private,
                gaussian: false,
                adjusted: Some((released.clamped, 0)),
            }
        }
        Smoothness::PrivateBounded {
            feature_bounds,
            row_norm_bound,
            budget_fraction,
            failure_probability,
        } => {
            let (fb, r, non_private, bound_cost) = resolve_bounds(
                feature_bounds,
                row_norm_bound,
                p,
                allow_non_private,
                neighbours,
                ledger,
            )?;
            let budget_m = remaining_epsilon(
                budget_fraction * target_epsilon,
                bound_cost,
                "row and feature bounds",
            )?;
            let released = private_coordinate_smoothness_bounded(
                loss,
                x,
                SmoothnessBounds {
                    feature_bounds: fb.as_deref(),
                    row_norm_bound: r,
                },
                Epsilon::new(budget_m)?,
                &BoundedSmoothnessOptions {
                    failure_probability: *failure_probability,
                    neighbours,
                    ..BoundedSmoothnessOptions::default()
                },
                rng,
                ledger,
            )?;
            ResolvedSmoothness {
                tagged: released.estimates,
                spent: Some(released.epsilon + bound_cost),
                uses_non_private: non_private,
                gaussian: false,
                adjusted: Some((released.floored, released.ceiled)),
            }
        }
        Smoothness::PrivateGaussian { .. } => {
            return Err(OptimError::Unsupported(
                "Smoothness::PrivateGaussian is a Gaussian release composed with the fit's \
                 Gaussian steps; this solver supports it only through DP-CD (use \
                 Smoothness::PrivateBounded here)"
                    .into(),
            ))
        }
    };
    // The opt-in gate for the constants themselves.
    let tagged = resolved.tagged;
    let provenance = tagged.provenance;
    let value = tagged.require_private(allow_non_private)?;
    Ok(ResolvedSmoothness {
        tagged: Tagged { value, provenance },
        ..resolved
    })
}

/// The noise multiplier of [`Smoothness::PrivateGaussian`]'s release for the target
/// `(epsilon, delta)` and GDP share `fraction` (data-free): with `z1` the multiplier of
/// one Gaussian release spending the whole target under GDP (`mu = 1/z1`), the release
/// gets `z = z1 / sqrt(fraction)`, i.e. `mu_m^2 = fraction * mu^2`.
pub(crate) fn gaussian_smoothness_multiplier(
    privacy: &crate::privacy::CheckedPrivacy,
    fraction: f64,
) -> Result<f64> {
    let z1 = dp_accounting::calibrate::single_release_multiplier(privacy.epsilon, privacy.delta)?;
    positive("smoothness noise multiplier", z1 / fraction.sqrt())
}

/// The noise multiplier of [`Smoothness::PrivateGaussian`]'s release in DP-GCD's zCDP
/// variant (data-free): the release gets the share `fraction` of the largest zCDP
/// budget `rho` meeting the target, `rho_m = fraction * rho`, i.e. `z = 1 / sqrt(2 rho_m)`
/// (the Gaussian mechanism of multiplier `z` is `1 / (2 z^2)`-zCDP, Bun & Steinke 2016,
/// Prop. 1.6), rounded so that its cost never exceeds the share.
pub(crate) fn zcdp_smoothness_multiplier(
    privacy: &crate::privacy::CheckedPrivacy,
    fraction: f64,
) -> Result<f64> {
    let rho = dp_accounting::zcdp::rho_for_target(privacy.epsilon, privacy.delta)?;
    let z = 1.0 / (2.0 * fraction * rho).sqrt();
    // Round up: 1 / (2 z^2) <= fraction * rho.
    let z = if 1.0 / (2.0 * z * z) > fraction * rho {
        f64::from_bits(z.to_bits() + 1)
    } else {
        z
    };
    positive("smoothness noise multiplier", z)
}

/// Feature bounds, row-norm bound, whether one was non-private, their charged epsilon.
type ResolvedBounds = (Option<Vec<f64>>, Option<f64>, bool, f64);

/// The bounds of a bounded private estimate of the `M_j` (both
/// [`Smoothness::PrivateBounded`] and [`Smoothness::PrivateGaussian`]): each bound given
/// must be public or private (non-private ones only with `allow`), the feature bounds
/// must have `p` entries, and what releasing the bounds cost (their provenance) is
/// refused under add/remove and otherwise charged to `ledger` before anything else.
/// Returns the feature bounds, the row-norm bound, whether a bound was non-private, and
/// the epsilon charged for them.
fn resolve_bounds(
    feature_bounds: &Option<Tagged<Vec<f64>>>,
    row_norm_bound: &Option<Tagged<f64>>,
    p: usize,
    allow: bool,
    neighbours: Neighbours,
    ledger: &mut Ledger,
) -> Result<ResolvedBounds> {
    let mut non_private = false;
    let mut bound_cost = PreSpent::Pure(0.0);
    let fb = match feature_bounds {
        Some(t) => {
            non_private |= !t.is_private();
            bound_cost += pre_spent_epsilon(&t.provenance);
            let b = t.clone().require_private(allow)?;
            if b.len() != p {
                return Err(OptimError::Shape(format!(
                    "{} feature bounds given for a design with {p} features",
                    b.len()
                )));
            }
            Some(b)
        }
        None => None,
    };
    let r = match row_norm_bound {
        Some(t) => {
            non_private |= !t.is_private();
            bound_cost += pre_spent_epsilon(&t.provenance);
            Some(t.clone().require_private(allow)?)
        }
        None => None,
    };
    refuse_pre_spent_under_add_remove(neighbours, bound_cost, "row and feature bounds")?;
    let bound_cost = charge_pre_spent(ledger, bound_cost, "row and feature bounds")?;
    Ok((fb, r, non_private, bound_cost))
}

/// [`resolve_private`], and [`Smoothness::PrivateGaussian`] (which needs the target's
/// delta to set its noise): the bounds' own pre-spent cost is charged first (pure DP),
/// then the Gaussian release of `dp_models::constants::private_coordinate_smoothness_gaussian`
/// (charged there before it reads the data; proof there). The caller must calibrate
/// the optimisation on the whole ledger (`gaussian` is set). `neighbours`: the fit's
/// relation and, under add/remove, the stated public count that normalises the
/// estimates (see [`resolve_private`]; the Gaussian release's add/remove proof is at
/// `dp_models::constants::private_coordinate_smoothness_gaussian`). `multiplier`
/// computes the release's noise multiplier from its `budget_fraction` (DP-CD: a share of
/// the Gaussian-DP `mu^2`, [`gaussian_smoothness_multiplier`]; DP-GCD: a share of the
/// zCDP `rho`, [`zcdp_smoothness_multiplier`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve_private_any<D: Design, L: Loss + ?Sized>(
    source: &Smoothness,
    loss: &L,
    x: &D,
    privacy: &crate::privacy::CheckedPrivacy,
    neighbours: Neighbours,
    rng: &mut ChaCha20Rng,
    ledger: &mut Ledger,
    multiplier: &dyn Fn(f64) -> Result<f64>,
) -> Result<ResolvedSmoothness> {
    let allow = privacy.allow_non_private_constants;
    let Smoothness::PrivateGaussian {
        feature_bounds,
        row_norm_bound,
        budget_fraction,
        failure_probability,
    } = source
    else {
        return resolve_private(
            source,
            loss,
            x,
            privacy.epsilon.get(),
            allow,
            neighbours,
            rng,
            ledger,
        );
    };
    let p = x.n_features();
    let (fb, r, non_private, bound_cost) =
        resolve_bounds(feature_bounds, row_norm_bound, p, allow, neighbours, ledger)?;
    let z = multiplier(*budget_fraction)?;
    let released = private_coordinate_smoothness_gaussian(
        loss,
        x,
        SmoothnessBounds {
            feature_bounds: fb.as_deref(),
            row_norm_bound: r,
        },
        z,
        &BoundedSmoothnessOptions {
            failure_probability: *failure_probability,
            neighbours,
            ..BoundedSmoothnessOptions::default()
        },
        rng,
        ledger,
    )?;
    let tagged = released.estimates;
    let provenance = tagged.provenance;
    let value = tagged.require_private(allow)?;
    Ok(ResolvedSmoothness {
        tagged: Tagged { value, provenance },
        spent: (bound_cost > 0.0).then_some(bound_cost),
        uses_non_private: non_private,
        gaussian: true,
        adjusted: Some((released.floored, released.ceiled)),
    })
}
