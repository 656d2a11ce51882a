//! Barriers across MPI processes: dissemination and MCS tree over point-to-point messages, next
//! to the MPI library's own barrier, behind one [`ProcessAlgorithm`] choice.
//!
//! | algorithm | messages per rank per episode | critical path |
//! |---|---|---|
//! | [`Dissemination`](ProcessAlgorithm::Dissemination) | ceil(log2 P) sends and receives | ceil(log2 P) message latencies |
//! | [`McsTree`](ProcessAlgorithm::McsTree) | at most 4 arrivals in, 1 out; 1 wake-up in, 2 out | log4 P up + log2 P down |
//! | [`Library`](ProcessAlgorithm::Library) | whatever `MPI_Ibarrier` does | MPI's choice |
//!
//! Every wait polls, then yields, then sleeps (see the crate docs), so ranks that outnumber the
//! cores do not starve each other, and a stalled wait warns on stderr.
//!
//! ```
//! use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
//!
//! # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
//! let mpi = Mpi::init(Threading::Single)?;
//! let mut barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Dissemination)?;
//! for _ in 0..1000 {
//!     barrier.wait()?;
//! }
//! assert_eq!(barrier.episode(), 1000);
//! # Ok::<(), phasers_mpi::Error>(())
//! ```

mod dissemination;
mod library;
mod mcs_tree;
mod step;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::mpi_env::Mpi;
use crate::node::NodeShape;
use crate::progress::{poll_until, WaitFor};
use crate::threading::mpi_call;

use dissemination::Dissemination;
use library::Library;
use mcs_tree::McsTree;
use step::ProcessStep;

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
}

impl ProcessAlgorithm {
    /// Every algorithm, for benchmarks and tests.
    ///
    /// ```
    /// use phasers_mpi::ProcessAlgorithm;
    ///
    /// assert_eq!(ProcessAlgorithm::ALL.len(), 3);
    /// assert!(ProcessAlgorithm::ALL.contains(&ProcessAlgorithm::Library));
    /// ```
    pub const ALL: [ProcessAlgorithm; 3] = [
        ProcessAlgorithm::Dissemination,
        ProcessAlgorithm::McsTree,
        ProcessAlgorithm::Library,
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
        }
    }

    fn step(self, size: usize) -> Box<dyn ProcessStep> {
        match self {
            ProcessAlgorithm::Dissemination => Box::new(Dissemination::new(size)),
            ProcessAlgorithm::McsTree => Box::new(McsTree::new()),
            ProcessAlgorithm::Library => Box::new(Library::new()),
        }
    }
}

impl std::str::FromStr for ProcessAlgorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ProcessAlgorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown process algorithm {s:?}; use dissemination, mcs-tree or mpi-ibarrier"
                ))
            })
    }
}

/// A barrier among the ranks of a communicator; one per rank, used by one thread at a time.
///
/// ```
/// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Single)?;
/// for algorithm in ProcessAlgorithm::ALL {
///     let mut barrier = ProcessBarrier::new(&mpi, mpi.world(), algorithm)?;
///     // Each wait returns the episode it completed.
///     assert_eq!(barrier.wait()?, 0);
///     assert_eq!(barrier.wait()?, 1);
/// }
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct ProcessBarrier {
    channel: Channel,
    algorithm: ProcessAlgorithm,
    step: Box<dyn ProcessStep>,
    /// Episodes completed.
    episode: u64,
    oversubscribed: bool,
}

impl ProcessBarrier {
    /// Builds the barrier on a private duplicate of `comm`. Collective: every rank of `comm`
    /// calls it.
    ///
    /// # Errors
    ///
    /// None today; the `Result` leaves room for algorithms with limits.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::McsTree)?;
    /// assert_eq!(barrier.algorithm(), ProcessAlgorithm::McsTree);
    /// assert_eq!(barrier.episode(), 0);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn new(
        mpi: &Mpi,
        comm: &impl Communicator,
        algorithm: ProcessAlgorithm,
    ) -> Result<ProcessBarrier> {
        let channel = Channel::duplicate(comm);
        let node = NodeShape::of(&channel);
        let _ = mpi;
        Ok(ProcessBarrier {
            step: algorithm.step(channel.size()),
            oversubscribed: node.oversubscribed(1),
            channel,
            algorithm,
            episode: 0,
        })
    }

    /// This rank in the barrier's communicator.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Library)?;
    /// // Built on the world, the barrier ranks processes as the world does.
    /// assert_eq!(barrier.rank(), mpi.rank());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.channel.rank()
    }

    /// The number of ranks.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Library)?;
    /// assert_eq!(barrier.parties(), mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.channel.size()
    }

    /// The number of ranks.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Library)?;
    /// assert_eq!(barrier.size(), barrier.parties());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `parties()`: one name for the count on every type"
    )]
    pub fn size(&self) -> usize {
        self.parties()
    }

    /// The algorithm.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Dissemination)?;
    /// assert_eq!(barrier.algorithm().name(), "dissemination");
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn algorithm(&self) -> ProcessAlgorithm {
        self.algorithm
    }

    /// Episodes this rank has completed.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let mut barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::McsTree)?;
    /// barrier.wait()?;
    /// barrier.wait()?;
    /// assert_eq!(barrier.episode(), 2);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Waits until every rank has called `wait` as often as this one; returns the episode just
    /// completed (0 for the first).
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let mut barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Dissemination)?;
    /// let episodes: Vec<u64> = (0..3).map(|_| barrier.wait()).collect::<Result<_, _>>()?;
    /// assert_eq!(episodes, [0, 1, 2]);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// None without a deadline; see [`wait_deadline`](Self::wait_deadline).
    pub fn wait(&mut self) -> Result<u64> {
        self.wait_until(None)
    }

    /// [`wait`](Self::wait) for at most `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let mut barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::McsTree)?;
    /// // Every rank of this example calls promptly, so the episode completes in time.
    /// assert_eq!(barrier.wait_timeout(Duration::from_secs(10))?, 0);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait_deadline`](Self::wait_deadline).
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<u64> {
        self.wait_until(Instant::now().checked_add(timeout))
    }

    /// [`wait`](Self::wait) until `deadline`.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let mut barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Library)?;
    /// let deadline = Instant::now() + Duration::from_secs(10);
    /// for episode in 0..3 {
    ///     assert_eq!(barrier.wait_deadline(deadline)?, episode);
    /// }
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] naming the ranks whose messages had not arrived. The arrival stays in
    /// place: calling a wait again continues the same episode.
    pub fn wait_deadline(&mut self, deadline: Instant) -> Result<u64> {
        self.wait_until(Some(deadline))
    }

    /// The sum of every rank's `mine`. Collective over the barrier's ranks; call it only between
    /// episodes (at build time), never while a wait is under way.
    pub(crate) fn sum_over_ranks(&self, mine: usize) -> usize {
        let mut total = 0u64;
        let _call = mpi_call();
        self.channel
            .comm()
            .all_reduce_into(&(mine as u64), &mut total, SystemOperation::sum());
        total as usize
    }

    pub(crate) fn wait_until(&mut self, deadline: Option<Instant>) -> Result<u64> {
        let start = Instant::now();
        let channel = &self.channel;
        // Shared by the poll (which advances) and the stall warning (which reads), never at once.
        let step = RefCell::new(&mut self.step);
        let missing = || describe_ranks(&step.borrow().waiting_for(channel));
        let wait_for = WaitFor {
            what: self.algorithm.name(),
            episode: self.episode,
            rank: channel.rank(),
            oversubscribed: self.oversubscribed,
            missing: &missing,
        };
        if !poll_until(&wait_for, deadline, || step.borrow_mut().advance(channel)) {
            return Err(Error::Timeout {
                what: self.algorithm.name(),
                episode: self.episode,
                waiting_for: step.borrow().waiting_for(channel),
                after: start.elapsed(),
            });
        }
        self.episode += 1;
        Ok(self.episode - 1)
    }
}

/// "rank(s) [..]", or "the other ranks" when the algorithm cannot tell.
pub(crate) fn describe_ranks(ranks: &[usize]) -> String {
    if ranks.is_empty() {
        "the other ranks".to_owned()
    } else {
        format!("rank(s) {ranks:?}")
    }
}
