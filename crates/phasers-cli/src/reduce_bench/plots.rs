//! `--plot`: one SVG per collective, spread and array length, the median of the chosen metric
//! against N, one line per contender and one for the bandwidth floor, with the cache-line floor
//! and the point where participants outnumber cores marked (the crate's plot module draws them).

use std::path::{Path, PathBuf};

use crate::floor::Floor;
use crate::machine::Machine;
use crate::plot::{self, Series, SeriesKind};

use super::collective::Collective;
use super::contender::Kind;
use super::metrics::Metric;
use super::results::ReduceRow;

/// One plot: a collective, a spread, a length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    /// The collective.
    pub mode: Collective,
    /// The spread's name.
    pub spread: String,
    /// Floats per array.
    pub len: usize,
}

/// The file of `slice` beside `base`: `base`'s stem, then `-<mode>-<spread>-<len>.svg`.
pub fn path_of(base: &Path, slice: &Slice) -> PathBuf {
    let stem = base.file_stem().map_or_else(
        || "reduce".into(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    // A custom spread's name has slashes.
    let spread: String = slice
        .spread
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    base.with_file_name(format!(
        "{stem}-{}-{spread}-{}.svg",
        slice.mode.name(),
        slice.len
    ))
}

/// Draws `slice` from `rows` into `path`.
pub fn write(
    path: &Path,
    slice: &Slice,
    rows: &[ReduceRow],
    metric: Metric,
    floor: &Floor,
    machine: &Machine,
) -> Result<(), String> {
    let mut series: Vec<Series> = Vec::new();
    let here = rows.iter().filter(|row| {
        row.len == slice.len
            && row.mode == slice.mode
            && (row.kind == Kind::Floor || row.spread.as_deref() == Some(slice.spread.as_str()))
    });
    for row in here {
        let Some(median) = row.median(metric) else {
            continue;
        };
        let index = match series.iter().position(|line| line.name == row.name) {
            Some(index) => index,
            None => {
                series.push(Series {
                    name: row.name.clone(),
                    kind: match row.kind {
                        Kind::Ours => SeriesKind::Ours,
                        Kind::Baseline => SeriesKind::Baseline,
                        // The thick black line: what the reductions are measured against.
                        Kind::Floor => SeriesKind::Reference,
                    },
                    points: Vec::new(),
                });
                series.len() - 1
            }
        };
        series[index].points.push((row.threads, median));
    }
    let title = format!(
        "phasers bench reduce: {} of {} floats, spread {}, {}",
        slice.mode.name(),
        slice.len,
        slice.spread,
        machine.summary()
    );
    let y_label = format!("median {}", metric.describe());
    plot::write_svg(
        path,
        &plot::Plot {
            title: &title,
            y_label: &y_label,
            series: &series,
            floor_ns: floor.median_ns,
            cores: Some(machine.available_cores),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_named_beside_the_base() {
        let slice = Slice {
            mode: Collective::Allreduce,
            spread: "60/30/10us".into(),
            len: 64_000,
        };
        assert_eq!(
            path_of(Path::new("out/run.svg"), &slice),
            PathBuf::from("out/run-allreduce-60-30-10us-64000.svg")
        );
        let high = Slice {
            spread: "high".into(),
            ..slice
        };
        assert_eq!(
            path_of(Path::new("plot"), &high),
            PathBuf::from("plot-allreduce-high-64000.svg")
        );
    }
}
