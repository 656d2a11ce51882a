//! The async form of a registration's `next_single`: a future that claims the phase's action (or
//! finds it claimed) and signals when first polled, then either awaits the phase's gather and
//! runs the action (the runner), or awaits the phase's release (everyone else). Both waits go
//! through the words' wakers (see `wait/poll.rs`), so it adds no lock-free step of its own: the
//! claim, the signal and the hand-off from the completer to the runner are `next_single`'s.
//!
//! Cancellation is where it differs from the other futures: only the runner can release the
//! phase, so a runner dropped before its action ran breaks the phaser, as an action that panics
//! does, rather than leaving every other registration waiting for a release that cannot come.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Registration;
use crate::error::Result;
use crate::wait::WakerKey;

impl Registration {
    /// [`next_single`](Self::next_single) for an async task: a future that, when first polled,
    /// makes `next_single`'s checks, claims the phase's action if no other registration has, and
    /// signals; it completes once the phase is released, without blocking the thread that polls
    /// it. As with `next_single`, `action` runs exactly once per phase, after every signal of the
    /// phase and before any registration proceeds past it, in the task (or thread) that claimed
    /// it, which gets `Some(result)`; the others get `None`. Blocking threads in `next_single`
    /// and tasks in `next_single_async` share one phaser, and the runner may be either.
    ///
    /// The runner's task runs the action inside the poll that sees the phase gathered: an action
    /// that blocks blocks that poll's thread. A task never spins: each poll probes its word once
    /// and the task is woken by the gather (the runner), the release (the others) or a break. A
    /// task's stall is reported by the process's stall watchdog (see [`wait`](crate::wait),
    /// *Stalls*), and [`SingleFuture`] has no `.timeout()` or `.deadline()` (see
    /// [its docs](SingleFuture#no-deadline) for why, and what to use instead).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::sync::{Arc, Mutex};
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use phasers::{Accumulator, Mode, Op, Phaser};
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
    /// let (phaser, mut main) = Phaser::new(Mode::SigWaitSingle)?;
    /// let sum = Accumulator::<i64>::new(&phaser, Op::Sum)?;
    /// let totals = Mutex::new(Vec::new());
    /// let runs = std::thread::scope(|s| {
    ///     let tasks: Vec<_> = (1..=3i64)
    ///         .map(|task| {
    ///             let mut reg = main.register(Mode::SigWaitSingle).unwrap();
    ///             let (sum, totals) = (&sum, &totals);
    ///             s.spawn(move || {
    ///                 block_on(async {
    ///                     sum.send(&mut reg, task).unwrap();
    ///                     let push = || totals.lock().unwrap().push(sum.result());
    ///                     reg.next_single_async(push).await.unwrap().is_some()
    ///                 })
    ///             })
    ///         })
    ///         .collect();
    ///     // A blocking thread in the same phase.
    ///     let mine = main.next_single(|| totals.lock().unwrap().push(sum.result())).unwrap();
    ///     let theirs = tasks.into_iter().filter_map(|t| t.join().unwrap().then_some(())).count();
    ///     theirs + usize::from(mine.is_some())
    /// });
    /// assert_eq!(runs, 1); // one `Some`
    /// assert_eq!(*totals.lock().unwrap(), vec![6]); // ran once, with the phase's sum
    /// assert_eq!(phaser.phase(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Cancellation
    ///
    /// Dropping the future before its first poll does nothing. After it, the registration has
    /// signalled the phase, and what the drop does depends on whether this future claimed the
    /// action ([`SingleFuture::holds_action`]):
    ///
    /// - **Not the runner**: the signal stays (a split phase, as after
    ///   [`signal`](Self::signal) or a dropped [`next_async`](Self::next_async)). The runner still
    ///   runs the action; this registration's next [`wait`](Self::wait), [`next`](Self::next) or
    ///   async form waits for the phase already signalled and returns it, and `next_single` (or
    ///   this) fails with [`Error::InvalidArgument`](crate::Error::InvalidArgument) until then.
    /// - **The runner, before its action ran**: the phaser breaks at the phase, as when the action
    ///   panics. No other registration can run the action or release the phase (they are waiting
    ///   for the release, or have been handed their `None`), so every wait for the phase returns
    ///   [`Error::Broken`](crate::Error::Broken) instead of hanging, and no phase is ever released
    ///   without its action. The action is dropped unrun.
    ///
    /// Once the future completed, dropping it does nothing.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let (phaser, mut main) = Phaser::new(Mode::SigWaitSingle)?;
    /// let mut other = main.register(Mode::SigWaitSingle)?;
    /// {
    ///     let mut single = main.next_single_async(|| unreachable!("dropped unrun"));
    ///     let pending = Pin::new(&mut single).poll(&mut Context::from_waker(&waker));
    ///     assert!(pending.is_pending()); // claimed and signalled; `other` has not signalled
    ///     assert!(single.holds_action());
    /// } // dropped: the runner is gone, so the phaser breaks at phase 0
    /// assert!(matches!(other.next_single(|| ()), Err(Error::Broken { .. })));
    /// assert_eq!(phaser.phase(), 0); // never released
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`next_single`](Self::next_single), from the first poll:
    /// [`Error::Capability`](crate::Error::Capability) unless the mode is
    /// [`Mode::SigWaitSingle`](crate::Mode::SigWaitSingle),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) in the middle of a split phase;
    /// [`Error::Broken`](crate::Error::Broken) or [`Error::Terminated`](crate::Error::Terminated)
    /// when the phaser cannot advance, also while the task waits.
    ///
    /// # Panics
    ///
    /// If the action panics, the phaser breaks (the others get `Error::Broken`) and the panic
    /// continues out of the poll that ran it, as it continues out of `next_single`.
    pub fn next_single_async<F, R>(&mut self, action: F) -> SingleFuture<'_, F>
    where
        F: FnOnce() -> R,
    {
        SingleFuture {
            registration: self,
            action: Some(action),
            state: State::Start,
            key: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not polled yet: nothing done.
    Start,
    /// Claimed the action and signalled: waiting for the phase to be gathered, then runs it.
    Runner(u64),
    /// Signalled, another registration holds the action: waiting for the phase's release.
    Follower(u64),
    /// Completed: the output was returned (or the action is running, or panicked).
    Done,
}

/// The future of [`Registration::next_single_async`]: `Some` of the action's result in the task
/// that ran it, `None` in the others, once the phase is released; or the error `next_single`
/// would return.
///
/// It holds the registration (`&mut`) and the action until it completes or is dropped. It is
/// `Unpin` whatever the action is (the action is never pinned). Polling it again after it
/// completed panics, as futures may. See [`next_single_async`](Registration::next_single_async)
/// for what dropping it does.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
/// use phasers::{phaser::SingleFuture, Mode, Phaser};
/// # use std::sync::Arc;
/// # use std::task::Wake;
/// # struct Nothing;
/// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
/// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
///
/// let (_phaser, mut main) = Phaser::new(Mode::SigWaitSingle)?;
/// let mut single: SingleFuture<'_, _> = main.next_single_async(|| 6 * 7);
/// let polled = Pin::new(&mut single).poll(&mut Context::from_waker(&waker));
/// assert!(matches!(polled, Poll::Ready(Ok(Some(42))))); // the only signaller: ran at once
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// # No deadline
///
/// Unlike [`PhaseFuture`](super::PhaseFuture) and the crate's other futures, it has no
/// `.timeout()` or `.deadline()`, as [`next_single`](Registration::next_single) has no timed
/// form. A follower could give up as [`next_async`](Registration::next_async)`().timeout()`
/// does (its signal stays: a split phase), but the runner cannot: only it can run the action
/// and release the phase, and a timeout cannot hand the action over (`next_single` refuses in
/// the split phase it would leave), so a runner that gives up must break the phaser, as its
/// drop does. Which registration is the runner is decided by the first poll, so a deadline
/// would sometimes time out quietly and sometimes break the phaser for everyone.
///
/// To bound the wait anyway, drop the future at the deadline (for example with
/// `tokio::time::timeout`, or a `select!` on a timer): that is the cancellation documented at
/// [`next_single_async`](Registration::next_single_async), whose effect
/// [`holds_action`](Self::holds_action) tells beforehand: a follower's signal stays and its
/// next `wait_async().timeout(..)` resumes the phase, a runner's drop breaks the phaser.
#[must_use = "a future does nothing until it is polled (awaited)"]
pub struct SingleFuture<'a, F> {
    registration: &'a mut Registration,
    /// The action, until it runs (or the future is dropped).
    action: Option<F>,
    state: State,
    /// Where this task's waker is stored: on the gather word for the runner, on the release word
    /// for the others.
    key: Option<WakerKey>,
}

// The action is only ever moved out and called, never pinned: pinning the future pins nothing.
impl<F> Unpin for SingleFuture<'_, F> {}

impl<F> SingleFuture<'_, F> {
    /// Whether this future claimed its phase's action and has yet to run it: its first poll made
    /// it the phase's runner, and it has not completed. Dropping it now breaks the phaser (see
    /// [`next_single_async`](Registration::next_single_async)).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Mode, Phaser};
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    ///
    /// let (_phaser, mut first) = Phaser::new(Mode::SigWaitSingle)?;
    /// let mut second = first.register(Mode::SigWaitSingle)?;
    /// let mut runner = first.next_single_async(|| "ran");
    /// assert!(!runner.holds_action()); // not polled: nothing claimed yet
    /// assert!(Pin::new(&mut runner).poll(&mut Context::from_waker(&waker)).is_pending());
    /// assert!(runner.holds_action()); // polled first: it runs the action
    ///
    /// let mut follower = second.next_single_async(|| "never");
    /// let polled = Pin::new(&mut follower).poll(&mut Context::from_waker(&waker));
    /// assert!(polled.is_pending()); // the phase is gathered, its action not yet run
    /// assert!(!follower.holds_action());
    ///
    /// let ran = Pin::new(&mut runner).poll(&mut Context::from_waker(&waker));
    /// assert!(matches!(ran, Poll::Ready(Ok(Some("ran")))));
    /// assert!(!runner.holds_action()); // completed
    /// let released = Pin::new(&mut follower).poll(&mut Context::from_waker(&waker));
    /// assert!(matches!(released, Poll::Ready(Ok(None))));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn holds_action(&self) -> bool {
        matches!(self.state, State::Runner(_))
    }

    /// Drops the stored waker, if any: the task no longer waits.
    fn forget_waker(&mut self) {
        if let Some(key) = self.key.take() {
            match self.state {
                State::Runner(_) => self.registration.forget_gathered_waker(key),
                _ => self.registration.forget_waker(key),
            }
        }
    }
}

impl<F, R> Future for SingleFuture<'_, F>
where
    F: FnOnce() -> R,
{
    type Output = Result<Option<R>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Option<R>>> {
        let this = self.get_mut();
        if this.state == State::Start {
            match this.registration.begin_single() {
                Ok((phase, true)) => this.state = State::Runner(phase),
                Ok((phase, false)) => this.state = State::Follower(phase),
                Err(error) => {
                    this.state = State::Done;
                    return Poll::Ready(Err(error));
                }
            }
        }
        match this.state {
            State::Runner(phase) => {
                let gathered =
                    match this
                        .registration
                        .poll_gathered(phase, &mut this.key, cx.waker())
                    {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(gathered) => gathered,
                    };
                this.forget_waker();
                // Done before the action runs: should it panic, the runner has already broken
                // the phaser, and the drop that follows has nothing left to do.
                this.state = State::Done;
                if let Err(error) = gathered {
                    // Broken or terminated while waiting: the registration stays waiting for the
                    // phase, as after the blocking call's error.
                    return Poll::Ready(Err(error));
                }
                let action = this.action.take().expect("the runner's action runs once");
                Poll::Ready(Ok(Some(this.registration.run_single(phase, action))))
            }
            State::Follower(phase) => {
                let released =
                    match this
                        .registration
                        .poll_release(phase, &mut this.key, cx.waker())
                    {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(released) => released,
                    };
                this.forget_waker();
                this.state = State::Done;
                Poll::Ready(released.map(|()| {
                    this.registration.end_wait(phase);
                    None
                }))
            }
            State::Start | State::Done => panic!("a SingleFuture was polled after it completed"),
        }
    }
}

impl<F> Drop for SingleFuture<'_, F> {
    fn drop(&mut self) {
        self.forget_waker();
        if let State::Runner(phase) = self.state {
            // Only this future can release the phase: break it rather than leave the others
            // waiting (see `next_single_async`).
            self.registration.abandon_single(phase);
        }
    }
}

impl<F> fmt::Debug for SingleFuture<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SingleFuture")
            .field("registration", &self.registration)
            .field("state", &self.state)
            .field("action", &self.action.as_ref().map(|_| "FnOnce"))
            .finish()
    }
}
