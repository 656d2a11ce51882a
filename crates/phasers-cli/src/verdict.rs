//! The lines the quick suite ends with: at each thread count of its barrier sweep, our best
//! barrier and `auto` against the fastest standard barrier measured (std, pthread, C++20, OpenMP)
//! and against the floor, and in one line how often each beat it, so that a reader can tell in a
//! minute whether phasers beats the standard barriers on this machine.
//!
//! Every figure is a ratio of two medians of the same run at the same thread count. A cost below
//! its resolution has no ratio: it is faster than any cost above the resolution, and unsettled
//! against another below it. A noisy ratio (see `harness::noise`) settles nothing either way.

use phasers_cli::harness::footnotes::wrap;
use phasers_cli::harness::noise::RatioRecord;
use phasers_cli::harness::resolution::below_text;
use phasers_cli::harness::row::{Row, RowKind};
use phasers_cli::harness::table::{aligned, ratio, time, Last};

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
            Outcome::Unsettled => "unsettled",
            Outcome::Unknown => "no comparison",
        }
    }
}

/// How one row of ours fared, as the verdict's table shows it.
struct Compared {
    outcome: Outcome,
    /// The row's median, or `< x` below its resolution.
    median: String,
    /// Over the fastest standard barrier's median, with the outcome in a word.
    over_standard: String,
    /// Over the floor's median.
    over_floor: String,
}

/// `row` against `standard` and the floor in `group`.
fn compare(group: &Group, row: &Row, standard: Option<&Row>, floor: Option<f64>) -> Compared {
    let cost = group.cost(row);
    let median = match cost {
        Some(cost) => time(cost),
        None => below_text(group.resolution_ns(row)),
    };
    let over_floor = match (cost, floor) {
        (Some(cost), Some(floor)) => ratio(Some(cost), Some(floor)),
        _ => "-".to_owned(),
    };
    let standard_cost = standard.and_then(|standard| group.cost(standard));
    let (outcome, over_standard) = match (standard, cost, standard_cost) {
        (None, _, _) => (Outcome::Unknown, "-".to_owned()),
        (Some(standard), Some(cost), Some(standard_cost)) => {
            let sides = (measured(group, row), measured(group, standard));
            let noisy = match sides {
                (Some(top), Some(bottom)) => {
                    RatioRecord::of(group.threads, String::new(), &top, &bottom)
                        .is_some_and(|record| record.noisy)
                }
                _ => false,
            };
            let outcome = match (noisy, cost < standard_cost) {
                (true, _) => Outcome::Unsettled,
                (false, true) => Outcome::Faster,
                (false, false) => Outcome::Slower,
            };
            let ratio = ratio(Some(cost), Some(standard_cost));
            (outcome, format!("{ratio} {}", outcome.word()))
        }
        // Below its resolution: cheaper than anything measured above it.
        (Some(_), None, Some(_)) => (Outcome::Faster, Outcome::Faster.word().to_owned()),
        (Some(_), Some(_), None) => (Outcome::Slower, Outcome::Slower.word().to_owned()),
        (Some(_), None, None) => (Outcome::Unsettled, Outcome::Unsettled.word().to_owned()),
    };
    Compared {
        outcome,
        median,
        over_standard,
        over_floor,
    }
}

/// What the verdict found at each thread count, for its closing line.
#[derive(Debug, Default)]
struct Tally {
    best: Vec<Outcome>,
    auto: Vec<Outcome>,
}

/// Our fastest row of `group`: picked from the rows above their resolution; when none is, every
/// row of ours is below it, and the fastest of them by median stands for all.
fn our_best(group: &Group) -> Option<&Row> {
    best(group).or_else(|| {
        (group.rows.iter())
            .filter(|row| row.kind == RowKind::Ours && row.error.is_none())
            .filter_map(|row| Some((row, row.median()?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(row, _)| row)
    })
}

/// The verdict on `report`, a `bench barrier` sweep: a title naming the CPU, a table with, at
/// each thread count, the fastest standard barrier, the floor, `auto` and our best (one line
/// when they are the same row), and a closing line.
pub fn verdict(report: &Report) -> Vec<String> {
    let machine = &report.provenance.machine;
    let cpu = machine.cpu_model.as_deref().unwrap_or("an unnamed CPU");
    let title = format!(
        "verdict on {cpu}, {} cores: medians of the barrier sweep above; below 1x is faster, \
         \"unsettled\": the rounds disagree by more than the gap",
        machine.available_cores
    );
    let mut lines: Vec<String> = wrap("", &title).lines().map(str::to_owned).collect();
    let mut cells = vec![vec![
        "threads  row".to_owned(),
        "median".to_owned(),
        "÷fastest standard".to_owned(),
        "÷floor".to_owned(),
    ]];
    let mut tally = Tally::default();
    for group in &report.groups {
        let floor = report.regime_floor(group.threads);
        let floor_ns = floor.and_then(|floor| floor.median_ns);
        let standard = best_standard(group);
        let mut first = true;
        let mut line = |label: String, cells_after: [String; 3]| {
            let threads = if first {
                group.threads.to_string()
            } else {
                String::new()
            };
            first = false;
            let mut row = vec![format!("{threads:<7}  {label}")];
            row.extend(cells_after);
            cells.push(row);
        };
        match standard {
            Some(row) => line(
                format!("fastest standard: {}", row.barrier),
                [
                    time(group.cost(row).unwrap_or_default()),
                    String::new(),
                    String::new(),
                ],
            ),
            None => line(
                "no standard barrier measured".to_owned(),
                Default::default(),
            ),
        }
        if let (Some(floor), Some(ns)) = (floor, floor_ns) {
            line(floor.label(), [time(ns), String::new(), String::new()]);
        }
        let auto = group.row("auto").filter(|row| row.median().is_some());
        let ours = our_best(group);
        let same = matches!((auto, ours), (Some(a), Some(b)) if std::ptr::eq(a, b));
        for (label, row, outcomes) in [
            ("auto", auto, &mut tally.auto),
            ("our best", ours, &mut tally.best),
        ] {
            let Some(row) = row else {
                outcomes.push(Outcome::Unknown);
                line(
                    format!("{label}: failed or not measured"),
                    Default::default(),
                );
                continue;
            };
            let compared = compare(group, row, standard, floor_ns);
            outcomes.push(compared.outcome);
            // When auto is our best, its line says so and our best has no line of its own.
            let name = match (label, same) {
                ("auto", true) => format!("{} (our best)", barrier_label(row)),
                ("auto", false) => barrier_label(row),
                (_, true) => continue,
                _ => format!("our best: {}", barrier_label(row)),
            };
            line(
                name,
                [compared.median, compared.over_standard, compared.over_floor],
            );
        }
    }
    lines.extend(aligned(&cells, Last::Number).lines().map(str::to_owned));
    lines.extend(
        wrap("in short: ", &summary(&tally))
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
        let words = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = |start: &str| {
            let found = lines
                .iter()
                .map(|line| words(line))
                .find(|line| line.starts_with(start));
            found.unwrap_or_else(|| panic!("no line {start:?} in\n{text}"))
        };
        assert_eq!(
            line("2 fastest"),
            "2 fastest standard: pthread_barrier_t 200 ns"
        );
        assert_eq!(
            line("auto → counting"),
            "auto → counting 50.0 ns 0.25x faster 2.50x"
        );
        assert_eq!(
            line("our best: mcs 40.0"),
            "our best: mcs 40.0 ns 0.20x faster 2.00x"
        );
        assert_eq!(line("auto 3000"), "auto 3000 ns 3.00x slower 3.00x");
        assert_eq!(
            line("our best: mcs 950"),
            "our best: mcs 950 ns 0.95x unsettled 0.95x"
        );
        let text = words(&text);
        assert!(
            text.contains("at 1 of 2 thread counts (slower at 1)"),
            "{text}"
        );
        assert!(
            text.contains("our best (picked after the fact) at 1 of 2 (unsettled at 1)"),
            "{text}"
        );
        assert!(
            lines.iter().all(|line| line.chars().count() <= 100),
            "{text}"
        );
    }

    #[test]
    fn auto_as_our_best_has_one_line() {
        let mut auto = rounds_row("auto", RowKind::Ours, &[30.0; 3]);
        auto.resolved = Some("counting".into());
        let rows = vec![
            rounds_row("std::sync::Barrier", RowKind::Baseline, &[400.0; 3]),
            auto,
            rounds_row("mcs", RowKind::Ours, &[40.0; 3]),
        ];
        let lines = verdict(&report_of(vec![group(2, false, rows)]));
        let text = lines.join("\n");
        assert!(text.contains("auto → counting (our best)"), "{text}");
        assert!(!text.contains("our best: "), "{text}");
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
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("our best: ticket < 6.0 ns faster -"),
            "{text}"
        );
        assert!(!text.contains("-1.7") && !text.contains("-0."), "{text}");
        assert!(words.contains("auto: failed or not measured"), "{text}");
        assert!(words.contains("at 0 of 1 thread counts (no comparison at 1); our best (picked after the fact) at 1 of 1"), "{words}");
    }
}
