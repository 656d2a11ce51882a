//! `phasers app`: whole applications (`phasers-apps`) on each barrier kind, timed and checked.
//!
//! For each application and size: the sequential run `--repeat` times, then, at each thread
//! count and for each barrier kind, the parallel run `--repeat` times. Every parallel result is
//! compared with the sequential one after its clock stopped; a wrong result fails the row, and
//! the command exits non-zero naming it. The tables give min and median over the runs, the
//! speedup over the sequential run and over the same kind at one thread, and per thread count
//! `auto` over the best standard baseline and over `std::sync::Barrier`. With `interp`, the
//! NOP program also measures what one interpreter instruction costs on each kind, against the
//! ideal interpreter with no barriers.

mod args;
mod factories;

use std::time::Instant;

use phasers::Algorithm;
use phasers_apps::interp;
use phasers_apps::sync::{SyncKind, STD_NAME};
use phasers_apps::workload::{AppName, Size};
use phasers_cli::harness::args::command_line;
use phasers_cli::harness::files;
use phasers_cli::harness::header::{warn_if_debug_build, Header};
use phasers_cli::harness::progress;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick, Ratio};
use phasers_cli::harness::render::{self, Column, Format, Layout, PlotSpec, Stat};
use phasers_cli::harness::resolution::clock_step_ns;
use phasers_cli::harness::result::{metric, Fields, Kind, RatioRecord, Report, Row};
use phasers_cli::harness::verbosity;

pub use args::AppArgs;

use args::Config;

/// The point keys that name a row: its application, size, and `nop` for the NOP program.
const NAME: &[&str] = &["app", "size", "program"];

/// Runs `phasers app`.
pub fn run(args: &AppArgs) -> Result<(), String> {
    let config = Config::from_args(args);
    let interp = config.apps.contains(&AppName::Interp);
    let mut slices: Vec<Vec<String>> = (config.apps.iter())
        .flat_map(|app| {
            config
                .sizes
                .iter()
                .map(|size| vec![app.name().into(), size.name().into()])
        })
        .collect();
    if interp {
        slices.push(vec![AppName::Interp.name().into(), "nop".into()]);
    }
    let outputs = files::open(&args.output, &slices)?;
    let provenance = Provenance::now("app", command_line());
    let settings = config.settings();
    let what = "whole applications on each barrier kind, every result checked against the \
                sequential run";
    let header = Header::new(&provenance, what).line("method", &settings.method);
    println!(
        "{}",
        header.machine(&provenance).floors(&provenance).finish()
    );
    warn_if_debug_build(None);
    let bar = progress::bar(
        config.apps.len() * config.sizes.len() + usize::from(interp),
        "runs",
    );
    let started = Instant::now();
    let (mut rows, mut ratios) = (Vec::new(), Vec::new());
    for &app in &config.apps {
        for &size in &config.sizes {
            bar.set_message(format!("{app} {size}"));
            let (run, records, text) = measure_app(app, size, &config);
            bar.suspend(|| println!("{text}"));
            bar.inc(1);
            rows.extend(run);
            ratios.extend(records);
        }
    }
    if interp {
        bar.set_message("interp NOP program");
        let nop = measure_nops(&config);
        bar.suspend(|| println!("{}", nop_table(&nop)));
        rows.extend(nop);
    }
    bar.finish_and_clear();
    eprintln!("measured in {:.0} s", started.elapsed().as_secs_f64());
    let report = Report {
        provenance,
        settings,
        floor: None,
        rows,
        ratios,
    };
    files::write(outputs, &report, &layout(), &slices)?;
    files::failures(&report.rows, NAME)
}

/// The tables' columns, the CSV's keys and the plots (one per application and size).
fn layout() -> Layout {
    let value = |key, head| Column::Value {
        key,
        head,
        format: Format::Fixed(2),
    };
    let concise = vec![
        Column::Threads,
        Column::Label,
        Column::Min,
        Column::Median,
        value("speedup_vs_sequential", "×seq"),
        value("speedup_vs_one_thread", "×1 thread"),
        Column::Value {
            key: "barriers",
            head: "barriers",
            format: Format::Fixed(0),
        },
    ];
    let verbose = [&concise[..2], &[Column::MeanCi], &concise[2..]].concat();
    Layout {
        concise,
        verbose,
        block: None,
        hide: &[],
        csv: &[
            "app",
            "size",
            "problem",
            "program",
            "nops",
            "barriers",
            "speedup_vs_sequential",
            "speedup_vs_one_thread",
            "cycles_per_nop",
            "barriers_per_nop",
        ],
        plot: Some(PlotSpec {
            slices: NAME,
            y_label: "median time of a run".into(),
        }),
    }
}

/// A row of `threads` on `sync` (`None`: the ideal, with no barriers) at `at`.
fn row(threads: usize, sync: Option<&SyncKind>, at: Fields) -> Row {
    let (name, kind) = match sync {
        None => ("ideal".to_owned(), Kind::Ideal),
        Some(sync) if sync.is_ours() => (sync.name(), Kind::Ours),
        Some(sync) => (sync.name(), Kind::Baseline),
    };
    let mut row = Row::new(&name, kind, threads, at);
    if let Some(SyncKind::Ours(Algorithm::Auto)) = sync {
        row.resolved = Some(Algorithm::Auto.resolve(threads).name().to_owned());
    }
    row
}

/// Runs `attempt` up to `repeat` times, stopping at the first failure: what the runs gave, and
/// the failure.
fn repeated<T, E: ToString>(
    repeat: usize,
    mut attempt: impl FnMut() -> Result<T, E>,
) -> (Vec<T>, Option<String>) {
    let mut outputs = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        match attempt() {
            Ok(output) => outputs.push(output),
            Err(error) => return (outputs, Some(error.to_string())),
        }
    }
    (outputs, None)
}

/// Fills `row` with `repeat` runs of `attempt`, each `ns` long over `iterations` (a failed row
/// has no summary), and returns what the runs gave.
fn timed<T, E: ToString>(
    row: &mut Row,
    repeat: usize,
    iterations: u64,
    attempt: impl FnMut() -> Result<T, E>,
    ns: impl Fn(&T) -> f64,
) -> Vec<T> {
    let start = Instant::now();
    let (outputs, error) = repeated(repeat, attempt);
    row.raw_ns = outputs.iter().map(ns).collect();
    (row.samples_wanted, row.iterations_per_sample) = (repeat, iterations);
    row.sample_iterations = vec![iterations; outputs.len()];
    row.resolution_ns = Some(clock_step_ns() / iterations as f64);
    row.finish(0, None);
    row.error = error;
    if row.error.is_some() {
        row.summary = None;
    }
    row.row_s = start.elapsed().as_secs_f64();
    outputs
}

/// Every row of `app` at `size` (the sequential run first), the ratios of `auto` at each thread
/// count, and the table with its ratio lines.
fn measure_app(app: AppName, size: Size, config: &Config) -> (Vec<Row>, Vec<RatioRecord>, String) {
    let workload = app.workload(size);
    let at = Fields::default()
        .with("app", app.name())
        .with("size", size.name())
        .with("problem", workload.describe());
    let ns = |elapsed: &std::time::Duration| elapsed.as_secs_f64() * 1e9;
    let mut sequential = Row::new("sequential", Kind::Reference, 1, at.clone());
    timed(
        &mut sequential,
        config.repeat,
        1,
        || workload.sequential(),
        ns,
    );
    let mut rows = vec![sequential];
    for &threads in &config.threads {
        for sync in &config.kinds {
            let mut row = row(threads, Some(sync), at.clone());
            let attempt = || workload.parallel(threads, sync);
            let runs = timed(&mut row, config.repeat, 1, attempt, |run| ns(&run.elapsed));
            row.extra
                .set("barriers", runs.last().map(|run| run.barriers));
            rows.push(row);
        }
    }
    fill_speedups(&mut rows);
    let title = format!("{} {} ({})", app.name(), size.name(), workload.describe());
    let verbose = verbosity::verbose();
    let mut text = render::table(&title, &rows.iter().collect::<Vec<_>>(), &layout(), verbose);
    let mut records = Vec::new();
    for &threads in &config.threads {
        let table: Vec<&Row> = rows.iter().filter(|row| row.threads == threads).collect();
        let measured = ratio::records(&table, &auto_ratios());
        if table
            .iter()
            .any(|row| row.contender == Algorithm::Auto.name())
        {
            let plural = if threads == 1 { "" } else { "s" };
            let heading =
                format!("{threads} thread{plural}, median ratios (below 1: auto is faster)");
            text.push_str(&ratio::lines(&heading, &measured, &auto_ratios(), verbose));
            text.push('\n');
        }
        records.extend(measured);
    }
    (rows, records, text)
}

/// `auto` against the fastest standard barrier and against `std::sync::Barrier`.
fn auto_ratios() -> Vec<Ratio> {
    let auto = || Pick::Named(Algorithm::Auto.name().into());
    vec![
        Ratio {
            label: "auto / fastest standard".into(),
            numerator: auto(),
            denominator: Pick::FastestKind(Kind::Baseline),
        },
        Ratio {
            label: format!("auto / {STD_NAME}"),
            numerator: auto(),
            denominator: Pick::Named(STD_NAME.into()),
        },
    ]
}

/// `numerator / denominator`, when both are known and the denominator is positive.
fn quotient(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    let denominator = denominator.filter(|denominator| *denominator > 0.0)?;
    Some(numerator? / denominator)
}

/// Sets each parallel row's speedups: the sequential median, and its kind's 1-thread median,
/// over its own median.
fn fill_speedups(rows: &mut [Row]) {
    let median = |row: &Row| row.median().filter(|_| row.error.is_none());
    let sequential = rows
        .iter()
        .find(|row| row.kind == Kind::Reference)
        .and_then(median);
    let one_thread: Vec<(String, Option<f64>)> = (rows.iter())
        .filter(|row| row.threads == 1 && row.kind != Kind::Reference)
        .map(|row| (row.contender.clone(), median(row)))
        .collect();
    for row in rows.iter_mut().filter(|row| row.kind != Kind::Reference) {
        let one = one_thread.iter().find(|(name, _)| *name == row.contender);
        let speedups = [
            quotient(sequential, median(row)),
            quotient(one.and_then(|(_, median)| *median), median(row)),
        ];
        row.extra.set("speedup_vs_sequential", speedups[0]);
        row.extra.set("speedup_vs_one_thread", speedups[1]);
    }
}

/// The NOP program at every thread count, on every kind and with no barriers.
fn measure_nops(config: &Config) -> Vec<Row> {
    let at = Fields::default()
        .with("app", AppName::Interp.name())
        .with("program", "nop")
        .with("nops", config.nops);
    let mut rows = Vec::new();
    for &threads in &config.threads {
        for sync in config.kinds.iter().map(Some).chain([None]) {
            let mut row = row(threads, sync, at.clone());
            let attempt = || interp::nop_cost(threads, sync, config.nops);
            let nops = u64::from(config.nops);
            let costs = timed(&mut row, config.repeat, nops, attempt, |cost| cost.ns);
            let cycles: Vec<f64> = costs.iter().filter_map(|cost| cost.cycles).collect();
            row.extra.set("cycles_per_nop", metric(&cycles));
            row.extra.set(
                "barriers_per_nop",
                costs.last().map(|cost| cost.barriers_per_nop),
            );
            rows.push(row);
        }
    }
    rows
}

/// The NOP table.
fn nop_table(rows: &[Row]) -> String {
    let barriers = Column::Value {
        key: "barriers_per_nop",
        head: "barriers/NOP",
        format: Format::Fixed(2),
    };
    let cycles = Column::Metric {
        key: "cycles_per_nop",
        stat: Stat::Median,
        head: "cycles/NOP median",
    };
    let concise = vec![
        Column::Threads,
        Column::Label,
        Column::Min,
        Column::Median,
        cycles,
        barriers,
    ];
    let verbose = [&concise[..2], &[Column::MeanCi], &concise[2..]].concat();
    let layout = Layout {
        concise,
        verbose,
        ..layout()
    };
    let nops = rows
        .first()
        .and_then(|row| row.value("nops"))
        .unwrap_or(0.0);
    let title = format!(
        "interp NOP program, times in ns/NOP: {nops} NOPs, each a decode by rank 0 and two \
         barriers (ideal: every thread decodes, no barriers); cycles are x86_64 TSC ticks"
    );
    render::table(
        &title,
        &rows.iter().collect::<Vec<_>>(),
        &layout,
        verbosity::verbose(),
    )
}

/// Every application with a line about it, for `phasers list`.
pub fn list() -> Vec<(&'static str, &'static str)> {
    AppName::ALL
        .into_iter()
        .map(|app| (app.name(), app.description()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn measured(threads: usize, sync: SyncKind, median: Option<f64>) -> Row {
        let mut row = row(threads, Some(&sync), Fields::default());
        row.raw_ns = median.into_iter().collect();
        row.finish(0, None);
        row
    }

    #[test]
    fn speedups_and_ratios_divide_medians() {
        let auto = || SyncKind::Ours(Algorithm::Auto);
        let mut sequential = Row::new("sequential", Kind::Reference, 1, Fields::default());
        sequential.raw_ns = vec![90.0];
        sequential.finish(0, None);
        let mut rows = vec![
            sequential,
            measured(1, auto(), Some(100.0)),
            measured(1, SyncKind::Std, Some(120.0)),
            measured(2, auto(), Some(50.0)),
            measured(2, SyncKind::Std, Some(100.0)),
            measured(2, factories::pthread(), Some(80.0)),
            measured(2, SyncKind::Phaser, None),
        ];
        fill_speedups(&mut rows);
        let speedups = |row: &Row| {
            (
                row.value("speedup_vs_sequential"),
                row.value("speedup_vs_one_thread"),
            )
        };
        assert_eq!(speedups(&rows[3]), (Some(1.8), Some(2.0)));
        assert_eq!(speedups(&rows[4]).1, Some(1.2));
        assert_eq!(speedups(&rows[5]).1, None, "no 1-thread pthread row");
        assert_eq!(speedups(&rows[6]).0, None);
        assert_eq!(
            speedups(&rows[0]),
            (None, None),
            "the sequential run has none"
        );
        let two: Vec<&Row> = rows.iter().filter(|row| row.threads == 2).collect();
        let records = ratio::records(&two, &auto_ratios());
        assert_eq!(records[0].record.denominator, "pthread_barrier_t");
        assert_eq!(records[0].record.ratio, 50.0 / 80.0);
        assert_eq!(records[1].record.ratio, 0.5);
        let eight: Vec<&Row> = rows.iter().filter(|row| row.threads == 8).collect();
        assert!(ratio::records(&eight, &auto_ratios()).is_empty());
    }

    #[test]
    fn a_failed_row_fails_the_command_naming_it() {
        let at = Fields::default().with("app", "sor").with("size", "small");
        let mut sequential = Row::new("sequential", Kind::Reference, 1, at.clone());
        sequential.error = Some("not repeatable".to_owned());
        let mut bad = row(2, Some(&SyncKind::Std), at.clone());
        bad.error = Some("wrong result: grid[3] is 1.0".to_owned());
        let rows = [sequential, row(1, Some(&SyncKind::Std), at), bad];
        assert_eq!(
            files::failures(&rows, NAME).unwrap_err(),
            "2 row(s) failed: sor small sequential with 1 threads: not repeatable; sor small \
             std::sync::Barrier with 2 threads: wrong result: grid[3] is 1.0"
        );
    }

    #[test]
    fn a_row_says_who_it_measures() {
        let auto = row(3, Some(&SyncKind::Ours(Algorithm::Auto)), Fields::default());
        assert!(auto.oversubscribed == phasers::is_oversubscribed(3) && auto.kind == Kind::Ours);
        assert_eq!(auto.resolved.unwrap(), Algorithm::Auto.resolve(3).name());
        assert_eq!(
            row(2, Some(&factories::pthread()), Fields::default()).kind,
            Kind::Baseline
        );
        let ideal = row(1, None, Fields::default());
        assert_eq!(
            (ideal.contender.as_str(), ideal.kind, ideal.resolved),
            ("ideal", Kind::Ideal, None)
        );
    }

    #[test]
    fn the_nop_program_runs_checked_on_every_kind_and_the_ideal() {
        let line = "app interp --threads 1,2 --repeat 1 --nops 50".split(' ');
        let nop = measure_nops(&Config::from_args(&AppArgs::parse_from(line)));
        assert_eq!(nop.len(), 2 * 6);
        assert!(files::failures(&nop, NAME).is_ok(), "{nop:?}");
        assert!(nop.iter().all(|row| row.median().is_some()));
        assert_eq!(nop[11].contender, "ideal");
        assert_eq!(nop[11].value("barriers_per_nop"), Some(0.0));
        assert!(nop_table(&nop).contains("ns/NOP"));
    }
}
