//! What each thread of a row does: the one per-thread work trait every benchmark implements, and
//! its implementations for the library's handles, Rust's barrier and EPCC's reference loop.
//!
//! ```
//! let wrong = phasers_cli::harness::work::WrongResult::default();
//! wrong.record(|| "first".to_owned());
//! wrong.record(|| "second".to_owned());
//! assert_eq!(wrong.into_message().as_deref(), Some("first"));
//! ```

use std::sync::OnceLock;

use phasers::barrier::BarrierAlgorithm;

/// Why a thread stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Its own failure: a wrong result, an error from the contender.
    Cause(String),
    /// The echo of another thread's failure (a broken barrier or group).
    Echo(String),
}

impl From<phasers::Error> for Failure {
    /// `Broken` is the echo of someone else's failure, anything else a cause.
    fn from(error: phasers::Error) -> Self {
        match error {
            phasers::Error::Broken { .. } => Failure::Echo(error.to_string()),
            error => Failure::Cause(error.to_string()),
        }
    }
}

impl Failure {
    /// The same failure, its message prefixed with `what` failed.
    pub fn about(self, what: &str) -> Self {
        match self {
            Failure::Cause(message) => Failure::Cause(format!("{what}: {message}")),
            Failure::Echo(message) => Failure::Echo(format!("{what}: {message}")),
        }
    }
}

/// One thread's part of a row. The engine is generic over it, so each iteration is called
/// directly, with no virtual call the measured object would not pay.
pub trait Work: Send {
    /// Whether every iteration holds all threads until each has arrived: only then may thread 0
    /// cut a round short, and may the threads meet on an iteration between rounds.
    const SYNCHRONIZED: bool;

    /// Allocates and fills what it needs, on its own thread (so memory is first touched, and
    /// placed, where it is used); before the first iteration, not timed.
    fn prepare(&mut self) -> Result<(), Failure> {
        Ok(())
    }

    /// One timed iteration, the `index`-th call on this thread. Returns the variant that ran
    /// (what `auto` chose), when the contender says.
    fn iteration(&mut self, index: u64) -> Result<Option<&'static str>, Failure>;

    /// After the warm-up round, not timed: checks what the iterations produced.
    fn check(&mut self) -> Result<(), Failure> {
        Ok(())
    }
}

impl<A: BarrierAlgorithm> Work for phasers::Participant<A> {
    const SYNCHRONIZED: bool = true;

    // Always inlined, as `Participant::wait` is where users call it: left a call of its own (as
    // the compiler left it once the wait grew), the row measured the harness's call as well,
    // which the hand-written rows, inlined, do not pay: 12.1 ns against 11.2 ns inlined at 1
    // party (`phasers bench barrier --threads 1 --mode back-to-back`, AMD EPYC, 2 cores).
    #[inline(always)]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        match self.wait() {
            Ok(_) => Ok(None),
            Err(error) => Err(error.into()),
        }
    }
}

/// A phaser registration: `next()` is one episode.
impl Work for phasers::Registration {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        match self.next() {
            Ok(_) => Ok(None),
            Err(error) => Err(error.into()),
        }
    }
}

/// Rust's standard barrier needs no per-thread state: every thread holds a reference.
impl Work for &std::sync::Barrier {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        self.wait();
        Ok(None)
    }
}

/// EPCC's reference loop: an iteration is nothing but the delay the engine puts before it.
#[derive(Debug, Clone, Copy)]
pub struct Nothing;

impl Work for Nothing {
    const SYNCHRONIZED: bool = false;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        Ok(None)
    }
}

/// The first wrong result any thread of a row saw, shared by its threads. A `phasers::Error`
/// cannot say "wrong sum", and a panic would be the harness's failure rather than the measured
/// object's, so threads that check inside the timed iteration record it here and the row reads
/// it afterwards, as its error.
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
