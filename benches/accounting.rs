//! Criterion benchmarks of the accountants (numbers in `crates/dp-accounting/README.md`).
//!
//! * `rdp_epsilon_1e5_steps`: epsilon of a 1e5-step Poisson-subsampled Gaussian
//!   (q = 0.01, sigma = 1.1, delta = 1e-5) over the full RDP order grid with continuous
//!   refinement (`calibrate::epsilon`, `Accountant::Rdp(Improved)`).
//! * `rdp_calibrate_1e5_steps`: the smallest sigma for that plan at epsilon = 8.
//! * `pld_epsilon_1e4_steps`: the PLD interval for 1e4 steps of the same mechanism.
//! * `discrete_gaussian_sample`: one exact discrete Gaussian draw, sigma^2 = 100.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use dp_accounting::calibrate::RdpConversion;
use dp_accounting::calibrate::{calibrate_sigma, epsilon, Accountant, Plan, PlanMechanism};
use dp_accounting::discrete::DiscreteGaussian;
use dp_accounting::pld::{epsilon_upper, PldMechanism};
use dp_accounting::{Delta, Epsilon, NoiseMultiplier, SamplingRate};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::time::Duration;

fn plan(steps: u64) -> Plan {
    Plan {
        mechanism: PlanMechanism::SubsampledGaussian {
            sampling_rate: SamplingRate::new(0.01).unwrap(),
        },
        steps,
        accountant: Accountant::Rdp(RdpConversion::Improved),
    }
}

fn accounting(c: &mut Criterion) {
    let delta = Delta::new(1e-5).unwrap();
    let sigma = NoiseMultiplier::new(1.1).unwrap();
    let p = plan(100_000);
    c.bench_function("rdp_epsilon_1e5_steps", |b| {
        b.iter(|| epsilon(black_box(&p), sigma, delta).unwrap())
    });
    let target = Epsilon::new(8.0).unwrap();
    c.bench_function("rdp_calibrate_1e5_steps", |b| {
        b.iter(|| calibrate_sigma(black_box(&p), target, delta).unwrap())
    });
    let m = PldMechanism::SubsampledGaussian {
        sampling_rate: 0.01,
        noise_multiplier: 1.1,
    };
    c.bench_function("pld_epsilon_1e4_steps", |b| {
        b.iter(|| epsilon_upper(black_box(&m), 10_000, 1e-5).unwrap())
    });
    let g = DiscreteGaussian::new(100, 1).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    c.bench_function("discrete_gaussian_sample", |b| {
        b.iter(|| g.sample(&mut rng))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = accounting
}
criterion_main!(benches);
