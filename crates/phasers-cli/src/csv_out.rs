//! `--csv`: one line per row, for spreadsheets and plotting scripts.
//!
//! The JSON holds everything; the CSV holds the summary of each row, plus the floors (the round
//! trip over the whole run, and each table's floor row) and EPCC's reference loops as rows of their
//! own, so a reader can recompute every ratio from it alone.

use std::io::Write;

use phasers_cli::harness::outputs::{write_csv_lines, NoteAndError};
use serde::Serialize;

use crate::regime_floor::{RegimeFloor, RegimeName};
use crate::results::Report;
use phasers_cli::harness::row::{Row, RowKind};

/// One line of the file, up to the note and error every benchmark's line ends with. Times are in
/// nanoseconds per barrier (per iteration for the loops).
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
}

impl<'a> Line<'a> {
    /// What every floor line has in common; each sets its own numbers.
    const FLOOR: Line<'static> = Line {
        threads: 0,
        oversubscribed: false,
        barrier: "floor",
        kind: "floor",
        resolved: None,
        mode: "",
        samples: 0,
        min_ns: None,
        median_ns: None,
        mean_ns: None,
        ci95_ns: None,
        stddev_ns: None,
        reference_ns: None,
        spread: None,
        noisy: false,
    };

    fn of(
        row: &'a Row,
        threads: usize,
        oversubscribed: bool,
        mode: &'a str,
    ) -> (Self, NoteAndError<'a>) {
        let summary = row.summary;
        let line = Line {
            threads,
            oversubscribed,
            barrier: &row.barrier,
            kind: match row.kind {
                RowKind::Reference => "reference",
                RowKind::Baseline => "baseline",
                RowKind::Ours => "ours",
                RowKind::Loop => "loop",
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
        };
        (line, NoteAndError::of(&row.note, &row.error))
    }

    /// A table's floor row, whose `samples` counts its rounds.
    fn regime(floor: &'a RegimeFloor, oversubscribed: bool) -> (Self, NoteAndError<'a>) {
        let line = Line {
            threads: floor.threads,
            oversubscribed,
            mode: match floor.regime {
                RegimeName::RoundTrip => "round-trip",
                RegimeName::YieldHandoffs => "yield-handoffs",
            },
            samples: floor.round_medians_ns.len(),
            min_ns: floor.min_ns,
            median_ns: floor.median_ns,
            spread: floor.spread,
            ..Line::FLOOR
        };
        (line, NoteAndError::note(Some(&floor.note)))
    }
}

/// Writes the report's rows as CSV with a header line: the run's round trip, then each table's
/// floor row, reference loops and rows.
pub fn write(out: impl Write, report: &Report) -> csv::Result<()> {
    let mode = report.settings.mode.name();
    let floor = &report.floor;
    // The round trip over the whole run, between 2 threads.
    let whole = Line {
        threads: 2,
        mode: "round-trip",
        samples: floor.samples_ns.len(),
        min_ns: floor.min_ns,
        median_ns: floor.median_ns,
        ..Line::FLOOR
    };
    let whole = (whole, NoteAndError::note(floor.note.as_deref()));
    let tables = report.groups.iter().flat_map(|group| {
        let floor = report.regime_floor(group.threads);
        let rows = (group.reference_loop.iter())
            .chain(&group.openmp_reference_loop)
            .chain(&group.rows)
            .map(move |row| Line::of(row, group.threads, group.oversubscribed, mode));
        (floor
            .map(|floor| Line::regime(floor, group.oversubscribed))
            .into_iter())
        .chain(rows)
    });
    write_csv_lines(out, std::iter::once(whole).chain(tables))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::{group, report_of};

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
        let mut report = report_of(vec![group(4, true, Vec::new())]);
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
