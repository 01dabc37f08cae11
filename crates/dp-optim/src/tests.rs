//! Crate-internal tests: twins, lazy averaging, sensitivity, sampling.
#![allow(clippy::needless_range_loop)]

use crate::cd::{run_cd, CdProblem};
use crate::kernel::{Clamp, ColumnKernels, NoClip, NoNoise};
use crate::schedule::{Averaging, CoordinateOrder, CoordinateSelector, Schedule};
use crate::solver::{Streams, Switches};
use crate::*;
use dp_models::constants::coordinate_smoothness;
use dp_models::{
    Dataset, DenseDesign, Design, Logistic, Loss, Penalty, SparseDesign, Squared, L1, L2,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A reproducible regression problem with imbalanced feature scales.
pub(crate) fn regression(n: usize, p: usize, seed: u64) -> Dataset<DenseDesign> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut x = vec![0.0; n * p];
    for i in 0..n {
        for j in 0..p {
            x[i * p + j] = (rng.random::<f64>() * 2.0 - 1.0) * (1.0 + j as f64);
        }
    }
    let y = (0..n)
        .map(|i| x[i * p] - 0.5 * x[i * p + 1 % p] + 0.3 * (rng.random::<f64>() - 0.5))
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

pub(crate) fn classification(n: usize, p: usize, seed: u64) -> Dataset<DenseDesign> {
    let d = regression(n, p, seed);
    let y = d
        .y()
        .iter()
        .map(|&v| if v > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let (x, _) = d.into_parts();
    Dataset::new(x, y).unwrap()
}

#[test]
fn dp_cd_without_noise_and_clipping_is_cd_bit_for_bit() {
    let orders = [
        CoordinateOrder::Uniform,
        CoordinateOrder::Cyclic,
        CoordinateOrder::Permutation,
    ];
    let averagings = [Averaging::LastIterate, Averaging::Every(7), Averaging::Once];
    for (order, averaging) in orders
        .iter()
        .flat_map(|&o| averagings.iter().map(move |&a| (o, a)))
    {
        let data = regression(60, 4, 1);
        let dp = DpCdParams::new(Squared::full(), L1::new(0.05).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(5)
            .step_scale(0.7)
            .clip(0.5)
            .averaging(averaging)
            .coordinate_order(order)
            .allow_non_private_constants(true)
            .build()
            .unwrap();
        let private = dp
            .fit_inner(&data, Streams::from_seed(9), Switches::OFF)
            .unwrap();
        let twin = CdParams::new(Squared::full(), L1::new(0.05).unwrap())
            .passes(5)
            .step_scale(0.7)
            .averaging(averaging)
            .coordinate_order(order)
            .build()
            .unwrap()
            .fit_seeded(&data, 9)
            .unwrap();
        let a: Vec<u64> = private.coefficients().iter().map(|v| v.to_bits()).collect();
        let b: Vec<u64> = twin.coefficients().iter().map(|v| v.to_bits()).collect();
        assert_eq!(a, b, "{order:?} {averaging:?}");
        // The order matters (so the twin comparison above can fail on a wrong order).
        if order != CoordinateOrder::Uniform && averaging == Averaging::LastIterate {
            let uniform_twin = CdParams::new(Squared::full(), L1::new(0.05).unwrap())
                .passes(5)
                .step_scale(0.7)
                .build()
                .unwrap()
                .fit_seeded(&data, 9)
                .unwrap();
            assert_ne!(
                uniform_twin.coefficients(),
                twin.coefficients(),
                "{order:?}"
            );
        }
        assert_eq!(private.model.iterations, twin.model.iterations);
        // And the private run with its noise on is different (the test can fail).
        let noisy = dp.fit_seeded(&data, 9).unwrap();
        assert_ne!(noisy.coefficients(), twin.coefficients());
        // Clipping alone (no noise) also changes the result: C = 0.5 is active here.
        let clipped = dp
            .fit_inner(
                &data,
                Streams::from_seed(9),
                Switches {
                    noise: false,
                    clip: true,
                },
            )
            .unwrap();
        assert_ne!(clipped.coefficients(), twin.coefficients());
    }
}

/// Under add/remove with the stated count equal to the true one, DP-CD without noise and
/// clipping is still CD, bit for bit; with clipping on and noise off it is the
/// replace-one run (same thresholds, same normaliser), and with noise on it differs from
/// the replace-one run (half the noise), so the comparisons can fail.
#[test]
fn dp_cd_add_remove_without_noise_and_clipping_is_cd_bit_for_bit() {
    let data = regression(60, 4, 3);
    let build = |adjacency| {
        DpCdParams::new(Squared::full(), L1::new(0.05).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(5)
            .step_scale(0.7)
            .clip(0.5)
            .adjacency(adjacency)
            .public_n(60)
            .allow_non_private_constants(true)
            .build()
            .unwrap()
    };
    let (ar, ro) = (build(Adjacency::AddRemove), build(Adjacency::ReplaceOne));
    let private = ar
        .fit_inner(&data, Streams::from_seed(9), Switches::OFF)
        .unwrap();
    let twin = CdParams::new(Squared::full(), L1::new(0.05).unwrap())
        .passes(5)
        .step_scale(0.7)
        .build()
        .unwrap()
        .fit_seeded(&data, 9)
        .unwrap();
    let bits = |f: &Fitted| -> Vec<u64> { f.coefficients().iter().map(|v| v.to_bits()).collect() };
    assert_eq!(bits(&private), bits(&twin));
    let clip_only = Switches {
        noise: false,
        clip: true,
    };
    let a = ar
        .fit_inner(&data, Streams::from_seed(9), clip_only)
        .unwrap();
    let b = ro
        .fit_inner(&data, Streams::from_seed(9), clip_only)
        .unwrap();
    assert_eq!(bits(&a), bits(&b));
    assert_ne!(bits(&a), bits(&twin));
    let (na, nb) = (
        ar.fit_seeded(&data, 9).unwrap(),
        ro.fit_seeded(&data, 9).unwrap(),
    );
    assert_ne!(na.coefficients(), nb.coefficients());
    assert_eq!(
        na.privacy().unwrap().guarantee.adjacency,
        Adjacency::AddRemove
    );
    assert_eq!(
        nb.privacy().unwrap().guarantee.adjacency,
        Adjacency::ReplaceOne
    );
}

#[test]
fn dp_sgd_without_noise_and_clipping_is_sgd_bit_for_bit() {
    for b in [1u64, 5] {
        let data = classification(80, 3, 2);
        let dp = DpSgdParams::new(Logistic, L2::new(0.01).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(3)
            .step_scale(0.3)
            .clip(0.1)
            .batch_size(b)
            .allow_non_private_constants(true)
            .build()
            .unwrap();
        let private = dp
            .fit_inner(&data, Streams::from_seed(4), Switches::OFF)
            .unwrap();
        let twin = SgdParams::new(Logistic, L2::new(0.01).unwrap())
            .passes(3)
            .step_scale(0.3)
            .batch_size(b)
            .build()
            .unwrap()
            .fit_seeded(&data, 4)
            .unwrap();
        let a: Vec<u64> = private.coefficients().iter().map(|v| v.to_bits()).collect();
        let c: Vec<u64> = twin.coefficients().iter().map(|v| v.to_bits()).collect();
        assert_eq!(a, c, "b = {b}");
        let noisy = dp.fit_seeded(&data, 4).unwrap();
        assert_ne!(noisy.coefficients(), twin.coefficients());
    }
}

/// Naive Algorithm 1 (stores every iterate's sum explicitly) against the lazy O(1)
/// averaging of the engine.
#[test]
fn lazy_averaging_equals_naive_averaging() {
    let data = regression(40, 5, 3);
    let loss = Squared::full();
    let pen = L1::new(0.02).unwrap();
    let m = coordinate_smoothness(&loss, data.x()).unwrap().value;
    let steps: Vec<f64> = m.iter().map(|v| 0.8 / v).collect();
    let (t, k) = (4u64, 9u64);
    let schedule = Schedule {
        outer: t,
        inner: k,
        averaged: true,
    };
    let prob = CdProblem {
        x: data.x(),
        y: data.y(),
        loss: &loss,
        penalty: &pen,
        steps: &steps,
        chunks: 1,
        inv_n: 1.0 / 40.0,
        margin: None,
    };
    let mut w = vec![0.0; 5];
    let mut z = vec![0.0; 40];
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    run_cd(
        &prob,
        schedule,
        CoordinateOrder::Uniform,
        &NoClip,
        &mut NoNoise,
        &mut rng,
        &mut w,
        &mut z,
    );

    // Naive.
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let mut theta = vec![0.0; 5];
    let n = 40.0;
    for _ in 0..t {
        let mut sum = [0.0; 5];
        for _ in 0..k {
            let mut zz = vec![0.0; 40];
            data.x().matvec(&theta, &mut zz);
            let j = rng.random_range(0..5);
            let mut g = 0.0;
            for i in 0..40 {
                g += loss.derivative(zz[i], data.y()[i]) * data.x().col(j)[i];
            }
            g /= n;
            theta[j] = pen.prox_1d(j, theta[j] - steps[j] * g, steps[j]);
            for (s, v) in sum.iter_mut().zip(&theta) {
                *s += v;
            }
        }
        for (th, s) in theta.iter_mut().zip(sum) {
            *th = s / k as f64;
        }
    }
    for j in 0..5 {
        assert!(
            (w[j] - theta[j]).abs() < 1e-12,
            "{j}: {} vs {}",
            w[j],
            theta[j]
        );
    }
    // The maintained predictor matches X w.
    let mut zz = vec![0.0; 40];
    data.x().matvec(&w, &mut zz);
    for i in 0..40 {
        assert!((zz[i] - z[i]).abs() < 1e-12);
    }
}

/// Non-private CD with gamma_j = 1/M_j converges to a point satisfying the LASSO
/// optimality conditions (independent check: subdifferential distance of every
/// coordinate from the full gradient).
#[test]
fn cd_converges_to_a_kkt_point() {
    for sparse in [false, true] {
        let data = regression(100, 6, 7);
        let loss = Squared::full();
        let pen = L1::new(0.05).unwrap();
        let solver = CdParams::new(loss, pen.clone())
            .passes(400)
            .build()
            .unwrap();
        let w = if sparse {
            let (x, y) = data.clone().into_parts();
            let s = Dataset::new(SparseDesign::from_dense(&x), y).unwrap();
            solver.fit_seeded(&s, 1).unwrap().model.coefficients
        } else {
            solver.fit_seeded(&data, 1).unwrap().model.coefficients
        };
        let mut z = vec![0.0; 100];
        data.x().matvec(&w, &mut z);
        for j in 0..6 {
            let g = data.x().col_grad_sum(j, &loss, &z, data.y(), NoClip) / 100.0;
            let v = pen.subdiff_distance(j, w[j], g);
            assert!(v < 1e-9, "sparse={sparse} j={j}: violation {v}");
        }
        assert!(w.iter().any(|&v| v != 0.0));
    }
}

/// Brute-force sensitivity: replacing one record moves the clipped coordinate gradient
/// by at most 2 C_j / n.
#[test]
fn clipped_coordinate_gradient_sensitivity_is_2c_over_n() {
    let n = 30;
    let data = regression(n, 3, 11);
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let loss = Squared::full();
    for trial in 0..200 {
        let (x, mut y) = data.clone().into_parts();
        let mut rows: Vec<f64> = (0..n).flat_map(|i| x.row(i).to_vec()).collect();
        let w: Vec<f64> = (0..3).map(|_| rng.random::<f64>() * 4.0 - 2.0).collect();
        let c = 0.05 + rng.random::<f64>();
        let before = {
            let d = DenseDesign::from_row_major(n, 3, &rows).unwrap();
            let mut z = vec![0.0; n];
            d.matvec(&w, &mut z);
            (0..3)
                .map(|j| d.col_grad_sum(j, &loss, &z, &y, Clamp(c)) / n as f64)
                .collect::<Vec<_>>()
        };
        let i = trial % n;
        for j in 0..3 {
            rows[i * 3 + j] = (rng.random::<f64>() - 0.5) * 1e3;
        }
        y[i] = (rng.random::<f64>() - 0.5) * 1e3;
        let d = DenseDesign::from_row_major(n, 3, &rows).unwrap();
        let mut z = vec![0.0; n];
        d.matvec(&w, &mut z);
        for (j, b) in before.iter().enumerate() {
            let a = d.col_grad_sum(j, &loss, &z, &y, Clamp(c)) / n as f64;
            assert!(
                (a - b).abs() <= 2.0 * c / n as f64 * (1.0 + 1e-12),
                "trial {trial}"
            );
        }
    }
}

/// Poisson subsampling by geometric skips includes each index with probability q.
#[test]
fn poisson_sampling_rate_is_q() {
    let data = classification(50, 2, 3);
    let norms = crate::sgd::row_norms(data.x());
    let q = 0.1;
    let prob = crate::sgd::SgdProblem {
        x: data.x(),
        y: data.y(),
        loss: &Logistic,
        penalty: &dp_models::NoPenalty,
        row_norms: &norms,
        eta: 0.0,
        sampling_rate: q,
        batch: 5.0,
        steps: 20_000,
        sampling: crate::plan::BatchSampling::Poisson,
    };
    let mut scratch = crate::sgd::SgdScratch::new(50);
    let mut w = vec![0.0; 2];
    let mut g = vec![0.0; 2];
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let sampled = crate::sgd::run_sgd(
        &prob,
        crate::sgd::NoL2Clip,
        &mut crate::sgd::NoVecNoise,
        &mut rng,
        &mut w,
        &mut g,
        &mut scratch,
    );
    // Binomial(1e6, 0.1): mean 1e5, sd 300; 8 sd tolerance.
    let expected = 20_000.0 * 50.0 * q;
    assert!((sampled as f64 - expected).abs() < 8.0 * 300.0, "{sampled}");
}

#[test]
fn seeded_fits_reproduce_bit_for_bit() {
    let data = regression(50, 4, 21);
    let dp = DpCdParams::new(Squared::full(), L1::new(0.01).unwrap())
        .epsilon(2.0)
        .delta(1e-4)
        .passes(3)
        .clip(1.0)
        .allow_non_private_constants(true)
        .build()
        .unwrap();
    let a = dp.fit_seeded(&data, 77).unwrap();
    let b = dp.fit_seeded(&data, 77).unwrap();
    let c = dp.fit_seeded(&data, 78).unwrap();
    assert_eq!(a.coefficients(), b.coefficients());
    assert_eq!(a.diagnostics.seed, Some(77));
    assert_ne!(a.coefficients(), c.coefficients());
    let mut r1 = ChaCha20Rng::seed_from_u64(3);
    let mut r2 = ChaCha20Rng::seed_from_u64(3);
    assert_eq!(
        dp.fit_with_rng(&data, &mut r1).unwrap().model.coefficients,
        dp.fit_with_rng(&data, &mut r2).unwrap().model.coefficients
    );
    let sgd = DpSgdParams::new(Logistic, L2::new(0.01).unwrap())
        .epsilon(1.0)
        .delta(1e-4)
        .passes(2)
        .clip(1.0)
        .allow_non_private_constants(true)
        .build()
        .unwrap();
    let cls = classification(50, 4, 2);
    assert_eq!(
        sgd.fit_seeded(&cls, 5).unwrap().model.coefficients,
        sgd.fit_seeded(&cls, 5).unwrap().model.coefficients
    );
}

/// A sparse copy of `data` with about a third of the entries set to zero.
fn sparsified<D: Design>(data: &Dataset<D>) -> Dataset<SparseDesign> {
    let (n, p) = (data.n_samples(), data.n_features());
    let mut rows = vec![0.0; n * p];
    for j in 0..p {
        data.x().for_each_in_col(j, |i, v| {
            rows[i * p + j] = if (i + 2 * j) % 3 == 0 { 0.0 } else { v };
        });
    }
    let dense = DenseDesign::from_row_major(n, p, &rows).unwrap();
    Dataset::new(SparseDesign::from_dense(&dense), data.y().to_vec()).unwrap()
}

/// The twin equality on sparse storage, whose coordinate kernels are separate from the
/// dense ones: a residual loss (labels folded into `z`) and a loss that reads them.
#[test]
fn sparse_dp_cd_without_noise_and_clipping_is_cd_bit_for_bit() {
    fn check<L: Loss + Clone>(loss: L, data: &Dataset<SparseDesign>) {
        for averaging in [Averaging::LastIterate, Averaging::Every(5)] {
            let dp = DpCdParams::new(loss.clone(), L1::new(0.02).unwrap())
                .epsilon(1.0)
                .delta(1e-5)
                .passes(6)
                .step_scale(0.8)
                .clip(0.3)
                .averaging(averaging)
                .allow_non_private_constants(true)
                .build()
                .unwrap();
            let private = dp
                .fit_inner(data, Streams::from_seed(5), Switches::OFF)
                .unwrap();
            let twin = CdParams::new(loss.clone(), L1::new(0.02).unwrap())
                .passes(6)
                .step_scale(0.8)
                .averaging(averaging)
                .build()
                .unwrap()
                .fit_seeded(data, 5)
                .unwrap();
            let a: Vec<u64> = private.coefficients().iter().map(|v| v.to_bits()).collect();
            let b: Vec<u64> = twin.coefficients().iter().map(|v| v.to_bits()).collect();
            assert_eq!(a, b, "{} {averaging:?}", loss.name());
            assert!(a.iter().any(|&v| v != 0), "{}", loss.name());
        }
    }
    check(Squared::full(), &sparsified(&regression(60, 5, 21)));
    check(Logistic, &sparsified(&classification(60, 5, 22)));
}

/// The coordinate kernels agree between dense and sparse storage on a whole DP-CD fit.
#[test]
fn dense_and_sparse_dp_cd_agree() {
    let data = regression(70, 5, 31);
    let (x, y) = data.clone().into_parts();
    let sparse = Dataset::new(SparseDesign::from_dense(&x), y).unwrap();
    let dp = DpCdParams::new(Squared::full(), L1::new(0.01).unwrap())
        .epsilon(1.0)
        .delta(1e-4)
        .passes(4)
        .clip(2.0)
        .allow_non_private_constants(true)
        .build()
        .unwrap();
    let a = dp.fit_seeded(&data, 3).unwrap().model.coefficients;
    let b = dp.fit_seeded(&sparse, 3).unwrap().model.coefficients;
    for (u, v) in a.iter().zip(&b) {
        assert!((u - v).abs() < 1e-9 * (1.0 + u.abs()), "{u} vs {v}");
    }
}

#[test]
fn coordinate_orders_visit_what_they_promise() {
    let p = 7;
    // Cyclic: 0..p-1 repeated, no randomness drawn.
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let mut sel = CoordinateSelector::new(CoordinateOrder::Cyclic, p);
    let seq: Vec<usize> = (0..3 * p).map(|_| sel.next(&mut rng)).collect();
    let expected: Vec<usize> = (0..3 * p).map(|k| k % p).collect();
    assert_eq!(seq, expected);
    assert_eq!(
        rng.random::<u64>(),
        ChaCha20Rng::seed_from_u64(3).random::<u64>()
    );
    // Permutation: every pass of p steps visits each coordinate exactly once, and the
    // passes are not all in the same order.
    let mut sel = CoordinateSelector::new(CoordinateOrder::Permutation, p);
    let passes: Vec<Vec<usize>> = (0..20)
        .map(|_| (0..p).map(|_| sel.next(&mut rng)).collect())
        .collect();
    for pass in &passes {
        let mut sorted = pass.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..p).collect::<Vec<_>>());
    }
    assert!(passes.iter().any(|q| q != &passes[0]));
    // Permutation is roughly uniform: position 0 holds each coordinate ~1/p of the time.
    let mut first = vec![0usize; p];
    let trials = 7000;
    for _ in 0..trials {
        first[sel.next(&mut rng)] += 1;
        for _ in 1..p {
            sel.next(&mut rng);
        }
    }
    for &c in &first {
        // Binomial(7000, 1/7): mean 1000, sd ~29; 6 sd.
        assert!((c as i64 - 1000).abs() < 175, "{first:?}");
    }
    // Uniform: exactly the `random_range(0..p)` stream of Algorithm 1.
    let mut a = ChaCha20Rng::seed_from_u64(8);
    let mut b = ChaCha20Rng::seed_from_u64(8);
    let mut sel = CoordinateSelector::new(CoordinateOrder::Uniform, p);
    for _ in 0..50 {
        assert_eq!(sel.next(&mut a), b.random_range(0..p));
    }
}

#[test]
fn dp_cd_plan_does_not_depend_on_the_coordinate_order() {
    let data = regression(50, 3, 2);
    let fit = |order| {
        DpCdParams::new(Squared::full(), L1::new(0.05).unwrap())
            .epsilon(1.0)
            .delta(1e-5)
            .passes(4)
            .clip(0.5)
            .coordinate_order(order)
            .allow_non_private_constants(true)
            .build()
            .unwrap()
            .fit_seeded(&data, 1)
            .unwrap()
    };
    let plan = |r: &Fitted| match &r.privacy().as_ref().unwrap().plan {
        SolverPlan::DpCd(p) => p.clone(),
        _ => panic!("not a DP-CD plan"),
    };
    let u = plan(&fit(CoordinateOrder::Uniform));
    for order in [CoordinateOrder::Cyclic, CoordinateOrder::Permutation] {
        let r = fit(order);
        let o = plan(&r);
        assert_eq!(o.coordinate_order, order);
        assert_eq!(o.releases, u.releases);
        assert_eq!(o.noise_multiplier.to_bits(), u.noise_multiplier.to_bits());
        assert_eq!(o.noise_std, u.noise_std);
        assert_eq!(o.sensitivities, u.sensitivities);
        assert!(r.privacy().unwrap().guarantee.epsilon <= 1.0);
    }
}
