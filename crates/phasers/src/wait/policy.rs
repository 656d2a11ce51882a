//! How long a waiter spins and yields before it parks.

use std::time::Duration;

use super::floors::Floors;
use super::plan::{PlanInputs, SpinPlan, WakeFanout};
use super::spin_clock::pause_cost;
use super::stall_time::{stall_after, stall_after_from_env};
use crate::error::{Error, Result};
use crate::topology::available_cores;

/// How a waiting participant spends its time before the word it waits on changes.
///
/// Every policy ends in parking, so none spins without end; they differ in how long they try to
/// catch the release on the CPU first. The `PHASERS_WAIT` environment variable overrides the policy
/// set on an object, and `PHASERS_SPIN` overrides the spin budget (see the [module docs](crate::wait)).
///
/// ```
/// use phasers::{Algorithm, Barrier, WaitPolicy};
///
/// // A barrier whose waiters go to sleep almost at once: right when threads outnumber cores and
/// // the phases are long.
/// let barrier = Barrier::builder(2)
///     .algorithm(Algorithm::SenseReversing)
///     .wait_policy(WaitPolicy::Park)
///     .build()?;
/// // Builders start from `Auto`; the name is what PHASERS_WAIT takes.
/// assert_eq!(WaitPolicy::default(), WaitPolicy::Auto);
/// assert_eq!("park".parse::<WaitPolicy>()?, WaitPolicy::Park);
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WaitPolicy {
    /// When every participant has a core, spin about twice as long as waking the others from
    /// sleep would take on this machine (a few wakes at 2 parties, tens at 256), and keep that
    /// budget unless a yield shows the core is wanted; when they outnumber the cores, do not spin.
    /// Then yield while a hand-off is cheaper than a wake (sharing that budget among the threads
    /// of a core), then park. The default; its budgets come from the measured [`Floors`].
    #[default]
    Auto,
    /// Start with a long spin budget (at least a hundred wake-ups: about 2 ms on a VM whose wake
    /// costs 22 µs), even when oversubscribed, then yield, then park. For dedicated cores and the
    /// lowest latency. While every participant has a core the budget stays long; a yield that
    /// hands the core to another thread, or, when participants share cores, a spin that keeps
    /// failing, shrinks it (see the [module docs](crate::wait)).
    Spin,
    /// Spin briefly, then yield the core for a long time before parking.
    Yield,
    /// Park almost at once. For long phases, or machines shared with other work.
    Park,
}

impl WaitPolicy {
    /// Every policy, in the order of the table in the module docs.
    ///
    /// ```
    /// use phasers::WaitPolicy;
    ///
    /// assert_eq!(
    ///     WaitPolicy::ALL,
    ///     [WaitPolicy::Auto, WaitPolicy::Spin, WaitPolicy::Yield, WaitPolicy::Park]
    /// );
    /// ```
    pub const ALL: [WaitPolicy; 4] = [
        WaitPolicy::Auto,
        WaitPolicy::Spin,
        WaitPolicy::Yield,
        WaitPolicy::Park,
    ];

    /// The name used by `PHASERS_WAIT` and by the command line.
    ///
    /// ```
    /// use phasers::WaitPolicy;
    ///
    /// assert_eq!(WaitPolicy::Yield.name(), "yield");
    /// // Every name parses back to its policy, ignoring case.
    /// for policy in WaitPolicy::ALL {
    ///     assert_eq!(policy.name().to_uppercase().parse::<WaitPolicy>()?, policy);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            WaitPolicy::Auto => "auto",
            WaitPolicy::Spin => "spin",
            WaitPolicy::Yield => "yield",
            WaitPolicy::Park => "park",
        }
    }
}

impl std::fmt::Display for WaitPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for WaitPolicy {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        WaitPolicy::ALL
            .into_iter()
            .find(|policy| policy.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown wait policy {text:?}; expected one of auto, spin, yield, park"
                ))
            })
    }
}

/// The policy an object was asked for, with the environment's overrides applied, the floors its
/// budgets are derived from, and when its waiters report a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuning {
    policy: WaitPolicy,
    spin_override: Option<u32>,
    wake_override: Option<WakeFanout>,
    floors: Floors,
    /// `None`: no stall reports.
    stall_after: Option<Duration>,
}

/// The most spin rounds a waiter makes before it yields: the largest `PHASERS_SPIN` accepted, and
/// the cap on the budgets every [`WaitPolicy`] derives from the floors.
///
/// A waiter reads the broken state and the clock only once its spin phase ran out, so the spin
/// phase bounds how late a timeout or a broken object is noticed. 2^24 rounds of one pause each
/// last from about 20 ms (a pause of 1 ns) to 0.7 s (40 ns, Skylake-SP's); the `Spin` policy's
/// budget, about 2 ms, is far below. A larger `PHASERS_SPIN` makes every constructor return
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the variable.
///
/// ```
/// use phasers::wait::MAX_SPIN_ROUNDS;
/// use phasers::{Algorithm, Barrier, Error};
///
/// std::env::set_var("PHASERS_SPIN", (MAX_SPIN_ROUNDS + 1).to_string());
/// let err = Barrier::with_algorithm(2, Algorithm::Counting).unwrap_err();
/// assert!(matches!(err, Error::InvalidArgument { .. }));
/// assert!(err.to_string().contains("PHASERS_SPIN"));
/// std::env::set_var("PHASERS_SPIN", MAX_SPIN_ROUNDS.to_string());
/// assert!(Barrier::with_algorithm(2, Algorithm::Counting).is_ok());
/// std::env::remove_var("PHASERS_SPIN");
/// ```
pub const MAX_SPIN_ROUNDS: u32 = 1 << 24;

/// The spin count `PHASERS_SPIN` holds: a whole number up to [`MAX_SPIN_ROUNDS`].
fn parse_spin(text: &str) -> Result<u32> {
    let spins = text.trim().parse::<u64>().map_err(|_| {
        Error::invalid(format!(
            "PHASERS_SPIN={text:?} is not a spin count; set it to a whole number such as 2000, \
             or unset it"
        ))
    })?;
    match u32::try_from(spins) {
        Ok(spins) if spins <= MAX_SPIN_ROUNDS => Ok(spins),
        _ => Err(Error::invalid(format!(
            "PHASERS_SPIN={text:?} is more spin rounds than the {MAX_SPIN_ROUNDS} allowed \
             (phasers::wait::MAX_SPIN_ROUNDS), which already spin for up to a second before a \
             timeout or a broken object is noticed; set it to a whole number such as 2000, or \
             unset it"
        ))),
    }
}

/// The environment variable that replaces how releases wake sleepers: `all`, or a fanout.
pub(crate) const WAKE_ENV: &str = "PHASERS_WAKE";

/// The wake `PHASERS_WAKE` holds: `all` (one call wakes every sleeper), or a fanout from 1 to
/// [`WakeFanout::MAX_FANOUT`] (a release wakes that many, each of them as many more).
fn parse_wake(text: &str) -> Result<WakeFanout> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("all") {
        return Ok(WakeFanout::All);
    }
    match trimmed.parse::<u32>() {
        Ok(fanout) if (1..=WakeFanout::MAX_FANOUT).contains(&fanout) => {
            Ok(WakeFanout::Tree(fanout))
        }
        _ => Err(Error::invalid(format!(
            "{WAKE_ENV}={text:?} is not a wake: set it to all (one system call wakes every \
             sleeper) or to a fanout from 1 to {} (a release wakes that many sleepers, and each \
             of them as many more), or unset it",
            WakeFanout::MAX_FANOUT
        ))),
    }
}

impl Tuning {
    /// `requested`, unless `PHASERS_WAIT` says otherwise; `PHASERS_SPIN` replaces the spin budget;
    /// the floors are [`Floors::current`]; the stall time is `PHASERS_STALL`'s or the default (see
    /// [`with_stall_after`](Self::with_stall_after)). Every builder calls this, so a value of any
    /// of these variables that cannot be parsed fails every build.
    pub(crate) fn from_env(requested: WaitPolicy) -> Result<Self> {
        let policy = match std::env::var("PHASERS_WAIT") {
            Ok(text) => text.parse().map_err(|_| {
                Error::invalid(format!(
                    "PHASERS_WAIT={text:?} is not a wait policy; set it to auto, spin, yield or \
                     park, or unset it"
                ))
            })?,
            Err(_) => requested,
        };
        let spin_override = match std::env::var("PHASERS_SPIN") {
            Ok(text) => Some(parse_spin(&text)?),
            Err(_) => None,
        };
        let wake_override = match std::env::var(WAKE_ENV) {
            Ok(text) => Some(parse_wake(&text)?),
            Err(_) => None,
        };
        let stall_after = stall_after_from_env()?;
        Ok(Tuning {
            policy,
            spin_override,
            wake_override,
            floors: Floors::current()?,
            stall_after,
        })
    }

    /// The stall time a builder asked for, if it did, in place of the environment's:
    /// `Duration::ZERO` and `Duration::MAX` turn reports off.
    pub(crate) fn with_stall_after(self, requested: Option<Duration>) -> Self {
        match requested {
            Some(after) => Tuning {
                stall_after: stall_after(after),
                ..self
            },
            None => self,
        }
    }

    /// When the object's waiters report a stall; `None` when they never do.
    pub(crate) fn stall_after(self) -> Option<Duration> {
        self.stall_after
    }

    /// The policy in force after the environment's override.
    pub(crate) fn policy(self) -> WaitPolicy {
        self.policy
    }

    /// The plan for an object whose `participants` may all wait at once; see the table in the
    /// [module docs](crate::wait).
    pub(crate) fn plan(self, participants: usize) -> SpinPlan {
        let mut plan = SpinPlan::derive(&PlanInputs {
            policy: self.policy,
            floors: self.floors,
            participants,
            cores: available_cores(),
            pause: pause_cost(),
            spin_override: self.spin_override,
            wake_override: self.wake_override,
        });
        if cfg!(phasers_loom) {
            // Loom explores every interleaving of a step, and spin rounds would multiply them: the
            // models park at once, except those that set `PHASERS_SPIN` to walk the whole path
            // (a spin round or two, one yield, then the park) with few rounds.
            plan.spins = self.spin_override.unwrap_or(0).min(2);
            plan.min_spins = plan.min_spins.min(plan.spins);
            plan.yields = u32::from(self.spin_override.is_some());
            // Likewise a release by tree adds a wake call per woken sleeper: the models release
            // all at once, except those that set `PHASERS_WAKE` (`tests/loom_wake_tree.rs`).
            plan.wake = self.wake_override.unwrap_or(WakeFanout::All);
        }
        plan
    }
}
