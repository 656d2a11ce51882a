//! The round engine: T threads run rounds of iterations of a [`Work`], timed on thread 0
//! ([`threads`]); or one call per round, for work that runs its own threads ([`calls`]).
//!
//! Before each round all threads meet, on the work itself when it is [`Work::SYNCHRONIZED`] and
//! paced back to back (seed 002), else on a control barrier. Thread 0 publishes the next round's
//! length before arriving and everyone reads it after leaving, so all agree on how many
//! iterations to run (a thread one barrier episode ahead would wait for ever). Thread 0 reads the
//! clock on leaving the meeting and after its last iteration (or the closing meeting), so a sample
//! spans exactly the round. [`Pacing`] is the row's, not the work's: EPCC's meetings around each
//! round make what a test and its reference loop share cancel when the loop is subtracted, as
//! fork and join do around EPCC's repetitions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use phasers::{Algorithm, Barrier, Participant};

use super::affinity;
use super::delay::delay;
use super::schedule::{RoundClock, Sampler, Schedule, WARM_UP_EPISODES};
use super::stalls::{StallPolicy, Stalls};
use super::watchdog::{panic_message, watch_until, Watch};
use super::work::{Failure, Work};

/// The value of the shared round length that tells every thread the row is over.
const DONE: u64 = 0;

/// How a row's iterations are paced.
#[derive(Debug, Clone, PartialEq)]
pub enum Pacing {
    /// Iterations back to back; the threads meet on the work when it is synchronized (so one
    /// barrier is all there is), else as [`Pacing::Looped`].
    BackToBack,
    /// A control barrier before and after each round (the closing one timed), rounds never cut:
    /// for operations that need not hold every thread back, like a broadcast's root.
    Looped,
    /// EPCC syncbench: [`delay`] before each iteration, a control barrier around each round.
    Epcc {
        /// Iterations of the delay loop.
        delay: u64,
    },
    /// Seed 003: rounds of one iteration; every thread meets on the control barrier (untimed),
    /// stalls as the table says and stamps around the call, giving a [`Timeline`].
    Stamped {
        /// Each thread's stall per iteration; `None` for no stall.
        stalls: Option<Arc<Stalls>>,
    },
}

/// How one row is measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Rounds and samples.
    pub schedule: Schedule,
    /// Iterations of the first, untimed round.
    pub warm_up: u64,
    /// Also stop once this many samples were taken and this long has passed since the first.
    pub enough: Option<(usize, Duration)>,
    /// What happens around each iteration and round.
    pub pacing: Pacing,
    /// A row that completes no round for this long is taken to be hung.
    pub hang_after: Duration,
    /// Whether to pin each thread to a CPU, round robin.
    pub pin: bool,
}

impl Plan {
    /// A plan of `schedule` with the usual warm-up, nothing else to stop on, unpinned.
    pub fn new(schedule: Schedule, pacing: Pacing, hang_after: Duration) -> Self {
        Plan {
            schedule,
            warm_up: WARM_UP_EPISODES,
            enough: None,
            pacing,
            hang_after,
            pin: false,
        }
    }

    fn sampler(&self) -> Sampler {
        Sampler::new(self.schedule, self.warm_up, self.enough)
    }
}

/// The stamps of a [`Pacing::Stamped`] row in ns since one origin on one clock (on Linux
/// `CLOCK_MONOTONIC`); a child process sends one back as JSON, without `chose`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    /// Threads.
    pub threads: usize,
    /// Iterations, the warm-up included.
    pub iterations: usize,
    /// When thread `t` called in iteration `i`, at `i * threads + t`.
    pub arrive_ns: Vec<u64>,
    /// When it returned, at the same place.
    pub return_ns: Vec<u64>,
    /// The variant thread 0 was told ran, per iteration where the work says.
    #[serde(skip)]
    pub chose: Vec<&'static str>,
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
    /// The stamps of a [`Pacing::Stamped`] row that did not fail.
    pub timeline: Option<Timeline>,
}

impl Measured {
    /// A row that could not start: no samples, and `error`.
    pub fn failed(schedule: Schedule, error: String) -> Self {
        Measured {
            sampler: Sampler::new(schedule, WARM_UP_EPISODES, None),
            error: Some(error),
            elapsed: Duration::ZERO,
            pin_note: None,
            timeline: None,
        }
    }
}

/// A row of one call per round, for work that runs its own threads (OpenMP's parallel regions):
/// `call(planned, deadline)` returns the iterations it ran and their time.
pub fn calls(
    plan: &Plan,
    mut call: impl FnMut(u64, Duration) -> Result<(u64, Duration), String>,
) -> Measured {
    let start = Instant::now();
    let mut sampler = plan.sampler();
    let mut next = Some(sampler.first_round());
    let mut error = None;
    while let Some(planned) = next {
        let deadline = sampler.round_deadline(start.elapsed());
        match call(planned, deadline) {
            Ok((ran, elapsed)) => {
                next = sampler.after_round(planned, ran, elapsed, start.elapsed());
            }
            Err(message) => (error, next) = (Some(message), None),
        }
    }
    Measured {
        sampler,
        error,
        elapsed: start.elapsed(),
        pin_note: None,
        timeline: None,
    }
}

/// What every thread of a row shares besides the work.
struct Rounds {
    /// The next round's planned iterations, or [`DONE`]: written by thread 0 before a meeting,
    /// read by everyone after it.
    next: AtomicU64,
    /// Where thread 0 cut the current round: an iteration index counted over the row's rounds,
    /// so it only ever grows and a past round's cut never applies to a later round. In a stamped
    /// row, the iteration no one starts; 0 until thread 0 decides.
    stop_at: AtomicU64,
    /// Rounds completed, for the watchdog.
    done: AtomicU64,
    /// Where stamps count from.
    origin: Instant,
}

/// One thread's work and its place on the control barrier, if the row meets on one.
struct Seat<W> {
    work: W,
    control: Option<Participant>,
}

impl<W: Work> Seat<W> {
    /// Waits until every thread of the row is here. On the work itself, the meeting is one more
    /// call, with the index of the iteration after it.
    fn meet(&mut self, index: u64) -> Result<(), Failure> {
        match &mut self.control {
            Some(control) => control.wait().map(drop).map_err(Failure::from),
            None => self.work.iteration(index).map(drop),
        }
    }
}

/// What a thread hands back: why it stopped early, thread 0's sampler, a stamped row's stamps.
#[derive(Default)]
struct Out {
    failure: Option<Failure>,
    sampler: Option<Sampler>,
    arrive: Vec<u64>,
    ret: Vec<u64>,
    chose: Vec<&'static str>,
}

/// Runs the rounds of `plan` on one thread per work (pinned round robin if the plan says), timed by
/// the first; the process exits naming the row if no round completes for the watch's time.
pub fn threads<W: Work>(works: Vec<W>, plan: &Plan, watch: &Watch) -> Measured {
    let sync = W::SYNCHRONIZED;
    match &plan.pacing {
        Pacing::BackToBack if sync => spawn(works, plan, watch, false, rounds::<W, false, true>),
        Pacing::BackToBack | Pacing::Looped => {
            spawn(works, plan, watch, true, rounds::<W, false, false>)
        }
        Pacing::Epcc { .. } if sync => spawn(works, plan, watch, true, rounds::<W, true, true>),
        Pacing::Epcc { .. } => spawn(works, plan, watch, true, rounds::<W, true, false>),
        Pacing::Stamped { stalls } => {
            let policy = StallPolicy::for_threads(works.len());
            let stalls = stalls.as_deref();
            let stamped = |rank, seat, shared: &Rounds, plan: &Plan, sampler| {
                stamped(rank, seat, shared, plan, sampler, (stalls, policy))
            };
            spawn(works, plan, watch, true, stamped)
        }
    }
}

/// Starts a thread per work running `thread`, watches them, and gathers what they produced.
fn spawn<W: Work>(
    works: Vec<W>,
    plan: &Plan,
    watch: &Watch,
    control: bool,
    thread: impl Fn(usize, Seat<W>, &Rounds, &Plan, Option<Sampler>) -> Out + Sync,
) -> Measured {
    let start = Instant::now();
    let count = works.len();
    if count == 0 {
        return Measured::failed(plan.schedule, "no threads".to_owned());
    }
    // One of our barriers, so a thread that fails drops its participant and breaks it, and the
    // others return instead of waiting for ever.
    let controls: Vec<Option<Participant>> = match control {
        true => match Barrier::with_algorithm(count, Algorithm::SenseReversing) {
            Ok(barrier) => barrier.participants().into_iter().map(Some).collect(),
            Err(error) => {
                let error = format!("cannot build the control barrier: {error}");
                return Measured::failed(plan.schedule, error);
            }
        },
        false => (0..count).map(|_| None).collect(),
    };
    let sampler = plan.sampler();
    let shared = Rounds {
        next: AtomicU64::new(sampler.first_round()),
        stop_at: AtomicU64::new(0),
        done: AtomicU64::new(0),
        origin: Instant::now(),
    };
    let cpus = match plan.pin {
        true => affinity::allowed_cpus(),
        false => Vec::new(),
    };
    let mut pin_note = (plan.pin && cpus.is_empty())
        .then(|| "--pin: this platform does not list CPUs, so threads ran unpinned".to_owned());
    let watcher = std::thread::current();
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let (shared, cpus, thread) = (&shared, &cpus, &thread);
        let mut sampler = Some(sampler);
        let handles: Vec<_> = works
            .into_iter()
            .zip(controls)
            .enumerate()
            .map(|(rank, (work, control))| {
                let (sampler, watcher) = (sampler.take(), watcher.clone());
                s.spawn(move || {
                    let pinned = affinity::cpu_for(cpus, rank).map_or(true, affinity::pin);
                    let out = thread(rank, Seat { work, control }, shared, plan, sampler);
                    // The row may be over: the watcher looks now rather than at its next look.
                    watcher.unpark();
                    (out, pinned)
                })
            })
            .collect();
        let finished = || handles.iter().all(|handle| handle.is_finished());
        watch_until(finished, &shared.done, watch);
        handles.into_iter().map(|handle| handle.join()).collect()
    });
    // Ranked so the root cause is reported rather than its echoes: panics, then causes, then
    // echoes, each in thread order.
    let mut failures: Vec<(u8, String)> = Vec::new();
    let mut outs = Vec::with_capacity(count);
    let mut all_pinned = true;
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Ok((mut out, pinned)) => {
                all_pinned &= pinned;
                failures.extend(out.failure.take().map(|failure| match failure {
                    Failure::Cause(message) => (1, format!("thread {rank}: {message}")),
                    Failure::Echo(message) => (2, format!("thread {rank}: {message}")),
                }));
                outs.push(out);
            }
            Err(panic) => {
                let message = panic_message(&*panic);
                failures.push((0, format!("thread {rank} panicked: {message}")));
            }
        }
    }
    if !all_pinned && pin_note.is_none() {
        pin_note = Some("--pin: the OS refused to pin some threads".to_owned());
    }
    failures.sort_by_key(|(rank, _)| *rank);
    let mut error = failures.first().map(|(_, first)| match failures.len() {
        1 => first.clone(),
        count => format!("{first} (and {} more thread(s) failed)", count - 1),
    });
    let sampler = outs.iter_mut().find_map(|out| out.sampler.take());
    let timeline = match error {
        None => timeline(&mut outs)
            .map_err(|wrong| error = Some(wrong))
            .ok(),
        Some(_) => None,
    };
    Measured {
        sampler: sampler.unwrap_or_else(|| plan.sampler()),
        error,
        elapsed: start.elapsed(),
        pin_note,
        timeline: timeline.flatten(),
    }
}

/// Every thread's stamps, iteration by iteration as the C baseline lays them out; `None`: none.
fn timeline(outs: &mut [Out]) -> Result<Option<Timeline>, String> {
    let iterations = outs[0].arrive.len();
    if iterations == 0 {
        return Ok(None);
    }
    if outs.iter().any(|out| out.arrive.len() != iterations) {
        let counts: Vec<usize> = outs.iter().map(|out| out.arrive.len()).collect();
        return Err(format!(
            "the threads ran different numbers of iterations: {counts:?}"
        ));
    }
    let by_iteration = |stamps: fn(&Out) -> &[u64]| -> Vec<u64> {
        (0..iterations)
            .flat_map(|i| outs.iter().map(move |out| stamps(out)[i]))
            .collect()
    };
    Ok(Some(Timeline {
        threads: outs.len(),
        iterations,
        arrive_ns: by_iteration(|out| &out.arrive),
        return_ns: by_iteration(|out| &out.ret),
        chose: std::mem::take(&mut outs[0].chose),
    }))
}

/// One thread's rounds: thread 0 (the one with the sampler) times them, cuts a round that
/// overstays its deadline, and decides the next one; every other thread runs the rounds thread 0
/// announces, as far as thread 0 lets it. Returning on an error drops the seat, which for the
/// library's barriers (the control barrier included) breaks them, so the other threads return
/// too. `DELAY`: EPCC's delay before each iteration; `CUT`: every iteration synchronizes, so
/// thread 0 may cut a round.
fn rounds<W: Work, const DELAY: bool, const CUT: bool>(
    _: usize,
    mut seat: Seat<W>,
    shared: &Rounds,
    plan: &Plan,
    mut sampler: Option<Sampler>,
) -> Out {
    let delay_by = match plan.pacing {
        Pacing::Epcc { delay } => delay,
        _ => 0,
    };
    let failure = (seat.work.prepare())
        .and_then(|()| match &mut sampler {
            Some(sampler) => lead::<W, DELAY, CUT>(seat, shared, delay_by, sampler),
            None => follow::<W, DELAY, CUT>(seat, shared, delay_by),
        })
        .err();
    Out {
        failure,
        sampler,
        ..Out::default()
    }
}

/// Meets the others at `episode` and reads the round thread 0 published there; `None`: done.
fn next_round<W: Work>(
    seat: &mut Seat<W>,
    shared: &Rounds,
    episode: u64,
) -> Result<Option<u64>, Failure> {
    seat.meet(episode)?;
    let planned = shared.next.load(Ordering::Acquire);
    Ok((planned != DONE).then_some(planned))
}

/// Thread 0 (see [`rounds`]).
fn lead<W: Work, const DELAY: bool, const CUT: bool>(
    mut seat: Seat<W>,
    shared: &Rounds,
    delay_by: u64,
    sampler: &mut Sampler,
) -> Result<(), Failure> {
    let row_start = Instant::now();
    let mut episode = 0u64;
    let mut round = 0u64;
    loop {
        let Some(planned) = next_round(&mut seat, shared, episode)? else {
            return Ok(());
        };
        let first = episode;
        let end = first + planned;
        let mut clock = RoundClock::start(planned, sampler.round_deadline(row_start.elapsed()));
        let mut cut = false;
        while episode < end && !(CUT && is_cut(&shared.stop_at, first, episode)) {
            if DELAY {
                delay(delay_by);
            }
            seat.work.iteration(episode)?;
            episode += 1;
            if CUT && !cut && clock.expired() {
                // Every thread is at most one episode away from here, so one more episode gives
                // them all time to see the cut before they could pass it (see `is_cut`).
                shared.stop_at.store(episode + 1, Ordering::Relaxed);
                cut = true;
            }
        }
        if seat.control.is_some() {
            seat.meet(episode)?;
        }
        let elapsed = clock.elapsed();
        if round == 0 {
            seat.work.check()?;
        }
        round += 1;
        let decided = sampler.after_round(planned, episode - first, elapsed, row_start.elapsed());
        // Published before the next meeting, read by the others after it.
        shared
            .next
            .store(decided.unwrap_or(DONE), Ordering::Release);
        shared.done.fetch_add(1, Ordering::Relaxed);
    }
}

/// Every thread but thread 0 (see [`rounds`]).
fn follow<W: Work, const DELAY: bool, const CUT: bool>(
    mut seat: Seat<W>,
    shared: &Rounds,
    delay_by: u64,
) -> Result<(), Failure> {
    let mut episode = 0u64;
    let mut round = 0u64;
    loop {
        let Some(planned) = next_round(&mut seat, shared, episode)? else {
            return Ok(());
        };
        let first = episode;
        let end = first + planned;
        while episode < end && !(CUT && is_cut(&shared.stop_at, first, episode)) {
            if DELAY {
                delay(delay_by);
            }
            seat.work.iteration(episode)?;
            episode += 1;
        }
        if seat.control.is_some() {
            seat.meet(episode)?;
        }
        if round == 0 {
            seat.work.check()?;
        }
        round += 1;
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

/// One thread of a [`Pacing::Stamped`] row: per round, the control barrier (untimed), the stall,
/// an arrival stamp, one iteration, a return stamp, kept in the thread's own vectors so nothing
/// shared is written in the timed part. The first iteration is the warm-up, checked on every
/// thread. Thread 0 publishes the iteration no one starts, which every thread compares with the
/// one about to start after each meeting, so all run the same iterations: a stamped iteration
/// need not hold every thread back, so a bare "stop" flag (or the next round's length) would let
/// a thread slow to leave the meeting skip an iteration thread 0 runs.
fn stamped<W: Work>(
    rank: usize,
    mut seat: Seat<W>,
    shared: &Rounds,
    plan: &Plan,
    mut sampler: Option<Sampler>,
    (stalls, policy): (Option<&Stalls>, StallPolicy),
) -> Out {
    let capacity = plan.schedule.samples.saturating_add(1);
    let (mut arrives, mut rets) = (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
    let mut chose_all = Vec::new();
    let mut iterations = || -> Result<(), Failure> {
        seat.work.prepare()?;
        let row_start = Instant::now();
        for index in 0u64.. {
            seat.meet(index)
                .map_err(|failure| failure.about("the barrier between iterations"))?;
            let stop = shared.stop_at.load(Ordering::Relaxed);
            if stop != 0 && index >= stop {
                return Ok(());
            }
            if let Some(stalls) = stalls {
                policy.stall(stalls.get(index as usize, rank));
            }
            let arrive = nanos_since(shared.origin);
            let chose = seat.work.iteration(index)?;
            let ret = nanos_since(shared.origin);
            arrives.push(arrive);
            rets.push(ret);
            if index == 0 {
                seat.work.check()?;
            }
            if let Some(sampler) = &mut sampler {
                chose_all.extend(chose);
                let took = Duration::from_nanos(ret.saturating_sub(arrive));
                if sampler
                    .after_round(1, 1, took, row_start.elapsed())
                    .is_none()
                {
                    // Read after the next meeting, which orders it; read earlier (a thread still
                    // leaving this iteration's meeting), it names an iteration not reached yet.
                    shared.stop_at.store(index + 1, Ordering::Relaxed);
                }
                shared.done.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    };
    let failure = iterations().err();
    Out {
        failure,
        sampler,
        arrive: arrives,
        ret: rets,
        chose: chose_all,
    }
}

/// Nanoseconds from `origin` to now.
#[inline]
fn nanos_since(origin: Instant) -> u64 {
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use super::*;
    use crate::harness::stalls::Preset;

    const MINUTE: Duration = Duration::from_secs(60);

    fn schedule(episodes: u64, samples: usize, row_budget: Duration) -> Schedule {
        let target_sample = Duration::from_millis(1);
        Schedule {
            episodes: Some(episodes),
            samples,
            target_sample,
            row_budget,
        }
    }

    fn run<W: Work>(works: Vec<W>, schedule: Schedule, pacing: Pacing) -> Measured {
        let watch = Watch::new("test", works.len(), MINUTE);
        let plan = Plan::new(schedule, pacing, MINUTE);
        threads(works, &plan, &watch)
    }

    /// A barrier whose third wait fails, as a broken barrier's would.
    struct Failing(u32);

    impl Work for Failing {
        const SYNCHRONIZED: bool = true;

        fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
            self.0 += 1;
            match self.0 {
                3 => Err(phasers::Error::Broken { by: 7, episode: 2 }.into()),
                _ => Ok(None),
            }
        }
    }

    /// Counts its calls, and never waits for anyone: the least synchronized work there is.
    struct Count<'a>(&'a AtomicU64);

    impl Work for Count<'_> {
        const SYNCHRONIZED: bool = false;

        fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(None)
        }
    }

    #[test]
    fn looped_rows_run_every_planned_iteration_on_every_thread() {
        let calls = AtomicU64::new(0);
        let works = (0..3).map(|_| Count(&calls)).collect();
        let measured = run(works, schedule(1000, 3, MINUTE), Pacing::Looped);
        assert_eq!(
            (measured.error, measured.sampler.samples().len()),
            (None, 3)
        );
        // The warm-up round, then three samples of 1,000, on each of the three threads.
        let expected = 3 * (WARM_UP_EPISODES + 3 * 1000);
        assert_eq!(calls.load(Ordering::Relaxed), expected);
    }

    /// Sleeps a little per call; a bad one fails its third call, or with `wrong` its first check.
    struct Sleeper(u64, Option<bool>);

    impl Work for Sleeper {
        const SYNCHRONIZED: bool = false;

        fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
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

    /// `threads` sleepers stamped, rank `bad` failing as [`Sleeper`] says, at most `max`
    /// iterations after the warm-up, at least 5 and a millisecond.
    fn sleepers(
        threads: usize,
        stalls: Option<Stalls>,
        max: usize,
        bad: Option<(usize, bool)>,
    ) -> Measured {
        let sleeper = |rank| Sleeper(0, bad.filter(|&(at, _)| at == rank).map(|(_, wrong)| wrong));
        let watch = Watch::new("test", threads, MINUTE);
        let stalls = stalls.map(Arc::new);
        let plan = Plan {
            warm_up: 1,
            enough: Some((5, Duration::from_millis(1))),
            ..Plan::new(
                schedule(1, max, Duration::from_secs(10)),
                Pacing::Stamped { stalls },
                MINUTE,
            )
        };
        super::threads((0..threads).map(sleeper).collect(), &plan, &watch)
    }

    #[test]
    fn a_failure_names_its_cause_not_its_echoes() {
        let measured = sleepers(3, None, 50, Some((1, false)));
        let error = measured.error.unwrap();
        assert!(
            error.starts_with("thread 1: boom") && error.contains("2 more"),
            "{error}"
        );
        assert!(measured.timeline.is_none());
        let error = sleepers(2, None, 50, Some((0, true))).error.unwrap();
        assert!(error.contains("thread 0: wrong result"), "{error}");
        let schedule = schedule(50, 3, Duration::from_secs(5));
        let measured = run(vec![Failing(0)], schedule, Pacing::BackToBack);
        let error = measured.error.unwrap();
        assert!(error.starts_with("thread 0: ") && error.contains("broken"));
        assert!(measured.sampler.samples().is_empty());
        // A broken barrier is the echo above; any other error a cause.
        let zero = Barrier::with_algorithm(0, Algorithm::Auto).unwrap_err();
        assert!(matches!(Failure::from(zero), Failure::Cause(_)));
        let about = Failure::Echo("broken".into()).about("wait");
        assert_eq!(about, Failure::Echo("wait: broken".into()));
    }

    /// A thread of a row that counts its calls (meetings on the work included) in its own slot.
    struct Tallied<'a>(Participant, &'a AtomicU64);

    impl Work for Tallied<'_> {
        const SYNCHRONIZED: bool = true;

        fn iteration(&mut self, index: u64) -> Result<Option<&'static str>, Failure> {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.iteration(index)
        }
    }

    /// The rounds protocol with 64 threads on this machine's cores, far more threads than cores:
    /// a round cut at the budget still ends at the same iteration on every thread (or a thread
    /// would wait at a meeting nobody else reaches), and stamped iterations never overlap.
    #[test]
    fn sixty_four_oversubscribed_threads_agree_on_every_round() {
        const THREADS: usize = 64;
        // Far more episodes than the budget allows: only a cut can end the first sample.
        let schedule = schedule(1_000_000, 2, Duration::from_millis(300));
        for pacing in [Pacing::BackToBack, Pacing::Epcc { delay: 10 }] {
            let tallies: Vec<AtomicU64> = (0..THREADS).map(|_| AtomicU64::new(0)).collect();
            let barrier = Barrier::with_algorithm(THREADS, Algorithm::Counting).unwrap();
            let participants = barrier.participants().into_iter();
            let works = participants
                .zip(&tallies)
                .map(|(p, t)| Tallied(p, t))
                .collect();
            let measured = run(works, schedule, pacing.clone());
            assert_eq!(measured.error, None, "{pacing:?}");
            assert_eq!(measured.sampler.samples().len(), 1, "{pacing:?}");
            assert_eq!(measured.sampler.cut(), 1, "{pacing:?}");
            assert!(measured.sampler.capped(), "{pacing:?}");
            let first = tallies[0].load(Ordering::Relaxed);
            assert!(first > 0);
            for (rank, tally) in tallies.iter().enumerate() {
                assert_eq!(tally.load(Ordering::Relaxed), first, "{pacing:?}: {rank}");
            }
        }
        let stalls = Stalls::generate(&Preset::Low.spread(), THREADS, 11, 1);
        let timeline = sleepers(THREADS, Some(stalls), 10, None).timeline.unwrap();
        assert!((6..=11).contains(&timeline.iterations), "{timeline:?}");
        assert_eq!(timeline.arrive_ns.len(), THREADS * timeline.iterations);
        assert_eq!(timeline.chose.len(), timeline.iterations);
        for iteration in 1..timeline.iterations {
            let at = |stamps: &[u64], i: usize| stamps[i * THREADS..(i + 1) * THREADS].to_vec();
            let ended = at(&timeline.return_ns, iteration - 1);
            let started = at(&timeline.arrive_ns, iteration);
            assert!(started.iter().min() >= ended.iter().max(), "{iteration}");
        }
        // The maximum caps the row: the warm-up and 4 measured.
        assert_eq!(sleepers(2, None, 4, None).timeline.unwrap().iterations, 5);
    }
}
