//! Private selection from private candidates: run a private base algorithm a random
//! number of times and release only the best of its outputs.
//!
//! The base algorithm `Q` (one private training run at a hyperparameter drawn at random,
//! followed by a private score of the result) is run `K` times, `K` drawn from a
//! distribution that does not depend on the data; the selection releases only the
//! output with the highest score (never `K`, nor the other outputs). Its privacy is
//! that of **one** run, up to a small additive term, instead of `K` runs composed:
//!
//! * [`Stopping::NegativeBinomial`]: `K` from the truncated negative binomial
//!   `D_{eta, gamma}` on `{1, 2, ...}`, `P[K = k] ∝ C(k + eta - 1, k) (1 - gamma)^k`
//!   (`eta = 1`: the geometric distribution `P[K = k] = gamma (1 - gamma)^(k-1)`).
//!   Papernot & Steinke (ICLR 2022, "Hyperparameter tuning with Renyi differential
//!   privacy", Thm 2): if `Q` is `(lambda, eps(lambda))`-RDP for all orders, the
//!   selection is `(lambda, eps'(lambda))`-RDP with
//!   `eps'(lambda) = eps(lambda) + (1 + eta) min_{lhat >= 1} ((1 - 1/lhat) eps(lhat) +
//!   ln(1/gamma) / lhat) + ln(E K) / (lambda - 1)`.
//! * [`Stopping::Poisson`]: `K ~ Poisson(mean)` (`K = 0` releases nothing). Papernot &
//!   Steinke Thm 6: if `Q` is `(lambda, eps(lambda))`-RDP and `(epshat, deltahat)`-DP
//!   with `e^epshat <= 1 + 1/(lambda - 1)`, the selection is `(lambda, eps(lambda) +
//!   mean * deltahat + ln(mean) / (lambda - 1))`-RDP. We take the largest allowed
//!   `epshat = ln(1 + 1/(lambda - 1))` and the `deltahat` of `Q` at it.
//! * [`Stopping::LiuTalwar`]: after each run, stop with probability `gamma` (geometric
//!   `K`), optionally capped at `T` runs. Liu & Talwar (STOC 2019, "Private selection
//!   from private candidates", Sec. 3): if `Q` is `eps`-DP and the number of runs is
//!   not capped, the selection is `3 eps`-DP (Thm 3.1); if `Q` is `(eps1, delta1)`-DP
//!   and the number of runs is capped at `T`, it is `(3 eps1 + 3 sqrt(2 delta1),
//!   sqrt(2 delta1) T + delta2)`-DP with `delta2 = (1 - gamma)^T` the probability of
//!   reaching the cap (Thm 3.4). **A capped selection is analysed by the second
//!   theorem whatever the base**: a pure `eps`-DP base is also `(eps, delta1)`-DP for
//!   every `delta1 >= 0`, and Thm 3.1 does not apply to a capped `K` (when the cap
//!   binds, `gamma << 1/T`, the selection is close to the best of `T` runs, whose
//!   epsilon grows with `T`: for a randomised-response base at `eps = 0.5`,
//!   `gamma = 1e-6`, `T = 20` it is 4.84 at `delta = 1e-6`, not 1.5; the test
//!   `liu_talwar_capped_pure_base_matches_exact_randomised_response` computes it).
//!
//! # Neighbouring relation and preconditions
//! Whatever relation `Q`'s guarantee is stated for (replace-one in this workspace). The
//! theorems need: `K` independent of the data and of the runs; the runs independent
//! given the data (fresh randomness each); outputs totally ordered by their score (the
//! score itself part of `Q`'s private output); nothing released but the best output
//! (ties broken by a fixed rule). The RDP bounds are stated for orders `lambda > 1`.
//!
//! The [`Release::Selection`](crate::release::Release::Selection) variant of the ledger holds
//! the base charges and the stopping rule, so a ledger reports the selection's guarantee
//! with everything else it holds.

use crate::error::{AccountingError, Result};
use crate::params::{Delta, Epsilon};
use crate::rdp::{epsilon_from_curve, OrderGrid, RdpConversion};
use rand::Rng;
use rand_distr::{Distribution, Gamma, Poisson};
use serde::{Deserialize, Serialize};

/// What the selection's analysis needs of one charge of a base run: implemented by
/// [`crate::release::Release`] (the ledger's charges), so a selection's base is a list
/// of releases while this module stays below them (it analyses, it does not name them).
pub trait SelectionBase {
    /// `count` times the RDP of one release at order `a` (+inf where it has none).
    fn base_rdp_total(&self, a: f64) -> f64;
    /// `count` times the pure epsilon of one release, for pure-DP releases.
    fn base_pure_epsilon_total(&self) -> Option<f64>;
    /// `count / z^2` for plain Gaussian releases (their GDP `mu^2`), `None` otherwise.
    fn base_gaussian_mu2(&self) -> Option<f64>;
    /// Checks the release's parameters.
    fn base_validate(&self) -> Result<()>;
}

/// The distribution of the number of runs, and the analysis that goes with it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Stopping {
    /// Truncated negative binomial `D_{eta, gamma}` (Papernot & Steinke 2022, Def. 1 and
    /// Thm 2). `eta > 0` (`1`: geometric), `gamma` in (0, 1).
    NegativeBinomial {
        /// Shape `eta > 0`.
        eta: f64,
        /// `gamma` in (0, 1) (geometric: the stopping probability).
        gamma: f64,
    },
    /// `K ~ Poisson(mean)`, `mean >= 1` (Papernot & Steinke 2022, Thm 6).
    Poisson {
        /// Expected number of runs.
        mean: f64,
    },
    /// Geometric stopping with Liu & Talwar's (2019) pure / approximate DP analysis.
    LiuTalwar {
        /// Stopping probability after each run, in (0, 1].
        gamma: f64,
        /// Maximal number of runs `T` (needed for a base that is only approximately DP).
        cap: Option<u64>,
    },
}

fn bad(name: &'static str, value: f64, expected: &'static str) -> AccountingError {
    AccountingError::InvalidParameter {
        name,
        value,
        expected,
    }
}

/// Most runs a selection may draw before refusing (a data-independent event).
pub const MAX_RUNS: u64 = 1_000_000;

impl Stopping {
    /// The geometric distribution with mean `mean` (`eta = 1`, `gamma = 1/mean`).
    pub fn geometric(mean: f64) -> Result<Stopping> {
        if !(mean.is_finite() && mean > 1.0) {
            return Err(bad("mean number of runs", mean, "must be finite and > 1"));
        }
        let s = Stopping::NegativeBinomial {
            eta: 1.0,
            gamma: 1.0 / mean,
        };
        s.check()?;
        Ok(s)
    }

    /// Checks the parameters.
    pub fn check(&self) -> Result<()> {
        match *self {
            Stopping::NegativeBinomial { eta, gamma } => {
                if !(eta.is_finite() && eta > 0.0) {
                    return Err(bad(
                        "negative binomial shape eta",
                        eta,
                        "must be finite and > 0",
                    ));
                }
                if !(gamma > 0.0 && gamma < 1.0) {
                    return Err(bad("negative binomial gamma", gamma, "must be in (0, 1)"));
                }
            }
            Stopping::Poisson { mean } => {
                if !(mean.is_finite() && mean >= 1.0 && mean <= MAX_RUNS as f64 / 10.0) {
                    return Err(bad(
                        "Poisson mean number of runs",
                        mean,
                        "must be finite, >= 1 and at most 1e5",
                    ));
                }
            }
            Stopping::LiuTalwar { gamma, cap } => {
                if !(gamma > 0.0 && gamma <= 1.0) {
                    return Err(bad(
                        "Liu-Talwar stopping probability",
                        gamma,
                        "must be in (0, 1]",
                    ));
                }
                if let Some(t) = cap {
                    if t == 0 || t > MAX_RUNS {
                        return Err(AccountingError::InvalidCount {
                            name: "Liu-Talwar cap on the number of runs",
                            value: t,
                            expected: "must be in 1..=1000000",
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// `E[K]`.
    pub fn expected_runs(&self) -> f64 {
        match *self {
            Stopping::NegativeBinomial { eta, gamma } => {
                if eta == 1.0 {
                    1.0 / gamma
                } else {
                    // eta (1/gamma - 1) / (1 - gamma^eta), with expm1 for small eta.
                    let l = gamma.ln();
                    eta * (1.0 / gamma - 1.0) / (-(eta * l).exp_m1())
                }
            }
            Stopping::Poisson { mean } => mean,
            Stopping::LiuTalwar { gamma, cap } => match cap {
                None => 1.0 / gamma,
                Some(t) => (1.0 - (1.0 - gamma).powf(t as f64)) / gamma,
            },
        }
    }

    /// Draws `K` (independently of any data). Refuses a draw above [`MAX_RUNS`] (an
    /// event that depends on the generator only).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<u64> {
        self.check()?;
        let k = match *self {
            Stopping::NegativeBinomial { eta: 1.0, gamma } => geometric(gamma, rng),
            Stopping::NegativeBinomial { eta, gamma } => {
                // NB(eta, gamma) counts the failures before eta successes of probability
                // gamma: a Poisson with a Gamma(eta, (1-gamma)/gamma) rate. Truncation at
                // 0 by rejection (P[0] = gamma^eta < 1).
                let g = Gamma::new(eta, (1.0 - gamma) / gamma)
                    .map_err(|e| AccountingError::Numerical(e.to_string()))?;
                let mut tries = 0u32;
                loop {
                    let rate: f64 = g.sample(rng);
                    let k = if rate > 0.0 { poisson(rate, rng)? } else { 0 };
                    if k >= 1 {
                        break k;
                    }
                    tries += 1;
                    if tries > 1_000_000 {
                        return Err(AccountingError::Numerical(
                            "the truncated negative binomial rejection sampler did not \
                             terminate; raise eta or lower gamma"
                                .into(),
                        ));
                    }
                }
            }
            Stopping::Poisson { mean } => poisson(mean, rng)?,
            Stopping::LiuTalwar { gamma, cap } => {
                let k = geometric(gamma, rng);
                cap.map_or(k, |t| k.min(t))
            }
        };
        if k > MAX_RUNS {
            return Err(AccountingError::InvalidCount {
                name: "number of runs drawn",
                value: k,
                expected: "at most 1000000 (lower the mean number of runs)",
            });
        }
        Ok(k)
    }
}

/// Number of Bernoulli(`gamma`) trials up to and including the first success.
fn geometric<R: Rng + ?Sized>(gamma: f64, rng: &mut R) -> u64 {
    if gamma >= 1.0 {
        return 1;
    }
    // Inversion: 1 + floor(ln U / ln(1 - gamma)), U uniform on (0, 1].
    let u: f64 = 1.0 - rng.random::<f64>();
    let k = (u.ln() / (-gamma).ln_1p()).floor();
    if k.is_finite() && k < (u64::MAX / 2) as f64 {
        1 + k as u64
    } else {
        u64::MAX / 2
    }
}

fn poisson<R: Rng + ?Sized>(mean: f64, rng: &mut R) -> Result<u64> {
    let p = Poisson::new(mean).map_err(|e| AccountingError::Numerical(e.to_string()))?;
    let k: f64 = p.sample(rng);
    Ok(k as u64)
}

/// Orders over which `lhat` of Theorem 2 is minimised (any `lhat >= 1` gives a valid
/// bound, so a grid minimum is valid).
fn lhat_grid() -> Vec<f64> {
    let mut v = vec![1.0];
    v.extend(OrderGrid::fine().orders().iter().copied());
    v
}

/// The RDP curve of one run of the base algorithm: the sum of its charges' curves.
pub(crate) fn base_rdp<B: SelectionBase>(base: &[B], a: f64) -> f64 {
    base.iter().map(|c| c.base_rdp_total(a)).sum()
}

/// `ln deltahat(epshat)` of the base algorithm: the smallest over the RDP conversions at
/// the grid orders (Canonne, Kamath & Steinke 2020, Prop. 12:
/// `delta = exp((a-1)(eps(a) - epshat + ln(1 - 1/a)) - ln a)`; Mironov 2017, Prop. 3:
/// `delta = exp((a-1)(eps(a) - epshat))`), and, when every charge is Gaussian, the exact
/// curve of the `mu`-GDP composition (Dong, Roth & Su 2022, Cor. 2.13).
fn base_log_delta<B: SelectionBase>(base: &[B], eps_hat: f64) -> f64 {
    let mut best = 0.0f64;
    for &a in OrderGrid::fine().orders() {
        let r = base_rdp(base, a);
        if !r.is_finite() {
            continue;
        }
        let mironov = (a - 1.0) * (r - eps_hat);
        let improved = (a - 1.0) * (r - eps_hat + (-1.0 / a).ln_1p()) - a.ln();
        best = best.min(mironov).min(improved);
    }
    if let Some(mu2) = gaussian_mu2(base) {
        if mu2 > 0.0 {
            best = best.min(crate::gdp::log_delta_unchecked(mu2.sqrt(), eps_hat));
        }
    }
    best
}

/// `sum count / z^2` when every base charge is a plain Gaussian.
fn gaussian_mu2<B: SelectionBase>(base: &[B]) -> Option<f64> {
    let mut mu2 = 0.0;
    for c in base {
        mu2 += c.base_gaussian_mu2()?;
    }
    Some(mu2)
}

/// The sum of the pure epsilons of the base charges, when every one is pure DP.
pub(crate) fn base_pure_epsilon<B: SelectionBase>(base: &[B]) -> Option<f64> {
    base.iter().map(|c| c.base_pure_epsilon_total()).sum()
}

/// The selection's RDP at order `lambda > 1` for base charges `base` (+inf where the
/// rule has no RDP bound: Liu & Talwar with an approximately-DP base).
pub fn selection_rdp<B: SelectionBase>(base: &[B], stopping: &Stopping, lambda: f64) -> f64 {
    if lambda.is_nan() || lambda <= 1.0 {
        return f64::INFINITY;
    }
    match *stopping {
        Stopping::NegativeBinomial { eta, gamma } => {
            let c = negative_binomial_constant(base, eta, gamma);
            base_rdp(base, lambda) + c + stopping.expected_runs().ln() / (lambda - 1.0)
        }
        Stopping::Poisson { mean } => {
            let eps_hat = (1.0 / (lambda - 1.0)).ln_1p();
            let delta_hat = base_log_delta(base, eps_hat).exp();
            base_rdp(base, lambda) + mean * delta_hat + mean.ln() / (lambda - 1.0)
        }
        // Uncapped with a pure base: 3 eps-DP (Liu & Talwar Thm 3.1), hence that RDP.
        // Capped (any base) or approximately-DP base: no RDP bound (only the (eps,
        // delta) of Thm 3.4, reported by `selection_epsilon`).
        Stopping::LiuTalwar { cap: None, .. } => match base_pure_epsilon(base) {
            Some(e) if e > 0.0 => crate::mechanisms::pure_dp_rdp_unchecked(lambda, 3.0 * e),
            Some(_) => 0.0,
            None => f64::INFINITY,
        },
        Stopping::LiuTalwar { cap: Some(_), .. } => f64::INFINITY,
    }
}

/// `(1 + eta) min_{lhat} [(1 - 1/lhat) eps(lhat) + ln(1/gamma) / lhat]` (Thm 2's
/// order-independent term).
fn negative_binomial_constant<B: SelectionBase>(base: &[B], eta: f64, gamma: f64) -> f64 {
    let lg = -gamma.ln();
    let m = lhat_grid()
        .into_iter()
        .map(|l| (1.0 - 1.0 / l) * base_rdp(base, l) + lg / l)
        .fold(f64::INFINITY, f64::min);
    (1.0 + eta) * m
}

/// The `(epsilon, delta)` guarantee of the selection at `delta`, rounded up.
///
/// Papernot & Steinke rules: the RDP curve [`selection_rdp`] converted at `delta`
/// (improved conversion, fine order grid with refinement). Liu & Talwar: `3 eps` for a
/// pure-DP base without a cap (Thm 3.1); with a cap `T` (required for an
/// approximately-DP base), whatever the base, `3 eps1 + 3 sqrt(2 delta1)` with `delta1`
/// chosen so that `sqrt(2 delta1) T + (1 - gamma)^T = delta` and `eps1` the base's
/// epsilon at `delta1` (RDP conversion; for a pure `eps`-DP base at most `eps`), Thm
/// 3.4. A cap with `(1 - gamma)^T >= delta` is refused.
pub fn selection_epsilon<B: SelectionBase>(
    base: &[B],
    stopping: &Stopping,
    delta: Delta,
) -> Result<f64> {
    stopping.check()?;
    for c in base {
        c.base_validate()?;
    }
    if base.is_empty() {
        return Err(AccountingError::InvalidCount {
            name: "number of base charges",
            value: 0,
            expected: "the base algorithm must charge something",
        });
    }
    if let Stopping::LiuTalwar { gamma, cap } = *stopping {
        let pure = base_pure_epsilon(base);
        if let (Some(e), None) = (pure, cap) {
            return Ok(crate::num::round_up(3.0 * e));
        }
        let t = cap.ok_or_else(|| {
            AccountingError::Unreachable(
                "Liu & Talwar's analysis of an approximately-DP base needs a cap T on the \
                 number of runs"
                    .into(),
            )
        })?;
        let delta2 = (1.0 - gamma).powf(t as f64);
        let room = delta.get() - delta2;
        if room <= 0.0 {
            return Err(AccountingError::Unreachable(format!(
                "the cap T = {t} leaves (1 - gamma)^T = {delta2:e} >= delta; raise T"
            )));
        }
        let s = room / t as f64; // sqrt(2 delta1)
        let delta1 = Delta::new(0.5 * s * s)?;
        let eps1 = epsilon_from_curve(
            |a| base_rdp(base, a),
            delta1,
            RdpConversion::Improved,
            &OrderGrid::fine(),
        )?
        .epsilon;
        // A pure eps-DP base is (eps, delta1)-DP too: the smaller of the two.
        let eps1 = pure.map_or(eps1, |e| eps1.min(e));
        return Ok(crate::num::round_up(3.0 * eps1 + 3.0 * s));
    }
    // The Theorem 2 constant does not depend on lambda: computed once.
    let curve: Box<dyn Fn(f64) -> f64> = match *stopping {
        Stopping::NegativeBinomial { eta, gamma } => {
            let c = negative_binomial_constant(base, eta, gamma);
            let log_ek = stopping.expected_runs().ln();
            Box::new(move |l| {
                if l > 1.0 {
                    base_rdp(base, l) + c + log_ek / (l - 1.0)
                } else {
                    f64::INFINITY
                }
            })
        }
        _ => Box::new(|l| selection_rdp(base, stopping, l)),
    };
    let r = epsilon_from_curve(curve, delta, RdpConversion::Improved, &OrderGrid::fine())?;
    Ok(crate::num::round_up(r.epsilon))
}

/// The result of [`calibrate_selection`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionCalibration<B> {
    /// The parameter found (the passing side of the search).
    pub parameter: f64,
    /// The base charges at that parameter.
    pub base: Vec<B>,
    /// The selection's epsilon at that parameter (<= the target).
    pub epsilon: f64,
}

/// The largest `t` in `[lo, hi]` (to a relative `1e-9`) such that the selection of the
/// base algorithm `family(t)` meets `(target, delta)`, with the base charges and the
/// achieved epsilon. `family` must make the base algorithm less private as `t` grows
/// (e.g. `t` a per-run GDP `mu`); the search only ever returns a `t` it evaluated and
/// found passing, so the result never overshoots whatever the family.
///
/// Errors if even `family(lo)` does not meet the target.
pub fn calibrate_selection<B, F>(
    family: F,
    stopping: &Stopping,
    target: Epsilon,
    delta: Delta,
    lo: f64,
    hi: f64,
) -> Result<SelectionCalibration<B>>
where
    B: SelectionBase,
    F: Fn(f64) -> Result<Vec<B>>,
{
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo < hi) {
        return Err(bad(
            "selection search interval",
            lo,
            "need 0 < lo < hi, finite",
        ));
    }
    let eval = |t: f64| -> Result<(Vec<B>, f64)> {
        let base = family(t)?;
        let e = selection_epsilon(&base, stopping, delta)?;
        Ok((base, e))
    };
    let (b_lo, e_lo) = eval(lo)?;
    if e_lo > target.get() {
        return Err(AccountingError::Unreachable(format!(
            "even the most private base run in the search range gives a selection epsilon \
             of {e_lo} > {} (fewer expected runs, or a larger target)",
            target.get()
        )));
    }
    let mut pass = (lo, b_lo, e_lo);
    let (b_hi, e_hi) = eval(hi)?;
    if e_hi <= target.get() {
        return Ok(SelectionCalibration {
            parameter: hi,
            base: b_hi,
            epsilon: e_hi,
        });
    }
    let mut fail = hi;
    // Bisection in log scale.
    for _ in 0..200 {
        if fail / pass.0 - 1.0 < 1e-9 {
            break;
        }
        let mid = (pass.0 * fail).sqrt();
        let (b, e) = eval(mid)?;
        if e <= target.get() {
            pass = (mid, b, e);
        } else {
            fail = mid;
        }
    }
    Ok(SelectionCalibration {
        parameter: pass.0,
        base: pass.1,
        epsilon: pass.2,
    })
}

#[cfg(test)]
mod tests;
