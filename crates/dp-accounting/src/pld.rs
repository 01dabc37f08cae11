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

// ---------------------------------------------------------------------------------------
// Loss models: (cdf, sf) of the privacy loss under P and under Q.
// ---------------------------------------------------------------------------------------

/// (cdf, survival) of the standard normal at `z`, each accurate in relative terms where small.
fn phi2(z: f64) -> (f64, f64) {
    if z.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    if z < 0.0 {
        let c = 0.5 * erfc(-z / std::f64::consts::SQRT_2);
        (c, 1.0 - c)
    } else {
        let s = 0.5 * erfc(z / std::f64::consts::SQRT_2);
        (1.0 - s, s)
    }
}

#[derive(Debug, Clone, Copy)]
enum LossModel {
    /// P: L ~ N(mu, s^2), Q: L ~ N(-mu, s^2).
    Gaussian { mu: f64, s: f64 },
    /// Laplace with scale over sensitivity `r`.
    Laplace { r: f64 },
    /// Poisson-subsampled Gaussian, remove direction (P = mixture, Q = N(0, sigma^2)).
    SubsampledRemove { q: f64, sigma: f64 },
    /// Poisson-subsampled Gaussian, add direction (P = N(0, sigma^2), Q = mixture).
    SubsampledAdd { q: f64, sigma: f64 },
}

impl LossModel {
    /// Output `o` at which the remove-direction loss `ln(1 - q + q e^((2o-1)/(2 sigma^2)))`
    /// equals `y` (requires `y > ln(1-q)`).
    fn remove_inverse(q: f64, sigma: f64, y: f64) -> f64 {
        let s2 = sigma * sigma;
        if q >= 1.0 {
            return s2 * y + 0.5;
        }
        // e^y - (1 - q), computed without cancellation.
        let d = if y > 0.0 {
            y.exp_m1() + q
        } else {
            (1.0 - q) * (y - (-q).ln_1p()).exp_m1()
        };
        s2 * (d.ln() - q.ln()) + 0.5
    }

    fn mixture(q: f64, sigma: f64, o: f64) -> (f64, f64) {
        let (c0, s0) = phi2(o / sigma);
        let (c1, s1) = phi2((o - 1.0) / sigma);
        ((1.0 - q) * c0 + q * c1, (1.0 - q) * s0 + q * s1)
    }

    /// (P(L <= x), P(L > x)).
    fn p(&self, x: f64) -> (f64, f64) {
        match *self {
            LossModel::Gaussian { mu, s } => phi2((x - mu) / s),
            LossModel::Laplace { r } => {
                if x < -1.0 / r {
                    (0.0, 1.0)
                } else if x >= 1.0 / r {
                    (1.0, 0.0)
                } else {
                    let o = 0.5 * (1.0 - r * x);
                    let c = 0.5 * (-o / r).exp();
                    (c, 1.0 - c)
                }
            }
            LossModel::SubsampledRemove { q, sigma } => {
                if q < 1.0 && x <= (-q).ln_1p() {
                    (0.0, 1.0)
                } else {
                    Self::mixture(q, sigma, Self::remove_inverse(q, sigma, x))
                }
            }
            LossModel::SubsampledAdd { q, sigma } => {
                if q < 1.0 && -x <= (-q).ln_1p() {
                    (1.0, 0.0)
                } else {
                    let (c, s) = phi2(Self::remove_inverse(q, sigma, -x) / sigma);
                    (s, c)
                }
            }
        }
    }

    /// (Q(L <= x), Q(L > x)).
    fn q(&self, x: f64) -> (f64, f64) {
        match *self {
            LossModel::Gaussian { mu, s } => phi2((x + mu) / s),
            LossModel::Laplace { r } => {
                if x < -1.0 / r {
                    (0.0, 1.0)
                } else if x >= 1.0 / r {
                    (1.0, 0.0)
                } else {
                    let o = 0.5 * (1.0 - r * x);
                    let s = 0.5 * (-(1.0 - o) / r).exp();
                    (1.0 - s, s)
                }
            }
            LossModel::SubsampledRemove { q, sigma } => {
                if q < 1.0 && x <= (-q).ln_1p() {
                    (0.0, 1.0)
                } else {
                    phi2(Self::remove_inverse(q, sigma, x) / sigma)
                }
            }
            LossModel::SubsampledAdd { q, sigma } => {
                if q < 1.0 && -x <= (-q).ln_1p() {
                    (1.0, 0.0)
                } else {
                    let (c, s) = Self::mixture(q, sigma, Self::remove_inverse(q, sigma, -x));
                    (s, c)
                }
            }
        }
    }

    /// `(P(L <= x), P(L > x))` and `(Q(L <= x), Q(L > x))` together (sharing work).
    fn pq(&self, x: f64) -> ((f64, f64), (f64, f64)) {
        match *self {
            LossModel::SubsampledRemove { q, sigma } => {
                if q < 1.0 && x <= (-q).ln_1p() {
                    return ((0.0, 1.0), (0.0, 1.0));
                }
                let o = Self::remove_inverse(q, sigma, x);
                let (c0, s0) = phi2(o / sigma);
                let (c1, s1) = phi2((o - 1.0) / sigma);
                (((1.0 - q) * c0 + q * c1, (1.0 - q) * s0 + q * s1), (c0, s0))
            }
            LossModel::SubsampledAdd { q, sigma } => {
                if q < 1.0 && -x <= (-q).ln_1p() {
                    return ((1.0, 0.0), (1.0, 0.0));
                }
                let o = Self::remove_inverse(q, sigma, -x);
                let (c0, s0) = phi2(o / sigma);
                let (c1, s1) = phi2((o - 1.0) / sigma);
                ((s0, c0), ((1.0 - q) * s0 + q * s1, (1.0 - q) * c0 + q * c1))
            }
            _ => (self.p(x), self.q(x)),
        }
    }

    /// Loss range `[lo, hi]` outside which each tail has `P`-mass at most `tail`.
    fn range(&self, tail: f64) -> Result<(f64, f64)> {
        // hi: smallest-ish x with sf(x) <= tail (sf decreasing).
        let sf = |x: f64| self.p(x).1;
        let cdf = |x: f64| self.p(x).0;
        let hi = search_threshold(|x| sf(x) <= tail, true)?;
        let lo = search_threshold(|x| cdf(x) <= tail, false)?;
        if lo.is_nan() || hi.is_nan() || lo >= hi {
            return Err(AccountingError::Numerical(format!(
                "PLD: empty loss range [{lo}, {hi}]"
            )));
        }
        Ok((lo, hi))
    }
}

/// Finds a threshold of a monotone predicate. With `upward`, `ok(x)` holds for all large `x`
/// and the returned `x` satisfies `ok`; otherwise `ok(x)` holds for all small `x`.
fn search_threshold(ok: impl Fn(f64) -> bool, upward: bool) -> Result<f64> {
    let dir = if upward { 1.0 } else { -1.0 };
    let mut good = dir;
    let mut tries = 0;
    while !ok(good) {
        good *= 2.0;
        tries += 1;
        if tries > 60 {
            return Err(AccountingError::Numerical(
                "PLD: could not bracket the loss tail".into(),
            ));
        }
    }
    let mut bad = -dir * 1e-3;
    tries = 0;
    while ok(bad) {
        bad = if bad * dir > 0.0 {
            bad * 0.5
        } else {
            bad * 2.0
        };
        tries += 1;
        if tries > 80 || bad.abs() > 1e6 {
            // The whole (relevant) axis satisfies the predicate: the support ends at 0.
            return Ok(bad);
        }
    }
    for _ in 0..100 {
        let mid = 0.5 * (good + bad);
        if ok(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Ok(good)
}

// ---------------------------------------------------------------------------------------
// Discretisation
// ---------------------------------------------------------------------------------------

/// A single-step discrete PLD on the grid `l_k = k h`, `k = k_min ..= k_min + probs.len() - 1`.
#[derive(Debug, Clone)]
struct StepPmf {
    h: f64,
    k_min: i64,
    probs: Vec<f64>,
    /// `ln probs[i]` (`-inf` for zero mass), cached for the many MGF evaluations.
    lnp: Vec<f64>,
    inf: f64,
}

fn ln_all(p: &[f64]) -> Vec<f64> {
    p.iter()
        .map(|&v| if v > 0.0 { v.ln() } else { f64::NEG_INFINITY })
        .collect()
}

struct Discretised {
    upper: StepPmf,
    lower: StepPmf,
    /// Lower bound on E[L - h floor(L/h)] per step (over the kept range).
    mean_rounding: f64,
}

fn interval_mass(lo: (f64, f64), hi: (f64, f64)) -> f64 {
    let m = if hi.0 <= 0.5 {
        hi.0 - lo.0
    } else {
        lo.1 - hi.1
    };
    m.max(0.0)
}

fn discretise(model: &LossModel, h: f64, lo: f64, hi: f64, want_lower: bool) -> Discretised {
    let k_min = (lo / h).floor() as i64;
    let k_max = ((hi / h).ceil() as i64).max(k_min + 1);
    let n = (k_max - k_min + 1) as usize;
    let mut upper = vec![0.0; n];
    let mut lower = if want_lower { vec![0.0; n] } else { Vec::new() };
    let one_minus_e_h = -(-h).exp_m1();
    let mut mean_rounding = 0.0;
    let (mut p_prev, mut q_prev) = model.pq(k_min as f64 * h);
    upper[0] += p_prev.0;
    for i in 0..n - 1 {
        let k = k_min + i as i64;
        let x_hi = (k + 1) as f64 * h;
        let (p_next, q_next) = model.pq(x_hi);
        let a = interval_mass(p_prev, p_next);
        if a > 0.0 {
            let b = interval_mass(q_prev, q_next);
            let el = k as f64 * h;
            let num = a - el.exp() * b;
            let a_up = (num / one_minus_e_h).clamp(0.0, a);
            upper[i] += a - a_up;
            upper[i + 1] += a_up;
            if want_lower {
                lower[i] = a;
                if b > 0.0 {
                    let gap = ((a / b).ln() - el).clamp(0.0, h);
                    mean_rounding += a * gap;
                }
            }
        }
        p_prev = p_next;
        q_prev = q_next;
    }
    let inf = p_prev.1;
    Discretised {
        upper: StepPmf {
            h,
            k_min,
            lnp: ln_all(&upper),
            probs: upper,
            inf,
        },
        lower: StepPmf {
            h,
            k_min,
            lnp: ln_all(&lower),
            probs: lower,
            inf: 0.0,
        },
        mean_rounding: mean_rounding * (1.0 - 1e-9),
    }
}

impl StepPmf {
    /// ln sum_k p_k e^(lambda l_k) over the finite part.
    fn log_mgf(&self, lambda: f64) -> f64 {
        let step = lambda * self.h;
        let base = lambda * self.k_min as f64 * self.h;
        let mut m = f64::NEG_INFINITY;
        for (i, &lp) in self.lnp.iter().enumerate() {
            let v = lp + base + step * i as f64;
            if v > m {
                m = v;
            }
        }
        if m == f64::NEG_INFINITY {
            return m;
        }
        let mut acc = 0.0;
        for (i, &lp) in self.lnp.iter().enumerate() {
            acc += (lp + base + step * i as f64 - m).exp();
        }
        m + acc.ln()
    }

    fn max_loss(&self) -> f64 {
        (self.k_min + self.probs.len() as i64 - 1) as f64 * self.h
    }

    fn min_loss(&self) -> f64 {
        self.k_min as f64 * self.h
    }
}

/// Golden-section minimisation of a unimodal function on [a, b].
fn golden_min(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64, iters: usize) -> f64 {
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let mut fc = f(c);
    let mut fd = f(d);
    for _ in 0..iters {
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    if fc <= fd {
        c
    } else {
        d
    }
}

/// What the composition is asked: the tilt is the saddle point of the query.
#[derive(Debug, Clone, Copy)]
enum Query {
    Epsilon { delta: f64 },
    Delta { epsilon: f64 },
}

const LAMBDA_MAX: f64 = 1e4;
const WINDOW_TAIL: f64 = 1e-32;

/// Tilt, window and Chernoff exponents chosen on a coarse grid.
#[derive(Debug, Clone, Copy)]
struct Plan {
    lambda: f64,
    window: (f64, f64),
    theta_hi: f64,
    theta_lo: f64,
}

/// Tilt at the Chernoff (RDP) optimum for `delta`: minimises `(T K(l) + ln(1/delta)) / l`.
fn chernoff_lambda(pmf: &StepPmf, steps: f64, delta: f64) -> f64 {
    let c = -delta.ln();
    let u = golden_min(
        |u| {
            let l = u.exp();
            (steps * pmf.log_mgf(l) + c) / l
        },
        (1e-4f64).ln(),
        LAMBDA_MAX.ln(),
        80,
    );
    u.exp()
}

/// Tilt whose composed mean is `epsilon` (saddle point): minimises `T K(l) - l eps` on l >= 0.
fn saddle_lambda(pmf: &StepPmf, steps: f64, epsilon: f64) -> f64 {
    // Minimise in log-space on [1e-6, LAMBDA_MAX], then compare with l = 0.
    let f = |l: f64| steps * pmf.log_mgf(l) - l * epsilon;
    let u = golden_min(|u| f(u.exp()), (1e-6f64).ln(), LAMBDA_MAX.ln(), 100).exp();
    if f(u) < f(0.0) {
        u
    } else {
        0.0
    }
}

fn plan_composition(pmf: &StepPmf, steps: f64, lambda: f64) -> Plan {
    let k0 = |l: f64| pmf.log_mgf(l);
    let kl = k0(lambda);
    let ln_eta = WINDOW_TAIL.ln();
    // Upper end: B = min_theta (T(K(l+t)-K(l)) - ln eta)/t.
    let fb = |t: f64| (steps * (k0(lambda + t) - kl) - ln_eta) / t;
    let theta_hi = golden_min(|u| fb(u.exp()), (1e-4f64).ln(), (1e4f64).ln(), 80).exp();
    let mut b = fb(theta_hi);
    // Lower end: A = max_theta (T(K(l)-K(l-t)) + ln eta)/t.
    let fa = |t: f64| (steps * (kl - k0(lambda - t)) + ln_eta) / t;
    let theta_lo = golden_min(|u| -fa(u.exp()), (1e-4f64).ln(), (1e4f64).ln(), 80).exp();
    let mut a = fa(theta_lo);
    let top = steps * pmf.max_loss();
    let bottom = steps * pmf.min_loss();
    if b.is_nan() || b > top {
        b = top;
    }
    if a.is_nan() || a < bottom {
        a = bottom;
    }
    Plan {
        lambda,
        window: (a, b),
        theta_hi,
        theta_lo,
    }
}

// ---------------------------------------------------------------------------------------
// FFT (iterative radix-2 Cooley-Tukey, so Higham's error bound applies)
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default)]
struct Cpx {
    re: f64,
    im: f64,
}

impl Cpx {
    #[inline]
    fn mul(self, o: Cpx) -> Cpx {
        Cpx {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

fn twiddles(n: usize) -> Vec<Cpx> {
    (0..n / 2)
        .map(|k| {
            let ang = -2.0 * std::f64::consts::PI * (k as f64) / (n as f64);
            let (s, c) = ang.sin_cos();
            Cpx { re: c, im: s }
        })
        .collect()
}

fn fft(buf: &mut [Cpx], tw: &[Cpx]) {
    let n = buf.len();
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if i < j {
            buf.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let half = len / 2;
        let step = n / len;
        for chunk in buf.chunks_exact_mut(len) {
            let (lo, hi) = chunk.split_at_mut(half);
            for k in 0..half {
                let w = tw[k * step];
                let u = lo[k];
                let v = hi[k].mul(w);
                lo[k] = Cpx {
                    re: u.re + v.re,
                    im: u.im + v.im,
                };
                hi[k] = Cpx {
                    re: u.re - v.re,
                    im: u.im - v.im,
                };
            }
        }
        len *= 2;
    }
}

fn cpow(z: Cpx, mut e: u64) -> Cpx {
    let mut base = z;
    let mut acc = Cpx { re: 1.0, im: 0.0 };
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.mul(base);
        }
        e >>= 1;
        if e > 0 {
            base = base.mul(base);
        }
    }
    acc
}

/// A composed, tilted PLD on a window of the grid, with error bounds.
struct Composed {
    h: f64,
    /// Grid index of the window's first point.
    a_idx: i64,
    /// Untilted composed masses `D_j` on the window (clamped at 0).
    masses: Vec<f64>,
    /// `T K(lambda)` (log normaliser of the tilt).
    t_k: f64,
    lambda: f64,
    /// 2-norm bound on the error of the tilted composed vector.
    err2: f64,
    /// Chernoff bounds on the tilted composed mass above / below the window.
    tail_above: f64,
    tail_below: f64,
    /// Composed mass at +inf.
    inf: f64,
    /// Multiplicative floating-point allowance `exp(T * REL_ALLOWANCE_PER_STEP)`.
    rel: f64,
}

/// Tilted single-step vector and its statistics.
struct Tilted {
    k_l: f64,
    values: Vec<f64>,
    sum: f64,
    norm2: f64,
    tail_above: f64,
    tail_below: f64,
}

fn tilt(pmf: &StepPmf, steps: u64, plan: &Plan, a_idx: i64, n: usize) -> Result<Tilted> {
    let t = steps as f64;
    let h = pmf.h;
    let lambda = plan.lambda;
    let len = pmf.probs.len();
    if len > n {
        return Err(AccountingError::Numerical(format!(
            "PLD: single-step grid ({len} points) longer than the FFT ({n})"
        )));
    }
    let lnp = &pmf.lnp;
    let log_mgf = |lam: f64| pmf.log_mgf(lam);
    let k_l = log_mgf(lambda);
    if !k_l.is_finite() {
        return Err(AccountingError::Numerical(
            "PLD: tilted distribution has no mass".into(),
        ));
    }
    let mut values = vec![0.0; len];
    let mut sum = 0.0;
    let mut sq = 0.0;
    for (i, &lp) in lnp.iter().enumerate() {
        let l = (pmf.k_min + i as i64) as f64 * h;
        let v = (lp + lambda * l - k_l).exp();
        values[i] = v;
        sum += v;
        sq += v * v;
    }
    let b_loss = (a_idx + n as i64 - 1) as f64 * h;
    let a_loss = a_idx as f64 * h;
    // Chernoff bounds on the tilted composed tails (a few exponents around the coarse optimum).
    let mut tail_above: f64 = 1.0;
    let mut tail_below: f64 = 1.0;
    for f in [0.8, 1.0, 1.25] {
        let th = plan.theta_hi * f;
        tail_above = tail_above.min((t * (log_mgf(lambda + th) - k_l) - th * b_loss).exp());
        let th = plan.theta_lo * f;
        tail_below = tail_below.min((t * (log_mgf(lambda - th) - k_l) + th * a_loss).exp());
    }
    if b_loss >= t * pmf.max_loss() {
        tail_above = 0.0;
    }
    if a_loss <= t * pmf.min_loss() {
        tail_below = 0.0;
    }
    Ok(Tilted {
        k_l,
        values,
        sum,
        norm2: sq.sqrt(),
        tail_above,
        tail_below,
    })
}

/// Composes the upper and the lower single-step PMFs (same grid) `steps` times, both in one
/// complex FFT (upper in the real part, lower in the imaginary part).
fn compose_pair(
    up: &StepPmf,
    low: &StepPmf,
    steps: u64,
    plan: &Plan,
    n: usize,
) -> Result<(Composed, Composed)> {
    let t = steps as f64;
    let h = up.h;
    let lambda = plan.lambda;
    let a_idx = (plan.window.0 / h).floor() as i64;
    let tu = tilt(up, steps, plan, a_idx, n)?;
    let tl = tilt(low, steps, plan, a_idx, n)?;
    let mut buf = vec![Cpx::default(); n];
    for (i, v) in tu.values.iter().enumerate() {
        buf[i].re = *v;
    }
    for (i, v) in tl.values.iter().enumerate() {
        buf[i].im = *v;
    }
    let tw = twiddles(n);
    fft(&mut buf, &tw);
    // Separate the two real transforms, raise each to the power T, and pack the results as
    // W = X_up^T + i X_low^T: its inverse transform is y_up + i y_low (both real).
    let mut out = vec![Cpx::default(); n];
    for k in 0..n {
        let z = buf[k];
        let zr = buf[(n - k) % n];
        let xu = Cpx {
            re: 0.5 * (z.re + zr.re),
            im: 0.5 * (z.im - zr.im),
        };
        let xl = Cpx {
            re: 0.5 * (z.im + zr.im),
            im: -0.5 * (z.re - zr.re),
        };
        let pu = cpow(xu, steps);
        let pl = cpow(xl, steps);
        // W = pu + i pl, stored conjugated for the inverse-by-conjugation.
        out[k] = Cpx {
            re: pu.re - pl.im,
            im: -(pu.im + pl.re),
        };
    }
    drop(buf);
    fft(&mut out, &tw);
    let inv_n = 1.0 / n as f64;
    // Error bound (see module docs): 2-norm of the error of each composed tilted vector.
    let log2n = n.trailing_zeros() as f64;
    let mu = 16.0 * U;
    let gamma4 = 4.0 * U / (1.0 - 4.0 * U);
    let eta = mu + gamma4 * (std::f64::consts::SQRT_2 + mu);
    let e1 = log2n * eta / (1.0 - log2n * eta) + 2.0 * U;
    let norm2 = (tu.norm2 * tu.norm2 + tl.norm2 * tl.norm2).sqrt();
    let nu = tu.sum.max(tl.sum).max(1.0) * (1.0 + e1 * (n as f64).sqrt() * norm2);
    let kappa = (t * nu.ln()).exp();
    let err2 = 2.0 * norm2 * kappa * (t * e1 + 8.0 * t * U * (1.0 + e1) + e1 * (1.0 + e1)) * 1.01;
    // Extract the window: composed index K sits at (K - T k_min) mod n.
    let offset = (i128::from(a_idx) - i128::from(steps) * i128::from(up.k_min))
        .rem_euclid(n as i128) as usize;
    let mut mu_masses = vec![0.0; n];
    let mut ml_masses = vec![0.0; n];
    let (tku, tkl) = (t * tu.k_l, t * tl.k_l);
    for j in 0..n {
        // out holds conj(FFT(conj(W))) up to the conjugation: re = y_up * n, im = -y_low * n.
        let c = out[(offset + j) % n];
        let l = (a_idx + j as i64) as f64 * h;
        let cu = c.re * inv_n;
        let cl = -c.im * inv_n;
        if cu > 0.0 {
            mu_masses[j] = (cu.ln() + tku - lambda * l).exp();
        }
        if cl > 0.0 {
            ml_masses[j] = (cl.ln() + tkl - lambda * l).exp();
        }
    }
    let inf = if up.inf > 0.0 {
        -(t * (-up.inf).ln_1p()).exp_m1()
    } else {
        0.0
    };
    let rel = (t * REL_ALLOWANCE_PER_STEP).exp();
    Ok((
        Composed {
            h,
            a_idx,
            masses: mu_masses,
            t_k: tku,
            lambda,
            err2,
            tail_above: tu.tail_above,
            tail_below: tu.tail_below,
            inf,
            rel,
        },
        Composed {
            h,
            a_idx,
            masses: ml_masses,
            t_k: tkl,
            lambda,
            err2,
            tail_above: tl.tail_above,
            tail_below: tl.tail_below,
            inf: 0.0,
            rel,
        },
    ))
}

/// Suffix sums for evaluating delta on the window's grid.
struct Profile {
    /// G_i = sum_{j>i} D_j
    g: Vec<f64>,
    /// F_i = sum_{j>i} D_j e^(l_i - l_j)
    f: Vec<f64>,
    /// H_i = sum_{j>i} e^(2 (T K - lambda l_j))  (squared weight norm bound)
    hsum: Vec<f64>,
}

impl Composed {
    fn loss(&self, j: usize) -> f64 {
        (self.a_idx + j as i64) as f64 * self.h
    }

    fn profile(&self) -> Profile {
        let n = self.masses.len();
        let mut g = vec![0.0; n];
        let mut f = vec![0.0; n];
        let mut hs = vec![0.0; n];
        let eh = (-self.h).exp();
        for i in (0..n - 1).rev() {
            let d = self.masses[i + 1];
            g[i] = g[i + 1] + d;
            f[i] = eh * (f[i + 1] + d);
            let w = (self.t_k - self.lambda * self.loss(i + 1)).exp();
            hs[i] = hs[i + 1] + w * w;
        }
        Profile { g, f, hsum: hs }
    }

    /// Additive terms of the upper delta at grid point i (valid for eps in [l_i, l_{i+1}]).
    fn upper_extra(&self, p: &Profile, i: usize) -> f64 {
        let b = self.loss(self.masses.len() - 1);
        p.hsum[i].sqrt() * self.err2 + (self.t_k - self.lambda * b).exp() * self.tail_above
    }

    /// Subtractive terms of the lower delta at eps = l_i.
    fn lower_extra(&self, p: &Profile, i: usize) -> f64 {
        2.0 * p.hsum[i].sqrt() * self.err2
            + (self.t_k - self.lambda * self.loss(i)).exp() * (self.tail_above + self.tail_below)
    }

    fn upper_delta_at(&self, p: &Profile, eps: f64) -> f64 {
        let n = self.masses.len();
        if eps < self.loss(0) {
            return 1.0;
        }
        let i = (((eps / self.h).floor() as i64 - self.a_idx).max(0) as usize).min(n - 1);
        let main = (p.g[i] - (eps - self.loss(i)).exp() * p.f[i]).max(0.0);
        let v = (main * self.rel + self.upper_extra(p, i)) * (1.0 + 1e-12) + self.inf;
        v.min(1.0)
    }

    fn lower_delta_at(&self, p: &Profile, eps: f64) -> f64 {
        let n = self.masses.len();
        if eps < self.loss(0) {
            return 0.0;
        }
        let i = (((eps / self.h).floor() as i64 - self.a_idx).max(0) as usize).min(n - 1);
        let main = (p.g[i] - (eps - self.loss(i)).exp() * p.f[i]).max(0.0);
        (main / self.rel * (1.0 - 1e-12) - self.lower_extra(p, i)).max(0.0)
    }

    /// Smallest eps with certified upper delta <= `delta`.
    fn epsilon_upper(&self, p: &Profile, delta: f64) -> Result<f64> {
        let n = self.masses.len();
        let val = |i: usize| {
            let main = (p.g[i] - p.f[i]).max(0.0) * self.rel;
            (main + self.upper_extra(p, i)) * (1.0 + 1e-12) + self.inf
        };
        if val(n - 1) > delta || self.inf >= delta {
            return Err(AccountingError::Numerical(format!(
                "PLD: cannot certify delta = {delta:e} inside the computed window (tail or \
                 truncation mass too large)"
            )));
        }
        let mut i = n - 1;
        while i > 0 && val(i - 1) <= delta {
            i -= 1;
        }
        if i == 0 {
            return Ok(self.loss(0));
        }
        let i = i - 1; // val(i) > delta >= val(i+1): solve inside [l_i, l_{i+1}].
        let target = ((delta - self.inf) / (1.0 + 1e-12) - self.upper_extra(p, i)) / self.rel;
        let eps = if p.f[i] > 0.0 && p.g[i] - target > 0.0 {
            self.loss(i) + ((p.g[i] - target) / p.f[i]).ln()
        } else {
            self.loss(i + 1)
        };
        Ok(eps.clamp(self.loss(i), self.loss(i + 1)))
    }

    /// Largest eps with certified lower delta - `penalty` > `delta` (None if there is none).
    fn epsilon_lower(&self, p: &Profile, delta: f64, penalty: f64) -> Option<f64> {
        let n = self.masses.len();
        let val = |i: usize| {
            let main = (p.g[i] - p.f[i]).max(0.0);
            main / self.rel * (1.0 - 1e-12) - self.lower_extra(p, i) - penalty
        };
        let mut i = n - 1;
        loop {
            if val(i) > delta {
                break;
            }
            if i == 0 {
                return None;
            }
            i -= 1;
        }
        if i == n - 1 {
            return Some(self.loss(i));
        }
        let target = (delta + self.lower_extra(p, i) + penalty) * self.rel / (1.0 - 1e-12);
        let eps = if p.f[i] > 0.0 && p.g[i] - target > 0.0 {
            self.loss(i) + ((p.g[i] - target) / p.f[i]).ln()
        } else {
            self.loss(i)
        };
        Some(eps.clamp(self.loss(i), self.loss(i + 1)))
    }
}

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
