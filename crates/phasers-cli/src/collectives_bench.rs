//! `phasers bench collectives`: the team collectives as seed 004's MPP suite measures them,
//! against the barriers and copies users have without them, in one run.
//!
//! At each member count N, every part (see [`Part`]) runs its rows: the library's collective on a
//! fresh team of N members, on the team of all and on `split_grid`'s row and column teams (all of
//! which run at once), and, on the team of all, the baselines: `std::sync::Barrier`, our
//! `Barrier` with `Algorithm::Auto` (the fastest barrier the library offers; a team's barrier pays
//! for more: checking, sync modes, sub-teams), OpenMP's barrier, reduction and a broadcast through
//! a shared buffer (libgomp, `baselines/omp_collectives.c`; one parallel region per round, timed
//! between two barriers; no sub-teams short of nested regions), and a one-thread memcpy of each
//! broadcast length, which a broadcast's bandwidth is a fraction of. Every row times back-to-back
//! operations in rounds between two meetings of its threads ([`Pacing::Looped`]); every result is
//! checked. The run ends with the figures the issue asks for (see [`figures`]).

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use phasers::{Algorithm, Barrier, Member, Op, SyncMode, Team};
use phasers_cli::harness::args::{command_line, parse_scaled, parse_seconds, sorted_unique};
use phasers_cli::harness::engine::{self, Measured, Pacing, Plan};
use phasers_cli::harness::files;
use phasers_cli::harness::floor;
use phasers_cli::harness::footnotes::{fit, wrap};
use phasers_cli::harness::header::{warn_if_debug_build, Header};
use phasers_cli::harness::memory;
use phasers_cli::harness::noise;
use phasers_cli::harness::progress;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick};
use phasers_cli::harness::render::{self, Column, Format, Layout};
use phasers_cli::harness::result::{Fields, Kind, Report, Row, Settings};
use phasers_cli::harness::run_args::RunArgs;
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::stats;
use phasers_cli::harness::table::ratio as ratio_text;
use phasers_cli::harness::threads::parse_thread_count;
use phasers_cli::harness::verbosity;
use phasers_cli::harness::watchdog::{panic_message, Watch};
use phasers_cli::harness::work::{Failure, Work, WrongResult};
use serde_json::Value;

use crate::native::{omp_collective_round, OmpCollective, SETTLE};

/// Member counts of a default run: 2 to 64, doubling.
pub const DEFAULT_MEMBERS: [usize; 6] = [2, 4, 8, 16, 32, 64];
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
/// Bytes per word.
const WORD_BYTES: usize = std::mem::size_of::<u64>();

/// The broadcast lengths of the MPP suite (seed 004's figure 2: 4 words, doubling while below
/// 100,000), and 100,000 itself, the length of the issue's bandwidth figure.
pub fn default_words() -> Vec<usize> {
    let mut words: Vec<usize> = std::iter::successors(Some(4), |&words| Some(words * 2))
        .take_while(|&words| words < 100_000)
        .collect();
    words.push(100_000);
    words
}

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

    /// `--hang-seconds`, `--json`, `--csv`, `--verbose`.
    #[command(flatten)]
    pub run: RunArgs,
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

/// Which teams a row's members call the collective on (seed 004's figure 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Shape {
    /// One team of every member.
    All,
    /// `split_grid`'s row teams: the members with the same `rank / columns`.
    Row,
    /// `split_grid`'s column teams: the members with the same `rank % columns`.
    Column,
}

impl Shape {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        ["all", "row", "column"][self as usize]
    }
}

/// One part of a run (`--ops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Part {
    /// `member.barrier()`, with std::sync::Barrier, our `Barrier` (auto) and OpenMP's barrier.
    Barrier,
    /// Allreduce of one u64 received by every member, with OpenMP's reduction read by every
    /// thread.
    Allreduce,
    /// Broadcast from a rotating root at each `--words`, with a memcpy of the same length and
    /// OpenMP's broadcast through a shared buffer.
    Broadcast,
    /// Alltoall at each `--blocks`.
    Alltoall,
    /// Barrier, one-u64 allreduce and 8-word broadcast on a checked team and on an unchecked one.
    Checked,
    /// Broadcast at each `--sync-words` with every sync mode (AllSync, MySync, NoSync).
    SyncModes,
}

impl Part {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        let names = [
            "barrier",
            "allreduce",
            "broadcast",
            "alltoall",
            "checked",
            "sync-modes",
        ];
        names[self as usize]
    }
}

/// The timed operation and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    /// `member.barrier()` and the barriers it is compared with.
    Barrier,
    /// An allreduce of one u64 whose sum every member receives (`Op::Sum`).
    Allreduce,
    /// A broadcast of `words` u64 from a root that rotates: the iteration modulo the team size.
    Broadcast { words: usize },
    /// An alltoall in which every member sends `block` u64 to every member.
    Alltoall { block: usize },
    /// `copy_from_slice` of `words` u64 on one thread.
    Memcpy { words: usize },
}

/// What `--ops checked` runs on a checked and an unchecked team: the calls issue 18 sets the
/// checked ÷ unchecked target for.
const CHECKED_OPERATIONS: [Operation; 3] = [
    Operation::Barrier,
    Operation::Allreduce,
    Operation::Broadcast { words: 8 },
];

impl Operation {
    /// The point keys `op`, and `words` or `block` where it has a size.
    fn at(self, part: Part) -> Fields {
        let at = Fields::default().with("part", part.name());
        match self {
            Operation::Barrier => at.with("op", "barrier"),
            Operation::Allreduce => at.with("op", "allreduce"),
            Operation::Broadcast { words } => at.with("op", "broadcast").with("words", words),
            Operation::Alltoall { block } => at.with("op", "alltoall").with("block", block),
            Operation::Memcpy { words } => at.with("op", "memcpy").with("words", words),
        }
    }

    /// What a table says it is: `broadcast 4096 words`, `alltoall 64 words/block`.
    fn label(self) -> String {
        let count = |words| match words {
            1 => "1 word".to_owned(),
            words => format!("{words} words"),
        };
        match self {
            Operation::Barrier => "barrier".to_owned(),
            Operation::Allreduce => "allreduce 1 u64".to_owned(),
            Operation::Broadcast { words } => format!("broadcast {}", count(words)),
            Operation::Alltoall { block } => format!("alltoall {}/block", count(block)),
            Operation::Memcpy { words } => format!("memcpy {}", count(words)),
        }
    }

    /// The bytes one operation delivers to one receiver: a broadcast's or memcpy's payload.
    fn payload_bytes(self) -> Option<u64> {
        match self {
            Operation::Broadcast { words } | Operation::Memcpy { words } => {
                Some((words * WORD_BYTES) as u64)
            }
            _ => None,
        }
    }

    /// The OpenMP counterpart, if it has one, with its row name.
    fn openmp(self) -> Option<(OmpCollective, &'static str)> {
        match self {
            Operation::Barrier => Some((OmpCollective::Barrier, OMP_BARRIER)),
            Operation::Allreduce => Some((OmpCollective::AllreduceOne, OMP_ALLREDUCE)),
            Operation::Broadcast { words } => Some((OmpCollective::Broadcast { words }, OMP_BCAST)),
            Operation::Alltoall { .. } | Operation::Memcpy { .. } => None,
        }
    }

    /// A generous estimate of the bytes a row among `members` needs at once: every member's
    /// buffers, as much again for whatever the library or OpenMP keeps, and OpenMP's buffer.
    fn bytes_needed(self, members: usize) -> u64 {
        let members = members as u64;
        let words = match self {
            Operation::Barrier | Operation::Allreduce => 0,
            Operation::Broadcast { words } => (2 * members + 1) * words as u64,
            Operation::Alltoall { block } => 4 * members * members * block as u64,
            Operation::Memcpy { words } => 2 * words as u64,
        };
        words.saturating_mul(WORD_BYTES as u64)
    }
}

/// The name of the library's rows.
const TEAM: &str = "team";
/// The name of the `std::sync::Barrier` row.
const STD: &str = "std::sync::Barrier";
/// The name of our `Barrier` row.
const OURS: &str = "phasers::Barrier auto";
/// The names of the OpenMP rows.
const OMP_BARRIER: &str = "omp barrier";
const OMP_ALLREDUCE: &str = "omp reduction(+:x), read by all";
const OMP_BCAST: &str = "omp broadcast via shared buffer";
/// The name of the memcpy rows.
const MEMCPY: &str = "memcpy";

/// Who runs a row.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Contender {
    /// The library's collective on the teams of `shape`; `checked: None` for the library's
    /// default (checked, unless `PHASERS_CHECKED` says otherwise).
    Team {
        shape: Shape,
        checked: Option<bool>,
        sync: SyncMode,
    },
    Std,
    Ours,
    OpenMp,
    Memcpy,
}

/// A run, resolved from [`CollectivesArgs`].
struct Config {
    members: Vec<usize>,
    teams: Vec<Shape>,
    columns: Option<usize>,
    parts: Vec<Part>,
    words: Vec<usize>,
    blocks: Vec<usize>,
    sync_words: Vec<usize>,
    rounds: usize,
    plan: Plan,
}

impl Config {
    fn from_args(args: &CollectivesArgs) -> Self {
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
        // Not every collective holds all members back until everyone has arrived (a broadcast's
        // root, a `NoSync` call): rounds are never cut, and the closing meeting, inside the timed
        // span, waits for the last thread. One control barrier per round is a few hundred
        // nanoseconds against a round of `--time / --samples`.
        let plan = Plan {
            pin: args.pin,
            ..Plan::new(schedule, Pacing::Looped, args.run.hang_seconds)
        };
        Config {
            members: sorted(&args.threads, DEFAULT_MEMBERS.to_vec()),
            teams: sorted_unique(
                args.teams
                    .clone()
                    .unwrap_or(Shape::value_variants().to_vec()),
            ),
            columns: args.columns,
            parts: sorted_unique(args.ops.clone().unwrap_or(Part::value_variants().to_vec())),
            words: sorted(&args.words, default_words()),
            blocks: sorted(&args.blocks, DEFAULT_BLOCKS.to_vec()),
            sync_words: sorted(&args.sync_words, DEFAULT_SYNC_WORDS.to_vec()),
            rounds: usize::from(args.rounds),
            plan,
        }
    }

    /// The columns of the grid of `members` members: `--columns`, or the smallest power of two
    /// whose square holds them (8 x 8 for 64, rows of 8 and columns of 4 for 32).
    fn columns_for(&self, members: usize) -> usize {
        let square = (0..).map(|power| 1 << power).find(|c| c * c >= members);
        self.columns.unwrap_or(square.unwrap_or(1))
    }

    fn settings(&self, contenders: Vec<String>) -> Settings {
        let schedule = &self.plan.schedule;
        let names = |names: Vec<&str>| Value::from(names);
        Settings {
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
            threads: self.members.clone(),
            contenders,
            pinned: self.plan.pin,
            debug_build: cfg!(debug_assertions),
            own: Fields::default()
                .with(
                    "teams",
                    names(self.teams.iter().map(|s| s.name()).collect()),
                )
                .with("columns", self.columns)
                .with(
                    "parts",
                    names(self.parts.iter().map(|p| p.name()).collect()),
                )
                .with("broadcast_words", self.words.clone())
                .with("alltoall_blocks", self.blocks.clone())
                .with("sync_mode_words", self.sync_words.clone())
                .with(
                    "time_per_row_s",
                    (schedule.target_sample * schedule.samples as u32).as_secs_f64(),
                )
                .with("samples", schedule.samples)
                .with("rounds", self.rounds)
                .with(
                    "target_sample_ms",
                    schedule.target_sample.as_secs_f64() * 1e3,
                )
                .with("row_budget_s", schedule.row_budget.as_secs_f64()),
        }
    }
}

/// Runs `phasers bench collectives`.
pub fn run(args: &CollectivesArgs) -> Result<(), String> {
    let config = Config::from_args(args);
    let outputs = args.run.open(Vec::new())?;
    let provenance = Provenance::now("bench collectives", command_line());
    let floor = floor::measure(floor::BRIEFLY);
    let what = "team collectives (seed 004's MPP suite) against std::sync::Barrier, our Barrier, \
                OpenMP and memcpy";
    let method = config.settings(Vec::new()).method;
    let header = Header::with_floors(&provenance, what, &method, &floor).line(
        "units",
        "per operation, min and median over the samples; GB/s: the payload each receiver gets \
         over the median; of memcpy: a one-thread memcpy's median over the row's; ÷omp: the \
         median over the OpenMP row's of the same operation (below 1: ours is faster)",
    );
    println!("{}", header.finish());
    warn_if_debug_build(Some("teams check every call"));
    let mut sweep = Sweep {
        config: &config,
        available: memory::available(),
        rows: Vec::new(),
        memcpy: HashMap::new(),
    };
    let bar = progress::bar(config.members.len() * config.parts.len(), "parts");
    for &members in &config.members {
        let mut shown = Vec::new();
        for &part in &config.parts {
            bar.set_message(format!("N = {members}, {}", part.name()));
            shown.extend(sweep.part(part, members));
            bar.inc(1);
        }
        let text = tables(members, config.columns_for(members), &shown);
        bar.suspend(|| println!("{text}"));
    }
    bar.finish_and_clear();
    let mut contenders: Vec<String> = Vec::new();
    for row in &sweep.rows {
        if !contenders.contains(&row.contender) {
            contenders.push(row.contender.clone());
        }
    }
    let report = Report {
        provenance,
        settings: config.settings(contenders),
        floor: Some(floor),
        rows: sweep.rows,
        ratios: Vec::new(),
    };
    println!("{}", figures(&report.rows, &config));
    files::write(outputs, &report, &file_layout(), &[])?;
    files::failures(&report.rows, &["op", "words", "block", "team"])
}

/// The rows of a run, and the memcpy of each broadcast length, measured the first time it is
/// needed.
struct Sweep<'a> {
    config: &'a Config,
    /// The memory the kernel says is available, for skipping rows that would not fit.
    available: Option<u64>,
    rows: Vec<Row>,
    memcpy: HashMap<usize, Row>,
}

impl Sweep<'_> {
    /// Measures `part` at `members`; returns the rows its table shows (with the memcpy rows of
    /// its broadcasts, which are measured once per run).
    fn part(&mut self, part: Part, members: usize) -> Vec<Row> {
        let mut shown = Vec::new();
        let all = |checked, sync| Contender::Team {
            shape: Shape::All,
            checked,
            sync,
        };
        match part {
            Part::Barrier | Part::Allreduce => {
                let op = [Operation::Barrier, Operation::Allreduce][part as usize];
                shown.extend(self.teams(part, op, members));
                if part == Part::Barrier {
                    shown.push(self.row(part, op, Contender::Ours, members));
                    shown.push(self.row(part, op, Contender::Std, members));
                }
                shown.push(self.row(part, op, Contender::OpenMp, members));
            }
            Part::Broadcast => {
                for &words in &self.config.words {
                    let copy = self.memcpy(words);
                    let op = Operation::Broadcast { words };
                    let mut rows = self.teams(part, op, members);
                    rows.push(self.row(part, op, Contender::OpenMp, members));
                    for row in &mut rows {
                        let fraction =
                            quotient(copy.median(), row.median()).filter(|_| copy.error.is_none());
                        row.extra.set("fraction_of_memcpy", fraction);
                    }
                    shown.push(copy);
                    shown.extend(rows);
                }
            }
            Part::Alltoall => {
                for &block in &self.config.blocks {
                    shown.extend(self.teams(part, Operation::Alltoall { block }, members));
                }
            }
            Part::Checked => {
                // What checking costs is a few nanoseconds, far below how much a shared machine
                // drifts between two rows measured a second apart. So each round measures a
                // checked row and its unchecked twin back to back, alternating which goes first,
                // and figure (d) divides their medians round by round.
                let mut twins = vec![[Vec::new(), Vec::new()]; CHECKED_OPERATIONS.len()];
                for round in 0..self.config.rounds {
                    for (op, twin) in CHECKED_OPERATIONS.into_iter().zip(&mut twins) {
                        for checked in [round % 2 == 0, round % 2 != 0] {
                            let team = all(Some(checked), SyncMode::AllSync);
                            twin[usize::from(!checked)].push(self.row(part, op, team, members));
                        }
                    }
                }
                let merged = twins.into_iter().flatten().map(|rounds| {
                    let mut row = merge(rounds);
                    set_bandwidth(&mut row, members - 1);
                    row
                });
                shown.extend(merged);
            }
            Part::SyncModes => {
                for &words in &self.config.sync_words {
                    for sync in [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync] {
                        let op = Operation::Broadcast { words };
                        shown.push(self.row(part, op, all(None, sync), members));
                    }
                }
            }
        }
        self.rows
            .extend(shown.iter().filter(|row| row.kind != Kind::Floor).cloned());
        shown
    }

    /// `op` on every team shape of the run.
    fn teams(&self, part: Part, op: Operation, members: usize) -> Vec<Row> {
        let shapes = self.config.teams.iter();
        shapes
            .map(|&shape| {
                let team = Contender::Team {
                    shape,
                    checked: None,
                    sync: SyncMode::AllSync,
                };
                self.row(part, op, team, members)
            })
            .collect()
    }

    /// The memcpy of `words` u64, measured the first time it is asked for.
    fn memcpy(&mut self, words: usize) -> Row {
        if let Some(row) = self.memcpy.get(&words) {
            return row.clone();
        }
        let op = Operation::Memcpy { words };
        let row = self.row(Part::Broadcast, op, Contender::Memcpy, 1);
        self.rows.push(row.clone());
        self.memcpy.insert(words, row.clone());
        row
    }

    /// One row, unless its teams have one member each or it would not fit in memory.
    fn row(&self, part: Part, op: Operation, contender: Contender, members: usize) -> Row {
        let columns = self.config.columns_for(members);
        let mut row = blank(part, op, contender, members, columns);
        let teams = match contender {
            Contender::Team { shape, .. } => team_sizes(shape, members, columns).len(),
            _ => 1,
        };
        let skip = match contender {
            Contender::Team { shape, .. } if teams == members => Some(format!(
                "split_grid({columns}) makes {} teams of one member: nothing to synchronize",
                shape.name()
            )),
            _ => memory::too_big(op.bytes_needed(members), self.available),
        };
        if let Some(why) = skip {
            row.add_note(format!("not run: {why}"));
            return row;
        }
        measure(&mut row, op, contender, members, columns, &self.config.plan);
        let receivers = match contender {
            // Every member of a team but its root receives each broadcast.
            Contender::Team { .. } => members - teams,
            Contender::Memcpy => 1,
            _ => members - 1,
        };
        set_bandwidth(&mut row, receivers);
        row
    }
}

/// The payload each receiver gets over the median, in GB/s, and times the `receivers`.
fn set_bandwidth(row: &mut Row, receivers: usize) {
    let bandwidth = quotient(row.value("payload_bytes"), row.median());
    row.extra.set("bandwidth_gb_s", bandwidth);
    let aggregate = bandwidth.map(|gb_s| gb_s * receivers as f64);
    row.extra.set("aggregate_gb_s", aggregate);
}

/// `numerator / denominator`, when both are known and the denominator is positive.
fn quotient(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    Some(numerator? / denominator.filter(|d| *d > 0.0)?)
}

/// The row of `contender` running `op` among `members`, nothing measured yet: point keys `part,
/// op, words | block` and, for teams, `team, columns, team_sizes, checked, sync_mode`.
fn blank(part: Part, op: Operation, contender: Contender, members: usize, columns: usize) -> Row {
    let (name, kind) = match contender {
        Contender::Team { .. } => (TEAM, Kind::Ours),
        Contender::Std => (STD, Kind::Baseline),
        Contender::Ours => (OURS, Kind::Reference),
        Contender::OpenMp => (op.openmp().map_or("omp", |(_, name)| name), Kind::Baseline),
        Contender::Memcpy => (MEMCPY, Kind::Floor),
    };
    let mut at = op.at(part);
    if let Contender::Team {
        shape,
        checked,
        sync,
    } = contender
    {
        let sizes = team_sizes(shape, members, columns);
        at = at
            .with("team", shape.name())
            .with("columns", (shape != Shape::All).then_some(columns))
            .with("team_sizes", sizes)
            .with("checked", checked)
            .with("sync_mode", sync.name());
    }
    let mut row = Row::new(name, kind, members, at);
    row.extra.set("payload_bytes", op.payload_bytes());
    if let Some(Value::Array(sizes)) = row.at.get("team_sizes") {
        let largest = sizes.iter().filter_map(Value::as_u64).max();
        row.extra = (row.extra.clone())
            .with("teams", sizes.len())
            .with("largest_team", largest);
    }
    row
}

/// Measures `row`: `contender` running `op` among `members`, every round looped.
fn measure(
    row: &mut Row,
    op: Operation,
    contender: Contender,
    members: usize,
    columns: usize,
    plan: &Plan,
) {
    let measured = match contender {
        Contender::Team {
            shape,
            checked,
            sync,
        } => {
            let team = match checked {
                Some(checked) => Team::builder(members).checked(checked).build(),
                None => Team::new(members),
            };
            let placed = team
                .map_err(|error| format!("cannot build the team: {error}"))
                .and_then(|team| {
                    row.at.set("checked", team.is_checked());
                    place(&team, shape, columns)
                });
            match placed {
                Ok(placed) => team_rows(row, placed, op, sync, plan),
                Err(error) => Measured::failed(plan.schedule, error),
            }
        }
        Contender::Std => {
            let barrier = std::sync::Barrier::new(members);
            looped(row, vec![&barrier; members], plan)
        }
        Contender::Ours => match Barrier::with_algorithm(members, Algorithm::Auto) {
            Ok(barrier) => {
                row.resolved = Some(barrier.algorithm().name().to_owned());
                row.wait_policy = Some(barrier.wait_policy().name().to_owned());
                looped(row, barrier.participants(), plan)
            }
            Err(error) => Measured::failed(plan.schedule, format!("cannot build: {error}")),
        },
        Contender::OpenMp => {
            let Some((work, _)) = op.openmp() else {
                return;
            };
            let measured = engine::calls(plan, |planned, _| {
                let round = omp_collective_round(members, planned, work, plan.pin)?;
                Ok((round.ran, round.elapsed))
            });
            // libgomp's idle threads keep spinning a while: the next row must not share the
            // cores with them.
            std::thread::sleep(SETTLE);
            measured
        }
        Contender::Memcpy => {
            let words = op.payload_bytes().unwrap_or(0) as usize / WORD_BYTES;
            let source = (0..words as u64).collect();
            looped(row, vec![Copy(source, vec![0; words])], plan)
        }
    };
    let wrong = row.error.take();
    row.record(measured, &plan.schedule);
    // A wrong result is the root cause of anything that followed.
    row.error = wrong.or(row.error.take());
}

/// One thread per work, in looped rounds.
fn looped<W: Work>(row: &Row, works: Vec<W>, plan: &Plan) -> Measured {
    let watch = Watch::new(&row.contender, works.len(), plan.hang_after);
    engine::threads(works, plan, &watch)
}

/// The placed members of a team row each running `op`; the first wrong result goes into `row`.
fn team_rows(
    row: &mut Row,
    placed: Vec<Placed>,
    op: Operation,
    sync: SyncMode,
    plan: &Plan,
) -> Measured {
    let wrong = WrongResult::default();
    let mut placed = placed;
    for member in &mut placed {
        member.member.set_sync_mode(sync);
    }
    let measured = match op {
        Operation::Barrier => drive(row, placed, &wrong, plan, |_| BarrierCall),
        Operation::Allreduce => drive(row, placed, &wrong, plan, |_| Allreduce([0])),
        Operation::Broadcast { words } => drive(row, placed, &wrong, plan, |m| {
            Broadcast::new(m.rank(), words)
        }),
        Operation::Alltoall { block } => drive(row, placed, &wrong, plan, |m| {
            Alltoall::new(m.rank(), m.parties(), block)
        }),
        Operation::Memcpy { .. } => {
            let error = "a memcpy is not a team collective".to_owned();
            Measured::failed(plan.schedule, error)
        }
    };
    row.error = wrong.into_message();
    measured
}

/// Times one collective per placed member, each made by `make` from its member.
fn drive<C: Collective>(
    row: &Row,
    placed: Vec<Placed>,
    wrong: &WrongResult,
    plan: &Plan,
    make: impl Fn(&Member) -> C,
) -> Measured {
    let timed = placed
        .into_iter()
        .map(|placed| Timed {
            work: make(&placed.member),
            placed,
            wrong,
        })
        .collect();
    looped(row, timed, plan)
}

/// One row from its rounds (`--ops checked`), in the order measured: every sample, the median
/// of each round and their spread, and the statistics over all the samples; the first error or
/// note of a round is the row's. (`harness::interleave`'s merge, once it lands.)
fn merge(rounds: Vec<Row>) -> Row {
    let mut rounds = rounds.into_iter();
    let mut merged = rounds
        .next()
        .unwrap_or_else(|| Row::new(TEAM, Kind::Ours, 0, Fields::default()));
    merged.round_samples = vec![merged.raw_ns.len()];
    merged.round_medians_ns = merged.median().into_iter().collect();
    for round in rounds {
        merged.round_medians_ns.extend(round.median());
        merged.round_samples.push(round.raw_ns.len());
        merged.raw_ns.extend(&round.raw_ns);
        merged.samples_ns.extend(&round.samples_ns);
        merged.sample_iterations.extend(&round.sample_iterations);
        merged.samples_wanted += round.samples_wanted;
        merged.row_s += round.row_s;
        merged.error = merged.error.or(round.error);
        merged.note = merged.note.or(round.note);
    }
    merged.summary = stats::summarize(&merged.samples_ns);
    merged.spread = noise::spread(&merged.round_medians_ns);
    merged
}

/// One member's side of a collective under test: its call in iteration `iteration`, and the
/// check of that iteration's result (a compare or two per call, one word per block, so a stale or
/// misplaced result is caught without timing a full comparison; iteration 0 checks every word).
trait Collective: Send {
    /// The call of iteration `iteration`.
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error>;

    /// What is wrong with what member `rank` of a team of `size` received in `iteration`.
    fn check(&self, rank: usize, size: usize, iteration: u64) -> Option<String>;
}

/// A member's collective, timed: the call, then the check, once per iteration.
struct Timed<'a, C> {
    placed: Placed,
    work: C,
    wrong: &'a WrongResult,
}

impl<C: Collective> Work for Timed<'_, C> {
    const SYNCHRONIZED: bool = false;

    #[inline]
    fn iteration(&mut self, index: u64) -> Result<Option<&'static str>, Failure> {
        let member = &mut self.placed.member;
        self.work.call(member, index)?;
        let (rank, size) = (member.rank(), member.parties());
        if let Some(message) = self.work.check(rank, size, index) {
            self.wrong.record(|| message);
        }
        Ok(None)
    }
}

/// `member.barrier()`: nothing to check.
struct BarrierCall;

impl Collective for BarrierCall {
    #[inline]
    fn call(&mut self, member: &mut Member, _: u64) -> Result<(), phasers::Error> {
        member.barrier()
    }

    fn check(&self, _: usize, _: usize, _: u64) -> Option<String> {
        None
    }
}

/// The MPP suite's `mpp_accum_long` (seed 004's figure 1): a sum of one u64 per member, returned
/// to all. Each member contributes `rank + 1 + iteration`, so every iteration has a different sum
/// and a stale one is caught.
struct Allreduce([u64; 1]);

/// The sum of every contribution of a team of `size` in `iteration`.
fn expected_sum(size: usize, iteration: u64) -> u64 {
    let size = size as u64;
    size * (size + 1) / 2 + size * iteration
}

impl Collective for Allreduce {
    #[inline]
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error> {
        let mine = [member.rank() as u64 + 1 + iteration];
        member.allreduce(&mine, &mut self.0, Op::Sum)
    }

    fn check(&self, rank: usize, size: usize, iteration: u64) -> Option<String> {
        let (got, expected) = (self.0[0], expected_sum(size, iteration));
        (got != expected).then(|| {
            format!(
                "wrong result: rank {rank}'s allreduce of iteration {iteration} was {got}, not \
                 {expected}"
            )
        })
    }
}

/// The MPP suite's broadcast (seed 004's figure 2) from root `iteration % size`. Every member
/// starts with a buffer of its own; the root stamps word 0 with the iteration before each call,
/// as a program's root would have produced new data.
struct Broadcast(Vec<u64>);

impl Broadcast {
    fn new(rank: usize, words: usize) -> Self {
        Broadcast((0..words.max(1)).map(|i| broadcast_word(rank, i)).collect())
    }
}

/// Word `index` of rank `rank`'s buffer before the first broadcast: different for every rank, so
/// data from the wrong root shows.
fn broadcast_word(rank: usize, index: usize) -> u64 {
    ((rank as u64) << 40) ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Collective for Broadcast {
    #[inline]
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error> {
        let root = (iteration % member.parties() as u64) as usize;
        if member.rank() == root {
            // Far from every initial word 0 of a plausible rank.
            self.0[0] = u64::MAX - iteration;
        }
        member.broadcast(root, &mut self.0)
    }

    fn check(&self, rank: usize, size: usize, iteration: u64) -> Option<String> {
        let index = if self.0[0] != u64::MAX - iteration {
            Some(0)
        } else if iteration == 0 {
            (1..self.0.len()).find(|&i| self.0[i] != broadcast_word(0, i))
        } else {
            None
        }?;
        let root = iteration % size as u64;
        Some(format!(
            "wrong result: rank {rank} received a wrong word {index} from root {root} in \
             iteration {iteration}"
        ))
    }
}

/// The MPP suite's global transpose: input block `j` of rank `r` goes to rank `j`, where it
/// becomes output block `r`. Before each call every member stamps word 0 of each input block with
/// the iteration, sender and receiver.
struct Alltoall {
    block: usize,
    input: Vec<u64>,
    output: Vec<u64>,
}

impl Alltoall {
    fn new(rank: usize, size: usize, block: usize) -> Self {
        let block = block.max(1);
        let input = (0..size * block).map(|i| alltoall_word(rank, i / block, i % block));
        Alltoall {
            block,
            input: input.collect(),
            output: vec![0; size * block],
        }
    }
}

/// Word `index` of the block that rank `from` sends to rank `to`, before any stamp.
fn alltoall_word(from: usize, to: usize, index: usize) -> u64 {
    ((from as u64) << 48) ^ ((to as u64) << 32) ^ index as u64
}

/// Word 0 of the block `from` sends to `to` in `iteration`: different for every iteration (below
/// 2^32), sender and receiver (below 2^16, a team's limit).
fn alltoall_stamp(iteration: u64, from: usize, to: usize) -> u64 {
    (iteration << 32) ^ ((from as u64) << 16) ^ to as u64
}

impl Collective for Alltoall {
    #[inline]
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error> {
        let rank = member.rank();
        for (to, block) in self.input.chunks_exact_mut(self.block).enumerate() {
            block[0] = alltoall_stamp(iteration, rank, to);
        }
        member.alltoall(&self.input, &mut self.output)
    }

    fn check(&self, rank: usize, _: usize, iteration: u64) -> Option<String> {
        let blocks = self.output.chunks_exact(self.block).enumerate();
        let (from, index) = blocks.into_iter().find_map(|(from, block)| {
            if block[0] != alltoall_stamp(iteration, from, rank) {
                return Some((from, 0));
            }
            let wrong = (1..block.len()).find(|&i| block[i] != alltoall_word(from, rank, i));
            wrong.filter(|_| iteration == 0).map(|index| (from, index))
        })?;
        Some(format!(
            "wrong result: rank {rank}'s word {index} from rank {from} was wrong in iteration \
             {iteration}"
        ))
    }
}

/// One thread's `copy_from_slice`, source and destination warm in its caches as far as they fit.
struct Copy(Vec<u64>, Vec<u64>);

impl Work for Copy {
    const SYNCHRONIZED: bool = false;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        self.1.copy_from_slice(&self.0);
        // The copy is never read: without this the compiler could drop every copy but one.
        black_box(&mut self.1);
        Ok(None)
    }
}

/// The size of each team of `shape` when `members` members are laid out in rows of `columns`
/// (the last row may be short).
fn team_sizes(shape: Shape, members: usize, columns: usize) -> Vec<usize> {
    let columns = columns.max(1);
    match shape {
        Shape::All => vec![members],
        Shape::Row => (0..members.div_ceil(columns))
            .map(|row| columns.min(members - row * columns))
            .collect(),
        Shape::Column => (0..columns.min(members))
            .map(|column| (members - column).div_ceil(columns))
            .collect(),
    }
}

/// A member of the team a row runs on. A sub-team's member keeps the member of the team of all
/// that it was split from, so the parent team outlives the row whatever the library does with it.
struct Placed {
    member: Member,
    _parent: Option<Member>,
}

/// One member per rank of `team` (the team of all), on the teams of `shape`, in the order of the
/// ranks in `team`. `split_grid` is collective, so each member splits on a thread of its own.
fn place(team: &Team, shape: Shape, columns: usize) -> Result<Vec<Placed>, String> {
    let members = team.participants();
    if members.len() != team.parties() {
        let (parties, got) = (team.parties(), members.len());
        return Err(format!("the team of {parties} handed out {got} members"));
    }
    if shape == Shape::All {
        let placed = members.into_iter().map(|member| Placed {
            member,
            _parent: None,
        });
        return Ok(placed.collect());
    }
    std::thread::scope(|scope| {
        let split = |mut member: Member| {
            let (row, column) = member
                .split_grid(columns)
                .map_err(|error| format!("split_grid({columns}) failed: {error}"))?;
            Ok(Placed {
                member: if shape == Shape::Row { row } else { column },
                _parent: Some(member),
            })
        };
        let threads: Vec<_> = members
            .into_iter()
            .map(|member| scope.spawn(move || split(member)))
            .collect();
        let joined = threads.into_iter().map(|thread| {
            thread.join().unwrap_or_else(|panic| {
                Err(format!("split_grid panicked: {}", panic_message(&*panic)))
            })
        });
        joined.collect()
    })
}

/// The CSV's keys: every point and extra key of the rows.
fn file_layout() -> Layout {
    Layout {
        concise: Vec::new(),
        verbose: Vec::new(),
        block: None,
        hide: &[],
        csv: &[
            "part",
            "op",
            "words",
            "block",
            "team",
            "columns",
            "team_sizes",
            "checked",
            "sync_mode",
            "payload_bytes",
            "bandwidth_gb_s",
            "aggregate_gb_s",
            "fraction_of_memcpy",
            "teams",
            "largest_team",
        ],
        plot: None,
    }
}

/// The columns of one block of a table: the team and what tells twins apart where there are
/// any, bandwidths where the operation has a payload, and `÷omp` where OpenMP has it too.
fn layout(block: &[&Row]) -> Layout {
    let first = block[0];
    let value = |key, head| Column::Value {
        key,
        head,
        format: Format::Fixed(2),
    };
    let mut keys = Vec::new();
    if block.iter().any(|row| row.at.get("team").is_some()) {
        keys.push(Column::Key("team", "team"));
    }
    match first.at.get("part").and_then(Value::as_str) {
        Some("checked") => keys.push(Column::Key("checked", "checked")),
        Some("sync-modes") => keys.push(Column::Key("sync_mode", "sync")),
        _ => {}
    }
    let payload = first.value("payload_bytes").is_some();
    let (mut concise, mut verbose) = (vec![Column::Label], vec![Column::Label]);
    concise.extend(keys.iter().cloned().chain([Column::Min, Column::Median]));
    verbose.extend(keys.into_iter().chain([Column::Iterations, Column::MeanCi]));
    verbose.extend([Column::Min, Column::Median, Column::Rounds]);
    if payload {
        concise.extend([
            value("bandwidth_gb_s", "GB/s"),
            value("fraction_of_memcpy", "of memcpy"),
        ]);
        verbose.extend([
            value("bandwidth_gb_s", "GB/s"),
            value("aggregate_gb_s", "all GB/s"),
            value("fraction_of_memcpy", "of memcpy"),
        ]);
    }
    let omp = block.iter().find(|row| row.contender.starts_with("omp "));
    if let Some(omp) = omp {
        let over = Column::Over {
            head: "÷omp",
            by: Pick::Named(omp.contender.clone().into()),
        };
        concise.push(over.clone());
        verbose.push(over);
    }
    Layout {
        concise,
        verbose,
        ..file_layout()
    }
}

/// The tables of one member count: a heading, then a table per operation and size, in the order
/// measured (each broadcast length after the memcpy of that length).
fn tables(members: usize, columns: usize, rows: &[Row]) -> String {
    let (rows_of, columns_of) = (
        team_sizes(Shape::Row, members, columns),
        team_sizes(Shape::Column, members, columns),
    );
    let cores = phasers::available_cores();
    let heading = format!(
        "N = {members} on {cores} core{}{}; split_grid({columns}): {} row team(s) of {}, {} \
         column team(s) of {}",
        if cores == 1 { "" } else { "s" },
        if phasers::is_oversubscribed(members) {
            " (oversubscribed)"
        } else {
            ""
        },
        rows_of.len(),
        rows_of[0],
        columns_of.len(),
        columns_of[0],
    );
    let mut out = wrap("", &heading);
    let point = |row: &Row| {
        (
            row.field("part").cloned(),
            row.field("op").cloned(),
            row.value("words"),
            row.value("block"),
        )
    };
    let mut start = 0;
    while start < rows.len() {
        let end = (start..rows.len())
            .find(|&i| point(&rows[i]) != point(&rows[start]))
            .unwrap_or(rows.len());
        let block: Vec<&Row> = rows[start..end].iter().collect();
        let title = match rows[start].field("part").and_then(Value::as_str) {
            Some(part @ ("checked" | "sync-modes")) => format!("{}, {part}", label(&rows[start])),
            _ => label(&rows[start]),
        };
        let table = render::table(&title, &block, &layout(&block), verbosity::verbose());
        out.push_str(&table);
        start = end;
    }
    out
}

/// What a table calls the operation of `row`: `broadcast 4096 words`.
fn label(row: &Row) -> String {
    let size = |key| row.value(key).map_or(0, |n| n as usize);
    match row.field("op").and_then(Value::as_str) {
        Some("allreduce") => Operation::Allreduce,
        Some("broadcast") => Operation::Broadcast {
            words: size("words"),
        },
        Some("alltoall") => Operation::Alltoall {
            block: size("block"),
        },
        Some("memcpy") => Operation::Memcpy {
            words: size("words"),
        },
        _ => Operation::Barrier,
    }
    .label()
}

/// The goal of figure (a).
const ALLREDUCE_GOAL: f64 = 1.5;

/// Which row a figure cell reads: a contender at a point (all of whose keys the row must have).
type Pick2 = (&'static str, Fields);

/// The figures a run ends with, as the issue asks for them, every one a ratio of medians measured
/// in the same run: (a) allreduce of one u64 over the barrier, per member count (the goal is 1.5x
/// or less); (b) the longest broadcast as a fraction of a memcpy; (c) ours against OpenMP; (d)
/// what checking costs, round by round; (e) MySync and NoSync broadcasts over AllSync ones.
/// Long lines are wrapped to 100 columns unless `--verbose`.
fn figures(rows: &[Row], config: &Config) -> String {
    let figures = Figures { rows, config };
    let text = [
        figures.allreduce_over_barrier(),
        figures.broadcast_against_memcpy(),
        figures.against_openmp(),
        figures.checked_cost(),
        figures.sync_modes(),
    ]
    .join("\n");
    match verbosity::verbose() {
        true => text,
        false => fit(&text),
    }
}

/// What the figures are drawn from.
struct Figures<'a> {
    rows: &'a [Row],
    config: &'a Config,
}

/// The library's rows of `op` in `part` on the teams of `shape`.
fn team(part: Part, op: Operation, shape: Shape) -> Pick2 {
    (TEAM, op.at(part).with("team", shape.name()))
}

impl Figures<'_> {
    /// The row `pick` chooses at `members` (a memcpy at any), when it ran without error.
    fn find(&self, (contender, at): &Pick2, members: usize) -> Option<&Row> {
        self.rows.iter().find(|row| {
            row.error.is_none()
                && row.contender == *contender
                && (row.threads == members || row.kind == Kind::Floor)
                && at
                    .0
                    .iter()
                    .all(|(key, value)| row.at.get(key) == Some(value))
        })
    }

    fn median(&self, pick: &Pick2, members: usize) -> Option<f64> {
        self.find(pick, members).and_then(Row::median)
    }

    /// A line of `cell(members)` at every member count.
    fn line(&self, label: String, cell: impl Fn(usize) -> String) -> (String, Vec<String>) {
        (
            label,
            self.config.members.iter().map(|&n| cell(n)).collect(),
        )
    }

    /// A line of the median of `top`'s row ÷ `bottom`'s at every member count.
    fn ratio_line(&self, label: String, top: Pick2, bottom: Pick2) -> (String, Vec<String>) {
        self.line(label, |n| {
            ratio_text(self.median(&top, n), self.median(&bottom, n))
        })
    }

    /// `title`, then the lines under a header of the member counts.
    fn grid(&self, title: &str, lines: Vec<(String, Vec<String>)>) -> String {
        let heads: Vec<String> = self
            .config
            .members
            .iter()
            .map(|n| format!("N={n}"))
            .collect();
        ratio::grid(title, &heads, lines)
    }

    fn measured(&self, part: Part) -> bool {
        let name = Value::from(part.name());
        self.rows
            .iter()
            .any(|row| row.at.get("part") == Some(&name))
    }

    /// (a): allreduce of one u64 ÷ the barrier of the same teams, and ÷ our `Barrier`.
    fn allreduce_over_barrier(&self) -> String {
        let title = format!(
            "(a) allreduce of one u64 ÷ barrier, medians (goal: {ALLREDUCE_GOAL}x or less)"
        );
        if !self.measured(Part::Allreduce) || !self.measured(Part::Barrier) {
            return format!("{title}: not measured (needs --ops barrier,allreduce)\n");
        }
        let allreduce = |shape| team(Part::Allreduce, Operation::Allreduce, shape);
        let barrier = |shape| team(Part::Barrier, Operation::Barrier, shape);
        let mut lines: Vec<_> = (self.config.teams.iter())
            .map(|&shape| {
                let label = format!("team {} ÷ its barrier", shape.name());
                self.ratio_line(label, allreduce(shape), barrier(shape))
            })
            .collect();
        let ours = (OURS, Operation::Barrier.at(Part::Barrier));
        let label = format!("team all ÷ {OURS}");
        lines.push(self.ratio_line(label, allreduce(Shape::All), ours));
        let (mut met, mut missed) = (Vec::new(), Vec::new());
        for &n in &self.config.members {
            let over = self.median(&allreduce(Shape::All), n);
            if let Some(ratio) = quotient(over, self.median(&barrier(Shape::All), n)) {
                let goal_met = ratio <= ALLREDUCE_GOAL;
                if goal_met { &mut met } else { &mut missed }.push(n.to_string());
            }
        }
        let verdict = match (met.is_empty(), missed.is_empty()) {
            (true, true) => "not measured on the team of all".to_owned(),
            (_, true) => format!("met at every N measured ({})", met.join(", ")),
            (true, _) => format!("missed at every N measured ({})", missed.join(", ")),
            _ => format!(
                "met at N = {}; missed at N = {}",
                met.join(", "),
                missed.join(", ")
            ),
        };
        format!(
            "{}    goal (team of all ÷ its barrier): {verdict}\n",
            self.grid(&title, lines)
        )
    }

    /// (b): the longest broadcast as a fraction of the memcpy of the same length.
    fn broadcast_against_memcpy(&self) -> String {
        let Some(&words) = self.config.words.iter().max() else {
            return "(b) broadcast against memcpy: not measured (no --words)\n".to_owned();
        };
        let title = format!(
            "(b) broadcast of {words} words from a rotating root: bandwidth (payload over median \
             time) as a fraction of a memcpy of the same length"
        );
        if !self.measured(Part::Broadcast) {
            return format!("{title}: not measured (needs --ops broadcast)\n");
        }
        let op = Operation::Broadcast { words };
        let copy = (MEMCPY, Operation::Memcpy { words }.at(Part::Broadcast));
        let copy = self
            .find(&copy, 0)
            .and_then(|row| row.value("bandwidth_gb_s"));
        let cell = |pick: &Pick2, n| {
            let row = self.find(pick, n);
            let fraction = row.and_then(|row| row.value("fraction_of_memcpy"));
            match fraction.zip(row.and_then(|row| row.value("bandwidth_gb_s"))) {
                Some((fraction, gb)) => format!("{:.0}% ({gb:.2} GB/s)", fraction * 100.0),
                None => "-".to_owned(),
            }
        };
        let mut picks: Vec<(String, Pick2)> = (self.config.teams.iter())
            .map(|&shape| {
                (
                    format!("team {}", shape.name()),
                    team(Part::Broadcast, op, shape),
                )
            })
            .collect();
        picks.push((OMP_BCAST.to_owned(), (OMP_BCAST, op.at(Part::Broadcast))));
        let lines = (picks.into_iter())
            .map(|(label, pick)| self.line(label, |n| cell(&pick, n)))
            .collect();
        format!(
            "{title}\n    memcpy of {words} words on one thread: {}\n{}",
            copy.map_or_else(|| "not measured".to_owned(), |gb| format!("{gb:.2} GB/s")),
            self.grid("", lines).trim_start_matches('\n')
        )
    }

    /// (c): ours ÷ OpenMP for the barrier, the allreduce and the shortest, middle and longest
    /// broadcasts.
    fn against_openmp(&self) -> String {
        let title = "(c) ours ÷ OpenMP, medians (below 1: ours is faster)";
        let mut lines = Vec::new();
        let mut versus = |part: Part, op: Operation, label: String| {
            if let (true, Some((_, omp))) = (self.measured(part), op.openmp()) {
                let omp = (omp, op.at(part));
                lines.push(self.ratio_line(label, team(part, op, Shape::All), omp));
            }
        };
        versus(
            Part::Barrier,
            Operation::Barrier,
            format!("team all barrier ÷ {OMP_BARRIER}"),
        );
        versus(
            Part::Allreduce,
            Operation::Allreduce,
            format!("team all allreduce ÷ {OMP_ALLREDUCE}"),
        );
        let words = &self.config.words;
        if !words.is_empty() {
            let mut sizes = vec![words[0], words[words.len() / 2], words[words.len() - 1]];
            sizes.dedup();
            for words in sizes {
                let label = format!("team all broadcast {words} words ÷ omp");
                versus(Part::Broadcast, Operation::Broadcast { words }, label);
            }
        }
        if self.measured(Part::Barrier) {
            let at = Operation::Barrier.at(Part::Barrier);
            let label = format!("{OURS} ÷ {OMP_BARRIER}");
            lines.insert(
                1,
                self.ratio_line(label, (OURS, at.clone()), (OMP_BARRIER, at)),
            );
        }
        if lines.is_empty() {
            return format!("{title}: not measured (needs barrier, allreduce or broadcast)\n");
        }
        self.grid(title, lines)
    }

    /// (d): a checked team's barrier, allreduce and broadcast over an unchecked team's, round by
    /// round: a machine's drift between rounds cancels in each round's ratio.
    fn checked_cost(&self) -> String {
        let mut title = "(d) checked ÷ unchecked team: the median of the rounds' ratios [their \
                         range]; what checking that every call matches costs (goal: 1.10x or less)"
            .to_owned();
        if cfg!(debug_assertions) {
            title.push_str(" (a debug build: run with --release for numbers that mean anything)");
        }
        if !self.measured(Part::Checked) {
            return format!("{title}: not measured (needs --ops checked)\n");
        }
        let lines = CHECKED_OPERATIONS.into_iter().map(|op| {
            let twin = |checked: bool| {
                let (name, at) = team(Part::Checked, op, Shape::All);
                (name, at.with("checked", checked))
            };
            self.line(op.label(), |n| {
                let twins = self.find(&twin(true), n).zip(self.find(&twin(false), n));
                let ratios: Vec<f64> = twins.map_or_else(Vec::new, |(over, under)| {
                    let pairs = over.round_medians_ns.iter().zip(&under.round_medians_ns);
                    pairs
                        .filter_map(|(o, u)| quotient(Some(*o), Some(*u)))
                        .collect()
                });
                ratio_cell(&ratios)
            })
        });
        self.grid(&title, lines.collect())
    }

    /// (e): MySync and NoSync broadcasts over AllSync ones.
    fn sync_modes(&self) -> String {
        let title =
            "(e) sync modes: broadcast ÷ the AllSync broadcast of the same length, medians \
                     (below 1: the weaker mode pays off)";
        if !self.measured(Part::SyncModes) {
            return format!("{title}: not measured (needs --ops sync-modes)\n");
        }
        let mut lines = Vec::new();
        for &words in &self.config.sync_words {
            let in_mode = |mode: SyncMode| {
                let (name, at) = team(Part::SyncModes, Operation::Broadcast { words }, Shape::All);
                (name, at.with("sync_mode", mode.name()))
            };
            for mode in [SyncMode::MySync, SyncMode::NoSync] {
                let label = format!("{words} words {}", mode.name());
                lines.push(self.ratio_line(label, in_mode(mode), in_mode(SyncMode::AllSync)));
            }
        }
        self.grid(title, lines)
    }
}

/// `1.02x [0.97-1.08]`: the median of the rounds' ratios and their range; `-` with none.
fn ratio_cell(ratios: &[f64]) -> String {
    let Some(median) = stats::median(ratios) else {
        return "-".to_owned();
    };
    if ratios.len() < 2 {
        return format!("{median:.2}x");
    }
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{median:.2}x [{low:.2}-{high:.2}]")
}

/// Every row of `bench collectives` with a line about it, for `phasers list`.
pub fn list() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            TEAM,
            "a Team member per thread: barrier(), allreduce of one u64 (Op::Sum), broadcast from \
             root iteration % size, alltoall; on the team of all and split_grid's row and column \
             teams; checked and unchecked; AllSync, MySync, NoSync",
        ),
        (
            OURS,
            "our Barrier with Algorithm::Auto on N threads: what a team's barrier and allreduce \
             are held against",
        ),
        (STD, "Rust's std::sync::Barrier on N threads"),
        (
            OMP_BARRIER,
            "OpenMP #pragma omp barrier (libgomp), back to back in one parallel region",
        ),
        (
            OMP_ALLREDUCE,
            "OpenMP omp for reduction(+:x) of one u64 per thread, then every thread reads the sum",
        ),
        (
            OMP_BCAST,
            "OpenMP: the root copies into a shared buffer, barrier, the others copy it out, \
             barrier",
        ),
        (
            MEMCPY,
            "copy_from_slice of a broadcast's length on one thread: broadcast bandwidth is a \
             fraction of its",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn parse(options: &str) -> Result<CollectivesArgs, clap::Error> {
        let options = options.split_whitespace();
        CollectivesArgs::try_parse_from(std::iter::once("collectives").chain(options))
    }

    /// A plan of `samples` samples of `iterations` iterations each.
    fn plan(iterations: u64, samples: usize) -> Plan {
        let schedule = Schedule {
            episodes: Some(iterations),
            samples,
            target_sample: Duration::from_millis(1),
            row_budget: Duration::from_secs(20),
        };
        Plan::new(schedule, Pacing::Looped, Duration::from_secs(60))
    }

    #[test]
    fn defaults_are_the_issues_sweep_and_every_option_parses() {
        let config = Config::from_args(&parse("").unwrap());
        assert_eq!(config.members, DEFAULT_MEMBERS);
        assert_eq!((config.teams.len(), config.parts.len()), (3, 6));
        assert_eq!((config.columns_for(64), config.columns_for(32)), (8, 8));
        let words = default_words();
        assert_eq!((words[0], words.len()), (4, 16));
        assert_eq!(words[14..], [65_536, 100_000]);
        assert_eq!(
            (config.blocks, config.sync_words),
            (DEFAULT_BLOCKS.to_vec(), vec![8, 65_536])
        );
        let schedule = config.plan.schedule;
        assert_eq!((schedule.samples, schedule.episodes), (10, None));
        assert_eq!(schedule.target_sample, Duration::from_millis(20));
        assert_eq!(
            (config.plan.pacing, config.plan.pin),
            (Pacing::Looped, false)
        );
        let args = parse(
            "--threads 8,2,8 --teams column,all --columns 3 --ops sync-modes,barrier \
             --words 100k,4,1_024 --blocks 2 --sync-words 16 --time 0.05 --samples 5 --pin \
             --hang-seconds 5 --json c.json --csv c.csv",
        )
        .unwrap();
        let config = Config::from_args(&args);
        assert_eq!(config.members, vec![2, 8]);
        assert_eq!(config.teams, vec![Shape::All, Shape::Column]);
        assert_eq!(config.columns_for(64), 3);
        assert_eq!(config.parts, vec![Part::Barrier, Part::SyncModes]);
        assert_eq!(config.words, vec![4, 1024, 100_000]);
        assert_eq!((&config.blocks, &config.sync_words), (&vec![2], &vec![16]));
        assert_eq!(
            config.plan.schedule.target_sample,
            Duration::from_millis(10)
        );
        assert!(config.plan.pin && config.plan.hang_after == Duration::from_secs(5));
        let settings = serde_json::to_value(config.settings(Vec::new())).unwrap();
        assert_eq!(settings["threads"], serde_json::json!([2, 8]));
        assert_eq!(
            settings["parts"],
            serde_json::json!(["barrier", "sync-modes"])
        );
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        for (options, message) in [
            ("--threads 1", "at least 2 members"),
            ("--threads two", "not a thread count"),
            ("--threads 100000", "allowed"),
            ("--teams diagonal", "possible values: all, row, column"),
            ("--columns 0", "not a number of columns"),
            ("--ops scan", "possible values: barrier, allreduce"),
            ("--words 0", "starts at 1 word"),
            ("--words 1,,2", "not a broadcast length"),
            ("--words 99999999", "allowed for a broadcast length"),
            ("--blocks 2000000", "allowed for an alltoall block"),
            ("--rounds 0", "0"),
        ] {
            let error = parse(options).unwrap_err().to_string();
            assert!(error.contains(message), "{options}: {error}");
        }
    }

    #[test]
    fn team_sizes_and_places_follow_split_grid() {
        assert_eq!(team_sizes(Shape::All, 6, 4), vec![6]);
        // Ranks 0-3 and 4-5; {0, 4}, {1, 5}, {2}, {3}.
        assert_eq!(team_sizes(Shape::Row, 6, 4), vec![4, 2]);
        assert_eq!(team_sizes(Shape::Column, 6, 4), vec![2, 2, 1, 1]);
        assert_eq!(team_sizes(Shape::Column, 2, 8), vec![1, 1]);
        for shape in Shape::value_variants().iter().copied() {
            let placed = place(&Team::new(6).unwrap(), shape, 4).unwrap();
            let got: Vec<(usize, usize)> = (placed.iter())
                .map(|p| (p.member.parties(), p.member.rank()))
                .collect();
            let expected: Vec<(usize, usize)> = (0..6)
                .map(|rank| match shape {
                    Shape::All => (6, rank),
                    Shape::Row => (team_sizes(shape, 6, 4)[rank / 4], rank % 4),
                    Shape::Column => (team_sizes(shape, 6, 4)[rank % 4], rank / 4),
                })
                .collect();
            assert_eq!(got, expected, "{shape:?}");
        }
    }

    #[test]
    fn every_collective_runs_and_checks_on_every_shape_mode_and_checking() {
        let ops = [
            (Part::Barrier, Operation::Barrier),
            (Part::Allreduce, Operation::Allreduce),
            (Part::Broadcast, Operation::Broadcast { words: 300 }),
            (Part::Alltoall, Operation::Alltoall { block: 3 }),
        ];
        let sync = SyncMode::AllSync;
        for shape in Shape::value_variants().iter().copied() {
            for (part, op) in ops {
                let team = Contender::Team {
                    shape,
                    checked: None,
                    sync,
                };
                let mut row = blank(part, op, team, 4, 2);
                measure(&mut row, op, team, 4, 2, &plan(100, 2));
                assert_eq!(row.error, None, "{shape:?} {op:?}: {row:?}");
                assert_eq!(row.samples_ns.len(), 2, "{shape:?} {op:?}");
                assert_eq!(
                    row.value("teams"),
                    Some(team_sizes(shape, 4, 2).len() as f64)
                );
            }
        }
        let modes = [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync];
        let teams = [Some(true), Some(false)]
            .map(|checked| (checked, sync))
            .into_iter();
        for (checked, sync) in teams.chain(modes.map(|sync| (None, sync))) {
            let team = Contender::Team {
                shape: Shape::All,
                checked,
                sync,
            };
            let op = Operation::Broadcast { words: 64 };
            let mut row = blank(Part::SyncModes, op, team, 3, 2);
            measure(&mut row, op, team, 3, 2, &plan(100, 2));
            assert_eq!(row.error, None, "{checked:?} {sync:?}: {row:?}");
            let checked = checked.unwrap_or(true);
            assert_eq!(row.at.get("checked"), Some(&Value::from(checked)));
            assert_eq!(row.at.get("sync_mode"), Some(&Value::from(sync.name())));
        }
    }

    #[test]
    fn checks_catch_stale_and_misplaced_results() {
        let stale = Allreduce([expected_sum(3, 4)]);
        assert!(stale
            .check(0, 3, 5)
            .is_some_and(|m| m.starts_with("wrong result:")));
        assert_eq!(stale.check(0, 3, 4), None);
        // A receiver that kept its own buffer, and one that got the wrong root's first call.
        assert!(Broadcast::new(1, 8).check(1, 2, 0).is_some());
        let mut from_wrong_root = Broadcast::new(1, 8);
        from_wrong_root.0[0] = u64::MAX;
        assert!(from_wrong_root.check(1, 2, 0).unwrap().contains("word 1"));
        from_wrong_root.0 = Broadcast::new(0, 8).0;
        from_wrong_root.0[0] = u64::MAX;
        assert_eq!(from_wrong_root.check(1, 2, 0), None);
        let mut seen = HashSet::new();
        for (iteration, from, to) in (0..4).flat_map(|i| (0..25).map(move |n| (i, n / 5, n % 5))) {
            assert!(seen.insert(alltoall_stamp(iteration, from, to)));
        }
        // Rank 1 of 2 receiving each rank's block with the sender's initial words in place.
        let mut received = Alltoall::new(1, 2, 3);
        for from in 0..2 {
            let block = &mut received.output[from * 3..(from + 1) * 3];
            block[0] = alltoall_stamp(0, from, 1);
            block[1] = alltoall_word(from, 1, 1);
            block[2] = alltoall_word(from, 1, 2);
        }
        assert_eq!(received.check(1, 2, 0), None);
        assert!(received
            .check(1, 2, 1)
            .unwrap()
            .contains("word 0 from rank 0"));
        received.output[5] = 0;
        assert!(received
            .check(1, 2, 0)
            .unwrap()
            .contains("word 2 from rank 1"));
    }

    /// A row of `contender` running `op` at `members`, of one sample per round median.
    fn row(part: Part, op: Operation, contender: Contender, members: usize, ns: &[f64]) -> Row {
        let mut row = blank(part, op, contender, members, 2);
        row.raw_ns = ns.to_vec();
        row.finish(0, None);
        row.round_medians_ns = ns.to_vec();
        row
    }

    fn rows() -> Vec<Row> {
        let all = |checked, sync| Contender::Team {
            shape: Shape::All,
            checked,
            sync,
        };
        let (barrier, allreduce) = (Operation::Barrier, Operation::Allreduce);
        let (bcast, copy) = (
            Operation::Broadcast { words: 100 },
            Operation::Memcpy { words: 100 },
        );
        let team = all(None, SyncMode::AllSync);
        let mut rows = vec![
            row(Part::Barrier, barrier, team, 2, &[100.0]),
            row(Part::Barrier, barrier, Contender::Ours, 2, &[80.0]),
            row(Part::Barrier, barrier, Contender::OpenMp, 2, &[200.0]),
            row(Part::Barrier, barrier, team, 4, &[100.0]),
            row(Part::Allreduce, allreduce, team, 2, &[120.0]),
            row(Part::Allreduce, allreduce, team, 4, &[300.0]),
            row(Part::Broadcast, copy, Contender::Memcpy, 1, &[50.0]),
            row(Part::Broadcast, bcast, team, 2, &[500.0]),
            row(Part::Broadcast, bcast, Contender::OpenMp, 2, &[1000.0]),
            row(
                Part::Checked,
                barrier,
                all(Some(true), SyncMode::AllSync),
                2,
                &[150.0, 330.0, 100.0],
            ),
            row(
                Part::Checked,
                barrier,
                all(Some(false), SyncMode::AllSync),
                2,
                &[100.0, 300.0, 100.0],
            ),
        ];
        for (index, receivers) in [(6, 1), (7, 1)] {
            set_bandwidth(&mut rows[index], receivers);
        }
        rows[7].extra.set("fraction_of_memcpy", 0.1);
        for (mode, ns) in [
            (SyncMode::AllSync, 100.0),
            (SyncMode::MySync, 80.0),
            (SyncMode::NoSync, 50.0),
        ] {
            let op = Operation::Broadcast { words: 8 };
            rows.push(row(Part::SyncModes, op, all(None, mode), 2, &[ns]));
        }
        rows
    }

    #[test]
    fn figures_divide_the_medians_of_one_run() {
        let args = parse("--threads 2,4 --teams all --words 100 --sync-words 8").unwrap();
        let config = Config::from_args(&args);
        let rows = rows();
        let figures = Figures {
            rows: &rows,
            config: &config,
        };
        let text = figures.allreduce_over_barrier();
        // 120 over the team's barrier's 100, over our Barrier's 80; 300 over 100 at N = 4.
        for part in ["1.20x", "1.50x", "3.00x", "met at N = 2; missed at N = 4"] {
            assert!(text.contains(part), "{part} in\n{text}");
        }
        let text = figures.broadcast_against_memcpy();
        assert!(
            text.contains("memcpy of 100 words on one thread: 16.00 GB/s"),
            "{text}"
        );
        assert!(text.contains("10% (1.60 GB/s)"), "{text}");
        let text = figures.against_openmp();
        assert!(text.contains("team all barrier ÷ omp barrier"), "{text}");
        assert!(text.contains("0.50x") && text.contains("0.40x"), "{text}");
        // The rounds' ratios are 1.5, 1.1 and 1.0: their median and range.
        assert!(figures.checked_cost().contains("1.10x [1.00-1.50]"));
        assert_eq!(
            (ratio_cell(&[]), ratio_cell(&[1.25])),
            ("-".into(), "1.25x".into())
        );
        let text = figures.sync_modes();
        assert!(
            text.contains("8 words MySync") && text.contains("0.80x"),
            "{text}"
        );
        assert!(
            text.contains("8 words NoSync") && text.contains("0.50x"),
            "{text}"
        );
        let none = Figures {
            rows: &[],
            config: &config,
        };
        assert!(none.checked_cost().contains("not measured"));
    }

    #[test]
    fn twins_merge_their_rounds_and_tables_fit_100_columns() {
        let team = Contender::Team {
            shape: Shape::All,
            checked: Some(true),
            sync: SyncMode::AllSync,
        };
        let round = |ns: &[f64]| row(Part::Checked, Operation::Barrier, team, 2, ns);
        let merged = merge(vec![round(&[1.0, 2.0, 3.0]), round(&[10.0, 20.0, 30.0])]);
        assert_eq!(
            (merged.samples_ns.len(), merged.round_medians_ns.clone()),
            (6, vec![2.0, 20.0])
        );
        assert_eq!(
            (merged.round_samples.clone(), merged.spread),
            (vec![3, 3], Some(10.0))
        );
        let mut rows = rows();
        rows[0].error = Some("boom".into());
        let text = tables(4, 2, &rows);
        assert!(
            text.lines().all(|line| line.chars().count() <= 100),
            "{text}"
        );
        for part in [
            "N = 4 on",
            "broadcast 100 words",
            "[1] ERROR: boom",
            "barrier, checked",
        ] {
            assert!(text.contains(part), "{part} in\n{text}");
        }
        assert_eq!(
            Operation::Alltoall { block: 1 }.label(),
            "alltoall 1 word/block"
        );
        assert_eq!(
            Operation::Broadcast { words: 100 }.bytes_needed(2),
            5 * 100 * 8
        );
        assert_eq!(list().len(), 7);
    }

    #[test]
    fn a_small_run_measures_every_part() {
        let args = parse(
            "--threads 3 --words 5 --blocks 2 --sync-words 4 --time 0.02 --samples 2 \
                          --columns 2 --rounds 2",
        )
        .unwrap();
        let config = Config::from_args(&args);
        let mut sweep = Sweep {
            config: &config,
            available: None,
            rows: Vec::new(),
            memcpy: HashMap::new(),
        };
        for part in Part::value_variants().iter().copied() {
            let shown = sweep.part(part, 3);
            for row in &shown {
                assert_eq!(row.error, None, "{row:?}");
                assert!(row.summary.is_some() || row.note.is_some(), "{row:?}");
            }
        }
        // The memcpy is measured once, and is a row of the report.
        assert_eq!(
            sweep
                .rows
                .iter()
                .filter(|row| row.kind == Kind::Floor)
                .count(),
            1
        );
        let broadcast = (sweep.rows.iter())
            .find(|row| row.field("op") == Some(&"broadcast".into()) && row.contender == TEAM)
            .unwrap();
        assert!(broadcast
            .value("fraction_of_memcpy")
            .is_some_and(|f| f > 0.0));
        let checked = sweep
            .rows
            .iter()
            .filter(|row| row.field("part") == Some(&"checked".into()));
        assert!(
            checked.clone().count() == 6
                && checked.clone().all(|row| row.round_medians_ns.len() == 2)
        );
    }
}
