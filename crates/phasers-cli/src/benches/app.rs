//! `phasers app`: whole applications (`phasers-apps`) on each barrier kind, timed and checked.
//!
//! A table per application and size: the sequential run, then each kind at each thread count,
//! every row `--repeat` runs of one engine round each ([`engine::calls`]), every parallel result
//! checked against the sequential one after its clock stopped. With `interp`, the NOP program
//! measures one interpreter instruction on each kind against the ideal with no barriers. The
//! native baselines are `BarrierFactory` kinds here: `phasers-apps` cannot build the C shims.

use std::collections::HashSet;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use phasers::Algorithm;
use phasers_apps::interp;
use phasers_apps::sync::{BarrierFactory, Handles, SyncKind, WaitHandle, STD_NAME};
use phasers_apps::workload::{AppName, Size, Workload};
use phasers_cli::harness::args::sorted_unique;
use phasers_cli::harness::bench::{self, Benchmark};
use phasers_cli::harness::engine::{self, Pacing, Plan};
use phasers_cli::harness::files;
use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::header::{warn_if_debug_build, Header};
use phasers_cli::harness::interleave::{RowPlan, TablePlan};
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick, Ratio};
use phasers_cli::harness::render::{self, Column, Format, Layout, PlotSpec, Stat};
use phasers_cli::harness::result::{metric, Fields, Kind, RatioRecord, Row, Settings};
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::threads::parse_thread_count;
use phasers_cli::harness::work::{Failure, Work};
use serde_json::Value;

use crate::native::{CxxBarrier, PthreadBarrier};

/// The point keys that name a row: its application, size, and `nop` for the NOP program.
const NAME: &[&str] = &["app", "size", "program"];

/// Runs `phasers app`.
pub fn run(args: &AppArgs) -> Result<(), String> {
    files::failures(&bench::run(args, &args.output)?.rows, NAME)
}

/// A row's threads, barrier kind (`None`: the sequential run or the NOP program's ideal) and
/// application at its size (`None`: the interpreter's NOP program).
type Run = (usize, Option<SyncKind>, Option<Arc<dyn Workload>>);

impl Benchmark for AppArgs {
    type Contender = Run;

    fn name(&self) -> String {
        "app".into()
    }

    fn header(&self, provenance: &Provenance, _: Option<&Floor>) -> String {
        warn_if_debug_build(None);
        let what = "whole applications on each barrier kind, every result checked against the \
                    sequential run";
        let header = Header::new(provenance, what).line("method", self.settings().method);
        header.machine(provenance).floors(provenance).finish()
    }

    fn settings(&self) -> Settings {
        let apps: Vec<&str> = self.apps().iter().map(|app| app.name()).collect();
        let sizes: Vec<&str> = self.sizes().iter().map(|size| size.name()).collect();
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
            threads: self.threads(),
            contenders: self.kinds().iter().map(SyncKind::name).collect(),
            pinned: false,
            debug_build: cfg!(debug_assertions),
            own: Fields::default()
                .with("apps", Value::from(apps))
                .with("sizes", Value::from(sizes))
                .with("repeat", self.repeat)
                .with("nops", self.nops),
        }
    }

    fn tables(&self) -> Vec<TablePlan<Run>> {
        let mut tables = Vec::new();
        for app in self.apps() {
            for size in self.sizes() {
                let workload: Arc<dyn Workload> = Arc::from(app.workload(size));
                let at = Fields::default().with("app", app.name());
                let at = at.with("size", size.name());
                let at = at.with("problem", workload.describe());
                tables.push(self.table(Some(workload), at));
            }
        }
        if self.apps().contains(&AppName::Interp) {
            let at = Fields::default().with("app", AppName::Interp.name());
            let at = at.with("program", "nop").with("nops", self.nops);
            tables.push(self.table(None, at));
        }
        tables
    }

    fn measure(&self, plan: &RowPlan<Run>, _: usize, _: usize) -> Row {
        let (threads, sync, workload) = &plan.contender;
        let mut row = Row::new(&plan.name, plan.kind, *threads, plan.at.clone());
        if let Some(SyncKind::Ours(Algorithm::Auto)) = sync {
            row.resolved = Some(Algorithm::Auto.resolve(*threads).name().to_owned());
        }
        let Some(workload) = workload else {
            let nops = u64::from(self.nops);
            let costs = timed(&mut row, usize::from(self.repeat), nops, || {
                let cost = interp::nop_cost(*threads, sync.as_ref(), self.nops)?;
                let elapsed = Duration::from_secs_f64(cost.ns * nops as f64 / 1e9);
                Ok((nops, elapsed, cost))
            });
            let cycles: Vec<f64> = costs.iter().filter_map(|cost| cost.cycles).collect();
            row.extra.set("cycles_per_nop", metric(&cycles));
            let barriers = costs.last().map(|cost| cost.barriers_per_nop);
            row.extra.set("barriers_per_nop", barriers);
            return row;
        };
        let barriers = timed(&mut row, usize::from(self.repeat), 1, || {
            let ran = match sync {
                None => workload.sequential().map(|elapsed| (1, elapsed, None)),
                Some(sync) => (workload.parallel(*threads, sync))
                    .map(|run| (1, run.elapsed, Some(run.barriers))),
            };
            ran.map_err(|error| error.to_string())
        });
        if sync.is_some() {
            row.extra
                .set("barriers", barriers.last().copied().flatten());
        }
        row
    }

    fn layout(&self) -> Layout {
        let value = |key, head, decimals| Column::Value {
            key,
            head,
            format: Format::Fixed(decimals),
        };
        // The application tables show the first three, the NOP table the last two (see `show`).
        let concise = [Column::Threads, Column::Label, Column::Min, Column::Median]
            .into_iter()
            .chain([
                value("speedup_vs_sequential", "×seq", 2),
                value("speedup_vs_one_thread", "×1 thread", 2),
                value("barriers", "barriers", 0),
                Column::Metric {
                    key: "cycles_per_nop",
                    stat: Stat::Median,
                    head: "cycles/NOP median",
                },
                value("barriers_per_nop", "barriers/NOP", 2),
            ]);
        let concise: Vec<Column> = concise.collect();
        Layout {
            verbose: [&concise[..2], &[Column::MeanCi], &concise[2..]].concat(),
            concise,
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

    fn ratios(&self, table: &[&Row]) -> Vec<Ratio> {
        match is_nop(table) {
            true => Vec::new(),
            false => auto_ratios(),
        }
    }

    fn derive(&self, table: &mut [Row]) {
        for row in table.iter_mut().filter(|row| row.error.is_some()) {
            // The first failure stops a row: its few runs are no measurement.
            row.summary = None;
        }
        fill_speedups(table);
    }

    fn show(
        &self,
        _plan: &TablePlan<Run>,
        table: &[&Row],
        records: &[RatioRecord],
        verbose: bool,
    ) -> Option<String> {
        let key = |key| table[0].field(key).and_then(Value::as_str).unwrap_or("");
        let title = match is_nop(table) {
            true => format!(
                "interp NOP program, times in ns/NOP: {} NOPs, each a decode by rank 0 and two \
                 barriers (ideal: every thread decodes, no barriers); cycles are x86_64 TSC ticks",
                self.nops
            ),
            false => format!("{} {} ({})", key("app"), key("size"), key("problem")),
        };
        let mut layout = self.layout();
        let shown = |column: &Column| match column {
            Column::Value { key, .. } | Column::Metric { key, .. } => {
                table.iter().any(|row| row.field(key).is_some())
            }
            _ => true,
        };
        layout.concise.retain(shown);
        layout.verbose.retain(shown);
        let mut text = render::table(&title, table, &layout, verbose);
        let auto = |threads| (table.iter()).any(|r| r.threads == threads && r.contender == "auto");
        for threads in (self.threads().into_iter()).filter(|&t| !is_nop(table) && auto(t)) {
            let threads_text = super::barrier::threads_text(threads);
            let heading = format!("{threads_text}, median ratios (below 1: auto is faster)");
            let at = records.iter().filter(|r| r.record.threads == threads);
            let at: Vec<RatioRecord> = at.cloned().collect();
            text.push_str(&ratio::lines(&heading, &at, &auto_ratios(), verbose));
            text.push('\n');
        }
        Some(text)
    }
}

/// Whether `table` is the NOP program's.
fn is_nop(table: &[&Row]) -> bool {
    table.iter().any(|row| row.field("program").is_some())
}

/// Fills `row` with `samples` runs of `run`, one engine round each (no warm-up, the first failure
/// stops the row); `run` gives the episodes it ran, its time and an output, which is returned.
pub(crate) fn timed<T>(
    row: &mut Row,
    samples: usize,
    episodes: u64,
    mut run: impl FnMut() -> Result<(u64, Duration, T), String>,
) -> Vec<T> {
    let schedule = Schedule {
        episodes: Some(episodes),
        samples,
        target_sample: Duration::ZERO,
        row_budget: Duration::MAX,
    };
    let plan = Plan {
        warm_up: 0,
        ..Plan::new(schedule, Pacing::BackToBack, Duration::MAX)
    };
    let mut outputs = Vec::new();
    let measured = engine::calls(&plan, |planned, _| match planned {
        0 => Ok((0, Duration::ZERO)),
        _ => run().map(|(ran, elapsed, output)| {
            outputs.push(output);
            (ran, elapsed)
        }),
    });
    row.record(measured, &schedule);
    outputs
}

/// `auto` against the fastest standard barrier and against `std::sync::Barrier`.
fn auto_ratios() -> Vec<Ratio> {
    let fastest = ("fastest standard", Pick::FastestKind(Kind::Baseline));
    let ratio = |(name, denominator)| Ratio {
        label: format!("auto / {name}"),
        numerator: Pick::Named(Algorithm::Auto.name().into()),
        denominator,
    };
    let standard = (STD_NAME, Pick::Named(STD_NAME.into()));
    Vec::from([fastest, standard].map(ratio))
}

/// Sets each parallel row's speedups, when the table has a sequential run: its median, and its
/// kind's 1-thread median, over the row's own.
fn fill_speedups(rows: &mut [Row]) {
    let median = |row: &Row| row.median().filter(|_| row.error.is_none());
    let Some(sequential) = rows.iter().find(|row| row.kind == Kind::Reference) else {
        return;
    };
    let sequential = median(sequential);
    let one_thread: Vec<(String, Option<f64>)> = (rows.iter())
        .filter(|row| row.threads == 1 && row.kind != Kind::Reference)
        .map(|row| (row.contender.clone(), median(row)))
        .collect();
    let over = |top: Option<f64>, bottom: Option<f64>| Some(top? / bottom.filter(|b| *b > 0.0)?);
    for row in rows.iter_mut().filter(|row| row.kind != Kind::Reference) {
        let one = one_thread.iter().find(|(name, _)| *name == row.contender);
        let (one, own) = (one.and_then(|(_, median)| *median), median(row));
        row.extra
            .set("speedup_vs_sequential", over(sequential, own));
        row.extra.set("speedup_vs_one_thread", over(one, own));
    }
}

/// Every application with a line about it, for `phasers list`.
pub fn list() -> Vec<(&'static str, &'static str)> {
    Vec::from(AppName::ALL.map(|app| (app.name(), app.description())))
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
        name => (name.parse().map(|one| Named(vec![one]))).map_err(|e| format!("{e} (or all)")),
    }
}

/// Parses one entry of `--sync`: a kind, or a group of them.
fn parse_sync(text: &str) -> Result<Named<SyncKind>, String> {
    let native = |native| SyncKind::External(Arc::new(native));
    let baselines = || vec![SyncKind::Std, native(Native::Pthread), native(Native::Cxx)];
    Ok(Named(match text.trim() {
        "phaser" => vec![SyncKind::Phaser],
        "std" => vec![SyncKind::Std],
        "pthread" => vec![native(Native::Pthread)],
        "cxx" | "c++" => vec![native(Native::Cxx)],
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
    let named = |item: &&T| named.iter().any(|named| named.0.contains(item));
    every.iter().filter(named).copied().collect()
}

impl AppArgs {
    /// The applications, in report order, each once.
    fn apps(&self) -> Vec<AppName> {
        chosen(&self.apps, &AppName::ALL)
    }

    /// The sizes, in report order, each once.
    fn sizes(&self) -> Vec<Size> {
        chosen(&self.size, &Size::ALL)
    }

    /// The kinds in the order given (`all`: ours first, then the baselines), each once.
    fn kinds(&self) -> Vec<SyncKind> {
        let mut kinds: Vec<SyncKind> = self.sync.iter().flat_map(|named| named.0.clone()).collect();
        let mut seen = HashSet::new();
        kinds.retain(|kind| seen.insert(kind.name()));
        kinds
    }

    /// The table at `at`: the sequential run of `workload`, then every kind at every thread
    /// count; with no workload (the NOP program), no sequential run and the ideal after them.
    fn table(&self, workload: Option<Arc<dyn Workload>>, at: Fields) -> TablePlan<Run> {
        let threads = self.threads();
        let sequential = workload.is_some().then_some((1, None));
        let ideal = workload.is_none().then_some(None);
        let kinds: Vec<_> = self.kinds().into_iter().map(Some).chain(ideal).collect();
        let each = (threads.iter()).flat_map(|&t| kinds.iter().map(move |sync| (t, sync.clone())));
        let rows = sequential.into_iter().chain(each).map(|(threads, sync)| {
            let (name, kind) = match &sync {
                None if workload.is_some() => ("sequential".to_owned(), Kind::Reference),
                None => ("ideal".to_owned(), Kind::Ideal),
                Some(sync) if sync.is_ours() => (sync.name(), Kind::Ours),
                Some(sync) => (sync.name(), Kind::Baseline),
            };
            RowPlan {
                contender: (threads, sync, workload.clone()),
                name,
                kind,
                at: at.clone(),
                subtracts: None,
            }
        });
        TablePlan {
            // Progress names the largest thread count; the rows carry their own.
            threads: *threads.last().expect("at least one thread count"),
            rows: rows.collect(),
            rounds: 1,
            dropped: 0,
            floor: false,
        }
    }

    /// The thread counts, ascending: 1 for the speedups, 2 the cores of our machines, 8
    /// oversubscribed there (where barrier choice starts to matter elsewhere) by default.
    fn threads(&self) -> Vec<usize> {
        sorted_unique(self.threads.clone().unwrap_or_else(|| vec![1, 2, 8]))
    }
}

/// A native baseline (`pthread_barrier_t`, C++20 `std::barrier`), built afresh for every run.
#[derive(Debug, Clone, Copy)]
enum Native {
    Pthread,
    Cxx,
}

/// A native barrier's handle as the applications wait on it (the error becomes a message).
struct AppHandle<H>(H);

impl<H: Work> WaitHandle for AppHandle<H> {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        match self.0.iteration(0) {
            Ok(_) => Ok(()),
            Err(Failure::Cause(message) | Failure::Echo(message)) => Err(message),
        }
    }
}

fn boxed<'a, H: Work + 'a>(handles: Vec<H>) -> Handles<'a> {
    let boxed = |handle| Box::new(AppHandle(handle)) as Box<dyn WaitHandle + 'a>;
    handles.into_iter().map(boxed).collect()
}

impl BarrierFactory for Native {
    fn name(&self) -> String {
        match self {
            Native::Pthread => PthreadBarrier::NAME.to_owned(),
            Native::Cxx => CxxBarrier::NAME.to_owned(),
        }
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

    fn parse(line: &str) -> AppArgs {
        AppArgs::try_parse_from(["app"].into_iter().chain(line.split_whitespace())).unwrap()
    }

    fn measured(name: &str, kind: Kind, threads: usize, median: Option<f64>) -> Row {
        let mut row = Row::new(name, kind, threads, Fields::default());
        row.raw_ns = median.into_iter().collect();
        row.finish(0, None);
        row
    }

    // tests/apps.rs checks every parallel row has both speedups; here, their values.
    #[test]
    fn speedups_divide_medians() {
        let (ours, baseline) = (Kind::Ours, Kind::Baseline);
        let mut rows = vec![
            measured("sequential", Kind::Reference, 1, Some(90.0)),
            measured("auto", ours, 1, Some(100.0)),
            measured("auto", ours, 2, Some(50.0)),
            measured(STD_NAME, baseline, 2, Some(100.0)),
            measured("phaser", ours, 2, None),
        ];
        parse("sor").derive(&mut rows);
        let keys = ["speedup_vs_sequential", "speedup_vs_one_thread"];
        let speedups: Vec<_> = rows
            .iter()
            .map(|row| keys.map(|key| row.value(key)))
            .collect();
        assert_eq!(speedups[0], [None, None], "the sequential run has none");
        assert_eq!(speedups[2], [Some(1.8), Some(2.0)]);
        assert_eq!(speedups[3], [Some(0.9), None], "no 1-thread std row");
        assert_eq!(speedups[4], [None, None], "no median");
    }

    #[test]
    fn the_nop_table_resolves_auto_and_ends_with_the_ideal() {
        let args = parse("interp --size small --threads 3 --repeat 1 --nops 50");
        let nop = args.tables().pop().unwrap().rows;
        let [auto, ideal] = [0, nop.len() - 1].map(|i| args.measure(&nop[i], 0, 0));
        let resolved = Algorithm::Auto.resolve(3).name();
        assert_eq!(auto.resolved.as_deref(), Some(resolved));
        assert_eq!((ideal.label(), ideal.kind), ("ideal".into(), Kind::Ideal));
        assert_eq!(ideal.value("barriers_per_nop"), Some(0.0));
    }

    // tests/apps.rs: `all` and the default kinds, in report order.
    #[test]
    fn lists_expand_in_report_order_each_once() {
        assert_eq!(parse("sor").threads(), vec![1, 2, 8]);
        let line =
            "interp,sor,sor --size large,small,large --threads 8,2 --sync mcs,ours,std,baselines";
        let args = parse(line);
        assert_eq!(args.apps(), vec![AppName::Sor, AppName::Interp]);
        assert_eq!(args.sizes(), vec![Size::Small, Size::Large]);
        assert_eq!(args.threads(), vec![2, 8]);
        // mcs once, auto and the six other algorithms, the phaser, three baselines.
        let names: Vec<String> = args.kinds().iter().map(SyncKind::name).collect();
        assert_eq!(names[0], Algorithm::McsTree.name());
        assert_eq!(names.len(), 12);
        let baselines = [
            "std::sync::Barrier",
            "pthread_barrier_t",
            "std::barrier (C++20)",
        ];
        assert_eq!(names[9..], baselines);
        assert_eq!(parse("sor --sync all").kinds().len(), 12);
    }
}
