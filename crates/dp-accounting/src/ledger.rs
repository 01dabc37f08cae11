//! A privacy ledger: records every mechanism invocation (run-length encoded), reports
//! the overall guarantee under each accountant, serialises with serde, and refuses a
//! charge that would exceed a budget.
//!
//! # Privacy
//! The guarantee is that of the adaptive composition of all recorded charges:
//! * `Rdp` / `MomentsAccountant`: RDP curves add (Mironov 2017, Prop. 1). Per charge:
//!   Gaussian `alpha/(2 z^2)`; subsampled Gaussian (see [`crate::subsampled`]);
//!   pure eps-DP: the Renyi divergence of eps-randomised response, which dominates every
//!   eps-DP mechanism ([`crate::mechanisms::pure_dp_rdp`]; it is below `eps` and
//!   `alpha eps^2 / 2`); exponential mechanism (eps-DP and eps-bounded range): the smaller
//!   of that and `alpha eps^2 / 8` (Cesar & Rogers 2021, Thm 3.3).
//! * `Zcdp`: rho adds; Gaussian `1/(2 z^2)`, pure `eps^2/2`, exponential `eps^2/8`.
//!   Subsampled Gaussian charges are refused (not zCDP with a useful rho).
//! * `Gdp`: Gaussian charges compose exactly to `mu = sqrt(sum count / z^2)`; pure and
//!   exponential-mechanism charges are then added by basic composition
//!   (`(eps1, delta) + (eps2, 0) -> (eps1 + eps2, delta)`, Dwork & Roth Thm 3.16).
//!   Subsampled Gaussian charges are refused.
//! * `Pld`: Gaussian charges compose exactly into one Gaussian (`1/z^2` adds); each
//!   distinct subsampled Gaussian is composed by the PLD accountant of [`crate::pld`];
//!   the groups split delta equally and their epsilons add (basic composition); pure and
//!   exponential-mechanism charges add `count * eps`.

use crate::calibrate::{Accountant, Plan, PlanEpsilon, PlanMechanism};
use crate::composition::CompositionMethod;
use crate::error::{AccountingError, Result};
use crate::gdp::gdp_epsilon;
use crate::num::round_up;
use crate::params::{Delta, Epsilon, NoiseMultiplier, SamplingRate};
use crate::rdp::{epsilon_from_curve, OrderGrid, RdpConversion};
use crate::zcdp::linear_curve_epsilon;
use serde::{Deserialize, Serialize};

/// One recorded use of a mechanism, `count` times in a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Charge {
    /// `count` Gaussian releases at noise multiplier `noise_multiplier` (std / L2 sensitivity).
    Gaussian {
        /// Noise multiplier z (> 0).
        noise_multiplier: f64,
        /// Number of releases (>= 1).
        count: u64,
    },
    /// `count` Poisson-subsampled Gaussian releases (add/remove-one neighbours).
    SubsampledGaussian {
        /// Poisson sampling rate q in (0, 1].
        sampling_rate: f64,
        /// Noise multiplier z (> 0).
        noise_multiplier: f64,
        /// Number of releases (>= 1).
        count: u64,
    },
    /// `count` releases of the Gaussian mechanism on a batch of a fixed size drawn
    /// without replacement (sampling fraction `gamma = batch / n`), under replace-one
    /// neighbours; `noise_multiplier` is the noise std over the replace-one sensitivity.
    /// Accounted by RDP only (Wang, Balle & Kasiviswanathan 2019; see
    /// [`crate::sampled_wor`]).
    SampledWithoutReplacementGaussian {
        /// Sampling fraction `gamma = batch size / n`, in (0, 1].
        sampling_rate: f64,
        /// Noise std over the replace-one L2 sensitivity (> 0).
        noise_multiplier: f64,
        /// Number of releases (>= 1).
        count: u64,
    },
    /// `count` releases of a pure `epsilon`-DP mechanism (Laplace, report-noisy-max, ...).
    PureDp {
        /// Pure epsilon of one release (> 0).
        epsilon: f64,
        /// Number of releases (>= 1).
        count: u64,
        /// What was released (for the record; merging requires equal labels).
        label: String,
    },
    /// `count` runs of the exponential mechanism (Gumbel report-noisy-max) that are each
    /// `epsilon`-DP and `epsilon`-bounded-range.
    ExponentialMechanism {
        /// Privacy parameter of one run (> 0).
        epsilon: f64,
        /// Number of runs (>= 1).
        count: u64,
    },
    /// `count` private selections (see [`crate::selection`]): a base algorithm whose
    /// one run charges `base` is run a random number of times drawn by `stopping`, and
    /// only the best output is released. RDP (Papernot & Steinke 2022) or pure DP (Liu &
    /// Talwar 2019); a ledger holding one selection and nothing else reports
    /// [`crate::selection::selection_epsilon`] under every accountant.
    Selection {
        /// The charges of one run of the base algorithm.
        base: Vec<Charge>,
        /// The distribution of the number of runs and its analysis.
        stopping: crate::selection::Stopping,
        /// Number of selections (>= 1).
        count: u64,
    },
}

fn bad(name: &'static str, value: f64, expected: &'static str) -> AccountingError {
    AccountingError::InvalidParameter {
        name,
        value,
        expected,
    }
}

impl Charge {
    fn count(&self) -> u64 {
        match self {
            Charge::Gaussian { count, .. }
            | Charge::SampledWithoutReplacementGaussian { count, .. }
            | Charge::SubsampledGaussian { count, .. }
            | Charge::PureDp { count, .. }
            | Charge::ExponentialMechanism { count, .. }
            | Charge::Selection { count, .. } => *count,
        }
    }

    fn count_mut(&mut self) -> &mut u64 {
        match self {
            Charge::Gaussian { count, .. }
            | Charge::SampledWithoutReplacementGaussian { count, .. }
            | Charge::SubsampledGaussian { count, .. }
            | Charge::PureDp { count, .. }
            | Charge::ExponentialMechanism { count, .. }
            | Charge::Selection { count, .. } => count,
        }
    }

    /// The pure epsilon of one release, for pure-DP charges (`PureDp`,
    /// `ExponentialMechanism`); `None` for the noisy ones.
    fn pure_epsilon(&self) -> Option<f64> {
        match self {
            Charge::PureDp { epsilon, .. } | Charge::ExponentialMechanism { epsilon, .. } => {
                Some(*epsilon)
            }
            // Liu & Talwar (2019, Thm 3.1): a pure eps-DP base with uncapped geometric
            // stopping gives a 3 eps-DP selection. With a cap T the selection is not
            // pure DP (when the cap binds it is close to best-of-T, whose epsilon grows
            // with T): it is reported through the cap's (eps, delta) branch by
            // `selection_epsilon`, never as pure here.
            Charge::Selection {
                base,
                stopping: crate::selection::Stopping::LiuTalwar { cap: None, .. },
                ..
            } => crate::selection::base_pure_epsilon(base).map(|e| 3.0 * e),
            _ => None,
        }
    }

    /// `count` times the pure epsilon of one release, for pure charges.
    pub(crate) fn pure_epsilon_total(&self) -> Option<f64> {
        self.pure_epsilon().map(|e| e * self.count() as f64)
    }

    /// `count` times the per-release RDP at order `a`.
    pub(crate) fn rdp_total(&self, a: f64) -> f64 {
        let r = self.rdp(a);
        if r == 0.0 {
            0.0
        } else {
            r * self.count() as f64
        }
    }

    /// The [`Plan`] (under `accountant`) and noise multiplier of a noisy charge; `None`
    /// for pure charges.
    fn as_plan(&self, accountant: Accountant) -> Result<Option<(Plan, NoiseMultiplier)>> {
        let (mechanism, z) = match self {
            Charge::Gaussian {
                noise_multiplier, ..
            } => (PlanMechanism::Gaussian, *noise_multiplier),
            Charge::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => (
                PlanMechanism::SubsampledGaussian {
                    sampling_rate: SamplingRate::new(*sampling_rate)?,
                },
                *noise_multiplier,
            ),
            Charge::SampledWithoutReplacementGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => (
                PlanMechanism::SampledWithoutReplacementGaussian {
                    sampling_rate: SamplingRate::new(*sampling_rate)?,
                },
                *noise_multiplier,
            ),
            Charge::PureDp { .. }
            | Charge::ExponentialMechanism { .. }
            | Charge::Selection { .. } => return Ok(None),
        };
        Ok(Some((
            Plan {
                mechanism,
                steps: self.count(),
                accountant,
            },
            NoiseMultiplier::new(z)?,
        )))
    }

    /// Validates the parameters of the charge.
    pub fn validate(&self) -> Result<()> {
        let pos = |name, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(name, v, "must be finite and > 0"))
            }
        };
        match self {
            Charge::Gaussian {
                noise_multiplier, ..
            } => pos("noise multiplier", *noise_multiplier)?,
            Charge::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            }
            | Charge::SampledWithoutReplacementGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => {
                pos("noise multiplier", *noise_multiplier)?;
                if !(sampling_rate.is_finite() && *sampling_rate > 0.0 && *sampling_rate <= 1.0) {
                    return Err(bad("sampling rate", *sampling_rate, "must be in (0, 1]"));
                }
            }
            Charge::PureDp { epsilon, .. } | Charge::ExponentialMechanism { epsilon, .. } => {
                pos("epsilon", *epsilon)?
            }
            Charge::Selection { base, stopping, .. } => {
                stopping.check()?;
                if base.is_empty() {
                    return Err(AccountingError::InvalidCount {
                        name: "number of base charges of a selection",
                        value: 0,
                        expected: "the base algorithm must charge something",
                    });
                }
                for c in base {
                    c.validate()?;
                }
            }
        }
        if self.count() == 0 {
            return Err(AccountingError::InvalidCount {
                name: "charge count",
                value: 0,
                expected: "must be at least 1",
            });
        }
        Ok(())
    }

    /// Same mechanism and parameters (ignoring the count).
    fn same_kind(&self, other: &Charge) -> bool {
        let mut a = self.clone();
        let mut b = other.clone();
        *a.count_mut() = 1;
        *b.count_mut() = 1;
        a == b
    }

    /// Per-release RDP at order `a` (+inf where no evaluation is available).
    fn rdp(&self, a: f64) -> f64 {
        match self {
            Charge::Gaussian {
                noise_multiplier: z,
                ..
            } => a / (2.0 * z * z),
            Charge::SampledWithoutReplacementGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => crate::sampled_wor::rdp_unchecked(*sampling_rate, *noise_multiplier, a),
            Charge::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => crate::subsampled::rdp_unchecked(*sampling_rate, *noise_multiplier, a),
            Charge::PureDp { epsilon: e, .. } => crate::mechanisms::pure_dp_rdp_unchecked(a, *e),
            Charge::ExponentialMechanism { epsilon: e, .. } => {
                crate::mechanisms::pure_dp_rdp_unchecked(a, *e).min(a * e * e / 8.0)
            }
            Charge::Selection { base, stopping, .. } => {
                crate::selection::selection_rdp(base, stopping, a)
            }
        }
    }
}

/// Budget attached to a ledger.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Epsilon the ledger may not exceed.
    pub epsilon: Epsilon,
    /// Delta at which epsilon is measured.
    pub delta: Delta,
}

/// A record of mechanism invocations with an optional budget.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "LedgerRepr")]
pub struct Ledger {
    entries: Vec<Charge>,
    budget: Option<Budget>,
}

#[derive(Deserialize)]
struct LedgerRepr {
    entries: Vec<Charge>,
    budget: Option<Budget>,
}

impl TryFrom<LedgerRepr> for Ledger {
    type Error = AccountingError;
    fn try_from(r: LedgerRepr) -> Result<Ledger> {
        for c in &r.entries {
            c.validate()?;
        }
        Ok(Ledger {
            entries: r.entries,
            budget: r.budget,
        })
    }
}

impl Ledger {
    /// An empty ledger without budget.
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// An empty ledger that refuses any charge after which the best guarantee (see
    /// [`Ledger::best_guarantee`]) at `delta` would exceed `epsilon`.
    pub fn with_budget(epsilon: Epsilon, delta: Delta) -> Ledger {
        Ledger {
            entries: Vec::new(),
            budget: Some(Budget { epsilon, delta }),
        }
    }

    /// The budget, if any.
    pub fn budget(&self) -> Option<Budget> {
        self.budget
    }

    /// The recorded charges, run-length encoded (consecutive identical charges merged).
    pub fn entries(&self) -> &[Charge] {
        &self.entries
    }

    /// Records a charge. Refuses (leaving the ledger unchanged) an invalid charge, and a
    /// charge after which the budget would be exceeded (`BudgetExceeded`).
    pub fn charge(&mut self, charge: Charge) -> Result<()> {
        let candidate = self.dry_run(charge)?;
        if let Some(b) = self.budget {
            let eps = candidate.best_guarantee(b.delta)?;
            if eps > b.epsilon.get() {
                return Err(AccountingError::BudgetExceeded(format!(
                    "after this charge epsilon would be {eps} > budget {} at delta = {}",
                    b.epsilon.get(),
                    b.delta.get()
                )));
            }
        }
        self.entries = candidate.entries;
        Ok(())
    }

    /// The epsilon (rounded up) of everything recorded, at `delta`, under `accountant`.
    /// An empty ledger has epsilon 0. See [`Ledger::guarantee_detail`].
    pub fn guarantee(&self, delta: Delta, accountant: Accountant) -> Result<f64> {
        self.guarantee_detail(delta, accountant).map(|e| e.epsilon)
    }

    /// The epsilon (rounded up) of everything recorded, at `delta`, under `accountant`,
    /// with the Renyi order attaining it when the bound is RDP-based.
    ///
    /// # Privacy
    /// Two valid bounds on the same composition, the smaller reported:
    /// * the joint composition of every charge under `accountant` (module docs);
    /// * under `Zcdp`, when the ledger holds `PureDp` charges and others: the others
    ///   composed in zCDP (at `delta`), plus the `PureDp` charges' `sum count * eps` by
    ///   basic composition (`(eps1, delta) + (eps2, 0) -> (eps1 + eps2, delta)`, Dwork &
    ///   Roth 2014, Thm 3.16). A large pure `eps` costs `eps^2 / 2` of rho, whose
    ///   conversion can exceed `eps` itself. (Under RDP the split never helps: a pure
    ///   charge's RDP is at most `eps` at every order, so the joint bound is already at
    ///   most the sum; `Gdp` and `Pld` add pure charges by basic composition
    ///   themselves.) Exponential-mechanism charges stay in the zCDP part, where they
    ///   cost only `eps^2 / 8`.
    ///
    /// A ledger holding exactly one noisy charge is one [`crate::calibrate::Plan`], and is
    /// evaluated by [`crate::calibrate::epsilon_detail`]: a calibration that searched
    /// over a dry-run ledger ([`crate::calibrate::calibrate_ledger`]) reports exactly
    /// what this returns for the ledger that was then charged.
    pub fn guarantee_detail(&self, delta: Delta, accountant: Accountant) -> Result<PlanEpsilon> {
        let joint = self.joint_detail(delta, accountant);
        let split_helps = accountant == Accountant::Zcdp;
        let (pure, noisy): (Vec<&Charge>, Vec<&Charge>) = self
            .entries
            .iter()
            .partition(|c| matches!(c, Charge::PureDp { .. }));
        if !split_helps || pure.is_empty() || noisy.is_empty() {
            return joint;
        }
        let pure_sum: f64 = pure
            .iter()
            .map(|c| c.count() as f64 * c.pure_epsilon().unwrap_or(0.0))
            .sum();
        let mut rest = Ledger::new();
        for c in noisy {
            rest.push_merged(c.clone())?;
        }
        let split = rest.joint_detail(delta, accountant).map(|e| PlanEpsilon {
            epsilon: round_up(e.epsilon + pure_sum),
            order: e.order,
        });
        match (joint, split) {
            (Ok(j), Ok(s)) => Ok(if s.epsilon < j.epsilon { s } else { j }),
            (Ok(j), Err(_)) => Ok(j),
            (Err(_), Ok(s)) => Ok(s),
            (Err(e), Err(_)) => Err(e),
        }
    }

    /// A copy of this ledger without its budget, with `charge` appended (merged with the
    /// last entry when of the same kind): the ledger a fit would hold after charging it.
    pub fn dry_run(&self, charge: Charge) -> Result<Ledger> {
        charge.validate()?;
        let mut next = Ledger {
            entries: self.entries.clone(),
            budget: None,
        };
        next.push_merged(charge)?;
        Ok(next)
    }

    fn push_merged(&mut self, charge: Charge) -> Result<()> {
        match self.entries.last_mut() {
            Some(last) if last.same_kind(&charge) => {
                let n = last.count().checked_add(charge.count()).ok_or(
                    AccountingError::InvalidCount {
                        name: "charge count",
                        value: charge.count(),
                        expected: "the total count overflows u64",
                    },
                )?;
                *last.count_mut() = n;
            }
            _ => self.entries.push(charge),
        }
        Ok(())
    }

    /// `Composition(method)`: pure charges only, grouped by their epsilon; the largest
    /// group is composed by `method`, the others added by basic composition.
    fn composition_guarantee(&self, delta: Delta, method: CompositionMethod) -> Result<f64> {
        let mut groups: Vec<(f64, u64)> = Vec::new();
        for c in &self.entries {
            let e = c.pure_epsilon().ok_or_else(|| {
                AccountingError::Unreachable(
                    "the Composition accountant bounds pure-DP charges only (Laplace, \
                     report-noisy-max, exponential mechanism); use Rdp, Zcdp, Gdp or Pld"
                        .into(),
                )
            })?;
            match groups.iter_mut().find(|g| g.0 == e) {
                Some(g) => {
                    g.1 =
                        g.1.checked_add(c.count())
                            .ok_or(AccountingError::InvalidCount {
                                name: "charge count",
                                value: c.count(),
                                expected: "the total count overflows u64",
                            })?
                }
                None => groups.push((e, c.count())),
            }
        }
        let main = groups
            .iter()
            .enumerate()
            .max_by_key(|(_, g)| g.1)
            .map(|(i, _)| i)
            .unwrap_or(0);
        if let [(e, k)] = groups.as_slice() {
            // Already rounded up: not again.
            return crate::composition::composed_epsilon(*e, *k, delta, method);
        }
        let mut eps = 0.0;
        for (i, (e, k)) in groups.iter().enumerate() {
            eps += if i == main {
                crate::composition::composed_epsilon(*e, *k, delta, method)?
            } else {
                *k as f64 * e
            };
        }
        Ok(round_up(eps))
    }

    /// The joint composition of every charge under `accountant` (no basic-composition
    /// split; see [`Ledger::guarantee_detail`]).
    fn joint_detail(&self, delta: Delta, accountant: Accountant) -> Result<PlanEpsilon> {
        let plain = |epsilon: f64| PlanEpsilon {
            epsilon,
            order: None,
        };
        if self.entries.is_empty() {
            return Ok(plain(0.0));
        }
        // One selection and nothing else: its own analysis (whatever the accountant).
        if let [Charge::Selection {
            base,
            stopping,
            count: 1,
        }] = self.entries.as_slice()
        {
            return crate::selection::selection_epsilon(base, stopping, delta).map(plain);
        }
        // One noisy charge is one plan: the calibration's own evaluation applies, so a
        // dry-run ledger reports exactly what the calibration searched over.
        if let [only] = self.entries.as_slice() {
            if !matches!(accountant, Accountant::Composition(_)) {
                if let Some((plan, z)) = only.as_plan(accountant)? {
                    return crate::calibrate::epsilon_detail(&plan, z, delta);
                }
            }
        }
        let log_delta = delta.get().ln();
        match accountant {
            Accountant::Composition(method) => self.composition_guarantee(delta, method).map(plain),
            Accountant::Rdp(conv) => self.rdp_guarantee(
                delta,
                conv,
                &OrderGrid::fine().with_integer_above(crate::subsampled::MAX_FRACTIONAL_ORDER),
            ),
            Accountant::MomentsAccountant => self.rdp_guarantee(
                delta,
                RdpConversion::Mironov,
                &OrderGrid::moments_accountant(),
            ),
            Accountant::Zcdp => {
                let mut rho = 0.0;
                for c in &self.entries {
                    let n = c.count() as f64;
                    rho += n * match c {
                        Charge::Gaussian {
                            noise_multiplier: z,
                            ..
                        } => 1.0 / (2.0 * z * z),
                        Charge::PureDp { epsilon: e, .. } => e * e / 2.0,
                        Charge::ExponentialMechanism { epsilon: e, .. } => e * e / 8.0,
                        Charge::Selection { .. } => match c.pure_epsilon() {
                            Some(e) => e * e / 2.0,
                            None => return Err(refused_selection("Zcdp")),
                        },
                        Charge::SubsampledGaussian { .. }
                        | Charge::SampledWithoutReplacementGaussian { .. } => {
                            return Err(refused("Zcdp"))
                        }
                    };
                }
                let r = linear_curve_epsilon(rho, log_delta, RdpConversion::Improved);
                let bs = rho + 2.0 * (-rho * log_delta).sqrt();
                Ok(plain(round_up(r.epsilon.min(bs))))
            }
            Accountant::Gdp => {
                let mut mu2 = 0.0;
                let mut pure = 0.0;
                for c in &self.entries {
                    let n = c.count() as f64;
                    match c {
                        Charge::Gaussian {
                            noise_multiplier: z,
                            ..
                        } => mu2 += n / (z * z),
                        Charge::PureDp { epsilon: e, .. }
                        | Charge::ExponentialMechanism { epsilon: e, .. } => pure += n * e,
                        Charge::Selection { .. } => match c.pure_epsilon() {
                            Some(e) => pure += n * e,
                            None => return Err(refused_selection("Gdp")),
                        },
                        Charge::SubsampledGaussian { .. }
                        | Charge::SampledWithoutReplacementGaussian { .. } => {
                            return Err(refused("Gdp"))
                        }
                    }
                }
                let g = if mu2 > 0.0 {
                    gdp_epsilon(mu2.sqrt(), delta)?
                } else {
                    0.0
                };
                Ok(plain(round_up(g + pure)))
            }
            // Both are valid bounds on the same releases: report the smaller (the PLD
            // upper bound loosens over very long compositions).
            Accountant::Pld => {
                let pld = self.pld_guarantee(delta).map(plain);
                let rdp = self.joint_detail(delta, Accountant::Rdp(RdpConversion::Improved));
                match (pld, rdp) {
                    (Ok(a), Ok(b)) => Ok(if b.epsilon < a.epsilon { b } else { a }),
                    (Ok(a), Err(_)) => Ok(a),
                    (Err(_), Ok(b)) => Ok(b),
                    (Err(e), Err(_)) => Err(e),
                }
            }
        }
    }

    /// The smallest epsilon over the Rdp, Gdp and Zcdp accountants that apply (each is a
    /// valid bound). The PLD accountant is not consulted here (it is costly, and this is
    /// called on every charge of a budgeted ledger); ask `guarantee(.., Accountant::Pld)`.
    pub fn best_guarantee(&self, delta: Delta) -> Result<f64> {
        let mut best = self.guarantee(delta, Accountant::Rdp(RdpConversion::Improved))?;
        for acc in [Accountant::Gdp, Accountant::Zcdp] {
            if let Ok(e) = self.guarantee(delta, acc) {
                best = best.min(e);
            }
        }
        Ok(best)
    }

    /// PLD: all Gaussian charges compose exactly into one Gaussian with
    /// `1/z_eff^2 = sum count / z^2`; each distinct subsampled-Gaussian (q, z) is one
    /// `count`-fold PLD composition; these groups get equal shares of delta and their
    /// epsilons add (basic composition of (eps_i, delta_i)); pure and exponential-mechanism
    /// charges add their `count * eps`.
    fn pld_guarantee(&self, delta: Delta) -> Result<f64> {
        use crate::pld::{epsilon_upper, PldMechanism};
        let mut inv_z2 = 0.0;
        let mut pure = 0.0;
        let mut groups: Vec<(f64, f64, u64)> = Vec::new();
        for c in &self.entries {
            let n = c.count();
            match c {
                Charge::Gaussian {
                    noise_multiplier: z,
                    ..
                } => inv_z2 += n as f64 / (z * z),
                Charge::PureDp { epsilon: e, .. }
                | Charge::ExponentialMechanism { epsilon: e, .. } => pure += n as f64 * e,
                Charge::Selection { .. } => match c.pure_epsilon() {
                    Some(e) => pure += n as f64 * e,
                    None => return Err(refused_selection("Pld")),
                },
                Charge::SampledWithoutReplacementGaussian { .. } => return Err(refused("Pld")),
                Charge::SubsampledGaussian {
                    sampling_rate: q,
                    noise_multiplier: z,
                    ..
                } => match groups.iter_mut().find(|g| g.0 == *q && g.1 == *z) {
                    Some(g) => {
                        g.2 = g.2.checked_add(n).ok_or(AccountingError::InvalidCount {
                            name: "charge count",
                            value: n,
                            expected: "the total count overflows u64",
                        })?
                    }
                    None => groups.push((*q, *z, n)),
                },
            }
        }
        let n_groups = groups.len() + usize::from(inv_z2 > 0.0);
        let mut eps = pure;
        if n_groups > 0 {
            let share = delta.get() / n_groups as f64;
            if inv_z2 > 0.0 {
                let m = PldMechanism::Gaussian {
                    noise_multiplier: 1.0 / inv_z2.sqrt(),
                };
                eps += epsilon_upper(&m, 1, share)?.upper;
            }
            for (q, z, n) in groups {
                let m = PldMechanism::SubsampledGaussian {
                    sampling_rate: q,
                    noise_multiplier: z,
                };
                eps += epsilon_upper(&m, n, share)?.upper;
            }
        }
        Ok(round_up(eps))
    }

    fn rdp_guarantee(
        &self,
        delta: Delta,
        conv: RdpConversion,
        grid: &OrderGrid,
    ) -> Result<PlanEpsilon> {
        let entries = &self.entries;
        // Curves that are costly to set up are built once, not at every order.
        let wor: Vec<Option<crate::sampled_wor::SampledWorCurve>> = entries
            .iter()
            .map(|c| match c {
                Charge::SampledWithoutReplacementGaussian {
                    sampling_rate,
                    noise_multiplier,
                    ..
                } => Some(crate::sampled_wor::SampledWorCurve::new(
                    *sampling_rate,
                    *noise_multiplier,
                )),
                _ => None,
            })
            .collect();
        let r = epsilon_from_curve(
            |a| {
                entries
                    .iter()
                    .zip(&wor)
                    .map(|(c, w)| {
                        c.count() as f64
                            * match w {
                                Some(curve) => curve.rdp(a),
                                None => c.rdp(a),
                            }
                    })
                    .sum()
            },
            delta,
            conv,
            grid,
        )?;
        Ok(PlanEpsilon {
            epsilon: round_up(r.epsilon),
            order: Some(r.order),
        })
    }
}

fn refused(acc: &str) -> AccountingError {
    AccountingError::Unreachable(format!(
        "the {acc} accountant does not bound subsampled-Gaussian charges (Poisson or \
         without replacement); use Rdp (or, for Poisson sampling, Pld)"
    ))
}

fn refused_selection(acc: &str) -> AccountingError {
    AccountingError::Unreachable(format!(
        "the {acc} accountant does not compose a Papernot-Steinke selection with other \
         charges (its bound is an RDP curve); use Rdp"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(x: f64) -> Delta {
        Delta::new(x).unwrap()
    }

    #[test]
    fn run_length_encoding_and_serde() {
        let mut l = Ledger::new();
        for _ in 0..5 {
            l.charge(Charge::Gaussian {
                noise_multiplier: 2.0,
                count: 1,
            })
            .unwrap();
        }
        l.charge(Charge::PureDp {
            epsilon: 0.1,
            count: 1,
            label: "smoothness".into(),
        })
        .unwrap();
        l.charge(Charge::Gaussian {
            noise_multiplier: 2.0,
            count: 3,
        })
        .unwrap();
        assert_eq!(l.entries().len(), 3);
        assert_eq!(
            l.entries()[0],
            Charge::Gaussian {
                noise_multiplier: 2.0,
                count: 5
            }
        );
        let s = serde_json::to_string(&l).unwrap();
        let back: Ledger = serde_json::from_str(&s).unwrap();
        assert_eq!(back, l);
        // invalid content is refused on deserialisation
        let broken = s.replace("2.0", "-2.0");
        assert!(serde_json::from_str::<Ledger>(&broken).is_err());
    }

    #[test]
    fn gaussian_only_ledger_matches_plan() {
        use crate::calibrate::{epsilon, Plan, PlanMechanism};
        use crate::params::NoiseMultiplier;
        let mut l = Ledger::new();
        l.charge(Charge::Gaussian {
            noise_multiplier: 4.0,
            count: 100,
        })
        .unwrap();
        for acc in [
            Accountant::Gdp,
            Accountant::Zcdp,
            Accountant::Rdp(RdpConversion::Improved),
        ] {
            let p = Plan {
                mechanism: PlanMechanism::Gaussian,
                steps: 100,
                accountant: acc,
            };
            let want = epsilon(&p, NoiseMultiplier::new(4.0).unwrap(), d(1e-5)).unwrap();
            let got = l.guarantee(d(1e-5), acc).unwrap();
            assert!((got - want).abs() <= 1e-9 * want, "{acc:?}: {got} {want}");
        }
    }

    #[test]
    fn budget_refusal_leaves_ledger_unchanged() {
        let mut l = Ledger::with_budget(Epsilon::new(1.0).unwrap(), d(1e-5));
        l.charge(Charge::PureDp {
            epsilon: 0.4,
            count: 2,
            label: "a".into(),
        })
        .unwrap();
        let before = l.clone();
        let e = l
            .charge(Charge::PureDp {
                epsilon: 0.4,
                count: 1,
                label: "a".into(),
            })
            .unwrap_err();
        assert!(matches!(e, AccountingError::BudgetExceeded(_)), "{e}");
        assert_eq!(l, before);
        let e = l
            .charge(Charge::Gaussian {
                noise_multiplier: 0.0,
                count: 1,
            })
            .unwrap_err();
        assert_eq!(e, bad("noise multiplier", 0.0, "must be finite and > 0"));
        let e = l
            .charge(Charge::Gaussian {
                noise_multiplier: 1.0,
                count: 0,
            })
            .unwrap_err();
        assert!(matches!(
            e,
            AccountingError::InvalidCount {
                name: "charge count",
                ..
            }
        ));
        assert_eq!(l, before);
    }

    #[test]
    fn guarantee_under_each_accountant() {
        let mut l = Ledger::new();
        l.charge(Charge::Gaussian {
            noise_multiplier: 8.0,
            count: 200,
        })
        .unwrap();
        l.charge(Charge::Gaussian {
            noise_multiplier: 4.0,
            count: 50,
        })
        .unwrap();
        l.charge(Charge::ExponentialMechanism {
            epsilon: 0.01,
            count: 10,
        })
        .unwrap();
        let dd = d(1e-6);
        let gdp = l.guarantee(dd, Accountant::Gdp).unwrap();
        // closed form: mu^2 = 200/64 + 50/16 = 6.25, mu = 2.5; plus 10 * 0.01 added
        let want = crate::gdp::gdp_epsilon(2.5, dd).unwrap() + 0.1;
        assert!((gdp - want).abs() < 1e-9 * want, "{gdp} {want}");
        let pld = l.guarantee(dd, Accountant::Pld).unwrap();
        assert!(
            pld >= gdp * (1.0 - 1e-12) && pld < gdp * 1.001,
            "{pld} {gdp}"
        );
        let rdp = l
            .guarantee(dd, Accountant::Rdp(RdpConversion::Improved))
            .unwrap();
        let mir = l
            .guarantee(dd, Accountant::Rdp(RdpConversion::Mironov))
            .unwrap();
        let zc = l.guarantee(dd, Accountant::Zcdp).unwrap();
        let ma = l.guarantee(dd, Accountant::MomentsAccountant).unwrap();
        assert!(
            gdp < rdp && rdp < mir && mir <= ma * (1.0 + 1e-12),
            "{gdp} {rdp} {mir} {ma}"
        );
        assert!(rdp <= zc * (1.0 + 1e-9), "{rdp} {zc}");
        assert_eq!(l.best_guarantee(dd).unwrap(), gdp);
        // a subsampled charge is refused by Gdp and Zcdp, accepted by Rdp
        l.charge(Charge::SubsampledGaussian {
            sampling_rate: 0.01,
            noise_multiplier: 1.0,
            count: 100,
        })
        .unwrap();
        assert!(matches!(
            l.guarantee(dd, Accountant::Gdp),
            Err(AccountingError::Unreachable(_))
        ));
        assert!(matches!(
            l.guarantee(dd, Accountant::Zcdp),
            Err(AccountingError::Unreachable(_))
        ));
        assert!(
            l.guarantee(dd, Accountant::Rdp(RdpConversion::Improved))
                .unwrap()
                > rdp
        );
    }

    #[test]
    fn pure_dp_guarantees() {
        let mut l = Ledger::new();
        l.charge(Charge::PureDp {
            epsilon: 0.1,
            count: 10,
            label: "x".into(),
        })
        .unwrap();
        let gdp = l.guarantee(d(1e-5), Accountant::Gdp).unwrap();
        assert!((gdp - 1.0).abs() < 1e-12);
        // zCDP: rho = 10 * 0.1^2 / 2 = 0.05; Bun-Steinke 0.05 + 2 sqrt(0.05 ln 1e5) = 1.5674.
        let zc = l.guarantee(d(1e-5), Accountant::Zcdp).unwrap();
        let bs = 0.05 + 2.0 * (0.05 * 1e5f64.ln()).sqrt();
        assert!(zc <= bs * (1.0 + 1e-12) && zc > 1.0, "{zc}");
        // RDP with the randomised-response curve beats basic composition here, and cannot
        // beat the optimal (KOV) composition, 0.99369117675933586 (tests/reference/composition.py).
        let rdp = l
            .guarantee(d(1e-5), Accountant::Rdp(RdpConversion::Improved))
            .unwrap();
        let kov = 0.993_691_176_759_335_9;
        assert!(rdp >= kov && rdp < 1.0, "{rdp}");
        assert_eq!(l.best_guarantee(d(1e-5)).unwrap(), rdp);
        assert_eq!(
            Ledger::new().guarantee(d(1e-5), Accountant::Gdp).unwrap(),
            0.0
        );
    }

    #[test]
    fn pure_and_gaussian_take_the_better_of_joint_and_basic_composition() {
        let dd = d(1e-6);
        let gaussian = Charge::Gaussian {
            noise_multiplier: 30.0,
            count: 100,
        };
        let mut gauss = Ledger::new();
        gauss.charge(gaussian.clone()).unwrap();
        for pure_eps in [0.3, 3.0] {
            let mut l = Ledger::new();
            l.charge(Charge::PureDp {
                epsilon: pure_eps,
                count: 1,
                label: "constants".into(),
            })
            .unwrap();
            l.charge(gaussian.clone()).unwrap();
            for acc in [
                Accountant::Rdp(RdpConversion::Mironov),
                Accountant::Rdp(RdpConversion::Improved),
                Accountant::Zcdp,
                Accountant::MomentsAccountant,
                Accountant::Gdp,
                Accountant::Pld,
            ] {
                let got = l.guarantee(dd, acc).unwrap();
                let alone = gauss.guarantee(dd, acc).unwrap();
                let basic = round_up(alone + pure_eps);
                assert!(got <= basic, "{acc:?} {pure_eps}: {got} > {basic}");
                assert!(got > alone, "{acc:?} {pure_eps}: the pure charge is free");
            }
        }
        // zCDP charges a 3-DP release 4.5 of rho, far more than basic composition.
        let mut l = Ledger::new();
        l.charge(Charge::PureDp {
            epsilon: 3.0,
            count: 1,
            label: "constants".into(),
        })
        .unwrap();
        l.charge(gaussian).unwrap();
        let joint = l.joint_detail(dd, Accountant::Zcdp).unwrap().epsilon;
        let got = l.guarantee(dd, Accountant::Zcdp).unwrap();
        assert!(got < joint);
        assert_eq!(
            got,
            round_up(gauss.guarantee(dd, Accountant::Zcdp).unwrap() + 3.0)
        );
    }

    #[test]
    fn composition_accountant_composes_the_largest_pure_group() {
        use crate::composition::{composed_epsilon, CompositionMethod};
        let dd = d(1e-5);
        let mut l = Ledger::new();
        l.charge(Charge::PureDp {
            epsilon: 0.05,
            count: 1,
            label: "constants".into(),
        })
        .unwrap();
        for label in ["selection", "update"] {
            l.charge(Charge::PureDp {
                epsilon: 0.01,
                count: 200,
                label: label.into(),
            })
            .unwrap();
        }
        for m in [
            CompositionMethod::Basic,
            CompositionMethod::Advanced,
            CompositionMethod::BestOf,
        ] {
            let want = round_up(composed_epsilon(0.01, 400, dd, m).unwrap() + 0.05);
            assert_eq!(l.guarantee(dd, Accountant::Composition(m)).unwrap(), want);
        }
        l.charge(Charge::Gaussian {
            noise_multiplier: 3.0,
            count: 1,
        })
        .unwrap();
        assert!(l
            .guarantee(dd, Accountant::Composition(CompositionMethod::Advanced))
            .is_err());
    }

    #[test]
    fn calibration_over_a_dry_run_ledger_reports_its_guarantee() {
        use crate::calibrate::{calibrate_ledger, calibrate_sigma};
        use crate::params::Epsilon;
        let dd = d(1e-6);
        let target = Epsilon::new(1.0).unwrap();
        let plan = Plan {
            mechanism: PlanMechanism::SampledWithoutReplacementGaussian {
                sampling_rate: SamplingRate::new(0.01).unwrap(),
            },
            steps: 500,
            accountant: Accountant::Rdp(RdpConversion::Improved),
        };
        let mut prior = Ledger::new();
        prior
            .charge(Charge::PureDp {
                epsilon: 0.2,
                count: 1,
                label: "beta".into(),
            })
            .unwrap();
        let with = calibrate_ledger(&prior, &plan, target, dd).unwrap();
        let charged = prior
            .dry_run(plan.charge(NoiseMultiplier::new(with.noise_multiplier).unwrap()))
            .unwrap();
        assert_eq!(
            charged.guarantee(dd, plan.accountant).unwrap(),
            with.epsilon
        );
        assert!(with.epsilon <= 1.0);
        // The prior costs noise: more than the plan alone needs ...
        let alone = calibrate_sigma(&plan, target, dd).unwrap();
        assert!(with.noise_multiplier > alone.noise_multiplier);
        // ... but never more than giving the plan only what basic composition leaves.
        let rest = calibrate_sigma(&plan, Epsilon::new(0.8).unwrap(), dd).unwrap();
        assert!(with.noise_multiplier <= rest.noise_multiplier * (1.0 + 1e-8));
        // A prior that exhausts the target leaves nothing.
        let mut full = Ledger::new();
        full.charge(Charge::PureDp {
            epsilon: 1.0,
            count: 1,
            label: "all".into(),
        })
        .unwrap();
        assert!(calibrate_ledger(&full, &plan, target, dd).is_err());
    }
}
