//! The problem-definition sweep: which lambda, label convention and coordinate order make
//! our California and Electricity problems the DP-CD paper's (Table 2 of Mangold et al.,
//! ICML 2022)?
//!
//! For every candidate definition (lambda, and for California whether the labels are centred)
//! of a data set, the raw and the standardised problem are tuned exactly as the experiment
//! tunes them (same runner, same quick grids, the paper's accounting) for DP-CD with uniform
//! coordinate sampling (Algorithm 1 as printed), DP-CD with cyclic sweeps and DP-SGD, at every
//! pass count of Table 2. Each candidate (definition, order) is scored against **every**
//! Table 2 cell of its data set: the DP-CD row of its order and the DP-SGD row, raw and
//! standardised (20 cells), plus the plateau each DP-SGD row implies (DP-SGD's step grid
//! reaches values at which it stays at `w = 0`, so its tuned error can not exceed
//! `(F(0) - F*)/F*`; a plateau below the paper's DP-SGD mean minus its "±" contradicts
//! Table 2). Candidates are ranked by: consistency with every plateau, then the number of
//! the 20 cells within 2x of the paper, then the median `|ln(ours / paper)|`, then the
//! worst case (which also counts a plateau below a DP-SGD mean as `ln(paper / plateau)`).
//! The worst case alone is not the criterion: with one tuning run per grid point it is
//! decided by the noise of single tuned cells (see `docs/reproduction-log.md`).
//!
//! The loss scaling needs no run of its own (see [`super::Definition`]): with the 1/2 at
//! lambda is without it at 2 lambda, so the lambda grid covers both.
//!
//! Run it with `cargo xtask study definition-sweep` ([`crate::studies`]).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{
    load_problem_with, paper_table2, solvers, Accounting, Algorithm, Definition, Model, Problem,
    ProblemName, Settings, PASSES,
};
use crate::experiments::Profile;
use crate::report::markdown_table;
use crate::runner::{run_tasks, Grid, ProgressMode, Protocol, Task, TaskId};

/// A data set of the sweep (its raw and standardised problems share one definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DataSet {
    /// California housing, LASSO.
    California,
    /// Electricity, logistic + l2.
    Electricity,
}

impl DataSet {
    /// Name in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            DataSet::California => "california",
            DataSet::Electricity => "electricity",
        }
    }

    /// (raw, standardised).
    pub fn problems(self) -> [ProblemName; 2] {
        match self {
            DataSet::California => [ProblemName::CaliforniaRaw, ProblemName::CaliforniaStd],
            DataSet::Electricity => [ProblemName::ElectricityRaw, ProblemName::ElectricityStd],
        }
    }
}

/// What the sweep runs.
#[derive(Debug, Clone)]
pub struct SweepSettings {
    /// Candidate definitions per data set.
    pub candidates: Vec<(DataSet, Definition)>,
    /// Grids and run counts (the experiment's quick profile by default).
    pub grids: Settings,
    /// Base seed.
    pub seed: u64,
}

impl SweepSettings {
    /// The sweep of `docs/reproduction-log.md`, most informative candidates first: California
    /// lambda in {1, 0.1, 0.5, 2} with raw labels and 1 with centred labels, Electricity lambda
    /// in {1e-5, 1e-3, 1e-4}, then California 0.2 and centred 0.1, 0.5 and 2; the quick grids, 1 tuning
    /// run per grid point and 3 fresh runs at the tuned point.
    pub fn standard(seed: u64) -> Self {
        let cal = |lambda, centre_labels| {
            (
                DataSet::California,
                Definition {
                    model: Model::Lasso { lambda },
                    centre_labels,
                },
            )
        };
        let elec = |lambda| {
            (
                DataSet::Electricity,
                Definition {
                    model: Model::LogisticL2 { lambda },
                    centre_labels: false,
                },
            )
        };
        let candidates = vec![
            cal(1.0, false),
            cal(0.1, false),
            cal(0.5, false),
            cal(2.0, false),
            cal(1.0, true),
            elec(1e-5),
            elec(1e-3),
            elec(1e-4),
            cal(0.2, false),
            cal(0.1, true),
            cal(0.5, true),
            cal(2.0, true),
        ];
        let mut grids = Settings::for_profile(Profile::Quick);
        grids.tuning_runs = 1;
        grids.final_runs = 3;
        Self {
            candidates,
            grids,
            seed,
        }
    }
}

/// One measured row: a problem under a definition, one algorithm, every pass count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepRow {
    /// Data set.
    pub dataset: DataSet,
    /// Problem (raw or standardised).
    pub problem: String,
    /// Definition.
    pub definition: Definition,
    /// `dp-cd`, `dp-cd-cyclic` or `dp-sgd`.
    pub algorithm: String,
    /// `(F(0) - F*)/F*` of the problem under this definition.
    pub plateau: f64,
    /// Mean relative error of the fresh runs at the tuned point, per pass count of
    /// [`PASSES`] (`None`: diverged or failed).
    pub errors: Vec<Option<f64>>,
}

/// A scored candidate.
#[derive(Debug, Clone, Serialize)]
pub struct Score {
    /// Data set.
    pub dataset: DataSet,
    /// Definition.
    pub definition: Definition,
    /// `uniform` or `cyclic`.
    pub order: &'static str,
    /// Worst-case `|ln(ours / paper)|` over every Table 2 cell and plateau check.
    pub worst: f64,
    /// Where the worst case is.
    pub worst_cell: String,
    /// Median `|ln(ours / paper)|` over the Table 2 cells.
    pub median: f64,
    /// Cells within 2x of the paper, and cells scored.
    pub within_2x: (usize, usize),
    /// Whether both plateaus are at least every DP-SGD mean of the paper minus its "±"
    /// (otherwise the definition contradicts Table 2: DP-SGD could not score above it).
    pub plateau_consistent: bool,
}

/// The sweep's result.
#[derive(Debug, Clone, Serialize)]
pub struct SweepResult {
    /// Every measured row.
    pub rows: Vec<SweepRow>,
    /// Every candidate's score, best first per data set.
    pub scores: Vec<Score>,
}

fn algorithms() -> [(Algorithm, &'static str); 3] {
    [
        (Algorithm::DpCd, "dp-cd"),
        (Algorithm::DpCdCyclic, "dp-cd-cyclic"),
        (Algorithm::DpSgd, "dp-sgd"),
    ]
}

fn measure(
    p: &Problem,
    dataset: DataSet,
    definition: Definition,
    s: &SweepSettings,
) -> Result<Vec<SweepRow>> {
    let protocol = Protocol {
        tuning_runs: s.grids.tuning_runs,
        final_runs: s.grids.final_runs,
        seed: s.seed,
    };
    let mut tasks = Vec::new();
    for (alg, _) in algorithms() {
        let (steps, clips) = match alg {
            Algorithm::DpSgd => (s.grids.sgd_steps.clone(), s.grids.sgd_clips.clone()),
            _ => (s.grids.cd_steps.clone(), s.grids.cd_clips.clone()),
        };
        tasks.push(Task {
            id: TaskId::new(p.name.as_str(), alg.as_str(), Accounting::Paper.as_str()),
            grid: Grid {
                steps,
                clips,
                budgets: s.grids.passes.clone(),
            },
            fit: solvers::fit_fn(p, &p.constants, alg, Accounting::Paper)?,
            objective: Box::new(move |w: &[f64]| p.objective(w)),
            objective_star: p.objective_star,
        });
    }
    let blocks = run_tasks(&tasks, &protocol, ProgressMode::Silent, |_| Ok(()))?;
    let mut rows = Vec::new();
    for (alg, name) in algorithms() {
        let errors = PASSES
            .iter()
            .map(|&passes| {
                blocks
                    .iter()
                    .find(|b| b.id.algorithm == alg.as_str() && b.budget == passes)
                    .map(|b| b.final_stats.mean)
                    .filter(|e| e.is_finite())
            })
            .collect();
        rows.push(SweepRow {
            dataset,
            problem: p.name.as_str().into(),
            definition,
            algorithm: name.into(),
            plateau: p.plateau,
            errors,
        });
    }
    Ok(rows)
}

/// Runs the sweep, one (candidate, problem) after another in the order of
/// `s.candidates` (the runs inside each are parallel), calling `on_rows` after each so that
/// a caller can save partial results; then scores every candidate measured.
pub fn run(
    s: &SweepSettings,
    mut on_rows: impl FnMut(&[SweepRow]) -> Result<()>,
) -> Result<SweepResult> {
    let mut rows = Vec::new();
    for &(d, def) in &s.candidates {
        for name in d.problems() {
            let p = load_problem_with(name, def)?;
            let new = measure(&p, d, def, s)?;
            eprintln!(
                "sweep: {} {} done (plateau {:.4})",
                name.as_str(),
                describe(&def),
                p.plateau
            );
            on_rows(&new)?;
            rows.extend(new);
        }
    }
    Ok(result_of(&s.candidates, rows))
}

/// Scores `rows` (the candidates without rows for both problems are left out).
pub fn result_of(candidates: &[(DataSet, Definition)], rows: Vec<SweepRow>) -> SweepResult {
    let scores = score_all(candidates, &rows);
    SweepResult { rows, scores }
}

/// `lambda = .., labels centred` in words.
pub fn describe(d: &Definition) -> String {
    let lambda = match d.model {
        Model::Lasso { lambda } | Model::LogisticL2 { lambda } => lambda,
    };
    format!(
        "lambda = {lambda}{}",
        if d.centre_labels {
            ", centred labels"
        } else {
            ""
        }
    )
}

/// Scores one candidate (definition, order) from the rows of its two problems; `None` when
/// a row is missing.
pub fn score(
    dataset: DataSet,
    definition: Definition,
    order: &'static str,
    rows: &[SweepRow],
) -> Option<Score> {
    let cd_alg = if order == "cyclic" {
        "dp-cd-cyclic"
    } else {
        "dp-cd"
    };
    let mut logs: Vec<(f64, String)> = Vec::new();
    let mut plateau_logs: Vec<(f64, String)> = Vec::new();
    let mut plateau_consistent = true;
    for name in dataset.problems() {
        for (alg, paper_alg) in [(cd_alg, Algorithm::DpCd), ("dp-sgd", Algorithm::DpSgd)] {
            let row = rows.iter().find(|r| {
                r.problem == name.as_str() && r.definition == definition && r.algorithm == alg
            })?;
            let paper = paper_table2(name, paper_alg)?;
            for (i, &(pm, _)) in paper.iter().enumerate() {
                let l = match row.errors.get(i).copied().flatten() {
                    Some(ours) if ours > 0.0 => (ours / pm).ln().abs(),
                    _ => f64::INFINITY,
                };
                logs.push((l, format!("{} {} {} passes", name.as_str(), alg, PASSES[i])));
            }
            if paper_alg == Algorithm::DpSgd {
                plateau_consistent &= paper.iter().all(|&(m, pm)| row.plateau >= m - pm);
                let worst_paper = paper.iter().map(|c| c.0).fold(0.0, f64::max);
                let l = if row.plateau > 0.0 {
                    (worst_paper / row.plateau).ln().max(0.0)
                } else {
                    f64::INFINITY
                };
                plateau_logs.push((l, format!("{} plateau", name.as_str())));
            }
        }
    }
    let within = logs.iter().filter(|(l, _)| *l <= 2f64.ln()).count();
    let mut sorted: Vec<f64> = logs.iter().map(|(l, _)| *l).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let cells = logs.len();
    let (worst, worst_cell) = logs
        .into_iter()
        .chain(plateau_logs)
        .fold((0.0, String::new()), |a, b| if b.0 > a.0 { b } else { a });
    Some(Score {
        dataset,
        definition,
        order,
        worst,
        worst_cell,
        median,
        within_2x: (within, cells),
        plateau_consistent,
    })
}

fn score_all(candidates: &[(DataSet, Definition)], rows: &[SweepRow]) -> Vec<Score> {
    let mut scores: Vec<Score> = candidates
        .iter()
        .flat_map(|&(d, def)| {
            ["uniform", "cyclic"]
                .into_iter()
                .filter_map(move |o| score(d, def, o, rows))
        })
        .collect();
    scores.sort_by(|a, b| {
        (a.dataset as u8)
            .cmp(&(b.dataset as u8))
            .then(b.plateau_consistent.cmp(&a.plateau_consistent))
            .then(b.within_2x.0.cmp(&a.within_2x.0))
            .then(a.median.total_cmp(&b.median))
            .then(a.worst.total_cmp(&b.worst))
    });
    scores
}

fn cell(x: Option<f64>) -> String {
    match x {
        Some(v) if v.abs() >= 1e-3 => format!("{v:.4}"),
        Some(v) => format!("{v:.2e}"),
        None => "diverged".into(),
    }
}

/// The sweep as markdown: the scores (best first) and every measured row beside the paper.
pub fn render(result: &SweepResult, s: &SweepSettings) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Grids: the experiment's quick grids ({} DP-CD steps x {} clips, {} DP-SGD steps x {} clips), \
         {} tuning runs per grid point, {} fresh runs at the tuned point (their mean is shown), \
         the paper's accounting, seed {}.\n\n",
        s.grids.cd_steps.len(),
        s.grids.cd_clips.len(),
        s.grids.sgd_steps.len(),
        s.grids.sgd_clips.len(),
        s.grids.tuning_runs,
        s.grids.final_runs,
        s.seed
    ));
    out.push_str(
        "**Scores**, best first per data set: plateau-consistent candidates first, then most of the \
         20 cells (the DP-CD row of the order and the DP-SGD row, raw and standardised, every pass \
         count) within 2x of the paper, then the smallest median |ln(ours / paper)|. Worst = max \
         |ln(ours / paper)| over the cells and the plateau checks; ln 2 = 0.69 is \"within 2x\".\n\n",
    );
    let rows: Vec<Vec<String>> = result
        .scores
        .iter()
        .map(|sc| {
            vec![
                sc.dataset.as_str().into(),
                describe(&sc.definition),
                sc.order.into(),
                format!("{:.2} (x{:.1})", sc.worst, sc.worst.exp()),
                sc.worst_cell.clone(),
                format!("{:.2}", sc.median),
                format!("{} of {}", sc.within_2x.0, sc.within_2x.1),
                if sc.plateau_consistent { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &[
            "data set",
            "definition",
            "order",
            "worst |ln ratio|",
            "worst cell",
            "median",
            "cells within 2x",
            "plateaus consistent",
        ],
        &rows,
    ));
    out.push_str("\n**Measured rows** (mean relative error of the fresh runs; the paper's Table 2 row below each problem).\n\n");
    let mut header = vec!["problem", "definition", "plateau", "algorithm"];
    let pass_labels: Vec<String> = PASSES.iter().map(|p| format!("{p} passes")).collect();
    header.extend(pass_labels.iter().map(|s| s.as_str()));
    let mut table: Vec<Vec<String>> = Vec::new();
    for d in [DataSet::California, DataSet::Electricity] {
        for name in d.problems() {
            for alg in [Algorithm::DpCd, Algorithm::DpSgd] {
                if let Some(paper) = paper_table2(name, alg) {
                    let mut r = vec![
                        name.as_str().into(),
                        "**paper**".into(),
                        "".into(),
                        alg.as_str().into(),
                    ];
                    r.extend(paper.iter().map(|c| format!("{:.4}", c.0)));
                    table.push(r);
                }
            }
            for row in result.rows.iter().filter(|r| r.problem == name.as_str()) {
                let mut r = vec![
                    row.problem.clone(),
                    describe(&row.definition),
                    format!("{:.4}", row.plateau),
                    row.algorithm.clone(),
                ];
                r.extend(row.errors.iter().map(|e| cell(*e)));
                table.push(r);
            }
        }
    }
    out.push_str(&markdown_table(&header, &table));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(problem: ProblemName, alg: &'static str, def: Definition, errs: [f64; 5]) -> SweepRow {
        SweepRow {
            dataset: DataSet::California,
            problem: problem.as_str().into(),
            definition: def,
            algorithm: alg.into(),
            plateau: 1.0,
            errors: errs.iter().map(|&e| Some(e)).collect(),
        }
    }

    #[test]
    fn the_score_is_the_worst_log_ratio_over_every_cell() {
        let def = Definition {
            model: Model::Lasso { lambda: 1.0 },
            centre_labels: false,
        };
        let mut rows = Vec::new();
        for name in DataSet::California.problems() {
            let cd = paper_table2(name, Algorithm::DpCd).unwrap().map(|c| c.0);
            let sgd = paper_table2(name, Algorithm::DpSgd).unwrap().map(|c| c.0);
            rows.push(row(name, "dp-cd", def, cd));
            rows.push(row(name, "dp-sgd", def, sgd));
            // Cyclic: exactly the paper except one cell 3x too high.
            let mut c = cd;
            if name == ProblemName::CaliforniaStd {
                c[3] *= 3.0;
            }
            rows.push(row(name, "dp-cd-cyclic", def, c));
        }
        let u = score(DataSet::California, def, "uniform", &rows).unwrap();
        assert!(u.worst < 1e-12, "{u:?}");
        assert!(u.plateau_consistent);
        assert_eq!(u.within_2x, (20, 20));
        let c = score(DataSet::California, def, "cyclic", &rows).unwrap();
        assert!((c.worst - 3f64.ln()).abs() < 1e-12, "{c:?}");
        assert_eq!(c.worst_cell, "california-std dp-cd-cyclic 20 passes");
        assert_eq!(c.within_2x, (19, 20));
        // A plateau below the paper's DP-SGD errors is scored.
        for r in rows.iter_mut().filter(|r| r.problem == "california-raw") {
            r.plateau = 0.1399; // paper DP-SGD raw reaches 0.2799
        }
        let u = score(DataSet::California, def, "uniform", &rows).unwrap();
        assert!((u.worst - (0.2799f64 / 0.1399).ln()).abs() < 1e-12, "{u:?}");
        assert_eq!(u.worst_cell, "california-raw plateau");
        assert!(!u.plateau_consistent);
        // A diverged cell is infinitely far.
        rows[0].errors[2] = None;
        let u = score(DataSet::California, def, "uniform", &rows).unwrap();
        assert!(u.worst.is_infinite());
    }
}
