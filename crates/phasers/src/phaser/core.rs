//! What every handle of one phaser shares: the tree, the release words, the broken state, and the
//! roster of who has signalled what.

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::task::Waker;

use crossbeam_utils::CachePadded;

use super::advance::{Advanced, OnAdvance, Panic};
use super::cells::{Cells, Partial};
use super::gather::{Finish, Hint, Lock, Source, Tree};
use super::progress::{self, Progress};
use super::root_release::releases_through_root;
use super::shape::Shape;
use super::word::Seen;
use crate::error::Error;
use crate::primitive::{Arc, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::wait::{batched_wakes, BrokenState, Signal, Stall, Tuning, Watched, Wording};

/// The `by` a termination records in the broken state, to tell it from a lost registration.
pub(crate) const TERMINATED: usize = usize::MAX;

pub(crate) struct Core {
    pub(crate) tree: Tree,
    /// Phases released: waiters of phase `p` wait until this exceeds `p`.
    pub(crate) release: CachePadded<Signal>,
    /// Phases gathered whose `next_single` action has yet to run: the action's runner waits here.
    pub(crate) gathered: CachePadded<Signal>,
    /// `p + 1` once some `next_single` caller of phase `p` has claimed the action.
    pub(crate) single_claim: CachePadded<AtomicU64>,
    pub(crate) broken: BrokenState,
    pub(crate) tuning: Tuning,
    /// Live registrations, of every mode, for the spin plan.
    pub(crate) registrations: AtomicUsize,
    /// Signal-capable registrations by id, with the next phase each will signal (for timeouts
    /// and stall reports).
    pub(crate) roster: Mutex<Roster>,
    pub(crate) stall: Stall,
    /// The action run as each phase completes
    /// ([`PhaserBuilder::on_advance`](super::PhaserBuilder::on_advance)).
    advance: Option<OnAdvance>,
}

pub(crate) struct Roster {
    pub(crate) next_id: usize,
    pub(crate) signalled: BTreeMap<usize, Progress>,
    /// Where new registrations' progress cells come from.
    pub(crate) supply: progress::Supply,
}

impl Core {
    pub(crate) fn new(shape: Shape, tuning: Tuning, advance: Option<OnAdvance>) -> Self {
        Core {
            tree: Tree::new(
                shape,
                advance.is_some(),
                releases_through_root(tuning.round_trip()),
            ),
            release: CachePadded::new(Signal::new(0)),
            gathered: CachePadded::new(Signal::new(0)),
            single_claim: CachePadded::new(AtomicU64::new(0)),
            broken: BrokenState::new(),
            tuning,
            registrations: AtomicUsize::new(0),
            roster: Mutex::new(Roster {
                next_id: 0,
                signalled: BTreeMap::new(),
                supply: progress::Supply::default(),
            }),
            stall: Stall::new(tuning.stall_after()),
            advance,
        }
    }

    /// The structure lock (not yet taken), for a task whose accumulator view is `view`.
    pub(crate) fn lock<'a>(&'a self, view: &'a [Arc<Cells>]) -> Lock<'a> {
        Lock::new(&self.tree.structure, view)
    }

    /// The root's completer, in three steps (see [`Finish`]). `by` is the registration whose
    /// signal or drop is completing the phase; a panic of the advance action is left in
    /// `panicked` for that registration to resume once the gather is done (unwinding from inside
    /// it would leave the root completing for ever). The wake of the sleepers a release found is
    /// left in `owed`, for the caller to pay once its arrival returns (see [`OwedWakes`]).
    /// Returns whether this step released `phase` to its waiters.
    pub(crate) fn finish(
        &self,
        phase: u64,
        step: Finish,
        view: &[Arc<Cells>],
        by: usize,
        panicked: &Cell<Option<Panic>>,
        owed: &OwedWakes,
    ) -> bool {
        match step {
            Finish::Close => {
                self.tree.each_accumulator(view, |cells| cells.close(phase));
                if let Some(payload) = self.advance(phase, by) {
                    panicked.set(Some(payload));
                }
                false
            }
            Finish::Release => {
                // A phase the phaser was terminated or broken at is never released, so that every
                // wait for it reports the end instead of racing the release: after an advance
                // action's `Break` at `p`, phase `p + 1` must not complete even when signals of
                // tasks running ahead had already gathered it.
                if self.broken.is_broken_for(phase) {
                    return false;
                }
                // Releases are published at least once each and never go back, even when a phase
                // of signal-only tasks overtakes this one (its root was re-armed first).
                if self.single_claim.load(Ordering::Acquire) == phase + 1 {
                    if self.gathered.publish_at_least_owing(phase + 1) {
                        owed.gathered.set(true);
                    }
                    false
                } else {
                    if self.release.publish_at_least_owing(phase + 1) {
                        owed.release.set(true);
                    }
                    true
                }
            }
            Finish::Last => {
                // The accumulators are not closed: the last leave's phase ends the run rather than
                // being a step of it, so their results stay those of the phase before, which is
                // what a task reading them once every registration is gone wants. Sends made in
                // it by tasks that then left without signalling are dropped, as before the last
                // leave completed its phase.
                self.tree
                    .each_accumulator(view, |cells| cells.keep_previous(phase));
                if let Some(payload) = self.advance(phase, by) {
                    panicked.set(Some(payload));
                }
                // `phase` completes (unless its advance action panicked, which broke the phaser
                // at `phase` already, so this changes nothing); no later one can, whatever the
                // action answered: no registration is left to signal it.
                if self.broken.break_from(phase.saturating_add(1), TERMINATED) {
                    self.wake_all();
                }
                false
            }
        }
    }

    /// Runs the advance action for `phase`, if there is one and the phaser can still complete the
    /// phase. The root is completing meanwhile, so no later phase can complete before the action
    /// returns: the actions run one at a time, in phase order. Returns the action's panic, after
    /// breaking the phaser at `phase` in `by`'s name.
    fn advance(&self, phase: u64, by: usize) -> Option<Panic> {
        let action = self.advance.as_ref()?;
        if self.broken.is_broken_for(phase) {
            return None;
        }
        match action.run(phase, self.signallers()) {
            Advanced::Continue => None,
            Advanced::Terminate => {
                // The advance of `phase` happens; no later phase can complete.
                if self.broken.break_from(phase.saturating_add(1), TERMINATED) {
                    self.wake_all();
                }
                None
            }
            Advanced::Panicked(payload) => {
                if self.broken.break_from(phase, by) {
                    self.wake_all();
                }
                Some(payload)
            }
        }
    }

    /// Whether `phase` has been released, read from the root word first.
    ///
    /// The root moves past a phase before its completer publishes the release word, and a flat
    /// phaser's waiters spin on the root (see `Registration::wait_on`), so the root counts as the
    /// release unless the phase's release was withheld: its `next_single` action holds it (the
    /// action's runner publishes it), or the phaser stopped at it (it is never released). The
    /// claim and the broken state, both read-mostly, are read only once the root has moved,
    /// and the release word only then when one of them withheld it.
    ///
    /// Only for a signaller's own phase: the root is then at `phase` or one past it, well within
    /// the window the root's word is read in (see `word.rs`).
    #[inline]
    pub(crate) fn is_released(&self, phase: u64) -> bool {
        self.tree.root_phase(phase) > phase
            && (self.released_at_root(phase) || self.release.load() > phase)
    }

    /// Whether the root's move past `phase`, which a caller saw, released it: the completer set
    /// the claim and the broken state of a withheld phase before moving the root (the claim is
    /// made before its claimer's signal, the break by the advance action), so a reader that saw
    /// the root move sees them.
    fn released_at_root(&self, phase: u64) -> bool {
        self.single_claim.load(Ordering::Acquire) != phase + 1 && !self.broken.is_broken_for(phase)
    }

    /// The phase the phaser is in: every phase before it has been released. The release word
    /// can lag the root (see [`is_released`](Self::is_released)), so a task that saw its phase
    /// released through the root finds the phaser past it here too. The root is read near the
    /// release word, which holds the whole phase and lags the root only by the completions whose
    /// completers have yet to publish them.
    pub(crate) fn phase(&self) -> u64 {
        let published = self.release.load();
        let root = self.tree.root_phase(published);
        if root > published && self.released_at_root(root - 1) {
            root
        } else {
            published
        }
    }

    /// Whether the phaser was terminated (rather than broken by a lost registration).
    pub(crate) fn is_terminated(&self) -> bool {
        matches!(self.broken.breaker(), Some((TERMINATED, _)))
    }

    /// Whether a wait for `phase` can no longer complete. Unlike `BrokenState::is_broken_for`,
    /// right for every phase: that one's "intact" marker is `u64::MAX`, which also reads as
    /// "broken from `u64::MAX`", so a wait for phase `u64::MAX` (far ahead of any phaser) would
    /// look ended on a live phaser. Only the waits that take any phase from the caller need it.
    /// The lock-free check comes first, so a live phaser never takes the breaker's lock here.
    pub(crate) fn is_stopped_for(&self, phase: u64) -> bool {
        self.broken.is_broken_for(phase)
            && matches!(self.broken.breaker(), Some((_, from)) if from <= phase)
    }

    /// Signal-capable registrations now.
    pub(crate) fn signallers(&self) -> usize {
        self.roster
            .lock()
            .expect("no thread panics holding the roster")
            .signalled
            .len()
    }

    /// Signals `phase` at `leaf` with the task's `partials`, for registration `by`. `hint` is what
    /// the task knows of its leaf. See [`Arrival`] for what it returns.
    pub(crate) fn arrive(
        &self,
        leaf: usize,
        phase: u64,
        partials: &[Partial],
        hint: Hint,
        view: &[Arc<Cells>],
        by: usize,
    ) -> Arrival {
        // Claimed before the advance action runs, so that releases the action makes wake at once.
        batched_wakes::while_claimed(|sink| {
            let mut lock = self.lock(view);
            let panicked = Cell::new(None);
            let released = Cell::new(false);
            let owed = OwedWakes::default();
            let finish = |completed, step| {
                // Releases are published in phase order or overtaken by later ones (see
                // `Finish::Release`), and a phaser stopped at a phase releases none after it, so
                // a release of `phase` or later means `phase` is released.
                if self.finish(completed, step, view, by, &panicked, &owed) && completed >= phase {
                    released.set(true);
                }
            };
            let seen = self.tree.arrive(
                leaf,
                phase,
                Source::Task(partials),
                &mut lock,
                &finish,
                hint,
            );
            drop(lock);
            self.pay(&owed, sink);
            Arrival {
                seen,
                released: released.get(),
                panicked: panicked.into_inner(),
            }
        })
    }

    /// The error a wait for `phase` returns once the phaser is broken or terminated.
    pub(crate) fn stopped(&self, phase: u64) -> Error {
        match self.broken.breaker() {
            Some((TERMINATED, _)) => Error::Terminated { phase },
            Some((by, episode)) => Error::Broken { by, episode },
            None => Error::Terminated { phase },
        }
    }

    /// The error a wait for `phase` returns once its deadline passed: every timed wait of a
    /// phaser, blocking or async, names the registrations that have not signalled, and can be
    /// waited again.
    pub(crate) fn timed_out(&self, phase: u64) -> Error {
        Error::Timeout {
            episode: phase,
            missing: self.missing(phase),
            resumable: true,
        }
    }

    /// Ids of the signal-capable registrations that have not signalled `phase`.
    pub(crate) fn missing(&self, phase: u64) -> Vec<usize> {
        let roster = self
            .roster
            .lock()
            .expect("no thread panics holding the roster");
        roster
            .signalled
            .iter()
            .filter(|(_, next)| next.cell().load(Ordering::Relaxed) <= phase)
            .map(|(&id, _)| id)
            .collect()
    }

    pub(crate) fn wake_all(&self) {
        self.release.wake_all();
        self.gathered.wake_all();
    }

    /// Wakes the sleepers that the releases of an arrival or a leave found (see [`OwedWakes`]);
    /// the tasks among them go into `sink` past a first batch, when a task's arrival gave one
    /// (see `wait/batched_wakes.rs`).
    pub(crate) fn pay(&self, owed: &OwedWakes, mut sink: Option<&mut VecDeque<Waker>>) {
        if owed.release.get() {
            self.release.release_sleepers_into(sink.as_deref_mut());
        }
        if owed.gathered.get() {
            self.gathered.release_sleepers_into(sink);
        }
    }
}

/// The wakes a completer owes for the phases it released, paid once its arrival has returned,
/// when every word it had to change is changed.
///
/// The completer of a sub-phaser whose arrival at the root released the phase still has to
/// re-arm the sub-phaser for the next phase. Waking first left it completing while the wake ran
/// (a wake of 100,000 tasks takes milliseconds), and the released tasks of that sub-phaser, each
/// arriving for the next phase, found it completing and yielded their worker threads until it
/// was re-armed: `sched_yield` was 12% of a 100,000-task profile (`perf`, 2-core AMD EPYC VM,
/// 2026-12-01). The publish comes first still, so every waiter that looks sees the release;
/// only the sleepers that marked the word before it wait for the few stores of the re-arm.
#[derive(Default)]
pub(crate) struct OwedWakes {
    release: Cell<bool>,
    gathered: Cell<bool>,
}

/// What a signal did, for the registration that made it.
pub(crate) struct Arrival {
    /// What it found at its leaf (see `Tree::arrive`): the guess for its next signal.
    pub(crate) seen: Option<Seen>,
    /// It completed its phase and published the release: its own wait for the phase may return
    /// at once, without reading the words the released tasks are taking from it for the next
    /// phase (a cache-line transfer on every phase the completer would otherwise pay).
    pub(crate) released: bool,
    /// It completed a phase whose advance action panicked: the caller resumes the panic once its
    /// own state records the signal (the phaser is already broken and consistent).
    pub(crate) panicked: Option<Panic>,
}

/// How stall reports speak of phasers.
static STALL_WORDING: Wording = Wording {
    unit: "phase",
    members: "registration(s)",
    all_arrived: "although every registration has signalled: the phase's next_single action may \
                  still be running",
    unnamed: "for registrations it cannot name",
    advice: "every signal-capable registration must signal each phase; drop one that is done \
             (it deregisters), and register tasks that only wait with Mode::Wait",
};

impl Watched for Core {
    fn stall(&self) -> &Stall {
        &self.stall
    }

    fn wording(&self) -> &'static Wording {
        &STALL_WORDING
    }

    fn describe(&self) -> String {
        let signallers = self
            .roster
            .lock()
            .expect("no thread panics holding the roster")
            .signalled
            .len();
        format!("Phaser of {signallers} signallers")
    }

    fn missing(&self, phase: u64) -> Vec<usize> {
        Core::missing(self, phase)
    }
}
