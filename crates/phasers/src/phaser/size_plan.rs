//! How a registration waits, for the phaser's size: its spin plan, and which word it spins on.

use super::core::Core;
use crate::algorithm::Algorithm;
use crate::wait::SpinPlan;

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
}
