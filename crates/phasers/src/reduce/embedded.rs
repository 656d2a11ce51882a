//! A reduction group that lives inside another object, a team, rather than behind a
//! [`Reduction`](crate::Reduction): the same algorithms, slots and jobs, with each call's root and
//! operator passed in, since a team's calls each bring their own.
//!
//! Its handles never leave the object that made them. That object must give every participant
//! the same calls in the same order, with the same kind, length, root and operator; the group's
//! own checks (lengths, kinds) still run, and a group whose calls are wrong fails for good, as a
//! `Reduction` does.

use super::algorithm::ReduceAlgorithm;
use super::handle::Reducer;
use super::kernel::Kernel;
use super::shared::Shared;
use super::signature::{KIND_ALLREDUCE, KIND_REDUCE};
use crate::error::Result;
use crate::primitive::Arc;
use crate::wait::Tuning;

/// The group; each participant takes its handle with [`participant`](Self::participant).
pub(crate) struct EmbeddedGroup<T> {
    shared: Arc<Shared<T>>,
}

impl<T: Copy + Send + Sync + 'static> EmbeddedGroup<T> {
    /// A group of `parties` (1 to [`MAX_PARTIES`](super::MAX_PARTIES)) running `algorithm`.
    pub(crate) fn new(parties: usize, algorithm: ReduceAlgorithm, tuning: Tuning) -> Self {
        EmbeddedGroup {
            shared: Arc::new(Shared::new(parties, 0, algorithm, false, tuning, None)),
        }
    }

    /// The handle of `rank`; the caller takes each rank once.
    pub(crate) fn participant(&self, rank: usize) -> Reducer<T> {
        Reducer::new(Arc::clone(&self.shared), rank)
    }
}

impl<T: Copy + Send + Sync + 'static> Reducer<T> {
    /// One call of an embedded group: `allreduce` (every output gets the result) or `reduce` to
    /// `root`, whose output must be as long as `input` (the others' outputs are not touched).
    /// Returns the algorithm that ran. A panic of the operator goes on once no other participant
    /// uses this one's buffers, as in [`Reducer::reduce`].
    pub(crate) fn run_embedded(
        &mut self,
        allreduce: bool,
        root: usize,
        input: &[T],
        output: &mut [T],
        kernel: &Kernel<T>,
    ) -> Result<ReduceAlgorithm> {
        let (kind, has_output) = if allreduce {
            (KIND_ALLREDUCE, true)
        } else {
            (KIND_REDUCE, self.rank == root)
        };
        let outcome = self
            .caller()
            .run(kind, root, input, output, has_output, kernel)?;
        Ok(outcome.algorithm())
    }
}
