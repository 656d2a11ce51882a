//! The combined barrier of seed 001: threads × ranks.
//!
//! The threads of a rank meet through a [`phasers::Barrier`]. The thread that completes that
//! local gather becomes the episode's leader: inside the barrier's completion action it runs the
//! process step (a [`ProcessBarrier`] across the ranks), and only then does the local barrier
//! release its threads. No thread is special; with the default local algorithm
//! ([`SenseReversing`](phasers::Algorithm::SenseReversing)) whoever arrives last leads, so a
//! thread that finished early never waits on the network for a late sibling. (Tree algorithms
//! such as `McsTree`, `Dissemination` and `Tournament` always lead from local rank 0.)
//!
//! Because the leader can be any thread, the barrier needs [`Threading::Serialized`].
//!
//! The process step defaults to [`ProcessAlgorithm::Auto`]: the build measures every process
//! algorithm on the real ranks and keeps the fastest (on one node usually the shared-memory
//! [`NodeShm`](ProcessAlgorithm::NodeShm)); [`CombinedBarrier::process_chosen`] says which.
//!
//! ```
//! use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, Threading};
//!
//! # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
//! let mpi = Mpi::init(Threading::Serialized)?;
//! let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 4).build()?;
//! assert_eq!(barrier.process_algorithm(), ProcessAlgorithm::Auto);
//! assert_ne!(barrier.process_chosen(), ProcessAlgorithm::Auto);
//! std::thread::scope(|s| {
//!     for mut p in barrier.participants() {
//!         s.spawn(move || {
//!             for step in 0..100 {
//!                 assert_eq!(p.wait().unwrap().episode(), step);
//!             }
//!         });
//!     }
//! });
//! # Ok::<(), phasers_mpi::Error>(())
//! ```

use std::time::{Duration, Instant};

use mpi::traits::Communicator;
use phasers::{Algorithm, Barrier, WaitPolicy};

use crate::error::{Error, Result};
use crate::mpi_env::Mpi;
use crate::process::{ProcessAlgorithm, ProcessBarrier};
use crate::sync::Arc;
use crate::threading::Threading;

mod outcome;
// Reached by `loom_api.rs` too: the loom models run the failure record with a stub step.
pub(crate) mod process_side;

pub use outcome::CombinedWait;
use process_side::{LeaderStep, ProcessSide, Seat};

/// The leader's step is the process barrier's wait; its episode number is the threads' to count.
impl LeaderStep for ProcessBarrier {
    fn step(&mut self, deadline: Option<Instant>) -> Result<()> {
        self.wait_until(deadline).map(drop)
    }
}

/// Configures a [`CombinedBarrier`]: made by [`CombinedBarrier::builder`], one setter per
/// option, then [`build`](Self::build).
///
/// ```
/// use phasers::{Algorithm, WaitPolicy};
/// use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2)
///     .local(Algorithm::Dissemination)
///     .process(ProcessAlgorithm::Library)
///     .wait_policy(WaitPolicy::Spin)
///     .build()?;
/// assert_eq!(barrier.local_algorithm(), Algorithm::Dissemination);
/// assert_eq!(barrier.process_algorithm(), ProcessAlgorithm::Library);
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct CombinedBuilder<'a, C: Communicator> {
    mpi: &'a Mpi,
    comm: &'a C,
    threads: usize,
    local: Algorithm,
    process: ProcessAlgorithm,
    policy: WaitPolicy,
}

impl<'a, C: Communicator> CombinedBuilder<'a, C> {
    /// The shared-memory algorithm the threads of a rank meet with (default
    /// [`Algorithm::SenseReversing`], whose leader is the last arrival).
    ///
    /// ```
    /// use phasers::Algorithm;
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2)
    ///     .local(Algorithm::McsTree)
    ///     .build()?;
    /// assert_eq!(barrier.local_algorithm(), Algorithm::McsTree);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn local(mut self, algorithm: Algorithm) -> Self {
        self.local = algorithm;
        self
    }

    /// The algorithm across ranks (default [`ProcessAlgorithm::Auto`]: the fastest of the others,
    /// measured on the real ranks while the barrier is built, a few milliseconds, the same choice
    /// on every rank; see [`CombinedBarrier::process_chosen`]). Name one to skip the measurement.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let fixed = CombinedBarrier::builder(&mpi, mpi.world(), 2)
    ///     .process(ProcessAlgorithm::McsTree)
    ///     .build()?;
    /// assert_eq!(fixed.process_algorithm(), ProcessAlgorithm::McsTree);
    /// assert_eq!(fixed.process_chosen(), ProcessAlgorithm::McsTree);
    /// // Without a call to `process`, the build measures and keeps the fastest.
    /// let default = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// assert_eq!(default.process_algorithm(), ProcessAlgorithm::Auto);
    /// assert!(ProcessAlgorithm::ALL.contains(&default.process_chosen()));
    /// assert_ne!(default.process_chosen(), ProcessAlgorithm::Auto);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn process(mut self, algorithm: ProcessAlgorithm) -> Self {
        self.process = algorithm;
        self
    }

    /// How the threads of a rank wait for each other (default [`WaitPolicy::Auto`]).
    ///
    /// ```
    /// use phasers::WaitPolicy;
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2)
    ///     .wait_policy(WaitPolicy::Yield)
    ///     .build()?;
    /// assert_eq!(barrier.wait_policy(), WaitPolicy::Yield);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Builds the barrier. Collective over the communicator: every rank calls it, with the
    /// same or a different thread count.
    ///
    /// # Errors
    ///
    /// [`Error::Threading`] when there is more than one thread per rank and MPI provides less
    /// than [`Threading::Serialized`]; [`Error::Core`] for a thread count the local barrier
    /// rejects (0, or above [`phasers::barrier::MAX_PARTIES`]); [`Error::NodeMemory`] when
    /// [`ProcessAlgorithm::NodeShm`] was asked for and the ranks of a node cannot share memory
    /// (Auto leaves it out instead).
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Error, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 3).build()?;
    /// assert_eq!(barrier.threads(), 3);
    /// let none = CombinedBarrier::builder(&mpi, mpi.world(), 0).build();
    /// assert!(matches!(none, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn build(self) -> Result<CombinedBarrier> {
        if self.threads > 1 {
            self.mpi.require(
                Threading::Serialized,
                "a combined barrier with several threads",
            )?;
        }
        if self.threads == 0 {
            return Err(Error::invalid(
                "a combined barrier needs at least 1 thread per rank",
            ));
        }
        let mut process = ProcessBarrier::new(self.mpi, self.comm, self.process)?;
        process.share_cores_with_threads(self.threads);
        let chosen = process.chosen();
        let parties = process.sum_over_ranks(self.threads);
        let alone = process.parties() == 1;
        let side = ProcessSide::new(process);
        let mut local = Barrier::builder(self.threads)
            .algorithm(self.local)
            .wait_policy(self.policy);
        // A rank alone in the communicator has nobody to meet: the local barrier is the whole
        // barrier, and its leader skips the process step's lock, clock read and state, which
        // would otherwise travel to whichever thread leads.
        if !alone {
            local = ProcessSide::lead(&side, local);
        }
        let local = local.build()?;
        Ok(CombinedBarrier {
            local,
            side,
            process: self.process,
            chosen,
            parties,
        })
    }
}

/// A barrier across every thread of every rank of a communicator.
///
/// ```
/// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
/// let arrived = std::sync::atomic::AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for mut p in barrier.participants() {
///         let arrived = &arrived;
///         s.spawn(move || {
///             arrived.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///             p.wait().unwrap();
///             // Nobody leaves before every thread of every rank has arrived.
///             assert_eq!(arrived.load(std::sync::atomic::Ordering::Relaxed), 2);
///         });
///     }
/// });
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct CombinedBarrier {
    local: Barrier,
    side: Arc<ProcessSide<ProcessBarrier>>,
    process: ProcessAlgorithm,
    /// What runs across ranks: `process`, or what Auto chose.
    chosen: ProcessAlgorithm,
    /// Threads over all ranks.
    parties: usize,
}

impl CombinedBarrier {
    /// A builder for `threads` threads in this rank, across the ranks of `comm`.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// assert_eq!(barrier.threads(), 2);
    /// assert_eq!(barrier.process_algorithm(), ProcessAlgorithm::Auto);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn builder<'a, C: Communicator>(
        mpi: &'a Mpi,
        comm: &'a C,
        threads: usize,
    ) -> CombinedBuilder<'a, C> {
        CombinedBuilder {
            mpi,
            comm,
            threads,
            local: Algorithm::SenseReversing,
            process: ProcessAlgorithm::Auto,
            policy: WaitPolicy::Auto,
        }
    }

    /// The handles of this rank's threads, ranks `0..threads`; call once.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 3).build()?;
    /// let ranks: Vec<usize> = barrier.participants().iter().map(|p| p.thread_rank()).collect();
    /// assert_eq!(ranks, [0, 1, 2]);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn participants(&self) -> Vec<CombinedParticipant> {
        self.local
            .participants()
            .into_iter()
            .map(|local| CombinedParticipant {
                seat: Seat::new(local, Arc::clone(&self.side)),
                parties: self.parties,
            })
            .collect()
    }

    /// Threads in this rank (other ranks may have built the barrier with other counts).
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 3).build()?;
    /// assert_eq!(barrier.threads(), 3);
    /// assert_eq!(barrier.participants().len(), 3);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn threads(&self) -> usize {
        self.local.parties()
    }

    /// How many threads take part over all ranks: the sum of every rank's
    /// [`threads`](Self::threads) (ranks × threads when every rank brings the same number).
    /// Counted once, when the barrier is built.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 3).build()?;
    /// // Every rank of this example brings 3 threads.
    /// assert_eq!(barrier.parties(), 3 * mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.parties
    }

    /// How the threads of this rank wait for each other (see
    /// [`CombinedBuilder::wait_policy`]).
    ///
    /// ```
    /// use phasers::WaitPolicy;
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// assert_eq!(barrier.wait_policy(), WaitPolicy::Auto);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn wait_policy(&self) -> WaitPolicy {
        self.local.wait_policy()
    }

    /// The local algorithm.
    ///
    /// ```
    /// use phasers::Algorithm;
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// assert_eq!(barrier.local_algorithm(), Algorithm::SenseReversing);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn local_algorithm(&self) -> Algorithm {
        self.local.algorithm()
    }

    /// The algorithm across ranks that was asked for ([`Auto`](ProcessAlgorithm::Auto) unless
    /// [`CombinedBuilder::process`] named another); [`process_chosen`](Self::process_chosen) says
    /// what runs.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2)
    ///     .process(ProcessAlgorithm::Library)
    ///     .build()?;
    /// assert_eq!(barrier.process_algorithm(), ProcessAlgorithm::Library);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn process_algorithm(&self) -> ProcessAlgorithm {
        self.process
    }

    /// The algorithm that runs across ranks: [`process_algorithm`](Self::process_algorithm), or
    /// the one [`Auto`](ProcessAlgorithm::Auto) chose, the same on every rank (as
    /// [`ProcessBarrier::chosen`]).
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// if mpi.size() == 1 {
    ///     // One rank has nobody to wait for: dissemination has no rounds and makes no MPI call.
    ///     assert_eq!(barrier.process_chosen(), ProcessAlgorithm::Dissemination);
    /// }
    /// assert_ne!(barrier.process_chosen(), ProcessAlgorithm::Auto);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn process_chosen(&self) -> ProcessAlgorithm {
        self.chosen
    }
}

/// One thread's handle on a [`CombinedBarrier`], from [`CombinedBarrier::participants`]; move
/// it into its thread.
///
/// ```
/// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
/// std::thread::scope(|s| {
///     for mut p in barrier.participants() {
///         s.spawn(move || {
///             assert_eq!(p.wait().unwrap().episode(), 0);
///             assert_eq!(p.wait().unwrap().episode(), 1);
///         });
///     }
/// });
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct CombinedParticipant {
    seat: Seat<ProcessBarrier>,
    parties: usize,
}

impl CombinedParticipant {
    /// This thread's rank among the threads of its process.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// let participants = barrier.participants();
    /// assert_eq!(participants[1].thread_rank(), 1);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn thread_rank(&self) -> usize {
        self.seat.thread_rank()
    }

    /// How many threads take part over all ranks, as [`CombinedBarrier::parties`].
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// let participants = barrier.participants();
    /// assert_eq!(participants[0].parties(), barrier.parties());
    /// assert_eq!(participants[0].parties(), 2 * mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.parties
    }

    /// Waits until every thread of every rank has arrived.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// let count = AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for mut p in barrier.participants() {
    ///         let count = &count;
    ///         s.spawn(move || {
    ///             for step in 1..=3 {
    ///                 count.fetch_add(1, Relaxed);
    ///                 p.wait().unwrap();
    ///                 // Both threads counted this step before either went on.
    ///                 assert_eq!(count.load(Relaxed), 2 * step);
    ///                 p.wait().unwrap();
    ///             }
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Core`] with [`phasers::Error::Broken`] when a thread of this rank panicked or
    /// dropped its handle; the errors of [`wait_deadline`](Self::wait_deadline) never happen
    /// without a deadline.
    pub fn wait(&mut self) -> Result<CombinedWait> {
        self.wait_until(None)
    }

    /// [`wait`](Self::wait) for at most `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers_mpi::{CombinedBarrier, Error, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// let mut ps = barrier.participants();
    /// let (mut second, mut first) = (ps.pop().unwrap(), ps.pop().unwrap());
    /// // Thread 1 has not arrived: the wait gives up, and thread 0's arrival stays in place.
    /// let early = first.wait_timeout(Duration::from_millis(1));
    /// assert!(matches!(early, Err(Error::Core(phasers::Error::Timeout { .. }))));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || second.wait().unwrap());
    ///     let done = first.wait_timeout(Duration::from_secs(10)).unwrap();
    ///     assert_eq!(done.episode(), 0);
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait_deadline`](Self::wait_deadline).
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<CombinedWait> {
        self.wait_until(Instant::now().checked_add(timeout))
    }

    /// [`wait`](Self::wait) until `deadline`.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
    /// let deadline = Instant::now() + Duration::from_secs(10);
    /// std::thread::scope(|s| {
    ///     for mut p in barrier.participants() {
    ///         s.spawn(move || assert_eq!(p.wait_deadline(deadline).unwrap().episode(), 0));
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Core`] with [`phasers::Error::Timeout`] when threads of this rank are missing;
    /// [`Error::Timeout`] (for every thread of the rank) when the leader's process step ran out
    /// of time. Either way the arrival stays in place: waiting again completes the same episode.
    pub fn wait_deadline(&mut self, deadline: Instant) -> Result<CombinedWait> {
        self.wait_until(Some(deadline))
    }

    fn wait_until(&mut self, deadline: Option<Instant>) -> Result<CombinedWait> {
        self.seat.wait_until(deadline)
    }
}
