//! `phasers bench barrier`: every algorithm against the floor, the reference barrier and the
//! standard barriers, at each thread count; with `--write-profile`, also the tuning profile
//! `Algorithm::Auto` reads (what `phasers bench barrier --write-profile` did before it became this flag).

use std::path::PathBuf;

use clap::Parser;
use phasers::Algorithm;
use phasers_cli::harness::args::first_of_each;
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::threads;

use crate::contender::Contender;
use crate::measure_args::MeasureArgs;
use crate::profile_writer;
use crate::results::Report;
use crate::sweep::Benchmark;
use crate::sweep_command;
use crate::verdict;

/// Options of `phasers bench barrier`.
#[derive(Debug, Parser)]
#[command(name = "barrier")]
pub struct BarrierArgs {
    /// Thread counts, comma-separated [default: 1, powers of two, the cores and twice the cores,
    /// up to twice the available cores; with --write-profile, also 4x the cores and 64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    pub threads: Option<Vec<usize>>,

    /// Algorithms, comma-separated (see `phasers list`) [default: auto and every algorithm].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub algorithms: Option<Vec<Algorithm>>,

    /// Then keep the fastest algorithm at each thread count and write the tuning profile
    /// `Algorithm::Auto` reads, with this machine's floors, to FILE [default: where Auto looks
    /// when PHASERS_PROFILE is unset: $XDG_CONFIG_HOME/phasers/profile.json, else
    /// ~/.config/phasers/profile.json].
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub write_profile: Option<Option<PathBuf>>,

    #[command(flatten)]
    pub measure: MeasureArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `phasers bench barrier`, and ends with the verdict on its report.
pub fn run(args: BarrierArgs) -> Result<(), String> {
    let (result, report) = run_and_keep(args);
    if let Some(report) = report {
        println!("\n{}", verdict::verdict(&report).join("\n"));
    }
    result
}

/// Runs `phasers bench barrier` and hands back its report too, when the run got that far (the
/// quick suite's verdict reads it).
pub fn run_and_keep(args: BarrierArgs) -> (Result<(), String>, Option<Report>) {
    let profile = match profile_path(&args) {
        Ok(profile) => profile,
        Err(error) => return (Err(error), None),
    };
    if let Err(error) = args.measure.check() {
        return (Err(error), None);
    }
    let cores = phasers::available_cores();
    let threads = args.threads.clone().unwrap_or_else(|| match profile {
        Some(_) => threads::tune_thread_counts(cores),
        None => threads::default_thread_counts(cores),
    });
    let algorithms = args.algorithms.clone().unwrap_or_else(|| {
        std::iter::once(Algorithm::Auto)
            .chain(Algorithm::CONCRETE)
            .collect()
    });
    let contenders = Contender::BASELINES
        .into_iter()
        .chain(
            first_of_each(algorithms)
                .into_iter()
                .map(Contender::Phasers),
        )
        .collect();
    let plan = args.measure.plan(Benchmark::BARRIER, threads, contenders);
    let report = match sweep_command::run(&plan, &args.output, |_| Vec::new()) {
        Ok(report) => report,
        Err(error) => return (Err(error), None),
    };
    // The profile is written even when a baseline failed: it holds only our algorithms.
    let written = profile.map_or(Ok(()), |path| profile_writer::write(&report, &path));
    let result = match (written, sweep_command::failures(&report.groups)) {
        (Err(profile), Err(rows)) => Err(format!("{profile}; {rows}")),
        (written, rows) => written.and(rows),
    };
    (result, Some(report))
}

/// Where `--write-profile` writes, if it was given; resolved before measuring, so a machine with
/// no default path fails at once.
fn profile_path(args: &BarrierArgs) -> Result<Option<PathBuf>, String> {
    match &args.write_profile {
        None => Ok(None),
        Some(None) => profile_writer::default_path().map(Some),
        Some(Some(path)) => Ok(Some(path.clone())),
    }
}
