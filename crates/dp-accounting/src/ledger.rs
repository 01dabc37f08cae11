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

use crate::composition::CompositionMethod;
use crate::error::{AccountingError, Result};
use crate::gdp::gdp_epsilon;
use crate::num::round_up;
use crate::params::{Delta, Epsilon};
use crate::rdp::{epsilon_from_curve, OrderGrid, RdpConversion};
use crate::release::{Accountant, PlanEpsilon, Release};
use crate::zcdp::linear_curve_epsilon;
use serde::{Deserialize, Serialize};

/// What the ledger records: a [`Release`] (`count` uses of one mechanism with its
/// privacy parameters). `Charge` is the ledger's name for it; the two are one type.
pub type Charge = Release;

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
    /// A ledger holding exactly one noisy charge is one release group, and is
    /// evaluated by [`Release::epsilon_detail`]: a calibration that searched
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
            if !matches!(accountant, Accountant::Composition(_))
                && only.noise_multiplier().is_some()
            {
                return only.epsilon_detail(accountant, delta);
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
mod tests;
