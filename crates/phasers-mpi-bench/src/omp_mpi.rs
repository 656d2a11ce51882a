//! The EPCC mixed-mode baseline, `baselines/omp_mpi_barrier.c`: `#pragma omp barrier`, then
//! `MPI_Barrier` on the master thread, then `#pragma omp barrier`.

use std::ffi::c_int;
use std::time::{Duration, Instant};

use phasers_mpi::mpi::ffi::MPI_Comm;
use phasers_mpi::mpi::raw::AsRaw;
use phasers_mpi::mpi::topology::SimpleCommunicator;

use crate::error::{BenchError, Result};

extern "C" {
    fn phasers_mpi_omp_mpi_barrier(comm: MPI_Comm, threads: c_int, iterations: i64) -> c_int;
}

/// Runs `iterations` mixed-mode barriers with `threads` OpenMP threads on this rank (collective
/// over `comm`, called by one thread of each rank) and returns how long they took.
pub fn run(comm: &SimpleCommunicator, threads: usize, iterations: u64) -> Result<Duration> {
    let threads_c = c_int::try_from(threads)
        .map_err(|_| BenchError::Baseline(format!("{threads} threads is too many")))?;
    let iterations_c = i64::try_from(iterations)
        .map_err(|_| BenchError::Baseline(format!("{iterations} iterations is too many")))?;
    let start = Instant::now();
    // SAFETY: `comm` is a live communicator for the whole call (the handle is Open MPI's pointer,
    // passed by value); the C function only calls MPI_Barrier on it from the calling thread, the
    // OpenMP master, and no other thread of ours is in MPI meanwhile.
    let team = unsafe { phasers_mpi_omp_mpi_barrier(comm.as_raw(), threads_c, iterations_c) };
    let took = start.elapsed();
    match team {
        -1 => Err(BenchError::Baseline(
            "MPI_Barrier returned an error".to_owned(),
        )),
        team if team == threads_c => Ok(took),
        team => Err(BenchError::Baseline(format!(
            "OpenMP gave a team of {team} threads where {threads} were asked for (OMP_THREAD_LIMIT \
             or OMP_DYNAMIC?)"
        ))),
    }
}
