//! Timed waits: a wait that gives up returns `Error::Timeout` naming the phase and exactly the
//! registrations (by id) that have not signalled it; the signal stays in place, so calling again
//! waits for the same phase without signalling twice, and completes it once the missing arrive.
//! For a flat phaser and for trees, where the signallers sit on different leaves.

mod phaser_support;

use std::time::{Duration, Instant};

use phaser_support::{within, HANG};
use phasers::{Error, Mode, Phaser, Registration};

/// Long enough that a timed-out wait has really been through spin, yield and park.
const SHORT: Duration = Duration::from_millis(20);

fn expect_timeout(result: phasers::Result<u64>, phase: u64, missing: &[usize], what: &str) {
    match result {
        Err(Error::Timeout {
            episode,
            missing: mut named,
            resumable: true,
        }) => {
            assert_eq!(episode, phase, "{what}: timed out in the wrong phase");
            named.sort_unstable();
            assert_eq!(
                named, missing,
                "{what}: wrong registrations named as missing"
            );
        }
        other => panic!("{what}: expected a timeout in phase {phase}, got {other:?}"),
    }
}

/// `next_timeout` on `reg`, checking that it gave up no earlier than its deadline (it may be late
/// on a loaded machine, never early).
fn timed_next(reg: &mut Registration, timeout: Duration) -> phasers::Result<u64> {
    let start = Instant::now();
    let result = reg.next_timeout(timeout);
    if result.is_err() {
        assert!(start.elapsed() >= timeout, "gave up before the deadline");
    }
    result
}

/// Four SigWait registrations and one Wait-only; the signallers arrive one at a time with timed
/// waits, so each timeout must name exactly those not yet arrived.
fn scenario(tiers: usize, degree: usize) {
    let what = format!("tiers {tiers}, degree {degree}");
    let (phaser, creator) = Phaser::builder()
        .mode(Mode::SigWait)
        .tiers(tiers)
        .degree(degree)
        .build()
        .expect("a valid phaser");
    let mut regs = vec![creator];
    for _ in 0..3 {
        let child = regs[0].register(Mode::SigWait).expect("a child");
        regs.push(child);
    }
    let mut consumer = regs[0].register(Mode::Wait).expect("a Wait child");
    let ids: Vec<usize> = regs.iter().map(Registration::id).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "{what}: ids are unique");
    assert!(!ids.contains(&consumer.id()), "{what}: ids are unique");
    assert_eq!(ids[0], 0, "{what}: the creator is id 0");

    let missing_ids = |arrived: usize| -> Vec<usize> {
        let mut m: Vec<usize> = ids[arrived..].to_vec();
        m.sort_unstable();
        m
    };
    // A Wait-only registration waits without signalling: everyone is missing.
    expect_timeout(consumer.wait_timeout(SHORT), 0, &missing_ids(0), &what);
    for arrived in 1..regs.len() {
        let missing = missing_ids(arrived);
        let step = format!("{what}: {arrived} arrived");
        expect_timeout(
            timed_next(&mut regs[arrived - 1], SHORT),
            0,
            &missing,
            &step,
        );
        // Calling again, even with no time at all, waits for the same phase: the earlier signals
        // stay, and none is counted twice.
        for reg in &mut regs[..arrived] {
            expect_timeout(reg.next_timeout(Duration::ZERO), 0, &missing, &step);
        }
        expect_timeout(consumer.wait_timeout(Duration::ZERO), 0, &missing, &step);
        assert_eq!(phaser.phase(), 0, "{step}: the phase has not completed");
    }
    // The last one arrives: its next() completes the phase at once.
    let mut last = regs.pop().expect("the last signaller");
    let last = within("the last signaller's next", move || {
        assert_eq!(last.next(), Ok(0));
        last
    });
    // The timed-out ones complete that same phase, whichever call they retry with.
    for (r, reg) in regs.iter_mut().enumerate() {
        let result = if r % 2 == 0 {
            reg.next_timeout(HANG)
        } else {
            reg.wait_timeout(HANG)
        };
        assert_eq!(result, Ok(0), "{what}: registration {r} retrying");
        assert_eq!(reg.phase(), 1, "{what}: registration {r} moved on");
    }
    assert_eq!(consumer.wait_timeout(HANG), Ok(0), "{what}: the consumer");
    assert_eq!(phaser.phase(), 1, "{what}");
    regs.push(last);

    // An ordinary phase follows, with everyone on its own thread.
    let regs = within("a phase after the timeouts", move || {
        std::thread::scope(|s| {
            for reg in &mut regs {
                s.spawn(move || assert_eq!(reg.next(), Ok(1)));
            }
        });
        regs
    });
    assert_eq!(phaser.phase(), 2, "{what}");
    drop(regs);
}

#[test]
fn flat_timeouts_name_the_missing_and_keep_the_signal() {
    scenario(1, 16);
}

#[test]
fn tree_timeouts_name_the_missing_and_keep_the_signal() {
    scenario(2, 2);
}

#[test]
fn three_tier_timeouts_name_the_missing_and_keep_the_signal() {
    scenario(3, 2);
}

/// A dropped registration is no longer missing; one registered during the phase is.
#[test]
fn missing_follows_dynamic_membership() {
    let (_phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let leaver = creator.register(Mode::SigWait).expect("a child");
    let leaver_id = leaver.id();
    let joiner = creator.register(Mode::SigWait).expect("a child");
    let joiner_id = joiner.id();
    let mut both = vec![leaver_id, joiner_id];
    both.sort_unstable();
    expect_timeout(creator.next_timeout(SHORT), 0, &both, "two missing");
    drop(leaver);
    expect_timeout(
        creator.next_timeout(SHORT),
        0,
        &[joiner_id],
        "the leaver left",
    );
    // A child of the joiner, registered before the joiner signals, holds phase 0 back too.
    let child = joiner.register(Mode::SigWait).expect("a grandchild");
    let mut expected = vec![joiner_id, child.id()];
    expected.sort_unstable();
    expect_timeout(
        creator.next_timeout(SHORT),
        0,
        &expected,
        "the grandchild joined",
    );
    drop(child);
    drop(joiner);
    assert_eq!(creator.next_timeout(HANG), Ok(0), "everyone else left");
}
