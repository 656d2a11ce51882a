//! What can happen next, and the queue that hands events out in time order.
//!
//! A thread has at most one event of its own pending at a time (the end of what it is doing
//! now). When that changes (a release makes a spinning waiter see it sooner, a preemption stops
//! its work), the thread's generation is bumped and the old event, still in the queue, is
//! dropped when it comes out. Cores are handled the same way. That costs a comparison per stale
//! event and no search of the queue.

use super::machine::Nanos;

/// An event, at a time the queue keeps beside it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// The end of what `thread` was doing, valid while its generation is still `generation`.
    Thread {
        thread: usize,
        generation: u64,
        step: Step,
    },
    /// A wake call reached `thread`, asleep: it becomes runnable on its core, at once if the
    /// core is busy, once the core is out of its idle state if it is idle.
    WakeReaches { thread: usize },
    /// `thread`'s idle core is back from its idle state: the thread can run.
    IdleCoreUp { thread: usize },
    /// A scheduling moment of `core`, valid while its generation is still `generation`.
    Core {
        core: usize,
        generation: u64,
        step: CoreStep,
    },
    /// A thread of another process becomes runnable on `core` and keeps it for `runs_for`.
    ForeignArrives { core: usize, runs_for: Nanos },
}

/// How a thread's current activity ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    WorkDone,
    /// Its arrival's read-modify-write on the barrier's line completed.
    ArriveDone,
    SpinRanOut,
    /// A run of yields with nobody else on the core ended: all of them, or the one during which
    /// another thread became runnable.
    YieldsDone,
    /// It read the release.
    SeesRelease,
    /// Its wake system calls returned.
    WakeCallsDone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CoreStep {
    /// A switch to the next runnable thread completed.
    Dispatch,
    /// The other process's thread leaves the core.
    ForeignDone,
    /// The running thread's time slice is over.
    SliceEnds,
}

/// Events in time order; events at the same nanosecond come out in an order fixed by the
/// order they were scheduled in, so runs are reproducible.
///
/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990): simulated time never goes back, so
/// every event is scheduled at or after the last one taken out, and events can be kept in
/// buckets by the highest bit in which their time differs from that last time. Scheduling is a
/// push on a vector; taking out redistributes one bucket into lower ones, so an event moves a
/// few times at most. The buckets hold a time and a slot of 16 bytes; the events stay in their
/// slots. Several times faster than a binary heap of events in the unoptimized builds tests run
/// in, where every element moved pays for a call and its checks.
pub(crate) struct EventQueue {
    /// Bucket `b` holds the times whose highest bit differing from `last` is bit `b - 1`
    /// (bucket 0: `last` itself), each with the slot of its event.
    buckets: Vec<Vec<(Nanos, u32)>>,
    /// Bit `b` set: bucket `b` is not empty.
    occupied: u128,
    /// The time last taken out.
    last: Nanos,
    /// An empty vector to swap with the bucket being redistributed, so that no bucket's
    /// allocation is given up.
    spare: Vec<(Nanos, u32)>,
    slots: Vec<Event>,
    free: Vec<u32>,
}

/// One bucket per bit a time can differ in from the last, and one for the last time itself.
const BUCKETS: usize = Nanos::BITS as usize + 1;

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: 0,
            last: 0,
            spare: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl EventQueue {
    /// Schedules `event` at `at`, which must not be before the last event taken out.
    pub(crate) fn push(&mut self, at: Nanos, event: Event) {
        debug_assert!(at >= self.last, "an event in the past");
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = event;
                slot
            }
            None => {
                self.slots.push(event);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 pending events")
            }
        };
        self.insert(at, slot);
    }

    fn insert(&mut self, at: Nanos, slot: u32) {
        let bucket = (Nanos::BITS - (at ^ self.last).leading_zeros()) as usize;
        self.buckets[bucket].push((at, slot));
        self.occupied |= 1 << bucket;
    }

    /// How many events are pending, stale ones included.
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Drops every event for which `live` is false.
    pub(crate) fn retain(&mut self, mut live: impl FnMut(&Event) -> bool) {
        let (slots, free) = (&self.slots, &mut self.free);
        for (index, bucket) in self.buckets.iter_mut().enumerate() {
            bucket.retain(|&(_, slot)| {
                let keep = live(&slots[slot as usize]);
                if !keep {
                    free.push(slot);
                }
                keep
            });
            if bucket.is_empty() {
                self.occupied &= !(1 << index);
            }
        }
    }

    /// The earliest event and its time.
    pub(crate) fn pop(&mut self) -> Option<(Nanos, Event)> {
        if self.occupied & 1 == 0 {
            if self.occupied == 0 {
                return None;
            }
            // The lowest non-empty bucket holds the next time; it becomes `last`, and the others
            // of the bucket differ from it in lower bits only.
            let lowest = self.occupied.trailing_zeros() as usize;
            self.occupied &= !(1 << lowest);
            std::mem::swap(&mut self.buckets[lowest], &mut self.spare);
            let mut next = Nanos::MAX;
            for &(at, _) in &self.spare {
                next = next.min(at);
            }
            self.last = next;
            while let Some((at, slot)) = self.spare.pop() {
                self.insert(at, slot);
            }
        }
        let bucket = &mut self.buckets[0];
        let (at, slot) = bucket.pop().expect("bucket 0 holds the last time");
        if bucket.is_empty() {
            self.occupied &= !1;
        }
        self.free.push(slot);
        Some((at, self.slots[slot as usize]))
    }
}
