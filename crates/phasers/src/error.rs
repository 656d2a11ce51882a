//! The crate's one error type.

/// Everything that can go wrong in a `phasers` primitive.
///
/// Every variant's message says what happened and what to do about it. The enum is
/// `#[non_exhaustive]` because later primitives (phasers, reductions, teams) add their own cases.
///
/// ```
/// use phasers::{Algorithm, Barrier, Error};
///
/// let err = Barrier::with_algorithm(0, Algorithm::Counting).unwrap_err();
/// match &err {
///     Error::InvalidArgument { message } => assert!(message.contains("at least 1 party")),
///     other => panic!("expected InvalidArgument, got {other:?}"),
/// }
/// // The message says what was wrong and what to do; print it as it is.
/// println!("{err}");
/// assert!(err.to_string().starts_with("invalid argument: a barrier needs at least 1 party"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument was out of range or inconsistent; the message names it and the accepted range.
    #[error("invalid argument: {message}")]
    InvalidArgument {
        /// What was wrong and what is accepted.
        message: String,
    },

    /// The deadline passed before every participant arrived.
    ///
    /// On a handle (a barrier's [`Participant`](crate::Participant), a phaser's
    /// [`Registration`](crate::Registration), a team's [`Pending`](crate::Pending)) the caller's
    /// arrival stays in place: waiting again on the same handle completes the same episode. An
    /// [`AnyThreadBarrier`](crate::AnyThreadBarrier) call has no handle to resume, so its timeout
    /// breaks the barrier instead, as `java.util.concurrent.CyclicBarrier`'s does.
    ///
    /// `missing` lists the ranks that had not arrived when the wait gave up. It can be empty
    /// when everyone had arrived but the release had not yet reached this participant (tree
    /// algorithms propagate the release in steps). `resumable` says which of the two cases above
    /// this is, and the message gives only that case's advice.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{AnyThreadBarrier, Barrier, Error};
    ///
    /// let barrier = Barrier::new(2);
    /// let mut first = barrier.participant(0)?;
    /// let err = first.wait_timeout(Duration::from_millis(1)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { resumable: true, .. }));
    /// assert!(err.to_string().contains("waiting again on the same handle"));
    /// assert!(!err.to_string().contains("AnyThreadBarrier"));
    ///
    /// let any_thread = AnyThreadBarrier::new(2);
    /// let err = any_thread.wait_timeout(Duration::from_millis(1)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { resumable: false, .. }));
    /// assert!(err.to_string().contains("broke the barrier"));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    #[error(
        "timed out in episode {episode}: {} participant(s) had not arrived (ranks {missing:?}); {}",
        missing.len(),
        if *resumable {
            "the arrival stays in place, so waiting again on the same handle completes this \
             episode"
        } else {
            "this call had no handle to keep its arrival, so the timeout broke the barrier, and \
             every other call now returns Error::Broken: build a new barrier to go on"
        }
    )]
    Timeout {
        /// The episode this participant is waiting to complete.
        episode: u64,
        /// Ranks that had not arrived at `episode` when the wait gave up, in increasing order.
        missing: Vec<usize>,
        /// Whether waiting again completes `episode`: `true` on a handle, whose arrival stays in
        /// place; `false` for an [`AnyThreadBarrier`](crate::AnyThreadBarrier) call, whose
        /// timeout broke the barrier.
        resumable: bool,
    },

    /// A participant panicked (or its handle was dropped while others still needed it), so the
    /// object cannot be relied on any more.
    ///
    /// `episode` is the first episode the lost participant did not complete. Waits for earlier
    /// episodes complete normally. A wait for `episode` itself returns this error, except that it
    /// may still complete if the lost participant had already arrived at it (after a timeout)
    /// before it was lost. Every wait for a later episode returns this error.
    #[error(
        "broken: participant {by} panicked or was dropped without leaving before completing \
         episode {episode}, so waits from that episode on cannot be relied on to complete; build a \
         new object and restart the computation"
    )]
    Broken {
        /// Rank of the participant whose loss broke the object.
        by: usize,
        /// The first episode that the lost participant did not complete.
        episode: u64,
    },

    /// The chosen algorithm cannot perform this operation.
    #[error("{algorithm} does not support {operation}; {hint}")]
    Unsupported {
        /// The operation that was asked for.
        operation: &'static str,
        /// The algorithm that cannot do it.
        algorithm: &'static str,
        /// What to use instead.
        hint: &'static str,
    },

    /// A phaser registration was asked for something its mode does not allow: registering a child
    /// with a stronger mode, signalling from a wait-only registration, waiting from a signal-only
    /// one, `next_single` without `SigWaitSingle`, or sending to an accumulator without the right
    /// to signal.
    #[error("{operation} needs {needed}, but this registration is {mode}; {hint}")]
    Capability {
        /// The operation that was asked for.
        operation: &'static str,
        /// The capability it needs.
        needed: &'static str,
        /// The mode of the registration that asked.
        mode: crate::mode::Mode,
        /// What to do instead.
        hint: &'static str,
    },

    /// The phaser was terminated: by [`Phaser::force_terminate`](crate::Phaser::force_terminate),
    /// by its [`on_advance`](crate::PhaserBuilder::on_advance) action returning `Break`, or because
    /// its last signal-capable registration was dropped, so no later phase can ever complete.
    #[error(
        "the phaser is terminated (force_terminate was called, its on_advance action returned \
         Break, or every registration that could signal has been dropped), so phase {phase} will \
         never complete; create a new phaser"
    )]
    Terminated {
        /// The phase this wait was for.
        phase: u64,
    },

    /// Participants of one collective call passed arguments that must agree but do not: arrays of
    /// different lengths, or one called `reduce` while another called `allreduce`.
    ///
    /// The outputs may hold partial results (a master may have accumulated into its own output
    /// before the mismatch was found) and must not be used. A [`Team`](crate::Team) stays
    /// usable: the next call with matching arguments works. A [`Reduction`](crate::Reduction) is
    /// failed: every later call returns the same error (see its docs).
    #[error(
        "mismatched {what}: participant {rank} passed {ours} but participant {other} passed \
         {theirs}; every participant of one call must pass the same {what}"
    )]
    Mismatch {
        /// What differs: `"length"`, `"operation"`, or `"output length"`.
        what: &'static str,
        /// One participant that took part in the call.
        rank: usize,
        /// What `rank` passed.
        ours: String,
        /// A participant whose argument differs from `rank`'s.
        other: usize,
        /// What `other` passed.
        theirs: String,
    },
}

/// `Result` with this crate's [`Error`].
///
/// ```
/// use phasers::{Algorithm, Barrier, Result};
///
/// // A helper that builds a barrier passes its errors on with `?`.
/// fn pair() -> Result<Barrier> {
///     Barrier::with_algorithm(2, Algorithm::Counting)
/// }
/// assert_eq!(pair()?.parties(), 2);
/// # Ok::<(), phasers::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            message: message.into(),
        }
    }
}
