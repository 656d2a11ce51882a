//! The library's rows: one `Reduction<f32>` with `Op::Sum` per row, one `Reducer` per participant.

use std::sync::Arc;

use phasers::{Op, ReduceAlgorithm, Reducer, Reduction};

use super::workload::{Arrays, Collective};
use phasers_cli::harness::work::{Failure, Work};

/// A participant of a library row.
pub struct OursParticipant {
    reducer: Reducer<f32>,
    arrays: Arrays,
}

/// The participants of a `threads`-party reduction of `len` floats with `algorithm`, or why the
/// group could not be built.
pub fn participants(
    algorithm: ReduceAlgorithm,
    threads: usize,
    len: usize,
    collective: Collective,
    expected: &Arc<[f32]>,
) -> Result<Vec<OursParticipant>, String> {
    let group = Reduction::<f32>::builder(threads)
        .op(Op::Sum)
        .algorithm(algorithm)
        .build()
        .map_err(|error| format!("cannot build the reduction: {error}"))?;
    let participant = |reducer: Reducer<f32>| OursParticipant {
        arrays: Arrays::new(reducer.rank(), collective, len, expected),
        reducer,
    };
    Ok(group.participants().into_iter().map(participant).collect())
}

impl Work for OursParticipant {
    // A reduction's non-receivers may return before everyone has arrived.
    const SYNCHRONIZED: bool = false;

    fn prepare(&mut self) -> Result<(), Failure> {
        self.arrays.prepare()
    }

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        let Arrays {
            collective,
            input,
            output,
            ..
        } = &mut self.arrays;
        let outcome = match collective {
            Collective::Reduce => self.reducer.reduce(input, output),
            Collective::Allreduce => self.reducer.allreduce(input, output),
        };
        outcome
            .map(|outcome| Some(outcome.algorithm().name()))
            .map_err(|error| Failure::from(error).about(collective.name()))
    }

    fn check(&mut self) -> Result<(), Failure> {
        self.arrays.check()
    }
}
