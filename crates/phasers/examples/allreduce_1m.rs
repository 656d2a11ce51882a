//! Times an allreduce of 1M (2^20) doubles across 2 threads: the Rust side of the comparison with
//! the C and Fortran programs of `crates/phasers-capi/examples` (`scripts/compare-allreduce-1m.sh`
//! runs all of them in interleaved rounds).
//!
//! ```sh
//! cargo run --release -p phasers --example allreduce_1m -- [iterations] [reduction|team]
//! ```
//!
//! `reduction` (the default) runs `Reducer::allreduce` (`ReduceAlgorithm::Auto`), `team` runs
//! `Member::allreduce`. As in the C program, each thread makes one call to warm up, then
//! `iterations` (default 100) timed calls; the program prints rank 0's time per call in
//! nanoseconds and checks the sums.

use std::process::ExitCode;
use std::time::Instant;

use phasers::{Op, Reduction, Team};

const THREADS: usize = 2;
const COUNT: usize = 1 << 20;

/// One rank's input: the C program's values, so the three programs reduce the same numbers.
fn input_of(rank: usize) -> Vec<f64> {
    (0..COUNT)
        .map(|i| (rank + 1) as f64 + (i % 7) as f64)
        .collect()
}

/// Every element holds the sum over the ranks: 1 + 2 + 2 * (i % 7).
fn check(rank: usize, output: &[f64]) -> Result<(), String> {
    match (0..COUNT).find(|&i| output[i] != 3.0 + 2.0 * (i % 7) as f64) {
        None => Ok(()),
        Some(i) => Err(format!("rank {rank}: element {i} is {}", output[i])),
    }
}

/// Runs `call` once to warm up and `iterations` times timed; returns ns per call and the output.
fn timed(
    iterations: u32,
    mut call: impl FnMut(&[f64], &mut [f64]) -> phasers::Result<()>,
    rank: usize,
) -> Result<f64, String> {
    let input = input_of(rank);
    let mut output = vec![0.0; COUNT];
    call(&input, &mut output).map_err(|e| e.to_string())?;
    let start = Instant::now();
    for _ in 0..iterations {
        call(&input, &mut output).map_err(|e| e.to_string())?;
    }
    let per_call = start.elapsed().as_nanos() as f64 / f64::from(iterations);
    check(rank, &output)?;
    Ok(per_call)
}

fn run(iterations: u32, use_team: bool) -> Result<f64, String> {
    let results: Vec<Result<f64, String>> = if use_team {
        let team = Team::new(THREADS).map_err(|e| e.to_string())?;
        std::thread::scope(|s| {
            let handles: Vec<_> = team
                .participants()
                .into_iter()
                .map(|mut member| {
                    s.spawn(move || {
                        let rank = member.rank();
                        timed(iterations, |i, o| member.allreduce(i, o, Op::Sum), rank)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    } else {
        let group = Reduction::<f64>::new(THREADS, Op::Sum).map_err(|e| e.to_string())?;
        std::thread::scope(|s| {
            let handles: Vec<_> = group
                .participants()
                .into_iter()
                .map(|mut reducer| {
                    s.spawn(move || {
                        let rank = reducer.rank();
                        timed(iterations, |i, o| reducer.allreduce(i, o).map(|_| ()), rank)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    };
    let mut per_call = Vec::new();
    for result in results {
        per_call.push(result?);
    }
    Ok(per_call[0])
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let iterations = match args.get(1).map(|a| a.parse::<u32>()) {
        None => 100,
        Some(Ok(n)) if n >= 1 => n,
        _ => {
            eprintln!("usage: {} [iterations >= 1] [reduction|team]", args[0]);
            return ExitCode::from(2);
        }
    };
    let use_team = args.get(2).is_some_and(|a| a == "team");
    match run(iterations, use_team) {
        Ok(ns) => {
            let what = if use_team { "team" } else { "reduction" };
            println!(
                "{what} allreduce of {COUNT} doubles, {THREADS} threads, {iterations} calls: \
                 {ns:.0} ns per call"
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}
