//! `phasers app`: whole applications (`phasers-apps`) on each barrier kind, timed and checked.
//!
//! For each application and size: the sequential run `--repeat` times, then, at each thread
//! count and for each barrier kind, the parallel run `--repeat` times, each run one round of the
//! harness's engine ([`engine::calls`]). Every parallel result is compared with the sequential one
//! after its clock stopped; a wrong result fails the row, and the command exits non-zero naming
//! it. The tables give min and median over the runs, the speedup over the sequential run and over
//! the same kind at one thread, and per thread count `auto` over the best standard baseline and
//! over `std::sync::Barrier`. With `interp`, the NOP program also measures what one interpreter
//! instruction costs on each kind, against the ideal interpreter with no barriers. The native
//! baselines (glibc's `pthread_barrier_t`, libstdc++'s C++20 `std::barrier`) are kinds of the
//! applications through their `BarrierFactory` trait: `phasers-apps` cannot build the C shims,
//! which live in this crate.

use std::collections::HashSet;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use phasers::Algorithm;
use phasers_apps::interp;
use phasers_apps::sync::{
    BarrierFactory, Handles, SyncKind, WaitHandle as AppWaitHandle, STD_NAME,
};
use phasers_apps::workload::{AppName, Size};
use phasers_cli::harness::args::{command_line, sorted_unique};
use phasers_cli::harness::engine::{self, Pacing, Plan};
use phasers_cli::harness::files;
use phasers_cli::harness::header::{warn_if_debug_build, Header};
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::progress;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick, Ratio};
use phasers_cli::harness::render::{self, Column, Format, Layout, PlotSpec, Stat};
use phasers_cli::harness::result::{metric, Fields, Kind, RatioRecord, Report, Row, Settings};
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::threads::parse_thread_count;
use phasers_cli::harness::verbosity;
use phasers_cli::harness::work::{Failure, Work};
use serde_json::Value;

use crate::native::{CxxBarrier, PthreadBarrier};

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

/// Fills `row` with `repeat` runs of `run`, one per round of the engine (no warm-up), each
/// `iterations` long; the first failure stops the row, which then has no summary. Returns what
/// the runs gave besides their time.
fn timed<T>(
    row: &mut Row,
    repeat: usize,
    iterations: u64,
    mut run: impl FnMut() -> Result<(Duration, T), String>,
) -> Vec<T> {
    let schedule = Schedule {
        episodes: Some(iterations),
        samples: repeat,
        target_sample: Duration::ZERO,
        row_budget: Duration::MAX,
    };
    let plan = Plan {
        warm_up: 0,
        ..Plan::new(schedule, Pacing::BackToBack, Duration::MAX)
    };
    let mut outputs = Vec::with_capacity(repeat);
    let measured = engine::calls(&plan, |planned, _| match planned {
        0 => Ok((0, Duration::ZERO)),
        _ => run().map(|(elapsed, output)| {
            outputs.push(output);
            (iterations, elapsed)
        }),
    });
    row.record(measured, &schedule);
    if row.error.is_some() {
        row.summary = None;
    }
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
    let mut sequential = Row::new("sequential", Kind::Reference, 1, at.clone());
    let run = || workload.sequential().map(|elapsed| (elapsed, ()));
    timed(&mut sequential, config.repeat, 1, || {
        run().map_err(|e| e.to_string())
    });
    let mut rows = vec![sequential];
    for &threads in &config.threads {
        for sync in &config.kinds {
            let mut row = row(threads, Some(sync), at.clone());
            let run = || {
                workload
                    .parallel(threads, sync)
                    .map(|run| (run.elapsed, run.barriers))
            };
            let barriers = timed(&mut row, config.repeat, 1, || {
                run().map_err(|e| e.to_string())
            });
            row.extra.set("barriers", barriers.last().copied());
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
            let nops = u64::from(config.nops);
            let costs = timed(&mut row, config.repeat, nops, || {
                let cost = interp::nop_cost(threads, sync, config.nops)?;
                Ok((Duration::from_secs_f64(cost.ns * nops as f64 / 1e9), cost))
            });
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

/// Options of `phasers app`.
#[derive(Debug, Clone, Parser)]
#[command(name = "app")]
pub struct AppArgs {
    /// Applications, comma-separated: sor, lu, streamcluster, interp, or all.
    #[arg(value_name = "APP", value_delimiter = ',', required = true, value_parser = |text: &str| one_or_all(text, &AppName::ALL))]
    pub apps: Vec<Named<AppName>>,

    /// Problem sizes, comma-separated: small, medium, large, or all.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "all", value_parser = |text: &str| one_or_all(text, &Size::ALL))]
    pub size: Vec<Named<Size>>,

    /// Thread counts, comma-separated [default: 1,2,8]; the speedup over one thread needs 1.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_thread_count)]
    pub threads: Option<Vec<usize>>,

    /// Barrier kinds, comma-separated: auto or any algorithm of `phasers list`, phaser, std
    /// (std::sync::Barrier), pthread (pthread_barrier_t), cxx (C++20 std::barrier); ours (every
    /// algorithm and the phaser), baselines (std, pthread, cxx), or all.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "auto,std,pthread,cxx,phaser", value_parser = parse_sync)]
    pub sync: Vec<Named<SyncKind>>,

    /// Runs of each row; min and median are over them.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub repeat: u16,

    /// NOPs per run of the interpreter's NOP program (the cost of one instruction).
    #[arg(long, value_name = "N", default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub nops: u32,

    /// `--json`, `--csv`, `--plot` (one file per application and size, `FILE-sor-small.svg`)
    /// and `--verbose`.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What one entry of a list names: one item, or a group (`all`, `ours`, `baselines`).
#[derive(Debug, Clone)]
pub struct Named<T>(pub Vec<T>);

/// One of `every` by name, or `all` of them.
fn one_or_all<T: FromStr<Err = String> + Copy>(
    text: &str,
    every: &[T],
) -> Result<Named<T>, String> {
    match text.trim() {
        "all" => Ok(Named(every.to_vec())),
        name => name
            .parse()
            .map(|one| Named(vec![one]))
            .map_err(|error| format!("{error} (or all)")),
    }
}

fn parse_sync(text: &str) -> Result<Named<SyncKind>, String> {
    let baselines = || vec![SyncKind::Std, pthread(), cxx()];
    Ok(Named(match text.trim() {
        "phaser" => vec![SyncKind::Phaser],
        "std" => vec![SyncKind::Std],
        "pthread" => vec![pthread()],
        "cxx" | "c++" => vec![cxx()],
        "ours" => SyncKind::ours(),
        "baselines" => baselines(),
        "all" => SyncKind::ours().into_iter().chain(baselines()).collect(),
        name => vec![SyncKind::Ours(name.parse::<Algorithm>().map_err(|_| {
            format!(
                "unknown barrier kind {name:?}: use auto or an algorithm of `phasers list`, \
                 phaser, std, pthread, cxx, ours, baselines or all"
            )
        })?)],
    }))
}

/// The items of `every` that `named` names, in the order of `every`.
fn chosen<T: PartialEq + Copy>(named: &[Named<T>], every: &[T]) -> Vec<T> {
    every
        .iter()
        .filter(|item| named.iter().any(|named| named.0.contains(item)))
        .copied()
        .collect()
}

/// What the options resolve to.
pub struct Config {
    /// Applications, in report order, each once.
    pub apps: Vec<AppName>,
    /// Sizes, smallest first, each once.
    pub sizes: Vec<Size>,
    /// Barrier kinds, each once, in the order given (`all`: ours first, then the baselines).
    pub kinds: Vec<SyncKind>,
    /// Thread counts, increasing, each once.
    pub threads: Vec<usize>,
    /// Runs per row.
    pub repeat: usize,
    /// NOPs per run of the NOP program.
    pub nops: u32,
}

impl Config {
    /// The run `args` ask for.
    pub fn from_args(args: &AppArgs) -> Self {
        let mut kinds: Vec<SyncKind> = args.sync.iter().flat_map(|named| named.0.clone()).collect();
        let mut seen = HashSet::new();
        kinds.retain(|kind| seen.insert(kind.name()));
        Config {
            apps: chosen(&args.apps, &AppName::ALL),
            sizes: chosen(&args.size, &Size::ALL),
            kinds,
            // 1 for the speedups, 2 the cores of our machines, 8 oversubscribed there (the scale
            // where barrier choice starts to matter elsewhere).
            threads: sorted_unique(args.threads.clone().unwrap_or_else(|| vec![1, 2, 8])),
            repeat: usize::from(args.repeat),
            nops: args.nops,
        }
    }

    /// The settings as the report states them.
    pub fn settings(&self) -> Settings {
        let names = |names: Vec<&str>| Value::from(names);
        Settings {
            method: format!(
                "each row runs the application {} time(s) on fresh data and a fresh barrier; a \
                 run is timed from the first thread's start to the last thread's end, after the \
                 threads met on a control barrier (thread start-up and set-up are not timed); \
                 every barrier is one virtual call through the same handle type for every kind; \
                 the result is checked against the sequential run after the clock stops. \
                 Speedups divide medians",
                self.repeat
            ),
            threads: self.threads.clone(),
            contenders: self.kinds.iter().map(SyncKind::name).collect(),
            pinned: false,
            debug_build: cfg!(debug_assertions),
            own: Fields::default()
                .with(
                    "apps",
                    names(self.apps.iter().map(|app| app.name()).collect()),
                )
                .with(
                    "sizes",
                    names(self.sizes.iter().map(|size| size.name()).collect()),
                )
                .with("repeat", self.repeat)
                .with("nops", self.nops),
        }
    }
}

/// The kind of the pthread baseline.
pub fn pthread() -> SyncKind {
    SyncKind::External(Arc::new(Native::Pthread))
}

/// The kind of the C++20 baseline.
pub fn cxx() -> SyncKind {
    SyncKind::External(Arc::new(Native::Cxx))
}

/// A native baseline, built afresh for every run.
#[derive(Debug, Clone, Copy)]
enum Native {
    /// glibc's `pthread_barrier_t`.
    Pthread,
    /// libstdc++'s C++20 `std::barrier`.
    Cxx,
}

/// A native barrier's handle as the applications wait on it (the error becomes a message).
struct AppHandle<H>(H);

impl<H: Work> AppWaitHandle for AppHandle<H> {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        match self.0.iteration(0) {
            Ok(_) => Ok(()),
            Err(Failure::Cause(message) | Failure::Echo(message)) => Err(message),
        }
    }
}

fn boxed<'a, H: Work + 'a>(handles: Vec<H>) -> Handles<'a> {
    handles
        .into_iter()
        .map(|handle| Box::new(AppHandle(handle)) as Box<dyn AppWaitHandle + 'a>)
        .collect()
}

impl BarrierFactory for Native {
    fn name(&self) -> String {
        match self {
            Native::Pthread => PthreadBarrier::NAME,
            Native::Cxx => CxxBarrier::NAME,
        }
        .to_owned()
    }

    fn with_handles(&self, threads: usize, run: &mut dyn FnMut(Handles<'_>)) -> Result<(), String> {
        match self {
            Native::Pthread => run(boxed(PthreadBarrier::new(threads)?.handles())),
            Native::Cxx => run(boxed(CxxBarrier::new(threads)?.handles())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            measured(2, pthread(), Some(80.0)),
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
            row(2, Some(&pthread()), Fields::default()).kind,
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

    fn parse(line: &str) -> Result<Config, clap::Error> {
        let args = AppArgs::try_parse_from(["app"].into_iter().chain(line.split_whitespace()))?;
        Ok(Config::from_args(&args))
    }

    #[test]
    fn defaults() {
        let config = parse("all").unwrap();
        assert_eq!(config.apps, AppName::ALL.to_vec());
        assert_eq!(config.sizes, Size::ALL.to_vec());
        let sync = config.settings().contenders;
        let Config {
            threads,
            repeat,
            nops,
            ..
        } = config;
        assert_eq!((threads, repeat, nops), (vec![1, 2, 8], 3, 5_000));
        let baselines = [
            "std::sync::Barrier",
            "pthread_barrier_t",
            "std::barrier (C++20)",
        ];
        assert_eq!(sync, [&["auto"][..], &baselines, &["phaser"]].concat());
    }

    #[test]
    fn lists_expand_and_repeat_once() {
        let config = parse(
            "interp,sor,sor --size large,small,large --threads 8,2 --sync mcs,ours,std,baselines \
             --repeat 5 --json x.json",
        )
        .unwrap();
        assert_eq!(config.apps, vec![AppName::Sor, AppName::Interp]);
        assert_eq!(config.sizes, vec![Size::Small, Size::Large]);
        assert_eq!(config.threads, vec![2, 8]);
        let kinds = config.settings().contenders;
        assert_eq!(kinds[0], Algorithm::McsTree.name());
        // mcs once, auto and the six other algorithms, the phaser, three baselines.
        assert_eq!(kinds.len(), 8 + 1 + 3);
        assert_eq!(parse("sor --sync all").unwrap().kinds.len(), 12);
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        for (line, message) in [
            ("fft", "unknown application"),
            ("sor --size huge", "unknown size"),
            ("sor --sync bogus", "unknown barrier kind"),
            ("sor --threads 0", "at least 1 thread"),
            ("sor --repeat 0", "0"),
            ("", "required"),
        ] {
            let error = parse(line).err().unwrap().to_string();
            assert!(error.contains(message), "{line:?}: {error}");
        }
    }

    #[test]
    fn native_kinds_run_an_application_and_pass_its_check() {
        let sor = AppName::Sor.workload(Size::Small);
        for kind in [pthread(), cxx()] {
            for threads in [1, 3] {
                let run = sor.parallel(threads, &kind).unwrap();
                assert_eq!(run.barriers, 200, "{kind:?}");
            }
            assert!(
                kind.with_handles(0, |_: Handles<'_>| ()).is_err(),
                "{kind:?} with 0 threads"
            );
        }
        assert_eq!(pthread().name(), "pthread_barrier_t");
        assert_eq!(cxx().name(), "std::barrier (C++20)");
    }
}
