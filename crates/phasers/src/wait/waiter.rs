//! The waiting loop: spin, then yield, then park, until a word satisfies a condition.

use std::cell::Cell;
use std::time::Instant;

use super::{BrokenState, Signal, SpinPlan};
use crate::primitive::{spin_loop, yield_now};

/// Pauses per spin round grow 1, 2, 4, .. up to this, so a waiter that spins long stops hammering
/// the line, yet still sees a release within a fraction of a microsecond.
pub(crate) const MAX_BACKOFF: u32 = 8;

/// The spin budget never adapts below this many rounds: enough to catch a release already on its
/// way, a few microseconds at most.
const MIN_ADAPTIVE_SPINS: u32 = 16;

/// A participant's current spin budget, which adapts to how its waits actually end.
///
/// A wait that outlasts the spin phase means the awaited thread was not running (its core was
/// taken by other work, or it is simply late); spinning that long again would only burn the core
/// the late thread may need, so the budget shrinks fourfold. A wait that ends while spinning
/// doubles it back, up to the policy's budget. On a quiet machine the budget stays at its maximum;
/// on a loaded one it drops within a few episodes, and waiters yield instead of spinning for
/// hundreds of microseconds per episode.
#[derive(Debug)]
pub(crate) struct SpinBudget(Cell<u32>);

impl SpinBudget {
    pub(crate) fn new(plan: SpinPlan) -> Self {
        SpinBudget(Cell::new(plan.spins))
    }

    fn after_success(&self, max: u32) {
        let grown = self.0.get().saturating_mul(2).max(MIN_ADAPTIVE_SPINS);
        self.0.set(grown.min(max));
    }

    fn after_exhaustion(&self, max: u32) {
        let shrunk = (self.0.get() / 4).max(MIN_ADAPTIVE_SPINS);
        self.0.set(shrunk.min(max));
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
    plan: SpinPlan,
    budget: &'a SpinBudget,
    deadline: Deadline,
    broken: &'a BrokenState,
    episode: u64,
}

impl<'a> Waiter<'a> {
    pub(crate) fn new(
        plan: SpinPlan,
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
        self.until_slow(signal, &done)
    }

    #[inline(never)]
    fn until_slow(&self, signal: &Signal, done: &dyn Fn(u64) -> bool) -> Result<u64, Stop> {
        let mut backoff = 1;
        for _ in 0..self.budget.0.get() {
            for _ in 0..backoff {
                spin_loop();
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            let value = signal.load();
            if done(value) {
                self.budget.after_success(self.plan.spins);
                return Ok(value);
            }
            if self.broken.is_broken_for(self.episode) {
                return Err(Stop::Broken);
            }
        }
        self.budget.after_exhaustion(self.plan.spins);
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
