//! Smoothness and Lipschitz constants, each tagged with where it came from.
//!
//! For a linear model `F(w) = (1/n) sum_i phi(x_i^T w, y_i) + psi(w)` with
//! `c = sup phi''` (see [`Loss::curvature_bound`]):
//!
//! * per-sample coordinate smoothness `M_j^(i) = c x_ij^2`,
//! * dataset coordinate smoothness `M_j = (1/n) sum_i M_j^(i) = (c/n) ||X_{:,j}||^2`
//!   ([`coordinate_smoothness`]; the coordinate-wise form
//!   `|grad_j f(w + t e_j) - grad_j f(w)| <= M_j |t|` that coordinate descent needs,
//!   DP-CD spec G26),
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
use serde::{Deserialize, Serialize};

/// Where a constant came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Provenance {
    /// Derived only from bounds the caller declared as public knowledge (no privacy cost).
    PublicBound,
    /// Released by a differentially private mechanism at the given (pure) epsilon, which
    /// was charged to a ledger.
    PrivatelyEstimated {
        /// The privacy budget spent on the estimate.
        epsilon: f64,
    },
    /// Computed from the private data without any privacy protection.
    DataNonPrivate,
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
                 or opt in explicitly with allow_non_private = true"
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
/// positive entries, until the Rayleigh quotient changes by less than `1e-12` relative
/// (at most 10,000 iterations). The Rayleigh quotient never exceeds `lambda_max`, so the
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
    let (n, p) = (x.n_samples(), x.n_features());
    let trace: f64 = (0..p).map(|j| x.col_sq_norm(j)).sum();
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
        x.matvec_t(&xv, &mut av);
        let new_theta: f64 = v.iter().zip(&av).map(|(a, b)| a * b).sum();
        residual = v
            .iter()
            .zip(&av)
            .map(|(&vi, &ai)| (ai - new_theta * vi).powi(2))
            .sum::<f64>()
            .sqrt();
        let done =
            (new_theta - theta).abs() <= 1e-12 * new_theta.abs() && residual <= 1e-6 * new_theta;
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

/// `max_i ||x_i||_2`, computed from the data without privacy. Tagged
/// [`Provenance::DataNonPrivate`].
pub fn max_row_norm<D: Design>(x: &D) -> Tagged<f64> {
    let m = (0..x.n_samples())
        .map(|i| x.row_sq_norm(i))
        .fold(0.0f64, f64::max)
        .sqrt();
    Tagged::data_non_private(m)
}

/// Checks a vector of positive constants (e.g. step-size denominators `M_j`).
pub fn check_positive(name: &'static str, values: &[f64]) -> Result<()> {
    for &v in values {
        positive(name, v)?;
    }
    Ok(())
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
        let p = Tagged {
            value: 3.0,
            provenance: Provenance::PrivatelyEstimated { epsilon: 0.1 },
        };
        assert_eq!(p.require_private(false).unwrap(), 3.0);
    }
}
