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
//! `from_episode` is written once (by compare-and-swap from `INTACT`) with `Release` after `by`, and
//! read with `Acquire`, so a waiter that sees the episode also sees who broke it. The breaker then
//! wakes every sleeper of the object under the parking lot's bucket locks; a waiter validates "not
//! broken" under the same lock before it sleeps, so no waiter can fall asleep after missing it.

use crate::primitive::{AtomicU64, AtomicUsize, Ordering};

const INTACT: u64 = u64::MAX;

pub(crate) struct BrokenState {
    from_episode: AtomicU64,
    by: AtomicUsize,
}

impl BrokenState {
    pub(crate) fn new() -> Self {
        BrokenState {
            from_episode: AtomicU64::new(INTACT),
            by: AtomicUsize::new(usize::MAX),
        }
    }

    /// Whether a wait for `episode` can no longer complete.
    #[inline]
    pub(crate) fn is_broken_for(&self, episode: u64) -> bool {
        self.from_episode.load(Ordering::Acquire) <= episode
    }

    /// The rank that broke the object and the first episode that cannot complete, if broken.
    pub(crate) fn breaker(&self) -> Option<(usize, u64)> {
        let episode = self.from_episode.load(Ordering::Acquire);
        (episode != INTACT).then(|| (self.by.load(Ordering::Relaxed), episode))
    }

    /// Records that `episode` and later cannot complete because of `rank`. Returns `true` for the
    /// first breaker, who must then wake every sleeper; later breaks change nothing.
    #[cold]
    pub(crate) fn break_from(&self, episode: u64, rank: usize) -> bool {
        if self.from_episode.load(Ordering::Acquire) != INTACT {
            return false;
        }
        // Two breakers may race; `by` may then name the loser, which still names a real culprit.
        self.by.store(rank, Ordering::Relaxed);
        self.from_episode
            .compare_exchange(INTACT, episode, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}
