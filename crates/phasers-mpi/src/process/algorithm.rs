//! The names of the process barrier algorithms, and the step each one builds.

use crate::channel::Channel;
use crate::error::{Error, Result};

use super::dissemination::Dissemination;
use super::library::Library;
use super::mcs_tree::McsTree;
use super::node_shm::NodeShm;
use super::step::ProcessStep;

/// How the ranks of a communicator meet.
///
/// Parsed from its [`name`](Self::name), as the benchmark's command line takes it:
///
/// ```
/// use phasers_mpi::{Error, ProcessAlgorithm};
///
/// assert_eq!("mcs-tree".parse::<ProcessAlgorithm>()?, ProcessAlgorithm::McsTree);
/// assert!(matches!("ring".parse::<ProcessAlgorithm>(), Err(Error::InvalidArgument { .. })));
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ProcessAlgorithm {
    /// ceil(log2 P) rounds of tagged tokens; no release phase.
    Dissemination,
    /// 4-ary arrival tree, binary wake-up tree.
    McsTree,
    /// The MPI library's barrier (`MPI_Ibarrier`, polled).
    Library,
    /// The ranks of each node meet in shared memory; one leader per node takes a dissemination
    /// step among the leaders (seed 004).
    NodeShm,
    /// Measures the others at build time (collectively, a few milliseconds) and keeps the
    /// fastest; [`ProcessBarrier::chosen`](crate::ProcessBarrier::chosen) says which.
    Auto,
}

impl ProcessAlgorithm {
    /// Every algorithm, for benchmarks and tests.
    ///
    /// ```
    /// use phasers_mpi::ProcessAlgorithm;
    ///
    /// assert_eq!(ProcessAlgorithm::ALL.len(), 5);
    /// assert!(ProcessAlgorithm::ALL.contains(&ProcessAlgorithm::Library));
    /// assert!(ProcessAlgorithm::ALL.contains(&ProcessAlgorithm::Auto));
    /// ```
    pub const ALL: [ProcessAlgorithm; 5] = [
        ProcessAlgorithm::Dissemination,
        ProcessAlgorithm::McsTree,
        ProcessAlgorithm::Library,
        ProcessAlgorithm::NodeShm,
        ProcessAlgorithm::Auto,
    ];

    /// The algorithm's name, as the benchmark prints it.
    ///
    /// ```
    /// use phasers_mpi::ProcessAlgorithm;
    ///
    /// assert_eq!(ProcessAlgorithm::Library.name(), "mpi-ibarrier");
    /// for algorithm in ProcessAlgorithm::ALL {
    ///     assert_eq!(algorithm.name().parse::<ProcessAlgorithm>()?, algorithm);
    /// }
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ProcessAlgorithm::Dissemination => "dissemination",
            ProcessAlgorithm::McsTree => "mcs-tree",
            ProcessAlgorithm::Library => "mpi-ibarrier",
            ProcessAlgorithm::NodeShm => "node-shm",
            ProcessAlgorithm::Auto => "auto",
        }
    }

    /// The step of a concrete algorithm on `channel`. Collective over the channel (posting
    /// receives is local, but the node-shm barrier splits the communicator); every rank gets the
    /// step or every rank gets the error.
    pub(crate) fn step(
        self,
        channel: &Channel,
        ranks_per_node: Option<usize>,
    ) -> Result<Box<dyn ProcessStep>> {
        Ok(match self {
            ProcessAlgorithm::Dissemination => Box::new(Dissemination::new(channel)),
            ProcessAlgorithm::McsTree => Box::new(McsTree::new(channel)),
            ProcessAlgorithm::Library => Box::new(Library::new()),
            ProcessAlgorithm::NodeShm => Box::new(
                NodeShm::new(channel, ranks_per_node)
                    .map_err(|reason| Error::NodeMemory { reason })?,
            ),
            ProcessAlgorithm::Auto => {
                return Err(Error::invalid("auto is resolved before a step is built"))
            }
        })
    }
}

impl std::str::FromStr for ProcessAlgorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ProcessAlgorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = ProcessAlgorithm::ALL.iter().map(|a| a.name()).collect();
                Error::invalid(format!(
                    "unknown process algorithm {s:?}; use one of {}",
                    names.join(", ")
                ))
            })
    }
}
