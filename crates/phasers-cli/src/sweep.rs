//! A whole `bench barrier` run: the floor, then every barrier at every thread count.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use indicatif::{ProgressBar, ProgressStyle};
use phasers::Algorithm;

use crate::bench;
use crate::contender::Contender;
use crate::floor;
use crate::machine::Machine;
use crate::report;
use crate::results::{Group, Report, Settings};
use crate::schedule::Schedule;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Thread counts, in the order to run them.
    pub threads: Vec<usize>,
    /// The library algorithms to measure after the baselines.
    pub algorithms: Vec<Algorithm>,
    /// Sampling settings for every row, the floor included.
    pub schedule: Schedule,
    /// A row that completes no round for this long is taken to be hung.
    pub hang_after: Duration,
    /// The command line, recorded in the report.
    pub command_line: Vec<String>,
}

/// Runs the plan, printing each table to stdout as soon as it is complete.
pub fn run(plan: &Plan) -> Report {
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let machine = Machine::detect();
    let contenders: Vec<Contender> = Contender::BASELINES
        .into_iter()
        .chain(plan.algorithms.iter().copied().map(Contender::Phasers))
        .collect();

    let total = 1 + plan.threads.len() * contenders.len();
    // indicatif draws on stderr and hides itself when stderr is not a terminal, so stdout carries
    // only the tables.
    let progress = ProgressBar::new(total as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} rows, {elapsed} elapsed  {msg}")
    {
        progress.set_style(style);
    }

    progress.set_message("floor: cache-line round trip");
    let floor = floor::measure(plan.schedule);
    progress.inc(1);
    progress.suspend(|| println!("{}", report::header(&machine, &floor)));

    let mut groups = Vec::with_capacity(plan.threads.len());
    for &threads in &plan.threads {
        let mut rows = Vec::with_capacity(contenders.len());
        for &contender in &contenders {
            progress.set_message(format!("{threads} threads: {}", contender.name()));
            rows.push(bench::run(
                contender,
                threads,
                plan.schedule,
                plan.hang_after,
            ));
            progress.inc(1);
        }
        let group = Group {
            threads,
            oversubscribed: phasers::is_oversubscribed(threads),
            rows,
        };
        progress.suspend(|| println!("{}", report::table(&group, machine.available_cores)));
        groups.push(group);
    }
    progress.finish_and_clear();

    Report {
        benchmark: "bench barrier".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        command_line: plan.command_line.clone(),
        started_unix_s,
        settings: Settings {
            method: "back-to-back: T threads on a fresh barrier per row; warm-up, then timed \
                     samples of consecutive episodes, timed on thread 0 between two episodes"
                .to_owned(),
            threads: plan.threads.clone(),
            algorithms: plan
                .algorithms
                .iter()
                .map(|algorithm| algorithm.name().to_owned())
                .collect(),
            samples: plan.schedule.samples,
            episodes: plan.schedule.episodes,
            target_sample_ms: plan.schedule.target_sample.as_secs_f64() * 1e3,
            row_budget_s: plan.schedule.row_budget.as_secs_f64(),
        },
        machine,
        floor,
        groups,
    }
}
