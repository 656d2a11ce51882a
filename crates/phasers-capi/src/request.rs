//! Non-blocking collectives and their requests: `phasers_member_i*` and `phasers_request_*`.
//!
//! A [`Pending`] call borrows its member and its buffers mutably until it is dropped, which Rust
//! checks at compile time. Across the C boundary nothing can check it, so a request keeps both
//! itself:
//!
//! - the member: the request holds a [`Lease`] on the member object, whose state stays
//!   `REQUEST` until the request is waited for or freed. Every other call on that member,
//!   including its destroy, gets `PHASERS_EBUSY` meanwhile, so the `&mut Member` inside the
//!   pending call is the only way to the member, and the member object outlives it;
//! - the buffers: their slices are made from the C pointers with the request's lifetime. That the
//!   memory stays valid and untouched until the request completes is the C caller's obligation,
//!   as for `MPI_Iallreduce`, and the header says so.
//!
//! Dropping the request drops the pending call first (which finishes it, as dropping a `Pending`
//! does), then the lease.

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use phasers_core::{Error, Member, Pending};

use crate::collective_args::{with_element, Args, Collective};
use crate::collectives::{element_from_c, op_from_c};
use crate::entry::guarded;
use crate::handle::{c_bool, require_out, write_out, Handle, Kind};
use crate::status::{Failure, PHASERS_EPANIC};
use crate::team::{resolve_member, Lease, MemberHandle, MemberObject};

/// A pending call of any element type.
trait InFlight: Send {
    /// `Pending::test`.
    fn test(&mut self) -> phasers_core::Result<bool>;
    /// `Pending::wait_timeout`.
    fn wait_timeout(&mut self, timeout: Duration) -> phasers_core::Result<()>;
    /// `Pending::wait`.
    fn wait(self: Box<Self>) -> phasers_core::Result<()>;
}

/// A pending call whose buffers and member the request keeps (see the module docs).
struct Typed<T: Copy + Send + 'static>(Pending<'static, T>);

// SAFETY: a `Pending` is not `Send` only because its call holds the buffers as raw pointers (and
// could hold a borrowed closure, which these calls never do: their operators are built-in). The
// buffers are the C caller's, handed over for the request's whole life to be used by whichever
// thread tests or waits (the header's rule, as with MPI requests); the member it borrows is
// `Send`, and the lease keeps every other thread away from it.
unsafe impl<T: Copy + Send + 'static> Send for Typed<T> {}

impl<T: Copy + Send + 'static> InFlight for Typed<T> {
    fn test(&mut self) -> phasers_core::Result<bool> {
        self.0.test()
    }

    fn wait_timeout(&mut self, timeout: Duration) -> phasers_core::Result<()> {
        self.0.wait_timeout(timeout)
    }

    fn wait(self: Box<Self>) -> phasers_core::Result<()> {
        self.0.wait()
    }
}

/// The object behind a `phasers_request`.
pub struct RequestObject {
    /// `None` after a panic inside a call on the request (the pending call was leaked rather than
    /// finished, see [`RequestObject::lock`]). The lock turns use by two threads at once into
    /// `PHASERS_EBUSY`.
    flight: Mutex<Option<Box<dyn InFlight>>>,
    /// Keeps the member held; dropped after `flight` (see `Drop`).
    _lease: Lease,
}

impl Drop for RequestObject {
    fn drop(&mut self) {
        // Finish the call (Pending's drop waits for it) before the lease lets the member go: the
        // pending call holds the member and the buffers until then.
        let flight = match self.flight.get_mut() {
            Ok(flight) => flight.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        drop(flight);
    }
}

type FlightGuard<'a> = MutexGuard<'a, Option<Box<dyn InFlight>>>;

impl RequestObject {
    /// Locks the request for this thread's call, or fails with `PHASERS_EBUSY`.
    fn lock(&self) -> Result<FlightGuard<'_>, Failure> {
        match self.flight.try_lock() {
            Ok(guard) => Ok(guard),
            Err(TryLockError::WouldBlock) => Err(Failure::busy(
                "this request is in use by another thread (or being freed); test, wait for or \
                 free a request from one thread at a time",
            )),
            Err(TryLockError::Poisoned(poisoned)) => {
                // A panic inside an earlier call left the pending call in an unknown state:
                // finishing it could wait for ever, so it is leaked (the member's next call
                // finishes it without moving data, as for a forgotten Pending).
                let mut guard = poisoned.into_inner();
                if let Some(flight) = guard.take() {
                    std::mem::forget(flight);
                }
                Ok(guard)
            }
        }
    }
}

/// The pending call behind a locked request, or `PHASERS_EPANIC` if a panic lost it.
fn in_flight<'g>(guard: &'g mut FlightGuard<'_>) -> Result<&'g mut Box<dyn InFlight>, Failure> {
    guard.as_mut().ok_or_else(lost)
}

/// The failure of a request whose pending call a panic lost.
fn lost() -> Failure {
    Failure::new(
        PHASERS_EPANIC,
        "an earlier call on this request panicked inside the library; free the request, then \
         destroy its member and team",
    )
}

/// The C `phasers_request`.
pub type RequestHandle = Handle<RequestObject>;

/// Starts a call on the member behind `object` with `start`, and stores its request in `*out`.
///
/// # Safety
///
/// `out` was checked non-null and is writable; `start` builds the pending call from buffers the
/// C caller keeps valid until the request completes.
unsafe fn hand_out<T: Copy + Send + 'static>(
    object: &MemberObject,
    out: *mut *mut RequestHandle,
    start: impl FnOnce(&'static mut Member) -> phasers_core::Result<Pending<'static, T>>,
) -> Result<(), Failure> {
    let mut lease = object.lease()?;
    // SAFETY: the member reference goes into the pending call, which the request drops before
    // its lease (see `RequestObject`'s `Drop`); if the start fails, it is gone before `lease` is
    // dropped at the end of this function.
    let member = unsafe { lease.member() }?;
    let pending = start(member)?;
    let request = RequestObject {
        flight: Mutex::new(Some(Box::new(Typed(pending)))),
        _lease: lease,
    };
    // SAFETY: the caller checked `out` and promises it is writable.
    unsafe { write_out(out, Handle::create(Kind::Request, request), "out") }
}

/// Starts a barrier without waiting, and stores its request in `*out`.
///
/// # Safety
///
/// `member` is null, or a pointer returned by this library (destroyed or not) or other readable
/// memory, not being destroyed concurrently; `out` is null or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn phasers_member_ibarrier(
    member: *mut MemberHandle,
    out: *mut *mut RequestHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        require_out(out, "out")?;
        // SAFETY: `out` checked above; a barrier has no buffers.
        unsafe { hand_out::<()>(object, out, |member| member.ibarrier()) }
    })
}

/// Starts `collective` (or fails with its operator's error) with the C buffers, and stores its
/// request in `*out`.
///
/// # Safety
///
/// As [`phasers_member_ibarrier`]; the buffers as the header documents the call: each holds the
/// elements its count says (or is ignored at this member), not overlapping the other, valid and
/// untouched until the request completes.
unsafe fn start(
    member: *mut MemberHandle,
    type_: c_int,
    collective: Result<Collective, Failure>,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve_member(member) }?;
        let element = element_from_c(type_)?;
        let collective = collective?;
        require_out(out, "out")?;
        with_element!(element, |T| {
            let (rank, parties) = (object.rank(), object.parties());
            let args = Args::<T>::check(collective, rank, parties, input, output, count)?;
            // SAFETY: the caller promises the buffers until the request completes, which is the
            // pending call's life.
            let begin = |member: &'static mut Member| unsafe { args.start(member) };
            // SAFETY: `out` checked above.
            unsafe { hand_out::<T>(object, out, begin) }
        })
    })
}

/// Starts a `phasers_member_broadcast`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_ibroadcast(
    member: *mut MemberHandle,
    type_: c_int,
    buffer: *mut c_void,
    count: usize,
    root: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = Ok(Collective::Broadcast { root });
    // SAFETY: forwarded from the caller.
    unsafe {
        start(
            member,
            type_,
            collective,
            std::ptr::null(),
            buffer,
            count,
            out,
        )
    }
}

/// Starts a `phasers_member_reduce`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_ireduce(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    root: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::Reduce { root, op });
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// Starts a `phasers_member_allreduce`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_iallreduce(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::Allreduce { op });
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// Starts a `phasers_member_gather`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_igather(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    root: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = Ok(Collective::Gather { root });
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// Starts a `phasers_member_allgather`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_iallgather(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = Ok(Collective::Allgather);
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// Starts a `phasers_member_scatter`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_iscatter(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    root: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = Ok(Collective::Scatter { root });
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// Starts a `phasers_member_alltoall`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_ialltoall(
    member: *mut MemberHandle,
    type_: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = Ok(Collective::Alltoall);
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// Starts a `phasers_member_scan_inclusive`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_iscan_inclusive(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::ScanInclusive { op });
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// Starts a `phasers_member_scan_exclusive`.
///
/// # Safety
///
/// As [`start`].
#[no_mangle]
pub unsafe extern "C" fn phasers_member_iscan_exclusive(
    member: *mut MemberHandle,
    type_: c_int,
    op: c_int,
    input: *const c_void,
    output: *mut c_void,
    count: usize,
    out: *mut *mut RequestHandle,
) -> c_int {
    let collective = op_from_c(op).map(|op| Collective::ScanExclusive { op });
    // SAFETY: forwarded from the caller.
    unsafe { start(member, type_, collective, input, output, count, out) }
}

/// # Safety
///
/// `request` is null, or a pointer returned by a `phasers_member_i*` function (completed or not)
/// or other readable memory, not being freed concurrently.
unsafe fn resolve<'a>(request: *const RequestHandle) -> Result<&'a RequestObject, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { Handle::resolve(request, Kind::Request, "request") }
}

/// Makes what progress is possible without waiting; stores 1 in `*done` once the call is over
/// (its outputs written), else 0. The request stays valid.
///
/// # Safety
///
/// As [`resolve`]; `done` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn phasers_request_test(
    request: *mut RequestHandle,
    done: *mut c_int,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is resolve's precondition.
        let object = unsafe { resolve(request) }?;
        require_out(done, "done")?;
        let mut guard = object.lock()?;
        let over = in_flight(&mut guard)?.test()?;
        // SAFETY: checked non-null above; the caller promises it is writable.
        unsafe { write_out(done, c_bool(over), "done") }
    })
}

/// Waits for the call to end, then frees the request (whatever the outcome); returns the call's
/// outcome.
///
/// # Safety
///
/// As [`resolve`].
#[no_mangle]
pub unsafe extern "C" fn phasers_request_wait(request: *mut RequestHandle) -> c_int {
    guarded(|| {
        let mut outcome = Ok(());
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe {
            Handle::destroy(request, Kind::Request, "request", |object| {
                let mut guard = object.lock()?;
                // Taken out, so the pending call is over (and dropped) before the lease goes.
                outcome = match guard.take() {
                    Some(flight) => flight.wait().map_err(Failure::from),
                    None => Err(lost()),
                };
                Ok(guard)
            })
        }?;
        outcome
    })
}

/// As [`phasers_request_wait`], giving up after `timeout_ns` nanoseconds with
/// `PHASERS_ETIMEDOUT`, which leaves the request valid and in flight.
///
/// # Safety
///
/// As [`resolve`].
#[no_mangle]
pub unsafe extern "C" fn phasers_request_timedwait(
    request: *mut RequestHandle,
    timeout_ns: u64,
) -> c_int {
    guarded(|| {
        let timeout = Duration::from_nanos(timeout_ns);
        let mut outcome = Ok(());
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe {
            Handle::destroy(request, Kind::Request, "request", |object| {
                let mut guard = object.lock()?;
                match in_flight(&mut guard)?.wait_timeout(timeout) {
                    // Still in flight: refuse the destroy, the request stays valid.
                    Err(error @ Error::Timeout { .. }) => return Err(Failure::from(error)),
                    result => outcome = result.map_err(Failure::from),
                }
                // Over: the pending call has its outcome, so dropping it does not wait.
                drop(guard.take());
                Ok(guard)
            })
        }?;
        outcome
    })
}

/// Frees the request, first finishing its call (its outcome is discarded, as when a Rust
/// `Pending` is dropped).
///
/// # Safety
///
/// As [`resolve`].
#[no_mangle]
pub unsafe extern "C" fn phasers_request_free(request: *mut RequestHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's promise is destroy's precondition.
        unsafe { Handle::destroy(request, Kind::Request, "request", RequestObject::lock) }
    })
}
