//! The composite objective `F(w) = (1/n) sum_{i=1}^n phi(x_i^T w, y_i) + psi(w)`.
//!
//! The scaling is exact: the data-fit term is the *mean* of the per-sample losses (no
//! `1/2` beyond what the [`Loss`] itself contains, see [`crate::Squared`]), and the
//! penalty `psi` is added once, unscaled.
//!
//! Coordinate methods keep the predictor `z = X w` up to date: a coordinate of the
//! gradient, `grad_j f(w) = (1/n) sum_i phi'(z_i, y_i) x_ij`, then costs one pass over
//! column `j` (O(nnz of the column)), and a coordinate move `w_j += delta` costs another
//! ([`Objective::update_predictor`]). None of the per-coordinate methods allocate.

use crate::constants::{coordinate_smoothness, Tagged};
use crate::dataset::Dataset;
use crate::design::Design;
use crate::error::{ModelError, Result};
use crate::loss::Loss;
use crate::penalty::Penalty;

/// A dataset, a per-sample loss and a separable penalty, checked to fit together.
#[derive(Debug)]
pub struct Objective<'a, D: Design, L: Loss + ?Sized, P: Penalty + ?Sized> {
    data: &'a Dataset<D>,
    loss: &'a L,
    penalty: &'a P,
    inv_n: f64,
}

// Manual impls: the struct only holds references.
impl<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized> Clone for Objective<'_, D, L, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D: Design, L: Loss + ?Sized, P: Penalty + ?Sized> Copy for Objective<'_, D, L, P> {}

fn check_len(what: &str, got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(ModelError::Shape(format!(
            "{what} has length {got}, expected {expected}"
        )))
    }
}

impl<'a, D: Design, L: Loss + ?Sized, P: Penalty + ?Sized> Objective<'a, D, L, P> {
    /// Pairs data, loss and penalty. Fails when the labels do not suit the loss
    /// (classification losses need labels in {-1, +1}) or when the penalty's
    /// per-coordinate parameters do not have one entry per feature.
    pub fn new(data: &'a Dataset<D>, loss: &'a L, penalty: &'a P) -> Result<Self> {
        data.check_labels_for(loss)?;
        penalty.check_dimension(data.n_features())?;
        Ok(Self {
            data,
            loss,
            penalty,
            inv_n: 1.0 / data.n_samples() as f64,
        })
    }

    /// The dataset.
    pub fn data(&self) -> &'a Dataset<D> {
        self.data
    }
    /// The design `X`.
    pub fn x(&self) -> &'a D {
        self.data.x()
    }
    /// The labels `y`.
    pub fn y(&self) -> &'a [f64] {
        self.data.y()
    }
    /// The loss.
    pub fn loss(&self) -> &'a L {
        self.loss
    }
    /// The penalty.
    pub fn penalty(&self) -> &'a P {
        self.penalty
    }
    /// Number of samples `n`.
    pub fn n_samples(&self) -> usize {
        self.data.n_samples()
    }
    /// Number of features `p`.
    pub fn n_features(&self) -> usize {
        self.data.n_features()
    }

    /// `out = X w` (length `n`).
    pub fn predictor(&self, w: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("w", w.len(), self.n_features())?;
        check_len("predictor", out.len(), self.n_samples())?;
        self.x().matvec(w, out);
        Ok(())
    }

    /// `F(w)`; allocates the predictor once.
    pub fn value(&self, w: &[f64]) -> Result<f64> {
        let mut z = vec![0.0; self.n_samples()];
        self.predictor(w, &mut z)?;
        self.value_from_predictor(w, &z)
    }

    /// `F(w)` given the predictor `z = X w` (not checked to be consistent with `w`).
    pub fn value_from_predictor(&self, w: &[f64], z: &[f64]) -> Result<f64> {
        check_len("w", w.len(), self.n_features())?;
        Ok(self.data_fit(z)? + self.penalty.value(w))
    }

    /// The data-fit term `f = (1/n) sum_i phi(z_i, y_i)` at the predictor `z`.
    pub fn data_fit(&self, z: &[f64]) -> Result<f64> {
        check_len("predictor", z.len(), self.n_samples())?;
        let s: f64 = z
            .iter()
            .zip(self.y())
            .map(|(&zi, &yi)| self.loss.value(zi, yi))
            .sum();
        Ok(s * self.inv_n)
    }

    /// `grad_j f(w) = (1/n) sum_i phi'(z_i, y_i) x_ij` from the maintained predictor
    /// `z = X w`, in one pass over the stored entries of column `j`; no allocation.
    ///
    /// Hot path: `j < p` and `z.len() == n` are the caller's responsibility (it may panic
    /// otherwise, as slice indexing does).
    #[inline]
    pub fn coordinate_gradient(&self, j: usize, z: &[f64]) -> f64 {
        let loss = self.loss;
        let s = self
            .x()
            .col_sum_map(j, z, self.y(), |x, zi, yi| loss.derivative(zi, yi) * x);
        s * self.inv_n
    }

    /// Keeps the predictor in sync after `w_j += delta`: `z += delta X_{:,j}`.
    /// Does nothing when `delta == 0`. Same preconditions as
    /// [`Objective::coordinate_gradient`].
    #[inline]
    pub fn update_predictor(&self, j: usize, delta: f64, z: &mut [f64]) {
        if delta != 0.0 {
            self.x().col_axpy(j, delta, z);
        }
    }

    /// `out_i = phi'(z_i, y_i)`, the per-sample loss derivatives (length `n`).
    pub fn derivatives(&self, z: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("predictor", z.len(), self.n_samples())?;
        check_len("derivatives", out.len(), self.n_samples())?;
        for ((o, &zi), &yi) in out.iter_mut().zip(z).zip(self.y()) {
            *o = self.loss.derivative(zi, yi);
        }
        Ok(())
    }

    /// The full gradient of the data-fit term, `out = (1/n) X^T phi'(z, y)`, from the
    /// predictor `z` (length `n`); `out` has length `p`. O(nnz), no allocation.
    pub fn gradient(&self, z: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("predictor", z.len(), self.n_samples())?;
        check_len("gradient", out.len(), self.n_features())?;
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.coordinate_gradient(j, z);
        }
        Ok(())
    }

    /// Coordinate-wise smoothness constants `M_j = (c/n) ||X_{:,j}||^2` of the data-fit term
    /// (see [`coordinate_smoothness`]), tagged as computed from the data without privacy.
    pub fn coordinate_smoothness(&self) -> Result<Tagged<Vec<f64>>> {
        coordinate_smoothness(self.loss, self.x())
    }

    /// `max_j dist(-grad_j f(w), d psi_j(w_j))`: the largest per-coordinate violation of the
    /// optimality condition `0 in grad f(w) + d psi(w)`, from the predictor `z = X w`.
    /// Zero exactly at a minimiser of a convex problem.
    pub fn kkt_violation(&self, w: &[f64], z: &[f64]) -> Result<f64> {
        check_len("w", w.len(), self.n_features())?;
        check_len("predictor", z.len(), self.n_samples())?;
        let mut m = 0.0f64;
        for (j, &wj) in w.iter().enumerate() {
            let g = self.coordinate_gradient(j, z);
            m = m.max(self.penalty.subdiff_distance(j, wj, g));
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        DenseDesign, ElasticNet, Huber, Logistic, NoPenalty, SparseDesign, Squared, SquaredHinge,
        L1,
    };

    fn data(classification: bool) -> Dataset<DenseDesign> {
        let x = DenseDesign::from_row_major(
            5,
            3,
            &[
                1.0, 2.0, 0.0, //
                -1.0, 0.5, 3.0, //
                2.0, 0.0, -1.0, //
                0.5, 1.5, 2.0, //
                0.0, -2.0, 1.0,
            ],
        )
        .unwrap();
        let y = if classification {
            vec![1.0, -1.0, 1.0, 1.0, -1.0]
        } else {
            vec![0.3, -1.2, 2.0, 0.7, -0.1]
        };
        Dataset::new(x, y).unwrap()
    }

    /// Central finite differences of F along every coordinate, for every smooth loss.
    fn check_fd<L: Loss>(loss: &L, classification: bool) {
        let d = data(classification);
        let obj = Objective::new(&d, loss, &NoPenalty).unwrap();
        for w in [[0.1, -0.2, 0.3], [1.5, 0.7, -2.0], [-0.4, 0.0, 0.9]] {
            let mut z = vec![0.0; 5];
            obj.predictor(&w, &mut z).unwrap();
            let mut g = vec![0.0; 3];
            obj.gradient(&z, &mut g).unwrap();
            for j in 0..3 {
                let h = 1e-6;
                let (mut wp, mut wm) = (w, w);
                wp[j] += h;
                wm[j] -= h;
                let fd = (obj.value(&wp).unwrap() - obj.value(&wm).unwrap()) / (2.0 * h);
                let cg = obj.coordinate_gradient(j, &z);
                assert_eq!(cg, g[j]);
                assert!(
                    (cg - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                    "{} w={w:?} j={j}: {cg} vs {fd}",
                    loss.name()
                );
            }
        }
    }

    #[test]
    fn coordinate_gradients_match_finite_differences() {
        check_fd(&Squared::half(), false);
        check_fd(&Squared::full(), false);
        check_fd(&Huber::new(0.8).unwrap(), false);
        check_fd(&Logistic, true);
        check_fd(&SquaredHinge, true);
    }

    #[test]
    fn predictor_updates_and_values() {
        let d = data(false);
        let pen = L1::new(0.5).unwrap();
        let loss = Squared::half();
        let obj = Objective::new(&d, &loss, &pen).unwrap();
        let mut w = vec![0.2, -0.1, 0.4];
        let mut z = vec![0.0; 5];
        obj.predictor(&w, &mut z).unwrap();
        w[1] += 0.3;
        obj.update_predictor(1, 0.3, &mut z);
        let mut z2 = vec![0.0; 5];
        obj.predictor(&w, &mut z2).unwrap();
        for (a, b) in z.iter().zip(&z2) {
            assert!((a - b).abs() < 1e-15);
        }
        // F by hand: mean of 1/2 (z - y)^2 plus 0.5 * ||w||_1.
        let y = d.y();
        let fit: f64 = z2
            .iter()
            .zip(y)
            .map(|(a, b)| 0.5 * (a - b) * (a - b))
            .sum::<f64>()
            / 5.0;
        let expect = fit + 0.5 * (0.2 + 0.2 + 0.4);
        assert!((obj.value(&w).unwrap() - expect).abs() < 1e-14);
        assert!(obj.value(&[1.0]).is_err());
        assert!(obj.predictor(&w, &mut [0.0; 4]).is_err());
    }

    #[test]
    fn rejects_mismatched_inputs() {
        let d = data(false);
        assert!(Objective::new(&d, &Logistic, &NoPenalty).is_err());
        let pen = ElasticNet::new(1.0, 1.0)
            .unwrap()
            .with_weights(vec![1.0; 2])
            .unwrap();
        assert!(Objective::new(&d, &Squared::half(), &pen).is_err());
    }

    #[test]
    fn sparse_agrees_with_dense() {
        let d = data(true);
        let s = Dataset::new(SparseDesign::from_dense(d.x()), d.y().to_vec()).unwrap();
        let od = Objective::new(&d, &Logistic, &NoPenalty).unwrap();
        let os = Objective::new(&s, &Logistic, &NoPenalty).unwrap();
        let w = [0.3, -0.7, 0.2];
        let (mut zd, mut zs) = (vec![0.0; 5], vec![0.0; 5]);
        od.predictor(&w, &mut zd).unwrap();
        os.predictor(&w, &mut zs).unwrap();
        for j in 0..3 {
            let (a, b) = (
                od.coordinate_gradient(j, &zd),
                os.coordinate_gradient(j, &zs),
            );
            assert!((a - b).abs() < 1e-15, "{a} vs {b}");
        }
        assert!((od.value(&w).unwrap() - os.value(&w).unwrap()).abs() < 1e-15);
    }
}
