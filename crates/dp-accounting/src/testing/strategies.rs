//! proptest strategies for privacy property tests: privacy parameters (valid and
//! invalid), mechanism plans and ledger compositions, and neighbouring datasets under
//! replace-one and add/remove (scalar records with a bound, rows with an L2 norm bound,
//! sparse rows with a support bound, and unbounded rows with adversarial extremes for
//! clipping code).
//!
//! ```
//! use dp_accounting::testing::strategies::{bounded_values, Relation};
//! use proptest::prelude::*;
//! proptest!(|(pair in bounded_values(1..20, 1.0, Relation::ReplaceOne))| {
//!     // A count of records above 0.5 has replace-one sensitivity 1.
//!     let count = |v: &[f64]| v.iter().filter(|&&x| x > 0.5).count() as i64;
//!     prop_assert!((count(&pair.d) - count(&pair.d_prime)).abs() <= 1);
//! });
//! ```

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::ops::Range;

use crate::calibrate::{Accountant, Plan, PlanMechanism};
use crate::composition::CompositionMethod;
use crate::ledger::Charge;
use crate::rdp::RdpConversion;
use crate::SamplingRate;

/// Log-uniform `f64` on `[lo, hi)` (`0 < lo < hi`).
pub fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> + Clone {
    (lo.ln()..hi.ln()).prop_map(f64::exp)
}

/// Valid epsilons, log-uniform on `[1e-3, 50)`.
pub fn epsilon() -> impl Strategy<Value = f64> + Clone {
    log_uniform(1e-3, 50.0)
}

/// Valid deltas, log-uniform on `[1e-12, 0.1)`.
pub fn delta() -> impl Strategy<Value = f64> + Clone {
    log_uniform(1e-12, 0.1)
}

/// Valid noise multipliers, log-uniform on `[0.3, 100)`.
pub fn noise_multiplier() -> impl Strategy<Value = f64> + Clone {
    log_uniform(0.3, 100.0)
}

/// Valid Poisson sampling rates, log-uniform on `[1e-4, 1)`.
pub fn sampling_rate() -> impl Strategy<Value = f64> + Clone {
    log_uniform(1e-4, 1.0)
}

/// Epsilons every API must refuse: NaN, infinities, zero, negatives.
pub fn invalid_epsilon() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        (-1e6..-1e-300f64),
    ]
}

/// Deltas every API must refuse: NaN, infinities, at most 0, at least 1.
pub fn invalid_delta() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(1.0),
        (-1e6..0.0f64),
        (1.0..1e6f64),
    ]
}

/// Accountants valid for the plain Gaussian.
pub fn gaussian_accountant() -> impl Strategy<Value = Accountant> + Clone {
    prop_oneof![
        Just(Accountant::Rdp(RdpConversion::Improved)),
        Just(Accountant::Rdp(RdpConversion::Mironov)),
        Just(Accountant::Zcdp),
        Just(Accountant::Gdp),
        Just(Accountant::MomentsAccountant),
    ]
}

/// Plans of `1..1e6` Gaussian releases under a Gaussian accountant.
pub fn gaussian_plan() -> impl Strategy<Value = Plan> + Clone {
    (log_uniform(1.0, 1e6), gaussian_accountant()).prop_map(|(steps, accountant)| Plan {
        mechanism: PlanMechanism::Gaussian,
        steps: steps as u64,
        accountant,
    })
}

/// Plans of `1..1e5` Poisson-subsampled Gaussian releases (rate `1e-4..1`) under RDP or
/// the moments accountant.
pub fn subsampled_plan() -> impl Strategy<Value = Plan> + Clone {
    (
        log_uniform(1e-4, 1.0),
        log_uniform(1.0, 1e5),
        prop_oneof![
            Just(Accountant::Rdp(RdpConversion::Improved)),
            Just(Accountant::Rdp(RdpConversion::Mironov)),
            Just(Accountant::MomentsAccountant),
        ],
    )
        .prop_map(|(q, steps, accountant)| Plan {
            mechanism: PlanMechanism::SubsampledGaussian {
                sampling_rate: SamplingRate::new(q).expect("q in (0, 1)"),
            },
            steps: steps as u64,
            accountant,
        })
}

/// Pure-DP composition methods (for Laplace releases).
pub fn composition_method() -> impl Strategy<Value = CompositionMethod> + Clone {
    prop_oneof![
        Just(CompositionMethod::Basic),
        Just(CompositionMethod::Advanced),
        Just(CompositionMethod::Optimal),
        Just(CompositionMethod::BestOf),
    ]
}

/// One ledger charge: Gaussian, subsampled Gaussian, or Laplace (pure DP) releases.
pub fn charge() -> impl Strategy<Value = Charge> + Clone {
    prop_oneof![
        (noise_multiplier(), 1u64..1000).prop_map(|(z, count)| Charge::Gaussian {
            noise_multiplier: z,
            count
        }),
        (sampling_rate(), noise_multiplier(), 1u64..1000).prop_map(|(q, z, count)| {
            Charge::SubsampledGaussian {
                sampling_rate: q,
                noise_multiplier: z,
                count,
            }
        }),
        (log_uniform(1e-3, 2.0), 1u64..100).prop_map(|(epsilon, count)| Charge::PureDp {
            epsilon,
            count,
            label: "laplace".into()
        }),
    ]
}

/// A composition: `1..8` charges in sequence.
pub fn composition() -> impl Strategy<Value = Vec<Charge>> + Clone {
    proptest::collection::vec(charge(), 1..8)
}

/// Neighbouring relation of a generated pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relation {
    /// `D'` is `D` with one record replaced (same size).
    ReplaceOne,
    /// `D'` is `D` with one record added or removed (either may be the larger).
    AddRemove,
}

/// Any relation.
pub fn relation() -> impl Strategy<Value = Relation> + Clone {
    prop_oneof![Just(Relation::ReplaceOne), Just(Relation::AddRemove)]
}

/// Two neighbouring datasets of records of type `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct NeighbouringPair<T> {
    /// The dataset `D`.
    pub d: Vec<T>,
    /// Its neighbour `D'`.
    pub d_prime: Vec<T>,
    /// The index of the record that differs: replaced at this index in both, or (add/
    /// remove) present at this index only in the larger dataset.
    pub index: usize,
    /// How they differ.
    pub relation: Relation,
}

/// A record of a supervised dataset: features and a label.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Feature values (dense, length `p`).
    pub x: Vec<f64>,
    /// The label.
    pub y: f64,
}

impl NeighbouringPair<Row> {
    /// `(x row-major, y)` of `D` and of `D'`.
    #[allow(clippy::type_complexity)]
    pub fn row_major(&self) -> ((Vec<f64>, Vec<f64>), (Vec<f64>, Vec<f64>)) {
        let flat = |rows: &[Row]| {
            (
                rows.iter().flat_map(|r| r.x.iter().copied()).collect(),
                rows.iter().map(|r| r.y).collect(),
            )
        };
        (flat(&self.d), flat(&self.d_prime))
    }
}

/// Builds a neighbouring pair from a base dataset (of size `n >= 1`), a fresh record
/// and a position: replace-one replaces `base[i]`; add/remove inserts the record at `i`
/// into `D'` (or `D`, when `swap`). `swap` also exchanges `D` and `D'` under replace-one,
/// so the extreme record is on either side.
fn pair<T: Clone + std::fmt::Debug>(
    base: Vec<T>,
    fresh: T,
    i: usize,
    swap: bool,
    relation: Relation,
) -> NeighbouringPair<T> {
    let mut other = base.clone();
    let index = match relation {
        Relation::ReplaceOne => {
            let i = i % base.len();
            other[i] = fresh;
            i
        }
        Relation::AddRemove => {
            let i = i % (base.len() + 1);
            other.insert(i, fresh);
            i
        }
    };
    let (d, d_prime) = if swap { (other, base) } else { (base, other) };
    NeighbouringPair {
        d,
        d_prime,
        index,
        relation,
    }
}

fn pairs_of<T: Clone + std::fmt::Debug + 'static>(
    n: Range<usize>,
    record: impl Strategy<Value = T> + Clone + 'static,
    fresh: impl Strategy<Value = T> + Clone + 'static,
    relation: Relation,
) -> impl Strategy<Value = NeighbouringPair<T>> + Clone {
    let n = n.start.max(1)..n.end.max(n.start.max(1) + 1);
    (
        proptest::collection::vec(record, n),
        fresh,
        any::<usize>(),
        any::<bool>(),
    )
        .prop_map(move |(base, fresh, i, swap)| pair(base, fresh, i, swap, relation))
}

/// Scalar records in `[-bound, bound]` (endpoints included with positive probability),
/// `n` records in `D` (the base), neighbours under `relation`.
pub fn bounded_values(
    n: Range<usize>,
    bound: f64,
    relation: Relation,
) -> impl Strategy<Value = NeighbouringPair<f64>> + Clone {
    let v = prop_oneof![Just(bound), Just(-bound), Just(0.0), -bound..=bound];
    pairs_of(n, v.clone(), v, relation)
}

/// A vector of length `p` with L2 norm at most `bound` (on the sphere a quarter of the
/// time, where sensitivity bounds are attained).
pub fn norm_bounded_row(p: usize, bound: f64) -> impl Strategy<Value = Vec<f64>> + Clone {
    (
        proptest::collection::vec(-1.0..1.0f64, p),
        prop_oneof![1 => Just(1.0), 3 => 0.0..1.0f64],
    )
        .prop_map(move |(v, r)| {
            let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
            if norm == 0.0 {
                return v;
            }
            // Scale by bound / norm times a factor in [0, 1], then enforce the bound
            // against rounding.
            let mut w: Vec<f64> = v.iter().map(|a| a / norm * r * bound).collect();
            let got = w.iter().map(|a| a * a).sum::<f64>().sqrt();
            if got > bound {
                w.iter_mut()
                    .for_each(|a| *a *= bound / got * (1.0 - 4.0 * f64::EPSILON));
            }
            w
        })
}

/// Labels: `{-1, +1}` for classification, else values in `[-bound, bound]`.
pub fn label(classification: bool, bound: f64) -> BoxedStrategy<f64> {
    if classification {
        prop_oneof![Just(-1.0), Just(1.0)].boxed()
    } else {
        prop_oneof![Just(bound), Just(-bound), -bound..=bound].boxed()
    }
}

/// Rows of `p` features with L2 norm at most `norm_bound`, labels from `labels`,
/// neighbours under `relation`.
pub fn norm_bounded_rows(
    n: Range<usize>,
    p: usize,
    norm_bound: f64,
    labels: BoxedStrategy<f64>,
    relation: Relation,
) -> impl Strategy<Value = NeighbouringPair<Row>> + Clone {
    let row = (norm_bounded_row(p, norm_bound), labels).prop_map(|(x, y)| Row { x, y });
    pairs_of(n, row.clone(), row, relation)
}

/// A row of `p` features with at most `k` non-zeros, each in `[-bound, bound]`.
pub fn sparse_row(p: usize, k: usize, bound: f64) -> impl Strategy<Value = Vec<f64>> + Clone {
    (
        proptest::collection::vec(0..p.max(1), 0..=k.min(p)),
        proptest::collection::vec(
            prop_oneof![Just(bound), Just(-bound), -bound..=bound],
            k.min(p),
        ),
    )
        .prop_map(move |(idx, vals)| {
            let mut x = vec![0.0; p];
            for (j, v) in idx.into_iter().zip(vals) {
                x[j] = v;
            }
            x
        })
}

/// Rows of `p` features with at most `k` non-zeros each (a declared support bound),
/// entries in `[-bound, bound]`, labels from `labels`.
pub fn sparse_rows(
    n: Range<usize>,
    p: usize,
    k: usize,
    bound: f64,
    labels: BoxedStrategy<f64>,
    relation: Relation,
) -> impl Strategy<Value = NeighbouringPair<Row>> + Clone {
    let row = (sparse_row(p, k, bound), labels).prop_map(|(x, y)| Row { x, y });
    pairs_of(n, row.clone(), row, relation)
}

/// Finite values a worst-case record may take: zero, signed ones, subnormal-adjacent,
/// huge and `+-f64::MAX`.
pub const EXTREMES: [f64; 16] = [
    0.0,
    1.0,
    -1.0,
    1e-300,
    -1e-300,
    f64::MIN_POSITIVE,
    37.5,
    -1e3,
    1e8,
    -1e150,
    1e154,
    -1e200,
    1e300,
    -1e300,
    f64::MAX,
    -f64::MAX,
];

/// A moderate value: magnitude log-uniform in `[1e-3, 1e3)`, either sign.
pub fn moderate() -> impl Strategy<Value = f64> + Clone {
    (log_uniform(1e-3, 1e3), any::<bool>()).prop_map(|(m, neg)| if neg { -m } else { m })
}

/// An extreme value half of the time (from [`EXTREMES`]), else a moderate one.
pub fn wild() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![proptest::sample::select(EXTREMES.to_vec()), moderate()]
}

/// Unbounded rows for code that clips: `D`'s records moderate, the differing record
/// wild (extreme features and, for regression, an extreme label), on either side.
pub fn adversarial_rows(
    n: Range<usize>,
    p: usize,
    classification: bool,
    relation: Relation,
) -> impl Strategy<Value = NeighbouringPair<Row>> + Clone {
    let (lab, wild_lab) = if classification {
        (label(true, 1.0), label(true, 1.0))
    } else {
        (moderate().boxed(), wild().boxed())
    };
    let row = (proptest::collection::vec(moderate(), p), lab).prop_map(|(x, y)| Row { x, y });
    let fresh = (proptest::collection::vec(wild(), p), wild_lab).prop_map(|(x, y)| Row { x, y });
    pairs_of(n, row, fresh, relation)
}

/// Draws values of strategies outside `proptest!`, deterministically from a seed: for
/// loops that generate many cases and keep the worst one.
pub struct Draws {
    runner: TestRunner,
}

impl Draws {
    /// A stream of draws seeded by `seed`.
    pub fn new(seed: u64) -> Draws {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        Draws {
            runner: TestRunner::new_with_rng(
                Config::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, &key),
            ),
        }
    }

    /// One value of `strategy`. Panics only if the strategy rejects every attempt
    /// (none in this module does).
    pub fn draw<S: Strategy>(&mut self, strategy: &S) -> S::Value {
        strategy
            .new_tree(&mut self.runner)
            .expect("strategy rejected its input")
            .current()
    }
}
