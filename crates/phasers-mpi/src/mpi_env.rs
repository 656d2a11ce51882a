//! Starting MPI, or adopting an MPI that other code started: the launcher check, the threading
//! level, and the world communicator.

use std::ffi::c_int;
use std::mem::ManuallyDrop;

use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, FromRaw};

use crate::error::{Error, Result};
use crate::threading::{mpi_call, set_provided, Threading};

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

/// The running MPI environment, which every object of this crate is built with.
///
/// Two ways to get one:
///
/// - [`Mpi::init`] starts MPI; dropping that `Mpi` finalizes MPI. Create it at the start of
///   `main` and lend it out.
/// - [`Mpi::adopt`] uses an MPI that other code started (rsmpi's
///   `mpi::initialize_with_threading`, or `MPI_Init_thread` in C or Fortran) and never finalizes
///   it: the owner does, after every object of this crate is gone.
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
    // Last, so MPI is finalized after the world handle is gone. `None` for an adopted MPI, which
    // its owner finalizes.
    universe: Option<Universe>,
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
    /// - [`Error::AlreadyInitialized`] when MPI is already running in this process: keep the
    ///   first `Mpi`, or, when other code started MPI, use [`Mpi::adopt`];
    /// - [`Error::Finalized`] when MPI was finalized already (it cannot start again).
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{Error, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// assert!(mpi.threading() >= Threading::Serialized);
    /// // Once per process: keep the first `Mpi` and lend it out...
    /// let again = Mpi::init(Threading::Single).err().unwrap();
    /// assert!(matches!(again, Error::AlreadyInitialized));
    /// // ...or, where other code started MPI, adopt it, as the message says.
    /// assert!(again.to_string().contains("Mpi::adopt()"));
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
        if mpi::environment::is_finalized() {
            return Err(Error::Finalized);
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
            universe: Some(universe),
        })
    }

    /// Uses the MPI that other code in this process initialized, without taking it over: for a
    /// program that already calls rsmpi's `mpi::initialize_with_threading` (or a C or Fortran
    /// code that calls `MPI_Init_thread` and then this crate, through the C ABI).
    ///
    /// It reads the thread support MPI provides (`MPI_Query_thread`) and serializes this crate's
    /// MPI calls accordingly, as [`Mpi::init`] does; objects that need more than that say so with
    /// [`Error::Threading`] when built, so ask the owner to initialize with
    /// `Threading::Serialized` for the combined barrier and hybrid teams with several threads.
    /// Dropping the returned `Mpi` finalizes nothing. The owner must keep MPI running until every
    /// object of this crate is dropped: finalize last (in rsmpi, drop the `Universe` last).
    ///
    /// Objects are built on any communicator the program has (the world, a duplicate, a split);
    /// each duplicates it, so their messages never mix with the program's own. Under
    /// [`Threading::Serialized`] this crate serializes only its own MPI calls: the program must
    /// not call MPI while another of its threads is inside a wait or collective of this crate,
    /// or must initialize MPI with [`Threading::Multiple`].
    ///
    /// No launcher check: whoever initialized MPI decided how the program runs.
    ///
    /// # Errors
    ///
    /// - [`Error::NotInitialized`] when MPI has not been initialized yet;
    /// - [`Error::Finalized`] when MPI was already finalized.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::mpi::traits::Communicator;
    /// use phasers_mpi::{mpi, Error, Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// // Nothing to adopt before MPI starts.
    /// assert!(matches!(Mpi::adopt(), Err(Error::NotInitialized)));
    ///
    /// // The program's own start, as before: rsmpi owns MPI.
    /// let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Serialized).unwrap();
    /// let world = universe.world();
    /// // Added: this crate uses that MPI, and builds on the program's communicator.
    /// let phasers = Mpi::adopt()?;
    /// assert!(!phasers.owns_mpi());
    /// assert_eq!(phasers.size(), world.size() as usize);
    /// assert!(phasers.threading() >= Threading::Serialized);
    /// let mut barrier = ProcessBarrier::new(&phasers, &world, ProcessAlgorithm::Dissemination)?;
    /// assert_eq!(barrier.wait()?, 0);
    ///
    /// // Our objects first, then the owner finalizes MPI.
    /// drop(barrier);
    /// drop(phasers);
    /// drop(universe);
    /// assert!(matches!(Mpi::adopt(), Err(Error::Finalized)));
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn adopt() -> Result<Mpi> {
        // MPI_Initialized stays true after MPI_Finalize, so finalized is checked first.
        if mpi::environment::is_finalized() {
            return Err(Error::Finalized);
        }
        if !mpi::environment::is_initialized() {
            return Err(Error::NotInitialized);
        }
        let provided = Threading::from_mpi(mpi::environment::threading_support());
        set_provided(provided);
        Ok(Mpi {
            world: SimpleCommunicator::world(),
            provided,
            universe: None,
        })
    }

    /// Whether dropping this `Mpi` finalizes MPI: true for [`Mpi::init`], false for
    /// [`Mpi::adopt`].
    ///
    /// ```
    /// use phasers_mpi::{Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let owner = Mpi::init(Threading::Serialized)?;
    /// assert!(owner.owns_mpi());
    /// // Another part of the program borrows the same MPI.
    /// let borrowed = Mpi::adopt()?;
    /// assert!(!borrowed.owns_mpi());
    /// assert_eq!(borrowed.threading(), owner.threading());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn owns_mpi(&self) -> bool {
        self.universe.is_some()
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

    /// The thread support MPI provides: at least what [`Mpi::init`] asked for; for
    /// [`Mpi::adopt`], what the owner's initialization got.
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

    /// Duplicates a raw `MPI_Comm` handle that C, C++ or Fortran code passed in, so that the
    /// objects of this crate can be built on it: the C ABI's entry points use this.
    ///
    /// The caller keeps `comm`: it is never freed here. The returned [`CommDuplicate`] owns a
    /// duplicate (`MPI_Comm_dup`, collective over `comm`) and frees it when it drops, both under
    /// this crate's MPI lock. The objects built on it duplicate it again, so it may be dropped
    /// right after.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `MPI_COMM_NULL` and for an inter-communicator (the objects
    /// of this crate run on the ranks of one group).
    ///
    /// # Safety
    ///
    /// `comm` is `MPI_COMM_NULL` or a valid communicator handle of this process (any other value
    /// is MPI's error, which by default aborts the job, or undefined behaviour).
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::mpi::traits::{AsRaw, Communicator};
    /// use phasers_mpi::{mpi, Error, Mpi, ProcessAlgorithm, ProcessBarrier, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// // A handle as C code holds it.
    /// let raw = mpi.world().as_raw();
    /// // SAFETY: `raw` is the world's handle, valid while MPI runs.
    /// let comm = unsafe { mpi.duplicate_raw(raw) }?;
    /// assert_eq!(comm.size() as usize, mpi.size());
    /// let mut barrier = ProcessBarrier::new(&mpi, &*comm, ProcessAlgorithm::Dissemination)?;
    /// assert_eq!(barrier.wait()?, 0);
    /// // SAFETY: MPI_COMM_NULL is allowed, and refused.
    /// let null = unsafe { mpi.duplicate_raw(mpi::ffi::RSMPI_COMM_NULL) };
    /// assert!(matches!(null, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub unsafe fn duplicate_raw(&self, comm: mpi::ffi::MPI_Comm) -> Result<CommDuplicate> {
        // SAFETY: reading an immutable handle constant that rsmpi's C shim defines.
        if comm == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
            return Err(Error::invalid(
                "the communicator is MPI_COMM_NULL; pass a communicator of this rank, such as \
                 MPI_COMM_WORLD or one split from it",
            ));
        }
        let _call = mpi_call();
        let mut inter: c_int = 0;
        // SAFETY: the caller promises `comm` is a valid handle; `inter` is a valid out-pointer.
        unsafe { mpi::ffi::MPI_Comm_test_inter(comm, &mut inter) };
        if inter != 0 {
            return Err(Error::invalid(
                "the communicator is an inter-communicator; pass an intra-communicator (for \
                 example MPI_Intercomm_merge's result)",
            ));
        }
        let mut duplicate = std::mem::MaybeUninit::<mpi::ffi::MPI_Comm>::uninit();
        // SAFETY: `comm` is a valid intra-communicator (checked above, and by the caller's
        // promise); `duplicate` is written by MPI_Comm_dup before it is read. Errors abort the job
        // under MPI's default handler, so success is the only way on.
        let duplicate = unsafe {
            mpi::ffi::MPI_Comm_dup(comm, duplicate.as_mut_ptr());
            duplicate.assume_init()
        };
        // SAFETY: a fresh duplicate: a live intra-communicator that nothing else holds, neither
        // MPI_COMM_WORLD nor MPI_COMM_SELF; the returned value owns it and frees it on drop.
        let comm = unsafe { SimpleCommunicator::from_raw(duplicate) };
        Ok(CommDuplicate(ManuallyDrop::new(comm)))
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

/// A communicator of this crate's own, duplicated from a raw `MPI_Comm` by
/// [`Mpi::duplicate_raw`]; it dereferences to the rsmpi communicator that constructors take, and
/// frees the duplicate (`MPI_Comm_free`) under this crate's MPI lock when it drops, so the free
/// never overlaps another of our MPI calls under [`Threading::Serialized`].
///
/// ```
/// use phasers_mpi::mpi::traits::{AsRaw, Communicator};
/// use phasers_mpi::{HybridTeam, Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// // SAFETY: the world's handle is valid while MPI runs.
/// let comm = unsafe { mpi.duplicate_raw(mpi.world().as_raw()) }?;
/// // A duplicate is a communicator of its own, not the world's handle.
/// assert_ne!(comm.as_raw(), mpi.world().as_raw());
/// let team = HybridTeam::new(&mpi, &*comm, 2)?;
/// drop(comm); // the team keeps its own duplicate
/// assert_eq!(team.parties(), 2 * mpi.size());
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct CommDuplicate(ManuallyDrop<SimpleCommunicator>);

impl std::ops::Deref for CommDuplicate {
    type Target = SimpleCommunicator;

    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

impl Drop for CommDuplicate {
    fn drop(&mut self) {
        let _call = mpi_call();
        // SAFETY: dropped once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut self.0) };
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
