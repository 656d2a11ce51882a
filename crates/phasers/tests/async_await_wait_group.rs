//! `Phaser::await_phase_async` and `WaitGroup::wait_async`: the blocking forms' results and
//! errors, async observers beside blocking threads, cancellation that leaves nothing behind, and
//! a wait group of 64 tasks on 2 threads.
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within`.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

mod executor_support;
use executor_support::{block_on, within, Count, Pool, Task, Unpark, HANG};

use phasers::phaser::{AwaitPhaseFuture, WaitGroupFuture};
use phasers::{Error, Mode, Phaser, WaitGroup};

/// How long a test lets a thread settle into a wait before it acts.
const SETTLE: Duration = Duration::from_millis(30);

/// Polls `future` once with `waker`.
fn poll_with<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(waker))
}

/// Returns `Pending` once, waking its task at once: lets the other tasks of a pool run.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

// ---- Phaser::await_phase_async ----

#[test]
fn await_phase_async_returns_the_phase_once_released() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    let count = Count::new();
    let waker = Waker::from(count.clone());
    let mut watch: AwaitPhaseFuture<'_> = phaser.await_phase_async(0);
    assert!(poll_with(&mut watch, &waker).is_pending());
    main.signal().unwrap();
    assert!(
        poll_with(&mut watch, &waker).is_pending(),
        "phase 0 still waits for `other`"
    );
    other.signal().unwrap(); // releases phase 0: wakes the task
    assert!(count.wakes() >= 1, "the release woke no one");
    assert_eq!(poll_with(&mut watch, &waker), Poll::Ready(Ok(1)));
    drop(watch);
    // The checks of the first poll, as the blocking form's.
    for phase in [0, 1, 2, u64::MAX] {
        if phase == 1 {
            continue; // in progress: would wait
        }
        assert_eq!(block_on(phaser.await_phase_async(phase)), Ok(1));
        assert_eq!(phaser.await_phase(phase), Ok(1));
    }
    assert_eq!(main.wait().unwrap(), 0);
    assert_eq!(other.wait().unwrap(), 0);
}

/// Polling after completion panics, as the future's docs say.
#[test]
#[should_panic(expected = "polled after it completed")]
fn await_phase_async_polled_after_completion_panics() {
    let (phaser, _main) = Phaser::new(Mode::SigWait).unwrap();
    let waker = Waker::from(Count::new());
    let mut watch = phaser.await_phase_async(5); // ahead: at once
    assert_eq!(poll_with(&mut watch, &waker), Poll::Ready(Ok(0)));
    let _ = poll_with(&mut watch, &waker);
}

/// Blocking threads run the phases; async observers on two pool threads follow them, each
/// awaiting the phase it last saw: every phase an observer sees completed was signalled by every
/// party, and it sees the phases in order up to the last.
#[test]
fn await_phase_async_beside_blocking_threads() {
    const PARTIES: usize = 3;
    const PHASES: u64 = 300;
    const OBSERVERS: usize = 16;
    let (phaser, main) = Phaser::builder().tiers(2).degree(2).build().unwrap();
    let registrations = main.register_many(Mode::SigWait, PARTIES).unwrap();
    drop(main);
    let arrived: Arc<Vec<AtomicUsize>> =
        Arc::new((0..PHASES).map(|_| AtomicUsize::new(0)).collect());
    let observers: Vec<Task> = (0..OBSERVERS)
        .map(|_| {
            let (phaser, arrived) = (phaser.clone(), arrived.clone());
            Box::pin(async move {
                let mut seen = 0;
                while seen < PHASES {
                    let now = phaser.await_phase_async(seen).await.unwrap();
                    assert!(now > seen, "await_phase_async({seen}) returned {now}");
                    for phase in seen..now.min(PHASES) {
                        assert_eq!(
                            arrived[phase as usize].load(Ordering::Acquire),
                            PARTIES,
                            "phase {phase} seen completed before every party signalled it"
                        );
                    }
                    seen = now;
                }
            }) as Task
        })
        .collect();
    within(move || {
        std::thread::scope(|s| {
            s.spawn(|| Pool::run(2, observers));
            for mut registration in registrations {
                let arrived = arrived.clone();
                s.spawn(move || {
                    for phase in 0..PHASES {
                        arrived[phase as usize].fetch_add(1, Ordering::Release);
                        assert_eq!(registration.next().unwrap(), phase);
                    }
                    registration
                });
            }
        });
        // The last registration's drop completed the phase it was in and ended the phaser.
        assert!(phaser.is_terminated());
    });
}

/// `force_terminate` ends an async observer's wait with the blocking form's `Terminated`, and a
/// later observer of the ended phaser fails from its first poll, as the blocking one does.
#[test]
fn await_phase_async_reports_termination_like_the_blocking_form() {
    let (phaser, _main) = Phaser::new(Mode::SigWait).unwrap();
    let observer = phaser.clone();
    let task = std::thread::spawn(move || block_on(observer.await_phase_async(0)));
    std::thread::sleep(SETTLE);
    phaser.force_terminate();
    assert_eq!(
        within(move || task.join().unwrap()),
        Err(Error::Terminated { phase: 0 })
    );
    let waker = Waker::from(Count::new());
    assert_eq!(
        poll_with(&mut phaser.await_phase_async(0), &waker),
        Poll::Ready(phaser.await_phase(0))
    );
    assert_eq!(phaser.await_phase(0), Err(Error::Terminated { phase: 0 }));
}

/// A registration dropped while its thread panics breaks the phaser: an async observer waiting
/// then, and one that starts later, get the blocking form's `Broken`.
#[test]
fn await_phase_async_reports_a_break_like_the_blocking_form() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let doomed = main.register(Mode::SigWait).unwrap();
    let doomed_id = doomed.id();
    main.signal().unwrap();
    let observer = phaser.clone();
    let (polled, started) = mpsc::channel();
    let task = std::thread::spawn(move || {
        let mut watch = pin!(observer.await_phase_async(0));
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut context = Context::from_waker(&waker);
        assert!(watch.as_mut().poll(&mut context).is_pending());
        polled.send(()).unwrap();
        loop {
            if let Poll::Ready(outcome) = watch.as_mut().poll(&mut context) {
                return outcome;
            }
            std::thread::park();
        }
    });
    started.recv_timeout(HANG).unwrap();
    let panicked = std::thread::spawn(move || {
        let _doomed = doomed;
        panic!("the thread holding the registration panics");
    })
    .join();
    assert!(panicked.is_err());
    let broken = Error::Broken {
        by: doomed_id,
        episode: 0,
    };
    assert_eq!(within(move || task.join().unwrap()), Err(broken.clone()));
    assert_eq!(block_on(phaser.await_phase_async(0)), Err(broken));
    assert_eq!(block_on(phaser.await_phase_async(0)), phaser.await_phase(0));
}

/// Dropped futures, before and after their first poll, leave nothing behind: their wakers are
/// not woken by the release, and the phaser and later observers work as before.
#[test]
fn a_dropped_await_phase_async_leaves_nothing_behind() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    let count = Count::new();
    let waker = Waker::from(count.clone());
    drop(phaser.await_phase_async(0)); // never polled
    for _ in 0..100 {
        let mut watch = phaser.await_phase_async(0);
        assert!(poll_with(&mut watch, &waker).is_pending());
        drop(watch);
    }
    assert_eq!(phaser.arrived(), 0, "an observer signals nothing");
    main.signal().unwrap();
    other.signal().unwrap(); // releases phase 0
    assert_eq!(count.wakes(), 0, "a dropped future was woken");
    assert_eq!(main.wait().unwrap(), 0);
    assert_eq!(other.wait().unwrap(), 0);
    // The phaser goes on, and a new observer is woken by the next release.
    let observer = phaser.clone();
    let task = std::thread::spawn(move || block_on(observer.await_phase_async(1)));
    within(move || {
        std::thread::scope(|s| {
            s.spawn(|| {
                for phase in 1..50 {
                    assert_eq!(other.next().unwrap(), phase);
                }
            });
            for phase in 1..50 {
                assert_eq!(main.next().unwrap(), phase);
            }
        });
        assert_eq!(task.join().unwrap().map(|now| now >= 2), Ok(true));
        assert_eq!(phaser.phase(), 50);
    });
}

// ---- WaitGroup::wait_async ----

/// 64 tasks on 2 threads, 20 rounds: the workers drop their clones after some yields; a few of
/// the 64 are async waiters, and the test's thread waits too. No wait returns before every
/// worker is done.
#[test]
fn wait_async_completes_after_every_clone_is_dropped_64_tasks_on_2_threads() {
    const TASKS: usize = 64;
    const ROUNDS: usize = 20;
    within(|| {
        for round in 0..ROUNDS {
            let done = Arc::new(AtomicUsize::new(0));
            let waited = Arc::new(AtomicUsize::new(0));
            let group = WaitGroup::new();
            let waiters = (0..TASKS).filter(|task| task % 8 == 0).count();
            let workers = TASKS - waiters;
            let tasks: Vec<Task> = (0..TASKS)
                .map(|task| {
                    let member = group.clone();
                    let (done, waited) = (done.clone(), waited.clone());
                    if task % 8 == 0 {
                        Box::pin(async move {
                            let wait: WaitGroupFuture = member.wait_async();
                            wait.await.unwrap();
                            assert_eq!(
                                done.load(Ordering::SeqCst),
                                workers,
                                "round {round}: an async wait returned before every task was done"
                            );
                            waited.fetch_add(1, Ordering::SeqCst);
                        }) as Task
                    } else {
                        Box::pin(async move {
                            for _ in 0..(task * 7 + round) % 5 {
                                YieldNow(false).await;
                            }
                            done.fetch_add(1, Ordering::SeqCst);
                            drop(member); // this task is done
                        }) as Task
                    }
                })
                .collect();
            std::thread::scope(|s| {
                s.spawn(|| Pool::run(2, tasks));
                block_on(group.wait_async()).unwrap();
                assert_eq!(
                    done.load(Ordering::SeqCst),
                    workers,
                    "round {round}: the wait returned before every task was done"
                );
            });
            assert_eq!(waited.load(Ordering::SeqCst), waiters);
        }
    });
}

/// A clone dropped while its thread panics breaks the group: an async waiter waiting then gets
/// `Broken`, as the blocking waiter beside it, and a later async wait fails in its first poll.
#[test]
fn a_panicking_clone_breaks_wait_async() {
    let group = WaitGroup::new();
    let doomed = group.clone();
    let blocking = group.clone();
    let later = group.clone();
    let async_waiter = {
        let member = group.clone();
        std::thread::spawn(move || block_on(member.wait_async()))
    };
    let blocking_waiter = std::thread::spawn(move || blocking.wait());
    std::thread::sleep(SETTLE);
    let panicked = std::thread::spawn(move || {
        let _doomed = doomed;
        panic!("the task holding the clone panics");
    })
    .join();
    assert!(panicked.is_err());
    let (async_outcome, blocking_outcome) = within(move || {
        (
            async_waiter.join().unwrap(),
            blocking_waiter.join().unwrap(),
        )
    });
    assert!(
        matches!(async_outcome, Err(Error::Broken { episode: 0, .. })),
        "{async_outcome:?}"
    );
    assert_eq!(async_outcome, blocking_outcome);
    let waker = Waker::from(Count::new());
    assert_eq!(
        poll_with(&mut later.wait_async(), &waker),
        Poll::Ready(async_outcome)
    );
    drop(group);
}

/// Futures dropped before their first poll and mid-wait count their clones as done, wake nothing
/// later, and leave the group to its other waiters, async and blocking.
#[test]
fn a_dropped_wait_async_keeps_the_group_usable() {
    let group = WaitGroup::new();
    let task = group.clone();
    let count = Count::new();
    let waker = Waker::from(count.clone());
    drop(group.clone().wait_async()); // never polled: the clone is dropped
    for _ in 0..10 {
        let mut wait = group.clone().wait_async();
        assert!(poll_with(&mut wait, &waker).is_pending());
        drop(wait); // mid-wait: its part stays done
    }
    assert_eq!(format!("{group:?}"), "WaitGroup { outstanding: 2 }");
    let other = group.clone();
    let async_waiter = std::thread::spawn(move || block_on(other.wait_async()));
    let blocking = group.clone();
    let blocking_waiter = std::thread::spawn(move || blocking.wait());
    std::thread::sleep(SETTLE);
    assert!(!async_waiter.is_finished() && !blocking_waiter.is_finished());
    drop(task);
    within(move || {
        assert_eq!(block_on(group.wait_async()), Ok(()));
        assert_eq!(async_waiter.join().unwrap(), Ok(()));
        assert_eq!(blocking_waiter.join().unwrap(), Ok(()));
    });
    assert_eq!(count.wakes(), 0, "a dropped future was woken");
}

/// A future dropped mid-wait while its thread unwinds (a task that panicked after it started
/// waiting) does not break the group: its part was done already, and its registration had left
/// phase 0.
#[test]
fn a_wait_async_dropped_while_panicking_mid_wait_does_not_break_the_group() {
    let group = WaitGroup::new();
    let task = group.clone();
    let member = group.clone();
    let panicked = std::thread::spawn(move || {
        let waker = Waker::from(Count::new());
        let mut wait = member.wait_async();
        assert!(poll_with(&mut wait, &waker).is_pending());
        panic!("the waiting task panics, dropping its future");
    })
    .join();
    assert!(panicked.is_err());
    let waiter = std::thread::spawn(move || block_on(group.wait_async()));
    std::thread::sleep(SETTLE);
    drop(task);
    assert_eq!(within(move || waiter.join().unwrap()), Ok(()));
}
