//! The async form of [`AnyThreadBarrier::wait`]: a future that takes a ticket when first polled,
//! borrows its rank's participant out of the slot, and waits as that participant through
//! [`Participant::poll_wait`], the poll behind [`BarrierFuture`](super::BarrierFuture), so it adds
//! no wait of its own.
//!
//! A blocking call holds its slot's lock for its whole wait; a task cannot hold a lock across
//! polls (its guard is not `Send`, and a task must not block its thread waiting for one), so it
//! takes the participant out of the slot (`Ok(None)` marks it lent) and puts it back when it is
//! done. A later call of the same rank, blocking or async, waits meanwhile exactly as it waits
//! for a blocking holder to unlock: the holder's episode has every call already (see the type
//! docs of `AnyThreadBarrier`), so the participant comes back once the holder's task is polled.
//!
//! A dropped call cannot withdraw what it did (see `AnyThreadBarrier`'s "A timed wait that gives
//! up breaks the barrier"), so a future dropped after its first poll and before it completed
//! breaks the barrier, as a timed wait that gives up does, unless its episode turns out to have
//! completed already.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::TryLockError;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::{AnyAlgorithm, AnyThreadBarrier, BarrierAlgorithm, Participant, WaitResult};
use crate::error::{Error, Result};
use crate::primitive::Ordering;
use crate::wait::{noop_waker, StoredWaker, TaskDeadline};

impl<A: BarrierAlgorithm> AnyThreadBarrier<A> {
    /// [`wait`](Self::wait) for an async task: a future that takes this call's place among the
    /// calls when first polled (its rank, as a blocking call takes it) and completes with the
    /// same [`WaitResult`] once `parties` calls have arrived at its episode, without blocking the
    /// thread that polls it. Blocking threads and tasks can share one barrier; any executor can
    /// poll it. The pairing rule is `wait`'s: the calls must pair up.
    ///
    /// It waits as its rank's [`Participant`] does in
    /// [`Participant::wait_async`](super::Participant::wait_async): no spinning, woken by the
    /// condition it stopped at (or by the barrier breaking); its stall is reported by the
    /// process's stall watchdog (see [`wait`](crate::wait), *Stalls*), and it has no deadline
    /// unless given one with [`AnyThreadFuture::timeout`] or [`AnyThreadFuture::deadline`] (the
    /// async [`wait_timeout`](Self::wait_timeout), which breaks the barrier as it does). One wait
    /// is different: the wait for the previous call of its rank to leave (its episode already
    /// has every call, so this is brief). When that call is a task's, this task is woken when
    /// that one gives the rank back; when it is a blocking thread's, still being released, the
    /// task wakes itself and returns `Pending`, to be polled again, rather than block its thread.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use phasers::AnyThreadBarrier;
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
    /// let barrier = AnyThreadBarrier::new(2);
    /// std::thread::scope(|s| {
    ///     let task = s.spawn(|| {
    ///         (0..3).map(|_| block_on(barrier.wait_async()).unwrap().episode()).collect::<Vec<_>>()
    ///     });
    ///     for episode in 0..3 {
    ///         assert_eq!(barrier.wait().unwrap().episode(), episode); // a blocking thread
    ///     }
    ///     assert_eq!(task.join().unwrap(), vec![0, 1, 2]);
    /// });
    /// barrier.settle()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Cancellation
    ///
    /// Dropping the future before its first poll does nothing. After it, the call has taken its
    /// place, and has arrived or is about to; an arrival cannot be withdrawn, and, as the calls
    /// are anonymous, no later call can take it over (see the [type docs](AnyThreadBarrier)). So
    /// a future dropped before it completed **breaks the barrier**, as a timed wait that gives up
    /// does: every other call waiting at its episode and every later call returns
    /// [`Error::Broken`] instead of waiting for a call that will never come, and nobody arrives
    /// twice for one call. The one exception is a future whose episode completed while it was
    /// not polled: the drop finishes its wait, and the barrier goes on. (A last call that arrives
    /// in the instant between the drop's last look and its break still completes the episode for
    /// the others, as beside a timed wait that gives up; the barrier is broken all the same.)
    ///
    /// (A future dropped while still waiting for the previous call of its rank to leave has not
    /// arrived yet, but an episode is one call short all the same; the barrier breaks from the
    /// episode its place numbers, which, when a later call of its rank overtook it, is one before
    /// the episode left short.)
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{AnyThreadBarrier, Error};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let barrier = AnyThreadBarrier::new(2);
    /// {
    ///     let mut wait = barrier.wait_async();
    ///     let pending = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
    ///     assert!(pending.is_pending()); // arrived; the other call has not come
    /// } // dropped: the arrival stays, so episode 0 can never complete as counted
    /// assert!(barrier.is_broken());
    /// assert!(matches!(barrier.wait(), Err(Error::Broken { .. }))); // at once, no hang
    /// barrier.settle()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait): [`Error::Broken`] when a completion action panicked, a timed
    /// wait gave up or an async call was dropped (also while the task waits).
    pub fn wait_async(&self) -> AnyThreadFuture<'_, A> {
        AnyThreadFuture {
            barrier: self,
            state: State::Start,
            deadline: TaskDeadline::none(),
        }
    }
}

enum State<A: BarrierAlgorithm> {
    /// Not polled yet: nothing done.
    Start,
    /// Took `ticket`: waiting for its rank's participant to be in the slot.
    Queued { ticket: u64 },
    /// Holds its rank's participant (the slot marks it lent) and has arrived.
    Waiting {
        rank: usize,
        participant: Participant<A>,
        /// Where this task's waker is stored, and on which signal, if it stored one.
        stored: Option<StoredWaker>,
    },
    /// Completed: the output was returned and the participant given back.
    Done,
}

/// The future of [`AnyThreadBarrier::wait_async`]: the episode's [`WaitResult`] once `parties`
/// calls have arrived at it, or the error the blocking [`wait`](AnyThreadBarrier::wait) would
/// return.
///
/// It borrows the barrier until it completes or is dropped; dropping it after its first poll and
/// before it completes breaks the barrier (see
/// [`wait_async`](AnyThreadBarrier::wait_async)). It is `Unpin`. Polling it again after it
/// completed panics, as futures may.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
/// use phasers::{barrier::AnyThreadFuture, AnyThreadBarrier};
/// # use std::sync::Arc;
/// # use std::task::Wake;
/// # struct Nothing;
/// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
/// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
///
/// let barrier = AnyThreadBarrier::new(1);
/// let mut wait: AnyThreadFuture<'_> = barrier.wait_async();
/// let polled = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
/// // The only party: episode 0 completes in the first poll, and this call led it.
/// assert!(matches!(polled, Poll::Ready(Ok(result)) if result.episode() == 0 && result.is_leader()));
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a future does nothing until it is polled (awaited)"]
pub struct AnyThreadFuture<'a, A: BarrierAlgorithm = AnyAlgorithm> {
    barrier: &'a AnyThreadBarrier<A>,
    state: State<A>,
    /// When the wait gives up (breaking the barrier), if ever.
    deadline: TaskDeadline,
}

impl<A: BarrierAlgorithm> AnyThreadFuture<'_, A> {
    /// Gives up waiting after `timeout` (counted from this call) exactly as
    /// [`AnyThreadBarrier::wait_timeout`] does: the future returns the same
    /// [`Error::Timeout`] (`episode` the episode it waited for, one `missing` entry per call that
    /// had not arrived, `resumable: false`) and **breaks the barrier**, so every other call
    /// waiting at the episode and every later call returns [`Error::Broken`]. A timeout too long
    /// for the clock to hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// As for the blocking form, the deadline bounds the wait for the other calls of this
    /// episode: the first poll still takes the call's place and arrives (and completes, if it is
    /// the last call), the wait for the previous call of its rank to leave has no deadline, and
    /// when every call of the episode had arrived by the deadline and only the release is on its
    /// way, the wait completes instead. A timer thread (`futures-timer`'s, one per process) wakes
    /// the task at the deadline; a future without a deadline never starts it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{AnyThreadBarrier, Error};
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
    /// let barrier = AnyThreadBarrier::new(2);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait().unwrap());
    ///     // `block_on` stands for any executor: `barrier.wait_async().timeout(...).await`.
    ///     let both = block_on(barrier.wait_async().timeout(Duration::from_secs(60)));
    ///     assert_eq!(both.unwrap().episode(), 0); // both came in time
    /// });
    /// // Alone at episode 1: this call gives up and breaks the barrier.
    /// let err = block_on(barrier.wait_async().timeout(Duration::from_millis(5))).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 1, ref missing, resumable: false }
    ///     if missing.len() == 1));
    /// assert!(barrier.is_broken());
    /// assert!(matches!(block_on(barrier.wait_async()), Err(Error::Broken { .. })));
    /// barrier.settle()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.deadline = TaskDeadline::after(timeout);
        self
    }

    /// Gives up waiting at `deadline`, as [`timeout`](Self::timeout) does after its duration (the
    /// async [`AnyThreadBarrier::wait_deadline`]): a call that gives up **breaks the barrier**. A
    /// deadline already past still arrives in the first poll: it completes the episode if this
    /// call is the last to arrive, and otherwise gives up at once.
    ///
    /// ```
    /// use std::time::Instant;
    /// use phasers::{AnyThreadBarrier, Error};
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
    /// let past = Instant::now();
    /// // A barrier of one: the only call completes its episode, whatever the deadline.
    /// let one = AnyThreadBarrier::new(1);
    /// assert!(block_on(one.wait_async().deadline(past))?.is_leader());
    ///
    /// let pair = AnyThreadBarrier::new(2);
    /// let err = block_on(pair.wait_async().deadline(past)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, resumable: false, .. }));
    /// assert!(pair.is_broken());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = TaskDeadline::at(deadline);
        self
    }
}

impl<A: BarrierAlgorithm> AnyThreadFuture<'_, A> {
    /// Puts `participant` back in slot `rank`, waking the calls of the rank that wait for it.
    fn give_back(&self, rank: usize, participant: Participant<A>) {
        self.barrier.slots[rank].give_back(Ok(participant));
    }

    /// A timed-out wait's end, as in `AnyThreadBarrier::wait_until`: the slot keeps the break,
    /// dropping the participant breaks the barrier from the episode on (waking every waiter),
    /// and the error is the blocking timeout's, not resumable. `timed_out` is the participant's
    /// (resumable) timeout; the state is `Waiting`, its waker already forgotten.
    #[cold]
    fn give_up(&mut self, timed_out: Error) -> Error {
        let State::Waiting {
            rank, participant, ..
        } = std::mem::replace(&mut self.state, State::Done)
        else {
            unreachable!("only a waiting call times out")
        };
        let Error::Timeout {
            episode, missing, ..
        } = timed_out
        else {
            unreachable!("`Participant::timed_out` is a timeout")
        };
        self.barrier.slots[rank].give_back(Err(Error::Broken { by: rank, episode }));
        drop(participant);
        Error::Timeout {
            episode,
            missing,
            resumable: false,
        }
    }

    /// The drop of a future that took its place and did not complete: breaks the barrier, unless
    /// its episode completed meanwhile (see [`AnyThreadBarrier::wait_async`]).
    fn abandon(&mut self) {
        let parties = self.barrier.slots.len() as u64;
        match std::mem::replace(&mut self.state, State::Done) {
            State::Start | State::Done => {}
            State::Queued { ticket } => {
                // No arrival was made, but the call's place was taken: its episode is one call
                // short. Broken from the episode its place numbers, without the slot (its holder
                // may be a task that only this thread can poll).
                let rank = (ticket % parties) as usize;
                self.barrier
                    .barrier
                    .shared
                    .break_from(ticket / parties, rank);
                self.barrier.abandoned[rank].fetch_add(1, Ordering::Release);
            }
            State::Waiting {
                rank,
                mut participant,
                mut stored,
            } => {
                // The episode may have completed since the last poll: then finish the wait
                // quietly and give the participant back. Not while unwinding: the poll may run
                // the completion action, whose panic would then abort.
                let outcome = if std::thread::panicking() {
                    Poll::Pending
                } else {
                    participant.poll_wait(&noop_waker(), &mut stored, None)
                };
                participant.forget_waker(&mut stored);
                if outcome.is_ready() {
                    self.give_back(rank, participant);
                    return;
                }
                // As a timed wait that gives up: the slot keeps the error, and dropping the
                // participant breaks the barrier from its episode on, waking every waiter.
                let episode = participant.episode();
                self.barrier.slots[rank].give_back(Err(Error::Broken { by: rank, episode }));
                drop(participant);
            }
        }
    }
}

impl<A: BarrierAlgorithm> Unpin for AnyThreadFuture<'_, A> {}

impl<A: BarrierAlgorithm> Future for AnyThreadFuture<'_, A> {
    type Output = Result<WaitResult>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<WaitResult>> {
        let this = self.get_mut();
        let barrier = this.barrier;
        loop {
            match &mut this.state {
                State::Start => {
                    // Relaxed, as in `wait`: the ticket only chooses a slot.
                    let ticket = barrier.tickets.fetch_add(1, Ordering::Relaxed);
                    this.state = State::Queued { ticket };
                }
                State::Queued { ticket } => {
                    let rank = (*ticket % barrier.slots.len() as u64) as usize;
                    let mut slot = match barrier.slots[rank].slot.try_lock() {
                        Ok(slot) => slot,
                        // A completion action panicked in an earlier wait on this slot: the
                        // participant reports the break (see `AnyThreadBarrier::lock_slot`).
                        Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                        // A blocking call of this rank is still leaving its (complete) episode.
                        Err(TryLockError::WouldBlock) => {
                            return requeue(cx);
                        }
                    };
                    match &mut slot.participant {
                        Ok(Some(_)) => {}
                        // An async call of this rank has it, and gives it back once polled: that
                        // give-back wakes this task (see `Slot::queued`).
                        Ok(None) => {
                            if !slot
                                .queued
                                .iter()
                                .any(|queued| queued.will_wake(cx.waker()))
                            {
                                slot.queued.push(cx.waker().clone());
                            }
                            return Poll::Pending;
                        }
                        Err(lost) => {
                            let lost = lost.clone();
                            slot.calls += 1;
                            drop(slot);
                            this.state = State::Done;
                            return Poll::Ready(Err(lost));
                        }
                    }
                    let Ok(participant) = &mut slot.participant else {
                        unreachable!("checked above")
                    };
                    let participant = participant.take().expect("checked above");
                    slot.calls += 1;
                    drop(slot);
                    this.state = State::Waiting {
                        rank,
                        participant,
                        stored: None,
                    };
                }
                State::Waiting {
                    rank,
                    participant,
                    stored,
                } => {
                    let outcome = match participant.poll_wait(cx.waker(), stored, None) {
                        Poll::Pending if !this.deadline.has_passed(cx) => return Poll::Pending,
                        Poll::Pending => match participant.timed_out() {
                            // Every call of the episode has arrived (the roster only
                            // under-reports arrivals): the release needs nobody else, so wait for
                            // it rather than break an episode that is completing, as
                            // `wait_timeout` does. The waker stays stored on the signal.
                            Error::Timeout { missing, .. } if missing.is_empty() => {
                                return Poll::Pending
                            }
                            timed_out => {
                                participant.forget_waker(stored);
                                return Poll::Ready(Err(this.give_up(timed_out)));
                            }
                        },
                        Poll::Ready(outcome) => outcome,
                    };
                    participant.forget_waker(stored);
                    let rank = *rank;
                    let State::Waiting { participant, .. } =
                        std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!("matched above")
                    };
                    // Broken or not, the participant goes back: a broken one reports the break
                    // to every later call of its rank.
                    this.give_back(rank, participant);
                    return Poll::Ready(outcome);
                }
                State::Done => panic!("an AnyThreadFuture was polled after it completed"),
            }
        }
    }
}

impl<A: BarrierAlgorithm> Drop for AnyThreadFuture<'_, A> {
    fn drop(&mut self) {
        self.abandon();
    }
}

impl<A: BarrierAlgorithm> fmt::Debug for AnyThreadFuture<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Start => "start",
            State::Queued { .. } => "queued for its rank",
            State::Waiting { .. } => "arrived",
            State::Done => "done",
        };
        f.debug_struct("AnyThreadFuture")
            .field("barrier", &self.barrier)
            .field("state", &state)
            .field("deadline", &self.deadline)
            .finish()
    }
}

/// The `Pending` of a task queued behind a blocking call of its rank: it wakes itself, to be
/// polled again once the executor has run the others. A blocking call leaves by unlocking the
/// slot, which tells no task; a waker list it had to look at would cost every blocking call.
/// Under loom, whose models poll by hand on a thread
/// of their own, the thread also yields, so that the model runs the holder rather than an
/// endless re-poll.
fn requeue<T>(cx: &mut Context<'_>) -> Poll<T> {
    cx.waker().wake_by_ref();
    #[cfg(phasers_loom)]
    crate::primitive::yield_now();
    Poll::Pending
}
