//! Criterion benchmarks of `dp-models`' inner loops.
//!
//! * `coordinate_step/dense_1e5x100`: one pass of "coordinate gradient from the
//!   maintained predictor + predictor update" over all 100 columns of a dense
//!   column-major 100,000 x 100 design (80 MB, larger than the caches). Throughput counts
//!   the design bytes streamed: each column is read twice (gradient sweep and update
//!   sweep), i.e. `2 * n * p * 8` bytes per pass. The predictor / label traffic
//!   (another ~4 `n * 8` bytes per column) is not counted.
//! * `coordinate_gradient/dense_1e5x100`: the gradient sweep alone (`n * p * 8` bytes).
//! * `stream/read_sum_1e5x100`: a plain sum over the same 80 MB, the machine's
//!   single-core read bandwidth, for comparison.
//! * `reference/california_pass`: one cyclic proximal CD pass of the reference solver on
//!   raw California (20,640 x 8), LASSO `(z - y)^2` + 0.1 ||w||_1.
//! * `reference/california_gap`: one duality-gap evaluation there.
//!
//! Run: `cargo bench -p dp-bench --bench models`.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use dp_models::reference::{cd_pass, duality_gap};
use dp_models::{Dataset, DenseDesign, Logistic, NoPenalty, Objective, Squared, L1};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::time::Duration;

fn dense_problem(n: usize, p: usize) -> Dataset<DenseDesign> {
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    let x: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y: Vec<f64> = (0..n)
        .map(|_| if rng.random::<f64>() < 0.5 { -1.0 } else { 1.0 })
        .collect();
    Dataset::new(DenseDesign::from_col_major(n, p, &x).expect("finite"), y).expect("labels")
}

fn coordinate_loop(c: &mut Criterion) {
    let (n, p) = (100_000usize, 100usize);
    let data = dense_problem(n, p);
    let w: Vec<f64> = (0..p).map(|j| 0.01 * (j as f64).sin()).collect();

    // Machine reference: read the whole design once (plain sum, four accumulators), the
    // best a single core can stream from memory here.
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Bytes((n * p * 8) as u64));
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    g.bench_function("read_sum_1e5x100", |b| {
        let all = data.x().col_major_values();
        b.iter(|| {
            let mut acc = [0.0f64; 4];
            for c4 in black_box(all).chunks_exact(4) {
                acc[0] += c4[0];
                acc[1] += c4[1];
                acc[2] += c4[2];
                acc[3] += c4[3];
            }
            acc[0] + acc[1] + acc[2] + acc[3]
        })
    });
    g.finish();

    macro_rules! bench_loss {
        ($name:expr, $loss:expr) => {{
            let loss = $loss;
            let obj = Objective::new(&data, &loss, &NoPenalty).expect("objective");
            let mut z = vec![0.0; n];
            obj.predictor(&w, &mut z).expect("predictor");

            let mut g = c.benchmark_group("coordinate_step");
            g.throughput(Throughput::Bytes((2 * n * p * 8) as u64));
            g.sample_size(20).measurement_time(Duration::from_secs(6));
            g.bench_function(format!("dense_1e5x100_{}", $name), |b| {
                let step = black_box(1e-9);
                b.iter(|| {
                    for j in 0..p {
                        let gj = obj.coordinate_gradient(j, &z);
                        // A tiny non-zero move so the update sweep always runs.
                        obj.update_predictor(j, step * gj + step, &mut z);
                    }
                })
            });
            g.finish();

            let mut g = c.benchmark_group("coordinate_gradient");
            g.throughput(Throughput::Bytes((n * p * 8) as u64));
            g.sample_size(20).measurement_time(Duration::from_secs(5));
            g.bench_function(format!("dense_1e5x100_{}", $name), |b| {
                b.iter(|| {
                    let mut s = 0.0;
                    for j in 0..p {
                        s += obj.coordinate_gradient(j, black_box(&z));
                    }
                    s
                })
            });
            g.finish();
        }};
    }
    bench_loss!("squared", Squared::half());
    bench_loss!("logistic", Logistic);
}

fn reference_california(c: &mut Criterion) {
    let data = dp_bench::data::california().expect("embedded California");
    let loss = Squared::full();
    let pen = L1::new(0.1).expect("lambda");
    let obj = Objective::new(&data, &loss, &pen).expect("objective");
    let m = obj.coordinate_smoothness().expect("smooth").value;
    let mut w = vec![0.0; 8];
    let mut z = vec![0.0; data.n_samples()];
    let mut g = c.benchmark_group("reference");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    g.bench_function("california_pass", |b| {
        b.iter(|| cd_pass(&obj, &m, &mut w, &mut z))
    });
    obj.predictor(&w, &mut z).expect("predictor");
    g.bench_function("california_gap", |b| {
        b.iter(|| duality_gap(&obj, black_box(&w), black_box(&z)).expect("gap"))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = coordinate_loop, reference_california
}
criterion_main!(benches);
