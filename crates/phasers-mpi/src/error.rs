//! The crate's one error type.

use std::time::Duration;

use crate::Threading;

/// Everything that can go wrong in `phasers-mpi`.
///
/// Every message says what happened and what to do. Errors of the shared-memory layer (a broken
/// local barrier, a bad argument to a thread team) arrive as [`Error::Core`].
///
/// ```
/// use phasers_mpi::{Error, Mpi, Threading};
///
/// # std::env::remove_var(phasers_mpi::SINGLETON_ENV);
/// // Run without `mpirun` and without PHASERS_MPI_SINGLETON=1:
/// let error = Mpi::init(Threading::Single).err().unwrap();
/// assert!(matches!(error, Error::NotLaunched { .. }));
/// // The message says how to launch the program.
/// assert!(error.to_string().contains("mpirun -np 2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The program was not started by an MPI launcher, so it would run as one lonely rank.
    #[error(
        "this program was not started by an MPI launcher (none of {checked} is set); run it as \
         `mpirun -np 2 {program}` (as root, add --allow-run-as-root), or set \
         PHASERS_MPI_SINGLETON=1 to run it as a single rank on purpose"
    )]
    NotLaunched {
        /// The launcher variables that were looked for.
        checked: &'static str,
        /// The program's name, for the suggested command.
        program: String,
    },

    /// MPI was already initialized (by this crate or by other code in the process).
    #[error(
        "MPI is already initialized in this process; if an earlier Mpi::init did it, keep that \
         `Mpi` and pass references to it around; if other code owns MPI (rsmpi's \
         mpi::initialize_with_threading, or MPI_Init_thread in C), call Mpi::adopt() instead, \
         which uses MPI without finalizing it"
    )]
    AlreadyInitialized,

    /// [`Mpi::adopt`](crate::Mpi::adopt) found no running MPI to use.
    #[error(
        "MPI is not initialized in this process, so there is nothing to adopt; initialize it \
         first (rsmpi: mpi::initialize_with_threading(Threading::Serialized), C: \
         MPI_Init_thread) and keep its owner alive while phasers-mpi objects exist, or call \
         Mpi::init to let phasers-mpi initialize and finalize MPI itself"
    )]
    NotInitialized,

    /// MPI was finalized in this process (its owner was dropped or called `MPI_Finalize`); MPI
    /// cannot start again.
    #[error(
        "MPI was already finalized in this process and cannot start again; adopt or initialize MPI \
         before its owner finalizes it (dropping rsmpi's Universe or calling MPI_Finalize), and \
         drop every phasers-mpi object before that"
    )]
    Finalized,

    /// The MPI library cannot give the threading level an object needs.
    #[error(
        "{needed_by} needs MPI thread support {needed:?}, but MPI provides only {provided:?}; \
         ask for Threading::{needed:?} (or higher) where MPI is initialized (Mpi::init, or for an \
         adopted MPI its owner's mpi::initialize_with_threading or MPI_Init_thread), and if MPI \
         still provides less, use an MPI library built with thread support (Debian's Open MPI \
         has it) or one thread per rank"
    )]
    Threading {
        /// The object or call that needs the level.
        needed_by: &'static str,
        /// The level it needs.
        needed: Threading,
        /// The level MPI gave.
        provided: Threading,
    },

    /// An argument was out of range or inconsistent; the message names it and the accepted range.
    #[error("invalid argument: {message}")]
    InvalidArgument {
        /// What was wrong and what is accepted.
        message: String,
    },

    /// The deadline passed before the other ranks' messages arrived.
    ///
    /// `waiting_for` lists the ranks (of the object's communicator) whose message this rank was
    /// waiting for; a rank listed may itself be waiting for a slower one. The wait keeps its
    /// place: waiting again on the same object continues the same episode.
    ///
    /// If a rank stopped taking episodes for good, end the job rather than build a new object
    /// among the same ranks: that rank's communicator may still receive tokens of the unfinished
    /// episode, which a communicator built later could be handed. (This rank keeps the object's
    /// communicator when the object is dropped after a timeout, for the same reason.)
    #[error(
        "timed out after {after:?} in {what}, episode {episode}: still waiting for rank(s) \
         {waiting_for:?}; a rank that died ends the job through mpirun, a slow one can be waited \
         for again"
    )]
    Timeout {
        /// The operation that timed out.
        what: &'static str,
        /// The episode (call number) it was in.
        episode: u64,
        /// Ranks whose messages had not arrived.
        waiting_for: Vec<usize>,
        /// How long the call waited.
        after: Duration,
    },

    /// Members of one collective call passed arguments that must agree but do not.
    ///
    /// In checked mode every member of the hybrid team, on every rank, gets the same error before
    /// any buffer is touched.
    #[error(
        "mismatched {what}: member {rank} passed {ours} but member {other} passed {theirs}; \
         every member of one collective call must pass the same {what}"
    )]
    Mismatch {
        /// What differs: `"collective"`, `"element type"`, `"length"`, `"root"`, `"operation"`.
        what: &'static str,
        /// A member that took part in the call (global rank in the hybrid team).
        rank: usize,
        /// What `rank` passed.
        ours: String,
        /// A member whose argument differs.
        other: usize,
        /// What `other` passed.
        theirs: String,
    },

    /// An object can no longer be used: one of its local participants panicked or was dropped,
    /// or an earlier call timed out in a step that cannot be resumed.
    #[error("{what} is broken: {reason}; build a new one and restart the computation")]
    Broken {
        /// The object.
        what: &'static str,
        /// Why.
        reason: String,
    },

    /// [`ProcessAlgorithm::NodeShm`](crate::ProcessAlgorithm::NodeShm) was asked for, and the
    /// ranks of a node could not map one file together (every rank of the communicator gets
    /// this error).
    ///
    /// ```
    /// use phasers_mpi::Error;
    ///
    /// let error = Error::NodeMemory { reason: "cannot create /dev/shm/x: No space left".into() };
    /// assert!(error.to_string().contains("ProcessAlgorithm::Auto"));
    /// ```
    #[error(
        "the ranks of a node cannot share memory for the node-shm barrier: {reason}; make /dev/shm \
         (or the temporary directory) writable with room to spare, or build with \
         ProcessAlgorithm::Auto, which then leaves node-shm out"
    )]
    NodeMemory {
        /// What failed, on the first rank that failed.
        reason: String,
    },

    /// An error of the shared-memory layer (the `phasers` crate).
    #[error(transparent)]
    Core(#[from] phasers::Error),
}

/// `Result` with this crate's [`Error`].
///
/// ```
/// use phasers_mpi::{Mpi, Result, Threading};
///
/// fn world_size() -> Result<usize> {
///     let mpi = Mpi::init(Threading::Single)?;
///     Ok(mpi.size())
/// }
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// assert_eq!(world_size()?, 1);
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            message: message.into(),
        }
    }
}
