//! A whole sweep (`bench barrier`, `bench phaser`, `bench reduction`, `bench tree`): every row at
//! every thread count, in interleaved rounds with the floor (see `rounds`), then the ratios
//! the report ends with and which of them are noise.

use phasers_cli::harness::floor::floor_line;
use phasers_cli::harness::footnotes;
use phasers_cli::harness::progress;

use crate::ratios;
use crate::report;
use crate::results::{Report, Settings};
use crate::rounds;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::row::{Mode, RowKind};

// The plan is data that the report and the rounds read too: it lives below them in `sweep_plan`,
// so this file, which calls them, is the only one that imports both ways.
pub use crate::sweep_plan::{keep_all, needs_openmp_reference, Benchmark, Plan, EPCC_DROPPED};

/// Runs the plan, printing each table to stdout as soon as it is complete.
pub fn run(plan: &Plan) -> Report {
    let provenance = Provenance::now(plan.benchmark.name, plan.command_line.clone());
    let machine = &provenance.machine;
    let cores = machine.available_cores;
    let total = plan
        .threads
        .iter()
        .map(|&threads| plan.tests_at(threads))
        .sum::<usize>();
    let progress = progress::bar(total, "tests");
    if plan.print_tables {
        progress.suspend(|| println!("{}", report::header(&provenance, plan)));
    }

    let mut groups = Vec::with_capacity(plan.threads.len());
    let mut regime_floors = Vec::with_capacity(plan.threads.len());
    let mut ratios = Vec::new();
    let mut round_trips = Vec::new();
    for &threads in &plan.threads {
        let mut measured = rounds::measure(plan, threads, cores, &progress);
        let records = plan.ratios.records(&measured.group, Some(&measured.floor));
        ratios::mark_rows(&mut measured.group, &measured.floor, &records);
        if plan.print_tables {
            let table = report::sweep_table(&measured.group, machine, &measured.floor);
            progress.suspend(|| println!("{table}"));
        }
        groups.push(measured.group);
        regime_floors.push(measured.floor);
        ratios.extend(records);
        round_trips.extend(measured.round_trips);
    }
    progress.finish_and_clear();
    let floor = rounds::merge_floors(&round_trips);
    if plan.print_tables {
        let line = floor_line(&floor);
        println!(
            "{}",
            footnotes::wrap("round trip over every round: ", &line)
        );
    }

    Report {
        provenance,
        settings: settings(plan),
        floor,
        groups,
        regime_floors,
        ratios,
    }
}

fn settings(plan: &Plan) -> Settings {
    let schedule = plan.row.schedule;
    let round = plan.round(0).schedule;
    let epcc = plan.row.mode == Mode::Epcc;
    let kept = schedule.samples - plan.dropped();
    let rounds = plan.rounds();
    // The names of our rows (`ours`), or of the others.
    let names = |ours: bool| {
        (plan.contenders.iter())
            .filter(|contender| (contender.kind() == RowKind::Ours) == ours)
            .map(|contender| contender.name().into_owned())
            .collect()
    };
    Settings {
        mode: plan.row.mode,
        method: match plan.row.mode {
            Mode::Epcc => format!(
                "EPCC syncbench: each thread runs `delay(); barrier()` in a loop (for a \
                 reduction, `delay(); send(1); next()`, or OpenMP's `omp for reduction`); each \
                 row is {kept} outer repetitions of an inner loop sized to the target time, in \
                 {rounds} rounds on a fresh barrier each, interleaved with the other rows' rounds \
                 and the floor's, the first repetition of each round dropped; the cost is (loop \
                 time - reference loop time) / inner repetitions, where the reference loop is \
                 the same loop without the barrier on the same threads (for OpenMP, its own \
                 parallel region without the barrier), run in rounds too and subtracted as the \
                 mean over all of its rounds"
            ),
            Mode::BackToBack => format!(
                "back-to-back: T threads on a fresh barrier per round; each row is {kept} timed \
                 samples of consecutive episodes, timed on thread 0, in {rounds} rounds \
                 interleaved with the other rows' rounds and the floor's, each after its own \
                 warm-up"
            ),
        },
        threads: plan.threads.clone(),
        algorithms: names(true),
        baselines: names(false),
        pinned: plan.row.pin,
        time_per_test_s: plan.time_per_test.as_secs_f64(),
        samples: kept,
        dropped_samples: plan.dropped(),
        rounds,
        episodes: schedule.episodes,
        target_sample_ms: round.target_sample.as_secs_f64() * 1e3,
        delay_us: plan.delay.map(|delay| delay.as_secs_f64() * 1e6),
        delay_iterations: epcc.then_some(plan.row.delay),
        row_budget_s: round.row_budget.as_secs_f64(),
    }
}
