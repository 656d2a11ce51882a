//! `java.util.concurrent.Phaser` parity: one test per row of the table in the `phaser` module docs
//! that has an equivalent, named after the Java method, checking that the equivalent behaves as
//! the row says. `getParent` and `getRoot` have none (a tree of sub-phasers is one `Phaser`).
//! Then the edges of the additions: bulk registration's errors, the deadline variants, the advance
//! action's termination, panic and ordering, and counts on a tree.

mod phaser_support;

use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phaser_support::{payload_text, within};
use phasers::{Error, Mode, Phaser, Registration};

/// How long a test lets a thread settle into a blocking call before it acts; if the thread is not
/// blocked yet, the call finds the new state when it gets there, which each test accepts too.
const SETTLE: Duration = Duration::from_millis(30);

fn terminated(phase: u64) -> phasers::Result<u64> {
    Err(Error::Terminated { phase })
}

/// `register()`: a registration registers a party, which starts in its parent's phase.
#[test]
fn register() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut child = main.register(Mode::SigWait).unwrap();
    assert_eq!((child.phase(), phaser.registered()), (0, 2));
    within("register", move || {
        std::thread::scope(|s| {
            s.spawn(move || {
                for phase in 0..3 {
                    assert_eq!(child.next(), Ok(phase));
                }
            });
            for phase in 0..3 {
                assert_eq!(main.next(), Ok(phase));
            }
            // After a signal, a new party starts in the next phase: the signalled phase does not
            // wait for it.
            main.signal().unwrap();
            let late = main.register(Mode::SigWait).unwrap();
            assert_eq!(late.phase(), 4);
            drop(late);
            // Phase 3 needs the child, which is gone: it completes with the creator alone.
            assert_eq!(main.wait(), Ok(3));
        });
    });
}

/// `bulkRegister(n)`: `register_many` registers `n` parties at once, all in the parent's phase,
/// and the phase waits for every one of them.
#[test]
fn bulk_register() {
    const PARTIES: usize = 8;
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let parties = main.register_many(Mode::SigWait, PARTIES).unwrap();
    assert_eq!(parties.len(), PARTIES);
    assert_eq!(phaser.registered(), PARTIES + 1);
    let ids: Vec<usize> = parties.iter().map(Registration::id).collect();
    assert_eq!(ids, (1..=PARTIES).collect::<Vec<_>>(), "registration order");
    assert!(parties.iter().all(|p| p.phase() == 0));
    let arrivals = AtomicUsize::new(0);
    within("bulk_register", move || {
        std::thread::scope(|s| {
            for mut party in parties {
                let arrivals = &arrivals;
                s.spawn(move || {
                    arrivals.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(party.next(), Ok(0));
                    assert_eq!(arrivals.load(Ordering::SeqCst), PARTIES + 1);
                });
            }
            arrivals.fetch_add(1, Ordering::SeqCst);
            assert_eq!(main.next(), Ok(0));
            assert_eq!(arrivals.load(Ordering::SeqCst), PARTIES + 1);
        });
    });
}

/// `register_many`'s edges: `count = 0`, a mode too strong, a count no memory holds, a terminated
/// phaser; none registers anybody.
#[test]
fn bulk_register_refusals_register_nobody() {
    let (phaser, creator) = Phaser::new(Mode::SigWait).unwrap();
    assert_eq!(creator.register_many(Mode::Sig, 0).unwrap().len(), 0);
    let err = creator
        .register_many(Mode::SigWaitSingle, 0)
        .expect_err("a stronger mode is refused even for no registration");
    assert!(matches!(err, Error::Capability { .. }), "{err}");
    let err = creator
        .register_many(Mode::Wait, usize::MAX)
        .expect_err("usize::MAX registrations do not fit in memory");
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    assert!(err.to_string().contains("fewer"), "{err}");
    assert_eq!(phaser.registered(), 1);
    // The next registration still gets the next id: nothing was registered and dropped.
    assert_eq!(creator.register(Mode::Wait).unwrap().id(), 1);
    phaser.force_terminate();
    assert_eq!(
        creator.register_many(Mode::Sig, 3).unwrap_err(),
        Error::Terminated { phase: 0 }
    );
    assert_eq!(phaser.registered(), 1);
}

/// `arrive()`: `signal` arrives without waiting, and a signal-only `next` never blocks.
#[test]
fn arrive() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    let mut producer = main.register(Mode::Sig).unwrap();
    main.signal().unwrap();
    assert_eq!(producer.next(), Ok(0)); // signal-only: at once
    assert_eq!(producer.next(), Ok(1)); // and ahead of the phaser
    assert_eq!((phaser.phase(), main.phase()), (0, 1));
    assert_eq!((phaser.arrived(), phaser.unarrived()), (2, 1));
    other.signal().unwrap();
    assert_eq!(phaser.phase(), 1);
    assert_eq!(main.wait(), Ok(0));
    assert_eq!(other.wait(), Ok(0));
    // Phase 1 has the producer's signal already.
    assert_eq!((phaser.arrived(), phaser.unarrived()), (1, 2));
}

/// `arriveAndDeregister()`: dropping a registration leaves in any phase, counted as arrived.
#[test]
fn arrive_and_deregister() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let leaver = main.register(Mode::SigWait).unwrap();
    let mut stayer = main.register(Mode::SigWait).unwrap();
    main.signal().unwrap();
    stayer.signal().unwrap();
    assert_eq!((phaser.phase(), phaser.unarrived()), (0, 1));
    drop(leaver); // the phase no longer waits for it: it completes
    assert_eq!((phaser.phase(), phaser.registered()), (1, 2));
    assert_eq!(main.wait(), Ok(0));
    assert_eq!(stayer.wait(), Ok(0));
    // A registration that already signalled leaves the next phase.
    stayer.signal().unwrap();
    drop(stayer);
    assert_eq!(main.next(), Ok(1));
    assert_eq!(phaser.registered(), 1);
}

/// `arriveAndAwaitAdvance()`: `next` signals and waits; nobody leaves a phase before everyone
/// arrived at it.
#[test]
fn arrive_and_await_advance() {
    const TASKS: usize = 6;
    const PHASES: u64 = 50;
    let (phaser, main) = Phaser::new(Mode::SigWait).unwrap();
    let mut regs = main.register_many(Mode::SigWait, TASKS - 1).unwrap();
    regs.push(main);
    let arrived: Arc<Vec<AtomicUsize>> =
        Arc::new((0..PHASES).map(|_| AtomicUsize::new(0)).collect());
    within("arrive_and_await_advance", move || {
        std::thread::scope(|s| {
            for mut reg in regs {
                let arrived = &arrived;
                s.spawn(move || {
                    for phase in 0..PHASES {
                        arrived[phase as usize].fetch_add(1, Ordering::SeqCst);
                        assert_eq!(reg.next(), Ok(phase));
                        assert_eq!(arrived[phase as usize].load(Ordering::SeqCst), TASKS);
                    }
                });
            }
        });
    });
    // The tasks leave in phase PHASES, and the last one's leave completes it, as Java's
    // `arriveAndDeregister` by the last party advances the phase before the phaser terminates.
    assert_eq!(phaser.phase(), PHASES + 1);
    assert!(phaser.is_terminated());
}

/// `awaitAdvance(phase)`: anyone holding the phaser waits for the phase in progress, and returns
/// at once for any other.
#[test]
fn await_advance() {
    const OBSERVERS: usize = 4;
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    let signalled = Arc::new(AtomicBool::new(false));
    within("await_advance", move || {
        std::thread::scope(|s| {
            let observers: Vec<_> = (0..OBSERVERS)
                .map(|_| {
                    let (phaser, signalled) = (phaser.clone(), signalled.clone());
                    s.spawn(move || {
                        let next = phaser.await_phase(0);
                        // Released only after the last signal of phase 0.
                        assert!(signalled.load(Ordering::SeqCst));
                        next
                    })
                })
                .collect();
            main.signal().unwrap();
            std::thread::sleep(SETTLE);
            signalled.store(true, Ordering::SeqCst);
            other.signal().unwrap();
            for observer in observers {
                assert_eq!(observer.join().unwrap(), Ok(1));
            }
            // A completed phase, and a phase not yet in progress: at once, with the current one.
            assert_eq!(phaser.await_phase(0), Ok(1));
            assert_eq!(phaser.await_phase(7), Ok(1));
            // Termination ends the wait for the phase in progress, not for completed phases. The
            // last leave completes its phase (1) first, as Java's last `arriveAndDeregister`.
            drop(main);
            drop(other);
            assert!(phaser.is_terminated());
            assert_eq!(phaser.await_phase(2), terminated(2));
            assert_eq!(phaser.await_phase(1), Ok(2));
            assert_eq!(phaser.await_phase(0), Ok(2));
        });
    });
}

/// `awaitAdvanceInterruptibly(phase)`: there are no interrupts; another thread ends the wait with
/// `force_terminate`, and a deadline bounds it.
#[test]
fn await_advance_interruptibly() {
    let (phaser, _main) = Phaser::new(Mode::SigWait).unwrap();
    let start = Instant::now();
    let deadline = start + Duration::from_millis(20);
    match phaser.await_phase_deadline(0, deadline) {
        Err(Error::Timeout {
            episode: 0,
            missing,
            resumable: true,
        }) => assert_eq!(missing, [0]),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(Instant::now() >= deadline, "gave up before the deadline");
    let observer = phaser.clone();
    let waiting = std::thread::spawn(move || observer.await_phase(0));
    std::thread::sleep(SETTLE);
    phaser.force_terminate(); // the "interrupt"
    let outcome = within("a terminated await_phase", move || waiting.join().unwrap());
    assert_eq!(outcome, terminated(0));
}

/// `awaitAdvanceInterruptibly(phase, timeout, unit)`: `await_phase_timeout` gives up with
/// `Error::Timeout` naming the registrations that have not signalled, and `Duration::MAX` never
/// expires.
#[test]
fn await_advance_interruptibly_with_timeout() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut late = main.register(Mode::SigWait).unwrap();
    let _consumer = main.register(Mode::Wait).unwrap();
    main.signal().unwrap();
    let timeout = Duration::from_millis(20);
    let start = Instant::now();
    match phaser.await_phase_timeout(0, timeout) {
        Err(Error::Timeout {
            episode: 0,
            missing,
            resumable: true,
        }) => assert_eq!(missing, [late.id()]),
        other => panic!("expected a timeout naming the late registration, got {other:?}"),
    }
    assert!(start.elapsed() >= timeout, "gave up early");
    let observer = phaser.clone();
    within("await_phase_timeout(Duration::MAX)", move || {
        std::thread::scope(|s| {
            let waiting = s.spawn(|| observer.await_phase_timeout(0, Duration::MAX));
            std::thread::sleep(SETTLE);
            late.signal().unwrap();
            assert_eq!(waiting.join().unwrap(), Ok(1));
        });
    });
}

/// `getPhase()`: the phaser's phase counts completed phases; each registration has its own.
#[test]
fn get_phase() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut consumer = main.register(Mode::Wait).unwrap();
    for phase in 0..5 {
        assert_eq!(phaser.phase(), phase);
        assert_eq!(main.next(), Ok(phase));
    }
    assert_eq!((phaser.phase(), main.phase(), consumer.phase()), (5, 5, 0));
    assert_eq!(consumer.wait(), Ok(0));
    assert_eq!(consumer.phase(), 1);
    phaser.force_terminate();
    assert_eq!(phaser.phase(), 5, "termination keeps the phase");
}

/// `getRegisteredParties()`: signal-capable registrations, not wait-only ones.
#[test]
fn get_registered_parties() {
    let (phaser, main) = Phaser::new(Mode::SigWaitSingle).unwrap();
    assert_eq!(phaser.registered(), 1);
    let sig = main.register(Mode::Sig).unwrap();
    let sig_wait = main.register(Mode::SigWait).unwrap();
    let waits = main.register_many(Mode::Wait, 3).unwrap();
    assert_eq!(phaser.registered(), 3);
    assert_eq!(phaser.registered(), phaser.signallers());
    drop(waits);
    assert_eq!(phaser.registered(), 3);
    drop(sig);
    drop(sig_wait);
    assert_eq!(phaser.registered(), 1);
}

/// `getArrivedParties()`: the signal-capable registrations that have signalled the phase in
/// progress, exact when nothing runs meanwhile; on a tree too.
#[test]
fn get_arrived_parties() {
    for (tiers, degree) in [(1, 16), (2, 2), (3, 2)] {
        let (phaser, main) = Phaser::builder()
            .tiers(tiers)
            .degree(degree)
            .build()
            .unwrap();
        let mut regs = main.register_many(Mode::SigWait, 4).unwrap();
        regs.push(main);
        let _consumer = regs[0].register(Mode::Wait).unwrap();
        for round in 0..2u64 {
            for (k, reg) in regs.iter_mut().enumerate() {
                assert_eq!(phaser.arrived(), k, "tiers {tiers}, round {round}");
                reg.signal().unwrap();
            }
            // The last signal completed the phase: nobody has arrived at the next one.
            assert_eq!(phaser.phase(), round + 1);
            assert_eq!(phaser.arrived(), 0);
            for reg in &mut regs {
                assert_eq!(reg.wait(), Ok(round));
            }
        }
    }
}

/// `getUnarrivedParties()`: `registered() - arrived()`; the phase completes when it reaches 0.
#[test]
fn get_unarrived_parties() {
    let (phaser, mut main) = Phaser::builder().tiers(2).degree(2).build().unwrap();
    let mut others = main.register_many(Mode::SigWait, 2).unwrap();
    let mut producer = main.register(Mode::Sig).unwrap();
    assert_eq!(phaser.unarrived(), 4);
    producer.next().unwrap();
    producer.next().unwrap(); // ahead: counted as arrived at phase 0
    assert_eq!(phaser.unarrived(), 3);
    main.signal().unwrap();
    others[0].signal().unwrap();
    assert_eq!(phaser.unarrived(), 1);
    assert_eq!(phaser.registered() - phaser.arrived(), phaser.unarrived());
    others[1].signal().unwrap();
    assert_eq!(phaser.phase(), 1);
    // Phase 1 has the producer's second signal.
    assert_eq!(phaser.unarrived(), 3);
}

/// `isTerminated()`: after `force_terminate`, a `Break` of the advance action, or the last
/// signaller's drop.
#[test]
fn is_terminated() {
    let (phaser, _main) = Phaser::new(Mode::SigWait).unwrap();
    assert!(!phaser.is_terminated());
    phaser.force_terminate();
    assert!(phaser.is_terminated());

    let (phaser, mut main) = Phaser::builder()
        .on_advance(|_, _| ControlFlow::Break(()))
        .build()
        .unwrap();
    assert!(!phaser.is_terminated());
    assert_eq!(main.next(), Ok(0));
    assert!(phaser.is_terminated());

    let (phaser, main) = Phaser::new(Mode::SigWait).unwrap();
    let _consumer = main.register(Mode::Wait).unwrap();
    drop(main);
    assert!(phaser.is_terminated());
}

/// `forceTermination()`: every blocked wait (registered or not) returns `Error::Terminated`, and
/// so does every later call.
#[test]
fn force_termination() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut waiter = main.register(Mode::SigWait).unwrap();
    let mut consumer = main.register(Mode::Wait).unwrap();
    let observer = phaser.clone();
    // `main` never signals phase 0, so only the termination can end these waits.
    let (blocked, later) = within("force_termination", move || {
        std::thread::scope(|s| {
            let a = s.spawn(move || waiter.next());
            let b = s.spawn(move || consumer.wait());
            let c = s.spawn(move || observer.await_phase(0));
            std::thread::sleep(SETTLE);
            phaser.force_terminate();
            let blocked = [a.join().unwrap(), b.join().unwrap(), c.join().unwrap()];
            let later = [
                main.next(),
                phaser.await_phase(1),
                main.register(Mode::Sig).map(|r| r.phase()),
            ];
            (blocked, later)
        })
    });
    assert_eq!(blocked, [terminated(0), terminated(0), terminated(0)]);
    assert_eq!(later, [terminated(0), terminated(1), terminated(0)]);
}

/// `onAdvance(phase, registeredParties)`: the action runs once per phase, in order, after every
/// signal of the phase and before anyone leaves it, with the number of signal-capable
/// registrations; `Break` terminates after the phase.
#[test]
fn on_advance() {
    const TASKS: usize = 5;
    const LAST: u64 = 30;
    let arrivals: Arc<Vec<AtomicUsize>> =
        Arc::new((0..=LAST + 1).map(|_| AtomicUsize::new(0)).collect());
    let passed: Arc<Vec<AtomicUsize>> = Arc::new((0..=LAST).map(|_| AtomicUsize::new(0)).collect());
    let calls = Arc::new(AtomicU64::new(0));
    let (a, p, c) = (arrivals.clone(), passed.clone(), calls.clone());
    let (phaser, main) = Phaser::builder()
        .on_advance(move |phase, registered| {
            assert_eq!(
                c.fetch_add(1, Ordering::SeqCst),
                phase,
                "in order, once each"
            );
            assert_eq!(registered, TASKS);
            let i = phase as usize;
            assert_eq!(a[i].load(Ordering::SeqCst), TASKS, "after every signal");
            assert_eq!(p[i].load(Ordering::SeqCst), 0, "before anyone leaves");
            if phase == LAST {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .build()
        .unwrap();
    let mut regs = main.register_many(Mode::SigWait, TASKS - 1).unwrap();
    regs.push(main);
    within("on_advance", move || {
        std::thread::scope(|s| {
            for mut reg in regs {
                let (arrivals, passed) = (&arrivals, &passed);
                s.spawn(move || {
                    for phase in 0..=LAST {
                        arrivals[phase as usize].fetch_add(1, Ordering::SeqCst);
                        assert_eq!(reg.next(), Ok(phase));
                        passed[phase as usize].fetch_add(1, Ordering::SeqCst);
                    }
                    assert_eq!(reg.next(), terminated(LAST + 1));
                });
            }
        });
    });
    assert_eq!(calls.load(Ordering::SeqCst), LAST + 1);
    assert!(phaser.is_terminated());
    assert_eq!(phaser.phase(), LAST + 1);
    assert_eq!(phaser.await_phase(LAST + 1), terminated(LAST + 1));
}

/// A `Break` ends the phaser at once, even for a phase whose signals are all in already: signals
/// of tasks running ahead gather phase 1 in the same completion, but it is never released.
#[test]
fn on_advance_break_ends_phases_already_gathered() {
    let calls = Arc::new(AtomicU64::new(0));
    let c = calls.clone();
    // Signal-only tasks run ahead (a wait-capable one may not signal twice without waiting).
    let (phaser, creator) = Phaser::builder()
        .on_advance(move |_, _| {
            c.fetch_add(1, Ordering::SeqCst);
            ControlFlow::Break(())
        })
        .build()
        .unwrap();
    let mut a = creator.register(Mode::Sig).unwrap();
    let mut b = creator.register(Mode::Sig).unwrap();
    let mut consumer = creator.register(Mode::Wait).unwrap();
    let holder = creator.register(Mode::Sig).unwrap();
    drop(creator);
    // Everyone but `holder` signals phases 0 and 1.
    for _ in 0..2 {
        a.next().unwrap();
        b.next().unwrap();
    }
    assert_eq!(phaser.phase(), 0);
    drop(holder); // completes phase 0, whose action breaks; phase 1 is gathered in the same go
    assert_eq!(calls.load(Ordering::SeqCst), 1, "no action for phase 1");
    assert_eq!(phaser.phase(), 1, "phase 1 is not released");
    assert_eq!(consumer.wait(), Ok(0));
    assert_eq!(consumer.wait(), terminated(1));
    assert_eq!(a.next(), terminated(2));
    assert_eq!(phaser.await_phase(1), terminated(1));
}

/// A panicking action: the phase does not complete, the others get `Error::Broken` naming the
/// registration whose signal ran it, and the panic continues in that task (from `next`, or from a
/// drop).
#[test]
fn on_advance_panic_breaks_the_phaser() {
    for by_drop in [false, true] {
        let (phaser, mut main) = Phaser::builder()
            .on_advance(|phase, _| {
                if phase == 1 {
                    panic!("the action fails in phase {phase}");
                }
                ControlFlow::Continue(())
            })
            .build()
            .unwrap();
        let mut other = main.register(Mode::SigWait).unwrap();
        let mut consumer = main.register(Mode::Wait).unwrap();
        other.signal().unwrap();
        assert_eq!(main.next(), Ok(0));
        assert_eq!(other.wait(), Ok(0));
        other.signal().unwrap();
        let culprit = main.id();
        let panic = if by_drop {
            catch_unwind(AssertUnwindSafe(move || drop(main))).unwrap_err()
        } else {
            let panic = catch_unwind(AssertUnwindSafe(|| main.next())).unwrap_err();
            drop(main);
            panic
        };
        assert!(payload_text(&*panic).contains("fails in phase 1"));
        let broken = Err(Error::Broken {
            by: culprit,
            episode: 1,
        });
        assert_eq!(other.wait(), broken);
        assert_eq!(consumer.wait(), Ok(0));
        assert_eq!(consumer.wait(), broken);
        assert_eq!(phaser.await_phase(1), broken);
        assert_eq!(phaser.phase(), 1);
        assert!(!phaser.is_terminated(), "broken, not terminated");
    }
}

/// The advance action runs before a `next_single` action of the same phase, and both before the
/// release; a `Break` still lets the phase's `next_single` action run.
#[test]
fn on_advance_runs_before_next_single() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let (_phaser, mut main) = Phaser::builder()
        .mode(Mode::SigWaitSingle)
        .on_advance(move |phase, _| {
            l.lock().unwrap().push(format!("advance {phase}"));
            if phase == 1 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .build()
        .unwrap();
    let mut other = main.register(Mode::SigWaitSingle).unwrap();
    within("on_advance with next_single", move || {
        std::thread::scope(|s| {
            let log2 = log.clone();
            s.spawn(move || {
                for phase in 0..2 {
                    other
                        .next_single(|| log2.lock().unwrap().push(format!("single {phase}")))
                        .unwrap();
                }
                assert_eq!(other.next_single(|| ()), terminated(2).map(|_| None));
            });
            for phase in 0..2 {
                main.next_single(|| log.lock().unwrap().push(format!("single {phase}")))
                    .unwrap();
                let seen = log.lock().unwrap().clone();
                let expected = [format!("advance {phase}"), format!("single {phase}")];
                assert_eq!(seen[seen.len() - 2..], expected);
            }
            assert_eq!(main.next_single(|| ()), terminated(2).map(|_| None));
        });
    });
}

/// `toString()`: the `Debug` form shows the phase, the registered and arrived counts, and
/// termination.
#[test]
fn to_string() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let _other = main.register(Mode::SigWait).unwrap();
    let _consumer = main.register(Mode::Wait).unwrap();
    main.signal().unwrap();
    let text = format!("{phaser:?}");
    for part in [
        "phase: 0",
        "registrations: 3",
        "registered: 2",
        "arrived: 1",
        "terminated: false",
    ] {
        assert!(text.contains(part), "{part:?} is not in {text}");
    }
}

/// `next_deadline` and `wait_deadline`, beside the timeouts: they give up at the deadline with the
/// signal in place, and a deadline already past still returns a completed phase.
#[test]
fn next_and_wait_deadlines() {
    let (_phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut late = main.register(Mode::SigWait).unwrap();
    let deadline = Instant::now() + Duration::from_millis(10);
    match main.next_deadline(deadline) {
        Err(Error::Timeout {
            episode: 0,
            missing,
            resumable: true,
        }) => assert_eq!(missing, [late.id()]),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(Instant::now() >= deadline);
    assert_eq!(main.phase(), 1, "the signal stays in place");
    match main.wait_deadline(Instant::now()) {
        Err(Error::Timeout { episode: 0, .. }) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
    late.signal().unwrap();
    let past = Instant::now() - Duration::from_millis(1);
    assert_eq!(main.wait_deadline(past), Ok(0));
    assert_eq!(late.next_deadline(past), Ok(0));
    let mut producer = main.register(Mode::Sig).unwrap();
    assert_eq!(
        producer.wait_deadline(past).unwrap_err().to_string(),
        producer.wait().unwrap_err().to_string(),
        "a signal-only registration cannot wait, with or without a deadline"
    );
}
