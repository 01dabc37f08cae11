//! The DP-SCD paper's experiments (Damaskinos, Mendler-Dünner, Guerraoui, Papandreou &
//! Parnell, "Differentially Private Stochastic Coordinate Descent", AAAI 2021, Sec. 5):
//! Fig. 1 (test utility against epsilon), Fig. 2 (training objective against epochs at
//! epsilon 0.1 and 1) and Fig. 3 (MSE against the mini-batch size L for several C), for
//! DP-SCD, SEQDP-SCD, DP-SGD and the non-private SDCA and SGD.
//!
//! Problems: ridge regression on a synthetic **stand-in** for YearPredictionMSD (not
//! shippable), logistic regression and hinge-loss SVM on UCI Adult and on UCI Website
//! Phishing (a **stand-in** for LIBSVM `phishing`). Every design is preprocessed as in the
//! paper: MaxAbs scaling fitted on the training split, then every row normalised to L2
//! norm 1 (DP-SCD's sensitivity needs `||x_i|| <= 1`; a per-record map). Regression labels
//! are centred by the training mean (no intercept, as in the paper). `lambda = 1e-4`,
//! `delta = 1e-3`. Hyperparameters are tuned on a 25 % validation split of the training
//! data (fit on the remaining 75 %), and the tuned point is re-run with fresh seeds and
//! scored on the test split. Tuning is not charged to the privacy budget (the paper's
//! convention). Decisions and results: `docs/reproduction-log.md`.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use dp_accounting::calibrate::Accountant;
use dp_models::split::{select, split_indices};
use dp_models::{
    Dataset, DenseDesign, Design, DualLoss, Hinge, Logistic, Loss, Squared, Tagged, L2,
};
use dp_optim::{
    Accounting, Adjacency, BatchUpdates, CalibrationCache, DpScdParams, DpSgdParams, DualNoise,
    SdcaParams, SgdParams, Solver,
};
use rand::SeedableRng;
use rand_distr::{Distribution, Normal, Uniform};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::harness::{Run, Usage};
use super::{ExperimentConfig, Profile};
use crate::checkpoint::{code_identity, Checkpoint, DataHash};
use crate::figures::{save_headline, BandPoint, ErrorFigure, Pick, Series};
use crate::report::{
    finite, machine_description, markdown_table, or_diverged, reading_section, Metadata, Verdict,
};
use crate::runner::{best_index, par_runs, stable_seed, Goal, RunStats, Stats};

mod report;
mod runs;
use report::*;
use runs::*;
pub use runs::{run, run_with, run_with_options, Session};

/// The experiment's name (output subdirectory).
pub const NAME: &str = "dp-scd";
/// The paper's `delta`.
pub const DELTA: f64 = 1e-3;
/// The paper's L2 strength (`(lambda/2)||w||^2`).
pub const LAMBDA: f64 = 1e-4;
/// YearPredictionMSD's sizes (train, test, features), which the stand-in copies.
pub const MSD_SIZE: (usize, usize, usize) = (463_715, 51_630, 90);
/// Fraction of the training split held out for tuning (the authors' `valid_size`).
pub const VALID_FRACTION: f64 = 0.25;
/// Fraction of the real data sets held out for testing.
pub const TEST_FRACTION: f64 = 0.25;

/// The learning problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum App {
    /// `(1/2)(x^T w - y)^2`, metric MSE.
    Ridge,
    /// `log(1 + exp(-y x^T w))`, metric accuracy.
    Logistic,
    /// `max(0, 1 - y x^T w)`, metric accuracy.
    Svm,
}

impl App {
    /// Name in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            App::Ridge => "ridge",
            App::Logistic => "logistic",
            App::Svm => "svm",
        }
    }
    fn metric(self) -> &'static str {
        match self {
            App::Ridge => "test MSE",
            _ => "test accuracy",
        }
    }
}

/// A data set of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Synthetic stand-in for YearPredictionMSD.
    MsdLike,
    /// UCI Adult (`adult.data`).
    Adult,
    /// UCI Website Phishing, stand-in for LIBSVM `phishing`.
    PhishingLike,
}

impl Data {
    fn as_str(self) -> &'static str {
        match self {
            Data::MsdLike => "yearpredictionmsd-like",
            Data::Adult => "adult",
            Data::PhishingLike => "website-phishing",
        }
    }
    fn stand_in(self) -> Option<&'static str> {
        match self {
            Data::MsdLike => Some("synthetic stand-in for YearPredictionMSD"),
            Data::Adult => None,
            Data::PhishingLike => Some("UCI Website Phishing, stand-in for LIBSVM phishing"),
        }
    }
}

/// The (data, application) pairs, in report order (the paper's three applications).
pub const PROBLEMS: [(Data, App); 5] = [
    (Data::MsdLike, App::Ridge),
    (Data::Adult, App::Logistic),
    (Data::Adult, App::Svm),
    (Data::PhishingLike, App::Logistic),
    (Data::PhishingLike, App::Svm),
];

/// `data/app` as the report prints it, e.g. `adult/svm`.
pub fn problem_name(data: Data, app: App) -> String {
    format!("{}/{}", data.as_str(), app.as_str())
}

/// The problems named in `names`, in report order; all of [`PROBLEMS`] when `names` is
/// empty. A name is a problem as the report prints it (`adult/svm`), the same with `-`
/// for `/` (`adult-svm`, as in the figure file names), or a data set (`adult`: all of its
/// applications). An unknown name is an error listing the valid ones.
pub fn select_problems(names: &[String]) -> Result<Vec<(Data, App)>> {
    if names.is_empty() {
        return Ok(PROBLEMS.to_vec());
    }
    let mut wanted = vec![false; PROBLEMS.len()];
    for raw in names {
        let name = raw.trim();
        let mut hit = false;
        for (k, &(d, a)) in PROBLEMS.iter().enumerate() {
            let full = problem_name(d, a);
            if name == full || name == full.replace('/', "-") || name == d.as_str() {
                wanted[k] = true;
                hit = true;
            }
        }
        if !hit {
            let mut valid: Vec<String> =
                PROBLEMS.iter().map(|&(d, a)| problem_name(d, a)).collect();
            for (d, _) in PROBLEMS {
                if !valid.iter().any(|v| v == d.as_str()) {
                    valid.push(d.as_str().to_owned());
                }
            }
            bail!(
                "unknown dp-scd problem '{name}': valid names are {} ('-' may replace '/')",
                valid.join(", ")
            );
        }
    }
    Ok(PROBLEMS
        .iter()
        .zip(wanted)
        .filter_map(|(p, w)| w.then_some(*p))
        .collect())
}

/// What a run does beyond the shared [`ExperimentConfig`]
/// (`cargo xtask reproduce dp-scd --resume --problems ...`).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Continue from the checkpoint `OUT/dp-scd/checkpoint.json`: blocks found there are
    /// not run again (a checkpoint of other settings, seed, profile, code or data is
    /// refused). Without it a run starts afresh and moves an existing checkpoint aside to
    /// `checkpoint.previous.json`.
    pub resume: bool,
    /// The problems to run (see [`select_problems`]); empty runs all of them.
    pub problems: Vec<String>,
    /// Test hook: stop with an error after this many newly finished blocks, as if the
    /// run had been killed there.
    pub stop_after_blocks: Option<usize>,
}

/// An algorithm of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// DP-SCD (Algorithm 1) with the paper's sampling and accountant: add/remove with
    /// the public `N` of the fit split, Poisson batches of rate `L / N`, sensitivity
    /// `sqrt(2) C` (Lemma 1), `T = floor(E N / L)`, the moments accountant at moment
    /// orders 1..=128 (the authors' `accountant.py`); proven noise
    /// [`DualNoise::EveryRecord`]. The row the paper's claims are tested on.
    DpScd,
    /// Our stricter DP-SCD: replace-one, batches of exactly `L` drawn without
    /// replacement (Wang, Balle & Kasiviswanathan's bound), sensitivity `2 sqrt(2) C`,
    /// same moments-accountant orders, [`DualNoise::EveryRecord`].
    DpScdReplaceOne,
    /// [`Algorithm::DpScd`] with the paper's noise on the sampled dual variables only
    /// ([`DualNoise::SampledRecords`], exactly the paper's Algorithm 1; guarantee
    /// reported unproven).
    DpScdPaperNoise,
    /// SEQDP-SCD (replace-one: a sequential batch needs a fixed size).
    SeqDpScd,
    /// DP-SGD with the paper's accounting (as the DP-SCD row): add/remove, Poisson
    /// batches of rate `L / N`, per-example clipping at `C` (sensitivity `C`), the
    /// moments accountant.
    DpSgd,
    /// Non-private SDCA (L = 1, no tuning).
    Sdca,
    /// Non-private mini-batch SGD.
    Sgd,
}

impl Algorithm {
    /// Name in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::DpScd => "dp-scd",
            Algorithm::DpScdReplaceOne => "dp-scd (replace-one, stricter)",
            Algorithm::DpScdPaperNoise => "dp-scd (paper's noise, unproven)",
            Algorithm::SeqDpScd => "seqdp-scd",
            Algorithm::DpSgd => "dp-sgd",
            Algorithm::Sdca => "sdca (non-private)",
            Algorithm::Sgd => "sgd (non-private)",
        }
    }
    fn private(self) -> bool {
        !matches!(self, Algorithm::Sdca | Algorithm::Sgd)
    }
    fn color(self) -> (u8, u8, u8) {
        match self {
            // One hue per algorithm from the qualitative palette.
            Algorithm::DpScd => crate::figures::PALETTE[0],
            Algorithm::DpScdReplaceOne => crate::figures::PALETTE[5],
            Algorithm::DpScdPaperNoise => crate::figures::PALETTE[1],
            Algorithm::SeqDpScd => crate::figures::PALETTE[4],
            Algorithm::DpSgd => crate::figures::PALETTE[3],
            Algorithm::Sdca => crate::figures::PALETTE[7],
            Algorithm::Sgd => crate::figures::PALETTE[2],
        }
    }
}

/// One hyperparameter point: mini-batch size `L`, clipping / scaling bound `C`, step `eta`
/// (SGD methods; `eta = gamma / beta` with the public bound `beta = 1` that row
/// normalisation gives).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hyper {
    /// Mini-batch size `L`.
    pub batch: u64,
    /// `C`.
    pub clip: f64,
    /// Step size `eta` (0 for the coordinate methods).
    pub step: f64,
    /// Epochs (passes) of the run.
    pub epochs: u64,
}

/// Grids and run counts of a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// Epsilons of Fig. 1.
    pub epsilons: Vec<f64>,
    /// Epochs (passes) of the non-private runs and of Fig. 3; the largest of the
    /// private methods' epoch grid.
    pub epochs: u64,
    /// Epoch budgets the private methods are tuned over (the noise grows with the
    /// number of steps at a fixed epsilon, so fewer epochs can be better).
    pub tune_epochs: Vec<u64>,
    /// Mini-batch sizes `L` (DP-SCD, SEQDP-SCD, DP-SGD, SGD).
    pub batches: Vec<u64>,
    /// Bounds `C` of DP-SCD and SEQDP-SCD.
    pub scd_clips: Vec<f64>,
    /// Per-example clipping thresholds of DP-SGD.
    pub sgd_clips: Vec<f64>,
    /// Step sizes of DP-SGD and SGD.
    pub steps: Vec<f64>,
    /// Fresh runs at the tuned point.
    pub final_runs: usize,
    /// Training records of the YearPredictionMSD stand-in (test: proportional).
    pub msd_train: usize,
    /// Epochs at which the Fig. 2 claim reads the curves (each Fig. 2 curve is one run
    /// of `epochs` epochs, its objective logged after every epoch).
    pub fig2_epochs: Vec<u64>,
    /// `L` axis of Fig. 3.
    pub fig3_batches: Vec<u64>,
    /// One curve per `C` in Fig. 3.
    pub fig3_clips: Vec<f64>,
    /// Also run the paper's (unproven) noise as an extra row.
    pub paper_noise_row: bool,
}

impl Settings {
    /// The grids of a profile.
    pub fn for_profile(profile: Profile) -> Self {
        match profile {
            Profile::Paper => Self {
                epsilons: vec![0.1, 0.5, 1.0, 5.0, 10.0],
                epochs: 50,
                tune_epochs: vec![1, 5, 20, 50],
                batches: vec![10, 30, 100, 300, 1000, 3000, 10_000],
                scd_clips: vec![0.01, 0.05, 0.1, 0.5, 1.0, 5.0],
                sgd_clips: vec![0.01, 0.05, 0.1, 0.5, 1.0, 5.0],
                steps: vec![1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0],
                final_runs: 10,
                msd_train: MSD_SIZE.0,
                fig2_epochs: vec![1, 2, 5, 10, 20, 50],
                fig3_batches: vec![10, 30, 100, 300, 1000, 3000, 10_000],
                fig3_clips: vec![0.05, 0.1, 0.5, 1.0, 5.0],
                paper_noise_row: true,
            },
            Profile::Quick => Self {
                epsilons: vec![0.1, 0.5, 1.0, 5.0, 10.0],
                epochs: 20,
                tune_epochs: vec![1, 5, 20],
                batches: vec![10, 100, 1000],
                scd_clips: vec![0.01, 0.03, 0.1, 0.5, 1.0],
                sgd_clips: vec![0.1, 1.0],
                steps: vec![0.01, 0.1, 1.0],
                final_runs: 3,
                msd_train: 40_000,
                fig2_epochs: vec![1, 2, 5, 10, 20],
                fig3_batches: vec![10, 100, 1000, 5000],
                fig3_clips: vec![0.1, 0.5, 1.0],
                paper_noise_row: true,
            },
            Profile::Smoke => Self {
                epsilons: vec![1.0],
                epochs: 2,
                tune_epochs: vec![2],
                batches: vec![100],
                scd_clips: vec![0.5],
                sgd_clips: vec![1.0],
                steps: vec![0.1],
                final_runs: 1,
                msd_train: 2_000,
                fig2_epochs: vec![1, 2],
                fig3_batches: vec![100],
                fig3_clips: vec![0.5],
                paper_noise_row: false,
            },
        }
    }

    fn algorithms(&self) -> Vec<Algorithm> {
        let mut v = vec![Algorithm::DpScd, Algorithm::DpScdReplaceOne];
        if self.paper_noise_row {
            v.push(Algorithm::DpScdPaperNoise);
        }
        v.extend([
            Algorithm::SeqDpScd,
            Algorithm::DpSgd,
            Algorithm::Sdca,
            Algorithm::Sgd,
        ]);
        v
    }

    fn grid(&self, alg: Algorithm) -> Vec<Hyper> {
        let mut g = Vec::new();
        let epochs = if alg.private() {
            self.tune_epochs.clone()
        } else {
            vec![self.epochs]
        };
        for &epochs in &epochs {
            match alg {
                Algorithm::DpScd
                | Algorithm::DpScdReplaceOne
                | Algorithm::DpScdPaperNoise
                | Algorithm::SeqDpScd => {
                    for &batch in &self.batches {
                        for &clip in &self.scd_clips {
                            g.push(Hyper {
                                batch,
                                clip,
                                step: 0.0,
                                epochs,
                            });
                        }
                    }
                }
                Algorithm::DpSgd => {
                    for &batch in &self.batches {
                        for &clip in &self.sgd_clips {
                            for &step in &self.steps {
                                g.push(Hyper {
                                    batch,
                                    clip,
                                    step,
                                    epochs,
                                });
                            }
                        }
                    }
                }
                Algorithm::Sgd => {
                    for &batch in &self.batches {
                        for &step in &self.steps {
                            g.push(Hyper {
                                batch,
                                clip: 0.0,
                                step,
                                epochs,
                            });
                        }
                    }
                }
                // "SCD requires no tuning" (the paper): L = 1, no bound.
                Algorithm::Sdca => g.push(Hyper {
                    batch: 1,
                    clip: 0.0,
                    step: 0.0,
                    epochs,
                }),
            }
        }
        g
    }
}

/// A preprocessed problem: fit / validation / test splits.
pub struct Problem {
    /// Data set.
    pub data: Data,
    /// Application.
    pub app: App,
    /// Training records the solvers see (75 % of the training split).
    pub fit: Dataset<DenseDesign>,
    /// Validation records (tuning).
    pub valid: Dataset<DenseDesign>,
    /// Test records (reported metric).
    pub test: Dataset<DenseDesign>,
    /// Seconds to generate / load and preprocess.
    pub setup_seconds: f64,
    /// The noise calibrations of DP-SCD and DP-SGD, shared by every fit on this
    /// problem (one search per distinct plan; the fits are bit-identical to uncached
    /// ones).
    pub calibrations: CalibrationCache,
}

impl Problem {
    /// `data/app`, e.g. `adult/svm`.
    pub fn name(&self) -> String {
        problem_name(self.data, self.app)
    }
}

fn center_labels(sets: &mut [&mut Dataset<DenseDesign>]) -> Result<()> {
    let mean = sets[0].y().iter().sum::<f64>() / sets[0].n_samples() as f64;
    for d in sets.iter_mut() {
        let y: Vec<f64> = d.y().iter().map(|v| v - mean).collect();
        let x = d.x().clone();
        **d = Dataset::new(x, y)?;
    }
    Ok(())
}

/// The synthetic YearPredictionMSD stand-in: `n` records of 90 features with column
/// scales spread over three decades and a shared factor (correlated columns), label
/// `1998 + signal + noise` with signal std 5.4 and noise std 9.5, so that predicting
/// the mean gives MSE ~119 and the best linear model ~90 (the public orders of
/// magnitude of YearPredictionMSD).
pub fn msd_like(n: usize, seed: u64) -> Result<Dataset<DenseDesign>> {
    let p = MSD_SIZE.2;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let std = Normal::new(0.0, 1.0)?;
    let logu = Uniform::new(-1.0f64, 2.0)?;
    let scales: Vec<f64> = (0..p).map(|_| 10f64.powf(logu.sample(&mut rng))).collect();
    let mut beta: Vec<f64> = (0..p).map(|_| std.sample(&mut rng)).collect();
    let bn = beta.iter().map(|b| b * b).sum::<f64>().sqrt();
    beta.iter_mut().for_each(|b| *b *= 5.4 / bn);
    let mut x = Vec::with_capacity(n * p);
    let mut y = Vec::with_capacity(n);
    let mut z = vec![0.0; p];
    for _ in 0..n {
        let u = std.sample(&mut rng);
        for zj in z.iter_mut() {
            *zj = std.sample(&mut rng);
        }
        let signal: f64 = z.iter().zip(&beta).map(|(a, b)| a * b).sum();
        y.push(1998.0 + signal + 9.5 * std.sample(&mut rng));
        for j in 0..p {
            x.push(scales[j] * (z[j] + 0.5 * u));
        }
    }
    Ok(Dataset::new(DenseDesign::from_row_major(n, p, &x)?, y)?)
}

fn split3(
    d: &Dataset<DenseDesign>,
    test_fraction: f64,
    seed: u64,
) -> Result<[Dataset<DenseDesign>; 3]> {
    let (train, test) = split_indices(d.n_samples(), test_fraction, seed)?;
    let (fit, valid) = split_indices(train.len(), VALID_FRACTION, seed ^ 0x5eed)?;
    let fit: Vec<usize> = fit.iter().map(|&i| train[i]).collect();
    let valid: Vec<usize> = valid.iter().map(|&i| train[i]).collect();
    Ok([select(d, &fit)?, select(d, &valid)?, select(d, &test)?])
}

/// Loads and preprocesses one problem.
pub fn load_problem(data: Data, app: App, settings: &Settings, seed: u64) -> Result<Problem> {
    let start = Instant::now();
    let (raw, test_fraction, standardize) = match data {
        Data::MsdLike => {
            let n_train = settings.msd_train;
            let n_test =
                ((n_train as f64) * MSD_SIZE.1 as f64 / MSD_SIZE.0 as f64).round() as usize;
            let d = msd_like(n_train + n_test, seed)?;
            let frac = n_test as f64 / (n_train + n_test) as f64;
            (d, frac, Vec::new())
        }
        Data::Adult => (
            crate::data::adult()?.0,
            TEST_FRACTION,
            crate::data::scaling::ADULT_STANDARDIZED.to_vec(),
        ),
        Data::PhishingLike => (crate::data::website_phishing()?, TEST_FRACTION, Vec::new()),
    };
    let [mut fit, mut valid, mut test] = split3(&raw, test_fraction, seed)?;
    // Scaling statistics come from the training records the solver sees.
    crate::data::scale_and_normalise_rows(&mut [&mut fit, &mut valid, &mut test], &standardize)?;
    if app == App::Ridge {
        center_labels(&mut [&mut fit, &mut valid, &mut test])?;
    }
    Ok(Problem {
        data,
        app,
        fit,
        valid,
        test,
        setup_seconds: start.elapsed().as_secs_f64(),
        calibrations: CalibrationCache::new(),
    })
}

/// What one fit returns: coefficients, solver seconds and, when asked, the training
/// objective after every epoch.
type FitOut = (Vec<f64>, f64, Vec<f64>);

/// One fit (`record`: log the objective after every epoch, a non-private diagnostic).
#[allow(clippy::too_many_arguments)]
fn fit_loss<L: DualLoss + Loss + Clone>(
    loss: L,
    alg: Algorithm,
    p: &Problem,
    eps: f64,
    h: Hyper,
    epochs: u64,
    seed: u64,
    record: bool,
) -> Result<FitOut> {
    let (d, cache) = (&p.fit, &p.calibrations);
    let pen = L2::new(LAMBDA)?;
    let beta = || Tagged::public(1.0);
    // The paper's rows: add/remove with the fit split's size as the public N.
    let public_n = d.n_samples();
    let moments = Accounting::Custom(Accountant::MomentsAccountant);
    let fitted = match alg {
        Algorithm::DpScd
        | Algorithm::DpScdReplaceOne
        | Algorithm::DpScdPaperNoise
        | Algorithm::SeqDpScd => {
            let b = DpScdParams::new(loss, pen)
                .calibration_cache(cache.clone())
                .epsilon(eps)
                .delta(DELTA)
                .passes(epochs)
                .batch_size(h.batch)
                .clip(h.clip)
                .accounting(Accounting::Paper)
                .record_trajectory(record)
                .updates(if alg == Algorithm::SeqDpScd {
                    BatchUpdates::Sequential
                } else {
                    BatchUpdates::Independent
                })
                .dual_noise(if alg == Algorithm::DpScdPaperNoise {
                    DualNoise::SampledRecords
                } else {
                    DualNoise::EveryRecord
                });
            let b = match alg {
                Algorithm::DpScd | Algorithm::DpScdPaperNoise => {
                    b.adjacency(Adjacency::AddRemove).public_n(public_n)
                }
                _ => b,
            };
            b.build()?.fit_seeded(d, seed)?
        }
        Algorithm::DpSgd => DpSgdParams::new(loss, pen)
            .calibration_cache(cache.clone())
            .epsilon(eps)
            .delta(DELTA)
            .passes(epochs)
            .batch_size(h.batch)
            .clip(h.clip)
            .step_scale(h.step)
            .smoothness(beta())
            .adjacency(Adjacency::AddRemove)
            .public_n(public_n)
            .accounting(moments)
            .record_trajectory(record)
            .build()?
            .fit_seeded(d, seed)?,
        Algorithm::Sdca => SdcaParams::new(loss, pen)
            .passes(epochs)
            .record_trajectory(record)
            .build()?
            .fit_seeded(d, seed)?,
        Algorithm::Sgd => SgdParams::new(loss, pen)
            .passes(epochs)
            .batch_size(h.batch)
            .step_scale(h.step)
            .smoothness(beta())
            .record_trajectory(record)
            .build()?
            .fit_seeded(d, seed)?,
    };
    Ok((
        fitted.model.coefficients,
        fitted.diagnostics.seconds,
        fitted.diagnostics.objective_trajectory,
    ))
}

fn fit_one(
    p: &Problem,
    alg: Algorithm,
    eps: f64,
    h: Hyper,
    epochs: u64,
    seed: u64,
) -> Result<(Vec<f64>, f64)> {
    fit_traced(p, alg, eps, h, epochs, seed, false).map(|(w, s, _)| (w, s))
}

fn fit_traced(
    p: &Problem,
    alg: Algorithm,
    eps: f64,
    h: Hyper,
    epochs: u64,
    seed: u64,
    record: bool,
) -> Result<FitOut> {
    match p.app {
        App::Ridge => fit_loss(Squared::half(), alg, p, eps, h, epochs, seed, record),
        App::Logistic => fit_loss(Logistic, alg, p, eps, h, epochs, seed, record),
        App::Svm => fit_loss(Hinge, alg, p, eps, h, epochs, seed, record),
    }
}

/// The metric on `d`: MSE (ridge) or accuracy (classification, `x^T w > 0` predicts +1);
/// `None` when `w` diverged (a coefficient is not finite).
pub fn measure(app: App, d: &Dataset<DenseDesign>, w: &[f64]) -> Option<f64> {
    w.iter()
        .all(|v| v.is_finite())
        .then(|| finite_metric(app, d, w))
}

/// [`measure`] of finite coefficients.
fn finite_metric(app: App, d: &Dataset<DenseDesign>, w: &[f64]) -> f64 {
    let mut z = vec![0.0; d.n_samples()];
    d.x().matvec(w, &mut z);
    let n = d.n_samples() as f64;
    match app {
        App::Ridge => {
            z.iter()
                .zip(d.y())
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                / n
        }
        _ => {
            z.iter()
                .zip(d.y())
                .filter(|(a, b)| (if **a > 0.0 { 1.0 } else { -1.0 }) == **b)
                .count() as f64
                / n
        }
    }
}

/// The tuning score (lower is better; `+inf` for failed or diverged runs, whose metric is
/// `None`: the paper's guard drops NaN runs and ridge runs whose MSE exceeds 3x that of
/// `w = 0`).
fn score(app: App, m: Option<f64>, baseline: f64) -> f64 {
    let Some(m) = m.filter(|m| m.is_finite()) else {
        return f64::INFINITY;
    };
    match app {
        App::Ridge if m > 3.0 * baseline => f64::INFINITY,
        App::Ridge => m,
        _ => 1.0 - m,
    }
}

/// One record of `summary.json`: a (problem, algorithm, epsilon) after tuning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `data/app`.
    pub problem: String,
    /// `ridge`, `logistic` or `svm`.
    pub app: String,
    /// `None` for real data, else what it stands in for.
    pub stand_in: Option<String>,
    /// Algorithm.
    pub algorithm: String,
    /// Epsilon (`null` for the non-private references).
    pub epsilon: Option<f64>,
    /// Delta.
    pub delta: f64,
    /// `MSE` or `accuracy`.
    pub metric: String,
    /// Mean test metric of the fresh runs (`null` if one failed or diverged).
    pub test_mean: Option<f64>,
    /// Minimum.
    pub test_min: Option<f64>,
    /// Maximum.
    pub test_max: Option<f64>,
    /// Each run's test metric.
    pub test_runs: Vec<Option<f64>>,
    /// Validation metric of the tuned point (one tuning run).
    pub valid_metric: Option<f64>,
    /// Tuned mini-batch size `L`.
    pub batch: u64,
    /// Tuned `C` (0 when unused).
    pub clip: f64,
    /// Tuned step `eta` (0 when unused).
    pub step: f64,
    /// Epochs.
    pub epochs: u64,
    /// Mean solver seconds per fresh run.
    pub seconds_per_run: Option<f64>,
    /// Noise on the dual variables (DP-SCD variants).
    pub dual_noise: Option<String>,
    /// Failed runs: tuning runs whose fit returned an error, and fresh runs whose fit
    /// returned an error or diverged (the [`Record::diverged_runs`]).
    pub failed_runs: usize,
    /// Fresh runs whose test metric is not finite (diverged or failed); the statistics over
    /// the fresh runs are `null` when this is not 0.
    pub diverged_runs: usize,
}

/// Fig. 2 point: training objective after `epochs` epochs (a separate run per budget).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Problem.
    pub problem: String,
    /// Algorithm.
    pub algorithm: String,
    /// Epsilon (`null`: non-private).
    pub epsilon: Option<f64>,
    /// Epochs of the run.
    pub epochs: u64,
    /// Mean training objective over the runs (`null` if one diverged).
    pub objective_mean: Option<f64>,
    /// Minimum.
    pub objective_min: Option<f64>,
    /// Maximum.
    pub objective_max: Option<f64>,
}

/// Fig. 3 point: DP-SCD test MSE at epsilon 1 for one `(L, C)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// `L`.
    pub batch: u64,
    /// `C`.
    pub clip: f64,
    /// Mean test MSE over the runs (`null` if one diverged).
    pub test_mean: Option<f64>,
    /// Minimum.
    pub test_min: Option<f64>,
    /// Maximum.
    pub test_max: Option<f64>,
    /// Mean validation MSE (used to pick the best `C`).
    pub valid_mean: Option<f64>,
}

/// A claim of the paper set beside our measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The paper's statement.
    pub claim: String,
    /// `holds`, `partly` or `does not hold`.
    pub verdict: String,
    /// The numbers behind the verdict.
    pub measured: String,
}

/// Everything the experiment writes into `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Experiment, profile, seed, commit, date, machine and wall seconds.
    #[serde(flatten)]
    pub meta: Metadata,
    /// One per (problem, algorithm, epsilon).
    pub records: Vec<Record>,
    /// Fig. 2.
    pub fig2: Vec<CurvePoint>,
    /// Fig. 3.
    pub fig3: Vec<SweepPoint>,
    /// The paper's qualitative claims against ours.
    pub claims: Vec<Claim>,
    /// Training records of the YearPredictionMSD stand-in.
    pub msd_train: usize,
    /// Problems left out of this run (`--problems`); the claims that need them say so.
    #[serde(default)]
    pub problems_not_run: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preprocessing_normalises_rows_and_centres_labels() {
        let s = Settings::for_profile(Profile::Smoke);
        let p = load_problem(Data::MsdLike, App::Ridge, &s, 1).unwrap();
        for d in [&p.fit, &p.valid, &p.test] {
            for i in 0..d.n_samples() {
                let n: f64 = d.x().row(i).iter().map(|v| v * v).sum::<f64>().sqrt();
                assert!((n - 1.0).abs() < 1e-12, "row {i}: {n}");
            }
        }
        let m = p.fit.y().iter().sum::<f64>() / p.fit.n_samples() as f64;
        assert!(m.abs() < 1e-9);
        let p = load_problem(Data::Adult, App::Svm, &s, 1).unwrap();
        assert_eq!(
            p.fit.n_samples() + p.valid.n_samples() + p.test.n_samples(),
            32_561
        );
    }

    #[test]
    fn stand_in_has_the_intended_difficulty() {
        // Mean predictor ~119 (label variance 5.4^2 + 9.5^2 = 119.4).
        let d = msd_like(20_000, 3).unwrap();
        let y = d.y();
        let m = y.iter().sum::<f64>() / y.len() as f64;
        let var = y.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / y.len() as f64;
        assert!((var - 119.4).abs() < 6.0, "{var}");
    }
}
