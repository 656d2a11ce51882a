//! The files of a row report: `--json` (the [`Report`]), `--csv` (one line per row: the core
//! columns and the benchmark's declared keys), `--plot` (median against threads, one file per
//! slice), and the one error naming every failed row.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::floor::Floor;
use super::outputs::{OutputArgs, Outputs};
use super::plot::{self, Series, SeriesKind};
use super::render::{Layout, PlotSpec};
use super::result::{Fields, Kind, Report, Row};
use super::verbosity;

/// The contender of the line that gives the run's floor.
pub const FLOOR: &str = "cache-line round trip";

/// The run's floor as a row: the first line of a CSV, and a table's `÷floor` divisor.
pub fn floor_row(floor: &Floor, threads: usize) -> Row {
    let mut row = Row::new(FLOOR, Kind::Floor, threads, Fields::default());
    row.oversubscribed = false;
    row.iterations_per_sample = floor.round_trips_per_sample;
    row.raw_ns.clone_from(&floor.samples_ns);
    row.finish(0, None);
    row.note.clone_from(&floor.note);
    row
}

/// Creates the files `args` names before the run (a plot per slice) and turns on `--verbose`.
pub fn open(args: &OutputArgs, slices: &[Vec<String>]) -> Result<Outputs, String> {
    verbosity::request(args.verbose);
    let plots = args
        .plot
        .iter()
        .flat_map(|base| slices.iter().map(|slice| plot_path(base, slice)));
    Outputs::create(args.json.as_deref(), args.csv.as_deref(), plots.collect())
}

/// Writes `report` into the files opened by [`open`] with the same `slices`.
pub fn write(
    outputs: Outputs,
    report: &Report,
    layout: &Layout,
    slices: &[Vec<String>],
) -> Result<(), String> {
    let plot = |index: usize, path: &Path| match &layout.plot {
        Some(spec) => write_plot(path, report, spec, layout.hide, &slices[index]),
        None => Err("this benchmark draws no plot".to_owned()),
    };
    outputs.write(report, |out| csv(out, report, layout.csv), plot)
}

/// `FILE.svg` for no slice, `FILE-sor-small.svg` for the values `sor`, `small` (a character
/// that is not a letter, digit, `.` or `_` becomes `-`: `60/30/10us` gives `60-30-10us`).
pub fn plot_path(base: &Path, values: &[String]) -> PathBuf {
    let stem = base.file_stem().unwrap_or_default().to_string_lossy();
    let keep = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_';
    let safe = |c: char| if keep(c) { c } else { '-' };
    let values = values.iter().map(|value| value.chars().map(safe).collect());
    let name: Vec<String> = std::iter::once(stem.into_owned()).chain(values).collect();
    base.with_file_name(format!("{}.svg", name.join("-")))
}

/// A row's values of `keys`, those it has, as a slice of the plots or a failure's name.
pub fn slice(row: &Row, keys: &[&str]) -> Vec<String> {
    let values = keys.iter().filter_map(|key| row.at.get(key));
    values.map(text).collect()
}

/// The median of each contender's rows of the slice `values` against threads, but the `hide`
/// kinds the tables leave out; a row without one of the slice keys is in every slice of it.
pub fn write_plot(
    path: &Path,
    report: &Report,
    spec: &PlotSpec,
    hide: &[Kind],
    values: &[String],
) -> Result<(), String> {
    let mut series: Vec<Series> = Vec::new();
    let at = |row: &Row| {
        let mut keys = spec.slices.iter().zip(values);
        keys.all(|(key, value)| row.at.get(key).map_or(true, |v| text(v) == *value))
    };
    let shown = |row: &&Row| !hide.contains(&row.kind) && at(row);
    for row in report.rows.iter().filter(shown) {
        let Some(median) = row.median().filter(|_| row.error.is_none()) else {
            continue;
        };
        let index = series.iter().position(|line| line.name == row.contender);
        let index = index.unwrap_or_else(|| {
            let kind = match row.kind {
                Kind::Ours => SeriesKind::Ours,
                Kind::Reference | Kind::Floor => SeriesKind::Reference,
                Kind::Baseline | Kind::Loop | Kind::Ideal => SeriesKind::Baseline,
            };
            let (name, points) = (row.contender.clone(), Vec::new());
            series.push(Series { name, kind, points });
            series.len() - 1
        });
        series[index].points.push((row.threads, median));
    }
    let what = [&[report.provenance.benchmark.clone()][..], values].concat();
    let (what, machine) = (what.join(" "), report.provenance.machine.summary());
    let title = format!("phasers {what}, {machine}");
    let floor_ns = report.floor.as_ref().and_then(|floor| floor.median_ns);
    let cores = Some(report.provenance.machine.available_cores);
    plot::write_svg(
        path,
        &plot::Plot {
            title: &title,
            y_label: &spec.y_label,
            series: &series,
            floor_ns,
            cores,
        },
    )
}

/// One CSV line per row, the run's floor first: `threads, oversubscribed`, the point `keys`, the
/// core columns, the extra `keys` (a series `X_ns` as `X_min_ns, X_median_ns`), `note, error`.
pub fn csv(out: impl Write, report: &Report, keys: &[&str]) -> csv::Result<()> {
    let floor = report.floor.as_ref().map(|floor| floor_row(floor, 2));
    let rows: Vec<&Row> = floor.iter().chain(&report.rows).collect();
    let is_point = |key: &&&str| rows.iter().any(|row| row.at.get(key).is_some());
    let (point, extra): (Vec<&str>, Vec<&str>) = keys.iter().partition(is_point);
    let series = |key: &str| rows.iter().any(|row| row.metric(key).is_some());
    let stat = |key: &str, stat: &str| match key.strip_suffix("_ns") {
        Some(stem) => format!("{stem}_{stat}_ns"),
        None => format!("{key}_{stat}"),
    };
    let mut head: Vec<String> = ["threads", "oversubscribed"].map(String::from).to_vec();
    head.extend(point.iter().map(|key| key.to_string()));
    let core = "contender kind resolved samples min_ns median_ns mean_ns ci95_ns stddev_ns reference_ns spread noisy";
    head.extend(core.split(' ').map(String::from));
    for key in &extra {
        match series(key) {
            true => head.extend([stat(key, "min"), stat(key, "median")]),
            false => head.push(key.to_string()),
        }
    }
    head.extend(["note", "error"].map(String::from));
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(&head)?;
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    let owned = |text: &Option<String>| text.clone().unwrap_or_default();
    for row in &rows {
        let s = row.summary;
        let mut line = vec![row.threads.to_string(), row.oversubscribed.to_string()];
        let at = |fields: &Fields, key: &&str| fields.get(key).map(text).unwrap_or_default();
        line.extend(point.iter().map(|key| at(&row.at, key)));
        let kind = text(&serde_json::json!(row.kind));
        let samples = s.map(|s| s.count.to_string()).unwrap_or_default();
        line.extend([row.contender.clone(), kind, owned(&row.resolved), samples]);
        let (min, median, mean) = (s.map(|s| s.min), s.map(|s| s.median), s.map(|s| s.mean));
        let (ci95, stddev) = (s.and_then(|s| s.ci95), s.map(|s| s.stddev));
        let (reference, spread) = (row.reference_ns, row.spread);
        let numbers = [min, median, mean, ci95, stddev, reference, spread];
        line.extend(numbers.map(number));
        line.push(row.noisy.to_string());
        for key in &extra {
            let metric = row.metric(key);
            match series(key) {
                true => line.extend([metric.map(|s| s.min), metric.map(|s| s.median)].map(number)),
                false => line.push(at(&row.extra, key)),
            }
        }
        line.extend([owned(&row.note), owned(&row.error)]);
        writer.write_record(&line)?;
    }
    writer.flush()?;
    Ok(())
}

/// A value as one cell: a string bare, null empty, an object `k:v k:v`, an array space-separated.
fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}:{}", text(v)))
            .collect::<Vec<_>>()
            .join(" "),
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// `Err` naming every failed row of `rows` (`sor small auto with 2 threads: why`, the point's
/// values of `keys` first), or `Ok` when none failed.
pub fn failures(rows: &[Row], keys: &[&str]) -> Result<(), String> {
    super::failures::failures(rows.iter().filter_map(|row| {
        let (error, threads) = (row.error.as_ref()?, row.threads);
        let name = [slice(row, keys), vec![row.contender.clone()]].concat();
        Some(format!(
            "{} with {threads} threads: {error}",
            name.join(" ")
        ))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::provenance::Provenance;
    use crate::harness::result::metric;

    #[test]
    fn the_csv_plots_and_failures_name_every_row_by_its_point() {
        let at = Fields::default().with("app", "sor");
        let mut auto = Row::new("auto", Kind::Ours, 2, at.clone());
        auto.raw_ns = vec![10.0, 30.0];
        auto.finish(0, None);
        auto.extra.set("cycles_per_nop", metric(&[4.0, 6.0]));
        auto.extra.set("chose", serde_json::json!({"a": 2, "b": 1}));
        let mut failed = Row::new("std", Kind::Baseline, 2, at);
        failed.error = Some("wrong result".into());
        // A row without the slice key is in every slice.
        let mut floor = Row::new("memory floor", Kind::Floor, 2, Fields::default());
        floor.raw_ns = vec![5.0];
        floor.finish(0, None);
        let run_floor = serde_json::json!({"round_trips_per_sample": 10, "samples_ns": [50.0]});
        let report = Report {
            provenance: Provenance::now("app", Vec::new()),
            settings: Default::default(),
            floor: Some(serde_json::from_value(run_floor).unwrap()),
            rows: vec![auto, failed, floor],
            ratios: Vec::new(),
        };
        let mut out = Vec::new();
        csv(&mut out, &report, &["app", "cycles_per_nop", "chose"]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "threads,oversubscribed,app,contender,kind,resolved,samples,min_ns,median_ns,mean_ns,ci95_ns,stddev_ns,reference_ns,spread,noisy,cycles_per_nop_min,cycles_per_nop_median,chose,note,error");
        assert!(lines[1].starts_with("2,false,,cache-line round trip,floor,,1,50,50,50,,0,"));
        assert!(lines[2].contains(",sor,auto,ours,,2,10,20,20,"), "{text}");
        assert!(lines[2].ends_with(",4,5,a:2 b:1,,"), "{text}");
        assert!(lines[3].ends_with(",,,,wrong result"), "{text}");
        let failure = failures(&report.rows, &["app", "size"]).unwrap_err();
        assert!(failure.ends_with(" failed: sor std with 2 threads: wrong result"));

        let values = ["sor".to_owned(), "60/30/10us".to_owned()];
        let base = std::env::temp_dir().join(format!("files-{}.svg", std::process::id()));
        let path = plot_path(&base, &values);
        assert!(path.ends_with(format!("files-{}-sor-60-30-10us.svg", std::process::id())));
        let (slices, y_label) = (&["app"][..], "ns".to_owned());
        let spec = PlotSpec { slices, y_label };
        write_plot(&path, &report, &spec, &[], &values[..1]).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.contains("auto") && svg.contains("memory floor"));
    }
}
