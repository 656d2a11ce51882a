//! Loom models of the root line (`phaser/root_line.rs`): the first plain accumulator's root cells
//! beside the root word, readied by the root's last arrival before the compare-and-swap that
//! releases the phase, and read by `result()` between two reads of the root's tag.
//!
//! - **A join and a leave racing the re-arm** (`rearm_races_a_join_and_a_leave`): task 0 signals,
//!   then registers a task and drops it again before it waits, while task 1 may be arriving last
//!   at the same phase: its compare-and-swap fails on the registration's changes to the root,
//!   after it readied the accumulator, and it arrives again. Every phase's result must be the
//!   sum of that phase's sends, read by both tasks after their waits.
//! - **`result()` racing completions** (`result_races_the_completions`): a thread holding only the
//!   accumulator reads its result while two tasks complete five phases, each sending a distinct
//!   bit per phase. Every read must be a whole phase's result (both bits of one phase, or the
//!   identity before the first), and reads never go back to an earlier phase.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom::thread;
use loom_support::{model_bounded, phaser_of_shape};
use phasers::{Accumulator, Mode, Op};

/// What task `task` sends in `phase`: its own bit of the phase.
fn sent(task: u64, phase: u64) -> u64 {
    1 << (2 * phase + task)
}

/// The result of `phase`: both tasks' bits.
fn total(phase: u64) -> u64 {
    sent(0, phase) + sent(1, phase)
}

const PHASES: u64 = 3;

#[test]
fn rearm_races_a_join_and_a_leave() {
    model_bounded(2, || {
        let (phaser, mut main) = phaser_of_shape(1, 2, Mode::SigWait);
        let sum = Accumulator::<u64>::new(&phaser, Op::Sum).unwrap();
        let mut other = main.register(Mode::SigWait).unwrap();
        let other_sum = sum.clone();
        let other_thread = thread::spawn(move || {
            for phase in 0..PHASES {
                other_sum.send(&mut other, sent(1, phase)).unwrap();
                assert_eq!(other.next().unwrap(), phase);
                assert_eq!(other_sum.result(), total(phase), "phase {phase}");
            }
        });
        for phase in 0..PHASES {
            sum.send(&mut main, sent(0, phase)).unwrap();
            main.signal().unwrap();
            if phase == 0 {
                // Joins for phase 1 and leaves at it: two changes to the root while the other
                // task may be completing phase 0.
                let late = main.register(Mode::SigWait).unwrap();
                drop(late);
            }
            assert_eq!(main.wait().unwrap(), phase);
            assert_eq!(sum.result(), total(phase), "phase {phase}");
        }
        other_thread.join().unwrap();
    });
}

/// Phases the reader races: enough for the cell it reads to be emptied and filled again (the
/// root keeps four phases' cells) while it reads.
const RACED: u64 = 5;

/// The phase whose result `value` is (`None` for the identity, before the first).
fn phase_of(value: u64) -> Option<u64> {
    if value == 0 {
        return None;
    }
    let phase = (0..RACED)
        .find(|&phase| value == total(phase))
        .unwrap_or_else(|| panic!("{value:#b} is no phase's whole result"));
    Some(phase)
}

fn result_races_the_completions(tiers: usize, degree: usize) {
    model_bounded(2, move || {
        let (phaser, mut main) = phaser_of_shape(tiers, degree, Mode::SigWait);
        let sum = Accumulator::<u64>::new(&phaser, Op::Sum).unwrap();
        let mut other = main.register(Mode::SigWait).unwrap();
        let other_sum = sum.clone();
        let other_thread = thread::spawn(move || {
            for phase in 0..RACED {
                other_sum.send(&mut other, sent(1, phase)).unwrap();
                other.next().unwrap();
            }
        });
        let reader_sum = sum.clone();
        let reader = thread::spawn(move || {
            let first = phase_of(reader_sum.result());
            let second = phase_of(reader_sum.result());
            assert!(first <= second, "{first:?} read before {second:?}");
        });
        for phase in 0..RACED {
            sum.send(&mut main, sent(0, phase)).unwrap();
            main.next().unwrap();
        }
        assert_eq!(sum.result(), total(RACED - 1));
        reader.join().unwrap();
        other_thread.join().unwrap();
    });
}

#[test]
fn result_races_the_completions_flat() {
    result_races_the_completions(1, 2);
}

/// Two tiers of degree 2: both tasks on the first leaf, whose completer moves its cell into the
/// root's and re-arms the root in its arrival there (no guess: it reads the root first).
#[test]
fn result_races_the_completions_tree() {
    result_races_the_completions(2, 2);
}
