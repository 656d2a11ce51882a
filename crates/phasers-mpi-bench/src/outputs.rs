//! `--json`, `--csv`, `--plot`: created by rank 0 before anything is measured, so a bad path
//! fails at once rather than after the run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::cli::BenchArgs;
use crate::combined_grid;
use crate::error::{BenchError, Result};
use crate::report::Report;
use crate::{csv_out, heatmap};

type Open = Option<(PathBuf, BufWriter<File>)>;

/// The files asked for, open and empty.
pub struct Outputs {
    json: Open,
    csv: Open,
    plot: Open,
}

fn open(path: Option<&Path>) -> Result<Open> {
    path.map(|path| {
        File::create(path)
            .map(|file| (path.to_owned(), BufWriter::new(file)))
            .map_err(|error| failed(path, error))
    })
    .transpose()
}

fn failed(path: &Path, reason: impl std::fmt::Display) -> BenchError {
    BenchError::Output {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

impl Outputs {
    pub fn open(args: &BenchArgs) -> Result<Outputs> {
        Ok(Outputs {
            json: open(args.json.as_deref())?,
            csv: open(args.csv.as_deref())?,
            plot: open(args.plot.as_deref())?,
        })
    }

    /// Writes the report into every file, saying where on stderr.
    pub fn write(self, report: &Report) -> Result<()> {
        if let Some((path, mut out)) = self.json {
            serde_json::to_writer_pretty(&mut out, report).map_err(|e| failed(&path, e))?;
            writeln!(out)
                .and_then(|()| out.flush())
                .map_err(|e| failed(&path, e))?;
            eprintln!("results written to {}", path.display());
        }
        let grid = report.combined.as_deref().unwrap_or_default();
        if let Some((path, out)) = self.csv {
            csv_out::write(out, grid).map_err(|e| failed(&path, e))?;
            eprintln!("grid written to {}", path.display());
        }
        if let Some((path, mut out)) = self.plot {
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
            )
            .map_err(|e| failed(&path, e))?;
            out.write_all(svg.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| failed(&path, e))?;
            eprintln!("heat map written to {}", path.display());
        }
        Ok(())
    }
}
