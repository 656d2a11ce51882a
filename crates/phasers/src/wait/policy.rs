//! The wait policies users choose from, and the cap on every spin budget.

use crate::error::{Error, Result};

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
    /// of a core), then park. The default; its budgets come from the measured
    /// [`Floors`](crate::wait::Floors).
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
