//! The options of `phasers bench reduce`, and the settings they resolve to: what the run does and
//! what its report states (`settings` in the JSON), down to the [`Point`] every row of one size,
//! collective and participant count is measured at.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use phasers_cli::harness::args::{first_of_each, parse_scaled, parse_seconds, sorted_unique};
use phasers_cli::harness::engine::{Pacing, Plan};
use phasers_cli::harness::run_args::RunArgs;
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::threads::parse_thread_count;
use serde::Serialize;

use super::contender::{parse_contender, Contender};
use super::metrics::Metric;
use super::workload::Collective;
use phasers_cli::harness::stalls::{parse_spread, Preset, Spread, Stalls};

/// Participant counts of a default run: the seed's 4 to 32, and 2, the smallest reduction.
const DEFAULT_THREADS: [usize; 5] = [2, 4, 8, 16, 32];

/// Array lengths of a default run: the seed's overhead size (1 float), its range of 1,000 to
/// 200,000 floats, and 16 M (64 MB per array), where memory bandwidth is all that counts.
const DEFAULT_SIZES: [usize; 7] = [1, 1_000, 5_000, 10_000, 64_000, 200_000, 16_000_000];

/// Where arrays count as large: an iteration takes milliseconds, so fewer are enough (each moves
/// N x 4 MB or more, so its time varies little).
pub const LARGE_ARRAY: usize = 1_000_000;
const LARGE_MIN_ITERATIONS: usize = 5;

/// With the default sizes, large arrays run only up to this many participants: 4 x 64 MB inputs
/// plus outputs and OpenMP's private copies already take about a gigabyte, and beyond the cores
/// the time is the same bandwidth shared more ways.
const LARGE_DEFAULT_MAX_THREADS: usize = 4;

/// The longest array `--sizes` accepts: 1 GiB per participant's input.
const MAX_LEN: usize = 1 << 28;

/// Iterations before the measured ones: the first touches every page and builds any lazy state,
/// and its result is the one checked.
pub const WARM_UP: usize = 1;

/// When a row ends. Counts are of measured iterations, the warm-up not included; `min_time` is
/// counted from the end of the warm-up, `budget` from the row's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StopRule {
    /// Iterations to run at least, unless the budget runs out first.
    pub min_iterations: usize,
    /// Time to run at least, once `min_iterations` are done.
    pub min_time: Duration,
    /// Iterations never to exceed.
    pub max_iterations: usize,
    /// Time after which the row stops even short of `min_iterations` (with at least one).
    pub budget: Duration,
}

impl StopRule {
    /// The engine's plan of a row stopping by this rule: seed 003's stamped iterations, stalling
    /// as `stalls` says.
    pub fn plan(&self, stalls: Option<Arc<Stalls>>, hang_after: Duration) -> Plan {
        let schedule = Schedule {
            episodes: Some(1),
            samples: self.max_iterations,
            target_sample: Duration::ZERO,
            row_budget: self.budget,
        };
        Plan {
            warm_up: WARM_UP as u64,
            enough: Some((self.min_iterations, self.min_time)),
            ..Plan::new(schedule, Pacing::Stamped { stalls }, hang_after)
        }
    }
}

/// A row's budget beyond ten times `--min-time`, so even the largest arrays get their warm-up and
/// minimum iterations.
const BUDGET_MARGIN: Duration = Duration::from_secs(2);

/// Options of `phasers bench reduce`.
#[derive(Debug, Clone, Parser)]
#[command(name = "reduce")]
#[command(mut_arg("hang_seconds", |arg| arg.help(
    "Stop the whole run when a row completes no iteration for this many seconds: it is hung"
)))]
#[command(mut_arg("json", |arg| arg.help(
    "Write every row, with the settings, the machine and this command line, to FILE as JSON"
)))]
pub struct ReduceArgs {
    /// Participant counts N, comma-separated, from 2 [default: 2,4,8,16,32].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_participants)]
    pub threads: Option<Vec<usize>>,

    /// Array lengths in floats, comma-separated; k and M multiply by a thousand and a million
    /// [default: 1,1000,5000,10000,64000,200000,16M, with 16M only up to 4 participants].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<usize>>,

    /// Arrival spreads, comma-separated: none, low, medium, high (seed 003's (max, mean, stddev)
    /// of (15, 8, 3.9), (128, 37, 18.5) and (555, 184, 102) µs), or MAX/MEAN/STDDEV in µs
    /// [default: none,low,medium,high].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_spread)]
    pub spread: Option<Vec<Spread>>,

    /// Collectives, comma-separated [default: reduce,allreduce].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub mode: Option<Vec<Collective>>,

    /// Contenders, comma-separated: linear, static-tree, dynamic-pairs, dynamic-group, auto, omp,
    /// omp-active (OpenMP under OMP_WAIT_POLICY=active), mutex [default: all of them]. The
    /// bandwidth floor is always measured.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_contender)]
    pub algorithms: Option<Vec<Contender>>,

    /// The metric of the plots, the ÷omp column and the OpenMP ratios (both are always measured).
    #[arg(long, value_enum, default_value = "last-arrival")]
    pub metric: Metric,

    /// Seconds of measured iterations per row, at least, once --min-iterations are done.
    #[arg(long, value_name = "SECONDS", default_value = "0.05", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub min_time: Duration,

    /// Measured iterations per row, at least (arrays of a million floats or more: at most 5),
    /// after one warm-up iteration whose result is checked.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub min_iterations: u32,

    /// Measured iterations per row, at most.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_iterations: u32,

    /// Seed of the stall tables: the same seed gives every contender, and every run, the same
    /// stalls.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// `--hang-seconds`, `--json`, `--csv`.
    #[command(flatten)]
    pub run: RunArgs,

    /// Plot the median --metric against N, one SVG per collective, spread and size, named
    /// `FILE-<mode>-<spread>-<size>.svg` beside FILE.
    #[arg(long, visible_alias = "svg", value_name = "FILE.svg", value_parser = phasers_cli::harness::args::parse_svg_path)]
    pub plot: Option<PathBuf>,
}

/// The run [`ReduceArgs`] ask for, as the report states it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReduceSettings {
    /// The method, in words.
    pub method: String,
    /// Participant counts, increasing.
    pub threads: Vec<usize>,
    /// Array lengths in floats, increasing.
    pub sizes: Vec<usize>,
    /// With the default sizes: lengths of `large_array_floats` or more ran only with up to this
    /// many participants.
    pub large_sizes_max_threads: Option<usize>,
    /// The arrival spreads, as given.
    pub spreads: Vec<SpreadSetting>,
    /// The collectives, as given.
    pub modes: Vec<Collective>,
    /// The contenders, as given (written as their names).
    pub contenders: Vec<Contender>,
    /// The metric of the plots, the `÷omp` column and the OpenMP ratios.
    pub metric: Metric,
    /// Iterations per row before the measured ones, dropped from the statistics.
    pub warm_up_iterations: usize,
    /// Measured iterations per row, at least (unless the budget ran out).
    pub min_iterations: usize,
    /// The same for arrays of `large_array_floats` floats or more.
    pub large_array_min_iterations: usize,
    /// Where "large" starts, in floats.
    pub large_array_floats: usize,
    /// Measured iterations per row, at most.
    pub max_iterations: usize,
    /// Measured time per row, at least, once the minimum iterations are done, in seconds.
    pub min_time_s: f64,
    /// Measured time after which a row stops short of the minimum iterations, in seconds.
    pub budget_s: f64,
    /// The seed of the stall tables.
    pub seed: u64,
    /// A row that completes no iteration for this long is hung.
    #[serde(skip)]
    pub hang_after: Duration,
    /// The stop rule of arrays shorter than [`LARGE_ARRAY`].
    #[serde(skip)]
    stop: StopRule,
}

/// A spread and its name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpreadSetting {
    /// As tables and rows name it.
    pub name: String,
    /// The preset and its numbers.
    #[serde(flatten)]
    pub spread: Spread,
}

impl ReduceSettings {
    /// The run `args` ask for, or why it cannot be.
    pub fn from_args(args: &ReduceArgs) -> Result<Self, String> {
        let (min_iterations, max_iterations) =
            (args.min_iterations as usize, args.max_iterations as usize);
        if min_iterations > max_iterations {
            return Err(format!(
                "--min-iterations {min_iterations} is more than --max-iterations {max_iterations}"
            ));
        }
        let stop = StopRule {
            min_iterations,
            min_time: args.min_time,
            max_iterations,
            budget: args
                .min_time
                .saturating_mul(10)
                .saturating_add(BUDGET_MARGIN),
        };
        let large_min = min_iterations.min(LARGE_MIN_ITERATIONS);
        let spreads = args.spread.clone();
        let spreads = spreads.unwrap_or_else(|| Preset::ALL.map(Preset::spread).to_vec());
        Ok(ReduceSettings {
            method: format!(
                "seed 003's: every participant has its own array; each iteration a barrier (not \
                 timed), a stall drawn per participant from the spread's normal clipped to [0, \
                 max] (busy-waiting on the clock; yielding between looks when participants \
                 outnumber cores), an arrival stamp, the call, a return stamp. {WARM_UP} warm-up \
                 iteration, whose result is checked against the sequential sum, then at least \
                 {min_iterations} iterations ({large_min} from {LARGE_ARRAY} floats) and {} s \
                 per row, at most {max_iterations}, stopping after {} s; the same stalls for \
                 every contender at a point (seed {})",
                stop.min_time.as_secs_f64(),
                stop.budget.as_secs_f64(),
                args.seed,
            ),
            threads: sorted_unique(args.threads.clone().unwrap_or(DEFAULT_THREADS.into())),
            sizes: sorted_unique(args.sizes.clone().unwrap_or(DEFAULT_SIZES.into())),
            large_sizes_max_threads: args.sizes.is_none().then_some(LARGE_DEFAULT_MAX_THREADS),
            spreads: first_of_each(spreads)
                .into_iter()
                .map(|spread| SpreadSetting {
                    name: spread.name(),
                    spread,
                })
                .collect(),
            modes: first_of_each(args.mode.clone().unwrap_or(Collective::ALL.into())),
            contenders: first_of_each(args.algorithms.clone().unwrap_or_else(Contender::all)),
            metric: args.metric,
            warm_up_iterations: WARM_UP,
            min_iterations,
            large_array_min_iterations: large_min,
            large_array_floats: LARGE_ARRAY,
            max_iterations,
            min_time_s: stop.min_time.as_secs_f64(),
            budget_s: stop.budget.as_secs_f64(),
            seed: args.seed,
            hang_after: args.run.hang_seconds,
            stop,
        })
    }

    /// The lengths run with `threads` participants.
    pub fn sizes_for(&self, threads: usize) -> Vec<usize> {
        let large_ok = self
            .large_sizes_max_threads
            .map_or(true, |most| threads <= most);
        let sizes = self.sizes.iter().copied();
        sizes.filter(|&len| len < LARGE_ARRAY || large_ok).collect()
    }

    /// The stop rule of rows of `len` floats.
    pub fn stop_for(&self, len: usize) -> StopRule {
        StopRule {
            min_iterations: match len >= LARGE_ARRAY {
                true => self.large_array_min_iterations,
                false => self.min_iterations,
            },
            ..self.stop
        }
    }
}

/// Parses one entry of `--threads`: a participant count of at least 2.
pub fn parse_participants(text: &str) -> Result<usize, String> {
    match parse_thread_count(text)? {
        1 => Err("a reduction needs at least 2 participants to measure anything".to_owned()),
        n => Ok(n),
    }
}

/// Parses one entry of `--sizes`: a whole number of floats from 1, optionally with `k` (x1,000)
/// or `M` (x1,000,000), and `_` between digits.
pub fn parse_size(text: &str) -> Result<usize, String> {
    match parse_scaled(text) {
        None => Err(format!(
            "{text:?} is not an array size (a whole number of floats, such as 1000, 64k or 16M)"
        )),
        Some(0) => Err("an array size starts at 1 float".to_owned()),
        Some(len) if len > MAX_LEN => Err(format!(
            "{len} floats is more than the {MAX_LEN} (1 GiB per array) allowed"
        )),
        Some(len) => Ok(len),
    }
}

/// Everything the rows of one point share.
pub struct Point<'a> {
    /// Participants.
    pub threads: usize,
    /// Floats per array.
    pub len: usize,
    /// `reduce` or `allreduce`.
    pub collective: Collective,
    /// The spread the stalls were drawn from.
    pub spread: &'a Spread,
    /// The stalls, one row per iteration (the warm-up included).
    pub stalls: &'a Arc<Stalls>,
    /// The sequential sum.
    pub expected: &'a Arc<[f32]>,
    /// When a row ends.
    pub stop: StopRule,
    /// When a row is hung.
    pub hang_after: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers::ReduceAlgorithm;

    fn settings(extra: &[&str]) -> Result<ReduceSettings, String> {
        let argv = std::iter::once("reduce").chain(extra.iter().copied());
        let args = ReduceArgs::try_parse_from(argv).map_err(|error| error.to_string())?;
        ReduceSettings::from_args(&args)
    }

    #[test]
    fn defaults_are_the_issues_sweep_with_16m_up_to_4_participants() {
        let settings = settings(&[]).unwrap();
        assert_eq!(settings.threads, DEFAULT_THREADS);
        assert_eq!(settings.sizes, DEFAULT_SIZES);
        assert_eq!(settings.spreads.len(), 4);
        assert_eq!(settings.contenders, Contender::all());
        assert_eq!(settings.budget_s, 2.5);
        assert!(settings.sizes_for(4).contains(&16_000_000));
        assert_eq!(settings.sizes_for(8).len(), 6);
        assert_eq!(settings.stop_for(16_000_000).min_iterations, 5);
        assert_eq!(settings.stop_for(200_000).min_iterations, 20);
    }

    #[test]
    fn options_resolve_in_order_without_repeats() {
        let settings = settings(&[
            "--threads=8,2,8",
            "--sizes=64k,1,16M,1_000",
            "--spread=high,none,60/30/10,high",
            "--algorithms=dynamic,omp,mutex,auto",
            "--min-iterations=3",
        ])
        .unwrap();
        assert_eq!(settings.threads, vec![2, 8]);
        assert_eq!(settings.sizes, vec![1, 1000, 64_000, 16_000_000]);
        let args = ReduceArgs::try_parse_from(["reduce", "--svg", "r.svg"]).unwrap();
        assert_eq!(args.plot, Some(PathBuf::from("r.svg")));
        // Sizes given: large arrays at every participant count, with at most the minimum.
        assert!(settings.sizes_for(8).contains(&16_000_000));
        assert_eq!(settings.stop_for(16_000_000).min_iterations, 3);
        let spreads: Vec<&str> = settings.spreads.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(spreads, ["high", "none", "60/30/10us"]);
        assert_eq!(
            settings.contenders[0],
            Contender::Ours(ReduceAlgorithm::DynamicPairs)
        );
        assert_eq!(settings.contenders.len(), 4);
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        for (bad, message) in [
            ("--threads=1", "at least 2 participants"),
            ("--threads=100000", "allowed"),
            ("--sizes=0", "starts at 1 float"),
            ("--sizes=1,,2", "not an array size"),
            ("--sizes=1G", "not an array size"),
            ("--sizes=300M", "1 GiB per array"),
            ("--sizes=99999999999999999999", "not an array size"),
            ("--mode=scan", "possible values: reduce, allreduce"),
            ("--metric=speed", "possible values: last-arrival, total"),
            ("--min-time=0", "not a number of seconds"),
            ("--max-iterations=0", "0"),
        ] {
            let error = settings(&[bad]).unwrap_err();
            assert!(error.contains(message), "{bad}: {error}");
        }
        let error = settings(&["--min-iterations=50", "--max-iterations=10"]).unwrap_err();
        assert!(error.contains("--min-iterations 50 is more than --max-iterations 10"));
        assert_eq!(parse_size(" 64k"), Ok(64_000));
    }
}
