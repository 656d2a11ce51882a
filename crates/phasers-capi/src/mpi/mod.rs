//! The MPI entry points (cargo feature `mpi`, declared by `include/phasers_mpi.h`): the process
//! barrier, the combined threads × ranks barrier and the hybrid team of `phasers-mpi`, built from
//! an `MPI_Comm` that a C, C++ or Fortran MPI program passes in.
//!
//! The program owns MPI: it calls `MPI_Init_thread` before the first of these calls and
//! `MPI_Finalize` after destroying every handle. Each create adopts that MPI
//! ([`phasers_mpi::Mpi::adopt`]), so this library never initializes or finalizes it. The
//! caller's communicator stays the caller's: create duplicates it
//! ([`phasers_mpi::Mpi::duplicate_raw`], collective over `comm`) and never frees it, so the
//! caller may free `comm` as soon as create returns.
//!
//! Each create also comes as `*_create_fcomm`, taking the communicator as its Fortran handle
//! (`MPI_Fint`: the `mpi` module's `INTEGER`, or `mpi_f08`'s `comm%MPI_VAL`), which
//! [`CallerComm::Fortran`] converts with `MPI_Comm_f2c`; `fortran/phasers_mpi.f90` binds those.
//!
//! Handles follow the C conventions of the rest of the library (magic-checked handles, status
//! codes, `phasers_last_error`). A handle or thread slot used by two threads at once gives
//! `PHASERS_EBUSY` to the second ([`Exclusive`]).

pub mod barrier;
pub mod combined;
pub mod team;

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard, TryLockError};

use phasers_mpi::mpi::ffi::{MPI_Comm, RSMPI_Comm_f2c};
use phasers_mpi::{CommDuplicate, Error, Mpi};

use crate::entry::DropOnUnwind;
use crate::status::{
    Failure, PHASERS_EBROKEN, PHASERS_EINVAL, PHASERS_EMISMATCH, PHASERS_EPANIC, PHASERS_ETIMEDOUT,
};

/// The communicator a create function was given: a C `MPI_Comm`, or the Fortran handle of one.
#[derive(Clone, Copy)]
pub(crate) enum CallerComm {
    /// `MPI_COMM_NULL` or a valid communicator handle of this process.
    C(MPI_Comm),
    /// A Fortran handle (`MPI_Fint`, a C `int` in Open MPI and MPICH), converted with
    /// `MPI_Comm_f2c` once MPI is known to run.
    Fortran(c_int),
}

impl CallerComm {
    /// The program's MPI, adopted, and this library's own duplicate of the caller's communicator.
    ///
    /// # Safety
    ///
    /// For [`CallerComm::C`], the handle is `MPI_COMM_NULL` or a valid communicator of this
    /// process. For [`CallerComm::Fortran`], the handle is `MPI_COMM_NULL`'s, or one MPI returned
    /// and has not freed, or (under Open MPI, whose `MPI_Comm_f2c` maps every other integer to a
    /// null handle, refused here) any integer; other MPIs may turn an invalid Fortran handle into
    /// an invalid C handle that MPI's error handler then meets.
    pub(crate) unsafe fn adopt(self) -> Result<(Mpi, CommDuplicate), Failure> {
        // First: MPI_Comm_f2c before MPI_Init_thread or after MPI_Finalize is an MPI error (Open
        // MPI aborts the job), and adopt says which with PHASERS_EINVAL instead.
        let mpi = Mpi::adopt()?;
        let raw = match self {
            CallerComm::C(comm) => comm,
            CallerComm::Fortran(handle) => {
                // SAFETY: MPI runs (adopted above), and MPI_Comm_f2c takes any integer: the
                // standard has it return an invalid C handle, not fail, for an invalid Fortran
                // one. Like the MPI_Query_thread of Mpi::adopt, it runs outside the library's MPI
                // lock: it reads MPI's handle table (Open MPI) or is a cast (MPICH).
                let comm = unsafe { RSMPI_Comm_f2c(handle) };
                if all_zero_bits(&comm) {
                    return Err(Failure::invalid(format!(
                        "the Fortran communicator handle {handle} names no communicator of this \
                         process (MPI_Comm_f2c gave a null handle); pass MPI_COMM_WORLD or a \
                         handle MPI returned and has not freed (the mpi module's INTEGER, or \
                         mpi_f08's comm%MPI_VAL)"
                    )));
                }
                comm
            }
        };
        // SAFETY: the caller's promise for C handles; for Fortran ones, MPI_Comm_f2c's result for
        // a handle the caller promises is valid (a null one was refused above).
        let comm = unsafe { mpi.duplicate_raw(raw) }?;
        Ok((mpi, comm))
    }
}

/// Whether a C communicator handle is all zero bits: a null pointer in Open MPI, where
/// `MPI_Comm_f2c` returns one for an integer that names no communicator. No MPI uses zero for a
/// valid handle (MPICH's handles carry their kind in the high bits; `MPI_COMM_NULL` is
/// 0x04000000), so the test is sound for either.
fn all_zero_bits(comm: &MPI_Comm) -> bool {
    // SAFETY: `comm` is a live, initialized handle: a pointer (Open MPI) or an integer (MPICH),
    // neither with padding, so each of its size_of bytes is initialized and readable.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (comm as *const MPI_Comm).cast::<u8>(),
            std::mem::size_of::<MPI_Comm>(),
        )
    };
    bytes.iter().all(|&byte| byte == 0)
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let code = match &error {
            Error::Timeout { .. } => PHASERS_ETIMEDOUT,
            Error::Mismatch { .. } => PHASERS_EMISMATCH,
            Error::Broken { .. } => PHASERS_EBROKEN,
            Error::Core(core) => return Failure::from(core.clone()),
            // Bad arguments, and an MPI the objects cannot use as it runs (not initialized,
            // finalized, too little thread support): the message says which and what to do.
            _ => PHASERS_EINVAL,
        };
        Failure::new(code, error.to_string())
    }
}

/// A value that one thread at a time may use: a second thread gets `PHASERS_EBUSY` instead of
/// waiting for it or racing with it. A panic inside a call drops the value (which breaks the
/// object it belongs to for the other threads and ranks, instead of leaving them waiting).
pub(crate) struct Exclusive<T>(Mutex<Option<T>>);

impl<T> Exclusive<T> {
    pub(crate) fn new(value: T) -> Self {
        Exclusive(Mutex::new(Some(value)))
    }

    /// Runs `operation` on the value as the only thread holding it; `who` names it in messages.
    pub(crate) fn with<R>(
        &self,
        who: impl Fn() -> String,
        operation: impl FnOnce(&mut T) -> Result<R, Failure>,
    ) -> Result<R, Failure> {
        let mut guard = match self.0.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::WouldBlock) => {
                return Err(Failure::busy(format!(
                    "{} is in use by another thread (or being destroyed); give every thread its \
                     own",
                    who()
                )))
            }
            // A panic in an earlier call poisoned the lock; DropOnUnwind emptied the slot.
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        };
        let unwind = DropOnUnwind(&mut *guard);
        let value = unwind.0.as_mut().ok_or_else(|| {
            Failure::new(
                PHASERS_EPANIC,
                format!(
                    "an earlier call on {} panicked inside the library, which broke its object; \
                     destroy it and create a new one",
                    who()
                ),
            )
        })?;
        operation(value)
    }

    /// Proves that no thread is inside a call, for destroy: `PHASERS_EBUSY` otherwise.
    pub(crate) fn idle(
        &self,
        who: impl Fn() -> String,
    ) -> Result<MutexGuard<'_, Option<T>>, Failure> {
        match self.0.try_lock() {
            Ok(guard) => Ok(guard),
            Err(TryLockError::Poisoned(poisoned)) => Ok(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => Err(Failure::busy(format!(
                "{} is inside a call in another thread; destroy only after every thread that \
                 uses it has returned (joined)",
                who()
            ))),
        }
    }

    /// Takes the value out (each value is handed out once): `None` if it was taken already.
    pub(crate) fn take(&self) -> Option<T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::PHASERS_EBUSY;

    #[test]
    fn a_second_thread_gets_busy_and_a_panic_empties_the_slot() {
        let slot = Exclusive::new(5u32);
        let inside = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            s.spawn(|| {
                slot.with(
                    || "slot".into(),
                    |_| {
                        inside.wait();
                        inside.wait();
                        Ok(())
                    },
                )
                .unwrap()
            });
            inside.wait();
            let busy = slot.with(|| "slot".into(), |_| Ok(())).unwrap_err();
            assert_eq!(busy.code, PHASERS_EBUSY);
            assert_eq!(slot.idle(|| "slot".into()).unwrap_err().code, PHASERS_EBUSY);
            inside.wait();
        });
        assert_eq!(slot.with(|| "slot".into(), |v| Ok(*v)).unwrap(), 5);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            slot.with(
                || "slot".into(),
                |_| -> Result<(), Failure> { panic!("inside") },
            )
        }));
        let gone = slot.with(|| "slot".into(), |_| Ok(())).unwrap_err();
        assert_eq!(gone.code, PHASERS_EPANIC);
        assert_eq!(slot.take(), None);
    }

    /// Open MPI's MPI_Comm_f2c answers an unknown Fortran handle with a null pointer; the real
    /// handles, MPI_COMM_NULL included, are never all zero bits (under MPICH either).
    #[test]
    fn only_an_all_zero_handle_is_refused() {
        // SAFETY: MPI_Comm is a pointer (Open MPI) or an integer (MPICH): zero bits are a valid
        // value of either, the null pointer or 0.
        let zero: MPI_Comm = unsafe { std::mem::zeroed() };
        assert!(all_zero_bits(&zero));
        // SAFETY: reading an immutable handle constant that rsmpi's C shim defines; it needs no
        // running MPI (Open MPI's is the address of a static object).
        let null = unsafe { phasers_mpi::mpi::ffi::RSMPI_COMM_NULL };
        assert!(!all_zero_bits(&null));
    }

    #[test]
    fn mpi_errors_map_to_their_codes() {
        let timeout = Failure::from(Error::Timeout {
            what: "a process barrier",
            episode: 2,
            waiting_for: vec![3],
            after: std::time::Duration::from_millis(5),
        });
        assert_eq!(timeout.code, PHASERS_ETIMEDOUT);
        assert!(timeout.message.contains("[3]"), "{timeout:?}");
        let not_running = Failure::from(Error::NotInitialized);
        assert_eq!(not_running.code, PHASERS_EINVAL);
        assert!(
            not_running.message.contains("MPI_Init_thread"),
            "{not_running:?}"
        );
        let core = Failure::from(Error::Core(phasers_core::Error::Broken {
            by: 1,
            episode: 0,
        }));
        assert_eq!(core.code, PHASERS_EBROKEN);
    }
}
