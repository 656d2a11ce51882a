//! What each algorithm is, in one line: what `phasers list` prints, kept beside the algorithms
//! (and `Auto`'s line beside its rule's tests) so the command never describes a rule the library
//! has stopped following.

use crate::algorithm::Algorithm;

impl Algorithm {
    /// What the algorithm is, in one line (the module docs of [`barrier`](crate::barrier) say
    /// more); for `Auto`, what its built-in rule can pick.
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// assert!(Algorithm::McsTree.description().contains("4-ary arrival tree"));
    /// // Auto's line names whatever its rule picks on this machine.
    /// let picked = Algorithm::Auto.resolve_builtin(4);
    /// assert!(Algorithm::Auto.description().contains(picked.name()));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            Algorithm::Auto => {
                "the tuning profile's pick, else: counting up to 2 threads or when threads \
                 outnumber cores; dissemination to 16 (sense-reversing at 3, 5); tournament \
                 above (a cost model fitted on 16 cores)"
            }
            Algorithm::SenseReversing => {
                "centralized: one arrival counter, one release word; one wake-up releases everyone"
            }
            Algorithm::Counting => {
                "two-generation counting: the arrival counter is also the release word"
            }
            Algorithm::Ticket => {
                "arrivals take tickets from one counter; a separate word serves episodes"
            }
            Algorithm::CombiningTree => "software combining tree of counters (fan-in 4 by default)",
            Algorithm::McsTree => {
                "MCS tree: 4-ary arrival tree, binary wake-up tree, local spinning"
            }
            Algorithm::Dissemination => "ceil(log2 n) rounds of pairwise signals, no central word",
            Algorithm::Tournament => {
                "statically paired matches up a binary tree; the champion wakes the losers"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Auto`'s line names every algorithm its rule picks, at every party count up to 64 (issue
    /// 34: the command once described a rule the library had stopped following).
    #[test]
    fn auto_description_names_what_the_rule_picks() {
        let text = Algorithm::Auto.description();
        let named = [
            Algorithm::Counting,
            Algorithm::SenseReversing,
            Algorithm::Dissemination,
            Algorithm::Tournament,
        ];
        for picked in named {
            assert!(
                text.contains(picked.name()),
                "{picked} missing from: {text}"
            );
        }
        for parties in 1..=64 {
            let picked = Algorithm::Auto.resolve_builtin(parties);
            assert!(
                named.contains(&picked),
                "{picked} at {parties} missing from: {text}"
            );
        }
    }
}
