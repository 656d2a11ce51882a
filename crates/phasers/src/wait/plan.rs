//! The plan of a wait: how long a waiter spins and yields before it parks, and how a release
//! wakes the sleepers, derived from the machine by a pure function.
//!
//! [`SpinPlan::derive`] reads nothing but its [`PlanInputs`]: the policy, the floors, the party
//! count, the cores, the length of one pause. So the same code that plans every wait of a real
//! object also plans the waits of a simulated machine of 16 to 256 cores (see `wait::model`), and
//! a test can check what it decides on machines this project does not have.

use std::time::Duration;

use super::policy::{WaitPolicy, MAX_SPIN_ROUNDS};
use crate::tune::Floors;

/// How a waiter spends its time before it parks, and how its release wakes sleepers; fixed when
/// an object is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpinPlan {
    /// The most spin rounds before yielding; the participant's [`SpinBudget`](super::SpinBudget)
    /// adapts below it.
    pub(crate) spins: u32,
    /// The least the budget adapts down to: rounds enough to catch a release already on its way
    /// (a few round trips), or `spins` if that is less.
    pub(crate) min_spins: u32,
    /// Yields before parking.
    pub(crate) yields: u32,
    /// A wait that ends within this long after its spin phase ran out was short: a longer spin
    /// would have caught it, so the spin budget grows back (one wake, see [`Floors::wake`]).
    /// Only consulted while participants share cores (see [`SpinBudget`](super::SpinBudget)).
    pub(crate) short_wait: Duration,
    /// A yield that lasts this long or more ran another thread on the core (half a hand-off, see
    /// [`Floors::yield_handoff`]): a `sched_yield` with nobody else to run returns far sooner.
    pub(crate) handoff: Duration,
    /// Whether the participants outnumber the cores, so that yields are meant to hand the core
    /// over and spinning is paid by the threads that share it.
    pub(crate) shares_cores: bool,
    /// How a release wakes the sleepers of a word (see [`WakeFanout`]).
    pub(crate) wake: WakeFanout,
}

/// How a release wakes the threads asleep on one word.
///
/// `All`: one system call wakes every sleeper, which the kernel performs one sleeper at a time
/// (an inter-processor interrupt each, through the hypervisor on a VM), all on the releaser's
/// critical path. `Tree(f)`: the releaser wakes `f` sleepers and sets the others aside; every
/// woken sleeper wakes `f` more before it goes on, so `k` sleepers are all running after about
/// `log_f k` wakes in sequence instead of `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeFanout {
    All,
    Tree(u32),
}

impl WakeFanout {
    /// The most sleepers one wake call passes the release to, in `PHASERS_WAKE`.
    pub(crate) const MAX_FANOUT: u32 = 64;

    /// The fanout as the futex layer takes it: 0 for all at once.
    pub(crate) fn per_wake(self) -> u32 {
        match self {
            WakeFanout::All => 0,
            WakeFanout::Tree(fanout) => fanout,
        }
    }

    /// How many wakes in sequence it takes until `sleepers` sleepers all run, and how many of
    /// them each of those steps performs one after another: `(levels, per level)`. Waking all at
    /// once is one level of `sleepers` serial wakes.
    pub(crate) fn release_path(self, sleepers: usize) -> (u32, u32) {
        let sleepers = u32::try_from(sleepers).unwrap_or(u32::MAX).max(1);
        match self {
            WakeFanout::All => (1, sleepers),
            WakeFanout::Tree(fanout) => {
                let fanout = fanout.max(1);
                // Level `l` adds fanout^l sleepers to those already running.
                let (mut levels, mut awake, mut width) = (0u32, 0u64, 1u64);
                while awake < u64::from(sleepers) {
                    width = width.saturating_mul(u64::from(fanout));
                    awake = awake.saturating_add(width);
                    levels += 1;
                }
                (levels, fanout.min(sleepers))
            }
        }
    }
}

/// Everything [`SpinPlan::derive`] decides from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlanInputs {
    pub(crate) policy: WaitPolicy,
    pub(crate) floors: Floors,
    /// The participants that may all wait at once.
    pub(crate) participants: usize,
    /// The cores they may run on ([`crate::available_cores`] for real objects).
    pub(crate) cores: usize,
    /// One spin round: a load and one `spin_loop` pause.
    pub(crate) pause: Duration,
    /// `PHASERS_SPIN`: the spin rounds, replacing the derived budget.
    pub(crate) spin_override: Option<u32>,
    /// `PHASERS_WAKE`: the release's wake, replacing the derived one.
    pub(crate) wake_override: Option<WakeFanout>,
}

/// Under the `Yield` policy a waiter spins only long enough to catch a release already on its way:
/// a few cache-line round trips (the release and its line's transfer). It is also the least an
/// adaptive spin budget shrinks to.
const CATCH_RELEASE_ROUND_TRIPS: u32 = 4;
/// Oversubscribed, `Auto` yields at least this many times before parking. Measured on the 2-core
/// EPYC VM (`phasers bench barrier --mode back-to-back`, 4 to 64 threads): with 1 yield the waiters
/// of a 4-thread barrier parked on most episodes and paid the ~15 µs wake every time (7.5x slower
/// than with 2); 2 to 8 yields were within the rounds' noise of each other at 8, 32 and 64 threads.
/// It is also the count libstdc++'s `std::barrier` yields before its futex wait.
const MIN_OVERSUBSCRIBED_YIELDS: u32 = 4;
/// The `Spin` policy spins at least as long as this many wake-ups would cost: about 2 ms on the
/// EPYC VM (wake ~22 µs), 0.4 ms on a Xeon VM (~4 µs). Users who ask for it want the core kept.
const SPIN_POLICY_WAKES: u32 = 100;
/// The `Yield` policy yields this many times before parking (about 5 ms of hand-offs on either VM):
/// users who ask for it want the kernel's sleep avoided nearly always.
const YIELD_POLICY_YIELDS: u32 = 1 << 12;
/// However cheap a yield is next to a wake, a waiter yields at most this many times before
/// parking, so that a waiter on a busy machine stops taking turns on the core.
const MAX_AUTO_YIELDS: u32 = 256;
/// With a core per participant, `Auto` spins this many times as long as a release of every other
/// participant from sleep would take, counted as the tree's levels times its wakes per level, each
/// a whole wake. After an episode in which all parked, the last sleeper runs a release path after
/// the first, so the early ones, spinning in the next episode, must outlast that path or they park
/// again and the slow state repeats (the 16-core Xeon's 17.5 µs episodes, issue 30). The real path
/// is shorter than this count (only a step's first wake costs a whole wake; its others add a wake
/// call each): the machine model (`wait::model`, `the_margin_ends_the_lock_in`) finds it about a
/// third of it, ends the lock-in at 16, 64 and 256 cores with wake costs from the Xeon's to the
/// EPYC's with any margin from a quarter up, and brings it back at an eighth. 2 leaves room for a
/// tree slower than the model's and for an episode that is itself late; the cost is power only.
const FREE_CORE_RELEASE_MARGIN: u32 = 2;
/// The fanout of a release by tree: each step wakes this many sleepers. A step costs one wake
/// latency *W* plus the waker's serial cost *c* for each sleeper after the first, so small fanouts
/// take many steps and large ones make long steps. With *c* between a tenth and a half of *W* (a
/// wake call of 0.5-2 µs against wakes of 4-22 µs on the Xeon and EPYC VMs) and 16 to 256
/// sleepers, the machine model (`fanout_four_is_near_the_best`) puts 4 within 12% of the best
/// fanout from c/W = 0.2 up and within 27% at 0.1, where 5 to 8 save a step at a few sizes; 6 is
/// within 17% everywhere, 2 and 8 are worse than 4 (up to 92% and 37%). The difference is a few
/// microseconds of the episode after a mass park; it stays 4 until a many-core machine measures
/// the fanouts (`PHASERS_WAKE`).
pub(crate) const TREE_WAKE_FANOUT: u32 = 4;

impl SpinPlan {
    /// The plan for `inputs`; see the table in the [module docs](crate::wait).
    pub(crate) fn derive(inputs: &PlanInputs) -> SpinPlan {
        let PlanInputs {
            policy,
            floors,
            participants,
            cores,
            ..
        } = *inputs;
        let shares_cores = participants > cores.max(1);
        let wake_time = floors.wake();
        let catch_release = floors.round_trip() * CATCH_RELEASE_ROUND_TRIPS;
        let wake = inputs.wake_override.unwrap_or(if shares_cores {
            // Threads outnumber cores: the cores are the bottleneck, not the wake calls, and a
            // tree would add a system call per woken thread where one wakes them all.
            WakeFanout::All
        } else {
            WakeFanout::Tree(TREE_WAKE_FANOUT)
        });
        // The competitive rule for yields: each one costs a hand-off of the core, so a waiter
        // yields while its hand-offs add up to less than the wake that parking would cost.
        let yields_per_wake = (wake_time.as_nanos() / floors.yield_handoff().as_nanos().max(1))
            .clamp(1, MAX_AUTO_YIELDS as u128) as u32;
        // What parking costs when every participant has a core: not one wake, but the release
        // of every other participant from sleep, a path of `levels` steps of `per_level` wakes.
        let (levels, per_level) = wake.release_path(participants.saturating_sub(1));
        let release_from_sleep = wake_time * levels.saturating_mul(per_level);
        let free_core_spin = release_from_sleep * FREE_CORE_RELEASE_MARGIN;
        let (spin_time, yields) = match policy {
            // Oversubscribed, every spin round and every yield is paid by all the threads that
            // share the core, so a waiter does not spin at all and shares out its yields.
            WaitPolicy::Auto if shares_cores => (
                Duration::ZERO,
                (yields_per_wake / sharing(participants, cores)).max(MIN_OVERSUBSCRIBED_YIELDS),
            ),
            // A core per participant: spinning costs nobody anything but power, parking costs the
            // whole release path; spin until that path would have been paid twice.
            WaitPolicy::Auto => (free_core_spin, yields_per_wake),
            WaitPolicy::Spin => (
                free_core_spin.max(wake_time * SPIN_POLICY_WAKES),
                yields_per_wake,
            ),
            WaitPolicy::Yield => (catch_release, YIELD_POLICY_YIELDS),
            WaitPolicy::Park => (Duration::ZERO, 0),
        };
        let rounds = |time: Duration| {
            if time.is_zero() {
                0
            } else {
                let rounds = time.as_nanos() / inputs.pause.as_nanos().max(1);
                rounds.clamp(1, u128::from(MAX_SPIN_ROUNDS)) as u32
            }
        };
        let mut plan = SpinPlan {
            spins: rounds(spin_time),
            min_spins: rounds(catch_release).min(rounds(spin_time)),
            yields,
            short_wait: wake_time,
            handoff: floors.yield_handoff() / 2,
            shares_cores,
            wake,
        };
        if let Some(spins) = inputs.spin_override {
            plan.spins = spins;
            plan.min_spins = plan.min_spins.min(spins);
        }
        plan
    }
}

/// How many participants share each core when all wait at once (at least 1).
fn sharing(participants: usize, cores: usize) -> u32 {
    let per_core = participants.div_ceil(cores.max(1)).max(1);
    u32::try_from(per_core).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::FloorsSource;

    fn inputs(policy: WaitPolicy, participants: usize, cores: usize) -> PlanInputs {
        PlanInputs {
            policy,
            floors: Floors::from_parts(
                Duration::from_nanos(150),
                Duration::from_micros(1),
                Duration::from_micros(6),
                FloorsSource::Fixed,
            ),
            participants,
            cores,
            pause: Duration::from_nanos(30),
            spin_override: None,
            wake_override: None,
        }
    }

    #[test]
    fn a_tree_release_takes_logarithmic_steps() {
        assert_eq!(WakeFanout::Tree(4).release_path(1), (1, 1));
        assert_eq!(WakeFanout::Tree(4).release_path(4), (1, 4));
        assert_eq!(WakeFanout::Tree(4).release_path(15), (2, 4));
        assert_eq!(WakeFanout::Tree(4).release_path(255), (4, 4));
        assert_eq!(WakeFanout::Tree(2).release_path(254), (7, 2));
        assert_eq!(WakeFanout::Tree(2).release_path(255), (8, 2));
        assert_eq!(WakeFanout::All.release_path(255), (1, 255));
        assert_eq!(WakeFanout::All.release_path(0), (1, 1));
    }

    /// The free-core budget grows with what a release from sleep costs: the more participants,
    /// the longer the path a sleeper would have to be woken through.
    #[test]
    fn free_cores_spin_for_the_whole_release_path() {
        let two = SpinPlan::derive(&inputs(WaitPolicy::Auto, 2, 16));
        let sixteen = SpinPlan::derive(&inputs(WaitPolicy::Auto, 16, 16));
        let many = SpinPlan::derive(&inputs(WaitPolicy::Auto, 256, 256));
        // 2 parties: one sleeper, one wake, twice: 12 µs of 30 ns rounds.
        assert_eq!(two.spins, 400);
        // 16: two steps of four wakes, twice: 96 µs.
        assert_eq!(sixteen.spins, 3_200);
        // 256: four steps of four wakes, twice: 192 µs.
        assert_eq!(many.spins, 6_400);
        for plan in [two, sixteen, many] {
            assert!(!plan.shares_cores);
            assert_eq!(plan.wake, WakeFanout::Tree(TREE_WAKE_FANOUT));
        }
    }

    /// Oversubscribed, nothing changed from the rule measured on 2 cores: no spin, shared yields,
    /// one wake call for all.
    #[test]
    fn oversubscribed_waiters_do_not_spin_and_wake_all_at_once() {
        let plan = SpinPlan::derive(&inputs(WaitPolicy::Auto, 64, 2));
        assert_eq!((plan.spins, plan.min_spins), (0, 0));
        assert!(plan.shares_cores);
        assert_eq!(plan.wake, WakeFanout::All);
        assert_eq!(plan.yields, MIN_OVERSUBSCRIBED_YIELDS);
    }

    #[test]
    fn the_spin_policy_keeps_the_longer_of_its_budgets() {
        let plan = SpinPlan::derive(&inputs(WaitPolicy::Spin, 16, 16));
        assert_eq!(plan.spins, 20_000); // 100 wakes of 6 µs
        let many = SpinPlan::derive(&PlanInputs {
            floors: Floors::from_parts(
                Duration::from_nanos(150),
                Duration::from_micros(1),
                Duration::from_micros(6),
                FloorsSource::Fixed,
            ),
            wake_override: Some(WakeFanout::All),
            ..inputs(WaitPolicy::Spin, 256, 256)
        });
        // All at once, 255 wakes in a row, twice, is longer than 100 wakes.
        assert_eq!(many.spins, 102_000);
    }

    #[test]
    fn overrides_replace_the_derived_values() {
        let plan = SpinPlan::derive(&PlanInputs {
            spin_override: Some(7),
            wake_override: Some(WakeFanout::Tree(2)),
            ..inputs(WaitPolicy::Auto, 64, 2)
        });
        assert_eq!((plan.spins, plan.min_spins), (7, 0));
        assert_eq!(plan.wake, WakeFanout::Tree(2));
    }
}
