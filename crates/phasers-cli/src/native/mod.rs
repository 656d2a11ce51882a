//! The barriers C, C++ and OpenMP programmers reach for, built from `baselines/` by `build.rs`
//! with the system GCC: [`PthreadBarrier`] and [`CxxBarrier`], waited on by Rust threads like
//! every Rust contender; [`omp_round`] and its siblings, which run whole rounds in C because
//! OpenMP's constructs exist only among its own threads.
//!
//! glibc's and libgomp's barriers make a `futex` wake call every episode even when nobody sleeps
//! (about 150 ns against 45 for `std::barrier` with one thread on 2 cores): their design, not the
//! shims'. No C++ exception crosses into Rust: the C++ entry points are `noexcept`.

pub mod cxx;
pub mod omp_reduce;
pub mod openmp;
pub mod pthread;

use std::ffi::c_int;
use std::marker::{PhantomData, PhantomPinned};
use std::ptr::NonNull;
use std::time::Duration;

// The entry points; the handle and result types are named through their modules.
pub use cxx::CxxBarrier;
pub use openmp::{omp_collective_round, omp_dynamic, omp_round, Delay, OmpCollective, OmpWork};
pub use pthread::PthreadBarrier;

/// How long libgomp's idle threads may spin after a region (`GOMP_SPINCOUNT`, 300,000 spins): the
/// next row waits this long so it does not share the cores with them.
pub const SETTLE: Duration = Duration::from_millis(100);

/// OpenMP as its users tune it (spin, never sleep); libgomp reads it once, so a child measures it.
pub const ACTIVE_WAIT_POLICY: (&str, &str) = ("OMP_WAIT_POLICY", "active");

/// What a shim returns for a caught C++ exception of no known kind (`PHASERS_NATIVE_EXCEPTION`).
const NATIVE_EXCEPTION: c_int = -1;

/// An error code from a shim, as `EAGAIN: Resource temporarily unavailable (os error 11)`.
fn describe_error(code: c_int) -> String {
    if code == NATIVE_EXCEPTION {
        return "a C++ exception was thrown".to_owned();
    }
    // Linux's values (asm-generic: x86_64 and aarch64 alike), for the codes the shims return.
    let name = match code {
        1 => "EPERM",
        3 => "ESRCH",
        11 => "EAGAIN",
        12 => "ENOMEM",
        14 => "EFAULT",
        16 => "EBUSY",
        22 => "EINVAL",
        35 => "EDEADLK",
        _ => return std::io::Error::from_raw_os_error(code).to_string(),
    };
    format!("{name}: {}", std::io::Error::from_raw_os_error(code))
}

/// A barrier shim's barrier, opaque to Rust: it is only ever behind a pointer.
#[repr(C)]
struct RawBarrier {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

/// The barrier a shim's create returned, or `refused()` and the error code it wrote.
fn created(
    raw: *mut RawBarrier,
    error: c_int,
    refused: impl FnOnce() -> String,
) -> Result<NonNull<RawBarrier>, String> {
    NonNull::new(raw).ok_or_else(|| format!("{}: {}", refused(), describe_error(error)))
}

/// A native wait failed (only on a corrupted barrier): the harness reports the panicking thread's
/// row as failed, naming the call and the code.
#[cold]
#[inline(never)]
fn wait_failed(call: &str, code: c_int) -> ! {
    panic!("{call} failed: {}", describe_error(code))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use phasers_cli::harness::work::Work;

    /// Runs `episodes` episodes on one thread per handle: after the wait of episode k every thread
    /// has arrived at k, and none beyond k + 1 (this one has not arrived there yet).
    fn check_barrier_invariant<W: Work>(handles: Vec<W>, episodes: usize) {
        let threads = handles.len();
        let arrivals = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for mut handle in handles {
                let arrivals = &arrivals;
                s.spawn(move || {
                    for episode in 0..episodes {
                        arrivals.fetch_add(1, Ordering::SeqCst);
                        handle.iteration(episode as u64).unwrap();
                        let seen = arrivals.load(Ordering::SeqCst);
                        assert!(seen >= (episode + 1) * threads, "left {episode} early");
                        assert!(seen < (episode + 2) * threads, "others ran past {episode}");
                    }
                });
            }
        });
        assert_eq!(arrivals.into_inner(), episodes * threads);
    }

    #[test]
    fn the_native_barriers_keep_the_invariant_for_1_3_and_8_threads() {
        for threads in [1, 3, 8] {
            let pthread = PthreadBarrier::new(threads).unwrap();
            check_barrier_invariant(pthread.handles(), 2000);
            let cxx = CxxBarrier::new(threads).unwrap();
            check_barrier_invariant(cxx.handles(), 2000);
            // Once the first handles are gone, a second set may run more episodes.
            check_barrier_invariant(cxx.handles(), 10);
        }
    }

    #[test]
    fn zero_or_too_many_parties_is_an_error_that_names_the_code() {
        let error = PthreadBarrier::new(0).unwrap_err();
        assert!(error.starts_with("pthread_barrier_init(0) failed: EINVAL"));
        let error = CxxBarrier::new(0).unwrap_err();
        assert!(error.starts_with("std::barrier(0) refused: EINVAL"));
        // Above u32 on 64-bit targets, and above glibc's own limit either way.
        assert!(PthreadBarrier::new(usize::MAX).is_err() && CxxBarrier::new(usize::MAX).is_err());
        assert!(PthreadBarrier::new(u32::MAX as usize).is_err());
        assert_eq!(describe_error(-1), "a C++ exception was thrown");
    }

    #[test]
    #[should_panic(expected = "still alive")]
    fn live_cxx_handles_are_not_handed_out_twice() {
        let barrier = CxxBarrier::new(2).unwrap();
        let _first = barrier.handles();
        let _second = barrier.handles();
    }
}
