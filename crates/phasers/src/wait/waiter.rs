//! The waiting loop: spin, then yield, then park, until a word satisfies a condition.

use std::cell::Cell;
use std::time::Instant;

use super::{BrokenState, Signal, SpinPlan};
use crate::primitive::{spin_loop, yield_now};

/// A participant's current spin budget, which adapts to how its waits actually end.
///
/// A wait that outlasts the spin phase by more than a wake-up means the awaited thread was not
/// running (its core was taken by other work, or it is simply late); spinning that long again
/// would only burn the core the late thread may need, so the budget shrinks fourfold. A wait that
/// ends while spinning, or within a wake-up after the spin phase ran out (a longer spin would have
/// caught it without parking), doubles it back, up to the plan's budget. So on a quiet machine the
/// budget stays at its maximum; on a loaded one it drops within a few episodes; and it always
/// recovers as soon as waits are short again, because every wait that is short next to a wake ends
/// either in the spin phase or in the yields that follow it, never in a park.
#[derive(Debug)]
pub(crate) struct SpinBudget(Cell<u32>);

impl SpinBudget {
    pub(crate) fn new(plan: SpinPlan) -> Self {
        SpinBudget(Cell::new(plan.spins))
    }

    /// The current budget, in spin rounds.
    pub(crate) fn rounds(&self) -> u32 {
        self.0.get()
    }

    fn grow(&self, plan: SpinPlan) {
        let grown = self.0.get().saturating_mul(2).max(plan.min_spins);
        self.0.set(grown.min(plan.spins));
    }

    fn shrink(&self, plan: SpinPlan) {
        let shrunk = (self.0.get() / 4).max(plan.min_spins);
        self.0.set(shrunk.min(plan.spins));
    }
}

/// When a wait gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deadline {
    Never,
    At(Instant),
}

impl Deadline {
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

/// One participant's wait for one episode: the plan, the deadline, and the object's broken state.
pub(crate) struct Waiter<'a> {
    plan: &'a SpinPlan,
    budget: &'a SpinBudget,
    deadline: Deadline,
    broken: &'a BrokenState,
    episode: u64,
}

impl<'a> Waiter<'a> {
    pub(crate) fn new(
        plan: &'a SpinPlan,
        budget: &'a SpinBudget,
        deadline: Deadline,
        broken: &'a BrokenState,
        episode: u64,
    ) -> Self {
        Waiter {
            plan,
            budget,
            deadline,
            broken,
            episode,
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
        let mut backoff = 1;
        for _ in 0..self.budget.rounds() {
            for _ in 0..backoff {
                spin_loop();
            }
            backoff = (backoff * 2).min(self.plan.backoff);
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
        let outcome = self.yield_then_park(signal, done);
        if outcome.is_ok() {
            match spin_ran_out {
                Some(at) if at.elapsed() <= self.plan.short_wait => self.budget.grow(*self.plan),
                _ => self.budget.shrink(*self.plan),
            }
        }
        outcome
    }

    /// The rest of a wait whose spin phase ran out: yields, then parks until the condition holds.
    fn yield_then_park(&self, signal: &Signal, done: &dyn Fn(u64) -> bool) -> Result<u64, Stop> {
        for _ in 0..self.plan.yields {
            yield_now();
            if let Some(outcome) = self.check(signal, done) {
                return outcome;
            }
        }
        loop {
            let raw = signal.load_raw();
            if let Some(outcome) = self.check(signal, done) {
                return outcome;
            }
            self.park(signal, raw);
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

    /// Sleeps until the word moves away from `observed`, the object breaks, or the deadline passes.
    /// May return spuriously; the caller re-checks.
    fn park(&self, signal: &Signal, observed: u64) {
        let Some(expected) = signal.mark_parked(observed) else {
            return;
        };
        let (broken, episode) = (self.broken, self.episode);
        signal.park(
            expected,
            || !broken.is_broken_for(episode),
            self.deadline.instant(),
        );
    }
}
