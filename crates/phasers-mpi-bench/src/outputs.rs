//! `--json`, `--csv`, `--hybrid-csv` and `--plot`, on the harness the `phasers` command uses: every file is
//! created before the run, so a bad path fails in a second rather than after minutes of
//! measuring, and each is written by rank 0 at the end.

use phasers_cli::harness::outputs::{self, write_csv_lines};

use crate::cli::BenchArgs;
use crate::combined_grid;
use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::{csv_out, heatmap, hybrid_csv};

/// The files asked for, created and waiting for the report.
pub struct Outputs {
    /// `--json`, `--csv` (the combined grid) and `--plot`.
    main: outputs::Outputs,
    /// `--hybrid-csv`, on the same harness with only its CSV.
    hybrid: outputs::Outputs,
}

impl Outputs {
    /// Creates every file `args` name.
    pub fn open(args: &BenchArgs) -> Result<Outputs> {
        let main = outputs::Outputs::create(
            args.json.as_deref(),
            args.csv.as_deref(),
            args.plot.iter().cloned().collect(),
        )
        .map_err(BenchError::Output)?;
        let hybrid = outputs::Outputs::create(None, args.hybrid_csv.as_deref(), Vec::new())
            .map_err(BenchError::Output)?;
        Ok(Outputs { main, hybrid })
    }

    /// Writes the report, the combined grid as CSV and its heat map, and the hybrid groups as CSV.
    pub fn write(self, report: &Report) -> Result<()> {
        let grid = report.combined.as_deref().unwrap_or_default();
        let groups = report.hybrid.as_ref().map_or(&[][..], |part| &part.groups);
        self.main
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
            .map_err(BenchError::Output)?;
        self.hybrid
            .write(
                report,
                |out| write_csv_lines(out, groups.iter().map(hybrid_csv::Line::of)),
                |_, _| Ok(()),
            )
            .map_err(BenchError::Output)
    }
}
