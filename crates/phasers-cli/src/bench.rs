//! One row of a barrier sweep: the contender's handles, wrapped in the body of the plan's mode,
//! measured by the harness's round engine ([`phasers_cli::harness::threaded_row`]), as a [`Row`].

use std::time::Duration;

use phasers::Barrier;
pub use phasers_cli::harness::threaded_row::Measured;
use phasers_cli::harness::threaded_row::{self, control_participants};
pub use phasers_cli::harness::watchdog::{panic_message, watch_until, Watch};

use crate::body::{BackToBack, Body, DelayOnly, DelayThenWait};
use crate::contender::{Contender, StdHandle, WaitHandle};
use crate::native::{CxxBarrier, OmpWork, PthreadBarrier};
use crate::omp_active::{self, ActiveWork};
use crate::openmp_row;
use crate::phaser_row;
use crate::reference::ReferenceBarrier;
use crate::results::{Mode, Row, RowKind};
use crate::schedule::Schedule;

/// How every row of a run is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowPlan {
    /// What an iteration is.
    pub mode: Mode,
    /// Rounds and samples.
    pub schedule: Schedule,
    /// A row that completes no round for this long is taken to be hung.
    pub hang_after: Duration,
    /// Whether to pin each row's threads to CPUs, round robin.
    pub pin: bool,
    /// EPCC mode: iterations of the delay loop before each barrier.
    pub delay: u64,
}

/// Measures `contender` with `threads` threads on a fresh barrier. The row holds the raw samples;
/// [`Row::finish`] turns them into costs.
///
/// The process exits with an error if no round completes for `plan.hang_after`: a barrier that
/// hangs must not hang the benchmark silently.
pub fn run(contender: Contender, threads: usize, plan: &RowPlan) -> Row {
    let name = contender.name();
    let kind = contender.kind();
    let watch = Watch::new(&name, threads, plan.hang_after);
    let (measured, resolved, wait_policy) = match contender {
        Contender::Reference => {
            let barrier = ReferenceBarrier::new(threads);
            (with_handles(barrier.handles(), plan, &watch), None, None)
        }
        Contender::Std => {
            let barrier = std::sync::Barrier::new(threads);
            let handles = vec![StdHandle(&barrier); threads];
            (with_handles(handles, plan, &watch), None, None)
        }
        Contender::Pthread => match PthreadBarrier::new(threads) {
            Ok(barrier) => (with_handles(barrier.handles(), plan, &watch), None, None),
            Err(error) => return Row::failed(&name, kind, plan.schedule.samples, error),
        },
        Contender::CxxBarrier => match CxxBarrier::new(threads) {
            Ok(barrier) => (with_handles(barrier.handles(), plan, &watch), None, None),
            Err(error) => return Row::failed(&name, kind, plan.schedule.samples, error),
        },
        Contender::OpenMp => return openmp_row::run(threads, plan, OmpWork::Barrier),
        Contender::OmpReduction => return openmp_row::run(threads, plan, OmpWork::Reduction),
        Contender::OpenMpActive => return omp_active::run(threads, plan, ActiveWork::Barrier),
        Contender::OmpReductionActive => {
            return omp_active::run(threads, plan, ActiveWork::Reduction)
        }
        Contender::Phaser(config) => match phaser_row::measure(config, threads, plan, &watch) {
            Ok((measured, tree)) => (measured, Some(tree), None),
            Err(error) => return Row::failed(&name, kind, plan.schedule.samples, error),
        },
        Contender::Phasers(algorithm) => match Barrier::with_algorithm(threads, algorithm) {
            Ok(barrier) => (
                with_handles(barrier.participants(), plan, &watch),
                Some(barrier.algorithm().name().to_owned()),
                Some(barrier.wait_policy().name().to_owned()),
            ),
            Err(error) => {
                return Row::failed(
                    &name,
                    kind,
                    plan.schedule.samples,
                    format!("cannot build: {error}"),
                )
            }
        },
    };
    let mut row = into_row(&name, kind, plan.schedule, measured);
    (row.resolved, row.wait_policy) = (resolved, wait_policy);
    row
}

/// EPCC's reference loop on `threads` Rust threads: the delays with no barrier.
pub fn reference_loop(threads: usize, plan: &RowPlan) -> Row {
    let name = "reference loop";
    let watch = Watch::new(name, threads, plan.hang_after);
    let measured = match control_participants(threads) {
        Ok(control) => {
            let bodies = control
                .into_iter()
                .map(|control| DelayOnly {
                    control,
                    delay: plan.delay,
                })
                .collect();
            measure(bodies, plan, &watch)
        }
        Err(error) => Measured::failed(plan.schedule, error),
    };
    into_row(name, RowKind::Loop, plan.schedule, measured)
}

/// Wraps each thread's handle in the body of the plan's mode and measures the row.
pub fn with_handles<H: WaitHandle>(handles: Vec<H>, plan: &RowPlan, watch: &Watch) -> Measured {
    match plan.mode {
        Mode::BackToBack => measure(handles.into_iter().map(BackToBack).collect(), plan, watch),
        Mode::Epcc => match control_participants(handles.len()) {
            Ok(control) => {
                let bodies = handles
                    .into_iter()
                    .zip(control)
                    .map(|(handle, control)| DelayThenWait {
                        handle,
                        control,
                        delay: plan.delay,
                    })
                    .collect();
                measure(bodies, plan, watch)
            }
            Err(error) => Measured::failed(plan.schedule, error),
        },
    }
}

/// Runs the rounds of `plan` on one thread per body (see [`threaded_row::measure`]).
pub fn measure<B: Body>(bodies: Vec<B>, plan: &RowPlan, watch: &Watch) -> Measured {
    threaded_row::measure(bodies, plan.schedule, plan.pin, watch)
}

/// The raw row of what a row's threads produced: samples in ns per iteration, notes on anything
/// unusual. Nothing is dropped or subtracted yet.
pub fn into_row(name: &str, kind: RowKind, schedule: Schedule, measured: Measured) -> Row {
    let sampler = &measured.sampler;
    let mut row = Row::measured(name, kind, schedule.samples, sampler.per_episode_ns());
    row.error = measured.error;
    row.episodes_per_sample = sampler.episodes();
    row.sample_episodes = sampler
        .samples()
        .iter()
        .map(|sample| sample.episodes)
        .collect();
    row.row_s = measured.elapsed.as_secs_f64();
    let taken = row.raw_ns.len();
    if taken < schedule.samples {
        let why = if sampler.capped() {
            format!(
                "row stopped at its {} s budget",
                schedule.row_budget.as_secs_f64()
            )
        } else {
            "stopped by the error".to_owned()
        };
        row.add_note(format!("{taken} of {} samples: {why}", schedule.samples));
    }
    if sampler.cut() > 0 {
        let at = match schedule.episodes {
            Some(_) => "at the row budget",
            None => "at 4x the target length (preempted, or the barrier slowed)",
        };
        row.add_note(format!("{} sample(s) cut {at}", sampler.cut()));
    }
    if let Some(note) = measured.pin_note {
        row.add_note(note);
    }
    row.finish(0, None);
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers::Algorithm;

    fn quick(mode: Mode) -> RowPlan {
        RowPlan {
            mode,
            schedule: Schedule {
                episodes: Some(50),
                samples: 3,
                target_sample: Duration::from_millis(1),
                row_budget: Duration::from_secs(5),
            },
            hang_after: Duration::from_secs(60),
            pin: false,
            delay: 10,
        }
    }

    #[test]
    fn every_contender_completes_a_small_row() {
        let contenders = Contender::every();
        for contender in contenders {
            for (threads, mode) in [(1, Mode::BackToBack), (3, Mode::Epcc)] {
                let row = run(contender, threads, &quick(mode));
                let what = format!("{} x{threads} {}", contender.name(), mode.name());
                assert_eq!(row.error, None, "{what}");
                assert_eq!(row.raw_ns.len(), 3, "{what}");
                assert_eq!(row.samples_ns.len(), 3, "{what}");
                assert_eq!(row.kind, contender.kind(), "{what}");
                assert_eq!(row.episodes_per_sample, 50, "{what}");
            }
        }
    }

    #[test]
    fn the_reference_loop_runs_without_a_barrier() {
        let row = reference_loop(3, &quick(Mode::Epcc));
        assert_eq!(row.error, None);
        assert_eq!(row.kind, RowKind::Loop);
        assert_eq!(row.raw_ns.len(), 3);
        assert!(row.raw_ns.iter().all(|ns| *ns > 0.0));
    }

    #[test]
    fn pinned_rows_run() {
        let plan = RowPlan {
            pin: true,
            ..quick(Mode::Epcc)
        };
        let row = run(Contender::Phasers(Algorithm::Auto), 3, &plan);
        assert_eq!(row.error, None);
        assert_eq!(row.note, None);
    }
}
