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

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpi::traits::Communicator;
use phasers::{Algorithm, Barrier, Participant, WaitPolicy};

use crate::error::{Error, Result};
use crate::mpi_env::Mpi;
use crate::process::{ProcessAlgorithm, ProcessBarrier};
use crate::threading::Threading;

/// [`FailureRecord::local_episode`] before any process step failed.
const NONE_FAILED: u64 = u64::MAX;

thread_local! {
    /// The deadline of the wait this thread is in. The completion action runs on the leader's own
    /// thread, inside its wait, so this is how the leader's deadline reaches the process step.
    static LEADER_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// What only the leader of an episode touches. It moves to the leader's cache with the
/// leadership, and shares no cache line with what the other threads read.
///
/// 128 bytes: two 64-byte lines, because x86's adjacent-line prefetcher pulls lines in pairs
/// (the padding crossbeam's `CachePadded` uses there too).
#[repr(align(128))]
struct LeaderState {
    barrier: ProcessBarrier,
    /// Local episodes whose completion has run: the number of the one running now.
    local_episodes: u64,
}

/// The outcome of a failed process step. Written only when a step fails, so that in the steady
/// state every thread's check after the release reads a line its cache already holds, instead of
/// fetching a word the leader wrote during the episode.
#[repr(align(128))]
struct FailureRecord {
    /// The local episode whose process step failed last, or [`NONE_FAILED`].
    local_episode: AtomicU64,
    /// Why it failed.
    why: Mutex<Option<Error>>,
}

/// The process step the leader of each local episode runs, and what it leaves for its threads.
struct ProcessSide {
    leader: Mutex<LeaderState>,
    failure: FailureRecord,
}

impl ProcessSide {
    /// The completion action: the leader's process step.
    fn step(&self) {
        let deadline = LEADER_DEADLINE.with(Cell::get);
        // The local barrier runs one completion at a time, so the lock is never contended.
        let mut leader = self.leader.lock().unwrap_or_else(|e| e.into_inner());
        let local_episode = leader.local_episodes;
        leader.local_episodes += 1;
        if let Err(error) = leader.barrier.wait_until(deadline) {
            *self.failure.why.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
            // Relaxed: the threads read it after the local release, which orders it.
            self.failure
                .local_episode
                .store(local_episode, Ordering::Relaxed);
        }
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
        let side = Arc::new(ProcessSide {
            leader: Mutex::new(LeaderState {
                barrier: process,
                local_episodes: 0,
            }),
            failure: FailureRecord {
                local_episode: AtomicU64::new(NONE_FAILED),
                why: Mutex::new(None),
            },
        });
        let mut local = Barrier::builder(self.threads)
            .algorithm(self.local)
            .wait_policy(self.policy);
        // A rank alone in the communicator has nobody to meet: the local barrier is the whole
        // barrier, and its leader skips the process step's lock, clock read and state, which
        // would otherwise travel to whichever thread leads.
        if !alone {
            let leader_side = Arc::clone(&side);
            local = local.on_completion(move || leader_side.step());
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
    side: Arc<ProcessSide>,
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
                local,
                side: Arc::clone(&self.side),
                parties: self.parties,
                failures_seen: 0,
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

/// What a [`CombinedParticipant::wait`] returns: the episode, and whether this thread led it.
///
/// ```
/// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2).build()?;
/// let waits = std::thread::scope(|s| {
///     let handles: Vec<_> = barrier.participants().into_iter()
///         .map(|mut p| s.spawn(move || p.wait().unwrap()))
///         .collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
/// });
/// assert!(waits.iter().all(|w| w.episode() == 0));
/// assert_eq!(waits.iter().filter(|w| w.is_leader()).count(), 1);
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CombinedWait {
    /// The episode completed across every rank, from 0.
    #[deprecated(
        since = "0.2.0",
        note = "use `episode()`: wait results are read by methods"
    )]
    pub episode: u64,
    /// Whether this thread ran the process step for its rank.
    #[deprecated(
        since = "0.2.0",
        note = "use `is_leader()`: wait results are read by methods"
    )]
    pub leader: bool,
}

// The fields stay public, deprecated, for one release; the methods are the names table's.
#[allow(deprecated)]
impl CombinedWait {
    pub(crate) fn new(episode: u64, leader: bool) -> Self {
        CombinedWait { episode, leader }
    }

    /// The episode completed across every rank, from 0.
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 1).build()?;
    /// let mut only = barrier.participants().pop().unwrap();
    /// assert_eq!(only.wait()?.episode(), 0);
    /// assert_eq!(only.wait()?.episode(), 1);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Whether this thread ran the process step for its rank (one thread per rank leads).
    ///
    /// ```
    /// use phasers_mpi::{CombinedBarrier, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 1).build()?;
    /// let mut only = barrier.participants().pop().unwrap();
    /// // The only thread of its rank leads every episode.
    /// assert!(only.wait()?.is_leader());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn is_leader(&self) -> bool {
        self.leader
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
    local: Participant,
    side: Arc<ProcessSide>,
    parties: usize,
    /// Local episodes whose process step failed: the process episode is the local one minus
    /// these, since a failed step leaves its process episode to the next local one.
    failures_seen: u64,
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
        self.local.rank()
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
        LEADER_DEADLINE.with(|d| d.set(deadline));
        let local = match deadline {
            None => self.local.wait(),
            Some(deadline) => self.local.wait_deadline(deadline),
        }?;
        // Written by a failing leader before the local release, which this thread has seen; the
        // next failure cannot overwrite it before this thread arrives again.
        let failure = &self.side.failure;
        if failure.local_episode.load(Ordering::Relaxed) == local.episode() {
            self.failures_seen += 1;
            let why = failure.why.lock().unwrap_or_else(|e| e.into_inner());
            return Err(why.clone().unwrap_or_else(|| Error::Broken {
                what: "combined barrier",
                reason: "the process step failed without saying why".to_owned(),
            }));
        }
        Ok(CombinedWait::new(
            local.episode() - self.failures_seen,
            local.is_leader(),
        ))
    }
}
