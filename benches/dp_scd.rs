//! Criterion benchmarks of the dual coordinate methods against the primal CD pass:
//! one SDCA epoch (n dual steps, L = 1) against one CD pass (p coordinate steps over
//! the whole design), and one DP-SCD epoch (`ceil(n / L)` noisy steps) against one SDCA
//! epoch, on the same row-normalised data (Electricity, logistic + (1e-4 / 2)||w||^2,
//! and a dense 20,000 x 90 ridge problem). Each benchmark is a whole seeded fit with
//! 1 and with `P` passes (`"<solver> x1"`, `"<solver> x<P>"`), so that the cost of one
//! epoch is `(T(P) - T(1)) / (P - 1)`, the fixed costs of a fit cancelling (validation,
//! row norms, SDCA's duality-gap certificate, the final objective; DP-SCD's noise
//! calibration is memoised per solver). `python3 benches/scd_epochs.py` runs this
//! bench and prints the per-epoch times and the ratios. Targets: SDCA epoch within
//! 1.5x of the CD pass; DP-SCD epoch within 1.3x of SDCA's.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use dp_models::constants::coordinate_smoothness;
use dp_models::preprocess::normalize_rows;
use dp_models::{Dataset, DenseDesign, DualLoss, Logistic, Squared, L2};
use dp_optim::{CdParams, DpScdParams, SdcaParams, Smoothness, Solver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::time::Duration;

/// The larger number of passes of the marginal-epoch measurement.
const PASSES: u64 = 4;

fn normalised(d: &Dataset<DenseDesign>) -> Dataset<DenseDesign> {
    Dataset::new(normalize_rows(d.x()).expect("rows"), d.y().to_vec()).expect("dataset")
}

fn synthetic(n: usize, p: usize) -> Dataset<DenseDesign> {
    let mut rng = ChaCha20Rng::seed_from_u64(2021);
    let x: Vec<f64> = (0..n * p).map(|_| rng.random::<f64>() - 0.5).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| (0..10).map(|j| x[i * p + j]).sum::<f64>() + 0.1 * rng.random::<f64>())
        .collect();
    normalised(
        &Dataset::new(DenseDesign::from_row_major(n, p, &x).expect("design"), y).expect("data"),
    )
}

fn bench_problem<L: DualLoss + Clone>(
    c: &mut Criterion,
    name: &str,
    data: &Dataset<DenseDesign>,
    loss: L,
) {
    let pen = L2::new(1e-4).expect("lambda");
    let m = coordinate_smoothness(&loss, data.x()).expect("M_j");
    let mut g = c.benchmark_group(format!("dual/{name}"));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for passes in [1u64, PASSES] {
        let cd = CdParams::new(loss.clone(), pen.clone())
            .passes(passes)
            .smoothness(Smoothness::Given(m.clone()))
            .build()
            .expect("cd");
        g.bench_function(format!("cd x{passes}"), |b| {
            b.iter(|| cd.fit_seeded(data, 1).expect("fit"))
        });
        let sdca = SdcaParams::new(loss.clone(), pen.clone())
            .passes(passes)
            .build()
            .expect("sdca");
        g.bench_function(format!("sdca x{passes}"), |b| {
            b.iter(|| sdca.fit_seeded(data, 1).expect("fit"))
        });
        for batch in [1u64, 100] {
            let dp = DpScdParams::new(loss.clone(), pen.clone())
                .epsilon(1.0)
                .delta(1e-3)
                .passes(passes)
                .batch_size(batch)
                .clip(0.5)
                .build()
                .expect("dp-scd");
            g.bench_function(format!("dp-scd L={batch} x{passes}"), |b| {
                b.iter(|| dp.fit_seeded(data, 1).expect("fit"))
            });
        }
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let elec = normalised(&dp_bench::data::electricity().expect("electricity"));
    bench_problem(c, "electricity-logistic", &elec, Logistic);
    let ridge = synthetic(20_000, 90);
    bench_problem(c, "synthetic-ridge-20000x90", &ridge, Squared::half());
}

criterion_group!(dual, benches);
criterion_main!(dual);
