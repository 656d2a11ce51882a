//! Part 3, seed 001's figure 14: the combined barrier over ranks x threads, with its default
//! process step (Auto, which measures the process algorithms at build and keeps the fastest; the
//! row says which it chose), the dissemination and the MCS-tree process step, against
//!
//! - `MPI_Barrier` among as many processes as the combined barrier has threads in all
//!   (`ranks * threads`, where the world has that many; otherwise n/a), and
//! - the EPCC mixed-mode barrier with as many ranks and OpenMP threads per rank
//!   (`omp barrier`, `MPI_Barrier` on the master, `omp barrier`).

use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::Communicator;
use phasers_mpi::{CombinedBarrier, CombinedParticipant, Mpi, ProcessAlgorithm};
use serde::Serialize;

use crate::check::{hold_back_each, wrong_episode};
use crate::crew::{with_led_crew, Task};
use crate::error::{BenchError, Result};
use crate::harness::{measure, Schedule};
use crate::omp_mpi;
use crate::process_rows::{self, ProcessContender, MPI_BARRIER};
use crate::stats::{Ratio, Timing};
use crate::subset::on_first;

/// The name of the EPCC mixed-mode rows.
pub const OMP_MPI_BARRIER: &str = "omp+mpi-barrier";

/// The process steps of the combined barrier in the grid: the default first.
pub const PROCESS_STEPS: [ProcessAlgorithm; 3] = [
    ProcessAlgorithm::Auto,
    ProcessAlgorithm::Dissemination,
    ProcessAlgorithm::McsTree,
];

/// The panels of the grid, in order.
pub fn algorithms() -> Vec<String> {
    let mut names: Vec<String> = PROCESS_STEPS.iter().map(|a| combined_name(*a)).collect();
    names.push(MPI_BARRIER.to_owned());
    names.push(OMP_MPI_BARRIER.to_owned());
    names
}

pub fn combined_name(step: ProcessAlgorithm) -> String {
    format!("combined-{}", step.name())
}

/// One cell of one panel.
#[derive(Debug, Clone, Serialize)]
pub struct GridRow {
    /// MPI ranks.
    pub ranks: usize,
    /// Threads per rank (for `mpi-barrier`: the cell it stands for; it ran `ranks * threads`
    /// single-threaded processes).
    pub threads: usize,
    /// `combined-auto`, `combined-dissemination`, `combined-mcs-tree`, `mpi-barrier` or
    /// `omp+mpi-barrier`.
    pub algorithm: String,
    /// The process step `combined-auto` chose at this shape (`node-shm`, `dissemination`, ...);
    /// `None` for the other rows.
    pub chosen: Option<&'static str>,
    /// Processes that ran the row.
    pub processes: usize,
    /// Time per barrier; `None` where the row could not run (see `note`).
    pub timing: Option<Timing>,
    /// This row over `mpi-barrier` with `ranks * threads` processes.
    pub ratio_to_mpi_barrier: Option<Ratio>,
    /// This row over `omp+mpi-barrier` with the same ranks and threads.
    pub ratio_to_omp_mpi_barrier: Option<Ratio>,
    /// Why a row has no timing.
    pub note: Option<String>,
}

/// Every cell; collective over the world, rows are rank 0's.
pub fn run(
    mpi: &Mpi,
    threads: &[usize],
    schedule: Schedule,
    mut report: impl FnMut(&GridRow),
) -> Result<Vec<GridRow>> {
    let world = mpi.world();
    let size = mpi.size();
    let mut rows: Vec<GridRow> = Vec::new();
    // MPI_Barrier among `n` processes, measured once per count the grid needs. Every rank
    // remembers which counts ran (the timings are rank 0's), so all skip the same rows.
    let mut mpi_barrier: Vec<(usize, Option<Timing>)> = Vec::new();
    for ranks in 1..=size {
        for &t in threads {
            let mut cell = Vec::new();
            for step in PROCESS_STEPS {
                let measured =
                    on_first(world, ranks, |comm| combined(mpi, comm, step, t, schedule))?;
                let (timing, chosen) = measured.unzip();
                let chosen = chosen.flatten();
                cell.push((combined_name(step), chosen, ranks, timing, None));
            }
            let timing = on_first(world, ranks, |comm| omp_mpi_barrier(comm, t, schedule))?;
            cell.push((OMP_MPI_BARRIER.to_owned(), None, ranks, timing, None));
            let processes = ranks * t;
            if processes <= size {
                if !mpi_barrier.iter().any(|(n, _)| *n == processes) {
                    let timing = on_first(world, processes, |comm| {
                        process_rows::measure_one(mpi, comm, ProcessContender::MpiBarrier, schedule)
                    })?;
                    mpi_barrier.push((processes, timing));
                }
                let timing = mpi_barrier
                    .iter()
                    .find(|(n, _)| *n == processes)
                    .and_then(|(_, t)| t.clone());
                cell.push((MPI_BARRIER.to_owned(), None, processes, timing, None));
            } else {
                let note = format!("needs {processes} processes, the world has {size}");
                cell.push((MPI_BARRIER.to_owned(), None, processes, None, Some(note)));
            }
            if mpi.rank() != 0 {
                continue;
            }
            let base_mpi = cell
                .iter()
                .find(|c| c.0 == MPI_BARRIER)
                .and_then(|c| c.3.clone());
            let base_omp = cell
                .iter()
                .find(|c| c.0 == OMP_MPI_BARRIER)
                .and_then(|c| c.3.clone());
            for (algorithm, chosen, processes, timing, note) in cell {
                let ratio = |base: &Option<Timing>| {
                    timing
                        .as_ref()
                        .zip(base.as_ref())
                        .map(|(ours, base)| Ratio::of(ours, base))
                };
                let row = GridRow {
                    ranks,
                    threads: t,
                    processes,
                    ratio_to_mpi_barrier: ratio(&base_mpi),
                    ratio_to_omp_mpi_barrier: ratio(&base_omp),
                    algorithm,
                    chosen,
                    timing,
                    note,
                };
                report(&row);
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

impl GridRow {
    /// The algorithm as the table prints it: `combined-auto (node-shm)` says what Auto chose.
    pub fn label(&self) -> String {
        match self.chosen {
            Some(chosen) => format!("{} ({chosen})", self.algorithm),
            None => self.algorithm.clone(),
        }
    }
}

/// The combined barrier with `threads` threads on each of `comm`'s ranks: checked, then timed;
/// with what Auto chose when `step` is Auto.
fn combined(
    mpi: &Mpi,
    comm: &SimpleCommunicator,
    step: ProcessAlgorithm,
    threads: usize,
    schedule: Schedule,
) -> Result<(Timing, Option<&'static str>)> {
    let what = format!(
        "{} at {} ranks x {threads} threads",
        combined_name(step),
        comm.size()
    );
    let barrier = CombinedBarrier::builder(mpi, comm, threads)
        .process(step)
        .build()?;
    // Auto chooses while the barrier is built, before the check and the timed samples.
    let chosen = (step == ProcessAlgorithm::Auto).then(|| barrier.process_chosen().name());
    let participants = comm.size() as usize * threads;
    let first = comm.rank() as usize * threads;
    let mut workers = barrier.participants().into_iter().map(|participant| {
        let what = what.as_str();
        let index = first + participant.thread_rank();
        let mut handle = Some(participant);
        let mut expected = 0u64;
        move |task| {
            let participant = handle.as_mut().ok_or_else(|| {
                BenchError::check(what, "an earlier error already ended this thread's part")
            })?;
            let mut wait = || wait_checked(what, participant, &mut expected);
            let result = match task {
                Task::Check => hold_back_each(what, index, participants, &mut wait),
                Task::Run(n) => (0..n).try_for_each(|_| wait()),
            };
            if result.is_err() {
                // Dropping the handle breaks the local barrier, so this rank's other
                // threads return an error instead of waiting for this one.
                handle = None;
            }
            result
        }
    });
    let Some(first) = workers.next() else {
        return Err(BenchError::check(
            &what,
            "the barrier handed out no participant",
        ));
    };
    // The calling thread is thread 0, as the OpenMP master is in the omp+mpi-barrier rows.
    let timing = with_led_crew(first, workers.collect(), |dispatch| {
        dispatch.run(Task::Check)?;
        measure(comm, schedule, |n| dispatch.run(Task::Run(n)))
    })?;
    Ok((timing, chosen))
}

fn wait_checked(
    what: &str,
    participant: &mut CombinedParticipant,
    expected: &mut u64,
) -> Result<()> {
    let episode = participant.wait()?.episode();
    if episode != *expected {
        return Err(wrong_episode(what, episode, *expected));
    }
    *expected += 1;
    Ok(())
}

fn omp_mpi_barrier(
    comm: &SimpleCommunicator,
    threads: usize,
    schedule: Schedule,
) -> Result<Timing> {
    measure(comm, schedule, |n| omp_mpi::run(comm, threads, n))
}
