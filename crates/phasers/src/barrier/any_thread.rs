//! `AnyThreadBarrier`: a barrier any thread may wait on, without a rank. The design and its
//! correctness argument are in the type's docs.

use std::fmt;
use std::sync::{PoisonError, TryLockError};
use std::task::Waker;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use super::{AnyAlgorithm, Barrier, BarrierAlgorithm, Participant, WaitResult};
use crate::error::{Error, Result};
use crate::primitive::{yield_now, AtomicU64, Condvar, Mutex, MutexGuard, Ordering};
use crate::wait::{wake_each, WaitPolicy};
use crate::Algorithm;

/// A barrier that any thread may wait on without a rank, like [`std::sync::Barrier`] and
/// `pthread_barrier_t`: every `parties` calls to [`wait`](Self::wait) complete an episode,
/// whichever threads make them.
///
/// It runs any [`Algorithm`], including the rank-based trees, by giving each call a rank from a
/// ticket counter, as described below. It costs one shared
/// `fetch_add` and an uncontended lock per call on top of the algorithm's own wait, so when each
/// thread has a fixed rank, [`Barrier`] with its [`Participant`]s is faster, and its timeouts can
/// be retried, where a timed wait here breaks the barrier (see below).
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
/// - **A timed wait that gives up breaks exactly the episodes that cannot complete.** It waited as
///   slot `r`'s participant at that participant's episode `e`, so every episode before `e` had
///   completed, for everyone; dropping the participant breaks `e` and later, and wakes their
///   waiters. Its wait for the slot's lock needs no deadline: by the argument above, the holder's
///   episode already has all its calls, so it completes (or breaks) without any new call.
///
/// The hot path adds one `fetch_add` on the ticket line and an uncontended lock and unlock of the
/// caller's own slot to the algorithm's wait.
///
/// # A timed wait that gives up breaks the barrier
///
/// [`wait_timeout`](Self::wait_timeout) and [`wait_deadline`](Self::wait_deadline) follow
/// `java.util.concurrent.CyclicBarrier`: a call that gives up returns [`Error::Timeout`] and
/// **breaks the barrier**, so that every other call waiting at that episode, and every later call,
/// returns [`Error::Broken`] at once instead of waiting. Build a new barrier to go on.
///
/// A call cannot give up quietly and let the others go on, because its arrival cannot be
/// withdrawn: none of the algorithms can take an arrival back, and the call has already counted
/// towards its episode. Had it been kept, the next call to take the slot would complete the old
/// arrival instead of adding its own, and `n` calls would no longer complete an episode. (A
/// [`Participant`]'s timed wait keeps its arrival for the same handle to resume; anonymous calls
/// have no handle to resume with.)
///
/// ```
/// use std::time::Duration;
/// use phasers::{AnyThreadBarrier, Error};
///
/// let barrier = AnyThreadBarrier::new(2);
/// // Nobody else comes: the timed wait gives up, 1 call of 2 having arrived...
/// let err = barrier.wait_timeout(Duration::from_millis(10)).unwrap_err();
/// assert!(matches!(err, Error::Timeout { ref missing, .. } if missing.len() == 1));
/// // ...and breaks the barrier: every later call returns at once instead of waiting.
/// assert!(barrier.is_broken());
/// assert!(matches!(barrier.wait(), Err(Error::Broken { .. })));
/// ```
///
/// # Async tasks
///
/// [`wait_async`](Self::wait_async) is the same call for an async task. A task cannot hold the
/// slot's lock across its polls, so it takes its rank's participant out of the slot for its wait
/// and puts it back when done; a later call of the rank waits for it as it waits for a blocking
/// holder to unlock, and the argument above is unchanged (the holder's episode has every call
/// already, so its task is woken and gives the participant back without any new call). Dropping
/// such a future before it completed breaks the barrier, as a timed wait that gives up does, and
/// for the same reason.
///
/// # Destroying
///
/// [`settle`](AnyThreadBarrier::settle) is what `pthread_barrier_destroy` needs: it returns once
/// every call of a completed episode has left `wait` (so the memory may be freed), or reports
/// [`BarrierInUse`] when some call waits at an episode that has not completed.
pub struct AnyThreadBarrier<A: BarrierAlgorithm = AnyAlgorithm> {
    /// How many calls to `wait` have started; call `t` takes rank `t % parties`.
    pub(super) tickets: CachePadded<AtomicU64>,
    /// One slot per rank, each on its own cache lines.
    pub(super) slots: Box<[CachePadded<SlotLock<A>>]>,
    /// Per rank, the async calls dropped after taking a ticket of that rank and before taking
    /// its participant (see `any_thread_future.rs`): counted here rather than in the slot's
    /// `calls`, whose lock such a drop must not wait for, so that `settle` knows they left.
    pub(super) abandoned: Box<[AtomicU64]>,
    /// The barrier the participants belong to, for its parties, algorithm and broken state.
    pub(super) barrier: Barrier<A>,
}

/// A rank's slot, and the condition its calls wait on while an async call has the participant
/// (they park there rather than yield for as long as the task takes to be polled).
pub(super) struct SlotLock<A: BarrierAlgorithm> {
    pub(super) slot: Mutex<Slot<A>>,
    /// Notified when an async call gives the participant back, or loses it (see
    /// `any_thread_future.rs`).
    pub(super) returned: Condvar,
}

impl<A: BarrierAlgorithm> SlotLock<A> {
    fn new(slot: Slot<A>) -> Self {
        SlotLock {
            slot: Mutex::new(slot),
            returned: Condvar::new(),
        }
    }

    /// Puts the participant of an async call back (`Ok`), or the error of its loss, and wakes the
    /// calls waiting for it: threads on the condition, tasks through their wakers (outside the
    /// lock, as `wait/wakers.rs` does; a `wake` that panics does not keep the others asleep).
    pub(super) fn give_back(&self, participant: Result<Participant<A>>) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        debug_assert!(matches!(slot.participant, Ok(None)));
        slot.participant = participant.map(Some);
        let queued = std::mem::take(&mut slot.queued);
        drop(slot);
        self.returned.notify_all();
        wake_each(queued);
    }
}

/// One rank's participant and how many calls have taken it.
pub(super) struct Slot<A: BarrierAlgorithm> {
    /// The rank's participant; `None` while an async call has it (see `any_thread_future.rs`),
    /// which gives it back when it is done; or, once a timed wait on it gave up and dropped it
    /// (which broke the barrier), the error that every later call on this slot returns.
    pub(super) participant: Result<Option<Participant<A>>>,
    /// Calls that have taken this slot's participant. Counted as soon as the call has it, so
    /// whoever holds the lock while the participant is in the slot knows that every counted call
    /// has left (see `settle`).
    pub(super) calls: u64,
    /// The wakers of tasks whose call is queued for this rank while an async call has the
    /// participant: [`SlotLock::give_back`] wakes them. A task stores its waker under the lock in
    /// which it found the participant lent, and the give-back takes the wakers under the same
    /// lock, so none is missed. A queued future dropped before then leaves its waker here until
    /// that give-back, which wakes its task once for nothing.
    pub(super) queued: Vec<Waker>,
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
        let abandoned = (0..parties).map(|_| AtomicU64::new(0)).collect();
        let slots = participants
            .into_iter()
            .map(|participant| {
                CachePadded::new(SlotLock::new(Slot {
                    participant: Ok(Some(participant)),
                    calls: 0,
                    queued: Vec::new(),
                }))
            })
            .collect();
        Ok(AnyThreadBarrier {
            tickets: CachePadded::new(AtomicU64::new(0)),
            slots,
            abandoned,
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
    /// ```
    /// use phasers::AnyThreadBarrier;
    ///
    /// let barrier = AnyThreadBarrier::new(2);
    /// let (mine, theirs) = std::thread::scope(|s| {
    ///     let other = s.spawn(|| barrier.wait());
    ///     (barrier.wait(), other.join().unwrap())
    /// });
    /// let (mine, theirs) = (mine?, theirs?);
    /// assert_eq!((mine.episode(), theirs.episode()), (0, 0));
    /// assert!(mine.is_leader() != theirs.is_leader()); // exactly one leads
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when a completion action panicked, a timed wait gave up (see
    /// [`wait_timeout`](Self::wait_timeout)) or an unfinished [`wait_async`](Self::wait_async)
    /// was dropped, so the barrier cannot be relied on any more: every
    /// later call returns it too, without blocking.
    #[inline]
    pub fn wait(&self) -> Result<WaitResult> {
        self.wait_until(None)
    }

    /// As [`wait`](Self::wait), giving up after `timeout`; a call that gives up **breaks the
    /// barrier**, as in `java.util.concurrent.CyclicBarrier`. A timeout too long for the clock to
    /// hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// The arrival of a call cannot be withdrawn (see the [type docs](AnyThreadBarrier)), so a call
    /// that gives up leaves its episode unable to complete: it drops its rank's participant, which
    /// breaks the barrier from that episode on. Every other call waiting at the episode then
    /// returns [`Error::Broken`] within milliseconds, and so does every later call, without
    /// blocking. Build a new barrier to go on. (A last call that arrives in the instant between
    /// the timeout and the break still completes the episode for the others, as for
    /// [`Error::Broken`] in general; the call that gave up reports the timeout all the same.)
    ///
    /// When every call of the episode had arrived by the deadline and only the release was still on
    /// its way (tree algorithms release in steps), the wait completes instead: the episode needs no
    /// further call. The timeout covers the wait for the other calls of this episode; a call first
    /// waits, without a deadline, for the previous call of its rank to leave, which needs no
    /// further call either.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{AnyThreadBarrier, Error};
    ///
    /// let barrier = AnyThreadBarrier::new(2);
    /// std::thread::scope(|s| {
    ///     let other = s.spawn(|| barrier.wait_timeout(Duration::from_secs(10)));
    ///     assert_eq!(barrier.wait_timeout(Duration::MAX)?.episode(), 0); // both came in time
    ///     assert_eq!(other.join().unwrap()?.episode(), 0);
    ///     Ok::<(), Error>(())
    /// })?;
    /// // Alone at episode 1: this call gives up and breaks the barrier.
    /// assert!(matches!(
    ///     barrier.wait_timeout(Duration::from_millis(10)),
    ///     Err(Error::Timeout { episode: 1, .. })
    /// ));
    /// assert!(matches!(barrier.wait(), Err(Error::Broken { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] when the call gave up: `episode` is the episode it waited for, counted
    /// from 0, and `missing` has one entry per call that had not arrived, so
    /// `parties() - missing.len()` calls (this one included) had arrived of
    /// [`parties`](Self::parties). (Its entries are internal ranks, which mean nothing to anonymous
    /// callers, and, unlike a [`Participant`]'s timeout, this one cannot be resumed: the barrier
    /// is broken.) Otherwise as [`wait`](Self::wait): [`Error::Broken`] when the barrier is broken.
    pub fn wait_timeout(&self, timeout: Duration) -> Result<WaitResult> {
        // Saturating, as `Participant::wait_timeout`: an end no `Instant` can hold never comes.
        self.wait_until(Instant::now().checked_add(timeout))
    }

    /// As [`wait_timeout`](Self::wait_timeout), giving up at `deadline`: a call that gives up
    /// **breaks the barrier**, and every other current and later call returns [`Error::Broken`].
    ///
    /// A deadline already past still arrives: it completes the episode if this call is the last
    /// to arrive, and otherwise gives up at once.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{AnyThreadBarrier, Error};
    ///
    /// let barrier = AnyThreadBarrier::new(1);
    /// // A barrier of one: the only call completes its episode, whatever the deadline.
    /// assert!(barrier.wait_deadline(Instant::now())?.is_leader());
    ///
    /// let pair = AnyThreadBarrier::new(2);
    /// let past = Instant::now() - Duration::from_millis(1);
    /// assert!(matches!(pair.wait_deadline(past), Err(Error::Timeout { episode: 0, .. })));
    /// assert!(pair.is_broken());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait_timeout`](Self::wait_timeout).
    pub fn wait_deadline(&self, deadline: Instant) -> Result<WaitResult> {
        self.wait_until(Some(deadline))
    }

    /// The wait behind `wait`, `wait_timeout` and `wait_deadline`; `None` waits without a deadline.
    #[inline]
    fn wait_until(&self, deadline: Option<Instant>) -> Result<WaitResult> {
        // Relaxed: the ticket only chooses a slot. Everything that must be ordered is ordered by
        // the slot's lock and the barrier itself (see `settle` for the one reader of the count).
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        let rank = (ticket % self.slots.len() as u64) as usize;
        // The lock is taken without a deadline: its holder is the previous call of this rank,
        // whose episode has every call already (its tickets were all taken before this one), so
        // it completes or breaks without waiting for anyone new.
        let mut slot = self.lock_slot(rank)?;
        let Ok(Some(participant)) = &mut slot.participant else {
            unreachable!("lock_slot returns a slot holding its participant")
        };
        let Some(deadline) = deadline else {
            return participant.wait();
        };
        match participant.wait_deadline(deadline) {
            // Every call of the episode has arrived (the roster only under-reports arrivals), so
            // the release needs nobody else: finish the wait rather than break an episode that is
            // completing.
            Err(Error::Timeout { missing, .. }) if missing.is_empty() => participant.wait(),
            Err(Error::Timeout {
                episode, missing, ..
            }) => {
                // The arrival cannot be withdrawn, so the episode cannot complete as counted:
                // dropping the participant breaks the barrier from `episode` on (the mechanism a
                // lost `Participant` uses), and every waiter there is woken with `Error::Broken`.
                // Later calls on this slot find the error in its place.
                let lost = std::mem::replace(
                    &mut slot.participant,
                    Err(Error::Broken { by: rank, episode }),
                );
                drop(lost);
                Err(Error::Timeout {
                    episode,
                    missing,
                    resumable: false,
                })
            }
            done => done,
        }
    }

    /// Locks slot `rank` once its participant is in it. An async call of this rank may have it
    /// (see `any_thread_future.rs`): its episode, like a blocking holder's, has every call
    /// already, so it gives the participant back without waiting for anyone new, once its task is
    /// polled; meanwhile this call sleeps on the slot's condition, which the give-back notifies.
    /// The error of a slot whose participant was lost (a timed wait gave up, or an async call was
    /// dropped, breaking the barrier). Either way the call is counted in the slot's `calls`.
    fn lock_slot(&self, rank: usize) -> Result<MutexGuard<'_, Slot<A>>> {
        let lock = &self.slots[rank];
        // A poisoned slot means a completion action panicked in an earlier wait on this slot;
        // that panic broke the barrier, and the participant reports `Error::Broken` rather than
        // this call panicking too.
        let mut slot = lock.slot.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            match &slot.participant {
                Ok(Some(_)) => {
                    slot.calls += 1;
                    return Ok(slot);
                }
                Err(lost) => {
                    let lost = lost.clone();
                    slot.calls += 1;
                    return Err(lost);
                }
                Ok(None) => {
                    slot = lock
                        .returned
                        .wait(slot)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    /// Waits until every call of a completed episode has left [`wait`](Self::wait), so that the
    /// barrier can be destroyed: what `pthread_barrier_destroy` needs when the thread that
    /// returned first destroys the barrier while the others are still on their way out.
    ///
    /// It accounts for the calls that started before it. A call that starts while it runs makes it
    /// count again: it then reports the barrier in use, never waits for that call's episode
    /// (destroying a barrier that threads still use is a bug in any case).
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
        'count: loop {
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
                // touch of this barrier. A ticket-holder counted in `taken` that has not unlocked
                // yet is between its `fetch_add` and its return: yielding until it is done ends
                // soon. A call that took its ticket after the load above may hold the lock for a
                // whole wait, so a held lock is never waited on blindly: once the ticket count
                // moves, the barrier is counted again (and is then in use).
                loop {
                    // A participant out with an async call (`Ok(None)`) is still in use by a
                    // counted call: not settled yet.
                    let settled = |slot: &Slot<A>| {
                        (!matches!(slot.participant, Ok(None))).then_some(slot.calls)
                    };
                    let calls = match slot.slot.try_lock() {
                        Ok(guard) => settled(&guard),
                        Err(TryLockError::Poisoned(poisoned)) => settled(&poisoned.into_inner()),
                        Err(TryLockError::WouldBlock) => None,
                    };
                    // Acquire: pairs with the dropped call's increment, its last touch.
                    let abandoned = self.abandoned[rank].load(Ordering::Acquire);
                    if calls.is_some_and(|calls| calls + abandoned >= owed) {
                        break;
                    }
                    if self.tickets.load(Ordering::Relaxed) != taken {
                        continue 'count;
                    }
                    yield_now();
                }
            }
            return Ok(());
        }
    }

    /// The number of calls that complete an episode.
    ///
    /// ```
    /// use phasers::{Algorithm, AnyThreadBarrier};
    ///
    /// let barrier = AnyThreadBarrier::with_algorithm(3, Algorithm::Dissemination)?;
    /// assert_eq!(barrier.parties(), 3);
    /// assert_eq!(AnyThreadBarrier::new(0).parties(), 1); // std's rule: 0 parties is 1
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.barrier.parties()
    }

    /// The algorithm running (never `Auto`: this is what `Auto` resolved to).
    ///
    /// ```
    /// use phasers::{Algorithm, AnyThreadBarrier};
    ///
    /// let mcs = AnyThreadBarrier::with_algorithm(4, Algorithm::McsTree)?;
    /// assert_eq!(mcs.algorithm(), Algorithm::McsTree);
    /// assert_ne!(AnyThreadBarrier::new(4).algorithm(), Algorithm::Auto);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn algorithm(&self) -> Algorithm {
        self.barrier.algorithm()
    }

    /// The wait policy in force, after `PHASERS_WAIT`'s override.
    ///
    /// ```
    /// use phasers::{AnyThreadBarrier, Barrier, WaitPolicy};
    ///
    /// let barrier = Barrier::builder(2).wait_policy(WaitPolicy::Park).build()?;
    /// let barrier = AnyThreadBarrier::from_barrier(barrier)?; // the policy carries over
    /// if std::env::var_os("PHASERS_WAIT").is_none() {
    ///     assert_eq!(barrier.wait_policy(), WaitPolicy::Park);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_policy(&self) -> WaitPolicy {
        self.barrier.wait_policy()
    }

    /// Whether a completion action panicked or a timed wait gave up, so that waits return
    /// [`Error::Broken`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::AnyThreadBarrier;
    ///
    /// let barrier = AnyThreadBarrier::new(2);
    /// assert!(!barrier.is_broken());
    /// assert!(barrier.wait_timeout(Duration::from_millis(1)).is_err()); // alone: it gives up
    /// assert!(barrier.is_broken());
    /// ```
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
    ///
    /// ```
    /// use phasers::AnyThreadBarrier;
    ///
    /// let barrier = AnyThreadBarrier::new(2);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait().unwrap());
    ///     barrier.wait().unwrap(); // episode 0 completes
    /// });
    /// std::thread::scope(|s| {
    ///     let waiting = s.spawn(|| barrier.wait().unwrap());
    ///     // Retry until the other call has arrived at episode 1.
    ///     let busy = loop {
    ///         if let Err(busy) = barrier.settle() { break busy; }
    ///         std::thread::yield_now();
    ///     };
    ///     assert_eq!(busy.episode(), 1);
    ///     barrier.wait().unwrap();
    ///     waiting.join().unwrap();
    /// });
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// How many calls have arrived at it (at least 1, fewer than [`parties`](Self::parties)).
    ///
    /// ```
    /// use phasers::AnyThreadBarrier;
    ///
    /// let barrier = AnyThreadBarrier::new(3);
    /// std::thread::scope(|s| {
    ///     let waiting = s.spawn(|| barrier.wait().unwrap());
    ///     // Retry until the other call has arrived: 1 of 3.
    ///     let busy = loop {
    ///         if let Err(busy) = barrier.settle() { break busy; }
    ///         std::thread::yield_now();
    ///     };
    ///     assert_eq!((busy.arrived(), busy.parties()), (1, 3));
    ///     s.spawn(|| barrier.wait().unwrap());
    ///     barrier.wait().unwrap(); // the third call completes the episode
    ///     waiting.join().unwrap();
    /// });
    /// ```
    pub fn arrived(&self) -> usize {
        self.arrived
    }

    /// How many calls complete an episode.
    ///
    /// ```
    /// use phasers::AnyThreadBarrier;
    ///
    /// let barrier = AnyThreadBarrier::new(2);
    /// std::thread::scope(|s| {
    ///     let waiting = s.spawn(|| barrier.wait().unwrap());
    ///     let busy = loop {
    ///         if let Err(busy) = barrier.settle() { break busy; }
    ///         std::thread::yield_now();
    ///     };
    ///     assert_eq!(busy.parties(), barrier.parties());
    ///     barrier.wait().unwrap();
    ///     waiting.join().unwrap();
    /// });
    /// ```
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
