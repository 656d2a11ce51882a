//! The JSON report (schema: `crates/phasers-mpi-bench/docs/bench-json.md`).

use serde::Serialize;

use crate::combined_grid::GridRow;
use crate::floor::Floors;
use crate::hybrid::HybridPart;
use crate::machine::Machine;
use crate::process_rows::ProcessRow;

/// The schema name and version, first in every report.
pub const SCHEMA: &str = "phasers-mpi-bench/3";

/// Everything one run measured, as rank 0 saw it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    /// Rank 0's command line.
    pub command: Vec<String>,
    pub machine: Machine,
    pub settings: Settings,
    /// `null` for a part that was not asked for.
    pub floor: Option<Floors>,
    pub process_barriers: Option<Vec<ProcessRow>>,
    pub combined: Option<Vec<GridRow>>,
    pub hybrid: Option<HybridPart>,
}

/// How the rows were measured.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// `--time`: seconds of samples per row.
    pub time_s: f64,
    /// `--samples`.
    pub samples: usize,
    /// Threads per rank of the grid.
    pub threads: Vec<usize>,
    /// `--rounds` as asked (the hybrid part records the count it ran).
    pub rounds: usize,
    /// How long the correctness check holds each participant back.
    pub check_hold_back_ms: f64,
}
