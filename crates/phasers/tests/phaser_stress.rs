//! Stress of the phaser barrier invariant under dynamic membership, up to 64 tasks, for a flat
//! phaser and trees of several shapes; of a sum accumulator with 64 tasks; and of the advance
//! action and unregistered observers (`await_phase`) with 64 threads.
//!
//! The invariant: no task leaves phase `k` before every task registered for `k` has arrived at `k`.
//! With dynamic membership "registered for `k`" is per task: a task is registered for the phases
//! from the one its parent was in when it registered it (one later if the parent had already
//! signalled) up to the one in which it drops its registration. Each task records those bounds in
//! its slot: the parent writes `joined` before registering the child, the task writes `left` before
//! dropping, and `arrived` holds `k + 1` before it signals `k`. The phaser must order all of these
//! before the completion of the phases they concern: a parent registers the child before signalling
//! the child's first phase, and no phase the task is registered for can complete before it signals
//! or drops. So right after a wait for `k` returns, every slot registered for `k` must show an
//! arrival at `k`. Slots are never reused, so a stale read cannot mix two tasks.
//!
//! On the 2-core CI machines 64 threads are heavily oversubscribed, which exercises parking rather
//! than spinning; the phase counts keep each test to a few seconds in a debug build.

mod phaser_support;

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Scope;

use phaser_support::{Rng, Watchdog};
use phasers::{Accumulator, Error, Mode, Op, Phaser, Registration};

/// Not registered (yet): `joined` of a slot no parent has filled, `left` of a task still there.
const NEVER: u64 = u64::MAX;

/// At most this many tasks registered at once.
const MAX_LIVE: usize = 64;

/// Each phase a task registers a child with probability `1 / JOIN_ODDS`, and leaves (unless it is
/// the creator) with probability `1 / LEAVE_ODDS`: starting from 32 tasks, membership grows to the
/// limit of 64 within a few dozen phases and churns there, a join or a leave every phase or so.
const JOIN_ODDS: u64 = 32;
const LEAVE_ODDS: u64 = 64;

/// Slots for every task a run ever creates; joins stop when they run out.
const SLOTS: usize = 2048;

/// Everything the tasks of one run share, besides the phaser.
struct Record {
    what: String,
    phases: u64,
    /// Per slot: `k + 1` once the task is about to signal phase `k`.
    arrived: Vec<AtomicU64>,
    /// Per slot: the first phase the task is registered for.
    joined: Vec<AtomicU64>,
    /// Per slot: the first phase the task is no longer registered for.
    left: Vec<AtomicU64>,
    /// Slots handed out so far.
    created: AtomicUsize,
    /// Tasks registered now, to keep joins within [`MAX_LIVE`].
    live: AtomicUsize,
    /// Per phase: the sum of every value sent to the accumulator in that phase.
    sent: Vec<AtomicI64>,
    /// Joins and leaves that happened, and the most tasks registered at once, so the test can tell
    /// it really was dynamic.
    joins: AtomicUsize,
    peak: AtomicUsize,
    leaves: AtomicUsize,
    /// The first failure, with a message; later tasks stop at their next phase.
    failure: Mutex<Option<String>>,
}

impl Record {
    fn new(what: String, phases: u64) -> Self {
        Record {
            what,
            phases,
            arrived: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            joined: (0..SLOTS).map(|_| AtomicU64::new(NEVER)).collect(),
            left: (0..SLOTS).map(|_| AtomicU64::new(NEVER)).collect(),
            created: AtomicUsize::new(0),
            live: AtomicUsize::new(0),
            sent: (0..phases).map(|_| AtomicI64::new(0)).collect(),
            joins: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            leaves: AtomicUsize::new(0),
            failure: Mutex::new(None),
        }
    }

    /// Reserves a slot for a task that will be registered for phases from `phase` on, if the
    /// limits allow one more task.
    fn reserve(&self, phase: u64) -> Option<usize> {
        let before = self
            .live
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |live| {
                (live < MAX_LIVE).then_some(live + 1)
            })
            .ok()?;
        self.peak.fetch_max(before + 1, Ordering::Relaxed);
        let slot = self.created.fetch_add(1, Ordering::Relaxed);
        if slot >= SLOTS {
            self.live.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        self.joined[slot].store(phase, Ordering::Relaxed);
        Some(slot)
    }

    /// The first slot registered for `phase` that has not arrived at it.
    fn laggard(&self, phase: u64) -> Option<(usize, u64)> {
        let created = self.created.load(Ordering::Relaxed).min(SLOTS);
        (0..created).find_map(|slot| {
            let joined = self.joined[slot].load(Ordering::Relaxed);
            let left = self.left[slot].load(Ordering::Relaxed);
            let arrived = self.arrived[slot].load(Ordering::Relaxed);
            (joined <= phase && phase < left && arrived <= phase).then_some((slot, arrived))
        })
    }

    fn fail(&self, message: String) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(message);
    }

    fn failed(&self) -> bool {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }
}

/// What every task of a run can reach.
#[derive(Clone, Copy)]
struct Run<'a> {
    record: &'a Record,
    phaser: &'a Phaser,
    acc: &'a Accumulator<i64>,
    watchdog: &'a Watchdog,
}

impl<'a> Run<'a> {
    /// Registers a child of `reg` in slot-reserving fashion and starts its thread, if the limits
    /// allow. `phase` is the phase the child must start in.
    fn spawn_child<'s>(&self, s: &'s Scope<'s, '_>, reg: &Registration, phase: u64, seed: u64)
    where
        'a: 's,
    {
        let Some(slot) = self.record.reserve(phase) else {
            return;
        };
        let child = match reg.register(Mode::SigWait) {
            Ok(child) => child,
            Err(error) => {
                let what = &self.record.what;
                return self.record.fail(self.watchdog.explain(
                    &format!("{what}: registering a child in phase {phase}"),
                    &error,
                ));
            }
        };
        if child.phase() != phase {
            let what = &self.record.what;
            self.record.fail(format!(
                "{what}: a child registered in phase {phase} starts in phase {}",
                child.phase()
            ));
        }
        self.record.joins.fetch_add(1, Ordering::Relaxed);
        let run = *self;
        s.spawn(move || run.task(s, slot, child, seed));
    }

    /// One task: each phase it may register a child or leave, sends to the accumulator, arrives,
    /// signals and waits (in one `next()` or split around a registration), and checks the invariant.
    fn task<'s>(&self, s: &'s Scope<'s, '_>, slot: usize, mut reg: Registration, seed: u64)
    where
        'a: 's,
    {
        let record = self.record;
        let what = &record.what;
        let mut rng = Rng::new(seed);
        loop {
            let phase = reg.phase();
            if phase >= record.phases || record.failed() {
                break;
            }
            if rng.below(JOIN_ODDS) == 0 {
                self.spawn_child(s, &reg, phase, rng.next());
            }
            // The creator (slot 0) stays, so the phaser never runs out of signallers.
            if slot != 0 && rng.below(LEAVE_ODDS) == 0 {
                record.left[slot].store(phase, Ordering::Relaxed);
                record.leaves.fetch_add(1, Ordering::Relaxed);
                break;
            }
            let value = (slot as i64 + 1) * 1000 + phase as i64;
            record.sent[phase as usize].fetch_add(value, Ordering::Relaxed);
            if let Err(error) = self.acc.send(&mut reg, value) {
                return record.fail(format!(
                    "{what}: slot {slot} send in phase {phase}: {error}"
                ));
            }
            record.arrived[slot].store(phase + 1, Ordering::Relaxed);
            let result = if rng.below(4) == 0 {
                // Split phase: a child registered after the signal starts in the next phase.
                reg.signal().and_then(|()| {
                    if rng.below(3) == 0 {
                        self.spawn_child(s, &reg, phase + 1, rng.next());
                    }
                    reg.wait()
                })
            } else {
                reg.next()
            };
            match result {
                Ok(done) if done == phase => {}
                Ok(done) => {
                    return record.fail(format!(
                        "{what}: slot {slot} in phase {phase} completed phase {done}"
                    ))
                }
                Err(error) => {
                    let step = format!("{what}: slot {slot} waiting for phase {phase}");
                    return record.fail(self.watchdog.explain(&step, &error));
                }
            }
            if let Some((late, seen)) = record.laggard(phase) {
                return record.fail(format!(
                    "{what}: slot {slot} left phase {phase} before slot {late} arrived (its \
                     arrival count was {seen})"
                ));
            }
            // This task has not signalled `phase + 1`, so `phase` is still the latest completed.
            let sum = self.acc.result();
            let expected = record.sent[phase as usize].load(Ordering::Relaxed);
            if sum != expected {
                return record.fail(format!(
                    "{what}: slot {slot} after phase {phase}: the accumulator says {sum}, the \
                     tasks sent {expected}"
                ));
            }
            if self.phaser.phase() <= phase {
                return record.fail(format!(
                    "{what}: slot {slot} released from phase {phase} while phaser.phase() is {}",
                    self.phaser.phase()
                ));
            }
        }
        if record.left[slot].load(Ordering::Relaxed) == NEVER {
            record.left[slot].store(reg.phase(), Ordering::Relaxed);
        }
        record.live.fetch_sub(1, Ordering::Relaxed);
        drop(reg);
    }
}

/// Runs `phases` phases with 32 initial tasks that join and leave at random on a phaser of the
/// given shape.
fn dynamic_membership(tiers: usize, degree: usize, phases: u64, seed: u64) {
    let what = format!("tiers {tiers}, degree {degree}");
    let (phaser, creator) = Phaser::builder()
        .mode(Mode::SigWait)
        .tiers(tiers)
        .degree(degree)
        .build()
        .expect("a valid phaser");
    let acc = Accumulator::<i64>::new(&phaser, Op::Sum).expect("an i64 sum");
    let record = Record::new(what.clone(), phases);
    let watchdog = Watchdog::new(&what, &phaser);
    let creator_slot = record.reserve(0).expect("a slot for the creator");
    let mut initial = Vec::new();
    for _ in 1..MAX_LIVE / 2 {
        let slot = record.reserve(0).expect("a slot");
        initial.push((slot, creator.register(Mode::SigWait).expect("registering")));
    }
    let run = Run {
        record: &record,
        phaser: &phaser,
        acc: &acc,
        watchdog: &watchdog,
    };
    let mut rng = Rng::new(seed);
    std::thread::scope(|s| {
        for (slot, reg) in initial {
            let seed = rng.next();
            s.spawn(move || run.task(s, slot, reg, seed));
        }
        run.task(s, creator_slot, creator, rng.next());
    });
    drop(watchdog);
    if let Some(failure) = record.failure.lock().unwrap().take() {
        panic!("{failure}");
    }
    // Every task left in phase `phases`, and the last leave completed it (issue 31).
    assert_eq!(
        phaser.phase(),
        phases + 1,
        "{what}: every task stopped at phase {phases}"
    );
    let joins = record.joins.load(Ordering::Relaxed);
    let leaves = record.leaves.load(Ordering::Relaxed);
    let peak = record.peak.load(Ordering::Relaxed);
    assert!(
        joins > 0 && leaves > 0 && peak > MAX_LIVE / 2,
        "{what}: the run should have had joins ({joins}), leaves ({leaves}) and grown ({peak})"
    );
}

/// Phases per dynamic-membership run, and per accumulator run.
const PHASES: u64 = 400;
const ACC_PHASES: u64 = 400;

#[test]
fn flat_dynamic_membership() {
    dynamic_membership(1, 16, PHASES, 1);
}

#[test]
fn tree_2_tiers_degree_2_dynamic_membership() {
    dynamic_membership(2, 2, PHASES, 2);
}

#[test]
fn tree_2_tiers_degree_4_dynamic_membership() {
    dynamic_membership(2, 4, PHASES, 3);
}

#[test]
fn tree_3_tiers_degree_2_dynamic_membership() {
    dynamic_membership(3, 2, PHASES, 4);
}

/// 64 tasks each send `sends` values per phase (one to three); the action of `next_single` checks
/// the phase's sum and maximum, which are already published when it runs, and counts itself, and
/// every task checks the count and the sum again once released.
fn accumulator_stress(tiers: usize, degree: usize, phases: u64) {
    const TASKS: u64 = 64;
    let what = format!("accumulators, tiers {tiers}, degree {degree}");
    let (phaser, creator) = Phaser::builder()
        .mode(Mode::SigWaitSingle)
        .tiers(tiers)
        .degree(degree)
        .build()
        .expect("a valid phaser");
    let sum = Accumulator::<i64>::new(&phaser, Op::Sum).expect("an i64 sum");
    let max = Accumulator::<u64>::new(&phaser, Op::Max).expect("a u64 max");
    let mut regs = vec![];
    for _ in 1..TASKS {
        regs.push(creator.register(Mode::SigWaitSingle).expect("registering"));
    }
    regs.insert(0, creator);
    let watchdog = Watchdog::new(&what, &phaser);
    // Task `t` sends `t * 7 + phase` in its first send and 1 in each of its other sends.
    let sends = |task: u64, phase: u64| 1 + (task + phase) % 3;
    let expected_sum = |phase: u64| -> i64 {
        (0..TASKS)
            .map(|t| (t * 7 + phase + sends(t, phase) - 1) as i64)
            .sum()
    };
    let expected_max = |phase: u64| (TASKS - 1) * 7 + phase;
    let actions = AtomicU64::new(0);
    std::thread::scope(|s| {
        for (task, mut reg) in regs.into_iter().enumerate() {
            let (sum, max, actions, watchdog, what) = (&sum, &max, &actions, &watchdog, &what);
            s.spawn(move || {
                let task = task as u64;
                for phase in 0..phases {
                    sum.send(&mut reg, (task * 7 + phase) as i64).unwrap();
                    for _ in 1..sends(task, phase) {
                        sum.send(&mut reg, 1).unwrap();
                    }
                    max.send(&mut reg, task * 7 + phase).unwrap();
                    let ran = reg
                        .next_single(|| {
                            assert_eq!(
                                sum.result(),
                                expected_sum(phase),
                                "{what}: sum, phase {phase}"
                            );
                            assert_eq!(
                                max.result(),
                                expected_max(phase),
                                "{what}: max, phase {phase}"
                            );
                            actions.fetch_add(1, Ordering::Relaxed)
                        })
                        .unwrap_or_else(|e| panic!("{}", watchdog.explain(what, &e)));
                    if let Some(before) = ran {
                        assert_eq!(before, phase, "{what}: the action ran twice in a phase");
                    }
                    assert_eq!(
                        actions.load(Ordering::Relaxed),
                        phase + 1,
                        "{what}: released from phase {phase} before its action ran"
                    );
                    assert_eq!(
                        sum.result(),
                        expected_sum(phase),
                        "{what}: sum after phase {phase}"
                    );
                }
            });
        }
    });
    assert_eq!(
        actions.load(Ordering::Relaxed),
        phases,
        "{what}: one action per phase"
    );
}

#[test]
fn accumulators_with_64_tasks_flat() {
    accumulator_stress(1, 16, ACC_PHASES);
}

#[test]
fn accumulators_with_64_tasks_tree() {
    accumulator_stress(2, 4, ACC_PHASES);
}

/// 59 `SigWait` tasks and a signal-only producer on a phaser whose advance action checks each
/// phase (after every signal, before anyone left it, once, in order) and ends the phaser with a
/// `Break` after the last one, while 4 unregistered observers follow the phases with
/// `await_phase`: 64 threads. The producer runs ahead, held to two phases ahead by its own
/// `await_phase`, so the action also runs inside its signals, and the `Break` may find the next
/// phase signalled by it already; that phase must never complete.
fn advance_action_and_observers(tiers: usize, degree: usize, last: u64) {
    const TASKS: usize = 59;
    const OBSERVERS: usize = 4;
    let what = format!("on_advance and await_phase, tiers {tiers}, degree {degree}");
    let arrivals: Arc<Vec<AtomicUsize>> =
        Arc::new((0..=last + 2).map(|_| AtomicUsize::new(0)).collect());
    let passed: Arc<Vec<AtomicUsize>> =
        Arc::new((0..=last + 1).map(|_| AtomicUsize::new(0)).collect());
    let actions = Arc::new(AtomicU64::new(0));
    let failure: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let (a, p, c, f, w) = (
        arrivals.clone(),
        passed.clone(),
        actions.clone(),
        failure.clone(),
        what.clone(),
    );
    let (phaser, creator) = Phaser::builder()
        .tiers(tiers)
        .degree(degree)
        .on_advance(move |phase, registered| {
            let i = phase as usize;
            let (calls, arrived, left) = (
                c.fetch_add(1, Ordering::SeqCst),
                a[i].load(Ordering::SeqCst),
                p[i].load(Ordering::SeqCst),
            );
            if calls != phase || arrived != TASKS + 1 || left != 0 || registered != TASKS + 1 {
                let mut failure = f.lock().unwrap_or_else(|e| e.into_inner());
                failure.get_or_insert(format!(
                    "{w}: the action of phase {phase} was call {calls}, saw {arrived} arrivals, \
                     {left} tasks past it and {registered} registered"
                ));
                return ControlFlow::Break(());
            }
            if phase == last {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .build()
        .expect("a valid phaser");
    let watchdog = Watchdog::new(&what, &phaser);
    let mut regs = creator
        .register_many(Mode::SigWait, TASKS - 1)
        .expect("registering");
    let producer = creator.register(Mode::Sig).expect("a producer");
    regs.push(creator);
    let fail = |message: String| {
        let mut failure = failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(message);
    };
    std::thread::scope(|s| {
        for mut reg in regs {
            let (arrivals, passed, what, fail, watchdog) =
                (&arrivals, &passed, &what, &fail, &watchdog);
            s.spawn(move || {
                for phase in 0..=last + 1 {
                    arrivals[phase as usize].fetch_add(1, Ordering::SeqCst);
                    match reg.next() {
                        Ok(done) if done == phase && phase <= last => {}
                        Err(Error::Terminated { phase: at }) if at == last + 1 => return,
                        Err(Error::Terminated { .. }) if watchdog.fired() => {
                            return fail(format!("{what}: hang, the watchdog terminated it"));
                        }
                        other => {
                            return fail(format!("{what}: next() in phase {phase}: {other:?}"))
                        }
                    }
                    passed[phase as usize].fetch_add(1, Ordering::SeqCst);
                }
            });
        }
        let (arrivals, what, fail, phaser) = (&arrivals, &what, &fail, &phaser);
        let mut producer = producer;
        s.spawn(move || {
            for phase in 0..=last + 2 {
                if phase >= 2 {
                    // Hold back to two phases ahead; the end is reported by the signal below.
                    let _ = phaser.await_phase(phase - 2);
                }
                arrivals[phase as usize].fetch_add(1, Ordering::SeqCst);
                match producer.next() {
                    Ok(done) if done == phase => {}
                    // It may have signalled `last + 1` before the `Break`, never `last + 2`.
                    Err(Error::Terminated { phase: at }) if at > last => return,
                    other => return fail(format!("{what}: producer in phase {phase}: {other:?}")),
                }
            }
            fail(format!(
                "{what}: the producer signalled past the last phase"
            ));
        });
        for _ in 0..OBSERVERS {
            s.spawn(move || {
                let mut phase = 0;
                loop {
                    match phaser.await_phase(phase) {
                        Ok(next) if next > phase => {
                            // Every task signalled the phases completed.
                            for done in phase..next.min(last + 1) {
                                let arrived = arrivals[done as usize].load(Ordering::SeqCst);
                                if arrived < TASKS + 1 {
                                    return fail(format!(
                                        "{what}: an observer saw phase {done} complete with \
                                         {arrived} arrivals"
                                    ));
                                }
                            }
                            phase = next;
                        }
                        Err(Error::Terminated { phase: at }) if at == last + 1 => return,
                        other => return fail(format!("{what}: await_phase({phase}): {other:?}")),
                    }
                }
            });
        }
    });
    drop(watchdog);
    if let Some(failure) = failure.lock().unwrap().take() {
        panic!("{failure}");
    }
    assert_eq!(actions.load(Ordering::SeqCst), last + 1, "{what}");
    assert_eq!(phaser.phase(), last + 1, "{what}");
    assert!(phaser.is_terminated(), "{what}");
}

#[test]
fn advance_action_and_observers_64_threads_flat() {
    advance_action_and_observers(1, 16, 300);
}

#[test]
fn advance_action_and_observers_64_threads_tree() {
    advance_action_and_observers(2, 4, 300);
}
