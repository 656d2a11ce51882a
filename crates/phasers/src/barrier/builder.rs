//! Building a barrier: parties, algorithm, completion action, wait policy; and the constructors
//! of [`Barrier`] that use the builder.

use std::time::Duration;

use super::algorithm::Params;
use super::{AnyAlgorithm, Barrier, BarrierAlgorithm};
use crate::error::{Error, Result};
use crate::wait::{WaitConfig, WaitPolicy};
use crate::Algorithm;

// The ways to build a barrier: beside the builder they use, so that `shared.rs` need not import
// this file.
impl Barrier {
    /// A ready barrier for `parties` participants with the default algorithm
    /// ([`Algorithm::Auto`]), wait policy and stall time, like `std::sync::Barrier::new`.
    ///
    /// As with `std::sync::Barrier`, 0 parties behaves as 1: every `wait` returns at once, as
    /// leader. Use [`Barrier::with_algorithm`] or [`Barrier::builder`] to choose the algorithm and
    /// get a typed error instead.
    ///
    /// # Panics
    ///
    /// When `parties` is above [`MAX_PARTIES`](super::MAX_PARTIES) (16,384), when
    /// `PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE` or `PHASERS_STALL` holds a value that does
    /// not parse, or when the tuning profile `Auto` reads (see [`Profile`](crate::Profile)) is
    /// invalid; the message says which and what to do. [`Barrier::with_algorithm`] returns these as
    /// [`Error::InvalidArgument`] instead.
    ///
    /// ```
    /// use phasers::Barrier;
    ///
    /// let barrier = Barrier::new(4);
    /// assert_eq!(barrier.parties(), 4);
    /// std::thread::scope(|s| {
    ///     for mut p in barrier.participants() {
    ///         s.spawn(move || for _ in 0..100 { p.wait().unwrap(); });
    ///     }
    /// });
    /// assert_eq!(Barrier::new(0).parties(), 1); // std's rule: 0 parties is 1
    /// ```
    pub fn new(parties: usize) -> Barrier {
        match Barrier::with_algorithm(parties.max(1), Algorithm::Auto) {
            Ok(barrier) => barrier,
            Err(error) => panic!("Barrier::new({parties}): {error}"),
        }
    }

    /// A barrier for `parties` participants running `algorithm`, with the default wait policy and
    /// no completion action. Use [`Barrier::builder`] for more options.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `parties` is 0 or above [`MAX_PARTIES`](super::MAX_PARTIES),
    /// or when `PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE` or `PHASERS_STALL` does not parse.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, Error};
    ///
    /// assert!(matches!(
    ///     Barrier::with_algorithm(0, Algorithm::Ticket),
    ///     Err(Error::InvalidArgument { .. })
    /// ));
    /// let single = Barrier::with_algorithm(1, Algorithm::Ticket)?;
    /// let mut only = single.participants().pop().unwrap();
    /// assert!(only.wait()?.is_leader()); // a barrier of one never blocks
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn with_algorithm(parties: usize, algorithm: Algorithm) -> Result<Barrier> {
        BarrierBuilder::new(parties).algorithm(algorithm).build()
    }

    /// A builder for a barrier of `parties` participants.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::builder(3).algorithm(Algorithm::Ticket).build()?;
    /// assert_eq!((barrier.parties(), barrier.algorithm()), (3, Algorithm::Ticket));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn builder(parties: usize) -> BarrierBuilder {
        BarrierBuilder::new(parties)
    }
}

/// The largest party count a barrier accepts: 16,384.
///
/// Several times beyond any machine's thread count; it bounds the memory of the per-participant
/// structures and the time to build and to break a barrier. Dissemination and tournament keep
/// `parties * ceil(log2 parties)` padded flags, 28 MiB at this limit, and breaking a barrier
/// (a participant dropped or panicking) wakes every one of them. At 65,536 parties that was
/// 128 MiB and half a second. Above it, [`BarrierBuilder::build`] returns
/// [`Error::InvalidArgument`]: split the threads into groups, each with its own barrier (or a
/// [`Team`](crate::Team) split into sub-teams).
///
/// ```
/// use phasers::barrier::MAX_PARTIES;
/// use phasers::{Algorithm, Barrier, Error};
///
/// let largest = Barrier::with_algorithm(MAX_PARTIES, Algorithm::Dissemination)?;
/// assert_eq!(largest.parties(), MAX_PARTIES);
/// let err = Barrier::with_algorithm(MAX_PARTIES + 1, Algorithm::Dissemination).unwrap_err();
/// assert!(matches!(err, Error::InvalidArgument { .. }));
/// assert!(err.to_string().contains("16384"));
/// # Ok::<(), phasers::Error>(())
/// ```
pub const MAX_PARTIES: usize = 1 << 14;

/// The largest fan-in of a [`CombiningTree`](Algorithm::CombiningTree): 64.
///
/// ```
/// use phasers::barrier::MAX_FAN_IN;
/// use phasers::{Algorithm, Barrier, Error};
///
/// let wide = Barrier::builder(8).algorithm(Algorithm::CombiningTree).fan_in(MAX_FAN_IN).build()?;
/// assert_eq!(wide.parties(), 8);
/// let err = Barrier::builder(8).fan_in(MAX_FAN_IN + 1).build().unwrap_err();
/// assert!(matches!(err, Error::InvalidArgument { .. }));
/// # Ok::<(), phasers::Error>(())
/// ```
pub const MAX_FAN_IN: usize = 64;

/// Configures a [`Barrier`] before building it.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use phasers::{Algorithm, Barrier};
///
/// let completed = Arc::new(AtomicU64::new(0));
/// let counter = Arc::clone(&completed);
/// let barrier = Barrier::builder(4)
///     .algorithm(Algorithm::CombiningTree)
///     .fan_in(2)
///     .on_completion(move || { counter.fetch_add(1, Ordering::Relaxed); })
///     .build()?;
///
/// std::thread::scope(|s| {
///     for mut p in barrier.participants() {
///         s.spawn(move || for _ in 0..10 { p.wait().unwrap(); });
///     }
/// });
/// assert_eq!(completed.load(Ordering::Relaxed), 10);
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct BarrierBuilder {
    parties: usize,
    algorithm: Algorithm,
    fan_in: usize,
    wait: WaitConfig,
    completion: Option<Box<dyn FnMut() + Send>>,
}

impl BarrierBuilder {
    pub(crate) fn new(parties: usize) -> Self {
        BarrierBuilder {
            parties,
            algorithm: Algorithm::Auto,
            fan_in: 4,
            wait: WaitConfig::default(),
            completion: None,
        }
    }

    /// The algorithm [`build`](Self::build) uses. Defaults to [`Algorithm::Auto`].
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::builder(4).algorithm(Algorithm::Dissemination).build()?;
    /// assert_eq!(barrier.algorithm(), Algorithm::Dissemination);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// How many participants meet at each node of a [`CombiningTree`](Algorithm::CombiningTree),
    /// from 2 to [`MAX_FAN_IN`]. Defaults to 4. Other algorithms do not use it, but
    /// [`build`](Self::build) checks the range whatever the algorithm, since a value outside it is
    /// a mistake either way (and `Auto` could pick the combining tree on another machine).
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, Error};
    ///
    /// let ternary = Barrier::builder(9).algorithm(Algorithm::CombiningTree).fan_in(3).build()?;
    /// assert_eq!(ternary.algorithm(), Algorithm::CombiningTree);
    /// // Checked even for an algorithm that does not use it.
    /// let unary = Barrier::builder(9).algorithm(Algorithm::Counting).fan_in(1).build();
    /// assert!(matches!(unary, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn fan_in(mut self, fan_in: usize) -> Self {
        self.fan_in = fan_in;
        self
    }

    /// How waiters spend their time; `PHASERS_WAIT` overrides it. Defaults to
    /// [`WaitPolicy::Auto`].
    ///
    /// ```
    /// use phasers::{Barrier, WaitPolicy};
    ///
    /// std::env::remove_var("PHASERS_WAIT"); // which would override the builder's policy
    /// let barrier = Barrier::builder(2).wait_policy(WaitPolicy::Yield).build()?;
    /// assert_eq!(barrier.wait_policy(), WaitPolicy::Yield);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.wait.policy = policy;
        self
    }

    /// How long a waiter waits before it reports a stall (see [`crate::wait`]'s "Stalls"):
    /// once per episode, naming the ranks that have not arrived, then it waits on.
    /// `Duration::MAX` or `Duration::ZERO` turns the reports off. Without it, `PHASERS_STALL`
    /// decides, else 10 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Barrier;
    ///
    /// // Phases that legitimately take minutes: report only after an hour.
    /// let barrier = Barrier::builder(8).stall_after(Duration::from_secs(3600)).build()?;
    /// assert_eq!(barrier.stall_after(), Some(Duration::from_secs(3600)));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(mut self, after: Duration) -> Self {
        self.wait.stall_after = Some(after);
        self
    }

    /// An action that runs exactly once per episode, in the leader's thread, after every
    /// participant has arrived and before any is released. Whatever it writes is visible to every
    /// participant when its wait returns.
    ///
    /// If it panics, the barrier breaks (the others get [`Error::Broken`]) and the panic continues in
    /// the leader's thread.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    /// use phasers::Barrier;
    ///
    /// let completed = Arc::new(AtomicU64::new(0));
    /// let counter = Arc::clone(&completed);
    /// let action = move || { counter.fetch_add(1, Ordering::Relaxed); };
    /// let barrier = Barrier::builder(2).on_completion(action).build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in barrier.participants() {
    ///         let completed = &completed;
    ///         // Each wait returns after its episode's action ran, and before the next one's.
    ///         s.spawn(move || for episode in 1..=5 {
    ///             p.wait().unwrap();
    ///             assert_eq!(completed.load(Ordering::Relaxed), episode);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn on_completion(mut self, action: impl FnMut() + Send + 'static) -> Self {
        self.completion = Some(Box::new(action));
        self
    }

    /// Builds a barrier that dispatches to the chosen algorithm at run time.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the party count is 0 or above [`MAX_PARTIES`], the fan-in is
    /// out of range, `PHASERS_WAIT` / `PHASERS_SPIN` / `PHASERS_WAKE` / `PHASERS_STALL` hold a
    /// value that cannot be parsed, or, with [`Algorithm::Auto`] only, the tuning profile named by
    /// `PHASERS_PROFILE` or found at the default path is missing or invalid (see
    /// [`Profile`](crate::Profile); the message names the file and what to do). With a concrete
    /// algorithm the profile is not read.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, Error};
    ///
    /// let barrier = Barrier::builder(4).algorithm(Algorithm::McsTree).build()?;
    /// assert_eq!(barrier.parties(), 4);
    /// let err = Barrier::builder(0).algorithm(Algorithm::McsTree).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument { .. }));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn build(self) -> Result<Barrier> {
        let requested = self.algorithm;
        self.finish(|parties, params| {
            let algorithm = requested.resolve_for_build(parties)?;
            Ok(AnyAlgorithm::new(algorithm, parties, params))
        })
    }

    /// Builds a barrier that runs `A` with static dispatch; [`algorithm`](Self::algorithm) is
    /// ignored.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); `Barrier<AnyAlgorithm>` resolves [`Algorithm::Auto`], so it
    /// reads the tuning profile, and no other `A` does.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::barrier::McsTree;
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let builder = Barrier::builder(2).algorithm(Algorithm::Ticket);
    /// let barrier: Barrier<McsTree> = builder.build_static()?;
    /// assert_eq!(barrier.algorithm(), Algorithm::McsTree); // the type decides
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn build_static<A: BarrierAlgorithm>(self) -> Result<Barrier<A>> {
        self.finish(|parties, params| {
            A::prerequisites()?;
            Ok(A::build(parties, params))
        })
    }

    /// Checks the arguments and the environment, in the order the errors are documented, then
    /// makes the algorithm's shared state.
    fn finish<A: BarrierAlgorithm>(
        self,
        make: impl FnOnce(usize, &Params) -> Result<A>,
    ) -> Result<Barrier<A>> {
        if self.parties == 0 {
            return Err(Error::invalid(
                "a barrier needs at least 1 party, got 0; pass the number of threads that will wait",
            ));
        }
        if self.parties > MAX_PARTIES {
            return Err(Error::invalid(format!(
                "a barrier takes at most {MAX_PARTIES} parties (phasers::barrier::MAX_PARTIES), \
                 got {}; split the work among groups of threads with a barrier each",
                self.parties
            )));
        }
        if !(2..=MAX_FAN_IN).contains(&self.fan_in) {
            return Err(Error::invalid(format!(
                "the combining tree's fan-in must be between 2 and {MAX_FAN_IN} \
                 (phasers::barrier::MAX_FAN_IN), got {}; 4 is the default",
                self.fan_in
            )));
        }
        let tuning = self.wait.resolve()?;
        let params = Params {
            fan_in: self.fan_in,
            has_completion: self.completion.is_some(),
        };
        let algorithm = make(self.parties, &params)?;
        Ok(Barrier::from_parts(
            algorithm,
            self.parties,
            tuning,
            self.completion,
        ))
    }
}

impl std::fmt::Debug for BarrierBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BarrierBuilder")
            .field("parties", &self.parties)
            .field("algorithm", &self.algorithm)
            .field("fan_in", &self.fan_in)
            .field("policy", &self.wait.policy)
            .field("completion", &self.completion.is_some())
            .field("stall_after", &self.wait.stall_after)
            .finish()
    }
}
