//! The blocking collectives, `phasers_member_barrier` and `phasers_member_<collective>`: each
//! checks its handle, element type, operator and buffers, then runs the collective as the only
//! thread holding the member. Their non-blocking forms are in `request`.

use std::ffi::{c_int, c_void};

use crate::collective_args::{with_element, Args, Collective};
use crate::entry::guarded;
use crate::enums::{from_c, ElementType, OpKind, ELEMENT_TYPES, OPS};
use crate::status::Failure;
use crate::team::{resolve_member, MemberHandle};

/// Checks a C element type.
pub(crate) fn element_from_c(type_: c_int) -> Result<ElementType, Failure> {
    from_c(&ELEMENT_TYPES, type_, "element type", "PHASERS_TYPE_")
}

/// Checks a C operator.
pub(crate) fn op_from_c(op: c_int) -> Result<OpKind, Failure> {
    from_c(&OPS, op, "operator", "PHASERS_OP_")
}

/// Waits until every member of the team has called it.
///
/// # Safety
///
/// `member` is null, or a pointer returned by this library (destroyed or not) or other readable
/// memory, not being destroyed concurrently.
#[no_mangle]
pub unsafe extern "C" fn phasers_member_barrier(member: *mut MemberHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        object.with(|member| Ok(member.barrier()?))
    })
}

/// Runs `collective` (or its operator's error) with the C buffers, blocking.
///
/// # Safety
///
/// `member` as in [`phasers_member_barrier`]; the buffers as the header documents the call: each
/// holds the elements its count says (or is ignored at this member), not overlapping the other,
/// valid until the call returns.
unsafe fn blocking(
    member: *mut MemberHandle,
    type_: c_int,
    collective: Result<Collective, Failure>,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        let element = element_from_c(type_)?;
        let collective = collective?;
        with_element!(element, |T| {
            let (rank, parties) = (object.rank(), object.parties());
            let args = Args::<T>::check(collective, rank, parties, input, output, count)?;
            // SAFETY: the caller's promise for the buffers holds until this call returns, and the
            // slices `run` makes do not outlive it.
            object.with(|member| Ok(unsafe { args.run(member) }?))
        })
    })
}

/// Copies the root's `buffer` (`count` elements) into every member's.
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_broadcast(
    member: *mut MemberHandle,
    type_: c_int,
    buffer: *mut c_void,
    count: usize,
    root: usize,
) -> c_int {
    let collective = Ok(Collective::Broadcast { root });
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, std::ptr::null(), buffer, count) }
}

/// Reduces every member's `input` into the root's `output` (`count` elements each).
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_reduce(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    root: usize,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::Reduce { root, op });
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}

/// Reduces every member's `input` into every member's `output`.
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_allreduce(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::Allreduce { op });
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}

/// Gathers every member's `input` (`count` elements) into the root's `output`, in rank order.
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_gather(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    root: usize,
) -> c_int {
    let collective = Ok(Collective::Gather { root });
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}

/// Gathers every member's `input` into every member's `output`, in rank order.
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_allgather(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    let collective = Ok(Collective::Allgather);
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}

/// Sends block `r` (`count` elements) of the root's `input` to member `r`'s `output`.
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_scatter(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    root: usize,
) -> c_int {
    let collective = Ok(Collective::Scatter { root });
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}

/// Sends block `r` of every member's `input` to member `r`, whose `output` holds the blocks in
/// the senders' rank order.
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_alltoall(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    let collective = Ok(Collective::Alltoall);
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}

/// Stores in member `r`'s `output` the reduction of the inputs of members 0 to `r`.
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_scan_inclusive(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::ScanInclusive { op });
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}

/// Stores in member `r`'s `output` the reduction of the inputs of members 0 to `r - 1` (member
/// 0's output is left as it was).
///
/// # Safety
///
/// As [`blocking`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_scan_exclusive(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::ScanExclusive { op });
    // SAFETY: forwarded from the caller.
    unsafe { blocking(member, type_, collective, input, output, count) }
}
