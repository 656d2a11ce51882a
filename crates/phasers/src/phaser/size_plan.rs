//! How a registration waits, for the phaser's size: its spin plan, and which word it spins on.

use std::time::Duration;

use super::core::Core;
use crate::algorithm::Algorithm;
use crate::wait::SpinPlan;

/// The round trip from which releasing through the root word pays: the last arrival moving the
/// root straight to the next phase (see `Tree::rearm_at_once`), and waiters spinning on the root
/// rather than on the release word. A waiter on the root takes the line its peers' 16-byte
/// compare-and-swaps need, where a waiter on the release word takes only the line the completer
/// writes after them: it saves that second transfer, about half a round trip per phase, and
/// costs a fixed amount of contention and work on the root. Measured on the 2-core AMD EPYC VM
/// (2026-11-30, a pinned scratch loop of 2-thread `next()`, interleaved builds, in the two
/// placements its host alternates between): at a 50-60 ns round trip the two together cost
/// 15-20 ns per phase, at 200-230 ns they saved 50-70 ns, so the two cross near 90 ns. It adapts
/// through the round trip, measured on each machine at run time (or set by `PHASERS_FLOORS`); a
/// CPU whose 16-byte compare-and-swap costs far more or less than this one's would move the
/// crossover itself.
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

/// A registration's waiting rule for a phaser of `registrations` registrations, recomputed only
/// when the size changes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SizePlan {
    pub(crate) registrations: usize,
    pub(crate) plan: SpinPlan,
    /// Waits spin on the root word rather than on the release word (see
    /// `Registration::wait_for_release`).
    pub(crate) spins_on_root: bool,
}

impl SizePlan {
    pub(crate) fn new(core: &Core, registrations: usize) -> Self {
        SizePlan {
            registrations,
            plan: core.tuning.plan(registrations),
            spins_on_root: spins_on_root(
                core.tree.shape().tiers(),
                Algorithm::Auto.resolve(registrations),
            ),
        }
    }
}

/// Whether the waiters of a phaser of `tiers` tiers spin on its root word, where it releases
/// through it, when the library's barrier for as many parties would be `barrier`: on a flat
/// phaser, where that barrier is the counting one, whose waiters spin on the word every arrival
/// changes. That choice is `Algorithm::Auto`'s, measured on this machine by a tuning profile
/// where there is one, else the built-in cost model; both weigh the same trade: one line that
/// every arrival and every waiter touches, against a release line apart that the waiters read
/// once it changes. A tree's root is changed by the completers of its children, a few tasks
/// among many, so its waiters keep to the release word.
fn spins_on_root(tiers: usize, barrier: Algorithm) -> bool {
    tiers == 1 && barrier == Algorithm::Counting
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::barrier::builtin_choice;

    /// On simulated machines of 2 to 256 cores, by the built-in rule: a flat phaser's waiters spin
    /// on the root with one or two registrations, and whenever registrations outnumber cores
    /// (their waits then yield and park, so no core spins on the line its arrivals need); between
    /// those, and on any tree, they spin on the release word.
    #[test]
    fn flat_phasers_spin_on_the_root_where_auto_counts() {
        for cores in [2, 16, 64, 256] {
            for registrations in [1, 2, 3, 8, 16, 64, 256, 1024] {
                let barrier = builtin_choice(registrations, cores);
                let expected = registrations <= 2 || registrations > cores;
                assert_eq!(
                    spins_on_root(1, barrier),
                    expected,
                    "{registrations} registrations on {cores} cores: {barrier:?}"
                );
                assert!(!spins_on_root(2, barrier));
            }
        }
    }

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
