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
//! Handles follow the C conventions of the rest of the library (magic-checked handles, status
//! codes, `phasers_last_error`). A handle or thread slot used by two threads at once gives
//! `PHASERS_EBUSY` to the second ([`Exclusive`]).

pub mod barrier;
pub mod combined;
pub mod team;

use std::sync::{Mutex, MutexGuard, TryLockError};

use phasers_mpi::mpi::ffi::MPI_Comm;
use phasers_mpi::{CommDuplicate, Error, Mpi};

use crate::entry::DropOnUnwind;
use crate::status::{
    Failure, PHASERS_EBROKEN, PHASERS_EINVAL, PHASERS_EMISMATCH, PHASERS_EPANIC, PHASERS_ETIMEDOUT,
};

/// The program's MPI, adopted, and this library's own duplicate of the program's `comm`.
///
/// # Safety
///
/// `comm` is `MPI_COMM_NULL` or a valid communicator handle of this process.
unsafe fn adopt_communicator(comm: MPI_Comm) -> Result<(Mpi, CommDuplicate), Failure> {
    let mpi = Mpi::adopt()?;
    // SAFETY: forwarded from the caller.
    let comm = unsafe { mpi.duplicate_raw(comm) }?;
    Ok((mpi, comm))
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
