//! Releases: the one description of a private release that the ledger charges, the
//! calibration searches over and the solver samples from.
//!
//! A [`Release`] is `count` adaptive uses of one mechanism with its privacy parameters
//! (a Gaussian at a noise multiplier, a Poisson- or without-replacement-subsampled
//! Gaussian, a pure-DP mechanism, the exponential mechanism, a private selection). It
//! carries its own privacy map ([`Release::epsilon_detail`] for one release group under
//! an [`Accountant`], the per-order RDP the ledger composes) and builds its own sampler
//! ([`Release::gaussian`], [`Release::laplace`], [`Release::report_noisy_max`]), so the
//! noise a solver draws and the charge it records come from one value: the binding of a
//! mechanism to its privacy map is structural (as in OpenDP's measurements), not a
//! convention kept by every solver.
//!
//! The ledger calls a release a [`Charge`](crate::ledger::Charge) (an alias); a
//! calibration ([`crate::calibrate`]) searches over the noise multiplier of a release
//! family ([`crate::calibrate::Plan::charge`] builds its member at a multiplier).
//!
//! # Privacy
//! The per-release analyses are those documented on the ledger ([`crate::ledger`]) and
//! on the calibration ([`crate::calibrate`]); each sampler is the mechanism whose
//! analysis the release states (see [`crate::mechanisms`] for the samplers' claims and
//! the f64 idealisation).

use crate::error::{AccountingError, Result};
use crate::gdp::gdp_epsilon;
use crate::mechanisms::{Gaussian, Laplace, LaplaceFamily, ReportNoisyMax, RnmNoise};
use crate::num::round_up;
use crate::params::{Delta, NoiseMultiplier, SamplingRate};
use crate::rdp::{epsilon_from_curve, OrderGrid, RdpConversion, RdpEpsilon};
use crate::selection::SelectionBase;
use crate::zcdp::linear_curve_epsilon;
use serde::{Deserialize, Serialize};

/// How a plan's privacy is accounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Accountant {
    /// Renyi DP over the fine order grid with continuous refinement.
    Rdp(RdpConversion),
    /// zCDP (plain Gaussian only), best of the Bun-Steinke and CKS20 conversions.
    Zcdp,
    /// Gaussian DP + analytic Gaussian conversion (plain Gaussian only; exact).
    Gdp,
    /// Privacy loss distribution accountant (module `pld`).
    Pld,
    /// The moments accountant (Abadi et al. 2016) as DP-SCD configures it: RDP at
    /// integer orders 2..=129 (moment orders 1..=128), Mironov conversion.
    MomentsAccountant,
    /// Composition theorems for pure-DP releases only (Laplace, report-noisy-max, the
    /// exponential mechanism): see [`crate::composition`]. A ledger's pure charges are
    /// grouped by their epsilon; the largest group is composed by the method, the
    /// others are added by basic composition. Plans of Gaussian releases are refused.
    Composition(crate::composition::CompositionMethod),
}

/// An epsilon with the order that attains it (for RDP-based accountants).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlanEpsilon {
    /// Upper bound on epsilon, rounded up.
    pub epsilon: f64,
    /// The optimal Renyi order, when the accountant is RDP-based.
    pub order: Option<f64>,
}

/// One recorded use of a mechanism, `count` times in a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Release {
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
        base: Vec<Release>,
        /// The distribution of the number of runs and its analysis.
        stopping: crate::selection::Stopping,
        /// Number of selections (>= 1).
        count: u64,
    },
}

pub(crate) fn bad(name: &'static str, value: f64, expected: &'static str) -> AccountingError {
    AccountingError::InvalidParameter {
        name,
        value,
        expected,
    }
}

impl Release {
    /// Number of releases (>= 1).
    pub fn count(&self) -> u64 {
        match self {
            Release::Gaussian { count, .. }
            | Release::SampledWithoutReplacementGaussian { count, .. }
            | Release::SubsampledGaussian { count, .. }
            | Release::PureDp { count, .. }
            | Release::ExponentialMechanism { count, .. }
            | Release::Selection { count, .. } => *count,
        }
    }

    /// The same release used `count` times in a row (e.g. one round's release charged
    /// for all rounds). Errors on `count = 0`.
    pub fn repeated(&self, count: u64) -> Result<Release> {
        let mut r = self.clone();
        *r.count_mut() = check_steps(count)?;
        Ok(r)
    }

    pub(crate) fn count_mut(&mut self) -> &mut u64 {
        match self {
            Release::Gaussian { count, .. }
            | Release::SampledWithoutReplacementGaussian { count, .. }
            | Release::SubsampledGaussian { count, .. }
            | Release::PureDp { count, .. }
            | Release::ExponentialMechanism { count, .. }
            | Release::Selection { count, .. } => count,
        }
    }

    /// The pure epsilon of one release, for pure-DP charges (`PureDp`,
    /// `ExponentialMechanism`); `None` for the noisy ones.
    pub(crate) fn pure_epsilon(&self) -> Option<f64> {
        match self {
            Release::PureDp { epsilon, .. } | Release::ExponentialMechanism { epsilon, .. } => {
                Some(*epsilon)
            }
            // Liu & Talwar (2019, Thm 3.1): a pure eps-DP base with uncapped geometric
            // stopping gives a 3 eps-DP selection. With a cap T the selection is not
            // pure DP (when the cap binds it is close to best-of-T, whose epsilon grows
            // with T): it is reported through the cap's (eps, delta) branch by
            // `selection_epsilon`, never as pure here.
            Release::Selection {
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
            Release::Gaussian {
                noise_multiplier, ..
            } => pos("noise multiplier", *noise_multiplier)?,
            Release::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            }
            | Release::SampledWithoutReplacementGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => {
                pos("noise multiplier", *noise_multiplier)?;
                if !(sampling_rate.is_finite() && *sampling_rate > 0.0 && *sampling_rate <= 1.0) {
                    return Err(bad("sampling rate", *sampling_rate, "must be in (0, 1]"));
                }
            }
            Release::PureDp { epsilon, .. } | Release::ExponentialMechanism { epsilon, .. } => {
                pos("epsilon", *epsilon)?
            }
            Release::Selection { base, stopping, .. } => {
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
    pub(crate) fn same_kind(&self, other: &Release) -> bool {
        let mut a = self.clone();
        let mut b = other.clone();
        *a.count_mut() = 1;
        *b.count_mut() = 1;
        a == b
    }

    /// Per-release RDP at order `a` (+inf where no evaluation is available).
    pub(crate) fn rdp(&self, a: f64) -> f64 {
        match self {
            Release::Gaussian {
                noise_multiplier: z,
                ..
            } => a / (2.0 * z * z),
            Release::SampledWithoutReplacementGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => crate::sampled_wor::rdp_unchecked(*sampling_rate, *noise_multiplier, a),
            Release::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                ..
            } => crate::subsampled::rdp_unchecked(*sampling_rate, *noise_multiplier, a),
            Release::PureDp { epsilon: e, .. } => crate::mechanisms::pure_dp_rdp_unchecked(a, *e),
            Release::ExponentialMechanism { epsilon: e, .. } => {
                crate::mechanisms::pure_dp_rdp_unchecked(a, *e).min(a * e * e / 8.0)
            }
            Release::Selection { base, stopping, .. } => {
                crate::selection::selection_rdp(base, stopping, a)
            }
        }
    }
}

impl Release {
    /// The noise multiplier of a Gaussian-family release (std over the L2
    /// sensitivity); `None` for pure-DP releases and selections.
    pub fn noise_multiplier(&self) -> Option<f64> {
        match self {
            Release::Gaussian {
                noise_multiplier, ..
            }
            | Release::SubsampledGaussian {
                noise_multiplier, ..
            }
            | Release::SampledWithoutReplacementGaussian {
                noise_multiplier, ..
            } => Some(*noise_multiplier),
            _ => None,
        }
    }

    /// The sampler of this Gaussian-family release for a query of L2 sensitivity
    /// `sensitivity`: N(0, (z * sensitivity)^2) per coordinate, `z` the release's noise
    /// multiplier.
    ///
    /// # Privacy
    /// The release's analysis (its charge) holds for this sampler exactly when
    /// `sensitivity` bounds the L2 change of the query between neighbours under the
    /// relation the charge is stated for (replace-one or add/remove), and, for the
    /// subsampled kinds, when the batch is drawn as the charge says.
    pub fn gaussian(&self, sensitivity: f64) -> Result<Gaussian> {
        match self.noise_multiplier() {
            Some(z) => Gaussian::new(z * sensitivity),
            None => Err(AccountingError::Unreachable(format!(
                "a Gaussian sampler was asked of a release that is not Gaussian: {self:?}"
            ))),
        }
    }

    /// The Laplace sampler of this pure `epsilon`-DP release for a query of L1
    /// sensitivity `sensitivity`: scale `(1 / epsilon) sensitivity` (Dwork & Roth 2014,
    /// Thm 3.6). Errors for every other kind.
    pub fn laplace(&self, sensitivity: f64) -> Result<Laplace> {
        match self {
            Release::PureDp { epsilon, .. } => Laplace::new((1.0 / epsilon) * sensitivity),
            _ => Err(AccountingError::Unreachable(format!(
                "a Laplace sampler was asked of a release that is not pure DP: {self:?}"
            ))),
        }
    }

    /// The Laplace samplers of this pure `epsilon`-DP release for queries of L1
    /// sensitivity `unit * c`, one public `c >= 0` per query: scale
    /// `(unit / epsilon) * c` (Dwork & Roth 2014, Thm 3.6; see [`LaplaceFamily`]).
    /// Errors for every other kind.
    pub fn laplace_family(&self, unit: f64) -> Result<LaplaceFamily> {
        match self {
            Release::PureDp { epsilon, .. } => LaplaceFamily::new(unit, *epsilon),
            _ => Err(AccountingError::Unreachable(format!(
                "a Laplace sampler was asked of a release that is not pure DP: {self:?}"
            ))),
        }
    }

    /// The report-noisy-max of this release over scores of per-score sensitivity
    /// `sensitivity` that need not be monotone: noise scale `2 sensitivity / epsilon`,
    /// Laplace noise for a [`Release::PureDp`] (Dwork & Roth 2014, Claim 3.9 without
    /// monotonicity), Gumbel noise (the exponential mechanism, McSherry & Talwar 2007)
    /// for a [`Release::ExponentialMechanism`]. Errors for every other kind.
    pub fn report_noisy_max(&self, sensitivity: f64) -> Result<ReportNoisyMax> {
        match self {
            Release::PureDp { epsilon, .. } => {
                ReportNoisyMax::new(RnmNoise::Laplace, 2.0 * sensitivity / epsilon)
            }
            Release::ExponentialMechanism { epsilon, .. } => {
                ReportNoisyMax::new(RnmNoise::Gumbel, 2.0 * sensitivity / epsilon)
            }
            _ => Err(AccountingError::Unreachable(format!(
                "a report-noisy-max was asked of a release that is neither pure DP nor the \
                 exponential mechanism: {self:?}"
            ))),
        }
    }

    /// Upper bound on the epsilon (rounded up) at `delta` of this one group of `count`
    /// releases under `accountant`, with the Renyi order attaining it for RDP-based
    /// accountants. Defined for the Gaussian kinds (the pure ones are composed by the
    /// ledger, [`crate::ledger::Ledger::guarantee_detail`]).
    ///
    /// # Privacy
    /// * `Rdp(conversion)`: per-release RDP times `count` (Mironov 2017, Prop. 1),
    ///   converted with `conversion` and minimised over the order; for the plain
    ///   Gaussian the curve is `count * alpha / (2 z^2)`, optimised over continuous
    ///   alpha (with `RdpConversion::Mironov`, DP-CD's Eq. (18) exactly).
    /// * `MomentsAccountant`: the same at integer orders 2..=129, Mironov's conversion.
    /// * `Zcdp`: `rho = count / (2 z^2)` (plain Gaussian only), the smaller of the
    ///   Bun-Steinke and CKS20 conversions.
    /// * `Gdp`: `mu = sqrt(count) / z` (plain Gaussian only; exact, Dong, Roth & Su
    ///   2022), the analytic Gaussian conversion (Balle & Wang 2018).
    /// * `Pld`: [`Release::pld_epsilon_detail`].
    pub fn epsilon_detail(&self, accountant: Accountant, delta: Delta) -> Result<PlanEpsilon> {
        let steps = check_steps(self.count())? as f64;
        let z = match self.noise_multiplier() {
            Some(z) => NoiseMultiplier::new(z)?.get(),
            None => {
                return Err(AccountingError::Unreachable(
                    "the epsilon of one release group is defined here for the Gaussian kinds; \
                     compose pure-DP releases in a ledger"
                        .into(),
                ))
            }
        };
        let rate = match self {
            Release::SubsampledGaussian { sampling_rate, .. }
            | Release::SampledWithoutReplacementGaussian { sampling_rate, .. } => {
                Some(SamplingRate::new(*sampling_rate)?.get())
            }
            _ => None,
        };
        let log_delta = delta.get().ln();
        let rdp_result = |r: RdpEpsilon| PlanEpsilon {
            epsilon: round_up(r.epsilon),
            order: Some(r.order),
        };
        match (accountant, self) {
            (Accountant::Rdp(conv), Release::Gaussian { .. }) => {
                let rho = steps / (2.0 * z * z);
                Ok(rdp_result(linear_curve_epsilon(rho, log_delta, conv)))
            }
            (Accountant::MomentsAccountant, Release::Gaussian { .. }) => {
                let rho = steps / (2.0 * z * z);
                let r = epsilon_from_curve(
                    |a| rho * a,
                    delta,
                    RdpConversion::Mironov,
                    &OrderGrid::moments_accountant(),
                )?;
                Ok(rdp_result(r))
            }
            (Accountant::Rdp(conv), Release::SubsampledGaussian { .. }) => {
                let q = rate.unwrap_or(1.0);
                let r = epsilon_from_curve(
                    |a| steps * crate::subsampled::rdp_unchecked(q, z, a),
                    delta,
                    conv,
                    &OrderGrid::fine().with_integer_above(crate::subsampled::MAX_FRACTIONAL_ORDER),
                )?;
                Ok(rdp_result(r))
            }
            (Accountant::MomentsAccountant, Release::SubsampledGaussian { .. }) => {
                let q = rate.unwrap_or(1.0);
                let r = epsilon_from_curve(
                    |a| steps * crate::subsampled::rdp_unchecked(q, z, a),
                    delta,
                    RdpConversion::Mironov,
                    &OrderGrid::moments_accountant(),
                )?;
                Ok(rdp_result(r))
            }
            (Accountant::Zcdp, Release::Gaussian { .. }) => {
                let rho = steps / (2.0 * z * z);
                let r = linear_curve_epsilon(rho, log_delta, RdpConversion::Improved);
                let bs = rho + 2.0 * (-rho * log_delta).sqrt();
                Ok(PlanEpsilon {
                    epsilon: round_up(r.epsilon.min(bs)),
                    order: None,
                })
            }
            (Accountant::Gdp, Release::Gaussian { .. }) => {
                let mu = steps.sqrt() / z;
                Ok(PlanEpsilon {
                    epsilon: gdp_epsilon(mu, delta)?,
                    order: None,
                })
            }
            (Accountant::Zcdp | Accountant::Gdp, Release::SubsampledGaussian { .. }) => {
                Err(AccountingError::Unreachable(
                    "the Zcdp and Gdp accountants do not bound the subsampled Gaussian; use Rdp \
                     (or Pld)"
                        .into(),
                ))
            }
            (Accountant::Rdp(conv), Release::SampledWithoutReplacementGaussian { .. }) => {
                let curve = crate::sampled_wor::SampledWorCurve::new(rate.unwrap_or(1.0), z);
                let r =
                    epsilon_from_curve(|a| steps * curve.rdp(a), delta, conv, &OrderGrid::fine())?;
                Ok(rdp_result(r))
            }
            (Accountant::MomentsAccountant, Release::SampledWithoutReplacementGaussian { .. }) => {
                let curve = crate::sampled_wor::SampledWorCurve::new(rate.unwrap_or(1.0), z);
                let r = epsilon_from_curve(
                    |a| steps * curve.rdp(a),
                    delta,
                    RdpConversion::Mironov,
                    &OrderGrid::moments_accountant(),
                )?;
                Ok(rdp_result(r))
            }
            (
                Accountant::Zcdp | Accountant::Gdp | Accountant::Pld,
                Release::SampledWithoutReplacementGaussian { .. },
            ) => Err(AccountingError::Unreachable(
                "only the Rdp and MomentsAccountant accountants bound the Gaussian on batches \
                 sampled without replacement"
                    .into(),
            )),
            (Accountant::Pld, _) => self.pld_epsilon_detail(delta).map(|(e, _)| e),
            (Accountant::Composition(_), _) => Err(AccountingError::Unreachable(
                "the Composition accountant bounds pure-DP releases only; a Gaussian plan \
                 needs Rdp, Zcdp, Gdp, Pld or MomentsAccountant"
                    .into(),
            )),
            _ => Err(AccountingError::Unreachable(
                "the epsilon of one release group is defined here for the Gaussian kinds".into(),
            )),
        }
    }

    /// The PLD accountant's answer for this Gaussian-family release group, with the PLD
    /// interval it was derived from (`None` when the PLD evaluation failed
    /// numerically): the smaller of two valid upper bounds, the PLD interval's upper
    /// end and the RDP bound with the improved conversion.
    ///
    /// # Privacy
    /// Both are upper bounds on the same releases' epsilon at `delta`, so their minimum
    /// is one. The PLD upper bound loosens over very long compositions (its per-step
    /// discretisation allowance adds up: 16.7 % above exact at q = 1 and 5.6e5 steps);
    /// the RDP bound then wins. The returned `order` is `Some` exactly when the RDP
    /// bound was the smaller, so a caller can say which bound it reports.
    ///
    /// Errors for batches sampled without replacement, which PLD does not bound here.
    pub fn pld_epsilon_detail(
        &self,
        delta: Delta,
    ) -> Result<(PlanEpsilon, Option<crate::pld::PldBound>)> {
        let m =
            match self {
                Release::Gaussian {
                    noise_multiplier, ..
                } => crate::pld::PldMechanism::Gaussian {
                    noise_multiplier: NoiseMultiplier::new(*noise_multiplier)?.get(),
                },
                Release::SubsampledGaussian {
                    sampling_rate,
                    noise_multiplier,
                    ..
                } => crate::pld::PldMechanism::SubsampledGaussian {
                    sampling_rate: SamplingRate::new(*sampling_rate)?.get(),
                    noise_multiplier: NoiseMultiplier::new(*noise_multiplier)?.get(),
                },
                _ => return Err(AccountingError::Unreachable(
                    "the PLD accountant does not bound the Gaussian on batches sampled without \
                     replacement (use Rdp), and composes pure-DP releases in a ledger"
                        .into(),
                )),
            };
        let rdp = self.epsilon_detail(Accountant::Rdp(RdpConversion::Improved), delta)?;
        match crate::pld::epsilon_upper(&m, self.count(), delta.get()) {
            Ok(b) if round_up(b.upper) < rdp.epsilon => Ok((
                PlanEpsilon {
                    epsilon: round_up(b.upper),
                    order: None,
                },
                Some(b),
            )),
            Ok(b) => Ok((rdp, Some(b))),
            // A PLD failure (e.g. a grid that cannot hold the distribution) leaves the
            // valid RDP bound.
            Err(AccountingError::Numerical(_)) => Ok((rdp, None)),
            Err(e) => Err(e),
        }
    }
}

pub(crate) fn check_steps(steps: u64) -> Result<u64> {
    if steps == 0 {
        Err(AccountingError::InvalidCount {
            name: "number of steps",
            value: 0,
            expected: "must be at least 1",
        })
    } else {
        Ok(steps)
    }
}

/// What a private selection's analysis needs of the releases of one base run.
impl SelectionBase for Release {
    fn base_rdp_total(&self, a: f64) -> f64 {
        self.rdp_total(a)
    }
    fn base_pure_epsilon_total(&self) -> Option<f64> {
        self.pure_epsilon_total()
    }
    fn base_gaussian_mu2(&self) -> Option<f64> {
        match self {
            Release::Gaussian {
                noise_multiplier,
                count,
            } => Some(*count as f64 / (noise_multiplier * noise_multiplier)),
            _ => None,
        }
    }
    fn base_validate(&self) -> Result<()> {
        self.validate()
    }
}
