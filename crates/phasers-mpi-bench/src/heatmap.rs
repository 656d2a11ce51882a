//! `--plot`: seed 001's figure 14 as one heat map per algorithm, MPI ranks across, threads per
//! rank up, colour = median time per barrier on one log scale shared by every panel, the value
//! written in each cell (and, under it, what `combined-auto` chose there).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::combined_grid::GridRow;
use crate::process_rows::MPI_BARRIER;
use phasers_cli::harness::table::time;

const PANEL_W: i32 = 440;
const PANEL_H: i32 = 330;
const COLUMNS: i32 = 2;
const TITLE_H: i32 = 50;
const LEGEND_H: i32 = 70;
/// Room inside a panel for its title, axis names and tick labels.
const LEFT: i32 = 70;
const RIGHT: i32 = 20;
const TOP: i32 = 34;
const BOTTOM: i32 = 50;
const NA_COLOUR: RGBColor = RGBColor(225, 225, 225);

/// Renders the grid as SVG text. `algorithms` gives the panels in order.
pub fn render(
    rows: &[GridRow],
    algorithms: &[String],
    ranks: &[usize],
    threads: &[usize],
    title: &str,
) -> Result<String, String> {
    let medians: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.timing.as_ref().map(|t| t.median_ns))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let (Some(lo), Some(hi)) = (
        medians.iter().copied().min_by(f64::total_cmp),
        medians.iter().copied().max_by(f64::total_cmp),
    ) else {
        return Err("the grid has no measured cell to draw".to_owned());
    };
    let scale = LogScale::new(lo, hi);
    let panels = algorithms.len().max(1) as i32;
    let rows_of_panels = (panels + COLUMNS - 1) / COLUMNS;
    let width = (PANEL_W * COLUMNS) as u32;
    let height = (TITLE_H + PANEL_H * rows_of_panels + LEGEND_H) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(step("background"))?;
        let centered = |size: u32| {
            TextStyle::from(("sans-serif", size).into_font())
                .pos(Pos::new(HPos::Center, VPos::Center))
        };
        root.draw_text(title, &centered(17), (width as i32 / 2, TITLE_H / 2))
            .map_err(step("title"))?;
        for (index, algorithm) in algorithms.iter().enumerate() {
            let index = index as i32;
            let origin = (
                (index % COLUMNS) * PANEL_W,
                TITLE_H + (index / COLUMNS) * PANEL_H,
            );
            let cells: Vec<&GridRow> = rows.iter().filter(|r| &r.algorithm == algorithm).collect();
            draw_panel(&root, origin, algorithm, &cells, ranks, threads, &scale)?;
        }
        draw_legend(
            &root,
            (0, TITLE_H + PANEL_H * rows_of_panels),
            width as i32,
            &scale,
        )?;
        root.present().map_err(step("finishing"))?;
    }
    Ok(svg)
}

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    (x0, y0): (i32, i32),
    algorithm: &str,
    cells: &[&GridRow],
    ranks: &[usize],
    threads: &[usize],
    scale: &LogScale,
) -> Result<(), String> {
    let centered = |size: u32| {
        TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(HPos::Center, VPos::Center))
    };
    let plot_w = PANEL_W - LEFT - RIGHT;
    let plot_h = PANEL_H - TOP - BOTTOM;
    let title = if algorithm == MPI_BARRIER {
        "mpi-barrier (ranks x threads processes)"
    } else {
        algorithm
    };
    root.draw_text(title, &centered(15), (x0 + PANEL_W / 2, y0 + TOP / 2))
        .map_err(step("panel title"))?;
    let cell_w = plot_w / ranks.len().max(1) as i32;
    let cell_h = plot_h / threads.len().max(1) as i32;
    for (xi, &r) in ranks.iter().enumerate() {
        let left = x0 + LEFT + xi as i32 * cell_w;
        root.draw_text(
            &r.to_string(),
            &centered(13),
            (left + cell_w / 2, y0 + TOP + plot_h + 12),
        )
        .map_err(step("rank label"))?;
        for (yi, &t) in threads.iter().enumerate() {
            // Fewest threads at the bottom.
            let top = y0 + TOP + plot_h - (yi as i32 + 1) * cell_h;
            let cell = cells.iter().find(|c| c.ranks == r && c.threads == t);
            let median = cell.and_then(|c| c.timing.as_ref()).map(|t| t.median_ns);
            let chosen = cell.and_then(|c| c.chosen);
            let (fill, label) = match median {
                Some(ns) => (scale.colour(ns), time(ns)),
                None => (NA_COLOUR, "n/a".to_owned()),
            };
            root.draw(&Rectangle::new(
                [(left, top), (left + cell_w, top + cell_h)],
                fill.filled(),
            ))
            .map_err(step("cell"))?;
            root.draw(&Rectangle::new(
                [(left, top), (left + cell_w, top + cell_h)],
                WHITE.stroke_width(2),
            ))
            .map_err(step("cell border"))?;
            let ink = if median.is_some_and(|ns| scale.fraction(ns) > 0.55) {
                WHITE
            } else {
                BLACK
            };
            // With a choice to show, the time moves up and the choice goes under it.
            let shift = if chosen.is_some() { 8 } else { 0 };
            root.draw_text(
                &label,
                &centered(13).color(&ink),
                (left + cell_w / 2, top + cell_h / 2 - shift),
            )
            .map_err(step("cell label"))?;
            if let Some(chosen) = chosen {
                root.draw_text(
                    chosen,
                    &centered(11).color(&ink),
                    (left + cell_w / 2, top + cell_h / 2 + shift),
                )
                .map_err(step("cell choice"))?;
            }
        }
    }
    for (yi, &t) in threads.iter().enumerate() {
        let middle = y0 + TOP + plot_h - yi as i32 * cell_h - cell_h / 2;
        root.draw_text(&t.to_string(), &centered(13), (x0 + LEFT - 14, middle))
            .map_err(step("thread label"))?;
    }
    root.draw_text(
        "MPI ranks",
        &centered(13),
        (x0 + LEFT + plot_w / 2, y0 + TOP + plot_h + 32),
    )
    .map_err(step("x axis name"))?;
    root.draw_text(
        "threads per rank",
        &centered(13).transform(FontTransform::Rotate270),
        (x0 + 22, y0 + TOP + plot_h / 2),
    )
    .map_err(step("y axis name"))?;
    Ok(())
}

fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    (x0, y0): (i32, i32),
    width: i32,
    scale: &LogScale,
) -> Result<(), String> {
    let bar_left = x0 + width / 4;
    let bar_w = width / 2;
    let steps = 60;
    for i in 0..steps {
        let fraction = (i as f64 + 0.5) / steps as f64;
        let left = bar_left + bar_w * i / steps;
        let right = bar_left + bar_w * (i + 1) / steps;
        root.draw(&Rectangle::new(
            [(left, y0 + 12), (right, y0 + 30)],
            ramp(fraction).filled(),
        ))
        .map_err(step("legend"))?;
    }
    let style = |h| TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(h, VPos::Center));
    root.draw_text(
        &time(scale.lo),
        &style(HPos::Right),
        (bar_left - 8, y0 + 21),
    )
    .map_err(step("legend"))?;
    root.draw_text(
        &time(scale.hi),
        &style(HPos::Left),
        (bar_left + bar_w + 8, y0 + 21),
    )
    .map_err(step("legend"))?;
    root.draw_text(
        "median time per barrier (log scale); grey: n/a",
        &style(HPos::Center),
        (bar_left + bar_w / 2, y0 + 46),
    )
    .map_err(step("legend"))?;
    Ok(())
}

/// Maps a time onto [0, 1] on a log scale.
struct LogScale {
    lo: f64,
    hi: f64,
}

impl LogScale {
    fn new(lo: f64, hi: f64) -> Self {
        LogScale { lo, hi }
    }

    fn fraction(&self, ns: f64) -> f64 {
        let span = (self.hi / self.lo).ln();
        if span <= 0.0 {
            return 0.5;
        }
        ((ns / self.lo).ln() / span).clamp(0.0, 1.0)
    }

    fn colour(&self, ns: f64) -> RGBColor {
        ramp(self.fraction(ns))
    }
}

/// Pale yellow (fast) through orange to dark red (slow).
fn ramp(fraction: f64) -> RGBColor {
    const STOPS: [(f64, [f64; 3]); 3] = [
        (0.0, [255.0, 245.0, 190.0]),
        (0.5, [245.0, 140.0, 50.0]),
        (1.0, [120.0, 10.0, 30.0]),
    ];
    let f = fraction.clamp(0.0, 1.0);
    let (a, b) = if f <= STOPS[1].0 {
        (STOPS[0], STOPS[1])
    } else {
        (STOPS[1], STOPS[2])
    };
    let t = (f - a.0) / (b.0 - a.0);
    let mix = |i: usize| (a.1[i] + (b.1[i] - a.1[i]) * t).round() as u8;
    RGBColor(mix(0), mix(1), mix(2))
}

fn step<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |error| format!("drawing the {what} failed: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Timing;

    fn row(algorithm: &str, ranks: usize, threads: usize, ns: Option<f64>) -> GridRow {
        GridRow {
            ranks,
            threads,
            algorithm: algorithm.to_owned(),
            chosen: None,
            processes: ranks * threads,
            timing: ns.and_then(|ns| Timing::new(1, vec![ns])),
            ratio_to_mpi_barrier: None,
            ratio_to_omp_mpi_barrier: None,
            note: None,
        }
    }

    #[test]
    fn draws_every_cell_and_na() {
        let rows = vec![
            row("a", 1, 1, Some(500.0)),
            row("a", 2, 1, Some(5000.0)),
            row("b", 1, 1, Some(50_000.0)),
            row("b", 2, 1, None),
        ];
        let svg = render(
            &rows,
            &["a".to_owned(), "b".to_owned()],
            &[1, 2],
            &[1],
            "test",
        )
        .unwrap();
        for text in ["500 ns", "5000 ns", "50.0 µs", "n/a", "MPI ranks"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn auto_cells_show_their_choice() {
        let mut auto = row("combined-auto", 2, 1, Some(800.0));
        auto.chosen = Some("node-shm");
        let svg = render(&[auto], &["combined-auto".to_owned()], &[1, 2], &[1], "t").unwrap();
        assert!(svg.contains("node-shm") && svg.contains("800 ns"));
    }

    #[test]
    fn nothing_measured_is_an_error() {
        assert!(render(&[row("a", 1, 1, None)], &["a".to_owned()], &[1], &[1], "t").is_err());
    }

    #[test]
    fn ramp_ends() {
        assert_eq!(ramp(0.0), RGBColor(255, 245, 190));
        assert_eq!(ramp(1.0), RGBColor(120, 10, 30));
        assert_eq!(LogScale::new(10.0, 10.0).fraction(10.0), 0.5);
    }
}
