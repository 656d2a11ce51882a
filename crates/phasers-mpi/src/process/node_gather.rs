//! The node-shm barrier's meeting in shared memory, without MPI: the counters' protocol that
//! `node_shm.rs` runs on a mapped file and `tests/loom_node_shm.rs` runs on loom atomics.
//!
//! The node has one release counter and one counter per rank. In episode `e` every rank stores
//! `e + 1` into its own counter. With more than one node, the leader (node rank 0) waits until
//! every counter of its node reads at least `e + 1`, takes the network step, then stores `e + 1`
//! into the release counter, which the others wait for. With one node there is no network step,
//! and every rank waits for every counter itself: the last arrival frees everyone at once, without
//! a release passing through the leader (one cache-line transfer on the critical path instead of
//! two, and, when ranks outnumber cores, no wait for the leader to be scheduled). Counters only
//! grow, so no sense has to be reversed and a rank that races ahead into the next episode cannot
//! be mistaken for one still in this one.

use crate::sync::atomic::{AtomicU64, Ordering};

/// The release counter's index; node rank `i` owns counter `1 + i`.
const RELEASE: usize = 0;

/// The counters of one node: index 0 is the release counter, `1 + i` node rank `i`'s. Every rank
/// of the node must see the same counters, all 0 at the start.
///
/// The barrier's counters are `std` atomics in a file every rank maps (`NodeCounters`); the loom
/// models use a slice of loom atomics, which is why the protocol is generic over them.
pub trait NodeSlots {
    /// Loads counter `index`.
    fn load(&self, index: usize, order: Ordering) -> u64;
    /// Stores `value` into counter `index`.
    fn store(&self, index: usize, value: u64, order: Ordering);
}

impl NodeSlots for [AtomicU64] {
    fn load(&self, index: usize, order: Ordering) -> u64 {
        self[index].load(order)
    }

    fn store(&self, index: usize, value: u64, order: Ordering) {
        self[index].store(value, order);
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    /// The episode has not started on this rank.
    Arrive,
    /// The leader (or, on the only node, every rank) waits for the node's ranks, from node rank
    /// `next` on.
    Gather { next: usize },
    /// The leader takes the network step.
    Network,
    /// A rank other than the leader waits for the release.
    AwaitRelease,
}

/// One rank's side of the meeting: where it is in its current episode.
#[derive(Debug)]
pub struct NodeGather {
    /// This rank in its node.
    local: usize,
    /// Ranks in the node.
    ranks: usize,
    /// Whether this is the only node: no network step, every rank gathers.
    only_node: bool,
    /// Episodes this rank has completed.
    episode: u64,
    stage: Stage,
}

impl NodeGather {
    /// Node rank `local` of a node of `ranks`, before its first episode. On the only node
    /// (`only_node`) every rank gathers and nobody takes a network step.
    pub fn new(local: usize, ranks: usize, only_node: bool) -> NodeGather {
        assert!(local < ranks, "node rank {local} of {ranks}");
        NodeGather {
            local,
            ranks,
            only_node,
            episode: 0,
            stage: Stage::Arrive,
        }
    }

    /// Episodes this rank has completed.
    #[cfg(any(test, phasers_loom))]
    pub fn episode(&self) -> u64 {
        self.episode
    }

    fn leader(&self) -> bool {
        self.local == 0
    }

    /// Whether the leader is in the network step (its node has gathered).
    pub fn in_network(&self) -> bool {
        self.stage == Stage::Network
    }

    /// Advances this rank's episode as far as it can without waiting; `true` when the episode is
    /// complete. Only the leader of a node that is not the only one calls `network`, after the
    /// node has gathered, until it returns `true` (the other nodes' leaders have met).
    pub fn poll<S: NodeSlots + ?Sized>(
        &mut self,
        slots: &S,
        mut network: impl FnMut() -> bool,
    ) -> bool {
        let target = self.episode + 1;
        loop {
            match self.stage {
                Stage::Arrive => {
                    // Release: what this rank wrote before the barrier is visible to whoever
                    // reads its arrival with Acquire (the leader), and through the leader's
                    // release to every other rank.
                    slots.store(1 + self.local, target, Ordering::Release);
                    self.stage = if self.only_node || self.leader() {
                        Stage::Gather { next: 0 }
                    } else {
                        Stage::AwaitRelease
                    };
                }
                Stage::Gather { next } => {
                    // Ranks found arrived stay arrived (counters only grow): resume at the first
                    // one still missing.
                    if let Some(late) = (next..self.ranks).find(|&i| !arrived(slots, i, target)) {
                        self.stage = Stage::Gather { next: late };
                        return false;
                    }
                    if self.only_node {
                        break;
                    }
                    self.stage = Stage::Network;
                }
                Stage::Network => {
                    if !network() {
                        return false;
                    }
                    slots.store(RELEASE, target, Ordering::Release);
                    break;
                }
                Stage::AwaitRelease => {
                    if slots.load(RELEASE, Ordering::Acquire) < target {
                        return false;
                    }
                    break;
                }
            }
        }
        self.episode = target;
        self.stage = Stage::Arrive;
        true
    }

    /// The node ranks this rank's current episode waits for: the others that have not arrived,
    /// or, once all have, the leader (in the network step, or releasing) for a rank that awaits
    /// the release. Empty for the leader in the network step: the network names whom it waits for.
    pub fn missing<S: NodeSlots + ?Sized>(&self, slots: &S) -> Vec<usize> {
        let target = self.episode + 1;
        let missing: Vec<usize> = (0..self.ranks)
            .filter(|&i| i != self.local && !arrived(slots, i, target))
            .collect();
        if missing.is_empty() && !self.leader() && !self.only_node {
            return vec![0];
        }
        missing
    }
}

/// Whether node rank `rank` has arrived at the episode that completes at `target`. Acquire: the
/// rank's writes before it arrived are visible to whoever sees it arrived.
fn arrived<S: NodeSlots + ?Sized>(slots: &S, rank: usize, target: u64) -> bool {
    slots.load(1 + rank, Ordering::Acquire) >= target
}
