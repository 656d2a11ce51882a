//! The round engine: T threads run rounds of timed iterations of a [`Body`], timed on thread 0.
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

use super::affinity;
use super::body::Body;
use super::schedule::{RoundClock, Sampler, Schedule};
use super::watchdog::{panic_message, watch_until, Watch};

/// The value of the shared round length that tells every thread the row is over.
const DONE: u64 = 0;

/// The control barrier EPCC rows meet on between rounds. One of ours, so a thread that fails drops
/// its participant and breaks it, and the others return instead of waiting for ever.
pub fn control_participants(threads: usize) -> Result<Vec<Participant>, String> {
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
    /// A row that could not start: no samples, and `error`.
    pub fn failed(schedule: Schedule, error: String) -> Self {
        Measured {
            sampler: Sampler::new(schedule),
            error: Some(error),
            elapsed: Duration::ZERO,
            pin_note: None,
        }
    }
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

/// Runs the rounds of `schedule` on one thread per body, each pinned to a CPU (round robin) when
/// `pin` says so; the first body's thread keeps time. The process exits with an error naming the
/// row if no round completes for the watch's time.
pub fn measure<B: Body>(bodies: Vec<B>, schedule: Schedule, pin: bool, watch: &Watch) -> Measured {
    let start = Instant::now();
    let sampler = Sampler::new(schedule);
    let rounds = Rounds {
        next: AtomicU64::new(sampler.first_round()),
        stop_at: AtomicU64::new(0),
        done: AtomicU64::new(0),
    };
    let cpus = if pin {
        affinity::allowed_cpus()
    } else {
        Vec::new()
    };
    let mut pin_note = (pin && cpus.is_empty())
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
    use crate::harness::body::{BackToBack, WaitHandle};

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
        let barrier = Barrier::with_algorithm(3, Algorithm::SenseReversing).unwrap();
        let handles: Vec<_> = barrier.participants().into_iter().map(Slow).collect();
        let schedule = Schedule {
            // Far more than fits in the budget: only a cut can end the first sample.
            episodes: Some(1_000_000),
            samples: 3,
            target_sample: Duration::from_millis(1),
            row_budget: Duration::from_millis(50),
        };
        let watch = Watch::new("slow", 3, Duration::from_secs(60));
        let bodies = handles.into_iter().map(BackToBack).collect();
        let measured = measure(bodies, schedule, false, &watch);
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
        let schedule = Schedule {
            episodes: Some(50),
            samples: 3,
            target_sample: Duration::from_millis(1),
            row_budget: Duration::from_secs(5),
        };
        let measured = measure(vec![BackToBack(Failing(0))], schedule, false, &watch);
        let error = measured.error.unwrap();
        assert!(
            error.contains("thread 0") && error.contains("broken"),
            "{error}"
        );
        assert!(measured.sampler.samples().is_empty());
    }
}
