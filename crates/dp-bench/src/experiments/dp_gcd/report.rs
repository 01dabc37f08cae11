//! DP-GCD's figures (error against budget, histograms of |w*|) and report: the tables
//! beside the paper's and the reading generated from the targets ([`verdicts`]).

use super::*;
use crate::report::sci_or_dash;

pub(super) fn label_of(r: &Record) -> String {
    match &r.rule {
        Some(rule) if rule != "gs-l" && rule != "gs-r" => format!("{} ({rule})", r.algorithm),
        _ => r.algorithm.clone(),
    }
}

/// One hue per algorithm (the qualitative palette), the same in every figure.
pub(super) fn algorithm_color(alg: &str) -> (u8, u8, u8) {
    match alg {
        "dp-gcd" => PALETTE[0],
        "dp-gcd-zcdp" => PALETTE[1],
        "dp-gcd-zcdp-support" => PALETTE[4],
        "dp-cd" => PALETTE[2],
        "dp-sgd" => PALETTE[3],
        _ => PALETTE[7],
    }
}

pub(super) fn write_error_figures(dir: &Path, records: &[Record]) -> Result<()> {
    for name in ProblemName::ALL {
        let recs: Vec<&Record> = records
            .iter()
            .filter(|r| r.problem == name.as_str())
            .collect();
        let Some(&first) = recs.first() else {
            continue;
        };
        // Per algorithm and budget, the extra hyperparameters (the zCDP selection share,
        // the support test's fraction) at their tuned value: the lowest tuning mean.
        let shown: Vec<&Record> = recs
            .iter()
            .copied()
            .filter(|r| {
                !recs.iter().any(|o| {
                    label_of(o) == label_of(r)
                        && o.passes == r.passes
                        && o.tuning_rel_error_mean.unwrap_or(f64::INFINITY)
                            < r.tuning_rel_error_mean.unwrap_or(f64::INFINITY)
                })
            })
            .collect();
        let mut series: Vec<Series> = Vec::new();
        for r in &shown {
            let label = label_of(r);
            if series
                .iter()
                .any(|s| s.label == label && s.points.iter().any(|p| p.x == r.passes))
            {
                continue; // a tie on the tuning mean: keep the first
            }
            let point = BandPoint {
                x: r.passes,
                mean: r.rel_error_mean,
                min: r.rel_error_min,
                max: r.rel_error_max,
            };
            match series.iter_mut().find(|s| s.label == label) {
                Some(s) => s.points.push(point),
                None => series.push(Series {
                    color: Some(algorithm_color(&r.algorithm)),
                    label,
                    points: vec![point],
                }),
            }
        }
        // The paper gives numbers for the L1 problems only (Table 3), at a tuned budget it
        // does not state: dashed lines rather than points.
        let refs: Vec<RefLine> = name
            .paper_table3()
            .map(|(_, cells)| {
                ["dp-cd", "dp-sgd", "dp-gcd"]
                    .iter()
                    .zip(cells)
                    .zip(PAPER_COLORS)
                    .map(|((alg, (_, _, gap)), color)| RefLine {
                        label: format!("paper {alg} (Table 3)"),
                        y: gap,
                        color,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let (eps, delta) = (first.epsilon, first.delta);
        let fig = ErrorFigure {
            title: format!(
                "{} (Fig. {}){}, ε = {eps}, δ = 1/n² = {delta:.1e}",
                name.as_str(),
                name.panel(),
                if name.stand_in() { " [stand-in]" } else { "" }
            ),
            x_label: "passes over the data (1 DP-GCD iteration = 1 pass)".into(),
            y_label: "(F(w) - F*) / F*  (min / mean / max)".into(),
            log_x: true,
            series,
        };
        // The headline: DP-GCD as the paper calibrates it (ours by default), our best other
        // DP-GCD variant, the strongest baseline (DP-CD or DP-SGD), the paper's DP-GCD and
        // the paper's strongest baseline; the other rows in fig1-<problem>-more.svg.
        let ours_variant = |l: &str| l.starts_with("dp-gcd") && l != "dp-gcd";
        let baseline = |l: &str| l.starts_with("dp-cd") || l.starts_with("dp-sgd");
        let paper_baseline = |l: &str| l.starts_with("paper") && !l.contains("dp-gcd");
        save_headline(
            &fig,
            &refs,
            &[
                Pick::Label("dp-gcd"),
                Pick::Lowest(&ours_variant),
                Pick::Lowest(&baseline),
                Pick::Label("paper dp-gcd (Table 3)"),
                Pick::Lowest(&paper_baseline),
            ],
            &[],
            &dir.join(format!("fig1-{}.svg", name.as_str())),
        )?;
    }
    Ok(())
}

pub(super) fn write_histograms(dir: &Path, infos: &[ProblemInfo]) -> Result<()> {
    if infos.is_empty() {
        return Ok(());
    }
    let mut svg = String::new();
    {
        let cols = 4usize;
        let rows = infos.len().div_ceil(cols);
        let root = SVGBackend::with_string(&mut svg, (1400, 320 * rows as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
        let areas = root.split_evenly((rows, cols));
        for (info, area) in infos.iter().zip(areas.iter()) {
            let max = info
                .abs_w_star
                .iter()
                .copied()
                .fold(0.0f64, f64::max)
                .max(1e-300);
            let bins = 20usize;
            let mut counts = vec![0u64; bins];
            for &v in &info.abs_w_star {
                let k = ((v / max) * bins as f64).floor() as usize;
                counts[k.min(bins - 1)] += 1;
            }
            let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!(
                        "{} {}{}",
                        info.panel,
                        info.name,
                        if info.stand_in { " [stand-in]" } else { "" }
                    ),
                    ("sans-serif", 16),
                )
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(45)
                .build_cartesian_2d(0.0..max * 1.02, (0.5..top * 2.0).log_scale())
                .map_err(|e| anyhow!("{e:?}"))?;
            chart
                .configure_mesh()
                .light_line_style(WHITE)
                .x_labels(4)
                .y_labels(4)
                .x_desc("|w*_j|")
                .y_desc("count")
                .x_label_formatter(&|v| format_tick(*v))
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()
                .map_err(|e| anyhow!("{e:?}"))?;
            let width = max / bins as f64;
            chart
                .draw_series(
                    counts
                        .iter()
                        .enumerate()
                        .filter(|(_, &c)| c > 0)
                        .map(|(k, &c)| {
                            Rectangle::new(
                                [(k as f64 * width, 0.5), ((k + 1) as f64 * width, c as f64)],
                                RGBColor(PALETTE[0].0, PALETTE[0].1, PALETTE[0].2).filled(),
                            )
                        }),
                )
                .map_err(|e| anyhow!("{e:?}"))?;
            // alpha of (alpha, 5)-quasi-sparsity: the 6th largest |w*_j|.
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(info.alpha5, 0.5), (info.alpha5, top * 2.0)],
                    RGBColor(PALETTE[3].0, PALETTE[3].1, PALETTE[3].2).stroke_width(2),
                )))
                .map_err(|e| anyhow!("{e:?}"))?;
        }
        root.present().map_err(|e| anyhow!("{e:?}"))?;
    }
    write_atomic(&dir.join("fig2-histograms.svg"), svg.as_bytes())
}

/// The tuned budget of a record: passes, and the tuned zCDP options when present.
pub(super) fn budget_cell(r: &Record) -> String {
    let mut c = format!("{} passes", r.passes);
    if let Some(v) = r.selection_share {
        let _ = write!(c, ", selection share {v}");
    }
    if let Some(v) = r.support_test {
        let _ = write!(c, ", support test {v} of rho");
    }
    c
}

/// The fresh runs' mean relative error, or the divergence flag.
pub(super) fn mean_cell(r: &Record) -> String {
    or_diverged(opt(r.rel_error_mean), r.diverged_runs, r.runs)
}

pub(super) fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), err4)
}

/// A mean count of non-zeros to one decimal, `-` when absent.
fn count1(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"))
}

pub(super) fn tuned<'r>(
    records: &'r [Record],
    problem: &str,
    alg: &str,
    rule: Option<&str>,
) -> Option<&'r Record> {
    records.iter().find(|r| {
        r.tuned_budget
            && r.problem == problem
            && r.algorithm == alg
            && match rule {
                Some(x) => r.rule.as_deref() == Some(x),
                None => {
                    r.rule.is_none()
                        || r.rule.as_deref() == Some("gs-l")
                        || r.rule.as_deref() == Some("gs-r")
                }
            }
    })
}

pub(super) fn render_report(
    config: &ExperimentConfig,
    settings: &Settings,
    infos: &[ProblemInfo],
    records: &[Record],
    usage: &Usage,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# DP-GCD reproduction report\n");
    let _ = writeln!(
        s,
        "Paper: Mangold, Bellet, Salmon & Tommasi, \"High-Dimensional Private Empirical Risk Minimization by Greedy \
         Coordinate Descent\", AISTATS 2023. Generated by `cargo xtask reproduce dp-gcd --profile {}` (seed {}). \
         Wall time {:.1} s, CPU time {} s (user + system), on {}; 1-minute load average {} at the start and {} at the \
         end. Privacy: epsilon = {EPSILON}, delta = 1/n^2 for every problem and algorithm (as in the paper, Sec. 5).\n",
        config.profile.name(),
        config.seed,
        usage.wall,
        usage.cpu.map_or("-".into(), |c| format!("{c:.1}")),
        machine_description(),
        usage.load.0.map_or("-".into(), |l| format!("{l:.1}")),
        usage.load.1.map_or("-".into(), |l| format!("{l:.1}")),
    );
    let _ = writeln!(
        s,
        "Grid: DP-GCD T in {:?}; DP-GCD / DP-CD step scales {} values in [{}, {}]; DP-SGD steps {} in [{}, {}]; \
         clipping thresholds {} in [{}, {}]; DP-CD passes {:?} (dorothea-like: {:?}); DP-SGD passes {:?} and {} clipping thresholds (dorothea-like: passes {:?}, \
         steps {:?}, clips {:?}: its dense Gaussian noise costs n p = 70 million draws per pass); \
         rules on L1 problems {:?}. DP-CD and DP-SGD also run the paper's fractional passes {:?} (a fraction f of a pass \
         is ceil(f p) coordinate updates of DP-CD, ceil(f n) steps of DP-SGD). The zCDP variant tunes the selection's \
         share of each iteration's rho over {:?}; `dp-gcd-zcdp-support` (L1 problems) also tunes its support test's \
         fraction of rho over {:?} (selection shares {:?}). {} tuning runs per grid point, then {} fresh runs at the tuned (budget, step, clip): \
         budget, step and clip are tuned jointly on the tuning runs' mean error, as the paper does. \
         Stand-ins (synthetic data of the same shape for datasets no package ships) are marked **[stand-in]**.\n",
        settings.gcd_iterations,
        settings.cd_steps.len(),
        sci(settings.cd_steps[0]),
        sci_or_dash(settings.cd_steps.last().copied()),
        settings.sgd_steps.len(),
        sci(settings.sgd_steps[0]),
        sci_or_dash(settings.sgd_steps.last().copied()),
        settings.clips.len(),
        sci(settings.clips[0]),
        sci_or_dash(settings.clips.last().copied()),
        settings.passes,
        settings.cd_passes_dorothea,
        settings.sgd_passes,
        settings.sgd_clips.len(),
        settings.sgd_passes_dorothea,
        settings.sgd_steps_dorothea,
        settings.sgd_clips_dorothea,
        settings.rules.iter().map(|r| r.name()).collect::<Vec<_>>(),
        settings
            .fractional_milli_passes
            .iter()
            .map(|m| *m as f64 / MILLI_PASSES as f64)
            .collect::<Vec<_>>(),
        settings.zcdp_selection_shares,
        settings.support_test_fractions,
        settings.support_selection_shares,
        settings.tuning_runs,
        settings.final_runs
    );

    let _ = writeln!(s, "## Problems\n");
    let rows: Vec<Vec<String>> = infos
        .iter()
        .map(|i| {
            vec![
                format!(
                    "{} {}{}",
                    i.panel,
                    i.name,
                    if i.stand_in { " **[stand-in]**" } else { "" }
                ),
                i.model.clone(),
                format!("{} x {}", i.n, i.p),
                format!("{:.8e}", i.objective_star),
                format!("{:.0e} ({})", i.certificate.0, i.certificate.1),
                i.support_star.to_string(),
                err4(i.plateau),
                sci(i.alpha5),
                format!("{:.1}", i.setup_seconds),
            ]
        })
        .collect();
    s.push_str(&markdown_table(
        &[
            "problem",
            "objective",
            "n x p",
            "F*",
            "certificate",
            "‖w*‖₀",
            "(F(0)-F*)/F*",
            "alpha (5-quasi-sparse)",
            "setup s",
        ],
        &rows,
    ));
    let _ = writeln!(
        s,
        "\nPaper targets: ||w*||_0 = 7 (square), 3 (california), 72 (dorothea), 3 (madelon-L1); square plateau 0.75. \
         Figure 2 (`fig2-histograms.svg`): histograms of |w*_j| (log-scale counts), the red line at the 6th largest \
         |w*_j| (the alpha of (alpha, 5)-quasi-sparsity).\n"
    );

    // Table 3.
    let _ = writeln!(
        s,
        "## Table 3: support recovery and suboptimality (L1 problems)\n"
    );
    let _ = writeln!(
        s,
        "Cells: correct / incorrect non-zeros (mean over the fresh runs; a coordinate counts when it is exactly \
         non-zero, which the L1 prox makes meaningful for all three algorithms) and (F(w) - F*)/F* (mean), at the \
         jointly tuned budget. DP-GCD uses GS-r, as the paper's Figure 1.\n"
    );
    let mut rows = Vec::new();
    for name in [
        ProblemName::Square,
        ProblemName::California,
        ProblemName::DorotheaLike,
        ProblemName::MadelonL1,
    ] {
        let Some((paper_star, paper)) = name.paper_table3() else {
            continue;
        };
        let Some(info) = infos.iter().find(|i| i.name == name.as_str()) else {
            continue;
        };
        for (k, alg) in [
            "dp-cd",
            "dp-sgd",
            "dp-gcd",
            "dp-gcd-zcdp",
            "dp-gcd-zcdp-support",
        ]
        .iter()
        .enumerate()
        {
            let ours = tuned(
                records,
                name.as_str(),
                alg,
                if alg.starts_with("dp-gcd") {
                    Some("gs-r")
                } else {
                    None
                },
            );
            let paper_cell = paper
                .get(k)
                .map(|(c, i, g)| format!("{c:.0} / {i:.0} ({g})"))
                .unwrap_or_else(|| "- (not in paper)".into());
            rows.push(vec![
                format!(
                    "{}{}",
                    name.as_str(),
                    if name.stand_in() { " [stand-in]" } else { "" }
                ),
                format!("{} (paper {})", info.support_star, paper_star),
                alg.to_string(),
                ours.map_or("-".into(), |r| {
                    format!(
                        "{} / {} ({})",
                        count1(r.support_correct),
                        count1(r.support_incorrect),
                        mean_cell(r)
                    )
                }),
                paper_cell,
                ours.map_or("-".into(), budget_cell),
            ]);
        }
    }
    s.push_str(&markdown_table(
        &[
            "problem",
            "‖w*‖₀",
            "algorithm",
            "ours",
            "paper",
            "tuned budget",
        ],
        &rows,
    ));

    // All problems: best error per algorithm.
    let _ = writeln!(
        s,
        "\n## Figure 1: tuned relative error per problem and algorithm\n"
    );
    let _ = writeln!(
        s,
        "Mean [min, max] of (F(w) - F*)/F* over the fresh runs at the jointly tuned (budget, step, clip); \
         figures `fig1-<problem>.svg` show each budget tuned separately (error against passes): \
         DP-GCD as the paper calibrates it, our best other DP-GCD variant, the strongest \
         baseline and the paper's values; the other rows are in `fig1-<problem>-more.svg`.\n"
    );
    let algs = [
        "dp-gcd",
        "dp-gcd-zcdp",
        "dp-gcd-zcdp-support",
        "dp-cd",
        "dp-sgd",
    ];
    let mut rows = Vec::new();
    for info in infos {
        let mut row = vec![format!(
            "{} {}{}",
            info.panel,
            info.name,
            if info.stand_in { " [stand-in]" } else { "" }
        )];
        for alg in algs {
            let r = tuned(records, info.name, alg, None);
            row.push(r.map_or("-".into(), |r| {
                format!(
                    "{} [{}, {}] @{}",
                    mean_cell(r),
                    opt(r.rel_error_min),
                    opt(r.rel_error_max),
                    r.passes
                )
            }));
        }
        rows.push(row);
    }
    s.push_str(&markdown_table(
        &[
            "problem",
            "dp-gcd",
            "dp-gcd-zcdp",
            "dp-gcd-zcdp-support",
            "dp-cd",
            "dp-sgd",
        ],
        &rows,
    ));

    // Other rules.
    if settings.rules.len() > 1 {
        let _ = writeln!(
            s,
            "\n## Figure 3: proximal rules (DP-GCD, paper calibration)\n"
        );
        let mut rows = Vec::new();
        for info in infos.iter() {
            let mut row = vec![info.name.to_string()];
            let mut any = false;
            for rule in ["gs-r", "gs-s", "gs-q"] {
                let r = tuned(records, info.name, "dp-gcd", Some(rule));
                any |= r.is_some();
                row.push(r.map_or("-".into(), mean_cell));
            }
            if any {
                rows.push(row);
            }
        }
        s.push_str(&markdown_table(&["problem", "gs-r", "gs-s", "gs-q"], &rows));
    }

    // zCDP variant against the paper's calibration, every problem.
    let _ = writeln!(s, "\n## zCDP variant against the paper's Laplace / advanced-composition DP-GCD (same epsilon, delta)\n");
    let _ = writeln!(
        s,
        "Mean [min, max] over the fresh runs at each one's jointly tuned budget; for the zCDP variant the selection's \
         share of each iteration's rho is tuned with T, step and clip (shares {:?}).\n",
        settings.zcdp_selection_shares
    );
    let mut rows = Vec::new();
    for info in infos {
        let a = tuned(records, info.name, "dp-gcd", None);
        let b = tuned(records, info.name, "dp-gcd-zcdp", None);
        let cell = |r: Option<&Record>| {
            r.map_or("-".into(), |r| {
                format!(
                    "{} [{}, {}] @{}",
                    mean_cell(r),
                    opt(r.rel_error_min),
                    opt(r.rel_error_max),
                    r.passes
                )
            })
        };
        let (am, bm) = (
            a.and_then(|r| r.rel_error_mean),
            b.and_then(|r| r.rel_error_mean),
        );
        rows.push(vec![
            info.name.to_string(),
            cell(a),
            cell(b),
            b.and_then(|r| r.selection_share)
                .map_or("-".into(), |v| v.to_string()),
            match (am, bm) {
                (Some(a), Some(b)) => format!("{:.2}", b / a),
                _ => "-".into(),
            },
        ]);
    }
    s.push_str(&markdown_table(
        &[
            "problem",
            "dp-gcd (paper)",
            "dp-gcd-zcdp",
            "tuned selection share",
            "zCDP / paper",
        ],
        &rows,
    ));
    let _ = writeln!(
        s,
        "\nThe paper's DP-GCD calibration (report-noisy-max with noise inside the score, factor 1) is reproduced, not \
         endorsed: its selection is proven only with twice the noise (see the privacy notes of `dp_optim::dp_gcd`); the \
         zCDP variant's guarantee is proven. `dp-gcd-zcdp-support` is the zCDP variant followed by a private support \
         test that spends a tuned fraction ({:?}) of rho: every non-zero coordinate's clipped gradient is released once \
         more with Gaussian noise, and the coordinate is zeroed unless a coordinate-wise minimisation would keep it \
         non-zero (`DpGcdParams::support_test`). Timing: `seconds_per_run` in summary.json; the paper reports no \
         DP-GCD timing table (only Figure 4).",
        settings.support_test_fractions
    );
    s.push_str(&reading_section(
        &format!(
            "Targets of the DP-GCD paper (Sec. 5, Table 3), checked on this run ({} profile, {} fresh runs per cell).",
            config.profile.name(),
            settings.final_runs
        ),
        &verdicts(infos, records),
    ));
    s
}

/// When a tuned point's fresh runs are much worse than its tuning runs, the tuning picked
/// a lucky point (the winner's curse of tuning on few noisy runs): the measurement, else
/// an empty string.
pub(super) fn winners_curse(r: &Record) -> String {
    match (r.tuning_rel_error_mean, r.rel_error_mean) {
        (Some(t), Some(f)) if f > 2.0 * t => format!(
            "{} was tuned on a lucky draw: its tuning runs' mean is {}, its fresh runs' {} (span [{}, {}])",
            r.algorithm,
            err4(t),
            err4(f),
            opt(r.rel_error_min),
            opt(r.rel_error_max)
        ),
        _ => String::new(),
    }
}

/// The paper's targets (Sec. 5 and Table 3) and ours, judged on the run's records.
pub(super) fn verdicts(infos: &[ProblemInfo], records: &[Record]) -> Vec<Verdict> {
    let get = |p: &str, a: &str| tuned(records, p, a, None);
    let mean_of = |p: &str, a: &str| get(p, a).and_then(|r| r.rel_error_mean);
    let span = |r: &Record| format!("[{}, {}]", opt(r.rel_error_min), opt(r.rel_error_max));
    let overlap = |a: &Record, b: &Record| match (
        a.rel_error_min,
        a.rel_error_max,
        b.rel_error_min,
        b.rel_error_max,
    ) {
        (Some(a0), Some(a1), Some(b0), Some(b1)) => a0 <= b1 && b0 <= a1,
        _ => false,
    };
    let mut out = Vec::new();
    for p in ["square", "california", "madelon-like-l1"] {
        let (g, cd, sgd) = (
            mean_of(p, "dp-gcd"),
            mean_of(p, "dp-cd"),
            mean_of(p, "dp-sgd"),
        );
        let target = format!("{p}: DP-GCD's error below DP-CD's and DP-SGD's");
        out.push(match (g, cd, sgd) {
            (Some(g), Some(c), Some(d)) => {
                let best = c.min(d);
                let v = Verdict::new(
                    target,
                    Some(g < best),
                    format!(
                        "DP-GCD {} vs DP-CD {} and DP-SGD {} (DP-GCD / best other = {:.2})",
                        err4(g),
                        err4(c),
                        err4(d),
                        g / best
                    ),
                );
                match get(p, "dp-gcd") {
                    Some(r) if g >= best => v.because(winners_curse(r)),
                    _ => v,
                }
            }
            _ => Verdict::new(target, None, "a cell is missing or diverged"),
        });
    }
    for name in [
        ProblemName::Square,
        ProblemName::California,
        ProblemName::DorotheaLike,
        ProblemName::MadelonL1,
    ] {
        let p = name.as_str();
        let paper = name.paper_table3().map(|t| t.1[2]);
        let support = get(p, "dp-gcd-zcdp-support");
        for (alg, who) in [
            ("dp-gcd", "DP-GCD (the paper's calibration)"),
            (
                "dp-gcd-zcdp-support",
                "DP-GCD-zCDP with the private support test",
            ),
        ] {
            let target = format!("{p}: {who} identifies no coordinate outside supp(w*)");
            let Some(r) = get(p, alg) else {
                out.push(Verdict::new(target, None, "not run"));
                continue;
            };
            let by = format!(
                "{} correct / {} incorrect non-zeros (mean of {} runs; ||w*||_0 = {}){}",
                count1(r.support_correct),
                count1(r.support_incorrect),
                r.runs,
                r.support_star,
                paper.map_or(String::new(), |c| format!(
                    "; paper {:.0} / {:.0}",
                    c.0, c.1
                ))
            );
            let mut v = Verdict::new(target, r.support_incorrect.map(|i| i == 0.0), by);
            if r.support_incorrect.is_some_and(|i| i > 0.0) && alg == "dp-gcd" {
                v = v.because(format!(
                    "the noisy selection picked coordinates outside supp(w*) in some of the {} runs at T = {}{}",
                    r.runs,
                    r.passes,
                    support.map_or(String::new(), |s| format!(
                        "; the support test (fraction {} of rho) leaves {} incorrect and {} correct at error {}",
                        s.support_test.map_or("-".into(), |f| f.to_string()),
                        count1(s.support_incorrect),
                        count1(s.support_correct),
                        mean_cell(s)
                    ))
                ));
            }
            out.push(v);
        }
    }
    let target = "california: DP-GCD within a factor 2 of the paper's 0.00056";
    out.push(match mean_of("california", "dp-gcd") {
        Some(g) => {
            let met = (0.5..=2.0).contains(&(g / 0.00056));
            let v = Verdict::new(
                target,
                Some(met),
                format!("{} (ratio {:.2})", err4(g), g / 0.00056),
            );
            match get("california", "dp-gcd") {
                Some(r) if !met => v.because(winners_curse(r)),
                _ => v,
            }
        }
        None => Verdict::new(target, None, "missing or diverged"),
    });
    for p in ["square", "dorothea-like"] {
        let plateau = infos.iter().find(|i| i.name == p).map(|i| i.plateau);
        let target = format!("{p}: DP-GCD progresses below the w = 0 plateau");
        out.push(match (mean_of(p, "dp-gcd"), plateau) {
            (Some(g), Some(pl)) => Verdict::new(
                target,
                Some(g < pl),
                format!(
                    "DP-GCD {} vs plateau {} ({:.0} % of it); DP-CD {}, DP-SGD {}",
                    err4(g),
                    err4(pl),
                    100.0 * g / pl,
                    opt(mean_of(p, "dp-cd")),
                    opt(mean_of(p, "dp-sgd"))
                ),
            ),
            _ => Verdict::new(target, None, "missing or diverged"),
        });
    }
    for info in infos {
        let p = info.name;
        let target = format!("{p}: the zCDP variant at least as good as the paper's DP-GCD");
        let (Some(a), Some(b)) = (get(p, "dp-gcd"), get(p, "dp-gcd-zcdp")) else {
            out.push(Verdict::new(target, None, "not run"));
            continue;
        };
        let (Some(am), Some(bm)) = (a.rel_error_mean, b.rel_error_mean) else {
            out.push(Verdict::new(target, None, "a run diverged"));
            continue;
        };
        let mut v = Verdict::new(
            target,
            Some(bm <= am),
            format!(
                "{} vs {} (zCDP / paper = {:.2}; tuned selection share {}, T = {} vs {})",
                err4(bm),
                err4(am),
                bm / am,
                b.selection_share.map_or("-".into(), |v| v.to_string()),
                b.passes,
                a.passes
            ),
        );
        if bm > am {
            let mut why = Vec::new();
            if overlap(a, b) {
                why.push(format!(
                    "within the run-to-run spread: the fresh runs span {} (zCDP) and {} (paper)",
                    span(b),
                    span(a)
                ));
            }
            let curse = winners_curse(b);
            if !curse.is_empty() {
                why.push(curse);
            }
            if let (Some(bc), Some(ac)) = (b.support_correct, a.support_correct) {
                if bc <= 0.75 * ac {
                    why.push(format!(
                        "the zCDP selection finds fewer coordinates of supp(w*) ({bc:.1} against {ac:.1} correct non-zeros), \
                         consistent with its exponential mechanism adding noise to every score where the paper's \
                         (unproven) selection adds it inside the score, before the prox's soft threshold"
                    ));
                }
            }
            v = v.because(why.join("; "));
        }
        out.push(v);
    }
    out
}
