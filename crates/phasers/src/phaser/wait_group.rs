//! A wait group (in the shape of `crossbeam_utils::sync::WaitGroup`) made of one phase of a phaser.
//!
//! Every handle is a signal-only registration that never signals, so phase 0 waits for each one
//! until it is dropped (which deregisters it). A waiter signals phase 0 for its own handle, keeps
//! the registration until its wait is over (so its drop is never the phaser's last leave while it
//! waits) and waits for phase 0 like any observer of the phaser. Nothing here is a protocol of
//! its own: registration, deregistration, signalling and the wait are the phaser's.

use std::time::{Duration, Instant};

use super::{Mode, Phaser, Registration};
use crate::error::{Error, Result};
use crate::primitive::Mutex;

/// Waits until a group of tasks is done: each task holds a clone and drops it when done, and
/// [`wait`](Self::wait) returns once every other clone is gone (the shape of
/// `crossbeam_utils::sync::WaitGroup`, built on a [`Phaser`]: each clone is a [`Mode::Sig`]
/// registration of one phase that never signals, so the phase completes once every clone has been
/// dropped).
///
/// - **Cloning** registers one more task; cloning while a wait is running adds a task the wait
///   waits for too (the clone's parent, not dropped yet, holds the phase until its child joined).
/// - **Dropping** a clone marks its task done, in any thread.
/// - **A panicking task** whose clone is dropped while it unwinds does not count as done: the
///   group breaks, and every waiter gets [`Error::Broken`] naming the task (by its registration
///   id) instead of a success that silently misses its work, or a hang.
/// - **Several waiters** may wait at once, each consuming its own clone; all return once the
///   other clones are gone.
///
/// A waiter that has waited past the stall time reports who it waits for, like every wait of the
/// crate (`PHASERS_STALL`, see [`crate::wait`]); [`wait_timeout`](Self::wait_timeout) and
/// [`wait_deadline`](Self::wait_deadline) give up instead. An async task waits with
/// [`wait_async`](Self::wait_async), without blocking its thread.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::WaitGroup;
///
/// let done = AtomicUsize::new(0);
/// let group = WaitGroup::new();
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         let task = group.clone();
///         let done = &done;
///         s.spawn(move || {
///             done.fetch_add(1, Ordering::SeqCst);
///             drop(task); // this task is done
///         });
///     }
///     group.wait().unwrap(); // returns once all four clones are dropped
///     assert_eq!(done.load(Ordering::SeqCst), 4);
/// });
/// ```
pub struct WaitGroup {
    handle: Handle,
}

enum Handle {
    /// This clone's registration. The lock only makes the group `Sync`, as crossbeam's is: a
    /// registration is used by one thread at a time, and cloning registers through it.
    Live(Mutex<Registration>),
    /// The group could not be made (the environment's `PHASERS_*` values are unusable), or this
    /// clone could not be registered: the error every wait of this clone returns.
    Failed(Error),
}

impl WaitGroup {
    /// A group of one task: the new handle. Clone it for every other task.
    ///
    /// It cannot fail: when the phaser under it cannot be made (a `PHASERS_WAIT`, `PHASERS_SPIN`,
    /// `PHASERS_WAKE` or `PHASERS_STALL` value that cannot be used), the error is kept, and every
    /// [`wait`](Self::wait) of the group and its clones returns it.
    ///
    /// ```
    /// use phasers::WaitGroup;
    ///
    /// let group = WaitGroup::new();
    /// let task = group.clone();
    /// assert_eq!(format!("{group:?}"), "WaitGroup { outstanding: 2 }");
    /// drop(task);
    /// assert_eq!(group.wait(), Ok(())); // the last handle does not wait at all
    ///
    /// // An unusable environment is reported by the waits, not by a panic.
    /// std::env::set_var("PHASERS_WAIT", "forever");
    /// let group = WaitGroup::new();
    /// std::env::remove_var("PHASERS_WAIT");
    /// let err = group.clone().wait().unwrap_err();
    /// assert!(err.to_string().contains("PHASERS_WAIT"));
    /// assert!(matches!(group.wait(), Err(phasers::Error::InvalidArgument { .. })));
    /// ```
    pub fn new() -> Self {
        let handle = match Phaser::builder().mode(Mode::Sig).tiers(1).build() {
            Ok((_phaser, registration)) => Handle::Live(Mutex::new(registration)),
            Err(err) => Handle::Failed(err),
        };
        WaitGroup { handle }
    }

    /// Marks this task done and waits until every other clone of the group has been dropped
    /// (including clones made while it waits).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use phasers::WaitGroup;
    ///
    /// let finished = Arc::new(AtomicBool::new(false));
    /// let group = WaitGroup::new();
    /// let task = group.clone();
    /// let flag = finished.clone();
    /// let worker = std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_millis(10));
    ///     flag.store(true, Ordering::SeqCst);
    ///     drop(task);
    /// });
    /// group.wait()?;
    /// assert!(finished.load(Ordering::SeqCst)); // set before the task's clone was dropped
    /// worker.join().unwrap();
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Broken`] when a task's clone was dropped while its thread panicked; the error
    /// [`new`](Self::new) kept, when the group could not be made.
    pub fn wait(self) -> Result<()> {
        self.wait_with(|phaser| phaser.await_phase(0))
    }

    /// [`wait`](Self::wait), giving up after `timeout` with [`Error::Timeout`], whose `missing`
    /// lists the registration ids of the clones still alive: `missing.len()` tasks are
    /// outstanding. This clone is consumed either way (its task counts as done), so unlike other
    /// timeouts of the crate it cannot be waited on again; keep another clone for that. A timeout
    /// too long for the clock to hold its end (such as [`Duration::MAX`]) never expires.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::{Error, WaitGroup};
    ///
    /// let group = WaitGroup::new();
    /// let never_done = group.clone();
    /// let err = group.wait_timeout(Duration::from_millis(5)).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { ref missing, .. } if missing.len() == 1));
    /// drop(never_done);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait), and [`Error::Timeout`].
    pub fn wait_timeout(self, timeout: Duration) -> Result<()> {
        self.wait_with(|phaser| phaser.await_phase_timeout(0, timeout))
    }

    /// [`wait`](Self::wait), giving up at `deadline` with [`Error::Timeout`] (see
    /// [`wait_timeout`](Self::wait_timeout)).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use phasers::{Error, WaitGroup};
    ///
    /// let group = WaitGroup::new();
    /// let tasks: Vec<WaitGroup> = (0..3).map(|_| group.clone()).collect();
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// let err = group.clone().wait_deadline(deadline).unwrap_err();
    /// assert!(matches!(err, Error::Timeout { ref missing, .. } if missing.len() == 4));
    /// drop(tasks);
    /// assert_eq!(group.wait_deadline(deadline), Ok(())); // nobody left: no wait at all
    /// ```
    ///
    /// # Errors
    ///
    /// As [`wait_timeout`](Self::wait_timeout).
    pub fn wait_deadline(self, deadline: Instant) -> Result<()> {
        self.wait_with(|phaser| phaser.await_phase_deadline(0, deadline))
    }

    /// Signals this clone's part, then waits with `wait` for phase 0 to complete.
    fn wait_with(self, wait: impl FnOnce(&Phaser) -> Result<u64>) -> Result<()> {
        let registration = self.signal_done()?;
        let outcome = wait(registration.phaser());
        drop(registration);
        outcome.map(|_| ())
    }

    /// What every wait does before it waits: takes this clone's registration and signals its
    /// part of phase 0. The caller keeps the registration until its wait is over, so the phase
    /// it waits for is completed by the other clones' drops, never ended by this one's: dropped
    /// after signalling, it would be a leave in phase 1, the last of which terminates the phaser.
    pub(super) fn signal_done(self) -> Result<Registration> {
        let mut registration = match self.handle {
            Handle::Live(registration) => registration
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
            Handle::Failed(err) => return Err(err),
        };
        // A signal-only signal never blocks.
        registration.signal()?;
        Ok(registration)
    }

    /// Outstanding tasks: clones alive and not waiting.
    fn outstanding(&self) -> Option<usize> {
        match &self.handle {
            Handle::Live(registration) => Some(
                registration
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .phaser()
                    .unarrived(),
            ),
            Handle::Failed(_) => None,
        }
    }
}

impl Clone for WaitGroup {
    /// Registers one more task. If it cannot be registered (the group broke because a task
    /// panicked, or it holds about two billion tasks already), the clone keeps the error for its
    /// waits, and the group is terminated, so that no wait reports success without the task.
    fn clone(&self) -> Self {
        let handle = match &self.handle {
            Handle::Live(registration) => {
                let registration = registration
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                match registration.register(Mode::Sig) {
                    Ok(child) => Handle::Live(Mutex::new(child)),
                    Err(err) => {
                        registration.phaser().force_terminate();
                        Handle::Failed(err)
                    }
                }
            }
            Handle::Failed(err) => Handle::Failed(err.clone()),
        };
        WaitGroup { handle }
    }
}

impl Default for WaitGroup {
    fn default() -> Self {
        WaitGroup::new()
    }
}

impl std::fmt::Debug for WaitGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("WaitGroup");
        match (&self.handle, self.outstanding()) {
            (Handle::Failed(err), _) => out.field("error", err),
            (_, outstanding) => out.field("outstanding", &outstanding.unwrap_or(0)),
        };
        out.finish()
    }
}
