//! A private duplicate of a communicator, which our objects own and may use from any thread.

use std::mem::ManuallyDrop;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Destination};

use crate::threading::mpi_call;

/// An MPI tag on a [`Channel`].
pub(crate) type Tag = i32;

/// Each object duplicates the communicator it is built on, so its messages never match the
/// user's or another object's, whatever tags either uses.
pub(crate) struct Channel {
    comm: ManuallyDrop<SimpleCommunicator>,
    rank: usize,
    size: usize,
    /// Set when an episode was left unfinished: see [`Channel::keep_communicator`].
    keep: AtomicBool,
}

// SAFETY: an MPI communicator is a process-wide handle that any thread may use, provided calls are
// serialized when MPI's thread level is below `Multiple`; every call through a `Channel` holds
// `mpi_call()`, which does exactly that.
unsafe impl Send for Channel {}
// SAFETY: as for `Send`: shared use is serialized by `mpi_call()` where MPI requires it.
unsafe impl Sync for Channel {}

impl Channel {
    /// Duplicates `comm` (collective over `comm`).
    pub(crate) fn duplicate(comm: &impl Communicator) -> Channel {
        let _call = mpi_call();
        let comm = comm.duplicate();
        Channel {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            comm: ManuallyDrop::new(comm),
            keep: AtomicBool::new(false),
        }
    }

    /// Wraps a communicator this object already owns.
    pub(crate) fn from_owned(comm: SimpleCommunicator) -> Channel {
        Channel {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            comm: ManuallyDrop::new(comm),
            keep: AtomicBool::new(false),
        }
    }

    /// Never frees the communicator, because an episode was left unfinished (a wait timed out):
    /// tokens of that episode may still be on their way. Freed, the communicator's context id
    /// could go to a communicator built later, on which those stale tokens would match receives
    /// of a new barrier; the suite saw a later barrier's build hang that way. Kept, the id stays
    /// taken on this rank, so no later communicator with this rank in it gets it. The cost is
    /// one communicator handle per barrier dropped mid-episode.
    pub(crate) fn keep_communicator(&self) {
        self.keep.store(true, Ordering::Relaxed);
    }

    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The communicator, for collectives. Callers hold `mpi_call()` while they use it.
    pub(crate) fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// Sends a one-byte token. One byte always goes eagerly, so this returns without waiting for
    /// the receiver.
    pub(crate) fn send_token(&self, to: usize, tag: Tag) {
        let _call = mpi_call();
        self.comm
            .process_at_rank(to as i32)
            .send_with_tag(&0u8, tag);
    }

    /// Posts a receive for the tokens `from` sends with `tag` (`MPI_Recv_init` then `MPI_Start`),
    /// so that taking one costs a single `MPI_Test` (see [`PostedToken`]).
    ///
    /// Drop the returned receive before the channel: it refers to the channel's communicator.
    pub(crate) fn post_token(&self, from: usize, tag: Tag) -> PostedToken {
        let buffer = Box::into_raw(Box::new(0u8));
        let mut request = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        let _call = mpi_call();
        // SAFETY: the buffer is a heap byte owned by the returned `PostedToken`, which frees the
        // request (cancel, wait, free) before the buffer; the rank and tag are valid on
        // this communicator (callers pass ranks below `size`), and MPI writes the request before
        // it returns (errors are fatal on our communicators).
        let mut request = unsafe {
            ffi::MPI_Recv_init(
                buffer.cast(),
                1,
                u8::equivalent_datatype().as_raw(),
                from as c_int,
                tag,
                self.comm.as_raw(),
                request.as_mut_ptr(),
            );
            request.assume_init()
        };
        // SAFETY: a persistent request just made by `MPI_Recv_init`, inactive until now.
        unsafe { ffi::MPI_Start(&mut request) };
        PostedToken {
            request,
            buffer,
            from,
        }
    }

    /// Takes a token from `posted` if one has arrived, and posts the receive again at once for
    /// the next token.
    pub(crate) fn try_take_posted(&self, posted: &mut PostedToken) -> bool {
        let mut flag: c_int = 0;
        let _call = mpi_call();
        // SAFETY: `posted.request` is an active persistent request (made by `post_token`, started
        // there or below after each completion); a completed persistent request stays allocated
        // and may be started again.
        unsafe {
            ffi::MPI_Test(&mut posted.request, &mut flag, ffi::RSMPI_STATUS_IGNORE);
            if flag != 0 {
                ffi::MPI_Start(&mut posted.request);
            }
        }
        flag != 0
    }
}

/// A receive of one-byte tokens from one rank with one tag, posted ahead with `MPI_Recv_init` and
/// kept active: each token is taken with one `MPI_Test`, and the receive is started again at
/// once, so the next token lands in it directly instead of in MPI's unexpected-message queue.
///
/// Dropping it cancels the pending receive and frees the request (the standard's way to end an
/// active persistent request); it must be dropped before its channel frees the communicator.
pub(crate) struct PostedToken {
    request: ffi::MPI_Request,
    /// Where MPI writes the token's byte: a leaked `Box`, so it stays put when `PostedToken`
    /// moves, reclaimed in `drop` once MPI no longer refers to it.
    buffer: *mut u8,
    from: usize,
}

// SAFETY: an MPI request is a process-wide handle that any thread may test; every use holds
// `mpi_call()`, and the buffer is written only by MPI inside those calls.
unsafe impl Send for PostedToken {}

impl PostedToken {
    /// The rank whose tokens this receives.
    pub(crate) fn from(&self) -> usize {
        self.from
    }
}

impl Drop for PostedToken {
    fn drop(&mut self) {
        // Once MPI is finalized it has let go of every request, and calling it is an error.
        if !mpi::environment::is_finalized() {
            let _call = mpi_call();
            // SAFETY: the request is active (every completion restarts it). A cancelled receive
            // completes at once (or completes normally if a token had matched it), so the wait
            // does not block; the inactive request is then freed.
            unsafe {
                ffi::MPI_Cancel(&mut self.request);
                ffi::MPI_Wait(&mut self.request, ffi::RSMPI_STATUS_IGNORE);
                ffi::MPI_Request_free(&mut self.request);
            }
        }
        // SAFETY: `buffer` came from `Box::into_raw` in `post_token`, and no request writes to it
        // any more.
        drop(unsafe { Box::from_raw(self.buffer) });
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        if mpi::environment::is_finalized() {
            // MPI is gone, and so is the communicator; freeing it now would be an MPI error.
            return;
        }
        if self.keep.load(Ordering::Relaxed) {
            return;
        }
        let _call = mpi_call();
        // SAFETY: `comm` is never used again: this is the channel's drop.
        unsafe { ManuallyDrop::drop(&mut self.comm) };
    }
}
