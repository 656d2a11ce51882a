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
mod results;
mod table;

use std::time::Instant;

use phasers::Algorithm;
use phasers_apps::interp;
use phasers_apps::sync::{SyncKind, STD_NAME};
use phasers_apps::workload::{AppName, Size};

use crate::floors_record::floors_line;
use crate::outputs;
use crate::results::Provenance;
use crate::stats;

pub use args::AppArgs;

use args::Config;
use results::{AppReport, AppRow, AppRun, AppSettings, Kind, NopRow, Ratios, RowId};

/// Runs `phasers app`.
pub fn run(args: &AppArgs) -> Result<(), String> {
    let config = Config::from_args(args);
    let json = outputs::open(args.json.as_deref())?;
    let provenance = Provenance::now("app", crate::command_line());
    let cores = provenance.machine.available_cores;
    let settings = settings(&config);
    println!(
        "phasers app: whole applications on each barrier kind, every result checked against \
         the sequential run\n\
         method:  {}\n\
         machine: {}\n\
         floors:  {}\n",
        settings.method,
        provenance.machine.summary(),
        floors_line(&provenance)
    );
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: a debug build: nothing is optimized, so these numbers mean little; use \
             `cargo run --release`"
        );
    }
    let started = Instant::now();
    let mut runs = Vec::new();
    for &app in &config.apps {
        for &size in &config.sizes {
            eprintln!(
                "{app} {size} ({:.0} s so far)",
                started.elapsed().as_secs_f64()
            );
            let run = measure_app(app, size, &config, cores);
            println!("{}", table::app_table(&run));
            runs.push(run);
        }
    }
    let mut nop = Vec::new();
    if config.apps.contains(&AppName::Interp) {
        eprintln!(
            "interp NOP program ({:.0} s so far)",
            started.elapsed().as_secs_f64()
        );
        nop = measure_nops(&config, cores);
        println!("{}", table::nop_table(&nop));
    }
    eprintln!("measured in {:.0} s", started.elapsed().as_secs_f64());
    let failures = failures(&runs, &nop);
    let report = AppReport {
        provenance,
        settings,
        runs,
        nop,
    };
    if let Some((path, out)) = json {
        outputs::write_json(out, &path, &report)?;
        eprintln!("results written to {}", path.display());
    }
    failures
}

/// The settings as the report states them.
fn settings(config: &Config) -> AppSettings {
    AppSettings {
        method: format!(
            "each row runs the application {} time(s) on fresh data and a fresh barrier; a run \
             is timed from the first thread's start to the last thread's end, after the threads \
             met on a control barrier (thread start-up and set-up are not timed); every barrier \
             is one virtual call through the same handle type for every kind; the result is \
             checked against the sequential run after the clock stops. Speedups divide medians",
            config.repeat
        ),
        apps: config
            .apps
            .iter()
            .map(|app| app.name().to_owned())
            .collect(),
        sizes: config
            .sizes
            .iter()
            .map(|size| size.name().to_owned())
            .collect(),
        threads: config.threads.clone(),
        sync: config.kinds.iter().map(SyncKind::name).collect(),
        repeat: config.repeat,
        nops: config.nops,
        debug_build: cfg!(debug_assertions),
    }
}

/// Who a row measures: at `threads`, on `sync` (or, with `None`, the ideal with no barriers).
fn row_id(threads: usize, sync: Option<&SyncKind>, cores: usize) -> RowId {
    RowId {
        threads,
        oversubscribed: threads > cores,
        sync: sync.map_or_else(|| "ideal".to_owned(), SyncKind::name),
        kind: match sync {
            None => Kind::Ideal,
            Some(sync) if sync.is_ours() => Kind::Ours,
            Some(_) => Kind::Baseline,
        },
        resolved: match sync {
            Some(SyncKind::Ours(Algorithm::Auto)) => {
                Some(Algorithm::Auto.resolve(threads).name().to_owned())
            }
            _ => None,
        },
    }
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

/// Every row of `app` at `size`.
fn measure_app(app: AppName, size: Size, config: &Config, cores: usize) -> AppRun {
    let workload = app.workload(size);
    let (times, sequential_error) = repeated(config.repeat, || workload.sequential());
    let sequential_samples_ns: Vec<f64> =
        times.iter().map(|time| time.as_secs_f64() * 1e9).collect();
    let sequential = stats::summarize(&sequential_samples_ns);
    let mut rows = Vec::new();
    for &threads in &config.threads {
        for sync in &config.kinds {
            let (runs, error) = repeated(config.repeat, || workload.parallel(threads, sync));
            let samples_ns: Vec<f64> = runs
                .iter()
                .map(|run| run.elapsed.as_secs_f64() * 1e9)
                .collect();
            rows.push(AppRow {
                id: row_id(threads, Some(sync), cores),
                barriers: runs.last().map(|run| run.barriers),
                summary: stats::summarize(&samples_ns).filter(|_| error.is_none()),
                samples_ns,
                speedup_vs_sequential: None,
                speedup_vs_one_thread: None,
                error,
            });
        }
    }
    fill_speedups(&mut rows, sequential.map(|summary| summary.median));
    let ratios = config
        .threads
        .iter()
        .map(|&threads| ratios(&rows, threads))
        .collect();
    AppRun {
        app: app.name().to_owned(),
        size: size.name().to_owned(),
        problem: workload.describe(),
        sequential_samples_ns,
        sequential,
        sequential_error,
        rows,
        ratios,
    }
}

/// Sets each row's speedups: the sequential median, and its kind's 1-thread median, over its
/// own median.
fn fill_speedups(rows: &mut [AppRow], sequential: Option<f64>) {
    let one_thread: Vec<(String, f64)> = rows
        .iter()
        .filter(|row| row.id.threads == 1)
        .filter_map(|row| Some((row.id.sync.clone(), row.summary?.median)))
        .collect();
    for row in rows.iter_mut() {
        let Some(median) = row.summary.map(|summary| summary.median) else {
            continue;
        };
        if median <= 0.0 {
            continue;
        }
        row.speedup_vs_sequential = sequential.map(|sequential| sequential / median);
        row.speedup_vs_one_thread = one_thread
            .iter()
            .find(|(sync, _)| *sync == row.id.sync)
            .map(|(_, one)| one / median);
    }
}

/// `auto` against the baselines at `threads`.
fn ratios(rows: &[AppRow], threads: usize) -> Ratios {
    let median = |row: &AppRow| row.summary.map(|summary| summary.median);
    let at = |name: &str| {
        rows.iter()
            .find(|row| row.id.threads == threads && row.id.sync == name)
            .and_then(median)
    };
    let auto = at(Algorithm::Auto.name());
    let best = rows
        .iter()
        .filter(|row| row.id.threads == threads && row.id.kind == Kind::Baseline)
        .filter_map(|row| Some((row.id.sync.clone(), median(row)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let over = |base: Option<f64>| match (auto, base) {
        (Some(auto), Some(base)) if base > 0.0 => Some(auto / base),
        _ => None,
    };
    Ratios {
        threads,
        auto_over_best_baseline: over(best.as_ref().map(|(_, median)| *median)),
        best_baseline: best.map(|(name, _)| name),
        auto_over_std: over(at(STD_NAME)),
    }
}

/// The NOP program at every thread count, on every kind and with no barriers.
fn measure_nops(config: &Config, cores: usize) -> Vec<NopRow> {
    let mut rows = Vec::new();
    for &threads in &config.threads {
        for sync in config.kinds.iter().map(Some).chain([None]) {
            let (costs, error) = repeated(config.repeat, || {
                interp::nop_cost(threads, sync, config.nops)
            });
            let ns: Vec<f64> = costs.iter().map(|cost| cost.ns).collect();
            let cycles: Vec<f64> = costs.iter().filter_map(|cost| cost.cycles).collect();
            rows.push(NopRow {
                id: row_id(threads, sync, cores),
                nops: config.nops,
                ns_per_nop: stats::summarize(&ns),
                ns_per_nop_samples: ns,
                cycles_per_nop: stats::summarize(&cycles),
                cycles_per_nop_samples: cycles,
                barriers_per_nop: costs.last().map(|cost| cost.barriers_per_nop),
                error,
            });
        }
    }
    rows
}

/// An error naming every row that failed, if any did.
fn failures(runs: &[AppRun], nop: &[NopRow]) -> Result<(), String> {
    let mut failed = Vec::new();
    for run in runs {
        if let Some(error) = &run.sequential_error {
            failed.push(format!("{} {} sequential: {error}", run.app, run.size));
        }
        for row in &run.rows {
            if let Some(error) = &row.error {
                failed.push(format!(
                    "{} {} {} with {} threads: {error}",
                    run.app, run.size, row.id.sync, row.id.threads
                ));
            }
        }
    }
    for row in nop {
        if let Some(error) = &row.error {
            failed.push(format!(
                "interp NOP {} with {} threads: {error}",
                row.id.sync, row.id.threads
            ));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} row(s) failed: {}",
            failed.len(),
            failed.join("; ")
        ))
    }
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

    fn row(threads: usize, sync: &str, kind: Kind, median: Option<f64>) -> AppRow {
        AppRow {
            id: RowId {
                threads,
                oversubscribed: false,
                sync: sync.to_owned(),
                kind,
                resolved: None,
            },
            barriers: Some(10),
            samples_ns: median.into_iter().collect(),
            summary: median.and_then(|median| stats::summarize(&[median])),
            speedup_vs_sequential: None,
            speedup_vs_one_thread: None,
            error: None,
        }
    }

    #[test]
    fn speedups_and_ratios_divide_medians() {
        let mut rows = vec![
            row(1, "auto", Kind::Ours, Some(100.0)),
            row(1, STD_NAME, Kind::Baseline, Some(120.0)),
            row(2, "auto", Kind::Ours, Some(50.0)),
            row(2, STD_NAME, Kind::Baseline, Some(100.0)),
            row(2, "pthread_barrier_t", Kind::Baseline, Some(80.0)),
            row(2, "phaser", Kind::Ours, None),
        ];
        fill_speedups(&mut rows, Some(90.0));
        assert_eq!(rows[2].speedup_vs_one_thread, Some(2.0));
        assert_eq!(rows[2].speedup_vs_sequential, Some(1.8));
        assert_eq!(rows[3].speedup_vs_one_thread, Some(1.2));
        assert_eq!(
            rows[4].speedup_vs_one_thread, None,
            "no 1-thread pthread row"
        );
        assert_eq!(rows[5].speedup_vs_sequential, None);
        let two = ratios(&rows, 2);
        assert_eq!(two.best_baseline.as_deref(), Some("pthread_barrier_t"));
        assert_eq!(two.auto_over_best_baseline, Some(50.0 / 80.0));
        assert_eq!(two.auto_over_std, Some(0.5));
        let none = ratios(&rows, 8);
        assert_eq!((none.best_baseline, none.auto_over_std), (None, None));
    }

    #[test]
    fn a_failed_row_fails_the_command_naming_it() {
        let mut bad = row(2, "auto", Kind::Ours, None);
        bad.error = Some("wrong result: grid[3] is 1.0".to_owned());
        let run = AppRun {
            app: "sor".to_owned(),
            size: "small".to_owned(),
            problem: String::new(),
            sequential_samples_ns: vec![1.0],
            sequential: stats::summarize(&[1.0]),
            sequential_error: None,
            rows: vec![row(1, "auto", Kind::Ours, Some(1.0)), bad],
            ratios: Vec::new(),
        };
        let error = failures(&[run], &[]).unwrap_err();
        assert_eq!(
            error,
            "1 row(s) failed: sor small auto with 2 threads: wrong result: grid[3] is 1.0"
        );
    }

    #[test]
    fn a_tiny_run_measures_every_row_and_checks_it() {
        let args = AppArgs::try_parse_from([
            "app",
            "all",
            "--size",
            "small",
            "--threads",
            "1,2",
            "--sync",
            "auto,std,pthread,cxx,phaser",
            "--repeat",
            "1",
            "--nops",
            "50",
        ])
        .unwrap();
        let config = Config::from_args(&args);
        for app in [AppName::Sor, AppName::Interp] {
            let run = measure_app(app, Size::Small, &config, 2);
            assert_eq!(run.rows.len(), 2 * 5);
            for row in &run.rows {
                assert_eq!(row.error, None, "{row:?}");
                assert!(row.summary.is_some() && row.barriers.is_some(), "{row:?}");
                assert!(row.speedup_vs_one_thread.is_some(), "{row:?}");
            }
            assert!(run.ratios[1].auto_over_best_baseline.is_some());
            assert!(run.rows[0].id.resolved.is_some());
        }
        let nop = measure_nops(&config, 2);
        assert_eq!(nop.len(), 2 * 6);
        assert!(nop
            .iter()
            .all(|row| row.error.is_none() && row.ns_per_nop.is_some()));
        assert_eq!(nop.last().unwrap().id.sync, "ideal");
        assert_eq!(nop.last().unwrap().barriers_per_nop, Some(0.0));
        assert!(failures(&[], &nop).is_ok());
    }
}
