//! `--csv`: one line per row, plus the cache-line floor, for spreadsheets and plotting scripts.
//! Times are nanoseconds per operation.

use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::outputs::NoteAndError;
use serde::Serialize;

use super::results::{CollectiveRow, Kind};

/// One line of the file, up to the note and error every benchmark's line ends with.
#[derive(Debug, Default, Serialize)]
pub struct Line<'a> {
    members: usize,
    oversubscribed: bool,
    part: &'a str,
    op: &'a str,
    words: Option<usize>,
    row: String,
    kind: &'a str,
    team: Option<&'a str>,
    teams: Option<usize>,
    largest_team: Option<usize>,
    checked: Option<bool>,
    sync_mode: Option<&'a str>,
    samples: usize,
    min_ns: Option<f64>,
    median_ns: Option<f64>,
    mean_ns: Option<f64>,
    bandwidth_gb_s: Option<f64>,
    aggregate_gb_s: Option<f64>,
    fraction_of_memcpy: Option<f64>,
}

impl<'a> Line<'a> {
    fn of(row: &'a CollectiveRow) -> (Self, NoteAndError<'a>) {
        let line = Line {
            members: row.members,
            oversubscribed: row.oversubscribed,
            part: row.part.name(),
            op: row.operation.name(),
            words: row.operation.words(),
            row: row.label(),
            kind: match row.kind {
                Kind::Ours => "ours",
                Kind::OurBarrier => "our-barrier",
                Kind::Baseline => "baseline",
                Kind::Memcpy => "memcpy",
            },
            team: row.team.map(|shape| shape.name()),
            teams: row.team.map(|_| row.team_sizes.len()),
            largest_team: row.team_sizes.iter().max().copied(),
            checked: row.checked,
            sync_mode: row.sync_mode.as_deref(),
            samples: row.samples_ns.len(),
            min_ns: row.min(),
            median_ns: row.median(),
            mean_ns: row.summary.map(|summary| summary.mean),
            bandwidth_gb_s: row.bandwidth_gb_s,
            aggregate_gb_s: row.aggregate_gb_s,
            fraction_of_memcpy: row.fraction_of_memcpy,
        };
        (line, NoteAndError::of(&row.note, &row.error))
    }
}

/// The lines of the file: the cache-line floor (as a row named `cache-line round trip`, its
/// round trip in the time columns), then every row.
pub fn lines<'a>(floor: &'a Floor, rows: &'a [CollectiveRow]) -> Vec<(Line<'a>, NoteAndError<'a>)> {
    let floor_line = Line {
        members: 2,
        part: "floor",
        op: "round-trip",
        row: "cache-line round trip".to_owned(),
        kind: "floor",
        samples: floor.samples_ns.len(),
        min_ns: floor.min_ns,
        median_ns: floor.median_ns,
        ..Line::default()
    };
    let floor = (floor_line, NoteAndError::note(floor.note.as_deref()));
    std::iter::once(floor)
        .chain(rows.iter().map(Line::of))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_cli::harness::outputs::write_csv_lines;

    use crate::collectives_bench::grid::Shape;
    use crate::collectives_bench::operation::{Operation, Part};
    use crate::collectives_bench::results::tests::team;

    #[test]
    fn a_row_becomes_a_line_under_a_header() {
        let floor = Floor {
            pinned_to: None,
            round_trips_per_sample: 10,
            samples_ns: vec![50.0],
            min_ns: Some(50.0),
            median_ns: Some(50.0),
            note: None,
        };
        let operation = Operation::Broadcast { words: 64 };
        let mut team = team(Part::Broadcast, operation, 4, Shape::Row, 10.0);
        team.team_sizes = vec![2, 2];
        team.fraction_of_memcpy = Some(0.5);
        let mut out = Vec::new();
        let rows = [team];
        write_csv_lines(&mut out, lines(&floor, &rows)).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].starts_with("members,oversubscribed,part,op,words,row,kind,team"),
            "{text}"
        );
        assert!(lines[1].contains("cache-line round trip,floor"), "{text}");
        assert!(
            lines[2].starts_with(
                "4,false,broadcast,broadcast,64,team row (2 x 2),ours,row,2,2,false,AllSync,1,\
                 10.0,10.0,10.0,,,0.5"
            ),
            "{text}"
        );
    }
}
