//! Criterion benchmarks of DP-GCD.
//!
//! * `dp-gcd/dorothea-like/T=1` and `T=11`: whole fits (setup = smoothness constants,
//!   buffers, calibration; then T iterations). One iteration costs `(t(11) - t(1)) / 10`;
//!   the throughput is stored non-zeros streamed per second (one iteration streams every
//!   stored entry of X once for the clipped gradient).
//! * the same on a dense `1000 x 1000` design (the `square` problem's shape), and the
//!   zCDP variant on dorothea-like.
//!
//! The dorothea-like fixture here is a sparse binary `800 x 88,119` design with density
//! 0.0091 (the shape the DP-GCD paper's Table 1 gives for dorothea: presumably the NIPS
//! 2003 training set after dropping empty columns), drawn from a fixed seed; it is a timing fixture, not the experiment's data.
//!
//! Run: `cargo bench -p dp-bench --bench dp_gcd`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use dp_models::{Dataset, DenseDesign, Design, Logistic, SparseDesign, Squared, L1};
use dp_optim::dp_gcd::{DpGcdParams, RnmCalibration, SelectionRule, Variant};
use dp_optim::Solver;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::hint::black_box;

fn dorothea_like() -> Dataset<SparseDesign> {
    let (n, p, density) = (800usize, 88_119usize, 0.0091);
    let mut rng = ChaCha20Rng::seed_from_u64(2003);
    let mut trip = Vec::new();
    for j in 0..p {
        // Every column non-empty (columns empty on the training rows are dropped).
        let i0 = rng.random_range(0..n);
        trip.push((i0, j, 1.0));
        let k = (density * n as f64 - 1.0).max(0.0);
        let extra = k.floor() as usize + usize::from(rng.random::<f64>() < k.fract());
        for _ in 0..extra {
            let i = rng.random_range(0..n);
            if i != i0 {
                trip.push((i, j, 1.0));
            }
        }
    }
    let x = SparseDesign::from_triplets(n, p, &trip).expect("valid fixture");
    let y = (0..n)
        .map(|_| if rng.random::<f64>() < 0.1 { 1.0 } else { -1.0 })
        .collect();
    Dataset::new(x, y).expect("valid fixture")
}

fn square_like() -> Dataset<DenseDesign> {
    let (n, p) = (1000usize, 1000usize);
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let x: Vec<f64> = (0..n * p).map(|_| rng.random::<f64>() - 0.5).collect();
    let y = (0..n).map(|_| rng.random::<f64>()).collect();
    Dataset::new(DenseDesign::from_col_major(n, p, &x).expect("valid"), y).expect("valid")
}

fn bench(c: &mut Criterion) {
    let doro = dorothea_like();
    let square = square_like();
    let mut g = c.benchmark_group("dp-gcd");
    g.sample_size(20);
    for t in [1u64, 11] {
        for (variant, rnm, label) in [
            (Variant::Laplace, RnmCalibration::Conservative, "laplace"),
            (Variant::Laplace, RnmCalibration::Paper, "laplace-paper-rnm"),
            (Variant::Zcdp, RnmCalibration::Conservative, "zcdp"),
        ] {
            let plan = DpGcdParams::new(Logistic, L1::new(0.01).expect("valid"))
                .epsilon(1.0)
                .delta(1.0 / (800.0 * 800.0))
                .passes(t)
                .step_scale(1.0)
                .clip(1.0)
                .rule(SelectionRule::GsR)
                .variant(variant)
                .rnm_calibration(rnm)
                .allow_non_private_constants(true)
                .build()
                .expect("valid plan");
            g.throughput(Throughput::Elements(doro.x().nnz() as u64 * t));
            g.bench_with_input(
                BenchmarkId::new(format!("dorothea-like/{label}"), format!("T={t}")),
                &t,
                |b, _| b.iter(|| black_box(plan.fit_seeded(&doro, 1).expect("fit"))),
            );
        }
        let plan = DpGcdParams::new(Squared::half(), L1::new(30.0).expect("valid"))
            .epsilon(1.0)
            .delta(1e-6)
            .passes(t)
            .step_scale(1.0)
            .clip(1.0)
            .rule(SelectionRule::GsR)
            .allow_non_private_constants(true)
            .build()
            .expect("valid plan");
        g.throughput(Throughput::Elements(square.x().nnz() as u64 * t));
        g.bench_with_input(
            BenchmarkId::new("square-1000x1000/laplace", format!("T={t}")),
            &t,
            |b, _| b.iter(|| black_box(plan.fit_seeded(&square, 1).expect("fit"))),
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
