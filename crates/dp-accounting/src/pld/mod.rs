//! Privacy loss distribution (PLD) accountant.
//!
//! For a pair of output distributions `(P, Q)` of a mechanism on neighbouring inputs, the
//! privacy loss is `L(o) = ln(P(o)/Q(o))` with `o ~ P`. The hockey-stick divergence, i.e. the
//! smallest `delta` for which the pair is `(eps, delta)`-indistinguishable, is
//! `delta(eps) = E_P[(1 - e^(eps - L))_+]` (with `L = +inf` contributing 1). Composing `T`
//! mechanisms adds their independent losses, so the composed PLD is the `T`-fold convolution.
//!
//! This module returns an **interval** `[lower, upper]` for the epsilon (or delta) of a
//! `T`-fold composition:
//!
//! * `upper` comes from the *connect-the-dots* discretisation (Doroshenko, Ghazi, Kamath,
//!   Kumar & Manurangsi, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
//!   Distributions", PoPETs 2022): the loss axis is cut into bins of width `h`; the `P`-mass of
//!   each bin is split between the bin's two end points so that both the `P`- and `Q`-mass
//!   are preserved. The result is a valid pair of discrete distributions whose privacy
//!   profile is the piecewise-linear interpolation (in `e^eps`) of the true, convex profile,
//!   hence *dominates* the mechanism; dominating pairs compose (Zhu, Dong & Wang, AISTATS
//!   2022, Thm. 10), so the composed discrete PLD upper-bounds `delta(eps)` of the
//!   composition. Loss mass above the truncation point becomes an atom at `+inf`; mass below
//!   the lower truncation point is moved up to it (both pessimistic).
//! * `lower` comes from rounding every loss **down** to the grid (`L' = h floor(L/h) <= L`,
//!   so `S' = sum L'_i <= S = sum L_i` for the same draws and `delta` is monotone in the loss)
//!   followed by a Hoeffding correction that gives back most of the rounding: the rounding
//!   errors `r_i = L_i - L'_i` lie in `[0, h)`, are i.i.d. with mean `>= m` (computed per bin
//!   by Jensen's inequality: `E[L | bin] >= ln(P(bin)/Q(bin))`), so
//!   `delta(eps) >= delta'(eps - (T m - t)) - exp(-2 t^2 / (T h^2))`.
//! * Composition uses a radix-2 FFT of **exponentially tilted** distributions
//!   (`p_k e^(lambda l_k)`, tilt chosen at the Chernoff / RDP saddle point of the query), which
//!   commutes with convolution and puts the mass that matters for a tiny `delta` at the top of
//!   the floating-point range: this is what lets the accountant answer `delta = 1e-18`.
//!   Mass outside the FFT window is bounded by a Chernoff bound and added (upper) or
//!   subtracted (lower); the FFT round-off is bounded in the 2-norm by Higham's bound for the
//!   radix-2 Cooley-Tukey FFT (Accuracy and Stability of Numerical Algorithms, 2nd ed.,
//!   Thm. 24.2) propagated through the power and the inverse transform, and added/subtracted
//!   with Cauchy-Schwarz.
//!
//! # Privacy (precondition and claim)
//!
//! * [`PldMechanism::Gaussian`]: one release of `f(D) + N(0, sigma^2 Delta_2^2 I)` where `f`
//!   has L2 sensitivity `Delta_2` under the neighbouring relation of the caller (any relation,
//!   the pair `(N(0, s^2), N(Delta, s^2))` is tightly dominating for it).
//! * [`PldMechanism::Laplace`]: one release of `f(D) + Lap(b)^d` where `f` has L1 sensitivity
//!   `Delta_1` (pair `(Lap(0, b), Lap(Delta_1, b))`, tight for one dimension, dominating
//!   in general).
//! * [`PldMechanism::SubsampledGaussian`]: Poisson subsampling with rate `q` followed by the
//!   Gaussian mechanism on a sum with L2 sensitivity 1 (DP-SGD), under **add/remove-one**
//!   adjacency. Both directions are accounted: *remove* `((1-q) N(0, s^2) + q N(1, s^2),
//!   N(0, s^2))` and *add* `(N(0, s^2), (1-q) N(0, s^2) + q N(1, s^2))`; the reported value is
//!   the maximum over the two (Zhu, Dong & Wang 2022, Prop. 30; Google `dp_accounting`'s
//!   `ADD_OR_REMOVE_ONE`). It is **not** a bound for replace-one adjacency.
//!
//! Claim: the `T`-fold adaptive composition of the mechanism is `(eps, delta)`-DP for every
//! `eps >= upper` returned by [`epsilon_upper`], and is *not* `(eps, delta)`-DP (for the
//! dominating pair above, i.e. tightly for the Gaussian and the subsampled Gaussian) for any
//! `eps < lower`.
//!
//! Floating point: single-step bin masses are evaluated with `erfc`; their relative error
//! (and the tilt's) is covered by an allowance of [`REL_ALLOWANCE_PER_STEP`] per step,
//! compounded over the steps. This allowance is an engineering margin (the measured errors are
//! several orders smaller), not a proof.

use crate::error::{AccountingError, Result};
use crate::params::finite_positive;
use serde::{Deserialize, Serialize};
use statrs::function::erf::erfc;

/// Relative floating-point allowance per composed step for the single-step masses (see the
/// module docs): the upper delta is multiplied by `exp(T * REL_ALLOWANCE_PER_STEP)` and the
/// lower one divided by it.
pub const REL_ALLOWANCE_PER_STEP: f64 = 1e-8;

const U: f64 = f64::EPSILON / 2.0;

/// A mechanism whose privacy loss distribution the accountant knows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PldMechanism {
    /// Gaussian mechanism with noise standard deviation `noise_multiplier * sensitivity`.
    Gaussian {
        /// Noise standard deviation over L2 sensitivity (> 0).
        noise_multiplier: f64,
    },
    /// Laplace mechanism with scale `b = scale` on a query of L1 sensitivity `sensitivity`.
    Laplace {
        /// Laplace scale `b` (> 0).
        scale: f64,
        /// L1 sensitivity (> 0).
        sensitivity: f64,
    },
    /// Poisson-subsampled Gaussian (DP-SGD step), add/remove-one adjacency.
    SubsampledGaussian {
        /// Poisson sampling rate `q` in (0, 1].
        sampling_rate: f64,
        /// Noise standard deviation over L2 sensitivity (> 0).
        noise_multiplier: f64,
    },
}

/// A two-sided bound on epsilon (or on delta, for [`delta_bounds`]).
///
/// `upper` is rounded up and `lower` rounded down: the true value lies in `[lower, upper]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PldBound {
    /// A value the true one is certainly not below.
    pub lower: f64,
    /// A value the true one is certainly not above; this is the guarantee to report.
    pub upper: f64,
}

/// Tuning of the accountant. The defaults answer 1e4-step DP-SGD plans in well under a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PldOptions {
    /// Largest FFT length (a power of two, at least 1024). The grid step `h` is chosen so the
    /// composed window fits.
    pub max_fft_len: usize,
    /// Smallest grid step `h` used (the step is coarser when the window requires it).
    pub min_grid_step: f64,
    /// Single-step tail mass (under `P`) cut at each end of the loss axis.
    pub tail_mass: f64,
}

impl Default for PldOptions {
    fn default() -> Self {
        Self {
            max_fft_len: 1 << 18,
            min_grid_step: 1e-5,
            tail_mass: 1e-30,
        }
    }
}

mod compose;
mod discretise;
mod loss;

use compose::*;
use discretise::*;
use loss::*;

// ---------------------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------------------

fn invalid(name: &'static str, value: f64, expected: &'static str) -> AccountingError {
    AccountingError::InvalidParameter {
        name,
        value,
        expected,
    }
}

impl PldMechanism {
    /// The loss models (one per direction of the neighbouring relation) after validation.
    fn models(&self) -> Result<Vec<LossModel>> {
        match *self {
            PldMechanism::Gaussian { noise_multiplier } => {
                let s = finite_positive("noise multiplier (sigma)", noise_multiplier)?;
                Ok(vec![LossModel::Gaussian {
                    mu: 0.5 / (s * s),
                    s: 1.0 / s,
                }])
            }
            PldMechanism::Laplace { scale, sensitivity } => {
                let b = finite_positive("Laplace scale", scale)?;
                let d = finite_positive("sensitivity", sensitivity)?;
                let r = b / d;
                if !(r.is_finite() && r > 0.0) {
                    return Err(invalid(
                        "Laplace scale / sensitivity",
                        r,
                        "must be finite and > 0",
                    ));
                }
                Ok(vec![LossModel::Laplace { r }])
            }
            PldMechanism::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
            } => {
                let s = finite_positive("noise multiplier (sigma)", noise_multiplier)?;
                if !(sampling_rate.is_finite() && sampling_rate > 0.0 && sampling_rate <= 1.0) {
                    return Err(invalid("sampling rate", sampling_rate, "must be in (0, 1]"));
                }
                Ok(vec![
                    LossModel::SubsampledRemove {
                        q: sampling_rate,
                        sigma: s,
                    },
                    LossModel::SubsampledAdd {
                        q: sampling_rate,
                        sigma: s,
                    },
                ])
            }
        }
    }
}

fn check_steps(steps: u64) -> Result<f64> {
    if steps == 0 || steps > 1 << 40 {
        return Err(AccountingError::InvalidCount {
            name: "steps",
            value: steps,
            expected: "must be in 1 ..= 2^40",
        });
    }
    Ok(steps as f64)
}

fn check_options(opts: &PldOptions) -> Result<()> {
    if !opts.max_fft_len.is_power_of_two() || opts.max_fft_len < 1024 || opts.max_fft_len > 1 << 26
    {
        return Err(AccountingError::InvalidCount {
            name: "max_fft_len",
            value: opts.max_fft_len as u64,
            expected: "must be a power of two in 2^10 ..= 2^26",
        });
    }
    finite_positive("min_grid_step", opts.min_grid_step)?;
    if !(opts.tail_mass > 0.0 && opts.tail_mass < 1e-12) {
        return Err(invalid(
            "tail_mass",
            opts.tail_mass,
            "must be in (0, 1e-12)",
        ));
    }
    Ok(())
}

/// Everything computed for one direction of the neighbouring relation.
struct Direction {
    upper: Composed,
    lower: Composed,
    /// Lower bound on E[R] = T E[r] (sum of per-step rounding errors of the lower grid).
    mean_rounding_total: f64,
}

/// Grid step and FFT length for a window of `width` (loss units) and a single-step range.
fn grid_for(width: f64, step_width: f64, h0: f64, max_n: usize, min_h: f64) -> (f64, usize) {
    let fill = 0.95;
    let span = width.max(step_width) + 4.0 * h0;
    let mut n = max_n;
    let mut h = span / (fill * n as f64);
    if h < min_h {
        h = min_h;
        let need = (span / (fill * h)).ceil() as usize;
        n = need.next_power_of_two().clamp(1024, max_n);
    }
    (h, n)
}

/// Centres the unused part of the FFT window around the planned window.
fn centred(mut plan: Plan, h: f64, n: usize) -> Plan {
    let width = plan.window.1 - plan.window.0;
    let slack = n as f64 * h - width;
    plan.window.0 -= 0.5 * slack.max(0.0);
    plan
}

fn run_direction(
    model: &LossModel,
    steps: u64,
    query: Query,
    opts: &PldOptions,
) -> Result<Direction> {
    let t = steps as f64;
    let (lo, hi) = model.range(opts.tail_mass)?;
    let step_width = hi - lo;
    // Coarse pass: choose the tilt and the window.
    let h0 = step_width / 2048.0;
    let coarse = discretise(model, h0, lo, hi, false).upper;
    let lambda = match query {
        Query::Delta { epsilon } => saddle_lambda(&coarse, t, epsilon),
        Query::Epsilon { delta } => {
            // Start at the Chernoff optimum, then move the tilt to the saddle point of the
            // epsilon found by a cheap coarse composition (the Chernoff tilt is far too strong
            // when delta exceeds the mass of the largest loss, e.g. for pure-DP mechanisms).
            let mut lambda = chernoff_lambda(&coarse, t, delta);
            {
                let plan = plan_composition(&coarse, t, lambda);
                let width = (plan.window.1 - plan.window.0).max(h0);
                let (hc, nc) = grid_for(width, step_width, h0, 1 << 13, h0);
                let plan = centred(plan, hc, nc);
                let cd = discretise(model, hc, lo, hi, false).upper;
                if let Ok((cu, _)) = compose_pair(&cd, &cd, steps, &plan, nc) {
                    if let Ok(eps_c) = cu.epsilon_upper(&cu.profile(), delta) {
                        lambda = saddle_lambda(&coarse, t, eps_c).max(1e-4);
                    }
                }
            }
            lambda
        }
    };
    let plan = plan_composition(&coarse, t, lambda);
    let width = (plan.window.1 - plan.window.0).max(h0);
    let (h, n) = grid_for(width, step_width, h0, opts.max_fft_len, opts.min_grid_step);
    let plan = centred(plan, h, n);
    let disc = discretise(model, h, lo, hi, true);
    let (upper, lower) = compose_pair(&disc.upper, &disc.lower, steps, &plan, n)?;
    Ok(Direction {
        upper,
        lower,
        mean_rounding_total: t * disc.mean_rounding,
    })
}

/// Hoeffding correction for the lower bound: returns (shift s, penalty probability).
fn hoeffding(dir: &Direction, steps: u64, scale: f64) -> (f64, f64) {
    let t = steps as f64;
    let h = dir.lower.h;
    let penalty = (scale * 1e-3).clamp(1e-300, 1e-3);
    let dev = h * (t * (1.0 / penalty).ln() / 2.0).sqrt();
    let s = dir.mean_rounding_total - dev;
    if s > 0.0 {
        (s, penalty)
    } else {
        (0.0, 0.0)
    }
}

/// Epsilon interval of the `steps`-fold composition of `mechanism` at `delta`, default options.
///
/// `upper` is the guarantee: the composition is `(upper, delta)`-DP (see the module's
/// `# Privacy` section for the neighbouring relation). `lower` is a certified lower bound on
/// the optimal epsilon of the (tightly dominating) pair.
///
/// # Errors
/// Invalid mechanism parameters, `steps` outside `1 ..= 2^40`, `delta` outside (0, 1), or a
/// numerical failure (reported, never silently widened).
pub fn epsilon_upper(mechanism: &PldMechanism, steps: u64, delta: f64) -> Result<PldBound> {
    epsilon_bounds_with(mechanism, steps, delta, &PldOptions::default())
}

/// [`epsilon_upper`] with explicit [`PldOptions`].
///
/// # Errors
/// As [`epsilon_upper`], plus invalid options.
pub fn epsilon_bounds_with(
    mechanism: &PldMechanism,
    steps: u64,
    delta: f64,
    opts: &PldOptions,
) -> Result<PldBound> {
    let delta = crate::params::Delta::new(delta)?.get();
    check_steps(steps)?;
    check_options(opts)?;
    let mut lower: f64 = 0.0;
    let mut upper: f64 = 0.0;
    for model in mechanism.models()? {
        let dir = run_direction(&model, steps, Query::Epsilon { delta }, opts)?;
        let pu = dir.upper.profile();
        let eu = dir.upper.epsilon_upper(&pu, delta)?;
        upper = upper.max(eu);
        let pl = dir.lower.profile();
        let (shift, penalty) = hoeffding(&dir, steps, delta);
        if let Some(el) = dir.lower.epsilon_lower(&pl, delta, penalty) {
            lower = lower.max(el + shift);
        }
    }
    let upper = upper.max(0.0);
    let lower = lower.min(upper);
    Ok(PldBound {
        lower: if lower > 0.0 { next_down(lower) } else { 0.0 },
        // eps = 0 is exact when delta(0) <= delta; report it as such.
        upper: if upper > 0.0 { next_up(upper) } else { 0.0 },
    })
}

/// Delta interval of the `steps`-fold composition of `mechanism` at `epsilon`.
///
/// # Errors
/// Invalid mechanism parameters, `steps` outside `1 ..= 2^40`, `epsilon` not finite or
/// negative, or a numerical failure.
pub fn delta_bounds(mechanism: &PldMechanism, steps: u64, epsilon: f64) -> Result<PldBound> {
    delta_bounds_with(mechanism, steps, epsilon, &PldOptions::default())
}

/// [`delta_bounds`] with explicit [`PldOptions`].
///
/// # Errors
/// As [`delta_bounds`], plus invalid options.
pub fn delta_bounds_with(
    mechanism: &PldMechanism,
    steps: u64,
    epsilon: f64,
    opts: &PldOptions,
) -> Result<PldBound> {
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(invalid("epsilon", epsilon, "must be finite and >= 0"));
    }
    check_steps(steps)?;
    check_options(opts)?;
    let mut lower: f64 = 0.0;
    let mut upper: f64 = 0.0;
    for model in mechanism.models()? {
        let dir = run_direction(&model, steps, Query::Delta { epsilon }, opts)?;
        let pu = dir.upper.profile();
        upper = upper.max(dir.upper.upper_delta_at(&pu, epsilon));
        let pl = dir.lower.profile();
        // Scale of the answer for the Hoeffding penalty: the upper value.
        let (shift, penalty) = hoeffding(&dir, steps, upper.max(1e-300));
        let v = dir.lower.lower_delta_at(&pl, epsilon - shift) - penalty;
        lower = lower.max(v);
    }
    Ok(PldBound {
        lower: if lower > 0.0 {
            next_down(lower.min(1.0))
        } else {
            0.0
        },
        upper: next_up(upper).min(1.0),
    })
}

fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phi_c(z: f64) -> f64 {
        phi2(z).1
    }

    /// Exact delta(eps) of mu-GDP (Balle & Wang 2018 / Dong, Roth & Su 2019).
    fn gdp_delta(mu: f64, eps: f64) -> f64 {
        phi_c(eps / mu - mu / 2.0) - eps.exp() * phi_c(eps / mu + mu / 2.0)
    }

    #[test]
    fn fft_convolution_matches_direct() {
        let n = 16;
        let tw = twiddles(n);
        let a = [0.2, 0.5, 0.3];
        let mut buf = vec![Cpx::default(); n];
        for (i, &v) in a.iter().enumerate() {
            buf[i].re = v;
        }
        fft(&mut buf, &tw);
        for z in buf.iter_mut() {
            let p = cpow(*z, 3);
            *z = Cpx {
                re: p.re,
                im: -p.im,
            };
        }
        fft(&mut buf, &tw);
        // direct a*a*a
        let mut direct = [0.0; 7];
        for i in 0..3 {
            for j in 0..3 {
                for k in 0..3 {
                    direct[i + j + k] += a[i] * a[j] * a[k];
                }
            }
        }
        for (i, d) in direct.iter().enumerate() {
            assert!((buf[i].re / n as f64 - d).abs() < 1e-15, "{i}");
        }
    }

    #[test]
    fn discretisation_preserves_p_and_q_mass() {
        let model = LossModel::SubsampledRemove { q: 0.1, sigma: 1.0 };
        let (lo, hi) = model.range(1e-30).unwrap();
        let d = discretise(&model, 1e-3, lo, hi, true);
        let total: f64 = d.upper.probs.iter().sum::<f64>() + d.upper.inf;
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        // Q-mass of the connect-the-dots pmf: sum p_k e^{-l_k} <= 1 and close to it.
        let qm: f64 = d
            .upper
            .probs
            .iter()
            .enumerate()
            .map(|(i, p)| p * (-((d.upper.k_min + i as i64) as f64 * 1e-3)).exp())
            .sum();
        assert!(qm <= 1.0 + 1e-12 && qm > 1.0 - 1e-9, "{qm}");
    }

    #[test]
    fn gaussian_single_step_delta_matches_closed_form() {
        // One Gaussian step with sigma = 1: mu = 1 GDP.
        let m = PldMechanism::Gaussian {
            noise_multiplier: 1.0,
        };
        for eps in [0.0, 0.5, 1.0, 3.0] {
            let exact = gdp_delta(1.0, eps);
            let b = delta_bounds(&m, 1, eps).unwrap();
            assert!(
                b.lower <= exact && exact <= b.upper,
                "{eps}: {b:?} vs {exact}"
            );
            assert!(b.upper <= exact * 1.001 + 1e-15, "{eps}: {b:?} vs {exact}");
        }
    }
}
