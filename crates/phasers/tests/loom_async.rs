//! Loom models of async tasks on a phaser: a task's waker stored on the release word while the
//! phase is being released (see `src/wait/poll.rs` and `src/wait/wakers.rs`).
//!
//! There is no executor under loom: each task runs on a loom thread that polls its
//! `next_async` future by hand and, on `Pending`, parks until its waker unparks it. A waker that
//! a release fails to wake therefore leaves the thread parked for ever, which loom reports as a
//! deadlock. The waker also counts its wakes: a task that resumes must have been woken.
//!
//! - `tasks_and_a_thread_*`: two async tasks and a blocking thread; two phases with up to two
//!   preemptions (flat, and a tree of two tiers), three phases with one (flat). Two waiters of
//!   one phase is what makes the poll's check after storing its waker necessary: when one has
//!   already marked the word `PARKED`, the other's mark compares nothing, and a release between
//!   its first probe and its store would take only the first one's waker. Without that check the
//!   models deadlock. In the tree the release comes from a sub-phaser's completer, which wakes
//!   the waiters only after it has re-armed its sub-phaser (`OwedWakes` in `src/phaser/core.rs`):
//!   the tree model deadlocks if that owed wake is never paid.
//! - `three_tasks_flat`: three async tasks, two phases. The task whose arrival completes a phase
//!   owes the other two their wakes, and pays them a batch per poll (one wake per poll under
//!   loom; see `src/wait/batched_wakes.rs`), waking itself in between. The model deadlocks if a
//!   wake owed past the first poll is never paid.
//! - `task_between_two_releases`: a wait-only task waits for phase 1 while phase 0's release, on
//!   a word a sleeper marked, may land between its first probe and its store; it must notice the
//!   word moved (its phase still unreleased) and mark it again. Without that it deadlocks (as does
//!   the tree model).
//! - `task_sees_termination`: a task awaits a phase that a force-termination ends; the break
//!   wakes the stored wakers without changing the release word, and the task must see it in its
//!   check after the store. Without that it deadlocks.
//!
//! - `timed_task_times_out_without_a_timer`: a task's `next_async().timeout(..)` while the other
//!   party signals. Loom has no clock, so a timed poll that finds the phase unreleased times out
//!   at once (as a blocking timed wait's slow path does there) and no timer thread is started;
//!   the timed-out task's next wait completes the same phase.
//!
//! After each phase every party checks that all three signalled it: the barrier invariant, with
//! visibility (the counts are written before the signals and read after the release).
//!
//! The file takes about 30 s on a 2-core VM (the tree model 11-14 s, the others 7 s or less);
//! three phases at two preemptions took 63 s for the flat model alone, hence the split. On the
//! 2-core Xeon VM of 2026-12-01 the whole file took 123 s run one model at a time (the tree 65 s,
//! the flat 30 s); `three_tasks_flat` runs at one preemption, 7 s, where two took 243 s.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use loom_support::poller::Poller;
use loom_support::{model_bounded, phaser_of_shape};
use phasers::{Error, Mode};
use std::time::Duration;

const PHASES: usize = 3;
const TASKS: usize = 3;

/// How many tasks signalled each phase, counted before their signal.
struct Arrivals([AtomicUsize; PHASES]);

impl Arrivals {
    fn new() -> Arc<Self> {
        Arc::new(Arrivals(std::array::from_fn(|_| AtomicUsize::new(0))))
    }

    fn arrive(&self, phase: usize) {
        self.0[phase].fetch_add(1, Ordering::Release);
    }

    /// Once `phase` is released, every task's count is visible.
    fn check(&self, phase: usize) {
        assert_eq!(
            self.0[phase].load(Ordering::Acquire),
            TASKS,
            "phase {phase} released before every task signalled it"
        );
    }
}

fn tasks_and_a_thread(tiers: usize, degree: usize, phases: usize, max_preemptions: usize) {
    tasks_and_main(tiers, degree, phases, max_preemptions, false);
}

/// Two tasks on threads of their own, and `main` on the model's thread: blocking in `next`, or
/// a task too when `main_is_task`.
fn tasks_and_main(
    tiers: usize,
    degree: usize,
    phases: usize,
    max_preemptions: usize,
    main_is_task: bool,
) {
    model_bounded(max_preemptions, move || {
        let arrivals = Arrivals::new();
        let (_phaser, mut main) = phaser_of_shape(tiers, degree, Mode::SigWait);
        let tasks: Vec<_> = main
            .register_many(Mode::SigWait, TASKS - 1)
            .unwrap()
            .into_iter()
            .map(|mut task| {
                let arrivals = arrivals.clone();
                thread::spawn(move || {
                    let mut poller = Poller::new();
                    for phase in 0..phases {
                        arrivals.arrive(phase);
                        let completed = poller.block_on(task.next_async());
                        assert_eq!(completed.unwrap(), phase as u64);
                        arrivals.check(phase);
                    }
                    // Kept until every task is done: the last signaller's drop would terminate.
                    task
                })
            })
            .collect();
        let main_loop = move || {
            let mut poller = Poller::new();
            for phase in 0..phases {
                arrivals.arrive(phase);
                let completed = match main_is_task {
                    true => poller.block_on(main.next_async()),
                    false => main.next(),
                };
                assert_eq!(completed.unwrap(), phase as u64);
                arrivals.check(phase);
            }
            main
        };
        // A task may be woken after it saw its phase released (a release's wakes are paid
        // later), and loom's `join` cannot take an unpark while it blocks: a task on the
        // model's thread would get one there, so `main` runs on a thread of its own as a task.
        let _main = match main_is_task {
            true => thread::spawn(main_loop).join().unwrap(),
            false => main_loop(),
        };
        for task in tasks {
            drop(task.join().unwrap());
        }
    });
}

#[test]
fn tasks_and_a_thread_flat() {
    tasks_and_a_thread(1, 2, 2, 2);
}

/// Three phases at one preemption: a task's waker from one phase meeting the next phase's release.
#[test]
fn tasks_and_a_thread_flat_three_phases() {
    tasks_and_a_thread(1, 2, 3, 1);
}

/// Three tasks: the one whose arrival releases a phase owes the other two their wakes, and
/// (loom's batch being one wake per poll) pays the second in a later poll of its own.
#[test]
fn three_tasks_flat() {
    tasks_and_main(1, 2, 2, 1, true);
}

/// Two tiers: the release comes down from the root, and a task's probe reads the release word.
#[test]
fn tasks_and_a_thread_tree() {
    tasks_and_a_thread(2, 2, 2, 2);
}

/// A wait-only task that enters phase 1 before phase 0 is released (its parent had signalled
/// phase 0), beside a thread that sleeps on phase 0. The release of phase 0 clears `PARKED` without
/// completing the task's wait: a task that stored its waker after that release, on the word
/// the sleeper had marked, must see that the word moved and mark it again, or the release of
/// phase 1 (which may find no sleeper) never wakes it.
#[test]
fn task_between_two_releases() {
    model_bounded(2, || {
        let (_phaser, mut main) = phaser_of_shape(1, 2, Mode::SigWait);
        let mut other = main.register(Mode::SigWait).unwrap();
        main.signal().unwrap();
        let mut consumer = main.register(Mode::Wait).unwrap();
        assert_eq!(consumer.phase(), 1);
        let task = thread::spawn(move || {
            let completed = Poller::new().block_on(consumer.wait_async());
            assert_eq!(completed.unwrap(), 1);
        });
        let other = thread::spawn(move || {
            for phase in 0..2 {
                assert_eq!(other.next().unwrap(), phase);
            }
            other
        });
        assert_eq!(main.wait().unwrap(), 0);
        main.signal().unwrap();
        task.join().unwrap();
        drop(other.join().unwrap());
    });
}

/// A task waits for phase 0, which another task never signals; a thread force-terminates the
/// phaser. The termination changes no release word, so only its wake of the stored wakers, and the
/// task's check of the broken state after storing its waker, end the wait.
#[test]
fn task_sees_termination() {
    model_bounded(2, || {
        let (phaser, mut main) = phaser_of_shape(1, 2, Mode::SigWait);
        let silent = main.register(Mode::SigWait).unwrap();
        let task = thread::spawn(move || {
            let outcome = Poller::new().block_on(main.next_async());
            assert_eq!(outcome, Err(Error::Terminated { phase: 0 }));
            main
        });
        phaser.force_terminate();
        drop(task.join().unwrap());
        drop(silent);
    });
}

/// A timed task and a signalling thread: under loom a timed poll that finds the phase unreleased
/// times out (loom has no clock, and no timer runs), with the error of the blocking form, and
/// the task's next wait completes phase 0 without signalling again.
#[test]
fn timed_task_times_out_without_a_timer() {
    model_bounded(2, || {
        let (_phaser, mut main) = phaser_of_shape(1, 2, Mode::SigWait);
        let mut other = main.register(Mode::SigWait).unwrap();
        let other_id = other.id();
        let task = thread::spawn(move || {
            let mut poller = Poller::new();
            let timed = main.next_async().timeout(Duration::from_secs(3600));
            match poller.block_on(timed) {
                Ok(phase) => assert_eq!(phase, 0),
                Err(Error::Timeout {
                    episode,
                    missing,
                    resumable,
                }) => {
                    assert_eq!(episode, 0);
                    assert!(resumable);
                    assert!(missing.iter().all(|&id| id == other_id), "{missing:?}");
                    assert_eq!(main.phase(), 1); // signalled once
                    assert_eq!(poller.block_on(main.next_async()).unwrap(), 0);
                }
                Err(other) => panic!("{other:?}"),
            }
            main
        });
        assert_eq!(other.next().unwrap(), 0);
        drop(task.join().unwrap());
        drop(other);
    });
}
