//! The async form of a pending collective's wait: a future that takes the call as far as it goes
//! at each poll and awaits the rest through the team's signals' wakers (see `wait/poll.rs` and
//! `Member::wait_for`), on any executor.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::pending::Pending;
use crate::error::Result;
use crate::wait::{StoredWaker, TaskDeadline};

impl<'a, T: Copy + Send + 'static> Pending<'a, T> {
    /// [`wait`](Self::wait) for an async task: a future that completes with the call's result
    /// once the call is over, without blocking the thread that polls it. Every non-blocking
    /// collective (`ibarrier`, `ibroadcast`, `iallreduce`, `igather`, `ialltoall`, `iscan_*`,
    /// ...) so has an async form: `member.iallreduce(&input, &mut output, Op::Sum)?.wait_async()
    /// .await`. It needs no runtime: any executor, or a hand-written loop, can poll it, and tasks
    /// and blocking threads can be members of one team.
    ///
    /// A task never spins: each poll takes the call through its steps as far as it can, probing
    /// each condition once, and the task is woken by whoever makes the condition it stopped at
    /// hold (or by the team breaking). It waits without a deadline unless given one with
    /// [`CollectiveFuture::timeout`] or [`CollectiveFuture::deadline`] (the async
    /// [`wait_timeout`](Self::wait_timeout)); a stall waiting for members that have not begun the
    /// call is reported by the process's stall watchdog (see [`wait`](crate::wait), *Stalls*).
    /// Where a thread's `wait` returns as soon as its outputs are written, the future also waits
    /// until the others have read this member's staged input, which a thread's next call would
    /// wait for as it starts: so the member's next `i`-method starts at once, and never blocks the
    /// task's thread waiting for tasks queued behind it. Complete a task's calls this way (not
    /// with [`test`](Self::test) or `wait`) for that to hold.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use phasers::{Op, Team};
    ///
    /// /// Wakes the thread that polls: enough of an executor for one future.
    /// struct Unpark(std::thread::Thread);
    /// impl Wake for Unpark {
    ///     fn wake(self: Arc<Self>) {
    ///         self.0.unpark();
    ///     }
    /// }
    /// fn block_on<F: Future>(future: F) -> F::Output {
    ///     let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    ///     let mut future = pin!(future);
    ///     loop {
    ///         match future.as_mut().poll(&mut Context::from_waker(&waker)) {
    ///             Poll::Ready(output) => return output,
    ///             Poll::Pending => std::thread::park(),
    ///         }
    ///     }
    /// }
    ///
    /// let team = Team::new(2)?;
    /// let mut members = team.participants();
    /// let (mut task, mut thread) = (members.pop().unwrap(), members.pop().unwrap());
    /// std::thread::scope(|s| {
    ///     s.spawn(move || {
    ///         block_on(async {
    ///             let (input, mut sums) = ([1u64, 2, 3], [0u64; 3]);
    ///             task.iallreduce(&input, &mut sums, Op::Sum)?.wait_async().await?;
    ///             assert_eq!(sums, [11, 22, 33]);
    ///             let mut all = [0u32; 2];
    ///             task.iallgather(&[1], &mut all)?.wait_async().await?;
    ///             assert_eq!(all, [0, 1]);
    ///             Ok::<(), phasers::Error>(())
    ///         })
    ///         .unwrap();
    ///     });
    ///     // A blocking thread in the same calls.
    ///     let (input, mut sums) = ([10u64, 20, 30], [0u64; 3]);
    ///     thread.iallreduce(&input, &mut sums, Op::Sum).unwrap().wait().unwrap();
    ///     assert_eq!(sums, [11, 22, 33]);
    ///     let mut all = [9u32; 2];
    ///     thread.iallgather(&[0], &mut all).unwrap().wait().unwrap();
    ///     assert_eq!(all, [0, 1]);
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Cancellation
    ///
    /// The future borrows the `Pending`, so dropping it (before it completed) cancels the wait
    /// and nothing else, as a [`wait_timeout`](Self::wait_timeout) that gave up does: the call is
    /// still pending where the last poll left it, and `wait`, `test`, `wait_timeout` or another
    /// `wait_async` finishes it; the task's waker is taken off the team. The other members are
    /// not held back by the drop beyond what an unfinished call holds them: they finish the call
    /// once this member has started it (its `i`-method) and, where they read this member's
    /// staged input, read it. Dropping the `Pending` itself still waits for the call to end, as
    /// it always does, blocking the thread: in a task, finish the call before dropping it.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::Team;
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let team = Team::new(2)?;
    /// let (mut first, mut second) = (team.participant(0)?, team.participant(1)?);
    /// let mut pending = first.ibarrier()?;
    /// {
    ///     let mut wait = pin!(pending.wait_async());
    ///     let polled = wait.as_mut().poll(&mut Context::from_waker(&waker));
    ///     assert!(polled.is_pending()); // member 1 has not started the barrier
    /// } // dropped: the call stays pending
    /// assert!(!pending.test()?);
    /// second.ibarrier()?.wait()?; // member 1 comes: the barrier completes for it...
    /// pending.wait()?; // ...and the pending call finishes it for member 0
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait), that is as the blocking form of the collective: among others
    /// [`Error::Broken`](crate::Error::Broken) once a member the call still waits for is
    /// dropped or panics (also while the task waits), and, in a checked team, the error of
    /// members whose calls differ ([`Error::Mismatch`](crate::Error::Mismatch)). Once the call
    /// is over, every later poll, `test` or `wait` returns its outcome again.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Error, Team};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing));
    /// let team = Team::new(2)?;
    /// let (mut first, second) = (team.participant(0)?, team.participant(1)?);
    /// let mut pending = first.ibarrier()?;
    /// let mut wait = pin!(pending.wait_async());
    /// assert!(wait.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
    /// drop(second); // member 1 will never come: the team breaks, and the task is woken
    /// let polled = wait.as_mut().poll(&mut Context::from_waker(&waker));
    /// assert!(matches!(polled, Poll::Ready(Err(Error::Broken { by: 1, .. }))));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_async(&mut self) -> CollectiveFuture<'_, 'a, T> {
        CollectiveFuture {
            pending: self,
            stored: None,
            deadline: TaskDeadline::none(),
        }
    }
}

/// The future of [`Pending::wait_async`]: the call's result once it is over, `Ok(())` or the
/// error the blocking [`wait`](Pending::wait) would return.
///
/// It borrows the [`Pending`] (`&mut`) until it completes or is dropped, and is `Send` when the
/// `Pending` is (always: an `i`-method's operator is `Send`), so a task on a multi-threaded
/// executor can hold it across an `.await`. Polling it again after it completed returns the
/// same outcome again (after a timeout: takes the call further, and times out again at once
/// unless the call is over).
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
/// use phasers::{team::CollectiveFuture, Op, Team};
/// # use std::sync::Arc;
/// # use std::task::Wake;
/// # struct Nothing;
/// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
/// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
///
/// let mut only = phasers::Team::new(1)?.participant(0)?;
/// let (input, mut max) = ([3i32, 9], [0i32; 2]);
/// let mut pending = only.iallreduce(&input, &mut max, Op::Max)?;
/// let mut wait: CollectiveFuture<'_, '_, i32> = pending.wait_async(); // `Unpin`
/// // The only member: the call completes in the first poll.
/// let polled = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
/// assert!(matches!(polled, Poll::Ready(Ok(()))));
/// drop(wait); // it borrows `pending`, which borrows `max`
/// drop(pending);
/// assert_eq!(max, [3, 9]);
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a future does nothing until it is polled (awaited)"]
pub struct CollectiveFuture<'p, 'a, T: Copy + Send + 'static> {
    pending: &'p mut Pending<'a, T>,
    /// Where this task's waker is stored, and on which signal, if it stored one.
    stored: Option<StoredWaker>,
    /// When the wait gives up, if ever.
    deadline: TaskDeadline,
}

impl<T: Copy + Send + 'static> CollectiveFuture<'_, '_, T> {
    /// Gives up waiting after `timeout` (counted from this call) with the
    /// [`Error::Timeout`](crate::Error::Timeout) that [`Pending::wait_timeout`] returns: the
    /// call's number on this team, the members that had not started it, and resumable. The call
    /// stays pending where the last poll left it, as after the blocking timeout: `wait`, `test`,
    /// a timed wait or another `wait_async` finishes it. A timeout too long for the clock to hold
    /// its end (such as [`Duration::MAX`]) never expires.
    ///
    /// The deadline is checked only when a poll stops at a condition that does not hold yet, so
    /// the first poll still takes the call as far as it goes, and completes it if it can. A timer
    /// thread (`futures-timer`'s, one per process) wakes the task at the deadline; a future
    /// without a deadline never starts it. As the future also waits for the others to read this
    /// member's staged input (see [`wait_async`](Pending::wait_async)), it can time out with
    /// `missing` empty: every member started the call, and the call is not over for this one yet.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Error, Op, Team};
    /// # use std::future::Future;
    /// # use std::pin::pin;
    /// # use std::sync::Arc;
    /// # use std::task::{Context, Poll, Wake, Waker};
    /// # struct Unpark(std::thread::Thread);
    /// # impl Wake for Unpark { fn wake(self: Arc<Self>) { self.0.unpark(); } }
    /// # fn block_on<F: Future>(future: F) -> F::Output {
    /// #     let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    /// #     let mut future = pin!(future);
    /// #     loop {
    /// #         match future.as_mut().poll(&mut Context::from_waker(&waker)) {
    /// #             Poll::Ready(output) => return output,
    /// #             Poll::Pending => std::thread::park(),
    /// #         }
    /// #     }
    /// # }
    ///
    /// let team = Team::new(2)?;
    /// let (mut first, mut late) = (team.participant(0)?, team.participant(1)?);
    /// let (input, mut sums) = ([1u64, 2], [0u64; 2]);
    /// let mut pending = first.iallreduce(&input, &mut sums, Op::Sum)?;
    /// // `block_on` stands for any executor: `pending.wait_async().timeout(...).await` in a task.
    /// let err = block_on(pending.wait_async().timeout(Duration::from_millis(5))).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, resumable: true }
    ///     if *missing == [1]));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || {
    ///         let mut theirs = [0u64; 2];
    ///         late.iallreduce(&[10, 20], &mut theirs, Op::Sum).unwrap().wait().unwrap();
    ///         assert_eq!(theirs, [11, 22]);
    ///     });
    ///     // The call stayed pending: a later wait finishes it.
    ///     block_on(pending.wait_async().timeout(Duration::MAX)).unwrap();
    /// });
    /// drop(pending); // it borrows `sums`
    /// assert_eq!(sums, [11, 22]);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.deadline = TaskDeadline::after(timeout);
        self
    }

    /// Gives up waiting at `deadline`, as [`timeout`](Self::timeout) does after its duration (the
    /// async [`Pending::wait_deadline`]). A deadline already past still takes the call as far as
    /// it goes in the first poll, and completes a call that is ready.
    ///
    /// ```
    /// use std::time::Instant;
    /// use phasers::{Error, Team};
    /// # use std::future::Future;
    /// # use std::pin::pin;
    /// # use std::sync::Arc;
    /// # use std::task::{Context, Poll, Wake, Waker};
    /// # struct Unpark(std::thread::Thread);
    /// # impl Wake for Unpark { fn wake(self: Arc<Self>) { self.0.unpark(); } }
    /// # fn block_on<F: Future>(future: F) -> F::Output {
    /// #     let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    /// #     let mut future = pin!(future);
    /// #     loop {
    /// #         match future.as_mut().poll(&mut Context::from_waker(&waker)) {
    /// #             Poll::Ready(output) => return output,
    /// #             Poll::Pending => std::thread::park(),
    /// #         }
    /// #     }
    /// # }
    ///
    /// let mut only = Team::new(1)?.participant(0)?;
    /// let past = Instant::now();
    /// // The only member: the call completes in the first poll, deadline or not.
    /// block_on(only.ibarrier()?.wait_async().deadline(past))?;
    ///
    /// let team = Team::new(2)?;
    /// let (mut first, mut second) = (team.participant(0)?, team.participant(1)?);
    /// let mut pending = first.ibarrier()?;
    /// let err = block_on(pending.wait_async().deadline(past)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, .. } if *missing == [1]));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || second.ibarrier().unwrap().wait().unwrap());
    ///     pending.wait() // the call stayed pending: the blocking wait finishes it
    /// })?;
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = TaskDeadline::at(deadline);
        self
    }
}

impl<T: Copy + Send + 'static> Future for CollectiveFuture<'_, '_, T> {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        let outcome = match this.pending.poll_wait(cx.waker(), &mut this.stored) {
            Poll::Pending if !this.deadline.has_passed(cx) => return Poll::Pending,
            // Timed out: the call stays pending where this poll left it, as after `wait_timeout`.
            Poll::Pending => Err(this.pending.timed_out()),
            Poll::Ready(outcome) => outcome,
        };
        this.pending.forget_waker(&mut this.stored);
        Poll::Ready(outcome)
    }
}

impl<T: Copy + Send + 'static> Drop for CollectiveFuture<'_, '_, T> {
    fn drop(&mut self) {
        // Cancelled while waiting: the call stays pending (see `Pending::wait_async`).
        self.pending.forget_waker(&mut self.stored);
    }
}

impl<T: Copy + Send + 'static> std::fmt::Debug for CollectiveFuture<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectiveFuture")
            .field("pending", &self.pending)
            .field("waker_stored", &self.stored.is_some())
            .field("deadline", &self.deadline)
            .finish()
    }
}
