//! Part 4: the hybrid team's allreduce against `MPI_Allreduce`. Waits for `HybridTeam` (branch
//! `mpi-hybrid`); until it is merged this part reports why it did not run.

use serde::Serialize;

use crate::error::Result;
use crate::harness::Schedule;
use phasers_mpi::Mpi;

/// One measured row of the hybrid part.
#[derive(Debug, Clone, Serialize)]
pub struct HybridRow {}

/// The hybrid part's rows, or why there are none.
#[derive(Debug, Clone, Serialize)]
pub struct HybridPart {
    /// Why the part has no rows, when it has none.
    pub missing: Option<String>,
    /// The rows.
    pub rows: Vec<HybridRow>,
}

pub const NOT_READY: &str =
    "HybridTeam is not in this build yet (branch mpi-hybrid is not merged): \
                              the hybrid allreduce part was not measured";

/// Runs the part; collective over the world.
pub fn run(mpi: &Mpi, schedule: Schedule, report: impl FnMut(&HybridRow)) -> Result<HybridPart> {
    let _ = (mpi, schedule, report);
    Ok(HybridPart {
        missing: Some(NOT_READY.to_owned()),
        rows: Vec::new(),
    })
}
