//! Exact samplers for the discrete Laplace and the discrete Gaussian distributions.
//!
//! These implement Algorithms 1-3 of Canonne, Kamath & Steinke, "The Discrete Gaussian for
//! Differential Privacy" (NeurIPS 2020; arXiv:2004.00010): every parameter is a rational
//! number given as a numerator and a denominator, every random decision is a comparison of
//! uniformly random **integers** (drawn by rejection from the raw bits of the generator), and
//! there is no floating-point arithmetic anywhere in the sampling path. The output
//! distribution is therefore exactly the stated one (up to the two astronomically unlikely
//! overflow cases documented on [`DiscreteLaplace::sample`] and
//! [`DiscreteGaussian::sample`]), given a generator that outputs independent uniform bits
//! (e.g. `rand_chacha::ChaCha20Rng`).
//!
//! # Why: floating-point attacks
//! Mironov ("On Significance of the Least Significant Bits for Differential Privacy", CCS
//! 2012) showed that the textbook floating-point Laplace sampler `f(D) - b sgn(u) ln(1 - 2|u|)`
//! leaks the input: the set of doubles it can output has gaps whose positions depend on
//! `f(D)`, so a single output can rule one neighbouring dataset out, and the privacy loss is
//! unbounded. The same holds for floating-point Gaussian samplers. The samplers here output
//! integers from the exact distributions, so adding them to an integer-valued query
//! (e.g. counts, or a fixed-point encoding with public scale) is exactly the mechanism that
//! the privacy analysis covers. The f64 samplers of [`crate::mechanisms`] remain an
//! idealisation.
//!
//! # Privacy (precondition and claim)
//! * Discrete Laplace with scale `t` (pmf proportional to `exp(-|x|/t)` on the integers), added
//!   to an integer-valued query with L1 sensitivity `Delta`: `(Delta/t)`-DP (pure), for the
//!   neighbouring relation that defines `Delta` (CKS 2020, Sec. 2; Ghosh, Roughgarden &
//!   Sundararajan 2009 for the geometric mechanism).
//! * Discrete Gaussian `N_Z(0, sigma^2)` (pmf proportional to `exp(-x^2/(2 sigma^2))`), added
//!   to an integer-valued query with sensitivity `Delta` (per coordinate, independent noise):
//!   `Delta^2/(2 sigma^2)`-zCDP in one dimension and `||Delta||_2^2 / (2 sigma^2)`-zCDP for
//!   vectors (CKS 2020, Thm. 4 and Thm. 14); the `(eps, delta)` curve is that of CKS Thm. 7.
//!
//! The samplers are not constant-time: their running time depends on the random draws (not on
//! the data), as discussed in CKS 2020, Sec. 5.

use crate::error::{AccountingError, Result};
use rand::RngCore;

/// A uniformly random integer in `[0, n)`, `n >= 1`, by rejection sampling on the smallest
/// power-of-two range that covers `n` (exact; expected fewer than two rounds).
pub fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, n: u128) -> u128 {
    if n <= 1 {
        return 0;
    }
    let bits = 128 - (n - 1).leading_zeros();
    loop {
        let x = if bits <= 64 {
            let v = u128::from(rng.next_u64());
            if bits == 64 {
                v
            } else {
                v & ((1u128 << bits) - 1)
            }
        } else {
            let lo = u128::from(rng.next_u64());
            let hi = u128::from(rng.next_u64());
            let v = lo | (hi << 64);
            if bits == 128 {
                v
            } else {
                v & ((1u128 << bits) - 1)
            }
        };
        if x < n {
            return x;
        }
    }
}

/// Exact Bernoulli(`num / den`) with `0 <= num <= den`, `den >= 1`.
pub fn bernoulli_rational<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    uniform_below(rng, den) < num
}

/// Exact Bernoulli(`exp(-num/den)`) for `0 <= num/den <= 1` (CKS 2020, Algorithm 1, first
/// branch): draw `A_k ~ Bernoulli(gamma / k)` for `k = 1, 2, ...` until the first failure at
/// `K`; return whether `K` is odd.
fn bernoulli_exp_neg_le1<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut k: u128 = 1;
    loop {
        // den * k does not overflow in practice: k exceeds 40 with probability < 1/40!.
        let d = den.saturating_mul(k);
        if !bernoulli_rational(rng, num, d) {
            break;
        }
        k += 1;
    }
    k % 2 == 1
}

/// Exact Bernoulli(`exp(-gamma)`), `gamma = int_part + frac_num/den` with `frac_num < den`
/// (CKS 2020, Algorithm 1): `int_part` independent Bernoulli(`exp(-1)`) trials (stopping
/// at the first failure), then one Bernoulli(`exp(-frac_num/den)`).
fn bernoulli_exp_neg_split<R: RngCore + ?Sized>(
    rng: &mut R,
    int_part: u128,
    frac_num: u128,
    den: u128,
) -> bool {
    let mut i: u128 = 0;
    while i < int_part {
        if !bernoulli_exp_neg_le1(rng, 1, 1) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_neg_le1(rng, frac_num, den)
}

/// Discrete Laplace distribution on the integers with scale `t = num / den`:
/// `P(X = x) = (e^(1/t) - 1)/(e^(1/t) + 1) * e^(-|x|/t)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    num: u64,
    den: u64,
}

impl DiscreteLaplace {
    /// Scale `num / den` (both >= 1).
    ///
    /// # Errors
    /// `num == 0` or `den == 0`.
    pub fn new(scale_num: u64, scale_den: u64) -> Result<Self> {
        if scale_num == 0 {
            return Err(AccountingError::InvalidCount {
                name: "discrete Laplace scale numerator",
                value: 0,
                expected: "must be >= 1",
            });
        }
        if scale_den == 0 {
            return Err(AccountingError::InvalidCount {
                name: "discrete Laplace scale denominator",
                value: 0,
                expected: "must be >= 1",
            });
        }
        Ok(Self {
            num: scale_num,
            den: scale_den,
        })
    }

    /// The scale as `(numerator, denominator)`.
    pub fn scale(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// One exact draw (CKS 2020, Algorithm 2 with `t = num`, `s = den`).
    ///
    /// A draw whose magnitude would exceed `i64::MAX` is rejected and redrawn; this happens
    /// with probability below `exp(-2^62 / scale)`, i.e. never for any usable scale.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        let t = u128::from(self.num);
        let s = u128::from(self.den);
        loop {
            let u = uniform_below(rng, t);
            if !bernoulli_exp_neg_split(rng, 0, u, t) {
                continue;
            }
            let mut v: u128 = 0;
            while bernoulli_exp_neg_le1(rng, 1, 1) {
                v += 1;
            }
            let x = match t.checked_mul(v).and_then(|tv| tv.checked_add(u)) {
                Some(x) => x,
                None => continue,
            };
            let y = x / s;
            let negative = bernoulli_rational(rng, 1, 2);
            if negative && y == 0 {
                continue;
            }
            let Ok(y) = i64::try_from(y) else { continue };
            return if negative { -y } else { y };
        }
    }

    /// Overwrites `out` with independent draws.
    pub fn fill<R: RngCore + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        for o in out.iter_mut() {
            *o = self.sample(rng);
        }
    }
}

/// Discrete Gaussian `N_Z(0, sigma^2)` on the integers with `sigma^2 = num / den`:
/// `P(X = x) proportional to exp(-x^2 / (2 sigma^2))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteGaussian {
    num: u64,
    den: u64,
    /// `floor(sigma) + 1`.
    t: u64,
    /// `2 num den t^2` (< 2^64).
    d: u128,
}

/// Largest `m` with `m^2 * den <= num`.
fn floor_sqrt_ratio(num: u64, den: u64) -> u64 {
    let (num, den) = (u128::from(num), u128::from(den));
    let (mut lo, mut hi) = (0u128, 1u128 << 32);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if mid * mid * den <= num {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo as u64
}

impl DiscreteGaussian {
    /// Variance parameter `sigma^2 = num / den` (both >= 1). The exact arithmetic needs
    /// `2 num den (floor(sigma) + 1)^2 < 2^64`, which holds e.g. for `num, den < 2^20` and
    /// `sigma < 2^11`; reduce the fraction or round `sigma^2` to a coarser rational otherwise.
    ///
    /// # Errors
    /// A zero numerator or denominator, or parameters too large for the exact arithmetic.
    pub fn new(sigma2_num: u64, sigma2_den: u64) -> Result<Self> {
        if sigma2_num == 0 || sigma2_den == 0 {
            return Err(AccountingError::InvalidCount {
                name: "discrete Gaussian sigma^2 numerator/denominator",
                value: 0,
                expected: "must be >= 1",
            });
        }
        let t = floor_sqrt_ratio(sigma2_num, sigma2_den) + 1;
        let d = 2u128
            .checked_mul(u128::from(sigma2_num))
            .and_then(|v| v.checked_mul(u128::from(sigma2_den)))
            .and_then(|v| v.checked_mul(u128::from(t)))
            .and_then(|v| v.checked_mul(u128::from(t)))
            .filter(|&v| v < 1u128 << 64);
        let Some(d) = d else {
            return Err(AccountingError::InvalidCount {
                name: "discrete Gaussian sigma^2 numerator",
                value: sigma2_num,
                expected: "2 * numerator * denominator * (floor(sigma) + 1)^2 must be below 2^64",
            });
        };
        Ok(Self {
            num: sigma2_num,
            den: sigma2_den,
            t,
            d,
        })
    }

    /// One exact draw (CKS 2020, Algorithm 3): propose `Y ~ Lap_Z(t)` with
    /// `t = floor(sigma) + 1`, accept with probability `exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))`.
    ///
    /// The acceptance exponent is `x^2 / D` with `x = | |Y| t den - num |` and
    /// `D = 2 num den t^2`, evaluated exactly as `q (x + r) + r^2 / D` with `x = q D + r`. Its
    /// integer part saturates at `2^128 - 1` (only for `|Y|` beyond `2^60 sigma`, i.e. with
    /// probability below `exp(-2^59)`), where the acceptance probability is below
    /// `exp(-2^127)` either way.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        let lap = DiscreteLaplace {
            num: self.t,
            den: 1,
        };
        let t = u128::from(self.t);
        let num = u128::from(self.num);
        let den = u128::from(self.den);
        loop {
            let y = lap.sample(rng);
            let ay = u128::from(y.unsigned_abs());
            // |Y| t den < 2^63 * 2^64 fits in u128 because t den <= D < 2^64.
            let a = ay * t * den;
            let x = a.abs_diff(num);
            let q = x / self.d;
            let r = x % self.d;
            let r2 = r * r; // r < D < 2^64
            let int_part = q
                .saturating_mul(x.saturating_add(r))
                .saturating_add(r2 / self.d);
            let frac = r2 % self.d;
            if bernoulli_exp_neg_split(rng, int_part, frac, self.d) {
                return y;
            }
        }
    }

    /// Overwrites `out` with independent draws.
    pub fn fill<R: RngCore + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        for o in out.iter_mut() {
            *o = self.sample(rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn floor_sqrt_is_exact() {
        assert_eq!(floor_sqrt_ratio(4, 1), 2);
        assert_eq!(floor_sqrt_ratio(3, 1), 1);
        assert_eq!(floor_sqrt_ratio(9, 4), 1); // sqrt(2.25) = 1.5
        assert_eq!(floor_sqrt_ratio(1, 2), 0);
        assert_eq!(floor_sqrt_ratio(1_000_000, 1), 1000);
        assert_eq!(floor_sqrt_ratio(999_999, 1), 999);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(DiscreteLaplace::new(0, 1).is_err());
        assert!(DiscreteLaplace::new(1, 0).is_err());
        assert!(DiscreteGaussian::new(0, 1).is_err());
        assert!(DiscreteGaussian::new(1, 0).is_err());
        let err = DiscreteGaussian::new(u64::MAX, 3).unwrap_err();
        assert!(err.to_string().contains("2^64"), "{err}");
    }

    /// Bernoulli(exp(-gamma)) matches its probability: Pearson chi-square at a false-alarm
    /// rate of 1e-6 through the public tester, as the samplers of `tests/samplers.rs`
    /// (which cannot reach this internal step); `DP_SLOW_TESTS=1` runs 1e6 draws per case.
    #[cfg(feature = "testing")]
    #[test]
    fn bernoulli_exp_matches_probability() {
        let n: u64 = if std::env::var("DP_SLOW_TESTS").is_ok_and(|v| v == "1") {
            1_000_000
        } else {
            40_000
        };
        let mut rng = ChaCha20Rng::seed_from_u64(15);
        for (num, den) in [(1u128, 3u128), (5, 2), (7, 7), (1, 1000), (13, 4)] {
            let p = (-(num as f64) / den as f64).exp();
            let ones: u64 = (0..n)
                .map(|_| u64::from(bernoulli_exp_neg_split(&mut rng, num / den, num % den, den)))
                .sum();
            let t =
                crate::testing::samplers::chi_square_test(&[ones, n - ones], &[p, 1.0 - p], 1e-6)
                    .unwrap();
            assert_eq!(t.draws, n);
            assert!(t.passed, "Bernoulli(exp(-{num}/{den})): {t:?}");
        }
        // gamma = 0 is certain.
        assert!((0..100).all(|_| bernoulli_exp_neg_split(&mut rng, 0, 0, 5)));
    }

    #[test]
    fn seeded_draws_reproduce() {
        let g = DiscreteGaussian::new(10, 1).unwrap();
        let mut a = ChaCha20Rng::seed_from_u64(7);
        let mut b = ChaCha20Rng::seed_from_u64(7);
        let xa: Vec<i64> = (0..100).map(|_| g.sample(&mut a)).collect();
        let xb: Vec<i64> = (0..100).map(|_| g.sample(&mut b)).collect();
        assert_eq!(xa, xb);
        assert!(xa.iter().any(|&x| x != xa[0]));
    }

    #[test]
    fn uniform_below_stays_in_range() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        for n in [1u128, 2, 3, 7, 1 << 64, (1 << 64) + 1, u128::MAX] {
            for _ in 0..50 {
                assert!(uniform_below(&mut rng, n) < n.max(1));
            }
        }
    }
}
