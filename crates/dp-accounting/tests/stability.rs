//! No silent inf / NaN: the subsampled-Gaussian RDP over the whole stated range
//! (sigma 0.3..100, q 1e-6..1, integer orders up to 10^4, fractional up to 512) is
//! finite, non-negative and non-decreasing in the order; epsilons of long plans are finite.

use dp_accounting::calibrate::{epsilon, Accountant, Plan, PlanMechanism, RdpConversion};
use dp_accounting::subsampled::subsampled_gaussian_rdp;
use dp_accounting::{Delta, NoiseMultiplier, SamplingRate};

#[test]
fn subsampled_rdp_finite_and_monotone_over_the_range() {
    let orders = [
        1.01, 1.1, 1.5, 2.0, 2.5, 3.0, 7.7, 10.0, 10.5, 64.0, 100.5, 256.0, 511.5, 1000.0, 4096.0,
        10_000.0,
    ];
    for &q in &[1e-6, 1e-4, 0.01, 0.3, 0.99, 1.0] {
        for &z in &[0.3, 0.5, 1.0, 3.0, 10.0, 100.0] {
            let mut prev = 0.0;
            for &a in &orders {
                let r = subsampled_gaussian_rdp(q, z, a).unwrap();
                assert!(r.is_finite() && r >= 0.0, "q={q} z={z} a={a}: {r}");
                assert!(r >= prev * (1.0 - 1e-12), "q={q} z={z} a={a}: {r} < {prev}");
                prev = r;
            }
        }
    }
}

#[test]
fn long_plans_have_finite_epsilons() {
    let d = Delta::new(1e-10).unwrap();
    for &q in &[1e-6, 1e-3, 0.5] {
        for &z in &[0.3, 1.0, 100.0] {
            for steps in [1u64, 1_000_000] {
                let p = Plan {
                    mechanism: PlanMechanism::SubsampledGaussian {
                        sampling_rate: SamplingRate::new(q).unwrap(),
                    },
                    steps,
                    accountant: Accountant::Rdp(RdpConversion::Improved),
                };
                let e = epsilon(&p, NoiseMultiplier::new(z).unwrap(), d).unwrap();
                assert!(e.is_finite() && e > 0.0, "q={q} z={z} T={steps}: {e}");
            }
        }
    }
}
