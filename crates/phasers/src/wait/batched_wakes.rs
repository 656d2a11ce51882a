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
//! [`collect`] runs a task's arrival with a sink installed on its thread: a release made there
//! (see `Core::pay`) still wakes every sleeping thread at once, and puts the task wakers it took
//! into the sink rather than waking them. The task then holds them as [`BatchedWakes`], wakes the
//! first [`WAKES_PER_POLL`] and wakes itself; each later poll pays the next batch, in the order
//! the tasks stored their wakers (woken from the end instead, a phase took about 20% longer:
//! the order the tasks run in matters), until none is owed.
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
use std::task::Waker;

use super::wakers::wake_each;

/// How many owed wakes a task pays per poll. It stands for the run queue a work-stealing
/// executor keeps per worker: tokio's holds 256 tasks (`LOCAL_QUEUE_CAPACITY` in tokio 1.x), and
/// async-executor's and smol's more. A 10,000-task phase, per task and phase (2-core Xeon VM,
/// 2026-12-01): 64 per poll, 214-250 ns; 128, 206-260 ns; 256, 203-246 ns; 512, where the queue
/// overflows again, 248-333 ns. Where a queue is smaller, the batch overflows it as every wake
/// did before: no worse than waking all at once. Under loom, 1, so that two or three tasks
/// already pay over several polls (and `Signal::release_sleepers_batching` wakes none at once).
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

/// Passes `out` the sink installed on this thread, if any; returns whether there was one.
pub(crate) fn into_sink(out: impl FnOnce(&mut VecDeque<Waker>)) -> bool {
    let sink = SINK.with(Cell::get);
    // SAFETY: a non-null pointer was installed by `collect` on this thread and points to a
    // vector of `collect`'s, which it leaves alone until `arrive` returns or unwinds, and takes
    // the pointer down before it touches the vector again; nothing else reaches the vector
    // meanwhile, and `out` (a take of a signal's wakers) cannot call back into this file.
    match unsafe { sink.as_mut() } {
        Some(collected) => {
            out(collected);
            true
        }
        None => false,
    }
}

/// Wakes a task owes, oldest first. Dropping them wakes the rest.
#[derive(Default)]
pub(crate) struct BatchedWakes {
    wakers: VecDeque<Waker>,
}

impl BatchedWakes {
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

impl std::fmt::Debug for BatchedWakes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchedWakes")
            .field("owed", &self.wakers.len())
            .finish()
    }
}

impl Drop for BatchedWakes {
    fn drop(&mut self) {
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
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counted(count: &Arc<Count>, wakers: usize) -> Vec<Waker> {
        (0..wakers).map(|_| Waker::from(count.clone())).collect()
    }

    #[test]
    fn a_sink_collects_only_inside_collect_and_is_paid_a_batch_at_a_time() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        assert!(!into_sink(|_| unreachable!("no sink outside collect")));
        let ((), mut owed) = collect(|| {
            assert!(into_sink(
                |sink| sink.extend(counted(&count, WAKES_PER_POLL + 3))
            ));
        });
        assert!(!into_sink(|_| unreachable!(
            "the sink is gone after collect"
        )));
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
            into_sink(|sink| sink.extend(counted(&count, 5)));
        });
        drop(owed);
        assert_eq!(count.0.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_panic_inside_collect_wakes_what_it_collected_and_removes_the_sink() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            collect(|| {
                into_sink(|sink| sink.extend(counted(&count, 4)));
                panic!("an advance action panicked");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(count.0.load(Ordering::Relaxed), 4);
        assert!(!into_sink(|_| unreachable!(
            "the sink is gone after the panic"
        )));
    }

    #[test]
    fn a_nested_collect_keeps_the_outer_sink() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let ((), outer) = collect(|| {
            into_sink(|sink| sink.extend(counted(&count, 1)));
            let ((), inner) = collect(|| {
                into_sink(|sink| sink.extend(counted(&count, 2)));
            });
            drop(inner);
            into_sink(|sink| sink.extend(counted(&count, 1)));
        });
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        drop(outer);
        assert_eq!(count.0.load(Ordering::Relaxed), 4);
    }
}
