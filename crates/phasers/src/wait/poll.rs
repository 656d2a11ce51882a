//! An async task's wait: the poll that stands for a thread's spin, yield and park.
//!
//! A poll never spins: it probes the condition once, and when it does not hold yet it stores the
//! task's waker on the signal (see `wakers.rs`), marks the word `PARKED` from the raw value it
//! read before the probe (the compare-and-swap a sleeping thread makes, see `signal.rs`), and
//! checks again before it returns `Pending`.
//!
//! # Why no release is missed
//!
//! Whoever makes the condition hold changes the signal's word afterwards with an RMW, and wakes
//! the stored wakers if the value it replaced had `PARKED`, taking them under the list's lock.
//! After storing its waker, the task checks that the word still holds the raw value it marked
//! (`expected`). If it does, the writer's RMW comes after that value in the word's order, so it
//! sees `PARKED`, and its lock of the list comes after the task's store: had it come before, the
//! RMW would happen before the task's check, which could then not read the value the RMW
//! replaced. So the release finds the waker. If the word moved, the task probes again from the
//! new value.
//!
//! The check after the store is what closes the race when the word already had `PARKED` (another
//! waiter set it): then [`Signal::mark_parked`] compares nothing, and a release between the
//! task's first read and its store takes the other waiters' wakers, clears `PARKED`, and would
//! leave this one stored on a word that no later release marks as waited on. The broken state is
//! checked again after the store for the same reason: an object that breaks wakes every stored
//! waker without changing the word, so a task that stored its waker after that wake sees the
//! break in its check. `tests/loom_async.rs` models both, and fails without the check.
//!
//! A task that is woken polls again and takes a new slot if the release took its old one; a
//! waker woken for a release that was not the task's own (an earlier phase) costs one poll.

use std::cell::Cell;
use std::ptr::NonNull;
use std::task::{Poll, RawWaker, RawWakerVTable, Waker};

use super::batched_wakes::BatchedWakes;
use super::wakers::WakerKey;
use super::{BrokenState, Deadline, Signal, Stop, TaskRef};

/// One task's wait for one episode: the object's broken state and the episode it waits for.
pub(crate) struct TaskWaiter<'a> {
    broken: &'a BrokenState,
    episode: u64,
}

impl<'a> TaskWaiter<'a> {
    pub(crate) fn new(broken: &'a BrokenState, episode: u64) -> Self {
        TaskWaiter { broken, episode }
    }

    /// One poll of a wait until `probe` returns a value, for a task woken through `waker`,
    /// whose waker is stored on `signal` under `key` (updated here). Whoever makes the
    /// condition hold must change `signal` afterwards (or break the object), as for
    /// [`Waiter::until_probe`](super::Waiter::until_probe).
    pub(crate) fn poll_probe(
        &self,
        signal: &Signal,
        key: &mut Option<WakerKey>,
        waker: &Waker,
        probe: impl Fn() -> Option<u64>,
    ) -> Poll<Result<u64, Stop>> {
        loop {
            // Read before the probe: a change that made the condition hold after the probe
            // looked also moves the word from this value.
            let raw = signal.load_raw();
            if let Some(outcome) = self.check(&probe) {
                return Poll::Ready(outcome);
            }
            *key = Some(signal.store_waker(*key, waker));
            let Some(expected) = signal.mark_parked(raw) else {
                continue; // the word moved: probe again from its new value
            };
            // The second probe (see the module docs): after the store, so that a release or a
            // break either finds the waker or is seen here.
            if let Some(outcome) = self.check(&probe) {
                return Poll::Ready(outcome);
            }
            if signal.load_raw() == expected {
                return Poll::Pending;
            }
        }
    }

    /// The condition, then the broken state.
    fn check(&self, probe: &impl Fn() -> Option<u64>) -> Option<Result<u64, Stop>> {
        if let Some(value) = probe() {
            Some(Ok(value))
        } else if self.broken.is_broken_for(self.episode) {
            Some(Err(Stop::Broken))
        } else {
            None
        }
    }
}

/// Where a task's waker is stored: the slot's key, and the signal whose list the key names.
///
/// The address is that of a signal of the object (a barrier, a team) the task's handle belongs
/// to: the handle holds the object, and the future that keeps this borrows the handle, so the
/// signal outlives it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StoredWaker {
    signal: NonNull<Signal>,
    key: WakerKey,
}

// SAFETY: a shared reference to a `Signal` (which is `Sync`) and a plain key; see the type's docs
// for why the signal outlives it.
unsafe impl Send for StoredWaker {}
// SAFETY: as for `Send`.
unsafe impl Sync for StoredWaker {}

impl StoredWaker {
    /// Drops the waker from its signal's list.
    ///
    /// # Safety
    ///
    /// The signal must still exist: the caller holds (or borrows) a handle of the object the
    /// signal belongs to.
    pub(crate) unsafe fn forget(self) {
        // SAFETY: the caller keeps the object, and so the signal, alive.
        unsafe { self.signal.as_ref() }.remove_waker(self.key);
    }
}

/// What a task's poll hands the waits it makes, through [`Deadline::Task`]: the task's waker,
/// where its waker is stored (updated by the poll), and where a release the poll makes puts the
/// task wakes it owes (see [`publish_for_task`]).
pub(crate) struct TaskPoll<'a> {
    waker: &'a Waker,
    stored: &'a Cell<Option<StoredWaker>>,
    /// `None` where the poll wakes every task it releases at once.
    owed: Cell<Option<&'a mut BatchedWakes>>,
}

impl<'a> TaskPoll<'a> {
    pub(crate) fn new(
        waker: &'a Waker,
        stored: &'a mut Option<StoredWaker>,
        owed: Option<&'a mut BatchedWakes>,
    ) -> Self {
        TaskPoll {
            waker,
            stored: Cell::from_mut(stored),
            owed: Cell::new(owed),
        }
    }

    /// The deadline that makes a wait a poll of this task (see [`poll_task`]). Whatever holds the
    /// deadline must not outlive `self`.
    pub(crate) fn deadline(&self) -> Deadline {
        Deadline::Task(TaskRef(NonNull::from(self).cast()))
    }
}

/// The release of a task's poll, made by publishing `value` on `release`: the tasks it wakes past
/// a first batch go to the poll's owed wakes, for the task to wake a batch per poll (see
/// `batched_wakes.rs`), or are all woken at once where the poll has none. Barriers' leaders
/// release this way (`Episode::complete_and_publish`). The wakes travel in the task's poll, not
/// through the thread, so releases that user code makes meanwhile (a completion action's) never
/// join them.
///
/// `task` must come from [`TaskPoll::deadline`], from a `TaskPoll` still alive.
#[cold]
#[inline(never)]
pub(crate) fn publish_for_task(task: TaskRef, release: &Signal, value: u64) {
    // SAFETY: only `TaskPoll::deadline` makes a task deadline, from a `TaskPoll` that outlives
    // the waits and releases that hold it (see `poll_task`).
    let task = unsafe { task.0.cast::<TaskPoll<'_>>().as_ref() };
    let mut owed = task.owed.take();
    release.publish_into(value, owed.as_deref_mut().map(BatchedWakes::sink));
    task.owed.set(owed);
}

/// A wait with [`Deadline::Task`] whose condition did not hold at first look: one poll of the
/// task (probe, store its waker on `signal`, mark `PARKED`, probe again, through
/// [`TaskWaiter::poll_probe`]), and [`Stop::TimedOut`] when `done` does not hold yet, with the
/// task's waker stored on `signal`, so that the caller stops as after a timeout and resumes
/// there at the next poll. Barriers (`barrier/episode.rs`) and teams (`team/member.rs`) wait
/// this way.
///
/// A key names a slot of one signal's list, and the next stop may be on another signal: the key
/// is kept with its signal's address, and dropped from that signal before the task waits on
/// another.
///
/// `task` must come from [`TaskPoll::deadline`], from a `TaskPoll` still alive (the polling
/// call keeps it on its stack for as long as the waits it makes).
#[cold]
#[inline(never)]
pub(crate) fn poll_task(
    task: TaskRef,
    broken: &BrokenState,
    episode: u64,
    signal: &Signal,
    done: impl Fn(u64) -> bool,
) -> Result<u64, Stop> {
    // SAFETY: only `TaskPoll::deadline` makes a task deadline, from a `TaskPoll` that outlives
    // the waits that hold it (see above).
    let task = unsafe { task.0.cast::<TaskPoll<'_>>().as_ref() };
    let mut key = match task.stored.take() {
        Some(stored) if std::ptr::eq(stored.signal.as_ptr(), signal) => Some(stored.key),
        Some(stored) => {
            // SAFETY: the stored signal is one of the same object's, which the polling handle
            // holds.
            unsafe { stored.forget() };
            None
        }
        None => None,
    };
    let outcome = TaskWaiter::new(broken, episode).poll_probe(signal, &mut key, task.waker, || {
        let value = signal.load();
        done(value).then_some(value)
    });
    task.stored.set(key.map(|key| StoredWaker {
        signal: NonNull::from(signal),
        key,
    }));
    match outcome {
        Poll::Ready(outcome) => outcome,
        // Not yet: stopped as after a timeout, so that the caller resumes here.
        Poll::Pending => Err(Stop::TimedOut),
    }
}

/// A waker that wakes nobody, for a poll whose caller never waits for a wake-up: a blocking
/// reduction runs its steps in one poll (see `reduce/task_wait.rs`), and a dropped
/// `AnyThreadFuture` takes a last look. `Waker::noop` needs Rust 1.85; this one allocates nothing
/// either, since a blocking reduction makes one per call.
pub(crate) fn noop_waker() -> Waker {
    const NOTHING: RawWaker = RawWaker::new(std::ptr::null(), &VTABLE);
    static VTABLE: RawWakerVTable = RawWakerVTable::new(|_| NOTHING, |_| {}, |_| {}, |_| {});
    // SAFETY: no function of the vtable reads the data pointer, and each does what its contract
    // asks of a waker that wakes nothing: `clone` returns another such waker, the others do
    // nothing. The pointer and the vtable are both `'static`.
    unsafe { Waker::from_raw(NOTHING) }
}
