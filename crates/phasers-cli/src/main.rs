//! The `phasers` command: what each barrier costs on this machine, against the hardware floor, a
//! hand-written reference barrier and the barriers users pick today (Rust's `std::sync::Barrier`,
//! `pthread_barrier_t`, C++20 `std::barrier`, OpenMP's `#pragma omp barrier`).
//!
//! `phasers` alone runs the quick suite, `phasers bench barrier` with its defaults, a short
//! phaser comparison, a short array-reduction comparison, a short team-collectives comparison
//! and two small applications at 2 threads (about a minute on two cores); `phasers bench phaser`, `reduction`, `dynamic` and
//! `tree` measure the phasers and accumulators; `phasers bench reduce` the array reductions;
//! `phasers bench collectives` the team collectives; `phasers app` runs whole applications
//! (SOR, LU, StreamCluster, a vector interpreter) on each barrier; `phasers list` names every
//! algorithm and baseline; `phasers tune` measures the machine and writes the profile
//! `Algorithm::Auto` reads.

mod app_bench;
mod bench;

mod collectives_bench;
mod contender;
mod csv_out;
mod dynamic;
mod floors_cmd;
mod native;
mod omp_active;
mod openmp_row;
mod phaser_bench;
mod phaser_config;
mod phaser_row;
mod ratios;

mod reduce_bench;
mod reference;
mod regime_floor;
mod report;
mod results;
mod rounds;
mod sweep;
mod sweep_plan;
mod tree;
mod tune;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use phasers::Algorithm;
use phasers_cli::harness::args::{
    command_line, first_of_each, parse_delay, parse_seconds, sorted_unique,
};
use phasers_cli::harness::row::{Mode, RowPlan};
use phasers_cli::harness::{delay, floors_record, threads};

use crate::contender::{algorithm_description, Contender, FLOOR_DESCRIPTION};
use crate::phaser_bench::Suite;
use crate::ratios::Ratios;
use crate::results::{Group, Report};
use crate::sweep::{Benchmark, Plan, EPCC_DROPPED};
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::schedule::Schedule;

/// What each barrier, phaser, reduction and team collective costs on this machine. With no
/// command, runs the quick suite (`bench barrier` with its defaults, then flat phasers against our
/// best barrier and OpenMP at 2 threads, then array reductions, team collectives and two
/// applications at 2 threads).
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
    /// Whole applications (red-black SOR, LU factorization, StreamCluster, a VCODE-style
    /// interpreter) on each barrier kind, timed and checked against their sequential runs.
    App(app_bench::AppArgs),
    /// List every barrier algorithm and every baseline, with a one-line description.
    List,
    /// Measure every algorithm at several thread counts and write the profile that
    /// `Algorithm::Auto` reads.
    Tune(tune::TuneArgs),
    /// Measure this machine's floors (cache-line round trip, yield hand-off, wake-up), show the
    /// ones the library uses and what they mean for barriers.
    Floors(floors_cmd::FloorsArgs),
    /// Measures the OpenMP row whose job it reads as JSON on stdin and prints it as JSON: what a
    /// benchmark re-runs this program for, under `OMP_WAIT_POLICY=active` (libgomp reads it only
    /// when it loads).
    #[command(name = omp_active::SUBCOMMAND, hide = true)]
    InternalOmpRow,
    /// Measures one OpenMP array-reduction row of `bench reduce`, whose point it reads as JSON
    /// on stdin, and prints it as JSON: the same, for `bench reduce`.
    #[command(name = reduce_bench::OMP_ACTIVE_SUBCOMMAND, hide = true)]
    InternalOmpReduceRow,
}

#[derive(Debug, Subcommand)]
enum BenchTarget {
    /// Every algorithm against the floor, the reference barrier and the standard barriers, at each
    /// thread count.
    Barrier(BarrierArgs),
    /// Phasers (flat, and the seed's tree) against our best barriers and OpenMP's barrier: EPCC's
    /// barrier test, each thread a SigWait registration calling next().
    Phaser(PhaserArgs),
    /// Phasers with a sum accumulator against OpenMP's `omp for reduction`: EPCC's reduction
    /// test; every result is checked.
    Reduction(PhaserArgs),
    /// A team growing from 2 to N threads with a barrier at every size: OpenMP re-forks a region
    /// per size, a phaser registers one more task (the seed's figure 16).
    Dynamic(dynamic::DynamicArgs),
    /// Phasers over tiers x degree at several thread counts, with and without a sum (the seed's
    /// figures 14 and 15).
    Tree(tree::TreeArgs),
    /// Array reductions (`Reduction<f32>`, every algorithm) against OpenMP's
    /// `reduction(+:arr[:n])`, a mutex-merged reduction and the memory-bandwidth floor, over
    /// participants, array sizes and seed 003's arrival spreads.
    Reduce(reduce_bench::ReduceArgs),
    /// Team collectives (barrier, allreduce of one u64, broadcast, alltoall; checked and
    /// unchecked; every sync mode) on the team of all and split_grid's sub-teams, against
    /// std::sync::Barrier, our Barrier, OpenMP and memcpy (seed 004's MPP suite).
    Collectives(collectives_bench::CollectivesArgs),
}

/// Options of `phasers bench barrier`.
#[derive(Debug, Parser)]
#[command(name = "barrier")]
struct BarrierArgs {
    /// Thread counts, comma-separated [default: 1, powers of two, the cores and twice the cores,
    /// up to twice the available cores].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    threads: Option<Vec<usize>>,

    /// Algorithms, comma-separated (see `phasers list`) [default: auto and every algorithm].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    algorithms: Option<Vec<Algorithm>>,

    #[command(flatten)]
    measure: MeasureArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// Options of `phasers bench phaser` and `bench reduction`.
#[derive(Debug, Parser)]
#[command(name = "phaser")]
struct PhaserArgs {
    /// Thread counts, comma-separated [default: as `bench barrier`].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    threads: Option<Vec<usize>>,

    #[command(flatten)]
    measure: MeasureArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// How each test is measured; shared by the sweeps and `tune`.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// How each iteration is timed.
    #[arg(long, value_enum, default_value = "epcc")]
    mode: Mode,

    /// Pin each test's threads to the available CPUs, round robin.
    #[arg(long)]
    pin: bool,

    /// Seconds each test (one barrier at one thread count) aims to take.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_seconds, allow_negative_numbers = true)]
    time: Duration,

    /// Timed samples per test (EPCC's outer repetitions); in EPCC mode one more is taken first
    /// and dropped.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=1000))]
    samples: u16,

    /// Split each test's samples into N rounds, interleaved: round 1 of the floor and of every
    /// row at a thread count, then round 2 of each, and so on, so a machine that drifts between
    /// fast and slow states hits every row alike. Each round runs on a fresh barrier with its own
    /// warm-up (in EPCC mode, its own dropped sample); tables show how much the rounds disagree,
    /// and mark "noisy" the ratios that disagreement could reverse. At most --samples rounds.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=1000))]
    rounds: u16,

    /// EPCC mode: the delay before each barrier, in microseconds (EPCC's default is 0.1).
    #[arg(long, value_name = "MICROSECONDS", default_value = "0.1", value_parser = parse_delay, allow_negative_numbers = true)]
    delay: Duration,

    /// Iterations per sample (EPCC's inner repetitions) [default: sized so the test takes
    /// --time].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    episodes: Option<u64>,

    /// Stop the whole run when a test completes no round for this many seconds: it is hung.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds, allow_negative_numbers = true)]
    hang_seconds: Duration,
}

impl MeasureArgs {
    /// The plan of `benchmark` over `threads` and `contenders` measured this way.
    pub fn plan(
        &self,
        benchmark: Benchmark,
        threads: Vec<usize>,
        contenders: Vec<Contender>,
    ) -> Plan {
        let dropped = match self.mode {
            Mode::Epcc => EPCC_DROPPED,
            Mode::BackToBack => 0,
        };
        let samples = usize::from(self.samples) + dropped;
        let delay = (self.mode == Mode::Epcc).then_some(self.delay);
        Plan {
            benchmark,
            threads: sorted_unique(threads),
            contenders,
            keep: sweep::keep_all,
            ratios: if benchmark == Benchmark::BARRIER {
                Ratios::Barrier
            } else {
                Ratios::None
            },
            row: RowPlan {
                mode: self.mode,
                schedule: Schedule {
                    episodes: self.episodes,
                    samples,
                    target_sample: self.time / samples as u32,
                    // Warm-up, calibration and a slow barrier may overrun the aim; beyond this a
                    // test stops with the samples it has, and says so.
                    row_budget: self.time * 3 + Duration::from_secs(1),
                },
                hang_after: self.hang_seconds,
                pin: self.pin,
                delay: delay.map_or(0, delay::calibrate),
            },
            rounds: usize::from(self.rounds),
            delay,
            time_per_test: self.time,
            print_tables: true,
            command_line: command_line(),
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `command`, or the quick suite.
fn run(command: Option<Command>) -> Result<(), String> {
    // Every benchmark builds the library's objects, which refuse a malformed PHASERS_FLOORS: say
    // so before measuring anything rather than in every row. (The OpenMP child builds none.)
    if !matches!(
        command,
        Some(
            Command::List
                | Command::Floors(_)
                | Command::InternalOmpRow
                | Command::InternalOmpReduceRow
        )
    ) {
        floors_record::check()?;
    }
    match command {
        Some(Command::List) => {
            list();
            Ok(())
        }
        Some(Command::Floors(args)) => floors_cmd::run(&args),
        Some(Command::InternalOmpRow) => omp_active::child(),
        Some(Command::InternalOmpReduceRow) => reduce_bench::omp_active_child(),
        Some(Command::Tune(args)) => tune::run(&args),
        Some(Command::App(args)) => app_bench::run(&args),
        Some(Command::Bench { target }) => match target {
            BenchTarget::Barrier(args) => bench_barrier(args),
            BenchTarget::Phaser(args) => bench_phasers(Suite::Phaser, args),
            BenchTarget::Reduction(args) => bench_phasers(Suite::Reduction, args),
            BenchTarget::Dynamic(args) => dynamic::run(&args),
            BenchTarget::Tree(args) => tree::run(&args),
            BenchTarget::Reduce(args) => reduce_bench::run(&args),
            BenchTarget::Collectives(args) => collectives_bench::run(&args),
        },
        None => quick_suite(),
    }
}

fn list() {
    let cores = phasers::available_cores();
    println!("algorithms (for --algorithms):");
    for algorithm in std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE) {
        println!(
            "  {:<22} {}",
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
    println!("{}", phasers::Profile::status());
    println!();
    println!("baselines (in every report):");
    println!("  {:<22} {FLOOR_DESCRIPTION}", "floor");
    for baseline in Contender::BASELINES {
        println!("  {:<22} {}", baseline.name(), baseline.description());
    }
    let phaser_rows = phaser_bench::PHASER_ROWS.map(Contender::Phaser);
    let openmp = [Contender::OmpReduction, Contender::OmpReductionActive];
    section(
        "phasers and reductions (bench phaser, reduction, dynamic, tree):",
        (openmp.into_iter().chain(phaser_rows))
            .map(|contender| (contender.name(), contender.description()))
            .collect(),
    );
    section(
        "array reductions (bench reduce --algorithms; omp and mutex name the baselines):",
        reduce_bench::list(),
    );
    section(
        "team collectives (bench collectives):",
        collectives_bench::list(),
    );
    section(
        "applications (app; --sync takes auto, the algorithms, phaser, std, pthread, cxx):",
        app_bench::list(),
    );
}

/// One section of `phasers list`: a blank line, its title, and a line per item.
fn section<N: std::fmt::Display>(title: &str, items: Vec<(N, &str)>) {
    println!("\n{title}");
    for (name, description) in items {
        println!("  {name:<35} {description}");
    }
}

/// The quick suite's array-reduction part: 2 threads, 1,000 and 64,000 floats, no spread and
/// the seed's largest, `reduce`, every contender and the floor (a few seconds).
const QUICK_REDUCE: &str = "reduce --threads 2 --sizes 1000,64000 --spread none,high --mode reduce";

/// The quick suite's team-collectives part: 2 members, every part, a one-line broadcast and the
/// issue's 100,000 words, one alltoall block and one sync-mode length, with short rows (a couple
/// of seconds).
const QUICK_COLLECTIVES: &str = "collectives --threads 2 --words 8,100000 --blocks 64 \
    --sync-words 8 --time 0.03 --samples 5 --teams all,row";

/// The quick suite's applications part: SOR and the interpreter at their small size, on 1 and 2
/// threads, our `auto` against `std::sync::Barrier` and `pthread_barrier_t`, with the
/// interpreter's NOP cost (about a second).
const QUICK_APPS: &str =
    "app sor,interp --size small --threads 1,2 --sync auto,std,pthread --repeat 3 --nops 2000";

/// The options of one part of the quick suite, from its command line (`QUICK_REDUCE`, ...).
fn quick<A: Parser>(line: &str) -> Result<A, String> {
    A::try_parse_from(line.split_whitespace())
        .map_err(|error| format!("the default options do not parse: {error}"))
}

/// `phasers` with no command: `bench barrier` with its defaults, then the phaser comparison, the
/// array-reduction comparison, the team-collectives comparison and the applications at 2
/// threads. A failure in one part does not skip the others.
fn quick_suite() -> Result<(), String> {
    let parts: [&dyn Fn() -> Result<(), String>; 5] = [
        &|| quick("barrier").and_then(bench_barrier),
        &|| quick("phaser --threads 2").and_then(|args| bench_phasers(Suite::Quick, args)),
        &|| quick(QUICK_REDUCE).and_then(|args| reduce_bench::run(&args)),
        &|| quick(QUICK_COLLECTIVES).and_then(|args| collectives_bench::run(&args)),
        &|| quick(QUICK_APPS).and_then(|args| app_bench::run(&args)),
    ];
    let mut errors = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            println!();
        }
        errors.extend(part().err());
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

fn bench_barrier(args: BarrierArgs) -> Result<(), String> {
    let threads = args
        .threads
        .clone()
        .unwrap_or_else(|| threads::default_thread_counts(phasers::available_cores()));
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
    run_sweep(&plan, &args.output, |_| Vec::new())
}

/// `bench phaser`, `bench reduction`, and the phaser part of the quick suite.
fn bench_phasers(suite: Suite, args: PhaserArgs) -> Result<(), String> {
    let threads = args
        .threads
        .clone()
        .unwrap_or_else(|| threads::default_thread_counts(phasers::available_cores()));
    let mut plan = args
        .measure
        .plan(suite.benchmark(), threads, suite.contenders());
    plan.ratios = suite.ratios();
    run_sweep(&plan, &args.output, |_| Vec::new())
}

/// Runs `plan`, prints its ratio lines and what `summary` makes of the report after the tables,
/// writes the output files, and fails naming every row that failed. The files are created before
/// the run.
pub fn run_sweep(
    plan: &Plan,
    output: &OutputArgs,
    summary: impl Fn(&Report) -> Vec<String>,
) -> Result<(), String> {
    let outputs = output.open()?;
    let report = sweep::run(plan);
    let ratios = (report.groups.iter())
        .filter_map(|group| plan.ratios.lines(group, report.regime_floor(group.threads)));
    for text in ratios.chain(summary(&report)) {
        println!("{text}");
    }
    outputs.write(
        &report,
        |out| csv_out::write(out, &report),
        |_, path| report::write_plot(path, &report),
    )?;
    failures(&report.groups)
}

/// An error naming every row that failed, if any did.
pub fn failures<'a>(groups: impl IntoIterator<Item = &'a Group>) -> Result<(), String> {
    phasers_cli::harness::failures::failures(groups.into_iter().flat_map(|group| {
        group
            .rows
            .iter()
            .chain(&group.reference_loop)
            .chain(&group.openmp_reference_loop)
            .filter(|row| row.error.is_some())
            .map(move |row| format!("{} with {} threads", row.barrier, group.threads))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::path::Path;

    fn bench_args(extra: &[&str]) -> Result<BarrierArgs, clap::Error> {
        let argv = ["phasers", "bench", "barrier"].iter().chain(extra);
        match Cli::try_parse_from(argv)?.command {
            Some(Command::Bench {
                target: BenchTarget::Barrier(args),
            }) => Ok(args),
            other => panic!("parsed as {other:?}"),
        }
    }

    fn rejection(extra: &[&str]) -> String {
        match bench_args(extra) {
            Ok(args) => panic!("{extra:?} was accepted as {args:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn cli_definition_is_consistent() {
        // Every subcommand's arguments too.
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let args = BarrierArgs::try_parse_from(["barrier"]).unwrap();
        let measure = &args.measure;
        assert_eq!(measure.mode, Mode::Epcc);
        assert_eq!(measure.samples, 20);
        assert_eq!(measure.time, Duration::from_secs(1));
        assert_eq!(measure.delay, Duration::from_nanos(100));
        assert!(!measure.pin);
        let plan = measure.plan(Benchmark::BARRIER, vec![2], vec![Contender::Std]);
        // EPCC: 20 outer repetitions after one dropped, in 5 rounds of 4 after one dropped each.
        assert_eq!(plan.row.schedule.samples, 21);
        assert_eq!(plan.dropped(), 1);
        assert_eq!(plan.rounds(), 5);
        assert_eq!(plan.round(0).schedule.samples, 5);
        assert_eq!(plan.row.schedule.episodes, None);
        assert!(plan.row.delay >= 1);
        assert_eq!(plan.delay, Some(Duration::from_nanos(100)));
    }

    #[test]
    fn back_to_back_has_no_delay_and_drops_nothing() {
        let args =
            bench_args(&["--mode", "back-to-back", "--samples", "7", "--time", "0.5"]).unwrap();
        let plan = args
            .measure
            .plan(Benchmark::BARRIER, vec![2], vec![Contender::Std]);
        assert_eq!(plan.row.mode, Mode::BackToBack);
        assert_eq!(plan.row.schedule.samples, 7);
        assert_eq!(plan.dropped(), 0);
        assert_eq!(plan.row.delay, 0);
        assert_eq!(plan.delay, None);
        assert_eq!(plan.time_per_test, Duration::from_millis(500));
    }

    #[test]
    fn every_option_parses() {
        let args = bench_args(&[
            "--threads",
            "8,1,2,8",
            "--algorithms",
            "mcs,tournament,mcs",
            "--mode",
            "epcc",
            "--pin",
            "--time",
            "0.25",
            "--samples",
            "3",
            "--delay",
            "1.5",
            "--episodes",
            "100",
            "--json",
            "out.json",
            "--csv",
            "out.csv",
            "--plot",
            "out.svg",
        ])
        .unwrap();
        assert_eq!(sorted_unique(args.threads.clone().unwrap()), vec![1, 2, 8]);
        assert_eq!(
            first_of_each(args.algorithms.clone().unwrap()),
            vec![Algorithm::McsTree, Algorithm::Tournament]
        );
        assert!(args.measure.pin);
        assert_eq!(args.measure.delay, Duration::from_nanos(1500));
        assert_eq!(args.measure.episodes, Some(100));
        assert_eq!(args.output.plot.as_deref(), Some(Path::new("out.svg")));
        let plan = args.measure.plan(Benchmark::BARRIER, vec![1], vec![]);
        assert_eq!(plan.row.schedule.samples, 4);
        assert_eq!(plan.row.schedule.episodes, Some(100));
        assert!(plan.row.pin);
    }

    /// Every option reaches its parser (the parsers' own cases are tested with them).
    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        assert!(rejection(&["--threads", "0"]).contains("at least 1 thread"));
        assert!(rejection(&["--threads", "1,,2"]).contains("not a thread count"));
        assert!(rejection(&["--threads", "100000"]).contains("allowed"));
        assert!(rejection(&["--algorithms", "bogus"]).contains("unknown barrier algorithm"));
        assert!(rejection(&["--mode", "fast"]).contains("possible values: epcc, back-to-back"));
        assert!(rejection(&["--time", "-1"]).contains("not a number of seconds"));
        assert!(rejection(&["--delay", "-0.1"]).contains("not a delay"));
        assert!(rejection(&["--samples", "0"]).contains("0"));
        assert!(rejection(&["--rounds", "0"]).contains("0"));
        assert!(rejection(&["--episodes", "0"]).contains("0"));
        assert!(rejection(&["--hang-seconds", "x"]).contains("not a number of seconds"));
        assert!(rejection(&["--frobnicate"]).contains("unexpected argument"));
    }

    #[test]
    fn no_command_list_tune_and_unknown_commands() {
        assert!(Cli::try_parse_from(["phasers"]).unwrap().command.is_none());
        assert!(matches!(
            Cli::try_parse_from(["phasers", "list"]).unwrap().command,
            Some(Command::List)
        ));
        assert!(matches!(
            Cli::try_parse_from(["phasers", "tune", "--time", "0.1"])
                .unwrap()
                .command,
            Some(Command::Tune(_))
        ));
        assert!(Cli::try_parse_from(["phasers", "frobnicate"]).is_err());
    }

    /// Each benchmark's own options are tested in its folder; here: the commands reach them, and
    /// the quick suite's parts parse and stay small.
    #[test]
    fn every_benchmark_parses_and_the_quick_parts_are_small() {
        let command = |line: &str| {
            Cli::try_parse_from(line.split_whitespace())
                .unwrap()
                .command
        };
        assert!(matches!(
            command("phasers bench reduce --threads 2,4"),
            Some(Command::Bench {
                target: BenchTarget::Reduce(_)
            })
        ));
        assert!(matches!(
            command("phasers bench collectives --teams all,column --json c.json --csv c.csv"),
            Some(Command::Bench {
                target: BenchTarget::Collectives(_)
            })
        ));
        assert!(matches!(
            command("phasers app all --sync all"),
            Some(Command::App(_))
        ));
        assert!(Cli::try_parse_from(["phasers", "app"]).is_err());

        let reduce: reduce_bench::ReduceArgs = quick(QUICK_REDUCE).unwrap();
        assert_eq!(reduce.threads, Some(vec![2]));
        assert_eq!(reduce.sizes, Some(vec![1000, 64_000]));
        assert_eq!(reduce.spread.as_ref().map(Vec::len), Some(2));
        assert!(reduce.algorithms.is_none(), "every contender");
        let collectives: collectives_bench::CollectivesArgs = quick(QUICK_COLLECTIVES).unwrap();
        assert_eq!(collectives.threads, Some(vec![2]));
        assert_eq!(collectives.words, Some(vec![8, 100_000]));
        assert_eq!(collectives.time, Duration::from_millis(30));
        assert!(collectives.ops.is_none(), "every part");
        let apps: app_bench::AppArgs = quick(QUICK_APPS).unwrap();
        assert_eq!(apps.threads, Some(vec![1, 2]));
        assert_eq!(apps.apps.len(), 2);
    }
}
