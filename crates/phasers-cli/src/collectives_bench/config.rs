//! The options of `phasers bench collectives`, and the run they resolve to.

use std::time::Duration;

use clap::Parser;
use phasers_cli::harness::args::{parse_scaled, parse_seconds, sorted_unique};
use phasers_cli::harness::row::{Mode, RowPlan};
use phasers_cli::harness::run_args::RunArgs;
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::threads::parse_thread_count;

use super::grid::Shape;
use super::operation::Part;
use super::results::CollectivesSettings;

/// Member counts of a default run: 2 to 64, doubling.
pub const DEFAULT_MEMBERS: [usize; 6] = [2, 4, 8, 16, 32, 64];

/// The broadcast lengths of the MPP suite (seed 004's figure 2: 4 words, doubling while below
/// 100,000), and 100,000 itself, the length of the issue's bandwidth figure.
pub fn default_words() -> Vec<usize> {
    let mut words: Vec<usize> = std::iter::successors(Some(4), |&words| Some(words * 2))
        .take_while(|&words| words < 100_000)
        .collect();
    words.push(100_000);
    words
}

/// Alltoall blocks of a default run: one word (all latency), a cache line's worth of lines, and
/// 8 KB per block (at 64 members, 512 KB per member each way).
pub const DEFAULT_BLOCKS: [usize; 3] = [1, 64, 1024];

/// Broadcast lengths of the sync-mode comparison: one cache line, where synchronization is all
/// the cost, and 512 KB, where copying is.
pub const DEFAULT_SYNC_WORDS: [usize; 2] = [8, 65_536];

/// The longest broadcast `--words` and `--sync-words` accept: 128 MiB per member.
pub const MAX_WORDS: usize = 1 << 24;

/// The longest alltoall block `--blocks` accepts: 8 MiB per block.
pub const MAX_BLOCK: usize = 1 << 20;

/// Options of `phasers bench collectives`.
#[derive(Debug, Clone, Parser)]
#[command(name = "collectives")]
pub struct CollectivesArgs {
    /// Member counts N, comma-separated, from 2 [default: 2,4,8,16,32,64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_members)]
    pub threads: Option<Vec<usize>>,

    /// Teams, comma-separated: all (one team of N), row and column (split_grid's sub-teams, every
    /// one running the collective at once) [default: all,row,column]. Baselines run on N threads.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub teams: Option<Vec<Shape>>,

    /// Columns of split_grid's grid [default: the smallest power of two whose square holds N: 8
    /// for 64 members, 8 x 4 for 32].
    #[arg(long, value_name = "N", value_parser = parse_columns)]
    pub columns: Option<usize>,

    /// What to measure, comma-separated: barrier, allreduce, broadcast, alltoall, checked (checked
    /// against unchecked teams), sync-modes (AllSync, MySync, NoSync broadcasts) [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub ops: Option<Vec<Part>>,

    /// Broadcast lengths in u64 words, comma-separated [default: 4, 8, ... 65536 and 100000].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_words)]
    pub words: Option<Vec<usize>>,

    /// Alltoall block lengths in u64 words, comma-separated [default: 1,64,1024].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_block)]
    pub blocks: Option<Vec<usize>>,

    /// Broadcast lengths in u64 words of the sync-mode comparison [default: 8,65536].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_words)]
    pub sync_words: Option<Vec<usize>>,

    /// Seconds each row (one operation, size, team and contender at one N) aims to take.
    #[arg(long, value_name = "SECONDS", default_value = "0.2", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub time: Duration,

    /// Timed samples per row; min and median are over them.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub samples: u16,

    /// Rounds of `--ops checked`: each round measures every checked row and its unchecked twin
    /// back to back (alternating which goes first), so both see the machine alike; the figure
    /// reports the median of the rounds' ratios and their range.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub rounds: u16,

    /// Pin each row's threads to the available CPUs, round robin.
    #[arg(long)]
    pub pin: bool,

    /// `--hang-seconds`, `--json`, `--csv`.
    #[command(flatten)]
    pub run: RunArgs,
}

/// A run, resolved from [`CollectivesArgs`].
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// What to measure, as the report states it: lists increasing, parts and teams in the order
    /// declared (the order of a run and of its tables).
    pub settings: CollectivesSettings,
    /// How every row is measured.
    pub plan: RowPlan,
}

impl Config {
    /// The run `args` ask for.
    pub fn from_args(args: &CollectivesArgs) -> Self {
        let sorted = |given: &Option<Vec<usize>>, default: Vec<usize>| {
            sorted_unique(given.clone().unwrap_or(default))
        };
        let samples = usize::from(args.samples);
        let schedule = Schedule {
            episodes: None,
            samples,
            target_sample: args.time / samples as u32,
            // Warm-up and calibration may overrun the aim; beyond this a row stops with the
            // samples it has, and says so.
            row_budget: args.time * 3 + Duration::from_secs(1),
        };
        let settings = CollectivesSettings {
            method: format!(
                "each row runs one operation back to back on one thread per member (a fresh team \
                 of N members; for a baseline, N threads): a warm-up round, calibration, then {} \
                 samples of rounds sized to take about {:.1} ms, timed on the first thread from a \
                 control barrier to a control barrier after the round (at most {:.1} s per row). \
                 Broadcast roots rotate (the iteration modulo the team size); every result is \
                 checked (one word per call, every word in the first call). Row and column teams \
                 come from split_grid and all run at once. The OpenMP rows run each round in one \
                 parallel region, timed between two barriers",
                schedule.samples,
                schedule.target_sample.as_secs_f64() * 1e3,
                schedule.row_budget.as_secs_f64(),
            ),
            members: sorted(&args.threads, DEFAULT_MEMBERS.to_vec()),
            teams: sorted_unique(args.teams.clone().unwrap_or_else(|| Shape::ALL.to_vec())),
            columns: args.columns,
            parts: sorted_unique(args.ops.clone().unwrap_or_else(|| Part::ALL.to_vec())),
            broadcast_words: sorted(&args.words, default_words()),
            alltoall_blocks: sorted(&args.blocks, DEFAULT_BLOCKS.to_vec()),
            sync_mode_words: sorted(&args.sync_words, DEFAULT_SYNC_WORDS.to_vec()),
            time_per_row_s: (schedule.target_sample * samples as u32).as_secs_f64(),
            samples,
            rounds: usize::from(args.rounds),
            target_sample_ms: schedule.target_sample.as_secs_f64() * 1e3,
            row_budget_s: schedule.row_budget.as_secs_f64(),
            pinned: args.pin,
            debug_build: cfg!(debug_assertions),
        };
        let plan = RowPlan {
            // Only `bench::with_handles` reads the mode; the rows here are back to back.
            mode: Mode::BackToBack,
            schedule,
            hang_after: args.run.hang_seconds,
            pin: args.pin,
            delay: 0,
        };
        Config { settings, plan }
    }

    /// The columns of the grid of `members` members.
    pub fn columns_for(&self, members: usize) -> usize {
        self.settings
            .columns
            .unwrap_or_else(|| super::grid::default_columns(members))
    }
}

/// Parses one entry of `--threads`: a member count of at least 2.
pub fn parse_members(text: &str) -> Result<usize, String> {
    match parse_thread_count(text)? {
        1 => Err("a team collective needs at least 2 members to measure anything".to_owned()),
        n => Ok(n),
    }
}

/// Parses `--columns`: a whole number from 1.
fn parse_columns(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) | Err(_) => Err(format!(
            "{text:?} is not a number of columns (a whole number from 1)"
        )),
        Ok(columns) => Ok(columns),
    }
}

/// Parses one length in u64 words from 1 to `most`, written as sizes are (`4096`, `100k`).
fn parse_length(text: &str, what: &str, most: usize) -> Result<usize, String> {
    match parse_scaled(text) {
        None => Err(format!(
            "{text:?} is not {what} (a whole number of u64 words, such as 4096 or 100k)"
        )),
        Some(0) => Err(format!("{what} starts at 1 word")),
        Some(words) if words > most => Err(format!(
            "{words} words is more than the {most} allowed for {what}"
        )),
        Some(words) => Ok(words),
    }
}

/// Parses one entry of `--words` and `--sync-words`.
pub fn parse_words(text: &str) -> Result<usize, String> {
    parse_length(text, "a broadcast length", MAX_WORDS)
}

/// Parses one entry of `--blocks`.
pub fn parse_block(text: &str) -> Result<usize, String> {
    parse_length(text, "an alltoall block", MAX_BLOCK)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// The options of `collectives {options}` (split at spaces).
    pub fn parse(options: &str) -> Result<CollectivesArgs, clap::Error> {
        let options = options.split_whitespace();
        CollectivesArgs::try_parse_from(std::iter::once("collectives").chain(options))
    }

    fn rejection(extra: &str) -> String {
        match parse(extra) {
            Ok(args) => panic!("{extra:?} was accepted as {args:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn defaults_are_the_issues_sweep() {
        let config = Config::from_args(&parse("").unwrap());
        assert_eq!(config.settings.members, DEFAULT_MEMBERS);
        assert_eq!(config.settings.teams, Shape::ALL);
        assert_eq!(config.settings.parts, Part::ALL);
        assert_eq!(config.settings.columns, None);
        assert_eq!(config.columns_for(64), 8);
        let words = default_words();
        assert_eq!(words.first(), Some(&4));
        assert_eq!(words[words.len() - 2..], [65_536, 100_000]);
        assert_eq!(words.len(), 16);
        assert_eq!(config.settings.broadcast_words, words);
        assert_eq!(config.settings.alltoall_blocks, DEFAULT_BLOCKS);
        assert_eq!(config.settings.sync_mode_words, DEFAULT_SYNC_WORDS);
        let schedule = config.plan.schedule;
        assert_eq!(schedule.samples, 10);
        assert_eq!(schedule.target_sample, Duration::from_millis(20));
        assert_eq!(schedule.episodes, None);
        assert_eq!(config.plan.mode, Mode::BackToBack);
        assert!(!config.plan.pin);
    }

    #[test]
    fn every_option_parses() {
        let args = parse(
            "--threads 8,2,8 --teams column,all --columns 3 --ops sync-modes,barrier \
             --words 100k,4,1_024 --blocks 2 --sync-words 16 --time 0.05 --samples 5 --pin \
             --hang-seconds 5 --json c.json --csv c.csv",
        )
        .unwrap();
        let config = Config::from_args(&args);
        assert_eq!(config.settings.members, vec![2, 8]);
        assert_eq!(config.settings.teams, vec![Shape::All, Shape::Column]);
        assert_eq!(config.columns_for(64), 3);
        assert_eq!(config.settings.parts, vec![Part::Barrier, Part::SyncModes]);
        assert_eq!(config.settings.broadcast_words, vec![4, 1024, 100_000]);
        assert_eq!(config.settings.alltoall_blocks, vec![2]);
        assert_eq!(config.settings.sync_mode_words, vec![16]);
        assert_eq!(config.plan.schedule.samples, 5);
        assert_eq!(
            config.plan.schedule.target_sample,
            Duration::from_millis(10)
        );
        assert!(config.plan.pin);
        assert_eq!(config.plan.hang_after, Duration::from_secs(5));
        assert_eq!(
            args.run.json.as_deref(),
            Some(std::path::Path::new("c.json"))
        );
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        assert!(rejection("--threads 1").contains("at least 2 members"));
        assert!(rejection("--threads two").contains("not a thread count"));
        assert!(rejection("--threads 100000").contains("allowed"));
        assert!(rejection("--teams diagonal").contains("possible values: all, row, column"));
        assert!(rejection("--columns 0").contains("not a number of columns"));
        assert!(rejection("--ops scan").contains("possible values: barrier, allreduce"));
        assert!(rejection("--words 0").contains("starts at 1 word"));
        assert!(rejection("--words lots").contains("not a broadcast length"));
        assert!(rejection("--words 1,,2").contains("not a broadcast length"));
        assert!(rejection("--words 99999999").contains("allowed for a broadcast length"));
        assert!(rejection("--blocks 2000000").contains("allowed for an alltoall block"));
        assert!(rejection("--sync-words x").contains("not a broadcast length"));
        assert!(rejection("--rounds 0").contains("0"));
    }
}
