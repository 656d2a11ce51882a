//! A broadcast from a rotating root as a timed operation: the MPP suite's broadcast (seed 004's
//! figure 2), whose root is the iteration number modulo the team size.
//!
//! Every member starts with a buffer of its own (see [`initial_word`]). Before each broadcast the
//! root stamps word 0 with the iteration, as a program's root would have produced new data; after
//! it, every member checks the stamp, so a member that received nothing, or an earlier
//! iteration's data, is caught at the cost of one compare. In the first iteration (root 0, the
//! harness's warm-up) every member checks every word.

use phasers::SyncMode;

use crate::contender::WaitHandle;
use crate::wrong_result::WrongResult;

use super::grid::Placed;

/// One member's broadcast.
pub struct TeamBroadcast<'a> {
    placed: Placed,
    buffer: Vec<u64>,
    iteration: u64,
    wrong: &'a WrongResult,
}

/// Word `index` of the buffer of rank `rank` before the first broadcast: different for every
/// rank, so data from the wrong root shows.
pub fn initial_word(rank: usize, index: usize) -> u64 {
    ((rank as u64) << 40) ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// What the root of `iteration` writes into word 0: far from every initial word 0 of a plausible
/// rank.
pub fn stamp(iteration: u64) -> u64 {
    u64::MAX - iteration
}

impl<'a> TeamBroadcast<'a> {
    /// A broadcast of `words` u64 by `placed`'s member in `mode`; a wrong copy is recorded in
    /// `wrong`.
    pub fn new(mut placed: Placed, words: usize, mode: SyncMode, wrong: &'a WrongResult) -> Self {
        placed.member.set_sync_mode(mode);
        let rank = placed.member.rank();
        TeamBroadcast {
            buffer: (0..words.max(1)).map(|i| initial_word(rank, i)).collect(),
            placed,
            iteration: 0,
            wrong,
        }
    }

    /// The first word of the buffer that differs from what the broadcast of this iteration should
    /// have delivered: word 0 always, every word in the first iteration.
    fn first_wrong(&self) -> Option<usize> {
        if self.buffer[0] != stamp(self.iteration) {
            return Some(0);
        }
        if self.iteration == 0 {
            return (1..self.buffer.len()).find(|&i| self.buffer[i] != initial_word(0, i));
        }
        None
    }
}

impl WaitHandle for TeamBroadcast<'_> {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        let member = &mut self.placed.member;
        let rank = member.rank();
        let root = (self.iteration % member.parties() as u64) as usize;
        if rank == root {
            self.buffer[0] = stamp(self.iteration);
        }
        member.broadcast(root, &mut self.buffer)?;
        if let Some(index) = self.first_wrong() {
            let iteration = self.iteration;
            self.wrong.record(|| {
                format!(
                    "wrong result: rank {rank} received a wrong word {index} from root {root} in \
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
    fn initial_buffers_differ_between_ranks_and_from_stamps() {
        for index in 0..100 {
            assert_ne!(initial_word(0, index), initial_word(1, index));
        }
        for rank in 0..1000 {
            assert_ne!(initial_word(rank, 0), stamp(0));
        }
        assert_ne!(stamp(0), stamp(1));
    }
}
