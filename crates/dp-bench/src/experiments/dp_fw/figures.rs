//! The distributed Frank-Wolfe experiment's figures and fitted slopes: excess risk against
//! n*eps, sampling rate, parties and sketch dimension, each with a headline of at most six
//! series.

use super::*;

pub(super) fn curve<'r>(records: &'r [Record], panel: &str, alg: &str) -> Vec<&'r Record> {
    records
        .iter()
        .filter(|r| r.panel == panel && r.algorithm == alg)
        .collect()
}

/// The local slope of `g(x)` in log-log over `xs`, by least squares on `(x, g(x))`.
pub(super) fn slope_of_fn(xs: &[f64], g: impl Fn(f64) -> f64) -> Option<f64> {
    let pts: Vec<(f64, f64)> = xs.iter().map(|&x| (x, g(x))).collect();
    log_log_slope(&pts)
}

pub(super) fn slopes(records: &[Record], s: &Settings) -> Vec<SlopeFit> {
    let mut out = Vec::new();
    for alg in [
        "dp-fw",
        "dp-fw-paper",
        "dist-dp-fw",
        "dist-dp-fw-paper",
        "jl-only",
        "alg2-exact",
        "fw",
    ] {
        let c = curve(records, "n-eps", alg);
        let pts: Vec<(f64, f64)> = c
            .iter()
            .filter_map(|r| r.excess_risk_mean.map(|e| (r.n_eps, e)))
            .collect();
        let xs: Vec<f64> = c.iter().map(|r| r.n_eps).collect();
        // Talwar et al.: log(n |S|) sqrt(log(1/delta)) / (n eps)^{2/3}, |S| = 2d,
        // delta = 1/n^2 (eps fixed, so n = x / eps). Lou & Cheung's Theorem 3:
        // log(2 G eta K tau n) / (p^2 (n eps)^{2/3}); C_g, C_l carry sqrt(log(1/delta)).
        // The non-private floors: FW's O(1/T) with T = (n eps)^{2/3}.
        let eps = s.epsilon;
        let d = s.d as f64;
        let kt = (s.parties * tau_of(s.tau_fraction, s.d, s.parties)) as f64;
        let with_logs: Option<f64> = match alg {
            "dp-fw" | "dp-fw-paper" => slope_of_fn(&xs, |x| {
                let n = x / eps;
                (n * 2.0 * d).ln() * (2.0 * n.ln()).sqrt() * x.powf(-2.0 / 3.0)
            }),
            "dist-dp-fw" | "dist-dp-fw-paper" => slope_of_fn(&xs, |x| {
                let n = x / eps;
                (2.0 * 2.0 * ETA * kt * n).ln() * (2.0 * n.ln() + eps).sqrt() * x.powf(-2.0 / 3.0)
            }),
            _ => slope_of_fn(&xs, |x| x.powf(-2.0 / 3.0)),
        };
        out.push(SlopeFit {
            curve: format!("{alg} vs n*eps"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: Some(-2.0 / 3.0),
            theory_slope_with_logs: with_logs,
        });
    }
    for alg in ["dist-dp-fw", "jl-only", "alg2-exact"] {
        let pts: Vec<(f64, f64)> = curve(records, "sampling-rate", alg)
            .iter()
            .filter_map(|r| r.excess_risk_mean.map(|e| (r.sampling_rate, e)))
            .collect();
        out.push(SlopeFit {
            curve: format!("{alg} vs p"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: Some(-2.0),
            theory_slope_with_logs: None,
        });
    }
    for alg in ["dist-dp-fw", "jl-only", "alg2-exact"] {
        let pts: Vec<(f64, f64)> = curve(records, "parties", alg)
            .iter()
            .filter_map(|r| r.excess_risk_mean.map(|e| (r.parties as f64, e)))
            .collect();
        out.push(SlopeFit {
            curve: format!("{alg} vs K"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: None,
            theory_slope_with_logs: None,
        });
    }
    for alg in ["jl-only", "dist-dp-fw"] {
        let pts: Vec<(f64, f64)> = curve(records, "sketch-dim", alg)
            .iter()
            .filter_map(|r| Some((r.sketch_dim? as f64, r.excess_risk_mean?)))
            .collect();
        out.push(SlopeFit {
            curve: format!("{alg} vs m"),
            slope: log_log_slope(&pts),
            points: pts.len(),
            theory_exponent: None,
            theory_slope_with_logs: None,
        });
    }
    // Uplink floats per party against n (theory: T m ~ (n eps)^{2/3} log(T/delta)).
    let c = curve(records, "n-eps", "dist-dp-fw");
    let pts: Vec<(f64, f64)> = c
        .iter()
        .filter_map(|r| r.uplink_floats_per_party.map(|f| (r.n_eps, f as f64)))
        .collect();
    let xs: Vec<f64> = c.iter().map(|r| r.n_eps).collect();
    out.push(SlopeFit {
        curve: "uplink floats per party vs n*eps".into(),
        slope: log_log_slope(&pts),
        points: pts.len(),
        theory_exponent: Some(2.0 / 3.0),
        theory_slope_with_logs: slope_of_fn(&xs, |x| {
            let n = x / s.epsilon;
            let t = x.powf(2.0 / 3.0);
            t * (2.0 * t * n * n).ln()
        }),
    });
    out
}

pub(super) fn color(alg: &str) -> (u8, u8, u8) {
    match alg {
        // One hue per algorithm from the qualitative palette.
        "fw" => crate::figures::PALETTE[7],
        "alg2-exact" => crate::figures::PALETTE[2],
        "dp-fw" => crate::figures::PALETTE[0],
        "dp-fw-paper" => crate::figures::PALETTE[1],
        "jl-only" => crate::figures::PALETTE[4],
        "dist-dp-fw" => crate::figures::PALETTE[3],
        "dist-dp-fw-paper" => crate::figures::PALETTE[5],
        _ => (0, 0, 0),
    }
}

pub(super) fn label(alg: &str) -> &'static str {
    match alg {
        "fw" => "FW (non-private)",
        "alg2-exact" => "Algorithm 2's update, exact (non-private)",
        "dp-fw" => "private FW (Talwar), zCDP",
        "dp-fw-paper" => "private FW (Talwar), Laplace + adv. comp. (paper)",
        "jl-only" => "sketch, no noise",
        "dist-dp-fw" => "Algorithm 2, zCDP",
        "dist-dp-fw-paper" => "Algorithm 2, paper's noise scales",
        _ => "?",
    }
}

pub(super) fn series_of(
    records: &[Record],
    panel: &str,
    alg: &str,
    x: impl Fn(&Record) -> f64,
) -> Series {
    Series {
        label: label(alg).to_owned(),
        points: curve(records, panel, alg)
            .iter()
            .filter_map(|r| {
                Some(BandPoint {
                    x: x(r),
                    mean: Some(r.excess_risk_mean?),
                    min: Some(r.excess_risk_min?),
                    max: Some(r.excess_risk_max?),
                })
            })
            .collect(),
        color: Some(color(alg)),
    }
}

/// A figure's headline rows (labels may carry a fitted slope after the name): Algorithm 2
/// with the proven (zCDP) calibration, Algorithm 2 at the paper's noise scales, the
/// stronger of the two private FW baselines (Talwar et al.), non-private FW and Algorithm
/// 2's exact update; the sketch without noise and the other Talwar row go to `-more`.
pub(super) fn headline_picks() -> Vec<Pick<'static>> {
    fn is(alg: &'static str) -> impl Fn(&str) -> bool {
        move |l: &str| l.starts_with(label(alg))
    }
    static DIST: fn(&str) -> bool = |l| is("dist-dp-fw")(l);
    static DIST_PAPER: fn(&str) -> bool = |l| is("dist-dp-fw-paper")(l);
    static TALWAR: fn(&str) -> bool = |l| is("dp-fw")(l) || is("dp-fw-paper")(l);
    static FW: fn(&str) -> bool = |l| is("fw")(l);
    static EXACT: fn(&str) -> bool = |l| is("alg2-exact")(l);
    vec![
        Pick::Lowest(&DIST),
        Pick::Lowest(&DIST_PAPER),
        Pick::Lowest(&TALWAR),
        Pick::Lowest(&FW),
        Pick::Lowest(&EXACT),
    ]
}

/// Saves `fig` as a headline figure at `path` ([`headline_picks`]) and its other rows,
/// with non-private FW repeated, beside it.
pub(super) fn save_with_headline(fig: &ErrorFigure, path: &Path) -> Result<()> {
    let fw: Vec<&str> = fig
        .series
        .iter()
        .map(|s| s.label.as_str())
        .filter(|l| l.starts_with(label("fw")))
        .collect();
    save_headline(fig, &[], &headline_picks(), &fw, path)?;
    Ok(())
}

pub(super) fn write_figures(dir: &Path, summary: &Summary) -> Result<()> {
    let s = &summary.settings;
    let rec = &summary.records;
    let slope = |c: &str| {
        summary
            .slopes
            .iter()
            .find(|f| f.curve == c)
            .and_then(|f| f.slope)
    };
    // Figure 1: excess risk against n eps, with the fitted slopes.
    let mut series = Vec::new();
    for alg in [
        "fw",
        "alg2-exact",
        "dp-fw",
        "dp-fw-paper",
        "jl-only",
        "dist-dp-fw",
        "dist-dp-fw-paper",
    ] {
        let mut sr = series_of(rec, "n-eps", alg, |r| r.n_eps);
        if let Some(b) = slope(&format!("{alg} vs n*eps")) {
            sr.label = format!("{} (slope {b:.2})", sr.label);
        }
        series.push(sr);
    }
    let tau_main = tau_of(s.tau_fraction, s.d, s.parties);
    let p_main = tau_main as f64 / block_size(s.d, s.parties) as f64;
    let fig = ErrorFigure {
        title: format!(
            "Excess risk vs n*eps (eps = {}, delta = 1/n^2, d = {}, K = {}, p = {p_main})",
            s.epsilon, s.d, s.parties
        ),
        x_label: "n * eps".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series,
    };
    save_with_headline(&fig, &dir.join("fig-excess-vs-neps.svg"))?;
    // Figure 2: uplink bytes per party against n.
    let c = curve(rec, "n-eps", "dist-dp-fw");
    let pt = BandPoint::exact;
    let sketched: Vec<BandPoint> = c
        .iter()
        .filter_map(|r| Some(pt(r.n_samples as f64, r.uplink_bytes_per_party? as f64)))
        .collect();
    let unsketched: Vec<BandPoint> = c
        .iter()
        .filter_map(|r| {
            Some(pt(
                r.n_samples as f64,
                (r.unsketched_floats_per_party? * FLOAT_BYTES + r.iterations * INDEX_BYTES) as f64,
            ))
        })
        .collect();
    ErrorFigure {
        title: format!(
            "Uplink bytes per party (eps = {}, delta = 1/n^2, K = {})",
            s.epsilon, s.parties
        ),
        x_label: "n".into(),
        y_label: "bytes per party".into(),
        log_x: true,
        series: vec![
            Series {
                label: "Algorithm 2 (index + m floats)".into(),
                points: sketched,
                color: Some(color("dist-dp-fw")),
            },
            Series {
                label: "unsketched (index + n floats)".into(),
                points: unsketched,
                color: Some((127, 127, 127)),
            },
        ],
    }
    .save_svg_legend_right(&dir.join("fig-uplink-bytes.svg"))?;
    // Figure 3: sampling rate.
    ErrorFigure {
        title: format!(
            "Excess risk vs sampling rate p (n = {}, eps = {}, delta = 1/n^2, K = {})",
            s.n_fixed, s.epsilon, s.parties
        ),
        x_label: "p = tau / |P_k|".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series: ["alg2-exact", "jl-only", "dist-dp-fw"]
            .iter()
            .map(|a| series_of(rec, "sampling-rate", a, |r| r.sampling_rate))
            .collect(),
    }
    .save_svg_legend_right(&dir.join("fig-sampling-rate.svg"))?;
    // Figure 4: parties.
    ErrorFigure {
        title: format!(
            "Excess risk vs parties K (n = {}, eps = {}, delta = 1/n^2, p = {})",
            s.n_fixed, s.epsilon, s.tau_fraction
        ),
        x_label: "K".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series: ["alg2-exact", "jl-only", "dist-dp-fw"]
            .iter()
            .map(|a| series_of(rec, "parties", a, |r| r.parties as f64))
            .collect(),
    }
    .save_svg_legend_right(&dir.join("fig-parties.svg"))?;
    ErrorFigure {
        title: format!(
            "Excess risk vs sketch dimension m (n = {}, eps = {}, delta = 1/n^2, K = {}, p = {p_main})",
            s.n_fixed, s.epsilon, s.parties
        ),
        x_label: "m".into(),
        y_label: "F(w) - F*".into(),
        log_x: true,
        series: ["jl-only", "dist-dp-fw"]
            .iter()
            .map(|a| series_of(rec, "sketch-dim", a, |r| r.sketch_dim.unwrap_or(0) as f64))
            .collect(),
    }
    .save_svg_legend_right(&dir.join("fig-sketch-dim.svg"))?;
    if s.california {
        let n = rec
            .iter()
            .find(|r| r.panel == "california")
            .map_or(0, |r| r.n_samples);
        let fig = ErrorFigure {
            title: format!(
                "California housing: excess risk vs eps (n = {n}, delta = 1/n^2, K = {})",
                s.california_parties
            ),
            x_label: "eps".into(),
            y_label: "F(w) - F*".into(),
            log_x: true,
            series: [
                "fw",
                "alg2-exact",
                "dp-fw",
                "dp-fw-paper",
                "jl-only",
                "dist-dp-fw",
                "dist-dp-fw-paper",
            ]
            .iter()
            .map(|a| series_of(rec, "california", a, |r| r.n_eps / r.n_samples as f64))
            .collect(),
        };
        save_with_headline(&fig, &dir.join("fig-california.svg"))?;
    }
    Ok(())
}
