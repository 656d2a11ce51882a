//! Centralized sense-reversing barrier (seed 001, §1.1.1).

use crossbeam_utils::CachePadded;

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::episode::Episode;
use crate::error::Error;
use crate::primitive::{AtomicUsize, Ordering};
use crate::wait::{Signal, Stop};
use crate::Algorithm;

/// Centralized sense-reversing barrier (seed 001, §1.1.1).
///
/// Arrivals decrement one shared counter; the last arrival re-arms it for the next episode and
/// flips the release word, on which everyone else waits. The release word holds the number of
/// completed episodes rather than a single sense bit: its low bit *is* the sense, and the whole count
/// lets a participant resuming after a timeout tell its own episode's release from a later one.
///
/// The last arrival re-arms the counter before it releases anyone: a store to a line it already
/// holds exclusively after its own decrement, so the re-arm costs no coherence miss.
///
/// Leaving is supported: a leaver lowers the party count, then arrives without waiting.
///
/// # Memory ordering
///
/// Arrivals decrement `remaining` with `AcqRel`, so the last arrival acquires every earlier
/// arrival's writes (an RMW chain is one release sequence). It re-arms `remaining` (`Relaxed`: the
/// next arrivals read it only after acquiring the release) and publishes the release word with
/// `Release`; waiters read it with `Acquire`. A leaver lowers `parties` before its own `AcqRel`
/// decrement, so the leader that re-arms reads the lowered count.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::barrier::SenseReversing;
/// use phasers::Barrier;
///
/// let barrier = Barrier::builder(3).build_static::<SenseReversing>()?;
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
pub struct SenseReversing {
    arrival: CachePadded<Arrival>,
    release: CachePadded<Signal>,
}

// The leader reads `parties` right after its decrement of `remaining`, so they share a line.
struct Arrival {
    remaining: AtomicUsize,
    parties: AtomicUsize,
}

/// A participant's state: whether it has arrived and waits for the release.
#[derive(Debug, Default)]
pub struct SenseLocal {
    arrived: bool,
}

impl SenseReversing {
    /// Counts this participant's arrival; the last one re-arms, runs the action and releases.
    /// Returns whether this participant was the last.
    fn arrive(&self, episode: &Episode<'_>) -> bool {
        if self.arrival.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return false;
        }
        let parties = self.arrival.parties.load(Ordering::Relaxed);
        self.arrival.remaining.store(parties, Ordering::Relaxed);
        episode.complete_and_publish(&self.release, episode.number() + 1);
        true
    }
}

impl AlgorithmImpl for SenseReversing {
    type Local = SenseLocal;

    fn build(parties: usize, _: &Params) -> Self {
        SenseReversing {
            arrival: CachePadded::new(Arrival {
                remaining: AtomicUsize::new(parties),
                parties: AtomicUsize::new(parties),
            }),
            release: CachePadded::new(Signal::new(0)),
        }
    }

    fn kind(&self) -> Algorithm {
        Algorithm::SenseReversing
    }

    fn local(&self, _rank: usize) -> SenseLocal {
        SenseLocal::default()
    }

    #[inline]
    fn wait(&self, local: &mut SenseLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        if !local.arrived {
            if self.arrive(episode) {
                return Ok(true);
            }
            local.arrived = true;
        }
        let number = episode.number();
        episode.wait_until(&self.release, |completed| completed > number)?;
        local.arrived = false;
        Ok(false)
    }

    fn leave(&self, _: &mut SenseLocal, episode: &Episode<'_>) -> Result<(), Error> {
        self.arrival.parties.fetch_sub(1, Ordering::Relaxed);
        self.arrive(episode);
        Ok(())
    }

    fn wake_all(&self) {
        self.release.wake_all();
    }
}
