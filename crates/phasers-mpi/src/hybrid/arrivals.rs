//! Where the members of a process count in at a direct call (`direct.rs`, `direct_sync.rs`),
//! and the phase word the call's last arrival publishes.
//!
//! Members that called differently may take different paths: a blocking `allreduce` takes the
//! direct path, an `iallreduce` (or a gather, or a custom op) the engine's. Both count in here,
//! with different weights, so that the count completes whichever paths its members took; the
//! member that completes it learns which:
//!
//! | arrivals | the completing member |
//! |---|---|
//! | all on the direct path | runs the direct call ([`Meeting::AllDirect`]) |
//! | all on the engine's | does nothing more here; the engine completes its own count ([`Meeting::AllEngine`]) |
//! | some on each | publishes [`REPOST`]: the direct path's members post their call to the engine too, where every call is compared ([`Meeting::Mixed`]) |
//!
//! No member counts in at call `k + 2` before every member arrived at call `k + 1`, which the
//! completing member of call `k` does only after resetting the count: so the two counters, one
//! per call parity, are reset before their next use. `tests/loom_direct_meeting.rs` explores this
//! protocol with loom.

use crate::sync::atomic::{AtomicU64, Ordering};

/// What the phase word says of a call `k`: `8 * k + phase`, with one of these phases.
/// The result is in the result buffers (or the state line).
pub const DONE: u64 = 1;
/// The call failed: every member takes `DirectShared::failure`.
pub const FAILED: u64 = 2;
/// The call is large: the members hand it to the reduction group (`direct.rs`).
pub const LARGE: u64 = 3;
/// Some members called through the engine: the direct path's members post their call to the
/// engine too, where the call completes (or fails, naming what differs).
pub const REPOST: u64 = 4;

/// The phase word of call `call` at `phase`.
pub fn phase_word(call: u64, phase: u64) -> u64 {
    8 * call + phase
}

/// What a member's arrival adds to the count when it comes through the engine
/// (`engine::arrive`); one on the direct path adds 1. A process has at most
/// [`MAX_THREADS_PER_PROCESS`](super::MAX_THREADS_PER_PROCESS) members, far below 2^32.
pub const ENGINE_ARRIVAL: u64 = 1 << 32;

/// Who has arrived at a call, once a member counted in (see [`Arrivals::count_in`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meeting {
    /// Some members have not arrived yet.
    Waiting,
    /// This member completed the call's meeting, and every member is on the direct path.
    AllDirect,
    /// This member completed it, every member is on the engine's path: the engine goes on.
    AllEngine,
    /// This member completed it, with members on both paths: [`REPOST`] is published.
    Mixed,
}

/// A counter alone in its cache lines (two, for the adjacent-line prefetcher), so that counting
/// in at one call parity does not slow waiters reading the other.
#[repr(align(128))]
#[derive(Default)]
struct Counter(AtomicU64);

/// The arrival counts of a process's calls, one per call parity.
#[derive(Default)]
pub struct Arrivals {
    counts: [Counter; 2],
}

impl Arrivals {
    /// Counts a member in at call `call` with `weight` (1, or [`ENGINE_ARRIVAL`]) among `local`
    /// members; the member that completes a mixed count publishes [`REPOST`] in `phase`.
    pub fn count_in(&self, call: u64, weight: u64, local: usize, phase: &AtomicU64) -> Meeting {
        let count = &self.counts[(call % 2) as usize].0;
        // AcqRel: the completing member sees every other member's post, written before it
        // counted in; the others see nothing from it here (they wait for the phase word).
        let now = count.fetch_add(weight, Ordering::AcqRel) + weight;
        let (direct, engine) = (now & (ENGINE_ARRIVAL - 1), now / ENGINE_ARRIVAL);
        if direct + engine < local as u64 {
            return Meeting::Waiting;
        }
        // Every member arrived: none counts in here again before call `call + 2` (see the
        // module docs), so a relaxed store is enough.
        count.store(0, Ordering::Relaxed);
        match (direct, engine) {
            (_, 0) => Meeting::AllDirect,
            (0, _) => Meeting::AllEngine,
            _ => {
                phase.store(phase_word(call, REPOST), Ordering::Release);
                Meeting::Mixed
            }
        }
    }
}
