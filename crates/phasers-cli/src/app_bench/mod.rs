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
use phasers_cli::harness::args::command_line;
use phasers_cli::harness::failures::failures;
use phasers_cli::harness::header::{warn_if_debug_build, Header};
use phasers_cli::harness::outputs::Outputs;
use phasers_cli::harness::progress;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::stats;
use phasers_cli::harness::verbosity;

pub use args::AppArgs;

use args::Config;
use results::{AppReport, AppRow, AppRun, Kind, NopRow, Ratios, RowId};

/// Runs `phasers app`.
pub fn run(args: &AppArgs) -> Result<(), String> {
    let config = Config::from_args(args);
    let outputs = Outputs::create(args.json.as_deref(), None, Vec::new())?;
    verbosity::request(args.verbose);
    let provenance = Provenance::now("app", command_line());
    let cores = provenance.machine.available_cores;
    let what = "whole applications on each barrier kind, every result checked against the \
                sequential run";
    let header = Header::new(&provenance, what).line("method", &config.settings.method);
    println!(
        "{}",
        header.machine(&provenance).floors(&provenance).finish()
    );
    warn_if_debug_build(None);
    let interp = config.apps.contains(&AppName::Interp);
    let bar = progress::bar(
        config.apps.len() * config.sizes.len() + usize::from(interp),
        "runs",
    );
    let started = Instant::now();
    let mut runs = Vec::new();
    for &app in &config.apps {
        for &size in &config.sizes {
            bar.set_message(format!("{app} {size}"));
            let run = measure_app(app, size, &config, cores);
            bar.suspend(|| println!("{}", table::app_table(&run)));
            bar.inc(1);
            runs.push(run);
        }
    }
    let mut nop = Vec::new();
    if interp {
        bar.set_message("interp NOP program");
        nop = measure_nops(&config, cores);
        bar.suspend(|| println!("{}", table::nop_table(&nop)));
    }
    bar.finish_and_clear();
    eprintln!("measured in {:.0} s", started.elapsed().as_secs_f64());
    let failed = failed(&runs, &nop);
    let report = AppReport {
        provenance,
        settings: config.settings,
        runs,
        nop,
    };
    outputs.write(&report, |_| Ok::<(), String>(()), |_, _| Ok(()))?;
    failures(failed)
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
    let (times, sequential_error) = repeated(config.settings.repeat, || workload.sequential());
    let sequential_samples_ns: Vec<f64> =
        times.iter().map(|time| time.as_secs_f64() * 1e9).collect();
    let sequential = stats::summarize(&sequential_samples_ns);
    let mut rows = Vec::new();
    for &threads in &config.settings.threads {
        for sync in &config.kinds {
            let (runs, error) =
                repeated(config.settings.repeat, || workload.parallel(threads, sync));
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
    AppRun {
        app: app.name().to_owned(),
        size: size.name().to_owned(),
        problem: workload.describe(),
        sequential_samples_ns,
        sequential,
        sequential_error,
        ratios: (config.settings.threads.iter())
            .map(|&threads| ratios(&rows, threads))
            .collect(),
        rows,
    }
}

/// `numerator / denominator`, when both are known and the denominator is positive.
fn quotient(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    let denominator = denominator.filter(|denominator| *denominator > 0.0)?;
    Some(numerator? / denominator)
}

/// Sets each row's speedups: the sequential median, and its kind's 1-thread median, over its
/// own median.
fn fill_speedups(rows: &mut [AppRow], sequential: Option<f64>) {
    let one_thread: Vec<(String, Option<f64>)> = rows
        .iter()
        .filter(|row| row.id.threads == 1)
        .map(|row| (row.id.sync.clone(), row.median()))
        .collect();
    for row in rows.iter_mut() {
        let one = one_thread.iter().find(|(sync, _)| *sync == row.id.sync);
        row.speedup_vs_sequential = quotient(sequential, row.median());
        row.speedup_vs_one_thread = quotient(one.and_then(|(_, median)| *median), row.median());
    }
}

/// `auto` against the baselines at `threads`.
fn ratios(rows: &[AppRow], threads: usize) -> Ratios {
    let at = |name: &str| {
        rows.iter()
            .find(|row| row.id.threads == threads && row.id.sync == name)?
            .median()
    };
    let best = rows
        .iter()
        .filter(|row| row.id.threads == threads && row.id.kind == Kind::Baseline)
        .filter_map(|row| Some((row.id.sync.clone(), row.median()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let auto = at(Algorithm::Auto.name());
    Ratios {
        threads,
        auto_over_best_baseline: quotient(auto, best.as_ref().map(|(_, median)| *median)),
        best_baseline: best.map(|(name, _)| name),
        auto_over_std: quotient(auto, at(STD_NAME)),
    }
}

/// The NOP program at every thread count, on every kind and with no barriers.
fn measure_nops(config: &Config, cores: usize) -> Vec<NopRow> {
    let mut rows = Vec::new();
    for &threads in &config.settings.threads {
        for sync in config.kinds.iter().map(Some).chain([None]) {
            let (costs, error) = repeated(config.settings.repeat, || {
                interp::nop_cost(threads, sync, config.settings.nops)
            });
            let ns: Vec<f64> = costs.iter().map(|cost| cost.ns).collect();
            let cycles: Vec<f64> = costs.iter().filter_map(|cost| cost.cycles).collect();
            rows.push(NopRow {
                id: row_id(threads, sync, cores),
                nops: config.settings.nops,
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

/// Every row that failed, named: what, where and why.
fn failed(runs: &[AppRun], nop: &[NopRow]) -> Vec<String> {
    let row = |what: &str, id: &RowId, error: &Option<String>| {
        let error = error.as_ref()?;
        Some(format!(
            "{what} {} with {} threads: {error}",
            id.sync, id.threads
        ))
    };
    let mut failed = Vec::new();
    for run in runs {
        let what = format!("{} {}", run.app, run.size);
        if let Some(error) = &run.sequential_error {
            failed.push(format!("{what} sequential: {error}"));
        }
        failed.extend(run.rows.iter().filter_map(|r| row(&what, &r.id, &r.error)));
    }
    failed.extend(
        nop.iter()
            .filter_map(|r| row("interp NOP", &r.id, &r.error)),
    );
    failed
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

    fn row(threads: usize, sync: SyncKind, median: Option<f64>) -> AppRow {
        AppRow {
            id: row_id(threads, Some(&sync), 8),
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
        let auto = || SyncKind::Ours(Algorithm::Auto);
        let mut rows = vec![
            row(1, auto(), Some(100.0)),
            row(1, SyncKind::Std, Some(120.0)),
            row(2, auto(), Some(50.0)),
            row(2, SyncKind::Std, Some(100.0)),
            row(2, factories::pthread(), Some(80.0)),
            row(2, SyncKind::Phaser, None),
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
        let mut bad = row(2, SyncKind::Std, None);
        bad.error = Some("wrong result: grid[3] is 1.0".to_owned());
        let run = AppRun {
            app: "sor".to_owned(),
            size: "small".to_owned(),
            problem: String::new(),
            sequential_samples_ns: Vec::new(),
            sequential: None,
            sequential_error: Some("not repeatable".to_owned()),
            rows: vec![row(1, SyncKind::Std, Some(1.0)), bad],
            ratios: Vec::new(),
        };
        assert_eq!(
            failures(failed(&[run], &[])).unwrap_err(),
            "2 row(s) failed: sor small sequential: not repeatable; sor small std::sync::Barrier \
             with 2 threads: wrong result: grid[3] is 1.0"
        );
    }

    #[test]
    fn a_row_says_who_it_measures() {
        let auto = row_id(3, Some(&SyncKind::Ours(Algorithm::Auto)), 2);
        assert!(auto.oversubscribed && auto.kind == Kind::Ours);
        assert_eq!(auto.resolved.unwrap(), Algorithm::Auto.resolve(3).name());
        let pthread = row_id(2, Some(&factories::pthread()), 2);
        assert_eq!(
            (pthread.kind, pthread.oversubscribed),
            (Kind::Baseline, false)
        );
        let ideal = row_id(1, None, 2);
        let ideal = (ideal.sync.as_str(), ideal.kind, ideal.resolved);
        assert_eq!(ideal, ("ideal", Kind::Ideal, None));
    }

    #[test]
    fn the_nop_program_runs_checked_on_every_kind_and_the_ideal() {
        let line = "app interp --threads 1,2 --repeat 1 --nops 50".split(' ');
        let nop = measure_nops(&Config::from_args(&AppArgs::parse_from(line)), 2);
        assert_eq!(nop.len(), 2 * 6);
        assert!(failed(&[], &nop).is_empty(), "{nop:?}");
        assert!(nop.iter().all(|row| row.ns_per_nop.is_some()));
        assert_eq!(nop[11].id.sync, "ideal");
        assert_eq!(nop[11].barriers_per_nop, Some(0.0));
    }
}
