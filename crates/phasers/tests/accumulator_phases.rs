//! Which phase a value counts for: `send` contributes to the sender's current phase, and `result()`
//! is the value of the most recently completed phase. So values of a Sig-only registration that
//! runs phases ahead wait for their own phases; sends after `signal()` count for the next phase;
//! sends of a registration dropped mid-phase still count; several sends by one task all count; and
//! several accumulators on one phaser keep their values apart.

mod phaser_support;

use phaser_support::within;
use phasers::{Accumulator, Error, Mode, Op, Phaser};

/// A Sig-only producer sends `10 * k + 1` in phase `k` for ten phases before anyone else moves; the
/// creator then completes the phases one at a time and sees each phase's value in turn.
#[test]
fn a_producer_running_ahead_keeps_each_value_in_its_phase() {
    const PHASES: u64 = 10;
    let (phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let acc = Accumulator::<u64>::new(&phaser, Op::Sum).expect("a sum");
    let mut producer = creator.register(Mode::Sig).expect("a Sig child");
    let sender = acc.clone();
    let producer_done = within("a Sig-only producer running ahead", move || {
        for phase in 0..PHASES {
            sender.send(&mut producer, 10 * phase + 1).expect("send");
            assert_eq!(producer.next(), Ok(phase));
        }
        producer
    });
    assert_eq!(
        acc.result(),
        0,
        "no phase has completed: the producer waits for the creator"
    );
    assert_eq!(phaser.phase(), 0);
    for phase in 0..PHASES {
        // The creator adds 1000 in even phases only.
        if phase % 2 == 0 {
            acc.send(&mut creator, 1000).expect("send");
        }
        let creator_moved = creator;
        let (done, back) = within("the creator's next", move || {
            let mut creator = creator_moved;
            (creator.next(), creator)
        });
        creator = back;
        assert_eq!(done, Ok(phase));
        let own = if phase % 2 == 0 { 1000 } else { 0 };
        assert_eq!(acc.result(), 10 * phase + 1 + own, "phase {phase}");
    }
    drop(producer_done);
}

/// Values sent between `signal()` and `wait()` count for the next phase: the phase signalled is
/// already closed for this registration.
#[test]
fn sends_after_signal_count_for_the_next_phase() {
    let (_phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let acc = Accumulator::<i64>::new(&_phaser, Op::Sum).expect("a sum");
    acc.send(&mut creator, 1).expect("send");
    creator.signal().expect("signal");
    acc.send(&mut creator, 20).expect("send");
    assert_eq!(creator.wait(), Ok(0));
    assert_eq!(acc.result(), 1, "phase 0");
    acc.send(&mut creator, 300).expect("send");
    assert_eq!(creator.next(), Ok(1));
    assert_eq!(
        acc.result(),
        320,
        "phase 1: the send after the signal and this one"
    );
}

/// A task sends, then drops its registration before signalling: its values still count.
#[test]
fn sends_of_a_registration_dropped_mid_phase_count() {
    let (_phaser, mut creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let acc = Accumulator::<i64>::new(&_phaser, Op::Sum).expect("a sum");
    let mut leaver = creator.register(Mode::SigWait).expect("a child");
    acc.send(&mut leaver, 40).expect("send");
    acc.send(&mut leaver, 2).expect("send");
    drop(leaver);
    acc.send(&mut creator, 100).expect("send");
    assert_eq!(creator.next(), Ok(0));
    assert_eq!(acc.result(), 142);
}

/// One task sends 1 to 100 in a single phase: every send counts.
#[test]
fn many_sends_in_one_phase_all_count() {
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let acc = Accumulator::<u64>::new(&phaser, Op::Sum).expect("a sum");
    let max = Accumulator::<u64>::new(&phaser, Op::Max).expect("a max");
    let mut helper = creator.register(Mode::SigWait).expect("a child");
    let mut creator = creator;
    let (acc_h, max_h) = (acc.clone(), max.clone());
    let helper_thread = std::thread::spawn(move || {
        for value in 1..=100u64 {
            acc_h.send(&mut helper, value).expect("send");
            max_h.send(&mut helper, value).expect("send");
        }
        helper.next()
    });
    let done = within("the creator's next", move || creator.next());
    assert_eq!(done, Ok(0));
    assert_eq!(helper_thread.join().expect("the helper"), Ok(0));
    assert_eq!(acc.result(), 5050);
    assert_eq!(max.result(), 100);
}

/// Four accumulators of different types and operators on one phaser, three tasks, several phases.
#[test]
fn several_accumulators_on_one_phaser_keep_apart() {
    const TASKS: u64 = 3;
    const PHASES: u64 = 20;
    let (phaser, creator) = Phaser::builder()
        .tiers(2)
        .degree(2)
        .build()
        .expect("a tree");
    let sum = Accumulator::<i64>::new(&phaser, Op::Sum).expect("sum");
    let max = Accumulator::<f64>::new(&phaser, Op::Max).expect("max");
    let product = Accumulator::<u32>::new(&phaser, Op::Product).expect("product");
    let xor = Accumulator::<u64>::new(&phaser, Op::Xor).expect("xor");
    let mut regs = vec![creator];
    for _ in 1..TASKS {
        let child = regs[0].register(Mode::SigWait).expect("a child");
        regs.push(child);
    }
    let results = within("four accumulators", move || {
        std::thread::scope(|s| {
            let handles: Vec<_> = regs
                .into_iter()
                .enumerate()
                .map(|(task, mut reg)| {
                    let (sum, max, product, xor) = (&sum, &max, &product, &xor);
                    s.spawn(move || {
                        let task = task as u64;
                        let mut seen = Vec::new();
                        for phase in 0..PHASES {
                            sum.send(&mut reg, (task + phase) as i64).unwrap();
                            max.send(&mut reg, (task * phase) as f64 / 4.0).unwrap();
                            product.send(&mut reg, (task + 2) as u32).unwrap();
                            xor.send(&mut reg, 1 << (task + phase)).unwrap();
                            assert_eq!(reg.next(), Ok(phase));
                            seen.push((sum.result(), max.result(), product.result(), xor.result()));
                        }
                        seen
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a task panicked"))
                .collect::<Vec<_>>()
        })
    });
    for (task, seen) in results.iter().enumerate() {
        for (phase, &got) in seen.iter().enumerate() {
            let phase = phase as u64;
            let expected = (
                (0..TASKS).map(|t| (t + phase) as i64).sum::<i64>(),
                ((TASKS - 1) * phase) as f64 / 4.0,
                (0..TASKS).map(|t| (t + 2) as u32).product::<u32>(),
                (0..TASKS).fold(0u64, |x, t| x ^ (1 << (t + phase))),
            );
            assert_eq!(got, expected, "task {task}, phase {phase}");
        }
    }
}

/// A registration of another phaser cannot send to this accumulator.
#[test]
fn a_registration_of_another_phaser_is_refused() {
    let (phaser, _creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let (_other, mut stranger) = Phaser::new(Mode::SigWait).expect("another phaser");
    let acc = Accumulator::<i64>::new(&phaser, Op::Sum).expect("a sum");
    match acc.send(&mut stranger, 1) {
        Err(Error::InvalidArgument { .. }) => {}
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

/// Twelve sums on three tasks each get their own result every phase, read by every task as soon
/// as it is released.
#[test]
fn twelve_accumulators_each_get_their_own_result_every_phase() {
    const ACCUMULATORS: u64 = 12;
    const ROUNDS: u64 = 10;
    let (phaser, creator) = Phaser::new(Mode::SigWait).expect("a phaser");
    let sums: Vec<_> = (0..ACCUMULATORS)
        .map(|_| Accumulator::<u64>::new(&phaser, Op::Sum).expect("a sum"))
        .collect();
    let children: Vec<_> = (0..2)
        .map(|_| creator.register(Mode::SigWait).expect("a child"))
        .collect();
    within("twelve sums on three tasks", move || {
        let sums = &sums;
        std::thread::scope(|s| {
            for (task, mut reg) in std::iter::once(creator).chain(children).enumerate() {
                s.spawn(move || {
                    for round in 0..ROUNDS {
                        for (k, sum) in sums.iter().enumerate() {
                            sum.send(&mut reg, (task as u64 + 1) * (k as u64 + 1) + round)
                                .unwrap();
                        }
                        assert_eq!(reg.next(), Ok(2 * round));
                        for (k, sum) in sums.iter().enumerate() {
                            // Tasks 1, 2 and 3 each sent (k + 1) times their number, plus the round.
                            assert_eq!(sum.result(), 6 * (k as u64 + 1) + 3 * round, "sum {k}");
                        }
                        // A phase with no sends, so nobody sends again before all have read.
                        assert_eq!(reg.next(), Ok(2 * round + 1));
                    }
                });
            }
        });
    });
}
