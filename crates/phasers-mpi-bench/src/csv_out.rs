//! `--csv`: the combined barrier grid, one line per row, for spreadsheets and plotting scripts.

use serde::Serialize;

use crate::combined_grid::GridRow;

/// One CSV line: a grid row's timing and ratios, empty where not measured.
#[derive(Serialize)]
pub struct Line<'a> {
    ranks: usize,
    threads: usize,
    algorithm: &'a str,
    chosen: Option<&'a str>,
    processes: usize,
    min_ns: Option<f64>,
    median_ns: Option<f64>,
    ratio_min_to_mpi_barrier: Option<f64>,
    ratio_median_to_mpi_barrier: Option<f64>,
    ratio_min_to_omp_mpi_barrier: Option<f64>,
    ratio_median_to_omp_mpi_barrier: Option<f64>,
    note: Option<&'a str>,
}

impl<'a> Line<'a> {
    /// The line of `row`.
    pub fn of(row: &'a GridRow) -> Self {
        Line {
            ranks: row.ranks,
            threads: row.threads,
            algorithm: &row.algorithm,
            chosen: row.chosen,
            processes: row.processes,
            min_ns: row.timing.as_ref().map(|t| t.min_ns),
            median_ns: row.timing.as_ref().map(|t| t.median_ns),
            ratio_min_to_mpi_barrier: row.ratio_to_mpi_barrier.map(|r| r.min),
            ratio_median_to_mpi_barrier: row.ratio_to_mpi_barrier.map(|r| r.median),
            ratio_min_to_omp_mpi_barrier: row.ratio_to_omp_mpi_barrier.map(|r| r.min),
            ratio_median_to_omp_mpi_barrier: row.ratio_to_omp_mpi_barrier.map(|r| r.median),
            note: row.note.as_deref(),
        }
    }
}
