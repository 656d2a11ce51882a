//! What each thread of a row does: the timed iteration, and where threads meet between rounds.
//!
//! The two modes time different loops:
//!
//! - back-to-back (seed 002): an iteration is one barrier episode and nothing else, and the
//!   barrier under test is also where threads meet to agree on the next round;
//! - EPCC syncbench: an iteration is `delay(); barrier()`, and its reference loop is `delay()`
//!   alone. Threads meet on a separate control barrier before and after each round, in the test
//!   and in the reference alike, so what the two have in common (the meetings, the loop, the
//!   delay) cancels when the reference is subtracted, as fork and join do in EPCC's
//!   `#pragma omp parallel` around each repetition.

use phasers::barrier::BarrierAlgorithm;
use phasers::Participant;

use super::delay::delay;

/// One thread's way into a barrier under test. The sampling loop is generic over it, so each
/// barrier's `wait` is called directly, with no virtual call the barrier itself would not pay.
pub trait WaitHandle: Send {
    /// Arrives at the barrier and returns once every party has arrived.
    fn wait(&mut self) -> Result<(), phasers::Error>;
}

impl<A: BarrierAlgorithm> WaitHandle for Participant<A> {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        Participant::wait(self).map(drop)
    }
}

/// A phaser registration: `next()` is one episode.
impl WaitHandle for phasers::Registration {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        self.next().map(drop)
    }
}

/// A thread's handle on Rust's standard barrier, which needs no per-thread state.
#[derive(Debug, Clone, Copy)]
pub struct StdHandle<'a>(pub &'a std::sync::Barrier);

impl WaitHandle for StdHandle<'_> {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        self.0.wait();
        Ok(())
    }
}

/// One thread's part of a row.
pub trait Body: Send {
    /// Whether every iteration synchronizes all threads. Only then can thread 0 cut a round short
    /// (see `threaded_row`), and only then does thread 0 finishing its last iteration mean that
    /// every thread has finished the round.
    const SYNCHRONIZED: bool;

    /// Whether threads meet again at the end of each round, inside the timed span.
    const MEETS_AFTER_ROUND: bool;

    /// One timed iteration.
    fn iteration(&mut self) -> Result<(), phasers::Error>;

    /// Waits until every thread of the row is here; used to agree on each round.
    fn meet(&mut self) -> Result<(), phasers::Error>;
}

/// Back-to-back episodes of the barrier under test.
pub struct BackToBack<H>(pub H);

impl<H: WaitHandle> Body for BackToBack<H> {
    const SYNCHRONIZED: bool = true;
    const MEETS_AFTER_ROUND: bool = false;

    #[inline]
    fn iteration(&mut self) -> Result<(), phasers::Error> {
        self.0.wait()
    }

    fn meet(&mut self) -> Result<(), phasers::Error> {
        self.0.wait()
    }
}

/// EPCC's barrier test: `delay(); barrier()`, with meetings on a control barrier.
pub struct DelayThenWait<H> {
    /// The barrier under test.
    pub handle: H,
    /// This thread's place in the control barrier.
    pub control: Participant,
    /// Iterations of [`delay`] before each barrier.
    pub delay: u64,
}

impl<H: WaitHandle> Body for DelayThenWait<H> {
    const SYNCHRONIZED: bool = true;
    const MEETS_AFTER_ROUND: bool = true;

    #[inline]
    fn iteration(&mut self) -> Result<(), phasers::Error> {
        delay(self.delay);
        self.handle.wait()
    }

    fn meet(&mut self) -> Result<(), phasers::Error> {
        self.control.wait().map(drop)
    }
}

/// EPCC's reference loop: the same delays with no barrier between them.
pub struct DelayOnly {
    /// This thread's place in the control barrier.
    pub control: Participant,
    /// Iterations of [`delay`] per iteration.
    pub delay: u64,
}

impl Body for DelayOnly {
    const SYNCHRONIZED: bool = false;
    const MEETS_AFTER_ROUND: bool = true;

    #[inline]
    fn iteration(&mut self) -> Result<(), phasers::Error> {
        delay(self.delay);
        Ok(())
    }

    fn meet(&mut self) -> Result<(), phasers::Error> {
        self.control.wait().map(drop)
    }
}

/// One call per iteration of an operation that need not hold every thread back (a broadcast's
/// root, a collective that does not synchronize), with meetings on a control barrier before and
/// after each round.
///
/// Thread 0 finishing a round then does not mean that every thread has, and thread 0 cannot cut
/// a round short by telling the others where to stop (that needs every thread within one
/// iteration of thread 0). So the body is not `SYNCHRONIZED`: every round runs its planned
/// iterations, and the closing meeting, inside the timed span, waits for the last thread.
pub struct Looped<H> {
    /// The operation under test.
    pub op: H,
    /// This thread's place in the control barrier.
    pub control: Participant,
}

impl<H: WaitHandle> Body for Looped<H> {
    const SYNCHRONIZED: bool = false;
    const MEETS_AFTER_ROUND: bool = true;

    #[inline]
    fn iteration(&mut self) -> Result<(), phasers::Error> {
        self.op.wait()
    }

    fn meet(&mut self) -> Result<(), phasers::Error> {
        self.control.wait().map(drop)
    }
}
