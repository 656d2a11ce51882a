//! Loom models of [`AnyThreadBarrier`]: calls without ranks, each taking a rank from the ticket
//! counter and waiting as that rank's participant behind the slot's lock.
//!
//! - `two_parties_three_threads_*`: 2 parties, 3 threads sharing a pool of calls (4 calls, 2
//!   episodes, at 2 preemptions with sense-reversing; 6 calls, 3 episodes, at 1 preemption with
//!   sense-reversing and with tournament, whose larger search does not fit 2 in a minute),
//!   so threads change ranks between episodes and one thread may take a slot while its previous
//!   holder is still leaving. (A pool, not 2 calls per thread: two threads may complete every
//!   episode between themselves and leave the third alone with calls to make, which deadlocks with
//!   any barrier.) Checks the invariant through an arrival counter (a call that leaves episode
//!   `e` must see at least `(e + 1) * 2` arrivals), that each episode is completed by exactly 2
//!   calls with exactly one leader, and that `settle` then returns at once.
//! - `two_threads_three_episodes_*`: 2 parties, 2 threads, 3 calls each, with a rank-state algorithm
//!   (dissemination, tournament) whose ranks play different parts, so a thread that changes rank
//!   takes over another rank's private state. A completion action counts episodes in a non-atomic
//!   loom cell: after a call leaves episode `e` the count must be exactly `e + 1` and its write
//!   ordered before the read (loom checks the happens-before), which also checks the invariant and
//!   the visibility of what the leader wrote.
//! - `settle_after_wait`: 2 parties, 2 threads, one call each; the main thread calls `settle` as
//!   soon as its own wait returns, while the other may still be inside `wait`: it must return `Ok`
//!   (the episode completed) and never deadlock.
//!
//! Run one file with:
//! `RUSTFLAGS="--cfg phasers_loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p phasers --test
//! loom_any_thread` (`--nocapture` prints how many executions each model explored).
#![cfg(phasers_loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use loom_support::model_bounded;
use phasers::{Algorithm, AnyThreadBarrier, Barrier};

/// What each call reported: (episode, led it).
type Calls = Vec<(u64, bool)>;

/// Asserts that `episodes` episodes were each completed by exactly `parties` of the calls, with
/// exactly one leader.
fn assert_episodes(calls: &[Calls], parties: usize, episodes: u64) {
    let all: Vec<(u64, bool)> = calls.iter().flatten().copied().collect();
    assert_eq!(all.len() as u64, episodes * parties as u64);
    for episode in 0..episodes {
        let of_episode = all.iter().filter(|(e, _)| *e == episode).count();
        assert_eq!(
            of_episode, parties,
            "episode {episode} completed by {of_episode} calls"
        );
        let leaders = all.iter().filter(|&&(e, led)| e == episode && led).count();
        assert_eq!(leaders, 1, "episode {episode} had {leaders} leaders");
    }
}

/// 2 parties, 3 threads sharing a pool of `calls` calls (an even number).
fn three_threads(algorithm: Algorithm, calls: u64, max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        const PARTIES: u64 = 2;
        let barrier =
            Arc::new(AnyThreadBarrier::with_algorithm(PARTIES as usize, algorithm).unwrap());
        let arrivals = Arc::new(AtomicU64::new(0));
        let body = {
            let barrier = Arc::clone(&barrier);
            let arrivals = Arc::clone(&arrivals);
            move || -> Calls {
                let mut made = Vec::new();
                // The arrival counter is also the pool: a claim past `calls` makes no call.
                // Relaxed on both sides: only the barrier may order them.
                while arrivals.fetch_add(1, Ordering::Relaxed) < calls {
                    let result = barrier.wait().unwrap();
                    let seen = arrivals.load(Ordering::Relaxed);
                    assert!(
                        seen >= (result.episode() + 1) * PARTIES,
                        "left episode {} having seen only {seen} arrivals",
                        result.episode()
                    );
                    made.push((result.episode(), result.is_leader()));
                }
                made
            }
        };
        let others: Vec<_> = (0..2)
            .map(|_| {
                let body = body.clone();
                thread::spawn(body)
            })
            .collect();
        let mut reports = vec![body()];
        reports.extend(others.into_iter().map(|t| t.join().unwrap()));
        assert_episodes(&reports, PARTIES as usize, calls / PARTIES);
        // Every thread has returned, so nobody is inside `wait`.
        barrier.settle().unwrap();
    });
}

/// Counts completions in a non-atomic loom cell, so loom checks every access's ordering.
struct Completions(UnsafeCell<u64>);

// SAFETY: loom's cell checks every access against happens-before and fails the model on a race,
// which is what the model tests; the value is a plain `u64`.
unsafe impl Sync for Completions {}

impl Completions {
    fn read(&self) -> u64 {
        // SAFETY: loom checks that the completion actions' writes happen before this read.
        self.0.with(|count| unsafe { *count })
    }
}

/// 2 parties, 2 threads, 3 calls each, through `from_barrier` with a completion action.
fn two_threads(algorithm: Algorithm, max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        const EPISODES: u64 = 3;
        let completions = Arc::new(Completions(UnsafeCell::new(0)));
        let action = Arc::clone(&completions);
        let barrier = Barrier::builder(2)
            .algorithm(algorithm)
            .on_completion(move || {
                // SAFETY: loom checks the access: one leader at a time runs the action, after
                // every arrival of its episode and before the release.
                action.0.with_mut(|count| unsafe { *count += 1 });
            })
            .build()
            .unwrap();
        let barrier = Arc::new(AnyThreadBarrier::from_barrier(barrier).unwrap());
        let body = {
            let barrier = Arc::clone(&barrier);
            let completions = Arc::clone(&completions);
            move || -> Calls {
                (0..EPISODES)
                    .map(|call| {
                        let result = barrier.wait().unwrap();
                        // With as many threads as parties, a thread's k-th call is in episode k.
                        assert_eq!(result.episode(), call);
                        assert_eq!(completions.read(), call + 1);
                        (result.episode(), result.is_leader())
                    })
                    .collect()
            }
        };
        let other = thread::spawn(body.clone());
        let reports = vec![body(), other.join().unwrap()];
        assert_episodes(&reports, 2, EPISODES);
    });
}

#[test]
fn two_parties_three_threads_sense_reversing() {
    three_threads(Algorithm::SenseReversing, 4, usize::MAX);
}

/// Three episodes, so a slot is taken a third time; the search fits only with one preemption.
#[test]
fn two_parties_three_threads_three_episodes_sense_reversing() {
    three_threads(Algorithm::SenseReversing, 6, 1);
}

#[test]
fn two_parties_three_threads_tournament() {
    three_threads(Algorithm::Tournament, 6, 1);
}

#[test]
fn two_threads_three_episodes_dissemination() {
    two_threads(Algorithm::Dissemination, usize::MAX);
}

#[test]
fn two_threads_three_episodes_tournament() {
    two_threads(Algorithm::Tournament, usize::MAX);
}

#[test]
fn settle_after_wait() {
    model_bounded(usize::MAX, || {
        let barrier =
            Arc::new(AnyThreadBarrier::with_algorithm(2, Algorithm::SenseReversing).unwrap());
        let other = {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || barrier.wait().unwrap())
        };
        let mine = barrier.wait().unwrap();
        // The episode completed, so the other call can only be on its way out: settle waits for
        // it and reports no error.
        barrier.settle().unwrap();
        let theirs = other.join().unwrap();
        assert_eq!((mine.episode(), theirs.episode()), (0, 0));
        assert!(mine.is_leader() != theirs.is_leader());
    });
}
