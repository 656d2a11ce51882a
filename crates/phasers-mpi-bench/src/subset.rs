//! Rows that use the first `p` ranks of the world. The other ranks wait for them at a polled
//! `MPI_Ibarrier` with naps, so they leave the cores to the active ranks instead of spinning in a
//! blocking MPI call (Open MPI's blocking waits spin).

use std::time::Duration;

use phasers_mpi::mpi::topology::{Color, SimpleCommunicator};
use phasers_mpi::mpi::traits::{Communicator, CommunicatorCollectives};

use crate::error::Result;

/// How long an idle rank sleeps between polls: short next to a row, long next to a time slice.
const IDLE_NAP: Duration = Duration::from_micros(500);

/// Runs `row` on the sub-communicator of world ranks `0..p` while the others idle; collective
/// over the world. Returns `row`'s value on the ranks that ran it, `None` on the others.
pub fn on_first<T>(
    world: &SimpleCommunicator,
    p: usize,
    row: impl FnOnce(&SimpleCommunicator) -> Result<T>,
) -> Result<Option<T>> {
    let value = match first(world, p) {
        Some(comm) => Some(row(&comm)?),
        None => None,
    };
    idle_until_all_arrive(world);
    Ok(value)
}

/// The communicator of `comm`'s ranks `0..p`, on those ranks; `None` on the others. Collective
/// over `comm`.
pub fn first(comm: &SimpleCommunicator, p: usize) -> Option<SimpleCommunicator> {
    let color = if (comm.rank() as usize) < p {
        Color::with_value(0)
    } else {
        Color::undefined()
    };
    comm.split_by_color(color)
}

/// Waits for every rank of `comm` with naps between polls.
pub fn idle_until_all_arrive(comm: &SimpleCommunicator) {
    let mut request = comm.immediate_barrier();
    loop {
        match request.test() {
            Ok(_) => return,
            Err(pending) => {
                request = pending;
                std::thread::sleep(IDLE_NAP);
            }
        }
    }
}
