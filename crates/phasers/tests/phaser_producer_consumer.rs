//! Producer/consumer over a phaser: Sig-only producers publish item `k` and signal phase `k`;
//! Wait-only consumers wait for phase `k` and read item `k`.
//!
//! Every consumer must see every item, in order, fully written (the phaser orders the producers'
//! writes before the consumers' reads: the slots are `Relaxed` atomics on purpose). A producer never
//! blocks: it may run any number of phases ahead, so the slot arrays hold every item. Consumers
//! never hold a phase back, and once the last producer is gone the phases it completed can still be
//! waited for, while the next one reports `Error::Terminated`.

mod phaser_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use phaser_support::{within, Watchdog};
use phasers::{Error, Mode, Phaser, Registration};

/// Item `k` of producer `p`: never 0, so a slot not yet written (0) is told from a written one.
fn item(producer: usize, k: u64) -> u64 {
    (producer as u64 + 1) << 40 | (k * k + 1)
}

fn slots(items: u64) -> Vec<AtomicU64> {
    (0..items).map(|_| AtomicU64::new(0)).collect()
}

/// One producer: writes its items, signalling each.
fn produce(producer: usize, reg: &mut Registration, slots: &[AtomicU64]) {
    for (k, slot) in slots.iter().enumerate() {
        let k = k as u64;
        slot.store(item(producer, k), Ordering::Relaxed);
        assert_eq!(
            reg.next().expect("a Sig-only next never fails here"),
            k,
            "producer {producer} signalled the wrong phase"
        );
    }
}

/// One consumer: from its registration's phase on, waits for each phase and reads its items from
/// every producer.
fn consume(
    consumer: usize,
    reg: &mut Registration,
    producers: &[&[AtomicU64]],
    use_wait: bool,
    watchdog: &Watchdog,
) {
    let items = producers[0].len() as u64;
    let first = reg.phase();
    for k in first..items {
        let what = format!("consumer {consumer}, phase {k}");
        let done = if use_wait { reg.wait() } else { reg.next() }
            .unwrap_or_else(|error| panic!("{}", watchdog.explain(&what, &error)));
        assert_eq!(done, k, "{what}: completed the wrong phase");
        assert_eq!(reg.phase(), k + 1, "{what}: phase() after the wait");
        for (p, slots) in producers.iter().enumerate() {
            let seen = slots[k as usize].load(Ordering::Relaxed);
            assert_eq!(
                seen,
                item(p, k),
                "{what}: read {seen:#x} from producer {p}'s slot"
            );
        }
    }
}

/// After the last producer dropped: its drop completed the phase after the last produced one (a
/// phase without an item, as Java's last `arriveAndDeregister` advances the phase), and no later
/// phase can complete.
fn expect_terminated(reg: &mut Registration, what: &str) {
    let last = reg.phase();
    match reg.wait_timeout(phaser_support::HANG) {
        Ok(phase) if phase == last => {}
        other => panic!("{what}: waiting for the producer's leave gave {other:?}"),
    }
    match reg.wait_timeout(phaser_support::HANG) {
        Err(Error::Terminated { .. }) => {}
        other => panic!("{what}: waiting past the producer's leave gave {other:?}"),
    }
}

/// A phaser whose creator registers `producers` Sig-only and `consumers` Wait-only registrations
/// and then drops its own, so only they remain.
fn pipeline(producers: usize, consumers: usize) -> (Phaser, Vec<Registration>, Vec<Registration>) {
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let producer_regs: Vec<Registration> = (0..producers)
        .map(|_| creator.register(Mode::Sig).expect("a Sig child"))
        .collect();
    let consumer_regs: Vec<Registration> = (0..consumers)
        .map(|_| creator.register(Mode::Wait).expect("a Wait child"))
        .collect();
    drop(creator);
    assert_eq!(phaser.signallers(), producers, "only the producers signal");
    (phaser, producer_regs, consumer_regs)
}

/// The producer publishes every item before any consumer starts: it must never wait for them.
#[test]
fn a_producer_runs_ahead_of_consumers_that_have_not_started() {
    const ITEMS: u64 = 2_000;
    let (phaser, mut producers, mut consumers) = pipeline(1, 3);
    let slots = slots(ITEMS);
    let mut producer = producers.pop().unwrap();
    let produced = within("the Sig-only producer, with idle consumers", move || {
        let slots = slots;
        produce(0, &mut producer, &slots);
        (producer, slots)
    });
    let (producer, slots) = produced;
    assert_eq!(phaser.phase(), ITEMS, "every produced phase completed");
    drop(producer);
    let watchdog = Watchdog::new("late consumers", &phaser);
    std::thread::scope(|s| {
        for (c, reg) in consumers.iter_mut().enumerate() {
            let (slots, watchdog) = (&slots, &watchdog);
            s.spawn(move || {
                consume(c, reg, &[slots], c % 2 == 0, watchdog);
                expect_terminated(reg, &format!("consumer {c}"));
            });
        }
    });
}

/// Producer and consumers at the same time; consumers sometimes pause, so the producer runs ahead
/// by varying amounts.
#[test]
fn consumers_see_every_item_in_order_while_the_producer_runs() {
    const ITEMS: u64 = 3_000;
    let (phaser, mut producers, mut consumers) = pipeline(1, 4);
    let slots = slots(ITEMS);
    let watchdog = Watchdog::new("one producer, four consumers", &phaser);
    std::thread::scope(|s| {
        let mut producer = producers.pop().unwrap();
        let slots = &slots;
        s.spawn(move || {
            produce(0, &mut producer, slots);
            // Dropping the last producer terminates the phaser: the consumers must still get every
            // phase it completed.
            drop(producer);
        });
        for (c, reg) in consumers.iter_mut().enumerate() {
            let watchdog = &watchdog;
            s.spawn(move || {
                if c == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                }
                consume(c, reg, &[slots], c % 2 == 1, watchdog);
                expect_terminated(reg, &format!("consumer {c}"));
            });
        }
    });
}

/// Three producers at different paces: phase `k` completes only once all three published item `k`.
#[test]
fn several_sig_only_producers_each_item_complete() {
    const ITEMS: u64 = 1_500;
    const PRODUCERS: usize = 3;
    let (phaser, producers, mut consumers) = pipeline(PRODUCERS, 3);
    let all_slots: Vec<Vec<AtomicU64>> = (0..PRODUCERS).map(|_| slots(ITEMS)).collect();
    let views: Vec<&[AtomicU64]> = all_slots.iter().map(Vec::as_slice).collect();
    let watchdog = Watchdog::new("three producers", &phaser);
    std::thread::scope(|s| {
        for (p, mut producer) in producers.into_iter().enumerate() {
            let slots = views[p];
            s.spawn(move || {
                for (k, slot) in slots.iter().enumerate() {
                    // Producer 1 pauses now and then, so the others run ahead of it.
                    if p == 1 && k % 500 == 0 {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    slot.store(item(p, k as u64), Ordering::Relaxed);
                    assert_eq!(producer.next().expect("Sig-only next"), k as u64);
                }
            });
        }
        for (c, reg) in consumers.iter_mut().enumerate() {
            let (views, watchdog) = (&views, &watchdog);
            s.spawn(move || {
                consume(c, reg, views, c == 0, watchdog);
                expect_terminated(reg, &format!("consumer {c}"));
            });
        }
    });
}

/// A consumer registers another consumer in the middle of the stream: the newcomer starts in its
/// parent's phase and sees every item from there on.
#[test]
fn a_consumer_joining_midway_starts_at_its_parents_phase() {
    const ITEMS: u64 = 1_000;
    const JOIN_AT: u64 = 400;
    let (phaser, mut producers, mut consumers) = pipeline(1, 1);
    let slots = slots(ITEMS);
    let watchdog = Watchdog::new("a consumer joining midway", &phaser);
    let mut parent = consumers.pop().unwrap();
    // The producer stays registered until the child is: a terminated phaser takes no registration,
    // even from a consumer lagging behind the phase it ended at (issue 31).
    let joined = &std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let mut producer = producers.pop().unwrap();
        let slots = &slots;
        s.spawn(move || {
            produce(0, &mut producer, slots);
            joined.wait();
        });
        for k in 0..JOIN_AT {
            parent
                .wait()
                .unwrap_or_else(|e| panic!("{}", watchdog.explain(&format!("phase {k}"), &e)));
        }
        let mut child = parent
            .register(Mode::Wait)
            .expect("a Wait child of a Wait parent");
        assert_eq!(
            child.phase(),
            JOIN_AT,
            "the child starts in its parent's phase"
        );
        joined.wait();
        let watchdog = &watchdog;
        s.spawn(move || consume(1, &mut child, &[slots], true, watchdog));
        consume(0, &mut parent, &[slots], false, watchdog);
    });
}
