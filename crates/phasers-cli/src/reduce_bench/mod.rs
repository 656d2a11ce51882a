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

mod bandwidth_floor;
mod config;
mod contender;
mod metrics;
mod mutex;
mod omp_active;
mod openmp;
mod ours;
mod outputs;
mod ratios;
mod results;
mod row;
mod table;
mod workload;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use phasers_cli::harness::args::command_line;
use phasers_cli::harness::failures::failed_rows;
use phasers_cli::harness::floor as cache_line;
use phasers_cli::harness::header::Header;
use phasers_cli::harness::memory;
use phasers_cli::harness::progress;
use phasers_cli::harness::provenance::Provenance;

pub use config::ReduceArgs;
pub use omp_active::KIND as OMP_ACTIVE_KIND;

use config::{ReduceSettings, WARM_UP};
use contender::{Contender, Kind, FLOOR_DESCRIPTION, FLOOR_NAME};
use phasers_cli::harness::stalls::{Spread, StallPolicy, Stalls};
use ratios::RatioInput;
use results::{ReduceReport, ReduceRow};
use row::Point;
use table::TableHead;
use workload::Collective;

/// Runs `phasers bench reduce`.
pub fn run(args: &ReduceArgs) -> Result<(), String> {
    let settings = ReduceSettings::from_args(args)?;
    let files = outputs::open(args, &settings)?;
    let provenance = Provenance::now("bench reduce", command_line());
    let floor = cache_line::measure(cache_line::BRIEFLY);
    let units = format!(
        "per iteration, min and median over the measured iterations; last→done: from the last \
         arrival to completion (the root's return for reduce, the last return for allreduce); \
         total: return minus arrival summed over participants; window: last minus first arrival; \
         GB/s: the bytes an optimal reduction moves over the median time from the first arrival \
         to completion (for the floor, its slowest worker's own time); %floor: that over the \
         bandwidth floor's; ÷omp: median {} over OpenMP's",
        settings.metric.name()
    );
    let what = "array reductions (f32, Op::Sum) against OpenMP's reduction(+:arr[:n]), a \
                mutex-merged reduction and the memory-bandwidth floor";
    let header =
        Header::with_floors(&provenance, what, &settings.method, &floor).line("units", units);
    println!("{}", header.finish());
    let started = Instant::now();
    let tables = settings.threads.len() * settings.modes.len() * settings.spreads.len();
    let mut rows: Vec<ReduceRow> = Vec::new();
    // The bandwidth floor of each (N, length, collective), measured the first time it is needed.
    let mut floors: HashMap<(usize, usize, Collective), ReduceRow> = HashMap::new();
    let bar = progress::bar(tables, "tables");
    for &threads in &settings.threads {
        let sizes = settings.sizes_for(threads);
        for &collective in &settings.modes {
            for spread in settings.spreads.iter().map(|setting| &setting.spread) {
                let (mode, name) = (collective.name(), spread.name());
                bar.set_message(format!("N = {threads}, {mode}, spread {name}"));
                let iterations = settings.max_iterations + WARM_UP;
                let seed = spread.seed_for(settings.seed, threads);
                let stalls = Arc::new(Stalls::generate(spread, threads, iterations, seed));
                let first = rows.len();
                for &len in &sizes {
                    let point = (threads, len, collective, spread, &stalls);
                    measure_point(&settings, point, &mut floors, &mut rows);
                }
                let floors_here = sizes
                    .iter()
                    .filter_map(|&len| floors.get(&(threads, len, collective)));
                let here = rows[first..].iter().filter(|row| row.kind != Kind::Floor);
                let shown: Vec<&ReduceRow> = floors_here.chain(here).collect();
                let head = TableHead {
                    threads,
                    collective,
                    spread,
                    realized: stalls.realized(),
                    policy: StallPolicy::for_threads(threads),
                    cores: provenance.machine.available_cores,
                    metric: settings.metric,
                };
                let table = table::table(&head, &shown);
                bar.suspend(|| println!("{table}"));
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    eprintln!("measured in {:.0} s", started.elapsed().as_secs_f64());
    let ratios = RatioInput {
        rows: &rows,
        settings: &settings,
    };
    println!("{}", ratios::summary(&ratios));
    let failures = failures(&rows);
    let report = ReduceReport {
        provenance,
        settings,
        floor,
        rows,
    };
    outputs::write(files, &report)?;
    failures
}

/// Measures every contender at one point (N, length, collective, spread and its stalls), and the
/// point's bandwidth floor the first time (N, length, collective) comes up; a point that would not
/// fit in memory gets rows that say so.
fn measure_point(
    settings: &ReduceSettings,
    (threads, len, collective, spread, stalls): (usize, usize, Collective, &Spread, &Arc<Stalls>),
    floors: &mut HashMap<(usize, usize, Collective), ReduceRow>,
    rows: &mut Vec<ReduceRow>,
) {
    let needed = workload::memory_needed(collective, threads, len);
    let too_big = memory::too_big(needed, memory::available());
    let expected: Arc<[f32]> = match too_big {
        Some(_) => Arc::from(Vec::new()),
        None => workload::expected(threads, len).into(),
    };
    let point = Point {
        threads,
        len,
        collective,
        spread,
        stalls,
        expected: &expected,
        stop: settings.stop_for(len),
        hang_after: settings.hang_after,
    };
    let floor = floors.entry((threads, len, collective)).or_insert_with(|| {
        let row = match &too_big {
            Some(why) => row::skipped_floor(&point, Some(why)),
            None => row::measure_floor(&point),
        };
        rows.push(row.clone());
        row
    });
    for &contender in &settings.contenders {
        let mut row = match &too_big {
            Some(why) => ReduceRow::skipped(contender, &point, Some(why)),
            None => row::measure(contender, &point),
        };
        row::compare_with_floor(&mut row, floor);
        rows.push(row);
    }
}

/// The child's side of the `OMP_WAIT_POLICY=active` row (see `omp_active`): measures the
/// OpenMP row of the point it is handed, in this process, which libgomp loaded under that policy.
pub fn omp_active_child() -> Result<(), String> {
    omp_active::child(|point| row::measure(Contender::OpenMp, point))
}

/// An error naming every row that failed, with its point, if any did.
fn failures(rows: &[ReduceRow]) -> Result<(), String> {
    failed_rows(rows, |row| {
        let spread = row
            .spread
            .as_ref()
            .map(|spread| format!(", spread {spread}"));
        Some(format!(
            "{} with N = {}, {} floats, {}{}: {}",
            row.name,
            row.threads,
            row.len,
            row.mode.name(),
            spread.unwrap_or_default(),
            row.error.as_ref()?
        ))
    })
}

/// Every contender of `bench reduce` with a line about it, for `phasers list`.
pub fn list() -> Vec<(String, &'static str)> {
    let contenders = Contender::all().into_iter();
    let described =
        contenders.map(|contender| (contender.name().to_owned(), contender.description()));
    described
        .chain([(FLOOR_NAME.to_owned(), FLOOR_DESCRIPTION)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce_bench::results::tests::row;

    #[test]
    fn failures_name_the_point() {
        assert_eq!(failures(&[]), Ok(()));
        let mut bad = row("auto", 4, 1000, Collective::Reduce, Some("low"), (1.0, 1.0));
        bad.error = Some("boom".into());
        let error = failures(&[bad]).unwrap_err();
        let expected = "1 row(s) failed: auto with N = 4, 1000 floats, reduce, spread low: boom";
        assert_eq!(error, expected);
        assert_eq!(list().len(), 9);
    }
}
