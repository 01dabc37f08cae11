//! A shared `CalibrationCache` never changes a fit: cached and uncached fits are
//! bit-identical, and plans that differ in anything the search reads are not confused.

use dp_models::constants::Tagged;
use dp_models::{Dataset, DenseDesign, Logistic, Squared, L2};
use dp_optim::*;

fn data(n: usize, p: usize) -> Dataset<DenseDesign> {
    let x: Vec<f64> = (0..n * p)
        .map(|k| (((k * 7919) % 1009) as f64 / 504.5 - 1.0) * (1 + k % p) as f64 / p as f64)
        .collect();
    let y = (0..n)
        .map(|i| {
            if x[i * p] > 0.1 * x[i * p + 1] {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn sgd(
    eps: f64,
    delta: f64,
    acc: Accounting,
    cache: Option<&CalibrationCache>,
) -> DpSgd<Logistic, L2> {
    let mut b = DpSgdParams::new(Logistic, L2::new(1e-3).unwrap())
        .epsilon(eps)
        .delta(delta)
        .passes(2)
        .clip(1.0)
        .batch_size(8)
        .accounting(acc)
        .smoothness(GlobalSmoothness::Given(Tagged::public(0.25)));
    if let Some(c) = cache {
        b = b.calibration_cache(c.clone());
    }
    b.build().unwrap()
}

#[test]
fn dp_sgd_cached_fits_are_bit_identical_to_uncached_ones() {
    let d = data(300, 4);
    let cache = CalibrationCache::new();
    assert!(cache.is_empty());
    for (eps, delta, acc) in [
        (1.0, 1e-5, Accounting::Paper),
        (1.0, 1e-5, Accounting::Paper), // a hit
        (0.5, 1e-5, Accounting::Paper), // another target
        (1.0, 1e-6, Accounting::Paper), // another delta
        (1.0, 1e-5, Accounting::Exact), // another accountant
    ] {
        for seed in [1, 2] {
            let uncached = sgd(eps, delta, acc, None).fit_seeded(&d, seed).unwrap();
            let cached = sgd(eps, delta, acc, Some(&cache))
                .fit_seeded(&d, seed)
                .unwrap();
            // The whole releasable model: coefficients, plan (noise multiplier, achieved
            // epsilon), ledger and guarantee.
            assert_eq!(
                cached.model, uncached.model,
                "eps {eps} delta {delta} {acc:?}"
            );
            let bits = |m: &LinearModel| {
                m.coefficients
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&cached.model), bits(&uncached.model));
        }
    }
    // One entry per distinct (plan, target, accounting): the repeated one was a hit.
    assert_eq!(cache.len(), 4);
}

#[test]
fn dp_sgd_plans_of_other_sizes_are_not_confused() {
    let cache = CalibrationCache::new();
    for n in [200, 300, 200] {
        let d = data(n, 3);
        let a = sgd(1.0, 1e-5, Accounting::Paper, None)
            .fit_seeded(&d, 7)
            .unwrap();
        let b = sgd(1.0, 1e-5, Accounting::Paper, Some(&cache))
            .fit_seeded(&d, 7)
            .unwrap();
        assert_eq!(a.model, b.model, "n = {n}");
    }
    assert_eq!(cache.len(), 2);
}

#[test]
fn dp_scd_cached_fits_are_bit_identical_to_uncached_ones() {
    // Rows of norm at most 1, as DP-SCD's sensitivity needs.
    let (n, p) = (200, 3);
    let x: Vec<f64> = (0..n * p)
        .map(|k| (((k * 7919) % 1009) as f64 / 504.5 - 1.0) / 2.0)
        .collect();
    let y = (0..n)
        .map(|i| 0.5 * x[i * p] - 0.2 * x[i * p + 1])
        .collect();
    let d = Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap();
    let cache = CalibrationCache::new();
    let solver = |eps: f64, cache: Option<&CalibrationCache>| {
        let mut b = DpScdParams::new(Squared::half(), L2::new(0.1).unwrap())
            .epsilon(eps)
            .delta(1e-5)
            .passes(2)
            .batch_size(4)
            .clip(0.5);
        if let Some(c) = cache {
            b = b.calibration_cache(c.clone());
        }
        b.build().unwrap()
    };
    for eps in [1.0, 1.0, 2.0] {
        let uncached = solver(eps, None).fit_seeded(&d, 3).unwrap();
        let cached = solver(eps, Some(&cache)).fit_seeded(&d, 3).unwrap();
        assert_eq!(cached.model, uncached.model, "eps {eps}");
    }
    assert_eq!(cache.len(), 2);
}
