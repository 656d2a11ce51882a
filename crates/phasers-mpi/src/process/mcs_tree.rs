//! The MCS tree barrier across processes (seed 001): ranks arrive up a 4-ary tree (rank `r`'s
//! children are `4r + 1 ..= 4r + 4`) and are woken down a binary tree (children `2r + 1`,
//! `2r + 2`). Each rank receives at most four arrival tokens and one wake-up, and sends one
//! arrival and at most two wake-ups, so no rank handles more than seven messages per episode.
//!
//! Arrival and wake-up have their own tags, and each child's arrival and the parent's wake-up has
//! its own receive, posted ahead and re-posted as soon as it completes (one `MPI_Test` per token).
//! A child's arrival for the next episode can reach its parent before the parent is woken, and
//! simply lands in the re-posted receive for the next episode.

use crate::channel::{Channel, PostedToken, Tag};

use super::step::ProcessStep;

const ARRIVAL: Tag = 1;
const WAKE_UP: Tag = 2;
const ARRIVAL_FAN_IN: usize = 4;
const WAKE_UP_FAN_OUT: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Collecting children's arrivals; bit `i` set once child `i` arrived.
    Gathering { arrived: u8 },
    /// Arrived at the parent; waiting to be woken.
    AwaitingWakeUp,
}

pub(crate) struct McsTree {
    stage: Stage,
    /// Child `i`'s arrivals, in the order of `arrival_children`.
    arrivals: Vec<PostedToken>,
    /// The parent's wake-ups; `None` at the root.
    wake_up: Option<PostedToken>,
}

impl McsTree {
    /// Posts this rank's receives on `channel`.
    pub(crate) fn new(channel: &Channel) -> Self {
        let (rank, size) = (channel.rank(), channel.size());
        McsTree {
            stage: Stage::Gathering { arrived: 0 },
            arrivals: arrival_children(rank, size)
                .map(|(_, child)| channel.post_token(child, ARRIVAL))
                .collect(),
            wake_up: (rank != 0).then(|| channel.post_token((rank - 1) / WAKE_UP_FAN_OUT, WAKE_UP)),
        }
    }
}

fn arrival_children(rank: usize, size: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..ARRIVAL_FAN_IN)
        .map(move |i| (i, ARRIVAL_FAN_IN * rank + 1 + i))
        .filter(move |&(_, child)| child < size)
}

fn wake_up_children(rank: usize, size: usize) -> impl Iterator<Item = usize> {
    (0..WAKE_UP_FAN_OUT)
        .map(move |i| WAKE_UP_FAN_OUT * rank + 1 + i)
        .filter(move |&child| child < size)
}

impl ProcessStep for McsTree {
    fn advance(&mut self, channel: &Channel) -> bool {
        let (rank, size) = (channel.rank(), channel.size());
        if let Stage::Gathering { mut arrived } = self.stage {
            let mut all = true;
            for (i, receive) in self.arrivals.iter_mut().enumerate() {
                if arrived & (1 << i) == 0 {
                    if channel.try_take_posted(receive) {
                        arrived |= 1 << i;
                    } else {
                        all = false;
                    }
                }
            }
            if !all {
                self.stage = Stage::Gathering { arrived };
                return false;
            }
            if rank != 0 {
                channel.send_token((rank - 1) / ARRIVAL_FAN_IN, ARRIVAL);
                self.stage = Stage::AwaitingWakeUp;
            }
        }
        // Only a rank with a parent awaits a wake-up.
        if let (Stage::AwaitingWakeUp, Some(parent)) = (self.stage, self.wake_up.as_mut()) {
            if !channel.try_take_posted(parent) {
                return false;
            }
        }
        for child in wake_up_children(rank, size) {
            channel.send_token(child, WAKE_UP);
        }
        self.stage = Stage::Gathering { arrived: 0 };
        true
    }

    fn waiting_for(&self, channel: &Channel) -> Vec<usize> {
        let (rank, size) = (channel.rank(), channel.size());
        match self.stage {
            Stage::Gathering { arrived } => arrival_children(rank, size)
                .filter(|&(i, _)| arrived & (1 << i) == 0)
                .map(|(_, child)| child)
                .collect(),
            Stage::AwaitingWakeUp => vec![(rank - 1) / WAKE_UP_FAN_OUT],
        }
    }
}
