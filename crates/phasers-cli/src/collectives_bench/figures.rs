//! The figures a run ends with, as the issue asks for them, every one a ratio of medians measured
//! in the same run:
//!
//! - (a) allreduce of one u64 over our barrier, per member count (the goal is 1.5x or less: an
//!   allreduce of one word should cost little more than the barrier it needs anyway);
//! - (b) broadcast of the longest length (100,000 words by default) as a fraction of a memcpy;
//! - (c) ours against OpenMP;
//! - (d) what checking costs: a checked team over an unchecked one;
//! - (e) the sync modes: MySync and NoSync broadcasts over AllSync ones.

use phasers::SyncMode;
use phasers_cli::harness::footnotes::fit;
use phasers_cli::harness::stats;
use phasers_cli::harness::table::{aligned, ratio, Last};
use phasers_cli::harness::verbosity;

use super::baselines::{
    MEMCPY_NAME, OMP_ALLREDUCE_NAME as ALLREDUCE_NAME, OMP_BARRIER_NAME as BARRIER_NAME,
    OMP_BROADCAST_NAME as BROADCAST_NAME, OURS_NAME,
};
use super::grid::Shape;
use super::operation::{Operation, Part};
use super::results::{CollectiveRow, CollectivesSettings, TEAM_NAME};

/// The goal of figure (a).
pub const ALLREDUCE_GOAL: f64 = 1.5;

/// What the figures are drawn from.
pub struct FigureInput<'a> {
    /// Every row of the run.
    pub rows: &'a [CollectiveRow],
    /// What the run measured.
    pub settings: &'a CollectivesSettings,
}

/// A labelled line of cells, one per member count.
type Line = (String, Vec<String>);

/// Which row a figure cell reads (at each member count).
type Pick<'p> = &'p dyn Fn(&CollectiveRow) -> bool;

/// The library's rows of `operation` in `part` on the teams of `shape`.
fn team(part: Part, operation: Operation, shape: Shape) -> impl Fn(&CollectiveRow) -> bool + Copy {
    move |row| {
        row.part == part
            && row.operation == operation
            && row.name == TEAM_NAME
            && row.team == Some(shape)
    }
}

/// The rows of the baseline `name` for `operation` in `part`.
fn named(
    part: Part,
    operation: Operation,
    name: &str,
) -> impl Fn(&CollectiveRow) -> bool + Copy + '_ {
    move |row| {
        row.part == part && row.operation == operation && row.name == name && row.team.is_none()
    }
}

impl FigureInput<'_> {
    /// The row `pick` chooses at `members` (a memcpy at any), when it ran without error.
    fn find(
        &self,
        pick: impl Fn(&CollectiveRow) -> bool,
        members: usize,
    ) -> Option<&CollectiveRow> {
        self.rows.iter().find(|row| {
            row.error.is_none()
                && (row.members == members || matches!(row.operation, Operation::Memcpy { .. }))
                && pick(row)
        })
    }

    /// A line of `cell(members)` at every member count.
    fn line(&self, label: String, cell: impl Fn(usize) -> String) -> Line {
        let cells = self.settings.members.iter().map(|&members| cell(members));
        (label, cells.collect())
    }

    /// A line of the median of `numerator`'s row ÷ `denominator`'s at every member count.
    fn ratio_line(
        &self,
        label: String,
        numerator: impl Fn(&CollectiveRow) -> bool,
        denominator: impl Fn(&CollectiveRow) -> bool,
    ) -> Line {
        let median = |pick: Pick, members| self.find(pick, members).and_then(CollectiveRow::median);
        self.line(label, |members| {
            ratio(median(&numerator, members), median(&denominator, members))
        })
    }

    /// `title`, then the lines under a header of the member counts.
    fn grid(&self, title: &str, lines: Vec<Line>) -> String {
        let members = self.settings.members.iter();
        let header = std::iter::once(String::new()).chain(members.map(|n| format!("N={n}")));
        let mut cells = vec![header.collect::<Vec<String>>()];
        cells.extend(
            lines
                .into_iter()
                .map(|(label, line)| std::iter::once(label).chain(line).collect()),
        );
        format!("{title}\n{}", aligned(&cells, Last::Number))
    }

    fn measured(&self, part: Part) -> bool {
        self.rows.iter().any(|row| row.part == part)
    }
}

/// Every figure, as printed after the tables (by default with its long lines wrapped to 100
/// columns).
pub fn summary(input: &FigureInput<'_>) -> String {
    let text = [
        allreduce_over_barrier(input),
        broadcast_against_memcpy(input),
        against_openmp(input),
        checked_cost(input),
        sync_modes(input),
    ]
    .join("\n");
    match verbosity::verbose() {
        true => text,
        false => fit(&text),
    }
}

/// (a): allreduce of one u64 ÷ the barrier of the same teams, and ÷ our `Barrier`.
pub fn allreduce_over_barrier(input: &FigureInput<'_>) -> String {
    let title =
        format!("(a) allreduce of one u64 ÷ barrier, medians (goal: {ALLREDUCE_GOAL}x or less)");
    if !input.measured(Part::Allreduce) || !input.measured(Part::Barrier) {
        return format!("{title}: not measured (needs --ops barrier,allreduce)\n");
    }
    let allreduce = |shape| team(Part::Allreduce, Operation::Allreduce, shape);
    let barrier = |shape| team(Part::Barrier, Operation::Barrier, shape);
    let mut lines: Vec<Line> = input
        .settings
        .teams
        .iter()
        .map(|&shape| {
            let label = format!("team {} ÷ its barrier", shape.name());
            input.ratio_line(label, allreduce(shape), barrier(shape))
        })
        .collect();
    let ours = named(Part::Barrier, Operation::Barrier, OURS_NAME);
    lines.push(input.ratio_line(
        format!("team all ÷ {OURS_NAME}"),
        allreduce(Shape::All),
        ours,
    ));
    let (mut met, mut missed) = (Vec::new(), Vec::new());
    for &members in &input.settings.members {
        let median = |pick| input.find(pick, members).and_then(CollectiveRow::median);
        if let (Some(over), Some(under)) =
            (median(allreduce(Shape::All)), median(barrier(Shape::All)))
        {
            let goal_met = under > 0.0 && over / under <= ALLREDUCE_GOAL;
            if goal_met { &mut met } else { &mut missed }.push(members.to_string());
        }
    }
    let verdict = match (met.is_empty(), missed.is_empty()) {
        (true, true) => "not measured on the team of all".to_owned(),
        (_, true) => format!("met at every N measured ({})", met.join(", ")),
        (true, _) => format!("missed at every N measured ({})", missed.join(", ")),
        _ => format!(
            "met at N = {}; missed at N = {}",
            met.join(", "),
            missed.join(", ")
        ),
    };
    format!(
        "{}    goal (team of all ÷ its barrier): {verdict}\n",
        input.grid(&title, lines)
    )
}

/// (b): the longest broadcast as a fraction of the memcpy of the same length.
pub fn broadcast_against_memcpy(input: &FigureInput<'_>) -> String {
    let Some(&words) = input.settings.broadcast_words.iter().max() else {
        return "(b) broadcast against memcpy: not measured (no --words)\n".to_owned();
    };
    let title = format!(
        "(b) broadcast of {words} words from a rotating root: bandwidth (payload over median \
         time) as a fraction of a memcpy of the same length"
    );
    if !input.measured(Part::Broadcast) {
        return format!("{title}: not measured (needs --ops broadcast)\n");
    }
    let operation = Operation::Broadcast { words };
    let copy = input.find(
        named(Part::Broadcast, Operation::Memcpy { words }, MEMCPY_NAME),
        0,
    );
    let cell = |pick: Pick, members| {
        let row = input.find(pick, members);
        match row.and_then(|row| row.fraction_of_memcpy.zip(row.bandwidth_gb_s)) {
            Some((fraction, gb)) => format!("{:.0}% ({gb:.2} GB/s)", fraction * 100.0),
            None => "-".to_owned(),
        }
    };
    let mut lines: Vec<Line> = input
        .settings
        .teams
        .iter()
        .map(|&shape| {
            let pick = team(Part::Broadcast, operation, shape);
            input.line(format!("team {}", shape.name()), |members| {
                cell(&pick, members)
            })
        })
        .collect();
    let omp = named(Part::Broadcast, operation, BROADCAST_NAME);
    lines.push(input.line(BROADCAST_NAME.to_owned(), |members| cell(&omp, members)));
    let copy = copy.and_then(|row| row.bandwidth_gb_s);
    format!(
        "{title}\n    memcpy of {words} words on one thread: {}\n{}",
        copy.map_or_else(|| "not measured".to_owned(), |gb| format!("{gb:.2} GB/s")),
        input.grid("", lines).trim_start_matches('\n')
    )
}

/// (c): ours ÷ OpenMP for the barrier, the allreduce and the shortest, middle and longest
/// broadcasts.
pub fn against_openmp(input: &FigureInput<'_>) -> String {
    let title = "(c) ours ÷ OpenMP, medians (below 1: ours is faster)";
    let mut lines = Vec::new();
    if input.measured(Part::Barrier) {
        let (part, operation) = (Part::Barrier, Operation::Barrier);
        let omp = named(part, operation, BARRIER_NAME);
        let label = format!("team all barrier ÷ {BARRIER_NAME}");
        lines.push(input.ratio_line(label, team(part, operation, Shape::All), omp));
        let label = format!("{OURS_NAME} ÷ {BARRIER_NAME}");
        lines.push(input.ratio_line(label, named(part, operation, OURS_NAME), omp));
    }
    if input.measured(Part::Allreduce) {
        let (part, operation) = (Part::Allreduce, Operation::Allreduce);
        let label = format!("team all allreduce ÷ {ALLREDUCE_NAME}");
        let omp = named(part, operation, ALLREDUCE_NAME);
        lines.push(input.ratio_line(label, team(part, operation, Shape::All), omp));
    }
    let words = &input.settings.broadcast_words;
    if input.measured(Part::Broadcast) && !words.is_empty() {
        let mut sizes = vec![words[0], words[words.len() / 2], words[words.len() - 1]];
        sizes.dedup();
        for words in sizes {
            let operation = Operation::Broadcast { words };
            let label = format!("team all broadcast {words} words ÷ omp");
            let omp = named(Part::Broadcast, operation, BROADCAST_NAME);
            lines.push(input.ratio_line(label, team(Part::Broadcast, operation, Shape::All), omp));
        }
    }
    if lines.is_empty() {
        return format!("{title}: not measured (needs barrier, allreduce or broadcast)\n");
    }
    input.grid(title, lines)
}

/// (d): a checked team's barrier, allreduce and broadcast over an unchecked team's, round by
/// round (see [`round_ratios`]).
pub fn checked_cost(input: &FigureInput<'_>) -> String {
    let mut title =
        "(d) checked ÷ unchecked team: the median of the rounds' ratios [their range]; \
                     what checking that every call matches costs (goal: 1.10x or less)"
            .to_owned();
    if cfg!(debug_assertions) {
        title.push_str(" (a debug build: run with --release for numbers that mean anything)");
    }
    if !input.measured(Part::Checked) {
        return format!("{title}: not measured (needs --ops checked)\n");
    }
    let mut lines = Vec::new();
    for operation in super::operation::CHECKED_OPERATIONS {
        let twin = |checked| {
            let row = team(Part::Checked, operation, Shape::All);
            move |candidate: &CollectiveRow| row(candidate) && candidate.checked == Some(checked)
        };
        lines.push(input.line(operation.label(), |members| {
            let twins = input
                .find(twin(true), members)
                .zip(input.find(twin(false), members));
            ratio_cell(&twins.map_or_else(Vec::new, |(over, under)| round_ratios(over, under)))
        }));
    }
    input.grid(&title, lines)
}

/// (e): MySync and NoSync broadcasts over AllSync ones.
pub fn sync_modes(input: &FigureInput<'_>) -> String {
    let title = "(e) sync modes: broadcast ÷ the AllSync broadcast of the same length, medians \
                 (below 1: the weaker mode pays off)";
    if !input.measured(Part::SyncModes) {
        return format!("{title}: not measured (needs --ops sync-modes)\n");
    }
    let mut lines = Vec::new();
    for &words in &input.settings.sync_mode_words {
        let in_mode = |mode: SyncMode| {
            let row = team(Part::SyncModes, Operation::Broadcast { words }, Shape::All);
            move |candidate: &CollectiveRow| {
                row(candidate) && candidate.sync_mode.as_deref() == Some(mode.name())
            }
        };
        for mode in [SyncMode::MySync, SyncMode::NoSync] {
            let label = format!("{words} words {}", mode.name());
            lines.push(input.ratio_line(label, in_mode(mode), in_mode(SyncMode::AllSync)));
        }
    }
    input.grid(title, lines)
}

/// The ratio of two twins' medians in each round both measured, in round order: a machine's
/// drift between rounds cancels in each ratio.
fn round_ratios(numerator: &CollectiveRow, denominator: &CollectiveRow) -> Vec<f64> {
    numerator
        .round_medians_ns
        .iter()
        .zip(&denominator.round_medians_ns)
        .filter(|(_, under)| **under > 0.0)
        .map(|(over, under)| over / under)
        .collect()
}

/// `1.02x [0.97-1.08]`: the median of the rounds' ratios and their range; `-` with none.
fn ratio_cell(ratios: &[f64]) -> String {
    let Some(median) = stats::median(ratios) else {
        return "-".to_owned();
    };
    if ratios.len() < 2 {
        return format!("{median:.2}x");
    }
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{median:.2}x [{low:.2}-{high:.2}]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives_bench::config::{tests::parse, Config};
    use crate::collectives_bench::results::tests::{named, team};
    use crate::collectives_bench::results::Kind;

    fn rows() -> Vec<CollectiveRow> {
        let (all, barrier, allreduce) = (Shape::All, Operation::Barrier, Operation::Allreduce);
        let bcast = Operation::Broadcast { words: 100 };
        let copy = Operation::Memcpy { words: 100 };
        let omp = |part, operation, name, ns| named(part, operation, name, Kind::Baseline, 2, ns);
        let mut rows = vec![
            team(Part::Barrier, barrier, 2, all, 100.0),
            named(Part::Barrier, barrier, OURS_NAME, Kind::OurBarrier, 2, 80.0),
            omp(Part::Barrier, barrier, BARRIER_NAME, 200.0),
            team(Part::Barrier, barrier, 4, all, 100.0),
            team(Part::Allreduce, allreduce, 2, all, 120.0),
            team(Part::Allreduce, allreduce, 4, all, 300.0),
            named(Part::Broadcast, copy, MEMCPY_NAME, Kind::Memcpy, 1, 50.0),
            team(Part::Broadcast, bcast, 2, all, 500.0),
            omp(Part::Broadcast, bcast, BROADCAST_NAME, 1000.0),
        ];
        rows[6].bandwidth_gb_s = Some(16.0);
        rows[7].fraction_of_memcpy = Some(0.1);
        rows[7].bandwidth_gb_s = Some(1.6);
        for (checked, rounds) in [
            (true, [150.0, 330.0, 100.0]),
            (false, [100.0, 300.0, 100.0]),
        ] {
            let mut row = team(Part::Checked, barrier, 2, all, rounds[0]);
            row.checked = Some(checked);
            row.round_medians_ns = rounds.to_vec();
            rows.push(row);
        }
        let eight = Operation::Broadcast { words: 8 };
        for (mode, ns) in [("AllSync", 100.0), ("MySync", 80.0), ("NoSync", 50.0)] {
            let mut row = team(Part::SyncModes, eight, 2, all, ns);
            row.sync_mode = Some(mode.to_owned());
            rows.push(row);
        }
        rows
    }

    /// `draw` from [`rows`], of a run at N = 2 and 4 on the team of all, broadcasting 100 words
    /// (8 in the sync-mode part).
    fn figure(rows: Vec<CollectiveRow>, draw: fn(&FigureInput<'_>) -> String) -> String {
        let args = parse("--threads 2,4 --teams all --words 100 --sync-words 8").unwrap();
        let settings = Config::from_args(&args).settings;
        draw(&FigureInput {
            rows: &rows,
            settings: &settings,
        })
    }

    #[test]
    fn allreduce_over_barrier_says_where_the_goal_is_met() {
        let text = figure(rows(), allreduce_over_barrier);
        assert!(text.contains("1.20x") && text.contains("3.00x"), "{text}");
        // 120 over our Barrier's 80.
        assert!(text.contains("1.50x"), "{text}");
        assert!(text.contains("met at N = 2; missed at N = 4"), "{text}");
    }

    #[test]
    fn broadcast_against_memcpy_and_openmp() {
        let text = figure(rows(), broadcast_against_memcpy);
        assert!(
            text.contains("memcpy of 100 words on one thread: 16.00 GB/s"),
            "{text}"
        );
        assert!(text.contains("10% (1.60 GB/s)"), "{text}");
        let text = figure(rows(), against_openmp);
        assert!(text.contains("team all barrier ÷ omp barrier"), "{text}");
        assert!(text.contains("0.50x") && text.contains("0.40x"), "{text}");
        assert!(text.contains("broadcast 100 words ÷ omp"), "{text}");
    }

    #[test]
    fn checked_and_sync_mode_ratios() {
        // The rounds' ratios are 1.5, 1.1 and 1.0: their median and range.
        let text = figure(rows(), checked_cost);
        assert!(text.contains("1.10x [1.00-1.50]"), "{text}");
        assert_eq!(ratio_cell(&[]), "-");
        assert_eq!(ratio_cell(&[1.25]), "1.25x");
        let text = figure(rows(), sync_modes);
        assert!(
            text.contains("8 words MySync") && text.contains("0.80x"),
            "{text}"
        );
        assert!(
            text.contains("8 words NoSync") && text.contains("0.50x"),
            "{text}"
        );
        assert!(figure(Vec::new(), summary).contains("not measured"));
    }
}
