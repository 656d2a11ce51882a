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

use super::signature::Signature;
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

/// What a participant publishes for a call. `repr(C)` keeps what a master reads to take the data
/// (the pointer, the signature and the offer word) in the first cache line, and the output, which
/// only the linear algorithm and the dynamic algorithms' last pair read, in the second.
#[repr(C)]
pub(crate) struct Slot {
    /// The participant's accumulated data: its input, or after it mastered a pair, the buffer it
    /// accumulated into.
    pub(crate) acc: AtomicUsize,
    /// How many elements `acc` holds (see [`Signature`]).
    pub(crate) len: AtomicUsize,
    /// The call's kind, with [`POISONED`](super::signature::POISONED) once `acc` must not be
    /// combined (see [`Signature::kind_word`]).
    pub(crate) kind: AtomicUsize,
    pub(crate) offer: Signal,
    /// Set by the master before it publishes `CALLED`: whose job slot to help, and which job.
    pub(crate) master: AtomicUsize,
    pub(crate) job: AtomicU64,
    /// When the participant arrived: nanoseconds since the group's origin in the low 48 bits,
    /// the call's number (mod 2^16) above, so a reader can tell a stale stamp.
    pub(crate) arrived_at: AtomicU64,
    /// The participant's output buffer (null when it has none in this call), and its length.
    pub(crate) out: AtomicUsize,
    pub(crate) out_len: AtomicUsize,
    pub(crate) out_offer: Signal,
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
            arrived_at: AtomicU64::new(0),
            out: AtomicUsize::new(0),
            out_len: AtomicUsize::new(0),
            out_offer: Signal::new(0),
        }
    }

    /// Publishes this participant's data for a call (before any offer makes it visible): its
    /// input and signature, and its output of `out_len` elements (null when it has none).
    pub(crate) fn publish_data(
        &self,
        acc: usize,
        signature: Signature,
        out: usize,
        out_len: usize,
    ) {
        self.publish_acc(acc, signature);
        self.out.store(out, Ordering::Relaxed);
        self.out_len.store(out_len, Ordering::Relaxed);
    }

    /// Publishes the data this participant offers next: `acc`, described by `signature`.
    pub(crate) fn publish_acc(&self, acc: usize, signature: Signature) {
        self.acc.store(acc, Ordering::Relaxed);
        self.len.store(signature.len, Ordering::Relaxed);
        self.kind.store(signature.kind_word(), Ordering::Relaxed);
    }

    /// Whose job slot to help, and which job: read by a slave once its offer is `CALLED`.
    pub(crate) fn master_and_job(&self) -> (usize, u64) {
        (
            self.master.load(Ordering::Relaxed),
            self.job.load(Ordering::Relaxed),
        )
    }

    /// The signature of the data this participant offers. Read after the `Acquire` that made its
    /// offer (or the meeting) visible.
    pub(crate) fn signature(&self) -> Signature {
        Signature::from_words(
            self.kind.load(Ordering::Relaxed),
            self.len.load(Ordering::Relaxed),
        )
    }
}
