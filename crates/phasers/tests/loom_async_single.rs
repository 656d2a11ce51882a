//! Loom models of `Registration::next_single_async` (`src/phaser/single_future.rs`): the action's
//! runner as a task, waiting on the gather word through its waker, and a runner dropped before
//! its action ran.
//!
//! The future adds no lock-free step of its own: the claim, the signal and the completer's
//! hand-off to the gather word are `next_single`'s, and a task's wait on the gather word is
//! `TaskWaiter::poll_probe`, as on the release word (`tests/loom_async.rs`). These models check
//! the two together: a runner task's waker stored on the gather word while the last signal hands
//! the phase over must be woken, and the followers (a task on the release word, a blocking
//! thread) must see the action's effects once released; and the break a dropped runner makes
//! must reach a follower whatever it is doing, so that nobody hangs.
//!
//! There is no executor under loom: each task runs on a loom thread with a
//! `loom_support::poller::Poller`; a waker that is never woken leaves its thread parked, which
//! loom reports as a deadlock.
//!
//! Run with `scripts/loom.sh`, or the loom command in `crates/phasers/tests/loom_async.rs`.
#![cfg(phasers_loom)]

mod loom_support;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use loom_support::poller::Poller;
use loom_support::{model_bounded, phaser_of_shape};
use phasers::{Error, Mode};

/// Two tasks and a blocking thread call `next_single` for one phase; whoever claims first runs the
/// action. Exactly one `Some`, the action ran once, and every party sees its effect once released.
#[test]
fn two_tasks_and_a_thread() {
    model_bounded(2, || {
        let ran = Arc::new(AtomicUsize::new(0));
        let somes = Arc::new(AtomicUsize::new(0));
        let (_phaser, mut main) = phaser_of_shape(1, 2, Mode::SigWaitSingle);
        let tasks: Vec<_> = main
            .register_many(Mode::SigWaitSingle, 2)
            .unwrap()
            .into_iter()
            .map(|mut task| {
                let (ran, somes) = (ran.clone(), somes.clone());
                thread::spawn(move || {
                    let action = || ran.fetch_add(1, Ordering::Relaxed);
                    let outcome = Poller::new().block_on(task.next_single_async(action));
                    if outcome.unwrap().is_some() {
                        somes.fetch_add(1, Ordering::Relaxed);
                    }
                    // Released only after the action, and its effect is visible.
                    assert_eq!(ran.load(Ordering::Relaxed), 1);
                    task
                })
            })
            .collect();
        let outcome = main.next_single(|| ran.fetch_add(1, Ordering::Relaxed));
        if outcome.unwrap().is_some() {
            somes.fetch_add(1, Ordering::Relaxed);
        }
        assert_eq!(ran.load(Ordering::Relaxed), 1);
        let tasks: Vec<_> = tasks.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(somes.load(Ordering::Relaxed), 1);
        assert_eq!(main.phase(), 1);
        drop(tasks);
    });
}

/// A waker that does nothing: the dropped runner's poll needs none.
struct Nothing;

impl Wake for Nothing {
    fn wake(self: std::sync::Arc<Self>) {}
}

/// The runner task claims the action and is dropped, while a follower task and a blocking
/// follower signal and wait (the last signal may hand the phase to the runner's gather word
/// before or after the drop): both followers get `Error::Broken` by the runner, the action never
/// runs.
#[test]
fn a_dropped_runner_breaks_the_phaser() {
    model_bounded(2, || {
        let (_phaser, mut runner) = phaser_of_shape(1, 2, Mode::SigWaitSingle);
        let runner_id = runner.id();
        let mut followers = runner.register_many(Mode::SigWaitSingle, 2).unwrap();
        let (mut thread_follower, mut task_follower) =
            (followers.pop().unwrap(), followers.pop().unwrap());
        let broken = Error::Broken {
            by: runner_id,
            episode: 0,
        };
        // Claims the action and signals: polled once before the followers start.
        let waker = Waker::from(std::sync::Arc::new(Nothing));
        let mut running = runner.next_single_async(|| unreachable!("dropped unrun"));
        let polled = Pin::new(&mut running).poll(&mut Context::from_waker(&waker));
        assert!(polled.is_pending());
        let expected = broken.clone();
        let task = thread::spawn(move || {
            let outcome =
                Poller::new().block_on(task_follower.next_single_async(|| unreachable!()));
            assert_eq!(outcome, Err(expected));
            task_follower
        });
        let expected = broken.clone();
        let blocking = thread::spawn(move || {
            let outcome = thread_follower.next_single(|| unreachable!());
            assert_eq!(outcome, Err(expected));
            thread_follower
        });
        drop(running);
        let (task, blocking) = (task.join().unwrap(), blocking.join().unwrap());
        assert_eq!(runner.wait(), Err(broken));
        drop((task, blocking));
    });
}

/// The runner's future dropped in the instant its phase is gathered: a follower's last signal
/// races the drop, and nobody may hang whichever comes first (`Poll` type kept for the model's
/// explicit first poll).
#[test]
fn a_dropped_runner_races_the_last_signal() {
    model_bounded(2, || {
        let (_phaser, mut runner) = phaser_of_shape(1, 2, Mode::SigWaitSingle);
        let mut follower = runner.register(Mode::SigWaitSingle).unwrap();
        let waker = Waker::from(std::sync::Arc::new(Nothing));
        let mut running = runner.next_single_async(|| unreachable!("dropped unrun"));
        let polled: Poll<_> = Pin::new(&mut running).poll(&mut Context::from_waker(&waker));
        assert!(polled.is_pending());
        let task = thread::spawn(move || {
            let outcome = Poller::new().block_on(follower.next_single_async(|| unreachable!()));
            assert!(matches!(outcome, Err(Error::Broken { .. })), "{outcome:?}");
            follower
        });
        drop(running);
        drop(task.join().unwrap());
    });
}
