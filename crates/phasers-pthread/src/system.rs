//! The system's own `pthread_barrier_*`, found with `dlsym(RTLD_NEXT, ...)` once per process.
//!
//! `RTLD_NEXT` finds the next definition after this library in the search order: glibc's, since
//! `LD_PRELOAD` puts this library first.

use std::ffi::CStr;
use std::sync::OnceLock;

type Init = unsafe extern "C" fn(
    *mut libc::pthread_barrier_t,
    *const libc::pthread_barrierattr_t,
    libc::c_uint,
) -> libc::c_int;
type Wait = unsafe extern "C" fn(*mut libc::pthread_barrier_t) -> libc::c_int;
type Destroy = unsafe extern "C" fn(*mut libc::pthread_barrier_t) -> libc::c_int;

/// The system's three functions; `None` where the system has none (then the call returns
/// `ENOSYS`, which cannot happen with glibc).
pub(crate) struct System {
    pub(crate) init: Option<Init>,
    pub(crate) wait: Option<Wait>,
    pub(crate) destroy: Option<Destroy>,
}

/// The system's functions, looked up on first use.
pub(crate) fn system() -> &'static System {
    static SYSTEM: OnceLock<System> = OnceLock::new();
    SYSTEM.get_or_init(|| System {
        // SAFETY: glibc's function of this name has exactly this prototype (pthread.h).
        init: unsafe { lookup::<Init>(c"pthread_barrier_init") },
        // SAFETY: as above.
        wait: unsafe { lookup::<Wait>(c"pthread_barrier_wait") },
        // SAFETY: as above.
        destroy: unsafe { lookup::<Destroy>(c"pthread_barrier_destroy") },
    })
}

/// The next definition of `name` after this library, as a function pointer of type `F`.
///
/// # Safety
///
/// `F` must be the function pointer type of the symbol's true prototype.
unsafe fn lookup<F: Copy>(name: &CStr) -> Option<F> {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut libc::c_void>()) };
    // SAFETY: `name` is a valid C string; dlsym with RTLD_NEXT has no other precondition.
    let address = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if address.is_null() {
        return None;
    }
    // SAFETY: the sizes match (checked above), the address is non-null, and the caller
    // guarantees that `F` is the symbol's type.
    Some(unsafe { std::mem::transmute_copy::<*mut libc::c_void, F>(&address) })
}
