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
/// use phasers_cli::harness::csv_floor::{write_csv_with_floor, CsvFloor};
/// use phasers_cli::harness::floor::Floor;
///
/// let (samples_ns, min_ns, median_ns) = (vec![50.0], Some(50.0), Some(50.0));
/// let floor = Floor { pinned_to: None, round_trips_per_sample: 10, samples_ns, min_ns, median_ns,
///     note: None };
/// let line = |floor: CsvFloor| (floor.row.to_owned(), floor.median_ns);
/// let mut out = Vec::new();
/// write_csv_with_floor(&mut out, &floor, line, [("mcs".to_owned(), Some(120.0))]).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert_eq!(text, "cache-line round trip,50.0\nmcs,120.0\n");
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
