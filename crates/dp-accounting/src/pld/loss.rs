//! The privacy loss models: `(cdf, sf)` of the privacy loss under `P` and under `Q` for
//! each mechanism, and the threshold search on them.

use super::*;

/// (cdf, survival) of the standard normal at `z`, each accurate in relative terms where small.
pub(super) fn phi2(z: f64) -> (f64, f64) {
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
pub(super) enum LossModel {
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
    pub(super) fn remove_inverse(q: f64, sigma: f64, y: f64) -> f64 {
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

    pub(super) fn mixture(q: f64, sigma: f64, o: f64) -> (f64, f64) {
        let (c0, s0) = phi2(o / sigma);
        let (c1, s1) = phi2((o - 1.0) / sigma);
        ((1.0 - q) * c0 + q * c1, (1.0 - q) * s0 + q * s1)
    }

    /// (P(L <= x), P(L > x)).
    pub(super) fn p(&self, x: f64) -> (f64, f64) {
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
    pub(super) fn q(&self, x: f64) -> (f64, f64) {
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
    pub(super) fn pq(&self, x: f64) -> ((f64, f64), (f64, f64)) {
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
    pub(super) fn range(&self, tail: f64) -> Result<(f64, f64)> {
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
pub(super) fn search_threshold(ok: impl Fn(f64) -> bool, upward: bool) -> Result<f64> {
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
