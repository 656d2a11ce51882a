//! Two-generation counting barrier (seed 002, the software side of its hardware barrier).

use crossbeam_utils::CachePadded;

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::episode::Episode;
use crate::error::Error;
use crate::primitive::{AtomicUsize, Ordering};
use crate::wait::{Signal, Stop};
use crate::Algorithm;

const TAG_SHIFT: u32 = 32;
const TAG_MASK: u64 = (1 << 31) - 1;
const COUNT_MASK: u64 = (1 << TAG_SHIFT) - 1;

fn armed(episode: u64, parties: usize) -> u64 {
    ((episode & TAG_MASK) << TAG_SHIFT) | parties as u64
}

fn tag(word: u64) -> u64 {
    word >> TAG_SHIFT
}

/// Two-generation counting barrier (seed 002, the software side of its hardware barrier).
///
/// Each episode counts arrivals down on one of two counters, alternating, and that same counter is
/// the word everyone waits on: a participant touches one line per episode. The counter of episode
/// `e` is tagged with `e`; the last arrival replaces the tag, which is the release. The other counter
/// is re-armed for episode `e + 1` by the leader of `e`, at a moment when every waiter of `e - 1` (its
/// previous user) has provably left it, since all of them have arrived at `e`. That is why two
/// counters are needed: with one, re-arming would race with the departure of slow waiters.
///
/// # Word layout
///
/// | bits | meaning |
/// |---|---|
/// | 32..=62 | tag: the episode the counter is armed for, modulo 2^31 |
/// | 0..=31 | arrivals still expected |
///
/// Leaving is supported: a leaver lowers the party count before its arrival, so the leader re-arms
/// the next counter with the lowered count.
///
/// # Memory ordering
///
/// Arrivals decrement with `AcqRel`, so the last one acquires every earlier arrival's writes; it
/// re-arms the other counter with a `Release` store (nobody waits on it then, so no wake can be
/// owed) and publishes the new tag with a `Release` swap; waiters read the tag with `Acquire`. The
/// participants of `number + 1` first acquire the release of `number`, which the re-arm precedes
/// in the leader's program order, so they see the re-armed count.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::barrier::Counting;
/// use phasers::Barrier;
///
/// let barrier = Barrier::builder(3).build_static::<Counting>()?;
/// let leaders = AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for mut p in barrier.participants() {
///         let leaders = &leaders;
///         s.spawn(move || {
///             for _ in 0..50 {
///                 if p.wait().unwrap().is_leader() {
///                     leaders.fetch_add(1, Ordering::Relaxed);
///                 }
///             }
///         });
///     }
/// });
/// assert_eq!(leaders.into_inner(), 50); // exactly one leader per episode
/// # Ok::<(), phasers::Error>(())
/// ```
pub struct Counting {
    counters: [CachePadded<Signal>; 2],
    parties: CachePadded<AtomicUsize>,
}

/// A participant's state: whether it has arrived and waits for the release.
#[derive(Debug, Default)]
pub struct CountingLocal {
    arrived: bool,
}

impl Counting {
    fn counter(&self, episode: u64) -> &Signal {
        &self.counters[(episode & 1) as usize]
    }

    /// Counts this participant's arrival; the last one re-arms the other counter, runs the action
    /// and releases. Returns whether this participant was the last.
    ///
    /// Inlined, as the rest of the wait is: out of line, the call would take the episode's
    /// address and so make the wait store it before the `fetch_sub` (see `episode.rs`).
    #[inline(always)]
    fn arrive(&self, episode: &Episode<'_>) -> bool {
        let number = episode.number();
        let before = self.counter(number).fetch_sub_quiet(1);
        debug_assert_eq!(
            tag(before),
            number & TAG_MASK,
            "arrival on a counter armed for another episode"
        );
        if before & COUNT_MASK != 1 {
            return false;
        }
        let parties = self.parties.load(Ordering::Relaxed);
        // Every participant has arrived at `number`, so none still waits on the other counter,
        // which `number - 1` used: a plain store re-arms it, overlapping its line's transfer with
        // the release below.
        self.counter(number + 1).rearm(armed(number + 1, parties));
        // Tag `number + 2`, count 0: not armed yet; the leader of `number + 1` arms it.
        episode.complete_and_publish(self.counter(number), armed(number + 2, 0));
        true
    }
}

impl AlgorithmImpl for Counting {
    type Local = CountingLocal;

    fn build(parties: usize, _: &Params) -> Self {
        Counting {
            counters: [
                CachePadded::new(Signal::new(armed(0, parties))),
                CachePadded::new(Signal::new(armed(1, parties))),
            ],
            parties: CachePadded::new(AtomicUsize::new(parties)),
        }
    }

    fn kind(&self) -> Algorithm {
        Algorithm::Counting
    }

    fn local(&self, _rank: usize) -> CountingLocal {
        CountingLocal::default()
    }

    // Always inlined, arrival included: `Auto`'s pick at 1-2 threads, where a call that takes the
    // episode's address makes the wait store it before the arrival (see `episode.rs`); the slow
    // path is out of line.
    #[inline(always)]
    fn wait(&self, local: &mut CountingLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        if !local.arrived {
            if self.arrive(episode) {
                return Ok(true);
            }
            local.arrived = true;
        }
        let mine = episode.number() & TAG_MASK;
        episode.wait_until(self.counter(episode.number()), |word| tag(word) != mine)?;
        local.arrived = false;
        Ok(false)
    }

    fn leave(&self, _: &mut CountingLocal, episode: &Episode<'_>) -> Result<(), Error> {
        self.parties.fetch_sub(1, Ordering::Relaxed);
        self.arrive(episode);
        Ok(())
    }

    fn wake_all(&self) {
        self.counters.iter().for_each(|counter| counter.wake_all());
    }
}
