//! `--csv`: one line per row, plus the cache-line floor, for spreadsheets and plotting scripts.
//! Times are nanoseconds per iteration.

use std::io::Write;

use serde::Serialize;

use crate::floor::Floor;

use super::contender::Kind;
use super::results::ReduceRow;

/// One line of the file.
#[derive(Debug, Serialize)]
struct Line<'a> {
    threads: usize,
    workers: usize,
    oversubscribed: bool,
    floats: usize,
    mode: &'a str,
    spread: Option<&'a str>,
    row: &'a str,
    kind: &'a str,
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
    note: Option<&'a str>,
    error: Option<&'a str>,
}

impl<'a> Line<'a> {
    fn of(row: &'a ReduceRow) -> Self {
        let s = &row.summaries;
        Line {
            threads: row.threads,
            workers: row.workers,
            oversubscribed: row.oversubscribed,
            floats: row.len,
            mode: row.mode.name(),
            spread: row.spread.as_deref(),
            row: &row.name,
            kind: match row.kind {
                Kind::Ours => "ours",
                Kind::Baseline => "baseline",
                Kind::Floor => "floor",
            },
            chose: (!row.chose.is_empty()).then(|| {
                row.chose
                    .iter()
                    .map(|(name, count)| format!("{name}:{count}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
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
            note: row.note.as_deref(),
            error: row.error.as_deref(),
        }
    }
}

/// Writes a header, the cache-line floor (as a row named `cache-line round trip`, its median
/// round trip in the time columns), then every row.
pub fn write(out: impl Write, floor: &Floor, rows: &[ReduceRow]) -> csv::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.serialize(Line {
        threads: 2,
        workers: 2,
        oversubscribed: false,
        floats: 0,
        mode: "round-trip",
        spread: None,
        row: "cache-line round trip",
        kind: "floor",
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
        note: floor.note.as_deref(),
        error: None,
    })?;
    for row in rows {
        writer.serialize(Line::of(row))?;
    }
    writer.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::collective::Collective;
    use crate::reduce_bench::results::tests::row;

    #[test]
    fn a_row_becomes_a_line_under_a_header() {
        let floor = Floor {
            pinned_to: None,
            round_trips_per_sample: 10,
            samples_ns: vec![50.0],
            min_ns: Some(50.0),
            median_ns: Some(50.0),
            note: None,
        };
        let mut auto = row(
            "auto",
            Kind::Ours,
            4,
            1000,
            Collective::Allreduce,
            Some("low"),
            (10.0, 30.0),
        );
        auto.chose.insert("linear".into(), 3);
        let mut out = Vec::new();
        write(&mut out, &floor, &[auto]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("threads,workers,oversubscribed,floats,mode,spread,row,kind"));
        assert!(lines[1].contains("cache-line round trip,floor"), "{text}");
        assert!(
            lines[2].starts_with(
                "4,4,false,1000,allreduce,low,auto,ours,linear:3,1,10.0,10.0,30.0,30.0,"
            ),
            "{text}"
        );
    }
}
