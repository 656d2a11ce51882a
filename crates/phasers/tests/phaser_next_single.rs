//! `next_single`: its action runs exactly once per phase, by one of the tasks that called it (the
//! one that gets `Some`), after every signal of the phase and before any task, whatever call it
//! waits in, is released from the phase. An action that panics breaks the phaser.

mod phaser_support;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use phaser_support::{payload_text, Watchdog};
use phasers::{Error, Mode, Phaser, Registration};

/// Registrations on a fresh SigWaitSingle phaser: the creator and `modes.len() - 1` children with
/// the given modes after the first.
fn team(modes: &[Mode]) -> (Phaser, Vec<Registration>) {
    let (phaser, creator) = Phaser::new(Mode::SigWaitSingle).expect("a phaser");
    let mut regs: Vec<Registration> = modes[1..]
        .iter()
        .map(|&mode| creator.register(mode).expect("a child"))
        .collect();
    regs.insert(0, creator);
    (phaser, regs)
}

/// The shared record: arrivals per task, action runs and `Some` results per phase.
struct Record {
    arrived: Vec<AtomicU64>,
    actions: Vec<AtomicUsize>,
    somes: Vec<AtomicUsize>,
    /// Phases whose action has finished.
    done: AtomicU64,
}

impl Record {
    fn new(tasks: usize, phases: u64) -> Self {
        Record {
            arrived: (0..tasks).map(|_| AtomicU64::new(0)).collect(),
            actions: (0..phases).map(|_| AtomicUsize::new(0)).collect(),
            somes: (0..phases).map(|_| AtomicUsize::new(0)).collect(),
            done: AtomicU64::new(0),
        }
    }

    /// The action for `phase`: every task (that signals) has arrived, and it has not run before.
    fn action(&self, phase: u64, signallers: &[usize]) -> u64 {
        for &task in signallers {
            let seen = self.arrived[task].load(Ordering::Relaxed);
            assert!(
                seen > phase,
                "the action of phase {phase} ran before task {task} signalled (arrivals {seen})"
            );
        }
        self.actions[phase as usize].fetch_add(1, Ordering::Relaxed);
        self.done.store(phase + 1, Ordering::Relaxed);
        phase
    }

    /// Right after `task` was released from `phase`.
    fn released(&self, task: usize, phase: u64) {
        let done = self.done.load(Ordering::Relaxed);
        assert_eq!(
            done,
            phase + 1,
            "task {task} was released from phase {phase} but the actions of {done} phase(s) ran"
        );
    }

    /// Right after a wait-only `task` was released from `phase`, which does not hold later
    /// phases back.
    fn released_at_least(&self, task: usize, phase: u64) {
        let done = self.done.load(Ordering::Relaxed);
        assert!(
            done > phase,
            "task {task} was released from phase {phase} before its action ran ({done} ran)"
        );
    }

    fn check_end(&self) {
        for (phase, (actions, somes)) in self.actions.iter().zip(&self.somes).enumerate() {
            assert_eq!(
                actions.load(Ordering::Relaxed),
                1,
                "actions in phase {phase}"
            );
            assert_eq!(
                somes.load(Ordering::Relaxed),
                1,
                "Some results in phase {phase}"
            );
        }
    }
}

/// Every task calls `next_single` every phase.
#[test]
fn the_action_runs_once_per_phase_after_every_signal() {
    const TASKS: usize = 8;
    const PHASES: u64 = 300;
    let (phaser, regs) = team(&[Mode::SigWaitSingle; TASKS]);
    let record = Record::new(TASKS, PHASES);
    let everyone: Vec<usize> = (0..TASKS).collect();
    let watchdog = Watchdog::new("next_single, 8 tasks", &phaser);
    std::thread::scope(|s| {
        for (task, mut reg) in regs.into_iter().enumerate() {
            let (record, everyone, watchdog) = (&record, &everyone, &watchdog);
            s.spawn(move || {
                for phase in 0..PHASES {
                    record.arrived[task].store(phase + 1, Ordering::Relaxed);
                    let ran = reg
                        .next_single(|| record.action(phase, everyone))
                        .unwrap_or_else(|e| panic!("{}", watchdog.explain("next_single", &e)));
                    if let Some(returned) = ran {
                        assert_eq!(returned, phase, "Some carries the action's result");
                        record.somes[phase as usize].fetch_add(1, Ordering::Relaxed);
                    }
                    record.released(task, phase);
                    assert_eq!(reg.phase(), phase + 1);
                }
            });
        }
    });
    record.check_end();
    // The tasks leave in phase PHASES; the last leave completes it (issue 31).
    assert_eq!(phaser.phase(), PHASES + 1);
}

/// Some tasks call `next_single`, others `next()` (SigWait) or wait (Wait-only): nobody is
/// released before the action ran.
#[test]
fn tasks_in_plain_next_and_wait_are_held_until_the_action_ran() {
    const PHASES: u64 = 300;
    let modes = [
        Mode::SigWaitSingle,
        Mode::SigWaitSingle,
        Mode::SigWaitSingle,
        Mode::SigWait,
        Mode::SigWait,
        Mode::Wait,
    ];
    let (phaser, regs) = team(&modes);
    let record = Record::new(modes.len(), PHASES);
    let signallers: Vec<usize> = (0..modes.len())
        .filter(|&t| modes[t].can_signal())
        .collect();
    let watchdog = Watchdog::new("next_single mixed with next", &phaser);
    std::thread::scope(|s| {
        for (task, mut reg) in regs.into_iter().enumerate() {
            let (record, signallers, watchdog) = (&record, &signallers, &watchdog);
            s.spawn(move || {
                for phase in 0..PHASES {
                    record.arrived[task].store(phase + 1, Ordering::Relaxed);
                    let ran = match reg.mode() {
                        Mode::SigWaitSingle => reg.next_single(|| record.action(phase, signallers)),
                        _ => reg.next().map(|done| {
                            assert_eq!(done, phase);
                            None
                        }),
                    }
                    .unwrap_or_else(|e| {
                        panic!("{}", watchdog.explain(&format!("task {task}"), &e))
                    });
                    if ran.is_some() {
                        record.somes[phase as usize].fetch_add(1, Ordering::Relaxed);
                    }
                    if reg.mode().can_signal() {
                        record.released(task, phase);
                    } else {
                        // A wait-only task holds no phase back, so later phases (and their
                        // actions) may already be done when it returns; its own phase's action
                        // must have run.
                        record.released_at_least(task, phase);
                    }
                }
            });
        }
    });
    record.check_end();
}

/// The action panics in phase `BOOM`: the task running it panics, every other task gets
/// `Error::Broken` naming that task and the phase, and stays broken.
#[test]
fn a_panicking_action_breaks_the_phaser() {
    const TASKS: usize = 4;
    const BOOM: u64 = 5;
    let (phaser, regs) = team(&[Mode::SigWaitSingle; TASKS]);
    let all_ids: Vec<usize> = regs.iter().map(Registration::id).collect();
    let watchdog = Watchdog::new("a panicking action", &phaser);
    let outcomes = std::thread::scope(|s| {
        let handles: Vec<_> = regs
            .into_iter()
            .map(|mut reg| {
                let watchdog = &watchdog;
                s.spawn(move || {
                    let id = reg.id();
                    for phase in 0..BOOM {
                        reg.next_single(|| ()).unwrap_or_else(|e| {
                            panic!("{}", watchdog.explain("before the panic", &e))
                        });
                        assert_eq!(reg.phase(), phase + 1);
                    }
                    let error = reg
                        .next_single(|| panic!("boom in phase {BOOM}"))
                        .expect_err("phase BOOM cannot complete: its action panicked");
                    // Broken for good: the next call says so too, at once.
                    let again = reg.next().expect_err("still broken");
                    (id, error, again)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    assert!(
        !watchdog.fired(),
        "hang: the watchdog had to terminate the phaser"
    );
    let mut runners = Vec::new();
    let mut broken = Vec::new();
    for outcome in outcomes {
        match outcome {
            Err(payload) => runners.push(payload_text(&*payload)),
            Ok(result) => broken.push(result),
        }
    }
    assert_eq!(
        runners.len(),
        1,
        "exactly one task ran the action and panicked: {runners:?}"
    );
    assert!(
        runners[0].contains("boom"),
        "the action's own panic: {:?}",
        runners[0]
    );
    assert_eq!(broken.len(), TASKS - 1);
    // The runner is the id missing from the others.
    let ids: Vec<usize> = broken.iter().map(|(id, _, _)| *id).collect();
    let runner = *all_ids
        .iter()
        .find(|id| !ids.contains(id))
        .expect("the runner's id");
    for (id, error, again) in broken {
        for error in [error, again] {
            match error {
                Error::Broken { by, episode } => {
                    assert_eq!(
                        by, runner,
                        "task {id}: Broken must name the action's runner"
                    );
                    assert_eq!(episode, BOOM, "task {id}: Broken in the phase of the panic");
                }
                other => panic!("task {id}: expected Error::Broken, got {other:?}"),
            }
        }
    }
}
