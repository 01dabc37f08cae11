//! The generic tuning runner: the papers' protocol over a hyperparameter grid.
//!
//! An experiment is a list of [`Task`]s: one (problem, algorithm, accounting, ...) combination
//! each, with a [`Grid`] of step sizes, clipping thresholds and iteration budgets, a fit
//! closure and the objective. For every budget the runner
//!
//! 1. runs [`Protocol::tuning_runs`] seeded runs at every (step, clip) of the grid,
//! 2. keeps the (step, clip) with the lowest **mean** relative error `(F(w) - F*) / F*`
//!    over those runs (ties broken by grid order, so the choice is deterministic),
//! 3. runs [`Protocol::final_runs`] **fresh** runs (different seeds) at the tuned values and
//!    reports their min / mean / max, the individual errors, the coefficients and the mean
//!    solver time.
//!
//! This is the protocol of the DP-CD paper (Mangold et al. 2022, Sec. 6 and Appendix G.1):
//! tuning is not charged to the privacy budget (it selects hyperparameters on the private
//! data, as the paper does).
//!
//! Runs execute in parallel with rayon and are deterministic given the base seed: each run's
//! seed is a stable hash ([`stable_seed`]) of the task's seed key, the budget, the
//! hyperparameters, the phase and the run index, so a run's result does not depend on the
//! thread that ran it or on the order of execution. Solver time is measured by the fit
//! closure around the fit alone ([`timed`]); objective evaluation happens outside it.

use std::io::IsTerminal;
use std::time::Instant;

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

/// One point of the hyperparameter grid, as handed to a fit closure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hyper {
    /// Step-size scale (`gamma`; DP-CD uses `gamma / M_j`, DP-SGD `gamma / beta`).
    pub step: f64,
    /// Clipping threshold `C`.
    pub clip: f64,
    /// Iteration budget: passes over the data for DP-CD / DP-SGD, iterations for DP-GCD.
    pub budget: u64,
}

/// The grid one task is tuned on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// Step-size scales (use a one-element axis for algorithms without a step).
    pub steps: Vec<f64>,
    /// Clipping thresholds (use a one-element axis for algorithms without clipping).
    pub clips: Vec<f64>,
    /// Budgets; each is tuned and reported separately (noise depends on the budget).
    pub budgets: Vec<u64>,
}

impl Grid {
    /// Checks the grid is non-empty and finite.
    pub fn check(&self) -> Result<()> {
        if self.steps.is_empty() || self.clips.is_empty() || self.budgets.is_empty() {
            bail!("empty hyperparameter grid: every axis (steps, clips, budgets) needs at least one value");
        }
        if let Some(v) = self
            .steps
            .iter()
            .chain(&self.clips)
            .find(|v| !v.is_finite() || **v <= 0.0)
        {
            bail!("hyperparameter grid value {v} is not a positive finite number");
        }
        if self.budgets.contains(&0) {
            bail!("a budget of 0 iterations/passes is not a valid grid value");
        }
        Ok(())
    }

    /// Number of (step, clip) points per budget.
    pub fn points(&self) -> usize {
        self.steps.len() * self.clips.len()
    }
}

/// `n` log-spaced values from `lo` to `hi` inclusive (`numpy.logspace(log10 lo, log10 hi, n)`).
pub fn logspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    match n {
        0 => Vec::new(),
        1 => vec![lo],
        _ => {
            let (a, b) = (lo.log10(), hi.log10());
            (0..n)
                .map(|i| 10f64.powf(a + (b - a) * i as f64 / (n - 1) as f64))
                .collect()
        }
    }
}

/// Statistics of runs of which some may not have produced a value (`None`: the fit failed
/// or diverged).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunStats {
    /// Mean; `None` unless every run has a value and the mean is finite.
    pub mean: Option<f64>,
    /// Minimum over the runs with a value (`None` if not finite).
    pub min: Option<f64>,
    /// Maximum over the runs with a value (`None` if not finite).
    pub max: Option<f64>,
}

impl RunStats {
    /// [`Stats`] of the runs with a value, the mean only when no run is missing.
    pub fn of(runs: &[Option<f64>]) -> Self {
        let ok: Vec<f64> = runs.iter().flatten().copied().collect();
        let st = Stats::of(&ok);
        let finite = |x: f64| x.is_finite().then_some(x);
        Self {
            mean: if ok.len() == runs.len() {
                finite(st.mean)
            } else {
                None
            },
            min: finite(st.min),
            max: finite(st.max),
        }
    }
}

/// How many runs the protocol makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Protocol {
    /// Runs per grid point during tuning (the paper: 5).
    pub tuning_runs: usize,
    /// Fresh runs at the tuned values (the paper: 10).
    pub final_runs: usize,
    /// Base seed every run seed is derived from.
    pub seed: u64,
}

/// What a fit closure returns.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// The released coefficients.
    pub coefficients: Vec<f64>,
    /// Seconds spent in the solver itself (measure with [`timed`]; excludes objective evaluation).
    pub fit_seconds: f64,
}

/// Runs `f` and returns its value with the elapsed wall-clock seconds.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// A fit closure: hyperparameters and a seed in, coefficients and solver time out.
pub type FitFn<'a> = dyn Fn(&Hyper, u64) -> Result<RunOutput> + Send + Sync + 'a;

/// The objective `F(w)` of a problem.
pub type ObjectiveFn<'a> = dyn Fn(&[f64]) -> f64 + Send + Sync + 'a;

/// Labels identifying a task in outputs and in seeds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskId {
    /// Problem name, e.g. `california-raw`.
    pub problem: String,
    /// Algorithm name, e.g. `dp-cd`.
    pub algorithm: String,
    /// Accounting name, e.g. `paper` or `exact`.
    pub accounting: String,
    /// Further labels (e.g. DP-GCD's selection `rule`), in order.
    pub extra: Vec<(String, String)>,
}

impl TaskId {
    /// A task id with no extra labels.
    pub fn new(problem: &str, algorithm: &str, accounting: &str) -> Self {
        Self {
            problem: problem.to_owned(),
            algorithm: algorithm.to_owned(),
            accounting: accounting.to_owned(),
            extra: Vec::new(),
        }
    }

    /// The key seeds are derived from: problem, algorithm and the extra labels, but **not**
    /// the accounting, so that two accountings of the same algorithm at the same
    /// hyperparameters see the same random streams (common random numbers: their
    /// difference is then due to the noise scale alone).
    pub fn seed_key(&self) -> Vec<&str> {
        let mut key = vec![self.problem.as_str(), self.algorithm.as_str()];
        for (k, v) in &self.extra {
            key.push(k);
            key.push(v);
        }
        key
    }

    /// `problem / algorithm / accounting [k=v ...]` for progress lines.
    pub fn display(&self) -> String {
        let mut s = format!(
            "{} / {} / {}",
            self.problem, self.algorithm, self.accounting
        );
        for (k, v) in &self.extra {
            s.push_str(&format!(" {k}={v}"));
        }
        s
    }
}

/// One unit of work for the runner.
pub struct Task<'a> {
    /// Labels.
    pub id: TaskId,
    /// The grid.
    pub grid: Grid,
    /// The solver.
    pub fit: Box<FitFn<'a>>,
    /// The objective `F` of the problem.
    pub objective: Box<ObjectiveFn<'a>>,
    /// The certified optimum `F*` (must be positive: the metric divides by it).
    pub objective_star: f64,
}

/// Summary statistics of a set of relative errors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// Mean (`+inf` if any run diverged or failed).
    pub mean: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Sample standard deviation (0 for a single run).
    pub std: f64,
}

impl Stats {
    /// Statistics of `xs` (non-finite values propagate to mean / max / std).
    pub fn of(xs: &[f64]) -> Self {
        let n = xs.len().max(1) as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let std = if xs.len() > 1 {
            (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Self {
            mean,
            min,
            max,
            std,
        }
    }
}

/// The mean relative error of one grid point over the tuning runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GridPoint {
    /// Step-size scale.
    pub step: f64,
    /// Clipping threshold.
    pub clip: f64,
    /// Mean relative error over the tuning runs (`+inf` when a run failed or diverged).
    pub mean_rel_error: f64,
}

/// The outcome of one (task, budget) block.
#[derive(Debug, Clone)]
pub struct BlockResult {
    /// Task labels.
    pub id: TaskId,
    /// Budget (passes or iterations).
    pub budget: u64,
    /// Tuned hyperparameters.
    pub tuned: Hyper,
    /// Whether the tuned step / clip lies on the edge of its grid axis (a hint the grid is too narrow).
    pub tuned_on_edge: (bool, bool),
    /// Every grid point's tuning error, in grid order.
    pub tuning: Vec<GridPoint>,
    /// Statistics of the tuning runs at the tuned point (what the paper's Table 2 reports).
    pub tuning_stats: Stats,
    /// Statistics of the fresh runs at the tuned point.
    pub final_stats: Stats,
    /// Relative error of each fresh run.
    pub final_rel_errors: Vec<f64>,
    /// Coefficients of each fresh run.
    pub final_coefficients: Vec<Vec<f64>>,
    /// Mean solver seconds per fresh run (`None` when every fresh run failed).
    pub seconds_per_run: Option<f64>,
    /// Sample standard deviation of the solver seconds.
    pub seconds_std: f64,
    /// `F*`.
    pub objective_star: f64,
    /// Failed runs (fit returned an error) over the whole block, with the first message.
    pub failures: (usize, Option<String>),
}

/// Where progress goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A progress bar on a terminal unless `CI` is set; always a line per finished block on stderr.
    Auto,
    /// Only the line per finished block on stderr.
    Lines,
    /// Nothing.
    Silent,
}

const PHASE_TUNE: &str = "tune";
const PHASE_FINAL: &str = "final";

/// A stable 64-bit seed from a base seed and labelled parts (FNV-1a over the bytes, then the
/// SplitMix64 finaliser). Independent of the platform, the Rust version and the process
/// (unlike `std`'s randomly keyed hasher). Parts are length-prefixed so `("ab","c")` and
/// `("a","bc")` differ.
pub fn stable_seed(base: u64, parts: &[&str], numbers: &[u64]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    };
    eat(&base.to_le_bytes());
    for p in parts {
        eat(&(p.len() as u64).to_le_bytes());
        eat(p.as_bytes());
    }
    for x in numbers {
        eat(&x.to_le_bytes());
    }
    let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of one run.
pub fn run_seed(base: u64, id: &TaskId, h: &Hyper, phase: &str, run: usize) -> u64 {
    let mut parts = id.seed_key();
    parts.push(phase);
    stable_seed(
        base,
        &parts,
        &[h.budget, h.step.to_bits(), h.clip.to_bits(), run as u64],
    )
}

/// Which way a tuning score improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// Lower is better (an error, an objective, a mean squared error).
    Lower,
    /// Higher is better (an accuracy).
    Higher,
}

/// The grid point a tuning keeps: the index of the best score under `goal`, the first in
/// grid order among equal scores (so the choice is deterministic); a NaN score counts as
/// the worst possible. `None` for an empty grid. Every protocol of the experiments picks
/// its point with it.
pub fn best_index(scores: &[f64], goal: Goal) -> Option<usize> {
    // The key is minimised: the score, or its negative when higher is better.
    let key = |v: f64| match goal {
        _ if v.is_nan() => f64::INFINITY,
        Goal::Lower => v,
        Goal::Higher => -v,
    };
    let mut best: Option<(usize, f64)> = None;
    for (i, &v) in scores.iter().enumerate() {
        let k = key(v);
        if best.is_none_or(|(_, b)| k < b) {
            best = Some((i, k));
        }
    }
    best.map(|(i, _)| i)
}

/// `f(0), ..., f(n - 1)` in parallel (rayon), in index order: the tuning points or fresh
/// runs of a protocol. Each call derives its own seed from its index and labels
/// ([`stable_seed`]), so the results do not depend on the thread or the order that ran
/// them.
pub fn par_runs<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    (0..n).into_par_iter().map(f).collect()
}

/// Relative error `(F(w) - F*) / F*`, `+inf` when `F(w)` is not finite.
pub fn relative_error(f: f64, f_star: f64) -> f64 {
    if f.is_finite() {
        (f - f_star) / f_star
    } else {
        f64::INFINITY
    }
}

struct Outcome {
    rel_error: f64,
    /// Solver seconds; `None` for a failed run.
    seconds: Option<f64>,
    coefficients: Vec<f64>,
    error: Option<String>,
}

fn one_run(task: &Task<'_>, h: &Hyper, seed: u64, keep: bool) -> Outcome {
    match (task.fit)(h, seed) {
        Ok(out) => {
            let f = (task.objective)(&out.coefficients);
            Outcome {
                rel_error: relative_error(f, task.objective_star),
                seconds: Some(out.fit_seconds),
                coefficients: if keep { out.coefficients } else { Vec::new() },
                error: None,
            }
        }
        Err(e) => Outcome {
            rel_error: f64::INFINITY,
            seconds: None,
            coefficients: Vec::new(),
            error: Some(format!("{e:#}")),
        },
    }
}

fn make_bar(total: u64, mode: ProgressMode) -> ProgressBar {
    let interactive = mode == ProgressMode::Auto
        && std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none_or(|v| v.is_empty() || v == "false" || v == "0");
    if !interactive {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs (eta {eta}) {msg}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// Total number of runs `tasks` will make under `protocol`.
pub fn total_runs(tasks: &[Task<'_>], protocol: &Protocol) -> u64 {
    tasks
        .iter()
        .map(|t| {
            (t.grid.budgets.len() * (t.grid.points() * protocol.tuning_runs + protocol.final_runs))
                as u64
        })
        .sum()
}

/// Runs the protocol on every task; calls `on_block` after each finished (task, budget) block
/// (in task then budget order) so callers can save partial outputs.
pub fn run_tasks(
    tasks: &[Task<'_>],
    protocol: &Protocol,
    mode: ProgressMode,
    mut on_block: impl FnMut(&BlockResult) -> Result<()>,
) -> Result<Vec<BlockResult>> {
    if protocol.tuning_runs == 0 || protocol.final_runs == 0 {
        bail!("the protocol needs at least one tuning run and one final run per grid point");
    }
    for t in tasks {
        t.grid.check()?;
        if !(t.objective_star.is_finite() && t.objective_star > 0.0) {
            bail!(
                "{}: F* = {} must be positive and finite for the relative error (F - F*)/F*",
                t.id.display(),
                t.objective_star
            );
        }
    }
    let bar = make_bar(total_runs(tasks, protocol), mode);
    let mut results = Vec::new();
    for task in tasks {
        bar.set_message(task.id.display());
        let blocks = run_task(task, protocol, &bar)?;
        for b in blocks {
            if mode != ProgressMode::Silent {
                let line = format!(
                    "done {} budget={}: rel_error mean {:.4e} [min {:.4e}, max {:.4e}] at step {:.3e}, clip {:.3e}; {} s/run{}",
                    b.id.display(),
                    b.budget,
                    b.final_stats.mean,
                    b.final_stats.min,
                    b.final_stats.max,
                    b.tuned.step,
                    b.tuned.clip,
                    b.seconds_per_run.map_or("-".into(), |s| format!("{s:.3e}")),
                    match &b.failures {
                        (0, _) => String::new(),
                        (k, msg) => format!("; {k} failed runs (first: {})", msg.as_deref().unwrap_or("?")),
                    }
                );
                if bar.is_hidden() {
                    eprintln!("{line}");
                } else {
                    bar.println(line);
                }
            }
            on_block(&b)?;
            results.push(b);
        }
    }
    bar.finish_and_clear();
    Ok(results)
}

fn run_task(task: &Task<'_>, protocol: &Protocol, bar: &ProgressBar) -> Result<Vec<BlockResult>> {
    let g = &task.grid;
    // Tuning: every (budget, step, clip, run) in parallel.
    let mut jobs = Vec::with_capacity(g.budgets.len() * g.points() * protocol.tuning_runs);
    for &budget in &g.budgets {
        for &step in &g.steps {
            for &clip in &g.clips {
                for run in 0..protocol.tuning_runs {
                    jobs.push((Hyper { step, clip, budget }, run));
                }
            }
        }
    }
    let tuned_out: Vec<Outcome> = jobs
        .par_iter()
        .map(|(h, run)| {
            let seed = run_seed(protocol.seed, &task.id, h, PHASE_TUNE, *run);
            let o = one_run(task, h, seed, false);
            bar.inc(1);
            o
        })
        .collect();

    let per_budget = g.points() * protocol.tuning_runs;
    let mut tuned_points = Vec::with_capacity(g.budgets.len());
    for (b, &budget) in g.budgets.iter().enumerate() {
        let chunk = &tuned_out[b * per_budget..(b + 1) * per_budget];
        let mut points = Vec::with_capacity(g.points());
        for (k, runs) in chunk.chunks(protocol.tuning_runs).enumerate() {
            let errs: Vec<f64> = runs.iter().map(|o| o.rel_error).collect();
            let mean = Stats::of(&errs).mean;
            let mean = if mean.is_nan() { f64::INFINITY } else { mean };
            let (si, ci) = (k / g.clips.len(), k % g.clips.len());
            points.push(GridPoint {
                step: g.steps[si],
                clip: g.clips[ci],
                mean_rel_error: mean,
            });
        }
        let means: Vec<f64> = points.iter().map(|q| q.mean_rel_error).collect();
        let k = best_index(&means, Goal::Lower).unwrap_or(0);
        let (si, ci) = (k / g.clips.len(), k % g.clips.len());
        let tuning_errs: Vec<f64> = chunk[k * protocol.tuning_runs..(k + 1) * protocol.tuning_runs]
            .iter()
            .map(|o| o.rel_error)
            .collect();
        let failures: Vec<&Outcome> = chunk.iter().filter(|o| o.error.is_some()).collect();
        tuned_points.push((
            Hyper {
                step: g.steps[si],
                clip: g.clips[ci],
                budget,
            },
            (si, ci),
            points,
            Stats::of(&tuning_errs),
            (
                failures.len(),
                failures.first().and_then(|o| o.error.clone()),
            ),
        ));
    }
    // Fresh runs at the tuned values, all budgets in parallel.
    let final_jobs: Vec<(usize, usize)> = (0..g.budgets.len())
        .flat_map(|b| (0..protocol.final_runs).map(move |r| (b, r)))
        .collect();
    let final_out: Vec<Outcome> = final_jobs
        .par_iter()
        .map(|&(b, run)| {
            let h = tuned_points[b].0;
            let seed = run_seed(protocol.seed, &task.id, &h, PHASE_FINAL, run);
            let o = one_run(task, &h, seed, true);
            bar.inc(1);
            o
        })
        .collect();

    let mut blocks = Vec::with_capacity(g.budgets.len());
    for (b, (tuned, (si, ci), tuning, tuning_stats, mut failures)) in
        tuned_points.into_iter().enumerate()
    {
        let outs = &final_out[b * protocol.final_runs..(b + 1) * protocol.final_runs];
        let errs: Vec<f64> = outs.iter().map(|o| o.rel_error).collect();
        let secs: Vec<f64> = outs
            .iter()
            .filter_map(|o| o.seconds)
            .filter(|s| s.is_finite())
            .collect();
        let sec_stats = Stats::of(&secs);
        for o in outs.iter().filter(|o| o.error.is_some()) {
            failures.0 += 1;
            if failures.1.is_none() {
                failures.1 = o.error.clone();
            }
        }
        blocks.push(BlockResult {
            id: task.id.clone(),
            budget: tuned.budget,
            tuned,
            tuned_on_edge: (
                g.steps.len() > 1 && (si == 0 || si + 1 == g.steps.len()),
                g.clips.len() > 1 && (ci == 0 || ci + 1 == g.clips.len()),
            ),
            tuning,
            tuning_stats,
            final_stats: Stats::of(&errs),
            final_rel_errors: errs,
            final_coefficients: outs.iter().map(|o| o.coefficients.clone()).collect(),
            seconds_per_run: (!secs.is_empty()).then_some(sec_stats.mean),
            seconds_std: sec_stats.std,
            objective_star: task.objective_star,
            failures,
        });
    }
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_stats_leave_out_missing_runs_but_not_from_the_mean() {
        let all = RunStats::of(&[Some(1.0), Some(3.0)]);
        assert_eq!(
            (all.mean, all.min, all.max),
            (Some(2.0), Some(1.0), Some(3.0))
        );
        let one_missing = RunStats::of(&[Some(1.0), None, Some(3.0)]);
        assert_eq!(
            (one_missing.mean, one_missing.min, one_missing.max),
            (None, Some(1.0), Some(3.0))
        );
        let none = RunStats::of(&[None, None]);
        assert_eq!((none.mean, none.min, none.max), (None, None, None));
        let diverged = RunStats::of(&[Some(1.0), Some(f64::INFINITY)]);
        assert_eq!(
            (diverged.mean, diverged.min, diverged.max),
            (None, Some(1.0), None)
        );
    }

    #[test]
    fn logspace_matches_numpy() {
        let v = logspace(1e-2, 10.0, 10);
        assert_eq!(v.len(), 10);
        assert!((v[0] - 1e-2).abs() < 1e-15);
        assert!((v[9] - 10.0).abs() < 1e-12);
        // numpy.logspace(-2, 1, 10)[1] = 0.021544346900318832
        assert!((v[1] - 0.021_544_346_900_318_832).abs() < 1e-15);
    }

    #[test]
    fn seeds_are_stable_and_separate_parts() {
        // Value pinned by an independent computation (python: FNV-1a + splitmix64 finaliser).
        let a = stable_seed(0, &["ab", "c"], &[1]);
        let b = stable_seed(0, &["a", "bc"], &[1]);
        assert_ne!(a, b);
        assert_eq!(a, 13_565_209_002_369_814_806);
        assert_ne!(a, stable_seed(1, &["ab", "c"], &[1]));
        assert_ne!(a, stable_seed(0, &["ab", "c"], &[2]));
    }

    #[test]
    fn stats_are_correct() {
        let s = Stats::of(&[1.0, 2.0, 3.0, 6.0]);
        assert_eq!(s.mean, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 6.0);
        assert!((s.std - (14.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!(Stats::of(&[1.0, f64::INFINITY]).mean.is_infinite());
    }

    /// Toy problem: minimise F(w) = (w - 3)^2 + 1 (F* = 1) with a "solver" that returns
    /// 3 + noise / (step * budget) + clip-dependent bias; the runner must pick the largest
    /// step, the clip closest to 3, and be deterministic.
    #[test]
    fn protocol_tunes_and_is_deterministic() {
        use rand::{Rng, SeedableRng};
        let objective = |w: &[f64]| (w[0] - 3.0).powi(2) + 1.0;
        let make = || Task {
            id: TaskId::new("toy", "noisy", "paper"),
            grid: Grid {
                steps: vec![0.1, 1.0, 10.0],
                clips: vec![1.0, 3.0, 9.0],
                budgets: vec![1, 4],
            },
            fit: Box::new(|h: &Hyper, seed: u64| {
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
                let noise: f64 = rng.random_range(-1.0..1.0);
                let w = 3.0 + noise / (h.step * h.budget as f64) + 0.1 * (h.clip - 3.0);
                Ok(RunOutput {
                    coefficients: vec![w],
                    fit_seconds: 0.0,
                })
            }),
            objective: Box::new(objective),
            objective_star: 1.0,
        };
        let protocol = Protocol {
            tuning_runs: 3,
            final_runs: 4,
            seed: 7,
        };
        let tasks = vec![make()];
        let mut seen = 0;
        let r1 = run_tasks(&tasks, &protocol, ProgressMode::Silent, |_| {
            seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, 2);
        let r2 = run_tasks(&[make()], &protocol, ProgressMode::Silent, |_| Ok(())).unwrap();
        assert_eq!(r1.len(), 2);
        for (a, b) in r1.iter().zip(&r2) {
            assert_eq!(a.final_rel_errors, b.final_rel_errors);
            assert_eq!(a.tuned, b.tuned);
            assert_eq!(a.tuned.step, 10.0);
            assert_eq!(a.tuned.clip, 3.0);
            assert_eq!(a.final_rel_errors.len(), 4);
            assert_eq!(a.tuning.len(), 9);
            // Fresh runs use other seeds than the tuning runs.
            assert_ne!(a.final_stats.mean, a.tuning_stats.mean);
            let s = &a.final_stats;
            assert!(s.min <= s.mean && s.mean <= s.max);
        }
        assert!(r1[1].final_stats.mean < r1[0].final_stats.mean);
    }

    #[test]
    fn failures_are_counted_and_reported() {
        let objective = |w: &[f64]| w[0] * w[0] + 1.0;
        let task = Task {
            id: TaskId::new("toy", "broken", "paper"),
            grid: Grid {
                steps: vec![1.0, 2.0],
                clips: vec![1.0],
                budgets: vec![1],
            },
            fit: Box::new(|h: &Hyper, _| {
                if h.step > 1.5 {
                    bail!("step too large")
                }
                Ok(RunOutput {
                    coefficients: vec![0.5],
                    fit_seconds: 0.0,
                })
            }),
            objective: Box::new(objective),
            objective_star: 1.0,
        };
        let protocol = Protocol {
            tuning_runs: 2,
            final_runs: 2,
            seed: 1,
        };
        let r = run_tasks(&[task], &protocol, ProgressMode::Silent, |_| Ok(())).unwrap();
        assert_eq!(r[0].failures.0, 2);
        assert_eq!(r[0].tuned.step, 1.0);
        assert!((r[0].final_stats.mean - 0.25).abs() < 1e-15);

        let task = Task {
            id: TaskId::new("toy", "broken", "paper"),
            grid: Grid {
                steps: vec![1.0],
                clips: vec![1.0],
                budgets: vec![1],
            },
            fit: Box::new(|_: &Hyper, _| bail!("always fails")),
            objective: Box::new(objective),
            objective_star: 1.0,
        };
        // A task whose every run fails still yields its blocks (infinite error, counted
        // failures and the first message) so one broken solver does not stop an experiment.
        let r = run_tasks(&[task], &protocol, ProgressMode::Silent, |_| Ok(())).unwrap();
        assert_eq!(r[0].failures.0, 4);
        assert!(r[0].failures.1.as_deref().unwrap().contains("always fails"));
        assert!(r[0].final_stats.mean.is_infinite());
    }

    #[test]
    fn best_index_keeps_the_first_best_and_never_a_nan() {
        assert_eq!(best_index(&[], Goal::Lower), None);
        assert_eq!(best_index(&[3.0, 1.0, 1.0, 2.0], Goal::Lower), Some(1));
        assert_eq!(best_index(&[3.0, 1.0, 3.0], Goal::Higher), Some(0));
        // A failed point (NaN) is the worst under either goal, even when it comes first.
        assert_eq!(best_index(&[f64::NAN, 2.0], Goal::Lower), Some(1));
        assert_eq!(best_index(&[f64::NAN, 0.5], Goal::Higher), Some(1));
        assert_eq!(
            best_index(&[f64::NEG_INFINITY, 0.5, 0.7], Goal::Higher),
            Some(2)
        );
        // All failed: the first point, as the tuning of an all-failing task reports it.
        assert_eq!(
            best_index(&[f64::INFINITY, f64::INFINITY], Goal::Lower),
            Some(0)
        );
        assert_eq!(par_runs(4, |i| i * i), vec![0, 1, 4, 9]);
    }

    #[test]
    fn bad_grids_are_rejected() {
        let g = Grid {
            steps: vec![],
            clips: vec![1.0],
            budgets: vec![1],
        };
        assert!(g.check().is_err());
        let g = Grid {
            steps: vec![f64::NAN],
            clips: vec![1.0],
            budgets: vec![1],
        };
        assert!(g.check().is_err());
        let g = Grid {
            steps: vec![1.0],
            clips: vec![1.0],
            budgets: vec![0],
        };
        assert!(g.check().is_err());
    }
}
