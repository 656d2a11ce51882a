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
//! ```no_run
//! use phasers_mpi::{CombinedBarrier, Mpi, ProcessAlgorithm, Threading};
//!
//! let mpi = Mpi::init(Threading::Serialized)?;
//! let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 4)
//!     .process(ProcessAlgorithm::Dissemination)
//!     .build()?;
//! std::thread::scope(|s| {
//!     for mut p in barrier.participants() {
//!         s.spawn(move || {
//!             for _ in 0..1000 {
//!                 p.wait().unwrap();
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

/// Marks an episode whose process step failed in [`ProcessSide::completed`].
const FAILED: u64 = u64::MAX;

thread_local! {
    /// The deadline of the wait this thread is in. The completion action runs on the leader's own
    /// thread, inside its wait, so this is how the leader's deadline reaches the process step.
    static LEADER_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// What the leader of an episode leaves for its threads.
struct ProcessSide {
    barrier: Mutex<ProcessBarrier>,
    /// The process episode the last local episode completed, or [`FAILED`].
    completed: AtomicU64,
    /// Why the last process step failed.
    failure: Mutex<Option<Error>>,
}

impl ProcessSide {
    /// The completion action: the leader's process step.
    fn step(&self) {
        let deadline = LEADER_DEADLINE.with(Cell::get);
        // The local barrier runs one completion at a time, so the lock is never contended.
        let mut barrier = self.barrier.lock().unwrap_or_else(|e| e.into_inner());
        match barrier.wait_until(deadline) {
            Ok(episode) => self.completed.store(episode, Ordering::Relaxed),
            Err(error) => {
                *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
                self.completed.store(FAILED, Ordering::Relaxed);
            }
        }
    }
}

/// Configures a [`CombinedBarrier`].
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
    pub fn local(mut self, algorithm: Algorithm) -> Self {
        self.local = algorithm;
        self
    }

    /// The algorithm across ranks (default [`ProcessAlgorithm::Dissemination`]).
    pub fn process(mut self, algorithm: ProcessAlgorithm) -> Self {
        self.process = algorithm;
        self
    }

    /// How the threads of a rank wait for each other (default [`WaitPolicy::Auto`]).
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
    /// rejects (0, or above [`phasers::barrier::MAX_PARTIES`]).
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
        let process = ProcessBarrier::new(self.mpi, self.comm, self.process)?;
        let side = Arc::new(ProcessSide {
            barrier: Mutex::new(process),
            completed: AtomicU64::new(0),
            failure: Mutex::new(None),
        });
        let leader_side = Arc::clone(&side);
        let local = Barrier::builder(self.threads)
            .algorithm(self.local)
            .wait_policy(self.policy)
            .on_completion(move || leader_side.step())
            .build()?;
        Ok(CombinedBarrier {
            local,
            side,
            process: self.process,
        })
    }
}

/// A barrier across every thread of every rank of a communicator.
pub struct CombinedBarrier {
    local: Barrier,
    side: Arc<ProcessSide>,
    process: ProcessAlgorithm,
}

impl CombinedBarrier {
    /// A builder for `threads` threads in this rank, across the ranks of `comm`.
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
            process: ProcessAlgorithm::Dissemination,
            policy: WaitPolicy::Auto,
        }
    }

    /// The handles of this rank's threads, ranks `0..threads`; call once.
    pub fn participants(&self) -> Vec<CombinedParticipant> {
        self.local
            .participants()
            .into_iter()
            .map(|local| CombinedParticipant {
                local,
                side: Arc::clone(&self.side),
            })
            .collect()
    }

    /// Threads per rank.
    pub fn threads(&self) -> usize {
        self.local.parties()
    }

    /// The local algorithm.
    pub fn local_algorithm(&self) -> Algorithm {
        self.local.algorithm()
    }

    /// The algorithm across ranks.
    pub fn process_algorithm(&self) -> ProcessAlgorithm {
        self.process
    }
}

/// What a [`CombinedParticipant::wait`] returns.
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
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Whether this thread ran the process step for its rank (one thread per rank leads).
    pub fn is_leader(&self) -> bool {
        self.leader
    }
}

/// One thread's handle on a [`CombinedBarrier`].
pub struct CombinedParticipant {
    local: Participant,
    side: Arc<ProcessSide>,
}

impl CombinedParticipant {
    /// This thread's rank among the threads of its process.
    pub fn thread_rank(&self) -> usize {
        self.local.rank()
    }

    /// Waits until every thread of every rank has arrived.
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
    /// # Errors
    ///
    /// As [`wait_deadline`](Self::wait_deadline).
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<CombinedWait> {
        self.wait_until(Instant::now().checked_add(timeout))
    }

    /// [`wait`](Self::wait) until `deadline`.
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
        // Written by the leader before the local release, which this thread has seen; the next
        // leader cannot overwrite it before this thread arrives again.
        let episode = self.side.completed.load(Ordering::Relaxed);
        if episode == FAILED {
            let failure = self.side.failure.lock().unwrap_or_else(|e| e.into_inner());
            return Err(failure.clone().unwrap_or_else(|| Error::Broken {
                what: "combined barrier",
                reason: "the process step failed without saying why".to_owned(),
            }));
        }
        Ok(CombinedWait::new(episode, local.is_leader()))
    }
}
