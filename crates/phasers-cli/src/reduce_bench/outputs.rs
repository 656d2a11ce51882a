//! `--json`, `--csv` and `--plot` of `bench reduce`. Every file is created before the run, so a bad
//! path fails in a second rather than after minutes of measuring.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use crate::outputs;

use super::config::{Config, ReduceArgs};
use super::csv_file;
use super::plots::{self, Slice};
use super::results::ReduceReport;

/// The files asked for, open and waiting for the report.
pub struct Outputs {
    json: Option<(PathBuf, BufWriter<File>)>,
    csv: Option<(PathBuf, BufWriter<File>)>,
    plots: Vec<(Slice, PathBuf)>,
}

impl Outputs {
    /// Creates every file `args` name for the run `config`.
    pub fn open(args: &ReduceArgs, config: &Config) -> Result<Self, String> {
        let mut plots = Vec::new();
        if let Some(base) = &args.plot {
            for &mode in &config.collectives {
                for spread in &config.spreads {
                    for &len in &config.sizes {
                        let slice = Slice {
                            mode,
                            spread: spread.name(),
                            len,
                        };
                        let path = plots::path_of(base, &slice);
                        // Only checks the path: each plot is drawn in memory and written in one go.
                        File::create(&path).map_err(|error| {
                            format!("cannot create {}: {error}", path.display())
                        })?;
                        plots.push((slice, path));
                    }
                }
            }
        }
        Ok(Outputs {
            json: outputs::open(args.json.as_deref())?,
            csv: outputs::open(args.csv.as_deref())?,
            plots,
        })
    }

    /// Writes the report into every file, saying where on stderr. A plot with nothing to draw
    /// (every row of it failed) is removed and named in the error, after the others are written.
    pub fn write(self, report: &ReduceReport) -> Result<(), String> {
        if let Some((path, out)) = self.json {
            outputs::write_json(out, &path, report)?;
            eprintln!("results written to {}", path.display());
        }
        if let Some((path, out)) = self.csv {
            csv_file::write(out, &report.floor, &report.rows)
                .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
            eprintln!("table written to {}", path.display());
        }
        let mut failed = Vec::new();
        let mut written = 0;
        for (slice, path) in &self.plots {
            let result = plots::write(
                path,
                slice,
                &report.rows,
                report.settings.metric,
                &report.floor,
                &report.provenance.machine,
            );
            match result {
                Ok(()) => written += 1,
                Err(error) => {
                    // The file was created empty before the run; an empty SVG helps nobody.
                    let _ = std::fs::remove_file(path);
                    failed.push(error);
                }
            }
        }
        if let Some((_, first)) = self.plots.first() {
            eprintln!(
                "{written} plot(s) written beside {} (one per mode, spread and size)",
                first.display()
            );
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(failed.join("; "))
        }
    }
}
