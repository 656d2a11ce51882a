//! The steps of one process in recursive doubling over any number of processes, without the
//! transport: `record_exchange.rs` moves records by MPI messages or through the mailboxes
//! (`mailbox.rs`), and the loom model (`tests/loom_mailbox.rs`) runs these same steps.
//!
//! A process count that is not a power of two folds the extra processes in first: in each of
//! the first `extra` pairs the even process hands its record to the odd one, which takes part
//! in the doubling and hands the merged record back at the end.

/// Where a process is in its exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// An extra process's record on its way to its odd neighbour; then `Final`.
    Handing,
    /// An odd process of the extra pairs receiving its neighbour's record; then doubling.
    Folding,
    /// Recursive doubling with the partner at this distance (among the power-of-two group).
    Doubling(usize),
    /// The merged record on its way back to the even neighbour.
    Returning,
    /// The even neighbour receiving the merged record.
    Final,
    /// The exchange is over.
    Done,
}

/// What a finished step's received record does to this process's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Nothing was received.
    Nothing,
    /// Merge it into this process's record.
    Merge,
    /// It is every process's record, merged: it replaces this process's.
    Replace,
}

/// The largest power of two not above `size` (1 for 0).
fn largest_power_of_two(size: usize) -> usize {
    1usize << (usize::BITS - 1 - size.max(1).leading_zeros())
}

/// A step's send or receive: the other process, and the step's index.
pub type Move = Option<(usize, usize)>;

/// One process's steps.
#[derive(Clone, Copy, Debug)]
pub struct Doubling {
    step: Step,
    /// This process's rank among those taking part in the doubling (`None` for an even extra).
    step_rank: Option<usize>,
    pof2: usize,
    extra: usize,
    me: usize,
}

impl Doubling {
    /// Process `me`'s steps among `size` processes, at the first.
    pub fn new(me: usize, size: usize) -> Doubling {
        let size = size.max(1);
        let pof2 = largest_power_of_two(size);
        let extra = size - pof2;
        let (step, step_rank) = if me < 2 * extra {
            if me % 2 == 0 {
                (Step::Handing, None)
            } else {
                (Step::Folding, Some(me / 2))
            }
        } else if pof2 > 1 {
            (Step::Doubling(1), Some(me - extra))
        } else {
            (Step::Done, Some(0))
        };
        Doubling {
            step,
            step_rank,
            pof2,
            extra,
            me,
        }
    }

    /// How many step indices [`moves`](Self::moves) uses among `size` processes: 0 for the
    /// fold-in, then one per doubling distance.
    pub fn step_indices(size: usize) -> usize {
        largest_power_of_two(size).trailing_zeros() as usize + 1
    }

    /// The current step.
    pub fn step(&self) -> Step {
        self.step
    }

    /// The rank of the process at `step` among the doubling group.
    fn real(&self, step: usize) -> usize {
        if step < self.extra {
            step * 2 + 1
        } else {
            step + self.extra
        }
    }

    /// The current step's moves: to whom it sends and from whom it receives, each with the
    /// step's index (its mailbox slot: 0 for the fold-in, `1 + log2(distance)` for doubling).
    pub fn moves(&self) -> (Move, Move) {
        let me = self.me;
        match self.step {
            Step::Doubling(mask) => {
                let partner = self.real(self.step_rank.unwrap_or(0) ^ mask);
                let step = mask.trailing_zeros() as usize + 1;
                (Some((partner, step)), Some((partner, step)))
            }
            Step::Handing => (Some((me + 1, 0)), None),
            Step::Folding => (None, Some((me - 1, 0))),
            Step::Returning => (Some((me - 1, 0)), None),
            Step::Final => (None, Some((me + 1, 0))),
            Step::Done => (None, None),
        }
    }

    /// Moves on once the current step's messages have gone and come; what to do with the
    /// received record.
    pub fn finish_step(&mut self) -> Received {
        let after_doubling = if self.me < 2 * self.extra {
            Step::Returning
        } else {
            Step::Done
        };
        let (next, received) = match self.step {
            Step::Handing => (Step::Final, Received::Nothing),
            Step::Folding if self.pof2 > 1 => (Step::Doubling(1), Received::Merge),
            Step::Folding => (after_doubling, Received::Merge),
            Step::Doubling(mask) if mask << 1 < self.pof2 => {
                (Step::Doubling(mask << 1), Received::Merge)
            }
            Step::Doubling(_) => (after_doubling, Received::Merge),
            Step::Returning => (Step::Done, Received::Nothing),
            Step::Final => (Step::Done, Received::Replace),
            Step::Done => (Step::Done, Received::Nothing),
        };
        self.step = next;
        received
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs every process's steps in lockstep on sets of contributions: every process must end
    /// with every contribution, each once, and send only in slots of the mailbox geometry.
    #[test]
    fn every_process_ends_with_every_record_once() {
        for size in 1..=9 {
            let steps = Doubling::step_indices(size);
            let mut plans: Vec<Doubling> = (0..size).map(|me| Doubling::new(me, size)).collect();
            let mut records: Vec<Vec<usize>> = (0..size).map(|me| vec![me]).collect();
            for _round in 0..2 * steps + 2 {
                let moves: Vec<_> = plans.iter().map(Doubling::moves).collect();
                // A step finishes when its partner is at the matching step.
                let ready: Vec<bool> = (0..size)
                    .map(|me| {
                        let (send, recv) = moves[me];
                        let sent = send.is_none_or(|(to, s)| moves[to].1 == Some((me, s)));
                        let got = recv.is_none_or(|(from, s)| moves[from].0 == Some((me, s)));
                        (send.is_some() || recv.is_some()) && sent && got
                    })
                    .collect();
                let before = records.clone();
                for me in 0..size {
                    if !ready[me] {
                        continue;
                    }
                    let (send, recv) = moves[me];
                    if let Some((_, s)) = send {
                        assert!(s < steps, "size {size}: step {s} of {steps}");
                    }
                    let from = recv.map(|(from, _)| from);
                    match plans[me].finish_step() {
                        Received::Merge => {
                            let theirs = before[from.unwrap()].clone();
                            records[me].extend(theirs);
                        }
                        Received::Replace => records[me] = before[from.unwrap()].clone(),
                        Received::Nothing => {}
                    }
                }
            }
            for (me, record) in records.iter().enumerate() {
                assert_eq!(plans[me].step(), Step::Done, "size {size}, process {me}");
                let mut sorted = record.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..size).collect::<Vec<_>>(), "size {size}, {me}");
            }
        }
    }
}
