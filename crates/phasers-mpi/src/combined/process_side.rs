//! What the threads of one rank share in a combined barrier: the process step that the leader of
//! each local episode runs, and the record of a failed step that it leaves for the others.
//!
//! The threads meet in a [`phasers::Barrier`] whose completion action is [`ProcessSide`]'s step:
//! the thread that completes a local gather runs the step across ranks before the local barrier
//! releases anyone. When the step fails (a timeout, another rank's failure), the leader writes the
//! error and the local episode into the [`FailureRecord`], still inside the completion action; each
//! thread, once released, compares the record's episode with its own and returns the error
//! instead of success. Nothing here waits on its own: a thread that panics or is dropped breaks
//! the local barrier, whose waits return `Broken` naming it, and a thread is released only through
//! the local barrier, so the record needs no ordering of its own (see [`FailureRecord`]).
//!
//! The step is a [`LeaderStep`], so that `tests/loom_combined_failure.rs` runs this code with a
//! stub in place of MPI; the barrier's is a `ProcessBarrier`.

use std::cell::Cell;
use std::time::Instant;

use phasers::{BarrierBuilder, Participant};

use crate::error::{Error, Result};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{const_thread_local, Arc, Mutex};

use super::outcome::CombinedWait;

/// [`FailureRecord::local_episode`] before any process step failed.
const NONE_FAILED: u64 = u64::MAX;

const_thread_local! {
    /// The deadline of the wait this thread is in. The completion action runs on the leader's own
    /// thread, inside its wait, so this is how the leader's deadline reaches the process step.
    /// (Through the sync shim: under loom every loom thread needs its own.)
    static LEADER_DEADLINE: Cell<Option<Instant>> = Cell::new(None);
}

/// The step across ranks that the leader of each local episode runs.
pub trait LeaderStep: Send + 'static {
    /// Meets the other ranks, giving up at `deadline`. An error is returned to every thread of
    /// the rank, for this local episode.
    fn step(&mut self, deadline: Option<Instant>) -> Result<()>;
}

/// What only the leader of an episode touches. It moves to the leader's cache with the
/// leadership, and shares no cache line with what the other threads read.
///
/// 128 bytes: two 64-byte lines, because x86's adjacent-line prefetcher pulls lines in pairs
/// (the padding crossbeam's `CachePadded` uses there too).
#[repr(align(128))]
struct LeaderState<S> {
    step: S,
    /// Local episodes whose completion has run: the number of the one running now.
    local_episodes: u64,
}

/// The outcome of a failed process step. Written only when a step fails, so that in the steady
/// state every thread's check after the release reads a line its cache already holds, instead of
/// fetching a word the leader wrote during the episode.
///
/// Its episode is Relaxed: the leader writes the record inside the completion action, before the
/// local barrier releases anyone, and a thread reads it after its release, so the local barrier's
/// own release and acquire order the two. The next failure is written in a later completion,
/// which needs every thread's next arrival, so it cannot overwrite the record before each thread
/// has read it.
#[repr(align(128))]
struct FailureRecord {
    /// The local episode whose process step failed last, or [`NONE_FAILED`].
    local_episode: AtomicU64,
    /// Why it failed.
    why: Mutex<Option<Error>>,
}

/// The process step of one rank's threads and the record of its failures; shared by the local
/// barrier's completion action and every [`Seat`].
pub struct ProcessSide<S> {
    leader: Mutex<LeaderState<S>>,
    failure: FailureRecord,
}

impl<S: LeaderStep> ProcessSide<S> {
    /// A side whose leaders run `step`.
    pub fn new(step: S) -> Arc<ProcessSide<S>> {
        Arc::new(ProcessSide {
            leader: Mutex::new(LeaderState {
                step,
                local_episodes: 0,
            }),
            failure: FailureRecord {
                local_episode: AtomicU64::new(NONE_FAILED),
                why: Mutex::new(None),
            },
        })
    }

    /// `local` with `side`'s step as its completion action: every local episode's leader runs the
    /// step before the local barrier releases its threads. Without it (a rank alone in its
    /// communicator) the step never runs and no wait ever fails through the record.
    pub fn lead(side: &Arc<ProcessSide<S>>, local: BarrierBuilder) -> BarrierBuilder {
        let side = Arc::clone(side);
        local.on_completion(move || side.step())
    }

    /// The completion action: the leader's process step.
    fn step(&self) {
        let deadline = LEADER_DEADLINE.with(Cell::get);
        // The local barrier runs one completion at a time, so the lock is never contended.
        let mut leader = self.leader.lock().unwrap_or_else(|e| e.into_inner());
        let local_episode = leader.local_episodes;
        leader.local_episodes += 1;
        if let Err(error) = leader.step.step(deadline) {
            *self.failure.why.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
            // Relaxed: the local release orders it (see `FailureRecord`).
            self.failure
                .local_episode
                .store(local_episode, Ordering::Relaxed);
        }
    }
}

/// One thread's place: its local participant and the side its leaders share.
pub struct Seat<S> {
    local: Participant,
    side: Arc<ProcessSide<S>>,
    /// Local episodes whose process step failed: the process episode is the local one minus
    /// these, since a failed step leaves its process episode to the next local one.
    failures_seen: u64,
}

impl<S> Seat<S> {
    /// The seat of `local`, a participant of a barrier built with [`ProcessSide::lead`] for `side`
    /// (or without a completion action, when the rank is alone).
    pub fn new(local: Participant, side: Arc<ProcessSide<S>>) -> Seat<S> {
        Seat {
            local,
            side,
            failures_seen: 0,
        }
    }

    /// This thread's rank among the threads of its process.
    pub fn thread_rank(&self) -> usize {
        self.local.rank()
    }

    /// Waits until every thread of every rank has arrived, or `deadline`: the local gather, the
    /// leader's step, then this thread's look at the failure record.
    ///
    /// # Errors
    ///
    /// [`Error::Core`] from the local barrier (a thread of this rank panicked or was dropped, or
    /// the deadline passed before the local gather); the step's error, for every thread of the
    /// rank, when the leader's step failed.
    pub fn wait_until(&mut self, deadline: Option<Instant>) -> Result<CombinedWait> {
        LEADER_DEADLINE.with(|d| d.set(deadline));
        let local = match deadline {
            None => self.local.wait(),
            Some(deadline) => self.local.wait_deadline(deadline),
        }?;
        // Written by a failing leader before the local release, which this thread has seen; the
        // next failure cannot overwrite it before this thread arrives again.
        let failure = &self.side.failure;
        if failure.local_episode.load(Ordering::Relaxed) == local.episode() {
            self.failures_seen += 1;
            let why = failure.why.lock().unwrap_or_else(|e| e.into_inner());
            return Err(why.clone().unwrap_or_else(|| Error::Broken {
                what: "combined barrier",
                reason: "the process step failed without saying why".to_owned(),
            }));
        }
        Ok(CombinedWait::new(
            local.episode() - self.failures_seen,
            local.is_leader(),
        ))
    }
}
