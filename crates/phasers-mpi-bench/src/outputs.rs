//! `--json`, `--csv` and `--plot`, on the harness the `phasers` command uses: every file is
//! created before the run, so a bad path fails in a second rather than after minutes of
//! measuring, and each is written by rank 0 at the end.

use phasers_cli::harness::outputs::{self, write_csv_lines};

use crate::cli::BenchArgs;
use crate::combined_grid;
use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::{csv_out, heatmap};

/// The files asked for, created and waiting for the report.
pub struct Outputs(outputs::Outputs);

impl Outputs {
    /// Creates every file `args` name.
    pub fn open(args: &BenchArgs) -> Result<Outputs> {
        outputs::Outputs::create(
            args.json.as_deref(),
            args.csv.as_deref(),
            args.plot.iter().cloned().collect(),
        )
        .map(Outputs)
        .map_err(BenchError::Output)
    }

    /// Writes the report, the combined grid as CSV and its heat map.
    pub fn write(self, report: &Report) -> Result<()> {
        let grid = report.combined.as_deref().unwrap_or_default();
        self.0
            .write(
                report,
                |out| write_csv_lines(out, grid.iter().map(csv_out::Line::of)),
                |_, path| {
                    let ranks: Vec<usize> = (1..=report.machine.world_ranks).collect();
                    let title = format!(
                        "combined barrier, median time per barrier ({} ranks on {} cores)",
                        report.machine.world_ranks, report.machine.available_cores
                    );
                    let svg = heatmap::render(
                        grid,
                        &combined_grid::algorithms(),
                        &ranks,
                        &report.settings.threads,
                        &title,
                    )?;
                    std::fs::write(path, svg)
                        .map_err(|error| format!("cannot write {}: {error}", path.display()))
                },
            )
            .map_err(BenchError::Output)
    }
}
