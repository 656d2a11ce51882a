//! The meeting every collective opens with: a counting barrier whose last arrival runs the call's
//! completion (checks, inline results, splits) before it releases the others.

use std::any::TypeId;

use crossbeam_utils::CachePadded;

use super::post::Chunk;
use crate::primitive::{AtomicU64, Ordering, UnsafeCell};
use crate::wait::Signal;

/// What the completer leaves for everyone in the meeting's line, next to the release word, so
/// that a one-word allreduce costs one line more than a barrier.
#[derive(Clone, Copy)]
pub(crate) struct InlineResult {
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
                    count: 0,
                    type_id: TypeId::of::<()>(),
                    data: Chunk::ZERO,
                }),
            }),
        }
    }

    /// Arrives at meeting `index` of a team of `size`; returns `true` for the last arrival, who
    /// must complete the meeting and then [`release`](Self::release) it.
    ///
    /// Arrivals only count up, so nothing is reset on the critical path: meeting `index` is full
    /// when `(index + 1) * size` arrivals happened, and no member arrives at `index + 1` before
    /// `index` is released.
    ///
    /// # Memory ordering
    ///
    /// Each arrival is an `AcqRel` RMW on one word, so the last arrival reads the end of a release
    /// sequence that contains every earlier arrival, and sees every post written before them.
    #[inline]
    pub(crate) fn arrive(&self, index: u64, size: usize) -> bool {
        let before = self.arrivals.fetch_add(1, Ordering::AcqRel);
        before + 1 == (index + 1) * size as u64
    }

    /// Ends meeting `index`: what the completer wrote becomes visible to every waiter.
    #[inline]
    pub(crate) fn release(&self, index: u64) {
        self.line.release.publish(index + 1);
    }

    /// Whether meeting `index` is over.
    #[inline]
    pub(crate) fn is_released(&self, index: u64) -> bool {
        self.line.release.load() > index
    }
}
