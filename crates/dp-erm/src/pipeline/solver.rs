//! Step 4 of the pipeline: the solver and its hyperparameters (the caller's, else the
//! no-tuning rules of `dp_optim::auto`, from public inputs only).

use super::*;

impl Pipeline {
    /// Takes the no-tuning rules of `dp_optim::auto` for DP-GCD, DP-SGD or DP-SCD (from
    /// public inputs only: the fit's epsilon and delta, the loss, the scaled bound, `n`
    /// and `p`) for every hyperparameter the caller did not give, and their warnings when
    /// the passes are the rule's. For regression the rule's clip `G0 R` is divided by
    /// `sqrt(p)` as for DP-CD (the centred, scaled rows sit mostly near 0).
    fn take_rules(
        &self,
        chosen: &mut Chosen,
        warnings: &mut Vec<FitWarning>,
        name: &str,
        rules: &AlgorithmDefaults,
        q: usize,
    ) {
        chosen.passes = self.passes.unwrap_or(rules.passes);
        if self.passes.is_none() {
            warnings.extend(rules.warnings.iter().cloned());
        }
        chosen.step_scale = rules.step_scale.map(|s| self.step_scale.unwrap_or(s));
        let rule_clip = if self.task == Task::Regression && rules.step_scale.is_some() {
            rules.clip / (q as f64).sqrt()
        } else {
            rules.clip
        };
        chosen.clip = Some(self.clip.unwrap_or(rule_clip));
        chosen.note = format!(
            "no-tuning rules of dp_optim::auto ({name}) from epsilon, delta, the loss, the \
             scaled bound, n and p (rule values: passes {}, step scale {}, clip {}{}); \
             constants from the scaled bound (public)",
            rules.passes,
            rules
                .step_scale
                .map_or("none".to_string(), |s| s.to_string()),
            rules.clip,
            rules
                .batch_size
                .map_or(String::new(), |b| format!(", batch size {b}")),
        );
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_solver<D: PipelineDesign>(
        &self,
        loss: AnyLoss,
        penalty: AnyPenalty,
        data: &Dataset<D>,
        budget: Option<(f64, f64)>,
        rng: &mut ChaCha20Rng,
        shape: &ScaledShape,
    ) -> Result<(Fitted, Chosen, Vec<FitWarning>)> {
        let q = data.n_features();
        let n = data.n_samples();
        let mut given = Vec::new();
        if self.passes.is_some() {
            given.push("passes".to_string());
        }
        if self.step_scale.is_some() {
            given.push("step_scale".to_string());
        }
        if self.clip.is_some() {
            given.push("clip".to_string());
        }
        if self.batch_size.is_some() {
            given.push("batch_size".to_string());
        }
        let mut chosen = Chosen {
            algorithm: self.algorithm,
            loss: loss.kind(),
            penalty: self.penalty,
            lambda: self.lambda,
            intercept: false,
            intercept_note: String::new(),
            passes: self.passes.unwrap_or(10),
            step_scale: Some(self.step_scale.unwrap_or(0.5)),
            clip: self
                .algorithm
                .is_private()
                .then(|| self.clip.unwrap_or(1.0)),
            batch_size: None,
            given,
            note: "library defaults (passes 10, step scale 0.5, clip 1)".into(),
            fit_budget: None,
            feature_share: None,
            target_share: None,
            feature_range_rule: None,
            warnings: Vec::new(),
            normalize_rows: false,
            max_nonzeros: None,
        };
        // The scaled features are in [-1, 1], the intercept column is 1: public M_j = c.
        // The fit's (epsilon, delta): every private algorithm has one (`Checked::budget`).
        let need_budget = || {
            budget.ok_or_else(|| {
                PipelineError::Unsupported(format!(
                    "internal: {} is private but the fit has no budget",
                    self.algorithm.as_str()
                ))
            })
        };
        let need_c = || {
            loss.curvature_bound().ok_or_else(|| {
                PipelineError::Unsupported(format!(
                    "{} needs a smooth loss; {} has no curvature bound (use dp-scd / sdca)",
                    self.algorithm.as_str(),
                    loss.name()
                ))
            })
        };
        let mut warnings = Vec::new();
        let fitted = match self.algorithm {
            Algorithm::Cd => {
                let c = need_c()?;
                let s = CdParams::new(loss, penalty)
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(0.5))
                    .smoothness(Smoothness::Given(Tagged::public(vec![c; q])))
                    .threads(self.threads)
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpCd => {
                let (eps, delta) = need_budget()?;
                let c = need_c()?;
                let mut bounds = PublicBounds::uniform(q, 1.0);
                if let Some(r) = shape.row_norm {
                    // The intercept column adds 1 to the squared norm.
                    bounds = bounds.with_row_norm(if shape.intercept {
                        (r * r + 1.0).sqrt()
                    } else {
                        r
                    });
                }
                // A declared support bound scales the passes rule (sqrt(p / k)) and sets
                // the permutation order and the per-record charge.
                if let Some(k) = shape.support {
                    bounds = bounds.with_row_support(RowSupport::AtMost(k));
                }
                let (params, rules) =
                    DpCdParams::defaults_for(loss, penalty, eps, delta, &bounds, n, q)?;
                chosen.passes = self.passes.unwrap_or(rules.passes);
                if self.passes.is_none() {
                    warnings.extend(rules.warnings.iter().cloned());
                }
                chosen.step_scale = Some(self.step_scale.unwrap_or(rules.step_scale));
                // Regression on centred, scaled targets: the rule's C = G0 R assumes a
                // residual of 1 and a row of norm R = sqrt(q) at w = 0; centred targets
                // and features sit mostly near 0, and C = G0 (the rule over sqrt(q)) is
                // what we measured to work on diabetes (`examples/validate.rs`; at eps 5,
                // C = G0 R gave 1.7x the non-private MSE, C = G0 gave 1.0x). A choice
                // from public inputs: free. Validated on diabetes only.
                let rule_clip = if self.task == Task::Regression {
                    rules.clip / (q as f64).sqrt()
                } else {
                    rules.clip
                };
                chosen.clip = Some(self.clip.unwrap_or(rule_clip));
                chosen.note = format!(
                    "no-tuning rules of dp_optim::auto from epsilon, delta, the loss, the \
                     scaled bound 1, n and p (rule values: passes {}, step scale {}, clip {}; \
                     regression: clip divided by sqrt(p), see the source); \
                     M_j = c from the scaled bound 1 (public; the rules' private estimate \
                     with {} % of the budget is not used, see the source)",
                    rules.passes,
                    rules.step_scale,
                    rules.clip,
                    rules.smoothness_share * 100.0
                );
                // Public M_j = c from the scaled bound 1 instead of the rules' private
                // estimate: a column that the ranges squeeze towards a constant has a
                // tiny true M_j, and an estimate near it (or at its floor) gives a step
                // the noise cannot justify (issue 25 item 3; on diabetes at eps 1 one of
                // 20 runs had a coefficient of -232 on the scaled data). The public
                // constant costs nothing and never overshoots.
                let s = params
                    .smoothness(Smoothness::Given(Tagged::public(vec![c; q])))
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(1.0))
                    .clip(chosen.clip.unwrap_or(1.0))
                    .threads(self.threads)
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpGcd => {
                let (eps, delta) = need_budget()?;
                let c = need_c()?;
                let bounds = PublicBounds::uniform(q, 1.0);
                let rules = dp_gcd_defaults(&loss, eps, delta, &bounds, n, q)?;
                self.take_rules(&mut chosen, &mut warnings, "dp_gcd_defaults", &rules, q);
                // GS-L for a smooth objective, GS-r (which handles every separable
                // penalty) with a penalty.
                let (rule, rule_name) = if self.penalty == PenaltyKind::None {
                    (SelectionRule::GsL, "GS-L")
                } else {
                    (SelectionRule::GsR, "GS-r")
                };
                chosen.note = format!("{}; selection rule {rule_name}, zCDP variant", chosen.note);
                let s = DpGcdParams::new(loss, penalty)
                    .epsilon(eps)
                    .delta(delta)
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(1.0))
                    .clip(chosen.clip.unwrap_or(1.0))
                    .variant(Variant::Zcdp)
                    .rule(rule)
                    .smoothness(Smoothness::Given(Tagged::public(vec![c; q])))
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpSgd => {
                let (eps, delta) = need_budget()?;
                let c = need_c()?;
                let bounds = PublicBounds::uniform(q, 1.0);
                let rules = dp_sgd_defaults(&loss, eps, delta, &bounds, n, q)?;
                self.take_rules(&mut chosen, &mut warnings, "dp_sgd_defaults", &rules, q);
                let b = match self.batch_size {
                    None => rules.batch_size.unwrap_or(1),
                    Some(b) if b == 0 || b > n as u64 => {
                        return Err(invalid(
                            "batch size",
                            b,
                            format!("1 ..= {n} (the training rows)"),
                        ))
                    }
                    Some(b) => b,
                };
                chosen.batch_size = Some(b);
                // beta <= c max_i ||x_i||^2 <= c q (every scaled entry in [-1, 1]).
                let s = DpSgdParams::new(loss, penalty)
                    .epsilon(eps)
                    .delta(delta)
                    .passes(chosen.passes)
                    .step_scale(chosen.step_scale.unwrap_or(1.0))
                    .clip(chosen.clip.unwrap_or(1.0))
                    .batch_size(b)
                    .smoothness(GlobalSmoothness::Given(Tagged::public(c * q as f64)))
                    .build()?;
                s.fit_with_rng(data, rng)?
            }
            Algorithm::DpScd | Algorithm::Sdca => {
                let lambda = match penalty {
                    AnyPenalty::L2(_) if self.lambda > 0.0 => self.lambda,
                    _ => {
                        return Err(PipelineError::Unsupported(format!(
                            "{} solves the dual of an L2-penalised problem: penalty(l2, lambda) \
                             with lambda > 0",
                            self.algorithm.as_str()
                        )))
                    }
                };
                let dual = AnyDualLoss::from_kind(loss.kind())?;
                let b = if self.algorithm == Algorithm::DpScd {
                    let (eps, delta) = need_budget()?;
                    // Rows of norm <= 1 (each scaled entry, the intercept column
                    // included, divided by the row-norm bound: sqrt(q), or less after
                    // row normalisation).
                    let p = shape.row_scale;
                    let bounds = PublicBounds::uniform(q, 1.0 / p).with_row_norm(1.0);
                    let rules = dp_scd_defaults(&loss, lambda, eps, delta, &bounds, n, q)?;
                    self.take_rules(&mut chosen, &mut warnings, "dp_scd_defaults", &rules, q);
                    let rule_b = rules.batch_size.unwrap_or(1);
                    let b = self.batch_size.unwrap_or(rule_b);
                    if self.clip.is_none() && b > 0 {
                        // The rule's clip is on the scale of the steps, lambda n / (L R^2):
                        // kept on that scale for a batch size given by the caller.
                        chosen.clip = Some(rules.clip * rule_b as f64 / b as f64);
                    }
                    b
                } else {
                    self.batch_size.unwrap_or(1)
                };
                if b == 0 || b > n as u64 {
                    return Err(invalid(
                        "batch size",
                        b,
                        format!("1 ..= {n} (the training rows)"),
                    ));
                }
                chosen.batch_size = Some(b);
                chosen.step_scale = None;
                if self.algorithm == Algorithm::Sdca {
                    SdcaParams::new(dual, L2::new(lambda)?)
                        .passes(chosen.passes)
                        .batch_size(b)
                        .build()?
                        .fit_with_rng(data, rng)?
                } else {
                    let (eps, delta) = need_budget()?;
                    DpScdParams::new(dual, L2::new(lambda)?)
                        .dual_noise(DualNoise::Hidden)
                        // RDP over continuous orders: the moments accountant's integer
                        // orders (at most 129) cannot reach eps below about
                        // ln(1/delta) / 128 (0.095 at delta 5e-6) at any noise.
                        .accounting(Accounting::Exact)
                        .epsilon(eps)
                        .delta(delta)
                        .passes(chosen.passes)
                        .batch_size(b)
                        .clip(chosen.clip.unwrap_or(1.0))
                        .build()?
                        .fit_with_rng(data, rng)?
                }
            }
        };
        Ok((fitted, chosen, warnings))
    }
}
