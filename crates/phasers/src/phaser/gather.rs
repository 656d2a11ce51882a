//! The gather: how signals climb the sub-phaser tree, and how registrations join and leave it while
//! gathers are in flight.
//!
//! # The protocol
//!
//! Every sub-phaser counts, in its [`Word`], the signallers that have not yet signalled its phase.
//! A signal is one compare-and-swap on the signaller's leaf. The signal that brings the count to
//! zero makes its sender the sub-phaser's *completer*: it moves the accumulator cells up, signals
//! the parent the same way (so the last signaller of each sub-phaser climbs one level, and no task
//! ever polls another's flag). When it completes the root it closes the accumulators (their root
//! cells become the phase's results, see `root_line.rs`), re-arms the root, and releases every
//! waiter through one word. Unwinding, each completer re-arms its sub-phaser for the next phase.
//! A completing sub-phaser's word changes only by its completer; everything else that needs it
//! waits (briefly: the completer is running, not waiting on anyone).
//!
//! # Signalling ahead
//!
//! A signal-only task never waits for a phase to complete, so it may signal phase `p + k` while
//! its leaf still gathers `p`. Such a signal is recorded in the sub-phaser's `early` map (phase →
//! signals already made) under the structure lock, and the word's `ahead` bit tells the completer
//! to consult the map when it re-arms: the next phase then starts with those signallers already
//! counted. A sub-phaser whose signallers are all ahead completes phase after phase in one go. The
//! same holds a level up: a sub-phaser of signal-only tasks may complete phases ahead of its
//! parent.
//!
//! # Joining and leaving
//!
//! Registrations and drops hold the structure lock, so they are serialized with each other and
//! with signals ahead, but never with the ordinary signals, which take no lock. A new signaller joins a
//! sub-phaser at a phase `q`: if the sub-phaser is gathering `q` it adds one signaller and one
//! unarrived; if it is still gathering an earlier phase (its members are ahead of it, or the task
//! that registered it already signalled), it adds a signaller already counted as arrived at the
//! phases before `q`. A leaf whose signallers all leave leaves its parent the same way, and a leaf
//! that gains its first one joins its parent. A sub-phaser past `q` cannot take a signaller for
//! `q`; placement picks another leaf.
//!
//! Anyone holding the lock who finds a word completing lets the lock go before waiting, because
//! that word's completer may need the lock to re-arm it.

use std::collections::BTreeMap;

use crossbeam_utils::CachePadded;

use super::cells::{Cells, Combine, Partial};
use super::root_line::RootLine;
use super::shape::Shape;
use super::word::{Seen, State, Word, MAX_SIGNALLERS};
use crate::primitive::{
    spin_loop, yield_now, Arc, AtomicBool, AtomicUsize, Mutex, MutexGuard, Ordering, RwLock,
};

/// What the structure lock protects.
pub(crate) struct Structure {
    /// Per sub-phaser: phase → signals already made for it by signallers ahead of the sub-phaser.
    early: Vec<BTreeMap<u64, u32>>,
    /// Per sub-phaser: being activated or left by the lock holder; placement must not use it.
    busy: Vec<bool>,
    /// Per sub-phaser: registrations placed on it (leaves only).
    members: Vec<usize>,
}

/// The structure lock, taken only when needed and let go while waiting for a completer.
///
/// It also carries the calling task's view of the phaser's accumulators, which every completion
/// along the task's path up the tree uses (see [`Tree::each_accumulator`]).
pub(crate) struct Lock<'a> {
    mutex: &'a Mutex<Structure>,
    guard: Option<MutexGuard<'a, Structure>>,
    view: &'a [Arc<Cells>],
}

impl<'a> Lock<'a> {
    pub(crate) fn new(mutex: &'a Mutex<Structure>, view: &'a [Arc<Cells>]) -> Self {
        Lock {
            mutex,
            guard: None,
            view,
        }
    }

    pub(crate) fn get(&mut self) -> &mut Structure {
        let mutex = self.mutex;
        self.guard.get_or_insert_with(|| {
            mutex
                .lock()
                .expect("the phaser's structure is never left half-changed by a panic")
        })
    }

    fn is_held(&self) -> bool {
        self.guard.is_some()
    }

    /// Lets the lock go and gives the completer of a word a chance to run.
    fn pause(&mut self) {
        self.guard = None;
        yield_now();
    }
}

/// Where the contributions of an arrival come from.
pub(crate) enum Source<'a> {
    /// A task's partials (those with `sent`); reproducible accumulators were already given theirs.
    Task(&'a [Partial]),
    /// A sub-phaser's cells, moved to its parent.
    Child(usize),
}

/// The root completer's steps for a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// Every signal is in: close the accumulators (see `Cells::close`) and run the advance
    /// action, before the root is re-armed.
    Close,
    /// The root is re-armed: release the waiters (or hand the phase to the `next_single` runner).
    /// Re-arming first means released tasks find the root open, rather than spinning while the
    /// completer wakes the sleepers, which can take the completer's core away.
    Release,
    /// The last signaller left: this phase completes in its place of `Close`, as the phaser's
    /// last (Java's `arriveAndDeregister` of the last party advances the phase, then terminates).
    /// It runs the advance action and ends the phaser from the next phase, before `Release`.
    Last,
}

/// What an arriving task knows of its leaf (see [`Tree::arrive`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hint {
    /// What it found there at its last arrival.
    pub(crate) guess: Option<Seen>,
    /// It saw the phase before this one released.
    pub(crate) settled: bool,
}

impl Hint {
    /// Nothing known: a sub-phaser delivering to its parent.
    const NONE: Hint = Hint {
        guess: None,
        settled: false,
    };
}

impl Source<'_> {
    /// Whether the arrival carries accumulator values to fold into the sub-phaser's cells.
    fn deposits(&self) -> bool {
        match self {
            Source::Task(partials) => partials.iter().any(|p| p.sent),
            Source::Child(_) => true,
        }
    }
}

/// The tree of sub-phasers.
pub(crate) struct Tree {
    shape: Shape,
    /// The phaser has an advance action, which runs between the gather and the re-arm: its root
    /// is marked `closes` from the start.
    has_advance: bool,
    /// The root's last arrival may release the phase in its own compare-and-swap (see
    /// [`rearm_at_once`](Self::rearm_at_once)): this machine's cores are far enough apart for
    /// releasing through the root to pay (see `root_release::releases_through_root`).
    through_root: bool,
    /// The root's word, with the first plain accumulator's root cells (see `root_line.rs`).
    root: Arc<CachePadded<RootLine>>,
    /// The words of the sub-phasers below the root, indexed `node - 1`.
    words: Box<[CachePadded<Word>]>,
    /// The root line's cells were given to an accumulator.
    root_cells_taken: AtomicBool,
    /// A reproducible accumulator was attached: its root is marked `closes`.
    has_reproducible: AtomicBool,
    pub(crate) structure: Mutex<Structure>,
    accumulators: RwLock<Vec<Arc<Cells>>>,
    accumulator_count: AtomicUsize,
}

/// Why a sub-phaser cannot take a new signaller for the asked phase.
#[derive(Debug)]
pub(crate) struct Unusable;

impl Tree {
    pub(crate) fn new(shape: Shape, has_advance: bool, through_root: bool) -> Self {
        let nodes = shape.nodes();
        let inactive = State::open(0, 0, 0, false);
        Tree {
            shape,
            has_advance,
            through_root,
            root: Arc::new(RootLine::new(Word::new(State {
                closes: has_advance,
                ..inactive
            }))),
            words: (1..nodes)
                .map(|_| CachePadded::new(Word::new(inactive)))
                .collect(),
            root_cells_taken: AtomicBool::new(false),
            has_reproducible: AtomicBool::new(false),
            structure: Mutex::new(Structure {
                early: vec![BTreeMap::new(); nodes],
                busy: vec![false; nodes],
                members: vec![0; nodes],
            }),
            accumulators: RwLock::new(Vec::new()),
            accumulator_count: AtomicUsize::new(0),
        }
    }

    pub(crate) fn shape(&self) -> Shape {
        self.shape
    }

    /// `node`'s word.
    #[inline]
    fn word(&self, node: usize) -> &Word {
        match node {
            0 => &self.root.word,
            _ => &self.words[node - 1],
        }
    }

    /// The phase the root is gathering: every phase before it has been gathered (a waiter still
    /// asks [`Core`](super::core::Core) whether it was released). Read as the phase nearest
    /// `near`, which must be within `word::WINDOW` of it (see `word.rs`).
    #[inline]
    pub(crate) fn root_phase(&self, near: u64) -> u64 {
        self.root.word.load(near).phase
    }

    /// Whether the root's last arrival moves it to the next phase in one change (see
    /// [`rearm_at_once`](Self::rearm_at_once)), for now: no advance action, no reproducible
    /// accumulator. A waiting rule reads this, never a correctness argument: the word's own
    /// `closes` mark decides each completion.
    #[inline]
    pub(crate) fn releases_at_once(&self) -> bool {
        self.through_root && !self.has_advance && !self.has_reproducible.load(Ordering::Relaxed)
    }

    /// Whether the arrival that finds `state` at `node`, as its last unarrived signaller, may
    /// move `node` straight to the next phase, skipping the completing state: the phaser
    /// releases through its root, `node` is the root, and closing the phase has nothing to do
    /// before the re-arm (the word is not marked
    /// `closes`: no advance action, no reproducible accumulator; and no signal made ahead to count
    /// in). Plain accumulators allow it: the arrival readies their root cells before its
    /// compare-and-swap (see [`rearm`](Self::rearm)).
    /// Waiters spinning on the root word then see one change per phase instead of two
    /// (completing, then re-armed), each of which would take the line from the completer.
    fn rearm_at_once(&self, node: usize, state: State) -> bool {
        self.through_root && node == 0 && state.unarrived == 1 && !state.ahead && !state.closes
    }

    /// `source` signals `phase` at `node`. Returns what it found there, for its next guess.
    ///
    /// `hint.guess` is what the caller found at `node` last time: how many signallers, how many
    /// still to signal, and whether the root is marked `closes`. With nothing to deposit, the
    /// arrival first tries the word it would find if it arrived in the same place again (see
    /// `Seen::expected`): when right, the arrival costs one
    /// coherence transaction (a compare-and-swap) instead of two (a load, then a
    /// compare-and-swap that must upgrade the line); when wrong, the failed compare-and-swap
    /// returns the word, and the arrival goes on from it without loading it again.
    /// `hint.settled` says the caller has seen `phase - 1` released (or `phase` is its first),
    /// so its leaf is at `phase - 1` or later.
    pub(crate) fn arrive(
        &self,
        node: usize,
        phase: u64,
        source: Source<'_>,
        lock: &mut Lock<'_>,
        finish: &dyn Fn(u64, Finish),
        hint: Hint,
    ) -> Option<Seen> {
        let Hint { guess, settled } = hint;
        // A task that saw phase `phase - 1` released knows its leaf has completed that phase, so
        // the cells of `phase`'s parity are free and it may fold into them before it knows
        // whether its leaf has re-armed yet.
        let deposited = settled && source.deposits();
        let expected = guess
            .filter(|_| deposited || !source.deposits())
            .map(|guess| guess.expected(phase));
        // The guess says this arrival is the root's last (a task arriving at the root: the
        // phaser is flat). Readying the accumulators must follow the other arrivals' deposits and
        // the values sent ahead to this phase, with the list of accumulators they sent to. A
        // settled task has them all already: a value sent ahead to this phase was recorded
        // before the signal ahead marked the root, which the completer of the phase before
        // (that this task saw released) read, and no value can be sent ahead to this phase now
        // that the root is at it; the other deposits go into the phase's own root cell, which
        // readying leaves alone (see `root_line.rs`), and an accumulator attached since is
        // empty. So it readies them first, then deposits, then re-arms: its deposit's transfer
        // brings the line, and the compare-and-swap follows at once, before a waiter spinning on
        // the root takes the line back. Readying is harmless if the guess fails.
        let readied =
            settled && expected.is_some_and(|expected| self.rearm_at_once(node, expected));
        if readied {
            debug_assert!(matches!(source, Source::Task(_)) && node == 0);
            self.each_accumulator(lock.view, |cells| cells.close(phase));
        }
        if deposited {
            self.deposit(node, phase, &source, lock.view);
        }
        // What the word holds, when a failed guess told.
        let mut seen = None;
        if let Some(expected) = expected {
            let found = if self.rearm_at_once(node, expected) {
                // Without accumulators there is nothing to ready. With them, a task that is not
                // settled reads the word back first: it acquires the other arrivals.
                if readied || self.accumulator_count.load(Ordering::Acquire) == 0 {
                    self.release_at_once(node, expected, finish)
                } else {
                    Err(self.word(node).load(phase))
                }
            } else {
                let arrived = State {
                    unarrived: expected.unarrived - 1,
                    ..expected
                };
                self.word(node).replace(expected, arrived).map(|()| {
                    if arrived.unarrived == 0 {
                        self.complete(node, phase, arrived, lock, finish);
                    }
                })
            };
            match found {
                Ok(()) => return expected.seen(),
                Err(now) => seen = Some(now),
            }
            // The guess "last" failed with one signaller still to arrive. At two registrations
            // that is the common failure: the completer of the phase before guesses its place
            // again, but went on at once while the other task was still seeing the release, and
            // that task's arrival is in flight. A second compare-and-swap expecting it to have
            // landed succeeds almost always (over 99% of failed guesses in the 2-thread
            // `send(1); next()` loop on the 2-core Xeon, 2026-11-30), where arriving as not last
            // lost the race to it and took a third. The accumulators are still ready for this
            // phase (see `root_line.rs`), and a miss costs one compare-and-swap that returns the
            // word for the loop below.
            if let Some(now) =
                seen.filter(|now| readied && now.phase == phase && now.unarrived == 2)
            {
                let last = State {
                    unarrived: 1,
                    ..now
                };
                if self.rearm_at_once(node, last) {
                    match self.release_at_once(node, last, finish) {
                        Ok(()) => return last.seen(),
                        Err(again) => seen = Some(again),
                    }
                }
            }
        }
        let mut deposited = deposited;
        let mut spins = 0u32;
        loop {
            let state = seen.take().unwrap_or_else(|| self.word(node).load(phase));
            if state.phase == phase && !state.is_completing() {
                debug_assert!(state.unarrived >= 1, "a signaller arrived twice at {phase}");
                // The phase cannot move on before this arrival, so the cells are this phase's.
                if !deposited {
                    self.deposit(node, phase, &source, lock.view);
                    deposited = true;
                }
                if self.rearm_at_once(node, state) {
                    match self.rearm(node, state, lock.view, finish) {
                        Ok(()) => return state.seen(),
                        Err(now) => seen = Some(now),
                    }
                    continue;
                }
                // One attempt: when another arrival (or a registration) changed the word, the
                // loop looks at it again, so that an arrival that became the root's last one
                // re-arms it at once rather than leaving it completing.
                let arrived = State {
                    unarrived: state.unarrived - 1,
                    ..state
                };
                if let Err(now) = self.word(node).replace(state, arrived) {
                    debug_assert_eq!(now.phase, phase, "{node} moved past {phase} without it");
                    seen = Some(now);
                    continue;
                }
                if arrived.unarrived == 0 {
                    self.complete(node, phase, arrived, lock, finish);
                }
                // The word as this arrival found it, for its next guess.
                return state.seen();
            }
            if state.is_completing() {
                // The completer is re-arming for the next phase; that takes a few stores, unless
                // it was descheduled, when the core is better handed to it. A lock holder lets the
                // lock go first: the completer may need it.
                spins += 1;
                if lock.is_held() {
                    lock.pause();
                } else if spins < 64 {
                    spin_loop();
                } else {
                    yield_now();
                }
                continue;
            }
            debug_assert!(state.phase < phase, "{node} is past phase {phase}");
            debug_assert!(!deposited, "a settled task is never ahead of its leaf");
            if self.arrive_ahead(node, phase, &source, lock) {
                return state.seen();
            }
        }
    }

    /// The last arrival at the root, found in `state`, moves it to the next phase and releases
    /// the phase, when [`rearm_at_once`](Self::rearm_at_once) allowed it. Returns the word as it
    /// is when it is no longer `state` (a registration joined or left, or a signal ahead marked
    /// it), having changed nothing the caller must undo: the caller looks again.
    ///
    /// With accumulators, `state` must have been read from the word (not guessed): it acquires
    /// every other arrival of the phase, with their deposits and the values they sent ahead, and
    /// the list of accumulators they sent to. Each accumulator's root cells are readied before
    /// the compare-and-swap (see `Cells::close`), so that a task released by it finds the
    /// phase's results; if it fails, they stay ready (see `root_line.rs`).
    fn rearm(
        &self,
        node: usize,
        state: State,
        view: &[Arc<Cells>],
        finish: &dyn Fn(u64, Finish),
    ) -> Result<(), State> {
        self.each_accumulator(view, |cells| cells.close(state.phase));
        self.release_at_once(node, state, finish)
    }

    /// [`rearm`](Self::rearm) once the accumulators are ready: the compare-and-swap and the
    /// release.
    fn release_at_once(
        &self,
        node: usize,
        state: State,
        finish: &dyn Fn(u64, Finish),
    ) -> Result<(), State> {
        let next = State::open(state.phase + 1, state.signallers, state.signallers, false);
        self.word(node).replace(state, next)?;
        finish(state.phase, Finish::Release);
        Ok(())
    }

    /// Records a signal for a phase the sub-phaser has not reached. Returns `false` when the
    /// caller must look again (the sub-phaser moved or is completing).
    fn arrive_ahead(
        &self,
        node: usize,
        phase: u64,
        source: &Source<'_>,
        lock: &mut Lock<'_>,
    ) -> bool {
        lock.get();
        let state = self.word(node).load(phase);
        if state.is_completing() {
            lock.pause();
            return false;
        }
        if state.phase == phase {
            return false;
        }
        let marked = State {
            ahead: true,
            ..state
        };
        if self.word(node).replace(state, marked).is_err() {
            return false;
        }
        *lock.get().early[node].entry(phase).or_insert(0) += 1;
        self.deposit_early(phase, source, lock.view);
        true
    }

    /// Takes `arrivals` off the unarrived count and `leavers` off the signallers, whatever the
    /// other arrivals do meanwhile. The phase cannot change: the caller has not arrived yet.
    fn decrement(&self, node: usize, mut state: State, arrivals: u32, leavers: u32) -> State {
        loop {
            let new = State {
                unarrived: state.unarrived - arrivals,
                signallers: state.signallers - leavers,
                ..state
            };
            match self.word(node).replace(state, new) {
                Ok(()) => return new,
                Err(now) => {
                    debug_assert_eq!(now.phase, state.phase);
                    state = now;
                }
            }
        }
    }

    fn deposit(&self, node: usize, phase: u64, source: &Source<'_>, view: &[Arc<Cells>]) {
        match *source {
            Source::Task(partials) => {
                for partial in partials
                    .iter()
                    .filter(|p| p.sent && !p.cells.is_reproducible())
                {
                    partial.cells.fold(node, phase, partial.value);
                }
            }
            Source::Child(child) => {
                self.each_accumulator(view, |cells| cells.transfer(child, node, phase))
            }
        }
    }

    fn deposit_early(&self, phase: u64, source: &Source<'_>, view: &[Arc<Cells>]) {
        match *source {
            Source::Task(partials) => {
                for partial in partials
                    .iter()
                    .filter(|p| p.sent && !p.cells.is_reproducible())
                {
                    partial.cells.fold_early(phase, partial.value);
                }
            }
            Source::Child(child) => {
                self.each_accumulator(view, |cells| cells.transfer_early(child, phase))
            }
        }
    }

    /// Runs `f` on every accumulator of the phaser; free when there is none.
    ///
    /// `view` is the calling task's copy of the list, refreshed before it arrived. It is complete
    /// unless an accumulator was attached since, and then the count tells: whoever sent to that
    /// accumulator attached-before-sent, and its arrival is ordered before this completion, so
    /// the count read here includes it. Only then is the shared list read, under its lock, which
    /// every completer taking on every phase would otherwise contend for.
    pub(crate) fn each_accumulator(&self, view: &[Arc<Cells>], f: impl Fn(&Cells)) {
        let count = self.accumulator_count.load(Ordering::Acquire);
        if count == 0 {
            return;
        }
        if view.len() == count {
            view.iter().for_each(|cells| f(cells));
            return;
        }
        let list = self
            .accumulators
            .read()
            .expect("no thread panics holding the accumulator list");
        for cells in list.iter() {
            f(cells);
        }
    }

    /// Brings a task's copy of the accumulator list up to date; one load when nothing changed.
    pub(crate) fn refresh_view(&self, view: &mut Vec<Arc<Cells>>) {
        if view.len() == self.accumulator_count.load(Ordering::Acquire) {
            return;
        }
        let list = self
            .accumulators
            .read()
            .expect("no thread panics holding the accumulator list");
        view.clone_from(&list);
    }

    /// New cells for an accumulator combining with `combine`: the root line's root cells if it
    /// is the first plain accumulator, cells of its own otherwise (see `root_line.rs`).
    pub(crate) fn cells(&self, combine: Combine, reproducible: bool) -> Cells {
        let inline = !reproducible && !self.root_cells_taken.swap(true, Ordering::AcqRel);
        Cells::new(
            combine,
            self.shape.nodes(),
            reproducible,
            self.root.clone(),
            inline,
        )
    }

    /// Attaches an accumulator: every later gather moves its cells up the tree. A reproducible
    /// one marks the root `closes` first, before any task can send to it, so no phase it takes
    /// part in is released without computing its result (see `word.rs`). A plain one needs no
    /// mark: its cells are all empty, and every root arrival that readies the root cells (see
    /// [`rearm`](Self::rearm)) after a send to it, which was made after this, finds it in the
    /// list.
    pub(crate) fn add_accumulator(&self, cells: Arc<Cells>) {
        if cells.is_reproducible() {
            self.has_reproducible.store(true, Ordering::Relaxed);
            self.mark_root_closes();
        }
        let mut list = self
            .accumulators
            .write()
            .expect("no thread panics holding the accumulator list");
        list.push(cells);
        self.accumulator_count.store(list.len(), Ordering::Release);
    }

    /// Sets the root's `closes` mark, once its completer, if any, has re-armed it: nothing else
    /// may change a completing word.
    fn mark_root_closes(&self) {
        // Any phase serves as `near` here: the mark is set on the word as read, whose tag the
        // compare-and-swap checks, and the phase read is never used.
        let mut state = self.root.word.load(0);
        let mut spins = 0u32;
        while !state.closes {
            if state.is_completing() {
                // As an arrival waits for a completer (see `arrive`): a few stores, unless the
                // completer was descheduled.
                spins += 1;
                if spins < 64 {
                    spin_loop();
                } else {
                    yield_now();
                }
                state = self.root.word.load(0);
                continue;
            }
            let marked = State {
                closes: true,
                ..state
            };
            match self.root.word.replace(state, marked) {
                Ok(()) => return,
                Err(now) => state = now,
            }
        }
    }

    /// Delivers `phase` of `node` upwards, then re-arms `node`; repeats while every signaller of
    /// the next phase had already signalled it. The caller brought the unarrived count to zero.
    fn complete(
        &self,
        node: usize,
        mut phase: u64,
        completing: State,
        lock: &mut Lock<'_>,
        finish: &dyn Fn(u64, Finish),
    ) {
        let mut known = Some(completing);
        loop {
            // Nobody else changes a completing word, so the state the caller left it in is current.
            let state = known.take().unwrap_or_else(|| self.word(node).load(phase));
            debug_assert!(state.phase == phase && state.unarrived == 0);
            if state.signallers == 0 {
                self.deactivate(node, phase, lock, finish);
                return;
            }
            match self.shape.parent(node) {
                None => finish(phase, Finish::Close),
                Some(parent) => {
                    self.arrive(parent, phase, Source::Child(node), lock, finish, Hint::NONE);
                }
            }
            let (early, ahead) = if state.ahead {
                let structure = lock.get();
                let early = structure.early[node].remove(&(phase + 1)).unwrap_or(0);
                (early, !structure.early[node].is_empty())
            } else {
                (0, false)
            };
            let unarrived = state.signallers - early;
            self.word(node).set(State {
                closes: state.closes,
                ..State::open(phase + 1, state.signallers, unarrived, ahead)
            });
            if self.shape.parent(node).is_none() {
                finish(phase, Finish::Release);
            }
            if unarrived > 0 {
                return;
            }
            phase += 1;
        }
    }

    /// The last signaller of `node` left while completing `phase`: `node` leaves its parent (or,
    /// at the root, the phaser has no signaller left: the leave completes `phase`, which is the
    /// phaser's last).
    ///
    /// At the root the leaver's arrival completes `phase`: the advance action (which sees 0
    /// registrations) and the termination from `phase + 1` come first (see `Finish::Last`), then
    /// the release of `phase`. Terminating before the release means that a waiter released from
    /// `phase` already finds the phaser ended, as after an advance action's `Break`; no signaller
    /// is left to gather `phase + 1` meanwhile.
    fn deactivate(
        &self,
        node: usize,
        phase: u64,
        lock: &mut Lock<'_>,
        finish: &dyn Fn(u64, Finish),
    ) {
        lock.get().busy[node] = true;
        let root = match self.shape.parent(node) {
            None => {
                finish(phase, Finish::Last);
                true
            }
            Some(parent) => {
                self.leave(parent, phase, Source::Child(node), lock, finish);
                false
            }
        };
        // Nobody else changes a completing word: its mark is still the one to keep.
        let closes = self.word(node).load(phase).closes;
        self.word(node).set(State {
            closes,
            ..State::open(phase + 1, 0, 0, false)
        });
        if root {
            finish(phase, Finish::Release);
        }
        let structure = lock.get();
        structure.busy[node] = false;
        debug_assert!(structure.early[node].is_empty());
    }

    /// A signaller of `node` whose next signal would have been for `phase` leaves, with its
    /// contributions for `phase`. Holds the structure lock.
    pub(crate) fn leave(
        &self,
        node: usize,
        phase: u64,
        source: Source<'_>,
        lock: &mut Lock<'_>,
        finish: &dyn Fn(u64, Finish),
    ) {
        loop {
            lock.get();
            let state = self.word(node).load(phase);
            if state.is_completing() {
                lock.pause();
                continue;
            }
            debug_assert!(!state.is_inactive() && state.phase <= phase);
            if state.phase == phase {
                self.deposit(node, phase, &source, lock.view);
                let state = self.decrement(node, state, 1, 1);
                if state.unarrived == 0 {
                    self.complete(node, phase, state, lock, finish);
                }
                return;
            }
            // Ahead of the sub-phaser: counted as arrived at its phase, and in the early map
            // for the phases between.
            let structure = lock.get();
            let early = &structure.early[node];
            let still_ahead = early
                .iter()
                .any(|(&at, &count)| !(at > state.phase && at < phase && count == 1));
            let new = State {
                signallers: state.signallers - 1,
                ahead: still_ahead,
                ..state
            };
            if self.word(node).replace(state, new).is_err() {
                continue;
            }
            let early = &mut lock.get().early[node];
            for at in state.phase + 1..phase {
                if let Some(count) = early.get_mut(&at) {
                    *count -= 1;
                    if *count == 0 {
                        early.remove(&at);
                    }
                }
            }
            self.deposit_early(phase, &source, lock.view);
            return;
        }
    }

    /// Adds a signaller whose first signal will be for `phase` to `node`, activating `node` and
    /// its ancestors as needed. Holds the structure lock.
    pub(crate) fn join(
        &self,
        node: usize,
        phase: u64,
        lock: &mut Lock<'_>,
    ) -> Result<(), Unusable> {
        loop {
            if lock.get().busy[node] {
                return Err(Unusable);
            }
            let state = self.word(node).load(phase);
            if state.is_completing() {
                lock.pause();
                continue;
            }
            if state.is_inactive() {
                lock.get().busy[node] = true;
                let joined = match self.shape.parent(node) {
                    Some(parent) => self.join(parent, phase, lock),
                    None => Ok(()),
                };
                if joined.is_ok() {
                    self.word(node).set(State {
                        closes: state.closes,
                        ..State::open(phase, 1, 1, false)
                    });
                }
                lock.get().busy[node] = false;
                return joined;
            }
            if state.phase > phase || state.signallers == MAX_SIGNALLERS {
                return Err(Unusable);
            }
            let new = if state.phase == phase {
                State {
                    signallers: state.signallers + 1,
                    unarrived: state.unarrived + 1,
                    ..state
                }
            } else {
                State {
                    signallers: state.signallers + 1,
                    ahead: state.ahead || phase > state.phase + 1,
                    ..state
                }
            };
            if self.word(node).replace(state, new).is_err() {
                continue;
            }
            let early = &mut lock.get().early[node];
            for at in state.phase + 1..phase {
                *early.entry(at).or_insert(0) += 1;
            }
            return Ok(());
        }
    }

    /// Places a new signaller for `phase`, preferring `near` (the registering task's leaf), then
    /// the leaves after it, so children fill their parent's leaf first, as in the seed. When every
    /// leaf is full or past `phase`, the new signaller goes on `near` beyond `degree`.
    pub(crate) fn place(
        &self,
        near: usize,
        phase: u64,
        lock: &mut Lock<'_>,
    ) -> Result<usize, Unusable> {
        let capacity = if self.shape.tiers() == 1 {
            usize::MAX
        } else {
            self.shape.degree()
        };
        for leaf in self.shape.leaves_from(near) {
            if lock.get().members[leaf] < capacity && self.join(leaf, phase, lock).is_ok() {
                lock.get().members[leaf] += 1;
                return Ok(leaf);
            }
        }
        self.join(near, phase, lock)?;
        lock.get().members[near] += 1;
        Ok(near)
    }

    /// Forgets a registration placed on `leaf` (its signals were already withdrawn by `leave`).
    pub(crate) fn unplace(&self, leaf: usize, lock: &mut Lock<'_>) {
        lock.get().members[leaf] -= 1;
    }
}
