//! An allreduce of one u64 that every member receives, as a timed operation: the MPP suite's
//! `mpp_accum_long` (seed 004's figure 1), a sum of one value per member returned to all.
//!
//! Each member contributes `rank + 1 + iteration`, so every iteration has a different sum and a
//! stale result from the iteration before is caught; every member checks the sum it received, at
//! the cost of one compare.

use phasers::Op;

use crate::contender::WaitHandle;
use crate::wrong_result::WrongResult;

use super::grid::Placed;

/// One member's allreduce.
pub struct TeamAllreduce<'a> {
    placed: Placed,
    iteration: u64,
    sum: [u64; 1],
    wrong: &'a WrongResult,
}

impl<'a> TeamAllreduce<'a> {
    /// The allreduce of `placed`'s member; a wrong sum is recorded in `wrong`.
    pub fn new(placed: Placed, wrong: &'a WrongResult) -> Self {
        TeamAllreduce {
            placed,
            iteration: 0,
            sum: [0],
            wrong,
        }
    }
}

/// What the member of rank `rank` contributes in `iteration`.
pub fn contribution(rank: usize, iteration: u64) -> u64 {
    rank as u64 + 1 + iteration
}

/// The sum of every contribution of a team of `size` in `iteration`.
pub fn expected_sum(size: usize, iteration: u64) -> u64 {
    let size = size as u64;
    size * (size + 1) / 2 + size * iteration
}

impl WaitHandle for TeamAllreduce<'_> {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        let member = &mut self.placed.member;
        let mine = [contribution(member.rank(), self.iteration)];
        member.allreduce(&mine, &mut self.sum, Op::Sum)?;
        let expected = expected_sum(member.parties(), self.iteration);
        if self.sum[0] != expected {
            let (got, iteration, rank) = (self.sum[0], self.iteration, member.rank());
            self.wrong.record(|| {
                format!(
                    "wrong result: rank {rank}'s allreduce of iteration {iteration} was {got}, \
                     not {expected}"
                )
            });
        }
        self.iteration += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_sum_adds_every_contribution() {
        for size in 1..6 {
            for iteration in [0, 1, 17] {
                let sum: u64 = (0..size).map(|rank| contribution(rank, iteration)).sum();
                assert_eq!(sum, expected_sum(size, iteration));
            }
        }
    }
}
