//! A word that waiters poll and, after spinning, park on.
//!
//! # Layout
//!
//! | bits | meaning |
//! |---|---|
//! | 63 | `PARKED`: some waiter may be asleep on this word |
//! | 0..=62 | the value: an episode number, a count, or packed child flags, as the owner decides |
//!
//! # Memory ordering
//!
//! A waiter reads the value with `Acquire`, and every writer that releases waiters writes with
//! `Release` (inside an RMW), so what the releaser did before the release is visible to the waiter
//! once it sees the new value.
//!
//! The `PARKED` bit is set by a compare-and-swap from the exact word the waiter last read, and the
//! waiter sleeps only if the word still equals that value when `parking_lot_core` validates it under
//! its bucket lock. Every writer changes the word with an RMW and looks at the value it replaced: if
//! `PARKED` was set, it clears the bit and wakes the word's sleepers, taking the same bucket lock. So
//! either the writer's change comes first and the waiter's validation fails, or the waiter is queued
//! first and the writer's wake finds it. When nobody set `PARKED`, a writer touches only the word:
//! no lock and no system call.
//!
//! # Under loom
//!
//! Loom cannot run `parking_lot_core`, so under `--cfg phasers_loom` each signal carries a loom
//! mutex and condition variable with the same contract: validate under the lock, sleep on the
//! queue, and wake under the same lock. Parked threads are then blocked in loom's eyes, which both
//! bounds the schedules of several waiting threads and lets loom check that no wake-up is lost.

use crate::primitive::{AtomicU64, Ordering};

const PARKED: u64 = 1 << 63;

/// The largest value a [`Signal`] can hold.
pub(crate) const MAX_VALUE: u64 = PARKED - 1;

pub(crate) struct Signal {
    word: AtomicU64,
    #[cfg(phasers_loom)]
    lot: loom::sync::Mutex<()>,
    #[cfg(phasers_loom)]
    sleepers: loom::sync::Condvar,
}

impl Signal {
    pub(crate) fn new(value: u64) -> Self {
        debug_assert!(value <= MAX_VALUE);
        Signal {
            word: AtomicU64::new(value),
            #[cfg(phasers_loom)]
            lot: loom::sync::Mutex::new(()),
            #[cfg(phasers_loom)]
            sleepers: loom::sync::Condvar::new(),
        }
    }

    /// The current value, with `Acquire` ordering.
    #[inline]
    pub(crate) fn load(&self) -> u64 {
        self.word.load(Ordering::Acquire) & !PARKED
    }

    /// The word as stored, `PARKED` bit included, for a waiter about to park.
    #[inline]
    pub(crate) fn load_raw(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    /// Replaces the value and wakes any sleeper. Returns the old value.
    #[inline]
    pub(crate) fn publish(&self, value: u64) -> u64 {
        debug_assert!(value <= MAX_VALUE);
        let old = self.word.swap(value, Ordering::AcqRel);
        if old & PARKED != 0 {
            self.wake_all();
        }
        old & !PARKED
    }

    /// Subtracts `delta` without waking anyone: for arrivals whose waiters wait for a later
    /// release. Returns the old value.
    #[inline]
    pub(crate) fn fetch_sub_quiet(&self, delta: u64) -> u64 {
        self.word.fetch_sub(delta, Ordering::AcqRel) & !PARKED
    }

    /// Flips `bits` and wakes any sleeper, who re-checks whether its condition now holds.
    /// Returns the old value.
    #[inline]
    pub(crate) fn fetch_xor_notify(&self, bits: u64) -> u64 {
        debug_assert!(bits & PARKED == 0);
        let old = self.word.fetch_xor(bits, Ordering::AcqRel);
        if old & PARKED != 0 {
            self.word.fetch_and(!PARKED, Ordering::Relaxed);
            self.wake_all();
        }
        old & !PARKED
    }

    /// Marks the word as having a sleeper, if it still holds `observed` (a raw word).
    /// Returns the raw word to validate against, or `None` if the word changed meanwhile.
    pub(crate) fn mark_parked(&self, observed: u64) -> Option<u64> {
        if observed & PARKED != 0 {
            return Some(observed);
        }
        self.word
            .compare_exchange(
                observed,
                observed | PARKED,
                Ordering::Acquire,
                Ordering::Acquire,
            )
            .ok()
            .map(|_| observed | PARKED)
    }

    /// Sleeps while the word still equals `expected` (a raw word returned by
    /// [`mark_parked`](Self::mark_parked)) and `still_waiting()` holds, both checked under the
    /// parking lock, until woken or `deadline`. May return spuriously; the caller re-checks.
    #[cfg(not(phasers_loom))]
    pub(crate) fn park(
        &self,
        expected: u64,
        still_waiting: impl Fn() -> bool,
        deadline: Option<std::time::Instant>,
    ) {
        let validate = || self.word.load(Ordering::Acquire) == expected && still_waiting();
        // SAFETY: the key is the address of this signal's own word, so only this signal's waiters
        // and wakers use it. The validate callback only loads atomics: it neither panics nor calls
        // into the parking lot, and the other callbacks do nothing.
        unsafe {
            parking_lot_core::park(
                self.park_key(),
                validate,
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                deadline,
            );
        }
    }

    /// Loom's model of the parking lot: validate under the lock, then sleep on the queue. Loom has
    /// no clock, so timed waits never reach this point (they time out at their first slow check).
    #[cfg(phasers_loom)]
    pub(crate) fn park(
        &self,
        expected: u64,
        still_waiting: impl Fn() -> bool,
        _deadline: Option<std::time::Instant>,
    ) {
        let lot = self
            .lot
            .lock()
            .expect("no loom thread panics while holding the parking lock");
        if self.word.load(Ordering::Acquire) == expected && still_waiting() {
            drop(self.sleepers.wait(lot));
        }
    }

    #[cfg(not(phasers_loom))]
    fn park_key(&self) -> usize {
        &self.word as *const AtomicU64 as usize
    }

    /// Wakes every thread parked on this word. Cold: called only when `PARKED` was seen, or when an
    /// object breaks and every waiter must notice.
    #[cold]
    pub(crate) fn wake_all(&self) {
        #[cfg(not(phasers_loom))]
        // SAFETY: the key is the address of a word this signal owns, so only waiters of this signal
        // park under it; `unpark_all` runs no callback of ours.
        unsafe {
            parking_lot_core::unpark_all(self.park_key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
        }
        #[cfg(phasers_loom)]
        {
            let _lot = self
                .lot
                .lock()
                .expect("no loom thread panics while holding the parking lock");
            self.sleepers.notify_all();
        }
    }
}

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let raw = self.word.load(Ordering::Relaxed);
        f.debug_struct("Signal")
            .field("value", &(raw & !PARKED))
            .field("parked", &(raw & PARKED != 0))
            .finish()
    }
}
