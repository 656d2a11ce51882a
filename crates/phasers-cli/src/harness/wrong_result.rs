//! The first wrong result any thread of a row saw. A `phasers::Error` cannot say "wrong sum" or
//! "wrong data", and a panic would be the harness's failure rather than the measured object's, so
//! the threads record it here and the row reads it afterwards, as its error.

use std::sync::OnceLock;

/// Shared by the threads of one row.
///
/// ```
/// use phasers_cli::harness::wrong_result::WrongResult;
///
/// let wrong = WrongResult::default();
/// wrong.record(|| "first".to_owned());
/// wrong.record(|| "second".to_owned());
/// assert_eq!(wrong.into_message().as_deref(), Some("first"));
/// assert_eq!(WrongResult::default().into_message(), None);
/// ```
#[derive(Debug, Default)]
pub struct WrongResult(OnceLock<String>);

impl WrongResult {
    /// Keeps the message `describe` makes, unless an earlier one was kept: the first wrong result
    /// is the root cause of anything that followed. Out of line, so the check that calls it costs
    /// the hot path one predicted branch.
    #[cold]
    #[inline(never)]
    pub fn record(&self, describe: impl FnOnce() -> String) {
        self.0.get_or_init(describe);
    }

    /// The message kept, if any thread recorded one.
    pub fn into_message(self) -> Option<String> {
        self.0.into_inner()
    }
}
