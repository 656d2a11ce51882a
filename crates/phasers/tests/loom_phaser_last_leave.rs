//! Loom model of the phaser's last leave (issue 31): two `SigWait` tasks complete phase 0 and then
//! both leave in phase 1, racing, while a wait-only consumer waits for phases 0, 1 and 2, on a flat
//! phaser and on a tree.
//!
//! Whichever leave comes last completes phase 1 (as Java's last `arriveAndDeregister` advances the
//! phase) and then terminates the phaser. What the model checks, beyond "no deadlock and no lost
//! wake-up" (loom's own):
//!
//! - the consumer's wait for phase 1 returns `Ok(1)`, never `Terminated`, and its wait for phase 2
//!   returns `Terminated { phase: 2 }`, however the leaves interleave with its waits;
//! - once its wait for phase `k` returns, it sees what each task wrote before signalling or leaving
//!   phase `k` (non-atomic loom cells: loom fails the model if a read is not ordered after the
//!   write);
//! - afterwards `phase()` is 2 and the phaser is terminated.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use loom_support::model_bounded;
use phasers::{Error, Mode, Phaser};

/// What each task wrote before signalling phase 0 and before leaving in phase 1:
/// `cells[task * 2 + phase]`.
struct Ledger {
    cells: [UnsafeCell<bool>; 4],
}

impl Ledger {
    fn new() -> Arc<Self> {
        Arc::new(Ledger {
            cells: std::array::from_fn(|_| UnsafeCell::new(false)),
        })
    }

    fn mark(&self, task: usize, phase: usize) {
        self.cells[task * 2 + phase].with_mut(|cell| {
            // SAFETY: only `task` writes its own cells, once, before it signals or leaves `phase`;
            // the consumer reads them only after that phase completed, which loom checks is
            // ordered after.
            unsafe { *cell = true }
        });
    }

    fn check(&self, phase: usize) {
        for task in 0..2 {
            let marked = self.cells[task * 2 + phase].with(|cell| {
                // SAFETY: see `mark`; loom fails the model if this read races with the write.
                unsafe { *cell }
            });
            assert!(
                marked,
                "phase {phase} completed before task {task} was done with it"
            );
        }
    }
}

/// On a flat phaser: every task on the root.
#[test]
fn the_last_leave_completes_its_phase_then_terminates_flat() {
    last_leave(1, 2);
}

/// On a tree of two tiers of degree 2 (three tasks: two leaves). A test of its own rather than a
/// loop over both shapes, so that the harness runs the two searches in parallel (this one is much
/// the longer).
#[test]
fn the_last_leave_completes_its_phase_then_terminates_tree() {
    last_leave(2, 2);
}

fn last_leave(tiers: usize, degree: usize) {
    model_bounded(2, move || {
        let ledger = Ledger::new();
        let (phaser, mut main) = Phaser::builder()
            .tiers(tiers)
            .degree(degree)
            .build()
            .expect("a valid shape");
        let mut other = main.register(Mode::SigWait).unwrap();
        let mut consumer = main.register(Mode::Wait).unwrap();
        let consumer_ledger = ledger.clone();
        let consumer_thread = thread::spawn(move || {
            for phase in 0..2 {
                assert_eq!(consumer.wait(), Ok(phase as u64));
                consumer_ledger.check(phase);
            }
            assert_eq!(consumer.wait(), Err(Error::Terminated { phase: 2 }));
        });
        let other_ledger = ledger.clone();
        let other_thread = thread::spawn(move || {
            other_ledger.mark(1, 0);
            assert_eq!(other.next(), Ok(0));
            other_ledger.mark(1, 1);
            drop(other);
        });
        ledger.mark(0, 0);
        assert_eq!(main.next(), Ok(0));
        ledger.mark(0, 1);
        drop(main);
        other_thread.join().unwrap();
        consumer_thread.join().unwrap();
        assert!(phaser.is_terminated());
        assert_eq!(phaser.phase(), 2);
    });
}
