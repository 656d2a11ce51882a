//! Loom models of `AnyThreadBarrier::wait_async` (`src/barrier/any_thread_future.rs`): a task
//! borrows its rank's participant out of the slot for its wait and gives it back, while blocking
//! calls of the same rank wait for it; and a task's future dropped after arriving breaks the
//! barrier.
//!
//! - `a_task_and_two_threads_share_a_pool_of_calls`: 2 parties, one async task and two blocking
//!   threads taking 4 calls from a shared pool (2 episodes), so that any of them may take a rank
//!   the task still holds, or the task one a blocking call still holds (the task then re-polls
//!   itself). Each episode has exactly 2 calls and one leader, a call leaving episode `e` has
//!   seen `(e + 1) * 2` arrivals, and `settle` returns at once.
//! - `two_tasks_and_a_thread_share_a_pool_of_calls`: the same with two tasks, so that a task may
//!   queue behind the other task of its rank: it stores its waker in the slot, and the other's
//!   give-back must wake it (a lost wake leaves its poller parked, which loom reports).
//! - `a_dropped_arrival_breaks_the_barrier`: a task arrives and its future is dropped while a
//!   blocking call arrives at the same episode (before or after the drop): the blocking call
//!   returns `Broken`, or its result if it completed the episode first (as a last call may beside
//!   a timed wait that gives up); nobody hangs, and `settle` returns.
//!
//! Each task runs on a loom thread with a `loom_support::poller::Poller`.
//!
//! Run with `scripts/loom.sh`, or the loom command in `crates/phasers/tests/loom_any_thread.rs`.
#![cfg(phasers_loom)]

mod loom_support;

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use loom_support::model_bounded;
use loom_support::poller::Poller;
use phasers::{Algorithm, AnyThreadBarrier, Error};

const PARTIES: u64 = 2;
const CALLS: u64 = 4;

#[test]
fn a_task_and_two_threads_share_a_pool_of_calls() {
    // One preemption: 1.5 s. Two passed once too (1.2 million executions, 98 s on the 2-core
    // VM), too long to run every time.
    share_a_pool_of_calls([true, false, false]);
}

#[test]
fn two_tasks_and_a_thread_share_a_pool_of_calls() {
    share_a_pool_of_calls([true, true, false]);
}

/// Three loom threads, each a task (`true`) or a blocking thread, take the 4 calls of a pool.
fn share_a_pool_of_calls(tasks: [bool; 3]) {
    model_bounded(1, move || {
        let barrier = Arc::new(
            AnyThreadBarrier::with_algorithm(PARTIES as usize, Algorithm::Counting).unwrap(),
        );
        let arrivals = Arc::new(AtomicU64::new(0));
        let spawn = |task: bool| {
            let (barrier, arrivals) = (barrier.clone(), arrivals.clone());
            thread::spawn(move || {
                let mut poller = Poller::new();
                let mut made = Vec::new();
                while arrivals.fetch_add(1, Ordering::Relaxed) < CALLS {
                    let result = if task {
                        poller.block_on(barrier.wait_async())
                    } else {
                        barrier.wait()
                    }
                    .unwrap();
                    let seen = arrivals.load(Ordering::Relaxed);
                    assert!(seen >= (result.episode() + 1) * PARTIES, "saw {seen}");
                    made.push((result.episode(), result.is_leader()));
                }
                made
            })
        };
        let threads = tasks.map(spawn);
        let all: Vec<(u64, bool)> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        assert_eq!(all.len() as u64, CALLS);
        for episode in 0..CALLS / PARTIES {
            let calls = all.iter().filter(|(e, _)| *e == episode).count();
            let leaders = all.iter().filter(|&&(e, led)| e == episode && led).count();
            assert_eq!((calls, leaders), (PARTIES as usize, 1), "episode {episode}");
        }
        barrier.settle().unwrap();
    });
}

#[test]
fn a_dropped_arrival_breaks_the_barrier() {
    model_bounded(2, || {
        let barrier = Arc::new(
            AnyThreadBarrier::with_algorithm(PARTIES as usize, Algorithm::Counting).unwrap(),
        );
        let other = {
            let barrier = barrier.clone();
            thread::spawn(move || barrier.wait())
        };
        {
            let mut future = barrier.wait_async();
            // One poll: arrived (or completed, if the other call came first).
            let waker = std::task::Waker::from(std::sync::Arc::new(Nothing));
            let polled =
                std::pin::Pin::new(&mut future).poll(&mut std::task::Context::from_waker(&waker));
            if polled.is_ready() {
                // Completed at once: nothing to cancel.
                assert_eq!(other.join().unwrap().unwrap().episode(), 0);
                assert!(!barrier.is_broken());
                barrier.settle().unwrap();
                return;
            }
        } // dropped after arriving
        match other.join().unwrap() {
            // The other call completed the episode: before the drop's last look (which then
            // finished the wait, and the barrier goes on), or between that look and the drop's
            // break (the barrier is then broken for later calls, as after a timed wait that gave
            // up in the same instant).
            Ok(result) => {
                assert_eq!(result.episode(), 0);
            }
            Err(error) => {
                assert!(matches!(error, Error::Broken { .. }), "{error:?}");
                assert!(barrier.is_broken());
            }
        }
        barrier.settle().unwrap();
    });
}

/// A waker that does nothing: the dropped future's poll needs none.
struct Nothing;

impl std::task::Wake for Nothing {
    fn wake(self: std::sync::Arc<Self>) {}
}

use std::future::Future as _;
