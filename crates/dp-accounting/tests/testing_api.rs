//! Tests of the `testing` feature itself: the auditor's bound is valid (never above the
//! truth on mechanisms whose epsilon is known exactly), has power (0.8 of a Laplace
//! mechanism's epsilon at 1e6 trials; a Laplace with half its scale is flagged), is
//! reproducible whatever the thread count; the sampler testers and accountant checks
//! accept correct and reject broken inputs; the strategies generate what they say.
#![cfg(feature = "testing")]

use dp_accounting::gdp::gdp_epsilon;
use dp_accounting::mechanisms::{Gaussian, Laplace};
use dp_accounting::testing::accountant::{check_gaussian_accountant, exact_gaussian_epsilon};
use dp_accounting::testing::samplers::{chi_square_test, draw, ks_test};
use dp_accounting::testing::strategies::{
    bounded_values, label, norm_bounded_rows, sparse_rows, Draws, Relation,
};
use dp_accounting::testing::{clopper_pearson, Auditor, Side};
use dp_accounting::Delta;
use rand::{Rng, RngCore};

fn laplace_cdf(b: f64) -> impl Fn(f64) -> f64 {
    move |x| {
        if x < 0.0 {
            0.5 * (x / b).exp()
        } else {
            1.0 - 0.5 * (-x / b).exp()
        }
    }
}

/// Independent reference (python3 `fractions`, exact binomial tails, bisection to
/// 1e-12): k = 3, n = 10, alpha = 0.05: upper 0.6066242161, lower 0.0872644339; and the
/// closed form `(1 - up)^n = alpha` at k = 0.
#[test]
fn clopper_pearson_matches_exact_reference() {
    let (lo, up) = clopper_pearson(3, 10, 0.05);
    assert!((up - 0.606_624_216_1).abs() < 1e-8, "{up}");
    assert!((lo - 0.087_264_433_9).abs() < 1e-8, "{lo}");
    let (lo, up) = clopper_pearson(0, 1000, 1e-3);
    assert_eq!(lo, 0.0);
    assert!((up - (1.0 - 1e-3f64.powf(1e-3))).abs() < 1e-12, "{up}");
    // k = n: the lower bound solves p^n = alpha.
    let (lo, up) = clopper_pearson(1000, 1000, 1e-3);
    assert_eq!(up, 1.0);
    assert!((lo - 1e-3f64.powf(1e-3)).abs() < 1e-12, "{lo}");
    // Large n (the lgamma branch, both tail sums): the interval is about p +- z sd.
    let (lo, up) = clopper_pearson(184_000, 1_000_000, 1e-6);
    let sd = (0.184f64 * 0.816 / 1e6).sqrt();
    assert!(lo < 0.184 - 4.5 * sd && lo > 0.184 - 5.5 * sd, "{lo}");
    assert!(up > 0.184 + 4.5 * sd && up < 0.184 + 5.5 * sd, "{up}");
}

fn laplace_mechanism(scale: f64) -> impl Fn(Side, &mut dyn RngCore) -> f64 + Sync {
    let lap = Laplace::new(scale).unwrap();
    move |side, rng| {
        let f = if side == Side::D { 0.0 } else { 1.0 };
        f + lap.sample(rng)
    }
}

/// The Done-when of issue 27, in the suite: at 1e6 trials a correct Laplace mechanism
/// (scale 1, sensitivity 1, epsilon exactly 1) passes with a bound of at least 0.8, and
/// one with half the scale (true epsilon 2) is flagged with a bound above 1.
#[test]
fn laplace_at_a_million_trials_passes_and_half_scale_is_flagged() {
    let start = std::time::Instant::now();
    let good = Auditor::new(1.0, 0.0)
        .trials(1_000_000)
        .seed(7)
        .run(laplace_mechanism(1.0))
        .unwrap();
    let t_good = start.elapsed();
    let bad = Auditor::new(1.0, 0.0)
        .trials(1_000_000)
        .seed(7)
        .run(laplace_mechanism(0.5))
        .unwrap();
    eprintln!(
        "correct: {good} ({t_good:?})\nbroken: {bad} ({:?})",
        start.elapsed()
    );
    assert!(!good.violated, "{good}");
    assert!(good.epsilon_lower_bound >= 0.8, "{good}");
    assert!(good.epsilon_lower_bound <= 1.0, "{good}");
    assert!(bad.violated, "{bad}");
    assert!(bad.epsilon_lower_bound > 1.0, "{bad}");
    assert!(bad.epsilon_lower_bound <= 2.0, "{bad}");
}

/// Randomized response on one bit: `P(1 | D) = e^eps / (1 + e^eps)`, `P(1 | D') = 1 /
/// (1 + e^eps)`; its epsilon is exactly `eps` and the event `output > 0.5` attains it.
fn randomized_response(eps: f64) -> impl Fn(Side, &mut dyn RngCore) -> f64 + Sync {
    let p = eps.exp() / (1.0 + eps.exp());
    move |side, rng| {
        let truth = side == Side::D;
        let keep = rng.random::<f64>() < p;
        f64::from(u8::from(truth == keep))
    }
}

/// Across 100 seeds at the default confidence, on mechanisms whose epsilon is known
/// exactly (Laplace, randomized response, Gaussian at the analytic-Gaussian epsilon of
/// its delta), no bound exceeds the truth.
#[test]
fn bound_never_exceeds_the_truth_across_seeds() {
    let delta = 1e-3;
    let g = Gaussian::new(1.0).unwrap();
    let truth_g = gdp_epsilon(1.0, Delta::new(delta).unwrap()).unwrap();
    let gauss = move |side: Side, rng: &mut dyn RngCore| {
        f64::from(u8::from(side == Side::DPrime)) + g.sample(rng)
    };
    let mut worst = [0.0f64; 3];
    for seed in 0..100 {
        let a = Auditor::new(1.0, 0.0).trials(20_000).seed(seed);
        let r1 = a.run(laplace_mechanism(1.0)).unwrap();
        let r2 = a.run(randomized_response(1.0)).unwrap();
        let r3 = Auditor::new(truth_g, delta)
            .trials(20_000)
            .seed(seed)
            .run(gauss)
            .unwrap();
        for (w, (r, truth)) in worst
            .iter_mut()
            .zip([(&r1, 1.0), (&r2, 1.0), (&r3, truth_g)])
        {
            assert!(
                r.epsilon_lower_bound <= truth,
                "seed {seed}: {r} above {truth}"
            );
            *w = w.max(r.epsilon_lower_bound / truth);
        }
    }
    eprintln!("largest bound / truth over 100 seeds (Laplace, RR, Gaussian): {worst:?}");
    // And they are not vacuous at 20,000 trials.
    assert!(worst.iter().all(|&w| w > 0.5), "{worst:?}");
}

/// The stated confidence is honoured, not just exceeded by a wide margin: at confidence
/// 0.8 on randomized response (whose best event attains its epsilon exactly), the bound
/// may exceed the truth in at most 20 % of audits (here at most 60 of 200, three
/// standard deviations above 40).
#[test]
fn confidence_level_is_honoured() {
    let mut above = 0;
    for seed in 0..200 {
        let r = Auditor::new(1.0, 0.0)
            .trials(5_000)
            .seed(1000 + seed)
            .confidence(0.8)
            .run(randomized_response(1.0))
            .unwrap();
        above += u32::from(r.epsilon_lower_bound > 1.0);
    }
    eprintln!("{above} of 200 audits at confidence 0.8 above the truth");
    assert!(above <= 60, "{above}");
}

#[test]
fn seeded_audit_is_reproducible_whatever_the_thread_count() {
    let a = Auditor::new(1.0, 0.0)
        .trials(50_000)
        .seed(3)
        .batch_size(1000);
    let one = a.clone().threads(1).run(laplace_mechanism(1.0)).unwrap();
    let two = a.clone().threads(2).run(laplace_mechanism(1.0)).unwrap();
    let four = a.clone().threads(4).run(laplace_mechanism(1.0)).unwrap();
    assert_eq!(one, two);
    assert_eq!(one, four);
    let other = a.seed(4).run(laplace_mechanism(1.0)).unwrap();
    assert_ne!(
        (one.count_null, one.count_alt),
        (other.count_null, other.count_alt)
    );
}

/// A grid fixed in advance (no pilot): still valid, and finds the broken mechanism.
#[test]
fn fixed_threshold_grid() {
    let grid: Vec<f64> = (0..12).map(|k| -1.0 + 0.25 * k as f64).collect();
    let good = Auditor::new(1.0, 0.0)
        .trials(200_000)
        .thresholds(grid.clone())
        .run(laplace_mechanism(1.0))
        .unwrap();
    assert_eq!(good.pilot_trials, 0);
    assert!(!good.violated && good.epsilon_lower_bound > 0.7, "{good}");
    let bad = Auditor::new(1.0, 0.0)
        .trials(200_000)
        .thresholds(grid)
        .run(laplace_mechanism(0.5))
        .unwrap();
    assert!(bad.violated, "{bad}");
}

/// Vector outputs: a Gaussian mechanism on a vector query of L2 sensitivity 1 (the
/// shift is spread over three coordinates) is exactly `mu = 1`-GDP; the default score
/// (the pilot's mean difference) recovers the optimal direction.
#[test]
fn vector_outputs_through_the_default_score() {
    let delta = 1e-3;
    let truth = gdp_epsilon(1.0, Delta::new(delta).unwrap()).unwrap();
    let g = Gaussian::new(1.0).unwrap();
    let shift = [0.6, 0.0, 0.8];
    let mech = move |side: Side, rng: &mut dyn RngCore| -> Vec<f64> {
        shift
            .iter()
            .map(|s| if side == Side::D { 0.0 } else { *s } + g.sample(rng))
            .collect()
    };
    let r = Auditor::new(truth, delta)
        .trials(200_000)
        .seed(1)
        .run_vector(mech)
        .unwrap();
    eprintln!("vector Gaussian: {r}");
    assert!(!r.violated, "{r}");
    assert!(r.epsilon_lower_bound > 0.6 * truth, "{r} vs {truth}");
    // With an explicit score (the first coordinate only) the shift seen is 0.6.
    let r1 = Auditor::new(truth, delta)
        .trials(200_000)
        .seed(1)
        .score(|v: &[f64]| v[0])
        .run_vector(mech)
        .unwrap();
    assert!(r1.epsilon_lower_bound < r.epsilon_lower_bound, "{r1} {r}");
}

#[test]
fn bad_input_is_refused_with_a_named_error() {
    let m = laplace_mechanism(1.0);
    for (a, name) in [
        (Auditor::new(f64::NAN, 0.0), "epsilon"),
        (Auditor::new(-1.0, 0.0), "epsilon"),
        (Auditor::new(1.0, 1.0), "delta"),
        (Auditor::new(1.0, -0.1), "delta"),
        (Auditor::new(1.0, 0.0).trials(0), "trials"),
        (Auditor::new(1.0, 0.0).confidence(1.0), "confidence"),
        (Auditor::new(1.0, 0.0).thresholds(vec![]), "thresholds"),
        (Auditor::new(1.0, 0.0).threads(0), "threads"),
    ] {
        let e = a.run(&m).unwrap_err().to_string();
        assert!(e.contains(name), "{e} should name {name}");
    }
    let e = Auditor::new(1.0, 0.0)
        .trials(10)
        .run(|_, _| f64::NAN)
        .unwrap_err()
        .to_string();
    assert!(e.contains("NaN"), "{e}");
}

#[test]
fn sampler_testers_accept_correct_and_reject_wrong_references() {
    let lap = Laplace::new(2.0).unwrap();
    let mut xs = draw(20_000, 5, |rng| lap.sample(rng));
    let ok = ks_test(&mut xs, laplace_cdf(2.0), 1e-6).unwrap();
    assert!(ok.passed, "{ok:?}");
    let wrong = ks_test(&mut xs, laplace_cdf(2.3), 1e-6).unwrap();
    assert!(!wrong.passed, "{wrong:?}");
    // Critical value: sqrt(ln(2e6) / 2000).
    assert!((ok.critical - (14.508_657_738_524_219_f64 / 40_000.0).sqrt()).abs() < 1e-12);
    // Chi-square on a fair die and on a loaded reference.
    let rolls = draw(60_000, 6, |rng| rng.next_u32() % 6);
    let mut counts = [0u64; 6];
    rolls.iter().for_each(|&r| counts[r as usize] += 1);
    assert!(
        chi_square_test(&counts, &[1.0 / 6.0; 6], 1e-6)
            .unwrap()
            .passed
    );
    let loaded = [0.2, 0.16, 0.16, 0.16, 0.16, 0.16];
    assert!(!chi_square_test(&counts, &loaded, 1e-6).unwrap().passed);
    assert!(chi_square_test(&counts, &[0.5; 6], 1e-6).is_err());
    assert!(ks_test(&mut [], laplace_cdf(1.0), 1e-6).is_err());
}

/// The accountant checks pass our exact and RDP accountants and catch three broken
/// ones: one that halves the exact epsilon, one that ignores the number of steps past
/// the first, and one that charges less for less noise.
#[test]
fn accountant_checks_pass_ours_and_catch_broken_ones() {
    use dp_accounting::calibrate::{epsilon, Accountant, Plan, PlanMechanism, RdpConversion};
    use dp_accounting::NoiseMultiplier;
    for acc in [
        Accountant::Gdp,
        Accountant::Zcdp,
        Accountant::Rdp(RdpConversion::Improved),
        Accountant::Rdp(RdpConversion::Mironov),
    ] {
        let ours = |sigma: f64, steps: u64, delta: f64| {
            let plan = Plan {
                mechanism: PlanMechanism::Gaussian,
                steps,
                accountant: acc,
            };
            epsilon(&plan, NoiseMultiplier::new(sigma)?, Delta::new(delta)?)
        };
        for (s, k, d) in [(1.0, 1, 1e-5), (5.0, 100, 1e-6), (30.0, 10_000, 1e-9)] {
            assert_eq!(
                check_gaussian_accountant(ours, s, k, d, 1e-9).unwrap(),
                Ok(())
            );
        }
    }
    let half = |s: f64, k: u64, d: f64| Ok(0.5 * exact_gaussian_epsilon(s, k, d)?);
    let v = check_gaussian_accountant(half, 2.0, 10, 1e-5, 1e-9)
        .unwrap()
        .unwrap_err();
    assert!(v.property.contains("exact"), "{v}");
    let first_only = |s: f64, k: u64, d: f64| {
        if k == 10 {
            exact_gaussian_epsilon(s, 10, d)
        } else {
            exact_gaussian_epsilon(s, 1, d)
        }
    };
    let v = check_gaussian_accountant(first_only, 2.0, 10, 1e-5, 1e-9)
        .unwrap()
        .unwrap_err();
    assert!(v.property.contains("steps"), "{v}");
    let inverted = |s: f64, k: u64, d: f64| exact_gaussian_epsilon(1.0 / s, k, d);
    let v = check_gaussian_accountant(inverted, 2.0, 10, 1e-5, 1e-9)
        .unwrap()
        .unwrap_err();
    assert!(!v.property.is_empty(), "{v}");
}

/// The strategies' pairs are neighbours under their relation, and respect their bounds.
#[test]
fn strategies_generate_neighbours_within_their_bounds() {
    let mut draws = Draws::new(9);
    for rel in [Relation::ReplaceOne, Relation::AddRemove] {
        for _ in 0..200 {
            let v = draws.draw(&bounded_values(1..10, 2.0, rel));
            assert!(v.d.iter().chain(&v.d_prime).all(|x| x.abs() <= 2.0));
            let r = draws.draw(&norm_bounded_rows(1..6, 3, 1.5, label(true, 1.0), rel));
            assert!(r.d.iter().chain(&r.d_prime).all(|row| row
                .x
                .iter()
                .map(|a| a * a)
                .sum::<f64>()
                .sqrt()
                <= 1.5
                && row.y.abs() == 1.0));
            let s = draws.draw(&sparse_rows(1..6, 8, 2, 1.0, label(false, 3.0), rel));
            assert!(s.d.iter().chain(&s.d_prime).all(|row| row
                .x
                .iter()
                .filter(|a| **a != 0.0)
                .count()
                <= 2
                && row.x.iter().all(|a| a.abs() <= 1.0)
                && row.y.abs() <= 3.0));
            for (a, b) in [(v.d.len(), v.d_prime.len()), (r.d.len(), r.d_prime.len())] {
                match rel {
                    Relation::ReplaceOne => assert_eq!(a, b),
                    Relation::AddRemove => assert_eq!(a.abs_diff(b), 1),
                }
            }
            // Replace-one: they differ at most at `index`; add/remove: removing `index`
            // from the larger gives the smaller.
            let (small, large) = if v.d.len() <= v.d_prime.len() {
                (&v.d, &v.d_prime)
            } else {
                (&v.d_prime, &v.d)
            };
            match rel {
                Relation::ReplaceOne => {
                    for i in (0..small.len()).filter(|&i| i != v.index) {
                        assert_eq!(small[i].to_bits(), large[i].to_bits());
                    }
                }
                Relation::AddRemove => {
                    let mut l = large.clone();
                    l.remove(v.index);
                    assert_eq!(&l, small);
                }
            }
        }
    }
}
