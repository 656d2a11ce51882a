//! The waiting loop: spin, then yield, then park, until a word satisfies a condition.

use std::ptr::NonNull;
use std::time::Instant;

use super::budget::{Ended, SpinBudget, WaitEnd};
use super::{BrokenState, Signal, SpinPlan, Watch};
use crate::primitive::{spin_loop, yield_now};

/// A long spin phase looks at the broken state (and at the clock, when the wait has a deadline)
/// once every this many rounds: 16 to 40 µs of 24-40 ns pauses, a few µs where a pause is a few
/// ns. Free cores spin for up to a few hundred µs (see `plan.rs`), and a timeout or a broken
/// object must not wait for the whole phase to be noticed; a check per chunk costs one load.
const ROUNDS_PER_CHECK: u32 = 1 << 10;

/// When a wait gives up.
///
/// `Task` is no deadline but an async task's poll (see `poll.rs`'s `poll_task`; barriers and
/// teams wait this way): the wait probes once, stores the task's waker, and stops with
/// [`Stop::TimedOut`] instead of spinning, so that the caller records where it stopped as after
/// a timeout. The pointer is to a `TaskPoll` (`poll.rs`), on the polling call's stack; only
/// `TaskPoll::deadline` makes it and only `poll_task` reads it. It rides here
/// rather than in the episode because it fits beside `Instant`'s niche: the enum stays the size
/// of `Option<Instant>`, and the blocking wait's episode stays as small (see the test below).
/// A [`Waiter`] is never made with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deadline {
    Never,
    At(Instant),
    Task(TaskRef),
}

/// The address of an async task's poll, for [`Deadline::Task`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskRef(pub(crate) NonNull<()>);

// SAFETY: an address, which `poll.rs` dereferences only during the poll that made it,
// on that poll's thread; a deadline that holds it is `Send` and `Sync` as the other variants, so
// that the types that hold a `Deadline` stay so.
unsafe impl Send for TaskRef {}
// SAFETY: as for `Send`.
unsafe impl Sync for TaskRef {}

impl Deadline {
    /// `timeout` from now; a timeout so long that no `Instant` can hold its end never passes.
    pub(crate) fn after(timeout: std::time::Duration) -> Deadline {
        Instant::now()
            .checked_add(timeout)
            .map_or(Deadline::Never, Deadline::At)
    }

    fn has_passed(self) -> bool {
        match self {
            Deadline::Never | Deadline::Task(_) => false,
            // Loom has no clock; a timed wait that reaches its slow path models every timeout.
            Deadline::At(_) if cfg!(phasers_loom) => true,
            Deadline::At(at) => Instant::now() >= at,
        }
    }

    fn instant(self) -> Option<Instant> {
        match self {
            Deadline::Never | Deadline::Task(_) => None,
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
        self.until_probe(signal, || {
            let value = signal.load();
            done(value).then_some(value)
        })
    }

    /// Waits until `probe` returns a value, and returns it; parks on `signal` once the spin and
    /// the yields ran out. For a wait whose condition shows first somewhere else than on the word
    /// it sleeps on (a phaser's root word, before its release word). Whoever makes the condition
    /// hold must change `signal` afterwards (or break the object), which wakes the sleepers: the
    /// sleeper reads `signal` before its last probe, and sleeps only while `signal` still holds
    /// what it read.
    #[inline]
    pub(crate) fn until_probe(
        &self,
        signal: &Signal,
        probe: impl Fn() -> Option<u64>,
    ) -> Result<u64, Stop> {
        if let Some(value) = probe() {
            return Ok(value);
        }
        self.until_slow(signal, probe)
    }

    /// The spin phase, monomorphized for each condition so that the inner loop holds nothing but
    /// a pause and the probe: it reads only the words the probe reads, and the broken state and
    /// the clock are read between chunks of [`ROUNDS_PER_CHECK`] rounds and once it ran out.
    #[inline(never)]
    fn until_slow<P: Fn() -> Option<u64>>(&self, signal: &Signal, probe: P) -> Result<u64, Stop> {
        let mut left = self.budget.rounds();
        while left > 0 {
            let chunk = left.min(ROUNDS_PER_CHECK);
            for _ in 0..chunk {
                spin_loop();
                if let Some(value) = probe() {
                    self.budget.record(self.plan, WaitEnd::Spinning);
                    return Ok(value);
                }
            }
            left -= chunk;
            if left > 0 {
                match self.check(&probe) {
                    Some(Ok(value)) => {
                        self.budget.record(self.plan, WaitEnd::Spinning);
                        return Ok(value);
                    }
                    Some(Err(stop)) => return Err(stop),
                    None => {}
                }
            }
        }
        self.after_spin(signal, &probe)
    }

    /// A wait whose spin phase ran out: yields, then parks, and adapts the spin budget to how
    /// the rest of the wait took.
    #[cold]
    fn after_spin(&self, signal: &Signal, probe: &dyn Fn() -> Option<u64>) -> Result<u64, Stop> {
        // The clock is read only once the spin phase ran out: the fast waits never pay for it.
        let spin_ran_out = (!cfg!(phasers_loom)).then(Instant::now);
        let (outcome, how) = self.yield_then_park(signal, probe, spin_ran_out);
        if outcome.is_ok() {
            let after = spin_ran_out.map(|at| at.elapsed());
            self.budget
                .record(self.plan, WaitEnd::AfterSpin { how, after });
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
        probe: &dyn Fn() -> Option<u64>,
        spin_ran_out: Option<Instant>,
    ) -> (Result<u64, Stop>, Ended) {
        let mut ended = Ended::OnOurCore;
        let yields = self.budget.take_yields(self.plan);
        for _ in 0..yields {
            let before = (!cfg!(phasers_loom)).then(Instant::now);
            yield_now();
            // A yield that took half a hand-off or more ran another thread on this core.
            if before.is_some_and(|at| at.elapsed() >= self.plan.handoff) {
                ended = Ended::AfterHandingOff;
            }
            if let Some(outcome) = self.check(probe) {
                return (outcome, ended);
            }
        }
        // The moment this wait counts as stalled, until it has passed.
        let mut stall_at = spin_ran_out
            .zip(self.watch)
            .and_then(|(since, watch)| watch.stalls_at(since));
        loop {
            // Read before the probe: a change that made the condition hold after the probe looked
            // also changes the word from this value, so the park below does not sleep through it.
            let raw = signal.load_raw();
            if let Some(outcome) = self.check(probe) {
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
    fn check(&self, probe: &dyn Fn() -> Option<u64>) -> Option<Result<u64, Stop>> {
        if let Some(value) = probe() {
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
        let fanout = self.plan.wake.per_wake();
        signal.park(expected, fanout, || !broken.is_broken_for(episode), wake_by);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wait::plan::WakeFanout;
    use std::time::Duration;

    /// The task variant rides in `Instant`'s niche: a deadline, and so an episode, is no bigger
    /// for it (see `barrier/episode.rs`).
    #[test]
    fn a_task_deadline_costs_no_space() {
        assert_eq!(
            std::mem::size_of::<Deadline>(),
            std::mem::size_of::<Option<Instant>>()
        );
    }

    fn plan() -> SpinPlan {
        SpinPlan {
            spins: 4096,
            min_spins: 8,
            yields: 64,
            short_wait: Duration::from_millis(1),
            handoff: Duration::from_nanos(500),
            shares_cores: false,
            wake: WakeFanout::Tree(4),
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
