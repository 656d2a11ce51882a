//! Loom models of the envelope's mailboxes (`src/hybrid/mailbox.rs`): 2 or 3 processes of one
//! node, each on its own loom thread, exchanging records through several exchanges by the real
//! steps of recursive doubling (`src/hybrid/doubling.rs`, the fold-in of a third process
//! included) and the real `post` and `take`, over loom atomics and cells.
//!
//! A record is one `u64`: process `p`'s contribution to exchange `e` is `(p + 1) << (8 * e)`,
//! merged by addition, so each exchange's result says whether every contribution arrived once.
//! The slots' data are loom cells: loom fails the model if a read of a record is not ordered
//! after its write, or if a sender rewrites a slot its reader may still be reading. One process
//! starts all its exchanges at once and polls them in turn, as the engine may hold two calls in
//! flight (an `ibarrier` nobody waits for yet, then a `barrier`): its later exchanges must wait
//! to send until the earlier ones have completed, and must not take their places.
//!
//! Run with `scripts/loom.sh` (or `scripts/loom.sh loom_mailbox`).
#![cfg(phasers_loom)]

mod loom_support;

use std::sync::atomic::Ordering;

use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicU64;
use loom::sync::Arc;
use loom::thread;
use loom_support::model_bounded;
use phasers_mpi::loom_api::{post, take, Doubling, Geometry, MailSlots, Received, Step};

/// The node's mailboxes, and each process's count of completed exchanges.
struct Node {
    geometry: Geometry,
    sequence: Box<[AtomicU64]>,
    data: Box<[UnsafeCell<[u8; 8]>]>,
    /// Written and read only by its own process (as `Mailboxes::completed`), shared here only
    /// because the node is.
    completed: Box<[AtomicU64]>,
}

// SAFETY: the data are loom cells: loom's race checker fails the model on any access that is not
// ordered by happens-before, which is what the model checks. The rest is Sync already.
unsafe impl Sync for Node {}
// SAFETY: as above; the values are plain bytes.
unsafe impl Send for Node {}

impl MailSlots for Node {
    fn load(&self, slot: usize, order: Ordering) -> u64 {
        self.sequence[slot].load(order)
    }

    fn store(&self, slot: usize, value: u64, order: Ordering) {
        self.sequence[slot].store(value, order);
    }

    unsafe fn write(&self, slot: usize, bytes: &[u8]) {
        // SAFETY: loom checks the access against every other access to the cell.
        self.data[slot]
            .with_mut(|cell| unsafe { (&mut *cell)[..bytes.len()].copy_from_slice(bytes) });
    }

    unsafe fn read(&self, slot: usize, into: &mut [u8]) {
        // SAFETY: loom checks the access against every other access to the cell.
        self.data[slot].with(|cell| into.copy_from_slice(unsafe { &(&*cell)[..into.len()] }));
    }
}

/// One exchange of one process in progress.
struct Exchange {
    number: u64,
    steps: Doubling,
    record: u64,
    to_post: Option<usize>,
    to_take: Option<usize>,
    incoming: [u8; 8],
}

impl Exchange {
    fn start(node: &Node, me: usize, number: u64) -> Exchange {
        let mut exchange = Exchange {
            number,
            steps: Doubling::new(me, node.geometry.processes),
            record: (me as u64 + 1) << (8 * number),
            to_post: None,
            to_take: None,
            incoming: [0; 8],
        };
        exchange.begin(node, me);
        exchange
    }

    fn begin(&mut self, node: &Node, me: usize) {
        let (send, recv) = self.steps.moves();
        let geometry = node.geometry;
        self.to_post = send.map(|(_, step)| geometry.slot(me, step, self.number));
        self.to_take = recv.map(|(from, step)| geometry.slot(from, step, self.number));
    }

    /// Polls once, as `RecordExchange::test` does; whether the exchange is over.
    fn test(&mut self, node: &Node, me: usize) -> bool {
        loop {
            if self.steps.step() == Step::Done {
                return true;
            }
            if let Some(slot) = self.to_post {
                let completed = node.completed[me].load(Ordering::Acquire);
                if post(
                    node,
                    slot,
                    self.number,
                    completed,
                    &self.record.to_ne_bytes(),
                ) {
                    self.to_post = None;
                }
            }
            if let Some(slot) = self.to_take {
                if let Some(len) = take(node, slot, self.number, &mut self.incoming) {
                    assert_eq!(len, 8);
                    self.to_take = None;
                }
            }
            if self.to_post.is_some() || self.to_take.is_some() {
                return false;
            }
            let theirs = u64::from_ne_bytes(self.incoming);
            match self.steps.finish_step() {
                Received::Merge => self.record += theirs,
                Received::Replace => self.record = theirs,
                Received::Nothing => {}
            }
            self.begin(node, me);
            if self.steps.step() == Step::Done {
                node.completed[me].store(self.number + 1, Ordering::Release);
            }
        }
    }
}

/// Every process's contributions to exchange `number`, merged.
fn expected(processes: usize, number: u64) -> u64 {
    (1..=processes as u64).sum::<u64>() << (8 * number)
}

/// Process `me`'s exchanges: one after the other, or all started at once (`overlapping`) and
/// polled in turn, with a yield between rounds of polls (the real wait's spin, under loom a
/// point where another thread may run).
fn process(node: &Node, me: usize, exchanges: u64, overlapping: bool) {
    let processes = node.geometry.processes;
    if overlapping {
        let mut open: Vec<Exchange> = (0..exchanges)
            .map(|number| Exchange::start(node, me, number))
            .collect();
        while !open.is_empty() {
            open.retain_mut(|exchange| {
                let done = exchange.test(node, me);
                if done {
                    assert_eq!(exchange.record, expected(processes, exchange.number));
                }
                !done
            });
            thread::yield_now();
        }
        return;
    }
    for number in 0..exchanges {
        let mut exchange = Exchange::start(node, me, number);
        while !exchange.test(node, me) {
            thread::yield_now();
        }
        assert_eq!(exchange.record, expected(processes, number));
    }
}

fn node_model(processes: usize, exchanges: u64, max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        let geometry = Geometry::of(processes);
        let node = Arc::new(Node {
            geometry,
            sequence: (0..geometry.slots()).map(|_| AtomicU64::new(0)).collect(),
            data: (0..geometry.slots())
                .map(|_| UnsafeCell::new([0; 8]))
                .collect(),
            completed: (0..processes).map(|_| AtomicU64::new(0)).collect(),
        });
        let others: Vec<_> = (1..processes)
            .map(|me| {
                let node = Arc::clone(&node);
                thread::spawn(move || process(&node, me, exchanges, false))
            })
            .collect();
        process(&node, 0, exchanges, true);
        for other in others {
            other.join().expect("a process's thread panicked");
        }
        for me in 0..processes {
            assert_eq!(node.completed[me].load(Ordering::Relaxed), exchanges);
        }
    });
}

// The bounds: every wait spins (polls and yields), and each yield is a point where loom may
// switch threads, so the search grows fast with exchanges and processes. 2 processes explore 4
// exchanges (two reuses of every slot) at 2 preemptions in seconds. 3 processes spin three ways:
// at 1 preemption and 3 exchanges the search did not finish in 10 minutes, so that model
// explores only voluntary switches (0 preemptions, every order in which the yields hand the
// threads over), through 3 exchanges, as `loom_node_shm.rs` does for 3 threads.

#[test]
fn two_processes() {
    node_model(2, 4, 2);
}

#[test]
fn three_processes_fold_in() {
    node_model(3, 3, 0);
}
