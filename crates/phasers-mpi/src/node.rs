//! How many ranks share this node, and how many cores they may run on together.
//!
//! Waiters poll briefly and then sleep when the threads of all ranks on a node outnumber the
//! cores those ranks may use. Each rank's own view of its cores is not enough: `mpirun` binds
//! each rank to one core when there are two ranks or fewer, and leaves them unbound otherwise. So
//! the ranks of a node (found with `MPI_Comm_split_type(SHARED)`) combine their affinity masks,
//! and the union's size is the node's core count.

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::channel::Channel;
use crate::threading::mpi_call;

/// Words of the CPU mask the ranks combine: CPUs 0 to 1023.
const MASK_WORDS: usize = 16;

/// The ranks and cores of this node, as the ranks of one communicator see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeShape {
    /// Ranks of the communicator on this node.
    pub ranks: usize,
    /// Cores those ranks may run on, together.
    pub cores: usize,
}

impl NodeShape {
    /// Collective over the channel's communicator.
    pub(crate) fn of(channel: &Channel) -> NodeShape {
        let mine = affinity_mask();
        let mut union = [0u64; MASK_WORDS];
        let _call = mpi_call();
        let node = channel.comm().split_shared(channel.rank() as i32);
        node.all_reduce_into(&mine[..], &mut union[..], SystemOperation::bitwise_or());
        let listed: usize = union.iter().map(|w| w.count_ones() as usize).sum();
        NodeShape {
            ranks: node.size() as usize,
            // No mask to read (not Linux): each rank's own count is the best guess.
            cores: if listed == 0 {
                phasers::available_cores()
            } else {
                listed.min(phasers::available_cores() * node.size() as usize)
            },
        }
    }

    /// Whether `threads_per_rank` threads in every rank of the node outnumber its cores.
    pub(crate) fn oversubscribed(&self, threads_per_rank: usize) -> bool {
        self.ranks.saturating_mul(threads_per_rank) > self.cores
    }
}

/// This process's allowed CPUs as a bit mask, from `/proc/self/status`; empty when unknown.
fn affinity_mask() -> [u64; MASK_WORDS] {
    let mut mask = [0u64; MASK_WORDS];
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return mask;
    };
    let Some(list) = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
    else {
        return mask;
    };
    for cpu in parse_cpu_list(list.trim()) {
        if cpu < MASK_WORDS * 64 {
            mask[cpu / 64] |= 1 << (cpu % 64);
        }
    }
    mask
}

/// Parses a Linux CPU list such as `0-3,8,10-11`; malformed parts are skipped.
fn parse_cpu_list(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let bounds = match part.split_once('-') {
            Some((a, b)) => a
                .trim()
                .parse::<usize>()
                .ok()
                .zip(b.trim().parse::<usize>().ok()),
            None => part.trim().parse::<usize>().ok().map(|a| (a, a)),
        };
        if let Some((first, last)) = bounds {
            cpus.extend(first..=last.min(first + MASK_WORDS * 64));
        }
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::parse_cpu_list;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("1"), vec![1]);
        assert_eq!(parse_cpu_list("x,2"), vec![2]);
        assert!(parse_cpu_list("").is_empty());
    }
}
