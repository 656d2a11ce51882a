//! One row: T threads run rounds of timed iterations of a [`Body`], timed on thread 0.
//!
//! Every thread runs the same sequence of rounds. Before each round all threads meet (see
//! [`Body::meet`]); thread 0 publishes the next round's length before arriving there and
//! everyone reads it after leaving, so all threads always agree on how many iterations to run (a
//! thread running one barrier episode more than the others would wait for ever). Thread 0 reads
//! the clock right after leaving the meeting and right after its last iteration (or the closing
//! meeting, for bodies that have one), so a sample spans exactly the round.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use phasers::{Algorithm, Barrier, Participant};

pub use phasers_cli::harness::watchdog::{panic_message, watch_until, Watch};

use crate::affinity;
use crate::body::{BackToBack, Body, DelayOnly, DelayThenWait};
use crate::contender::{Contender, StdHandle, WaitHandle};
use crate::native::{CxxBarrier, OmpWork, PthreadBarrier};
use crate::omp_active::{self, ActiveWork};
use crate::openmp_row;
use crate::phaser_row;
use crate::reference::ReferenceBarrier;
use crate::results::{Mode, Row, RowKind};
use crate::schedule::{RoundClock, Sampler, Schedule};

/// The value of the shared round length that tells every thread the row is over.
const DONE: u64 = 0;

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

/// The control barrier EPCC rows meet on between rounds. One of ours, so a thread that fails drops
/// its participant and breaks it, and the others return instead of waiting for ever.
fn control_participants(threads: usize) -> Result<Vec<Participant>, String> {
    Barrier::with_algorithm(threads, Algorithm::SenseReversing)
        .map(|barrier| barrier.participants())
        .map_err(|error| format!("cannot build the control barrier: {error}"))
}

/// What one row's threads produced.
pub struct Measured {
    /// The rounds and samples thread 0 recorded.
    pub sampler: Sampler,
    /// The most telling failure, if any thread failed.
    pub error: Option<String>,
    /// Wall time of the whole row.
    pub elapsed: Duration,
    /// Why pinning was not done as asked, if it was not.
    pub pin_note: Option<String>,
}

impl Measured {
    fn failed(schedule: Schedule, error: String) -> Self {
        Measured {
            sampler: Sampler::new(schedule),
            error: Some(error),
            elapsed: Duration::ZERO,
            pin_note: None,
        }
    }
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

/// What every thread of a row shares besides the barrier.
struct Rounds {
    /// The next round's planned episodes, or [`DONE`]: written by thread 0 before a meeting, read
    /// by everyone after it.
    next: AtomicU64,
    /// Where thread 0 cut the current round: an episode index counted over the row's rounds, so
    /// it only ever grows and a past round's cut never applies to a later round.
    stop_at: AtomicU64,
    /// Rounds completed, for the watchdog.
    done: AtomicU64,
}

/// Runs the rounds on one thread per body; the first body's thread keeps time.
pub fn measure<B: Body>(bodies: Vec<B>, plan: &RowPlan, watch: &Watch) -> Measured {
    let start = Instant::now();
    let schedule = plan.schedule;
    let sampler = Sampler::new(schedule);
    let rounds = Rounds {
        next: AtomicU64::new(sampler.first_round()),
        stop_at: AtomicU64::new(0),
        done: AtomicU64::new(0),
    };
    let cpus = if plan.pin {
        affinity::allowed_cpus()
    } else {
        Vec::new()
    };
    let mut pin_note = (plan.pin && cpus.is_empty())
        .then(|| "--pin: this platform does not list CPUs, so threads ran unpinned".to_owned());
    let mut bodies = bodies.into_iter();
    let Some(timer) = bodies.next() else {
        return Measured::failed(schedule, "no threads".to_owned());
    };
    std::thread::scope(|s| {
        let rounds = &rounds;
        let cpus = &cpus;
        let lead = s.spawn(move || {
            let pinned = pin_thread(cpus, 0);
            (lead(timer, rounds, sampler), pinned)
        });
        let follow: Vec<ScopedJoinHandle<'_, (Option<phasers::Error>, bool)>> = bodies
            .enumerate()
            .map(|(index, body)| {
                s.spawn(move || {
                    let pinned = pin_thread(cpus, index + 1);
                    (follow(body, rounds).err(), pinned)
                })
            })
            .collect();
        watch_until(
            || lead.is_finished() && follow.iter().all(ScopedJoinHandle::is_finished),
            &rounds.done,
            watch,
        );

        let mut failures = Failures::default();
        let mut all_pinned = true;
        let sampler = match lead.join() {
            Ok(((sampler, error), pinned)) => {
                failures.add_error(0, error);
                all_pinned &= pinned;
                Some(sampler)
            }
            Err(panic) => {
                failures.add_panic(0, &*panic);
                None
            }
        };
        for (rank, thread) in (1..).zip(follow) {
            match thread.join() {
                Ok((error, pinned)) => {
                    failures.add_error(rank, error);
                    all_pinned &= pinned;
                }
                Err(panic) => failures.add_panic(rank, &*panic),
            }
        }
        if !all_pinned && pin_note.is_none() {
            pin_note = Some("--pin: the OS refused to pin some threads".to_owned());
        }
        Measured {
            sampler: sampler.unwrap_or_else(|| Sampler::new(schedule)),
            error: failures.first(),
            elapsed: start.elapsed(),
            pin_note,
        }
    })
}

/// Pins thread `index` of a row when `cpus` lists any; true when it is pinned or nothing was asked.
fn pin_thread(cpus: &[usize], index: usize) -> bool {
    affinity::cpu_for(cpus, index).map_or(true, affinity::pin)
}

/// Thread 0: runs the rounds, times them, cuts a round that overstays its deadline, and decides
/// the next one.
fn lead<B: Body>(
    mut body: B,
    rounds: &Rounds,
    mut sampler: Sampler,
) -> (Sampler, Option<phasers::Error>) {
    let row_start = Instant::now();
    let mut episode = 0u64;
    let mut step = || -> Result<bool, phasers::Error> {
        body.meet()?;
        let planned = rounds.next.load(Ordering::Acquire);
        if planned == DONE {
            return Ok(false);
        }
        let first = episode;
        let end = first + planned;
        let mut clock = RoundClock::start(planned, sampler.round_deadline(row_start.elapsed()));
        let mut cut = false;
        while episode < end && !(B::SYNCHRONIZED && is_cut(&rounds.stop_at, first, episode)) {
            body.iteration()?;
            episode += 1;
            if B::SYNCHRONIZED && !cut && clock.expired() {
                // Every thread is at most one episode away from here, so one more episode gives
                // them all time to see the cut before they could pass it (see `is_cut`).
                rounds.stop_at.store(episode + 1, Ordering::Relaxed);
                cut = true;
            }
        }
        if B::MEETS_AFTER_ROUND {
            body.meet()?;
        }
        let elapsed = clock.elapsed();
        let decided = sampler.after_round(planned, episode - first, elapsed, row_start.elapsed());
        // Published before the next meeting, read by the others after it.
        rounds
            .next
            .store(decided.unwrap_or(DONE), Ordering::Release);
        rounds.done.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    };
    let error = loop {
        match step() {
            Ok(true) => {}
            Ok(false) => break None,
            Err(error) => break Some(error),
        }
    };
    (sampler, error)
}

/// Every other thread: runs the rounds thread 0 announces, as far as thread 0 lets them. Returning
/// on an error drops the body, which for the library's barriers (the control barrier included)
/// breaks them, so the other threads return too.
fn follow<B: Body>(mut body: B, rounds: &Rounds) -> Result<(), phasers::Error> {
    let mut episode = 0u64;
    loop {
        body.meet()?;
        let planned = rounds.next.load(Ordering::Acquire);
        if planned == DONE {
            return Ok(());
        }
        let first = episode;
        let end = first + planned;
        while episode < end && !(B::SYNCHRONIZED && is_cut(&rounds.stop_at, first, episode)) {
            body.iteration()?;
            episode += 1;
        }
        if B::MEETS_AFTER_ROUND {
            body.meet()?;
        }
    }
}

/// Whether the round that began at episode `first` was cut at or before `episode`.
///
/// Thread 0 stores the cut, one past its own count, before arriving at its next episode; another
/// thread is released from that episode only after thread 0 arrived, so it reads the cut before it
/// could start the episode past it. The barrier orders the store before that read, so a relaxed
/// load suffices, and the hot loop pays one cached load per episode.
#[inline]
fn is_cut(stop_at: &AtomicU64, first: u64, episode: u64) -> bool {
    let stop = stop_at.load(Ordering::Relaxed);
    stop > first && stop <= episode
}

/// The errors of one row's threads, kept so the root cause can be reported rather than its echo.
#[derive(Default)]
struct Failures {
    panics: Vec<String>,
    errors: Vec<String>,
    broken: Vec<String>,
}

impl Failures {
    fn add_error(&mut self, rank: usize, error: Option<phasers::Error>) {
        match error {
            None => {}
            // Usually the echo of another thread's failure, so reported last.
            Some(error @ phasers::Error::Broken { .. }) => {
                self.broken.push(format!("thread {rank}: {error}"));
            }
            Some(error) => self.errors.push(format!("thread {rank}: {error}")),
        }
    }

    fn add_panic(&mut self, rank: usize, panic: &(dyn Any + Send)) {
        self.panics
            .push(format!("thread {rank} panicked: {}", panic_message(panic)));
    }

    /// The most telling failure, and how many others there were.
    fn first(self) -> Option<String> {
        let count = self.panics.len() + self.errors.len() + self.broken.len();
        let first = self
            .panics
            .into_iter()
            .chain(self.errors)
            .chain(self.broken)
            .next()?;
        Some(match count {
            1 => first,
            _ => format!("{first} (and {} more thread(s) failed)", count - 1),
        })
    }
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

    fn plan_of(schedule: Schedule) -> RowPlan {
        RowPlan {
            schedule,
            ..quick(Mode::BackToBack)
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

    /// A barrier that takes a while per episode, whatever it was calibrated at.
    struct Slow<H>(H);

    impl<H: WaitHandle> WaitHandle for Slow<H> {
        fn wait(&mut self) -> Result<(), phasers::Error> {
            std::thread::sleep(Duration::from_micros(100));
            self.0.wait()
        }
    }

    #[test]
    fn an_overlong_round_is_cut_and_every_thread_agrees_where() {
        let barrier = ReferenceBarrier::new(3);
        let handles: Vec<_> = barrier.handles().into_iter().map(Slow).collect();
        let schedule = Schedule {
            // Far more than fits in the budget: only a cut can end the first sample.
            episodes: Some(1_000_000),
            samples: 3,
            target_sample: Duration::from_millis(1),
            row_budget: Duration::from_millis(50),
        };
        let watch = Watch::new("slow", 3, Duration::from_secs(60));
        let bodies = handles.into_iter().map(BackToBack).collect();
        let measured = measure(bodies, &plan_of(schedule), &watch);
        assert_eq!(measured.error, None);
        let samples = measured.sampler.samples();
        assert_eq!(samples.len(), 1);
        assert!(samples[0].episodes < 1_000_000);
        assert_eq!(measured.sampler.cut(), 1);
        assert!(measured.sampler.capped());
    }

    /// A barrier whose third wait fails, as a broken barrier's would.
    struct Failing(u32);

    impl WaitHandle for Failing {
        fn wait(&mut self) -> Result<(), phasers::Error> {
            self.0 += 1;
            if self.0 == 3 {
                Err(phasers::Error::Broken { by: 7, episode: 2 })
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn a_failing_wait_becomes_a_row_error() {
        let watch = Watch::new("failing", 1, Duration::from_secs(60));
        let measured = measure(
            vec![BackToBack(Failing(0))],
            &quick(Mode::BackToBack),
            &watch,
        );
        let error = measured.error.unwrap();
        assert!(
            error.contains("thread 0") && error.contains("broken"),
            "{error}"
        );
        assert!(measured.sampler.samples().is_empty());
    }
}
