//! A non-blocking collective in progress.

use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use super::call::Call;
use super::engine::Until;
use super::member::Member;
use crate::error::{Error, Result};
use crate::wait::{watch_task, Deadline, StoredWaker, TaskPoll};

/// A collective started by one of [`Member`]'s `i`-methods (`ibroadcast`, `iallreduce`, ...).
///
/// It borrows the member and the call's buffers until it is dropped, so neither can be used
/// (nor the outputs read) before the call is over: misuse fails to compile. The call makes
/// progress only in this member's own calls to [`test`](Self::test), [`wait`](Self::wait),
/// [`wait_timeout`](Self::wait_timeout), [`wait_deadline`](Self::wait_deadline) and, in an async
/// task, the polls of [`wait_async`](Self::wait_async)'s future: there is no background thread.
/// Members may wait in any order; the call completes once every member has started it and each
/// has tested or waited until done. A `Pending` is `Send` (an `i`-method's operator must be), so
/// an async task may hold it across an `.await`.
///
/// `wait_timeout` is how a collective's wait is bounded: `member.ibarrier()?.wait_timeout(d)`
/// returns [`Error::Timeout`](crate::Error::Timeout) if the others have not all come within `d`,
/// and leaves the call pending, to be finished by a later `wait`, `test` or `wait_timeout`.
///
/// Inputs are copied into the team when the call starts, so others never read the caller's
/// buffers after `i`-method returns; only the caller writes its outputs, during `test` or `wait`.
///
/// Dropping an unfinished `Pending` waits for the call to end (and discards its error). If the
/// handle is leaked instead (`std::mem::forget`), the outputs are never written and the member's
/// next call finishes this one first.
///
/// ```
/// use phasers::{Op, Team};
///
/// let team = Team::new(2)?;
/// let sums: Vec<u64> = std::thread::scope(|s| {
///     let handles: Vec<_> = team
///         .participants()
///         .into_iter()
///         .map(|mut m| s.spawn(move || {
///             let input = [m.rank() as u64 + 1; 100];
///             let mut output = [0u64; 100];
///             let mut pending = m.iallreduce(&input, &mut output, Op::Sum).unwrap();
///             while !pending.test().unwrap() {
///                 // ... overlap other work here ...
///             }
///             pending.wait().unwrap();
///             output[99]
///         }))
///         .collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(sums, vec![3, 3]);
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a collective completes only through test() or wait() (or when dropped)"]
pub struct Pending<'a, T: Copy + Send + 'static> {
    member: &'a mut Member,
    call: Call<'a, T>,
    outcome: Option<Result<()>>,
}

// SAFETY: the fields that are not `Send` by themselves are the call's raw parts: its buffers,
// borrowed for `'a` as `&[T]` and `&mut [T]` with `T: Copy + Send` (the input is only ever copied
// from, by value, and the outputs written with values of `T`; the team's other members already do
// both from their own threads), and its operator, which the `i`-methods make only as a built-in
// kernel (`Send` and `Sync`) or an owned `Send` closure (`Combiner::Owned`), never as the
// borrowed one of the blocking forms (asserted in `start`). So the call can go on from another
// thread, as an async task's may.
unsafe impl<T: Copy + Send + 'static> Send for Pending<'_, T> {}

impl<'a, T: Copy + Send + 'static> Pending<'a, T> {
    pub(crate) fn start(member: &'a mut Member, call: Call<'a, T>) -> Result<Self> {
        debug_assert!(
            !matches!(call.op, Some(super::combiner::Combiner::Borrowed(_))),
            "a pending call owns its operator (see the `Send` impl)"
        );
        member.start(&call, true)?;
        Ok(Pending {
            member,
            call,
            outcome: None,
        })
    }

    /// Makes what progress is possible without waiting. Returns `Ok(true)` once the call is over
    /// and its outputs are written, `Ok(false)` while it is not.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = phasers::Team::new(2)?;
    /// let (mut first, mut second) = (team.participant(0)?, team.participant(1)?);
    /// let mut early = first.ibarrier()?;
    /// assert!(!early.test()?); // member 1 has not started the barrier yet
    /// let mut late = second.ibarrier()?;
    /// assert!(late.test()? && early.test()?);
    /// assert!(early.test()?); // and it stays over
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The call's error, as the blocking form would return it; every later `test` or `wait`
    /// returns it again. That includes [`Error::Broken`](crate::Error::Broken) once a member the
    /// call still waits for is dropped or panics, so a polling loop ends:
    ///
    /// ```
    /// use phasers::{Error, Team};
    ///
    /// let team = Team::new(2)?;
    /// let (mut first, second) = (team.participant(0)?, team.participant(1)?);
    /// let mut pending = first.ibarrier()?;
    /// assert!(!pending.test()?); // member 1 has not started the barrier
    /// drop(second); // and never will
    /// assert!(matches!(pending.test(), Err(Error::Broken { by: 1, .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<bool> {
        if self.outcome.is_none() {
            self.outcome = self.member.progress(&self.call, Until::NoWait);
        }
        match &self.outcome {
            None => Ok(false),
            Some(outcome) => outcome.clone().map(|()| true),
        }
    }

    /// Waits until the call is over and returns its result.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = phasers::Team::new(2)?;
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let mut buffer = [m.rank() as u8 + 1; 4]; // the root's, member 1's: [2; 4]
    ///             m.ibroadcast(1, &mut buffer).unwrap().wait().unwrap();
    ///             assert_eq!(buffer, [2; 4]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As the blocking form of the collective.
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    /// As [`wait`](Self::wait), giving up after `timeout`: this is how a collective's wait is
    /// bounded, as in `member.ibarrier()?.wait_timeout(d)`. A timeout too long for the clock to
    /// hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// When it gives up, the call is still pending: nothing is undone, and [`wait`](Self::wait),
    /// [`test`](Self::test) or another `wait_timeout` finishes it (so does dropping the handle,
    /// however long that takes). Once the call is over, every later call returns its outcome
    /// again, as `test` does. It waits as `wait` does (spin, yield, then park, as the team's
    /// [`WaitPolicy`](crate::WaitPolicy) says), with the deadline passed to the same wait; it
    /// does not poll.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Error, Team};
    ///
    /// let team = Team::new(2)?;
    /// let (mut first, mut late) = (team.participant(0)?, team.participant(1)?);
    /// let mut pending = first.ibarrier()?;
    /// // Member 1 has not started the barrier, so the wait gives up and names it...
    /// let waited = pending.wait_timeout(Duration::from_millis(10));
    /// assert!(matches!(waited, Err(Error::Timeout { missing, .. }) if missing == [1]));
    /// // ...and the barrier is still pending: once member 1 comes, waiting again completes it.
    /// std::thread::scope(|s| {
    ///     s.spawn(move || late.ibarrier().unwrap().wait().unwrap());
    ///     pending.wait_timeout(Duration::from_secs(10))
    /// })?;
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`](crate::Error::Timeout) when `timeout` passes first: its `episode` is
    /// the call's number on this team (counting from 0) and `missing` the members that had not
    /// started the call (empty when all had, and the call's completion had not yet reached this
    /// member). Otherwise as the blocking form of the collective.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<()> {
        self.wait_until(Deadline::after(timeout))
    }

    /// As [`wait_timeout`](Self::wait_timeout), giving up at `deadline`. A deadline already
    /// past still completes a call that is ready, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::new(3)?;
    /// let deadline = Instant::now() + Duration::from_secs(10); // one deadline for every member
    /// std::thread::scope(|s| {
    ///     for mut m in team.participants() {
    ///         s.spawn(move || {
    ///             let (mine, mut max) = ([m.rank() as u32], [0u32]);
    ///             let mut pending = m.iallreduce(&mine, &mut max, Op::Max).unwrap();
    ///             pending.wait_deadline(deadline).unwrap();
    ///             drop(pending); // it borrows `max` until dropped
    ///             assert_eq!(max, [2]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait_timeout`](Self::wait_timeout).
    pub fn wait_deadline(&mut self, deadline: Instant) -> Result<()> {
        self.wait_until(Deadline::At(deadline))
    }

    /// Takes the call as far as `deadline` allows; the call's outcome once it is over, else a
    /// timeout that leaves it in progress.
    fn wait_until(&mut self, deadline: Deadline) -> Result<()> {
        if self.outcome.is_none() {
            self.outcome = self.member.progress(&self.call, Until::Deadline(deadline));
        }
        match &self.outcome {
            Some(outcome) => outcome.clone(),
            None => Err(self.member.timed_out()),
        }
    }

    /// One poll of [`wait_async`](Self::wait_async)'s future: the call taken as far as it goes
    /// without waiting, the task's waker stored on the signal it stopped at (in `stored`).
    pub(crate) fn poll_wait(
        &mut self,
        waker: &Waker,
        stored: &mut Option<StoredWaker>,
    ) -> Poll<Result<()>> {
        if self.outcome.is_none() {
            let task = TaskPoll::new(waker, stored, None);
            self.outcome = self
                .member
                .progress(&self.call, Until::Deadline(task.deadline()));
        }
        match &self.outcome {
            Some(outcome) => Poll::Ready(outcome.clone()),
            None => {
                // The task waits in this call (the member counted it when it began, so its
                // number is one less): the stall watchdog watches it.
                watch_task(&self.member.shared, self.member.seq.saturating_sub(1));
                Poll::Pending
            }
        }
    }

    /// The error of a task's wait whose deadline passed while [`poll_wait`](Self::poll_wait)
    /// left the call in progress: the blocking timed wait's.
    #[cold]
    pub(crate) fn timed_out(&self) -> Error {
        self.member.timed_out()
    }

    /// Drops the waker a task left stored on one of the team's signals, if any.
    pub(crate) fn forget_waker(&self, stored: &mut Option<StoredWaker>) {
        if let Some(stored) = stored.take() {
            // SAFETY: `stored` was filled by `poll_wait` on this call, so its signal is one of
            // this member's team's, which the member (borrowed here) keeps alive.
            unsafe { stored.forget() };
        }
    }

    fn finish(&mut self) -> Result<()> {
        if self.outcome.is_none() {
            self.outcome = self.member.progress(&self.call, Until::END);
        }
        self.outcome.clone().unwrap_or(Ok(()))
    }
}

impl<T: Copy + Send + 'static> Drop for Pending<'_, T> {
    fn drop(&mut self) {
        if self.outcome.is_none() {
            let _ = self.finish();
        }
    }
}

impl<T: Copy + Send + 'static> std::fmt::Debug for Pending<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("member", &self.member.rank)
            .field("done", &self.outcome.is_some())
            .finish()
    }
}
