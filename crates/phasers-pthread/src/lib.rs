//! A drop-in `pthread_barrier_*` replacement built on [`phasers::AnyThreadBarrier`]:
//!
//! ```text
//! LD_PRELOAD=/path/to/libphasers_pthread.so ./program
//! ```
//!
//! The library defines `pthread_barrier_init`, `pthread_barrier_wait` and
//! `pthread_barrier_destroy` with glibc's prototypes; the dynamic linker binds a program's calls to
//! them instead of glibc's. See `README.md` next to this crate for building, choosing the
//! algorithm, and limits.
//!
//! # Behaviour
//!
//! - **Storage**: the caller's `pthread_barrier_t` holds a pointer to a heap
//!   [`AnyThreadBarrier`] and a state word where glibc writes nothing, and glibc's own fields hold
//!   values on which glibc's functions stop cleanly, should a library that binds to glibc directly
//!   (`RTLD_DEEPBIND`) call them: its wait aborts with its futex message instead of dividing by
//!   0 (see [`storage`]). Calls on a barrier that is not ours go to the system implementation.
//! - **init**: a null barrier, a count of 0 or a count above
//!   [`MAX_PARTIES`] give `EINVAL`. A process-shared attribute
//!   (`PTHREAD_PROCESS_SHARED`) goes to the system implementation: a heap object in one process
//!   cannot serve another. So does every barrier under `PHASERS_PTHREAD=off`, and, with one line on
//!   stderr, a barrier that cannot be built because `PHASERS_WAIT`, `PHASERS_SPIN`,
//!   `PHASERS_WAKE`, `PHASERS_STALL` or the tuning profile is invalid. The algorithm comes from
//!   `PHASERS_BARRIER_ALGORITHM` (see [`config`]), restricted to those in which the last arrival
//!   releases everyone, as glibc's does (`config::last_arrival_releases`).
//! - **wait**: `PTHREAD_BARRIER_SERIAL_THREAD` for exactly one call per episode (the leader), 0 for
//!   the others. A destroyed barrier gives `EINVAL`. A broken barrier, which needs a panic inside
//!   the library and so cannot happen from C, gives `EINVAL` too: it is the only error POSIX lists.
//! - **destroy**: waits until every thread released by the last episode has left `wait` (so the
//!   serial thread may destroy the barrier as soon as its own wait returns), then frees the
//!   object, writes the destroyed state and returns 0. `EBUSY` when threads wait at an episode that
//!   has not completed (the barrier is left as it was); `EINVAL` for a null or already destroyed
//!   barrier.
//! - **panics** never unwind into C: every entry point catches them and returns `EINVAL` (the
//!   panic message is printed on stderr by Rust's panic hook).
//!
//! Undefined in POSIX and not detected: waiting on or destroying a barrier while another thread
//! destroys it, and initializing a barrier that is still in use (the old object leaks).

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
compile_error!(
    "phasers-pthread replaces glibc's pthread_barrier_* through LD_PRELOAD and stores its state \
     inside glibc's pthread_barrier_t: it builds only for Linux with glibc"
);

pub mod config;
pub mod storage;
mod system;

use std::panic::{catch_unwind, AssertUnwindSafe};

use phasers::barrier::MAX_PARTIES;
use phasers::{Algorithm, AnyThreadBarrier, Error, Profile};

use storage::{State, Storage};
use system::system;

/// Whether this library's replacement is in effect: 1, or 0 under `PHASERS_PTHREAD=off`.
///
/// A program (or a test) can look it up with `dlsym(RTLD_DEFAULT, "phasers_pthread_active")` to
/// learn whether the preload is loaded at all (the symbol exists) and enabled (it returns 1).
#[no_mangle]
pub extern "C" fn phasers_pthread_active() -> libc::c_int {
    catch_unwind(|| libc::c_int::from(config::config().enabled)).unwrap_or(0)
}

/// `pthread_barrier_init`: see the [crate docs](crate).
///
/// # Safety
///
/// As for glibc's: `barrier` is null or points to writable memory for a `pthread_barrier_t`, and
/// `attr` is null or points to an initialized `pthread_barrierattr_t`.
#[no_mangle]
pub unsafe extern "C" fn pthread_barrier_init(
    barrier: *mut libc::pthread_barrier_t,
    attr: *const libc::pthread_barrierattr_t,
    count: libc::c_uint,
) -> libc::c_int {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's guarantees are passed on unchanged.
        unsafe { init(barrier, attr, count) }
    }))
    .unwrap_or(libc::EINVAL)
}

/// `pthread_barrier_wait`: see the [crate docs](crate).
///
/// # Safety
///
/// As for glibc's: `barrier` is null or points to a `pthread_barrier_t` that no thread destroys
/// while this call runs.
#[no_mangle]
pub unsafe extern "C" fn pthread_barrier_wait(
    barrier: *mut libc::pthread_barrier_t,
) -> libc::c_int {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's guarantees are passed on unchanged.
        unsafe { wait(barrier) }
    }))
    .unwrap_or(libc::EINVAL)
}

/// `pthread_barrier_destroy`: see the [crate docs](crate).
///
/// # Safety
///
/// As for glibc's: `barrier` is null or points to a `pthread_barrier_t` that no other thread
/// destroys or starts waiting on while this call runs.
#[no_mangle]
pub unsafe extern "C" fn pthread_barrier_destroy(
    barrier: *mut libc::pthread_barrier_t,
) -> libc::c_int {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's guarantees are passed on unchanged.
        unsafe { destroy(barrier) }
    }))
    .unwrap_or(libc::EINVAL)
}

/// # Safety
///
/// As [`pthread_barrier_init`].
unsafe fn init(
    barrier: *mut libc::pthread_barrier_t,
    attr: *const libc::pthread_barrierattr_t,
    count: libc::c_uint,
) -> libc::c_int {
    if barrier.is_null() || count == 0 || count as usize > MAX_PARTIES {
        return libc::EINVAL;
    }
    // SAFETY: non-null, and the caller guarantees it points to a pthread_barrier_t.
    let storage = unsafe { Storage::of(barrier) };
    // SAFETY: `attr` is null or points to an initialized attribute (the caller's guarantee).
    let process_shared = !attr.is_null() && unsafe { is_process_shared(attr) };
    if process_shared || !config::config().enabled {
        // SAFETY: the caller's guarantees are glibc's.
        return unsafe { system_init(&storage, barrier, attr, count) };
    }
    match build(count as usize, config::config().algorithm) {
        Ok(ours) => {
            storage.publish(Box::into_raw(Box::new(ours)));
            0
        }
        Err(error) => {
            warn_once_unbuildable(&error);
            // SAFETY: as above.
            unsafe { system_init(&storage, barrier, attr, count) }
        }
    }
}

/// A barrier of `parties` running `requested` (which the configuration has already turned into
/// [`config::SUBSTITUTE`] if it was an algorithm in which the last arrival does not release
/// everyone), or, for `Auto`, what `Auto` resolves to as long as it releases on the last arrival,
/// else the substitute: every barrier built here gives glibc's guarantee that the last arrival
/// releases everyone (see [`config::last_arrival_releases`]).
fn build(parties: usize, requested: Algorithm) -> Result<AnyThreadBarrier, Error> {
    // Resolved first, so that a refused choice is never allocated (a tournament of 16384 parties
    // takes 36 MB). An invalid tuning profile is left to `with_algorithm(Auto)`, which reports it
    // as for any phasers barrier, and `init` then falls back to glibc's barrier.
    let algorithm = match requested {
        Algorithm::Auto
            if Profile::status().error().is_none()
                && !config::last_arrival_releases(Algorithm::Auto.resolve(parties)) =>
        {
            config::SUBSTITUTE
        }
        other => other,
    };
    let barrier = AnyThreadBarrier::with_algorithm(parties, algorithm)?;
    if config::last_arrival_releases(barrier.algorithm()) {
        Ok(barrier)
    } else {
        // `Auto` resolved otherwise while building than just above (the profile changed).
        AnyThreadBarrier::with_algorithm(parties, config::SUBSTITUTE)
    }
}

/// glibc's init, with our state word cleared so later calls go to glibc too.
///
/// # Safety
///
/// As [`pthread_barrier_init`], with `barrier` non-null and `storage` its view.
unsafe fn system_init(
    storage: &Storage<'_>,
    barrier: *mut libc::pthread_barrier_t,
    attr: *const libc::pthread_barrierattr_t,
    count: libc::c_uint,
) -> libc::c_int {
    let Some(init) = system().init else {
        return libc::ENOSYS;
    };
    // SAFETY: glibc's init with the caller's arguments, which meet its requirements.
    let status = unsafe { init(barrier, attr, count) };
    storage.disown();
    status
}

/// Whether `attr` asks for a process-shared barrier.
///
/// # Safety
///
/// `attr` points to an initialized `pthread_barrierattr_t`.
unsafe fn is_process_shared(attr: *const libc::pthread_barrierattr_t) -> bool {
    let mut shared: libc::c_int = libc::PTHREAD_PROCESS_PRIVATE;
    // SAFETY: `attr` is initialized (the caller's guarantee) and `shared` is a valid out-pointer.
    let status = unsafe { libc::pthread_barrierattr_getpshared(attr, &mut shared) };
    status == 0 && shared == libc::PTHREAD_PROCESS_SHARED
}

/// Reports, once per process, that barriers fall back to the system implementation because the
/// `phasers` environment is invalid.
fn warn_once_unbuildable(error: &Error) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        config::warn(&format!(
            "cannot build a phasers barrier ({error}); using the system's pthread barriers"
        ))
    });
}

/// # Safety
///
/// As [`pthread_barrier_wait`].
unsafe fn wait(barrier: *mut libc::pthread_barrier_t) -> libc::c_int {
    if barrier.is_null() {
        return libc::EINVAL;
    }
    // SAFETY: non-null, and the caller guarantees it points to a pthread_barrier_t.
    let storage = unsafe { Storage::of(barrier) };
    match storage.state() {
        State::Live(ours) => {
            // SAFETY: a live state means `init` published this pointer to a leaked Box, and only
            // `destroy` frees it, which the caller guarantees does not run concurrently; and
            // destroy's settle waits until this call has left `AnyThreadBarrier::wait`.
            match unsafe { &*ours }.wait() {
                Ok(released) if released.is_leader() => libc::PTHREAD_BARRIER_SERIAL_THREAD,
                Ok(_) => 0,
                Err(_) => libc::EINVAL,
            }
        }
        State::Destroyed => libc::EINVAL,
        State::NotOurs => match system().wait {
            // SAFETY: not ours, so glibc initialized it (or nobody did, which glibc handles
            // however it does): glibc's wait with the caller's argument.
            Some(wait) => unsafe { wait(barrier) },
            None => libc::ENOSYS,
        },
    }
}

/// # Safety
///
/// As [`pthread_barrier_destroy`].
unsafe fn destroy(barrier: *mut libc::pthread_barrier_t) -> libc::c_int {
    if barrier.is_null() {
        return libc::EINVAL;
    }
    // SAFETY: non-null, and the caller guarantees it points to a pthread_barrier_t.
    let storage = unsafe { Storage::of(barrier) };
    match storage.state() {
        State::Live(ours) => {
            // SAFETY: as in `wait`: the Box is live until this function frees it below.
            if unsafe { &*ours }.settle().is_err() {
                return libc::EBUSY;
            }
            storage.mark_destroyed();
            // SAFETY: `ours` came from `Box::into_raw` in `init`; settle returned, so every call
            // that used it has left, and the destroyed state keeps later calls away from it.
            drop(unsafe { Box::from_raw(ours) });
            0
        }
        State::Destroyed => libc::EINVAL,
        State::NotOurs => match system().destroy {
            // SAFETY: glibc's destroy with the caller's argument.
            Some(destroy) => unsafe { destroy(barrier) },
            None => libc::ENOSYS,
        },
    }
}
