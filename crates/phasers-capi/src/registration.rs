//! `phasers_registration_*`: one task's membership of a phaser, used by one thread at a time.

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use phasers_core::Registration;

use crate::entry::{guarded, DropOnUnwind};
use crate::enums::mode_from_c;
use crate::handle::{require_out, write_optional, write_out, Handle, Kind};
use crate::status::{Failure, PHASERS_EPANIC};

/// The object behind a `phasers_registration`. The lock turns use by two threads at once into
/// `PHASERS_EBUSY` instead of a data race.
pub struct RegistrationObject {
    /// `None` once a panic inside a call dropped the registration (which broke the phaser).
    registration: Mutex<Option<Registration>>,
}

impl RegistrationObject {
    /// Wraps `registration` for a handle.
    pub fn new(registration: Registration) -> Self {
        RegistrationObject {
            registration: Mutex::new(Some(registration)),
        }
    }

    /// Locks the registration for this thread's call, or fails with `PHASERS_EBUSY`.
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Option<Registration>>, Failure> {
        match self.registration.try_lock() {
            Ok(guard) => Ok(guard),
            // A panic inside an earlier call poisoned the lock; DropOnUnwind emptied the slot.
            Err(TryLockError::Poisoned(poisoned)) => Ok(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => Err(Failure::busy(
                "this registration is in use by another thread (or being dropped); a \
                 registration belongs to one task: register a child for each thread",
            )),
        }
    }

    /// Runs `operation` on the locked registration; a panic inside it drops the registration,
    /// which breaks the phaser for the others rather than leaving them waiting for this one.
    pub(crate) fn with<R>(
        &self,
        operation: impl FnOnce(&mut Registration) -> Result<R, Failure>,
    ) -> Result<R, Failure> {
        let mut guard = self.lock()?;
        let unwind = DropOnUnwind(&mut *guard);
        let registration = unwind.0.as_mut().ok_or_else(|| {
            Failure::new(
                PHASERS_EPANIC,
                "an earlier call on this registration panicked inside the library, which broke \
                 its phaser; drop the registration and create a new phaser",
            )
        })?;
        operation(registration)
    }
}

/// The C `phasers_registration`.
pub type RegistrationHandle = Handle<RegistrationObject>;

/// # Safety
///
/// `registration` is null, or a pointer returned by this library (destroyed or not) or other
/// readable memory, not being dropped concurrently.
unsafe fn resolve<'a>(
    registration: *const RegistrationHandle,
    argument: &str,
) -> Result<&'a RegistrationObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(registration, Kind::Registration, argument) }
}

/// Registers a child task with `mode`, no stronger than `parent`'s, and stores its registration
/// in `*out`. The child starts in the parent's phase.
///
/// # Safety
///
/// `parent` as [`phasers_registration_signal`]'s `registration`; `out` is null or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_registration_register(
    parent: *mut RegistrationHandle,
    mode: c_int,
    out: *mut *mut RegistrationHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let parent = unsafe { resolve(parent, "parent") }?;
        require_out(out, "out")?;
        let mode = mode_from_c(mode)?;
        let child = parent.with(|parent| Ok(parent.register(mode)?))?;
        let child = Handle::create(Kind::Registration, RegistrationObject::new(child));
        // SAFETY: checked non-null; the caller promises it is writable.
        unsafe { write_out(out, child, "out") }
    })
}

/// Signals the current phase without waiting (the first half of a split-phase barrier).
///
/// # Safety
///
/// `registration` is null, or a pointer returned by this library (destroyed or not) or other
/// readable memory, not being dropped concurrently.
#[no_mangle]
pub unsafe extern "C" fn phasers_registration_signal(
    registration: *mut RegistrationHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let registration = unsafe { resolve(registration, "registration") }?;
        registration.with(|registration| Ok(registration.signal()?))
    })
}

/// Waits until the phase this registration signalled (or, wait-only, its next phase) completes;
/// stores that phase in `*phase` unless it is null.
///
/// # Safety
///
/// As [`phasers_registration_signal`]; `phase` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_registration_wait(
    registration: *mut RegistrationHandle,
    phase: *mut u64,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let registration = unsafe { resolve(registration, "registration") }?;
        let completed = registration.with(|registration| Ok(registration.wait()?))?;
        // SAFETY: the caller promises `phase` is null or writable.
        unsafe { write_optional(phase, completed) };
        Ok(())
    })
}

/// Signals and waits: advances to the next phase. Stores the phase completed (for a signal-only
/// registration, the phase signalled) in `*phase` unless it is null.
///
/// # Safety
///
/// As [`phasers_registration_wait`].
#[no_mangle]
pub unsafe extern "C" fn phasers_registration_next(
    registration: *mut RegistrationHandle,
    phase: *mut u64,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let registration = unsafe { resolve(registration, "registration") }?;
        let completed = registration.with(|registration| Ok(registration.next()?))?;
        // SAFETY: the caller promises `phase` is null or writable.
        unsafe { write_optional(phase, completed) };
        Ok(())
    })
}

/// As [`phasers_registration_next`], giving up after `timeout_ns` nanoseconds with
/// `PHASERS_ETIMEDOUT`; the signal stays, so the next call waits for the same phase.
///
/// # Safety
///
/// As [`phasers_registration_wait`].
#[no_mangle]
pub unsafe extern "C" fn phasers_registration_next_timeout(
    registration: *mut RegistrationHandle,
    timeout_ns: u64,
    phase: *mut u64,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let registration = unsafe { resolve(registration, "registration") }?;
        let timeout = Duration::from_nanos(timeout_ns);
        let completed = registration.with(|registration| {
            // A deadline past what Instant can hold (about 584 years of nanoseconds on some
            // platforms) is no deadline at all.
            Ok(match Instant::now().checked_add(timeout) {
                Some(_) => registration.next_timeout(timeout)?,
                None => registration.next()?,
            })
        })?;
        // SAFETY: the caller promises `phase` is null or writable.
        unsafe { write_optional(phase, completed) };
        Ok(())
    })
}

/// Deregisters and destroys `registration`. Fails with `PHASERS_EBUSY` while another thread is
/// inside a call on it.
///
/// # Safety
///
/// As [`phasers_registration_signal`].
#[no_mangle]
pub unsafe extern "C" fn phasers_registration_drop(registration: *mut RegistrationHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe {
            Handle::destroy(
                registration,
                Kind::Registration,
                "registration",
                RegistrationObject::lock,
            )
        }
    })
}
