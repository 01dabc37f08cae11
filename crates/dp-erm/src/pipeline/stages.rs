//! The pipeline's steps, each a function of what the steps before it produced (the
//! numbers are those of the module documentation of [`super`]): the caller's settings
//! checked before any data is read, 2. the bounds, 3. clipping and scaling, 5. the
//! composed guarantee, 6. the model in the user's units, and the non-private
//! diagnostics. [`Pipeline::fit`] runs them in order.

use super::*;

/// The caller's settings, checked and resolved before any data is read (all public).
pub(super) struct Checked {
    pub(super) loss_kind: LossKind,
    /// `(epsilon, delta)` of a private algorithm; `None` for a non-private one.
    pub(super) budget: Option<(f64, f64)>,
    pub(super) feature_bounds: FeatureBounds,
    pub(super) target_bound: Option<TargetBound>,
    /// The support bound the solver charges (the intercept column included).
    pub(super) support: Option<usize>,
    pub(super) intercept: bool,
}

/// Step 2's result: the bounds, the plan of their private releases and its charges.
pub(super) struct Bounds {
    pub(super) grid: BoundGrid,
    pub(super) feature_share: Option<f64>,
    pub(super) target_share: Option<f64>,
    pub(super) pre: PrePlan,
    /// `(eps_pre, delta_pre)` of the bounds' releases.
    pub(super) spent: (f64, f64),
    /// The bounds' charges; the fit's are added in step 5.
    pub(super) ledger: Ledger,
    pub(super) feature_ranges: Vec<(f64, f64)>,
    pub(super) feature_source: BoundSource,
    pub(super) target: Option<((f64, f64), BoundSource)>,
}

/// Step 3's result: the design the solver reads and how it was made from the raw one.
pub(super) struct Scaled<D: Design> {
    pub(super) data: Dataset<D>,
    pub(super) centres: Vec<f64>,
    pub(super) scales: Vec<f64>,
    /// The dual algorithms fit the intercept as a penalised coefficient of the column
    /// `1 / row_scale`.
    pub(super) dual_intercept: bool,
    pub(super) shape: ScaledShape,
    /// Training values outside their range, per column (not private).
    pub(super) clipped_per_column: Vec<usize>,
    /// Records projected onto the support bound (not private).
    pub(super) projected_records: Option<usize>,
    /// Centre and half-width of the target's range (regression).
    pub(super) target_centre_scale: Option<(f64, f64)>,
    /// Training targets outside their range (not private).
    pub(super) target_clipped: Option<usize>,
}

/// Centre and half-width of a range: centred only when `centre` (with an intercept;
/// without one, centring would hide an offset in the model), else `[-max|.|, max|.|]`.
fn centre_scale((lo, hi): (f64, f64), centre: bool) -> (f64, f64) {
    if centre {
        ((lo + hi) / 2.0, (hi - lo) / 2.0)
    } else {
        (0.0, lo.abs().max(hi.abs()))
    }
}

impl Pipeline {
    /// Checks the caller's settings against each other and the data's shape, before any
    /// value of the data is read.
    pub(super) fn check<D: PipelineDesign>(&self, data: &Dataset<D>) -> Result<Checked> {
        let loss_kind = self.loss_kind()?;
        let private = self.algorithm.is_private();
        let budget = match (private, self.epsilon, self.delta) {
            (true, Some(e), Some(d)) => {
                if !(e.is_finite() && e > 0.0) {
                    return Err(invalid("epsilon", e, "must be finite and > 0"));
                }
                if !(d > 0.0 && d < 1.0) {
                    return Err(invalid("delta", d, "must be in (0, 1)"));
                }
                Some((e, d))
            }
            (true, _, _) => {
                return Err(PipelineError::Missing(format!(
                    "privacy(epsilon, delta): {} is private",
                    self.algorithm.as_str()
                )))
            }
            (false, None, None) => None,
            (false, _, _) => {
                return Err(PipelineError::Unsupported(format!(
                    "{} is not private: drop privacy(..) or choose a private algorithm",
                    self.algorithm.as_str()
                )))
            }
        };
        if self.threads == 0 {
            return Err(invalid("threads", 0, "must be at least 1"));
        }
        self.grid.check()?;
        let fb = match (self.feature_bounds.clone(), self.normalize_rows) {
            (Some(b), _) => b,
            // Normalised rows have every value in [-1, 1]: a public bound.
            (None, true) => FeatureBounds::Uniform(1.0),
            (None, false) => {
                return Err(PipelineError::Missing(
                    "feature_bounds: declare them (FeatureBounds::Uniform / PerColumn, chosen \
                     without looking at the data), estimate them privately \
                     (FeatureBounds::private()), or opt in to FeatureBounds::NonPrivateFromData"
                        .into(),
                ))
            }
        };
        if D::SPARSE
            && matches!(
                fb,
                FeatureBounds::Private { .. } | FeatureBounds::PrivateAuto
            )
        {
            return Err(PipelineError::Unsupported(
                "private feature ranges need dense data: each range is a private median and \
                 spread of its column, and a sparse column, mostly zeros, has median 0 and \
                 spread 0, so the released range would clip every non-zero value to the \
                 grid's smallest interval and the feature would vanish from the fit. Declare \
                 public bounds (FeatureBounds::Uniform / PerColumn / Ranges containing 0, \
                 chosen without looking at the data), or normalise the rows \
                 (normalize_rows: every value is then in [-1, 1])"
                    .into(),
            ));
        }
        let support = match self.max_nonzeros {
            None => None,
            Some(0) => {
                return Err(invalid(
                    "max_nonzeros",
                    0,
                    "a record must be allowed at least one non-zero feature",
                ))
            }
            Some(_) if self.algorithm != Algorithm::DpCd => {
                return Err(PipelineError::Unsupported(format!(
                    "max_nonzeros applies to dp-cd only (its accounting is per coordinate \
                     release), not {}",
                    self.algorithm.as_str()
                )))
            }
            Some(k) => Some(k),
        };
        let tb = match (self.task, &self.target_bound) {
            (Task::Regression, None) => {
                return Err(PipelineError::Missing(
                    "target_bound: regression targets need a bound (TargetBound::Declared(Y), \
                     TargetBound::private(), or TargetBound::NonPrivateFromData)"
                        .into(),
                ))
            }
            (Task::Classification, Some(_)) => {
                return Err(PipelineError::Unsupported(
                    "target_bound applies to regression only (classification labels are +-1)"
                        .into(),
                ))
            }
            (_, t) => t.clone(),
        };
        // The dual algorithms fit it as one more coefficient under the same L2 penalty
        // (their dual needs an unweighted ridge): a penalised intercept, as LIBLINEAR's.
        let intercept = self.intercept.unwrap_or(true);
        let (n_all, p) = (data.n_samples(), data.n_features());
        if n_all < 2 || p == 0 {
            return Err(PipelineError::Model(dp_models::ModelError::Empty(format!(
                "{n_all} rows and {p} features: the pipeline needs at least 2 rows and 1 feature"
            ))));
        }
        if let Some(names) = &self.feature_names {
            check_len("feature names", names.len(), p)?;
        }
        // The support bound the solver charges: the intercept column is one more
        // non-zero in every record.
        let support = match support {
            Some(k) => Some(k.checked_add(usize::from(intercept)).ok_or_else(|| {
                invalid(
                    "max_nonzeros",
                    k,
                    "with an intercept the bound is k + 1 (the intercept column), which overflows",
                )
            })?),
            None => None,
        };
        Ok(Checked {
            loss_kind,
            budget,
            feature_bounds: fb,
            target_bound: tb,
            support,
            intercept,
        })
    }

    /// Step 2: the feature and target ranges, declared or released privately, every
    /// private release planned and charged before any is drawn.
    pub(super) fn bounds<D: PipelineDesign>(
        &self,
        c: &Checked,
        train: &Dataset<D>,
        rng: &mut ChaCha20Rng,
    ) -> Result<Bounds> {
        let (fb, tb) = (&c.feature_bounds, &c.target_bound);
        let (n, p) = (train.n_samples(), train.n_features());
        let tgt_share = match tb {
            Some(TargetBound::Private { share }) => Some(share_ok("target bound share", *share)?),
            _ => None,
        };
        // The feature ranges' rule: RangeRule::Auto is resolved from public quantities
        // (feature_range_rule) for FeatureBounds::private(), and is the two-release
        // MedianSpread otherwise.
        let grid = match (fb, c.budget) {
            (FeatureBounds::PrivateAuto, Some((epsilon, delta))) => BoundGrid {
                rule: feature_range_rule(self.task, epsilon, delta, n, p, tgt_share, &self.grid)?,
                ..self.grid
            },
            _ if self.grid.rule == RangeRule::Auto => BoundGrid {
                rule: RangeRule::MedianSpread,
                ..self.grid
            },
            _ => self.grid,
        };
        let feat_share = match (fb, c.budget) {
            (FeatureBounds::Private { share }, _) => Some(share_ok("feature bound share", *share)?),
            (FeatureBounds::PrivateAuto, Some((epsilon, delta))) => {
                Some(feature_share_rule(epsilon, delta, n, p, tgt_share, &grid)?)
            }
            (FeatureBounds::PrivateAuto, None) => Some(DEFAULT_FEATURE_SHARE),
            _ => None,
        };
        if (feat_share.is_some() || tgt_share.is_some()) && c.budget.is_none() {
            return Err(PipelineError::Unsupported(format!(
                "private bounds need a private algorithm and a budget: {} is not private \
                 (declare the bounds instead)",
                self.algorithm.as_str()
            )));
        }
        let mut ledger = Ledger::new();
        let releases = grid.feature_releases(p);
        let pre = match c.budget {
            Some((epsilon, delta)) => {
                plan_preprocessing(epsilon, delta, releases, feat_share, tgt_share)?
            }
            // Not private: no shares (refused above), nothing to plan.
            None => PrePlan::none(),
        };
        pre.charge(&mut ledger, releases)?;
        let spent = pre.spent(releases)?;
        let (feature_ranges, feature_source) = match fb {
            FeatureBounds::Uniform(b) => {
                positive_bound("feature bound", *b)?;
                (vec![(-*b, *b); p], BoundSource::Declared)
            }
            FeatureBounds::PerColumn(v) => {
                check_len("feature bounds", v.len(), p)?;
                for &b in v {
                    positive_bound("feature bound", b)?;
                }
                (v.iter().map(|&b| (-b, b)).collect(), BoundSource::Declared)
            }
            FeatureBounds::Ranges(v) => {
                check_len("feature ranges", v.len(), p)?;
                for &r in v {
                    check_range("feature range", r)?;
                }
                if D::SPARSE {
                    if let Some(j) = v.iter().position(|&(lo, hi)| lo > 0.0 || hi < 0.0) {
                        return Err(invalid(
                            "feature range",
                            format!("[{}, {}] (feature {j})", v[j].0, v[j].1),
                            "a sparse design's ranges must contain 0 (clipping to a range \
                             without 0 would make every absent feature present)",
                        ));
                    }
                }
                (v.clone(), BoundSource::Declared)
            }
            FeatureBounds::Private { .. } | FeatureBounds::PrivateAuto => {
                let e = pre.feature_epsilon.expect("planned above");
                let mut out = Vec::with_capacity(p);
                for j in 0..p {
                    out.push(private_feature_range(
                        &train.x().column_values(j),
                        e,
                        &grid,
                        rng,
                    )?);
                }
                (out, BoundSource::Private)
            }
            FeatureBounds::NonPrivateFromData => (
                (0..p)
                    .map(|j| {
                        let (lo, hi) = data_range(&train.x().column_values(j));
                        // A sparse design's zeros stay zeros: the range holds 0.
                        if D::SPARSE {
                            (lo.min(0.0), hi.max(0.0))
                        } else {
                            (lo, hi)
                        }
                    })
                    .collect(),
                BoundSource::NonPrivate,
            ),
        };
        let target = match tb {
            None => None,
            Some(TargetBound::Declared(y)) => {
                positive_bound("target bound", *y)?;
                Some(((-*y, *y), BoundSource::Declared))
            }
            Some(TargetBound::Range(lo, hi)) => {
                check_range("target range", (*lo, *hi))?;
                Some(((*lo, *hi), BoundSource::Declared))
            }
            Some(TargetBound::Private { .. }) => {
                let e = pre.target_epsilon.expect("planned above");
                Some((
                    private_range(train.y(), e, &self.grid, rng)?,
                    BoundSource::Private,
                ))
            }
            Some(TargetBound::NonPrivateFromData) => {
                Some((data_range(train.y()), BoundSource::NonPrivate))
            }
        };
        Ok(Bounds {
            grid,
            feature_share: feat_share,
            target_share: tgt_share,
            pre,
            spent,
            ledger,
            feature_ranges,
            feature_source,
            target,
        })
    }

    /// Step 3: every value clipped to its range and scaled, record by record (a map of
    /// each record alone, with public or already released ranges); the intercept's
    /// constant column appended; the support bound's projection.
    pub(super) fn scale<D: PipelineDesign>(
        &self,
        c: &Checked,
        b: &Bounds,
        train: Cow<'_, Dataset<D>>,
    ) -> Result<Scaled<D>> {
        let (n, p) = (train.n_samples(), train.n_features());
        let (intercept, support) = (c.intercept, c.support);
        let (feature_ranges, target) = (&b.feature_ranges, b.target);
        // Centre and half-width of each range: centred only with an intercept (without
        // one, centring would hide an offset in the model), else [-max|.|, max|.|]. The
        // features of a sparse design, or under a support bound, are never centred
        // (centring would fill every row; the intercept column takes the offset).
        let centre_features = intercept && !D::SPARSE && support.is_none();
        let (centres, mut scales): (Vec<f64>, Vec<f64>) = feature_ranges
            .iter()
            .map(|&r| centre_scale(r, centre_features))
            .unzip();
        // A public bound on the scaled rows' Euclidean norm: sqrt(p) from the entries in
        // [-1, 1]; after row normalisation, with every range holding 0 and no centring,
        // also 1 / min_j s_j (|clamp(x_j)| <= |x_j| and ||x|| <= 1).
        let normalised_norm = (self.normalize_rows
            && centres.iter().all(|&c| c == 0.0)
            && feature_ranges
                .iter()
                .all(|&(lo, hi)| lo <= 0.0 && hi >= 0.0))
        .then(|| 1.0 / scales.iter().copied().fold(f64::INFINITY, f64::min));

        // 3. Clip and scale, record by record. The dual algorithms need rows of L2 norm
        // <= 1: each scaled feature, and their constant intercept column, is further
        // divided by sqrt(p + 1) (sqrt(p) without an intercept; public), or by
        // sqrt(R^2 + 1) with the smaller row-norm bound R of normalised rows.
        let row_scale = if self.algorithm.is_dual() {
            match normalised_norm {
                Some(r) if r * r < p as f64 => (r * r + f64::from(u8::from(intercept))).sqrt(),
                _ => ((p + usize::from(intercept)) as f64).sqrt(),
            }
        } else {
            1.0
        };
        scales.iter_mut().for_each(|s| *s *= row_scale);
        let dual_intercept = self.algorithm.is_dual() && intercept;
        // The scaled columns followed by the intercept's constant column when there is
        // one (the solver fits it as one more coordinate): 1, or 1 / row_scale for the
        // dual algorithms (their rows, this column included, must have L2 norm <= 1).
        // Under a support bound the column is appended after the projection (the
        // intercept is one more non-zero of every record, never projected away).
        let constant = intercept.then_some(if self.algorithm.is_dual() {
            1.0 / row_scale
        } else {
            1.0
        });
        // A training set handed over is clipped and scaled in place (dense); a borrowed
        // one into a new design. The same values either way.
        let (x_in, y_in): (Cow<'_, D>, Cow<'_, [f64]>) = match train {
            Cow::Owned(d) => {
                let (x, y) = d.into_parts();
                (Cow::Owned(x), Cow::Owned(y))
            }
            Cow::Borrowed(d) => (Cow::Borrowed(d.x()), Cow::Borrowed(d.y())),
        };
        let clip_scale = |x: Cow<'_, D>, constant: Option<f64>| match x {
            Cow::Owned(x) => x.clip_and_scale_owned(feature_ranges, &centres, &scales, constant),
            Cow::Borrowed(x) => x.clip_and_scale(feature_ranges, &centres, &scales, constant),
        };
        let (x, clipped_per_column, projected_records) = match self.max_nonzeros {
            Some(k) => {
                let (mut x, clipped) = clip_scale(x_in, None)?;
                // The declared support bound: a record with more non-zeros keeps its
                // largest (a fixed map of each record; dp_optim::support).
                let projected = RowSupport::AtMost(k).project(&mut x)?;
                let x = if intercept {
                    // DP-CD only (checked above): the constant is 1.
                    with_intercept_column(&Dataset::new(x, vec![0.0; n])?)?
                        .into_parts()
                        .0
                } else {
                    x
                };
                (x, clipped, Some(projected))
            }
            None => {
                let (x, clipped) = clip_scale(x_in, constant)?;
                (x, clipped, None)
            }
        };
        let shape = ScaledShape {
            row_scale,
            row_norm: normalised_norm.map(|r| r.min((p as f64).sqrt()) / row_scale),
            support,
            intercept,
        };
        let (target_cs, y, target_clipped) = match target {
            Some(((lo, hi), _)) => {
                let (c, s) = centre_scale((lo, hi), intercept);
                let k = y_in.iter().filter(|&&v| v < lo || v > hi).count();
                (
                    Some((c, s)),
                    y_in.iter().map(|v| (v.clamp(lo, hi) - c) / s).collect(),
                    Some(k),
                )
            }
            None => (None, y_in.into_owned(), None),
        };
        Ok(Scaled {
            data: Dataset::new(x, y)?,
            centres,
            scales,
            dual_intercept,
            shape,
            clipped_per_column,
            projected_records,
            target_centre_scale: target_cs,
            target_clipped,
        })
    }

    /// Step 5: the fit's charges added to the bounds' ledger, and the guarantee of the
    /// whole pipeline by basic composition (`None` for a non-private fit).
    pub(super) fn guarantee(
        &self,
        c: &Checked,
        b: &Bounds,
        fitted: &Fitted,
    ) -> Result<Option<PipelineGuarantee>> {
        let non_private_inputs = b.feature_source == BoundSource::NonPrivate
            || matches!(b.target, Some((_, BoundSource::NonPrivate)));
        let mut ledger = b.ledger.clone();
        Ok(match fitted.model.privacy.as_ref() {
            Some(report) => {
                for c in report.ledger.entries() {
                    ledger.charge(c.clone())?;
                }
                let (epsilon, delta) = c.budget.ok_or_else(|| {
                    PipelineError::Unsupported(
                        "internal: a private report from a fit without a budget".into(),
                    )
                })?;
                let (pre_eps, pre_delta) = b.spent;
                let g = &report.guarantee;
                let total_eps = pre_eps + g.epsilon;
                let total_delta = pre_delta + g.delta;
                if total_eps > epsilon || total_delta > delta {
                    return Err(PipelineError::Unsupported(format!(
                        "internal: the composed guarantee ({total_eps}, {total_delta}) is above \
                         the target ({epsilon}, {delta})"
                    )));
                }
                Some(PipelineGuarantee {
                    epsilon: total_eps,
                    delta: total_delta,
                    adjacency: g.adjacency,
                    how: format!(
                        "basic composition (Dwork & Roth 2014, Thm 3.16) of the private bounds \
                         ({}) and the fit ({})",
                        b.pre.how, g.how
                    ),
                    preprocessing_epsilon: pre_eps,
                    preprocessing_delta: pre_delta,
                    fit: g.clone(),
                    ledger,
                    uses_non_private_inputs: non_private_inputs
                        || report.uses_non_private_constants,
                    plan: Some(report.plan.clone()),
                })
            }
            None => None,
        })
    }

    /// Step 6: the scaling folded into the coefficients,
    /// `y = sy (sum_j w_j (clip(x_j) - c_j) / s_j + w0) + cy` (post-processing); a
    /// coefficient that is not finite in the user's units is an error, never a model.
    pub(super) fn fold<D: Design>(
        &self,
        c: &Checked,
        b: &Bounds,
        s: &Scaled<D>,
        scaled_model: LinearModel,
        privacy: Option<PipelineGuarantee>,
    ) -> Result<PipelineModel> {
        let (cy, sy) = s.target_centre_scale.unwrap_or((0.0, 1.0));
        let coefficients: Vec<f64> = scaled_model
            .coefficients
            .iter()
            .zip(&s.scales)
            .map(|(w, sc)| sy * w / sc)
            .collect();
        let offset: f64 = scaled_model
            .coefficients
            .iter()
            .zip(s.centres.iter().zip(&s.scales))
            .map(|(w, (ce, sc))| w * ce / sc)
            .sum();
        let model = PipelineModel {
            task: self.task,
            loss: c.loss_kind,
            feature_ranges: b.feature_ranges.clone(),
            feature_bounds_source: b.feature_source,
            target_range: b.target.map(|t| t.0),
            target_bound_source: b.target.map(|t| t.1),
            coefficients,
            intercept: scaled_model.intercept.map(|b| sy * (b - offset) + cy),
            privacy,
            scaled: scaled_model,
            normalize_rows: self.normalize_rows,
            max_nonzeros: self.max_nonzeros,
        };
        if model
            .coefficients
            .iter()
            .chain(model.intercept.iter())
            .any(|v| !v.is_finite())
        {
            return Err(PipelineError::Optim(dp_optim::OptimError::Diverged(
                "a coefficient in the user's units is not finite (a bound too small for f64?)"
                    .into(),
            )));
        }
        Ok(model)
    }

    /// Warnings computed from the data WITHOUT privacy (how many training values each
    /// range clipped): diagnostics, never part of the release.
    pub(super) fn clipping_warnings<D: Design>(
        &self,
        b: &Bounds,
        s: &Scaled<D>,
        n: usize,
    ) -> Vec<String> {
        let name = |j: usize| match &self.feature_names {
            Some(names) => format!("column {:?}", names[j]),
            None => format!("feature {j}"),
        };
        let mut warnings = Vec::new();
        for (j, &k) in s.clipped_per_column.iter().enumerate() {
            if k * 10 > n {
                warnings.push(format!(
                    "{}: {k} of {n} training values ({:.0} %) were outside [{}, {}] and \
                     clipped; the range may be too narrow for this column (a count from \
                     the data, not private: do not publish)",
                    name(j),
                    100.0 * k as f64 / n as f64,
                    b.feature_ranges[j].0,
                    b.feature_ranges[j].1
                ));
            }
        }
        if let (Some(k), Some(((lo, hi), _))) = (s.target_clipped, b.target) {
            if k * 10 > n {
                warnings.push(format!(
                    "target: {k} of {n} training values ({:.0} %) were outside [{lo}, {hi}] \
                     and clipped; predictions stay inside that range (a count from the \
                     data, not private: do not publish)",
                    100.0 * k as f64 / n as f64,
                ));
            }
        }
        warnings
    }

    /// Step 4's budget: what the bounds left of the target, shaved so that the basic
    /// composition `pre + fit` stays at most the target despite rounding (without
    /// private bounds there is no sum to round, and the fit gets the target itself, so a
    /// declared-bounds fit reports the delta asked for). `None` for a non-private fit.
    pub(super) fn fit_budget(c: &Checked, b: &Bounds) -> Result<Option<(f64, f64)>> {
        let Some((epsilon, delta)) = c.budget else {
            return Ok(None);
        };
        let (pre_eps, pre_delta) = b.spent;
        let shave = if pre_eps == 0.0 && pre_delta == 0.0 {
            1.0
        } else {
            1.0 - 4.0 * f64::EPSILON
        };
        let rest = (epsilon - pre_eps) * shave;
        if rest.is_nan() || rest <= 0.0 {
            return Err(invalid(
                "bound shares",
                format!("{pre_eps} of epsilon {epsilon}"),
                "the private bounds must leave a positive budget for the fit",
            ));
        }
        Ok(Some((rest, (delta - pre_delta) * shave)))
    }

    /// The pipeline's own entries in the solver's [`Chosen`], and the warnings about
    /// unreliable private ranges, from public quantities: the exponential mechanism
    /// picks a candidate near the median with high probability when `eps n / 4` clearly
    /// exceeds `ln(#candidates)` (McSherry & Talwar 2007, Thm 8).
    pub(super) fn record_choices<D: Design>(
        &self,
        chosen: &mut Chosen,
        warnings: &mut Vec<FitWarning>,
        c: &Checked,
        b: &Bounds,
        s: &Scaled<D>,
        fit_budget: Option<(f64, f64)>,
    ) {
        let (intercept, dual_intercept) = (c.intercept, s.dual_intercept);
        let n = s.data.n_samples();
        // The solver's own warnings (e.g. `SmoothnessFloored`) travel with the rules'.
        chosen.loss = c.loss_kind;
        chosen.intercept = intercept;
        chosen.intercept_note = if dual_intercept {
            format!(
                "fitted and penalised: the coefficient of a constant column 1/sqrt(p + 1), under \
                 the same L2 penalty as every coefficient ({} needs an unweighted ridge), \
                 one more coordinate of the same private solver, no separate charge",
                self.algorithm.as_str()
            )
        } else if intercept {
            "fitted: the coefficient of a constant column, one more coordinate of the same \
             private solver, no separate charge"
                .into()
        } else {
            "none: turned off by the caller".into()
        };
        chosen.fit_budget = fit_budget;
        chosen.feature_share = b.feature_share;
        chosen.feature_range_rule = b.feature_share.map(|_| b.grid.rule);
        chosen.target_share = b.target_share;
        chosen.normalize_rows = self.normalize_rows;
        chosen.max_nonzeros = self.max_nonzeros;
        // Reliability of the private ranges, from public quantities: the exponential
        // mechanism picks a candidate near the median with high probability when
        // eps n / 4 clearly exceeds ln(#candidates) (McSherry & Talwar 2007, Thm 8).
        for (what, e, need) in [
            ("feature", b.pre.feature_epsilon, reliable_margin(&b.grid)),
            (
                "target",
                b.pre.target_epsilon,
                reliable_margin_of(crate::bounds::signed_candidates(&self.grid).len()),
            ),
        ] {
            if let Some(e) = e {
                let margin = e * n as f64 / 4.0;
                if margin < need {
                    warnings.push(FitWarning::UnreliableRanges {
                        of: what.to_string(),
                        epsilon: e,
                        rows: n,
                        margin,
                        needed: need,
                    });
                }
            }
        }
    }
}

fn check_len(name: &'static str, got: usize, p: usize) -> Result<()> {
    if got == p {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("{got} given"),
            format!("one per feature: the data has {p} features"),
        ))
    }
}

fn check_range(name: &'static str, (lo, hi): (f64, f64)) -> Result<()> {
    if lo.is_finite() && hi.is_finite() && lo < hi && lo.abs().max(hi.abs()) < 1e150 {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("[{lo}, {hi}]"),
            "finite, lo < hi, both within +-1e150",
        ))
    }
}

/// `[min, max]` of the values, computed WITHOUT privacy (widened by 1 on each side
/// when constant).
fn data_range(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo < hi {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

fn positive_bound(name: &'static str, b: f64) -> Result<()> {
    // 1e150: so that b^2 and the folded coefficients stay finite.
    if b.is_finite() && b > 0.0 && b < 1e150 {
        Ok(())
    } else {
        Err(invalid(name, b, "must be finite, > 0 and < 1e150"))
    }
}

/// What the solver needs to know about the scaled design (all public).
pub(super) struct ScaledShape {
    /// Each scaled feature was further divided by this (the dual algorithms; else 1).
    pub(super) row_scale: f64,
    /// A bound on the scaled rows' Euclidean norm (without the intercept column) when
    /// it is below the `sqrt(p)` that the entries in `[-1, 1]` give (normalised rows).
    pub(super) row_norm: Option<f64>,
    /// The support bound the solver charges (intercept column included).
    pub(super) support: Option<usize>,
    /// Whether the design has the intercept column (last).
    pub(super) intercept: bool,
}
