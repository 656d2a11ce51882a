//! `Barrier`: the shared object that hands out participants, and `Shared`, what they share.
//!
//! How a barrier is built (`Barrier::new`, `with_algorithm`, `builder`) is in `builder.rs`, and how
//! it hands out participants (`participants`, `participant`) in `participant.rs`: both name this
//! file's types, so this file names neither of theirs, and the three import in one direction.

use super::completion::Completion;
use super::{AnyAlgorithm, BarrierAlgorithm};
use crate::error::{Error, Result};
use crate::primitive::{Arc, AtomicBool, Ordering};
use crate::wait::{BrokenState, Roster, SpinPlan, Stall, Tuning, WaitPolicy, Watched, Wording};
use crate::Algorithm;

/// A reusable barrier for a fixed set of participants, running one of several algorithms.
///
/// `Barrier` (with the default type parameter) picks its algorithm at run time from an
/// [`Algorithm`]; `Barrier<A>` for a concrete algorithm type from [`crate::barrier`] (for example
/// `Barrier<McsTree>`) dispatches statically. Each participant waits through its own
/// [`Participant`](super::Participant) handle, which carries its rank and private state.
///
/// # Stalls
///
/// A participant that stops calling `wait` without leaving or being dropped leaves the others
/// waiting. Once they have waited for the stall time ([`BarrierBuilder::stall_after`](super::BarrierBuilder::stall_after), else
/// `PHASERS_STALL`, else 10 s), one of them reports it, once per episode, naming the ranks that
/// have not arrived (see [`StallReport`](crate::StallReport)), and they wait on.
///
/// ```
/// use phasers::{Algorithm, Barrier};
///
/// let barrier = Barrier::with_algorithm(4, Algorithm::Dissemination)?;
/// std::thread::scope(|s| {
///     for mut p in barrier.participants() {
///         s.spawn(move || {
///             for round in 0..1000 {
///                 let released = p.wait().unwrap();
///                 assert_eq!(released.episode(), round);
///             }
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
pub struct Barrier<A: BarrierAlgorithm = AnyAlgorithm> {
    pub(super) shared: Arc<Shared<A>>,
}

/// What every participant of one barrier shares.
pub(crate) struct Shared<A: BarrierAlgorithm> {
    pub(crate) algorithm: A,
    pub(crate) parties: usize,
    pub(crate) policy: WaitPolicy,
    pub(crate) plan: SpinPlan,
    pub(crate) broken: BrokenState,
    pub(crate) roster: Roster,
    pub(crate) stall: Stall,
    pub(crate) completion: Completion,
    claimed: Box<[AtomicBool]>,
}

impl<A: BarrierAlgorithm> Barrier<A> {
    pub(crate) fn from_parts(
        algorithm: A,
        parties: usize,
        tuning: Tuning,
        completion: Option<Box<dyn FnMut() + Send>>,
    ) -> Self {
        Barrier {
            shared: Arc::new(Shared {
                algorithm,
                parties,
                policy: tuning.policy(),
                plan: tuning.plan(parties),
                broken: BrokenState::new(),
                roster: Roster::new(parties),
                stall: Stall::new(tuning.stall_after()),
                completion: Completion::new(completion),
                claimed: (0..parties).map(|_| AtomicBool::new(false)).collect(),
            }),
        }
    }

    /// The number of participants the barrier was built for.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(5, Algorithm::Counting)?;
    /// assert_eq!(barrier.parties(), 5);
    /// assert_eq!(barrier.participants().len(), 5); // one handle per party
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.parties
    }

    /// The algorithm running (never `Auto`: this is what `Auto` resolved to).
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let chosen = Barrier::with_algorithm(2, Algorithm::McsTree)?.algorithm();
    /// assert_eq!(chosen, Algorithm::McsTree);
    /// assert_ne!(Barrier::new(2).algorithm(), Algorithm::Auto);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn algorithm(&self) -> Algorithm {
        self.shared.algorithm.kind()
    }

    /// The wait policy in force, after `PHASERS_WAIT`'s override.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, WaitPolicy};
    ///
    /// // PHASERS_WAIT replaces the policy the builder asked for.
    /// std::env::set_var("PHASERS_WAIT", "park");
    /// let builder = Barrier::builder(2).algorithm(Algorithm::Counting);
    /// let barrier = builder.wait_policy(WaitPolicy::Spin).build()?;
    /// assert_eq!(barrier.wait_policy(), WaitPolicy::Park);
    /// std::env::remove_var("PHASERS_WAIT");
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_policy(&self) -> WaitPolicy {
        self.shared.policy
    }

    /// How long a waiter waits before it reports a stall, after `stall_after` and
    /// `PHASERS_STALL`; `None` when stalls are not reported.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Barrier;
    ///
    /// let barrier = Barrier::builder(4).stall_after(Duration::from_secs(60)).build()?;
    /// assert_eq!(barrier.stall_after(), Some(Duration::from_secs(60)));
    /// let quiet = Barrier::builder(4).stall_after(Duration::MAX).build()?;
    /// assert_eq!(quiet.stall_after(), None);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(&self) -> Option<std::time::Duration> {
        self.shared.stall.after()
    }

    /// Whether some episode can no longer complete because a participant panicked or was dropped.
    /// A barrier whose participants were all dropped after their last wait also reports `true`.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, Error};
    ///
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Counting)?;
    /// let mut handles = barrier.participants();
    /// assert!(!barrier.is_broken());
    /// drop(handles.pop()); // rank 1 is dropped without leaving, before episode 0
    /// assert!(barrier.is_broken());
    /// let result = handles[0].wait();
    /// assert!(matches!(result, Err(Error::Broken { by: 1, episode: 0 })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_broken(&self) -> bool {
        self.shared.broken.breaker().is_some()
    }
}

impl<A: BarrierAlgorithm> Shared<A> {
    /// Marks `rank`'s handle as handed out.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `rank` is out of range or its handle is already out.
    pub(crate) fn claim(&self, rank: usize) -> Result<()> {
        let claimed = self.claimed.get(rank).ok_or_else(|| {
            Error::invalid(format!(
                "rank {rank} is out of range: this barrier has ranks 0 to {}",
                self.parties - 1
            ))
        })?;
        if claimed.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid(format!(
                "the handle of rank {rank} was already handed out; each rank has exactly one"
            )));
        }
        Ok(())
    }

    /// Marks `episode` and later as unable to complete because of `rank`, and wakes everyone.
    #[cold]
    pub(crate) fn break_from(&self, episode: u64, rank: usize) {
        if self.broken.break_from(episode, rank) {
            self.algorithm.wake_all();
        }
    }

    /// The error a wait at a broken episode returns.
    pub(crate) fn broken_error(&self) -> Error {
        let (by, episode) = self
            .broken
            .breaker()
            .expect("broken_error is only called once the barrier is broken");
        Error::Broken { by, episode }
    }
}

/// How stall reports speak of barriers.
static STALL_WORDING: Wording = Wording {
    unit: "episode",
    members: "rank(s)",
    all_arrived: "although every rank has arrived: the completion action may still be running",
    unnamed: "for ranks it cannot name",
    advice: "every participant must wait in every episode; one that is done should leave() \
             (SenseReversing, Counting) or be dropped, which breaks the barrier so that the \
             others get Error::Broken instead of waiting",
};

impl<A: BarrierAlgorithm> Watched for Shared<A> {
    fn stall(&self) -> &Stall {
        &self.stall
    }

    fn wording(&self) -> &'static Wording {
        &STALL_WORDING
    }

    fn describe(&self) -> String {
        format!(
            "Barrier ({:?}, {} participants)",
            self.algorithm.kind(),
            self.parties
        )
    }

    fn missing(&self, episode: u64) -> Vec<usize> {
        self.roster.missing(episode)
    }
}

impl<A: BarrierAlgorithm> Clone for Barrier<A> {
    /// Another reference to the same barrier (handles are not duplicated).
    fn clone(&self) -> Self {
        Barrier {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<A: BarrierAlgorithm> std::fmt::Debug for Barrier<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Barrier")
            .field("parties", &self.parties())
            .field("algorithm", &self.algorithm())
            .field("wait_policy", &self.wait_policy())
            .field("broken", &self.is_broken())
            .finish()
    }
}
