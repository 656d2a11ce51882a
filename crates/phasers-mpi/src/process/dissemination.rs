//! The dissemination barrier across processes (seed 001): in round `k` each rank sends a token to
//! rank `r + 2^k` and waits for one from rank `r - 2^k` (mod P). After ceil(log2 P) rounds every
//! rank has heard, directly or through others, from every rank. No release phase is needed.
//!
//! Each round has its own tag. MPI never lets two messages with the same source, tag and
//! communicator overtake each other, so a token a fast rank sends for the next episode waits,
//! queued, for the round that will take it.

use crate::channel::{Channel, Tag};

use super::step::ProcessStep;

pub(crate) struct Dissemination {
    rounds: usize,
    /// The next round to finish.
    round: usize,
    /// Whether this round's token has been sent.
    sent: bool,
}

impl Dissemination {
    pub(crate) fn new(size: usize) -> Self {
        Dissemination {
            rounds: ceil_log2(size),
            round: 0,
            sent: false,
        }
    }

    fn distance(&self) -> usize {
        1 << self.round
    }
}

impl ProcessStep for Dissemination {
    fn advance(&mut self, channel: &Channel) -> bool {
        let (rank, size) = (channel.rank(), channel.size());
        while self.round < self.rounds {
            let tag = self.round as Tag;
            if !self.sent {
                channel.send_token((rank + self.distance()) % size, tag);
                self.sent = true;
            }
            let from = (rank + size - self.distance() % size) % size;
            if !channel.try_take_token(from, tag) {
                return false;
            }
            self.round += 1;
            self.sent = false;
        }
        self.round = 0;
        true
    }

    fn waiting_for(&self, channel: &Channel) -> Vec<usize> {
        let (rank, size) = (channel.rank(), channel.size());
        if self.round >= self.rounds {
            return Vec::new();
        }
        vec![(rank + size - self.distance() % size) % size]
    }
}

/// The number of rounds: ceil(log2 n), 0 for one rank.
pub(crate) fn ceil_log2(n: usize) -> usize {
    n.next_power_of_two().trailing_zeros() as usize
}

#[cfg(test)]
mod tests {
    use super::ceil_log2;

    #[test]
    fn rounds_are_ceil_log2() {
        assert_eq!([1, 2, 3, 4, 5, 8, 9].map(ceil_log2), [0, 1, 2, 2, 3, 3, 4]);
    }
}
