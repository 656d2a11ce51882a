//! Termination: after `force_terminate`, or once the last signal-capable registration is dropped
//! (which first completes the phase it was in), no later phase can complete, so every wait for one
//! returns `Error::Terminated` naming its phase: waits already blocked (in every kind of wait) and
//! every wait after. Phases completed before the termination can still be waited for.

mod phaser_support;

use std::sync::Barrier;
use std::time::Duration;

use phaser_support::{within, HANG};
use phasers::{Error, Mode, Phaser, Registration};

/// How long the main thread lets the others settle into their waits (and park) before it
/// terminates. If some are not blocked yet they find the phaser terminated when they get there,
/// which the test accepts too; the settling only makes the "already blocked" case the usual one.
const SETTLE: Duration = Duration::from_millis(50);

fn expect_terminated(result: phasers::Result<u64>, phase: u64, what: &str) {
    match result {
        Err(Error::Terminated { phase: at }) => {
            assert_eq!(at, phase, "{what}: Terminated names the phase waited for")
        }
        other => panic!("{what}: expected Error::Terminated in phase {phase}, got {other:?}"),
    }
}

/// How a blocked task waits.
#[derive(Clone, Copy, Debug)]
enum Call {
    Next,
    NextTimeout,
    Wait,
    WaitTimeout,
}

fn call(reg: &mut Registration, how: Call) -> phasers::Result<u64> {
    match how {
        Call::Next => reg.next(),
        Call::NextTimeout => reg.next_timeout(HANG),
        Call::Wait => reg.wait(),
        Call::WaitTimeout => reg.wait_timeout(HANG),
    }
}

#[test]
fn force_terminate_releases_blocked_waiters_of_every_kind() {
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let tasks = [
        (Mode::SigWait, Call::Next),
        (Mode::SigWait, Call::NextTimeout),
        (Mode::Wait, Call::Wait),
        (Mode::Wait, Call::WaitTimeout),
    ];
    let regs: Vec<(Registration, Call)> = tasks
        .iter()
        .map(|&(mode, how)| (creator.register(mode).expect("a child"), how))
        .collect();
    // Phase 1 is the one they block in: phase 0 completes normally first.
    let mut creator = creator;
    let started = Barrier::new(regs.len() + 1);
    let results = within("force_terminate with blocked waiters", move || {
        std::thread::scope(|s| {
            let handles: Vec<_> = regs
                .into_iter()
                .map(|(mut reg, how)| {
                    let started = &started;
                    s.spawn(move || {
                        let first = call(&mut reg, how);
                        started.wait();
                        let blocked = call(&mut reg, how);
                        // Every later call says the same, at once.
                        let later = call(&mut reg, how);
                        (how, first, blocked, later)
                    })
                })
                .collect();
            assert_eq!(creator.next().expect("phase 0"), 0);
            started.wait();
            std::thread::sleep(SETTLE);
            assert!(!creator.phaser().is_terminated());
            creator.phaser().force_terminate();
            assert!(creator.phaser().is_terminated());
            expect_terminated(creator.next(), 1, "the creator's next after termination");
            handles
                .into_iter()
                .map(|h| h.join().expect("a waiter panicked"))
                .collect::<Vec<_>>()
        })
    });
    for (how, first, blocked, later) in results {
        assert_eq!(
            first,
            Ok(0),
            "{how:?}: phase 0 completed before the termination"
        );
        expect_terminated(blocked, 1, &format!("{how:?} blocked in phase 1"));
        expect_terminated(later, 1, &format!("{how:?} after the termination"));
    }
    assert!(phaser.is_terminated());
}

/// A timed wait on a terminated phaser says Terminated, not Timeout, even with a deadline long past.
#[test]
fn a_timed_wait_after_termination_is_terminated_not_timeout() {
    let (phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let _other = creator
        .register(Mode::SigWait)
        .expect("a child that never signals");
    phaser.force_terminate();
    expect_terminated(creator.next_timeout(Duration::ZERO), 0, "next_timeout(0)");
    expect_terminated(creator.wait_timeout(Duration::ZERO), 0, "wait_timeout(0)");
}

/// The last producer goes away while consumers wait for the phase after its last one: its drop
/// completes that phase (as Java's last `arriveAndDeregister`), then no later phase can complete.
#[test]
fn dropping_the_last_signaller_completes_its_phase_then_terminates() {
    const PRODUCED: u64 = 3;
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let mut producer = creator.register(Mode::Sig).expect("a Sig child");
    let consumers: Vec<Registration> = (0..3)
        .map(|_| creator.register(Mode::Wait).expect("a Wait child"))
        .collect();
    // The creator leaves at once: only the producer signals now, and the phaser goes on.
    drop(creator);
    assert!(!phaser.is_terminated(), "a signaller is left");
    for phase in 0..PRODUCED {
        assert_eq!(producer.next().expect("a Sig-only next"), phase);
    }
    let started = Barrier::new(consumers.len() + 1);
    let results = within("consumers of a producer that leaves", move || {
        std::thread::scope(|s| {
            let handles: Vec<_> = consumers
                .into_iter()
                .enumerate()
                .map(|(c, mut reg)| {
                    let started = &started;
                    s.spawn(move || {
                        // The produced phases completed: waiting for them succeeds.
                        for phase in 0..PRODUCED {
                            assert_eq!(reg.wait().expect("a completed phase"), phase);
                        }
                        started.wait();
                        let how = if c % 2 == 0 {
                            Call::Wait
                        } else {
                            Call::WaitTimeout
                        };
                        let blocked = call(&mut reg, how);
                        (blocked, call(&mut reg, how))
                    })
                })
                .collect();
            started.wait();
            std::thread::sleep(SETTLE);
            drop(producer);
            handles
                .into_iter()
                .map(|h| h.join().expect("a consumer panicked"))
                .collect::<Vec<_>>()
        })
    });
    for (c, (blocked, later)) in results.into_iter().enumerate() {
        assert_eq!(
            blocked,
            Ok(PRODUCED),
            "consumer {c} blocked: released by the leave"
        );
        expect_terminated(later, PRODUCED + 1, &format!("consumer {c} afterwards"));
    }
    assert_eq!(phaser.phase(), PRODUCED + 1);
    assert!(phaser.is_terminated());
    assert_eq!(phaser.signallers(), 0);
}

/// Consumers that fall behind still get every phase completed before the last signaller left.
#[test]
fn phases_completed_before_the_termination_can_still_be_waited_for() {
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let mut consumer = creator.register(Mode::Wait).expect("a Wait child");
    let mut creator = creator;
    for phase in 0..5 {
        assert_eq!(creator.next().expect("the only signaller"), phase);
    }
    drop(creator);
    assert!(phaser.is_terminated());
    let mut consumer = within("a late consumer", move || {
        for phase in 0..5 {
            assert_eq!(
                consumer.wait(),
                Ok(phase),
                "phase {phase} completed earlier"
            );
        }
        consumer
    });
    assert_eq!(consumer.wait(), Ok(5), "the last leave's phase completed");
    expect_terminated(consumer.wait(), 6, "the first phase after the termination");
}
