//! The meeting every collective opens with: a counting barrier whose last arrival runs the call's
//! completion (checks, inline results, splits) before it releases the others.

use std::any::TypeId;

use crossbeam_utils::CachePadded;

use super::post::Chunk;
use super::signature;
use crate::primitive::{AtomicU64, Ordering, UnsafeCell};
use crate::wait::Signal;

/// What the completer leaves for everyone past the meeting's lines: the result of a broadcast or
/// reduction of up to 64 bytes that is not a one-word call (those leave theirs next to the release
/// word: see `MeetingLine::word`).
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
/// members' one-word inputs. Meetings alternate between two such lines, as the counting barrier
/// alternates its two counters: the completer of meeting `i` clears the arrival word of meeting
/// `i + 1`, on the other line, before it releases `i`, which leaves that line in its cache for
/// its own next arrival. A call then moves about one line between cores per arrival and one per
/// release, as the counting barrier does.
///
/// Issue 35 measured the earlier layout (one line for the arrivals, another for the release, read
/// and written by every meeting) at 1.8x the Auto barrier for a 2-member barrier on a 2-core AMD
/// EPYC VM: the completer's arrival and its release each waited for a line from the other core.
#[repr(C)]
pub(crate) struct MeetingLine {
    /// The number of meetings completed, as of the last meeting on this line: meeting `i` (on
    /// line `i % 2`) is over once this exceeds `i`.
    release: Signal,
    /// The arrivals at this line's current meeting and the sum of their signatures (see
    /// [`Meeting::arrive`]).
    arrivals: AtomicU64,
    /// The result of the line's last one-word call (see `engine::word_call`), as its bits:
    /// written by the completer before the release, read by the others after it, and written
    /// again only two meetings later, once every member has arrived at the one in between.
    word: AtomicU64,
    /// The one-word inputs of ranks below [`NEAR`]; the others' are in [`Meeting::far`].
    near: [AtomicU64; NEAR],
}

impl MeetingLine {
    fn new() -> Self {
        MeetingLine {
            release: Signal::new(0),
            arrivals: AtomicU64::new(0),
            word: AtomicU64::new(0),
            near: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// How many one-word inputs fit in a meeting line after the release, arrival and result words:
/// 2 with the futex signal of 32 bytes (Linux). Under loom a signal is larger, and one input
/// still lies there, so that the models cover both places an input can be.
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
    /// Meeting `i` uses line `i % 2`.
    lines: [CachePadded<MeetingLine>; 2],
    /// `seq + 1` of the last call whose meeting found an error: rarely written, so it stays in
    /// every reader's cache.
    pub(crate) failed: CachePadded<AtomicU64>,
    /// The inline result of the last meeting of a call of more than one word; written by its
    /// completer before the release, read by the others after it, and written again only by a
    /// later meeting's completer, once every member has arrived there (so has finished reading).
    pub(crate) result: UnsafeCell<InlineResult>,
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
            lines: [
                CachePadded::new(MeetingLine::new()),
                CachePadded::new(MeetingLine::new()),
            ],
            failed: CachePadded::new(AtomicU64::new(0)),
            result: UnsafeCell::new(InlineResult {
                seq: u64::MAX,
                count: 0,
                type_id: TypeId::of::<()>(),
                data: Chunk::ZERO,
            }),
            far: (0..far)
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        }
    }

    #[inline]
    fn line(&self, index: u64) -> &MeetingLine {
        &self.lines[(index & 1) as usize]
    }

    /// Arrives at meeting `index` of a team of `size`, with the call's `signature` (0 for calls
    /// that are not compared). Returns `None` unless this is the last arrival, who must complete
    /// the meeting and then [`release`](Self::release) it; the last arrival gets whether every
    /// member arrived with its signature.
    ///
    /// The word starts each meeting at zero (the completer of the meeting before clears it). Each
    /// arrival adds [`signature::arrival`](super::signature::arrival): one in the low bits, which
    /// count, and its signature in the high bits, which sum (see [`signature`](super::signature)).
    ///
    /// # Memory ordering
    ///
    /// Each arrival is an `AcqRel` RMW on one word, so the last arrival reads the end of a release
    /// sequence that contains every earlier arrival, and sees every post and input written before
    /// them. No member arrives at meeting `index + 1` before it saw this one's release, which the
    /// completer publishes with `Release` after clearing that meeting's word, so every arrival
    /// there adds to the cleared word. The clear itself comes after every arrival at meeting
    /// `index - 1` on that word: those happened before that meeting's release, which every
    /// arrival here, and so this completer, acquired.
    #[inline]
    pub(crate) fn arrive(&self, index: u64, size: usize, signature: u64) -> Option<bool> {
        let before = self
            .line(index)
            .arrivals
            .fetch_add(signature::arrival(signature), Ordering::AcqRel);
        let after = before.wrapping_add(signature::arrival(signature));
        let count = after & ((1 << signature::COUNT_BITS) - 1);
        (count == size as u64).then(|| after == signature::all_matched(size, signature))
    }

    /// Ends meeting `index`: what the completer wrote becomes visible to every waiter, and the
    /// arrival word of meeting `index + 1` is ready for it (nobody adds to it before this release;
    /// see [`arrive`](Self::arrive)).
    #[inline]
    pub(crate) fn release(&self, index: u64) {
        self.line(index + 1).arrivals.store(0, Ordering::Relaxed);
        self.line(index).release.publish(index + 1);
    }

    /// The word the waiters of meeting `index` wait on, until it exceeds `index`.
    #[inline]
    pub(crate) fn release_word(&self, index: u64) -> &Signal {
        &self.line(index).release
    }

    /// Whether `signal` is one of this meeting's release words.
    pub(crate) fn releases_on(&self, signal: &Signal) -> bool {
        self.lines
            .iter()
            .any(|line| std::ptr::eq(&line.release, signal))
    }

    /// Wakes every sleeper of either release word, for a team that breaks.
    #[cold]
    pub(crate) fn wake_all(&self) {
        for line in &self.lines {
            line.release.wake_all();
        }
    }

    /// The cell of `rank`'s one-word input at meeting `index`.
    #[inline]
    fn cell(&self, index: u64, rank: usize) -> &AtomicU64 {
        match rank.checked_sub(NEAR) {
            None => &self.line(index).near[rank],
            Some(far) => &self.far[far / FAR_PER_LINE][far % FAR_PER_LINE],
        }
    }

    /// Leaves `rank`'s one-word input for the completer of meeting `index`, before `rank`
    /// arrives there.
    ///
    /// `Relaxed`: the arrival that follows is a `Release` RMW on the arrival word, and the
    /// completer's own arrival acquires the whole sequence of them. The cell is written again only
    /// at a later meeting, after this one's release, which the completer publishes after reading.
    #[inline]
    pub(crate) fn put_input(&self, index: u64, rank: usize, bits: u64) {
        self.cell(index, rank).store(bits, Ordering::Relaxed);
    }

    /// `rank`'s one-word input at meeting `index`; only its completer reads it, after every
    /// member arrived.
    #[inline]
    pub(crate) fn input(&self, index: u64, rank: usize) -> u64 {
        self.cell(index, rank).load(Ordering::Relaxed)
    }

    /// Leaves the one-word result of meeting `index` for everyone; only its completer writes it,
    /// before the release.
    #[inline]
    pub(crate) fn put_word(&self, index: u64, bits: u64) {
        self.line(index).word.store(bits, Ordering::Relaxed);
    }

    /// The one-word result of meeting `index`, once its release was seen (with `Acquire`).
    #[inline]
    pub(crate) fn word(&self, index: u64) -> u64 {
        self.line(index).word.load(Ordering::Relaxed)
    }

    /// Whether meeting `index` is over.
    #[inline]
    pub(crate) fn is_released(&self, index: u64) -> bool {
        self.line(index).release.load() > index
    }
}
