//! Waiting for a phase to complete without a registration (`java.util.concurrent.Phaser`'s
//! `awaitAdvance`): an observer that holds only the [`Phaser`] handle.
//!
//! An observer holds no phase back and has no place in the tree: it waits on the release word that
//! every registered waiter watches, through the same waiter (spin, then yield, then park; the
//! broken state, the deadline and stall reports checked on the slow path). So it adds no protocol
//! of its own: a release it misses is impossible for the same reasons as for a registered waiter.

use std::time::{Duration, Instant};

use super::Phaser;
use crate::error::Result;
// The docs' links: the timeouts' error is made by `Core::timed_out`.
#[cfg(doc)]
use crate::error::Error;
use crate::primitive::Ordering;
use crate::wait::{Deadline, SpinBudget, Stop, Waiter, Watch};

impl Phaser {
    /// Waits for `phase` to complete, without being registered: returns the phase in progress
    /// once it differs from `phase` (Java's `awaitAdvance`).
    ///
    /// - When `phase` already completed, returns the current [`phase`](Self::phase) at once.
    /// - When `phase` is the phase in progress, waits until it completes and returns the new phase
    ///   (at least `phase + 1`; more if later phases completed meanwhile).
    /// - When `phase` is a later phase than the one in progress, returns the current phase at once,
    ///   as Java does: it cannot be the phase in progress, so there is nothing to wait for. Wait
    ///   for a later phase by calling again with each phase returned. Every phase up to `u64::MAX`
    ///   is such a phase on a live phaser.
    ///
    /// The observer does not hold phases back, and it sees the effects of every signal of the
    /// phases completed, like a registered waiter. On a phaser with a
    /// [`next_single`](super::Registration::next_single) action a phase completes once its action
    /// returned.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let observer = phaser.clone();
    /// std::thread::scope(|s| {
    ///     let watching = s.spawn(move || observer.await_phase(0));
    ///     main.next().unwrap();
    ///     assert_eq!(watching.join().unwrap(), Ok(1));
    /// });
    /// assert_eq!(phaser.await_phase(0)?, 1); // phase 0 completed: at once
    /// assert_eq!(phaser.await_phase(u64::MAX)?, 1); // far ahead: at once
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Terminated`] (or [`Error::Broken`]) when the phaser ends before `phase` completes,
    /// including when it had ended already; a phase that completed before the end is still
    /// reported as completed.
    pub fn await_phase(&self, phase: u64) -> Result<u64> {
        self.await_until(phase, Deadline::Never)
    }

    /// [`await_phase`](Self::await_phase), giving up after `timeout` with [`Error::Timeout`],
    /// which names the registrations that have not signalled `phase`. A timeout too long for the
    /// clock to hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let late = main.register(Mode::SigWait)?;
    /// main.signal()?;
    /// let err = phaser.await_phase_timeout(0, Duration::from_millis(1)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, ref missing, .. } if *missing == [late.id()]));
    /// drop(late); // it deregisters: phase 0 completes without it
    /// assert_eq!(phaser.await_phase_timeout(0, Duration::MAX)?, 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`await_phase`](Self::await_phase), and [`Error::Timeout`] when the phase is still in
    /// progress after `timeout`.
    pub fn await_phase_timeout(&self, phase: u64, timeout: Duration) -> Result<u64> {
        self.await_until(phase, Deadline::after(timeout))
    }

    /// [`await_phase`](Self::await_phase), giving up at `deadline` with [`Error::Timeout`]. A
    /// deadline already past still returns the new phase if `phase` has completed.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let soon = Instant::now() + Duration::from_millis(1);
    /// let err = phaser.await_phase_deadline(0, soon).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { episode: 0, .. }));
    /// main.next()?;
    /// assert_eq!(phaser.await_phase_deadline(0, soon)?, 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`await_phase_timeout`](Self::await_phase_timeout).
    pub fn await_phase_deadline(&self, phase: u64, deadline: Instant) -> Result<u64> {
        self.await_until(phase, Deadline::At(deadline))
    }

    /// What a wait for `phase` returns without waiting, if anything: the checks every form of
    /// [`await_phase`](Self::await_phase) makes first, in this order, so the async form reports
    /// what the blocking one does.
    pub(super) fn settled(&self, phase: u64) -> Option<Result<u64>> {
        let core = &self.core;
        let current = core.phase();
        if current > phase {
            return Some(Ok(current));
        }
        if core.is_stopped_for(phase) {
            return Some(Err(core.stopped(phase)));
        }
        if current < phase {
            return Some(Ok(current));
        }
        None
    }

    /// The probe of a wait for `phase`: the phase in progress, once it is past `phase`.
    pub(super) fn past(&self, phase: u64) -> Option<u64> {
        let now = self.core.phase();
        (now > phase).then_some(now)
    }

    fn await_until(&self, phase: u64, deadline: Deadline) -> Result<u64> {
        if let Some(settled) = self.settled(phase) {
            return settled;
        }
        let core = &self.core;
        // A waiter of its own: the observer has no registration to keep a spin budget in. The
        // plan counts it among the phaser's waiters.
        let plan = core
            .tuning
            .plan(core.registrations.load(Ordering::Relaxed).saturating_add(1));
        let budget = SpinBudget::new(plan);
        let waiter = Waiter::new(
            &plan,
            &budget,
            deadline,
            &core.broken,
            phase,
            Some(Watch::arrivals(&**core)),
        );
        match waiter.until_probe(&core.release, || self.past(phase)) {
            Ok(released) => Ok(released),
            Err(Stop::Broken) => Err(core.stopped(phase)),
            Err(Stop::TimedOut) => Err(core.timed_out(phase)),
        }
    }
}
