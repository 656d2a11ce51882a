//! What `bench reduce` puts in the harness's `--csv` and `--plot` files: one CSV line per row
//! (after the cache-line floor's), and one SVG per collective, spread and array length, the
//! median of the chosen metric against N, with a line per contender and one for the bandwidth
//! floor.

use std::path::{Path, PathBuf};

use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::outputs::{write_csv_lines, NoteAndError, Outputs};
use serde::Serialize;

use phasers_cli::harness::plot::{self, Series, SeriesKind};

use super::config::{ReduceArgs, ReduceSettings};
use super::contender::Kind;
use super::results::{ReduceReport, ReduceRow};
use super::workload::Collective;

/// The files `args` name, created before the run; one plot per collective, spread and size.
pub fn open(args: &ReduceArgs, settings: &ReduceSettings) -> Result<Outputs, String> {
    let plots = args.plot.iter().flat_map(|base| {
        slices(settings).map(|(mode, spread, len)| path_of(base, mode, spread, len))
    });
    args.run.open(plots.collect())
}

/// Writes `report` into `outputs`.
pub fn write(outputs: Outputs, report: &ReduceReport) -> Result<(), String> {
    let slices: Vec<_> = slices(&report.settings).collect();
    outputs.write(
        report,
        |out| {
            let floor = Line::of_floor(&report.floor);
            write_csv_lines(
                out,
                std::iter::once(floor).chain(report.rows.iter().map(Line::of)),
            )
        },
        |index, path| plot(path, slices[index], report),
    )
}

/// Every plot's (collective, spread, length), in the order of the files.
fn slices(settings: &ReduceSettings) -> impl Iterator<Item = (Collective, &str, usize)> {
    settings.modes.iter().flat_map(move |&mode| {
        settings.spreads.iter().flat_map(move |spread| {
            settings
                .sizes
                .iter()
                .map(move |&len| (mode, spread.name.as_str(), len))
        })
    })
}

/// The file of a plot beside `base`: `base`'s stem, then `-<mode>-<spread>-<len>.svg`.
fn path_of(base: &Path, mode: Collective, spread: &str, len: usize) -> PathBuf {
    let stem = base
        .file_stem()
        .map_or("reduce".into(), |stem| stem.to_string_lossy());
    // A custom spread's name has slashes.
    let safe = |c: char| match c.is_ascii_alphanumeric() || c == '.' {
        true => c,
        false => '-',
    };
    let spread: String = spread.chars().map(safe).collect();
    base.with_file_name(format!("{stem}-{}-{spread}-{len}.svg", mode.name()))
}

/// Draws the plot of one (collective, spread, length) from the report's rows into `path`.
fn plot(
    path: &Path,
    (mode, spread, len): (Collective, &str, usize),
    report: &ReduceReport,
) -> Result<(), String> {
    let metric = report.settings.metric;
    let mut series: Vec<Series> = Vec::new();
    let here = report.rows.iter().filter(|row| {
        row.len == len
            && row.mode == mode
            && (row.kind == Kind::Floor || row.spread.as_deref() == Some(spread))
    });
    for row in here {
        let Some(median) = row.median(metric) else {
            continue;
        };
        let index = series
            .iter()
            .position(|line| line.name == row.name)
            .unwrap_or_else(|| {
                let kind = match row.kind {
                    Kind::Ours => SeriesKind::Ours,
                    Kind::Baseline => SeriesKind::Baseline,
                    // The thick black line: what the reductions are measured against.
                    Kind::Floor => SeriesKind::Reference,
                };
                let name = row.name.clone();
                series.push(Series {
                    name,
                    kind,
                    points: Vec::new(),
                });
                series.len() - 1
            });
        series[index].points.push((row.threads, median));
    }
    let machine = &report.provenance.machine;
    let title = format!(
        "phasers bench reduce: {} of {len} floats, spread {spread}, {}",
        mode.name(),
        machine.summary()
    );
    let y_label = format!("median {}", metric.describe());
    plot::write_svg(
        path,
        &plot::Plot {
            title: &title,
            y_label: &y_label,
            series: &series,
            floor_ns: report.floor.median_ns,
            cores: Some(machine.available_cores),
        },
    )
}

/// One line of the CSV file, up to the note and error every benchmark's line ends with; times are
/// nanoseconds per iteration.
#[derive(Debug, Serialize)]
struct Line<'a> {
    threads: usize,
    workers: usize,
    oversubscribed: bool,
    floats: usize,
    mode: &'a str,
    spread: Option<&'a str>,
    row: &'a str,
    kind: Kind,
    chose: Option<String>,
    iterations: usize,
    last_arrival_min_ns: Option<f64>,
    last_arrival_median_ns: Option<f64>,
    total_min_ns: Option<f64>,
    total_median_ns: Option<f64>,
    arrival_window_median_ns: Option<f64>,
    first_arrival_median_ns: Option<f64>,
    bytes: u64,
    bandwidth_gb_s: Option<f64>,
    fraction_of_floor: Option<f64>,
}

impl<'a> Line<'a> {
    fn of(row: &'a ReduceRow) -> (Self, NoteAndError<'a>) {
        let s = &row.summaries;
        let chose = row
            .chose
            .iter()
            .map(|(name, count)| format!("{name}:{count}"));
        let line = Line {
            threads: row.threads,
            workers: row.workers,
            oversubscribed: row.oversubscribed,
            floats: row.len,
            mode: row.mode.name(),
            spread: row.spread.as_deref(),
            row: &row.name,
            kind: row.kind,
            chose: (!row.chose.is_empty()).then(|| chose.collect::<Vec<_>>().join(" ")),
            iterations: row.iterations,
            last_arrival_min_ns: s.last_arrival_to_completion_ns.map(|s| s.min),
            last_arrival_median_ns: s.last_arrival_to_completion_ns.map(|s| s.median),
            total_min_ns: s.total_in_reduction_ns.map(|s| s.min),
            total_median_ns: s.total_in_reduction_ns.map(|s| s.median),
            arrival_window_median_ns: s.arrival_window_ns.map(|s| s.median),
            first_arrival_median_ns: s.first_arrival_to_completion_ns.map(|s| s.median),
            bytes: row.bytes,
            bandwidth_gb_s: row.bandwidth_gb_s,
            fraction_of_floor: row.fraction_of_floor,
        };
        (line, NoteAndError::of(&row.note, &row.error))
    }

    /// The cache-line round trip, as a row: its median round trip in the time columns.
    fn of_floor(floor: &'a Floor) -> (Self, NoteAndError<'a>) {
        let line = Line {
            threads: 2,
            workers: 2,
            oversubscribed: false,
            floats: 0,
            mode: "round-trip",
            spread: None,
            row: "cache-line round trip",
            kind: Kind::Floor,
            chose: None,
            iterations: floor.samples_ns.len(),
            last_arrival_min_ns: floor.min_ns,
            last_arrival_median_ns: floor.median_ns,
            total_min_ns: None,
            total_median_ns: None,
            arrival_window_median_ns: None,
            first_arrival_median_ns: None,
            bytes: 0,
            bandwidth_gb_s: None,
            fraction_of_floor: None,
        };
        (line, NoteAndError::note(floor.note.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::results::tests::row;

    #[test]
    fn plots_are_named_beside_the_base() {
        let custom = path_of(
            Path::new("out/run.svg"),
            Collective::Allreduce,
            "60/30/10us",
            64_000,
        );
        assert_eq!(
            custom,
            PathBuf::from("out/run-allreduce-60-30-10us-64000.svg")
        );
        let high = path_of(Path::new("plot"), Collective::Reduce, "high", 1);
        assert_eq!(high, PathBuf::from("plot-reduce-high-1.svg"));
    }

    #[test]
    fn a_row_becomes_a_line_under_a_header() {
        let mut auto = row(
            "auto",
            4,
            1000,
            Collective::Allreduce,
            Some("low"),
            (10.0, 30.0),
        );
        auto.chose.insert("linear".into(), 3);
        let mut out = Vec::new();
        write_csv_lines(&mut out, [Line::of(&auto)]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let header = "threads,workers,oversubscribed,floats,mode,spread,row,kind,chose,iterations,";
        assert!(text.starts_with(header), "{text}");
        let line = "\n4,4,false,1000,allreduce,low,auto,ours,linear:3,1,10.0,10.0,30.0,30.0,";
        assert!(text.contains(line), "{text}");
    }
}
