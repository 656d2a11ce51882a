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
    /// [`reduce`](Self::reduce) for an async task: the task waits without blocking its thread.
    ///
    /// The call runs on the group's copies of `input` and of the root's `output` (copied in when
    /// the future is first polled, and the result copied out when it completes), so that dropping
    /// the future is safe at any point:
    /// - before its first poll, nothing happened: the call can be made again;
    /// - after it, the call cannot complete, and the group breaks there, as when a handle is
    ///   dropped: every participant's calls from then on return
    ///   [`Error::Broken`](crate::Error::Broken), this one's included, and nobody waits for ever.
    ///
    /// Reductions have no deadline, blocking or async; a task that must give up drops the future.
    ///
    /// ```
    /// use phasers::{Op, Reduction};
    ///
    /// let group = Reduction::<u64>::new(3, Op::Sum)?;
    /// let runtime = tokio::runtime::Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .build()
    ///     .unwrap();
    /// let tasks: Vec<_> = group
    ///     .participants()
    ///     .into_iter()
    ///     .map(|mut p| {
    ///         runtime.spawn(async move {
    ///             let mut total = [0];
    ///             let outcome = p.reduce_async(&[p.rank() as u64 + 1], &mut total).await?;
    ///             Ok::<_, phasers::Error>((outcome.has_result(), total[0]))
    ///         })
    ///     })
    ///     .collect();
    /// for (rank, task) in tasks.into_iter().enumerate() {
    ///     let (has_result, total) = runtime.block_on(task).unwrap()?;
    ///     // Rank 0 is the root: it alone receives 1 + 2 + 3.
    ///     assert_eq!((has_result, total), (rank == 0, if rank == 0 { 6 } else { 0 }));
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    pub fn reduce_async<'a>(
        &'a mut self,
        input: &'a [T],
        output: &'a mut [T],
    ) -> impl Future<Output = Result<ReduceOutcome>> + Send + 'a {
        let has_output = self.is_root();
        AssertSend(self.call_in_task(KIND_REDUCE, input, output, has_output))
    }

    /// [`allreduce`](Self::allreduce) for an async task, with the copies and the cancellation of
    /// [`reduce_async`](Self::reduce_async). Tasks and threads may share a group.
    ///
    /// ```
    /// use phasers::{Op, ReduceAlgorithm, Reduction};
    ///
    /// let group = Reduction::<f64>::builder(4)
    ///     .op(Op::Max)
    ///     .algorithm(ReduceAlgorithm::DynamicPairs)
    ///     .build()?;
    /// let mut handles = group.participants().into_iter();
    /// let mut thread_side = handles.next().unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// std::thread::scope(|s| {
    ///     // One participant is a thread, blocking in `allreduce`.
    ///     s.spawn(move || {
    ///         let mut out = [0.0; 2];
    ///         thread_side.allreduce(&[0.0, -0.0], &mut out).unwrap();
    ///         assert_eq!(out, [3.0, 0.0]);
    ///     });
    ///     // Three are tasks, all on this one thread.
    ///     runtime.block_on(async {
    ///         let tasks = handles.map(|mut p| async move {
    ///             let mine = [p.rank() as f64, -(p.rank() as f64)];
    ///             let mut out = [0.0; 2];
    ///             p.allreduce_async(&mine, &mut out).await.unwrap();
    ///             assert_eq!(out, [3.0, 0.0]);
    ///         });
    ///         let tasks: Vec<_> = tasks.map(|task| runtime.spawn(task)).collect();
    ///         for task in tasks {
    ///             task.await.unwrap();
    ///         }
    ///     });
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`allreduce`](Self::allreduce).
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
        let (staged_input, staged_output) = unsafe {
            shared.staging[me.rank].prepare(input, has_output.then_some(&*output))
        };
        let outcome = me
            .run_in_task(kind, shared.root, staged_input, staged_output, has_output, kernel)
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
