//! Phasers across the sub-phaser word's tag wrap (see `phaser/word.rs`).
//!
//! The word keeps a phase's low bits only, and readers rebuild the whole phase from a phase of
//! their own. In the crate's unit tests the tag is 4 bits wide, so it wraps every 16 phases and
//! these tests cross the wrap a dozen times or more, with everything that reads the word: signals
//! made ahead, a wait-only registration lagging further behind than the tag can tell, joins and
//! leaves, trees, and accumulators whose results are checked every phase. A phase misread across
//! the wrap shows as a wrong phase number, a wrong sum, or a hang.
//!
//! Here rather than in `phaser/`: the sums need the accumulator, which sits above the phaser.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::phaser::word::{MAX_RUN_AHEAD, WINDOW};
use crate::{Accumulator, Mode, Op, Phaser};

/// Enough phases to wrap the test build's 4-bit tag a dozen times.
const PHASES: u64 = 12 * 2 * WINDOW;

/// Two `SigWait` tasks, a signal-only producer running ahead, and a wait-only consumer, on a flat
/// phaser and on a tree, with a sum every phase.
#[test]
fn every_phase_and_every_sum_survives_the_wrap() {
    for (tiers, degree) in [(1, 2), (2, 2), (3, 2)] {
        let (phaser, mut main) = Phaser::builder()
            .tiers(tiers)
            .degree(degree)
            .build()
            .unwrap();
        let sum = Accumulator::<u64>::new(&phaser, Op::Sum).unwrap();
        let mut worker = main.register(Mode::SigWait).unwrap();
        let mut producer = main.register(Mode::Sig).unwrap();
        let mut consumer = main.register(Mode::Wait).unwrap();
        std::thread::scope(|s| {
            let sum = &sum;
            s.spawn(move || {
                for phase in 0..PHASES {
                    sum.send(&mut worker, 2).unwrap();
                    assert_eq!(worker.next().unwrap(), phase);
                    assert_eq!(sum.result(), 1 + 2 + phase, "tiers {tiers}, phase {phase}");
                }
            });
            s.spawn(move || {
                for phase in 0..PHASES {
                    sum.send(&mut producer, phase).unwrap();
                    producer.signal().unwrap();
                }
            });
            s.spawn(move || {
                for phase in 0..PHASES {
                    assert_eq!(consumer.wait().unwrap(), phase);
                }
            });
            for phase in 0..PHASES {
                sum.send(&mut main, 1).unwrap();
                assert_eq!(main.next().unwrap(), phase);
                assert_eq!(sum.result(), 1 + 2 + phase, "tiers {tiers}, phase {phase}");
            }
        });
        assert_eq!(phaser.phase(), PHASES);
    }
}

/// A wait-only registration that lags more phases behind than the tag can tell still sees each
/// phase it waits for as released, in order, and never waits for a phase long completed.
#[test]
fn a_wait_only_registration_lagging_past_the_window_catches_up() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut late = main.register(Mode::Wait).unwrap();
    let ahead = 3 * WINDOW + 5;
    for _ in 0..ahead {
        main.next().unwrap();
    }
    for phase in 0..ahead {
        assert_eq!(late.wait().unwrap(), phase);
    }
    assert_eq!(phaser.phase(), ahead);
}

/// A signal-only registration runs at most `MAX_RUN_AHEAD` phases ahead of the phaser: its next
/// signal waits until the others catch up, instead of moving its leaf out of the window.
#[test]
fn a_signal_only_registration_waits_at_the_run_ahead_bound() {
    let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
    let mut producer = main.register(Mode::Sig).unwrap();
    let signalled = AtomicU64::new(0);
    let rounds = 4 * WINDOW;
    std::thread::scope(|s| {
        let signalled = &signalled;
        s.spawn(move || {
            for _ in 0..rounds {
                producer.signal().unwrap();
                signalled.fetch_add(1, Ordering::SeqCst);
            }
        });
        for phase in 0..rounds {
            // Let the producer run as far as it can before this phase completes.
            std::thread::yield_now();
            let ahead = signalled.load(Ordering::SeqCst);
            assert!(
                ahead <= phase + MAX_RUN_AHEAD,
                "the producer signalled {ahead} phases while the phaser was at {phase}"
            );
            assert_eq!(main.next().unwrap(), phase);
        }
    });
    assert_eq!(phaser.phase(), rounds);
}

/// Tasks join and leave a tree while the others run across the wrap; the sum of each phase
/// counts exactly the tasks registered for it.
#[test]
fn joins_and_leaves_across_the_wrap_keep_every_sum() {
    let (phaser, mut main) = Phaser::builder().tiers(2).degree(2).build().unwrap();
    let sum = Accumulator::<u64>::new(&phaser, Op::Sum).unwrap();
    let mut steady = main.register(Mode::SigWait).unwrap();
    std::thread::scope(|s| {
        let sum = &sum;
        s.spawn(move || {
            for phase in 0..PHASES {
                sum.send(&mut steady, 1).unwrap();
                assert_eq!(steady.next().unwrap(), phase);
            }
        });
        // Every WINDOW phases, a child joins for WINDOW / 2 phases, each sending 10.
        let mut child = None;
        for phase in 0..PHASES {
            if phase % WINDOW == 0 {
                child = Some(main.register(Mode::SigWait).unwrap());
            }
            if phase % WINDOW == WINDOW / 2 {
                child = None;
            }
            let children = u64::from(child.is_some());
            sum.send(&mut main, 1).unwrap();
            if let Some(child) = child.as_mut() {
                sum.send(child, 10).unwrap();
                child.signal().unwrap();
            }
            assert_eq!(main.next().unwrap(), phase);
            assert_eq!(sum.result(), 2 + 10 * children, "phase {phase}");
            if let Some(child) = child.as_mut() {
                assert_eq!(child.wait().unwrap(), phase);
            }
        }
    });
}
