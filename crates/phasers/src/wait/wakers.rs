//! The tasks waiting on a [`Signal`](super::Signal): their wakers, kept beside the futex that
//! threads sleep on.
//!
//! A task cannot sleep in the kernel: its executor polls it again once its waker is woken. So a
//! task that finds its condition false stores its waker here and then sets the signal's `PARKED`
//! bit exactly as a sleeping thread does (see `signal.rs` and `poll.rs`), and every release that
//! sees `PARKED` wakes the stored wakers as well as the sleepers. A release that finds no `PARKED`
//! never looks here: threads pay nothing for tasks that do not wait.
//!
//! # Keys and rounds
//!
//! Every waker sits in a slot, and a task keeps the slot's [`WakerKey`] so that its next poll
//! replaces its own waker instead of adding one more (an executor may poll a task many times
//! before its release). A release takes every slot at once, and begins a new **round**: keys of
//! an earlier round name nothing any more, so a task polled after a release stores its waker in
//! a new slot. A task that stops waiting (its future is dropped) empties its slot, so its
//! waker, which may keep the task's memory alive, is not held until the next release.
//!
//! Wakers are woken outside the list's lock: `wake` runs the executor's code, which may poll the
//! task at once on this thread, and that poll stores a waker here again. The object's own locks
//! may be held, though: a phaser releases some phases (a registration leaving, signals that ran
//! ahead) under its structure lock, where it also wakes its sleepers. Executors schedule a woken
//! task rather than run it inside `wake`, which is all this needs. A `wake` that panics does not
//! keep the others from being woken: the first panic goes on once every waker was woken, through
//! the release, as a panicking advance action's would.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::task::Waker;

use crate::primitive::{Mutex, MutexGuard};

/// Where one task's waker is stored on one signal, until the next release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WakerKey {
    round: u64,
    slot: usize,
}

/// The wakers of the tasks waiting on one signal.
pub(crate) struct Wakers {
    list: Mutex<List>,
}

#[derive(Default)]
struct List {
    /// Bumped by every release that takes the slots.
    round: u64,
    /// `None`: a task that stopped waiting.
    slots: Vec<Option<Waker>>,
}

impl Wakers {
    pub(crate) fn new() -> Self {
        Wakers {
            list: Mutex::new(List::default()),
        }
    }

    /// The list, whether or not some thread panicked holding it: under the lock the list is
    /// only read and written by this file's code, which leaves it whole at every step (a
    /// `Waker::clone` that panics leaves the slot as it was).
    fn lock(&self) -> MutexGuard<'_, List> {
        self.list
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stores `waker`: in the slot of `key` if it is of this round (replacing the waker there
    /// unless both wake the same task), else in a new slot. Returns the key of the slot.
    pub(crate) fn store(&self, key: Option<WakerKey>, waker: &Waker) -> WakerKey {
        let mut list = self.lock();
        let round = list.round;
        if let Some(key) = key.filter(|key| key.round == round) {
            let stored = &mut list.slots[key.slot];
            match stored {
                Some(old) if old.will_wake(waker) => {}
                _ => *stored = Some(waker.clone()),
            }
            return key;
        }
        let slot = list.slots.len();
        list.slots.push(Some(waker.clone()));
        WakerKey { round, slot }
    }

    /// Drops the waker stored under `key`, if no release has taken it yet.
    pub(crate) fn remove(&self, key: WakerKey) {
        let taken = {
            let mut list = self.lock();
            if list.round == key.round {
                list.slots[key.slot].take()
            } else {
                None
            }
        };
        // Dropped outside the lock: the last reference to a waker may free the task.
        drop(taken);
    }

    /// Takes every stored waker and wakes it, outside the lock. Cold: called only by releases
    /// that saw `PARKED`, and by objects that break.
    #[cold]
    pub(crate) fn wake_all(&self) {
        let taken = {
            let mut list = self.lock();
            if list.slots.is_empty() {
                return;
            }
            list.round += 1;
            std::mem::take(&mut list.slots)
        };
        let mut panicked = None;
        for waker in taken.into_iter().flatten() {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
                panicked.get_or_insert(payload);
            }
        }
        if let Some(payload) = panicked {
            resume_unwind(payload);
        }
    }
}

#[cfg(all(test, not(phasers_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
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
