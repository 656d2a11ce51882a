//! `phasers_phaser_*`: phaser handles and their creation, which also yields the creator's
//! registration.

use std::ffi::c_int;

use phasers_core::{Phaser, Registration};

use crate::entry::guarded;
use crate::enums::mode_from_c;
use crate::handle::{require_out, write_out, Handle, Kind};
use crate::registration::{RegistrationHandle, RegistrationObject};
use crate::status::Failure;

/// The C `phasers_phaser`: a handle to a core [`Phaser`] (itself a cheap shared handle).
pub type PhaserHandle = Handle<Phaser>;

/// Stores the two handles of a new phaser through the output pointers, which `create` checked.
///
/// # Safety
///
/// Both pointers are non-null and writable.
unsafe fn hand_out(
    created: (Phaser, Registration),
    phaser_out: *mut *mut PhaserHandle,
    creator_out: *mut *mut RegistrationHandle,
) -> Result<(), Failure> {
    let (phaser, creator) = created;
    let phaser = Handle::create(Kind::Phaser, phaser);
    let creator = Handle::create(Kind::Registration, RegistrationObject::new(creator));
    // SAFETY: forwarded from the caller.
    unsafe {
        write_out(phaser_out, phaser, "phaser")?;
        write_out(creator_out, creator, "creator")
    }
}

/// Creates a flat phaser; its creator is registered with `mode` (`PHASERS_MODE_*`).
///
/// # Safety
///
/// `phaser` and `creator` are null (`PHASERS_ENULL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_phaser_create(
    mode: c_int,
    phaser: *mut *mut PhaserHandle,
    creator: *mut *mut RegistrationHandle,
) -> c_int {
    guarded(|| {
        require_out(phaser, "phaser")?;
        require_out(creator, "creator")?;
        let created = Phaser::new(mode_from_c(mode)?)?;
        // SAFETY: both checked non-null; the caller promises they are writable.
        unsafe { hand_out(created, phaser, creator) }
    })
}

/// Creates a phaser shaped as a tree of sub-phasers: `tiers` levels (1 is flat), up to `degree`
/// (at least 2) children per sub-phaser and registrations per leaf.
///
/// # Safety
///
/// As [`phasers_phaser_create`].
#[no_mangle]
pub unsafe extern "C" fn phasers_phaser_create_tree(
    mode: c_int,
    tiers: usize,
    degree: usize,
    phaser: *mut *mut PhaserHandle,
    creator: *mut *mut RegistrationHandle,
) -> c_int {
    guarded(|| {
        require_out(phaser, "phaser")?;
        require_out(creator, "creator")?;
        let created = Phaser::builder()
            .mode(mode_from_c(mode)?)
            .tiers(tiers)
            .degree(degree)
            .build()?;
        // SAFETY: both checked non-null; the caller promises they are writable.
        unsafe { hand_out(created, phaser, creator) }
    })
}

/// Stores the phase in progress (the number of completed phases) in `*out`.
///
/// # Safety
///
/// `phaser` is null, or a pointer returned by a phaser create function (destroyed or not) or other
/// readable memory, not being destroyed concurrently; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_phaser_phase(phaser: *const PhaserHandle, out: *mut u64) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let phaser = unsafe { Handle::resolve(phaser, Kind::Phaser, "phaser") }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, phaser.phase(), "out") }
    })
}

/// Terminates the phaser: every wait on it, now or later, fails with `PHASERS_ETERMINATED`.
///
/// # Safety
///
/// As [`phasers_phaser_phase`].
#[no_mangle]
pub unsafe extern "C" fn phasers_phaser_terminate(phaser: *mut PhaserHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let phaser = unsafe { Handle::resolve(phaser, Kind::Phaser, "phaser") }?;
        phaser.force_terminate();
        Ok(())
    })
}

/// Destroys this phaser handle. Registrations and accumulators keep the phaser itself alive.
///
/// # Safety
///
/// As [`phasers_phaser_phase`].
#[no_mangle]
pub unsafe extern "C" fn phasers_phaser_destroy(phaser: *mut PhaserHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(phaser, Kind::Phaser, "phaser", |_| Ok(())) }
    })
}
