//! A pair's reduction, `dest = a op b`, cut into chunks that any number of helpers claim.
//!
//! Every master owns one job slot and posts its pairs' work there. The master and its slave both
//! help (the seed's halves, claimed a chunk at a time, so a helper that starts late simply takes
//! fewer chunks); under `DynamicGroup`, participants that would have returned help too.
//!
//! # Memory ordering
//!
//! The cursor holds the job's sequence number and how many of its chunks are still unclaimed. The
//! poster writes the job's fields, then stores the cursor `(seq, chunks)` with `Release`. A helper
//! loads the cursor with `Acquire`, reads the fields, and claims a chunk by compare-and-swap from
//! `(seq, u)` to `(seq, u - 1)`, for `u > 0`; it runs chunk `chunks - u`. A claim can only succeed
//! while job `seq` has unclaimed chunks, so it has not finished and the poster has not overwritten
//! its fields: whatever the helper read before the claim belongs to job `seq`. The fields are
//! atomics because a helper that loses the race may read a newer job's values; it then discards
//! them.
//!
//! Whether chunks are left is decided by the cursor word alone. An earlier version counted
//! claimed chunks up and compared them with the separately loaded `chunks` field: a helper that
//! read a fully claimed cursor, and then the next job's larger `chunks` before the poster stored
//! the new cursor, claimed a chunk that did not exist. That corrupted the next job's `remaining`
//! count, so it never finished (a 64-party `DynamicGroup` stress hung about one run in six).
//!
//! Each finished chunk decrements `remaining` (`AcqRel`, so the decrements form one release
//! sequence); the helper that takes it to zero publishes `done = seq`. Whoever sees `done >= seq`
//! sees every chunk's writes. A job therefore always finishes: every claimant is a live thread in
//! the middle of its call, and a chunk whose operator panics is counted as finished before the
//! panic travels on, so nobody waits on it forever. Before that count, the helper's `broken`
//! callback breaks the group: whoever sees the job done and then checks whether the group broke
//! must not miss a panic in one of its chunks and return a result that chunk never wrote.

use std::any::Any;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::kernel::{ElementWise, Kernel};
use crate::primitive::{AtomicU64, AtomicUsize, Ordering};
use crate::wait::Signal;

/// Bits of the cursor that count unclaimed chunks; the rest hold the job's sequence number.
const CHUNK_BITS: u32 = 24;
const CHUNK_MASK: u64 = (1 << CHUNK_BITS) - 1;
/// Chunks smaller than this cost more in claims and cache-line hand-offs than they gain in
/// parallelism.
const MIN_CHUNK: usize = 1024;
/// Enough chunks for a pair plus a workforce to share the work evenly.
const MAX_CHUNKS: usize = 64;

/// What a panicking operator threw, carried to the top of the call to continue unwinding there.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

pub(crate) struct Job {
    cursor: AtomicU64,
    dest: AtomicUsize,
    a: AtomicUsize,
    b: AtomicUsize,
    len: AtomicUsize,
    chunk_len: AtomicUsize,
    chunks: AtomicUsize,
    remaining: AtomicUsize,
    done: Signal,
}

impl Job {
    pub(crate) fn new() -> Self {
        Job {
            cursor: AtomicU64::new(0),
            dest: AtomicUsize::new(0),
            a: AtomicUsize::new(0),
            b: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            chunk_len: AtomicUsize::new(MIN_CHUNK),
            chunks: AtomicUsize::new(0),
            remaining: AtomicUsize::new(0),
            done: Signal::new(0),
        }
    }

    /// The signal whose value is the sequence number of the last finished job.
    pub(crate) fn done(&self) -> &Signal {
        &self.done
    }

    /// The sequence number of the job posted last.
    pub(crate) fn posted(&self) -> u64 {
        self.cursor.load(Ordering::Acquire) >> CHUNK_BITS
    }

    /// Posts job `seq` (greater than every earlier one of this slot, whose jobs have all
    /// finished): `dest[..len] = a[..len] op b[..len]`. A job of length 0 is finished at once.
    pub(crate) fn post<T>(&self, seq: u64, dest: *mut T, a: *const T, b: *const T, len: usize) {
        debug_assert!(seq < (1 << (64 - CHUNK_BITS)));
        let chunk_len = len.div_ceil(MAX_CHUNKS).max(MIN_CHUNK);
        let chunks = len.div_ceil(chunk_len);
        debug_assert!((chunks as u64) < CHUNK_MASK);
        self.dest.store(dest as usize, Ordering::Relaxed);
        self.a.store(a as usize, Ordering::Relaxed);
        self.b.store(b as usize, Ordering::Relaxed);
        self.len.store(len, Ordering::Relaxed);
        self.chunk_len.store(chunk_len, Ordering::Relaxed);
        self.chunks.store(chunks, Ordering::Relaxed);
        self.remaining.store(chunks, Ordering::Relaxed);
        self.cursor
            .store(seq << CHUNK_BITS | chunks as u64, Ordering::Release);
        if chunks == 0 {
            self.done.publish_at_least(seq);
        }
    }

    /// Helps whatever job is current, if it has chunks left; see [`help`](Self::help).
    pub(crate) fn help_current<T: Copy>(
        &self,
        kernel: &Kernel<T>,
        broken: impl Fn(),
    ) -> Result<(), Panic> {
        self.help(self.posted(), kernel, broken)
    }

    /// Claims and runs chunks of job `seq` until none is left. Returns the panic of the operator,
    /// if it panicked: `broken` runs first, then the chunk counts as finished, with whatever it had
    /// written.
    pub(crate) fn help<T: Copy>(
        &self,
        seq: u64,
        kernel: &Kernel<T>,
        broken: impl Fn(),
    ) -> Result<(), Panic> {
        let mut panic = None;
        loop {
            let cursor = self.cursor.load(Ordering::Acquire);
            if cursor >> CHUNK_BITS != seq {
                break;
            }
            let unclaimed = (cursor & CHUNK_MASK) as usize;
            if unclaimed == 0 {
                break;
            }
            let chunks = self.chunks.load(Ordering::Relaxed);
            let dest = self.dest.load(Ordering::Relaxed) as *mut T;
            let a = self.a.load(Ordering::Relaxed) as *const T;
            let b = self.b.load(Ordering::Relaxed) as *const T;
            let len = self.len.load(Ordering::Relaxed);
            let chunk_len = self.chunk_len.load(Ordering::Relaxed);
            if self
                .cursor
                .compare_exchange(cursor, cursor - 1, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            // The claim makes `chunks` job `seq`'s own (see the module docs), and `unclaimed` is
            // at most `chunks`.
            let start = (chunks - unclaimed) * chunk_len;
            let count = chunk_len.min(len - start);
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: the claim succeeded, so job `seq` is live and these are its pointers:
                // `a` and `b` point to `len` initialized elements that their owners keep unchanged
                // until the job is done, and `dest` to `len` elements that only this job's
                // claimants write, each to its own chunk. `dest` may be `a` or `b` itself (a
                // master accumulating into its own buffer), never overlapping them otherwise.
                unsafe { run_chunk(kernel, dest, a, b, start, count) }
            }));
            if let Err(payload) = outcome {
                // Before the chunk counts: see the module docs.
                broken();
                panic.get_or_insert(payload);
            }
            if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.done.publish_at_least(seq);
            }
        }
        match panic {
            Some(payload) => Err(payload),
            None => Ok(()),
        }
    }
}

/// `dest[start..start + count] = a[..] op b[..]`, accumulating in place when `dest` is one of
/// the sources.
///
/// # Safety
///
/// As in [`Job::help`]: the three ranges are valid, the sources initialized and unchanged, and
/// nobody else touches this chunk of `dest`.
unsafe fn run_chunk<T: Copy>(
    kernel: &Kernel<T>,
    dest: *mut T,
    a: *const T,
    b: *const T,
    start: usize,
    count: usize,
) {
    // SAFETY: the caller's contract (all three arms); the ranges are in bounds, and when `dest`
    // equals a source only the `&mut` slice over it is formed.
    unsafe {
        let dest_chunk = dest.add(start);
        if std::ptr::eq(dest, a) {
            let src = std::slice::from_raw_parts(b.add(start), count);
            kernel.accumulate(std::slice::from_raw_parts_mut(dest_chunk, count), src);
        } else if std::ptr::eq(dest, b) {
            let src = std::slice::from_raw_parts(a.add(start), count);
            kernel.accumulate(std::slice::from_raw_parts_mut(dest_chunk, count), src);
        } else {
            let out = std::slice::from_raw_parts_mut(dest_chunk as *mut MaybeUninit<T>, count);
            let x = std::slice::from_raw_parts(a.add(start), count);
            let y = std::slice::from_raw_parts(b.add(start), count);
            kernel.combine(out, x, y);
        }
    }
}
