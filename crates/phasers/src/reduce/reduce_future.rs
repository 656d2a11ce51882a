//! The async forms of a reduction's calls: [`Reducer::reduce_async`] and
//! [`Reducer::allreduce_async`].
//!
//! They run the very steps of the blocking calls (see `task_wait.rs`), with two differences: every
//! wait is a poll of the task, and the call works on the group's copies of the caller's buffers
//! (see `staging.rs`), so that a cancelled call leaves nothing of the caller's in anyone's hands.
//! Tasks and threads may share one group, call by call.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::handle::Reducer;
use super::reducer::ReduceOutcome;
use super::signature::{KIND_ALLREDUCE, KIND_REDUCE};
use crate::error::{Error, Result};

impl<T: Copy + Send + Sync + 'static> Reducer<T> {
    /// [`reduce`](Self::reduce) for an async task: the task waits without blocking its thread,
    /// on any executor (the future needs nothing but its waker).
    ///
    /// The call runs on the group's copies of `input` and of the root's `output`: the input is
    /// copied in at the first poll, and the result copied out when the call completes. That is
    /// what makes dropping the future safe at any point, since the others may still be reading
    /// this participant's data or writing its result when it is dropped:
    /// - before the task arrived (its first poll, unless that poll found call `e - 2` not yet
    ///   marked complete, a wait of nanoseconds), nothing happened: the call can be made again;
    /// - after it, the call cannot complete, and the group breaks there, as when a handle is
    ///   dropped: every participant's calls from then on return
    ///   [`Error::Broken`](crate::Error::Broken) naming this one, its own included, and nobody
    ///   waits for ever.
    ///
    /// Tasks and threads may share a group, call by call. Reductions have no deadline, blocking
    /// or async; a task that must give up drops the future.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    /// # use std::future::Future;
    /// # use std::sync::Arc;
    /// # use std::task::{Context, Poll, Wake, Waker};
    /// # /// Polls `future` on this thread, parking between polls: a minimal executor.
    /// # fn block_on<F: Future>(future: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl Wake for Unpark { fn wake(self: Arc<Self>) { self.0.unpark() } }
    /// #     let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    /// #     let mut future = std::pin::pin!(future);
    /// #     loop {
    /// #         if let Poll::Ready(out) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
    /// #             return out;
    /// #         }
    /// #         std::thread::park();
    /// #     }
    /// # }
    ///
    /// let group = Reduction::<u64>::new(3, Op::Sum)?;
    /// std::thread::scope(|s| {
    ///     for mut p in group.participants() {
    ///         // Each participant a task, here on an executor of its own.
    ///         s.spawn(move || block_on(async move {
    ///             let mut total = [0];
    ///             let outcome = p.reduce_async(&[p.rank() as u64 + 1], &mut total).await.unwrap();
    ///             // Rank 0 is the root: it alone receives 1 + 2 + 3.
    ///             assert_eq!(outcome.has_result(), p.is_root());
    ///             assert_eq!(total[0], if p.is_root() { 6 } else { 0 });
    ///         }));
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce), and [`Error::Broken`](crate::Error::Broken) after a future
    /// of this group was dropped in the middle of a call.
    pub fn reduce_async<'a>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
    ) -> impl Future<Output = Result<ReduceOutcome>> + Send + 'a {
        let has_output = self.is_root();
        AssertSend(self.call_in_task(KIND_REDUCE, input, output, has_output))
    }

    /// [`allreduce`](Self::allreduce) for an async task, with the copies and the cancellation of
    /// [`reduce_async`](Self::reduce_async).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use phasers::{Error, Op, Reduction};
    ///
    /// # use std::sync::Arc;
    /// # use std::task::Wake;
    /// # struct Nothing;
    /// # impl Wake for Nothing { fn wake(self: Arc<Self>) {} }
    /// # let waker = Waker::from(Arc::new(Nothing)); // `Waker::noop()` needs Rust 1.85
    /// let mut cx = Context::from_waker(&waker);
    /// let group = Reduction::<f64>::new(2, Op::Max)?;
    /// let mut handles = group.participants();
    /// let (mut thread_side, mut task_side) = (handles.pop().unwrap(), handles.pop().unwrap());
    /// let mut out = [0.0];
    /// {
    ///     let mut call = pin!(task_side.allreduce_async(&[1.5], &mut out));
    ///     // The first poll arrives; rank 1 has not, so the task would wait.
    ///     assert!(call.as_mut().poll(&mut cx).is_pending());
    /// } // dropped in the middle of call 0: the group breaks there
    /// let broken = Error::Broken { by: 0, episode: 0 };
    /// assert_eq!(thread_side.allreduce(&[2.5], &mut out), Err(broken.clone()));
    /// let mut again = pin!(task_side.allreduce_async(&[1.5], &mut out));
    /// assert_eq!(again.as_mut().poll(&mut cx), Poll::Ready(Err(broken)));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce_async`](Self::reduce_async).
    pub fn allreduce_async<'a>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
    ) -> impl Future<Output = Result<ReduceOutcome>> + Send + 'a {
        AssertSend(self.call_in_task(KIND_ALLREDUCE, input, output, true))
    }

    async fn call_in_task(
        &mut self,
        kind: usize,
        input: &[T],
        output: &mut [T],
        has_output: bool,
    ) -> Result<ReduceOutcome> {
        let mut me = self.caller_for(true);
        let shared = me.shared;
        let Some(kernel) = shared.kernel.as_ref() else {
            return Err(Error::invalid(
                "this reduction handle has no operator of its own; it belongs to a team",
            ));
        };
        // A broken group starts no call, so a call cancelled earlier (which broke the group)
        // may still have others reading or writing the copies: they are not touched again.
        if shared.broken.is_broken_for(*me.episode) {
            return Err(shared.broken_error());
        }
        // SAFETY: this handle is the copies' owner; its earlier calls all finished or broke the
        // group (checked just above), and this call has published nothing yet.
        let (staged_input, staged_output) =
            unsafe { shared.staging[me.rank].prepare(input, has_output.then_some(&*output)) };
        let outcome = me
            .run_in_task(
                kind,
                shared.root,
                staged_input,
                staged_output,
                has_output,
                kernel,
            )
            .await?;
        if has_output {
            output.copy_from_slice(staged_output);
        }
        Ok(outcome)
    }
}

/// A call's steps, sent across threads with the task.
///
/// The steps hold raw pointers (the buffers of the call, the participants' data) and a borrow of
/// the handle's spin budget (a `Cell`), so the compiler cannot tell that they may move. They may:
/// every pointer points into the group's copies or the group's state, which the handle this
/// future borrows keeps alive and which are `Sync` for `T: Send + Sync`; and the budget is the
/// handle's, which is `Send` and which this future borrows exclusively, so nobody else uses it
/// from another thread.
struct AssertSend<F>(F);

// SAFETY: see the type's docs.
unsafe impl<F> Send for AssertSend<F> {}

impl<F: Future> Future for AssertSend<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: structural pinning: the wrapper never moves its field, nor hands out `&mut` to
        // it other than pinned, and has no `Drop` of its own.
        unsafe { self.map_unchecked_mut(|this| &mut this.0) }.poll(cx)
    }
}
