//! Task wakes that a release owes, paid a batch per poll by the task that made the release.
//!
//! # Why
//!
//! A task whose arrival completes a phase of 10,000 tasks used to wake all 10,000 inside that
//! one poll. A work-stealing executor puts each task woken on a worker into that worker's own
//! run queue, which is bounded (tokio's holds 256), and a wake that finds it full moves half of
//! it to the runtime's shared queue: a linked list behind one lock, which the other workers then
//! walk task by task, each a cache miss, while the waker pushes more under the same lock. On a
//! 2-core Xeon VM (2026-12-01, a tokio program of 2 workers) that walk was 13% of the samples of
//! a 10,000-task phaser, and the lock's contention sent both workers into the kernel for another
//! 16%. Woken 256 per poll instead, the released tasks stay in the releasing worker's queue,
//! from which the idle worker steals half at a time: 10,000 tasks cost 206-248 ns per task and
//! phase against 254-276 ns, and 100,000 cost 324-364 ns against 489-531 ns (5 samples each,
//! alternating builds).
//!
//! # How
//!
//! A task's release hands its signal a sink, and `Signal::release_sleepers_into` still wakes every
//! sleeping thread at once, and the first batch of tasks, and puts the other task wakers it took
//! into the sink rather than waking them. The task then holds them as [`BatchedWakes`], wakes the
//! next [`WAKES_PER_POLL`] and wakes itself ([`Owing`]); each later poll pays the next batch, in
//! the order the tasks stored their wakers (woken from the end instead, a phase took about 20%
//! longer: the order the tasks run in matters), until none is owed.
//!
//! The sink reaches the release two ways:
//! - a barrier's `wait_async` passes it down in its poll (`TaskPoll`, `publish_for_task` in
//!   `poll.rs`), as it passes the task's waker;
//! - a phaser's `next_async` runs its arrival in [`collect`], which installs the sink on the
//!   thread, and the arrival (`Core::arrive`) claims it ([`while_claimed`]) before it runs any
//!   user code. The phaser's arrival goes through layers that blocking waits share, which the
//!   thread spares from carrying it.
//!
//! Only the task's own release pays this way. What user code its arrival runs (an advance
//! action, a completion action, a custom accumulator's combine) finds no sink, so a release it
//! makes (a blocking `next` on another phaser) wakes its tasks at once: paid after the action
//! returned, they would never run for an action that then waited for them.
//!
//! # What it relies on
//!
//! The releasing task's executor polls it again, as it polls any woken task. Dropping
//! [`BatchedWakes`] (the future cancelled, the runtime shut down) wakes the rest at once, and a
//! panic inside the arrival wakes whatever the sink holds on its way out. The one thing that can
//! hold them up is what holds up every task of that executor: a task that blocks its worker
//! thread. The futures that pay this way say so in their docs.

use std::cell::Cell;
use std::collections::VecDeque;
use std::task::{Context, Poll, Waker};

use super::wakers::wake_each;

/// How many owed wakes a task pays per poll. It stands for the run queue a work-stealing
/// executor keeps per worker: tokio's holds 256 tasks (`LOCAL_QUEUE_CAPACITY` in tokio 1.x), and
/// async-executor's and smol's more. A 10,000-task phase, per task and phase (2-core Xeon VM,
/// 2026-12-01): 64 per poll, 214-250 ns; 128, 206-260 ns; 256, 203-246 ns; 512, where the queue
/// overflows again, 248-333 ns. Where a queue is smaller, the batch overflows it as every wake
/// did before: no worse than waking all at once. Under loom, 1, so that two or three tasks
/// already pay over several polls (and `Signal::release_sleepers_into` wakes none at once).
pub(crate) const WAKES_PER_POLL: usize = if cfg!(phasers_loom) { 1 } else { 256 };

#[cfg(not(phasers_loom))]
std::thread_local! {
    /// The sink of the task arrival running on this thread (see [`collect`]), or null. A raw
    /// pointer in a `Cell`: a thread-local with nothing to drop is one load to read, where a
    /// `RefCell<Option<Vec>>` went through its initialization check on every access, and with
    /// those checks 64 tasks on 2 tokio workers took about 10% longer per phase (2-core Xeon VM,
    /// 2026-12-01).
    static SINK: Cell<*mut VecDeque<Waker>> = const { Cell::new(std::ptr::null_mut()) };
}

// Loom runs its threads on one OS thread: the sink must be a loom thread's own.
#[cfg(phasers_loom)]
loom::thread_local! {
    static SINK: Cell<*mut VecDeque<Waker>> = Cell::new(std::ptr::null_mut());
}

/// Runs `arrive` with a sink installed on this thread, and returns what it returned with the
/// task wakes its releases owe. A sink installed before (an advance action that arrives on
/// another phaser from inside a task's arrival) is put back afterwards, and keeps what it held.
/// If `arrive` panics, the wakes collected so far are made on the way out.
pub(crate) fn collect<R>(arrive: impl FnOnce() -> R) -> (R, BatchedWakes) {
    /// Puts the earlier sink back however `arrive` ends.
    struct Installed(*mut VecDeque<Waker>);
    impl Drop for Installed {
        fn drop(&mut self) {
            SINK.with(|sink| sink.set(self.0));
        }
    }
    // Declared before the guard, so on a panic the guard takes the pointer down before the
    // wakes are dropped, which wakes them.
    let mut owed = BatchedWakes::default();
    let returned = {
        let sink: *mut VecDeque<Waker> = &mut owed.wakers;
        let _installed = Installed(SINK.with(|installed| installed.replace(sink)));
        arrive()
    };
    (returned, owed)
}

/// Runs `release` with this thread's sink, if a task's arrival installed one (see [`collect`]),
/// taken off the thread meanwhile. The arrival that makes a release claims the sink when it
/// starts, before it runs any user code (an advance action, a completion action): a release
/// that such code makes (a blocking `next` on another phaser, say) finds no sink, and wakes its
/// tasks at once. Collected for later instead, they would be woken only after the action
/// returned, and an action that went on to wait for those tasks would wait forever.
pub(crate) fn while_claimed<R>(release: impl FnOnce(Option<&mut VecDeque<Waker>>) -> R) -> R {
    /// Puts the sink back however `release` ends, for a later arrival of the same poll.
    struct PutBack(*mut VecDeque<Waker>);
    impl Drop for PutBack {
        fn drop(&mut self) {
            if !self.0.is_null() {
                SINK.with(|sink| sink.set(self.0));
            }
        }
    }
    let claimed = PutBack(SINK.with(|sink| {
        let installed = sink.get();
        if !installed.is_null() {
            sink.set(std::ptr::null_mut());
        }
        installed
    }));
    // SAFETY: a non-null pointer was installed by `collect` on this thread and points to a
    // vector of `collect`'s, which it leaves alone until `arrive` returns or unwinds: this call
    // runs inside `arrive` (nothing else installs the pointer), and the reference it lends cannot
    // outlive `release`. Nothing else reaches the vector meanwhile: the pointer is off the thread
    // until `PutBack` drops, after `release` has returned or unwound.
    release(unsafe { claimed.0.as_mut() })
}

/// Wakes a task owes, oldest first. Dropping them wakes the rest.
#[derive(Default)]
pub(crate) struct BatchedWakes {
    wakers: VecDeque<Waker>,
}

impl BatchedWakes {
    /// Where a release puts the wakes it owes (see `Signal::release_sleepers_into`).
    pub(crate) fn sink(&mut self) -> &mut VecDeque<Waker> {
        &mut self.wakers
    }

    /// Whether every owed wake was made.
    pub(crate) fn is_paid(&self) -> bool {
        self.wakers.is_empty()
    }

    /// Wakes the next [`WAKES_PER_POLL`] owed; returns whether every wake is now made. A `wake`
    /// that panics does not keep the rest of the batch from being woken; its panic goes on after.
    pub(crate) fn pay_some(&mut self) -> bool {
        let batch = self.wakers.len().min(WAKES_PER_POLL);
        wake_each(self.wakers.drain(..batch));
        self.is_paid()
    }
}

/// A future's output, held back until the wakes its release owes are made: the state of a task
/// that released a phase or an episode and is paying, a batch per poll.
#[derive(Debug)]
pub(crate) struct Owing<T> {
    output: T,
    wakes: BatchedWakes,
}

impl<T: Copy> Owing<T> {
    pub(crate) fn new(output: T, wakes: BatchedWakes) -> Self {
        Owing { output, wakes }
    }

    /// Pays the next batch: the output once every wake is made, else `Pending` with the task
    /// woken, so that its executor polls it again for the next batch.
    pub(crate) fn poll_pay(&mut self, cx: &mut Context<'_>) -> Poll<T> {
        if self.wakes.pay_some() {
            return Poll::Ready(self.output);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl std::fmt::Debug for BatchedWakes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchedWakes")
            .field("owed", &self.wakers.len())
            .finish()
    }
}

impl Drop for BatchedWakes {
    fn drop(&mut self) {
        // Every task poll drops one, nearly always empty: nothing more to look at then.
        if self.wakers.is_empty() {
            return;
        }
        let rest = std::mem::take(&mut self.wakers);
        if std::thread::panicking() {
            // Unwinding already: a second panic would abort.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wake_each(rest)));
        } else {
            wake_each(rest);
        }
    }
}

#[cfg(all(test, not(phasers_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use crate::wait::wakers::tests::Count;

    fn counted(count: &Arc<Count>, wakers: usize) -> Vec<Waker> {
        (0..wakers).map(|_| Waker::from(count.clone())).collect()
    }

    #[test]
    fn a_sink_collects_only_inside_collect_and_is_paid_a_batch_at_a_time() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        assert!(
            while_claimed(|sink| sink.is_none()),
            "no sink outside collect"
        );
        let ((), mut owed) = collect(|| {
            while_claimed(|sink| {
                sink.expect("collect installed one")
                    .extend(counted(&count, WAKES_PER_POLL + 3))
            });
        });
        assert!(
            while_claimed(|sink| sink.is_none()),
            "the sink is gone after collect"
        );
        assert_eq!(count.0.load(Ordering::Relaxed), 0, "collected, not woken");
        assert!(!owed.pay_some());
        assert_eq!(count.0.load(Ordering::Relaxed), WAKES_PER_POLL);
        assert!(owed.pay_some());
        assert_eq!(count.0.load(Ordering::Relaxed), WAKES_PER_POLL + 3);
        assert!(owed.is_paid());
    }

    #[test]
    fn dropping_owed_wakes_wakes_the_rest() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let ((), owed) = collect(|| {
            while_claimed(|sink| sink.unwrap().extend(counted(&count, 5)));
        });
        drop(owed);
        assert_eq!(count.0.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_panic_inside_collect_wakes_what_it_collected_and_removes_the_sink() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            collect(|| {
                while_claimed(|sink| sink.unwrap().extend(counted(&count, 4)));
                panic!("an advance action panicked");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(count.0.load(Ordering::Relaxed), 4);
        assert!(
            while_claimed(|sink| sink.is_none()),
            "the sink is gone after the panic"
        );
    }

    #[test]
    fn a_nested_collect_keeps_the_outer_sink() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let ((), outer) = collect(|| {
            while_claimed(|sink| sink.unwrap().extend(counted(&count, 1)));
            let ((), inner) = collect(|| {
                while_claimed(|sink| sink.unwrap().extend(counted(&count, 2)));
            });
            drop(inner);
            while_claimed(|sink| sink.unwrap().extend(counted(&count, 1)));
        });
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        drop(outer);
        assert_eq!(count.0.load(Ordering::Relaxed), 4);
    }

    /// What runs inside a claim (an arrival's advance or completion action) finds no sink, and
    /// the sink is back once the claim ends, also by a panic.
    #[test]
    fn a_claimed_sink_is_off_the_thread_until_the_claim_ends() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let ((), owed) = collect(|| {
            while_claimed(|sink| {
                assert!(sink.is_some());
                assert!(
                    while_claimed(|nested| nested.is_none()),
                    "claimed once only"
                );
            });
            let unwound = std::panic::catch_unwind(|| {
                while_claimed(|_| panic!("a completion action panicked"));
            });
            assert!(unwound.is_err());
            while_claimed(|sink| sink.unwrap().extend(counted(&count, 3)));
        });
        assert_eq!(count.0.load(Ordering::Relaxed), 0);
        drop(owed);
        assert_eq!(count.0.load(Ordering::Relaxed), 3);
    }
}
