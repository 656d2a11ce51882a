//! `phasers_barrier_*`: barriers whose threads name themselves by rank.

use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;
use std::time::Duration;

use crate::barrier_object::BarrierObject;
use crate::entry::guarded;
use crate::enums::{algorithm_to_c, from_c, ALGORITHMS};
use crate::handle::{c_bool, require_out, write_optional, write_out, Handle, Kind};

/// The C `phasers_barrier`: a handle to a [`BarrierObject`].
pub type BarrierHandle = Handle<BarrierObject>;

/// What a completed wait reports: the C `phasers_wait_result`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhasersWaitResult {
    /// The episode that completed, from 0.
    pub episode: u64,
    /// 1 for exactly one rank per episode (the leader), 0 for the others.
    pub is_leader: c_int,
}

/// Creates a barrier of `parties` ranks running `algorithm` (`PHASERS_ALGORITHM_*`) and stores
/// its handle in `*out`.
///
/// # Safety
///
/// `out` is null (`PHASERS_ENULL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_barrier_create(
    parties: usize,
    algorithm: c_int,
    out: *mut *mut BarrierHandle,
) -> c_int {
    guarded(|| {
        require_out(out, "out")?;
        let algorithm = from_c(&ALGORITHMS, algorithm, "algorithm", "PHASERS_ALGORITHM_")?;
        let object = BarrierObject::new(parties, algorithm)?;
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::Barrier, object), "out") }
    })
}

/// Stores the number of ranks of `barrier` in `*out`.
///
/// # Safety
///
/// `barrier` is null, or a pointer returned by `phasers_barrier_create` (destroyed or not) or
/// other readable memory, not being destroyed concurrently; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_barrier_parties(
    barrier: *const BarrierHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(barrier, Kind::Barrier, "barrier") }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.parties(), "out") }
    })
}

/// Stores the algorithm `barrier` runs in `*out`: the one `PHASERS_ALGORITHM_AUTO` resolved to,
/// never `PHASERS_ALGORITHM_AUTO` itself.
///
/// # Safety
///
/// As [`phasers_barrier_parties`].
#[no_mangle]
pub unsafe extern "C" fn phasers_barrier_algorithm(
    barrier: *const BarrierHandle,
    out: *mut c_int,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(barrier, Kind::Barrier, "barrier") }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, algorithm_to_c(object.algorithm()), "out") }
    })
}

/// The name of `algorithm` as the `phasers` command prints it ("auto", "mcs", ...), or null for a
/// value that is no `PHASERS_ALGORITHM_*`. The string is static.
#[no_mangle]
pub extern "C" fn phasers_algorithm_name(algorithm: c_int) -> *const c_char {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        ALGORITHMS
            .iter()
            .map(|algorithm| CString::new(algorithm.name()).expect("names have no NUL"))
            .collect()
    });
    usize::try_from(algorithm)
        .ok()
        .and_then(|index| names.get(index))
        .map_or(std::ptr::null(), |name| name.as_ptr())
}

/// Waits as `rank` until every rank has arrived; stores the outcome in `*out` unless it is null.
///
/// # Safety
///
/// `barrier` as in [`phasers_barrier_parties`]; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_barrier_wait(
    barrier: *mut BarrierHandle,
    rank: usize,
    out: *mut PhasersWaitResult,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { wait(barrier, rank, None, out) }
}

/// As [`phasers_barrier_wait`], giving up after `timeout_ns` nanoseconds with
/// `PHASERS_ETIMEDOUT`; the arrival stays, so the next wait of `rank` completes the same episode.
///
/// # Safety
///
/// As [`phasers_barrier_wait`].
#[no_mangle]
pub unsafe extern "C" fn phasers_barrier_timedwait(
    barrier: *mut BarrierHandle,
    rank: usize,
    timeout_ns: u64,
    out: *mut PhasersWaitResult,
) -> c_int {
    let timeout = Duration::from_nanos(timeout_ns);
    // SAFETY: forwarded from the caller.
    unsafe { wait(barrier, rank, Some(timeout), out) }
}

/// # Safety
///
/// As [`phasers_barrier_wait`].
unsafe fn wait(
    barrier: *mut BarrierHandle,
    rank: usize,
    timeout: Option<Duration>,
    out: *mut PhasersWaitResult,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(barrier, Kind::Barrier, "barrier") }?;
        let outcome = object.wait(rank, timeout)?;
        let result = PhasersWaitResult {
            episode: outcome.episode(),
            is_leader: c_bool(outcome.is_leader()),
        };
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_optional(out, result) };
        Ok(())
    })
}

/// Destroys `barrier`. Fails with `PHASERS_EBUSY` while a rank waits for an episode that has not
/// completed; waits for ranks released by a completed episode that are still returning.
///
/// # Safety
///
/// As [`phasers_barrier_parties`].
#[no_mangle]
pub unsafe extern "C" fn phasers_barrier_destroy(barrier: *mut BarrierHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(barrier, Kind::Barrier, "barrier", BarrierObject::settle) }
    })
}
