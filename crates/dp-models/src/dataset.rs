//! A design matrix with its labels.

use crate::design::Design;
use crate::error::{ModelError, Result};
use crate::loss::Loss;

/// `n` samples: a design `X` (n x p) and labels `y` (length n), validated together.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset<D: Design> {
    x: D,
    y: Vec<f64>,
}

impl<D: Design> Dataset<D> {
    /// Pairs a design with its labels. Fails when the lengths differ, when there are no
    /// samples, or when a label is NaN or infinite.
    pub fn new(x: D, y: Vec<f64>) -> Result<Self> {
        if y.len() != x.n_samples() {
            return Err(ModelError::Shape(format!(
                "design has {} rows but {} labels were given",
                x.n_samples(),
                y.len()
            )));
        }
        if y.is_empty() {
            return Err(ModelError::Empty("no samples".into()));
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(ModelError::NonFinite {
                what: "labels",
                location: format!("sample {i}"),
                value: y[i],
            });
        }
        Ok(Self { x, y })
    }

    /// The design.
    pub fn x(&self) -> &D {
        &self.x
    }
    /// The design, mutably, for in-place maps that keep its shape and finiteness
    /// (e.g. [`crate::preprocess::clip_to_bound`]).
    pub(crate) fn x_mut(&mut self) -> &mut D {
        &mut self.x
    }
    /// The labels.
    pub fn y(&self) -> &[f64] {
        &self.y
    }
    /// Number of samples `n`.
    pub fn n_samples(&self) -> usize {
        self.x.n_samples()
    }
    /// Number of features `p`.
    pub fn n_features(&self) -> usize {
        self.x.n_features()
    }
    /// Checks the labels suit `loss`: classification losses need every label in {-1, +1}.
    pub fn check_labels_for<L: Loss + ?Sized>(&self, loss: &L) -> Result<()> {
        if loss.is_classification() {
            if let Some(i) = self.y.iter().position(|&v| v != 1.0 && v != -1.0) {
                return Err(ModelError::InvalidParameter {
                    name: "label",
                    value: self.y[i],
                    expected: "the loss is a classification loss: labels must be -1 or +1",
                });
            }
        }
        Ok(())
    }
    /// Splits into design and labels.
    pub fn into_parts(self) -> (D, Vec<f64>) {
        (self.x, self.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DenseDesign, Logistic, Squared};

    #[test]
    fn validates_shapes_and_labels() {
        let x = DenseDesign::from_row_major(2, 1, &[1.0, 2.0]).unwrap();
        assert!(matches!(
            Dataset::new(x.clone(), vec![1.0]),
            Err(ModelError::Shape(_))
        ));
        assert!(Dataset::new(x.clone(), vec![1.0, f64::INFINITY]).is_err());
        let d = Dataset::new(x, vec![1.0, 0.5]).unwrap();
        assert!(d.check_labels_for(&Squared::half()).is_ok());
        let e = d.check_labels_for(&Logistic).unwrap_err();
        assert!(e.to_string().contains("label"), "{e}");
    }
}
