//! The tasks waiting on a [`Signal`](super::Signal): their wakers, kept beside the futex that
//! threads sleep on.
//!
//! A task cannot sleep in the kernel: its executor polls it again once its waker is woken. So a
//! task that finds its condition false stores its waker here and then sets the signal's `PARKED`
//! bit exactly as a sleeping thread does (see `signal.rs` and `poll.rs`), and every release that
//! sees `PARKED` wakes the stored wakers as well as the sleepers. A release that finds no `PARKED`
//! never looks here: threads pay nothing for tasks that do not wait.
//!
//! # Shards
//!
//! Tasks of many worker threads store their wakers at once, every phase: one list behind one lock
//! made them queue for it and pass its line between cores on every store (with 10,000 tasks on 2
//! tokio workers, storing wakers took 18% of the samples, and forgetting them 8%; 2-core Xeon VM,
//! 2026-11-30). So the list is split into shards, one per thread that may store at once, up to
//! [`MAX_SHARDS`], and a task stores into its thread's shard: it takes a lock nobody else is
//! taking, on a line its thread already holds. A release takes the shards one after another.
//!
//! The shards are allocated by the first task that stores a waker: a signal that no task ever
//! waited on (most of them: a barrier's nodes, a team's meeting words) holds one null pointer,
//! and a release that sees `PARKED` only because threads sleep finds the null and goes on.
//!
//! # Keys and rounds
//!
//! Every waker sits in a slot, and a task keeps the slot's [`WakerKey`] so that its next poll
//! replaces its own waker instead of adding one more (an executor may poll a task many times
//! before its release). A release takes every slot at once, and begins a new **round**: keys of
//! an earlier round name nothing any more, so a task polled after a release stores its waker in
//! a new slot. Each shard counts its own rounds, and keeps its round where a task reads it
//! without the lock: a task that saw its release finds its key's round gone and need not lock
//! the shard to forget its waker. A task that stops waiting (its future is dropped) empties its
//! slot, so its waker, which may keep the task's memory alive, is not held until the next
//! release.
//!
//! Wakers are woken outside the list's lock: `wake` runs the executor's code, which may poll the
//! task at once on this thread, and that poll stores a waker here again. The object's own locks
//! may be held, though: a phaser releases some phases (a registration leaving, signals that ran
//! ahead) under its structure lock, where it also wakes its sleepers. Executors schedule a woken
//! task rather than run it inside `wake`, which is all this needs. A `wake` that panics does not
//! keep the others from being woken: the first panic goes on once every waker was woken, through
//! the release, as a panicking advance action's would.

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::task::Waker;

use crossbeam_utils::CachePadded;

use crate::primitive::{thread_index, AtomicPtr, AtomicU64, Mutex, MutexGuard, Ordering};

/// The most shards a signal's list is split into. A release that saw `PARKED` locks every shard
/// in turn, a line to fetch and two uncontended atomics each: at the round trips `phasers floors`
/// measures (40-170 ns on our VMs), 16 shards cost 0.6-2.7 µs, below the futex wake the same
/// release already pays for sleepers (4-7 µs there). More shards would only spread threads that
/// already share few: with more worker threads than this, a few share each shard's lock. Below
/// the cap the shards are as many as the cores this process may run on
/// ([`crate::available_cores`], read at run time).
const MAX_SHARDS: usize = 16;

/// Where one task's waker is stored on one signal, until the next release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WakerKey {
    shard: usize,
    round: u64,
    slot: usize,
}

/// The wakers of the tasks waiting on one signal: the shards, allocated when a task first stores
/// a waker.
pub(crate) struct Wakers {
    head: Box<Head>,
}

struct Head {
    /// Null until a task installs the shards; then never changes.
    shards: AtomicPtr<Shards>,
    /// Taken by the task that installs the shards, and by a release that reads null. The null
    /// alone would not do: a task may store its waker into shards another task installed and
    /// find `PARKED` already set, so it writes nothing that a release's swap of the word would
    /// synchronize with, and the release's read of the pointer could miss the install. With the
    /// lock, either the release locks after the install and sees it, or it locks before, and then
    /// its change of the word happens before the installer's, so before every task's check that
    /// the word still holds what it marked: that task probes again (see `poll.rs`).
    install: Mutex<()>,
}

struct Shards {
    shards: Box<[Shard]>,
}

struct Shard {
    /// The list's round, stored by every release that bumps it (under the lock), read without
    /// the lock by [`Wakers::remove`]. On a line of its own: the list's line changes with every store, and
    /// the tasks of other threads read the round once per phase (a task may move between
    /// threads), which with both on one line cost a transfer per task.
    round: CachePadded<AtomicU64>,
    list: CachePadded<Mutex<List>>,
}

#[derive(Default)]
struct List {
    /// Bumped by every release that takes the slots.
    round: u64,
    /// `None`: a task that stopped waiting.
    slots: Vec<Option<Waker>>,
    /// An empty vector with the capacity of an earlier round's slots: the next release swaps it
    /// in, so a round of 10,000 tasks does not grow a vector from nothing again.
    spare: Vec<Option<Waker>>,
}

impl Wakers {
    pub(crate) fn new() -> Self {
        Wakers {
            head: Box::new(Head {
                shards: AtomicPtr::new(std::ptr::null_mut()),
                install: Mutex::new(()),
            }),
        }
    }

    /// The shards, if a task installed them and this thread sees it.
    fn installed(&self) -> Option<&Shards> {
        // SAFETY: a non-null pointer came from `Box::into_raw` in `install`, published with
        // `Release` and read here with `Acquire`, and is freed only in `drop`, which `&self`
        // excludes.
        unsafe { self.head.shards.load(Ordering::Acquire).as_ref() }
    }

    /// The shards, if a task installed them, for a release: where the pointer reads null, it is
    /// read again under the install lock (see [`Head::install`]).
    fn installed_for_release(&self) -> Option<&Shards> {
        self.installed().or_else(|| {
            let _install = lock(&self.head.install);
            self.installed()
        })
    }

    /// The shards, installed by the first task to store here.
    fn install(&self) -> &Shards {
        if let Some(shards) = self.installed() {
            return shards;
        }
        let _install = lock(&self.head.install);
        if let Some(shards) = self.installed() {
            return shards;
        }
        let count = shard_count();
        let fresh = Box::into_raw(Box::new(Shards {
            shards: (0..count)
                .map(|_| Shard {
                    round: CachePadded::new(AtomicU64::new(0)),
                    list: CachePadded::new(Mutex::new(List::default())),
                })
                .collect(),
        }));
        self.head.shards.store(fresh, Ordering::Release);
        // SAFETY: `fresh` is the published pointer, live until `drop` (see `installed`).
        unsafe { &*fresh }
    }

    /// Stores `waker` in this thread's shard: in the slot of `key` if it is of that shard and
    /// its current round (replacing the waker there unless both wake the same task), else in a
    /// new slot. Returns the key of the slot.
    pub(crate) fn store(&self, key: Option<WakerKey>, waker: &Waker) -> WakerKey {
        let shards = &self.install().shards;
        // A key whose round is still current stays where it is, even if the task moved to another
        // thread: two slots would wake it twice.
        if let Some(key) = key {
            let shard = &shards[key.shard];
            let mut list = shard.lock();
            if list.round == key.round {
                let stored = &mut list.slots[key.slot];
                match stored {
                    Some(old) if old.will_wake(waker) => {}
                    _ => *stored = Some(waker.clone()),
                }
                return key;
            }
        }
        let index = thread_index() % shards.len();
        let shard = &shards[index];
        let mut list = shard.lock();
        let slot = list.slots.len();
        list.slots.push(Some(waker.clone()));
        WakerKey {
            shard: index,
            round: list.round,
            slot,
        }
    }

    /// Drops the waker stored under `key`, if no release has taken it yet.
    pub(crate) fn remove(&self, key: WakerKey) {
        let Some(shards) = self.installed() else {
            return;
        };
        let shard = &shards.shards[key.shard];
        // Most tasks forget their waker after their release took it: the round says so without
        // the lock. A round read stale only sends the task to the lock.
        if shard.round.load(Ordering::Acquire) != key.round {
            return;
        }
        let taken = {
            let mut list = shard.lock();
            if list.round == key.round {
                list.slots[key.slot].take()
            } else {
                None
            }
        };
        // Dropped outside the lock: the last reference to a waker may free the task.
        drop(taken);
    }

    /// Takes every stored waker and wakes it, outside the locks, a shard at a time. Cold: called
    /// only by releases that saw `PARKED`, and by objects that break.
    #[cold]
    pub(crate) fn wake_all(&self) {
        self.wake_or_take(usize::MAX, &mut VecDeque::new());
    }

    /// Takes every stored waker, waking at once those of the first shards while they come to
    /// at most `at_once` wakers, and moving the rest into `owed`, to be woken by the caller
    /// (see `batched_wakes.rs`). A release of a few tasks thus wakes them as `wake_all` does,
    /// with no vector to allocate.
    #[cold]
    pub(crate) fn wake_or_take(&self, at_once: usize, owed: &mut VecDeque<Waker>) {
        let mut woken: usize = 0;
        let mut panicked = None;
        self.take_all(|taken| {
            let count = taken.iter().flatten().count();
            if owed.is_empty() && woken.saturating_add(count) <= at_once {
                woken += count;
                let wake = catch_unwind(AssertUnwindSafe(|| wake_each(taken.drain(..).flatten())));
                if let Err(payload) = wake {
                    panicked.get_or_insert(payload);
                }
            } else {
                owed.extend(taken.drain(..).flatten());
            }
        });
        if let Some(payload) = panicked {
            resume_unwind(payload);
        }
    }

    /// Takes each shard's slots, beginning a new round there, and hands them to `each` outside
    /// the shard's lock; `each` must leave the vector empty, and the shard keeps it as its spare.
    fn take_all(&self, mut each: impl FnMut(&mut Vec<Option<Waker>>)) {
        let Some(shards) = self.installed_for_release() else {
            return;
        };
        for shard in shards.shards.iter() {
            let mut taken = {
                let mut list = shard.lock();
                if list.slots.is_empty() {
                    continue;
                }
                list.round += 1;
                shard.round.store(list.round, Ordering::Release);
                let spare = std::mem::take(&mut list.spare);
                std::mem::replace(&mut list.slots, spare)
            };
            // A panicking `wake` (see `wake_each`) unwinds only once every waker was woken, so
            // the vector is empty here whatever `each` did.
            each(&mut taken);
            debug_assert!(taken.is_empty());
            let mut list = shard.lock();
            if list.spare.capacity() < taken.capacity() {
                list.spare = taken;
            }
        }
    }
}

/// Wakes every waker of `wakers`. A `wake` that panics does not keep the others from being woken:
/// the first panic goes on once every waker was woken.
pub(crate) fn wake_each(wakers: impl IntoIterator<Item = Waker>) {
    let mut panicked = None;
    for waker in wakers {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
            panicked.get_or_insert(payload);
        }
    }
    if let Some(payload) = panicked {
        resume_unwind(payload);
    }
}

impl Drop for Wakers {
    fn drop(&mut self) {
        let shards = self.head.shards.load(Ordering::Acquire);
        if !shards.is_null() {
            // SAFETY: the pointer came from `Box::into_raw` in `install`, and `&mut self` means
            // no task or release uses it any more.
            drop(unsafe { Box::from_raw(shards) });
        }
    }
}

impl Shard {
    /// The list, whether or not some thread panicked holding it: under the lock the list is
    /// only read and written by this file's code, which leaves it whole at every step (a
    /// `Waker::clone` that panics leaves the slot as it was).
    fn lock(&self) -> MutexGuard<'_, List> {
        lock(&self.list)
    }
}

/// A lock of this file's, whether or not some thread panicked holding it: nothing under them
/// can panic but a `Waker::clone`, which leaves the slot as it was.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many shards a signal's list gets: one per core this process may run on, up to
/// [`MAX_SHARDS`]. Loom models run 2 or 3 threads: 2 shards make some share one and some not.
fn shard_count() -> usize {
    if cfg!(phasers_loom) {
        2
    } else {
        crate::available_cores().clamp(1, MAX_SHARDS)
    }
}

#[cfg(all(test, not(phasers_loom)))]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    /// Counts its wakes: the waker of the unit tests that check who is woken, and how often.
    #[derive(Default)]
    pub(crate) struct Count(pub(crate) AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_task_polled_twice_is_woken_once() {
        let (wakers, count) = (Wakers::new(), Arc::new(Count::default()));
        let waker = Waker::from(count.clone());
        let key = wakers.store(None, &waker);
        assert_eq!(wakers.store(Some(key), &waker), key);
        wakers.wake_all();
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
        // The key of the old round names nothing: a new poll takes a new slot.
        let again = wakers.store(Some(key), &waker);
        assert_ne!(again, key);
        wakers.wake_all();
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
    }

    /// A waker that panics (an executor's bug) does not keep the others from being woken.
    #[test]
    fn a_panicking_waker_does_not_stop_the_others() {
        struct Panics;
        impl Wake for Panics {
            fn wake(self: Arc<Self>) {
                panic!("a broken executor");
            }
        }
        let (wakers, count) = (Wakers::new(), Arc::new(Count::default()));
        wakers.store(None, &Waker::from(Arc::new(Panics)));
        wakers.store(None, &Waker::from(count.clone()));
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| wakers.wake_all()));
        assert!(outcome.is_err());
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
    }

    /// Wakers stored from several threads, so into several shards where the machine has more
    /// than one core, are all woken by one release, once; keys then name nothing, and the shards
    /// serve the next round.
    #[test]
    fn a_release_wakes_every_shard() {
        let (wakers, count) = (Wakers::new(), Arc::new(Count::default()));
        let threads = 2 * MAX_SHARDS;
        for round in 1..=3 {
            let keys: Vec<WakerKey> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads)
                    .map(|_| s.spawn(|| wakers.store(None, &Waker::from(count.clone()))))
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let shards = keys.iter().map(|key| key.shard).max().unwrap() + 1;
            assert_eq!(shards > 1, crate::available_cores() > 1 && threads > 1);
            wakers.wake_all();
            assert_eq!(count.0.load(Ordering::Relaxed), threads * round);
            // Forgetting a taken waker finds its round gone and changes nothing.
            for key in keys {
                wakers.remove(key);
            }
        }
    }

    /// A task polled again on another thread keeps its slot (two slots would wake it twice).
    #[test]
    fn a_task_that_moved_threads_keeps_its_slot() {
        let (wakers, count) = (Wakers::new(), Arc::new(Count::default()));
        let waker = Waker::from(count.clone());
        let key = std::thread::scope(|s| s.spawn(|| wakers.store(None, &waker)).join().unwrap());
        assert_eq!(wakers.store(Some(key), &waker), key);
        wakers.wake_all();
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
    }

    /// A signal no task waited on holds no shards, and its releases wake nothing.
    #[test]
    fn shards_wait_for_the_first_task() {
        let wakers = Wakers::new();
        wakers.wake_all();
        assert!(wakers.installed().is_none());
        let count = Arc::new(Count::default());
        wakers.store(None, &Waker::from(count.clone()));
        assert!(wakers.installed().is_some());
        wakers.wake_all();
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_removed_waker_is_not_woken() {
        let (wakers, count) = (Wakers::new(), Arc::new(Count::default()));
        let (gone, stays) = (Arc::new(Count::default()), Waker::from(count.clone()));
        let key = wakers.store(None, &Waker::from(gone.clone()));
        wakers.store(None, &stays);
        wakers.remove(key);
        wakers.wake_all();
        assert_eq!(gone.0.load(Ordering::Relaxed), 0);
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
        // A key of a round already taken removes nothing.
        let new = wakers.store(None, &stays);
        wakers.remove(key);
        wakers.wake_all();
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        let _ = new;
    }
}
