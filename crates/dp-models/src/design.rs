//! Design matrices: the `n x p` feature matrix `X` behind one abstraction.
//!
//! Coordinate methods need fast access to a column (`X_{:,j}`); stochastic and dual
//! methods need fast access to a row (`x_i`). Both implementations keep both layouts:
//!
//! * [`DenseDesign`]: column-major storage plus a row-major copy (built by
//!   [`DenseDesign::from_matrix_deferred_rows`] only on the first row access, so that
//!   coordinate methods on large designs hold one copy). Both are [`F64Buf`]s: large
//!   ones live on transparent huge pages ([`crate::pages`]), which the column sweeps of
//!   the coordinate methods read about 1.6x faster than 4 KiB pages.
//! * [`SparseDesign`]: compressed sparse columns (CSC) plus a compressed sparse rows (CSR)
//!   copy; only non-zeros are visited.
//!
//! Solvers are generic over [`Design`], so the column loops inline and allocate nothing.

use crate::error::{ModelError, Result};
use crate::pages::F64Buf;
use nalgebra::{DMatrix, DMatrixView};
use rayon::prelude::*;
use std::sync::OnceLock;

/// Read access to an `n x p` design matrix, by column and by row.
///
/// All methods take indices that the caller guarantees to be in range
/// (`j < n_features()`, `i < n_samples()`) and slices of the right length
/// (`n_samples()` for column operations, `n_features()` for row operations); they may
/// panic otherwise, as slice indexing does. User-facing constructors validate shapes.
pub trait Design: Send + Sync {
    /// Number of samples `n` (rows).
    fn n_samples(&self) -> usize;
    /// Number of features `p` (columns).
    fn n_features(&self) -> usize;
    /// Number of stored entries (n * p for dense designs).
    fn nnz(&self) -> usize;
    /// Number of stored entries of column `j`.
    fn col_nnz(&self, j: usize) -> usize;

    /// Calls `f(i, x_ij)` for every stored entry of column `j`, in increasing `i`.
    fn for_each_in_col<F: FnMut(usize, f64)>(&self, j: usize, f: F);
    /// Calls `f(j, x_ij)` for every stored entry of row `i`, in increasing `j`.
    fn for_each_in_row<F: FnMut(usize, f64)>(&self, i: usize, f: F);

    /// Calls `f(i, x_ij, a_i, b_i)` for every stored entry of column `j`, in increasing `i`
    /// (`a`, `b` have length `n`). The workhorse of coordinate gradients: with `a` the
    /// predictor and `b` the labels, `f` sees everything a per-sample term needs, and the
    /// dense implementation runs without bounds checks.
    fn for_each_in_col_zip<F: FnMut(usize, f64, f64, f64)>(
        &self,
        j: usize,
        a: &[f64],
        b: &[f64],
        mut f: F,
    ) {
        self.for_each_in_col(j, |i, x| f(i, x, a[i], b[i]));
    }
    /// `sum_i f(x_ij, a_i, b_i)` over the stored entries of column `j` (`a`, `b` have
    /// length `n`; `f` must be 0 when `x_ij = 0` for dense and sparse results to agree).
    /// The dense implementation keeps four independent partial sums so that the loop
    /// pipelines (and vectorises when `f` does), so the summation order differs from a
    /// sequential sum by rounding only.
    fn col_sum_map<F: FnMut(f64, f64, f64) -> f64>(
        &self,
        j: usize,
        a: &[f64],
        b: &[f64],
        mut f: F,
    ) -> f64 {
        let mut s = 0.0;
        self.for_each_in_col_zip(j, a, b, |_, x, ai, bi| s += f(x, ai, bi));
        s
    }
    /// `sum_i x_ij v_i`.
    fn col_dot(&self, j: usize, v: &[f64]) -> f64 {
        let mut s = 0.0;
        self.for_each_in_col(j, |i, x| s += x * v[i]);
        s
    }
    /// `out_i += a x_ij` for all `i`.
    fn col_axpy(&self, j: usize, a: f64, out: &mut [f64]) {
        self.for_each_in_col(j, |i, x| out[i] += a * x);
    }
    /// `sum_i x_ij^2`.
    fn col_sq_norm(&self, j: usize) -> f64 {
        let mut s = 0.0;
        self.for_each_in_col(j, |_, x| s += x * x);
        s
    }
    /// `max_i |x_ij|` (0 for an empty column).
    fn col_max_abs(&self, j: usize) -> f64 {
        let mut m = 0.0f64;
        self.for_each_in_col(j, |_, x| m = m.max(x.abs()));
        m
    }
    /// `x_i^T w`.
    fn row_dot(&self, i: usize, w: &[f64]) -> f64 {
        let mut s = 0.0;
        self.for_each_in_row(i, |j, x| s += x * w[j]);
        s
    }
    /// `out += a x_i`.
    fn row_axpy(&self, i: usize, a: f64, out: &mut [f64]) {
        self.for_each_in_row(i, |j, x| out[j] += a * x);
    }
    /// One coordinate step on row `i` in place: `a = step(x_i^T v)`, then
    /// `v += a x_i`; returns `a`. The same result as [`Design::row_dot`] followed by
    /// [`Design::row_axpy`] (the dense implementation fuses them into one vectorised
    /// kernel, `dp_models::simd::rows::dot_axpy`, bit for bit the same).
    #[inline]
    fn row_dot_axpy<F: FnOnce(f64) -> f64>(&self, i: usize, v: &mut [f64], step: F) -> f64 {
        let a = step(self.row_dot(i, v));
        self.row_axpy(i, a, v);
        a
    }
    /// As [`Design::row_dot_axpy`], reading `v` and adding `a x_i` to `out`.
    #[inline]
    fn row_dot_axpy_into<F: FnOnce(f64) -> f64>(
        &self,
        i: usize,
        v: &[f64],
        out: &mut [f64],
        step: F,
    ) -> f64 {
        let a = step(self.row_dot(i, v));
        self.row_axpy(i, a, out);
        a
    }
    /// A hint that row `i` will be read soon (random-order row methods such as dual
    /// coordinate ascent call it one row ahead). It must not change any result; the
    /// default does nothing.
    #[inline]
    fn prefetch_row(&self, _i: usize) {}
    /// A hint that column `j` will be read soon (coordinate methods in random order
    /// call it a few steps ahead, from the data-independent coordinate stream). It must
    /// not change any result; the default does nothing.
    #[inline]
    fn prefetch_col(&self, _j: usize) {}
    /// The first stage of [`Design::prefetch_col`], called further ahead: a hint for
    /// whatever locates column `j` (a sparse design's column pointers). The default
    /// does nothing.
    #[inline]
    fn prefetch_col_start(&self, _j: usize) {}
    /// `||x_i||_2^2`.
    fn row_sq_norm(&self, i: usize) -> f64 {
        let mut s = 0.0;
        self.for_each_in_row(i, |_, x| s += x * x);
        s
    }
    /// `out = X w` (overwrites `out`, length `n`).
    fn matvec(&self, w: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|o| *o = 0.0);
        for (j, &wj) in w.iter().enumerate() {
            if wj != 0.0 {
                self.col_axpy(j, wj, out);
            }
        }
    }
    /// `out = X^T v` (overwrites `out`, length `p`).
    fn matvec_t(&self, v: &[f64], out: &mut [f64]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.col_dot(j, v);
        }
    }
}

/// Designs whose stored values can be clipped in place: every stored value `v` becomes
/// `v.clamp(-bound, bound)`, in both layouts. The shape and the sparsity pattern are
/// kept (a non-zero value stays non-zero since `bound > 0`).
///
/// ```
/// use dp_models::{ClipValues, DenseDesign, Design};
/// let mut x = DenseDesign::from_row_major(2, 2, &[0.5, -3.0, 2.0, 1.0])?;
/// assert_eq!(x.clip_values(1.0)?, 2);
/// assert_eq!(x.row(0), &[0.5, -1.0]);
/// assert_eq!(x.col(0), &[0.5, 1.0]);
/// # Ok::<(), dp_models::ModelError>(())
/// ```
pub trait ClipValues: Design {
    /// Clips every stored value to `[-bound, bound]` and returns how many values
    /// changed (each counted once). `bound` must be finite and > 0; otherwise nothing
    /// changes and the error names the value.
    fn clip_values(&mut self, bound: f64) -> Result<usize>;
    /// Sets the values at the `(row, column)` positions `entries` to 0 and returns how
    /// many changed (a position already 0, or not stored in a sparse design, does not
    /// count). A position outside the design is an error and nothing changes. A sparse
    /// design keeps the position as a stored 0, which every kernel treats as 0. Used to
    /// project records onto a declared support bound (dp-optim's
    /// `RowSupport::project`).
    fn zero_entries(&mut self, entries: &[(usize, usize)]) -> Result<usize>;
}

fn check_positions(entries: &[(usize, usize)], n: usize, p: usize) -> Result<()> {
    if let Some(&(i, j)) = entries.iter().find(|&&(i, j)| i >= n || j >= p) {
        return Err(ModelError::Shape(format!(
            "position (row {i}, column {j}) is outside the {n} x {p} design"
        )));
    }
    Ok(())
}

/// Clips `values` in place, returning how many changed.
fn clip_slice(values: &mut [f64], bound: f64) -> usize {
    let mut changed = 0;
    for v in values {
        if v.abs() > bound {
            *v = v.clamp(-bound, bound);
            changed += 1;
        }
    }
    changed
}

/// The index of the first non-finite value of `values` (in order), or `None`: chunk by
/// chunk with a branch-free test the compiler vectorises (a value is not finite when
/// its exponent bits are all ones), the chunks shared out over every core for a large
/// slice (`position_first`: the same answer as the sequential search), and the value
/// located by a plain search inside the first failing chunk only.
pub fn first_non_finite(values: &[f64]) -> Option<usize> {
    const CHUNK: usize = 1 << 14;
    const EXP: u64 = 0x7ff0_0000_0000_0000;
    let failing = |c: &[f64]| {
        c.iter()
            .fold(0u64, |acc, v| acc | u64::from(v.to_bits() & EXP == EXP))
            != 0
    };
    let chunk = if values.len() >= PAR_MIN_VALUES {
        values.par_chunks(CHUNK).position_first(failing)
    } else {
        values.chunks(CHUNK).position(failing)
    }?;
    let start = chunk * CHUNK;
    values[start..]
        .iter()
        .position(|v| !v.is_finite())
        .map(|i| start + i)
}

fn check_finite_col_major(values: &[f64], n: usize) -> Result<()> {
    if let Some(pos) = first_non_finite(values) {
        return Err(ModelError::NonFinite {
            what: "design",
            location: format!("row {}, column {}", pos % n, pos / n),
            value: values[pos],
        });
    }
    Ok(())
}

/// Dense design, stored column-major (each column contiguous) with a row-major copy.
///
/// Every constructor but [`DenseDesign::from_matrix_deferred_rows`] builds the row-major
/// copy at once; that one builds it on the first row access (`row`, `row_dot`,
/// `row_axpy`, `for_each_in_row`, ...). Equality compares the values only.
#[derive(Debug, Clone)]
pub struct DenseDesign {
    n: usize,
    p: usize,
    /// Column-major values, `n * p`.
    cols: F64Buf,
    rows: OnceLock<F64Buf>,
}

impl PartialEq for DenseDesign {
    fn eq(&self, other: &Self) -> bool {
        // The row-major copy is a function of the columns (built or not yet).
        (self.n, self.p) == (other.n, other.p) && self.cols == other.cols
    }
}

/// The row-major copy of a column-major `n x p` slice.
fn transpose_to_rows(cols: &[f64], n: usize, p: usize) -> F64Buf {
    // Column-major n x p is row-major p x n.
    F64Buf::from_fn(n * p, |rows| transpose_into(cols, p, n, rows))
}

/// Side of the square tiles of [`transpose_into`]: two 32 x 32 tiles of `f64` (16 KiB)
/// stay in a 32 KiB L1 cache.
const TILE: usize = 32;

/// Writes the transpose of the row-major `r x c` matrix `src` into `dst` (row-major
/// `c x r`: `dst[j * r + i] = src[i * c + j]`), tile by tile, so that both the reads and
/// the writes stay within a few cache lines and pages at a time. A plain double loop
/// writes (or reads) with a stride of `8 r` bytes: every access a new cache line and,
/// for large `r`, a new page (a TLB miss), which made the transpose of a 160,000 x 50
/// C-ordered array the largest single cost of a Python fit. Panics if a length is not
/// `r * c`.
///
/// A large matrix (at least [`PAR_MIN_VALUES`] values) is written on every core through
/// `rayon`, split along its longer side so that every piece reads and writes long
/// contiguous runs: by bands of source rows when `r >= c` (a tall C-ordered array: each
/// piece reads one contiguous block of `src` and writes one segment of every `dst`
/// row), by bands of `dst` rows otherwise. (Splitting a tall array by `dst` rows made
/// every piece read the whole source for a few values per row: about 2.5 times the
/// memory traffic.) A copy, so the result is the same however it is split.
pub fn transpose_into(src: &[f64], r: usize, c: usize, dst: &mut [f64]) {
    transpose_checked(src, r, c, dst);
}

/// [`transpose_into`], returning `true` when it has seen that every value is finite
/// (the split by source rows checks the values as it copies them, at no measurable
/// cost: the copy waits on memory); `false` means "not checked or not finite".
fn transpose_checked(src: &[f64], r: usize, c: usize, dst: &mut [f64]) -> bool {
    assert_eq!(src.len(), r * c, "transpose_into: src has the wrong length");
    assert_eq!(dst.len(), r * c, "transpose_into: dst has the wrong length");
    if r == 0 || c == 0 {
        return true;
    }
    if r >= c {
        let mut segs: Vec<&mut [f64]> = dst.chunks_exact_mut(r).collect();
        transpose_src_rows(src, c, 0, &mut segs)
    } else {
        transpose_rows_of_dst(src, r, c, 0, dst);
        false
    }
}

/// Source rows `i0..i0 + len` of [`transpose_into`], where `segs[j]` is the segment
/// `i0..i0 + len` of `dst` row `j` (all of length `len`): split in two bands of source
/// rows run through `rayon::join` while large, then copied tile by tile (a tile reads
/// [`TILE`] consecutive source rows, one contiguous block, and writes [`TILE`] values
/// to every segment).
/// Returns whether every value copied is finite.
fn transpose_src_rows(src: &[f64], c: usize, i0: usize, segs: &mut [&mut [f64]]) -> bool {
    let len = segs.first().map_or(0, |s| s.len());
    if len >= 2 * TILE && len * c >= PAR_MIN_VALUES {
        let h = len / 2 / TILE * TILE;
        let (mut left, mut right): (Vec<&mut [f64]>, Vec<&mut [f64]>) = segs
            .iter_mut()
            .map(|s| std::mem::take(s).split_at_mut(h))
            .unzip();
        let (l, r) = rayon::join(
            || transpose_src_rows(src, c, i0, &mut left),
            || transpose_src_rows(src, c, i0 + h, &mut right),
        );
        return l && r;
    }
    let mut finite = true;
    for t0 in (0..len).step_by(TILE) {
        let t1 = (t0 + TILE).min(len);
        let block = &src[(i0 + t0) * c..(i0 + t1) * c];
        for (j, seg) in segs.iter_mut().enumerate() {
            for (o, row) in seg[t0..t1].iter_mut().zip(block.chunks_exact(c)) {
                let v = row[j];
                finite &= v.is_finite();
                *o = v;
            }
        }
    }
    finite
}

/// Rows `j0..` of `dst` (`dst.len() / r` of them) of [`transpose_into`], split in two
/// halves run through `rayon::join` while large.
fn transpose_rows_of_dst(src: &[f64], r: usize, c: usize, j0: usize, dst: &mut [f64]) {
    // r > 0: `transpose_checked` returns early for an empty matrix.
    let rows = dst.len() / r;
    if rows >= 2 && dst.len() >= PAR_MIN_VALUES {
        let h = rows / 2;
        let (a, b) = dst.split_at_mut(h * r);
        rayon::join(
            || transpose_rows_of_dst(src, r, c, j0, a),
            || transpose_rows_of_dst(src, r, c, j0 + h, b),
        );
        return;
    }
    for i0 in (0..r).step_by(TILE) {
        let i1 = (i0 + TILE).min(r);
        for jt in (0..rows).step_by(TILE) {
            for jl in jt..(jt + TILE).min(rows) {
                let j = j0 + jl;
                let out = &mut dst[jl * r + i0..jl * r + i1];
                for (o, i) in out.iter_mut().zip(i0..i1) {
                    *o = src[i * c + j];
                }
            }
        }
    }
}

/// Size (in values, 8 MiB) from which the passes over a whole design that need no
/// order (the transpose, the finite check, [`DenseDesign::map_columns_par`]) run on
/// every core through `rayon`. Below it the cost of waking the pool is not worth it.
pub const PAR_MIN_VALUES: usize = 1 << 20;

fn check_non_empty(n: usize, p: usize) -> Result<()> {
    if n == 0 || p == 0 {
        return Err(ModelError::Empty(format!(
            "design has {n} rows and {p} columns; need at least one of each"
        )));
    }
    Ok(())
}

impl DenseDesign {
    /// Builds from a column-major matrix. Fails on empty or non-finite data.
    pub fn from_matrix(cols: DMatrix<f64>) -> Result<Self> {
        let (n, p) = cols.shape();
        check_non_empty(n, p)?;
        check_finite_col_major(cols.as_slice(), n)?;
        let rows = transpose_to_rows(cols.as_slice(), n, p);
        Ok(Self {
            n,
            p,
            cols: F64Buf::from_vec(cols.data.into()),
            rows: OnceLock::from(rows),
        })
    }

    /// Builds from a column-major matrix (taken by value; copied onto huge pages when
    /// large, see [`crate::pages`]) without building
    /// the row-major copy: it is built on the first row access, and until then the
    /// design holds `8 n p` bytes instead of `16 n p`. For coordinate methods (CD,
    /// DP-CD, greedy CD, Frank-Wolfe over columns), which read columns only, on designs
    /// too large for two copies. Fails on empty or non-finite data, as
    /// [`DenseDesign::from_matrix`]; the values, and every result computed from them,
    /// are the same.
    ///
    /// ```
    /// use dp_models::{DenseDesign, Design};
    /// use nalgebra::DMatrix;
    /// let x = DenseDesign::from_matrix_deferred_rows(DMatrix::from_vec(2, 2, vec![1.0, 2.0, 3.0, 4.0]))?;
    /// assert!(!x.has_row_copy());
    /// assert_eq!(x.col(1), &[3.0, 4.0]);
    /// assert_eq!(x.row(0), &[1.0, 3.0]); // builds the row-major copy
    /// assert!(x.has_row_copy());
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    pub fn from_matrix_deferred_rows(cols: DMatrix<f64>) -> Result<Self> {
        let (n, p) = cols.shape();
        check_non_empty(n, p)?;
        check_finite_col_major(cols.as_slice(), n)?;
        Ok(Self {
            n,
            p,
            cols: F64Buf::from_vec(cols.data.into()),
            rows: OnceLock::new(),
        })
    }

    /// Builds from `p` columns of `n` values each, given column after column and taken
    /// by value (copied onto huge pages when large, see [`crate::pages`]), without the row-major copy (built on the first row
    /// access, as [`DenseDesign::from_matrix_deferred_rows`]). Fails on a length other
    /// than `n * p`, on empty or on non-finite data.
    ///
    /// ```
    /// use dp_models::{DenseDesign, Design};
    /// let x = DenseDesign::from_col_major_deferred_rows(2, 2, vec![1.0, 2.0, 3.0, 4.0])?;
    /// assert!(!x.has_row_copy());
    /// assert_eq!(x, DenseDesign::from_col_major(2, 2, &[1.0, 2.0, 3.0, 4.0])?);
    /// assert!(DenseDesign::from_col_major_deferred_rows(2, 2, vec![1.0]).is_err());
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    pub fn from_col_major_deferred_rows(n: usize, p: usize, data: Vec<f64>) -> Result<Self> {
        if data.len() != n * p {
            return Err(ModelError::Shape(format!(
                "column-major data has {} values, expected n * p = {n} * {p} = {}",
                data.len(),
                n * p
            )));
        }
        check_non_empty(n, p)?;
        check_finite_col_major(&data, n)?;
        Ok(Self {
            n,
            p,
            cols: F64Buf::from_vec(data),
            rows: OnceLock::new(),
        })
    }

    /// Builds an `n x p` design whose column-major values (column after column) `fill`
    /// writes straight into the design's own buffer (on huge pages when large, see
    /// [`crate::pages`]), without the row-major copy (built on the first row access, as
    /// [`DenseDesign::from_matrix_deferred_rows`]). `fill` receives `n * p` zeros. No
    /// intermediate vector and so no second copy of the values: for callers that
    /// compute the values (a scaling, a layout change) from data they only borrow.
    /// Fails on empty or non-finite data.
    ///
    /// ```
    /// use dp_models::DenseDesign;
    /// let x = DenseDesign::from_col_major_with(2, 2, |v| v.copy_from_slice(&[1.0, 2.0, 3.0, 4.0]))?;
    /// assert!(!x.has_row_copy());
    /// assert_eq!(x, DenseDesign::from_col_major(2, 2, &[1.0, 2.0, 3.0, 4.0])?);
    /// assert!(DenseDesign::from_col_major_with(2, 1, |v| v[1] = f64::NAN).is_err());
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    pub fn from_col_major_with(n: usize, p: usize, fill: impl FnOnce(&mut [f64])) -> Result<Self> {
        Self::from_col_major_filled(n, p, |cols| {
            fill(cols);
            false
        })
    }

    /// [`DenseDesign::from_col_major_with`] for a `fill` that returns `true` when it has
    /// checked that every value it wrote is finite (the separate check is then skipped;
    /// `false` runs it).
    fn from_col_major_filled(
        n: usize,
        p: usize,
        fill: impl FnOnce(&mut [f64]) -> bool,
    ) -> Result<Self> {
        check_non_empty(n, p)?;
        let len = n.checked_mul(p).ok_or_else(|| {
            ModelError::Shape(format!(
                "a design of {n} x {p} values does not fit in memory"
            ))
        })?;
        // Room for one more column (address space only, see `F64Buf::from_fn_with_spare`):
        // the pipeline appends its intercept column to the design it clips and scales in
        // place ([`DenseDesign::push_constant_column`]) without moving the others.
        let mut checked = false;
        let cols = F64Buf::from_fn_with_spare(len, n, |v| checked = fill(v));
        if !checked {
            check_finite_col_major(&cols, n)?;
        }
        Ok(Self {
            n,
            p,
            cols,
            rows: OnceLock::new(),
        })
    }

    /// Applies `f(j, column_j)` to every column in place (column `j`'s `n` values,
    /// mutable), for record-wise maps of a design the caller owns, without a second
    /// buffer. The row-major copy, if built, is dropped (rebuilt on the next row access).
    /// Fails if a value is not finite afterwards; the values are then unspecified, so a
    /// caller drops the design on error.
    ///
    /// ```
    /// use dp_models::DenseDesign;
    /// let mut x = DenseDesign::from_col_major(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
    /// x.map_columns(|j, col| col.iter_mut().for_each(|v| *v *= (j + 1) as f64))?;
    /// assert_eq!(x, DenseDesign::from_col_major(2, 2, &[1.0, 2.0, 6.0, 8.0])?);
    /// assert!(x.map_columns(|_, col| col[0] = f64::INFINITY).is_err());
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    pub fn map_columns(&mut self, mut f: impl FnMut(usize, &mut [f64])) -> Result<()> {
        self.rows = OnceLock::new();
        let n = self.n;
        for (j, col) in self.cols.as_mut_slice().chunks_exact_mut(n).enumerate() {
            f(j, col);
            if let Some(i) = col.iter().position(|v| !v.is_finite()) {
                return Err(ModelError::NonFinite {
                    what: "design",
                    location: format!("row {i}, column {j}"),
                    value: col[i],
                });
            }
        }
        Ok(())
    }

    /// [`DenseDesign::map_columns`] for a map that needs no order: `f(j, column_j)` on
    /// every column, on every core through `rayon` for a large design (at least
    /// [`PAR_MIN_VALUES`] values), returning the `f` results in column order. The values
    /// and results are those of the sequential loop, however the columns are shared out.
    /// Fails, naming the first column (in order) with a non-finite value afterwards, as
    /// `map_columns` does; the values are then unspecified.
    ///
    /// ```
    /// use dp_models::DenseDesign;
    /// let mut x = DenseDesign::from_col_major(2, 2, &[1.0, -2.0, 3.0, 4.0])?;
    /// let negatives = x.map_columns_par(|j, col| {
    ///     col.iter_mut().for_each(|v| *v *= (j + 1) as f64);
    ///     col.iter().filter(|v| **v < 0.0).count()
    /// })?;
    /// assert_eq!(negatives, vec![1, 0]);
    /// assert_eq!(x, DenseDesign::from_col_major(2, 2, &[1.0, -2.0, 6.0, 8.0])?);
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    pub fn map_columns_par<T: Send>(
        &mut self,
        f: impl Fn(usize, &mut [f64]) -> T + Sync,
    ) -> Result<Vec<T>> {
        self.rows = OnceLock::new();
        let n = self.n;
        let one = |(j, col): (usize, &mut [f64])| {
            let out = f(j, col);
            match first_non_finite(col) {
                Some(i) => Err(ModelError::NonFinite {
                    what: "design",
                    location: format!("row {i}, column {j}"),
                    value: col[i],
                }),
                None => Ok(out),
            }
        };
        let cols = self.cols.as_mut_slice();
        let results: Vec<Result<T>> = if cols.len() >= PAR_MIN_VALUES {
            cols.par_chunks_exact_mut(n)
                .enumerate()
                .with_max_len(1)
                .map(one)
                .collect()
        } else {
            cols.chunks_exact_mut(n).enumerate().map(one).collect()
        };
        results.into_iter().collect()
    }

    /// Appends a column of the constant `c` (an intercept's), in place when the buffer
    /// has the room (a design from [`DenseDesign::from_col_major_with`] or
    /// [`DenseDesign::from_row_major_deferred_rows`] has room for one column), else by
    /// moving the values once. Fails on a non-finite `c`. The row-major copy, if built,
    /// is dropped.
    ///
    /// ```
    /// use dp_models::{DenseDesign, Design};
    /// let mut x = DenseDesign::from_col_major_with(2, 1, |v| v.copy_from_slice(&[1.0, 2.0]))?;
    /// x.push_constant_column(1.0)?;
    /// assert_eq!(x, DenseDesign::from_col_major(2, 2, &[1.0, 2.0, 1.0, 1.0])?);
    /// assert_eq!(x.row(1), &[2.0, 1.0]);
    /// assert!(x.push_constant_column(f64::NAN).is_err());
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    pub fn push_constant_column(&mut self, c: f64) -> Result<()> {
        if !c.is_finite() {
            return Err(ModelError::NonFinite {
                what: "appended constant column",
                location: format!("column {}", self.p),
                value: c,
            });
        }
        self.rows = OnceLock::new();
        self.cols.extend_filled(self.n, c);
        self.p += 1;
        Ok(())
    }

    /// Builds from `n` rows of `p` values each, given row after row (C order, e.g. a
    /// numpy array), transposed once, tile by tile ([`transpose_into`]), into the
    /// column-major buffer; the row-major copy is deferred to the first row access, as
    /// [`DenseDesign::from_matrix_deferred_rows`]. The same values as
    /// [`DenseDesign::from_row_major`], with one copy instead of three. Fails on a length
    /// other than `n * p`, on empty or on non-finite data.
    ///
    /// ```
    /// use dp_models::{DenseDesign, Design};
    /// let x = DenseDesign::from_row_major_deferred_rows(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// assert!(!x.has_row_copy());
    /// assert_eq!(x.col(1), &[2.0, 5.0]);
    /// assert_eq!(x, DenseDesign::from_row_major(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?);
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    pub fn from_row_major_deferred_rows(n: usize, p: usize, data: &[f64]) -> Result<Self> {
        if Some(data.len()) != n.checked_mul(p) {
            return Err(ModelError::Shape(format!(
                "row-major data has {} values, expected n * p = {n} * {p}",
                data.len(),
            )));
        }
        Self::from_col_major_filled(n, p, |cols| transpose_checked(data, n, p, cols))
    }

    /// Whether the row-major copy has been built (always, except for a design from
    /// [`DenseDesign::from_matrix_deferred_rows`] before its first row access).
    pub fn has_row_copy(&self) -> bool {
        self.rows.get().is_some()
    }

    /// Builds from `n` rows of `p` values each, given row after row.
    pub fn from_row_major(n: usize, p: usize, data: &[f64]) -> Result<Self> {
        if data.len() != n * p {
            return Err(ModelError::Shape(format!(
                "row-major data has {} values, expected n * p = {n} * {p} = {}",
                data.len(),
                n * p
            )));
        }
        if n == 0 || p == 0 {
            return Err(ModelError::Empty(format!(
                "design has {n} rows and {p} columns; need at least one of each"
            )));
        }
        Self::from_matrix(DMatrix::from_row_slice(n, p, data))
    }

    /// Builds from `p` columns of `n` values each, given column after column.
    pub fn from_col_major(n: usize, p: usize, data: &[f64]) -> Result<Self> {
        if data.len() != n * p {
            return Err(ModelError::Shape(format!(
                "column-major data has {} values, expected n * p = {n} * {p} = {}",
                data.len(),
                n * p
            )));
        }
        if n == 0 || p == 0 {
            return Err(ModelError::Empty(format!(
                "design has {n} rows and {p} columns; need at least one of each"
            )));
        }
        check_finite_col_major(data, n)?;
        Ok(Self {
            n,
            p,
            cols: F64Buf::from_slice(data),
            rows: OnceLock::from(transpose_to_rows(data, n, p)),
        })
    }

    /// Column `j` as a contiguous slice of length `n`.
    #[inline]
    pub fn col(&self, j: usize) -> &[f64] {
        let n = self.n;
        &self.cols[j * n..(j + 1) * n]
    }

    /// Row `i` as a contiguous slice of length `p`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        let (n, p) = (self.n, self.p);
        let rows = self
            .rows
            .get_or_init(|| transpose_to_rows(&self.cols, n, p));
        &rows[i * p..(i + 1) * p]
    }

    /// The column-major matrix (a view of the stored values; `clone_owned` copies it).
    pub fn matrix(&self) -> DMatrixView<'_, f64> {
        DMatrixView::from_slice(&self.cols, self.n, self.p)
    }

    /// The `n * p` values, column after column.
    pub fn col_major_values(&self) -> &[f64] {
        &self.cols
    }
}

impl Design for DenseDesign {
    #[inline]
    fn n_samples(&self) -> usize {
        self.n
    }
    #[inline]
    fn n_features(&self) -> usize {
        self.p
    }
    fn nnz(&self) -> usize {
        self.n * self.p
    }
    fn col_nnz(&self, _j: usize) -> usize {
        self.n
    }
    #[inline]
    fn for_each_in_col<F: FnMut(usize, f64)>(&self, j: usize, mut f: F) {
        for (i, &x) in self.col(j).iter().enumerate() {
            f(i, x);
        }
    }
    #[inline]
    fn for_each_in_row<F: FnMut(usize, f64)>(&self, i: usize, mut f: F) {
        for (j, &x) in self.row(i).iter().enumerate() {
            f(j, x);
        }
    }
    #[inline]
    fn for_each_in_col_zip<F: FnMut(usize, f64, f64, f64)>(
        &self,
        j: usize,
        a: &[f64],
        b: &[f64],
        mut f: F,
    ) {
        let col = self.col(j);
        let n = col.len();
        for (i, ((&x, &ai), &bi)) in col.iter().zip(&a[..n]).zip(&b[..n]).enumerate() {
            f(i, x, ai, bi);
        }
    }
    #[inline]
    fn col_sum_map<F: FnMut(f64, f64, f64) -> f64>(
        &self,
        j: usize,
        a: &[f64],
        b: &[f64],
        mut f: F,
    ) -> f64 {
        let col = self.col(j);
        let n = col.len();
        let (a, b) = (&a[..n], &b[..n]);
        let mut acc = [0.0f64; 4];
        let (xc, ac, bc) = (col.chunks_exact(4), a.chunks_exact(4), b.chunks_exact(4));
        let (xr, ar, br) = (xc.remainder(), ac.remainder(), bc.remainder());
        for ((x, a), b) in xc.zip(ac).zip(bc) {
            acc[0] += f(x[0], a[0], b[0]);
            acc[1] += f(x[1], a[1], b[1]);
            acc[2] += f(x[2], a[2], b[2]);
            acc[3] += f(x[3], a[3], b[3]);
        }
        let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        for ((&x, &a), &b) in xr.iter().zip(ar).zip(br) {
            s += f(x, a, b);
        }
        s
    }
    #[inline]
    fn col_dot(&self, j: usize, v: &[f64]) -> f64 {
        dot(self.col(j), v)
    }
    #[inline]
    fn col_axpy(&self, j: usize, a: f64, out: &mut [f64]) {
        // Vectorised with runtime dispatch; bit-identical to the scalar loop.
        crate::simd::axpy(a, self.col(j), out);
    }
    /// Vectorised with runtime dispatch (`simd::rows::row_dot`; the summation order is
    /// fixed per instruction-set level).
    #[inline]
    fn row_dot(&self, i: usize, w: &[f64]) -> f64 {
        crate::simd::rows::row_dot(self.row(i), w)
    }
    /// Vectorised with runtime dispatch; bit-identical to the scalar loop.
    #[inline]
    fn row_axpy(&self, i: usize, a: f64, out: &mut [f64]) {
        crate::simd::rows::row_axpy(a, self.row(i), out);
    }
    #[inline]
    fn row_dot_axpy<F: FnOnce(f64) -> f64>(&self, i: usize, v: &mut [f64], step: F) -> f64 {
        crate::simd::rows::dot_axpy(self.row(i), v, step)
    }
    #[inline]
    fn row_dot_axpy_into<F: FnOnce(f64) -> f64>(
        &self,
        i: usize,
        v: &[f64],
        out: &mut [f64],
        step: F,
    ) -> f64 {
        crate::simd::rows::dot_axpy_into(self.row(i), v, out, step)
    }
    /// Prefetches every 64-byte cache line of row `i` (x86-64: `prefetcht0` through the
    /// safe wrappers of `safe_arch`; elsewhere a no-op). A hint only: results are
    /// unchanged.
    #[inline]
    fn prefetch_row(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let row = self.row(i);
            for x in row.iter().step_by(8) {
                safe_arch::prefetch_t0(x);
            }
            if let Some(last) = row.last() {
                safe_arch::prefetch_t0(last);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }
}

impl ClipValues for DenseDesign {
    fn clip_values(&mut self, bound: f64) -> Result<usize> {
        crate::error::positive("bound", bound)?;
        let changed = clip_slice(self.cols.as_mut_slice(), bound);
        if let Some(rows) = self.rows.get_mut() {
            let again = clip_slice(rows, bound);
            debug_assert_eq!(changed, again, "the two layouts hold the same values");
        }
        Ok(changed)
    }

    fn zero_entries(&mut self, entries: &[(usize, usize)]) -> Result<usize> {
        let (n, p) = (self.n, self.p);
        check_positions(entries, n, p)?;
        let mut changed = 0;
        for &(i, j) in entries {
            if self.cols[j * n + i] != 0.0 {
                self.cols[j * n + i] = 0.0;
                changed += 1;
            }
            if let Some(rows) = self.rows.get_mut() {
                rows[i * p + j] = 0.0;
            }
        }
        Ok(changed)
    }
}

/// Dot product with four independent accumulators (lets the compiler vectorise).
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let chunks = n / 4;
    for c in 0..chunks {
        let k = 4 * c;
        acc[0] += a[k] * b[k];
        acc[1] += a[k + 1] * b[k + 1];
        acc[2] += a[k + 2] * b[k + 2];
        acc[3] += a[k + 3] * b[k + 3];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for k in 4 * chunks..n {
        s += a[k] * b[k];
    }
    s
}

/// Sparse design in compressed sparse column (CSC) form, with a CSR copy for row access.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseDesign {
    n: usize,
    p: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    col_val: Vec<f64>,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    row_val: Vec<f64>,
}

impl SparseDesign {
    /// Builds from `(row, column, value)` triplets. Duplicate positions are summed;
    /// explicit zeros are dropped. Fails on out-of-range indices, non-finite values,
    /// or `n == 0` / `p == 0`.
    pub fn from_triplets(n: usize, p: usize, triplets: &[(usize, usize, f64)]) -> Result<Self> {
        if n == 0 || p == 0 {
            return Err(ModelError::Empty(format!(
                "design has {n} rows and {p} columns; need at least one of each"
            )));
        }
        for (k, &(i, j, v)) in triplets.iter().enumerate() {
            if i >= n || j >= p {
                return Err(ModelError::Shape(format!(
                    "triplet {k} at (row {i}, column {j}) is outside the {n} x {p} design"
                )));
            }
            if !v.is_finite() {
                return Err(ModelError::NonFinite {
                    what: "design",
                    location: format!("row {i}, column {j}"),
                    value: v,
                });
            }
        }
        let mut sorted: Vec<(usize, usize, f64)> = triplets.to_vec();
        sorted.sort_by_key(|t| (t.1, t.0));
        // Merge duplicates, drop zeros.
        let mut merged: Vec<(usize, usize, f64)> = Vec::with_capacity(sorted.len());
        for (i, j, v) in sorted {
            match merged.last_mut() {
                Some(last) if last.0 == i && last.1 == j => last.2 += v,
                _ => merged.push((i, j, v)),
            }
        }
        // Validate after summation: duplicates of finite values can overflow (two
        // f64::MAX at one position are +inf), and a non-finite entry must never reach a
        // solver (DP-SGD's clipped row update would turn it into NaN on one neighbour
        // only).
        if let Some(&(i, j, v)) = merged.iter().find(|t| !t.2.is_finite()) {
            return Err(ModelError::NonFinite {
                what: "design (after summing duplicate triplets)",
                location: format!("row {i}, column {j}"),
                value: v,
            });
        }
        merged.retain(|t| t.2 != 0.0);

        let mut col_ptr = vec![0usize; p + 1];
        for &(_, j, _) in &merged {
            col_ptr[j + 1] += 1;
        }
        for j in 0..p {
            col_ptr[j + 1] += col_ptr[j];
        }
        let row_idx: Vec<usize> = merged.iter().map(|t| t.0).collect();
        let col_val: Vec<f64> = merged.iter().map(|t| t.2).collect();

        let mut row_ptr = vec![0usize; n + 1];
        for &(i, _, _) in &merged {
            row_ptr[i + 1] += 1;
        }
        for i in 0..n {
            row_ptr[i + 1] += row_ptr[i];
        }
        let mut fill = row_ptr.clone();
        let mut col_idx = vec![0usize; merged.len()];
        let mut row_val = vec![0.0; merged.len()];
        // merged is sorted by column then row, so each row's entries arrive in increasing j.
        for &(i, j, v) in &merged {
            col_idx[fill[i]] = j;
            row_val[fill[i]] = v;
            fill[i] += 1;
        }
        Ok(Self {
            n,
            p,
            col_ptr,
            row_idx,
            col_val,
            row_ptr,
            col_idx,
            row_val,
        })
    }

    /// Converts a dense design (drops zeros).
    pub fn from_dense(d: &DenseDesign) -> Self {
        let mut t = Vec::new();
        for j in 0..d.n_features() {
            for (i, &x) in d.col(j).iter().enumerate() {
                if x != 0.0 {
                    t.push((i, j, x));
                }
            }
        }
        // Cannot fail: indices in range, values finite, shape non-empty.
        Self::from_triplets(d.n_samples(), d.n_features(), &t).unwrap_or_else(|_| unreachable!())
    }

    /// Row indices and values of column `j`.
    #[inline]
    pub fn col(&self, j: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.col_ptr[j], self.col_ptr[j + 1]);
        (&self.row_idx[a..b], &self.col_val[a..b])
    }

    /// Column indices and values of row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
        (&self.col_idx[a..b], &self.row_val[a..b])
    }
}

impl Design for SparseDesign {
    fn n_samples(&self) -> usize {
        self.n
    }
    fn n_features(&self) -> usize {
        self.p
    }
    fn nnz(&self) -> usize {
        self.col_val.len()
    }
    fn col_nnz(&self, j: usize) -> usize {
        self.col_ptr[j + 1] - self.col_ptr[j]
    }
    #[inline]
    fn for_each_in_col<F: FnMut(usize, f64)>(&self, j: usize, mut f: F) {
        let (idx, val) = self.col(j);
        for (&i, &x) in idx.iter().zip(val) {
            f(i, x);
        }
    }
    #[inline]
    fn for_each_in_row<F: FnMut(usize, f64)>(&self, i: usize, mut f: F) {
        let (idx, val) = self.row(i);
        for (&j, &x) in idx.iter().zip(val) {
            f(j, x);
        }
    }
    /// Hints the first cache lines of the column's row indices and values (a column
    /// of a sparse design starts at an unpredictable place of the CSC arrays, so in
    /// random coordinate order every step would otherwise start with cache misses).
    #[inline]
    fn prefetch_col_start(&self, j: usize) {
        if let Some(a) = self.col_ptr.get(j) {
            crate::simd::rows::prefetch(a);
        }
    }
    #[inline]
    fn prefetch_col(&self, j: usize) {
        if let (Some(&a), Some(&b)) = (self.col_ptr.get(j), self.col_ptr.get(j + 1)) {
            if a < b {
                crate::simd::rows::prefetch(&self.row_idx[a]);
                crate::simd::rows::prefetch(&self.col_val[a]);
                crate::simd::rows::prefetch(&self.row_idx[b - 1]);
                crate::simd::rows::prefetch(&self.col_val[b - 1]);
            }
        }
    }
}

impl ClipValues for SparseDesign {
    fn clip_values(&mut self, bound: f64) -> Result<usize> {
        crate::error::positive("bound", bound)?;
        let changed = clip_slice(&mut self.col_val, bound);
        let again = clip_slice(&mut self.row_val, bound);
        debug_assert_eq!(changed, again, "the two layouts hold the same values");
        Ok(changed)
    }

    fn zero_entries(&mut self, entries: &[(usize, usize)]) -> Result<usize> {
        check_positions(entries, self.n, self.p)?;
        let mut changed = 0;
        for &(i, j) in entries {
            let (a, b) = (self.col_ptr[j], self.col_ptr[j + 1]);
            if let Some(k) = self.row_idx[a..b].iter().position(|&r| r == i) {
                if self.col_val[a + k] != 0.0 {
                    changed += 1;
                }
                self.col_val[a + k] = 0.0;
            }
            let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
            if let Some(k) = self.col_idx[a..b].iter().position(|&c| c == j) {
                self.row_val[a + k] = 0.0;
            }
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> DenseDesign {
        DenseDesign::from_row_major(3, 2, &[1.0, 0.0, 2.0, -3.0, 0.0, 4.0]).unwrap()
    }

    #[test]
    fn tiled_transpose_matches_the_plain_one_on_ragged_shapes() {
        // Shapes around and across the tile side, so partial tiles on both edges occur.
        for (r, c) in [
            (1, 1),
            (1, 70),
            (70, 1),
            (31, 33),
            (32, 32),
            (65, 50),
            (100, 3),
        ] {
            let src: Vec<f64> = (0..r * c).map(|k| k as f64 * 0.5 - 3.0).collect();
            let mut dst = vec![f64::NAN; r * c];
            transpose_into(&src, r, c, &mut dst);
            for i in 0..r {
                for j in 0..c {
                    assert_eq!(dst[j * r + i], src[i * c + j], "{r} x {c} at ({i}, {j})");
                }
            }
            let d = DenseDesign::from_row_major_deferred_rows(r, c, &src).unwrap();
            assert!(!d.has_row_copy());
            assert_eq!(d, DenseDesign::from_row_major(r, c, &src).unwrap());
            assert_eq!(d.row(r - 1), &src[(r - 1) * c..]);
        }
    }

    #[test]
    fn filled_and_row_major_constructors_refuse_bad_input() {
        assert!(DenseDesign::from_row_major_deferred_rows(2, 2, &[1.0; 3]).is_err());
        assert!(DenseDesign::from_row_major_deferred_rows(0, 2, &[]).is_err());
        let inf = DenseDesign::from_row_major_deferred_rows(2, 2, &[1.0, 2.0, f64::INFINITY, 0.0]);
        assert!(matches!(inf, Err(ModelError::NonFinite { .. })), "{inf:?}");
        assert!(DenseDesign::from_col_major_with(0, 3, |_| {}).is_err());
        assert!(DenseDesign::from_col_major_with(3, 1, |v| v[2] = f64::NAN).is_err());
    }

    #[test]
    fn dense_layouts_agree() {
        let d = small();
        assert_eq!(d.col(1), &[0.0, -3.0, 4.0]);
        assert_eq!(d.row(1), &[2.0, -3.0]);
        assert_eq!(d.col_dot(0, &[1.0, 1.0, 1.0]), 3.0);
        assert_eq!(d.row_dot(2, &[1.0, 2.0]), 8.0);
        assert_eq!(d.col_sq_norm(1), 25.0);
        assert_eq!(d.col_max_abs(1), 4.0);
    }

    #[test]
    fn deferred_rows_match_the_eager_design() {
        let eager = small();
        let cols = eager.matrix().clone_owned();
        let lazy = DenseDesign::from_matrix_deferred_rows(cols.clone()).unwrap();
        assert!(eager.has_row_copy());
        assert!(!lazy.has_row_copy());
        assert_eq!(lazy, eager);
        // Column access never builds the row copy.
        let v = [1.0, -2.0, 0.5];
        let mut out = vec![0.0; 3];
        for j in 0..2 {
            assert_eq!(lazy.col(j), eager.col(j));
            assert_eq!(lazy.col_dot(j, &v), eager.col_dot(j, &v));
            lazy.col_axpy(j, 0.25, &mut out);
        }
        assert!(!lazy.has_row_copy());
        // The first row access builds it; rows then match the eager design's.
        let w = [0.5, -2.0];
        for i in 0..3 {
            assert_eq!(lazy.row(i), eager.row(i));
            assert_eq!(lazy.row_dot(i, &w), eager.row_dot(i, &w));
        }
        assert!(lazy.has_row_copy());
        let (mut a, mut b) = (vec![0.0; 2], vec![0.0; 2]);
        eager.matvec_t(&v, &mut a);
        DenseDesign::from_matrix_deferred_rows(cols.clone())
            .unwrap()
            .matvec_t(&v, &mut b);
        assert_eq!(a, b);
        // Clones keep the state; clipping before the first row access clips the rows
        // built later.
        let mut c = DenseDesign::from_matrix_deferred_rows(cols).unwrap();
        assert!(!c.clone().has_row_copy());
        assert_eq!(c.clip_values(1.5).unwrap(), 3);
        assert!(!c.has_row_copy());
        assert_eq!(c.row(1), &[1.5, -1.5]);
        assert_eq!(c.col(1), &[0.0, -1.5, 1.5]);
        // Same checks as the eager constructor.
        let bad = DMatrix::from_vec(2, 1, vec![1.0, f64::INFINITY]);
        let e = DenseDesign::from_matrix_deferred_rows(bad).unwrap_err();
        assert!(e.to_string().contains("row 1, column 0"), "{e}");
        assert!(matches!(
            DenseDesign::from_matrix_deferred_rows(DMatrix::zeros(0, 3)),
            Err(ModelError::Empty(_))
        ));
    }

    #[test]
    fn deferred_rows_are_built_once_across_threads() {
        let d = DenseDesign::from_matrix_deferred_rows(small().matrix().clone_owned()).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| assert_eq!(d.row(2), &[0.0, 4.0]));
            }
        });
        assert!(d.has_row_copy());
    }

    #[test]
    fn sparse_matches_dense() {
        let d = small();
        let s = SparseDesign::from_dense(&d);
        assert_eq!(s.nnz(), 4);
        let w = [0.5, -2.0];
        let (mut a, mut b) = (vec![0.0; 3], vec![0.0; 3]);
        d.matvec(&w, &mut a);
        s.matvec(&w, &mut b);
        assert_eq!(a, b);
        let v = [1.0, 2.0, 3.0];
        let (mut a, mut b) = (vec![0.0; 2], vec![0.0; 2]);
        d.matvec_t(&v, &mut a);
        s.matvec_t(&v, &mut b);
        assert_eq!(a, b);
        for i in 0..3 {
            assert_eq!(d.row_dot(i, &w), s.row_dot(i, &w));
        }
    }

    /// The large-design paths (both cores through `rayon`, above `PAR_MIN_VALUES`) give
    /// what the plain loops give: the transpose, the first non-finite value in order,
    /// and a column map with its results and its error.
    #[test]
    fn parallel_whole_design_passes_match_the_plain_loops() {
        let (r, c) = (PAR_MIN_VALUES / 37 + 5, 37);
        assert!(r * c >= PAR_MIN_VALUES);
        let src: Vec<f64> = (0..r * c).map(|k| k as f64 * 0.5 - 3.0).collect();
        let mut dst = vec![0.0; r * c];
        transpose_into(&src, r, c, &mut dst);
        for j in 0..c {
            for i in (0..r).step_by(97).chain([r - 1]) {
                assert_eq!(dst[j * r + i], src[i * c + j], "({i}, {j})");
            }
        }
        assert_eq!(dst.iter().sum::<f64>(), src.iter().sum::<f64>());
        // And back: a wide matrix (c x r, split by destination rows) is the source again.
        let mut back = vec![f64::NAN; r * c];
        transpose_into(&dst, c, r, &mut back);
        assert!(back == src);
        // The transpose checks the values as it copies them: a non-finite one is named
        // by its row and column, as the separate check names it.
        for (i, j, bad) in [(r - 1, c - 1, f64::NAN), (r / 2 + 3, 5, f64::NEG_INFINITY)] {
            let mut data = src.clone();
            data[i * c + j] = bad;
            let err = DenseDesign::from_row_major_deferred_rows(r, c, &data).unwrap_err();
            assert!(
                err.to_string().contains(&format!("row {i}, column {j}")),
                "{err}"
            );
        }
        assert!(DenseDesign::from_row_major_deferred_rows(r, c, &src).is_ok());

        let mut v = src.clone();
        assert_eq!(first_non_finite(&v), None);
        // Several non-finite values, in different chunks: the first one in order.
        for (k, bad) in [
            (r * c - 1, f64::NAN),
            (700_001, f64::NEG_INFINITY),
            (20_000, f64::INFINITY),
        ] {
            v[k] = bad;
            assert_eq!(first_non_finite(&v), Some(k));
            assert_eq!(v.iter().position(|x| !x.is_finite()), Some(k));
        }

        let mut d = DenseDesign::from_col_major(r, c, &dst).unwrap();
        let sums = d
            .map_columns_par(|j, col| {
                col.iter_mut().for_each(|x| *x *= 2.0);
                (j, col.iter().sum::<f64>())
            })
            .unwrap();
        for (j, &(k, sum)) in sums.iter().enumerate() {
            assert_eq!(k, j);
            assert_eq!(sum, d.col(j).iter().sum::<f64>());
            assert_eq!(d.col(j)[3], 2.0 * src[3 * c + j]);
        }
        let e = d
            .map_columns_par(|j, col| {
                if j == 30 || j == 11 {
                    col[j] = f64::INFINITY;
                }
            })
            .unwrap_err();
        assert!(e.to_string().contains("row 11, column 11"), "{e}");
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            DenseDesign::from_row_major(2, 2, &[1.0, 2.0, 3.0]),
            Err(ModelError::Shape(_))
        ));
        assert!(matches!(
            DenseDesign::from_row_major(0, 2, &[]),
            Err(ModelError::Empty(_))
        ));
        let e = DenseDesign::from_row_major(2, 2, &[1.0, f64::NAN, 3.0, 4.0]).unwrap_err();
        assert!(e.to_string().contains("row 0, column 1"), "{e}");
        assert!(SparseDesign::from_triplets(2, 2, &[(2, 0, 1.0)]).is_err());
    }

    #[test]
    fn clipping_updates_both_layouts_and_counts() {
        let mut d = small(); // [[1, 0], [2, -3], [0, 4]]
        let mut s = SparseDesign::from_dense(&d);
        assert_eq!(d.clip_values(1.5).unwrap(), 3);
        assert_eq!(d.row(1), &[1.5, -1.5]);
        assert_eq!(d.col(1), &[0.0, -1.5, 1.5]);
        assert_eq!(s.clip_values(1.5).unwrap(), 3);
        assert_eq!(s.nnz(), 4);
        assert_eq!(s.row(1), (&[0usize, 1][..], &[1.5, -1.5][..]));
        assert_eq!(s.col(1), (&[1usize, 2][..], &[-1.5, 1.5][..]));
        // Values at the bound are not counted; a second pass changes nothing.
        assert_eq!(d.clip_values(1.5).unwrap(), 0);
        assert_eq!(s.clip_values(1.5).unwrap(), 0);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = d.clip_values(bad).unwrap_err();
            assert!(e.to_string().contains("bound"), "{e}");
        }
        assert_eq!(d.row(1), &[1.5, -1.5]);
    }
}
