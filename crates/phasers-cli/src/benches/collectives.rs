//! `phasers bench collectives`: seed 004's team collectives against the barriers and copies
//! users have without them. At each member count N, each [`Part`] is a table: the collective on a
//! fresh team (of all, or `split_grid`'s rows and columns at once), and on N threads the
//! baselines (`std::sync::Barrier`, our `Barrier` auto, libgomp's barrier, reduction and
//! broadcast in `baselines/omp_collectives.c`, a one-thread memcpy measured once per run). Rows
//! time looped rounds ([`Pacing::Looped`]), every result is checked, and figures (a)-(e) close.

use std::{cell::RefCell, hint::black_box, sync::LazyLock, time::Duration};

use clap::{Parser, ValueEnum};
use phasers::{Algorithm, Barrier, Member, Op, SyncMode, Team};
use phasers_cli::harness::args::{first_of_each, parse_scaled, parse_seconds, sorted_unique};
use phasers_cli::harness::bench::{self, Benchmark};
use phasers_cli::harness::engine::{self, Measured, Pacing, Plan};
use phasers_cli::harness::files;
use phasers_cli::harness::floor::{self, Floor};
use phasers_cli::harness::footnotes::{fit, wrap};
use phasers_cli::harness::header::{warn_if_debug_build, Header};
use phasers_cli::harness::interleave::{RowPlan, TablePlan};
use phasers_cli::harness::memory;
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick};
use phasers_cli::harness::render::{self, Column, Format, Layout};
use phasers_cli::harness::result::{Fields, Kind, RatioRecord, Report, Row, Settings};
use phasers_cli::harness::run_args::RunArgs;
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::stats;
use phasers_cli::harness::table::ratio as ratio_text;
use phasers_cli::harness::threads::parse_thread_count;
use phasers_cli::harness::watchdog::{panic_message, Watch};
use phasers_cli::harness::work::{Failure, Work, WrongResult};
use serde_json::Value;

use crate::native::{omp_collective_round, OmpCollective, SETTLE};

/// Member counts of a default run: 2 to 64, doubling.
pub const DEFAULT_MEMBERS: [usize; 6] = [2, 4, 8, 16, 32, 64];
/// Alltoall blocks of a default run: one word (all latency), a cache line of lines, 8 KB.
pub const DEFAULT_BLOCKS: [usize; 3] = [1, 64, 1024];
/// Sync-mode broadcast lengths: one cache line (all synchronization) and 512 KB (all copying).
pub const DEFAULT_SYNC_WORDS: [usize; 2] = [8, 65_536];
const WORD_BYTES: usize = std::mem::size_of::<u64>();

/// Seed 004's broadcast lengths (4 words, doubling below 100,000) and the issue's 100,000.
fn default_words() -> Vec<usize> {
    (2..17).map(|power| 1 << power).chain([100_000]).collect()
}

/// Options of `phasers bench collectives`.
#[derive(Debug, Clone, Parser)]
#[command(name = "collectives")]
pub struct CollectivesArgs {
    /// Member counts N, comma-separated, from 2 [default: 2,4,8,16,32,64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_members)]
    pub threads: Option<Vec<usize>>,

    /// Teams, comma-separated: all (one team of N), row and column (split_grid's sub-teams, all at
    /// once) [default: all,row,column]. Baselines run on N threads.
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

    /// Interleaved rounds at each N: round 1 of every row (every part), then round 2, and so on,
    /// each with its share of the samples, so that a shared machine drifting between a fast and a
    /// slow state moves every row alike and the ratios within one N (the ÷ columns, figures
    /// (a)-(e)) hold. Checked twins run back to back, alternating which goes first; figure (d)
    /// shows the rounds' ratios' median and range [default: --samples, one sample per round;
    /// at most --samples, as in `bench barrier`].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub rounds: Option<u16>,

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

fn parse_columns(text: &str) -> Result<usize, String> {
    let columns = text.trim().parse().ok().filter(|&c: &usize| c > 0);
    let error = format!("{text:?} is not a number of columns (a whole number from 1)");
    columns.ok_or(error)
}

/// Parses one length in u64 words from 1 to `most`, written as sizes are (`4096`, `100k`).
fn parse_length(text: &str, what: &str, most: usize) -> Result<usize, String> {
    let not =
        || format!("{text:?} is not {what} (a whole number of u64 words, such as 4096 or 100k)");
    match parse_scaled(text).ok_or_else(not)? {
        0 => Err(format!("{what} starts at 1 word")),
        w if w > most => Err(format!("{w} words is over the {most} allowed for {what}")),
        words => Ok(words),
    }
}

/// Parses one entry of `--words` and `--sync-words`: at most 2^24 words, 128 MiB per member.
pub fn parse_words(text: &str) -> Result<usize, String> {
    parse_length(text, "a broadcast length", 1 << 24)
}

/// Parses one entry of `--blocks`: at most 2^20 words, 8 MiB per block.
pub fn parse_block(text: &str) -> Result<usize, String> {
    parse_length(text, "an alltoall block", 1 << 20)
}

/// The values of a list option, sorted and each once, or `default` when it is not given.
fn given_or<T: Clone + Ord>(given: &Option<Vec<T>>, default: &[T]) -> Vec<T> {
    sorted_unique(given.clone().unwrap_or_else(|| default.to_vec()))
}

/// The name of a `--teams` or `--ops` value, on the command line and in reports.
fn name(value: impl ValueEnum) -> String {
    let value = value.to_possible_value();
    value.map_or_else(String::new, |value| value.get_name().to_owned())
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

/// One part of a run (`--ops`): a table at each member count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Part {
    /// `member.barrier()`, with std::sync::Barrier, our `Barrier` (auto) and OpenMP's barrier.
    Barrier,
    /// Allreduce of one u64 received by every member, with OpenMP's reduction read by all.
    Allreduce,
    /// Broadcast from a rotating root at each `--words`, with a memcpy and OpenMP's broadcast.
    Broadcast,
    /// Alltoall at each `--blocks`.
    Alltoall,
    /// Barrier, one-u64 allreduce and 8-word broadcast on a checked team and on an unchecked one.
    Checked,
    /// Broadcast at each `--sync-words` with every sync mode (AllSync, MySync, NoSync).
    SyncModes,
}

/// The timed operation and its size in u64 words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    Barrier,
    /// One u64 from every member, summed (`Op::Sum`), received by every member.
    Allreduce,
    /// This many words from root `iteration % team size`.
    Broadcast(usize),
    /// A block of this many words from every member to every member.
    Alltoall(usize),
    /// `copy_from_slice` of this many words on one thread.
    Memcpy(usize),
}

/// The calls issue 18 sets the checked ÷ unchecked target for, run by `--ops checked`.
const CHECKED_OPERATIONS: [Operation; 3] = [
    Operation::Barrier,
    Operation::Allreduce,
    Operation::Broadcast(8),
];

impl Operation {
    /// The operation of a row, from its point keys.
    fn of(row: &Row) -> Self {
        let size = |key| row.value(key).unwrap_or(0.0) as usize;
        match row.field("op").and_then(Value::as_str) {
            Some("allreduce") => Operation::Allreduce,
            Some("broadcast") => Operation::Broadcast(size("words")),
            Some("alltoall") => Operation::Alltoall(size("block")),
            Some("memcpy") => Operation::Memcpy(size("words")),
            _ => Operation::Barrier,
        }
    }

    /// The point keys `part`, `op`, and `words` or `block` where it has a size.
    fn at(self, part: Part) -> Fields {
        let at = Fields::default().with("part", name(part));
        match self {
            Operation::Barrier => at.with("op", "barrier"),
            Operation::Allreduce => at.with("op", "allreduce"),
            Operation::Broadcast(words) => at.with("op", "broadcast").with("words", words),
            Operation::Alltoall(block) => at.with("op", "alltoall").with("block", block),
            Operation::Memcpy(words) => at.with("op", "memcpy").with("words", words),
        }
    }

    /// What a table says it is: `broadcast 4096 words`, `alltoall 64 words/block`.
    fn label(self) -> String {
        let count = |words: usize| format!("{words} word{}", if words == 1 { "" } else { "s" });
        match self {
            Operation::Barrier => "barrier".to_owned(),
            Operation::Allreduce => "allreduce 1 u64".to_owned(),
            Operation::Broadcast(words) => format!("broadcast {}", count(words)),
            Operation::Alltoall(block) => format!("alltoall {}/block", count(block)),
            Operation::Memcpy(words) => format!("memcpy {}", count(words)),
        }
    }

    /// The bytes one operation delivers to one receiver: a broadcast's or memcpy's payload.
    fn payload_bytes(self) -> Option<u64> {
        let (Operation::Broadcast(words) | Operation::Memcpy(words)) = self else {
            return None;
        };
        Some((words * WORD_BYTES) as u64)
    }

    /// The OpenMP counterpart, if it has one, with its row name.
    fn openmp(self) -> Option<(OmpCollective, &'static str)> {
        match self {
            Operation::Barrier => Some((OmpCollective::Barrier, OMP_BARRIER)),
            Operation::Allreduce => Some((OmpCollective::AllreduceOne, OMP_REDUCE)),
            Operation::Broadcast(words) => Some((OmpCollective::Broadcast { words }, OMP_BCAST)),
            Operation::Alltoall(_) | Operation::Memcpy(_) => None,
        }
    }

    /// A generous estimate of the bytes a row among `members` needs at once: every member's
    /// buffers, as much again for the library's or OpenMP's, and OpenMP's shared buffer.
    fn bytes_needed(self, members: usize) -> u64 {
        let members = members as u64;
        let words = match self {
            Operation::Barrier | Operation::Allreduce => 0,
            Operation::Broadcast(words) => (2 * members + 1) * words as u64,
            Operation::Alltoall(block) => 4 * members * members * block as u64,
            Operation::Memcpy(words) => 2 * words as u64,
        };
        words.saturating_mul(WORD_BYTES as u64)
    }
}

/// The point keys, then the derived values, each a CSV column after the core ones.
static CSV_KEYS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    let point = "part op words block team columns team_sizes checked sync_mode";
    let derived =
        "payload_bytes bandwidth_gb_s aggregate_gb_s fraction_of_memcpy teams largest_team";
    point.split(' ').chain(derived.split(' ')).collect()
});

const TEAM: &str = "team";
const STD: &str = "std::sync::Barrier";
const OURS: &str = "phasers::Barrier auto";
const OMP_BARRIER: &str = "omp barrier";
const OMP_REDUCE: &str = "omp reduction(+:x), read by all";
const OMP_BCAST: &str = "omp broadcast via shared buffer";
const MEMCPY: &str = "memcpy";

/// Who runs a row.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Contender {
    /// The library's, on the teams of a shape, checked or not (`None`: the default), in a mode.
    Team(Shape, Option<bool>, SyncMode),
    Std,
    Ours,
    OpenMp,
    Memcpy,
}

/// What one row runs, in which part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Job {
    part: Part,
    op: Operation,
    who: Contender,
}

/// A run, resolved from [`CollectivesArgs`].
struct Collectives {
    members: Vec<usize>,
    teams: Vec<Shape>,
    columns: Option<usize>,
    parts: Vec<Part>,
    words: Vec<usize>,
    blocks: Vec<usize>,
    sync_words: Vec<usize>,
    rounds: usize,
    plan: Plan,
    /// The memory the kernel says is available, for skipping rows that would not fit.
    available: Option<u64>,
    /// The memcpy rows, measured in the first broadcast table and shown in every one.
    memcpy: RefCell<Vec<Row>>,
}

impl Collectives {
    fn new(args: &CollectivesArgs) -> Self {
        let samples = usize::from(args.samples);
        let schedule = Schedule {
            episodes: None,
            samples,
            target_sample: args.time / samples as u32,
            // Warm-up and calibration may overrun the aim; past this a row stops and says so.
            row_budget: args.time * 3 + Duration::from_secs(1),
        };
        // Not every collective holds all members back until everyone has arrived (a broadcast's
        // root, a `NoSync` call): rounds are never cut, and the closing meeting, inside the timed
        // span, waits for the last thread. One control barrier per round is a few hundred
        // nanoseconds against a round of `--time / --samples`.
        let mut plan = Plan::new(schedule, Pacing::Looped, args.run.hang_seconds);
        plan.pin = args.pin;
        Collectives {
            members: given_or(&args.threads, &DEFAULT_MEMBERS),
            teams: given_or(&args.teams, Shape::value_variants()),
            columns: args.columns,
            parts: given_or(&args.ops, Part::value_variants()),
            words: given_or(&args.words, &default_words()),
            blocks: given_or(&args.blocks, &DEFAULT_BLOCKS),
            sync_words: given_or(&args.sync_words, &DEFAULT_SYNC_WORDS),
            // `check` refused more rounds than samples.
            rounds: usize::from(args.rounds.unwrap_or(args.samples).min(args.samples)),
            plan,
            available: memory::available(),
            memcpy: RefCell::default(),
        }
    }

    /// Round `index` of each row: its share of the samples (the first rounds take the remainder)
    /// and of the row's budget, each round with its own warm-up and calibration on a fresh team.
    fn round(&self, index: usize) -> Plan {
        let (rounds, samples) = (self.rounds, self.plan.schedule.samples);
        let mut plan = self.plan.clone();
        plan.schedule.samples = samples / rounds + usize::from(index < samples % rounds);
        plan.schedule.row_budget = self.plan.schedule.row_budget / rounds as u32;
        plan
    }

    /// `--columns`, or the smallest power of two whose square holds `members` (8 for 64 and 32).
    fn columns_for(&self, members: usize) -> usize {
        let square = (0..).map(|power| 1 << power).find(|c| c * c >= members);
        self.columns.unwrap_or(square.unwrap_or(1))
    }

    /// The rows of `part` at `members`, in the order run.
    fn rows(&self, part: Part, members: usize) -> Vec<RowPlan<Job>> {
        let row = |op, who| self.row(Job { part, op, who }, members);
        let team = |op, shape| row(op, Contender::Team(shape, None, SyncMode::AllSync));
        let teams = |op| self.teams.iter().map(move |&shape| team(op, shape));
        let all = |op, checked, sync| row(op, Contender::Team(Shape::All, checked, sync));
        let modes = [SyncMode::AllSync, SyncMode::MySync, SyncMode::NoSync];
        match part {
            Part::Barrier => {
                let baselines = [Contender::Ours, Contender::Std, Contender::OpenMp];
                let baselines = baselines.map(|who| row(Operation::Barrier, who));
                teams(Operation::Barrier).chain(baselines).collect()
            }
            Part::Allreduce => {
                let omp = row(Operation::Allreduce, Contender::OpenMp);
                teams(Operation::Allreduce).chain([omp]).collect()
            }
            // The memcpy is measured once per run, in the first table.
            Part::Broadcast => (self.words.iter().flat_map(|&words| {
                let op = Operation::Broadcast(words);
                let copy = members == self.members[0];
                let copy = copy.then(|| row(Operation::Memcpy(words), Contender::Memcpy));
                (copy.into_iter().chain(teams(op))).chain([row(op, Contender::OpenMp)])
            }))
            .collect(),
            Part::Alltoall => (self.blocks.iter())
                .flat_map(|&block| teams(Operation::Alltoall(block)))
                .collect(),
            Part::Checked => (CHECKED_OPERATIONS.iter())
                .flat_map(|&op| [true, false].map(|on| all(op, Some(on), SyncMode::AllSync)))
                .collect(),
            Part::SyncModes => (self.sync_words.iter())
                .flat_map(|&words| modes.map(|sync| all(Operation::Broadcast(words), None, sync)))
                .collect(),
        }
    }

    /// The row of `job` among `members`; a team's also names its shape, sizes, checks and mode.
    fn row(&self, job: Job, members: usize) -> RowPlan<Job> {
        let omp = job.op.openmp().map_or("omp", |(_, name)| name);
        let (contender, kind) = match job.who {
            Contender::Team(..) => (TEAM, Kind::Ours),
            Contender::Std => (STD, Kind::Baseline),
            Contender::Ours => (OURS, Kind::Reference),
            Contender::OpenMp => (omp, Kind::Baseline),
            Contender::Memcpy => (MEMCPY, Kind::Floor),
        };
        let mut at = job.op.at(job.part);
        if let Contender::Team(shape, checked, sync) = job.who {
            let columns = self.columns_for(members);
            at = (at.with("team", name(shape)))
                .with("columns", (shape != Shape::All).then_some(columns))
                .with("team_sizes", team_sizes(shape, members, columns))
                .with("checked", checked)
                .with("sync_mode", sync.name());
        }
        RowPlan {
            contender: job,
            name: contender.into(),
            kind,
            at,
            subtracts: None,
        }
    }
}

impl Benchmark for Collectives {
    type Contender = Job;

    fn name(&self) -> String {
        "bench collectives".into()
    }

    fn header(&self, provenance: &Provenance, floor: Option<&Floor>) -> String {
        let what = "team collectives (seed 004's MPP suite) against std::sync::Barrier, our \
                    Barrier, OpenMP and memcpy";
        let floor = floor.expect("floor_once measures the floor before the header");
        warn_if_debug_build(Some("teams check every call"));
        let units = "per operation, min and median over the samples; GB/s: the payload each \
                     receiver gets over the median; of memcpy: a one-thread memcpy's median over \
                     the row's; ÷omp: the median over the OpenMP row's of the same operation \
                     (below 1: ours is faster)";
        let header = Header::with_floors(provenance, what, self.settings().method, floor);
        header.line("units", units).finish()
    }

    fn settings(&self) -> Settings {
        let schedule = &self.plan.schedule;
        let samples = schedule.samples;
        let rows = self.tables().into_iter().flat_map(|table| table.rows);
        let contenders = first_of_each(rows.map(|row| row.name).collect());
        let sample_ms = schedule.target_sample.as_secs_f64() * 1e3;
        let budget_s = schedule.row_budget.as_secs_f64();
        let rounds = self.rounds;
        let method = format!(
            "each row runs one operation back to back on one thread per member (a fresh team of \
             N; a baseline: N threads): warm-up, calibration, then {samples} samples of rounds of \
             about {sample_ms:.1} ms, timed on the first thread between control barriers (at most \
             {budget_s:.1} s per row), split into {rounds} rounds interleaved with every other \
             row's at the same N (round 1 of each row, then round 2...), each on a fresh team with \
             its own warm-up. Broadcast roots rotate (iteration modulo team size); every \
             result is checked (a word per call, all in the first). split_grid's row and column \
             teams all run at once. OpenMP rows run each round in one parallel region between \
             two barriers"
        );
        let time_per_row = schedule.target_sample * schedule.samples as u32;
        let teams: Vec<String> = self.teams.iter().map(|&shape| name(shape)).collect();
        let parts: Vec<String> = self.parts.iter().map(|&part| name(part)).collect();
        let own = (Fields::default().with("teams", teams))
            .with("columns", self.columns)
            .with("parts", parts)
            .with("broadcast_words", self.words.clone())
            .with("alltoall_blocks", self.blocks.clone())
            .with("sync_mode_words", self.sync_words.clone())
            .with("time_per_row_s", time_per_row.as_secs_f64())
            .with("samples", schedule.samples)
            .with("rounds", self.rounds)
            .with("target_sample_ms", sample_ms)
            .with("row_budget_s", budget_s);
        Settings {
            method,
            threads: self.members.clone(),
            contenders,
            pinned: self.plan.pin,
            debug_build: cfg!(debug_assertions),
            own,
        }
    }

    /// One table per member count holding every part's rows, so that the rounds interleave all
    /// the rows a ratio at that count may divide (allreduce ÷ the Auto barrier crosses parts):
    /// issue 35 saw a 2-core VM change state between two parts' tables and skew such a ratio.
    fn tables(&self) -> Vec<TablePlan<Job>> {
        let table = |&members: &usize| TablePlan {
            threads: members,
            rows: (self.parts.iter())
                .flat_map(|&part| self.rows(part, members))
                .collect(),
            rounds: self.rounds,
            dropped: 0,
            floor: false,
        };
        self.members.iter().map(table).collect()
    }

    fn measure(&self, plan: &RowPlan<Job>, n: usize, round: usize) -> Row {
        let job = plan.contender;
        let members = if job.who == Contender::Memcpy { 1 } else { n };
        let mut row = Row::new(&plan.name, plan.kind, members, plan.at.clone());
        let columns = self.columns_for(members);
        let skip = match job.who {
            Contender::Team(shape, ..) if team_sizes(shape, members, columns).len() == members => {
                let teams = format!("split_grid({columns}) makes {} teams", name(shape));
                Some(format!("{teams} of one member: nothing to synchronize"))
            }
            _ => memory::too_big(job.op.bytes_needed(members), self.available),
        };
        if let Some(why) = skip {
            row.add_note(format!("not run: {why}"));
            return row;
        }
        let plan = &self.round(round);
        let measured = match job.who {
            Contender::Team(shape, checked, sync) => {
                let team = match checked {
                    Some(checked) => Team::builder(members).checked(checked).build(),
                    None => Team::new(members),
                };
                let team = team.map_err(|error| format!("cannot build the team: {error}"));
                let row = &mut row;
                let placed = team.and_then(|team| {
                    row.at.set("checked", team.is_checked());
                    place(&team, shape, columns)
                });
                match (placed, job.op) {
                    (Err(error), _) => Measured::failed(plan.schedule, error),
                    (Ok(on), Operation::Barrier) => timed(row, on, sync, plan, |_| BarrierCall),
                    (Ok(on), Operation::Allreduce) => {
                        timed(row, on, sync, plan, |_| Allreduce([0]))
                    }
                    (Ok(on), Operation::Broadcast(words)) => {
                        timed(row, on, sync, plan, |m| Broadcast::new(m.rank(), words))
                    }
                    (Ok(on), Operation::Alltoall(block)) => timed(row, on, sync, plan, |m| {
                        Alltoall::new(m.rank(), m.parties(), block)
                    }),
                    (Ok(_), Operation::Memcpy(_)) => unreachable!("a memcpy has no team"),
                }
            }
            Contender::Std => {
                let barrier = std::sync::Barrier::new(members);
                threads(&row, vec![&barrier; members], plan)
            }
            Contender::Ours => match Barrier::with_algorithm(members, Algorithm::Auto) {
                Ok(barrier) => {
                    row.resolved = Some(barrier.algorithm().name().to_owned());
                    row.wait_policy = Some(barrier.wait_policy().name().to_owned());
                    threads(&row, barrier.participants(), plan)
                }
                Err(error) => Measured::failed(plan.schedule, format!("cannot build: {error}")),
            },
            Contender::OpenMp => {
                let work = job.op.openmp().map_or(OmpCollective::Barrier, |o| o.0);
                let measured = engine::calls(plan, |planned, _| {
                    let round = omp_collective_round(members, planned, work, plan.pin)?;
                    Ok((round.ran, round.elapsed))
                });
                // libgomp's idle threads spin a while: the next row must not share the cores.
                std::thread::sleep(SETTLE);
                measured
            }
            Contender::Memcpy => {
                let words = job.op.payload_bytes().unwrap_or(0) as usize / WORD_BYTES;
                let source = (0..words as u64).collect();
                threads(&row, vec![Copy(source, vec![0; words])], plan)
            }
        };
        let wrong = row.error.take();
        row.record(measured, &plan.schedule);
        // A wrong result is the root cause of anything that followed.
        row.error = wrong.or(row.error.take());
        row
    }

    fn floor_once(&self) -> Option<Schedule> {
        Some(floor::BRIEFLY)
    }

    fn layout(&self) -> Layout {
        Layout {
            concise: Vec::new(),
            verbose: Vec::new(),
            block: None,
            hide: &[],
            csv: &CSV_KEYS[..],
            plot: None,
        }
    }

    /// Odd rounds run each unchecked twin of `--ops checked` first: checking costs a few
    /// nanoseconds, far below a shared machine's drift between rows a second apart, so twins run
    /// back to back and figure (d) divides their medians round by round. The twins are adjacent
    /// pairs from the part's first row.
    fn order(&self, table: &TablePlan<Job>, round: usize) -> Vec<usize> {
        let checked = |index: usize| table.rows[index].contender.part == Part::Checked;
        let first = (0..table.rows.len()).find(|&index| checked(index));
        (0..table.rows.len())
            .map(|index| match first {
                Some(first) if round % 2 == 1 && checked(index) => first + ((index - first) ^ 1),
                _ => index,
            })
            .collect()
    }

    /// Each row's payload, teams and bandwidths and a broadcast's fraction of its memcpy's.
    fn derive(&self, table: &mut [Row]) {
        let mut copies = self.memcpy.borrow_mut();
        for row in table.iter_mut() {
            let payload = Operation::of(row).payload_bytes();
            row.extra.set("payload_bytes", payload);
            let sizes = row.at.get("team_sizes").and_then(Value::as_array).cloned();
            if let Some(sizes) = &sizes {
                row.extra.set("teams", sizes.len());
                let largest = sizes.iter().filter_map(Value::as_u64).max();
                row.extra.set("largest_team", largest);
            }
            // Every member of a team but its root receives each broadcast.
            let receivers = match (sizes, row.kind) {
                (Some(sizes), _) => row.threads - sizes.len(),
                (None, Kind::Floor) => 1,
                (None, _) => row.threads - 1,
            };
            let bandwidth = quotient(row.value("payload_bytes"), row.median());
            row.extra.set("bandwidth_gb_s", bandwidth);
            let aggregate = bandwidth.map(|gb_s| gb_s * receivers as f64);
            row.extra.set("aggregate_gb_s", aggregate);
            if row.contender == MEMCPY {
                copies.push(row.clone());
            }
        }
        for row in table.iter_mut() {
            let part = row.field("part").and_then(Value::as_str);
            if let (Some("broadcast"), Operation::Broadcast(words)) = (part, Operation::of(row)) {
                let copy = copy_of(&copies, words).filter(|copy| copy.error.is_none());
                let fraction = quotient(copy.and_then(Row::median), row.median());
                row.extra.set("fraction_of_memcpy", fraction);
            }
        }
    }

    /// The member count's heading, then a table per operation and size, memcpy before broadcast.
    fn show(
        &self,
        table: &TablePlan<Job>,
        rows: &[&Row],
        _records: &[RatioRecord],
        verbose: bool,
    ) -> Option<String> {
        let copies = self.memcpy.borrow();
        let part = |row: &Row| row.field("part").and_then(Value::as_str).map(str::to_owned);
        let broadcast = Some(name(Part::Broadcast));
        let mut shown: Vec<&Row> = Vec::new();
        // The run's round trip heads the output once; each memcpy shows before its broadcasts.
        for &row in rows.iter().filter(|row| row.kind != Kind::Floor) {
            if let Operation::Broadcast(words) = Operation::of(row) {
                let last = shown.last().map(|last| Operation::of(last));
                let new = last != Some(Operation::of(row)) && part(row) == broadcast;
                shown.extend(copy_of(&copies, words).filter(|_| new));
            }
            shown.push(row);
        }
        let mut out = heading(table.threads, self.columns_for(table.threads));
        let point = |row: &&Row| (part(row), Operation::of(row));
        for block in shown.chunk_by(|a, b| point(a) == point(b)) {
            let mut title = Operation::of(block[0]).label();
            let block_part = part(block[0]);
            for named in [Part::Checked, Part::SyncModes].map(name) {
                if block_part.as_deref() == Some(named.as_str()) {
                    title = format!("{title}, {named}");
                }
            }
            let mut layout = self.layout();
            (layout.concise, layout.verbose) = columns(block);
            out.push_str(&render::table(&title, block, &layout, verbose));
        }
        Some(out)
    }

    fn summary(&self, report: &Report, verbose: bool) -> Vec<String> {
        let figures = self.figures(&report.rows);
        vec![if verbose { figures } else { fit(&figures) }]
    }
}

fn copy_of(copies: &[Row], words: usize) -> Option<&Row> {
    (copies.iter()).find(|copy| Operation::of(copy) == Operation::Memcpy(words))
}

/// Runs `phasers bench collectives`.
pub fn run(args: &CollectivesArgs) -> Result<(), String> {
    check(args)?;
    let mut output = OutputArgs::default();
    (output.json, output.csv) = (args.run.json.clone(), args.run.csv.clone());
    output.verbose = args.run.verbose;
    let report = bench::run(&Collectives::new(args), &output)?;
    files::failures(&report.rows, &["op", "words", "block", "team"])
}

/// Refuses options that contradict each other, before anything is measured (the same words as
/// `bench barrier`'s check).
fn check(args: &CollectivesArgs) -> Result<(), String> {
    match args.rounds {
        Some(rounds) if rounds > args.samples => Err(format!(
            "--rounds {rounds} is more than --samples {}: each round needs at least one sample; \
             ask for at most {0} rounds, or more samples",
            args.samples
        )),
        _ => Ok(()),
    }
}

/// `N = 4 on 2 cores; split_grid(2): 2 row team(s) of 2, 2 column team(s) of 2`.
fn heading(members: usize, columns: usize) -> String {
    let [rows, cols] = [Shape::Row, Shape::Column].map(|shape| team_sizes(shape, members, columns));
    let (row_teams, row, column_teams, column) = (rows.len(), rows[0], cols.len(), cols[0]);
    let cores = phasers::available_cores();
    let plural = if cores == 1 { "" } else { "s" };
    let over = phasers::is_oversubscribed(members).then_some(" (oversubscribed)");
    let over = over.unwrap_or_default();
    let text = format!(
        "N = {members} on {cores} core{plural}{over}; split_grid({columns}): {row_teams} row \
         team(s) of {row}, {column_teams} column team(s) of {column}"
    );
    wrap("", &text)
}

/// One block's columns: team, what tells twins apart, bandwidths of a payload, `÷omp` if any.
fn columns(block: &[&Row]) -> (Vec<Column>, Vec<Column>) {
    let value = |key, head| Column::Value {
        key,
        head,
        format: Format::Fixed(2),
    };
    let mut keys = Vec::new();
    if block.iter().any(|row| row.at.get("team").is_some()) {
        keys.push(Column::Key("team", "team"));
    }
    match block[0].at.get("part").and_then(Value::as_str) {
        Some("checked") => keys.push(Column::Key("checked", "checked")),
        Some("sync-modes") => keys.push(Column::Key("sync_mode", "sync")),
        _ => {}
    }
    let (mut concise, mut verbose) = (vec![Column::Label], vec![Column::Label]);
    concise.extend(keys.iter().cloned().chain([Column::Min, Column::Median]));
    verbose.extend(keys.into_iter().chain([Column::Iterations, Column::MeanCi]));
    verbose.extend([Column::Min, Column::Median, Column::Rounds]);
    if block[0].value("payload_bytes").is_some() {
        let gb_s = value("bandwidth_gb_s", "GB/s");
        let memcpy = value("fraction_of_memcpy", "of memcpy");
        concise.extend([gb_s.clone(), memcpy.clone()]);
        verbose.extend([gb_s, value("aggregate_gb_s", "all GB/s"), memcpy]);
    }
    if let Some(omp) = block.iter().find(|row| row.contender.starts_with("omp ")) {
        let by = Pick::Named(omp.contender.clone().into());
        let over = Column::Over { head: "÷omp", by };
        concise.push(over.clone());
        verbose.push(over);
    }
    (concise, verbose)
}

fn threads<W: Work>(row: &Row, works: Vec<W>, plan: &Plan) -> Measured {
    let watch = Watch::new(&row.contender, works.len(), plan.hang_after);
    engine::threads(works, plan, &watch)
}

/// Times `make`'s collective on each placed member in `sync` mode; a wrong result is an error.
fn timed<C: Collective>(
    row: &mut Row,
    placed: Vec<Placed>,
    sync: SyncMode,
    plan: &Plan,
    make: impl Fn(&Member) -> C,
) -> Measured {
    let wrong = WrongResult::default();
    let works = placed.into_iter().map(|mut placed| {
        placed.0.set_sync_mode(sync);
        Timed(make(&placed.0), placed, &wrong)
    });
    let measured = threads(row, works.collect(), plan);
    row.error = wrong.into_message();
    measured
}

/// One member's side of a collective under test. Its check is a compare or two per call (one
/// word per block; every word in iteration 0), so a stale or misplaced result is caught without
/// timing a full comparison.
trait Collective: Send {
    /// The call of iteration `iteration`.
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error>;

    /// What is wrong with what member `rank` of a team of `size` received in `iteration`.
    fn check(&self, _rank: usize, _size: usize, _iteration: u64) -> Option<String> {
        None
    }
}

/// A member's collective and where it records a wrong result, timed: the call, then the check.
struct Timed<'a, C>(C, Placed, &'a WrongResult);

impl<C: Collective> Work for Timed<'_, C> {
    const SYNCHRONIZED: bool = false;

    #[inline]
    fn iteration(&mut self, index: u64) -> Result<Option<&'static str>, Failure> {
        let member = &mut self.1 .0;
        self.0.call(member, index)?;
        if let Some(message) = self.0.check(member.rank(), member.parties(), index) {
            self.2.record(|| message);
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
}

/// Seed 004's `mpp_accum_long`: each member adds `rank + 1 + iteration`, so a stale sum shows.
struct Allreduce([u64; 1]);

impl Collective for Allreduce {
    #[inline]
    fn call(&mut self, member: &mut Member, iteration: u64) -> Result<(), phasers::Error> {
        let mine = [member.rank() as u64 + 1 + iteration];
        member.allreduce(&mine, &mut self.0, Op::Sum)
    }

    fn check(&self, rank: usize, size: usize, iteration: u64) -> Option<String> {
        // 1 + 2 + ... + size, and the iteration from each member.
        let (got, size) = (self.0[0], size as u64);
        let expected = size * (size + 1) / 2 + size * iteration;
        (got != expected).then_some(())?;
        let what = format!("rank {rank}'s allreduce of iteration {iteration} was {got}");
        Some(format!("wrong result: {what}, not {expected}"))
    }
}

/// Seed 004's broadcast from root `iteration % size`, which first stamps word 0 as new data.
struct Broadcast(Vec<u64>);

impl Broadcast {
    fn new(rank: usize, words: usize) -> Self {
        Broadcast((0..words.max(1)).map(|i| broadcast_word(rank, i)).collect())
    }
}

/// Word `index` of rank `rank`'s first buffer: different for every rank, so a wrong root shows.
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
        let what = format!("rank {rank} received a wrong word {index} from root {root}");
        Some(format!("wrong result: {what} in iteration {iteration}"))
    }
}

/// Seed 004's global transpose; word 0 of each block is first stamped as new data.
struct Alltoall {
    block: usize,
    input: Vec<u64>,
    output: Vec<u64>,
}

impl Alltoall {
    fn new(rank: usize, size: usize, block: usize) -> Self {
        let block = block.max(1);
        let input = (0..size * block).map(|i| alltoall_word(rank, i / block, i % block));
        let (input, output) = (input.collect(), vec![0; size * block]);
        Alltoall {
            block,
            input,
            output,
        }
    }
}

/// Word `index` of the block that rank `from` sends to rank `to`, before any stamp.
fn alltoall_word(from: usize, to: usize, index: usize) -> u64 {
    ((from as u64) << 48) ^ ((to as u64) << 32) ^ index as u64
}

/// Word 0 of the block `from` sends to `to` in `iteration` (below 2^32; ranks below 2^16).
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
        let what = format!("rank {rank}'s word {index} from rank {from} was wrong");
        Some(format!("wrong result: {what} in iteration {iteration}"))
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

/// The size of each team of `shape` with `members` members in rows of `columns` (the last short).
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

/// A member of the team a row runs on, and the member a sub-team's was split from: the parent
/// team outlives the row whatever the library does with it.
type Placed = (Member, Option<Member>);

/// One member per rank of `team`, on the teams of `shape`, in rank order. `split_grid` is
/// collective, so each member splits on a thread of its own.
fn place(team: &Team, shape: Shape, columns: usize) -> Result<Vec<Placed>, String> {
    let members = team.participants();
    if shape == Shape::All {
        return Ok(members.into_iter().map(|member| (member, None)).collect());
    }
    std::thread::scope(|scope| {
        let split = |mut member: Member| {
            let (row, column) = (member.split_grid(columns))
                .map_err(|error| format!("split_grid({columns}) failed: {error}"))?;
            let member_of = if shape == Shape::Row { row } else { column };
            Ok((member_of, Some(member)))
        };
        let spawn = |member| scope.spawn(move || split(member));
        let threads: Vec<_> = members.into_iter().map(spawn).collect();
        let panicked = |panic: Box<_>| format!("split_grid panicked: {}", panic_message(&*panic));
        (threads.into_iter())
            .map(|thread| thread.join().map_err(panicked)?)
            .collect()
    })
}

const ALLREDUCE_GOAL: f64 = 1.5;

/// Which row a figure cell reads: a contender at a point (all of whose keys the row must have).
type Cell = (&'static str, Fields);

/// A figure's lines: a label, the row over and the row under, read at each member count.
type Lines = Vec<(String, Cell, Cell)>;

/// A figure, or the line saying it was not measured.
type Drawn = Result<String, String>;

/// A cell of a figure from its row over and its row under.
type Show<'a> = &'a dyn Fn(Option<&Row>, Option<&Row>) -> String;

/// The library's rows of `op` in `part` on the teams of `shape`.
fn team(part: Part, op: Operation, shape: Shape) -> Cell {
    (TEAM, op.at(part).with("team", name(shape)))
}

/// The library's rows of `op` in `part` on the team of all, with `key` at `value`.
fn all_with(part: Part, op: Operation, key: &str, value: impl Into<Value>) -> Cell {
    let (contender, at) = team(part, op, Shape::All);
    (contender, at.with(key, value))
}

/// The row `cell` picks among `rows` at `members` (a memcpy at any), when it ran without error.
fn find<'a>(rows: &'a [Row], (contender, at): &Cell, members: usize) -> Option<&'a Row> {
    rows.iter().find(|row| {
        let here = row.threads == members || row.kind == Kind::Floor;
        let keys = at.0.iter().all(|(k, v)| row.at.get(k) == Some(v));
        row.error.is_none() && row.contender == *contender && here && keys
    })
}

/// The ratio of the medians of two rows.
fn medians(over: Option<&Row>, under: Option<&Row>) -> String {
    ratio_text(over.and_then(Row::median), under.and_then(Row::median))
}

/// A broadcast's fraction of its memcpy's bandwidth, and its own.
fn fraction(row: Option<&Row>, _: Option<&Row>) -> String {
    let value = |key| row.and_then(|row| row.value(key));
    match value("fraction_of_memcpy").zip(value("bandwidth_gb_s")) {
        Some((fraction, gb)) => format!("{:.0}% ({gb:.2} GB/s)", fraction * 100.0),
        None => "-".to_owned(),
    }
}

/// `1.02x [0.97-1.08]`: median and range of twins' per-round ratios, in which drift cancels.
fn rounds(over: Option<&Row>, under: Option<&Row>) -> String {
    let [over, under] = [over, under].map(|row| row.map_or(&[][..], |r| &r.round_medians_ns));
    let pairs = over.iter().zip(under);
    let ratios: Vec<f64> = pairs
        .filter_map(|(o, u)| quotient(Some(*o), Some(*u)))
        .collect();
    let Some(median) = stats::median(&ratios) else {
        return "-".to_owned();
    };
    if ratios.len() < 2 {
        return format!("{median:.2}x");
    }
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{median:.2}x [{low:.2}-{high:.2}]")
}

impl Collectives {
    /// `title` and a line per measured entry of `lines`, or `title: not measured (needs ...)`.
    fn draw(&self, rows: &[Row], title: &str, needs: &str, lines: Lines, show: Show) -> Drawn {
        let measured =
            |cell: &Cell| (rows.iter()).any(|row| row.at.get("part") == cell.1.get("part"));
        let heads: Vec<String> = self.members.iter().map(|n| format!("N={n}")).collect();
        let lines: Vec<_> = (lines.into_iter())
            .filter(|(_, over, under)| measured(over) && measured(under))
            .map(|(label, over, under)| {
                let at = |&n: &usize| show(find(rows, &over, n), find(rows, &under, n));
                (label, self.members.iter().map(at).collect())
            })
            .collect();
        match lines.is_empty() {
            true => Err(format!("{title}: not measured (needs {needs})\n")),
            false => Ok(ratio::grid(title, &heads, lines)),
        }
    }

    /// Figures (a) to (e): ratios of medians of this run, a column per member count.
    fn figures(&self, rows: &[Row]) -> String {
        let (barrier, allreduce) = (Operation::Barrier, Operation::Allreduce);
        let ours = (OURS, barrier.at(Part::Barrier));
        let all = |part, op| team(part, op, Shape::All);
        let mut a: Lines = (self.teams.iter())
            .map(|&shape| {
                let label = format!("team {} ÷ its barrier", name(shape));
                let over = team(Part::Allreduce, allreduce, shape);
                (label, over, team(Part::Barrier, barrier, shape))
            })
            .collect();
        let over = all(Part::Allreduce, allreduce);
        a.push((format!("team all ÷ {OURS}"), over, ours.clone()));
        let title = format!(
            "(a) allreduce of one u64 ÷ barrier, medians (goal: {ALLREDUCE_GOAL}x or less)"
        );
        let goal = self.goal(rows);
        let a = self.draw(rows, &title, "--ops barrier,allreduce", a, &medians);
        let a = a.map(|grid| format!("{grid}    goal (team of all ÷ its barrier): {goal}\n"));

        let words = self.words[self.words.len() - 1];
        let copy = (MEMCPY, Operation::Memcpy(words).at(Part::Broadcast));
        let copy_gb = find(rows, &copy, 0).and_then(|row| row.value("bandwidth_gb_s"));
        let copy_gb = copy_gb.map_or("not measured".to_owned(), |gb| format!("{gb:.2} GB/s"));
        let op = Operation::Broadcast(words);
        let on = |shape| team(Part::Broadcast, op, shape);
        let mut b: Lines = (self.teams.iter())
            .map(|&shape| (format!("team {}", name(shape)), on(shape), copy.clone()))
            .collect();
        let omp = (OMP_BCAST, op.at(Part::Broadcast));
        b.push((OMP_BCAST.to_owned(), omp, copy));
        let title = format!(
            "(b) broadcast of {words} words from a rotating root: bandwidth (payload over median \
             time) as a fraction of a memcpy of the same length"
        );
        let with_copy = format!("{title}\n    memcpy of {words} words on one thread: {copy_gb}");
        let b = self.draw(rows, &with_copy, "", b, &fraction);
        let b = b.map_err(|_| format!("{title}: not measured (needs --ops broadcast)\n"));

        // `team all barrier ÷ omp barrier`, `team all broadcast 8 words ÷ omp`.
        let versus = |part, op: Operation, what: String| {
            let (_, omp) = op.openmp()?;
            let to = if part == Part::Broadcast { "omp" } else { omp };
            let label = format!("team all {what} ÷ {to}");
            Some((label, all(part, op), (omp, op.at(part))))
        };
        let (first, middle) = (self.words[0], self.words[self.words.len() / 2]);
        let mut sizes = vec![first, middle, words];
        sizes.dedup();
        let omp_barrier = (OMP_BARRIER, barrier.at(Part::Barrier));
        let c: Lines = [
            versus(Part::Barrier, barrier, "barrier".into()),
            Some((format!("{OURS} ÷ {OMP_BARRIER}"), ours, omp_barrier)),
            versus(Part::Allreduce, allreduce, "allreduce".into()),
        ]
        .into_iter()
        .chain(sizes.into_iter().map(|words| {
            let what = format!("broadcast {words} words");
            versus(Part::Broadcast, Operation::Broadcast(words), what)
        }))
        .flatten()
        .collect();
        let title = "(c) ours ÷ OpenMP, medians (below 1: ours is faster)";
        let c = self.draw(rows, title, "barrier, allreduce or broadcast", c, &medians);

        let mut title = "(d) checked ÷ unchecked team: the median of the rounds' ratios [their \
                         range]; what checking that every call matches costs (goal: 1.10x or less)"
            .to_owned();
        if cfg!(debug_assertions) {
            title.push_str(" (a debug build: run with --release for numbers that mean anything)");
        }
        let twin = |op, on: bool| all_with(Part::Checked, op, "checked", on);
        let d = CHECKED_OPERATIONS.map(|op| (op.label(), twin(op, true), twin(op, false)));
        let d = self.draw(rows, &title, "--ops checked", d.into(), &rounds);

        let title = "(e) sync modes: broadcast ÷ the AllSync broadcast of the same length, \
                     medians (below 1: the weaker mode pays off)";
        let e: Lines = (self.sync_words.iter())
            .flat_map(|&words| {
                let op = Operation::Broadcast(words);
                let mode = |m: SyncMode| all_with(Part::SyncModes, op, "sync_mode", m.name());
                [SyncMode::MySync, SyncMode::NoSync].map(|m| {
                    let label = format!("{words} words {}", m.name());
                    (label, mode(m), mode(SyncMode::AllSync))
                })
            })
            .collect();
        let e = self.draw(rows, title, "--ops sync-modes", e, &medians);
        let figures = [a, b, c, d, e].map(|drawn| drawn.unwrap_or_else(|text| text));
        figures.join("\n")
    }

    /// Figure (a)'s verdict: the member counts where the team of all met the goal and missed it.
    fn goal(&self, rows: &[Row]) -> String {
        let allreduce = team(Part::Allreduce, Operation::Allreduce, Shape::All);
        let barrier = team(Part::Barrier, Operation::Barrier, Shape::All);
        let (mut met, mut missed) = (Vec::new(), Vec::new());
        for &n in &self.members {
            let median = |cell| find(rows, cell, n).and_then(Row::median);
            if let Some(ratio) = quotient(median(&allreduce), median(&barrier)) {
                let goal_met = ratio <= ALLREDUCE_GOAL;
                if goal_met { &mut met } else { &mut missed }.push(n.to_string());
            }
        }
        match (met.join(", ").as_str(), missed.join(", ").as_str()) {
            ("", "") => "not measured on the team of all".to_owned(),
            (met, "") => format!("met at every N measured ({met})"),
            ("", missed) => format!("missed at every N measured ({missed})"),
            (met, missed) => format!("met at N = {met}; missed at N = {missed}"),
        }
    }
}

/// `numerator / denominator`, when both are known and the denominator is positive.
fn quotient(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    Some(numerator? / denominator.filter(|d| *d > 0.0)?)
}

/// Every row of `bench collectives` with a line about it, for `phasers list`.
pub fn list() -> Vec<(&'static str, &'static str)> {
    let names = [TEAM, OURS, STD, OMP_BARRIER, OMP_REDUCE, OMP_BCAST, MEMCPY];
    let about = [
        "a Team member per thread: barrier(), allreduce of one u64 (Op::Sum), broadcast from root \
         iteration % size, alltoall; on the team of all and split_grid's row and column teams; \
         checked and unchecked; AllSync, MySync, NoSync",
        "our Barrier with Algorithm::Auto on N threads: what a team's barrier and allreduce face",
        "Rust's std::sync::Barrier on N threads",
        "OpenMP #pragma omp barrier (libgomp), back to back in one parallel region",
        "OpenMP omp for reduction(+:x) of one u64 per thread, then every thread reads the sum",
        "OpenMP: the root copies into a shared buffer, barrier, the others copy it out, barrier",
        "copy_from_slice of a broadcast's length on one thread: what broadcast bandwidth is over",
    ];
    names.into_iter().zip(about).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(options: &str) -> Result<CollectivesArgs, clap::Error> {
        let options = options.split_whitespace();
        CollectivesArgs::try_parse_from(std::iter::once("collectives").chain(options))
    }

    fn run(options: &str) -> Collectives {
        Collectives::new(&parse(options).unwrap())
    }

    #[test]
    fn defaults_are_the_issues_sweep_and_lists_are_sorted_once() {
        let default = run("");
        assert_eq!(default.members, DEFAULT_MEMBERS);
        assert_eq!((default.teams.len(), default.parts.len()), (3, 6));
        assert_eq!((default.columns_for(32), default.words.len()), (8, 16));
        assert_eq!(default.words[..2], [4, 8]);
        assert_eq!(default.words[14..], [65_536, 100_000]);
        let plan = &default.plan;
        assert_eq!(plan.schedule.target_sample, Duration::from_millis(20));
        assert_eq!(plan.pacing, Pacing::Looped);
        let given = run(
            "--threads 8,2,8 --teams column,all --columns 3 --ops sync-modes,barrier \
             --words 100k,4,1_024 --time 0.05 --samples 5 --pin",
        );
        assert_eq!((&given.members, given.columns_for(64)), (&vec![2, 8], 3));
        assert_eq!(given.teams, vec![Shape::All, Shape::Column]);
        assert_eq!(given.parts, vec![Part::Barrier, Part::SyncModes]);
        assert_eq!(given.words, vec![4, 1024, 100_000]);
        assert!(given.plan.pin && given.plan.schedule.target_sample == Duration::from_millis(10));
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        for (options, message) in [
            ("--threads 1", "at least 2 members"),
            ("--columns 0", "not a number of columns"),
            ("--words 0", "starts at 1 word"),
            ("--words 1,,2", "not a broadcast length"),
            ("--words 99999999", "allowed for a broadcast length"),
            ("--blocks 2000000", "allowed for an alltoall block"),
        ] {
            let error = parse(options).unwrap_err().to_string();
            assert!(error.contains(message), "{options}: {error}");
        }
    }

    #[test]
    fn team_sizes_and_places_follow_split_grid() {
        // Ranks 0-3 and 4-5 in rows; {0, 4}, {1, 5}, {2}, {3} in columns.
        for (shape, members, columns, sizes) in [
            (Shape::All, 6, 4, vec![6]),
            (Shape::Row, 6, 4, vec![4, 2]),
            (Shape::Column, 6, 4, vec![2, 2, 1, 1]),
            (Shape::Column, 2, 8, vec![1, 1]),
        ] {
            assert_eq!(team_sizes(shape, members, columns), sizes);
        }
        // Each member's team size and rank, in rank order of the team of all.
        for &shape in Shape::value_variants() {
            let sizes = team_sizes(shape, 6, 4);
            let placed = place(&Team::new(6).unwrap(), shape, 4).unwrap();
            for (rank, (member, _)) in placed.iter().enumerate() {
                let (team, at) = match shape {
                    Shape::All => (0, rank),
                    Shape::Row => (rank / 4, rank % 4),
                    Shape::Column => (rank % 4, rank / 4),
                };
                let got = (member.parties(), member.rank());
                assert_eq!(got, (sizes[team], at), "{shape:?} rank {rank}");
            }
        }
    }

    #[test]
    fn checks_catch_stale_and_misplaced_results() {
        // The sum of 3 members in iteration 4: 1 + 2 + 3, and 4 from each.
        let stale = Allreduce([18]);
        let wrong = stale.check(0, 3, 5).unwrap();
        assert!(wrong.starts_with("wrong result:"), "{wrong}");
        assert_eq!(stale.check(0, 3, 4), None);
        // A receiver that kept its own buffer, and one that got the wrong root's first call.
        assert!(Broadcast::new(1, 8).check(1, 2, 0).is_some());
        let mut from_wrong_root = Broadcast::new(1, 8);
        from_wrong_root.0[0] = u64::MAX;
        assert!(from_wrong_root.check(1, 2, 0).unwrap().contains("word 1"));
        from_wrong_root.0 = Broadcast::new(0, 8).0;
        from_wrong_root.0[0] = u64::MAX;
        assert_eq!(from_wrong_root.check(1, 2, 0), None);
        // The stamps of 4 iterations among 5 ranks are all different.
        let stamps = (0..100).map(|n: usize| alltoall_stamp(n as u64 / 25, n / 5 % 5, n % 5));
        let distinct: std::collections::HashSet<u64> = stamps.collect();
        assert_eq!(distinct.len(), 100);
        // Rank 1 of 2 receiving each rank's block with the sender's initial words in place.
        let mut received = Alltoall::new(1, 2, 3);
        for from in 0..2 {
            let block = &mut received.output[from * 3..(from + 1) * 3];
            block[0] = alltoall_stamp(0, from, 1);
            block[1] = alltoall_word(from, 1, 1);
            block[2] = alltoall_word(from, 1, 2);
        }
        assert_eq!(received.check(1, 2, 0), None);
        let message = |received: &Alltoall, iteration| received.check(1, 2, iteration).unwrap();
        assert!(message(&received, 1).contains("word 0 from rank 0"));
        received.output[5] = 0;
        assert!(message(&received, 0).contains("word 2 from rank 1"));
    }

    #[test]
    fn figures_divide_the_medians_of_one_run_and_tables_show_the_memcpy() {
        let bench = run("--threads 2,4 --teams all --words 100 --sync-words 8 --rounds 3");
        let all = |checked, sync| Contender::Team(Shape::All, checked, sync);
        let auto = all(None, SyncMode::AllSync);
        let (my, no) = (all(None, SyncMode::MySync), all(None, SyncMode::NoSync));
        let on = all(Some(true), SyncMode::AllSync);
        let off = all(Some(false), SyncMode::AllSync);
        let (barrier, allreduce) = (Operation::Barrier, Operation::Allreduce);
        let (bcast, copy) = (Operation::Broadcast(100), Operation::Memcpy(100));
        let sync = Operation::Broadcast(8);
        let mut rows: Vec<Row> = [
            (2, Part::Barrier, barrier, auto, &[100.0][..]),
            (2, Part::Barrier, barrier, Contender::Ours, &[80.0]),
            (2, Part::Barrier, barrier, Contender::OpenMp, &[200.0]),
            (4, Part::Barrier, barrier, auto, &[100.0]),
            (2, Part::Allreduce, allreduce, auto, &[120.0]),
            (4, Part::Allreduce, allreduce, auto, &[300.0]),
            (2, Part::Broadcast, copy, Contender::Memcpy, &[50.0]),
            (2, Part::Broadcast, bcast, auto, &[500.0]),
            (2, Part::Broadcast, bcast, Contender::OpenMp, &[1000.0]),
            (2, Part::SyncModes, sync, auto, &[100.0]),
            (2, Part::SyncModes, sync, my, &[80.0]),
            (2, Part::SyncModes, sync, no, &[50.0]),
            (2, Part::Checked, barrier, on, &[150.0, 330.0, 100.0]),
            (2, Part::Checked, barrier, off, &[100.0, 300.0, 100.0]),
        ]
        .map(|(members, part, op, who, ns)| {
            let plan = bench.row(Job { part, op, who }, members);
            let threads = if who == Contender::Memcpy { 1 } else { members };
            let mut row = Row::new(&plan.name, plan.kind, threads, plan.at);
            row.raw_ns = ns.to_vec();
            row.finish(0, None);
            row.round_medians_ns = ns.to_vec();
            row
        })
        .into();
        bench.derive(&mut rows);
        // 800 bytes in 50 ns and in 500 ns.
        assert_eq!(rows[7].value("fraction_of_memcpy"), Some(0.1));
        let text = bench.figures(&rows);
        // 120 over the team's barrier's 100, over our Barrier's 80; 300 over 100 at N = 4; the
        // team's barrier and our Barrier over OpenMP's.
        let ratios = ["1.20x", "1.50x", "3.00x", "0.50x", "0.40x"];
        for part in ratios.into_iter().chain([
            "met at N = 2; missed at N = 4",
            "memcpy of 100 words on one thread: 16.00 GB/s",
            "10% (1.60 GB/s)",
            "team all barrier ÷ omp barrier",
            // The rounds' ratios are 1.5, 1.1 and 1.0: their median and range.
            "1.10x [1.00-1.50]",
            "8 words MySync  0.80x",
            "8 words NoSync  0.50x",
        ]) {
            assert!(text.contains(part), "{part} in\n{text}");
        }
        // One round, and none.
        assert_eq!(rounds(Some(&rows[0]), Some(&rows[1])), "1.25x");
        assert_eq!(rounds(None, Some(&rows[1])), "-");
        assert_eq!(bench.figures(&[]).matches("not measured").count(), 5);

        // One table per member count, of every part's rows, in three interleaved rounds. The
        // memcpy is measured once, in the first table, and shown in every one.
        let tables = bench.tables();
        assert_eq!(
            tables
                .iter()
                .map(|t| (t.threads, t.rounds))
                .collect::<Vec<_>>(),
            [(2, 3), (4, 3)]
        );
        let parts = |t: &TablePlan<Job>| {
            let mut parts: Vec<Part> = t.rows.iter().map(|r| r.contender.part).collect();
            parts.dedup();
            parts
        };
        assert_eq!(parts(&tables[1]), Part::value_variants());
        let copies = |t: &TablePlan<Job>| t.rows.iter().filter(|r| r.contender.op == copy).count();
        assert_eq!(tables.iter().map(copies).collect::<Vec<_>>(), [1, 0]);
        let refs: Vec<&Row> = rows.iter().filter(|row| row.threads <= 2).collect();
        let shown = bench.show(&tables[1], &refs, &[], false).unwrap();
        assert!(shown.contains("memcpy 100 words"), "{shown}");
        assert!(
            shown.contains("barrier, checked") && shown.contains("sync-modes"),
            "{shown}"
        );
        // Every row in every round; only the checked twins (adjacent, anywhere in the table)
        // swap, in odd rounds.
        let table = &tables[1];
        let even = bench.order(table, 0);
        assert_eq!(even, (0..table.rows.len()).collect::<Vec<_>>());
        let odd = bench.order(table, 1);
        let checked: Vec<usize> = (0..odd.len())
            .filter(|&i| table.rows[i].contender.part == Part::Checked)
            .collect();
        assert_eq!(checked.len(), 6);
        for (index, &ran) in odd.iter().enumerate() {
            let twin = checked
                .contains(&index)
                .then(|| checked[(index - checked[0]) ^ 1]);
            assert_eq!(ran, twin.unwrap_or(index), "row {index} in an odd round");
        }
        // Three rounds of ten samples: 4, 3 and 3, each with a third of the budget.
        let ten = run("--samples 10 --rounds 3");
        let shares: Vec<usize> = (0..3).map(|r| ten.round(r).schedule.samples).collect();
        assert_eq!(shares, [4, 3, 3]);
        assert_eq!(
            ten.round(2).schedule.row_budget,
            ten.plan.schedule.row_budget / 3
        );
        assert_eq!(
            run("--samples 4").rounds,
            4,
            "one sample per round by default"
        );
        let refused = check(&parse("--samples 4 --rounds 9").unwrap()).unwrap_err();
        assert!(
            refused.contains("--rounds 9 is more than --samples 4"),
            "{refused}"
        );
        assert_eq!(check(&parse("--samples 4 --rounds 4").unwrap()), Ok(()));
    }
}
