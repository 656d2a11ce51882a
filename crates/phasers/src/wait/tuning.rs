//! An object's wait settings: the policy it asked for with the environment's overrides applied,
//! the floors, and the stall time; the plan every waiter of the object follows comes from here.

use std::time::Duration;

use super::floors::Floors;
use super::plan::{PlanInputs, SpinPlan, WakeFanout};
use super::policy::{WaitPolicy, MAX_SPIN_ROUNDS};
use super::spin_clock::pause_cost;
use super::stall_time::{stall_after, stall_after_from_env};
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

    /// When the object's waiters report a stall; `None` when they never do.
    pub(crate) fn stall_after(self) -> Option<Duration> {
        self.stall_after
    }

    /// The policy in force after the environment's override.
    pub(crate) fn policy(self) -> WaitPolicy {
        self.policy
    }

    /// The plan for an object whose `participants` may all wait at once; see the table in the
    /// [module docs](crate::wait).
    pub(crate) fn plan(self, participants: usize) -> SpinPlan {
        let mut plan = SpinPlan::derive(&PlanInputs {
            policy: self.policy,
            floors: self.floors,
            participants,
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
