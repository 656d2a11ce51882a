//! The async form of [`Phaser::await_phase`]: a future that watches the release word through its
//! wakers (see `wait/poll.rs`), as the blocking observer watches it through its waiter, so it adds
//! no protocol of its own.
//!
//! The wait itself ([`PhaseWatch`]) is kept apart from the phaser it watches: the future of
//! `await_phase_async` borrows the phaser, and a wait group's future (`wait_group_future.rs`) owns
//! a registration of it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::Phaser;
use crate::error::Result;
use crate::wait::{watch_task, TaskDeadline, TaskWaiter, WakerKey};

impl Phaser {
    /// [`await_phase`](Self::await_phase) for an async task: a future that completes with the
    /// phase in progress once it differs from `phase`, without blocking the thread that polls it.
    /// It needs no runtime, and async observers, blocking observers and registered threads can
    /// share one phaser.
    ///
    /// The result and errors are `await_phase`'s: the first poll makes its checks (a phase that
    /// completed, or one later than the phase in progress, returns at once; an ended phaser fails
    /// at once), and each later poll probes the release once and stores the task's waker on it,
    /// so the task is woken by the release (or by the phaser breaking or terminating). It waits
    /// without a deadline unless given one with [`AwaitPhaseFuture::timeout`] or
    /// [`AwaitPhaseFuture::deadline`] (the async [`await_phase_timeout`](Self::await_phase_timeout));
    /// a task's stall is reported by the process's stall watchdog (see [`wait`](crate::wait),
    /// *Stalls*).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use phasers::{Mode, Phaser};
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
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let observer = phaser.clone();
    /// std::thread::scope(|s| {
    ///     let watching = s.spawn(move || block_on(observer.await_phase_async(0)));
    ///     main.next().unwrap(); // a blocking thread completes phase 0
    ///     assert_eq!(watching.join().unwrap(), Ok(1));
    /// });
    /// assert_eq!(block_on(phaser.await_phase_async(0))?, 1); // completed: at once
    /// assert_eq!(block_on(phaser.await_phase_async(u64::MAX))?, 1); // far ahead: at once
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Cancellation
    ///
    /// Dropping the future cancels the wait and nothing else: an observer signals nothing and
    /// holds no phase back, so the only thing to undo is the waker it stored, which the drop
    /// forgets (the release does not wake a dropped task).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Mode, Phaser};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut watch = phaser.await_phase_async(0);
    /// let polled = Pin::new(&mut watch).poll(&mut Context::from_waker(&waker));
    /// assert!(polled.is_pending()); // phase 0 is in progress
    /// drop(watch); // cancelled: nothing was signalled, nothing is left
    /// assert_eq!(main.next()?, 0);
    /// assert_eq!(phaser.phase(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`await_phase`](Self::await_phase): [`Error::Terminated`](crate::Error::Terminated)
    /// (or [`Error::Broken`](crate::Error::Broken)) when the phaser ends before `phase`
    /// completes, from the first poll if it had ended already.
    pub fn await_phase_async(&self, phase: u64) -> AwaitPhaseFuture<'_> {
        AwaitPhaseFuture {
            phaser: self,
            watch: PhaseWatch::new(phase),
            deadline: TaskDeadline::none(),
        }
    }
}

/// The future of [`Phaser::await_phase_async`]: the phase in progress once it differs from the
/// phase awaited, or the error [`Phaser::await_phase`] would return.
///
/// It borrows the phaser handle until it completes or is dropped. Polling it again after it
/// completed panics, as futures may.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
/// use phasers::{phaser::AwaitPhaseFuture, Error, Mode, Phaser};
/// # use std::sync::Arc;
/// # use std::task::Wake;
/// # struct Nothing;
/// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
/// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
///
/// let (phaser, _main) = Phaser::new(Mode::SigWait)?;
/// phaser.force_terminate();
/// let mut watch: AwaitPhaseFuture<'_> = phaser.await_phase_async(0); // `Unpin`: no pinning needed
/// let polled = Pin::new(&mut watch).poll(&mut Context::from_waker(&waker));
/// assert!(matches!(polled, Poll::Ready(Err(Error::Terminated { phase: 0 }))));
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a future does nothing until it is polled (awaited)"]
#[derive(Debug)]
pub struct AwaitPhaseFuture<'a> {
    phaser: &'a Phaser,
    watch: PhaseWatch,
    /// When the wait gives up, if ever.
    deadline: TaskDeadline,
}

impl AwaitPhaseFuture<'_> {
    /// Gives up waiting after `timeout` (counted from this call) with the
    /// [`Error::Timeout`](crate::Error::Timeout) that [`Phaser::await_phase_timeout`] returns:
    /// the episode is the phase awaited, `missing` the registrations that have not signalled it,
    /// and it is resumable (an observer holds nothing back, so awaiting the phase again simply
    /// waits again). A timeout too long for the clock to hold its end (such as
    /// [`Duration::MAX`]) never expires.
    ///
    /// The deadline is checked only when a poll finds the phase in progress, so the first poll's
    /// checks still return what they find. A timer thread (`futures-timer`'s, one per process)
    /// wakes the task at the deadline; a future without a deadline never starts it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Error, Mode, Phaser};
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
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let late = main.register(Mode::SigWait)?;
    /// main.signal()?;
    /// // `block_on` stands for any executor: `phaser.await_phase_async(0).timeout(...).await`.
    /// let err = block_on(phaser.await_phase_async(0).timeout(Duration::from_millis(5))).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, resumable: true }
    ///     if *missing == [late.id()]));
    /// drop(late); // it deregisters: phase 0 completes without it
    /// assert_eq!(block_on(phaser.await_phase_async(0).timeout(Duration::MAX))?, 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.deadline = TaskDeadline::after(timeout);
        self
    }

    /// Gives up waiting at `deadline`, as [`timeout`](Self::timeout) does after its duration (the
    /// async [`Phaser::await_phase_deadline`]). A deadline already past still returns the new
    /// phase if the phase awaited has completed.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Error, Mode, Phaser};
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
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let soon = Instant::now() + Duration::from_millis(5);
    /// let err = block_on(phaser.await_phase_async(0).deadline(soon)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, .. } if *missing == [main.id()]));
    /// main.next()?;
    /// assert_eq!(block_on(phaser.await_phase_async(0).deadline(soon))?, 1); // past, but completed
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = TaskDeadline::at(deadline);
        self
    }
}

impl Future for AwaitPhaseFuture<'_> {
    type Output = Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<u64>> {
        let this = self.get_mut();
        this.watch.poll(this.phaser, cx, &mut this.deadline)
    }
}

impl Drop for AwaitPhaseFuture<'_> {
    fn drop(&mut self) {
        // Cancelled: an observer did nothing else to undo.
        self.watch.forget_waker(self.phaser);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not polled yet: [`Phaser::settled`]'s checks not made.
    Start,
    /// The phase was in progress at the first poll: probing the release.
    Waiting,
    /// Completed: the output was returned.
    Done,
}

/// An async task's wait for `phase` to complete, on a phaser its owner passes to each call (see
/// the module docs). Its owner calls [`forget_waker`](Self::forget_waker) when dropped, since a
/// drop here would have no phaser to forget the waker on.
#[derive(Debug)]
pub(super) struct PhaseWatch {
    phase: u64,
    state: State,
    /// Where this task's waker is stored on the release word, if it stored one.
    key: Option<WakerKey>,
}

impl PhaseWatch {
    pub(super) fn new(phase: u64) -> Self {
        PhaseWatch {
            phase,
            state: State::Start,
            key: None,
        }
    }

    /// One poll: the blocking wait's checks in the first, then one probe of the release with the
    /// blocking observer's probe, and, if the phase is still in progress, a look at `deadline`
    /// (the owner's: a wait group's future has none before its first poll makes this watch).
    /// Forgets the waker once it completes or times out.
    pub(super) fn poll(
        &mut self,
        phaser: &Phaser,
        cx: &mut Context<'_>,
        deadline: &mut TaskDeadline,
    ) -> Poll<Result<u64>> {
        let phase = self.phase;
        match self.state {
            State::Start => {
                if let Some(settled) = phaser.settled(phase) {
                    self.state = State::Done;
                    return Poll::Ready(settled);
                }
                self.state = State::Waiting;
            }
            State::Waiting => {}
            State::Done => panic!("an AwaitPhaseFuture was polled after it completed"),
        }
        let core = &phaser.core;
        let outcome = match TaskWaiter::new(&core.broken, phase).poll_probe(
            &core.release,
            &mut self.key,
            cx.waker(),
            || phaser.past(phase),
        ) {
            Poll::Pending if !deadline.has_passed(cx) => {
                // The task waits: the stall watchdog watches the phase for it.
                watch_task(core, phase);
                return Poll::Pending;
            }
            Poll::Pending => Err(core.timed_out(phase)),
            Poll::Ready(outcome) => outcome.map_err(|_| core.stopped(phase)),
        };
        self.forget_waker(phaser);
        self.state = State::Done;
        Poll::Ready(outcome)
    }

    /// Drops the stored waker, if any: the task no longer waits.
    pub(super) fn forget_waker(&mut self, phaser: &Phaser) {
        if let Some(key) = self.key.take() {
            phaser.core.release.remove_waker(key);
        }
    }
}
