//! One wait of a reduction's steps, for a thread or for an async task, and how a blocking call
//! runs the steps.
//!
//! The algorithms are written once, as `async fn`s whose every wait is a [`SignalWait`]. In a
//! blocking call ([`Reducer::reduce`](crate::Reducer::reduce)) a wait blocks the thread inside
//! its poll (spin, yield, park, as every blocking wait of the crate), so one poll runs the whole
//! call: [`run_inline`] makes that poll, with a waker nobody needs. In an async call
//! ([`Reducer::reduce_async`](crate::Reducer::reduce_async)) a wait that does not hold yet stores
//! the task's waker on the signal and returns `Pending` (see `wait/poll.rs`), and the task's next
//! poll resumes the steps there. Each step's state (the round, what a participant holds, its job)
//! lives in the `async fn`'s state, so no algorithm needs a resumable copy of itself.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::call::Bail;
use super::handle::Caller;
use crate::wait::{noop_waker, watch_task, Signal, TaskWaiter, WakerKey};

/// A wait until `done` holds for `signal`'s value (see [`Caller::wait`]).
pub(crate) struct SignalWait<'s, 'c, T, F> {
    pub(super) me: &'s Caller<'c, T>,
    pub(super) signal: &'s Signal,
    pub(super) done: F,
    pub(super) checked: bool,
    /// Where a task's waker is stored on `signal`, once it stored one.
    pub(super) key: Option<WakerKey>,
}

impl<T: Copy + Send + Sync + 'static, F: Fn(u64) -> bool + Unpin> Future
    for SignalWait<'_, '_, T, F>
{
    type Output = Result<u64, Bail>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let me = this.me;
        if !me.task {
            return Poll::Ready(me.block_until(this.signal, &this.done, this.checked));
        }
        let shared = me.shared;
        let episode = *me.episode;
        let broken = if this.checked {
            &shared.broken
        } else {
            &shared.intact
        };
        let signal = this.signal;
        let done = &this.done;
        let polled = TaskWaiter::new(broken, episode).poll_probe(
            signal,
            &mut this.key,
            cx.waker(),
            || {
                let value = signal.load();
                done(value).then_some(value)
            },
        );
        match polled {
            Poll::Ready(Ok(value)) => Poll::Ready(Ok(value)),
            // Broken: as for a thread, a condition that came with the break still counts.
            Poll::Ready(Err(_)) => {
                let value = signal.load();
                Poll::Ready(if done(value) {
                    Ok(value)
                } else {
                    Err(Bail::Broken)
                })
            }
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

/// Runs the steps of a blocking call. Every wait in them blocks inside the poll, so one poll
/// finishes them, and the waker is never used. The steps come pinned where they were made: a
/// move would copy the whole state of the call.
#[inline]
pub(crate) fn run_inline<F: Future>(steps: Pin<&mut F>) -> F::Output {
    match steps.poll(&mut Context::from_waker(&noop_waker())) {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => unreachable!("a blocking reduction's waits finish inside its one poll"),
    }
}

/// A step to take if the call is cancelled (its future dropped) between two points: whatever a
/// participant that leaves there owes the others, so that nobody waits for it for ever and
/// nobody is left holding a buffer the caller takes back. Every such step first breaks the group
/// at the call (the others get [`Error::Broken`](crate::Error::Broken)), whatever order a dropped
/// future drops its steps in. A blocking call is never cancelled; a panic that unwinds through
/// its steps (never the operator's: that one is caught) takes the same way out.
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
