//! The hierarchical barrier (seeds 001 and 004): the ranks of a node meet in shared memory, and
//! only the node's leader (its lowest rank) takes the network step, a dissemination barrier among
//! the leaders.
//!
//! The ranks of a node meet through counters in a file every rank maps (see [`NodeCounters`]);
//! the protocol on those counters is `node_gather.rs`'s, which knows nothing of MPI, so that its
//! loom model (`tests/loom_node_shm.rs`) runs the same code with a stub for the network step.
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
use super::node_gather::{NodeGather, NodeSlots};
use super::step::ProcessStep;

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
    /// The barrier rank of each rank of the node, by node rank.
    members: Vec<usize>,
    /// This rank's side of the meeting in shared memory.
    gather: NodeGather,
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
            gather: NodeGather::new(local, members.len(), nodes == 1),
            members: members.into_iter().map(|r| r as usize).collect(),
        })
    }
}

/// The mapped counters are `std` atomics in every build: they live in the other ranks' address
/// spaces too, where no loom atomic can.
impl NodeSlots for NodeCounters {
    fn load(&self, index: usize, order: Ordering) -> u64 {
        self.get(index).load(order)
    }

    fn store(&self, index: usize, value: u64, order: Ordering) {
        self.get(index).store(value, order);
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
        let network = &mut self.network;
        self.gather.poll(&self.counters, || {
            network
                .as_mut()
                .map_or(true, |network| network.step.advance(&network.channel))
        })
    }

    /// [`ProcessStep::waiting_for`], in barrier ranks.
    fn missing(&self) -> Vec<usize> {
        if self.gather.in_network() {
            return self.network.as_ref().map_or_else(Vec::new, |network| {
                network
                    .step
                    .waiting_for(&network.channel)
                    .into_iter()
                    .map(|leader| network.leaders[leader])
                    .collect()
            });
        }
        self.gather
            .missing(&self.counters)
            .into_iter()
            .map(|node_rank| self.members[node_rank])
            .collect()
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
                // Barrier ranks 10, 11, ... so that node ranks and barrier ranks differ.
                members: (10..10 + ranks).collect(),
                gather: NodeGather::new(local, ranks, only_node),
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
        assert!(r.iter().all(|v| v.gather.episode() == 2));
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
