//! What the team collectives are held against, each on N threads through the same sampler:
//!
//! - `std::sync::Barrier`, what a Rust program has without this library, and our own `Barrier`
//!   with `Algorithm::Auto`, the fastest barrier the library offers (a team barrier pays for
//!   more: checking, sync modes, sub-teams);
//! - OpenMP (libgomp, through `baselines/omp_collectives.c`): `#pragma omp barrier`, an allreduce
//!   of one u64 that every thread reads (`omp for reduction(+:total)`), and a broadcast through a
//!   shared buffer and two barriers. OpenMP has no sub-teams short of nested parallel regions, so
//!   these run on the team of all only. Each round is one parallel region, timed inside it
//!   between two barriers as the Rust rows are timed between two meetings;
//! - `copy_from_slice` of a broadcast's length on one thread, source and destination warm in its
//!   caches as far as they fit: a broadcast that delivers its payload to every receiver as fast
//!   scores 1 (receivers copy in parallel, so more is possible).

use std::hint::black_box;

use phasers::{Algorithm, Barrier};
use phasers_cli::harness::engine::{self, Pacing, Plan};
use phasers_cli::harness::row::{into_row, Row, RowKind, RowPlan};
use phasers_cli::harness::watchdog::Watch;
use phasers_cli::harness::work::{Failure, Work};

use crate::native::{omp_collective_round, sample_rounds, OmpCollective};

use super::operation::Operation;

/// The name of the `std::sync::Barrier` row.
pub const STD_NAME: &str = "std::sync::Barrier";
/// The name of our `Barrier` row.
pub const OURS_NAME: &str = "phasers::Barrier auto";
/// The name of the OpenMP barrier row.
pub const OMP_BARRIER_NAME: &str = "omp barrier";
/// The name of the OpenMP allreduce row.
pub const OMP_ALLREDUCE_NAME: &str = "omp reduction(+:x), read by all";
/// The name of the OpenMP broadcast row.
pub const OMP_BROADCAST_NAME: &str = "omp broadcast via shared buffer";
/// The name of the memcpy rows.
pub const MEMCPY_NAME: &str = "memcpy";

/// `std::sync::Barrier` among `threads` threads.
pub fn std_barrier(threads: usize, plan: &RowPlan) -> Row {
    let barrier = std::sync::Barrier::new(threads);
    looped(STD_NAME, RowKind::Baseline, vec![&barrier; threads], plan)
}

/// Our `Barrier` with `Algorithm::Auto` among `threads` threads, with what `auto` resolved to.
pub fn our_barrier(threads: usize, plan: &RowPlan) -> Row {
    match Barrier::with_algorithm(threads, Algorithm::Auto) {
        Ok(barrier) => {
            let mut row = looped(OURS_NAME, RowKind::Ours, barrier.participants(), plan);
            row.resolved = Some(barrier.algorithm().name().to_owned());
            row.wait_policy = Some(barrier.wait_policy().name().to_owned());
            row
        }
        Err(error) => Row::failed(
            OURS_NAME,
            RowKind::Ours,
            plan.schedule.samples,
            format!("cannot build: {error}"),
        ),
    }
}

/// Measures `works`, one thread each (the first keeps time), and returns the row of nanoseconds
/// per operation, named `name`. Not every collective holds all members back until everyone has
/// arrived (a broadcast's root, a `NoSync` call), so every row is [`Pacing::Looped`]: rounds are
/// never cut, and the closing meeting, inside the timed span, waits for the last thread. One
/// control barrier per round is a few hundred nanoseconds against a round of `--time / --samples`.
pub fn looped<W: Work>(name: &str, kind: RowKind, works: Vec<W>, plan: &RowPlan) -> Row {
    let watch = Watch::new(name, works.len(), plan.hang_after);
    let looped = Plan {
        pacing: Pacing::Looped,
        ..plan.engine()
    };
    let measured = engine::threads(works, &looped, &watch);
    into_row(name, kind, plan.schedule, measured)
}

/// The OpenMP counterpart of `operation`, if it has one, with its row name.
pub fn openmp_counterpart(operation: Operation) -> Option<(OmpCollective, &'static str)> {
    match operation {
        Operation::Barrier => Some((OmpCollective::Barrier, OMP_BARRIER_NAME)),
        Operation::Allreduce => Some((OmpCollective::AllreduceOne, OMP_ALLREDUCE_NAME)),
        Operation::Broadcast { words } => {
            Some((OmpCollective::Broadcast { words }, OMP_BROADCAST_NAME))
        }
        Operation::Alltoall { .. } | Operation::Memcpy { .. } => None,
    }
}

/// The OpenMP counterpart of `operation` on `threads` OpenMP threads; `None` when it has none.
pub fn openmp(operation: Operation, threads: usize, plan: &RowPlan) -> Option<Row> {
    let (work, name) = openmp_counterpart(operation)?;
    Some(sample_rounds(
        name,
        RowKind::Baseline,
        plan,
        |planned, _deadline| omp_collective_round(threads, planned, work, plan.pin),
    ))
}

/// A copy of `words` u64 on one thread.
pub fn memcpy(words: usize, plan: &RowPlan) -> Row {
    let copy = Memcpy {
        source: (0..words as u64).collect(),
        destination: vec![0; words],
    };
    looped(MEMCPY_NAME, RowKind::Baseline, vec![copy], plan)
}

/// One thread's copy.
struct Memcpy {
    source: Vec<u64>,
    destination: Vec<u64>,
}

impl Work for Memcpy {
    const SYNCHRONIZED: bool = false;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        self.destination.copy_from_slice(&self.source);
        // The copy is never read: without this the compiler could drop every copy but one.
        black_box(&mut self.destination);
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives_bench::tests::plan;

    #[test]
    fn every_baseline_measures() {
        let plan = plan(200, 2);
        let mut rows = vec![
            std_barrier(3, &plan),
            our_barrier(3, &plan),
            memcpy(100, &plan),
        ];
        for operation in [
            Operation::Barrier,
            Operation::Allreduce,
            Operation::Broadcast { words: 100 },
        ] {
            rows.extend(openmp(operation, 3, &plan));
        }
        assert_eq!(rows.len(), 6);
        for row in rows {
            assert_eq!(row.error, None, "{row:?}");
            assert_eq!(row.samples_ns.len(), 2, "{row:?}");
            assert!(row.min().unwrap() > 0.0, "{row:?}");
        }
        assert!(openmp(Operation::Alltoall { block: 1 }, 3, &plan).is_none());
    }
}
