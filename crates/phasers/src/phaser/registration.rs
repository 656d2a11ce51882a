//! One task's registration on a phaser: its mode, its place in the tree, and its phase.

use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use super::cells::{Cells, Partial};
use super::core::{Core, OwedWakes};
use super::gather::Hint;
use super::progress::Progress;
use super::size_plan::SizePlan;
use super::word::{Seen, MAX_RUN_AHEAD, MAX_SIGNALLERS};
use super::{Mode, Phaser};
use crate::error::{Error, Result};
use crate::primitive::{Arc, Ordering};
use crate::wait::{
    watch_task, Deadline, Signal, SpinBudget, Stop, TaskWaiter, Waiter, WakerKey, Watch,
};

/// A task's membership of a [`Phaser`]: what it may do (its [`Mode`]) and which phase it is in.
///
/// A registration is `Send` and used by one thread at a time. Dropping it deregisters the task,
/// in any phase; the others keep synchronizing. Dropping the last signal-capable registration
/// completes its phase, then terminates the phaser (Java's last `arriveAndDeregister`); dropping
/// one on a terminated phaser has no effect. Dropping it while its thread panics breaks the
/// phaser instead, so the others get [`Error::Broken`] rather than results that silently miss the
/// task's part.
///
/// ```
/// use phasers::{Mode, Phaser};
///
/// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
/// std::thread::scope(|s| {
///     let mut worker = main.register(Mode::SigWait).unwrap();
///     s.spawn(move || {
///         for _ in 0..3 {
///             worker.next().unwrap();
///         }
///         // Dropping `worker` here deregisters it.
///     });
///     for phase in 0..3 {
///         assert_eq!(main.next().unwrap(), phase);
///     }
/// });
/// assert_eq!(phaser.phase(), 3);
/// # Ok::<(), phasers::Error>(())
/// ```
pub struct Registration {
    pub(super) phaser: Phaser,
    mode: Mode,
    id: usize,
    /// The leaf this registration signals on; `None` for wait-only registrations.
    leaf: Option<usize>,
    /// The next phase this registration will signal.
    signalled: u64,
    /// The next phase this registration will wait for.
    waited: u64,
    /// A signal-only registration may signal every phase before this one without reading the
    /// phaser's phase: it is [`MAX_RUN_AHEAD`] past the phase it last read (see `wait_for_room`).
    room_until: u64,
    /// The roster's copy of `signalled`, read by timed-out waiters to name who is missing.
    progress: Option<Progress>,
    /// Accumulator contributions sent since the last signal, one partial per accumulator.
    partials: Vec<Partial>,
    /// What the last signal found on the leaf: the guess for the next one.
    leaf_seen: Option<Seen>,
    /// `Some(p)`: this task saw phase `p - 1` released (or `p` is 0), so its leaf has completed
    /// every phase before `p`. Unknown for a new child until its first wait.
    released_through: Option<u64>,
    /// This task's copy of the phaser's accumulator list (see `Tree::each_accumulator`).
    view: Vec<Arc<Cells>>,
    /// The spin plan and the waiting rule, for the phaser size they were computed for.
    sized: Cell<SizePlan>,
    budget: SpinBudget,
}

impl Registration {
    /// Registers a new task on `core` in `mode`, entering phase `signalled` (and waiting next for
    /// `waited`), placed near `near`.
    pub(super) fn enroll(
        phaser: &Phaser,
        mode: Mode,
        signalled: u64,
        waited: u64,
        near: usize,
    ) -> Result<Registration> {
        let core: &Core = &phaser.core;
        let leaf = if mode.can_signal() {
            // Only a signal-capable registration registers signallers, and its phase is never
            // behind the phaser's (the phaser cannot complete a phase it has not signalled), so
            // the new signaller's leaf is within the window its word is read in (see `word.rs`).
            debug_assert!(core.phase() <= signalled.saturating_add(MAX_RUN_AHEAD));
            let mut lock = core.lock(&[]);
            let leaf = core.tree.place(near, signalled, &mut lock).map_err(|_| {
                Error::invalid(format!(
                    "no sub-phaser can take another signaller for phase {signalled}: the \
                     registering task's leaf already holds {MAX_SIGNALLERS} signallers; build the \
                     phaser with more tiers (PhaserBuilder::tiers) to hold more"
                ))
            })?;
            Some(leaf)
        } else {
            None
        };
        let mut roster = core
            .roster
            .lock()
            .expect("no thread panics holding the roster");
        let id = roster.next_id;
        roster.next_id += 1;
        let progress = mode.can_signal().then(|| {
            let registered = roster.signalled.len();
            let progress = roster.supply.take(signalled, registered);
            roster.signalled.insert(id, progress.clone());
            progress
        });
        drop(roster);
        let registrations = core.registrations.fetch_add(1, Ordering::Relaxed) + 1;
        let sized = SizePlan::new(core, registrations);
        Ok(Registration {
            phaser: phaser.clone(),
            mode,
            id,
            leaf,
            signalled,
            waited,
            room_until: 0,
            progress,
            partials: Vec::new(),
            leaf_seen: None,
            released_through: (signalled == 0).then_some(0),
            view: Vec::new(),
            sized: Cell::new(sized),
            budget: SpinBudget::new(sized.plan),
        })
    }

    /// This registration's mode.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (_phaser, creator) = Phaser::new(Mode::SigWait)?;
    /// assert_eq!(creator.register(Mode::Sig)?.mode(), Mode::Sig);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// An id unique within the phaser, in registration order (the creator is 0). Timeouts name
    /// missing registrations by it.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (_phaser, creator) = Phaser::new(Mode::SigWait)?;
    /// let children = creator.register_many(Mode::SigWait, 2)?;
    /// assert_eq!(creator.id(), 0);
    /// assert_eq!((children[0].id(), children[1].id()), (1, 2));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn id(&self) -> usize {
        self.id
    }

    /// The phaser this registration belongs to.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (_phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// creator.next()?;
    /// assert_eq!(creator.phaser().phase(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn phaser(&self) -> &Phaser {
        &self.phaser
    }

    /// The phase this task is in: the next it will signal or, for a wait-only registration, the
    /// next it will wait for.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (_phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// assert_eq!(creator.phase(), 0);
    /// creator.signal()?;
    /// assert_eq!(creator.phase(), 1); // signalled phase 0, not yet waited for it
    /// creator.wait()?;
    /// assert_eq!(creator.phase(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn phase(&self) -> u64 {
        if self.mode.can_signal() {
            self.signalled
        } else {
            self.waited
        }
    }

    /// The next phase this registration will wait for.
    pub(super) fn waited(&self) -> u64 {
        self.waited
    }

    /// Registers a child task with `mode`, which must be no stronger than this registration's
    /// (HJ's `async phased`). The child starts in this task's phase: if this task has not yet
    /// signalled phase `p`, phase `p` also waits for the child.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// let child = creator.register(Mode::Sig)?;
    /// assert_eq!((child.phase(), phaser.registered()), (0, 2));
    /// creator.signal()?;
    /// let late = creator.register(Mode::Wait)?; // after the signal: enters phase 1
    /// assert_eq!(late.phase(), 1);
    /// let err = late.register(Mode::SigWait).unwrap_err(); // stronger than Wait
    /// assert!(matches!(err, Error::Capability { .. }));
    /// # drop(child);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Capability`] when `mode` is stronger than this registration's;
    /// [`Error::Terminated`] (naming this registration's phase) once the phaser is terminated, even
    /// for a registration whose phase lags behind the termination; [`Error::Broken`] when a lost
    /// registration keeps this registration's phase from completing.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// let lagging = creator.register(Mode::Wait)?; // it never waits: stays in phase 0
    /// creator.next()?;
    /// drop(creator); // the last signaller, in phase 1: the phaser ends after it
    /// assert!(phaser.is_terminated());
    /// assert_eq!(lagging.register(Mode::Wait).unwrap_err(), Error::Terminated { phase: 0 });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn register(&self, mode: Mode) -> Result<Registration> {
        self.admit(mode)?;
        self.enroll_child(mode)
    }

    /// The checks before registering children with `mode`: the capability, and a phaser that can
    /// still advance.
    fn admit(&self, mode: Mode) -> Result<()> {
        if !self.mode.includes(mode) {
            return Err(Error::Capability {
                operation: "registering a child",
                needed: "a mode at least as strong as the child's",
                mode: self.mode,
                hint: "register the child with this registration's mode or a weaker one \
                       (SigWaitSingle > SigWait > Sig, Wait)",
            });
        }
        let core = &self.phaser.core;
        // A terminated phaser takes nobody, whatever this registration's phase: a wait-only one
        // may lag behind the phase the termination took effect at, and its children could never
        // see a phase complete anyway. A phaser broken by a lost registration still completes the
        // phases before the loss, so a registration lagging behind it may register for those.
        if core.is_terminated() || core.broken.is_broken_for(self.phase()) {
            return Err(core.stopped(self.phase()));
        }
        Ok(())
    }

    /// Registers one child with `mode`, once [`admit`](Self::admit) allowed it.
    fn enroll_child(&self, mode: Mode) -> Result<Registration> {
        let core = &self.phaser.core;
        // The child enters this task's phase: after a signal, that is the next one, whether or
        // not this task has waited yet.
        let phase = self.phase();
        let (signalled, waited) = (phase, phase);
        let near = self.leaf.unwrap_or(core.tree.shape().first_leaf());
        Registration::enroll(&self.phaser, mode, signalled, waited, near)
    }

    /// Registers `count` child tasks with `mode` at once (`java.util.concurrent.Phaser`'s
    /// `bulkRegister`): the same as `count` calls of [`register`](Self::register), returned in
    /// registration order (increasing [`id`](Self::id)s). They all start in this task's phase: when
    /// this registration can signal and has not signalled its phase, that phase cannot complete
    /// while they are being registered, so it waits for every one of them. Either all are
    /// registered or none: on an error the ones already made are dropped (deregistered) again.
    /// `count = 0` registers nobody, after the same checks.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let workers = main.register_many(Mode::SigWait, 3)?;
    /// assert_eq!(workers.len(), 3);
    /// assert_eq!(phaser.registered(), 4);
    /// std::thread::scope(|s| {
    ///     for mut worker in workers {
    ///         s.spawn(move || assert_eq!(worker.next().unwrap(), 0));
    ///     }
    ///     assert_eq!(main.next().unwrap(), 0);
    /// });
    /// assert_eq!(phaser.registered(), 1); // the workers were dropped
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`register`](Self::register); and [`Error::InvalidArgument`] when `count` registrations
    /// cannot be held in memory, or a sub-phaser cannot take that many more signallers.
    pub fn register_many(&self, mode: Mode, count: usize) -> Result<Vec<Registration>> {
        self.admit(mode)?;
        let mut children = Vec::new();
        children.try_reserve_exact(count).map_err(|_| {
            Error::invalid(format!(
                "register_many({mode}, {count}): cannot allocate room for {count} registrations; \
                 register fewer tasks"
            ))
        })?;
        for _ in 0..count {
            // On an error the children made so far are dropped with the vector: they deregister.
            children.push(self.enroll_child(mode)?);
        }
        Ok(children)
    }

    /// Advances to the next phase: signals, then waits for the phase to complete. Returns the
    /// phase completed.
    ///
    /// A signal-only registration signals and returns at once; a wait-only one only waits. After
    /// [`signal`](Self::signal), `next` waits for the phase already signalled.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut producer = main.register(Mode::Sig)?;
    /// assert_eq!(producer.next()?, 0); // signal-only: returns at once
    /// assert_eq!(main.next()?, 0); // the last signal of phase 0, then the wait
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when another registration was lost in a panic, [`Error::Terminated`] after
    /// [`Phaser::force_terminate`] or once no registration can signal any more.
    // `next` is the phaser operation's name in Habanero-Java and in the seed; a registration is
    // not an iterator.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<u64> {
        self.next_until(Deadline::Never)
    }

    /// [`next`](Self::next), giving up after `timeout` with [`Error::Timeout`], which names the
    /// registrations that have not signalled. The signal stays in place: calling again waits for
    /// the same phase. A timeout too long for the clock to hold its end (such as
    /// [`Duration::MAX`]) never expires.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (_phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// let mut late = creator.register(Mode::SigWait)?;
    /// let err = creator.next_timeout(Duration::from_millis(1)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, .. } if *missing == [late.id()]));
    /// late.signal()?;
    /// assert_eq!(creator.next_timeout(Duration::MAX)?, 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<u64> {
        self.next_until(Deadline::after(timeout))
    }

    /// [`next`](Self::next), giving up at `deadline` with [`Error::Timeout`], like
    /// [`next_timeout`](Self::next_timeout): the signal stays in place, and calling again waits
    /// for the same phase. A deadline already past still signals, and returns at once if that
    /// completed the phase.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (_phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// let mut late = creator.register(Mode::SigWait)?;
    /// let soon = Instant::now() + Duration::from_millis(1);
    /// let err = creator.next_deadline(soon).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, .. } if *missing == [late.id()]));
    /// late.signal()?;
    /// assert_eq!(creator.next_deadline(Instant::now())?, 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`next_timeout`](Self::next_timeout).
    pub fn next_deadline(&mut self, deadline: Instant) -> Result<u64> {
        self.next_until(Deadline::At(deadline))
    }

    fn next_until(&mut self, deadline: Deadline) -> Result<u64> {
        if !self.mode.can_wait() {
            let phase = self.signalled;
            self.signal()?;
            return Ok(phase);
        }
        self.wait_until(deadline)
    }

    /// Signals the current phase without waiting: the first half of a split-phase (fuzzy)
    /// barrier. Do local work, then call [`wait`](Self::wait). Contributions sent to accumulators
    /// after this signal count for the next phase.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// main.signal()?; // the only signaller: phase 0 completes
    /// assert_eq!(phaser.phase(), 1);
    /// // ... local work that does not need the others ...
    /// assert_eq!(main.wait()?, 0);
    /// let mut consumer = main.register(Mode::Wait)?;
    /// assert!(matches!(consumer.signal(), Err(Error::Capability { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// A wait-capable registration signals once per phase: a second `signal` before its
    /// [`wait`](Self::wait) is refused (Java would count it as another party's `arrive`). A
    /// [`Mode::Sig`] registration never waits, so each `signal` is the next phase's, running ahead:
    /// up to 2^27 (134,217,728) phases ahead of the phaser, where its next `signal` waits until
    /// the others catch up (the early signals it made meanwhile take memory, a map entry each).
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let _other = main.register(Mode::SigWait)?;
    /// let mut producer = main.register(Mode::Sig)?;
    /// main.signal()?;
    /// assert!(matches!(main.signal(), Err(Error::InvalidArgument { .. })));
    /// assert_eq!(main.phase(), 1); // still the one signal of phase 0
    /// producer.signal()?;
    /// producer.signal()?; // signal-only: phase 1's, ahead of the phaser
    /// assert_eq!(producer.phase(), 2);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Capability`] for a wait-only registration; [`Error::InvalidArgument`] for a
    /// wait-capable one that signalled and has not waited yet; [`Error::Broken`] or
    /// [`Error::Terminated`] when the phaser cannot advance.
    pub fn signal(&mut self) -> Result<()> {
        if !self.mode.can_signal() {
            return Err(Error::Capability {
                operation: "signal",
                needed: "a signal-capable mode",
                mode: self.mode,
                hint: "a wait-only registration never holds a phase back; call wait() instead",
            });
        }
        // A wait-capable registration between its signal and its wait would otherwise signal the
        // next phase too: Java's second `arrive()` of one party, which corrupts the count there.
        // Here it is one comparison of this registration's own fields; a signal-only registration
        // never waits, so it runs ahead by design.
        if self.mode.can_wait() && self.signalled != self.waited {
            return Err(Error::invalid(format!(
                "signal() twice in phase {}: this registration signalled it and has not waited for it \
                 yet; call wait() (or next()) first, or register a Mode::Sig registration to run \
                 phases ahead",
                self.waited
            )));
        }
        let core = &self.phaser.core;
        if core.broken.is_broken_for(self.signalled) {
            return Err(core.stopped(self.signalled));
        }
        if !self.mode.can_wait() {
            self.wait_for_room()?;
        }
        self.signal_unchecked();
        Ok(())
    }

    fn signal_unchecked(&mut self) {
        let core = &self.phaser.core;
        let phase = self.signalled;
        for partial in self
            .partials
            .iter()
            .filter(|p| p.sent && p.cells.is_reproducible())
        {
            partial.cells.collect(phase, partial.value);
        }
        if let Some(progress) = &self.progress {
            progress.cell().store(phase + 1, Ordering::Relaxed);
        }
        let leaf = self
            .leaf
            .expect("signal-capable registrations sit on a leaf");
        let settled = self.released_through == Some(phase);
        let hint = Hint {
            guess: self.leaf_seen,
            settled,
        };
        core.tree.refresh_view(&mut self.view);
        let arrival = core.arrive(leaf, phase, &self.partials, hint, &self.view, self.id);
        self.leaf_seen = arrival.seen;
        if arrival.released {
            self.released_through = Some(phase + 1);
        }
        for partial in &mut self.partials {
            partial.sent = false;
            partial.value = partial.cells.identity();
        }
        self.signalled = phase + 1;
        // This signal completed a phase whose advance action panicked: the phaser is broken, and
        // the panic goes on in this task once its state records the signal (so that its drop,
        // during the unwinding or later, sees where it is).
        if let Some(payload) = arrival.panicked {
            resume_unwind(payload);
        }
    }

    /// Holds a signal-only registration back while it is [`MAX_RUN_AHEAD`] phases ahead of the
    /// phaser, so that its leaf stays within the window its word is read in (see `word.rs`).
    /// The phaser's phase only grows, so a phase read once leaves room for `MAX_RUN_AHEAD`
    /// signals past it: the phaser's lines are read once per 2^27 signals, not on every one.
    fn wait_for_room(&mut self) -> Result<()> {
        if self.signalled < self.room_until {
            return Ok(());
        }
        let core = &self.phaser.core;
        let far_ahead = |now: u64| self.signalled >= now.saturating_add(MAX_RUN_AHEAD);
        let mut now = core.phase();
        if far_ahead(now) {
            let sized = self.sized();
            let behind = self.signalled - MAX_RUN_AHEAD;
            self.wait_until_probe(&sized, &core.release, behind, Deadline::Never, || {
                let now = core.phase();
                (!far_ahead(now)).then_some(now)
            })?;
            now = core.phase();
        }
        self.room_until = now.saturating_add(MAX_RUN_AHEAD);
        Ok(())
    }

    /// Waits for the phase this task is in to complete, signalling it first if it has not, and
    /// returns the phase completed.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut consumer = main.register(Mode::Wait)?;
    /// std::thread::scope(|s| {
    ///     s.spawn(move || assert_eq!(consumer.wait().unwrap(), 0));
    ///     assert_eq!(main.wait().unwrap(), 0); // signals phase 0 first: it had not
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Capability`] for a signal-only registration; [`Error::Broken`] or
    /// [`Error::Terminated`] when the phaser cannot advance.
    pub fn wait(&mut self) -> Result<u64> {
        self.wait_until(Deadline::Never)
    }

    /// [`wait`](Self::wait), giving up after `timeout` with [`Error::Timeout`]; waiting again
    /// waits for the same phase. A timeout too long for the clock to hold its end (such as
    /// [`Duration::MAX`]) never expires.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Mode, Phaser};
    ///
    /// let (_phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// creator.signal()?;
    /// assert_eq!(creator.wait_timeout(Duration::MAX)?, 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<u64> {
        self.wait_until(Deadline::after(timeout))
    }

    /// [`wait`](Self::wait), giving up at `deadline` with [`Error::Timeout`]; waiting again waits
    /// for the same phase.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (_phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// let mut late = creator.register(Mode::SigWait)?;
    /// creator.signal()?;
    /// let err = creator.wait_deadline(Instant::now() + Duration::from_millis(1)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, .. }));
    /// late.signal()?;
    /// assert_eq!(creator.wait_deadline(Instant::now())?, 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait_timeout`](Self::wait_timeout).
    pub fn wait_deadline(&mut self, deadline: Instant) -> Result<u64> {
        self.wait_until(Deadline::At(deadline))
    }

    fn wait_until(&mut self, deadline: Deadline) -> Result<u64> {
        self.check_can_wait()?;
        let (phase, unreleased) = self.begin_wait()?;
        if unreleased {
            self.wait_for_release(phase, deadline)?;
        }
        self.end_wait(phase);
        Ok(phase)
    }

    /// The part of a wait before the waiting, for a wait-capable registration: signals the phase
    /// it waits for if it has not. Returns that phase, and whether it may still be unreleased
    /// (`false` when this registration's own signal released it, or saw it released).
    pub(super) fn begin_wait(&mut self) -> Result<(u64, bool)> {
        debug_assert!(self.mode.can_wait());
        let phase = self.waited;
        if self.mode.can_signal() && self.signalled == phase {
            self.signal()?;
        }
        // The signal that completed the phase released it: nothing to wait for.
        Ok((phase, self.released_through <= Some(phase)))
    }

    /// Records that `phase`, the one [`begin_wait`](Self::begin_wait) returned, was released.
    pub(super) fn end_wait(&mut self, phase: u64) {
        self.waited = phase + 1;
        self.released_through = Some(phase + 1);
    }

    /// The check a wait-capable registration's wait makes before it waits: its mode can wait.
    pub(super) fn check_can_wait(&self) -> Result<()> {
        if self.mode.can_wait() {
            return Ok(());
        }
        Err(Error::Capability {
            operation: "wait",
            needed: "a wait-capable mode",
            mode: self.mode,
            hint: "a signal-only registration never waits; call signal() or next()",
        })
    }

    /// One poll of an async task's wait for `phase` to be released (see `wait::TaskWaiter`),
    /// with the task's waker stored on the release word under `key`. The probe reads the release
    /// word, also where the blocking wait spins on the root (see
    /// [`wait_for_release`](Self::wait_for_release)): a task is woken only by the release word's
    /// publication, so seeing the root complete earlier gains it nothing, while the root's line
    /// changes with every arrival: a poll probes twice, and with 10,000 tasks on 2 workers each
    /// probe of the root took its line from the other worker's arrivals. A poll never spins, so
    /// the spin plan plays no part.
    pub(super) fn poll_release(
        &self,
        phase: u64,
        key: &mut Option<WakerKey>,
        waker: &Waker,
    ) -> Poll<Result<()>> {
        self.poll_past(&self.phaser.core.release, phase, key, waker)
    }

    /// One poll of a task's wait until `word` (the release or the gather word) is past `phase`,
    /// with its waker stored on `word` under `key`.
    #[inline]
    fn poll_past(
        &self,
        word: &Signal,
        phase: u64,
        key: &mut Option<WakerKey>,
        waker: &Waker,
    ) -> Poll<Result<()>> {
        let core = &self.phaser.core;
        let probe = || (word.load() > phase).then_some(phase + 1);
        let polled = TaskWaiter::new(&core.broken, phase)
            .poll_probe(word, key, waker, probe)
            .map(|outcome| outcome.map(|_| ()).map_err(|_| core.stopped(phase)));
        if polled.is_pending() {
            // The task waits: the stall watchdog watches the phase for it.
            watch_task(core, phase);
        }
        polled
    }

    /// Forgets the waker stored by [`poll_release`](Self::poll_release) under `key`: the task
    /// no longer waits.
    pub(super) fn forget_waker(&self, key: WakerKey) {
        self.phaser.core.release.remove_waker(key);
    }

    /// Waits until `phase` is released. Where the phaser is flat, the library's barrier would
    /// be the counting one at its size, and the root's last arrival releases the phase in one
    /// change (no advance action or reproducible accumulator to run in between; a plain
    /// accumulator's results sit in the root word's line, see `root_line.rs`), the wait spins on
    /// the root word, as the counting barrier's waiters spin on its counter: the last arrival's
    /// compare-and-swap releases them, and the release word it publishes next is left to
    /// sleepers and observers, a line the waiters no longer take from the completer on every
    /// phase. Otherwise the waiters spin on the release word, which changes once per phase,
    /// where the root changes once per arrival, and twice more as it completes with something
    /// to run.
    fn wait_for_release(&self, phase: u64, deadline: Deadline) -> Result<()> {
        let core = &self.phaser.core;
        let sized = self.sized();
        // Only a signaller spins on the root: its phase is at most one behind the root's, where a
        // wait-only registration may lag any number of phases, further than the root's word can
        // be read from (see `word.rs`); it waits on the release word, which holds the whole phase.
        if sized.spins_on_root && self.mode.can_signal() && core.tree.releases_at_once() {
            self.wait_until_probe(&sized, &core.release, phase, deadline, || {
                core.is_released(phase).then_some(phase + 1)
            })
        } else {
            self.wait_on(&sized, &core.release, phase, deadline)
        }
    }

    /// The spin plan for the phaser's current size, and whether waits spin on the root word
    /// (see [`wait_for_release`](Self::wait_for_release)), recomputed only when the size changed.
    fn sized(&self) -> SizePlan {
        let core = &self.phaser.core;
        let registrations = core.registrations.load(Ordering::Relaxed);
        let sized = self.sized.get();
        if sized.registrations == registrations {
            return sized;
        }
        let sized = SizePlan::new(core, registrations);
        self.sized.set(sized);
        sized
    }

    /// Waits until `signal` (the release or the gather word) passes `phase`, spinning as `sized`
    /// plans.
    fn wait_on(
        &self,
        sized: &SizePlan,
        signal: &Signal,
        phase: u64,
        deadline: Deadline,
    ) -> Result<()> {
        self.wait_until_probe(sized, signal, phase, deadline, || {
            let value = signal.load();
            (value > phase).then_some(value)
        })
    }

    /// Waits for `phase` until `probe` returns a value, parking on `signal` (see
    /// [`Waiter::until_probe`]).
    #[inline]
    fn wait_until_probe(
        &self,
        sized: &SizePlan,
        signal: &Signal,
        phase: u64,
        deadline: Deadline,
        probe: impl Fn() -> Option<u64>,
    ) -> Result<()> {
        let core = &self.phaser.core;
        let waiter = Waiter::new(
            &sized.plan,
            &self.budget,
            deadline,
            &core.broken,
            phase,
            Some(Watch::arrivals(&**core)),
        );
        match waiter.until_probe(signal, probe) {
            Ok(_) => Ok(()),
            Err(Stop::Broken) => Err(core.stopped(phase)),
            Err(Stop::TimedOut) => Err(core.timed_out(phase)),
        }
    }

    /// Advances like [`next`](Self::next), and runs `action` exactly once for this phase: after
    /// every signal of the phase and before any registration proceeds past it. One of the tasks
    /// calling `next_single` in the phase runs it and gets `Some(result)`; the others get `None`.
    /// Accumulator results of the phase are already available inside the action.
    ///
    /// If the action panics, the phaser breaks (the others get [`Error::Broken`]) and the panic
    /// continues in the task that ran it.
    ///
    /// ```
    /// use phasers::{Accumulator, Mode, Op, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWaitSingle)?;
    /// let sum = Accumulator::<i64>::new(&phaser, Op::Sum)?;
    /// let totals = std::sync::Mutex::new(Vec::new());
    /// std::thread::scope(|s| {
    ///     for task in 1..=3i64 {
    ///         let mut reg = main.register(Mode::SigWaitSingle).unwrap();
    ///         let (sum, totals) = (&sum, &totals);
    ///         s.spawn(move || {
    ///             sum.send(&mut reg, task).unwrap();
    ///             reg.next_single(|| totals.lock().unwrap().push(sum.result())).unwrap();
    ///         });
    ///     }
    ///     main.next_single(|| totals.lock().unwrap().push(sum.result())).unwrap();
    /// });
    /// assert_eq!(*totals.lock().unwrap(), vec![6]); // ran once, with the phase's sum
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Capability`] unless the mode is [`Mode::SigWaitSingle`]; [`Error::InvalidArgument`]
    /// between [`signal`](Self::signal) and [`wait`](Self::wait); [`Error::Broken`] or
    /// [`Error::Terminated`] when the phaser cannot advance.
    pub fn next_single<R>(&mut self, action: impl FnOnce() -> R) -> Result<Option<R>> {
        let (phase, runs) = self.begin_single()?;
        // Borrowed, not cloned: a clone is an RMW on the count every registration shares.
        let core = &self.phaser.core;
        // The runner waits for the phase to be gathered, the others for its release.
        let signal = if runs { &core.gathered } else { &core.release };
        self.wait_on(&self.sized(), signal, phase, Deadline::Never)?;
        if !runs {
            self.end_wait(phase);
            return Ok(None);
        }
        Ok(Some(self.run_single(phase, action)))
    }

    /// The part of [`next_single`](Self::next_single) before its wait: the checks, the claim of
    /// the phase's action, and the signal. Returns the phase, and whether this registration
    /// claimed the action (it then waits for the phase to be gathered, on `core.gathered`, and
    /// runs it; the others wait for the release). The claim comes before the signal, so the
    /// phase's completer sees it and hands the phase to the runner instead of releasing it.
    pub(super) fn begin_single(&mut self) -> Result<(u64, bool)> {
        if !self.mode.can_single() {
            return Err(Error::Capability {
                operation: "next_single",
                needed: "mode SigWaitSingle",
                mode: self.mode,
                hint: "register the task with Mode::SigWaitSingle, or use next()",
            });
        }
        if self.signalled != self.waited {
            return Err(Error::invalid(format!(
                "next_single in the middle of a split phase: phase {} was signalled but not \
                 waited for; call wait() first",
                self.waited
            )));
        }
        // Borrowed, not cloned, until the signal: a clone is an RMW on the count every
        // registration shares.
        let core = &self.phaser.core;
        let phase = self.signalled;
        if core.broken.is_broken_for(phase) {
            return Err(core.stopped(phase));
        }
        let runs = core.single_claim.fetch_max(phase + 1, Ordering::AcqRel) < phase + 1;
        self.signal_unchecked();
        Ok((phase, runs))
    }

    /// Runs the action of `phase`, which this registration claimed and which has been gathered,
    /// then releases the phase. If the action panics, the phaser breaks (see
    /// [`abandon_single`](Self::abandon_single)) and the panic continues here.
    pub(super) fn run_single<R>(&mut self, phase: u64, action: impl FnOnce() -> R) -> R {
        match catch_unwind(AssertUnwindSafe(action)) {
            Ok(result) => {
                self.phaser.core.release.publish_at_least(phase + 1);
                self.end_wait(phase);
                result
            }
            Err(payload) => {
                self.abandon_single(phase);
                resume_unwind(payload);
            }
        }
    }

    /// The action of `phase`, which this registration claimed, will never run (it panicked, or
    /// its future was dropped): breaks the phaser at `phase` in this registration's name, so that
    /// every wait for the phase reports [`Error::Broken`] instead of waiting for a release that
    /// only the action's runner could publish.
    pub(super) fn abandon_single(&self, phase: u64) {
        let core = &self.phaser.core;
        if core.broken.break_from(phase, self.id) {
            core.wake_all();
        }
    }

    /// One poll of the action runner's wait for `phase` to be gathered, with the task's waker
    /// stored on the gather word under `key`; as [`poll_release`](Self::poll_release) on the
    /// release word. The completer publishes the gather word (an RMW that wakes the stored
    /// wakers), and a break wakes them too (`Core::wake_all`).
    pub(super) fn poll_gathered(
        &self,
        phase: u64,
        key: &mut Option<WakerKey>,
        waker: &Waker,
    ) -> Poll<Result<()>> {
        self.poll_past(&self.phaser.core.gathered, phase, key, waker)
    }

    /// Forgets the waker stored by [`poll_gathered`](Self::poll_gathered) under `key`.
    pub(super) fn forget_gathered_waker(&self, key: WakerKey) {
        self.phaser.core.gathered.remove_waker(key);
    }

    /// Adds `value` to this task's partial for `cells` (combined with `combine`).
    pub(crate) fn contribute(&mut self, cells: &Arc<Cells>, value: u64) -> Result<()> {
        if !self.mode.can_signal() {
            return Err(Error::Capability {
                operation: "sending to an accumulator",
                needed: "a signal-capable mode",
                mode: self.mode,
                hint: "a wait-only registration does not hold phases back, so its phase may \
                       already be complete; send from a Sig, SigWait or SigWaitSingle registration",
            });
        }
        match self
            .partials
            .iter_mut()
            .find(|p| Arc::ptr_eq(&p.cells, cells))
        {
            Some(partial) => {
                partial.value = cells.combine(partial.value, value);
                partial.sent = true;
            }
            None => self.partials.push(Partial {
                cells: cells.clone(),
                value,
                sent: true,
            }),
        }
        Ok(())
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let core = self.phaser.core.clone();
        core.registrations.fetch_sub(1, Ordering::Relaxed);
        if std::thread::panicking() {
            if core.broken.break_from(self.phase(), self.id) {
                core.wake_all();
            }
            return;
        }
        // On a terminated phaser a drop has no effect, as Java's `arriveAndDeregister` there: no
        // phase it could take part in can complete any more (the termination took effect at a
        // phase every signaller had reached), so it stays counted in `registered()` and
        // `arrived()`, which keep what they said at the termination.
        if core.is_terminated() {
            return;
        }
        if let Some(leaf) = self.leaf {
            core.roster
                .lock()
                .expect("no thread panics holding the roster")
                .signalled
                .remove(&self.id);
            let phase = self.signalled;
            for partial in self
                .partials
                .iter()
                .filter(|p| p.sent && p.cells.is_reproducible())
            {
                partial.cells.collect(phase, partial.value);
            }
            core.tree.refresh_view(&mut self.view);
            let view = &self.view;
            let mut lock = core.lock(view);
            let panicked = Cell::new(None);
            let owed = OwedWakes::default();
            let finish = |phase, step| {
                core.finish(phase, step, view, self.id, &panicked, &owed);
            };
            core.tree.leave(
                leaf,
                phase,
                super::gather::Source::Task(&self.partials),
                &mut lock,
                &finish,
            );
            core.tree.unplace(leaf, &mut lock);
            drop(lock);
            // A leave runs in no task's poll: its wakes are made at once.
            core.pay(&owed, None);
            // This drop completed a phase whose advance action panicked: the phaser is broken and
            // the tree consistent, so the panic goes on here, as it would have in a signal.
            if let Some(payload) = panicked.into_inner() {
                resume_unwind(payload);
            }
        }
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("id", &self.id)
            .field("mode", &self.mode)
            .field("phase", &self.phase())
            .field("leaf", &self.leaf)
            .finish()
    }
}
