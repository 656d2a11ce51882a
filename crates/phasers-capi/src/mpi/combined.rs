//! `phasers_mpi_combined_*`: a barrier across every thread of every rank of an `MPI_Comm`
//! ([`phasers_mpi::CombinedBarrier`]); the threads of a rank name themselves by number, as with
//! `phasers_barrier`.

use std::ffi::c_int;
use std::sync::MutexGuard;
use std::time::Duration;

use phasers_mpi::mpi::ffi::MPI_Comm;
use phasers_mpi::{CombinedBarrier, CombinedParticipant};

use super::barrier::process_algorithm_from_c;
use super::{CallerComm, Exclusive};
use crate::barrier::PhasersWaitResult;
use crate::entry::guarded;
use crate::handle::{c_bool, require_out, write_optional, write_out, Handle, Kind};
use crate::status::Failure;

/// The object behind a `phasers_mpi_combined`: this rank's side, one slot per thread.
pub struct MpiCombinedObject {
    // Before `barrier`, so the handles go first when the object drops.
    threads: Box<[Exclusive<CombinedParticipant>]>,
    barrier: CombinedBarrier,
}

impl MpiCombinedObject {
    fn slot(&self, thread: usize) -> Result<&Exclusive<CombinedParticipant>, Failure> {
        self.threads.get(thread).ok_or_else(|| {
            Failure::invalid(format!(
                "thread {thread} is out of range: this rank built the barrier for {} threads, so \
                 threads are 0 to {}",
                self.threads.len(),
                self.threads.len() - 1
            ))
        })
    }

    fn wait(&self, thread: usize, timeout: Option<Duration>) -> Result<PhasersWaitResult, Failure> {
        let done = self.slot(thread)?.with(
            || format!("thread {thread} of the phasers_mpi_combined"),
            |participant| {
                Ok(match timeout {
                    None => participant.wait()?,
                    Some(timeout) => participant.wait_timeout(timeout)?,
                })
            },
        )?;
        Ok(PhasersWaitResult {
            episode: done.episode(),
            is_leader: c_bool(done.is_leader()),
        })
    }

    fn settle(&self) -> Result<Vec<MutexGuard<'_, Option<CombinedParticipant>>>, Failure> {
        self.threads
            .iter()
            .enumerate()
            .map(|(thread, slot)| {
                slot.idle(|| format!("thread {thread} of the phasers_mpi_combined"))
            })
            .collect()
    }
}

/// The C `phasers_mpi_combined`.
pub type MpiCombinedHandle = Handle<MpiCombinedObject>;

/// # Safety
///
/// `barrier` is null, or a pointer returned by this library (destroyed or not) or other readable
/// memory, not being destroyed concurrently.
unsafe fn resolve<'a>(barrier: *const MpiCombinedHandle) -> Result<&'a MpiCombinedObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(barrier, Kind::MpiCombined, "barrier") }
}

/// Collective over `comm`: builds this rank's side of a barrier across `threads` threads of this
/// rank and every thread of the other ranks of `comm` (each rank passes its own count), whose
/// process step runs `process_algorithm` (`PHASERS_MPI_ALGORITHM_*`); stores its handle in `*out`.
///
/// # Safety
///
/// `comm` is `MPI_COMM_NULL` (`PHASERS_EINVAL`) or a valid communicator of this process; `out` is
/// null (`PHASERS_ENULL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_combined_create(
    comm: MPI_Comm,
    threads: usize,
    process_algorithm: c_int,
    out: *mut *mut MpiCombinedHandle,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { create(CallerComm::C(comm), threads, process_algorithm, out) }
}

/// As [`phasers_mpi_combined_create`], for the communicator whose Fortran handle (`MPI_Fint`) is
/// `comm`, converted with `MPI_Comm_f2c`.
///
/// # Safety
///
/// `comm` as [`CallerComm::adopt`] requires of a Fortran handle; `out` as in
/// [`phasers_mpi_combined_create`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_combined_create_fcomm(
    comm: c_int,
    threads: usize,
    process_algorithm: c_int,
    out: *mut *mut MpiCombinedHandle,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { create(CallerComm::Fortran(comm), threads, process_algorithm, out) }
}

/// # Safety
///
/// `comm` as [`CallerComm::adopt`] requires; `out` is null or valid for writing a pointer.
unsafe fn create(
    comm: CallerComm,
    threads: usize,
    process_algorithm: c_int,
    out: *mut *mut MpiCombinedHandle,
) -> c_int {
    guarded(|| {
        require_out(out, "out")?;
        let process = process_algorithm_from_c(process_algorithm)?;
        // Refused here, before the first collective step, so that this rank does not take part
        // in half of the construction (the others then wait for it, as for any argument error
        // of one rank's own).
        if threads == 0 {
            return Err(Failure::invalid(
                "a combined barrier needs at least 1 thread per rank; pass threads >= 1",
            ));
        }
        // SAFETY: the caller's promise about `comm`.
        let (mpi, comm) = unsafe { comm.adopt() }?;
        let barrier = CombinedBarrier::builder(&mpi, &*comm, threads)
            .process(process)
            .build()?;
        let object = MpiCombinedObject {
            threads: barrier
                .participants()
                .into_iter()
                .map(Exclusive::new)
                .collect(),
            barrier,
        };
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::MpiCombined, object), "out") }
    })
}

/// Stores the number of threads over every rank (the sum of the ranks' counts) in `*out`.
///
/// # Safety
///
/// `barrier` is null, or a pointer returned by `phasers_mpi_combined_create` (destroyed or not)
/// or other readable memory, not being destroyed concurrently; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_combined_parties(
    barrier: *const MpiCombinedHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve(barrier) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.barrier.parties(), "out") }
    })
}

/// Waits as `thread` (0 to this rank's count - 1) until every thread of every rank has arrived;
/// stores the outcome in `*out` unless it is null (`is_leader`: one thread per rank and episode,
/// the one that ran the process step).
///
/// # Safety
///
/// As [`phasers_mpi_combined_parties`], with `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_combined_wait(
    barrier: *mut MpiCombinedHandle,
    thread: usize,
    out: *mut PhasersWaitResult,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { wait(barrier, thread, None, out) }
}

/// As [`phasers_mpi_combined_wait`], giving up after `timeout_ns` nanoseconds with
/// `PHASERS_ETIMEDOUT`; the arrival stays, so the next wait of `thread` completes the same
/// episode.
///
/// # Safety
///
/// As [`phasers_mpi_combined_wait`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_combined_timedwait(
    barrier: *mut MpiCombinedHandle,
    thread: usize,
    timeout_ns: u64,
    out: *mut PhasersWaitResult,
) -> c_int {
    let timeout = Duration::from_nanos(timeout_ns);
    // SAFETY: forwarded from the caller.
    unsafe { wait(barrier, thread, Some(timeout), out) }
}

/// # Safety
///
/// As [`phasers_mpi_combined_wait`].
unsafe fn wait(
    barrier: *mut MpiCombinedHandle,
    thread: usize,
    timeout: Option<Duration>,
    out: *mut PhasersWaitResult,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve(barrier) }?;
        let result = object.wait(thread, timeout)?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_optional(out, result) };
        Ok(())
    })
}

/// Destroys this rank's side of `barrier`; `PHASERS_EBUSY` while a thread is inside a wait on
/// it (destroy after joining the threads).
///
/// # Safety
///
/// As [`phasers_mpi_combined_parties`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_combined_destroy(barrier: *mut MpiCombinedHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe {
            Handle::destroy(
                barrier,
                Kind::MpiCombined,
                "barrier",
                MpiCombinedObject::settle,
            )
        }
    })
}
