//! The DP-SCD paper's scaling (Damaskinos et al. 2021, Sec. 5), shared by every
//! experiment and example that uses it: chosen columns standardised with the training
//! mean / standard deviation, every column divided by its maximal absolute value on the
//! training records (MaxAbs), then every row scaled to unit L2 norm.
//!
//! After it, every record satisfies `||x_i||_2 <= 1` and `|x_ij| <= 1` **by
//! construction** (the row normalisation guarantees both whatever the statistics), so
//! these bounds are public and the private solvers may use them. The statistics
//! themselves (means, standard deviations, maxima) are computed from the training rows
//! without privacy, as the DP-SCD paper does: a privacy guarantee of a fit on the
//! scaled records is about those records, not about the statistics.
//!
//! [`adult_train_test`] is UCI Adult encoded as in [`adult()`](super::adult), split and
//! scaled in this way.

use anyhow::Result;
use dp_models::split::{select, split_indices};
use dp_models::{Dataset, DenseDesign, Design};

/// Scales `sets` in place with statistics of `sets[0]` (the training records):
/// columns `standardize` are centred and divided by their standard deviation (kept at
/// 1 when it is 0), every column is then divided by its maximal absolute value on
/// `sets[0]` (kept when it is 0), and every row is divided by its L2 norm (rows of norm
/// 0 are kept). Errors when `sets` is empty, the sets differ in width or a column index
/// is out of range.
pub fn scale_and_normalise_rows(
    sets: &mut [&mut Dataset<DenseDesign>],
    standardize: &[usize],
) -> Result<()> {
    let Some(first) = sets.first() else {
        anyhow::bail!("scale_and_normalise_rows: no data set given");
    };
    let p = first.n_features();
    if let Some(d) = sets.iter().find(|d| d.n_features() != p) {
        anyhow::bail!(
            "scale_and_normalise_rows: a set has {} features, the training set {p}",
            d.n_features()
        );
    }
    if let Some(&j) = standardize.iter().find(|&&j| j >= p) {
        anyhow::bail!("scale_and_normalise_rows: column {j} out of range (p = {p})");
    }
    let train = first.x();
    let n = train.n_samples() as f64;
    let mut shift = vec![0.0; p];
    let mut scale = vec![1.0; p];
    for &j in standardize {
        let c = train.col(j);
        let m = c.iter().sum::<f64>() / n;
        let sd = (c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt();
        shift[j] = m;
        scale[j] = if sd > 0.0 { sd } else { 1.0 };
    }
    let mut maxabs = vec![0.0f64; p];
    for (j, m) in maxabs.iter_mut().enumerate() {
        for &v in train.col(j) {
            *m = m.max(((v - shift[j]) / scale[j]).abs());
        }
        if *m == 0.0 {
            *m = 1.0;
        }
    }
    for d in sets.iter_mut() {
        let (nd, y) = (d.n_samples(), d.y().to_vec());
        let mut rows = Vec::with_capacity(nd * p);
        for i in 0..nd {
            rows.extend_from_slice(d.x().row(i));
        }
        for r in rows.chunks_mut(p) {
            for j in 0..p {
                r[j] = (r[j] - shift[j]) / scale[j] / maxabs[j];
            }
            let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 0.0 {
                r.iter_mut().for_each(|v| *v /= norm);
            }
        }
        **d = Dataset::new(DenseDesign::from_row_major(nd, p, &rows)?, y)?;
    }
    Ok(())
}

/// UCI Adult ([`adult()`](super::adult)) split into train / test (`test_fraction` of
/// the records to the test set, split seed `seed`) and scaled with
/// [`scale_and_normalise_rows`] on statistics of the training records, the five integer
/// columns standardised (the DP-SCD paper's pipeline). With `test_fraction = 0.2` and
/// `seed = 0`: `n_train = 26,049`, `n_test = 6,512`, `p = 81`.
pub fn adult_train_test(
    test_fraction: f64,
    seed: u64,
) -> Result<(Dataset<DenseDesign>, Dataset<DenseDesign>)> {
    let (raw, _) = super::adult()?;
    let (train, test) = split_indices(raw.n_samples(), test_fraction, seed)?;
    let (mut tr, mut te) = (select(&raw, &train)?, select(&raw, &test)?);
    scale_and_normalise_rows(&mut [&mut tr, &mut te], &ADULT_STANDARDIZED)?;
    Ok((tr, te))
}

/// The columns of [`adult()`](super::adult) the DP-SCD pipeline standardises: its five
/// integer columns ([`ADULT_NUMERIC`](super::ADULT_NUMERIC)).
pub const ADULT_STANDARDIZED: [usize; 5] = [0, 1, 2, 3, 4];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_unit_norm_and_statistics_come_from_the_first_set() {
        let x = [1.0, 0.0, 3.0, 2.0, 0.0, 0.0];
        let mut a = Dataset::new(
            DenseDesign::from_row_major(3, 2, &x).unwrap(),
            vec![1.0, -1.0, 1.0],
        )
        .unwrap();
        // The second set has a value 10x the training maximum: it is scaled with the
        // training statistics (so before normalisation it exceeds 1).
        let mut b = Dataset::new(
            DenseDesign::from_row_major(1, 2, &[20.0, 0.0]).unwrap(),
            vec![1.0],
        )
        .unwrap();
        scale_and_normalise_rows(&mut [&mut a, &mut b], &[]).unwrap();
        // Column maxima 3 and 2: row 0 = (1/3, 0) -> (1, 0); row 1 = (1, 1) -> (1, 1)/sqrt(2).
        assert_eq!(a.x().row(0), &[1.0, 0.0]);
        let r1 = a.x().row(1);
        let (u, v) = (1.0f64, 1.0f64);
        let nrm = (u * u + v * v).sqrt();
        assert!((r1[0] - u / nrm).abs() < 1e-15 && (r1[1] - v / nrm).abs() < 1e-15);
        // An all-zero row stays zero.
        assert_eq!(a.x().row(2), &[0.0, 0.0]);
        assert_eq!(b.x().row(0), &[1.0, 0.0]);
        assert!(scale_and_normalise_rows(&mut [], &[]).is_err());
        assert!(scale_and_normalise_rows(&mut [&mut a], &[2]).is_err());
    }

    #[test]
    fn adult_split_has_the_documented_shape_and_bounds() {
        let (tr, te) = adult_train_test(0.2, 0).unwrap();
        assert_eq!((tr.n_samples(), te.n_samples()), (26_049, 6_512));
        assert_eq!(tr.n_features(), 81);
        for d in [&tr, &te] {
            for i in 0..d.n_samples() {
                let r = d.x().row(i);
                let n2: f64 = r.iter().map(|v| v * v).sum();
                assert!(n2 <= 1.0 + 1e-12, "row {i}: {n2}");
            }
        }
    }
}
