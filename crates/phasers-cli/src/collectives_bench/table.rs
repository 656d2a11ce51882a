//! The table printed for each member count: one block per operation and size, headed by the
//! operation, in the order measured; each broadcast length comes after the memcpy of that length.

use phasers_cli::harness::footnotes::{wrap, Footnotes};
use phasers_cli::harness::stats::Summary;
use phasers_cli::harness::table::{aligned, note_cell, ratio, time, Last};
use phasers_cli::harness::verbosity;

use super::baselines::openmp_counterpart;
use super::grid::{team_sizes, Shape};
use super::results::CollectiveRow;

/// The table of `rows` (those of one member count N = `members`, and the memcpy rows of its
/// broadcasts), on a machine of `cores` cores and a grid of `columns` columns.
pub fn table(members: usize, cores: usize, columns: usize, rows: &[CollectiveRow]) -> String {
    table_in(members, cores, columns, rows, verbosity::verbose())
}

/// The same, every note in full when `verbose`, else as footnotes.
fn table_in(
    members: usize,
    cores: usize,
    columns: usize,
    rows: &[CollectiveRow],
    verbose: bool,
) -> String {
    let rows_of = team_sizes(Shape::Row, members, columns);
    let columns_of = team_sizes(Shape::Column, members, columns);
    let title = format!(
        "N = {members} on {cores} core{}{}; split_grid({columns}): {} row team(s) of {}, {} \
         column team(s) of {}\n",
        if cores == 1 { "" } else { "s" },
        if phasers::is_oversubscribed(members) {
            " (oversubscribed)"
        } else {
            ""
        },
        rows_of.len(),
        rows_of.first().copied().unwrap_or(0),
        columns_of.len(),
        columns_of.first().copied().unwrap_or(0),
    );
    let mut out = wrap("", title.trim_end());
    let mut notes = Footnotes::default();
    let head = [
        "row",
        "per op min",
        "median",
        "GB/s",
        "of memcpy",
        "÷omp",
        "note",
    ];
    let mut cells: Vec<Vec<String>> = vec![head.map(str::to_owned).to_vec()];
    let mut previous = None;
    for row in rows {
        let block = (row.part, row.operation);
        if previous != Some(block) {
            // The operation heads its block on a line of its own.
            cells.push(vec![row.operation.label()]);
        }
        previous = Some(block);
        let time_of = |pick: fn(&Summary) -> f64| {
            row.summary
                .as_ref()
                .map_or("-".to_owned(), |s| time(pick(s)))
        };
        cells.push(vec![
            format!("  {}", row.label()),
            time_of(|summary| summary.min),
            time_of(|summary| summary.median),
            row.bandwidth_gb_s
                .map_or_else(String::new, |gb| format!("{gb:.2}")),
            row.fraction_of_memcpy
                .map_or_else(String::new, |f| format!("{:.0}%", f * 100.0)),
            over_openmp(row, rows),
            match verbose {
                true => note_cell(row.error.as_deref(), &[row.note.as_deref()]),
                false => {
                    let error = row.error.as_deref().map(|error| format!("ERROR: {error}"));
                    notes.marks([error.as_deref(), row.note.as_deref()])
                }
            },
        ]);
    }
    out.push_str(&aligned(&cells, Last::Free));
    out.push_str(&notes.text());
    out
}

/// The row's median over that of the OpenMP counterpart of its operation in the same part, for
/// the team of all and the barriers on N threads; empty where there is nothing to compare.
fn over_openmp(row: &CollectiveRow, rows: &[CollectiveRow]) -> String {
    let Some((_, omp_name)) = openmp_counterpart(row.operation) else {
        return String::new();
    };
    let omp = rows.iter().find(|other| {
        other.name == omp_name
            && other.part == row.part
            && other.operation == row.operation
            && other.error.is_none()
    });
    match omp.and_then(CollectiveRow::median) {
        Some(omp) if row.name != omp_name && matches!(row.team, None | Some(Shape::All)) => {
            ratio(row.median(), Some(omp))
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives_bench::operation::{Operation, Part};
    use crate::collectives_bench::results::tests::{named, team};
    use crate::collectives_bench::results::Kind;

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
        let rows = [failed, copy, all, rows_team, omp];
        let concise = table_in(4, 2, 2, &rows, false);
        assert!(
            concise.lines().all(|line| line.chars().count() <= 100),
            "{concise}"
        );
        assert!(
            concise.contains("  team all") && concise.ends_with("[1] ERROR: boom\n"),
            "{concise}"
        );
        let text = table_in(4, 2, 2, &rows, true);
        let expected: [(&str, &[&str]); 10] = [
            (
                "N = 4 on 2 cores",
                &["2 row team(s) of 2, 2 column team(s) of 2"],
            ),
            ("row ", &["÷omp"]),
            ("barrier", &[]),
            ("  team all", &["ERROR: boom"]),
            ("memcpy 8 words", &[]),
            ("  memcpy", &["6.40"]),
            ("broadcast 8 words", &[]),
            ("  team all", &["10%", "0.25x"]),
            // Only the team of all is compared with OpenMP.
            ("  team row (2 x 2)", &[]),
            ("  omp broadcast", &[]),
        ];
        assert_eq!(text.lines().count(), expected.len(), "{text}");
        for (line, (start, parts)) in text.lines().zip(expected) {
            let fits = line.starts_with(start) && parts.iter().all(|part| line.contains(part));
            assert!(fits, "{line:?} in\n{text}");
        }
        assert!(!text.lines().nth(8).unwrap().contains("0.12x"), "{text}");
    }
}
