//! `Registration::next_async` and `wait_async`: async tasks and blocking threads on one phaser,
//! accumulators, cancellation, a phaser broken while tasks wait, and 64 tasks on 2 threads.
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within`.

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

mod executor_support;
use executor_support::{
    block_on, poll_each_pending, poll_once, poll_while_paying, within, Count, Pool, Task, Unpark,
    HANG,
};

use phasers::phaser::PhaseFuture;
use phasers::{Accumulator, Error, Mode, Op, Phaser, PhaserBuilder, Registration};

/// How many parties signalled each phase, counted before their signals: once a phase is released,
/// its count must be every party (the barrier invariant).
struct Ledger {
    arrived: Vec<AtomicUsize>,
    parties: usize,
}

impl Ledger {
    fn new(parties: usize, phases: usize) -> Arc<Self> {
        Arc::new(Ledger {
            arrived: (0..phases).map(|_| AtomicUsize::new(0)).collect(),
            parties,
        })
    }

    fn arrive(&self, phase: u64) {
        self.arrived[phase as usize].fetch_add(1, Ordering::Release);
    }

    fn check(&self, phase: u64) {
        let arrived = self.arrived[phase as usize].load(Ordering::Acquire);
        assert_eq!(
            arrived, self.parties,
            "phase {phase} was released after {arrived} of {} signals",
            self.parties
        );
    }
}

/// What party `party` sends in `phase`; the sum over the parties is what every party checks.
fn contribution(party: usize, phase: u64) -> i64 {
    (party as i64 + 1) * 1000 + phase as i64
}

fn expected_sum(parties: usize, phase: u64) -> i64 {
    (0..parties).map(|party| contribution(party, phase)).sum()
}

/// A blocking thread and `tasks` async tasks on `threads` threads share one phaser built by
/// `builder`, for `phases` phases; every party sends to a sum accumulator and checks the sum and
/// the barrier invariant after each phase.
fn mixed_parties(builder: PhaserBuilder, tasks: usize, threads: usize, phases: u64) {
    let (phaser, mut main) = builder.mode(Mode::SigWait).build().unwrap();
    let sum = Accumulator::<i64>::new(&phaser, Op::Sum).unwrap();
    let parties = tasks + 1;
    let ledger = Ledger::new(parties, phases as usize);
    let futures: Vec<Task> = main
        .register_many(Mode::SigWait, tasks)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(index, mut registration)| {
            let (sum, ledger) = (sum.clone(), ledger.clone());
            let party = index + 1;
            Box::pin(async move {
                for phase in 0..phases {
                    sum.send(&mut registration, contribution(party, phase))
                        .unwrap();
                    ledger.arrive(phase);
                    assert_eq!(registration.next_async().await.unwrap(), phase);
                    ledger.check(phase);
                    assert_eq!(sum.result(), expected_sum(parties, phase));
                }
            }) as Task
        })
        .collect();
    within(move || {
        std::thread::scope(|s| {
            s.spawn(|| Pool::run(threads, futures));
            for phase in 0..phases {
                sum.send(&mut main, contribution(0, phase)).unwrap();
                ledger.arrive(phase);
                assert_eq!(main.next().unwrap(), phase);
                ledger.check(phase);
                assert_eq!(sum.result(), expected_sum(parties, phase));
            }
        });
        assert_eq!(phaser.phase(), phases);
    });
}

#[test]
fn a_thread_and_tasks_share_a_flat_phaser() {
    mixed_parties(Phaser::builder().tiers(1), 7, 2, 200);
}

#[test]
fn a_thread_and_tasks_share_a_tiered_phaser() {
    mixed_parties(Phaser::builder().tiers(2).degree(2), 7, 2, 200);
}

/// Each task on a thread of its own, blocked in `block_on`: every task's waker is a parked
/// thread, and the release wakes it through the phaser's wakers, beside threads that park in the
/// kernel on the same word.
#[test]
fn tasks_on_threads_of_their_own_and_blocking_threads() {
    const PHASES: u64 = 300;
    let (phaser, main) = Phaser::builder().tiers(2).degree(2).build().unwrap();
    let ledger = Ledger::new(6, PHASES as usize);
    let registrations = main.register_many(Mode::SigWait, 6).unwrap();
    drop(main);
    within(move || {
        std::thread::scope(|s| {
            for (index, mut registration) in registrations.into_iter().enumerate() {
                let ledger = ledger.clone();
                s.spawn(move || {
                    for phase in 0..PHASES {
                        ledger.arrive(phase);
                        let completed = if index % 2 == 0 {
                            block_on(registration.next_async())
                        } else {
                            registration.next()
                        };
                        assert_eq!(completed.unwrap(), phase);
                        ledger.check(phase);
                    }
                    registration
                });
            }
        });
        let _ = phaser;
    });
}

/// Seed 000's dynamic parallelism: a task registers children from inside its async body (here
/// at phases 2, 5 and 8), each child joins at the parent's current phase, runs three phases as a
/// task of its own and leaves by dropping its registration, while a sibling task and the parent
/// go on. Every wait returns the phase it waited for.
#[test]
fn a_task_registers_children_from_inside() {
    const PHASES: u64 = 12;
    const LIFE: u64 = 3;
    let (phaser, parent) = Phaser::new(Mode::SigWait).unwrap();
    let sibling = parent.register(Mode::SigWait).unwrap();
    within(move || {
        let sibling = std::thread::spawn(move || {
            let mut sibling = sibling;
            block_on(async {
                for phase in 0..PHASES {
                    assert_eq!(sibling.next_async().await.unwrap(), phase);
                }
            });
            sibling // kept until the parent is done: its drop would be a leave
        });
        let mut parent = parent;
        let children = block_on(async {
            let mut children = Vec::new();
            for phase in 0..PHASES {
                // A child ends within the parent's phases: one still registered after them
                // would wait for the parent forever.
                if phase % 3 == 2 && phase + LIFE <= PHASES {
                    let mut child = parent.register(Mode::SigWait).unwrap();
                    assert_eq!(child.phase(), phase, "a child joins at its parent's phase");
                    children.push(std::thread::spawn(move || {
                        block_on(async {
                            for own in phase..phase + LIFE {
                                assert_eq!(child.next_async().await.unwrap(), own);
                            }
                        });
                        drop(child); // leaves: the phases after its life do not wait for it
                    }));
                }
                assert_eq!(parent.next_async().await.unwrap(), phase);
            }
            children
        });
        for child in children {
            child.join().unwrap();
        }
        drop(sibling.join().unwrap());
        assert_eq!(phaser.phase(), PHASES);
    });
}

/// Split phases: `signal` then `wait_async`, and `wait_async` signalling itself.
#[test]
fn wait_async_after_signal_and_without() {
    let (_phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    within(move || {
        std::thread::scope(|s| {
            s.spawn(|| {
                for phase in 0..100 {
                    other.signal().unwrap();
                    assert_eq!(block_on(other.wait_async()).unwrap(), phase);
                }
            });
            for phase in 0..100 {
                assert_eq!(block_on(main.wait_async()).unwrap(), phase);
            }
        });
    });
}

#[test]
fn signal_only_and_wait_only_registrations() {
    let (phaser, creator) = Phaser::new(Mode::SigWait).unwrap();
    let mut producer = creator.register(Mode::Sig).unwrap();
    let mut consumer = creator.register(Mode::Wait).unwrap();
    drop(creator);
    // A signal-only `next_async` signals and completes in its first poll, as `next` returns.
    assert!(matches!(
        poll_once(&mut producer.next_async()),
        Poll::Ready(Ok(0))
    ));
    // It never waits: `wait_async` fails as `wait` does, from its first poll.
    let refused = poll_once(&mut producer.wait_async());
    assert!(
        matches!(refused, Poll::Ready(Err(Error::Capability { .. }))),
        "{refused:?}"
    );
    assert_eq!(producer.phase(), 1);
    assert_eq!(block_on(consumer.next_async()).unwrap(), 0);
    let mut pending = consumer.wait_async();
    assert!(poll_once(&mut pending).is_pending());
    drop(pending); // a wait-only registration signals nothing: nothing is left behind
    producer.signal().unwrap();
    assert_eq!(block_on(consumer.wait_async()).unwrap(), 1);
    assert_eq!(phaser.phase(), 2);
}

/// A future dropped before its first poll did nothing: the phase is neither signalled nor waited.
#[test]
fn dropped_before_its_first_poll() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    drop(main.next_async());
    drop(main.wait_async());
    assert_eq!(main.phase(), 0);
    assert_eq!(phaser.arrived(), 0);
    other.signal().unwrap();
    assert_eq!(phaser.phase(), 0, "phase 0 must still wait for main");
    assert_eq!(main.next().unwrap(), 0);
    assert_eq!(other.wait().unwrap(), 0);
    assert_eq!(phaser.phase(), 1);
}

/// A future dropped after its signal leaves a split phase: the next `next()` waits for the phase
/// already signalled, without signalling again, and the phases after it run as usual.
#[test]
fn dropped_after_signalling_then_next() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    let mut next = main.next_async();
    assert!(poll_once(&mut next).is_pending());
    drop(next);
    assert_eq!(main.phase(), 1, "signalled phase 0");
    assert_eq!(phaser.arrived(), 1);
    // A second future does not signal phase 0 again (that would be refused, or corrupt the
    // count): it waits for it, like the blocking `wait` after `signal`.
    let mut again = main.next_async();
    assert!(poll_once(&mut again).is_pending());
    drop(again);
    assert_eq!(phaser.arrived(), 1);
    within(move || {
        std::thread::scope(|s| {
            s.spawn(|| {
                for phase in 0..50 {
                    assert_eq!(other.next().unwrap(), phase);
                }
            });
            for phase in 0..50 {
                assert_eq!(main.next().unwrap(), phase);
            }
        });
        assert_eq!(phaser.phase(), 50);
    });
}

/// A future dropped while its waker is stored leaves the stored waker behind for nothing: the
/// release does not wake the dropped task's waker.
#[test]
fn a_dropped_future_is_not_woken() {
    let (_phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    let count = Count::new();
    let waker = Waker::from(count.clone());
    let mut next = main.next_async();
    assert!(Pin::new(&mut next)
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    drop(next);
    other.signal().unwrap(); // releases phase 0
    assert_eq!(count.wakes(), 0);
    assert_eq!(main.wait().unwrap(), 0);
}

/// A registration dropped while its thread panics breaks the phaser: a task waiting then, and one
/// that starts later, get the blocking form's `Error::Broken`.
#[test]
fn broken_by_a_panic_while_tasks_wait() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut waiter = main.register(Mode::SigWait).unwrap();
    let doomed = main.register(Mode::SigWait).unwrap();
    let doomed_id = doomed.id();
    main.signal().unwrap();
    let (polled, started) = mpsc::channel();
    let task = std::thread::spawn(move || {
        let mut next = pin!(waiter.next_async());
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut context = Context::from_waker(&waker);
        assert!(next.as_mut().poll(&mut context).is_pending());
        polled.send(()).unwrap();
        loop {
            if let Poll::Ready(outcome) = next.as_mut().poll(&mut context) {
                return outcome;
            }
            std::thread::park();
        }
    });
    started.recv_timeout(HANG).unwrap();
    let panicked = std::thread::spawn(move || {
        let _doomed = doomed;
        panic!("the task holding the registration panics");
    })
    .join();
    assert!(panicked.is_err());
    let outcome = within(move || task.join().unwrap());
    let broken = Error::Broken {
        by: doomed_id,
        episode: 0,
    };
    assert_eq!(outcome, Err(broken.clone()));
    let _ = &phaser;
    // A later future fails as the blocking wait does.
    assert_eq!(block_on(main.wait_async()), main.wait());
    let mut late = main.register(Mode::Wait);
    assert!(late.is_err() || block_on(late.as_mut().unwrap().wait_async()).is_err());
}

/// `force_terminate` ends the wait of a task with the blocking form's `Terminated`.
#[test]
fn terminated_while_a_task_waits() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let _silent = main.register(Mode::SigWait).unwrap();
    let task = std::thread::spawn(move || block_on(main.next_async()));
    std::thread::sleep(Duration::from_millis(20));
    phaser.force_terminate();
    assert_eq!(
        within(move || task.join().unwrap()),
        Err(Error::Terminated { phase: 0 })
    );
}

/// 64 tasks on 2 threads, 300 phases: no task starts phase `p + 1` before all signalled `p`.
/// Some tasks split their phases (`signal`, then `wait_async`); the others use `next_async`.
#[test]
fn sixty_four_tasks_on_two_threads() {
    stress(Phaser::builder().tiers(1), 64, 300);
    stress(Phaser::builder().tiers(3).degree(4), 64, 300);
}

fn stress(builder: PhaserBuilder, tasks: usize, phases: u64) {
    let (phaser, main) = builder.mode(Mode::SigWait).build().unwrap();
    let ledger = Ledger::new(tasks, phases as usize);
    let futures: Vec<Task> = main
        .register_many(Mode::SigWait, tasks)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(index, registration)| {
            let ledger = ledger.clone();
            Box::pin(run_phases(registration, ledger, phases, index % 4 == 0)) as Task
        })
        .collect();
    drop(main);
    within(move || {
        Pool::run(2, futures);
        // The last task's drop completes the phase it was in, then terminates the phaser.
        assert_eq!(phaser.phase(), phases + 1);
        assert!(phaser.is_terminated());
    });
}

async fn run_phases(mut registration: Registration, ledger: Arc<Ledger>, phases: u64, split: bool) {
    for phase in 0..phases {
        ledger.arrive(phase);
        let completed = if split {
            registration.signal().unwrap();
            registration.wait_async().await
        } else {
            registration.next_async().await
        };
        assert_eq!(completed.unwrap(), phase);
        ledger.check(phase);
    }
}

/// A thousand tasks on two threads, on the default phaser: a scale no thread per participant
/// reaches on two cores.
#[test]
fn a_thousand_tasks_on_two_threads() {
    stress(Phaser::builder(), 1000, 50);
}

/// A phaser, its creator's registration and `waiters` more.
fn waiting_tasks(waiters: usize) -> (Phaser, Registration, Vec<Registration>) {
    let (phaser, main) = Phaser::new(Mode::SigWait).unwrap();
    let others = main.register_many(Mode::SigWait, waiters).unwrap();
    (phaser, main, others)
}

/// A `next_async` of each of `registrations`, polled once with `waker`: each signalled and
/// waits, its waker stored.
fn waiting<'a>(registrations: &'a mut [Registration], waker: &Waker) -> Vec<PhaseFuture<'a>> {
    let mut futures: Vec<_> = registrations
        .iter_mut()
        .map(Registration::next_async)
        .collect();
    poll_each_pending(&mut futures, waker);
    futures
}

/// The task whose arrival releases a phase that many tasks wait for wakes them a batch per poll
/// (wakes past a worker's run queue would spill into its executor's shared queue): its future
/// stays pending, woken by itself, until every waiter is woken, each exactly once.
#[test]
fn the_releasing_task_wakes_many_waiters_over_several_polls() {
    let (_phaser, mut main, mut others) = waiting_tasks(1_000);
    let waiters = Count::new();
    let waiter_waker = Waker::from(waiters.clone());
    let mut futures = waiting(&mut others, &waiter_waker);
    let (released, polls) = poll_while_paying(&mut main.next_async(), || {
        assert!(
            waiters.wakes() < 1_000,
            "woke every waiter, yet stayed pending"
        );
    });
    assert_eq!(released.unwrap(), 0);
    assert!(polls > 1, "1,000 wakes were made in one poll");
    assert_eq!(waiters.wakes(), 1_000);
    for future in &mut futures {
        let polled = Pin::new(future).poll(&mut Context::from_waker(&waiter_waker));
        assert!(matches!(polled, Poll::Ready(Ok(0))));
    }
}

/// A releasing task dropped before it woke every waiter (cancelled, or its runtime shut down)
/// wakes the rest as it drops: no waiter is left asleep on a released phase.
#[test]
fn a_releasing_task_dropped_while_waking_wakes_the_rest() {
    let (_phaser, mut main, mut others) = waiting_tasks(1_000);
    let waiters = Count::new();
    let waiter_waker = Waker::from(waiters.clone());
    let _waiting = waiting(&mut others, &waiter_waker);
    let mut next = main.next_async();
    let polled = Pin::new(&mut next).poll(&mut Context::from_waker(&Waker::from(Count::new())));
    assert!(polled.is_pending(), "1,000 wakes were made in one poll");
    assert!(waiters.wakes() < 1_000);
    drop(next);
    assert_eq!(waiters.wakes(), 1_000);
    // The phase was released all the same, and the releaser's next wait goes on from it.
    assert_eq!(main.phase(), 1);
}

/// A release that user code makes inside a task's poll (here a blocking `next` in the advance
/// action that the task's arrival runs) wakes its waiters at once: only the task's own release
/// is paid a batch per poll. Paid after the action instead, the waiters of a phaser the action
/// goes on to wait on would never run, and the action would wait for them forever.
#[test]
fn a_release_inside_an_advance_action_wakes_its_waiters_at_once() {
    within(|| {
        let (_inner, inner_main, mut inner_others) = waiting_tasks(1_000);
        let waiters = Count::new();
        let waiter_waker = Waker::from(waiters.clone());
        let _waiting = waiting(&mut inner_others, &waiter_waker);
        let inner_main = Mutex::new(inner_main);
        let woken_during_action = Arc::new(AtomicUsize::new(0));
        let (seen, counted) = (woken_during_action.clone(), waiters.clone());
        let (_outer, mut outer) = Phaser::builder()
            .on_advance(move |phase, _| {
                // Phase 0 only: the drop of `outer` at the end advances the phaser once more.
                if phase == 0 {
                    assert_eq!(inner_main.lock().unwrap().next().unwrap(), 0);
                    seen.store(counted.wakes(), Ordering::Relaxed);
                }
                ControlFlow::Continue(())
            })
            .build()
            .unwrap();
        let polled = poll_once(&mut outer.next_async());
        assert_eq!(woken_during_action.load(Ordering::Relaxed), 1_000);
        // The outer release found no task waiting: nothing owed, so it completes in this poll.
        assert!(matches!(polled, Poll::Ready(Ok(0))));
    });
}
