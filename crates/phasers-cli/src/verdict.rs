//! The lines the quick suite ends with: at each thread count of its barrier sweep, our best
//! barrier and `auto` against the fastest standard barrier measured (std, pthread, C++20, OpenMP)
//! and against the floor, and in one line how often each beat it, so that a reader can tell in a
//! minute whether phasers beats the standard barriers on this machine.
//!
//! Every figure is a ratio of two medians of the same run at the same thread count. A cost below
//! its resolution has no ratio: it is faster than any cost above the resolution, and unsettled
//! against another below it. A noisy ratio (see `harness::noise`) settles nothing either way.

use phasers_cli::harness::footnotes::wrap;
use phasers_cli::harness::resolution::below_text;
use phasers_cli::harness::row::Row;
use phasers_cli::harness::table::{ratio, time};

use crate::ratios::{barrier_label, best, best_standard, measured};
use crate::results::{Group, Report};

/// How one row of ours fared against the fastest standard barrier at one thread count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Cheaper, and not within the noise.
    Faster,
    /// Dearer, and not within the noise.
    Slower,
    /// Within the noise of the rounds, or both below their resolution.
    Unsettled,
    /// A side failed or was not measured.
    Unknown,
}

impl Outcome {
    fn word(self) -> &'static str {
        match self {
            Outcome::Faster => "faster",
            Outcome::Slower => "slower",
            Outcome::Unsettled => "not settled by this run",
            Outcome::Unknown => "no comparison",
        }
    }
}

/// `row` against `standard` in `group`: the outcome and the words of the verdict's line.
fn compare(
    group: &Group,
    row: &Row,
    standard: Option<&Row>,
    floor: Option<f64>,
) -> (Outcome, String) {
    let cost = group.cost(row);
    let shown = match cost {
        Some(cost) => time(cost),
        None => format!(
            "below resolution ({})",
            below_text(group.resolution_ns(row))
        ),
    };
    let Some(standard) = standard else {
        return (
            Outcome::Unknown,
            format!("{shown}; no standard barrier measured"),
        );
    };
    let over_floor = match (cost, floor) {
        (Some(cost), Some(floor)) => format!(", {} the floor", ratio(Some(cost), Some(floor))),
        _ => String::new(),
    };
    let standard_cost = group.cost(standard);
    match (cost, standard_cost) {
        (Some(cost), Some(standard_cost)) => {
            let sides = (measured(group, row), measured(group, standard));
            let noisy = match sides {
                (Some(top), Some(bottom)) => phasers_cli::harness::noise::RatioRecord::of(
                    group.threads,
                    String::new(),
                    &top,
                    &bottom,
                )
                .is_some_and(|record| record.noisy),
                _ => false,
            };
            let outcome = match (noisy, cost < standard_cost) {
                (true, _) => Outcome::Unsettled,
                (false, true) => Outcome::Faster,
                (false, false) => Outcome::Slower,
            };
            let text = format!(
                "{shown}, {} the standard's ({}){over_floor}",
                ratio(Some(cost), Some(standard_cost)),
                outcome.word()
            );
            (outcome, text)
        }
        (None, Some(_)) => (
            Outcome::Faster,
            format!("{shown}: {}", Outcome::Faster.word()),
        ),
        (Some(_), None) => (
            Outcome::Slower,
            format!("{shown}: the standard is below resolution"),
        ),
        (None, None) => (Outcome::Unsettled, format!("{shown}, as is the standard")),
    }
}

/// What the verdict found at each thread count, for its closing line.
#[derive(Debug, Default)]
struct Tally {
    best: Vec<Outcome>,
    auto: Vec<Outcome>,
}

/// The verdict on `report`, a `bench barrier` sweep: a title naming the CPU, three lines per
/// thread count, and a closing line.
pub fn verdict(report: &Report) -> Vec<String> {
    let machine = &report.provenance.machine;
    let cpu = machine.cpu_model.as_deref().unwrap_or("an unnamed CPU");
    let mut lines = vec![format!(
        "verdict on {cpu}, {} cores: the medians of the barrier sweep above (below 1x: faster)",
        machine.available_cores
    )];
    let mut tally = Tally::default();
    for group in &report.groups {
        let floor = report.regime_floor(group.threads);
        let floor_ns = floor.and_then(|floor| floor.median_ns);
        let standard = best_standard(group);
        let threads = format!(
            "{} thread{}",
            group.threads,
            if group.threads == 1 { "" } else { "s" }
        );
        let standard_text = match standard {
            Some(row) => format!(
                "fastest standard {} {}",
                row.barrier,
                time(group.cost(row).unwrap_or_default())
            ),
            None => "no standard barrier measured above its resolution".to_owned(),
        };
        let floor_text = match (floor, floor_ns) {
            (Some(floor), Some(ns)) => format!("; {} {}", floor.label(), time(ns)),
            _ => String::new(),
        };
        lines.push(
            wrap("  ", &format!("{threads}: {standard_text}{floor_text}"))
                .trim_end()
                .to_owned(),
        );
        // Our best is picked from the rows above their resolution; when none is, every row of ours
        // is below it, and the fastest of them by median stands for all.
        let ours = best(group).or_else(|| {
            (group.rows.iter())
                .filter(|row| {
                    row.kind == phasers_cli::harness::row::RowKind::Ours && row.error.is_none()
                })
                .filter(|row| row.median().is_some())
                .min_by(|a, b| {
                    a.median()
                        .unwrap_or_default()
                        .total_cmp(&b.median().unwrap_or_default())
                })
        });
        let auto = group.row("auto").filter(|row| row.median().is_some());
        for (label, row, outcomes) in [
            ("our best", ours, &mut tally.best),
            ("auto", auto, &mut tally.auto),
        ] {
            let (outcome, text) = match row {
                Some(row) => {
                    let (outcome, text) = compare(group, row, standard, floor_ns);
                    let name = match label {
                        "auto" => barrier_label(row),
                        _ => format!("{label} {}", barrier_label(row)),
                    };
                    (outcome, format!("{name}: {text}"))
                }
                None => (Outcome::Unknown, format!("{label}: failed or not measured")),
            };
            outcomes.push(outcome);
            lines.extend(wrap("    ", &text).lines().map(str::to_owned));
        }
    }
    lines.extend(
        wrap("  in short: ", &summary(&tally))
            .lines()
            .map(str::to_owned),
    );
    lines
}

/// `auto (what users get) was faster than the fastest standard barrier at 1 of 3 thread counts
/// (slower at 2); our best (picked after the fact) at 3 of 3`.
fn summary(tally: &Tally) -> String {
    let describe = |outcomes: &[Outcome]| {
        let count = |which: Outcome| outcomes.iter().filter(|&&o| o == which).count();
        let others: Vec<String> = [Outcome::Slower, Outcome::Unsettled, Outcome::Unknown]
            .into_iter()
            .filter(|&which| count(which) > 0)
            .map(|which| format!("{} at {}", which.word(), count(which)))
            .collect();
        let of = format!("{} of {}", count(Outcome::Faster), outcomes.len());
        match others.is_empty() {
            true => (of, String::new()),
            false => (of, format!(" ({})", others.join(", "))),
        }
    };
    let ((auto, auto_rest), (best, best_rest)) = (describe(&tally.auto), describe(&tally.best));
    format!(
        "auto (what users get) was faster than the fastest standard barrier at {auto} thread \
         counts{auto_rest}; our best (picked after the fact) at {best}{best_rest}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regime_floor::RegimeFloor;
    use crate::results::fixtures::{group, report_of, rounds_row, row};
    use phasers_cli::harness::row::RowKind;

    /// Two thread counts: at 2, we win clearly; at 4, auto loses and our best is within noise.
    fn report() -> Report {
        let mut auto2 = rounds_row("auto", RowKind::Ours, &[50.0, 50.0, 50.0]);
        auto2.resolved = Some("counting".into());
        let two = group(
            2,
            false,
            vec![
                rounds_row("std::sync::Barrier", RowKind::Baseline, &[400.0; 3]),
                rounds_row("pthread_barrier_t", RowKind::Baseline, &[200.0; 3]),
                auto2,
                rounds_row("mcs", RowKind::Ours, &[40.0; 3]),
            ],
        );
        let four = group(
            4,
            true,
            vec![
                rounds_row("pthread_barrier_t", RowKind::Baseline, &[1000.0; 3]),
                rounds_row("auto", RowKind::Ours, &[3000.0; 3]),
                rounds_row("mcs", RowKind::Ours, &[900.0, 1200.0, 950.0]),
            ],
        );
        let mut report = report_of(vec![two, four]);
        report.provenance.machine.cpu_model = Some("AMD EPYC 7B13".into());
        report.regime_floors = vec![
            RegimeFloor::yield_handoffs(2, 2, &[20.0]),
            RegimeFloor::yield_handoffs(4, 2, &[500.0]),
        ];
        report
    }

    #[test]
    fn the_verdict_names_the_cpu_and_compares_at_each_thread_count() {
        let lines = verdict(&report());
        let text = lines.join("\n");
        assert!(
            lines[0].starts_with("verdict on AMD EPYC 7B13, 2 cores"),
            "{text}"
        );
        assert!(
            lines[1].contains("2 threads: fastest standard pthread_barrier_t 200 ns"),
            "{text}"
        );
        assert!(
            lines[2]
                .contains("our best mcs: 40.0 ns, 0.20x the standard's (faster), 2.00x the floor"),
            "{text}"
        );
        assert!(
            lines[3].contains("auto → counting: 50.0 ns, 0.25x the standard's (faster)"),
            "{text}"
        );
        assert!(
            lines[5]
                .contains("our best mcs: 950 ns, 0.95x the standard's (not settled by this run)"),
            "{text}"
        );
        assert!(
            lines[6].contains("auto: 3000 ns, 3.00x the standard's (slower)"),
            "{text}"
        );
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("at 1 of 2 thread counts (slower at 1)"),
            "{text}"
        );
        assert!(
            text.contains(
                "our best (picked after the fact) at 1 of 2 (not settled by this run at 1)"
            ),
            "{text}"
        );
        assert!(
            lines.iter().all(|line| line.chars().count() <= 100),
            "{text}"
        );
    }

    #[test]
    fn a_cost_below_resolution_has_no_ratio_and_beats_one_above_it() {
        let mut reference_loop = row("loop", RowKind::Loop, &[100.0, 104.0, 108.0, 112.0]);
        reference_loop.kind = RowKind::Loop;
        let loop_median = reference_loop.median();
        let mut ticket = row("ticket", RowKind::Ours, &[-1.7, -1.7, -1.7]);
        ticket.reference_ns = loop_median;
        let mut std = row("std::sync::Barrier", RowKind::Baseline, &[250.0]);
        std.reference_ns = loop_median;
        let mut one = group(1, false, vec![std, ticket]);
        one.reference_loop = Some(reference_loop);
        let lines = verdict(&report_of(vec![one]));
        let text = lines.join("\n");
        assert!(
            lines[2].contains("our best ticket: below resolution (< 6.0 ns): faster"),
            "{text}"
        );
        assert!(!text.contains("-1.7") && !text.contains("-0."), "{text}");
        assert!(lines[3].contains("auto: failed or not measured"), "{text}");
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains("at 0 of 1 thread counts (no comparison at 1); our best (picked after the fact) at 1 of 1"), "{text}");
    }
}
