//! A simulated core: who runs on it, and its run queue.
//!
//! One queue per core, first in first out, and no migration: a thread stays on the core it was
//! given, as pinned threads do, and as the kernel mostly keeps the threads of a busy barrier. A
//! thread of another process that wakes on the core goes to the front and takes the core at
//! once (the kernel favours a thread that slept); the barrier's own threads queue at the back.

use std::collections::VecDeque;

use super::machine::Nanos;

/// What a core is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Occupant {
    Idle,
    /// Passing the core from one thread to the next (a hand-off's worth).
    Switching,
    /// A thread of another process.
    Foreign,
    Thread(usize),
}

/// Something waiting for a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runnable {
    Thread(usize),
    /// Another process's thread, and how long it will keep the core.
    Foreign(Nanos),
}

#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) occupant: Occupant,
    pub(crate) queue: VecDeque<Runnable>,
    /// Bumped at every switch, so that a pending dispatch, slice end or foreign departure from
    /// before it is recognised as stale.
    pub(crate) generation: u64,
    /// When the occupant got the core: its time slice runs from there.
    pub(crate) occupied_since: Nanos,
    /// Whether a `SliceEnds` event for the current occupant is pending.
    pub(crate) slice_armed: bool,
}

impl Core {
    pub(crate) fn idle() -> Core {
        Core {
            occupant: Occupant::Idle,
            queue: VecDeque::new(),
            generation: 0,
            occupied_since: 0,
            slice_armed: false,
        }
    }

    /// Queues `runnable`: another process's thread after those already at the front, one of
    /// ours at the back.
    pub(crate) fn enqueue(&mut self, runnable: Runnable) {
        match runnable {
            Runnable::Foreign(_) => {
                let position = self.foreign_at_front();
                self.queue.insert(position, runnable);
            }
            Runnable::Thread(_) => self.queue.push_back(runnable),
        }
    }

    /// Queues one of ours right behind the other processes' threads at the front: the thread
    /// they preempted, which gets its core back as soon as they leave.
    pub(crate) fn enqueue_preempted(&mut self, thread: usize) {
        let position = self.foreign_at_front();
        self.queue.insert(position, Runnable::Thread(thread));
    }

    /// Whether another process's thread is waiting for the core, to preempt the occupant.
    pub(crate) fn foreign_waiting(&self) -> bool {
        matches!(self.queue.front(), Some(Runnable::Foreign(_)))
    }

    fn foreign_at_front(&self) -> usize {
        self.queue
            .iter()
            .take_while(|runnable| matches!(runnable, Runnable::Foreign(_)))
            .count()
    }
}
