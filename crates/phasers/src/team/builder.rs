//! Creating a team and handing out its members.

use std::time::Duration;

use super::member::Member;
use super::shared::TeamShared;
use crate::error::{Error, Result};
use crate::primitive::{Arc, Ordering};
use crate::wait::{Tuning, WaitPolicy};

/// The most members a team may have (the same bound as a [`Reduction`](crate::Reduction)).
pub const MAX_MEMBERS: usize = u16::MAX as usize;

/// The environment variable that turns checked mode on or off for teams that do not choose
/// explicitly: `on`/`1`/`true` or `off`/`0`/`false`.
pub const CHECKED_ENV: &str = "PHASERS_CHECKED";

/// A set of members with ranks `0..size`, on which collectives run (seed 004's teams).
///
/// `Team::new(n)` makes the team; [`members`](Self::members) hands out one [`Member`] per rank
/// to move into threads. Members split into sub-teams with [`Member::split`] and
/// [`Member::split_grid`].
///
/// **Checked mode** makes every call's opening meeting compare all members' arguments (the
/// collective, element type, lengths, root, sync mode and operator), so that mismatched calls
/// return [`Error::Mismatch`] on every member, naming both sides, before any buffer is touched.
/// It is on by default in debug builds and off in release builds; `PHASERS_CHECKED=on` (or
/// [`TeamBuilder::checked`]) turns it on in release. Without it, calls that differ remain
/// memory-safe (each member checks a partner's post before touching its buffers) but may return
/// unspecified outputs or wait forever; bad arguments of a member's own (a root out of range, an
/// output of the wrong length) are reported to every member in both modes.
///
/// ```
/// use phasers::{Op, Team};
///
/// let team = Team::builder(4).checked(true).build()?;
/// std::thread::scope(|s| {
///     for mut member in team.members() {
///         s.spawn(move || {
///             let mut sum = [0u64];
///             member.allreduce(&[1], &mut sum, Op::Sum).unwrap();
///             assert_eq!(sum, [4]);
///             member.barrier().unwrap();
///         });
///     }
/// });
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// # Stalls
///
/// A member that stops calling collectives (its thread blocked elsewhere, or its loop over
/// without dropping the member), or calls that differ in an unchecked team, leave the others
/// waiting. Once they have waited for the stall time ([`TeamBuilder::stall_after`], else
/// `PHASERS_STALL`, else 10 s), one of them reports it, once per call, naming the members that
/// have not begun the call (see [`StallReport`](crate::StallReport)), and they wait on.
pub struct Team {
    shared: Arc<TeamShared>,
}

impl Team {
    /// A team of `size` members, with the default checked mode and wait policy.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 or more than [`MAX_MEMBERS`] members, or a bad
    /// `PHASERS_CHECKED`, `PHASERS_WAIT`, `PHASERS_SPIN` or `PHASERS_STALL`.
    pub fn new(size: usize) -> Result<Self> {
        TeamBuilder::new(size).build()
    }

    /// A builder, to choose checked mode and the wait policy.
    pub fn builder(size: usize) -> TeamBuilder {
        TeamBuilder::new(size)
    }

    /// The number of members.
    pub fn size(&self) -> usize {
        self.shared.size
    }

    /// Whether calls are checked for matching arguments.
    pub fn is_checked(&self) -> bool {
        self.shared.checked
    }

    /// The wait policy in force (after `PHASERS_WAIT`).
    pub fn wait_policy(&self) -> WaitPolicy {
        self.shared.tuning.policy()
    }

    /// How long a waiting member waits before it reports a stall, after `stall_after` and
    /// `PHASERS_STALL`; `None` when stalls are not reported.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Team;
    ///
    /// let team = Team::builder(4).stall_after(Duration::from_secs(30)).build()?;
    /// assert_eq!(team.stall_after(), Some(Duration::from_secs(30)));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(&self) -> Option<Duration> {
        self.shared.stall.after()
    }

    /// The members of every rank not yet handed out, in rank order: all of them on the first
    /// call, none after that.
    pub fn members(&self) -> Vec<Member> {
        (0..self.shared.size)
            .filter_map(|rank| self.member(rank).ok())
            .collect()
    }

    /// The member of one rank.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `rank` is out of range or its member was already handed
    /// out (two handles for one rank would corrupt the team).
    pub fn member(&self, rank: usize) -> Result<Member> {
        let size = self.shared.size;
        let claimed = self.shared.claimed.get(rank).ok_or_else(|| {
            Error::invalid(format!(
                "rank {rank} is out of range: this team has members 0 to {}",
                size - 1
            ))
        })?;
        if claimed.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid(format!(
                "the member of rank {rank} was already handed out; each rank has exactly one"
            )));
        }
        Ok(Member::new(Arc::clone(&self.shared), rank))
    }
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("size", &self.shared.size)
            .field("checked", &self.shared.checked)
            .field("wait_policy", &self.wait_policy())
            .finish()
    }
}

/// Options for a [`Team`].
#[derive(Debug, Clone)]
pub struct TeamBuilder {
    size: usize,
    checked: Option<bool>,
    policy: WaitPolicy,
    stall_after: Option<Duration>,
}

impl TeamBuilder {
    /// A builder for a team of `size` members.
    pub fn new(size: usize) -> Self {
        TeamBuilder {
            size,
            checked: None,
            policy: WaitPolicy::Auto,
            stall_after: None,
        }
    }

    /// Turns checked mode on or off, whatever the build and `PHASERS_CHECKED` say.
    pub fn checked(mut self, checked: bool) -> Self {
        self.checked = Some(checked);
        self
    }

    /// How members wait (spin, yield, park); `PHASERS_WAIT` overrides it.
    pub fn wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How long a waiting member waits before it reports a stall (see [`crate::wait`]'s
    /// "Stalls"): once per call, naming the members that have not begun it, then it waits on.
    /// `Duration::MAX` or `Duration::ZERO` turns the reports off. Without it, `PHASERS_STALL`
    /// decides, else 10 s. Sub-teams made by `split` inherit it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Team;
    ///
    /// let team = Team::builder(4).stall_after(Duration::MAX).build()?;
    /// assert_eq!(team.stall_after(), None);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn stall_after(mut self, after: Duration) -> Self {
        self.stall_after = Some(after);
        self
    }

    /// Makes the team.
    ///
    /// # Errors
    ///
    /// As [`Team::new`].
    pub fn build(self) -> Result<Team> {
        if self.size == 0 || self.size > MAX_MEMBERS {
            return Err(Error::invalid(format!(
                "a team needs 1 to {MAX_MEMBERS} members, not {}",
                self.size
            )));
        }
        let checked = match self.checked {
            Some(checked) => checked,
            None => checked_from_env()?.unwrap_or(cfg!(debug_assertions)),
        };
        let tuning = Tuning::from_env(self.policy)?.with_stall_after(self.stall_after);
        Ok(Team {
            shared: Arc::new(TeamShared::new(self.size, checked, tuning)),
        })
    }
}

/// `PHASERS_CHECKED`, if set.
fn checked_from_env() -> Result<Option<bool>> {
    let Ok(text) = std::env::var(CHECKED_ENV) else {
        return Ok(None);
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Ok(Some(true)),
        "off" | "0" | "false" | "no" => Ok(Some(false)),
        _ => Err(Error::invalid(format!(
            "{CHECKED_ENV}={text:?} is not a switch; set it to on or off, or unset it"
        ))),
    }
}
