//! The waiting loop: spin, then yield, then park, until a word satisfies a condition.

use std::time::Instant;

use super::{BrokenState, Signal, SpinPlan};
use crate::primitive::{spin_loop, yield_now};

/// Pauses per spin round grow 1, 2, 4, .. up to this, so a waiter that spins long stops hammering
/// the line, yet still sees a release within about a microsecond.
const MAX_BACKOFF: u32 = 16;

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
    deadline: Deadline,
    broken: &'a BrokenState,
    episode: u64,
}

impl<'a> Waiter<'a> {
    pub(crate) fn new(
        plan: SpinPlan,
        deadline: Deadline,
        broken: &'a BrokenState,
        episode: u64,
    ) -> Self {
        Waiter {
            plan,
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
        for _ in 0..self.plan.spins {
            for _ in 0..backoff {
                spin_loop();
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            let value = signal.load();
            if done(value) {
                return Ok(value);
            }
            if self.broken.is_broken_for(self.episode) {
                return Err(Stop::Broken);
            }
        }
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
    #[cfg(not(phasers_loom))]
    fn park(&self, signal: &Signal, observed: u64) {
        let Some(expected) = signal.mark_parked(observed) else {
            return;
        };
        let episode = self.episode;
        let broken = self.broken;
        // SAFETY: the key is the address of `signal`'s own word, so only this object's waiters and
        // wakers use it. The validate callback only loads atomics: it neither panics nor calls into
        // the parking lot, and the other callbacks do nothing.
        unsafe {
            parking_lot_core::park(
                signal.park_key(),
                || signal.is_unchanged(expected) && !broken.is_broken_for(episode),
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                self.deadline.instant(),
            );
        }
    }

    #[cfg(phasers_loom)]
    fn park(&self, _signal: &Signal, _observed: u64) {
        yield_now();
    }
}
