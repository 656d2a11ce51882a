//! The table printed for each participant count, collective and spread: one block of rows per
//! array length, the bandwidth floor first.

use phasers_cli::harness::footnotes::{wrap, Footnotes};
use phasers_cli::harness::stats::Summary;
use phasers_cli::harness::table::{aligned, note_cell, ratio, time, Last};
use phasers_cli::harness::verbosity;

#[cfg(test)]
use super::contender::OPENMP_ACTIVE_NAME;
use super::contender::{Kind, OPENMP_NAME};
use super::metrics::Metric;
use super::results::ReduceRow;
use super::workload::Collective;
use phasers_cli::harness::stalls::{Realized, Spread, StallPolicy};

/// What heads a table.
pub struct TableHead<'a> {
    /// Participants.
    pub threads: usize,
    /// The collective.
    pub collective: Collective,
    /// The spread.
    pub spread: &'a Spread,
    /// The stalls actually drawn.
    pub realized: Realized,
    /// How they waited.
    pub policy: StallPolicy,
    /// Available cores.
    pub cores: usize,
    /// The metric of the ÷omp column.
    pub metric: Metric,
}

/// The columns of the default table, by index into [`COLUMNS`] (the note column follows as
/// footnote marks): the length, the row, the median of the metric, the bandwidth and the two
/// ratios; `--verbose` shows every column.
const CONCISE: [usize; 6] = [0, 1, 4, 8, 9, 10];

const COLUMNS: [&str; 12] = [
    "floats",
    "row",
    "iters",
    "last→done min",
    "median",
    "total min",
    "median",
    "window",
    "GB/s",
    "%floor",
    "÷omp",
    "note",
];

/// The table of `rows` (the floor and contender rows of one participant count, collective and
/// spread, in any order of lengths).
pub fn table(head: &TableHead<'_>, rows: &[&ReduceRow]) -> String {
    table_in(head, rows, verbosity::verbose())
}

/// The same, every column and note in full when `verbose`, else what fits 100 columns with the
/// notes as footnotes.
fn table_in(head: &TableHead<'_>, rows: &[&ReduceRow], verbose: bool) -> String {
    let stalls = match head.policy {
        StallPolicy::Spin => "spin",
        StallPolicy::Yield => "yield the core (oversubscribed)",
    };
    let realized = &head.realized;
    let drawn = match head.spread.is_none() {
        true => String::new(),
        false => format!(
            ": stalls drawn with mean {}, stddev {}, max {}; they {stalls}",
            time(realized.mean_ns),
            time(realized.stddev_ns),
            time(realized.max_ns as f64),
        ),
    };
    let title = format!(
        "N = {} on {} core{}{}, {}, spread {}{drawn}",
        head.threads,
        head.cores,
        if head.cores == 1 { "" } else { "s" },
        match phasers::is_oversubscribed(head.threads) {
            true => " (oversubscribed)",
            false => "",
        },
        head.collective.name(),
        head.spread.name(),
    );
    let mut out = match verbose {
        true => format!("{title}\n"),
        false => wrap("", &title),
    };
    let mut notes = Footnotes::default();
    let mut cells: Vec<Vec<String>> = vec![match verbose {
        true => COLUMNS.map(str::to_owned).to_vec(),
        false => CONCISE
            .iter()
            .map(|&column| COLUMNS[column].to_owned())
            .collect(),
    }];
    let mut sizes: Vec<usize> = rows.iter().map(|row| row.len).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for len in sizes {
        let here = rows.iter().filter(|row| row.len == len);
        let omp = here
            .clone()
            .find(|row| row.name == OPENMP_NAME && row.error.is_none());
        let omp = omp.and_then(|row| row.median(head.metric));
        let floor_first = here.clone().filter(|row| row.kind == Kind::Floor);
        let ordered = floor_first.chain(here.filter(|row| row.kind != Kind::Floor));
        for (index, row) in ordered.enumerate() {
            let s = &row.summaries;
            let min = |summary: Option<Summary>| summary.map_or("-".into(), |s| time(s.min));
            let median = |summary: Option<Summary>| summary.map_or("-".into(), |s| time(s.median));

            cells.push(vec![
                if index == 0 {
                    len.to_string()
                } else {
                    String::new()
                },
                row.label(),
                row.iterations.to_string(),
                min(s.last_arrival_to_completion_ns),
                median(s.last_arrival_to_completion_ns),
                min(s.total_in_reduction_ns),
                median(s.total_in_reduction_ns),
                median(s.arrival_window_ns),
                row.bandwidth_gb_s
                    .map_or("-".into(), |gb| format!("{gb:.2}")),
                row.fraction_of_floor
                    .map_or("-".into(), |f| format!("{:.0}%", f * 100.0)),
                match row.kind {
                    Kind::Floor => String::new(),
                    _ => ratio(row.median(head.metric), omp),
                },
                note_cell(row.error.as_deref(), &[row.note.as_deref()]),
            ]);
            if !verbose {
                let line = cells.pop().unwrap_or_default();
                let error = row.error.as_deref().map(|error| format!("ERROR: {error}"));
                let marks = notes.marks([error.as_deref(), row.note.as_deref()]);
                let mut kept: Vec<String> =
                    CONCISE.iter().map(|&column| line[column].clone()).collect();
                // The median of the metric the ÷omp column divides.
                kept[2] = median(match head.metric {
                    Metric::LastArrival => s.last_arrival_to_completion_ns,
                    Metric::Total => s.total_in_reduction_ns,
                });
                kept.push(marks);
                cells.push(kept);
            }
        }
    }
    out.push_str(&aligned(&cells, Last::Free));
    out.push_str(&notes.text());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::results::tests::row;
    use phasers_cli::harness::stalls::Preset;

    /// The head of a 2-thread reduce table at the seed's high spread.
    fn high_spread_head(spread: &Spread) -> TableHead<'_> {
        TableHead {
            threads: 2,
            collective: Collective::Reduce,
            spread,
            realized: Realized {
                mean_ns: 185_000.0,
                stddev_ns: 98_000.0,
                max_ns: 555_000,
            },
            policy: StallPolicy::Spin,
            cores: 2,
            metric: Metric::LastArrival,
        }
    }

    #[test]
    fn a_table_has_a_block_per_size_with_the_floor_first_and_omp_as_the_unit() {
        let (mode, high) = (Collective::Reduce, Some("high"));
        let mut floor = row("bandwidth floor", 2, 1000, mode, None, (100.0, 200.0));
        (floor.bandwidth_gb_s, floor.fraction_of_floor) = (Some(12.0), Some(1.0));
        let mut auto = row("auto", 2, 1000, mode, high, (200.0, 500.0));
        auto.chose.insert("dynamic-pairs".into(), 20);
        auto.fraction_of_floor = Some(0.5);
        let omp = row(OPENMP_NAME, 2, 1000, mode, high, (400.0, 900.0));
        let mut failed = row("linear", 2, 1, mode, high, (1.0, 1.0));
        failed.error = Some("boom".into());
        let spread = Preset::High.spread();
        let head = high_spread_head(&spread);
        let text = table_in(&head, &[&auto, &failed, &omp, &floor], true);
        let expected: [&[&str]; 6] = [
            &["N = 2 on 2 cores, reduce, spread high: stalls drawn with mean 185.0 µs"],
            &["floats", "÷omp"],
            &["1 ", "ERROR: boom"],
            &["1000", "bandwidth floor", "12.00", "100%"],
            &["auto → dynamic-pairs", "0.50x"],
            &[OPENMP_NAME, "1.00x"],
        ];
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), expected.len(), "{text}");
        for (line, fragments) in lines.iter().zip(expected) {
            assert!(fragments.iter().all(|f| line.contains(f)), "{text}");
        }
        // Each block starts with its length, the floor's row first.
        assert!(lines[0].starts_with("N = 2") && lines[1].starts_with("floats"));
        assert!(lines[2].starts_with("1 ") && lines[3].starts_with("1000 "));
    }

    #[test]
    fn the_default_table_fits_100_columns_with_long_labels_and_notes() {
        let (mode, high) = (Collective::Reduce, Some("high"));
        let mut auto = row("auto", 2, 64_000, mode, high, (4932.0, 140_100.0));
        for (name, count) in [("static-tree", 97), ("dynamic-pairs", 2), ("linear", 1)] {
            auto.chose.insert(name.into(), count);
        }
        auto.note = Some("stopped at the row's 2.5 s budget after 164 of 1000 iterations".into());
        let mut omp = row(
            OPENMP_ACTIVE_NAME,
            2,
            64_000,
            mode,
            high,
            (46_400.0, 190_300.0),
        );
        omp.note = auto.note.clone();
        let mut failed = row("mutex-merged", 2, 64_000, mode, high, (1.0, 1.0));
        failed.error = Some("the sum is wrong at element 63999: 1.5 where 2.5 was expected".into());
        let spread = Preset::High.spread();
        let head = high_spread_head(&spread);
        let text = table_in(&head, &[&auto, &omp, &failed], false);
        assert!(
            text.lines().all(|line| line.chars().count() <= 100),
            "{text}"
        );
        assert_eq!(
            text.matches("stopped at the row's 2.5 s budget").count(),
            1,
            "{text}"
        );
        assert!(text.contains("[2] ERROR: the sum is wrong"), "{text}");
        assert!(
            !text.contains("window") && text.contains("4932 ns"),
            "{text}"
        );
    }
}
