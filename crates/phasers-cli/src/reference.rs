//! The reference barrier: a hand-written centralized sense-reversing barrier.
//!
//! This is the yardstick every report divides by, not a product. It is the textbook barrier a
//! competent programmer would write in twenty lines (Mellor-Crummey and Scott's centralized
//! sense-reversing barrier), so "vs reference" says how much the library's machinery (episodes,
//! timeouts, breaking on panic, spin-then-park waiting) costs or gains over the simplest thing that
//! works. It has none of that machinery: no timeouts, no poisoning, no parking. Do not use it
//! outside this benchmark.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::yield_now;

use crossbeam_utils::CachePadded;

use phasers_cli::harness::work::{Failure, Work};

/// Spins between yields. Pure spinning collapses when threads outnumber cores (a waiter burns the
/// time slice the last arrival needs); yielding this often keeps the oversubscribed rows finite
/// while costing nothing measurable when every thread has a core.
const SPINS_PER_YIELD: u32 = 64;

/// The shared state: an arrival counter and a release word, each on its own cache line so arrivals
/// hammering the counter do not evict the line the waiters poll.
#[derive(Debug)]
pub struct ReferenceBarrier {
    parties: usize,
    count: CachePadded<AtomicUsize>,
    sense: CachePadded<AtomicBool>,
}

impl ReferenceBarrier {
    /// A barrier for `parties` threads (at least 1).
    pub fn new(parties: usize) -> Self {
        ReferenceBarrier {
            parties: parties.max(1),
            count: CachePadded::new(AtomicUsize::new(0)),
            sense: CachePadded::new(AtomicBool::new(false)),
        }
    }

    /// One handle per thread. Handles are interchangeable; each only carries its local sense.
    pub fn handles(&self) -> Vec<ReferenceHandle<'_>> {
        (0..self.parties)
            .map(|_| ReferenceHandle {
                barrier: self,
                local_sense: false,
            })
            .collect()
    }

    /// Arrives and waits for the other parties; `local_sense` is the caller's private sense.
    #[inline]
    fn wait(&self, local_sense: &mut bool) {
        // Flipping the sense each episode is what makes the barrier reusable without a second
        // counter: waiters of this episode wait for the release word to equal the new sense, so a
        // fast thread re-arriving for the next episode cannot be confused with this one.
        *local_sense = !*local_sense;
        let sense = *local_sense;
        // AcqRel: the last arrival must see every other arrival's prior writes before it releases
        // them, and each arrival publishes its own writes.
        if self.count.fetch_add(1, Ordering::AcqRel) == self.parties - 1 {
            // Nobody touches the counter until they see the new sense, so a relaxed reset ordered
            // before the Release store below is enough.
            self.count.store(0, Ordering::Relaxed);
            self.sense.store(sense, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while self.sense.load(Ordering::Acquire) != sense {
                spin_loop();
                spins = spins.wrapping_add(1);
                if spins % SPINS_PER_YIELD == 0 {
                    yield_now();
                }
            }
        }
    }
}

/// One thread's handle on a [`ReferenceBarrier`].
#[derive(Debug)]
pub struct ReferenceHandle<'a> {
    barrier: &'a ReferenceBarrier,
    local_sense: bool,
}

impl Work for ReferenceHandle<'_> {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        self.barrier.wait(&mut self.local_sense);
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn no_thread_passes_before_all_arrive() {
        const THREADS: usize = 3;
        const ROUNDS: u64 = 200;
        let barrier = ReferenceBarrier::new(THREADS);
        let arrived = AtomicU64::new(0);
        std::thread::scope(|s| {
            for mut handle in barrier.handles() {
                let arrived = &arrived;
                s.spawn(move || {
                    for round in 0..ROUNDS {
                        arrived.fetch_add(1, Ordering::Relaxed);
                        handle.iteration(round).unwrap();
                        // Everyone arrived at this round before anyone left it.
                        assert!(arrived.load(Ordering::Relaxed) >= (round + 1) * THREADS as u64);
                        handle.iteration(round).unwrap();
                    }
                });
            }
        });
        assert_eq!(arrived.load(Ordering::Relaxed), ROUNDS * THREADS as u64);
    }
}
