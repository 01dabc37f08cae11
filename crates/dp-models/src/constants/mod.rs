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

mod bounded;
mod gaussian;
mod private;

pub use bounded::*;
pub use gaussian::*;
pub use private::*;

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
