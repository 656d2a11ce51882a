//! Barriers across MPI processes: dissemination and MCS tree over point-to-point messages, a
//! hierarchical barrier that meets in shared memory on each node, the MPI library's own barrier,
//! and `Auto`, which measures them at build time and keeps the fastest.
//!
//! | algorithm | messages per rank per episode | critical path |
//! |---|---|---|
//! | [`Dissemination`](ProcessAlgorithm::Dissemination) | ceil(log2 P) sends and receives | ceil(log2 P) message latencies |
//! | [`McsTree`](ProcessAlgorithm::McsTree) | at most 4 arrivals in, 1 out; 1 wake-up in, 2 out | log4 P up + log2 P down |
//! | [`NodeShm`](ProcessAlgorithm::NodeShm) | none inside a node; the node leader: ceil(log2 N) for N nodes | one cache-line transfer on one node; else 2 + ceil(log2 N) message latencies |
//! | [`Library`](ProcessAlgorithm::Library) | whatever `MPI_Ibarrier` does | MPI's choice |
//! | [`Auto`](ProcessAlgorithm::Auto) | those of the one it chose | the fastest measured |
//!
//! Point-to-point tokens land in receives posted ahead (`MPI_Recv_init`), so each costs one
//! `MPI_Test`. Every wait polls, then yields, then sleeps (see the crate docs), so ranks that
//! outnumber the cores do not starve each other, and a stalled wait warns on stderr.
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

mod algorithm;
mod auto;
mod dissemination;
mod library;
mod mcs_tree;
// Reached by `loom_api.rs` too: the loom models run its protocol.
pub(crate) mod node_gather;
mod node_shm;
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

pub use algorithm::ProcessAlgorithm;
use auto::{Candidate, Choice};
use step::{describe_ranks, ProcessStep};

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
    /// Declared before the channel, so that its posted receives are freed before the channel
    /// frees the communicator.
    step: Box<dyn ProcessStep>,
    channel: Channel,
    algorithm: ProcessAlgorithm,
    /// What runs: `algorithm`, or Auto's choice.
    chosen: ProcessAlgorithm,
    /// Auto's measurements: seconds per episode of each candidate.
    calibration: Vec<(ProcessAlgorithm, Duration)>,
    /// Episodes completed.
    episode: u64,
    oversubscribed: bool,
    /// This node's ranks and cores, to judge oversubscription again for threaded callers.
    node: NodeShape,
}

impl ProcessBarrier {
    /// Builds the barrier on a private duplicate of `comm`. Collective: every rank of `comm`
    /// calls it.
    ///
    /// # Errors
    ///
    /// [`Error::NodeMemory`] when [`NodeShm`](ProcessAlgorithm::NodeShm) was asked for and the ranks
    /// of a node cannot share memory (every rank gets it). [`Auto`](ProcessAlgorithm::Auto)
    /// then leaves the node-shm barrier out instead.
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
        let _ = mpi;
        Self::build(comm, algorithm, None)
    }

    /// [`new`](Self::new), treating every `ranks_per_node` consecutive ranks of a node as a node
    /// of their own: exercises the node-shm barrier's network step on one machine.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let mut barrier =
    ///     ProcessBarrier::emulating_nodes(&mpi, mpi.world(), ProcessAlgorithm::NodeShm, 1)?;
    /// assert_eq!(barrier.wait()?, 0);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    #[doc(hidden)]
    pub fn emulating_nodes(
        mpi: &Mpi,
        comm: &impl Communicator,
        algorithm: ProcessAlgorithm,
        ranks_per_node: usize,
    ) -> Result<ProcessBarrier> {
        let _ = mpi;
        Self::build(comm, algorithm, Some(ranks_per_node.max(1)))
    }

    fn build(
        comm: &impl Communicator,
        algorithm: ProcessAlgorithm,
        ranks_per_node: Option<usize>,
    ) -> Result<ProcessBarrier> {
        let channel = Channel::duplicate(comm);
        let node = NodeShape::of(&channel);
        let oversubscribed = node.oversubscribed(1);
        let Choice {
            chosen,
            calibration,
            candidate,
        } = match algorithm {
            ProcessAlgorithm::Auto => auto::choose(channel, ranks_per_node, oversubscribed)?,
            concrete => Choice {
                chosen: concrete,
                calibration: Vec::new(),
                candidate: Candidate {
                    step: concrete.step(&channel, ranks_per_node)?,
                    channel,
                },
            },
        };
        Ok(ProcessBarrier {
            step: candidate.step,
            channel: candidate.channel,
            oversubscribed,
            node,
            algorithm,
            chosen,
            calibration,
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

    /// The algorithm that runs: [`algorithm`](Self::algorithm), or the one
    /// [`Auto`](ProcessAlgorithm::Auto) chose (the same on every rank).
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Auto)?;
    /// assert_eq!(barrier.algorithm(), ProcessAlgorithm::Auto);
    /// assert_ne!(barrier.chosen(), ProcessAlgorithm::Auto);
    /// let fixed = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::McsTree)?;
    /// assert_eq!(fixed.chosen(), ProcessAlgorithm::McsTree);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn chosen(&self) -> ProcessAlgorithm {
        self.chosen
    }

    /// What [`Auto`](ProcessAlgorithm::Auto) measured: each candidate and its time per episode
    /// (the slowest rank's, the fastest of a few batches), the same on every rank. Empty for the
    /// other algorithms, and for one rank, where Auto takes dissemination (no rounds, no MPI
    /// call) without measuring.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// let barrier = ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Auto)?;
    /// if mpi.size() == 1 {
    ///     assert!(barrier.calibration().is_empty());
    ///     assert_eq!(barrier.chosen(), ProcessAlgorithm::Dissemination);
    /// } else {
    ///     // The chosen one is the fastest measured.
    ///     let best = barrier.calibration().iter().min_by_key(|(_, t)| *t).unwrap();
    ///     assert_eq!(best.0, barrier.chosen());
    /// }
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn calibration(&self) -> &[(ProcessAlgorithm, Duration)] {
        &self.calibration
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

    /// Waits as a barrier whose ranks each bring `threads` threads: when those outnumber the
    /// node's cores, a wait polls briefly and then yields, instead of spinning on a core a sibling
    /// thread or another rank's leader needs (the combined barrier's leader step).
    pub(crate) fn share_cores_with_threads(&mut self, threads: usize) {
        self.oversubscribed = self.node.oversubscribed(threads);
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
        // Alone, there is nobody to wait for: no step, no poll loop (the loop's set-up cost three
        // times `MPI_Barrier` on a communicator of one, 8 ns against 2.8 ns, in the bench).
        if self.channel.size() == 1 {
            self.episode += 1;
            return Ok(self.episode - 1);
        }
        // Only a wait with a deadline can time out and report how long it took; the others skip
        // the clock read (about a tenth of a two-rank node-shm episode).
        let start = deadline.map(|_| Instant::now());
        let channel = &self.channel;
        // Shared by the poll (which advances) and the stall warning (which reads), never at once.
        let step = RefCell::new(&mut self.step);
        let chosen = self.chosen;
        let auto = self.algorithm == ProcessAlgorithm::Auto;
        let missing = || {
            let ranks = describe_ranks(&step.borrow().waiting_for(channel));
            if auto {
                format!("{ranks} (auto chose {})", chosen.name())
            } else {
                ranks
            }
        };
        let wait_for = WaitFor {
            what: self.algorithm.name(),
            episode: self.episode,
            rank: channel.rank(),
            oversubscribed: self.oversubscribed,
            missing: &missing,
        };
        if !poll_until(&wait_for, deadline, || step.borrow_mut().advance(channel)) {
            channel.keep_communicator();
            return Err(Error::Timeout {
                what: self.algorithm.name(),
                episode: self.episode,
                waiting_for: step.borrow().waiting_for(channel),
                after: start.map_or(Duration::ZERO, |start| start.elapsed()),
            });
        }
        self.episode += 1;
        Ok(self.episode - 1)
    }
}
