//! The waiting loop: spin, then yield, then park, until a word satisfies a condition.

use std::cell::Cell;
use std::time::Instant;

use super::{BrokenState, Signal, SpinPlan, Watch};
use crate::primitive::{spin_loop, yield_now};

/// A participant's current spin budget, which adapts to how its waits actually end.
///
/// A wait that outlasts the spin phase by more than a wake-up means the awaited thread was not
/// running (its core was taken by other work, or it is simply late); spinning that long again
/// would only burn the core the late thread may need, so the budget shrinks fourfold. So does a
/// wait that ended only once a yield gave our core to another thread: the awaited thread shared
/// our core, and every spin round delayed it. A wait that ends while spinning, or within a wake-up
/// after the spin phase ran out with our core kept (a longer spin would have caught it without
/// parking), doubles it back, up to the plan's budget. So on a quiet machine the budget stays at
/// its maximum; on a loaded one, or with two participants on one core, it drops within a few
/// episodes; and it recovers as soon as waits are short again, because a wait that is short next
/// to a wake and whose awaited thread runs elsewhere ends either in the spin phase or in the
/// yields that follow it, which then return at once.
///
/// A wait that ended once a yield handed the core over also makes the next slow wait park without
/// yielding, once: yields between two participants on one core hand it back and forth for ever
/// (each is runnable only while the other waits, so the kernel's load balancer never separates
/// them), while the wake-up that ends a park places the sleeper on an idle core if there is one.
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

    /// The current budget, in spin rounds.
    pub(crate) fn rounds(&self) -> u32 {
        self.rounds.get()
    }

    fn grow(&self, plan: SpinPlan) {
        let grown = self.rounds.get().saturating_mul(2).max(plan.min_spins);
        self.rounds.set(grown.min(plan.spins));
    }

    fn shrink(&self, plan: SpinPlan) {
        let shrunk = (self.rounds.get() / 4).max(plan.min_spins);
        self.rounds.set(shrunk.min(plan.spins));
    }
}

/// How a wait that outlasted its spin phase ended: still holding its core, after a yield gave the
/// core to another thread, or after parking (with no such yield before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    OnOurCore,
    AfterHandingOff,
    AfterParking,
}

/// When a wait gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deadline {
    Never,
    At(Instant),
}

impl Deadline {
    /// `timeout` from now; a timeout so long that no `Instant` can hold its end never passes.
    pub(crate) fn after(timeout: std::time::Duration) -> Deadline {
        Instant::now()
            .checked_add(timeout)
            .map_or(Deadline::Never, Deadline::At)
    }

    fn has_passed(self) -> bool {
        match self {
            Deadline::Never => false,
            // Loom has no clock; a timed wait that reaches its slow path models every timeout.
            Deadline::At(_) if cfg!(phasers_loom) => true,
            Deadline::At(at) => Instant::now() >= at,
        }
    }

    fn instant(self) -> Option<Instant> {
        match self {
            Deadline::Never => None,
            Deadline::At(at) => Some(at),
        }
    }
}

/// Why a wait stopped before its condition held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    TimedOut,
    Broken,
}

/// One participant's wait for one episode: the plan, the deadline, the object's broken state, and
/// what to report if the wait stalls (`None`: nothing).
pub(crate) struct Waiter<'a> {
    plan: &'a SpinPlan,
    budget: &'a SpinBudget,
    deadline: Deadline,
    broken: &'a BrokenState,
    episode: u64,
    watch: Option<Watch<'a>>,
}

impl<'a> Waiter<'a> {
    pub(crate) fn new(
        plan: &'a SpinPlan,
        budget: &'a SpinBudget,
        deadline: Deadline,
        broken: &'a BrokenState,
        episode: u64,
        watch: Option<Watch<'a>>,
    ) -> Self {
        Waiter {
            plan,
            budget,
            deadline,
            broken,
            episode,
            watch,
        }
    }

    /// Waits until `done(value)` holds for the value of `signal`, and returns that value.
    #[inline]
    pub(crate) fn until(&self, signal: &Signal, done: impl Fn(u64) -> bool) -> Result<u64, Stop> {
        let value = signal.load();
        if done(value) {
            return Ok(value);
        }
        self.until_slow(signal, done)
    }

    /// The spin phase, monomorphized for each condition so that the loop holds nothing but a pause,
    /// a load and the condition: it reads only the word, and the broken state and the clock are
    /// read once it ran out (a wait that breaks is noticed at most one spin phase late, about one
    /// wake with `Auto`).
    #[inline(never)]
    fn until_slow<F: Fn(u64) -> bool>(&self, signal: &Signal, done: F) -> Result<u64, Stop> {
        for _ in 0..self.budget.rounds() {
            spin_loop();
            let value = signal.load();
            if done(value) {
                self.budget.grow(*self.plan);
                return Ok(value);
            }
        }
        self.after_spin(signal, &done)
    }

    /// A wait whose spin phase ran out: yields, then parks, and adapts the spin budget to how long
    /// the rest of the wait took.
    #[cold]
    fn after_spin(&self, signal: &Signal, done: &dyn Fn(u64) -> bool) -> Result<u64, Stop> {
        // The clock is read only once the spin phase ran out: the fast waits never pay for it.
        let spin_ran_out = (!cfg!(phasers_loom)).then(Instant::now);
        let (outcome, ended) = self.yield_then_park(signal, done, spin_ran_out);
        if outcome.is_ok() {
            // A longer spin would have caught this wait if it ended soon after the spin ran out:
            // within a wake while we kept our core, or within two after we parked (the second is
            // the wake-up itself). A wait that ended once a yield handed our core to another
            // thread was waiting for that thread (two participants on one core), and spinning
            // longer would only have delayed it.
            let after = spin_ran_out.map(|at| at.elapsed());
            let short = match ended {
                Ended::OnOurCore => after.is_some_and(|after| after <= self.plan.short_wait),
                Ended::AfterParking => after.is_some_and(|after| after <= self.plan.short_wait * 2),
                Ended::AfterHandingOff => false,
            };
            if short {
                self.budget.grow(*self.plan);
            } else {
                self.budget.shrink(*self.plan);
            }
            // Oversubscribed, handing the core over is what the yields are for.
            self.budget
                .park_next
                .set(ended == Ended::AfterHandingOff && !self.plan.shares_cores);
        }
        outcome
    }

    /// The rest of a wait whose spin phase ran out (at `spin_ran_out`; `None` under loom, which
    /// has no clock): yields, then parks until the condition holds, reporting a stall once if it
    /// sleeps that long. Also tells whether some yield handed the core to another thread, or else
    /// the waiter parked.
    fn yield_then_park(
        &self,
        signal: &Signal,
        done: &dyn Fn(u64) -> bool,
        spin_ran_out: Option<Instant>,
    ) -> (Result<u64, Stop>, Ended) {
        let mut ended = Ended::OnOurCore;
        let yields = if self.budget.park_next.replace(false) {
            0
        } else {
            self.plan.yields
        };
        for _ in 0..yields {
            let before = (!cfg!(phasers_loom)).then(Instant::now);
            yield_now();
            // A yield that took half a hand-off or more ran another thread on this core.
            if before.is_some_and(|at| at.elapsed() >= self.plan.handoff) {
                ended = Ended::AfterHandingOff;
            }
            if let Some(outcome) = self.check(signal, done) {
                return (outcome, ended);
            }
        }
        // The moment this wait counts as stalled, until it has passed.
        let mut stall_at = spin_ran_out
            .zip(self.watch)
            .and_then(|(since, watch)| watch.stalls_at(since));
        loop {
            let raw = signal.load_raw();
            if let Some(outcome) = self.check(signal, done) {
                return (outcome, ended);
            }
            if ended == Ended::OnOurCore {
                ended = Ended::AfterParking;
            }
            if stall_at.is_some_and(|at| Instant::now() >= at) {
                stall_at = None;
                if let (Some(watch), Some(since)) = (self.watch, spin_ran_out) {
                    watch.report(self.episode, since);
                }
            }
            self.park(signal, raw, stall_at);
        }
    }

    /// The slow-path check: the condition, then the broken state, then the clock.
    fn check(&self, signal: &Signal, done: &dyn Fn(u64) -> bool) -> Option<Result<u64, Stop>> {
        let value = signal.load();
        if done(value) {
            Some(Ok(value))
        } else if self.broken.is_broken_for(self.episode) {
            Some(Err(Stop::Broken))
        } else if self.deadline.has_passed() {
            Some(Err(Stop::TimedOut))
        } else {
            None
        }
    }

    /// Sleeps until the word moves away from `observed`, the object breaks, or the deadline or
    /// `stall_at` passes. May return spuriously; the caller re-checks.
    fn park(&self, signal: &Signal, observed: u64, stall_at: Option<Instant>) {
        let Some(expected) = signal.mark_parked(observed) else {
            return;
        };
        let wake_by = match (self.deadline.instant(), stall_at) {
            (Some(deadline), Some(stall_at)) => Some(deadline.min(stall_at)),
            (deadline, stall_at) => deadline.or(stall_at),
        };
        let (broken, episode) = (self.broken, self.episode);
        signal.park(expected, || !broken.is_broken_for(episode), wake_by);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan() -> SpinPlan {
        SpinPlan {
            spins: 4096,
            min_spins: 8,
            yields: 64,
            short_wait: Duration::from_millis(1),
            handoff: Duration::from_nanos(500),
            shares_cores: false,
        }
    }

    /// Two threads pass a counter back and forth through two signals, each waiting with its own
    /// budget (starting at `start` rounds), and return the budgets they end with and the largest
    /// each reached.
    fn ping_pong(
        cores: [Option<core_affinity::CoreId>; 2],
        rounds: u64,
        start: u32,
    ) -> [(u32, u32); 2] {
        let (plan, broken) = (plan(), BrokenState::new());
        let signals = [Signal::new(0), Signal::new(0)];
        let play = |me: usize| {
            if let Some(core) = cores[me] {
                core_affinity::set_for_current(core);
            }
            let budget = SpinBudget::new(SpinPlan {
                spins: start,
                ..plan
            });
            let mut largest = start;
            for round in 1..=rounds {
                if me == 0 {
                    signals[1].publish(round);
                }
                let waiter = Waiter::new(&plan, &budget, Deadline::Never, &broken, 0, None);
                waiter.until(&signals[me], |value| value >= round).unwrap();
                if me == 1 {
                    signals[0].publish(round);
                }
                largest = largest.max(budget.rounds());
            }
            (budget.rounds(), largest)
        };
        std::thread::scope(|s| {
            let other = s.spawn(|| play(1));
            let mine = play(0);
            [mine, other.join().unwrap()]
        })
    }

    /// The regression behind issue 17's 10 µs episodes: two participants that the scheduler put
    /// on one core, while the object believed each had its own. Every spin then burns the core the
    /// other one needs, and each wait ends right after a yield hands the core over; the budgets
    /// must shrink to about their least, not grow back because the waits ended soon after the spin.
    #[test]
    fn two_waiters_on_one_core_stop_spinning() {
        let Some(core) = core_affinity::get_core_ids().and_then(|ids| ids.first().copied()) else {
            return; // no affinity on this platform: nothing to pin the two threads to
        };
        let budgets = ping_pong([Some(core), Some(core)], 200, plan().spins);
        // A wait after a hand-off parks, and a park that ended soon doubles the budget once, so
        // it alternates between its least and twice that.
        let least = plan().min_spins;
        for (end, _) in budgets {
            assert!(end <= 2 * least, "{budgets:?}");
        }
    }

    /// The other half: on two cores, waits of a round trip end while spinning, so budgets that
    /// start at their least grow back to the most, instead of staying stuck where every wait
    /// yields and parks (issue 17's bimodal interpreter runs).
    #[test]
    fn budgets_recover_when_waits_are_short_again() {
        let ids = core_affinity::get_core_ids().unwrap_or_default();
        let (Some(&first), Some(&second)) = (ids.first(), ids.get(1)) else {
            return; // one core: no two threads can both run, nothing to recover to
        };
        let budgets = ping_pong([Some(first), Some(second)], 2_000, plan().min_spins);
        assert_eq!(
            budgets.map(|(_, largest)| largest),
            [plan().spins; 2],
            "{budgets:?}"
        );
    }
}
