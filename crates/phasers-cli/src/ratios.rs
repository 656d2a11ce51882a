//! The ratios a sweep's report ends with, and the rows they mark noisy.
//!
//! Each is a ratio of medians measured in the same run, at the same thread count, marked noisy
//! when the rows' rounds disagree by more than the ratio's distance from 1 (the harness's rule,
//! [`phasers_cli::harness::noise`]).
//!
//! - `bench barrier`: our best barrier, and `auto`, against the reference, every baseline and the
//!   table's floor row. `auto` is what users get; our best alone, picked after the fact from eight
//!   rows, would flatter us.
//! - the phaser benchmarks: the ratios each lists, such as a phaser against our best barrier or
//!   OpenMP against a phaser.

use std::borrow::Cow;

use phasers_cli::harness::footnotes;
use phasers_cli::harness::noise::{RatioRecord, Side as Measured};
use phasers_cli::harness::resolution::below_text;
use phasers_cli::harness::row::{Row, RowKind};
use phasers_cli::harness::table::{aligned, ratio, resolved_label, time, Last};
use phasers_cli::harness::verbosity;

use crate::contender::Contender;
use crate::regime_floor::RegimeFloor;
use crate::results::Group;

/// The row users get without choosing.
const AUTO: &str = "auto";

/// Which ratios a sweep's report ends with.
#[derive(Debug, Clone, PartialEq)]
pub enum Ratios {
    /// None (`bench tree` ends with its matrix instead).
    None,
    /// `bench barrier`'s: a column per head (our best, `auto`), a line per divisor (the
    /// reference, the baselines, the floor row).
    Barrier,
    /// A phaser benchmark's: these ratios, "best barrier" being the fastest of the rows `barriers`
    /// names.
    Listed {
        /// The ratios, in the order printed.
        ratios: Vec<Ratio>,
        /// The rows "best barrier" is chosen from.
        barriers: Vec<Cow<'static, str>>,
    },
}

/// One side of a listed ratio.
#[derive(Debug, Clone, PartialEq)]
pub enum Side {
    /// The row of this name.
    Row(Cow<'static, str>),
    /// Whichever of the barrier rows named by the report has the lowest median.
    BestBarrier,
}

/// `numerator ÷ denominator`, by median.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// Above the line.
    pub numerator: Side,
    /// Below it.
    pub denominator: Side,
}

/// What a listed ratio's line says when it cannot be divided.
const NOT_COMPUTED: &str = "not computed: a side failed, was not measured, or costs less than \
     its resolution (in EPCC mode, the scatter of its reference loop: on a busy machine, run \
     again)";

/// The same, in the default output's 100 columns: a mark on the line, and [`NOT_COMPUTED_NOTE`]
/// once under the lines.
const NOT_COMPUTED_SHORT: &str = "not computed*";

/// What [`NOT_COMPUTED_SHORT`] means.
const NOT_COMPUTED_NOTE: &str = "* a side failed, was not measured, or is below its resolution";

/// What a noisy ratio's cell ends with in the default output, explained once under the lines.
pub const NOISY_MARK: &str = "~";

/// The explanation of [`NOISY_MARK`].
pub const NOISY_NOTE: &str =
    "~ unsettled: the rounds disagree by more than the rows differ (--verbose: by how much)";

impl Ratio {
    /// The ratio of the rows `numerator` and `denominator`.
    pub fn of(numerator: Side, denominator: Side) -> Self {
        Ratio {
            numerator,
            denominator,
        }
    }

    /// The ratio as measured in `group`, `best` being its best barrier; `None` when a side is
    /// missing, failed, or has a median of 0 or below.
    fn record(&self, group: &Group, best: Option<&Row>) -> Option<RatioRecord> {
        let resolve = |side: &Side| -> Option<Measured> {
            match side {
                Side::Row(name) => measured(group, group.row(name)?),
                Side::BestBarrier => measured(group, best?),
            }
        };
        let (top, bottom) = (resolve(&self.numerator)?, resolve(&self.denominator)?);
        RatioRecord::of(group.threads, self.label(), &top, &bottom)
    }

    /// `phaser flat / best barrier`.
    fn label(&self) -> String {
        format!("{} / {}", self.numerator.name(), self.denominator.name())
    }
}

impl Side {
    /// The side's name in a ratio's label.
    fn name(&self) -> &str {
        match self {
            Side::Row(name) => name,
            Side::BestBarrier => "best barrier",
        }
    }
}

impl Ratios {
    /// The ratios of one group with both sides measured, as the JSON records them.
    pub fn records(&self, group: &Group, floor: Option<&RegimeFloor>) -> Vec<RatioRecord> {
        match self {
            Ratios::None => Vec::new(),
            Ratios::Barrier => {
                // The JSON keeps every ratio, whatever the tables show.
                let divisors = divisors(group, floor, true);
                heads(group)
                    .iter()
                    .flat_map(|(_, label, top)| {
                        divisors.iter().filter_map(move |(name, bottom)| {
                            RatioRecord::of(group.threads, format!("{label} / {name}"), top, bottom)
                        })
                    })
                    .collect()
            }
            Ratios::Listed { ratios, barriers } => {
                let best = best_of(group, barriers);
                ratios
                    .iter()
                    .filter_map(|r| r.record(group, best))
                    .collect()
            }
        }
    }

    /// The lines printed after the group's table, in as much detail as `--verbose` asked for;
    /// `None` when there is nothing to divide.
    pub fn lines(&self, group: &Group, floor: Option<&RegimeFloor>) -> Option<String> {
        self.lines_in(group, floor, verbosity::verbose())
    }

    /// The lines printed after the group's table, `verbose` or not.
    pub fn lines_in(
        &self,
        group: &Group,
        floor: Option<&RegimeFloor>,
        verbose: bool,
    ) -> Option<String> {
        match self {
            Ratios::None => None,
            Ratios::Barrier => barrier_lines(group, floor, verbose),
            Ratios::Listed { ratios, barriers } => {
                let best = best_of(group, barriers);
                if ratios.is_empty() {
                    return None;
                }
                // A ratio that cannot be computed still gets its line, saying why: a figure that
                // silently vanishes reads as a bug, and on a busy machine it happens.
                let (mut noisy, mut missing) = (false, false);
                let measured: Vec<Vec<String>> = ratios
                    .iter()
                    .map(|r| match r.record(group, best) {
                        Some(record) => {
                            let (a, b) = (record.numerator_ns, record.denominator_ns);
                            let mark = match verbose {
                                true => format!("  {}", record.mark()),
                                false if record.noisy => NOISY_MARK.to_owned(),
                                false => String::new(),
                            };
                            noisy |= record.noisy;
                            let line = format!(
                                "{} / {} = {}{mark}",
                                time(a),
                                time(b),
                                ratio(Some(a), Some(b)),
                            );
                            vec![record.label.clone(), line.trim_end().to_owned()]
                        }
                        None if verbose => vec![r.label(), NOT_COMPUTED.to_owned()],
                        None => {
                            missing = true;
                            vec![r.label(), NOT_COMPUTED_SHORT.to_owned()]
                        }
                    })
                    .collect();
                let mut text = format!(
                    "{}, median ratios (below 1: the first is faster)",
                    threads(group)
                );
                if let Some(best) = best {
                    text.push_str(&format!("; best barrier: {}", barrier_label(best)));
                }
                let mut text = indented(text, &measured);
                for (used, note) in [(noisy, NOISY_NOTE), (missing, NOT_COMPUTED_NOTE)] {
                    if used && !verbose {
                        text.push('\n');
                        text.push_str(footnotes::wrap("  ", note).trim_end());
                    }
                }
                Some(text)
            }
        }
    }
}

/// `2 threads`, `1 thread`.
fn threads(group: &Group) -> String {
    let plural = if group.threads == 1 { "" } else { "s" };
    format!("{} thread{plural}", group.threads)
}

/// `text`, then `cells` aligned, each line indented under it.
fn indented(mut text: String, cells: &[Vec<String>]) -> String {
    for line in aligned(cells, Last::Free).lines() {
        text.push_str(&format!("\n  {line}"));
    }
    text
}

/// `row` as a side of a ratio, when it ran without error and costs more than its resolution: a
/// cost the run cannot tell from nothing divides into nothing meaningful.
pub fn measured(group: &Group, row: &Row) -> Option<Measured> {
    group.cost(row)?;
    Measured::of(row)
}

/// The fastest of `rows` by median, among those above their resolution.
fn fastest<'a>(group: &Group, rows: impl Iterator<Item = &'a Row>) -> Option<&'a Row> {
    rows.filter_map(|row| Some((row, group.cost(row)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(row, _)| row)
}

/// The best of the rows `barriers` names that ran without error.
fn best_of<'a>(group: &'a Group, barriers: &[Cow<'static, str>]) -> Option<&'a Row> {
    fastest(group, barriers.iter().filter_map(|name| group.row(name)))
}

/// Our fastest row by median, when one ran without error and costs more than its resolution.
pub fn best(group: &Group) -> Option<&Row> {
    let ours = group.rows.iter().filter(|row| row.kind == RowKind::Ours);
    fastest(group, ours)
}

/// The fastest of the barriers users pick today (std, pthread, C++20, OpenMP), by the same rule.
pub fn best_standard(group: &Group) -> Option<&Row> {
    let baselines = group
        .rows
        .iter()
        .filter(|row| row.kind == RowKind::Baseline);
    fastest(group, baselines)
}

/// What our rows are divided by: the reference, the baselines (`every` one, or the fastest
/// alone), then the floor row.
fn divisors(group: &Group, floor: Option<&RegimeFloor>, every: bool) -> Vec<(String, Measured)> {
    let standard = best_standard(group).map(|row| row.barrier.as_str());
    let rows = group
        .rows
        .iter()
        .filter(|row| match row.kind {
            RowKind::Reference => true,
            RowKind::Baseline => every || Some(row.barrier.as_str()) == standard,
            RowKind::Ours | RowKind::Loop => false,
        })
        .filter_map(|row| Some((row.barrier.clone(), measured(group, row)?)));
    let floor = floor.and_then(|floor| Some((floor.label(), floor.side()?)));
    rows.chain(floor).collect()
}

/// The rows above the line: our best, labelled `our best (mcs)`, and `auto`.
fn heads(group: &Group) -> Vec<(&'static str, String, Measured)> {
    let mut heads = Vec::new();
    if let Some(side) = best(group).and_then(|row| measured(group, row)) {
        let label = format!("our best ({})", side.name);
        heads.push(("our best", label, side));
    }
    if let Some(side) = group.row(AUTO).and_then(|row| measured(group, row)) {
        heads.push((AUTO, AUTO.to_owned(), side));
    }
    heads
}

/// `bench barrier`'s lines: a column per head, a line per divisor (by default the fastest
/// baseline alone; `--verbose`, every one), and what is noisy. Says so when no row of ours costs
/// more than its resolution; `None` when no row of ours has a median at all.
fn barrier_lines(group: &Group, floor: Option<&RegimeFloor>, verbose: bool) -> Option<String> {
    let heads = heads(group);
    let ours = |row: &&Row| row.kind == RowKind::Ours && row.error.is_none();
    let measured_ours: Vec<&Row> = (group.rows.iter().filter(ours))
        .filter(|row| row.median().is_some())
        .collect();
    if measured_ours.is_empty() {
        return None;
    }
    let cost = |row: &Row| match group.cost(row) {
        Some(median) => time(median),
        None => below_text(group.resolution_ns(row)),
    };
    let Some(first) = best(group) else {
        return Some(format!(
            "{}: every row of ours costs less than its resolution: no ratios",
            threads(group)
        ));
    };
    let mut text = format!(
        "{}: our best is {} at {} (median)",
        threads(group),
        barrier_label(first),
        cost(first)
    );
    if let Some(auto) = group.row(AUTO).filter(|row| row.median().is_some()) {
        text.push_str(&format!("; {} at {}", barrier_label(auto), cost(auto)));
    }
    let mut cells = vec![["divided by".to_owned(), "median".to_owned()]
        .into_iter()
        .chain(heads.iter().map(|(head, _, _)| (*head).to_owned()))
        .chain([String::new()])
        .collect::<Vec<String>>()];
    let mut any_noisy = false;
    for (name, bottom) in divisors(group, floor, verbose) {
        let mut line = vec![name.clone(), time(bottom.median_ns)];
        let mut noisy = Vec::new();
        for (head, label, top) in &heads {
            let record = RatioRecord::of(group.threads, format!("{label} / {name}"), top, &bottom);
            let noise = record.and_then(|record| record.noise);
            let mark = match (&noise, verbose) {
                (Some(_), false) => NOISY_MARK,
                _ => "",
            };
            line.push(ratio(Some(top.median_ns), Some(bottom.median_ns)) + mark);
            if let Some(noise) = noise {
                noisy.push(format!("{head}: {noise}"));
            }
        }
        any_noisy |= !noisy.is_empty();
        line.push(match (noisy.is_empty(), verbose) {
            (false, true) => format!("noisy ({})", noisy.join("; ")),
            _ => String::new(),
        });
        cells.push(line);
    }
    let mut text = indented(text, &cells);
    if any_noisy && !verbose {
        text.push('\n');
        text.push_str(footnotes::wrap("  ", NOISY_NOTE).trim_end());
    }
    Some(text)
}

/// Marks noisy every row whose line in the table holds a noisy ratio (÷ref, ÷floor), and every row
/// above the line of a noisy ratio in `records` (those over the reference or the floor are the
/// same ratios as the columns, and said once).
pub fn mark_rows(group: &mut Group, floor: &RegimeFloor, records: &[RatioRecord]) {
    let reference_name = Contender::Reference.name();
    let reference = (group.row(&reference_name)).and_then(|row| measured(group, row));
    let floor = floor.side();
    let sides: Vec<Option<Measured>> = (group.rows.iter())
        .map(|row| measured(group, row))
        .collect();
    for (row, side) in group.rows.iter_mut().zip(sides) {
        let Some(side) = side else {
            continue;
        };
        // The reference over itself is 1.00x whatever its rounds did.
        let reference = reference
            .as_ref()
            .filter(|_| row.kind != RowKind::Reference);
        for (column, divisor) in [("÷ref", reference), ("÷floor", floor.as_ref())] {
            let Some(divisor) = divisor else { continue };
            if let Some(noise) = RatioRecord::of(group.threads, column.into(), &side, divisor)
                .and_then(|record| record.noise)
            {
                row.add_noise(format!("{column}: {noise}"));
            }
        }
        let heads: Vec<String> = records
            .iter()
            .filter(|record| record.numerator == row.barrier)
            .filter(|record| ![reference_name.as_ref(), "floor"].contains(&&*record.denominator))
            .filter_map(|record| Some(format!("{}: {}", record.label, record.noise.as_ref()?)))
            .collect();
        for noise in heads {
            row.add_noise(noise);
        }
    }
}

/// A row's name, with what it resolved to when that differs (`auto → counting`).
pub fn barrier_label(row: &Row) -> String {
    resolved_label(&row.barrier, row.resolved.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::{group, rounds_row, row, with_reference_loop};

    /// A barrier table: the reference, a baseline, `auto` with rounds ×1.40 apart, our fastest and
    /// a failed row.
    fn barrier_group() -> Group {
        let mut auto = rounds_row(AUTO, RowKind::Ours, &[50.0, 60.0, 70.0]);
        auto.resolved = Some("counting".into());
        let rows = vec![
            rounds_row("reference", RowKind::Reference, &[100.0, 100.0, 100.0]),
            rounds_row("std::sync::Barrier", RowKind::Baseline, &[58.0, 58.0]),
            auto,
            rounds_row("mcs", RowKind::Ours, &[40.0]),
            Row::failed("tournament", RowKind::Ours, 3, "boom".into()),
        ];
        group(4, true, rows)
    }

    #[test]
    fn our_best_and_auto_are_divided_by_every_baseline_and_the_floor() {
        let floor = RegimeFloor::yield_handoffs(4, 2, &[10.0, 10.0, 10.0]);
        let records = Ratios::Barrier.records(&barrier_group(), Some(&floor));
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
    fn barrier_lines_put_a_column_per_head_and_mark_noise() {
        let floor = RegimeFloor::yield_handoffs(4, 2, &[10.0]);
        let text = Ratios::Barrier
            .lines_in(&barrier_group(), Some(&floor), true)
            .unwrap();
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
    fn no_row_of_ours_means_no_barrier_lines() {
        let mut only_baselines = barrier_group();
        only_baselines.rows.retain(|row| row.kind != RowKind::Ours);
        assert_eq!(Ratios::Barrier.lines_in(&only_baselines, None, true), None);
        assert!(Ratios::Barrier.records(&only_baselines, None).is_empty());
        assert_eq!(Ratios::None.lines_in(&barrier_group(), None, true), None);
    }

    /// A phaser table: two barriers, a phaser, OpenMP and a failed phaser.
    fn phaser_group() -> Group {
        let mut auto = row(AUTO, RowKind::Ours, &[60.0]);
        auto.resolved = Some("sense-reversing".into());
        let rows = vec![
            auto,
            row("ticket", RowKind::Ours, &[80.0]),
            row("phaser flat", RowKind::Ours, &[90.0]),
            row("omp reduction", RowKind::Ours, &[450.0]),
            Row::failed("phaser tree", RowKind::Ours, 1, "boom".into()),
        ];
        group(2, false, rows)
    }

    fn listed(ratios: Vec<Ratio>, barriers: &[&'static str]) -> Ratios {
        Ratios::Listed {
            ratios,
            barriers: barriers.iter().map(|&name| name.into()).collect(),
        }
    }

    fn name(text: &'static str) -> Side {
        Side::Row(text.into())
    }

    #[test]
    fn listed_ratios_divide_medians_and_name_the_best_barrier() {
        let ratios = listed(
            vec![
                Ratio::of(name("phaser flat"), Side::BestBarrier),
                Ratio::of(name("omp reduction"), name("phaser flat")),
            ],
            &["auto", "ticket"],
        );
        let text = ratios.lines_in(&phaser_group(), None, true).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "2 threads, median ratios (below 1: the first is faster); best barrier: auto → \
             sense-reversing"
        );
        assert_eq!(
            lines[1],
            "  phaser flat / best barrier   90.0 ns / 60.0 ns = 1.50x"
        );
        assert_eq!(
            lines[2],
            "  omp reduction / phaser flat  450 ns / 90.0 ns = 5.00x"
        );
    }

    #[test]
    fn rounds_that_disagree_more_than_the_gap_mark_the_line() {
        let mut group = phaser_group();
        // phaser flat's rounds: 80, 90, 100 ns, ×1.25 apart; the best barrier is 60 ns.
        group.rows[2].round_medians_ns = vec![80.0, 90.0, 100.0];
        group.rows[2].spread = Some(1.25);
        group.rows[1].spread = Some(1.02);
        let ratios = listed(
            vec![
                Ratio::of(name("phaser flat"), name("ticket")),
                Ratio::of(name("phaser flat"), Side::BestBarrier),
            ],
            &["auto"],
        );
        let records = ratios.records(&group, None);
        // 90 / 80 is a gap of ×1.12, within the rounds' ×1.25; 90 / 60 is not.
        assert!(records[0].noisy && !records[1].noisy);
        assert_eq!(records[0].numerator, "phaser flat");
        let text = ratios.lines_in(&group, None, true).unwrap();
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .contains("noisy: rounds ×1.25 > gap ×1.1"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_or_missing_side_is_left_out_of_the_records_and_said_in_the_lines() {
        let ratios = listed(
            vec![
                Ratio::of(name("phaser tree"), Side::BestBarrier),
                Ratio::of(name("nowhere"), name("phaser flat")),
            ],
            &["auto"],
        );
        assert!(ratios.records(&phaser_group(), None).is_empty());
        let text = ratios.lines_in(&phaser_group(), None, true).unwrap();
        assert!(text.contains("phaser tree / best barrier"), "{text}");
        assert!(text.contains("nowhere / phaser flat"), "{text}");
        assert_eq!(text.matches("not computed: ").count(), 2, "{text}");
        // No barrier measured: no best barrier to divide by, and the line says so.
        let best = listed(vec![Ratio::of(name("phaser flat"), Side::BestBarrier)], &[]);
        assert!(best.records(&phaser_group(), None).is_empty());
        let text = best.lines_in(&phaser_group(), None, true).unwrap();
        assert!(
            text.contains("phaser flat / best barrier  not computed"),
            "{text}"
        );
        assert!(!text.contains("best barrier:"), "{text}");
        // A benchmark that lists no ratio prints none.
        assert_eq!(
            listed(Vec::new(), &["auto"]).lines_in(&phaser_group(), None, true),
            None
        );
    }

    #[test]
    fn rows_whose_ratios_are_within_their_rounds_are_marked_noisy() {
        let mut group = group(
            2,
            false,
            vec![
                rounds_row("reference", RowKind::Reference, &[100.0, 130.0, 100.0]),
                // 5% slower than the reference, with rounds 20% apart: noisy.
                rounds_row("auto", RowKind::Ours, &[105.0, 126.0, 105.0]),
                // Three times the reference: settled, whatever the rounds did.
                rounds_row("mcs", RowKind::Ours, &[300.0, 360.0, 300.0]),
                rounds_row("std::sync::Barrier", RowKind::Baseline, &[110.0; 3]),
            ],
        );
        let floor = RegimeFloor::yield_handoffs(2, 1, &[25.0, 25.0, 25.0]);
        let records = Ratios::Barrier.records(&group, Some(&floor));
        mark_rows(&mut group, &floor, &records);
        let [reference, auto, mcs, std] = &group.rows[..] else {
            panic!("four rows")
        };
        assert!(
            !reference.noisy,
            "not divided by itself: {:?}",
            reference.noise
        );
        assert!(auto.noisy);
        let noise = auto.noise.as_deref().unwrap();
        // Against the reference once (its column), against std as the ratio lines say.
        assert!(
            noise.starts_with("÷ref: rounds ×1.30 > gap ×1.05; "),
            "{noise}"
        );
        assert!(noise.ends_with("auto / std::sync::Barrier: rounds ×1.20 > gap ×1.05"));
        // Std's own rounds agree, but the reference's do not: its ÷ref is noise too.
        assert_eq!(std.noise.as_deref(), Some("÷ref: rounds ×1.30 > gap ×1.10"));
        assert!(!mcs.noisy && mcs.noise.is_none(), "{:?}", mcs.noise);
    }

    /// One thread, EPCC: the reference loop's middle half spans 6 ns, so the reference, ticket
    /// (-1.7 ns) and counting (3 ns) are below their resolution; mcs and the baselines are not.
    fn one_thread() -> Group {
        let rows = vec![
            row("reference", RowKind::Reference, &[-7.8]),
            row("std::sync::Barrier", RowKind::Baseline, &[250.0]),
            row("pthread_barrier_t", RowKind::Baseline, &[240.0]),
            row("ticket", RowKind::Ours, &[-1.7]),
            row("counting", RowKind::Ours, &[3.0]),
            row("mcs", RowKind::Ours, &[20.0]),
        ];
        with_reference_loop(group(1, false, rows), &[100.0, 104.0, 108.0, 112.0])
    }

    #[test]
    fn costs_below_their_resolution_are_never_best_nor_a_side_of_a_ratio() {
        let group = one_thread();
        assert_eq!(group.resolution_ns(&group.rows[3]), 6.0);
        assert_eq!(best(&group).map(|row| row.barrier.as_str()), Some("mcs"));
        let floor = RegimeFloor::yield_handoffs(1, 2, &[60.0]);
        let records = Ratios::Barrier.records(&group, Some(&floor));
        assert!(!records.is_empty());
        for record in &records {
            let sides = [&record.numerator, &record.denominator];
            assert!(
                sides
                    .iter()
                    .all(|side| !["ticket", "counting", "reference"].contains(&side.as_str())),
                "{record:?}"
            );
            assert!(record.ratio > 0.0);
        }
        for verbose in [false, true] {
            let text = Ratios::Barrier
                .lines_in(&group, Some(&floor), verbose)
                .unwrap();
            assert!(
                text.starts_with("1 thread: our best is mcs at 20.0 ns"),
                "{text}"
            );
            assert!(!text.contains("-1.7") && !text.contains("-7.8"), "{text}");
            assert!(
                !text.contains("ticket") && !text.contains("reference"),
                "{text}"
            );
            assert!(
                text.lines().all(|line| line.chars().count() <= 100),
                "{text}"
            );
        }
        // The default lines divide by the fastest standard barrier alone; --verbose by each.
        let concise = Ratios::Barrier
            .lines_in(&group, Some(&floor), false)
            .unwrap();
        assert!(
            concise.contains("pthread_barrier_t") && !concise.contains("std::sync"),
            "{concise}"
        );
        let verbose = Ratios::Barrier
            .lines_in(&group, Some(&floor), true)
            .unwrap();
        assert!(verbose.contains("std::sync::Barrier"), "{verbose}");
    }

    #[test]
    fn when_every_row_of_ours_is_below_resolution_the_lines_say_so() {
        let mut group = one_thread();
        group.rows.retain(|row| row.barrier != "mcs");
        assert_eq!(best(&group), None);
        let text = Ratios::Barrier.lines_in(&group, None, false).unwrap();
        assert_eq!(
            text,
            "1 thread: every row of ours costs less than its resolution: no ratios"
        );
        let listed = listed(
            vec![
                Ratio::of(name("ticket"), Side::BestBarrier),
                Ratio::of(
                    name("omp reduction (active)"),
                    name("phaser flat + sum i64"),
                ),
            ],
            &["counting"],
        );
        assert!(listed.records(&group, None).is_empty());
        let text = listed.lines_in(&group, None, false).unwrap();
        assert!(
            text.ends_with("* a side failed, was not measured, or is below its resolution"),
            "{text}"
        );
        assert!(
            text.contains("ticket / best barrier                           not computed*"),
            "{text}"
        );
        assert!(
            text.lines().all(|line| line.chars().count() <= 100),
            "{text}"
        );
    }
}
