//! DP-CD (Mangold, Bellet, Salmon & Tommasi, ICML 2022, Algorithm 1) and DP-CD-P (the
//! same with privately estimated smoothness constants, Sec. 5.2 / App. F).
//!
//! The user states `(epsilon, delta)`; [`DpCdParams::build`] checks the parameters once
//! and [`DpCd::fit`] derives the plan (noise multiplier, per-coordinate clipping
//! thresholds, sensitivities and noise), charges it to a ledger and spends exactly it.
//! See `docs/privacy/dp-cd.md` for the derivation.

use crate::cd::{check_problem, check_smoothness, predictor, run_cd, CdProblem};
use crate::constants::{gaussian_smoothness_multiplier, resolve_private_any, ResolvedSmoothness};
use crate::driver::{calibrate_over, Declared, Model, PrivateFit, Proof, Report, Split};
use crate::error::{positive, positive_count, OptimError, Result};
use crate::kernel::{objective_from_predictor, ColumnKernels, CoordNoise, NoNoise, PerCoordinate};
use crate::model::{Diagnostics, FitWarning, Fitted};
use crate::plan::{DpCdPlan, SolverPlan};
use crate::privacy::{
    charge_pre_spent, pre_spent_epsilon, privacy_setters, Adjacency, CheckedPrivacy,
    LedgerCalibration, PrivacyParams,
};
use crate::schedule::{Averaging, CoordinateOrder, Schedule};
use crate::solver::{Solver, Streams, Switches};
use crate::support::RowSupport;
use dp_accounting::calibrate::{self, Plan, PlanMechanism};
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::Gaussian;
use dp_accounting::NoiseMultiplier;
use dp_models::constants::{Neighbours, Provenance};
use dp_models::{Dataset, Loss, Penalty};
use rand::{Rng, RngCore};

pub use crate::constants::Smoothness;
use dp_models::simd::margin::MarginKernel;

/// The smallest number of records at which [`Precision::Auto`] sweeps in mixed
/// precision. Below it a pass is short anyway, and the `f64` sweep keeps every
/// published result of the smaller benchmark datasets (UCI Adult, Electricity)
/// unchanged.
pub const MIXED_MIN_ROWS: usize = 100_000;

/// The arithmetic of DP-CD's sweep over the data.
///
/// In mixed precision the design's columns are copied once, multiplied by the labels
/// and rounded to `f32`; the margins `y_i x_i^T w` are kept in `f32` and every
/// clipped term is computed and added in `f32` within blocks of at most 256 records,
/// the block sums in `f64` (`dp_models::simd::margin`). A pass reads half the bytes and
/// runs twice the vector lanes: about twice as fast on large data. The terms are
/// clipped at `release_clip(C_j, n)`, about `0.4 %` below `C_j`, so that the released
/// sums' sensitivity is at most `2 C_j / n` *with every rounding error included*
/// (proof in `dp_models::simd::margin`): the noise and the guarantee are unchanged. The
/// iterates differ from the `f64` sweep's by the rounding (about `1e-7` relative per
/// term), far below the privacy noise. The predictor is recomputed in `f64` at the end
/// of every epoch block, and the reported objective is the `f64` one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Precision {
    /// [`Precision::Mixed`] when it applies (a loss with a mixed-precision kernel, i.e.
    /// logistic; a dense design; replace-one) and the data has at least
    /// [`MIXED_MIN_ROWS`] records; [`Precision::Double`] otherwise.
    #[default]
    Auto,
    /// `f64` everywhere.
    Double,
    /// The mixed-precision sweep; refused (before anything is charged) for a loss
    /// without the kernel, a sparse design, or add/remove adjacency.
    Mixed,
}

/// Builder of DP-CD. Required: `epsilon`, `delta`, `passes` (or `steps`), `clip`; with
/// [`Adjacency::AddRemove`] also `public_n`.
///
/// ```
/// use dp_optim::{Accounting, Adjacency, DpCdParams};
/// use dp_models::{Squared, L1};
/// let solver = DpCdParams::new(Squared::full(), L1::new(0.1).unwrap())
///     .epsilon(1.0)
///     .delta(1e-6)
///     .passes(10)
///     .step_scale(0.5)
///     .clip(1.0)
///     .accounting(Accounting::Exact)
///     .build()
///     .unwrap();
/// // Opacus' relation: one record added or removed. The number of records is then
/// // private; the gradients are normalised by a stated public count instead.
/// let add_remove = DpCdParams::new(Squared::full(), L1::new(0.1).unwrap())
///     .epsilon(1.0)
///     .delta(1e-6)
///     .passes(10)
///     .clip(1.0)
///     .adjacency(Adjacency::AddRemove)
///     .public_n(10_000)
///     .build()
///     .unwrap();
/// # let _ = (solver, add_remove);
/// ```
#[derive(Debug, Clone)]
pub struct DpCdParams<L, P> {
    loss: L,
    penalty: P,
    privacy: PrivacyParams,
    passes: Option<u64>,
    steps: Option<u64>,
    step_scale: f64,
    clip: Option<f64>,
    averaging: Averaging,
    order: CoordinateOrder,
    chunks: usize,
    smoothness: Smoothness,
    adaptive_clipping: Option<AdaptiveClipping>,
    adjacency: Adjacency,
    public_n: Option<usize>,
    row_support: Option<RowSupport>,
    precision: Precision,
    w0: Option<Vec<f64>>,
}

/// Per-coordinate clipping thresholds from a private estimate of a quantile of the
/// per-sample coordinate gradient magnitudes `|phi'(x_i^T w0, y_i) x_ij|` at the
/// (public) initial point, decoupled from the step sizes (see
/// [`DpCdParams::adaptive_clipping`]).
///
/// The estimate follows Andrew et al. (2021, "Differentially private learning with
/// adaptive clipping"): each round releases, with Gaussian noise, the fraction of
/// samples whose magnitude is at most the current threshold, and the threshold moves
/// against the target quantile. Here the move is a bisection in log scale of the public
/// interval `range` (all `p` coordinates at once), so `rounds` rounds resolve the
/// quantile to a factor `(hi/lo)^(2^-rounds)` up to the noise.
///
/// The search's noise multiplier is set from the target so that it takes
/// `budget_fraction` of the budget in the Gaussian (GDP / zCDP) sense: with `z1` the
/// multiplier of a single Gaussian release that spends all of `(epsilon, delta)` under
/// GDP (`mu = 1/z1`), the `rounds` releases get `z = z1 sqrt(rounds / budget_fraction)`,
/// i.e. `mu_search^2 = budget_fraction * mu^2`. The optimisation is then calibrated on
/// the whole ledger, so the fraction only decides the split; the guarantee is the
/// ledger's whatever it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveClipping {
    /// Target quantile `q` in (0, 1): the threshold below which a fraction `q` of the
    /// magnitudes lie (magnitudes that are 0, e.g. of absent one-hot features, count).
    pub quantile: f64,
    /// Rounds of the search (each one Gaussian release of `p` fractions), >= 1.
    pub rounds: u64,
    /// Share of the budget (of `mu^2`, see above) spent on the search, in (0, 1).
    pub budget_fraction: f64,
    /// Public search interval `[lo, hi]`, `0 < lo < hi` finite. `lo` is also the floor
    /// of the thresholds.
    pub range: (f64, f64),
}

impl Default for AdaptiveClipping {
    /// The 0.9-quantile, 8 rounds on 5 % of the budget, thresholds in `[1e-4, 10]`.
    fn default() -> Self {
        Self {
            quantile: 0.9,
            rounds: 8,
            budget_fraction: 0.05,
            range: (1e-4, 10.0),
        }
    }
}

impl AdaptiveClipping {
    fn check(&self) -> Result<()> {
        let fraction_ok = |v: f64| v.is_finite() && v > 0.0 && v < 1.0;
        if !fraction_ok(self.quantile) {
            return Err(OptimError::InvalidParameter {
                name: "adaptive clipping quantile",
                value: self.quantile.to_string(),
                expected: "a quantile in (0, 1)",
            });
        }
        if !fraction_ok(self.budget_fraction) {
            return Err(OptimError::InvalidParameter {
                name: "adaptive clipping budget_fraction",
                value: self.budget_fraction.to_string(),
                expected: "the share of the budget spent on the search must be in (0, 1)",
            });
        }
        positive_count("adaptive clipping rounds", self.rounds)?;
        let (lo, hi) = self.range;
        positive("adaptive clipping range lower end", lo)?;
        positive("adaptive clipping range upper end", hi)?;
        if lo >= hi {
            return Err(OptimError::InvalidParameter {
                name: "adaptive clipping range",
                value: format!("[{lo}, {hi}]"),
                expected: "an interval with 0 < lo < hi",
            });
        }
        Ok(())
    }

    /// The search's noise multiplier for the target `(epsilon, delta)` (data-free).
    pub fn noise_multiplier(&self, privacy: &CheckedPrivacy) -> Result<f64> {
        let z1 = calibrate::single_release_multiplier(privacy.epsilon, privacy.delta)?;
        positive(
            "adaptive clipping noise multiplier",
            z1 * (self.rounds as f64 / self.budget_fraction).sqrt(),
        )
    }

    /// The charge of the search: `rounds` Gaussian releases at multiplier `z`.
    fn charge(&self, z: f64) -> Charge {
        Charge::Gaussian {
            noise_multiplier: z,
            count: self.rounds,
        }
    }
}

/// Private per-coordinate quantiles of `|phi'(x_i^T w0, y_i) x_ij|` (see
/// [`AdaptiveClipping`]), charged to `ledger` before anything is computed.
///
/// # Privacy
/// *Neighbouring relation:* replace-one (`normaliser` = `n`, public), or add/remove
/// with `normaliser` = the stated public count `N`. *Preconditions:* `w0`, the
/// quantile, the rounds, the multiplier, the range and `normaliser` are public.
/// *Claim:* the released thresholds are the post-processing of `rounds` adaptively
/// composed Gaussian mechanisms of multiplier `z`, charged as
/// `Charge::Gaussian { z, rounds }`.
/// *Proof:* in round `r` the thresholds `t_j` are functions of earlier noisy outputs and
/// public values only. The released vector is `f_j = (1/N) sum_i 1[|g_ij| <= t_j] +
/// N(0, (z sqrt(p) / N)^2)`; replacing one record changes each indicator sum by at most
/// 1, and so does adding or removing one (one indicator more or less), so each `f_j`
/// moves by at most `1/N` and the vector by at most `sqrt(p)/N` in L2 under either
/// relation: a Gaussian mechanism of multiplier `z` (Mironov 2017, Cor. 3; Dong, Roth &
/// Su 2022, Thm 2.7). The rounds compose adaptively; the bisection update and the final
/// thresholds are post-processing.
#[allow(clippy::too_many_arguments)]
fn private_clip_quantiles<D: ColumnKernels, L: Loss>(
    cfg: &AdaptiveClipping,
    z_search: f64,
    loss: &L,
    data: &Dataset<D>,
    normaliser: usize,
    w0: &[f64],
    rng: &mut impl Rng,
    ledger: &mut Ledger,
) -> Result<Vec<f64>> {
    let (n, p) = (data.n_samples(), data.n_features());
    let release = cfg.charge(z_search);
    ledger.charge(release.clone())?;
    let mut z = vec![0.0; n];
    data.x().matvec(w0, &mut z);
    // phi'(z_i, y_i) once: the magnitudes are |dphi_i x_ij|.
    let dphi: Vec<f64> = z
        .iter()
        .zip(data.y())
        .map(|(&zi, &yi)| loss.derivative(zi, yi))
        .collect();
    // The charged release's sampler: sensitivity sqrt(p) on the counts, over N.
    let noise = release
        .gaussian((p as f64).sqrt())?
        .normalised(normaliser as f64)?;
    let (lo0, hi0) = (cfg.range.0.ln(), cfg.range.1.ln());
    let mut lo = vec![lo0; p];
    let mut hi = vec![hi0; p];
    let inv_n = 1.0 / normaliser as f64;
    for _ in 0..cfg.rounds {
        for j in 0..p {
            let t = (0.5 * (lo[j] + hi[j])).exp();
            // Zeros of a sparse column are below every threshold.
            let mut above = 0usize;
            data.x().for_each_in_col(j, |i, v| {
                above += ((dphi[i] * v).abs() > t) as usize;
            });
            let below = (n - above) as f64 * inv_n + noise.sample(rng);
            let mid = 0.5 * (lo[j] + hi[j]);
            if below >= cfg.quantile {
                hi[j] = mid;
            } else {
                lo[j] = mid;
            }
        }
    }
    Ok(lo
        .iter()
        .zip(&hi)
        .map(|(a, b)| (0.5 * (a + b)).exp())
        .collect())
}

impl<L: Loss, P: Penalty> DpCdParams<L, P> {
    /// Starts a builder for `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + penalty(w)`.
    ///
    /// Defaults: step scale 1, [`Accounting::Paper`](crate::Accounting::Paper),
    /// [`Averaging::LastIterate`], [`Smoothness::FromData`] (refused without the
    /// opt-in), `w0 = 0`.
    pub fn new(loss: L, penalty: P) -> Self {
        Self {
            loss,
            penalty,
            privacy: PrivacyParams::default(),
            passes: None,
            steps: None,
            step_scale: 1.0,
            clip: None,
            averaging: Averaging::LastIterate,
            order: CoordinateOrder::Uniform,
            chunks: 1,
            smoothness: Smoothness::FromData,
            adaptive_clipping: None,
            adjacency: Adjacency::ReplaceOne,
            public_n: None,
            row_support: None,
            precision: Precision::Auto,
            w0: None,
        }
    }
    privacy_setters!();
    /// Number of passes (one pass = `p` coordinate updates; `T*K >= passes * p`).
    pub fn passes(mut self, passes: u64) -> Self {
        self.passes = Some(passes);
        self
    }
    /// Exact number of coordinate updates instead of whole passes (a fraction of a pass: the DP-GCD
    /// paper runs DP-CD and DP-SGD for 0.001 to 0.1 passes, i.e. that many coordinate updates).
    /// Mutually exclusive with `passes`; the noise is calibrated to exactly this count
    /// (rounded up to whole averaging periods `K`).
    pub fn steps(mut self, steps: u64) -> Self {
        self.steps = Some(steps);
        self
    }
    /// Step scale `gamma`: coordinate `j` moves with step `gamma / M_j`.
    pub fn step_scale(mut self, gamma: f64) -> Self {
        self.step_scale = gamma;
        self
    }
    /// Global clipping threshold `C`: coordinate `j` clips per-sample gradients at
    /// `C_j = sqrt(M_j / tr M) C` (the paper's rule), or at `C_j = C Q_j` with
    /// [`adaptive_clipping`](Self::adaptive_clipping).
    pub fn clip(mut self, clip: f64) -> Self {
        self.clip = Some(clip);
        self
    }
    /// Clipping thresholds decoupled from the step sizes: `C_j = C Q_j`, with `Q_j` a
    /// private estimate of a quantile of coordinate `j`'s per-sample gradient magnitudes
    /// at the initial point ([`AdaptiveClipping`]). Its Gaussian releases are charged to
    /// the fit's ledger before the optimisation, whose noise is then calibrated on the
    /// whole ledger (also under [`Accounting::Paper`](crate::Accounting::Paper), whose
    /// budget split covers only pure-DP constants). `None` (the default): the paper's
    /// `C_j = sqrt(M_j / tr M) C`.
    ///
    /// # Privacy
    /// See `private_clip_quantiles` and `docs/privacy/dp-cd.md`: the search is `rounds`
    /// Gaussian releases of multiplier `z` (replace-one L2 sensitivity `sqrt(p)/n`), and
    /// the thresholds are their post-processing, so the sensitivity argument of the
    /// releases (`2 C_j / n`) is unchanged.
    pub fn adaptive_clipping(mut self, cfg: Option<AdaptiveClipping>) -> Self {
        self.adaptive_clipping = cfg;
        self
    }
    /// Averaging mode (default: last iterate, `K = 1`).
    pub fn averaging(mut self, averaging: Averaging) -> Self {
        self.averaging = averaging;
        self
    }
    /// Coordinate order (default [`CoordinateOrder::Uniform`], Algorithm 1 as printed).
    ///
    /// # Privacy
    ///
    /// Every order is independent of the data (a fixed sweep, or drawn from the
    /// coordinate-selection stream, which is separate from the noise stream), so the
    /// guarantee of the fit holds unchanged: the same `T*K` Gaussian releases of
    /// sensitivity `2 C_j / n` compose the same way whichever coordinate each one
    /// touches. The paper's *utility* bounds (Theorems 3.2–3.3) assume
    /// [`CoordinateOrder::Uniform`]; cyclic and permutation orders have none from it.
    pub fn coordinate_order(mut self, order: CoordinateOrder) -> Self {
        self.order = order;
        self
    }
    /// Splits each coordinate step's sweep over a dense design (the clipped gradient
    /// of a column and the pending predictor update) into `threads` fixed pieces run on
    /// rayon's thread pool, with a fixed reduction order. Default 1. Results are
    /// bit-for-bit reproducible for a given `threads` whatever the number of cores,
    /// and differ from `threads = 1` in the last bits only. Sparse designs ignore it.
    ///
    /// # Privacy
    ///
    /// Unchanged: each release is the same clipped sum (computed in a different
    /// order) with the same noise; the noise and coordinate streams are drawn on the
    /// calling thread in the same order.
    pub fn threads(mut self, threads: usize) -> Self {
        self.chunks = threads;
        self
    }
    /// The arithmetic of the sweep over the data (default [`Precision::Auto`]: mixed
    /// precision for a logistic fit on a dense design of at least
    /// [`MIXED_MIN_ROWS`] records under replace-one, `f64` otherwise).
    pub fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }
    /// Source of the coordinate smoothness constants (a [`Smoothness`], or a
    /// [`Tagged`](dp_models::constants::Tagged) vector for [`Smoothness::Given`]).
    pub fn smoothness(mut self, smoothness: impl Into<Smoothness>) -> Self {
        self.smoothness = smoothness.into();
        self
    }
    /// Initial point (default 0).
    pub fn initial_point(mut self, w0: Vec<f64>) -> Self {
        self.w0 = Some(w0);
        self
    }
    /// The neighbouring relation of the guarantee (default [`Adjacency::ReplaceOne`]).
    ///
    /// Under [`Adjacency::AddRemove`] (Opacus' relation) the number of records is
    /// private, so every release is normalised by the stated [`public_n`](Self::public_n)
    /// `N` instead of the data's `n`: coordinate `j` releases
    /// `(1/N) sum_i clip(grad_j, C_j) + N(0, sigma_j^2)`, whose sensitivity is `C_j / N`
    /// (one record more or less moves the sum by one clipped term), half the
    /// replace-one `2 C_j / n`; the same noise multiplier then gives half the noise.
    /// Normalising by the true size would not halve it (`S/n` against
    /// `(S + g)/(n + 1)` differ by up to `2 C_j / (n + 1)`). The privately estimated
    /// `M_j` ([`Smoothness::PrivateBounded`], [`Smoothness::PrivateGaussian`]) and
    /// adaptive clipping's quantiles are normalised by `N` too, with their add/remove
    /// sensitivities; [`Smoothness::Private`] and constants or bounds privately
    /// estimated before the fit are refused (their relation is not recorded).
    ///
    /// An add/remove guarantee at `epsilon` is a weaker promise than a replace-one
    /// guarantee at the same `epsilon` (replacing a record is removing one and adding
    /// one): compare it with guarantees under the same relation.
    pub fn adjacency(mut self, adjacency: Adjacency) -> Self {
        self.adjacency = adjacency;
        self
    }
    /// The number of records stated as public (required under
    /// [`Adjacency::AddRemove`], where the true `n` is private): every release, the
    /// private `M_j` and the quantiles are normalised by it, never by the data's size.
    /// A value far from the true size scales the gradient (as a wrong learning rate
    /// would) but not the guarantee. Ignored under replace-one, where `n` is public by
    /// definition.
    pub fn public_n(mut self, n: usize) -> Self {
        self.public_n = Some(n);
        self
    }

    /// A public bound on the non-zero features of every record (`None`, the default:
    /// none). With it, the ledger is charged only the releases one record can move:
    /// for a pass over the `p` coordinates, `k` of them
    /// ([`RowSupport::releases_per_pass`]: Adult's one-hot design has `k = 12` of
    /// `p = 81`), so at the same target the noise multiplier is smaller, by about
    /// `sqrt(k / p)` for many passes. Needs an order that visits every coordinate once
    /// per pass ([`CoordinateOrder::Permutation`] or [`CoordinateOrder::Cyclic`]);
    /// [`CoordinateOrder::Uniform`] is refused by `build`. A record with more non-zeros
    /// than the bound allows is projected onto it before anything is charged or drawn
    /// (its largest-magnitude non-zeros kept, [`RowSupport::project`]; a fixed
    /// per-record map, so the guarantee holds for the raw data), and how many were
    /// projected is reported in the non-private
    /// [`Diagnostics::support_projected`](crate::Diagnostics::support_projected). A
    /// design type of your own without a projection
    /// ([`ColumnKernels::project_support`])
    /// is refused instead ([`OptimError::BoundViolated`]).
    ///
    /// # Privacy
    /// A release of coordinate `j` does not depend on a record whose feature `j` is
    /// zero, so a neighbouring pair moves only the releases of the coordinates in the
    /// records' supports; the proof that `min(T, k ceil(T / p))` releases of multiplier
    /// `s` dominate every pair, under both relations, is in [`crate::support`] and
    /// `docs/privacy/dp-cd.md`. The bound must be chosen without looking at the data
    /// (e.g. from the schema: numeric columns plus one per one-hot encoded column).
    ///
    /// ```
    /// use dp_optim::{CoordinateOrder, DpCdParams, RowSupport};
    /// use dp_models::{Logistic, L2};
    /// // Two numeric features, then two one-hot encoded columns of 3 and 4 categories.
    /// let support = RowSupport::one_hot(vec![vec![2, 3, 4], vec![5, 6, 7, 8]]);
    /// let solver = DpCdParams::new(Logistic, L2::new(1e-4).unwrap())
    ///     .epsilon(1.0)
    ///     .delta(1e-6)
    ///     .passes(10)
    ///     .clip(1.0)
    ///     .coordinate_order(CoordinateOrder::Permutation)
    ///     .row_support(Some(support))
    ///     .build()
    ///     .unwrap();
    /// # let _ = solver;
    /// ```
    pub fn row_support(mut self, bound: Option<RowSupport>) -> Self {
        self.row_support = bound;
        self
    }

    /// Checks every data-independent parameter once.
    pub fn build(self) -> Result<DpCd<L, P>> {
        let privacy = self.privacy.check()?;
        let (passes, steps) = match (self.passes, self.steps) {
            (Some(_), Some(_)) => {
                return Err(OptimError::InvalidParameter {
                    name: "steps",
                    value: "both passes and steps".into(),
                    expected: "set either passes or steps, not both",
                })
            }
            (None, None) => return Err(OptimError::Missing("passes (or steps)")),
            (Some(p), None) => (positive_count("passes", p)?, None),
            (None, Some(s)) => (0, Some(positive_count("steps", s)?)),
        };
        positive("step_scale", self.step_scale)?;
        let clip = positive("clip", self.clip.ok_or(OptimError::Missing("clip"))?)?;
        if let Averaging::Every(k) = self.averaging {
            positive_count("averaging period K", k)?;
        }
        if !self.loss.is_smooth() {
            return Err(OptimError::Unsupported(format!(
                "DP-CD needs a smooth loss (step sizes gamma / M_j need a curvature bound); \
                 the {} loss is not smooth — use logistic, squared, squared hinge or Huber",
                self.loss.name()
            )));
        }
        self.smoothness.check()?;
        if let Some(a) = &self.adaptive_clipping {
            a.check()?;
        }
        positive_count("threads", self.chunks as u64)?;
        if self.row_support.is_some() && self.order == CoordinateOrder::Uniform {
            return Err(OptimError::Unsupported(
                "row_support needs every coordinate visited once per pass: set \
                 coordinate_order(CoordinateOrder::Permutation) or Cyclic (the uniform \
                 order may visit one coordinate many times in a pass)"
                    .into(),
            ));
        }
        if self.precision == Precision::Mixed {
            if self.adjacency == Adjacency::AddRemove {
                return Err(OptimError::Unsupported(
                    "Precision::Mixed is analysed under replace-one only (under add/remove \
                     the f32 blocks shift under every later record): use Precision::Double \
                     or Auto"
                        .into(),
                ));
            }
            if self.loss.margin_kernel().is_none() {
                return Err(OptimError::Unsupported(format!(
                    "Precision::Mixed needs a loss with a mixed-precision kernel (logistic); \
                     the {} loss has none: use Precision::Double or Auto",
                    self.loss.name()
                )));
            }
        }
        let public_n = match self.adjacency {
            Adjacency::ReplaceOne => None,
            Adjacency::AddRemove => {
                let n = self.public_n.ok_or(OptimError::Missing(
                    "public_n (under add/remove the number of records is private: state a public one)",
                ))?;
                positive_count("public_n", n as u64)?;
                if matches!(self.smoothness, Smoothness::Private { .. }) {
                    return Err(OptimError::Unsupported(
                        "Smoothness::Private (the DP-CD paper's per-coordinate Laplace \
                         estimate) is analysed under replace-one only; under add/remove use \
                         Smoothness::PrivateBounded or Smoothness::PrivateGaussian"
                            .into(),
                    ));
                }
                Some(n)
            }
        };
        Ok(DpCd {
            loss: self.loss,
            penalty: self.penalty,
            privacy,
            passes,
            steps,
            step_scale: self.step_scale,
            clip,
            averaging: self.averaging,
            order: self.order,
            chunks: self.chunks,
            smoothness: self.smoothness,
            adaptive_clipping: self.adaptive_clipping,
            adjacency: self.adjacency,
            public_n,
            row_support: self.row_support,
            precision: self.precision,
            w0: self.w0,
        })
    }
}

/// DP-CD with checked parameters (see [`DpCdParams`]).
#[derive(Debug, Clone)]
pub struct DpCd<L, P> {
    loss: L,
    penalty: P,
    privacy: CheckedPrivacy,
    passes: u64,
    /// Exact coordinate updates (instead of `passes * p`).
    steps: Option<u64>,
    step_scale: f64,
    clip: f64,
    averaging: Averaging,
    order: CoordinateOrder,
    chunks: usize,
    smoothness: Smoothness,
    adaptive_clipping: Option<AdaptiveClipping>,
    adjacency: Adjacency,
    /// The stated public count (add/remove only).
    public_n: Option<usize>,
    row_support: Option<RowSupport>,
    precision: Precision,
    w0: Option<Vec<f64>>,
}

/// Per-coordinate Gaussian noise for DP-CD: coordinate `j`'s release gets an
/// independent draw of `N(0, sigma_j^2)` from the noise stream.
struct CoordGaussian<'a, R: Rng + ?Sized> {
    mechanisms: &'a [Gaussian],
    rng: &'a mut R,
}

impl<R: Rng + ?Sized> CoordNoise for CoordGaussian<'_, R> {
    #[inline]
    fn perturb(&mut self, j: usize, g: f64) -> f64 {
        g + self.mechanisms[j].sample(self.rng)
    }
    #[inline]
    fn prefetch(&self, j: usize) {
        if let Some(m) = self.mechanisms.get(j) {
            dp_models::simd::rows::prefetch(m);
        }
    }
}

impl<L, P> DpCd<L, P> {
    /// Name used in reports.
    pub fn name(&self) -> &'static str {
        match self.smoothness {
            Smoothness::Private { .. }
            | Smoothness::PrivateBounded { .. }
            | Smoothness::PrivateGaussian { .. } => "dp-cd-p",
            _ => "dp-cd",
        }
    }
}

impl<D: ColumnKernels, L: Loss, P: Penalty> Solver<D> for DpCd<L, P> {
    /// # Privacy
    ///
    /// *Neighbouring relation:* as set by [`DpCdParams::adjacency`]: replace-one (the
    /// default) — neighbouring datasets have the same size `n` (public) and differ in
    /// one record — or add/remove, with the stated public count `N`
    /// ([`DpCdParams::public_n`]) in place of `n` everywhere (see the last paragraph).
    /// *Preconditions:* the step scale, `C`, the
    /// number of passes, the averaging mode, the coordinate order and the initial point
    /// do not depend on the data; the `M_j` are public, privately estimated (charged),
    /// or computed from the data with the caller's explicit opt-in (then the guarantee
    /// does not cover what they reveal, and the report says so).
    ///
    /// *Claim:* the sequence of all iterates (hence the released model) is
    /// `(epsilon, delta)`-DP, with the achieved epsilon (at most the target) in the
    /// report's guarantee, which composes everything charged to the ledger.
    ///
    /// *Proof sketch* (`docs/privacy/dp-cd.md`): step `k` picks `j` independently of the
    /// data and releases `g_j = (1/n) sum_i clip(grad_j loss(theta; d_i), C_j) + N(0,
    /// sigma_j^2)`. Each clipped term lies in `[-C_j, C_j]`, so replacing one record
    /// moves `g_j` by at most `2 C_j / n` (paper Sec. 5.1, Lemma A.2); with
    /// `sigma_j = s * 2 C_j / n` every release is a Gaussian mechanism of noise
    /// multiplier `s`, `(alpha, alpha / (2 s^2))`-RDP (Mironov 2017, Cor. 3) and
    /// `1/s`-GDP. The releases compose adaptively: `T*K` of them are
    /// `(alpha, T K alpha / (2 s^2))`-RDP (paper Thm B.5) and exactly `sqrt(T K)/s`-GDP
    /// (Dong, Roth & Su 2022, Cor. 3.3). The prox step and the averaging are
    /// post-processing. `s` is the smallest multiplier whose accounted epsilon meets the
    /// optimisation's share of the target (passing side of the search). Constants that
    /// cost privacy (DP-CD-P's Laplace estimate, or privately estimated constants given
    /// by the caller) are pure-DP charges composed sequentially with the releases.
    /// With adaptive clipping, the quantile search's Gaussian releases are charged
    /// before the optimisation's, the thresholds `C_j` are their post-processing (so
    /// the sensitivity `2 C_j / n` argument holds as is), and the multiplier `s` is
    /// calibrated on the whole ledger (`private_clip_quantiles`, `docs/privacy/dp-cd.md`).
    ///
    /// *Add/remove:* each release is `g_j = (1/N) sum_{i in D} clip(grad_j loss(theta;
    /// d_i), C_j) + N(0, sigma_j^2)` with the public `N`; adding or removing one record
    /// adds or removes one term in `[-C_j, C_j]`, so `g_j` moves by at most `C_j / N`,
    /// and `sigma_j = s C_j / N` makes it a Gaussian mechanism of multiplier `s` under
    /// this relation. The number of releases `T*K` depends on `p` and the passes only,
    /// never on `n`. The composition, the calibration of `s` (the same search over the
    /// same ledger: the accountants work in multipliers, whatever the relation) and the
    /// post-processing are as above, so at the same target `s` is the same and the noise
    /// is half the replace-one noise. The private `M_j` (`PrivateBounded`:
    /// `min(K, p) / N` in L1; `PrivateGaussian`: `c min(R^2, ||cap||) / N` in L2) and the
    /// quantile search (`sqrt(p) / N`) are normalised by `N` with their add/remove
    /// sensitivities (proofs at `dp_models::constants` and `private_clip_quantiles`);
    /// what is refused under add/remove is refused before anything is charged.
    ///
    /// *Row support* ([`DpCdParams::row_support`]): a record whose feature `j` is zero
    /// contributes exactly `0` to the release of coordinate `j` (the kernels return `+0`
    /// for a zero feature whatever the derivative), so for any neighbouring pair the
    /// releases of the coordinates outside the two records' supports are the same on
    /// both datasets. With every record having at most the bound's non-zeros (records
    /// with more are projected onto the bound before anything is charged, a fixed
    /// per-record map that keeps neighbours neighbours) and each coordinate visited at
    /// most `ceil(T K / p)` times (permutation or cyclic order), every pair is dominated by
    /// `min(T K, k ceil(T K / p))` Gaussian releases of multiplier `s`, the count the
    /// ledger is charged and `s` is calibrated on (proof: [`crate::support`]).
    ///
    /// *Mixed precision* ([`Precision`]; replace-one only, decided from public facts:
    /// the loss, the relation, the storage and `n`): each term is computed from its own
    /// record's `f32` folded features and margin (a per-record map of the record and the
    /// released steps) and clipped at `release_clip(C_j, n) < C_j`; the terms are added
    /// in `f32` within blocks fixed by `n`, the blocks in `f64`. Counting every rounding
    /// error, one replaced record moves the computed sum by at most `2 C_j`
    /// (`dp_models::simd::margin`, with the proof and an empirical test on adversarial
    /// neighbours), so each release is the same Gaussian mechanism as above.
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        self.fit_inner(data, Streams::from_rng(rng), Switches::ON)
    }
}

impl<L: Loss, P: Penalty> DpCd<L, P> {
    /// The plan for a dataset of `n` samples given the smoothness constants `m`
    /// (no privacy is spent; useful to inspect the noise before fitting).
    ///
    /// What the constants cost before the releases is taken from `provenance`
    /// (privately estimated constants) or, for DP-CD-P, from the budget fraction of its
    /// Laplace estimate (charged in the fit as `p` releases of `epsilon_m / p` each; the
    /// preview charges one release of `epsilon_m`, so with non-paper accounting the
    /// fit's multiplier may differ from the preview's in the last digits).
    ///
    /// With [`adaptive_clipping`](DpCdParams::adaptive_clipping) the thresholds depend
    /// on the data and there is no preview: an error says so. Under add/remove `n` is
    /// ignored in favour of the stated `public_n`.
    pub fn plan(&self, n: usize, m: &[f64], provenance: Provenance) -> Result<DpCdPlan> {
        if self.adaptive_clipping.is_some() {
            return Err(OptimError::Unsupported(
                "with adaptive clipping the thresholds are estimated from the data in the \
                 fit; there is no data-free plan"
                    .into(),
            ));
        }
        let mut prior = Ledger::new();
        if let Some(fraction) = self.smoothness.gaussian_fraction() {
            // PrivateGaussian: its one Gaussian release (bounds given as public; a
            // bound with a cost is charged in the fit), then the whole-ledger plan.
            prior.charge(Charge::Gaussian {
                noise_multiplier: gaussian_smoothness_multiplier(&self.privacy, fraction)?,
                count: 1,
            })?;
            return self
                .plan_with(n, m, provenance, &prior, None, None, true)
                .map(|(plan, _)| plan);
        }
        let spent = match self.smoothness.budget_fraction() {
            Some(fraction) => Some(fraction * self.privacy.epsilon.get()),
            None => {
                let e = charge_pre_spent(
                    &mut Ledger::new(),
                    pre_spent_epsilon(&provenance),
                    "smoothness constants",
                )?;
                (e > 0.0).then_some(e)
            }
        };
        if let Some(e) = spent {
            charge_pre_spent(&mut prior, e, "smoothness constants")?;
        }
        self.plan_with(n, m, provenance, &prior, spent, None, false)
            .map(|(plan, _)| plan)
    }

    /// The number of records the releases are normalised by: `n` under replace-one,
    /// the stated `public_n` under add/remove.
    fn planned_n(&self, n: usize) -> usize {
        self.public_n.unwrap_or(n)
    }

    /// The relation in the vocabulary of `dp_models::constants` (for the private
    /// `M_j`), with the normaliser.
    fn neighbours(&self) -> Neighbours {
        match (self.adjacency, self.public_n) {
            (Adjacency::AddRemove, Some(public_n)) => Neighbours::AddRemove { public_n },
            _ => Neighbours::ReplaceOne,
        }
    }

    fn gaussian_plan(&self, releases: u64) -> Plan {
        Plan {
            mechanism: PlanMechanism::Gaussian,
            steps: releases,
            accountant: self.privacy.accounting.for_gaussian(),
        }
    }

    /// The plan of the releases that follow the charges of `prior` (`spent`: their
    /// pure epsilon), calibrated against the ledger (see
    /// [`calibrate_releases`](crate::driver)). `quantiles`: the privately estimated
    /// `Q_j` of adaptive clipping (whose Gaussian charges are in `prior`); then the
    /// calibration is always over the whole ledger. `gaussian_prior`: `prior` holds a
    /// Gaussian charge for the constants ([`Smoothness::PrivateGaussian`]); then too.
    #[allow(clippy::too_many_arguments)]
    fn plan_with(
        &self,
        n: usize,
        m: &[f64],
        provenance: Provenance,
        prior: &Ledger,
        spent: Option<f64>,
        quantiles: Option<&[f64]>,
        gaussian_prior: bool,
    ) -> Result<(DpCdPlan, LedgerCalibration)> {
        let whole = quantiles.is_some() || gaussian_prior;
        let n = self.planned_n(n);
        let p = m.len();
        check_smoothness(m, p)?;
        let schedule = match self.steps {
            Some(steps) => Schedule::from_updates(self.averaging, steps)?,
            None => Schedule::new(self.averaging, self.passes, p)?,
        };
        let releases = schedule.updates();
        // With a public row-support bound, only the releases one record can move are
        // charged (`crate::support`); otherwise all of them.
        let charged = match &self.row_support {
            Some(bound) => bound.charged_releases(p, releases)?,
            None => releases,
        };
        let gaussian = self.gaussian_plan(charged);
        // The papers' split (target - spent for the releases alone) does not cover
        // the Gaussian charges of the search or of the constants: then the whole ledger.
        let split = if whole {
            Split::WholeLedger
        } else {
            Split::Accounting
        };
        let calibrated = calibrate_over(
            prior,
            spent.unwrap_or(0.0),
            &gaussian,
            &self.privacy,
            split,
            None,
        )?;
        let calibration = calibrated.calibration;
        // The releases' own epsilon (the whole ledger's when nothing was charged before).
        let eps_opt = if spent.is_none() && !whole {
            calibration.epsilon
        } else {
            calibrate::epsilon(
                &gaussian,
                NoiseMultiplier::new(calibration.noise_multiplier)?,
                self.privacy.delta,
            )?
        };
        let s = calibration.noise_multiplier;
        let trace: f64 = m.iter().sum();
        let clip_thresholds: Vec<f64> = match quantiles {
            Some(q) => q.iter().map(|qj| qj * self.clip).collect(),
            None => m.iter().map(|mj| (mj / trace).sqrt() * self.clip).collect(),
        };
        check_smoothness(&clip_thresholds, p).map_err(|_| {
            OptimError::Unsupported(
                "a clipping threshold C_j is zero or not finite: raise clip or the \
                 adaptive clipping range"
                    .into(),
            )
        })?;
        // Replace-one: one record's clipped term changes by at most 2 C_j; add/remove: one
        // term in [-C_j, C_j] appears or goes (see the Solver impl's # Privacy).
        let sensitivities: Vec<f64> = match self.adjacency {
            Adjacency::ReplaceOne => clip_thresholds.iter().map(|c| 2.0 * c / n as f64).collect(),
            Adjacency::AddRemove => clip_thresholds.iter().map(|c| c / n as f64).collect(),
        };
        let noise_std: Vec<f64> = sensitivities.iter().map(|d| s * d).collect();
        let step_sizes = m.iter().map(|mj| self.step_scale / mj).collect();
        let plan = DpCdPlan {
            accounting: self.privacy.accounting.name(),
            epsilon_optimisation: eps_opt,
            epsilon_smoothness: spent,
            delta: self.privacy.delta.get(),
            schedule,
            coordinate_order: self.order,
            releases,
            row_support: self.row_support.clone(),
            charged_releases: self.row_support.as_ref().map(|_| charged),
            adjacency: self.adjacency,
            noise_multiplier: s,
            calibration,
            smoothness: m.to_vec(),
            smoothness_provenance: provenance,
            step_sizes,
            clip: self.clip,
            clip_thresholds,
            sensitivities,
            noise_std,
            mixed_precision: false,
            smoothness_floored: None,
            smoothness_ceiled: None,
        };
        Ok((plan, calibrated))
    }

    /// The mixed-precision kernel the sweep uses, per [`Precision`] (`None`: `f64`).
    /// Decided from public facts only (the loss, the relation, the design's storage and
    /// `n`, public under replace-one), before anything is charged.
    fn margin_kernel<D: ColumnKernels>(&self, x: &D, n: usize) -> Result<Option<MarginKernel>> {
        let kernel = self.loss.margin_kernel();
        let eligible =
            kernel.is_some() && self.adjacency == Adjacency::ReplaceOne && x.as_dense().is_some();
        match self.precision {
            Precision::Double => Ok(None),
            Precision::Auto => Ok(kernel.filter(|_| eligible && n >= MIXED_MIN_ROWS)),
            Precision::Mixed if eligible => Ok(kernel),
            Precision::Mixed => Err(OptimError::Unsupported(
                "Precision::Mixed needs a dense design (the f32 sweep reads dense \
                 columns): use Precision::Double or Auto for sparse data"
                    .into(),
            )),
        }
    }

    pub(crate) fn fit_inner<D: ColumnKernels>(
        &self,
        data: &Dataset<D>,
        mut streams: Streams,
        switches: Switches,
    ) -> Result<Fitted> {
        let mut fit = PrivateFit::begin(&self.privacy, self.adjacency);
        check_problem("DP-CD", data, &self.loss, &self.penalty, self.w0.as_deref())?;
        let (n, p) = (data.n_samples(), data.n_features());
        // What the releases are normalised by (the data's n only under replace-one).
        let planned_n = self.planned_n(n);
        let margin = self.margin_kernel(data.x(), n)?;
        // 0. The stated row-support bound is made to hold for every record before
        //    anything is charged or drawn: a record with more non-zeros than the bound
        //    allows is projected onto it (its largest-magnitude non-zeros kept,
        //    `RowSupport::project`), as feature bounds clip instead of refusing.
        //    Privacy: the projection is a fixed map applied record by record that reads
        //    one record and the public bound only, so two neighbouring datasets are
        //    still neighbours (same relation) after it, and the claim below (proved for
        //    data within the bound, `crate::support`) holds for the raw data by
        //    pre-processing. Refusing instead would name the offending record: an
        //    output of the data that no guarantee covers. How many records were
        //    projected is counted from the data without privacy and goes to the
        //    non-private diagnostics only.
        let projected_data;
        let (data, support_projected) = match &self.row_support {
            Some(bound) => match data.x().project_support(bound)? {
                Some((x, count)) => {
                    projected_data = Dataset::new(x, data.y().to_vec())?;
                    (&projected_data, Some(count))
                }
                None => (data, Some(0)),
            },
            None => (data, None),
        };

        // 1. The smoothness constants. Whatever they cost is charged before any noise
        //    is drawn; the optimisation gets what is left of the target.
        let ResolvedSmoothness {
            tagged,
            spent,
            uses_non_private,
            gaussian,
            adjusted,
        } = resolve_private_any(
            &self.smoothness,
            &self.loss,
            data.x(),
            &self.privacy,
            self.neighbours(),
            &mut streams.constants,
            fit.ledger_mut(),
            &|f| gaussian_smoothness_multiplier(&self.privacy, f),
        )?;
        let provenance = tagged.provenance;
        let m = tagged.value;
        check_smoothness(&m, p)?;
        let mut w = self.w0.clone().unwrap_or_else(|| vec![0.0; p]);
        // 1b. Adaptive clipping: the private quantile search, charged before it runs
        //     (its draws come from the constants stream, after the constants').
        let quantiles = match &self.adaptive_clipping {
            Some(cfg) => Some(private_clip_quantiles(
                cfg,
                cfg.noise_multiplier(&self.privacy)?,
                &self.loss,
                data,
                planned_n,
                &w,
                &mut streams.constants,
                fit.ledger_mut(),
            )?),
            None => None,
        };
        // 2. The plan, calibrated over the ledger charged so far plus its releases, and
        //    charged in full before the first release.
        let (mut plan, calibrated) = self.plan_with(
            n,
            &m,
            provenance,
            fit.ledger(),
            spent,
            quantiles.as_deref(),
            gaussian,
        )?;
        plan.smoothness_floored = adjusted.map(|a| a.0);
        plan.smoothness_ceiled = adjusted.map(|a| a.1);
        plan.mixed_precision = margin.is_some();
        let fit = fit.charge(Declared {
            releases: vec![Charge::Gaussian {
                noise_multiplier: plan.noise_multiplier,
                count: plan.charged(),
            }],
            calibrated: Some(calibrated),
            accountant: self.privacy.accounting.for_gaussian(),
            proof: Proof::Proven,
        })?;
        // The samplers are the charged release's own: std s * Delta_j.
        let release = fit.release(0)?;
        let mechanisms = plan
            .sensitivities
            .iter()
            .map(|&d| release.gaussian(d))
            .collect::<std::result::Result<Vec<_>, _>>()?;

        // 3. Algorithm 1.
        let mut z = predictor(data.x(), &w);
        let prob = CdProblem {
            x: data.x(),
            y: data.y(),
            loss: &self.loss,
            penalty: &self.penalty,
            steps: &plan.step_sizes,
            chunks: self.chunks,
            inv_n: 1.0 / planned_n as f64,
            margin,
        };
        // The switches exist for the twin test only (crate-private): with noise and
        // clipping off this is exactly the non-private `Cd`.
        let no_clip;
        let clip = if switches.clip {
            PerCoordinate(&plan.clip_thresholds)
        } else {
            no_clip = vec![f64::INFINITY; p];
            PerCoordinate(&no_clip)
        };
        let zero_steps = if switches.noise {
            let mut noise = CoordGaussian {
                mechanisms: &mechanisms,
                rng: &mut streams.noise,
            };
            run_cd(
                &prob,
                plan.schedule,
                self.order,
                &clip,
                &mut noise,
                &mut streams.coordinates,
                &mut w,
                &mut z,
            )
        } else {
            run_cd(
                &prob,
                plan.schedule,
                self.order,
                &clip,
                &mut NoNoise,
                &mut streams.coordinates,
                &mut w,
                &mut z,
            )
        };
        let warnings = match plan.smoothness_floored {
            Some(floored) if floored > 0 => vec![FitWarning::SmoothnessFloored { floored, of: p }],
            _ => Vec::new(),
        };
        fit.finish(
            "DP-CD",
            "the step scale or the clipping threshold is too large for this data",
            Model {
                algorithm: self.name().to_string(),
                coefficients: w,
                iterations: plan.releases,
                diagnostics: Diagnostics {
                    zero_steps,
                    warnings,
                    support_projected,
                    ..Diagnostics::default()
                },
            },
            Report {
                n_samples: planned_n,
                plan: SolverPlan::DpCd(plan),
                other_guarantees: Vec::new(),
                uses_non_private_constants: uses_non_private,
            },
            |w| objective_from_predictor(&self.loss, &self.penalty, w, &z, data.y()),
        )
    }
}

#[cfg(test)]
mod adaptive_tests {
    use super::*;
    use dp_models::{DenseDesign, Logistic};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn data(n: usize) -> Dataset<DenseDesign> {
        // Column 0: magnitudes spread over [0, 2); column 1: 90 % zeros; column 2: 1e-3.
        let mut x = Vec::with_capacity(3 * n);
        for i in 0..n {
            x.push(2.0 * (i as f64 + 0.5) / n as f64);
            x.push(if i % 10 == 0 { 1.0 } else { 0.0 });
            x.push(1e-3);
        }
        let y = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        Dataset::new(DenseDesign::from_row_major(n, 3, &x).unwrap(), y).unwrap()
    }

    #[test]
    fn quantile_search_finds_the_empirical_quantile_and_charges_first() {
        // At w0 = 0 the logistic derivative is -y/2, so |g_ij| = |x_ij| / 2.
        let d = data(4000);
        let cfg = AdaptiveClipping {
            quantile: 0.5,
            rounds: 30,
            budget_fraction: 0.5,
            range: (1e-6, 1e2),
        };
        let z = 0.5;
        let mut ledger = Ledger::new();
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let q = private_clip_quantiles(
            &cfg,
            z,
            &Logistic,
            &d,
            4000,
            &[0.0; 3],
            &mut rng,
            &mut ledger,
        )
        .unwrap();
        assert_eq!(ledger.entries(), &[cfg.charge(z)]);
        // Column 0: median of x/2 with x uniform on [0, 2) is 0.5 (noise std
        // 0.5 sqrt(3)/4000 = 2e-4 in the fraction: a relative error of a few 1e-4).
        assert!((q[0] - 0.5).abs() < 0.01, "{}", q[0]);
        // Column 1: 90 % zeros, so the median is 0: the search ends at the floor.
        assert!(q[1] < 1e-5, "{}", q[1]);
        // Column 2: every magnitude is 5e-4.
        assert!((q[2] / 5e-4 - 1.0).abs() < 0.01, "{}", q[2]);
        // q = 0.95 on column 1: between 0 and 0.5, the search lands on 0.5.
        let cfg95 = AdaptiveClipping {
            quantile: 0.95,
            ..cfg
        };
        let q = private_clip_quantiles(
            &cfg95,
            z,
            &Logistic,
            &d,
            4000,
            &[0.0; 3],
            &mut rng,
            &mut ledger,
        )
        .unwrap();
        assert!((q[1] / 0.5 - 1.0).abs() < 0.01, "{}", q[1]);
    }

    #[test]
    fn refused_charge_runs_no_search() {
        let d = data(100);
        let cfg = AdaptiveClipping::default();
        let mut ledger = Ledger::with_budget(
            dp_accounting::Epsilon::new(1e-3).unwrap(),
            dp_accounting::Delta::new(1e-9).unwrap(),
        );
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        assert!(private_clip_quantiles(
            &cfg,
            20.0,
            &Logistic,
            &d,
            100,
            &[0.0; 3],
            &mut rng,
            &mut ledger
        )
        .is_err());
        assert!(ledger.entries().is_empty());
        assert_eq!(rng.next_u64(), ChaCha20Rng::seed_from_u64(3).next_u64());
    }

    #[test]
    fn bad_configurations_are_refused_at_build() {
        let d = AdaptiveClipping::default();
        for bad in [
            AdaptiveClipping { quantile: 1.0, ..d },
            AdaptiveClipping {
                quantile: f64::NAN,
                ..d
            },
            AdaptiveClipping { rounds: 0, ..d },
            AdaptiveClipping {
                budget_fraction: 0.0,
                ..d
            },
            AdaptiveClipping {
                budget_fraction: 1.0,
                ..d
            },
            AdaptiveClipping {
                range: (1.0, 1.0),
                ..d
            },
            AdaptiveClipping {
                range: (0.0, 1.0),
                ..d
            },
        ] {
            let r = DpCdParams::new(Logistic, dp_models::L2::new(0.1).unwrap())
                .epsilon(1.0)
                .delta(1e-6)
                .passes(2)
                .clip(1.0)
                .adaptive_clipping(Some(bad))
                .build();
            assert!(r.is_err(), "{bad:?}");
        }
    }
}

#[cfg(test)]
mod gaussian_constants_tests {
    use super::*;
    use dp_accounting::calibrate::Accountant;
    use dp_accounting::Delta;
    use dp_models::constants::Tagged;
    use dp_models::{DenseDesign, Logistic, L2};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn data(n: usize, p: usize) -> Dataset<DenseDesign> {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let x: Vec<f64> = (0..n * p)
            .map(|k| {
                // Column j has scale 1/(j+1): imbalanced M_j, rows of norm <= 1.
                let j = k % p;
                rng.random_range(-1.0..1.0) / ((j + 1) as f64 * (p as f64).sqrt())
            })
            .collect();
        let y = (0..n)
            .map(|i| if x[i * p] > 0.0 { 1.0 } else { -1.0 })
            .collect();
        Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
    }

    fn gaussian(fraction: f64) -> Smoothness {
        Smoothness::PrivateGaussian {
            feature_bounds: None,
            row_norm_bound: Some(Tagged::public(1.0)),
            budget_fraction: fraction,
            failure_probability: Some(0.05),
        }
    }

    #[test]
    fn release_and_steps_compose_exactly_in_gdp_at_the_target() {
        let d = data(2000, 6);
        let (eps, delta) = (1.0, 1e-6);
        let solver = DpCdParams::new(Logistic, L2::new(1e-4).unwrap())
            .epsilon(eps)
            .delta(delta)
            .passes(5)
            .clip(1.0)
            .accounting(crate::Accounting::Exact)
            .smoothness(gaussian(0.1))
            .build()
            .unwrap();
        let fit = solver.fit_seeded(&d, 4).unwrap();
        let report = fit.model.privacy.as_ref().unwrap();
        assert_eq!(fit.model.algorithm, "dp-cd-p");
        let privacy = PrivacyParams::new(eps, delta).check().unwrap();
        let z_m = gaussian_smoothness_multiplier(&privacy, 0.1).unwrap();
        // Charged first, then the steps; nothing else.
        let (s, t) = match report.ledger.entries() {
            [Charge::Gaussian {
                noise_multiplier: zm,
                count: 1,
            }, Charge::Gaussian {
                noise_multiplier: s,
                count: t,
            }] => {
                assert_eq!(*zm, z_m);
                (*s, *t)
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(t, 30);
        // GDP by hand: mu^2 = 1/z_m^2 + T/s^2, and 1/z_m^2 = 0.1 mu_target^2.
        let mu = (1.0 / (z_m * z_m) + t as f64 / (s * s)).sqrt();
        let by_hand = dp_accounting::gdp::gdp_epsilon(mu, Delta::new(delta).unwrap()).unwrap();
        let g = &report.guarantee;
        assert!(
            g.epsilon <= eps && g.epsilon > eps * (1.0 - 1e-6),
            "{}",
            g.epsilon
        );
        assert!(
            (by_hand - g.epsilon).abs() < 1e-9,
            "{by_hand} {}",
            g.epsilon
        );
        assert_eq!(
            report
                .ledger
                .guarantee(Delta::new(delta).unwrap(), Accountant::Gdp)
                .unwrap(),
            g.epsilon
        );
        let mu_target = 1.0
            / dp_accounting::calibrate::calibrate_sigma(
                &Plan {
                    mechanism: PlanMechanism::Gaussian,
                    steps: 1,
                    accountant: Accountant::Gdp,
                },
                privacy.epsilon,
                privacy.delta,
            )
            .unwrap()
            .noise_multiplier;
        assert!((1.0 / (z_m * z_m) / (mu_target * mu_target) - 0.1).abs() < 1e-9);
        // The preview plans the same multiplier for the steps.
        let SolverPlan::DpCd(fitted_plan) = &report.plan else {
            panic!()
        };
        let preview = solver
            .plan(
                2000,
                &fitted_plan.smoothness,
                fitted_plan.smoothness_provenance,
            )
            .unwrap();
        assert_eq!(preview.noise_multiplier, s);
        // Every M_j is within the public ceiling c R^2 and the fit is finite.
        assert!(fitted_plan.smoothness.iter().all(|&m| m > 0.0 && m <= 0.25));
        assert!(fit.model.coefficients.iter().all(|w| w.is_finite()));
        // Seeded fits replay bit for bit; the model holds no seed.
        assert_eq!(solver.fit_seeded(&d, 4).unwrap().model, fit.model);
        assert!(!serde_json::to_string(&fit.model).unwrap().contains("seed"));
    }

    #[test]
    fn gaussian_estimates_reused_as_given_and_other_solvers_are_refused() {
        let d = data(300, 4);
        let mut ledger = Ledger::new();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let est = dp_models::constants::private_coordinate_smoothness_gaussian(
            &Logistic,
            d.x(),
            dp_models::constants::SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            },
            3.0,
            &Default::default(),
            &mut rng,
            &mut ledger,
        )
        .unwrap();
        // Their cost is not a pure epsilon: charging it as one (or as 0) is refused.
        let given = DpCdParams::new(Logistic, L2::new(1e-4).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(2)
            .clip(1.0)
            .smoothness(Smoothness::Given(est.estimates.clone()))
            .build()
            .unwrap();
        assert!(matches!(
            given.fit_seeded(&d, 1),
            Err(OptimError::Unsupported(m)) if m.contains("Gaussian")
        ));
        assert!(given
            .plan(300, &est.estimates.value, est.estimates.provenance)
            .is_err());
        // DP-GCD does not support the Gaussian release (its split is pure DP).
        assert!(crate::DpGcdParams::new(Logistic, L2::new(1e-4).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(2)
            .clip(1.0)
            .smoothness(gaussian(0.1))
            .build()
            .is_err());
        // A fraction outside (0, 1) is refused at build.
        for f in [0.0, 1.0, f64::NAN] {
            assert!(DpCdParams::new(Logistic, L2::new(1e-4).unwrap())
                .epsilon(1.0)
                .delta(1e-6)
                .passes(2)
                .clip(1.0)
                .smoothness(gaussian(f))
                .build()
                .is_err());
        }
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod add_remove_tests {
    use super::*;
    use crate::Accounting;
    use dp_models::constants::{coordinate_smoothness, Tagged};
    use dp_models::{DenseDesign, Logistic, L2};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// Rows of L2 norm <= 1 with imbalanced columns (so `|x_ij| <= 1`, `||x_i|| <= 1`).
    fn data(n: usize, p: usize) -> Dataset<DenseDesign> {
        let mut rng = ChaCha20Rng::seed_from_u64(17);
        let x: Vec<f64> = (0..n * p)
            .map(|k| rng.random_range(-1.0..1.0) / (((k % p) + 1) as f64 * (p as f64).sqrt()))
            .collect();
        let y = (0..n)
            .map(|i| if x[i * p] > 0.0 { 1.0 } else { -1.0 })
            .collect();
        Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
    }

    fn params(smoothness: Smoothness) -> DpCdParams<Logistic, L2> {
        DpCdParams::new(Logistic, L2::new(1e-4).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(3)
            .step_scale(0.5)
            .clip(1.0)
            .smoothness(smoothness)
    }

    #[test]
    fn noise_is_half_the_replace_one_noise_at_the_same_budget() {
        let (n, p) = (500, 4);
        let d = data(n, p);
        let public = Smoothness::Given(Tagged::public(vec![0.25; p]));
        for accounting in [Accounting::Paper, Accounting::Exact] {
            let ro = params(public.clone())
                .accounting(accounting)
                .build()
                .unwrap();
            let ar = params(public.clone())
                .accounting(accounting)
                .adjacency(Adjacency::AddRemove)
                .public_n(n)
                .build()
                .unwrap();
            let m = vec![0.25; p];
            let (pr, pa) = (
                ro.plan(n, &m, Provenance::PublicBound).unwrap(),
                ar.plan(12_345, &m, Provenance::PublicBound).unwrap(), // n ignored
            );
            // The same multiplier (the calibration is in multiplier units), half the
            // sensitivity and half the noise, exactly.
            assert_eq!(pa.noise_multiplier, pr.noise_multiplier);
            assert_eq!(pa.epsilon_optimisation, pr.epsilon_optimisation);
            assert_eq!(pr.adjacency, Adjacency::ReplaceOne);
            assert_eq!(pa.adjacency, Adjacency::AddRemove);
            for j in 0..p {
                assert_eq!(pr.sensitivities[j], 2.0 * pr.clip_thresholds[j] / n as f64);
                assert_eq!(pa.sensitivities[j], pa.clip_thresholds[j] / n as f64);
                assert_eq!(2.0 * pa.noise_std[j], pr.noise_std[j]);
            }
            // The fits: the same ledger and epsilon, the relation named.
            let (fr, fa) = (ro.fit_seeded(&d, 3).unwrap(), ar.fit_seeded(&d, 3).unwrap());
            let (rr, ra) = (fr.privacy().unwrap(), fa.privacy().unwrap());
            assert_eq!(rr.ledger, ra.ledger);
            assert_eq!(rr.guarantee.epsilon, ra.guarantee.epsilon);
            assert!(ra.guarantee.epsilon <= 1.0);
            assert_eq!(rr.guarantee.adjacency, Adjacency::ReplaceOne);
            assert_eq!(ra.guarantee.adjacency, Adjacency::AddRemove);
            let SolverPlan::DpCd(fitted) = &ra.plan else {
                panic!()
            };
            assert_eq!(fitted, &pa);
            assert_ne!(fr.model.coefficients, fa.model.coefficients);
        }
        // A stated count other than the data's: everything is normalised by it, and the
        // report shows it, not the data's size.
        let ar = params(public)
            .adjacency(Adjacency::AddRemove)
            .public_n(2 * n)
            .build()
            .unwrap();
        let f = ar.fit_seeded(&d, 3).unwrap();
        let r = f.privacy().unwrap();
        assert_eq!(r.n_samples, 2 * n);
        let SolverPlan::DpCd(plan) = &r.plan else {
            panic!()
        };
        for j in 0..p {
            assert_eq!(
                plan.sensitivities[j],
                plan.clip_thresholds[j] / (2 * n) as f64
            );
        }
        assert!(!serde_json::to_string(&f.model)
            .unwrap()
            .contains(&format!("{n},")));
    }

    #[test]
    fn private_constants_use_the_add_remove_sensitivity() {
        // Same seed, so the same standard draws: M_j - m_j = (G_j + k) * noise scale,
        // and the ratio replace-one / add-remove of that excess is the ratio of the
        // sensitivities: sqrt(2) for the Gaussian (sqrt(2) V / n against V / n), 2 for
        // the Laplace release with a row-norm bound (2 K / n against K / n, K = 1).
        let (n, p) = (3000, 6);
        let d = data(n, p);
        let truth = coordinate_smoothness(&Logistic, d.x()).unwrap().value;
        let bounds = (
            Some(Tagged::public(vec![1.0; p])),
            Some(Tagged::public(1.0)),
        );
        let cases = [
            (
                Smoothness::PrivateGaussian {
                    feature_bounds: bounds.0.clone(),
                    row_norm_bound: bounds.1.clone(),
                    budget_fraction: 0.3,
                    failure_probability: Some(0.05),
                },
                std::f64::consts::SQRT_2,
            ),
            (
                Smoothness::PrivateBounded {
                    feature_bounds: bounds.0.clone(),
                    row_norm_bound: bounds.1.clone(),
                    budget_fraction: 0.3,
                    failure_probability: Some(0.05),
                },
                2.0,
            ),
        ];
        for (smoothness, ratio) in cases {
            let ro = params(smoothness.clone())
                .accounting(Accounting::Exact)
                .build()
                .unwrap();
            let ar = params(smoothness)
                .accounting(Accounting::Exact)
                .adjacency(Adjacency::AddRemove)
                .public_n(n)
                .build()
                .unwrap();
            let (fr, fa) = (ro.fit_seeded(&d, 8).unwrap(), ar.fit_seeded(&d, 8).unwrap());
            let (rr, ra) = (fr.privacy().unwrap(), fa.privacy().unwrap());
            // The same charges (the same mechanism in multiplier / epsilon units).
            assert_eq!(rr.ledger, ra.ledger);
            assert_eq!(ra.guarantee.adjacency, Adjacency::AddRemove);
            let (SolverPlan::DpCd(pr), SolverPlan::DpCd(pa)) = (&rr.plan, &ra.plan) else {
                panic!()
            };
            let mut checked = 0;
            for j in 0..p {
                let (mr, ma) = (pr.smoothness[j], pa.smoothness[j]);
                let unclamped = |v: f64| v < 0.25 && v > 0.25e-6;
                if unclamped(mr) && unclamped(ma) {
                    let got = (mr - truth[j]) / (ma - truth[j]);
                    assert!((got - ratio).abs() < 1e-6 * ratio, "{j}: {got} vs {ratio}");
                    checked += 1;
                }
            }
            assert!(checked >= p - 1, "{checked}");
        }
    }

    #[test]
    fn what_has_no_add_remove_analysis_is_refused_before_anything_is_charged() {
        let d = data(200, 3);
        let public = Smoothness::Given(Tagged::public(vec![0.25; 3]));
        // No stated count.
        assert!(matches!(
            params(public.clone()).adjacency(Adjacency::AddRemove).build(),
            Err(OptimError::Missing(m)) if m.contains("public_n")
        ));
        assert!(params(public.clone())
            .adjacency(Adjacency::AddRemove)
            .public_n(0)
            .build()
            .is_err());
        // The paper's per-coordinate Laplace estimate (replace-one proof only).
        assert!(params(Smoothness::private(Tagged::public(vec![1.0; 3])))
            .adjacency(Adjacency::AddRemove)
            .public_n(200)
            .build()
            .is_err());
        // Constants or bounds paid for before the fit: their relation is unknown.
        let pre = |v| Tagged {
            value: v,
            provenance: Provenance::privately_estimated(0.01).unwrap(),
        };
        for s in [
            Smoothness::Given(pre(vec![0.2; 3])),
            Smoothness::PrivateGaussian {
                feature_bounds: None,
                row_norm_bound: Some(Tagged {
                    value: 1.0,
                    provenance: Provenance::privately_estimated(0.01).unwrap(),
                }),
                budget_fraction: 0.1,
                failure_probability: None,
            },
            Smoothness::PrivateBounded {
                feature_bounds: Some(pre(vec![1.0; 3])),
                row_norm_bound: None,
                budget_fraction: 0.1,
                failure_probability: None,
            },
        ] {
            let solver = params(s.clone())
                .adjacency(Adjacency::AddRemove)
                .public_n(200)
                .build()
                .unwrap();
            assert!(
                matches!(solver.fit_seeded(&d, 1), Err(OptimError::Unsupported(m)) if m.contains("add/remove")),
                "{s:?}"
            );
            // Under replace-one the same inputs are accepted (their cost is charged).
            let ok = params(s.clone()).build().unwrap().fit_seeded(&d, 1);
            assert!(ok.is_ok(), "{s:?}: {:?}", ok.err());
        }
        // Adaptive clipping has an add/remove analysis (sqrt(p) / N): it runs, charged.
        let f = params(public)
            .adjacency(Adjacency::AddRemove)
            .public_n(200)
            .adaptive_clipping(Some(AdaptiveClipping::default()))
            .build()
            .unwrap()
            .fit_seeded(&d, 2)
            .unwrap();
        let r = f.privacy().unwrap();
        assert_eq!(r.guarantee.adjacency, Adjacency::AddRemove);
        assert_eq!(r.ledger.entries().len(), 2);
    }
}

#[cfg(test)]
mod support_tests {
    use super::*;
    use crate::support::RowSupport;
    use crate::Accounting;
    use dp_models::constants::Tagged;
    use dp_models::{DenseDesign, Logistic, SparseDesign, L2};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// `n` records over `p = 2 + 3 + 4` features: two numeric ones, then one-hot groups
    /// of 3 and 4 indicators (value 0.5, at most one per group); `k = 4`.
    fn one_hot(n: usize) -> (Dataset<DenseDesign>, RowSupport) {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let p = 9;
        let mut x = vec![0.0; n * p];
        for i in 0..n {
            let r = &mut x[i * p..(i + 1) * p];
            r[0] = rng.random_range(-0.5..0.5);
            r[1] = rng.random_range(-0.5..0.5);
            // Category 0 of each group is the dropped reference: no indicator.
            let a = rng.random_range(0..4usize);
            if a > 0 {
                r[1 + a] = 0.5;
            }
            let b = rng.random_range(0..5usize);
            if b > 0 {
                r[4 + b] = 0.5;
            }
        }
        let y = (0..n)
            .map(|i| {
                if x[i * p] + x[i * p + 2] > 0.1 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let d = Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap();
        (
            d,
            RowSupport::one_hot(vec![vec![2, 3, 4], vec![5, 6, 7, 8]]),
        )
    }

    fn params(passes: u64) -> DpCdParams<Logistic, L2> {
        DpCdParams::new(Logistic, L2::new(1e-3).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(passes)
            .clip(1.0)
            .accounting(Accounting::Exact)
            .smoothness(Smoothness::Given(Tagged::public(vec![0.25; 9])))
            .coordinate_order(CoordinateOrder::Permutation)
    }

    #[test]
    fn support_accounting_charges_k_releases_per_pass_and_meets_the_target() {
        let (d, support) = one_hot(400);
        for adjacency in [Adjacency::ReplaceOne, Adjacency::AddRemove] {
            let with = |s: Option<RowSupport>| {
                params(20)
                    .row_support(s)
                    .adjacency(adjacency)
                    .public_n(400)
                    .build()
                    .unwrap()
                    .fit_seeded(&d, 3)
                    .unwrap()
            };
            let (plain, sparse) = (with(None), with(Some(support.clone())));
            let (pp, ps) = (plain.privacy().unwrap(), sparse.privacy().unwrap());
            let (SolverPlan::DpCd(a), SolverPlan::DpCd(b)) = (&pp.plan, &ps.plan) else {
                panic!("not DP-CD plans")
            };
            assert_eq!((a.releases, a.charged()), (180, 180));
            assert_eq!((b.releases, b.charged()), (180, 80));
            assert_eq!(b.charged_releases, Some(80));
            assert_eq!(b.row_support.as_ref(), Some(&support));
            // The ledger holds exactly the charged count.
            assert!(ps
                .ledger
                .entries()
                .iter()
                .any(|e| matches!(e, Charge::Gaussian { count: 80, .. })));
            // Both meet the target; the support-aware multiplier is smaller, by about
            // sqrt(80 / 180) in the GDP regime.
            for g in [&pp.guarantee, &ps.guarantee] {
                assert!(g.epsilon <= 1.0 && g.adjacency == adjacency, "{g:?}");
            }
            let ratio = b.noise_multiplier / a.noise_multiplier;
            assert!(
                (ratio - (80.0f64 / 180.0).sqrt()).abs() < 0.05,
                "{ratio} vs {}",
                (80.0f64 / 180.0).sqrt()
            );
            for j in 0..9 {
                assert_eq!(b.noise_std[j], b.noise_multiplier * b.sensitivities[j]);
            }
        }
    }

    #[test]
    fn the_same_bound_on_a_sparse_design_gives_the_same_fit() {
        let (d, support) = one_hot(300);
        let sparse = Dataset::new(SparseDesign::from_dense(d.x()), d.y().to_vec()).unwrap();
        let solver = params(5).row_support(Some(support)).build().unwrap();
        let (a, b) = (
            solver.fit_seeded(&d, 9).unwrap(),
            solver.fit_seeded(&sparse, 9).unwrap(),
        );
        assert_eq!(a.privacy().unwrap().ledger, b.privacy().unwrap().ledger);
        for (u, v) in a.coefficients().iter().zip(b.coefficients()) {
            assert!((u - v).abs() <= 1e-12 * (1.0 + u.abs()), "{u} vs {v}");
        }
    }

    #[test]
    fn uniform_order_and_malformed_bounds_are_refused_before_anything_is_charged() {
        let (d, _) = one_hot(100);
        let e = params(2)
            .coordinate_order(CoordinateOrder::Uniform)
            .row_support(Some(RowSupport::AtMost(4)))
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("Permutation"), "{e}");
        // A group naming a feature the data does not have.
        let e = params(2)
            .row_support(Some(RowSupport::one_hot(vec![vec![8, 9]])))
            .build()
            .unwrap()
            .fit_seeded(&d, 1)
            .unwrap_err();
        assert!(matches!(e, OptimError::Shape(_)), "{e}");
        // The right bound fits.
        assert!(params(2)
            .row_support(Some(RowSupport::AtMost(4)))
            .build()
            .unwrap()
            .fit_seeded(&d, 1)
            .is_ok());
    }

    /// Issue 24 item 5: a record with more non-zeros than a declared bound made the
    /// library's fit refuse with the record's index (a non-private output; only the CLI
    /// projected). The fit now projects it onto the bound itself: the result equals,
    /// bit for bit, the fit on data projected beforehand by `RowSupport::project`
    /// (dense and sparse), and the count is in the non-private diagnostics only.
    #[test]
    fn a_record_above_the_bound_is_projected_and_counted() {
        // Rows of the one-hot data have at most 4 non-zeros; record 7 gets a fifth and
        // a sixth (one numeric feature per group slot is already used).
        let (d, _) = one_hot(100);
        let p = d.n_features();
        let mut rows: Vec<f64> = (0..d.n_samples())
            .flat_map(|i| d.x().row(i).to_vec())
            .collect();
        let r = &mut rows[7 * p..8 * p];
        r[2] = 0.5;
        r[3] = 0.25;
        r[5] = -0.5;
        r[6] = 0.125;
        let nz = r.iter().filter(|v| **v != 0.0).count();
        assert!(nz >= 5, "record 7 has {nz} non-zeros");
        let raw = Dataset::new(
            DenseDesign::from_row_major(d.n_samples(), p, &rows).unwrap(),
            d.y().to_vec(),
        )
        .unwrap();
        let bound = RowSupport::AtMost(4);
        assert!(bound.validate(raw.x()).is_err());
        let mut projected_x = raw.x().clone();
        assert_eq!(bound.project(&mut projected_x).unwrap(), 1);
        let projected = Dataset::new(projected_x, raw.y().to_vec()).unwrap();
        let solver = params(3).row_support(Some(bound)).build().unwrap();
        let on_raw = solver.fit_seeded(&raw, 11).unwrap();
        let on_projected = solver.fit_seeded(&projected, 11).unwrap();
        let bits =
            |f: &Fitted| -> Vec<u64> { f.coefficients().iter().map(|v| v.to_bits()).collect() };
        assert_eq!(bits(&on_raw), bits(&on_projected));
        assert_eq!(
            on_raw.privacy().unwrap().ledger,
            on_projected.privacy().unwrap().ledger
        );
        assert_eq!(on_raw.diagnostics.support_projected, Some(1));
        assert_eq!(on_projected.diagnostics.support_projected, Some(0));
        // Sparse storage projects the same way.
        let sparse = Dataset::new(SparseDesign::from_dense(raw.x()), raw.y().to_vec()).unwrap();
        let on_sparse = solver.fit_seeded(&sparse, 11).unwrap();
        assert_eq!(on_sparse.diagnostics.support_projected, Some(1));
        for (u, v) in on_sparse.coefficients().iter().zip(on_raw.coefficients()) {
            assert!((u - v).abs() <= 1e-12 * (1.0 + u.abs()), "{u} vs {v}");
        }
        // Nothing about the projection is in the model (what may be published).
        let model = serde_json::to_string(&on_raw.model).unwrap();
        assert!(!model.contains("projected"), "{model}");
        // Without a bound nothing is counted.
        let plain = params(3).build().unwrap().fit_seeded(&raw, 11).unwrap();
        assert_eq!(plain.diagnostics.support_projected, None);
    }

    #[test]
    fn a_bound_as_large_as_p_changes_nothing() {
        let (d, _) = one_hot(200);
        let a = params(3).build().unwrap().fit_seeded(&d, 4).unwrap();
        let b = params(3)
            .row_support(Some(RowSupport::AtMost(9)))
            .build()
            .unwrap()
            .fit_seeded(&d, 4)
            .unwrap();
        assert_eq!(a.coefficients(), b.coefficients());
        assert_eq!(a.privacy().unwrap().ledger, b.privacy().unwrap().ledger);
    }
}

#[cfg(test)]
mod precision_tests {
    use super::*;
    use crate::Accounting;
    use dp_models::constants::Tagged;
    use dp_models::{DenseDesign, Design, Logistic, SparseDesign, Squared, L2};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn data(n: usize, p: usize) -> Dataset<DenseDesign> {
        let mut rng = ChaCha20Rng::seed_from_u64(17);
        let x: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.0..1.0)).collect();
        let y = (0..n)
            .map(|i| {
                if x[i * p] - 0.5 * x[i * p + 1] > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
    }

    fn params(p: usize, precision: Precision, threads: usize) -> DpCdParams<Logistic, L2> {
        DpCdParams::new(Logistic, L2::new(1e-3).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(10)
            .clip(1.0)
            .accounting(Accounting::Exact)
            .smoothness(Smoothness::Given(Tagged::public(vec![0.25 / 3.0; p])))
            .threads(threads)
            .precision(precision)
    }

    fn plan(f: &Fitted) -> DpCdPlan {
        match &f.privacy().unwrap().plan {
            SolverPlan::DpCd(p) => p.clone(),
            other => panic!("{other:?}"),
        }
    }

    /// The mixed-precision sweep draws the same noise and spends the same budget as the
    /// f64 sweep; the coefficients differ by the rounding only (far below the noise),
    /// on one thread and two; seeded fits repeat bit for bit.
    #[test]
    fn mixed_precision_follows_the_double_fit_with_the_same_guarantee() {
        let (n, p) = (3000, 6);
        let d = data(n, p);
        for threads in [1, 2] {
            let double = params(p, Precision::Double, threads).build().unwrap();
            let mixed = params(p, Precision::Mixed, threads).build().unwrap();
            let (fd, fm) = (
                double.fit_seeded(&d, 5).unwrap(),
                mixed.fit_seeded(&d, 5).unwrap(),
            );
            let (pd, pm) = (plan(&fd), plan(&fm));
            assert!(!pd.mixed_precision && pm.mixed_precision);
            assert_eq!(pd.noise_std, pm.noise_std);
            assert_eq!(pd.sensitivities, pm.sensitivities);
            assert_eq!(fd.privacy().unwrap().ledger, fm.privacy().unwrap().ledger);
            let (wd, wm) = (fd.coefficients(), fm.coefficients());
            let norm = wd.iter().map(|v| v * v).sum::<f64>().sqrt();
            let gap = wd
                .iter()
                .zip(wm)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(norm > 0.1, "the fit moved: {wd:?}");
            assert!(gap < 1e-3 * norm, "threads {threads}: {wd:?} vs {wm:?}");
            assert_ne!(wd, wm, "the mixed sweep did not run");
            let again = mixed.fit_seeded(&d, 5).unwrap();
            assert_eq!(again.coefficients(), wm);
            // The reported objective is the f64 one at the returned coefficients.
            let z = {
                let mut z = vec![0.0; n];
                d.x().matvec(wm, &mut z);
                z
            };
            let want = objective_from_predictor(&Logistic, &L2::new(1e-3).unwrap(), wm, &z, d.y());
            assert!((fm.diagnostics.objective - want).abs() <= 1e-12 * want.abs());
        }
    }

    /// `Auto` picks the mixed sweep for a dense logistic fit from `MIXED_MIN_ROWS`
    /// records under replace-one, and the f64 sweep otherwise; `Mixed` is refused where
    /// it does not apply, before anything is spent.
    #[test]
    fn auto_chooses_by_public_facts_and_mixed_is_refused_where_it_does_not_apply() {
        let p = 3;
        let auto = params(p, Precision::Auto, 1).passes(1).build().unwrap();
        let big = data(MIXED_MIN_ROWS, p);
        assert!(plan(&auto.fit_seeded(&big, 1).unwrap()).mixed_precision);
        let small = data(MIXED_MIN_ROWS - 1, p);
        assert!(!plan(&auto.fit_seeded(&small, 1).unwrap()).mixed_precision);
        let sparse = Dataset::new(SparseDesign::from_dense(big.x()), big.y().to_vec()).unwrap();
        assert!(!plan(&auto.fit_seeded(&sparse, 1).unwrap()).mixed_precision);
        let add_remove = params(p, Precision::Auto, 1)
            .passes(1)
            .adjacency(Adjacency::AddRemove)
            .public_n(MIXED_MIN_ROWS)
            .build()
            .unwrap();
        assert!(!plan(&add_remove.fit_seeded(&big, 1).unwrap()).mixed_precision);

        let mixed = params(p, Precision::Mixed, 1).build().unwrap();
        let err = mixed.fit_seeded(&sparse, 1).unwrap_err();
        assert!(err.to_string().contains("dense design"), "{err}");
        let err = params(p, Precision::Mixed, 1)
            .adjacency(Adjacency::AddRemove)
            .public_n(10)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("replace-one"), "{err}");
        let err = DpCdParams::new(Squared::half(), L2::new(1e-3).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(1)
            .clip(1.0)
            .precision(Precision::Mixed)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("squared loss has none"), "{err}");
    }
}
