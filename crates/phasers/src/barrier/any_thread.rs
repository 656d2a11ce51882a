//! `AnyThreadBarrier`: a barrier any thread may wait on, without a rank. The design and its
//! correctness argument are in the type's docs.

use std::fmt;
use std::sync::PoisonError;

use crossbeam_utils::CachePadded;

use super::{AnyAlgorithm, Barrier, BarrierAlgorithm, Participant, WaitResult};
use crate::error::{Error, Result};
use crate::primitive::{yield_now, AtomicU64, Mutex, Ordering};
use crate::wait::WaitPolicy;
use crate::Algorithm;

/// A barrier that any thread may wait on without a rank, like [`std::sync::Barrier`] and
/// `pthread_barrier_t`: every `parties` calls to [`wait`](Self::wait) complete an episode,
/// whichever threads make them.
///
/// It runs any [`Algorithm`], including the rank-based trees, by giving each call a rank from a
/// ticket counter, as described below. It costs one shared
/// `fetch_add` and an uncontended lock per call on top of the algorithm's own wait, so when each
/// thread has a fixed rank, [`Barrier`] with its [`Participant`]s is faster, and it also offers
/// timeouts, which this type cannot (see below).
///
/// ```
/// use phasers::{Algorithm, AnyThreadBarrier};
///
/// // 2 parties, 4 threads with one call each: any two calls complete an episode.
/// let barrier = AnyThreadBarrier::with_algorithm(2, Algorithm::Tournament)?;
/// let results: Vec<_> = std::thread::scope(|s| {
///     let threads: Vec<_> = (0..4).map(|_| s.spawn(|| barrier.wait().unwrap())).collect();
///     threads.into_iter().map(|t| t.join().unwrap()).collect()
/// });
/// for episode in 0..2 {
///     assert_eq!(results.iter().filter(|r| r.episode() == episode).count(), 2);
///     assert_eq!(results.iter().filter(|r| r.episode() == episode && r.is_leader()).count(), 1);
/// }
/// barrier.settle()?; // nobody is inside `wait` any more
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// As with any barrier without ranks, the calls must pair up: a thread with more calls to make
/// than the others waits for ever once the others are done. Threads that take their calls from a
/// shared pool, or that each make the same number of calls with as many threads as parties, are
/// safe; a fixed number of calls per thread with more threads than parties is not (two threads
/// can complete every episode between themselves and leave the third alone).
///
/// # How it works
///
/// - A ticket counter, alone on its cache line, numbers the calls: call `t` (counted from 0) takes
///   rank `t % n`. Tickets `k·n` to `k·n + n - 1` are one rank each, so any `n` consecutive tickets
///   cover every rank once.
/// - Each rank's [`Participant`] sits in its own padded slot behind a mutex. The call with ticket
///   `t` locks slot `t % n`, waits as that participant, and unlocks. The previous caller with that
///   rank (a ticket `n` lower) may still be leaving its wait when the next one arrives; the lock
///   waits for it.
///
/// # Why it is correct
///
/// Number the calls that lock slot `r`, in the order they get the lock, `0, 1, 2, ...`: the `j`-th
/// of them arrives as rank `r` at the participant's episode `j`, since each completed wait moves the
/// participant on by one episode. (Two tickets of one slot may take the lock in either order; they
/// then swap episodes, which nobody can observe: the calls are anonymous.)
///
/// - **An episode is completed by exactly `n` calls.** Episode `e` of the underlying barrier
///   completes when every rank has arrived at `e` once: that is one call per slot, `n` calls in all,
///   each of them a different call to `wait`.
/// - **No deadlock.** When `(e + 1)·n` tickets have been taken, each slot has at least `e + 1`
///   callers. By induction on `e`: the holder of slot `r` for episode `e` needs only that episode
///   `e - 1`'s holder of slot `r` unlock it, and that holder was released, because episode `e - 1`
///   had a caller in every slot. So every slot gets a holder at episode `e`, and the episode
///   completes. The only calls that can wait for ever are those of the last, partly ticketed
///   episode, which is what POSIX and `std::sync::Barrier` specify: it waits for more calls.
/// - **The barrier invariant** (nobody leaves episode `e` before `n` calls arrived at it, and what
///   they wrote before arriving is visible) is the underlying barrier's, since each call arrives as
///   one participant. Exactly one call per episode is its leader, for the same reason.
///
/// The hot path adds one `fetch_add` on the ticket line and an uncontended lock and unlock of the
/// caller's own slot to the algorithm's wait.
///
/// # No timed wait
///
/// A participant whose timed wait gives up keeps its arrival in place, and the next wait on the same
/// handle completes that episode instead of arriving again. With anonymous callers that breaks the
/// counting: the call that timed out would have counted towards its episode while its caller was
/// told it had not passed, and the next call to take the slot would complete the old arrival instead
/// of adding its own, so `n` calls would no longer complete an episode. None of the algorithms can
/// withdraw an arrival, so there is no `wait_timeout`; use [`Barrier`] with ranks for that.
///
/// # Destroying
///
/// [`settle`](AnyThreadBarrier::settle) is what `pthread_barrier_destroy` needs: it returns once
/// every call of a completed episode has left `wait` (so the memory may be freed), or reports
/// [`BarrierInUse`] when some call waits at an episode that has not completed.
pub struct AnyThreadBarrier<A: BarrierAlgorithm = AnyAlgorithm> {
    /// How many calls to `wait` have started; call `t` takes rank `t % parties`.
    tickets: CachePadded<AtomicU64>,
    /// One slot per rank, each on its own cache lines.
    slots: Box<[CachePadded<Mutex<Slot<A>>>]>,
    /// The barrier the participants belong to, for its parties, algorithm and broken state.
    barrier: Barrier<A>,
}

/// One rank's participant and how many calls have taken it.
struct Slot<A: BarrierAlgorithm> {
    participant: Participant<A>,
    /// Calls that have locked this slot. Counted as soon as the lock is taken, so whoever holds the
    /// lock knows that every counted call has left (see `settle`).
    calls: u64,
}

impl AnyThreadBarrier {
    /// A ready barrier for `parties` calls per episode with the default algorithm
    /// ([`Algorithm::Auto`]), like `std::sync::Barrier::new`: 0 parties behaves as 1.
    ///
    /// # Panics
    ///
    /// As [`Barrier::new`]: above [`MAX_PARTIES`](super::MAX_PARTIES), or with an environment
    /// override or tuning profile that does not parse. [`with_algorithm`](Self::with_algorithm)
    /// returns those as errors.
    ///
    /// ```
    /// use phasers::AnyThreadBarrier;
    ///
    /// let barrier = AnyThreadBarrier::new(3);
    /// std::thread::scope(|s| {
    ///     for _ in 0..3 {
    ///         s.spawn(|| for _ in 0..10 { barrier.wait().unwrap(); });
    ///     }
    /// });
    /// assert_eq!(barrier.parties(), 3);
    /// ```
    pub fn new(parties: usize) -> AnyThreadBarrier {
        match Self::from_barrier(Barrier::new(parties)) {
            Ok(barrier) => barrier,
            // A fresh barrier has handed out no participant, so `from_barrier` cannot refuse it.
            Err(error) => panic!("AnyThreadBarrier::new({parties}): {error}"),
        }
    }

    /// A barrier for `parties` calls per episode running `algorithm`, with the default wait policy
    /// (`PHASERS_WAIT` applies as for every barrier). Build a [`Barrier`] with
    /// [`Barrier::builder`] and pass it to [`from_barrier`](Self::from_barrier) for the other
    /// options, such as a completion action.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `parties` is 0 or above
    /// [`MAX_PARTIES`](super::MAX_PARTIES), or when `PHASERS_WAIT` or the tuning profile that
    /// `Auto` reads is invalid, as for [`Barrier::with_algorithm`].
    ///
    /// ```
    /// use phasers::{Algorithm, AnyThreadBarrier, Error};
    ///
    /// let err = AnyThreadBarrier::with_algorithm(0, Algorithm::Auto).unwrap_err();
    /// assert!(matches!(err, Error::InvalidArgument { .. }));
    /// ```
    pub fn with_algorithm(parties: usize, algorithm: Algorithm) -> Result<AnyThreadBarrier> {
        Self::from_barrier(Barrier::with_algorithm(parties, algorithm)?)
    }
}

impl<A: BarrierAlgorithm> AnyThreadBarrier<A> {
    /// Wraps `barrier`, taking every one of its participants. Its completion action, wait policy
    /// and algorithm carry over; each episode's leader runs the action as usual.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    /// use phasers::{Algorithm, AnyThreadBarrier, Barrier};
    ///
    /// let completed = Arc::new(AtomicU64::new(0));
    /// let counter = Arc::clone(&completed);
    /// let barrier = Barrier::builder(3)
    ///     .algorithm(Algorithm::McsTree)
    ///     .on_completion(move || { counter.fetch_add(1, Ordering::Relaxed); })
    ///     .build()?;
    /// let barrier = AnyThreadBarrier::from_barrier(barrier)?;
    /// std::thread::scope(|s| {
    ///     for _ in 0..3 {
    ///         s.spawn(|| for _ in 0..5 { barrier.wait().unwrap(); });
    ///     }
    /// });
    /// assert_eq!(completed.load(Ordering::Relaxed), 5);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when some participant of `barrier` was already handed out: the
    /// calls could never complete an episode without its rank. The handles that were still free
    /// are then dropped with `barrier`, which breaks it for whoever holds the others (their waits
    /// return [`Error::Broken`] rather than wait for ranks that nobody can use any more).
    pub fn from_barrier(barrier: Barrier<A>) -> Result<Self> {
        let parties = barrier.parties();
        let participants = barrier.participants();
        if participants.len() != parties {
            return Err(Error::invalid(format!(
                "an AnyThreadBarrier needs every participant of its barrier, but {} of the {parties} \
                 were already handed out; build a new barrier and do not take its participants",
                parties - participants.len()
            )));
        }
        let slots = participants
            .into_iter()
            .map(|participant| {
                CachePadded::new(Mutex::new(Slot {
                    participant,
                    calls: 0,
                }))
            })
            .collect();
        Ok(AnyThreadBarrier {
            tickets: CachePadded::new(AtomicU64::new(0)),
            slots,
            barrier,
        })
    }

    /// Arrives at the barrier and waits until `parties` calls (this one included) have arrived at
    /// the current episode.
    ///
    /// Exactly one call per episode reports [`is_leader`](WaitResult::is_leader) (the one
    /// `pthread_barrier_wait` would answer `PTHREAD_BARRIER_SERIAL_THREAD`); it ran the completion
    /// action, if any. [`episode`](WaitResult::episode) numbers the episodes from 0.
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when a completion action panicked, so the barrier cannot be relied on any
    /// more: every later call returns it too, without blocking.
    pub fn wait(&self) -> Result<WaitResult> {
        // Relaxed: the ticket only chooses a slot. Everything that must be ordered is ordered by
        // the slot's lock and the barrier itself (see `settle` for the one reader of the count).
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        let rank = (ticket % self.slots.len() as u64) as usize;
        // A poisoned slot means a completion action panicked in an earlier wait on this slot; that
        // panic broke the barrier, and the participant reports `Error::Broken` below rather than
        // this call panicking too.
        let mut slot = self.slots[rank]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        slot.calls += 1;
        slot.participant.wait()
    }

    /// Waits until every call of a completed episode has left [`wait`](Self::wait), so that the
    /// barrier can be destroyed: what `pthread_barrier_destroy` needs when the thread that
    /// returned first destroys the barrier while the others are still on their way out.
    ///
    /// It accounts for the calls that started before it; a call that starts while it runs is not
    /// covered (destroying a barrier that threads still use is a bug in any case).
    ///
    /// ```
    /// use phasers::{Algorithm, AnyThreadBarrier};
    ///
    /// let barrier = AnyThreadBarrier::with_algorithm(2, Algorithm::Auto)?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait().unwrap());
    ///     barrier.wait().unwrap();
    ///     // The other thread may still be returning; settle waits for it.
    ///     barrier.settle().unwrap();
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BarrierInUse`] when some calls wait at an episode that needs more calls to complete (then
    /// nothing changes: the barrier stays usable, and those calls keep waiting). A broken barrier
    /// is never in use: its waits all return, and `settle` waits for them.
    pub fn settle(&self) -> std::result::Result<(), BarrierInUse> {
        let parties = self.slots.len() as u64;
        // Every call of an episode that the caller saw complete took its ticket before that
        // episode's release, which happens before this load, so the load counts them all.
        let taken = self.tickets.load(Ordering::Relaxed);
        let partial = taken % parties;
        if partial != 0 && !self.barrier.is_broken() {
            return Err(BarrierInUse {
                episode: taken / parties,
                arrived: partial as usize,
                parties: parties as usize,
            });
        }
        for (rank, slot) in self.slots.iter().enumerate() {
            let owed = taken / parties + u64::from((rank as u64) < partial);
            // Holding the lock, every call counted in `calls` has unlocked the slot, its last
            // touch of this barrier. A ticket-holder that has not locked its slot yet is between
            // its `fetch_add` and its `lock`: a few instructions, so yielding until it is done
            // ends soon.
            while slot.lock().unwrap_or_else(PoisonError::into_inner).calls < owed {
                yield_now();
            }
        }
        Ok(())
    }

    /// The number of calls that complete an episode.
    pub fn parties(&self) -> usize {
        self.barrier.parties()
    }

    /// The algorithm running (never `Auto`: this is what `Auto` resolved to).
    pub fn algorithm(&self) -> Algorithm {
        self.barrier.algorithm()
    }

    /// The wait policy in force, after `PHASERS_WAIT`'s override.
    pub fn wait_policy(&self) -> WaitPolicy {
        self.barrier.wait_policy()
    }

    /// Whether a completion action panicked, so that waits return [`Error::Broken`].
    pub fn is_broken(&self) -> bool {
        self.barrier.is_broken()
    }
}

impl<A: BarrierAlgorithm> fmt::Debug for AnyThreadBarrier<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyThreadBarrier")
            .field("parties", &self.parties())
            .field("algorithm", &self.algorithm())
            .field("wait_policy", &self.wait_policy())
            .field("broken", &self.is_broken())
            .field("calls_started", &self.tickets.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// [`AnyThreadBarrier::settle`] found calls waiting at an episode that needs more calls to
/// complete, so the barrier is in use and must not be destroyed (`pthread_barrier_destroy`'s
/// `EBUSY`).
///
/// ```
/// use phasers::{Algorithm, AnyThreadBarrier};
///
/// let barrier = AnyThreadBarrier::with_algorithm(2, Algorithm::Auto)?;
/// std::thread::scope(|s| {
///     let waiting = s.spawn(|| barrier.wait().unwrap());
///     // Spin until the other thread's call has arrived: then settle must refuse.
///     let busy = loop {
///         if let Err(busy) = barrier.settle() {
///             break busy;
///         }
///         std::thread::yield_now();
///     };
///     assert_eq!((busy.episode(), busy.arrived(), busy.parties()), (0, 1, 2));
///     barrier.wait().unwrap(); // completes episode 0 and releases the other thread
///     waiting.join().unwrap();
/// });
/// barrier.settle()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BarrierInUse {
    episode: u64,
    arrived: usize,
    parties: usize,
}

impl BarrierInUse {
    /// The episode that has not completed, counted from 0.
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// How many calls have arrived at it (at least 1, fewer than [`parties`](Self::parties)).
    pub fn arrived(&self) -> usize {
        self.arrived
    }

    /// How many calls complete an episode.
    pub fn parties(&self) -> usize {
        self.parties
    }
}

impl fmt::Display for BarrierInUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the barrier is in use: {} of its {} calls to wait have arrived at episode {}, which \
             needs {} more to complete; let that episode complete before destroying the barrier",
            self.arrived,
            self.parties,
            self.episode,
            self.parties - self.arrived
        )
    }
}

impl std::error::Error for BarrierInUse {}

impl From<BarrierInUse> for Error {
    /// An [`Error::InvalidArgument`] with the same message, for callers that use [`Error`]
    /// throughout.
    fn from(busy: BarrierInUse) -> Error {
        Error::invalid(busy.to_string())
    }
}
