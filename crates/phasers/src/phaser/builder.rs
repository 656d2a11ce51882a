//! How a phaser is made: [`PhaserBuilder`] and the constructors of [`Phaser`] that use it.
//!
//! They live above both the phaser handle (`mod.rs`) and [`Registration`], since building a
//! phaser hands out its creator's registration, and a registration holds its phaser: with the
//! constructors in `mod.rs`, `mod.rs` and `registration.rs` would import each other.

use std::ops::ControlFlow;
use std::time::Duration;

use super::advance::OnAdvance;
use super::core::Core;
use super::registration::Registration;
use super::shape::{default_shape, Shape};
use super::Phaser;
use crate::error::{Error, Result};
use crate::mode::Mode;
use crate::primitive::Arc;
use crate::wait::{WaitConfig, WaitPolicy};

impl Phaser {
    /// A flat phaser whose creator is registered with `mode`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for [`Mode::Wait`] (see [`PhaserBuilder::mode`]), or when
    /// `PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE` or `PHASERS_STALL` hold values that cannot
    /// be used.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, creator) = Phaser::new(Mode::SigWaitSingle)?;
    /// assert_eq!((phaser.tiers(), creator.mode(), creator.id()), (1, Mode::SigWaitSingle, 0));
    /// assert!(Phaser::new(Mode::Wait).is_err());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn new(mode: Mode) -> Result<(Phaser, Registration)> {
        Phaser::builder().mode(mode).build()
    }

    /// A builder for every other choice: tiers, degree, wait policy, stall time, advance action.
    ///
    /// ```
    /// use phasers::{Phaser, WaitPolicy};
    ///
    /// let (phaser, _creator) = Phaser::builder()
    ///     .tiers(2)
    ///     .degree(8)
    ///     .wait_policy(WaitPolicy::Park)
    ///     .build()?;
    /// assert_eq!((phaser.tiers(), phaser.degree()), (2, 8));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn builder() -> PhaserBuilder {
        PhaserBuilder::default()
    }
}

/// Builds a [`Phaser`]; see [`Phaser::builder`].
///
/// ```
/// use std::time::Duration;
/// use phasers::{Mode, Phaser, PhaserBuilder};
///
/// let builder: PhaserBuilder = Phaser::builder()
///     .mode(Mode::SigWaitSingle)
///     .expected_parties(32)
///     .stall_after(Duration::from_secs(60));
/// let (phaser, creator) = builder.build()?;
/// assert_eq!((phaser.tiers(), phaser.degree()), (2, 16));
/// assert_eq!(creator.mode(), Mode::SigWaitSingle);
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct PhaserBuilder {
    mode: Mode,
    tiers: Option<usize>,
    degree: Option<usize>,
    expected_parties: Option<usize>,
    wait: WaitConfig,
    on_advance: Option<OnAdvance>,
}

impl PhaserBuilder {
    /// The creator's mode (default [`Mode::SigWait`]).
    ///
    /// [`Mode::Wait`] is refused by [`build`](Self::build): a wait-only creator can register only
    /// wait-only children, so no registration could ever signal and every wait would block for
    /// ever. Create the phaser with a signal-capable mode and register the waiters from it.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let err = Phaser::builder().mode(Mode::Wait).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument { .. }));
    /// let (_phaser, creator) = Phaser::builder().mode(Mode::Sig).build()?;
    /// assert_eq!(creator.mode(), Mode::Sig);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Levels of sub-phasers: 1 is flat. See the [module docs](super) for the default.
    ///
    /// At least 1; with `degree`, the tree may have at most [`MAX_SUB_PHASERS`](super::MAX_SUB_PHASERS) sub-phasers, so
    /// at most 16 tiers (with degree 2). [`build`](Self::build) refuses anything else with
    /// [`Error::InvalidArgument`], at once, however large.
    ///
    /// ```
    /// use phasers::{Error, Phaser};
    ///
    /// let err = Phaser::builder().tiers(usize::MAX).degree(2).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument { .. }));
    /// let (phaser, _creator) = Phaser::builder().tiers(3).degree(4).build()?;
    /// assert_eq!((phaser.tiers(), phaser.degree()), (3, 4));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn tiers(mut self, tiers: usize) -> Self {
        self.tiers = Some(tiers);
        self
    }

    /// Children per sub-phaser, and registrations per leaf before placement moves to the next
    /// leaf: at least 2. With `tiers`, the tree may have at most [`MAX_SUB_PHASERS`](super::MAX_SUB_PHASERS) sub-phasers,
    /// so with 2 tiers the degree is at most 65,535; a flat phaser (1 tier) takes any degree.
    ///
    /// ```
    /// use phasers::{Error, Phaser};
    ///
    /// let err = Phaser::builder().tiers(2).degree(usize::MAX).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument { .. }));
    /// assert!(Phaser::builder().tiers(2).degree(1).build().is_err());
    /// let (phaser, _creator) = Phaser::builder().tiers(2).degree(16).build()?;
    /// assert_eq!(phaser.degree(), 16);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn degree(mut self, degree: usize) -> Self {
        self.degree = Some(degree);
        self
    }

    /// How many tasks you expect: picks the default tiers and degree (see the
    /// [module docs](super)); any count is accepted, since it only chooses a shape.
    ///
    /// ```
    /// use phasers::Phaser;
    ///
    /// let (phaser, _creator) = Phaser::builder().expected_parties(64).build()?;
    /// assert_eq!((phaser.tiers(), phaser.degree()), (2, 16));
    /// let (phaser, _creator) = Phaser::builder().expected_parties(usize::MAX).build()?;
    /// assert_eq!((phaser.tiers(), phaser.degree()), (2, 16));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn expected_parties(mut self, parties: usize) -> Self {
        self.expected_parties = Some(parties);
        self
    }

    /// How waiters spend their time (see [`crate::wait`]); `PHASERS_WAIT` overrides it.
    ///
    /// ```
    /// use phasers::{Mode, Phaser, WaitPolicy};
    ///
    /// let (_phaser, mut creator) = Phaser::builder().wait_policy(WaitPolicy::Yield).build()?;
    /// assert_eq!(creator.next()?, 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.wait.policy = policy;
        self
    }

    /// How long a waiter waits before it reports a stall (see [`crate::wait`]'s "Stalls"): once
    /// per phase, naming the registrations that have not signalled, then it waits on.
    /// `Duration::MAX` or `Duration::ZERO` turns the reports off. Without it, `PHASERS_STALL`
    /// decides, else 10 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Phaser;
    ///
    /// // A consumer may wait hours for its producer: no reports.
    /// let (phaser, _creator) = Phaser::builder().stall_after(Duration::MAX).build()?;
    /// assert_eq!(phaser.stall_after(), None);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(mut self, after: Duration) -> Self {
        self.wait.stall_after = Some(after);
        self
    }

    /// An action run once per phase as the phase completes, like overriding
    /// `java.util.concurrent.Phaser::onAdvance`. It gets the phase completing and the number of
    /// signal-capable registrations (what [`Phaser::registered`] returns then), and returns
    /// [`ControlFlow::Continue`] to go on or [`ControlFlow::Break`] to terminate the phaser.
    ///
    /// - **When and where.** After every signal of the phase and before anyone waiting for it
    ///   proceeds, on the thread whose signal or drop completed the phase (so possibly inside a
    ///   signal-only task's [`next`](Registration::next), or inside a `drop`). Accumulator results
    ///   of the phase are available; a [`next_single`](Registration::next_single) action of the
    ///   same phase runs after it. Actions run one at a time, in phase order, once per phase.
    /// - **`Break(())`.** The phase completes: its waits return `Ok` with it, as usual. Then the
    ///   phaser is terminated, as by [`Phaser::force_terminate`]: every wait for a later phase,
    ///   every signal and every registration returns
    ///   [`Error::Terminated`](crate::Error::Terminated), and no later phase completes or runs the
    ///   action, even if its signals were already in. Java folds both facts into the negative
    ///   number its waits then return; here a task learns that its phase completed (so its results
    ///   are good) and, at its next call, that the phaser ended.
    /// - **A panic.** The phase does not complete: the phaser breaks, so every wait for the phase
    ///   or a later one returns [`Error::Broken`](crate::Error::Broken) naming the registration
    ///   whose signal or drop ran the action, and the panic continues in that thread once the
    ///   phaser is consistent (out of its `signal`, `next`, or `drop`).
    /// - **Keep it short, and leave the phaser's registrations alone in it.** The phaser is in the
    ///   middle of completing the phase while the action runs, so a wait on this phaser for that
    ///   phase, or a signal, registration or drop of one of its registrations, would wait for the
    ///   action itself and never end. Reading the phaser ([`Phaser::phase`],
    ///   [`Phaser::registered`], ...) is fine, and so is [`Phaser::force_terminate`] (the phase is
    ///   then not released). Signals of the next phase that reach the phaser meanwhile (from tasks
    ///   running ahead) wait for the action, spinning and then yielding.
    ///
    /// - **The last leave.** The drop of the last signal-capable registration completes its phase
    ///   and calls the action with `registered == 0`, as Java calls `onAdvance(phase, 0)`; then the
    ///   phaser terminates whatever the action returns (Java's default returns `true` there; with
    ///   nobody left to signal, `Continue` could only hang later waits). Its accumulators keep the
    ///   results of the phase before: the last leave's phase ends the run rather than reducing.
    ///
    /// Builders cloned from this one share the action: phasers built from them call the same
    /// closure, one call at a time.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// // Like Java's onAdvance returning `phase >= 2 || parties == 0`: three phases, then the end.
    /// let (phaser, mut main) = Phaser::builder()
    ///     .on_advance(|phase, registered| {
    ///         if phase >= 2 || registered == 0 {
    ///             ControlFlow::Break(())
    ///         } else {
    ///             ControlFlow::Continue(())
    ///         }
    ///     })
    ///     .build()?;
    /// let mut worker = main.register(Mode::SigWait)?;
    /// std::thread::scope(|s| {
    ///     s.spawn(move || {
    ///         for phase in 0..3 {
    ///             assert_eq!(worker.next(), Ok(phase));
    ///         }
    ///         assert_eq!(worker.next(), Err(Error::Terminated { phase: 3 }));
    ///     });
    ///     for phase in 0..3 {
    ///         assert_eq!(main.next(), Ok(phase));
    ///     }
    ///     assert_eq!(main.next(), Err(Error::Terminated { phase: 3 }));
    /// });
    /// assert!(phaser.is_terminated());
    /// assert_eq!(phaser.phase(), 3);
    ///
    /// // The last leave: the action sees 0 registered, and the phaser ends even on `Continue`.
    /// let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let (phaser, mut main) = Phaser::builder()
    ///     .on_advance(move |phase, registered| {
    ///         log.lock().unwrap().push((phase, registered));
    ///         ControlFlow::Continue(())
    ///     })
    ///     .build()?;
    /// main.next()?;
    /// drop(main);
    /// assert_eq!(*seen.lock().unwrap(), [(0, 1), (1, 0)]);
    /// assert!(phaser.is_terminated());
    /// assert_eq!(phaser.phase(), 2);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn on_advance(
        mut self,
        action: impl FnMut(u64, usize) -> ControlFlow<()> + Send + 'static,
    ) -> Self {
        self.on_advance = Some(OnAdvance::new(Box::new(action)));
        self
    }

    /// Creates the phaser and registers its creator.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `tiers = 0`, `degree < 2`, a
    /// tree of more than [`MAX_SUB_PHASERS`](super::MAX_SUB_PHASERS) sub-phasers, a [`Mode::Wait`] creator, or
    /// `PHASERS_WAIT` / `PHASERS_SPIN` / `PHASERS_WAKE` / `PHASERS_STALL` values that cannot be
    /// used.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, creator) = Phaser::builder().mode(Mode::Sig).build()?;
    /// assert_eq!((phaser.phase(), creator.phase(), creator.mode()), (0, 0, Mode::Sig));
    /// let err = Phaser::builder().tiers(0).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument { .. }));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn build(self) -> Result<(Phaser, Registration)> {
        let (default_tiers, default_degree) = default_shape(self.expected_parties);
        let shape = Shape::new(
            self.tiers.unwrap_or(default_tiers),
            self.degree.unwrap_or(default_degree),
        )?;
        if !self.mode.can_signal() {
            return Err(Error::invalid(
                "a phaser's creator cannot be Mode::Wait: it could register only wait-only \
                 children, so no phase could ever complete; create the phaser with Mode::SigWait \
                 (or Mode::Sig) and register the waiters from the creator",
            ));
        }
        let tuning = self.wait.resolve()?;
        let phaser = Phaser {
            core: Arc::new(Core::new(shape, tuning, self.on_advance)),
        };
        let creator = Registration::enroll(&phaser, self.mode, 0, 0, shape.first_leaf())?;
        Ok((phaser, creator))
    }
}
