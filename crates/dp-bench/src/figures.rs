//! Figures like the papers': relative error against the budget (passes or iterations), one
//! line per algorithm with its min / max band, log-scaled error axis. SVG via plotters.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use plotters::prelude::*;

use crate::report::write_atomic;

/// One point of a curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandPoint {
    /// Budget (x axis).
    pub x: f64,
    /// Mean relative error.
    pub mean: f64,
    /// Minimum over runs.
    pub min: f64,
    /// Maximum over runs.
    pub max: f64,
}

/// One curve (an algorithm). A series whose label starts with `paper` (e.g. `paper dp-cd`)
/// holds a paper's published points and is drawn as unconnected cross markers, with no band.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points, any order (sorted by x when drawn).
    pub points: Vec<BandPoint>,
    /// Fixed colour (so an algorithm keeps its colour across figures); palette order if `None`.
    pub color: Option<(u8, u8, u8)>,
}

/// Tick positions for a log axis on `[lo, hi]`: 1, 2 and 5 times powers of ten inside the
/// range (only powers of ten when the range spans more than three decades).
fn log_keys(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mults: &[f64] = if b - a > 3 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    let mut keys = Vec::new();
    for e in a..=b {
        for m in mults {
            let v = m * 10f64.powi(e);
            if v >= lo && v <= hi {
                keys.push(v);
            }
        }
    }
    keys
}

/// A short tick label: `0.02`, `5e-4`, `1`, `0`.
pub fn format_tick(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    if (1e-3..1e3).contains(&v.abs()) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{v:.0e}")
    }
}

/// A figure: several series on shared axes.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorFigure {
    /// Title.
    pub title: String,
    /// X-axis label.
    pub x_label: String,
    /// Y-axis label.
    pub y_label: String,
    /// Log-scale the x axis too.
    pub log_x: bool,
    /// The curves.
    pub series: Vec<Series>,
}

/// Width in pixels of the legend column of [`ErrorFigure::to_svg_legend_right`].
const LEGEND_WIDTH: u32 = 250;

/// A qualitative palette that stays distinguishable in print and for the common forms of
/// colour blindness: Okabe & Ito's (2008) colours, yellow replaced by a darker ochre that
/// reads on white, then a mid grey. Experiments that fix an algorithm's colour pick from
/// it, so that no two series of a figure share a hue.
pub const PALETTE: [(u8, u8, u8); 8] = [
    (0, 114, 178),   // blue
    (230, 159, 0),   // orange
    (0, 158, 115),   // bluish green
    (213, 94, 0),    // vermillion
    (204, 121, 167), // reddish purple
    (86, 180, 233),  // sky blue
    (166, 128, 0),   // ochre
    (110, 110, 110), // grey
];

const COLORS: [RGBColor; 8] = [
    RGBColor(PALETTE[0].0, PALETTE[0].1, PALETTE[0].2),
    RGBColor(PALETTE[1].0, PALETTE[1].1, PALETTE[1].2),
    RGBColor(PALETTE[2].0, PALETTE[2].1, PALETTE[2].2),
    RGBColor(PALETTE[3].0, PALETTE[3].1, PALETTE[3].2),
    RGBColor(PALETTE[4].0, PALETTE[4].1, PALETTE[4].2),
    RGBColor(PALETTE[5].0, PALETTE[5].1, PALETTE[5].2),
    RGBColor(PALETTE[6].0, PALETTE[6].1, PALETTE[6].2),
    RGBColor(PALETTE[7].0, PALETTE[7].1, PALETTE[7].2),
];

/// A published value the paper gives without a budget (e.g. a table's tuned result): a
/// dashed horizontal line across the plot, labelled in the legend.
#[derive(Debug, Clone, PartialEq)]
pub struct RefLine {
    /// Legend label (say where the value comes from).
    pub label: String,
    /// The value (y axis).
    pub y: f64,
    /// Colour.
    pub color: (u8, u8, u8),
}

impl ErrorFigure {
    /// Renders the figure as an SVG document.
    pub fn to_svg(&self, width: u32, height: u32) -> Result<String> {
        self.render(width, height, false)
    }

    /// Renders the figure with the legend in a column right of the plot, outside the data.
    pub fn to_svg_legend_right(&self, width: u32, height: u32) -> Result<String> {
        self.render(width, height, true)
    }

    fn render(&self, width: u32, height: u32, legend_right: bool) -> Result<String> {
        self.render_with(width, height, legend_right, &[])
    }

    fn render_with(
        &self,
        width: u32,
        height: u32,
        legend_right: bool,
        refs: &[RefLine],
    ) -> Result<String> {
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        if pts().next().is_none() {
            bail!("figure '{}' has no points", self.title);
        }
        let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in pts() {
            x0 = x0.min(p.x);
            x1 = x1.max(p.x);
            for y in [p.min, p.mean, p.max] {
                if y.is_finite() && y > 0.0 {
                    y0 = y0.min(y);
                    y1 = y1.max(y);
                }
            }
        }
        for r in refs {
            if r.y.is_finite() && r.y > 0.0 {
                y0 = y0.min(r.y);
                y1 = y1.max(r.y);
            }
        }
        if !y0.is_finite() {
            // Nothing positive to draw on a log axis: draw an empty decade.
            y0 = 1e-3;
            y1 = 1.0;
        }
        // Diverged runs (errors of 1e9 and more) would squash every other curve: cap the axis
        // at 1000 times the median of the plotted means and draw larger values at the top
        // edge, saying so in the title.
        let mut means: Vec<f64> = pts()
            .map(|p| p.mean)
            .filter(|m| m.is_finite() && *m > 0.0)
            .collect();
        means.sort_by(f64::total_cmp);
        let cap = means
            .get(means.len() / 2)
            .map_or(f64::INFINITY, |m| m * 1e3);
        let clamped = y1 > cap;
        let y1 = y1.min(cap);
        let (y0, y1) = (y0 / 1.5, y1 * 1.5);
        let title = if clamped {
            format!("{} (values > {cap:.0e} drawn at the top)", self.title)
        } else {
            self.title.clone()
        };
        let (x0, x1) = if self.log_x {
            (x0 / 1.2, x1 * 1.2)
        } else {
            let pad = ((x1 - x0) * 0.04).max(0.5);
            (x0 - pad, x1 + pad)
        };
        let x_keys = if self.log_x {
            log_keys(x0, x1)
        } else {
            Vec::new()
        };
        let y_keys = log_keys(y0, y1);
        let mut svg = String::new();
        {
            let full = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
            full.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
            let legend_width = if legend_right {
                LEGEND_WIDTH.min(width / 2)
            } else {
                0
            };
            let (root, side) = full.split_horizontally(width - legend_width);
            let y_axis = (y0..y1).log_scale().with_key_points(y_keys);
            if self.log_x {
                let x_axis = (x0..x1).log_scale().with_key_points(x_keys);
                let mut chart = ChartBuilder::on(&root)
                    .caption(&title, ("sans-serif", 18))
                    .margin(12)
                    .x_label_area_size(45)
                    .y_label_area_size(70)
                    .build_cartesian_2d(x_axis, y_axis)
                    .map_err(|e| anyhow!("{e:?}"))?;
                chart
                    .configure_mesh()
                    .light_line_style(WHITE)
                    .x_desc(self.x_label.as_str())
                    .y_desc(self.y_label.as_str())
                    .x_label_formatter(&|v| format_tick(*v))
                    .y_label_formatter(&|v| format_tick(*v))
                    .draw()
                    .map_err(|e| anyhow!("{e:?}"))?;
                draw_refs(&mut chart, refs, x0, x1)?;
                self.draw_series(&mut chart, cap, !legend_right)?;
            } else {
                let mut chart = ChartBuilder::on(&root)
                    .caption(&title, ("sans-serif", 18))
                    .margin(12)
                    .x_label_area_size(45)
                    .y_label_area_size(70)
                    .build_cartesian_2d(x0..x1, y_axis)
                    .map_err(|e| anyhow!("{e:?}"))?;
                chart
                    .configure_mesh()
                    .light_line_style(WHITE)
                    .x_desc(self.x_label.as_str())
                    .y_desc(self.y_label.as_str())
                    .y_label_formatter(&|v| format_tick(*v))
                    .draw()
                    .map_err(|e| anyhow!("{e:?}"))?;
                draw_refs(&mut chart, refs, x0, x1)?;
                self.draw_series(&mut chart, cap, !legend_right)?;
            }
            if legend_right {
                self.draw_side_legend(&side, refs)?;
            }
            full.present().map_err(|e| anyhow!("{e:?}"))?;
        }
        Ok(svg)
    }

    fn draw_series<'a, X, Y>(
        &self,
        chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
        cap: f64,
        inner_legend: bool,
    ) -> Result<()>
    where
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        for (i, s) in self.series.iter().enumerate() {
            let color = s
                .color
                .map_or(COLORS[i % COLORS.len()], |(r, g, b)| RGBColor(r, g, b));
            let mut pts: Vec<BandPoint> = s
                .points
                .iter()
                .copied()
                .filter(|p| p.mean.is_finite() && p.mean > 0.0)
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            if pts.is_empty() {
                continue;
            }
            for p in &mut pts {
                p.mean = p.mean.min(cap);
                p.min = p.min.min(cap);
                p.max = p.max.min(cap);
            }
            if s.label.starts_with("paper") {
                chart
                    .draw_series(
                        pts.iter()
                            .map(|p| Cross::new((p.x, p.mean), 6, color.stroke_width(2))),
                    )
                    .map_err(|e| anyhow!("{e:?}"))?
                    .label(s.label.clone())
                    .legend(move |(x, y)| Cross::new((x + 10, y), 6, color.stroke_width(2)));
                continue;
            }
            // Min / max band as a filled polygon (lower edge forward, upper edge back).
            let floor = |v: f64| {
                if v.is_finite() && v > 0.0 {
                    v
                } else {
                    f64::NAN
                }
            };
            let band: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.x, floor(p.min).min(p.mean)))
                .chain(pts.iter().rev().map(|p| (p.x, floor(p.max).max(p.mean))))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(
                    band,
                    color.mix(0.18).filled(),
                )))
                .map_err(|e| anyhow!("{e:?}"))?;
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|p| (p.x, p.mean)),
                    color.stroke_width(2),
                ))
                .map_err(|e| anyhow!("{e:?}"))?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    pts.iter()
                        .map(|p| Circle::new((p.x, p.mean), 3, color.filled())),
                )
                .map_err(|e| anyhow!("{e:?}"))?;
        }
        if !inner_legend {
            return Ok(());
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| anyhow!("{e:?}"))?;
        Ok(())
    }

    /// One line per series, in series order, in the area right of the plot.
    fn draw_side_legend(
        &self,
        side: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        refs: &[RefLine],
    ) -> Result<()> {
        let style = ("sans-serif", 13).into_font().color(&BLACK);
        let mut row = 0;
        for (i, s) in self.series.iter().enumerate() {
            let color = s
                .color
                .map_or(COLORS[i % COLORS.len()], |(r, g, b)| RGBColor(r, g, b));
            let y = 60 + 22 * row;
            row += 1;
            if s.label.starts_with("paper") {
                side.draw(&Cross::new((17, y), 6, color.stroke_width(2)))
                    .map_err(|e| anyhow!("{e:?}"))?;
            } else {
                side.draw(&PathElement::new(
                    vec![(6, y), (28, y)],
                    color.stroke_width(2),
                ))
                .map_err(|e| anyhow!("{e:?}"))?;
                side.draw(&Circle::new((17, y), 3, color.filled()))
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
            side.draw(&Text::new(s.label.clone(), (34, y - 7), style.clone()))
                .map_err(|e| anyhow!("{e:?}"))?;
        }
        for r in refs {
            let color = RGBColor(r.color.0, r.color.1, r.color.2);
            let y = 60 + 22 * row;
            row += 1;
            side.draw(&plotters::element::DashedPathElement::new(
                vec![(4, y), (30, y)],
                5,
                3,
                color.stroke_width(2),
            ))
            .map_err(|e| anyhow!("{e:?}"))?;
            side.draw(&Text::new(r.label.clone(), (34, y - 7), style.clone()))
                .map_err(|e| anyhow!("{e:?}"))?;
        }
        Ok(())
    }

    /// Renders and writes the SVG atomically, the legend right of the plot (outside the
    /// data: a legend inside hides curves).
    pub fn save_svg(&self, path: &Path) -> Result<()> {
        self.save_svg_legend_right(path)
    }

    /// [`Self::save_svg`] with the paper's budget-less values as dashed horizontal lines.
    pub fn save_svg_with_refs(&self, path: &Path, refs: &[RefLine]) -> Result<()> {
        let width = 720 + LEGEND_WIDTH;
        let svg = self.render_with(width, 480, true, refs)?;
        write_atomic(path, svg.as_bytes())
    }

    /// [`Self::save_svg`] with the legend right of the plot, outside the data (wider canvas).
    pub fn save_svg_legend_right(&self, path: &Path) -> Result<()> {
        let svg = self.to_svg_legend_right(720 + LEGEND_WIDTH, 480)?;
        write_atomic(path, svg.as_bytes())
    }
}

/// Draws each reference value as a dashed line across `[x0, x1]`.
fn draw_refs<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    refs: &[RefLine],
    x0: f64,
    x1: f64,
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for r in refs.iter().filter(|r| r.y.is_finite() && r.y > 0.0) {
        let color = RGBColor(r.color.0, r.color.1, r.color.2);
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, r.y), (x1, r.y)],
                6,
                4,
                color.stroke_width(2),
            ))
            .map_err(|e| anyhow!("{e:?}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_an_svg_with_every_label() {
        let fig = ErrorFigure {
            title: "toy".into(),
            x_label: "passes".into(),
            y_label: "relative error".into(),
            log_x: true,
            series: vec![
                Series {
                    label: "dp-cd".into(),
                    points: vec![
                        BandPoint {
                            x: 2.0,
                            mean: 0.1,
                            min: 0.05,
                            max: 0.2,
                        },
                        BandPoint {
                            x: 50.0,
                            mean: 0.01,
                            min: 0.005,
                            max: 0.02,
                        },
                    ],
                    color: None,
                },
                Series {
                    label: "dp-sgd".into(),
                    points: vec![BandPoint {
                        x: 5.0,
                        mean: 0.3,
                        min: 0.3,
                        max: 0.3,
                    }],
                    color: Some((214, 39, 40)),
                },
            ],
        };
        let svg = fig.to_svg(400, 300).unwrap();
        assert!(svg.starts_with("<svg"));
        for needle in [
            "toy",
            "passes",
            "relative error",
            "dp-cd",
            "dp-sgd",
            "<polygon",
        ] {
            assert!(svg.contains(needle), "missing {needle}");
        }
        assert_eq!(log_keys(0.015, 0.6), vec![0.02, 0.05, 0.1, 0.2, 0.5]);
        // A diverged series is capped so the others stay readable, and the title says so.
        let mut diverged = fig.clone();
        diverged.series[1].points[0].mean = 1e12;
        diverged.series[1].points[0].max = 1e13;
        let svg = diverged.to_svg(400, 300).unwrap();
        assert!(svg.contains("drawn at the top"));
        assert_eq!(format_tick(0.02), "0.02");
        assert_eq!(format_tick(5e-4), "5e-4");
        assert_eq!(format_tick(0.001), "0.001");
        assert_eq!(format_tick(0.0), "0");
        // Reference lines: dashed, in the legend column right of the plot.
        let refs = [RefLine {
            label: "paper dp-gcd (Table 3)".into(),
            y: 0.05,
            color: PALETTE[0],
        }];
        let svg = fig.render_with(970, 480, true, &refs).unwrap();
        assert!(svg.contains("paper dp-gcd (Table 3)"));
        assert!(svg.contains("#0072B2"), "the palette's blue");
        let plot_right = 970 - LEGEND_WIDTH;
        let label_x = svg
            .split("<text")
            .find(|t| t.contains("\ndp-sgd\n"))
            .and_then(|t| t.split("x=\"").nth(1))
            .and_then(|t| t.split('"').next())
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap();
        assert!(label_x > plot_right as f64, "legend label at x = {label_x}");
        let empty = ErrorFigure {
            series: vec![],
            ..fig
        };
        assert!(empty.to_svg(400, 300).is_err());
    }
}
