//! Phasers: barriers whose membership changes while they run, with signal-only and wait-only
//! members, split phases, a once-per-phase action, and a tree of sub-phasers for scale
//! (seed 000, Habanero-Java's phasers).
//!
//! A [`Phaser`] is created together with its first [`Registration`]. Each registration is one
//! task's membership, with a [`Mode`]; a registration registers children with its mode or a
//! weaker one, and dropping a registration deregisters it.
//!
//! - [`Registration::next`] signals and waits: a barrier among the signal-and-wait tasks.
//! - [`Registration::signal`] then [`Registration::wait`] split the barrier (a fuzzy barrier).
//! - [`Registration::next_single`] runs an action once per phase, before anyone proceeds.
//! - [`next_all`] advances several phasers together, like HJ's `next` over every registration of a
//!   task.
//! - A phase completes when every registered signal-capable registration has signalled it.
//!   Signal-only registrations never wait for other tasks (they may run phases ahead);
//!   wait-only registrations never hold a phase back.
//! - [`Phaser::force_terminate`] ends the phaser: every wait returns
//!   [`Error::Terminated`](crate::Error::Terminated). The phaser also terminates when its last
//!   signal-capable registration is dropped, since no later phase could ever complete: as Java's
//!   last `arriveAndDeregister`, that drop completes the phase it was in (its waiters return `Ok`,
//!   the advance action sees 0 registrations), and the phaser ends after it.
//! - Timeouts ([`Registration::next_timeout`], [`Registration::next_deadline`]) name the
//!   registrations that have not signalled, and leave the signal in place.
//! - [`Phaser::await_phase`] waits for a phase without a registration
//!   ([`Phaser::await_phase_async`] in an async task), and [`Phaser::arrived`] and
//!   [`Phaser::unarrived`] count the signals of the phase in progress.
//! - [`PhaserBuilder::on_advance`] runs an action as each phase completes, which may end the
//!   phaser.
//! - Phases are `u64` and start at 0; the number of registrations is bounded only by memory
//!   (about two billion per sub-phaser).
//!
//! # Hierarchy
//!
//! [`PhaserBuilder::tiers`] and [`PhaserBuilder::degree`] shape a tree of sub-phasers: `tiers`
//! levels, each sub-phaser with up to `degree` children; registrations sit on the leaves, up to
//! `degree` each, and a child goes on its parent's leaf until that leaf is full, as in the seed.
//! The last signaller of a sub-phaser signals its parent, so gathers run in parallel up the tree
//! and no task polls all the others. The release is one word every waiter watches, and waking the
//! sleepers among them is one system call, never one per waiter. `tiers = 1` is a flat phaser.
//! Without a choice the shape follows [`PhaserBuilder::expected_parties`]: flat up to 2 tasks,
//! else two tiers of degree `parties / 2` clamped to 2..=16 (the seed's Table I; its best degree,
//! 16, beat the hardware's natural 8). Measure yours with `phasers bench phaser --figure tree`.
//!
//! ```
//! use phasers::{Mode, Phaser};
//!
//! let (phaser, mut main) = Phaser::builder().tiers(2).degree(2).build()?;
//! std::thread::scope(|s| {
//!     for _ in 0..3 {
//!         let mut task = main.register(Mode::SigWait).unwrap();
//!         s.spawn(move || for _ in 0..100 { task.next().unwrap(); });
//!     }
//!     for _ in 0..100 {
//!         main.next().unwrap();
//!     }
//! });
//! assert_eq!(phaser.phase(), 100);
//! # Ok::<(), phasers::Error>(())
//! ```
//!
//! # From `java.util.concurrent.Phaser`
//!
//! Java's phaser counts anonymous parties; here each party is a [`Registration`] value with a
//! [`Mode`], so the operations that act for a party are methods of its registration, and the ones
//! that only observe are methods of the [`Phaser`]. Every public method of Java's class:
//!
//! | `java.util.concurrent.Phaser` | `phasers` |
//! |---|---|
//! | `Phaser()`, `Phaser(parties)` | [`Phaser::new`] and [`Phaser::builder`] create the phaser with its first party, the creator: `new Phaser(1)`. There is no phaser of no party (the one that would call `onAdvance(p, 0)` is the last leave, below). Java's `new Phaser()` then `register()` by each task, with the registering thread's own party dropped once the tasks are in, is the creator registering the tasks, then dropped: `let (phaser, creator) = Phaser::new(Mode::SigWait)?; let tasks = creator.register_many(Mode::SigWait, n)?; drop(creator);`. |
//! | `register()` | [`Registration::register`]: an existing registration registers the new party (with its mode or a weaker one), which starts in its phase. There is no anonymous registration: a party is a value someone must hold. **Unlike Java**, a party registered by a registration that has already signalled phase `p` starts in `p + 1` (phase `p` does not wait for it): register before [`signal`](Registration::signal) for the new party to take part in `p`. A terminated phaser takes no registration: [`Error::Terminated`](crate::Error::Terminated), from any registration. |
//! | `bulkRegister(n)` | [`Registration::register_many`]`(mode, n)` |
//! | `arrive()` | [`Registration::signal`] (it returns `()`; the phase is [`Registration::phase`] before the call), or [`next`](Registration::next) on a [`Mode::Sig`] registration, which never blocks. A second `signal` of a wait-capable registration before its [`wait`](Registration::wait) is refused with [`Error::InvalidArgument`](crate::Error::InvalidArgument), where Java would count a second party; a [`Mode::Sig`] registration signals phase after phase without waiting. |
//! | `arriveAndDeregister()` | dropping the [`Registration`]: it leaves in any phase, counted as arrived at the phase in progress. The last signal-capable registration's drop completes its phase (the advance action runs with 0 registered, and the phase's waits return `Ok`), then terminates the phaser, as in Java. On a terminated phaser a drop has no effect, as in Java: [`Phaser::registered`] and [`Phaser::arrived`] keep what they said. |
//! | `arriveAndAwaitAdvance()` | [`Registration::next`] (and [`next_timeout`](Registration::next_timeout), [`next_deadline`](Registration::next_deadline)); it returns the phase completed, where Java returns the next one. |
//! | `awaitAdvance(phase)` | [`Phaser::await_phase`], for anyone holding the phaser; a registration waits with [`Registration::wait`]. **Unlike Java**, `await_phase` does not move a registration on: after `signal()` and `await_phase(p)`, its [`next`](Registration::next) still ends the split phase `p` (at once) and signals nothing; a registration that signalled ends its split phase with [`wait`](Registration::wait). |
//! | `awaitAdvanceInterruptibly(phase)` | No interrupts: Rust threads cannot be interrupted. [`Phaser::await_phase_deadline`] bounds the wait, and [`Phaser::force_terminate`] from another thread ends every wait with [`Error::Terminated`](crate::Error::Terminated). |
//! | `awaitAdvanceInterruptibly(phase, timeout, unit)` | [`Phaser::await_phase_timeout`]: [`Error::Timeout`](crate::Error::Timeout) in place of `TimeoutException`, naming the registrations that have not signalled. |
//! | `getPhase()` | [`Phaser::phase`] (never negative: [`Phaser::is_terminated`] tells termination apart; the phase is Java's without its sign bit: the last leave's phase + 1, or the phase after an advance action's `Break`), and [`Registration::phase`] for one party's. |
//! | `getRegisteredParties()` | [`Phaser::registered`]: signal-capable registrations (wait-only ones hold no phase back); frozen at the termination, as in Java. |
//! | `getArrivedParties()` | [`Phaser::arrived`] |
//! | `getUnarrivedParties()` | [`Phaser::unarrived`] |
//! | `getParent()`, `getRoot()` | None: a tree of sub-phasers is one [`Phaser`] ([`PhaserBuilder::tiers`], [`PhaserBuilder::degree`]) whose sub-phasers are not handles of their own; registrations are placed on its leaves, and signals climb it without the caller choosing a parent. |
//! | `isTerminated()` | [`Phaser::is_terminated`] |
//! | `forceTermination()` | [`Phaser::force_terminate`] |
//! | `onAdvance(phase, parties)` | [`PhaserBuilder::on_advance`]: a closure instead of an overridden method, returning [`ControlFlow::Break`](std::ops::ControlFlow::Break) where Java returns `true`. |
//! | `toString()` | the [`Debug`](std::fmt::Debug) form of [`Phaser`]: phase, shape, registered and arrived. |
//!
//! [`WaitGroup`] is the common one-shot use of a phaser, where each task's part is to finish.

mod advance;
mod await_phase;
mod await_phase_future;
mod builder;
mod cells;
mod core;
mod counts;
mod gather;
mod next_all;
mod phase_future;
mod progress;
mod registration;
mod root_line;
mod root_release;
mod shape;
mod single_future;
mod size_plan;
mod wait_group;
mod wait_group_future;
pub(crate) mod word;

pub use crate::mode::Mode;
pub use await_phase_future::AwaitPhaseFuture;
pub use builder::PhaserBuilder;
pub(crate) use cells::{Cells, Combine};
pub use next_all::next_all;
pub use phase_future::PhaseFuture;
pub use registration::Registration;
pub use shape::MAX_SUB_PHASERS;
pub use single_future::SingleFuture;
pub use wait_group::WaitGroup;
pub use wait_group_future::WaitGroupFuture;

use std::time::Duration;

use crate::primitive::{Arc, Ordering};

/// A phaser: the shared object the registrations synchronize on. Cloning it is cheap (it is a
/// handle); it is needed to attach [`Accumulator`](crate::Accumulator)s, to force termination, and
/// to watch the phases without taking part ([`await_phase`](Self::await_phase),
/// [`arrived`](Self::arrived)).
///
/// ```
/// use phasers::{Mode, Phaser};
///
/// // A producer (signal-only) and a consumer (wait-only): the consumer waits for phase k to know
/// // that item k is ready; the producer never waits.
/// let (_phaser, creator) = Phaser::new(Mode::SigWait)?;
/// let mut producer = creator.register(Mode::Sig)?;
/// let mut consumer = creator.register(Mode::Wait)?;
/// drop(creator); // the creator takes no part in the phases
/// let items = std::sync::Mutex::new(Vec::new());
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         for k in 0..5 {
///             items.lock().unwrap().push(k * k);
///             producer.next().unwrap(); // signals phase k, never blocks
///         }
///     });
///     for k in 0..5 {
///         consumer.next().unwrap(); // phase k complete: item k is there
///         assert_eq!(items.lock().unwrap()[k], k * k);
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// # Stalls
///
/// A signal-capable registration that stops signalling without being dropped holds every later
/// phase back. Once the waiters have waited for the stall time ([`PhaserBuilder::stall_after`],
/// else `PHASERS_STALL`, else 10 s), one of them reports it, once per phase, naming the
/// [`id`](Registration::id)s of the registrations that have not signalled (see
/// [`StallReport`](crate::StallReport)), and they wait on. A wait-only consumer that is meant to
/// wait long for a producer's phases should have a longer stall time, or `Duration::MAX`.
#[derive(Clone)]
pub struct Phaser {
    pub(crate) core: Arc<core::Core>,
}

impl Phaser {
    /// The phase in progress: the number of phases completed so far.
    ///
    /// It goes on counting the phase completed last when the phaser terminates: after the last
    /// signal-capable registration's drop in phase `p`, which completes `p`, it is `p + 1`, the
    /// phase whose waits return [`Error::Terminated`](crate::Error::Terminated). Java's
    /// `getPhase()` says the same with its sign bit set.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// assert_eq!(phaser.phase(), 0);
    /// creator.next()?;
    /// creator.next()?;
    /// assert_eq!(phaser.phase(), 2);
    /// drop(creator); // the last signaller: completes phase 2, then ends the phaser
    /// assert_eq!(phaser.phase(), 3);
    /// assert_eq!(phaser.await_phase(2), Ok(3));
    /// assert_eq!(phaser.await_phase(3), Err(Error::Terminated { phase: 3 }));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn phase(&self) -> u64 {
        self.core.phase()
    }

    /// The number of tiers of sub-phasers (1: flat).
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (flat, _creator) = Phaser::new(Mode::SigWait)?;
    /// assert_eq!(flat.tiers(), 1);
    /// let (tree, _creator) = Phaser::builder().tiers(3).build()?;
    /// assert_eq!(tree.tiers(), 3);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn tiers(&self) -> usize {
        self.core.tree.shape().tiers()
    }

    /// The most children per sub-phaser, and registrations per leaf before placement moves on.
    ///
    /// ```
    /// use phasers::Phaser;
    ///
    /// let (phaser, _creator) = Phaser::builder().tiers(2).degree(4).build()?;
    /// assert_eq!(phaser.degree(), 4);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn degree(&self) -> usize {
        self.core.tree.shape().degree()
    }

    /// Registrations that can signal, and so hold phases back (also under Java's name,
    /// [`registered`](Self::registered)).
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, creator) = Phaser::new(Mode::SigWait)?;
    /// let _consumer = creator.register(Mode::Wait)?;
    /// assert_eq!(phaser.signallers(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn signallers(&self) -> usize {
        self.core.signallers()
    }

    /// How long a waiter waits before it reports a stall, after `stall_after` and
    /// `PHASERS_STALL`; `None` when stalls are not reported.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Phaser;
    ///
    /// let (phaser, _creator) = Phaser::builder().stall_after(Duration::from_secs(5)).build()?;
    /// assert_eq!(phaser.stall_after(), Some(Duration::from_secs(5)));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(&self) -> Option<Duration> {
        self.core.stall.after()
    }

    /// Ends the phaser: every wait, now or later, returns
    /// [`Error::Terminated`](crate::Error::Terminated), including waits already blocked, except
    /// waits for phases that completed before. A phase whose last signal comes afterwards is not
    /// released.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, mut creator) = Phaser::new(Mode::SigWait)?;
    /// let mut blocked = creator.register(Mode::SigWait)?;
    /// let waiting = std::thread::spawn(move || blocked.next());
    /// phaser.force_terminate(); // the creator never signals: this ends the wait
    /// assert_eq!(waiting.join().unwrap(), Err(Error::Terminated { phase: 0 }));
    /// assert_eq!(creator.next(), Err(Error::Terminated { phase: 0 }));
    /// assert_eq!(phaser.await_phase(0), Err(Error::Terminated { phase: 0 }));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn force_terminate(&self) {
        if self.core.broken.break_from(0, core::TERMINATED) {
            self.core.wake_all();
        }
    }

    /// Whether the phaser was terminated (by [`force_terminate`](Self::force_terminate), by a
    /// [`PhaserBuilder::on_advance`] action's `Break`, or because no registration can signal any
    /// more).
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, creator) = Phaser::new(Mode::SigWait)?;
    /// let mut consumer = creator.register(Mode::Wait)?;
    /// assert!(!phaser.is_terminated());
    /// drop(creator); // the last registration that could signal: its phase completes, then the end
    /// assert!(phaser.is_terminated());
    /// assert_eq!(consumer.wait(), Ok(0));
    /// assert!(consumer.wait().is_err());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_terminated(&self) -> bool {
        self.core.is_terminated()
    }

    /// Attaches a new accumulator combining with `combine` and returns its cells.
    pub(crate) fn attach(&self, combine: Combine, reproducible: bool) -> Arc<Cells> {
        let cells = Arc::new(self.core.tree.cells(combine, reproducible));
        self.core.tree.add_accumulator(cells.clone());
        cells
    }
}

impl std::fmt::Debug for Phaser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (registered, arrived) = self.counts();
        f.debug_struct("Phaser")
            .field("phase", &self.phase())
            .field("tiers", &self.tiers())
            .field("degree", &self.degree())
            .field(
                "registrations",
                &self.core.registrations.load(Ordering::Relaxed),
            )
            .field("registered", &registered)
            .field("arrived", &arrived)
            .field("terminated", &self.is_terminated())
            .finish()
    }
}
