//! An object's wait settings: the policy it asked for with the environment's overrides applied,
//! the floors, and the stall time; the plan every waiter of the object follows comes from here.

use std::time::Duration;

use super::floors::{pause_cost, Floors};
use super::plan::{PlanInputs, SpinPlan, WakeFanout};
use super::policy::{WaitPolicy, MAX_SPIN_ROUNDS};
use super::stall::{stall_after, stall_after_from_env};
use crate::error::{Error, Result};
use crate::topology::available_cores;

/// The policy an object was asked for, with the environment's overrides applied, the floors its
/// budgets are derived from, and when its waiters report a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuning {
    policy: WaitPolicy,
    spin_override: Option<u32>,
    wake_override: Option<WakeFanout>,
    floors: Floors,
    /// `None`: no stall reports.
    stall_after: Option<Duration>,
    /// The threads that may wait at the same time as the object's own participants, when they are
    /// more: a sub-team's members share the cores with the rest of the team it was split from.
    waiting_threads: usize,
}

/// The spin count `PHASERS_SPIN` holds: a whole number up to [`MAX_SPIN_ROUNDS`].
fn parse_spin(text: &str) -> Result<u32> {
    let spins = text.trim().parse::<u64>().map_err(|_| {
        Error::invalid(format!(
            "PHASERS_SPIN={text:?} is not a spin count; set it to a whole number such as 2000, \
             or unset it"
        ))
    })?;
    match u32::try_from(spins) {
        Ok(spins) if spins <= MAX_SPIN_ROUNDS => Ok(spins),
        _ => Err(Error::invalid(format!(
            "PHASERS_SPIN={text:?} is more spin rounds than the {MAX_SPIN_ROUNDS} allowed \
             (phasers::wait::MAX_SPIN_ROUNDS), which already spin for up to a second before a \
             timeout or a broken object is noticed; set it to a whole number such as 2000, or \
             unset it"
        ))),
    }
}

/// The environment variable that replaces how releases wake sleepers: `all`, or a fanout.
pub(crate) const WAKE_ENV: &str = "PHASERS_WAKE";

/// The wake `PHASERS_WAKE` holds: `all` (one call wakes every sleeper), or a fanout from 1 to
/// [`WakeFanout::MAX_FANOUT`] (a release wakes that many, each of them as many more).
fn parse_wake(text: &str) -> Result<WakeFanout> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("all") {
        return Ok(WakeFanout::All);
    }
    match trimmed.parse::<u32>() {
        Ok(fanout) if (1..=WakeFanout::MAX_FANOUT).contains(&fanout) => {
            Ok(WakeFanout::Tree(fanout))
        }
        _ => Err(Error::invalid(format!(
            "{WAKE_ENV}={text:?} is not a wake: set it to all (one system call wakes every \
             sleeper) or to a fanout from 1 to {} (a release wakes that many sleepers, and each \
             of them as many more), or unset it",
            WakeFanout::MAX_FANOUT
        ))),
    }
}

impl Tuning {
    /// `requested`, unless `PHASERS_WAIT` says otherwise; `PHASERS_SPIN` replaces the spin budget;
    /// the floors are [`Floors::current`]; the stall time is `PHASERS_STALL`'s or the default (see
    /// [`with_stall_after`](Self::with_stall_after)). Every builder calls this, so a value of any
    /// of these variables that cannot be parsed fails every build.
    pub(crate) fn from_env(requested: WaitPolicy) -> Result<Self> {
        let policy = match std::env::var("PHASERS_WAIT") {
            Ok(text) => text.parse().map_err(|_| {
                Error::invalid(format!(
                    "PHASERS_WAIT={text:?} is not a wait policy; set it to auto, spin, yield or \
                     park, or unset it"
                ))
            })?,
            Err(_) => requested,
        };
        let spin_override = match std::env::var("PHASERS_SPIN") {
            Ok(text) => Some(parse_spin(&text)?),
            Err(_) => None,
        };
        let wake_override = match std::env::var(WAKE_ENV) {
            Ok(text) => Some(parse_wake(&text)?),
            Err(_) => None,
        };
        let stall_after = stall_after_from_env()?;
        Ok(Tuning {
            policy,
            spin_override,
            wake_override,
            floors: Floors::current()?,
            stall_after,
            waiting_threads: 0,
        })
    }

    /// The stall time a builder asked for, if it did, in place of the environment's:
    /// `Duration::ZERO` and `Duration::MAX` turn reports off.
    pub(crate) fn with_stall_after(self, requested: Option<Duration>) -> Self {
        match requested {
            Some(after) => Tuning {
                stall_after: stall_after(after),
                ..self
            },
            None => self,
        }
    }

    /// The same settings for an object whose participants wait while `threads` threads in all
    /// may be waiting (a sub-team split from a team of `threads` members). Its plans then decide
    /// whether cores are shared by all of those threads: four sub-teams of 16 split from 64
    /// threads on 16 cores must not spin as if each had the machine to itself. Objects made
    /// from the result (a sub-team's sub-teams, its reduction groups) inherit it.
    pub(crate) fn with_waiting_threads(self, threads: usize) -> Self {
        Tuning {
            waiting_threads: self.waiting_threads.max(threads),
            ..self
        }
    }

    /// When the object's waiters report a stall; `None` when they never do.
    pub(crate) fn stall_after(self) -> Option<Duration> {
        self.stall_after
    }

    /// The cache-line round trip between two cores of this machine, as the floors in force say.
    pub(crate) fn round_trip(self) -> Duration {
        self.floors.round_trip()
    }

    /// The policy in force after the environment's override.
    pub(crate) fn policy(self) -> WaitPolicy {
        self.policy
    }

    /// The plan for an object whose `participants` may all wait at once; see the table in the
    /// [module docs](crate::wait). Counted with the threads of
    /// [`with_waiting_threads`](Self::with_waiting_threads) when they are more: whether cores are
    /// shared depends on all of them, and the release path they size is then an upper bound (a
    /// longer spin on free cores, which costs only power).
    pub(crate) fn plan(self, participants: usize) -> SpinPlan {
        let mut plan = SpinPlan::derive(&PlanInputs {
            policy: self.policy,
            floors: self.floors,
            participants: participants.max(self.waiting_threads),
            cores: available_cores(),
            pause: pause_cost(),
            spin_override: self.spin_override,
            wake_override: self.wake_override,
        });
        if cfg!(phasers_loom) {
            // Loom explores every interleaving of a step, and spin rounds would multiply them: the
            // models park at once, except those that set `PHASERS_SPIN` to walk the whole path
            // (a spin round or two, one yield, then the park) with few rounds.
            plan.spins = self.spin_override.unwrap_or(0).min(2);
            plan.min_spins = plan.min_spins.min(plan.spins);
            plan.yields = u32::from(self.spin_override.is_some());
            // Likewise a release by tree adds a wake call per woken sleeper: the models release
            // all at once, except those that set `PHASERS_WAKE` (`tests/loom_wake_tree.rs`).
            plan.wake = self.wake_override.unwrap_or(WakeFanout::All);
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::FloorsSource;

    fn tuning() -> Tuning {
        Tuning {
            policy: WaitPolicy::Auto,
            spin_override: None,
            wake_override: None,
            floors: Floors::from_parts(
                Duration::from_nanos(150),
                Duration::from_micros(1),
                Duration::from_micros(6),
                FloorsSource::Fixed,
            ),
            stall_after: None,
            waiting_threads: 0,
        }
    }

    /// A sub-team of one member split from a team of four threads per core shares its core with
    /// the other three: its plan must not spin as a lone thread on a free core would.
    #[test]
    fn a_sub_team_plans_for_the_threads_of_its_parent() {
        let cores = available_cores();
        let alone = tuning().plan(1);
        assert!(!alone.shares_cores);
        assert!(alone.spins > 0, "{alone:?}");
        let split = tuning().with_waiting_threads(4 * cores);
        let plan = split.plan(1);
        assert!(plan.shares_cores, "{plan:?}");
        assert_eq!(
            plan.spins, 0,
            "Auto does not spin on a shared core: {plan:?}"
        );
        // A sub-team of the sub-team keeps the largest count it was split from.
        assert!(split.with_waiting_threads(2).plan(1).shares_cores);
        // More participants than waiting threads: the participants count.
        assert_eq!(tuning().with_waiting_threads(1).plan(3), tuning().plan(3));
    }
}
