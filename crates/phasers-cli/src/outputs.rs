//! `--json`, `--csv` and `--plot`: the files a sweep writes besides its tables. Every file is
//! created before the run, so a bad path fails in a second rather than after minutes of measuring.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use crate::csv_out;
use crate::report;
use crate::results::Report;

/// The output options of the sweeps (`bench barrier`, `phaser`, `reduction`, `tree`).
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Write every result, with the machine and this command line, to FILE as JSON (schema:
    /// docs/benchmark-json.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write one line per row to FILE as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Plot the median cost per barrier against threads to FILE (SVG, log scale).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// The files of [`OutputArgs`], open and waiting for the report.
pub struct Outputs {
    json: Option<(PathBuf, BufWriter<File>)>,
    csv: Option<(PathBuf, BufWriter<File>)>,
    plot: Option<PathBuf>,
}

impl OutputArgs {
    /// Creates every file named, before the run.
    pub fn open(&self) -> Result<Outputs, String> {
        if let Some(path) = &self.plot {
            // Only checks the path: the plot is drawn in memory and written in one go.
            File::create(path)
                .map_err(|error| format!("cannot create {}: {error}", path.display()))?;
        }
        Ok(Outputs {
            json: open(self.json.as_deref())?,
            csv: open(self.csv.as_deref())?,
            plot: self.plot.clone(),
        })
    }
}

impl Outputs {
    /// Writes the report into every file, saying where on stderr.
    pub fn write(self, report: &Report) -> Result<(), String> {
        if let Some((path, out)) = self.json {
            write_json(out, &path, report)?;
            eprintln!("results written to {}", path.display());
        }
        if let Some((path, out)) = self.csv {
            csv_out::write(out, report)
                .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
            eprintln!("table written to {}", path.display());
        }
        if let Some(path) = &self.plot {
            report::write_plot(path, report)?;
            eprintln!("plot written to {}", path.display());
        }
        Ok(())
    }
}

/// Opens an output file before the run.
pub fn open(path: Option<&Path>) -> Result<Option<(PathBuf, BufWriter<File>)>, String> {
    path.map(|path| {
        report::create_file(path)
            .map(|file| (path.to_owned(), file))
            .map_err(|error| format!("cannot create {}: {error}", path.display()))
    })
    .transpose()
}

/// Writes `value` as pretty JSON to the opened `path`.
pub fn write_json(out: BufWriter<File>, path: &Path, value: &impl Serialize) -> Result<(), String> {
    report::write_json(out, value)
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}
