//! Stall reports: a waiter that has slept past its object's stall time says so, once per object
//! and episode, naming who it waits for.
//!
//! Checks cannot catch every mistake that leaves waiters waiting for ever: a participant that
//! silently stops calling (its thread blocked elsewhere, or its loop ended without dropping its
//! handle), or a team whose checks are off and whose members' calls differ. The waiters then
//! sleep, which is right (the late one may come), but they should not sleep silently.
//!
//! # Cost
//!
//! Nothing on the fast path: a waiter looks at the clock only once its spin phase ran out (as it
//! does for deadlines), and it sleeps with a timeout of the earlier of its deadline and its stall
//! moment, so the stall is noticed by a waiter that was asleep anyway. The report itself is cold.
//!
//! # One report per object and episode
//!
//! Every waiter of a stalled episode reaches its stall moment; the first to wake claims the
//! episode in the object's latch ([`Stall::claim`]), a word holding the last reported episode
//! plus one, and the others find it claimed and go back to sleep. The latch only moves forward,
//! so an episode reported later than a newer one is dropped: waiters of a newer episode have
//! already said what holds the object up.
//!
//! # Async tasks
//!
//! A task has no sleep with a timeout to notice its stall in, and a stalled task is never polled
//! again. So a task whose poll leaves it waiting marks the object instead ([`Stall::task_parked`],
//! one load when another task already marked the episode), and the process's stall watchdog
//! (`watchdog.rs`) reports for it through [`Watch::report_for_tasks`]: the same report, through
//! the same latch, so an episode that threads and tasks both wait in is reported once.
//!
//! # Under loom
//!
//! Loom has no clock: stall reports are off in loom builds, so the models explore the same
//! protocol as before (untimed sleeps), and tasks mark nothing.

use std::time::{Duration, Instant};

use super::report::{deliver, StallReport, Wording};
#[cfg(not(phasers_loom))]
use crate::primitive::AtomicBool;
use crate::primitive::{AtomicU64, Ordering};

/// One object's stall time and its report latch.
pub(crate) struct Stall {
    after: Option<Duration>,
    /// The last episode reported, plus one; 0 before the first report.
    reported: AtomicU64,
    /// The latest episode an async task was left waiting in, plus one; 0 before the first. Only
    /// the first task to wait in an episode writes it; the watchdog reads it. Compiled out under
    /// loom, as all that uses it: no watchdog there (see `watchdog.rs`).
    #[cfg(not(phasers_loom))]
    parked: AtomicU64,
    /// The object is in the watchdog's list (it is added once, by the first task that waits).
    #[cfg(not(phasers_loom))]
    watched: AtomicBool,
}

impl Stall {
    /// A latch for an object whose waiters report after `after` (never for `None`). Loom builds
    /// never report (loom has no clock).
    pub(crate) fn new(after: Option<Duration>) -> Self {
        Stall {
            after: after.filter(|_| !cfg!(phasers_loom)),
            reported: AtomicU64::new(0),
            #[cfg(not(phasers_loom))]
            parked: AtomicU64::new(0),
            #[cfg(not(phasers_loom))]
            watched: AtomicBool::new(false),
        }
    }

    /// Marks that an async task's poll left it waiting in `episode`. `true` for the one call that
    /// should add the object to the watchdog's list (the first of the object's life). The tasks
    /// after the first of an episode only load the word, so the line is written once per episode,
    /// not once per task. `Relaxed`: the watchdog only needs to see the word move eventually.
    #[cfg(not(phasers_loom))]
    #[inline]
    pub(crate) fn task_parked(&self, episode: u64) -> bool {
        if self.parked.load(Ordering::Relaxed) > episode {
            return false;
        }
        self.parked.fetch_max(episode + 1, Ordering::Relaxed);
        !self.watched.load(Ordering::Relaxed) && !self.watched.swap(true, Ordering::Relaxed)
    }

    /// The latest episode a task was left waiting in, plus one; 0 before the first.
    #[cfg(not(phasers_loom))]
    pub(crate) fn parked(&self) -> u64 {
        self.parked.load(Ordering::Relaxed)
    }

    /// Whether `episode` (or a later one) was reported already.
    #[cfg(not(phasers_loom))]
    fn has_reported(&self, episode: u64) -> bool {
        self.reported.load(Ordering::Relaxed) > episode
    }

    /// The stall time in force; `None` when reports are off.
    pub(crate) fn after(&self) -> Option<Duration> {
        self.after
    }

    /// Claims the report of `episode`: `true` for exactly one caller per episode, and for none
    /// once a later episode was reported. `Relaxed` is enough: the latch orders nothing else.
    fn claim(&self, episode: u64) -> bool {
        let mut seen = self.reported.load(Ordering::Relaxed);
        while seen <= episode {
            match self.reported.compare_exchange_weak(
                seen,
                episode.saturating_add(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
        false
    }
}

/// An object whose waiters report stalls: its latch, how it is named, and who it waits for.
pub(crate) trait Watched {
    /// The object's stall time and latch.
    fn stall(&self) -> &Stall;
    /// How reports on this kind of object speak.
    fn wording(&self) -> &'static Wording;
    /// The object as a report names it, e.g. "Team of 64".
    fn describe(&self) -> String;
    /// Who has not arrived at `episode`, in increasing order: ranks, or registration ids.
    fn missing(&self, episode: u64) -> Vec<usize>;
}

/// What a waiter reports on if it stalls: the object, and whether its wait is one the object
/// can name the missing members of.
#[derive(Clone, Copy)]
pub(crate) struct Watch<'a> {
    object: &'a dyn Watched,
    names_missing: bool,
}

impl<'a> Watch<'a> {
    /// A wait for the others to arrive: its report names those that have not.
    pub(crate) fn arrivals(object: &'a dyn Watched) -> Self {
        Watch {
            object,
            names_missing: true,
        }
    }

    /// A wait for others to finish their part of an episode they all arrived at: its report
    /// cannot name them.
    pub(crate) fn progress(object: &'a dyn Watched) -> Self {
        Watch {
            object,
            names_missing: false,
        }
    }

    /// When a wait whose spin phase ran out at `since` has stalled; `None` when reports are off
    /// (or the stall time is too long to reach).
    pub(crate) fn stalls_at(&self, since: Instant) -> Option<Instant> {
        since.checked_add(self.object.stall().after()?)
    }

    /// Reports that a wait for `episode`, which has been waiting since `since`, has stalled,
    /// unless another waiter already reported this episode or a later one.
    #[cold]
    #[inline(never)]
    pub(crate) fn report(&self, episode: u64, since: Instant) {
        let object = self.object;
        if !object.stall().claim(episode) {
            return;
        }
        let missing = self.names_missing.then(|| object.missing(episode));
        deliver(&StallReport::new(
            object.describe(),
            episode,
            missing,
            since.elapsed(),
            object.wording(),
        ));
    }
}

#[cfg(not(phasers_loom))]
impl Watch<'_> {
    /// The watchdog's report for tasks left waiting in `episode` since at least `since`: as
    /// [`report`](Self::report), but only while someone is missing. A task marks the episode it
    /// waits in and nothing when that wait ends, so an episode nobody is missing from is one that
    /// completed (or whose release is late, which a blocking waiter reports but the watchdog
    /// cannot tell apart). `true` once the episode is reported, by this call or an earlier one.
    #[cold]
    pub(crate) fn report_for_tasks(&self, episode: u64, since: Instant) -> bool {
        let object = self.object;
        if object.stall().has_reported(episode) {
            return true;
        }
        let missing = object.missing(episode);
        if missing.is_empty() {
            return false;
        }
        if object.stall().claim(episode) {
            deliver(&StallReport::new(
                object.describe(),
                episode,
                Some(missing),
                since.elapsed(),
                object.wording(),
            ));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latch_reports_each_episode_once_and_never_an_older_one() {
        let stall = Stall::new(Some(Duration::from_secs(1)));
        assert!(stall.claim(3));
        assert!(!stall.claim(3));
        assert!(!stall.claim(2));
        assert!(stall.claim(4));
        assert!(!stall.claim(4));
        assert!(stall.claim(9));
    }

    #[test]
    fn one_of_many_racing_waiters_claims_an_episode() {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

        const EPISODES: u64 = 200;
        let stall = Stall::new(Some(Duration::from_secs(1)));
        let claims: Vec<AtomicUsize> = (0..EPISODES).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for episode in 0..EPISODES {
                        if stall.claim(episode) {
                            claims[episode as usize].fetch_add(1, Relaxed);
                        }
                    }
                });
            }
        });
        // A thread that falls behind finds later episodes claimed and skips its older ones, so
        // an episode may go unreported, but none twice, and the newest always once.
        assert!(claims.iter().all(|c| c.load(Relaxed) <= 1));
        assert_eq!(claims[EPISODES as usize - 1].load(Relaxed), 1);
    }
}
