//! The hierarchical barrier (seeds 001 and 004): the ranks of a node meet in shared memory, and
//! only the node's leader (its lowest rank) takes the network step, a dissemination barrier among
//! the leaders.
//!
//! Each rank of the node owns one counter in a file every rank of the node maps (see
//! [`NodeCounters`]), and the node has one release counter. In episode `e` every rank stores
//! `e + 1` into its own counter. With more than one node, the leader waits until every counter of
//! its node reads at least `e + 1`, takes the network step, then stores `e + 1` into the release
//! counter, which the others wait for. With one node there is no network step, and every rank
//! waits for every counter itself: the last arrival frees everyone at once, without a release
//! passing through the leader (one cache-line transfer on the critical path instead of two, and,
//! when ranks outnumber cores, no wait for the leader to be scheduled). Counters only grow, so no
//! sense has to be reversed and a rank that races ahead into the next episode cannot be mistaken
//! for one still in this one.
//!
//! A wait reads one cache line that changes once per episode, and it polls, then yields, then
//! sleeps (see `progress`), so ranks that outnumber the cores hand them over instead of spinning.

use std::sync::atomic::Ordering;

use mpi::collective::SystemOperation;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::channel::Channel;
use crate::node_memory::NodeCounters;
use crate::threading::mpi_call;

use super::dissemination::Dissemination;
use super::step::ProcessStep;

/// The release counter's index; rank `i` of the node owns counter `1 + i`.
const RELEASE: usize = 0;

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

/// The leaders' dissemination barrier. The step is declared first, so its posted receives are
/// freed before its channel frees the communicator.
struct Network {
    step: Dissemination,
    channel: Channel,
    /// The barrier rank of each leader, by leader rank.
    leaders: Vec<usize>,
}

pub(crate) struct NodeShm {
    network: Option<Network>,
    counters: NodeCounters,
    /// This rank in its node.
    local: usize,
    /// The barrier rank of each rank of the node, by node rank.
    members: Vec<usize>,
    /// Whether this is the only node: no network step, every rank gathers.
    only_node: bool,
    /// Episodes this rank has completed.
    episode: u64,
    stage: Stage,
}

impl NodeShm {
    /// Collective over `channel`'s communicator. `ranks_per_node` splits each real node into
    /// groups of that many consecutive ranks, to exercise the network step on one machine.
    ///
    /// Every rank gets the barrier, or every rank gets the reason shared memory failed.
    pub(crate) fn new(channel: &Channel, ranks_per_node: Option<usize>) -> Result<NodeShm, String> {
        let rank = channel.rank();
        let call = mpi_call();
        let node = node_of(channel.comm(), rank, ranks_per_node);
        let local = node.rank() as usize;
        let mut members = vec![0u64; node.size() as usize];
        node.all_gather_into(&(rank as u64), &mut members[..]);
        let leader_color = if local == 0 {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        let leaders = channel
            .comm()
            .split_by_color_with_key(leader_color, rank as i32);
        drop(call);
        let counters = NodeCounters::new(&node, 1 + members.len());
        let mut everywhere = 0u8;
        let mut nodes = 0u64;
        let call = mpi_call();
        // Every rank of every node learns whether all nodes have their memory, and how many
        // nodes (leaders) there are.
        channel.comm().all_reduce_into(
            &u8::from(counters.is_ok()),
            &mut everywhere,
            SystemOperation::min(),
        );
        channel
            .comm()
            .all_reduce_into(&u64::from(local == 0), &mut nodes, SystemOperation::sum());
        drop(node);
        drop(call);
        let network = match leaders {
            Some(comm) if comm.size() > 1 => {
                let channel = Channel::from_owned(comm);
                let mut table = vec![0u64; channel.size()];
                {
                    let _call = mpi_call();
                    channel
                        .comm()
                        .all_gather_into(&(rank as u64), &mut table[..]);
                }
                Some(Network {
                    step: Dissemination::new(&channel),
                    leaders: table.into_iter().map(|r| r as usize).collect(),
                    channel,
                })
            }
            Some(comm) => {
                let _call = mpi_call();
                drop(comm);
                None
            }
            None => None,
        };
        let counters = match (counters, everywhere) {
            (Ok(counters), 1) => counters,
            (Err(reason), _) => return Err(reason),
            (Ok(_), _) => return Err("another node's ranks could not share memory".to_owned()),
        };
        Ok(NodeShm {
            network,
            counters,
            local,
            members: members.into_iter().map(|r| r as usize).collect(),
            only_node: nodes == 1,
            episode: 0,
            stage: Stage::Arrive,
        })
    }

    fn leader(&self) -> bool {
        self.local == 0
    }

    fn arrived(&self, node_rank: usize, target: u64) -> bool {
        self.counters.get(1 + node_rank).load(Ordering::Acquire) >= target
    }
}

/// This rank's node: the ranks that share its memory, in groups of `ranks_per_node` if given.
/// Callers hold `mpi_call()`.
fn node_of(
    comm: &SimpleCommunicator,
    rank: usize,
    ranks_per_node: Option<usize>,
) -> SimpleCommunicator {
    let node = comm.split_shared(rank as i32);
    match ranks_per_node {
        None => node,
        Some(n) => {
            let group = node.rank() as usize / n.max(1);
            let split = node
                .split_by_color_with_key(Color::with_value(group as i32), rank as i32)
                .unwrap_or_else(|| unreachable!("every rank passes a defined color"));
            drop(node);
            split
        }
    }
}

impl ProcessStep for NodeShm {
    fn advance(&mut self, _channel: &Channel) -> bool {
        self.poll()
    }

    fn waiting_for(&self, _channel: &Channel) -> Vec<usize> {
        self.missing()
    }
}

impl NodeShm {
    /// [`ProcessStep::advance`]: the node's own channels are the only ones it uses.
    fn poll(&mut self) -> bool {
        let target = self.episode + 1;
        loop {
            match self.stage {
                Stage::Arrive => {
                    // Release: what this rank wrote before the barrier is visible to whoever
                    // reads its arrival with Acquire (the leader), and through the leader's
                    // release to every other rank.
                    self.counters
                        .get(1 + self.local)
                        .store(target, Ordering::Release);
                    self.stage = if self.only_node || self.leader() {
                        Stage::Gather { next: 0 }
                    } else {
                        Stage::AwaitRelease
                    };
                }
                Stage::Gather { next } => {
                    if let Some(late) =
                        (next..self.members.len()).find(|&i| !self.arrived(i, target))
                    {
                        self.stage = Stage::Gather { next: late };
                        return false;
                    }
                    if self.only_node {
                        break;
                    }
                    self.stage = Stage::Network;
                }
                Stage::Network => {
                    if let Some(network) = &mut self.network {
                        if !network.step.advance(&network.channel) {
                            return false;
                        }
                    }
                    self.counters.get(RELEASE).store(target, Ordering::Release);
                    break;
                }
                Stage::AwaitRelease => {
                    if self.counters.get(RELEASE).load(Ordering::Acquire) < target {
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

    /// [`ProcessStep::waiting_for`], in barrier ranks.
    fn missing(&self) -> Vec<usize> {
        let target = self.episode + 1;
        if self.stage == Stage::Network {
            return self.network.as_ref().map_or_else(Vec::new, |network| {
                network
                    .step
                    .waiting_for(&network.channel)
                    .into_iter()
                    .map(|leader| network.leaders[leader])
                    .collect()
            });
        }
        let missing: Vec<usize> = (0..self.members.len())
            .filter(|&i| i != self.local && !self.arrived(i, target))
            .map(|i| self.members[i])
            .collect();
        if missing.is_empty() && !self.leader() && !self.only_node {
            // The node is complete: the leader is in the network step, or releasing.
            return vec![self.members[0]];
        }
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ranks` views of one node's counters, as `ranks` processes would map them: each maps the
    /// same file. `only_node` false gives a node whose leader releases (with no network step).
    fn node(ranks: usize, only_node: bool) -> Vec<NodeShm> {
        let path = std::env::temp_dir().join(format!(
            "phasers-mpi-node-shm-test-{}-{ranks}-{only_node}",
            std::process::id()
        ));
        NodeCounters::create_file(&path, 1 + ranks).unwrap();
        let views = (0..ranks)
            .map(|local| NodeShm {
                network: None,
                counters: NodeCounters::map_file(&path, 1 + ranks).unwrap(),
                local,
                // Barrier ranks 10, 11, ... so that node ranks and barrier ranks differ.
                members: (10..10 + ranks).collect(),
                only_node,
                episode: 0,
                stage: Stage::Arrive,
            })
            .collect();
        std::fs::remove_file(&path).unwrap();
        views
    }

    #[test]
    fn on_the_only_node_the_last_arrival_frees_everyone() {
        let mut r = node(3, true);
        assert!(!r[0].poll());
        assert_eq!(r[0].missing(), vec![11, 12]);
        assert!(!r[1].poll());
        assert_eq!(r[1].missing(), vec![12]);
        // The last to arrive leaves at once, and so does everyone else when they look.
        assert!(r[2].poll());
        assert!(r[0].poll() && r[1].poll());
        // Rank 2 races into episode 1 and must wait for the others' next arrival.
        assert!(!r[2].poll());
        assert_eq!(r[2].missing(), vec![10, 11]);
        assert!(!r[0].poll());
        assert!(r[1].poll());
        assert!(r[2].poll() && r[0].poll());
        assert!(r.iter().all(|v| v.episode == 2));
    }

    #[test]
    fn with_more_nodes_the_leader_gathers_then_releases() {
        let mut r = node(3, false);
        assert!(!r[1].poll());
        assert!(!r[2].poll());
        // Every rank of the node has arrived but the leader: they name it.
        assert_eq!(r[1].missing(), vec![10]);
        assert!(!r[1].poll());
        // The leader finds everyone and releases; the others see the release.
        assert!(r[0].poll());
        assert!(r[1].poll() && r[2].poll());
        // The leader, first in episode 1, waits for both others.
        assert!(!r[0].poll());
        assert_eq!(r[0].missing(), vec![11, 12]);
        assert!(!r[2].poll());
        assert_eq!(r[0].missing(), vec![11]);
        assert!(!r[1].poll());
        // Rank 1 arrived but the release has not come: it waits for the leader.
        assert_eq!(r[1].missing(), vec![10]);
        assert!(r[0].poll() && r[1].poll() && r[2].poll());
    }
}
