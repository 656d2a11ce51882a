//! Where the members are: how many each process holds (at most [`MAX_THREADS_PER_PROCESS`]),
//! their global ranks, and the node-aware sub-communicators (the processes of a node, and one
//! leader per node).

use mpi::collective::SystemOperation;
use mpi::topology::Color;
use mpi::traits::{Communicator, CommunicatorCollectives};

use std::sync::Arc;

use super::mailbox::Mailboxes;
use super::options::Options;
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::threading::mpi_call;

/// The most threads one process may bring to a hybrid team: a team of threads' bound
/// ([`phasers::team::MAX_MEMBERS`]), since the threads of a process meet through one.
///
/// ```
/// use phasers_mpi::{Error, HybridTeam, Mpi, Threading, MAX_THREADS_PER_PROCESS};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let refused = HybridTeam::new(&mpi, mpi.world(), MAX_THREADS_PER_PROCESS + 1);
/// assert!(matches!(refused, Err(Error::InvalidArgument { .. })));
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub const MAX_THREADS_PER_PROCESS: usize = phasers::team::MAX_MEMBERS;

/// The node-aware sub-communicators; present only when they help (more than one node, and some
/// node with more than one process).
pub(crate) struct Hierarchy {
    /// The processes of this node, ranked as in the team's communicator.
    pub(crate) node: Channel,
    /// One process per node (its node rank 0), ranked as in the team's communicator; `None` on
    /// processes that do not lead their node.
    pub(crate) leaders: Option<Channel>,
    /// For every process of the team: its node's index among the leaders.
    pub(crate) node_of: Vec<usize>,
    /// For every process of the team: its rank in its node.
    pub(crate) node_rank_of: Vec<usize>,
}

/// The members of every process and the communicators the team's calls run on.
pub(crate) struct Layout {
    /// The team's private communicator of processes.
    pub(crate) flat: Channel,
    /// Members per process, in process order.
    pub(crate) counts: Vec<usize>,
    /// Global rank of each process's first member.
    pub(crate) offsets: Vec<usize>,
    /// Members over all processes.
    pub(crate) size: usize,
    pub(crate) hierarchy: Option<Hierarchy>,
    /// Whether checked calls exchange their envelopes point to point (`envelope.rs`): a flat
    /// team that no process built with a timeout. A point-to-point exchange takes several
    /// steps, and a process that gives up at its timeout would not send the later ones, while
    /// the one reduction of the other transport completes in MPI without it. The same on every
    /// process.
    pub(crate) envelope_p2p: bool,
    /// Where a point-to-point envelope's steps go through shared memory instead of MPI: every
    /// process of the team runs on one node (`mailbox.rs`). The same on every process.
    pub(crate) mailboxes: Option<Arc<Mailboxes>>,
}

impl Layout {
    /// Collective over `flat`: every process passes its member count and its options; every
    /// process then uses process 0's options, so that all run the same protocol. `node_aware`
    /// asks for the hierarchy; `ranks_per_node` replaces the real nodes by groups of that many
    /// consecutive processes (to exercise the node-aware path on one machine).
    ///
    /// Every process checks every count, so all of them refuse a bad one together, naming the
    /// process that passed it: a process that refused alone would leave the others in the next
    /// collective.
    pub(crate) fn new(flat: Channel, local: usize, options: &mut Options) -> Result<Layout> {
        // Each process's count, checked flag, node-aware flag, emulated node size and whether
        // it set a timeout.
        const WORDS: usize = 5;
        let processes = flat.size();
        let mine = [
            local as u64,
            u64::from(options.checked),
            u64::from(options.node_aware),
            options.ranks_per_node.map_or(0, |n| n as u64),
            u64::from(options.timeout.is_some()),
        ];
        let mut all = vec![0u64; WORDS * processes];
        {
            let _call = mpi_call();
            flat.comm().all_gather_into(&mine[..], &mut all[..]);
        }
        options.checked = all[1] != 0;
        options.node_aware = all[2] != 0;
        options.ranks_per_node = (all[3] != 0).then_some(all[3] as usize);
        let timeout_somewhere = all.chunks_exact(WORDS).any(|words| words[4] != 0);
        // Checked or not: a checked call from the direct path sends the same envelope as the
        // engine's (`direct_checked.rs`). A team with a timeout keeps the engine, whose MPI
        // requests can be abandoned when the timeout passes.
        options.direct = !timeout_somewhere;
        let (node_aware, ranks_per_node) = (options.node_aware, options.ranks_per_node);
        let counts: Vec<usize> = all.chunks_exact(WORDS).map(|c| c[0] as usize).collect();
        if let Some((process, &count)) = counts
            .iter()
            .enumerate()
            .find(|(_, &count)| count == 0 || count > MAX_THREADS_PER_PROCESS)
        {
            return Err(Error::invalid(format!(
                "process {process} asked for a hybrid team of {count} threads; a hybrid team \
                 needs 1 to {MAX_THREADS_PER_PROCESS} threads per process \
                 (phasers_mpi::MAX_THREADS_PER_PROCESS): pass the number of threads that will \
                 take part in each process"
            )));
        }
        let mut offsets = Vec::with_capacity(processes);
        let mut size = 0;
        for &c in &counts {
            offsets.push(size);
            size += c;
        }
        let hierarchy = if node_aware && processes > 1 {
            Self::hierarchy(&flat, ranks_per_node)
        } else {
            None
        };
        let envelope_p2p = hierarchy.is_none() && !timeout_somewhere;
        let mailboxes = if envelope_p2p && processes > 1 {
            Self::mailboxes(&flat, ranks_per_node)
        } else {
            None
        };
        Ok(Layout {
            flat,
            counts,
            offsets,
            size,
            hierarchy,
            envelope_p2p,
            mailboxes,
        })
    }

    /// The team's mailboxes, collective over `flat`: `None` on every process alike when its
    /// processes do not all share one node (or are told not to, `ranks_per_node`), or when the
    /// node cannot map the memory; the envelope then goes through MPI, which is only slower.
    fn mailboxes(flat: &Channel, ranks_per_node: Option<usize>) -> Option<Arc<Mailboxes>> {
        if ranks_per_node.is_some_and(|n| n < flat.size()) {
            return None;
        }
        let node = {
            let _call = mpi_call();
            flat.comm().split_shared(flat.rank() as i32)
        };
        // If one node lacks some process, every node does: all decide alike.
        let made = (node.size() as usize == flat.size())
            .then(|| Mailboxes::new(&node).ok().map(Arc::new))
            .flatten();
        let _call = mpi_call();
        drop(node);
        made
    }

    fn hierarchy(flat: &Channel, ranks_per_node: Option<usize>) -> Option<Hierarchy> {
        let me = flat.rank();
        let processes = flat.size();
        let _call = mpi_call();
        let node = match ranks_per_node {
            Some(n) => flat
                .comm()
                .split_by_color_with_key(Color::with_value((me / n.max(1)) as i32), me as i32)
                .expect("every process passes a defined color"),
            None => flat.comm().split_shared(me as i32),
        };
        // The node's leader is its lowest team rank (the node communicator is ordered by it).
        let mut leader = 0i32;
        node.all_reduce_into(&(me as i32), &mut leader, SystemOperation::min());
        let mut leader_of = vec![0i32; processes];
        flat.comm().all_gather_into(&leader, &mut leader_of[..]);
        let mut leaders: Vec<i32> = leader_of.clone();
        leaders.sort_unstable();
        leaders.dedup();
        let node_sizes_one = leaders.len() == processes;
        // Every process decides alike from the same table, so all or none make the leaders'
        // communicator.
        if leaders.len() == 1 || node_sizes_one {
            return None;
        }
        let is_leader = node.rank() == 0;
        let color = if is_leader {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        let leaders_comm = flat.comm().split_by_color_with_key(color, me as i32);
        let node_of: Vec<usize> = leader_of
            .iter()
            .map(|l| leaders.binary_search(l).unwrap_or(0))
            .collect();
        let node_rank_of: Vec<usize> = (0..processes)
            .map(|p| (0..p).filter(|&q| leader_of[q] == leader_of[p]).count())
            .collect();
        drop(_call);
        Some(Hierarchy {
            node: Channel::from_owned(node),
            leaders: leaders_comm.map(Channel::from_owned),
            node_of,
            node_rank_of,
        })
    }

    /// This process's rank in the team's communicator.
    pub(crate) fn process(&self) -> usize {
        self.flat.rank()
    }

    /// Global rank of this process's local member 0.
    pub(crate) fn first_rank(&self) -> usize {
        self.offsets[self.process()]
    }

    /// Members in this process.
    pub(crate) fn local(&self) -> usize {
        self.counts[self.process()]
    }

    /// The process holding global rank `rank`.
    pub(crate) fn process_of(&self, rank: usize) -> usize {
        match self.offsets.binary_search(&rank) {
            Ok(mut p) => {
                // Processes hold at least one member, so offsets are distinct; stay safe anyway.
                while p + 1 < self.offsets.len() && self.offsets[p + 1] == rank {
                    p += 1;
                }
                p
            }
            Err(p) => p - 1,
        }
    }
}
