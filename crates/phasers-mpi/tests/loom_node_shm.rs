//! Loom models of the node-shm barrier's counters (`src/process/node_gather.rs`, the protocol
//! `node_shm.rs` runs on a file every rank of a node maps): 2 or 3 ranks of one node, each on its
//! own loom thread, polling the real `NodeGather` over loom atomics through several episodes.
//!
//! - **The only node**: every rank gathers itself; the last arrival frees everyone.
//! - **One node of several**: the leader (node rank 0) gathers, takes the network step, then
//!   releases. The network step is a stub that is still in flight at its first poll (so the
//!   leader resumes the step, as it does while MPI messages travel) and done at its second.
//!
//! Each checks the barrier invariant with visibility (see `loom_support`): nobody leaves episode
//! `k` before every rank arrived at `k`, and every rank's writes before arriving are visible. With
//! a network step also: the leader starts it only once the whole node has arrived, takes it once
//! per episode, and nobody is released before it is done (a non-atomic count the leader bumps
//! there, read by every rank after its release). Counters only grow, so a rank that races ahead
//! into the next episode stores into its counter while slower ones still read it: the episodes
//! after the first explore exactly that.
//!
//! Run with `scripts/loom.sh` (or `scripts/loom.sh loom_node_shm`).
#![cfg(phasers_loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicU64;
use loom::sync::Arc;
use loom::thread;
use loom_support::{model_bounded, Ledger};
use phasers_mpi::loom_api::NodeGather;

/// One node's shared memory, and what the model records about it.
struct Node {
    /// The release counter, then one counter per rank, as the mapped file holds them.
    counters: Box<[AtomicU64]>,
    ledger: Ledger,
    /// Network steps the leader has completed; written only by the leader.
    networks: UnsafeCell<u64>,
}

// SAFETY: `networks` is a loom cell: loom's race checker fails the model on any access to it that
// is not ordered by happens-before, which is what the model checks. The rest is Sync already.
unsafe impl Sync for Node {}

impl Node {
    fn networks(&self) -> u64 {
        // SAFETY: loom checks the access against the leader's writes.
        self.networks.with(|count| unsafe { *count })
    }

    /// The stub of the leader's network step for `episode`: checks that the node has gathered,
    /// and completes at its second poll.
    fn network_step(&self, rank: usize, episode: u64, polls: &mut u32) -> bool {
        assert_eq!(rank, 0, "only the node's leader takes the network step");
        self.ledger.assert_all_arrived(rank, episode);
        *polls += 1;
        if *polls == 1 {
            // The other nodes' messages are still on their way.
            return false;
        }
        // SAFETY: loom checks the access: only the leader writes, and every reader must have
        // been released from the previous episode, hence arrived at this one, before.
        self.networks.with_mut(|count| unsafe { *count += 1 });
        true
    }
}

/// The node ranks of `group`, on one loom thread, through `episodes` episodes, polling as
/// `ProcessBarrier`'s wait does (with a yield between rounds of polls, which under loom lets the
/// other threads run). A group of several polls its ranks in turn, as separate processes would
/// poll theirs: the protocol cannot tell, and loom explores far fewer interleavings.
fn participate(node: &Node, group: &[usize], ranks: usize, only_node: bool, episodes: u64) {
    let mut gathers: Vec<NodeGather> = group
        .iter()
        .map(|&rank| NodeGather::new(rank, ranks, only_node))
        .collect();
    for episode in 0..episodes {
        let mut polls = 0;
        let mut done = vec![false; group.len()];
        for &rank in group {
            node.ledger.arrive(rank, episode);
        }
        loop {
            for ((gather, done), &rank) in gathers.iter_mut().zip(&mut done).zip(group) {
                if *done {
                    continue;
                }
                let network = || {
                    assert!(!only_node, "the only node takes no network step");
                    node.network_step(rank, episode, &mut polls)
                };
                if gather.poll(&node.counters[..], network) {
                    *done = true;
                    assert_eq!(gather.episode(), episode + 1);
                    node.ledger.assert_all_arrived(rank, episode);
                    if !only_node {
                        assert_eq!(
                            node.networks(),
                            episode + 1,
                            "rank {rank} released from episode {episode} before the leader's \
                             network step"
                        );
                    }
                }
            }
            if done.iter().all(|&d| d) {
                break;
            }
            thread::yield_now();
        }
    }
}

/// The ranks of one node, a loom thread for each group of `groups` (the first on the model's
/// main thread), through `episodes` episodes.
fn node_model(
    groups: &'static [&'static [usize]],
    only_node: bool,
    episodes: u64,
    max_preemptions: usize,
) {
    let ranks = groups.iter().map(|group| group.len()).sum::<usize>();
    model_bounded(max_preemptions, move || {
        let node = Arc::new(Node {
            counters: (0..1 + ranks).map(|_| AtomicU64::new(0)).collect(),
            ledger: Ledger::new(ranks, episodes as usize),
            networks: UnsafeCell::new(0),
        });
        let others: Vec<_> = groups[1..]
            .iter()
            .map(|&group| {
                let node = Arc::clone(&node);
                thread::spawn(move || participate(&node, group, ranks, only_node, episodes))
            })
            .collect();
        participate(&node, groups[0], ranks, only_node, episodes);
        for other in others {
            other.join().expect("a rank's thread panicked");
        }
        let expected = if only_node { 0 } else { episodes };
        assert_eq!(node.networks(), expected, "one network step per episode");
    });
}

// The bounds. Every wait here spins (polls and yields, as the real wait does), and under loom each
// yield is a point where any runnable thread may go next, so the search grows fast with spinning
// threads. 2 ranks explore 3 episodes (two of them with a rank racing ahead) at the default 2
// preemptions in seconds. 3 ranks on two threads (one polling two ranks in turn) explore 3
// episodes at 2 preemptions, with the leader alone and with the leader sharing, in seconds. 3
// ranks on three threads spin three ways: even 1 preemption and 1 episode did not finish in
// minutes, so that model explores only voluntary switches (0 preemptions, every order in which
// the yields hand the threads over), through 2 episodes.

#[test]
fn only_node_two_ranks() {
    node_model(&[&[0], &[1]], true, 3, 2);
}

#[test]
fn only_node_three_ranks() {
    node_model(&[&[0], &[1, 2]], true, 3, 2);
}

#[test]
fn leader_releases_two_ranks() {
    node_model(&[&[0], &[1]], false, 3, 2);
}

#[test]
fn leader_releases_three_ranks_leader_alone() {
    node_model(&[&[0], &[1, 2]], false, 3, 2);
}

#[test]
fn leader_releases_three_ranks_leader_shares() {
    node_model(&[&[2], &[0, 1]], false, 3, 2);
}

#[test]
fn only_node_three_threads() {
    node_model(&[&[0], &[1], &[2]], true, 2, 0);
}
