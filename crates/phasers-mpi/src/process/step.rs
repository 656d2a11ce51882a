//! What every process barrier algorithm does: advance without blocking.

use crate::channel::Channel;

/// One process barrier algorithm's state for the current episode.
pub(crate) trait ProcessStep: Send {
    /// Sends what can be sent and takes what has arrived; returns `true` once this rank may leave
    /// the episode (the state is then ready for the next one). Never blocks.
    fn advance(&mut self, channel: &Channel) -> bool;

    /// The ranks whose messages this rank is waiting for now, for errors and stall warnings.
    fn waiting_for(&self, channel: &Channel) -> Vec<usize>;
}

/// "rank(s) [..]", or "the other ranks" when the algorithm cannot tell.
pub(crate) fn describe_ranks(ranks: &[usize]) -> String {
    if ranks.is_empty() {
        "the other ranks".to_owned()
    } else {
        format!("rank(s) {ranks:?}")
    }
}
