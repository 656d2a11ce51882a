//! `--json`, `--csv` and `--plot`: created before the run, so a bad path fails in a second rather
//! than after minutes of measuring, and written at the end.

use std::fmt::Display;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

/// The output options most benchmarks take (flatten them into the command's options).
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
    #[arg(long, value_name = "FILE.svg", value_parser = super::args::parse_svg_path)]
    pub plot: Option<PathBuf>,

    /// Print every column and every note in full, in lines wider than 100 columns, rather than
    /// tables that fit a terminal with their notes as footnotes.
    #[arg(long)]
    pub verbose: bool,
}

/// An output file, created and waiting for the report.
pub type OpenFile = (PathBuf, BufWriter<File>);

/// The files of a run, open and waiting for the report.
pub struct Outputs {
    json: Option<OpenFile>,
    csv: Option<OpenFile>,
    plots: Vec<PathBuf>,
}

impl Outputs {
    /// Creates the JSON and CSV files and every plot's file, failing at the first path that
    /// cannot be created.
    pub fn create(
        json: Option<&Path>,
        csv: Option<&Path>,
        plots: Vec<PathBuf>,
    ) -> Result<Self, String> {
        for path in &plots {
            // Only checks the path: a plot is drawn in memory and written in one go.
            File::create(path).map_err(|error| cannot("create", path, error))?;
        }
        let (json, csv) = (open(json)?, open(csv)?);
        Ok(Outputs { json, csv, plots })
    }

    /// Writes `report` as JSON, the CSV with `csv`, and plot `i` at its path with `plot(i, path)`,
    /// saying where on stderr. A plot that fails (nothing to draw, say) is removed, since an empty
    /// file helps nobody, and named in the error after the other files are written.
    pub fn write<R, E>(
        self,
        report: &R,
        csv: impl FnOnce(BufWriter<File>) -> Result<(), E>,
        mut plot: impl FnMut(usize, &Path) -> Result<(), String>,
    ) -> Result<(), String>
    where
        R: Serialize + ?Sized,
        E: Display,
    {
        if let Some((path, out)) = self.json {
            write_json(out, &path, report)?;
            eprintln!("results written to {}", path.display());
        }
        if let Some((path, out)) = self.csv {
            csv(out).map_err(|error| cannot("write", &path, error))?;
            eprintln!("table written to {}", path.display());
        }
        let mut failed = Vec::new();
        for (index, path) in self.plots.iter().enumerate() {
            if let Err(error) = plot(index, path) {
                let _ = std::fs::remove_file(path);
                failed.push(error);
            }
        }
        let written = self.plots.len() - failed.len();
        match &self.plots[..] {
            [] => {}
            [only] if failed.is_empty() => eprintln!("plot written to {}", only.display()),
            [first, ..] => eprintln!("{written} plot(s) written beside {}", first.display()),
        }
        match failed.is_empty() {
            true => Ok(()),
            false => Err(failed.join("; ")),
        }
    }
}

/// Creates the output file at `path`, if any, before the run.
pub fn open(path: Option<&Path>) -> Result<Option<OpenFile>, String> {
    let Some(path) = path else {
        return Ok(None);
    };
    let file = File::create(path).map_err(|error| cannot("create", path, error))?;
    Ok(Some((path.to_owned(), BufWriter::new(file))))
}

/// Writes `value` as pretty JSON, with a final newline, to `out`, opened at `path`.
pub fn write_json(
    mut out: BufWriter<File>,
    path: &Path,
    value: &(impl Serialize + ?Sized),
) -> Result<(), String> {
    let json = serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::from);
    (json
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush()))
    .map_err(|error| cannot("write", path, error))
}

/// Writes one CSV line per item of `lines`, under a header of their field names.
pub fn write_csv_lines<T: Serialize>(
    out: impl Write,
    lines: impl IntoIterator<Item = T>,
) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    for line in lines {
        writer.serialize(line)?;
    }
    writer.flush()?;
    Ok(())
}

fn cannot(what: &str, path: &Path, error: impl Display) -> String {
    format!("cannot {what} {}: {error}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_path_fails_before_the_run_and_a_failed_plot_is_removed_and_named() {
        let json = Path::new("/no/such/dir/r.json");
        let error = Outputs::create(Some(json), None, Vec::new()).err().unwrap();
        assert!(error.starts_with("cannot create /no/such/dir/r.json"));
        assert!(Outputs::create(None, None, vec![PathBuf::from("/no/such/dir/p.svg")]).is_err());
        let folder = std::env::temp_dir().join(format!("outputs-test-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let (json, csv) = (folder.join("r.json"), folder.join("r.csv"));
        let plots = vec![folder.join("a.svg"), folder.join("b.svg")];
        let outputs = Outputs::create(Some(&json), Some(&csv), plots.clone()).unwrap();
        let lines = [("mcs", 51.0)];
        let plot = |index, path: &Path| match index {
            0 => std::fs::write(path, "<svg/>").map_err(|e| e.to_string()),
            _ => Err("nothing to draw in b".to_owned()),
        };
        let error = outputs.write(&lines, |out| write_csv_lines(out, lines), plot);
        assert_eq!(error.unwrap_err(), "nothing to draw in b");
        assert!(plots[0].exists() && !plots[1].exists());
        let csv = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(csv, "mcs,51.0\n");
        let json = std::fs::read_to_string(&json).unwrap();
        assert!(json.contains("\"mcs\",\n    51.0") && json.ends_with("]\n"));
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
