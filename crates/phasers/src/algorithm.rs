//! Which barrier algorithm: the names every layer shares.
//!
//! The [`Algorithm`] enum, its names and their parsing sit below both the barriers and the tuning
//! profile, since each names algorithms: a profile entry records one, and a barrier runs one. This
//! module imports neither, so the dependency goes one way, `barrier -> tune -> algorithm`. What
//! `Auto` stands for (the profile's choice, else the built-in rule) is decided in
//! `barrier/auto.rs`, the only place that consults the profile; the trait the algorithms
//! implement is in `barrier/algorithm.rs`.

use crate::error::{Error, Result};

/// Which barrier algorithm a [`Barrier`](crate::Barrier) runs.
///
/// See the [module docs](crate::barrier) for how they compare.
///
/// `Auto` follows the tuning [`Profile`](crate::Profile) that `phasers tune` measured on this
/// machine, when one is in use: the algorithm measured fastest at the largest thread count not
/// above the party count. The profile is found through `PHASERS_PROFILE` or at the default path
/// (see [`Profile`](crate::Profile) for the lookup; `PHASERS_PROFILE=off` ignores it), and
/// [`Profile::status`](crate::Profile::status) tells whether one is in use. Without one, when it
/// was measured on a machine with another core count, or in a build without the `profile` feature
/// (which reads no profile), `Auto` follows its built-in rule
/// ([`resolve_builtin`](Self::resolve_builtin)), from the party count and the available cores:
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
/// let chosen = Algorithm::Auto.resolve(64); // the profile's choice, else the table's
/// assert!(Algorithm::CONCRETE.contains(&chosen)); // never `Auto` itself
/// assert_eq!(Algorithm::Auto.resolve_builtin(2), Algorithm::Counting); // the table's first row
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
}

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
