//! C++20 `std::barrier<>` (libstdc++), through the shim in `baselines/cxx_barrier.cpp`.

use std::ffi::c_int;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{created, wait_failed, RawBarrier};
use phasers_cli::harness::work::{Failure, Work};

extern "C" {
    fn phasers_cxx_barrier_create(parties: i64, error: *mut c_int) -> *mut RawBarrier;
    fn phasers_cxx_barrier_wait(barrier: *mut RawBarrier) -> c_int;
    fn phasers_cxx_barrier_destroy(barrier: *mut RawBarrier);
}

/// A libstdc++ `std::barrier<>` for a fixed number of parties, waited on through its handles.
#[derive(Debug)]
pub struct CxxBarrier {
    raw: NonNull<RawBarrier>,
    parties: usize,
    /// Handles alive now: more arrivals in a phase than parties is undefined behaviour, and a
    /// handle arrives once per phase, so at most `parties` live handles keeps phases in bounds.
    live_handles: AtomicUsize,
}

// SAFETY: `std::barrier` may be used from any threads at once and destroyed from any thread once
// nobody uses it; `CxxBarrier` owns its pointer and destroys it only in `drop`.
unsafe impl Send for CxxBarrier {}
// SAFETY: as above: `arrive_and_wait` is the only operation through `&self`, and it is
// thread-safe as long as no phase gets more arrivals than parties, which `live_handles` ensures.
unsafe impl Sync for CxxBarrier {}

impl CxxBarrier {
    /// Its row's name in tables, JSON and `phasers list`.
    pub const NAME: &'static str = "std::barrier (C++20)";

    /// A barrier for `parties` threads; `Err` says why (`std::barrier(0) refused: EINVAL: ...`).
    pub fn new(parties: usize) -> Result<Self, String> {
        let count = i64::try_from(parties)
            .map_err(|_| format!("std::barrier({parties}): more parties than ptrdiff_t holds"))?;
        let mut error: c_int = 0;
        // SAFETY: `error` is a valid place for the shim to write; the shim refuses counts that
        // std::barrier does not accept.
        let raw = unsafe { phasers_cxx_barrier_create(count, &mut error) };
        Ok(CxxBarrier {
            raw: created(raw, error, || format!("std::barrier({parties}) refused"))?,
            parties,
            live_handles: AtomicUsize::new(0),
        })
    }

    /// One handle per party, for the threads that wait; panics while an earlier call's are alive.
    pub fn handles(&self) -> Vec<CxxHandle<'_>> {
        let handed_out = self.live_handles.compare_exchange(
            0,
            self.parties,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        assert!(
            handed_out.is_ok(),
            "CxxBarrier::handles: the handles of an earlier call are still alive"
        );
        (0..self.parties)
            .map(|_| CxxHandle { barrier: self })
            .collect()
    }
}

impl Drop for CxxBarrier {
    fn drop(&mut self) {
        // SAFETY: `raw` came from the shim's create and is destroyed only here; handles borrow
        // the barrier, so every `arrive_and_wait` has returned.
        unsafe { phasers_cxx_barrier_destroy(self.raw.as_ptr()) }
    }
}

/// One thread's way into a [`CxxBarrier`].
#[derive(Debug)]
pub struct CxxHandle<'a> {
    barrier: &'a CxxBarrier,
}

impl Work for CxxHandle<'_> {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        // SAFETY: the pointer is a live barrier (the borrow keeps it from being destroyed), and
        // this handle is one of at most `parties` live ones (see `live_handles`).
        let code = unsafe { phasers_cxx_barrier_wait(self.barrier.raw.as_ptr()) };
        if code != 0 {
            wait_failed("std::barrier::arrive_and_wait", code);
        }
        Ok(None)
    }
}

impl Drop for CxxHandle<'_> {
    fn drop(&mut self) {
        self.barrier.live_handles.fetch_sub(1, Ordering::AcqRel);
    }
}
