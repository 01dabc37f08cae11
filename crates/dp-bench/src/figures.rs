//! Figures like the papers': relative error against the budget (passes or iterations), one
//! line per algorithm with its min / max band, log-scaled error axis. SVG via plotters.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use plotters::prelude::*;

use crate::report::write_atomic;

/// One point of a curve. A value is `None` when the runs gave none (every run diverged, or
/// the summary lacks it): such a point still spans the x axis but draws nothing, and an
/// absent `min` / `max` draws the band at the mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandPoint {
    /// Budget (x axis).
    pub x: f64,
    /// Mean relative error.
    pub mean: Option<f64>,
    /// Minimum over runs.
    pub min: Option<f64>,
    /// Maximum over runs.
    pub max: Option<f64>,
}

impl BandPoint {
    /// A point without spread (a published number, a single run): `min = max = mean`.
    pub fn exact(x: f64, y: f64) -> Self {
        Self {
            x,
            mean: Some(y),
            min: Some(y),
            max: Some(y),
        }
    }
}

/// A point as drawn: its mean finite and positive (the log axis), the band edges filled in.
#[derive(Debug, Clone, Copy)]
struct Drawn {
    x: f64,
    mean: f64,
    min: Option<f64>,
    max: Option<f64>,
}

/// The mean of `p` if it can be drawn on a log axis (finite and positive).
fn drawable(mean: Option<f64>) -> Option<f64> {
    mean.filter(|m| m.is_finite() && *m > 0.0)
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
/// range (only powers of ten when the range spans more than three decades; 1 to 9 and 1.5
/// times them when 1, 2 and 5 would leave fewer than three ticks, as on an accuracy axis
/// from 0.11 to 0.39, which had the one tick 0.2).
fn log_keys(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let keys_with = |mults: &[f64]| {
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
    };
    if b - a > 3 {
        return keys_with(&[1.0]);
    }
    let keys = keys_with(&[1.0, 2.0, 5.0]);
    if keys.len() >= 3 {
        return keys;
    }
    keys_with(&[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
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

/// The most legend entries (series and reference lines) one figure may draw: past six a
/// reader can no longer match a line to its label. A figure with more rows is split by
/// [`save_headline`] into a headline figure and companions, each within the limit.
pub const MAX_SERIES: usize = 6;

/// Narrowest legend column of [`ErrorFigure::to_svg_legend_right`], in pixels.
const LEGEND_MIN_WIDTH: u32 = 250;
/// Widest legend column; longer labels wrap onto a second line.
const LEGEND_MAX_WIDTH: u32 = 430;
/// Approximate advance of one character of the 13 px legend font (DejaVu Sans averages
/// about 7 px; wider than the true mean, so a label never runs past the canvas).
const LEGEND_CHAR_PX: u32 = 7;
/// Pixels left of a legend label (the marker sample).
const LEGEND_TEXT_X: u32 = 34;

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

/// Dark colours outside [`PALETTE`] for a paper's published values (markers and reference
/// lines), so that the paper's number never shares a colour with one of our series.
pub const PAPER_COLORS: [(u8, u8, u8); 3] = [
    (0, 0, 0),     // black
    (120, 60, 0),  // brown
    (90, 20, 110), // dark purple
];

/// A point marker. Every entry of a figure gets its own (see `ErrorFigure`'s markers):
/// our series filled shapes on a line, the paper's values (series labelled `paper ...` and
/// reference lines) open shapes or strokes, so that the two never look alike even in grey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled square.
    Square,
    /// Filled triangle, point up.
    Triangle,
    /// Filled diamond.
    Diamond,
    /// Filled triangle, point down.
    TriangleDown,
    /// Filled pentagon.
    Pentagon,
    /// Diagonal cross.
    Cross,
    /// Upright cross.
    Plus,
    /// Both crosses.
    Star,
    /// Open circle.
    OpenCircle,
    /// Open square.
    OpenSquare,
    /// Open diamond.
    OpenDiamond,
}

/// Markers of our series, in series order.
const FILLED_MARKERS: [Marker; MAX_SERIES] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Pentagon,
];
/// Markers of the paper's values, in order.
const OPEN_MARKERS: [Marker; MAX_SERIES] = [
    Marker::Cross,
    Marker::Plus,
    Marker::Star,
    Marker::OpenCircle,
    Marker::OpenSquare,
    Marker::OpenDiamond,
];

/// `m` at `at` (any coordinate), drawn in pixels around it (legend samples).
fn marker_element<'a, DB, C>(m: Marker, at: C, color: RGBColor) -> DynElement<'a, DB, C>
where
    DB: DrawingBackend + 'a,
    C: Clone + 'a,
{
    let (fill, line) = (color.filled(), color.stroke_width(2));
    match shape(m) {
        Shape::Poly(o) => (EmptyElement::at(at) + Polygon::new(o, fill)).into_dyn(),
        Shape::Round(r, filled) => {
            let style = if filled { fill } else { line };
            (EmptyElement::at(at) + Circle::new((0, 0), r, style)).into_dyn()
        }
        Shape::Lines(ls) => {
            // One path: an outline as it is; the strokes of a cross all pass through the
            // centre, so joining them there draws exactly the cross.
            let path: Vec<(i32, i32)> = if ls.len() == 1 {
                ls.into_iter().flatten().collect()
            } else {
                ls.into_iter()
                    .flat_map(|l| std::iter::once((0, 0)).chain(l).chain([(0, 0)]))
                    .collect()
            };
            (EmptyElement::at(at) + PathElement::new(path, line)).into_dyn()
        }
    }
}

/// A marker's outline in pixels around its point.
enum Shape {
    /// A filled polygon.
    Poly(Vec<(i32, i32)>),
    /// Stroked polylines.
    Lines(Vec<Vec<(i32, i32)>>),
    /// A circle of this radius, filled or stroked.
    Round(i32, bool),
}

fn shape(m: Marker) -> Shape {
    let regular = |k: usize, r: f64, turn: f64| -> Vec<(i32, i32)> {
        (0..k)
            .map(|i| {
                let a = turn + std::f64::consts::TAU * i as f64 / k as f64;
                ((r * a.cos()).round() as i32, (r * a.sin()).round() as i32)
            })
            .collect()
    };
    let up = -std::f64::consts::FRAC_PI_2;
    let closed = |mut v: Vec<(i32, i32)>| {
        v.push(v[0]);
        v
    };
    match m {
        Marker::Circle => Shape::Round(4, true),
        Marker::Square => Shape::Poly(vec![(-4, -4), (4, -4), (4, 4), (-4, 4)]),
        Marker::Triangle => Shape::Poly(regular(3, 5.5, up)),
        Marker::Diamond => Shape::Poly(vec![(0, -5), (5, 0), (0, 5), (-5, 0)]),
        Marker::TriangleDown => Shape::Poly(regular(3, 5.5, -up)),
        Marker::Pentagon => Shape::Poly(regular(5, 5.0, up)),
        Marker::Cross => Shape::Lines(vec![vec![(-5, -5), (5, 5)], vec![(-5, 5), (5, -5)]]),
        Marker::Plus => Shape::Lines(vec![vec![(-6, 0), (6, 0)], vec![(0, -6), (0, 6)]]),
        Marker::Star => Shape::Lines(vec![
            vec![(-5, -5), (5, 5)],
            vec![(-5, 5), (5, -5)],
            vec![(-6, 0), (6, 0)],
            vec![(0, -6), (0, 6)],
        ]),
        Marker::OpenCircle => Shape::Round(5, false),
        Marker::OpenSquare => Shape::Lines(vec![closed(vec![(-5, -5), (5, -5), (5, 5), (-5, 5)])]),
        Marker::OpenDiamond => Shape::Lines(vec![closed(vec![(0, -6), (6, 0), (0, 6), (-6, 0)])]),
    }
}

/// Draws `m` at every point of `at` on a chart.
fn chart_markers<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    m: Marker,
    at: &[(f64, f64)],
    color: RGBColor,
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let (fill, line) = (color.filled(), color.stroke_width(2));
    match shape(m) {
        Shape::Poly(o) => {
            chart
                .draw_series(
                    at.iter()
                        .map(|&c| EmptyElement::at(c) + Polygon::new(o.clone(), fill)),
                )
                .map_err(|e| anyhow!("{e:?}"))?;
        }
        Shape::Lines(ls) => {
            for l in ls {
                chart
                    .draw_series(
                        at.iter()
                            .map(|&c| EmptyElement::at(c) + PathElement::new(l.clone(), line)),
                    )
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
        }
        Shape::Round(r, filled) => {
            let style = if filled { fill } else { line };
            chart
                .draw_series(
                    at.iter()
                        .map(|&c| EmptyElement::at(c) + Circle::new((0, 0), r, style)),
                )
                .map_err(|e| anyhow!("{e:?}"))?;
        }
    }
    Ok(())
}

/// Splits `label` into lines of at most `width` characters at spaces (a word longer than
/// the width stays whole).
fn wrap(label: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in label.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

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

/// One legend entry as drawn: a series or a reference line.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// Its label.
    pub label: String,
    /// Its colour.
    pub color: (u8, u8, u8),
    /// Its marker.
    pub marker: Marker,
}

/// Which series (or reference line) a slot of a headline figure holds: see
/// [`save_headline`].
pub enum Pick<'a> {
    /// The entry with this exact label, if the figure has it.
    Label(&'a str),
    /// Among the entries whose label passes the test, the one with the lowest values (the
    /// mean of the log of its plotted means; a reference line's value): "ours at its
    /// best", "the strongest baseline". Every figure's y axis is an error (lower is better).
    Lowest(&'a dyn Fn(&str) -> bool),
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

    /// The legend as drawn with `refs`: every series, then every reference line, each with
    /// its colour (the series' own; a free palette colour, in order, for a series without
    /// one) and marker (filled shapes for our series, open ones for the paper's values).
    pub fn legend(&self, refs: &[RefLine]) -> Vec<LegendEntry> {
        let fixed: Vec<(u8, u8, u8)> = self.series.iter().filter_map(|s| s.color).collect();
        let mut free = PALETTE.iter().filter(|c| !fixed.contains(*c)).cycle();
        let (mut filled, mut open) = (0, 0);
        let mut next = |paper: bool| {
            let (pool, k) = if paper {
                (&OPEN_MARKERS, &mut open)
            } else {
                (&FILLED_MARKERS, &mut filled)
            };
            let m = pool[*k % pool.len()];
            *k += 1;
            m
        };
        let mut out: Vec<LegendEntry> = self
            .series
            .iter()
            .map(|s| LegendEntry {
                label: s.label.clone(),
                color: s
                    .color
                    .unwrap_or_else(|| *free.next().unwrap_or(&PALETTE[0])),
                marker: next(s.label.starts_with("paper")),
            })
            .collect();
        out.extend(refs.iter().map(|r| LegendEntry {
            label: r.label.clone(),
            color: r.color,
            marker: next(true),
        }));
        out
    }

    /// Whether a reader can take the figure in: at most [`MAX_SERIES`] legend entries,
    /// no colour, marker or label used twice. Every `save_*` checks it and refuses a figure
    /// that fails (the error names the entries); [`save_headline`] splits a larger one.
    pub fn check_legible(&self, refs: &[RefLine]) -> Result<()> {
        let legend = self.legend(refs);
        if legend.len() > MAX_SERIES {
            let labels: Vec<&str> = legend.iter().map(|e| e.label.as_str()).collect();
            bail!(
                "figure '{}' draws {} series, more than {MAX_SERIES} ({}): split it with save_headline",
                self.title,
                legend.len(),
                labels.join("; ")
            );
        }
        for (i, a) in legend.iter().enumerate() {
            for b in &legend[i + 1..] {
                if a.color == b.color {
                    bail!(
                        "figure '{}': '{}' and '{}' share the colour {:?}",
                        self.title,
                        a.label,
                        b.label,
                        a.color
                    );
                }
                if a.marker == b.marker {
                    bail!(
                        "figure '{}': '{}' and '{}' share the marker {:?}",
                        self.title,
                        a.label,
                        b.label,
                        a.marker
                    );
                }
                if a.label == b.label {
                    bail!("figure '{}': the label '{}' twice", self.title, a.label);
                }
            }
        }
        Ok(())
    }

    /// Width of the legend column that fits the longest label (up to a cap; longer labels
    /// wrap).
    fn legend_width(&self, refs: &[RefLine]) -> u32 {
        let longest = self
            .series
            .iter()
            .map(|s| s.label.chars().count())
            .chain(refs.iter().map(|r| r.label.chars().count()))
            .max()
            .unwrap_or(0) as u32;
        (LEGEND_TEXT_X + 8 + LEGEND_CHAR_PX * longest).clamp(LEGEND_MIN_WIDTH, LEGEND_MAX_WIDTH)
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
        // A point whose mean is not positive (a non-private run at F* to rounding: its
        // relative error is 0 or -1e-17) is not drawn on the log axis, so its band must not
        // stretch the axis either (it used to add ten empty decades down to 1e-15).
        let mut not_drawn = 0;
        for p in pts() {
            x0 = x0.min(p.x);
            x1 = x1.max(p.x);
            if drawable(p.mean).is_none() {
                not_drawn += usize::from(p.mean.is_some_and(f64::is_finite));
                continue;
            }
            for y in [p.min, p.mean, p.max].into_iter().flatten() {
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
        let mut means: Vec<f64> = pts().filter_map(|p| drawable(p.mean)).collect();
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
        // Where the note on undrawn points goes: near the bottom-left corner of the plot.
        let note_at = (
            if self.log_x {
                x0 * (x1 / x0).powf(0.02)
            } else {
                x0 + 0.02 * (x1 - x0)
            },
            y0 * (y1 / y0).powf(0.07),
        );
        let legend = self.legend(refs);
        let mut svg = String::new();
        {
            let full = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
            full.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
            let legend_width = if legend_right {
                self.legend_width(refs).min(width / 2)
            } else {
                0
            };
            let (root, side) = full.split_horizontally(width - legend_width);
            let title_px = caption_size(&title, width - legend_width);
            let y_axis = (y0..y1).log_scale().with_key_points(y_keys);
            if self.log_x {
                let x_axis = (x0..x1).log_scale().with_key_points(x_keys);
                let mut chart = ChartBuilder::on(&root)
                    .caption(&title, ("sans-serif", title_px))
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
                draw_refs(&mut chart, refs, &legend[self.series.len()..], x0, x1, true)?;
                self.draw_series(&mut chart, &legend, cap, !legend_right)?;
                draw_note(&mut chart, not_drawn, note_at)?;
            } else {
                let mut chart = ChartBuilder::on(&root)
                    .caption(&title, ("sans-serif", title_px))
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
                draw_refs(
                    &mut chart,
                    refs,
                    &legend[self.series.len()..],
                    x0,
                    x1,
                    false,
                )?;
                self.draw_series(&mut chart, &legend, cap, !legend_right)?;
                draw_note(&mut chart, not_drawn, note_at)?;
            }
            if legend_right {
                draw_side_legend(&side, &legend, self.series.len(), legend_width)?;
            }
            full.present().map_err(|e| anyhow!("{e:?}"))?;
        }
        Ok(svg)
    }

    fn draw_series<'a, X, Y>(
        &self,
        chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
        legend: &[LegendEntry],
        cap: f64,
        inner_legend: bool,
    ) -> Result<()>
    where
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        for (s, entry) in self.series.iter().zip(legend) {
            let (r, g, b) = entry.color;
            let color = RGBColor(r, g, b);
            let marker = entry.marker;
            let mut pts: Vec<Drawn> = s
                .points
                .iter()
                .filter_map(|p| {
                    drawable(p.mean).map(|mean| Drawn {
                        x: p.x,
                        mean: mean.min(cap),
                        min: p.min.map(|v| v.min(cap)),
                        max: p.max.map(|v| v.min(cap)),
                    })
                })
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            if pts.is_empty() {
                continue;
            }
            let at: Vec<(f64, f64)> = pts.iter().map(|p| (p.x, p.mean)).collect();
            if s.label.starts_with("paper") {
                chart_markers(chart, marker, &at, color)?;
                chart
                    .draw_series(LineSeries::new(std::iter::empty::<(f64, f64)>(), color))
                    .map_err(|e| anyhow!("{e:?}"))?
                    .label(s.label.clone())
                    // The inner legend (`to_svg`) samples colour only; the side legend of
                    // every saved figure draws the markers.
                    .legend(move |(x, y)| Cross::new((x + 10, y), 6, color.stroke_width(2)));
                continue;
            }
            // Min / max band as a filled polygon (lower edge forward, upper edge back); an
            // edge that is absent or not drawable on the log axis is drawn at the mean.
            let band: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.x, drawable(p.min).map_or(p.mean, |v| v.min(p.mean))))
                .chain(
                    pts.iter()
                        .rev()
                        .map(|p| (p.x, drawable(p.max).map_or(p.mean, |v| v.max(p.mean)))),
                )
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(
                    band,
                    color.mix(0.15).filled(),
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
            chart_markers(chart, marker, &at, color)?;
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

    /// Renders and writes the SVG atomically, the legend right of the plot (outside the
    /// data: a legend inside hides curves). Refuses a figure that fails
    /// [`Self::check_legible`].
    pub fn save_svg(&self, path: &Path) -> Result<()> {
        self.save_svg_legend_right(path)
    }

    /// [`Self::save_svg`] with the paper's budget-less values as dashed horizontal lines.
    pub fn save_svg_with_refs(&self, path: &Path, refs: &[RefLine]) -> Result<()> {
        self.check_legible(refs)?;
        let width = 720 + self.legend_width(refs);
        let svg = self.render_with(width, 480, true, refs)?;
        write_atomic(path, svg.as_bytes())
    }

    /// [`Self::save_svg`] with the legend right of the plot, outside the data (wider canvas).
    pub fn save_svg_legend_right(&self, path: &Path) -> Result<()> {
        self.save_svg_with_refs(path, &[])
    }
}

/// The caption's font size in pixels: 18, or smaller (down to 11) so that a long title
/// fits the plot's width instead of running past the canvas edge (DP-SCD's Fig. 2 title,
/// 85 characters over a 750-pixel plot, lost its first letters). DejaVu Sans averages
/// about 0.5 em per character; 0.55 leaves a margin.
fn caption_size(title: &str, plot_width: u32) -> f64 {
    let chars = title.chars().count().max(1) as f64;
    (f64::from(plot_width.saturating_sub(30)) / (0.55 * chars)).clamp(11.0, 18.0)
}

/// Says, inside the plot at its bottom left, how many points are not drawn because their
/// mean is not positive (at `F*` to rounding: no place on a log axis); nothing when none.
fn draw_note<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    not_drawn: usize,
    at: (f64, f64),
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    if not_drawn == 0 {
        return Ok(());
    }
    let text = format!(
        "{not_drawn} point{} with mean <= 0 (at F* to rounding) not drawn",
        if not_drawn == 1 { "" } else { "s" }
    );
    chart
        .plotting_area()
        .draw(&Text::new(
            text,
            at,
            ("sans-serif", 12).into_font().color(&BLACK),
        ))
        .map_err(|e| anyhow!("{e:?}"))?;
    Ok(())
}

/// One line per legend entry, in order, in the area right of the plot; a label longer than
/// the column wraps onto further lines.
fn draw_side_legend(
    side: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    legend: &[LegendEntry],
    n_series: usize,
    column: u32,
) -> Result<()> {
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    let chars = ((column.saturating_sub(LEGEND_TEXT_X + 6)) / LEGEND_CHAR_PX).max(12) as usize;
    let mut y = 60;
    for (i, e) in legend.iter().enumerate() {
        let color = RGBColor(e.color.0, e.color.1, e.color.2);
        if i >= n_series {
            side.draw(&plotters::element::DashedPathElement::new(
                vec![(4, y), (30, y)],
                5,
                3,
                color.stroke_width(2),
            ))
            .map_err(|e| anyhow!("{e:?}"))?;
        } else if !e.label.starts_with("paper") {
            side.draw(&PathElement::new(
                vec![(6, y), (28, y)],
                color.stroke_width(2),
            ))
            .map_err(|e| anyhow!("{e:?}"))?;
        }
        side.draw(&marker_element(e.marker, (17, y), color))
            .map_err(|e| anyhow!("{e:?}"))?;
        let lines = wrap(&e.label, chars);
        for (k, line) in lines.iter().enumerate() {
            side.draw(&Text::new(
                line.clone(),
                (LEGEND_TEXT_X as i32, y - 7 + 16 * k as i32),
                style.clone(),
            ))
            .map_err(|e| anyhow!("{e:?}"))?;
        }
        y += 16 * lines.len() as i32 + 10;
    }
    Ok(())
}

/// Score of a legend entry for [`Pick::Lowest`]: the mean of the log of the plotted means
/// (a reference line: the log of its value); `None` when nothing positive is plotted.
fn score(fig: &ErrorFigure, refs: &[RefLine], label: &str) -> Option<f64> {
    if let Some(s) = fig.series.iter().find(|s| s.label == label) {
        let logs: Vec<f64> = s
            .points
            .iter()
            .filter_map(|p| drawable(p.mean))
            .map(f64::ln)
            .collect();
        return (!logs.is_empty()).then(|| logs.iter().sum::<f64>() / logs.len() as f64);
    }
    refs.iter()
        .find(|r| r.label == label)
        .and_then(|r| (r.y.is_finite() && r.y > 0.0).then(|| r.y.ln()))
}

/// What [`save_headline`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedFigures {
    /// The headline figure's file and its legend (at most [`MAX_SERIES`] entries).
    pub headline: (std::path::PathBuf, Vec<String>),
    /// Each companion figure's file and legend (the rows the headline leaves out, with the
    /// context rows repeated in each).
    pub more: Vec<(std::path::PathBuf, Vec<String>)>,
}

/// Writes `fig` (with its reference lines `refs`) as one headline figure at `path` holding
/// the entries `picks` choose, in their order (a pick that matches nothing, or an entry
/// already chosen, is skipped; at most [`MAX_SERIES`] are kept), and every other entry in
/// companion figures `<stem>-more.svg`, `<stem>-more2.svg`, ... beside it, each repeating the
/// entries labelled in `context` (e.g. the non-private line) and within the limit. Every
/// figure written passes [`ErrorFigure::check_legible`].
pub fn save_headline(
    fig: &ErrorFigure,
    refs: &[RefLine],
    picks: &[Pick<'_>],
    context: &[&str],
    path: &Path,
) -> Result<SavedFigures> {
    let labels: Vec<&str> = fig
        .series
        .iter()
        .map(|s| s.label.as_str())
        .chain(refs.iter().map(|r| r.label.as_str()))
        .collect();
    let mut chosen: Vec<&str> = Vec::new();
    for pick in picks {
        if chosen.len() == MAX_SERIES {
            break;
        }
        let hit = match pick {
            Pick::Label(l) => labels.iter().copied().find(|x| x == l),
            Pick::Lowest(test) => labels
                .iter()
                .copied()
                .filter(|l| test(l) && !chosen.contains(l))
                .filter_map(|l| score(fig, refs, l).map(|s| (l, s)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(l, _)| l),
        };
        if let Some(l) = hit {
            if !chosen.contains(&l) {
                chosen.push(l);
            }
        }
    }
    let subset = |keep: &[&str], title: String| -> (ErrorFigure, Vec<RefLine>) {
        (
            ErrorFigure {
                title,
                series: fig
                    .series
                    .iter()
                    .filter(|s| keep.contains(&s.label.as_str()))
                    .cloned()
                    .collect(),
                ..fig.clone()
            },
            refs.iter()
                .filter(|r| keep.contains(&r.label.as_str()))
                .cloned()
                .collect(),
        )
    };
    let (head, head_refs) = subset(&chosen, fig.title.clone());
    head.save_svg_with_refs(path, &head_refs)?;
    let rest: Vec<&str> = labels
        .iter()
        .copied()
        .filter(|l| !chosen.contains(l) && !context.contains(l))
        .collect();
    let ctx: Vec<&str> = labels
        .iter()
        .copied()
        .filter(|l| context.contains(l))
        .collect();
    let per = MAX_SERIES.saturating_sub(ctx.len()).max(1);
    let chunks: Vec<&[&str]> = rest.chunks(per).collect();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut more = Vec::new();
    for (k, chunk) in chunks.iter().enumerate() {
        let keep: Vec<&str> = chunk.iter().chain(&ctx).copied().collect();
        let title = if chunks.len() == 1 {
            format!("{}: other rows", fig.title)
        } else {
            format!("{}: other rows ({}/{})", fig.title, k + 1, chunks.len())
        };
        let (f, r) = subset(&keep, title);
        if f.series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        let name = if k == 0 {
            format!("{stem}-more.svg")
        } else {
            format!("{stem}-more{}.svg", k + 1)
        };
        let p = path.with_file_name(name);
        f.save_svg_with_refs(&p, &r)?;
        more.push((p, f.legend(&r).into_iter().map(|e| e.label).collect()));
    }
    Ok(SavedFigures {
        headline: (
            path.to_path_buf(),
            head.legend(&head_refs)
                .into_iter()
                .map(|e| e.label)
                .collect(),
        ),
        more,
    })
}

/// Draws each reference value as a dashed line across `[x0, x1]`, with its legend marker
/// at three places along it (so that it is told apart from the others without colour).
fn draw_refs<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    refs: &[RefLine],
    legend: &[LegendEntry],
    x0: f64,
    x1: f64,
    log_x: bool,
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (r, entry) in refs.iter().zip(legend) {
        if !(r.y.is_finite() && r.y > 0.0) {
            continue;
        }
        let color = RGBColor(r.color.0, r.color.1, r.color.2);
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, r.y), (x1, r.y)],
                6,
                4,
                color.stroke_width(2),
            ))
            .map_err(|e| anyhow!("{e:?}"))?;
        let at = |t: f64| {
            if log_x {
                (x0.ln() + t * (x1.ln() - x0.ln())).exp()
            } else {
                x0 + t * (x1 - x0)
            }
        };
        let marks: Vec<(f64, f64)> = [0.15, 0.5, 0.85].iter().map(|&t| (at(t), r.y)).collect();
        chart_markers(chart, entry.marker, &marks, color)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A non-private run at F* to rounding has a mean <= 0 and a band of +-1e-16: it is
    /// not drawn, and its band must not stretch the log axis down to 1e-15 (the quick
    /// run's sparse-lasso figure had ten empty decades); a note says it is left out.
    #[test]
    fn a_point_at_f_star_neither_draws_nor_stretches_the_axis() {
        let point = |x: f64, mean: f64, min: f64, max: f64| BandPoint {
            x,
            mean: Some(mean),
            min: Some(min),
            max: Some(max),
        };
        let fig = |last_mean: f64| ErrorFigure {
            title: "toy".into(),
            x_label: "passes".into(),
            y_label: "relative error".into(),
            log_x: true,
            series: vec![Series {
                label: "cd".into(),
                points: vec![
                    point(2.0, 0.1, 0.05, 0.2),
                    point(20.0, 1e-3, 5e-4, 2e-3),
                    point(50.0, last_mean, -5.6e-16, 5.6e-16),
                ],
                color: None,
            }],
        };
        // A tick label is a text element's whole line.
        let tick = |svg: &str, t: &str| svg.lines().any(|l| l.trim() == t);
        let svg = fig(-2.8e-17).to_svg_legend_right(800, 400).unwrap();
        assert!(tick(&svg, "0.001"), "{svg}");
        assert!(!tick(&svg, "1e-15") && !tick(&svg, "1e-10"), "{svg}");
        assert!(
            svg.contains("1 point with mean") && svg.contains("(at F* to rounding) not drawn"),
            "{svg}"
        );
        // Drawn (positive mean): the band counts and no note is written.
        let svg = fig(1e-15).to_svg_legend_right(800, 400).unwrap();
        assert!(tick(&svg, "1e-15"), "{svg}");
        assert!(!svg.contains("not drawn"), "{svg}");
    }

    #[test]
    fn a_long_title_shrinks_to_fit_the_plot() {
        assert_eq!(caption_size("toy", 750), 18.0);
        let long = "Fig. 2: ridge objective vs epochs, eps = 1, delta = 0.001 [synthetic stand-in for YearPredictionMSD]";
        let px = caption_size(long, 750);
        assert!((11.0..18.0).contains(&px), "{px}");
        // At that size the title's estimated width fits the plot.
        assert!(0.55 * px * long.chars().count() as f64 <= 720.0, "{px}");
    }

    #[test]
    fn a_narrow_log_axis_gets_at_least_three_ticks() {
        // Adult's accuracy axis: 1, 2 and 5 gave the single tick 0.2.
        let close = |k: Vec<f64>, want: &[f64]| {
            assert_eq!(k.len(), want.len(), "{k:?}");
            for (got, w) in k.iter().zip(want) {
                assert!((got / w - 1.0).abs() < 1e-9, "{k:?}");
            }
        };
        close(log_keys(0.11, 0.39), &[0.15, 0.2, 0.3]);
        // A wide axis keeps 1, 2 and 5, and past three decades the powers of ten alone.
        close(log_keys(0.011, 0.9), &[0.02, 0.05, 0.1, 0.2, 0.5]);
        close(
            log_keys(9e-7, 1.1),
            &[1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0],
        );
    }

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
                            mean: Some(0.1),
                            min: Some(0.05),
                            max: Some(0.2),
                        },
                        BandPoint {
                            x: 50.0,
                            mean: Some(0.01),
                            min: Some(0.005),
                            max: Some(0.02),
                        },
                    ],
                    color: None,
                },
                Series {
                    label: "dp-sgd".into(),
                    points: vec![BandPoint {
                        x: 5.0,
                        mean: Some(0.3),
                        min: Some(0.3),
                        max: Some(0.3),
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
        diverged.series[1].points[0].mean = Some(1e12);
        diverged.series[1].points[0].max = Some(1e13);
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
        let plot_right = 970 - fig.legend_width(&refs);
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

    fn flat(label: &str, y: f64, color: Option<(u8, u8, u8)>) -> Series {
        Series {
            label: label.into(),
            points: [1.0, 10.0]
                .iter()
                .map(|&x| BandPoint::exact(x, y))
                .collect(),
            color,
        }
    }

    fn figure(series: Vec<Series>) -> ErrorFigure {
        ErrorFigure {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            series,
        }
    }

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("dp-bench-fig-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_figure_past_six_series_or_with_a_shared_colour_is_refused() {
        let dir = temp_dir("refuse");
        let six: Vec<Series> = (0..6)
            .map(|i| flat(&format!("s{i}"), 0.1 * (i + 1) as f64, None))
            .collect();
        let ok = figure(six.clone());
        ok.check_legible(&[]).unwrap();
        ok.save_svg(&dir.join("six.svg")).unwrap();
        let legend = ok.legend(&[]);
        for (i, a) in legend.iter().enumerate() {
            for b in &legend[i + 1..] {
                assert_ne!(a.color, b.color);
                assert_ne!(a.marker, b.marker);
            }
        }
        // A seventh series: refused, nothing written.
        let mut seven = six.clone();
        seven.push(flat("s6", 0.9, None));
        let err = figure(seven).save_svg(&dir.join("seven.svg")).unwrap_err();
        assert!(err.to_string().contains("more than 6"), "{err}");
        assert!(!dir.join("seven.svg").exists());
        // Six entries counting a reference line is the limit too.
        let refs = [RefLine {
            label: "paper".into(),
            y: 0.05,
            color: PAPER_COLORS[0],
        }];
        assert!(figure(six.clone()).check_legible(&refs).is_err());
        assert!(figure(six[..5].to_vec()).check_legible(&refs).is_ok());
        // Two series with one fixed colour, or a reference line in a series' colour.
        let shared = figure(vec![
            flat("a", 0.1, Some(PALETTE[3])),
            flat("b", 0.2, Some(PALETTE[3])),
        ]);
        let err = shared.check_legible(&[]).unwrap_err();
        assert!(err.to_string().contains("share the colour"), "{err}");
        let clash = figure(vec![flat("a", 0.1, Some(PAPER_COLORS[0]))]);
        assert!(clash.check_legible(&refs).is_err());
        // A series without a colour never takes one a fixed series holds.
        let mixed = figure(vec![
            flat("free", 0.1, None),
            flat("fixed", 0.2, Some(PALETTE[0])),
        ]);
        mixed.check_legible(&[]).unwrap();
        assert_ne!(mixed.legend(&[])[0].color, PALETTE[0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn save_headline_keeps_the_picks_and_moves_every_other_row_beside_it() {
        let dir = temp_dir("headline");
        // Nineteen rows, as the Adult figure had: ours-0..9 (ours-3 lowest), sgd-0..5
        // (sgd-4 lowest), two peers and non-private.
        let mut series = Vec::new();
        for i in 0..10 {
            let y = if i == 3 { 0.15 } else { 0.2 + 0.01 * i as f64 };
            series.push(flat(&format!("ours-{i}"), y, None));
        }
        for i in 0..6 {
            let y = if i == 4 { 0.16 } else { 0.25 + 0.01 * i as f64 };
            series.push(flat(&format!("sgd-{i}"), y, None));
        }
        series.push(flat("peer a", 0.17, None));
        series.push(flat("peer b", 0.18, None));
        series.push(flat("non-private", 0.14, Some((0, 0, 0))));
        let fig = figure(series);
        assert!(fig.check_legible(&[]).is_err());
        let ours = |l: &str| l.starts_with("ours");
        let sgd = |l: &str| l.starts_with("sgd");
        let saved = save_headline(
            &fig,
            &[],
            &[
                Pick::Label("ours-0"),
                Pick::Lowest(&ours),
                Pick::Lowest(&sgd),
                Pick::Label("peer a"),
                Pick::Label("peer b"),
                Pick::Label("non-private"),
                Pick::Label("ours-9"), // a seventh pick: over the limit, left out
                Pick::Label("absent"),
            ],
            &["non-private"],
            &dir.join("fig.svg"),
        )
        .unwrap();
        assert_eq!(
            saved.headline.1,
            [
                "ours-0",
                "ours-3",
                "sgd-4",
                "peer a",
                "peer b",
                "non-private"
            ]
        );
        assert!(dir.join("fig.svg").is_file());
        // Every other row is in exactly one companion, each within the limit and with the
        // non-private line repeated.
        let mut rest: Vec<String> = Vec::new();
        for (path, labels) in &saved.more {
            assert!(path.is_file(), "{}", path.display());
            assert!(labels.len() <= MAX_SERIES, "{labels:?}");
            assert!(labels.iter().any(|l| l == "non-private"));
            rest.extend(labels.iter().filter(|l| *l != "non-private").cloned());
        }
        assert_eq!(saved.more.len(), 3);
        assert!(dir.join("fig-more.svg").is_file() && dir.join("fig-more3.svg").is_file());
        rest.sort();
        let mut expected: Vec<String> = fig
            .series
            .iter()
            .map(|s| s.label.clone())
            .filter(|l| !saved.headline.1.contains(l))
            .collect();
        expected.sort();
        assert_eq!(rest, expected);
        // A pick may choose a reference line by its value.
        let refs = [
            RefLine {
                label: "paper x".into(),
                y: 0.3,
                color: PAPER_COLORS[1],
            },
            RefLine {
                label: "paper y".into(),
                y: 0.2,
                color: PAPER_COLORS[2],
            },
        ];
        let paper = |l: &str| l.starts_with("paper");
        let small = figure(vec![flat("a", 0.1, None), flat("b", 0.2, None)]);
        let saved = save_headline(
            &small,
            &refs,
            &[Pick::Label("a"), Pick::Lowest(&paper)],
            &[],
            &dir.join("refs.svg"),
        )
        .unwrap();
        assert_eq!(saved.headline.1, ["a", "paper y"]);
        assert_eq!(saved.more.len(), 1);
        assert_eq!(saved.more[0].1, ["b", "paper x"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_legend_labels_wrap_inside_the_canvas() {
        assert_eq!(wrap("a bb ccc", 4), ["a bb", "ccc"]);
        assert_eq!(wrap("", 4), [""]);
        let label = "DP-CD, private M_j (Gaussian, 5 % of mu^2), one-hot support accounting, \
                     permutation order, lambda tuned";
        let fig = figure(vec![flat(label, 0.1, None), flat("b", 0.2, None)]);
        let width = 720 + fig.legend_width(&[]);
        assert_eq!(fig.legend_width(&[]), LEGEND_MAX_WIDTH);
        let svg = fig.to_svg_legend_right(width, 480).unwrap();
        let columns = (LEGEND_MAX_WIDTH - LEGEND_TEXT_X - 6) / LEGEND_CHAR_PX;
        for line in wrap(label, columns as usize) {
            assert!(svg.contains(&line), "missing line {line}");
            let right = (width - LEGEND_MAX_WIDTH + LEGEND_TEXT_X) as usize
                + LEGEND_CHAR_PX as usize * line.chars().count();
            assert!(right <= width as usize, "{line}");
        }
    }
}
