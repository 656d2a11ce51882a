//! The SVG plot of cost per barrier against thread count: one line per algorithm and per
//! baseline, log scale on both axes, with the hardware floor and the point where threads
//! outnumber cores marked.
//!
//! The module knows nothing of the report types: callers hand it [`Series`] of
//! `(threads, ns per barrier)` points, so the plot can be drawn from a live run or from saved
//! results alike.
//!
//! Text needs no font files: plotters is built without `ttf`/`ab_glyph`, so it falls back to
//! its "naive" font, which only *estimates* text extents (from the byte length) and never
//! rasterises glyphs. That is all the SVG backend asks of it: it writes each string as a
//! `<text>` element and lets the viewer pick the font. The estimates are used only for layout
//! (title height, legend width), where being a little generous is harmless.

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What kind of line a series is; the style tells ours from baselines at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesKind {
    /// One of the `phasers` algorithms: a solid coloured line with round markers.
    Ours,
    /// The hand-written reference barrier: a thick black line.
    Reference,
    /// A barrier we compare against (e.g. `std::sync::Barrier`): a dashed grey line with
    /// hollow markers of its own shape.
    Baseline,
}

/// One line of the plot.
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend label.
    pub name: String,
    /// Which style the line is drawn in.
    pub kind: SeriesKind,
    /// `(threads, ns per barrier)`, in any order. Points with zero threads or a cost that is not
    /// finite and positive (a row that failed) are skipped.
    pub points: Vec<(usize, f64)>,
}

/// Everything drawn in one plot.
#[derive(Debug, Clone, Copy)]
pub struct Plot<'a> {
    /// Title across the top.
    pub title: &'a str,
    /// Description of the y axis, e.g. "ns per barrier (median)".
    pub y_label: &'a str,
    /// The lines, drawn with baselines underneath and ours on top; the legend keeps this order.
    pub series: &'a [Series],
    /// The hardware floor in ns: a horizontal dashed line labelled
    /// "floor (cache-line round trip)". Ignored unless finite and positive.
    pub floor_ns: Option<f64>,
    /// Cores available to the run: a vertical marker between the last thread count that fits
    /// and the first that exceeds it, labelled "oversubscribed →". Nothing is drawn when no
    /// measured thread count exceeds it.
    pub cores: Option<usize>,
}

/// Writes `plot` to `path` as an SVG image.
///
/// The whole image is rendered in memory first, so a drawing failure leaves no half-written
/// file behind. Fails, naming the file, when no series has a point worth drawing or when the
/// file cannot be written.
pub fn write_svg(path: &Path, plot: &Plot<'_>) -> Result<(), String> {
    let lines = lines(plot.series);
    if lines.is_empty() {
        return Err(format!(
            "nothing to plot: none of the {} series has a point with a finite, positive cost, \
             so {} was not written",
            plot.series.len(),
            path.display()
        ));
    }
    let svg =
        render_svg(plot, &lines).map_err(|e| format!("cannot plot {}: {e}", path.display()))?;
    std::fs::write(path, svg).map_err(|e| format!("cannot write plot {}: {e}", path.display()))
}

/// The canvas, in pixels.
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 640;

/// Space around the chart and for the axis labels, in pixels.
const MARGIN: u32 = 12;
const Y_LABEL_AREA: u32 = 80;
const X_LABEL_AREA: u32 = 50;

/// Fraction of the data's log span left empty above and below it, so the "oversubscribed"
/// label along the top and the floor label under its line never sit on a data point.
const Y_PAD: f64 = 0.09;
/// The same on the x axis, so the end markers are not cut in half by the frame.
const X_PAD: f64 = 0.04;

/// Distinct colours for our algorithms (the Tableau 10 set without its grey, which belongs to
/// the baselines).
const OURS_COLOURS: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Baselines stay in greys so they read as background; shape and dash tell them apart.
const BASELINE_COLOURS: [RGBColor; 3] = [
    RGBColor(85, 85, 85),
    RGBColor(140, 140, 140),
    RGBColor(110, 110, 110),
];
/// `(dash, gap)` lengths in pixels, cycled through baselines.
const BASELINE_DASHES: [(u32, u32); 4] = [(9, 5), (3, 3), (14, 4), (6, 3)];
const BASELINE_MARKERS: [Marker; 5] = [
    Marker::TriangleUp,
    Marker::Square,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
];

const FLOOR_LABEL: &str = "floor (cache-line round trip)";
const FLOOR_COLOUR: RGBColor = RGBColor(60, 60, 60);
const OVERSUBSCRIBED_LABEL: &str = "oversubscribed →";
const OVERSUBSCRIBED_COLOUR: RGBColor = RGBColor(178, 34, 34);

/// The shapes a data point can be marked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Circle,
    Square,
    TriangleUp,
    TriangleDown,
    Diamond,
    Cross,
}

/// How one series is drawn, resolved from its kind and its rank among series of that kind.
#[derive(Debug, Clone, Copy)]
struct LineStyle {
    colour: RGBColor,
    width: u32,
    /// `Some((dash, gap))` for a dashed line.
    dash: Option<(u32, u32)>,
    marker: Marker,
    marker_size: i32,
    filled: bool,
}

impl LineStyle {
    fn stroke(&self) -> ShapeStyle {
        self.colour.stroke_width(self.width)
    }
}

/// A series reduced to what gets drawn.
struct Line<'a> {
    name: &'a str,
    kind: SeriesKind,
    style: LineStyle,
    /// Valid points, sorted by thread count so the line runs left to right.
    points: Vec<(f64, f64)>,
}

fn is_drawable(&(threads, ns): &(usize, f64)) -> bool {
    threads > 0 && ns.is_finite() && ns > 0.0
}

/// Keeps the series that have something to draw and gives each its style.
fn lines(series: &[Series]) -> Vec<Line<'_>> {
    let (mut ours, mut baselines) = (0, 0);
    let mut lines = Vec::new();
    for s in series {
        let mut points: Vec<(usize, f64)> = s.points.iter().copied().filter(is_drawable).collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by_key(|&(threads, _)| threads);
        let style = match s.kind {
            SeriesKind::Ours => {
                ours += 1;
                LineStyle {
                    colour: OURS_COLOURS[(ours - 1) % OURS_COLOURS.len()],
                    width: 2,
                    dash: None,
                    marker: Marker::Circle,
                    marker_size: 4,
                    filled: true,
                }
            }
            SeriesKind::Reference => LineStyle {
                colour: BLACK,
                width: 4,
                dash: None,
                marker: Marker::Square,
                marker_size: 4,
                filled: true,
            },
            SeriesKind::Baseline => {
                baselines += 1;
                let i = baselines - 1;
                LineStyle {
                    colour: BASELINE_COLOURS[i % BASELINE_COLOURS.len()],
                    width: 2,
                    dash: Some(BASELINE_DASHES[i % BASELINE_DASHES.len()]),
                    marker: BASELINE_MARKERS[i % BASELINE_MARKERS.len()],
                    marker_size: 5,
                    filled: false,
                }
            }
        };
        lines.push(Line {
            name: &s.name,
            kind: s.kind,
            style,
            points: points.into_iter().map(|(t, ns)| (t as f64, ns)).collect(),
        });
    }
    lines
}

/// A logarithmic axis whose grid lines are chosen by the caller.
///
/// plotters' own `log_scale()` picks its key points itself, and `with_key_points` on an `f64`
/// range loses the `ValueFormatter` that `configure_mesh().draw()` requires; this small
/// [`Ranged`] gives exact control over both (measured thread counts on x, 1-2-5 steps on y).
#[derive(Debug, Clone)]
struct LogAxis {
    /// The ends of the axis, as natural logarithms.
    ln_lo: f64,
    ln_hi: f64,
    /// Labelled grid lines.
    bold: Vec<f64>,
    /// Unlabelled grid lines.
    light: Vec<f64>,
}

impl LogAxis {
    /// An axis over `lo..hi` (both positive, `lo < hi`).
    fn new(lo: f64, hi: f64, bold: Vec<f64>, light: Vec<f64>) -> Self {
        Self {
            ln_lo: lo.ln(),
            ln_hi: hi.ln(),
            bold,
            light,
        }
    }

    fn lo(&self) -> f64 {
        self.ln_lo.exp()
    }

    fn hi(&self) -> f64 {
        self.ln_hi.exp()
    }
}

impl Ranged for LogAxis {
    // Every label goes through our own formatter; this only satisfies `draw()`'s bound.
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value.ln() - self.ln_lo) / (self.ln_hi - self.ln_lo);
        // Only reachable with a non-positive value, which is filtered out before drawing; pin
        // it to the low end rather than produce a nonsense coordinate.
        let t = if t.is_finite() { t } else { 0.0 };
        limit.0 + (f64::from(limit.1 - limit.0) * t).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo()..self.hi()
    }
}

/// Widens the log range `lo..hi` by `pad` of its span each side, or to a range around it when
/// it is a single value.
fn padded_log_range(lo: f64, hi: f64, single_span: f64, pad: f64) -> (f64, f64) {
    let (lo, hi) = if hi - lo < 1e-9 {
        (lo - single_span / 2.0, hi + single_span / 2.0)
    } else {
        (lo, hi)
    };
    let span = hi - lo;
    (lo - span * pad, hi + span * pad)
}

/// The x axis: log2 of the thread count, so doublings are evenly spaced and 1,2,3,4 still
/// spreads out. Every measured count gets a grid line; labels are thinned so they never
/// collide, keeping the first and the last.
fn thread_axis(counts: &[usize], plot_width_px: f64) -> LogAxis {
    let log2: Vec<f64> = counts.iter().map(|&c| (c as f64).log2()).collect();
    let (lo, hi) = padded_log_range(log2[0], log2[log2.len() - 1], 2.0, X_PAD);
    let widest = counts
        .iter()
        .map(|c| c.to_string().len())
        .max()
        .unwrap_or(1) as f64;
    // About 8 px a digit at the label size, plus a gap.
    let min_gap = (widest * 8.0 + 10.0) / plot_width_px * (hi - lo);
    let mut labelled: Vec<usize> = Vec::new();
    for (i, &x) in log2.iter().enumerate() {
        if labelled.last().map_or(true, |&j| x - log2[j] >= min_gap) {
            labelled.push(i);
        }
    }
    let last = log2.len() - 1;
    if labelled.last() != Some(&last) {
        // The largest count matters most (it is where oversubscription shows), so it displaces
        // the label before it rather than being dropped.
        if labelled.len() > 1 {
            labelled.pop();
        }
        if log2[last] - log2[labelled[labelled.len() - 1]] >= min_gap {
            labelled.push(last);
        }
    }
    let as_f64 = |i: usize| counts[i] as f64;
    LogAxis::new(
        lo.exp2(),
        hi.exp2(),
        labelled.into_iter().map(as_f64).collect(),
        (0..counts.len()).map(as_f64).collect(),
    )
}

/// The y axis: log10 of nanoseconds, labelled at 1-2-5 steps when that gives a handful of
/// labels, at whole decades when the data spans more, and with finer steps when it spans
/// less.
fn cost_axis(min_ns: f64, max_ns: f64) -> LogAxis {
    let (lo, hi) = padded_log_range(min_ns.log10(), max_ns.log10(), 1.0, Y_PAD);
    let in_range = |v: &f64| *v >= 10f64.powf(lo) && *v <= 10f64.powf(hi);
    let steps = |mantissas: &[f64]| -> Vec<f64> {
        (lo.floor() as i32..=hi.ceil() as i32)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(in_range)
            .collect()
    };
    let one_two_five = steps(&[1.0, 2.0, 5.0]);
    let mut bold = match one_two_five.len() {
        0..=2 => steps(&[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
        3..=8 => one_two_five,
        _ => steps(&[1.0]),
    };
    // Very wide spans (a broken run next to a good one) would crowd the axis; label every
    // n-th decade instead.
    let stride = bold.len().div_ceil(12).max(1);
    if stride > 1 {
        bold = bold.into_iter().step_by(stride).collect();
    }
    let span = hi - lo;
    let light = if span <= 6.0 {
        steps(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    } else {
        Vec::new()
    };
    LogAxis::new(10f64.powf(lo), 10f64.powf(hi), bold, light)
}

/// A duration in nanoseconds with a unit that keeps the number short: "500 ns", "1 µs",
/// "2.5 ms".
fn format_ns(ns: f64) -> String {
    if !ns.is_finite() || ns <= 0.0 {
        return format!("{ns} ns");
    }
    // Round to three significant figures first so 999.9999 ns reads "1 µs", not "1000 ns".
    let rounded: f64 = format!("{ns:.2e}").parse().unwrap_or(ns);
    let (scale, unit) = match rounded {
        v if v >= 1e9 => (1e9, "s"),
        v if v >= 1e6 => (1e6, "ms"),
        v if v >= 1e3 => (1e3, "µs"),
        _ => (1.0, "ns"),
    };
    let v = rounded / scale;
    let decimals = (2 - v.log10().floor() as i32).max(0) as usize;
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text} {unit}")
}

/// Shortens a legend label to `max_chars`, marking the cut.
fn truncate(name: &str, max_chars: usize) -> String {
    if name.chars().count() <= max_chars {
        name.to_owned()
    } else {
        let kept: String = name.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

/// Turns a plotters error into text saying which step failed.
fn step<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what} failed: {e}")
}

/// Draws one marker centred on a pixel of `area`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    style: &LineStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let r = style.marker_size;
    let fill = style.colour.filled();
    // Hollow markers keep overlapping baselines legible; a 2 px outline matches their line.
    let outline = style.colour.stroke_width(2);
    let outline_of = |mut corners: Vec<(i32, i32)>| {
        corners.push(corners[0]);
        PathElement::new(corners, outline)
    };
    let corners = match style.marker {
        Marker::Circle => {
            return area.draw(&Circle::new(
                (x, y),
                r,
                if style.filled { fill } else { outline },
            ));
        }
        Marker::Cross => {
            area.draw(&PathElement::new(
                vec![(x - r, y - r), (x + r, y + r)],
                outline,
            ))?;
            return area.draw(&PathElement::new(
                vec![(x - r, y + r), (x + r, y - r)],
                outline,
            ));
        }
        Marker::Square => vec![
            (x - r, y - r),
            (x + r, y - r),
            (x + r, y + r),
            (x - r, y + r),
        ],
        Marker::TriangleUp => vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
        Marker::TriangleDown => vec![(x, y + r + 1), (x + r + 1, y - r), (x - r - 1, y - r)],
        Marker::Diamond => vec![
            (x, y - r - 1),
            (x + r + 1, y),
            (x, y + r + 1),
            (x - r - 1, y),
        ],
    };
    if style.filled {
        area.draw(&Polygon::new(corners, fill))
    } else {
        area.draw(&outline_of(corners))
    }
}

/// Renders the plot of `lines` (at least one) to an SVG document.
fn render_svg(plot: &Plot<'_>, lines: &[Line<'_>]) -> Result<String, String> {
    let floor_ns = plot.floor_ns.filter(|f| f.is_finite() && *f > 0.0);

    let mut counts: Vec<usize> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|&(t, _)| t as usize))
        .collect();
    counts.sort_unstable();
    counts.dedup();
    let costs = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|&(_, ns)| ns))
        .chain(floor_ns);
    let (min_ns, max_ns) = costs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, plot, lines, &counts, (min_ns, max_ns), floor_ns)?;
        root.present().map_err(step("finishing the SVG"))?;
    }
    Ok(svg)
}

/// Draws the plot onto `root`.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &Plot<'_>,
    lines: &[Line<'_>],
    counts: &[usize],
    (min_ns, max_ns): (f64, f64),
    floor_ns: Option<f64>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(step("filling the background"))?;
    let body = if plot.title.is_empty() {
        root.clone()
    } else {
        // Titles carry the machine summary, which can be long: shrink the font to fit the
        // width rather than let the SVG clip it.
        let mut size = 24.0;
        let (w, _) = root
            .estimate_text_size(
                plot.title,
                &TextStyle::from(("sans-serif", size).into_font()),
            )
            .map_err(step("measuring the title"))?;
        let room = f64::from(WIDTH - 2 * MARGIN);
        if f64::from(w) > room {
            size = (size * room / f64::from(w)).max(12.0);
        }
        root.titled(plot.title, ("sans-serif", size))
            .map_err(step("drawing the title"))?
    };

    let legend_font = ("sans-serif", 16).into_font();
    let legend_style = TextStyle::from(legend_font.clone()).pos(Pos::new(HPos::Left, VPos::Center));
    // Sized to the longest label, within bounds that keep the chart the main thing.
    let max_label_chars = 40;
    let mut label_width = 0;
    for line in lines {
        let (w, _) = root
            .estimate_text_size(&truncate(line.name, max_label_chars), &legend_style)
            .map_err(step("measuring the legend"))?;
        label_width = label_width.max(w);
    }
    let legend_width = (label_width + 70).clamp(170, 380);
    let (chart_area, legend_area) = body.split_horizontally(body.dim_in_pixel().0 - legend_width);

    let plot_width_px = f64::from(
        chart_area
            .dim_in_pixel()
            .0
            .saturating_sub(2 * MARGIN + Y_LABEL_AREA)
            .max(100),
    );
    let x_axis = thread_axis(counts, plot_width_px);
    let y_axis = cost_axis(min_ns, max_ns);
    let (x_lo, x_hi) = (x_axis.lo(), x_axis.hi());
    let (y_lo, y_hi) = (y_axis.lo(), y_axis.hi());

    let mut chart = ChartBuilder::on(&chart_area)
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x_axis, y_axis)
        .map_err(step("laying out the chart"))?;
    let x_fmt = |t: &f64| format!("{}", t.round() as u64);
    let y_fmt = |ns: &f64| format_ns(*ns);
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc(plot.y_label)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .bold_line_style(BLACK.mix(0.18))
        .light_line_style(BLACK.mix(0.06))
        .draw()
        .map_err(step("drawing the axes"))?;
    let (px_range, py_range) = chart.plotting_area().get_pixel_range();
    let plotting_area = chart.plotting_area().clone();
    let to_px = |p: (f64, f64)| plotting_area.map_coordinate(&p);

    if let Some(floor) = floor_ns {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x_lo, floor), (x_hi, floor)],
                7,
                5,
                FLOOR_COLOUR.stroke_width(2),
            ))
            .map_err(step("drawing the floor"))?;
        // Under the line at the right end: barriers cost more than the floor once threads
        // share data, so that corner is empty.
        let (_, y) = to_px((x_hi, floor));
        root.draw_text(
            FLOOR_LABEL,
            &TextStyle::from(("sans-serif", 15).into_font())
                .color(&FLOOR_COLOUR)
                .pos(Pos::new(HPos::Right, VPos::Top)),
            (px_range.end - 8, y + 4),
        )
        .map_err(step("labelling the floor"))?;
    }

    if let Some(cores) = plot.cores.filter(|&c| c > 0) {
        if let Some(&first_over) = counts.iter().find(|&&c| c > cores) {
            // Halfway (on the log axis) between the core count and the first count beyond it.
            let boundary = ((cores as f64).log2() + (first_over as f64).log2()) / 2.0;
            let x = boundary.exp2().max(x_lo);
            let style = OVERSUBSCRIBED_COLOUR.mix(0.8).stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, y_lo), (x, y_hi)],
                    5,
                    4,
                    style,
                ))
                .map_err(step("marking oversubscription"))?;
            let (px, _) = to_px((x, y_hi));
            let text_style =
                TextStyle::from(("sans-serif", 15).into_font()).color(&OVERSUBSCRIBED_COLOUR);
            let (w, _) = root
                .estimate_text_size(OVERSUBSCRIBED_LABEL, &text_style)
                .map_err(step("measuring the oversubscription label"))?;
            // Right of the line unless that runs off the chart; the arrow still points at the
            // oversubscribed side either way.
            let (anchor, tx) = if px + 6 + w as i32 <= px_range.end {
                (HPos::Left, px + 6)
            } else {
                (HPos::Right, px - 6)
            };
            root.draw_text(
                OVERSUBSCRIBED_LABEL,
                &text_style.pos(Pos::new(anchor, VPos::Top)),
                (tx, py_range.start + 6),
            )
            .map_err(step("labelling oversubscription"))?;
        }
    }

    // Baselines first so ours are drawn over them where lines cross.
    let mut order: Vec<&Line<'_>> = lines.iter().collect();
    order.sort_by_key(|l| match l.kind {
        SeriesKind::Baseline => 0,
        SeriesKind::Reference => 1,
        SeriesKind::Ours => 2,
    });
    for line in order {
        let style = line.style;
        match style.dash {
            Some((dash, gap)) => chart
                .draw_series(DashedLineSeries::new(
                    line.points.clone(),
                    dash,
                    gap,
                    style.stroke(),
                ))
                .map(|_| ()),
            None => chart
                .draw_series(LineSeries::new(line.points.clone(), style.stroke()))
                .map(|_| ()),
        }
        .map_err(step("drawing a line"))?;
        for &p in &line.points {
            draw_marker(root, to_px(p), &style).map_err(step("drawing a marker"))?;
        }
    }

    draw_legend(root, &legend_area, lines, &legend_style, max_label_chars)
}

/// The legend, in its own column right of the chart so it can never hide a data point.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    lines: &[Line<'_>],
    text_style: &TextStyle<'_>,
    max_label_chars: usize,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (xs, ys) = area.get_pixel_range();
    let row = 26;
    let top = ys.start + MARGIN as i32 + 8;
    let left = xs.start + 4;
    let right = xs.end - MARGIN as i32;
    let bottom = top + row * lines.len() as i32 + 4;
    root.draw(&Rectangle::new(
        [(left, top - 4), (right, bottom)],
        BLACK.mix(0.35).stroke_width(1),
    ))
    .map_err(step("drawing the legend frame"))?;
    for (i, line) in lines.iter().enumerate() {
        let y = top + row * i as i32 + row / 2;
        let (x0, x1) = (left + 10, left + 46);
        let style = line.style;
        match style.dash {
            Some((dash, gap)) => root.draw(&DashedPathElement::new(
                vec![(x0, y), (x1, y)],
                dash,
                gap,
                style.stroke(),
            )),
            None => root.draw(&PathElement::new(vec![(x0, y), (x1, y)], style.stroke())),
        }
        .map_err(step("drawing the legend"))?;
        draw_marker(root, ((x0 + x1) / 2, y), &style).map_err(step("drawing the legend"))?;
        root.draw_text(
            &truncate(line.name, max_label_chars),
            text_style,
            (x1 + 10, y),
        )
        .map_err(step("drawing the legend"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_svg(test: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("phasers-plot-{}-{test}.svg", std::process::id()))
    }

    /// Writes the plot and returns the SVG text, removing the file.
    fn written(test: &str, plot: &Plot<'_>) -> Result<String, String> {
        let path = temp_svg(test);
        let result = write_svg(&path, plot);
        let text = std::fs::read_to_string(&path);
        let _ = std::fs::remove_file(&path);
        result.map(|()| text.expect("the plot was written"))
    }

    fn series(name: &str, kind: SeriesKind, points: &[(usize, f64)]) -> Series {
        Series {
            name: name.to_owned(),
            kind,
            points: points.to_vec(),
        }
    }

    fn plot(series: &[Series]) -> Plot<'_> {
        Plot {
            title: "cost per barrier",
            y_label: "ns per barrier",
            series,
            floor_ns: None,
            cores: None,
        }
    }

    fn realistic() -> Vec<Series> {
        let threads = [1, 2, 4, 8, 16];
        let curve = |base: f64, growth: f64| -> Vec<(usize, f64)> {
            threads
                .iter()
                .map(|&t| (t, base * (t as f64).powf(growth)))
                .collect()
        };
        vec![
            series("dissemination", SeriesKind::Ours, &curve(8.0, 1.1)),
            series("tournament", SeriesKind::Ours, &curve(10.0, 1.0)),
            series(
                "central sense-reversing",
                SeriesKind::Ours,
                &curve(6.0, 1.4),
            ),
            series("reference", SeriesKind::Reference, &curve(12.0, 1.2)),
            series(
                "std::sync::Barrier",
                SeriesKind::Baseline,
                &curve(60.0, 1.8),
            ),
            series("pthread_barrier_t", SeriesKind::Baseline, &curve(90.0, 1.6)),
        ]
    }

    #[test]
    fn realistic_plot_has_every_part() {
        let series = realistic();
        let plot = Plot {
            floor_ns: Some(70.0),
            cores: Some(4),
            ..plot(&series)
        };
        let svg = written("realistic", &plot).unwrap();
        assert!(svg.trim_start().starts_with("<svg"), "{}", &svg[..100]);
        assert!(svg.contains("</svg>"));
        for s in &series {
            assert!(
                svg.contains(&s.name.replace('<', "&lt;")),
                "missing {}",
                s.name
            );
        }
        assert!(svg.contains(FLOOR_LABEL));
        assert!(svg.contains(OVERSUBSCRIBED_LABEL));
        assert!(svg.contains("cost per barrier"));
        assert!(svg.contains("<text"));
        assert!(svg.contains("<polyline") || svg.contains("<path"));
        for count in ["1", "2", "4", "8", "16"] {
            assert!(
                svg.contains(&format!(">\n{count}\n</text>"))
                    || svg.contains(&format!(">{count}<"))
            );
        }
    }

    #[test]
    fn nothing_drawable_is_an_error_and_writes_nothing() {
        let err = written("empty", &plot(&[])).unwrap_err();
        assert!(err.starts_with("nothing to plot: "), "{err}");
        assert!(
            err.contains(&temp_svg("empty").display().to_string()),
            "{err}"
        );
        assert!(!temp_svg("empty").exists());
        let none = [series("a", SeriesKind::Ours, &[])];
        assert!(written("no-points", &plot(&none)).is_err());
        // Failed rows (not finite, not positive, or at zero threads), even with a floor to draw.
        let bad = [
            series(
                "nan",
                SeriesKind::Ours,
                &[(1, f64::NAN), (2, f64::INFINITY)],
            ),
            series(
                "neg",
                SeriesKind::Baseline,
                &[(1, -3.0), (2, 0.0), (0, 5.0)],
            ),
        ];
        let plot = Plot {
            floor_ns: Some(50.0),
            cores: Some(2),
            ..plot(&bad)
        };
        let err = written("all-nan", &plot).unwrap_err();
        assert!(err.contains("nothing to plot"), "{err}");
    }

    #[test]
    fn failed_series_are_left_out_of_the_legend() {
        let mixed = [
            series(
                "survivor",
                SeriesKind::Ours,
                &[(1, 5.0), (2, f64::NAN), (4, 40.0)],
            ),
            series("casualty", SeriesKind::Baseline, &[(1, f64::NAN)]),
        ];
        let svg = written("mixed", &plot(&mixed)).unwrap();
        assert!(svg.contains("survivor"));
        assert!(!svg.contains("casualty"));
    }

    #[test]
    fn single_thread_count_and_single_value() {
        let one = [series("only", SeriesKind::Ours, &[(4, 120.0)])];
        let plot = Plot {
            floor_ns: Some(120.0),
            cores: Some(4),
            ..plot(&one)
        };
        let svg = written("single", &plot).unwrap();
        assert!(svg.contains("only"));
        assert!(
            !svg.contains(OVERSUBSCRIBED_LABEL),
            "nothing exceeds the cores"
        );
    }

    #[test]
    fn wide_value_span() {
        let wide = [
            series("fast", SeriesKind::Ours, &[(1, 10.0), (2, 30.0), (4, 90.0)]),
            series(
                "slow",
                SeriesKind::Baseline,
                &[(1, 1e3), (2, 1e5), (4, 1e7)],
            ),
        ];
        let plot = Plot {
            cores: Some(1),
            ..plot(&wide)
        };
        let svg = written("wide", &plot).unwrap();
        for label in ["10 ns", "1 µs", "10 ms"] {
            assert!(svg.contains(label), "missing tick {label}");
        }
        assert!(svg.contains(OVERSUBSCRIBED_LABEL));
    }

    #[test]
    fn extreme_values_do_not_panic() {
        let extreme = [
            series(
                "tiny",
                SeriesKind::Ours,
                &[(1, 1e-300), (2, f64::MIN_POSITIVE)],
            ),
            series(
                "huge",
                SeriesKind::Baseline,
                &[(1, 1e300), (usize::MAX, f64::MAX)],
            ),
        ];
        let plot = Plot {
            floor_ns: Some(f64::MAX),
            cores: Some(usize::MAX),
            ..plot(&extreme)
        };
        let svg = written("extreme", &plot).unwrap();
        assert!(svg.contains("huge"));
    }

    #[test]
    fn consecutive_and_sparse_thread_counts() {
        for counts in [
            vec![1, 2, 3, 4],
            vec![1, 2, 4, 8, 64],
            (1..=40).collect::<Vec<_>>(),
        ] {
            let points: Vec<(usize, f64)> = counts.iter().map(|&t| (t, 50.0 * t as f64)).collect();
            let s = [series("ours", SeriesKind::Ours, &points)];
            let svg = written("counts", &plot(&s)).unwrap();
            let last = counts[counts.len() - 1].to_string();
            assert!(
                svg.contains(&format!("\n{last}\n")),
                "last count {last} is labelled"
            );
        }
    }

    #[test]
    fn unwritable_path_names_the_file() {
        let s = realistic();
        let path = std::env::temp_dir()
            .join("phasers-no-such-dir")
            .join("plot.svg");
        let err = write_svg(&path, &plot(&s)).unwrap_err();
        assert!(err.contains("plot.svg"), "{err}");
    }

    #[test]
    fn nanosecond_labels() {
        assert_eq!(format_ns(10.0), "10 ns");
        assert_eq!(format_ns(500.0), "500 ns");
        assert_eq!(format_ns(999.9999), "1 µs");
        assert_eq!(format_ns(1e3), "1 µs");
        assert_eq!(format_ns(2500.0), "2.5 µs");
        assert_eq!(format_ns(1e7), "10 ms");
        assert_eq!(format_ns(3e9), "3 s");
        assert_eq!(format_ns(0.5), "0.5 ns");
    }

    #[test]
    fn y_ticks_fit_the_span() {
        let wide = cost_axis(10.0, 1e7);
        assert!(wide.bold.contains(&1e3) && wide.bold.len() <= 12);
        let narrow = cost_axis(100.0, 300.0);
        assert!(narrow.bold.len() >= 3, "{:?}", narrow.bold);
        let flat = cost_axis(42.0, 42.0);
        assert!(flat.bold.len() >= 2, "{:?}", flat.bold);
    }
}
