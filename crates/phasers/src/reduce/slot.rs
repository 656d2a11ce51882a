//! What one participant publishes for the others during a call.
//!
//! # The offer hand-off
//!
//! A participant whose accumulated data waits to be consumed (a static-tree slave, or under the
//! dynamic algorithms the waiting half of a pair) *offers* it, and returns only once a master has
//! consumed it. If the object breaks while it waits, it must not return while a master may still
//! read its buffer, so the offer is settled by compare-and-swap on one word:
//!
//! | value of `offer` for call `e` | meaning |
//! |---|---|
//! | `tag(e, OFFERED)` | the data is ready; nobody has it yet |
//! | `tag(e, TAKEN)` | a master took it and will post the job (static tree only) |
//! | `tag(e, CALLED)` | the job is posted; `master` and `job` say where |
//! | `tag(e, WITHDRAWN)` | the owner gave up (the object broke) before anyone took it |
//!
//! The master moves `OFFERED` to `TAKEN` and the owner moves `OFFERED` to `WITHDRAWN`; exactly one
//! wins. A master that took an offer always goes on to post the job, so an owner that lost the
//! race waits for `CALLED` without giving up. The root's output buffer, which the last pair of the
//! dynamic algorithms writes, is offered the same way through `out_offer`.

use crate::primitive::{AtomicU64, AtomicUsize, Ordering};
use crate::wait::Signal;

pub(crate) const OFFERED: u64 = 0;
pub(crate) const TAKEN: u64 = 1;
pub(crate) const CALLED: u64 = 2;
pub(crate) const WITHDRAWN: u64 = 3;

/// The offer word's value for call `episode` in `state`. Tags of different calls never collide,
/// so no reset is needed between calls.
pub(crate) fn tag(episode: u64, state: u64) -> u64 {
    ((episode + 1) << 2) | state
}

/// A length no call can have: marks data that is not to be combined because the call already
/// went wrong (lengths or operations differ).
pub(crate) const POISONED: usize = usize::MAX;

/// The call's kind, as published in [`Slot::kind`].
pub(crate) const KIND_REDUCE: usize = 1;
pub(crate) const KIND_ALLREDUCE: usize = 2;

pub(crate) struct Slot {
    /// The participant's accumulated data: its input, or after it mastered a pair, the buffer it
    /// accumulated into.
    pub(crate) acc: AtomicUsize,
    /// The call's length, or [`POISONED`].
    pub(crate) len: AtomicUsize,
    /// `KIND_REDUCE` or `KIND_ALLREDUCE`.
    pub(crate) kind: AtomicUsize,
    pub(crate) offer: Signal,
    /// Set by the master before it publishes `CALLED`: whose job slot to help, and which job.
    pub(crate) master: AtomicUsize,
    pub(crate) job: AtomicU64,
    /// The participant's output buffer (null when it has none in this call).
    pub(crate) out: AtomicUsize,
    pub(crate) out_offer: Signal,
    /// When the participant arrived: nanoseconds since the group's origin in the low 48 bits,
    /// the call's number (mod 2^16) above, so a reader can tell a stale stamp.
    pub(crate) arrived_at: AtomicU64,
}

impl Slot {
    pub(crate) fn new() -> Self {
        Slot {
            acc: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            kind: AtomicUsize::new(0),
            offer: Signal::new(0),
            master: AtomicUsize::new(0),
            job: AtomicU64::new(0),
            out: AtomicUsize::new(0),
            out_offer: Signal::new(0),
            arrived_at: AtomicU64::new(0),
        }
    }

    /// Publishes this participant's data for a call (before any offer makes it visible).
    pub(crate) fn publish_data(&self, acc: usize, len: usize, kind: usize, out: usize) {
        self.acc.store(acc, Ordering::Relaxed);
        self.len.store(len, Ordering::Relaxed);
        self.kind.store(kind, Ordering::Relaxed);
        self.out.store(out, Ordering::Relaxed);
    }
}
