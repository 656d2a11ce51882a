//! A whole `bench barrier` run: the floor, then every barrier at every thread count.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use indicatif::{ProgressBar, ProgressStyle};

use crate::bench::{self, RowPlan};
use crate::contender::Contender;
use crate::floor;
use crate::machine::Machine;
use crate::openmp_row;
use crate::report;
use crate::results::{Group, Mode, Report, Row, Settings, SCHEMA_VERSION};

/// EPCC drops its first outer repetition: it pays for waking threads and warming caches.
pub const EPCC_DROPPED: usize = 1;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Thread counts, in the order to run them.
    pub threads: Vec<usize>,
    /// The rows of every table, in order.
    pub contenders: Vec<Contender>,
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

    fn needs_openmp_reference(&self) -> bool {
        self.row.mode == Mode::Epcc && self.contenders.contains(&Contender::OpenMp)
    }
}

/// Runs the plan, printing each table to stdout as soon as it is complete.
pub fn run(plan: &Plan) -> Report {
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let machine = Machine::detect();
    let epcc = plan.row.mode == Mode::Epcc;
    let loops_per_group = usize::from(epcc) + usize::from(plan.needs_openmp_reference());
    let total = 1 + plan.threads.len() * (plan.contenders.len() + loops_per_group);
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
        progress.suspend(|| println!("{}", report::header(&machine, &floor, plan)));
    }

    let mut groups = Vec::with_capacity(plan.threads.len());
    for &threads in &plan.threads {
        let reference_loop = epcc.then(|| {
            progress.set_message(format!("{threads} threads: reference loop"));
            let mut row = bench::reference_loop(threads, &plan.row);
            row.finish(plan.dropped(), None);
            progress.inc(1);
            row
        });
        let openmp_loop = plan.needs_openmp_reference().then(|| {
            progress.set_message(format!("{threads} threads: omp reference loop"));
            let mut row = openmp_row::run(threads, &plan.row, false);
            row.finish(plan.dropped(), None);
            progress.inc(1);
            row
        });
        let mut rows = Vec::with_capacity(plan.contenders.len());
        for &contender in &plan.contenders {
            progress.set_message(format!("{threads} threads: {}", contender.name()));
            let mut row = bench::run(contender, threads, &plan.row);
            let reference = match contender {
                Contender::OpenMp => openmp_loop.as_ref(),
                _ => reference_loop.as_ref(),
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
            progress.suspend(|| println!("{}", report::table(&group, &machine, &floor)));
        }
        groups.push(group);
    }
    progress.finish_and_clear();

    Report {
        schema_version: SCHEMA_VERSION,
        benchmark: "bench barrier".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        command_line: plan.command_line.clone(),
        started_unix_s,
        settings: settings(plan),
        machine,
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
                "EPCC syncbench: each thread runs `delay(); barrier()` in a loop; each row is \
                 {} outer repetitions of an inner loop sized to the target time, the first \
                 dropped; the cost is (loop time - reference loop time) / inner repetitions, \
                 where the reference loop is the same loop without the barrier on the same \
                 threads (for OpenMP, its own parallel region without the barrier)",
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
            .filter_map(|contender| match contender {
                Contender::Phasers(algorithm) => Some(algorithm.name().to_owned()),
                _ => None,
            })
            .collect(),
        baselines: plan
            .contenders
            .iter()
            .filter(|contender| !matches!(contender, Contender::Phasers(_)))
            .map(|contender| contender.name().to_owned())
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
    use crate::results::RowKind;

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
