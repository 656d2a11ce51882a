//! An alltoall as a timed operation: the MPP suite's global transpose, each member sending one
//! block to every member.
//!
//! Input block `j` of rank `r` goes to rank `j`, where it becomes output block `r`. Before each
//! call every member stamps word 0 of each input block with the iteration, sender and receiver;
//! after it, every member checks word 0 of each output block, so a block from the wrong member or
//! an earlier iteration is caught. The stamps and checks touch one word per block, which the
//! alltoall itself moves anyway. In the first iteration every word is checked.

use crate::contender::WaitHandle;
use crate::wrong_result::WrongResult;

use super::grid::Placed;

/// One member's alltoall.
pub struct TeamAlltoall<'a> {
    placed: Placed,
    block: usize,
    input: Vec<u64>,
    output: Vec<u64>,
    iteration: u64,
    wrong: &'a WrongResult,
}

/// Word `index` of the block that rank `from` sends to rank `to`, before any stamp.
pub fn initial_word(from: usize, to: usize, index: usize) -> u64 {
    ((from as u64) << 48) ^ ((to as u64) << 32) ^ index as u64
}

/// Word 0 of the block `from` sends to `to` in `iteration`: different for every iteration (below
/// 2^32), sender and receiver (below 2^16, a team's limit).
pub fn stamp(iteration: u64, from: usize, to: usize) -> u64 {
    (iteration << 32) ^ ((from as u64) << 16) ^ to as u64
}

impl<'a> TeamAlltoall<'a> {
    /// An alltoall of `block` u64 per member pair by `placed`'s member; a wrong block is recorded
    /// in `wrong`.
    pub fn new(placed: Placed, block: usize, wrong: &'a WrongResult) -> Self {
        let block = block.max(1);
        let (rank, size) = (placed.member.rank(), placed.member.parties());
        let input = (0..size * block)
            .map(|i| initial_word(rank, i / block, i % block))
            .collect();
        TeamAlltoall {
            placed,
            block,
            input,
            output: vec![0; size * block],
            iteration: 0,
            wrong,
        }
    }

    /// The first output word that is not what member `from` sent this member in this iteration.
    fn first_wrong(&self, rank: usize) -> Option<(usize, usize)> {
        let size = self.output.len() / self.block;
        for from in 0..size {
            let block = &self.output[from * self.block..(from + 1) * self.block];
            if block[0] != stamp(self.iteration, from, rank) {
                return Some((from, 0));
            }
            if self.iteration == 0 {
                if let Some(index) =
                    (1..self.block).find(|&i| block[i] != initial_word(from, rank, i))
                {
                    return Some((from, index));
                }
            }
        }
        None
    }
}

impl WaitHandle for TeamAlltoall<'_> {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        let rank = self.placed.member.rank();
        for to in 0..self.input.len() / self.block {
            self.input[to * self.block] = stamp(self.iteration, rank, to);
        }
        self.placed.member.alltoall(&self.input, &mut self.output)?;
        if let Some((from, index)) = self.first_wrong(rank) {
            let iteration = self.iteration;
            self.wrong.record(|| {
                format!(
                    "wrong result: rank {rank}'s word {index} from rank {from} was wrong in \
                     iteration {iteration}"
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
    fn stamps_tell_iterations_senders_and_receivers_apart() {
        let mut seen = std::collections::HashSet::new();
        for iteration in 0..4 {
            for from in 0..5 {
                for to in 0..5 {
                    assert!(seen.insert(stamp(iteration, from, to)));
                }
            }
        }
        assert_ne!(initial_word(1, 2, 3), initial_word(2, 1, 3));
    }
}
