//! The empirical privacy auditor: a lower bound on the epsilon a mechanism really has,
//! from many runs on two neighbouring datasets.
//!
//! **Claim.** If a mechanism `M` is `(epsilon, delta)`-DP for neighbours `D ~ D'`, then
//! for every event `E`, `P(M(D') in E) <= e^epsilon P(M(D) in E) + delta`, and the same
//! with `D` and `D'` exchanged (the neighbour relations used here are symmetric). Hence
//! `epsilon >= ln((P_alt(E) - delta) / P_null(E))` for every event and either order.
//! The auditor estimates both probabilities for one event by independent runs and
//! replaces them by one-sided Clopper-Pearson bounds (an upper bound on `P_null(E)`, a
//! lower bound on `P_alt(E)`, each at level `(1 - confidence) / 2`, exact binomial
//! tails): with probability at least `confidence` both hold, and then the reported
//! `epsilon_lower_bound` is below the mechanism's true epsilon (Jagielski, Ullman &
//! Oprea 2020, "Auditing differentially private machine learning: how private is
//! private SGD?", Sec. 3; Clopper & Pearson 1934).
//!
//! **Event selection.** The events are threshold tests `output > t` and `output <= t`,
//! in both orders. The threshold, event and order are chosen from a *pilot* run whose
//! random streams are disjoint from the estimate's, so the choice is independent of the
//! estimate and no union bound is needed. With [`Auditor::thresholds`] the grid is fixed
//! in advance instead (no pilot) and the confidence is split over all `4 k` one-sided
//! bounds (Bonferroni).
//!
//! **Randomness.** Trials run in batches of [`Auditor::batch_size`] on a rayon pool. Each
//! batch draws from its own ChaCha20 stream keyed by `(seed, phase, side, batch index)`,
//! so a seeded audit gives the same report bit for bit whatever the number of threads.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use std::fmt;
use std::sync::Arc;

use crate::error::{AccountingError, Result};

/// Which of the two neighbouring datasets a trial runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The dataset `D`.
    D,
    /// Its neighbour `D'`.
    DPrime,
}

impl Side {
    /// The other dataset.
    pub fn other(self) -> Side {
        match self {
            Side::D => Side::DPrime,
            Side::DPrime => Side::D,
        }
    }
    fn tag(self) -> u64 {
        match self {
            Side::D => 0,
            Side::DPrime => 1,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::D => "D",
            Side::DPrime => "D'",
        })
    }
}

/// The event a threshold test counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// `output > threshold`.
    Above,
    /// `output <= threshold`.
    AtOrBelow,
}

/// A score turning a vector output into the scalar the threshold tests see.
pub type Score = Arc<dyn Fn(&[f64]) -> f64 + Send + Sync>;

/// What an audit found.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditReport {
    /// The epsilon the mechanism claims.
    pub epsilon_claimed: f64,
    /// The delta the mechanism claims (used in the bound).
    pub delta_claimed: f64,
    /// With probability at least `confidence`, the mechanism's true epsilon at
    /// `delta_claimed` is at least this (clamped at 0).
    pub epsilon_lower_bound: f64,
    /// `epsilon_lower_bound > epsilon_claimed`: the claim is refuted at the stated
    /// confidence.
    pub violated: bool,
    /// The threshold of the test that gave the bound.
    pub threshold: f64,
    /// The event counted (`output > threshold` or `output <= threshold`).
    pub event: Event,
    /// The side whose event probability is bounded above (the denominator); the other
    /// side's is bounded below.
    pub null_side: Side,
    /// Trials on the null side in which the event happened.
    pub count_null: u64,
    /// Trials on the other side in which the event happened.
    pub count_alt: u64,
    /// Estimation trials per side (the pilot's are not counted here).
    pub trials: u64,
    /// Pilot trials per side (0 with a fixed threshold grid).
    pub pilot_trials: u64,
    /// The Clopper-Pearson upper bound on the null side's event probability.
    pub null_rate_upper: f64,
    /// The Clopper-Pearson lower bound on the other side's event probability.
    pub alt_rate_lower: f64,
    /// Probability that the bound is valid (`1 - false-alarm rate`).
    pub confidence: f64,
}

impl fmt::Display for AuditReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ev = match self.event {
            Event::Above => ">",
            Event::AtOrBelow => "<=",
        };
        write!(
            f,
            "epsilon >= {:.4} at confidence {} (claim {} at delta {}{}); event output {ev} {:.6}: \
             {} of {} on {}, {} of {} on {} (pilot {} per side)",
            self.epsilon_lower_bound,
            self.confidence,
            self.epsilon_claimed,
            self.delta_claimed,
            if self.violated { ", VIOLATED" } else { "" },
            self.threshold,
            self.count_alt,
            self.trials,
            self.null_side.other(),
            self.count_null,
            self.trials,
            self.null_side,
            self.pilot_trials,
        )
    }
}

/// The empirical privacy auditor (see the module documentation for the claim).
///
/// ```
/// use dp_accounting::mechanisms::Laplace;
/// use dp_accounting::testing::{Auditor, Side};
///
/// // A counting query (sensitivity 1) released with Laplace noise of scale 1: 1-DP.
/// let lap = Laplace::new(1.0)?;
/// let report = Auditor::new(1.0, 0.0)
///     .trials(20_000)
///     .seed(7)
///     .run(|side: Side, rng: &mut dyn rand::RngCore| -> f64 {
///         let count = if side == Side::D { 10.0 } else { 11.0 };
///         count + lap.sample(rng)
///     })?;
/// assert!(!report.violated);
/// # Ok::<(), dp_accounting::AccountingError>(())
/// ```
#[derive(Clone)]
pub struct Auditor {
    epsilon: f64,
    delta: f64,
    trials: u64,
    pilot_trials: Option<u64>,
    seed: u64,
    confidence: f64,
    thresholds: Option<Vec<f64>>,
    threads: Option<usize>,
    batch: u64,
    score: Option<Score>,
}

impl fmt::Debug for Auditor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auditor")
            .field("epsilon", &self.epsilon)
            .field("delta", &self.delta)
            .field("trials", &self.trials)
            .field("pilot_trials", &self.pilot_trials)
            .field("confidence", &self.confidence)
            .field("thresholds", &self.thresholds)
            .field("threads", &self.threads)
            .field("batch", &self.batch)
            .field("score", &self.score.as_ref().map(|_| "custom"))
            .finish_non_exhaustive()
    }
}

/// Default false-alarm rate: one audit in a million may report a bound above the truth.
const DEFAULT_CONFIDENCE: f64 = 1.0 - 1e-6;

/// Quantiles of the pooled pilot outputs tried as thresholds.
const PILOT_QUANTILES: [f64; 33] = [
    1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5,
    0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.997, 0.999, 0.9997, 0.9999,
    0.99995, 0.99999,
];

/// The normal quantile at which the pilot ranks candidate events by Wilson score bounds
/// (cheap; only the ranking depends on it, never the reported bound): `z_{0.975}`.
const PILOT_Z: f64 = 1.959_963_984_540_054;

impl Auditor {
    /// An auditor of the claim `(epsilon, delta)`. Defaults: 100,000 trials per side, a
    /// pilot of a fifth of that (at least 1,000), seed 0, confidence `1 - 1e-6`, all
    /// threads of rayon's global pool, batches of 4,096 trials.
    pub fn new(epsilon: f64, delta: f64) -> Auditor {
        Auditor {
            epsilon,
            delta,
            trials: 100_000,
            pilot_trials: None,
            seed: 0,
            confidence: DEFAULT_CONFIDENCE,
            thresholds: None,
            threads: None,
            batch: 4096,
            score: None,
        }
    }

    /// Estimation trials per side.
    pub fn trials(mut self, trials: u64) -> Auditor {
        self.trials = trials;
        self
    }

    /// Pilot trials per side (they only choose the event; default `max(trials / 5,
    /// 1000)`).
    pub fn pilot_trials(mut self, pilot: u64) -> Auditor {
        self.pilot_trials = Some(pilot);
        self
    }

    /// Seed of every random stream the audit draws from.
    pub fn seed(mut self, seed: u64) -> Auditor {
        self.seed = seed;
        self
    }

    /// Probability that the reported bound is valid, in `(0, 1)`.
    pub fn confidence(mut self, confidence: f64) -> Auditor {
        self.confidence = confidence;
        self
    }

    /// A threshold grid fixed in advance instead of the pilot: every threshold, both
    /// events and both orders are tested and the confidence split over them.
    pub fn thresholds(mut self, thresholds: Vec<f64>) -> Auditor {
        self.thresholds = Some(thresholds);
        self
    }

    /// Run on a dedicated pool of `threads` threads (the report does not depend on it).
    pub fn threads(mut self, threads: usize) -> Auditor {
        self.threads = Some(threads);
        self
    }

    /// Trials per batch (one random stream per batch; the report depends on it).
    pub fn batch_size(mut self, batch: u64) -> Auditor {
        self.batch = batch;
        self
    }

    /// The score applied to vector outputs in [`Auditor::run_vector`]. Without one, the
    /// score is the projection onto the difference of the pilot's mean outputs
    /// (`mean(D') - mean(D)`), fixed before the estimate.
    pub fn score(mut self, score: impl Fn(&[f64]) -> f64 + Send + Sync + 'static) -> Auditor {
        self.score = Some(Arc::new(score));
        self
    }

    fn validate(&self) -> Result<()> {
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return Err(AccountingError::InvalidParameter {
                name: "epsilon",
                value: self.epsilon,
                expected: "the claimed epsilon must be finite and >= 0",
            });
        }
        if !(self.delta.is_finite() && (0.0..1.0).contains(&self.delta)) {
            return Err(AccountingError::InvalidParameter {
                name: "delta",
                value: self.delta,
                expected: "the claimed delta must be in [0, 1)",
            });
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(AccountingError::InvalidParameter {
                name: "confidence",
                value: self.confidence,
                expected: "must be in (0, 1)",
            });
        }
        if self.trials == 0 {
            return Err(AccountingError::InvalidCount {
                name: "trials",
                value: 0,
                expected: "must be >= 1",
            });
        }
        if self.batch == 0 {
            return Err(AccountingError::InvalidCount {
                name: "batch_size",
                value: 0,
                expected: "must be >= 1",
            });
        }
        if self.threads == Some(0) {
            return Err(AccountingError::InvalidCount {
                name: "threads",
                value: 0,
                expected: "must be >= 1",
            });
        }
        if let Some(p) = self.pilot_trials {
            if p < 2 && self.thresholds.is_none() {
                return Err(AccountingError::InvalidCount {
                    name: "pilot_trials",
                    value: p,
                    expected: "must be >= 2",
                });
            }
        }
        if let Some(t) = &self.thresholds {
            if t.is_empty() || t.iter().any(|v| v.is_nan()) {
                return Err(AccountingError::InvalidParameter {
                    name: "thresholds",
                    value: t.iter().copied().find(|v| v.is_nan()).unwrap_or(f64::NAN),
                    expected: "a non-empty grid without NaN",
                });
            }
        }
        Ok(())
    }

    fn pilot_size(&self) -> u64 {
        self.pilot_trials.unwrap_or((self.trials / 5).max(1000))
    }

    /// Audits a mechanism with a scalar output: `mechanism(side, rng)` runs it once on
    /// `D` or `D'`, drawing all its randomness from `rng`. A NaN output is an error.
    pub fn run<F>(&self, mechanism: F) -> Result<AuditReport>
    where
        F: Fn(Side, &mut dyn RngCore) -> f64 + Sync,
    {
        self.validate()?;
        self.in_pool(|| self.run_scalar(&|s, r| mechanism(s, r)))
    }

    /// Audits a mechanism with a vector output through the score set by
    /// [`Auditor::score`] (default: projection onto the pilot's mean difference).
    pub fn run_vector<F>(&self, mechanism: F) -> Result<AuditReport>
    where
        F: Fn(Side, &mut dyn RngCore) -> Vec<f64> + Sync,
    {
        self.validate()?;
        self.in_pool(|| {
            let score: Score = match &self.score {
                Some(s) => s.clone(),
                None => {
                    let pilot = self.pilot_size().max(2);
                    let mean = |side: Side| -> Result<Vec<f64>> {
                        let sums = self.batches(2, side, pilot, |rng, count| {
                            let mut acc: Vec<f64> = Vec::new();
                            for _ in 0..count {
                                let v = mechanism(side, rng);
                                if acc.is_empty() {
                                    acc = vec![0.0; v.len()];
                                }
                                if v.len() != acc.len() {
                                    return Err(AccountingError::InvalidCount {
                                        name: "output length",
                                        value: v.len() as u64,
                                        expected: "every output of the mechanism must have the same length",
                                    });
                                }
                                for (a, x) in acc.iter_mut().zip(&v) {
                                    *a += x;
                                }
                            }
                            Ok(acc)
                        })?;
                        let mut total = sums[0].clone();
                        for s in &sums[1..] {
                            for (a, x) in total.iter_mut().zip(s) {
                                *a += x;
                            }
                        }
                        Ok(total.into_iter().map(|x| x / pilot as f64).collect())
                    };
                    let (m0, m1) = (mean(Side::D)?, mean(Side::DPrime)?);
                    let dir: Vec<f64> = m1.iter().zip(&m0).map(|(a, b)| a - b).collect();
                    if dir.iter().any(|v| !v.is_finite()) {
                        return Err(AccountingError::Numerical(
                            "the pilot's mean outputs are not finite: give the auditor a score"
                                .into(),
                        ));
                    }
                    Arc::new(move |v: &[f64]| v.iter().zip(&dir).map(|(a, b)| a * b).sum())
                }
            };
            self.run_scalar(&|s, r| score(&mechanism(s, r)))
        })
    }

    fn in_pool<T: Send>(&self, job: impl FnOnce() -> Result<T> + Send) -> Result<T> {
        match self.threads {
            None => job(),
            Some(k) => rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .map_err(|e| AccountingError::Numerical(format!("thread pool: {e}")))?
                .install(job),
        }
    }

    /// Runs `n` trials on `side` in `phase` (0: pilot, 1: estimate, 2: score pilot), in
    /// batches, each with its own stream; results in batch order.
    fn batches<R: Send>(
        &self,
        phase: u64,
        side: Side,
        n: u64,
        work: impl Fn(&mut dyn RngCore, u64) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        let nb = n.div_ceil(self.batch);
        (0..nb)
            .into_par_iter()
            .map(|b| {
                let mut key = [0u8; 32];
                key[..8].copy_from_slice(&self.seed.to_le_bytes());
                key[8..16].copy_from_slice(&phase.to_le_bytes());
                key[16..24].copy_from_slice(&side.tag().to_le_bytes());
                key[24..].copy_from_slice(&b.to_le_bytes());
                let mut rng = ChaCha20Rng::from_seed(key);
                let count = self.batch.min(n - b * self.batch);
                work(&mut rng, count)
            })
            .collect()
    }

    fn outputs(
        &self,
        phase: u64,
        side: Side,
        n: u64,
        mechanism: &(dyn Fn(Side, &mut dyn RngCore) -> f64 + Sync),
    ) -> Result<Vec<f64>> {
        let parts = self.batches(phase, side, n, |rng, count| {
            let mut out = Vec::with_capacity(count as usize);
            for _ in 0..count {
                out.push(finite_or_inf(mechanism(side, rng))?);
            }
            Ok(out)
        })?;
        Ok(parts.concat())
    }

    /// Counts `output > t` for each `t` of the sorted grid.
    fn counts_above(
        &self,
        side: Side,
        sorted: &[f64],
        mechanism: &(dyn Fn(Side, &mut dyn RngCore) -> f64 + Sync),
    ) -> Result<Vec<u64>> {
        let parts = self.batches(1, side, self.trials, |rng, count| {
            // hist[i] = number of outputs with exactly i thresholds strictly below them.
            let mut hist = vec![0u64; sorted.len() + 1];
            for _ in 0..count {
                let v = finite_or_inf(mechanism(side, rng))?;
                hist[sorted.partition_point(|&t| t < v)] += 1;
            }
            Ok(hist)
        })?;
        let mut hist = vec![0u64; sorted.len() + 1];
        for p in parts {
            for (h, c) in hist.iter_mut().zip(p) {
                *h += c;
            }
        }
        // above[j] = #{v > t_j} = sum_{i > j} hist[i].
        let mut above = vec![0u64; sorted.len()];
        let mut acc = 0;
        for j in (0..sorted.len()).rev() {
            acc += hist[j + 1];
            above[j] = acc;
        }
        Ok(above)
    }

    fn run_scalar(
        &self,
        mechanism: &(dyn Fn(Side, &mut dyn RngCore) -> f64 + Sync),
    ) -> Result<AuditReport> {
        let alpha = 1.0 - self.confidence;
        let n = self.trials;
        match &self.thresholds {
            Some(grid) => {
                let mut sorted = grid.clone();
                sorted.sort_by(f64::total_cmp);
                sorted.dedup();
                let above_d = self.counts_above(Side::D, &sorted, mechanism)?;
                let above_d2 = self.counts_above(Side::DPrime, &sorted, mechanism)?;
                // 4 one-sided bounds per threshold (upper and lower on each side's rate).
                let a = alpha / (4 * sorted.len()) as f64;
                let mut best: Option<AuditReport> = None;
                for (j, &t) in sorted.iter().enumerate() {
                    for cand in candidates(t, above_d[j], above_d2[j], n) {
                        let r = self.report(cand, n, 0, a);
                        if best
                            .as_ref()
                            .is_none_or(|b| r.epsilon_lower_bound > b.epsilon_lower_bound)
                        {
                            best = Some(r);
                        }
                    }
                }
                let mut r = best.expect("non-empty grid");
                r.confidence = self.confidence;
                Ok(r)
            }
            None => {
                let pilot = self.pilot_size();
                let mut p0 = self.outputs(0, Side::D, pilot, mechanism)?;
                let mut p1 = self.outputs(0, Side::DPrime, pilot, mechanism)?;
                let mut pooled: Vec<f64> = p0.iter().chain(&p1).copied().collect();
                pooled.sort_by(f64::total_cmp);
                p0.sort_by(f64::total_cmp);
                p1.sort_by(f64::total_cmp);
                let mut grid: Vec<f64> = PILOT_QUANTILES
                    .iter()
                    .map(|q| pooled[((q * pooled.len() as f64) as usize).min(pooled.len() - 1)])
                    .collect();
                grid.dedup();
                let above = |sorted: &[f64], t: f64| {
                    (sorted.len() - sorted.partition_point(|&v| v <= t)) as u64
                };
                // Rank every candidate by its bound on the pilot alone.
                let mut choice: Option<(Candidate, f64)> = None;
                for &t in &grid {
                    for cand in candidates(t, above(&p0, t), above(&p1, t), pilot) {
                        let lb = pilot_bound(&cand, pilot, self.delta);
                        if choice.as_ref().is_none_or(|c| lb > c.1) {
                            choice = Some((cand, lb));
                        }
                    }
                }
                let (pick, _) = choice.expect("non-empty grid");
                // The estimate: fresh streams, one event, two one-sided bounds.
                let t = pick.threshold;
                let above_d = self.counts_above(Side::D, &[t], mechanism)?[0];
                let above_d2 = self.counts_above(Side::DPrime, &[t], mechanism)?[0];
                let cand = candidates(t, above_d, above_d2, n)
                    .into_iter()
                    .find(|c| c.event == pick.event && c.null_side == pick.null_side)
                    .expect("the four candidates of a threshold");
                let mut r = self.report(cand, n, pilot, alpha / 2.0);
                r.confidence = self.confidence;
                Ok(r)
            }
        }
    }

    fn report(&self, c: Candidate, n: u64, pilot: u64, a: f64) -> AuditReport {
        let (_, null_up) = clopper_pearson(c.count_null, n, a);
        let (alt_lo, _) = clopper_pearson(c.count_alt, n, a);
        let lb = lower_bound(alt_lo, null_up, self.delta);
        AuditReport {
            epsilon_claimed: self.epsilon,
            delta_claimed: self.delta,
            epsilon_lower_bound: lb,
            violated: lb > self.epsilon,
            threshold: c.threshold,
            event: c.event,
            null_side: c.null_side,
            count_null: c.count_null,
            count_alt: c.count_alt,
            trials: n,
            pilot_trials: pilot,
            null_rate_upper: null_up,
            alt_rate_lower: alt_lo,
            confidence: self.confidence,
        }
    }
}

fn finite_or_inf(v: f64) -> Result<f64> {
    if v.is_nan() {
        Err(AccountingError::Numerical(
            "the audited mechanism returned NaN (infinite outputs are allowed, NaN has no order)"
                .into(),
        ))
    } else {
        Ok(v)
    }
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    threshold: f64,
    event: Event,
    null_side: Side,
    count_null: u64,
    count_alt: u64,
}

/// The four (event, order) tests at threshold `t` from the counts of `output > t`.
fn candidates(t: f64, above_d: u64, above_d2: u64, n: u64) -> [Candidate; 4] {
    let (below_d, below_d2) = (n - above_d, n - above_d2);
    let c = |event, null_side, count_null, count_alt| Candidate {
        threshold: t,
        event,
        null_side,
        count_null,
        count_alt,
    };
    [
        c(Event::Above, Side::D, above_d, above_d2),
        c(Event::Above, Side::DPrime, above_d2, above_d),
        c(Event::AtOrBelow, Side::D, below_d, below_d2),
        c(Event::AtOrBelow, Side::DPrime, below_d2, below_d),
    ]
}

fn lower_bound(alt_lo: f64, null_up: f64, delta: f64) -> f64 {
    if alt_lo - delta <= 0.0 || null_up <= 0.0 {
        0.0
    } else {
        ((alt_lo - delta) / null_up).ln().max(0.0)
    }
}

/// Wilson score interval `(lower, upper)` at normal quantile `z`.
fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    let (n, p) = (n as f64, k as f64 / n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The pilot's ranking of a candidate: the bound with Wilson intervals at `PILOT_Z`.
fn pilot_bound(c: &Candidate, n: u64, delta: f64) -> f64 {
    let (_, up) = wilson(c.count_null, n, PILOT_Z);
    let (lo, _) = wilson(c.count_alt, n, PILOT_Z);
    lower_bound(lo, up, delta)
}

/// `ln C(n, k)`: by summing logarithms when `min(k, n - k) <= 2000` (exact up to
/// rounding), else from `ln Gamma` (absolute error about 1e-9 at n = 1e7).
fn ln_choose(n: u64, k: u64) -> f64 {
    let k = k.min(n - k.min(n));
    if k <= 2000 {
        (0..k).map(|i| ((n - i) as f64 / (i + 1) as f64).ln()).sum()
    } else {
        libm::lgamma(n as f64 + 1.0)
            - libm::lgamma(k as f64 + 1.0)
            - libm::lgamma((n - k) as f64 + 1.0)
    }
}

/// `ln P(Bin(n, p) <= k)`. Below the mean (`k < n p`) the terms are summed in log space
/// from `i = k` downwards, at or above it the upper tail `P(X > k)` from `i = k + 1`
/// upwards; either way the terms decrease geometrically away from the mean and the sum
/// stops when they fall below `e^-50` of it.
fn ln_binom_cdf(k: u64, n: u64, p: f64) -> f64 {
    if k >= n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return f64::NEG_INFINITY;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let add = |acc: f64, term: f64| {
        let (hi, lo) = if acc > term { (acc, term) } else { (term, acc) };
        hi + (lo - hi).exp().ln_1p()
    };
    if (k as f64) < p * n as f64 {
        let mut term = ln_choose(n, k) + k as f64 * lp + (n - k) as f64 * lq;
        let mut acc = term;
        let mut i = k;
        while i > 0 {
            // term_{i-1} = term_i * i / (n - i + 1) * q / p.
            term += (i as f64 / (n - i + 1) as f64).ln() - lp + lq;
            i -= 1;
            acc = add(acc, term);
            if term < acc - 50.0 {
                break;
            }
        }
        acc
    } else {
        let mut i = k + 1;
        let mut term = ln_choose(n, i) + i as f64 * lp + (n - i) as f64 * lq;
        let mut acc = term;
        while i < n {
            // term_{i+1} = term_i * (n - i) / (i + 1) * p / q.
            term += ((n - i) as f64 / (i + 1) as f64).ln() + lp - lq;
            i += 1;
            acc = add(acc, term);
            if term < acc - 50.0 {
                break;
            }
        }
        (-acc.exp()).ln_1p()
    }
}

/// One-sided Clopper-Pearson bounds for `k` successes in `n` trials, each at level
/// `alpha`: `(lower, upper)` with `P(Bin(n, upper) <= k) = alpha` and
/// `P(Bin(n, lower) >= k) = alpha` (exact binomial tails in log space, bisection to 64
/// halvings of `[0, 1]`; the upper bound is rounded up and the lower one down).
///
/// ```
/// // python3, exact fractions: k = 3, n = 10, alpha = 0.05.
/// let (lo, up) = dp_accounting::testing::clopper_pearson(3, 10, 0.05);
/// assert!((up - 0.6066242161).abs() < 1e-8 && (lo - 0.0872644339).abs() < 1e-8);
/// ```
pub fn clopper_pearson(k: u64, n: u64, alpha: f64) -> (f64, f64) {
    let k = k.min(n);
    let la = alpha.ln();
    let upper = if k >= n {
        1.0
    } else {
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            if ln_binom_cdf(k, n, mid) > la {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    };
    let lower = if k == 0 {
        0.0
    } else {
        // P(Bin >= k) = 1 - P(Bin <= k - 1), increasing in p.
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            let tail = -ln_binom_cdf(k - 1, n, mid).exp_m1();
            if tail < alpha {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    (lower, upper)
}
