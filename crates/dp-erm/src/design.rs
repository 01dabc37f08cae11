//! The designs the pipeline takes: dense ([`DenseDesign`]) and sparse ([`SparseDesign`],
//! compressed sparse columns, e.g. a LIBSVM file or a scipy CSC matrix).
//!
//! [`Pipeline::fit`](crate::Pipeline::fit) is generic over [`PipelineDesign`], sealed to
//! these two. Each record-wise map of the pipeline (row normalisation, clipping and
//! scaling) is a method here, applied to each record alone, so the module docs of
//! [`crate::pipeline`] (replace-one, a record-wise map keeps the guarantee) hold for both
//! layouts.
//!
//! **What differs for a sparse design:** its zeros must stay zeros (a zero is an absent
//! feature, and the solvers skip them). So
//! * the columns are never centred, even with an intercept (centring would fill every
//!   row; the intercept column takes the offset);
//! * every feature range must contain 0 (clipping to a range without 0 would turn every
//!   absent feature into a present one): declared ranges that do not are refused, and a
//!   range computed from the data without privacy always contains 0 (the stored values
//!   and, when a column has any, its implicit zeros);
//! * private ranges ([`crate::FeatureBounds::private`]) are refused: the release is a
//!   private median and a private spread around it, and a column that is mostly zeros
//!   has median 0 and spread 0, so the released range would clip every non-zero value to
//!   the smallest interval of the grid and the feature would vanish from the fit. Declare
//!   a bound instead (e.g. `--feature-bound B`, or `--normalize-rows`, after which every
//!   value is in [-1, 1]).

use crate::error::Result;
use dp_models::split::SelectRows;
use dp_models::{ClipValues, DenseDesign, Design, SparseDesign};
use dp_optim::kernel::ColumnKernels;
use dp_optim::AppendConstantColumn;
use std::borrow::Cow;

mod sealed {
    pub trait Sealed {}
    impl Sealed for dp_models::DenseDesign {}
    impl Sealed for dp_models::SparseDesign {}
}

/// A design the pipeline can fit: [`DenseDesign`] or [`SparseDesign`] (sealed).
pub trait PipelineDesign:
    ColumnKernels + AppendConstantColumn + SelectRows + ClipValues + Clone + sealed::Sealed
{
    /// True for the sparse layout (see the module docs for what that changes).
    const SPARSE: bool;

    /// All `n` values of column `j`, zeros included (borrowed for a dense design; a
    /// sparse one fills a vector of `n`).
    fn column_values(&self, j: usize) -> Cow<'_, [f64]>;

    /// Step 3 of the pipeline, record by record: every value `v` of column `j` becomes
    /// `(clamp(v, lo_j, hi_j) - centres[j]) / scales[j]`, and with `Some(c)` a last
    /// column of the constant `c` is appended (the intercept's). Returns the new design
    /// and, per feature column, how many values were outside their range (a count from
    /// the data, not private). A sparse design keeps its pattern: its ranges contain 0
    /// and its centres are 0 (the caller checks), so a zero stays 0.
    fn clip_and_scale(
        &self,
        ranges: &[(f64, f64)],
        centres: &[f64],
        scales: &[f64],
        constant: Option<f64>,
    ) -> Result<(Self, Vec<usize>)>;

    /// [`PipelineDesign::clip_and_scale`] of a design the caller hands over: the same
    /// values, bit for bit, and the same counts. A dense design is mapped in place and its
    /// intercept column appended in the room its buffer keeps for one (no second `n x p`
    /// buffer: half the memory of a large fit, and one write of the values fewer); a
    /// sparse one is rebuilt as by `clip_and_scale`.
    fn clip_and_scale_owned(
        self,
        ranges: &[(f64, f64)],
        centres: &[f64],
        scales: &[f64],
        constant: Option<f64>,
    ) -> Result<(Self, Vec<usize>)> {
        self.clip_and_scale(ranges, centres, scales, constant)
    }

    /// Every row divided by its Euclidean norm (zero rows unchanged), so that
    /// `||x_i||_2 <= 1` and `|x_ij| <= 1`: a map of each record alone. A dense and a
    /// sparse design of the same matrix give the same values bit for bit (the zeros add
    /// nothing to the squared norm).
    fn normalized_rows(&self) -> Result<Self>;
}

impl PipelineDesign for DenseDesign {
    const SPARSE: bool = false;

    fn column_values(&self, j: usize) -> Cow<'_, [f64]> {
        Cow::Borrowed(self.col(j))
    }

    fn clip_and_scale(
        &self,
        ranges: &[(f64, f64)],
        centres: &[f64],
        scales: &[f64],
        constant: Option<f64>,
    ) -> Result<(Self, Vec<usize>)> {
        let (n, p) = (self.n_samples(), self.n_features());
        let mut clipped = vec![0usize; p];
        // The scaled columns, written straight into the design's buffer, followed by
        // the constant column when there is one. The row-major copy is built only if a
        // row-wise solver (DP-SGD, DP-SCD) asks for it.
        let q = p + usize::from(constant.is_some());
        let x = DenseDesign::from_col_major_with(n, q, |cols| {
            let (scaled, last) = cols.split_at_mut(n * p);
            for (j, out) in scaled.chunks_exact_mut(n).enumerate() {
                let pairs = out.iter_mut().zip(self.col(j).iter().copied());
                clipped[j] = clip_scale_into(pairs, ranges[j], centres[j], scales[j]);
            }
            if let Some(c) = constant {
                last.fill(c);
            }
        })?;
        Ok((x, clipped))
    }

    fn clip_and_scale_owned(
        mut self,
        ranges: &[(f64, f64)],
        centres: &[f64],
        scales: &[f64],
        constant: Option<f64>,
    ) -> Result<(Self, Vec<usize>)> {
        // Column by column on every core for a large design: a map of each value alone,
        // so the same bits and counts as one loop.
        let clipped = self.map_columns_par(|j, col| {
            let pairs = col.iter_mut().map(|v| {
                let x = *v;
                (v, x)
            });
            clip_scale_into(pairs, ranges[j], centres[j], scales[j])
        })?;
        if let Some(c) = constant {
            self.push_constant_column(c)?;
        }
        Ok((self, clipped))
    }

    fn normalized_rows(&self) -> Result<Self> {
        Ok(dp_models::preprocess::normalize_rows(self)?)
    }
}

/// Step 3's map of one dense column: every `(out, v)` pair gets
/// `out = (clamp(v, lo, hi) - c) / s`; returns how many `v` were outside `[lo, hi]`. The
/// one loop of the borrowed path (`out` in a new design, `v` from the old) and the owned
/// one (`out` is `v`'s own place), so that both give the same bits and counts.
#[inline(always)]
fn clip_scale_into<'a>(
    pairs: impl Iterator<Item = (&'a mut f64, f64)>,
    (lo, hi): (f64, f64),
    c: f64,
    s: f64,
) -> usize {
    let mut k = 0usize;
    for (out, v) in pairs {
        k += usize::from(v < lo || v > hi);
        *out = (v.clamp(lo, hi) - c) / s;
    }
    k
}

impl PipelineDesign for SparseDesign {
    const SPARSE: bool = true;

    fn column_values(&self, j: usize) -> Cow<'_, [f64]> {
        let mut v = vec![0.0; self.n_samples()];
        self.for_each_in_col(j, |i, x| v[i] = x);
        Cow::Owned(v)
    }

    fn clip_and_scale(
        &self,
        ranges: &[(f64, f64)],
        centres: &[f64],
        scales: &[f64],
        constant: Option<f64>,
    ) -> Result<(Self, Vec<usize>)> {
        let (n, p) = (self.n_samples(), self.n_features());
        let mut triplets = Vec::with_capacity(self.nnz() + if constant.is_some() { n } else { 0 });
        let mut clipped = Vec::with_capacity(p);
        for (j, &(lo, hi)) in ranges.iter().enumerate() {
            let (c, s) = (centres[j], scales[j]);
            let mut k = 0usize;
            // Implicit zeros: 0 lies in the range and c = 0, so they stay 0 and are
            // never clipped.
            self.for_each_in_col(j, |i, v| {
                if v < lo || v > hi {
                    k += 1;
                }
                triplets.push((i, j, (v.clamp(lo, hi) - c) / s));
            });
            clipped.push(k);
        }
        let q = match constant {
            Some(c) => {
                triplets.extend((0..n).map(|i| (i, p, c)));
                p + 1
            }
            None => p,
        };
        Ok((SparseDesign::from_triplets(n, q, &triplets)?, clipped))
    }

    fn normalized_rows(&self) -> Result<Self> {
        let (n, p) = (self.n_samples(), self.n_features());
        let mut triplets = Vec::with_capacity(self.nnz());
        for i in 0..n {
            let (idx, val) = self.row(i);
            // The same arithmetic as dp_models::preprocess::normalize_rows on the dense
            // row (whose zeros add exactly 0 to the sum).
            let norm = val.iter().map(|v| v * v).sum::<f64>().sqrt();
            let s = if norm > 0.0 { 1.0 / norm } else { 1.0 };
            triplets.extend(idx.iter().zip(val).map(|(&j, &v)| (i, j, v * s)));
        }
        Ok(SparseDesign::from_triplets(n, p, &triplets)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense() -> DenseDesign {
        DenseDesign::from_row_major(
            4,
            3,
            &[
                1.0, 0.0, -2.0, //
                0.0, 0.0, 0.0, //
                3.0, -4.0, 0.0, //
                0.0, 0.5, 7.0,
            ],
        )
        .unwrap()
    }

    fn bits<D: Design>(x: &D) -> Vec<u64> {
        let (n, p) = (x.n_samples(), x.n_features());
        let mut out = vec![0u64; n * p];
        for i in 0..n {
            x.for_each_in_row(i, |j, v| out[i * p + j] = v.to_bits());
        }
        out
    }

    /// The two layouts give the same values, bit for bit, for both record-wise maps.
    #[test]
    fn dense_and_sparse_maps_agree() {
        let d = dense();
        let s = SparseDesign::from_dense(&d);
        assert_eq!(
            bits(&d.normalized_rows().unwrap()),
            bits(&s.normalized_rows().unwrap())
        );
        let ranges = [(-1.5, 1.5), (-3.0, 2.0), (-10.0, 5.0)];
        let centres = [0.0; 3];
        let scales = [1.5, 3.0, 10.0];
        let (dc, dk) = d.clip_and_scale(&ranges, &centres, &scales, None).unwrap();
        let (sc, sk) = s.clip_and_scale(&ranges, &centres, &scales, None).unwrap();
        assert_eq!(bits(&dc), bits(&sc));
        assert_eq!(dk, vec![1, 1, 1]);
        assert_eq!(dk, sk);
        // The sparse pattern is kept: no new non-zeros.
        assert_eq!(sc.nnz(), s.nnz());
        // With the intercept's constant column.
        let (dc, _) = d
            .clip_and_scale(&ranges, &centres, &scales, Some(0.5))
            .unwrap();
        let (sc, _) = s
            .clip_and_scale(&ranges, &centres, &scales, Some(0.5))
            .unwrap();
        assert_eq!(bits(&dc), bits(&sc));
        assert_eq!(sc.n_features(), 4);
        // Column values, zeros included.
        assert_eq!(s.column_values(1).as_ref(), d.col(1));
    }

    /// A zero row stays zero; every other row gets norm 1.
    #[test]
    fn normalized_rows_have_unit_norm() {
        let s = SparseDesign::from_dense(&dense())
            .normalized_rows()
            .unwrap();
        for i in 0..4 {
            let r = s.row_sq_norm(i);
            if i == 1 {
                assert_eq!(r, 0.0);
            } else {
                assert!((r - 1.0).abs() < 1e-15, "row {i}: {r}");
            }
        }
    }
}
