//! The rules a run can follow: the library's own, the one before issue 30, and waiters that
//! only spin. A rule is a plan (derived once per run) and a spin budget per thread; everything
//! else, the machine and the barrier, is the same for all.

use std::time::Duration;

use super::legacy::{self, LegacyBudget};
use super::machine::Machine;
use crate::wait::budget::WaitEnd;
use crate::wait::plan::{PlanInputs, SpinPlan, WakeFanout};
use crate::wait::SpinBudget;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rule {
    /// The library's `Auto` policy as it is: [`SpinPlan::derive`] and [`SpinBudget`].
    Current,
    /// The same, but spinning this many releases from sleep (as plan.rs counts one) where the
    /// plan spins `FREE_CORE_RELEASE_MARGIN` of them; through `PHASERS_SPIN`'s override, as a
    /// user would. For free cores only: oversubscribed, `Auto` does not spin.
    CurrentWithMargin(f64),
    /// The same, but releases wake as `PHASERS_WAKE` would make them.
    CurrentWithWake(WakeFanout),
    /// The rule before issue 30 (see `legacy.rs`).
    Legacy,
    /// The reference: waiters spin until released, never yield, never park.
    SpinUntilReleased,
}

impl Rule {
    pub(crate) fn name(self) -> String {
        match self {
            Rule::Current => "current".to_owned(),
            Rule::CurrentWithMargin(margin) => format!("current, margin {margin}"),
            Rule::CurrentWithWake(WakeFanout::All) => "current, wake all".to_owned(),
            Rule::CurrentWithWake(WakeFanout::Tree(fanout)) => format!("current, wake by {fanout}"),
            Rule::Legacy => "legacy".to_owned(),
            Rule::SpinUntilReleased => "spinning".to_owned(),
        }
    }

    /// The plan every thread of `machine` follows under this rule.
    pub(crate) fn plan(self, machine: &Machine) -> SpinPlan {
        let inputs = machine.plan_inputs();
        match self {
            Rule::Current | Rule::SpinUntilReleased => SpinPlan::derive(&inputs),
            Rule::CurrentWithMargin(margin) => {
                let rounds = (release_from_sleep_rounds(machine) as f64 * margin).round() as u32;
                SpinPlan::derive(&PlanInputs {
                    spin_override: Some(rounds.max(1)),
                    ..inputs
                })
            }
            Rule::CurrentWithWake(wake) => SpinPlan::derive(&PlanInputs {
                wake_override: Some(wake),
                ..inputs
            }),
            Rule::Legacy => legacy::plan(&inputs),
        }
    }

    /// A thread's spin budget at the start of the run.
    pub(crate) fn budget(self, plan: &SpinPlan) -> Budget {
        match self {
            Rule::Current | Rule::CurrentWithMargin(_) | Rule::CurrentWithWake(_) => {
                Budget::Current(SpinBudget::new(*plan))
            }
            Rule::Legacy => Budget::Legacy(LegacyBudget::new(plan)),
            Rule::SpinUntilReleased => Budget::Unbounded,
        }
    }
}

/// The spin rounds of one release from sleep as plan.rs estimates it on `machine`: the wake
/// tree's levels times the wakes per level, each a whole *W*.
pub(crate) fn release_from_sleep_rounds(machine: &Machine) -> u64 {
    let plan = SpinPlan::derive(&machine.plan_inputs());
    let (levels, per_level) = plan.wake.release_path(machine.threads.saturating_sub(1));
    let path = Duration::from_nanos(machine.wake) * levels * per_level;
    (path.as_nanos() / u128::from(machine.pause.max(1))) as u64
}

/// One thread's spin budget under its rule.
#[derive(Debug)]
pub(crate) enum Budget {
    Current(SpinBudget),
    Legacy(LegacyBudget),
    /// Spins until released.
    Unbounded,
}

impl Budget {
    /// The spin rounds of the next wait; `None` for no end.
    pub(crate) fn rounds(&self) -> Option<u32> {
        match self {
            Budget::Current(budget) => Some(budget.rounds()),
            Budget::Legacy(budget) => Some(budget.rounds()),
            Budget::Unbounded => None,
        }
    }

    pub(crate) fn take_yields(&mut self, plan: &SpinPlan) -> u32 {
        match self {
            Budget::Current(budget) => budget.take_yields(plan),
            Budget::Legacy(budget) => budget.take_yields(plan),
            Budget::Unbounded => unreachable!("an unbounded spin never runs out"),
        }
    }

    pub(crate) fn record(&mut self, plan: &SpinPlan, end: WaitEnd) {
        match self {
            Budget::Current(budget) => budget.record(plan, end),
            Budget::Legacy(budget) => budget.record(plan, end),
            Budget::Unbounded => {}
        }
    }
}
