//! The `phasers` command: benchmarks of the `phasers` barriers against the hardware floor, a
//! hand-written reference barrier and `std::sync::Barrier`.
//!
//! `phasers` alone runs `phasers bench barrier` with its defaults (well under a minute on two
//! cores); `phasers list` names every algorithm and baseline. This is the ad-hoc harness:
//! back-to-back episodes, min and median over samples; the full EPCC-style suite grows out of it.

mod bench;
mod contender;
mod floor;
mod machine;
mod reference;
mod report;
mod results;
mod schedule;
mod stats;
mod sweep;
mod threads;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use phasers::Algorithm;

use crate::contender::{algorithm_description, Contender, FLOOR_DESCRIPTION};
use crate::schedule::Schedule;
use crate::sweep::Plan;

/// How long a calibrated sample lasts: long enough that timer resolution and one preemption are
/// small next to it, short enough that the default run stays near a minute.
const TARGET_SAMPLE: Duration = Duration::from_millis(60);

/// Benchmarks of the phasers barriers. With no command, runs `bench barrier` with its defaults.
#[derive(Debug, Parser)]
#[command(name = "phasers", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a benchmark.
    Bench {
        #[command(subcommand)]
        target: BenchTarget,
    },
    /// List every barrier algorithm and every baseline, with a one-line description.
    List,
}

#[derive(Debug, Subcommand)]
enum BenchTarget {
    /// Back-to-back barrier episodes: every algorithm against the floor, the reference barrier and
    /// std::sync::Barrier, at each thread count.
    Barrier(BarrierArgs),
}

/// Options of `phasers bench barrier`.
#[derive(Debug, Parser)]
#[command(name = "barrier")]
struct BarrierArgs {
    /// Thread counts, comma-separated [default: 1, 2, powers of two up to twice the available
    /// cores, 8 and 64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    threads: Option<Vec<usize>>,

    /// Algorithms, comma-separated (see `phasers list`) [default: auto and every algorithm].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    algorithms: Option<Vec<Algorithm>>,

    /// Barrier episodes per sample [default: calibrated per row so a sample lasts about 60 ms].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    episodes: Option<u64>,

    /// Timed samples per row.
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u16).range(1..))]
    samples: u16,

    /// Write every result, with machine information and this command line, to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Stop sampling a row after this many seconds (it keeps at least one sample).
    #[arg(long, value_name = "SECONDS", default_value = "3", value_parser = parse_seconds)]
    row_budget: Duration,

    /// Stop the whole run when a row completes no round for this many seconds: it is hung.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds)]
    hang_seconds: Duration,
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .filter(|duration| !duration.is_zero())
        .ok_or_else(|| format!("{text:?} is not a positive number of seconds"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::List) => {
            list();
            Ok(())
        }
        Some(Command::Bench {
            target: BenchTarget::Barrier(args),
        }) => bench_barrier(args),
        None => BarrierArgs::try_parse_from(["barrier"])
            .map_err(|error| format!("the default options do not parse: {error}"))
            .and_then(bench_barrier),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn list() {
    let cores = phasers::available_cores();
    println!("algorithms (for --algorithms):");
    for algorithm in std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE) {
        println!(
            "  {:<18} {}",
            algorithm.name(),
            algorithm_description(algorithm)
        );
    }
    let resolved: Vec<String> = [1, cores, cores + 1, 64]
        .into_iter()
        .map(|threads| format!("{threads} → {}", Algorithm::Auto.resolve(threads)))
        .collect();
    println!(
        "auto on this machine ({cores} cores), threads → algorithm: {}",
        resolved.join(", ")
    );
    println!();
    println!("baselines (in every report):");
    println!("  {:<18} {FLOOR_DESCRIPTION}", "floor");
    for baseline in Contender::BASELINES {
        println!("  {:<18} {}", baseline.name(), baseline.description());
    }
}

fn bench_barrier(args: BarrierArgs) -> Result<(), String> {
    let plan = plan(&args, command_line());
    let json = args
        .json
        .as_deref()
        .map(|path| {
            report::create_json(path)
                .map_err(|error| format!("cannot create {}: {error}", path.display()))
        })
        .transpose()?;

    let report = sweep::run(&plan);

    if let (Some(out), Some(path)) = (json, &args.json) {
        report::write_json(out, &report)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        eprintln!("results written to {}", path.display());
    }
    let failed: Vec<String> = report
        .groups
        .iter()
        .flat_map(|group| {
            group
                .rows
                .iter()
                .filter(|row| row.error.is_some())
                .map(move |row| format!("{} with {} threads", row.barrier, group.threads))
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} row(s) failed: {}",
            failed.len(),
            failed.join(", ")
        ))
    }
}

/// The run described by the options, with the defaults filled in.
fn plan(args: &BarrierArgs, command_line: Vec<String>) -> Plan {
    let mut threads = args
        .threads
        .clone()
        .unwrap_or_else(|| threads::default_thread_counts(phasers::available_cores()));
    threads.sort_unstable();
    threads.dedup();
    let mut algorithms = Vec::new();
    for algorithm in args.algorithms.clone().unwrap_or_else(|| {
        std::iter::once(Algorithm::Auto)
            .chain(Algorithm::CONCRETE)
            .collect()
    }) {
        if !algorithms.contains(&algorithm) {
            algorithms.push(algorithm);
        }
    }
    Plan {
        threads,
        algorithms,
        schedule: Schedule {
            episodes: args.episodes,
            samples: usize::from(args.samples),
            target_sample: TARGET_SAMPLE,
            row_budget: args.row_budget,
        },
        hang_after: args.hang_seconds,
        command_line,
    }
}

fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn bench_args(extra: &[&str]) -> Result<BarrierArgs, clap::Error> {
        let argv = ["phasers", "bench", "barrier"].iter().chain(extra);
        match Cli::try_parse_from(argv)?.command {
            Some(Command::Bench {
                target: BenchTarget::Barrier(args),
            }) => Ok(args),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        BarrierArgs::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let args = BarrierArgs::try_parse_from(["barrier"]).unwrap();
        assert_eq!(args.samples, 7);
        assert_eq!(args.row_budget, Duration::from_secs(3));
        let plan = plan(&args, Vec::new());
        assert_eq!(plan.algorithms.len(), 1 + Algorithm::CONCRETE.len());
        assert_eq!(plan.algorithms[0], Algorithm::Auto);
        assert_eq!(plan.schedule.episodes, None);
        assert_eq!(
            plan.threads,
            threads::default_thread_counts(phasers::available_cores())
        );
    }

    #[test]
    fn no_command_is_accepted() {
        assert!(Cli::try_parse_from(["phasers"]).unwrap().command.is_none());
    }

    #[test]
    fn thread_and_algorithm_lists() {
        let args = bench_args(&[
            "--threads",
            "8,1,2,8",
            "--algorithms",
            "mcs,tournament,mcs",
            "--samples",
            "3",
        ])
        .unwrap();
        let plan = plan(&args, Vec::new());
        assert_eq!(plan.threads, vec![1, 2, 8]);
        assert_eq!(
            plan.algorithms,
            vec![Algorithm::McsTree, Algorithm::Tournament]
        );
        assert_eq!(plan.schedule.samples, 3);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for bad in [
            &["--threads", "0"][..],
            &["--threads", "1,,2"],
            &["--threads", "two"],
            &["--threads", ""],
            &["--algorithms", "bogus"],
            &["--samples", "0"],
            &["--episodes", "0"],
            &["--row-budget", "-1"],
            &["--row-budget", "nan"],
        ] {
            assert!(bench_args(bad).is_err(), "{bad:?} was accepted");
        }
        let message = bench_args(&["--algorithms", "bogus"])
            .unwrap_err()
            .to_string();
        assert!(message.contains("unknown barrier algorithm"), "{message}");
    }

    #[test]
    fn list_and_unknown_commands() {
        assert!(matches!(
            Cli::try_parse_from(["phasers", "list"]).unwrap().command,
            Some(Command::List)
        ));
        assert!(Cli::try_parse_from(["phasers", "frobnicate"]).is_err());
    }
}
