//! The async form of a participant's wait: a future that arrives when first polled, then awaits
//! the episode's release through the signals' wakers (see `episode.rs` and `wait/poll.rs`), on
//! any executor.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::participant::{Participant, WaitResult};
use super::BarrierAlgorithm;
use crate::error::Result;
use crate::wait::batched_wakes::Owing;
use crate::wait::{BatchedWakes, StoredWaker, TaskDeadline};

impl<A: BarrierAlgorithm> Participant<A> {
    /// [`wait`](Self::wait) for an async task: a future that arrives at the barrier when first
    /// polled and completes with the same [`WaitResult`] once every participant has arrived,
    /// without blocking the thread that polls it. It needs no runtime: any executor, or a
    /// hand-written loop, can poll it, and blocking threads and tasks can share one barrier.
    ///
    /// Every [`Algorithm`](crate::Algorithm) supports it. A task never spins: each poll goes
    /// through the algorithm's steps as far as it can, probing each condition once, and the task
    /// is woken by whoever makes the condition it stopped at hold (or by the barrier breaking).
    /// It waits without a deadline unless given one with [`BarrierFuture::timeout`] or
    /// [`BarrierFuture::deadline`] (the async [`wait_timeout`](Self::wait_timeout)); a task's
    /// stall is reported by the process's stall watchdog (see [`wait`](crate::wait), *Stalls*).
    /// The completion action runs in the poll of the episode's leader, when that is a task.
    ///
    /// Where one word releases everyone (the counting, sense-reversing and ticket barriers, and
    /// dissemination's release after a completion action), a leading task wakes the tasks that
    /// wait: in the same poll when they are a few hundred or fewer, and otherwise a few hundred
    /// per poll, waking itself in between, so that a work-stealing executor's per-worker run
    /// queue does not spill into its shared queue (see BENCHMARKS.md, *Async tasks*). Its future
    /// completes once every waiter is woken, and dropping it before wakes the rest at once.
    /// Blocked threads, and the tasks that a release made by the completion action wakes, are
    /// woken at once. So, as for any task of an executor, a task that blocks the worker thread
    /// it shares with the leading task delays those wakes.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use phasers::{Algorithm, Barrier};
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
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Dissemination)?;
    /// let mut handles = barrier.participants();
    /// let (mut task, mut thread) = (handles.pop().unwrap(), handles.pop().unwrap());
    /// std::thread::scope(|s| {
    ///     s.spawn(move || {
    ///         for episode in 0..3 {
    ///             assert_eq!(block_on(task.wait_async()).unwrap().episode(), episode);
    ///         }
    ///     });
    ///     for episode in 0..3 {
    ///         assert_eq!(thread.wait().unwrap().episode(), episode); // a blocking thread
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Cancellation
    ///
    /// Dropping the future before its first poll does nothing. Dropping it after (the task has
    /// arrived, and not seen the episode complete) leaves the arrival in place, as a wait that
    /// timed out does: the participant [`is_pending`](Self::is_pending), and its next
    /// [`wait`](Self::wait), timed wait or `wait_async` completes the same episode without
    /// arriving again. The episode's other participants are not held back by the drop: they are
    /// released once everyone has arrived, this task included.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Algorithm, Barrier};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Counting)?;
    /// let mut handles = barrier.participants();
    /// let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
    /// {
    ///     let mut wait = pin!(first.wait_async());
    ///     let pending = wait.as_mut().poll(&mut Context::from_waker(&waker));
    ///     assert!(pending.is_pending()); // arrived; rank 1 has not
    /// } // dropped: the arrival stays
    /// assert!(first.is_pending());
    /// assert!(second.wait()?.is_leader()); // rank 1 arrives last: episode 0 completes
    /// assert_eq!(first.wait()?.episode(), 0); // resumes episode 0, without arriving again
    /// assert!(!first.is_pending());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait): [`Error::Broken`](crate::Error::Broken) when a participant
    /// panicked or was dropped (also while the task waits),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) after [`leave`](Self::leave),
    /// from the first poll.
    pub fn wait_async(&mut self) -> BarrierFuture<'_, A> {
        BarrierFuture {
            participant: self,
            stored: None,
            stage: Stage::Waiting,
            deadline: TaskDeadline::none(),
        }
    }
}

/// The future of [`Participant::wait_async`]: the episode's [`WaitResult`] once every participant
/// has arrived, or the error the blocking [`wait`](Participant::wait) would return.
///
/// It holds the participant (`&mut`) until it completes or is dropped. Polling it again after it
/// completed panics, as futures may.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
/// use phasers::{barrier::BarrierFuture, Algorithm, Barrier};
/// # use std::sync::Arc;
/// # use std::task::Wake;
/// # struct Nothing;
/// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
/// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
///
/// let barrier = Barrier::with_algorithm(1, Algorithm::Tournament)?;
/// let mut only = barrier.participant(0)?;
/// let mut wait: BarrierFuture<'_, _> = only.wait_async(); // `Unpin`: no pinning needed
/// let polled = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
/// // The only participant: episode 0 completes in the first poll, and it led it.
/// assert!(matches!(polled, Poll::Ready(Ok(result)) if result.episode() == 0 && result.is_leader()));
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a future does nothing until it is polled (awaited)"]
pub struct BarrierFuture<'a, A: BarrierAlgorithm = super::AnyAlgorithm> {
    participant: &'a mut Participant<A>,
    /// Where this task's waker is stored, and on which signal, if it stored one.
    stored: Option<StoredWaker>,
    stage: Stage,
    /// When the wait gives up, if ever.
    deadline: TaskDeadline,
}

/// How far a [`BarrierFuture`] has gone.
#[derive(Debug)]
enum Stage {
    /// Arrived or about to: each poll resumes the wait.
    Waiting,
    /// Led the episode and released it, and still waking the tasks the release owes, a batch per
    /// poll (see `wait/batched_wakes.rs`). Boxed: only the leader is ever here.
    Paying(Box<Owing<WaitResult>>),
    /// Completed: the output was returned.
    Done,
}

impl<A: BarrierAlgorithm> BarrierFuture<'_, A> {
    /// Gives up waiting after `timeout` (counted from this call) with the
    /// [`Error::Timeout`](crate::Error::Timeout) that [`Participant::wait_timeout`] returns: the
    /// episode, the ranks that have not arrived, and resumable. The arrival stays in place, as
    /// after the blocking timeout: the participant [`is_pending`](Participant::is_pending), and
    /// its next wait of any kind completes the same episode without arriving again. A timeout
    /// too long for the clock to hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// The deadline is checked only when a poll stops at a condition that does not hold yet, so
    /// the first poll still arrives, and completes if that completed the episode. A timer thread
    /// (`futures-timer`'s, one per process) wakes the task at the deadline; a future without a
    /// deadline never starts it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Algorithm, Barrier, Error};
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
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Dissemination)?;
    /// let mut handles = barrier.participants();
    /// let (mut late, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
    /// // `block_on` stands for any executor: `first.wait_async().timeout(...).await` in a task.
    /// let err = block_on(first.wait_async().timeout(Duration::from_millis(5))).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, resumable: true }
    ///     if *missing == [1]));
    /// assert!(first.is_pending()); // arrived at episode 0; not again
    /// std::thread::scope(|s| {
    ///     s.spawn(|| late.wait().unwrap());
    ///     let resumed = block_on(first.wait_async().timeout(Duration::MAX)).unwrap();
    ///     assert_eq!(resumed.episode(), 0);
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.deadline = TaskDeadline::after(timeout);
        self
    }

    /// Gives up waiting at `deadline`, as [`timeout`](Self::timeout) does after its duration (the
    /// async [`Participant::wait_deadline`]). A deadline already past still arrives in the first
    /// poll, and completes if that completed the episode.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Algorithm, Barrier, Error};
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
    /// let barrier = Barrier::with_algorithm(2, Algorithm::Counting)?;
    /// let mut handles = barrier.participants();
    /// let (mut last, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
    /// let soon = Instant::now() + Duration::from_millis(5);
    /// let err = block_on(first.wait_async().deadline(soon)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, .. } if *missing == [1]));
    /// // Past deadlines: the last arrival completes episode 0, and `first` resumes it at once.
    /// assert!(block_on(last.wait_async().deadline(soon))?.is_leader());
    /// assert_eq!(block_on(first.wait_async().deadline(soon))?.episode(), 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = TaskDeadline::at(deadline);
        self
    }
}

impl<A: BarrierAlgorithm> Future for BarrierFuture<'_, A> {
    type Output = Result<WaitResult>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<WaitResult>> {
        let this = self.get_mut();
        match &mut this.stage {
            Stage::Waiting => {}
            Stage::Paying(owing) => {
                // The episode is complete: no deadline applies any more.
                let paid = owing.poll_pay(cx);
                if paid.is_ready() {
                    this.stage = Stage::Done;
                }
                return paid.map(Ok);
            }
            Stage::Done => panic!("a BarrierFuture was polled after it completed"),
        }
        // Dropping `owed` wakes them all: so does every outcome but this task's own release,
        // which wakes them a batch per poll.
        let mut owed = BatchedWakes::default();
        let polled = (this.participant).poll_wait(cx.waker(), &mut this.stored, Some(&mut owed));
        let outcome = match polled {
            Poll::Pending if !this.deadline.has_passed(cx) => return Poll::Pending,
            // Timed out: the participant stays pending at its episode, as after `wait_timeout`.
            Poll::Pending => Err(this.participant.timed_out()),
            Poll::Ready(Ok(result)) if !owed.is_paid() => {
                this.participant.forget_waker(&mut this.stored);
                let mut owing = Box::new(Owing::new(result, owed));
                let paid = owing.poll_pay(cx);
                this.stage = match paid {
                    Poll::Ready(_) => Stage::Done,
                    Poll::Pending => Stage::Paying(owing),
                };
                return paid.map(Ok);
            }
            Poll::Ready(outcome) => outcome,
        };
        this.participant.forget_waker(&mut this.stored);
        this.stage = Stage::Done;
        // A broken barrier leaves the participant where the blocking wait leaves it: pending at
        // the episode, so every later wait reports the break too.
        Poll::Ready(outcome)
    }
}

impl<A: BarrierAlgorithm> Drop for BarrierFuture<'_, A> {
    fn drop(&mut self) {
        // Cancelled while waiting: the arrival stays (see `Participant::wait_async`).
        self.participant.forget_waker(&mut self.stored);
    }
}

impl<A: BarrierAlgorithm> std::fmt::Debug for BarrierFuture<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BarrierFuture")
            .field("participant", &self.participant)
            .field("waker_stored", &self.stored.is_some())
            .field("stage", &self.stage)
            .field("deadline", &self.deadline)
            .finish()
    }
}
