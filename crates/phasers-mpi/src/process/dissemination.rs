//! The dissemination barrier across processes (seed 001): in round `k` each rank sends a token to
//! rank `r + 2^k` and waits for one from rank `r - 2^k` (mod P). After ceil(log2 P) rounds every
//! rank has heard, directly or through others, from every rank. No release phase is needed.
//!
//! Each round has its own tag and its own receive, posted ahead and re-posted as soon as it
//! completes, so a token costs one `MPI_Test`. MPI never lets two messages with the same source,
//! tag and communicator overtake each other, so a token a fast rank sends for the next episode
//! waits for the round that will take it.

use crate::channel::{Channel, PostedToken, Tag};

use super::step::ProcessStep;

pub(crate) struct Dissemination {
    /// Round `k`'s receive, from rank `r - 2^k`.
    receives: Vec<PostedToken>,
    /// The next round to finish.
    round: usize,
    /// Whether this round's token has been sent.
    sent: bool,
}

impl Dissemination {
    /// Posts every round's receive on `channel`.
    pub(crate) fn new(channel: &Channel) -> Self {
        let (rank, size) = (channel.rank(), channel.size());
        let receives = (0..ceil_log2(size))
            .map(|round| {
                let distance = (1 << round) % size;
                channel.post_token((rank + size - distance) % size, round as Tag)
            })
            .collect();
        Dissemination {
            receives,
            round: 0,
            sent: false,
        }
    }
}

impl ProcessStep for Dissemination {
    fn advance(&mut self, channel: &Channel) -> bool {
        let (rank, size) = (channel.rank(), channel.size());
        while let Some(receive) = self.receives.get_mut(self.round) {
            if !self.sent {
                channel.send_token((rank + (1 << self.round)) % size, self.round as Tag);
                self.sent = true;
            }
            if !channel.try_take_posted(receive) {
                return false;
            }
            self.round += 1;
            self.sent = false;
        }
        self.round = 0;
        true
    }

    fn waiting_for(&self, _channel: &Channel) -> Vec<usize> {
        self.receives
            .get(self.round)
            .map(|receive| vec![receive.from()])
            .unwrap_or_default()
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
