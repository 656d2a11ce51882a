//! How long a waiter spins and yields before it parks.

use std::time::Duration;

use super::floors::Floors;
use super::spin_clock::rounds_in;
use super::stall_time::{stall_after, stall_after_from_env};
use crate::error::{Error, Result};
use crate::topology::{available_cores, is_oversubscribed};

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
    /// Spin about as long as a wake-up costs on this machine when every participant has a core,
    /// not at all when they outnumber the cores; then yield while a hand-off is cheaper than a
    /// wake (sharing that budget among the threads of a core); then park. The default; its budgets
    /// come from the measured [`Floors`].
    #[default]
    Auto,
    /// Start with a long spin budget (a hundred wake-ups: about 2 ms on a VM whose wake costs
    /// 22 µs), even when oversubscribed, then yield, then park. For dedicated cores and the lowest
    /// latency. Like every policy, the budget shrinks while spins keep failing (see the
    /// [module docs](crate::wait)).
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

/// How a waiter spends its time before it parks, fixed when an object is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpinPlan {
    /// The most spin rounds before yielding; the participant's [`SpinBudget`](super::SpinBudget)
    /// adapts below it.
    pub(crate) spins: u32,
    /// The least the budget adapts down to: rounds enough to catch a release already on its way
    /// (a few round trips), or `spins` if that is less.
    pub(crate) min_spins: u32,
    /// Yields before parking.
    pub(crate) yields: u32,
    /// A wait that ends within this long after its spin phase ran out was short: a longer spin
    /// would have caught it, so the spin budget grows back (one wake, see [`Floors::wake`]).
    pub(crate) short_wait: Duration,
    /// A yield that lasts this long or more ran another thread on the core (half a hand-off, see
    /// [`Floors::yield_handoff`]): a `sched_yield` with nobody else to run returns far sooner.
    pub(crate) handoff: Duration,
    /// Whether the participants outnumber the cores, so that yields are meant to hand the core
    /// over (see [`SpinBudget`](super::SpinBudget)).
    pub(crate) shares_cores: bool,
}

/// The policy an object was asked for, with the environment's overrides applied, the floors its
/// budgets are derived from, and when its waiters report a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuning {
    policy: WaitPolicy,
    spin_override: Option<u32>,
    floors: Floors,
    /// `None`: no stall reports.
    stall_after: Option<Duration>,
}

/// Under the `Yield` policy a waiter spins only long enough to catch a release already on its way:
/// a few cache-line round trips (the release and its line's transfer). It is also the least an
/// adaptive spin budget shrinks to.
const CATCH_RELEASE_ROUND_TRIPS: u32 = 4;
/// Oversubscribed, `Auto` yields at least this many times before parking. Measured on the 2-core
/// EPYC VM (`phasers bench barrier --mode back-to-back`, 4 to 64 threads): with 1 yield the waiters
/// of a 4-thread barrier parked on most episodes and paid the ~15 µs wake every time (7.5x slower
/// than with 2); 2 to 8 yields were within the rounds' noise of each other at 8, 32 and 64 threads.
/// It is also the count libstdc++'s `std::barrier` yields before its futex wait.
const MIN_OVERSUBSCRIBED_YIELDS: u32 = 4;
/// The `Spin` policy spins as long as this many wake-ups would cost: about 2 ms on the EPYC VM
/// (wake ~22 µs), 0.4 ms on a Xeon VM (~4 µs). Users who ask for it want the core kept.
const SPIN_POLICY_WAKES: u32 = 100;
/// The `Yield` policy yields this many times before parking (about 5 ms of hand-offs on either VM):
/// users who ask for it want the kernel's sleep avoided nearly always.
const YIELD_POLICY_YIELDS: u32 = 1 << 12;
/// However cheap a yield is next to a wake, a waiter yields at most this many times before
/// parking, so that a waiter on a busy machine stops taking turns on the core.
const MAX_AUTO_YIELDS: u32 = 256;

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

/// How many participants share each core when all wait at once (at least 1).
fn sharing(participants: usize) -> u32 {
    let per_core = participants.div_ceil(available_cores()).max(1);
    u32::try_from(per_core).unwrap_or(u32::MAX)
}

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
        let stall_after = stall_after_from_env()?;
        Ok(Tuning {
            policy,
            spin_override,
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
        let floors = self.floors;
        let wake = floors.wake();
        let catch_release = floors.round_trip() * CATCH_RELEASE_ROUND_TRIPS;
        // The competitive rule for yields: each one costs a hand-off of the core, so a waiter
        // yields while its hand-offs add up to less than the wake that parking would cost.
        let yields_per_wake = (wake.as_nanos() / floors.yield_handoff().as_nanos().max(1))
            .clamp(1, MAX_AUTO_YIELDS as u128) as u32;
        let (spin_time, yields) = match self.policy {
            // Oversubscribed, every spin round and every yield is paid by all the threads that
            // share the core, so a waiter does not spin at all and shares out its yields.
            WaitPolicy::Auto if is_oversubscribed(participants) => (
                Duration::ZERO,
                (yields_per_wake / sharing(participants)).max(MIN_OVERSUBSCRIBED_YIELDS),
            ),
            // The competitive rule for spins: spinning longer than a park and wake would cost can
            // never pay, spinning less parks waits that a short spin would have caught.
            WaitPolicy::Auto => (wake, yields_per_wake),
            WaitPolicy::Spin => (wake * SPIN_POLICY_WAKES, yields_per_wake),
            WaitPolicy::Yield => (catch_release, YIELD_POLICY_YIELDS),
            WaitPolicy::Park => (Duration::ZERO, 0),
        };
        let rounds = |time: Duration| {
            if time.is_zero() {
                0
            } else {
                rounds_in(time).min(MAX_SPIN_ROUNDS)
            }
        };
        let mut plan = SpinPlan {
            spins: rounds(spin_time),
            min_spins: rounds(catch_release).min(rounds(spin_time)),
            yields,
            short_wait: wake,
            handoff: floors.yield_handoff() / 2,
            shares_cores: is_oversubscribed(participants),
        };
        if let Some(spins) = self.spin_override {
            plan.spins = spins;
            plan.min_spins = plan.min_spins.min(spins);
        }
        if cfg!(phasers_loom) {
            // Loom explores every interleaving of a step, and spin rounds would multiply them: the
            // models park at once, except those that set `PHASERS_SPIN` to walk the whole path
            // (a spin round or two, one yield, then the park) with few rounds.
            plan.spins = self.spin_override.unwrap_or(0).min(2);
            plan.min_spins = plan.min_spins.min(plan.spins);
            plan.yields = u32::from(self.spin_override.is_some());
        }
        plan
    }
}
