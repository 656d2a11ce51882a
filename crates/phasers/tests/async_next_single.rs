//! `Registration::next_single_async`: the action runs exactly once per phase, in the one task or
//! thread that claimed it, after every signal and before anyone is released; tasks and blocking
//! threads share one phaser; the blocking form's errors; cancellation at each state (before the
//! first poll, a follower after signalling, the runner before its action, a follower while the
//! runner is elsewhere); a panicking action; and 64 tasks on 2 threads.
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within`.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Waker};
use std::time::Duration;

mod executor_support;
use executor_support::{block_on, poll_once, within, Count, Pool, Task, HANG};

use phasers::{Accumulator, Error, Mode, Op, Phaser, PhaserBuilder, Registration};

/// What the parties record: arrivals per party, and per phase the action's runs and the `Some`s.
struct Record {
    arrived: Vec<AtomicU64>,
    actions: Vec<AtomicUsize>,
    somes: Vec<AtomicUsize>,
    /// Phases whose action has run.
    done: AtomicU64,
}

impl Record {
    fn new(parties: usize, phases: u64) -> Arc<Self> {
        Arc::new(Record {
            arrived: (0..parties).map(|_| AtomicU64::new(0)).collect(),
            actions: (0..phases).map(|_| AtomicUsize::new(0)).collect(),
            somes: (0..phases).map(|_| AtomicUsize::new(0)).collect(),
            done: AtomicU64::new(0),
        })
    }

    fn arrive(&self, party: usize, phase: u64) {
        self.arrived[party].store(phase + 1, Ordering::Relaxed);
    }

    /// The action of `phase`: every party has arrived, and no action of it ran before.
    fn action(&self, phase: u64) -> u64 {
        for (party, arrived) in self.arrived.iter().enumerate() {
            let seen = arrived.load(Ordering::Relaxed);
            assert!(
                seen > phase,
                "the action of phase {phase} ran before party {party} signalled ({seen})"
            );
        }
        let before = self.actions[phase as usize].fetch_add(1, Ordering::Relaxed);
        assert_eq!(before, 0, "the action of phase {phase} ran twice");
        self.done.store(phase + 1, Ordering::Relaxed);
        phase
    }

    /// A party was released from `phase` with `ran` (what its call returned).
    fn released(&self, party: usize, phase: u64, ran: Option<u64>) {
        if let Some(returned) = ran {
            assert_eq!(returned, phase, "Some carries the action's result");
            self.somes[phase as usize].fetch_add(1, Ordering::Relaxed);
        }
        let done = self.done.load(Ordering::Relaxed);
        assert_eq!(
            done,
            phase + 1,
            "party {party} was released from phase {phase} after {done} action(s)"
        );
    }

    fn check_end(&self) {
        for (phase, (actions, somes)) in self.actions.iter().zip(&self.somes).enumerate() {
            assert_eq!(
                actions.load(Ordering::Relaxed),
                1,
                "actions of phase {phase}"
            );
            assert_eq!(somes.load(Ordering::Relaxed), 1, "Somes of phase {phase}");
        }
    }
}

/// A task that calls `next_single_async` for `phases` phases as party `party`.
async fn single_phases(
    mut registration: Registration,
    record: Arc<Record>,
    party: usize,
    phases: u64,
) {
    for phase in 0..phases {
        record.arrive(party, phase);
        let ran = registration
            .next_single_async(|| record.action(phase))
            .await
            .unwrap();
        record.released(party, phase, ran);
        assert_eq!(registration.phase(), phase + 1);
    }
}

/// `tasks` tasks on `threads` threads run `phases` phases of `next_single_async`.
fn tasks_only(builder: PhaserBuilder, tasks: usize, threads: usize, phases: u64) {
    let (phaser, main) = builder.mode(Mode::SigWaitSingle).build().unwrap();
    let record = Record::new(tasks, phases);
    let futures: Vec<Task> = main
        .register_many(Mode::SigWaitSingle, tasks)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(party, registration)| {
            Box::pin(single_phases(registration, record.clone(), party, phases)) as Task
        })
        .collect();
    drop(main);
    within(move || {
        Pool::run(threads, futures);
        record.check_end();
        // The last task's drop completes the phase it was in, then terminates the phaser.
        assert_eq!(phaser.phase(), phases + 1);
        assert!(phaser.is_terminated());
    });
}

#[test]
fn sixty_four_tasks_on_two_threads() {
    tasks_only(Phaser::builder().tiers(1), 64, 2, 200);
    tasks_only(Phaser::builder().tiers(3).degree(4), 64, 2, 200);
}

#[test]
fn two_tasks_on_threads_of_their_own() {
    tasks_only(Phaser::builder(), 2, 2, 500);
}

/// Blocking threads in `next_single`, tasks in `next_single_async` and a task in plain
/// `next_async` share one phaser: the action runs once per phase, sometimes in a thread,
/// sometimes in a task, and nobody (the plain task included) is released before it ran.
#[test]
fn blocking_threads_and_tasks_share_a_phaser() {
    const THREADS: usize = 2;
    const TASKS: usize = 8;
    const PHASES: u64 = 300;
    let (phaser, main) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let parties = THREADS + TASKS + 1;
    let record = Record::new(parties, PHASES);
    let mut registrations = main
        .register_many(Mode::SigWaitSingle, parties - 1)
        .unwrap();
    registrations.push(main.register(Mode::SigWait).unwrap());
    drop(main);
    let in_threads = Arc::new(AtomicUsize::new(0));
    let record_end = record.clone();
    let counted = in_threads.clone();
    within(move || {
        std::thread::scope(|s| {
            let mut registrations = registrations.into_iter().enumerate();
            for (party, mut registration) in registrations.by_ref().take(THREADS) {
                let (record, in_threads) = (&record, &in_threads);
                s.spawn(move || {
                    for phase in 0..PHASES {
                        record.arrive(party, phase);
                        let ran = registration.next_single(|| record.action(phase)).unwrap();
                        if ran.is_some() {
                            in_threads.fetch_add(1, Ordering::Relaxed);
                        }
                        record.released(party, phase, ran);
                    }
                });
            }
            let mut futures: Vec<Task> = Vec::new();
            for (party, mut registration) in registrations {
                let record = record.clone();
                if registration.mode() == Mode::SigWait {
                    futures.push(Box::pin(async move {
                        for phase in 0..PHASES {
                            record.arrive(party, phase);
                            assert_eq!(registration.next_async().await.unwrap(), phase);
                            record.released(party, phase, None);
                        }
                    }));
                } else {
                    futures.push(Box::pin(single_phases(registration, record, party, PHASES)));
                }
            }
            Pool::run(2, futures);
        });
    });
    record_end.check_end();
    assert_eq!(phaser.phase(), PHASES + 1);
    // Which side runs each action is a race; both must be able to.
    eprintln!(
        "actions run in threads: {} of {PHASES}",
        counted.load(Ordering::Relaxed)
    );
}

/// The accumulators' results of the phase are available inside an action run by a task.
#[test]
fn the_action_sees_the_phase_sum() {
    const TASKS: usize = 6;
    const PHASES: u64 = 100;
    let (phaser, main) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let sum = Accumulator::<i64>::new(&phaser, Op::Sum).unwrap();
    let totals = Arc::new(std::sync::Mutex::new(Vec::new()));
    let futures: Vec<Task> = main
        .register_many(Mode::SigWaitSingle, TASKS)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(party, mut registration)| {
            let (sum, totals) = (sum.clone(), totals.clone());
            Box::pin(async move {
                for phase in 0..PHASES {
                    sum.send(&mut registration, (party as i64 + 1) * 100 + phase as i64)
                        .unwrap();
                    registration
                        .next_single_async(|| totals.lock().unwrap().push(sum.result()))
                        .await
                        .unwrap();
                }
            }) as Task
        })
        .collect();
    drop(main);
    let seen = totals.clone();
    within(move || Pool::run(2, futures));
    let expected: Vec<i64> = (0..PHASES as i64)
        .map(|phase| (1..=TASKS as i64).map(|p| p * 100 + phase).sum())
        .collect();
    assert_eq!(*seen.lock().unwrap(), expected);
}

/// The first poll returns the blocking form's errors, and changes nothing when it does.
#[test]
fn the_blocking_forms_errors() {
    // Not SigWaitSingle.
    let (_phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let blocking = main.next_single(|| ()).unwrap_err();
    let mut ran = false;
    let error = block_on(main.next_single_async(|| ran = true)).unwrap_err();
    assert!(matches!(error, Error::Capability { .. }), "{error:?}");
    assert_eq!(error, blocking);
    assert!(!ran);
    assert_eq!(main.phase(), 0);

    // In the middle of a split phase.
    let (phaser, mut main) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let mut other = main.register(Mode::SigWaitSingle).unwrap();
    main.signal().unwrap();
    let blocking = main.next_single(|| ()).unwrap_err();
    let error = block_on(main.next_single_async(|| ())).unwrap_err();
    assert!(matches!(error, Error::InvalidArgument { .. }), "{error:?}");
    assert_eq!(error, blocking);
    assert_eq!(phaser.arrived(), 1, "nothing signalled again");
    assert_eq!(block_on(other.next_single_async(|| 7)).unwrap(), Some(7));
    assert_eq!(main.wait().unwrap(), 0);

    // Terminated.
    phaser.force_terminate();
    let blocking = main.next_single(|| ()).unwrap_err();
    assert_eq!(
        block_on(main.next_single_async(|| ())).unwrap_err(),
        blocking
    );
    assert!(matches!(blocking, Error::Terminated { .. }), "{blocking:?}");
}

/// Dropped before its first poll: nothing claimed, nothing signalled, the action dropped unrun.
#[test]
fn dropped_before_its_first_poll() {
    let (phaser, mut main) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let mut other = main.register(Mode::SigWaitSingle).unwrap();
    let ran = AtomicBool::new(false);
    drop(main.next_single_async(|| ran.store(true, Ordering::Relaxed)));
    assert_eq!(main.phase(), 0);
    assert_eq!(phaser.arrived(), 0);
    // The claim was not taken either: `other`, polled first now, runs the action.
    let mut theirs = other.next_single_async(|| "other's");
    assert!(poll_once(&mut theirs).is_pending());
    assert!(theirs.holds_action());
    let mut mine = main.next_single_async(|| "main's");
    assert!(
        poll_once(&mut mine).is_pending(),
        "released only by the runner"
    );
    assert_eq!(block_on(theirs).unwrap(), Some("other's"));
    assert_eq!(block_on(mine).unwrap(), None);
    assert!(!ran.load(Ordering::Relaxed));
    assert_eq!(phaser.phase(), 1);
}

/// A follower dropped after its signal leaves a split phase: the runner still runs the action
/// and releases the phase; the follower's registration must `wait` for the phase before its next
/// `next_single`, and the phases after it run as usual.
#[test]
fn a_follower_dropped_after_signalling() {
    let (phaser, mut runner) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let mut follower = runner.register(Mode::SigWaitSingle).unwrap();
    let mut third = runner.register(Mode::SigWaitSingle).unwrap();
    let mut running = runner.next_single_async(|| "ran");
    assert!(poll_once(&mut running).is_pending());
    assert!(running.holds_action());
    let count = Count::new();
    let waker = Waker::from(count.clone());
    {
        let mut dropped = follower.next_single_async(|| unreachable!("a follower's action"));
        assert!(Pin::new(&mut dropped)
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        assert!(!dropped.holds_action());
    }
    assert_eq!(follower.phase(), 1, "signalled phase 0");
    assert_eq!(phaser.arrived(), 2);
    let mut completing = third.next_single_async(|| "third");
    assert!(
        poll_once(&mut completing).is_pending(),
        "released only by the runner"
    );
    assert_eq!(block_on(running).unwrap(), Some("ran"));
    assert_eq!(block_on(completing).unwrap(), None);
    assert_eq!(
        count.wakes(),
        0,
        "the dropped follower's waker is not woken"
    );
    assert_eq!(phaser.phase(), 1);
    // Split phase: next_single is refused until the follower waits for phase 0.
    let refused = block_on(follower.next_single_async(|| ())).unwrap_err();
    assert!(
        matches!(refused, Error::InvalidArgument { .. }),
        "{refused:?}"
    );
    assert_eq!(block_on(follower.wait_async()).unwrap(), 0);
    let record = Record::new(3, 51);
    record.actions[0].store(1, Ordering::Relaxed);
    record.somes[0].store(1, Ordering::Relaxed);
    record.done.store(1, Ordering::Relaxed);
    let futures: Vec<Task> = [runner, follower, third]
        .into_iter()
        .enumerate()
        .map(|(party, registration)| {
            let record = record.clone();
            Box::pin(async move {
                record.arrive(party, 0);
                let mut registration = registration;
                for phase in 1..51 {
                    record.arrive(party, phase);
                    let ran = registration
                        .next_single_async(|| record.action(phase))
                        .await
                        .unwrap();
                    record.released(party, phase, ran);
                }
            }) as Task
        })
        .collect();
    within(move || Pool::run(2, futures));
    record.check_end();
}

/// A follower dropped while the runner is elsewhere (a blocking thread in the middle of its
/// action): the action finishes, the phase is released, and the follower's registration waits
/// for the phase it signalled.
#[test]
fn a_follower_dropped_while_the_runner_runs_the_action() {
    let (phaser, mut runner) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let mut follower = runner.register(Mode::SigWaitSingle).unwrap();
    let mut other = runner.register(Mode::SigWaitSingle).unwrap();
    let (started, in_action) = mpsc::channel();
    let (go_on, proceed) = mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let ran = runner.next_single(|| {
            started.send(()).unwrap();
            proceed.recv_timeout(HANG).unwrap();
            "by the thread"
        });
        (ran, runner)
    });
    // Wait for the thread to claim the action (its signal is phase 0's first).
    while phaser.arrived() == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut dropped = follower.next_single_async(|| unreachable!("claimed by the thread"));
    assert!(poll_once(&mut dropped).is_pending());
    assert!(!dropped.holds_action());
    // `other` completes the phase: the thread starts the action.
    let mut waiting = other.next_single_async(|| unreachable!("claimed by the thread"));
    assert!(poll_once(&mut waiting).is_pending());
    in_action.recv_timeout(HANG).unwrap();
    drop(dropped); // while the runner is inside its action
    assert!(
        poll_once(&mut waiting).is_pending(),
        "not released mid-action"
    );
    go_on.send(()).unwrap();
    let (ran, mut runner) = within(move || thread.join().unwrap());
    assert_eq!(ran.unwrap(), Some("by the thread"));
    assert_eq!(block_on(waiting).unwrap(), None);
    assert_eq!(follower.wait().unwrap(), 0);
    // On as usual.
    within(move || {
        std::thread::scope(|s| {
            s.spawn(|| block_on(follower.next_single_async(|| 1)).unwrap());
            s.spawn(|| block_on(other.next_single_async(|| 1)).unwrap());
            runner.next_single(|| 1).unwrap();
        });
        assert_eq!(phaser.phase(), 2);
    });
}

/// The runner dropped after its signal, before the phase is gathered: the phaser breaks in its
/// name at the phase; a blocking follower and a task follower (woken) get `Error::Broken`, the
/// action never runs, and the phase is never released.
#[test]
fn the_runner_dropped_before_the_gather_breaks_the_phaser() {
    let (phaser, mut runner) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let runner_id = runner.id();
    let mut task = runner.register(Mode::SigWaitSingle).unwrap();
    let mut thread = runner.register(Mode::SigWaitSingle).unwrap();
    let _late = runner.register(Mode::SigWaitSingle).unwrap(); // never signals phase 0
    let ran = AtomicBool::new(false);
    let mut running = runner.next_single_async(|| ran.store(true, Ordering::Relaxed));
    assert!(poll_once(&mut running).is_pending());
    assert!(running.holds_action());
    let count = Count::new();
    let waker = Waker::from(count.clone());
    let mut following = task.next_single_async(|| unreachable!("a follower's action"));
    assert!(Pin::new(&mut following)
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let blocked = std::thread::spawn(move || thread.next_single(|| unreachable!("a follower")));
    while phaser.arrived() < 3 {
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(running);
    let broken = Error::Broken {
        by: runner_id,
        episode: 0,
    };
    assert_eq!(within(move || blocked.join().unwrap()), Err(broken.clone()));
    assert!(count.wakes() >= 1, "the break wakes the waiting task");
    assert_eq!(
        poll_once(&mut following),
        std::task::Poll::Ready(Err(broken.clone()))
    );
    drop(following);
    assert!(!ran.load(Ordering::Relaxed));
    assert_eq!(phaser.phase(), 0);
    // The runner's registration is left waiting for phase 0, which reports the break.
    assert_eq!(runner.wait(), Err(broken.clone()));
    // As the blocking form after its error: still in the split phase.
    let blocking = runner.next_single(|| ());
    assert!(
        matches!(blocking, Err(Error::InvalidArgument { .. })),
        "{blocking:?}"
    );
    assert_eq!(block_on(runner.next_single_async(|| ())), blocking);
    assert_eq!(block_on(runner.wait_async()), Err(broken));
}

/// The runner dropped once the phase is gathered but before it was polled again (so before its
/// action ran): the break still holds, the phase is not released without its action.
#[test]
fn the_runner_dropped_after_the_gather_breaks_the_phaser() {
    let (phaser, mut runner) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let runner_id = runner.id();
    let mut other = runner.register(Mode::SigWaitSingle).unwrap();
    let mut plain = runner.register(Mode::SigWait).unwrap();
    let mut running = runner.next_single_async(|| unreachable!("dropped unrun"));
    assert!(poll_once(&mut running).is_pending());
    let mut following = other.next_single_async(|| unreachable!("a follower's action"));
    assert!(poll_once(&mut following).is_pending());
    plain.signal().unwrap(); // the last signal: phase 0 is gathered, handed to the runner
    assert_eq!(phaser.arrived(), 3);
    assert_eq!(phaser.phase(), 0, "not released before its action");
    drop(running);
    let broken = Error::Broken {
        by: runner_id,
        episode: 0,
    };
    assert_eq!(block_on(following), Err(broken.clone()));
    assert_eq!(within(move || plain.wait()), Err(broken));
    assert_eq!(phaser.phase(), 0);
}

/// An action that panics in a task: the panic continues out of the task's poll, the phaser
/// breaks in the runner's name, and the other tasks and threads get `Error::Broken`.
#[test]
fn a_panicking_action_breaks_the_phaser() {
    const BOOM: u64 = 3;
    let (phaser, mut main) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let mut runner = main.register(Mode::SigWaitSingle).unwrap();
    let runner_id = runner.id();
    let mut task = main.register(Mode::SigWaitSingle).unwrap();
    for _ in 0..BOOM {
        std::thread::scope(|s| {
            s.spawn(|| block_on(task.next_single_async(|| ())).unwrap());
            s.spawn(|| block_on(runner.next_single_async(|| ())).unwrap());
            main.next_single(|| ()).unwrap();
        });
    }
    // Make `runner` the runner of phase BOOM: it claims first.
    let mut exploding = runner.next_single_async(|| -> () { panic!("boom in phase {BOOM}") });
    assert!(poll_once(&mut exploding).is_pending());
    assert!(exploding.holds_action());
    let follower = std::thread::spawn(move || {
        let outcome = block_on(task.next_single_async(|| ()));
        (outcome, task)
    });
    let blocking = std::thread::spawn(move || main.next_single(|| ()));
    while phaser.arrived() < 3 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let panicked = catch_unwind(AssertUnwindSafe(|| block_on(exploding)))
        .expect_err("the action's panic continues out of the poll");
    let text = panicked
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("boom"), "{text:?}");
    let broken = Error::Broken {
        by: runner_id,
        episode: BOOM,
    };
    let (outcome, mut task) = within(move || follower.join().unwrap());
    assert_eq!(outcome, Err(broken.clone()));
    assert_eq!(
        within(move || blocking.join().unwrap()),
        Err(broken.clone())
    );
    assert_eq!(block_on(task.wait_async()), Err(broken.clone()));
    assert_eq!(runner.next(), Err(broken));
    assert_eq!(phaser.phase(), BOOM);
}

/// A registration dropped in a panic breaks the phaser while the runner task waits for the
/// gather: the runner gets `Error::Broken`, and its action never runs.
#[test]
fn broken_while_the_runner_waits_for_the_gather() {
    let (_phaser, mut runner) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let doomed = runner.register(Mode::SigWaitSingle).unwrap();
    let doomed_id = doomed.id();
    let task = std::thread::spawn(move || {
        let outcome = block_on(runner.next_single_async(|| unreachable!("never gathered")));
        (outcome, runner)
    });
    std::thread::sleep(Duration::from_millis(20));
    let panicked = std::thread::spawn(move || {
        let _doomed = doomed;
        panic!("the task holding the registration panics");
    })
    .join();
    assert!(panicked.is_err());
    let (outcome, mut runner) = within(move || task.join().unwrap());
    let broken = Error::Broken {
        by: doomed_id,
        episode: 0,
    };
    assert_eq!(outcome, Err(broken.clone()));
    assert_eq!(runner.wait(), Err(broken));
}

/// `force_terminate` ends the runner's wait for the gather with `Terminated`.
#[test]
fn terminated_while_the_runner_waits() {
    let (phaser, mut main) = Phaser::new(Mode::SigWaitSingle).unwrap();
    let _silent = main.register(Mode::SigWaitSingle).unwrap();
    let task = std::thread::spawn(move || block_on(main.next_single_async(|| ())));
    std::thread::sleep(Duration::from_millis(20));
    phaser.force_terminate();
    assert_eq!(
        within(move || task.join().unwrap()),
        Err(Error::Terminated { phase: 0 })
    );
}
