//! Loom models of the phaser and its accumulators: 2 or 3 tasks, 2 phases each, on flat and tree
//! phasers.
//!
//! What the models check, beyond "no deadlock and no lost wake-up" (loom's own):
//!
//! - **The phase invariant, with visibility.** Before a task signals phase `k` it writes `true`
//!   into its own non-atomic cell for `(task, k)`; after a wait for `k` returns, the waiter reads
//!   the cell of every task registered for `k`. The cells are loom `UnsafeCell`s, so loom fails the
//!   model if a read is not ordered after the write (a release before every signal, or without the
//!   ordering that publishes the signallers' writes); the value must be `true`.
//! - **Registering and dropping racing a gather** (`join_while_gathering`, `leave_while_gathering`):
//!   a task registers a child between its signal and its wait, and a task drops (emptying a leaf of
//!   the tree) while the others gather the next phase.
//! - **Signal-only and wait-only** (`producer_and_consumer`): a producer signals two phases
//!   without waiting; the consumer waits for each and sees the item written before the signal.
//! - **`next_single`**: the action runs once per phase, after every signal (it reads every cell of
//!   the phase) and before anyone proceeds (it increments a non-atomic counter that each task reads
//!   after its `next_single`).
//! - **Accumulators across phases**: sends of two phases never mix, on flat and tree phasers, with a
//!   signal-only sender that runs a phase ahead.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use loom_support::model_bounded;
use phasers::{Accumulator, Mode, Op, Phaser, Registration};

const PHASES: usize = 2;

/// Which cells were written before a signal: `cells[task * PHASES + phase]`.
struct Ledger {
    cells: Box<[UnsafeCell<bool>]>,
}

impl Ledger {
    fn new(tasks: usize) -> Arc<Self> {
        Arc::new(Ledger {
            cells: (0..tasks * PHASES)
                .map(|_| UnsafeCell::new(false))
                .collect(),
        })
    }

    fn mark(&self, task: usize, phase: usize) {
        self.cells[task * PHASES + phase].with_mut(|cell| {
            // SAFETY: only `task` writes its own cells, once, before it signals `phase`; readers
            // read them only after that phase completed, which loom checks is ordered after.
            unsafe { *cell = true }
        });
    }

    fn check(&self, tasks: impl IntoIterator<Item = usize>, phase: usize) {
        for task in tasks {
            let marked = self.cells[task * PHASES + phase].with(|cell| {
                // SAFETY: see `mark`; loom fails the model if this read races with the write.
                unsafe { *cell }
            });
            assert!(
                marked,
                "phase {phase} completed before task {task} signalled it"
            );
        }
    }
}

fn shapes() -> [(usize, usize); 2] {
    [(1, 2), (2, 2)]
}

fn build(tiers: usize, degree: usize, mode: Mode) -> (Phaser, Registration) {
    Phaser::builder()
        .tiers(tiers)
        .degree(degree)
        .mode(mode)
        .build()
        .expect("a valid shape")
}

/// Task 0 signals phase 0, registers task 2 (which starts at phase 1), then waits; task 1 runs
/// both phases. Phase 0 must not wait for task 2; phase 1 must.
#[test]
fn join_while_gathering() {
    for (tiers, degree) in shapes() {
        model_bounded(2, move || {
            let ledger = Ledger::new(3);
            let (_phaser, mut main) = build(tiers, degree, Mode::SigWait);
            let mut first = main.register(Mode::SigWait).unwrap();
            let first_ledger = ledger.clone();
            let first_thread = thread::spawn(move || {
                for phase in 0..PHASES {
                    first_ledger.mark(1, phase);
                    assert_eq!(first.next().unwrap(), phase as u64);
                    let expected: &[usize] = if phase == 0 { &[0, 1] } else { &[0, 1, 2] };
                    first_ledger.check(expected.iter().copied(), phase);
                }
            });
            ledger.mark(0, 0);
            main.signal().unwrap();
            let mut late = main.register(Mode::SigWait).unwrap();
            assert_eq!(late.phase(), 1);
            let late_ledger = ledger.clone();
            let late_thread = thread::spawn(move || {
                late_ledger.mark(2, 1);
                assert_eq!(late.next().unwrap(), 1);
                late_ledger.check([0, 1, 2], 1);
            });
            assert_eq!(main.wait().unwrap(), 0);
            ledger.check([0, 1], 0);
            ledger.mark(0, 1);
            assert_eq!(main.next().unwrap(), 1);
            ledger.check([0, 1, 2], 1);
            first_thread.join().unwrap();
            late_thread.join().unwrap();
        });
    }
}

/// Three tasks complete phase 0; task 2 (alone on its leaf in the tree) drops while tasks 0 and 1
/// gather phase 1, which must then complete without it.
#[test]
fn leave_while_gathering() {
    for (tiers, degree) in shapes() {
        model_bounded(2, move || {
            let ledger = Ledger::new(3);
            let (phaser, mut main) = build(tiers, degree, Mode::SigWait);
            let mut first = main.register(Mode::SigWait).unwrap();
            let mut leaver = main.register(Mode::SigWait).unwrap();
            let leaver_ledger = ledger.clone();
            let leaver_thread = thread::spawn(move || {
                leaver_ledger.mark(2, 0);
                assert_eq!(leaver.next().unwrap(), 0);
                drop(leaver);
            });
            let first_ledger = ledger.clone();
            let first_thread = thread::spawn(move || {
                for phase in 0..PHASES {
                    first_ledger.mark(1, phase);
                    assert_eq!(first.next().unwrap(), phase as u64);
                    first_ledger.check([0, 1], phase);
                }
            });
            for phase in 0..PHASES {
                ledger.mark(0, phase);
                assert_eq!(main.next().unwrap(), phase as u64);
                ledger.check([0, 1], phase);
            }
            ledger.check([2], 0);
            leaver_thread.join().unwrap();
            first_thread.join().unwrap();
            assert_eq!(phaser.phase(), PHASES as u64);
        });
    }
}

/// A signal-only producer and a wait-only consumer: the consumer sees each item once its phase
/// completed, and the producer never waits (it may finish both phases before the consumer starts).
#[test]
fn producer_and_consumer() {
    for (tiers, degree) in shapes() {
        model_bounded(2, move || {
            let ledger = Ledger::new(1);
            let (_phaser, creator) = build(tiers, degree, Mode::SigWait);
            let mut producer = creator.register(Mode::Sig).unwrap();
            let mut consumer = creator.register(Mode::Wait).unwrap();
            drop(creator);
            let producer_ledger = ledger.clone();
            let producer_thread = thread::spawn(move || {
                for phase in 0..PHASES {
                    producer_ledger.mark(0, phase);
                    assert_eq!(producer.next().unwrap(), phase as u64);
                }
                // Kept until the consumer is done: dropping the last signaller terminates.
                producer
            });
            for phase in 0..PHASES {
                assert_eq!(consumer.next().unwrap(), phase as u64);
                ledger.check([0], phase);
            }
            drop(producer_thread.join().unwrap());
        });
    }
}

/// Two `SigWaitSingle` tasks, two phases of `next_single`: one action per phase, after every
/// signal, before anyone proceeds.
#[test]
fn next_single_runs_once_between_gather_and_release() {
    model_bounded(2, || {
        let ledger = Ledger::new(2);
        let actions = Arc::new(UnsafeCell::new(0usize));
        let (_phaser, main) = build(1, 2, Mode::SigWaitSingle);
        let other = main.register(Mode::SigWaitSingle).unwrap();
        let run = move |task: usize,
                        mut reg: Registration,
                        ledger: Arc<Ledger>,
                        actions: Arc<UnsafeCell<usize>>| {
            let mut ran = 0;
            for phase in 0..PHASES {
                ledger.mark(task, phase);
                let outcome = reg
                    .next_single(|| {
                        ledger.check([0, 1], phase);
                        // SAFETY: the action runs once per phase, between the gather and the
                        // release; loom fails the model if two actions or a reader overlap.
                        actions.with_mut(|count| unsafe { *count += 1 });
                    })
                    .unwrap();
                ran += usize::from(outcome.is_some());
                // SAFETY: read after the release of `phase`, ordered after its action.
                let count = actions.with(|count| unsafe { *count });
                assert_eq!(count, phase + 1, "actions run before leaving phase {phase}");
            }
            ran
        };
        let (other_ledger, other_actions) = (ledger.clone(), actions.clone());
        let other_thread = thread::spawn(move || run(1, other, other_ledger, other_actions));
        let mine = run(0, main, ledger, actions);
        let theirs = other_thread.join().unwrap();
        assert_eq!(mine + theirs, PHASES, "exactly one action per phase");
    });
}

/// Sends of consecutive phases never mix: on a tree phaser, a signal-only sender contributes
/// to phase 1 while phase 0 may still be gathering, and each phase's result counts only its own
/// sends.
#[test]
fn accumulator_phases_do_not_mix() {
    for (tiers, degree) in shapes() {
        model_bounded(2, move || {
            let (phaser, mut main) = build(tiers, degree, Mode::SigWait);
            let sum = Accumulator::<u64>::new(&phaser, Op::Sum).unwrap();
            let mut worker = main.register(Mode::SigWait).unwrap();
            let mut feeder = main.register(Mode::Sig).unwrap();
            let feeder_sum = sum.clone();
            let feeder_thread = thread::spawn(move || {
                for phase in 0..PHASES as u64 {
                    feeder_sum.send(&mut feeder, 100 * (phase + 1)).unwrap();
                    feeder.next().unwrap();
                }
                feeder
            });
            let worker_sum = sum.clone();
            let worker_thread = thread::spawn(move || {
                for phase in 0..PHASES as u64 {
                    worker_sum.send(&mut worker, 10 * (phase + 1)).unwrap();
                    worker.next().unwrap();
                }
            });
            for phase in 0..PHASES as u64 {
                sum.send(&mut main, phase + 1).unwrap();
                main.next().unwrap();
                // Phase 1 may already be complete when this task reads phase 0's result; it
                // cannot be: phase 1 needs this task's signal.
                assert_eq!(
                    sum.result(),
                    111 * (phase + 1),
                    "the result of phase {phase}"
                );
            }
            worker_thread.join().unwrap();
            drop(feeder_thread.join().unwrap());
        });
    }
}
