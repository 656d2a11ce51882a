//! The wrapper every entry point runs its body in: no panic unwinds into C, and every failure
//! becomes a code plus a message for `phasers_last_error`.

use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::last_error;
use crate::status::{Failure, PHASERS_EPANIC, PHASERS_OK};

/// Runs `body`, returning `PHASERS_OK` or the failure's code, with the message recorded.
///
/// Unwinding across an `extern "C"` boundary is undefined behaviour (or an abort), so a panic is
/// caught here and reported as `PHASERS_EPANIC`. `AssertUnwindSafe` is sound because every object
/// a body can leave half-updated sits behind a `Mutex`, whose poisoning the next call sees (see
/// [`DropOnUnwind`]).
#[inline]
pub(crate) fn guarded(body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            last_error::clear();
            PHASERS_OK
        }
        Ok(Err(failure)) => {
            last_error::set(&failure.message);
            failure.code
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|text| text.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            last_error::set(&format!(
                "internal panic in the phasers library: {what}; the object involved may be \
                 broken: destroy it and report this as a bug"
            ));
            PHASERS_EPANIC
        }
    }
}

/// Drops the value in `slot` if the thread unwinds while this guard lives.
///
/// Barrier participants and phaser registrations break their object when dropped during a panic,
/// so the other threads get `PHASERS_EBROKEN` instead of waiting for ever for a member whose state
/// a panic left unknown. Inside a `Mutex` they would not be dropped (the mutex is only poisoned),
/// so this guard drops them while the panic unwinds; the next call on the slot finds it empty.
pub(crate) struct DropOnUnwind<'a, T>(pub(crate) &'a mut Option<T>);

impl<T> Drop for DropOnUnwind<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            drop(self.0.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::PHASERS_EINVAL;
    use std::ffi::CStr;

    fn message() -> String {
        // SAFETY: phasers_last_error returns a NUL-terminated string valid until the next call.
        unsafe { CStr::from_ptr(last_error::phasers_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn success_failure_and_panic() {
        assert_eq!(
            guarded(|| Err(Failure::invalid("bad rank"))),
            PHASERS_EINVAL
        );
        assert_eq!(message(), "bad rank");
        assert_eq!(guarded(|| Ok(())), PHASERS_OK);
        assert_eq!(message(), "");
        assert_eq!(guarded(|| panic!("boom")), PHASERS_EPANIC);
        assert!(message().contains("boom"), "{}", message());
    }

    #[test]
    fn drop_on_unwind_empties_the_slot_only_when_panicking() {
        let mut slot = Some(5);
        drop(DropOnUnwind(&mut slot));
        assert_eq!(slot, Some(5));
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let _guard = DropOnUnwind(&mut slot);
            panic!("inside");
        }));
        assert_eq!(slot, None);
    }
}
