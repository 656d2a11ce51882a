//! `WaitGroup`: a wait returns only once every other clone is dropped, with 64 tasks on the 2-core
//! CI machines (so most of them are descheduled while the waiter waits); timed waits give up
//! naming how many tasks are outstanding; clones made while a wait runs are waited for; a task
//! that panics breaks the wait instead of hanging it.

mod phaser_support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use phaser_support::{within, HANG};
use phasers::{Error, WaitGroup};

/// How long a test lets a thread settle into a blocking call before it acts.
const SETTLE: Duration = Duration::from_millis(30);

#[test]
fn wait_returns_only_after_every_clone_is_dropped_64_tasks() {
    const TASKS: usize = 64;
    const ROUNDS: usize = 20;
    within("64 tasks, 20 rounds", || {
        for round in 0..ROUNDS {
            let done = Arc::new(AtomicUsize::new(0));
            let group = WaitGroup::new();
            let handles: Vec<_> = (0..TASKS)
                .map(|task| {
                    let (member, done) = (group.clone(), done.clone());
                    std::thread::spawn(move || {
                        // Some work of varying length, so the drops come in every order.
                        for _ in 0..(task * 7 + round) % 5 {
                            std::thread::yield_now();
                        }
                        done.fetch_add(1, Ordering::SeqCst);
                        drop(member);
                    })
                })
                .collect();
            group.wait().unwrap();
            assert_eq!(
                done.load(Ordering::SeqCst),
                TASKS,
                "round {round}: the wait returned before every task was done"
            );
            for handle in handles {
                handle.join().unwrap();
            }
        }
    });
}

#[test]
fn wait_timeout_gives_up_on_a_task_that_never_finishes() {
    let group = WaitGroup::new();
    let never = group.clone();
    let finished = group.clone();
    drop(finished);
    let timeout = Duration::from_millis(50);
    let start = Instant::now();
    let err = group.clone().wait_timeout(timeout).unwrap_err();
    let waited = start.elapsed();
    match &err {
        Error::Timeout {
            episode: 0,
            missing,
            resumable: true,
        } => {
            assert_eq!(
                missing.len(),
                2,
                "`group` and `never` are outstanding: {err}"
            )
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(err.to_string().contains("2 participant(s)"), "{err}");
    assert!(
        waited >= timeout,
        "gave up after {waited:?}, before {timeout:?}"
    );
    assert!(waited < HANG, "gave up only after {waited:?}");
    // The deadline form, with one task outstanding once `group` waits.
    let deadline = Instant::now() + timeout;
    match group.wait_deadline(deadline) {
        Err(Error::Timeout { missing, .. }) => assert_eq!(missing.len(), 1),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(Instant::now() >= deadline);
    drop(never);
}

#[test]
fn timed_waits_succeed_once_the_tasks_are_done() {
    let group = WaitGroup::new();
    let task = group.clone();
    let other = group.clone();
    let worker = std::thread::spawn(move || {
        std::thread::sleep(SETTLE);
        drop(task);
    });
    // Two waiters: each waits for the task and for the other waiter's part.
    let other_waiter = std::thread::spawn(move || other.wait_deadline(Instant::now() + HANG));
    within("timed waits", move || {
        assert_eq!(group.wait_timeout(Duration::MAX), Ok(()));
        assert_eq!(other_waiter.join().unwrap(), Ok(()));
        worker.join().unwrap();
    });
}

/// A clone made from a live clone while a wait runs joins the group: the wait waits for it too
/// (its parent, not dropped yet, holds the group until it has joined), as with crossbeam's.
#[test]
fn clones_made_while_waiting_are_waited_for() {
    let group = WaitGroup::new();
    let parent = group.clone();
    let child_done = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = mpsc::channel();
    let flag = child_done.clone();
    let spawner = std::thread::spawn(move || {
        started_rx.recv().unwrap();
        std::thread::sleep(SETTLE); // the wait is running by now
        let child = parent.clone();
        drop(parent); // the parent is done; the child is not
        std::thread::sleep(SETTLE);
        flag.store(true, Ordering::SeqCst);
        drop(child);
    });
    within("a wait with a late clone", move || {
        started_tx.send(()).unwrap();
        group.wait().unwrap();
        assert!(
            child_done.load(Ordering::SeqCst),
            "the wait returned before the clone made during it was dropped"
        );
    });
    spawner.join().unwrap();
}

/// A task whose clone is dropped while it panics does not count as done: the waiter gets
/// `Error::Broken`, at once if it is already waiting, instead of a hang or a silent success.
#[test]
fn a_panicking_task_breaks_the_wait_instead_of_hanging() {
    let group = WaitGroup::new();
    let healthy = group.clone();
    let doomed = group.clone();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let panicker = std::thread::spawn(move || {
        let _member = doomed;
        started_rx.recv().unwrap();
        std::thread::sleep(SETTLE);
        panic!("a task fails while holding its clone");
    });
    let outcome = within("a wait on a panicking task", move || {
        started_tx.send(()).unwrap();
        group.wait()
    });
    assert!(
        matches!(outcome, Err(Error::Broken { episode: 0, .. })),
        "{outcome:?}"
    );
    assert!(panicker.join().is_err());
    // The other clones learn it too, and cloning a broken group gives clones that say so.
    let late = healthy.clone();
    assert!(matches!(late.wait(), Err(Error::Broken { .. })));
    assert!(matches!(healthy.wait(), Err(Error::Broken { .. })));
}

#[test]
fn several_waiters_all_return() {
    const WAITERS: usize = 4;
    const TASKS: usize = 16;
    let group = WaitGroup::new();
    let done = Arc::new(AtomicUsize::new(0));
    let waiters: Vec<_> = (0..WAITERS)
        .map(|_| {
            let (member, done) = (group.clone(), done.clone());
            std::thread::spawn(move || {
                member.wait().unwrap();
                done.load(Ordering::SeqCst)
            })
        })
        .collect();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (member, done) = (group.clone(), done.clone());
            std::thread::spawn(move || {
                std::thread::sleep(SETTLE);
                done.fetch_add(1, Ordering::SeqCst);
                drop(member);
            })
        })
        .collect();
    drop(group);
    within("several waiters", move || {
        for waiter in waiters {
            assert_eq!(waiter.join().unwrap(), TASKS);
        }
        for task in tasks {
            task.join().unwrap();
        }
    });
}

#[test]
fn default_debug_and_a_lone_group() {
    let group = WaitGroup::default();
    assert_eq!(format!("{group:?}"), "WaitGroup { outstanding: 1 }");
    let clones: Vec<WaitGroup> = (0..3).map(|_| group.clone()).collect();
    assert_eq!(format!("{group:?}"), "WaitGroup { outstanding: 4 }");
    drop(clones);
    assert_eq!(group.wait_timeout(Duration::ZERO), Ok(()));
}

/// `WaitGroup` is `Send` and `Sync`, like crossbeam's: threads may clone it through a reference.
#[test]
fn clones_through_a_shared_reference() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<WaitGroup>();
    let group = WaitGroup::new();
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (group, done) = (&group, &done);
            s.spawn(move || {
                let member = group.clone();
                done.fetch_add(1, Ordering::SeqCst);
                drop(member);
            });
        }
    });
    assert_eq!(done.load(Ordering::SeqCst), 8);
    assert_eq!(group.wait(), Ok(()));
}
