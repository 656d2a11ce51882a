//! The `phasers` command: what each barrier costs on this machine, against the hardware floor, a
//! hand-written reference barrier and the barriers users pick today (Rust's `std::sync::Barrier`,
//! `pthread_barrier_t`, C++20 `std::barrier`, OpenMP's `#pragma omp barrier`).
//!
//! `phasers` alone runs the quick suite, `phasers bench barrier` with its defaults, a short
//! phaser comparison, a short array-reduction comparison, a short team-collectives comparison
//! and two small applications at 2 threads (about a minute on two cores); `phasers bench phaser`
//! (three figures) and `dynamic` measure the phasers and accumulators; `phasers bench reduce` the
//! array reductions; `phasers bench collectives` the team collectives; `phasers app` runs whole
//! applications (SOR, LU, StreamCluster, a vector interpreter) on each barrier; `phasers list`
//! names every algorithm and baseline; `phasers bench barrier --write-profile` measures the
//! machine and writes the profile `Algorithm::Auto` reads.

mod aliases;
mod app_bench;
mod bench;
mod benches;
mod collectives_bench;
mod contender;
mod dynamic;
mod floors_cmd;
mod native;
mod omp_active;
mod openmp_row;
mod phaser_config;
mod phaser_row;
mod reference;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use phasers::Algorithm;
use phasers_cli::harness::child;

use crate::benches::barrier::{self, BarrierArgs};
use crate::benches::phaser::{self, Figure, PhaserArgs, Suite};
use crate::contender::{Contender, FLOOR_DESCRIPTION};

/// What each barrier, phaser, reduction and team collective costs on this machine. With no
/// command, runs the quick suite (`bench barrier` with its defaults, then flat phasers against our
/// best barrier and OpenMP at 2 threads, then array reductions, team collectives and two
/// applications at 2 threads).
#[derive(Debug, Parser)]
#[command(name = "phasers", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// The quick suite: print every column and note in full (lines wider than 100 columns).
    #[arg(long)]
    verbose: bool,
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
    /// Now `bench barrier --write-profile`.
    #[command(hide = true)]
    Tune(aliases::TuneArgs),
    /// Measure this machine's floors (cache-line round trip, yield hand-off, wake-up), show the
    /// ones the library uses and what they mean for barriers.
    Floors(floors_cmd::FloorsArgs),
    /// Does one job of KIND, which it reads as JSON on stdin, and prints the result as JSON: what
    /// a benchmark re-runs this program for, such as an OpenMP row under
    /// `OMP_WAIT_POLICY=active` (libgomp reads it only when it loads).
    #[command(name = child::SUBCOMMAND, hide = true)]
    InternalChild {
        /// The kind of job.
        kind: String,
    },
}

#[derive(Debug, Subcommand)]
enum BenchTarget {
    /// Every algorithm against the floor, the reference barrier and the standard barriers, at each
    /// thread count; --write-profile also writes the profile `Algorithm::Auto` reads.
    Barrier(BarrierArgs),
    /// Phasers, each thread a SigWait registration calling next(), in seed 000's figures:
    /// EPCC's barrier test against our best barriers and OpenMP's barrier, its reduction test
    /// (a sum accumulator, checked, against `omp for reduction`), and tiers x degree.
    Phaser(PhaserArgs),
    /// Now `bench phaser --figure reduction`.
    #[command(hide = true)]
    Reduction(PhaserArgs),
    /// A team growing from 2 to N threads with a barrier at every size: OpenMP re-forks a region
    /// per size, a phaser registers one more task (the seed's figure 16).
    Dynamic(dynamic::DynamicArgs),
    /// Now `bench phaser --figure tree`.
    #[command(hide = true)]
    Tree(PhaserArgs),
    /// Array reductions (`Reduction<f32>`, every algorithm) against OpenMP's
    /// `reduction(+:arr[:n])`, a mutex-merged reduction and the memory-bandwidth floor, over
    /// participants, array sizes and seed 003's arrival spreads.
    Reduce(benches::reduce::ReduceArgs),
    /// Team collectives (barrier, allreduce of one u64, broadcast, alltoall; checked and
    /// unchecked; every sync mode) on the team of all and split_grid's sub-teams, against
    /// std::sync::Barrier, our Barrier, OpenMP and memcpy (seed 004's MPP suite).
    Collectives(collectives_bench::CollectivesArgs),
}

fn main() -> ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|error| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if let Some(hint) = option_without_command(&error, &args) {
            // Printed the way clap prints (colours only on a terminal), the hint after it.
            let _ = error.print();
            eprintln!("{hint}");
            std::process::exit(error.exit_code());
        }
        error.exit()
    });
    phasers_cli::harness::verbosity::request(cli.verbose);
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A hint for `phasers --threads 4`: options of a benchmark given with no command. `None` for
/// any other mistake, which clap explains well enough.
fn option_without_command(error: &clap::Error, args: &[String]) -> Option<String> {
    let starts_with_option = args.first().is_some_and(|first| first.starts_with("--"));
    if error.kind() != clap::error::ErrorKind::UnknownArgument || !starts_with_option {
        return None;
    }
    Some(format!(
        "\nhint: benchmark options go after a command, such as `phasers bench barrier {}` \
         (`phasers bench --help` lists the benchmarks)",
        args.join(" ")
    ))
}

/// Runs `command`, or the quick suite.
fn run(command: Option<Command>) -> Result<(), String> {
    // Every benchmark builds the library's objects, which refuse a malformed PHASERS_* variable:
    // say so before measuring anything rather than in every row, minutes later. (`floors`
    // explains a bad PHASERS_FLOORS itself; the OpenMP child builds nothing.)
    if !matches!(
        command,
        Some(Command::List | Command::Floors(_) | Command::InternalChild { .. })
    ) {
        phasers::check_environment()
            .map_err(|error| format!("{error} (checked before measuring anything)"))?;
    }
    match command {
        Some(Command::List) => {
            list();
            Ok(())
        }
        Some(Command::Floors(args)) => floors_cmd::run(&args),
        Some(Command::InternalChild { kind }) => match kind.as_str() {
            omp_active::KIND => omp_active::child(),
            benches::reduce::OMP_ACTIVE_KIND => benches::reduce::omp_active_child(),
            _ => Err(format!(
                "`phasers {} {kind}`: no such job (this hidden command is only for the benchmarks' \
                 child processes)",
                child::SUBCOMMAND
            )),
        },
        Some(Command::Tune(args)) => barrier::run(aliases::tune(args)),
        Some(Command::App(args)) => app_bench::run(&args),
        Some(Command::Bench { target }) => match target {
            BenchTarget::Barrier(args) => barrier::run(args),
            BenchTarget::Phaser(args) => phaser::run(&args),
            BenchTarget::Reduction(args) => phaser::run(&aliases::phaser_figure(
                "bench reduction",
                Figure::Reduction,
                args,
            )?),
            BenchTarget::Dynamic(args) => dynamic::run(&args),
            BenchTarget::Tree(args) => {
                phaser::run(&aliases::phaser_figure("bench tree", Figure::Tree, args)?)
            }
            BenchTarget::Reduce(args) => benches::reduce::run(&args),
            BenchTarget::Collectives(args) => collectives_bench::run(&args),
        },
        None => quick_suite(),
    }
}

fn list() {
    let cores = phasers::available_cores();
    println!("algorithms (for --algorithms):");
    for algorithm in std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE) {
        println!("  {:<22} {}", algorithm.name(), algorithm.description());
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
    let phaser_rows = phaser::PHASER_ROWS.map(Contender::Phaser);
    let openmp = [Contender::OmpReduction, Contender::OmpReductionActive];
    section(
        "phasers and reductions (bench phaser, bench dynamic):",
        (openmp.into_iter().chain(phaser_rows))
            .map(|contender| (contender.name(), contender.description()))
            .collect(),
    );
    section(
        "array reductions (bench reduce --algorithms; omp and mutex name the baselines):",
        benches::reduce::list(),
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
    // The barrier part keeps its report for the verdict the suite ends with.
    let barrier_report = std::cell::RefCell::new(None);
    let barrier = || -> Result<(), String> {
        let (result, report) = barrier::run_and_keep(quick("barrier")?);
        barrier_report.replace(report);
        result
    };
    let parts: [&dyn Fn() -> Result<(), String>; 5] = [
        &barrier,
        &|| quick("phaser --threads 2").and_then(|args| phaser::run_suite(Suite::Quick, &args)),
        &|| quick(QUICK_REDUCE).and_then(|args| benches::reduce::run(&args)),
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
    if let Some(report) = barrier_report.take() {
        println!("\n{}", barrier::verdict(&report).join("\n"));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use phasers_cli::harness::args::{first_of_each, sorted_unique};
    use phasers_cli::harness::row::Mode;
    use std::path::Path;
    use std::time::Duration;

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
        let plan = measure.sweep("bench barrier", vec![2], vec![Contender::Std]);
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
            .sweep("bench barrier", vec![2], vec![Contender::Std]);
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
        let plan = args.measure.sweep("bench barrier", vec![1], vec![]);
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
    fn no_command_list_and_unknown_commands() {
        assert!(Cli::try_parse_from(["phasers"]).unwrap().command.is_none());
        assert!(matches!(
            Cli::try_parse_from(["phasers", "list"]).unwrap().command,
            Some(Command::List)
        ));
        assert!(Cli::try_parse_from(["phasers", "frobnicate"]).is_err());
    }

    #[test]
    fn rounds_are_at_most_the_samples() {
        let many = bench_args(&["--rounds", "10", "--samples", "5"]).unwrap();
        let error = many.measure.check().unwrap_err();
        assert!(
            error.contains("--rounds 10 is more than --samples 5"),
            "{error}"
        );
        // Not asked for: as many rounds as samples allow, without a word.
        let few = bench_args(&["--samples", "2"]).unwrap();
        assert_eq!(few.measure.check(), Ok(()));
        let plan = few
            .measure
            .sweep("bench barrier", vec![2], vec![Contender::Std]);
        assert_eq!(plan.rounds(), 2);
    }

    #[test]
    fn an_option_without_a_command_gets_a_hint() {
        let args = ["--threads".to_owned(), "4".to_owned()];
        let error = Cli::try_parse_from(["phasers", "--threads", "4"]).unwrap_err();
        let hint = option_without_command(&error, &args).unwrap();
        assert!(
            hint.contains("`phasers bench barrier --threads 4`"),
            "{hint}"
        );
        let error = Cli::try_parse_from(["phasers", "frobnicate"]).unwrap_err();
        assert_eq!(
            option_without_command(&error, &["frobnicate".to_owned()]),
            None
        );
    }

    #[test]
    fn write_profile_takes_a_file_or_none() {
        assert_eq!(bench_args(&[]).unwrap().write_profile, None);
        let default = bench_args(&["--write-profile", "--threads", "2"]).unwrap();
        assert_eq!(default.write_profile, Some(None));
        let named = bench_args(&["--write-profile", "p.json", "--threads", "2"]).unwrap();
        assert_eq!(named.write_profile, Some(Some("p.json".into())));
        assert_eq!(named.threads, Some(vec![2]));
    }

    fn phaser_args(line: &str) -> PhaserArgs {
        match Cli::try_parse_from(line.split_whitespace())
            .unwrap()
            .command
        {
            Some(Command::Bench {
                target: BenchTarget::Phaser(args),
            }) => args,
            other => panic!("{line} parsed as {other:?}"),
        }
    }

    #[test]
    fn the_phaser_figure_comes_from_the_flag_or_the_tree_options() {
        let figure = |line: &str| phaser_args(line).figure();
        assert_eq!(figure("phasers bench phaser"), Ok(Figure::Phase));
        assert_eq!(
            figure("phasers bench phaser --figure reduction"),
            Ok(Figure::Reduction)
        );
        assert_eq!(figure("phasers bench phaser --tiers 1,2"), Ok(Figure::Tree));
        assert_eq!(
            figure("phasers bench phaser --figure tree --degrees 4"),
            Ok(Figure::Tree)
        );
        let error = figure("phasers bench phaser --figure phase --tiers 2").unwrap_err();
        assert!(error.contains("add --figure tree"), "{error}");
    }

    /// The old names parse with their old options and become the new commands.
    #[test]
    fn old_names_become_the_new_commands() {
        let command = |line: &str| {
            Cli::try_parse_from(line.split_whitespace())
                .unwrap()
                .command
        };
        let Some(Command::Bench {
            target: BenchTarget::Tree(tree),
        }) = command("phasers bench tree --threads 2 --tiers 1,2 --degrees 2")
        else {
            panic!("bench tree parses");
        };
        let tree = aliases::phaser_figure("bench tree", Figure::Tree, tree).unwrap();
        assert_eq!(tree.figure(), Ok(Figure::Tree));
        assert_eq!(tree.tiers, Some(vec![1, 2]));
        let Some(Command::Bench {
            target: BenchTarget::Reduction(reduction),
        }) = command("phasers bench reduction --figure tree")
        else {
            panic!("bench reduction parses");
        };
        let error = aliases::phaser_figure("bench reduction", Figure::Reduction, reduction);
        assert!(error.unwrap_err().contains("--figure reduction"));
        let Some(Command::Tune(tune)) =
            command("phasers tune --threads 1,2 --output p.json --json t.json --time 0.1")
        else {
            panic!("tune parses");
        };
        let barrier = aliases::tune(tune);
        assert_eq!(barrier.threads, Some(vec![1, 2]));
        assert_eq!(barrier.write_profile, Some(Some("p.json".into())));
        assert_eq!(barrier.output.json.as_deref(), Some(Path::new("t.json")));
        assert_eq!(barrier.measure.time, Duration::from_millis(100));
        assert!(aliases::renamed("tune", "bench barrier --write-profile")
            .contains("is now `phasers bench barrier --write-profile`"));
    }

    #[test]
    fn old_names_are_hidden_from_help() {
        let help = Cli::command().render_help().to_string();
        assert!(
            !help.contains("tune") && !help.contains("internal"),
            "{help}"
        );
        let mut cli = Cli::command();
        let bench = cli.find_subcommand_mut("bench").unwrap();
        let help = bench.render_help().to_string();
        assert!(help.contains("  phaser "), "{help}");
        assert!(
            !help.contains("  tree ") && !help.contains("  reduction "),
            "{help}"
        );
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

        let reduce: benches::reduce::ReduceArgs = quick(QUICK_REDUCE).unwrap();
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
