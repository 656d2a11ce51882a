//! Mailboxes in memory the team's processes share: how a flat team whose processes all run on
//! one node sends its envelope records (`record_exchange.rs`) without MPI.
//!
//! The exchange's steps stay those of recursive doubling; only the transport changes. Every
//! process owns one slot per step and per ring entry. Sending step `s` of exchange `e` writes
//! the record into the sender's slot `(s, e % RING)` and then publishes the slot's sequence word
//! `(e + 1) << LEN_BITS | length` (release); the step's partner, the slot's only reader, waits
//! for that word (acquire) and copies the record out.
//!
//! No acknowledgement travels back: a process sends in exchange `e` only once it has completed
//! its exchange `e - 1`. Completing `e - 1` takes every process's record of `e - 1` (merged on
//! the way), so every process had sent in `e - 1`, so had completed its `e - 2`, in which it
//! copied out every record it reads: the slots of `e - 2`, which `e` reuses (`RING` is 2), are
//! free. Exchanges of one process may still overlap (the engine starts a call's exchange while
//! the call before is in flight); the later one then waits to send, and whoever polls it polls
//! the earlier one too (`engine.rs`, `direct_checked.rs`).
//!
//! Why it pays: a record through Open MPI's shared memory costs a message (about 155 ns one way
//! between the 2 processes of the AMD EPYC VM, `envelope::MAX_RECORD`'s measurements), through
//! the mailbox a cache-line transfer (49 ns there, the floor `phasers-mpi bench` prints).
//!
//! The protocol is generic over the memory ([`MailSlots`]): the team's slots are a file every
//! process of the node maps (`node_memory.rs`), the loom model's (`tests/loom_mailbox.rs`) loom
//! atomics and cells.

use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering};

use super::doubling::Doubling;
use crate::node_memory::{NodeCounters, COUNTER_STRIDE};

/// Slots per process and step: the slots of exchange `e` are free again at `e + RING` (see the
/// module docs).
pub const RING: u64 = 2;
/// Bits of a sequence word that hold the record's length (records are at most
/// `envelope::MAX_RECORD`, 4032 bytes).
const LEN_BITS: u32 = 13;
const LEN_MASK: u64 = (1 << LEN_BITS) - 1;

/// The slots of every process of a node, all zero at the start, in which the protocol
/// ([`post`], [`take`]) moves records.
pub trait MailSlots {
    /// Loads the sequence word of slot `slot`: the exchange whose record it holds, plus one,
    /// shifted left by `LEN_BITS`, with the record's length.
    fn load(&self, slot: usize, order: Ordering) -> u64;
    /// Stores `value` into the sequence word of slot `slot`.
    fn store(&self, slot: usize, value: u64, order: Ordering);
    /// Copies `bytes` into slot `slot`'s data.
    ///
    /// # Safety
    /// Only the slot's owner writes, and only when no reader may be reading: [`post`]'s rule
    /// (see the module docs).
    unsafe fn write(&self, slot: usize, bytes: &[u8]);
    /// Copies the first `into.len()` bytes of slot `slot`'s data into `into`.
    ///
    /// # Safety
    /// Only after the slot's sequence word said the data is written, and before the exchange
    /// that reads it completes: [`take`]'s rule.
    unsafe fn read(&self, slot: usize, into: &mut [u8]);
}

/// Where a process's slots lie: `steps` slots per ring entry, for each process of the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Processes of the team (all on one node).
    pub processes: usize,
    /// Slots each process writes in one exchange: one per step it sends at.
    pub steps: usize,
}

impl Geometry {
    /// The slots a team of `processes` needs: one per step index of its doubling.
    pub fn of(processes: usize) -> Geometry {
        Geometry {
            processes,
            steps: Doubling::step_indices(processes),
        }
    }

    /// Slots in all.
    pub fn slots(&self) -> usize {
        self.processes * self.steps * RING as usize
    }

    /// The slot `owner` writes at `step` of exchange `exchange`.
    pub fn slot(&self, owner: usize, step: usize, exchange: u64) -> usize {
        (owner * self.steps + step) * RING as usize + (exchange % RING) as usize
    }
}

/// Sends `record` as exchange `exchange`'s message in `slot` (its owner's), this process having
/// completed `completed` exchanges; `false`, having written nothing, until it has completed
/// exchange `exchange - 1` (see the module docs). Then the caller tries again later.
pub fn post<S: MailSlots + ?Sized>(
    slots: &S,
    slot: usize,
    exchange: u64,
    completed: u64,
    record: &[u8],
) -> bool {
    if completed < exchange {
        return false;
    }
    // SAFETY: every reader of the slot's last record (exchange `exchange - RING`'s) has
    // completed that exchange, so copied the record out (see the module docs); the reader of
    // this exchange reads only after the release store below.
    unsafe { slots.write(slot, record) };
    let word = (exchange + 1) << LEN_BITS | (record.len() as u64 & LEN_MASK);
    slots.store(slot, word, Ordering::Release);
    true
}

/// Receives exchange `exchange`'s message from `slot` (its sender's) into `into` (at least as
/// long as any record, `envelope::MAX_RECORD`); its length, or `None` while it has not been
/// sent.
pub fn take<S: MailSlots + ?Sized>(
    slots: &S,
    slot: usize,
    exchange: u64,
    into: &mut [u8],
) -> Option<usize> {
    let word = slots.load(slot, Ordering::Acquire);
    if word >> LEN_BITS != exchange + 1 {
        return None;
    }
    let len = ((word & LEN_MASK) as usize).min(into.len());
    // SAFETY: the acquire load saw the sender's release store made after it wrote the record;
    // the sender writes the slot again only once this exchange has completed here.
    unsafe { slots.read(slot, &mut into[..len]) };
    Some(len)
}

/// Bytes of a slot before its data: the sequence word. The data follow in the same cache line,
/// so that the line a reader waits on brings the record's first 56 bytes with it (a one-word
/// call's whole record: `envelope.rs`).
const DATA_AT: usize = 8;
/// Counters of the node memory per slot (its stride, 128 bytes, keeps slots on their own pairs
/// of cache lines): the sequence word and the data.
const SLOT_COUNTERS: usize =
    (DATA_AT + crate::hybrid::envelope::MAX_RECORD).div_ceil(COUNTER_STRIDE);

/// A team's mailboxes in a file every process of its node maps.
pub(crate) struct Mailboxes {
    memory: NodeCounters,
    pub(crate) geometry: Geometry,
    /// This process's next exchange: exchanges start in call order (the engine starts a
    /// call's envelope when the call's last member arrives, before that member can reach the
    /// next call), so every process numbers them alike.
    next: StdAtomicU64,
    /// How many of this process's exchanges have completed: they complete in order, since each
    /// sends only once the one before has completed.
    completed: StdAtomicU64,
}

impl Mailboxes {
    /// Collective over `node`, which holds every process of the team in team order. Every
    /// process gets the mailboxes, or every process the reason they could not be made.
    pub(crate) fn new(node: &mpi::topology::SimpleCommunicator) -> Result<Mailboxes, String> {
        use mpi::traits::Communicator;
        let geometry = Geometry::of(node.size() as usize);
        let memory = NodeCounters::new(node, geometry.slots() * SLOT_COUNTERS)?;
        Ok(Mailboxes {
            memory,
            geometry,
            next: StdAtomicU64::new(0),
            completed: StdAtomicU64::new(0),
        })
    }

    /// The number of this process's next exchange.
    pub(crate) fn next_exchange(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// How many of this process's exchanges have completed.
    pub(crate) fn completed(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    /// Exchange `exchange` has completed here.
    pub(crate) fn complete(&self, exchange: u64) {
        self.completed.store(exchange + 1, Ordering::Release);
    }

    fn data(&self, slot: usize, len: usize) -> *mut u8 {
        let start = self.memory.bytes(slot * SLOT_COUNTERS, DATA_AT + len);
        // SAFETY: `bytes` checked that the slot holds `DATA_AT + len` bytes from `start`.
        unsafe { start.add(DATA_AT) }
    }
}

impl MailSlots for Mailboxes {
    fn load(&self, slot: usize, order: Ordering) -> u64 {
        self.memory.get(slot * SLOT_COUNTERS).load(order)
    }

    fn store(&self, slot: usize, value: u64, order: Ordering) {
        self.memory.get(slot * SLOT_COUNTERS).store(value, order);
    }

    unsafe fn write(&self, slot: usize, bytes: &[u8]) {
        let data = self.data(slot, bytes.len());
        // SAFETY: `data` is `bytes.len()` bytes of the slot (`NodeCounters::bytes` checks the
        // bounds), which only this process writes and no reader reads now (the caller's
        // contract); the two do not overlap (`bytes` is this process's heap).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len()) };
    }

    unsafe fn read(&self, slot: usize, into: &mut [u8]) {
        let data = self.data(slot, into.len());
        // SAFETY: as for `write`: the slot's bytes, written and not being rewritten (the
        // caller's contract), copied into this process's own buffer.
        unsafe { std::ptr::copy_nonoverlapping(data, into.as_mut_ptr(), into.len()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hybrid::doubling::Step;

    /// Slots in this process's heap, for the protocol's sequential checks.
    struct Heap {
        words: Vec<StdAtomicU64>,
        data: Vec<std::cell::UnsafeCell<[u8; 64]>>,
    }

    impl Heap {
        fn new(slots: usize) -> Heap {
            Heap {
                words: (0..slots).map(|_| StdAtomicU64::new(0)).collect(),
                data: (0..slots)
                    .map(|_| std::cell::UnsafeCell::new([0; 64]))
                    .collect(),
            }
        }
    }

    impl MailSlots for Heap {
        fn load(&self, slot: usize, order: Ordering) -> u64 {
            self.words[slot].load(order)
        }
        fn store(&self, slot: usize, value: u64, order: Ordering) {
            self.words[slot].store(value, order);
        }
        unsafe fn write(&self, slot: usize, bytes: &[u8]) {
            // SAFETY: one thread in these tests.
            unsafe { (&mut *self.data[slot].get())[..bytes.len()].copy_from_slice(bytes) };
        }
        unsafe fn read(&self, slot: usize, into: &mut [u8]) {
            // SAFETY: one thread in these tests.
            into.copy_from_slice(unsafe { &(&*self.data[slot].get())[..into.len()] });
        }
    }

    #[test]
    fn a_record_goes_through_and_an_exchange_sends_after_the_one_before_completed() {
        let geometry = Geometry::of(2);
        assert_eq!(geometry.steps, 2);
        let heap = Heap::new(geometry.slots());
        let slot = geometry.slot(0, 1, 0);
        let mut into = [0u8; 64];
        assert_eq!(take(&heap, slot, 0, &mut into), None);
        assert!(post(&heap, slot, 0, 0, b"first"));
        assert_eq!(take(&heap, slot, 0, &mut into), Some(5));
        assert_eq!(&into[..5], b"first");
        // Exchange 1 waits until exchange 0 has completed here.
        let next = geometry.slot(0, 1, 1);
        assert_ne!(next, slot);
        assert!(!post(&heap, next, 1, 0, b"second"));
        assert!(post(&heap, next, 1, 1, b"second"));
        // Exchange 2 reuses exchange 0's slot; a reader of exchange 0 finds nothing more.
        assert_eq!(geometry.slot(0, 1, 2), slot);
        assert!(post(&heap, slot, 2, 2, b"third"));
        assert_eq!(take(&heap, slot, 0, &mut into), None);
        assert_eq!(take(&heap, slot, 2, &mut into), Some(5));
        assert_eq!(&into[..5], b"third");
    }

    // SAFETY: the words are atomics; every access to a slot's data is ordered by the protocol
    // under test (`post`, `take`), which is what the stress test below checks.
    unsafe impl Sync for Heap {}

    /// One exchange of one thread (standing for a process) in the stress test.
    struct Exchange {
        number: u64,
        steps: Doubling,
        record: u64,
        to_post: Option<usize>,
        to_take: Option<usize>,
        incoming: [u8; 64],
    }

    impl Exchange {
        fn start(geometry: Geometry, me: usize, number: u64) -> Exchange {
            let mut exchange = Exchange {
                number,
                steps: Doubling::new(me, geometry.processes),
                record: (me as u64 + 1) * (number + 1),
                to_post: None,
                to_take: None,
                incoming: [0; 64],
            };
            exchange.begin(geometry, me);
            exchange
        }

        fn begin(&mut self, geometry: Geometry, me: usize) {
            let (send, recv) = self.steps.moves();
            self.to_post = send.map(|(_, step)| geometry.slot(me, step, self.number));
            self.to_take = recv.map(|(from, step)| geometry.slot(from, step, self.number));
        }

        /// Polls once; whether the exchange is over (then `completed` counts it).
        fn test(
            &mut self,
            heap: &Heap,
            geometry: Geometry,
            me: usize,
            completed: &mut u64,
        ) -> bool {
            use crate::hybrid::doubling::{Received, Step};
            loop {
                if self.steps.step() == Step::Done {
                    return true;
                }
                if let Some(slot) = self.to_post {
                    if post(
                        heap,
                        slot,
                        self.number,
                        *completed,
                        &self.record.to_ne_bytes(),
                    ) {
                        self.to_post = None;
                    }
                }
                if let Some(slot) = self.to_take {
                    if take(heap, slot, self.number, &mut self.incoming[..8]).is_some() {
                        self.to_take = None;
                    }
                }
                if self.to_post.is_some() || self.to_take.is_some() {
                    return false;
                }
                let mut theirs = [0u8; 8];
                theirs.copy_from_slice(&self.incoming[..8]);
                let theirs = u64::from_ne_bytes(theirs);
                match self.steps.finish_step() {
                    Received::Merge => self.record += theirs,
                    Received::Replace => self.record = theirs,
                    Received::Nothing => {}
                }
                self.begin(geometry, me);
                if self.steps.step() == Step::Done {
                    *completed = self.number + 1;
                }
            }
        }
    }

    /// 64 and 37 threads (a power of two, and one with the fold-in) on however few cores,
    /// each standing for a process, through 150 exchanges; every seventh keeps two exchanges
    /// in flight, as the engine may. Every result must be every contribution, once. This runs
    /// the protocol at a scale loom cannot; the loom model (`tests/loom_mailbox.rs`) is what
    /// catches a sender that skips `post`'s rule (it fails at once; this test, on 2 cores,
    /// passed three runs without the rule).
    #[test]
    fn stress_many_processes_on_few_cores() {
        const EXCHANGES: u64 = 150;
        for processes in [64usize, 37] {
            let geometry = Geometry::of(processes);
            let heap = Heap::new(geometry.slots());
            let all = (processes * (processes + 1) / 2) as u64;
            std::thread::scope(|s| {
                for me in 0..processes {
                    let heap = &heap;
                    s.spawn(move || {
                        let depth = if me % 7 == 0 { 2 } else { 1 };
                        let mut open = std::collections::VecDeque::new();
                        let (mut next, mut completed) = (0u64, 0u64);
                        while next < EXCHANGES || !open.is_empty() {
                            while open.len() < depth && next < EXCHANGES {
                                open.push_back(Exchange::start(geometry, me, next));
                                next += 1;
                            }
                            let mut progressed = false;
                            for exchange in open.iter_mut() {
                                progressed |= exchange.test(heap, geometry, me, &mut completed);
                            }
                            while open.front().is_some_and(|e| e.steps.step() == Step::Done) {
                                let done = open.pop_front().expect("checked above");
                                assert_eq!(
                                    done.record,
                                    all * (done.number + 1),
                                    "{processes}: {me}"
                                );
                            }
                            if !progressed {
                                std::thread::yield_now();
                            }
                        }
                        assert_eq!(completed, EXCHANGES);
                    });
                }
            });
        }
    }

    #[test]
    fn geometry_gives_every_slot_once() {
        for processes in 1..=9 {
            let geometry = Geometry::of(processes);
            let mut seen = vec![false; geometry.slots()];
            for owner in 0..processes {
                for step in 0..geometry.steps {
                    for exchange in 0..RING {
                        let slot = geometry.slot(owner, step, exchange);
                        assert!(!seen[slot], "slot {slot} twice");
                        seen[slot] = true;
                    }
                }
            }
            assert!(seen.iter().all(|s| *s));
        }
    }
}
