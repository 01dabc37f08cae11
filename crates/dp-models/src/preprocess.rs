//! Feature preprocessing: the papers' column scalings (dense designs) and clipping to a
//! declared public bound (dense and sparse).
//!
//! # Privacy
//!
//! **None of the column scalings is private.** Each reads statistics of the whole design (means,
//! standard deviations, maxima) and bakes them into every transformed row, so a model
//! trained on the output depends on every sample through them, and no privacy
//! guarantee covers that dependence. The DP-CD paper standardises without charging the
//! budget (Mangold et al. 2022, Sec. 6.2); do so only to reproduce such experiments, and report it.
//! [`normalize_rows`] is the exception in spirit: it is a per-row map, so it touches no
//! other sample and costs no privacy, but it changes the problem being solved.
//! [`clip_to_bound`] is a per-value map with a bound chosen without looking at the
//! data, so it costs no privacy either; the count it returns, however, is computed from
//! the data without privacy.

use crate::dataset::Dataset;
use crate::design::{ClipValues, DenseDesign, Design};
use crate::error::{ModelError, Result};

/// Clips every feature value of `data` to `[-bound, bound]`, so that the declared
/// public bound `|x_ij| <= bound` holds, and returns how many values were changed.
///
/// Works on dense and sparse designs (sparse zeros stay zero). `bound` must be finite
/// and > 0, else a [`ModelError::InvalidParameter`] naming `bound` and nothing changes.
///
/// # Privacy
///
/// Clipping to a bound chosen without looking at the data is a per-value map: it
/// touches no other sample and costs no privacy, and it makes smoothness constants
/// derived from the bound valid. The returned count is a statistic of the data
/// computed **without** privacy: report it to the analyst, do not publish it.
///
/// ```
/// use dp_models::preprocess::clip_to_bound;
/// use dp_models::{Dataset, DenseDesign, Design};
///
/// let x = DenseDesign::from_row_major(2, 2, &[0.5, -7.0, 3.0, 1.0])?;
/// let mut data = Dataset::new(x, vec![1.0, -1.0])?;
/// assert_eq!(clip_to_bound(&mut data, 1.0)?, 2);
/// assert_eq!(data.x().row(0), &[0.5, -1.0]);
/// assert_eq!(data.x().row(1), &[1.0, 1.0]);
/// assert!(clip_to_bound(&mut data, 0.0).is_err());
/// # Ok::<(), dp_models::ModelError>(())
/// ```
pub fn clip_to_bound<D: ClipValues>(data: &mut Dataset<D>, bound: f64) -> Result<usize> {
    data.x_mut().clip_values(bound)
}

/// A per-column affine map `x_ij -> (x_ij - shift_j) / scale_j`, as fitted by
/// [`standardize`] or [`max_abs_scale`], so the same map can be applied to other data.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnScaling {
    /// Subtracted from each column.
    pub shift: Vec<f64>,
    /// Each shifted column is divided by this (always > 0).
    pub scale: Vec<f64>,
}

impl ColumnScaling {
    /// Applies the map to a design with the same number of columns.
    pub fn apply(&self, x: &DenseDesign) -> Result<DenseDesign> {
        let (n, p) = (x.n_samples(), x.n_features());
        if p != self.shift.len() {
            return Err(ModelError::Shape(format!(
                "scaling was fitted on {} columns, the design has {p}",
                self.shift.len()
            )));
        }
        let mut out = Vec::with_capacity(n * p);
        for j in 0..p {
            let (a, s) = (self.shift[j], self.scale[j]);
            out.extend(x.col(j).iter().map(|&v| (v - a) / s));
        }
        DenseDesign::from_col_major(n, p, &out)
    }
}

/// Zero mean and unit (population, `1/n`) variance per column. Constant columns are
/// centred to zero and left unscaled (scale 1). Not private: see the module docs.
pub fn standardize(x: &DenseDesign) -> Result<(DenseDesign, ColumnScaling)> {
    let n = x.n_samples() as f64;
    let p = x.n_features();
    let mut shift = Vec::with_capacity(p);
    let mut scale = Vec::with_capacity(p);
    for j in 0..p {
        let col = x.col(j);
        let mean = col.iter().sum::<f64>() / n;
        let var = col.iter().map(|&v| (v - mean) * (v - mean)).sum::<f64>() / n;
        let sd = var.sqrt();
        shift.push(mean);
        scale.push(if sd > 0.0 && sd.is_finite() { sd } else { 1.0 });
    }
    let s = ColumnScaling { shift, scale };
    Ok((s.apply(x)?, s))
}

/// Each column divided by its maximum absolute value, so every feature lies in
/// `[-1, 1]` (zero columns unchanged). No centring, so sparsity is kept in spirit.
/// Not private: see the module docs.
pub fn max_abs_scale(x: &DenseDesign) -> Result<(DenseDesign, ColumnScaling)> {
    let p = x.n_features();
    let scale = (0..p)
        .map(|j| {
            let m = x.col_max_abs(j);
            if m > 0.0 {
                m
            } else {
                1.0
            }
        })
        .collect();
    let s = ColumnScaling {
        shift: vec![0.0; p],
        scale,
    };
    Ok((s.apply(x)?, s))
}

/// Each row scaled to unit Euclidean norm (zero rows unchanged), so `||x_i||_2 <= 1`
/// holds as a public bound afterwards. A per-row map: it reads no other sample.
pub fn normalize_rows(x: &DenseDesign) -> Result<DenseDesign> {
    let (n, p) = (x.n_samples(), x.n_features());
    let mut rows = Vec::with_capacity(n * p);
    for i in 0..n {
        let r = x.row(i);
        let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
        let s = if norm > 0.0 { 1.0 / norm } else { 1.0 };
        rows.extend(r.iter().map(|&v| v * s));
    }
    DenseDesign::from_row_major(n, p, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> DenseDesign {
        DenseDesign::from_row_major(3, 3, &[1.0, 5.0, 2.0, 3.0, 5.0, -4.0, 8.0, 5.0, 0.0]).unwrap()
    }

    #[test]
    fn standardize_gives_zero_mean_unit_variance() {
        let (s, sc) = standardize(&x()).unwrap();
        for j in [0, 2] {
            let c = s.col(j);
            let mean: f64 = c.iter().sum::<f64>() / 3.0;
            let var: f64 = c.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 3.0;
            assert!(
                mean.abs() < 1e-15 && (var - 1.0).abs() < 1e-14,
                "{j}: {mean} {var}"
            );
        }
        // Constant column: centred, scale 1.
        assert_eq!(s.col(1), &[0.0, 0.0, 0.0]);
        assert_eq!(sc.scale[1], 1.0);
        assert_eq!(sc.shift[0], 4.0);
        assert!(sc
            .apply(&DenseDesign::from_row_major(1, 2, &[1.0, 2.0]).unwrap())
            .is_err());
    }

    #[test]
    fn max_abs_and_row_norms() {
        let (m, _) = max_abs_scale(&x()).unwrap();
        assert_eq!(m.col(0), &[0.125, 0.375, 1.0]);
        assert_eq!(m.col(2), &[0.5, -1.0, 0.0]);
        let r = normalize_rows(&x()).unwrap();
        for i in 0..3 {
            let s: f64 = r.row(i).iter().map(|v| v * v).sum();
            assert!((s - 1.0).abs() < 1e-15);
        }
        let z = DenseDesign::from_row_major(1, 2, &[0.0, 0.0]).unwrap();
        assert_eq!(normalize_rows(&z).unwrap().row(0), &[0.0, 0.0]);
    }

    #[test]
    fn clip_to_bound_counts_dense_and_sparse_alike() {
        use crate::SparseDesign;
        // x() = [[1, 5, 2], [3, 5, -4], [8, 5, 0]]: 6 values beyond 2.5 (5 three times,
        // 3, -4, 8), 2 at or within it besides the zero.
        let mut dense = Dataset::new(x(), vec![1.0, 2.0, 3.0]).unwrap();
        let mut sparse = Dataset::new(SparseDesign::from_dense(&x()), vec![1.0, 2.0, 3.0]).unwrap();
        assert_eq!(clip_to_bound(&mut dense, 2.5).unwrap(), 6);
        assert_eq!(clip_to_bound(&mut sparse, 2.5).unwrap(), 6);
        assert_eq!(dense.x().row(1), &[2.5, 2.5, -2.5]);
        assert_eq!(dense.x().col(0), &[1.0, 2.5, 2.5]);
        assert_eq!(sparse.x().row(2), (&[0usize, 1][..], &[2.5, 2.5][..]));
        assert_eq!(dense.y(), &[1.0, 2.0, 3.0]);
        assert_eq!(clip_to_bound(&mut dense, 2.5).unwrap(), 0);
        assert_eq!(clip_to_bound(&mut dense, 100.0).unwrap(), 0);
        for bad in [0.0, -2.0, f64::NAN, f64::NEG_INFINITY, f64::INFINITY] {
            let e = clip_to_bound(&mut sparse, bad).unwrap_err();
            assert!(
                e.to_string().starts_with("invalid bound = ") && e.to_string().contains("> 0"),
                "{e}"
            );
        }
    }
}
