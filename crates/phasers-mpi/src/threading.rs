//! MPI's levels of thread support, ordered, and the lock that serializes our MPI calls when the
//! library allows only one calling thread at a time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

/// How much concurrency MPI allows, weakest first (`MPI_THREAD_*`).
///
/// The levels are ordered, so "at least `Serialized`" is a comparison:
///
/// ```
/// use phasers_mpi::Threading;
///
/// assert!(Threading::Single < Threading::Funneled);
/// assert!(Threading::Funneled < Threading::Serialized);
/// assert!(Threading::Multiple >= Threading::Serialized);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Threading {
    /// Only one thread exists.
    Single,
    /// Only the thread that initialized MPI calls it.
    Funneled,
    /// Any thread calls MPI, one at a time.
    Serialized,
    /// Any threads call MPI at the same time.
    Multiple,
}

impl Threading {
    pub(crate) fn to_mpi(self) -> mpi::Threading {
        match self {
            Threading::Single => mpi::Threading::Single,
            Threading::Funneled => mpi::Threading::Funneled,
            Threading::Serialized => mpi::Threading::Serialized,
            Threading::Multiple => mpi::Threading::Multiple,
        }
    }

    pub(crate) fn from_mpi(level: mpi::Threading) -> Self {
        match level {
            mpi::Threading::Single => Threading::Single,
            mpi::Threading::Funneled => Threading::Funneled,
            mpi::Threading::Serialized => Threading::Serialized,
            mpi::Threading::Multiple => Threading::Multiple,
        }
    }
}

/// Whether our MPI calls must take [`MPI_LOCK`]: true unless MPI provides `Multiple`.
static SERIALIZE: AtomicBool = AtomicBool::new(true);
/// Serializes our MPI calls under `Serialized`: a combined barrier's leader may be any thread, and
/// a hybrid team's member may poll from any thread, while another object's leader is in MPI too.
static MPI_LOCK: Mutex<()> = Mutex::new(());

pub(crate) fn set_provided(provided: Threading) {
    SERIALIZE.store(provided < Threading::Multiple, Ordering::Relaxed);
}

/// Held for the length of one MPI call (or a few back to back); `None` when MPI needs no lock.
pub(crate) struct MpiCall<'a>(#[allow(dead_code)] Option<MutexGuard<'a, ()>>);

/// Takes the process-wide MPI lock when the thread level requires it.
pub(crate) fn mpi_call() -> MpiCall<'static> {
    if SERIALIZE.load(Ordering::Relaxed) {
        // A panic inside an MPI call poisons nothing we rely on: the guard protects no data.
        MpiCall(Some(MPI_LOCK.lock().unwrap_or_else(|e| e.into_inner())))
    } else {
        MpiCall(None)
    }
}
