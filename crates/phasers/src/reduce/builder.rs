//! `Reduction`, the group, and its builder.

use std::sync::Arc as StdArc;
use std::time::Duration;

use super::algorithm::ReduceAlgorithm;
use super::handle::Reducer;
use super::kernel::Kernel;
use super::shared::Shared;
use crate::accumulator::{Element, Op};
use crate::error::{Error, Result};
use crate::primitive::{Arc, Ordering};
use crate::wait::{WaitConfig, WaitPolicy};

/// The most participants a [`Reduction`] can have: 65,535 (the dynamic algorithms pack a rank and a
/// count into one word, and the arrival stamps number calls modulo 2^16).
///
/// Above it, [`ReductionBuilder::build`] returns [`Error::InvalidArgument`]: reduce within groups
/// of threads first, then across the groups' results.
///
/// ```
/// use phasers::reduce::MAX_PARTIES;
/// use phasers::{Error, Op, Reduction};
///
/// assert_eq!(Reduction::<u64>::new(MAX_PARTIES, Op::Sum)?.parties(), MAX_PARTIES);
/// let err = Reduction::<u64>::new(MAX_PARTIES + 1, Op::Sum).unwrap_err();
/// assert!(matches!(err, Error::InvalidArgument { .. }));
/// assert!(err.to_string().contains("65535"));
/// # Ok::<(), phasers::Error>(())
/// ```
pub const MAX_PARTIES: usize = u16::MAX as usize;

/// A group of participants that reduce arrays together. Cloning it is cheap (another reference to
/// the same group); the participants' handles come from [`participants`](Self::participants).
///
/// See the [module docs](crate::reduce) for the algorithms and an example.
///
/// # Mismatched calls
///
/// The participants of one call must agree on its kind (all [`reduce`](Reducer::reduce) or all
/// [`allreduce`](Reducer::allreduce)) and on the input length, and each participant that
/// receives the result must pass an output as long as its input. Every call checks this, in
/// every build profile. The root, the operator and the element type belong to the group, so they
/// cannot differ between participants.
///
/// When the participants disagree, every one of them gets [`Error::Mismatch`] naming two
/// participants and what each passed (for an output of the wrong length, the one participant's
/// input and output lengths), the same error for all:
///
/// - from the call itself, for every participant still in it when the difference is found: always
///   the root, every participant of an `allreduce`, and everyone under `Linear` and
///   `DynamicGroup`;
/// - from a later call, for a participant of `reduce` that returned before the difference was
///   found elsewhere in the tree (its data was consumed by a master that matched it: quick
///   return): from its next call, or, if it returned from that one at once too, still before the
///   difference was found, from the call after it. Such a participant has no output, and its
///   `Ok` says only that its input is free again.
///
/// Nobody waits for ever, and nobody reads or writes past any buffer, whatever the others
/// declared. Outputs of the mismatched call hold unspecified values: untouched, or partly reduced
/// (a master may have accumulated into its own output before the difference was found).
///
/// The group is then failed, as [`is_broken`](Self::is_broken) says: once the mismatched call has
/// completed, every call returns the same error at once. A mismatch is a bug in the calling
/// program, and after a quick return the participants no longer agree on which call is which,
/// so build a new group.
///
/// The check costs a matched call no cache-line transfer: each participant's kind and length
/// travel in the cache line its partner reads anyway to take its data, and the only other accesses
/// are loads, at the end of a call, of a word that only a mismatch writes. There is no opt-out:
/// there would be nothing to save.
///
/// ```
/// use phasers::{Error, Op, ReduceAlgorithm, Reduction};
///
/// let group = Reduction::<u32>::builder(2)
///     .op(Op::Sum)
///     .algorithm(ReduceAlgorithm::StaticTree)
///     .build()?;
/// let results = std::thread::scope(|s| {
///     let threads: Vec<_> = group
///         .participants()
///         .into_iter()
///         .map(|mut p| {
///             s.spawn(move || {
///                 let len = if p.rank() == 0 { 2 } else { 102 };
///                 let mut out = vec![0; len];
///                 let first = p.allreduce(&vec![1; len], &mut out);
///                 // Matched this time, but the group is failed.
///                 let second = p.allreduce(&[1, 1], &mut [0, 0]);
///                 (first, second)
///             })
///         })
///         .collect();
///     threads.into_iter().map(|t| t.join().unwrap()).collect::<Vec<_>>()
/// });
/// for (first, second) in results {
///     let error = first.unwrap_err();
///     assert_eq!(
///         error,
///         Error::Mismatch {
///             what: "length",
///             rank: 0,
///             ours: "2 elements".into(),
///             other: 1,
///             theirs: "102 elements".into(),
///         }
///     );
///     assert_eq!(second.unwrap_err(), error);
/// }
/// assert!(group.is_broken());
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// # Stalls
///
/// A participant that stops calling without dropping its handle leaves the others waiting. Once
/// they have waited for the stall time ([`ReductionBuilder::stall_after`], else `PHASERS_STALL`,
/// else 10 s), one of them reports it, once per call, naming the ranks that have not arrived at
/// the call (see [`StallReport`](crate::StallReport)), and they wait on.
pub struct Reduction<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Reduction<T> {
    fn clone(&self) -> Self {
        Reduction {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Element> Reduction<T> {
    /// A group of `participants` reducing with `op`, choosing the algorithm per call (`Auto`),
    /// with rank 0 as the root.
    ///
    /// ```
    /// use phasers::{Error, Op, Reduction};
    ///
    /// assert!(matches!(Reduction::<u64>::new(0, Op::Sum), Err(Error::InvalidArgument { .. })));
    /// assert!(matches!(Reduction::<f32>::new(2, Op::Xor), Err(Error::InvalidArgument { .. })));
    /// let group = Reduction::<u64>::new(2, Op::Sum)?;
    /// assert_eq!(group.parties(), 2);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 or more than [`MAX_PARTIES`] participants, or a bitwise op
    /// on a floating-point type.
    pub fn new(participants: usize, op: Op<T>) -> Result<Self> {
        ReductionBuilder::new(participants).op(op).build()
    }
}

impl<T: Copy + Send + Sync + 'static> Reduction<T> {
    /// A group of `participants` reducing any `Copy` type with `combine`, which must be
    /// associative and commutative.
    ///
    /// ```
    /// use phasers::Reduction;
    ///
    /// // The largest value and where it came from.
    /// let group = Reduction::with_fn(3, |a: (f64, usize), b: (f64, usize)| if b.0 > a.0 { b } else { a })?;
    /// let mut best = [(0.0, 0)];
    /// std::thread::scope(|s| {
    ///     let mut handles = group.participants().into_iter();
    ///     let mut root = handles.next().unwrap();
    ///     for mut p in handles {
    ///         s.spawn(move || p.reduce(&[(p.rank() as f64 * 10.0, p.rank())], &mut []).unwrap());
    ///     }
    ///     root.reduce(&[(5.0, 0)], &mut best).unwrap();
    /// });
    /// assert_eq!(best, [(20.0, 2)]);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 or more than [`MAX_PARTIES`] participants.
    pub fn with_fn(
        participants: usize,
        combine: impl Fn(T, T) -> T + Send + Sync + 'static,
    ) -> Result<Self> {
        ReductionBuilder::new(participants).combine(combine).build()
    }

    /// A builder for a group of `participants`.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// // Rank 1 receives the result.
    /// let group = Reduction::<u32>::builder(2).op(Op::Max).root(1).build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             p.reduce(&[p.rank() as u32 + 5], &mut out).unwrap();
    ///             if p.is_root() {
    ///                 assert_eq!(out, [6]);
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn builder(participants: usize) -> ReductionBuilder<T> {
        ReductionBuilder::new(participants)
    }

    /// The number of participants.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(3, Op::Sum)?;
    /// assert_eq!(group.parties(), 3);
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             // Everyone brings a 1: the sum counts the participants.
    ///             let mut count = [0];
    ///             p.allreduce(&[1], &mut count).unwrap();
    ///             assert_eq!(count, [3]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.parties
    }

    /// The rank that receives [`Reducer::reduce`]'s result.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<i32>::builder(3).op(Op::Sum).root(2).build()?;
    /// assert_eq!(group.root(), 2);
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             let outcome = p.reduce(&[10], &mut out).unwrap();
    ///             // Only rank 2's output holds the sum.
    ///             assert_eq!(outcome.has_result(), p.rank() == 2);
    ///             assert_eq!(out[0], if p.rank() == 2 { 30 } else { 0 });
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn root(&self) -> usize {
        self.shared.root
    }

    /// The algorithm the group was built with (`Auto` stays `Auto`; each call's
    /// [`ReduceOutcome`](crate::ReduceOutcome) says what ran).
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// let group = Reduction::<u64>::new(2, Op::Sum)?;
    /// assert_eq!(group.algorithm(), ReduceAlgorithm::Auto);
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             let outcome = p.allreduce(&[2], &mut out).unwrap();
    ///             assert_eq!(out, [4]);
    ///             assert_ne!(outcome.algorithm(), ReduceAlgorithm::Auto); // what Auto chose
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn algorithm(&self) -> ReduceAlgorithm {
        self.shared.configured
    }

    /// Whether a fixed combination order was asked for.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// assert!(!Reduction::<f64>::new(4, Op::Sum)?.is_deterministic());
    /// let group = Reduction::<f64>::builder(4).op(Op::Sum).deterministic(true).build()?;
    /// assert!(group.is_deterministic());
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut sum = [0.0];
    ///             let outcome = p.allreduce(&[0.1 * p.rank() as f64], &mut sum).unwrap();
    ///             assert!(outcome.algorithm().is_fixed_order());
    ///             assert!((sum[0] - 0.6).abs() < 1e-12);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_deterministic(&self) -> bool {
        self.shared.deterministic
    }

    /// The wait policy in force, after `PHASERS_WAIT`'s override.
    ///
    /// ```
    /// use phasers::{Op, Reduction, WaitPolicy};
    ///
    /// let group = Reduction::<u64>::builder(2).op(Op::Sum).wait_policy(WaitPolicy::Park).build()?;
    /// // `PHASERS_WAIT`, when set, overrides the builder.
    /// if std::env::var_os("PHASERS_WAIT").is_none() {
    ///     assert_eq!(group.wait_policy(), WaitPolicy::Park);
    /// }
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
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::builder(4)
    ///     .op(Op::Sum)
    ///     .stall_after(Duration::from_secs(20))
    ///     .build()?;
    /// assert_eq!(group.stall_after(), Some(Duration::from_secs(20)));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(&self) -> Option<Duration> {
        self.shared.stall.after()
    }

    /// Whether some call can no longer complete because a participant's handle was dropped or
    /// its operator panicked, or because an earlier call was mismatched (see
    /// [Mismatched calls](Self#mismatched-calls)).
    ///
    /// ```
    /// use phasers::{Error, Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(2, Op::Sum)?;
    /// let mut handles = group.participants();
    /// assert!(!group.is_broken());
    /// // Rank 1 leaves before the first call: that call can no longer complete.
    /// drop(handles.pop());
    /// assert!(group.is_broken());
    /// let result = handles[0].allreduce(&[1], &mut [0]);
    /// assert!(matches!(result, Err(Error::Broken { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_broken(&self) -> bool {
        self.shared.broken.breaker().is_some()
    }

    /// The handles of every rank not yet handed out, in rank order: all of them on the first
    /// call, none after that.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u32>::new(4, Op::Sum)?;
    /// let handles = group.participants();
    /// assert_eq!(handles.len(), 4);
    /// assert!(group.participants().is_empty()); // each rank is handed out once
    /// std::thread::scope(|s| {
    ///     for mut p in handles {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             p.allreduce(&[p.rank() as u32], &mut out).unwrap();
    ///             assert_eq!(out, [0 + 1 + 2 + 3]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn participants(&self) -> Vec<Reducer<T>> {
        (0..self.shared.parties)
            .filter_map(|rank| self.participant(rank).ok())
            .collect()
    }

    /// The handle of one rank.
    ///
    /// ```
    /// use phasers::{Error, Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(2, Op::Sum)?;
    /// let mut root = group.participant(0)?;
    /// let mut other = group.participant(1)?;
    /// assert!(matches!(group.participant(0), Err(Error::InvalidArgument { .. }))); // handed out
    /// assert!(matches!(group.participant(2), Err(Error::InvalidArgument { .. }))); // no rank 2
    /// let mut sum = [0];
    /// std::thread::scope(|s| {
    ///     s.spawn(move || other.reduce(&[5], &mut []).unwrap());
    ///     root.reduce(&[1], &mut sum).unwrap();
    /// });
    /// assert_eq!(sum, [6]);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `rank` is out of range or its handle was already handed
    /// out (two handles for one rank would corrupt the group).
    pub fn participant(&self, rank: usize) -> Result<Reducer<T>> {
        let parties = self.shared.parties;
        let claimed = self.shared.claimed.get(rank).ok_or_else(|| {
            Error::invalid(format!(
                "rank {rank} is out of range: this reduction has ranks 0 to {}",
                parties - 1
            ))
        })?;
        if claimed.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid(format!(
                "the handle of rank {rank} was already handed out; each rank has exactly one"
            )));
        }
        Ok(Reducer::new(Arc::clone(&self.shared), rank))
    }
}

impl<T> std::fmt::Debug for Reduction<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reduction")
            .field("parties", &self.shared.parties)
            .field("root", &self.shared.root)
            .field("algorithm", &self.shared.configured)
            .field("deterministic", &self.shared.deterministic)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Reduction`]: the operator (required), then optionally the algorithm, the root,
/// a fixed combination order and the wait policy.
///
/// ```
/// use phasers::{Op, ReduceAlgorithm, Reduction, WaitPolicy};
///
/// let group = Reduction::<f64>::builder(8)
///     .op(Op::Sum)
///     .algorithm(ReduceAlgorithm::DynamicPairs)
///     .deterministic(true)
///     .root(3)
///     .wait_policy(WaitPolicy::Auto)
///     .build()?;
/// assert_eq!(group.root(), 3);
/// assert!(Reduction::<f64>::builder(8).build().is_err()); // no operator
/// # Ok::<(), phasers::Error>(())
/// ```
pub struct ReductionBuilder<T> {
    participants: usize,
    kernel: Option<Result<Kernel<T>>>,
    algorithm: ReduceAlgorithm,
    root: usize,
    deterministic: bool,
    wait: WaitConfig,
}

impl<T: Copy + Send + Sync + 'static> ReductionBuilder<T> {
    /// A builder for `participants`; see the setters for the defaults. The same as
    /// [`Reduction::builder`].
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, ReductionBuilder};
    ///
    /// let group = ReductionBuilder::<u64>::new(2).op(Op::Sum).build()?;
    /// // The defaults: rank 0 is the root, `Auto` chooses, arrival order is allowed.
    /// assert_eq!((group.parties(), group.root()), (2, 0));
    /// assert_eq!(group.algorithm(), ReduceAlgorithm::Auto);
    /// assert!(!group.is_deterministic());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn new(participants: usize) -> Self {
        ReductionBuilder {
            participants,
            kernel: None,
            algorithm: ReduceAlgorithm::Auto,
            root: 0,
            deterministic: false,
            wait: WaitConfig::default(),
        }
    }

    /// Reduce with a function of your own, associative and commutative, for any `Copy` type.
    ///
    /// ```
    /// use phasers::Reduction;
    ///
    /// // The smallest and the largest `u8` at once: a pair is no `Element`, a function is fine.
    /// let group = Reduction::builder(3)
    ///     .combine(|a: (u8, u8), b: (u8, u8)| (a.0.min(b.0), a.1.max(b.1)))
    ///     .build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mine = (p.rank() as u8 * 10, p.rank() as u8 * 10);
    ///             let mut out = [(0, 0)];
    ///             p.allreduce(&[mine], &mut out).unwrap();
    ///             assert_eq!(out, [(0, 20)]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn combine(mut self, combine: impl Fn(T, T) -> T + Send + Sync + 'static) -> Self {
        self.kernel = Some(Ok(Kernel::from_fn(StdArc::new(combine))));
        self
    }

    /// The algorithm (default `Auto`).
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// for algorithm in [ReduceAlgorithm::Linear, ReduceAlgorithm::DynamicGroup] {
    ///     let group = Reduction::<u64>::builder(2).op(Op::Sum).algorithm(algorithm).build()?;
    ///     std::thread::scope(|s| {
    ///         for mut p in group.participants() {
    ///             s.spawn(move || {
    ///                 let mut out = [0; 3];
    ///                 let outcome = p.allreduce(&[1, 2, 3], &mut out).unwrap();
    ///                 assert_eq!((out, outcome.algorithm()), ([2, 4, 6], algorithm));
    ///             });
    ///         }
    ///     });
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn algorithm(mut self, algorithm: ReduceAlgorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// The rank that receives `reduce`'s result (default 0); [`build`](Self::build) refuses a
    /// root that is not below the participant count.
    ///
    /// ```
    /// use phasers::{Error, Op, Reduction};
    ///
    /// let group = Reduction::<u64>::builder(4).op(Op::Sum).root(3).build()?;
    /// assert_eq!(group.root(), 3);
    /// let err = Reduction::<u64>::builder(4).op(Op::Sum).root(usize::MAX).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument { .. }));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn root(mut self, root: usize) -> Self {
        self.root = root;
        self
    }

    /// Combine every element in an order fixed by the ranks, so floating-point results are the
    /// same bits on every call (default off; see the [module docs](crate::reduce)).
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// let group = Reduction::<f64>::builder(4)
    ///     .op(Op::Sum)
    ///     .algorithm(ReduceAlgorithm::DynamicPairs)
    ///     .deterministic(true)
    ///     .build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let (mine, mut first, mut again) = ([0.1 * p.rank() as f64], [0.0], [0.0]);
    ///             let outcome = p.allreduce(&mine, &mut first).unwrap();
    ///             p.allreduce(&mine, &mut again).unwrap();
    ///             // The static tree's fixed order replaces arrival order: the bits repeat.
    ///             assert_eq!(outcome.algorithm(), ReduceAlgorithm::StaticTree);
    ///             assert_eq!(again[0].to_bits(), first[0].to_bits());
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    /// How waiting participants spin, yield and park (default `Auto`; `PHASERS_WAIT` overrides).
    ///
    /// ```
    /// use phasers::{Op, Reduction, WaitPolicy};
    ///
    /// // Park almost at once: for a machine shared with other work.
    /// let group = Reduction::<u64>::builder(2).op(Op::Sum).wait_policy(WaitPolicy::Park).build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0];
    ///             p.allreduce(&[7], &mut out).unwrap();
    ///             assert_eq!(out, [14]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.wait.policy = policy;
        self
    }

    /// How long a waiting participant waits before it reports a stall (see [`crate::wait`]'s
    /// "Stalls"): once per call, naming the ranks that have not arrived, then it waits on.
    /// `Duration::MAX` or `Duration::ZERO` turns the reports off. Without it, `PHASERS_STALL`
    /// decides, else 10 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<f64>::builder(4)
    ///     .op(Op::Sum)
    ///     .stall_after(Duration::ZERO)
    ///     .build()?;
    /// assert_eq!(group.stall_after(), None);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(mut self, after: Duration) -> Self {
        self.wait.stall_after = Some(after);
        self
    }

    /// The group.
    ///
    /// ```
    /// use phasers::{Error, Op, Reduction};
    ///
    /// let none = Reduction::<u64>::builder(0).op(Op::Sum).build();
    /// assert!(matches!(none, Err(Error::InvalidArgument { .. })));
    /// // No operator: the error says how to give one.
    /// let err = Reduction::<u64>::builder(2).build().unwrap_err();
    /// assert!(err.to_string().contains(".op(Op::Sum)"));
    /// let group = Reduction::<u64>::builder(2).op(Op::Sum).build()?;
    /// assert_eq!(group.parties(), 2);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 or more than [`MAX_PARTIES`] participants, a root out of
    /// range, no operator, a bitwise op on a floating-point type, or `PHASERS_WAIT` /
    /// `PHASERS_SPIN` / `PHASERS_WAKE` / `PHASERS_STALL` values that cannot be used.
    pub fn build(self) -> Result<Reduction<T>> {
        let parties = self.participants;
        if parties == 0 || parties > MAX_PARTIES {
            return Err(Error::invalid(format!(
                "a reduction needs at least 1 and at most {MAX_PARTIES} participants \
                 (phasers::reduce::MAX_PARTIES), not {parties}; pass the number of threads that \
                 will reduce, and above the limit reduce within groups of threads first"
            )));
        }
        if self.root >= parties {
            return Err(Error::invalid(format!(
                "root {} is out of range: a reduction of {parties} participants has ranks 0 to \
                 {}; pass one of them as the root",
                self.root,
                parties - 1
            )));
        }
        let kernel = self.kernel.ok_or_else(|| {
            Error::invalid(
                "a reduction needs an operator: call .op(Op::Sum) (or another Op) or \
                 .combine(|a, b| ..) on the builder",
            )
        })??;
        let tuning = self.wait.resolve()?;
        Ok(Reduction {
            shared: Arc::new(Shared::new(
                parties,
                self.root,
                self.algorithm,
                self.deterministic,
                tuning,
                Some(kernel),
            )),
        })
    }
}

impl<T: Element> ReductionBuilder<T> {
    /// Reduce with a built-in operator (or [`Op::custom`]).
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// // Bitwise operators are for integers: `build` refuses them on floats.
    /// assert!(Reduction::<f64>::builder(2).op(Op::And).build().is_err());
    /// let group = Reduction::<i32>::builder(3).op(Op::Min).build()?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         s.spawn(move || {
    ///             let mut out = [0; 2];
    ///             p.allreduce(&[p.rank() as i32 - 1, 5], &mut out).unwrap();
    ///             assert_eq!(out, [-1, 5]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn op(mut self, op: Op<T>) -> Self {
        self.kernel = Some(Kernel::from_op(op));
        self
    }
}

impl<T> std::fmt::Debug for ReductionBuilder<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReductionBuilder")
            .field("participants", &self.participants)
            .field("algorithm", &self.algorithm)
            .field("root", &self.root)
            .field("deterministic", &self.deterministic)
            .finish_non_exhaustive()
    }
}
