//! The async forms of a registration's `next` and `wait`: a future that signals when first
//! polled, then awaits the phase's release through the release word's wakers (see
//! `wait/poll.rs`), on any executor.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::Registration;
use crate::error::Result;
use crate::wait::batched_wakes::{self, Owing};
use crate::wait::{TaskDeadline, WakerKey};

impl Registration {
    /// [`next`](Self::next) for an async task: a future that signals this task's phase when
    /// first polled and completes with the phase once the phase is released, without blocking the
    /// thread that polls it. It needs no runtime: any executor, or a hand-written loop, can poll it,
    /// and blocking threads and tasks can share one phaser.
    ///
    /// The checks and errors are `next`'s, returned by the first poll; a signal-only registration
    /// signals and completes in that poll (only one running 2^27 phases ahead of the phaser would
    /// block there, as `signal` does, until the others catch up). A task never spins: each poll
    /// probes the release once, and the task is woken by the release (or by the phaser breaking).
    /// It waits without a deadline unless given one with [`PhaseFuture::timeout`] or
    /// [`PhaseFuture::deadline`] (the async [`next_timeout`](Self::next_timeout)); a task's stall
    /// is reported by the process's stall watchdog (see [`wait`](crate::wait), *Stalls*).
    ///
    /// The task whose signal releases the phase wakes the tasks that wait for it: in the same
    /// poll when they are a few hundred or fewer, and otherwise a few hundred per poll, waking
    /// itself in between, so that a work-stealing executor's per-worker run queue does not spill
    /// into its shared queue (at 10,000 and 100,000 tasks on tokio, a phase took a fifth to a
    /// third less; see BENCHMARKS.md). Its future completes once every waiter is woken, and
    /// dropping it before wakes the rest at once. Threads blocked in [`next`](Self::next) are
    /// woken at once either way, and so is every task that a release made by the advance action
    /// (user code, run in this poll) wakes. So, as for any task of an executor, a task that
    /// blocks the worker thread it shares with the releasing task delays those wakes.
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
    /// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut task = main.register(Mode::SigWait)?;
    /// std::thread::scope(|s| {
    ///     s.spawn(move || {
    ///         for phase in 0..3 {
    ///             assert_eq!(block_on(task.next_async()).unwrap(), phase);
    ///         }
    ///     });
    ///     for phase in 0..3 {
    ///         assert_eq!(main.next().unwrap(), phase); // a blocking thread on the same phaser
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Cancellation
    ///
    /// Dropping the future before its first poll does nothing. Dropping it after (the task has
    /// signalled, and not seen the phase released) leaves a split phase, as after
    /// [`signal`](Self::signal): this registration's next [`next`](Self::next), [`wait`](Self::wait)
    /// or async form waits for the phase already signalled and returns it, without signalling again.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Mode, Phaser};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut other = main.register(Mode::SigWait)?;
    /// {
    ///     let mut next = pin!(main.next_async());
    ///     let pending = next.as_mut().poll(&mut Context::from_waker(&waker));
    ///     assert!(pending.is_pending()); // signalled; `other` has not
    /// } // dropped: phase 0 signalled, not waited for
    /// assert_eq!(main.phase(), 1);
    /// other.signal()?;
    /// assert_eq!(main.next()?, 0); // waits for phase 0 only
    /// assert_eq!(phaser.phase(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`next`](Self::next): [`Error::Broken`](crate::Error::Broken) when another registration
    /// was lost in a panic (also while the task waits), [`Error::Terminated`](crate::Error::Terminated)
    /// once the phaser cannot advance.
    pub fn next_async(&mut self) -> PhaseFuture<'_> {
        PhaseFuture::new(self, Call::Next)
    }

    /// [`wait`](Self::wait) for an async task: a future that, when first polled, signals the
    /// phase this task is in if it has not, and completes with the phase once it is released.
    /// Polled, cancelled and woken as [`next_async`](Self::next_async).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Mode, Phaser};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// main.signal()?; // the only signaller: phase 0 is released
    /// let mut wait = pin!(main.wait_async());
    /// let polled = wait.as_mut().poll(&mut Context::from_waker(&waker));
    /// assert!(matches!(polled, Poll::Ready(Ok(0))));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait): [`Error::Capability`](crate::Error::Capability) for a signal-only
    /// registration, from the first poll.
    pub fn wait_async(&mut self) -> PhaseFuture<'_> {
        PhaseFuture::new(self, Call::Wait)
    }
}

/// Which blocking call a [`PhaseFuture`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Next,
    Wait,
}

#[derive(Debug)]
enum State {
    /// Not polled yet: nothing done. The call is needed only by the first poll, so it rides in
    /// this variant, beside the tag, rather than in a field of the future: that keeps the future
    /// at 64 bytes with its deadline's pointer added.
    Start(Call),
    /// Signalled (if this registration signals); waiting for this phase's release.
    Waiting(u64),
    /// Released the phase itself, and still waking the tasks the release owes, a batch per poll
    /// (see `wait/batched_wakes.rs`). Boxed: only the task that released a phase is ever here,
    /// and the box keeps every waiting task's future as small as before.
    Paying(Box<Owing<u64>>),
    /// Completed: the output was returned.
    Done,
}

/// The future of [`Registration::next_async`] and [`Registration::wait_async`]: the phase
/// completed, once it is released, or the error the blocking call would return.
///
/// It holds the registration (`&mut`) until it completes or is dropped. Polling it again after it
/// completed panics, as futures may.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
/// use phasers::{phaser::PhaseFuture, Mode, Phaser};
/// # use std::sync::Arc;
/// # use std::task::Wake;
/// # struct Nothing;
/// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
/// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
///
/// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
/// let mut next: PhaseFuture<'_> = main.next_async(); // `Unpin`: no pinning needed
/// let polled = Pin::new(&mut next).poll(&mut Context::from_waker(&waker));
/// assert!(matches!(polled, Poll::Ready(Ok(0)))); // the only signaller: released at once
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a future does nothing until it is polled (awaited)"]
#[derive(Debug)]
pub struct PhaseFuture<'a> {
    registration: &'a mut Registration,
    state: State,
    /// Where this task's waker is stored on the release word, if it stored one.
    key: Option<WakerKey>,
    /// When the wait gives up, if ever.
    deadline: TaskDeadline,
}

impl<'a> PhaseFuture<'a> {
    fn new(registration: &'a mut Registration, call: Call) -> Self {
        PhaseFuture {
            registration,
            state: State::Start(call),
            key: None,
            deadline: TaskDeadline::none(),
        }
    }

    /// Gives up waiting after `timeout` (counted from this call) with the
    /// [`Error::Timeout`](crate::Error::Timeout) that [`Registration::next_timeout`] (or
    /// [`wait_timeout`](Registration::wait_timeout)) returns: the episode is the phase, `missing`
    /// the registrations that have not signalled it, and it is resumable. The signal stays in
    /// place, as after the blocking timeout: this registration's next `next`, `wait` or async
    /// form waits for the same phase, without signalling again. A timeout too long for the
    /// clock to hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// The deadline is checked only when a poll finds the phase unreleased, so the first poll
    /// still signals, and completes if that released the phase. A timer thread
    /// (`futures-timer`'s, one per process) wakes the task at the deadline; a future without a
    /// deadline never starts it.
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
    /// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut late = main.register(Mode::SigWait)?;
    /// // `block_on` stands for any executor: `main.next_async().timeout(...).await` in a task.
    /// let err = block_on(main.next_async().timeout(Duration::from_millis(5))).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, resumable: true }
    ///     if *missing == [late.id()]));
    /// late.signal()?;
    /// // The signal stayed: the next wait completes phase 0 without signalling again.
    /// assert_eq!(block_on(main.next_async().timeout(Duration::MAX))?, 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.deadline = TaskDeadline::after(timeout);
        self
    }

    /// Gives up waiting at `deadline`, as [`timeout`](Self::timeout) does after its duration (the
    /// async [`Registration::next_deadline`]). A deadline already past still signals in the first
    /// poll, and completes if that released the phase.
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
    /// let (_phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut late = main.register(Mode::SigWait)?;
    /// let soon = Instant::now() + Duration::from_millis(5);
    /// let err = block_on(main.next_async().deadline(soon)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, .. } if *missing == [late.id()]));
    /// // Past deadlines: `late`'s signal completes phase 0, and `main`'s wait sees it at once.
    /// assert_eq!(block_on(late.next_async().deadline(soon))?, 0);
    /// assert_eq!(block_on(main.next_async().deadline(soon))?, 0);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = TaskDeadline::at(deadline);
        self
    }

    /// The first poll's work: the blocking call's checks and signal. `Ok(Err(phase))` when the
    /// phase must still be awaited, `Ok(Ok(phase))` when the call is already complete.
    fn begin(&mut self, call: Call) -> Result<std::result::Result<u64, u64>> {
        let registration = &mut *self.registration;
        if call == Call::Next && !registration.mode().can_wait() {
            // A signal-only `next`: signals and returns, as the blocking one.
            let phase = registration.phase();
            registration.signal()?;
            return Ok(Ok(phase));
        }
        registration.check_can_wait()?;
        let (phase, unreleased) = registration.begin_wait()?;
        if unreleased {
            return Ok(Err(phase));
        }
        registration.end_wait(phase);
        Ok(Ok(phase))
    }

    /// Drops the stored waker, if any: the task no longer waits.
    fn forget_waker(&mut self) {
        if let Some(key) = self.key.take() {
            self.registration.forget_waker(key);
        }
    }
}

impl Future for PhaseFuture<'_> {
    type Output = Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<u64>> {
        let this = self.get_mut();
        if let State::Paying(owing) = &mut this.state {
            let paid = owing.poll_pay(cx);
            if paid.is_ready() {
                this.state = State::Done;
            }
            return paid.map(Ok);
        }
        let phase = match this.state {
            State::Start(call) => {
                // Dropping `owed` wakes them all: so do every outcome but this task's own
                // release, which wakes them a batch per poll.
                let (begun, owed) = batched_wakes::collect(|| this.begin(call));
                match begun {
                    Ok(Err(phase)) => phase,
                    Ok(Ok(phase)) if !owed.is_paid() => {
                        let mut owing = Box::new(Owing::new(phase, owed));
                        let paid = owing.poll_pay(cx);
                        this.state = match paid {
                            Poll::Ready(_) => State::Done,
                            Poll::Pending => State::Paying(owing),
                        };
                        return paid.map(Ok);
                    }
                    done => {
                        this.state = State::Done;
                        return Poll::Ready(done.map(|complete| complete.unwrap_or_else(|p| p)));
                    }
                }
            }
            State::Waiting(phase) => phase,
            // Paid above, to its end.
            State::Paying(_) | State::Done => panic!("a PhaseFuture was polled after it completed"),
        };
        this.state = State::Waiting(phase);
        let outcome = match this
            .registration
            .poll_release(phase, &mut this.key, cx.waker())
        {
            Poll::Pending if !this.deadline.has_passed(cx) => return Poll::Pending,
            // Timed out: the signal stays, as after `next_timeout`, and so does `waited`, so the
            // next wait of any kind waits for this phase.
            Poll::Pending => Err(this.registration.phaser().core.timed_out(phase)),
            Poll::Ready(outcome) => outcome,
        };
        this.forget_waker();
        this.state = State::Done;
        // A broken phaser leaves the registration where the blocking wait leaves it: waiting for
        // the phase, so every later wait reports the break too.
        outcome
            .map(|()| {
                this.registration.end_wait(phase);
                phase
            })
            .into()
    }
}

impl Drop for PhaseFuture<'_> {
    fn drop(&mut self) {
        // Cancelled while waiting: the signal stays (a split phase, see `next_async`).
        self.forget_waker();
    }
}
