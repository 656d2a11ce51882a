//! How every Rust row of `bench collectives` is timed: one call per iteration on each thread, in
//! rounds between meetings on a control barrier (the harness's [`Looped`] body).
//!
//! Not every collective holds all members back until everyone has arrived (a broadcast's root,
//! a `NoSync` call), so thread 0 finishing a round does not mean that every thread has, and
//! thread 0 cannot cut a round short. So every round runs its planned iterations, and the closing
//! meeting, inside the timed span, waits for the last thread. One control barrier per round is a
//! few hundred nanoseconds against a round sized to `--time / --samples`.

use phasers_cli::harness::body::{Looped, WaitHandle};
use phasers_cli::harness::row::{into_row, Row, RowKind, RowPlan};
use phasers_cli::harness::threaded_row::{self, control_participants, Measured};
use phasers_cli::harness::watchdog::Watch;

/// Measures `ops`, one thread each (the first keeps time), and returns the row of nanoseconds per
/// operation, named `name`. The control barrier is one of ours, so a thread that fails drops its
/// place on it and the others return instead of waiting for ever.
pub fn measure<H: WaitHandle>(name: &str, kind: RowKind, ops: Vec<H>, plan: &RowPlan) -> Row {
    let schedule = plan.schedule;
    let watch = Watch::new(name, ops.len(), plan.hang_after);
    let measured = match control_participants(ops.len()) {
        Ok(control) => {
            let bodies = ops.into_iter().zip(control);
            let bodies = bodies.map(|(op, control)| Looped { op, control }).collect();
            threaded_row::measure(bodies, schedule, plan.pin, &watch)
        }
        Err(error) => Measured::failed(schedule, error),
    };
    into_row(name, kind, schedule, measured)
}

#[cfg(test)]
pub mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use phasers_cli::harness::schedule::{Schedule, WARM_UP_EPISODES};

    use super::*;
    use phasers_cli::harness::row::Mode;

    /// Counts its calls, and never waits for anyone: the least synchronized operation there is.
    struct Count<'a>(&'a AtomicU64);

    impl WaitHandle for Count<'_> {
        fn wait(&mut self) -> Result<(), phasers::Error> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    /// A plan of `samples` samples of `episodes` iterations each, for tests.
    pub fn plan(episodes: u64, samples: usize) -> RowPlan {
        let schedule = Schedule {
            episodes: Some(episodes),
            samples,
            target_sample: Duration::from_millis(1),
            row_budget: Duration::from_secs(20),
        };
        let (hang_after, pin, delay) = (Duration::from_secs(60), false, 0);
        RowPlan {
            mode: Mode::BackToBack,
            schedule,
            hang_after,
            pin,
            delay,
        }
    }

    #[test]
    fn every_thread_runs_every_planned_iteration() {
        let calls = AtomicU64::new(0);
        let ops = (0..3).map(|_| Count(&calls)).collect();
        let row = measure("count", RowKind::Ours, ops, &plan(1000, 3));
        assert_eq!((row.error, row.samples_ns.len()), (None, 3));
        // The warm-up round, then three samples of 1,000, on each of the three threads.
        assert_eq!(
            calls.load(Ordering::Relaxed),
            3 * (WARM_UP_EPISODES + 3 * 1000)
        );
    }
}
