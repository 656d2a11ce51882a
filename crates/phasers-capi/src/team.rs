//! `phasers_team_*` and `phasers_member_*` (but the collectives): teams ([`phasers_core::Team`])
//! and the handles of their members ([`Member`]).
//!
//! A `phasers_team` owns the team and counts the member handles made from it (directly, or by
//! splitting one of them): destroying the team while any exists is `PHASERS_EBUSY`. A
//! `phasers_member` owns one `Member`. Its state word says who may touch it: nobody (`IDLE`), the
//! one thread inside a blocking call (`CALL`), a non-blocking call's request (`REQUEST`, until the
//! request is waited for or freed), or nobody ever again (`DESTROYED`). Moving the word away from
//! `IDLE` is a compare-and-swap, so exactly one thread or request holds the member at a time, and
//! everyone else gets `PHASERS_EBUSY` without touching it.

use std::cell::UnsafeCell;
use std::ffi::c_int;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use phasers_core::{Member, Team, TeamBuilder};

use crate::entry::guarded;
use crate::handle::{require_out, write_out, Handle, Kind};
use crate::status::{Failure, PHASERS_EPANIC};

/// Nobody holds the member.
const IDLE: u8 = 0;
/// A thread is inside a blocking call on it.
const CALL: u8 = 1;
/// A non-blocking call's request holds it.
const REQUEST: u8 = 2;
/// Its handle is being destroyed.
const DESTROYED: u8 = 3;

/// The object behind a `phasers_team`.
pub struct TeamObject {
    team: Team,
    /// Live member handles made from this team or split from them.
    handles: Arc<AtomicUsize>,
}

impl TeamObject {
    /// `PHASERS_EBUSY` while member handles exist, for `destroy`.
    fn settle(&self) -> Result<(), Failure> {
        match self.handles.load(Ordering::Acquire) {
            0 => Ok(()),
            live => Err(Failure::busy(format!(
                "{live} member handle(s) of this team (or split from its members) still exist; \
                 destroy them with phasers_member_destroy first"
            ))),
        }
    }
}

/// The object behind a `phasers_member`.
pub struct MemberObject {
    rank: usize,
    parties: usize,
    state: AtomicU8,
    /// `None` once a panic inside a call dropped the member (which broke its team). Reached only
    /// through a [`Claim`] or a [`Lease`].
    member: UnsafeCell<Option<Member>>,
    /// The count of the team this member's handle was made from; decremented on drop.
    handles: Arc<AtomicUsize>,
}

// SAFETY: `member` is reached only through a `Claim` or a `Lease`, and one of those exists only for
// whoever moved `state` away from IDLE with a compare-and-swap, until it moves it back: never two
// at a time, so the `Member` (which is `Send`) is never used by two threads at once. Everything
// else is immutable or atomic.
unsafe impl Sync for MemberObject {}

impl MemberObject {
    /// Wraps `member` for a handle counted in `handles`.
    fn new(member: Member, handles: Arc<AtomicUsize>) -> Self {
        handles.fetch_add(1, Ordering::AcqRel);
        MemberObject {
            rank: member.rank(),
            parties: member.parties(),
            state: AtomicU8::new(IDLE),
            member: UnsafeCell::new(Some(member)),
            handles,
        }
    }

    /// The member's rank in its team.
    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// The number of members of its team.
    pub(crate) fn parties(&self) -> usize {
        self.parties
    }

    /// Moves the state from `IDLE` to `to`, or says who holds the member.
    fn acquire(&self, to: u8) -> Result<(), Failure> {
        match self
            .state
            .compare_exchange(IDLE, to, Ordering::Acquire, Ordering::Acquire)
        {
            Ok(_) => Ok(()),
            Err(REQUEST) => Err(Failure::busy(format!(
                "member {} has a non-blocking call in flight; finish it with \
                 phasers_request_wait (or _test until done, then _wait, or _free) before using \
                 the member again",
                self.rank
            ))),
            Err(_) => Err(Failure::busy(format!(
                "member {} is in use by another thread (or being destroyed); a member belongs to \
                 one thread at a time",
                self.rank
            ))),
        }
    }

    /// Runs `operation` on the member as the only thread holding it: `PHASERS_EBUSY` if another
    /// thread or a request holds it. A panic inside drops the member, which breaks its team for
    /// the others rather than leaving them waiting for it.
    pub(crate) fn with<R>(
        &self,
        operation: impl FnOnce(&mut Member) -> Result<R, Failure>,
    ) -> Result<R, Failure> {
        self.acquire(CALL)?;
        let mut claim = Claim {
            object: NonNull::from(self),
        };
        // SAFETY: the claim was just acquired and lives until the end of this function.
        let member = unsafe { claim.member() }?;
        operation(member)
    }

    /// Holds the member for a non-blocking call: `PHASERS_EBUSY` if another thread or request
    /// holds it. The member stays held until the lease is dropped.
    pub(crate) fn lease(&self) -> Result<Lease, Failure> {
        self.acquire(REQUEST)?;
        Ok(Lease(Claim {
            object: NonNull::from(self),
        }))
    }

    /// Refuses (`PHASERS_EBUSY`) while a thread or a request holds the member; otherwise marks it
    /// destroyed for good, for `destroy`.
    fn retire(&self) -> Result<(), Failure> {
        self.acquire(DESTROYED).map_err(|busy| {
            Failure::busy(format!(
                "{}; destroy it only when no call or request uses it",
                busy.message
            ))
        })
    }
}

impl Drop for MemberObject {
    fn drop(&mut self) {
        // Drop the member first: its drop breaks the team for members that still count on it.
        drop(self.member.get_mut().take());
        self.handles.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Exclusive access to a member, from the acquisition of its state until this is dropped, which
/// sets it back to `IDLE` (after dropping the member if a panic is unwinding, see
/// [`DropOnUnwind`](crate::entry::DropOnUnwind) for why).
struct Claim {
    object: NonNull<MemberObject>,
}

impl Claim {
    /// The member.
    ///
    /// # Safety
    ///
    /// The returned reference is not used after this claim is dropped, and the member object
    /// outlives the claim (its handle is not destroyed: `retire` refuses while the state is not
    /// `IDLE`).
    unsafe fn member<'a>(&mut self) -> Result<&'a mut Member, Failure> {
        // SAFETY: the state was moved away from IDLE for this claim, so nothing else reaches
        // `member` until the claim is dropped (see `MemberObject`'s `Sync`); the caller keeps the
        // object alive and the reference within the claim's life.
        let slot = unsafe { &mut *self.object.as_ref().member.get() };
        slot.as_mut().ok_or_else(|| {
            Failure::new(
                PHASERS_EPANIC,
                "an earlier call on this member panicked inside the library, which broke its \
                 team; destroy the member, then the team",
            )
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        // SAFETY: the object outlives every claim on it (see `member`).
        let object = unsafe { self.object.as_ref() };
        if std::thread::panicking() {
            // SAFETY: this claim still holds the member, and no reference from `member` is used
            // any more: the call that used it is unwinding.
            drop(unsafe { &mut *object.member.get() }.take());
        }
        object.state.store(IDLE, Ordering::Release);
    }
}

/// A member held by a non-blocking call's request (see [`MemberObject::lease`]).
pub(crate) struct Lease(Claim);

// SAFETY: a lease is a claim on a `MemberObject`, which is `Send` and `Sync`: it may be released
// (dropped) from any thread, as a request may be finished from any thread, and the member it
// hands out is `Send`.
unsafe impl Send for Lease {}
// SAFETY: a shared `&Lease` gives access to nothing.
unsafe impl Sync for Lease {}

impl Lease {
    /// The member, for the request's whole life.
    ///
    /// # Safety
    ///
    /// The reference is dropped before the lease (the request drops its pending call, which holds
    /// it, first).
    pub(crate) unsafe fn member<'a>(&mut self) -> Result<&'a mut Member, Failure> {
        // SAFETY: forwarded from the caller; a leased object cannot be destroyed.
        unsafe { self.0.member() }
    }
}

/// The C `phasers_team`.
pub type TeamHandle = Handle<TeamObject>;
/// The C `phasers_member`.
pub type MemberHandle = Handle<MemberObject>;

/// # Safety
///
/// `member` is null, or a pointer returned by this library (destroyed or not) or other readable
/// memory, not being destroyed concurrently.
pub(crate) unsafe fn resolve_member<'a>(
    member: *const MemberHandle,
) -> Result<&'a MemberObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(member, Kind::Member, "member") }
}

/// Creates a team of `parties` members, checked unless `checked` is 0, and stores it in `*out`.
///
/// # Safety
///
/// `out` is null (`PHASERS_ENULL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_team_create(
    parties: usize,
    checked: c_int,
    out: *mut *mut TeamHandle,
) -> c_int {
    guarded(|| {
        require_out(out, "out")?;
        let team = TeamBuilder::new(parties).checked(checked != 0).build()?;
        let object = TeamObject {
            team,
            handles: Arc::new(AtomicUsize::new(0)),
        };
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::Team, object), "out") }
    })
}

/// Stores the number of members of `team` in `*out`.
///
/// # Safety
///
/// `team` is null, or a pointer returned by `phasers_team_create` (destroyed or not) or other
/// readable memory, not being destroyed concurrently; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_team_parties(team: *const TeamHandle, out: *mut usize) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(team, Kind::Team, "team") }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.team.parties(), "out") }
    })
}

/// Stores the member of `rank` in `*out`; each rank is handed out once.
///
/// # Safety
///
/// As [`phasers_team_parties`], with `out` null or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_team_member(
    team: *mut TeamHandle,
    rank: usize,
    out: *mut *mut MemberHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { Handle::resolve(team, Kind::Team, "team") }?;
        require_out(out, "out")?;
        let member = object.team.participant(rank)?;
        let member = MemberObject::new(member, Arc::clone(&object.handles));
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::Member, member), "out") }
    })
}

/// Destroys `team`; `PHASERS_EBUSY` while member handles made from it exist.
///
/// # Safety
///
/// As [`phasers_team_parties`].
#[no_mangle]
pub unsafe extern "C" fn phasers_team_destroy(team: *mut TeamHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(team, Kind::Team, "team", TeamObject::settle) }
    })
}

/// Stores the member's rank in `*out`.
///
/// # Safety
///
/// `member` as in [`resolve_member`]; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_member_rank(
    member: *const MemberHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.rank(), "out") }
    })
}

/// Stores the number of members of the member's team in `*out`.
///
/// # Safety
///
/// As [`phasers_member_rank`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_parties(
    member: *const MemberHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.parties(), "out") }
    })
}

/// Collective: splits the team by `color` (at least 0), ranking each sub-team by `(key, rank)`,
/// and stores the caller's member of its sub-team in `*out`.
///
/// # Safety
///
/// `member` as in [`resolve_member`]; `out` is null or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_member_split(
    member: *mut MemberHandle,
    color: c_int,
    key: c_int,
    out: *mut *mut MemberHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        require_out(out, "out")?;
        let color = u32::try_from(color).map_err(|_| {
            Failure::invalid(format!(
                "color {color} is negative; pass a color of 0 or more (members with the same \
                 color form a sub-team)"
            ))
        })?;
        let split = object.with(|member| Ok(member.split(color, i64::from(key))?))?;
        // Only the color phasers::team::NONE (u32::MAX, above any C int) opts out.
        let split = split.expect("a member that passes a color below NONE joins a sub-team");
        let split = MemberObject::new(split, Arc::clone(&object.handles));
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::Member, split), "out") }
    })
}

/// Destroys the member's handle; `PHASERS_EBUSY` while a thread is inside a call on it or a
/// request of its holds it. Members that still count on it get `PHASERS_EBROKEN`.
///
/// # Safety
///
/// As [`phasers_member_rank`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_destroy(member: *mut MemberHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(member, Kind::Member, "member", MemberObject::retire) }
    })
}
