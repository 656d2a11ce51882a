//! The table printed for each member count: one block per operation and size, headed by the
//! operation, in the order measured; each broadcast length comes after the memcpy of that length.

use phasers_cli::harness::stats::Summary;
use phasers_cli::harness::table::{aligned, note_cell, ratio, time, Last};

use super::grid::{team_sizes, Shape};
use super::results::{CollectiveRow, Kind};

/// What heads a table.
pub struct TableHead {
    /// N.
    pub members: usize,
    /// Available cores.
    pub cores: usize,
    /// The grid's columns.
    pub columns: usize,
}

/// The name every OpenMP row starts with.
const OPENMP_PREFIX: &str = "omp ";

/// The table of `rows` (those of one member count, and the memcpy rows of its broadcasts).
pub fn table(head: &TableHead, rows: &[&CollectiveRow]) -> String {
    let rows_of = team_sizes(Shape::Row, head.members, head.columns);
    let columns_of = team_sizes(Shape::Column, head.members, head.columns);
    let mut out = format!(
        "N = {} on {} core{}{}; split_grid({}): {} row team(s) of {}, {} column team(s) of {}\n",
        head.members,
        head.cores,
        if head.cores == 1 { "" } else { "s" },
        if phasers::is_oversubscribed(head.members) {
            " (oversubscribed)"
        } else {
            ""
        },
        head.columns,
        rows_of.len(),
        rows_of.first().copied().unwrap_or(0),
        columns_of.len(),
        columns_of.first().copied().unwrap_or(0),
    );
    let mut cells: Vec<Vec<String>> = vec![[
        "row",
        "per op min",
        "median",
        "GB/s",
        "of memcpy",
        "÷omp",
        "note",
    ]
    .map(str::to_owned)
    .to_vec()];
    let mut previous = None;
    for row in rows {
        let block = (row.part, row.operation);
        if previous != Some(block) {
            // The operation heads its block on a line of its own.
            cells.push(vec![row.operation.label()]);
        }
        previous = Some(block);
        let summary = |pick: fn(&Summary) -> f64| {
            row.summary
                .as_ref()
                .map_or_else(|| "-".to_owned(), |summary| time(pick(summary)))
        };
        cells.push(vec![
            format!("  {}", row.label()),
            summary(|summary| summary.min),
            summary(|summary| summary.median),
            row.bandwidth_gb_s
                .map_or_else(String::new, |gb| format!("{gb:.2}")),
            row.fraction_of_memcpy
                .map_or_else(String::new, |f| format!("{:.0}%", f * 100.0)),
            over_openmp(row, rows),
            note_cell(row.error.as_deref(), &[row.note.as_deref()]),
        ]);
    }
    out.push_str(&aligned(&cells, Last::Free));
    out
}

/// The row's median over that of the OpenMP row of the same part and operation, for the team of
/// all and the barriers on N threads; empty where there is nothing to compare.
fn over_openmp(row: &CollectiveRow, rows: &[&CollectiveRow]) -> String {
    let comparable = matches!(row.team, None | Some(Shape::All))
        && row.kind != Kind::Memcpy
        && !row.name.starts_with(OPENMP_PREFIX);
    let omp = rows
        .iter()
        .find(|other| {
            other.name.starts_with(OPENMP_PREFIX)
                && other.part == row.part
                && other.operation == row.operation
                && other.error.is_none()
        })
        .and_then(|other| other.median());
    match (comparable, omp) {
        (true, Some(_)) => ratio(row.median(), omp),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives_bench::operation::{Operation, Part};
    use crate::collectives_bench::results::tests::{named, team};

    #[test]
    fn a_table_compares_with_memcpy_and_openmp() {
        let words = Operation::Broadcast { words: 8 };
        let copy = Operation::Memcpy { words: 8 };
        let mut copy = named(Part::Broadcast, copy, "memcpy", Kind::Memcpy, 1, 10.0);
        copy.bandwidth_gb_s = Some(6.4);
        let mut all = team(Part::Broadcast, words, 4, Shape::All, 100.0);
        all.fraction_of_memcpy = Some(0.1);
        let mut rows_team = team(Part::Broadcast, words, 4, Shape::Row, 50.0);
        rows_team.team_sizes = vec![2, 2];
        let omp_name = "omp broadcast via shared buffer";
        let omp = named(Part::Broadcast, words, omp_name, Kind::Baseline, 4, 400.0);
        let mut failed = team(Part::Barrier, Operation::Barrier, 4, Shape::All, 1.0);
        failed.error = Some("boom".into());
        let text = table(
            &TableHead {
                members: 4,
                cores: 2,
                columns: 2,
            },
            &[&failed, &copy, &all, &rows_team, &omp],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("N = 4 on 2 cores")
                && lines[0].contains("2 row team(s) of 2, 2 column team(s) of 2"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("row ") && lines[1].contains("÷omp"),
            "{text}"
        );
        assert_eq!(lines[2], "barrier", "{text}");
        assert!(
            lines[3].starts_with("  team all") && lines[3].contains("ERROR: boom"),
            "{text}"
        );
        assert_eq!(lines[4], "memcpy 8 words", "{text}");
        assert!(
            lines[5].contains("memcpy") && lines[5].contains("6.40"),
            "{text}"
        );
        assert_eq!(lines[6], "broadcast 8 words", "{text}");
        assert!(
            lines[7].starts_with("  team all")
                && lines[7].contains("10%")
                && lines[7].contains("0.25x"),
            "{text}"
        );
        assert!(
            lines[8].starts_with("  team row (2 x 2)") && !lines[8].contains("0.12x"),
            "{text}"
        );
        assert!(lines[9].starts_with("  omp broadcast"), "{text}");
    }
}
