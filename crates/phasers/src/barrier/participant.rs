//! `Participant`: one rank's handle on a barrier.

use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use super::episode::{BreakOnPanic, Episode, Parts};
use super::shared::{Barrier, Shared};
use super::{AnyAlgorithm, BarrierAlgorithm};
use crate::error::{Error, Result};
use crate::primitive::Arc;
use crate::wait::{watch_task, BatchedWakes, Deadline, SpinBudget, Stop, StoredWaker, TaskPoll};

/// What a completed wait reports.
///
/// ```
/// use phasers::{Algorithm, Barrier};
///
/// let barrier = Barrier::with_algorithm(1, Algorithm::Tournament)?;
/// let mut only = barrier.participant(0)?;
/// let first = only.wait()?;
/// let second = only.wait()?;
/// assert_eq!((first.episode(), second.episode()), (0, 1));
/// assert!(first.is_leader() && second.is_leader());
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WaitResult {
    episode: u64,
    leader: bool,
}

impl WaitResult {
    /// The episode that completed, counted from 0 for each barrier.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(1, Algorithm::Counting)?;
    /// let mut only = barrier.participant(0)?;
    /// for expected in 0..3 {
    ///     assert_eq!(only.wait()?.episode(), expected);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Whether this participant was the episode's leader: exactly one participant per episode is,
    /// and it ran the completion action. Which rank leads depends on the algorithm (see the
    /// [module docs](crate::barrier)).
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Tournament)?;
    /// let mut handles = barrier.participants();
    /// let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
    /// let (ours, theirs) = std::thread::scope(|s| {
    ///     let other = s.spawn(move || second.wait());
    ///     (first.wait(), other.join().unwrap())
    /// });
    /// // The tournament's champion, rank 0, leads every episode.
    /// assert!(ours?.is_leader() && !theirs?.is_leader());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_leader(&self) -> bool {
        self.leader
    }
}

/// One participant's handle on a [`Barrier`](super::Barrier).
///
/// The handle carries the rank and the participant's private state, so the hot path never looks
/// up a thread. It is `Send` but used by one thread at a time (`&mut self`).
///
/// # Dropping
///
/// A participant that is dropped without [`leave`](Self::leave) (most importantly, during a panic)
/// breaks the barrier from its next episode on: the others' waits for that episode return
/// [`Error::Broken`] within milliseconds instead of hanging. Waits for episodes it had already
/// completed are unaffected.
///
/// ```
/// use std::time::Duration;
/// use phasers::{Algorithm, Barrier, Error};
///
/// let barrier = Barrier::with_algorithm(2, Algorithm::McsTree)?;
/// let mut handles = barrier.participants();
/// let mut second = handles.pop().unwrap();
/// let mut first = handles.pop().unwrap();
///
/// // Rank 1 has not arrived: the wait gives up and says who is missing...
/// match first.wait_timeout(Duration::from_millis(10)) {
///     Err(Error::Timeout { missing, .. }) => assert_eq!(missing, vec![1]),
///     other => panic!("expected a timeout, got {other:?}"),
/// }
/// // ...but rank 0's arrival stays in place, so the episode completes once rank 1 comes.
/// std::thread::scope(|s| {
///     s.spawn(|| second.wait().unwrap());
///     first.wait().unwrap();
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
pub struct Participant<A: BarrierAlgorithm = AnyAlgorithm> {
    shared: Arc<Shared<A>>,
    local: A::Local,
    rank: usize,
    episode: u64,
    pending: bool,
    left: bool,
    spin_budget: SpinBudget,
}

// How a barrier hands out its participants: beside the handle it hands out, so that `shared.rs`
// need not import this file.
impl<A: BarrierAlgorithm> Barrier<A> {
    /// The handles of every rank not yet handed out, in rank order: all `parties` of them on the
    /// first call, none after that.
    ///
    /// Each handle is `Send`; move one into each thread.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(3, Algorithm::Counting)?;
    /// let handles = barrier.participants();
    /// let ranks: Vec<usize> = handles.iter().map(|p| p.rank()).collect();
    /// assert_eq!(ranks, [0, 1, 2]);
    /// assert!(barrier.participants().is_empty()); // every rank was handed out
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn participants(&self) -> Vec<Participant<A>> {
        (0..self.shared.parties)
            .filter_map(|rank| self.participant(rank).ok())
            .collect()
    }

    /// The handle of one rank.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `rank` is not below [`parties`](Self::parties) or its handle
    /// was already handed out (two handles for one rank would corrupt the barrier).
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, Error};
    ///
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Counting)?;
    /// assert_eq!(barrier.participant(1)?.rank(), 1);
    /// // Rank 1's handle is out, and there is no rank 2.
    /// assert!(matches!(barrier.participant(1), Err(Error::InvalidArgument { .. })));
    /// assert!(matches!(barrier.participant(2), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn participant(&self, rank: usize) -> Result<Participant<A>> {
        self.shared.claim(rank)?;
        Ok(Participant::new(Arc::clone(&self.shared), rank))
    }
}

impl<A: BarrierAlgorithm> Participant<A> {
    pub(crate) fn new(shared: Arc<Shared<A>>, rank: usize) -> Self {
        let local = shared.algorithm.local(rank);
        let spin_budget = SpinBudget::new(shared.plan);
        Participant {
            spin_budget,
            shared,
            local,
            rank,
            episode: 0,
            pending: false,
            left: false,
        }
    }

    /// This participant's rank, from 0 to `parties - 1`.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(3, Algorithm::Counting)?;
    /// assert_eq!(barrier.participant(2)?.rank(), 2);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many participants the barrier was built for, the same as
    /// [`Barrier::parties`](super::Barrier::parties); a [`leave`](Self::leave) does not change it.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(3, Algorithm::Counting)?;
    /// for p in barrier.participants() {
    ///     assert_eq!(p.parties(), 3);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.parties
    }

    /// The episode this participant's next (or pending) wait completes.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(1, Algorithm::Ticket)?;
    /// let mut only = barrier.participant(0)?;
    /// assert_eq!(only.episode(), 0);
    /// only.wait()?;
    /// assert_eq!(only.episode(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Whether an earlier wait timed out after arriving: the next wait resumes that episode.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Counting)?;
    /// let mut handles = barrier.participants();
    /// let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
    /// assert!(first.wait_timeout(Duration::from_millis(1)).is_err()); // rank 1 never came
    /// assert!(first.is_pending());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| second.wait().unwrap());
    ///     assert_eq!(first.wait().unwrap().episode(), 0); // the same episode, resumed
    /// });
    /// assert!(!first.is_pending());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_pending(&self) -> bool {
        self.pending
    }

    /// Arrives at the barrier and waits until every participant has arrived.
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when a participant panicked or was dropped, so the episode can never
    /// complete; [`Error::InvalidArgument`] after [`leave`](Self::leave).
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, WaitResult};
    ///
    /// let barrier = Barrier::with_algorithm(3, Algorithm::Dissemination)?;
    /// let results: Vec<WaitResult> = std::thread::scope(|s| {
    ///     let threads: Vec<_> =
    ///         barrier.participants().into_iter().map(|mut p| s.spawn(move || p.wait())).collect();
    ///     threads.into_iter().map(|t| t.join().unwrap()).collect::<Result<_, _>>()
    /// })?;
    /// // Every participant passed episode 0, and exactly one of them led it.
    /// assert!(results.iter().all(|r| r.episode() == 0));
    /// assert_eq!(results.iter().filter(|r| r.is_leader()).count(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    // Always inlined, with the fast path under it (see `wait_until`).
    #[inline(always)]
    pub fn wait(&mut self) -> Result<WaitResult> {
        self.wait_until(Deadline::Never)
    }

    /// As [`wait`](Self::wait), giving up after `timeout`. A timeout too long for the clock to
    /// hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Algorithm, Barrier};
    ///
    /// let barrier = Barrier::with_algorithm(1, Algorithm::Counting)?;
    /// let mut only = barrier.participant(0)?;
    /// assert_eq!(only.wait_timeout(Duration::MAX)?.episode(), 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] naming the ranks that have not arrived; the arrival stays in place, so
    /// waiting again completes the same episode. Otherwise as [`wait`](Self::wait).
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<WaitResult> {
        self.wait_until(Deadline::after(timeout))
    }

    /// As [`wait`](Self::wait), giving up at `deadline`.
    ///
    /// # Errors
    ///
    /// As [`wait_timeout`](Self::wait_timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Algorithm, Barrier, Error};
    ///
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Dissemination)?;
    /// let mut first = barrier.participant(0)?; // rank 1's handle is never taken
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// match first.wait_deadline(deadline) {
    ///     Err(Error::Timeout { episode, missing, .. }) => assert_eq!((episode, missing), (0, vec![1])),
    ///     other => panic!("expected a timeout, got {other:?}"),
    /// }
    /// assert!(Instant::now() >= deadline); // it gave up at the deadline, not before
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_deadline(&mut self, deadline: Instant) -> Result<WaitResult> {
        self.wait_until(Deadline::At(deadline))
    }

    /// Arrives at the current episode without waiting, and takes no part in any later one: the
    /// barrier shrinks by one. A wait still pending after a timeout is completed first.
    ///
    /// If the leaver is the last to arrive, it is that episode's leader: it runs the completion
    /// action and releases the others, and no participant's [`WaitResult`] reports being leader.
    ///
    /// Only [`SenseReversing`](crate::Algorithm::SenseReversing) and
    /// [`Counting`](crate::Algorithm::Counting) can change their party count; see
    /// [`Algorithm::supports_leave`](crate::Algorithm::supports_leave). `Auto` may resolve to an
    /// algorithm that cannot, depending on the machine, so name one of those two when participants
    /// must leave.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier, Error};
    ///
    /// let barrier = Barrier::with_algorithm(3, Algorithm::SenseReversing)?;
    /// let mut handles = barrier.participants();
    /// let mut done = handles.pop().unwrap();
    /// done.leave()?; // rank 2 is done; its handle is spent
    /// assert!(matches!(done.wait(), Err(Error::InvalidArgument { .. })));
    /// std::thread::scope(|s| {
    ///     for mut p in handles {
    ///         s.spawn(move || for _ in 0..100 { p.wait().unwrap(); });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for algorithms with a fixed party count (the handle stays a full
    /// participant); [`Error::Broken`] when the barrier is broken; [`Error::InvalidArgument`] when
    /// this participant has already left. After a successful leave, every wait on the handle returns
    /// [`Error::InvalidArgument`], and dropping it breaks nothing.
    pub fn leave(&mut self) -> Result<()> {
        let kind = self.shared.algorithm.kind();
        if !kind.supports_leave() {
            return Err(Error::Unsupported {
                operation: "leaving",
                algorithm: kind.name(),
                hint: "its structure is fixed when it is built; use Algorithm::SenseReversing or \
                       Algorithm::Counting for a barrier that participants can leave",
            });
        }
        self.check_usable()?;
        if self.pending {
            self.wait()?;
        }
        let shared = &*self.shared;
        let episode = Episode::new(
            self.episode,
            self.rank,
            &self.spin_budget,
            Deadline::Never,
            shared.parts(),
        );
        // Recorded before the arrival, which may release the others: whoever it releases must
        // not see this rank as missing from a later episode.
        shared.roster.leave(self.rank);
        shared.algorithm.leave(&mut self.local, &episode)?;
        self.left = true;
        Ok(())
    }

    /// Whether this handle may wait: not after leaving, nor at an episode that cannot complete.
    /// The two loads are all the fast path pays; the error is made out of line.
    #[inline]
    fn check_usable(&self) -> Result<()> {
        if self.left || self.shared.broken.is_broken_for(self.episode) {
            return Err(self.unusable());
        }
        Ok(())
    }

    /// Why [`check_usable`](Self::check_usable) refused.
    #[cold]
    #[inline(never)]
    fn unusable(&self) -> Error {
        if self.left {
            return Error::invalid(format!(
                "rank {} has left this barrier and takes part in no later episode",
                self.rank
            ));
        }
        self.shared.broken_error()
    }

    /// The wait's fast path stores only what it must: the roster entry before the arrival, and
    /// the next episode after it. Every store before the arrival's locked instruction has to
    /// drain before it runs (see `episode.rs`), so `pending` is written only when it changes.
    ///
    /// Always inlined, as `wait` and the algorithm's fast path are: where the compiler made a call
    /// of this one, the call saved registers before the arrival and returned through memory, 12.3
    /// ns a wait against 10.2 ns for the bare protocol (`phasers bench barrier --threads 1,2
    /// --mode back-to-back`, AMD EPYC, 2 cores); and where it inlined this one but made a call of
    /// the algorithm's, that call stored the episode: 15.7 ns against 10.5 ns.
    #[inline(always)]
    fn wait_until(&mut self, deadline: Deadline) -> Result<WaitResult> {
        self.check_usable()?;
        let shared = &*self.shared;
        let number = self.episode;
        // Before the arrival, so that a waiter that reads the roster after it (to say who is
        // missing) does not name this rank; a resumed wait records the same value again.
        shared.roster.arrive(self.rank, number);
        let episode = Episode::new(
            number,
            self.rank,
            &self.spin_budget,
            deadline,
            shared.parts(),
        );
        match shared.algorithm.wait(&mut self.local, &episode) {
            Ok(leader) => {
                if self.pending {
                    self.pending = false;
                }
                self.episode = number + 1;
                Ok(WaitResult {
                    episode: number,
                    leader,
                })
            }
            Err(stop) => {
                // The arrival stays in place: the next wait resumes this episode.
                self.pending = true;
                Err(self.stopped(stop, number))
            }
        }
    }

    /// One poll of [`wait_async`](Self::wait_async)'s future: the blocking wait's steps, with a
    /// task's deadline (see `episode.rs`), so that every wait the algorithm makes is one poll
    /// and a condition that does not hold yet stops it as a timeout would. That stop leaves the
    /// arrival in place and the participant pending, as a timeout does, and the next poll
    /// resumes it; `stored` is where the task's waker is stored, kept by the future between polls,
    /// and `owed`, if given, where a release this poll makes leaves the task wakes it owes past a
    /// first batch (else it wakes them all at once).
    ///
    /// Separate from [`wait_until`](Self::wait_until), whose inlined fast path stays as it was.
    pub(crate) fn poll_wait(
        &mut self,
        waker: &Waker,
        stored: &mut Option<StoredWaker>,
        owed: Option<&mut BatchedWakes>,
    ) -> Poll<Result<WaitResult>> {
        self.check_usable()?;
        let shared = &*self.shared;
        let number = self.episode;
        shared.roster.arrive(self.rank, number);
        let task = TaskPoll::new(waker, stored, owed);
        let episode = Episode::new(
            number,
            self.rank,
            &self.spin_budget,
            task.deadline(),
            shared.parts(),
        );
        match shared.algorithm.wait(&mut self.local, &episode) {
            Ok(leader) => {
                self.pending = false;
                self.episode = number + 1;
                Poll::Ready(Ok(WaitResult {
                    episode: number,
                    leader,
                }))
            }
            Err(stop) => {
                // The arrival stays in place, as after a timeout: the next poll, or the next
                // wait of any kind, resumes this episode.
                self.pending = true;
                match stop {
                    // The poll has no deadline (a timed future looks at its own after this, see
                    // `barrier_future.rs`): this stop means "not yet". The task waits, so the
                    // stall watchdog watches the episode for it.
                    Stop::TimedOut => {
                        watch_task(&self.shared, number);
                        Poll::Pending
                    }
                    Stop::Broken => Poll::Ready(Err(self.stopped(stop, number))),
                }
            }
        }
    }

    /// The error of a task's wait whose deadline passed while [`poll_wait`](Self::poll_wait)
    /// left it pending at its episode: the blocking timed wait's, for the same episode.
    #[cold]
    pub(crate) fn timed_out(&self) -> Error {
        debug_assert!(self.pending, "only a wait stopped at its episode times out");
        self.stopped(Stop::TimedOut, self.episode)
    }

    /// Drops the waker a task left stored on one of this barrier's signals, if any.
    pub(crate) fn forget_waker(&self, stored: &mut Option<StoredWaker>) {
        if let Some(stored) = stored.take() {
            // SAFETY: `stored` was filled by `poll_wait` on this participant, so its signal is
            // one of this barrier's, which `self.shared` keeps alive.
            unsafe { stored.forget() };
        }
    }

    /// The error of a wait for `number` that `stop` ended.
    #[cold]
    #[inline(never)]
    fn stopped(&self, stop: Stop, number: u64) -> Error {
        match stop {
            Stop::TimedOut => Error::Timeout {
                episode: number,
                missing: self.shared.roster.missing(number),
                resumable: true,
            },
            Stop::Broken => self.shared.broken_error(),
        }
    }
}

impl<A: BarrierAlgorithm> Shared<A> {
    /// What an [`Episode`] reads of the barrier: references, made anew on each wait at no cost.
    #[inline]
    fn parts(&self) -> Parts<'_> {
        Parts {
            plan: &self.plan,
            broken: &self.broken,
            watched: self,
            completion: &self.completion,
            breaker: self,
        }
    }
}

impl<A: BarrierAlgorithm> BreakOnPanic for Shared<A> {
    fn break_from(&self, episode: u64, rank: usize) {
        Shared::break_from(self, episode, rank);
    }
}

impl<A: BarrierAlgorithm> Drop for Participant<A> {
    fn drop(&mut self) {
        if !self.left {
            self.shared.break_from(self.episode, self.rank);
        }
    }
}

impl<A: BarrierAlgorithm> std::fmt::Debug for Participant<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Participant")
            .field("rank", &self.rank)
            .field("episode", &self.episode)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}
