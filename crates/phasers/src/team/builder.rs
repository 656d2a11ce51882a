//! Creating a team and handing out its members.

use std::time::Duration;

use super::member::Member;
use super::shared::TeamShared;
use crate::error::{Error, Result};
use crate::primitive::{Arc, Ordering};
use crate::reduce::ReduceAlgorithm;
use crate::wait::{WaitConfig, WaitPolicy};

/// The most members a team may have (the same bound as a [`Reduction`](crate::Reduction)).
///
/// ```
/// use phasers::{team::MAX_MEMBERS, Error, Team};
///
/// assert_eq!(Team::new(MAX_MEMBERS)?.parties(), MAX_MEMBERS);
/// assert!(matches!(Team::new(MAX_MEMBERS + 1), Err(Error::InvalidArgument { .. })));
/// # Ok::<(), phasers::Error>(())
/// ```
pub const MAX_MEMBERS: usize = u16::MAX as usize;

/// The environment variable that turns checked calls off (or on) for teams that do not choose with
/// the builder: `on`/`1`/`true` or `off`/`0`/`false`. Teams are checked when it is unset.
///
/// ```
/// use phasers::team::CHECKED_ENV;
/// use phasers::Team;
///
/// assert_eq!(CHECKED_ENV, "PHASERS_CHECKED");
/// // The builder's choice wins over the variable.
/// assert!(Team::builder(2).checked(true).build()?.is_checked());
/// # Ok::<(), phasers::Error>(())
/// ```
pub const CHECKED_ENV: &str = "PHASERS_CHECKED";

/// A set of members with ranks `0..size`, on which collectives run (seed 004's teams).
///
/// `Team::new(n)` makes the team; [`participants`](Self::participants) hands out one
/// [`Member`] per rank to move into threads. Members split into sub-teams with
/// [`Member::split`] and [`Member::split_grid`].
///
/// # Checked calls
///
/// Every call is checked by default, in release builds as in debug: when members' calls differ in
/// the collective, the element type, a length, the root, the operator, the sync mode, or blocking
/// against non-blocking, every member gets [`Error::Mismatch`] naming two members and what each
/// passed, before any buffer is touched, instead of a hang or garbage. The team stays usable for
/// the next matched call.
///
/// **What it costs.** Each member folds its call's arguments into one word (a keyed hash, a few
/// nanoseconds) and adds it to the arrival it makes anyway at the call's opening meeting; the last
/// arrival compares the sum with its own. A matched call moves no extra cache line, so a checked
/// team runs within the noise of an unchecked one (`phasers bench collectives --ops checked`
/// measures it; BENCHMARKS.md has the table). Only a mismatch reads every member's arguments, to
/// name the difference. A mismatch escapes with probability about 2^-47 per call (the hash is
/// keyed per team, so no choice of arguments makes it more likely); memory safety never rests on
/// the check.
///
/// **What [`unchecked`](TeamBuilder::unchecked) gives up.** It saves the hash, a few nanoseconds
/// per call. Calls that differ then stay memory-safe (each member checks a partner's arguments
/// before touching its buffers) but may wait forever or return an error that cannot name the
/// other member; the stall report is then the only signal. Dropping a member still ends the
/// others' waits, in the call they are in or the next, with an error. Bad arguments of a member's own (a root
/// out of range, an output of the wrong length) are reported to every member either way.
/// `PHASERS_CHECKED=off` turns checks off for teams that do not choose with the builder.
///
/// ```
/// use phasers::{Op, Team};
///
/// let team = Team::new(4)?;
/// assert!(team.is_checked());
/// std::thread::scope(|s| {
///     for mut member in team.participants() {
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
    /// # Examples
    ///
    /// ```
    /// use phasers::{Error, Team};
    ///
    /// let team = Team::new(4)?;
    /// assert_eq!(team.parties(), 4);
    /// assert!(matches!(Team::new(0), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 or more than [`MAX_MEMBERS`] members, or a bad
    /// `PHASERS_CHECKED`, `PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE` or `PHASERS_STALL`.
    pub fn new(size: usize) -> Result<Self> {
        TeamBuilder::new(size).build()
    }

    /// A builder, to choose checked mode and the wait policy.
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers::Team;
    ///
    /// let team = Team::builder(3)
    ///     .unchecked()
    ///     .stall_after(Duration::from_secs(60))
    ///     .build()?;
    /// assert_eq!((team.parties(), team.is_checked()), (3, false));
    /// assert_eq!(team.stall_after(), Some(Duration::from_secs(60)));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn builder(size: usize) -> TeamBuilder {
        TeamBuilder::new(size)
    }

    /// The number of members, from the names table's `parties()`.
    ///
    /// ```
    /// let team = phasers::Team::new(3)?;
    /// assert_eq!(team.parties(), 3);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.size
    }

    /// The number of members.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let team = phasers::Team::new(3)?;
    /// assert_eq!(team.size(), team.parties());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `parties()`: one name for the count on every type"
    )]
    pub fn size(&self) -> usize {
        self.parties()
    }

    /// Whether calls are checked for matching arguments (see [Checked calls](Team#checked-calls)).
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// assert!(Team::builder(2).checked(true).build()?.is_checked());
    /// assert!(!Team::builder(2).unchecked().build()?.is_checked());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn is_checked(&self) -> bool {
        self.shared.checked
    }

    /// The wait policy in force (after `PHASERS_WAIT`).
    ///
    /// ```
    /// use phasers::{Team, WaitPolicy};
    ///
    /// let team = Team::builder(2).wait_policy(WaitPolicy::Park).build()?;
    /// // PHASERS_WAIT, when set, overrides the builder's choice.
    /// if std::env::var_os("PHASERS_WAIT").is_none() {
    ///     assert_eq!(team.wait_policy(), WaitPolicy::Park);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
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

    /// The algorithm that combines the arrays of this team's larger blocking reductions (see
    /// [`TeamBuilder::reduce_algorithm`]); `Linear` unless the builder chose another.
    ///
    /// ```
    /// use phasers::{ReduceAlgorithm, Team};
    ///
    /// assert_eq!(Team::new(2)?.reduce_algorithm(), ReduceAlgorithm::Linear);
    /// let team = Team::builder(2).reduce_algorithm(ReduceAlgorithm::Auto).build()?;
    /// assert_eq!(team.reduce_algorithm(), ReduceAlgorithm::Auto);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn reduce_algorithm(&self) -> ReduceAlgorithm {
        self.shared.reduce_algorithm
    }

    /// The members of every rank not yet handed out, in rank order: all of them on the first
    /// call, none after that.
    ///
    /// ```
    /// let team = phasers::Team::new(4)?;
    /// let members = team.participants();
    /// assert_eq!(members.iter().map(|m| m.rank()).collect::<Vec<_>>(), [0, 1, 2, 3]);
    /// assert!(team.participants().is_empty()); // each rank is handed out once
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn participants(&self) -> Vec<Member> {
        (0..self.shared.size)
            .filter_map(|rank| self.participant(rank).ok())
            .collect()
    }

    /// The members of every rank not yet handed out.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let team = phasers::Team::new(2)?;
    /// assert_eq!(team.members().len(), 2);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `participants()`: one name for handing out handles on every type"
    )]
    pub fn members(&self) -> Vec<Member> {
        self.participants()
    }

    /// The member of one rank.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let team = phasers::Team::new(2)?;
    /// assert_eq!(team.member(1)?.rank(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Team::participant`].
    #[deprecated(
        since = "0.2.0",
        note = "use `participant(rank)`: one name for handing out handles on every type"
    )]
    pub fn member(&self, rank: usize) -> Result<Member> {
        self.participant(rank)
    }

    /// The member of one rank, for handing ranks to threads one at a time.
    ///
    /// ```
    /// use phasers::{Error, Team};
    ///
    /// let team = Team::new(2)?;
    /// assert_eq!(team.participant(1)?.rank(), 1);
    /// assert!(matches!(team.participant(1), Err(Error::InvalidArgument { .. }))); // taken
    /// assert!(matches!(team.participant(2), Err(Error::InvalidArgument { .. }))); // no rank 2
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `rank` is out of range or its member was already handed
    /// out (two handles for one rank would corrupt the team).
    pub fn participant(&self, rank: usize) -> Result<Member> {
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
            .field("reduce_algorithm", &self.shared.reduce_algorithm)
            .finish()
    }
}

/// Options for a [`Team`].
///
/// ```
/// use phasers::{Team, WaitPolicy};
///
/// let team = Team::builder(4).checked(true).wait_policy(WaitPolicy::Yield).build()?;
/// assert_eq!(team.parties(), 4);
/// assert!(team.is_checked());
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct TeamBuilder {
    size: usize,
    checked: Option<bool>,
    wait: WaitConfig,
    reduce_algorithm: ReduceAlgorithm,
}

impl TeamBuilder {
    /// A builder for a team of `size` members.
    ///
    /// ```
    /// use phasers::TeamBuilder;
    ///
    /// let team = TeamBuilder::new(3).build()?; // the same as Team::builder(3)
    /// assert_eq!(team.parties(), 3);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn new(size: usize) -> Self {
        TeamBuilder {
            size,
            checked: None,
            wait: WaitConfig::default(),
            reduce_algorithm: ReduceAlgorithm::Linear,
        }
    }

    /// Turns checked calls on or off, whatever `PHASERS_CHECKED` says (see [`Team`]: on by
    /// default).
    ///
    /// ```
    /// use phasers::Team;
    ///
    /// assert!(!Team::builder(2).checked(false).build()?.is_checked());
    /// assert!(Team::builder(2).checked(true).build()?.is_checked());
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn checked(mut self, checked: bool) -> Self {
        self.checked = Some(checked);
        self
    }

    /// Turns checked calls off: the same as `checked(false)`. See [`Team`] for what this gives
    /// up; the saving is a few nanoseconds per call.
    ///
    /// ```
    /// use phasers::{Op, Team};
    ///
    /// let team = Team::builder(2).unchecked().build()?;
    /// assert!(!team.is_checked());
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let mut sum = [0u32];
    ///             member.allreduce(&[1], &mut sum, Op::Sum).unwrap();
    ///             assert_eq!(sum, [2]);
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn unchecked(self) -> Self {
        self.checked(false)
    }

    /// How members wait (spin, yield, park); `PHASERS_WAIT` overrides it.
    ///
    /// ```
    /// use phasers::{Team, WaitPolicy};
    ///
    /// let team = Team::builder(2).wait_policy(WaitPolicy::Spin).build()?;
    /// if std::env::var_os("PHASERS_WAIT").is_none() {
    ///     assert_eq!(team.wait_policy(), WaitPolicy::Spin);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn wait_policy(mut self, policy: WaitPolicy) -> Self {
        self.wait.policy = policy;
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
        self.wait.stall_after = Some(after);
        self
    }

    /// Which of seed 003's algorithms combines the arrays of blocking [`reduce`](Member::reduce)
    /// and [`allreduce`](Member::allreduce) calls with a built-in [`Op`](crate::Op) that are
    /// larger than 64 bytes: the same algorithms as a [`Reduction`](crate::Reduction)'s (see
    /// [`ReduceAlgorithm`] and the [`reduce`](crate::reduce) module for how they compare, and
    /// [`ReduceAlgorithm::resolve`] for `Auto`'s rule). The default, `Linear`, runs inside the
    /// team's own protocol and needs no synchronization beyond it; the others run in a reduction
    /// group the team keeps per element type, after the call's opening meeting (so checked mode
    /// still compares every call first). `DynamicPairs`, `DynamicGroup` and `Auto` combine in
    /// arrival order: floating-point sums may then differ in the last bits from call to call.
    ///
    /// Smaller calls (carried inline), non-blocking and `NoSync` calls (their inputs are copied),
    /// and functions of the caller's (`reduce_with`, `allreduce_with`) keep the team's own paths.
    /// Sub-teams made by `split` inherit the choice. Every value is valid; an algorithm's name
    /// parses with `str::parse`, which returns [`Error::InvalidArgument`] for an unknown name.
    ///
    /// ```
    /// use phasers::{Error, Op, ReduceAlgorithm, Team};
    ///
    /// let team = Team::builder(4)
    ///     .reduce_algorithm(ReduceAlgorithm::DynamicPairs)
    ///     .build()?;
    /// assert_eq!(team.reduce_algorithm(), ReduceAlgorithm::DynamicPairs);
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             let mine = vec![member.rank() as u64; 1000];
    ///             let mut sum = vec![0; 1000];
    ///             member.allreduce(&mine, &mut sum, Op::Sum).unwrap();
    ///             assert!(sum.iter().all(|&x| x == 6));
    ///             let mut top = vec![0; 1000];
    ///             member.reduce(3, &mine, &mut top, Op::Max).unwrap();
    ///             assert!(member.rank() != 3 || top.iter().all(|&x| x == 3));
    ///         });
    ///     }
    /// });
    /// // Names parse, and a wrong one is a typed error.
    /// assert_eq!("static".parse::<ReduceAlgorithm>()?, ReduceAlgorithm::StaticTree);
    /// let wrong = "fastest".parse::<ReduceAlgorithm>();
    /// assert!(matches!(wrong, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn reduce_algorithm(mut self, algorithm: ReduceAlgorithm) -> Self {
        self.reduce_algorithm = algorithm;
        self
    }

    /// Makes the team.
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers::{team::MAX_MEMBERS, Error, Team};
    ///
    /// assert_eq!(Team::builder(2).build()?.parties(), 2);
    /// let too_many = Team::builder(MAX_MEMBERS + 1).build();
    /// assert!(matches!(too_many, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Team::new`].
    pub fn build(self) -> Result<Team> {
        if self.size == 0 || self.size > MAX_MEMBERS {
            return Err(Error::invalid(format!(
                "a team needs 1 to {MAX_MEMBERS} members (phasers::team::MAX_MEMBERS), not {}; \
                 pass the number of threads that will take part, and above the limit split the \
                 work among several teams",
                self.size
            )));
        }
        let checked = match self.checked {
            Some(checked) => checked,
            None => checked_from_env()?.unwrap_or(true),
        };
        let tuning = self.wait.resolve()?;
        Ok(Team {
            shared: Arc::new(TeamShared::new(
                self.size,
                checked,
                tuning,
                self.reduce_algorithm,
            )),
        })
    }
}

/// `PHASERS_CHECKED`, if set.
pub(crate) fn checked_from_env() -> Result<Option<bool>> {
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
