//! The stall watchdog: one thread per process that reports the stalls of async tasks, which
//! cannot report their own (a stalled task is never polled again).
//!
//! # What a task pays
//!
//! Nothing per episode beyond one load, and nothing at all where no task waits: a task whose poll
//! leaves it waiting calls `watch_task`, which loads the object's parked word
//! ([`Stall::task_parked`](super::Stall)); only the first task of an episode writes it (a
//! `fetch_max`), and only the first task of the object's life takes the list's lock, to add a
//! [`Weak`](std::sync::Weak) reference to the object. No timer is made, and nobody is woken: an earlier design
//! that armed a timer per object and episode made every episode start and drop one, and slowed
//! 2-64 task runs by 30% to 3x.
//!
//! # What the watchdog does
//!
//! The thread starts with the first object added, and sleeps a quarter of the smallest stall time
//! among the live objects between looks, so that a report comes between one and one and a quarter
//! stall times after the task was left waiting, while a process whose stall times are all the
//! default 10 s looks only every 2.5 s. At each look, for each object still alive, it notes when
//! it first saw the parked word hold its current value: once that is a stall time ago, and
//! someone is missing from that episode, it reports it through the blocking waiters' latch
//! ([`Watch::report_for_tasks`](super::Watch)): the same words, once per episode, whoever notices first.
//! Objects that were dropped leave the list; the list holds [`Weak`](std::sync::Weak) references only, upgraded
//! for the moment of a look, so the watchdog keeps nothing alive. It wakes no task.
//!
//! # What it cannot see
//!
//! A task marks the episode it waits in, and nothing when it stops waiting. So the watchdog tells
//! a stalled episode from a finished one by who is missing, and reports nothing for an episode
//! everyone arrived at but whose release is late (a completion action that does not return),
//! which a blocking waiter would report. A task that gave up (its future timed out or was
//! dropped) while others are still missing is reported as waiting, as the object still is
//! stalled. A team member waiting for the others to finish moving data is likewise not reported.
//! The time a report gives counts from the watchdog's first look at the episode, so it may be
//! short by up to one period.
//!
//! Not built under loom (no thread, no clock there): `watch_task` does nothing.

#[cfg(not(phasers_loom))]
pub(crate) use imp::watch_task;

/// Under loom tasks mark nothing: reports are off there ([`Stall::new`](super::Stall)).
#[cfg(phasers_loom)]
#[inline]
pub(crate) fn watch_task<T>(_object: &crate::primitive::Arc<T>, _episode: u64) {}

#[cfg(not(phasers_loom))]
mod imp {
    use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
    use std::time::{Duration, Instant};

    use super::super::{Watch, Watched};

    /// The shortest sleep between looks, however small a stall time: a look reads every object's
    /// word, and a test's 1 ms stall time should not make the thread spin.
    const MIN_PERIOD: Duration = Duration::from_millis(1);

    /// One object a task has waited on.
    struct Entry {
        object: Weak<dyn Watched + Send + Sync>,
        /// The parked word at the last look, and when the watchdog first saw it hold that value.
        seen: u64,
        since: Instant,
        /// The episode in `seen` was reported (or found complete): nothing more to do for it.
        settled: bool,
    }

    struct List {
        entries: Vec<Entry>,
        started: bool,
    }

    static LIST: Mutex<List> = Mutex::new(List {
        entries: Vec::new(),
        started: false,
    });
    /// Wakes the thread when an object joins, whose stall time may be shorter than its sleep.
    static JOINED: Condvar = Condvar::new();

    /// A task's poll left it waiting in `episode` on `object`: marks the episode, and adds the
    /// object to the watchdog's list the first time (see the module docs for the cost).
    #[inline]
    pub(crate) fn watch_task<T: Watched + Send + Sync + 'static>(object: &Arc<T>, episode: u64) {
        let stall = object.stall();
        if stall.after().is_some() && stall.task_parked(episode) {
            let weak: Weak<T> = Arc::downgrade(object);
            join(weak);
        }
    }

    /// Adds an object to the list, starting the thread the first time.
    #[cold]
    #[inline(never)]
    fn join(object: Weak<dyn Watched + Send + Sync>) {
        let mut list = LIST.lock().unwrap_or_else(PoisonError::into_inner);
        list.entries.push(Entry {
            object,
            seen: 0,
            since: Instant::now(),
            settled: false,
        });
        if !list.started {
            // A thread that cannot be spawned (resources exhausted) only costs the reports: the
            // tasks wait on, as they did before reports existed. The next object tries again.
            let spawned = std::thread::Builder::new()
                .name("phasers-stall-watchdog".into())
                .spawn(run);
            list.started = spawned.is_ok();
        }
        drop(list);
        JOINED.notify_one();
    }

    /// The thread: looks, then sleeps a quarter of the smallest stall time, for ever (a thread
    /// whose list is empty sleeps until an object joins).
    fn run() {
        let mut list = LIST.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let (due, period) = look(&mut list.entries);
            if !due.is_empty() {
                // Reported outside the lock: a hook may make objects whose tasks join the list.
                drop(list);
                for (object, episode, since) in due {
                    Watch::arrivals(&*object).report_for_tasks(episode, since);
                }
                list = LIST.lock().unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            list = match period {
                Some(period) => {
                    JOINED
                        .wait_timeout(list, period)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => JOINED.wait(list).unwrap_or_else(PoisonError::into_inner),
            };
        }
    }

    type Due = Vec<(Arc<dyn Watched + Send + Sync>, u64, Instant)>;

    /// One look at every object: drops the dead, notes the episodes that moved, and returns the
    /// ones to report (marked settled here, as the report's latch makes a second one a no-op
    /// anyway) and the sleep until the next look (`None` when no object is left).
    fn look(entries: &mut Vec<Entry>) -> (Due, Option<Duration>) {
        let now = Instant::now();
        let mut due = Vec::new();
        let mut smallest: Option<Duration> = None;
        entries.retain_mut(|entry| {
            let Some(object) = entry.object.upgrade() else {
                return false;
            };
            let Some(after) = object.stall().after() else {
                return true; // never joins: `watch_task` checks
            };
            smallest = Some(smallest.map_or(after, |s| s.min(after)));
            let parked = object.stall().parked();
            if parked != entry.seen {
                entry.seen = parked;
                entry.since = now;
                entry.settled = false;
            } else if parked != 0 && !entry.settled && now.duration_since(entry.since) >= after {
                let episode = parked - 1;
                // Reported, or found complete (nobody missing, which cannot change for this
                // episode): nothing more to do until a task waits in a later one.
                entry.settled = true;
                due.push((object, episode, entry.since));
            }
            true
        });
        let period = smallest.map(|after| (after / 4).max(MIN_PERIOD));
        (due, period)
    }
}
