//! What an algorithm needs while one participant goes through one episode.
//!
//! An `Episode` is made on every wait, so it is made to cost nothing there. It holds references
//! into the barrier and the participant, which are in memory already, and nothing takes its
//! address on the fast path: the [`Waiter`] is made only once a condition does not hold at first
//! look, and the completion action runs out of line, handed the parts it needs. The compiler then
//! keeps the episode in registers, provided the wait is inlined down to the arrival
//! (`Participant::wait`, `AnyAlgorithm::wait` for counting, and `Counting::wait` are
//! `#[inline(always)]`).
//!
//! Why it matters: every store before the arrival's locked `fetch_sub` must drain before that
//! instruction runs. While the episode held a ready `Waiter` and a closure to call on panic, and a
//! call took its address, a wait stored about twenty words first; at 1 party `Barrier::wait` cost
//! 15.0 ns against 10.2 ns for the same protocol written bare (1.47x), and 11.0 ns against 10.3 ns
//! (1.07x) once it stored only the roster entry (medians, `phasers bench barrier --threads 1,2
//! --mode back-to-back --rounds 5`, AMD EPYC, 2 cores).
//!
//! # Tasks
//!
//! An async task's wait ([`Participant::wait_async`](super::Participant::wait_async)) runs the
//! same algorithm with the deadline [`Deadline::Task`]: where a condition does not hold at first
//! look, [`Episode::wait_until`] polls once through [`TaskWaiter::poll_probe`] (one probe, the
//! waker stored on the signal, the word marked `PARKED`, a second probe) instead of spinning, and
//! when the condition still does not hold it stops with [`Stop::TimedOut`]. Every algorithm's
//! `wait` is resumable after that stop (the local state records where it stopped), so the future
//! returns `Pending` and its next poll calls `wait` again, which resumes where it stopped. The
//! task's context rides in the deadline, which it leaves the same size, so the blocking wait
//! stores nothing more, and its `wait_until` tests the variant only after the first look failed.
//!
//! A waker key names a slot of one signal's list, and an algorithm may wait on another signal at
//! its next stop (dissemination's rounds, a tree's levels): the key is kept with its signal's
//! address ([`StoredWaker`](crate::wait::StoredWaker)), and dropped from that signal before the
//! task waits on another (see `wait/poll.rs`, which teams' task waits share).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::barrier::completion::Completion;
use crate::wait::{
    poll_task, publish_for_task, BrokenState, Deadline, Signal, SpinBudget, SpinPlan, Stop, Waiter,
    Watch, Watched,
};

/// What breaks the barrier when the completion action panics: its shared state, so that an
/// episode holds a reference it already has rather than a closure it would have to store.
pub(crate) trait BreakOnPanic {
    /// Marks `episode` and later as unable to complete because of `rank`, and wakes everyone.
    fn break_from(&self, episode: u64, rank: usize);
}

/// One participant's pass through one episode: its rank, the episode number, how to wait, and the
/// completion action the leader runs.
///
/// `Copy`, so that `AnyAlgorithm` can hand each algorithm a copy of its own (see `any.rs`).
#[derive(Clone, Copy)]
pub struct Episode<'a> {
    number: u64,
    rank: usize,
    plan: &'a SpinPlan,
    budget: &'a SpinBudget,
    deadline: Deadline,
    broken: &'a BrokenState,
    watched: &'a dyn Watched,
    completion: &'a Completion,
    breaker: &'a dyn BreakOnPanic,
}

/// The barrier's parts an episode reads: what a [`Waiter`] needs on the slow path, the completion
/// action, and what breaks the barrier if the action panics.
pub(crate) struct Parts<'a> {
    pub(crate) plan: &'a SpinPlan,
    pub(crate) broken: &'a BrokenState,
    pub(crate) watched: &'a dyn Watched,
    pub(crate) completion: &'a Completion,
    pub(crate) breaker: &'a dyn BreakOnPanic,
}

impl<'a> Episode<'a> {
    #[inline]
    pub(crate) fn new(
        number: u64,
        rank: usize,
        budget: &'a SpinBudget,
        deadline: Deadline,
        parts: Parts<'a>,
    ) -> Self {
        Episode {
            number,
            rank,
            plan: parts.plan,
            budget,
            deadline,
            broken: parts.broken,
            watched: parts.watched,
            completion: parts.completion,
            breaker: parts.breaker,
        }
    }

    /// The episode being completed, counted from 0.
    #[inline]
    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// The waiting participant's rank.
    #[inline]
    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// Waits until `done` holds for `signal`'s value; see [`Waiter::until`]. The waiter, with its
    /// deadline, broken state and stall watch, is made only when `done` does not hold at once.
    #[inline]
    pub(crate) fn wait_until(
        &self,
        signal: &Signal,
        done: impl Fn(u64) -> bool,
    ) -> Result<u64, Stop> {
        let value = signal.load();
        if done(value) {
            return Ok(value);
        }
        if let Deadline::Task(task) = self.deadline {
            return poll_task(task, self.broken, self.number, signal, done);
        }
        // Made here, from the episode's fields: passing the episode itself, even a copy, would
        // let the compiler pass its address, and so store it on the fast path too.
        let waiter = Waiter::new(
            self.plan,
            self.budget,
            self.deadline,
            self.broken,
            self.number,
            Some(Watch::arrivals(self.watched)),
        );
        wait_slow(waiter, signal, done)
    }

    /// Runs the completion action, if any. Only the episode's leader calls this, after every
    /// participant has arrived and before it releases anyone.
    ///
    /// If the action panics, the object is broken first (so nobody waits for a release that will
    /// never come) and the panic then continues in the leader's thread.
    #[inline]
    pub(crate) fn complete(&self) {
        if self.completion.is_empty() {
            return;
        }
        run_completion(self.completion, self.breaker, self.number, self.rank);
    }

    /// The leader's last steps where one word releases everyone: the completion action, then
    /// `value` published on `release`. A task's leader wakes the tasks waiting there a batch per
    /// poll (see `wait/batched_wakes.rs`); a thread's wakes them all at once.
    #[inline]
    pub(crate) fn complete_and_publish(&self, release: &Signal, value: u64) {
        self.complete();
        match self.deadline {
            Deadline::Task(task) => publish_for_task(task, release, value),
            _ => {
                release.publish(value);
            }
        }
    }
}

/// [`Episode::wait_until`] once `done` did not hold at first look. Out of line, so that the
/// inlined wait stays small.
#[inline(never)]
fn wait_slow(waiter: Waiter<'_>, signal: &Signal, done: impl Fn(u64) -> bool) -> Result<u64, Stop> {
    waiter.until(signal, done)
}

/// [`Episode::complete`]'s action, out of line: it is given the episode's parts rather than the
/// episode, so that nothing takes the episode's address (see the module docs).
#[cold]
#[inline(never)]
fn run_completion(completion: &Completion, breaker: &dyn BreakOnPanic, number: u64, rank: usize) {
    // SAFETY: only the leader of this episode calls `complete`, after all participants arrived
    // and before it releases them; the next episode's leader is therefore ordered after this
    // call by the release and the arrivals that follow it.
    let outcome = catch_unwind(AssertUnwindSafe(|| unsafe { completion.run() }));
    if let Err(payload) = outcome {
        breaker.break_from(number, rank);
        resume_unwind(payload);
    }
}
