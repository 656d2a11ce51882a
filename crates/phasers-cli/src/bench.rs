//! The sampling loop: back-to-back barrier episodes on T threads, timed on thread 0.
//!
//! Every thread runs the same sequence of rounds. Before each round all threads pass one extra
//! "decision" episode; thread 0 publishes the next round's length before arriving there and
//! everyone reads it after leaving, so all threads always agree on how many episodes to run (a
//! thread running one episode more than the others would wait for ever). Thread 0 reads the clock
//! right after leaving the decision episode and right after leaving the round's last episode, so a
//! sample spans exactly the round's episodes.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use phasers::Barrier;

use crate::contender::{Contender, StdHandle, WaitHandle};
use crate::reference::ReferenceBarrier;
use crate::results::Row;
use crate::schedule::{RoundClock, Sampler, Schedule};
use crate::stats;

/// The value of the shared round length that tells every thread the row is over.
const DONE: u64 = 0;

/// How often the spawning thread checks on a row; rare enough to cost the row nothing.
const WATCH_INTERVAL: Duration = Duration::from_millis(20);

/// Measures `contender` with `threads` threads on a fresh barrier.
///
/// The process exits with an error if no round completes for `hang_after`: a barrier that hangs
/// must not hang the benchmark silently.
pub fn run(contender: Contender, threads: usize, schedule: Schedule, hang_after: Duration) -> Row {
    let name = contender.name();
    let watch = Watch {
        name,
        threads,
        hang_after,
    };
    let (measured, resolved, wait_policy) = match contender {
        Contender::Reference => {
            let barrier = ReferenceBarrier::new(threads);
            (measure(barrier.handles(), schedule, &watch), None, None)
        }
        Contender::Std => {
            let barrier = std::sync::Barrier::new(threads);
            let handles = vec![StdHandle(&barrier); threads];
            (measure(handles, schedule, &watch), None, None)
        }
        Contender::Phasers(algorithm) => match Barrier::new(threads, algorithm) {
            Ok(barrier) => (
                measure(barrier.participants(), schedule, &watch),
                Some(barrier.algorithm().name().to_owned()),
                Some(barrier.wait_policy().name().to_owned()),
            ),
            Err(error) => {
                return Row::failed(name, schedule.samples, format!("cannot build: {error}"))
            }
        },
    };
    into_row(name, resolved, wait_policy, schedule, measured)
}

/// What one row's threads produced.
struct Measured {
    sampler: Sampler,
    error: Option<String>,
    elapsed: Duration,
}

fn into_row(
    name: &str,
    resolved: Option<String>,
    wait_policy: Option<String>,
    schedule: Schedule,
    measured: Measured,
) -> Row {
    let sampler = &measured.sampler;
    let samples_ns = sampler.per_episode_ns();
    let taken = samples_ns.len();
    let mut notes = Vec::new();
    if taken < schedule.samples {
        let why = if sampler.capped() {
            format!(
                "row stopped at its {} s budget",
                schedule.row_budget.as_secs_f64()
            )
        } else {
            "stopped by the error".to_owned()
        };
        notes.push(format!("{taken} of {} samples: {why}", schedule.samples));
    }
    if sampler.cut() > 0 {
        let at = match schedule.episodes {
            Some(_) => "at the row budget",
            None => "at 4x the target length (preempted, or the barrier slowed)",
        };
        notes.push(format!("{} sample(s) cut {at}", sampler.cut()));
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    Row {
        barrier: name.to_owned(),
        resolved,
        wait_policy,
        episodes_per_sample: sampler.episodes(),
        sample_episodes: sampler
            .samples()
            .iter()
            .map(|sample| sample.episodes)
            .collect(),
        samples_wanted: schedule.samples,
        min_ns: stats::min(&samples_ns),
        median_ns: stats::median(&samples_ns),
        samples_ns,
        row_s: measured.elapsed.as_secs_f64(),
        note,
        error: measured.error,
    }
}

/// What the spawning thread needs to tell a hung row from a slow one.
struct Watch {
    name: &'static str,
    threads: usize,
    hang_after: Duration,
}

/// What every thread of a row shares besides the barrier.
struct Rounds {
    /// The next round's planned episodes, or [`DONE`]: written by thread 0 before a decision
    /// episode, read by everyone after it.
    next: AtomicU64,
    /// Where thread 0 cut the current round: an episode index counted over the row's rounds, so
    /// it only ever grows and a past round's cut never applies to a later round.
    stop_at: AtomicU64,
    /// Rounds completed, for the watchdog.
    done: AtomicU64,
}

/// Runs the rounds on one thread per handle; the first handle's thread keeps time.
fn measure<H: WaitHandle>(handles: Vec<H>, schedule: Schedule, watch: &Watch) -> Measured {
    let start = Instant::now();
    let sampler = Sampler::new(schedule);
    let rounds = Rounds {
        next: AtomicU64::new(sampler.first_round()),
        stop_at: AtomicU64::new(0),
        done: AtomicU64::new(0),
    };
    let mut handles = handles.into_iter();
    let Some(timer) = handles.next() else {
        return Measured {
            sampler,
            error: Some("no threads".to_owned()),
            elapsed: start.elapsed(),
        };
    };
    std::thread::scope(|s| {
        let rounds = &rounds;
        let lead = s.spawn(move || lead(timer, rounds, sampler));
        let follow: Vec<ScopedJoinHandle<'_, Option<phasers::Error>>> = handles
            .map(|handle| s.spawn(move || follow(handle, rounds).err()))
            .collect();
        watch_until_done(&lead, &follow, &rounds.done, watch);

        let mut failures = Failures::default();
        let sampler = match lead.join() {
            Ok((sampler, error)) => {
                failures.add_error(0, error);
                Some(sampler)
            }
            Err(panic) => {
                failures.add_panic(0, &*panic);
                None
            }
        };
        for (rank, thread) in (1..).zip(follow) {
            match thread.join() {
                Ok(error) => failures.add_error(rank, error),
                Err(panic) => failures.add_panic(rank, &*panic),
            }
        }
        Measured {
            sampler: sampler.unwrap_or_else(|| Sampler::new(schedule)),
            error: failures.first(),
            elapsed: start.elapsed(),
        }
    })
}

/// Thread 0: runs the rounds, times them, cuts a round that overstays its deadline, and decides
/// the next one.
fn lead<H: WaitHandle>(
    mut handle: H,
    rounds: &Rounds,
    mut sampler: Sampler,
) -> (Sampler, Option<phasers::Error>) {
    let row_start = Instant::now();
    let mut episode = 0u64;
    let mut step = || -> Result<bool, phasers::Error> {
        handle.wait()?;
        let planned = rounds.next.load(Ordering::Acquire);
        if planned == DONE {
            return Ok(false);
        }
        let first = episode;
        let end = first + planned;
        let mut clock = RoundClock::start(planned, sampler.round_deadline(row_start.elapsed()));
        let mut cut = false;
        while episode < end && !is_cut(&rounds.stop_at, first, episode) {
            handle.wait()?;
            episode += 1;
            if !cut && clock.expired() {
                // Every thread is at most one episode away from here, so one more episode gives
                // them all time to see the cut before they could pass it (see `is_cut`).
                rounds.stop_at.store(episode + 1, Ordering::Relaxed);
                cut = true;
            }
        }
        let elapsed = clock.elapsed();
        let decided = sampler.after_round(planned, episode - first, elapsed, row_start.elapsed());
        // Published before the decision episode, read by the others after it.
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
/// on an error drops the handle, which for the library's barriers breaks the barrier, so the other
/// threads return too.
fn follow<H: WaitHandle>(mut handle: H, rounds: &Rounds) -> Result<(), phasers::Error> {
    let mut episode = 0u64;
    loop {
        handle.wait()?;
        let planned = rounds.next.load(Ordering::Acquire);
        if planned == DONE {
            return Ok(());
        }
        let first = episode;
        let end = first + planned;
        while episode < end && !is_cut(&rounds.stop_at, first, episode) {
            handle.wait()?;
            episode += 1;
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

/// Blocks until every thread of the row has finished; exits the process if the row stops making
/// progress, since threads stuck in a barrier cannot be cancelled.
fn watch_until_done<T, U>(
    lead: &ScopedJoinHandle<'_, T>,
    follow: &[ScopedJoinHandle<'_, U>],
    rounds_done: &AtomicU64,
    watch: &Watch,
) {
    let mut last_rounds = rounds_done.load(Ordering::Relaxed);
    let mut last_progress = Instant::now();
    while !(lead.is_finished() && follow.iter().all(ScopedJoinHandle::is_finished)) {
        std::thread::sleep(WATCH_INTERVAL);
        let rounds = rounds_done.load(Ordering::Relaxed);
        if rounds != last_rounds {
            (last_rounds, last_progress) = (rounds, Instant::now());
        } else if last_progress.elapsed() >= watch.hang_after {
            eprintln!(
                "error: {} with {} threads completed no round for {} s; it looks hung, so the \
                 run stops here (raise --hang-seconds if the rounds are legitimately this slow)",
                watch.name,
                watch.threads,
                watch.hang_after.as_secs_f64()
            );
            std::process::exit(3);
        }
    }
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
        let message = panic
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        self.panics
            .push(format!("thread {rank} panicked: {message}"));
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

    fn quick() -> Schedule {
        Schedule {
            episodes: Some(50),
            samples: 3,
            target_sample: Duration::from_millis(1),
            row_budget: Duration::from_secs(5),
        }
    }

    #[test]
    fn every_contender_completes_a_small_row() {
        let contenders = Contender::BASELINES.into_iter().chain(
            std::iter::once(Algorithm::Auto)
                .chain(Algorithm::CONCRETE)
                .map(Contender::Phasers),
        );
        for contender in contenders {
            for threads in [1, 3] {
                let row = run(contender, threads, quick(), Duration::from_secs(60));
                assert_eq!(row.error, None, "{} x{threads}", contender.name());
                assert_eq!(row.samples_ns.len(), 3, "{} x{threads}", contender.name());
                assert_eq!(row.episodes_per_sample, 50);
            }
        }
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
        let watch = Watch {
            name: "slow",
            threads: 3,
            hang_after: Duration::from_secs(60),
        };
        let measured = measure(handles, schedule, &watch);
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
        let watch = Watch {
            name: "failing",
            threads: 1,
            hang_after: Duration::from_secs(60),
        };
        let measured = measure(vec![Failing(0)], quick(), &watch);
        let error = measured.error.unwrap();
        assert!(
            error.contains("thread 0") && error.contains("broken"),
            "{error}"
        );
        assert!(measured.sampler.samples().is_empty());
    }
}
