//! The memory-bandwidth floor of a point, measured in the same run: a STREAM-like add,
//! `out[i] = a[i] + b[i]`, on `min(N, cores)` threads over disjoint buffers whose bytes read and
//! written add up to what an optimal reduction of the point moves (see
//! [`Collective::bytes`]). No reduction can move those bytes faster than the machine streams them,
//! so a reduction's bandwidth (the same bytes over its median time from the first arrival to
//! completion) as a fraction of the floor's says how close to the memory system it runs.
//!
//! The add reads two bytes for each one it writes, where a reduction reads N for one (`reduce`)
//! or one for one (`allreduce`); only the total is matched. Stores that miss the cache also read
//! the line first on most machines (write-allocate), for the floor and the reductions alike, and
//! neither count includes it. The floor runs through the same harness as the reductions, with no
//! stall; its time is its slowest worker's, from that worker's own start to its end, so a worker
//! late to leave the barrier does not lower the floor.

use std::hint::black_box;

use super::workload::Collective;
use phasers_cli::harness::work::{Failure, Work};

/// One thread's share of the add.
pub struct StreamAdd {
    elements: usize,
    a: Vec<f32>,
    b: Vec<f32>,
    out: Vec<f32>,
}

/// Bytes the add moves per element: two f32 read, one written.
const BYTES_PER_ELEMENT: u64 = 3 * std::mem::size_of::<f32>() as u64;

/// The threads the floor of `threads` participants runs on: one per core at most, since more
/// threads cannot stream faster and would only take turns.
pub fn workers(threads: usize) -> usize {
    threads.clamp(1, phasers::available_cores().max(1))
}

/// The elements each of `workers` threads adds so that the whole add moves `bytes` (rounded up to
/// whole elements); the first threads take one more where they do not divide evenly.
pub fn shares(bytes: u64, workers: usize) -> Vec<usize> {
    let elements = bytes.div_ceil(BYTES_PER_ELEMENT);
    let workers64 = workers.max(1) as u64;
    (0..workers64)
        .map(|worker| {
            let share = elements / workers64 + u64::from(worker < elements % workers64);
            usize::try_from(share).unwrap_or(usize::MAX)
        })
        .collect()
}

/// The floor's threads for the point of `threads` participants reducing `len` floats.
pub fn participants(threads: usize, len: usize, collective: Collective) -> Vec<StreamAdd> {
    shares(collective.bytes(threads, len), workers(threads))
        .into_iter()
        .map(|elements| StreamAdd {
            elements,
            a: Vec::new(),
            b: Vec::new(),
            out: Vec::new(),
        })
        .collect()
}

impl Work for StreamAdd {
    const SYNCHRONIZED: bool = false;

    fn prepare(&mut self) -> Result<(), Failure> {
        // Distinct values, so nothing can be folded away; all small integers, so every sum is
        // exact and the check below is an equality.
        self.a = (0..self.elements).map(|i| (i % 1024) as f32).collect();
        self.b = (0..self.elements).map(|i| (i % 7) as f32).collect();
        self.out = vec![0.0; self.elements];
        Ok(())
    }

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        for ((out, a), b) in self.out.iter_mut().zip(&self.a).zip(&self.b) {
            *out = a + b;
        }
        // The sums are only read by the check, once: without this the compiler could skip the
        // adds of every later iteration.
        black_box(&mut self.out);
        Ok(None)
    }

    fn check(&mut self) -> Result<(), Failure> {
        let wrong = self
            .out
            .iter()
            .zip(self.a.iter().zip(&self.b))
            .position(|(out, (a, b))| *out != a + b);
        match wrong {
            None => Ok(()),
            Some(index) => Err(Failure::Cause(format!(
                "the bandwidth floor's add is wrong at element {index}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_move_the_reductions_bytes_on_at_most_a_thread_per_core() {
        let bytes = Collective::Allreduce.bytes(4, 1000);
        let shares = shares(bytes, 3);
        let total: usize = shares.iter().sum();
        assert_eq!(total as u64 * BYTES_PER_ELEMENT, bytes.next_multiple_of(12));
        assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1);
        assert_eq!(super::shares(Collective::Reduce.bytes(2, 1), 2), vec![1, 0]);
        let cores = phasers::available_cores();
        assert_eq!(participants(cores * 4, 10, Collective::Reduce).len(), cores);
    }
}
