//! The `ReduceAlgorithm` choice.

use crate::error::{Error, Result};

/// Which algorithm a [`Reduction`](crate::Reduction) runs. The [module docs](crate::reduce)
/// compare them and give `Auto`'s rule.
///
/// ```
/// use phasers::ReduceAlgorithm;
///
/// assert_eq!("dynamic".parse::<ReduceAlgorithm>()?, ReduceAlgorithm::DynamicPairs);
/// assert_eq!(ReduceAlgorithm::StaticTree.to_string(), "static-tree");
/// assert!(ReduceAlgorithm::Linear.is_fixed_order());
/// assert!(!ReduceAlgorithm::DynamicPairs.is_fixed_order());
/// # Ok::<(), phasers::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReduceAlgorithm {
    /// Chosen per call from the array length, the party count, the cores and the arrival spread
    /// of recent calls.
    #[default]
    Auto,
    /// Everyone meets, then each participant reduces 1/N of the array across all inputs; a second
    /// meeting lets everyone return. Fixed order; no quick return.
    Linear,
    /// Pairs by rank, distance doubling each round; the pair splits the work. Fixed order; the
    /// participant whose data was consumed returns at once.
    StaticTree,
    /// Pairs form in arrival order through one compare-and-swap word; the later arrival is the
    /// master and the earlier one returns once its data is consumed. Order depends on arrivals.
    DynamicPairs,
    /// As `DynamicPairs`, but participants that would return help later pairs instead, until the
    /// reduction completes. Order depends on arrivals.
    DynamicGroup,
}

impl ReduceAlgorithm {
    /// Every algorithm, `Auto` last.
    ///
    /// ```
    /// use phasers::ReduceAlgorithm;
    ///
    /// assert_eq!(ReduceAlgorithm::ALL.len(), 5);
    /// assert_eq!(ReduceAlgorithm::ALL[4], ReduceAlgorithm::Auto);
    /// // Each name parses back to its algorithm.
    /// for algorithm in ReduceAlgorithm::ALL {
    ///     assert_eq!(algorithm.name().parse::<ReduceAlgorithm>()?, algorithm);
    /// }
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub const ALL: [ReduceAlgorithm; 5] = [
        ReduceAlgorithm::Linear,
        ReduceAlgorithm::StaticTree,
        ReduceAlgorithm::DynamicPairs,
        ReduceAlgorithm::DynamicGroup,
        ReduceAlgorithm::Auto,
    ];

    /// The short name used on the command line and in benchmark reports.
    ///
    /// ```
    /// use phasers::ReduceAlgorithm;
    ///
    /// assert_eq!(ReduceAlgorithm::DynamicGroup.name(), "dynamic-group");
    /// assert_eq!(ReduceAlgorithm::Auto.to_string(), ReduceAlgorithm::Auto.name());
    /// let names: Vec<_> = ReduceAlgorithm::ALL.iter().map(|a| a.name()).collect();
    /// assert_eq!(names, ["linear", "static-tree", "dynamic-pairs", "dynamic-group", "auto"]);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ReduceAlgorithm::Auto => "auto",
            ReduceAlgorithm::Linear => "linear",
            ReduceAlgorithm::StaticTree => "static-tree",
            ReduceAlgorithm::DynamicPairs => "dynamic-pairs",
            ReduceAlgorithm::DynamicGroup => "dynamic-group",
        }
    }

    /// Whether every element is combined in an order fixed by the ranks alone, so floating-point
    /// results are the same bits from call to call for a fixed party count.
    ///
    /// ```
    /// use phasers::ReduceAlgorithm;
    ///
    /// let all = ReduceAlgorithm::ALL.into_iter();
    /// let fixed: Vec<_> = all.filter(|a| a.is_fixed_order()).collect();
    /// assert_eq!(fixed, [ReduceAlgorithm::Linear, ReduceAlgorithm::StaticTree]);
    /// // `Auto` may pick an arrival-order algorithm: it promises no fixed order.
    /// assert!(!ReduceAlgorithm::Auto.is_fixed_order());
    /// ```
    pub fn is_fixed_order(self) -> bool {
        matches!(self, ReduceAlgorithm::Linear | ReduceAlgorithm::StaticTree)
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            ReduceAlgorithm::Auto => 0,
            ReduceAlgorithm::Linear => 1,
            ReduceAlgorithm::StaticTree => 2,
            ReduceAlgorithm::DynamicPairs => 3,
            ReduceAlgorithm::DynamicGroup => 4,
        }
    }

    pub(crate) fn from_code(code: u8) -> Self {
        match code {
            1 => ReduceAlgorithm::Linear,
            2 => ReduceAlgorithm::StaticTree,
            3 => ReduceAlgorithm::DynamicPairs,
            4 => ReduceAlgorithm::DynamicGroup,
            _ => ReduceAlgorithm::Auto,
        }
    }
}

impl std::fmt::Display for ReduceAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ReduceAlgorithm {
    type Err = Error;

    /// Accepts each [`name`](ReduceAlgorithm::name), and the short forms `static`, `dynamic` and
    /// `group`, in any case.
    fn from_str(text: &str) -> Result<Self> {
        let wanted = text.trim().to_ascii_lowercase();
        let alias = match wanted.as_str() {
            "static" => Some(ReduceAlgorithm::StaticTree),
            "dynamic" => Some(ReduceAlgorithm::DynamicPairs),
            "group" => Some(ReduceAlgorithm::DynamicGroup),
            _ => None,
        };
        alias
            .or_else(|| {
                ReduceAlgorithm::ALL
                    .into_iter()
                    .find(|a| a.name() == wanted)
            })
            .ok_or_else(|| {
                let names: Vec<_> = ReduceAlgorithm::ALL.iter().map(|a| a.name()).collect();
                Error::invalid(format!(
                    "{text:?} is not a reduction algorithm; use one of {}",
                    names.join(", ")
                ))
            })
    }
}
