//! The capability lattice `SigWaitSingle > SigWait > {Sig, Wait}`: a registration may register a
//! child no stronger than itself, and each operation needs its capability. A refusal is an
//! `Error::Capability` that changes nothing: the phaser and the refused registration go on as if it
//! had not been asked.

mod phaser_support;

use phaser_support::within;
use phasers::{Accumulator, Error, Mode, Op, Phaser};

/// Which children each mode may register, written out from the lattice rather than derived.
const MAY_REGISTER: [(Mode, &[Mode]); 4] = [
    (
        Mode::SigWaitSingle,
        &[Mode::SigWaitSingle, Mode::SigWait, Mode::Sig, Mode::Wait],
    ),
    (Mode::SigWait, &[Mode::SigWait, Mode::Sig, Mode::Wait]),
    (Mode::Sig, &[Mode::Sig]),
    (Mode::Wait, &[Mode::Wait]),
];

fn expect_capability<T: std::fmt::Debug>(result: phasers::Result<T>, what: &str) {
    match result {
        Err(Error::Capability { .. }) => {}
        other => panic!("{what}: expected Error::Capability, got {other:?}"),
    }
}

#[test]
fn mode_predicates_follow_the_lattice() {
    for (parent, allowed) in MAY_REGISTER {
        for child in Mode::ALL {
            assert_eq!(
                parent.includes(child),
                allowed.contains(&child),
                "{parent:?}.includes({child:?})"
            );
        }
    }
    assert!(Mode::SigWaitSingle.can_signal() && Mode::SigWaitSingle.can_wait());
    assert!(Mode::SigWait.can_signal() && Mode::SigWait.can_wait());
    assert!(Mode::Sig.can_signal() && !Mode::Sig.can_wait());
    assert!(!Mode::Wait.can_signal() && Mode::Wait.can_wait());
}

/// Every (parent, child) pair: allowed ones give a child of that mode, the others are refused.
/// Each parent is reached through a chain of allowed registrations from a SigWaitSingle creator.
#[test]
fn registering_a_stronger_child_is_refused() {
    for (parent_mode, allowed) in MAY_REGISTER {
        let (phaser, creator) = Phaser::new(Mode::SigWaitSingle).expect("a phaser");
        let parent = creator
            .register(parent_mode)
            .expect("SigWaitSingle registers anything");
        for child_mode in Mode::ALL {
            let what = format!("{parent_mode:?} registering {child_mode:?}");
            let signallers = phaser.signallers();
            let result = parent.register(child_mode);
            if allowed.contains(&child_mode) {
                let child = result.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(child.mode(), child_mode, "{what}");
                assert_eq!(
                    child.phase(),
                    parent.phase(),
                    "{what}: starts in the parent's phase"
                );
                let more = usize::from(child_mode.can_signal());
                assert_eq!(phaser.signallers(), signallers + more, "{what}");
            } else {
                expect_capability(result, &what);
                assert_eq!(
                    phaser.signallers(),
                    signallers,
                    "{what}: a refusal adds nobody"
                );
            }
        }
        drop(parent);
        drop(creator);
    }
}

/// After a refused registration, the parent and the phaser work as before.
#[test]
fn a_refusal_changes_nothing() {
    let (phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    expect_capability(
        creator.register(Mode::SigWaitSingle),
        "SigWait registering SigWaitSingle",
    );
    assert_eq!(phaser.signallers(), 1);
    assert_eq!(
        creator.next().expect("the creator alone completes phase 0"),
        0
    );
    assert_eq!(creator.phase(), 1);
    assert_eq!(phaser.phase(), 1);
}

#[test]
fn a_wait_only_registration_cannot_signal_nor_send() {
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let acc = Accumulator::<i64>::new(&phaser, Op::Sum).expect("an accumulator");
    let mut consumer = creator.register(Mode::Wait).expect("a Wait child");
    expect_capability(consumer.signal(), "signal() on a Wait registration");
    expect_capability(acc.send(&mut consumer, 5), "send from a Wait registration");
    // The refused send did not count: the phase's sum is what the creator sent.
    let mut creator = creator;
    acc.send(&mut creator, 2)
        .expect("a SigWait registration sends");
    assert_eq!(creator.next().expect("next"), 0);
    assert_eq!(acc.result(), 2);
    assert_eq!(consumer.wait().expect("phase 0 completed"), 0);
}

#[test]
fn a_signal_only_registration_cannot_wait() {
    let (_phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let mut producer = creator.register(Mode::Sig).expect("a Sig child");
    // The creator stays registered and silent, so a wait that went ahead would block: `within`
    // turns that into a failure instead of a hang.
    let producer = within("waiting on a Sig registration", move || {
        expect_capability(producer.wait(), "wait() on a Sig registration");
        expect_capability(
            producer.wait_timeout(std::time::Duration::from_millis(1)),
            "wait_timeout() on a Sig registration",
        );
        producer
    });
    // Still a working producer: its next() signals phase 0 and returns at once.
    let producer = within("a Sig-only next", move || {
        let mut producer = producer;
        assert_eq!(producer.next().expect("a Sig-only next"), 0);
        producer
    });
    assert_eq!(producer.phase(), 1);
    drop(creator);
}

#[test]
fn next_single_needs_sig_wait_single() {
    for mode in [Mode::SigWait, Mode::Sig, Mode::Wait] {
        let (phaser, creator) = Phaser::new(Mode::SigWaitSingle).expect("a phaser");
        let mut reg = creator.register(mode).expect("a child");
        // The creator stays registered and silent, so a next_single that went ahead would block:
        // `within` turns that into a failure instead of a hang.
        let (result, ran) = within(&format!("next_single on {mode:?}"), move || {
            let mut ran = false;
            let result = reg.next_single(|| ran = true).map(|_| ());
            (result, ran)
        });
        expect_capability(result, &format!("next_single on {mode:?}"));
        assert!(!ran, "{mode:?}: the refused action must not run");
        assert_eq!(phaser.phase(), 0, "{mode:?}: a refusal does not signal");
        drop(creator);
    }
}
