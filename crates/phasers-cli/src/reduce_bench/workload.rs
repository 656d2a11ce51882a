//! What is reduced: the collective (`reduce` to the root or `allreduce` to everyone), the arrays,
//! and the check of a result.
//!
//! Participant `rank`'s element `i` is a multiple of 1/8 from 0 to 7.5 (see [`value`]). Any sum of
//! up to 4096 of them is below 2^15 with three fraction bits, which fits an f32's 24-bit mantissa:
//! every order of additions gives the same, exact result. So a dynamic algorithm, whose order
//! depends on who arrived first, must match the sequential sum, and a wrong result cannot hide
//! behind rounding. The check still allows a small relative tolerance, as any check of float sums
//! should, in case a contender adds in another way (pairwise in wider registers, say).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::metrics::Completion;
use phasers_cli::harness::work::Failure;

/// The collective, as `--mode` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Collective {
    /// Only the root (rank 0) receives the sum.
    Reduce,
    /// Every participant receives the sum.
    Allreduce,
}

/// The rank that receives `reduce`'s result in every contender: the library's default root.
pub const ROOT: usize = 0;

impl Collective {
    /// Both, in the order a default run measures them.
    pub const ALL: [Collective; 2] = [Collective::Reduce, Collective::Allreduce];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Reduce => "reduce",
            Collective::Allreduce => "allreduce",
        }
    }

    /// Whether participant `rank` receives the result, and so needs an output array.
    pub fn receives(self, rank: usize) -> bool {
        self == Collective::Allreduce || rank == ROOT
    }

    /// Whose return completes an iteration.
    pub fn completion(self) -> Completion {
        match self {
            Collective::Reduce => Completion::Root(ROOT),
            Collective::Allreduce => Completion::Last,
        }
    }

    /// The bytes an optimal reduction of `threads` arrays of `len` f32 moves: every input read
    /// once, and the result written once (at the root) or once per participant.
    pub fn bytes(self, threads: usize, len: usize) -> u64 {
        let array = len as u64 * std::mem::size_of::<f32>() as u64;
        match self {
            Collective::Reduce => (threads as u64 + 1) * array,
            Collective::Allreduce => 2 * threads as u64 * array,
        }
    }
}

/// A generous estimate of the bytes the largest row of a point needs at once, to skip a point
/// that would not fit in memory: every participant's input, one more array per participant
/// (OpenMP's private copies, or whatever buffers the library keeps), the outputs (one per
/// receiver), the shared sum and the sequential sum it is checked against.
pub fn memory_needed(collective: Collective, threads: usize, len: usize) -> u64 {
    let receivers = (0..threads)
        .filter(|&rank| collective.receives(rank))
        .count() as u64;
    let array = len as u64 * std::mem::size_of::<f32>() as u64;
    (2 * threads as u64 + receivers + 2).saturating_mul(array)
}

/// Element `index` of participant `rank`'s input. The C baseline computes the same expression
/// (`phasers_reduce_value` in `baselines/omp_array_reduce.c`); change both together.
#[inline]
pub fn value(rank: usize, index: usize) -> f32 {
    ((rank as u64 * 131 + index as u64 * 7) % 61) as f32 / 8.0
}

/// Participant `rank`'s input of `len` elements.
pub fn input(rank: usize, len: usize) -> Vec<f32> {
    (0..len).map(|index| value(rank, index)).collect()
}

/// The sum over `threads` participants, added sequentially in rank order.
pub fn expected(threads: usize, len: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; len];
    for rank in 0..threads {
        for (index, element) in sum.iter_mut().enumerate() {
            *element += value(rank, index);
        }
    }
    sum
}

/// One participant's arrays: its input, and the output it receives the sum in, if it does.
pub struct Arrays {
    /// Whose they are.
    pub rank: usize,
    /// Who receives the sum.
    pub collective: Collective,
    len: usize,
    expected: Arc<[f32]>,
    /// Participant `rank`'s input, once prepared.
    pub input: Vec<f32>,
    /// Where the sum goes, once prepared: empty unless `rank` receives it.
    pub output: Vec<f32>,
}

impl Arrays {
    /// Participant `rank`'s arrays of `len` floats, whose sum is `expected`; empty until prepared.
    pub fn new(rank: usize, collective: Collective, len: usize, expected: &Arc<[f32]>) -> Self {
        Arrays {
            rank,
            collective,
            len,
            expected: Arc::clone(expected),
            input: Vec::new(),
            output: Vec::new(),
        }
    }

    /// Whether this participant receives the sum.
    pub fn receives(&self) -> bool {
        self.collective.receives(self.rank)
    }

    /// Allocates and fills them, on the participant's own thread: the memory is first touched, and
    /// placed, where it is used.
    pub fn prepare(&mut self) -> Result<(), Failure> {
        self.input = input(self.rank, self.len);
        if self.receives() {
            self.output = vec![0.0; self.len];
        }
        Ok(())
    }

    /// Checks the output against the sequential sum, where this participant receives it.
    pub fn check(&self) -> Result<(), Failure> {
        match self.receives() {
            true => check(&self.output, &self.expected).map_err(Failure::Cause),
            false => Ok(()),
        }
    }
}

/// The relative error allowed: a few roundings' worth, far below any mistake such as a missing or
/// doubled participant (which changes an element by at least 1/8 in 30,000).
const TOLERANCE: f32 = 1e-5;

/// Checks `got` against the sequential sum `want`, naming the first element that differs.
pub fn check(got: &[f32], want: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "wrong result: {} elements where {} were reduced",
            got.len(),
            want.len()
        ));
    }
    // Never agrees for a NaN.
    let agrees = |(got, want): (&f32, &f32)| (got - want).abs() <= TOLERANCE * want.abs();
    let Some(index) = got.iter().zip(want).position(|pair| !agrees(pair)) else {
        return Ok(());
    };
    let differ = got.iter().zip(want).filter(|&pair| !agrees(pair)).count();
    Err(format!(
        "wrong result: element {index} is {} where the sequential sum is {} ({differ} of {} \
         elements differ)",
        got[index],
        want[index],
        want.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_order_of_addition_gives_the_exact_sum() {
        let (threads, len) = (4096, 3);
        let mut backward = vec![0.0f32; len];
        for rank in (0..threads).rev() {
            for (index, element) in backward.iter_mut().enumerate() {
                *element += value(rank, index);
            }
        }
        let exact: Vec<f32> = (0..len)
            .map(|i| (0..threads).map(|r| f64::from(value(r, i))).sum::<f64>() as f32)
            .collect();
        assert_eq!(expected(threads, len), backward);
        assert_eq!(backward, exact);
    }

    #[test]
    fn the_check_names_the_first_wrong_element() {
        let want = expected(3, 10);
        assert_eq!(check(&want, &want), Ok(()));
        let mut got = want.clone();
        got[4] += 0.125;
        got[7] = f32::NAN;
        let error = check(&got, &want).unwrap_err();
        assert!(
            error.contains("element 4") && error.contains("2 of 10"),
            "{error}"
        );
        assert!(check(&want[..3], &want).unwrap_err().contains("3 elements"));
        let mut close = want.clone();
        close[1] *= 1.0 + 1e-6;
        assert_eq!(check(&close, &want), Ok(()));
    }

    #[test]
    fn bytes_are_reads_plus_writes() {
        assert_eq!(Collective::Reduce.bytes(4, 1000), 4 * 4000 + 4000);
        assert_eq!(Collective::Allreduce.bytes(4, 1000), 8 * 4000);
        assert!(Collective::Reduce.receives(0) && !Collective::Reduce.receives(1));
        // 32 participants, 16 M floats, allreduce: 98 arrays of 64 MB.
        assert_eq!(
            memory_needed(Collective::Allreduce, 32, 16_000_000),
            98 * 64_000_000
        );
        assert_eq!(memory_needed(Collective::Reduce, 2, 1), 7 * 4);
    }
}
