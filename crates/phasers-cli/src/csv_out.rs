//! `--csv`: one line per row, for spreadsheets and plotting scripts.
//!
//! The JSON holds everything; the CSV holds the summary of each row, plus the floors (the round
//! trip over the whole run, and each table's floor row) and EPCC's reference loops as rows of their
//! own, so a reader can recompute every ratio from it alone.

use std::io::Write;

use serde::Serialize;

use crate::regime_floor::{RegimeFloor, RegimeName};
use crate::results::{Report, Row};

/// One line of the file. Times are in nanoseconds per barrier (per iteration for the loops).
#[derive(Debug, Serialize)]
struct Line<'a> {
    threads: usize,
    oversubscribed: bool,
    barrier: &'a str,
    kind: &'a str,
    resolved: Option<&'a str>,
    mode: &'a str,
    samples: usize,
    min_ns: Option<f64>,
    median_ns: Option<f64>,
    mean_ns: Option<f64>,
    ci95_ns: Option<f64>,
    stddev_ns: Option<f64>,
    reference_ns: Option<f64>,
    spread: Option<f64>,
    noisy: bool,
    note: Option<&'a str>,
    error: Option<&'a str>,
}

impl<'a> Line<'a> {
    fn of(row: &'a Row, threads: usize, oversubscribed: bool, mode: &'a str) -> Self {
        let summary = row.summary;
        Line {
            threads,
            oversubscribed,
            barrier: &row.barrier,
            kind: match row.kind {
                crate::results::RowKind::Reference => "reference",
                crate::results::RowKind::Baseline => "baseline",
                crate::results::RowKind::Ours => "ours",
                crate::results::RowKind::Loop => "loop",
            },
            resolved: row.resolved.as_deref(),
            mode,
            samples: row.samples_ns.len(),
            min_ns: summary.map(|s| s.min),
            median_ns: summary.map(|s| s.median),
            mean_ns: summary.map(|s| s.mean),
            ci95_ns: summary.and_then(|s| s.ci95),
            stddev_ns: summary.map(|s| s.stddev),
            reference_ns: row.reference_ns,
            spread: row.spread,
            noisy: row.noisy,
            note: row.note.as_deref(),
            error: row.error.as_deref(),
        }
    }

    /// A table's floor row; `samples` counts its rounds.
    fn floor(floor: &'a RegimeFloor, oversubscribed: bool) -> Self {
        Line {
            threads: floor.threads,
            oversubscribed,
            barrier: "floor",
            kind: "floor",
            resolved: None,
            mode: match floor.regime {
                RegimeName::RoundTrip => "round-trip",
                RegimeName::YieldHandoffs => "yield-handoffs",
            },
            samples: floor.round_medians_ns.len(),
            min_ns: floor.min_ns,
            median_ns: floor.median_ns,
            mean_ns: None,
            ci95_ns: None,
            stddev_ns: None,
            reference_ns: None,
            spread: floor.spread,
            noisy: false,
            note: Some(&floor.note),
            error: None,
        }
    }
}

/// Writes the report's rows as CSV with a header line.
pub fn write(out: impl Write, report: &Report) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    let mode = report.settings.mode.name();
    let floor = &report.floor;
    writer.serialize(Line {
        threads: 2,
        oversubscribed: false,
        barrier: "floor",
        kind: "floor",
        resolved: None,
        mode: "round-trip",
        samples: floor.samples_ns.len(),
        min_ns: floor.min_ns,
        median_ns: floor.median_ns,
        mean_ns: None,
        ci95_ns: None,
        stddev_ns: None,
        reference_ns: None,
        spread: None,
        noisy: false,
        note: floor.note.as_deref(),
        error: None,
    })?;
    for group in &report.groups {
        if let Some(floor) = report.regime_floor(group.threads) {
            writer.serialize(Line::floor(floor, group.oversubscribed))?;
        }
        let rows = group
            .reference_loop
            .iter()
            .chain(&group.openmp_reference_loop)
            .chain(&group.rows);
        for row in rows {
            writer.serialize(Line::of(row, group.threads, group.oversubscribed, mode))?;
        }
    }
    writer.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RowKind;

    #[test]
    fn a_row_becomes_one_line_with_a_header() {
        let mut row = Row::measured("mcs", RowKind::Ours, 3, vec![10.0, 20.0, 30.0]);
        row.finish(0, Some(1.0));
        let mut out = Vec::new();
        {
            let mut writer = csv::Writer::from_writer(&mut out);
            writer.serialize(Line::of(&row, 4, true, "epcc")).unwrap();
            writer.flush().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "threads,oversubscribed,barrier,kind,resolved,mode,samples,min_ns,median_ns,mean_ns,\
             ci95_ns,stddev_ns,reference_ns,spread,noisy,note,error"
        );
        assert!(
            lines[1].starts_with("4,true,mcs,ours,,epcc,3,9.0,19.0,19.0,"),
            "{text}"
        );
        assert!(lines[1].ends_with(",1.0,,false,,"), "{text}");
    }

    #[test]
    fn each_table_has_a_floor_line() {
        let mut report = crate::results::report_of(Vec::new());
        report.groups = vec![crate::results::Group {
            threads: 4,
            oversubscribed: true,
            reference_loop: None,
            openmp_reference_loop: None,
            rows: Vec::new(),
        }];
        report.regime_floors = vec![RegimeFloor::yield_handoffs(4, 2, &[1000.0, 1100.0])];
        let mut out = Vec::new();
        write(&mut out, &report).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = text.lines().nth(2).unwrap();
        assert!(
            line.starts_with("4,true,floor,floor,,yield-handoffs,2,2000.0,2100.0,,,,,1.1,false,"),
            "{text}"
        );
    }
}
