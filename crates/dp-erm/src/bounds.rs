//! Bounds on features and targets: declared by the user, or estimated privately.
//!
//! # The private bound of one column
//!
//! **Mechanism.** For a column `v_1, ..., v_n` and a public grid of candidates
//! `t_k = 2^k`, `k = min_exponent ..= max_exponent` ([`BoundGrid`]), the score of
//! `t_k` is `u_k = -| #{i : |v_i| > t_k} - n/2 |`. The exponential mechanism
//! (report-noisy-max with Gumbel noise of scale `b = 2 / eps`,
//! [`dp_accounting::mechanisms::ReportNoisyMax`]) releases one index `k`; the bound is
//! `multiplier * t_k` (default `4 t_k`: the private median of `|v|` times 4, rounded to a
//! power of two). Values beyond the bound are clipped to it.
//!
//! **Neighbouring relation.** Replace-one (the relation of the pipeline's solvers):
//! datasets of the same public size `n` that differ in one record.
//!
//! **Precondition.** `n` is public (it is, under replace-one), the grid and the
//! multiplier are chosen without looking at the data.
//!
//! **Claim.** Each release is `eps`-DP and `eps`-bounded-range, hence `eps^2/8`-zCDP.
//!
//! **Proof.** Replacing one record changes each count `#{i : |v_i| > t_k}` by at most 1
//! and leaves `n/2` unchanged, so every score moves by at most `Delta = 1` (not
//! monotonically). The exponential mechanism with weights `exp(u_k / b)` is then
//! `2 Delta / b`-DP (McSherry & Talwar 2007, Thm 6) and `2 Delta / b`-bounded-range,
//! hence `(2 Delta / b)^2 / 8`-zCDP (Cesar & Rogers 2021, Thm 3.3); see
//! [`dp_accounting::mechanisms::rnm_epsilon`]. The bound `multiplier * t_k` is a
//! post-processing. The `p` feature columns and the target are separate releases,
//! charged as `Charge::ExponentialMechanism { epsilon, count }` to the pipeline's ledger
//! **before** any is drawn; how they compose with the fit is in [`crate::pipeline`].
//!
//! Why the median and not a high quantile: candidates beyond the data all score
//! `-(n - q n)` for a `q`-quantile; with `q` close to 1 an overestimate by any power of
//! two scores nearly as well as the truth and the noise picks one of the many. The median
//! puts every candidate outside the data at `-n/2`, the largest margin the mechanism can
//! have. The multiplier then turns the scale into a bound; the per-column clipping counts
//! (non-private diagnostics) say where it clipped.

use crate::error::{invalid, Result};
use dp_accounting::mechanisms::{rnm_epsilon, ReportNoisyMax, RnmNoise};
use dp_accounting::{Norm, Sensitivity};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The public grid of candidate bounds `multiplier * 2^k` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoundGrid {
    /// Smallest exponent `k` (default -10: `2^-10 ~ 1e-3`).
    pub min_exponent: i32,
    /// Largest exponent `k` (default 20: `2^20 ~ 1e6`).
    pub max_exponent: i32,
    /// The bound is `multiplier` times the released median scale (default 4).
    pub multiplier: f64,
}

impl Default for BoundGrid {
    fn default() -> Self {
        Self {
            min_exponent: -10,
            max_exponent: 20,
            multiplier: 4.0,
        }
    }
}

impl BoundGrid {
    /// Checks the grid: at least two candidates, at most 2,100 (`2^±1023` are the
    /// finite powers of two), a finite multiplier >= 1.
    pub fn check(&self) -> Result<()> {
        if self.min_exponent >= self.max_exponent
            || self.min_exponent < -1000
            || self.max_exponent > 1000
        {
            return Err(invalid(
                "bound grid",
                format!("2^{} ..= 2^{}", self.min_exponent, self.max_exponent),
                "min_exponent < max_exponent, both within -1000 ..= 1000",
            ));
        }
        if !(self.multiplier.is_finite() && self.multiplier >= 1.0) {
            return Err(invalid(
                "bound grid multiplier",
                self.multiplier,
                "must be finite and >= 1",
            ));
        }
        Ok(())
    }

    /// The candidates `2^k` (before the multiplier).
    pub fn candidates(&self) -> Vec<f64> {
        (self.min_exponent..=self.max_exponent)
            .map(|k| 2f64.powi(k))
            .collect()
    }
}

/// One private bound on `|v_i|` (see the module docs), releasing with `epsilon`.
/// The caller must have charged `Charge::ExponentialMechanism { epsilon: charged, .. }`
/// where `charged = private_bound_epsilon(epsilon)`.
pub fn private_abs_bound<R: Rng + ?Sized>(
    values: &[f64],
    epsilon: f64,
    grid: &BoundGrid,
    rng: &mut R,
) -> Result<f64> {
    grid.check()?;
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(invalid("bound epsilon", epsilon, "must be finite and > 0"));
    }
    let mut abs: Vec<f64> = values.iter().map(|v| v.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let n = abs.len() as f64;
    let scores: Vec<f64> = grid
        .candidates()
        .iter()
        .map(|&t| {
            let above = abs.len() - abs.partition_point(|&a| a <= t);
            -(above as f64 - n / 2.0).abs()
        })
        .collect();
    let rnm = ReportNoisyMax::new(RnmNoise::Gumbel, 2.0 / epsilon)?;
    let k = rnm.select(rng, &scores)?;
    Ok(grid.multiplier * 2f64.powi(grid.min_exponent + k as i32))
}

/// The epsilon that [`private_abs_bound`] spends with parameter `epsilon` (the
/// library's map of report-noisy-max, rounded outward): what to charge.
pub fn private_bound_epsilon(epsilon: f64) -> Result<f64> {
    Ok(rnm_epsilon(
        Sensitivity::new(1.0, Norm::L1)?,
        2.0 / epsilon,
        false,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn a_large_epsilon_finds_the_median_scale() {
        // |v| spread over [10, 30): median 20, in (2^4, 2^5].
        let v: Vec<f64> = (0..400).map(|i| 10.0 + (i as f64) / 20.0).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let b = private_abs_bound(&v, 50.0, &BoundGrid::default(), &mut rng).unwrap();
        assert!(b == 4.0 * 16.0 || b == 4.0 * 32.0, "{b}");
    }

    #[test]
    fn bad_inputs_are_errors() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        assert!(private_abs_bound(&[1.0], 0.0, &BoundGrid::default(), &mut rng).is_err());
        let g = BoundGrid {
            min_exponent: 3,
            max_exponent: 3,
            multiplier: 4.0,
        };
        assert!(private_abs_bound(&[1.0], 1.0, &g, &mut rng).is_err());
        let g = BoundGrid {
            multiplier: f64::NAN,
            ..BoundGrid::default()
        };
        assert!(g.check().is_err());
    }

    #[test]
    fn the_charged_epsilon_is_the_mechanisms() {
        let e = private_bound_epsilon(0.3).unwrap();
        assert!(e >= 0.3 && e <= 0.3 * (1.0 + 1e-12), "{e}");
    }
}
