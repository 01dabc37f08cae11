//! Composition of the discretised losses: an iterative radix-2 Cooley-Tukey FFT (so
//! Higham's error bound applies), the exponential tilt, and the composed profile.

use super::*;

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cpx {
    pub(super) re: f64,
    pub(super) im: f64,
}

impl Cpx {
    #[inline]
    pub(super) fn mul(self, o: Cpx) -> Cpx {
        Cpx {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

pub(super) fn twiddles(n: usize) -> Vec<Cpx> {
    (0..n / 2)
        .map(|k| {
            let ang = -2.0 * std::f64::consts::PI * (k as f64) / (n as f64);
            let (s, c) = ang.sin_cos();
            Cpx { re: c, im: s }
        })
        .collect()
}

pub(super) fn fft(buf: &mut [Cpx], tw: &[Cpx]) {
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

pub(super) fn cpow(z: Cpx, mut e: u64) -> Cpx {
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
pub(super) struct Composed {
    pub(super) h: f64,
    /// Grid index of the window's first point.
    pub(super) a_idx: i64,
    /// Untilted composed masses `D_j` on the window (clamped at 0).
    pub(super) masses: Vec<f64>,
    /// `T K(lambda)` (log normaliser of the tilt).
    pub(super) t_k: f64,
    pub(super) lambda: f64,
    /// 2-norm bound on the error of the tilted composed vector.
    pub(super) err2: f64,
    /// Chernoff bounds on the tilted composed mass above / below the window.
    pub(super) tail_above: f64,
    pub(super) tail_below: f64,
    /// Composed mass at +inf.
    pub(super) inf: f64,
    /// Multiplicative floating-point allowance `exp(T * REL_ALLOWANCE_PER_STEP)`.
    pub(super) rel: f64,
}

/// Tilted single-step vector and its statistics.
pub(super) struct Tilted {
    pub(super) k_l: f64,
    pub(super) values: Vec<f64>,
    pub(super) sum: f64,
    pub(super) norm2: f64,
    pub(super) tail_above: f64,
    pub(super) tail_below: f64,
}

pub(super) fn tilt(pmf: &StepPmf, steps: u64, plan: &Plan, a_idx: i64, n: usize) -> Result<Tilted> {
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
pub(super) fn compose_pair(
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
pub(super) struct Profile {
    /// G_i = sum_{j>i} D_j
    pub(super) g: Vec<f64>,
    /// F_i = sum_{j>i} D_j e^(l_i - l_j)
    pub(super) f: Vec<f64>,
    /// H_i = sum_{j>i} e^(2 (T K - lambda l_j))  (squared weight norm bound)
    pub(super) hsum: Vec<f64>,
}

impl Composed {
    pub(super) fn loss(&self, j: usize) -> f64 {
        (self.a_idx + j as i64) as f64 * self.h
    }

    pub(super) fn profile(&self) -> Profile {
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
    pub(super) fn upper_extra(&self, p: &Profile, i: usize) -> f64 {
        let b = self.loss(self.masses.len() - 1);
        p.hsum[i].sqrt() * self.err2 + (self.t_k - self.lambda * b).exp() * self.tail_above
    }

    /// Subtractive terms of the lower delta at eps = l_i.
    pub(super) fn lower_extra(&self, p: &Profile, i: usize) -> f64 {
        2.0 * p.hsum[i].sqrt() * self.err2
            + (self.t_k - self.lambda * self.loss(i)).exp() * (self.tail_above + self.tail_below)
    }

    pub(super) fn upper_delta_at(&self, p: &Profile, eps: f64) -> f64 {
        let n = self.masses.len();
        if eps < self.loss(0) {
            return 1.0;
        }
        let i = (((eps / self.h).floor() as i64 - self.a_idx).max(0) as usize).min(n - 1);
        let main = (p.g[i] - (eps - self.loss(i)).exp() * p.f[i]).max(0.0);
        let v = (main * self.rel + self.upper_extra(p, i)) * (1.0 + 1e-12) + self.inf;
        v.min(1.0)
    }

    pub(super) fn lower_delta_at(&self, p: &Profile, eps: f64) -> f64 {
        let n = self.masses.len();
        if eps < self.loss(0) {
            return 0.0;
        }
        let i = (((eps / self.h).floor() as i64 - self.a_idx).max(0) as usize).min(n - 1);
        let main = (p.g[i] - (eps - self.loss(i)).exp() * p.f[i]).max(0.0);
        (main / self.rel * (1.0 - 1e-12) - self.lower_extra(p, i)).max(0.0)
    }

    /// Smallest eps with certified upper delta <= `delta`.
    pub(super) fn epsilon_upper(&self, p: &Profile, delta: f64) -> Result<f64> {
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
    pub(super) fn epsilon_lower(&self, p: &Profile, delta: f64, penalty: f64) -> Option<f64> {
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
