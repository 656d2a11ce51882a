//! The floors every other row is read against, measured in the same run:
//!
//! - the MPI round trip: one byte from rank 0 to rank 1 and back (no barrier of two ranks can
//!   beat one message each way);
//! - the cache-line round trip between two threads of rank 0, pinned to two CPUs where the
//!   machine allows it (no shared-memory barrier among two threads can beat it): the `phasers`
//!   command's own floor (`phasers_cli::harness::floor`), so both commands state the same floor.
//!
//! The other ranks idle meanwhile.

use std::time::Instant;

use phasers_cli::harness::floor as cache_line_floor;
use phasers_cli::harness::schedule::Schedule as ThreadSchedule;
use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::{Communicator, Destination, Source};
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::harness::{measure, Schedule};
use crate::stats::Timing;
use crate::subset::on_first;

/// Both floors; `None` where the world or the machine cannot have one.
#[derive(Debug, Clone, Serialize)]
pub struct Floors {
    /// One byte from world rank 0 to rank 1 and back.
    pub mpi_round_trip: Option<Timing>,
    /// A cache line between two threads of rank 0.
    pub cache_line_round_trip: Option<Timing>,
    /// The CPUs those threads were pinned to, when pinning worked.
    pub cache_line_cpus: Option<[usize; 2]>,
}

/// Measures both floors; every rank of `world` takes part.
pub fn measure_floors(world: &SimpleCommunicator, schedule: Schedule) -> Result<Floors> {
    let mpi_round_trip = if world.size() >= 2 {
        on_first(world, 2, |comm| ping_pong(comm, schedule))?
    } else {
        None
    };
    let cache_line = on_first(world, 1, |_| Ok(cache_line(schedule)))?;
    Ok(Floors {
        mpi_round_trip,
        cache_line_round_trip: cache_line.as_ref().and_then(|(timing, _)| timing.clone()),
        cache_line_cpus: cache_line.and_then(|(_, cpus)| cpus),
    })
}

fn ping_pong(comm: &SimpleCommunicator, schedule: Schedule) -> Result<Timing> {
    let me = comm.rank();
    let other = comm.process_at_rank(1 - me);
    let mut byte = 0u8;
    measure(comm, schedule, |n| {
        let start = Instant::now();
        for _ in 0..n {
            if me == 0 {
                let sent = byte;
                other.send(&sent);
                other.receive_into(&mut byte);
                if byte != sent.wrapping_add(1) {
                    return Err(BenchError::check(
                        "MPI ping-pong",
                        format!("sent {sent}, got {byte} back"),
                    ));
                }
            } else {
                other.receive_into(&mut byte);
                byte = byte.wrapping_add(1);
                other.send(&byte);
            }
        }
        Ok(start.elapsed())
    })
}

/// The harness's cache-line floor on this rank, with the same sample length and count as every
/// other row, and the CPUs it ran on.
fn cache_line(schedule: Schedule) -> (Option<Timing>, Option<[usize; 2]>) {
    let floor = cache_line_floor::measure(ThreadSchedule {
        episodes: None,
        samples: schedule.samples,
        target_sample: schedule.sample,
        // Calibration and a slow machine may overrun the aim; past this the floor keeps the
        // samples it has and says so in its note.
        row_budget: schedule.sample * (3 * schedule.samples as u32)
            + std::time::Duration::from_secs(1),
    });
    let timing = Timing::new(floor.round_trips_per_sample, floor.samples_ns);
    (timing, floor.pinned_to)
}
