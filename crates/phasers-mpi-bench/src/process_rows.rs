//! Part 2: the process barriers ([`ProcessBarrier`] with each [`ProcessAlgorithm`]) against a
//! plain `MPI_Barrier`, at every rank count from 1 to the world's, on the first `p` ranks.

use std::time::Instant;

use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::{Communicator, CommunicatorCollectives};
use phasers_mpi::{Mpi, ProcessAlgorithm, ProcessBarrier};
use serde::Serialize;

use crate::check::{hold_back_each, wrong_episode};
use crate::error::Result;
use crate::harness::{measure, Schedule};
use crate::stats::{Ratio, Timing};
use crate::subset::on_first;

/// The name of the plain `MPI_Barrier` rows.
pub const MPI_BARRIER: &str = "mpi-barrier";

/// What meets at a process barrier row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessContender {
    /// `MPI_Barrier` on the row's communicator.
    MpiBarrier,
    /// One of ours.
    Ours(ProcessAlgorithm),
}

impl ProcessContender {
    /// The baseline first, then ours, Auto last.
    pub const ALL: [ProcessContender; 6] = [
        ProcessContender::MpiBarrier,
        ProcessContender::Ours(ProcessAlgorithm::Dissemination),
        ProcessContender::Ours(ProcessAlgorithm::McsTree),
        ProcessContender::Ours(ProcessAlgorithm::Library),
        ProcessContender::Ours(ProcessAlgorithm::NodeShm),
        ProcessContender::Ours(ProcessAlgorithm::Auto),
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProcessContender::MpiBarrier => MPI_BARRIER,
            ProcessContender::Ours(algorithm) => algorithm.name(),
        }
    }
}

/// One measured row.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessRow {
    /// Ranks taking part (world ranks `0..ranks`).
    pub ranks: usize,
    /// `mpi-barrier`, `dissemination`, `mcs-tree`, `mpi-ibarrier`, `node-shm` or `auto`.
    pub algorithm: &'static str,
    /// What `auto` chose (the same on every rank); `None` for the others.
    pub chosen: Option<&'static str>,
    /// Time per barrier.
    pub timing: Timing,
    /// This row over `mpi-barrier` at the same rank count.
    pub ratio_to_mpi_barrier: Option<Ratio>,
}

/// Every row, at `1..=world` ranks; collective over the world, rows are rank 0's.
pub fn run(
    mpi: &Mpi,
    schedule: Schedule,
    mut report: impl FnMut(&ProcessRow),
) -> Result<Vec<ProcessRow>> {
    let world = mpi.world();
    let mut rows = Vec::new();
    for ranks in 1..=mpi.size() {
        for contender in ProcessContender::ALL {
            let measured = on_first(world, ranks, |comm| {
                measure_choosing(mpi, comm, contender, schedule)
            })?;
            if let Some((timing, chosen)) = measured.filter(|_| mpi.rank() == 0) {
                let mut row = ProcessRow {
                    ranks,
                    algorithm: contender.name(),
                    chosen,
                    timing,
                    ratio_to_mpi_barrier: None,
                };
                row.ratio_to_mpi_barrier = rows
                    .iter()
                    .find(|r: &&ProcessRow| r.ranks == ranks && r.algorithm == MPI_BARRIER)
                    .map(|base| Ratio::of(&row.timing, &base.timing));
                report(&row);
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

impl ProcessRow {
    /// The algorithm as the table prints it: `auto (node-shm)` says what Auto chose.
    pub fn label(&self) -> String {
        match self.chosen {
            Some(chosen) => format!("{} ({chosen})", self.algorithm),
            None => self.algorithm.to_owned(),
        }
    }
}

/// Checks then times one contender on `comm`'s ranks.
pub fn measure_one(
    mpi: &Mpi,
    comm: &SimpleCommunicator,
    contender: ProcessContender,
    schedule: Schedule,
) -> Result<Timing> {
    measure_choosing(mpi, comm, contender, schedule).map(|(timing, _)| timing)
}

/// [`measure_one`], and what Auto chose when the contender is Auto.
fn measure_choosing(
    mpi: &Mpi,
    comm: &SimpleCommunicator,
    contender: ProcessContender,
    schedule: Schedule,
) -> Result<(Timing, Option<&'static str>)> {
    let what = format!("{} at {} ranks", contender.name(), comm.size());
    let mut barrier = match contender {
        ProcessContender::MpiBarrier => None,
        ProcessContender::Ours(algorithm) => Some(ProcessBarrier::new(mpi, comm, algorithm)?),
    };
    // Auto chooses while it is built, before the check and the timed samples.
    let chosen = barrier
        .as_ref()
        .filter(|b| b.algorithm() == ProcessAlgorithm::Auto)
        .map(|b| b.chosen().name());
    let mut expected = 0u64;
    let mut wait = || -> Result<()> {
        match barrier.as_mut() {
            None => comm.barrier(),
            Some(barrier) => {
                let episode = barrier.wait()?;
                if episode != expected {
                    return Err(wrong_episode(&what, episode, expected));
                }
                expected += 1;
            }
        }
        Ok(())
    };
    hold_back_each(&what, comm.rank() as usize, comm.size() as usize, &mut wait)?;
    let timing = measure(comm, schedule, |n| {
        let start = Instant::now();
        for _ in 0..n {
            wait()?;
        }
        Ok(start.elapsed())
    })?;
    Ok((timing, chosen))
}
