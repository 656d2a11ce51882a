//! `pthread_barrier_t` (glibc), through the shim in `baselines/pthread_barrier.c`.

use std::ffi::c_int;
use std::ptr::NonNull;

use super::{created, wait_failed, RawBarrier};
use phasers_cli::harness::work::{Failure, Work};

extern "C" {
    fn phasers_pthread_barrier_create(parties: u32, error: *mut c_int) -> *mut RawBarrier;
    fn phasers_pthread_barrier_wait(barrier: *mut RawBarrier) -> c_int;
    fn phasers_pthread_barrier_destroy(barrier: *mut RawBarrier);
}

/// A glibc `pthread_barrier_t` for a fixed number of parties, waited on through its handles. Extra
/// waiters make up the next episode, so unlike [`super::CxxBarrier`] it hands out handles twice.
#[derive(Debug)]
pub struct PthreadBarrier {
    raw: NonNull<RawBarrier>,
    parties: usize,
}

// SAFETY: a pthread barrier may be waited on from any threads at once, and destroyed from any
// thread once nobody waits; `PthreadBarrier` owns its pointer and destroys it only in `drop`.
unsafe impl Send for PthreadBarrier {}
// SAFETY: as above: `wait` is the only operation through `&self`, and it is thread-safe.
unsafe impl Sync for PthreadBarrier {}

impl PthreadBarrier {
    /// Its row's name in tables, JSON and `phasers list`.
    pub const NAME: &'static str = "pthread_barrier_t";

    /// A barrier for `parties` threads; `Err` says why (`pthread_barrier_init(0) failed: EINVAL`).
    pub fn new(parties: usize) -> Result<Self, String> {
        let count = u32::try_from(parties).map_err(|_| {
            format!("pthread_barrier_init({parties}): more parties than an unsigned int holds")
        })?;
        let mut error: c_int = 0;
        // SAFETY: `error` is a valid place for the shim to write; any count is allowed (glibc
        // refuses the ones it cannot handle with an error).
        let raw = unsafe { phasers_pthread_barrier_create(count, &mut error) };
        let refused = || format!("pthread_barrier_init({parties}) failed");
        Ok(PthreadBarrier {
            raw: created(raw, error, refused)?,
            parties,
        })
    }

    /// One handle per party, for the threads that wait.
    pub fn handles(&self) -> Vec<PthreadHandle<'_>> {
        (0..self.parties)
            .map(|_| PthreadHandle { barrier: self })
            .collect()
    }
}

impl Drop for PthreadBarrier {
    fn drop(&mut self) {
        // SAFETY: `raw` came from the shim's create and is destroyed only here; handles borrow
        // the barrier, so none is waiting any more.
        unsafe { phasers_pthread_barrier_destroy(self.raw.as_ptr()) }
    }
}

/// One thread's way into a [`PthreadBarrier`].
#[derive(Debug)]
pub struct PthreadHandle<'a> {
    barrier: &'a PthreadBarrier,
}

impl Work for PthreadHandle<'_> {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        // SAFETY: the borrow of `self.barrier` keeps the barrier alive.
        let code = unsafe { phasers_pthread_barrier_wait(self.barrier.raw.as_ptr()) };
        if code != 0 {
            wait_failed("pthread_barrier_wait", code);
        }
        Ok(None)
    }
}
