//! A sequential reference model of the phaser and its accumulator, checked against the real thing
//! on random schedules (proptest), for a flat phaser and for trees.
//!
//! Each task owns one registration on its own thread and runs the commands a coordinator sends it.
//! The coordinator plays the schedule one step at a time against a model that knows, after every
//! step, which phases have completed. So it knows exactly which blocking calls must return now and
//! which must stay blocked, and it never waits for a call the model says cannot complete yet: a
//! schedule cannot deadlock the test. After every step it checks what each call returned (phase
//! numbers, errors, `Timeout::missing`), the `phase()` of every registration that replied, and the
//! phaser's `phase()`, `signallers()` and `is_terminated()` and the accumulator's `result()`.
//!
//! Calls whose meaning the specification leaves open are never made: `signal()` twice in a phase,
//! `next()` between `signal()` and `wait()`, `signal()`/`wait()` on Sig-only registrations, a `send`
//! between `signal()` and `wait()`, dropping a registration that sent in its current phase but has
//! not signalled it yet, `next_single` (see `phaser_next_single.rs`), and anything but dropping once
//! the phaser has terminated.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use phasers::{Accumulator, Error, Mode, Op, Phaser, Registration};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;

/// Hang detector for one step. Shorter than the other files' 30 s because proptest repeats a failing
/// case many times while shrinking it; still far above what a step needs on a loaded machine.
const STEP_HANG: Duration = Duration::from_secs(10);

/// A timed wait the model expects to time out: short, so the schedules stay quick.
const SHORT: Duration = Duration::from_millis(2);

/// At most this many live registrations (the task's brief: 1 to 8 tasks).
const MAX_TASKS: usize = 8;

const MODES: [Mode; 4] = [Mode::SigWaitSingle, Mode::SigWait, Mode::Sig, Mode::Wait];

/// The capability lattice, written out independently of `Mode::includes`: may a registration in
/// `parent` mode register a child in `child` mode?
fn may_register(parent: Mode, child: Mode) -> bool {
    match parent {
        Mode::SigWaitSingle => true,
        Mode::SigWait => child != Mode::SigWaitSingle,
        Mode::Sig => child == Mode::Sig,
        Mode::Wait => child == Mode::Wait,
    }
}

fn can_signal(mode: Mode) -> bool {
    mode != Mode::Wait
}

fn can_wait(mode: Mode) -> bool {
    mode != Mode::Sig
}

/// What a schedule step asks for. The step's task and its state decide the exact call (see
/// [`Run::step`]), so every generated schedule is valid and shrinking keeps it valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Register,
    Drop,
    Signal,
    Wait,
    Next,
    NextTimeout,
    WaitTimeout,
    Send,
}

#[derive(Clone, Debug)]
struct Intent {
    task: Index,
    kind: Kind,
    mode: Mode,
    value: i64,
}

fn intent() -> impl Strategy<Value = Intent> {
    let kind = prop_oneof![
        4 => Just(Kind::Register),
        2 => Just(Kind::Drop),
        2 => Just(Kind::Signal),
        2 => Just(Kind::Wait),
        4 => Just(Kind::Next),
        1 => Just(Kind::NextTimeout),
        1 => Just(Kind::WaitTimeout),
        3 => Just(Kind::Send),
    ];
    (any::<Index>(), kind, 0..MODES.len(), -1000i64..1000).prop_map(|(task, kind, mode, value)| {
        Intent {
            task,
            kind,
            mode: MODES[mode],
            value,
        }
    })
}

fn schedule() -> impl Strategy<Value = Vec<Intent>> {
    prop::collection::vec(intent(), 1..64)
}

/// The creator's mode: one that can signal and wait, so the phaser starts with a signaller and the
/// creator can register every kind of child.
fn creator_mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::SigWaitSingle), Just(Mode::SigWait)]
}

#[derive(Clone, Copy, Debug)]
enum Topology {
    Flat,
    Tree { tiers: usize, degree: usize },
}

/// What the coordinator asks a task's thread to do.
enum Command {
    Register(Mode),
    Drop,
    Signal,
    Wait,
    Next,
    NextTimeout(Duration),
    WaitTimeout(Duration),
    Send(i64),
}

/// What a call returned.
enum Outcome {
    Registered(phasers::Result<Registration>),
    Unit(phasers::Result<()>),
    Phase(phasers::Result<u64>),
    Dropped,
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Registered(Ok(reg)) => write!(
                f,
                "Ok(registration id {} {:?} in phase {})",
                reg.id(),
                reg.mode(),
                reg.phase()
            ),
            Outcome::Registered(Err(error)) => write!(f, "Err({error:?})"),
            Outcome::Unit(result) => write!(f, "{result:?}"),
            Outcome::Phase(result) => write!(f, "{result:?}"),
            Outcome::Dropped => write!(f, "dropped"),
        }
    }
}

/// A task's answer: what its call returned and its registration's `phase()` right after.
struct Report {
    task: usize,
    outcome: Outcome,
    phase_after: Option<u64>,
}

/// The body of a task's thread: run commands until told to drop the registration (or until the
/// coordinator goes away, after a failure).
fn task_loop(
    task: usize,
    mut reg: Registration,
    acc: Accumulator<i64>,
    commands: Receiver<Command>,
    replies: Sender<Report>,
) {
    while let Ok(command) = commands.recv() {
        let outcome = match command {
            Command::Drop => {
                drop(reg);
                let _ = replies.send(Report {
                    task,
                    outcome: Outcome::Dropped,
                    phase_after: None,
                });
                return;
            }
            Command::Register(mode) => Outcome::Registered(reg.register(mode)),
            Command::Signal => Outcome::Unit(reg.signal()),
            Command::Wait => Outcome::Phase(reg.wait()),
            Command::Next => Outcome::Phase(reg.next()),
            Command::NextTimeout(timeout) => Outcome::Phase(reg.next_timeout(timeout)),
            Command::WaitTimeout(timeout) => Outcome::Phase(reg.wait_timeout(timeout)),
            Command::Send(value) => Outcome::Unit(acc.send(&mut reg, value)),
        };
        let report = Report {
            task,
            outcome,
            phase_after: Some(reg.phase()),
        };
        if replies.send(report).is_err() {
            return;
        }
    }
}

/// What the model says an outstanding call must return.
#[derive(Clone, Debug)]
enum Expect {
    /// `Ok(())` at once.
    Unit,
    /// `Err(Error::Capability)` at once.
    Refused,
    /// A new registration in `mode`, in `phase`.
    Registered { mode: Mode, phase: u64 },
    /// The registration was dropped.
    Dropped,
    /// A Sig-only `next()`: `Ok(phase)` at once, never blocking.
    Signalled(u64),
    /// A wait for `phase`: `Ok(phase)` once the model completed it, or `Err(Terminated)` if the
    /// phaser terminates first. Until then the call must stay blocked.
    Wait(u64),
    /// A timed wait for `phase` that must give up, naming exactly the registrations in `missing`.
    TimedOut { phase: u64, missing: Vec<usize> },
}

/// The model of one task and its registration.
struct Task {
    /// `reg.id()`, as the library reported it.
    id: usize,
    mode: Mode,
    /// The first phase this registration has not signalled (for signal-capable modes).
    next_signal: u64,
    /// The first phase this registration has not waited for (for wait-capable modes).
    next_wait: u64,
    live: bool,
    /// It sent to the accumulator in its current phase and has not signalled that phase yet.
    sent_unsignalled: bool,
    /// The call its thread is running, if any, and what it must return.
    outstanding: Option<(String, Expect)>,
    commands: Option<Sender<Command>>,
}

impl Task {
    /// Between `signal()` and `wait()`.
    fn pending(&self) -> bool {
        can_signal(self.mode) && can_wait(self.mode) && self.next_signal > self.next_wait
    }

    /// The phase a child registered now starts in: the first phase this registration has not
    /// signalled (so after `signal()` of `p` it is `p + 1`), or for a Wait-only one, the phase it
    /// is in.
    fn child_phase(&self) -> u64 {
        if can_signal(self.mode) {
            self.next_signal
        } else {
            self.next_wait
        }
    }

    /// What `reg.phase()` must say, where the specification pins it (not between `signal()` and
    /// `wait()`).
    fn expected_phase(&self) -> Option<u64> {
        if self.pending() {
            None
        } else if can_wait(self.mode) {
            Some(self.next_wait)
        } else {
            Some(self.next_signal)
        }
    }
}

/// One run of one schedule: the real phaser, the tasks' threads, and the model.
struct Run {
    phaser: Phaser,
    acc: Accumulator<i64>,
    tasks: Vec<Task>,
    /// Phases completed according to the model.
    completed: u64,
    terminated: bool,
    /// The accumulator's sum for each phase that received a send.
    sums: BTreeMap<u64, i64>,
    replies: Receiver<Report>,
    reply_sender: Sender<Report>,
    threads: Vec<JoinHandle<()>>,
    log: Vec<String>,
}

impl Drop for Run {
    /// After a failure, frees every thread still blocked in the phaser, so a failing case does not
    /// leave threads behind for the rest of the shrinking.
    fn drop(&mut self) {
        self.phaser.force_terminate();
        for task in &mut self.tasks {
            task.commands = None;
        }
    }
}

impl Run {
    fn new(topology: Topology, creator_mode: Mode) -> Run {
        let builder = Phaser::builder().mode(creator_mode);
        let builder = match topology {
            Topology::Flat => builder.tiers(1),
            Topology::Tree { tiers, degree } => builder.tiers(tiers).degree(degree),
        };
        let (phaser, creator) = builder.build().expect("a valid phaser");
        assert_eq!(creator.id(), 0, "the creator's registration has id 0");
        assert_eq!(creator.mode(), creator_mode);
        assert_eq!(creator.phase(), 0);
        assert_eq!(phaser.phase(), 0);
        let acc = Accumulator::new(&phaser, Op::Sum).expect("an i64 sum accumulator");
        let (reply_sender, replies) = mpsc::channel();
        let mut run = Run {
            phaser,
            acc,
            tasks: Vec::new(),
            completed: 0,
            terminated: false,
            sums: BTreeMap::new(),
            replies,
            reply_sender,
            threads: Vec::new(),
            log: vec![format!("{topology:?}, creator {creator_mode:?}")],
        };
        run.spawn_task(creator, 0, 0);
        run
    }

    fn spawn_task(&mut self, reg: Registration, next_signal: u64, next_wait: u64) {
        let task = self.tasks.len();
        let (commands, receiver) = mpsc::channel();
        self.tasks.push(Task {
            id: reg.id(),
            mode: reg.mode(),
            next_signal,
            next_wait,
            live: true,
            sent_unsignalled: false,
            outstanding: None,
            commands: Some(commands),
        });
        let acc = self.acc.clone();
        let replies = self.reply_sender.clone();
        self.threads.push(std::thread::spawn(move || {
            task_loop(task, reg, acc, receiver, replies)
        }));
    }

    /// Fails the case with `message` and the schedule so far.
    #[track_caller]
    fn fail(&self, message: String) -> ! {
        panic!(
            "{message}\nmodel: {} phase(s) completed, terminated {}\nsteps:\n  {}",
            self.completed,
            self.terminated,
            self.log.join("\n  ")
        );
    }

    fn live_signaller_ids(&self, at_or_before: Option<u64>) -> Vec<usize> {
        let mut ids: Vec<usize> = self
            .tasks
            .iter()
            .filter(|t| t.live && can_signal(t.mode))
            .filter(|t| at_or_before.map_or(true, |p| t.next_signal <= p))
            .map(|t| t.id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The phases complete once every live signaller signalled them; `None` when no signaller is
    /// left (the phaser terminates).
    fn frontier(&self) -> Option<u64> {
        self.tasks
            .iter()
            .filter(|t| t.live && can_signal(t.mode))
            .map(|t| t.next_signal)
            .min()
    }

    /// Sends `command` to task `t`, records what it must return, and brings the model and the
    /// real phaser to rest: every call the model says returns now must return, with the right
    /// result, and nothing else may.
    fn issue(&mut self, t: usize, op: &str, command: Command, expect: Expect) {
        let task = &self.tasks[t];
        self.log.push(format!(
            "task {t} (id {}, {:?}): {op}, expecting {expect:?}",
            task.id, task.mode
        ));
        let sent = task
            .commands
            .as_ref()
            .expect("a live task")
            .send(command)
            .is_ok();
        if !sent {
            self.fail(format!("task {t}'s thread is gone (did a call panic?)"));
        }
        self.tasks[t].outstanding = Some((op.to_string(), expect));
        self.advance();
        self.collect();
        self.check_phaser();
    }

    fn advance(&mut self) {
        match self.frontier() {
            // The last signaller's drop completes the phase it was in (the frontier, as it was the
            // only signaller left), then terminates the phaser (issue 31).
            None if !self.terminated => {
                self.completed += 1;
                self.terminated = true;
            }
            None => {}
            Some(frontier) => {
                assert!(
                    frontier >= self.completed,
                    "model: completed phases went back"
                );
                self.completed = frontier;
            }
        }
    }

    fn due(&self, expect: &Expect) -> bool {
        match expect {
            Expect::Wait(phase) => *phase < self.completed || self.terminated,
            _ => true,
        }
    }

    /// Receives the replies the model says are due, checking each; fails on a reply that is not
    /// due (a wait that returned before its phase completed) and on a due call that does not return
    /// within [`STEP_HANG`].
    fn collect(&mut self) {
        let deadline = Instant::now() + STEP_HANG;
        loop {
            let due: Vec<usize> = (0..self.tasks.len())
                .filter(|&t| {
                    self.tasks[t]
                        .outstanding
                        .as_ref()
                        .is_some_and(|(_, expect)| self.due(expect))
                })
                .collect();
            if due.is_empty() {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.replies.recv_timeout(left) {
                Ok(report) => self.check_report(report, deadline),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    let calls: Vec<String> = due
                        .iter()
                        .map(|&t| format!("task {t}: {:?}", self.tasks[t].outstanding))
                        .collect();
                    self.fail(format!(
                        "hang: these calls must have returned but had not after {STEP_HANG:?}: \
                         {calls:?}"
                    ));
                }
            }
        }
        // A blocked call that returned although its phase has not completed.
        if let Ok(report) = self.replies.try_recv() {
            self.check_report(report, deadline);
            self.fail("unreachable: an early reply must fail its check".into());
        }
    }

    fn check_report(&mut self, report: Report, deadline: Instant) {
        let t = report.task;
        let Some((op, expect)) = self.tasks[t].outstanding.clone() else {
            self.fail(format!(
                "task {t} returned {:?} with no call outstanding",
                report.outcome
            ));
        };
        if !self.due(&expect) {
            self.fail(format!(
                "task {t}'s {op} returned {:?} although the model says its phase has not completed \
                 (it must stay blocked; expected {expect:?} later)",
                report.outcome
            ));
        }
        let what = format!("task {t} (id {}) {op}", self.tasks[t].id);
        let mut check_phase = true;
        match (&expect, report.outcome) {
            (Expect::Unit, Outcome::Unit(Ok(()))) => {}
            (Expect::Refused, Outcome::Unit(Err(Error::Capability { .. })))
            | (Expect::Refused, Outcome::Registered(Err(Error::Capability { .. }))) => {}
            (Expect::Dropped, Outcome::Dropped) => {
                check_phase = false;
                self.tasks[t].commands = None;
            }
            (Expect::Signalled(phase), Outcome::Phase(Ok(got))) if got == *phase => {}
            (Expect::Wait(phase), Outcome::Phase(Ok(got)))
                if got == *phase && *phase < self.completed => {}
            (Expect::Wait(phase), Outcome::Phase(Err(Error::Terminated { phase: at })))
                if self.terminated && *phase >= self.completed && at == *phase =>
            {
                check_phase = false;
            }
            (Expect::Registered { mode, phase }, Outcome::Registered(Ok(child))) => {
                self.check_child(&what, *mode, *phase, child);
            }
            (Expect::TimedOut { phase, missing }, Outcome::Phase(Err(error))) => {
                if self.check_timeout(&what, t, *phase, missing, error, deadline) {
                    // Retried: the reply to the retry is still to come.
                    return;
                }
            }
            (_, outcome) => self.fail(format!("{what}: expected {expect:?}, got {outcome:?}")),
        }
        if check_phase {
            let expected = self.tasks[t].expected_phase();
            if expected.is_some() && report.phase_after != expected {
                self.fail(format!(
                    "{what}: reg.phase() is {:?} afterwards, the model says {expected:?}",
                    report.phase_after
                ));
            }
        }
        self.tasks[t].outstanding = None;
    }

    /// Checks a timed-out wait; returns true if it retried because registrations whose signal
    /// is on its way (a blocking `next()` issued but not yet run) were still named as missing.
    fn check_timeout(
        &mut self,
        what: &str,
        t: usize,
        phase: u64,
        missing: &[usize],
        error: Error,
        deadline: Instant,
    ) -> bool {
        let Error::Timeout {
            episode,
            missing: mut named,
            resumable: true,
        } = error
        else {
            self.fail(format!("{what}: expected a timeout, got {error:?}"));
        };
        named.sort_unstable();
        if episode != phase {
            self.fail(format!(
                "{what}: timed out in phase {episode}, the model says it waits for {phase}"
            ));
        }
        if named == missing {
            return false;
        }
        let in_flight = named
            .iter()
            .all(|id| missing.contains(id) || self.signal_in_flight(*id));
        if in_flight && Instant::now() < deadline {
            // Timeouts are not destructive: the signal stays, so waiting again is the same wait.
            let command = Command::WaitTimeout(SHORT);
            let _ = self.tasks[t].commands.as_ref().expect("live").send(command);
            return true;
        }
        self.fail(format!(
            "{what}: the timeout named {named:?} as missing, the model says {missing:?}"
        ));
    }

    /// Whether the registration with `id` has a blocking call outstanding (whose signal the model
    /// counts although its thread may not have run it yet).
    fn signal_in_flight(&self, id: usize) -> bool {
        self.tasks
            .iter()
            .any(|t| t.id == id && t.live && matches!(t.outstanding, Some((_, Expect::Wait(_)))))
    }

    fn check_child(&mut self, what: &str, mode: Mode, phase: u64, child: Registration) {
        if child.mode() != mode {
            self.fail(format!("{what}: the child has mode {:?}", child.mode()));
        }
        if child.phase() != phase {
            self.fail(format!(
                "{what}: the child starts in phase {}, the model says {phase} (its parent's)",
                child.phase()
            ));
        }
        if self.tasks.iter().any(|t| t.id == child.id()) {
            self.fail(format!(
                "{what}: the child's id {} is not unique",
                child.id()
            ));
        }
        self.log.push(format!(
            "  -> task {} has id {}",
            self.tasks.len(),
            child.id()
        ));
        self.spawn_task(child, phase, phase);
    }

    /// The phaser-wide state, once every due call returned. The phase may be published a moment
    /// after the last signal returned (a tree propagates it), so it is polled, with the hang
    /// detector as the limit; it must never run ahead of the model.
    fn check_phaser(&self) {
        let signallers = self.live_signaller_ids(None).len();
        if self.phaser.signallers() != signallers {
            self.fail(format!(
                "phaser.signallers() is {}, the model has {signallers} live signaller(s)",
                self.phaser.signallers()
            ));
        }
        if self.phaser.is_terminated() != self.terminated {
            self.fail(format!(
                "phaser.is_terminated() is {}, the model says {}",
                self.phaser.is_terminated(),
                self.terminated
            ));
        }
        if self.terminated {
            return;
        }
        let expected_sum = match self.completed {
            0 => 0,
            c => self.sums.get(&(c - 1)).copied().unwrap_or(0),
        };
        let deadline = Instant::now() + STEP_HANG;
        loop {
            let phase = self.phaser.phase();
            let sum = self.acc.result();
            if phase > self.completed {
                self.fail(format!(
                    "phaser.phase() is {phase}, ahead of the model's {}",
                    self.completed
                ));
            }
            if phase == self.completed && sum == expected_sum {
                return;
            }
            if Instant::now() > deadline {
                self.fail(format!(
                    "phaser.phase() is {phase} and acc.result() {sum}; the model says {} and \
                     {expected_sum}",
                    self.completed
                ));
            }
            std::thread::yield_now();
        }
    }

    /// Runs one schedule step on the `intent.task`-th task that is free (live, nothing outstanding).
    fn step(&mut self, intent: &Intent) {
        let free: Vec<usize> = (0..self.tasks.len())
            .filter(|&t| self.tasks[t].live && self.tasks[t].outstanding.is_none())
            .collect();
        if free.is_empty() {
            return;
        }
        let t = free[intent.task.index(free.len())];
        if self.terminated {
            return self.drop_task(t);
        }
        let task = &self.tasks[t];
        let (mode, pending, sent) = (task.mode, task.pending(), task.sent_unsignalled);
        match intent.kind {
            Kind::Register => self.register(t, intent.mode),
            // Dropping the last signaller ends the run (everything after is a drop), so schedules
            // keep it until the clean-up in `finish`, which always ends that way.
            Kind::Drop if sent || self.last_signaller(t) => self.next(t, false),
            Kind::Drop => self.drop_task(t),
            Kind::Signal if can_wait(mode) && can_signal(mode) && !pending => self.signal(t),
            Kind::Signal | Kind::Wait | Kind::Next => self.next(t, intent.kind == Kind::Wait),
            Kind::NextTimeout | Kind::WaitTimeout => {
                self.timed(t, intent.kind == Kind::WaitTimeout)
            }
            Kind::Send => self.send(t, intent.value),
        }
    }

    fn last_signaller(&self, t: usize) -> bool {
        can_signal(self.tasks[t].mode) && self.live_signaller_ids(None).len() == 1
    }

    fn register(&mut self, t: usize, mode: Mode) {
        let live = self.tasks.iter().filter(|t| t.live).count();
        if live >= MAX_TASKS {
            return;
        }
        let parent = &self.tasks[t];
        let expect = if may_register(parent.mode, mode) {
            Expect::Registered {
                mode,
                phase: parent.child_phase(),
            }
        } else {
            Expect::Refused
        };
        self.issue(
            t,
            &format!("register({mode:?})"),
            Command::Register(mode),
            expect,
        );
    }

    fn drop_task(&mut self, t: usize) {
        self.tasks[t].live = false;
        self.issue(t, "drop", Command::Drop, Expect::Dropped);
    }

    fn signal(&mut self, t: usize) {
        let task = &mut self.tasks[t];
        task.next_signal += 1;
        task.sent_unsignalled = false;
        self.issue(t, "signal()", Command::Signal, Expect::Unit);
    }

    /// `next()`, or `wait()` where the task is between `signal()` and `wait()` (or, for a Wait-only
    /// task, where `prefer_wait`).
    fn next(&mut self, t: usize, prefer_wait: bool) {
        let task = &mut self.tasks[t];
        let mode = task.mode;
        if !can_wait(mode) {
            let phase = task.next_signal;
            task.next_signal += 1;
            task.sent_unsignalled = false;
            return self.issue(t, "next()", Command::Next, Expect::Signalled(phase));
        }
        let phase = task.next_wait;
        let use_wait = task.pending() || (prefer_wait && !can_signal(mode));
        task.next_wait += 1;
        let (op, command) = if use_wait {
            ("wait()", Command::Wait)
        } else {
            if can_signal(mode) {
                task.next_signal += 1;
                task.sent_unsignalled = false;
            }
            ("next()", Command::Next)
        };
        self.issue(t, op, command, Expect::Wait(phase));
    }

    /// `next_timeout`/`wait_timeout`: with the hang detector as the timeout where the model says
    /// the wait completes, with a short one where it says the wait must time out.
    fn timed(&mut self, t: usize, prefer_wait: bool) {
        let task = &mut self.tasks[t];
        let mode = task.mode;
        if !can_wait(mode) {
            let phase = task.next_signal;
            task.next_signal += 1;
            task.sent_unsignalled = false;
            let command = Command::NextTimeout(STEP_HANG);
            return self.issue(t, "next_timeout()", command, Expect::Signalled(phase));
        }
        let use_wait = task.pending() || (prefer_wait && !can_signal(mode));
        if !use_wait && can_signal(mode) {
            task.next_signal += 1;
            task.sent_unsignalled = false;
        }
        let phase = task.next_wait;
        let completes = self.frontier().is_some_and(|f| phase < f);
        let (timeout, expect) = if completes {
            self.tasks[t].next_wait += 1;
            (STEP_HANG, Expect::Wait(phase))
        } else {
            let missing = self.live_signaller_ids(Some(phase));
            (SHORT, Expect::TimedOut { phase, missing })
        };
        let (op, command) = if use_wait {
            ("wait_timeout", Command::WaitTimeout(timeout))
        } else {
            ("next_timeout", Command::NextTimeout(timeout))
        };
        self.issue(t, &format!("{op}({timeout:?})"), command, expect);
    }

    fn send(&mut self, t: usize, value: i64) {
        let task = &mut self.tasks[t];
        if !can_signal(task.mode) {
            let command = Command::Send(value);
            return self.issue(t, &format!("send({value})"), command, Expect::Refused);
        }
        if task.pending() {
            return;
        }
        task.sent_unsignalled = true;
        *self.sums.entry(task.next_signal).or_insert(0) += value;
        self.issue(
            t,
            &format!("send({value})"),
            Command::Send(value),
            Expect::Unit,
        );
    }

    /// Drops every registration (signalling first where a send is unsignalled), which completes
    /// or terminates every outstanding wait, then joins the threads.
    fn finish(mut self) {
        loop {
            let free = (0..self.tasks.len())
                .find(|&t| self.tasks[t].live && self.tasks[t].outstanding.is_none());
            let Some(t) = free else {
                if self.tasks.iter().any(|t| t.live) {
                    self.fail("model: every live task is blocked".into());
                }
                break;
            };
            let task = &self.tasks[t];
            if task.sent_unsignalled && !self.terminated {
                if can_wait(task.mode) {
                    self.signal(t);
                } else {
                    self.next(t, false);
                }
            } else {
                self.drop_task(t);
            }
        }
        if !self.phaser.is_terminated() {
            self.fail("every registration is gone but the phaser is not terminated".into());
        }
        for thread in std::mem::take(&mut self.threads) {
            thread.join().expect("a task thread panicked");
        }
    }
}

fn run(topology: Topology, creator_mode: Mode, schedule: &[Intent]) {
    let mut run = Run::new(topology, creator_mode);
    for intent in schedule {
        run.step(intent);
    }
    run.finish();
}

fn config() -> Config {
    // 64 cases per topology by default keeps the file within seconds; PROPTEST_CASES asks for more.
    let cases = match std::env::var("PROPTEST_CASES") {
        Ok(_) => Config::default().cases,
        Err(_) => 64,
    };
    Config {
        cases,
        // No regression files in the source tree; a failure prints its minimal schedule.
        failure_persistence: None,
        // A failing case may wait out the hang detector on every shrinking step.
        max_shrink_time: 120_000,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn flat_phaser_matches_the_model(creator in creator_mode(), schedule in schedule()) {
        run(Topology::Flat, creator, &schedule);
    }

    #[test]
    fn tree_of_two_tiers_degree_two_matches_the_model(
        creator in creator_mode(),
        schedule in schedule(),
    ) {
        run(Topology::Tree { tiers: 2, degree: 2 }, creator, &schedule);
    }

    #[test]
    fn tree_of_three_tiers_degree_two_matches_the_model(
        creator in creator_mode(),
        schedule in schedule(),
    ) {
        run(Topology::Tree { tiers: 3, degree: 2 }, creator, &schedule);
    }
}
