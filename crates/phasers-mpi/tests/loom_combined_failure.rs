//! Loom models of the combined barrier's failure record (`src/combined/process_side.rs`): the
//! threads of one rank meet in the real local barrier (phasers' `Barrier`, itself on loom under
//! `--cfg phasers_loom`), whose completion action runs the real `ProcessSide` step with a scripted
//! stub in place of the process barrier across ranks. 2 or 3 threads, several local episodes.
//!
//! - **The step fails** (a timeout naming a rank, as the process barrier's does): in the episodes
//!   the script fails, every thread of the rank must get exactly the error the leader's step
//!   returned in that episode (the one naming that episode's missing rank, never a stale one
//!   from an earlier failure); in the others, success with the process episode, which a failed
//!   step does not advance, and exactly one leader. Thread 1 waits with a deadline, which under
//!   loom times out at once unless the local gather is complete, so it resumes its wait at every
//!   point; the stub checks that the deadline it gets is the one of the thread it runs on (the
//!   leader's), which the shim's loom thread-local makes so.
//! - **A thread is dropped** or **panics** (while holding its handle) after episode 0, whose step
//!   failed: every other thread's next wait must return `Broken` naming it, twice, instead of
//!   hanging (loom reports a hang as a deadlock), and the earlier failure must not show instead.
//! - **The leader's step panics**: the leader's wait panics, and every other thread must get
//!   `Broken` naming the thread that panicked, whichever thread led.
//!
//! Run with `scripts/loom.sh` (or `scripts/loom.sh loom_combined_failure`).
#![cfg(phasers_loom)]

mod loom_support;

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;
use std::time::{Duration, Instant};

use loom::sync::Arc;
use loom::thread;
use loom_support::{model_bounded, Ledger};
use phasers::Barrier;
use phasers_mpi::loom_api::{LeaderStep, ProcessSide, Seat};
use phasers_mpi::{CombinedWait, Error};

/// What the stub panics with, kept out of the output.
const STUB_PANIC: &str = "the stub's process step panics";
const THREAD_PANIC: &str = "a thread panics holding its handle";

loom::thread_local! {
    /// The thread index of the loom thread, for the stub to find whose deadline it should get.
    static THREAD: Cell<usize> = Cell::new(usize::MAX);
}

/// When the threads' waits give up.
#[derive(Clone, Copy)]
struct Clock {
    base: Instant,
    /// Whether thread 1 waits with a deadline (see [`deadline_of`]).
    timed: bool,
}

/// The deadline thread `thread` waits with: one for thread 1 when the model is timed, none for
/// the others. One thread with a deadline is enough to tell a leader's deadline from another's;
/// each such thread resumes its timed-out waits in a loop, which multiplies loom's interleavings,
/// and with two of them the three-thread models would not finish in the CI budget.
fn deadline_of(thread: usize, clock: Clock) -> Option<Instant> {
    (clock.timed && thread == 1).then(|| clock.base + Duration::from_secs(3600))
}

/// What the stub's step does in one local episode.
#[derive(Clone, Copy, Debug)]
enum Act {
    /// The other ranks meet: success.
    Meet,
    /// Rank `0` never arrives: `Error::Timeout` naming it.
    Miss(usize),
    /// The step panics.
    Panic,
}

/// The process step the model runs in place of the process barrier.
struct Script {
    acts: &'static [Act],
    /// Local episodes whose step has run.
    calls: usize,
    /// Process episodes completed.
    met: u64,
    clock: Clock,
}

impl LeaderStep for Script {
    fn step(&mut self, deadline: Option<Instant>) -> phasers_mpi::Result<()> {
        let thread = THREAD.with(Cell::get);
        assert_eq!(
            deadline,
            deadline_of(thread, self.clock),
            "the step on thread {thread} got another thread's deadline"
        );
        let act = self.acts[self.calls];
        self.calls += 1;
        match act {
            Act::Meet => {
                self.met += 1;
                Ok(())
            }
            Act::Miss(rank) => Err(timeout_naming(rank, self.met)),
            Act::Panic => panic!("{STUB_PANIC}"),
        }
    }
}

/// The error the stub's step returns when rank `rank` is missing from process episode `episode`.
fn timeout_naming(rank: usize, episode: u64) -> Error {
    Error::Timeout {
        what: "stub process step",
        episode,
        waiting_for: vec![rank],
        after: Duration::ZERO,
    }
}

/// Keeps the models' deliberate panics out of the output; any other panic (a failed check) is
/// printed as usual.
fn quiet_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied());
            if text != Some(STUB_PANIC) && text != Some(THREAD_PANIC) {
                default(info);
            }
        }));
    });
}

/// Waits for one local episode as `thread`, resuming the wait while the local barrier times out
/// (under loom a timed wait returns at once unless the local gather is complete).
fn wait(seat: &mut Seat<Script>, thread: usize, clock: Clock) -> phasers_mpi::Result<CombinedWait> {
    loop {
        match seat.wait_until(deadline_of(thread, clock)) {
            Err(Error::Core(phasers::Error::Timeout { .. })) => thread::yield_now(),
            other => return other,
        }
    }
}

/// One local episode of every seat in `seats` on the main thread, before any other thread starts:
/// timed waits on each seat in turn, each resumed until it no longer times out (under loom a timed
/// wait returns at once unless the local gather is complete). Every wait uses thread 1's deadline,
/// and the thread-local says thread 1, so the stub's check that the leader gets its own deadline
/// holds whichever seat completes the gather. Needs a timed `clock`. Returns the outcomes, by seat.
fn polled_episode(
    seats: &mut [Seat<Script>],
    clock: Clock,
) -> Vec<phasers_mpi::Result<CombinedWait>> {
    assert!(clock.timed, "a polled episode needs thread 1's deadline");
    THREAD.with(|t| t.set(1));
    let mut outcomes: Vec<_> = seats.iter().map(|_| None).collect();
    while outcomes.iter().any(Option::is_none) {
        for (seat, outcome) in seats.iter_mut().zip(&mut outcomes) {
            if outcome.is_none() {
                match seat.wait_until(deadline_of(1, clock)) {
                    Err(Error::Core(phasers::Error::Timeout { .. })) => {}
                    other => *outcome = Some(other),
                }
            }
        }
    }
    outcomes.into_iter().map(Option::unwrap).collect()
}

/// `threads` threads, each on its own loom thread, with a seat each in a combined barrier whose
/// step follows `acts`, thread 1 with a deadline if `timed`; `before_threads` runs on the main
/// thread with every seat before the threads start, then `body` runs on each thread with its seat
/// and returns what the model checks at the end. Returns those reports, by thread.
fn scenario<R: Send + 'static>(
    threads: usize,
    acts: &'static [Act],
    timed: bool,
    before_threads: impl FnOnce(&mut [Seat<Script>], Clock),
    body: impl Fn(usize, Seat<Script>, Clock) -> R + Send + Sync + 'static,
) -> Vec<R> {
    let clock = Clock {
        base: Instant::now(),
        timed,
    };
    let side = ProcessSide::new(Script {
        acts,
        calls: 0,
        met: 0,
        clock,
    });
    let local = ProcessSide::lead(&side, Barrier::builder(threads))
        .build()
        .expect("a valid local barrier");
    let mut seats: Vec<_> = local
        .participants()
        .into_iter()
        .map(|participant| Seat::new(participant, Arc::clone(&side)))
        .collect();
    // Only the seats keep the local barrier and the side alive, as a CombinedBarrier dropped
    // while its threads run leaves them.
    drop((local, side));
    before_threads(&mut seats, clock);
    let body = Arc::new(body);
    let main_seat = seats.remove(0);
    let others: Vec<_> = seats
        .into_iter()
        .enumerate()
        .map(|(index, seat)| {
            let body = Arc::clone(&body);
            thread::spawn(move || {
                THREAD.with(|t| t.set(index + 1));
                body(index + 1, seat, clock)
            })
        })
        .collect();
    THREAD.with(|t| t.set(0));
    let mut reports = vec![body(0, main_seat, clock)];
    reports.extend(
        others
            .into_iter()
            .map(|t| t.join().expect("a thread failed")),
    );
    reports
}

/// Every thread waits through `acts`; checks each outcome against the script.
fn step_failures(threads: usize, acts: &'static [Act], max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        let ledger = Arc::new(Ledger::new(threads, acts.len()));
        let checks = Arc::clone(&ledger);
        let led = scenario(
            threads,
            acts,
            true,
            |_, _| {},
            move |thread, mut seat, clock| {
                assert_eq!(seat.thread_rank(), thread);
                let mut met = 0;
                let mut led = Vec::new();
                for (local_episode, act) in acts.iter().enumerate() {
                    let local_episode = local_episode as u64;
                    checks.arrive(thread, local_episode);
                    let outcome = wait(&mut seat, thread, clock);
                    // Failed or not, the local episode completed: everyone arrived.
                    checks.assert_all_arrived(thread, local_episode);
                    match (act, outcome) {
                        (Act::Meet, Ok(done)) => {
                            assert_eq!(done.episode(), met, "thread {thread}: the process episode");
                            if done.is_leader() {
                                led.push(met);
                            }
                            met += 1;
                        }
                        (Act::Miss(rank), Err(error)) => assert_eq!(
                        error,
                        timeout_naming(*rank, met),
                        "thread {thread}, local episode {local_episode}: another failure's record"
                    ),
                        (act, outcome) => panic!(
                            "thread {thread}, local episode {local_episode}: the step did {act:?} \
                         but the wait returned {outcome:?}"
                        ),
                    }
                }
                led
            },
        );
        let met = acts.iter().filter(|act| matches!(act, Act::Meet)).count() as u64;
        for episode in 0..met {
            let leaders = led.iter().flatten().filter(|&&e| e == episode).count();
            assert_eq!(
                leaders, 1,
                "process episode {episode} had {leaders} leaders"
            );
        }
    });
}

/// How the thread that goes away does.
#[derive(Clone, Copy, Debug)]
enum Loss {
    Dropped,
    Panicked,
}

/// Which of a lost-thread model's steps race.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Raced {
    /// Everything.
    All,
    /// Everything but each remaining thread's second wait, which the main thread makes after the
    /// joins (each thread hands its seat back for it).
    AllButSecondWaits,
    /// Everything after episode 0, which the main thread completes before the threads start,
    /// polling every seat ([`polled_episode`]).
    AfterEpisode0,
}

/// Episode 0's step fails; then thread `lost` goes away, and every other thread's next two waits
/// must return `Broken` naming it. `timed`: thread 1 waits with a deadline. `raced`: which of
/// those steps the threads race.
fn thread_lost(
    threads: usize,
    lost: usize,
    how: Loss,
    timed: bool,
    raced: Raced,
    max_preemptions: usize,
) {
    quiet_expected_panics();
    model_bounded(max_preemptions, move || {
        let seats = scenario(
            threads,
            &[Act::Miss(7)],
            timed,
            |seats, clock| {
                if raced == Raced::AfterEpisode0 {
                    for (thread, first) in polled_episode(seats, clock).into_iter().enumerate() {
                        assert_eq!(first, Err(timeout_naming(7, 0)), "thread {thread}");
                    }
                }
            },
            move |thread, mut seat, clock| {
                if raced != Raced::AfterEpisode0 {
                    let first = wait(&mut seat, thread, clock);
                    assert_eq!(first, Err(timeout_naming(7, 0)), "thread {thread}");
                }
                if thread == lost {
                    match how {
                        Loss::Dropped => drop(seat),
                        Loss::Panicked => {
                            let panicked = catch_unwind(AssertUnwindSafe(move || {
                                let _seat = seat;
                                panic!("{THREAD_PANIC}");
                            }));
                            assert!(panicked.is_err());
                        }
                    }
                    return None;
                }
                assert_broken_by(lost, thread, wait(&mut seat, thread, clock));
                if raced == Raced::AllButSecondWaits {
                    return Some(seat);
                }
                assert_broken_by(lost, thread, wait(&mut seat, thread, clock));
                None
            },
        );
        for (thread, seat) in seats.into_iter().enumerate() {
            if let Some(mut seat) = seat {
                // Untimed: on a broken barrier the wait must return at once.
                assert_broken_by(lost, thread, seat.wait_until(None));
            }
        }
    });
}

/// Checks that `thread`'s wait returned `Broken` naming thread `lost`, from episode 1.
fn assert_broken_by(lost: usize, thread: usize, outcome: phasers_mpi::Result<CombinedWait>) {
    match outcome {
        Err(Error::Core(phasers::Error::Broken { by, episode })) => {
            assert_eq!(by, lost, "thread {thread}: the wrong thread blamed");
            assert_eq!(episode, 1, "thread {thread}: the wrong episode broken");
        }
        other => panic!("thread {thread}: expected Broken by {lost}, got {other:?}"),
    }
}

/// Episode 0 completes; episode 1's step panics in whichever thread leads it. That thread's wait
/// panics; every other thread's must return `Broken` naming it.
fn leader_step_panics(threads: usize, max_preemptions: usize) {
    quiet_expected_panics();
    model_bounded(max_preemptions, move || {
        let outcomes = scenario(
            threads,
            &[Act::Meet, Act::Panic],
            true,
            |_, _| {},
            move |thread, mut seat, clock| {
                assert!(wait(&mut seat, thread, clock).is_ok(), "thread {thread}");
                catch_unwind(AssertUnwindSafe(|| wait(&mut seat, thread, clock))).ok()
            },
        );
        let panicked: Vec<usize> = (0..threads).filter(|&t| outcomes[t].is_none()).collect();
        assert_eq!(panicked.len(), 1, "exactly the leader panics: {panicked:?}");
        for (thread, outcome) in outcomes.into_iter().enumerate() {
            match outcome {
                None => {}
                Some(Err(Error::Core(phasers::Error::Broken { by, episode }))) => {
                    assert_eq!(by, panicked[0], "thread {thread}: the wrong thread blamed");
                    assert_eq!(episode, 1, "thread {thread}: the wrong episode broken");
                }
                Some(other) => panic!("thread {thread}: expected Broken, got {other:?}"),
            }
        }
    });
}

// The bounds, chosen so that the file runs in about a minute on 2 cores (`--nocapture` prints each
// model's executions). 2 threads explore 2 preemptions, the default, in seconds; 3 threads at 2
// preemptions cost 50 to 80 s a model (close to a million executions), so only the dropped thread,
// the case where a participant goes away while two others gather, gets them; the others explore
// 1 preemption (every interleaving with one forced switch, and any number of voluntary ones where
// a thread parks or resumes a timed-out wait).

#[test]
fn two_threads_failures_between_meetings() {
    step_failures(2, &[Act::Meet, Act::Miss(5), Act::Miss(6), Act::Meet], 2);
}

#[test]
fn three_threads_failures_between_meetings() {
    step_failures(3, &[Act::Miss(5), Act::Miss(6), Act::Meet], 1);
}

#[test]
fn two_threads_dropped() {
    thread_lost(2, 1, Loss::Dropped, true, Raced::All, 2);
}

// The dropped thread among three is two searches, whose costs add where one model's multiply
// (together 934,016 executions, 54% of the single model's 1,735,221, and 50 to 55% of its time:
// 60 against 109 s and 62 against 128 s, run alone on the 2-core machine). Between them they race
// every step against every step it can overlap:
//
// - `three_threads_one_dropped`: episode 0's failure, the drop and each remaining thread's first
//   wait race. Its waits take no deadline: the timed waits' resumption in a loop (which doubled
//   this search) checks the step failures' records and the leader's deadline, which the
//   step-failure models and `two_threads_dropped` check; here thread 1 only drops once its
//   episode 0 returned, so no timed-out arrival is left behind for the drop to meet. The second
//   waits, which a broken barrier answers at once, come after the joins.
// - `three_threads_one_dropped_after_episode_0`: episode 0 completes on the main thread before
//   the threads start; the drop races with both waits of both remaining threads, so each second
//   wait races with the drop and with the other thread's first wait.

/// Episode 0's failure, the drop and the first wait after it race; no deadlines.
#[test]
fn three_threads_one_dropped() {
    thread_lost(3, 1, Loss::Dropped, false, Raced::AllButSecondWaits, 2);
}

/// The drop and both waits after it race, episode 0 done before the threads start.
#[test]
fn three_threads_one_dropped_after_episode_0() {
    thread_lost(3, 1, Loss::Dropped, true, Raced::AfterEpisode0, 2);
}

#[test]
fn two_threads_one_panics() {
    thread_lost(2, 0, Loss::Panicked, true, Raced::All, 2);
}

#[test]
fn two_threads_leader_step_panics() {
    leader_step_panics(2, 2);
}

#[test]
fn three_threads_leader_step_panics() {
    leader_step_panics(3, 1);
}
