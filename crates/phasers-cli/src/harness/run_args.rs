//! The options of a run that are not about what it measures: hangs, report files, verbosity.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::args::parse_seconds;
use super::outputs::Outputs;
use super::verbosity;

/// Flattened into a command's options (`bench reduce` renames "round" with `mut_arg`).
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Stop the whole run when a row completes no round for this many seconds: it is hung.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub hang_seconds: Duration,

    /// Write every row, with the settings, the machine and this command line, to FILE as JSON
    /// (schema: docs/benchmark-json.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write one line per row to FILE as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Print every column and every note in full, in lines wider than 100 columns, rather than
    /// tables that fit a terminal with their notes as footnotes.
    #[arg(long)]
    pub verbose: bool,
}

impl RunArgs {
    /// Creates the files named and the `plots` before the run, and honours `--verbose`.
    pub fn open(&self, plots: Vec<PathBuf>) -> Result<Outputs, String> {
        verbosity::request(self.verbose);
        Outputs::create(self.json.as_deref(), self.csv.as_deref(), plots)
    }
}
