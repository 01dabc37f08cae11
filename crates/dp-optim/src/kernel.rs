//! The inner loops every coordinate and stochastic solver shares.
//!
//! A private solver and its non-private twin run the *same* code: clipping and noise
//! are type parameters ([`ClipRule`], [`CoordNoise`]) whose "off" versions are the
//! identity. With clipping at `+inf` and no noise a private solver therefore computes
//! exactly (bit for bit) what its twin computes; the crate's tests check it.

use crate::error::Result;
use crate::support::RowSupport;
use dp_models::simd::margin::{clip_below, clip_factor, MarginKernel};
use dp_models::{ClipValues, DenseDesign, Design, Loss, SparseDesign};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Per-sample clipping of a scalar: `sign(v) min(|v|, c)`.
pub trait Clip: Copy {
    /// Clips one per-sample term.
    fn clip(self, v: f64) -> f64;
    /// The threshold `c` of [`Clamp`]-like clipping (`clip(v)` is `v < c ? v : c`, then
    /// `v > -c ? v : -c`), or `None` for the identity. The vectorised dense kernels
    /// clip with this threshold, so an implementation must be consistent with
    /// [`Clip::clip`].
    fn bound(self) -> Option<f64>;
}

/// No clipping (the identity).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoClip;

impl Clip for NoClip {
    #[inline(always)]
    fn clip(self, v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn bound(self) -> Option<f64> {
        None
    }
}

/// Clipping to `[-c, c]` (`c > 0`, may be `+inf`).
#[derive(Debug, Clone, Copy)]
pub struct Clamp(pub f64);

impl Clip for Clamp {
    #[inline(always)]
    fn clip(self, v: f64) -> f64 {
        // Two selects (minpd / maxpd after vectorisation) instead of `f64::clamp`, which
        // panics on bad bounds, or `max`/`min`, whose NaN semantics cost extra
        // instructions. Equal to `sign(v) min(|v|, c)` for every non-NaN `v` and c > 0
        // (including c = +inf, where it is the identity).
        let c = self.0;
        let v = if v < c { v } else { c };
        if v > -c {
            v
        } else {
            -c
        }
    }
    #[inline(always)]
    fn bound(self) -> Option<f64> {
        Some(self.0)
    }
}

/// Which clipping applies to coordinate `j`.
pub trait ClipRule {
    /// The per-sample clipping of coordinate `j`.
    type Clip: Clip;
    /// The clipping of coordinate `j`.
    fn for_coord(&self, j: usize) -> Self::Clip;
    /// A cache hint for coordinate `j`'s threshold (changes no result).
    #[inline(always)]
    fn prefetch(&self, _j: usize) {}
}

impl ClipRule for NoClip {
    type Clip = NoClip;
    #[inline(always)]
    fn for_coord(&self, _j: usize) -> NoClip {
        NoClip
    }
}

/// Coordinate-wise thresholds `C_j` (DP-CD's clipping rule).
#[derive(Debug, Clone, Copy)]
pub struct PerCoordinate<'a>(pub &'a [f64]);

impl ClipRule for PerCoordinate<'_> {
    type Clip = Clamp;
    #[inline(always)]
    fn for_coord(&self, j: usize) -> Clamp {
        Clamp(self.0[j])
    }
    #[inline(always)]
    fn prefetch(&self, j: usize) {
        if let Some(c) = self.0.get(j) {
            dp_models::simd::rows::prefetch(c);
        }
    }
}

/// Noise added to a released coordinate gradient.
pub trait CoordNoise {
    /// Returns `g` plus the noise for coordinate `j` (or `g` itself when there is none).
    fn perturb(&mut self, j: usize, g: f64) -> f64;
    /// A cache hint for coordinate `j`'s noise scale (changes no result, draws nothing).
    #[inline(always)]
    fn prefetch(&self, _j: usize) {}
}

/// No noise: `perturb` returns its input unchanged and draws nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoNoise;

impl CoordNoise for NoNoise {
    #[inline(always)]
    fn perturb(&mut self, _j: usize, g: f64) -> f64 {
        g
    }
}

/// Column kernels of coordinate methods, specialised per storage.
///
/// The default implementations work for any [`Design`] through
/// [`Design::for_each_in_col`]; [`DenseDesign`] overrides them with the loss's
/// vectorised kernels ([`Loss::dense_col_grad_sum`], [`Loss::dense_step_grad_sum`]),
/// which pick AVX-512, AVX2 or scalar code at run time (`dp_models::simd`). Implement this trait (`impl ColumnKernels for MyDesign {}`) to use
/// your own design type with the coordinate solvers.
pub trait ColumnKernels: Design {
    /// `sum_i clip(phi'(z_i, y_i) x_ij)` over the stored entries of column `j`
    /// (the caller divides by `n`). `z` is the maintained predictor `X w`.
    fn col_grad_sum<L: Loss + ?Sized, C: Clip>(
        &self,
        j: usize,
        loss: &L,
        z: &[f64],
        y: &[f64],
        clip: C,
    ) -> f64 {
        // A stored zero contributes nothing, even at a non-finite derivative (whose
        // product with 0 is NaN): DP-CD's support-aware accounting counts on it.
        let mut s = 0.0;
        self.for_each_in_col(j, |i, x| {
            if x != 0.0 {
                s += clip.clip(loss.derivative(z[i], y[i]) * x)
            }
        });
        s
    }

    /// One coordinate step of the solvers' inner loop: applies the pending predictor
    /// update `z += a X_{:,k}` of the previous step (`update = Some((k, a))`, skipped
    /// when `a == 0`), then returns [`ColumnKernels::col_grad_sum`] of column `j` at
    /// the updated `z`. With `y = None`, `z` holds the residual `X w - y` of a loss with
    /// [`Loss::is_residual_loss`] and the labels are taken as 0.
    ///
    /// The dense implementation does both in one sweep over the data.
    #[allow(clippy::too_many_arguments)]
    fn step_grad_sum<L: Loss + ?Sized, C: Clip>(
        &self,
        update: Option<(usize, f64)>,
        j: usize,
        loss: &L,
        z: &mut [f64],
        y: Option<&[f64]>,
        clip: C,
    ) -> f64 {
        if let Some((k, a)) = update {
            if a != 0.0 {
                self.col_axpy(k, a, z);
            }
        }
        match y {
            Some(y) => self.col_grad_sum(j, loss, z, y, clip),
            None => {
                let mut s = 0.0;
                self.for_each_in_col(j, |i, x| {
                    if x != 0.0 {
                        s += clip.clip(loss.derivative(z[i], 0.0) * x)
                    }
                });
                s
            }
        }
    }

    /// [`ColumnKernels::step_grad_sum`] with the sweep split into `chunks` fixed
    /// pieces that may run on different cores (rayon), their sums added in a fixed
    /// tree order: bit-for-bit reproducible for a given `chunks` whatever the number
    /// of cores, and equal to `step_grad_sum` up to rounding (the partial sums are
    /// grouped differently). The default ignores `chunks`; dense designs split.
    #[allow(clippy::too_many_arguments)]
    fn step_grad_sum_chunked<L: Loss + ?Sized, C: Clip>(
        &self,
        update: Option<(usize, f64)>,
        j: usize,
        loss: &L,
        z: &mut [f64],
        y: Option<&[f64]>,
        clip: C,
        chunks: usize,
    ) -> f64 {
        let _ = chunks;
        self.step_grad_sum(update, j, loss, z, y, clip)
    }

    /// This design as a dense column-major design, if it is one: the two-thread sweep
    /// (`with_sweeper`) hands the second half of every column to a worker thread
    /// that reads the columns itself. `None` (the default) keeps the rayon split of
    /// [`ColumnKernels::step_grad_sum_chunked`].
    fn as_dense(&self) -> Option<&DenseDesign> {
        None
    }

    /// A copy of this design with every record projected onto the public row-support
    /// `bound` ([`RowSupport::project`]: the largest-magnitude non-zeros a record may
    /// have, the others set to 0), and how many records changed; `None` when every
    /// record already satisfies the bound (nothing to copy). DP-CD calls this before
    /// anything is charged or drawn.
    ///
    /// The default cannot build a projected copy of an arbitrary design: it returns
    /// `None` when the bound holds and otherwise refuses with the first offending
    /// record ([`RowSupport::validate`]; for the data holder, not for publication).
    /// [`DenseDesign`] and [`SparseDesign`] project.
    ///
    /// # Privacy
    /// See [`RowSupport::project`]: a fixed map applied record by record, reading one
    /// record and the public bound, so neighbours stay neighbours under the same
    /// relation and DP-CD's claim for data within the bound holds for the raw data.
    /// The count is computed from the data without privacy (diagnostics only).
    fn project_support(&self, bound: &RowSupport) -> Result<Option<(Self, usize)>>
    where
        Self: Sized,
    {
        bound.validate(self).map(|()| None)
    }
}

/// [`ColumnKernels::project_support`] for a design that can be copied and have entries
/// zeroed: validate (no copy when the bound holds), else copy and project.
fn project_copy<D: ClipValues + Clone>(x: &D, bound: &RowSupport) -> Result<Option<(D, usize)>> {
    if bound.validate(x).is_ok() {
        return Ok(None);
    }
    let mut copy = x.clone();
    let count = bound.project(&mut copy)?;
    Ok(Some((copy, count)))
}

/// `sum_k clip(phi'(z_{i_k}, y_{i_k}) x_k)` over one sparse column's non-zeros
/// (`y_i = 0` when `y` is `None`), summed sequentially in storage order (the order of
/// [`Design::for_each_in_col`], so the results are those of the generic kernels).
///
/// Kept out of line on purpose. Inlined into DP-CD's `run_cd` (a large function: the
/// noise, clipping and averaging state are live across the loop), the register
/// allocator kept the accumulator in a stack slot, so every non-zero paid a
/// store-to-load round trip on top of the add's latency: a sparse DP-CD pass ran at
/// 2-3x the non-private one, whose copy (inlined into a smaller caller) kept it in a
/// register. Out of line, both twins run this same small loop with the accumulator in
/// a register; the call costs a few nanoseconds per step, against one column's
/// non-zeros.
#[inline(never)]
fn sparse_grad_sum<L: Loss + ?Sized, C: Clip>(
    idx: &[usize],
    val: &[f64],
    loss: &L,
    z: &[f64],
    y: Option<&[f64]>,
    clip: C,
) -> f64 {
    match y {
        Some(y) => idx.iter().zip(val).fold(0.0, |s, (&i, &x)| {
            s + clip.clip(loss.derivative(z[i], y[i]) * x)
        }),
        None => idx.iter().zip(val).fold(0.0, |s, (&i, &x)| {
            s + clip.clip(loss.derivative(z[i], 0.0) * x)
        }),
    }
}

impl ColumnKernels for SparseDesign {
    fn project_support(&self, bound: &RowSupport) -> Result<Option<(Self, usize)>> {
        project_copy(self, bound)
    }

    #[inline]
    fn col_grad_sum<L: Loss + ?Sized, C: Clip>(
        &self,
        j: usize,
        loss: &L,
        z: &[f64],
        y: &[f64],
        clip: C,
    ) -> f64 {
        let (idx, val) = self.col(j);
        sparse_grad_sum(idx, val, loss, z, Some(y), clip)
    }

    #[inline]
    fn step_grad_sum<L: Loss + ?Sized, C: Clip>(
        &self,
        update: Option<(usize, f64)>,
        j: usize,
        loss: &L,
        z: &mut [f64],
        y: Option<&[f64]>,
        clip: C,
    ) -> f64 {
        if let Some((k, a)) = update {
            if a != 0.0 {
                self.col_axpy(k, a, z);
            }
        }
        let (idx, val) = self.col(j);
        sparse_grad_sum(idx, val, loss, z, y, clip)
    }
}

impl ColumnKernels for DenseDesign {
    fn project_support(&self, bound: &RowSupport) -> Result<Option<(Self, usize)>> {
        project_copy(self, bound)
    }

    #[inline]
    fn as_dense(&self) -> Option<&DenseDesign> {
        Some(self)
    }

    #[inline]
    fn col_grad_sum<L: Loss + ?Sized, C: Clip>(
        &self,
        j: usize,
        loss: &L,
        z: &[f64],
        y: &[f64],
        clip: C,
    ) -> f64 {
        loss.dense_col_grad_sum(self.col(j), z, Some(y), clip.bound())
    }

    #[inline]
    fn step_grad_sum<L: Loss + ?Sized, C: Clip>(
        &self,
        update: Option<(usize, f64)>,
        j: usize,
        loss: &L,
        z: &mut [f64],
        y: Option<&[f64]>,
        clip: C,
    ) -> f64 {
        // One piece: the single fused sweep (`split_step`'s base case).
        self.step_grad_sum_chunked(update, j, loss, z, y, clip, 1)
    }

    #[inline]
    fn step_grad_sum_chunked<L: Loss + ?Sized, C: Clip>(
        &self,
        update: Option<(usize, f64)>,
        j: usize,
        loss: &L,
        z: &mut [f64],
        y: Option<&[f64]>,
        clip: C,
        chunks: usize,
    ) -> f64 {
        let update = match update {
            Some((k, a)) if a != 0.0 => Some((self.col(k), a)),
            _ => None,
        };
        split_step(loss, update, self.col(j), z, y, clip.bound(), chunks.max(1))
    }
}

/// The dense fused step over `chunks` pieces: halves (in units of 64 entries, so
/// every piece starts on a cache line and a whole number of vectors) run through
/// `rayon::join`, recursively, and the two sums are added left + right.
fn split_step<L: Loss + ?Sized>(
    loss: &L,
    update: Option<(&[f64], f64)>,
    x: &[f64],
    z: &mut [f64],
    y: Option<&[f64]>,
    clip: Option<f64>,
    chunks: usize,
) -> f64 {
    let n = x.len();
    let left_chunks = chunks / 2;
    let h = (n * left_chunks / chunks.max(1)) / 64 * 64;
    if chunks <= 1 || h == 0 || h >= n {
        return match update {
            Some((xk, a)) => loss.dense_step_grad_sum((xk, a), x, z, y, clip),
            None => loss.dense_col_grad_sum(x, z, y, clip),
        };
    }
    let (xl, xr) = x.split_at(h);
    let (zl, zr) = z[..n].split_at_mut(h);
    let (yl, yr) = match y {
        Some(y) => {
            let (a, b) = y[..n].split_at(h);
            (Some(a), Some(b))
        }
        None => (None, None),
    };
    let (ul, ur) = match update {
        Some((xk, a)) => {
            let (a1, b1) = xk[..n].split_at(h);
            (Some((a1, a)), Some((b1, a)))
        }
        None => (None, None),
    };
    let (l, r) = rayon::join(
        || split_step(loss, ul, xl, zl, yl, clip, left_chunks),
        || split_step(loss, ur, xr, zr, yr, clip, chunks - left_chunks),
    );
    l + r
}

/// The row where the left piece of a 2-piece split ends (a multiple of 64, as in
/// [`split_step`]); `None` when the column is too short to split.
fn split_point(n: usize) -> Option<usize> {
    let h = n / 2 / 64 * 64;
    (h > 0 && h < n).then_some(h)
}

/// How the coordinate steps of one run sweep the data: on the calling thread (pieces,
/// if any, through `rayon`), or split in two with a persistent worker thread that owns
/// the second half of the predictor for the whole run; in `f64`, or in mixed precision
/// over label-folded `f32` columns ([`Folded`], `dp_models::simd::margin`).
pub(crate) enum Sweeper<'a, 'm, D, L: ?Sized> {
    /// [`ColumnKernels::step_grad_sum`] or its chunked form.
    Local {
        x: &'a D,
        loss: &'a L,
        z: &'a mut [f64],
        y: Option<&'a [f64]>,
        chunks: usize,
    },
    /// Two pieces at [`split_point`]: the first on the calling thread, the second on
    /// the worker.
    Paired(Paired<'m, DenseRows<'a, L>>),
    /// The mixed-precision sweep on the calling thread: one piece, or the two pieces
    /// of `MarginPaired` in turn (same bits).
    Margin(Vec<MarginRows<'a>>),
    /// The mixed-precision sweep in two pieces at [`split_point`], as `Paired`.
    MarginPaired(Paired<'m, MarginRows<'a>>),
}

impl<D: ColumnKernels, L: Loss + ?Sized> Sweeper<'_, '_, D, L> {
    /// One coordinate step: applies the pending update `z += a X_{:,k}` and returns the
    /// clipped gradient sum of column `j` ([`ColumnKernels::step_grad_sum`]).
    #[inline]
    pub(crate) fn step<C: Clip>(&mut self, update: Option<(usize, f64)>, j: usize, clip: C) -> f64 {
        match self {
            Sweeper::Local {
                x,
                loss,
                z,
                y,
                chunks,
            } => {
                if *chunks > 1 {
                    x.step_grad_sum_chunked(update, j, *loss, z, *y, clip, *chunks)
                } else {
                    x.step_grad_sum(update, j, *loss, z, *y, clip)
                }
            }
            Sweeper::Paired(p) => p.step(update, j, clip.bound()),
            Sweeper::Margin(pieces) => {
                let (update, clip) = (nonzero(update), clip.bound());
                let mut pieces = pieces.iter_mut();
                let first = pieces.next().map_or(0.0, |r| r.step(update, j, clip));
                pieces.fold(first, |s, r| s + r.step(update, j, clip))
            }
            Sweeper::MarginPaired(p) => p.step(update, j, clip.bound()),
        }
    }
}

/// Whether a two-piece sweep of `n` rows runs on two threads: `chunks == 2`, a column
/// long enough to split, and a process that may run two threads at once.
fn paired(chunks: usize, n: usize) -> bool {
    chunks == 2
        && split_point(n).is_some()
        && std::thread::available_parallelism().is_ok_and(|k| k.get() >= 2)
}

/// Runs `body` with the [`Sweeper`] for `chunks` pieces per step over the predictor
/// `z` (and the labels `y`, `None` for a residual).
///
/// With `chunks == 2` on a dense design whose columns are long enough to split, and
/// when the process may run two threads at once (`available_parallelism`), the second
/// piece of every step is offered to one worker thread started here and stopped before
/// this returns (a scoped thread: it borrows the design, the loss and the second half of
/// `z`). The caller and the worker hand each other the steps through atomics and
/// spin (then yield) while waiting, which costs well under a microsecond per step,
/// where `rayon::join` had to wake a sleeping thread (measured in `docs/performance.md`,
/// "Two cores"). Whoever claims the second piece first runs it: the caller, done
/// with the first piece, takes it when the worker has not started it (its core busy
/// with another process, e.g. a BLAS thread pool spinning after a numpy call), instead
/// of waiting for the worker to be scheduled. The pieces, their kernels and the order
/// of the final addition are those of [`ColumnKernels::step_grad_sum_chunked`] with 2
/// chunks whoever runs them, so every result is bit-for-bit the same as there
/// (tested).
pub(crate) fn with_sweeper<D, L, R>(
    x: &D,
    loss: &L,
    z: &mut [f64],
    y: Option<&[f64]>,
    chunks: usize,
    body: impl FnOnce(&mut Sweeper<'_, '_, D, L>) -> R,
) -> R
where
    D: ColumnKernels,
    L: Loss + ?Sized,
{
    match x.as_dense() {
        Some(d) if paired(chunks, d.n_samples()) => {
            let n = d.n_samples();
            let h = split_point(n).unwrap_or(0);
            let (zl, zr) = z[..n].split_at_mut(h);
            let (yl, yr) = match y {
                Some(y) => (Some(&y[..h]), Some(&y[h..n])),
                None => (None, None),
            };
            let left = DenseRows {
                d,
                loss,
                start: 0,
                z: zl,
                y: yl,
            };
            let right = DenseRows {
                d,
                loss,
                start: h,
                z: zr,
                y: yr,
            };
            run_paired(left, right, |p| body(&mut Sweeper::Paired(p)))
        }
        _ => body(&mut Sweeper::Local {
            x,
            loss,
            z,
            y,
            chunks,
        }),
    }
}

/// Runs `body` with a [`Paired`] sweep over `left` (the calling thread) and `right` (a
/// scoped worker thread, stopped before this returns, however `body` ends).
fn run_paired<'a, H: Half + 'a, R>(left: H, right: H, body: impl FnOnce(Paired<'_, H>) -> R) -> R {
    let mailbox = Mailbox::default();
    let right = Mutex::new(right);
    std::thread::scope(|scope| {
        let mb = &mailbox;
        let rows = &right;
        scope.spawn(move || worker(mb, rows));
        // Stops the worker however `body` ends (a panic included), so that the scope
        // can join it.
        let _stop = StopOnDrop(mb);
        body(Paired {
            mailbox: mb,
            left,
            right: rows,
            seq: 0,
        })
    })
}

/// One piece of a split sweep: a range of rows and the state it updates.
pub(crate) trait Half: Send {
    /// Applies the update `z += a X_{:,k}` (`update = Some((k, a))`, `a != 0`) to this
    /// piece's rows and returns its clipped gradient sum of column `j`.
    fn step(&mut self, update: Option<(usize, f64)>, j: usize, clip: Option<f64>) -> f64;
}

/// Rows `start..start + z.len()` of a dense design, in `f64`.
pub(crate) struct DenseRows<'a, L: ?Sized> {
    d: &'a DenseDesign,
    loss: &'a L,
    start: usize,
    z: &'a mut [f64],
    y: Option<&'a [f64]>,
}

impl<L: Loss + ?Sized> Half for DenseRows<'_, L> {
    #[inline]
    fn step(&mut self, update: Option<(usize, f64)>, j: usize, clip: Option<f64>) -> f64 {
        let rows = self.start..self.start + self.z.len();
        let update = update.map(|(k, a)| (&self.d.col(k)[rows.clone()], a));
        piece(
            self.loss,
            update,
            &self.d.col(j)[rows],
            self.z,
            self.y,
            clip,
        )
    }
}

/// `Some((k, a))` when the update moves the predictor (`a != 0`).
#[inline]
fn nonzero(update: Option<(usize, f64)>) -> Option<(usize, f64)> {
    update.filter(|&(_, a)| a != 0.0)
}

/// The label-folded `f32` copy of a dense design for the mixed-precision sweep of a
/// margin loss: column `j` holds `y_i x_ij` rounded to `f32` (a sign flip, then one
/// rounding), with the loss's [`MarginKernel`] and the public `n` that fixes the
/// clipping's rounding allowance ([`dp_models::simd::margin::release_clip`]).
///
/// # Privacy
/// Building it is a fixed map applied record by record (row `i` of the copy reads only
/// record `i`), so neighbouring datasets give neighbouring copies under the same
/// relation; the sweep over it is analysed in `dp_models::simd::margin`.
pub(crate) struct Folded {
    cols: Vec<f32>,
    n: usize,
    kernel: MarginKernel,
    /// `kappa(n)` of the clipping allowance ([`clip_factor`]), fixed for the run.
    clip_factor: f64,
}

impl Folded {
    /// Folds `d` with the labels `y` (both cores for a large design).
    pub(crate) fn new(d: &DenseDesign, y: &[f64], kernel: MarginKernel) -> Self {
        use rayon::prelude::*;
        let n = d.n_samples();
        let mut cols = vec![0.0f32; n * d.n_features()];
        if n > 0 {
            cols.par_chunks_mut(n).enumerate().for_each(|(j, out)| {
                for ((o, &x), &yi) in out.iter_mut().zip(d.col(j)).zip(y) {
                    *o = (yi * x) as f32;
                }
            });
        }
        Self {
            cols,
            n,
            kernel,
            clip_factor: clip_factor(n),
        }
    }

    fn col(&self, j: usize) -> &[f32] {
        &self.cols[j * self.n..(j + 1) * self.n]
    }
}

/// Runs `body` with the mixed-precision [`Sweeper`] over `folded`, starting from the
/// predictor `z` (margins `y_i z_i` in `f32`, dropped when this returns: the caller
/// recomputes `z = X w` in `f64`). With `chunks == 2` the sweep is split in two pieces
/// at [`split_point`], run on two threads as in [`with_sweeper`] when the process may
/// run two threads and in turn on the calling thread otherwise (the same bits either
/// way); any other `chunks` sweeps in one piece.
pub(crate) fn with_margin_sweeper<D, L, R>(
    folded: &Folded,
    z: &[f64],
    y: &[f64],
    chunks: usize,
    body: impl FnOnce(&mut Sweeper<'_, '_, D, L>) -> R,
) -> R
where
    D: ColumnKernels,
    L: Loss + ?Sized,
{
    let n = folded.n;
    let mut m: Vec<f32> = z[..n]
        .iter()
        .zip(y)
        .map(|(&zi, &yi)| (yi * zi) as f32)
        .collect();
    let rows = |start: usize, m| MarginRows { folded, start, m };
    match split_point(n).filter(|_| chunks == 2) {
        Some(h) => {
            let (ml, mr) = m.split_at_mut(h);
            if paired(chunks, n) {
                run_paired(rows(0, ml), rows(h, mr), |p| {
                    body(&mut Sweeper::MarginPaired(p))
                })
            } else {
                body(&mut Sweeper::Margin(vec![rows(0, ml), rows(h, mr)]))
            }
        }
        None => body(&mut Sweeper::Margin(vec![rows(0, &mut m)])),
    }
}

/// Rows `start..start + m.len()` of a [`Folded`] design and their `f32` margins.
pub(crate) struct MarginRows<'a> {
    folded: &'a Folded,
    start: usize,
    m: &'a mut [f32],
}

impl Half for MarginRows<'_> {
    #[inline]
    fn step(&mut self, update: Option<(usize, f64)>, j: usize, clip: Option<f64>) -> f64 {
        let f = self.folded;
        let rows = self.start..self.start + self.m.len();
        // The clipping that keeps the mixed-precision sum's sensitivity at `2 C_j`
        // (`release_clip(C_j, n)`, the proof in `dp_models::simd::margin`): fixed by
        // `C_j` and the public n.
        let c = clip_below(clip.unwrap_or(f64::INFINITY), f.clip_factor);
        let update = update.map(|(k, a)| (&f.col(k)[rows.clone()], a as f32));
        (f.kernel)(update, &f.col(j)[rows], self.m, c)
    }
}

/// The steps offered by the caller to the worker. A step is posted by writing its
/// fields, then its number to `posted` (release). Its second piece goes to whoever
/// moves `claimed` from the step's number minus one to its number first: the worker
/// then answers with the result, then the number in `done` (release); the caller runs
/// it itself otherwise.
#[derive(Default)]
struct Mailbox {
    posted: AtomicU64,
    /// Number of the last step whose second piece was claimed.
    claimed: AtomicU64,
    done: AtomicU64,
    j: AtomicUsize,
    /// Column of the pending update (`usize::MAX`: none).
    k: AtomicUsize,
    /// Bits of the update's step `a`.
    a: AtomicU64,
    /// Bits of the clipping threshold, or `NO_CLIP`.
    clip: AtomicU64,
    result: AtomicU64,
    /// Set when the worker has stopped on a panic.
    failed: AtomicBool,
}

/// `posted` value that stops the worker.
const STOP: u64 = u64::MAX;
/// `clip` value meaning no clipping (a NaN payload no threshold has: thresholds are
/// positive).
const NO_CLIP: u64 = u64::MAX;
/// Spins (`spin_loop` hints, about 100 µs in all) before a waiting thread starts to
/// yield its core to other processes.
const SPINS_BEFORE_YIELD: u32 = 1 << 12;

/// Waits until `cond(atomic)` holds (acquire), spinning then yielding; panics if the
/// worker died (only a panic of the loss can kill it, and it is re-raised by the scope).
#[inline]
fn wait_until(atomic: &AtomicU64, failed: &AtomicBool, cond: impl Fn(u64) -> bool) -> u64 {
    let mut spins = 0u32;
    loop {
        let v = atomic.load(Ordering::Acquire);
        if cond(v) {
            return v;
        }
        if failed.load(Ordering::Relaxed) {
            panic!("the sweep worker thread panicked");
        }
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

struct StopOnDrop<'a>(&'a Mailbox);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.posted.store(STOP, Ordering::Release);
    }
}

/// Marks the mailbox failed if the worker unwinds.
struct FailOnUnwind<'a>(&'a Mailbox);

impl Drop for FailOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.failed.store(true, Ordering::Relaxed);
        }
    }
}

/// The left piece of a split step, on the calling thread (what [`split_step`] computes
/// for its base case).
#[inline]
fn piece<L: Loss + ?Sized>(
    loss: &L,
    update: Option<(&[f64], f64)>,
    x: &[f64],
    z: &mut [f64],
    y: Option<&[f64]>,
    clip: Option<f64>,
) -> f64 {
    match update {
        Some((xk, a)) => loss.dense_step_grad_sum((xk, a), x, z, y, clip),
        None => loss.dense_col_grad_sum(x, z, y, clip),
    }
}

/// Claims the second piece of step `t` (`true` for the first of the two threads to ask).
#[inline]
fn claim(mb: &Mailbox, t: u64) -> bool {
    mb.claimed
        .compare_exchange(t - 1, t, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// The worker: runs the second piece of every posted step it claims before the caller
/// does, until stopped.
fn worker<H: Half>(mb: &Mailbox, rows: &Mutex<H>) {
    let _fail = FailOnUnwind(mb);
    let mut last = 0u64;
    loop {
        let t = wait_until(&mb.posted, &mb.failed, |v| v != last);
        if t == STOP {
            return;
        }
        last = t;
        // The step's fields are read after the claim: the caller, which needs this
        // piece's result, posts no other step before it has it.
        if !claim(mb, t) {
            continue;
        }
        let j = mb.j.load(Ordering::Relaxed);
        let k = mb.k.load(Ordering::Relaxed);
        let a = f64::from_bits(mb.a.load(Ordering::Relaxed));
        let clip = match mb.clip.load(Ordering::Relaxed) {
            NO_CLIP => None,
            bits => Some(f64::from_bits(bits)),
        };
        let update = (k != usize::MAX).then_some((k, a));
        let r = rows
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .step(update, j, clip);
        mb.result.store(r.to_bits(), Ordering::Relaxed);
        mb.done.store(t, Ordering::Release);
    }
}

/// The calling thread's side of a two-thread sweep (see [`with_sweeper`]).
pub(crate) struct Paired<'a, H> {
    mailbox: &'a Mailbox,
    /// The first piece (rows `0..h`).
    left: H,
    /// The second piece (rows `h..n`), locked by whoever runs it.
    right: &'a Mutex<H>,
    seq: u64,
}

impl<H: Half> Paired<'_, H> {
    #[inline]
    fn step(&mut self, update: Option<(usize, f64)>, j: usize, clip: Option<f64>) -> f64 {
        let update = nonzero(update);
        let mb = self.mailbox;
        self.seq += 1;
        let (k, a) = update.unwrap_or((usize::MAX, 0.0));
        mb.j.store(j, Ordering::Relaxed);
        mb.k.store(k, Ordering::Relaxed);
        mb.a.store(a.to_bits(), Ordering::Relaxed);
        mb.clip
            .store(clip.map_or(NO_CLIP, f64::to_bits), Ordering::Relaxed);
        mb.posted.store(self.seq, Ordering::Release);
        let l = self.left.step(update, j, clip);
        let seq = self.seq;
        if mb.failed.load(Ordering::Relaxed) {
            panic!("the sweep worker thread panicked");
        }
        let r = if claim(mb, seq) {
            // The worker has not started this step: run its piece here.
            self.right
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .step(update, j, clip)
        } else {
            wait_until(&mb.done, &mb.failed, |v| v == seq);
            f64::from_bits(mb.result.load(Ordering::Relaxed))
        };
        l + r
    }
}

/// `F(w) = (1/n) sum_i loss(z_i, y_i) + penalty(w)` from a predictor `z = X w`.
pub(crate) fn objective_from_predictor<L: Loss + ?Sized, P: dp_models::Penalty + ?Sized>(
    loss: &L,
    penalty: &P,
    w: &[f64],
    z: &[f64],
    y: &[f64],
) -> f64 {
    let data: f64 = z.iter().zip(y).map(|(&zi, &yi)| loss.value(zi, yi)).sum();
    data / z.len() as f64 + penalty.value(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_models::{Logistic, Squared};

    /// The sparse kernels sum in storage order, exactly as the generic
    /// [`Design::for_each_in_col`] loops of the trait's default methods do, so seeded
    /// fits on sparse designs are bit-identical to what those loops gave.
    #[test]
    fn sparse_kernels_match_the_generic_loops_bit_for_bit() {
        let (n, p) = (13, 4);
        let rows: Vec<f64> = (0..n * p)
            .map(|k| {
                if k % 3 == 0 {
                    0.0
                } else {
                    (k as f64 * 0.71).sin() * 2.0
                }
            })
            .collect();
        let s = SparseDesign::from_dense(&DenseDesign::from_row_major(n, p, &rows).unwrap());
        let z0: Vec<f64> = (0..n).map(|i| (i as f64 * 0.4).cos()).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        for c in [0.05, 0.5, f64::INFINITY] {
            for (k, j) in [(0, 1), (2, 2), (3, 0)] {
                for labels in [Some(&y[..]), None] {
                    let a = 0.37;
                    let mut z = z0.clone();
                    let got = s.step_grad_sum(Some((k, a)), j, &Logistic, &mut z, labels, Clamp(c));
                    let mut zr = z0.clone();
                    s.for_each_in_col(k, |i, x| zr[i] += a * x);
                    let mut want = 0.0;
                    s.for_each_in_col(j, |i, x| {
                        let yi = labels.map_or(0.0, |y| y[i]);
                        want += Clamp(c).clip(Logistic.derivative(zr[i], yi) * x);
                    });
                    assert_eq!(got.to_bits(), want.to_bits(), "c={c} k={k} j={j}");
                    let zb: Vec<u64> = z.iter().map(|v| v.to_bits()).collect();
                    let zrb: Vec<u64> = zr.iter().map(|v| v.to_bits()).collect();
                    assert_eq!(zb, zrb);
                }
            }
            let got = s.col_grad_sum(1, &Logistic, &z0, &y, Clamp(c));
            let mut want = 0.0;
            s.for_each_in_col(1, |i, x| {
                want += Clamp(c).clip(Logistic.derivative(z0[i], y[i]) * x);
            });
            assert_eq!(got.to_bits(), want.to_bits());
        }
    }

    /// A dense 1000 x 4 design, a predictor and labels `+-1` for the sweeper tests
    /// (`a` varies the values).
    fn sweep_fixture(a: f64) -> (DenseDesign, Vec<f64>, Vec<f64>) {
        let (n, p) = (1000, 4);
        let data: Vec<f64> = (0..n * p).map(|k| (k as f64 * a).sin() * 2.0).collect();
        let d = DenseDesign::from_col_major(n, p, &data).unwrap();
        let z0: Vec<f64> = (0..n).map(|i| (i as f64 * 2.4 * a).cos()).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        (d, z0, y)
    }

    /// The two-thread sweeper (a persistent worker for the second piece) computes what
    /// the 2-chunk rayon split computes, bit for bit: sums and predictor.
    #[test]
    fn paired_sweeper_matches_the_two_chunk_split_bit_for_bit() {
        let (d, z0, y) = sweep_fixture(0.37);
        let steps = [
            (None, 0),
            (Some((1, 0.3)), 2),
            (Some((2, 0.0)), 3),
            (Some((3, -0.7)), 0),
            (Some((0, 1e-3)), 0),
        ];
        let two_cores = std::thread::available_parallelism().is_ok_and(|k| k.get() >= 2);
        for c in [0.05, 0.5, f64::INFINITY] {
            for labels in [Some(&y[..]), None] {
                let loss: &dyn Loss = if labels.is_some() {
                    &Logistic
                } else {
                    &Squared::half()
                };
                let mut z1 = z0.clone();
                let want: Vec<u64> = steps
                    .iter()
                    .map(|&(u, j)| {
                        d.step_grad_sum_chunked(u, j, loss, &mut z1, labels, Clamp(c), 2)
                            .to_bits()
                    })
                    .collect();
                let mut z2 = z0.clone();
                let got: Vec<u64> = with_sweeper(&d, loss, &mut z2, labels, 2, |sw| {
                    assert_eq!(matches!(sw, Sweeper::Paired(_)), two_cores);
                    steps
                        .iter()
                        .map(|&(u, j)| sw.step(u, j, Clamp(c)).to_bits())
                        .collect()
                });
                assert_eq!(got, want, "c = {c}");
                let bits = |z: &[f64]| z.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&z2), bits(&z1));
            }
        }
    }

    /// When the worker has not claimed a step's second piece (its core busy, or here no
    /// worker at all), the caller runs it itself, with the same bits as the 2-chunk
    /// split: sums and predictor. (Before, the caller waited for the worker.)
    #[test]
    fn the_caller_runs_the_second_piece_the_worker_did_not_claim() {
        let (d, z0, y) = sweep_fixture(0.53);
        let n = d.n_samples();
        let steps = [
            (None, 1),
            (Some((1, 0.4)), 3),
            (Some((3, 0.0)), 2),
            (Some((2, -0.2)), 2),
        ];
        let h = split_point(n).unwrap();
        for c in [0.1, f64::INFINITY] {
            let mut z1 = z0.clone();
            let want: Vec<u64> = steps
                .iter()
                .map(|&(u, j)| {
                    d.step_grad_sum_chunked(u, j, &Logistic, &mut z1, Some(&y), Clamp(c), 2)
                        .to_bits()
                })
                .collect();
            let mut z2 = z0.clone();
            {
                let mailbox = Mailbox::default();
                let (zl, zr) = z2.split_at_mut(h);
                let right = Mutex::new(DenseRows {
                    d: &d,
                    loss: &Logistic,
                    start: h,
                    z: zr,
                    y: Some(&y[h..]),
                });
                let mut paired = Paired {
                    mailbox: &mailbox,
                    left: DenseRows {
                        d: &d,
                        loss: &Logistic,
                        start: 0,
                        z: zl,
                        y: Some(&y[..h]),
                    },
                    right: &right,
                    seq: 0,
                };
                let got: Vec<u64> = steps
                    .iter()
                    .map(|&(u, j)| paired.step(u, j, Some(c)).to_bits())
                    .collect();
                assert_eq!(got, want, "c = {c}");
                assert_eq!(mailbox.claimed.load(Ordering::Relaxed), steps.len() as u64);
            }
            let bits = |z: &[f64]| z.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&z2), bits(&z1));
        }
    }

    /// The mixed-precision sweep on two threads gives, bit for bit, the kernel run on
    /// its two pieces in turn (left + right, the update applied to each piece's margins,
    /// the terms clipped at `release_clip(C, n)`), and on one thread the kernel on the
    /// whole column.
    #[test]
    fn the_margin_sweep_is_its_pieces_bit_for_bit() {
        use dp_models::simd::margin::{logistic_step, release_clip};
        let (d, z0, y) = sweep_fixture(0.41);
        let (n, p) = (d.n_samples(), d.n_features());
        let folded = Folded::new(&d, &y, logistic_step);
        let steps = [
            (None, 0),
            (Some((0, 0.3)), 2),
            (Some((2, 0.0)), 3),
            (Some((3, -0.7)), 1),
        ];
        let two_cores = std::thread::available_parallelism().is_ok_and(|k| k.get() >= 2);
        let h = split_point(n).unwrap();
        for c in [0.05, 0.5, f64::INFINITY] {
            for (chunks, cuts) in [(1, vec![0, n]), (2, vec![0, h, n])] {
                let mut m: Vec<f32> = z0.iter().zip(&y).map(|(z, y)| (y * z) as f32).collect();
                let want: Vec<u64> = steps
                    .iter()
                    .map(|&(u, j)| {
                        let c32 = release_clip(c, n);
                        let mut s = 0.0;
                        for w in cuts.windows(2) {
                            let rows = w[0]..w[1];
                            let upd =
                                nonzero(u).map(|(k, a)| (&folded.col(k)[rows.clone()], a as f32));
                            s +=
                                logistic_step(upd, &folded.col(j)[rows.clone()], &mut m[rows], c32);
                        }
                        s.to_bits()
                    })
                    .collect();
                let got: Vec<u64> = with_margin_sweeper::<DenseDesign, Logistic, _>(
                    &folded,
                    &z0,
                    &y,
                    chunks,
                    |sw| {
                        assert_eq!(
                            matches!(sw, Sweeper::MarginPaired(_)),
                            chunks == 2 && two_cores
                        );
                        steps
                            .iter()
                            .map(|&(u, j)| sw.step(u, j, Clamp(c)).to_bits())
                            .collect()
                    },
                );
                assert_eq!(got, want, "c = {c}, chunks = {chunks}");
            }
        }
        // The folded copy is y x rounded to f32, column by column.
        for j in 0..p {
            for i in [0, 7, n - 1] {
                assert_eq!(folded.col(j)[i], (y[i] * d.col(j)[i]) as f32);
            }
        }
    }

    #[test]
    fn dense_and_sparse_kernels_agree() {
        let n = 11;
        let p = 3;
        let data: Vec<f64> = (0..n * p)
            .map(|k| {
                if k % 4 == 0 {
                    0.0
                } else {
                    (k as f64 * 0.37).sin() * 3.0
                }
            })
            .collect();
        let d = DenseDesign::from_row_major(n, p, &data).unwrap();
        let s = SparseDesign::from_dense(&d);
        let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.9).cos()).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        for j in 0..p {
            for c in [0.1, 1.0, f64::INFINITY] {
                let a = d.col_grad_sum(j, &Logistic, &z, &y, Clamp(c));
                let b = s.col_grad_sum(j, &Logistic, &z, &y, Clamp(c));
                assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()), "{a} vs {b}");
                // Naive reference.
                let mut r = 0.0;
                for i in 0..n {
                    let t = Logistic.derivative(z[i], y[i]) * d.col(j)[i];
                    r += t.signum() * t.abs().min(c);
                }
                assert!((a - r).abs() <= 1e-12 * (1.0 + r.abs()), "{a} vs {r}");
            }
            let a = d.col_grad_sum(j, &Squared::full(), &z, &y, NoClip);
            let b = d.col_grad_sum(j, &Squared::full(), &z, &y, Clamp(f64::INFINITY));
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}
