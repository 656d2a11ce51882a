//! How every Rust row of `bench collectives` is timed: each thread runs its operation back to back
//! in rounds that the shared harness ([`bench::measure`]) sizes and times on thread 0, and the
//! threads meet on a control barrier before and after each round.
//!
//! Not every collective holds all members back until everyone has arrived (a broadcast's root,
//! a `NoSync` call), so thread 0 finishing a round does not mean that every thread has, and
//! thread 0 cannot cut a round short by telling the others where to stop (`bench::is_cut` needs
//! every thread within one episode of thread 0). So the body is not `SYNCHRONIZED`: every round
//! runs its planned iterations, and the closing meeting, inside the timed span, waits for the
//! last thread. One control barrier per round is a few hundred nanoseconds against a round sized
//! to `--time / --samples`.

use phasers::{Algorithm, Barrier, Participant};

use crate::bench::{self, into_row, RowPlan, Watch};
use crate::body::Body;
use crate::contender::WaitHandle;
use crate::results::{Row, RowKind};

/// One thread's part of a row: its operation, and its place on the control barrier.
pub struct Looped<H> {
    op: H,
    control: Participant,
}

impl<H: WaitHandle> Body for Looped<H> {
    const SYNCHRONIZED: bool = false;
    const MEETS_AFTER_ROUND: bool = true;

    #[inline]
    fn iteration(&mut self) -> Result<(), phasers::Error> {
        self.op.wait()
    }

    fn meet(&mut self) -> Result<(), phasers::Error> {
        self.control.wait().map(drop)
    }
}

/// Measures `ops`, one thread each (the first keeps time), and returns the row of nanoseconds per
/// operation, named `name`. The control barrier is one of ours, so a thread that fails drops its
/// place on it and the others return instead of waiting for ever.
pub fn measure<H: WaitHandle>(name: &str, kind: RowKind, ops: Vec<H>, plan: &RowPlan) -> Row {
    let threads = ops.len();
    let control = match Barrier::with_algorithm(threads, Algorithm::SenseReversing) {
        Ok(barrier) => barrier.participants(),
        Err(error) => {
            return Row::failed(
                name,
                kind,
                plan.schedule.samples,
                format!("cannot build the control barrier: {error}"),
            )
        }
    };
    let bodies = ops
        .into_iter()
        .zip(control)
        .map(|(op, control)| Looped { op, control })
        .collect();
    let watch = Watch::new(name, threads, plan.hang_after);
    into_row(
        name,
        kind,
        plan.schedule,
        bench::measure(bodies, plan, &watch),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::results::Mode;
    use phasers_cli::harness::schedule::Schedule;

    /// Counts its calls, and never waits for anyone: the least synchronized operation there is.
    struct Count<'a>(&'a AtomicU64);

    impl WaitHandle for Count<'_> {
        fn wait(&mut self) -> Result<(), phasers::Error> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    #[test]
    fn every_thread_runs_every_planned_iteration() {
        let calls = AtomicU64::new(0);
        let plan = RowPlan {
            mode: Mode::BackToBack,
            schedule: Schedule {
                episodes: Some(1000),
                samples: 3,
                target_sample: Duration::from_millis(1),
                row_budget: Duration::from_secs(10),
            },
            hang_after: Duration::from_secs(60),
            pin: false,
            delay: 0,
        };
        let row = measure(
            "count",
            RowKind::Ours,
            (0..3).map(|_| Count(&calls)).collect(),
            &plan,
        );
        assert_eq!(row.error, None);
        assert_eq!(row.samples_ns.len(), 3);
        // The warm-up round, then three samples of 1,000, on each of the three threads.
        let per_thread = crate::schedule::WARM_UP_EPISODES + 3 * 1000;
        assert_eq!(calls.load(Ordering::Relaxed), 3 * per_thread);
    }
}
