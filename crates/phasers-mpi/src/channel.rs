//! A private duplicate of a communicator, which our objects own and may use from any thread.

use std::mem::ManuallyDrop;

use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Destination, Source};

use crate::threading::mpi_call;

/// An MPI tag on a [`Channel`].
pub(crate) type Tag = i32;

/// Each object duplicates the communicator it is built on, so its messages never match the
/// user's or another object's, whatever tags either uses.
pub(crate) struct Channel {
    comm: ManuallyDrop<SimpleCommunicator>,
    rank: usize,
    size: usize,
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
        }
    }

    /// Wraps a communicator this object already owns.
    pub(crate) fn from_owned(comm: SimpleCommunicator) -> Channel {
        Channel {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            comm: ManuallyDrop::new(comm),
        }
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

    /// Receives a token from `from` with `tag` if one has arrived.
    pub(crate) fn try_take_token(&self, from: usize, tag: Tag) -> bool {
        let _call = mpi_call();
        let source = self.comm.process_at_rank(from as i32);
        if source.immediate_probe_with_tag(tag).is_none() {
            return false;
        }
        let mut token = 0u8;
        source.receive_into_with_tag(&mut token, tag);
        true
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        if mpi::environment::is_finalized() {
            // MPI is gone, and so is the communicator; freeing it now would be an MPI error.
            return;
        }
        let _call = mpi_call();
        // SAFETY: `comm` is never used again: this is the channel's drop.
        unsafe { ManuallyDrop::drop(&mut self.comm) };
    }
}
