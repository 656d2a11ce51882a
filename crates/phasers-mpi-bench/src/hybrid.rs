//! Part 4: the hybrid team's allreduce (`Op::Sum`) of one `u64` and of 1M `f64`, at every
//! ranks x threads shape with 2 or more members that fits the world and the machine, against
//! `MPI_Allreduce` over as many ranks as the shape has members (R x T against R*T ranks, "MPI
//! everywhere"), in the same run. A shape with more members than the world has ranks has no
//! baseline (its ratio is empty). Every call's result is checked at both ends of the buffer
//! (which are cleared before the call).

use std::fmt::Debug;
use std::time::Instant;

use phasers::{Element, Op};
use phasers_mpi::mpi::collective::SystemOperation;
use phasers_mpi::mpi::datatype::Equivalence;
use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::{Communicator, CommunicatorCollectives};
use phasers_mpi::{HybridMember, HybridTeam, Mpi};
use serde::Serialize;

use crate::crew::{with_crew, Task};
use crate::error::{BenchError, Result};
use crate::harness::{measure, Schedule};
use crate::stats::{Ratio, Timing};
use crate::subset::on_first;

/// The name of the baseline rows.
pub const MPI_ALLREDUCE: &str = "mpi-allreduce";
/// The name of our rows.
pub const HYBRID: &str = "hybrid-team";
/// The long buffer: 1M f64 (8 MiB).
pub const LONG: usize = 1 << 20;

/// One measured row.
#[derive(Debug, Clone, Serialize)]
pub struct HybridRow {
    /// `hybrid-team` or `mpi-allreduce`.
    pub algorithm: &'static str,
    /// `u64` or `f64`.
    pub element: &'static str,
    /// Elements per member.
    pub length: usize,
    /// MPI ranks.
    pub ranks: usize,
    /// Threads (members) per rank; 1 for `mpi-allreduce`.
    pub threads: usize,
    /// Time per allreduce.
    pub timing: Timing,
    /// This row over the `mpi-allreduce` row with `ranks * threads` ranks, same element and
    /// length; `None` where the world has fewer ranks than that.
    pub ratio_to_mpi_allreduce: Option<Ratio>,
}

/// The hybrid part's rows.
#[derive(Debug, Clone, Serialize)]
pub struct HybridPart {
    /// Rank counts of the `MPI_Allreduce` rows: every shape's ranks x threads within the world.
    pub baseline_ranks: Vec<usize>,
    /// The rows, the baseline of each length first.
    pub rows: Vec<HybridRow>,
}

/// The shapes measured: ranks x threads with at least 2 members, at most max(world, cores)
/// members, threads a power of two.
pub fn shapes(world: usize, cores: usize) -> Vec<(usize, usize)> {
    let most = world.max(cores);
    let mut shapes = Vec::new();
    for ranks in 1..=world {
        let mut threads = 1;
        while ranks * threads <= most {
            if ranks * threads >= 2 {
                shapes.push((ranks, threads));
            }
            threads *= 2;
        }
    }
    shapes
}

/// The rank counts `MPI_Allreduce` runs at: each shape's members, where the world has that many
/// ranks.
pub fn baselines(shapes: &[(usize, usize)], world: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = shapes
        .iter()
        .map(|&(ranks, threads)| ranks * threads)
        .filter(|&members| members <= world)
        .collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// Runs the part; collective over the world, rows are rank 0's.
pub fn run(
    mpi: &Mpi,
    schedule: Schedule,
    mut report: impl FnMut(&HybridRow),
) -> Result<HybridPart> {
    let world = mpi.world();
    let shapes = shapes(mpi.size(), phasers::available_cores());
    let baseline_ranks = baselines(&shapes, mpi.size());
    let mut rows = Vec::new();
    let mut part =
        |element: &'static str, length: usize, rows: &mut Vec<HybridRow>| -> Result<()> {
            let mut baselines = Vec::new();
            for &ranks in &baseline_ranks {
                let timing = on_first(world, ranks, |comm| match element {
                    "u64" => mpi_allreduce::<u64>(comm, length, schedule),
                    _ => mpi_allreduce::<f64>(comm, length, schedule),
                })?;
                if let Some(timing) = timing.filter(|_| mpi.rank() == 0) {
                    let row = HybridRow {
                        algorithm: MPI_ALLREDUCE,
                        element,
                        length,
                        ranks,
                        threads: 1,
                        ratio_to_mpi_allreduce: Some(Ratio::of(&timing, &timing)),
                        timing: timing.clone(),
                    };
                    report(&row);
                    rows.push(row);
                    baselines.push((ranks, timing));
                }
            }
            for &(ranks, threads) in &shapes {
                let timing = on_first(world, ranks, |comm| match element {
                    "u64" => hybrid::<u64>(mpi, comm, threads, length, schedule),
                    _ => hybrid::<f64>(mpi, comm, threads, length, schedule),
                })?;
                if let Some(timing) = timing.filter(|_| mpi.rank() == 0) {
                    let baseline = baselines
                        .iter()
                        .find(|(r, _)| *r == ranks * threads)
                        .map(|(_, b)| b);
                    let row = HybridRow {
                        algorithm: HYBRID,
                        element,
                        length,
                        ranks,
                        threads,
                        ratio_to_mpi_allreduce: baseline.map(|b| Ratio::of(&timing, b)),
                        timing,
                    };
                    report(&row);
                    rows.push(row);
                }
            }
            Ok(())
        };
    part("u64", 1, &mut rows)?;
    part("f64", LONG, &mut rows)?;
    Ok(HybridPart {
        baseline_ranks,
        rows,
    })
}

/// What the benchmark reduces: member `rank` contributes `rank + 1` everywhere, so the sum is
/// exact in both types.
trait Value: Element + Equivalence + Copy + PartialEq + Debug + Send + 'static {
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

/// The sum over members `0..size` of `rank + 1`.
fn expected<T: Value>(size: usize) -> T {
    T::of(size * (size + 1) / 2)
}

/// Clears both ends of `output`, so a call that writes nothing cannot pass the check.
fn clear_ends<T: Value>(output: &mut [T]) {
    let last = output.len() - 1;
    output[0] = T::of(0);
    output[last] = T::of(0);
}

fn check_ends<T: Value>(what: &str, output: &[T], size: usize) -> Result<()> {
    let want = expected::<T>(size);
    let ends = [output[0], output[output.len() - 1]];
    if ends != [want, want] {
        return Err(BenchError::check(
            what,
            format!("the result's ends are {ends:?}, the sum over {size} members is {want:?}"),
        ));
    }
    Ok(())
}

fn mpi_allreduce<T: Value>(
    comm: &SimpleCommunicator,
    length: usize,
    schedule: Schedule,
) -> Result<Timing> {
    let size = comm.size() as usize;
    let what = format!("MPI_Allreduce of {length} at {size} ranks");
    let input = vec![T::of(comm.rank() as usize + 1); length];
    let mut output = vec![T::of(0); length];
    measure(comm, schedule, |n| {
        let start = Instant::now();
        for _ in 0..n {
            clear_ends(&mut output);
            comm.all_reduce_into(&input[..], &mut output[..], SystemOperation::sum());
            check_ends(&what, &output, size)?;
        }
        Ok(start.elapsed())
    })
}

fn hybrid<T: Value>(
    mpi: &Mpi,
    comm: &SimpleCommunicator,
    threads: usize,
    length: usize,
    schedule: Schedule,
) -> Result<Timing> {
    let what = format!(
        "hybrid allreduce of {length} at {} ranks x {threads} threads",
        comm.size()
    );
    // The algorithm, without the cross-process check (see `HybridTeamBuilder::unchecked`).
    let team = HybridTeam::builder(mpi, comm, threads)
        .unchecked()
        .build()?;
    let workers: Vec<_> = team
        .participants()
        .into_iter()
        .map(|member| {
            let what = what.as_str();
            let input = vec![T::of(member.rank() + 1); length];
            let mut output = vec![T::of(0); length];
            let mut handle: Option<HybridMember> = Some(member);
            move |task| {
                let member = handle.as_mut().ok_or_else(|| {
                    BenchError::check(what, "an earlier error already ended this thread's part")
                })?;
                let calls = match task {
                    Task::Check => 1,
                    Task::Run(n) => n,
                };
                let size = member.parties();
                let result = (0..calls).try_for_each(|_| {
                    clear_ends(&mut output);
                    member.allreduce(&input, &mut output, Op::Sum)?;
                    check_ends(what, &output, size)
                });
                if result.is_err() {
                    // A dropped member breaks the team, so its siblings return instead of waiting.
                    handle = None;
                }
                result
            }
        })
        .collect();
    with_crew(workers, |dispatch| {
        dispatch.run(Task::Check)?;
        measure(comm, schedule, |n| dispatch.run(Task::Run(n)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_on_two_cores() {
        assert_eq!(shapes(2, 2), vec![(1, 2), (2, 1)]);
        assert_eq!(
            shapes(4, 2),
            vec![(1, 2), (1, 4), (2, 1), (2, 2), (3, 1), (4, 1)]
        );
        assert_eq!(shapes(1, 1), Vec::<(usize, usize)>::new());
    }

    #[test]
    fn each_shape_meets_mpi_over_as_many_ranks() {
        // np 2: 1x2 and 2x1 against 2 ranks.
        assert_eq!(baselines(&shapes(2, 2), 2), vec![2]);
        // np 4 on 2 cores: 2x2 and 1x4 against 4 ranks, 3x1 against 3.
        assert_eq!(baselines(&shapes(4, 2), 4), vec![2, 3, 4]);
        // A shape larger than the world has no baseline.
        assert_eq!(baselines(&[(1, 8)], 2), Vec::<usize>::new());
    }

    #[test]
    fn checks_the_sum() {
        let mut out = vec![3u64; 4];
        assert!(check_ends("t", &out, 2).is_ok());
        clear_ends(&mut out);
        assert!(check_ends("t", &out, 2).is_err());
        assert_eq!(expected::<f64>(4), 10.0);
    }
}
