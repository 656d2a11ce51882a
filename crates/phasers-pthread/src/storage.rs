//! Where the replacement keeps its state inside the caller's `pthread_barrier_t`.
//!
//! glibc's `pthread_barrier_t` is an opaque 32-byte, 8-aligned union on x86-64 and aarch64, and
//! glibc's own barrier uses only its first 20 bytes (five 32-bit fields: `in`, `current_round`,
//! `count`, `shared`, `out`). The replacement stores:
//!
//! | bytes | what |
//! |---|---|
//! | 0..8 | the pointer to the heap [`AnyThreadBarrier`] |
//! | 24..32 | a magic word: `"PHASERS1"` (live), `"PHASERS0"` (destroyed) in ASCII, or anything else for "not ours" |
//!
//! The magic sits where glibc writes nothing, so a barrier that glibc initialized (a process-shared
//! one, or any with `PHASERS_PTHREAD=off`) is recognised as not ours once `init` has cleared it,
//! and the calls on it go to glibc. A destroyed barrier keeps the destroyed magic, so a later
//! wait or destroy returns `EINVAL` instead of touching freed memory.
//!
//! Both words are accessed as atomics: several threads read them at once in `wait`, and `init`
//! publishes the pointer before the magic with `Release`, which a wait's `Acquire` load pairs with.

use std::mem::{align_of, size_of};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use phasers::AnyThreadBarrier;

/// The bytes of a `pthread_barrier_t` this library was written for.
const BARRIER_SIZE: usize = 32;
/// Where the magic word sits: the last 8 bytes, past glibc's 20-byte barrier.
const MAGIC_OFFSET: usize = 24;

const _: () = assert!(
    size_of::<libc::pthread_barrier_t>() == BARRIER_SIZE,
    "phasers-pthread stores its state inside glibc's 32-byte pthread_barrier_t (x86-64 and \
     aarch64); this target's pthread_barrier_t has another size, so the replacement cannot be \
     built for it"
);
const _: () = assert!(
    align_of::<libc::pthread_barrier_t>() >= align_of::<AtomicU64>(),
    "phasers-pthread needs an 8-aligned pthread_barrier_t for its pointer and magic words"
);
const _: () = assert!(size_of::<*mut AnyThreadBarrier>() <= 8);

/// The magic of a barrier this library initialized and has not destroyed: the bytes "PHASERS1"
/// in memory order, so a debugger or a test can read it.
pub(crate) const LIVE: u64 = u64::from_ne_bytes(*b"PHASERS1");
/// The magic of a barrier this library destroyed ("PHASERS0").
pub(crate) const DESTROYED: u64 = u64::from_ne_bytes(*b"PHASERS0");

/// What the magic word of a `pthread_barrier_t` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Initialized by this library: its pointer leads to a live `AnyThreadBarrier`.
    Live(*mut AnyThreadBarrier),
    /// Destroyed by this library.
    Destroyed,
    /// Initialized by the system implementation, or not at all.
    NotOurs,
}

/// A view of the two words this library uses in a caller's `pthread_barrier_t`.
pub(crate) struct Storage<'a> {
    pointer: &'a AtomicPtr<AnyThreadBarrier>,
    magic: &'a AtomicU64,
}

impl<'a> Storage<'a> {
    /// The view of `barrier`'s words.
    ///
    /// # Safety
    ///
    /// `barrier` must be non-null and point to a `pthread_barrier_t` that stays valid for `'a`
    /// (what the pthread functions require of their caller).
    pub(crate) unsafe fn of(barrier: *mut libc::pthread_barrier_t) -> Storage<'a> {
        let bytes = barrier.cast::<u8>();
        // SAFETY: the caller guarantees that `barrier` points to a live `pthread_barrier_t`, whose
        // size and alignment the const asserts above check: bytes 0..8 and 24..32 lie inside it
        // and are 8-aligned. Atomics have the size and alignment of the integers they wrap, and
        // every access to these words (by this library, from any thread) goes through atomics.
        unsafe {
            Storage {
                pointer: &*bytes.cast::<AtomicPtr<AnyThreadBarrier>>(),
                magic: &*bytes.add(MAGIC_OFFSET).cast::<AtomicU64>(),
            }
        }
    }

    /// What the magic word says, with the pointer for a live barrier.
    pub(crate) fn state(&self) -> State {
        match self.magic.load(Ordering::Acquire) {
            LIVE => State::Live(self.pointer.load(Ordering::Relaxed)),
            DESTROYED => State::Destroyed,
            _ => State::NotOurs,
        }
    }

    /// Publishes `barrier` as this `pthread_barrier_t`'s state.
    pub(crate) fn publish(&self, barrier: *mut AnyThreadBarrier) {
        self.pointer.store(barrier, Ordering::Relaxed);
        self.magic.store(LIVE, Ordering::Release);
    }

    /// Marks the barrier as not ours, after the system implementation initialized it (glibc
    /// writes only the first 20 bytes, so an earlier magic would otherwise survive).
    pub(crate) fn disown(&self) {
        self.magic.store(0, Ordering::Release);
    }

    /// Marks the barrier destroyed; the caller frees what the pointer led to.
    pub(crate) fn mark_destroyed(&self) {
        self.magic.store(DESTROYED, Ordering::Release);
        self.pointer.store(std::ptr::null_mut(), Ordering::Relaxed);
    }
}
