//! Discretisation of a loss model onto a grid (pessimistic and optimistic rounding),
//! and the plan of a composition (the tilt and the window).

use super::*;

/// A single-step discrete PLD on the grid `l_k = k h`, `k = k_min ..= k_min + probs.len() - 1`.
#[derive(Debug, Clone)]
pub(super) struct StepPmf {
    pub(super) h: f64,
    pub(super) k_min: i64,
    pub(super) probs: Vec<f64>,
    /// `ln probs[i]` (`-inf` for zero mass), cached for the many MGF evaluations.
    pub(super) lnp: Vec<f64>,
    pub(super) inf: f64,
}

pub(super) fn ln_all(p: &[f64]) -> Vec<f64> {
    p.iter()
        .map(|&v| if v > 0.0 { v.ln() } else { f64::NEG_INFINITY })
        .collect()
}

pub(super) struct Discretised {
    pub(super) upper: StepPmf,
    pub(super) lower: StepPmf,
    /// Lower bound on E[L - h floor(L/h)] per step (over the kept range).
    pub(super) mean_rounding: f64,
}

pub(super) fn interval_mass(lo: (f64, f64), hi: (f64, f64)) -> f64 {
    let m = if hi.0 <= 0.5 {
        hi.0 - lo.0
    } else {
        lo.1 - hi.1
    };
    m.max(0.0)
}

pub(super) fn discretise(
    model: &LossModel,
    h: f64,
    lo: f64,
    hi: f64,
    want_lower: bool,
) -> Discretised {
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
    pub(super) fn log_mgf(&self, lambda: f64) -> f64 {
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

    pub(super) fn max_loss(&self) -> f64 {
        (self.k_min + self.probs.len() as i64 - 1) as f64 * self.h
    }

    pub(super) fn min_loss(&self) -> f64 {
        self.k_min as f64 * self.h
    }
}

/// Golden-section minimisation of a unimodal function on [a, b].
pub(super) fn golden_min(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64, iters: usize) -> f64 {
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
pub(super) enum Query {
    Epsilon { delta: f64 },
    Delta { epsilon: f64 },
}

pub(super) const LAMBDA_MAX: f64 = 1e4;
pub(super) const WINDOW_TAIL: f64 = 1e-32;

/// Tilt, window and Chernoff exponents chosen on a coarse grid.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    pub(super) lambda: f64,
    pub(super) window: (f64, f64),
    pub(super) theta_hi: f64,
    pub(super) theta_lo: f64,
}

/// Tilt at the Chernoff (RDP) optimum for `delta`: minimises `(T K(l) + ln(1/delta)) / l`.
pub(super) fn chernoff_lambda(pmf: &StepPmf, steps: f64, delta: f64) -> f64 {
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
pub(super) fn saddle_lambda(pmf: &StepPmf, steps: f64, epsilon: f64) -> f64 {
    // Minimise in log-space on [1e-6, LAMBDA_MAX], then compare with l = 0.
    let f = |l: f64| steps * pmf.log_mgf(l) - l * epsilon;
    let u = golden_min(|u| f(u.exp()), (1e-6f64).ln(), LAMBDA_MAX.ln(), 100).exp();
    if f(u) < f(0.0) {
        u
    } else {
        0.0
    }
}

pub(super) fn plan_composition(pmf: &StepPmf, steps: f64, lambda: f64) -> Plan {
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
