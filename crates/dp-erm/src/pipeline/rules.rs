//! Step 2's plan: the share of epsilon and the rule of the private feature ranges (from
//! public quantities only), and the charged plan of the bounds' releases.

use super::*;

/// The per-release epsilons of the private bounds and how they compose.
pub(super) struct PrePlan {
    pub(super) feature_epsilon: Option<f64>,
    pub(super) target_epsilon: Option<f64>,
    /// The feature releases: `None` pure (basic composition, delta 0); `Some(d)`: zCDP
    /// at delta `d`. The target's two releases are always pure.
    pub(super) feature_zcdp_delta: Option<f64>,
    pub(super) how: String,
}

impl PrePlan {
    /// No private bounds: nothing to charge.
    pub(super) fn none() -> Self {
        Self {
            feature_epsilon: None,
            target_epsilon: None,
            feature_zcdp_delta: None,
            how: "no private bounds".into(),
        }
    }
    /// Charges the planned releases: `m` for the features (two per column, centre and
    /// half-width, or one per column: [`BoundGrid::feature_releases`]), two for the
    /// target.
    pub(super) fn charge(&self, ledger: &mut Ledger, m: usize) -> Result<()> {
        self.charge_features(ledger, m)?;
        self.charge_target(ledger)
    }
    fn charge_features(&self, ledger: &mut Ledger, m: usize) -> Result<()> {
        if let Some(e) = self.feature_epsilon {
            ledger.charge(Charge::ExponentialMechanism {
                epsilon: private_bound_epsilon(e)?,
                count: m as u64,
            })?;
        }
        Ok(())
    }
    fn charge_target(&self, ledger: &mut Ledger) -> Result<()> {
        if let Some(e) = self.target_epsilon {
            ledger.charge(Charge::ExponentialMechanism {
                epsilon: private_bound_epsilon(e)?,
                count: 2,
            })?;
        }
        Ok(())
    }
    /// `(eps, delta)` of the planned releases: the feature part by the ledger's zCDP
    /// accountant (or basic composition when pure), plus the target part by basic
    /// composition (Dwork & Roth 2014, Thm 3.16).
    pub(super) fn spent(&self, m: usize) -> Result<(f64, f64)> {
        let pure = |l: &Ledger| {
            let mut e = 0.0;
            for c in l.entries() {
                if let Charge::ExponentialMechanism { epsilon, count } = c {
                    e += epsilon * *count as f64;
                }
            }
            if e > 0.0 {
                dp_accounting::num::round_up(e)
            } else {
                0.0
            }
        };
        let mut f = Ledger::new();
        self.charge_features(&mut f, m)?;
        let (fe, fd) = match (self.feature_epsilon, self.feature_zcdp_delta) {
            (None, _) => (0.0, 0.0),
            (Some(_), Some(d)) => (f.guarantee(Delta::new(d)?, Accountant::Zcdp)?, d),
            (Some(_), None) => (pure(&f), 0.0),
        };
        let mut t = Ledger::new();
        self.charge_target(&mut t)?;
        let te = pure(&t);
        Ok((
            if te > 0.0 {
                dp_accounting::num::round_up(fe + te)
            } else {
                fe
            },
            fd,
        ))
    }
}

/// The margin `eps n / 4` at which a range release is reliable: `ln(K) + 3` for `K`
/// candidates (McSherry & Talwar 2007, Thm 8: the exponential mechanism picks a
/// candidate whose score is within `(2 / eps) (ln K + t)` of the best with probability
/// at least `1 - e^-t`; the median's interval scores 0 and candidates half the data away
/// score `-n/4` or less).
pub(super) fn reliable_margin(grid: &BoundGrid) -> f64 {
    reliable_margin_of(grid.feature_candidates())
}

/// `ln(K) + 3` for `K` candidates (see [`reliable_margin`]).
pub(super) fn reliable_margin_of(k: usize) -> f64 {
    (k as f64).ln() + 3.0
}

/// The share of epsilon for [`FeatureBounds::PrivateAuto`]: the smallest share `s` in
/// [`DEFAULT_FEATURE_SHARE`] ..= [`MAX_FEATURE_SHARE`] at which each of the `2p` range
/// releases, as planned by the pipeline's own composition for `s * epsilon`, has
/// `eps_release n / 4 >= ln(K) + 3` (the reliability condition of the warnings);
/// [`MAX_FEATURE_SHARE`] when none does. A function of public quantities only
/// (epsilon, delta, the public training size `n` under replace-one, `p`, the target's
/// share and the public grid): choosing it costs no privacy.
///
/// Why spend more than a fifth of a small budget on the ranges: ranges picked at random
/// from the grid (what an unreliable release gives) scale some columns to nothing and
/// clip others to a constant, and no fit recovers from that, while the no-tuning fit at
/// a small budget runs the fewest passes anyway and loses little from a smaller share.
/// Measured on breast_cancer at eps 1 (20 runs, `examples/validate.rs`): a share of 0.2
/// gave 0.697 test accuracy (9 runs at or below the majority class), 0.5 gave 0.849
/// (none); diabetes at eps 1: 1.00x and 0.91x the MSE of predicting the mean.
pub fn feature_share_rule(
    epsilon: f64,
    delta: f64,
    n: usize,
    p: usize,
    target_share: Option<f64>,
    grid: &BoundGrid,
) -> Result<f64> {
    let lo = DEFAULT_FEATURE_SHARE;
    // Leave room for the target's share and for the fit.
    let max = if grid.rule.releases_per_column() == 1 {
        MAX_ONE_RELEASE_SHARE
    } else {
        MAX_FEATURE_SHARE
    };
    let hi = max.min(0.9 - target_share.unwrap_or(0.0));
    if hi <= lo {
        return Ok(hi.max(0.05));
    }
    let need = reliable_margin(grid);
    let ok = |s: f64| -> Result<bool> {
        let plan = plan_preprocessing(
            epsilon,
            delta,
            grid.feature_releases(p),
            Some(s),
            target_share,
        )?;
        Ok(plan.feature_epsilon.unwrap_or(0.0) * n as f64 / 4.0 >= need)
    };
    if ok(lo)? {
        return Ok(lo);
    }
    if !ok(hi)? {
        return Ok(hi);
    }
    let (mut a, mut b) = (lo, hi);
    for _ in 0..40 {
        let m = 0.5 * (a + b);
        if ok(m)? {
            b = m;
        } else {
            a = m;
        }
    }
    Ok(b)
}

/// The rule of [`FeatureBounds::private()`]'s ranges when the grid leaves it to the
/// pipeline ([`RangeRule::Auto`]); any other rule of the grid is kept. A function of
/// public quantities only (the task, epsilon, delta, the public training size `n`, `p`,
/// the target's share and the grid): choosing it costs no privacy.
///
/// [`RangeRule::SignedMedian`] (one release per column, range `c +- |c|`) for
/// classification where the `2p` releases of [`RangeRule::MedianSpread`] fail the
/// reliability condition `eps n / 4 >= ln K + 3` even at [`MAX_FEATURE_SHARE`];
/// [`RangeRule::MedianSpread`] otherwise (and always for regression).
///
/// Why: with `p` releases instead of `2p` each gets about `sqrt 2` times the epsilon
/// under zCDP, and the exponential mechanism's chance of a range far from the data
/// falls like `K exp(-eps n / 4)`; at breast_cancer's 455 rows and 30 columns at eps 1,
/// 23 % of the two-release ranges missed their column's interquartile range and 50 %
/// were over 20 times as wide (the column is lost either way), against 20 % and 11 %
/// with one release at share 0.6. Measured (20 seeds, docs/pipeline.md): breast_cancer
/// at eps 0.5 / 1 / 2: 0.630 / 0.849 / 0.921 before, 0.773 / 0.899 / 0.928 after (hand
/// min/max 0.846 / 0.883 / 0.915); eps 5 keeps MedianSpread (0.957). Not for regression:
/// on diabetes the one-release ranges gave 1.3x the MSE of predicting the mean at eps 1
/// (MedianSpread 0.91x), because `c +- |c|` is several times wider than the data on
/// columns whose spread is small beside their median.
pub fn feature_range_rule(
    task: Task,
    epsilon: f64,
    delta: f64,
    n: usize,
    p: usize,
    target_share: Option<f64>,
    grid: &BoundGrid,
) -> Result<RangeRule> {
    if grid.rule != RangeRule::Auto {
        return Ok(grid.rule);
    }
    if task == Task::Regression {
        return Ok(RangeRule::MedianSpread);
    }
    let two = BoundGrid {
        rule: RangeRule::MedianSpread,
        ..*grid
    };
    let hi = MAX_FEATURE_SHARE.min(0.9 - target_share.unwrap_or(0.0));
    if hi <= 0.0 {
        return Ok(RangeRule::MedianSpread);
    }
    let plan = plan_preprocessing(
        epsilon,
        delta,
        two.feature_releases(p),
        Some(hi),
        target_share,
    )?;
    let reliable = plan.feature_epsilon.unwrap_or(0.0) * n as f64 / 4.0 >= reliable_margin(&two);
    Ok(if reliable {
        RangeRule::MedianSpread
    } else {
        RangeRule::SignedMedian
    })
}

/// Splits `share * epsilon` over the bound releases: `m` feature releases
/// ([`BoundGrid::feature_releases`]: `2p` or `p`) on the feature share (the better of pure and zCDP at `delta_pre = share * delta`), 2 pure
/// target releases on the target share.
pub(super) fn plan_preprocessing(
    epsilon: f64,
    delta: f64,
    m: usize,
    feat: Option<f64>,
    tgt: Option<f64>,
) -> Result<PrePlan> {
    let share = feat.unwrap_or(0.0) + tgt.unwrap_or(0.0);
    if share == 0.0 {
        return Ok(PrePlan::none());
    }
    if share >= 1.0 {
        return Err(invalid(
            "bound shares",
            share,
            "the feature and target shares must add up to less than 1",
        ));
    }
    let shave = 1.0 - 1e-9;
    let target_epsilon = tgt.map(|s| s * epsilon * shave / 2.0);
    let (feature_epsilon, feature_zcdp_delta, how_f) = match feat {
        None => (None, None, String::new()),
        Some(s) => {
            let pre = s * epsilon * shave;
            let pure = pre / m as f64;
            // zCDP: rho from eps_pre at delta_pre (Bun & Steinke 2016, Prop 1.3
            // inverted: sqrt(rho) = sqrt(L + eps) - sqrt(L), L = ln(1/delta)), each
            // release eps^2/8 (Cesar & Rogers 2021).
            let d_pre = s * delta;
            let l = -d_pre.ln();
            let rho = ((l + pre).sqrt() - l.sqrt()).powi(2);
            let z = (8.0 * rho / m as f64).sqrt();
            if z > pure {
                (
                    Some(z),
                    Some(d_pre),
                    format!(
                        "feature ranges: {m} exponential mechanisms in zCDP at delta {d_pre:e}"
                    ),
                )
            } else {
                (
                    Some(pure),
                    None,
                    format!("feature ranges: {m} pure exponential mechanisms"),
                )
            }
        }
    };
    let mut how = vec![];
    if !how_f.is_empty() {
        how.push(how_f);
    }
    if tgt.is_some() {
        how.push("target range: 2 pure exponential mechanisms".into());
    }
    let plan = PrePlan {
        feature_epsilon,
        target_epsilon,
        feature_zcdp_delta,
        how: if how.is_empty() {
            "no private bounds".into()
        } else {
            how.join("; ")
        },
    };
    // Check with the ledger's own accounting that the plan fits share * epsilon.
    let (e, d) = plan.spent(m)?;
    if e > share * epsilon || d > share * delta {
        return Err(invalid(
            "bound shares",
            format!("{e} spent of {}", share * epsilon),
            "internal: the bounds' plan exceeds its share",
        ));
    }
    Ok(plan)
}
