//! A task's wait in a reduction's steps, and what a cancelled call still owes the others.
//!
//! Each algorithm has two forms of the same steps: `run`, whose waits block the thread (spin,
//! yield, park, as every blocking wait of the crate), and `run_in_task`, an `async fn` whose
//! waits are [`SignalWait`]s: a wait that does not hold yet stores the task's waker on the signal
//! and returns `Pending` (see `wait/poll.rs`), and the task's next poll resumes the steps there,
//! with each step's state (the round, what a participant holds, its job) kept in the `async fn`'s
//! state. The two forms share every step between two waits, so what they duplicate is only the
//! order of the steps. One `async fn` for both, with the blocking form polled once, cost the
//! blocking calls 20-30% (about 200 ns of a 2-participant call of 0.7-1 µs on the 2-core Xeon
//! VM): the state machine saves and reloads its state at every wait, on the critical path.
//!
//! A task's call can be cancelled at any wait (its future dropped); [`OnCancel`] holds what it
//! then owes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::call::Bail;
use super::handle::{settle_broken, Caller};
use crate::wait::{watch_task, Signal, TaskWaiter, WakerKey};

/// A task's wait until `done` holds for `signal`'s value (see [`Caller::wait_in_task`]).
pub(crate) struct SignalWait<'s, 'c, T, F> {
    pub(super) me: &'s Caller<'c, T>,
    pub(super) signal: &'s Signal,
    pub(super) done: F,
    pub(super) checked: bool,
    /// Where a task's waker is stored on `signal`, once it stored one.
    pub(super) key: Option<WakerKey>,
}

impl<'a, T: Copy + Send + Sync + 'static> Caller<'a, T> {
    /// [`wait`](Caller::wait) for a task: a poll of the task (see `task_wait.rs`).
    pub(crate) fn wait_in_task<'s, F: Fn(u64) -> bool + Unpin>(
        &'s self,
        signal: &'s Signal,
        done: F,
        checked: bool,
    ) -> SignalWait<'s, 'a, T, F> {
        SignalWait {
            me: self,
            signal,
            done,
            checked,
            key: None,
        }
    }
}

impl<T: Copy + Send + Sync + 'static, F: Fn(u64) -> bool + Unpin> Future
    for SignalWait<'_, '_, T, F>
{
    type Output = Result<u64, Bail>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let me = this.me;
        let episode = *me.episode;
        let broken = me.shared.broken_state(this.checked);
        let signal = this.signal;
        let done = &this.done;
        let polled =
            TaskWaiter::new(broken, episode).poll_probe(signal, &mut this.key, cx.waker(), || {
                let value = signal.load();
                done(value).then_some(value)
            });
        match polled {
            Poll::Ready(Ok(value)) => Poll::Ready(Ok(value)),
            Poll::Ready(Err(_)) => Poll::Ready(settle_broken(signal, done)),
            Poll::Pending => {
                watch_task(me.object, episode);
                Poll::Pending
            }
        }
    }
}

impl<T, F> Drop for SignalWait<'_, '_, T, F> {
    fn drop(&mut self) {
        // A task's waker stays in the signal's list until a release takes it; one that is done
        // waiting (or was cancelled) takes it out, so the list does not keep what it no longer
        // needs. Threads never store one.
        if let Some(key) = self.key.take() {
            self.signal.remove_waker(key);
        }
    }
}

/// A step to take if the call is cancelled (its future dropped) between two points: whatever a
/// participant that leaves there owes the others, so that nobody waits for it for ever and
/// nobody is left holding a buffer the caller takes back. Every such step first breaks the group
/// at the call (the others get [`Error::Broken`](crate::Error::Broken)), whatever order a dropped
/// future drops its steps in.
pub(crate) struct OnCancel<F: FnMut()> {
    step: Option<F>,
}

impl<F: FnMut()> OnCancel<F> {
    pub(crate) fn new(step: F) -> Self {
        OnCancel { step: Some(step) }
    }

    /// The call went past the point where the step was owed.
    pub(crate) fn disarm(mut self) {
        self.step = None;
    }
}

impl<F: FnMut()> Drop for OnCancel<F> {
    fn drop(&mut self) {
        if let Some(mut step) = self.step.take() {
            step();
        }
    }
}
