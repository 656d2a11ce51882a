//! What a stall report says, and where it goes: the process's stall hook, or stderr.

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use super::time::STALL_ENV;

/// How reports on one kind of object speak of its episodes and members, and what they advise.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Wording {
    /// What an episode is called: "episode", "call", "phase".
    pub(crate) unit: &'static str,
    /// What the missing are called, before their list: "rank(s)", "member(s)".
    pub(crate) members: &'static str,
    /// Said instead of a list when nobody is missing: what the release may still wait for.
    pub(crate) all_arrived: &'static str,
    /// Said instead of a list when the wait cannot name whom it waits for.
    pub(crate) unnamed: &'static str,
    /// What to do about it.
    pub(crate) advice: &'static str,
}

/// Beyond this many missing members, a report's line lists the first ones and the count.
const LISTED: usize = 16;

/// A waiter's report that it has waited past its object's stall time: the object, the episode,
/// who has not arrived, and how long it has waited.
///
/// The waiter goes on waiting after the report: a stall is not an error, the late member may
/// still come. Each object reports each episode once, from whichever waiter notices first. A
/// report goes to the hook set with [`set_stall_hook`], or else to stderr as one line,
/// `phasers: ` followed by the report's [`Display`](std::fmt::Display) text.
///
/// ```
/// use std::sync::mpsc;
/// use std::time::Duration;
/// use phasers::{Algorithm, Barrier};
///
/// let (sender, reports) = mpsc::channel();
/// phasers::set_stall_hook(move |report| sender.send(report.clone()).unwrap());
///
/// let barrier = Barrier::builder(2)
///     .algorithm(Algorithm::Counting)
///     .stall_after(Duration::from_millis(50))
///     .build()?;
/// let mut handles = barrier.participants();
/// let (mut late, mut early) = (handles.pop().unwrap(), handles.pop().unwrap());
/// let report = std::thread::scope(|s| {
///     s.spawn(move || early.wait().unwrap());
///     // Rank 1 arrives once rank 0 has reported waiting for it, however slow the machine
///     // (or after 10 s, so that a missing report fails the test instead of hanging it).
///     let report = reports.recv_timeout(Duration::from_secs(10));
///     late.wait().unwrap();
///     report
/// });
/// phasers::clear_stall_hook();
///
/// let report = report.expect("rank 0 reports the stall");
/// assert!(reports.try_recv().is_err()); // one report per episode
/// assert_eq!(report.object(), "Barrier (Counting, 2 participants)");
/// assert_eq!(report.episode(), 0);
/// assert_eq!(report.missing(), Some(&[1][..]));
/// assert!(report.waited() >= Duration::from_millis(50));
/// assert!(report.to_string().contains("in episode 0 for rank(s) [1]"));
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallReport {
    object: String,
    episode: u64,
    missing: Option<Vec<usize>>,
    waited: Duration,
    wording: &'static Wording,
}

impl StallReport {
    pub(crate) fn new(
        object: String,
        episode: u64,
        missing: Option<Vec<usize>>,
        waited: Duration,
        wording: &'static Wording,
    ) -> Self {
        StallReport {
            object,
            episode,
            missing,
            waited,
            wording,
        }
    }

    /// The stalled object, its type first: `Barrier (Counting, 8 participants)`, `Team of 64`,
    /// `Phaser of 3 signallers`, `Reduction (Linear, 4 participants)`.
    ///
    /// ```
    /// # use std::sync::mpsc;
    /// # use std::time::Duration;
    /// # let (sender, reports) = mpsc::channel();
    /// # phasers::set_stall_hook(move |report| sender.send(report.clone()).unwrap());
    /// // Member 0 calls a barrier; member 1 calls once member 0 has reported waiting for it
    /// // past the stall time, 20 ms.
    /// let team = phasers::Team::builder(2).stall_after(Duration::from_millis(20)).build()?;
    /// # let mut members = team.participants();
    /// # let (mut late, mut early) = (members.pop().unwrap(), members.pop().unwrap());
    /// # let report = std::thread::scope(|s| {
    /// #     s.spawn(move || early.barrier().unwrap());
    /// #     let report = reports.recv_timeout(Duration::from_secs(10));
    /// #     late.barrier().unwrap();
    /// #     report
    /// # });
    /// # let report = report.expect("member 0 reports the stall");
    /// assert_eq!(report.object(), "Team of 2");
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn object(&self) -> &str {
        &self.object
    }

    /// The episode that has not completed: the barrier's episode, the team's or reduction's call
    /// number, the phaser's phase (each counted from 0).
    ///
    /// ```
    /// # use std::sync::mpsc;
    /// # use std::time::Duration;
    /// # let (sender, reports) = mpsc::channel();
    /// # phasers::set_stall_hook(move |report| sender.send(report.clone()).unwrap());
    /// // Member 0 calls a barrier; member 1 calls once member 0 has reported waiting for it
    /// // past the stall time, 20 ms.
    /// let team = phasers::Team::builder(2).stall_after(Duration::from_millis(20)).build()?;
    /// # let mut members = team.participants();
    /// # let (mut late, mut early) = (members.pop().unwrap(), members.pop().unwrap());
    /// # let report = std::thread::scope(|s| {
    /// #     s.spawn(move || early.barrier().unwrap());
    /// #     let report = reports.recv_timeout(Duration::from_secs(10));
    /// #     late.barrier().unwrap();
    /// #     report
    /// # });
    /// # let report = report.expect("member 0 reports the stall");
    /// assert_eq!(report.episode(), 0); // the team's first call
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Who has not arrived at the episode, in increasing order: ranks of a barrier, team or
    /// reduction, [`Registration::id`](crate::Registration::id)s of a phaser's signallers. Empty
    /// when all have arrived and the release is what is late (a completion action that does not
    /// return, for instance). `None` when the wait cannot name them: a team member waiting, after
    /// the call's opening meeting, for others to finish moving data.
    ///
    /// ```
    /// # use std::sync::mpsc;
    /// # use std::time::Duration;
    /// # let (sender, reports) = mpsc::channel();
    /// # phasers::set_stall_hook(move |report| sender.send(report.clone()).unwrap());
    /// // Member 0 calls a barrier; member 1 calls once member 0 has reported waiting for it
    /// // past the stall time, 20 ms.
    /// let team = phasers::Team::builder(2).stall_after(Duration::from_millis(20)).build()?;
    /// # let mut members = team.participants();
    /// # let (mut late, mut early) = (members.pop().unwrap(), members.pop().unwrap());
    /// # let report = std::thread::scope(|s| {
    /// #     s.spawn(move || early.barrier().unwrap());
    /// #     let report = reports.recv_timeout(Duration::from_secs(10));
    /// #     late.barrier().unwrap();
    /// #     report
    /// # });
    /// # let report = report.expect("member 0 reports the stall");
    /// assert_eq!(report.missing(), Some(&[1][..]));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn missing(&self) -> Option<&[usize]> {
        self.missing.as_deref()
    }

    /// How long the reporting waiter had waited.
    ///
    /// ```
    /// # use std::sync::mpsc;
    /// # use std::time::Duration;
    /// # let (sender, reports) = mpsc::channel();
    /// # phasers::set_stall_hook(move |report| sender.send(report.clone()).unwrap());
    /// // Member 0 calls a barrier; member 1 calls once member 0 has reported waiting for it
    /// // past the stall time, 20 ms.
    /// let team = phasers::Team::builder(2).stall_after(Duration::from_millis(20)).build()?;
    /// # let mut members = team.participants();
    /// # let (mut late, mut early) = (members.pop().unwrap(), members.pop().unwrap());
    /// # let report = std::thread::scope(|s| {
    /// #     s.spawn(move || early.barrier().unwrap());
    /// #     let report = reports.recv_timeout(Duration::from_secs(10));
    /// #     late.barrier().unwrap();
    /// #     report
    /// # });
    /// # let report = report.expect("member 0 reports the stall");
    /// assert!(report.waited() >= Duration::from_millis(20));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn waited(&self) -> Duration {
        self.waited
    }
}

impl std::fmt::Display for StallReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let wording = self.wording;
        write!(
            f,
            "{} has waited {:.1?} in {} {} ",
            self.object, self.waited, wording.unit, self.episode
        )?;
        match self.missing.as_deref() {
            None => f.write_str(wording.unnamed)?,
            Some([]) => f.write_str(wording.all_arrived)?,
            Some(missing) if missing.len() <= LISTED => {
                write!(f, "for {} {missing:?}", wording.members)?
            }
            Some(missing) => {
                write!(f, "for {} [", wording.members)?;
                for rank in &missing[..LISTED] {
                    write!(f, "{rank}, ")?;
                }
                write!(f, "...] ({} in all)", missing.len())?;
            }
        }
        write!(
            f,
            "; {}. The wait goes on (the builder's stall_after or {STALL_ENV} sets when this is \
             reported; off turns it off)",
            wording.advice
        )
    }
}

type Hook = Arc<dyn Fn(&StallReport) + Send + Sync>;

/// Where reports go instead of stderr; std's lock, as reports never happen under loom.
static HOOK: RwLock<Option<Hook>> = RwLock::new(None);

/// Sends every stall report of this process, from every object, to `hook` instead of stderr,
/// replacing any hook set before. The hook runs in the reporting waiter's thread, which waits on
/// once it returns; a hook that panics has its report printed to stderr instead.
///
/// ```
/// use std::sync::mpsc;
/// use std::time::Duration;
/// use phasers::Team;
///
/// // The hook only passes the line on: a hook that panics has its report printed instead.
/// let (sender, lines) = mpsc::channel();
/// phasers::set_stall_hook(move |report| sender.send(report.to_string()).unwrap());
/// let team = Team::builder(2).stall_after(Duration::from_millis(50)).build()?;
/// let mut members = team.participants();
/// let (mut second, mut first) = (members.pop().unwrap(), members.pop().unwrap());
/// let line = std::thread::scope(|s| {
///     s.spawn(move || second.barrier().unwrap());
///     // Member 0 is late to call 0: it calls once member 1 has reported waiting for it.
///     let line = lines.recv_timeout(Duration::from_secs(10));
///     first.barrier().unwrap();
///     line
/// });
/// phasers::clear_stall_hook();
/// let line = line.expect("member 1 reports the stall");
/// assert!(line.starts_with("Team of 2 has waited"), "{line}");
/// assert!(line.contains("for member(s) [0]"), "{line}");
/// # Ok::<(), phasers::Error>(())
/// ```
pub fn set_stall_hook(hook: impl Fn(&StallReport) + Send + Sync + 'static) {
    *HOOK.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(hook));
}

/// Removes the hook set by [`set_stall_hook`]: reports go to stderr again.
///
/// ```
/// phasers::set_stall_hook(|_| {});
/// phasers::clear_stall_hook();
/// assert!(!phasers::wait::has_stall_hook());
/// ```
pub fn clear_stall_hook() {
    *HOOK.write().unwrap_or_else(PoisonError::into_inner) = None;
}

/// Whether a hook set by [`set_stall_hook`] receives the reports (else they go to stderr).
///
/// ```
/// phasers::set_stall_hook(|report| eprintln!("stalled: {report}"));
/// assert!(phasers::wait::has_stall_hook());
/// phasers::clear_stall_hook();
/// assert!(!phasers::wait::has_stall_hook());
/// ```
pub fn has_stall_hook() -> bool {
    HOOK.read()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some()
}

/// Hands `report` to the hook, or prints it on stderr.
pub(crate) fn deliver(report: &StallReport) {
    // Cloned out of the lock, so that a hook may set or clear the hook without deadlocking.
    let hook = HOOK.read().unwrap_or_else(PoisonError::into_inner).clone();
    let note = match hook {
        None => "",
        Some(hook) => match catch_unwind(AssertUnwindSafe(|| hook(report))) {
            Ok(()) => return,
            Err(_) => " (the stall hook panicked, so the report is printed here)",
        },
    };
    // A closed stderr is no reason to disturb the waiter.
    let _ = writeln!(std::io::stderr(), "phasers: {report}{note}");
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDING: Wording = Wording {
        unit: "call",
        members: "member(s)",
        all_arrived: "although every member has arrived",
        unnamed: "for members it cannot name",
        advice: "make the same calls",
    };

    fn report(missing: Option<Vec<usize>>) -> String {
        StallReport::new(
            "Team of 64".to_string(),
            7,
            missing,
            Duration::from_millis(10_040),
            &WORDING,
        )
        .to_string()
    }

    #[test]
    fn a_report_is_one_line_naming_the_object_episode_missing_and_time() {
        let line = report(Some(vec![13]));
        assert_eq!(
            line,
            "Team of 64 has waited 10.0s in call 7 for member(s) [13]; make the same calls. The \
             wait goes on (the builder's stall_after or PHASERS_STALL sets when this is reported; \
             off turns it off)"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn empty_unknown_and_long_lists_read_well() {
        assert!(report(Some(vec![])).contains("call 7 although every member has arrived;"));
        assert!(report(None).contains("call 7 for members it cannot name;"));
        let long = report(Some((0..40).collect()));
        assert!(
            long.contains("for member(s) [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ...] (40 in all);"),
            "{long}"
        );
    }
}
