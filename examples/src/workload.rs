//! What every application offers its runner: a problem of a given size, a sequential reference
//! run, a parallel run on any barrier kind, and a check of the parallel result against the
//! reference.
//!
//! [`Workload`] erases the application's result type, so a runner (the `phasers app` command)
//! handles every application alike: it times [`Workload::sequential`] and
//! [`Workload::parallel`], and `parallel` compares each result with the sequential one after the
//! clock has stopped.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::Duration;

use crate::sync::{Handles, SyncKind};

/// A problem size, as the Java Grande Forum benchmarks have sizes A, B and C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Size {
    /// Small enough that barriers dominate at a few threads.
    Small,
    /// Between the two.
    Medium,
    /// Large enough that the arithmetic dominates.
    Large,
}

impl Size {
    /// Every size, smallest first.
    pub const ALL: [Size; 3] = [Size::Small, Size::Medium, Size::Large];

    /// `small`, `medium` or `large`.
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Medium => "medium",
            Size::Large => "large",
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Size {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Size::ALL
            .into_iter()
            .find(|size| size.name() == text.trim())
            .ok_or_else(|| format!("unknown size {text:?}: use small, medium or large"))
    }
}

/// The applications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppName {
    /// Red-black successive over-relaxation ([`crate::sor`]).
    Sor,
    /// LU factorization with partial pivoting ([`crate::lu`]).
    Lu,
    /// Online clustering in the style of PARSEC StreamCluster ([`crate::streamcluster`]).
    StreamCluster,
    /// A fine-grained vector interpreter in the style of NESL's VCODE ([`crate::interp`]).
    Interp,
}

impl AppName {
    /// Every application, in report order.
    pub const ALL: [AppName; 4] = [
        AppName::Sor,
        AppName::Lu,
        AppName::StreamCluster,
        AppName::Interp,
    ];

    /// `sor`, `lu`, `streamcluster` or `interp`.
    pub fn name(self) -> &'static str {
        match self {
            AppName::Sor => "sor",
            AppName::Lu => "lu",
            AppName::StreamCluster => "streamcluster",
            AppName::Interp => "interp",
        }
    }

    /// What the application models, in a line.
    pub fn description(self) -> &'static str {
        match self {
            AppName::Sor => {
                "JGF SOR: red-black successive over-relaxation (omega 1.25) on an N x N grid, \
                 rows in blocks, a barrier after each half-sweep"
            }
            AppName::Lu => {
                "JGF LUFact: dgefa with partial pivoting, columns cyclic among threads, one thread \
                 pivots, two barriers per pivot step"
            }
            AppName::StreamCluster => {
                "PARSEC StreamCluster: online facility location over chunks of points, parallel \
                 pgain costs, one thread decides, three barriers per candidate"
            }
            AppName::Interp => {
                "NESL VCODE-style interpreter: one thread decodes, all run their share of each \
                 short vector instruction, barriers per instruction"
            }
        }
    }

    /// This application's problem of `size`.
    pub fn workload(self, size: Size) -> Box<dyn Workload> {
        match self {
            AppName::Sor => Box::new(Checked::new(crate::sor::Sor::new(size))),
            AppName::Lu => Box::new(Checked::new(crate::lu::Lu::new(size))),
            AppName::StreamCluster => {
                Box::new(Checked::new(crate::streamcluster::StreamCluster::new(size)))
            }
            AppName::Interp => Box::new(Checked::new(crate::interp::Interp::new(size))),
        }
    }
}

impl fmt::Display for AppName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AppName {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        AppName::ALL
            .into_iter()
            .find(|app| app.name() == text.trim())
            .ok_or_else(|| {
                format!("unknown application {text:?}: use sor, lu, streamcluster or interp")
            })
    }
}

/// A result and the time it took to compute.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed<T> {
    /// The result.
    pub output: T,
    /// The time of the computation alone (no set-up, no thread start-up, no check).
    pub elapsed: Duration,
    /// Barrier waits rank 0 made (0 for a sequential run).
    pub barriers: u64,
}

/// One application at one size, with its result type visible.
pub trait Application: Sync {
    /// What a run computes.
    type Output: Send + Sync;

    /// The problem in words, e.g. `500 x 500 grid, 100 iterations`.
    fn describe(&self) -> String;

    /// The sequential run: the same arithmetic in the same order, on one thread, with no barrier.
    fn sequential(&self) -> Timed<Self::Output>;

    /// The parallel run on one thread per handle. `Err` when a thread failed.
    fn parallel(&self, handles: Handles<'_>) -> Result<Timed<Self::Output>, String>;

    /// `Err` describing the first difference when `got` is not `expected`.
    fn check(&self, expected: &Self::Output, got: &Self::Output) -> Result<(), String>;
}

/// Why a parallel run has no time to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The barrier could not be built, or a thread failed.
    Failed(String),
    /// The run completed but its result differs from the sequential run's.
    WrongResult(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Failed(message) => write!(f, "failed: {message}"),
            RunError::WrongResult(message) => write!(f, "wrong result: {message}"),
        }
    }
}

impl std::error::Error for RunError {}

/// A completed, checked parallel run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParallelRun {
    /// The time of the computation (see [`Timed::elapsed`]).
    pub elapsed: Duration,
    /// Barrier waits each thread made.
    pub barriers: u64,
}

/// An application at one size, whatever its result type.
pub trait Workload: Send + Sync {
    /// The problem in words.
    fn describe(&self) -> String;

    /// Runs the sequential version and returns its time. The first run's result becomes the
    /// reference every parallel run is checked against; a later run that differs from it is an
    /// `Err` (the sequential code is not deterministic, which would be a bug).
    fn sequential(&self) -> Result<Duration, RunError>;

    /// Runs the parallel version on `threads` threads meeting at `sync`, then (after the clock
    /// has stopped) checks the result against the sequential one, running it first if needed.
    fn parallel(&self, threads: usize, sync: &SyncKind) -> Result<ParallelRun, RunError>;
}

/// An [`Application`] with its reference result, once computed.
pub struct Checked<A: Application> {
    app: A,
    reference: OnceLock<A::Output>,
}

impl<A: Application> Checked<A> {
    /// `app`, with no reference result yet.
    pub fn new(app: A) -> Self {
        Checked {
            app,
            reference: OnceLock::new(),
        }
    }

    /// The reference result, computed on first use.
    fn reference(&self) -> &A::Output {
        self.reference.get_or_init(|| self.app.sequential().output)
    }
}

impl<A: Application + Send> Workload for Checked<A>
where
    A::Output: Send + Sync,
{
    fn describe(&self) -> String {
        self.app.describe()
    }

    fn sequential(&self) -> Result<Duration, RunError> {
        let run = self.app.sequential();
        match self.reference.get() {
            Some(reference) => self.app.check(reference, &run.output).map_err(|message| {
                RunError::WrongResult(format!("the sequential run is not repeatable: {message}"))
            })?,
            None => {
                // Another thread cannot have set it: `Checked` is used from one runner thread.
                let _ = self.reference.set(run.output);
            }
        }
        Ok(run.elapsed)
    }

    fn parallel(&self, threads: usize, sync: &SyncKind) -> Result<ParallelRun, RunError> {
        let reference = self.reference();
        let run = sync
            .with_handles(threads, |handles| self.app.parallel(handles))
            .and_then(|run| run)
            .map_err(RunError::Failed)?;
        self.app
            .check(reference, &run.output)
            .map_err(RunError::WrongResult)?;
        Ok(ParallelRun {
            elapsed: run.elapsed,
            barriers: run.barriers,
        })
    }
}

/// The first index where `got` differs from `expected` (bit for bit, for floats), described; or
/// `Ok` when they are equal. `what` names the array.
pub(crate) fn first_difference<T: PartialEq + fmt::Debug>(
    what: &str,
    expected: &[T],
    got: &[T],
    same: impl Fn(&T, &T) -> bool,
) -> Result<(), String> {
    if expected.len() != got.len() {
        return Err(format!(
            "{what} has {} elements, the sequential run's has {}",
            got.len(),
            expected.len()
        ));
    }
    let differ = expected
        .iter()
        .zip(got)
        .filter(|(want, have)| !same(want, have))
        .count();
    match expected.iter().zip(got).position(|(want, have)| !same(want, have)) {
        None => Ok(()),
        Some(index) => Err(format!(
            "{what}[{index}] is {:?}, the sequential run's is {:?} ({differ} of {} elements differ)",
            got[index],
            expected[index],
            expected.len()
        )),
    }
}

/// Bit-for-bit equality of two floats (NaNs included), for results that must be identical.
pub(crate) fn same_bits(a: &f64, b: &f64) -> bool {
    a.to_bits() == b.to_bits()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sync::tests::every_kind;

    /// Checks `app`'s parallel result against its sequential one at 1, 2 and 3 threads on every
    /// barrier kind, and that a result with one element changed fails the check.
    pub(crate) fn check_every_kind<A: Application + Send>(app: A, corrupt: impl Fn(&mut A::Output))
    where
        A::Output: Clone + Send + Sync,
    {
        let checked = Checked::new(app);
        checked.sequential().unwrap();
        for kind in every_kind() {
            for threads in [1, 2, 3] {
                let run = checked
                    .parallel(threads, &kind)
                    .unwrap_or_else(|error| panic!("{kind:?} at {threads} threads: {error}"));
                assert!(run.barriers > 0, "{kind:?} at {threads} threads");
            }
        }
        let reference = checked.reference().clone();
        let mut wrong = reference.clone();
        corrupt(&mut wrong);
        assert!(checked.app.check(&reference, &wrong).is_err());
        assert!(checked.app.check(&reference, &reference).is_ok());
        // The sequential run is repeatable.
        checked.sequential().unwrap();
    }

    #[test]
    fn sizes_and_names_parse() {
        for size in Size::ALL {
            assert_eq!(size.name().parse::<Size>(), Ok(size));
        }
        for app in AppName::ALL {
            assert_eq!(app.name().parse::<AppName>(), Ok(app));
            assert!(!app.description().is_empty());
        }
        assert!("huge"
            .parse::<Size>()
            .unwrap_err()
            .contains("small, medium"));
        assert!("fft".parse::<AppName>().unwrap_err().contains("sor, lu"));
    }

    #[test]
    fn differences_are_described() {
        assert_eq!(
            first_difference("x", &[1, 2], &[1, 2], PartialEq::eq),
            Ok(())
        );
        let error = first_difference("x", &[1, 2, 3], &[1, 5, 6], PartialEq::eq).unwrap_err();
        assert_eq!(
            error,
            "x[1] is 5, the sequential run's is 2 (2 of 3 elements differ)"
        );
        assert!(first_difference("x", &[1], &[1, 2], PartialEq::eq)
            .unwrap_err()
            .contains("has 2 elements"));
        assert!(!same_bits(&0.0, &-0.0));
    }

    /// An application whose parallel run is wrong, to check that the runner notices.
    struct Wrong;

    impl Application for Wrong {
        type Output = Vec<u64>;

        fn describe(&self) -> String {
            "always wrong".to_owned()
        }

        fn sequential(&self) -> Timed<Vec<u64>> {
            Timed {
                output: vec![1, 2, 3],
                elapsed: Duration::ZERO,
                barriers: 0,
            }
        }

        fn parallel(&self, handles: Handles<'_>) -> Result<Timed<Vec<u64>>, String> {
            let run = crate::team::run(handles, |rank, waiter| {
                waiter.wait();
                rank as u64
            })?;
            Ok(Timed {
                output: run.results,
                elapsed: run.elapsed,
                barriers: run.waits,
            })
        }

        fn check(&self, expected: &Vec<u64>, got: &Vec<u64>) -> Result<(), String> {
            first_difference("result", expected, got, PartialEq::eq)
        }
    }

    #[test]
    fn a_wrong_parallel_result_is_an_error() {
        let checked = Checked::new(Wrong);
        let error = checked.parallel(3, &SyncKind::Std).unwrap_err();
        assert_eq!(
            error,
            RunError::WrongResult(
                "result[0] is 0, the sequential run's is 1 (3 of 3 elements differ)".to_owned()
            )
        );
        assert!(error.to_string().starts_with("wrong result: "));
        assert!(matches!(
            checked.parallel(0, &SyncKind::Std),
            Err(RunError::Failed(_))
        ));
    }
}
