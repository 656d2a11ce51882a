//! The floors every other row is read against, measured in the same run:
//!
//! - the MPI round trip: one byte from rank 0 to rank 1 and back (no barrier of two ranks can
//!   beat one message each way);
//! - the cache-line round trip between two threads of rank 0, pinned to two CPUs where the
//!   machine allows it (no shared-memory barrier among two threads can beat it).
//!
//! The other ranks idle meanwhile.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::{Communicator, Destination, Source};
use serde::Serialize;

use crate::crew::{with_crew, Task};
use crate::error::{BenchError, Result};
use crate::harness::{measure, Schedule};
use crate::stats::Timing;
use crate::subset::on_first;

/// Spins between yields while waiting for the line: unpinned, the other thread may need this CPU.
const SPINS_PER_YIELD: u32 = 1024;

/// Both floors; `None` where the world or the machine cannot have one.
#[derive(Debug, Clone, Serialize)]
pub struct Floors {
    /// One-byte MPI ping-pong between world ranks 0 and 1.
    pub mpi_round_trip: Option<Timing>,
    /// Cache-line round trip between two threads of rank 0.
    pub cache_line_round_trip: Option<Timing>,
    /// The CPUs the cache-line threads were pinned to.
    pub cache_line_cpus: Option<[usize; 2]>,
}

/// Measures both floors; collective over the world; the values are rank 0's.
pub fn measure_floors(world: &SimpleCommunicator, schedule: Schedule) -> Result<Floors> {
    let mpi_round_trip = if world.size() >= 2 {
        on_first(world, 2, |comm| ping_pong(comm, schedule))?
    } else {
        None
    };
    let cpus = two_cpus();
    let cache_line_round_trip = on_first(world, 1, |comm| cache_line(comm, schedule, cpus))?;
    Ok(Floors {
        mpi_round_trip,
        cache_line_round_trip,
        cache_line_cpus: cpus,
    })
}

/// Rank 0 sends a counter byte, rank 1 sends it back incremented; rank 0 checks every answer.
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

/// Two CPUs to pin the cache-line threads to, when this process may use two.
fn two_cpus() -> Option<[usize; 2]> {
    let ids = core_affinity::get_core_ids()?;
    match ids.as_slice() {
        [first, second, ..] => Some([first.id, second.id]),
        _ => None,
    }
}

/// The ping thread stores odd values, the echo thread answers each with the next even one.
fn cache_line(
    comm: &SimpleCommunicator,
    schedule: Schedule,
    cpus: Option<[usize; 2]>,
) -> Result<Timing> {
    let line = CachePadded::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..2)
        .map(|side| {
            let line = &line;
            let mut pinned = false;
            // The next odd value the ping side sends.
            let mut next = 1u64;
            move |task| {
                if !pinned {
                    if let Some(cpus) = cpus {
                        core_affinity::set_for_current(core_affinity::CoreId { id: cpus[side] });
                    }
                    pinned = true;
                }
                let Task::Run(n) = task else {
                    return Ok(());
                };
                for _ in 0..n {
                    if side == 0 {
                        line.store(next, Ordering::Release);
                        wait_for(line, next + 1);
                    } else {
                        wait_for(line, next);
                        line.store(next + 1, Ordering::Release);
                    }
                    next += 2;
                }
                Ok(())
            }
        })
        .collect();
    with_crew(workers, |dispatch| {
        measure(comm, schedule, |n| dispatch.run(Task::Run(n)))
    })
}

#[inline]
fn wait_for(line: &AtomicU64, value: u64) {
    let mut spins = 0u32;
    while line.load(Ordering::Acquire) != value {
        spin_loop();
        spins = spins.wrapping_add(1);
        if spins % SPINS_PER_YIELD == 0 {
            std::thread::yield_now();
        }
    }
}
