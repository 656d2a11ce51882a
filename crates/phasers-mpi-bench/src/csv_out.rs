//! `--csv`: the combined barrier grid, one line per cell and algorithm.

use std::io::Write;

use crate::combined_grid::GridRow;

/// Writes the grid; empty fields where a row has no timing or ratio.
pub fn write(out: impl Write, rows: &[GridRow]) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record([
        "ranks",
        "threads",
        "algorithm",
        "processes",
        "min_ns",
        "median_ns",
        "ratio_min_to_mpi_barrier",
        "ratio_median_to_mpi_barrier",
        "ratio_min_to_omp_mpi_barrier",
        "ratio_median_to_omp_mpi_barrier",
        "note",
    ])?;
    let number = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for row in rows {
        writer.write_record([
            row.ranks.to_string(),
            row.threads.to_string(),
            row.algorithm.clone(),
            row.processes.to_string(),
            number(row.timing.as_ref().map(|t| t.min_ns)),
            number(row.timing.as_ref().map(|t| t.median_ns)),
            number(row.ratio_to_mpi_barrier.map(|r| r.min)),
            number(row.ratio_to_mpi_barrier.map(|r| r.median)),
            number(row.ratio_to_omp_mpi_barrier.map(|r| r.min)),
            number(row.ratio_to_omp_mpi_barrier.map(|r| r.median)),
            row.note.clone().unwrap_or_default(),
        ])?;
    }
    writer.flush()?;
    Ok(())
}
