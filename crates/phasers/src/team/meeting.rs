//! The meeting every collective opens with: a counting barrier whose last arrival runs the call's
//! completion (checks, inline results, splits) before it releases the others.

use std::any::TypeId;

use crossbeam_utils::CachePadded;

use super::post::Chunk;
use super::signature;
use crate::primitive::{AtomicU64, Ordering, UnsafeCell};
use crate::wait::Signal;

/// What the completer leaves for everyone past the meeting's first line: the result of a
/// broadcast or reduction of up to 64 bytes that is not a one-word call (those leave theirs in
/// the release line itself: see `MeetingLine::word`).
#[derive(Clone, Copy)]
pub(crate) struct InlineResult {
    /// The call it belongs to: a member whose call found no inline result of its own (possible
    /// only in an unchecked team whose members called different things) sees an older one.
    pub(crate) seq: u64,
    pub(crate) count: usize,
    pub(crate) type_id: TypeId,
    pub(crate) data: Chunk,
}

/// The words of a meeting that every call touches, in one 64-byte cache line: the release word
/// the waiters poll, the arrival word every member adds to, the one-word result and the first
/// members' one-word inputs. A call then moves one line between cores per arrival and one per
/// release, as the counting barrier does (its counter is both the arrival and the release word).
/// Issue 35 measured the earlier layout, with arrivals on a line of their own, at 1.8x the Auto
/// barrier for a 2-member barrier on a 2-core AMD EPYC VM: the completer's arrival and its
/// release then each waited for a line from the other core.
///
/// What is rarely written (`failed`) and what only calls of more than a word use (`result`) lie
/// past that line, so that writing them never delays the release.
#[repr(C)]
pub(crate) struct MeetingLine {
    /// The number of meetings completed: meeting `i` is over once this exceeds `i`.
    pub(crate) release: Signal,
    /// The arrivals of the current meeting and the sum of their signatures (see `arrive`).
    arrivals: AtomicU64,
    /// The result of the last one-word call (see `word_call`), as its bits: written by the
    /// completer before the release, read by the others after it, and written again only by a
    /// later meeting's completer, once every member has arrived there.
    word: AtomicU64,
    /// The one-word inputs of ranks below [`NEAR`]; the others' are in [`Meeting::far`].
    near: [AtomicU64; NEAR],
    /// `seq + 1` of the last call whose meeting found an error.
    pub(crate) failed: AtomicU64,
    /// The inline result of the last meeting of a call of more than one word; written by its
    /// completer before the release, read by the others after it, and written again only by a
    /// later meeting's completer, once every member has arrived there (so has finished reading).
    pub(crate) result: UnsafeCell<InlineResult>,
}

/// How many one-word inputs fit in the meeting's first cache line after the release, arrival and
/// result words: 3 with the futex signal of 24 bytes (Linux). Under loom a signal is larger, and
/// one input still lies there, so that the models cover both places an input can be.
const NEAR: usize = {
    let free = 64usize.saturating_sub(std::mem::size_of::<Signal>() + 16) / 8;
    if free == 0 {
        1
    } else {
        free
    }
};

/// One-word inputs per line of [`Meeting::far`]: 128 bytes, the padding unit of `CachePadded`.
const FAR_PER_LINE: usize = 16;

pub(crate) struct Meeting {
    pub(crate) line: CachePadded<MeetingLine>,
    /// The one-word inputs of ranks from [`NEAR`] on, 16 to a padded line: members write them
    /// just before their arrival, and the completer reads them all after its own.
    far: Box<[CachePadded<[AtomicU64; FAR_PER_LINE]>]>,
}

impl Meeting {
    /// A meeting of `size` members; `inputs` when its calls may carry one-word inputs (the
    /// opening meeting), so that it keeps a cell for each member's.
    pub(crate) fn new(size: usize, inputs: bool) -> Self {
        let far = if inputs {
            size.saturating_sub(NEAR).div_ceil(FAR_PER_LINE)
        } else {
            0
        };
        Meeting {
            far: (0..far)
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
            line: CachePadded::new(MeetingLine {
                release: Signal::new(0),
                arrivals: AtomicU64::new(0),
                word: AtomicU64::new(0),
                near: std::array::from_fn(|_| AtomicU64::new(0)),
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
            .line
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
        self.line.arrivals.store(0, Ordering::Relaxed);
        self.line.release.publish(index + 1);
    }

    /// The cell of `rank`'s one-word input.
    #[inline]
    fn cell(&self, rank: usize) -> &AtomicU64 {
        match rank.checked_sub(NEAR) {
            None => &self.line.near[rank],
            Some(far) => &self.far[far / FAR_PER_LINE][far % FAR_PER_LINE],
        }
    }

    /// Leaves `rank`'s one-word input for the completer, before `rank` arrives.
    ///
    /// `Relaxed`: the arrival that follows is a `Release` RMW on the arrival word, and the
    /// completer's own arrival acquires the whole sequence of them. The cell is written again only
    /// at a later meeting, after this one's release, which the completer publishes after reading.
    #[inline]
    pub(crate) fn put_input(&self, rank: usize, bits: u64) {
        self.cell(rank).store(bits, Ordering::Relaxed);
    }

    /// `rank`'s one-word input; only the completer reads it, after every member arrived.
    #[inline]
    pub(crate) fn input(&self, rank: usize) -> u64 {
        self.cell(rank).load(Ordering::Relaxed)
    }

    /// Leaves the one-word result for everyone; only the completer writes it, before the release.
    #[inline]
    pub(crate) fn put_word(&self, bits: u64) {
        self.line.word.store(bits, Ordering::Relaxed);
    }

    /// The one-word result of the meeting, once its release was seen (with `Acquire`).
    #[inline]
    pub(crate) fn word(&self) -> u64 {
        self.line.word.load(Ordering::Relaxed)
    }

    /// Whether meeting `index` is over.
    #[inline]
    pub(crate) fn is_released(&self, index: u64) -> bool {
        self.line.release.load() > index
    }
}
