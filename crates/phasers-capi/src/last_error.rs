//! The per-thread message of the last failed call, for `phasers_last_error`.
//!
//! Codes say what kind of failure happened; the message says which: the ranks a timeout was still
//! waiting for, the argument that was out of range and the accepted range. It lives in a
//! thread-local so that threads never see each other's messages and no call takes a lock for it.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};

thread_local! {
    /// `None` after a successful call; the message of the failed call otherwise.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records `message` as this thread's last error. Interior NUL bytes (which no message of ours
/// contains) are replaced, since C would stop reading at the first one.
pub(crate) fn set(message: &str) {
    let text = CString::new(message.replace('\0', " "))
        .expect("NUL bytes were replaced, so the message has none");
    // `try_with` fails only while the thread is being torn down; the message is then lost, which
    // is better than panicking in a thread-local destructor.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = Some(text));
}

/// Forgets this thread's last error after a successful call. Cheap when there is none: one
/// thread-local read, no write.
#[inline]
pub(crate) fn clear() {
    let _ = LAST_ERROR.try_with(|slot| {
        if slot.borrow().is_some() {
            *slot.borrow_mut() = None;
        }
    });
}

/// The full message of the last failed phasers call on this thread, or `""` if the last call
/// succeeded (or none was made). The string is owned by the library and stays valid until the
/// next phasers call on this thread (other than `phasers_last_error`, `phasers_strerror` and
/// `phasers_algorithm_name`, which leave it alone).
#[no_mangle]
pub extern "C" fn phasers_last_error() -> *const c_char {
    const NONE: &CStr = c"";
    LAST_ERROR
        .try_with(|slot| {
            slot.borrow()
                .as_ref()
                // The CString's heap buffer does not move while it stays in the slot, so the
                // pointer outlives this borrow until `set` or `clear` replaces it.
                .map_or(NONE.as_ptr(), |message| message.as_ptr())
        })
        .unwrap_or(NONE.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current() -> String {
        // SAFETY: phasers_last_error returns a NUL-terminated string valid until the next call.
        unsafe { CStr::from_ptr(phasers_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn set_then_clear() {
        assert_eq!(current(), "");
        set("rank 9 is out of range");
        assert_eq!(current(), "rank 9 is out of range");
        set("a\0b");
        assert_eq!(current(), "a b");
        clear();
        assert_eq!(current(), "");
    }

    #[test]
    fn threads_keep_their_own_message() {
        set("main thread's");
        std::thread::spawn(|| assert_eq!(current(), ""))
            .join()
            .unwrap();
        assert_eq!(current(), "main thread's");
    }
}
