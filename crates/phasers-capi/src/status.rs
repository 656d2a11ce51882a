//! Status codes: what every entry point returns, their static descriptions, and the internal
//! [`Failure`] that carries a code together with the full message for `phasers_last_error`.

use std::ffi::{c_char, c_int, CStr};

use phasers_core::Error;

use crate::c_words::c_message;

/// Success.
pub const PHASERS_OK: c_int = 0;
/// An argument is out of range: a rank, a party count, an enumeration value, a tree shape.
pub const PHASERS_EINVAL: c_int = 1;
/// A pointer the function needs is null.
pub const PHASERS_ENULL: c_int = 2;
/// The handle was destroyed already, or was never a handle of this kind made by this library.
pub const PHASERS_EDESTROYED: c_int = 3;
/// The timeout passed before the synchronization completed; the arrival or signal stays in place.
pub const PHASERS_ETIMEDOUT: c_int = 4;
/// A participant was lost in a panic, so the object cannot complete any more.
pub const PHASERS_EBROKEN: c_int = 5;
/// The chosen algorithm cannot perform the operation.
pub const PHASERS_EUNSUPPORTED: c_int = 6;
/// The registration's mode does not allow the operation.
pub const PHASERS_ECAPABILITY: c_int = 7;
/// The phaser was terminated.
pub const PHASERS_ETERMINATED: c_int = 8;
/// The handle is in use by another thread (the same rank or registration, or destroy during a wait).
pub const PHASERS_EBUSY: c_int = 9;
/// The library caught an internal panic; the object's state cannot be trusted.
pub const PHASERS_EPANIC: c_int = 10;
/// Participants of one collective call passed arguments that differ (length, root, operator,
/// element type, collective).
pub const PHASERS_EMISMATCH: c_int = 11;

/// Every code with its description, in code order (index = code).
const DESCRIPTIONS: [&CStr; 12] = [
    c"success",
    c"invalid argument",
    c"a required pointer is NULL",
    c"handle already destroyed or not created by this library",
    c"timed out; the arrival stays in place",
    c"broken: a participant was lost, the object cannot complete",
    c"operation not supported by this algorithm",
    c"the registration's mode does not allow this operation",
    c"the phaser is terminated",
    c"the handle is in use by another thread",
    c"internal panic caught in the phasers library",
    c"the participants of one call passed arguments that differ",
];

/// What [`phasers_strerror`] returns for a code it does not know.
const UNKNOWN: &CStr = c"unknown phasers error code";

/// The static description of `code`: never null, valid for the life of the program.
#[no_mangle]
pub extern "C" fn phasers_strerror(code: c_int) -> *const c_char {
    // Nothing here can panic, so no catch_unwind is needed: indexing is checked by `get`.
    usize::try_from(code)
        .ok()
        .and_then(|index| DESCRIPTIONS.get(index))
        .copied()
        .unwrap_or(UNKNOWN)
        .as_ptr()
}

/// A failed call: the code returned to C and the message `phasers_last_error` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// One of the `PHASERS_E*` codes.
    pub code: c_int,
    /// The full message: what went wrong and what to do.
    pub message: String,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: c_int, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// `PHASERS_EINVAL` with `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Failure::new(PHASERS_EINVAL, message)
    }

    /// `PHASERS_ENULL` naming the null argument.
    pub fn null(argument: &str) -> Self {
        Failure::new(
            PHASERS_ENULL,
            format!("{argument} is NULL; pass a valid pointer"),
        )
    }

    /// `PHASERS_EBUSY` with `message`.
    pub fn busy(message: impl Into<String>) -> Self {
        Failure::new(PHASERS_EBUSY, message)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let code = match &error {
            Error::InvalidArgument { .. } => PHASERS_EINVAL,
            Error::Mismatch { .. } => PHASERS_EMISMATCH,
            Error::Timeout { .. } => PHASERS_ETIMEDOUT,
            Error::Broken { .. } => PHASERS_EBROKEN,
            Error::Unsupported { .. } => PHASERS_EUNSUPPORTED,
            Error::Capability { .. } => PHASERS_ECAPABILITY,
            Error::Terminated { .. } => PHASERS_ETERMINATED,
            // The core's Error is non_exhaustive; a variant added later is reported as a bad
            // argument with its full message rather than as a made-up code.
            _ => PHASERS_EINVAL,
        };
        // The core's text names Rust items; C gets the same message in C names.
        Failure::new(code, c_message(&error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_description_and_others_are_unknown() {
        let description = |code| {
            // SAFETY: phasers_strerror returns a pointer to a static NUL-terminated string.
            unsafe { CStr::from_ptr(phasers_strerror(code)) }
        };
        let known: Vec<&CStr> = (PHASERS_OK..=PHASERS_EMISMATCH).map(description).collect();
        for (i, text) in known.iter().enumerate() {
            assert_ne!(*text, UNKNOWN, "code {i}");
            assert!(!known[..i].contains(text), "code {i} repeats a description");
        }
        for code in [-1, PHASERS_EMISMATCH + 1, c_int::MAX, c_int::MIN] {
            assert_eq!(description(code), UNKNOWN);
        }
    }

    #[test]
    fn core_errors_map_to_their_codes() {
        let timeout = Failure::from(Error::Timeout {
            episode: 3,
            missing: vec![1, 4],
            resumable: true,
        });
        assert_eq!(timeout.code, PHASERS_ETIMEDOUT);
        assert!(timeout.message.contains("[1, 4]"), "{}", timeout.message);
        assert_eq!(
            Failure::from(Error::Terminated { phase: 2 }).code,
            PHASERS_ETERMINATED
        );
        assert_eq!(
            Failure::from(Error::Broken { by: 0, episode: 1 }).code,
            PHASERS_EBROKEN
        );
        let mismatch = Failure::from(Error::Mismatch {
            what: "length",
            rank: 0,
            ours: "2 elements".into(),
            other: 1,
            theirs: "3 elements".into(),
        });
        assert_eq!(mismatch.code, PHASERS_EMISMATCH);
        assert!(
            mismatch.message.contains("3 elements"),
            "{}",
            mismatch.message
        );
    }
}
