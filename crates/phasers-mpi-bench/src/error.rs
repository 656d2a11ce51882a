//! The benchmark's one error type.

/// What can stop a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// An error of the library under test (or of starting MPI).
    #[error(transparent)]
    Mpi(#[from] phasers_mpi::Error),

    /// A correctness check failed: the contender would have looked faster than it is.
    #[error("{what} failed its correctness check: {detail}")]
    Check {
        /// The contender.
        what: String,
        /// What was seen.
        detail: String,
    },

    /// The OpenMP + MPI baseline did not run as asked.
    #[error("the OpenMP + MPI baseline failed: {0}")]
    Baseline(String),

    /// An output file could not be created or written.
    /// The message names the file and the reason.
    #[error("{0}")]
    Output(String),
}

impl BenchError {
    pub fn check(what: impl Into<String>, detail: impl Into<String>) -> Self {
        BenchError::Check {
            what: what.into(),
            detail: detail.into(),
        }
    }
}

/// `Result` with [`BenchError`].
pub type Result<T, E = BenchError> = std::result::Result<T, E>;
