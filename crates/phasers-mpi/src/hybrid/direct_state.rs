//! What the direct allreduce (`direct.rs`) keeps: per process, the members' posts, the
//! arrival counts, the call's phase, the result buffers, the exchange's scratch buffer and the
//! reduction groups; per member, its handles in those groups. And whether a team takes the
//! direct path at all.

use std::any::{Any, TypeId};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize};
use std::sync::Mutex;

use super::arrivals::{phase_word, Arrivals, Meeting, FAILED};
use super::bytes::Bytes;
use super::layout::Layout;
use super::options::Options;
use super::reducer::Builtin;
use super::signature::Signature;
use crate::error::Error;
use crate::sync::atomic::{AtomicU64, Ordering};

/// Whether a team with `layout` and agreed `options` takes the direct path: no timeout anywhere
/// (`Options::direct`), one node's processes (no node hierarchy), and at most
/// [`phasers::reduce::MAX_PARTIES`] members in every process. The same on every process.
pub(crate) fn allowed(layout: &Layout, options: &Options) -> bool {
    options.direct
        && layout.hierarchy.is_none()
        && layout
            .counts
            .iter()
            .all(|&c| c <= phasers::reduce::MAX_PARTIES)
}

/// A value alone in its cache lines (two, for the adjacent-line prefetcher), so that members
/// writing their own do not slow each other.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Padded<T>(pub(super) T);

/// A member's post for its current direct call.
#[derive(Clone, Copy)]
pub(super) struct Posted {
    pub(super) sig: Signature,
    pub(super) input: *const u8,
    /// The length of the member's output, which must be the input's, where it takes the
    /// result (`None` for a reduce's other members).
    pub(super) output_len: Option<usize>,
}

/// A process's reduction group for an element type and op: a `Reduction<T>`.
pub(super) type Group = (TypeId, Builtin, Box<dyn Any + Send + Sync>);

/// What the members of one process share for direct calls.
pub(crate) struct DirectShared {
    /// Each member's post, by local rank.
    pub(super) posts: Box<[Padded<UnsafeCell<Option<Posted>>>]>,
    /// Arrivals at calls (see `arrivals.rs`).
    pub(super) arrived: Arrivals,
    /// The phase word of the latest call that reached a phase (see `arrivals.rs`).
    pub(super) state: Padded<StateLine>,
    /// The error of a call in `FAILED`, for every member to take.
    pub(super) failure: Mutex<Option<Error>>,
    /// The process's result of call `k` is in `results[k % 2]` (see the module docs).
    pub(super) results: [Exclusive<Vec<u64>>; 2],
    /// The partner's data in the exchange between processes, used by one member at a time (the
    /// one that runs the call's exchange, once every member arrived).
    pub(super) scratch: Exclusive<Vec<u64>>,
    /// A large allreduce across processes: the leader's output, which holds the result once
    /// the call is `DONE`, and how many other members have copied it (the leader waits for all
    /// before it returns).
    pub(super) source: AtomicPtr<u8>,
    pub(super) copied: Padded<AtomicUsize>,
    /// One reduction group per element type and op, made by the first member that needs it.
    pub(super) groups: Mutex<Vec<Group>>,
    /// A checked call's envelope record and receive buffer (`direct_checked.rs`), used by one
    /// member at a time: the one that completes the call's meeting, before it publishes the
    /// call's phase, which every member must see before the next call's meeting completes.
    pub(super) envelope: Exclusive<(Bytes, Bytes)>,
    /// Whether the latest checked call's data follows through the engine's stages (some process
    /// called through the engine): written before the call's phase is published, read after.
    pub(super) engine_stages: AtomicBool,
}

/// Words of a small result that travel in the phase's own cache line.
pub(super) const INLINE_WORDS: usize = 7;

/// The phase word and, beside it in one cache line, a small call's result: a member that sees
/// the phase has the result in the same line. Measured with 1 process x 2 threads, one `u64`,
/// best of 15 rounds of 100 000 calls, four runs each on the 2-core Xeon VM: 275-296 ns a call
/// with the result in this line, 303-324 ns with it in the result buffer.
#[derive(Default)]
#[repr(C)]
pub(super) struct StateLine {
    /// `8 * k + phase` for the latest call `k` that reached a phase (`DONE`, ...).
    pub(super) phase: AtomicU64,
    /// The result of the latest call when it fits, written like `DirectShared::results` (see
    /// `direct.rs`).
    pub(super) inline: UnsafeCell<[u64; INLINE_WORDS]>,
}

/// A buffer that one member at a time uses, as the module docs and each use explain.
#[derive(Default)]
pub(super) struct Exclusive<T>(pub(super) UnsafeCell<T>);

// SAFETY: a post is written by its own member before it counts itself in, and read only by the
// member whose arrival completes the call, which happens after; the member writes it again
// only after the call's result was published, when no one reads it any more.
unsafe impl Sync for DirectShared {}
// SAFETY: the pointers in the posts are read only during the call that posted them (above);
// everything else is `Send`.
unsafe impl Send for DirectShared {}

impl DirectShared {
    pub(crate) fn new(local: usize) -> DirectShared {
        DirectShared {
            posts: (0..local).map(|_| Padded::default()).collect(),
            arrived: Default::default(),
            state: Padded::default(),
            failure: Mutex::new(None),
            results: Default::default(),
            scratch: Exclusive::default(),
            source: AtomicPtr::new(std::ptr::null_mut()),
            copied: Padded::default(),
            groups: Mutex::new(Vec::new()),
            envelope: Exclusive::default(),
            engine_stages: AtomicBool::new(false),
        }
    }
}

impl DirectShared {
    /// Counts a member in at call `call` with `weight` (see `arrivals.rs`).
    pub(crate) fn count_in(&self, call: u64, weight: u64, local: usize) -> Meeting {
        self.arrived
            .count_in(call, weight, local, &self.state.0.phase)
    }

    /// Publishes call `call`'s `phase`; returns it.
    pub(super) fn publish(&self, call: u64, phase: u64) -> u64 {
        self.state
            .0
            .phase
            .store(phase_word(call, phase), Ordering::Release);
        phase
    }

    /// Stores `error` for every member of call `call` and publishes `FAILED`; returns it.
    pub(super) fn fail(&self, call: u64, error: Error) -> u64 {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        self.publish(call, FAILED)
    }

    /// The error of a call that reached `FAILED`, if one was stored.
    pub(super) fn failure(&self) -> Option<Error> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The words that hold call `call`'s result of `bytes` bytes, for its one writer: the
    /// phase's cache line where they fit, else `results[call % 2]`, grown if needed.
    ///
    /// # Safety
    ///
    /// Only the member that completes call `call`'s meeting (or the leader of a large call, or
    /// the only member) may call this, once every member has arrived at the call: every member
    /// has then finished reading call `call - 2`'s result (and the line's, the last call's),
    /// and none reads this one before its phase is published.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn result_words(&self, call: u64, bytes: usize) -> &mut [u64] {
        if bytes <= INLINE_WORDS * 8 {
            // SAFETY: the caller is the line's one writer now (see above).
            return unsafe { &mut *self.state.0.inline.get() };
        }
        // SAFETY: as above, for the buffer of calls with this call's parity.
        let buffer = unsafe { &mut *self.results[(call % 2) as usize].0.get() };
        let needed = bytes.div_ceil(8);
        if buffer.len() < needed {
            buffer.resize(needed, 0);
        }
        buffer
    }

    /// The words that hold call `call`'s published result of `bytes` bytes, for its readers.
    ///
    /// # Safety
    ///
    /// Call `call`'s phase must have been published (`DONE`), and the caller must not have
    /// arrived at call `call + 1`: no one writes these words again before then.
    pub(super) unsafe fn published_words(&self, call: u64, bytes: usize) -> &[u64] {
        if bytes <= INLINE_WORDS * 8 {
            // SAFETY: see above.
            return unsafe { &*self.state.0.inline.get() };
        }
        // SAFETY: see above.
        unsafe { &*self.results[(call % 2) as usize].0.get() }
    }
}

/// A member's handles in the process's reduction groups.
#[derive(Default)]
pub(crate) struct DirectMember {
    pub(super) reducers: Vec<(TypeId, Builtin, Box<dyn Any + Send>)>,
    /// The call this member sent on to the engine after counting in on the direct path
    /// ([`REPOST`]): the engine must not count it in again.
    pub(super) reposted: Option<u64>,
}
