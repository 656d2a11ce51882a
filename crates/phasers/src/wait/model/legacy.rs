//! The rule before issue 30, kept only to show its lock-in next to the rule that replaced it.
//!
//! Nothing outside the model uses it. It is the wait policy as it stood at commit `19c344b`
//! (`policy.rs` and `waiter.rs` there), frozen here so that the model can always show what the
//! current rule fixed:
//!
//! - **Plan.** With a core per participant, spin for one wake *W* ("spinning longer than a park
//!   and wake would cost can never pay"), yield *W*/*Y* times (at most 256), then park; a release
//!   always wakes every sleeper with one call. Oversubscribed, the same plan as today (no spin,
//!   shared yields, one call), which is the current [`SpinPlan::derive`] with the wake forced to
//!   all at once.
//! - **Adaptation, the same whether cores are shared or not.** Grow the spin budget 2x after a
//!   wait that ended while spinning, or within *W* after the spin ran out on its core (2 *W* after
//!   parking, whose wake is part of the wait); shrink it 4x after any other wait, and after a
//!   wait that a yield handed to another thread, which also makes the next slow wait park
//!   without yielding when cores are free. Never below 4 round trips of spinning.
//!
//! The lock-in, in those terms: a preemption makes one episode long; every waiter spins *W*,
//! yields, parks, and shrinks; the release wakes the `k` sleepers one after another, so the last
//! runs `k c + W` after it; the early ones, already at the next barrier, wait that long again,
//! longer than their spin, and park again. On 16 free cores of a Xeon VM that state held: 12x
//! slower than libgomp, whose waiters spin for milliseconds.

use std::time::Duration;

use crate::wait::budget::{Ended, WaitEnd};
use crate::wait::plan::{PlanInputs, SpinPlan, WakeFanout};
use crate::wait::MAX_SPIN_ROUNDS;

/// The old least budget: enough rounds to catch a release already on its way.
const CATCH_RELEASE_ROUND_TRIPS: u32 = 4;
/// The old cap on the yields before parking.
const MAX_YIELDS: u32 = 256;

/// The old plan for `inputs` (see the module docs).
pub(crate) fn plan(inputs: &PlanInputs) -> SpinPlan {
    let all_at_once = PlanInputs {
        wake_override: Some(WakeFanout::All),
        ..*inputs
    };
    let today = SpinPlan::derive(&all_at_once);
    if today.shares_cores {
        return today;
    }
    let floors = inputs.floors;
    let rounds = |time: Duration| {
        let rounds = time.as_nanos() / inputs.pause.as_nanos().max(1);
        rounds.clamp(1, u128::from(MAX_SPIN_ROUNDS)) as u32
    };
    let spins = rounds(floors.wake());
    let yields = (floors.wake().as_nanos() / floors.yield_handoff().as_nanos().max(1))
        .clamp(1, u128::from(MAX_YIELDS)) as u32;
    SpinPlan {
        spins,
        min_spins: rounds(floors.round_trip() * CATCH_RELEASE_ROUND_TRIPS).min(spins),
        yields,
        short_wait: floors.wake(),
        handoff: floors.yield_handoff() / 2,
        shares_cores: false,
        wake: WakeFanout::All,
    }
}

/// The old adaptation of a participant's spin budget (see the module docs).
#[derive(Debug)]
pub(crate) struct LegacyBudget {
    rounds: u32,
    park_next: bool,
}

impl LegacyBudget {
    pub(crate) fn new(plan: &SpinPlan) -> LegacyBudget {
        LegacyBudget {
            rounds: plan.spins,
            park_next: false,
        }
    }

    pub(crate) fn rounds(&self) -> u32 {
        self.rounds
    }

    pub(crate) fn take_yields(&mut self, plan: &SpinPlan) -> u32 {
        if std::mem::take(&mut self.park_next) {
            0
        } else {
            plan.yields
        }
    }

    pub(crate) fn record(&mut self, plan: &SpinPlan, end: WaitEnd) {
        let WaitEnd::AfterSpin { how, after } = end else {
            self.grow(plan);
            return;
        };
        let short = match how {
            Ended::OnOurCore => after.is_some_and(|after| after <= plan.short_wait),
            Ended::AfterParking => after.is_some_and(|after| after <= plan.short_wait * 2),
            Ended::AfterHandingOff => false,
        };
        if short {
            self.grow(plan);
        } else {
            self.shrink(plan);
        }
        self.park_next = how == Ended::AfterHandingOff && !plan.shares_cores;
    }

    fn grow(&mut self, plan: &SpinPlan) {
        self.rounds = self
            .rounds
            .saturating_mul(2)
            .max(plan.min_spins)
            .min(plan.spins);
    }

    fn shrink(&mut self, plan: &SpinPlan) {
        self.rounds = (self.rounds / 4).max(plan.min_spins).min(plan.spins);
    }
}
