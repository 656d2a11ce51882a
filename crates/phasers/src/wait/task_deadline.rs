//! An async task's deadline: the `.timeout()` / `.deadline()` of the crate's futures.
//!
//! A thread with a deadline sleeps on the futex with a timeout (see `waiter.rs`); a task cannot
//! sleep, so something else must wake it when its deadline passes, even if the object it waits on
//! never moves. That is a timer, and the crate has no runtime to ask for one: the timer is
//! `futures-timer`'s, which works on any executor with one helper thread, started by the first
//! [`Delay`] made in the process.
//!
//! # Cost
//!
//! A future without a deadline holds `None` here (one pointer: the rest is boxed, so the 100,000
//! untimed futures of a large run stay small) and pays one branch on it when a poll finds its
//! condition unmet; it never makes a timer, so a program that sets no deadline never starts the
//! helper thread. A timed future makes its [`Delay`] only when a poll finds the condition unmet
//! with the deadline still ahead: a wait that completes in its first poll, or whose deadline has
//! already passed, makes none.
//!
//! # Order
//!
//! The future checks its deadline after its condition, as the blocking waiter does (`check` in
//! `waiter.rs`: the condition, the broken state, then the clock): a poll whose condition holds
//! completes even if the deadline has passed, so a deadline already past still does the first
//! poll's work and returns what it completed. The task's waker is stored on the object's signal
//! before the deadline is looked at, and on the timer after; whichever fires first wakes the task,
//! and the other wake, if it comes, costs one spurious poll.
//!
//! # Under loom
//!
//! Loom has no clock. As [`Deadline::At`](super::Deadline) does there, a timed wait that does not
//! complete at once times out: every poll that finds the condition unmet finds the deadline
//! passed, so the models explore the timeout without a timer thread, which loom could not run.

use std::future::Future;
use std::pin::Pin;
use std::task::Context;
use std::time::{Duration, Instant};

use futures_timer::Delay;

/// A task's deadline, if it has one (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct TaskDeadline(Option<Box<Timer>>);

/// The deadline of a timed task, and the timer that wakes it there once it waits.
#[derive(Debug)]
struct Timer {
    at: Instant,
    /// Made by the first poll that leaves the task waiting with `at` ahead.
    delay: Option<Delay>,
}

impl TaskDeadline {
    /// No deadline: the wait lasts until it completes.
    pub(crate) fn none() -> Self {
        TaskDeadline(None)
    }

    /// A deadline at `at`.
    pub(crate) fn at(at: Instant) -> Self {
        TaskDeadline(Some(Box::new(Timer { at, delay: None })))
    }

    /// A deadline `timeout` from now; one too far for an `Instant` to hold (such as
    /// [`Duration::MAX`]) is none, as for the blocking waits (`Deadline::after`).
    pub(crate) fn after(timeout: Duration) -> Self {
        Instant::now()
            .checked_add(timeout)
            .map_or_else(Self::none, Self::at)
    }

    /// For a poll that found its condition unmet, with its waker stored where the condition's
    /// change will wake it: whether the deadline has passed (the wait times out). If it has not,
    /// the task's waker is also registered with the timer, which wakes it at the deadline.
    #[inline]
    pub(crate) fn has_passed(&mut self, cx: &mut Context<'_>) -> bool {
        match &mut self.0 {
            None => false,
            Some(timer) => timer.has_passed(cx),
        }
    }
}

impl Timer {
    #[cold]
    #[inline(never)]
    fn has_passed(&mut self, cx: &mut Context<'_>) -> bool {
        if cfg!(phasers_loom) {
            return true;
        }
        let now = Instant::now();
        if now >= self.at {
            return true;
        }
        // The delay fires once the timer thread's clock has reached `now + (at - now)`, which is
        // no earlier than `at`: a delay that fired means the deadline passed.
        let delay = self.delay.get_or_insert_with(|| Delay::new(self.at - now));
        Pin::new(delay).poll(cx).is_ready()
    }
}

#[cfg(all(test, not(phasers_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Waker;

    use crate::wait::wakers::tests::Count;

    /// An untimed deadline stays one pointer: the futures that hold one grow by no more.
    #[test]
    fn no_deadline_is_one_pointer() {
        assert_eq!(
            std::mem::size_of::<TaskDeadline>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn no_deadline_never_passes_and_makes_no_timer() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut deadline = TaskDeadline::none();
        assert!(!deadline.has_passed(&mut Context::from_waker(&waker)));
        assert!(deadline.0.is_none());
        assert!(TaskDeadline::after(Duration::MAX).0.is_none());
    }

    #[test]
    fn a_past_deadline_has_passed_without_a_timer() {
        let waker = Waker::from(Arc::new(Count(AtomicUsize::new(0))));
        let mut deadline = TaskDeadline::at(Instant::now());
        assert!(deadline.has_passed(&mut Context::from_waker(&waker)));
        assert!(deadline
            .0
            .as_ref()
            .is_some_and(|timer| timer.delay.is_none()));
    }

    /// A deadline ahead arms the timer, which wakes the task once it passes; then it has passed.
    #[test]
    fn the_timer_wakes_the_task_at_the_deadline() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let start = Instant::now();
        let mut deadline = TaskDeadline::after(Duration::from_millis(20));
        assert!(!deadline.has_passed(&mut Context::from_waker(&waker)));
        while count.0.load(Ordering::SeqCst) == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the timer never woke"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(start.elapsed() >= Duration::from_millis(20));
        assert!(deadline.has_passed(&mut Context::from_waker(&waker)));
    }
}
