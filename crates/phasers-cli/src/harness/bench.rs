//! The one driver of a row report: a benchmark says what it measures ([`Benchmark`]), [`run`]
//! does the rest: opens the output files first (a bad path fails before anything is measured),
//! prints the header, measures each table in interleaved rounds ([`super::interleave`]) under a
//! progress bar, records its ratios and marks the rows they find noisy, prints it, then prints
//! the benchmark's summary lines and writes the JSON, CSV and plots.
//!
//! A complete benchmark of two rows, summing with and without `black_box` on every step:
//!
//! ```
//! use std::time::Instant;
//!
//! use phasers_cli::harness::bench::{self, Benchmark};
//! use phasers_cli::harness::floor::Floor;
//! use phasers_cli::harness::header::Header;
//! use phasers_cli::harness::interleave::{RowPlan, TablePlan};
//! use phasers_cli::harness::outputs::OutputArgs;
//! use phasers_cli::harness::provenance::Provenance;
//! use phasers_cli::harness::ratio::{Pick, Ratio};
//! use phasers_cli::harness::render::{Column, Layout};
//! use phasers_cli::harness::result::{Fields, Kind, Row, Settings};
//!
//! struct Sums;
//!
//! impl Benchmark for Sums {
//!     /// Whether every step goes through `black_box`.
//!     type Contender = bool;
//!
//!     fn name(&self) -> String {
//!         "bench sums".into()
//!     }
//!     fn header(&self, provenance: &Provenance, _: Option<&Floor>) -> String {
//!         Header::new(provenance, "the cost of one addition").finish()
//!     }
//!     fn settings(&self) -> Settings {
//!         let contenders = vec!["plain".into(), "boxed".into()];
//!         let own = Fields::default().with("steps", 1000);
//!         Settings { method: "1000 steps".into(), threads: vec![1], contenders, pinned: false,
//!                    debug_build: cfg!(debug_assertions), own }
//!     }
//!     fn tables(&self) -> Vec<TablePlan<bool>> {
//!         let row = |boxed: bool, name: &str, kind| RowPlan { contender: boxed, name: name.into(),
//!             kind, at: Fields::default(), subtracts: None };
//!         let rows = vec![row(false, "plain", Kind::Reference), row(true, "boxed", Kind::Ours)];
//!         vec![TablePlan { threads: 1, rows, rounds: 2, dropped: 0, floor: false }]
//!     }
//!     fn measure(&self, plan: &RowPlan<bool>, threads: usize, _round: usize) -> Row {
//!         let mut row = Row::new(&plan.name, plan.kind, threads, plan.at.clone());
//!         row.iterations_per_sample = 1000;
//!         for _ in 0..3 {
//!             let start = Instant::now();
//!             let mut sum = 0u64;
//!             for step in 0..1000u64 {
//!                 sum += if plan.contender { std::hint::black_box(step) } else { step };
//!             }
//!             std::hint::black_box(sum);
//!             row.raw_ns.push(start.elapsed().as_nanos() as f64 / 1000.0);
//!         }
//!         row
//!     }
//!     fn layout(&self) -> Layout {
//!         let columns = vec![Column::Label, Column::Median, Column::Rounds];
//!         Layout { concise: columns.clone(), verbose: columns, block: None, hide: &[], csv: &[],
//!                  plot: None }
//!     }
//!     fn ratios(&self, _table: &[&Row]) -> Vec<Ratio> {
//!         let (boxed, plain) = (Pick::Named("boxed".into()), Pick::Named("plain".into()));
//!         vec![Ratio { label: "boxed / plain".into(), numerator: boxed, denominator: plain }]
//!     }
//! }
//!
//! let report = bench::run(&Sums, &OutputArgs::default()).unwrap();
//! assert_eq!(report.rows.len(), 2);
//! assert_eq!(report.rows[1].round_medians_ns.len(), 2, "3 samples in each of 2 rounds");
//! assert!(report.floor.is_none());
//! ```

use super::args::command_line;
use super::files;
use super::floor::{self, floor_line, Floor};
use super::footnotes;
use super::interleave::{self, RowPlan, TablePlan};
use super::outputs::OutputArgs;
use super::progress;
use super::provenance::Provenance;
use super::ratio::{self, Pick, Ratio};
use super::render::{self, Column, Layout};
use super::result::{Kind, RatioRecord, Report, Row, Settings};
use super::schedule::Schedule;
use super::table::time;
use super::verbosity;

/// What a benchmark measures and says; [`run`] does everything else.
pub trait Benchmark {
    /// What one row measures (a barrier, a phaser, a team).
    type Contender;

    /// The name in reports, as on the command line: `bench barrier`.
    fn name(&self) -> String;

    /// The lines above the tables; `floor` is the run's, if [`Benchmark::floor_once`] measured it.
    fn header(&self, provenance: &Provenance, floor: Option<&Floor>) -> String;

    /// The settings the report records.
    fn settings(&self) -> Settings;

    /// The tables, in the order run.
    fn tables(&self) -> Vec<TablePlan<Self::Contender>>;

    /// One round of row `plan` at `threads` threads: raw samples, none dropped or subtracted.
    fn measure(&self, plan: &RowPlan<Self::Contender>, threads: usize, round: usize) -> Row;

    /// How round `round`'s floor is sampled, for tables that measure one in every round.
    fn floor_schedule(&self, _round: usize) -> Schedule {
        floor::BRIEFLY
    }

    /// The run's floor, sampled before the header if no table measures it in rounds; `None`: none.
    fn floor_once(&self) -> Option<Schedule> {
        None
    }

    /// The table's columns, blocks, CSV keys and plots.
    fn layout(&self) -> Layout;

    /// The ratios recorded among one table's rows at one thread count (and block, if any).
    fn ratios(&self, _table: &[&Row]) -> Vec<Ratio> {
        Vec::new()
    }

    /// The lines printed after every table: ratio lines, figures, a verdict.
    fn summary(&self, _report: &Report, _verbose: bool) -> Vec<String> {
        Vec::new()
    }

    /// The order round `round` runs the table's rows in, as indices.
    fn order(&self, table: &TablePlan<Self::Contender>, _round: usize) -> Vec<usize> {
        (0..table.rows.len()).collect()
    }

    /// Sets what a table's merged rows yield besides samples (speedups, bandwidths), before ratios.
    fn derive(&self, _table: &mut [Row]) {}

    /// The table as printed, with its ratio `records`, when not the one [`render::table`] of
    /// [`Benchmark::layout`] titled by its thread count.
    fn show(
        &self,
        _table: &TablePlan<Self::Contender>,
        _rows: &[&Row],
        _records: &[RatioRecord],
        _verbose: bool,
    ) -> Option<String> {
        None
    }

    /// The title of `table`, whose measured rows are `rows`, on `cores` cores: `4 threads on 2
    /// cores (oversubscribed), reference loop 509 ns per iteration` names the loop it hides.
    fn title(&self, table: &TablePlan<Self::Contender>, rows: &[&Row], cores: usize) -> String {
        let threads = table.threads;
        let plural = |count: usize| if count == 1 { "" } else { "s" };
        let oversubscribed = match phasers::is_oversubscribed(threads) {
            true => " (oversubscribed)",
            false => "",
        };
        let looped = (rows.iter().find(|row| row.kind == Kind::Loop)).and_then(|row| {
            Some(format!(
                ", {} {} per iteration",
                row.contender,
                time(row.median()?)
            ))
        });
        format!(
            "{threads} thread{} on {cores} core{}{oversubscribed}{}",
            plural(threads),
            plural(cores),
            looped.unwrap_or_default()
        )
    }

    /// Whether the report records `plan`'s row; `false` for one only shown again (a reused floor).
    fn recorded(&self, _plan: &RowPlan<Self::Contender>) -> bool {
        true
    }
}

/// Runs `bench`, printing each table as soon as it is complete, and writes the files `output`
/// names. `Err` only when a file cannot be created or written: the caller names the failed rows
/// (`files::failures`) once it has used the report.
pub fn run<B: Benchmark>(bench: &B, output: &OutputArgs) -> Result<Report, String> {
    let layout = bench.layout();
    let tables = bench.tables();
    let slices = plot_slices(&tables, &layout);
    let outputs = files::open(output, &slices)?;
    let verbose = verbosity::verbose();
    let provenance = Provenance::now(&bench.name(), command_line());
    let in_rounds = tables.iter().any(|table| table.floor);
    let once = (bench.floor_once().filter(|_| !in_rounds)).map(floor::measure);
    let progress = progress::bar(tables.iter().map(TablePlan::tests).sum(), "tests");
    progress.suspend(|| println!("{}", bench.header(&provenance, once.as_ref())));
    let cores = provenance.machine.available_cores;
    let (mut rows, mut records, mut round_trips) = (Vec::new(), Vec::new(), Vec::new());
    for table in &tables {
        let measured = interleave::measure(
            table,
            |round| bench.order(table, round),
            &progress,
            |plan, round| bench.measure(plan, table.threads, round),
            |round| bench.floor_schedule(round),
        );
        let mut measured_rows = measured.rows;
        bench.derive(&mut measured_rows);
        // A ratio is of rows at one thread count and of one block, as the table's `÷` columns
        // are: each such group records its ratios and marks its noisy rows on its own.
        let key = |row: &Row| {
            let block = layout.block.and_then(|key| row.at.get(key)).cloned();
            (row.threads, block)
        };
        let mut groups: Vec<(_, Vec<usize>)> = Vec::new();
        for (index, row) in measured_rows.iter().enumerate() {
            let row_key = key(row);
            match groups.iter_mut().find(|(seen, _)| *seen == row_key) {
                Some((_, members)) => members.push(index),
                None => groups.push((row_key, vec![index])),
            }
        }
        let mut recorded = Vec::new();
        for (_, members) in groups {
            let mut group: Vec<Row> = members.iter().map(|&i| measured_rows[i].clone()).collect();
            let refs: Vec<&Row> = group.iter().collect();
            let found = ratio::records(&refs, &bench.ratios(&refs));
            mark(&mut group, &layout, &found);
            for (&index, row) in members.iter().zip(group) {
                measured_rows[index] = row;
            }
            recorded.extend(found);
        }
        // The run's floor, measured before the header, is a row of each table to divide by.
        let floor_row = once
            .as_ref()
            .map(|floor| files::floor_row(floor, table.threads));
        let refs: Vec<&Row> = floor_row.iter().chain(&measured_rows).collect();
        let text = (bench.show(table, &refs, &recorded, verbose)).unwrap_or_else(|| {
            render::table(&bench.title(table, &refs, cores), &refs, &layout, verbose)
        });
        progress.suspend(|| println!("{text}"));
        let floors = usize::from(table.floor);
        let planned = |index: usize| index.checked_sub(floors).map(|at| &table.rows[at]);
        rows.extend(
            (measured_rows.into_iter().enumerate())
                .filter(|(index, _)| planned(*index).map_or(true, |plan| bench.recorded(plan)))
                .map(|(_, row)| row),
        );
        records.extend(recorded);
        round_trips.extend(measured.round_trips);
    }
    progress.finish_and_clear();
    let floor = match in_rounds {
        true => {
            let floor = interleave::merge_floors(&round_trips);
            let line = floor_line(&floor);
            println!(
                "{}",
                footnotes::wrap("round trip over every round: ", &line)
            );
            Some(floor)
        }
        false => once,
    };
    let report = Report {
        provenance,
        settings: bench.settings(),
        floor,
        rows,
        ratios: records,
    };
    for text in bench.summary(&report, verbose) {
        println!("{text}");
    }
    files::write(outputs, &report, &layout, &slices)?;
    Ok(report)
}

/// Marks the rows a noisy ratio of the table's columns (`÷ref`) or of `records` is about; a
/// record over the row a column divides by is that column's ratio, marked once.
fn mark(rows: &mut [Row], layout: &Layout, records: &[RatioRecord]) {
    let mut over: Vec<(&str, Pick)> = Vec::new();
    for column in layout.concise.iter().chain(&layout.verbose) {
        if let Column::Over { head, by } = column {
            if !over.iter().any(|(seen, _)| seen == head) {
                over.push((head, by.clone()));
            }
        }
    }
    let divisors: Vec<String> = {
        let table: Vec<&Row> = rows.iter().collect();
        let picked = over.iter().filter_map(|(_, by)| ratio::pick(&table, by));
        picked.map(|row| row.contender.clone()).collect()
    };
    let records: Vec<_> = (records.iter())
        .filter(|record| !divisors.contains(&record.record.denominator))
        .cloned()
        .collect();
    ratio::mark_rows(rows, &over, &records);
}

/// The distinct values of the plot's slice keys over every row planned, in order.
fn plot_slices<C>(tables: &[TablePlan<C>], layout: &Layout) -> Vec<Vec<String>> {
    let keys = layout.plot.as_ref().map_or(&[][..], |plot| plot.slices);
    let mut slices: Vec<Vec<String>> = Vec::new();
    for table in tables {
        for plan in &table.rows {
            let row = Row::new(&plan.name, plan.kind, table.threads, plan.at.clone());
            let slice = files::slice(&row, keys);
            // A floor without every key (reduce's bandwidth floor has no arrival spread) is
            // drawn in every slice it matches (`files::write_plot`) and makes none of its own.
            let partial_floor = plan.kind == Kind::Floor && slice.len() < keys.len();
            if !partial_floor && !slices.contains(&slice) {
                slices.push(slice);
            }
        }
    }
    if slices.is_empty() {
        slices.push(Vec::new());
    }
    slices
}
