//! Handles: what a C pointer to a phasers object points to, and how every call checks it.
//!
//! A handle is a small heap header, `{ magic, inner }`, 16 bytes on 64-bit targets. The magic
//! word names the kind of object while it is alive; `inner` points to the object itself.
//! Destroying a handle swaps the magic to [`DEAD`], frees the object and keeps the header allocated
//! for ever: a tombstone. Every later call with that pointer reads `DEAD` and fails with
//! `PHASERS_EDESTROYED` instead of touching freed memory. The price is 16 bytes per destroyed
//! handle for the life of the process.
//!
//! A pointer that was never a handle of the expected kind is refused when its first 8 bytes do not
//! hold that kind's magic; this check needs the pointer to point to readable memory, so it catches
//! mix-ups between handles (a phaser passed as a barrier) and stale pointers to tombstones, not
//! arbitrary garbage. Using a handle while another thread destroys it is undefined behaviour, as
//! with pthread objects; `destroy` refuses (`PHASERS_EBUSY`) while a wait is in progress, but it
//! cannot see a call that has read the pointer and not yet started.

use std::ffi::c_int;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::status::{Failure, PHASERS_EDESTROYED};

/// The magic of a destroyed handle (a tombstone), whatever its kind was.
pub const DEAD: u64 = 0x5048_4153_4552_5358; // "PHASERSX"
/// The magic's upper 7 bytes for every live handle; the low byte is the [`Kind`].
const LIVE_PREFIX: u64 = 0x5048_4153_4552_5300; // "PHASERS\0"

/// The kinds of objects a handle can refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// `phasers_barrier`.
    Barrier = 1,
    /// `phasers_phaser`.
    Phaser = 2,
    /// `phasers_registration`.
    Registration = 3,
    /// `phasers_accumulator`.
    Accumulator = 4,
    /// `phasers_reduction`.
    Reduction = 5,
    /// `phasers_team`.
    Team = 6,
    /// `phasers_member`.
    Member = 7,
    /// `phasers_request`.
    Request = 8,
    /// `phasers_mpi_barrier` (feature `mpi`).
    MpiBarrier = 9,
    /// `phasers_mpi_combined` (feature `mpi`).
    MpiCombined = 10,
    /// `phasers_mpi_team` (feature `mpi`).
    MpiTeam = 11,
    /// `phasers_mpi_member` (feature `mpi`).
    MpiMember = 12,
}

impl Kind {
    const ALL: [Kind; 12] = [
        Kind::Barrier,
        Kind::Phaser,
        Kind::Registration,
        Kind::Accumulator,
        Kind::Reduction,
        Kind::Team,
        Kind::Member,
        Kind::Request,
        Kind::MpiBarrier,
        Kind::MpiCombined,
        Kind::MpiTeam,
        Kind::MpiMember,
    ];

    /// The magic of a live handle of this kind.
    pub const fn magic(self) -> u64 {
        LIVE_PREFIX | self as u64
    }

    /// The C type name, for messages.
    pub fn c_name(self) -> &'static str {
        match self {
            Kind::Barrier => "phasers_barrier",
            Kind::Phaser => "phasers_phaser",
            Kind::Registration => "phasers_registration",
            Kind::Accumulator => "phasers_accumulator",
            Kind::Reduction => "phasers_reduction",
            Kind::Team => "phasers_team",
            Kind::Member => "phasers_member",
            Kind::Request => "phasers_request",
            Kind::MpiBarrier => "phasers_mpi_barrier",
            Kind::MpiCombined => "phasers_mpi_combined",
            Kind::MpiTeam => "phasers_mpi_team",
            Kind::MpiMember => "phasers_mpi_member",
        }
    }

    fn from_magic(magic: u64) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.magic() == magic)
    }
}

/// The header a C handle points to. `T` is the object; the layout of the magic word (first, 8
/// bytes, 8-aligned) is the same for every `T`, so a header of any kind can be checked as any
/// other.
#[repr(C)]
pub struct Handle<T> {
    magic: AtomicU64,
    inner: AtomicPtr<T>,
}

impl<T> Handle<T> {
    /// Moves `object` to the heap behind a new live header of `kind`, and returns the header, which
    /// is never freed.
    pub fn create(kind: Kind, object: T) -> *mut Handle<T> {
        Box::into_raw(Box::new(Handle {
            magic: AtomicU64::new(kind.magic()),
            inner: AtomicPtr::new(Box::into_raw(Box::new(object))),
        }))
    }

    /// The object behind `handle`, after checking that `handle` is a live handle of `kind`.
    ///
    /// `argument` names the parameter in messages.
    ///
    /// # Safety
    ///
    /// `handle` is null, or points to at least 8 readable bytes (a header returned by [`create`],
    /// live or destroyed, always does); and no other thread destroys the handle while the returned
    /// reference is in use.
    ///
    /// [`create`]: Handle::create
    pub unsafe fn resolve<'a>(
        handle: *const Handle<T>,
        kind: Kind,
        argument: &str,
    ) -> Result<&'a T, Failure> {
        // SAFETY: forwarded from the caller.
        let header = unsafe { Self::header(handle, kind, argument) }?;
        // SAFETY: a live header's `inner` points to the object `create` boxed; it is freed only by
        // `destroy`, which the caller promises does not run concurrently.
        Ok(unsafe { &*header.inner.load(Ordering::Acquire) })
    }

    /// Checks `handle` as [`resolve`](Handle::resolve) does and returns its live header.
    ///
    /// # Safety
    ///
    /// As [`resolve`](Handle::resolve).
    unsafe fn header<'a>(
        handle: *const Handle<T>,
        kind: Kind,
        argument: &str,
    ) -> Result<&'a Handle<T>, Failure> {
        if handle.is_null() {
            return Err(Failure::null(argument));
        }
        if handle.align_offset(std::mem::align_of::<Handle<T>>()) != 0 {
            return Err(not_a_handle(kind, argument, "it is misaligned"));
        }
        // SAFETY: the caller promises 8 readable bytes; the pointer is aligned for the header, and
        // every header starts with its magic word. Only the magic is read until it matches.
        let magic = unsafe { &*handle.cast::<AtomicU64>() }.load(Ordering::Acquire);
        if magic == kind.magic() {
            // SAFETY: the magic says this is a live header of `kind`, so it is a `Handle<T>`.
            return Ok(unsafe { &*handle });
        }
        Err(match (magic, Kind::from_magic(magic)) {
            (DEAD, _) => Failure::new(
                PHASERS_EDESTROYED,
                format!(
                    "{argument} was already destroyed; a handle must not be used after its \
                     destroy (or drop) call"
                ),
            ),
            (_, Some(other)) => not_a_handle(
                kind,
                argument,
                &format!("it is a {} handle", other.c_name()),
            ),
            (_, None) => not_a_handle(kind, argument, "its magic word does not match"),
        })
    }

    /// Destroys `handle`: marks its header dead, then drops the object. `check` runs first, on the
    /// live object, and can refuse (for example while a thread waits on it); what it returns (for
    /// example the locks it took) is kept until the header is marked dead, then dropped before the
    /// object is.
    ///
    /// # Safety
    ///
    /// As [`resolve`](Handle::resolve).
    pub unsafe fn destroy<'a, P>(
        handle: *mut Handle<T>,
        kind: Kind,
        argument: &str,
        check: impl FnOnce(&'a T) -> Result<P, Failure>,
    ) -> Result<(), Failure>
    where
        T: 'a,
    {
        // SAFETY: forwarded from the caller.
        let header: &'a Handle<T> = unsafe { Self::header(handle, kind, argument) }?;
        // SAFETY: the header is live, so `inner` points to the boxed object (see `resolve`).
        let proof = check(unsafe { &*header.inner.load(Ordering::Acquire) })?;
        if header
            .magic
            .compare_exchange(kind.magic(), DEAD, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // Another destroy won the race; that one frees the object.
            return Err(Failure::new(
                PHASERS_EDESTROYED,
                format!("{argument} was destroyed by another thread during this call"),
            ));
        }
        drop(proof);
        let object = header.inner.swap(std::ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: only the call that swapped the magic to DEAD reaches here, once per handle, and
        // `inner` came from `Box::into_raw` in `create`.
        drop(unsafe { Box::from_raw(object) });
        Ok(())
    }
}

fn not_a_handle(kind: Kind, argument: &str, why: &str) -> Failure {
    Failure::new(
        PHASERS_EDESTROYED,
        format!(
            "{argument} is not a {} handle made by this library ({why}); pass the pointer its \
             create function returned",
            kind.c_name()
        ),
    )
}

/// Writes `value` through the output pointer `out`, or fails with `PHASERS_ENULL`.
///
/// # Safety
///
/// `out` is null or valid for writing a `V`.
pub unsafe fn write_out<V>(out: *mut V, value: V, argument: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null(argument));
    }
    // SAFETY: non-null, and the caller promises it is valid for writes.
    unsafe { out.write(value) };
    Ok(())
}

/// Writes `value` through `out` if it is not null (an optional output).
///
/// # Safety
///
/// `out` is null or valid for writing a `V`.
pub unsafe fn write_optional<V>(out: *mut V, value: V) {
    if !out.is_null() {
        // SAFETY: non-null, and the caller promises it is valid for writes.
        unsafe { out.write(value) };
    }
}

/// Checks that the output pointer `out` is not null, before the work whose result it receives.
pub fn require_out<V>(out: *mut V, argument: &str) -> Result<(), Failure> {
    if out.is_null() {
        Err(Failure::null(argument))
    } else {
        Ok(())
    }
}

/// `c_int` of a flag, for `is_leader` and the like.
pub fn c_bool(flag: bool) -> c_int {
    c_int::from(flag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::PHASERS_ENULL;

    #[test]
    fn resolve_checks_null_kind_and_death() {
        let handle = Handle::create(Kind::Phaser, 7u32);
        // SAFETY: handles from `create` stay readable for ever; nothing runs concurrently.
        unsafe {
            assert_eq!(*Handle::resolve(handle, Kind::Phaser, "p").unwrap(), 7);
            let wrong = Handle::<u32>::resolve(handle, Kind::Barrier, "b").unwrap_err();
            assert_eq!(wrong.code, PHASERS_EDESTROYED);
            assert!(wrong.message.contains("phasers_phaser handle"), "{wrong:?}");
            let null = Handle::<u32>::resolve(std::ptr::null(), Kind::Phaser, "p").unwrap_err();
            assert_eq!(null.code, PHASERS_ENULL);
            Handle::destroy(handle, Kind::Phaser, "p", |_| Ok(())).unwrap();
            let dead = Handle::resolve(handle, Kind::Phaser, "p").unwrap_err();
            assert_eq!(dead.code, PHASERS_EDESTROYED);
            assert!(dead.message.contains("already destroyed"), "{dead:?}");
            let again = Handle::destroy(handle, Kind::Phaser, "p", |_| Ok(())).unwrap_err();
            assert_eq!(again.code, PHASERS_EDESTROYED);
        }
    }

    #[test]
    fn a_refusing_check_keeps_the_handle_alive() {
        let handle = Handle::create(Kind::Barrier, String::from("busy"));
        // SAFETY: as above.
        unsafe {
            let refused = Handle::destroy(handle, Kind::Barrier, "b", |_| {
                Err::<(), _>(Failure::busy("in use"))
            });
            assert_eq!(refused.unwrap_err().message, "in use");
            assert_eq!(Handle::resolve(handle, Kind::Barrier, "b").unwrap(), "busy");
            Handle::destroy(handle, Kind::Barrier, "b", |_| Ok(())).unwrap();
        }
    }

    #[test]
    fn foreign_memory_with_another_magic_is_refused() {
        let words = [0u64; 2];
        // SAFETY: `words` is 16 readable, aligned bytes.
        let refused = unsafe {
            Handle::<u8>::resolve(words.as_ptr().cast(), Kind::Accumulator, "a").unwrap_err()
        };
        assert_eq!(refused.code, PHASERS_EDESTROYED);
        assert!(refused.message.contains("magic word"), "{refused:?}");
    }
}
