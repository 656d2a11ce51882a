//! Creating a hybrid team and handing out this process's members.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mpi::traits::Communicator;

use super::layout::Layout;
use super::member::HybridMember;
use super::shared::{Options, ProcessShared};
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::mpi_env::Mpi;
use crate::node::NodeShape;
use crate::threading::Threading;

/// Collective over `channel`: the layout, node shape and slots of a team with `local` members
/// here.
pub(crate) fn build_shared(channel: Channel, local: usize, options: Options) -> Arc<ProcessShared> {
    let mut options = options;
    let node = NodeShape::of(&channel);
    let layout = Layout::new(channel, local, &mut options);
    ProcessShared::new(layout, local, options, node.oversubscribed(local))
}

/// A team of threads across the processes of a communicator: seed 004's teams and collectives
/// over ranks × threads. One `HybridTeam` per process; every process builds it together (the
/// constructor is collective), each with its own number of threads.
///
/// ```no_run
/// use phasers::Op;
/// use phasers_mpi::{HybridTeam, Mpi, Threading};
///
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let team = HybridTeam::builder(&mpi, mpi.world(), 4).checked(true).build()?;
/// std::thread::scope(|s| {
///     for mut member in team.members() {
///         s.spawn(move || {
///             let mut max = [0.0f64];
///             member.allreduce(&[member.rank() as f64], &mut max, Op::Max).unwrap();
///             assert_eq!(max[0], (member.size() - 1) as f64);
///         });
///     }
/// });
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct HybridTeam {
    shared: Arc<ProcessShared>,
}

impl HybridTeam {
    /// A team of `threads` members in this process, across the processes of `comm`, with the
    /// default options. Collective over `comm`.
    ///
    /// # Errors
    ///
    /// As [`HybridTeamBuilder::build`].
    pub fn new(mpi: &Mpi, comm: &impl Communicator, threads: usize) -> Result<HybridTeam> {
        HybridTeam::builder(mpi, comm, threads).build()
    }

    /// A builder for a team of `threads` members in this process, across the processes of
    /// `comm`.
    pub fn builder<'a, C: Communicator>(
        mpi: &'a Mpi,
        comm: &'a C,
        threads: usize,
    ) -> HybridTeamBuilder<'a, C> {
        HybridTeamBuilder {
            mpi,
            comm,
            threads,
            checked: None,
            node_aware: true,
            timeout: None,
            ranks_per_node: None,
        }
    }

    /// This process's members, local ranks `0..threads`, to move into threads. The first call
    /// hands them out; later calls return an empty `Vec` (each member exists once).
    pub fn members(&self) -> Vec<HybridMember> {
        if self.shared.handed_out.swap(true, Ordering::AcqRel) {
            return Vec::new();
        }
        let first = self.shared.first_rank();
        (0..self.shared.local)
            .map(|local_rank| HybridMember {
                shared: Arc::clone(&self.shared),
                local_rank,
                rank: first + local_rank,
                next_call: 0,
            })
            .collect()
    }

    /// Members over all processes.
    pub fn size(&self) -> usize {
        self.shared.layout.size
    }

    /// Members in this process.
    pub fn local_size(&self) -> usize {
        self.shared.local
    }

    /// Processes in the team.
    pub fn processes(&self) -> usize {
        self.shared.layout.counts.len()
    }

    /// This process's rank in the team's communicator.
    pub fn process_rank(&self) -> usize {
        self.shared.process()
    }

    /// Whether calls are checked (agreed by all processes: process 0's choice).
    pub fn is_checked(&self) -> bool {
        self.shared.options.checked
    }

    /// Whether calls run node-aware stages (process 0's choice, and only where the team spans
    /// several nodes, some with several processes).
    pub fn is_node_aware(&self) -> bool {
        self.shared.layout.hierarchy.is_some()
    }
}

/// Configures a [`HybridTeam`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct HybridTeamBuilder<'a, C: Communicator> {
    mpi: &'a Mpi,
    comm: &'a C,
    threads: usize,
    checked: Option<bool>,
    node_aware: bool,
    timeout: Option<Duration>,
    ranks_per_node: Option<usize>,
}

impl<C: Communicator> HybridTeamBuilder<'_, C> {
    /// Checked mode: before any data moves, every process sends a fixed-size record of its
    /// members' call (the collective, element type, length, root and op, all already compared
    /// among its own members) and every process compares them all, so that members that called
    /// differently get the same [`Error::Mismatch`], with global ranks, on every member of every
    /// process, and a bad argument of one member reaches every member as the same
    /// [`Error::InvalidArgument`]. It costs one small `MPI_Iallgather` per call.
    ///
    /// Default: on in debug builds, off in release builds, unless `PHASERS_CHECKED` says
    /// `on`/`off`. All processes use process 0's choice.
    ///
    /// Unchecked, the members of a process are still compared with each other, and their own
    /// bad arguments reach the members of their process; but processes that call different
    /// collectives (or with different lengths, roots or ops) are erroneous MPI programs, which
    /// may hang, abort or return garbage.
    pub fn checked(mut self, checked: bool) -> Self {
        self.checked = Some(checked);
        self
    }

    /// Node-aware collectives (default `true`): where the team spans several nodes, some with
    /// several processes, barrier, broadcast, reduce and allreduce go through the node first,
    /// then across one leader per node, then back through the node. `false` uses one flat
    /// communicator of processes (the MPI library's own algorithms).
    pub fn node_aware(mut self, node_aware: bool) -> Self {
        self.node_aware = node_aware;
        self
    }

    /// The longest a call may take (default: no limit). A call that runs out of time returns
    /// [`Error::Timeout`], and the team is broken from then on in this process, because an MPI
    /// collective cannot be cancelled.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Treats every `ranks_per_node` consecutive processes as one node, instead of asking MPI
    /// which processes share a node: exercises the node-aware path on one machine.
    #[doc(hidden)]
    pub fn emulate_nodes(mut self, ranks_per_node: usize) -> Self {
        self.ranks_per_node = Some(ranks_per_node.max(1));
        self
    }

    /// Builds the team. Collective over the communicator: every process calls it, with the
    /// same or a different thread count.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 threads or a bad `PHASERS_CHECKED`;
    /// [`Error::Threading`] when there is more than one thread per process and MPI provides
    /// less than [`Threading::Serialized`] (any member may drive MPI).
    pub fn build(self) -> Result<HybridTeam> {
        if self.threads == 0 {
            return Err(Error::invalid(
                "a hybrid team needs at least 1 thread per process",
            ));
        }
        if self.threads > 1 {
            self.mpi.require(
                Threading::Serialized,
                "a hybrid team with several threads per process",
            )?;
        }
        let checked = match self.checked {
            Some(checked) => checked,
            None => checked_from_env()?.unwrap_or(cfg!(debug_assertions)),
        };
        let options = Options {
            checked,
            node_aware: self.node_aware,
            timeout: self.timeout,
            ranks_per_node: self.ranks_per_node,
        };
        let channel = Channel::duplicate(self.comm);
        Ok(HybridTeam {
            shared: build_shared(channel, self.threads, options),
        })
    }
}

fn checked_from_env() -> Result<Option<bool>> {
    let env = phasers::team::CHECKED_ENV;
    let Ok(text) = std::env::var(env) else {
        return Ok(None);
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Ok(Some(true)),
        "off" | "0" | "false" | "no" => Ok(Some(false)),
        _ => Err(Error::invalid(format!(
            "{env}={text:?} is not a switch; set it to on or off, or unset it"
        ))),
    }
}
