//! The MPI library's own barrier, started as `MPI_Ibarrier` and polled, so that it can time out,
//! warn when it stalls, and leave the core when it waits long.

use mpi::request::Request;
use mpi::traits::CommunicatorCollectives;

use crate::channel::Channel;
use crate::threading::mpi_call;

use super::step::ProcessStep;

pub(crate) struct Library {
    request: Option<Request<'static, ()>>,
}

// SAFETY: an MPI request is a process-wide handle any thread may test; every use holds
// `mpi_call()`, which serializes calls when MPI's thread level requires it.
unsafe impl Send for Library {}

impl Library {
    pub(crate) fn new() -> Self {
        Library { request: None }
    }
}

impl ProcessStep for Library {
    fn advance(&mut self, channel: &Channel) -> bool {
        let _call = mpi_call();
        let request = match self.request.take() {
            Some(request) => request,
            None => channel.comm().immediate_barrier(),
        };
        match request.test() {
            Ok(_) => true,
            Err(request) => {
                self.request = Some(request);
                false
            }
        }
    }

    fn waiting_for(&self, _channel: &Channel) -> Vec<usize> {
        // MPI does not say which ranks its barrier waits for.
        Vec::new()
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        if let Some(request) = self.request.take() {
            // Only a wait that timed out leaves a barrier unfinished. It cannot be cancelled, and
            // waiting here could hang; MPI completes it when the other ranks arrive (freeing the
            // communicator is deferred until then), so we only give up our handle.
            std::mem::forget(request);
        }
    }
}
