//! The `phasers` command line: the commands (each benchmark lives in `benches/`), the quick suite
//! that runs with no command, `list`, and the old names that merged into other commands.

mod benches;
mod native;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use phasers::Algorithm;
use phasers_cli::harness::child;
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::threads::parse_thread_count;

use crate::benches::barrier::{
    self, BarrierArgs, Contender, MeasureArgs, SweepContender, FLOOR_DESCRIPTION,
};
use crate::benches::collectives;
use crate::benches::dynamic;
use crate::benches::phaser::{self, Figure, PhaserArgs, Suite};

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
    App(benches::app::AppArgs),
    /// List every barrier algorithm and every baseline, with a one-line description.
    List,
    /// Now `bench barrier --write-profile`.
    #[command(hide = true)]
    Tune(TuneArgs),
    /// Measure this machine's floors (cache-line round trip, yield hand-off, wake-up), show the
    /// ones the library uses and what they mean for barriers.
    Floors(benches::floors::FloorsArgs),
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
    /// Every algorithm against the floor, the reference barrier, auto's protocol by hand (bare
    /// counting) and the standard barriers, at each thread count; --write-profile also writes the
    /// profile `Algorithm::Auto` reads.
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
    Collectives(collectives::CollectivesArgs),
    /// A phase among N async tasks on a tokio runtime of 2 worker threads: the phaser's
    /// `next_async` (one task per registration) against `tokio::sync::Barrier` and, up to
    /// --max-threads, OS threads blocking in `next()`; per task per phase and per phase.
    Async(benches::async_tasks::AsyncArgs),
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

/// A hint for `phasers --threads 4` (a benchmark's options with no command); `None` otherwise.
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
    // A malformed PHASERS_* variable fails every row: say so before measuring anything. (`floors`
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
        Some(Command::Floors(args)) => benches::floors::run(&args),
        Some(Command::InternalChild { kind }) => match kind.as_str() {
            barrier::CHILD_KIND => barrier::child(),
            benches::reduce::OMP_ACTIVE_KIND => benches::reduce::omp_active_child(),
            _ => Err(format!(
                "`phasers {} {kind}`: no such job (this hidden command is only for the benchmarks' \
                 child processes)",
                child::SUBCOMMAND
            )),
        },
        Some(Command::Tune(args)) => barrier::run(tune(args)),
        Some(Command::App(args)) => benches::app::run(&args),
        Some(Command::Bench { target }) => match target {
            BenchTarget::Barrier(args) => barrier::run(args),
            BenchTarget::Phaser(args) => phaser::run(&args),
            BenchTarget::Reduction(args) => {
                phaser::run(&phaser_figure("bench reduction", Figure::Reduction, args)?)
            }
            BenchTarget::Dynamic(args) => dynamic::run(&args),
            BenchTarget::Tree(args) => {
                phaser::run(&phaser_figure("bench tree", Figure::Tree, args)?)
            }
            BenchTarget::Reduce(args) => benches::reduce::run(&args),
            BenchTarget::Collectives(args) => collectives::run(&args),
            BenchTarget::Async(args) => benches::async_tasks::run(&args),
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
    let openmp = [Contender::OmpReduction, Contender::OmpReductionActive];
    let openmp = openmp.map(|contender| (contender.name(), contender.description()));
    let phaser_rows = phaser::PHASER_ROWS.map(|config| (config.name(), config.description()));
    section(
        "phasers and reductions (bench phaser, bench dynamic):",
        openmp.into_iter().chain(phaser_rows).collect(),
    );
    section(
        "array reductions (bench reduce --algorithms; omp and mutex name the baselines):",
        benches::reduce::list(),
    );
    section("team collectives (bench collectives):", collectives::list());
    section(
        "applications (app; --sync takes auto, the algorithms, phaser, std, pthread, cxx):",
        benches::app::list(),
    );
}

/// One section of `phasers list`: a blank line, its title, and a line per item.
fn section<N: std::fmt::Display>(title: &str, items: Vec<(N, &str)>) {
    println!("\n{title}");
    for (name, description) in items {
        println!("  {name:<35} {description}");
    }
}

/// The quick suite's array reductions: every contender, two sizes and spreads (a few seconds).
const QUICK_REDUCE: &str = "reduce --threads 2 --sizes 1000,64000 --spread none,high --mode reduce";

/// The quick suite's team collectives: every part, 8 and 100,000 words, short rows (seconds).
const QUICK_COLLECTIVES: &str = "collectives --threads 2 --words 8,100000 --blocks 64 \
    --sync-words 8 --time 0.03 --samples 5 --teams all,row";

/// The quick suite's applications: SOR and the interpreter, small, auto, std, pthread (a second).
const QUICK_APPS: &str =
    "app sor,interp --size small --threads 1,2 --sync auto,std,pthread --repeat 3 --nops 2000";

/// The options of one part of the quick suite, from its command line (`QUICK_REDUCE`, ...).
fn quick<A: Parser>(line: &str) -> Result<A, String> {
    A::try_parse_from(line.split_whitespace())
        .map_err(|error| format!("the default options do not parse: {error}"))
}

/// `phasers` with no command (see [`Cli`]); a failure in one part does not skip the others.
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
        &|| quick(QUICK_COLLECTIVES).and_then(|args| collectives::run(&args)),
        &|| quick(QUICK_APPS).and_then(|args| benches::app::run(&args)),
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

/// The line an old name, hidden from `--help` for its last release, prints on stderr.
fn renamed(old: &str, new: &str) -> String {
    format!(
        "note: `phasers {old}` is now `phasers {new}`; the old name works until the next release"
    )
}

/// `bench reduction` and `bench tree`: `bench phaser` with `figure`, which the old name fixes.
fn phaser_figure(old: &str, figure: Figure, mut args: PhaserArgs) -> Result<PhaserArgs, String> {
    let name = figure.name();
    if args.figure.is_some_and(|asked| asked != figure) {
        return Err(format!(
            "`phasers {old}` is `phasers bench phaser --figure {name}`; it takes no other \
             --figure (run `phasers bench phaser` for the others)"
        ));
    }
    eprintln!("{}", renamed(old, &format!("bench phaser --figure {name}")));
    args.figure = Some(figure);
    Ok(args)
}

/// Options of the old `phasers tune`.
#[derive(Debug, clap::Args)]
struct TuneArgs {
    /// Thread counts, comma-separated [default: the `bench barrier` sweep, then 4x the cores and
    /// 64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_thread_count)]
    threads: Option<Vec<usize>>,

    #[command(flatten)]
    measure: MeasureArgs,

    /// Where to write the profile (now `bench barrier --write-profile FILE`).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Also write the measurements to FILE as JSON (the `bench barrier` schema).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// `tune`: `bench barrier --write-profile` (whose tables show the standard barriers too).
fn tune(args: TuneArgs) -> BarrierArgs {
    let mut new = String::from("bench barrier --write-profile");
    for (flag, path) in [("", &args.output), (" --json", &args.json)] {
        if let Some(path) = path {
            new.push_str(&format!("{flag} {}", path.display()));
        }
    }
    eprintln!("{}", renamed("tune", &new));
    let output = OutputArgs {
        json: args.json,
        ..OutputArgs::default()
    };
    BarrierArgs {
        threads: args.threads,
        algorithms: None,
        write_profile: Some(args.output),
        measure: args.measure,
        output,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::time::Duration;

    fn command(line: &str) -> Result<Option<Command>, clap::Error> {
        Ok(Cli::try_parse_from(format!("phasers {line}").split_whitespace())?.command)
    }

    fn bench_args(line: &str) -> BarrierArgs {
        match command(&format!("bench barrier {line}")) {
            Ok(Some(Command::Bench {
                target: BenchTarget::Barrier(args),
            })) => args,
            other => panic!("{line} parsed as {other:?}"),
        }
    }

    /// EPCC by default: 20 samples after one dropped, in 5 rounds, 100 ns of delay; back-to-back
    /// has no delay and drops nothing. (tests/smoke.rs: fewer samples than rounds.)
    #[test]
    fn barrier_options_make_the_sweep() {
        Cli::command().debug_assert();
        for (line, expected) in [
            ("", "Epcc 21-1 5x5 None Some(100ns) 1s"),
            (
                "--mode back-to-back --samples 7 --time 0.5",
                "BackToBack 7-0 5x2 None None 500ms",
            ),
            (
                "--pin --time 0.25 --samples 3 --delay 1.5 --episodes 100",
                "Epcc 4-1 3x2 Some(100) Some(1.5µs) 250ms pinned",
            ),
        ] {
            let plan =
                bench_args(line)
                    .measure
                    .sweep("bench barrier", vec![2], vec![Contender::Std]);
            let row = &plan.row;
            let pinned = if row.pin { " pinned" } else { "" };
            let got = format!(
                "{:?} {}-{} {}x{} {:?} {:?} {:?}{pinned}",
                row.mode,
                row.schedule.samples,
                plan.dropped(),
                plan.rounds(),
                plan.round(0).schedule.samples,
                row.schedule.episodes,
                plan.delay,
                plan.time_per_test
            );
            assert_eq!(got, expected, "{line:?}");
            assert_eq!(row.delay >= 1, plan.delay.is_some(), "{line:?}");
        }
        assert_eq!(bench_args("--write-profile").write_profile, Some(None));
        let error = bench_args("--rounds 10 --samples 5").measure.check();
        assert!(error
            .unwrap_err()
            .contains("--rounds 10 is more than --samples 5"));
    }

    /// Every option reaches its parser (tests/smoke.rs: --threads, --algorithms, --time, --mode).
    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        for (line, message) in [
            ("bench barrier --threads 1,,2", "not a thread count"),
            ("bench barrier --threads 100000", "allowed"),
            ("bench barrier --delay -0.1", "not a delay"),
            ("bench barrier --samples 0", "0"),
            ("bench barrier --rounds 0", "0"),
            ("bench barrier --episodes 0", "0"),
            ("bench barrier --hang-seconds x", "not a number of seconds"),
            ("bench barrier --frobnicate", "unexpected argument"),
            ("frobnicate", "unrecognized subcommand"),
            ("app", "required"),
            ("bench barrier --plot p.png", "must end in .svg"),
            ("bench phaser --plot p.png", "must end in .svg"),
            ("bench dynamic --plot p.png", "must end in .svg"),
            ("bench reduce --plot p.png", "must end in .svg"),
            ("app sor --plot p.png", "must end in .svg"),
        ] {
            let error = command(line).unwrap_err().to_string();
            assert!(error.contains(message), "{line:?}: {error}");
        }
        assert!(command("").unwrap().is_none(), "the quick suite");
        // Options with no command get a hint; other mistakes get clap's message alone.
        let hint = |line: &str| {
            let args: Vec<String> = line.split_whitespace().map(String::from).collect();
            option_without_command(&command(line).unwrap_err(), &args)
        };
        let hint_text = hint("--threads 4").unwrap_or_default();
        assert!(hint_text.contains("`phasers bench barrier --threads 4`"));
        assert_eq!(hint("frobnicate"), None);
    }

    #[test]
    fn each_help_says_what_it_measures_and_hides_the_old_names() {
        let help = |path: &str| {
            let mut command = Cli::command();
            for name in path.split_whitespace() {
                command = command.find_subcommand(name).unwrap().clone();
            }
            command.render_long_help().to_string()
        };
        for (path, says) in [
            ("bench barrier", "Every algorithm against the floor"),
            ("bench phaser", "Phasers, each thread a SigWait"),
            ("bench dynamic", "A team growing from 2 to N threads"),
            ("bench reduce", "Array reductions"),
            ("bench collectives", "Team collectives"),
            ("app", "Whole applications"),
            ("floors", "Measure this machine's floors"),
            ("list", "List every barrier algorithm"),
        ] {
            assert!(help(path).contains(says), "{path}: {}", help(path));
        }
        let (top, bench) = (help(""), help("bench"));
        assert!(!top.contains("tune") && !top.contains("internal"), "{top}");
        let hidden = !bench.contains("  tree ") && !bench.contains("  reduction ");
        assert!(bench.contains("  phaser ") && hidden, "{bench}");
    }

    /// The figure `bench phaser` infers, and the old names' options (tests/smoke.rs: `tune`).
    #[test]
    fn old_names_and_tree_options_become_the_new_commands() {
        let figure = |line: &str| match command(&format!("bench phaser {line}")) {
            Ok(Some(Command::Bench {
                target: BenchTarget::Phaser(args),
            })) => args.figure(),
            other => panic!("{line} parsed as {other:?}"),
        };
        assert_eq!(figure("--tiers 1,2"), Ok(Figure::Tree));
        let error = figure("--figure phase --tiers 2").unwrap_err();
        assert!(error.contains("add --figure tree"), "{error}");
        let old = |line| match command(line) {
            Ok(Some(Command::Bench {
                target: BenchTarget::Tree(args),
            })) => phaser_figure(line, Figure::Tree, args),
            Ok(Some(Command::Bench {
                target: BenchTarget::Reduction(args),
            })) => phaser_figure(line, Figure::Reduction, args),
            other => panic!("{line} parsed as {other:?}"),
        };
        let tree = old("bench tree --threads 2 --tiers 1,2 --degrees 2").unwrap();
        assert_eq!(
            (tree.figure(), tree.tiers),
            (Ok(Figure::Tree), Some(vec![1, 2]))
        );
        let error = old("bench reduction --figure tree").unwrap_err();
        assert!(error.contains("--figure reduction"), "{error}");
        let line = "tune --output p.json --json t.json --time 0.1";
        let Ok(Some(Command::Tune(args))) = command(line) else {
            panic!("tune parses")
        };
        let barrier = tune(args);
        assert_eq!(barrier.output.json, Some("t.json".into()));
        assert_eq!(barrier.measure.time, Duration::from_millis(100));
    }

    /// The quick suite's parts parse and stay small (no test runs the whole suite: it takes
    /// minutes; tests/widths.rs runs shorter copies of its parts).
    #[test]
    fn the_quick_parts_parse_and_are_small() {
        let reduce: benches::reduce::ReduceArgs = quick(QUICK_REDUCE).unwrap();
        assert_eq!(reduce.threads, Some(vec![2]));
        assert_eq!(reduce.sizes, Some(vec![1000, 64_000]));
        let collectives: collectives::CollectivesArgs = quick(QUICK_COLLECTIVES).unwrap();
        assert_eq!(collectives.threads, Some(vec![2]));
        assert_eq!(collectives.time, Duration::from_millis(30));
        let apps: benches::app::AppArgs = quick(QUICK_APPS).unwrap();
        assert_eq!((apps.threads, apps.apps.len()), (Some(vec![1, 2]), 2));
    }

    /// Every `cargo run --release -- ...` line the docs print parses as printed: in a code span
    /// up to its closing backtick, in an `sh` block up to its comment, continuations joined. A
    /// renamed flag or value then fails here rather than in a reader's terminal.
    #[test]
    fn every_command_the_docs_print_parses() {
        const RUN: &str = "cargo run --release --";
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut checked = 0;
        for file in [
            "README.md",
            "BENCHMARKS.md",
            "docs/benchmarking.md",
            "docs/guide.md",
        ] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let text = text.replace("\\\n", " ");
            for (at, _) in text.match_indices(RUN) {
                let rest = &text[at + RUN.len()..];
                let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
                let in_span = text[line_start..at].matches('`').count() % 2 == 1;
                let end = match in_span {
                    true => rest.find('`'),
                    false => rest.find(['\n', '#']),
                };
                let line = rest[..end.unwrap_or(rest.len())].replace('\n', " ");
                let args = std::iter::once("phasers").chain(line.split_whitespace());
                match Cli::try_parse_from(args) {
                    Err(error) if error.kind() != clap::error::ErrorKind::DisplayHelp => {
                        panic!("{file}: `{RUN}{line}` does not parse: {error}")
                    }
                    _ => checked += 1,
                }
            }
        }
        assert!(checked >= 30, "only {checked} commands found");
    }
}
