//! The "this object can no longer complete" state shared by every participant.
//!
//! When a participant panics, or its handle is dropped while others still count on it, the episode
//! it would have joined can never complete. Rather than let the others hang, the object records the
//! first episode the lost participant did not complete, and who it was; waits at or after that
//! episode return [`Error::Broken`](crate::Error::Broken). Waits for earlier episodes still complete:
//! the breaker had already arrived at those, so they finish as soon as the release reaches the
//! waiter. A waiter already waiting at the breaking episode may also see it complete, if the breaker
//! had arrived there (after a timeout) before it was lost; which of the two it sees is a race.
//!
//! # Memory ordering
//!
//! `from_episode` is what every wait reads, with `Acquire`; it is written only while holding
//! `breaker`'s lock, with `Release`, after the pair it belongs to was written under that lock.
//! So a waiter that sees the episode and then asks who broke it (taking the lock) gets the pair
//! that episode came with, or a later, earlier-episode one. The breaker then wakes every sleeper
//! of the object; a waiter validates "not broken" against the futex epoch before it sleeps (see
//! `signal.rs`), so no waiter can fall asleep after missing it. Breaking is rare, so the lock
//! costs nothing that matters; waits never take it.

use crate::primitive::{AtomicU64, Mutex, Ordering};

const INTACT: u64 = u64::MAX;

pub(crate) struct BrokenState {
    from_episode: AtomicU64,
    /// Who broke the object, and the episode it broke from: kept together under one lock so that
    /// a report never pairs one breaker's rank with another's episode.
    breaker: Mutex<Option<(usize, u64)>>,
}

impl BrokenState {
    pub(crate) fn new() -> Self {
        BrokenState {
            from_episode: AtomicU64::new(INTACT),
            breaker: Mutex::new(None),
        }
    }

    /// Whether a wait for `episode` can no longer complete.
    #[inline]
    pub(crate) fn is_broken_for(&self, episode: u64) -> bool {
        self.from_episode.load(Ordering::Acquire) <= episode
    }

    /// The rank that broke the object and the first episode that cannot complete, if broken.
    pub(crate) fn breaker(&self) -> Option<(usize, u64)> {
        if self.from_episode.load(Ordering::Acquire) == INTACT {
            return None;
        }
        *self.lock()
    }

    /// Records that `episode` and later cannot complete because of `rank`. Returns `true` for the
    /// first breaker, who must then wake every sleeper; later breaks change nothing.
    #[cold]
    pub(crate) fn break_from(&self, episode: u64, rank: usize) -> bool {
        if self.from_episode.load(Ordering::Acquire) != INTACT {
            return false;
        }
        let mut breaker = self.lock();
        if breaker.is_some() {
            return false;
        }
        self.record(&mut breaker, episode, rank);
        true
    }

    /// As [`break_from`](Self::break_from), except that a later break at an earlier episode
    /// lowers the episode (and names its own rank). Returns `true` whenever the episode was
    /// set or lowered, and the caller must then wake every sleeper again: a waiter of the new
    /// episode may be asleep, having seen the object intact for it.
    ///
    /// For objects where a participant may run ahead of a lost one: a reduction's quick return,
    /// a team member stuck in a call whose members differed. A participant that returned from
    /// call `e` and then dropped its handle breaks from `e + 1`; if another participant was lost
    /// before it ever began call `e`, call `e` can no longer complete either, and its waiters must
    /// learn it (issue 31: a reduction's root waited for ever).
    #[cold]
    pub(crate) fn break_from_earliest(&self, episode: u64, rank: usize) -> bool {
        if self.from_episode.load(Ordering::Acquire) <= episode {
            return false;
        }
        let mut breaker = self.lock();
        if breaker.is_some_and(|(_, from)| from <= episode) {
            return false;
        }
        self.record(&mut breaker, episode, rank);
        true
    }

    /// Writes the pair, then publishes the episode; the caller holds the lock.
    fn record(&self, breaker: &mut Option<(usize, u64)>, episode: u64, rank: usize) {
        *breaker = Some((rank, episode));
        self.from_episode.store(episode, Ordering::Release);
    }

    fn lock(&self) -> crate::primitive::MutexGuard<'_, Option<(usize, u64)>> {
        // A breaker never panics while holding the lock (it only writes two words), so a
        // poisoned lock still holds a whole pair.
        self.breaker
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
