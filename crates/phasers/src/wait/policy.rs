//! How long a waiter spins and yields before it parks.

use std::time::Duration;

use super::spin_clock::rounds_in;
use crate::error::{Error, Result};
use crate::topology::is_oversubscribed;

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
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WaitPolicy {
    /// Spin about 50 µs when every participant has a core, a few rounds only when they outnumber
    /// the cores; then yield a little; then park. The default.
    #[default]
    Auto,
    /// Start with a long spin budget (about 2 ms), even when oversubscribed, then yield, then
    /// park. For dedicated cores and the lowest latency. Like every policy, the budget shrinks
    /// while spins keep failing (see the [module docs](crate::wait)).
    Spin,
    /// Spin briefly, then yield the core for a long time before parking.
    Yield,
    /// Park almost at once. For long phases, or machines shared with other work.
    Park,
}

impl WaitPolicy {
    /// Every policy, in the order of the table in the module docs.
    pub const ALL: [WaitPolicy; 4] = [
        WaitPolicy::Auto,
        WaitPolicy::Spin,
        WaitPolicy::Yield,
        WaitPolicy::Park,
    ];

    /// The name used by `PHASERS_WAIT` and by the command line.
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

/// Spin rounds and yields before parking, fixed when an object is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpinPlan {
    pub(crate) spins: u32,
    pub(crate) yields: u32,
}

/// The policy an object was asked for, with the environment's overrides applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuning {
    policy: WaitPolicy,
    spin_override: Option<u32>,
}

/// `Auto`'s spin when every participant has a core: long enough to cover the arrival skew of a
/// well-balanced step (tens of microseconds), short next to the cost of a needless park and wake.
const AUTO_SPIN_TIME: Duration = Duration::from_micros(50);
const AUTO_YIELDS: u32 = 16;
// Oversubscribed: a few rounds catch a release that is already under way; beyond that the core is
// better given to the thread that has yet to arrive.
const OVERSUBSCRIBED_SPINS: u32 = 16;
const OVERSUBSCRIBED_YIELDS: u32 = 2;
const SPIN_SPIN_TIME: Duration = Duration::from_millis(2);
const SPIN_YIELDS: u32 = 64;
const YIELD_SPINS: u32 = 16;
const YIELD_YIELDS: u32 = 1 << 12;

impl Tuning {
    /// `requested`, unless `PHASERS_WAIT` says otherwise; `PHASERS_SPIN` replaces the spin budget.
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
            Ok(text) => Some(text.trim().parse::<u32>().map_err(|_| {
                Error::invalid(format!(
                    "PHASERS_SPIN={text:?} is not a spin count; set it to a whole number such as \
                     2000, or unset it"
                ))
            })?),
            Err(_) => None,
        };
        Ok(Tuning {
            policy,
            spin_override,
        })
    }

    /// The policy in force after the environment's override.
    pub(crate) fn policy(self) -> WaitPolicy {
        self.policy
    }

    /// The plan for an object whose `participants` may all wait at once.
    pub(crate) fn plan(self, participants: usize) -> SpinPlan {
        let mut plan = match self.policy {
            WaitPolicy::Auto if is_oversubscribed(participants) => SpinPlan {
                spins: OVERSUBSCRIBED_SPINS,
                yields: OVERSUBSCRIBED_YIELDS,
            },
            WaitPolicy::Auto => SpinPlan {
                spins: rounds_in(AUTO_SPIN_TIME),
                yields: AUTO_YIELDS,
            },
            WaitPolicy::Spin => SpinPlan {
                spins: rounds_in(SPIN_SPIN_TIME),
                yields: SPIN_YIELDS,
            },
            WaitPolicy::Yield => SpinPlan {
                spins: YIELD_SPINS,
                yields: YIELD_YIELDS,
            },
            WaitPolicy::Park => SpinPlan {
                spins: 0,
                yields: 0,
            },
        };
        if let Some(spins) = self.spin_override {
            plan.spins = spins;
        }
        if cfg!(phasers_loom) {
            // Loom explores every interleaving of a step; spin rounds would only multiply them.
            plan = SpinPlan {
                spins: 0,
                yields: 0,
            };
        }
        plan
    }
}
