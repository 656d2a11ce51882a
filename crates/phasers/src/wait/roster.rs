//! Who has arrived where: the record behind a barrier's `Error::Timeout { missing }` and behind
//! the stall reports of barriers, teams and reductions.
//!
//! Each participant writes, on its own padded line, how many episodes (or calls) it has arrived
//! at. A timed-out or stalled waiter reads every line to name the ranks that have not arrived at
//! its episode. The write is a `Relaxed` store to a line that only its owner writes, so it stays
//! in the owner's cache and costs about as much as a local variable; the reads happen only on a
//! timeout or a stall report.
//!
//! The list is exact, up to arrivals that race with the reading itself.

use crossbeam_utils::CachePadded;

use crate::primitive::{AtomicU64, Ordering};

const LEFT: u64 = u64::MAX;

pub(crate) struct Roster {
    arrivals: Box<[CachePadded<AtomicU64>]>,
}

impl Roster {
    pub(crate) fn new(parties: usize) -> Self {
        Roster {
            arrivals: (0..parties)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    /// Records that `rank` arrived at `episode`.
    #[inline]
    pub(crate) fn arrive(&self, rank: usize, episode: u64) {
        self.arrivals[rank].store(episode + 1, Ordering::Relaxed);
    }

    /// Records that `rank` left and takes part in no later episode.
    pub(crate) fn leave(&self, rank: usize) {
        self.arrivals[rank].store(LEFT, Ordering::Relaxed);
    }

    /// Ranks that have not arrived at `episode`, in increasing order.
    pub(crate) fn missing(&self, episode: u64) -> Vec<usize> {
        self.arrivals
            .iter()
            .enumerate()
            .filter(|(_, arrived)| arrived.load(Ordering::Relaxed) <= episode)
            .map(|(rank, _)| rank)
            .collect()
    }
}
