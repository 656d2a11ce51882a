//! Starting MPI: the launcher check, the threading level, and the world communicator.

use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator;

use crate::error::{Error, Result};
use crate::threading::{set_provided, Threading};

/// Environment variables that MPI launchers set in every process they start (Open MPI, PMIx,
/// MPICH/Hydra and Slurm's PMI).
const LAUNCHER_VARIABLES: [&str; 5] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMIX_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "MPI_LOCALNRANKS",
];
const LAUNCHER_LIST: &str = "OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE, PMI_RANK, MPI_LOCALNRANKS";
/// Set to `1` to run a program that was not launched by `mpirun` as a single rank.
///
/// ```
/// use phasers_mpi::{Mpi, Threading, SINGLETON_ENV};
///
/// assert_eq!(SINGLETON_ENV, "PHASERS_MPI_SINGLETON");
/// std::env::set_var(SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Single)?;
/// assert_eq!(mpi.size(), 1);
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub const SINGLETON_ENV: &str = "PHASERS_MPI_SINGLETON";

/// The running MPI environment. Create one at the start of `main`; dropping it finalizes MPI.
///
/// The examples of this crate run under `cargo test`, without `mpirun`: each sets
/// [`SINGLETON_ENV`] (in a hidden line) and runs as a single rank. Started by `mpirun -np 4`,
/// the same code runs on 4 ranks.
///
/// ```
/// use phasers_mpi::{Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// assert!(mpi.rank() < mpi.size());
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct Mpi {
    world: SimpleCommunicator,
    provided: Threading,
    // Last, so MPI is finalized after the world handle is gone.
    _universe: Universe,
}

impl Mpi {
    /// Initializes MPI, asking for the thread support `needed`.
    ///
    /// Every object of this crate whose leader can be any thread (the combined barrier, hybrid
    /// teams) needs [`Threading::Serialized`]; our own MPI calls are serialized by a process-wide
    /// lock unless MPI provides [`Threading::Multiple`].
    ///
    /// # Errors
    ///
    /// - [`Error::NotLaunched`] when no MPI launcher started the program and
    ///   `PHASERS_MPI_SINGLETON=1` is not set;
    /// - [`Error::Threading`] when MPI provides less than `needed`;
    /// - [`Error::AlreadyInitialized`] when MPI is already running in this process.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{Error, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// assert!(mpi.threading() >= Threading::Serialized);
    /// // Once per process: keep the first `Mpi` and lend it out.
    /// assert!(matches!(Mpi::init(Threading::Single), Err(Error::AlreadyInitialized)));
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn init(needed: Threading) -> Result<Mpi> {
        if !launched_by_mpirun() && !singleton_allowed() {
            return Err(Error::NotLaunched {
                checked: LAUNCHER_LIST,
                program: std::env::args()
                    .next()
                    .unwrap_or_else(|| "./program".to_owned()),
            });
        }
        let (universe, provided) =
            mpi::initialize_with_threading(needed.to_mpi()).ok_or(Error::AlreadyInitialized)?;
        let provided = Threading::from_mpi(provided);
        set_provided(provided);
        if provided < needed {
            return Err(Error::Threading {
                needed_by: "Mpi::init",
                needed,
                provided,
            });
        }
        Ok(Mpi {
            world: universe.world(),
            provided,
            _universe: universe,
        })
    }

    /// `MPI_COMM_WORLD`.
    ///
    /// ```
    /// use phasers_mpi::mpi::traits::Communicator;
    /// use phasers_mpi::{Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// assert_eq!(mpi.world().size() as usize, mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// This process's rank in the world.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// // A single rank is rank 0.
    /// assert_eq!(mpi.rank(), 0);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// The number of processes in the world.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Single)?;
    /// // Run without `mpirun`, as this example is: one process.
    /// assert_eq!(mpi.size(), 1);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// The thread support MPI provides: at least what [`Mpi::init`] asked for.
    ///
    /// ```
    /// use phasers_mpi::{Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Funneled)?;
    /// assert!(mpi.threading() >= Threading::Funneled);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn threading(&self) -> Threading {
        self.provided
    }

    /// Returns [`Error::Threading`] unless MPI provides at least `needed`.
    pub(crate) fn require(&self, needed: Threading, needed_by: &'static str) -> Result<()> {
        if self.provided < needed {
            return Err(Error::Threading {
                needed_by,
                needed,
                provided: self.provided,
            });
        }
        Ok(())
    }
}

/// Whether an MPI launcher started this process: it sets one of `OMPI_COMM_WORLD_SIZE`,
/// `PMIX_RANK`, `PMI_SIZE`, `PMI_RANK` or `MPI_LOCALNRANKS`.
///
/// ```
/// use phasers_mpi::{launched_by_mpirun, Error, Mpi, Threading};
///
/// // `cargo test` runs this example without a launcher...
/// assert!(!launched_by_mpirun());
/// # std::env::remove_var(phasers_mpi::SINGLETON_ENV);
/// // ...so `Mpi::init` refuses, unless asked to run as a single rank.
/// assert!(matches!(Mpi::init(Threading::Single), Err(Error::NotLaunched { .. })));
/// ```
pub fn launched_by_mpirun() -> bool {
    LAUNCHER_VARIABLES
        .iter()
        .any(|name| std::env::var_os(name).is_some())
}

fn singleton_allowed() -> bool {
    std::env::var(SINGLETON_ENV).is_ok_and(|v| v == "1")
}
