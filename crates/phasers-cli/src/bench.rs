//! One row of a barrier sweep: the contender's handles, paced as the plan's mode says and
//! measured by the harness's round engine ([`phasers_cli::harness::engine`]), as a [`Row`].

use phasers::Barrier;
use phasers_cli::harness::engine::{self, Pacing, Plan};
use phasers_cli::harness::row::{into_row, Row, RowKind, RowPlan};
use phasers_cli::harness::watchdog::Watch;
use phasers_cli::harness::work::Nothing;

use crate::contender::Contender;
use crate::native::{CxxBarrier, OmpWork, PthreadBarrier};
use crate::omp_active::{self, ActiveWork};
use crate::openmp_row;
use crate::phaser_row;
use crate::reference::ReferenceBarrier;

/// Measures `contender` with `threads` threads on a fresh barrier. The row holds the raw samples;
/// [`Row::finish`] turns them into costs.
///
/// The process exits with an error if no round completes for `plan.hang_after`: a barrier that
/// hangs must not hang the benchmark silently.
pub fn run(contender: Contender, threads: usize, plan: &RowPlan) -> Row {
    let name = contender.name();
    let kind = contender.kind();
    let watch = Watch::new(&name, threads, plan.hang_after);
    let built = match contender {
        Contender::Reference => {
            let barrier = ReferenceBarrier::new(threads);
            Ok((plan.measure(barrier.handles(), &watch), None, None))
        }
        Contender::Std => {
            let barrier = std::sync::Barrier::new(threads);
            Ok((plan.measure(vec![&barrier; threads], &watch), None, None))
        }
        Contender::Pthread => PthreadBarrier::new(threads)
            .map(|barrier| (plan.measure(barrier.handles(), &watch), None, None)),
        Contender::CxxBarrier => CxxBarrier::new(threads)
            .map(|barrier| (plan.measure(barrier.handles(), &watch), None, None)),
        Contender::OpenMp => return openmp_row::run(threads, plan, OmpWork::Barrier),
        Contender::OmpReduction => return openmp_row::run(threads, plan, OmpWork::Reduction),
        Contender::OpenMpActive => return omp_active::run(threads, plan, ActiveWork::Barrier),
        Contender::OmpReductionActive => {
            return omp_active::run(threads, plan, ActiveWork::Reduction)
        }
        Contender::Phaser(config) => phaser_row::measure(config, threads, plan, &watch)
            .map(|(measured, tree)| (measured, Some(tree), None)),
        Contender::Phasers(algorithm) => match Barrier::with_algorithm(threads, algorithm) {
            Ok(barrier) => Ok((
                plan.measure(barrier.participants(), &watch),
                Some(barrier.algorithm().name().to_owned()),
                Some(barrier.wait_policy().name().to_owned()),
            )),
            Err(error) => Err(format!("cannot build: {error}")),
        },
    };
    match built {
        Ok((measured, resolved, wait_policy)) => {
            let mut row = into_row(&name, kind, plan.schedule, measured);
            (row.resolved, row.wait_policy) = (resolved, wait_policy);
            row
        }
        Err(error) => Row::failed(&name, kind, plan.schedule.samples, error),
    }
}

/// EPCC's reference loop on `threads` Rust threads: the delays with no barrier.
pub fn reference_loop(threads: usize, plan: &RowPlan) -> Row {
    let name = "reference loop";
    let watch = Watch::new(name, threads, plan.hang_after);
    let delay = Pacing::Epcc { delay: plan.delay };
    let loop_plan = Plan {
        pacing: delay,
        ..plan.engine()
    };
    let measured = engine::threads(vec![Nothing; threads], &loop_plan, &watch);
    into_row(name, RowKind::Loop, plan.schedule, measured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use phasers::Algorithm;

    use phasers_cli::harness::row::Mode;
    use phasers_cli::harness::schedule::Schedule;

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
