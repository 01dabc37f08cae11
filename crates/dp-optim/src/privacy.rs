//! Privacy vocabulary shared by every private solver: the privacy sub-builder
//! ([`PrivacyParams`]), the accounting choice, the neighbouring relation and the achieved
//! guarantee.
//!
//! This module sits at the bottom of the crate's layers (it imports nothing from the
//! solvers): `error` <- `privacy` <- `schedule` <- `plan` <- `model` <- `solver` <- the
//! solvers (`cd`, `dp_cd`, `sgd`, `dp_sgd`, `dp_gcd`).

use crate::error::{OptimError, Result};
use dp_accounting::calibrate::{Accountant, RdpConversion};
use dp_accounting::{Delta, Epsilon};
use serde::{Deserialize, Serialize};

/// How the noise is calibrated to the target `(epsilon, delta)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub enum Accounting {
    /// What the papers do: RDP of the mechanism with Mironov's conversion
    /// (Prop. 3 of Mironov 2017), the order optimised over a continuum (DP-CD: the
    /// paper's Eq. 18; DP-SGD: the sampled Gaussian RDP of Mironov, Talwar & Zhang 2019,
    /// or the subsampled RDP of Wang, Balle & Kasiviswanathan 2019 for fixed-size
    /// batches under replace-one).
    #[default]
    Paper,
    /// The tightest accountant available for the mechanism: for DP-CD, Gaussian DP
    /// (the composition of `T*K` Gaussian releases of noise multiplier `s` is exactly
    /// `sqrt(T*K)/s`-GDP; Dong, Roth & Su 2022) with the analytic Gaussian
    /// `delta(epsilon)` curve (Balle & Wang 2018); for DP-SGD with Poisson sampling, the
    /// privacy loss distribution accountant (an upper bound, never reported above the
    /// RDP bound); for fixed-size batches, RDP with the improved conversion.
    Exact,
    /// Any accountant of `dp-accounting` (must support the solver's mechanism).
    Custom(Accountant),
}

impl Accounting {
    /// Short name for reports ("paper", "exact", or the accountant's debug name).
    pub fn name(&self) -> String {
        match self {
            Accounting::Paper => "paper".into(),
            Accounting::Exact => "exact".into(),
            Accounting::Custom(a) => format!("{a:?}"),
        }
    }
    /// The accountant for a composition of plain Gaussian releases (DP-CD).
    pub fn for_gaussian(&self) -> Accountant {
        match self {
            Accounting::Paper => Accountant::Rdp(RdpConversion::Mironov),
            Accounting::Exact => Accountant::Gdp,
            Accounting::Custom(a) => *a,
        }
    }
    /// The accountant for a composition of Poisson-subsampled Gaussian releases.
    pub fn for_poisson_subsampled(&self) -> Accountant {
        match self {
            Accounting::Paper => Accountant::Rdp(RdpConversion::Mironov),
            Accounting::Exact => Accountant::Pld,
            Accounting::Custom(a) => *a,
        }
    }
    /// The accountant for a composition of Gaussian releases on batches sampled without
    /// replacement (RDP is the only analysis implemented for them).
    pub fn for_sampled_without_replacement(&self) -> Accountant {
        match self {
            Accounting::Paper => Accountant::Rdp(RdpConversion::Mironov),
            Accounting::Exact => Accountant::Rdp(RdpConversion::Improved),
            Accounting::Custom(a) => *a,
        }
    }
}

/// The neighbouring relation a guarantee refers to.
///
/// * [`Adjacency::ReplaceOne`]: `D` and `D'` have the same number of records `n` and
///   differ in one of them (any values). `n` itself is then public: every solver may
///   plan with it, and reports it.
/// * [`Adjacency::AddRemove`]: `D'` is `D` with one record added or removed. `n` is then
///   private, so a solver whose plan depends on the number of records must take it as a
///   **stated public input** (DP-SGD's `public_n`), never from the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Adjacency {
    /// Datasets of the same size `n` differing in one record.
    ReplaceOne,
    /// Datasets differing by adding or removing one record.
    AddRemove,
}

impl Adjacency {
    /// "replace-one" or "add/remove".
    pub fn name(&self) -> &'static str {
        match self {
            Adjacency::ReplaceOne => "replace-one",
            Adjacency::AddRemove => "add/remove",
        }
    }
}

/// An achieved `(epsilon, delta)`-DP guarantee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Guarantee {
    /// Achieved epsilon (an upper bound rounded up; never above the target).
    pub epsilon: f64,
    /// delta (never above the target).
    pub delta: f64,
    /// Under which neighbouring relation.
    pub adjacency: Adjacency,
    /// The analysis that gives it (accountant, what it composes).
    pub how: String,
    /// False only when the analysis rests on a claim without a proof this library
    /// accepts (DP-GCD's `RnmCalibration::Paper`, kept to reproduce the paper).
    #[serde(default = "yes")]
    pub proven: bool,
}

fn yes() -> bool {
    true
}

/// The privacy part of every private solver's builder: target `(epsilon, delta)`, the
/// accounting, and whether constants computed from the data without privacy are
/// accepted.
///
/// ```
/// use dp_optim::{Accounting, PrivacyParams};
/// let privacy = PrivacyParams::new(1.0, 1e-6).accounting(Accounting::Exact);
/// assert!(privacy.check().is_ok());
/// assert!(PrivacyParams::new(0.0, 1e-6).check().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrivacyParams {
    epsilon: Option<f64>,
    delta: Option<f64>,
    accounting: Accounting,
    allow_non_private_constants: bool,
}

impl PrivacyParams {
    /// Target `(epsilon, delta)` of the whole fit (everything charged composes to at
    /// most this).
    pub fn new(epsilon: f64, delta: f64) -> Self {
        Self {
            epsilon: Some(epsilon),
            delta: Some(delta),
            ..Self::default()
        }
    }
    /// Sets the target epsilon (> 0).
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }
    /// Sets the target delta, in (0, 1).
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = Some(delta);
        self
    }
    /// Calibration of the noise (default [`Accounting::Paper`]).
    pub fn accounting(mut self, accounting: Accounting) -> Self {
        self.accounting = accounting;
        self
    }
    /// Accept smoothness constants (or bounds) computed from the data **without
    /// privacy**. Their release is not covered by the guarantee, and the report says so
    /// through their provenance; the papers' experiments make this choice.
    pub fn allow_non_private_constants(mut self, allow: bool) -> Self {
        self.allow_non_private_constants = allow;
        self
    }
    /// Validates the target.
    pub fn check(&self) -> Result<CheckedPrivacy> {
        Ok(CheckedPrivacy {
            epsilon: Epsilon::new(self.epsilon.ok_or(OptimError::Missing("epsilon"))?)?,
            delta: Delta::new(self.delta.ok_or(OptimError::Missing("delta"))?)?,
            accounting: self.accounting,
            allow_non_private_constants: self.allow_non_private_constants,
        })
    }
}

/// [`PrivacyParams`] after validation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckedPrivacy {
    /// Target epsilon.
    pub epsilon: Epsilon,
    /// Target delta.
    pub delta: Delta,
    /// Accounting.
    pub accounting: Accounting,
    /// Opt-in to constants computed from the data without privacy.
    pub allow_non_private_constants: bool,
}

/// Builder methods every private solver shares, forwarding to its [`PrivacyParams`].
macro_rules! privacy_setters {
    () => {
        /// Replaces the whole privacy part (target, accounting, opt-ins).
        pub fn privacy(mut self, privacy: $crate::privacy::PrivacyParams) -> Self {
            self.privacy = privacy;
            self
        }
        /// Target epsilon of the whole fit (> 0).
        pub fn epsilon(mut self, epsilon: f64) -> Self {
            self.privacy = self.privacy.epsilon(epsilon);
            self
        }
        /// Target delta of the whole fit, in (0, 1).
        pub fn delta(mut self, delta: f64) -> Self {
            self.privacy = self.privacy.delta(delta);
            self
        }
        /// Calibration of the noise.
        pub fn accounting(mut self, accounting: $crate::privacy::Accounting) -> Self {
            self.privacy = self.privacy.accounting(accounting);
            self
        }
        /// Accept constants computed from the data without privacy (not covered by the
        /// guarantee; see [`PrivacyParams::allow_non_private_constants`](crate::PrivacyParams::allow_non_private_constants)).
        pub fn allow_non_private_constants(mut self, allow: bool) -> Self {
            self.privacy = self.privacy.allow_non_private_constants(allow);
            self
        }
    };
}
pub(crate) use privacy_setters;

/// Where a private solver's constants came from, charged to its ledger when they cost
/// privacy.
///
/// # Privacy
/// A constant tagged [`Provenance::PrivatelyEstimated`](dp_models::constants::Provenance)
/// was released by a mechanism of pure `epsilon`-DP before the fit (on the same data);
/// it is charged to the fit's ledger as [`dp_accounting::ledger::Charge::PureDp`] so
/// that the reported guarantee composes it, and the optimisation's budget is the target
/// minus that cost (basic composition, Dwork & Roth 2014, Thm 3.16).
pub(crate) fn pre_spent_epsilon(provenance: &dp_models::constants::Provenance) -> f64 {
    match provenance {
        dp_models::constants::Provenance::PrivatelyEstimated { epsilon } => *epsilon,
        _ => 0.0,
    }
}

/// Charges the pure-DP cost `epsilon` of something released before the fit (nothing
/// when it is 0), labelled `what`, and returns `epsilon`.
pub(crate) fn charge_pre_spent(
    ledger: &mut dp_accounting::ledger::Ledger,
    epsilon: f64,
    what: &str,
) -> Result<f64> {
    if epsilon > 0.0 {
        ledger.charge(dp_accounting::ledger::Charge::PureDp {
            epsilon,
            count: 1,
            label: format!("{what} estimated before the fit"),
        })?;
    }
    Ok(epsilon)
}

/// The optimisation's share of the target after `spent` was charged elsewhere, shaved
/// by a few ulps so that `spent + share` never exceeds the target in floating point.
pub(crate) fn remaining_epsilon(target: f64, spent: f64, what: &'static str) -> Result<f64> {
    if spent == 0.0 {
        return Ok(target);
    }
    let rest = (target - spent) * (1.0 - 4.0 * f64::EPSILON);
    if rest.is_nan() || rest <= 0.0 {
        return Err(OptimError::InvalidParameter {
            name: what,
            value: format!("{spent} of epsilon {target}"),
            expected: "the privacy already spent on the constants must leave a positive \
                       budget for the optimisation: raise epsilon or estimate the \
                       constants with less",
        });
    }
    Ok(rest)
}

/// The reported guarantee: the smaller of two valid bounds on the composition of
/// everything in `ledger` — the ledger's own accounting under `accountant`, and the
/// calibration's `(calibrated epsilon of the noisy releases) + (pure epsilon charged
/// for constants)` by basic composition — with the name of the one used.
///
/// # Privacy
/// Both bounds cover every charge in the ledger (the second adds the pure charges to the
/// calibrated releases' epsilon by basic composition, Dwork & Roth 2014, Thm 3.16), so
/// their minimum is valid. A result above the target is an internal error, never
/// reported as a success.
pub(crate) fn ledger_guarantee(
    ledger: &dp_accounting::ledger::Ledger,
    target: &CheckedPrivacy,
    accountant: Accountant,
    adjacency: Adjacency,
    calibrated: (f64, String),
) -> Result<Guarantee> {
    let delta = target.delta;
    let (cal_eps, cal_how) = calibrated;
    let mut best = (cal_eps, cal_how);
    if let Ok(e) = ledger.guarantee(delta, accountant) {
        if e < best.0 {
            best = (
                e,
                format!(
                    "{accountant:?} accounting of the whole ledger ({} charges)",
                    ledger.entries().len()
                ),
            );
        }
    }
    if best.0.is_nan() || best.0 > target.epsilon.get() {
        return Err(OptimError::Unsupported(format!(
            "internal: the accounted epsilon {} exceeds the target {}; nothing was returned",
            best.0,
            target.epsilon.get()
        )));
    }
    Ok(Guarantee {
        epsilon: best.0,
        delta: delta.get(),
        adjacency,
        how: best.1,
        proven: true,
    })
}
