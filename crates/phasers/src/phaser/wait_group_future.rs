//! The async form of [`WaitGroup::wait`]: the same signal of the clone's part, then the wait for
//! phase 0 through the release word's wakers ([`PhaseWatch`], as `await_phase_async`), with the
//! registration owned by the future until the wait is over.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use super::await_phase_future::PhaseWatch;
use super::{Registration, WaitGroup};
use crate::error::Result;
use crate::wait::TaskDeadline;

impl WaitGroup {
    /// [`wait`](Self::wait) for an async task: a future that marks this task done when first
    /// polled and completes once every other clone of the group has been dropped (including
    /// clones made while it waits), without blocking the thread that polls it. It needs no
    /// runtime, and async and blocking waiters can share one group.
    ///
    /// The first poll does what `wait` does before it waits (signals this clone's part, or
    /// returns the error [`new`](Self::new) kept); each later poll probes the release once and
    /// stores the task's waker on it, so the task is woken by the last clone's drop (or by a
    /// panicking task's). It waits without a deadline unless given one with
    /// [`WaitGroupFuture::timeout`] or [`WaitGroupFuture::deadline`] (the async
    /// [`wait_timeout`](Self::wait_timeout)); a task's stall is reported by the process's stall
    /// watchdog (see [`wait`](crate::wait), *Stalls*).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use phasers::WaitGroup;
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
    /// let done = AtomicUsize::new(0);
    /// let group = WaitGroup::new();
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         let task = group.clone();
    ///         let done = &done;
    ///         s.spawn(move || {
    ///             done.fetch_add(1, Ordering::SeqCst);
    ///             drop(task); // this task is done
    ///         });
    ///     }
    ///     block_on(group.wait_async()).unwrap(); // once all four clones are dropped
    ///     assert_eq!(done.load(Ordering::SeqCst), 4);
    /// });
    /// ```
    ///
    /// # Cancellation
    ///
    /// The future owns the clone, and dropping it counts this task as done either way, so the
    /// group's other waiters still return once the other clones are gone:
    ///
    /// - dropped before its first poll, the clone is dropped like any clone (which also breaks
    ///   the group when its thread is panicking, as a panicking task's clone does);
    /// - dropped after (its part signalled, the others not all gone), the registration it kept
    ///   for the wait is dropped, as `wait` drops it when the wait is over, and the stored waker
    ///   is forgotten. Nothing of phase 0 is undone: only this waiter stops waiting. Its part
    ///   was done, so even a drop while its thread panics does not break the group.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::WaitGroup;
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let group = WaitGroup::new();
    /// let task = group.clone();
    /// let mut wait = group.clone().wait_async();
    /// let polled = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
    /// assert!(polled.is_pending()); // `group` and `task` are outstanding
    /// drop(wait); // cancelled: that clone's part stays done
    /// assert_eq!(format!("{group:?}"), "WaitGroup { outstanding: 2 }");
    /// drop(task);
    /// assert_eq!(group.wait(), Ok(()));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait): [`Error::Broken`](crate::Error::Broken) when a task's clone was
    /// dropped while its thread panicked (also while the task waits); the error
    /// [`new`](Self::new) kept, from the first poll, when the group could not be made.
    pub fn wait_async(self) -> WaitGroupFuture {
        WaitGroupFuture {
            state: State::Start(self),
            deadline: TaskDeadline::none(),
        }
    }
}

#[derive(Debug)]
enum State {
    /// Not polled yet: the clone, untouched.
    Start(WaitGroup),
    /// This clone's part signalled: its registration, kept until the wait is over, and the wait
    /// for phase 0.
    Waiting(Registration, PhaseWatch),
    /// Completed: the output was returned, and the registration dropped.
    Done,
}

/// The future of [`WaitGroup::wait_async`]: `Ok(())` once every other clone of the group has been
/// dropped, or the error [`WaitGroup::wait`] would return.
///
/// It owns the clone it was made from (so it is `'static` and `Send`: any executor may move it
/// between threads). Polling it again after it completed panics, as futures may.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
/// use phasers::{phaser::WaitGroupFuture, WaitGroup};
/// # use std::sync::Arc;
/// # use std::task::Wake;
/// # struct Nothing;
/// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
/// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
///
/// let group = WaitGroup::new();
/// let mut wait: WaitGroupFuture = group.wait_async(); // `Unpin`: no pinning needed
/// let polled = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
/// assert!(matches!(polled, Poll::Ready(Ok(())))); // the only clone: done at once
/// ```
#[must_use = "a future does nothing until it is polled (awaited)"]
#[derive(Debug)]
pub struct WaitGroupFuture {
    state: State,
    /// When the wait gives up, if ever.
    deadline: TaskDeadline,
}

impl WaitGroupFuture {
    /// Gives up waiting after `timeout` (counted from this call) with the
    /// [`Error::Timeout`](crate::Error::Timeout) that [`WaitGroup::wait_timeout`] returns, whose
    /// `missing` lists the registration ids of the clones still alive. As there, the clone is
    /// consumed either way (its task counts as done), so the timed-out wait cannot be resumed;
    /// keep another clone to wait again. A timeout too long for the clock to hold its end (such
    /// as [`Duration::MAX`]) never expires.
    ///
    /// The deadline is checked only when a poll finds clones outstanding, so the first poll
    /// still marks this task done, and completes if no other clone was left. A timer thread
    /// (`futures-timer`'s, one per process) wakes the task at the deadline; a future without a
    /// deadline never starts it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Error, WaitGroup};
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
    /// let group = WaitGroup::new();
    /// let never_done = group.clone();
    /// // `block_on` stands for any executor: `group.clone().wait_async().timeout(...).await`.
    /// let err = block_on(group.clone().wait_async().timeout(Duration::from_millis(5))).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { ref missing, .. } if missing.len() == 2)); // `group`, `never_done`
    /// drop(never_done);
    /// assert_eq!(block_on(group.wait_async().timeout(Duration::MAX)), Ok(()));
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.deadline = TaskDeadline::after(timeout);
        self
    }

    /// Gives up waiting at `deadline`, as [`timeout`](Self::timeout) does after its duration (the
    /// async [`WaitGroup::wait_deadline`]). A deadline already past still marks this task done,
    /// and completes if no other clone was left.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Error, WaitGroup};
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
    /// let group = WaitGroup::new();
    /// let tasks: Vec<WaitGroup> = (0..3).map(|_| group.clone()).collect();
    /// let soon = Instant::now() + Duration::from_millis(5);
    /// let err = block_on(group.clone().wait_async().deadline(soon)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { ref missing, .. } if missing.len() == 4));
    /// drop(tasks);
    /// assert_eq!(block_on(group.wait_async().deadline(soon)), Ok(())); // nobody left: at once
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = TaskDeadline::at(deadline);
        self
    }
}

impl Future for WaitGroupFuture {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        if let State::Start(_) = this.state {
            let State::Start(group) = std::mem::replace(&mut this.state, State::Done) else {
                unreachable!("matched just above");
            };
            match group.signal_done() {
                Ok(registration) => this.state = State::Waiting(registration, PhaseWatch::new(0)),
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
        let State::Waiting(registration, watch) = &mut this.state else {
            panic!("a WaitGroupFuture was polled after it completed");
        };
        let outcome = ready!(watch.poll(registration.phaser(), cx, &mut this.deadline));
        // The wait is over (or timed out): the registration goes, as in the blocking wait.
        this.state = State::Done;
        Poll::Ready(outcome.map(|_| ()))
    }
}

impl Drop for WaitGroupFuture {
    fn drop(&mut self) {
        // Cancelled while waiting: the registration is dropped after this (see `wait_async`).
        if let State::Waiting(registration, watch) = &mut self.state {
            watch.forget_waker(registration.phaser());
        }
    }
}
