//! Issue 31, found by a port of the JSR-166 `java.util.concurrent.Phaser` conformance tests:
//!
//! - **The last leave completes its phase.** When the last signal-capable registration is dropped
//!   in phase `p`, Java's `arriveAndDeregister` advances to `p + 1`, calls `onAdvance(p, 0)` and
//!   then terminates. Here too: the waiters of `p` are released with `Ok(p)`, the advance action
//!   sees `(p, 0)`, [`Phaser::phase`] says `p + 1`, and every wait for `p + 1` or later returns
//!   `Error::Terminated`. On a tree the last leaver of a sub-phaser leaves its parent; the root's
//!   last leave is the termination.
//! - **No registration on a terminated phaser**, even from a registration whose phase lags the one
//!   the termination took effect at.
//! - **`await_phase(u64::MAX)` on a live phaser** is a phase far ahead, not the end.
//! - **The Java traps** the port found, as decided in the module docs' table: a second `signal()`
//!   of a wait-capable registration is refused; `signal(); await_phase(p); next()` completes the
//!   split phase only (use `wait()`); a child registered after its parent's signal enters the next
//!   phase; a drop on a terminated phaser leaves the counts alone, as in Java; Java's empty phaser
//!   is written with the creator as the registering party.

mod phaser_support;

use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phaser_support::within;
use phasers::{Accumulator, Error, Mode, Op, Phaser, PhaserBuilder, Registration};

/// How long a test lets a thread settle into a blocking call before it acts; if the thread is not
/// blocked yet, the call finds the new state when it gets there, which each test accepts too.
const SETTLE: Duration = Duration::from_millis(30);

/// A flat phaser and a tree of three tiers of degree 2 (so the registrations spread over leaves).
fn shapes() -> [(&'static str, PhaserBuilder); 2] {
    [
        ("flat", Phaser::builder().tiers(1)),
        ("tiered", Phaser::builder().tiers(3).degree(2)),
    ]
}

/// The advance action's calls, `(phase, registered)`, in order.
type Calls = Arc<Mutex<Vec<(u64, usize)>>>;

fn recording(builder: PhaserBuilder, answer: ControlFlow<()>) -> (PhaserBuilder, Calls) {
    let calls: Calls = Arc::default();
    let record = Arc::clone(&calls);
    let builder = builder.on_advance(move |phase, registered| {
        record.lock().unwrap().push((phase, registered));
        answer
    });
    (builder, calls)
}

/// `signallers` SigWait registrations (the creator among them) advance through `phases` phases
/// together, then all but the creator leave; returns the phaser and the creator.
fn advanced(builder: PhaserBuilder, signallers: usize, phases: u64) -> (Phaser, Registration) {
    let (phaser, mut creator) = builder.build().unwrap();
    let others = creator
        .register_many(Mode::SigWait, signallers - 1)
        .unwrap();
    within("the phases before the last leave", move || {
        std::thread::scope(|s| {
            for mut other in others {
                s.spawn(move || {
                    for phase in 0..phases {
                        assert_eq!(other.next(), Ok(phase));
                    }
                    // Dropped here: it leaves in phase `phases`.
                });
            }
            for phase in 0..phases {
                assert_eq!(creator.next(), Ok(phase));
            }
        });
        (phaser, creator)
    })
}

/// Issue 31.3: the last signaller's drop in phase 2 completes phase 2 (the advance action sees
/// `(2, 0)`, the phase becomes 3), then terminates: waits for 2 succeed, waits for 3 end.
#[test]
fn the_last_leave_completes_its_phase_then_terminates() {
    for (shape, builder) in shapes() {
        let (builder, calls) = recording(builder, ControlFlow::Continue(()));
        let (phaser, creator) = advanced(builder, 5, 2);
        let mut consumer = creator.register(Mode::Wait).unwrap();
        assert_eq!((phaser.phase(), creator.phase()), (2, 2), "{shape}");
        assert_eq!(phaser.registered(), 1, "{shape}");
        drop(creator);
        assert!(phaser.is_terminated(), "{shape}");
        assert_eq!(
            phaser.phase(),
            3,
            "{shape}: the last leave completed phase 2"
        );
        assert_eq!(
            *calls.lock().unwrap(),
            [(0, 5), (1, 5), (2, 0)],
            "{shape}: the advance action saw the last phase with no registration"
        );
        assert_eq!(consumer.wait(), Ok(2), "{shape}");
        assert_eq!(
            consumer.wait(),
            Err(Error::Terminated { phase: 3 }),
            "{shape}"
        );
        assert_eq!(phaser.await_phase(2), Ok(3), "{shape}");
        assert_eq!(
            phaser.await_phase(3),
            Err(Error::Terminated { phase: 3 }),
            "{shape}"
        );
        assert_eq!((phaser.registered(), phaser.arrived()), (0, 0), "{shape}");
    }
}

/// Issue 31.3: waiters already blocked in the last phase (registered or not) are released by the
/// last leave with the phase, not with `Terminated`.
#[test]
fn the_last_leave_releases_blocked_waiters() {
    for (shape, builder) in shapes() {
        let (phaser, creator) = advanced(builder, 4, 3);
        let consumers: Vec<Registration> = (0..3)
            .map(|_| creator.register(Mode::Wait).unwrap())
            .collect();
        let observer = phaser.clone();
        let results = within("waiters of the last phase", move || {
            std::thread::scope(|s| {
                let waiting: Vec<_> = consumers
                    .into_iter()
                    .map(|mut consumer| {
                        s.spawn(move || {
                            assert_eq!(consumer.phase(), 3, "registered in the creator's phase");
                            (consumer.wait(), consumer.wait())
                        })
                    })
                    .collect();
                let watching = s.spawn(move || observer.await_phase(3));
                std::thread::sleep(SETTLE);
                drop(creator);
                let observed = watching.join().unwrap();
                let waited: Vec<_> = waiting.into_iter().map(|h| h.join().unwrap()).collect();
                (observed, waited)
            })
        });
        let (observed, waited) = results;
        assert_eq!(observed, Ok(4), "{shape}: the observer of phase 3");
        for (blocked, later) in waited {
            assert_eq!(blocked, Ok(3), "{shape}: a consumer blocked in phase 3");
            assert_eq!(later, Err(Error::Terminated { phase: 4 }), "{shape}");
        }
        assert_eq!(phaser.phase(), 4, "{shape}");
    }
}

/// Issue 31.3, on a tree: leaves empty one after the other (each leaving its parent), and only the
/// root's last leave ends the phaser. Every drop but the last completes a phase where it was the
/// last to arrive, as before.
#[test]
fn on_a_tree_only_the_roots_last_leave_terminates() {
    let (builder, calls) = recording(
        Phaser::builder().tiers(3).degree(2),
        ControlFlow::Continue(()),
    );
    let (phaser, creator) = builder.build().unwrap();
    let mut consumer = creator.register(Mode::Wait).unwrap();
    let mut others = creator.register_many(Mode::SigWait, 7).unwrap();
    drop(creator);
    // Phase 0 waits for the seven: each drop leaves it, and the last of them completes it.
    while let Some(leaver) = others.pop() {
        assert!(
            !phaser.is_terminated(),
            "{} signallers are left",
            others.len() + 1
        );
        assert_eq!(phaser.phase(), 0);
        drop(leaver);
    }
    assert!(phaser.is_terminated());
    assert_eq!(phaser.phase(), 1);
    assert_eq!(*calls.lock().unwrap(), [(0, 0)]);
    assert_eq!(consumer.wait(), Ok(0));
    assert_eq!(consumer.wait(), Err(Error::Terminated { phase: 1 }));
}

/// Issue 31.3: a signal-only registration running ahead, dropped last, completes the phase it
/// would have signalled next (like Java's `arrive(); arrive(); arriveAndDeregister()`).
#[test]
fn a_producer_running_ahead_completes_its_next_phase_when_it_leaves() {
    for (shape, builder) in shapes() {
        let (phaser, creator) = builder.build().unwrap();
        let mut producer = creator.register(Mode::Sig).unwrap();
        let mut consumer = creator.register(Mode::Wait).unwrap();
        drop(creator); // leaves phase 0 to the producer
        for phase in 0..3 {
            assert_eq!(producer.next(), Ok(phase));
        }
        drop(producer);
        assert_eq!(phaser.phase(), 4, "{shape}");
        for phase in 0..4 {
            assert_eq!(consumer.wait(), Ok(phase), "{shape}");
        }
        assert_eq!(
            consumer.wait(),
            Err(Error::Terminated { phase: 4 }),
            "{shape}"
        );
    }
}

/// Issue 31.3: the last leave's phase carries no reduction: once every task is gone, an
/// accumulator still holds the result of the last phase the tasks signalled.
#[test]
fn accumulators_keep_the_last_signalled_phase_after_the_last_leave() {
    for (shape, builder) in shapes() {
        let (phaser, mut main) = builder.build().unwrap();
        let sum = Accumulator::<u64>::new(&phaser, Op::Sum).unwrap();
        let mut other = main.register(Mode::SigWait).unwrap();
        sum.send(&mut main, 40).unwrap();
        sum.send(&mut other, 2).unwrap();
        other.signal().unwrap();
        assert_eq!(main.next(), Ok(0));
        assert_eq!(other.wait(), Ok(0));
        drop(other);
        drop(main);
        assert_eq!(phaser.phase(), 2, "{shape}");
        assert_eq!(sum.result(), 42, "{shape}: phase 0's sum");
    }
}

/// Issue 31.3: an advance action answering `Continue` with no registration left does not keep the
/// phaser alive (nobody could ever signal again); one answering `Break` ends it the same way.
#[test]
fn the_last_leave_terminates_whatever_the_action_answers() {
    for answer in [ControlFlow::Continue(()), ControlFlow::Break(())] {
        for (shape, builder) in shapes() {
            let (builder, calls) = recording(builder, answer);
            let (phaser, creator) = builder.build().unwrap();
            drop(creator);
            assert!(phaser.is_terminated(), "{shape}, {answer:?}");
            assert_eq!(phaser.phase(), 1, "{shape}, {answer:?}");
            assert_eq!(*calls.lock().unwrap(), [(0, 0)], "{shape}, {answer:?}");
        }
    }
}

/// Issue 31.3: an advance action that panics in the last leave's phase breaks the phaser there (the
/// phase does not complete), and the panic goes on out of the drop.
#[test]
fn a_panic_of_the_action_in_the_last_leave_breaks_its_phase() {
    for (shape, builder) in shapes() {
        let builder = builder.on_advance(|phase, _| {
            if phase == 1 {
                panic!("no phase 1");
            }
            ControlFlow::Continue(())
        });
        let (phaser, mut creator) = builder.build().unwrap();
        let mut consumer = creator.register(Mode::Wait).unwrap();
        assert_eq!(creator.next(), Ok(0));
        let creator_id = creator.id();
        let payload = catch_unwind(AssertUnwindSafe(|| drop(creator))).unwrap_err();
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"no phase 1"),
            "{shape}"
        );
        assert!(!phaser.is_terminated(), "{shape}: broken, not terminated");
        assert_eq!(phaser.phase(), 1, "{shape}");
        assert_eq!(consumer.wait(), Ok(0), "{shape}");
        assert_eq!(
            consumer.wait(),
            Err(Error::Broken {
                by: creator_id,
                episode: 1
            }),
            "{shape}"
        );
    }
}

/// Issue 31.4: a wait-only registration lagging behind the phase the termination took effect at
/// cannot register anybody, whether the last signaller left or the advance action said `Break`.
#[test]
fn a_terminated_phaser_takes_no_registration() {
    for (shape, builder) in shapes() {
        // The last leave, in phase 1.
        let (phaser, mut creator) = builder.clone().build().unwrap();
        let lagging = creator.register(Mode::Wait).unwrap();
        assert_eq!(creator.next(), Ok(0));
        drop(creator);
        assert!(phaser.is_terminated(), "{shape}");
        assert_eq!(lagging.phase(), 0);
        assert_eq!(
            lagging.register(Mode::Wait).map(|r| r.phase()),
            Err(Error::Terminated { phase: 0 }),
            "{shape}: register after the last leave"
        );
        assert_eq!(
            lagging.register_many(Mode::Wait, 2).map(|r| r.len()),
            Err(Error::Terminated { phase: 0 }),
            "{shape}: register_many after the last leave"
        );
        assert_eq!(
            lagging.register_many(Mode::Wait, 0).map(|r| r.len()),
            Err(Error::Terminated { phase: 0 }),
            "{shape}: register_many(0) makes the same checks"
        );

        // The advance action's Break, after phase 1.
        let (phaser, mut creator) = builder
            .on_advance(|phase, _| {
                if phase == 1 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .build()
            .unwrap();
        let lagging = creator.register(Mode::Wait).unwrap();
        assert_eq!(creator.next(), Ok(0));
        assert_eq!(creator.next(), Ok(1));
        assert!(phaser.is_terminated(), "{shape}");
        assert_eq!(
            lagging.register(Mode::Wait).map(|r| r.phase()),
            Err(Error::Terminated { phase: 0 }),
            "{shape}: register after Break"
        );
        assert_eq!(
            creator.register(Mode::SigWait).map(|r| r.phase()),
            Err(Error::Terminated { phase: 2 }),
            "{shape}: the creator, in the first phase that cannot complete"
        );
        assert_eq!(phaser.registered(), 1, "{shape}");
    }
}

/// Issue 31.5: `u64::MAX` is a phase far ahead on a live phaser: every `await_phase` form returns
/// the phase in progress at once, as for `u64::MAX - 1` and `2^63`; after the termination all of
/// them return `Terminated`.
#[test]
fn await_phase_of_u64_max_is_a_phase_far_ahead() {
    for (shape, builder) in shapes() {
        let (phaser, mut creator) = builder.build().unwrap();
        assert_eq!(creator.next(), Ok(0));
        for far in [u64::MAX, u64::MAX - 1, 1 << 63] {
            assert_eq!(
                phaser.await_phase(far),
                Ok(1),
                "{shape}: await_phase({far})"
            );
            assert_eq!(
                phaser.await_phase_timeout(far, Duration::ZERO),
                Ok(1),
                "{shape}: await_phase_timeout({far})"
            );
            assert_eq!(
                phaser.await_phase_deadline(far, Instant::now()),
                Ok(1),
                "{shape}: await_phase_deadline({far})"
            );
        }
        phaser.force_terminate();
        for far in [u64::MAX, u64::MAX - 1, 1 << 63] {
            assert_eq!(
                phaser.await_phase(far),
                Err(Error::Terminated { phase: far }),
                "{shape}: await_phase({far}) after the termination"
            );
        }
        assert_eq!(
            phaser.await_phase(0),
            Ok(1),
            "{shape}: a phase completed before"
        );
    }
}

/// Trap a (refused): a second `signal()` of a wait-capable registration before its `wait()` is an
/// error, not a signal of the next phase; a signal-only registration still runs ahead.
#[test]
fn a_second_signal_before_the_wait_is_refused() {
    for (shape, builder) in shapes() {
        let (phaser, mut main) = builder.build().unwrap();
        let mut other = main.register(Mode::SigWait).unwrap();
        let mut producer = main.register(Mode::Sig).unwrap();
        main.signal().unwrap();
        let err = main.signal().unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { .. }),
            "{shape}: {err}"
        );
        assert!(err.to_string().contains("wait()"), "{shape}: {err}");
        assert_eq!(main.phase(), 1, "{shape}: still in the split phase");
        assert_eq!((phaser.arrived(), phaser.unarrived()), (1, 2), "{shape}");
        producer.signal().unwrap();
        producer.signal().unwrap(); // signal-only: runs ahead into phase 1
        assert_eq!(producer.phase(), 2, "{shape}");
        other.signal().unwrap();
        assert_eq!(main.wait(), Ok(0), "{shape}");
        assert_eq!(other.wait(), Ok(0), "{shape}");
        // Waited: signalling again is the next phase's signal.
        main.signal().unwrap();
        other.signal().unwrap();
        assert_eq!(phaser.phase(), 2, "{shape}");
        assert_eq!(main.wait(), Ok(1), "{shape}");
    }
}

/// Trap b (kept, documented): `await_phase` does not move a registration, so after
/// `signal(); phaser.await_phase(p)` its `next()` still completes the split phase `p` (at once)
/// without signalling `p + 1`. The idiom is the registration's own `wait()`.
#[test]
fn next_after_signal_and_await_phase_completes_the_split_phase() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut other = main.register(Mode::SigWait).unwrap();
    main.signal().unwrap();
    other.signal().unwrap();
    assert_eq!(phaser.await_phase(0), Ok(1));
    assert_eq!(main.next(), Ok(0), "the wait of the split phase 0, at once");
    assert_eq!(phaser.arrived(), 0, "nobody has signalled phase 1 yet");
    // The idiom: wait() ends the split phase, and next() is then a full phase.
    assert_eq!(other.wait(), Ok(0));
    other.signal().unwrap();
    assert_eq!(main.next(), Ok(1));
    assert_eq!(phaser.phase(), 2);
}

/// Trap c (kept, documented): a child registered by a task that has signalled phase `p` enters
/// phase `p + 1`, so `p` does not wait for it; registering before the signal makes `p` wait.
#[test]
fn a_child_registered_after_the_signal_enters_the_next_phase() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut before = main.register(Mode::SigWait).unwrap();
    main.signal().unwrap();
    let mut after = main.register(Mode::SigWait).unwrap();
    assert_eq!((before.phase(), after.phase()), (0, 1));
    assert_eq!((phaser.registered(), phaser.arrived()), (3, 2));
    before.signal().unwrap(); // phase 0 is complete without `after`
    assert_eq!(phaser.phase(), 1);
    assert_eq!(main.wait(), Ok(0));
    assert_eq!(before.wait(), Ok(0));
    // Phase 1 waits for all three.
    main.signal().unwrap();
    before.signal().unwrap();
    assert_eq!(phaser.phase(), 1);
    assert_eq!(after.next(), Ok(1));
    assert_eq!(phaser.phase(), 2);
}

/// Trap d (matches Java): a drop on a terminated phaser changes nothing, as Java's
/// `arriveAndDeregister` on a terminated phaser has no effect: `registered()` and `arrived()` stay
/// what they were at the termination.
#[test]
fn a_drop_on_a_terminated_phaser_leaves_the_counts_alone() {
    for (shape, builder) in shapes() {
        let (phaser, mut main) = builder.clone().build().unwrap();
        let others = main.register_many(Mode::SigWait, 3).unwrap();
        main.signal().unwrap();
        phaser.force_terminate();
        assert_eq!((phaser.registered(), phaser.arrived()), (4, 1), "{shape}");
        drop(others);
        drop(main);
        assert_eq!((phaser.registered(), phaser.arrived()), (4, 1), "{shape}");
        assert_eq!(phaser.phase(), 0, "{shape}");

        // After the advance action's Break.
        let (phaser, mut main) = builder
            .on_advance(|_, _| ControlFlow::Break(()))
            .build()
            .unwrap();
        let mut other = main.register(Mode::SigWait).unwrap();
        main.signal().unwrap();
        other.signal().unwrap();
        assert!(phaser.is_terminated(), "{shape}");
        drop(other);
        assert_eq!(phaser.registered(), 2, "{shape}");
        assert_eq!(main.wait(), Ok(0), "{shape}");
        assert_eq!(main.next(), Err(Error::Terminated { phase: 1 }), "{shape}");
    }
}

/// Trap e (idiom): Java's `new Phaser()` then `register()` per task, and the registering thread's
/// `arriveAndDeregister` once it started them, is the creator registering the tasks and being
/// dropped: the phases run among the tasks, and the last task's leave calls the advance action
/// with 0 registered, then ends the phaser.
#[test]
fn javas_empty_phaser_is_the_creator_as_registrar() {
    for (shape, builder) in shapes() {
        let (builder, calls) = recording(builder, ControlFlow::Continue(()));
        let (phaser, registrar) = builder.build().unwrap();
        let tasks: Vec<Registration> = (0..4)
            .map(|_| registrar.register(Mode::SigWait).unwrap())
            .collect();
        drop(registrar); // "arriveAndDeregister" of the registering party: phase 0 waits for the tasks
        assert_eq!((phaser.registered(), phaser.phase()), (4, 0), "{shape}");
        within("the tasks of an 'empty' phaser", move || {
            std::thread::scope(|s| {
                for mut task in tasks {
                    s.spawn(move || {
                        for phase in 0..3 {
                            assert_eq!(task.next(), Ok(phase));
                        }
                    });
                }
            });
        });
        assert!(phaser.is_terminated(), "{shape}");
        assert_eq!(phaser.phase(), 4, "{shape}");
        assert_eq!(
            *calls.lock().unwrap(),
            [(0, 4), (1, 4), (2, 4), (3, 0)],
            "{shape}"
        );
    }
}
