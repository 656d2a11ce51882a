//! How much each benchmark prints: tables that fit 100 columns with notes as footnotes, or with
//! `--verbose` every column and note in full.
//!
//! The setting is the process's, not a parameter: tables are printed deep inside each run, and
//! the reader's choice is the same for all. Nothing turns it off, so a quick-suite part parsed
//! without the flag keeps the suite's choice.

use std::sync::atomic::{AtomicBool, Ordering};

/// The widest line, in characters, that the default output prints.
pub const WIDTH: usize = 100;

static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Turns on the detailed output for the rest of the process when `verbose`.
pub fn request(verbose: bool) {
    if verbose {
        VERBOSE.store(true, Ordering::Relaxed);
    }
}

/// Whether tables print every column and note in full.
pub fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

/// The widest line of `text`, in characters (not bytes: `µ`, `×` and `→` take one column each).
///
/// ```
/// use phasers_cli::harness::verbosity::widest;
///
/// assert_eq!(widest("µs\n1234\n"), 4);
/// assert_eq!(widest(""), 0);
/// ```
pub fn widest(text: &str) -> usize {
    text.lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}
