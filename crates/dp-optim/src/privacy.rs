//! Privacy vocabulary shared by every private solver: the privacy sub-builder
//! ([`PrivacyParams`]), the accounting choice, the neighbouring relation and the achieved
//! guarantee.
//!
//! This module sits at the bottom of the crate's layers (it imports nothing from the
//! solvers): `error` <- `privacy` <- `schedule` <- `plan` <- `model` <- `solver` <- the
//! solvers (`cd`, `dp_cd`, `sgd`, `dp_sgd`, `dp_gcd`).

use crate::error::{OptimError, Result};
use dp_accounting::calibrate::{Accountant, Calibration, RdpConversion};
use dp_accounting::ledger::{Charge, Ledger};
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
///   **stated public input** (DP-SGD's and DP-CD's `public_n`), never from the data.
///
/// The default is replace-one, the relation of every solver unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Adjacency {
    /// Datasets of the same size `n` differing in one record.
    #[default]
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
///
/// A value released by a Gaussian mechanism before the fit
/// ([`Provenance::PrivatelyEstimatedGaussian`](dp_models::constants::Provenance)) has no
/// pure epsilon: this returns [`PreSpent::Gaussian`] for it, which [`charge_pre_spent`]
/// refuses with an error (never charged as 0).
pub(crate) fn pre_spent_epsilon(provenance: &dp_models::constants::Provenance) -> PreSpent {
    match provenance {
        dp_models::constants::Provenance::PrivatelyEstimated { epsilon } => {
            PreSpent::Pure(epsilon.get())
        }
        dp_models::constants::Provenance::PrivatelyEstimatedGaussian { .. } => PreSpent::Gaussian,
        _ => PreSpent::Pure(0.0),
    }
}

/// What something released before the fit cost: a pure epsilon (0: nothing), or a
/// Gaussian release, whose cost has no pure epsilon (the sum of costs with a Gaussian
/// one is Gaussian; it is refused where a pure cost is charged, never counted as 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PreSpent {
    /// Pure `epsilon`-DP (0: free).
    Pure(f64),
    /// Released by a Gaussian mechanism.
    Gaussian,
}

impl PreSpent {
    /// Nothing was spent.
    pub(crate) fn is_free(self) -> bool {
        self == PreSpent::Pure(0.0)
    }
}

impl From<f64> for PreSpent {
    fn from(epsilon: f64) -> Self {
        PreSpent::Pure(epsilon)
    }
}

impl std::ops::Add for PreSpent {
    type Output = PreSpent;
    fn add(self, other: PreSpent) -> PreSpent {
        match (self, other) {
            (PreSpent::Pure(a), PreSpent::Pure(b)) => PreSpent::Pure(a + b),
            _ => PreSpent::Gaussian,
        }
    }
}

impl std::ops::AddAssign for PreSpent {
    fn add_assign(&mut self, other: PreSpent) {
        *self = *self + other;
    }
}

/// Charges the pure-DP cost `epsilon` of something released before the fit (nothing
/// when it is 0), labelled `what`, and returns `epsilon`.
///
/// Every provenance epsilon is finite and `>= 0` where it is created
/// ([`dp_models::constants::SpentEpsilon`]), so sums of them are too; a negative or
/// infinite `epsilon` reaching here anyway is refused (never charged as free budget), and
/// so is a [`PreSpent::Gaussian`] cost.
pub(crate) fn charge_pre_spent(
    ledger: &mut dp_accounting::ledger::Ledger,
    cost: impl Into<PreSpent>,
    what: &str,
) -> Result<f64> {
    let epsilon = match cost.into() {
        PreSpent::Pure(epsilon) => epsilon,
        PreSpent::Gaussian => {
            return Err(OptimError::Unsupported(format!(
                "the {what} were released by a Gaussian mechanism before the fit; their \
                 cost is not a pure epsilon and cannot be charged as one: estimate them \
                 inside the fit (Smoothness::PrivateGaussian) so that the Gaussian release \
                 joins its ledger"
            )))
        }
    };
    if epsilon.is_nan() || epsilon < 0.0 || epsilon == f64::INFINITY {
        return Err(OptimError::Unsupported(format!(
            "the {what} carry a privacy cost of epsilon = {epsilon}, which is not finite and \
             >= 0"
        )));
    }
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

/// How a plan's noise multiplier was calibrated against its ledger.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LedgerCalibration {
    /// The calibration (multiplier, achieved epsilon, attaining order).
    pub calibration: Calibration,
    /// True when `calibration.epsilon` is the guarantee of the whole ledger (prior
    /// charges + the plan), false when the releases were calibrated alone on what the
    /// papers' budget split leaves them.
    pub whole_ledger: bool,
}

/// The reported guarantee: the guarantee of everything in `ledger` under `accountant`,
/// with a description of what it composes.
///
/// # Privacy
/// When the calibration searched over this ledger (`whole_ledger`), its achieved
/// epsilon *is* the ledger's guarantee (the fit charged exactly the dry run it was
/// searched on), and is not recomputed; otherwise the ledger is accounted once. A
/// result above the target is an internal error, never reported as a success.
pub(crate) fn ledger_guarantee(
    ledger: &Ledger,
    calibrated: &LedgerCalibration,
    target: &CheckedPrivacy,
    accountant: Accountant,
    adjacency: Adjacency,
) -> Result<Guarantee> {
    let delta = target.delta;
    let epsilon = if calibrated.whole_ledger {
        calibrated.calibration.epsilon
    } else {
        ledger.guarantee(delta, accountant)?
    };
    guarantee_of(ledger, epsilon, target, accountant, adjacency, true, true)
}

/// A [`Guarantee`] of `epsilon` at `target`'s delta for `ledger` under `accountant`.
/// With `enforce`, an epsilon above the target is an internal error (the reported
/// guarantee); without, it is returned as is (an alternative analysis, for comparison).
pub(crate) fn guarantee_of(
    ledger: &Ledger,
    epsilon: f64,
    target: &CheckedPrivacy,
    accountant: Accountant,
    adjacency: Adjacency,
    proven: bool,
    enforce: bool,
) -> Result<Guarantee> {
    if epsilon.is_nan() || (enforce && epsilon > target.epsilon.get()) {
        return Err(OptimError::Unsupported(format!(
            "internal: the accounted epsilon {epsilon} exceeds the target {}; nothing was \
             returned",
            target.epsilon.get()
        )));
    }
    Ok(Guarantee {
        epsilon,
        delta: target.delta.get(),
        adjacency,
        how: format!(
            "{} accounting of the ledger: {}",
            accountant_name(accountant),
            describe(ledger)
        ),
        proven,
    })
}

/// A short name of an accountant for reports.
pub(crate) fn accountant_name(accountant: Accountant) -> String {
    match accountant {
        Accountant::Rdp(RdpConversion::Mironov) => "RDP (Mironov conversion)".into(),
        Accountant::Rdp(RdpConversion::Improved) => "RDP (improved conversion)".into(),
        Accountant::Zcdp => "zCDP".into(),
        Accountant::Gdp => "Gaussian DP".into(),
        Accountant::Pld => "PLD".into(),
        Accountant::MomentsAccountant => "moments accountant".into(),
        Accountant::Composition(m) => format!("{m:?} composition"),
    }
}

/// What a ledger composes, in words ("1 pure 0.1-DP release (constants) + 1200 Gaussian
/// releases at noise multiplier 31.2").
pub(crate) fn describe(ledger: &Ledger) -> String {
    describe_charges(ledger.entries())
}

/// [`describe`] for a list of charges.
pub(crate) fn describe_charges(charges: &[Charge]) -> String {
    let parts: Vec<String> = charges
        .iter()
        .map(|c| match c {
            Charge::Gaussian {
                noise_multiplier,
                count,
            } => format!(
                "{count} Gaussian release{} at noise multiplier {noise_multiplier:.6}",
                if *count == 1 { "" } else { "s" }
            ),
            Charge::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                count,
            } => format!(
                "{count} Poisson-subsampled Gaussian releases (q = {sampling_rate:.6}, noise \
                 multiplier {noise_multiplier:.6})"
            ),
            Charge::SampledWithoutReplacementGaussian {
                sampling_rate,
                noise_multiplier,
                count,
            } => format!(
                "{count} Gaussian releases on batches sampled without replacement \
                 (fraction {sampling_rate:.6}, noise multiplier {noise_multiplier:.6})"
            ),
            Charge::PureDp {
                epsilon,
                count,
                label,
            } => format!("{count} x {epsilon:.6e}-DP ({label})"),
            Charge::ExponentialMechanism { epsilon, count } => {
                format!("{count} exponential-mechanism selections ({epsilon:.6e}-DP)")
            }
            Charge::Selection {
                base,
                stopping,
                count,
            } => format!(
                "{count} private selection(s) of the best of a random number of runs \
                 ({stopping:?}), each run: [{}]",
                describe_charges(base)
            ),
        })
        .collect();
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(" + ")
    }
}
