//! What the members of one process share: the layout, the options, the broken flag and the two
//! call slots; and how every process of a team builds it together.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use super::bytes::Bytes;
use super::direct_state::{self, DirectShared};
use super::envelope;
use super::flight::Flight;
use super::layout::Layout;
use super::options::Options;
use super::signature::Kind;
use super::signature::Post;
use super::spare::Spare;
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::node::NodeShape;
use crate::progress::WaitFor;

/// A slot's state, read without its lock by polling members.
pub(crate) const GATHERING: u8 = 0;
/// The local part is done; the cross-process step runs.
pub(crate) const IN_FLIGHT: u8 = 1;
/// The outcome is ready; members copy their outputs and depart.
pub(crate) const DONE: u8 = 2;

/// What a finished call leaves for its members.
pub(crate) struct Outcome {
    /// The call's result bytes (see `plan` for what each collective leaves here).
    pub(crate) data: Bytes,
    /// For a split: this process's new teams, by color.
    pub(crate) split: Vec<(u32, Arc<ProcessShared>)>,
}

/// One call's state in shared memory.
pub(crate) struct SlotInner {
    /// Each local member's post, by local rank.
    pub(crate) posts: Vec<Option<Post>>,
    pub(crate) arrived: usize,
    pub(crate) departed: usize,
    pub(crate) flight: Option<Flight>,
    pub(crate) outcome: Option<Result<Arc<Outcome>>>,
    /// What the slot's calls reuse (see `spare.rs`).
    pub(crate) spare: Spare,
    /// The last call's outcome, once no member holds it any more, for the next call to reuse.
    pub(crate) kept_outcome: Option<Arc<Outcome>>,
}

/// Calls alternate between two slots (call `k` uses slot `k % 2`), so a member can start the
/// next call while the others still copy their outputs from the last one.
pub(crate) struct Slot {
    /// The call number the slot accepts: `k` once every member departed from call `k - 2`.
    pub(crate) open_for: AtomicU64,
    pub(crate) state: AtomicU8,
    pub(crate) inner: Mutex<SlotInner>,
}

/// Shared by the members of one process (one per team and process).
pub(crate) struct ProcessShared {
    /// Dropped by hand: see `Drop for ProcessShared`.
    pub(crate) layout: ManuallyDrop<Layout>,
    /// Members in this process.
    pub(crate) local: usize,
    pub(crate) options: Options,
    /// Whether the node's threads outnumber its cores (poll briefly, then sleep).
    pub(crate) oversubscribed: bool,
    pub(crate) slots: [Slot; 2],
    broken: AtomicBool,
    reason: Mutex<String>,
    /// The call whose timeout broke the team (`u64::MAX`: none), so every member waiting for
    /// that call reports the timeout, not only the first to notice it.
    pub(crate) timed_out: AtomicU64,
    /// Whether `HybridTeam::members` has handed out the members.
    pub(crate) handed_out: AtomicBool,
    /// Whether blocking allreduces with a built-in op take the direct path (`direct.rs`): the
    /// same on every process, from the agreed options and layout.
    pub(crate) direct_ok: bool,
    /// What the direct path's members share in this process.
    pub(crate) direct: DirectShared,
}

/// Collective over `channel`: the layout, node shape and slots of a team with `local` members
/// here.
pub(crate) fn build_shared(
    channel: Channel,
    local: usize,
    options: Options,
) -> Result<Arc<ProcessShared>> {
    // Checked calls and splits merge envelopes with an MPI operation of ours: make it now, so
    // no call waits for it.
    envelope::reduction();
    let mut options = options;
    let node = NodeShape::of(&channel);
    let layout = Layout::new(channel, local, &mut options)?;
    Ok(ProcessShared::new(
        layout,
        local,
        options,
        node.oversubscribed(local),
    ))
}

impl ProcessShared {
    /// What a wait of this process's call `call` of `kind` reports when it stalls or times out;
    /// `oversubscribed` waits yield early instead of spinning through the full poll budget.
    pub(crate) fn wait_for<'a>(
        &self,
        kind: Kind,
        call: u64,
        oversubscribed: bool,
        missing: &'a dyn Fn() -> String,
    ) -> WaitFor<'a> {
        WaitFor {
            what: kind.name(),
            episode: call,
            rank: self.process(),
            oversubscribed,
            missing,
        }
    }

    pub(crate) fn new(
        layout: Layout,
        local: usize,
        options: Options,
        oversubscribed: bool,
    ) -> Arc<ProcessShared> {
        let slot = |k: u64| Slot {
            open_for: AtomicU64::new(k),
            state: AtomicU8::new(GATHERING),
            inner: Mutex::new(SlotInner {
                posts: (0..local).map(|_| None).collect(),
                arrived: 0,
                departed: 0,
                flight: None,
                outcome: None,
                spare: Spare::default(),
                kept_outcome: None,
            }),
        };
        Arc::new(ProcessShared {
            local,
            options,
            oversubscribed,
            slots: [slot(0), slot(1)],
            broken: AtomicBool::new(false),
            timed_out: AtomicU64::new(u64::MAX),
            reason: Mutex::new(String::new()),
            handed_out: AtomicBool::new(false),
            direct_ok: direct_state::allowed(&layout, &options),
            direct: DirectShared::new(local),
            layout: ManuallyDrop::new(layout),
        })
    }

    /// This process's rank in the team's communicator.
    pub(crate) fn process(&self) -> usize {
        self.layout.process()
    }

    /// Global rank of this process's local member 0.
    pub(crate) fn first_rank(&self) -> usize {
        self.layout.first_rank()
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// Marks the team broken in this process; the first reason is kept.
    pub(crate) fn mark_broken(&self, reason: impl FnOnce() -> String) {
        let mut kept = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if !self.broken.load(Ordering::Relaxed) {
            *kept = reason();
            self.broken.store(true, Ordering::Release);
        }
    }

    pub(crate) fn broken_error(&self) -> Error {
        Error::Broken {
            what: "hybrid team",
            reason: self
                .reason
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

impl Drop for ProcessShared {
    fn drop(&mut self) {
        let abandoned = self.slots.iter().any(|slot| {
            slot.lock()
                .flight
                .as_ref()
                .is_some_and(|flight| flight.is_active())
        });
        if abandoned {
            // A call given up mid-flight (a timeout) still has an MPI collective outstanding on
            // the team's communicators; freeing them under it crashes Open MPI when the other
            // processes arrive. Like the flight's buffers, they are left to MPI.
            return;
        }
        // SAFETY: this is the team's drop; `layout` is never used again.
        unsafe { ManuallyDrop::drop(&mut self.layout) };
    }
}

impl Slot {
    /// Locks the slot; a panic elsewhere never leaves it inconsistent for our use (the broken
    /// flag tells members to stop).
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, SlotInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The slot's lock where no other member holds it now (a poisoned lock still guards the
    /// slot's data, as [`lock`](Self::lock) takes it).
    pub(crate) fn try_lock(&self) -> Option<std::sync::MutexGuard<'_, SlotInner>> {
        match self.inner.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}
