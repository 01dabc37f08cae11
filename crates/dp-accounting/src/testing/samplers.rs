//! Statistical tests of a sampler against its reference distribution, each with a
//! stated false-alarm rate `alpha`: a correct sampler fails with probability at most
//! `alpha` (for every sample size, no asymptotics in the Kolmogorov-Smirnov test).
//!
//! * [`ks_test`]: one-sample Kolmogorov-Smirnov against a CDF. Critical value from the
//!   Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant (Massart 1990),
//!   `P(sup |F_n - F| > c) <= 2 exp(-2 n c^2)`, so `c = sqrt(ln(2 / alpha) / (2 n))`. It
//!   holds for every distribution (conservative for discrete ones).
//! * [`chi_square_test`]: Pearson's chi-square against exact cell probabilities, cells
//!   merged in order until every expected count is at least 20; critical value the
//!   `1 - alpha` quantile of chi-square (statrs CDF inverted by bisection). The level is
//!   asymptotic (the usual rule of at least 5 expected per cell is exceeded fourfold).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::error::{AccountingError, Result};

/// The outcome of a distribution test.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerTest {
    /// The test statistic (KS distance, or Pearson's chi-square).
    pub statistic: f64,
    /// The critical value at `alpha`: the test fails when `statistic > critical`.
    pub critical: f64,
    /// `statistic <= critical`.
    pub passed: bool,
    /// Number of draws.
    pub draws: u64,
    /// Degrees of freedom (chi-square only; 0 for KS).
    pub degrees_of_freedom: usize,
    /// The false-alarm rate.
    pub alpha: f64,
}

fn check_alpha(alpha: f64) -> Result<()> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(AccountingError::InvalidParameter {
            name: "alpha",
            value: alpha,
            expected: "the false-alarm rate must be in (0, 1)",
        })
    }
}

/// The DKW-Massart critical value `sqrt(ln(2 / alpha) / (2 n))` of the KS distance.
pub fn ks_critical(n: u64, alpha: f64) -> Result<f64> {
    check_alpha(alpha)?;
    if n == 0 {
        return Err(AccountingError::InvalidCount {
            name: "draws",
            value: 0,
            expected: "must be >= 1",
        });
    }
    Ok(((2.0 / alpha).ln() / (2.0 * n as f64)).sqrt())
}

/// `sup_x |F_n(x) - F(x)|` of the sample (sorted in place). NaN draws are an error.
pub fn ks_statistic(xs: &mut [f64], cdf: impl Fn(f64) -> f64) -> Result<f64> {
    if xs.iter().any(|x| x.is_nan()) {
        return Err(AccountingError::Numerical("the sampler drew NaN".into()));
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        let f = cdf(x);
        d = d
            .max(((i + 1) as f64 / n - f).abs())
            .max((f - i as f64 / n).abs());
    }
    Ok(d)
}

/// One-sample KS test of `draws` (sorted in place) against `cdf` at false-alarm rate
/// `alpha`.
///
/// ```
/// use dp_accounting::mechanisms::Laplace;
/// use dp_accounting::testing::samplers::{ks_test, draw};
/// let lap = Laplace::new(2.0)?;
/// let mut xs = draw(20_000, 1, |rng| lap.sample(rng));
/// let cdf = |x: f64| if x < 0.0 { 0.5 * (x / 2.0).exp() } else { 1.0 - 0.5 * (-x / 2.0).exp() };
/// assert!(ks_test(&mut xs, cdf, 1e-6)?.passed);
/// # Ok::<(), dp_accounting::AccountingError>(())
/// ```
pub fn ks_test(draws: &mut [f64], cdf: impl Fn(f64) -> f64, alpha: f64) -> Result<SamplerTest> {
    let critical = ks_critical(draws.len() as u64, alpha)?;
    let statistic = ks_statistic(draws, cdf)?;
    Ok(SamplerTest {
        statistic,
        critical,
        passed: statistic <= critical,
        draws: draws.len() as u64,
        degrees_of_freedom: 0,
        alpha,
    })
}

/// `n` draws of `sampler` from a ChaCha20 stream seeded with `seed`.
pub fn draw<T>(n: usize, seed: u64, mut sampler: impl FnMut(&mut dyn RngCore) -> T) -> Vec<T> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n).map(|_| sampler(&mut rng)).collect()
}

/// The `1 - alpha` quantile of chi-square with `df` degrees of freedom.
pub fn chi_square_critical(df: usize, alpha: f64) -> Result<f64> {
    check_alpha(alpha)?;
    if df == 0 {
        return Err(AccountingError::InvalidCount {
            name: "degrees of freedom",
            value: 0,
            expected: "must be >= 1 (at least two cells after merging)",
        });
    }
    let dist = ChiSquared::new(df as f64)
        .map_err(|e| AccountingError::Numerical(format!("chi-square({df}): {e}")))?;
    let (mut lo, mut hi) = (0.0, 10.0 * df as f64 + 40.0 * (1.0 / alpha).ln() + 200.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if dist.sf(mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}

/// Pearson's statistic and degrees of freedom, merging adjacent cells (in the given
/// order) until each expected count is at least 20. `probs` must sum to 1.
pub fn chi_square_statistic(counts: &[u64], probs: &[f64]) -> Result<(f64, usize)> {
    if counts.len() != probs.len() || counts.is_empty() {
        return Err(AccountingError::InvalidCount {
            name: "cells",
            value: counts.len() as u64,
            expected: "counts and probabilities must have the same non-zero length",
        });
    }
    let total: f64 = probs.iter().sum();
    if probs.iter().any(|p| !(p.is_finite() && *p >= 0.0)) || (total - 1.0).abs() > 1e-9 {
        return Err(AccountingError::InvalidParameter {
            name: "probabilities",
            value: total,
            expected: "finite, non-negative and summing to 1 (within 1e-9)",
        });
    }
    let n: u64 = counts.iter().sum();
    let mut cells: Vec<(f64, f64)> = Vec::new();
    let (mut o, mut e) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(probs) {
        o += c as f64;
        e += p * n as f64;
        if e >= 20.0 {
            cells.push((o, e));
            o = 0.0;
            e = 0.0;
        }
    }
    if let Some(last) = cells.last_mut() {
        last.0 += o;
        last.1 += e;
    }
    let stat = cells.iter().map(|(o, e)| (o - e) * (o - e) / e).sum();
    Ok((stat, cells.len().saturating_sub(1)))
}

/// Pearson's chi-square test of cell `counts` against `probs` at false-alarm rate
/// `alpha`.
pub fn chi_square_test(counts: &[u64], probs: &[f64], alpha: f64) -> Result<SamplerTest> {
    let (statistic, df) = chi_square_statistic(counts, probs)?;
    let critical = chi_square_critical(df, alpha)?;
    Ok(SamplerTest {
        statistic,
        critical,
        passed: statistic <= critical,
        draws: counts.iter().sum(),
        degrees_of_freedom: df,
        alpha,
    })
}
