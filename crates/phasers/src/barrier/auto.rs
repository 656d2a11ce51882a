//! What `Algorithm::Auto` stands for: the tuning profile's choice, else the built-in rule.
//!
//! This is the one place a barrier consults the tuning profile (`crate::tune`), which itself only
//! names algorithms (`crate::algorithm`): the dependency goes `barrier -> tune -> algorithm`.
//! Without the `profile` feature no profile exists, and `Auto` is the built-in rule alone, whose
//! cost model is in `auto_cost.rs`.

use super::auto_cost::builtin_choice;
use crate::algorithm::Algorithm;
use crate::error::Result;
use crate::topology::available_cores;

impl Algorithm {
    /// The concrete algorithm `Auto` stands for with `parties` participants on this machine:
    /// the choice of the tuning [`Profile`](crate::Profile) in use, else the built-in rule. Any
    /// other algorithm is returned as is, and the profile is not looked up.
    ///
    /// This never fails: where the profile is invalid it follows the built-in rule, while
    /// [`BarrierBuilder::build`](crate::BarrierBuilder::build) with `Auto` returns the profile's
    /// error. Without the `profile` feature it is [`resolve_builtin`](Self::resolve_builtin).
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// assert_eq!(Algorithm::Ticket.resolve(8), Algorithm::Ticket); // concrete: as is
    /// assert!(Algorithm::CONCRETE.contains(&Algorithm::Auto.resolve(8)));
    /// ```
    pub fn resolve(self, parties: usize) -> Algorithm {
        match self {
            Algorithm::Auto => {
                profile_choice(parties).unwrap_or_else(|| self.resolve_builtin(parties))
            }
            concrete => concrete,
        }
    }

    /// What `Auto` stands for with `parties` participants by the built-in rule (the table on
    /// [`Algorithm`]), whatever the tuning profile says; any other algorithm is returned as is.
    ///
    /// The rule depends on `parties` and [`cores_considered`](Self::cores_considered) alone: with
    /// more parties than cores, [`Counting`](Algorithm::Counting); else the cheapest by a cost
    /// model in cache-line round trips, fitted to a 16-core run, with dissemination offered up to
    /// 16 parties only. It measures nothing and reads no file. Comparing it with
    /// [`resolve`](Self::resolve) shows what a profile changed.
    ///
    /// ```
    /// use phasers::Algorithm;
    ///
    /// // Two parties: one counter line, which is also the release word, is the cheapest.
    /// assert_eq!(Algorithm::Auto.resolve_builtin(2), Algorithm::Counting);
    /// assert_eq!(Algorithm::McsTree.resolve_builtin(2), Algorithm::McsTree);
    /// if phasers::available_cores() >= 64 {
    ///     assert_eq!(Algorithm::Auto.resolve_builtin(8), Algorithm::Dissemination);
    ///     assert_eq!(Algorithm::Auto.resolve_builtin(64), Algorithm::Tournament);
    /// }
    /// ```
    pub fn resolve_builtin(self, parties: usize) -> Algorithm {
        match self {
            Algorithm::Auto => builtin_choice(parties, available_cores()),
            concrete => concrete,
        }
    }

    /// As [`resolve`](Self::resolve), but with the profile's error when `Auto` meets an invalid
    /// one: what building a barrier uses.
    pub(crate) fn resolve_for_build(self, parties: usize) -> Result<Algorithm> {
        match self {
            Algorithm::Auto => {
                Ok(profile_choice_for_build(parties)?
                    .unwrap_or_else(|| self.resolve_builtin(parties)))
            }
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

/// Checks what building an `Auto` barrier depends on beyond its arguments: the tuning profile,
/// which may be invalid. `Ok` without the `profile` feature, where nothing is read.
pub(crate) fn check_auto_prerequisites() -> Result<()> {
    profile_choice_for_build(1).map(|_| ())
}

/// The algorithm the profile in use chooses for `parties`; `None` for the built-in rule.
#[cfg(feature = "profile")]
fn profile_choice(parties: usize) -> Option<Algorithm> {
    crate::tune::Profile::active().map(|profile| profile.choose(parties))
}

#[cfg(not(feature = "profile"))]
fn profile_choice(_parties: usize) -> Option<Algorithm> {
    None
}

/// As [`profile_choice`], with the lookup's error when the profile is invalid.
#[cfg(feature = "profile")]
fn profile_choice_for_build(parties: usize) -> Result<Option<Algorithm>> {
    Ok(crate::tune::profile_for_auto()?.map(|profile| profile.choose(parties)))
}

#[cfg(not(feature = "profile"))]
fn profile_choice_for_build(_parties: usize) -> Result<Option<Algorithm>> {
    Ok(None)
}

#[cfg(all(test, not(feature = "profile")))]
mod tests {
    use super::*;
    use crate::Barrier;

    /// Without the feature, a `PHASERS_PROFILE` naming a file that does not exist (an error with
    /// the feature) is not even read: `Auto` builds, and follows the built-in rule.
    #[test]
    fn without_the_profile_feature_auto_reads_no_profile() {
        let missing = std::env::temp_dir().join(format!(
            "phasers-no-profile-{}/nowhere.json",
            std::process::id()
        ));
        std::env::set_var("PHASERS_PROFILE", &missing);
        assert_eq!(check_auto_prerequisites(), Ok(()));
        for parties in [1, 2, 17, 64] {
            let builtin = Algorithm::Auto.resolve_builtin(parties);
            assert_eq!(Algorithm::Auto.resolve(parties), builtin);
            assert_eq!(Algorithm::Auto.resolve_for_build(parties), Ok(builtin));
            let barrier = Barrier::with_algorithm(parties, Algorithm::Auto).unwrap();
            assert_eq!(barrier.algorithm(), builtin);
        }
    }
}
