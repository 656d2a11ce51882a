//! The meeting every collective opens with: a counting barrier whose last arrival runs the call's
//! completion (checks, inline results, splits) before it releases the others.

use std::any::TypeId;

use crossbeam_utils::CachePadded;

use super::post::Chunk;
use super::signature;
use crate::primitive::{AtomicU64, Ordering, UnsafeCell};
use crate::wait::Signal;

/// What the completer leaves for everyone in the meeting's line, next to the release word, so
/// that a one-word allreduce costs one line more than a barrier.
#[derive(Clone, Copy)]
pub(crate) struct InlineResult {
    /// The call it belongs to: a member whose call found no inline result of its own (possible
    /// only in an unchecked team whose members called different things) sees an older one.
    pub(crate) seq: u64,
    pub(crate) count: usize,
    pub(crate) type_id: TypeId,
    pub(crate) data: Chunk,
}

pub(crate) struct MeetingLine {
    /// The number of meetings completed: meeting `i` is over once this exceeds `i`.
    pub(crate) release: Signal,
    /// `seq + 1` of the last call whose meeting found an error.
    pub(crate) failed: AtomicU64,
    /// The inline result of the last meeting; written by its completer before the release, read
    /// by the others after it, and written again only by a later meeting's completer, once every
    /// member has arrived there (so has finished reading).
    pub(crate) result: UnsafeCell<InlineResult>,
}

pub(crate) struct Meeting {
    arrivals: CachePadded<AtomicU64>,
    pub(crate) line: CachePadded<MeetingLine>,
}

impl Meeting {
    pub(crate) fn new() -> Self {
        Meeting {
            arrivals: CachePadded::new(AtomicU64::new(0)),
            line: CachePadded::new(MeetingLine {
                release: Signal::new(0),
                failed: AtomicU64::new(0),
                result: UnsafeCell::new(InlineResult {
                    seq: u64::MAX,
                    count: 0,
                    type_id: TypeId::of::<()>(),
                    data: Chunk::ZERO,
                }),
            }),
        }
    }

    /// Arrives at the current meeting of a team of `size`, with the call's `signature` (0 for
    /// calls that are not compared). Returns `None` unless this is the last arrival, who must
    /// complete the meeting and then [`release`](Self::release) it; the last arrival gets whether
    /// every member arrived with its signature.
    ///
    /// The word starts each meeting at zero (the completer resets it before the release, on a line
    /// its own add just brought into its cache). Each arrival adds
    /// [`signature::arrival`](super::signature::arrival): one in the low bits, which count, and
    /// its signature in the high bits, which sum (see [`signature`](super::signature)).
    ///
    /// # Memory ordering
    ///
    /// Each arrival is an `AcqRel` RMW on one word, so the last arrival reads the end of a release
    /// sequence that contains every earlier arrival, and sees every post written before them. No
    /// member arrives at the next meeting before it saw this one's release, which the completer
    /// publishes with `Release` after its reset, so every arrival there adds to the reset word.
    #[inline]
    pub(crate) fn arrive(&self, size: usize, signature: u64) -> Option<bool> {
        let before = self
            .arrivals
            .fetch_add(signature::arrival(signature), Ordering::AcqRel);
        let after = before.wrapping_add(signature::arrival(signature));
        let count = after & ((1 << signature::COUNT_BITS) - 1);
        (count == size as u64).then(|| after == signature::all_matched(size, signature))
    }

    /// Ends meeting `index`: what the completer wrote becomes visible to every waiter, and the
    /// arrival word is ready for the next meeting.
    #[inline]
    pub(crate) fn release(&self, index: u64) {
        self.arrivals.store(0, Ordering::Relaxed);
        self.line.release.publish(index + 1);
    }

    /// Whether meeting `index` is over.
    #[inline]
    pub(crate) fn is_released(&self, index: u64) -> bool {
        self.line.release.load() > index
    }
}
