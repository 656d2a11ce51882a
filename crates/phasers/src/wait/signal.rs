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
//! waiter sleeps only if the word still equals that value when it validates it. Every writer
//! changes the word with an RMW and looks at the value it replaced: if `PARKED` was set, it wakes
//! the word's sleepers. So either the writer's change comes first and the waiter's validation
//! fails, or the waiter sleeps first and the writer's wake finds it. When nobody set `PARKED`, a
//! writer touches only the word: no lock and no system call.
//!
//! Async tasks wait here too, without sleeping: a task stores its waker beside the futex and
//! sets `PARKED` by the same compare-and-swap, and every release that sees `PARKED` also wakes the
//! stored wakers (see `wakers.rs` and `poll.rs`).
//!
//! Sleepers wait on one futex word per signal, which a release bumps before it wakes them, all
//! with one system call or through a tree of sleepers waking sleepers, as their plan asked (see
//! `futex.rs`); validation is ordered against the wake by that epoch (see `Signal::sleep`). On
//! Linux timed sleepers (a deadline, or a stall moment: see `stall`) wait on the same word with a
//! timeout. Elsewhere they park through `parking_lot_core`, which validates under its bucket lock
//! and supports deadlines, and a release wakes both kinds.
//!
//! # Under loom
//!
//! Loom cannot run the kernel's futex or `parking_lot_core`, so under `--cfg phasers_loom` the
//! futex is a loom mutex and condition variable with the kernel's contract (see
//! [`Futex`]), and the epoch protocol above runs as is. Sleeping threads are then blocked in loom's
//! eyes, which both bounds the schedules of several waiting threads and lets loom check that no
//! wake-up is lost. Timed sleeps never reach the futex under loom (see [`Signal::park`]).

use std::collections::VecDeque;
use std::task::Waker;

use super::batched_wakes;
use super::futex::Futex;
use super::wakers::{WakerKey, Wakers};
use crate::primitive::{AtomicU64, Ordering};

const PARKED: u64 = 1 << 63;

/// The largest value a [`Signal`] can hold.
pub(crate) const MAX_VALUE: u64 = PARKED - 1;

pub(crate) struct Signal {
    word: AtomicU64,
    /// Where untimed sleepers sleep, so one system call wakes them all (see [`Signal::sleep`]).
    futex: Futex,
    /// The wakers of async tasks waiting here, woken with the sleepers (see `wakers.rs`): a
    /// pointer, null until a task waits. The list inline (its lock and vector) took the signal
    /// from 24 bytes to 64, which pushed the words that objects lay out beside their signal (a
    /// team meeting's arrival word and inputs, see `team/meeting.rs`) onto a second cache line:
    /// the 2-thread team barrier went from 0.96-1.01x to 1.21-1.32x the Auto barrier (2-core Xeon
    /// VM, 2026-11-30). The pointer costs 8 bytes, and is followed only by tasks and by releases
    /// that saw `PARKED`.
    wakers: Wakers,
}

impl Signal {
    pub(crate) fn new(value: u64) -> Self {
        debug_assert!(value <= MAX_VALUE);
        Signal {
            word: AtomicU64::new(value),
            futex: Futex::new(),
            wakers: Wakers::new(),
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
            self.release_sleepers();
        }
        old & !PARKED
    }

    /// [`publish`](Self::publish) for the release of a task's arrival: the tasks it wakes go
    /// into `sink`, when there is one, past a first batch (see
    /// [`release_sleepers_into`](Self::release_sleepers_into)).
    #[inline]
    pub(crate) fn publish_into(&self, value: u64, sink: Option<&mut VecDeque<Waker>>) -> u64 {
        debug_assert!(value <= MAX_VALUE);
        let old = self.word.swap(value, Ordering::AcqRel);
        if old & PARKED != 0 {
            self.release_sleepers_into(sink);
        }
        old & !PARKED
    }

    /// Replaces the value with a plain store, waking no one, and clears `PARKED`: only for a word
    /// that, as the caller can prove, nobody waits on now. A store retires into the store buffer
    /// while the line is fetched, where a swap would stall the caller until it owns the line.
    #[inline]
    pub(crate) fn rearm(&self, value: u64) {
        debug_assert!(value <= MAX_VALUE);
        self.word.store(value, Ordering::Release);
    }

    /// Publishes `value` unless a larger value is already there: for releases that may be
    /// published out of order. The common case is one swap; when it replaced a larger value
    /// (a later release overtook this one), the larger value is put back, so readers may see the
    /// smaller one only for that instant.
    #[inline]
    pub(crate) fn publish_at_least(&self, value: u64) {
        if self.publish_at_least_owing(value) {
            self.release_sleepers();
        }
    }

    /// [`publish_at_least`](Self::publish_at_least), leaving the wake of the sleepers to the
    /// caller: returns whether it owes [`release_sleepers`](Self::release_sleepers). For a
    /// completer with more to do before the waiters run (see `OwedWakes` in `phaser/core.rs`):
    /// waking 100,000 tasks takes milliseconds, and what it leaves undone meanwhile, others wait
    /// for. Until it pays, only the sleepers that marked the word before the publish wait on;
    /// every later waiter sees the new value.
    #[inline]
    pub(crate) fn publish_at_least_owing(&self, value: u64) -> bool {
        debug_assert!(value <= MAX_VALUE);
        let mut value = value;
        let mut owed = false;
        loop {
            let old = self.word.swap(value, Ordering::AcqRel);
            owed |= old & PARKED != 0;
            if old & !PARKED <= value {
                return owed;
            }
            value = old & !PARKED;
        }
    }

    /// Replaces the value with `new` only if it is `current`, and wakes any sleeper on success:
    /// for hand-offs that two threads race to settle (an offer taken or withdrawn). Returns the
    /// value found when it was not `current`.
    #[inline]
    pub(crate) fn compare_publish(&self, current: u64, new: u64) -> Result<(), u64> {
        debug_assert!(new <= MAX_VALUE);
        let mut raw = self.word.load(Ordering::Acquire);
        loop {
            if raw & !PARKED != current {
                return Err(raw & !PARKED);
            }
            match self
                .word
                .compare_exchange(raw, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(old) => {
                    if old & PARKED != 0 {
                        self.release_sleepers();
                    }
                    return Ok(());
                }
                // Only the PARKED bit may have changed; the loop re-checks the value.
                Err(actual) => raw = actual,
            }
        }
    }

    /// Subtracts `delta` without waking anyone: for arrivals whose waiters wait for a later
    /// release. Returns the old value.
    #[inline]
    pub(crate) fn fetch_sub_quiet(&self, delta: u64) -> u64 {
        self.word.fetch_sub(delta, Ordering::AcqRel) & !PARKED
    }

    /// Adds `delta` and wakes any sleeper: for counts that a waiter waits to reach.
    /// Returns the old value.
    #[inline]
    pub(crate) fn fetch_add_notify(&self, delta: u64) -> u64 {
        let old = self.word.fetch_add(delta, Ordering::AcqRel);
        debug_assert!((old & !PARKED) + delta <= MAX_VALUE);
        if old & PARKED != 0 {
            self.word.fetch_and(!PARKED, Ordering::Relaxed);
            self.release_sleepers();
        }
        old & !PARKED
    }

    /// Flips `bits` and wakes any sleeper, who re-checks whether its condition now holds.
    /// Returns the old value.
    #[inline]
    pub(crate) fn fetch_xor_notify(&self, bits: u64) -> u64 {
        debug_assert!(bits & PARKED == 0);
        let old = self.word.fetch_xor(bits, Ordering::AcqRel);
        if old & PARKED != 0 {
            self.word.fetch_and(!PARKED, Ordering::Relaxed);
            self.release_sleepers();
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
    /// [`mark_parked`](Self::mark_parked)) and `still_waiting()` holds, until woken or `deadline`.
    /// May return spuriously; the caller re-checks.
    ///
    /// Loom has no clock, so under loom timed waits never reach this point (they time out at
    /// their first slow check, and stall reports are off) and every sleep is untimed.
    ///
    /// `fanout` is how the sleeper's plan wants releases to wake this word's sleepers (see
    /// `WakeFanout`; 0 for all at once); a sleeper woken by a tree release passes it on.
    pub(crate) fn park(
        &self,
        expected: u64,
        fanout: u32,
        still_waiting: impl Fn() -> bool,
        deadline: Option<std::time::Instant>,
    ) {
        match deadline {
            #[cfg(all(not(target_os = "linux"), not(phasers_loom)))]
            Some(deadline) => self.park_until(expected, still_waiting, deadline),
            _ => self.sleep(expected, fanout, still_waiting, deadline),
        }
    }

    /// A sleep on the signal's futex, timed on Linux when `deadline` is set. When threads
    /// outnumber cores most waiters of a barrier end up here, and one `wake_all` then releases
    /// them all with one system call, where parking each on its own queue entry cost a system call
    /// per sleeper on the releaser's critical path.
    ///
    /// The epoch is read before the word is validated, and every waker bumps it after changing the
    /// word. So if the validation saw the old word, the epoch read saw the old epoch (a later
    /// epoch, read with `Acquire`, would have made the waker's change visible), and the futex
    /// wait either finds the epoch bumped and returns, or sleeps before the wake that follows.
    fn sleep(
        &self,
        expected: u64,
        fanout: u32,
        still_waiting: impl Fn() -> bool,
        deadline: Option<std::time::Instant>,
    ) {
        self.futex.ask_fanout(fanout);
        let epoch = self.futex.epoch();
        if self.word.load(Ordering::Acquire) != expected || !still_waiting() {
            return;
        }
        match deadline {
            #[cfg(all(target_os = "linux", not(phasers_loom)))]
            Some(deadline) => self.futex.wait_until(epoch, fanout, deadline),
            _ => self.futex.wait(epoch, fanout),
        }
    }

    /// A timed sleep through `parking_lot_core`, which validates under its bucket lock and
    /// supports deadlines (the futex wait of `atomic_wait` has none), where no timed futex wait
    /// of our own is written.
    #[cfg(all(not(target_os = "linux"), not(phasers_loom)))]
    fn park_until(
        &self,
        expected: u64,
        still_waiting: impl Fn() -> bool,
        deadline: std::time::Instant,
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
                Some(deadline),
            );
        }
    }

    #[cfg(all(not(target_os = "linux"), not(phasers_loom)))]
    fn park_key(&self) -> usize {
        &self.word as *const AtomicU64 as usize
    }

    /// Outside Linux, timed sleepers park with `parking_lot_core` (see `futex.rs`), and every
    /// release wakes all of them; elsewhere they share the futex and this does nothing.
    fn unpark_timed_sleepers(&self) {
        #[cfg(all(not(target_os = "linux"), not(phasers_loom)))]
        // SAFETY: the key is the address of a word this signal owns, so only waiters of this signal
        // park under it; `unpark_all` runs no callback of ours.
        unsafe {
            parking_lot_core::unpark_all(self.park_key(), parking_lot_core::DEFAULT_UNPARK_TOKEN);
        }
    }

    /// Stores the waker of a task about to wait on this word (see `wakers.rs`), in the slot of
    /// `key` if it is still the task's. The task then marks the word with
    /// [`mark_parked`](Self::mark_parked) and validates it, as a sleeper does (see `poll.rs`).
    pub(crate) fn store_waker(&self, key: Option<WakerKey>, waker: &Waker) -> WakerKey {
        self.wakers.store(key, waker)
    }

    /// Forgets the waker of a task that no longer waits.
    pub(crate) fn remove_waker(&self, key: WakerKey) {
        self.wakers.remove(key);
    }

    /// Wakes the threads parked on this word, the way they asked (see `futex.rs`), and the tasks
    /// waiting on it. Cold: called only when `PARKED` was seen.
    #[cold]
    pub(crate) fn release_sleepers(&self) {
        self.futex.release();
        self.unpark_timed_sleepers();
        self.wakers.wake_all();
    }

    /// [`release_sleepers`](Self::release_sleepers), except that given the sink of a task's
    /// arrival (see `batched_wakes.rs`), it puts the task wakers there, beyond a first batch, for
    /// that task to wake a batch per poll. Threads are woken at once either way.
    #[cold]
    pub(crate) fn release_sleepers_into(&self, sink: Option<&mut VecDeque<Waker>>) {
        let Some(sink) = sink else {
            return self.release_sleepers();
        };
        self.futex.release();
        self.unpark_timed_sleepers();
        // Under loom none at once, so that two or three tasks already exercise the batches.
        let at_once = if cfg!(phasers_loom) {
            0
        } else {
            batched_wakes::WAKES_PER_POLL
        };
        self.wakers.wake_or_take(at_once, sink);
    }

    /// Wakes every thread parked on this word at once, including those a tree release set aside,
    /// and every task waiting on it: for an object that breaks, whose waiters must all notice now.
    #[cold]
    pub(crate) fn wake_all(&self) {
        self.futex.wake_all();
        self.unpark_timed_sleepers();
        self.wakers.wake_all();
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
