//! `Auto`: which algorithm a call runs, from the length, the party count and the arrival spread.
//!
//! Every participant of a call must run the same algorithm, yet the spread is only known once a
//! call completed, and lengths may (wrongly) differ between participants. So the choice for call
//! `e` is made by whoever completes call `e - 3`, from that call's length and the spread measured
//! so far, and stored in one of four slots; everyone entering call `e` has waited for call `e - 2`
//! to complete, so the slot is written, and it is not rewritten before everyone has read it (the
//! next write is for call `e + 4`, made after call `e + 1` completed). The first three calls run
//! [`Linear`](ReduceAlgorithm::Linear), which is never far off. The choice thus follows a program
//! whose calls keep a similar length and spread, with a lag of three calls. The spread is sampled
//! at calls 1, 9, 17, ..., and counts from its second sample on (see `AutoState::spread`), so
//! calls up to the twelfth choose as if arrivals were together.

use std::time::Duration;

use super::algorithm::ReduceAlgorithm;
use crate::primitive::{AtomicU64, AtomicUsize, Ordering};
use crate::topology::is_oversubscribed;

/// The spread is sampled once every this many calls: the completer reads every participant's
/// arrival stamp, a cache miss each.
pub(crate) const SAMPLE_EVERY: u64 = 8;
/// The spread `Auto` decides from is the median of this many latest samples. Samples are
/// heavy-tailed: one preempted or late-woken participant makes a sample of hundreds of
/// microseconds in a program whose arrivals are otherwise together. A moving average carried one
/// such sample past the `spread >= length` threshold for dozens of calls (2-5% of the calls of
/// `phasers bench reduce --spread none` at 64k floats on the 2-core Xeon VM ran `DynamicPairs`,
/// at 3x `Linear`'s time); with the median, it takes two outliers out of three, while a real
/// change of spread is followed within two samples.
const SPREAD_WINDOW: usize = 3;
/// Below this spread, arrivals are "together": a pair step of a small array takes about as long.
const LOW_SPREAD: Duration = Duration::from_micros(5);
/// Arrays up to this many elements: the static tree's pairs beat the linear algorithm's all-to-all
/// reads when arrivals are together (the seed's "small array" column).
const SMALL_ARRAY: usize = 5_000;
/// Arrays up to this many elements: dynamic pairs still win under oversubscription; above it the
/// linear algorithm's bandwidth does (the seed's "medium" column).
const MEDIUM_ARRAY: usize = 24_000;

pub(crate) struct AutoState {
    choice: [AtomicUsize; 4],
    /// The latest spread samples, in ns, written round-robin.
    samples: [AtomicU64; SPREAD_WINDOW],
    /// How many samples were taken so far.
    taken: AtomicU64,
}

impl AutoState {
    pub(crate) fn new() -> Self {
        AutoState {
            choice: std::array::from_fn(|_| AtomicUsize::new(0)),
            samples: std::array::from_fn(|_| AtomicU64::new(0)),
            taken: AtomicU64::new(0),
        }
    }

    /// The algorithm chosen for call `episode`, or `None` before any choice was made.
    pub(crate) fn choice_for(&self, episode: u64) -> Option<ReduceAlgorithm> {
        let code = self.choice[(episode % 4) as usize].load(Ordering::Acquire);
        (code != 0).then(|| ReduceAlgorithm::from_code(code as u8))
    }

    /// The arrival spread measured so far: the median of the latest samples, the lower one of
    /// two, and zero (arrivals together) before two. A single sample never decides: the first
    /// ones follow the threads' start, and one of them alone chose `DynamicPairs` for calls 3 to
    /// 10 of 2 in 100 fresh 2-thread groups reducing 20k floats on the Xeon VM, and for calls 4
    /// to 11 of 1 in 200 when sampling began at the second call; all their later samples were
    /// under a microsecond.
    pub(crate) fn spread(&self) -> Duration {
        let taken = (self.taken.load(Ordering::Relaxed) as usize).min(SPREAD_WINDOW);
        if taken < 2 {
            return Duration::ZERO;
        }
        let mut latest = [0u64; SPREAD_WINDOW];
        for (kept, sample) in latest.iter_mut().zip(&self.samples).take(taken) {
            *kept = sample.load(Ordering::Relaxed);
        }
        let latest = &mut latest[..taken];
        latest.sort_unstable();
        let median = latest.get(taken.saturating_sub(1) / 2).copied();
        Duration::from_nanos(median.unwrap_or(0))
    }

    /// Adds one sampled spread, replacing the oldest once the window is full.
    pub(crate) fn add_sample(&self, sample: u64) {
        // Completers of successive calls run one after another (call e + 1 completes only
        // after its completer arrived, past this bookkeeping), so load-then-store is exact.
        let taken = self.taken.load(Ordering::Relaxed);
        self.samples[(taken % SPREAD_WINDOW as u64) as usize].store(sample, Ordering::Relaxed);
        self.taken.store(taken + 1, Ordering::Relaxed);
    }

    /// Stores the choice for call `episode`; see the module docs for why nobody reads that slot
    /// meanwhile.
    pub(crate) fn choose(&self, episode: u64, chosen: ReduceAlgorithm) {
        self.choice[(episode % 4) as usize].store(chosen.code() as usize, Ordering::Release);
    }
}

impl ReduceAlgorithm {
    /// The algorithm a call runs: `self` unless it is `Auto` (or a dynamic algorithm while
    /// `deterministic` asks for a fixed order), else the built-in rule below, from the array's
    /// length, the party count, the cores this process may use, and the arrival spread (the time
    /// between the first and the last participant's arrival: the median of the last three
    /// samples, one taken every eighth call from the second on).
    ///
    /// | condition (first that holds) | picks | why (seed 003's tables, and BENCHMARKS.md) |
    /// |---|---|---|
    /// | one participant | `Linear` | nothing to combine |
    /// | `deterministic` | `StaticTree` | one fixed order for every call, whatever the length (switching between `Linear` and `StaticTree` would change the bits) |
    /// | spread under 5 µs | `StaticTree` up to 5,000 elements, else `Linear` | arrivals together: pairs avoid the all-to-all contention on small arrays; the linear algorithm streams large ones at full bandwidth |
    /// | more participants than cores, up to 24,000 elements | `DynamicPairs` | threads that wait for a core arrive late anyway; pairs form as they run, and nobody waits for a descheduled neighbour |
    /// | spread (in ns) at least the length (in elements) | `DynamicPairs` | a pair step takes about a nanosecond per element, so most of the tree is reduced before the last arrival, which then costs about one step |
    /// | otherwise | `Linear` | the array is too long for the spread to hide the tree's steps |
    ///
    /// ```
    /// use phasers::ReduceAlgorithm;
    /// use std::time::Duration;
    ///
    /// let spread = Duration::from_micros(100);
    /// assert_eq!(ReduceAlgorithm::Auto.resolve(1000, 2, spread, false), ReduceAlgorithm::DynamicPairs);
    /// assert_eq!(ReduceAlgorithm::Auto.resolve(1000, 2, spread, true), ReduceAlgorithm::StaticTree);
    /// assert_eq!(ReduceAlgorithm::Auto.resolve(1 << 20, 2, spread, false), ReduceAlgorithm::Linear);
    /// assert_eq!(ReduceAlgorithm::Auto.resolve(1000, 2, Duration::ZERO, false), ReduceAlgorithm::StaticTree);
    /// assert_eq!(ReduceAlgorithm::DynamicGroup.resolve(10, 8, spread, true), ReduceAlgorithm::StaticTree);
    /// ```
    pub fn resolve(
        self,
        len: usize,
        parties: usize,
        spread: Duration,
        deterministic: bool,
    ) -> ReduceAlgorithm {
        let bounded = |large: bool| {
            if large {
                ReduceAlgorithm::Linear
            } else {
                ReduceAlgorithm::StaticTree
            }
        };
        let spread_ns = spread.as_nanos();
        match self {
            ReduceAlgorithm::Auto if parties <= 1 => ReduceAlgorithm::Linear,
            ReduceAlgorithm::Auto if deterministic => ReduceAlgorithm::StaticTree,
            ReduceAlgorithm::Auto if spread < LOW_SPREAD => bounded(len > SMALL_ARRAY),
            ReduceAlgorithm::Auto if is_oversubscribed(parties) && len <= MEDIUM_ARRAY => {
                ReduceAlgorithm::DynamicPairs
            }
            ReduceAlgorithm::Auto if spread_ns >= len as u128 => ReduceAlgorithm::DynamicPairs,
            ReduceAlgorithm::Auto => ReduceAlgorithm::Linear,
            chosen if deterministic && !chosen.is_fixed_order() => ReduceAlgorithm::StaticTree,
            chosen => chosen,
        }
    }
}

#[cfg(all(test, not(phasers_loom)))]
mod tests {
    use super::*;

    fn after(samples: &[u64]) -> Duration {
        let state = AutoState::new();
        samples.iter().for_each(|&sample| state.add_sample(sample));
        state.spread()
    }

    /// A preempted participant's sample among together arrivals does not flip a 64k-float call
    /// to `DynamicPairs` (the moving average it replaces did, for dozens of calls); a spread that
    /// really grew is followed from its second sample.
    #[test]
    fn one_outlier_does_not_move_the_spread_but_a_lasting_change_does() {
        let (together, preempted) = (200, 900_000);
        assert_eq!(after(&[]), Duration::ZERO);
        assert_eq!(after(&[preempted]), Duration::ZERO);
        assert_eq!(
            after(&[together, preempted]),
            Duration::from_nanos(together)
        );
        let outlier = after(&[together, together, preempted, together]);
        assert_eq!(outlier, Duration::from_nanos(together));
        let rule = |spread| ReduceAlgorithm::Auto.resolve(65_536, 4, spread, false);
        assert_eq!(rule(outlier), ReduceAlgorithm::Linear);
        let grown = after(&[together, together, preempted, preempted]);
        assert_eq!(grown, Duration::from_nanos(preempted));
        assert_eq!(rule(grown), ReduceAlgorithm::DynamicPairs);
    }
}
