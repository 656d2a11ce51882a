//! A participant's spin budget: a pure state machine that adapts to how its waits end.
//!
//! The waiter (`waiter.rs`) measures how a wait ended and hands it to [`SpinBudget::record`]; the
//! machine model (`wait::model`) does the same from simulated times. Neither reads a clock or an
//! atomic here, so the rule below is the same code on a real machine and on a simulated one.

use std::cell::Cell;
use std::time::Duration;

use super::plan::SpinPlan;

/// How one wait ended, as the budget needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// The condition held while the waiter was still spinning.
    Spinning,
    /// The spin phase ran out, and the wait ended `after` that (`None` where nothing can read a
    /// clock: the loom models) in the way `how` says.
    AfterSpin { how: Ended, after: Option<Duration> },
}

/// How a wait that outlasted its spin phase ended: still holding its core, after a yield gave the
/// core to another thread, or after parking (with no such yield before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    OnOurCore,
    AfterHandingOff,
    AfterParking,
}

/// A participant's current spin budget, which adapts to how its waits actually end.
///
/// In short: a wait that handed the core to another thread shrinks the budget fourfold (and, with
/// a core per participant, makes the next slow wait park without yielding, once); with a core per
/// participant every other wait doubles it back; when participants share cores, a wait that
/// outlasts its spin phase by more than a wake shrinks it too. The rules case by case, and why
/// each is so (issue 30's parking lock-in among them), are in `wait/README.md`, *How a budget
/// adapts*: change them there and here together.
#[derive(Debug)]
pub(crate) struct SpinBudget {
    rounds: Cell<u32>,
    park_next: Cell<bool>,
}

impl SpinBudget {
    pub(crate) fn new(plan: SpinPlan) -> Self {
        SpinBudget {
            rounds: Cell::new(plan.spins),
            park_next: Cell::new(false),
        }
    }

    /// The spin rounds of the next wait.
    pub(crate) fn rounds(&self) -> u32 {
        self.rounds.get()
    }

    /// The yields of a wait whose spin phase just ran out: the plan's, or none once after a wait
    /// that handed the core over (see the type's docs).
    pub(crate) fn take_yields(&self, plan: &SpinPlan) -> u32 {
        if self.park_next.replace(false) {
            0
        } else {
            plan.yields
        }
    }

    /// Adapts the budget to how a wait that completed ended.
    pub(crate) fn record(&self, plan: &SpinPlan, end: WaitEnd) {
        let WaitEnd::AfterSpin { how, after } = end else {
            self.grow(plan);
            return;
        };
        let grows = match how {
            Ended::AfterHandingOff => false,
            _ if !plan.shares_cores => true,
            Ended::OnOurCore => after.is_some_and(|after| after <= plan.short_wait),
            Ended::AfterParking => after.is_some_and(|after| after <= plan.short_wait * 2),
        };
        if grows {
            self.grow(plan);
        } else {
            self.shrink(plan);
        }
        // Oversubscribed, handing the core over is what the yields are for.
        self.park_next
            .set(how == Ended::AfterHandingOff && !plan.shares_cores);
    }

    fn grow(&self, plan: &SpinPlan) {
        let grown = self.rounds.get().saturating_mul(2).max(plan.min_spins);
        self.rounds.set(grown.min(plan.spins));
    }

    fn shrink(&self, plan: &SpinPlan) {
        let shrunk = (self.rounds.get() / 4).max(plan.min_spins);
        self.rounds.set(shrunk.min(plan.spins));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wait::plan::WakeFanout;

    fn plan(shares_cores: bool) -> SpinPlan {
        SpinPlan {
            spins: 4096,
            min_spins: 8,
            yields: 64,
            short_wait: Duration::from_micros(6),
            handoff: Duration::from_nanos(500),
            shares_cores,
            wake: WakeFanout::Tree(4),
        }
    }

    fn after(how: Ended, micros: u64) -> WaitEnd {
        WaitEnd::AfterSpin {
            how,
            after: Some(Duration::from_micros(micros)),
        }
    }

    /// Free cores: long waits and parks leave the budget at its most; only a hand-off shrinks it,
    /// and the next uncontended waits restore it.
    #[test]
    fn free_cores_shrink_only_on_a_hand_off() {
        let plan = plan(false);
        let budget = SpinBudget::new(plan);
        for end in [
            after(Ended::OnOurCore, 500),
            after(Ended::AfterParking, 900),
        ] {
            budget.record(&plan, end);
            assert_eq!(budget.rounds(), plan.spins, "{end:?}");
        }
        budget.record(&plan, after(Ended::AfterHandingOff, 1));
        assert_eq!(budget.rounds(), plan.spins / 4);
        assert_eq!(
            budget.take_yields(&plan),
            0,
            "parks at once after a hand-off"
        );
        assert_eq!(budget.take_yields(&plan), plan.yields, "once");
        // A parked wait with a long wake-up chain behind it still counts as uncontended.
        budget.record(&plan, after(Ended::AfterParking, 2_000));
        budget.record(&plan, WaitEnd::Spinning);
        assert_eq!(budget.rounds(), plan.spins);
    }

    /// Shared cores: the competitive rule, as measured on 2 cores.
    #[test]
    fn shared_cores_shrink_on_long_waits_and_grow_on_short_ones() {
        let plan = plan(true);
        let budget = SpinBudget::new(plan);
        budget.record(&plan, after(Ended::OnOurCore, 500));
        assert_eq!(budget.rounds(), plan.spins / 4);
        budget.record(&plan, after(Ended::AfterParking, 13));
        assert_eq!(budget.rounds(), plan.spins / 16);
        budget.record(&plan, after(Ended::AfterParking, 11));
        assert_eq!(budget.rounds(), plan.spins / 8);
        budget.record(&plan, after(Ended::AfterHandingOff, 1));
        assert_eq!(
            budget.take_yields(&plan),
            plan.yields,
            "hand-offs are the point here"
        );
        for _ in 0..10 {
            budget.record(&plan, WaitEnd::Spinning);
        }
        assert_eq!(budget.rounds(), plan.spins);
    }

    #[test]
    fn the_budget_stays_between_its_bounds() {
        let plan = plan(true);
        let budget = SpinBudget::new(plan);
        for _ in 0..20 {
            budget.record(&plan, after(Ended::AfterHandingOff, 1));
        }
        assert_eq!(budget.rounds(), plan.min_spins);
        for _ in 0..20 {
            budget.record(&plan, WaitEnd::Spinning);
        }
        assert_eq!(budget.rounds(), plan.spins);
    }
}
