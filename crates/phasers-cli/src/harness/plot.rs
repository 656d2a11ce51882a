//! The SVG plot of cost against thread count: one line per [`Series`], log scale on both axes,
//! with the hardware floor and the point where threads outnumber cores marked.
//!
//! plotters is built without fonts: its "naive" font only estimates text extents for the layout,
//! and the SVG names the font and leaves drawing the glyphs to the viewer.

use std::path::Path;

use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::Shift;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What kind of line a series is, which sets its style; ordered as drawn, ours on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SeriesKind {
    /// A barrier we compare against (e.g. `std::sync::Barrier`): a dashed grey line with
    /// hollow markers of its own shape.
    Baseline,
    /// The hand-written reference barrier: a thick black line.
    Reference,
    /// One of the `phasers` algorithms: a solid coloured line with round markers.
    Ours,
}

/// One line of the plot.
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend label.
    pub name: String,
    /// Which style the line is drawn in.
    pub kind: SeriesKind,
    /// `(threads, ns)` in any order; points at 0 threads or not finite and positive are skipped.
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
    /// The hardware floor in ns, a dashed line; ignored unless finite and positive.
    pub floor_ns: Option<f64>,
    /// Cores of the run: a marker before the first thread count above them, if any.
    pub cores: Option<usize>,
}

/// Writes `plot` to `path` as SVG, rendered in memory first so a failure leaves no half-written
/// file; fails, naming the file, when no series has a point to draw or the file cannot be written.
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
    let mut svg = String::new();
    let canvas = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
    let drawn = render(&canvas, plot, &lines);
    drop(canvas);
    drawn.map_err(|e| format!("cannot plot {}: {e}", path.display()))?;
    std::fs::write(path, svg).map_err(|e| format!("cannot write plot {}: {e}", path.display()))
}

/// The canvas, the space around the chart and for the axis labels, in pixels.
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 640;
const MARGIN: u32 = 12;
const Y_LABEL_AREA: u32 = 80;
const X_LABEL_AREA: u32 = 50;

/// Fractions of the data's log span left empty each side: the labels along the top and under the
/// floor never sit on a point, and the frame never cuts an end marker.
const Y_PAD: f64 = 0.09;
const X_PAD: f64 = 0.04;

/// Our algorithms' colours: Tableau 10 without its grey, which belongs to the baselines.
const OURS_COLOURS: [u32; 9] = [
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0xbcbd22, 0x17becf,
];
/// Baselines stay grey so they read as background; shape and dash tell them apart.
const BASELINE_GREYS: [u8; 3] = [85, 140, 110];
/// `(dash, gap)` lengths in pixels, cycled through baselines.
const BASELINE_DASHES: [(u32, u32); 4] = [(9, 5), (3, 3), (14, 4), (6, 3)];
/// Baselines' markers ([`LineStyle::polygon`]): triangle, square, diamond, down triangle, pentagon.
const BASELINE_MARKERS: [(u32, f64); 5] = [(3, 0.0), (4, 45.0), (4, 0.0), (3, 180.0), (5, 0.0)];

const FLOOR_LABEL: &str = "floor (cache-line round trip)";
const FLOOR_COLOUR: RGBColor = RGBColor(60, 60, 60);
const OVERSUBSCRIBED_LABEL: &str = "oversubscribed →";
const OVERSUBSCRIBED_COLOUR: RGBColor = RGBColor(178, 34, 34);

/// How one series is drawn, resolved from its kind and its rank among series of that kind.
struct LineStyle {
    colour: RGBColor,
    width: u32,
    /// `Some((dash, gap))` for a dashed line.
    dash: Option<(u32, u32)>,
    /// The points' marker: a dot, or a regular polygon of `(corners, turn)`, its first corner
    /// `turn` degrees clockwise from straight up.
    polygon: Option<(u32, f64)>,
    /// Hollow markers keep overlapping baselines legible.
    filled: bool,
}

impl LineStyle {
    fn stroke(&self) -> ShapeStyle {
        self.colour.stroke_width(self.width)
    }

    fn new(kind: SeriesKind, rank: usize) -> Self {
        let [_, r, g, b] = OURS_COLOURS[rank % OURS_COLOURS.len()].to_be_bytes();
        let grey = BASELINE_GREYS[rank % BASELINE_GREYS.len()];
        let grey = RGBColor(grey, grey, grey);
        let dashes = BASELINE_DASHES[rank % BASELINE_DASHES.len()];
        let marker = BASELINE_MARKERS[rank % BASELINE_MARKERS.len()];
        let (colour, width, dash, polygon, filled) = match kind {
            SeriesKind::Ours => (RGBColor(r, g, b), 2, None, None, true),
            SeriesKind::Reference => (BLACK, 4, None, Some((4, 45.0)), true),
            SeriesKind::Baseline => (grey, 2, Some(dashes), Some(marker), false),
        };
        LineStyle {
            colour,
            width,
            dash,
            polygon,
            filled,
        }
    }
}

/// A series reduced to what gets drawn.
struct Line<'a> {
    series: &'a Series,
    style: LineStyle,
    /// Valid points, sorted by thread count so the line runs left to right.
    points: Vec<(f64, f64)>,
}

/// Keeps the series that have something to draw and gives each its style.
fn lines(series: &[Series]) -> Vec<Line<'_>> {
    let drawable = |&(threads, ns): &(usize, f64)| threads > 0 && ns.is_finite() && ns > 0.0;
    let mut lines: Vec<Line<'_>> = Vec::new();
    for s in series {
        let mut points: Vec<(usize, f64)> = s.points.iter().copied().filter(drawable).collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by_key(|&(threads, _)| threads);
        let rank = lines.iter().filter(|l| l.series.kind == s.kind).count();
        lines.push(Line {
            series: s,
            style: LineStyle::new(s.kind, rank),
            points: points.into_iter().map(|(t, ns)| (t as f64, ns)).collect(),
        });
    }
    lines
}

/// A log axis with the grid lines we choose: labelled ("bold") and unlabelled ("light").
type LogAxis = WithKeyPoints<LogCoord<f64>>;

fn log_axis(lo: f64, hi: f64, bold: Vec<f64>, light: Vec<f64>) -> LogAxis {
    (lo..hi)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// Widens the log range `lo..hi` by `pad` of its span each side (first to `single` if a point).
fn padded_log_range(lo: f64, hi: f64, single: f64, pad: f64) -> (f64, f64) {
    let half = if hi - lo < 1e-9 { single / 2.0 } else { 0.0 };
    let (lo, hi) = (lo - half, hi + half);
    let span = hi - lo;
    (lo - span * pad, hi + span * pad)
}

/// The x axis: log2 of threads, so doublings are evenly spaced; every count gets a grid line, and
/// labels thin out from the largest count down (where oversubscription shows) so none collide.
fn thread_axis(counts: &[usize], plot_width_px: f64) -> LogAxis {
    let all: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
    let (lo, hi) = padded_log_range(all[0].log2(), all[all.len() - 1].log2(), 2.0, X_PAD);
    // About 8 px a digit at the label size, plus a gap; the largest count is the widest.
    let digits = counts[counts.len() - 1].to_string().len() as f64;
    let min_gap = (digits * 8.0 + 10.0) / plot_width_px * (hi - lo);
    let mut labelled: Vec<f64> = Vec::new();
    for &c in all.iter().rev() {
        let gap = labelled.last().map_or(f64::MAX, |r| r.log2() - c.log2());
        if gap >= min_gap {
            labelled.push(c);
        }
    }
    log_axis(lo.exp2(), hi.exp2(), labelled, all)
}

/// The y axis: log10 of ns, labelled at 1-2-5 steps when that gives a handful of labels, at whole
/// decades when the data spans more, and at finer steps when it spans less.
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
    let bold = match one_two_five.len() {
        0..=2 => steps(&[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
        3..=8 => one_two_five,
        _ => steps(&[1.0]),
    };
    // Very wide spans (a broken run next to a good one) would crowd the axis; label every
    // n-th decade instead.
    let stride = bold.len().div_ceil(12).max(1);
    let bold = bold.into_iter().step_by(stride).collect();
    let digits = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    let light = steps(if hi - lo <= 6.0 { &digits } else { &[] });
    log_axis(10f64.powf(lo), 10f64.powf(hi), bold, light)
}

/// A duration in nanoseconds with a unit that keeps the number short: "500 ns", "2.5 ms".
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
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    let text = if decimals > 0 { trimmed } else { &text };
    format!("{text} {unit}")
}

/// Shortens a legend label to `max_chars`, marking the cut.
fn truncate(name: &str, max_chars: usize) -> String {
    let kept: String = name.chars().take(max_chars.saturating_sub(1)).collect();
    match name.chars().count() > max_chars {
        true => kept + "…",
        false => name.to_owned(),
    }
}

/// What drawing on the in-memory SVG can fail with.
type Drawn<T = ()> = Result<T, DrawingAreaErrorKind<std::io::Error>>;

/// Everything is drawn in pixels on the whole canvas; the chart only lays out axes and maps data.
type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Sans-serif text of `size` px in `colour`, anchored at `at`.
fn text(size: f64, colour: &'static RGBColor, (h, v): (HPos, VPos)) -> TextStyle<'static> {
    let font = ("sans-serif", size).into_font();
    TextStyle::from(font).color(colour).pos(Pos::new(h, v))
}

/// Draws a line through `points` (pixels), dashed when `dash` is `(dash, gap)`.
fn draw_path(
    canvas: &Canvas<'_>,
    points: Vec<(i32, i32)>,
    stroke: ShapeStyle,
    dash: Option<(u32, u32)>,
) -> Drawn {
    match dash {
        Some((dash, gap)) => canvas.draw(&DashedPathElement::new(points, dash, gap, stroke)),
        None => canvas.draw(&PathElement::new(points, stroke)),
    }
}

/// Draws one marker centred on the pixel `(x, y)`.
fn draw_marker(canvas: &Canvas<'_>, (x, y): (i32, i32), style: &LineStyle) -> Drawn {
    let Some((corners, turn)) = style.polygon else {
        return canvas.draw(&Circle::new((x, y), 4, style.colour.filled()));
    };
    // Circumradii: a filled square 8 px across, hollow shapes larger since they are lighter.
    let r = if style.filled { 5.7 } else { 7.0 };
    let mut points: Vec<(i32, i32)> = (0..corners)
        .map(|k| {
            let angle = (turn + 360.0 * f64::from(k) / f64::from(corners)).to_radians();
            let dx = (r * angle.sin()).round() as i32;
            (x + dx, y - (r * angle.cos()).round() as i32)
        })
        .collect();
    if style.filled {
        return canvas.draw(&Polygon::new(points, style.colour.filled()));
    }
    points.push(points[0]);
    draw_path(canvas, points, style.colour.stroke_width(2), None)
}

/// Draws the plot of `lines` (at least one) onto `canvas`.
fn render(canvas: &Canvas<'_>, plot: &Plot<'_>, lines: &[Line<'_>]) -> Drawn {
    let floor_ns = plot.floor_ns.filter(|f| f.is_finite() && *f > 0.0);
    let points = || lines.iter().flat_map(|l| l.points.iter().copied());
    let mut counts: Vec<usize> = points().map(|(t, _)| t as usize).collect();
    counts.sort_unstable();
    counts.dedup();
    let costs = || points().map(|(_, ns)| ns).chain(floor_ns);
    let min_ns = costs().fold(f64::INFINITY, f64::min);
    let max_ns = costs().fold(f64::NEG_INFINITY, f64::max);

    canvas.fill(&WHITE)?;
    let body = if plot.title.is_empty() {
        canvas.clone()
    } else {
        // Titles carry the machine summary, which can be long: shrink the font to fit the
        // width rather than let the SVG clip it.
        let title = text(24.0, &BLACK, (HPos::Left, VPos::Top));
        let (w, _) = canvas.estimate_text_size(plot.title, &title)?;
        let room = f64::from(WIDTH - 2 * MARGIN);
        let size = (24.0 * room / f64::from(w)).clamp(12.0, 24.0);
        canvas.titled(plot.title, ("sans-serif", size))?
    };

    // The legend has a column of its own right of the chart, so it can never hide a data
    // point; sized to the longest label, within bounds that keep the chart the main thing.
    let legend_style = text(16.0, &BLACK, (HPos::Left, VPos::Center));
    let labels: Vec<String> = lines.iter().map(|l| truncate(&l.series.name, 40)).collect();
    let mut label_width = 0;
    for label in &labels {
        label_width = label_width.max(canvas.estimate_text_size(label, &legend_style)?.0);
    }
    let legend_width = (label_width + 70).clamp(170, 380);
    let (chart_area, legend_area) = body.split_horizontally(body.dim_in_pixel().0 - legend_width);

    let chart_width = chart_area.dim_in_pixel().0;
    let plot_width_px = f64::from((chart_width.saturating_sub(2 * MARGIN + Y_LABEL_AREA)).max(100));
    let x_axis = thread_axis(&counts, plot_width_px);
    let mut chart = ChartBuilder::on(&chart_area)
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x_axis, cost_axis(min_ns, max_ns))?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc(plot.y_label)
        .x_label_formatter(&|t| format!("{}", t.round() as u64))
        .y_label_formatter(&|ns| format_ns(*ns))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .bold_line_style(BLACK.mix(0.18))
        .light_line_style(BLACK.mix(0.06))
        .draw()?;
    let area = chart.plotting_area();
    let to_px = |p: (f64, f64)| area.map_coordinate(&p);
    let (x_range, y_range) = (area.get_x_range(), area.get_y_range());
    let (px_range, py_range) = area.get_pixel_range();

    if let Some(floor) = floor_ns {
        let ends = vec![to_px((x_range.start, floor)), to_px((x_range.end, floor))];
        let y = ends[0].1;
        draw_path(canvas, ends, FLOOR_COLOUR.stroke_width(2), Some((7, 5)))?;
        // Under the line at the right end: barriers cost more than the floor once threads
        // share data, so that corner is empty.
        let style = text(15.0, &FLOOR_COLOUR, (HPos::Right, VPos::Top));
        canvas.draw_text(FLOOR_LABEL, &style, (px_range.end - 8, y + 4))?;
    }

    let over = |&&c: &&usize| plot.cores.is_some_and(|n| n > 0 && c > n);
    if let (Some(cores), Some(&first_over)) = (plot.cores, counts.iter().find(over)) {
        // Halfway (on the log axis) between the core count and the first count beyond it.
        let boundary = ((cores as f64).log2() + (first_over as f64).log2()) / 2.0;
        let x = boundary.exp2().max(x_range.start);
        let ends = vec![to_px((x, y_range.start)), to_px((x, y_range.end))];
        let px = ends[0].0;
        let stroke = OVERSUBSCRIBED_COLOUR.mix(0.8).stroke_width(2);
        draw_path(canvas, ends, stroke, Some((5, 4)))?;
        let style = text(15.0, &OVERSUBSCRIBED_COLOUR, (HPos::Left, VPos::Top));
        let (w, _) = canvas.estimate_text_size(OVERSUBSCRIBED_LABEL, &style)?;
        // Right of the line unless that runs off the chart; the arrow still points at the
        // oversubscribed side either way.
        let (anchor, tx) = match px + 6 + w as i32 <= px_range.end {
            true => (HPos::Left, px + 6),
            false => (HPos::Right, px - 6),
        };
        let style = style.pos(Pos::new(anchor, VPos::Top));
        canvas.draw_text(OVERSUBSCRIBED_LABEL, &style, (tx, py_range.start + 6))?;
    }

    // Baselines first so ours are drawn over them where lines cross.
    let mut order: Vec<&Line<'_>> = lines.iter().collect();
    order.sort_by_key(|l| l.series.kind);
    for line in order {
        let points: Vec<(i32, i32)> = line.points.iter().map(|&p| to_px(p)).collect();
        draw_path(canvas, points.clone(), line.style.stroke(), line.style.dash)?;
        for p in points {
            draw_marker(canvas, p, &line.style)?;
        }
    }

    let (xs, ys) = legend_area.get_pixel_range();
    let row = 26;
    let (left, right) = (xs.start + 4, xs.end - MARGIN as i32);
    let top = ys.start + MARGIN as i32 + 8;
    let frame = [(left, top - 4), (right, top + row * lines.len() as i32 + 4)];
    canvas.draw(&Rectangle::new(frame, BLACK.mix(0.35).stroke_width(1)))?;
    for (i, (line, label)) in lines.iter().zip(&labels).enumerate() {
        let y = top + row * i as i32 + row / 2;
        let (x0, x1, stroke) = (left + 10, left + 46, line.style.stroke());
        draw_path(canvas, vec![(x0, y), (x1, y)], stroke, line.style.dash)?;
        draw_marker(canvas, ((x0 + x1) / 2, y), &line.style)?;
        canvas.draw_text(label, &legend_style, (x1 + 10, y))?;
    }
    canvas.present()
}

#[cfg(test)]
mod tests {
    use super::*;
    use SeriesKind::{Baseline, Ours, Reference};

    fn line(name: &str, kind: SeriesKind, points: &[(usize, f64)]) -> Series {
        let (name, points) = (name.to_owned(), points.to_vec());
        Series { name, kind, points }
    }

    /// The SVG text of the plot of `series`, written to a file named after `test` and removed.
    fn svg(
        test: &str,
        series: &[Series],
        floor_ns: Option<f64>,
        cores: Option<usize>,
    ) -> Result<String, String> {
        let (title, y_label) = ("cost per barrier", "ns per barrier");
        let plot = Plot {
            title,
            y_label,
            series,
            floor_ns,
            cores,
        };
        let path =
            std::env::temp_dir().join(format!("phasers-plot-{}-{test}.svg", std::process::id()));
        let written = write_svg(&path, &plot).map(|()| std::fs::read_to_string(&path).unwrap());
        let _ = std::fs::remove_file(&path);
        written
    }

    #[test]
    fn plots_draw_lines_floor_and_oversubscription_and_leave_out_what_failed() {
        let curve = |name, kind, base: f64, growth: f64| {
            line(
                name,
                kind,
                &[1, 2, 4, 8, 16].map(|t| (t, base * (t as f64).powf(growth))),
            )
        };
        let realistic = [
            curve("dissemination", Ours, 8.0, 1.1),
            curve("reference", Reference, 12.0, 1.2),
            curve("std::sync::Barrier", Baseline, 60.0, 1.8),
            curve("pthread_barrier_t", Baseline, 90.0, 1.6),
        ];
        let text = svg("realistic", &realistic, Some(70.0), Some(4)).unwrap();
        assert!(text.trim_start().starts_with("<svg") && text.contains("<polyline"));
        for part in [
            "\n1\n",
            "\n16\n",
            FLOOR_LABEL,
            OVERSUBSCRIBED_LABEL,
            "cost per barrier",
        ] {
            assert!(text.contains(part), "missing {part:?}");
        }
        // Failed points and series are left out of the line and the legend.
        let survivor = line("survivor", Ours, &[(1, 5.0), (2, f64::NAN), (4, 40.0)]);
        let failed = [survivor, line("casualty", Baseline, &[(1, f64::NAN)])];
        let text = svg("failed", &failed, None, None).unwrap();
        assert!(text.contains("survivor") && !text.contains("casualty"));
        // One point; nothing exceeds the cores.
        let one = [line("only", Ours, &[(4, 120.0)])];
        let text = svg("one", &one, Some(120.0), Some(4)).unwrap();
        assert!(text.contains("only") && !text.contains(OVERSUBSCRIBED_LABEL));
        // Extremes must not panic.
        let tiny = line("tiny", Ours, &[(1, 1e-300), (2, f64::MIN_POSITIVE)]);
        let extremes = [
            tiny,
            line("huge", Baseline, &[(1, 1e300), (usize::MAX, f64::MAX)]),
        ];
        let text = svg("extremes", &extremes, Some(f64::MAX), Some(usize::MAX)).unwrap();
        assert!(text.contains("huge"));
        // Consecutive, sparse and crowded counts: the largest is always labelled.
        for counts in [vec![1, 2, 3, 4], vec![1, 2, 4, 8, 64], (1..=40).collect()] {
            let points: Vec<_> = counts.iter().map(|&t| (t, 50.0 * t as f64)).collect();
            let text = svg("counts", &[line("ours", Ours, &points)], None, None).unwrap();
            assert!(text.contains(&format!("\n{}\n", counts[counts.len() - 1])));
        }
    }

    #[test]
    fn nothing_drawable_or_writable_is_an_error_naming_the_file() {
        let nan = line("nan", Ours, &[(1, f64::NAN), (2, f64::INFINITY)]);
        let bad = [nan, line("neg", Baseline, &[(1, -3.0), (2, 0.0), (0, 5.0)])];
        for (test, series) in [("empty", &bad[..0]), ("all-bad", &bad[..])] {
            let error = svg(test, series, Some(50.0), Some(2)).unwrap_err();
            assert!(error.starts_with("nothing to plot: ") && error.contains(test));
        }
        let good = [line("a", Ours, &[(1, 1.0)])];
        let error = svg("no-such-dir/plot", &good, None, None).unwrap_err();
        assert!(error.starts_with("cannot write plot ") && error.contains("plot.svg"));
    }

    #[test]
    fn labels_and_ticks_fit_the_numbers() {
        assert_eq!(format_ns(10.0), "10 ns");
        assert_eq!(format_ns(999.9999), "1 µs");
        assert_eq!(format_ns(2500.0), "2.5 µs");
        assert_eq!(format_ns(3e9), "3 s");
        assert_eq!(format_ns(0.5), "0.5 ns");
        let wide = cost_axis(10.0, 1e7);
        let wide = wide.bold_points();
        assert!(wide.contains(&1e3) && wide.len() <= 12, "{wide:?}");
        assert!(cost_axis(100.0, 300.0).bold_points().len() >= 3);
        assert!(cost_axis(42.0, 42.0).bold_points().len() >= 2);
    }
}
