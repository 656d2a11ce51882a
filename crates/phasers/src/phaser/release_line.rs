//! The release word and, in its cache line, the results of the phaser's first accumulators.
//!
//! A task released from a phase usually reads its accumulators' results next. Kept in their own
//! lines, each result is one more cache-line transfer from the completer on every phase, after
//! the transfer of the release word itself; beside the release word, the load that saw the
//! release brought them too.

use std::ops::Deref;

use crate::primitive::{AtomicU64, Ordering};
use crate::wait::Signal;

/// The coherence unit the results share with the release word: 64 bytes on the x86-64 and Arm
/// cores we run on. Where a line is larger, the results still share it; a smaller one would only
/// put some of them in the next line, never make a result wrong.
const LINE: usize = 64;

/// How many results fit in the release word's line after it; at least one, so every build
/// (loom's larger atomics included) takes the same paths.
const INLINE_RESULTS: usize = {
    let room = LINE.saturating_sub(std::mem::size_of::<Signal>()) / std::mem::size_of::<u64>();
    if room == 0 {
        1
    } else {
        room
    }
};

/// The phaser's release word, followed in memory by the results of its first
/// [`INLINE_RESULTS`] accumulators (by attach order). It reads as the [`Signal`] it starts with.
#[repr(C)]
pub(crate) struct ReleaseLine {
    signal: Signal,
    results: [AtomicU64; INLINE_RESULTS],
}

impl ReleaseLine {
    pub(crate) fn new() -> Self {
        ReleaseLine {
            signal: Signal::new(0),
            results: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The slot of the accumulator attached `index`-th, if it is one of those kept here.
    fn slot(&self, index: usize) -> Option<&AtomicU64> {
        self.results.get(index)
    }

    /// Stores a result of the accumulator attached `index`-th; `false` when it is not kept here.
    /// The root's completer stores each phase's results before it publishes the release, so a
    /// task that saw the release reads them (the release is an `AcqRel` swap).
    pub(crate) fn store_result(&self, index: usize, value: u64) -> bool {
        match self.slot(index) {
            Some(slot) => {
                slot.store(value, Ordering::Release);
                true
            }
            None => false,
        }
    }

    /// The latest result of the accumulator attached `index`-th, if it is kept here.
    pub(crate) fn result(&self, index: usize) -> Option<u64> {
        self.slot(index).map(|slot| slot.load(Ordering::Acquire))
    }
}

impl Deref for ReleaseLine {
    type Target = Signal;

    fn deref(&self) -> &Signal {
        &self.signal
    }
}

#[cfg(all(test, not(phasers_loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_first_results_share_the_release_words_line() {
        let line = crossbeam_utils::CachePadded::new(ReleaseLine::new());
        let start = &*line as *const ReleaseLine as usize;
        let last = line.slot(INLINE_RESULTS - 1).unwrap() as *const AtomicU64 as usize;
        assert_eq!(start % LINE, 0, "CachePadded aligns the line");
        assert!(last + 8 <= start + LINE || INLINE_RESULTS == 1);
        assert!(line.store_result(0, 7));
        assert_eq!(line.result(0), Some(7));
        assert!(!line.store_result(INLINE_RESULTS, 7));
        assert_eq!(line.result(INLINE_RESULTS), None);
    }
}
