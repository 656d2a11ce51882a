//! The simulated barrier: a central counting barrier, as `barrier/counting.rs` builds it.
//!
//! Two counters alternate between episodes; each is one cache line that every arrival
//! decrements and every waiter polls. So:
//!
//! - **Arrivals are serialized on the line**, half a round trip each (*R*/2: the line comes over
//!   from the previous arrival's core once; the read-modify-write then completes locally). The
//!   last of `T` arrivals completes at least `T R/2` after the first, which is what a central
//!   barrier costs at 256 threads even when nobody waits (19 µs on the Xeon VM).
//! - **The last arrival is the release**, and a waiter polling the line sees it *R*/2 later (the
//!   line comes back once). Readers are not serialized: the line is shared by all of them at
//!   once, as a directory serves concurrent reads.
//! - **Sleepers queue on the counter's futex word** in the order they parked; a release by tree
//!   sets aside those it does not wake itself, on a second queue that woken sleepers draw from
//!   (see `futex.rs`). A release wakes only when someone parked (the `PARKED` bit).
//!
//! Not modelled: the invalidations each arrival sends to the waiters polling the same line,
//! which make arrivals dearer while many spin. That favours the rules that park, so it cannot
//! make spinning look better than it is.

use std::collections::VecDeque;

use super::machine::Nanos;

pub(crate) struct CountingBarrier {
    parties: usize,
    /// Per counter: when its line is free for the next read-modify-write.
    line_free: [Nanos; 2],
    /// Per counter: arrivals still expected.
    remaining: [usize; 2],
    /// When each episode so far was released.
    released_at: Vec<Nanos>,
    /// The threads that arrived at the current episode and wait for it.
    waiting: Vec<usize>,
    /// Per counter: its sleepers, in the order they parked.
    sleepers: [VecDeque<usize>; 2],
    /// Per counter: sleepers a release by tree set aside, for woken sleepers to wake.
    set_aside: [VecDeque<usize>; 2],
}

/// A counter's index: episodes alternate between the two.
fn counter(episode: u64) -> usize {
    (episode % 2) as usize
}

impl CountingBarrier {
    pub(crate) fn new(parties: usize) -> CountingBarrier {
        CountingBarrier {
            parties,
            line_free: [0; 2],
            remaining: [parties; 2],
            released_at: Vec::new(),
            waiting: Vec::new(),
            sleepers: [VecDeque::new(), VecDeque::new()],
            set_aside: [VecDeque::new(), VecDeque::new()],
        }
    }

    /// An arrival at `episode` that reaches the line at `now`: when its decrement completes,
    /// behind those already queued on the line.
    pub(crate) fn arrive(&mut self, episode: u64, now: Nanos, transfer: Nanos) -> Nanos {
        let line = &mut self.line_free[counter(episode)];
        *line = (*line).max(now) + transfer;
        *line
    }

    /// Counts an arrival whose decrement completed; `true` for the last, which releases.
    pub(crate) fn count_arrival(&mut self, episode: u64) -> bool {
        let remaining = &mut self.remaining[counter(episode)];
        *remaining -= 1;
        *remaining == 0
    }

    pub(crate) fn add_waiter(&mut self, thread: usize) {
        self.waiting.push(thread);
    }

    /// Releases `episode` at `now` and re-arms the other counter for the next one (nobody has
    /// arrived there yet: they all arrived here). Returns the threads that were waiting.
    pub(crate) fn release(&mut self, episode: u64, now: Nanos) -> Vec<usize> {
        debug_assert_eq!(self.released_at.len() as u64, episode);
        self.released_at.push(now);
        self.remaining[counter(episode + 1)] = self.parties;
        std::mem::take(&mut self.waiting)
    }

    /// When `episode` was released, if it was.
    pub(crate) fn released_at(&self, episode: u64) -> Option<Nanos> {
        self.released_at.get(episode as usize).copied()
    }

    /// Every release so far, in order.
    pub(crate) fn releases(&self) -> &[Nanos] {
        &self.released_at
    }

    pub(crate) fn park(&mut self, episode: u64, thread: usize) {
        self.sleepers[counter(episode)].push_back(thread);
    }

    /// The sleepers of `episode`, in the order they parked, taken off the word's queue.
    pub(crate) fn take_sleepers(&mut self, episode: u64) -> Vec<usize> {
        self.sleepers[counter(episode)].drain(..).collect()
    }

    /// Sets `sleepers` aside on `episode`'s counter, for the woken ones to wake.
    pub(crate) fn set_aside(&mut self, episode: u64, sleepers: &[usize]) {
        self.set_aside[counter(episode)].extend(sleepers);
    }

    /// Takes up to `count` of `episode`'s set-aside sleepers, first parked first.
    pub(crate) fn take_set_aside(&mut self, episode: u64, count: usize) -> Vec<usize> {
        let queue = &mut self.set_aside[counter(episode)];
        let count = count.min(queue.len());
        queue.drain(..count).collect()
    }
}
