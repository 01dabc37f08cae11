//! How the DP-SCD experiment runs: the blocks of Figures 1-3 (tuned records, per-epoch
//! curves, the C sweep), each saved to the checkpoint as it finishes so that `--resume`
//! continues an interrupted run bit for bit ([`run_with_options`]).

use super::*;

pub(super) fn eps_key(e: Option<f64>) -> u64 {
    e.map_or(u64::MAX, f64::to_bits)
}

pub(super) fn seed_for(
    base: u64,
    p: &Problem,
    alg: Algorithm,
    eps: Option<f64>,
    h: Hyper,
    phase: &str,
    run: usize,
) -> u64 {
    stable_seed(
        base,
        &[&p.name(), alg.as_str(), phase],
        &[
            eps_key(eps),
            h.batch,
            h.clip.to_bits(),
            h.step.to_bits(),
            run as u64,
        ],
    )
}

/// Progress of one problem's fits on stderr (about every 5 %), with the time to go
/// extrapolated from the fits this process has done so far (the paper profile runs for
/// hours; on resume, only the fits still to run are counted).
pub(super) struct Progress {
    name: String,
    total: usize,
    done: std::sync::atomic::AtomicUsize,
    start: Instant,
}

impl Progress {
    fn new(name: String, total: usize) -> Self {
        Self {
            name,
            total,
            done: std::sync::atomic::AtomicUsize::new(0),
            start: Instant::now(),
        }
    }
    fn tick(&self) {
        let k = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let every = (self.total / 20).max(1);
        if k.is_multiple_of(every) || k == self.total {
            let t = self.start.elapsed().as_secs_f64();
            let left = t / k as f64 * self.total.saturating_sub(k) as f64;
            eprintln!(
                "dp-scd: {}: {k}/{} fits, {t:.0} s elapsed, about {left:.0} s to go",
                self.name, self.total
            );
        }
    }
}

/// The (algorithm, epsilon) blocks of Fig. 1, in report order: one tuned record each.
pub(super) fn fig1_blocks(s: &Settings) -> Vec<(Algorithm, Option<f64>)> {
    let mut v = Vec::new();
    for alg in s.algorithms() {
        if alg.private() {
            v.extend(s.epsilons.iter().map(|&e| (alg, Some(e))));
        } else {
            v.push((alg, None));
        }
    }
    v
}

/// The grid points of one block that fit the problem (`L <= n`).
pub(super) fn block_grid(s: &Settings, alg: Algorithm, n: usize) -> Vec<Hyper> {
    s.grid(alg)
        .into_iter()
        .filter(|h| (h.batch as usize) <= n)
        .collect()
}

pub(super) fn eps_label(eps: Option<f64>) -> String {
    eps.map_or_else(|| "non-private".into(), |e| e.to_string())
}

/// Checkpoint key of a Fig. 1 block: its identity, never its position in the run.
pub(super) fn fig1_key(problem: &str, alg: Algorithm, eps: Option<f64>) -> String {
    format!("fig1|{problem}|{}|{}", alg.as_str(), eps_label(eps))
}

/// The Fig. 2 parts of a problem: one curve per (algorithm, epsilon), ridge only.
pub(super) fn fig2_parts(app: App, s: &Settings) -> Vec<(Algorithm, Option<f64>)> {
    if app != App::Ridge {
        return Vec::new();
    }
    let mut v = Vec::new();
    for e in [0.1, 1.0].into_iter().filter(|e| s.epsilons.contains(e)) {
        v.extend([(Algorithm::DpScd, Some(e)), (Algorithm::DpSgd, Some(e))]);
    }
    v.extend([(Algorithm::Sdca, None), (Algorithm::Sgd, None)]);
    v
}

pub(super) fn fig2_key(problem: &str, alg: Algorithm, eps: Option<f64>) -> String {
    format!("fig2|{problem}|{}|{}", alg.as_str(), eps_label(eps))
}

/// The Fig. 3 parts of a problem: one curve per `C`, ridge only.
pub(super) fn fig3_parts(app: App, s: &Settings) -> Vec<f64> {
    if app == App::Ridge {
        s.fig3_clips.clone()
    } else {
        Vec::new()
    }
}

pub(super) fn fig3_key(problem: &str, clip: f64) -> String {
    format!("fig3|{problem}|C={clip}")
}

/// Runs of each Fig. 2 / Fig. 3 point.
pub(super) fn figure_runs(s: &Settings) -> usize {
    s.final_runs.min(3)
}

/// Tunes one (algorithm, epsilon) block on the validation split and re-runs the tuned
/// point with fresh seeds on the test split; `None` when no grid point fits the problem.
/// Every seed derives from the block's identity and the grid point ([`seed_for`]), so the
/// record does not depend on which blocks ran before it or in which process.
pub(super) fn run_block(
    p: &Problem,
    s: &Settings,
    base: u64,
    alg: Algorithm,
    eps: Option<f64>,
    progress: &Progress,
) -> Option<Record> {
    let zero = vec![0.0; p.fit.n_features()];
    let baseline_valid = finite_metric(p.app, &p.valid, &zero);
    let grid = block_grid(s, alg, p.fit.n_samples());
    if grid.is_empty() {
        return None;
    }
    // The validation metric (`None`: failed or diverged) and whether the fit failed.
    let tuned: Vec<(Option<f64>, bool)> = par_runs(grid.len(), |g| {
        let h = grid[g];
        let seed = seed_for(base, p, alg, eps, h, "tune", 0);
        let out = match fit_one(p, alg, eps.unwrap_or(0.0), h, h.epochs, seed) {
            Ok((w, _)) => (measure(p.app, &p.valid, &w), false),
            Err(_) => (None, true),
        };
        progress.tick();
        out
    });
    // Best point, grid order breaking ties.
    let failed = tuned.iter().filter(|t| t.1).count();
    let scores: Vec<f64> = tuned
        .iter()
        .map(|&(m, _)| score(p.app, m, baseline_valid))
        .collect();
    let best = best_index(&scores, Goal::Lower)?;
    let (h, valid) = (grid[best], tuned[best].0);
    // The test metric (`None`: failed or diverged) and the seconds of each fit that returned.
    let runs: Vec<(Option<f64>, Option<f64>)> = par_runs(s.final_runs, |r| {
        let seed = seed_for(base, p, alg, eps, h, "final", r);
        let out = match fit_one(p, alg, eps.unwrap_or(0.0), h, h.epochs, seed) {
            Ok((w, secs)) => (measure(p.app, &p.test, &w), Some(secs)),
            Err(_) => (None, None),
        };
        progress.tick();
        out
    });
    let ms: Vec<Option<f64>> = runs.iter().map(|r| r.0).collect();
    let st = RunStats::of(&ms);
    let secs: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.1)
        .filter(|v| v.is_finite())
        .collect();
    let not_finite = ms.iter().filter(|m| !m.is_some_and(f64::is_finite)).count();
    Some(Record {
        problem: p.name(),
        app: p.app.as_str().into(),
        stand_in: p.data.stand_in().map(Into::into),
        algorithm: alg.as_str().into(),
        epsilon: eps,
        delta: DELTA,
        metric: if p.app == App::Ridge {
            "MSE"
        } else {
            "accuracy"
        }
        .into(),
        test_mean: st.mean,
        test_min: st.min,
        test_max: st.max,
        test_runs: ms.iter().map(|m| m.and_then(finite)).collect(),
        diverged_runs: not_finite,
        valid_metric: valid.and_then(finite),
        batch: h.batch,
        clip: h.clip,
        step: h.step,
        epochs: h.epochs,
        seconds_per_run: (!secs.is_empty())
            .then(|| Stats::of(&secs).mean)
            .and_then(finite),
        dual_noise: match alg {
            Algorithm::DpScd | Algorithm::DpScdReplaceOne | Algorithm::SeqDpScd => {
                Some("every-record (proven)".into())
            }
            Algorithm::DpScdPaperNoise => Some("sampled-records (paper's, unproven)".into()),
            _ => None,
        },
        failed_runs: failed + not_finite,
    })
}
pub(super) fn parse_alg(s: &str) -> Option<Algorithm> {
    [
        Algorithm::DpScd,
        Algorithm::DpScdReplaceOne,
        Algorithm::DpScdPaperNoise,
        Algorithm::SeqDpScd,
        Algorithm::DpSgd,
        Algorithm::Sdca,
        Algorithm::Sgd,
    ]
    .into_iter()
    .find(|a| a.as_str() == s)
}

pub(super) fn tuned_of(
    records: &[Record],
    problem: &str,
    alg: Algorithm,
    eps: Option<f64>,
) -> Option<Hyper> {
    records
        .iter()
        .find(|r| r.problem == problem && r.algorithm == alg.as_str() && r.epsilon == eps)
        .map(|r| Hyper {
            batch: r.batch,
            clip: r.clip,
            step: r.step,
            epochs: r.epochs,
        })
}

/// One Fig. 2 curve: ridge (the paper's YearPredictionMSD), the training objective after
/// every epoch of one run of `s.epochs` epochs at the `(L, C, eta)` tuned for Fig. 1
/// (the private methods' noise calibrated for those `s.epochs` epochs), as the paper
/// logs one run; min / mean / max over [`figure_runs`] such runs. Empty when the Fig. 1
/// block has no record.
pub(super) fn run_fig2_part(
    p: &Problem,
    s: &Settings,
    records: &[Record],
    base: u64,
    (alg, eps): (Algorithm, Option<f64>),
    progress: &Progress,
) -> Vec<CurvePoint> {
    let Some(h) = tuned_of(records, &p.name(), alg, eps) else {
        return Vec::new();
    };
    let runs = figure_runs(s);
    // Each run's trace (`None`: the fit failed).
    let curves: Vec<Option<Vec<f64>>> = (0..runs)
        .into_par_iter()
        .map(|r| {
            let seed = seed_for(base, p, alg, eps, h, "fig2", r);
            let out = fit_traced(p, alg, eps.unwrap_or(0.0), h, s.epochs, seed, true)
                .ok()
                .map(|(_, _, t)| t);
            progress.tick();
            out
        })
        .collect();
    (1..=s.epochs)
        .map(|ep| {
            let objs: Vec<Option<f64>> = curves
                .iter()
                .map(|c| c.as_ref().and_then(|c| c.get(ep as usize - 1).copied()))
                .collect();
            let st = RunStats::of(&objs);
            CurvePoint {
                problem: p.name(),
                algorithm: alg.as_str().into(),
                epsilon: eps,
                epochs: ep,
                objective_mean: st.mean,
                objective_min: st.min,
                objective_max: st.max,
            }
        })
        .collect()
}

/// One Fig. 3 curve: DP-SCD at epsilon 1 on ridge, MSE against `L` at one `C`.
pub(super) fn run_fig3_part(
    p: &Problem,
    s: &Settings,
    base: u64,
    clip: f64,
    progress: &Progress,
) -> Vec<SweepPoint> {
    let pts: Vec<Hyper> = s
        .fig3_batches
        .iter()
        .filter(|&&b| (b as usize) <= p.fit.n_samples())
        .map(|&batch| Hyper {
            batch,
            clip,
            step: 0.0,
            epochs: s.epochs,
        })
        .collect();
    let runs = figure_runs(s);
    pts.par_iter()
        .map(|&h| {
            let mut test = Vec::new();
            let mut valid = Vec::new();
            for r in 0..runs {
                let seed = seed_for(base, p, Algorithm::DpScd, Some(1.0), h, "fig3", r);
                match fit_one(p, Algorithm::DpScd, 1.0, h, s.epochs, seed) {
                    Ok((w, _)) => {
                        test.push(measure(p.app, &p.test, &w));
                        valid.push(measure(p.app, &p.valid, &w));
                    }
                    Err(_) => {
                        test.push(None);
                        valid.push(None);
                    }
                }
                progress.tick();
            }
            let st = RunStats::of(&test);
            SweepPoint {
                batch: h.batch,
                clip: h.clip,
                test_mean: st.mean,
                test_min: st.min,
                test_max: st.max,
                valid_mean: RunStats::of(&valid).mean,
            }
        })
        .collect()
}

/// Training records the solvers see for `data` (the fit split), without loading the
/// design: the split sizes depend only on the number of records.
pub(super) fn fit_rows(data: Data, s: &Settings, seed: u64) -> Result<usize> {
    let (n, test_fraction) = match data {
        Data::MsdLike => {
            let n_train = s.msd_train;
            let n_test =
                ((n_train as f64) * MSD_SIZE.1 as f64 / MSD_SIZE.0 as f64).round() as usize;
            (n_train + n_test, n_test as f64 / (n_train + n_test) as f64)
        }
        Data::Adult => (crate::data::adult()?.0.n_samples(), TEST_FRACTION),
        Data::PhishingLike => (crate::data::website_phishing()?.n_samples(), TEST_FRACTION),
    };
    let (train, _) = split_indices(n, test_fraction, seed)?;
    Ok(split_indices(train.len(), VALID_FRACTION, seed ^ 0x5eed)?
        .0
        .len())
}

/// Fits of one Fig. 1 block (tuning grid and fresh runs).
pub(super) fn block_fits(s: &Settings, alg: Algorithm, n: usize) -> usize {
    let g = block_grid(s, alg, n).len();
    if g == 0 {
        0
    } else {
        g + s.final_runs
    }
}

/// A checksum of a preprocessed problem (every split's shape, design and labels): what the
/// checkpoint checks before it resumes a problem.
pub(super) fn problem_checksum(p: &Problem) -> String {
    let mut h = DataHash::new();
    for d in [&p.fit, &p.valid, &p.test] {
        h.word(d.n_samples() as u64);
        h.word(d.n_features() as u64);
        for j in 0..d.n_features() {
            h.floats(d.x().col(j));
        }
        h.floats(d.y());
    }
    h.finish()
}

/// Wall and CPU seconds of one process's share of a (possibly resumed) run, kept in the
/// checkpoint so that the report can give the total over every process.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// Wall seconds.
    pub wall_seconds: f64,
    /// CPU seconds (user + system) of the process, `null` where unknown.
    pub cpu_seconds: Option<f64>,
    /// Blocks (Fig. 1 records and Fig. 2 / Fig. 3 curves) it computed.
    pub blocks: usize,
}

/// The checkpoint, the stop hook and this process's session record.
pub(super) struct Saver<'r> {
    ck: Checkpoint,
    session_key: String,
    session: Session,
    run: &'r Run<'r>,
    stop_after: Option<usize>,
}

impl Saver<'_> {
    /// Saves a newly computed block and this session's times; stops the run (an error) when
    /// the test hook's count of new blocks is reached.
    fn put<T: Serialize>(&mut self, key: &str, block: &T) -> Result<()> {
        self.ck.put(key, block)?;
        self.session.blocks += 1;
        self.session.wall_seconds = self.run.wall_seconds();
        self.session.cpu_seconds = self.run.cpu_seconds();
        self.ck.put(&self.session_key, &self.session)?;
        if self.stop_after == Some(self.session.blocks) {
            bail!(
                "dp-scd: stopped after {} new blocks as asked (stop_after_blocks); {} holds them, --resume continues",
                self.session.blocks,
                self.ck.path().display()
            );
        }
        Ok(())
    }

    fn sessions(&self) -> Result<Vec<Session>> {
        let mut v = Vec::new();
        for k in 0.. {
            match self.ck.get::<Session>(&format!("session|{k}"))? {
                Some(s) => v.push(s),
                None => break,
            }
        }
        Ok(v)
    }
}

/// Runs the experiment and writes `summary.json`, `report.md` and the figures into
/// `config.out_dir/dp-scd/`.
pub fn run(config: &ExperimentConfig) -> Result<()> {
    run_with(config, &Settings::for_profile(config.profile))
}

/// [`run`] with explicit settings.
pub fn run_with(config: &ExperimentConfig, settings: &Settings) -> Result<()> {
    run_with_options(config, settings, &RunOptions::default())
}

/// [`run_with`] with a problem filter and resumption (see [`RunOptions`]).
///
/// Every finished block — one (problem, algorithm, epsilon) record of Fig. 1, one
/// (algorithm, epsilon) curve of Fig. 2, one `C` curve of Fig. 3 — is saved at once to
/// `OUT/dp-scd/checkpoint.json` ([`crate::checkpoint`]) with a fingerprint of the profile,
/// the settings, the seed and the code, and a checksum of each preprocessed problem.
/// Seeds derive from each block's identity, so a resumed run's records are bit-identical
/// to an uninterrupted run's (only the timings are those of the process that ran the
/// block).
pub fn run_with_options(
    config: &ExperimentConfig,
    settings: &Settings,
    opts: &RunOptions,
) -> Result<()> {
    let run = Run::start(config, NAME)?;
    let selected = select_problems(&opts.problems)?;
    let absent: Vec<String> = PROBLEMS
        .iter()
        .filter(|p| !selected.contains(p))
        .map(|&(d, a)| problem_name(d, a))
        .collect();
    let dir = run.dir();
    eprintln!(
        "dp-scd: profile {}, epsilons {:?}, {} epochs, {} fresh runs per tuned point",
        config.profile.name(),
        settings.epsilons,
        settings.epochs,
        settings.final_runs
    );
    let mut fingerprint = serde_json::Map::new();
    fingerprint.insert("experiment".into(), NAME.into());
    fingerprint.insert("profile".into(), config.profile.name().into());
    fingerprint.insert("seed".into(), config.seed.into());
    fingerprint.insert("settings".into(), serde_json::to_value(settings)?);
    fingerprint.insert("code".into(), code_identity().into());
    let ck = Checkpoint::open(&dir.join("checkpoint.json"), fingerprint, opts.resume)?;
    if opts.resume {
        eprintln!(
            "dp-scd: resuming from {}: {} saved entries (blocks and session times)",
            ck.path().display(),
            ck.resumed_blocks()
        );
    }
    let session_key = format!("session|{}", {
        let mut k = 0;
        while ck.get::<Session>(&format!("session|{k}"))?.is_some() {
            k += 1;
        }
        k
    });
    let mut saver = Saver {
        ck,
        session_key,
        session: Session {
            wall_seconds: 0.0,
            cpu_seconds: None,
            blocks: 0,
        },
        run: &run,
        stop_after: opts.stop_after_blocks,
    };
    if !absent.is_empty() {
        eprintln!(
            "dp-scd: problems not run (--problems): {}",
            absent.join(", ")
        );
    }
    // The plan: fits per problem still to run, so the duration can be estimated up front.
    let runs = figure_runs(settings);
    let mut plan_total = 0;
    for &(data, app) in &selected {
        let name = problem_name(data, app);
        let n = fit_rows(data, settings, config.seed)?;
        let (mut todo_blocks, mut fits, mut all) = (0, 0, 0);
        for (alg, eps) in fig1_blocks(settings) {
            all += 1;
            if saver
                .ck
                .get::<Option<Record>>(&fig1_key(&name, alg, eps))?
                .is_none()
            {
                todo_blocks += 1;
                fits += block_fits(settings, alg, n);
            }
        }
        for part in fig2_parts(app, settings) {
            all += 1;
            if saver
                .ck
                .get::<Vec<CurvePoint>>(&fig2_key(&name, part.0, part.1))?
                .is_none()
            {
                todo_blocks += 1;
                fits += runs;
            }
        }
        for c in fig3_parts(app, settings) {
            all += 1;
            if saver
                .ck
                .get::<Vec<SweepPoint>>(&fig3_key(&name, c))?
                .is_none()
            {
                todo_blocks += 1;
                let pts = settings
                    .fig3_batches
                    .iter()
                    .filter(|&&b| (b as usize) <= n)
                    .count();
                fits += pts * runs;
            }
        }
        eprintln!(
            "dp-scd: plan: {name}: {todo_blocks} of {all} blocks to run ({} in the checkpoint), {fits} fits",
            all - todo_blocks
        );
        plan_total += fits;
    }
    eprintln!("dp-scd: plan: {plan_total} fits to run in all");

    let mut records: Vec<Record> = Vec::new();
    let mut fig2 = Vec::new();
    let mut fig3 = Vec::new();
    let mut problem_rows = Vec::new();
    for &(data, app) in &selected {
        let t = Instant::now();
        let name = problem_name(data, app);
        let row_key = format!("problem|{name}");
        let n = fit_rows(data, settings, config.seed)?;
        let mut pending = 0;
        for (alg, eps) in fig1_blocks(settings) {
            if saver
                .ck
                .get::<Option<Record>>(&fig1_key(&name, alg, eps))?
                .is_none()
            {
                pending += block_fits(settings, alg, n);
            }
        }
        for part in fig2_parts(app, settings) {
            if saver
                .ck
                .get::<Vec<CurvePoint>>(&fig2_key(&name, part.0, part.1))?
                .is_none()
            {
                pending += runs;
            }
        }
        for c in fig3_parts(app, settings) {
            if saver
                .ck
                .get::<Vec<SweepPoint>>(&fig3_key(&name, c))?
                .is_none()
            {
                pending += settings
                    .fig3_batches
                    .iter()
                    .filter(|&&b| (b as usize) <= n)
                    .count()
                    * runs;
            }
        }
        let saved_row = saver.ck.get::<Vec<String>>(&row_key)?;
        // A problem whose blocks are all saved is not loaded again.
        let p = match (&saved_row, pending) {
            (Some(_), 0) => {
                eprintln!("dp-scd: {name}: every block is in the checkpoint; not loaded");
                None
            }
            _ => {
                let p = load_problem(data, app, settings, config.seed)
                    .with_context(|| format!("loading {name}"))?;
                saver.ck.check_input(&name, &problem_checksum(&p))?;
                Some(p)
            }
        };
        let row = match (&p, saved_row) {
            (Some(p), _) => {
                let row = vec![
                    p.name(),
                    data.stand_in().unwrap_or("real data").to_owned(),
                    p.fit.n_samples().to_string(),
                    p.valid.n_samples().to_string(),
                    p.test.n_samples().to_string(),
                    p.fit.n_features().to_string(),
                    format!("{:.2}", p.setup_seconds),
                ];
                saver.ck.put(&row_key, &row)?;
                row
            }
            (None, Some(row)) => row,
            (None, None) => unreachable!("a problem without a saved row is loaded"),
        };
        problem_rows.push(row);
        let progress = Progress::new(name.clone(), pending);
        if pending > 0 {
            eprintln!("dp-scd: {name}: {pending} fits to run");
        }
        for (alg, eps) in fig1_blocks(settings) {
            let key = fig1_key(&name, alg, eps);
            let rec = match (saver.ck.get::<Option<Record>>(&key)?, &p) {
                (Some(r), _) => r,
                (None, Some(p)) => {
                    let r = run_block(p, settings, config.seed, alg, eps, &progress);
                    if let Some(r) = &r {
                        eprintln!(
                            "dp-scd: {} {} eps={} : {} {} [{} , {}] (L={}, C={}, eta={}), {} s/run",
                            r.problem,
                            r.algorithm,
                            r.epsilon.map_or("-".into(), |e| e.to_string()),
                            r.metric,
                            fmt4(r.test_mean),
                            fmt4(r.test_min),
                            fmt4(r.test_max),
                            r.batch,
                            r.clip,
                            r.step,
                            r.seconds_per_run.map_or("-".into(), |s| format!("{s:.3}"))
                        );
                    }
                    saver.put(&key, &r)?;
                    r
                }
                (None, None) => unreachable!("a problem with pending blocks is loaded"),
            };
            records.extend(rec);
        }
        for part in fig2_parts(app, settings) {
            let key = fig2_key(&name, part.0, part.1);
            let pts = match (saver.ck.get::<Vec<CurvePoint>>(&key)?, &p) {
                (Some(v), _) => v,
                (None, Some(p)) => {
                    let v = run_fig2_part(p, settings, &records, config.seed, part, &progress);
                    saver.put(&key, &v)?;
                    v
                }
                (None, None) => unreachable!("a problem with pending blocks is loaded"),
            };
            fig2.extend(pts);
        }
        for c in fig3_parts(app, settings) {
            let key = fig3_key(&name, c);
            let pts = match (saver.ck.get::<Vec<SweepPoint>>(&key)?, &p) {
                (Some(v), _) => v,
                (None, Some(p)) => {
                    let v = run_fig3_part(p, settings, config.seed, c, &progress);
                    saver.put(&key, &v)?;
                    v
                }
                (None, None) => unreachable!("a problem with pending blocks is loaded"),
            };
            fig3.extend(pts);
        }
        eprintln!("dp-scd: {name} done in {:.1} s", t.elapsed().as_secs_f64());
    }
    let claims = claims(&records, &fig2, &fig3, settings, &absent);
    let sessions = saver.sessions()?;
    let summary = Summary {
        meta: run.metadata(run.wall_seconds()),
        records,
        fig2,
        fig3,
        claims,
        msd_train: settings.msd_train,
        problems_not_run: absent,
    };
    run.write_summary(&summary)?;
    write_figures(dir, &summary)?;
    let report = render_report(
        config,
        settings,
        opts,
        &summary,
        &problem_rows,
        &run.usage(),
        &sessions,
    );
    run.write_report(&report)?;
    eprintln!(
        "dp-scd: wrote summary, report and figures to {} in {:.1} s (checkpoint kept in {}; --resume reuses it)",
        dir.display(),
        run.wall_seconds(),
        saver.ck.path().display()
    );
    Ok(())
}
