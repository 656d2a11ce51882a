//! The cache-line floor as the first line of a benchmark's `--csv` file: a row of its own, so a
//! spreadsheet has the machine's limit beside the rows it bounds.

use std::io::Write;

use serde::Serialize;

use super::floor::Floor;
use super::outputs::write_csv_lines;

/// What a benchmark's CSV line says of the floor, whatever its other columns: a row of two
/// threads named `cache-line round trip`, whose time columns hold the round trip.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvFloor<'a> {
    /// The threads (or members) column: a round trip is between two.
    pub threads: usize,
    /// The operation (or mode) column: `round-trip`.
    pub op: &'static str,
    /// The row's name: `cache-line round trip`.
    pub row: &'static str,
    /// The samples (or iterations) column: the floor's samples.
    pub samples: usize,
    /// The minimum time column, in nanoseconds.
    pub min_ns: Option<f64>,
    /// The median time column, in nanoseconds.
    pub median_ns: Option<f64>,
    /// The note column: the floor's caveats.
    pub note: Option<&'a str>,
}

/// Writes a benchmark's CSV file: `floor` first, as `floor_line` makes it one of the benchmark's
/// lines, then `lines`, under a header of their field names.
///
/// ```
/// use phasers_cli::harness::csv_floor::write_csv_with_floor;
/// use phasers_cli::harness::floor::Floor;
///
/// #[derive(serde::Serialize)]
/// struct Line<'a> {
///     threads: usize,
///     row: &'a str,
///     median_ns: Option<f64>,
/// }
///
/// let floor = Floor {
///     pinned_to: None,
///     round_trips_per_sample: 10,
///     samples_ns: vec![50.0],
///     min_ns: Some(50.0),
///     median_ns: Some(50.0),
///     note: None,
/// };
/// let rows = [Line { threads: 4, row: "mcs", median_ns: Some(120.0) }];
/// let mut out = Vec::new();
/// let floor_line = |floor: phasers_cli::harness::csv_floor::CsvFloor| Line {
///     threads: floor.threads,
///     row: floor.row,
///     median_ns: floor.median_ns,
/// };
/// write_csv_with_floor(&mut out, &floor, floor_line, rows).unwrap();
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "threads,row,median_ns\n2,cache-line round trip,50.0\n4,mcs,120.0\n"
/// );
/// ```
pub fn write_csv_with_floor<'a, L: Serialize>(
    out: impl Write,
    floor: &'a Floor,
    floor_line: impl FnOnce(CsvFloor<'a>) -> L,
    lines: impl IntoIterator<Item = L>,
) -> csv::Result<()> {
    let floor = floor_line(CsvFloor {
        threads: 2,
        op: "round-trip",
        row: "cache-line round trip",
        samples: floor.samples_ns.len(),
        min_ns: floor.min_ns,
        median_ns: floor.median_ns,
        note: floor.note.as_deref(),
    });
    write_csv_lines(out, std::iter::once(floor).chain(lines))
}
