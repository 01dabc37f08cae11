//! DP-GCD's builder and its choices (noise variant, report-noisy-max calibration).

use super::*;

/// Which noise and accountant pair DP-GCD uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Variant {
    /// The paper's: Laplace update noise, Laplace report-noisy-max selection, pure-DP
    /// steps composed by advanced composition. Reported as `dp-gcd`.
    Laplace,
    /// Ours: Gaussian update noise, Gumbel report-noisy-max (exponential mechanism)
    /// selection, composed in zCDP. Reported as `dp-gcd-zcdp`.
    Zcdp,
}

impl Variant {
    /// The algorithm name used in reports: `dp-gcd` or `dp-gcd-zcdp`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Laplace => "dp-gcd",
            Variant::Zcdp => "dp-gcd-zcdp",
        }
    }
}

/// How the Laplace variant's report-noisy-max is calibrated (the monotone /
/// non-monotone question: the paper's Theorem 4.2 applies report-noisy-max to gradient
/// scores, which are not monotone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RnmCalibration {
    /// Default. Laplace noise of scale `2 Delta_u / eps'` added to the deterministic
    /// scores `u_j` (each of sensitivity `Delta_u`): report-noisy-max for non-monotone
    /// queries, `eps'`-DP for every rule (Dwork & Roth 2014, Claim 3.9's proof without
    /// monotonicity gives the factor 2).
    Conservative,
    /// The paper's Algorithm 1 literally: noise `chi_j ~ Lap(Delta_j / eps')` added to the
    /// gradient **inside** the score (`|g_j + chi_j| / sqrt(M_j)` for GS-L). The paper
    /// claims `eps'`-DP citing report-noisy-max, whose textbook proof needs monotone
    /// scores; gradient scores are not monotone. Kept to reproduce the paper; the report
    /// marks its guarantee as not proven (see `docs/privacy/dp-gcd.md`).
    Paper,
}

/// Builder of DP-GCD. Required: `epsilon`, `delta`; [`DpGcdParams::build`] checks the
/// parameters and calibrates the per-iteration noise into a [`DpGcd`].
#[derive(Debug, Clone)]
pub struct DpGcdParams<L, P> {
    pub(super) loss: L,
    pub(super) penalty: P,
    pub(super) privacy: PrivacyParams,
    pub(super) ridge: f64,
    pub(super) iterations: u64,
    pub(super) step: f64,
    pub(super) clip: f64,
    pub(super) rule: SelectionRule,
    pub(super) variant: Variant,
    pub(super) rnm: RnmCalibration,
    pub(super) composition: LaplaceComposition,
    pub(super) selection_share: f64,
    pub(super) support_test: Option<f64>,
    pub(super) noise: bool,
    pub(super) smoothness: Smoothness,
    pub(super) record_trajectory: bool,
}

impl<L: Loss, P: Penalty> DpGcdParams<L, P> {
    /// DP-GCD for `loss` and the separable `penalty`, with defaults: epsilon and delta
    /// unset (must be given), 1 pass, step scale `gamma = 1`, clipping `C = 1`, rule
    /// GS-L, [`Variant::Laplace`], [`RnmCalibration::Conservative`],
    /// [`LaplaceComposition::Advanced`], no ridge, selection share 1/2 (zCDP variant),
    /// constants computed from the data (refused without the opt-in).
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            privacy: PrivacyParams::default(),
            ridge: 0.0,
            iterations: 1,
            step: 1.0,
            clip: 1.0,
            rule: SelectionRule::GsL,
            variant: Variant::Laplace,
            rnm: RnmCalibration::Conservative,
            composition: LaplaceComposition::Advanced,
            selection_share: 0.5,
            support_test: None,
            noise: true,
            smoothness: Smoothness::FromData,
            record_trajectory: false,
        }
    }
    privacy_setters!();
    /// Number of passes over the data `T >= 1`: one pass = one iteration (a full
    /// clipped gradient, one private selection, one private update).
    pub fn passes(mut self, passes: u64) -> Self {
        self.iterations = passes;
        self
    }
    /// Step scale `gamma > 0` (coordinate `j` moves with `gamma / M_j`).
    pub fn step_scale(mut self, gamma: f64) -> Self {
        self.step = gamma;
        self
    }
    /// Clipping threshold `C > 0`; coordinate `j` clips per-sample gradient entries to
    /// `[-C_j, C_j]` with `C_j = C sqrt(M_j / tr M)`. `f64::INFINITY` disables clipping
    /// (only allowed with [`DpGcdParams::noise_off`]).
    pub fn clip(mut self, clip: f64) -> Self {
        self.clip = clip;
        self
    }
    /// Smooth ridge term `(ridge/2) ||w||^2` (>= 0), added to the gradient without
    /// clipping or noise and to every `M_j`.
    pub fn ridge(mut self, ridge: f64) -> Self {
        self.ridge = ridge;
        self
    }
    /// The greedy selection rule.
    pub fn rule(mut self, rule: SelectionRule) -> Self {
        self.rule = rule;
        self
    }
    /// The privacy variant.
    pub fn variant(mut self, variant: Variant) -> Self {
        self.variant = variant;
        self
    }
    /// Report-noisy-max calibration of the Laplace variant.
    pub fn rnm_calibration(mut self, rnm: RnmCalibration) -> Self {
        self.rnm = rnm;
        self
    }
    /// Composition theorem of the Laplace variant.
    pub fn composition(mut self, composition: LaplaceComposition) -> Self {
        self.composition = composition;
        self
    }
    /// zCDP variant: fraction in (0, 1) of each iteration's rho spent on the selection.
    pub fn selection_share(mut self, share: f64) -> Self {
        self.selection_share = share;
        self
    }
    /// zCDP variant: ends the fit with a private **support test** that spends the
    /// fraction `fraction` in (0, 1) of the total zCDP budget (the `T` iterations share
    /// the rest, split by [`DpGcdParams::selection_share`]).
    ///
    /// After the `T` iterations, for every coordinate `j` of the support `S` of `w`
    /// (public: a function of the released iterate), the clipped gradient `g_j` is
    /// released once more with Gaussian noise, and `w_j` is set to zero unless the
    /// coordinate-wise minimiser of the quadratic upper bound,
    /// `prox_{psi_j / M_j}(w_j - (g_j + eta_j) / M_j)`, is non-zero. For L1 this keeps
    /// `j` iff `|M_j w_j - g_j - eta_j| > lambda`: at `w*`, a coordinate outside the
    /// support of `w*` has `|grad_j| < lambda` and the test drops it; a coordinate of
    /// the support keeps a margin `M_j |w_j|`. The kept coordinates are not moved.
    ///
    /// # Privacy
    ///
    /// Replace-one neighbours (`n` public), the same as the iterations. `S` is a
    /// post-processing of earlier releases, so the test is an adaptively chosen
    /// mechanism: the vector `(g_j / Delta_j)_{j in S}`, `Delta_j = 2 C_j / n`, has L2
    /// sensitivity `sqrt(|S|)` (each clipped coordinate gradient moves by at most
    /// `Delta_j`), and Gaussian noise of std `sqrt(|S|) Delta_j / sqrt(2 rho_test)` on
    /// `g_j` makes its release `rho_test`-zCDP (Bun & Steinke 2016, Prop. 1.6) whatever
    /// `|S|` is. It is charged to the ledger before the first draw as one Gaussian
    /// release of noise multiplier `1 / sqrt(2 rho_test)`, and zCDP composition (Lemma
    /// 2.3) gives `T (rho_sel + rho_upd) + rho_test <= rho_total`. The zeroing is
    /// post-processing. Refused with the Laplace variant (its pure-DP accounting has no
    /// Gaussian step).
    pub fn support_test(mut self, fraction: f64) -> Self {
        self.support_test = Some(fraction);
        self
    }
    /// Switches all noise off: the fit is **not private** (its model carries no privacy
    /// report). With clipping disabled too, DP-GCD equals its non-private twin
    /// [`greedy_cd`].
    pub fn noise_off(mut self) -> Self {
        self.noise = false;
        self
    }
    /// Coordinate smoothness constants `M_j` of the data-fit term (ridge excluded), with
    /// their provenance: a [`Smoothness`], or a [`Tagged`](dp_models::constants::Tagged) vector for
    /// [`Smoothness::Given`]. By default ([`Smoothness::FromData`]) they are computed
    /// from the data without privacy, refused without the opt-in. A privately
    /// estimated value's epsilon is charged to the fit and taken out of the iterations'
    /// budget. [`Smoothness::Private`] and [`Smoothness::PrivateBounded`] are estimated
    /// in the fit, charged to its ledger before the iterations are calibrated on the
    /// rest.
    pub fn smoothness(mut self, m: impl Into<Smoothness>) -> Self {
        self.smoothness = m.into();
        self
    }
    /// Records the exact objective after every iteration (non-private diagnostic).
    pub fn record_trajectory(mut self, record: bool) -> Self {
        self.record_trajectory = record;
        self
    }

    /// Checks the parameters and calibrates the per-step noise (data-independent part).
    pub fn build(self) -> Result<DpGcd<L, P>> {
        // Noise off (the twin test): no target to check; nothing private is claimed.
        let privacy = if self.noise {
            self.privacy.check()?
        } else {
            PrivacyParams::new(1.0, 0.5).check()?
        };
        if self.iterations == 0 {
            return Err(invalid(
                "passes",
                0.0,
                "DP-GCD needs at least one pass (T >= 1)",
            ));
        }
        if !(self.step.is_finite() && self.step > 0.0) {
            return Err(invalid(
                "step_scale",
                self.step,
                "the step scale gamma must be finite and > 0",
            ));
        }
        if self.clip.is_nan() || self.clip <= 0.0 {
            return Err(invalid(
                "clip",
                self.clip,
                "the clipping threshold C must be > 0",
            ));
        }
        if self.noise && !self.clip.is_finite() {
            return Err(invalid(
                "clip",
                self.clip,
                "a private fit needs a finite clipping threshold (it bounds the sensitivity)",
            ));
        }
        if !(self.ridge.is_finite() && self.ridge >= 0.0) {
            return Err(invalid(
                "ridge",
                self.ridge,
                "the ridge strength must be finite and >= 0",
            ));
        }
        if self.loss.curvature_bound().is_none() {
            return Err(OptimError::Unsupported(format!(
                "the {} loss is not smooth; DP-GCD needs a smooth loss (logistic, squared, ...)",
                self.loss.name()
            )));
        }
        if let Some(f) = self.support_test {
            if !(f > 0.0 && f < 1.0) {
                return Err(invalid(
                    "support_test",
                    f,
                    "the fraction of the zCDP budget spent on the support test must be in (0, 1)",
                ));
            }
            if self.variant != Variant::Zcdp {
                return Err(OptimError::Unsupported(
                    "support_test needs Variant::Zcdp: its Gaussian release has no place in \
                     the Laplace variant's pure-DP composition"
                        .into(),
                ));
            }
        }
        self.smoothness.check()?;
        // What the constants cost before the iterations. DP-CD-P-style private
        // estimation (`Smoothness::Private`) is charged in the fit, where its exact
        // charges are known; until then the plan previews it as one charge.
        let mut prior = Ledger::new();
        let spent = match &self.smoothness {
            Smoothness::FromData => 0.0,
            Smoothness::Given(t) => charge_pre_spent(
                &mut prior,
                pre_spent_epsilon(&t.provenance),
                "smoothness constants",
            )?,
            Smoothness::Private {
                budget_fraction, ..
            }
            | Smoothness::PrivateBounded {
                budget_fraction, ..
            } => charge_pre_spent(
                &mut prior,
                budget_fraction * privacy.epsilon.get(),
                "smoothness constants (preview of the private estimate)",
            )?,
            Smoothness::PrivateGaussian { .. } if self.variant != Variant::Zcdp => {
                return Err(OptimError::Unsupported(
                    "Smoothness::PrivateGaussian needs DP-GCD's Variant::Zcdp: its Gaussian \
                     release has no place in the Laplace variant's pure-DP composition; use \
                     Smoothness::PrivateBounded there"
                        .into(),
                ))
            }
            // One Gaussian release of all M_j on its share of rho (bounds stated as public;
            // a bound with a cost is charged in the fit), composed in zCDP with the
            // iterations.
            Smoothness::PrivateGaussian {
                budget_fraction, ..
            } => {
                if self.noise {
                    prior.charge(Charge::Gaussian {
                        noise_multiplier: zcdp_smoothness_multiplier(&privacy, *budget_fraction)?,
                        count: 1,
                    })?;
                }
                0.0
            }
        };
        let budget = GcdBudget::calibrate(&self, &privacy, prior, spent)?;
        let solver = DpGcd {
            params: self,
            privacy,
            budget,
        };
        Ok(solver)
    }
}
