//! Presenting results: aligned tables on stdout, the JSON file and the SVG plot.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::contender::Contender;
use crate::floor::Floor;
use crate::machine::Machine;
use crate::plot;
use crate::results::{Group, Mode, Report, Row, RowKind};
use crate::sweep::Plan;

/// The floor as the header of a report states it.
pub fn floor_line(floor: &Floor) -> String {
    match (floor.min_ns, floor.median_ns) {
        (Some(min), Some(median)) => format!(
            "cache-line round trip {}: min {}, median {} ({} samples of {} round trips){}",
            match floor.pinned_to {
                Some([a, b]) => format!("between threads pinned to cpus {a} and {b}"),
                None => "between two unpinned threads".to_owned(),
            },
            time(min),
            time(median),
            floor.samples_ns.len(),
            floor.round_trips_per_sample,
            floor
                .note
                .as_ref()
                .map(|note| format!("; {note}"))
                .unwrap_or_default(),
        ),
        _ => "not measured".to_owned(),
    }
}

/// The lines that head every report: what was measured, how, where, and the floor.
pub fn header(machine: &Machine, floor: &Floor, plan: &Plan) -> String {
    let floor_line = floor_line(floor);
    let samples = plan.row.schedule.samples - plan.dropped();
    let method = match (plan.row.mode, plan.delay) {
        (Mode::Epcc, Some(delay)) => format!(
            "EPCC syncbench: delay({:.2} µs) then barrier, reference loop subtracted; {samples} \
             outer repetitions after 1 dropped",
            delay.as_secs_f64() * 1e6
        ),
        _ => format!("back-to-back episodes, no delay; {samples} samples"),
    };
    format!(
        "phasers {}: {}\n\
         method:  {method}, about {:.1} s per test{}\n\
         machine: {}\n\
         floor:   {floor_line}\n\
         units:   ns (µs or ms when large) per barrier; mean ± half-width of its 95% confidence\n         \
         interval, min and median over the repetitions; ÷ref and ÷floor divide the median by\n         \
         the reference barrier's median and by the floor's median (lower is better)\n",
        plan.benchmark.name(),
        plan.benchmark.measures(),
        plan.time_per_test.as_secs_f64(),
        if plan.row.pin { ", threads pinned" } else { "" },
        machine.summary()
    )
}

/// The table of one thread count.
pub fn table(group: &Group, machine: &Machine, floor: &Floor) -> String {
    let reference = group
        .row(&Contender::Reference.name())
        .and_then(Row::median);
    let cores = machine.available_cores;
    let mut cells: Vec<[String; 7]> = vec![[
        "barrier".into(),
        "mean ± 95% CI".into(),
        "min".into(),
        "median".into(),
        "÷ref".into(),
        "÷floor".into(),
        "note".into(),
    ]];
    for row in &group.rows {
        cells.push([
            barrier_label(row),
            row.summary.map_or_else(
                || "-".into(),
                |summary| match summary.ci95 {
                    Some(ci) => format!("{} ± {}", time(summary.mean), time(ci)),
                    None => time(summary.mean),
                },
            ),
            row.min().map_or_else(|| "-".into(), time),
            row.median().map_or_else(|| "-".into(), time),
            ratio(row.median(), reference),
            ratio(row.median(), floor.median_ns),
            row_note(row),
        ]);
    }
    let mut out = format!(
        "{} thread{} on {cores} core{}{}{}\n",
        group.threads,
        if group.threads == 1 { "" } else { "s" },
        if cores == 1 { "" } else { "s" },
        if group.oversubscribed {
            " (oversubscribed)"
        } else {
            ""
        },
        group
            .reference_loop
            .as_ref()
            .and_then(|row| row.summary)
            .map(|summary| format!(", reference loop {} per iteration", time(summary.mean)))
            .unwrap_or_default(),
    );
    out.push_str(&aligned(&cells, Last::Free));
    out
}

/// Our best row against the reference, every baseline and the floor, by median.
pub fn ratios(group: &Group, floor: &Floor) -> Option<String> {
    let best = group
        .rows
        .iter()
        .filter(|row| row.kind == RowKind::Ours && row.error.is_none())
        .filter_map(|row| Some((row, row.median()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let (best_row, best) = best;
    let mut lines = vec![format!(
        "{} thread{}: our best is {} at {} (median)",
        group.threads,
        if group.threads == 1 { "" } else { "s" },
        barrier_label(best_row),
        time(best)
    )];
    for row in group
        .rows
        .iter()
        .filter(|row| matches!(row.kind, RowKind::Reference | RowKind::Baseline))
    {
        if let Some(median) = row.median() {
            lines.push(format!(
                "  {:<22} {:>9}  ours/theirs {}",
                row.barrier,
                time(median),
                ratio(Some(best), Some(median))
            ));
        }
    }
    if let Some(median) = floor.median_ns {
        lines.push(format!(
            "  {:<22} {:>9}  ours/floor  {}",
            "floor",
            time(median),
            ratio(Some(best), Some(median))
        ));
    }
    Some(lines.join("\n"))
}

/// Lays out `cells` in columns: the first left-aligned, numbers right-aligned, and the last
/// left-aligned and unpadded when it is `Last::Free` (notes).
pub fn aligned<L: AsRef<[String]>>(cells: &[L], last: Last) -> String {
    let columns = cells
        .iter()
        .map(|line| line.as_ref().len())
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            cells
                .iter()
                .filter_map(|line| line.as_ref().get(column))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in cells {
        let mut text = String::new();
        for (column, cell) in line.as_ref().iter().enumerate() {
            let pad = " ".repeat(widths[column] - cell.chars().count());
            match column {
                0 => text.push_str(&format!("{cell}{pad}")),
                c if c == columns - 1 && last == Last::Free => text.push_str(&format!("  {cell}")),
                _ => text.push_str(&format!("  {pad}{cell}")),
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// How [`aligned`] lays out the last column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// Right-aligned, like every number.
    Number,
    /// Left-aligned and unpadded: free text.
    Free,
}

/// A row's name, with what it resolved to when that differs (`auto → counting`).
pub fn barrier_label(row: &Row) -> String {
    match &row.resolved {
        Some(resolved) if *resolved != row.barrier => format!("{} → {resolved}", row.barrier),
        _ => row.barrier.clone(),
    }
}

fn row_note(row: &Row) -> String {
    let parts: Vec<&str> = [row.error.as_deref(), row.note.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    match (&row.error, parts.is_empty()) {
        (Some(_), _) => format!("ERROR: {}", parts.join("; ")),
        (None, true) => String::new(),
        (None, false) => parts.join("; "),
    }
}

/// A duration in nanoseconds, in the unit that keeps it readable. EPCC costs can be slightly
/// negative (a barrier cheaper than the noise of its reference loop), so the sign is kept.
pub fn time(ns: f64) -> String {
    let magnitude = ns.abs();
    if magnitude < 100.0 {
        format!("{ns:.1} ns")
    } else if magnitude < 10_000.0 {
        format!("{ns:.0} ns")
    } else if magnitude < 10_000_000.0 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.1} ms", ns / 1e6)
    }
}

/// `numerator / denominator` as "1.23x", or "-" when either is missing or the ratio is meaningless.
pub fn ratio(numerator: Option<f64>, denominator: Option<f64>) -> String {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d > 0.0 && n.is_finite() => {
            let r = n / d;
            if r >= 100.0 {
                format!("{r:.0}x")
            } else {
                format!("{r:.2}x")
            }
        }
        _ => "-".into(),
    }
}

/// Opens an output file before the run, so a bad path fails in a second rather than after a minute.
pub fn create_file(path: &Path) -> io::Result<BufWriter<File>> {
    File::create(path).map(BufWriter::new)
}

/// Writes a report as pretty-printed JSON.
pub fn write_json(mut out: impl Write, report: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut out, report)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Plots every row's median against threads.
pub fn write_plot(path: &Path, report: &Report) -> Result<(), String> {
    let mut series: Vec<plot::Series> = Vec::new();
    for group in &report.groups {
        for row in &group.rows {
            let Some(median) = row.median() else { continue };
            let name = row.barrier.clone();
            let index = match series.iter().position(|line| line.name == name) {
                Some(index) => index,
                None => {
                    series.push(plot::Series {
                        name,
                        kind: match row.kind {
                            RowKind::Reference => plot::SeriesKind::Reference,
                            RowKind::Ours => plot::SeriesKind::Ours,
                            RowKind::Baseline | RowKind::Loop => plot::SeriesKind::Baseline,
                        },
                        points: Vec::new(),
                    });
                    series.len() - 1
                }
            };
            series[index].points.push((group.threads, median));
        }
    }
    let title = format!(
        "phasers {} ({}), {}",
        report.provenance.benchmark,
        report.settings.mode.name(),
        report.provenance.machine.summary()
    );
    plot::write_svg(
        path,
        &plot::Plot {
            title: &title,
            y_label: "median cost per barrier",
            series: &series,
            floor_ns: report.floor.median_ns,
            cores: Some(report.provenance.machine.available_cores),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(barrier: &str, kind: RowKind, samples: &[f64]) -> Row {
        let mut row = Row::measured(barrier, kind, samples.len(), samples.to_vec());
        row.finish(0, None);
        row
    }

    fn floor(median: f64) -> Floor {
        Floor {
            pinned_to: Some([0, 1]),
            round_trips_per_sample: 1000,
            samples_ns: vec![median],
            min_ns: Some(median),
            median_ns: Some(median),
            note: None,
        }
    }

    fn machine() -> Machine {
        crate::results::report_of(Vec::new()).provenance.machine
    }

    fn group() -> Group {
        let mut auto = row("auto", RowKind::Ours, &[40.0, 50.0, 60.0]);
        auto.resolved = Some("counting".into());
        Group {
            threads: 4,
            oversubscribed: true,
            reference_loop: None,
            openmp_reference_loop: None,
            rows: vec![
                row("reference", RowKind::Reference, &[100.0, 100.0, 100.0]),
                row("std::sync::Barrier", RowKind::Baseline, &[1000.0, 1000.0]),
                auto,
                row("mcs", RowKind::Ours, &[80.0]),
                Row::failed("tournament", RowKind::Ours, 3, "boom".into()),
            ],
        }
    }

    #[test]
    fn times_pick_readable_units() {
        assert_eq!(time(12.34), "12.3 ns");
        assert_eq!(time(1234.0), "1234 ns");
        assert_eq!(time(45_600.0), "45.6 µs");
        assert_eq!(time(12_300_000.0), "12.3 ms");
        assert_eq!(time(-3.25), "-3.2 ns");
        assert_eq!(time(-45_600.0), "-45.6 µs");
    }

    #[test]
    fn ratios_format() {
        assert_eq!(ratio(Some(300.0), Some(100.0)), "3.00x");
        assert_eq!(ratio(Some(25_000.0), Some(10.0)), "2500x");
        assert_eq!(ratio(None, Some(1.0)), "-");
        assert_eq!(ratio(Some(1.0), Some(0.0)), "-");
    }

    #[test]
    fn table_aligns_and_compares_to_the_reference_and_floor() {
        let text = table(&group(), &machine(), &floor(25.0));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "4 threads on 2 cores (oversubscribed)");
        assert!(lines[1].starts_with("barrier"));
        assert!(lines[4].starts_with("auto → counting"), "{text}");
        // Median 50 over the reference's 100 and the floor's 25.
        assert!(
            lines[4].contains("0.50x") && lines[4].contains("2.00x"),
            "{text}"
        );
        // Mean 50 ± t(2) * sd 10 / sqrt 3 = 24.8.
        assert!(lines[4].contains("50.0 ns ± 24.8 ns"), "{text}");
        assert!(lines[6].contains("ERROR: boom"));
        // The median column ends at the same place on every line.
        let header = lines[1];
        let median_end = header[..header.find("median").unwrap()].chars().count() + "median".len();
        assert_eq!(lines[2].chars().take(median_end).last(), Some('s'));
    }

    #[test]
    fn ratios_name_our_best_against_each_baseline() {
        let text = ratios(&group(), &floor(25.0)).unwrap();
        assert!(
            text.starts_with("4 threads: our best is auto → counting at 50.0 ns"),
            "{text}"
        );
        assert!(
            text.contains("reference") && text.contains("0.50x"),
            "{text}"
        );
        assert!(
            text.contains("std::sync::Barrier") && text.contains("0.05x"),
            "{text}"
        );
        assert!(text.contains("floor") && text.contains("2.00x"), "{text}");
    }

    #[test]
    fn no_successful_row_of_ours_means_no_ratios() {
        let mut only_baselines = group();
        only_baselines.rows.retain(|row| row.kind != RowKind::Ours);
        assert_eq!(ratios(&only_baselines, &floor(25.0)), None);
    }
}
