//! When a phaser releases through its root word: the last arrival re-arming the root in its own
//! compare-and-swap, and waiters spinning on the root (see `Tree::rearm_at_once` and
//! `Registration::wait_for_release`).

use std::time::Duration;

/// The round trip from which releasing through the root word pays: the last arrival moving the
/// root straight to the next phase (see `Tree::rearm_at_once`), and waiters spinning on the root
/// rather than on the release word. A waiter on the root takes the line its peers'
/// compare-and-swaps need, where a waiter on the release word takes only the line the completer
/// writes after them: it saves that second transfer, about half a round trip per phase, and
/// costs a fixed amount of contention and work on the root. Measured on the 2-core AMD EPYC VM
/// (2026-11-30, a pinned scratch loop of 2-thread `next()`, interleaved builds, in the two
/// placements its host alternates between): at a 50-60 ns round trip the two together cost
/// 15-20 ns per phase, at 200-230 ns they saved 50-70 ns, so the two cross near 90 ns. It adapts
/// through the round trip, measured on each machine at run time (or set by `PHASERS_FLOORS`); a
/// CPU whose compare-and-swap costs far more or less than this one's would move the crossover
/// itself. The crossover was measured with the 16-byte word of the time (`cmpxchg16b`); the
/// 8-byte word since then makes the root's work cheaper, which can only lower it, so where cores
/// are close (below 90 ns) the release word may now be the slower choice: to be measured again
/// on the EPYC VM.
const ROOT_RELEASE_FROM_ROUND_TRIP: Duration = Duration::from_nanos(90);

/// Whether a phaser releases through its root word (see [`ROOT_RELEASE_FROM_ROUND_TRIP`]) on a
/// machine whose cache-line round trip takes `round_trip`.
///
/// Loom's floors are fixed at a near machine's; its models take the root's path, the one with
/// more to check (the completing state still runs on trees, with accumulators and with advance
/// actions).
pub(crate) fn releases_through_root(round_trip: Duration) -> bool {
    round_trip >= ROOT_RELEASE_FROM_ROUND_TRIP || cfg!(phasers_loom)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cores far apart (an Intel Xeon's 190 ns round trip, an EPYC's 220 ns across CCXs) release
    /// through the root; close ones (an EPYC CCX's 55 ns) keep the release word (loom's models
    /// take the root's path whatever their fixed floors say).
    #[test]
    fn the_root_releases_where_cores_are_far_apart() {
        assert!(releases_through_root(Duration::from_nanos(190)));
        assert!(releases_through_root(Duration::from_nanos(220)));
        assert!(!releases_through_root(Duration::from_nanos(55)));
    }
}
