//! LU factorization with partial pivoting, as the Java Grande Forum's LUFact benchmark (section
//! 2, `JGFLUFactBench`, after LINPACK's `dgefa`) runs it.
//!
//! The N x N matrix is stored by columns. For each pivot step k, one thread (rank 0) finds the
//! largest entry of column k at or below the diagonal, swaps it onto the diagonal and scales the
//! column below it by `-1 / pivot`; a barrier; then every thread updates its own columns
//! `j > k` (columns are dealt out cyclically, so the shrinking trailing matrix stays balanced):
//! it applies the row swap and adds `a[k][j]` times column k; a barrier. Two barriers per pivot
//! step, `2 (N - 1)` in all; with N = 200 the last steps update a handful of short columns, so
//! the barriers weigh, with N = 800 the arithmetic does.
//!
//! Each column's update is the same arithmetic in the same order whichever thread does it, so
//! the factors are identical, bit for bit, to the sequential run's.
//!
//! The check: the factors and the pivot rows equal the sequential run's exactly; and, as LINPACK
//! does, the solution of `A x = b` (with `b` the row sums of `A`, so `x` should be all ones)
//! computed from the parallel factors has a normalized residual
//! `|A x - b| / (N |A| |x| eps)` (infinity norms) below 100.
//! Only the factorization is timed; the solve and the residual are part of the check.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::rng::SplitMix64;
use crate::shared::SharedSlice;
use crate::sync::Handles;
use crate::team;
use crate::workload::{first_difference, same_bits, Application, Size, Timed};

/// What a factorization produces: LINPACK's `a` (L below the diagonal, negated, and U on and
/// above it, by columns) and `ipvt`.
#[derive(Debug, Clone, PartialEq)]
pub struct Factors {
    /// The factors, column by column.
    pub lu: Vec<f64>,
    /// The pivot row of each step.
    pub pivots: Vec<usize>,
    /// The first step whose pivot was zero (the matrix is singular), if any.
    pub singular_at: Option<usize>,
}

/// One LUFact problem: a seeded random N x N matrix.
#[derive(Debug, Clone)]
pub struct Lu {
    n: usize,
    matrix: Vec<f64>,
}

/// Marks a zero pivot in the shared pivot word.
const ZERO_PIVOT: usize = usize::MAX;

/// The largest normalized residual a correct factorization may leave.
pub const RESIDUAL_LIMIT: f64 = 100.0;

impl Lu {
    /// The problem of `size`: N = 200, 500 or 800 (JGF's sizes A and B are 500 and 1000; 800
    /// keeps the default `phasers app` run within minutes on two cores).
    pub fn new(size: Size) -> Self {
        match size {
            Size::Small => Lu::with_order(200),
            Size::Medium => Lu::with_order(500),
            Size::Large => Lu::with_order(800),
        }
    }

    /// A seeded random matrix of order `n` (at least 1), entries in [-0.5, 0.5).
    pub fn with_order(n: usize) -> Self {
        let n = n.max(1);
        let mut rng = SplitMix64::new(0x4c55_4641_4354);
        let matrix = (0..n * n).map(|_| rng.unit_f64() - 0.5).collect();
        Lu { n, matrix }
    }

    /// The normalized residual of solving `A x = b`, `b` the row sums of `A`, with `factors`.
    pub fn residual(&self, factors: &Factors) -> f64 {
        let n = self.n;
        let at = |i: usize, j: usize| self.matrix[j * n + i];
        let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| at(i, j)).sum()).collect();
        let x = solve(n, factors, &b);
        let norm_a = (0..n)
            .map(|i| (0..n).map(|j| at(i, j).abs()).sum::<f64>())
            .fold(0.0, f64::max);
        let norm_x = x.iter().fold(0.0f64, |max, value| max.max(value.abs()));
        let norm_r = (0..n)
            .map(|i| ((0..n).map(|j| at(i, j) * x[j]).sum::<f64>() - b[i]).abs())
            .fold(0.0, f64::max);
        norm_r / (n as f64 * norm_a * norm_x * f64::EPSILON)
    }
}

/// Solves `A x = b` from LINPACK-style factors (`dgesl` without transposition).
fn solve(n: usize, factors: &Factors, b: &[f64]) -> Vec<f64> {
    let a = &factors.lu;
    let mut x = b.to_vec();
    for k in 0..n.saturating_sub(1) {
        let l = factors.pivots[k];
        let t = x[l];
        x.swap(l, k);
        x[k] = t;
        for i in k + 1..n {
            x[i] += t * a[k * n + i];
        }
    }
    for k in (0..n).rev() {
        x[k] /= a[k * n + k];
        let t = -x[k];
        for i in 0..k {
            x[i] += t * a[k * n + i];
        }
    }
    x
}

/// Pivot step `k`: finds the pivot row of column k, swaps it onto the diagonal and scales the
/// column below it. Returns the pivot row, or `ZERO_PIVOT`.
///
/// # Safety
///
/// No other thread may touch column `k` while this runs.
unsafe fn pivot(a: &SharedSlice<f64>, n: usize, k: usize) -> usize {
    // SAFETY: column k is this thread's alone (the caller's contract).
    let column = unsafe { a.slice_mut(k * n..k * n + n) };
    let mut l = k;
    for i in k + 1..n {
        if column[i].abs() > column[l].abs() {
            l = i;
        }
    }
    if column[l] == 0.0 {
        return ZERO_PIVOT;
    }
    column.swap(l, k);
    let t = -1.0 / column[k];
    for value in &mut column[k + 1..] {
        *value *= t;
    }
    l
}

/// Updates column `j` after pivot step `k` with pivot row `l`: the row swap, then the daxpy.
///
/// # Safety
///
/// No other thread may touch column `j`, or write column `k`, while this runs; `j != k`.
unsafe fn eliminate(a: &SharedSlice<f64>, n: usize, k: usize, l: usize, j: usize) {
    // SAFETY: column k is only read in this phase; column j is this thread's alone, and differs
    // from column k (the caller's contract).
    let (pivot_column, column) = unsafe {
        (
            a.slice(k * n + k + 1..k * n + n),
            a.slice_mut(j * n..j * n + n),
        )
    };
    let t = column[l];
    if l != k {
        column[l] = column[k];
        column[k] = t;
    }
    for (value, multiplier) in column[k + 1..].iter_mut().zip(pivot_column) {
        *value += t * multiplier;
    }
}

impl Application for Lu {
    type Output = Factors;

    fn describe(&self) -> String {
        format!("order {} ({} pivot steps)", self.n, self.n - 1)
    }

    fn sequential(&self) -> Timed<Factors> {
        let n = self.n;
        let a = SharedSlice::new(self.matrix.clone());
        let mut pivots = Vec::with_capacity(n);
        let mut singular_at = None;
        let start = Instant::now();
        for k in 0..n - 1 {
            // SAFETY: one thread: nothing else touches the matrix.
            let l = unsafe { pivot(&a, n, k) };
            if l == ZERO_PIVOT {
                singular_at.get_or_insert(k);
                pivots.push(k);
                continue;
            }
            pivots.push(l);
            for j in k + 1..n {
                // SAFETY: as above; j > k.
                unsafe { eliminate(&a, n, k, l, j) };
            }
        }
        pivots.push(n - 1);
        let elapsed = start.elapsed();
        Timed {
            output: Factors {
                lu: a.into_vec(),
                pivots,
                singular_at,
            },
            elapsed,
            barriers: 0,
        }
    }

    fn parallel(&self, handles: Handles<'_>) -> Result<Timed<Factors>, String> {
        let n = self.n;
        let threads = handles.len();
        let a = SharedSlice::new(self.matrix.clone());
        // Rank 0 writes each step's pivot row before the first barrier of the step; the others
        // read it after. The barrier orders the accesses, so relaxed is enough.
        let step_pivot = AtomicUsize::new(0);
        let run = team::run(handles, |rank, waiter| {
            let mut pivots = Vec::new();
            let mut singular_at = None;
            for k in 0..n - 1 {
                if rank == 0 {
                    // SAFETY: in this phase only rank 0 touches the matrix.
                    let l = unsafe { pivot(&a, n, k) };
                    step_pivot.store(l, Ordering::Relaxed);
                }
                waiter.wait();
                let l = step_pivot.load(Ordering::Relaxed);
                if l == ZERO_PIVOT {
                    singular_at.get_or_insert(k);
                    pivots.push(k);
                } else {
                    pivots.push(l);
                    // Column j belongs to rank j % threads; the first column after k that is
                    // this rank's:
                    let first = k + 1 + (rank + threads - (k + 1) % threads) % threads;
                    for j in (first..n).step_by(threads) {
                        // SAFETY: column j is this rank's alone, column k is only read until the
                        // next barrier, and j > k.
                        unsafe { eliminate(&a, n, k, l, j) };
                    }
                }
                waiter.wait();
            }
            pivots.push(n - 1);
            (pivots, singular_at)
        })?;
        let (pivots, singular_at) = run
            .results
            .into_iter()
            .next()
            .ok_or_else(|| "a run needs at least 1 thread".to_owned())?;
        Ok(Timed {
            output: Factors {
                lu: a.into_vec(),
                pivots,
                singular_at,
            },
            elapsed: run.elapsed,
            barriers: run.waits,
        })
    }

    fn check(&self, expected: &Factors, got: &Factors) -> Result<(), String> {
        first_difference("pivots", &expected.pivots, &got.pivots, PartialEq::eq)?;
        first_difference("factors", &expected.lu, &got.lu, same_bits)?;
        if got.singular_at != expected.singular_at {
            return Err(format!(
                "singular at step {:?}, the sequential run at {:?}",
                got.singular_at, expected.singular_at
            ));
        }
        if got.singular_at.is_none() {
            let residual = self.residual(got);
            if residual.is_nan() || residual >= RESIDUAL_LIMIT {
                return Err(format!(
                    "the normalized residual of A x = b is {residual:.3e}, above {RESIDUAL_LIMIT}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tests::check_every_kind;

    #[test]
    fn every_kind_matches_the_sequential_run() {
        check_every_kind(Lu::with_order(23), |factors| factors.lu[100] *= 1.0 + 1e-15);
    }

    #[test]
    fn the_solution_is_all_ones_and_the_residual_small() {
        let lu = Lu::with_order(40);
        let factors = lu.sequential().output;
        assert_eq!(factors.singular_at, None);
        let residual = lu.residual(&factors);
        assert!(residual < 10.0, "{residual}");
        let b: Vec<f64> = (0..40)
            .map(|i| (0..40).map(|j| lu.matrix[j * 40 + i]).sum())
            .collect();
        for value in solve(40, &factors, &b) {
            assert!((value - 1.0).abs() < 1e-9, "{value}");
        }
    }

    #[test]
    fn a_swapped_pivot_and_a_bad_residual_are_caught() {
        let lu = Lu::with_order(12);
        let good = lu.sequential().output;
        let mut swapped = good.clone();
        swapped.pivots[0] = (swapped.pivots[0] + 1) % 12;
        assert!(lu
            .check(&good, &swapped)
            .unwrap_err()
            .starts_with("pivots[0]"));
        // Factors that agree with a wrong reference still fail on the residual.
        let mut wrong = good.clone();
        wrong.lu[0] *= 2.0;
        let error = lu.check(&wrong, &wrong).unwrap_err();
        assert!(error.contains("residual"), "{error}");
    }

    #[test]
    fn a_singular_matrix_is_reported_alike() {
        let mut lu = Lu::with_order(6);
        for i in 0..6 {
            lu.matrix[2 * 6 + i] = 0.0;
        }
        let expected = lu.sequential().output;
        assert_eq!(expected.singular_at, Some(2));
        let kind = crate::sync::SyncKind::Std;
        let got = kind
            .with_handles(3, |handles| lu.parallel(handles))
            .unwrap()
            .unwrap();
        assert_eq!(lu.check(&expected, &got.output), Ok(()));
    }
}
