//! The options of `phasers bench reduce`, and the run they resolve to.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::threads;

use super::collective::Collective;
use super::contender::{parse_contender, Contender};
use super::harness::StopRule;
use super::metrics::Metric;
use super::spread::{parse_spread, Preset, Spread};

/// Participant counts of a default run: the seed's 4 to 32, and 2, the smallest reduction.
pub const DEFAULT_THREADS: [usize; 5] = [2, 4, 8, 16, 32];

/// Array lengths of a default run: the seed's overhead size (1 float), its range of 1,000 to
/// 200,000 floats, and 16 M (64 MB per array), where memory bandwidth is all that counts.
pub const DEFAULT_SIZES: [usize; 7] = [1, 1_000, 5_000, 10_000, 64_000, 200_000, 16_000_000];

/// Where arrays count as large: each iteration then takes milliseconds, so fewer are enough.
pub const LARGE_ARRAY: usize = 1_000_000;

/// The measured iterations a row of a large array needs at least: each moves N x 4 MB or more,
/// so its time varies little, and more would make a default run long.
pub const LARGE_MIN_ITERATIONS: usize = 5;

/// With the default sizes, large arrays run only up to this many participants: 4 x 64 MB inputs
/// plus outputs and OpenMP's private copies already take about a gigabyte, and at more
/// participants than cores the time is the same bandwidth shared more ways.
pub const LARGE_DEFAULT_MAX_THREADS: usize = 4;

/// The longest array `--sizes` accepts: 1 GiB per participant's input.
pub const MAX_LEN: usize = 1 << 28;

/// A row's budget: at least this much time beyond ten times `--min-time`, so even the largest
/// arrays get their warm-up and minimum iterations.
const BUDGET_MARGIN: Duration = Duration::from_secs(2);

/// Options of `phasers bench reduce`.
#[derive(Debug, Clone, Parser)]
#[command(name = "reduce")]
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
    #[arg(long, value_name = "SECONDS", default_value = "0.05", value_parser = crate::parse_seconds, allow_negative_numbers = true)]
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

    /// Stop the whole run when a row completes no iteration for this many seconds: it is hung.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = crate::parse_seconds, allow_negative_numbers = true)]
    pub hang_seconds: Duration,

    /// Write every row, with the settings, the machine and this command line, to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write one line per row to FILE as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Plot the median --metric against N, one SVG per collective, spread and size, named
    /// `FILE-<mode>-<spread>-<size>.svg` beside FILE.
    #[arg(long, visible_alias = "svg", value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// A run, resolved from [`ReduceArgs`].
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Participant counts, increasing.
    pub threads: Vec<usize>,
    /// Array lengths, increasing.
    pub sizes: Vec<usize>,
    /// Large arrays run only up to this many participants (the default sizes).
    pub large_max_threads: Option<usize>,
    /// The spreads, as given.
    pub spreads: Vec<Spread>,
    /// The collectives, as given.
    pub collectives: Vec<Collective>,
    /// The contenders, as given.
    pub contenders: Vec<Contender>,
    /// The metric of plots and ratios.
    pub metric: Metric,
    /// The stop rule of rows of arrays shorter than [`LARGE_ARRAY`].
    pub stop: StopRule,
    /// The seed of the stall tables.
    pub seed: u64,
    /// A row that completes no iteration for this long is hung.
    pub hang_after: Duration,
}

impl Config {
    /// The run `args` ask for, or why it cannot be.
    pub fn from_args(args: &ReduceArgs) -> Result<Self, String> {
        if args.min_iterations > args.max_iterations {
            return Err(format!(
                "--min-iterations {} is more than --max-iterations {}",
                args.min_iterations, args.max_iterations
            ));
        }
        let threads = crate::sorted_unique(
            args.threads
                .clone()
                .unwrap_or_else(|| DEFAULT_THREADS.to_vec()),
        );
        let sizes =
            crate::sorted_unique(args.sizes.clone().unwrap_or_else(|| DEFAULT_SIZES.to_vec()));
        let spreads = first_of_each(
            args.spread
                .clone()
                .unwrap_or_else(|| Preset::ALL.map(Preset::spread).to_vec()),
        );
        let collectives = first_of_each(
            args.mode
                .clone()
                .unwrap_or_else(|| Collective::ALL.to_vec()),
        );
        let contenders = first_of_each(args.algorithms.clone().unwrap_or_else(Contender::all));
        let min_time = args.min_time;
        Ok(Config {
            threads,
            sizes,
            large_max_threads: args.sizes.is_none().then_some(LARGE_DEFAULT_MAX_THREADS),
            spreads,
            collectives,
            contenders,
            metric: args.metric,
            stop: StopRule {
                min_iterations: args.min_iterations as usize,
                min_time,
                max_iterations: args.max_iterations as usize,
                budget: min_time.saturating_mul(10).saturating_add(BUDGET_MARGIN),
            },
            seed: args.seed,
            hang_after: args.hang_seconds,
        })
    }

    /// The lengths run with `threads` participants.
    pub fn sizes_for(&self, threads: usize) -> Vec<usize> {
        self.sizes
            .iter()
            .copied()
            .filter(|&len| {
                len < LARGE_ARRAY || self.large_max_threads.map_or(true, |most| threads <= most)
            })
            .collect()
    }

    /// The stop rule of rows of `len` floats.
    pub fn stop_for(&self, len: usize) -> StopRule {
        if len >= LARGE_ARRAY {
            StopRule {
                min_iterations: self.stop.min_iterations.min(LARGE_MIN_ITERATIONS),
                ..self.stop
            }
        } else {
            self.stop
        }
    }
}

/// Parses one entry of `--threads`: a participant count of at least 2.
pub fn parse_participants(text: &str) -> Result<usize, String> {
    match threads::parse_thread_count(text)? {
        1 => Err("a reduction needs at least 2 participants to measure anything".to_owned()),
        n => Ok(n),
    }
}

/// Parses one entry of `--sizes`: a whole number of floats from 1, optionally with `k` (x1,000)
/// or `M` (x1,000,000), and `_` between digits.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let trimmed = text.trim().replace('_', "");
    let (digits, scale) = match trimmed.as_bytes().last() {
        Some(b'k' | b'K') => (&trimmed[..trimmed.len() - 1], 1_000),
        Some(b'M') => (&trimmed[..trimmed.len() - 1], 1_000_000),
        _ => (trimmed.as_str(), 1),
    };
    let len = digits
        .parse::<usize>()
        .ok()
        .and_then(|value| value.checked_mul(scale))
        .ok_or_else(|| {
            format!("{text:?} is not an array size (a whole number of floats, such as 1000, 64k or 16M)")
        })?;
    match len {
        0 => Err("an array size starts at 1 float".to_owned()),
        len if len > MAX_LEN => Err(format!(
            "{len} floats is more than the {MAX_LEN} (1 GiB per array) allowed"
        )),
        len => Ok(len),
    }
}

/// `values` without repeats, each where it first appears.
fn first_of_each<T: PartialEq>(values: Vec<T>) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(values.len());
    for value in values {
        if !kept.contains(&value) {
            kept.push(value);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers::ReduceAlgorithm;

    fn parse(extra: &[&str]) -> Result<ReduceArgs, clap::Error> {
        ReduceArgs::try_parse_from(std::iter::once("reduce").chain(extra.iter().copied()))
    }

    fn rejection(extra: &[&str]) -> String {
        match parse(extra) {
            Ok(args) => panic!("{extra:?} was accepted as {args:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn defaults_are_the_issues_sweep() {
        let config = Config::from_args(&parse(&[]).unwrap()).unwrap();
        assert_eq!(config.threads, DEFAULT_THREADS);
        assert_eq!(config.sizes, DEFAULT_SIZES);
        assert_eq!(config.spreads, Preset::ALL.map(Preset::spread));
        assert_eq!(config.collectives, Collective::ALL);
        assert_eq!(config.contenders, Contender::all());
        assert_eq!(config.metric, Metric::LastArrival);
        assert_eq!(config.stop.min_iterations, 20);
        assert_eq!(config.stop.max_iterations, 1000);
        assert_eq!(config.stop.min_time, Duration::from_millis(50));
        assert_eq!(config.stop.budget, Duration::from_millis(2500));
        // 16 M floats only up to 4 participants, and with fewer iterations.
        assert!(config.sizes_for(4).contains(&16_000_000));
        assert!(!config.sizes_for(8).contains(&16_000_000));
        assert_eq!(config.sizes_for(32).len(), 6);
        assert_eq!(config.stop_for(16_000_000).min_iterations, 5);
        assert_eq!(config.stop_for(200_000).min_iterations, 20);
    }

    #[test]
    fn every_option_parses() {
        let args = parse(&[
            "--threads",
            "8,2,8",
            "--sizes",
            "64k,1,16M,1_000",
            "--spread",
            "high,none,60/30/10,high",
            "--mode",
            "allreduce",
            "--algorithms",
            "dynamic,omp,mutex,auto",
            "--metric",
            "total",
            "--min-time",
            "0.2",
            "--min-iterations",
            "3",
            "--max-iterations",
            "7",
            "--seed",
            "42",
            "--hang-seconds",
            "5",
            "--json",
            "r.json",
            "--csv",
            "r.csv",
            "--svg",
            "r.svg",
        ])
        .unwrap();
        let config = Config::from_args(&args).unwrap();
        assert_eq!(config.threads, vec![2, 8]);
        assert_eq!(config.sizes, vec![1, 1000, 64_000, 16_000_000]);
        // Sizes given: large arrays at every participant count.
        assert!(config.sizes_for(8).contains(&16_000_000));
        assert_eq!(config.spreads.len(), 3);
        assert_eq!(config.spreads[0], Preset::High.spread());
        assert_eq!(config.collectives, vec![Collective::Allreduce]);
        assert_eq!(
            config.contenders,
            vec![
                Contender::Ours(ReduceAlgorithm::DynamicPairs),
                Contender::OpenMp,
                Contender::Mutex,
                Contender::Ours(ReduceAlgorithm::Auto)
            ]
        );
        assert_eq!(config.metric, Metric::Total);
        assert_eq!(config.stop.min_iterations, 3);
        assert_eq!(config.stop_for(16_000_000).min_iterations, 3);
        assert_eq!(config.stop.max_iterations, 7);
        assert_eq!(config.seed, 42);
        assert_eq!(config.hang_after, Duration::from_secs(5));
        assert_eq!(args.plot.as_deref(), Some(std::path::Path::new("r.svg")));
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        assert!(rejection(&["--threads", "1"]).contains("at least 2 participants"));
        assert!(rejection(&["--threads", "two"]).contains("not a thread count"));
        assert!(rejection(&["--threads", "100000"]).contains("allowed"));
        assert!(rejection(&["--sizes", "0"]).contains("starts at 1 float"));
        assert!(rejection(&["--sizes", "lots"]).contains("not an array size"));
        assert!(rejection(&["--sizes", "1,,2"]).contains("not an array size"));
        assert!(rejection(&["--sizes", "1G"]).contains("not an array size"));
        assert!(rejection(&["--sizes", "300M"]).contains("1 GiB per array"));
        assert!(rejection(&["--sizes", "99999999999999999999"]).contains("not an array size"));
        assert!(rejection(&["--spread", "extreme"]).contains("not a spread"));
        assert!(rejection(&["--spread", "5/10/1"]).contains("mean is above the max"));
        assert!(rejection(&["--mode", "scan"]).contains("possible values: reduce, allreduce"));
        assert!(rejection(&["--algorithms", "fastest"]).contains("not a reduction algorithm"));
        assert!(rejection(&["--metric", "speed"]).contains("possible values: last-arrival, total"));
        assert!(rejection(&["--min-time", "0"]).contains("not a number of seconds"));
        assert!(rejection(&["--min-iterations", "0"]).contains("0"));
        assert!(rejection(&["--max-iterations", "many"]).contains("invalid"));
        assert!(rejection(&["--seed", "x"]).contains("invalid"));
        let inverted = parse(&["--min-iterations", "50", "--max-iterations", "10"]).unwrap();
        let error = Config::from_args(&inverted).unwrap_err();
        assert!(
            error.contains("--min-iterations 50 is more than --max-iterations 10"),
            "{error}"
        );
    }

    #[test]
    fn sizes_take_suffixes() {
        assert_eq!(parse_size("16M"), Ok(16_000_000));
        assert_eq!(parse_size("64k"), Ok(64_000));
        assert_eq!(parse_size(" 200_000 "), Ok(200_000));
        assert_eq!(parse_size("1"), Ok(1));
        assert!(parse_size("k").is_err());
        assert!(parse_size("-5").is_err());
        assert_eq!(parse_participants("2"), Ok(2));
    }
}
