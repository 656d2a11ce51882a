//! The async form of [`Phaser::await_phase`]: a future that watches the release word through its
//! wakers (see `wait/poll.rs`), as the blocking observer watches it through its waiter, so it adds
//! no protocol of its own.
//!
//! The wait itself ([`PhaseWatch`]) is kept apart from the phaser it watches: the future of
//! `await_phase_async` borrows the phaser, and a wait group's future (`wait_group_future.rs`) owns
//! a registration of it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::Phaser;
use crate::error::Result;
use crate::wait::{TaskWaiter, WakerKey};

impl Phaser {
    /// [`await_phase`](Self::await_phase) for an async task: a future that completes with the
    /// phase in progress once it differs from `phase`, without blocking the thread that polls it.
    /// It needs no runtime, and async observers, blocking observers and registered threads can
    /// share one phaser.
    ///
    /// The result and errors are `await_phase`'s: the first poll makes its checks (a phase that
    /// completed, or one later than the phase in progress, returns at once; an ended phaser fails
    /// at once), and each later poll probes the release once and stores the task's waker on it,
    /// so the task is woken by the release (or by the phaser breaking or terminating). A task's
    /// wait has no timer: it reports no stall and has no timeout of its own.
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
}

impl Future for AwaitPhaseFuture<'_> {
    type Output = Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<u64>> {
        let this = self.get_mut();
        this.watch.poll(this.phaser, cx.waker())
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
    /// blocking observer's probe. Forgets the waker once it completes.
    pub(super) fn poll(&mut self, phaser: &Phaser, waker: &Waker) -> Poll<Result<u64>> {
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
            waker,
            || phaser.past(phase),
        ) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(outcome) => outcome,
        };
        self.forget_waker(phaser);
        self.state = State::Done;
        Poll::Ready(outcome.map_err(|_| core.stopped(phase)))
    }

    /// Drops the stored waker, if any: the task no longer waits.
    pub(super) fn forget_waker(&mut self, phaser: &Phaser) {
        if let Some(key) = self.key.take() {
            phaser.core.release.remove_waker(key);
        }
    }
}
