//! Public bounds on how many features of one record can be non-zero, and what they
//! save DP-CD's accounting.
//!
//! One-hot encoded categories, bags of words and other sparse records touch few of the
//! `p` features. A DP-CD release of coordinate `j` is the clipped sum
//! `(1/n) sum_i clip(phi'(x_i^T w, y_i) x_ij, C_j) + N(0, sigma_j^2)`, and a record whose
//! feature `j` is zero contributes exactly `0` to it, whatever `w` (the kernels make sure
//! of that even for a non-finite derivative). So two neighbouring datasets give the same
//! release of every coordinate outside the support of the record that differs: those
//! releases cost that pair nothing. With a **public** bound on the support of every
//! record, a pass over the `p` coordinates costs any pair at most what `k` releases
//! cost, not `p` (Adult's one-hot design: `k = 12` of `p = 81`).
//!
//! # Privacy
//!
//! *Neighbouring relations:* replace-one (datasets of the public size `n` differing in
//! one record) and add/remove (one record more or less, releases normalised by a public
//! `N`), as [`DpCdParams::adjacency`](crate::DpCdParams::adjacency) sets.
//!
//! *Preconditions:* the bound ([`RowSupport`]) is chosen without looking at the data
//! (e.g. from the schema: the number of numeric columns plus one per one-hot encoded
//! column); every record of the data satisfies it. A front end makes it hold with
//! [`RowSupport::project`], which keeps the `k` largest-magnitude non-zeros of an
//! offending record (per group) and sets the others to 0: a fixed map applied record by
//! record, reading nothing but that record and the public bound, so neighbouring
//! datasets stay neighbouring under the same relation after it and the claim below
//! holds for the projected data (`cargo xtask fit --max-nonzeros` does this, as
//! `--feature-bound` clips; how many records were projected is a count from the data,
//! reported only in the non-private diagnostics). DP-CD's fit applies the same
//! projection itself, before anything is charged or drawn, when a record breaks the
//! bound (the count goes to `Diagnostics::support_projected`; a design type without a
//! projection, see `ColumnKernels::project_support`, is refused instead); every
//! coordinate is visited at
//! most `ceil(T / p)` times in `T` steps, which holds for the
//! [`Cyclic`](crate::CoordinateOrder::Cyclic) and
//! [`Permutation`](crate::CoordinateOrder::Permutation) orders (each block of `p`
//! consecutive steps visits every coordinate once) and not for `Uniform`, which is
//! refused.
//!
//! *Claim:* the `T` releases of DP-CD with noise multiplier `s` (`sigma_j = s * 2 C_j / n`
//! under replace-one, `s * C_j / N` under add/remove) are, for every neighbouring pair,
//! dominated by the composition of `min(T, k ceil(T / p))` Gaussian mechanisms of
//! multiplier `s`, with `k` = [`RowSupport::releases_per_pass`]. The ledger is charged
//! that many releases, so every accountant (RDP, GDP, PLD) composes exactly that.
//!
//! *Proof.* Fix a pair and write the release at step `t` of coordinate `j_t` as a
//! Gaussian mechanism whose sensitivity, for this pair and whatever the history (the
//! iterate `w_t`), is at most `b_{j_t}` times `sigma_{j_t} / s`:
//!
//! * replace-one, record `x` replaced by `x'` with supports `A` and `B`: for `j` in
//!   `A ∩ B` both terms lie in `[-C_j, C_j]`, so `b_j = 1` (sensitivity `2 C_j / n`);
//!   for `j` in `A \ B` or `B \ A` one term is `0`, so the difference is at most
//!   `C_j / n`, half the sensitivity: `b_j = 1/2`; outside `A ∪ B` both are `0`:
//!   `b_j = 0`;
//! * add/remove, record `x` with support `A`: `b_j = 1` on `A` (one term in
//!   `[-C_j, C_j]` appears or goes, sensitivity `C_j / N`), `0` elsewhere.
//!
//! A Gaussian mechanism whose sensitivity (for this pair, given the history) is at
//! most `b` times the reference has a trade-off function at least `G_{b/s}` (Dong, Roth
//! & Su 2022, Thm 2.7, and monotonicity of `G_mu` in `mu`), and adaptive composition
//! for a fixed pair multiplies these bounds (their Thm 3.2, whose proof is pairwise;
//! the same holds of RDP, Mironov 2017 Prop. 1): the pair's trade-off function is at
//! least `G_mu` with `mu^2 = sum_t b_{j_t}^2 / s^2`, exactly that of `sum_t b_{j_t}^2`
//! releases of multiplier `s`. Each coordinate is visited at most `v = ceil(T / p)`
//! times, so `sum_t b_{j_t}^2 <= v sum_j b_j^2`. Under add/remove
//! `sum_j b_j^2 = |A| <= k`. Under replace-one, with `o = |A ∩ B|`,
//! `sum_j b_j^2 = o + (|A| + |B| - 2 o) / 4 = o / 2 + (|A| + |B|) / 4`; within a group of
//! the bound (at most `m_g` non-zeros among its `|g|` features) both supports have at
//! most `k_g = min(m_g, |g|)` features and `o <= k_g`, so the group adds at most
//! `k_g / 2 + k_g / 2 = k_g`, and `k = sum_g k_g`. Also `b_j <= 1` at every step, so the
//! sum is at most `T`. The worst pair over all pairs is therefore dominated by
//! `min(T, k v)` releases of multiplier `s`. Since `G_mu` is the exact trade-off
//! function of a Gaussian, the bound is reached by a pair whose records have the same
//! support of size `k` (the audit in `tests/privacy_audit.rs` builds it).

use serde::{Deserialize, Serialize};

use crate::error::{OptimError, Result};
use dp_models::Design;

/// A public bound on the non-zero features of every record (see the [module
/// docs](self)).
///
/// ```
/// use dp_optim::support::{FeatureGroup, RowSupport};
/// // Two numeric features (0, 1), then a colour one-hot encoded in features 2..5 and a
/// // size one-hot encoded in features 5..8: at most one non-zero in each group.
/// let bound = RowSupport::one_hot(vec![(2..5).collect(), (5..8).collect()]);
/// assert_eq!(bound.releases_per_pass(8).unwrap(), 4); // 2 numeric + 1 + 1
/// // The same bound stated as a plain count is as good here, and coarser in general.
/// assert_eq!(RowSupport::AtMost(4).releases_per_pass(8).unwrap(), 4);
/// # let _ = FeatureGroup { features: vec![0], max_nonzero: 1 };
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RowSupport {
    /// Every record has at most this many non-zero features.
    AtMost(usize),
    /// The features are split into disjoint groups (e.g. the indicator columns of one
    /// one-hot encoded categorical column), and every record has at most
    /// `max_nonzero` non-zero features in each group. A feature in no group may be
    /// non-zero in every record.
    Groups(Vec<FeatureGroup>),
}

/// A group of features of a [`RowSupport::Groups`] bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureGroup {
    /// The features of the group (indices into the design's columns).
    pub features: Vec<usize>,
    /// At most this many of them are non-zero in any one record.
    pub max_nonzero: usize,
}

impl RowSupport {
    /// Groups of one-hot indicator columns, at most one non-zero in each (a record
    /// falls in one category; with a dropped reference category, in at most one of
    /// the remaining indicators).
    pub fn one_hot(groups: Vec<Vec<usize>>) -> Self {
        RowSupport::Groups(
            groups
                .into_iter()
                .map(|features| FeatureGroup {
                    features,
                    max_nonzero: 1,
                })
                .collect(),
        )
    }

    /// Checks the bound against the number of features `p`: groups non-empty,
    /// disjoint, with indices below `p`; `AtMost(0)` is refused (every record would be
    /// all zeros).
    pub fn check(&self, p: usize) -> Result<()> {
        match self {
            RowSupport::AtMost(0) => Err(OptimError::InvalidParameter {
                name: "row_support",
                value: "AtMost(0)".into(),
                expected: "at least one feature may be non-zero in a record",
            }),
            RowSupport::AtMost(_) => Ok(()),
            RowSupport::Groups(groups) => {
                let mut seen = vec![false; p];
                for (g, group) in groups.iter().enumerate() {
                    if group.features.is_empty() {
                        return Err(OptimError::InvalidParameter {
                            name: "row_support",
                            value: format!("group {g} is empty"),
                            expected: "every group names at least one feature",
                        });
                    }
                    for &j in &group.features {
                        if j >= p {
                            return Err(OptimError::Shape(format!(
                                "row_support group {g} names feature {j}, but the data has \
                                 {p} features"
                            )));
                        }
                        if std::mem::replace(&mut seen[j], true) {
                            return Err(OptimError::InvalidParameter {
                                name: "row_support",
                                value: format!("feature {j} is in two groups"),
                                expected: "disjoint groups (each feature in at most one)",
                            });
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// `k`: the most releases of one pass over the `p` coordinates that one record can
    /// move, in the sense of the [module docs](self) (the same under replace-one and
    /// add/remove): `min(s, p)` for `AtMost(s)`; for groups, the sum over groups of
    /// `min(max_nonzero, |group|)`, plus one per feature in no group.
    pub fn releases_per_pass(&self, p: usize) -> Result<u64> {
        self.check(p)?;
        Ok(match self {
            RowSupport::AtMost(s) => (*s).min(p) as u64,
            RowSupport::Groups(groups) => {
                let grouped: usize = groups.iter().map(|g| g.features.len()).sum();
                let within: usize = groups
                    .iter()
                    .map(|g| g.max_nonzero.min(g.features.len()))
                    .sum();
                (within + (p - grouped)) as u64
            }
        })
    }

    /// The releases to charge for `updates` coordinate updates over `p` features in an
    /// order that visits each coordinate at most `ceil(updates / p)` times:
    /// `min(updates, k ceil(updates / p))`.
    pub fn charged_releases(&self, p: usize, updates: u64) -> Result<u64> {
        let k = self.releases_per_pass(p)?;
        let visits = updates.div_ceil(p as u64);
        Ok(updates.min(k.saturating_mul(visits)))
    }

    /// Projects every record of `x` onto the bound: in each group (all `p` features for
    /// [`RowSupport::AtMost`]), a record with more non-zeros than allowed keeps the
    /// allowed number of its largest-magnitude ones (ties: the lower feature index) and
    /// the others are set to 0. Returns how many records were projected.
    ///
    /// # Privacy
    /// The map reads one record and the public bound only, and is the same for every
    /// record: datasets that differ in one record (replace-one) or by one record
    /// (add/remove) still do after it, so a mechanism that is private on data
    /// satisfying the bound is private on `project`'s output for the raw data with the
    /// same guarantee (pre-processing by a fixed per-record map). The returned count is
    /// computed from the data without privacy: for the data holder, not for
    /// publication.
    ///
    /// ```
    /// use dp_models::{DenseDesign, Design};
    /// use dp_optim::support::RowSupport;
    /// let mut x = DenseDesign::from_row_major(2, 3, &[0.5, -2.0, 1.0, 0.0, 1.0, 0.0])?;
    /// assert_eq!(RowSupport::AtMost(2).project(&mut x)?, 1);
    /// assert_eq!(x.row(0), &[0.0, -2.0, 1.0]); // 0.5, the smallest, dropped
    /// assert_eq!(x.row(1), &[0.0, 1.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn project<D: dp_models::ClipValues>(&self, x: &mut D) -> Result<usize> {
        let (n, p) = (x.n_samples(), x.n_features());
        self.check(p)?;
        let all: Vec<usize>;
        let groups: Vec<(&[usize], usize)> = match self {
            RowSupport::AtMost(k) => {
                all = (0..p).collect();
                vec![(&all[..], *k)]
            }
            RowSupport::Groups(gs) => gs
                .iter()
                .map(|g| (&g.features[..], g.max_nonzero))
                .collect(),
        };
        let mut projected = vec![false; n];
        let mut drop: Vec<(usize, usize)> = Vec::new();
        let mut entries: Vec<(usize, usize, f64)> = Vec::new();
        for (features, limit) in groups {
            entries.clear();
            for &j in features {
                x.for_each_in_col(j, |i, v| {
                    if v != 0.0 {
                        entries.push((i, j, v.abs()));
                    }
                });
            }
            // By record, then largest magnitude first, then lower feature index.
            entries.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.total_cmp(&a.2)).then(a.1.cmp(&b.1)));
            let mut start = 0;
            while start < entries.len() {
                let i = entries[start].0;
                let end = start + entries[start..].iter().take_while(|e| e.0 == i).count();
                if end - start > limit {
                    projected[i] = true;
                    drop.extend(entries[start + limit..end].iter().map(|e| (i, e.1)));
                }
                start = end;
            }
        }
        x.zero_entries(&drop)?;
        Ok(projected.iter().filter(|&&b| b).count())
    }

    /// Checks that every record of `x` satisfies the bound (a value counts as non-zero
    /// when it is not `0.0`). The error names the first record that breaks it; project
    /// the data first ([`RowSupport::project`]) so that it does not happen.
    ///
    /// This compares the data with the caller's public claim without privacy; a
    /// failure releases nothing (the fit stops before charging or drawing), and the
    /// message is for whoever holds the data, not for publication.
    pub fn validate<D: Design>(&self, x: &D) -> Result<()> {
        let (n, p) = (x.n_samples(), x.n_features());
        self.check(p)?;
        // Per-record counts of the current group: `mark[i]` says which group
        // `count[i]` belongs to, so nothing is cleared between groups (O(nnz) in all).
        let mut count = vec![0usize; n];
        let mut mark = vec![usize::MAX; n];
        let mut over: Option<(usize, usize, usize)> = None;
        let mut visit = |g: usize, cols: &mut dyn Iterator<Item = usize>, limit: usize| {
            for j in cols {
                x.for_each_in_col(j, |i, v| {
                    if v != 0.0 {
                        if mark[i] != g {
                            mark[i] = g;
                            count[i] = 0;
                        }
                        count[i] += 1;
                        if count[i] > limit && over.is_none_or(|(i0, _, _)| i < i0) {
                            over = Some((i, g, count[i]));
                        }
                    }
                });
            }
        };
        match self {
            RowSupport::AtMost(s) => visit(0, &mut (0..p), *s),
            RowSupport::Groups(groups) => {
                for (g, group) in groups.iter().enumerate() {
                    visit(g, &mut group.features.iter().copied(), group.max_nonzero);
                }
            }
        }
        match (over, self) {
            (None, _) => Ok(()),
            (Some((i, _, c)), RowSupport::AtMost(s)) => Err(OptimError::BoundViolated(format!(
                "record {i} has at least {c} non-zero features, above the stated row \
                 support bound of {s}"
            ))),
            (Some((i, g, c)), RowSupport::Groups(groups)) => {
                Err(OptimError::BoundViolated(format!(
                    "record {i} has at least {c} non-zero features in row-support group {g} \
                     (features {:?}), above its stated bound of {}",
                    groups[g].features, groups[g].max_nonzero
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_models::{DenseDesign, SparseDesign};

    #[test]
    fn releases_per_pass_counts_groups_and_ungrouped_features() {
        let groups = RowSupport::Groups(vec![
            FeatureGroup {
                features: vec![0, 1, 2],
                max_nonzero: 1,
            },
            FeatureGroup {
                features: vec![3, 4],
                max_nonzero: 5, // more than the group has: the group's size counts
            },
        ]);
        // 1 + 2 + three ungrouped features (5, 6, 7).
        assert_eq!(groups.releases_per_pass(8).unwrap(), 6);
        assert_eq!(RowSupport::AtMost(3).releases_per_pass(8).unwrap(), 3);
        assert_eq!(RowSupport::AtMost(30).releases_per_pass(8).unwrap(), 8);
        // Two passes and a half: coordinates are visited at most 3 times.
        assert_eq!(groups.charged_releases(8, 20).unwrap(), 18);
        assert_eq!(RowSupport::AtMost(3).charged_releases(8, 16).unwrap(), 6);
        // Never more than the releases themselves.
        assert_eq!(RowSupport::AtMost(3).charged_releases(8, 2).unwrap(), 2);
    }

    #[test]
    fn malformed_bounds_are_refused_with_the_reason() {
        let e = RowSupport::AtMost(0).check(3).unwrap_err().to_string();
        assert!(e.contains("AtMost(0)"), "{e}");
        let e = RowSupport::one_hot(vec![vec![0, 1], vec![1, 2]])
            .check(3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("feature 1 is in two groups"), "{e}");
        let e = RowSupport::one_hot(vec![vec![0, 7]])
            .check(3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("feature 7") && e.contains("3 features"), "{e}");
        let e = RowSupport::one_hot(vec![vec![]])
            .check(3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("group 0 is empty"), "{e}");
    }

    #[test]
    fn validation_names_the_first_record_that_breaks_the_bound() {
        // Rows: (1, 0, 0, 2), (0, 1, 1, 0), (1, 0, 1, 1).
        let rows = [1.0, 0.0, 0.0, 2.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
        let dense = DenseDesign::from_row_major(3, 4, &rows).unwrap();
        let sparse = SparseDesign::from_dense(&dense);
        for bound in [RowSupport::AtMost(3), RowSupport::AtMost(4)] {
            assert!(bound.validate(&dense).is_ok());
            assert!(bound.validate(&sparse).is_ok());
        }
        let e = RowSupport::AtMost(2).validate(&dense).unwrap_err();
        assert!(matches!(e, OptimError::BoundViolated(_)));
        assert!(e.to_string().contains("record 2"), "{e}");
        assert_eq!(e, RowSupport::AtMost(2).validate(&sparse).unwrap_err());
        // Features 1 and 2 one-hot: record 1 has both.
        let g = RowSupport::one_hot(vec![vec![1, 2]]);
        let e = g.validate(&dense).unwrap_err().to_string();
        assert!(e.contains("record 1") && e.contains("group 0"), "{e}");
        // Features 0 and 1 one-hot: every record has at most one of them.
        assert!(RowSupport::one_hot(vec![vec![0, 1]])
            .validate(&dense)
            .is_ok());
    }

    /// Issue 24: a record that broke a declared support bound made the fit refuse with
    /// its index (a non-private output). `project` keeps its largest-magnitude
    /// non-zeros instead; the projected data satisfy the bound, records within it are
    /// unchanged, dense and sparse agree.
    #[test]
    fn projection_keeps_the_largest_non_zeros_and_then_the_bound_holds() {
        // Rows: (1, 0, -3, 2), (0, 1, 1, 0), (0.5, 0.5, 0.5, 0).
        let rows = [1.0, 0.0, -3.0, 2.0, 0.0, 1.0, 1.0, 0.0, 0.5, 0.5, 0.5, 0.0];
        let dense = DenseDesign::from_row_major(3, 4, &rows).unwrap();
        let sparse = SparseDesign::from_dense(&dense);
        let bound = RowSupport::AtMost(2);
        assert!(bound.validate(&dense).is_err());
        let mut d = dense.clone();
        assert_eq!(bound.project(&mut d).unwrap(), 2);
        assert_eq!(d.row(0), &[0.0, 0.0, -3.0, 2.0]);
        assert_eq!(d.row(1), &[0.0, 1.0, 1.0, 0.0]);
        // Ties: the lower feature index stays.
        assert_eq!(d.row(2), &[0.5, 0.5, 0.0, 0.0]);
        assert!(bound.validate(&d).is_ok());
        let mut s = sparse.clone();
        assert_eq!(bound.project(&mut s).unwrap(), 2);
        assert!(bound.validate(&s).is_ok());
        for i in 0..3 {
            let mut row = [0.0; 4];
            s.for_each_in_row(i, |j, v| row[j] = v);
            assert_eq!(&row[..], d.row(i), "row {i}");
        }
        // Per group: features 1 and 2 one-hot; record 1 has both (equal: 1 stays),
        // record 2 too; record 0 only feature 2.
        let g = RowSupport::one_hot(vec![vec![1, 2]]);
        let mut d = dense.clone();
        assert_eq!(g.project(&mut d).unwrap(), 2);
        assert_eq!(d.row(1), &[0.0, 1.0, 0.0, 0.0]);
        assert_eq!(d.row(2), &[0.5, 0.5, 0.0, 0.0]);
        assert_eq!(d.row(0), dense.row(0));
        assert!(g.validate(&d).is_ok());
        // Data within the bound: nothing changes.
        let mut d = dense.clone();
        assert_eq!(RowSupport::AtMost(3).project(&mut d).unwrap(), 0);
        assert_eq!(d, dense);
    }
}
