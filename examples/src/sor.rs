//! Red-black successive over-relaxation, as the Java Grande Forum's SOR benchmark (section 2,
//! `JGFSORBench`) runs it.
//!
//! An N x N grid of random values is relaxed for a fixed number of iterations with omega = 1.25:
//! each interior point becomes `omega/4 * (north + south + west + east) + (1 - omega) * itself`.
//! The points are coloured like a chessboard; an iteration relaxes the red points (`i + j`
//! even), then the black ones. A red point's neighbours are all black and vice versa, so a
//! half-sweep's updates are independent of each other and of their order, which makes the
//! result of any thread count identical, bit for bit, to the sequential run's.
//!
//! The interior rows are split among the threads in contiguous blocks; each thread relaxes the
//! points of the current colour in its rows and then waits at the barrier, so a half-sweep reads
//! only values the previous half-sweep finished: two barriers per iteration, as in the
//! multithreaded JGF code. With 100 x 100 points a half-sweep is a few microseconds of work per
//! thread, so the barrier is a large part of the time; with 1500 x 1500 it is not.
//!
//! The check: the final grid equals the sequential run's, every value bit for bit.

use std::ops::Range;
use std::time::Instant;

use crate::rng::SplitMix64;
use crate::shared::SharedSlice;
use crate::sync::Handles;
use crate::team::{self, block};
use crate::workload::{first_difference, same_bits, Application, Size, Timed};

/// The relaxation factor of JGF SOR.
pub const OMEGA: f64 = 1.25;

/// One SOR problem: the grid's side and the iteration count.
#[derive(Debug, Clone)]
pub struct Sor {
    n: usize,
    iterations: usize,
    initial: Vec<f64>,
}

impl Sor {
    /// The problem of `size`: 100 x 100 (barrier-bound), 500 x 500, 1500 x 1500 (compute-bound).
    pub fn new(size: Size) -> Self {
        match size {
            Size::Small => Sor::with_grid(100, 100),
            Size::Medium => Sor::with_grid(500, 100),
            Size::Large => Sor::with_grid(1500, 30),
        }
    }

    /// An `n` x `n` grid (at least 3, so there is an interior) of seeded random values, relaxed
    /// `iterations` times.
    pub fn with_grid(n: usize, iterations: usize) -> Self {
        let n = n.max(3);
        let mut rng = SplitMix64::new(0x5052_4f52);
        let initial = (0..n * n).map(|_| rng.unit_f64()).collect();
        Sor {
            n,
            iterations,
            initial,
        }
    }
}

/// Relaxes the points of `colour` (0: red, `i + j` even; 1: black) in `rows` of the `n`-wide
/// grid.
///
/// # Safety
///
/// No other thread may write the points of `colour` in `rows`, or any point of the other colour
/// anywhere, while this runs: the caller runs one colour per phase and gives each thread its own
/// rows.
unsafe fn relax(grid: &SharedSlice<f64>, n: usize, rows: Range<usize>, colour: usize) {
    let omega_over_four = OMEGA * 0.25;
    let one_minus_omega = 1.0 - OMEGA;
    for i in rows {
        let first = 1 + (i + 1 + colour) % 2;
        let row = i * n;
        for j in (first..n - 1).step_by(2) {
            let at = row + j;
            // SAFETY: point `at` has `colour` and is in this thread's rows; its four neighbours
            // have the other colour, which nobody writes in this phase (the caller's contract).
            unsafe {
                let sum = grid.get(at - n) + grid.get(at + n) + grid.get(at - 1) + grid.get(at + 1);
                grid.set(at, omega_over_four * sum + one_minus_omega * grid.get(at));
            }
        }
    }
}

impl Application for Sor {
    type Output = Vec<f64>;

    fn describe(&self) -> String {
        format!(
            "{} x {} grid, {} iterations, omega {OMEGA}",
            self.n, self.n, self.iterations
        )
    }

    fn sequential(&self) -> Timed<Vec<f64>> {
        let grid = SharedSlice::new(self.initial.clone());
        let start = Instant::now();
        for _ in 0..self.iterations {
            for colour in 0..2 {
                // SAFETY: one thread: nothing else touches the grid.
                unsafe { relax(&grid, self.n, 1..self.n - 1, colour) };
            }
        }
        let elapsed = start.elapsed();
        Timed {
            output: grid.into_vec(),
            elapsed,
            barriers: 0,
        }
    }

    fn parallel(&self, handles: Handles<'_>) -> Result<Timed<Vec<f64>>, String> {
        let threads = handles.len();
        let grid = SharedSlice::new(self.initial.clone());
        let interior = self.n - 2;
        let run = team::run(handles, |rank, waiter| {
            let mine = block(interior, threads, rank);
            let rows = mine.start + 1..mine.end + 1;
            for _ in 0..self.iterations {
                for colour in 0..2 {
                    // SAFETY: the rows are this thread's alone; the barrier after each colour
                    // ends the phase in which that colour is written.
                    unsafe { relax(&grid, self.n, rows.clone(), colour) };
                    waiter.wait();
                }
            }
        })?;
        Ok(Timed {
            output: grid.into_vec(),
            elapsed: run.elapsed,
            barriers: run.waits,
        })
    }

    fn check(&self, expected: &Vec<f64>, got: &Vec<f64>) -> Result<(), String> {
        first_difference("grid", expected, got, same_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tests::check_every_kind;

    #[test]
    fn every_kind_matches_the_sequential_run() {
        check_every_kind(Sor::with_grid(17, 5), |grid| grid[40] += 1e-12);
    }

    #[test]
    fn relaxation_changes_the_interior_only() {
        let sor = Sor::with_grid(6, 1);
        let out = sor.sequential().output;
        for j in 0..6 {
            assert_eq!(out[j].to_bits(), sor.initial[j].to_bits(), "top row");
            assert_eq!(out[30 + j].to_bits(), sor.initial[30 + j].to_bits());
        }
        assert_ne!(out[7], sor.initial[7]);
        assert!(sor.describe().starts_with("6 x 6 grid, 1 iterations"));
    }

    #[test]
    fn more_threads_than_rows_still_match() {
        let sor = Sor::with_grid(5, 3);
        let expected = sor.sequential().output;
        let kind = crate::sync::SyncKind::Ours(phasers::Algorithm::Auto);
        let got = kind
            .with_handles(7, |handles| sor.parallel(handles))
            .unwrap()
            .unwrap();
        assert_eq!(sor.check(&expected, &got.output), Ok(()));
        assert_eq!(got.barriers, 6);
    }
}
