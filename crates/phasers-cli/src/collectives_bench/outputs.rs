//! `--json` and `--csv` of `bench collectives`. Both files are created before the run, so a bad
//! path fails in a second rather than after minutes of measuring.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use crate::outputs;

use super::config::CollectivesArgs;
use super::csv_file;
use super::results::CollectivesReport;

/// The files asked for, open and waiting for the report.
pub struct Outputs {
    json: Option<(PathBuf, BufWriter<File>)>,
    csv: Option<(PathBuf, BufWriter<File>)>,
}

impl Outputs {
    /// Creates every file `args` name.
    pub fn open(args: &CollectivesArgs) -> Result<Self, String> {
        Ok(Outputs {
            json: outputs::open(args.json.as_deref())?,
            csv: outputs::open(args.csv.as_deref())?,
        })
    }

    /// Writes the report into every file, saying where on stderr.
    pub fn write(self, report: &CollectivesReport) -> Result<(), String> {
        if let Some((path, out)) = self.json {
            outputs::write_json(out, &path, report)?;
            eprintln!("results written to {}", path.display());
        }
        if let Some((path, out)) = self.csv {
            csv_file::write(out, &report.floor, &report.rows)
                .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
            eprintln!("table written to {}", path.display());
        }
        Ok(())
    }
}
