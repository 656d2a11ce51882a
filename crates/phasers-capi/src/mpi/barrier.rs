//! `phasers_mpi_barrier_*`: a barrier among the ranks of an `MPI_Comm`
//! ([`phasers_mpi::ProcessBarrier`]), one handle per rank.

use std::ffi::c_int;
use std::sync::MutexGuard;
use std::time::Duration;

use phasers_mpi::mpi::ffi::MPI_Comm;
use phasers_mpi::{ProcessAlgorithm, ProcessBarrier};

use super::{CallerComm, Exclusive};
use crate::entry::guarded;
use crate::enums::from_c;
use crate::handle::{require_out, write_optional, write_out, Handle, Kind};
use crate::status::Failure;

/// Process algorithms in the order of the header's `PHASERS_MPI_ALGORITHM_*` values.
pub const PROCESS_ALGORITHMS: [ProcessAlgorithm; 5] = [
    ProcessAlgorithm::Dissemination,
    ProcessAlgorithm::McsTree,
    ProcessAlgorithm::Library,
    ProcessAlgorithm::NodeShm,
    ProcessAlgorithm::Auto,
];

/// Checks a C `PHASERS_MPI_ALGORITHM_*` value.
pub(crate) fn process_algorithm_from_c(algorithm: c_int) -> Result<ProcessAlgorithm, Failure> {
    from_c(
        &PROCESS_ALGORITHMS,
        algorithm,
        "process algorithm",
        "PHASERS_MPI_ALGORITHM_",
    )
}

/// The object behind a `phasers_mpi_barrier`: this rank's side of the barrier.
pub struct MpiBarrierObject {
    barrier: Exclusive<ProcessBarrier>,
    rank: usize,
    parties: usize,
}

impl MpiBarrierObject {
    fn wait(&self, timeout: Option<Duration>) -> Result<u64, Failure> {
        self.barrier.with(
            || format!("the phasers_mpi_barrier of rank {}", self.rank),
            |barrier| {
                Ok(match timeout {
                    None => barrier.wait()?,
                    Some(timeout) => barrier.wait_timeout(timeout)?,
                })
            },
        )
    }

    fn settle(&self) -> Result<MutexGuard<'_, Option<ProcessBarrier>>, Failure> {
        self.barrier
            .idle(|| format!("the phasers_mpi_barrier of rank {}", self.rank))
    }
}

/// The C `phasers_mpi_barrier`.
pub type MpiBarrierHandle = Handle<MpiBarrierObject>;

/// # Safety
///
/// `barrier` is null, or a pointer returned by this library (destroyed or not) or other readable
/// memory, not being destroyed concurrently.
unsafe fn resolve<'a>(barrier: *const MpiBarrierHandle) -> Result<&'a MpiBarrierObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(barrier, Kind::MpiBarrier, "barrier") }
}

/// Collective over `comm`: builds this rank's side of a barrier among the ranks of `comm`,
/// running `algorithm` (`PHASERS_MPI_ALGORITHM_*`), and stores its handle in `*out`.
///
/// # Safety
///
/// `comm` is `MPI_COMM_NULL` (`PHASERS_EINVAL`) or a valid communicator of this process; `out` is
/// null (`PHASERS_ENULL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_barrier_create(
    comm: MPI_Comm,
    algorithm: c_int,
    out: *mut *mut MpiBarrierHandle,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { create(CallerComm::C(comm), algorithm, out) }
}

/// As [`phasers_mpi_barrier_create`], for the communicator whose Fortran handle (`MPI_Fint`) is
/// `comm`, converted with `MPI_Comm_f2c`.
///
/// # Safety
///
/// `comm` as [`CallerComm::adopt`] requires of a Fortran handle; `out` as in
/// [`phasers_mpi_barrier_create`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_barrier_create_fcomm(
    comm: c_int,
    algorithm: c_int,
    out: *mut *mut MpiBarrierHandle,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { create(CallerComm::Fortran(comm), algorithm, out) }
}

/// # Safety
///
/// `comm` as [`CallerComm::adopt`] requires; `out` is null or valid for writing a pointer.
unsafe fn create(comm: CallerComm, algorithm: c_int, out: *mut *mut MpiBarrierHandle) -> c_int {
    guarded(|| {
        require_out(out, "out")?;
        let algorithm = process_algorithm_from_c(algorithm)?;
        // SAFETY: the caller's promise about `comm`.
        let (mpi, comm) = unsafe { comm.adopt() }?;
        let barrier = ProcessBarrier::new(&mpi, &*comm, algorithm)?;
        let object = MpiBarrierObject {
            rank: barrier.rank(),
            parties: barrier.parties(),
            barrier: Exclusive::new(barrier),
        };
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::MpiBarrier, object), "out") }
    })
}

/// Stores this rank's rank in the barrier's communicator in `*out`.
///
/// # Safety
///
/// `barrier` is null, or a pointer returned by `phasers_mpi_barrier_create` (destroyed or not)
/// or other readable memory, not being destroyed concurrently; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_barrier_rank(
    barrier: *const MpiBarrierHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve(barrier) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.rank, "out") }
    })
}

/// Stores the number of ranks of the barrier in `*out`.
///
/// # Safety
///
/// As [`phasers_mpi_barrier_rank`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_barrier_parties(
    barrier: *const MpiBarrierHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve(barrier) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.parties, "out") }
    })
}

/// Waits until every rank has arrived; stores the episode that completed (from 0) in `*episode`
/// unless it is null.
///
/// # Safety
///
/// As [`phasers_mpi_barrier_rank`], with `episode` null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_barrier_wait(
    barrier: *mut MpiBarrierHandle,
    episode: *mut u64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { wait(barrier, None, episode) }
}

/// As [`phasers_mpi_barrier_wait`], giving up after `timeout_ns` nanoseconds with
/// `PHASERS_ETIMEDOUT`; the arrival stays, so the next wait completes the same episode.
///
/// # Safety
///
/// As [`phasers_mpi_barrier_wait`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_barrier_timedwait(
    barrier: *mut MpiBarrierHandle,
    timeout_ns: u64,
    episode: *mut u64,
) -> c_int {
    let timeout = Duration::from_nanos(timeout_ns);
    // SAFETY: forwarded from the caller.
    unsafe { wait(barrier, Some(timeout), episode) }
}

/// # Safety
///
/// As [`phasers_mpi_barrier_wait`].
unsafe fn wait(
    barrier: *mut MpiBarrierHandle,
    timeout: Option<Duration>,
    episode: *mut u64,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve(barrier) }?;
        let completed = object.wait(timeout)?;
        // SAFETY: the caller promises `episode` is null or writable.
        unsafe { write_optional(episode, completed) };
        Ok(())
    })
}

/// Destroys this rank's side of `barrier`; `PHASERS_EBUSY` while a thread waits on it.
///
/// # Safety
///
/// As [`phasers_mpi_barrier_rank`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_barrier_destroy(barrier: *mut MpiBarrierHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe {
            Handle::destroy(
                barrier,
                Kind::MpiBarrier,
                "barrier",
                MpiBarrierObject::settle,
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header's `PHASERS_MPI_ALGORITHM_*` values are the indices of [`PROCESS_ALGORITHMS`],
    /// which lists every process algorithm once: a new one fails here until C gets its value.
    #[test]
    fn header_values_cover_every_process_algorithm() {
        const HEADER: &str = include_str!("../../include/phasers_mpi.h");
        let names = ["DISSEMINATION", "MCS_TREE", "LIBRARY", "NODE_SHM", "AUTO"];
        assert_eq!(names.len(), PROCESS_ALGORITHMS.len());
        for (value, name) in names.iter().enumerate() {
            let line = format!("PHASERS_MPI_ALGORITHM_{name} = {value}");
            assert!(HEADER.contains(&line), "phasers_mpi.h lacks `{line}`");
        }
        assert_eq!(ProcessAlgorithm::ALL.len(), PROCESS_ALGORITHMS.len());
        for algorithm in ProcessAlgorithm::ALL {
            assert!(PROCESS_ALGORITHMS.contains(&algorithm), "{algorithm:?}");
        }
        let refused = process_algorithm_from_c(5).unwrap_err();
        assert_eq!(refused.code, crate::status::PHASERS_EINVAL);
        assert!(refused.message.contains("0 to 4"), "{refused:?}");
    }
}
