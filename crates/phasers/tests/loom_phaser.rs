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
//! - **An accumulator attached mid-run** (`accumulator_attached_mid_run_is_closed`): a flat
//!   phaser with neither accumulator nor advance action releases each phase in its last
//!   arrival's compare-and-swap; once a task attaches an accumulator and sends to it, the phase
//!   of that send is closed with it, whichever task arrives last and whatever word it guessed.
//! - **An unregistered observer** (`await_phase_races_the_advance`): a thread holding only the
//!   `Phaser` waits for each phase while the tasks complete it; when its wait returns it sees every
//!   signal of the phases completed, and it never misses a release.
//! - **The advance action and its `Break`** (`on_advance_terminates_after_its_phase`): the action
//!   runs once per phase, after every signal and before anyone proceeds (it increments a
//!   non-atomic counter each task reads once released); its `Break` after phase 1 lets phase 1
//!   complete and every later wait return `Terminated`, even with a signal-only task that has
//!   signalled phase 2 already.
//! - **A wait group** (`wait_group_waits_for_every_clone`): a wait returns only after every clone
//!   is dropped, including one cloned while the wait runs, and sees what the tasks did first.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use std::ops::ControlFlow;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use loom_support::{model_bounded, phaser_of_shape};
use phasers::{Accumulator, Error, Mode, Op, Phaser, Registration, WaitGroup};

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

/// One test per phaser shape for each model function `name(tiers, degree, args...)`: `flat` (one
/// tier of degree 2) and `tree` (two tiers of degree 2).
/// Separate tests rather than a loop over the shapes, so that the test harness runs the two
/// searches in parallel: the tree's are the long ones.
macro_rules! on_both_shapes {
    ($($test:ident => $name:ident($($arg:expr),*);)*) => {$(
        mod $test {
            use super::*;

            #[test]
            fn flat() {
                $name(1, 2 $(, $arg)*);
            }

            #[test]
            fn tree() {
                $name(2, 2 $(, $arg)*);
            }
        }
    )*};
}

on_both_shapes! {
    join_while_gathering => join_while_gathering();
    leave_while_gathering => leave_while_gathering();
    producer_and_consumer => producer_and_consumer();
    accumulator_phases_do_not_mix => accumulator_phases_do_not_mix();
    // The observer over both phases. Two preemptions take this three-thread model minutes, so it
    // explores one; the next model explores two over one phase.
    await_phase_races_the_advance => observer_model(PHASES, 1);
    // The observer's wait for one phase with up to two preemptions: deeper schedules of the race
    // between its park and the release.
    await_phase_races_one_release_deeply => observer_model(1, 2);
    on_advance_terminates_after_its_phase => on_advance_terminates_after_its_phase();
}

/// Task 0 signals phase 0, registers task 2 (which starts at phase 1), then waits; task 1 runs
/// both phases. Phase 0 must not wait for task 2; phase 1 must.
fn join_while_gathering(tiers: usize, degree: usize) {
    model_bounded(2, move || {
        let ledger = Ledger::new(3);
        let (_phaser, mut main) = phaser_of_shape(tiers, degree, Mode::SigWait);
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

/// Three tasks complete phase 0; task 2 (alone on its leaf in the tree) drops while tasks 0 and 1
/// gather phase 1, which must then complete without it.
fn leave_while_gathering(tiers: usize, degree: usize) {
    model_bounded(2, move || {
        let ledger = Ledger::new(3);
        let (phaser, mut main) = phaser_of_shape(tiers, degree, Mode::SigWait);
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

/// A signal-only producer and a wait-only consumer: the consumer sees each item once its phase
/// completed, and the producer never waits (it may finish both phases before the consumer starts).
fn producer_and_consumer(tiers: usize, degree: usize) {
    model_bounded(2, move || {
        let ledger = Ledger::new(1);
        let (_phaser, creator) = phaser_of_shape(tiers, degree, Mode::SigWait);
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

/// Two `SigWaitSingle` tasks, two phases of `next_single`: one action per phase, after every
/// signal, before anyone proceeds.
#[test]
fn next_single_runs_once_between_gather_and_release() {
    model_bounded(2, || {
        let ledger = Ledger::new(2);
        let actions = Arc::new(UnsafeCell::new(0usize));
        let (_phaser, main) = phaser_of_shape(1, 2, Mode::SigWaitSingle);
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
fn accumulator_phases_do_not_mix(tiers: usize, degree: usize) {
    model_bounded(2, move || {
        let (phaser, mut main) = phaser_of_shape(tiers, degree, Mode::SigWait);
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

/// Loom's cells are not `Send`, which an advance action must be: this lets a model's action
/// capture them.
struct LoomOnly<T>(T);

// SAFETY: loom runs the threads of a model one at a time on one OS thread, and checks every access
// to its cells for races itself; only the signature of `on_advance`, made for real threads, asks
// for `Send`.
unsafe impl<T> Send for LoomOnly<T> {}

impl<T> LoomOnly<T> {
    /// Through a method, so a closure captures the whole wrapper, not the `!Send` field.
    fn get(&self) -> &T {
        &self.0
    }
}

/// Two tasks run `phases` phases; a third thread, not registered, waits for phase 0 and then for
/// whatever phase is in progress, with `await_phase`. Each return must come after every signal of
/// the phases it reports complete, and report them in order.
/// Task 1 runs three phases throughout; task 0 completes phase 0, then attaches a sum and sends
/// 5 to it in phase 1. Phase 1's result must be 5: the attach marks the root before the send, so
/// task 1, if it arrives last at phase 1 with the word it found at phase 0 as its guess, cannot
/// release phase 1 without closing it.
#[test]
fn accumulator_attached_mid_run_is_closed() {
    model_bounded(2, || {
        let (phaser, mut main) = phaser_of_shape(1, 2, Mode::SigWait);
        let mut other = main.register(Mode::SigWait).unwrap();
        let other_thread = thread::spawn(move || {
            for phase in 0..3 {
                assert_eq!(other.next().unwrap(), phase);
            }
        });
        assert_eq!(main.next().unwrap(), 0);
        let sum = Accumulator::<i64>::new(&phaser, Op::Sum).unwrap();
        sum.send(&mut main, 5).unwrap();
        assert_eq!(main.next().unwrap(), 1);
        assert_eq!(sum.result(), 5);
        assert_eq!(main.next().unwrap(), 2);
        other_thread.join().unwrap();
    });
}

fn observer_model(tiers: usize, degree: usize, phases: usize, max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        let ledger = Ledger::new(2);
        let (phaser, mut main) = phaser_of_shape(tiers, degree, Mode::SigWait);
        let mut other = main.register(Mode::SigWait).unwrap();
        let observer = phaser.clone();
        let observer_ledger = ledger.clone();
        let observer_thread = thread::spawn(move || {
            let mut phase = 0;
            while phase < phases as u64 {
                let next = observer.await_phase(phase).unwrap();
                assert!(next > phase, "await_phase({phase}) returned {next}");
                for done in phase..next {
                    observer_ledger.check([0, 1], done as usize);
                }
                phase = next;
            }
            assert_eq!(phase, phases as u64, "no phase beyond the last is released");
        });
        let other_ledger = ledger.clone();
        let other_thread = thread::spawn(move || {
            for phase in 0..phases {
                other_ledger.mark(1, phase);
                assert_eq!(other.next().unwrap(), phase as u64);
            }
            // Kept until the main task is done, so the phaser does not terminate early.
            other
        });
        for phase in 0..phases {
            ledger.mark(0, phase);
            assert_eq!(main.next().unwrap(), phase as u64);
        }
        observer_thread.join().unwrap();
        drop(other_thread.join().unwrap());
    });
}

/// Two `SigWait` tasks and a signal-only task that signals phases 0, 1 and 2 without waiting, on a
/// phaser whose advance action counts its calls in a non-atomic cell, checks every signal of its
/// phase, and returns `Break` after phase 1. Both phases complete (each task reads the count once
/// released: the action ran before), and every later wait returns `Terminated { phase: 2 }`
/// although the producer may have signalled phase 2 before the `Break`.
fn on_advance_terminates_after_its_phase(tiers: usize, degree: usize) {
    model_bounded(2, move || {
        let ledger = Ledger::new(3);
        let calls = Arc::new(UnsafeCell::new(0u64));
        let captured = LoomOnly((ledger.clone(), calls.clone()));
        let (phaser, main) = Phaser::builder()
            .tiers(tiers)
            .degree(degree)
            .on_advance(move |phase, registered| {
                let (action_ledger, action_calls) = captured.get();
                assert_eq!(registered, 3);
                action_ledger.check([0, 1, 2], phase as usize);
                // SAFETY: the actions run one at a time, between a phase's gather and its
                // release; loom fails the model if two actions or a reader overlap.
                let before = action_calls.with_mut(|calls| unsafe {
                    *calls += 1;
                    *calls - 1
                });
                assert_eq!(before, phase, "one action per phase, in order");
                if phase == 1 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .build()
            .expect("a valid shape");
        let other = main.register(Mode::SigWait).unwrap();
        let mut producer = main.register(Mode::Sig).unwrap();
        let producer_ledger = ledger.clone();
        let producer_thread = thread::spawn(move || {
            for phase in 0..PHASES {
                producer_ledger.mark(2, phase);
                assert_eq!(producer.next().unwrap(), phase as u64);
            }
            // Phase 2: before the `Break` the signal goes in, after it the phaser refuses it.
            match producer.next() {
                Ok(2) | Err(Error::Terminated { phase: 2 }) => {}
                other => panic!("the producer's signal of phase 2 gave {other:?}"),
            }
            producer
        });
        let run = move |task: usize,
                        mut reg: Registration,
                        ledger: Arc<Ledger>,
                        calls: Arc<UnsafeCell<u64>>| {
            for phase in 0..PHASES {
                ledger.mark(task, phase);
                assert_eq!(reg.next().unwrap(), phase as u64);
                // SAFETY: read after the release of `phase`, ordered after its action.
                let count = calls.with(|calls| unsafe { *calls });
                assert_eq!(
                    count,
                    phase as u64 + 1,
                    "released before the action of {phase}"
                );
            }
            assert_eq!(reg.next(), Err(Error::Terminated { phase: 2 }));
        };
        let (other_ledger, other_calls) = (ledger.clone(), calls.clone());
        let other_thread = thread::spawn(move || run(1, other, other_ledger, other_calls));
        run(0, main, ledger, calls);
        other_thread.join().unwrap();
        drop(producer_thread.join().unwrap());
        assert!(phaser.is_terminated());
        assert_eq!(phaser.phase(), 2, "phase 2 is never released");
    });
}

/// A `WaitGroup` of three tasks on two threads: one task clones a third from its own clone and
/// drops its own, all while the main thread waits. The wait returns after every drop, seeing what
/// each task wrote before dropping (the tasks' cells are the ledger's phase-0 cells).
#[test]
fn wait_group_waits_for_every_clone() {
    model_bounded(2, || {
        let ledger = Ledger::new(3);
        let group = WaitGroup::new();
        let (first, second) = (group.clone(), group.clone());
        let first_ledger = ledger.clone();
        let first_thread = thread::spawn(move || {
            let late = first.clone();
            first_ledger.mark(0, 0);
            drop(first);
            first_ledger.mark(2, 0);
            drop(late);
        });
        let second_ledger = ledger.clone();
        let second_thread = thread::spawn(move || {
            second_ledger.mark(1, 0);
            drop(second);
        });
        group.wait().unwrap();
        ledger.check([0, 1, 2], 0);
        first_thread.join().unwrap();
        second_thread.join().unwrap();
    });
}
