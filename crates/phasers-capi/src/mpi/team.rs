//! `phasers_mpi_team_*` and `phasers_mpi_member_*`: a hybrid team over the threads of every rank
//! of an `MPI_Comm` ([`phasers_mpi::HybridTeam`]), and the handles of this rank's members.
//!
//! A `phasers_mpi_team` holds this rank's members until each is handed out, once, to the thread
//! that will use it, and counts the member handles made from it: destroying the team while any
//! exists is `PHASERS_EBUSY`, as for `phasers_team`. Destroying a member handle drops the member,
//! which breaks the team for every other member (they get `PHASERS_EBROKEN`, not a hang).

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, MutexGuard};

use phasers_mpi::mpi::ffi::MPI_Comm;
use phasers_mpi::{HybridMember, HybridTeam};

use super::{CallerComm, Exclusive};
use crate::collective_args::{with_element, Checked};
use crate::collectives::{element_from_c, op_from_c};
use crate::entry::guarded;
use crate::handle::{require_out, write_out, Handle, Kind};
use crate::status::Failure;

/// The object behind a `phasers_mpi_team`.
pub struct MpiTeamObject {
    /// This rank's members, by thread; `None` once handed out.
    members: Box<[Exclusive<HybridMember>]>,
    team: HybridTeam,
    /// Live member handles made from this team.
    handles: Arc<AtomicUsize>,
}

impl MpiTeamObject {
    /// `PHASERS_EBUSY` while member handles exist, for destroy.
    fn settle(&self) -> Result<(), Failure> {
        match self.handles.load(Ordering::Acquire) {
            0 => Ok(()),
            live => Err(Failure::busy(format!(
                "{live} member handle(s) of this phasers_mpi_team still exist; destroy them with \
                 phasers_mpi_member_destroy first"
            ))),
        }
    }
}

/// The object behind a `phasers_mpi_member`.
pub struct MpiMemberObject {
    member: Exclusive<HybridMember>,
    rank: usize,
    parties: usize,
    /// The count of the team this handle was made from; decremented on drop.
    handles: Arc<AtomicUsize>,
}

impl MpiMemberObject {
    fn who(&self) -> String {
        format!("phasers_mpi_member {}", self.rank)
    }

    fn settle(&self) -> Result<MutexGuard<'_, Option<HybridMember>>, Failure> {
        self.member.idle(|| self.who())
    }
}

impl Drop for MpiMemberObject {
    fn drop(&mut self) {
        // The member goes first: its drop breaks the team for the members that count on it.
        drop(self.member.take());
        self.handles.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The C `phasers_mpi_team`.
pub type MpiTeamHandle = Handle<MpiTeamObject>;
/// The C `phasers_mpi_member`.
pub type MpiMemberHandle = Handle<MpiMemberObject>;

/// # Safety
///
/// `team` is null, or a pointer returned by this library (destroyed or not) or other readable
/// memory, not being destroyed concurrently.
unsafe fn resolve_team<'a>(team: *const MpiTeamHandle) -> Result<&'a MpiTeamObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(team, Kind::MpiTeam, "team") }
}

/// # Safety
///
/// As [`resolve_team`], for `member`.
unsafe fn resolve_member<'a>(
    member: *const MpiMemberHandle,
) -> Result<&'a MpiMemberObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(member, Kind::MpiMember, "member") }
}

/// Collective over `comm`: builds a hybrid team of `threads` members in this rank and every
/// member of the other ranks of `comm` (each rank passes its own count), checked unless `checked`
/// is 0, and stores it in `*out`.
///
/// # Safety
///
/// `comm` is `MPI_COMM_NULL` (`PHASERS_EINVAL`) or a valid communicator of this process; `out` is
/// null (`PHASERS_ENULL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_team_create(
    comm: MPI_Comm,
    threads: usize,
    checked: c_int,
    out: *mut *mut MpiTeamHandle,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { create(CallerComm::C(comm), threads, checked, out) }
}

/// As [`phasers_mpi_team_create`], for the communicator whose Fortran handle (`MPI_Fint`) is
/// `comm`, converted with `MPI_Comm_f2c`.
///
/// # Safety
///
/// `comm` as [`CallerComm::adopt`] requires of a Fortran handle; `out` as in
/// [`phasers_mpi_team_create`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_team_create_fcomm(
    comm: c_int,
    threads: usize,
    checked: c_int,
    out: *mut *mut MpiTeamHandle,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { create(CallerComm::Fortran(comm), threads, checked, out) }
}

/// # Safety
///
/// `comm` as [`CallerComm::adopt`] requires; `out` is null or valid for writing a pointer.
unsafe fn create(
    comm: CallerComm,
    threads: usize,
    checked: c_int,
    out: *mut *mut MpiTeamHandle,
) -> c_int {
    guarded(|| {
        require_out(out, "out")?;
        // SAFETY: the caller's promise about `comm`.
        let (mpi, comm) = unsafe { comm.adopt() }?;
        let team = HybridTeam::builder(&mpi, &*comm, threads)
            .checked(checked != 0)
            .build()?;
        let object = MpiTeamObject {
            members: team
                .participants()
                .into_iter()
                .map(Exclusive::new)
                .collect(),
            team,
            handles: Arc::new(AtomicUsize::new(0)),
        };
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::MpiTeam, object), "out") }
    })
}

/// Stores the number of members over every rank in `*out`.
///
/// # Safety
///
/// `team` as in [`resolve_team`]; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_team_parties(
    team: *const MpiTeamHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_team(team) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.team.parties(), "out") }
    })
}

/// Stores the member of this rank's `thread` (0 to this rank's count - 1) in `*out`; each is
/// handed out once. Members are ranked by rank of `comm`, then by thread.
///
/// # Safety
///
/// `team` as in [`resolve_team`]; `out` is null or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_team_member(
    team: *mut MpiTeamHandle,
    thread: usize,
    out: *mut *mut MpiMemberHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_team(team) }?;
        require_out(out, "out")?;
        let threads = object.members.len();
        let slot = object.members.get(thread).ok_or_else(|| {
            Failure::invalid(format!(
                "thread {thread} is out of range: this rank built the team with {threads} \
                 threads, so threads are 0 to {}",
                threads - 1
            ))
        })?;
        let member = slot.take().ok_or_else(|| {
            Failure::invalid(format!(
                "the member of thread {thread} was handed out already; each is handed out once"
            ))
        })?;
        object.handles.fetch_add(1, Ordering::AcqRel);
        let member = MpiMemberObject {
            rank: member.rank(),
            parties: member.parties(),
            member: Exclusive::new(member),
            handles: Arc::clone(&object.handles),
        };
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(out, Handle::create(Kind::MpiMember, member), "out") }
    })
}

/// Destroys `team`; `PHASERS_EBUSY` while member handles made from it exist. Members not handed
/// out are dropped with it.
///
/// # Safety
///
/// As [`phasers_mpi_team_parties`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_team_destroy(team: *mut MpiTeamHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(team, Kind::MpiTeam, "team", MpiTeamObject::settle) }
    })
}

/// Stores the member's rank in the team (over every rank) in `*out`.
///
/// # Safety
///
/// `member` as in [`resolve_member`]; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_member_rank(
    member: *const MpiMemberHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.rank, "out") }
    })
}

/// Stores the number of members of the member's team in `*out`.
///
/// # Safety
///
/// As [`phasers_mpi_member_rank`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_member_parties(
    member: *const MpiMemberHandle,
    out: *mut usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        // SAFETY: the caller promises `out` is null or writable.
        unsafe { write_out(out, object.parties, "out") }
    })
}

/// Waits until every member of the team, on every rank, has called it.
///
/// # Safety
///
/// As [`phasers_mpi_member_rank`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_member_barrier(member: *mut MpiMemberHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        object
            .member
            .with(|| object.who(), |member| Ok(member.barrier()?))
    })
}

/// Reduces every member's `input` with `op` into every member's `output` (`count` elements of
/// `type_` each, separate arrays).
///
/// # Safety
///
/// `member` as in [`resolve_member`]; unless `count` is 0, `input` and `output` point to `count`
/// elements of `type_` that stay valid until the call returns, and nothing else writes them
/// meanwhile.
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_member_allreduce(
    member: *mut MpiMemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        let element = element_from_c(type_)?;
        let op = op_from_c(op)?;
        with_element!(element, |T| {
            let input = Checked::<T>::new(input, count, "input")?;
            let output = Checked::<T>::new(output, count, "output")?;
            input.disjoint_from(&output, "phasers_mpi_member_allreduce")?;
            object.member.with(
                || object.who(),
                |member| {
                    // SAFETY: the caller promises both buffers hold `count` elements for the
                    // length of this call, which the slices do not outlive, and they do not
                    // overlap (checked above).
                    let (input, output) = unsafe { (input.input(), output.output()) };
                    Ok(member.allreduce(input, output, op.to_op())?)
                },
            )
        })
    })
}

/// Destroys the member's handle; `PHASERS_EBUSY` while a thread is inside a call on it. The
/// other members of its team then get `PHASERS_EBROKEN` from their next call.
///
/// # Safety
///
/// As [`phasers_mpi_member_rank`].
#[no_mangle]
pub unsafe extern "C" fn phasers_mpi_member_destroy(member: *mut MpiMemberHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(member, Kind::MpiMember, "member", MpiMemberObject::settle) }
    })
}
