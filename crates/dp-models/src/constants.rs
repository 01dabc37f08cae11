//! Smoothness and Lipschitz constants, each tagged with where it came from.
//!
//! For a linear model `F(w) = (1/n) sum_i phi(x_i^T w, y_i) + psi(w)` with
//! `c = sup phi''` (see [`Loss::curvature_bound`]):
//!
//! * per-sample coordinate smoothness `M_j^(i) = c x_ij^2`,
//! * dataset coordinate smoothness `M_j = (1/n) sum_i M_j^(i) = (c/n) ||X_{:,j}||^2`
//!   ([`coordinate_smoothness`]; the coordinate-wise form
//!   `|grad_j f(w + t e_j) - grad_j f(w)| <= M_j |t|` that coordinate descent needs and
//!   the DP-CD paper uses in practice; with correlated features it does not imply the
//!   paper's vector form of component smoothness, Mangold et al. 2022, Sec. 2),
//! * global smoothness `beta = (c/n) lambda_max(X^T X)` ([`global_smoothness`]),
//! * per-coordinate Lipschitz constants `L_j = B b_j` and the L2 Lipschitz constant
//!   `Lambda = B R` from a declared bound `B >= |phi'|` (needs a label bound and a loss
//!   whose derivative is bounded), declared feature bounds `|x_ij| <= b_j` and row-norm
//!   bound `||x_i||_2 <= R` ([`coordinate_lipschitz`], [`l2_lipschitz`]).
//!
//! Every value is a [`Tagged`] with a [`Provenance`]: a public bound (costs no privacy),
//! a privately estimated value (charged to a ledger), or a value computed from the
//! data without privacy. Private solvers call [`Tagged::require_private`], which
//! refuses the last kind unless the caller opted in.

use crate::design::Design;
use crate::error::{positive, ModelError, Result};
use crate::loss::Loss;
use dp_accounting::ledger::{Charge, Ledger};
use dp_accounting::mechanisms::{laplace_epsilon, Gaussian, Laplace};
use dp_accounting::{Epsilon, Norm, Sensitivity};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The pure epsilon a release already spent: finite and `>= 0`, checked where it is
/// created ([`SpentEpsilon::new`], and when read from JSON), so that nothing downstream
/// can sum a negative cost into a ledger (a bound declared at `-0.5` beside one at
/// `+0.5` would otherwise cancel and leave a guarantee that omits what was spent) or
/// carry an infinite one into an accountant.
///
/// ```
/// use dp_models::constants::SpentEpsilon;
/// assert_eq!(SpentEpsilon::new(0.5)?.get(), 0.5);
/// let e = SpentEpsilon::new(-0.5).unwrap_err().to_string();
/// assert!(e.contains("-0.5") && e.contains("finite and >= 0"), "{e}");
/// assert!(SpentEpsilon::new(f64::INFINITY).is_err());
/// # Ok::<(), dp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct SpentEpsilon(f64);

impl SpentEpsilon {
    /// `epsilon`, if finite and `>= 0`; otherwise an error naming the value.
    pub fn new(epsilon: f64) -> Result<Self> {
        crate::error::non_negative("provenance epsilon (privacy already spent)", epsilon).map(Self)
    }
    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for SpentEpsilon {
    type Error = ModelError;
    fn try_from(epsilon: f64) -> Result<Self> {
        Self::new(epsilon)
    }
}

impl From<SpentEpsilon> for f64 {
    fn from(e: SpentEpsilon) -> f64 {
        e.0
    }
}

/// The noise multiplier of a Gaussian release that produced a constant: finite and
/// `> 0`, checked where it is created ([`GaussianMultiplier::new`], and when read from
/// JSON). A zero, negative, NaN or infinite multiplier describes no Gaussian mechanism
/// (`z = 0` would be a release without noise, and `1/z` its GDP parameter), so a
/// provenance carrying one must not exist: anything that later composes or reports
/// the release from its provenance reads a valid multiplier.
///
/// ```
/// use dp_models::constants::GaussianMultiplier;
/// assert_eq!(GaussianMultiplier::new(2.5)?.get(), 2.5);
/// let e = GaussianMultiplier::new(0.0).unwrap_err().to_string();
/// assert!(e.contains("noise multiplier") && e.contains("finite and > 0"), "{e}");
/// assert!(GaussianMultiplier::new(f64::NAN).is_err());
/// # Ok::<(), dp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct GaussianMultiplier(f64);

impl GaussianMultiplier {
    /// `z`, if finite and `> 0`; otherwise an error naming the value.
    pub fn new(noise_multiplier: f64) -> Result<Self> {
        positive(
            "noise multiplier of a Gaussian provenance",
            noise_multiplier,
        )
        .map(Self)
    }
    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for GaussianMultiplier {
    type Error = ModelError;
    fn try_from(z: f64) -> Result<Self> {
        Self::new(z)
    }
}

impl From<GaussianMultiplier> for f64 {
    fn from(z: GaussianMultiplier) -> f64 {
        z.0
    }
}

/// Where a constant came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Provenance {
    /// Derived only from bounds the caller declared as public knowledge (no privacy cost).
    PublicBound,
    /// Released by a differentially private mechanism at the given (pure) epsilon, which
    /// was charged to a ledger. Build it with [`Provenance::privately_estimated`].
    PrivatelyEstimated {
        /// The privacy budget spent on the estimate (finite, `>= 0`).
        epsilon: SpentEpsilon,
    },
    /// Released by a Gaussian mechanism of the given noise multiplier (standard
    /// deviation over L2 sensitivity), charged to a ledger as one Gaussian release
    /// ([`private_coordinate_smoothness_gaussian`]). Its cost is not a pure epsilon:
    /// solvers that charge constants estimated *before* the fit as pure-DP releases
    /// refuse it; estimate it inside the fit instead (dp-optim's
    /// `Smoothness::PrivateGaussian`), where the Gaussian charge joins the fit's ledger.
    /// Build it with [`Provenance::privately_estimated_gaussian`].
    PrivatelyEstimatedGaussian {
        /// Noise multiplier `z` of the release (finite, `> 0`).
        noise_multiplier: GaussianMultiplier,
    },
    /// Computed from the private data without any privacy protection.
    DataNonPrivate,
}

impl Provenance {
    /// [`Provenance::PrivatelyEstimated`] at `epsilon`, refused unless finite and `>= 0`.
    pub fn privately_estimated(epsilon: f64) -> Result<Self> {
        Ok(Self::PrivatelyEstimated {
            epsilon: SpentEpsilon::new(epsilon)?,
        })
    }
    /// [`Provenance::PrivatelyEstimatedGaussian`] of multiplier `noise_multiplier`,
    /// refused unless finite and `> 0`.
    pub fn privately_estimated_gaussian(noise_multiplier: f64) -> Result<Self> {
        Ok(Self::PrivatelyEstimatedGaussian {
            noise_multiplier: GaussianMultiplier::new(noise_multiplier)?,
        })
    }
}

/// A value together with its [`Provenance`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tagged<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub provenance: Provenance,
}

impl<T> Tagged<T> {
    /// Tags `value` as derived from public bounds only.
    pub fn public(value: T) -> Self {
        Self {
            value,
            provenance: Provenance::PublicBound,
        }
    }
    /// Tags `value` as released by a pure `epsilon`-DP mechanism (charged elsewhere):
    /// `epsilon` must be finite and `>= 0` (an error naming it otherwise).
    pub fn privately_estimated(value: T, epsilon: f64) -> Result<Self> {
        Ok(Self {
            value,
            provenance: Provenance::privately_estimated(epsilon)?,
        })
    }
    /// Tags `value` as computed from the data without privacy.
    pub fn data_non_private(value: T) -> Self {
        Self {
            value,
            provenance: Provenance::DataNonPrivate,
        }
    }
    /// True unless the value was computed from the data without privacy.
    pub fn is_private(&self) -> bool {
        !matches!(self.provenance, Provenance::DataNonPrivate)
    }
    /// The value, for use inside a private solver.
    ///
    /// Refuses a [`Provenance::DataNonPrivate`] value with [`ModelError::NonPrivateConstant`]
    /// unless `allow_non_private` is true (the caller accepts, in code, that the constant
    /// leaks information about the data that no privacy guarantee covers; the DP-CD
    /// paper's own experiments do this for the balanced problems).
    pub fn require_private(self, allow_non_private: bool) -> Result<T> {
        if self.is_private() || allow_non_private {
            Ok(self.value)
        } else {
            Err(ModelError::NonPrivateConstant(
                "the constant was computed from the data without privacy; estimate it \
                 privately (private_coordinate_smoothness), derive it from public bounds, \
                 or opt in explicitly, e.g. `.allow_non_private_constants(true)` on a \
                 dp-optim solver's builder (the guarantee then does not cover it)"
                    .into(),
            ))
        }
    }
    /// Applies `f` to the value, keeping the provenance.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Tagged<U> {
        Tagged {
            value: f(self.value),
            provenance: self.provenance,
        }
    }
}

/// The curvature bound `c` of a smooth loss, or an error naming the loss.
pub(crate) fn curvature_of<L: Loss + ?Sized>(loss: &L) -> Result<f64> {
    loss.curvature_bound().ok_or_else(|| {
        ModelError::Unsupported(format!(
            "the {} loss is not smooth: it has no smoothness constant",
            loss.name()
        ))
    })
}

/// Coordinate-wise smoothness constants `M_j = (c/n) sum_i x_ij^2` of the average loss,
/// tagged [`Provenance::DataNonPrivate`].
///
/// Fails for a non-smooth loss. A column of zeros gives `M_j = 0` (the coordinate does
/// not influence the loss; solvers must skip it or use a floor).
pub fn coordinate_smoothness<L: Loss + ?Sized, D: Design>(
    loss: &L,
    x: &D,
) -> Result<Tagged<Vec<f64>>> {
    let c = curvature_of(loss)?;
    let inv_n = 1.0 / x.n_samples() as f64;
    let m = (0..x.n_features())
        .map(|j| c * inv_n * x.col_sq_norm(j))
        .collect();
    Ok(Tagged::data_non_private(m))
}

/// Global smoothness `beta = (c/n) lambda_max(X^T X)` of the average loss, tagged
/// [`Provenance::DataNonPrivate`].
///
/// `lambda_max` is computed by power iteration on `X^T X` (two matrix-vector products
/// per iteration, never forming `X^T X`) from a fixed deterministic start vector with
/// positive entries, until the residual `||X^T X v - theta v||` is below `1e-9 theta` or
/// the Rayleigh quotient (non-decreasing for a PSD matrix) changes by less than `1e-13`
/// relative (at most 10,000 iterations). The Rayleigh quotient never exceeds `lambda_max`, so the
/// result is exact up to that tolerance when converged; to keep it a valid *upper* bound
/// on the curvature the returned value is the Rayleigh quotient plus the final residual
/// norm `||X^T X v - theta v||` (an eigenvalue lies within that distance of theta, and
/// after convergence it is the top one), clamped to the trace bound
/// `sum_j ||X_{:,j}||^2 >= lambda_max`.
pub fn global_smoothness<L: Loss + ?Sized, D: Design>(loss: &L, x: &D) -> Result<Tagged<f64>> {
    let c = curvature_of(loss)?;
    let lmax = lambda_max_gram(x);
    Ok(Tagged::data_non_private(c * lmax / x.n_samples() as f64))
}

/// Upper estimate of `lambda_max(X^T X)` by power iteration (see [`global_smoothness`]).
pub fn lambda_max_gram<D: Design>(x: &D) -> f64 {
    lambda_max_weighted_gram(x, None)
}

/// [`lambda_max_gram`] of `X^T S X` with `S = diag(weights)` (non-negative row
/// weights; `None`: all 1). A row of weight 0 contributes exactly nothing, even when
/// its products overflow.
fn lambda_max_weighted_gram<D: Design>(x: &D, weights: Option<&[f64]>) -> f64 {
    let (n, p) = (x.n_samples(), x.n_features());
    let trace: f64 = match weights {
        None => (0..p).map(|j| x.col_sq_norm(j)).sum(),
        // A zero weight drops the row even when its squared norm overflows (0 * inf
        // would be NaN).
        Some(s) => (0..n)
            .map(|i| {
                if s[i] == 0.0 {
                    0.0
                } else {
                    s[i] * x.row_sq_norm(i)
                }
            })
            .sum(),
    };
    if trace == 0.0 {
        return 0.0;
    }
    // Deterministic start with positive, non-constant entries.
    let mut v: Vec<f64> = (0..p)
        .map(|j| 1.0 + 0.5 * ((j as f64 + 1.0) * 0.618_033_988_749_895).fract())
        .collect();
    normalize(&mut v);
    let mut xv = vec![0.0; n];
    let mut av = vec![0.0; p];
    let mut theta = 0.0;
    let mut residual = f64::INFINITY;
    for _ in 0..10_000 {
        x.matvec(&v, &mut xv);
        if let Some(s) = weights {
            // `X v` of a row with entries near f64::MAX can overflow; a zero weight
            // must still give 0, not NaN.
            xv.iter_mut()
                .zip(s)
                .for_each(|(a, &w)| *a = if w == 0.0 { 0.0 } else { *a * w });
        }
        x.matvec_t(&xv, &mut av);
        let new_theta: f64 = v.iter().zip(&av).map(|(a, b)| a * b).sum();
        residual = v
            .iter()
            .zip(&av)
            .map(|(&vi, &ai)| (ai - new_theta * vi).powi(2))
            .sum::<f64>()
            .sqrt();
        let done =
            residual <= 1e-9 * new_theta || (new_theta - theta).abs() <= 1e-13 * new_theta.abs();
        theta = new_theta;
        if done {
            break;
        }
        v.copy_from_slice(&av);
        if normalize(&mut v) == 0.0 {
            break;
        }
    }
    (theta + residual).min(trace)
}

fn normalize(v: &mut [f64]) -> f64 {
    let s = v.iter().map(|a| a * a).sum::<f64>().sqrt();
    if s > 0.0 {
        v.iter_mut().for_each(|a| *a /= s);
    }
    s
}

/// Per-sample coordinate smoothness `M_j^(i) = c x_ij^2`, summed after clipping each
/// term at `bound` (`min(M_j^(i), bound)`): returns `sum_i min(c x_ij^2, bound)`.
///
/// Samples with `x_ij = 0` contribute 0 (so sparse designs cost O(nnz of the column)).
pub fn clipped_smoothness_sum<D: Design>(curvature: f64, x: &D, j: usize, bound: f64) -> f64 {
    let mut s = 0.0;
    x.for_each_in_col(j, |_, v| s += (curvature * v * v).min(bound));
    s
}

/// Per-coordinate Lipschitz constants `L_j = B b_j` of the average loss, from declared
/// public bounds `|x_ij| <= b_j` (`feature_bounds`) and `|y_i| <= label_bound`, where
/// `B = loss.derivative_bound(label_bound)` bounds `|phi'|`. Tagged
/// [`Provenance::PublicBound`].
///
/// Then `|grad_j phi(x_i^T w, y_i)| = |phi'| |x_ij| <= L_j` for every `w`, so the
/// replace-one sensitivity of the j-th coordinate gradient of the average loss is
/// `2 L_j / n` (DP-CD Lemma A.2). Fails for losses with unbounded derivative
/// (squared, squared hinge): clip their per-sample gradients instead.
pub fn coordinate_lipschitz<L: Loss + ?Sized>(
    loss: &L,
    feature_bounds: &[f64],
    label_bound: f64,
) -> Result<Tagged<Vec<f64>>> {
    let b = derivative_bound_of(loss, label_bound)?;
    if feature_bounds.is_empty() {
        return Err(ModelError::Empty("no feature bounds given".into()));
    }
    let mut out = Vec::with_capacity(feature_bounds.len());
    for &bj in feature_bounds {
        crate::error::non_negative("feature bound", bj)?;
        out.push(b * bj);
    }
    Ok(Tagged::public(out))
}

/// L2 Lipschitz constant `Lambda = B R` of the average loss from a declared public bound
/// `||x_i||_2 <= R` (`row_norm_bound`) and `|y_i| <= label_bound`. Tagged
/// [`Provenance::PublicBound`]. With only per-feature bounds `b_j`, pass
/// `R = sqrt(sum_j b_j^2)` ([`row_norm_from_feature_bounds`]).
pub fn l2_lipschitz<L: Loss + ?Sized>(
    loss: &L,
    row_norm_bound: f64,
    label_bound: f64,
) -> Result<Tagged<f64>> {
    let b = derivative_bound_of(loss, label_bound)?;
    crate::error::non_negative("row norm bound", row_norm_bound)?;
    Ok(Tagged::public(b * row_norm_bound))
}

/// `sqrt(sum_j b_j^2)`: a bound on `||x_i||_2` implied by per-feature bounds `|x_ij| <= b_j`.
pub fn row_norm_from_feature_bounds(feature_bounds: &[f64]) -> Result<f64> {
    let mut s = 0.0;
    for &b in feature_bounds {
        crate::error::non_negative("feature bound", b)?;
        s += b * b;
    }
    Ok(s.sqrt())
}

fn derivative_bound_of<L: Loss + ?Sized>(loss: &L, label_bound: f64) -> Result<f64> {
    crate::error::non_negative("label bound", label_bound)?;
    loss.derivative_bound(label_bound).ok_or_else(|| {
        ModelError::Unsupported(format!(
            "the {} loss has no bound on its derivative, so it has no Lipschitz constant; \
             clip per-sample gradients instead",
            loss.name()
        ))
    })
}

/// `max_i |x_ij|` per feature, computed from the data without privacy (for harnesses that
/// follow the papers in treating such bounds as public prior knowledge, e.g. DP-CD's
/// "twice the maximal absolute value"). Tagged [`Provenance::DataNonPrivate`].
pub fn feature_max_abs<D: Design>(x: &D) -> Tagged<Vec<f64>> {
    Tagged::data_non_private((0..x.n_features()).map(|j| x.col_max_abs(j)).collect())
}

/// Checks a vector of positive constants (e.g. step-size denominators `M_j`).
pub fn check_positive(name: &'static str, values: &[f64]) -> Result<()> {
    for &v in values {
        positive(name, v)?;
    }
    Ok(())
}

/// Options of [`private_coordinate_smoothness_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrivateSmoothnessOptions {
    /// Estimates below `floor_fraction * b_j` (with `b_j = c B_j^2` the per-sample bound)
    /// are raised to it, so that steps `1/M_j` stay finite (default `1e-12`; the paper does
    /// not say how to handle non-positive estimates, so this floor is our choice). Must be
    /// finite and > 0.
    pub floor_fraction: f64,
}

impl Default for PrivateSmoothnessOptions {
    fn default() -> Self {
        Self {
            floor_fraction: 1e-12,
        }
    }
}

/// What [`private_coordinate_smoothness_with`] released, with its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrivateSmoothness {
    /// The estimates `M_j^priv`, tagged [`Provenance::PrivatelyEstimated`] with the total
    /// epsilon charged.
    pub estimates: Tagged<Vec<f64>>,
    /// Per-sample bounds `b_j = c B_j^2` the constants were clipped to.
    pub per_sample_bounds: Vec<f64>,
    /// Laplace scales `2 b_j p / (n eps')`.
    pub laplace_scales: Vec<f64>,
    /// Pure epsilon charged per coordinate (rounded up; `p` of them were charged).
    pub epsilon_per_coordinate: f64,
    /// How many estimates were raised to the floor (the noise made them too small).
    pub clamped: usize,
}

/// Differentially private coordinate-wise smoothness constants (DP-CD, Sec. 5.2 and
/// App. F, eq. 126), with default options; see [`private_coordinate_smoothness_with`].
pub fn private_coordinate_smoothness<L, D, R>(
    loss: &L,
    x: &D,
    feature_bounds: &[f64],
    epsilon: Epsilon,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<Tagged<Vec<f64>>>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    Ok(private_coordinate_smoothness_with(
        loss,
        x,
        feature_bounds,
        epsilon,
        &PrivateSmoothnessOptions::default(),
        rng,
        ledger,
    )?
    .estimates)
}

/// Differentially private coordinate-wise smoothness constants:
///
/// ```text
/// M_j^priv = max( (1/n) sum_i min(c x_ij^2, b_j) + Lap(2 b_j p / (n eps')),  floor_fraction * b_j ),
/// b_j = c B_j^2,
/// ```
///
/// where `c` is the loss's curvature bound, `B_j` the declared public bound
/// `|x_ij| <= B_j` (`feature_bounds`; the DP-CD experiments use twice the maximal absolute
/// value of each feature, which they treat as public knowledge), `p` the number of
/// features and `eps' = epsilon`. The noise is drawn with
/// [`dp_accounting::mechanisms::Laplace`] and `p` pure-DP releases of `eps'/p` each are
/// charged to `ledger` *before* any noise is drawn (if the ledger refuses, nothing is
/// released and the error is returned).
///
/// # Privacy
///
/// *Neighbouring relation*: replace-one (`n` fixed), as in DP-CD.
/// *Precondition*: none on the data. `B_j` is a public constant chosen without looking
/// at the data (or charged separately); clipping enforces it, so samples that violate it
/// only change the estimate's accuracy, not the guarantee.
/// *Claim*: the released vector is `eps'`-DP.
/// *Proof*: the per-sample term `t_ij = min(c x_ij^2, b_j)` lies in `[0, b_j]`, so
/// replacing one sample changes the mean `(1/n) sum_i t_ij` by at most `b_j / n`; the
/// paper's eq. (126) takes the sensitivity as `2 b_j / n`, which is an upper bound, and
/// we follow it (Mangold et al. 2022, Appendix F). Laplace noise of scale `2 b_j p / (n eps')` on a query
/// of sensitivity `2 b_j / n` is `(eps'/p)`-DP (Dwork & Roth 2014, Thm 3.6), and basic
/// composition over the `p` coordinates (Thm 3.16) gives `eps'`. The floor is
/// post-processing with a public constant. The sampler is a floating-point idealisation
/// of Laplace noise (Mironov 2012); see `dp_accounting::mechanisms`.
/// Since the true sensitivity is `b_j / n`, the release is in fact `eps'/2`-DP; the
/// ledger is charged the paper's `eps'` (conservative, never under-charged).
pub fn private_coordinate_smoothness_with<L, D, R>(
    loss: &L,
    x: &D,
    feature_bounds: &[f64],
    epsilon: Epsilon,
    opts: &PrivateSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<PrivateSmoothness>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let c = curvature_of(loss)?;
    let (n, p) = (x.n_samples(), x.n_features());
    if feature_bounds.len() != p {
        return Err(ModelError::Shape(format!(
            "{} feature bounds given for a design with {p} features",
            feature_bounds.len()
        )));
    }
    positive("floor_fraction", opts.floor_fraction)?;
    let eps = epsilon.get();
    let mut per_sample_bounds = Vec::with_capacity(p);
    let mut laplace_scales = Vec::with_capacity(p);
    let mut eps_j_max = 0.0f64;
    for &bj in feature_bounds {
        positive("feature bound", bj)?;
        let b = positive("per-sample smoothness bound c B_j^2", c * bj * bj)?;
        let sens = 2.0 * b / n as f64;
        let scale = positive("Laplace scale", sens * p as f64 / eps)?;
        let sensitivity = Sensitivity::new(sens, Norm::L1)?;
        eps_j_max = eps_j_max.max(laplace_epsilon(sensitivity, scale)?);
        per_sample_bounds.push(b);
        laplace_scales.push(scale);
    }
    // Charge first: if the budget refuses, nothing is computed from the data.
    ledger.charge(Charge::PureDp {
        epsilon: eps_j_max,
        count: p as u64,
        label: "private coordinate smoothness M_j (DP-CD eq. 126)".into(),
    })?;
    let mut estimates = Vec::with_capacity(p);
    let mut clamped = 0;
    for j in 0..p {
        let (b, scale) = (per_sample_bounds[j], laplace_scales[j]);
        let mean = clipped_smoothness_sum(c, x, j, b) / n as f64;
        let noisy = mean + Laplace::new(scale)?.sample(rng);
        let floor = opts.floor_fraction * b;
        // A NaN (impossible with finite inputs) would also be floored.
        if noisy.is_nan() || noisy < floor {
            clamped += 1;
            estimates.push(floor);
        } else {
            estimates.push(noisy);
        }
    }
    let total = eps_j_max * p as f64;
    Ok(PrivateSmoothness {
        estimates: Tagged {
            value: estimates,
            provenance: Provenance::privately_estimated(total)?,
        },
        per_sample_bounds,
        laplace_scales,
        epsilon_per_coordinate: eps_j_max,
        clamped,
    })
}

/// Differentially private global smoothness `beta = (c/n) lambda_max(X^T X)` from a
/// public row-norm bound `||x_i||_2 <= R`, for DP-SGD's step `gamma / beta`:
///
/// ```text
/// s_i  = min(1, R^2 / ||x_i||^2)                       (row clipping to norm R)
/// beta = clamp( (c/n) lambda_max(X^T S X) + Lap(c R^2 / (n eps)) + k c R^2 / (n eps),
///               f,  c R^2 )
/// f    = noise_floor(c R^2, floor_fraction, k, c R^2 / (n eps))
/// ```
///
/// with `k = max(0, ln(1 / (2 beta_fail)))` for `failure_probability = Some(beta_fail)`
/// (else 0). One pure-DP release of `eps`, charged to `ledger` before the data are read.
/// It beats the public bound `c R^2` when the rows' second-moment matrix is far from
/// rank one along a direction of norm `R` (e.g. raw features of very different scales
/// clipped to a crude `R`); on rows normalised to norm `R` with a dominant direction it
/// cannot do much better than `c R^2`.
///
/// # Privacy
/// *Neighbouring relation:* replace-one (`n` public). *Precondition:* `R` public.
/// *Claim:* `eps`-DP. *Proof:* `A = (1/n) sum_i s_i x_i x_i^T`; replacing row `i` by `i'`
/// changes `A` by `(a a^T - b b^T)/n` with `||a||, ||b|| <= R` after clipping, a
/// difference of two PSD matrices of operator norm `<= R^2`, whose eigenvalues lie in
/// `[-R^2, R^2]`; by Weyl's inequality `lambda_max(A)` moves by at most `R^2 / n`, so
/// `c lambda_max(A)` has sensitivity `c R^2 / n` and the Laplace mechanism of that
/// scale over `eps` is `eps`-DP (Dwork & Roth 2014, Thm 3.6). The shift and the clamp
/// are post-processing. A row whose squared norm overflows `f64` gets weight
/// `R^2 / inf = 0` and contributes nothing (a PSD term of norm 0 <= R^2, so the bound
/// above holds; it used to give NaN and the ceiling, an event of probability 1 on one
/// side). `lambda_max` is computed by power iteration to relative
/// tolerance `1e-9` as an upper estimate (see [`global_smoothness`]); the guarantee is
/// for the exact value, the same floating-point idealisation as the sampler's.
/// *Upper bound:* as for [`private_coordinate_smoothness_bounded`], the shifted value is
/// at least `(c/n) lambda_max(X^T S X)` with probability `1 - e^{-k}/2 = 1 - beta_fail`,
/// and the clamp keeps it (the ceiling `c R^2 >= lambda_max` always); that is the true
/// `beta` when the rows satisfy the bound.
pub fn private_global_smoothness<L, D, R>(
    loss: &L,
    x: &D,
    row_norm_bound: f64,
    epsilon: Epsilon,
    opts: &BoundedSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<Tagged<f64>>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let c = curvature_of(loss)?;
    let n = x.n_samples();
    if n == 0 || x.n_features() == 0 {
        return Err(ModelError::Empty(
            "cannot estimate the smoothness of an empty design".into(),
        ));
    }
    if opts.neighbours != Neighbours::ReplaceOne {
        return Err(ModelError::Unsupported(
            "the private global smoothness beta is analysed under replace-one neighbours \
             only; under add/remove give a public beta"
                .into(),
        ));
    }
    let r = positive("row norm bound", row_norm_bound)?;
    let r2 = positive("squared row norm bound", r * r)?;
    if !(opts.floor_fraction.is_finite() && opts.floor_fraction > 0.0 && opts.floor_fraction <= 1.0)
    {
        return Err(ModelError::InvalidParameter {
            name: "floor_fraction",
            value: opts.floor_fraction,
            expected: "the floor is a fraction of the ceiling in (0, 1]",
        });
    }
    let shift = match opts.failure_probability {
        None => 0.0,
        Some(b) if b.is_finite() && b > 0.0 && b < 1.0 => (1.0 / (2.0 * b)).ln().max(0.0),
        Some(b) => {
            return Err(ModelError::InvalidParameter {
                name: "failure_probability",
                value: b,
                expected:
                    "the probability that the estimate is not an upper bound must be in (0, 1)",
            })
        }
    };
    let ceiling = positive("smoothness ceiling c R^2", c * r2)?;
    let sens = ceiling / n as f64;
    let scale = positive("Laplace scale", sens / epsilon.get())?;
    let charged = laplace_epsilon(Sensitivity::new(sens, Norm::L1)?, scale)?;
    ledger.charge(Charge::PureDp {
        epsilon: charged,
        count: 1,
        label: "private global smoothness beta (lambda_max of clipped rows)".into(),
    })?;
    let weights: Vec<f64> = (0..n)
        .map(|i| {
            let s = x.row_sq_norm(i);
            if s > r2 {
                r2 / s
            } else {
                1.0
            }
        })
        .collect();
    let lmax = lambda_max_weighted_gram(x, Some(&weights));
    let noisy = c * lmax / n as f64 + Laplace::new(scale)?.sample(rng) + shift * scale;
    let floor = noise_floor(ceiling, opts.floor_fraction, shift, scale);
    let beta = if noisy.is_nan() || noisy > ceiling {
        ceiling
    } else {
        noisy.max(floor)
    };
    Ok(Tagged {
        value: beta,
        provenance: Provenance::privately_estimated(charged)?,
    })
}

/// Public bounds a caller can state about each row `x_i` for
/// [`private_coordinate_smoothness_bounded`]: per-feature bounds `|x_ij| <= b_j`, a
/// row-norm bound `||x_i||_2 <= R`, or both. At least one must be given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmoothnessBounds<'a> {
    /// `b_j >= |x_ij|`, one per feature (each finite and > 0).
    pub feature_bounds: Option<&'a [f64]>,
    /// `R >= ||x_i||_2` (finite and > 0).
    pub row_norm_bound: Option<f64>,
}

/// The neighbouring relation a private estimate of the constants is analysed under,
/// and the record count its mean is normalised by.
///
/// * [`Neighbours::ReplaceOne`] (the default): datasets of the same size `n` differing
///   in one record; `n` is public under this relation and the mean is `(1/n) sum_i`.
/// * [`Neighbours::AddRemove`]: one dataset is the other with one record added or
///   removed. The true size is then private, so the mean is normalised by a **stated
///   public count** `public_n` (the convention of Opacus, which divides by the expected
///   batch size `q N`), never by the data's own size. With a public normaliser one
///   record moves the sum by one row's term, half the replace-one sensitivity; with the
///   true size of each neighbour (`S/n` against `(S + u)/(n + 1)`) the difference can
///   be `2 ||u|| / (n + 1)` and nothing would be gained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Neighbours {
    /// Replace one record; `n` (the design's size) public.
    #[default]
    ReplaceOne,
    /// Add or remove one record; the mean is normalised by `public_n`.
    AddRemove {
        /// The record count stated as public (> 0), used instead of the data's size.
        public_n: usize,
    },
}

impl Neighbours {
    /// The normaliser of the mean: the design's `n` under replace-one, `public_n`
    /// under add/remove (an error if it is 0).
    pub fn normaliser(self, n: usize) -> Result<usize> {
        match self {
            Neighbours::ReplaceOne => Ok(n),
            Neighbours::AddRemove { public_n: 0 } => Err(ModelError::InvalidParameter {
                name: "public_n",
                value: 0.0,
                expected: "the public record count of an add/remove estimate must be > 0",
            }),
            Neighbours::AddRemove { public_n } => Ok(public_n),
        }
    }
}

/// Options of [`private_coordinate_smoothness_bounded`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundedSmoothnessOptions {
    /// Public floor, as a fraction of each coordinate's ceiling `c cap_j` (default
    /// `1e-6`; finite, in (0, 1]). The floor applied is the larger of this and the
    /// release's noise level ([`noise_floor`]), so it matters only when the noise is
    /// tiny against the ceiling.
    pub floor_fraction: f64,
    /// `Some(beta)`: shift every estimate up by `k` Laplace scales, with
    /// `k = max(0, ln(p / (2 beta)))`, so that with probability at least `1 - beta`
    /// (over the noise) every released `M_j` is an upper bound on the clipped mean it
    /// estimates (see the function's *Upper bound* section). `None`: the unbiased
    /// estimate (then clamped). Default `Some(0.05)`. `beta` must be in (0, 1).
    pub failure_probability: Option<f64>,
    /// The neighbouring relation of the release (default [`Neighbours::ReplaceOne`]);
    /// under [`Neighbours::AddRemove`] the mean is normalised by the stated `public_n`
    /// and the sensitivity is the add/remove one (see each function's *Privacy*).
    /// [`private_global_smoothness`] supports replace-one only.
    pub neighbours: Neighbours,
}

impl Default for BoundedSmoothnessOptions {
    fn default() -> Self {
        Self {
            floor_fraction: 1e-6,
            failure_probability: Some(0.05),
            neighbours: Neighbours::ReplaceOne,
        }
    }
}

/// What [`private_coordinate_smoothness_bounded`] released, with its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundedSmoothness {
    /// The post-processed estimates, tagged [`Provenance::PrivatelyEstimated`] with the
    /// epsilon charged.
    pub estimates: Tagged<Vec<f64>>,
    /// Public ceilings `c cap_j`, `cap_j = min(b_j^2, R^2)` (missing bounds omitted).
    pub ceilings: Vec<f64>,
    /// Laplace scale of each coordinate's noise, `c cap_j * Delta / eps`.
    pub laplace_scales: Vec<f64>,
    /// `Delta`: the L1 sensitivity of the normalised query `(1/n) sum_i u_i`.
    pub normalised_sensitivity: f64,
    /// Upward shift applied, in Laplace scales (`k`; 0 without `failure_probability`).
    pub shift_in_scales: f64,
    /// Pure epsilon charged (one release).
    pub epsilon: f64,
    /// How many estimates were raised to the floor.
    pub floored: usize,
    /// How many estimates were lowered to the ceiling.
    pub ceiled: usize,
}

/// `max { sum_j u_j : u in [0, 1]^p, sum_j u_j cap_j <= r2 }`: the fractional knapsack,
/// solved exactly by taking the cheapest coordinates first (`r2 = inf`: `p`).
fn knapsack_units(caps: &[f64], r2: f64) -> f64 {
    if !r2.is_finite() {
        return caps.len() as f64;
    }
    let mut sorted = caps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (mut left, mut units) = (r2, 0.0);
    for cap in sorted {
        if cap <= left {
            left -= cap;
            units += 1.0;
        } else {
            units += left / cap;
            break;
        }
    }
    units
}

/// Differentially private coordinate-wise smoothness constants from public row bounds,
/// all `p` at once with one Laplace release whose noise does not grow with `p` when a
/// row-norm bound is known:
///
/// ```text
/// cap_j = min(b_j^2, R^2)                  (a missing bound is omitted; R alone: cap_j = R^2)
/// s_i   = min(1, R^2 / ||x_i||^2)          (row clipping to norm R; 1 without R)
/// u_ij  = min(c x_ij^2 s_i, c cap_j) / (c cap_j)   in [0, 1]
/// y_j   = (1/n) sum_i u_ij + Lap(Delta / eps)
/// Delta = min(2 K, p) / n,   K = max { sum_j u_j : u in [0,1]^p, sum_j u_j cap_j <= R^2 }
///                           (add/remove, public count N: (1/N) sum_i, Delta = min(K, p) / N)
/// M_j   = clamp(c cap_j y_j + k c cap_j Delta / eps,  f_j,  c cap_j)
/// f_j   = noise_floor(c cap_j, floor_fraction, k, c cap_j Delta / eps)
///       = min(c cap_j, max(floor_fraction c cap_j, max(k, 1) c cap_j Delta / eps))
/// ```
///
/// with `k = max(0, ln(p / (2 beta)))` when `failure_probability = Some(beta)`, else 0.
/// With only a row-norm bound (every `cap_j = R^2`) `K = 1` and each coordinate's
/// noise has scale `2 c R^2 / (n eps)` for any `p`; with only per-feature bounds
/// `K = p` and the scale is `c b_j^2 p / (n eps)`, half the per-coordinate scale of the
/// DP-CD paper's eq. (126) ([`private_coordinate_smoothness_with`]). One pure-DP release
/// of `eps` is charged to `ledger` *before* anything is computed from the data.
///
/// # Privacy
///
/// *Neighbouring relation*: replace-one (`n` fixed and public), as in DP-CD, by
/// default; add/remove with `opts.neighbours = Neighbours::AddRemove { public_n }`
/// (see the last paragraph).
/// *Precondition*: none on the data; the bounds are public (chosen without looking at
/// the data, or charged separately). Row clipping (`s_i`) and the per-coordinate cap
/// enforce them, so rows that violate them change the estimate's accuracy, not the
/// guarantee.
/// *Claim*: the released vector `(M_j)` is `eps`-DP.
/// *Proof*: for any row, `u_i = (u_ij)_j` lies in `U = { u in [0,1]^p : sum_j u_j cap_j
/// <= R^2 }`, because `c cap_j u_ij <= c x_ij^2 s_i` and `sum_j x_ij^2 s_i =
/// min(||x_i||^2, R^2)`. Replacing row `i` by `i'` moves `y = (1/n) sum_i u_i` by
/// `(u_i - u_i') / n` with `||u_i - u_i'||_1 <= min(||u_i||_1 + ||u_i'||_1, p) <=
/// min(2 K, p)` (entries in `[0, 1]` are non-negative and differ by at most 1), and
/// `K` is the maximum of `||u||_1` over `U` (a linear program whose optimum the greedy
/// fill by increasing `cap_j` attains). So `y` has L1 sensitivity `Delta`, and adding
/// i.i.d. `Lap(Delta / eps)` noise to every coordinate is `eps`-DP (Dwork & Roth 2014,
/// Thm 3.6). `M_j` is a coordinate-wise function of the noisy `y` and public constants:
/// post-processing (Prop. 2.1). The charged epsilon is the Laplace privacy map of that
/// scale and sensitivity, rounded up. The sampler is a floating-point idealisation of
/// Laplace noise (Mironov 2012); see `dp_accounting::mechanisms`.
///
/// *Add/remove* ([`Neighbours::AddRemove`]): the mean is `y = (1/N) sum_i u_i` with the
/// stated public `N` (never the data's size), and the sensitivity is
/// `Delta = min(K, p) / N`. *Proof*: adding or removing row `i` moves `y` by `u_i / N`,
/// and `||u_i||_1 <= min(K, p)` (`u_i` is in `U`, and has `p` entries in `[0, 1]`).
/// The rest of the argument is unchanged. With a row-norm bound alone (`K = 1`) this is
/// half the replace-one `2 / n`; with per-feature bounds alone (`K >= p`) both are
/// `p / n`. The estimate is then of `(N_true / N) m_j`, which is `m_j` when the stated
/// count is the true one.
///
/// *Upper bound* (what the step sizes `1/M_j` need): let `m_j = (1/n) sum_i min(c x_ij^2
/// s_i, c cap_j)` be the clipped mean (equal to the true `M_j = (c/n) sum_i x_ij^2`
/// when the rows satisfy the bounds). Before clamping the estimate is `m_j + c cap_j
/// (Z_j + k) Delta / eps` with `Z_j` standard Laplace, so `P(estimate < m_j) = P(Z_j <
/// -k) = e^{-k} / 2`, and by the union bound every coordinate is an upper bound with
/// probability at least `1 - p e^{-k} / 2 = 1 - beta`. Clamping keeps it: raising an upper
/// bound to the floor keeps it one, and the ceiling `c cap_j >= m_j` always. Without the
/// shift the estimate is unbiased before clamping, and below `m_j` half the time.
pub fn private_coordinate_smoothness_bounded<L, D, R>(
    loss: &L,
    x: &D,
    bounds: SmoothnessBounds<'_>,
    epsilon: Epsilon,
    opts: &BoundedSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<BoundedSmoothness>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let c = curvature_of(loss)?;
    let (n, p) = (x.n_samples(), x.n_features());
    if n == 0 || p == 0 {
        return Err(ModelError::Empty(format!(
            "cannot estimate smoothness constants of a {n} x {p} design"
        )));
    }
    if !(opts.floor_fraction.is_finite() && opts.floor_fraction > 0.0 && opts.floor_fraction <= 1.0)
    {
        return Err(ModelError::InvalidParameter {
            name: "floor_fraction",
            value: opts.floor_fraction,
            expected: "the floor is a fraction of the ceiling in (0, 1]",
        });
    }
    let shift = match opts.failure_probability {
        None => 0.0,
        Some(beta) if beta.is_finite() && beta > 0.0 && beta < 1.0 => {
            (p as f64 / (2.0 * beta)).ln().max(0.0)
        }
        Some(beta) => {
            return Err(ModelError::InvalidParameter {
                name: "failure_probability",
                value: beta,
                expected:
                    "the probability that an estimate is not an upper bound must be in (0, 1)",
            })
        }
    };
    let r2 = match bounds.row_norm_bound {
        Some(r) => {
            let r = positive("row norm bound", r)?;
            positive("squared row norm bound", r * r)?
        }
        None => f64::INFINITY,
    };
    let caps: Vec<f64> = match bounds.feature_bounds {
        Some(b) => {
            if b.len() != p {
                return Err(ModelError::Shape(format!(
                    "{} feature bounds given for a design with {p} features",
                    b.len()
                )));
            }
            let mut caps = Vec::with_capacity(p);
            for &bj in b {
                positive("feature bound", bj)?;
                caps.push(positive("squared feature bound", bj * bj)?.min(r2));
            }
            caps
        }
        None if r2.is_finite() => vec![r2; p],
        None => {
            return Err(ModelError::InvalidParameter {
                name: "bounds",
                value: f64::NAN,
                expected: "give per-feature bounds, a row-norm bound, or both",
            })
        }
    };
    let ceilings: Vec<f64> = caps.iter().map(|cap| c * cap).collect();
    check_positive("smoothness ceiling c cap_j", &ceilings)?;
    let units = knapsack_units(&caps, r2).min(p as f64);
    let delta = match opts.neighbours {
        Neighbours::ReplaceOne => positive("sensitivity", (2.0 * units).min(p as f64) / n as f64)?,
        Neighbours::AddRemove { .. } => {
            positive("sensitivity", units / opts.neighbours.normaliser(n)? as f64)?
        }
    };
    let eps = epsilon.get();
    let scale = positive("Laplace scale", delta / eps)?;
    let charged = laplace_epsilon(Sensitivity::new(delta, Norm::L1)?, scale)?;
    // Charge first: if the budget refuses, nothing is computed from the data.
    ledger.charge(Charge::PureDp {
        epsilon: charged,
        count: 1,
        label: "private coordinate smoothness M_j (bounded rows, one L1 Laplace release)".into(),
    })?;
    // Row clipping factors (one pass over the rows, outside the per-coordinate loop).
    let units = clipped_unit_means(
        x,
        &caps,
        &row_clip_factors(x, r2),
        opts.neighbours.normaliser(n)?,
    );
    let noise = Laplace::new(scale)?;
    let mut estimates = Vec::with_capacity(p);
    let mut laplace_scales = Vec::with_capacity(p);
    let (mut floored, mut ceiled) = (0, 0);
    for (j, &unit) in units.iter().enumerate() {
        let y = unit + noise.sample(rng) + shift * scale;
        let ceiling = ceilings[j];
        let floor = noise_floor(ceiling, opts.floor_fraction, shift, ceiling * scale);
        let m = ceiling * y;
        // A NaN (impossible with finite inputs) is raised to the ceiling: the safe side.
        let m = if m.is_nan() || m > ceiling {
            ceiled += 1;
            ceiling
        } else if m < floor {
            floored += 1;
            floor
        } else {
            m
        };
        estimates.push(m);
        laplace_scales.push(ceiling * scale);
    }
    Ok(BoundedSmoothness {
        estimates: Tagged {
            value: estimates,
            provenance: Provenance::privately_estimated(charged)?,
        },
        ceilings,
        laplace_scales,
        normalised_sensitivity: delta,
        shift_in_scales: shift,
        epsilon: charged,
        floored,
        ceiled,
    })
}

/// The floor of a released estimate whose noise has scale `noise` (Laplace scale or
/// Gaussian standard deviation, in the estimate's units) after a shift of `shift` noise
/// scales into an upper bound: `min(ceiling, max(floor_fraction * ceiling, max(shift, 1)
/// * noise))`.
///
/// *Why*: the step of a coordinate method is `1 / M_j`, so an estimate that the noise
/// pushed near 0 makes a step that nothing in the data justifies (an `M_j` at `1e-6` of
/// its ceiling gave steps of `4e6` and coefficients in the hundreds, issue 25). With a
/// shift `k >= 1` the floor `k * noise` is exactly "the unshifted noisy mean clamped at
/// 0, then shifted": the mean is non-negative, so clamping it at 0 only moves the
/// estimate towards the truth, and the upper-bound property (the estimate is at least the
/// mean whenever the shifted noisy value is) is kept. Without a shift the floor is one
/// noise scale: an estimate within one scale of 0 is indistinguishable from 0 and is
/// treated as the noise level. A function of the noisy value and public constants:
/// post-processing, no privacy cost.
pub fn noise_floor(ceiling: f64, floor_fraction: f64, shift: f64, noise: f64) -> f64 {
    (floor_fraction * ceiling)
        .max(shift.max(1.0) * noise)
        .min(ceiling)
}

/// The smallest `k >= 0` (to within `1e-9`) with `P(N(0,1) < -k) <= tail` by the
/// bounds `Phi(-k) <= exp(-k^2/2) / 2` (Chernoff) and `Phi(-k) <= phi(k) / k` (Mills'
/// ratio, `k > 0`): a valid (slightly conservative) Gaussian quantile without a
/// special-function dependency. `tail >= 1/2` gives 0.
pub fn gaussian_tail_shift(tail: f64) -> f64 {
    if tail.is_nan() || tail >= 0.5 {
        return 0.0;
    }
    let bound = |k: f64| {
        let e = (-0.5 * k * k).exp();
        let mills = if k > 0.0 {
            e / (k * (2.0 * std::f64::consts::PI).sqrt())
        } else {
            f64::INFINITY
        };
        (0.5 * e).min(mills)
    };
    // The bound is decreasing in k; bisect on [0, hi] with bound(hi) <= tail.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while bound(hi) > tail && hi < 1e3 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if bound(mid) <= tail {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo < 1e-9 {
            break;
        }
    }
    hi
}

/// How one row is clipped to norm `R`: `x_ij^2 s_i` with `s_i = min(1, R^2 / ||x_i||^2)`,
/// or, for a row whose squared norm overflows `f64` (finite entries above about
/// `1e154`), `(x_ij a_i)^2` with `a_i = R / ||x_i||` computed with scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RowClip {
    /// `s_i` (used when `mult` is 0).
    scale: f64,
    /// `a_i` (> 0 only for rows whose squared norm overflows).
    mult: f64,
}

impl RowClip {
    /// `x_ij^2` after the row's clipping (never NaN for finite `v`).
    #[inline]
    fn square(self, v: f64) -> f64 {
        if self.mult > 0.0 {
            let t = v * self.mult;
            t * t
        } else {
            v * v * self.scale
        }
    }
}

/// The clipping of every row to squared norm `r2` (empty when `r2` is infinite).
///
/// A row whose squared norm overflows would give `s_i = 0` and `inf * 0 = NaN` terms
/// (which `min` would turn into the cap, breaking the sensitivity bound); such rows get
/// the multiplier form, `a_i = R / (m sqrt(sum_j (x_ij / m)^2))`, `m = max_j |x_ij|`,
/// shaved by 4 ulps so that `sum_j (x_ij a_i)^2 <= R^2` survives rounding.
fn row_clip_factors<D: Design>(x: &D, r2: f64) -> Vec<RowClip> {
    if !r2.is_finite() {
        return Vec::new();
    }
    (0..x.n_samples())
        .map(|i| {
            let s = x.row_sq_norm(i);
            if s.is_finite() {
                RowClip {
                    scale: if s > r2 { r2 / s } else { 1.0 },
                    mult: 0.0,
                }
            } else {
                let mut m = 0.0f64;
                x.for_each_in_row(i, |_, v| m = m.max(v.abs()));
                let mut t = 0.0;
                x.for_each_in_row(i, |_, v| t += (v / m) * (v / m));
                let norm = m * t.sqrt();
                RowClip {
                    scale: 0.0,
                    mult: r2.sqrt() / norm * (1.0 - 4.0 * f64::EPSILON),
                }
            }
        })
        .collect()
}

/// The query of [`private_coordinate_smoothness_bounded`] without noise:
/// `(1/N) sum_i min(x_ij^2 s_i, cap_j) / cap_j` for every `j` (`rows` empty: no row
/// clipping; `N` = `normaliser`, the design's `n` under replace-one).
fn clipped_unit_means<D: Design>(
    x: &D,
    caps: &[f64],
    rows: &[RowClip],
    normaliser: usize,
) -> Vec<f64> {
    let n = normaliser as f64;
    caps.iter()
        .enumerate()
        .map(|(j, &cap)| {
            let mut sum = 0.0;
            if rows.is_empty() {
                x.for_each_in_col(j, |_, v| sum += (v * v).min(cap) / cap);
            } else {
                x.for_each_in_col(j, |i, v| sum += rows[i].square(v).min(cap) / cap);
            }
            sum / n
        })
        .collect()
}

/// The query of [`private_coordinate_smoothness_gaussian`] without noise:
/// `(1/N) sum_i min(c x_ij^2 s_i, c cap_j)` for every `j` (`rows` empty: no row
/// clipping; `N` = `normaliser`, the design's `n` under replace-one).
fn clipped_square_means<D: Design>(
    c: f64,
    x: &D,
    caps: &[f64],
    rows: &[RowClip],
    normaliser: usize,
) -> Vec<f64> {
    let n = normaliser as f64;
    caps.iter()
        .enumerate()
        .map(|(j, &cap)| {
            let mut sum = 0.0;
            if rows.is_empty() {
                x.for_each_in_col(j, |_, v| sum += (v * v).min(cap));
            } else {
                x.for_each_in_col(j, |i, v| sum += rows[i].square(v).min(cap));
            }
            c * sum / n
        })
        .collect()
}

/// What [`private_coordinate_smoothness_gaussian`] released, with its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GaussianSmoothness {
    /// The post-processed estimates, tagged [`Provenance::PrivatelyEstimatedGaussian`].
    pub estimates: Tagged<Vec<f64>>,
    /// Public ceilings `c cap_j`, `cap_j = min(b_j^2, R^2)` (missing bounds omitted).
    pub ceilings: Vec<f64>,
    /// `V = c min(R^2, ||cap||_2)`: the bound on the L2 norm of one row's vector
    /// `(min(c x_ij^2 s_i, c cap_j))_j`.
    pub row_vector_bound: f64,
    /// The L2 sensitivity of the mean vector: `Delta_2 = sqrt(2) V / n` under
    /// replace-one, `V / N` under add/remove with the public count `N`.
    pub l2_sensitivity: f64,
    /// Noise multiplier `z` charged (one Gaussian release).
    pub noise_multiplier: f64,
    /// Standard deviation of each coordinate's noise, `z Delta_2`.
    pub noise_std: f64,
    /// Upward shift applied, in standard deviations (`k`; 0 without
    /// `failure_probability`).
    pub shift_in_std: f64,
    /// How many estimates were raised to the floor.
    pub floored: usize,
    /// How many estimates were lowered to the ceiling.
    pub ceiled: usize,
}

/// Differentially private coordinate-wise smoothness constants from public row bounds,
/// all `p` at once with **one Gaussian release** whose noise does not depend on `p`:
///
/// ```text
/// cap_j = min(b_j^2, R^2)                  (a missing bound is omitted)
/// s_i   = min(1, R^2 / ||x_i||^2)          (row clipping to norm R; 1 without R)
/// v_ij  = min(c x_ij^2 s_i, c cap_j)       in [0, c cap_j]
/// V     = c min(R^2, ||cap||_2),   Delta_2 = sqrt(2) V / n   (add/remove: V / N)
/// M_j   = clamp((1/n) sum_i v_ij + N(0, (z Delta_2)^2) + k z Delta_2,  f_j,  c cap_j)
/// f_j   = noise_floor(c cap_j, floor_fraction, k, z Delta_2)
///       = min(c cap_j, max(floor_fraction c cap_j, max(k, 1) z Delta_2))
/// ```
///
/// The floor `f_j` ([`noise_floor`]) is the noise level: an estimate the noise made
/// indistinguishable from 0 gets `max(k, 1)` standard deviations, never a tiny value
/// whose step `1 / M_j` nothing justifies; how many were raised is `floored`.
///
/// with `k` the Gaussian tail shift of [`gaussian_tail_shift`] at `beta / p` when
/// `failure_probability = Some(beta)`, else 0. One Gaussian release of noise multiplier
/// `z` is charged to `ledger` (`Charge::Gaussian { z, 1 }`) *before* anything is
/// computed from the data, so that a GDP / zCDP / RDP accountant composes it with the
/// fit's other Gaussian releases (its `mu^2 = 1/z^2` adds to theirs under GDP).
///
/// Compared with the Laplace release of [`private_coordinate_smoothness_bounded`]
/// (L1 sensitivity `2 c R^2 / n` on every coordinate with a row-norm bound), the
/// Gaussian's per-coordinate standard deviation is `sqrt(2) z c R^2 / n`, and its
/// union-bound shift grows like `sqrt(2 ln(p / beta))` instead of `ln(p / (2 beta))`.
///
/// # Privacy
///
/// *Neighbouring relation*: replace-one (`n` fixed and public), as in DP-CD, by
/// default; add/remove with `opts.neighbours = Neighbours::AddRemove { public_n }`
/// (see the next paragraph but one).
/// *Precondition*: none on the data; the bounds and `z` are public (chosen without
/// looking at the data). Row clipping (`s_i`) and the per-coordinate cap enforce the
/// bounds, so rows that violate them change the estimate's accuracy, not the guarantee.
/// *Claim*: the released vector `(M_j)` is the post-processing of one Gaussian
/// mechanism of noise multiplier `z`: `(1/z)`-GDP, `(alpha, alpha / (2 z^2))`-RDP.
/// *Proof*: every entry of a row's vector `v_i = (v_ij)_j` is non-negative, and
/// `||v_i||_2 <= ||v_i||_1 <= c sum_j x_ij^2 s_i = c min(||x_i||^2, R^2) <= c R^2`;
/// also `||v_i||_2 <= c ||cap||_2` since `v_ij <= c cap_j`. So `||v_i||_2 <= V`. For two
/// rows `v, v'` with non-negative entries `<v, v'> >= 0`, hence `||v - v'||_2^2 =
/// ||v||^2 + ||v'||^2 - 2 <v, v'> <= 2 V^2`: replacing one row moves the mean
/// `(1/n) sum_i v_i` by at most `sqrt(2) V / n = Delta_2` in L2, whatever `p`. Adding
/// i.i.d. `N(0, (z Delta_2)^2)` to every coordinate is the Gaussian mechanism of
/// multiplier `z` (Dong, Roth & Su 2022, Thm 2.7: `1/z`-GDP; Mironov 2017, Cor. 3).
/// The shift, floor and ceiling are coordinate-wise functions of the noisy vector and
/// public constants: post-processing. The sampler is a floating-point idealisation of
/// Gaussian noise (see `dp_accounting::mechanisms`).
///
/// *Add/remove* ([`Neighbours::AddRemove`]): the mean is `(1/N) sum_i v_i` with the
/// stated public `N` (never the data's size), and `Delta_2 = V / N`. *Proof*: adding or
/// removing row `i` moves the mean by `v_i / N`, of L2 norm at most `V / N` (the bound
/// on `||v_i||_2` above); no difference of two rows is involved, so the `sqrt(2)` of
/// replace-one goes. The noise `N(0, (z Delta_2)^2)` is again the Gaussian mechanism of
/// multiplier `z` for this relation; the rest is unchanged. The estimate is of
/// `(N_true / N) m_j`, which is `m_j` when the stated count is the true one.
///
/// *Upper bound* (what the step sizes `1/M_j` need): let `m_j = (1/n) sum_i v_ij` (the
/// true `M_j` when the rows satisfy the bounds). Before clamping the estimate is
/// `m_j + (G_j + k) z Delta_2` with `G_j` standard normal, so `P(estimate < m_j) =
/// Phi(-k) <= beta / p`, and by the union bound every coordinate is an upper bound with
/// probability at least `1 - beta`. Clamping keeps it (the ceiling `c cap_j >= m_j`).
pub fn private_coordinate_smoothness_gaussian<L, D, R>(
    loss: &L,
    x: &D,
    bounds: SmoothnessBounds<'_>,
    noise_multiplier: f64,
    opts: &BoundedSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<GaussianSmoothness>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let c = curvature_of(loss)?;
    let (n, p) = (x.n_samples(), x.n_features());
    if n == 0 || p == 0 {
        return Err(ModelError::Empty(format!(
            "cannot estimate smoothness constants of a {n} x {p} design"
        )));
    }
    let z = positive("noise multiplier", noise_multiplier)?;
    if !(opts.floor_fraction.is_finite() && opts.floor_fraction > 0.0 && opts.floor_fraction <= 1.0)
    {
        return Err(ModelError::InvalidParameter {
            name: "floor_fraction",
            value: opts.floor_fraction,
            expected: "the floor is a fraction of the ceiling in (0, 1]",
        });
    }
    let shift = match opts.failure_probability {
        None => 0.0,
        Some(beta) if beta.is_finite() && beta > 0.0 && beta < 1.0 => {
            gaussian_tail_shift(beta / p as f64)
        }
        Some(beta) => {
            return Err(ModelError::InvalidParameter {
                name: "failure_probability",
                value: beta,
                expected:
                    "the probability that an estimate is not an upper bound must be in (0, 1)",
            })
        }
    };
    let r2 = match bounds.row_norm_bound {
        Some(r) => {
            let r = positive("row norm bound", r)?;
            positive("squared row norm bound", r * r)?
        }
        None => f64::INFINITY,
    };
    let caps: Vec<f64> = match bounds.feature_bounds {
        Some(b) => {
            if b.len() != p {
                return Err(ModelError::Shape(format!(
                    "{} feature bounds given for a design with {p} features",
                    b.len()
                )));
            }
            let mut caps = Vec::with_capacity(p);
            for &bj in b {
                positive("feature bound", bj)?;
                caps.push(positive("squared feature bound", bj * bj)?.min(r2));
            }
            caps
        }
        None if r2.is_finite() => vec![r2; p],
        None => {
            return Err(ModelError::InvalidParameter {
                name: "bounds",
                value: f64::NAN,
                expected: "give per-feature bounds, a row-norm bound, or both",
            })
        }
    };
    let ceilings: Vec<f64> = caps.iter().map(|cap| c * cap).collect();
    check_positive("smoothness ceiling c cap_j", &ceilings)?;
    let cap_l2 = caps.iter().map(|v| v * v).sum::<f64>().sqrt();
    let row_vector_bound = positive("row vector bound V", c * r2.min(cap_l2))?;
    let l2_sensitivity = match opts.neighbours {
        Neighbours::ReplaceOne => positive(
            "L2 sensitivity",
            std::f64::consts::SQRT_2 * row_vector_bound / n as f64,
        )?,
        Neighbours::AddRemove { .. } => positive(
            "L2 sensitivity",
            row_vector_bound / opts.neighbours.normaliser(n)? as f64,
        )?,
    };
    let noise_std = positive("noise standard deviation", z * l2_sensitivity)?;
    // Charge first: if the budget refuses, nothing is computed from the data.
    ledger.charge(Charge::Gaussian {
        noise_multiplier: z,
        count: 1,
    })?;
    let row_scale = row_clip_factors(x, r2);
    let means = clipped_square_means(c, x, &caps, &row_scale, opts.neighbours.normaliser(n)?);
    let noise = Gaussian::new(noise_std)?;
    let mut estimates = Vec::with_capacity(p);
    let (mut floored, mut ceiled) = (0, 0);
    for (j, &mean) in means.iter().enumerate() {
        let m = mean + noise.sample(rng) + shift * noise_std;
        let ceiling = ceilings[j];
        let floor = noise_floor(ceiling, opts.floor_fraction, shift, noise_std);
        // A NaN (impossible with finite inputs) is raised to the ceiling: the safe side.
        let m = if m.is_nan() || m > ceiling {
            ceiled += 1;
            ceiling
        } else if m < floor {
            floored += 1;
            floor
        } else {
            m
        };
        estimates.push(m);
    }
    Ok(GaussianSmoothness {
        estimates: Tagged {
            value: estimates,
            provenance: Provenance::privately_estimated_gaussian(z)?,
        },
        ceilings,
        row_vector_bound,
        l2_sensitivity,
        noise_multiplier: z,
        noise_std,
        shift_in_std: shift,
        floored,
        ceiled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DenseDesign, Hinge, Logistic, SparseDesign, Squared};
    use nalgebra::DMatrix;

    fn design() -> DenseDesign {
        DenseDesign::from_row_major(
            4,
            3,
            &[
                1.0, 2.0, 0.0, //
                -1.0, 0.5, 3.0, //
                2.0, 0.0, -1.0, //
                0.5, 1.5, 2.0,
            ],
        )
        .unwrap()
    }

    #[test]
    fn coordinate_smoothness_by_hand() {
        let x = design();
        let m = coordinate_smoothness(&Squared::full(), &x).unwrap();
        assert_eq!(m.provenance, Provenance::DataNonPrivate);
        // column 0: 1 + 1 + 4 + 0.25 = 6.25; (2/4) * 6.25
        assert_eq!(m.value[0], 3.125);
        let m = coordinate_smoothness(&Logistic, &x).unwrap();
        // column 2: 0 + 9 + 1 + 4 = 14; (1/16) * 14
        assert_eq!(m.value[2], 14.0 / 16.0);
        assert!(coordinate_smoothness(&Hinge, &x).is_err());
    }

    #[test]
    fn global_smoothness_matches_eigendecomposition() {
        let x = design();
        let g: DMatrix<f64> = x.matrix().transpose() * x.matrix();
        let exact = g.symmetric_eigenvalues().max();
        let got = lambda_max_gram(&x);
        assert!(got >= exact * (1.0 - 1e-12), "{got} < {exact}");
        assert!(got <= exact * (1.0 + 1e-6), "{got} vs {exact}");
        let b = global_smoothness(&Squared::half(), &x).unwrap().value;
        assert!((b - exact / 4.0).abs() <= 1e-6 * exact);
        // Sparse gives the same.
        let s = SparseDesign::from_dense(&x);
        assert!((lambda_max_gram(&s) - got).abs() <= 1e-9 * got);
        // Between max_j M_j and tr(M).
        let m = coordinate_smoothness(&Squared::half(), &x).unwrap().value;
        let mx = m.iter().cloned().fold(0.0, f64::max);
        assert!(b >= mx * (1.0 - 1e-12) && b <= m.iter().sum::<f64>() * (1.0 + 1e-12));
    }

    #[test]
    fn lipschitz_from_declared_bounds() {
        let l = coordinate_lipschitz(&Logistic, &[1.0, 2.5], 1.0).unwrap();
        assert_eq!(l.provenance, Provenance::PublicBound);
        assert_eq!(l.value, vec![1.0, 2.5]);
        let h = crate::Huber::new(0.5).unwrap();
        assert_eq!(
            coordinate_lipschitz(&h, &[4.0], 10.0).unwrap().value,
            vec![2.0]
        );
        assert!(coordinate_lipschitz(&Squared::full(), &[1.0], 1.0).is_err());
        assert!(coordinate_lipschitz(&Logistic, &[f64::NAN], 1.0).is_err());
        let r = row_norm_from_feature_bounds(&[3.0, 4.0]).unwrap();
        assert_eq!(l2_lipschitz(&Logistic, r, 1.0).unwrap().value, 5.0);
    }

    #[test]
    fn lipschitz_bounds_hold_on_data() {
        // Every per-sample coordinate gradient is within L_j, at arbitrary w.
        let x = design();
        let y = [1.0, -1.0, 1.0, -1.0];
        let bounds = feature_max_abs(&x).value;
        let l = coordinate_lipschitz(&Logistic, &bounds, 1.0).unwrap().value;
        for w in [[0.0, 0.0, 0.0], [5.0, -3.0, 2.0], [-40.0, 10.0, 1.0]] {
            for (i, &yi) in y.iter().enumerate() {
                let z = x.row_dot(i, &w);
                for (j, &lj) in l.iter().enumerate() {
                    let g = Logistic.derivative(z, yi) * x.row(i)[j];
                    assert!(g.abs() <= lj, "sample {i} coord {j}: {g} > {lj}");
                }
            }
        }
    }

    #[test]
    fn require_private_refuses_data_constants() {
        let t = Tagged::data_non_private(1.0);
        let e = t.clone().require_private(false).unwrap_err();
        assert!(e.to_string().contains("without privacy"), "{e}");
        assert_eq!(t.require_private(true).unwrap(), 1.0);
        assert_eq!(Tagged::public(2.0).require_private(false).unwrap(), 2.0);
        let p = Tagged::privately_estimated(3.0, 0.1).unwrap();
        assert_eq!(p.require_private(false).unwrap(), 3.0);
    }

    /// Issue 24: a negative or non-finite provenance epsilon was accepted, so summed
    /// costs could cancel (+0.5 and -0.5) and DP-CD took a negative cost as free budget.
    /// It is now refused where it is created: constructors and deserialisation.
    #[test]
    fn provenance_epsilon_is_finite_and_non_negative_where_created() {
        for bad in [-0.5, -1e-300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = Tagged::privately_estimated(1.0, bad)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("provenance epsilon") && e.contains("finite and >= 0"),
                "{bad}: {e}"
            );
            assert!(Provenance::privately_estimated(bad).is_err(), "{bad}");
            assert!(SpentEpsilon::try_from(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Tagged::privately_estimated(1.0, 0.0).unwrap().provenance,
            Provenance::privately_estimated(0.0).unwrap()
        );
        // JSON round trip keeps the format, and a negative cost in a file is refused.
        let t = Tagged::privately_estimated(2.0, 0.25).unwrap();
        let text = serde_json::to_string(&t).unwrap();
        assert_eq!(
            text,
            r#"{"value":2.0,"provenance":{"PrivatelyEstimated":{"epsilon":0.25}}}"#
        );
        assert_eq!(serde_json::from_str::<Tagged<f64>>(&text).unwrap(), t);
        let neg = text.replace("0.25", "-0.5");
        let e = serde_json::from_str::<Tagged<f64>>(&neg)
            .unwrap_err()
            .to_string();
        assert!(e.contains("-0.5") && e.contains("finite and >= 0"), "{e}");
    }

    /// The Gaussian provenance's multiplier was a bare `f64` that anything could set to
    /// 0, a negative value or NaN (a "Gaussian release" without noise). It is now a
    /// `GaussianMultiplier`, refused unless finite and `> 0` by the constructor and when
    /// read from JSON; the release itself tags its estimates with the multiplier it
    /// charged.
    #[test]
    fn gaussian_provenance_multiplier_is_finite_and_positive_where_created() {
        for bad in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = Provenance::privately_estimated_gaussian(bad)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("noise multiplier of a Gaussian provenance")
                    && e.contains("finite and > 0"),
                "{bad}: {e}"
            );
            assert!(GaussianMultiplier::try_from(bad).is_err(), "{bad}");
        }
        let ok = Provenance::privately_estimated_gaussian(3.5).unwrap();
        let text = serde_json::to_string(&Tagged {
            value: 1.0,
            provenance: ok,
        })
        .unwrap();
        assert_eq!(
            text,
            r#"{"value":1.0,"provenance":{"PrivatelyEstimatedGaussian":{"noise_multiplier":3.5}}}"#
        );
        assert_eq!(
            serde_json::from_str::<Tagged<f64>>(&text)
                .unwrap()
                .provenance,
            ok
        );
        for bad in ["0.0", "-3.5"] {
            let e = serde_json::from_str::<Tagged<f64>>(&text.replace("3.5", bad))
                .unwrap_err()
                .to_string();
            assert!(e.contains("finite and > 0"), "{bad}: {e}");
        }
        // The release's own tag carries the multiplier it charged.
        let x = DenseDesign::from_row_major(2, 1, &[1.0, 0.5]).unwrap();
        let mut ledger = Ledger::new();
        let out = private_coordinate_smoothness_gaussian(
            &Logistic,
            &x,
            SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            },
            2.0,
            &BoundedSmoothnessOptions::default(),
            &mut <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(1),
            &mut ledger,
        )
        .unwrap();
        assert_eq!(
            out.estimates.provenance,
            Provenance::privately_estimated_gaussian(2.0).unwrap()
        );
    }

    mod private {
        use super::super::*;
        use crate::{DenseDesign, Logistic, Squared};
        use dp_accounting::{Delta, Epsilon};
        use rand::{RngCore, SeedableRng};
        use rand_chacha::ChaCha20Rng;

        fn data() -> DenseDesign {
            DenseDesign::from_row_major(
                5,
                3,
                &[
                    1.0, 200.0, 0.1, //
                    -2.0, 50.0, 0.0, //
                    0.5, 3000.0, -0.3, //
                    3.0, 10.0, 0.2, //
                    -1.0, 700.0, 0.05,
                ],
            )
            .unwrap()
        }

        #[test]
        fn releases_clipped_mean_plus_calibrated_laplace() {
            let x = data();
            // c = 2. Bound 2.5 on feature 0 gives b_0 = 12.5 and clips the sample 3.0
            // (2 * 9 = 18 > 12.5); the other bounds are attained but clip nothing. The
            // budget is large enough that no estimate hits the floor.
            let bounds = [2.5, 3000.0, 0.3];
            let eps = 30.0;
            let mut rng = ChaCha20Rng::seed_from_u64(9);
            let mut ledger = Ledger::new();
            let r = private_coordinate_smoothness_with(
                &Squared::full(),
                &x,
                &bounds,
                Epsilon::new(eps).unwrap(),
                &PrivateSmoothnessOptions::default(),
                &mut rng,
                &mut ledger,
            )
            .unwrap();
            // Independent recomputation: c = 2, b_j = 2 B_j^2, clipped means by hand,
            // scale 2 b_j p / (n eps) with p = 3, n = 5, and the same Laplace draws.
            assert_eq!(r.clamped, 0);
            let b = [2.0 * 6.25, 2.0 * 9e6, 2.0 * 0.09];
            let clipped = [
                (2.0 * 1.0 + 2.0 * 4.0 + 2.0 * 0.25 + 12.5 + 2.0 * 1.0) / 5.0,
                2.0 * (4e4 + 2500.0 + 9e6 + 100.0 + 4.9e5) / 5.0,
                2.0 * (0.01 + 0.0 + 0.09 + 0.04 + 0.0025) / 5.0,
            ];
            let mut rng2 = ChaCha20Rng::seed_from_u64(9);
            for j in 0..3 {
                let scale = 2.0 * b[j] * 3.0 / (5.0 * eps);
                assert!((r.laplace_scales[j] - scale).abs() <= 1e-14 * scale);
                assert_eq!(r.per_sample_bounds[j], b[j]);
                let draw = Laplace::new(r.laplace_scales[j]).unwrap().sample(&mut rng2);
                let expect = clipped[j] + draw;
                let got = r.estimates.value[j];
                assert!(
                    (got - expect).abs() <= 1e-12 * (clipped[j].abs() + draw.abs()),
                    "{j}: {got} vs {expect}"
                );
            }
            // Ledger: p pure-DP releases of eps/p (rounded up, never below).
            match ledger.entries() {
                [Charge::PureDp { epsilon, count, .. }] => {
                    assert_eq!(*count, 3);
                    assert!(*epsilon >= eps / 3.0 && *epsilon <= eps / 3.0 * (1.0 + 1e-12));
                }
                e => panic!("unexpected ledger {e:?}"),
            }
            match r.estimates.provenance {
                Provenance::PrivatelyEstimated { epsilon } => assert!(epsilon.get() >= eps),
                p => panic!("{p:?}"),
            }
            assert!(r.estimates.require_private(false).is_ok());
        }

        #[test]
        fn refused_charge_releases_nothing() {
            let x = data();
            let mut ledger =
                Ledger::with_budget(Epsilon::new(0.5).unwrap(), Delta::new(1e-6).unwrap());
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            let e = private_coordinate_smoothness(
                &Logistic,
                &x,
                &[1.0, 1.0, 1.0],
                Epsilon::new(1.0).unwrap(),
                &mut rng,
                &mut ledger,
            );
            assert!(e.is_err());
            assert!(ledger.entries().is_empty());
            // No randomness was consumed.
            assert_eq!(rng.next_u64(), ChaCha20Rng::seed_from_u64(1).next_u64());
        }

        #[test]
        fn bad_arguments_are_errors() {
            let x = data();
            let mut ledger = Ledger::new();
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            let eps = Epsilon::new(1.0).unwrap();
            for bounds in [
                &[1.0, 1.0][..],
                &[1.0, 0.0, 1.0][..],
                &[1.0, f64::NAN, 1.0][..],
            ] {
                assert!(private_coordinate_smoothness(
                    &Logistic,
                    &x,
                    bounds,
                    eps,
                    &mut rng,
                    &mut ledger
                )
                .is_err());
            }
            assert!(private_coordinate_smoothness(
                &crate::Hinge,
                &x,
                &[1.0; 3],
                eps,
                &mut rng,
                &mut ledger
            )
            .is_err());
            assert!(ledger.entries().is_empty());
        }

        #[test]
        fn replace_one_sensitivity_of_clipped_mean() {
            // Brute force over neighbours of a tiny dataset: replacing any one row by an
            // extreme row moves the clipped mean by at most b_j / n (<= the 2 b_j / n used).
            let x = data();
            let bounds = [2.5, 5000.0, 1.0];
            let c = 2.0;
            let extremes = [-1e6, -3.0, 0.0, 0.7, 2.5, 1e6];
            for i in 0..5 {
                for &e in &extremes {
                    let mut rows: Vec<f64> = (0..5).flat_map(|k| x.row(k).to_vec()).collect();
                    for j in 0..3 {
                        rows[i * 3 + j] = e;
                    }
                    let xn = DenseDesign::from_row_major(5, 3, &rows).unwrap();
                    for (j, &bj) in bounds.iter().enumerate() {
                        let b = c * bj * bj;
                        let d = (clipped_smoothness_sum(c, &x, j, b)
                            - clipped_smoothness_sum(c, &xn, j, b))
                            / 5.0;
                        assert!(
                            d.abs() <= b / 5.0 * (1.0 + 1e-15),
                            "row {i} value {e} coord {j}: {d}"
                        );
                    }
                }
            }
        }

        #[test]
        fn unbiased_and_clamped() {
            // Over many seeded runs the estimates average to the clipped mean (Laplace
            // noise has mean 0, variance 2 scale^2); 5 standard errors.
            let x = data();
            let bounds = [2.5, 5000.0, 1.0];
            let runs = 4000;
            let mut sums = [0.0; 3];
            let mut clamped = 0;
            let mut ledger = Ledger::new();
            let mut rng = ChaCha20Rng::seed_from_u64(5);
            let eps = Epsilon::new(50.0).unwrap();
            let mut scales = vec![];
            for _ in 0..runs {
                let r = private_coordinate_smoothness_with(
                    &Squared::full(),
                    &x,
                    &bounds,
                    eps,
                    &PrivateSmoothnessOptions::default(),
                    &mut rng,
                    &mut ledger,
                )
                .unwrap();
                clamped += r.clamped;
                for (s, &v) in sums.iter_mut().zip(&r.estimates.value) {
                    assert!(v > 0.0);
                    *s += v;
                }
                scales = r.laplace_scales;
            }
            // Feature 2 has a tiny clipped mean and large relative noise: clamping is
            // frequent there, so test unbiasedness on the first two only.
            assert!(clamped > 0);
            let clipped0 = (2.0 + 8.0 + 0.5 + 12.5 + 2.0) / 5.0;
            let se = (2.0f64).sqrt() * scales[0] / (runs as f64).sqrt();
            assert!((sums[0] / runs as f64 - clipped0).abs() <= 5.0 * se);
        }
    }

    mod bounded {
        use super::super::*;
        use crate::{DenseDesign, Logistic, SparseDesign, Squared};
        use dp_accounting::{Delta, Epsilon};
        use rand::{Rng, RngCore, SeedableRng};
        use rand_chacha::ChaCha20Rng;

        fn data() -> DenseDesign {
            DenseDesign::from_row_major(
                4,
                3,
                &[
                    0.6, 0.8, 0.0, //
                    0.0, 0.3, 0.1, //
                    3.0, 4.0, 0.0, // norm 5: clipped to norm 1
                    -0.2, 0.0, 0.5,
                ],
            )
            .unwrap()
        }

        fn run(
            x: &DenseDesign,
            bounds: SmoothnessBounds<'_>,
            eps: f64,
            opts: &BoundedSmoothnessOptions,
            seed: u64,
        ) -> BoundedSmoothness {
            let mut ledger = Ledger::new();
            private_coordinate_smoothness_bounded(
                &Squared::full(),
                x,
                bounds,
                Epsilon::new(eps).unwrap(),
                opts,
                &mut ChaCha20Rng::seed_from_u64(seed),
                &mut ledger,
            )
            .unwrap()
        }

        #[test]
        fn private_beta_release_by_hand_and_sensitivity() {
            // Row 2 (norm 5) is clipped to norm 1: S X has rows (0.6, 0.8, 0),
            // (0, 0.3, 0.1), (0.6, 0.8, 0), (-0.2, 0, 0.5) up to the clipping factor.
            let x = data();
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-9,
                failure_probability: Some(0.1),
                neighbours: Neighbours::ReplaceOne,
            };
            let mut ledger = Ledger::new();
            let got = private_global_smoothness(
                &Squared::full(),
                &x,
                1.0,
                Epsilon::new(2.0).unwrap(),
                &opts,
                &mut ChaCha20Rng::seed_from_u64(4),
                &mut ledger,
            )
            .unwrap();
            let clipped = DenseDesign::from_row_major(
                4,
                3,
                &[0.6, 0.8, 0.0, 0.0, 0.3, 0.1, 0.6, 0.8, 0.0, -0.2, 0.0, 0.5],
            )
            .unwrap();
            let g = clipped.matrix().transpose() * clipped.matrix();
            let exact = 2.0 * g.symmetric_eigenvalues().max() / 4.0;
            let scale = 2.0 / 4.0 / 2.0;
            let draw = Laplace::new(scale)
                .unwrap()
                .sample(&mut ChaCha20Rng::seed_from_u64(4));
            let expect = (exact + draw + (5.0f64).ln() * scale).clamp(2e-9, 2.0);
            // The power iteration returns an upper estimate (Rayleigh quotient plus
            // residual), within 1e-6 relative here.
            assert!(
                got.value >= expect - 1e-12 && got.value <= expect + 1e-6 * exact,
                "{} vs {expect}",
                got.value
            );
            assert!(matches!(
                ledger.entries(),
                [Charge::PureDp { epsilon, count: 1, .. }] if (*epsilon - 2.0).abs() < 1e-12
            ));
            // Replace-one: lambda_max of the clipped second moment moves by <= R^2 / n.
            let mut rng = ChaCha20Rng::seed_from_u64(8);
            for _ in 0..200 {
                let mut rows: Vec<f64> = (0..12).map(|_| rng.random_range(-2.0..2.0)).collect();
                let w = |rows: &[f64]| {
                    let d = DenseDesign::from_row_major(4, 3, rows).unwrap();
                    let s: Vec<f64> = (0..4).map(|i| (1.0 / d.row_sq_norm(i)).min(1.0)).collect();
                    lambda_max_weighted_gram(&d, Some(&s)) / 4.0
                };
                let before = w(&rows);
                let i = rng.random_range(0..4);
                for v in rows[3 * i..3 * i + 3].iter_mut() {
                    *v = rng.random_range(-50.0..50.0);
                }
                assert!((w(&rows) - before).abs() <= 0.25 * (1.0 + 1e-6));
            }
        }

        #[test]
        fn knapsack_by_hand() {
            assert_eq!(knapsack_units(&[1.0; 5], 1.0), 1.0);
            assert_eq!(knapsack_units(&[1.0; 5], 2.5), 2.5);
            // Cheapest first: 0.1 + 0.4 fit, then 0.5 of the 1.0 item.
            assert_eq!(knapsack_units(&[1.0, 0.4, 0.1], 1.0), 2.5);
            assert_eq!(knapsack_units(&[1.0, 2.0], f64::INFINITY), 2.0);
        }

        #[test]
        fn row_norm_release_by_hand() {
            // R = 1 only: cap_j = 1, K = 1, Delta = 2 / n; c = 2 (squared, full).
            let x = data();
            let eps = 7.0;
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-9,
                failure_probability: None,
                neighbours: Neighbours::ReplaceOne,
            };
            let b = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            };
            let r = run(&x, b, eps, &opts, 3);
            let delta = 2.0 / 4.0;
            assert!((r.normalised_sensitivity - delta).abs() <= 1e-15);
            assert_eq!(r.ceilings, vec![2.0; 3]);
            assert_eq!(r.shift_in_scales, 0.0);
            // Clipped squares: row 2 scaled by 1/25 -> (0.36, 0.64, 0).
            let u = [
                (0.36 + 0.0 + 0.36 + 0.04) / 4.0,
                (0.64 + 0.09 + 0.64 + 0.0) / 4.0,
                (0.0 + 0.01 + 0.0 + 0.25) / 4.0,
            ];
            let mut rng = ChaCha20Rng::seed_from_u64(3);
            let lap = Laplace::new(delta / eps).unwrap();
            for (j, uj) in u.iter().enumerate() {
                // The floor is the noise level: one Laplace scale 2 Delta / eps (no shift).
                let expect = (2.0 * (uj + lap.sample(&mut rng))).clamp(2.0 * delta / eps, 2.0);
                let got = r.estimates.value[j];
                assert!((got - expect).abs() <= 1e-12, "{j}: {got} vs {expect}");
                assert!((r.laplace_scales[j] - 2.0 * delta / eps).abs() <= 1e-15);
            }
            assert!(r.epsilon >= eps && r.epsilon <= eps * (1.0 + 1e-12));
            // Sparse storage gives the same release.
            let mut ledger = Ledger::new();
            let s = private_coordinate_smoothness_bounded(
                &Squared::full(),
                &SparseDesign::from_dense(&x),
                b,
                Epsilon::new(eps).unwrap(),
                &opts,
                &mut ChaCha20Rng::seed_from_u64(3),
                &mut ledger,
            )
            .unwrap();
            assert_eq!(s.estimates, r.estimates);
        }

        #[test]
        fn feature_bounds_alone_halve_the_paper_scale() {
            // No row bound: K = p, Delta = p / n, scale c b_j^2 p / (n eps), half of eq. 126.
            let x = data();
            let fb = [3.0, 4.0, 0.5];
            let r = run(
                &x,
                SmoothnessBounds {
                    feature_bounds: Some(&fb),
                    row_norm_bound: None,
                },
                1.0,
                &BoundedSmoothnessOptions::default(),
                1,
            );
            for (j, &bj) in fb.iter().enumerate() {
                let paper = 2.0 * (2.0 * bj * bj) * 3.0 / 4.0;
                assert!((r.laplace_scales[j] - paper / 2.0).abs() <= 1e-12 * paper);
            }
            // Both bounds: caps min(b_j^2, R^2) = (1, 1, 0.25), K = 1 + 0.75 = 1.75, and
            // Delta = min(2 K, p) / n = 3 / 4 (the per-coordinate bound wins here).
            let r = run(
                &x,
                SmoothnessBounds {
                    feature_bounds: Some(&fb),
                    row_norm_bound: Some(1.0),
                },
                1.0,
                &BoundedSmoothnessOptions::default(),
                1,
            );
            assert!((r.normalised_sensitivity - 3.0 / 4.0).abs() <= 1e-15);
            assert_eq!(r.ceilings, vec![2.0, 2.0, 0.5]);
        }

        #[test]
        fn replace_one_l1_sensitivity_brute_force() {
            // Random neighbours with adversarial rows: the normalised query moves by at
            // most Delta in L1, for every combination of bounds.
            let mut rng = ChaCha20Rng::seed_from_u64(77);
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-12,
                failure_probability: None,
                neighbours: Neighbours::ReplaceOne,
            };
            let mut tightest = 0.0f64;
            for t in 0..300 {
                let n = rng.random_range(1..=5);
                let p = rng.random_range(1..=6);
                let mut rows: Vec<f64> = (0..n * p)
                    .map(|_| rng.random_range(-3.0..3.0) * (rng.random::<f64>() < 0.7) as u8 as f64)
                    .collect();
                let x = DenseDesign::from_row_major(n, p, &rows).unwrap();
                let i = rng.random_range(0..n);
                for v in rows[i * p..(i + 1) * p].iter_mut() {
                    *v = [0.0, 1e3, -0.05, 2.0][rng.random_range(0..4)];
                }
                let x2 = DenseDesign::from_row_major(n, p, &rows).unwrap();
                let fb: Vec<f64> = (0..p).map(|_| rng.random_range(0.1..3.0)).collect();
                let kind = t % 3;
                let b = SmoothnessBounds {
                    feature_bounds: (kind != 1).then_some(&fb[..]),
                    row_norm_bound: (kind != 0).then(|| rng.random_range(0.2..4.0)),
                };
                // Large epsilon, tiny noise; same seed: the difference is the query's.
                let r = run(&x, b, 1e9, &opts, t);
                let r2 = run(&x2, b, 1e9, &opts, t);
                let moved: f64 = (0..p)
                    .map(|j| {
                        let c = r.ceilings[j];
                        // Undo the (identical) noise by comparing the noisy values.
                        (r.estimates.value[j] - r2.estimates.value[j]).abs() / c
                    })
                    .sum();
                assert!(
                    moved <= r.normalised_sensitivity * (1.0 + 1e-9) + 1e-12,
                    "trial {t}: moved {moved} > Delta {}",
                    r.normalised_sensitivity
                );
                tightest = tightest.max(moved / r.normalised_sensitivity);
            }
            // Not vacuous: some neighbours come close to the bound.
            assert!(tightest > 0.4, "{tightest}");
        }

        #[test]
        fn shifted_estimates_are_upper_bounds_with_the_stated_probability() {
            // beta = 0.2 over p = 3: the fraction of runs in which some estimate falls
            // below the clipped mean is at most 0.2 (binomial slack: 4 standard errors).
            let x = data();
            let b = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            };
            let truth = [
                2.0 * (0.36 + 0.0 + 0.36 + 0.04) / 4.0,
                2.0 * (0.64 + 0.09 + 0.64 + 0.0) / 4.0,
                2.0 * (0.0 + 0.01 + 0.0 + 0.25) / 4.0,
            ];
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-9,
                failure_probability: Some(0.2),
                neighbours: Neighbours::ReplaceOne,
            };
            let runs = 4000;
            let mut misses = 0;
            let mut unshifted_misses = 0;
            let plain = BoundedSmoothnessOptions {
                failure_probability: None,
                ..opts
            };
            for s in 0..runs {
                let r = run(&x, b, 3.0, &opts, s);
                assert!((r.shift_in_scales - (3.0f64 / 0.4).ln()).abs() <= 1e-12);
                misses += r.estimates.value.iter().zip(&truth).any(|(e, t)| e < t) as usize;
                let r = run(&x, b, 3.0, &plain, s);
                unshifted_misses +=
                    r.estimates.value.iter().zip(&truth).any(|(e, t)| e < t) as usize;
            }
            let rate = misses as f64 / runs as f64;
            let se = (0.2f64 * 0.8 / runs as f64).sqrt();
            assert!(rate <= 0.2 + 4.0 * se, "miss rate {rate}");
            // The bound is not vacuous: without the shift most runs miss somewhere.
            assert!(unshifted_misses as f64 / runs as f64 > 0.5);
        }

        #[test]
        fn refused_charge_and_bad_arguments_release_nothing() {
            let x = data();
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            let mut ledger =
                Ledger::with_budget(Epsilon::new(0.5).unwrap(), Delta::new(1e-6).unwrap());
            let ok = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            };
            let fb2 = [1.0, 1.0];
            let fbnan = [1.0, f64::NAN, 1.0];
            let bad_bounds = [
                SmoothnessBounds {
                    feature_bounds: None,
                    row_norm_bound: None,
                },
                SmoothnessBounds {
                    feature_bounds: Some(&fb2),
                    row_norm_bound: None,
                },
                SmoothnessBounds {
                    feature_bounds: Some(&fbnan),
                    row_norm_bound: None,
                },
                SmoothnessBounds {
                    feature_bounds: None,
                    row_norm_bound: Some(-1.0),
                },
                SmoothnessBounds {
                    feature_bounds: None,
                    row_norm_bound: Some(f64::INFINITY),
                },
            ];
            let d = BoundedSmoothnessOptions::default();
            let mut cases: Vec<(SmoothnessBounds, BoundedSmoothnessOptions, f64)> =
                bad_bounds.iter().map(|b| (*b, d, 0.1)).collect();
            cases.push((ok, d, 1.0)); // over the ledger's budget
            for o in [
                BoundedSmoothnessOptions {
                    floor_fraction: 0.0,
                    ..d
                },
                BoundedSmoothnessOptions {
                    failure_probability: Some(1.0),
                    ..d
                },
                BoundedSmoothnessOptions {
                    failure_probability: Some(f64::NAN),
                    ..d
                },
            ] {
                cases.push((ok, o, 0.1));
            }
            for (b, o, eps) in cases {
                let e = private_coordinate_smoothness_bounded(
                    &Logistic,
                    &x,
                    b,
                    Epsilon::new(eps).unwrap(),
                    &o,
                    &mut rng,
                    &mut ledger,
                );
                assert!(e.is_err(), "{b:?} {o:?} {eps}");
            }
            assert!(private_coordinate_smoothness_bounded(
                &crate::Hinge,
                &x,
                ok,
                Epsilon::new(0.1).unwrap(),
                &d,
                &mut rng,
                &mut ledger
            )
            .is_err());
            assert!(ledger.entries().is_empty());
            assert_eq!(rng.next_u64(), ChaCha20Rng::seed_from_u64(1).next_u64());
        }
    }

    mod gaussian {
        use super::super::*;
        use crate::{DenseDesign, Logistic, SparseDesign};
        use rand::{Rng, RngCore, SeedableRng};
        use rand_chacha::ChaCha20Rng;

        fn release(
            x: &DenseDesign,
            b: SmoothnessBounds<'_>,
            z: f64,
            opts: &BoundedSmoothnessOptions,
            seed: u64,
        ) -> (GaussianSmoothness, Ledger) {
            let mut ledger = Ledger::new();
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let r = private_coordinate_smoothness_gaussian(
                &Logistic,
                x,
                b,
                z,
                opts,
                &mut rng,
                &mut ledger,
            )
            .unwrap();
            (r, ledger)
        }

        /// The noiseless query, as the release computes it.
        fn query(x: &DenseDesign, b: SmoothnessBounds<'_>) -> Vec<f64> {
            let r2 = b.row_norm_bound.map_or(f64::INFINITY, |r| r * r);
            let caps: Vec<f64> = match b.feature_bounds {
                Some(f) => f.iter().map(|v| (v * v).min(r2)).collect(),
                None => vec![r2; x.n_features()],
            };
            clipped_square_means(0.25, x, &caps, &row_clip_factors(x, r2), x.n_samples())
        }

        fn l2(a: &[f64], b: &[f64]) -> f64 {
            a.iter()
                .zip(b)
                .map(|(u, v)| (u - v) * (u - v))
                .sum::<f64>()
                .sqrt()
        }

        /// Issue 25: with the floor at `1e-6` of the ceiling, an `M_j` the noise pushed
        /// below 0 came out at `2.5e-7` (logistic, `|x_ij| <= 1`) and its step `1 / M_j`
        /// at `4e6`. The floor is now the release's noise level (`max(k, 1)` standard
        /// deviations), and every raised estimate is counted.
        #[test]
        fn estimates_the_noise_hides_are_floored_at_the_noise_level() {
            // 49 rows of 31 small features: true M_j about 0.25 * 0.05^2 = 6e-4, far below
            // the noise (std about 0.08 at z = 2), far below the ceiling 0.25.
            let (n, p) = (49, 31);
            let v: Vec<f64> = (0..n * p)
                .map(|k| if k % 3 == 0 { 0.05 } else { -0.05 })
                .collect();
            let x = DenseDesign::from_row_major(n, p, &v).unwrap();
            let fb = vec![1.0; p];
            let b = SmoothnessBounds {
                feature_bounds: Some(&fb),
                row_norm_bound: None,
            };
            for beta in [None, Some(0.05)] {
                let opts = BoundedSmoothnessOptions {
                    failure_probability: beta,
                    ..BoundedSmoothnessOptions::default()
                };
                let mut floored = 0;
                for seed in 0..20 {
                    let (r, _) = release(&x, b, 2.0, &opts, seed);
                    let floor = (r.shift_in_std.max(1.0) * r.noise_std).min(r.ceilings[0]);
                    assert!(floor > 1e3 * 1e-6 * r.ceilings[0], "{floor}");
                    let smallest = r
                        .estimates
                        .value
                        .iter()
                        .copied()
                        .fold(f64::INFINITY, f64::min);
                    assert!(
                        smallest >= floor,
                        "seed {seed}: M_j = {smallest} < floor {floor}"
                    );
                    let at_floor = r.estimates.value.iter().filter(|&&m| m == floor).count();
                    assert_eq!(r.floored, at_floor);
                    floored += r.floored;
                }
                // The noise hides most of these constants: many estimates were raised.
                assert!(floored > 20 * p / 4, "{beta:?}: {floored}");
            }
        }

        /// The shift `k` at `beta / p` makes every coordinate an upper bound at once with
        /// probability `>= 1 - beta` (union bound), not each one separately: over 400
        /// releases of 30 estimates, the share of releases with any estimate below its
        /// true clipped mean stays below `beta` (with a margin for 400 draws). A shift at
        /// `beta` per coordinate would miss in about `1 - 0.95^30 = 79 %` of them.
        #[test]
        fn shifted_gaussian_estimates_are_upper_bounds_jointly() {
            let (n, p) = (200, 30);
            let mut rng = ChaCha20Rng::seed_from_u64(11);
            let v: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.0..1.0)).collect();
            let x = DenseDesign::from_row_major(n, p, &v).unwrap();
            let fb = vec![1.0; p];
            let b = SmoothnessBounds {
                feature_bounds: Some(&fb),
                row_norm_bound: None,
            };
            let truth = query(&x, b);
            let opts = BoundedSmoothnessOptions {
                failure_probability: Some(0.05),
                ..BoundedSmoothnessOptions::default()
            };
            let runs = 400;
            let mut missed = 0;
            for seed in 0..runs {
                // z = 0.2: noise std about 0.02, truth about 0.08, no clamping.
                let (r, _) = release(&x, b, 0.2, &opts, seed);
                assert!((r.shift_in_std - gaussian_tail_shift(0.05 / p as f64)).abs() < 1e-12);
                if r.estimates.value.iter().zip(&truth).any(|(m, t)| m < t) {
                    missed += 1;
                }
            }
            assert!(missed as f64 <= 0.08 * runs as f64, "{missed} of {runs}");
        }

        #[test]
        fn sensitivity_holds_on_adversarial_rows_and_is_attained() {
            // Derivation: ||v_i||_2 <= c R^2 for non-negative v_i, so replace-one moves
            // the mean by <= sqrt(2) c R^2 / n in L2, whatever p.
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-9,
                failure_probability: None,
                neighbours: Neighbours::ReplaceOne,
            };
            let mut rng = ChaCha20Rng::seed_from_u64(3);
            for &(n, p) in &[(5usize, 3usize), (7, 40), (4, 200)] {
                let bounds_b = vec![1.5; p];
                for b in [
                    SmoothnessBounds {
                        feature_bounds: None,
                        row_norm_bound: Some(1.0),
                    },
                    SmoothnessBounds {
                        feature_bounds: Some(&bounds_b),
                        row_norm_bound: Some(2.0),
                    },
                ] {
                    let base: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.0..1.0)).collect();
                    let x = DenseDesign::from_row_major(n, p, &base).unwrap();
                    let (r, ledger) = release(&x, b, 1.0, &opts, 1);
                    let r2 = b.row_norm_bound.unwrap().powi(2);
                    let cap_l2 = b.feature_bounds.map_or(f64::INFINITY, |f| {
                        f.iter()
                            .map(|v| (v * v).min(r2).powi(2))
                            .sum::<f64>()
                            .sqrt()
                    });
                    let v = 0.25 * r2.min(cap_l2);
                    assert!(
                        (r.l2_sensitivity - std::f64::consts::SQRT_2 * v / n as f64).abs() < 1e-15
                    );
                    assert!(matches!(
                        ledger.entries(),
                        [Charge::Gaussian { noise_multiplier, count: 1 }] if *noise_multiplier == 1.0
                    ));
                    let q0 = query(&x, b);
                    let mut worst = 0.0f64;
                    for trial in 0..300 {
                        // Adversarial replacements: one-hot rows far beyond the bounds,
                        // rows spread over every coordinate, random huge rows.
                        let mut rows = base.clone();
                        let i = rng.random_range(0..n);
                        let new: Vec<f64> = match trial % 3 {
                            0 => {
                                let k = rng.random_range(0..p);
                                (0..p).map(|j| if j == k { 50.0 } else { 0.0 }).collect()
                            }
                            1 => vec![10.0; p],
                            _ => (0..p).map(|_| rng.random_range(-30.0..30.0)).collect(),
                        };
                        rows[i * p..(i + 1) * p].copy_from_slice(&new);
                        let x1 = DenseDesign::from_row_major(n, p, &rows).unwrap();
                        let d = l2(&q0, &query(&x1, b));
                        assert!(
                            d <= r.l2_sensitivity * (1.0 + 1e-12),
                            "{d} > {}",
                            r.l2_sensitivity
                        );
                        worst = worst.max(d);
                    }
                    // Two one-hot rows on different coordinates at the bound attain it.
                    let mut a = vec![0.0; n * p];
                    let mut c = vec![0.0; n * p];
                    let rr = b.row_norm_bound.unwrap().min(1.5);
                    a[0] = rr;
                    c[1] = rr;
                    let qa = query(&DenseDesign::from_row_major(n, p, &a).unwrap(), b);
                    let qc = query(&DenseDesign::from_row_major(n, p, &c).unwrap(), b);
                    let attained = l2(&qa, &qc);
                    let expect = std::f64::consts::SQRT_2 * 0.25 * rr * rr / n as f64;
                    assert!((attained - expect).abs() < 1e-12, "{attained} {expect}");
                    assert!(attained <= r.l2_sensitivity * (1.0 + 1e-12));
                    if b.feature_bounds.is_none() {
                        // Tight: the bound is attained.
                        assert!((attained - r.l2_sensitivity).abs() < 1e-15);
                    }
                    assert!(worst > 0.0);
                }
            }
        }

        #[test]
        fn rows_whose_squared_norm_overflows_keep_both_sensitivities() {
            // Entries of 1e200 are finite but their squares overflow: the row must
            // still be clipped to norm R, not counted as cap_j on every coordinate.
            let (n, p) = (4usize, 6usize);
            let mut rng = ChaCha20Rng::seed_from_u64(21);
            let base: Vec<f64> = (0..n * p)
                .map(|_| rng.random_range(-1.0..1.0) / (p as f64).sqrt())
                .collect();
            let x = DenseDesign::from_row_major(n, p, &base).unwrap();
            let r2 = 1.0;
            let caps = vec![r2; p];
            let unit0 = clipped_unit_means(&x, &caps, &row_clip_factors(&x, r2), n);
            let sq0 = clipped_square_means(0.25, &x, &caps, &row_clip_factors(&x, r2), n);
            for wild in [
                vec![1e200; p],
                vec![-1e300, 1e300, 0.0, 1e-300, f64::MAX, 5.0],
                vec![1e154, 1e154, 1e154, 0.0, 0.0, 0.0],
            ] {
                let mut rows = base.clone();
                rows[..p].copy_from_slice(&wild);
                let x1 = DenseDesign::from_row_major(n, p, &rows).unwrap();
                let f1 = row_clip_factors(&x1, r2);
                // The clipped row has squared norm <= R^2 (up to rounding).
                let mut norm2 = 0.0;
                x1.for_each_in_row(0, |_, v| norm2 += f1[0].square(v));
                assert!(norm2 <= r2 * (1.0 + 1e-12), "{wild:?}: {norm2}");
                // Laplace query: L1 sensitivity 2K / n with K = 1 (row bound only).
                let unit1 = clipped_unit_means(&x1, &caps, &f1, n);
                let l1: f64 = unit0.iter().zip(&unit1).map(|(a, b)| (a - b).abs()).sum();
                assert!(l1 <= 2.0 / n as f64 * (1.0 + 1e-12), "{wild:?}: {l1}");
                // Gaussian query: L2 sensitivity sqrt(2) c R^2 / n.
                let sq1 = clipped_square_means(0.25, &x1, &caps, &f1, n);
                let d = l2(&sq0, &sq1);
                assert!(
                    d <= std::f64::consts::SQRT_2 * 0.25 * r2 / n as f64 * (1.0 + 1e-12),
                    "{wild:?}: {d}"
                );
                assert!(unit1.iter().chain(&sq1).all(|v| v.is_finite()));
            }
        }

        #[test]
        fn private_beta_survives_rows_whose_products_overflow() {
            // A row of 1e300s: its squared norm and its products with the power
            // iteration's vector overflow. Coupled on one seed, the released beta may
            // move by at most the Laplace mechanism's sensitivity c R^2 / n, and must
            // not jump to the ceiling (a NaN made it do so, an event of probability 1 on
            // one side only).
            let (n, p) = (6usize, 4usize);
            let mut rng = ChaCha20Rng::seed_from_u64(5);
            let base: Vec<f64> = (0..n * p)
                .map(|_| rng.random_range(-1.0..1.0) / (p as f64).sqrt())
                .collect();
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-9,
                failure_probability: None,
                neighbours: Neighbours::ReplaceOne,
            };
            let beta = |rows: &[f64]| {
                let x = DenseDesign::from_row_major(n, p, rows).unwrap();
                private_global_smoothness(
                    &Logistic,
                    &x,
                    1.0,
                    dp_accounting::Epsilon::new(50.0).unwrap(),
                    &opts,
                    &mut ChaCha20Rng::seed_from_u64(9),
                    &mut Ledger::new(),
                )
                .unwrap()
                .value
            };
            let b0 = beta(&base);
            for wild in [
                vec![1e300; p],
                vec![-1e300, 1e300, 1e300, -1e300],
                vec![1e200; p],
                vec![f64::MAX; p],
                vec![1e308, -f64::MAX, 1e308, 1e308],
            ] {
                let mut rows = base.clone();
                rows[p..2 * p].copy_from_slice(&wild);
                let b1 = beta(&rows);
                assert!(b1.is_finite() && b1 < 0.25, "{wild:?}: {b1}");
                assert!(
                    (b1 - b0).abs() <= 0.25 / n as f64 * (1.0 + 1e-9),
                    "{wild:?}: {b0} {b1}"
                );
            }
        }

        #[test]
        fn noise_scale_matches_the_charge_and_half_of_it_fails() {
            // Unclamped coordinates: estimate - query over many releases has standard
            // deviation z Delta_2; a release with half that noise would be caught.
            let (n, p) = (400usize, 20usize);
            let mut rng = ChaCha20Rng::seed_from_u64(9);
            let rows: Vec<f64> = (0..n * p)
                .map(|_| rng.random_range(-1.0..1.0) / (p as f64).sqrt())
                .collect();
            let x = DenseDesign::from_row_major(n, p, &rows).unwrap();
            let b = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            };
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-12,
                failure_probability: None,
                neighbours: Neighbours::ReplaceOne,
            };
            let q = query(&x, b);
            let z = 0.5;
            let (mut sum, mut sum2, mut k) = (0.0, 0.0, 0usize);
            for seed in 0..400 {
                let (r, _) = release(&x, b, z, &opts, seed);
                assert_eq!(r.ceiled + r.floored, 0, "the test needs unclamped draws");
                for (e, m) in r.estimates.value.iter().zip(&q) {
                    let d = (e - m) / r.noise_std;
                    sum += d;
                    sum2 += d * d;
                    k += 1;
                }
                assert!((r.noise_std - z * r.l2_sensitivity).abs() < 1e-18);
            }
            let mean = sum / k as f64;
            let sd = (sum2 / k as f64 - mean * mean).sqrt();
            // 8000 draws: the sample sd of N(0,1) is within 0.03 of 1 (about 4 sigma).
            assert!((sd - 1.0).abs() < 0.03, "sd {sd}");
            assert!(mean.abs() < 0.05, "mean {mean}");
            // Half the noise would give sd 0.5 in these units.
            assert!((sd - 0.5).abs() > 0.3);
        }

        #[test]
        fn shift_makes_upper_bounds_with_the_stated_probability() {
            let (n, p) = (300usize, 30usize);
            let mut rng = ChaCha20Rng::seed_from_u64(2);
            let rows: Vec<f64> = (0..n * p)
                .map(|_| rng.random_range(-1.0..1.0) / (p as f64).sqrt())
                .collect();
            let x = DenseDesign::from_row_major(n, p, &rows).unwrap();
            let b = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            };
            let beta = 0.2;
            let opts = BoundedSmoothnessOptions {
                floor_fraction: 1e-12,
                failure_probability: Some(beta),
                neighbours: Neighbours::ReplaceOne,
            };
            let q = query(&x, b);
            let k = gaussian_tail_shift(beta / p as f64);
            // The tail bound: Phi(-k) <= beta / p, and not far from it.
            assert!(k > 2.47 && k < 2.6, "{k}");
            let (mut below, mut runs) = (0usize, 0usize);
            for seed in 0..500 {
                let (r, _) = release(&x, b, 1.0, &opts, seed);
                assert_eq!(r.shift_in_std, k);
                runs += 1;
                below += r.estimates.value.iter().zip(&q).any(|(e, m)| e < m) as usize;
            }
            // P(some estimate below) <= beta = 0.2; 500 runs, allow 4 sigma.
            let rate = below as f64 / runs as f64;
            assert!(
                rate <= beta + 4.0 * (beta * (1.0 - beta) / 500.0).sqrt(),
                "{rate}"
            );
            // Without the shift half of the coordinates are below.
            let (r, _) = release(
                &x,
                b,
                1.0,
                &BoundedSmoothnessOptions {
                    failure_probability: None,
                    ..opts
                },
                1,
            );
            assert!(r.estimates.value.iter().zip(&q).any(|(e, m)| e < m));
        }

        #[test]
        fn tail_shift_is_a_valid_quantile() {
            // Compare with a numerical integral of the normal density.
            let tail = |k: f64| {
                let (steps, hi) = (200_000, k + 12.0);
                let h = (hi - k) / steps as f64;
                (0..steps)
                    .map(|i| {
                        let t = k + (i as f64 + 0.5) * h;
                        (-0.5 * t * t).exp() * h
                    })
                    .sum::<f64>()
                    / (2.0 * std::f64::consts::PI).sqrt()
            };
            for t in [0.3, 0.05, 1e-3, 6.2e-4, 1e-6] {
                let k = gaussian_tail_shift(t);
                assert!(tail(k) <= t, "{t} {k}");
                // Not much above the exact quantile for the small tails the union
                // bound uses: the exact one is within 0.3.
                if t <= 0.05 {
                    assert!(tail(k - 0.3) > t, "{t} {k}");
                }
            }
            assert_eq!(gaussian_tail_shift(0.7), 0.0);
        }

        #[test]
        fn refusals_charge_nothing_and_the_budget_is_charged_first() {
            let x = DenseDesign::from_row_major(2, 2, &[0.5, 0.5, 1.0, 0.0]).unwrap();
            let ok = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            };
            let d = BoundedSmoothnessOptions::default();
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            let mut ledger = Ledger::new();
            for z in [0.0, -1.0, f64::NAN] {
                assert!(private_coordinate_smoothness_gaussian(
                    &Logistic,
                    &x,
                    ok,
                    z,
                    &d,
                    &mut rng,
                    &mut ledger
                )
                .is_err());
            }
            let none = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: None,
            };
            assert!(private_coordinate_smoothness_gaussian(
                &Logistic,
                &x,
                none,
                1.0,
                &d,
                &mut rng,
                &mut ledger
            )
            .is_err());
            assert!(ledger.entries().is_empty());
            assert_eq!(rng.next_u64(), ChaCha20Rng::seed_from_u64(1).next_u64());
            // A sparse design gives the same release as its dense twin.
            let s = SparseDesign::from_dense(&x);
            let mut r1 = ChaCha20Rng::seed_from_u64(4);
            let mut r2 = ChaCha20Rng::seed_from_u64(4);
            let a = private_coordinate_smoothness_gaussian(
                &Logistic,
                &x,
                ok,
                1.0,
                &d,
                &mut r1,
                &mut Ledger::new(),
            )
            .unwrap();
            let b = private_coordinate_smoothness_gaussian(
                &Logistic,
                &s,
                ok,
                1.0,
                &d,
                &mut r2,
                &mut Ledger::new(),
            )
            .unwrap();
            assert_eq!(a, b);
        }
    }

    /// The add/remove releases: sensitivities derived and checked by brute force on
    /// neighbours that differ by one (adversarial) row, with the mean normalised by the
    /// public count.
    mod add_remove {
        use super::*;
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha20Rng;

        fn opts(neighbours: Neighbours) -> BoundedSmoothnessOptions {
            BoundedSmoothnessOptions {
                floor_fraction: 1e-9,
                failure_probability: None,
                neighbours,
            }
        }

        fn caps(b: SmoothnessBounds<'_>, p: usize) -> (Vec<f64>, f64) {
            let r2 = b.row_norm_bound.map_or(f64::INFINITY, |r| r * r);
            let caps = match b.feature_bounds {
                Some(f) => f.iter().map(|v| (v * v).min(r2)).collect(),
                None => vec![r2; p],
            };
            (caps, r2)
        }

        #[test]
        fn sensitivities_are_the_add_remove_ones_and_hold_by_brute_force() {
            let mut rng = ChaCha20Rng::seed_from_u64(8);
            for &(n, p) in &[(5usize, 3usize), (6, 30)] {
                let big_n = n + 2; // the stated count need not be the true one
                let fb = vec![0.7; p];
                for b in [
                    SmoothnessBounds {
                        feature_bounds: None,
                        row_norm_bound: Some(1.0),
                    },
                    SmoothnessBounds {
                        feature_bounds: Some(&fb),
                        row_norm_bound: Some(1.0),
                    },
                ] {
                    let base: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.0..1.0)).collect();
                    let x = DenseDesign::from_row_major(n, p, &base).unwrap();
                    let ar = opts(Neighbours::AddRemove { public_n: big_n });
                    let g = private_coordinate_smoothness_gaussian(
                        &Logistic,
                        &x,
                        b,
                        1.0,
                        &ar,
                        &mut rng,
                        &mut Ledger::new(),
                    )
                    .unwrap();
                    let g1 = private_coordinate_smoothness_gaussian(
                        &Logistic,
                        &x,
                        b,
                        1.0,
                        &opts(Neighbours::ReplaceOne),
                        &mut rng,
                        &mut Ledger::new(),
                    )
                    .unwrap();
                    // V / N against sqrt(2) V / n: the same V.
                    assert_eq!(g.row_vector_bound, g1.row_vector_bound);
                    assert_eq!(g.l2_sensitivity, g.row_vector_bound / big_n as f64);
                    let l = private_coordinate_smoothness_bounded(
                        &Logistic,
                        &x,
                        b,
                        Epsilon::new(1.0).unwrap(),
                        &ar,
                        &mut rng,
                        &mut Ledger::new(),
                    )
                    .unwrap();
                    let l1 = private_coordinate_smoothness_bounded(
                        &Logistic,
                        &x,
                        b,
                        Epsilon::new(1.0).unwrap(),
                        &opts(Neighbours::ReplaceOne),
                        &mut rng,
                        &mut Ledger::new(),
                    )
                    .unwrap();
                    let (cp, r2) = caps(b, p);
                    let k = knapsack_units(&cp, r2).min(p as f64);
                    assert_eq!(l.normalised_sensitivity, k / big_n as f64);
                    if b.feature_bounds.is_none() {
                        // Row bound alone: K = 1, half the replace-one 2 / n.
                        assert_eq!(k, 1.0);
                        assert_eq!(l1.normalised_sensitivity, 2.0 / n as f64);
                    }
                    // Brute force: remove each row, or add an adversarial one.
                    let q = |rows: &[f64], m: usize| {
                        let x = DenseDesign::from_row_major(m, p, rows).unwrap();
                        let f = row_clip_factors(&x, r2);
                        (
                            clipped_unit_means(&x, &cp, &f, big_n),
                            clipped_square_means(0.25, &x, &cp, &f, big_n),
                        )
                    };
                    let (u0, v0) = q(&base, n);
                    let mut neighbours: Vec<(Vec<f64>, usize)> = (0..n)
                        .map(|i| {
                            let mut r = base.clone();
                            r.drain(i * p..(i + 1) * p);
                            (r, n - 1)
                        })
                        .collect();
                    let mut one_hot = vec![0.0; p];
                    one_hot[p - 1] = 1.0;
                    for extra in [
                        vec![1e200; p],
                        vec![1.0 / (p as f64).sqrt(); p],
                        one_hot,
                        (0..p).map(|_| rng.random_range(-3.0..3.0)).collect(),
                    ] {
                        let mut r = base.clone();
                        r.extend_from_slice(&extra);
                        neighbours.push((r, n + 1));
                    }
                    let (mut worst1, mut worst2) = (0.0f64, 0.0f64);
                    for (rows, m) in &neighbours {
                        let (u1, v1) = q(rows, *m);
                        let d1: f64 = u0.iter().zip(&u1).map(|(a, b)| (a - b).abs()).sum();
                        let d2 = v0
                            .iter()
                            .zip(&v1)
                            .map(|(a, b)| (a - b) * (a - b))
                            .sum::<f64>()
                            .sqrt();
                        assert!(d1 <= l.normalised_sensitivity * (1.0 + 1e-12), "{d1}");
                        assert!(d2 <= g.l2_sensitivity * (1.0 + 1e-12), "{d2}");
                        worst1 = worst1.max(d1);
                        worst2 = worst2.max(d2);
                    }
                    if b.feature_bounds.is_none() {
                        // A one-hot row at the bound attains both.
                        assert!((worst1 - l.normalised_sensitivity).abs() < 1e-15);
                        assert!((worst2 - g.l2_sensitivity).abs() < 1e-15);
                    }
                }
            }
        }

        #[test]
        fn a_public_count_of_zero_and_the_global_estimate_are_refused_before_charging() {
            let x = DenseDesign::from_row_major(2, 2, &[0.5, 0.5, 0.1, 0.0]).unwrap();
            let b = SmoothnessBounds {
                feature_bounds: None,
                row_norm_bound: Some(1.0),
            };
            let zero = opts(Neighbours::AddRemove { public_n: 0 });
            let mut ledger = Ledger::new();
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            assert!(private_coordinate_smoothness_gaussian(
                &Logistic,
                &x,
                b,
                1.0,
                &zero,
                &mut rng,
                &mut ledger
            )
            .is_err());
            assert!(private_coordinate_smoothness_bounded(
                &Logistic,
                &x,
                b,
                Epsilon::new(1.0).unwrap(),
                &zero,
                &mut rng,
                &mut ledger
            )
            .is_err());
            assert!(private_global_smoothness(
                &Logistic,
                &x,
                1.0,
                Epsilon::new(1.0).unwrap(),
                &opts(Neighbours::AddRemove { public_n: 2 }),
                &mut rng,
                &mut ledger
            )
            .is_err());
            assert!(ledger.entries().is_empty());
        }
    }
}
