//! What a builder was told about waiting, kept as one field by every builder (barrier, phaser,
//! reduction, team) so that the options and their resolution against the environment are written
//! once.

use std::time::Duration;

use super::policy::WaitPolicy;
use super::tuning::Tuning;
use crate::error::Result;

/// A builder's `wait_policy` and `stall_after`, as set, before the environment has its say.
///
/// The default is what a builder starts from: [`WaitPolicy::Auto`] and no stall time of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct WaitConfig {
    /// The builder's `wait_policy`; `PHASERS_WAIT` overrides it.
    pub(crate) policy: WaitPolicy,
    /// The builder's `stall_after`; `None` leaves the choice to `PHASERS_STALL`, else the
    /// default.
    pub(crate) stall_after: Option<Duration>,
}

impl WaitConfig {
    /// The object's wait settings: this policy unless `PHASERS_WAIT` replaces it, the spin and
    /// wake overrides of `PHASERS_SPIN` and `PHASERS_WAKE`, the floors, and the stall time.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the variable when one of
    /// them holds a value that cannot be parsed: every build fails alike.
    pub(crate) fn resolve(self) -> Result<Tuning> {
        Ok(Tuning::from_env(self.policy)?.with_stall_after(self.stall_after))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builder_starts_from_auto_and_no_stall_time_of_its_own() {
        assert_eq!(
            WaitConfig::default(),
            WaitConfig {
                policy: WaitPolicy::Auto,
                stall_after: None,
            }
        );
    }

    #[test]
    fn the_stall_time_set_is_the_stall_time_resolved() {
        // A stall time set on the builder wins over PHASERS_STALL; PHASERS_WAIT may be set in the
        // environment of the test run, so only the stall time is compared.
        let config = WaitConfig {
            policy: WaitPolicy::Park,
            stall_after: Some(Duration::from_secs(42)),
        };
        let tuning = config
            .resolve()
            .expect("the test run's PHASERS_* variables parse");
        assert_eq!(tuning.stall_after(), Some(Duration::from_secs(42)));
        let off = WaitConfig {
            stall_after: Some(Duration::ZERO),
            ..config
        };
        assert_eq!(off.resolve().unwrap().stall_after(), None);
    }
}
