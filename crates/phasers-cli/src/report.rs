//! Presenting results: aligned tables on stdout and the JSON file.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::contender::Contender;
use crate::floor::Floor;
use crate::machine::Machine;
use crate::results::{Group, Report, Row};

/// The lines that head every report: what was measured, where, and the floor.
pub fn header(machine: &Machine, floor: &Floor) -> String {
    let floor_line = match (floor.min_ns, floor.median_ns) {
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
    };
    format!(
        "phasers bench barrier: back-to-back episodes, cost of one barrier episode\n\
         machine: {}\n\
         floor:   {floor_line}\n\
         units:   min and median over samples, in ns (µs or ms when large) per episode;\n         \
         median/ref = median / reference median (lower is better);\n         \
         x faster than std = std::sync::Barrier median / median (higher is better)\n",
        machine.summary()
    )
}

/// The table of one thread count.
pub fn table(group: &Group, cores: usize) -> String {
    let median_of = |name: &str| {
        group
            .rows
            .iter()
            .find(|row| row.barrier == name && row.error.is_none())
            .and_then(|row| row.median_ns)
    };
    let reference = median_of(Contender::Reference.name());
    let std = median_of(Contender::Std.name());

    let mut cells: Vec<[String; 6]> = vec![[
        "barrier".into(),
        "min".into(),
        "median".into(),
        "median/ref".into(),
        "x faster than std".into(),
        "note".into(),
    ]];
    for row in &group.rows {
        cells.push([
            barrier_label(row),
            row.min_ns.map_or_else(|| "-".into(), time),
            row.median_ns.map_or_else(|| "-".into(), time),
            ratio(row.median_ns, reference),
            ratio(std, row.median_ns),
            row_note(row),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|column| {
            cells
                .iter()
                .map(|line| line[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();

    let mut out = format!(
        "{} thread{} on {cores} core{}{}\n",
        group.threads,
        if group.threads == 1 { "" } else { "s" },
        if cores == 1 { "" } else { "s" },
        if group.oversubscribed {
            " (oversubscribed)"
        } else {
            ""
        }
    );
    for line in &cells {
        let mut text = String::new();
        for (column, cell) in line.iter().enumerate() {
            let pad = " ".repeat(widths[column] - cell.chars().count());
            match column {
                0 => text.push_str(&format!("{cell}{pad}")),
                5 => text.push_str(&format!("  {cell}")),
                _ => text.push_str(&format!("  {pad}{cell}")),
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

fn barrier_label(row: &Row) -> String {
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

/// A duration in nanoseconds, in the unit that keeps it readable.
pub fn time(ns: f64) -> String {
    if ns < 100.0 {
        format!("{ns:.1} ns")
    } else if ns < 10_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 10_000_000.0 {
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

/// Opens the JSON file before the run, so a bad path fails in a second rather than after a minute.
pub fn create_json(path: &Path) -> io::Result<BufWriter<File>> {
    File::create(path).map(BufWriter::new)
}

/// Writes the report as pretty-printed JSON.
pub fn write_json(mut out: impl Write, report: &Report) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut out, report)?;
    out.write_all(b"\n")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(barrier: &str, median: Option<f64>) -> Row {
        Row {
            barrier: barrier.into(),
            resolved: None,
            wait_policy: None,
            episodes_per_sample: 10,
            sample_episodes: vec![10],
            samples_wanted: 1,
            samples_ns: median.into_iter().collect(),
            min_ns: median,
            median_ns: median,
            row_s: 0.1,
            note: None,
            error: None,
        }
    }

    #[test]
    fn times_pick_readable_units() {
        assert_eq!(time(12.34), "12.3 ns");
        assert_eq!(time(1234.0), "1234 ns");
        assert_eq!(time(45_600.0), "45.6 µs");
        assert_eq!(time(12_300_000.0), "12.3 ms");
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(Some(300.0), Some(100.0)), "3.00x");
        assert_eq!(ratio(Some(25_000.0), Some(10.0)), "2500x");
        assert_eq!(ratio(None, Some(1.0)), "-");
        assert_eq!(ratio(Some(1.0), Some(0.0)), "-");
    }

    #[test]
    fn table_aligns_and_compares_to_the_baselines() {
        let mut auto = row("auto", Some(50.0));
        auto.resolved = Some("counting".into());
        let mut failed = Row::failed("mcs", 1, "boom".into());
        failed.note = None;
        let group = Group {
            threads: 4,
            oversubscribed: true,
            rows: vec![
                row("reference", Some(100.0)),
                row("std::sync::Barrier", Some(1000.0)),
                auto,
                failed,
            ],
        };
        let text = table(&group, 2);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "4 threads on 2 cores (oversubscribed)");
        assert!(lines[1].starts_with("barrier"));
        assert!(lines[4].starts_with("auto → counting"));
        assert!(lines[4].contains("0.50x") && lines[4].contains("20.00x"));
        assert!(lines[5].contains("ERROR: boom"));
        // The median column ends at the same place on every line.
        let end = |line: &str| line.find("median").map(|i| i + "median".len());
        let median_end = end(lines[1]).unwrap();
        assert_eq!(lines[2].chars().take(median_end).last(), Some('s'));
    }
}
