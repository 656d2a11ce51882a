//! `phasers bench reduce`: array reductions (`Reduction<f32>`, `Op::Sum`) as seed 003 measured
//! them, against OpenMP's `reduction(+:arr[:n])`, a mutex-merged reduction and the memory
//! bandwidth floor, in one run.
//!
//! For every participant count N, collective (`reduce`, `allreduce`), arrival spread and array
//! length, each contender runs iterations of: a barrier (outside the timed part), a stall drawn
//! from the spread, an arrival stamp, the reduction, a return stamp. From the stamps come the
//! seed's two metrics (see [`metrics`]): the time from the last arrival to completion, and the
//! time in the reduction summed over participants. A STREAM-like add over the same bytes gives
//! the bandwidth floor each reduction's bandwidth is held against, and the cache-line round trip
//! heads the report as in every other benchmark. The run ends with the ratios the issue asks for
//! (see [`ratios`]).

mod collective;
mod config;
mod contender;
mod csv_file;
mod data;
mod floor;
mod harness;
pub(crate) mod memory;
mod metrics;
mod mutex;
mod omp_active;
mod openmp;
mod ours;
mod outputs;
mod plots;
mod ratios;
mod results;
mod rng;
mod row;
mod spread;
mod stall;
mod table;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::floor as cache_line;
use crate::floors_record::floors_line;
use crate::report;
use crate::results::Provenance;
use crate::schedule::Schedule;

pub use config::ReduceArgs;
pub use contender::{Contender, FLOOR_DESCRIPTION as BANDWIDTH_FLOOR_DESCRIPTION, FLOOR_NAME};
pub use omp_active::{child as omp_active_child, SUBCOMMAND as OMP_ACTIVE_SUBCOMMAND};

use collective::Collective;
use config::{Config, LARGE_ARRAY, LARGE_MIN_ITERATIONS};
use outputs::Outputs;
use ratios::RatioInput;
use results::{ReduceReport, ReduceRow, ReduceSettings, SpreadSetting};
use row::{Point, WARM_UP};
use spread::Stalls;
use stall::StallPolicy;
use table::TableHead;

/// Runs `phasers bench reduce`.
pub fn run(args: &ReduceArgs) -> Result<(), String> {
    let config = Config::from_args(args)?;
    let outputs = Outputs::open(args, &config)?;
    let provenance = Provenance::now("bench reduce", crate::command_line());
    let settings = settings(&config);
    let floor = cache_line::measure(Schedule {
        episodes: None,
        samples: 20,
        target_sample: Duration::from_millis(5),
        row_budget: Duration::from_secs(2),
    });
    println!(
        "phasers bench reduce: array reductions (f32, Op::Sum) against OpenMP's \
         reduction(+:arr[:n]), a mutex-merged reduction and the memory-bandwidth floor\n\
         method:  {}\n\
         machine: {}\n\
         floor:   {}\n\
         floors:  {}\n\
         units:   per iteration, min and median over the measured iterations; last→done: from the \
         last arrival to completion (the root's return for reduce, the last return for \
         allreduce); total: return minus arrival summed over participants; window: last minus \
         first arrival; GB/s: the bytes an optimal reduction moves over the median time from the \
         first arrival to completion (for the floor, its slowest worker's own time); %floor: that \
         over the bandwidth floor's; ÷omp: median {} over OpenMP's\n",
        settings.method,
        provenance.machine.summary(),
        report::floor_line(&floor),
        floors_line(&provenance),
        config.metric.name(),
    );

    let started = Instant::now();
    let tables = config.threads.len() * config.collectives.len() * config.spreads.len();
    let mut rows: Vec<ReduceRow> = Vec::new();
    // The bandwidth floor of each (N, length, collective), measured the first time it is needed.
    let mut floors: HashMap<(usize, usize, Collective), ReduceRow> = HashMap::new();
    let available = memory::available();
    let mut done = 0;
    for &threads in &config.threads {
        let sizes = config.sizes_for(threads);
        for &collective in &config.collectives {
            for spread in &config.spreads {
                done += 1;
                eprintln!(
                    "[{done}/{tables}] N = {threads}, {}, spread {} ({:.0} s so far)",
                    collective.name(),
                    spread.name(),
                    started.elapsed().as_secs_f64()
                );
                let stalls = Stalls::generate(
                    spread,
                    threads,
                    config.stop.max_iterations + WARM_UP,
                    spread.seed_for(config.seed, threads),
                );
                let first_row = rows.len();
                for &len in &sizes {
                    let receivers = (0..threads).filter(|&r| collective.receives(r)).count();
                    let too_big =
                        memory::too_big(memory::estimate(threads, len, receivers), available);
                    let stop = config.stop_for(len);
                    let floor_row = floors.entry((threads, len, collective)).or_insert_with(|| {
                        let row = match &too_big {
                            Some(why) => row::skipped_floor(threads, len, collective, why),
                            None => row::measure_floor(
                                threads,
                                len,
                                collective,
                                stop,
                                config.hang_after,
                            ),
                        };
                        rows.push(row.clone());
                        row
                    });
                    let floor_row = floor_row.clone();
                    let expected: Arc<[f32]> = match too_big {
                        Some(_) => Arc::from(Vec::new()),
                        None => data::expected(threads, len).into(),
                    };
                    let point = Point {
                        threads,
                        len,
                        collective,
                        spread,
                        stalls: &stalls,
                        expected: &expected,
                        stop,
                        hang_after: config.hang_after,
                    };
                    for &contender in &config.contenders {
                        let mut row = match &too_big {
                            Some(why) => row::skipped(contender, &point, why),
                            None => row::measure(contender, &point),
                        };
                        row::compare_with_floor(&mut row, &floor_row);
                        rows.push(row);
                    }
                }
                let mut shown: Vec<&ReduceRow> = rows[first_row..].iter().collect();
                for &len in &sizes {
                    if let Some(floor_row) = floors.get(&(threads, len, collective)) {
                        if !shown
                            .iter()
                            .any(|row| row.kind == contender::Kind::Floor && row.len == len)
                        {
                            shown.push(floor_row);
                        }
                    }
                }
                let head = TableHead {
                    threads,
                    collective,
                    spread,
                    realized: stalls.realized(),
                    policy: StallPolicy::for_threads(threads),
                    cores: provenance.machine.available_cores,
                    metric: config.metric,
                };
                println!("{}", table::table(&head, &shown));
            }
        }
    }
    eprintln!("measured in {:.0} s", started.elapsed().as_secs_f64());
    println!(
        "{}",
        ratios::summary(&RatioInput {
            rows: &rows,
            threads: &config.threads,
            spreads: &config.spreads,
            collectives: &config.collectives,
            metric: config.metric,
        })
    );
    let failures = failures(&rows);
    let report = ReduceReport {
        provenance,
        settings,
        floor,
        rows,
    };
    outputs.write(&report)?;
    failures
}

/// The settings as the report states them.
fn settings(config: &Config) -> ReduceSettings {
    let stop = config.stop;
    ReduceSettings {
        method: format!(
            "seed 003's: every participant has its own array; each iteration a barrier (not \
             timed), a stall drawn per participant from the spread's normal clipped to [0, max] \
             (busy-waiting on the clock; yielding between looks when participants outnumber \
             cores), an arrival stamp, the call, a return stamp. {WARM_UP} warm-up iteration, \
             whose result is checked against the sequential sum, then at least {} iterations \
             ({} from {} floats) and {} s per row, at most {}, stopping after {} s; the same \
             stalls for every contender at a point (seed {})",
            stop.min_iterations,
            stop.min_iterations.min(LARGE_MIN_ITERATIONS),
            LARGE_ARRAY,
            stop.min_time.as_secs_f64(),
            stop.max_iterations,
            stop.budget.as_secs_f64(),
            config.seed,
        ),
        threads: config.threads.clone(),
        sizes: config.sizes.clone(),
        large_sizes_max_threads: config.large_max_threads,
        spreads: config
            .spreads
            .iter()
            .map(|spread| SpreadSetting {
                name: spread.name(),
                spread: *spread,
            })
            .collect(),
        modes: config.collectives.clone(),
        contenders: config
            .contenders
            .iter()
            .map(|contender| contender.name().to_owned())
            .collect(),
        metric: config.metric,
        warm_up_iterations: WARM_UP,
        min_iterations: stop.min_iterations,
        large_array_min_iterations: stop.min_iterations.min(LARGE_MIN_ITERATIONS),
        large_array_floats: LARGE_ARRAY,
        max_iterations: stop.max_iterations,
        min_time_s: stop.min_time.as_secs_f64(),
        budget_s: stop.budget.as_secs_f64(),
        seed: config.seed,
    }
}

/// An error naming every row that failed, if any did.
fn failures(rows: &[ReduceRow]) -> Result<(), String> {
    let failed: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            let error = row.error.as_ref()?;
            Some(format!(
                "{} with N = {}, {} floats, {}{}: {error}",
                row.name,
                row.threads,
                row.len,
                row.mode.name(),
                row.spread
                    .as_ref()
                    .map(|spread| format!(", spread {spread}"))
                    .unwrap_or_default()
            ))
        })
        .collect();
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

/// Every contender of `bench reduce` with a line about it, for `phasers list`.
pub fn list() -> Vec<(String, &'static str)> {
    Contender::all()
        .into_iter()
        .map(|contender| (contender.name().to_owned(), contender.description()))
        .chain(std::iter::once((
            FLOOR_NAME.to_owned(),
            BANDWIDTH_FLOOR_DESCRIPTION,
        )))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::contender::Kind;
    use crate::reduce_bench::results::tests::row;

    #[test]
    fn failures_name_the_point() {
        assert_eq!(failures(&[]), Ok(()));
        let mut bad = row(
            "auto",
            Kind::Ours,
            4,
            1000,
            Collective::Reduce,
            Some("low"),
            (1.0, 1.0),
        );
        bad.error = Some("boom".into());
        let error = failures(&[bad]).unwrap_err();
        assert_eq!(
            error,
            "1 row(s) failed: auto with N = 4, 1000 floats, reduce, spread low: boom"
        );
    }

    #[test]
    fn the_list_names_every_contender_and_the_floor() {
        let names: Vec<String> = list().into_iter().map(|(name, _)| name).collect();
        assert_eq!(names.len(), 9);
        assert!(names.contains(&"dynamic-pairs".to_owned()));
        assert!(names.contains(&"omp reduction(+:arr[:n])".to_owned()));
        assert!(names.contains(&"omp reduction(+:arr[:n]) (active)".to_owned()));
        assert!(names.contains(&"bandwidth floor".to_owned()));
    }
}
