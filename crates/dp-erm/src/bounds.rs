//! Bounds on features and targets: declared by the user, or estimated privately.
//!
//! # The private range of one column
//!
//! A range `[c - s, c + s]` per column, from two releases:
//!
//! 1. **Centre** `c`: over the intervals between consecutive points of the public
//!    signed grid `{-2^k} U {0} U {2^k}`,
//!    `k = min_exponent ..= max_exponent` ([`BoundGrid`]), the score of a candidate `t`
//!    is `u(t) = -| #{i : v_i > t} - n/2 |` (a private median).
//! 2. **Half-width** `s`: over the candidates `2^k`, the score is
//!    `u(t) = -| #{i : |v_i - c| > t} - n/2 |` (a private median absolute deviation
//!    around the released centre); `s = multiplier * t` (default 3).
//!
//! Other rules ([`RangeRule`]) use the same two scores:
//!
//! * **One release per column** ([`RangeRule::SignedMedian`]): release 1 alone, range
//!   `c +- (multiplier / 3) |c|` (`[0, 2c]` for a positive centre at the default 3), a
//!   post-processing of `c`; [`RangeRule::AbsMedian`]: release 2 with `c = 0` (the
//!   median of `|v|`), range `+- multiplier * t`. Half the releases of the two-release
//!   rule, so under zCDP each gets about `sqrt 2` times the epsilon for the same share;
//!   the pipeline picks [`RangeRule::SignedMedian`] where the two-release rule is
//!   unreliable (`crate::pipeline::feature_range_rule`).
//! * **A spread on candidates relative to the centre** ([`RangeRule::MedianRelativeSpread`],
//!   [`RangeRule::MedianCappedSpread`]): release 2 over `|c| 2^(j / steps_per_octave)`,
//!   a public function of release 1's output (adaptive composition, as above).
//!
//! Each is one run of the exponential mechanism (report-noisy-max with Gumbel noise of
//! scale `b = 2 / eps`, [`dp_accounting::mechanisms::ReportNoisyMax`]). A symmetric bound
//! `|v| <= s` ([`private_abs_bound`]) is the second release alone with `c = 0`.
//!
//! **Neighbouring relation.** Replace-one (the relation of the pipeline's solvers):
//! datasets of the same public size `n` that differ in one record.
//!
//! **Precondition.** `n` is public (it is, under replace-one); the grid and the
//! multiplier are chosen without looking at the data; the centre used by release 2 is
//! the output of release 1 (public once released).
//!
//! **Claim.** Each release is `eps`-DP and `eps`-bounded-range, hence `eps^2/8`-zCDP.
//!
//! **Proof.** Replacing one record changes each count by at most 1 and leaves `n/2`
//! unchanged, so every score moves by at most `Delta = 1` (not monotonically). The
//! exponential mechanism with weights `exp(u / b)` is then `2 Delta / b`-DP (McSherry &
//! Talwar 2007, Thm 6) and `2 Delta / b`-bounded-range, hence `(2 Delta / b)^2 / 8`-zCDP
//! (Cesar & Rogers 2021, Thm 3.3); see [`dp_accounting::mechanisms::rnm_epsilon`]. The
//! range is a post-processing. Release 2 is adaptive (its score uses release 1's
//! output), which the composition theorems allow. The releases of all columns and the
//! target are charged as `Charge::ExponentialMechanism { epsilon, count }` to the
//! pipeline's ledger **before** any is drawn; how they compose with the fit is in
//! [`crate::pipeline`].
//!
//! Why medians and not extreme quantiles: candidates outside the data all score
//! `-(n - q n)` for a `q`-quantile; with `q` close to 1 an overestimate by any power of
//! two scores nearly as well as the truth and the noise picks one of the many. A median
//! puts every candidate outside the data at `-n/2`, the largest margin the mechanism can
//! have. The multiplier turns the spread into a range; the per-column clipping counts
//! (non-private diagnostics) say where it clipped.

use crate::error::{invalid, Result};
use dp_accounting::mechanisms::{rnm_epsilon, ReportNoisyMax, RnmNoise};
use dp_accounting::{Norm, Sensitivity};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The public grid of candidate bounds `multiplier * 2^k` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoundGrid {
    /// Smallest exponent `k` (default -8: `2^-8 ~ 0.004`).
    pub min_exponent: i32,
    /// Largest exponent `k` (default 16: `2^16 = 65,536`).
    pub max_exponent: i32,
    /// The bound is `multiplier` times the released median scale (default 3).
    pub multiplier: f64,
    /// Grid points per factor of two (default 2: neighbours `sqrt 2` apart, so the
    /// released midpoint is within `2^(1/4)`, 19 %, of any value of its interval). The
    /// interval holding the median always scores 0 however coarse the grid; a finer
    /// grid only adds candidates, which cost through their logarithm.
    pub steps_per_octave: u32,
    /// Which private statistics of a feature column make its range (default
    /// [`RangeRule::Auto`]). The target's range is always [`RangeRule::MedianSpread`].
    #[serde(default)]
    pub rule: RangeRule,
}

/// Which private statistics of a feature column make its range (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RangeRule {
    /// The pipeline chooses from public quantities (`crate::pipeline::feature_range_rule`):
    /// [`RangeRule::SignedMedian`] for classification with
    /// [`crate::FeatureBounds::private()`] where the `2p` releases of
    /// [`RangeRule::MedianSpread`] are unreliable even at the largest share, else
    /// [`RangeRule::MedianSpread`]. Outside the pipeline it is
    /// [`RangeRule::MedianSpread`].
    #[default]
    Auto,
    /// Two releases per column: the median `c` over the signed grid, then the median
    /// absolute deviation `t` around it over the positive grid; range
    /// `c +- multiplier * t`.
    MedianSpread,
    /// One release per column: the median `m` of `|v|` over the positive grid; range
    /// `+- multiplier * m`.
    AbsMedian,
    /// One release per column: the median `c` over the signed grid; range
    /// `c +- (multiplier / 3) |c|` (`[0, 2c]` for a positive `c` at the default 3).
    SignedMedian,
    /// Two releases per column: the median `c` over the signed grid, then the median
    /// absolute deviation around it over the candidates `|c| 2^(j / steps_per_octave)`,
    /// `2^-6 ..= 2^2` times `|c|` (a public function of the first release); range
    /// `c +- multiplier * t`.
    MedianRelativeSpread,
    /// As [`RangeRule::MedianRelativeSpread`] with the spread candidates
    /// `2^-6 ..= 2^-1.5` times `|c|`: the range is never wider than `c +- 1.06 |c|`
    /// (the [`RangeRule::SignedMedian`] range) and the spread can only tighten it.
    MedianCappedSpread,
}

impl RangeRule {
    /// Releases per column.
    pub fn releases_per_column(self) -> usize {
        match self {
            RangeRule::Auto
            | RangeRule::MedianSpread
            | RangeRule::MedianRelativeSpread
            | RangeRule::MedianCappedSpread => 2,
            RangeRule::AbsMedian | RangeRule::SignedMedian => 1,
        }
    }
}

impl Default for BoundGrid {
    fn default() -> Self {
        Self {
            min_exponent: -8,
            max_exponent: 16,
            multiplier: 3.0,
            steps_per_octave: 2,
            rule: RangeRule::Auto,
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
        if !(1..=64).contains(&self.steps_per_octave) {
            return Err(invalid(
                "bound grid steps per octave",
                self.steps_per_octave,
                "must be in 1 ..= 64",
            ));
        }
        Ok(())
    }

    /// The number of feature range releases for `p` columns.
    pub fn feature_releases(&self, p: usize) -> usize {
        self.rule.releases_per_column() * p
    }

    /// The number of grid points of the largest feature release (its `ln` enters the
    /// reliability condition `eps n / 4 >= ln K + 3`).
    pub fn feature_candidates(&self) -> usize {
        match self.rule {
            RangeRule::AbsMedian => zero_and(self.candidates()).len(),
            _ => signed_candidates(self).len(),
        }
    }

    /// The candidates `2^(k / steps_per_octave)` from `2^min_exponent` to
    /// `2^max_exponent` (before the multiplier).
    pub fn candidates(&self) -> Vec<f64> {
        let s = self.steps_per_octave as i32;
        (self.min_exponent * s..=self.max_exponent * s)
            .map(|k| 2f64.powf(k as f64 / s as f64))
            .collect()
    }
}

/// The signed candidates of the centre: `-2^max ..= -2^min, 0, 2^min ..= 2^max`.
pub fn signed_candidates(grid: &BoundGrid) -> Vec<f64> {
    let pos = grid.candidates();
    let mut out: Vec<f64> = pos.iter().rev().map(|v| -v).collect();
    out.push(0.0);
    out.extend(pos);
    out
}

/// `0` followed by the positive grid: the intervals of a non-negative quantity.
fn zero_and(mut pos: Vec<f64>) -> Vec<f64> {
    pos.insert(0, 0.0);
    pos
}

fn check_eps(epsilon: f64) -> Result<()> {
    if epsilon.is_finite() && epsilon > 0.0 {
        Ok(())
    } else {
        Err(invalid("bound epsilon", epsilon, "must be finite and > 0"))
    }
}

/// The exponential mechanism over the intervals `[g_k, g_{k+1})` between consecutive
/// grid points `g` (ascending), with scores `-dist(n/2, [#{v > g_{k+1}}, #{v > g_k}])`:
/// 0 for the interval that holds the median, and the distance of `n/2` to the counts
/// the interval spans otherwise. The released value is the interval's midpoint
/// (geometric for intervals away from 0, arithmetic for those touching 0).
///
/// Sensitivity: replacing one record moves each count `#{v > g}` by at most 1, so both
/// ends of each interval's count range move by at most 1 and so does the distance: the
/// scores have sensitivity 1 (see the module docs for the rest of the proof).
fn private_median_of_sorted<R: Rng + ?Sized>(
    sorted: &[f64],
    grid: &[f64],
    epsilon: f64,
    rng: &mut R,
) -> Result<f64> {
    let n = sorted.len() as f64;
    let above = |t: f64| (sorted.len() - sorted.partition_point(|&a| a <= t)) as f64;
    let half = n / 2.0;
    let scores: Vec<f64> = grid
        .windows(2)
        .map(|w| {
            let (hi_count, lo_count) = (above(w[0]), above(w[1]));
            -(lo_count - half).max(half - hi_count).max(0.0)
        })
        .collect();
    let rnm = ReportNoisyMax::new(RnmNoise::Gumbel, 2.0 / epsilon)?;
    let k = rnm.select(rng, &scores)?;
    let (a, b) = (grid[k], grid[k + 1]);
    Ok(if a > 0.0 {
        (a * b).sqrt()
    } else if b < 0.0 {
        -(a * b).sqrt()
    } else {
        (a + b) / 2.0
    })
}

/// A private range `[c - s, c + s]` of `values` (see the module docs): two releases,
/// each with `epsilon`. The caller must have charged two
/// `Charge::ExponentialMechanism { epsilon: private_bound_epsilon(epsilon), .. }`.
pub fn private_range<R: Rng + ?Sized>(
    values: &[f64],
    epsilon: f64,
    grid: &BoundGrid,
    rng: &mut R,
) -> Result<(f64, f64)> {
    grid.check()?;
    check_eps(epsilon)?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let c = private_median_of_sorted(&sorted, &signed_candidates(grid), epsilon, rng)?;
    let mut dev: Vec<f64> = values.iter().map(|v| (v - c).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let t = private_median_of_sorted(&dev, &zero_and(grid.candidates()), epsilon, rng)?;
    let s = grid.multiplier * t;
    Ok((c - s, c + s))
}

/// The private range of one feature column under `grid.rule` ([`RangeRule`]), each
/// release with `epsilon`. The caller must have charged
/// `grid.rule.releases_per_column()` releases of `private_bound_epsilon(epsilon)`.
pub fn private_feature_range<R: Rng + ?Sized>(
    values: &[f64],
    epsilon: f64,
    grid: &BoundGrid,
    rng: &mut R,
) -> Result<(f64, f64)> {
    grid.check()?;
    check_eps(epsilon)?;
    match grid.rule {
        RangeRule::Auto | RangeRule::MedianSpread => private_range(values, epsilon, grid, rng),
        RangeRule::AbsMedian => {
            let b = private_abs_bound(values, epsilon, grid, rng)?;
            Ok((-b, b))
        }
        RangeRule::SignedMedian => {
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            let c = private_median_of_sorted(&sorted, &signed_candidates(grid), epsilon, rng)?;
            let s = grid.multiplier / 3.0 * c.abs();
            Ok((c - s, c + s))
        }
        RangeRule::MedianRelativeSpread | RangeRule::MedianCappedSpread => {
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            let c = private_median_of_sorted(&sorted, &signed_candidates(grid), epsilon, rng)?;
            let st = grid.steps_per_octave as i32;
            let top = if grid.rule == RangeRule::MedianCappedSpread {
                -3 * st / 2
            } else {
                2 * st
            };
            let rel: Vec<f64> = (-6 * st..=top)
                .map(|k| c.abs() * 2f64.powf(k as f64 / st as f64))
                .collect();
            let mut dev: Vec<f64> = values.iter().map(|v| (v - c).abs()).collect();
            dev.sort_by(f64::total_cmp);
            let t = private_median_of_sorted(&dev, &zero_and(rel), epsilon, rng)?;
            let s = grid.multiplier * t;
            Ok((c - s, c + s))
        }
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
    check_eps(epsilon)?;
    let mut abs: Vec<f64> = values.iter().map(|v| v.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let t = private_median_of_sorted(&abs, &zero_and(grid.candidates()), epsilon, rng)?;
    Ok(grid.multiplier * t)
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
        // The median 20 lies in [16, 16 sqrt 2): midpoint 19.03, times the multiplier 3.
        assert!((3.0 * 16.0..=3.0 * 22.7).contains(&b), "{b}");
    }

    #[test]
    fn a_large_epsilon_finds_the_centre_and_spread() {
        // Values 40..=80: median 60 (between 32 and 64: the centre is 64 or 32), MAD 10.
        let v: Vec<f64> = (0..401).map(|i| 40.0 + i as f64 / 10.0).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let (lo, hi) = private_range(&v, 50.0, &BoundGrid::default(), &mut rng).unwrap();
        assert!(lo <= 45.0 && hi >= 75.0, "[{lo}, {hi}]");
        assert!(hi - lo <= 8.0 * 12.0, "[{lo}, {hi}]");
    }

    #[test]
    fn every_rule_finds_its_statistics_at_a_large_epsilon() {
        // Values 40..=80: median 60 (the centre released is 64 or 45.3: the
        // geometric midpoint of [32 sqrt 2, 64) or [45.25, 64)), MAD 10, median |v| 60.
        let v: Vec<f64> = (0..401).map(|i| 40.0 + i as f64 / 10.0).collect();
        let rule = |r: RangeRule| BoundGrid {
            rule: r,
            ..BoundGrid::default()
        };
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let (lo, hi) =
            private_feature_range(&v, 50.0, &rule(RangeRule::AbsMedian), &mut rng).unwrap();
        assert_eq!(lo, -hi);
        assert!((3.0 * 45.0..=3.0 * 64.0).contains(&hi), "{hi}");
        let (lo, hi) =
            private_feature_range(&v, 50.0, &rule(RangeRule::SignedMedian), &mut rng).unwrap();
        let c = (lo + hi) / 2.0;
        assert!((45.0..=64.0).contains(&c), "{c}");
        assert!((hi - lo - 2.0 * c).abs() < 1e-9, "[{lo}, {hi}]");
        let (lo, hi) =
            private_feature_range(&v, 50.0, &rule(RangeRule::MedianRelativeSpread), &mut rng)
                .unwrap();
        assert!(
            lo <= 45.0 && hi >= 75.0 && hi - lo <= 8.0 * 12.0,
            "[{lo}, {hi}]"
        );
        assert_eq!(RangeRule::MedianSpread.releases_per_column(), 2);
        assert_eq!(rule(RangeRule::SignedMedian).feature_releases(30), 30);
        assert_eq!(BoundGrid::default().feature_releases(30), 60);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        assert!(private_abs_bound(&[1.0], 0.0, &BoundGrid::default(), &mut rng).is_err());
        let g = BoundGrid {
            min_exponent: 3,
            max_exponent: 3,
            ..BoundGrid::default()
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
        assert!((0.3..=0.3 * (1.0 + 1e-12)).contains(&e), "{e}");
    }
}
