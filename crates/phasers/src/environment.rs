//! Every `PHASERS_*` variable the library reads, checked at once: a program (the `phasers`
//! command first) can refuse a typo before it starts work, naming the variable, instead of
//! meeting the error at the first object it builds, or in every row of a benchmark.

use crate::error::Result;
use crate::wait::WaitConfig;

/// Checks every environment variable the library reads, as building an object would: the wait
/// variables (`PHASERS_WAIT`, `PHASERS_SPIN`, `PHASERS_WAKE`, `PHASERS_STALL`, `PHASERS_FLOORS`),
/// `PHASERS_CHECKED`, and, with the `profile` feature, the tuning profile `PHASERS_PROFILE` (or
/// the default path) names.
///
/// # Errors
///
/// The first that does not hold a valid value: [`Error::InvalidArgument`](crate::Error) naming
/// the variable and its accepted values, or the profile's error, which says what to do.
///
/// ```
/// // Whatever this process was started with is valid (or this line would say which is not).
/// phasers::check_environment()?;
/// std::env::set_var("PHASERS_STALL", "soon");
/// let message = phasers::check_environment().unwrap_err().to_string();
/// assert!(message.contains("PHASERS_STALL"), "{message}");
/// std::env::remove_var("PHASERS_STALL");
/// # Ok::<(), phasers::Error>(())
/// ```
pub fn check_environment() -> Result<()> {
    WaitConfig::default().resolve()?;
    crate::team::checked_from_env()?;
    #[cfg(feature = "profile")]
    if let Some(error) = crate::Profile::status().error() {
        return Err(error.clone());
    }
    Ok(())
}
