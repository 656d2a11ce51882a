//! A whole sweep (`bench barrier`, `bench phaser`, `bench reduction`, `bench tree`): the floor,
//! then every row at every thread count.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::bench::{self, RowPlan};
use crate::contender::Contender;
use crate::floor;
use crate::native::OmpWork;
use crate::openmp_row;
use crate::report;
use crate::results::{Group, Mode, Provenance, Report, Row, RowKind, Settings};

/// EPCC drops its first outer repetition: it pays for waking threads and warming caches.
pub const EPCC_DROPPED: usize = 1;

/// Which benchmark a sweep is, for its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Benchmark {
    /// Every barrier algorithm against the baselines.
    Barrier,
    /// Phasers against our best barriers and OpenMP's.
    Phaser,
    /// Phasers with accumulators against OpenMP's reduction.
    Reduction,
    /// Phasers over a grid of tiers and degrees.
    Tree,
    /// The phaser part of the quick suite.
    Quick,
}

impl Benchmark {
    /// The name in reports, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Barrier => "bench barrier",
            Benchmark::Phaser => "bench phaser",
            Benchmark::Reduction => "bench reduction",
            Benchmark::Tree => "bench tree",
            Benchmark::Quick => "quick suite, part 2",
        }
    }

    /// What one iteration of its rows costs, for the header of its report.
    pub fn measures(self) -> &'static str {
        match self {
            Benchmark::Barrier => "the cost of one barrier episode",
            Benchmark::Phaser => "the cost of one phaser phase (next: signal and wait)",
            Benchmark::Reduction => "the cost of one barrier with a sum reduction",
            Benchmark::Tree => {
                "the cost of one phaser phase, with and without a sum, by tiers and degree"
            }
            Benchmark::Quick => "the cost of one phaser phase, with and without a sum",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Which benchmark this is.
    pub benchmark: Benchmark,
    /// Thread counts, in the order to run them.
    pub threads: Vec<usize>,
    /// The rows of every table, in order.
    pub contenders: Vec<Contender>,
    /// Whether a row runs at a thread count (`bench tree` leaves out trees far too big for it).
    pub keep: fn(Contender, usize) -> bool,
    /// How each row is measured.
    pub row: RowPlan,
    /// EPCC mode: the delay before each barrier.
    pub delay: Option<Duration>,
    /// The time each test aims to take.
    pub time_per_test: Duration,
    /// Whether to print each table as it completes (`phasers tune` prints its own).
    pub print_tables: bool,
    /// The command line, recorded in the report.
    pub command_line: Vec<String>,
}

impl Plan {
    /// Timed samples dropped from the front of each row.
    pub fn dropped(&self) -> usize {
        match self.row.mode {
            Mode::Epcc => EPCC_DROPPED,
            Mode::BackToBack => 0,
        }
    }

    /// The rows of the table of `threads` threads.
    fn contenders_at(&self, threads: usize) -> Vec<Contender> {
        self.contenders
            .iter()
            .copied()
            .filter(|&contender| (self.keep)(contender, threads))
            .collect()
    }

    /// The tests run at `threads` threads: the rows and the reference loops they need.
    fn tests_at(&self, threads: usize) -> usize {
        let contenders = self.contenders_at(threads);
        let epcc = self.row.mode == Mode::Epcc;
        contenders.len()
            + usize::from(epcc)
            + usize::from(needs_openmp_reference(self.row.mode, &contenders))
    }
}

/// Every row runs at every thread count.
pub fn keep_all(_: Contender, _: usize) -> bool {
    true
}

fn needs_openmp_reference(mode: Mode, contenders: &[Contender]) -> bool {
    mode == Mode::Epcc && contenders.iter().any(|c| c.runs_on_openmp())
}

/// Runs the plan, printing each table to stdout as soon as it is complete.
pub fn run(plan: &Plan) -> Report {
    let provenance = Provenance::now(plan.benchmark.name(), plan.command_line.clone());
    let machine = &provenance.machine;
    let epcc = plan.row.mode == Mode::Epcc;
    let total = 1 + plan
        .threads
        .iter()
        .map(|&threads| plan.tests_at(threads))
        .sum::<usize>();
    // indicatif draws on stderr and hides itself when stderr is not a terminal, so stdout carries
    // only the tables.
    let progress = ProgressBar::new(total as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} tests, {elapsed} elapsed  {msg}")
    {
        progress.set_style(style);
    }

    progress.set_message("floor: cache-line round trip");
    let floor = floor::measure(plan.row.schedule);
    progress.inc(1);
    if plan.print_tables {
        progress.suspend(|| println!("{}", report::header(machine, &floor, plan)));
    }

    let mut groups = Vec::with_capacity(plan.threads.len());
    for &threads in &plan.threads {
        let contenders = plan.contenders_at(threads);
        let reference_loop = epcc.then(|| {
            progress.set_message(format!("{threads} threads: reference loop"));
            let mut row = bench::reference_loop(threads, &plan.row);
            row.finish(plan.dropped(), None);
            progress.inc(1);
            row
        });
        let openmp_loop = needs_openmp_reference(plan.row.mode, &contenders).then(|| {
            progress.set_message(format!("{threads} threads: omp reference loop"));
            let mut row = openmp_row::run(threads, &plan.row, OmpWork::Loop);
            row.finish(plan.dropped(), None);
            progress.inc(1);
            row
        });
        let mut rows = Vec::with_capacity(contenders.len());
        for contender in contenders {
            progress.set_message(format!("{threads} threads: {}", contender.name()));
            let mut row = bench::run(contender, threads, &plan.row);
            let reference = if contender.runs_on_openmp() {
                openmp_loop.as_ref()
            } else {
                reference_loop.as_ref()
            };
            finish(&mut row, reference, plan.dropped());
            rows.push(row);
            progress.inc(1);
        }
        let group = Group {
            threads,
            oversubscribed: phasers::is_oversubscribed(threads),
            reference_loop,
            openmp_reference_loop: openmp_loop,
            rows,
        };
        if plan.print_tables {
            progress.suspend(|| println!("{}", report::table(&group, machine, &floor)));
        }
        groups.push(group);
    }
    progress.finish_and_clear();

    Report {
        provenance,
        settings: settings(plan),
        floor,
        groups,
    }
}

/// Drops the warm-up samples of `row` and subtracts the mean of its reference loop, if any. A
/// reference loop that failed leaves the row without numbers rather than with wrong ones.
fn finish(row: &mut Row, reference: Option<&Row>, dropped: usize) {
    match reference {
        None => row.finish(dropped, None),
        Some(reference) => match (&reference.error, reference.summary) {
            (None, Some(summary)) => row.finish(dropped, Some(summary.mean)),
            _ => {
                row.finish(dropped, None);
                row.summary = None;
                row.samples_ns.clear();
                if row.error.is_none() {
                    row.error = Some(format!(
                        "its reference loop failed ({}), so there is nothing to subtract",
                        reference.error.as_deref().unwrap_or("no samples")
                    ));
                }
            }
        },
    }
}

fn settings(plan: &Plan) -> Settings {
    let schedule = plan.row.schedule;
    let epcc = plan.row.mode == Mode::Epcc;
    Settings {
        mode: plan.row.mode,
        method: match plan.row.mode {
            Mode::Epcc => format!(
                "EPCC syncbench: each thread runs `delay(); barrier()` in a loop (for a \
                 reduction, `delay(); send(1); next()`, or OpenMP's `omp for reduction`); each \
                 row is {} outer repetitions of an inner loop sized to the target time, the \
                 first dropped; the cost is (loop time - reference loop time) / inner \
                 repetitions, where the reference loop is the same loop without the barrier on \
                 the same threads (for OpenMP, its own parallel region without the barrier)",
                schedule.samples
            ),
            Mode::BackToBack => "back-to-back: T threads on a fresh barrier per row; warm-up, \
                                 then timed samples of consecutive episodes, timed on thread 0"
                .to_owned(),
        },
        threads: plan.threads.clone(),
        algorithms: plan
            .contenders
            .iter()
            .filter(|contender| contender.kind() == RowKind::Ours)
            .map(|contender| contender.name().into_owned())
            .collect(),
        baselines: plan
            .contenders
            .iter()
            .filter(|contender| contender.kind() != RowKind::Ours)
            .map(|contender| contender.name().into_owned())
            .collect(),
        pinned: plan.row.pin,
        time_per_test_s: plan.time_per_test.as_secs_f64(),
        samples: schedule.samples - plan.dropped(),
        dropped_samples: plan.dropped(),
        episodes: schedule.episodes,
        target_sample_ms: schedule.target_sample.as_secs_f64() * 1e3,
        delay_us: plan.delay.map(|delay| delay.as_secs_f64() * 1e6),
        delay_iterations: epcc.then_some(plan.row.delay),
        row_budget_s: schedule.row_budget.as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_with(raw: &[f64]) -> Row {
        Row::measured("x", RowKind::Ours, raw.len(), raw.to_vec())
    }

    #[test]
    fn the_reference_mean_is_subtracted() {
        let mut reference = row_with(&[1000.0, 90.0, 110.0]);
        reference.finish(1, None);
        let mut row = row_with(&[5000.0, 300.0, 400.0]);
        finish(&mut row, Some(&reference), 1);
        assert_eq!(row.reference_ns, Some(100.0));
        assert_eq!(row.samples_ns, vec![200.0, 300.0]);
    }

    #[test]
    fn a_failed_reference_leaves_no_numbers() {
        let reference = Row::failed("loop", RowKind::Loop, 3, "boom".into());
        let mut row = row_with(&[5000.0, 300.0, 400.0]);
        finish(&mut row, Some(&reference), 1);
        assert!(row.summary.is_none() && row.samples_ns.is_empty());
        assert!(row.error.unwrap().contains("boom"));
    }
}
