//! The table printed for each participant count, collective and spread: one block of rows per
//! array length, the bandwidth floor first.

use crate::report::{aligned, ratio, time, Last};

use super::collective::Collective;
use super::contender::{Kind, OPENMP_NAME};
use super::metrics::Metric;
use super::results::ReduceRow;
use super::spread::{Realized, Spread};
use super::stall::StallPolicy;

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

/// The table of `rows` (the floor and contender rows of one participant count, collective and
/// spread, in any order of lengths).
pub fn table(head: &TableHead<'_>, rows: &[&ReduceRow]) -> String {
    let mut out = format!(
        "N = {} on {} core{}{}, {}, spread {}{}\n",
        head.threads,
        head.cores,
        if head.cores == 1 { "" } else { "s" },
        if phasers::is_oversubscribed(head.threads) {
            " (oversubscribed)"
        } else {
            ""
        },
        head.collective.name(),
        head.spread.name(),
        if head.spread.is_none() {
            String::new()
        } else {
            format!(
                ": stalls drawn with mean {}, stddev {}, max {}; they {}",
                time(head.realized.mean_ns),
                time(head.realized.stddev_ns),
                time(head.realized.max_ns as f64),
                match head.policy {
                    StallPolicy::Spin => "spin",
                    StallPolicy::Yield => "yield the core (oversubscribed)",
                }
            )
        }
    );
    let mut cells: Vec<Vec<String>> = vec![[
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
    ]
    .map(str::to_owned)
    .to_vec()];
    let mut sizes: Vec<usize> = rows.iter().map(|row| row.len).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for len in sizes {
        let here: Vec<&ReduceRow> = rows.iter().copied().filter(|row| row.len == len).collect();
        let omp = here
            .iter()
            .find(|row| row.name == OPENMP_NAME && row.error.is_none())
            .and_then(|row| row.median(head.metric));
        let ordered = here
            .iter()
            .filter(|row| row.kind == Kind::Floor)
            .chain(here.iter().filter(|row| row.kind != Kind::Floor));
        for (index, row) in ordered.enumerate() {
            let summaries = &row.summaries;
            let min = |summary: Option<crate::stats::Summary>| {
                summary.map_or_else(|| "-".to_owned(), |s| time(s.min))
            };
            let median = |summary: Option<crate::stats::Summary>| {
                summary.map_or_else(|| "-".to_owned(), |s| time(s.median))
            };
            cells.push(vec![
                if index == 0 {
                    len.to_string()
                } else {
                    String::new()
                },
                row.label(),
                row.iterations.to_string(),
                min(summaries.last_arrival_to_completion_ns),
                median(summaries.last_arrival_to_completion_ns),
                min(summaries.total_in_reduction_ns),
                median(summaries.total_in_reduction_ns),
                median(summaries.arrival_window_ns),
                row.bandwidth_gb_s
                    .map_or_else(|| "-".to_owned(), |gb| format!("{gb:.2}")),
                row.fraction_of_floor
                    .map_or_else(|| "-".to_owned(), |f| format!("{:.0}%", f * 100.0)),
                if row.kind == Kind::Floor {
                    String::new()
                } else {
                    ratio(row.median(head.metric), omp)
                },
                note(row),
            ]);
        }
    }
    out.push_str(&aligned(&cells, Last::Free));
    out
}

fn note(row: &ReduceRow) -> String {
    match (&row.error, &row.note) {
        (Some(error), Some(note)) => format!("ERROR: {error}; {note}"),
        (Some(error), None) => format!("ERROR: {error}"),
        (None, Some(note)) => note.clone(),
        (None, None) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::results::tests::row;
    use crate::reduce_bench::spread::Preset;

    #[test]
    fn a_table_has_a_block_per_size_with_the_floor_first() {
        let high = Some("high");
        let mode = Collective::Reduce;
        let mut floor = row(
            "bandwidth floor",
            Kind::Floor,
            2,
            1000,
            mode,
            None,
            (100.0, 200.0),
        );
        floor.bandwidth_gb_s = Some(12.0);
        floor.fraction_of_floor = Some(1.0);
        let mut auto = row("auto", Kind::Ours, 2, 1000, mode, high, (200.0, 500.0));
        auto.chose.insert("dynamic-pairs".into(), 20);
        auto.fraction_of_floor = Some(0.5);
        let omp = row(
            OPENMP_NAME,
            Kind::Baseline,
            2,
            1000,
            mode,
            high,
            (400.0, 900.0),
        );
        let mut failed = row("linear", Kind::Ours, 2, 1, mode, high, (1.0, 1.0));
        failed.error = Some("boom".into());
        let rows = [&auto, &failed, &omp, &floor];
        let spread = Preset::High.spread();
        let head = TableHead {
            threads: 2,
            collective: mode,
            spread: &spread,
            realized: Realized {
                mean_ns: 185_000.0,
                stddev_ns: 98_000.0,
                max_ns: 555_000,
            },
            policy: StallPolicy::Spin,
            cores: 2,
            metric: Metric::LastArrival,
        };
        let text = table(&head, &rows);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with(
                "N = 2 on 2 cores, reduce, spread high: stalls drawn with mean 185.0 µs"
            ),
            "{text}"
        );
        assert!(
            lines[1].starts_with("floats") && lines[1].contains("÷omp"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("1 ") && lines[2].contains("ERROR: boom"),
            "{text}"
        );
        assert!(
            lines[3].starts_with("1000") && lines[3].contains("bandwidth floor"),
            "{text}"
        );
        assert!(
            lines[3].contains("12.00") && lines[3].contains("100%"),
            "{text}"
        );
        assert!(
            lines[4].contains("auto → dynamic-pairs") && lines[4].contains("0.50x"),
            "{text}"
        );
        assert!(lines[4].contains("50%"), "{text}");
        assert!(
            lines[5].contains(OPENMP_NAME) && lines[5].contains("1.00x"),
            "{text}"
        );
    }
}
