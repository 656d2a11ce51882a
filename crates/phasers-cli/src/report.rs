//! Presenting results: aligned tables on stdout, the JSON file and the SVG plot.

use std::path::Path;

use phasers_cli::harness::header::Header;
use phasers_cli::harness::table::{aligned, note_cell, ratio, time, Last};

use crate::contender::Contender;
use crate::ratios::{barrier_label, measured, NOISY_MARK, NOISY_NOTE};
use crate::regime_floor::RegimeFloor;
use crate::results::{Group, Report};
use crate::sweep::Plan;
use phasers_cli::harness::footnotes::{self, Footnotes};
use phasers_cli::harness::machine::Machine;
use phasers_cli::harness::noise::{self, RatioRecord};
use phasers_cli::harness::plot;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::resolution::below_text;
use phasers_cli::harness::row::{Mode, Row, RowKind, CUT_SAMPLES};
use phasers_cli::harness::verbosity;

/// The lines that head every report: what was measured, how, where, and against which floor.
pub fn header(provenance: &Provenance, plan: &Plan) -> String {
    let samples = plan.row.schedule.samples - plan.dropped();
    let rounds = plan.rounds();
    let method = match (plan.row.mode, plan.delay) {
        (Mode::Epcc, Some(delay)) => format!(
            "EPCC syncbench: delay({:.2} µs) then barrier, reference loop subtracted; {samples} \
             outer repetitions in {rounds} interleaved rounds, each after 1 dropped",
            delay.as_secs_f64() * 1e6
        ),
        _ => format!(
            "back-to-back episodes, no delay; {samples} samples in {rounds} interleaved rounds"
        ),
    };
    Header::new(provenance, plan.benchmark.measures)
        .line(
            "method",
            format_args!(
                "{method}, about {:.1} s per test{}",
                plan.time_per_test.as_secs_f64(),
                if plan.row.pin { ", threads pinned" } else { "" },
            ),
        )
        .machine(provenance)
        .floors(provenance)
        .line(
            "floor",
            "a row per table: the cache-line round trip while every thread has a core, \
             ceil(threads / cores) yield hand-offs once threads outnumber cores; measured in \
             every round",
        )
        .line(
            "units",
            if verbosity::verbose() {
                "ns (µs or ms when large) per barrier; mean ± half-width of its 95% confidence \
                 interval, min and median over the repetitions; rounds: the slowest round's \
                 median over the fastest's; ÷ref and ÷floor divide the median by the reference \
                 barrier's median and by the floor row's (lower is better)"
            } else {
                "the median over the repetitions, in ns (µs or ms when large) per barrier; \
                 rounds: the slowest round's median over the fastest's; ÷ref and ÷floor divide \
                 the median by the reference barrier's and by the floor row's (lower is better); \
                 --verbose adds the mean, its 95% confidence interval and the min"
            },
        )
        .finish()
}

/// The table of one thread count of a sweep: a first row for its floor, which the ÷floor column
/// divides by, and under it the legend of the rounds and noise (with `--verbose`, every column and
/// note in full; by default, what fits 100 columns, notes as footnotes).
pub fn sweep_table(group: &Group, machine: &Machine, floor: &RegimeFloor) -> String {
    match verbosity::verbose() {
        true => detailed(group, machine, floor),
        false => concise(group, machine, floor),
    }
}

/// The `--verbose` table of a sweep: every column, every note in full.
fn detailed(group: &Group, machine: &Machine, floor: &RegimeFloor) -> String {
    let mut text = render(group, machine, floor.median_ns, Some(floor));
    text.push_str(noise::LEGEND);
    text.push('\n');
    text
}

/// What a concise table says under its rows about a cost below its resolution (the header's
/// method line and `--verbose` say how the resolution is found).
pub const BELOW_NOTE: &str =
    "< x: below this run's resolution (the reference loop's spread), so no ratio uses it";

/// The widest row name a default table prints; a longer one is cut, and given whole in a footnote.
/// The name's column and the five numbers beside it then fit 100 columns with room for marks.
const LABEL_WIDTH: usize = 48;

/// The default table of a sweep: the median, the rounds and the two ratios of each row; a cost
/// below its resolution as `< 2.0 ns`, a noisy ratio marked, the notes numbered under it.
fn concise(group: &Group, machine: &Machine, floor: &RegimeFloor) -> String {
    let mut notes = Footnotes::default();
    let reference = (group.row(&Contender::Reference.name())).and_then(|row| measured(group, row));
    let floor_side = floor.side();
    let (mut noisy, mut below, mut rows_cut) = (false, false, 0);
    let mut cells: Vec<Vec<String>> = vec![["barrier", "median", "rounds", "÷ref", "÷floor", ""]
        .map(str::to_owned)
        .to_vec()];
    cells.push(vec![
        "floor".into(),
        floor.median_ns.map_or_else(|| "-".into(), time),
        noise::spread_text(floor.spread),
        "-".into(),
        "-".into(),
        notes.marks([Some(floor.note.as_str())]),
    ]);
    for row in &group.rows {
        let side = measured(group, row);
        let mut divide = |divisor: Option<&noise::Side>| match (&side, divisor) {
            (Some(top), Some(bottom)) if top.name != bottom.name => {
                let record = RatioRecord::of(group.threads, String::new(), top, bottom);
                let is_noisy = record.is_some_and(|record| record.noisy);
                noisy |= is_noisy;
                let mark = if is_noisy { NOISY_MARK } else { "" };
                ratio(Some(top.median_ns), Some(bottom.median_ns)) + mark
            }
            _ => "-".into(),
        };
        let (over_reference, over_floor) =
            (divide(reference.as_ref()), divide(floor_side.as_ref()));
        let median = match (row.median(), group.cost(row)) {
            (_, Some(cost)) => time(cost),
            (Some(_), None) if row.error.is_none() => {
                below = true;
                below_text(group.resolution_ns(row))
            }
            _ => "-".into(),
        };
        let error = row.error.as_deref().map(|error| format!("ERROR: {error}"));
        let label = barrier_label(row);
        let (label, whole) = match label.chars().count() > LABEL_WIDTH {
            true => {
                let cut: String = label.chars().take(LABEL_WIDTH - 1).collect();
                (format!("{}…", cut.trim_end()), Some(label))
            }
            false => (label, None),
        };
        let (note, cut) = without_cut_samples(row.note.as_deref());
        rows_cut += usize::from(cut);
        cells.push(vec![
            label,
            median,
            noise::spread_text(row.spread),
            over_reference,
            over_floor,
            notes.marks([whole.as_deref(), error.as_deref(), note.as_deref()]),
        ]);
    }
    let mut out = title(group, machine);
    out.push_str(&aligned(&cells, Last::Free));
    for (used, note) in [(below, BELOW_NOTE), (noisy, NOISY_NOTE)] {
        if used {
            out.push_str(&footnotes::wrap("", note));
        }
    }
    if rows_cut > 0 {
        out.push_str(&footnotes::wrap(
            "",
            &format!(
                "{rows_cut} row(s) had samples cut short (preempted, or the barrier slowed): \
                 --verbose says which rounds"
            ),
        ));
    }
    out.push_str(&notes.text());
    out
}

/// A row's note without the parts that count samples cut short (the default table sums those up
/// in one line), and whether it had any.
fn without_cut_samples(note: Option<&str>) -> (Option<String>, bool) {
    let Some(note) = note else {
        return (None, false);
    };
    let (cut, kept): (Vec<&str>, Vec<&str>) = note
        .split("; ")
        .partition(|part| part.contains(CUT_SAMPLES));
    let kept = (!kept.is_empty()).then(|| kept.join("; "));
    (kept, !cut.is_empty())
}

/// The line above a table: `4 threads on 2 cores (oversubscribed), reference loop 509 ns per
/// iteration`.
fn title(group: &Group, machine: &Machine) -> String {
    let cores = machine.available_cores;
    format!(
        "{} thread{} on {cores} core{}{}{}\n",
        group.threads,
        if group.threads == 1 { "" } else { "s" },
        if cores == 1 { "" } else { "s" },
        if group.oversubscribed {
            " (oversubscribed)"
        } else {
            ""
        },
        group
            .reference_loop
            .as_ref()
            .and_then(|row| row.summary)
            .map(|summary| format!(", reference loop {} per iteration", time(summary.median)))
            .unwrap_or_default(),
    )
}

fn render(
    group: &Group,
    machine: &Machine,
    floor_ns: Option<f64>,
    floor: Option<&RegimeFloor>,
) -> String {
    let reference = (group.row(&Contender::Reference.name())).and_then(|row| group.cost(row));
    let rounds = floor.is_some()
        || group
            .rows
            .iter()
            .any(|row| !row.round_medians_ns.is_empty());
    let mut cells: Vec<Vec<String>> = vec![vec![
        "barrier".into(),
        "mean ± 95% CI".into(),
        "min".into(),
        "median".into(),
        "rounds".into(),
        "÷ref".into(),
        "÷floor".into(),
        "note".into(),
    ]];
    if let Some(floor) = floor {
        cells.push(vec![
            "floor".into(),
            "-".into(),
            floor.min_ns.map_or_else(|| "-".into(), time),
            floor.median_ns.map_or_else(|| "-".into(), time),
            noise::spread_text(floor.spread),
            "-".into(),
            "-".into(),
            floor.note.clone(),
        ]);
    }
    for row in &group.rows {
        cells.push(vec![
            barrier_label(row),
            row.summary.map_or_else(
                || "-".into(),
                |summary| match summary.ci95 {
                    Some(ci) => format!("{} ± {}", time(summary.mean), time(ci)),
                    None => time(summary.mean),
                },
            ),
            row.min().map_or_else(|| "-".into(), time),
            match (row.median(), group.cost(row)) {
                (Some(_), None) if row.error.is_none() => below_text(group.resolution_ns(row)),
                (median, _) => median.map_or_else(|| "-".into(), time),
            },
            noise::spread_text(row.spread),
            ratio(group.cost(row), reference),
            ratio(group.cost(row), floor_ns),
            row_note(row),
        ]);
    }
    if !rounds {
        for line in &mut cells {
            line.remove(4);
        }
    }
    let mut out = title(group, machine);
    out.push_str(&aligned(&cells, Last::Free));
    out
}

fn row_note(row: &Row) -> String {
    let noise = row.noise.as_ref().map(|noise| format!("noisy ({noise})"));
    note_cell(
        row.error.as_deref(),
        &[noise.as_deref(), row.note.as_deref()],
    )
}

/// Plots every row's median against threads.
pub fn write_plot(path: &Path, report: &Report) -> Result<(), String> {
    let mut series: Vec<plot::Series> = Vec::new();
    for group in &report.groups {
        for row in &group.rows {
            let Some(median) = row.median() else { continue };
            let name = row.barrier.clone();
            let index = match series.iter().position(|line| line.name == name) {
                Some(index) => index,
                None => {
                    series.push(plot::Series {
                        name,
                        kind: match row.kind {
                            RowKind::Reference => plot::SeriesKind::Reference,
                            RowKind::Ours => plot::SeriesKind::Ours,
                            RowKind::Baseline | RowKind::Loop => plot::SeriesKind::Baseline,
                        },
                        points: Vec::new(),
                    });
                    series.len() - 1
                }
            };
            series[index].points.push((group.threads, median));
        }
    }
    let title = format!(
        "phasers {} ({}), {}",
        report.provenance.benchmark,
        report.settings.mode.name(),
        report.provenance.machine.summary()
    );
    plot::write_svg(
        path,
        &plot::Plot {
            title: &title,
            y_label: "median cost per barrier",
            series: &series,
            floor_ns: report.floor.median_ns,
            cores: Some(report.provenance.machine.available_cores),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::{group, report_of, rounds_row, row, with_reference_loop};

    fn machine() -> Machine {
        report_of(Vec::new()).provenance.machine
    }

    /// A table of rows measured in one piece: the reference, a baseline, `auto`, our fastest and a
    /// failed row.
    fn four_threads() -> Group {
        let mut auto = row("auto", RowKind::Ours, &[40.0, 50.0, 60.0]);
        auto.resolved = Some("counting".into());
        let rows = vec![
            row("reference", RowKind::Reference, &[100.0, 100.0, 100.0]),
            row("std::sync::Barrier", RowKind::Baseline, &[1000.0, 1000.0]),
            auto,
            row("mcs", RowKind::Ours, &[80.0]),
            Row::failed("tournament", RowKind::Ours, 3, "boom".into()),
        ];
        group(4, true, rows)
    }

    #[test]
    fn a_sweep_table_starts_with_its_floor_and_shows_rounds_and_noise() {
        let mut group = four_threads();
        group.rows[2].round_medians_ns = vec![45.0, 50.0, 54.0];
        group.rows[2].spread = Some(1.2);
        group.rows[2].add_noise("÷ std::sync::Barrier: rounds ×1.20 > gap ×1.10".into());
        let floor = RegimeFloor::yield_handoffs(4, 2, &[10.0, 12.5]);
        let text = detailed(&group, &machine(), &floor);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains("rounds") && lines[1].contains("÷floor"));
        assert!(lines[2].starts_with("floor"), "{text}");
        assert!(lines[2].contains("×1.25") && lines[2].contains("2 yield hand-offs"));
        // Auto's median 50 over the floor's 22.5.
        assert!(
            lines[5].contains("×1.20") && lines[5].contains("2.22x"),
            "{text}"
        );
        assert!(
            lines[5].contains("noisy (÷ std::sync::Barrier: rounds ×1.20 > gap ×1.10)"),
            "{text}"
        );
        assert!(lines
            .last()
            .unwrap()
            .starts_with("rounds: the slowest round"));
    }

    /// One thread, EPCC, the rows a real table has at their longest: a phaser with a sum and the
    /// tier it resolved to, long notes (one shared by two rows), a failure, a noisy ratio and
    /// costs below the resolution, one of them negative.
    fn realistic() -> (Group, RegimeFloor) {
        let note = format!(
            "rounds 1, 4: 1 {CUT_SAMPLES} at 4x the target length (preempted, or the barrier \
             slowed); 3 of 5 samples: row stopped at its 4 s budget"
        );
        let mut phaser = rounds_row(
            "phaser flat + sum i64",
            RowKind::Ours,
            &[300.0, 420.0, 307.0],
        );
        phaser.resolved = Some("tiers 1 (flat), degree 64, wait policy spin-then-park".into());
        phaser.add_note(note.clone());
        let mut omp = rounds_row("omp reduction (active)", RowKind::Baseline, &[400.0; 3]);
        omp.add_note(note);
        let mut ticket = row("ticket", RowKind::Ours, &[-1.7]);
        ticket.add_note("its threads were not pinned: fewer cpus than threads".into());
        let rows = vec![
            row("reference", RowKind::Reference, &[120.0]),
            ticket,
            row("counting", RowKind::Ours, &[2.0]),
            phaser,
            omp,
            Row::failed(
                "combining-tree",
                RowKind::Ours,
                5,
                "a thread panicked: the barrier returned an error in round 3 of 5 after \
                 waiting 60 s for the last arrival"
                    .into(),
            ),
        ];
        let group = with_reference_loop(group(2, false, rows), &[100.0, 104.0, 108.0, 112.0]);
        let floor = RegimeFloor::yield_handoffs(2, 1, &[60.0, 61.0]);
        (group, floor)
    }

    #[test]
    fn a_default_table_fits_100_columns_with_notes_as_footnotes() {
        let (group, floor) = realistic();
        let text = concise(&group, &machine(), &floor);
        assert!(
            text.lines().all(|line| line.chars().count() <= 100),
            "{text}"
        );
        let line = |start: &str| {
            (text.lines().find(|line| line.starts_with(start)))
                .unwrap_or_else(|| panic!("no {start} in\n{text}"))
        };
        // Below the loop's 6 ns scatter: said as such, never negative, and no ratio.
        assert!(line("ticket").contains("< 6.0 ns"), "{text}");
        assert!(line("counting").contains("< 6.0 ns"), "{text}");
        assert!(
            !text.contains("-1.7") && !line("ticket").contains('x'),
            "{text}"
        );
        assert!(text.contains("< x: below this run's resolution"), "{text}");
        // Its rounds span ×1.40, within its 2.56x gap to the reference: settled.
        let phaser = line("phaser flat + sum i64 → tiers 1 (flat), degree…");
        assert!(
            phaser.contains("307 ns") && phaser.contains("2.56x"),
            "{text}"
        );
        // Samples cut short are counted in one line, not a footnote per row.
        assert!(!text.contains(CUT_SAMPLES), "{text}");
        assert!(text.contains("2 row(s) had samples cut short"), "{text}");
        // What is left of the shared note is one footnote, marked on both rows.
        assert_eq!(
            text.matches("row stopped at its 4 s budget").count(),
            1,
            "{text}"
        );
        let mark = &phaser[phaser.rfind('[').unwrap()..];
        assert!(line("omp reduction (active)").ends_with(mark), "{text}");
        // The label cut short is given whole in a footnote.
        assert!(
            text.contains("] phaser flat + sum i64 → tiers 1 (flat), degree 64, wait"),
            "{text}"
        );
        assert!(line("combining-tree").contains(" - "), "{text}");
        assert!(text.contains("ERROR: a thread panicked"), "{text}");
        assert!(!text.contains("noisy ("), "{text}");
    }

    #[test]
    fn a_noisy_ratio_is_marked_and_explained_once() {
        let (mut group, floor) = realistic();
        // 330 vs the reference's 300: a 10% gap inside the phaser's ×1.40 rounds.
        group.rows[0] = rounds_row("reference", RowKind::Reference, &[300.0; 3]);
        group.rows[0].reference_ns = group.rows[3].reference_ns;
        group.rows[3].round_medians_ns = vec![300.0, 420.0, 330.0];
        group.rows[3].spread = Some(1.4);
        group.rows[3].summary = phasers_cli::harness::stats::summarize(&[300.0, 420.0, 330.0]);
        let text = concise(&group, &machine(), &floor);
        assert!(text.contains("1.10x~"), "{text}");
        assert_eq!(text.matches("~ unsettled:").count(), 1, "{text}");
        assert!(
            text.lines().all(|line| line.chars().count() <= 100),
            "{text}"
        );
    }
}
