//! What an algorithm needs while one participant goes through one episode.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::barrier::completion::Completion;
use crate::wait::{Signal, Stop, Waiter};

/// One participant's pass through one episode: its rank, the episode number, how to wait, and the
/// completion action the leader runs.
pub struct Episode<'a> {
    number: u64,
    rank: usize,
    waiter: Waiter<'a>,
    completion: &'a Completion,
    on_panic: &'a dyn Fn(),
}

impl<'a> Episode<'a> {
    pub(crate) fn new(
        number: u64,
        rank: usize,
        waiter: Waiter<'a>,
        completion: &'a Completion,
        on_panic: &'a dyn Fn(),
    ) -> Self {
        Episode {
            number,
            rank,
            waiter,
            completion,
            on_panic,
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

    /// Waits until `done` holds for `signal`'s value; see [`Waiter::until`].
    #[inline]
    pub(crate) fn wait_until(
        &self,
        signal: &Signal,
        done: impl Fn(u64) -> bool,
    ) -> Result<u64, Stop> {
        self.waiter.until(signal, done)
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
        // SAFETY: only the leader of this episode calls `complete`, after all participants arrived
        // and before it releases them; the next episode's leader is therefore ordered after this
        // call by the release and the arrivals that follow it.
        let outcome = catch_unwind(AssertUnwindSafe(|| unsafe { self.completion.run() }));
        if let Err(payload) = outcome {
            (self.on_panic)();
            resume_unwind(payload);
        }
    }
}
