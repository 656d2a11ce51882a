//! The library's rows: one `Reduction<f32>` with `Op::Sum` per row, one `Reducer` per participant.

use std::sync::Arc;

use phasers::{Op, ReduceAlgorithm, Reducer, Reduction};

use super::collective::Collective;
use super::data;
use super::harness::{Failure, Participant};

/// A participant of a library row.
pub struct OursParticipant {
    reducer: Reducer<f32>,
    collective: Collective,
    len: usize,
    expected: Arc<[f32]>,
    input: Vec<f32>,
    output: Vec<f32>,
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
    Ok(group
        .participants()
        .into_iter()
        .map(|reducer| OursParticipant {
            reducer,
            collective,
            len,
            expected: Arc::clone(expected),
            input: Vec::new(),
            output: Vec::new(),
        })
        .collect())
}

impl Participant for OursParticipant {
    fn prepare(&mut self) -> Result<(), Failure> {
        let rank = self.reducer.rank();
        self.input = data::input(rank, self.len);
        if self.collective.receives(rank) {
            self.output = vec![0.0; self.len];
        }
        Ok(())
    }

    #[inline]
    fn call(&mut self) -> Result<Option<ReduceAlgorithm>, Failure> {
        let outcome = match self.collective {
            Collective::Reduce => self.reducer.reduce(&self.input, &mut self.output),
            Collective::Allreduce => self.reducer.allreduce(&self.input, &mut self.output),
        }
        .map_err(|error| Failure::from_library(self.collective.name(), error))?;
        Ok(Some(outcome.algorithm()))
    }

    fn check(&mut self) -> Result<(), Failure> {
        if self.collective.receives(self.reducer.rank()) {
            data::check(&self.output, &self.expected).map_err(Failure::Cause)?;
        }
        Ok(())
    }
}
