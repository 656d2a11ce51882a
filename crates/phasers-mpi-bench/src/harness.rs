//! One row's measurement, collective over the row's communicator: calibrate the operations per
//! sample on rank 0 and broadcast the decision, so every rank runs the same number of operations,
//! then time the samples. Rank 0's clock gives the numbers.

use std::time::{Duration, Instant};

use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::{Communicator, CommunicatorCollectives, Root};

use crate::error::{BenchError, Result};
use crate::stats::Timing;

/// Most operations in one sample: far more than a sample needs even at the floor.
const MAX_ITERATIONS: u64 = 1 << 32;
/// Chunks per sample (see [`measure`]).
const CHUNKS: u64 = 16;
/// A sample is cut once it has run this many times its target length.
const CUT_AFTER: u32 = 4;

/// How long samples are and how many.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Target length of one sample.
    pub sample: Duration,
    /// Timed samples per row.
    pub samples: usize,
}

/// Times `batch(n)` (run `n` operations, return how long they took on this rank). Every rank of
/// `comm` calls this with the same schedule; the returned timing is meaningful on rank 0.
pub fn measure(
    comm: &SimpleCommunicator,
    schedule: Schedule,
    batch: impl FnMut(u64) -> Result<Duration>,
) -> Result<Timing> {
    measure_round(comm, schedule, None, batch)
}

/// [`measure`], for one round of a contender measured in rounds: `iterations` is the count its
/// first round calibrated (`None` in the first round, which calibrates). A later round runs that
/// count, so every round's samples are alike, and warms up with one chunk instead of a
/// calibration: the contender is warm, but its buffers may have left the cache meanwhile. Every
/// rank passes the same `iterations` (the count is broadcast while calibrating).
pub fn measure_round(
    comm: &SimpleCommunicator,
    schedule: Schedule,
    iterations: Option<u64>,
    mut batch: impl FnMut(u64) -> Result<Duration>,
) -> Result<Timing> {
    let iterations = match iterations {
        Some(iterations) => {
            comm.barrier();
            batch(chunk(iterations))?;
            iterations
        }
        None => calibrate(comm, schedule, &mut batch)?,
    };
    let root = comm.process_at_rank(0);
    let mut samples_ns = Vec::with_capacity(schedule.samples);
    let chunk = chunk(iterations);
    for _ in 0..schedule.samples {
        comm.barrier();
        // In chunks, so that a sample that runs far past its target (a contender that fell into
        // a slow regime after calibration) can be cut short by all ranks together; the
        // broadcast between chunks costs about one barrier per 1/CHUNKS of the sample.
        let start = Instant::now();
        let mut ran = 0;
        while ran < iterations {
            let this = chunk.min(iterations - ran);
            batch(this)?;
            ran += this;
            let mut stop = [0u64];
            if comm.rank() == 0 && start.elapsed() > schedule.sample * CUT_AFTER {
                stop[0] = 1;
            }
            root.broadcast_into(&mut stop[..]);
            if stop[0] == 1 {
                break;
            }
        }
        samples_ns.push(start.elapsed().as_nanos() as f64 / ran as f64);
    }
    Timing::new(iterations, samples_ns)
        .ok_or_else(|| BenchError::check("the harness", "a row produced no samples"))
}

/// The operations of one chunk of a sample of `iterations`.
fn chunk(iterations: u64) -> u64 {
    (iterations / CHUNKS).max(1)
}

/// Finds the operations per sample: rank 0 decides from its batches and broadcasts. Doubles as
/// warm-up.
fn calibrate(
    comm: &SimpleCommunicator,
    schedule: Schedule,
    batch: &mut impl FnMut(u64) -> Result<Duration>,
) -> Result<u64> {
    let root = comm.process_at_rank(0);
    let mut iterations = 1u64;
    loop {
        comm.barrier();
        let took = batch(iterations)?;
        let mut decision = [iterations, 0];
        if comm.rank() == 0 {
            decision = next_count(iterations, took, schedule.sample);
        }
        root.broadcast_into(&mut decision[..]);
        iterations = decision[0];
        if decision[1] == 1 {
            return Ok(iterations);
        }
    }
}

/// `[operations for the next batch, 1 when calibration is done]`.
fn next_count(iterations: u64, took: Duration, target: Duration) -> [u64; 2] {
    if took.as_secs_f64() >= 0.8 * target.as_secs_f64() || iterations >= MAX_ITERATIONS {
        return [iterations, 1];
    }
    // Aim at the target from the last batch, growing at least 2x and at most 16x per step, so
    // a first batch slowed by page faults or a cold cache cannot oversize the samples.
    let factor = (target.as_secs_f64() / took.as_secs_f64().max(1e-9)).clamp(2.0, 16.0);
    let next = ((iterations as f64 * factor) as u64).clamp(iterations + 1, MAX_ITERATIONS);
    [next, 0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_grows_then_stops() {
        let target = Duration::from_millis(100);
        assert_eq!(next_count(1, Duration::from_micros(1), target), [16, 0]);
        assert_eq!(next_count(100, Duration::from_millis(40), target), [250, 0]);
        assert_eq!(next_count(100, Duration::from_millis(90), target), [100, 1]);
        assert_eq!(next_count(1, Duration::from_secs(3), target), [1, 1]);
        assert_eq!(
            next_count(MAX_ITERATIONS, Duration::ZERO, target),
            [MAX_ITERATIONS, 1]
        );
    }
}
