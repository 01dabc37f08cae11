//! Criterion benchmarks of the dp-optim solvers: DP-CD and CD passes, DP-SGD epochs.
//!
//! Each benchmark is one whole seeded fit with `P` passes. The smoothness constants
//! (`M_j` for the CD methods, `beta` = trace bound for DP-SGD) are computed once outside the timed
//! region and passed in (`Smoothness::Given`, with the non-private opt-in); the fixed
//! per-fit costs that remain — validation, noise calibration, the final objective — are
//! included: compare `P = 1` with `P = 10` for the marginal cost of a pass.
//! Throughput is reported as bytes of design streamed, counted as `P * n * p * 8`
//! (one read of the whole design per pass; the predictor update reads each changed
//! column a second time, which is not counted).
//!
//! `read/*`: the memory reference, one plain read of the design as `p` column dot
//! products with a fixed vector (`Design::col_dot`, the scalar four-accumulator loop;
//! `simd-dot` is the vectorised `dp_models::simd::dot`), same throughput unit.
//!
//! Problems: California (raw, LASSO with the paper's `(w^T x - y)^2` loss, lambda 0.1),
//! Electricity (raw, logistic + (1e-3 / 2) ||w||^2) and a dense 1e5 x 100 synthetic
//! LASSO design with standard-normal-like features.
//!
//! `dp-sgd-batch/*`: DP-SGD epochs with mini-batches (`b` = 64, 256, 1024, batches
//! without replacement) on Electricity (logistic) and on a dense 20,000 x 100 logistic
//! problem (labels the signs of the synthetic responses), 1 and 5 epochs each: the
//! per-example row operations (row dot, derivative, clipping, row axpy) at the batch
//! sizes of practice. `python3 benches/compare_rows.py` runs them side by side with a
//! base binary.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use dp_models::constants::{coordinate_smoothness, Tagged};
use dp_models::{Dataset, DenseDesign, Design, Logistic, Loss, Penalty, Squared, L1, L2};
use dp_optim::Solver;
use dp_optim::{CdParams, DpCdParams, DpSgdParams, GlobalSmoothness, Smoothness};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::time::Duration;

fn synthetic(n: usize, p: usize) -> Dataset<DenseDesign> {
    let mut rng = ChaCha20Rng::seed_from_u64(2022);
    // Sum of four uniforms, centred and scaled: close to N(0, 1), cheap to generate.
    let mut normal =
        || (0..4).map(|_| rng.random::<f64>()).sum::<f64>() * 3f64.sqrt() - 2.0 * 3f64.sqrt();
    let x: Vec<f64> = (0..n * p).map(|_| normal()).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| (0..10).map(|j| x[i * p + j]).sum::<f64>() + 0.1 * normal())
        .collect();
    Dataset::new(
        DenseDesign::from_row_major(n, p, &x).expect("synthetic design"),
        y,
    )
    .expect("synthetic dataset")
}

fn bench_problem<L: Loss + Clone, P: Penalty + Clone>(
    c: &mut Criterion,
    name: &str,
    data: &Dataset<DenseDesign>,
    loss: L,
    penalty: P,
    cd_passes: &[u64],
    sgd_passes: &[u64],
) {
    let (n, p) = (data.n_samples(), data.n_features());
    let delta = 1.0 / (n as f64 * n as f64);
    let bytes_per_pass = (n * p * 8) as u64;
    let m = coordinate_smoothness(&loss, data.x()).expect("M_j");
    // DP-SGD's beta: the trace bound sum_j M_j >= (c/n) lambda_max(X^T X) (the power
    // iteration of `global_smoothness` needs minutes on the 1e5 x 100 design; the step
    // size does not change the cost of a step).
    let beta = Tagged::data_non_private(m.value.iter().sum::<f64>());
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for &passes in cd_passes {
        group.throughput(Throughput::Bytes(passes * bytes_per_pass));
        let dp = DpCdParams::new(loss.clone(), penalty.clone())
            .epsilon(1.0)
            .delta(delta)
            .passes(passes)
            .step_scale(0.5)
            .clip(1.0)
            .smoothness(Smoothness::Given(m.clone()))
            .allow_non_private_constants(true)
            .build()
            .expect("dp-cd params");
        let cd = CdParams::new(loss.clone(), penalty.clone())
            .passes(passes)
            .step_scale(0.5)
            .smoothness(m.clone())
            .build()
            .expect("cd params");
        // Steps that leave w_j unchanged skip the predictor update, so the cost of a
        // pass depends on how many there are: report them next to the timings.
        let (zp, zc) = (
            dp.fit_seeded(data, 1)
                .expect("dp-cd fit")
                .diagnostics
                .zero_steps,
            cd.fit_seeded(data, 1)
                .expect("cd fit")
                .diagnostics
                .zero_steps,
        );
        eprintln!(
            "zero-steps {name} {passes} passes: dp-cd {zp}, cd {zc} of {} steps",
            passes * p as u64
        );
        group.bench_function(BenchmarkId::new("dp-cd", format!("{passes} passes")), |b| {
            b.iter(|| dp.fit_seeded(data, 1).expect("dp-cd fit"))
        });
        group.bench_function(BenchmarkId::new("cd", format!("{passes} passes")), |b| {
            b.iter(|| cd.fit_seeded(data, 1).expect("cd fit"))
        });
    }
    for &passes in sgd_passes {
        group.throughput(Throughput::Bytes(passes * bytes_per_pass));
        let sgd = DpSgdParams::new(loss.clone(), penalty.clone())
            .epsilon(1.0)
            .delta(delta)
            .passes(passes)
            .step_scale(0.1)
            .clip(1.0)
            .smoothness(GlobalSmoothness::Given(beta.clone()))
            .allow_non_private_constants(true)
            .build()
            .expect("dp-sgd params");
        group.bench_function(
            BenchmarkId::new("dp-sgd", format!("{passes} epochs")),
            |b| b.iter(|| sgd.fit_seeded(data, 1).expect("dp-sgd fit")),
        );
    }
    group.finish();
}

/// DP-SGD epochs at mini-batch sizes 64, 256 and 1024 (1 and 5 epochs).
fn bench_dp_sgd_batches(c: &mut Criterion, name: &str, data: &Dataset<DenseDesign>) {
    let n = data.n_samples();
    let loss = Logistic;
    let m = coordinate_smoothness(&loss, data.x()).expect("M_j");
    let beta = Tagged::data_non_private(m.value.iter().sum::<f64>());
    let mut group = c.benchmark_group(format!("dp-sgd-batch/{name}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for b in [64u64, 256, 1024] {
        for epochs in [1u64, 5] {
            let sgd = DpSgdParams::new(loss, L2::new(1e-3).expect("l2"))
                .epsilon(1.0)
                .delta(1.0 / (n as f64 * n as f64))
                .passes(epochs)
                .batch_size(b)
                .step_scale(0.5)
                .clip(1.0)
                .smoothness(GlobalSmoothness::Given(beta.clone()))
                .allow_non_private_constants(true)
                .build()
                .expect("dp-sgd params");
            sgd.fit_seeded(data, 1).expect("dp-sgd fit"); // the calibration is memoised
            group.bench_function(format!("b={b}/{epochs} epochs"), |bch| {
                bch.iter(|| sgd.fit_seeded(data, 1).expect("dp-sgd fit"))
            });
        }
    }
    group.finish();
}

/// One read of the design: `sum_j <X_{:,j}, v>`.
fn bench_read(c: &mut Criterion, name: &str, data: &Dataset<DenseDesign>) {
    let (n, p) = (data.n_samples(), data.n_features());
    let v: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 1e-3).collect();
    let mut group = c.benchmark_group("read");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes((n * p * 8) as u64));
    group.bench_function(BenchmarkId::new("col-dot", name), |b| {
        b.iter(|| {
            (0..p)
                .map(|j| data.x().col_dot(j, black_box(&v)))
                .sum::<f64>()
        })
    });
    group.bench_function(BenchmarkId::new("simd-dot", name), |b| {
        b.iter(|| {
            (0..p)
                .map(|j| dp_models::simd::dot(data.x().col(j), black_box(&v)))
                .sum::<f64>()
        })
    });
    group.finish();
}

fn solvers(c: &mut Criterion) {
    let california = dp_bench::data::california().expect("embedded California data");
    bench_problem(
        c,
        "california",
        &california,
        Squared::full(),
        L1::new(0.1).expect("l1"),
        &[1, 10],
        &[1, 5],
    );
    let electricity = dp_bench::data::electricity().expect("embedded Electricity data");
    bench_problem(
        c,
        "electricity",
        &electricity,
        Logistic,
        L2::new(1e-3).expect("l2"),
        &[1, 10],
        &[1, 5],
    );
    bench_read(c, "electricity", &electricity);
    bench_dp_sgd_batches(c, "electricity", &electricity);
    let dense_logistic = {
        let d = synthetic(20_000, 100);
        let y = d
            .y()
            .iter()
            .map(|&v| if v >= 0.0 { 1.0 } else { -1.0 })
            .collect();
        Dataset::new(d.x().clone(), y).expect("labels")
    };
    bench_dp_sgd_batches(c, "dense-20000x100", &dense_logistic);
    let dense = synthetic(100_000, 100);
    bench_read(c, "dense-1e5x100", &dense);
    bench_problem(
        c,
        "dense-1e5x100",
        &dense,
        Squared::full(),
        L1::new(0.1).expect("l1"),
        &[1, 5],
        &[1],
    );
}

criterion_group!(benches, solvers);
criterion_main!(benches);
