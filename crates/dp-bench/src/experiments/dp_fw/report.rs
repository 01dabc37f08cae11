//! The distributed Frank-Wolfe experiment's report: the panels' tables, the fitted slopes
//! beside the theory's, and the reading generated from the targets ([`fw_verdicts`]).

use super::*;

/// The verdicts, in words, from the numbers.
pub(super) fn findings(summary: &Summary) -> String {
    let rec = &summary.records;
    let find = |c: &str| summary.slopes.iter().find(|f| f.curve == c);
    let n_eps = |alg: &str| curve(rec, "n-eps", alg);
    let last = |alg: &str| {
        n_eps(alg)
            .into_iter()
            .max_by(|a, b| a.n_samples.cmp(&b.n_samples))
    };
    let mut o = String::from("## Findings\n\n");
    for (alg, name) in [
        ("dp-fw", "Talwar et al.'s private FW (zCDP)"),
        (
            "dp-fw-paper",
            "Talwar et al.'s private FW (the paper's Laplace + advanced composition)",
        ),
        ("dist-dp-fw", "Algorithm 2 (zCDP)"),
        (
            "dist-dp-fw-paper",
            "Algorithm 2 at the paper's nominal noise scales (the paper's claim not proven; their epsilon by our analysis in the table)",
        ),
    ] {
        let (Some(f), Some(l)) = (find(&format!("{alg} vs n*eps")), last(alg)) else {
            continue;
        };
        if let Some(line) = below_trivial(&n_eps(alg)) {
            o.push_str(&format!("- **{name}, against `F(0) - F*`**: {line}\n"));
        }
        let ratio = l.selection_noise_scale.map(|v| v / l.max_score_at_zero);
        // A quotient, so not finite when `F(0) - F*` is 0: then not measured either.
        let frac = l
            .excess_risk_mean
            .map(|e| e / l.excess_risk_at_zero)
            .filter(|f| f.is_finite());
        o.push_str(&format!(
            "- **{name}**: excess risk against n eps has log-log slope {} where the theory's \
             exponent is -2/3 ({} with its log factors over this grid): {}. At the largest \
             n ({}) its excess risk is {} of the trivial `F(0) - F*` and its selection noise \
             is {} times the largest score; {}\n",
            slope_cell(f.slope),
            slope_cell(f.theory_slope_with_logs),
            match f.slope {
                Some(b) if (b + 2.0 / 3.0).abs() <= 0.15 => "the shape holds".to_owned(),
                Some(b) => format!("flatter by {:.2}", b + 2.0 / 3.0),
                None => "not measured".to_owned(),
            },
            l.n_samples,
            frac.map_or("-".into(), |f| format!("{:.0} %", 100.0 * f)),
            slope_cell(ratio),
            match frac {
                Some(f) if f >= 0.8 => {
                    "it has barely learnt anything yet: the grid is in the pre-asymptotic regime \
                     where the noise decides the selection, and the error tends to the level of \
                     `w = 0` (the average of nearly random vertices) rather than following the \
                     rate."
                }
                Some(_) => {
                    "it is learning, but the noise still spoils a large share of the selections, \
                     so the curve is still bending towards its asymptotic slope."
                }
                None => {
                    "its share of `F(0) - F*` is not measured (a run failed, or `F(0) = F*`)."
                }
            }
        ));
    }
    if let (Some(j), Some(b)) = (find("jl-only vs n*eps"), find("alg2-exact vs n*eps")) {
        o.push_str(&format!(
            "- **Sketch, no noise** (the JL-only ablation): slope {} against n eps, where Algorithm 2's update \
             with the exact residual has {}. The sketch alone leaves an error floor that does \
             not fall with n (Section 2, sketch dimension: slope {} against m). Lou & \
             Cheung's Theorem 3 treats the sketch error as a gradient inexactness that must \
             shrink with the step size; with `m = O(iota^-2 log(T/delta))` it does not.\n",
            slope_cell(j.slope),
            slope_cell(b.slope),
            slope_cell(find("jl-only vs m").and_then(|f| f.slope)),
        ));
    }
    if let Some(f) = find("dist-dp-fw vs p") {
        o.push_str(&format!(
            "- **Sampling rate**: Algorithm 2's excess risk against p has slope {}; Theorem 3's \
             bound has `1/p^2` (slope -2): {}.\n",
            slope_cell(f.slope),
            match f.slope {
                Some(b) if b >= -2.15 => "milder than the bound, as an upper bound allows",
                Some(_) => "steeper than the bound",
                None => "not measured",
            }
        ));
    }
    if let Some(f) = find("dist-dp-fw vs K") {
        o.push_str(&format!(
            "- **Parties**: at fixed p, Algorithm 2's excess risk against K has slope {}: {}\n",
            slope_cell(f.slope),
            match f.slope {
                Some(b) if b > 0.0 =>
                    "it grows with K, as the theory's constants and the \
                                       composition over the K parties' releases both predict.",
                Some(_) =>
                    "it does not grow with K, although the theory's constants and the \
                            composition over the K parties' releases predict growth.",
                None => "not measured.",
            }
        ));
    }
    o.push_str(&format!(
        "- **Uplink**: `T m` floats and `T` indices per party, `K T m` floats in total, \
         exactly, in all {} sketched configurations.\n\n",
        summary.uplink_identity_checked
    ));
    o
}

/// Where a curve of the `n eps` sweep falls below the trivial excess `F(0) - F*`: the
/// smallest n measured there, or, when it never does, the n at which the least-squares
/// line of `log(excess / (F(0) - F*))` on `log n` crosses 0 (an extrapolation from the
/// measured slope).
pub(super) fn below_trivial(c: &[&Record]) -> Option<String> {
    let pts: Vec<(f64, f64)> = c
        .iter()
        .filter_map(|r| {
            let e = r.excess_risk_mean?;
            (e > 0.0 && r.excess_risk_at_zero > 0.0)
                .then(|| (r.n_samples as f64, e / r.excess_risk_at_zero))
        })
        .collect();
    if pts.is_empty() {
        return None;
    }
    let ratios = pts
        .iter()
        .map(|(n, r)| format!("{:.0} % at n = {n}", 100.0 * r))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some((n, r)) = pts
        .iter()
        .filter(|p| p.1 < 1.0)
        .min_by(|a, b| a.0.total_cmp(&b.0))
    {
        return Some(format!(
            "below it from n = {n} on ({:.0} % of it there; {ratios})",
            100.0 * r
        ));
    }
    let b = log_log_slope(&pts)?;
    let k = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0.ln()).sum::<f64>() / k,
        pts.iter().map(|p| p.1.ln()).sum::<f64>() / k,
    );
    Some(if b < 0.0 {
        format!(
            "never below it on this grid ({ratios}); the measured slope of excess / (F(0) - F*)              against n, {b:.2}, reaches 1 at n = {:.3e} (extrapolated)",
            (mx - my / b).exp()
        )
    } else {
        format!("never below it on this grid ({ratios}), and not decreasing (slope {b:.2})")
    })
}

pub(super) fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), sci)
}

pub(super) fn slope_cell(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

pub(super) fn render_report(
    config: &ExperimentConfig,
    summary: &Summary,
    setup_seconds: f64,
    usage: &Usage,
) -> String {
    let (cpu, load) = (usage.cpu, usage.load);
    let s = &summary.settings;
    let rec = &summary.records;
    let find = |c: &str| summary.slopes.iter().find(|f| f.curve == c);
    let mut o = String::new();
    o.push_str(
        "# Distributed private Frank-Wolfe (Lou & Cheung, AAAI 2018): validation of the \
         predicted shapes\n\n",
    );
    o.push_str(&format!(
        "Profile `{}`, seed {}, {} on {}; wall time {} s (data and reference optima {:.1} s), \
         CPU {} s, load average {} before / {} after. Command: `cargo xtask reproduce dp-fw \
         --profile {}`.\n\n",
        config.profile.name(),
        config.seed,
        summary.meta.date,
        machine_description(),
        summary
            .meta
            .wall_seconds
            .map_or("?".into(), |w| format!("{w:.1}")),
        setup_seconds,
        cpu.map_or("?".into(), |c| format!("{c:.1}")),
        load.0.map_or("?".into(), |l| format!("{l:.2}")),
        load.1.map_or("?".into(), |l| format!("{l:.2}")),
        config.profile.name()
    ));
    o.push_str(
        "The paper proves rates and reports no experiments, so there are no paper numbers to \
         match: this report checks the **shapes** its theorems predict. Problem: \
         `F(w) = (1/(2n)) ||A w - y||^2` over an l1 ball of radius eta = 1 (Lou & Cheung's \
         Eq. 12). Synthetic data: `A_rj` uniform on {-1, +1}, a 10-sparse truth with \
         `||x*||_1 = 1`, `y = clip(A x* + N(0, 0.1^2), -1, 1)`, so the public bounds \
         `|A_rj| <= 1` and `|y_r| <= 1` that the privacy proofs need hold by construction. \
         Every run uses `T = ceil((n eps)^{2/3})` iterations, `delta = 1/n^2` and the \
         sketch dimension `m = ceil(c iota^-2 ln(2T/delta))` with ",
    );
    o.push_str(&format!(
        "c = {}, iota = {} (capped at {} n). Excess risk is `F(w) - F*` against a certified \
         optimum over the **same** feasible set (duality gap <= {:e}): the l1 ball for FW and \
         Talwar et al.'s private FW, the product of the K parties' l1 balls of radius 1 for \
         Algorithm 2's exact update, the JL-only ablation and Algorithm 2 (the paper's server update moves every \
         party's block inside its own ball). Each point is the mean over {} seeds; figures \
         show the min-max band. Algorithm 2 and Talwar's FW are calibrated in zCDP to the \
         stated (eps, delta), with every party's releases composed (one person's row touches \
         all K parties).\n\n",
        s.c_jl, s.iota, s.m_max_fraction, s.ref_tol, s.runs
    ));

    o.push_str(&findings(summary));
    o.push_str("## 1. Excess risk against n * eps\n\n");
    o.push_str(&format!(
        "Grid: d = {}, n in {:?}, eps = {}, K = {} parties, tau = {} of each party's {} \
         features per round. Figure: `fig-excess-vs-neps.svg` (Algorithm 2 proven and at the \
         paper's noise, the stronger private FW, FW and Algorithm 2's exact update; the other \
         rows in `fig-excess-vs-neps-more.svg`).\n\n",
        s.d,
        s.n_grid,
        s.epsilon,
        s.parties,
        tau_of(s.tau_fraction, s.d, s.parties),
        block_size(s.d, s.parties)
    ));
    let mut all_n: Vec<usize> = s.n_grid.iter().chain(&s.n_grid_central).copied().collect();
    all_n.sort_unstable();
    all_n.dedup();
    let mut rows = Vec::new();
    let ratio = |r: Option<&Record>| {
        r.and_then(|r| Some(r.selection_noise_scale? / r.max_score_at_zero))
            .map_or("-".into(), |v| format!("{v:.2}"))
    };
    for &n in &all_n {
        let name = format!("synthetic-n{n}");
        let get = |alg: &str| {
            rec.iter()
                .find(|r| r.panel == "n-eps" && r.problem == name && r.algorithm == alg)
        };
        let Some(any) = get("dp-fw") else {
            continue;
        };
        rows.push(vec![
            n.to_string(),
            format!("{}", any.n_eps),
            any.iterations.to_string(),
            get("dist-dp-fw")
                .and_then(|r| r.sketch_dim)
                .map_or("-".into(), |m| m.to_string()),
            sci(any.excess_risk_at_zero),
            opt(get("fw").and_then(|r| r.excess_risk_mean)),
            opt(get("alg2-exact").and_then(|r| r.excess_risk_mean)),
            opt(get("dp-fw").and_then(|r| r.excess_risk_mean)),
            opt(get("dp-fw-paper").and_then(|r| r.excess_risk_mean)),
            opt(get("jl-only").and_then(|r| r.excess_risk_mean)),
            opt(get("dist-dp-fw").and_then(|r| r.excess_risk_mean)),
            opt(get("dist-dp-fw-paper").and_then(|r| r.excess_risk_mean)),
            get("dist-dp-fw-paper")
                .and_then(|r| r.reported_epsilon)
                .map_or("-".into(), |e| format!("{e:.3}")),
            ratio(get("dp-fw")),
            ratio(get("dist-dp-fw")),
        ]);
    }
    o.push_str(&markdown_table(
        &[
            "n",
            "n eps",
            "T",
            "m",
            "F(0) - F*",
            "FW",
            "Alg. 2 update, exact",
            "private FW (Talwar), zCDP",
            "private FW (Talwar), paper accounting",
            "sketch, no noise",
            "Algorithm 2, zCDP",
            "Algorithm 2, paper's noise scales",
            "their epsilon by our analysis (the paper claims the target)",
            "noise / signal, Talwar",
            "noise / signal, Alg. 2",
        ],
        &rows,
    ));
    o.push_str(&format!(
        "\nThe rows with n in {:?} run only the central algorithms (Algorithm 2 costs `O(K m n)` \
         per round). 'Noise / signal' is the selection noise scale (the Gumbel scale of the \
         report-noisy-max, from the solver's plan) over the largest score at the start, \
         `||grad F(0)||_inf` (computed without privacy, for this diagnosis only). The largest \
         of `2d` Gumbel draws exceeds the scale by about `ln(2d)`, so while this ratio is \
         near or above `1 / ln(2d)` the selection is mostly noise and the excess risk stays \
         near `F(0) - F*`.\n",
        s.n_grid_central
    ));
    o.push_str("\nFitted log-log slopes against the theory:\n\n");
    let mut rows = Vec::new();
    for alg in [
        "dp-fw",
        "dp-fw-paper",
        "dist-dp-fw",
        "dist-dp-fw-paper",
        "jl-only",
        "alg2-exact",
        "fw",
    ] {
        if let Some(f) = find(&format!("{alg} vs n*eps")) {
            let off = f.slope.zip(f.theory_exponent).map(|(b, th)| b - th);
            let verdict = match (f.slope, off) {
                (None, _) => "not enough points",
                (Some(_), None) => "no exponent to compare with",
                (Some(_), Some(off)) if off.abs() <= 0.15 => "holds (within 0.15)",
                (Some(b), Some(_)) if b < 0.0 => "decreasing, but off by more than 0.15",
                (Some(_), Some(_)) => "does not hold (not decreasing)",
            };
            rows.push(vec![
                label(alg).to_owned(),
                slope_cell(f.slope),
                slope_cell(f.theory_exponent),
                slope_cell(f.theory_slope_with_logs),
                slope_cell(off),
                verdict.to_owned(),
            ]);
        }
    }
    o.push_str(&markdown_table(
        &[
            "curve",
            "measured slope",
            "theory exponent",
            "theory with its log factors",
            "measured - theory",
            "verdict",
        ],
        &rows,
    ));
    o.push_str(
        "\nThe theory: Talwar et al. (2015) bound the excess risk of private FW over the l1 \
         ball by `O(log(n |S|) sqrt(log(1/delta)) / (n eps)^{2/3})` with `|S| = 2d` vertices; \
         Lou & Cheung (2018, Theorem 3) bound Algorithm 2 by \
         `O(log(2 G eta K tau n) / (p^2 (n eps)^{2/3}))` with `sqrt(log(1/delta) + eps)` inside \
         their constants. Both are upper bounds with exponent -2/3 on `n eps`; the third \
         column is the local slope of the full bound, log factors included, over the same \
         grid (with `delta = 1/n^2` the logs grow with n and flatten the slope). The \
         non-private FW and exact-update floors also fall as `(n eps)^{-2/3}` here only because T \
         does (Jaggi's `O(1/T)` optimisation error). A measured slope steeper than the bound \
         is not a contradiction: a bound only caps the error, and once the selection finds \
         the right vertices the noise stops mattering.\n\n",
    );

    o.push_str("## 2. Sampling rate p and number of parties K\n\n");
    o.push_str(&format!(
        "n = {}, eps = {}, delta = 1/n^2. Figures: `fig-sampling-rate.svg`, `fig-parties.svg`.\n\n",
        s.n_fixed, s.epsilon
    ));
    let mut rows = Vec::new();
    for r in rec.iter().filter(|r| r.panel == "sampling-rate") {
        if r.algorithm != "dist-dp-fw" {
            continue;
        }
        let other = |alg: &str| {
            rec.iter()
                .find(|x| x.panel == "sampling-rate" && x.algorithm == alg && x.tau == r.tau)
        };
        rows.push(vec![
            r.tau.to_string(),
            format!("{:.4}", r.sampling_rate),
            opt(other("alg2-exact").and_then(|x| x.excess_risk_mean)),
            opt(other("jl-only").and_then(|x| x.excess_risk_mean)),
            opt(r.excess_risk_mean),
        ]);
    }
    o.push_str(&format!("K = {}:\n\n", s.parties));
    o.push_str(&markdown_table(
        &[
            "tau",
            "p",
            "Alg. 2 update, exact",
            "sketch, no noise",
            "Algorithm 2",
        ],
        &rows,
    ));
    let mut rows = Vec::new();
    for r in rec.iter().filter(|r| r.panel == "parties") {
        if r.algorithm != "dist-dp-fw" {
            continue;
        }
        let other = |alg: &str| {
            rec.iter()
                .find(|x| x.panel == "parties" && x.algorithm == alg && x.parties == r.parties)
        };
        rows.push(vec![
            r.parties.to_string(),
            r.tau.to_string(),
            format!("{:.3}", r.sampling_rate),
            opt(other("alg2-exact").and_then(|x| x.excess_risk_mean)),
            opt(other("jl-only").and_then(|x| x.excess_risk_mean)),
            opt(r.excess_risk_mean),
            r.reported_epsilon.map_or("-".into(), |e| format!("{e:.3}")),
        ]);
    }
    o.push_str("\nParties (tau = half of each block, so p stays fixed):\n\n");
    o.push_str(&markdown_table(
        &[
            "K",
            "tau",
            "p",
            "Alg. 2 update, exact",
            "sketch, no noise",
            "Algorithm 2",
            "reported eps",
        ],
        &rows,
    ));
    let pslope = find("dist-dp-fw vs p").and_then(|f| f.slope);
    let kslope = find("dist-dp-fw vs K").and_then(|f| f.slope);
    o.push_str(&format!(
        "\nMeasured log-log slope of Algorithm 2's excess risk against p: {}; Theorem 3's \
         bound grows as `1/p^2` (slope -2), an upper bound: {}. Against K (p fixed): slope {}. \
         Theorem 3 predicts growth with K at fixed p through `C_g` (proportional to \
         `K iota nnz(a) + K^{{3/2}} sqrt(nnz(a)) sigma(J)^2`) and the curvature; our \
         accounting adds its own reason: a person's row is spread over all K parties, so \
         their `K T` releases compose and each party's noise grows like `sqrt(K)` at a fixed \
         total budget.\n\n",
        slope_cell(pslope),
        match pslope {
            Some(b) if b >= -2.0 - 0.15 => "the measured dependence is within the bound",
            Some(_) => "the measured dependence is steeper than the bound",
            None => "not measured",
        },
        slope_cell(kslope)
    ));

    o.push_str(&format!(
        "### Sketch dimension\n\nn = {}, K = {}, tau = {}, eps = {}; m set by hand \
         (the other sweeps use `m = ceil(iota^-2 ln(2T/delta))`). Figure: \
         `fig-sketch-dim.svg`.\n\n",
        s.n_fixed,
        s.parties,
        tau_of(s.tau_fraction, s.d, s.parties),
        s.epsilon
    ));
    let mut rows = Vec::new();
    for r in curve(rec, "sketch-dim", "jl-only") {
        let alg2 = rec.iter().find(|x| {
            x.panel == "sketch-dim" && x.algorithm == "dist-dp-fw" && x.sketch_dim == r.sketch_dim
        });
        rows.push(vec![
            r.sketch_dim.map_or("-".into(), |m| m.to_string()),
            opt(r.excess_risk_mean),
            opt(alg2.and_then(|x| x.excess_risk_mean)),
            alg2.and_then(|x| x.selection_noise_scale)
                .map_or("-".into(), |v| format!("{:.2}", v / r.max_score_at_zero)),
        ]);
    }
    o.push_str(&markdown_table(
        &[
            "m",
            "sketch, no noise",
            "Algorithm 2",
            "noise / signal, Alg. 2",
        ],
        &rows,
    ));
    o.push_str(&format!(
        "\nMeasured slopes against m: sketch only {}, Algorithm 2 {}. The sketch enters the \
         scores through `a_i^T J^T J (A x) / n`: a Johnson-Lindenstrauss sketch keeps this \
         inner product within a relative error of about `1/sqrt(m)` of `||a_i|| ||A x|| / n`, \
         which does not shrink with n, so at fixed m (or m growing like log n, as the \
         theory's `m = O(iota^-2 log(T/delta))`) the sketch alone leaves an error floor that \
         more data cannot remove.\n\n",
        slope_cell(find("jl-only vs m").and_then(|f| f.slope)),
        slope_cell(find("dist-dp-fw vs m").and_then(|f| f.slope)),
    ));
    o.push_str("## 3. Uplink communication\n\n");
    let mut rows = Vec::new();
    for r in curve(rec, "n-eps", "dist-dp-fw") {
        let jl = rec
            .iter()
            .find(|x| x.panel == "n-eps" && x.algorithm == "jl-only" && x.problem == r.problem);
        rows.push(vec![
            r.n_samples.to_string(),
            r.iterations.to_string(),
            r.sketch_dim.map_or("-".into(), |m| m.to_string()),
            r.uplink_indices_per_party
                .map_or("-".into(), |v| v.to_string()),
            r.uplink_floats_per_party
                .map_or("-".into(), |v| v.to_string()),
            jl.and_then(|x| x.uplink_floats_total)
                .map_or("-".into(), |v| v.to_string()),
            r.uplink_bytes_per_party
                .map_or("-".into(), |v| v.to_string()),
            r.unsketched_floats_per_party.map_or("-".into(), |v| {
                (v * FLOAT_BYTES + r.iterations * INDEX_BYTES).to_string()
            }),
            match (r.uplink_bytes_per_party, r.unsketched_floats_per_party) {
                (Some(b), Some(u)) => {
                    format!(
                        "{:.1}",
                        (u * FLOAT_BYTES + r.iterations * INDEX_BYTES) as f64 / b as f64
                    )
                }
                _ => "-".into(),
            },
        ]);
    }
    o.push_str(&format!(
        "Per party per round: one signed index ({INDEX_BYTES} bytes) and m floats \
         ({FLOAT_BYTES} bytes each); the unsketched baseline ships the selected column in \
         full (n floats). K = {}. Figure: `fig-uplink-bytes.svg`.\n\n",
        s.parties
    ));
    o.push_str(&markdown_table(
        &[
            "n",
            "T",
            "m",
            "indices per party",
            "floats per party",
            "floats, all parties (server counters, JL-only run)",
            "bytes per party",
            "unsketched bytes per party",
            "saving",
        ],
        &rows,
    ));
    let up = find("uplink floats per party vs n*eps");
    o.push_str(&format!(
        "\nThe identity `uplink floats = T m` per party and `K T m` in total was checked \
         exactly for every sketched configuration ({} records, every seed): for the JL-only \
         runs against the server's per-party counters (`Server::uplink_floats`), for \
         Algorithm 2 against the count the solver reports from its server (party 0). It \
         holds everywhere (the run stops with an error otherwise). Growth with n: measured \
         slope of floats per party against n eps {}, Corollary 1's \
         `O(iota^-2 log((n eps)^{{1/3}}) K (n eps)^{{2/3}})` has exponent 2/3 ({} with the \
         log factor over this grid; here m is {}). The unsketched baseline grows as \
         `T n ~ n^{{5/3}}`.\n\n",
        summary.uplink_identity_checked,
        slope_cell(up.and_then(|f| f.slope)),
        slope_cell(up.and_then(|f| f.theory_slope_with_logs)),
        if curve(rec, "n-eps", "dist-dp-fw")
            .iter()
            .any(|r| r.sketch_dim.map(|m| m as f64)
                == Some((s.m_max_fraction * r.n_samples as f64).floor()))
        {
            "capped at a fraction of n for the smallest n, which steepens the slope"
        } else {
            "never capped"
        }
    ));

    o.push_str("## 4. The JL-only ablation and the floors\n\n");
    o.push_str(
        "'Sketch, no noise' runs Algorithm 2's protocol with the public sketch and neither \
         selection noise nor sketch noise: its gap to Algorithm 2's exact update (same sampling, exact residual) is \
         the error the JL sketch alone causes; its gap to Algorithm 2 is the cost of privacy. \
         FW (Jaggi 2013) and Algorithm 2's exact update are the non-private floors with the same T.\n\n",
    );
    let mut rows = Vec::new();
    for &n in &s.n_grid {
        let name = format!("synthetic-n{n}");
        let get = |alg: &str| {
            rec.iter()
                .find(|r| r.panel == "n-eps" && r.problem == name && r.algorithm == alg)
                .and_then(|r| r.excess_risk_mean)
        };
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.1}", a / b),
            _ => "-".into(),
        };
        rows.push(vec![
            n.to_string(),
            ratio(get("jl-only"), get("alg2-exact")),
            ratio(get("dist-dp-fw"), get("jl-only")),
            ratio(get("dp-fw"), get("fw")),
        ]);
    }
    o.push_str(&markdown_table(
        &[
            "n",
            "sketch-only / exact update",
            "Algorithm 2 / sketch-only",
            "private FW / FW",
        ],
        &rows,
    ));

    if s.california {
        o.push_str("\n## 5. California housing, features split across parties\n\n");
        o.push_str(&format!(
            "{} districts{}, 8 features split into K = {} contiguous blocks (tau = {} per \
             round). Preprocessing for the bounds the privacy proofs state (`|A_rj| <= 1`, \
             `|y_r| <= 1`), with public ranges only, never statistics of the data: log of \
             MedInc, AveRooms, AveBedrms, Population, AveOccup; each feature's public range \
             (census top-codes, California's latitude 32-42 and longitude -124.5 to -114) \
             mapped onto [-1, 1] and clipped there; the label MedHouseVal (top-coded at \
             5.00001) mapped from [0.15, 5.00001] onto [-1, 1]. The ranges were chosen by us \
             from the data set's documentation. Reference optima certified to a duality gap \
             of {:e}. Figure: `fig-california.svg` (other rows: `fig-california-more.svg`).\n\n",
            rec.iter()
                .find(|r| r.panel == "california")
                .map_or(0, |r| r.n_samples),
            s.california_rows
                .map_or(String::new(), |_| " (a prefix of the 20,640 rows only)"
                    .to_owned()),
            s.california_parties,
            s.california_tau,
            s.california_ref_tol
        ));
        let mut rows = Vec::new();
        for &eps in &s.california_eps {
            let get = |alg: &str| {
                rec.iter().find(|r| {
                    r.panel == "california"
                        && r.algorithm == alg
                        && (r.n_eps / r.n_samples as f64 - eps).abs() < 1e-12
                })
            };
            let any = get("dist-dp-fw");
            rows.push(vec![
                format!("{eps}"),
                any.map_or("-".into(), |r| r.iterations.to_string()),
                any.and_then(|r| r.sketch_dim)
                    .map_or("-".into(), |m| m.to_string()),
                opt(get("fw").and_then(|r| r.excess_risk_mean)),
                opt(get("alg2-exact").and_then(|r| r.excess_risk_mean)),
                opt(get("dp-fw").and_then(|r| r.excess_risk_mean)),
                opt(get("jl-only").and_then(|r| r.excess_risk_mean)),
                opt(get("dist-dp-fw").and_then(|r| r.excess_risk_mean)),
            ]);
        }
        o.push_str(&markdown_table(
            &[
                "eps",
                "T",
                "m",
                "FW",
                "Alg. 2 update, exact",
                "private FW (Talwar)",
                "sketch, no noise",
                "Algorithm 2",
            ],
            &rows,
        ));
        if let Some(r) = rec.iter().find(|r| r.panel == "california") {
            o.push_str(&format!(
                "\n`F*` = {} over the l1 ball (and {} over the product of the parties' balls).\n",
                sci(r.objective_star),
                rec.iter()
                    .find(|r| r.panel == "california" && r.algorithm == "dist-dp-fw")
                    .map_or("-".into(), |r| sci(r.objective_star))
            ));
        }
    }
    if let Some(t) = &summary.transport {
        o.push_str(&transport::render(t));
    }
    o.push_str(
        "\n## Caveats\n\n\
         - The paper's constants are not reproduced: our Algorithm 2 is the self-consistent \
           reading in `docs/dp-fw.md` (exponential-mechanism selection on clipped \
           reconstructed residuals, Gaussian sketch noise calibrated to the sketch's largest \
           column norm, zCDP composition over all K parties), so only shapes are compared.\n\
         - Uplink bytes assume 8 bytes per float and per signed index; the bytes of a real \
           wire encoding are measured over gRPC in section 6.\n\
         - Seeds are public benchmark seeds; nothing here is a release of anyone's data.\n",
    );
    o.push_str(&reading_section(
        &format!(
            "The shapes the theorems predict (Talwar, Thakurta & Zhang 2015; Lou & Cheung, AAAI 2018), checked \
             on this run ({} profile; a slope meets its target within 0.15).",
            config.profile.name()
        ),
        &fw_verdicts(summary),
    ));
    o
}

/// The predicted shapes as verdicts for the closing "Reading" section.
pub(super) fn fw_verdicts(summary: &Summary) -> Vec<Verdict> {
    let rec = &summary.records;
    let find = |c: &str| summary.slopes.iter().find(|f| f.curve == c);
    let mut out = Vec::new();
    for (alg, name) in [
        ("dp-fw", "Talwar et al.'s private FW"),
        ("dist-dp-fw", "Algorithm 2"),
    ] {
        let target = format!("{name}: excess risk falls as (n eps)^(-2/3)");
        let Some(f) = find(&format!("{alg} vs n*eps")) else {
            out.push(Verdict::new(target, None, "not run"));
            continue;
        };
        let Some(b) = f.slope else {
            out.push(Verdict::new(target, None, "not enough points"));
            continue;
        };
        let mut v = Verdict::new(
            target,
            Some((b + 2.0 / 3.0).abs() <= 0.15),
            format!(
                "slope {b:.2} against -0.67 (off by {:+.2}; {} with the bound's log factors over this grid)",
                b + 2.0 / 3.0,
                slope_cell(f.theory_slope_with_logs)
            ),
        );
        let last = curve(rec, "n-eps", alg)
            .into_iter()
            .max_by(|a, b| a.n_samples.cmp(&b.n_samples));
        if let (Some(l), false) = (last, (b + 2.0 / 3.0).abs() <= 0.15) {
            let frac = l.excess_risk_mean.map(|e| e / l.excess_risk_at_zero);
            let ratio = l.selection_noise_scale.map(|v| v / l.max_score_at_zero);
            v = v.because(format!(
                "at the largest n ({}) the excess risk is still {} of F(0) - F* and the selection noise is \
                 {} times the largest score: the grid is pre-asymptotic",
                l.n_samples,
                frac.map_or("-".into(), |f| format!("{:.0} %", 100.0 * f)),
                slope_cell(ratio)
            ));
        }
        out.push(v);
    }
    let target =
        "Algorithm 2: excess risk against the sampling rate p no steeper than Theorem 3's 1/p^2";
    out.push(match find("dist-dp-fw vs p").and_then(|f| f.slope) {
        Some(b) => Verdict::new(target, Some(b >= -2.15), format!("slope {b:.2} against -2")),
        None => Verdict::new(target, None, "not enough points"),
    });
    let target = "Algorithm 2: excess risk grows with the number of parties K at fixed p";
    out.push(match find("dist-dp-fw vs K").and_then(|f| f.slope) {
        Some(b) => Verdict::new(target, Some(b > 0.0), format!("slope {b:.2} against K")),
        None => Verdict::new(target, None, "not enough points"),
    });
    out.push(Verdict::new(
        "Algorithm 2 sends T m floats and T indices per party (K T m floats in total)",
        (summary.uplink_identity_checked > 0).then_some(true),
        format!(
            "exact in all {} sketched configurations (a mismatch stops the run)",
            summary.uplink_identity_checked
        ),
    ));
    out
}
