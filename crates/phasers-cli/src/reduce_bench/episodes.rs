//! The episodes of one row on Rust threads: every participant runs iterations of a barrier (not
//! timed), its stall, an arrival stamp, the call, a return stamp.
//!
//! Stamps are `Instant`s (on Linux `CLOCK_MONOTONIC`, one clock for every thread) as nanoseconds
//! since one origin, kept in each thread's own vectors: nothing shared is written in the timed
//! part. Iteration 0 is a warm-up (page faults, cold caches, lazy state) whose result is checked.
//! Rank 0 decides when the row ends ([`StopRule`]) and publishes the iteration no one starts,
//! which everyone compares with the iteration about to start after each barrier, so all run the
//! same iterations (a bare "stop" flag would let a participant slow to leave barrier k skip an
//! iteration rank 0 runs). The barrier is one of ours, so a participant that fails drops its
//! handle, the barrier breaks, and the others return instead of waiting for ever.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use phasers_cli::harness::threaded_row::control_participants;
use phasers_cli::harness::watchdog::{panic_message, watch_until, Watch};

use super::spread::{StallPolicy, Stalls};

/// Why a participant stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Its own failure: a wrong result, an error from the contender.
    Cause(String),
    /// The echo of another participant's failure (a broken barrier or group).
    Echo(String),
}

impl Failure {
    /// A failure from the library: `Broken` is the echo of someone else's, anything else a cause.
    pub fn from_library(what: &str, error: phasers::Error) -> Self {
        match error {
            phasers::Error::Broken { .. } => Failure::Echo(format!("{what}: {error}")),
            error => Failure::Cause(format!("{what}: {error}")),
        }
    }
}

/// What one participant does in a row.
pub trait Participant: Send {
    /// Allocates and fills what it needs, on its own thread (so the memory is first touched, and
    /// placed, where it is used); before the first iteration, not timed.
    fn prepare(&mut self) -> Result<(), Failure>;

    /// The timed call. Returns the name of the variant that ran (what `auto` chose), when the
    /// contender says.
    fn call(&mut self) -> Result<Option<&'static str>, Failure>;

    /// After the warm-up iteration, not timed: checks what the call produced.
    fn check(&mut self) -> Result<(), Failure>;
}

/// When rank 0 ends a row. Counts are of measured iterations, the warm-up not included; time is
/// counted from the end of the warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StopRule {
    /// Iterations to run at least, unless the budget runs out first.
    pub min_iterations: usize,
    /// Time to run at least, once `min_iterations` are done.
    pub min_time: Duration,
    /// Iterations never to exceed.
    pub max_iterations: usize,
    /// Time after which the row stops even short of `min_iterations` (with at least one).
    pub budget: Duration,
}

impl StopRule {
    /// Whether `measured` iterations in `elapsed` are enough.
    pub fn is_done(&self, measured: usize, elapsed: Duration) -> bool {
        measured >= self.max_iterations
            || (measured >= self.min_iterations && elapsed >= self.min_time)
            || (measured >= 1 && elapsed >= self.budget)
    }
}

/// The stamps of a row: `iterations` rows of `threads` participants, in nanoseconds on one clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// Participants.
    pub threads: usize,
    /// Iterations, the warm-up included.
    pub iterations: usize,
    /// When participant `t` called in iteration `i`, at `i * threads + t`.
    pub arrive_ns: Vec<u64>,
    /// When it returned, at the same place.
    pub return_ns: Vec<u64>,
    /// The variant rank 0 was told ran, per iteration where the contender says.
    pub chose: Vec<&'static str>,
}

/// How a row runs.
#[derive(Clone, Copy)]
pub struct RowSetup<'a> {
    /// Each participant's stall per iteration; `None` for no stall (the bandwidth floor).
    pub stalls: Option<&'a Stalls>,
    /// How the stalls wait.
    pub policy: StallPolicy,
    /// When the row ends.
    pub stop: StopRule,
    /// Stops the process if the row hangs.
    pub watch: &'a Watch,
}

/// What rank 0's thread and the others share besides the barrier.
struct Control {
    /// The iteration no one starts: written by rank 0 during the iteration before it, read by
    /// everyone after each barrier; `u64::MAX` until rank 0 decides.
    stop_at: AtomicU64,
    /// Iterations rank 0 completed, for the watchdog.
    progress: AtomicU64,
}

/// Runs `participants` (rank = position) on a thread each until rank 0's [`StopRule`] says
/// enough, and returns their stamps, or the most telling failure.
pub fn run<P: Participant>(participants: Vec<P>, setup: RowSetup<'_>) -> Result<Timeline, String> {
    let threads = participants.len();
    if threads == 0 {
        return Err("a row needs at least one participant".to_owned());
    }
    let meetings = control_participants(threads)?;
    let control = Control {
        stop_at: AtomicU64::new(u64::MAX),
        progress: AtomicU64::new(0),
    };
    let origin = Instant::now();
    let watcher = std::thread::current();
    let outcomes = std::thread::scope(|scope| {
        let handles: Vec<_> = participants
            .into_iter()
            .zip(meetings)
            .enumerate()
            .map(|(rank, (participant, meeting))| {
                let (control, watcher) = (&control, watcher.clone());
                scope.spawn(move || {
                    let out = iterate(rank, participant, meeting, control, origin, setup);
                    // The row may be over: the watcher looks now rather than at its next look.
                    watcher.unpark();
                    out
                })
            })
            .collect();
        let finished = || handles.iter().all(|handle| handle.is_finished());
        watch_until(finished, &control.progress, setup.watch);
        handles
            .into_iter()
            .enumerate()
            .map(|(rank, handle)| {
                handle.join().unwrap_or_else(|panic| {
                    Err(Failure::Cause(format!(
                        "participant {rank} panicked: {}",
                        panic_message(&*panic)
                    )))
                })
            })
            .collect::<Vec<_>>()
    });
    let (mut outs, mut causes, mut echoes) = (Vec::new(), Vec::new(), Vec::new());
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Ok(out) => outs.push(out),
            Err(Failure::Cause(message)) => causes.push(format!("participant {rank}: {message}")),
            Err(Failure::Echo(message)) => echoes.push(format!("participant {rank}: {message}")),
        }
    }
    let failed = causes.len() + echoes.len();
    if let Some(first) = causes.into_iter().chain(echoes).next() {
        return Err(match failed {
            1 => first,
            _ => format!("{first} (and {} more failed)", failed - 1),
        });
    }
    let iterations = outs[0].arrive.len();
    if outs.iter().any(|out| out.arrive.len() != iterations) {
        let counts: Vec<usize> = outs.iter().map(|out| out.arrive.len()).collect();
        return Err(format!(
            "the participants ran different numbers of iterations: {counts:?}"
        ));
    }
    // Iteration by iteration, as the metrics (and the C baseline) lay them out.
    let by_iteration = |stamps: fn(&ThreadOut) -> &[u64]| -> Vec<u64> {
        let outs = &outs;
        (0..iterations)
            .flat_map(|i| outs.iter().map(move |out| stamps(out)[i]))
            .collect()
    };
    Ok(Timeline {
        threads,
        iterations,
        arrive_ns: by_iteration(|out| &out.arrive),
        return_ns: by_iteration(|out| &out.ret),
        chose: outs.swap_remove(0).chose,
    })
}

/// What one participant's thread hands back.
struct ThreadOut {
    arrive: Vec<u64>,
    ret: Vec<u64>,
    chose: Vec<&'static str>,
}

/// One participant's iterations.
fn iterate<P: Participant>(
    rank: usize,
    mut participant: P,
    mut meeting: phasers::Participant,
    control: &Control,
    origin: Instant,
    setup: RowSetup<'_>,
) -> Result<ThreadOut, Failure> {
    participant.prepare()?;
    let capacity = setup.stop.max_iterations.saturating_add(1);
    let mut out = ThreadOut {
        arrive: Vec::with_capacity(capacity),
        ret: Vec::with_capacity(capacity),
        chose: Vec::new(),
    };
    let mut measure_start = None;
    for iteration in 0u64.. {
        meeting
            .wait()
            .map_err(|error| Failure::from_library("the barrier between iterations", error))?;
        if iteration >= control.stop_at.load(Ordering::Relaxed) {
            break;
        }
        if let Some(stalls) = setup.stalls {
            setup.policy.stall(stalls.get(iteration as usize, rank));
        }
        let arrive = nanos_since(origin);
        let chose = participant.call()?;
        let ret = nanos_since(origin);
        out.arrive.push(arrive);
        out.ret.push(ret);
        if iteration == 0 {
            participant.check()?;
        }
        if rank == 0 {
            out.chose.extend(chose);
            control.progress.fetch_add(1, Ordering::Relaxed);
            // The warm-up ends the moment its check is done.
            let start = *measure_start.get_or_insert_with(Instant::now);
            if iteration > 0 && setup.stop.is_done(iteration as usize, start.elapsed()) {
                // Read after the next barrier, which orders it; read earlier (a participant still
                // leaving this iteration's barrier), it names an iteration not yet reached.
                control.stop_at.store(iteration + 1, Ordering::Relaxed);
            }
        }
    }
    Ok(out)
}

/// Nanoseconds from `origin` to now.
#[inline]
fn nanos_since(origin: Instant) -> u64 {
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::spread::Preset;

    /// Sleeps a little per call. A bad one fails its third call (`Cause`), or with `wrong` its
    /// first check.
    struct Sleeper(usize, Option<bool>);

    impl Participant for Sleeper {
        fn prepare(&mut self) -> Result<(), Failure> {
            Ok(())
        }

        fn call(&mut self) -> Result<Option<&'static str>, Failure> {
            self.0 += 1;
            if self.0 == 3 && self.1 == Some(false) {
                return Err(Failure::Cause("boom".into()));
            }
            std::thread::sleep(Duration::from_micros(50));
            Ok(Some("linear"))
        }

        fn check(&mut self) -> Result<(), Failure> {
            match self.1 {
                Some(true) => Err(Failure::Cause("wrong result".into())),
                _ => Ok(()),
            }
        }
    }

    /// `threads` sleepers, rank `bad` failing as [`Sleeper`] says, at most `max` iterations.
    fn sleepers(
        threads: usize,
        stalls: Option<&Stalls>,
        max: usize,
        bad: Option<(usize, bool)>,
    ) -> Result<Timeline, String> {
        let sleeper = |rank| Sleeper(0, bad.filter(|&(at, _)| at == rank).map(|(_, wrong)| wrong));
        let watch = Watch::new("test", threads, Duration::from_secs(60));
        let (min_time, budget) = (Duration::from_millis(1), Duration::from_secs(10));
        let stop = StopRule {
            min_iterations: 5,
            min_time,
            max_iterations: max,
            budget,
        };
        let policy = StallPolicy::Yield;
        run(
            (0..threads).map(sleeper).collect(),
            RowSetup {
                stalls,
                policy,
                stop,
                watch: &watch,
            },
        )
    }

    #[test]
    fn the_stop_rule_needs_iterations_and_time_within_the_budget() {
        let (min_time, budget) = (Duration::from_millis(50), Duration::from_secs(1));
        let stop = StopRule {
            min_iterations: 20,
            min_time,
            max_iterations: 100,
            budget,
        };
        let ms = Duration::from_millis;
        assert!(!stop.is_done(19, ms(60)) && !stop.is_done(20, ms(40)));
        assert!(stop.is_done(20, ms(50)) && stop.is_done(100, ms(1)));
        assert!(stop.is_done(3, ms(1000)) && !stop.is_done(0, ms(5000)));
    }

    #[test]
    fn every_participant_runs_the_same_iterations_between_barriers() {
        let stalls = Stalls::generate(&Preset::Low.spread(), 3, 31, 1);
        let timeline = sleepers(3, Some(&stalls), 30, None).unwrap();
        assert!((6..=31).contains(&timeline.iterations), "{timeline:?}");
        assert_eq!(timeline.arrive_ns.len(), 3 * timeline.iterations);
        assert_eq!(timeline.chose.len(), timeline.iterations);
        for iteration in 1..timeline.iterations {
            let ended = &timeline.return_ns[(iteration - 1) * 3..iteration * 3];
            let started = &timeline.arrive_ns[iteration * 3..iteration * 3 + 3];
            assert!(started.iter().min() >= ended.iter().max());
        }
        // The maximum caps the row: the warm-up and 4 measured.
        assert_eq!(sleepers(2, None, 4, None).unwrap().iterations, 5);
    }

    #[test]
    fn a_failure_names_its_cause_not_its_echoes() {
        let error = sleepers(3, None, 50, Some((1, false))).unwrap_err();
        assert!(
            error.starts_with("participant 1: boom") && error.contains("2 more"),
            "{error}"
        );
        let error = sleepers(2, None, 50, Some((0, true))).unwrap_err();
        assert!(error.contains("participant 0: wrong result"), "{error}");
    }
}
