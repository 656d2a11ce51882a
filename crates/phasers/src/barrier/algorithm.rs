//! The `Algorithm` choice and the trait every barrier algorithm implements.

use super::profile_status;
use super::Profile;
use crate::error::{Error, Result};
use crate::topology::{available_cores, is_oversubscribed};

/// Which barrier algorithm a [`Barrier`](crate::Barrier) runs.
///
/// See the [module docs](crate::barrier) for how they compare.
///
/// `Auto` follows the tuning [`Profile`] that `phasers tune` measured on this machine, when one is
/// in use: the algorithm measured fastest at the largest thread count not above the party count.
/// The profile is found through `PHASERS_PROFILE` or at the default path (see [`Profile`] for the
/// lookup; `PHASERS_PROFILE=off` ignores it), and [`Profile::status`] tells whether one is in use.
/// Without one, or when it was measured on a machine with another core count, `Auto` follows its
/// built-in rule ([`resolve_builtin`](Self::resolve_builtin)), from the party count and the
/// available cores:
///
/// | parties | cores | `Auto` picks | why |
/// |---|---|---|---|
/// | 1 to 16 | at least `parties` | [`Counting`](Algorithm::Counting) | a centralized barrier whose arrival counter is also its release word: the sense-reversing barrier's chain of arrivals without its second line, so the leader releases through a line it already owns (seed 001 found the centralized barrier fastest up to 16 threads; at 2 threads on the 2-core VMs counting measured 0.55-0.7x sense-reversing and level with dissemination, see BENCHMARKS.md) |
/// | more than 16 | at least `parties` | [`Tournament`](Algorithm::Tournament) | O(log n) critical path, every flag with one writer and one reader; the best software barrier at scale in seed 002 |
/// | any | fewer than `parties` | [`Counting`](Algorithm::Counting) | one release word: a single wake-up pass releases every parked waiter, where tree barriers make sleeping threads wake each other in a chain (1.6x to 4.5x slower at 4 to 64 threads on 2 cores); level with sense-reversing there, and one line fewer |
///
/// ```
/// use phasers::Algorithm;
///
/// let chosen = Algorithm::Auto.resolve(64);
/// assert_ne!(chosen, Algorithm::Auto);
/// // With no profile in use, `resolve` is the built-in rule.
/// if phasers::Profile::active().is_none() {
///     assert_eq!(chosen, Algorithm::Auto.resolve_builtin(64));
/// }
/// assert_eq!("mcs".parse::<Algorithm>()?, Algorithm::McsTree);
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    /// Chosen by the tuning profile, else from the party count and the core count; see above.
    #[default]
    Auto,
    /// Centralized sense-reversing: one arrival counter, one release word. Supports leaving.
    SenseReversing,
    /// Two-generation counting: the arrival counter is also the release word, and two counters
    /// alternate between episodes so one is re-armed while the other is in use. Supports leaving.
    Counting,
    /// Ticket: arrivals take tickets from one ever-growing counter; a separate word serves episodes.
    Ticket,
    /// Software combining tree with a configurable fan-in (see
    /// [`BarrierBuilder::fan_in`](crate::BarrierBuilder::fan_in)).
    CombiningTree,
    /// MCS tree: 4-ary arrival tree with the children's flags packed in one word, binary wake-up tree.
    McsTree,
    /// Dissemination: ceil(log2 n) rounds of pairwise signals, no tree and no central word.
    Dissemination,
    /// Tournament: statically paired matches up a binary tree, the champion wakes the losers back down.
    Tournament,
}

impl Algorithm {
    /// Every concrete algorithm (everything but `Auto`), in the order of the module docs' table.
    ///
    /// ```
    /// use phasers::{Algorithm, Barrier};
    ///
    /// assert_eq!(Algorithm::CONCRETE.len(), 7);
    /// assert_eq!(Algorithm::CONCRETE[0], Algorithm::SenseReversing);
    /// for algorithm in Algorithm::CONCRETE {
    ///     assert_ne!(algorithm, Algorithm::Auto);
    ///     // A barrier runs exactly the concrete algorithm it is given.
    ///     assert_eq!(Barrier::with_algorithm(3, algorithm)?.algorithm(), algorithm);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub const CONCRETE: [Algorithm; 7] = [
        Algorithm::SenseReversing,
        Algorithm::Counting,
        Algorithm::Ticket,
        Algorithm::CombiningTree,
        Algorithm::McsTree,
        Algorithm::Dissemination,
        Algorithm::Tournament,
    ];

    /// The short name used on the command line and in benchmark reports.
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// assert_eq!(Algorithm::McsTree.name(), "mcs");
    /// assert_eq!(Algorithm::McsTree.to_string(), "mcs"); // `Display` writes the name
    /// // Every name parses back to its algorithm.
    /// for algorithm in Algorithm::CONCRETE {
    ///     assert_eq!(algorithm.name().parse::<Algorithm>()?, algorithm);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::SenseReversing => "sense-reversing",
            Algorithm::Counting => "counting",
            Algorithm::Ticket => "ticket",
            Algorithm::CombiningTree => "combining-tree",
            Algorithm::McsTree => "mcs",
            Algorithm::Dissemination => "dissemination",
            Algorithm::Tournament => "tournament",
        }
    }

    /// Whether participants can [`leave`](crate::Participant::leave), shrinking the barrier.
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// let can_leave: Vec<Algorithm> =
    ///     Algorithm::CONCRETE.into_iter().filter(|a| a.supports_leave()).collect();
    /// assert_eq!(can_leave, [Algorithm::SenseReversing, Algorithm::Counting]);
    /// ```
    pub fn supports_leave(self) -> bool {
        matches!(self, Algorithm::SenseReversing | Algorithm::Counting)
    }

    /// The concrete algorithm `Auto` stands for with `parties` participants on this machine:
    /// the choice of the tuning [`Profile`] in use, else the built-in rule. Any other algorithm is
    /// returned as is, and the profile is not looked up.
    ///
    /// This never fails: where the profile is invalid it follows the built-in rule, while
    /// [`BarrierBuilder::build`](crate::BarrierBuilder::build) with `Auto` returns the profile's
    /// error.
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// assert_eq!(Algorithm::Ticket.resolve(8), Algorithm::Ticket); // concrete: as is
    /// assert!(Algorithm::CONCRETE.contains(&Algorithm::Auto.resolve(8)));
    /// ```
    pub fn resolve(self, parties: usize) -> Algorithm {
        match self {
            Algorithm::Auto => match Profile::active() {
                Some(profile) => profile.choose(parties),
                None => self.resolve_builtin(parties),
            },
            concrete => concrete,
        }
    }

    /// What `Auto` stands for with `parties` participants by the built-in rule (the table above),
    /// whatever the tuning profile says; any other algorithm is returned as is.
    ///
    /// Comparing it with [`resolve`](Self::resolve) shows what a profile changed.
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// // Up to 16 parties (or more parties than cores): one counter line beats any tree.
    /// assert_eq!(Algorithm::Auto.resolve_builtin(2), Algorithm::Counting);
    /// assert_eq!(Algorithm::McsTree.resolve_builtin(2), Algorithm::McsTree);
    /// ```
    pub fn resolve_builtin(self, parties: usize) -> Algorithm {
        match self {
            Algorithm::Auto if is_oversubscribed(parties) || parties <= AUTO_SMALL_PARTIES => {
                Algorithm::Counting
            }
            Algorithm::Auto => Algorithm::Tournament,
            concrete => concrete,
        }
    }

    /// As [`resolve`](Self::resolve), but with the profile's error when `Auto` meets an invalid
    /// one: what building a barrier uses.
    pub(crate) fn resolve_for_build(self, parties: usize) -> Result<Algorithm> {
        match self {
            Algorithm::Auto => Ok(match profile_status::for_auto()? {
                Some(profile) => profile.choose(parties),
                None => self.resolve_builtin(parties),
            }),
            concrete => Ok(concrete),
        }
    }

    /// The cores the built-in rule compares against (the same as [`crate::available_cores`]),
    /// and that a tuning profile must have been measured with to be used.
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// let cores = Algorithm::cores_considered();
    /// assert_eq!(cores, phasers::available_cores());
    /// // More parties than cores: one release word, whatever the party count.
    /// assert_eq!(Algorithm::Auto.resolve_builtin(cores + 1), Algorithm::Counting);
    /// ```
    pub fn cores_considered() -> usize {
        available_cores()
    }
}

/// Up to this many parties, each with its own core, one shared line beats any tree.
const AUTO_SMALL_PARTIES: usize = 16;

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = Error;

    /// Accepts the names of [`Algorithm::name`], ignoring case, plus the aliases `sense`,
    /// `central`, `two-generation`, `tree`, `mcs-tree` and `combining`.
    fn from_str(text: &str) -> Result<Self> {
        let wanted = text.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match wanted.as_str() {
            "sense" | "central" => Some(Algorithm::SenseReversing),
            "two-generation" => Some(Algorithm::Counting),
            "tree" | "combining" => Some(Algorithm::CombiningTree),
            "mcs-tree" => Some(Algorithm::McsTree),
            _ => None,
        };
        alias
            .or_else(|| {
                std::iter::once(Algorithm::Auto)
                    .chain(Algorithm::CONCRETE)
                    .find(|algorithm| algorithm.name() == wanted)
            })
            .ok_or_else(|| {
                let names: Vec<&str> = std::iter::once(Algorithm::Auto)
                    .chain(Algorithm::CONCRETE)
                    .map(Algorithm::name)
                    .collect();
                Error::invalid(format!(
                    "unknown barrier algorithm {text:?}; expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// A barrier algorithm usable with static dispatch, as in `Barrier<McsTree>`.
///
/// The trait is sealed: the algorithms are this crate's product, and their internals (how a
/// participant arrives, waits and resumes after a timeout) are not a stable interface.
///
/// ```
/// use phasers::barrier::Dissemination;
/// use phasers::Barrier;
///
/// let barrier: Barrier<Dissemination> = Barrier::builder(3).build_static()?;
/// assert_eq!(barrier.algorithm(), phasers::Algorithm::Dissemination);
/// # Ok::<(), phasers::Error>(())
/// ```
pub trait BarrierAlgorithm: sealed::AlgorithmImpl {}

impl<T: sealed::AlgorithmImpl> BarrierAlgorithm for T {}

/// Construction parameters shared by all algorithms; each reads what concerns it.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub(crate) fan_in: usize,
    pub(crate) has_completion: bool,
}

pub(crate) mod sealed {
    use super::{Algorithm, Params};
    use crate::barrier::episode::Episode;
    use crate::error::Error;
    use crate::wait::Stop;

    /// What an algorithm provides. `wait` must be resumable: when it returns
    /// `Err(Stop::TimedOut)`, `local` records where the participant stopped, and the next call
    /// continues from there in the same episode.
    pub trait AlgorithmImpl: Send + Sync + Sized + 'static {
        /// A participant's private state: its position in the structure, and where to resume.
        type Local: Send + 'static;

        /// Builds the shared state for `parties` (at least 1, at most `MAX_PARTIES`).
        fn build(parties: usize, params: &Params) -> Self;

        /// Checks what `build` depends on beyond its arguments, so that the builder can return
        /// an error where `build` itself cannot (for `AnyAlgorithm`: the tuning profile).
        fn prerequisites() -> Result<(), Error> {
            Ok(())
        }

        /// Which algorithm this is.
        fn kind(&self) -> Algorithm;

        /// The private state of the participant with `rank`.
        fn local(&self, rank: usize) -> Self::Local;

        /// Arrives (unless already arrived) and waits for the release of `episode.number()`.
        /// Returns whether this participant is the episode's leader, who ran the completion action.
        fn wait(&self, local: &mut Self::Local, episode: &Episode<'_>) -> Result<bool, Stop>;

        /// Arrives at `episode.number()` without waiting, and takes this participant out of every
        /// later episode. Only called when `kind().supports_leave()`.
        fn leave(&self, local: &mut Self::Local, episode: &Episode<'_>) -> Result<(), Error>;

        /// Wakes every parked waiter, so each re-checks the broken state.
        fn wake_all(&self);
    }
}
