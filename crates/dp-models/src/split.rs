//! Row subsets and a seeded, reproducible train / test split.
//!
//! # Privacy
//!
//! The split is data-independent: which rows are held out depends only on `n`, the
//! fraction and the seed, never on the values. A private model fitted on the training
//! rows carries its guarantee for them; the held-out rows are still private data, so a
//! score computed on them without privacy (see [`crate::metrics`]) is not covered by
//! that guarantee.
//!
//! # Randomness
//!
//! The permutation is drawn from `ChaCha20Rng::seed_from_u64(seed)` with a Fisher-Yates
//! shuffle whose uniform draws are written out here (rejection sampling on
//! `next_u64`), so the split depends only on the ChaCha20 stream and reproduces bit for
//! bit across platforms and `rand` versions.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::dataset::Dataset;
use crate::design::{DenseDesign, Design, SparseDesign};
use crate::error::{ModelError, Result};

/// Designs from which a design made of a subset of the rows can be built.
pub trait SelectRows: Design + Sized {
    /// The design made of rows `rows` of `self`, in that order (a row may appear more
    /// than once). An empty `rows` or an index `>= n_samples()` is an error.
    ///
    /// ```
    /// use dp_models::{DenseDesign, Design};
    /// use dp_models::split::SelectRows;
    /// let x = DenseDesign::from_row_major(3, 2, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let sub = x.select_rows(&[2, 0])?;
    /// assert_eq!(sub.row(0), &[5.0, 6.0]);
    /// assert_eq!(sub.col(1), &[6.0, 2.0]);
    /// # Ok::<(), dp_models::ModelError>(())
    /// ```
    fn select_rows(&self, rows: &[usize]) -> Result<Self>;
}

fn check_rows(n: usize, rows: &[usize]) -> Result<()> {
    if rows.is_empty() {
        return Err(ModelError::Empty("no rows selected".into()));
    }
    if let Some(&i) = rows.iter().find(|&&i| i >= n) {
        return Err(ModelError::Shape(format!(
            "row index {i} is out of range for a design of {n} rows"
        )));
    }
    Ok(())
}

impl SelectRows for DenseDesign {
    fn select_rows(&self, rows: &[usize]) -> Result<Self> {
        check_rows(self.n_samples(), rows)?;
        let p = self.n_features();
        let mut data = Vec::with_capacity(rows.len() * p);
        for &i in rows {
            data.extend_from_slice(self.row(i));
        }
        DenseDesign::from_row_major(rows.len(), p, &data)
    }
}

impl SelectRows for SparseDesign {
    fn select_rows(&self, rows: &[usize]) -> Result<Self> {
        check_rows(self.n_samples(), rows)?;
        let mut triplets = Vec::new();
        for (new_i, &i) in rows.iter().enumerate() {
            let (idx, val) = self.row(i);
            triplets.extend(idx.iter().zip(val).map(|(&j, &v)| (new_i, j, v)));
        }
        SparseDesign::from_triplets(rows.len(), self.n_features(), &triplets)
    }
}

/// The dataset made of rows `rows` of `data` (design and labels), in that order.
pub fn select<D: SelectRows>(data: &Dataset<D>, rows: &[usize]) -> Result<Dataset<D>> {
    let x = data.x().select_rows(rows)?;
    let y = rows.iter().map(|&i| data.y()[i]).collect();
    Dataset::new(x, y)
}

/// A uniform integer in `0..bound` (`bound >= 1`), unbiased (rejection of the lowest
/// `2^64 mod bound` values).
fn uniform_below(rng: &mut ChaCha20Rng, bound: u64) -> u64 {
    let threshold = bound.wrapping_neg() % bound;
    loop {
        let v = rng.next_u64();
        if v >= threshold {
            return v % bound;
        }
    }
}

/// The row indices of a train / test split of `n` rows: `(train, test)`, each in
/// increasing order, together a partition of `0..n`.
///
/// The test side has `round(test_fraction * n)` rows (halves rounded away from zero),
/// chosen uniformly at random by a permutation seeded with `seed` (see the module docs).
/// Errors: `test_fraction` not strictly between 0 and 1 (or not finite), or a split
/// that leaves either side empty.
///
/// ```
/// use dp_models::split::split_indices;
/// let (train, test) = split_indices(10, 0.3, 42)?;
/// assert_eq!((train.len(), test.len()), (7, 3));
/// assert_eq!(split_indices(10, 0.3, 42)?, (train, test)); // same seed, same split
/// assert!(split_indices(10, 0.01, 42).is_err()); // no test row
/// # Ok::<(), dp_models::ModelError>(())
/// ```
pub fn split_indices(n: usize, test_fraction: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_fraction.is_finite() && test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(ModelError::InvalidParameter {
            name: "test_fraction",
            value: test_fraction,
            expected: "must lie strictly between 0 and 1",
        });
    }
    let n_test = (test_fraction * n as f64).round() as usize;
    let n_test = n_test.min(n);
    if n_test == 0 || n_test == n {
        let side = if n_test == 0 { "test" } else { "training" };
        return Err(ModelError::Empty(format!(
            "a test fraction of {test_fraction} of {n} rows gives {n_test} test and {} training rows: the {side} set would be empty",
            n - n_test
        )));
    }
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for i in (1..n).rev() {
        let j = uniform_below(&mut rng, i as u64 + 1) as usize;
        perm.swap(i, j);
    }
    let mut test = perm[..n_test].to_vec();
    let mut train = perm[n_test..].to_vec();
    test.sort_unstable();
    train.sort_unstable();
    Ok((train, test))
}

/// Splits `data` into `(train, test)` with [`split_indices`]: the test side has
/// `round(test_fraction * n)` rows chosen by a ChaCha20 permutation seeded with
/// `seed`, and both sides keep the rows in their original order. The same seed gives
/// the same split, bit for bit.
///
/// ```
/// use dp_models::split::train_test_split;
/// use dp_models::{Dataset, DenseDesign};
///
/// let x = DenseDesign::from_row_major(8, 1, &[0., 1., 2., 3., 4., 5., 6., 7.])?;
/// let data = Dataset::new(x, vec![0., 10., 20., 30., 40., 50., 60., 70.])?;
/// let (train, test) = train_test_split(&data, 0.25, 7)?;
/// assert_eq!((train.n_samples(), test.n_samples()), (6, 2));
/// // Rows travel with their labels.
/// assert!(test.x().col(0).iter().zip(test.y()).all(|(x, y)| *y == 10.0 * x));
/// # Ok::<(), dp_models::ModelError>(())
/// ```
pub fn train_test_split<D: SelectRows>(
    data: &Dataset<D>,
    test_fraction: f64,
    seed: u64,
) -> Result<(Dataset<D>, Dataset<D>)> {
    let (train, test) = split_indices(data.n_samples(), test_fraction, seed)?;
    Ok((select(data, &train)?, select(data, &test)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Dataset<DenseDesign> {
        // Row i is (i, -i), label i: every row identifies itself.
        let x: Vec<f64> = (0..n).flat_map(|i| [i as f64, -(i as f64)]).collect();
        Dataset::new(
            DenseDesign::from_row_major(n, 2, &x).unwrap(),
            (0..n).map(|i| i as f64).collect(),
        )
        .unwrap()
    }

    #[test]
    fn split_is_a_partition_and_rows_keep_their_labels() {
        let d = data(101);
        let (train, test) = train_test_split(&d, 0.2, 3).unwrap();
        assert_eq!((train.n_samples(), test.n_samples()), (81, 20));
        let mut seen: Vec<f64> = train.y().iter().chain(test.y()).copied().collect();
        seen.sort_by(f64::total_cmp);
        assert_eq!(seen, (0..101).map(|i| i as f64).collect::<Vec<_>>());
        for part in [&train, &test] {
            for i in 0..part.n_samples() {
                let y = part.y()[i];
                assert_eq!(part.x().row(i), &[y, -y]);
            }
            // Original order kept.
            assert!(part.y().windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn same_seed_same_split_other_seed_other_split() {
        let d = data(200);
        let a = train_test_split(&d, 0.3, 11).unwrap();
        let b = train_test_split(&d, 0.3, 11).unwrap();
        assert_eq!(a, b);
        let c = train_test_split(&d, 0.3, 12).unwrap();
        assert_ne!(a.1.y(), c.1.y());
        // The split is pinned: a change of algorithm or generator shows up here.
        assert_eq!(
            split_indices(10, 0.3, 0).unwrap(),
            (vec![0, 2, 5, 6, 7, 8, 9], vec![1, 3, 4])
        );
        assert_eq!(
            split_indices(10, 0.3, 1).unwrap(),
            (vec![2, 4, 5, 6, 7, 8, 9], vec![0, 1, 3])
        );
    }

    #[test]
    fn split_is_uniform_enough() {
        // Over many seeds, every row is held out about test_fraction of the time.
        let (n, runs) = (10, 4000);
        let mut counts = [0usize; 10];
        for seed in 0..runs {
            for i in split_indices(n, 0.3, seed).unwrap().1 {
                counts[i] += 1;
            }
        }
        for (i, &c) in counts.iter().enumerate() {
            let freq = c as f64 / runs as f64;
            // Binomial sd = sqrt(0.3 * 0.7 / 4000) ~ 0.0072; 5 sd.
            assert!((freq - 0.3).abs() < 0.036, "row {i}: {freq}");
        }
    }

    #[test]
    fn sparse_split_matches_dense() {
        let d = data(30);
        let s = Dataset::new(SparseDesign::from_dense(d.x()), d.y().to_vec()).unwrap();
        let (dt, de) = train_test_split(&d, 0.5, 9).unwrap();
        let (st, se) = train_test_split(&s, 0.5, 9).unwrap();
        assert_eq!(dt.y(), st.y());
        assert_eq!(de.y(), se.y());
        assert_eq!(SparseDesign::from_dense(de.x()), *se.x());
    }

    #[test]
    fn bad_fractions_and_empty_sides_are_errors() {
        let d = data(10);
        for f in [0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            let e = train_test_split(&d, f, 1).unwrap_err();
            assert!(e.to_string().contains("test_fraction"), "{f}: {e}");
        }
        let e = train_test_split(&d, 0.01, 1).unwrap_err().to_string();
        assert!(e.contains("test set would be empty"), "{e}");
        let e = train_test_split(&d, 0.99, 1).unwrap_err().to_string();
        assert!(e.contains("training set would be empty"), "{e}");
        assert!(train_test_split(&data(1), 0.5, 1).is_err());
    }

    #[test]
    fn select_rows_checks_indices() {
        let d = data(3);
        assert!(matches!(d.x().select_rows(&[]), Err(ModelError::Empty(_))));
        let e = d.x().select_rows(&[0, 3]).unwrap_err();
        assert!(e.to_string().contains("row index 3"), "{e}");
        let s = SparseDesign::from_dense(d.x());
        assert!(s.select_rows(&[5]).is_err());
        let picked = select(&d, &[2, 2, 0]).unwrap();
        assert_eq!(picked.y(), &[2.0, 2.0, 0.0]);
        assert_eq!(
            s.select_rows(&[2, 0]).unwrap().row(0),
            (&[0usize, 1][..], &[2.0, -2.0][..])
        );
    }
}
