//! One thread count of a sweep, in interleaved rounds: round 1 of the floor, the reference loops
//! and every row, then round 2 of each, and so on.
//!
//! A shared machine can sit in a fast state (a cache-line round trip of about 60 ns) or a slow one
//! (about 300 ns) for minutes at a time. Measured one after another, two rows can land in
//! different states and their ratio say more about the machine than about the barriers; measured
//! in interleaved rounds, every row sees every state alike, and the rounds' disagreement says how
//! far the machine drifted (see `noise`).

use indicatif::ProgressBar;
use phasers::Floors;

use crate::bench;
use crate::native::OmpWork;
use crate::openmp_row;
use crate::regime_floor::{Regime, RegimeFloor};
use crate::results::Group;
use crate::rounds;
use crate::sweep::{needs_openmp_reference, Plan};
use phasers_cli::harness::floor::{self, Floor};
use phasers_cli::harness::row::{Mode, Row};

/// What one thread count measured.
pub struct Measured {
    /// The table, rounds merged.
    pub group: Group,
    /// Its floor row.
    pub floor: RegimeFloor,
    /// The round trip measured in each round, for the run's merged floor.
    pub round_trips: Vec<Floor>,
}

/// Measures every row of `plan` at `threads` threads in `plan.rounds()` interleaved rounds on a
/// machine of `cores` cores, counting each test on `progress`.
pub fn measure(plan: &Plan, threads: usize, cores: usize, progress: &ProgressBar) -> Measured {
    let contenders = plan.contenders_at(threads);
    let epcc = plan.row.mode == Mode::Epcc;
    let openmp = needs_openmp_reference(plan.row.mode, &contenders);
    let regime = Regime::of(threads, cores);
    let count = plan.rounds();
    let mut round_trips = Vec::with_capacity(count);
    let mut handoffs_ns = Vec::new();
    let mut loops: Vec<Row> = Vec::new();
    let mut openmp_loops: Vec<Row> = Vec::new();
    let mut rows: Vec<Vec<Row>> = vec![Vec::with_capacity(count); contenders.len()];
    for round in 0..count {
        let row_plan = plan.round(round);
        let step = |what: &str| {
            progress.set_message(format!(
                "{threads} threads, round {}/{count}: {what}",
                round + 1
            ));
        };
        step("floor");
        round_trips.push(floor::measure(row_plan.schedule));
        if let Regime::YieldHandoffs(_) = regime {
            // A few milliseconds; measured in every round so that it drifts with the rows.
            handoffs_ns.push(Floors::measure().yield_handoff().as_nanos() as f64);
        }
        progress.inc(1);
        if epcc {
            step("reference loop");
            loops.push(bench::reference_loop(threads, &row_plan));
            progress.inc(1);
        }
        if openmp {
            step("omp reference loop");
            openmp_loops.push(openmp_row::run(threads, &row_plan, OmpWork::Loop));
            progress.inc(1);
        }
        for (contender, rounds) in contenders.iter().zip(&mut rows) {
            step(&contender.name());
            rounds.push(bench::run(*contender, threads, &row_plan));
            progress.inc(1);
        }
    }

    let dropped = plan.dropped();
    // The reference loops are merged before subtraction, and each row subtracts the median over
    // all of its reference loop's rounds rather than its own round's: the loop is local computation
    // (the delay alone, no cache line crosses cores), which the machine's slow state barely
    // touches, and one value over every round is more precise than one round's. The median, not
    // EPCC's mean: one preempted sample of the loop (400 µs among 1 µs ones, seen on the 2-core
    // VMs) dragged the mean up so far that the OpenMP rows came out negative. The loop still runs
    // in every round, so that median covers the same states the rows saw.
    let reference_loop = epcc.then(|| rounds::merge(&loops, dropped, None));
    let openmp_reference_loop = openmp.then(|| rounds::merge(&openmp_loops, dropped, None));
    let rows = contenders
        .iter()
        .zip(&rows)
        .map(|(contender, rounds)| {
            let reference = if contender.runs_on_openmp() {
                openmp_reference_loop.as_ref()
            } else {
                reference_loop.as_ref()
            };
            merge_row(rounds, reference, dropped)
        })
        .collect();
    let merged = rounds::merge_floors(&round_trips);
    let floor = match regime {
        Regime::RoundTrip => RegimeFloor::round_trip(threads, &merged, &round_trips),
        Regime::YieldHandoffs(_) => RegimeFloor::yield_handoffs(threads, cores, &handoffs_ns),
    };
    Measured {
        group: Group {
            threads,
            oversubscribed: phasers::is_oversubscribed(threads),
            reference_loop,
            openmp_reference_loop,
            rows,
        },
        floor,
        round_trips,
    }
}

/// Merges the rounds of a row and subtracts its reference loop's median, if it has one. A reference
/// loop that failed leaves the row without numbers rather than with wrong ones.
pub fn merge_row(rounds: &[Row], reference: Option<&Row>, dropped: usize) -> Row {
    let Some(reference) = reference else {
        return rounds::merge(rounds, dropped, None);
    };
    if let (None, Some(summary)) = (&reference.error, reference.summary) {
        return rounds::merge(rounds, dropped, Some(summary.median));
    }
    let mut row = rounds::merge(rounds, dropped, None);
    row.summary = None;
    row.samples_ns.clear();
    row.round_medians_ns.clear();
    row.spread = None;
    if row.error.is_none() {
        row.error = Some(format!(
            "its reference loop failed ({}), so there is nothing to subtract",
            reference.error.as_deref().unwrap_or("no samples")
        ));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_cli::harness::row::RowKind;

    fn raw(values: &[f64]) -> Row {
        Row::measured("x", RowKind::Ours, values.len(), values.to_vec())
    }

    #[test]
    fn every_round_subtracts_the_merged_reference_mean() {
        let reference = rounds::merge(&[raw(&[1000.0, 90.0]), raw(&[1000.0, 110.0])], 1, None);
        let row = merge_row(
            &[raw(&[5000.0, 300.0]), raw(&[5000.0, 400.0])],
            Some(&reference),
            1,
        );
        assert_eq!(row.reference_ns, Some(100.0));
        assert_eq!(row.samples_ns, vec![200.0, 300.0]);
        assert_eq!(row.round_medians_ns, vec![200.0, 300.0]);
    }

    #[test]
    fn a_failed_reference_leaves_no_numbers() {
        let reference = Row::failed("loop", RowKind::Loop, 3, "boom".into());
        let row = merge_row(&[raw(&[5000.0, 300.0, 400.0])], Some(&reference), 1);
        assert!(row.summary.is_none() && row.samples_ns.is_empty() && row.spread.is_none());
        assert!(row.error.unwrap().contains("boom"));
    }
}
