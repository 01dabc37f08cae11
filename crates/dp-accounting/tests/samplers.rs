//! Statistical tests of every sampler of the crate, at a false-alarm rate of 1e-6 per test,
//! through the public testers of `dp_accounting::testing::samplers`.
//!
//! * Continuous samplers (f64 `Gaussian`, `Laplace`): one-sample Kolmogorov-Smirnov against
//!   the statrs CDF. Critical value from the Dvoretzky-Kiefer-Wolfowitz inequality with
//!   Massart's constant, `P(sup |F_n - F| > c) <= 2 exp(-2 n c^2)`, which holds for every `n`
//!   (no asymptotics): `c = sqrt(ln(2 / alpha) / (2 n))`.
//! * Discrete samplers (discrete Laplace, discrete Gaussian, report-noisy-max with Gumbel
//!   and with Laplace noise; their internal Bernoulli(exp(-gamma)) step is tested the same
//!   way in `src/discrete.rs`): Pearson chi-square against the
//!   exact probabilities, cells merged so every expected count is at least 20, critical
//!   value the `1 - alpha` quantile of the chi-square distribution (statrs CDF, inverted by
//!   bisection).
//!
//! Each test also checks *power*: the same statistic rejects a slightly wrong reference, so
//! the test can fail. Default sizes are fast; `DP_SLOW_TESTS=1` runs 1e6 draws per case.

use dp_accounting::discrete::{DiscreteGaussian, DiscreteLaplace};
use dp_accounting::mechanisms::{Gaussian, Laplace, ReportNoisyMax, RnmNoise};
use dp_accounting::testing::samplers;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use statrs::distribution::{ContinuousCDF, Normal};

const ALPHA: f64 = 1e-6;

fn slow() -> bool {
    std::env::var("DP_SLOW_TESTS").is_ok_and(|v| v == "1")
}

fn size(fast: usize) -> usize {
    if slow() {
        1_000_000
    } else {
        fast
    }
}

fn ks_critical(n: usize) -> f64 {
    samplers::ks_critical(n as u64, ALPHA).unwrap()
}

/// sup_x |F_n(x) - F(x)| for the sample (sorted in place).
fn ks_statistic(xs: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
    samplers::ks_statistic(xs, cdf).unwrap()
}

/// The `1 - ALPHA` quantile of chi-square with `df` degrees of freedom.
fn chi2_critical(df: usize) -> f64 {
    samplers::chi_square_critical(df, ALPHA).unwrap()
}

/// The public chi-square test (cells merged to at least 20 expected) must pass.
fn assert_chi2(counts: &[u64], probs: &[f64], n: usize, what: &str) {
    let t = samplers::chi_square_test(counts, probs, ALPHA).unwrap();
    assert_eq!(t.draws, n as u64);
    assert!(t.passed, "{what}: {t:?}");
}

/// ... and must reject a wrong reference (power).
fn assert_chi2_rejects(counts: &[u64], probs: &[f64], n: usize, what: &str) {
    let total: f64 = probs.iter().sum();
    let probs: Vec<f64> = probs.iter().map(|p| p / total).collect();
    let t = samplers::chi_square_test(counts, &probs, ALPHA).unwrap();
    assert_eq!(t.draws, n as u64);
    assert!(!t.passed, "{what}: wrong reference not rejected ({t:?})");
}

#[test]
fn critical_values_are_right() {
    // chi-square(1): 1 - alpha quantile = (Phi^{-1}(1 - alpha/2))^2 = 4.891638...^2.
    let z = Normal::new(0.0, 1.0)
        .unwrap()
        .inverse_cdf(1.0 - ALPHA / 2.0);
    assert!((chi2_critical(1) - z * z).abs() < 1e-6 * z * z);
    // chi-square(2) is exponential with mean 2: quantile = 2 ln(1/alpha).
    assert!((chi2_critical(2) - 2.0 * (1.0 / ALPHA).ln()).abs() < 1e-6);
    assert!((ks_critical(1000) - (14.508_657_738_524_219_f64 / 2000.0).sqrt()).abs() < 1e-12);
}

#[test]
fn gaussian_sampler_matches_normal_cdf() {
    let n = size(20_000);
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    for sd in [0.3, 1.0, 25.0] {
        let g = Gaussian::new(sd).unwrap();
        let mut xs = vec![0.0; n];
        g.fill(&mut rng, &mut xs);
        let normal = Normal::new(0.0, sd).unwrap();
        let d = ks_statistic(&mut xs, |x| normal.cdf(x));
        assert!(d < ks_critical(n), "sd {sd}: D = {d}");
        // Power: a 15 % error in the standard deviation is detected.
        let wrong = Normal::new(0.0, sd * 1.15).unwrap();
        let d = ks_statistic(&mut xs, |x| wrong.cdf(x));
        assert!(
            d > ks_critical(n),
            "sd {sd}: wrong scale not rejected, D = {d}"
        );
    }
}

#[test]
fn laplace_sampler_matches_laplace_cdf() {
    let n = size(20_000);
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    for b in [0.5, 1.0, 40.0] {
        let l = Laplace::new(b).unwrap();
        let mut xs = vec![0.0; n];
        l.fill(&mut rng, &mut xs);
        let lap = statrs::distribution::Laplace::new(0.0, b).unwrap();
        let d = ks_statistic(&mut xs, |x| lap.cdf(x));
        assert!(d < ks_critical(n), "b {b}: D = {d}");
        let wrong = statrs::distribution::Laplace::new(0.0, b * 1.15).unwrap();
        let d = ks_statistic(&mut xs, |x| wrong.cdf(x));
        assert!(
            d > ks_critical(n),
            "b {b}: wrong scale not rejected, D = {d}"
        );
    }
}

/// Counts of integer draws on `-m..=m` with the two tails in the outermost cells.
fn integer_counts(draws: impl Iterator<Item = i64>, m: i64) -> Vec<u64> {
    let mut counts = vec![0u64; (2 * m + 1) as usize];
    for x in draws {
        let i = (x.clamp(-m, m) + m) as usize;
        counts[i] += 1;
    }
    counts
}

/// Probabilities on `-m..=m` (tails folded into the ends) from an unnormalised pmf that is
/// summed over `-big..=big`.
fn integer_probs(weight: impl Fn(i64) -> f64, m: i64, big: i64) -> Vec<f64> {
    let z: f64 = (-big..=big).map(&weight).sum();
    let mut p: Vec<f64> = (-m..=m).map(|x| weight(x) / z).collect();
    let tail: f64 = ((m + 1)..=big).map(|x| weight(x) / z).sum();
    p[0] += tail;
    p[(2 * m) as usize] += tail;
    p
}

#[test]
fn discrete_laplace_matches_pmf() {
    let n = size(40_000);
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    for (num, den) in [(1u64, 1u64), (3, 2), (10, 1), (7, 3)] {
        let t = num as f64 / den as f64;
        let dl = DiscreteLaplace::new(num, den).unwrap();
        let m = (12.0 * t).ceil() as i64 + 2;
        let counts = integer_counts((0..n).map(|_| dl.sample(&mut rng)), m);
        let probs = integer_probs(|x| (-(x.abs() as f64) / t).exp(), m, 60 * m);
        assert_chi2(&counts, &probs, n, &format!("discrete Laplace {num}/{den}"));
        let wrong = integer_probs(|x| (-(x.abs() as f64) / (1.1 * t)).exp(), m, 60 * m);
        assert_chi2_rejects(&counts, &wrong, n, &format!("discrete Laplace {num}/{den}"));
    }
}

#[test]
fn discrete_gaussian_matches_pmf() {
    let n = size(40_000);
    let mut rng = ChaCha20Rng::seed_from_u64(14);
    for (num, den) in [(1u64, 1u64), (9, 4), (1, 3), (100, 1), (1000, 7)] {
        let s2 = num as f64 / den as f64;
        let dg = DiscreteGaussian::new(num, den).unwrap();
        let m = (7.0 * s2.sqrt()).ceil() as i64 + 2;
        let counts = integer_counts((0..n).map(|_| dg.sample(&mut rng)), m);
        let w = |x: i64| (-((x * x) as f64) / (2.0 * s2)).exp();
        let probs = integer_probs(w, m, 40 * m);
        assert_chi2(
            &counts,
            &probs,
            n,
            &format!("discrete Gaussian {num}/{den}"),
        );
        let w_wrong = |x: i64| (-((x * x) as f64) / (2.0 * 1.2 * s2)).exp();
        let wrong = integer_probs(w_wrong, m, 40 * m);
        assert_chi2_rejects(
            &counts,
            &wrong,
            n,
            &format!("discrete Gaussian {num}/{den}"),
        );
    }
}

#[test]
fn report_noisy_max_gumbel_is_softmax() {
    let n = size(40_000);
    let mut rng = ChaCha20Rng::seed_from_u64(16);
    let scores = [0.0, 1.0, 2.5, -1.0, 2.0];
    for b in [0.5, 2.0] {
        let rnm = ReportNoisyMax::new(RnmNoise::Gumbel, b).unwrap();
        let mut counts = vec![0u64; scores.len()];
        for _ in 0..n {
            counts[rnm.select(&mut rng, &scores).unwrap()] += 1;
        }
        let w: Vec<f64> = scores.iter().map(|s| (s / b).exp()).collect();
        let z: f64 = w.iter().sum();
        let probs: Vec<f64> = w.iter().map(|v| v / z).collect();
        assert_chi2(&counts, &probs, n, &format!("Gumbel RNM b = {b}"));
        let w2: Vec<f64> = scores.iter().map(|s| (s / (1.2 * b)).exp()).collect();
        let z2: f64 = w2.iter().sum();
        let wrong: Vec<f64> = w2.iter().map(|v| v / z2).collect();
        assert_chi2_rejects(&counts, &wrong, n, &format!("Gumbel RNM b = {b}"));
    }
}

/// P(argmax_j (s_j + Lap(b)) = j) = int f_b(x - s_j) prod_{k != j} F_b(x - s_k) dx, by
/// composite Simpson's rule on a wide interval (error far below the test's resolution).
fn laplace_rnm_probs(scores: &[f64], b: f64) -> Vec<f64> {
    let lap = statrs::distribution::Laplace::new(0.0, b).unwrap();
    let lo = scores.iter().cloned().fold(f64::INFINITY, f64::min) - 60.0 * b;
    let hi = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max) + 60.0 * b;
    let m = 400_000usize; // even
    let h = (hi - lo) / m as f64;
    scores
        .iter()
        .enumerate()
        .map(|(j, &sj)| {
            let f = |x: f64| {
                let dens = (-(x - sj).abs() / b).exp() / (2.0 * b);
                let others: f64 = scores
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != j)
                    .map(|(_, &sk)| lap.cdf(x - sk))
                    .product();
                dens * others
            };
            let mut acc = f(lo) + f(hi);
            for i in 1..m {
                let x = lo + i as f64 * h;
                acc += if i % 2 == 1 { 4.0 } else { 2.0 } * f(x);
            }
            acc * h / 3.0
        })
        .collect()
}

#[test]
fn report_noisy_max_laplace_matches_integral() {
    let n = size(40_000);
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    let scores = [0.0, 1.0, 2.5, 2.0];
    let b = 1.0;
    let rnm = ReportNoisyMax::new(RnmNoise::Laplace, b).unwrap();
    let mut counts = vec![0u64; scores.len()];
    for _ in 0..n {
        counts[rnm.select(&mut rng, &scores).unwrap()] += 1;
    }
    let probs = laplace_rnm_probs(&scores, b);
    assert_chi2(&counts, &probs, n, "Laplace RNM");
    // Power: the Gumbel (softmax) probabilities are a different distribution.
    let w: Vec<f64> = scores.iter().map(|s| (s / b).exp()).collect();
    let z: f64 = w.iter().sum();
    let wrong: Vec<f64> = w.iter().map(|v| v / z).collect();
    assert_chi2_rejects(&counts, &wrong, n, "Laplace RNM vs softmax");
}
