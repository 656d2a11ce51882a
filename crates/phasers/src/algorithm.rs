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
/// `Auto` follows the tuning [`Profile`](crate::Profile) that `phasers bench barrier --write-profile` measured on this
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
/// | any | fewer than `parties` | [`Counting`](Algorithm::Counting) | one release word: a single wake-up pass releases every parked waiter, where tree barriers make sleeping threads wake each other in a chain (1.6x to 4.5x slower at 4 to 64 threads on 2 cores); level with sense-reversing there, and one line fewer |
/// | 1, 2 | at least `parties` | [`Counting`](Algorithm::Counting) | the arrival counter is also the release word, so the leader releases through a line it already owns: 0.95 round trips at 2 threads on 16 cores, the lowest of every row (sense-reversing 1.30, dissemination 1.39); at 2 threads on the 2-core VMs, 0.55-0.7x sense-reversing (see BENCHMARKS.md) |
/// | 3, 5 | at least `parties` | [`SenseReversing`](Algorithm::SenseReversing) | by the cost model below: one more arrival on a counter that nobody polls (0.71 round trips) costs less than the extra dissemination round these counts need (1.45) |
/// | 4, 6 to 16 | at least `parties` | [`Dissemination`](Algorithm::Dissemination) | by the cost model: `ceil(log2 n)` rounds, no release phase; measured the fastest of every row at 4, 8 and 12 threads on 16 cores (2.65, 4.35, 5.91 round trips, against 3.33, 5.66 and parked for sense-reversing) |
/// | more than 16 | at least `parties` | [`Tournament`](Algorithm::Tournament) | the best software barrier at 64 threads (NUMA-4) and 256 (Xeon Phi) in seed 002, where dissemination was not: its `n · ceil(log2 n)` signals contend, which the model cannot see, so the rule stops offering dissemination at 16 parties (4 rounds, as far as it was measured); by the model the tournament's `2 · ceil(log2 n)` steps beat any central barrier from there on |
///
/// With a core for each party, the rule takes the cheapest of counting, sense-reversing,
/// dissemination (up to 16 parties) and tournament by a cost model in cache-line round trips:
/// counting `1.16 (n − 1)`, sense-reversing `0.84 + 0.71 (n − 1)`, dissemination
/// `1.45 ceil(log2 n)`, tournament `1.04 · 2 ceil(log2 n)`, each fitted to the minima of
/// `benchmarks/barrier-16core-scaling.txt` divided by the round trip measured in the same run
/// (minima, because parked waiters made its medians the cost of waking, not of the algorithm).
/// Every term is a number of round trips, so the machine's round trip scales them alike and the
/// choice depends on the party count and the cores alone. At 3, 4 and 6 parties the two cheapest
/// are within 3% of each other, inside the model's error, so either costs about the same; at every
/// other count the pick leads the runner-up by 12% or more. Ticket, the combining tree and MCS are
/// never chosen: ticket is sense-reversing's shape and cost without leaving, and neither tree was
/// measured spinning beyond 8 threads. Only counting and sense-reversing let participants
/// [`leave`](crate::Participant::leave), so name one of them when participants must.
///
/// ```
/// use phasers::Algorithm;
///
/// let chosen = Algorithm::Auto.resolve(64); // the profile's choice, else the table's
/// assert!(Algorithm::CONCRETE.contains(&chosen)); // never `Auto` itself
/// assert_eq!(Algorithm::Auto.resolve_builtin(2), Algorithm::Counting); // on any machine
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
