//! Where the replacement keeps its state inside the caller's `pthread_barrier_t`, laid out so that
//! glibc's own functions, if they get the barrier anyway, stop cleanly instead of crashing.
//!
//! glibc's `pthread_barrier_t` is an opaque 32-byte, 8-aligned union on x86-64 and aarch64, and
//! glibc's own barrier uses only its first 20 bytes: five 32-bit fields, `in`, `current_round`,
//! `count`, `shared` and `out`. The replacement writes all 32 bytes:
//!
//! | bytes | glibc's field | what this library writes |
//! |---|---|---|
//! | 0..4 | `in` | 0 |
//! | 4..8 | `current_round` | 0 |
//! | 8..12 | `count` | `0xFFFF_FFFF` |
//! | 12..16 | `shared` | the ASCII bytes `PHAS` |
//! | 16..20 | `out` | 0 |
//! | 20..24 | (unused by glibc) | the state: `ERS1` (live), `ERS0` (destroyed), anything else for "not ours" |
//! | 24..32 | (unused by glibc) | the pointer to the heap [`AnyThreadBarrier`] |
//!
//! Read as bytes from 12 on, a live barrier spells `PHAS`, four zero bytes, `ERS1`.
//!
//! # Recognising our barriers
//!
//! A barrier is ours when the state word and both of glibc's `count` and `shared` fields hold our
//! values: 96 bits, where the old layout had a 64-bit magic. glibc's `pthread_barrier_init`
//! refuses counts from its `BARRIER_IN_THRESHOLD` (`UINT_MAX / 2`) on and writes `shared` as 0
//! (private) or 128 (process-shared), so a barrier that glibc initialized, or
//! re-initialized after this library did (it writes only bytes 0..20), never looks like ours. The
//! calls on it go to glibc.
//!
//! # glibc's functions on our layout
//!
//! A library that binds `pthread_barrier_wait` to glibc directly (`dlopen` with `RTLD_DEEPBIND`,
//! `-Bsymbolic`, a static link) calls glibc's wait on a barrier this library initialized. With
//! `count` 0 there, as in the old layout when the memory was zeroed, glibc divides by 0 and the
//! process dies of `SIGFPE`; with garbage there it may even return as if a barrier had completed.
//! With this layout (glibc 2.25 and later):
//!
//! - glibc's **wait** adds 1 to `in` and computes how many arrivals fit before its next reset,
//!   `BARRIER_IN_THRESHOLD - BARRIER_IN_THRESHOLD % count`: 0, since `count` is above the
//!   threshold. Having arrived
//!   "past" that point, it waits for a reset with a `FUTEX_WAIT` whose operation is
//!   `shared ^ FUTEX_PRIVATE_FLAG`. `PHAS` makes that an operation the kernel does not have, so
//!   the futex call fails with `ENOSYS`, and glibc stops the process at once with
//!   `__libc_fatal("The futex facility returned an unexpected error code.")`, which prints that
//!   line on stderr and aborts (`SIGABRT`). No division by 0, no return that would let the program
//!   run on unsynchronized, and no write to our state or pointer (only `in` changes).
//! - glibc's **destroy** computes the same 0, adds `0 - in` = 0 to `out` and returns 0: it does
//!   nothing (the heap barrier leaks), and the barrier stays usable through this library.
//!
//! No layout lets glibc's wait return an error: it has none to return. `shared` = 0 instead would
//! make it wait for ever in silence; the abort with a message is the better of the two. Nor can
//! `pthread_barrier_init` tell whether some library will call glibc's wait on the barrier later.
//!
//! # Memory ordering
//!
//! Every word is accessed as an atomic: several threads read them at once in `wait`. `init`
//! writes every other word before the state word with `Release`, which a wait's `Acquire` load of
//! the state pairs with.

use std::mem::{align_of, size_of};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use phasers::AnyThreadBarrier;

/// The bytes of a `pthread_barrier_t` this library was written for.
const BARRIER_SIZE: usize = 32;
/// glibc's fields, by byte offset.
const GLIBC_IN: usize = 0;
const GLIBC_CURRENT_ROUND: usize = 4;
const GLIBC_COUNT_OFFSET: usize = 8;
const GLIBC_SHARED_OFFSET: usize = 12;
const GLIBC_OUT: usize = 16;
/// This library's words, past glibc's 20 bytes.
const STATE_OFFSET: usize = 20;
const POINTER_OFFSET: usize = 24;

const _: () = assert!(
    size_of::<libc::pthread_barrier_t>() == BARRIER_SIZE,
    "phasers-pthread stores its state inside glibc's 32-byte pthread_barrier_t (x86-64 and \
     aarch64); this target's pthread_barrier_t has another size, so the replacement cannot be \
     built for it"
);
const _: () = assert!(
    align_of::<libc::pthread_barrier_t>() >= align_of::<AtomicPtr<AnyThreadBarrier>>(),
    "phasers-pthread needs an 8-aligned pthread_barrier_t for its pointer word"
);
const _: () = assert!(size_of::<*mut AnyThreadBarrier>() == BARRIER_SIZE - POINTER_OFFSET);

/// What glibc's `count` field holds in our barriers: above every count glibc's
/// `pthread_barrier_init` accepts, so that glibc's wait computes 0 arrivals before its reset and
/// waits for that reset instead of dividing by 0 (see the [module docs](self)).
pub(crate) const GLIBC_COUNT: u32 = u32::MAX;
/// What glibc's `shared` field holds in our barriers: the ASCII bytes `PHAS`. glibc passes
/// `shared ^ FUTEX_PRIVATE_FLAG` as the futex operation, which this value makes one the kernel
/// rejects with `ENOSYS`, so glibc's wait aborts with its message (see the [module docs](self)).
pub(crate) const GLIBC_SHARED: u32 = u32::from_ne_bytes(*b"PHAS");
/// The state word of a barrier this library initialized and has not destroyed: `ERS1`.
pub(crate) const LIVE: u32 = u32::from_ne_bytes(*b"ERS1");
/// The state word of a barrier this library destroyed: `ERS0`.
pub(crate) const DESTROYED: u32 = u32::from_ne_bytes(*b"ERS0");

/// What the words of a `pthread_barrier_t` say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Initialized by this library: its pointer leads to a live `AnyThreadBarrier`.
    Live(*mut AnyThreadBarrier),
    /// Destroyed by this library.
    Destroyed,
    /// Initialized by the system implementation, or not at all.
    NotOurs,
}

/// A view of the words of a caller's `pthread_barrier_t`.
pub(crate) struct Storage<'a> {
    glibc_in: &'a AtomicU32,
    glibc_current_round: &'a AtomicU32,
    glibc_count: &'a AtomicU32,
    glibc_shared: &'a AtomicU32,
    glibc_out: &'a AtomicU32,
    state: &'a AtomicU32,
    pointer: &'a AtomicPtr<AnyThreadBarrier>,
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
        // size and alignment the const asserts above check: every offset lies inside it, the
        // 32-bit words are 4-aligned and the pointer word 8-aligned. Atomics have the size and
        // alignment of the integers they wrap, and every access to these words (by this library,
        // from any thread) goes through atomics; glibc's functions access them as 32-bit words
        // too, with atomic instructions where they write.
        unsafe {
            let word = |offset: usize| &*bytes.add(offset).cast::<AtomicU32>();
            Storage {
                glibc_in: word(GLIBC_IN),
                glibc_current_round: word(GLIBC_CURRENT_ROUND),
                glibc_count: word(GLIBC_COUNT_OFFSET),
                glibc_shared: word(GLIBC_SHARED_OFFSET),
                glibc_out: word(GLIBC_OUT),
                state: word(STATE_OFFSET),
                pointer: &*bytes
                    .add(POINTER_OFFSET)
                    .cast::<AtomicPtr<AnyThreadBarrier>>(),
            }
        }
    }

    /// What the words say, with the pointer for a live barrier.
    pub(crate) fn state(&self) -> State {
        let state = self.state.load(Ordering::Acquire);
        if (state != LIVE && state != DESTROYED)
            || self.glibc_count.load(Ordering::Relaxed) != GLIBC_COUNT
            || self.glibc_shared.load(Ordering::Relaxed) != GLIBC_SHARED
        {
            return State::NotOurs;
        }
        if state == LIVE {
            State::Live(self.pointer.load(Ordering::Relaxed))
        } else {
            State::Destroyed
        }
    }

    /// Publishes `barrier` as this `pthread_barrier_t`'s state, writing all 32 bytes.
    pub(crate) fn publish(&self, barrier: *mut AnyThreadBarrier) {
        self.glibc_in.store(0, Ordering::Relaxed);
        self.glibc_current_round.store(0, Ordering::Relaxed);
        self.glibc_count.store(GLIBC_COUNT, Ordering::Relaxed);
        self.glibc_shared.store(GLIBC_SHARED, Ordering::Relaxed);
        self.glibc_out.store(0, Ordering::Relaxed);
        self.pointer.store(barrier, Ordering::Relaxed);
        self.state.store(LIVE, Ordering::Release);
    }

    /// Marks the barrier as not ours, after the system implementation initialized it (glibc
    /// writes only the first 20 bytes, so an earlier state word would otherwise survive; glibc's
    /// `count` and `shared` alone already tell it apart).
    pub(crate) fn disown(&self) {
        self.state.store(0, Ordering::Release);
    }

    /// Marks the barrier destroyed; the caller frees what the pointer led to. glibc's `count` and
    /// `shared` keep our values, so glibc's functions still stop cleanly on it.
    pub(crate) fn mark_destroyed(&self) {
        self.state.store(DESTROYED, Ordering::Release);
        self.pointer.store(std::ptr::null_mut(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zeroed `pthread_barrier_t` on the stack, as C programs often have.
    fn zeroed() -> libc::pthread_barrier_t {
        // SAFETY: pthread_barrier_t is plain bytes; all zeros is a valid value.
        unsafe { std::mem::zeroed() }
    }

    fn bytes(barrier: &libc::pthread_barrier_t) -> [u8; BARRIER_SIZE] {
        // SAFETY: same size (asserted above), plain bytes.
        unsafe { std::mem::transmute_copy(barrier) }
    }

    #[test]
    fn the_layout_is_as_documented() {
        let mut barrier = zeroed();
        // SAFETY: a live local barrier.
        let storage = unsafe { Storage::of(&mut barrier) };
        assert_eq!(storage.state(), State::NotOurs);
        let fake = 0x1234_5678_9abc_def0_usize as *mut AnyThreadBarrier;
        storage.publish(fake);
        assert_eq!(storage.state(), State::Live(fake));
        let raw = bytes(&barrier);
        assert_eq!(&raw[0..8], &[0; 8], "in, current_round");
        assert_eq!(&raw[8..12], &[0xff; 4], "count");
        assert_eq!(&raw[12..24], b"PHAS\0\0\0\0ERS1", "shared, out, state");
        assert_eq!(&raw[24..32], &0x1234_5678_9abc_def0_usize.to_ne_bytes());
        // SAFETY: as above.
        let storage = unsafe { Storage::of(&mut barrier) };
        storage.mark_destroyed();
        assert_eq!(storage.state(), State::Destroyed);
        assert_eq!(&bytes(&barrier)[20..24], b"ERS0");
    }

    #[test]
    fn glibc_fields_decide_too() {
        let mut barrier = zeroed();
        // SAFETY: a live local barrier.
        let storage = unsafe { Storage::of(&mut barrier) };
        storage.publish(std::ptr::null_mut());
        // What glibc's init writes over it (bytes 0..20): a real count, shared 0 or 128.
        storage.glibc_count.store(4, Ordering::Relaxed);
        storage.glibc_shared.store(0, Ordering::Relaxed);
        assert_eq!(storage.state(), State::NotOurs, "re-initialized by glibc");
        storage.publish(std::ptr::null_mut());
        storage.glibc_shared.store(128, Ordering::Relaxed);
        assert_eq!(storage.state(), State::NotOurs);
        storage.publish(std::ptr::null_mut());
        storage.disown();
        assert_eq!(storage.state(), State::NotOurs);
    }

    #[test]
    fn glibc_shared_is_no_futex_operation() {
        // glibc's wait passes `shared ^ FUTEX_PRIVATE_FLAG` as the operation; the kernel takes the
        // command from the bits outside FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME, and the
        // commands end far below this one.
        let operation = GLIBC_SHARED ^ libc::FUTEX_PRIVATE_FLAG as u32;
        let command = operation & !(libc::FUTEX_PRIVATE_FLAG | libc::FUTEX_CLOCK_REALTIME) as u32;
        assert!(command > 0x1000, "{command:#x}");
        // And glibc's BARRIER_IN_THRESHOLD (UINT_MAX / 2) is below our count, so glibc computes
        // 0 arrivals before its reset.
        const THRESHOLD: u32 = u32::MAX / 2;
        assert_eq!(THRESHOLD - THRESHOLD % GLIBC_COUNT, 0);
    }
}
