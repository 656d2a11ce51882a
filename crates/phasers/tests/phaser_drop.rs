//! Dropping a registration deregisters it in any phase: phases stop waiting for it, whether it
//! signalled the current phase or not, and the others go on. Dropping it while its thread panics
//! breaks the phaser instead, so the others get `Error::Broken` naming it rather than results that
//! silently miss its part.

mod phaser_support;

use std::sync::Barrier;
use std::time::Duration;

use phaser_support::{payload_text, within};
use phasers::{Error, Mode, Phaser, Registration};

/// How long a test lets the others settle into their waits before the registration goes.
const SETTLE: Duration = Duration::from_millis(50);

/// `waiters` SigWait tasks block in `next()` of phase 1 while `leaver` has not signalled it; the
/// main thread then lets `leave` do something with the leaver. Returns what the waiters got, and
/// the leaver's id.
fn with_blocked_waiters(
    waiters: usize,
    leave: impl FnOnce(Registration) + Send + 'static,
) -> (Vec<phasers::Result<u64>>, usize) {
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let mut leaver = creator.register(Mode::SigWait).expect("the leaver");
    let leaver_id = leaver.id();
    let mut regs: Vec<Registration> = (1..waiters)
        .map(|_| creator.register(Mode::SigWait).expect("a waiter"))
        .collect();
    regs.push(creator);
    let results = within("waiters and a leaver", move || {
        let started = Barrier::new(waiters + 1);
        std::thread::scope(|s| {
            let handles: Vec<_> = regs
                .into_iter()
                .map(|mut reg| {
                    let started = &started;
                    s.spawn(move || {
                        assert_eq!(reg.next(), Ok(0));
                        started.wait();
                        reg.next()
                    })
                })
                .collect();
            assert_eq!(leaver.next(), Ok(0));
            started.wait();
            std::thread::sleep(SETTLE);
            assert_eq!(phaser.phase(), 1, "phase 1 waits for the leaver");
            leave(leaver);
            handles
                .into_iter()
                .map(|h| h.join().expect("a waiter panicked"))
                .collect()
        })
    });
    (results, leaver_id)
}

#[test]
fn dropping_before_signalling_releases_the_others() {
    for result in with_blocked_waiters(4, drop).0 {
        assert_eq!(result, Ok(1), "the leaver no longer holds phase 1 back");
    }
}

#[test]
fn dropping_after_signalling_counts_the_signal() {
    let (results, _) = with_blocked_waiters(4, |mut leaver| {
        leaver.signal().expect("signal phase 1");
        std::thread::sleep(SETTLE);
        drop(leaver);
    });
    for result in results {
        assert_eq!(result, Ok(1));
    }
}

#[test]
fn a_panicking_task_breaks_the_phaser() {
    let (results, leaver_id) = with_blocked_waiters(3, |leaver| {
        let id = leaver.id();
        let panicked = std::thread::spawn(move || {
            let _reg = leaver;
            panic!("task {id} fails in phase 1");
        })
        .join()
        .expect_err("the task panics");
        assert!(payload_text(&*panicked).contains("fails"));
    });
    for result in results {
        match result {
            Err(Error::Broken { by, episode }) => {
                assert_eq!(by, leaver_id, "Broken names the lost registration");
                assert_eq!(episode, 1, "the phase it did not complete");
            }
            other => panic!("expected Error::Broken, got {other:?}"),
        }
    }
}

/// After a break, every call fails at once with the same error, and registering more is refused.
#[test]
fn a_broken_phaser_stays_broken() {
    let (phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let lost = creator.register(Mode::SigWait).expect("a child");
    let lost_id = lost.id();
    std::thread::spawn(move || {
        let _reg = lost;
        panic!("lost in phase 0");
    })
    .join()
    .expect_err("the task panics");
    let mut creator = within("calls on a broken phaser", move || {
        for _ in 0..3 {
            match creator.next_timeout(phaser_support::HANG) {
                Err(Error::Broken { by, episode }) => {
                    assert_eq!((by, episode), (lost_id, 0));
                }
                other => panic!("expected Error::Broken, got {other:?}"),
            }
        }
        creator
    });
    assert!(
        matches!(creator.register(Mode::SigWait), Err(Error::Broken { .. })),
        "registering on a broken phaser"
    );
    assert!(matches!(creator.wait(), Err(Error::Broken { .. })));
    assert_eq!(phaser.phase(), 0, "no phase completes after the break");
}

/// Leaving and joining in every phase, on one thread, with a signaller that stays: the phaser
/// always waits for exactly the registrations present.
#[test]
fn membership_can_change_every_phase() {
    let (phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    for phase in 0..50u64 {
        let mut joiner = creator.register(Mode::SigWait).expect("a child");
        assert_eq!(joiner.phase(), phase);
        assert_eq!(phaser.signallers(), 2);
        if phase % 2 == 0 {
            // It signals and leaves: the phase completes when the creator arrives.
            joiner.signal().expect("signal");
        }
        drop(joiner);
        assert_eq!(phaser.signallers(), 1);
        let mut creator_moved = creator;
        creator = within("the creator alone", move || {
            assert_eq!(creator_moved.next(), Ok(phase));
            creator_moved
        });
    }
    assert_eq!(phaser.phase(), 50);
}
