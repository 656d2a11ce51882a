//! The non-blocking MPI collectives the engine starts, through `mpi::ffi`, and their requests.
//!
//! rsmpi's `immediate_*` methods tie a request to the lifetime of its buffers; ours live in the
//! call's slot, shared by the members that poll it, so the engine owns them and calls MPI
//! directly. Every buffer passed here is owned by the [`Flight`](super::flight::Flight) that
//! holds the request, and is neither moved nor freed before the request completes (a flight
//! dropped with a request still active leaks its buffers instead).

use std::os::raw::c_int;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;

use super::reducer::MpiReduction;
use crate::channel::Channel;
use crate::threading::mpi_call;

/// An active MPI request.
pub(crate) struct Request(ffi::MPI_Request);

// SAFETY: an MPI request is a process-wide handle that any thread may test; every use holds
// `mpi_call()`, which serializes MPI calls when the thread level requires it.
unsafe impl Send for Request {}

impl Request {
    /// Whether the operation has completed (the request is then freed by MPI).
    pub(crate) fn test(&mut self) -> bool {
        let mut flag: c_int = 0;
        let _call = mpi_call();
        // SAFETY: `self.0` is an active request made by one of the starts below, and
        // `RSMPI_STATUS_IGNORE` is MPI's "no status" constant.
        unsafe { ffi::MPI_Test(&mut self.0, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
        flag != 0
    }
}

fn byte() -> ffi::MPI_Datatype {
    u8::equivalent_datatype().as_raw()
}

/// Runs one `MPI_I*` start on `channel`'s communicator and returns its request.
fn start(
    channel: &Channel,
    f: impl FnOnce(ffi::MPI_Comm, *mut ffi::MPI_Request) -> c_int,
) -> Request {
    let _call = mpi_call();
    let mut request = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
    f(channel.comm().as_raw(), request.as_mut_ptr());
    // SAFETY: every `MPI_I*` call writes its request before returning (MPI's errors are fatal
    // on our communicators, so there is no return without one).
    Request(unsafe { request.assume_init() })
}

/// Counts, displacements and sizes travel as C ints; callers check that they fit.
fn int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// `MPI_Ibarrier`.
pub(crate) fn ibarrier(channel: &Channel) -> Request {
    // SAFETY: no buffers; the request pointer is valid.
    start(channel, |comm, req| unsafe { ffi::MPI_Ibarrier(comm, req) })
}

/// `MPI_Ibcast` of `len` bytes at `buf`.
///
/// # Safety
///
/// `buf` must stay valid for reads and writes of `len` bytes until the request completes.
pub(crate) unsafe fn ibcast(channel: &Channel, buf: *mut u8, len: usize, root: usize) -> Request {
    // SAFETY: the caller keeps the buffer alive; the other arguments are plain values.
    start(channel, |comm, req| unsafe {
        ffi::MPI_Ibcast(buf.cast(), int(len), byte(), int(root), comm, req)
    })
}

/// `MPI_Ireduce` of `count` elements (`recv` is written at the root only).
///
/// # Safety
///
/// `send` and `recv` must each stay valid for `count` elements of `red.datatype` until the
/// request completes.
pub(crate) unsafe fn ireduce(
    channel: &Channel,
    send: *const u8,
    recv: *mut u8,
    count: usize,
    red: MpiReduction,
    root: usize,
) -> Request {
    // SAFETY: the caller keeps both buffers alive; the handles are predefined.
    start(channel, |comm, req| unsafe {
        ffi::MPI_Ireduce(
            send.cast(),
            recv.cast(),
            int(count),
            red.datatype,
            red.op,
            int(root),
            comm,
            req,
        )
    })
}

/// `MPI_Iallreduce` of `count` elements.
///
/// # Safety
///
/// As [`ireduce`].
pub(crate) unsafe fn iallreduce(
    channel: &Channel,
    send: *const u8,
    recv: *mut u8,
    count: usize,
    red: MpiReduction,
) -> Request {
    // SAFETY: the caller keeps both buffers alive; the handles are predefined.
    start(channel, |comm, req| unsafe {
        ffi::MPI_Iallreduce(
            send.cast(),
            recv.cast(),
            int(count),
            red.datatype,
            red.op,
            comm,
            req,
        )
    })
}

/// `MPI_Iallgather` of `len` bytes from every rank into `recv` (`size * len` bytes).
///
/// # Safety
///
/// `send` (`len` bytes) and `recv` (`size * len` bytes) must stay valid until completion.
pub(crate) unsafe fn iallgather(
    channel: &Channel,
    send: *const u8,
    len: usize,
    recv: *mut u8,
) -> Request {
    // SAFETY: the caller keeps both buffers alive.
    start(channel, |comm, req| unsafe {
        ffi::MPI_Iallgather(
            send.cast(),
            int(len),
            byte(),
            recv.cast(),
            int(len),
            byte(),
            comm,
            req,
        )
    })
}

/// Byte counts and displacements of a `v` collective, one per rank; they must outlive the
/// request, so the flight keeps them.
pub(crate) struct Blocks {
    pub(crate) counts: Vec<c_int>,
    pub(crate) displs: Vec<c_int>,
}

impl Blocks {
    /// `counts[r] = units[r] * unit` bytes, placed one after the other.
    pub(crate) fn new(units: &[usize], unit: usize) -> Blocks {
        let counts: Vec<c_int> = units.iter().map(|u| int(u * unit)).collect();
        let mut displs = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for u in units {
            displs.push(int(at));
            at += u * unit;
        }
        Blocks { counts, displs }
    }

    pub(crate) fn total(&self) -> usize {
        self.counts.iter().map(|&c| c as usize).sum()
    }
}

/// `MPI_Iallgatherv` of bytes.
///
/// # Safety
///
/// `send` (`len` bytes), `recv` (`blocks.total()` bytes) and `blocks` must stay valid until
/// completion.
pub(crate) unsafe fn iallgatherv(
    channel: &Channel,
    send: *const u8,
    len: usize,
    recv: *mut u8,
    blocks: &Blocks,
) -> Request {
    // SAFETY: the caller keeps the buffers and the count arrays alive.
    start(channel, |comm, req| unsafe {
        ffi::MPI_Iallgatherv(
            send.cast(),
            int(len),
            byte(),
            recv.cast(),
            blocks.counts.as_ptr(),
            blocks.displs.as_ptr(),
            byte(),
            comm,
            req,
        )
    })
}

/// `MPI_Igatherv` of bytes to `root`.
///
/// # Safety
///
/// As [`iallgatherv`] (`recv` is used at the root only).
pub(crate) unsafe fn igatherv(
    channel: &Channel,
    send: *const u8,
    len: usize,
    recv: *mut u8,
    blocks: &Blocks,
    root: usize,
) -> Request {
    // SAFETY: the caller keeps the buffers and the count arrays alive.
    start(channel, |comm, req| unsafe {
        ffi::MPI_Igatherv(
            send.cast(),
            int(len),
            byte(),
            recv.cast(),
            blocks.counts.as_ptr(),
            blocks.displs.as_ptr(),
            byte(),
            int(root),
            comm,
            req,
        )
    })
}

/// `MPI_Iscatterv` of bytes from `root`.
///
/// # Safety
///
/// `send` (`blocks.total()` bytes, at the root), `recv` (`len` bytes) and `blocks` must stay
/// valid until completion.
pub(crate) unsafe fn iscatterv(
    channel: &Channel,
    send: *const u8,
    blocks: &Blocks,
    recv: *mut u8,
    len: usize,
    root: usize,
) -> Request {
    // SAFETY: the caller keeps the buffers and the count arrays alive.
    start(channel, |comm, req| unsafe {
        ffi::MPI_Iscatterv(
            send.cast(),
            blocks.counts.as_ptr(),
            blocks.displs.as_ptr(),
            byte(),
            recv.cast(),
            int(len),
            byte(),
            int(root),
            comm,
            req,
        )
    })
}
