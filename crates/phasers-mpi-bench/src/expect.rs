//! What each member passes to a collective of the benchmark and what it must get back, so that
//! every timed call's result is checked: a call that wrote nothing, or the wrong thing, fails the
//! row instead of looking fast.
//!
//! Member `m` of `n` contributes `m + 1` (exact in `u64` and `f64`); the root is member 0. Before
//! each call the checked positions of the output are cleared to 0, which no expected value is
//! (except an exclusive scan's member 0, whose output the hybrid team leaves as it was). Short
//! outputs are checked whole; long ones (1M elements) at both ends, as a full check would cost as
//! much as the call.

use std::fmt::Debug;

use phasers::Element;
use phasers_mpi::mpi::datatype::Equivalence;

use crate::collective::{Case, Collective};
use crate::error::{BenchError, Result};

/// The member every rooted collective uses as its root.
pub const ROOT: usize = 0;

/// Outputs up to this long are checked at every position.
const CHECKED_WHOLE: usize = 64;

/// An element type of the benchmark.
pub trait Value: Element + Equivalence + Copy + PartialEq + Debug + Send + Sync + 'static {
    fn of(n: usize) -> Self;
}

impl Value for u64 {
    fn of(n: usize) -> Self {
        n as u64
    }
}

impl Value for f64 {
    fn of(n: usize) -> Self {
        n as f64
    }
}

/// Whose contract the expectations follow where the hybrid team and MPI differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A hybrid team member: an exclusive scan leaves member 0's output as it was.
    Hybrid,
    /// An MPI rank: `MPI_Exscan` leaves rank 0's output undefined, so it is not checked.
    Mpi,
}

/// The value output position `i` must hold after the call (as the `n` of `Value::of`); `None`
/// where nothing is promised.
type Expectation = Box<dyn Fn(usize) -> Option<usize>>;

/// One member's buffers for every call of a row, and what the call must leave in the output.
#[derive(Debug, Clone)]
pub struct Call<T> {
    pub input: Vec<T>,
    /// The output; for broadcast, the buffer (the root's holds the value sent).
    pub output: Vec<T>,
    /// `(position, value)` the output must hold after the call.
    expected: Vec<(usize, T)>,
    /// Whether the checked positions are cleared before each call (not the broadcast root's:
    /// its buffer is the input).
    clear: bool,
}

impl<T: Value> Call<T> {
    /// The buffers of member `member` of `parties` for `case`.
    pub fn new(case: Case, member: usize, parties: usize, side: Side) -> Call<T> {
        let len = case.length;
        let value = |n: usize| T::of(n);
        let root = member == ROOT;
        let sum = |count: usize| count * (count + 1) / 2;
        // (input, output length, expected value at output position i, cleared before the call)
        let (input, output_len, expect): (Vec<T>, usize, Expectation) = match case.collective {
            Collective::Barrier => (Vec::new(), 0, Box::new(|_| None)),
            Collective::Broadcast => (Vec::new(), len, Box::new(|_| Some(ROOT + 1))),
            Collective::Reduce => (
                vec![value(member + 1); len],
                if root { len } else { 0 },
                Box::new(move |_| Some(sum(parties))),
            ),
            Collective::Allreduce => (
                vec![value(member + 1); len],
                len,
                Box::new(move |_| Some(sum(parties))),
            ),
            Collective::Gather => (
                vec![value(member + 1); len],
                if root { parties * len } else { 0 },
                Box::new(move |i| Some(i / len + 1)),
            ),
            Collective::Scatter => (
                if root {
                    (0..parties * len).map(|i| value(i / len + 1)).collect()
                } else {
                    Vec::new()
                },
                len,
                Box::new(move |_| Some(member + 1)),
            ),
            Collective::Allgather => (
                vec![value(member + 1); len],
                parties * len,
                Box::new(move |i| Some(i / len + 1)),
            ),
            // Block j of member m's input is m * n + j + 1, so block i of member m's output,
            // which came from member i, is i * n + m + 1.
            Collective::Alltoall => (
                (0..parties * len)
                    .map(|i| value(member * parties + i / len + 1))
                    .collect(),
                parties * len,
                Box::new(move |i| Some((i / len) * parties + member + 1)),
            ),
            Collective::ScanInclusive => (
                vec![value(member + 1); len],
                len,
                Box::new(move |_| Some(sum(member + 1))),
            ),
            Collective::ScanExclusive => (
                vec![value(member + 1); len],
                len,
                // Member 0 has no prefix: the hybrid team leaves the cleared output alone.
                Box::new(move |_| match (member, side) {
                    (0, Side::Mpi) => None,
                    (0, Side::Hybrid) => Some(0),
                    _ => Some(sum(member)),
                }),
            ),
        };
        let positions: Vec<usize> = if output_len <= CHECKED_WHOLE {
            (0..output_len).collect()
        } else {
            vec![0, output_len - 1]
        };
        let expected = positions
            .into_iter()
            .filter_map(|i| expect(i).map(|v| (i, value(v))))
            .collect();
        let broadcast_root = case.collective == Collective::Broadcast && root;
        let output = if broadcast_root {
            vec![value(ROOT + 1); output_len]
        } else {
            vec![value(0); output_len]
        };
        Call {
            input,
            output,
            expected,
            clear: !broadcast_root,
        }
    }

    /// Clears the checked positions, so that a call that writes nothing cannot pass.
    pub fn clear(&mut self) {
        if self.clear {
            for &(i, _) in &self.expected {
                self.output[i] = T::of(0);
            }
        }
    }

    /// Checks the output after a call.
    pub fn verify(&self, what: &str) -> Result<()> {
        match self
            .expected
            .iter()
            .find(|&&(i, want)| self.output[i] != want)
        {
            None => Ok(()),
            Some(&(i, want)) => Err(BenchError::check(
                what,
                format!(
                    "output element {i} of {} is {:?} where {want:?} was expected",
                    self.output.len(),
                    self.output[i]
                ),
            )),
        }
    }

    /// How many positions are checked (for tests).
    #[cfg(test)]
    fn checked(&self) -> usize {
        self.expected.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::{cases, Element as Kind};

    /// What the collective does, computed plainly from every member's input: each member's
    /// output (for broadcast, from the root's buffer).
    fn reference(collective: Collective, inputs: &[Vec<u64>], outputs: &mut [Vec<u64>]) {
        let n = inputs.len();
        let len = |i: usize| outputs[i].len();
        match collective {
            Collective::Barrier => {}
            Collective::Broadcast => {
                let sent = outputs[ROOT].clone();
                outputs.iter_mut().for_each(|o| o.clone_from(&sent));
            }
            Collective::Reduce | Collective::Allreduce => {
                let k = inputs[0].len();
                let sum: Vec<u64> = (0..k).map(|e| inputs.iter().map(|x| x[e]).sum()).collect();
                for (m, output) in outputs.iter_mut().enumerate() {
                    if collective == Collective::Allreduce || m == ROOT {
                        output.clone_from(&sum);
                    }
                }
            }
            Collective::Gather => outputs[ROOT] = inputs.concat(),
            Collective::Allgather => outputs.iter_mut().for_each(|o| *o = inputs.concat()),
            Collective::Scatter => {
                let k = len(0);
                let whole = inputs[ROOT].clone();
                for (m, output) in outputs.iter_mut().enumerate() {
                    output.copy_from_slice(&whole[m * k..(m + 1) * k]);
                }
            }
            Collective::Alltoall => {
                let k = inputs[0].len() / n;
                for (m, output) in outputs.iter_mut().enumerate() {
                    for (i, input) in inputs.iter().enumerate() {
                        output[i * k..(i + 1) * k].copy_from_slice(&input[m * k..(m + 1) * k]);
                    }
                }
            }
            Collective::ScanInclusive | Collective::ScanExclusive => {
                let exclusive = collective == Collective::ScanExclusive;
                for (m, output) in outputs.iter_mut().enumerate() {
                    if exclusive && m == 0 {
                        continue;
                    }
                    let upto = if exclusive { m } else { m + 1 };
                    for (e, out) in output.iter_mut().enumerate() {
                        *out = inputs[..upto].iter().map(|x| x[e]).sum();
                    }
                }
            }
        }
    }

    #[test]
    fn expectations_match_what_each_collective_computes() {
        for collective in Collective::ALL {
            for length in [1, 3] {
                let case = Case {
                    collective,
                    element: Kind::U64,
                    length,
                };
                for n in 1..7 {
                    let mut calls: Vec<Call<u64>> = (0..n)
                        .map(|m| Call::new(case, m, n, Side::Hybrid))
                        .collect();
                    calls.iter_mut().for_each(Call::clear);
                    // Before the call, nothing passes (but what is left as it was).
                    for (m, call) in calls.iter().enumerate() {
                        let untouched = collective == Collective::ScanExclusive && m == 0;
                        let root_buffer = collective == Collective::Broadcast && m == ROOT;
                        if call.checked() > 0 && !untouched && !root_buffer {
                            assert!(call.verify("t").is_err(), "{case:?} member {m} of {n}");
                        }
                    }
                    let inputs: Vec<Vec<u64>> = calls.iter().map(|c| c.input.clone()).collect();
                    let mut outputs: Vec<Vec<u64>> =
                        calls.iter().map(|c| c.output.clone()).collect();
                    reference(collective, &inputs, &mut outputs);
                    for (m, (call, output)) in calls.iter_mut().zip(outputs).enumerate() {
                        call.output = output;
                        call.verify("t")
                            .unwrap_or_else(|e| panic!("{case:?} member {m} of {n}: {e}"));
                    }
                }
            }
        }
    }

    #[test]
    fn every_result_is_checked_where_there_is_one() {
        for case in cases(&Collective::ALL) {
            let n = 4;
            for m in 0..n {
                let call = Call::<u64>::new(case, m, n, Side::Mpi);
                let has_result = match case.collective {
                    Collective::Barrier => false,
                    Collective::Reduce | Collective::Gather => m == ROOT,
                    // MPI leaves rank 0's exclusive prefix undefined.
                    Collective::ScanExclusive => m != 0,
                    _ => true,
                };
                assert_eq!(call.checked() > 0, has_result, "{case:?} member {m}");
                if case.length > CHECKED_WHOLE && has_result {
                    assert_eq!(call.checked(), 2, "both ends of {case:?}");
                }
            }
        }
    }

    #[test]
    fn a_wrong_value_is_named() {
        let case = Case {
            collective: Collective::Allreduce,
            element: Kind::F64,
            length: 1 << 20,
        };
        let mut call = Call::<f64>::new(case, 1, 2, Side::Hybrid);
        call.output[0] = 3.0;
        call.output[(1 << 20) - 1] = 2.0;
        let error = call.verify("allreduce").unwrap_err().to_string();
        assert!(
            error.contains("element 1048575") && error.contains("3.0"),
            "{error}"
        );
    }
}
