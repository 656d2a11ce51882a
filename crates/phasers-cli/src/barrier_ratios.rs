//! The ratios a barrier report ends with: our best barrier, and `auto`, against the reference,
//! every baseline and the table's floor row. `auto` is what users get; our best alone, picked
//! after the fact from eight rows, would flatter us.

use crate::regime_floor::RegimeFloor;
use crate::report::barrier_label;
use crate::results::Group;
use phasers_cli::harness::noise::{RatioRecord, Side};
use phasers_cli::harness::row::{Row, RowKind};
use phasers_cli::harness::table::{aligned, ratio, time, Last};

/// The row users get without choosing.
const AUTO: &str = "auto";

/// Our fastest row by median, when one ran without error.
fn best(group: &Group) -> Option<&Row> {
    group
        .rows
        .iter()
        .filter(|row| row.kind == RowKind::Ours && row.error.is_none())
        .filter_map(|row| Some((row, row.median()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(row, _)| row)
}

/// What our rows are divided by: the reference, the baselines, then the floor row.
fn divisors(group: &Group, floor: Option<&RegimeFloor>) -> Vec<(String, Side)> {
    let rows = group
        .rows
        .iter()
        .filter(|row| matches!(row.kind, RowKind::Reference | RowKind::Baseline))
        .filter_map(|row| Some((row.barrier.clone(), Side::of(row)?)));
    let floor = floor.and_then(|floor| Some((floor.label(), floor.side()?)));
    rows.chain(floor).collect()
}

/// The rows above the line: our best, labelled `our best (mcs)`, and `auto`.
fn heads(group: &Group) -> Vec<(&'static str, String, Side)> {
    let mut heads = Vec::new();
    if let Some(row) = best(group) {
        if let Some(side) = Side::of(row) {
            heads.push(("our best", format!("our best ({})", row.barrier), side));
        }
    }
    if let Some(side) = group.row(AUTO).and_then(Side::of) {
        heads.push((AUTO, AUTO.to_owned(), side));
    }
    heads
}

/// Every ratio of the group, our best's first.
pub fn records(group: &Group, floor: Option<&RegimeFloor>) -> Vec<RatioRecord> {
    let divisors = divisors(group, floor);
    heads(group)
        .iter()
        .flat_map(|(_, label, top)| {
            divisors.iter().filter_map(move |(name, bottom)| {
                RatioRecord::of(group.threads, format!("{label} / {name}"), top, bottom)
            })
        })
        .collect()
}

/// The lines printed after the group's table: a column per head, a line per divisor, and what is
/// noisy at the end of its line. `None` when no row of ours has a median.
pub fn lines(group: &Group, floor: Option<&RegimeFloor>) -> Option<String> {
    let heads = heads(group);
    let first = best(group)?;
    let mut text = format!(
        "{} thread{}: our best is {} at {} (median)",
        group.threads,
        if group.threads == 1 { "" } else { "s" },
        barrier_label(first),
        time(first.median()?)
    );
    if let Some(auto) = group.row(AUTO).filter(|row| row.median().is_some()) {
        let median = auto.median().unwrap_or_default();
        text.push_str(&format!("; {} at {}", barrier_label(auto), time(median)));
    }
    let mut cells = vec![["divided by".to_owned(), "median".to_owned()]
        .into_iter()
        .chain(heads.iter().map(|(head, _, _)| (*head).to_owned()))
        .chain([String::new()])
        .collect::<Vec<String>>()];
    for (name, bottom) in divisors(group, floor) {
        let mut line = vec![name.clone(), time(bottom.median_ns)];
        let mut noisy = Vec::new();
        for (head, label, top) in &heads {
            let record = RatioRecord::of(group.threads, format!("{label} / {name}"), top, &bottom);
            line.push(ratio(Some(top.median_ns), Some(bottom.median_ns)));
            if let Some(noise) = record.and_then(|record| record.noise) {
                noisy.push(format!("{head}: {noise}"));
            }
        }
        line.push(if noisy.is_empty() {
            String::new()
        } else {
            format!("noisy ({})", noisy.join("; "))
        });
        cells.push(line);
    }
    for line in aligned(&cells, Last::Free).lines() {
        text.push_str(&format!("\n  {line}"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regime_floor::RegimeFloor;

    fn row(barrier: &str, kind: RowKind, medians: &[f64]) -> Row {
        let mut row = Row::measured(barrier, kind, medians.len(), medians.to_vec());
        row.finish(0, None);
        row.round_medians_ns = medians.to_vec();
        row.spread = phasers_cli::harness::noise::spread(medians);
        row
    }

    fn group() -> Group {
        let mut auto = row(AUTO, RowKind::Ours, &[50.0, 60.0, 70.0]);
        auto.resolved = Some("counting".into());
        Group {
            threads: 4,
            oversubscribed: true,
            reference_loop: None,
            openmp_reference_loop: None,
            rows: vec![
                row("reference", RowKind::Reference, &[100.0, 100.0, 100.0]),
                row("std::sync::Barrier", RowKind::Baseline, &[58.0, 58.0]),
                auto,
                row("mcs", RowKind::Ours, &[40.0]),
                Row::failed("tournament", RowKind::Ours, 3, "boom".into()),
            ],
        }
    }

    #[test]
    fn our_best_and_auto_are_divided_by_every_baseline_and_the_floor() {
        let floor = RegimeFloor::yield_handoffs(4, 2, &[10.0, 10.0, 10.0]);
        let records = records(&group(), Some(&floor));
        let labels: Vec<&str> = records.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "our best (mcs) / reference",
                "our best (mcs) / std::sync::Barrier",
                "our best (mcs) / floor (2 yield hand-offs)",
                "auto / reference",
                "auto / std::sync::Barrier",
                "auto / floor (2 yield hand-offs)",
            ]
        );
        assert_eq!(records[2].ratio, 2.0);
        assert_eq!(records[2].denominator, "floor");
        // Auto's rounds span ×1.40, more than its 3% gap to std.
        assert!(records[4].noisy, "{:?}", records[4]);
        assert!(!records[3].noisy && !records[0].noisy);
    }

    #[test]
    fn lines_put_a_column_per_head_and_mark_noise() {
        let floor = RegimeFloor::yield_handoffs(4, 2, &[10.0]);
        let text = lines(&group(), Some(&floor)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "4 threads: our best is mcs at 40.0 ns (median); auto → counting at 60.0 ns"
        );
        assert!(lines[1].contains("divided by") && lines[1].ends_with("auto"));
        assert!(lines[2].contains("0.40x") && lines[2].contains("0.60x"));
        assert!(
            lines[3].contains("auto: rounds ×1.40 > gap ×1.03"),
            "{text}"
        );
        assert!(lines[4].starts_with("  floor (2 yield hand-offs)") && lines[4].contains("3.00x"));
    }

    #[test]
    fn no_row_of_ours_means_no_lines() {
        let mut only_baselines = group();
        only_baselines.rows.retain(|row| row.kind != RowKind::Ours);
        assert_eq!(lines(&only_baselines, None), None);
        assert!(records(&only_baselines, None).is_empty());
    }
}
