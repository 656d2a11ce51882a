//! `phasers bench reduce`: array reductions (`Reduction<f32>`, `Op::Sum`) as seed 003 measured
//! them, against OpenMP's `reduction(+:arr[:n])`, a mutex-merged reduction and the bandwidth floor.
//! An iteration is a barrier (not timed), a stall, an arrival stamp, the call and a return stamp.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use phasers::{is_oversubscribed, Op, ReduceAlgorithm, Reducer, Reduction};
use phasers_cli::harness::args::{
    first_of_each, parse_scaled, parse_seconds, parse_svg_path, sorted_unique,
};
use phasers_cli::harness::bench::{self, Benchmark};
use phasers_cli::harness::engine::{self, Pacing, Plan, Timeline};
use phasers_cli::harness::floor::{self, Floor};
use phasers_cli::harness::footnotes::fit;
use phasers_cli::harness::header::Header;
use phasers_cli::harness::interleave::{RowPlan, TablePlan};
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick, Ratio};
use phasers_cli::harness::render::{Column, Format, Layout, PlotSpec, Stat};
use phasers_cli::harness::result::{Fields, Kind, RatioRecord, Report, Row, Settings};
use phasers_cli::harness::run_args::RunArgs;
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::stalls::{parse_spread, Preset, Spread, StallPolicy, Stalls};
use phasers_cli::harness::table::{ratio as times, time};
use phasers_cli::harness::threads::parse_thread_count;
use phasers_cli::harness::watchdog::Watch;
use phasers_cli::harness::work::{Failure, Work};
use phasers_cli::harness::{child, files, memory, stats};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::native::{omp_reduce, ACTIVE_WAIT_POLICY};

/// Participant counts of a default run: the seed's 4 to 32, and 2, the smallest reduction.
const DEFAULT_THREADS: [usize; 5] = [2, 4, 8, 16, 32];
/// Array lengths of a default run: the seed's, and 16 M, where only memory bandwidth counts.
const DEFAULT_SIZES: [usize; 7] = [1, 1_000, 5_000, 10_000, 64_000, 200_000, 16_000_000];
/// Where arrays count as large: an iteration takes milliseconds and varies little, so fewer do.
const LARGE_ARRAY: usize = 1_000_000;
const LARGE_MIN_ITERATIONS: usize = 5;
/// With the default sizes, large arrays run only up to this many participants (about 1 GB).
const LARGE_DEFAULT_MAX_THREADS: usize = 4;
/// The longest array `--sizes` accepts: 1 GiB per participant's input.
const MAX_LEN: usize = 1 << 28;
/// Iterations before the measured ones: the first touches every page, and its result is checked.
const WARM_UP: usize = 1;
/// A row's budget beyond ten times `--min-time`, so even the largest arrays get their minimum.
const BUDGET_MARGIN: Duration = Duration::from_secs(2);
/// The point keys a row is named by in failures and the plots (in the plots' file names' order).
const SLICE: &[&str] = &["mode", "arrival_spread", "floats"];

/// Options of `phasers bench reduce`.
#[derive(Debug, Clone, Parser)]
#[command(name = "reduce")]
#[command(mut_arg("hang_seconds", |arg| arg.help(
    "Stop the whole run when a row completes no iteration for this many seconds: it is hung"
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

    /// The metric of the samples, medians, ÷omp, plots and OpenMP ratios (all five are measured).
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

    /// Seed of the stall tables: every contender and every run with this seed get the same stalls.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// `--hang-seconds`, `--json`, `--csv`, `--verbose`.
    #[command(flatten)]
    pub run: RunArgs,

    /// Plot the median --metric against N, one SVG per collective, spread and size, named
    /// `FILE-<mode>-<spread>-<size>.svg` beside FILE.
    #[arg(long, visible_alias = "svg", value_name = "FILE.svg", value_parser = parse_svg_path)]
    pub plot: Option<PathBuf>,
}

/// Parses one entry of `--threads`: a participant count of at least 2.
fn parse_participants(text: &str) -> Result<usize, String> {
    match parse_thread_count(text)? {
        1 => Err("a reduction needs at least 2 participants to measure anything".to_owned()),
        n => Ok(n),
    }
}

/// Parses one entry of `--sizes`: a whole number of floats from 1, optionally with `k` or `M`.
fn parse_size(text: &str) -> Result<usize, String> {
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

/// One point of the sweep: what its rows share, and the `OMP_WAIT_POLICY=active` child's job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Point {
    threads: usize,
    len: usize,
    mode: Collective,
    spread: Spread,
    /// The stall table, `threads` per iteration, the warm-up's first: every row reads the same.
    stalls: Vec<u64>,
    min_iterations: usize,
    min_time: Duration,
    max_iterations: usize,
    budget: Duration,
    hang_after: Duration,
}

impl Point {
    fn stalls(&self) -> Result<Stalls, String> {
        Stalls::from_table(self.threads, self.stalls.clone())
    }

    /// The engine's plan of a row of this point, stalling as `stalls` says.
    fn plan(&self, stalls: Option<Arc<Stalls>>) -> Plan {
        let schedule = Schedule {
            episodes: Some(1),
            samples: self.max_iterations,
            target_sample: Duration::ZERO,
            row_budget: self.budget,
        };
        Plan {
            warm_up: WARM_UP as u64,
            enough: Some((self.min_iterations, self.min_time)),
            ..Plan::new(schedule, Pacing::Stamped { stalls }, self.hang_after)
        }
    }

    /// The parameter point of a contender's row, or of the floor's (no spread).
    fn at(&self, floor: bool) -> Fields {
        let at = Fields::default().with("floats", self.len);
        let at = at.with("mode", self.mode.name());
        if floor {
            return at;
        }
        let policy = json!(StallPolicy::for_threads(self.threads));
        (at.with("arrival_spread", self.spread.name())).with("stall_policy", policy)
    }

    /// A row of this point with nothing measured: a contender's, or the floor's.
    fn row(&self, contender: &str, kind: Kind) -> Row {
        let floor = kind == Kind::Floor;
        let workers = [self.threads, floor_workers(self.threads)][usize::from(floor)];
        let mut row = Row::new(contender, kind, self.threads, self.at(floor));
        row.oversubscribed = is_oversubscribed(workers);
        row.samples_wanted = self.max_iterations;
        let realized = (!floor).then(|| self.stalls().ok().map(|s| s.realized()));
        row.extra = Fields::default()
            .with("workers", workers)
            .with("bytes", self.mode.bytes(self.threads, self.len))
            .with("chose", json!({}))
            .with("realized_spread", json!(realized.flatten()));
        for key in METRICS.iter().chain(&BANDWIDTH) {
            row.extra.set(key, Value::Null);
        }
        row
    }
}

/// The run [`ReduceArgs`] ask for, and what its rows share while it runs.
struct Reduce {
    method: String,
    threads: Vec<usize>,
    sizes: Vec<usize>,
    /// With the default sizes: lengths from [`LARGE_ARRAY`] only up to this many participants.
    large_max_threads: Option<usize>,
    spreads: Vec<Spread>,
    modes: Vec<Collective>,
    contenders: Vec<Contender>,
    metric: Metric,
    /// The stop rule and hang time of every point (its other fields are unused).
    base: Point,
    seed: u64,
    /// Each floor row by (N, length, collective), measured for the first table that shows it.
    floors: RefCell<BTreeMap<Key, Row>>,
    /// The point being measured and its sequential sum, or why it does not fit in memory.
    current: RefCell<Option<(Key, Prepared)>>,
}

/// A point's N, length and collective: what its sum and floor row are for.
type Key = (usize, usize, Collective);

type Prepared = Result<Arc<[f32]>, String>;

impl Reduce {
    fn from_args(args: &ReduceArgs) -> Result<Self, String> {
        let (min, max) = (args.min_iterations as usize, args.max_iterations as usize);
        if min > max {
            return Err(format!(
                "--min-iterations {min} is more than --max-iterations {max}"
            ));
        }
        let budget = (args.min_time.saturating_mul(10)).saturating_add(BUDGET_MARGIN);
        let large_min = min.min(LARGE_MIN_ITERATIONS);
        let spreads = args.spread.clone();
        let spreads = spreads.unwrap_or_else(|| Preset::ALL.map(Preset::spread).into());
        Ok(Reduce {
            method: format!(
                "seed 003's: every participant has its own array; each iteration a barrier (not \
                 timed), a stall drawn per participant from the spread's normal clipped to [0, \
                 max] (busy-waiting on the clock; yielding between looks when participants \
                 outnumber cores), an arrival stamp, the call, a return stamp. {WARM_UP} warm-up \
                 iteration, whose result is checked against the sequential sum, then at least \
                 {min} iterations ({large_min} from {LARGE_ARRAY} floats) and {} s per row, at \
                 most {max}, stopping {} s after the row's start; the same stalls for every \
                 contender at a point (seed {}); every row but the floor's in \
                 {FLOOR_PAIRED_ROUNDS} rounds, each next to a round of the bandwidth floor, which \
                 its ÷floor is held against (the machine's speed drifts between rows)",
                args.min_time.as_secs_f64(),
                budget.as_secs_f64(),
                args.seed,
            ),
            threads: sorted_unique(args.threads.clone().unwrap_or(DEFAULT_THREADS.into())),
            sizes: sorted_unique(args.sizes.clone().unwrap_or(DEFAULT_SIZES.into())),
            large_max_threads: args.sizes.is_none().then_some(LARGE_DEFAULT_MAX_THREADS),
            spreads: first_of_each(spreads),
            modes: first_of_each(args.mode.clone().unwrap_or(Collective::ALL.into())),
            contenders: first_of_each(args.algorithms.clone().unwrap_or_else(Contender::all)),
            metric: args.metric,
            base: Point {
                threads: 0,
                len: 0,
                mode: Collective::Reduce,
                spread: Preset::None.spread(),
                stalls: Vec::new(),
                min_iterations: min,
                min_time: args.min_time,
                max_iterations: max,
                budget,
                hang_after: args.run.hang_seconds,
            },
            seed: args.seed,
            floors: RefCell::default(),
            current: RefCell::default(),
        })
    }

    /// `point`'s sequential sum, or why it does not fit in memory; the last point's is dropped.
    fn prepare(&self, point: &Point) -> Prepared {
        let key = (point.threads, point.len, point.mode);
        let mut current = self.current.borrow_mut();
        if current.as_ref().is_some_and(|(at, _)| *at != key) {
            *current = None;
        }
        let (_, prepared) = current.get_or_insert_with(|| {
            let needed = point.mode.memory_needed(point.threads, point.len);
            let prepared = match memory::too_big(needed, memory::available()) {
                Some(why) => Err(why),
                None => Ok(expected(point.threads, point.len).into()),
            };
            (key, prepared)
        });
        prepared.clone()
    }
}

/// One row of a point: a contender, or the bandwidth floor its bandwidth is held against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    /// `Reduction<f32>` with `Op::Sum` and this algorithm.
    Ours(ReduceAlgorithm),
    /// OpenMP's `reduction(+:arr[:n])` (libgomp), through `baselines/omp_array_reduce.c`.
    OpenMp,
    /// The same under `OMP_WAIT_POLICY=active`, in a child process (libgomp reads it at load).
    OpenMpActive,
    /// `Mutex<Vec<f32>>`: each participant locks and adds its array in ([`Merging`]).
    Mutex,
    /// The bandwidth floor ([`StreamAdd`]), which does not reduce.
    Floor,
}

const OPENMP_NAME: &str = "omp reduction(+:arr[:n])";
const OPENMP_ACTIVE_NAME: &str = "omp reduction(+:arr[:n]) (active)";
const FLOOR_NAME: &str = "bandwidth floor";

impl Contender {
    /// Every contender, in table order: ours (`auto` last), then the baselines.
    fn all() -> Vec<Contender> {
        let ours = ReduceAlgorithm::ALL.into_iter().map(Contender::Ours);
        (ours.chain([Contender::OpenMp, Contender::OpenMpActive, Contender::Mutex])).collect()
    }

    fn name(self) -> &'static str {
        match self {
            Contender::Ours(algorithm) => algorithm.name(),
            Contender::OpenMp => OPENMP_NAME,
            Contender::OpenMpActive => OPENMP_ACTIVE_NAME,
            Contender::Mutex => "mutex-merged",
            Contender::Floor => FLOOR_NAME,
        }
    }

    fn kind(self) -> Kind {
        match self {
            Contender::Ours(_) => Kind::Ours,
            Contender::Floor => Kind::Floor,
            _ => Kind::Baseline,
        }
    }
}

/// A line about each contender, in [`Contender::all`]'s order, then the floor's.
const DESCRIPTIONS: [&str; 9] = [
    "Reduction<f32> linear: everyone meets, then each reduces 1/N of the array across \
     all inputs; fixed order, no quick return",
    "Reduction<f32> static tree: pairs by rank, distance doubling; the consumed \
     participant returns at once",
    "Reduction<f32> dynamic pairs (seed 003): pairs form in arrival order; the \
     earlier arrival returns once its data is consumed",
    "Reduction<f32> dynamic group: as dynamic pairs, but participants that would \
     return help later pairs",
    "Reduction<f32> auto: chooses per call from length, N, cores and recent arrival \
     spread (the report says which it chose)",
    "OpenMP `omp for reduction(+:arr[:n])` (libgomp), one iteration per thread, in \
     one parallel region; same stalls, timed in C",
    "the same with OMP_WAIT_POLICY=active, as OpenMP users tune it (waiting threads \
     spin rather than sleep); libgomp reads it at load, so a child process measures it",
    "std::sync::Mutex<Vec<f32>>: each thread locks and adds its array in; the root \
     waits on a Condvar for the count",
    "STREAM-like add out[i] = a[i] + b[i] on min(N, cores) threads over the bytes an \
     optimal reduction moves; the reductions' bandwidth is given as a fraction of its",
];

/// Parses one entry of `--algorithms`: an algorithm, `omp`, `omp-active` or `mutex`.
fn parse_contender(text: &str) -> Result<Contender, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "omp" | "openmp" => Ok(Contender::OpenMp),
        "omp-active" | "openmp-active" => Ok(Contender::OpenMpActive),
        "mutex" | "mutex-merged" => Ok(Contender::Mutex),
        other => other.parse().map(Contender::Ours).map_err(|_| {
            let names = ReduceAlgorithm::ALL.map(ReduceAlgorithm::name).join(", ");
            let names = names + ", omp, omp-active, mutex";
            format!("{text:?} is not a reduction algorithm or baseline; use one of {names}")
        }),
    }
}

/// Every contender of `bench reduce` with a line about it, for `phasers list`.
pub fn list() -> Vec<(String, &'static str)> {
    let all = Contender::all().into_iter().chain([Contender::Floor]);
    all.map(|c| c.name().to_owned()).zip(DESCRIPTIONS).collect()
}

/// The collective, as `--mode` names it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Collective {
    /// Only the root (rank 0, the library's default) receives the sum.
    Reduce,
    /// Every participant receives the sum.
    Allreduce,
}

impl Collective {
    const ALL: [Collective; 2] = [Collective::Reduce, Collective::Allreduce];

    fn name(self) -> &'static str {
        ["reduce", "allreduce"][self as usize]
    }

    /// The bytes an optimal reduction moves: each input read once, the result written per receiver.
    fn bytes(self, threads: usize, len: usize) -> u64 {
        (threads + self.receivers(threads)) as u64 * len as u64 * 4
    }

    /// How many of `threads` participants receive the result: the first ones by rank.
    fn receivers(self, threads: usize) -> usize {
        [1, threads][self as usize]
    }

    /// A generous estimate of a point's peak bytes: inputs, OpenMP's copies, outputs, sum, check.
    fn memory_needed(self, threads: usize, len: usize) -> u64 {
        let arrays = 2 * threads + self.receivers(threads) + 2;
        (arrays as u64).saturating_mul(len as u64 * 4)
    }
}

/// Element `index` of `rank`'s input, as `phasers_reduce_value` in C: a multiple of 1/8 below 8,
/// so sums of up to 4096 are exact in an f32, in any order of addition.
#[inline]
fn value(rank: usize, index: usize) -> f32 {
    ((rank as u64 * 131 + index as u64 * 7) % 61) as f32 / 8.0
}

/// The sum over `threads` participants, added sequentially in rank order.
fn expected(threads: usize, len: usize) -> Vec<f32> {
    let sum = |index| (0..threads).map(|rank| value(rank, index)).sum();
    (0..len).map(sum).collect()
}

/// The relative error allowed: a few roundings' worth, far below a missing or doubled input.
const TOLERANCE: f32 = 1e-5;

/// Checks `got` against the sequential sum `want`, naming the first element that differs.
fn check(got: &[f32], want: &[f32]) -> Result<(), String> {
    let (n, m) = (got.len(), want.len());
    if n != m {
        return Err(format!("wrong result: {n} elements where {m} were reduced"));
    }
    // Written so that a NaN never agrees.
    let agrees = |i: usize| (got[i] - want[i]).abs() <= TOLERANCE * want[i].abs();
    let mut wrong = (0..m).filter(|&i| !agrees(i));
    let Some(i) = wrong.next() else { return Ok(()) };
    let differ = 1 + wrong.count();
    Err(format!(
        "wrong result: element {i} is {} where the sequential sum is {} ({differ} of {m} elements \
         differ)",
        got[i], want[i]
    ))
}

/// One participant of a Rust row: its arrays, and how it reduces.
struct Participant<R> {
    rank: usize,
    receives: bool,
    expected: Arc<[f32]>,
    input: Vec<f32>,
    output: Vec<f32>,
    reduces: R,
}

/// What one call of a participant gives: the variant that ran, if the work says, or its failure.
type Call = Result<Option<&'static str>, Failure>;

/// How a [`Participant`] reduces: the library's [`Reducer`] (in this collective) or [`Merging`].
trait Reduces: Send {
    /// One call: adds `input` in, and writes the sum to `output` if the participant `receives`.
    fn call(&mut self, receives: bool, input: &[f32], output: &mut [f32]) -> Call;
}

impl Reduces for (Reducer<f32>, Collective) {
    #[inline]
    fn call(&mut self, _: bool, input: &[f32], output: &mut [f32]) -> Call {
        let (reducer, mode) = (&mut self.0, self.1);
        let outcome = match mode {
            Collective::Reduce => reducer.reduce(input, output),
            Collective::Allreduce => reducer.allreduce(input, output),
        };
        (outcome.map(|outcome| Some(outcome.algorithm().name())))
            .map_err(|error| Failure::from(error).about(mode.name()))
    }
}

/// The participants of a row at `point`, whose sum is `expected`, one per `reduces`.
fn participants<R>(point: &Point, expected: &Arc<[f32]>, reduces: Vec<R>) -> Vec<Participant<R>> {
    let participant = |(rank, reduces)| Participant {
        rank,
        receives: rank < point.mode.receivers(point.threads),
        expected: Arc::clone(expected),
        input: Vec::new(),
        output: Vec::new(),
        reduces,
    };
    reduces.into_iter().enumerate().map(participant).collect()
}

impl<R: Reduces> Work for Participant<R> {
    // A reduction's non-receivers may return before everyone has arrived.
    const SYNCHRONIZED: bool = false;

    /// Allocates and fills the arrays on the participant's own thread, where the memory is used.
    fn prepare(&mut self) -> Result<(), Failure> {
        let len = self.expected.len();
        self.input = (0..len).map(|index| value(self.rank, index)).collect();
        if self.receives {
            self.output = vec![0.0; len];
        }
        Ok(())
    }

    #[inline]
    fn iteration(&mut self, _: u64) -> Call {
        (self.reduces).call(self.receives, &self.input, &mut self.output)
    }

    fn check(&mut self) -> Result<(), Failure> {
        match self.receives {
            true => check(&self.output, &self.expected).map_err(Failure::Cause),
            false => Ok(()),
        }
    }
}

/// The hand-written reduction: a `Mutex<Vec<f32>>` each thread adds its array to, a count the
/// receivers wait on, and a generation that keeps a thread's next call out of a sum being read.
struct Merged {
    state: Mutex<MergeState>,
    changed: Condvar,
    parties: usize,
    /// Threads that copy each sum out: 1 for `reduce`, all for `allreduce`.
    readers: usize,
}

#[derive(Default)]
struct MergeState {
    generation: u64,
    sum: Vec<f32>,
    arrived: usize,
    collected: usize,
}

/// One thread's handle on a [`Merged`], and the generation of its next call.
struct Merging(Arc<Merged>, u64);

/// One handle per participant of a mutex-merged row at `point`.
fn merging(point: &Point) -> Vec<Merging> {
    let shared = Arc::new(Merged {
        state: Mutex::new(MergeState {
            sum: vec![0.0; point.len],
            ..MergeState::default()
        }),
        changed: Condvar::new(),
        parties: point.threads,
        readers: point.mode.receivers(point.threads),
    });
    (0..point.threads)
        .map(|_| Merging(Arc::clone(&shared), 0))
        .collect()
}

/// A thread panicked holding the lock: the sum may be half added.
fn poisoned<T>(_: PoisonError<T>) -> Failure {
    Failure::Echo("another thread panicked while adding its array in".to_owned())
}

impl Reduces for Merging {
    fn call(&mut self, receives: bool, input: &[f32], output: &mut [f32]) -> Call {
        let Merging(shared, next) = self;
        let generation = *next;
        *next += 1;
        let mut state = shared.state.lock().map_err(poisoned)?;
        while state.generation != generation {
            state = shared.changed.wait(state).map_err(poisoned)?;
        }
        match state.arrived {
            0 => state.sum.copy_from_slice(input),
            _ => state.sum.iter_mut().zip(input).for_each(|(s, x)| *s += x),
        }
        state.arrived += 1;
        if state.arrived == shared.parties {
            shared.changed.notify_all();
        }
        if !receives {
            return Ok(None);
        }
        while state.arrived < shared.parties {
            state = shared.changed.wait(state).map_err(poisoned)?;
        }
        output.copy_from_slice(&state.sum);
        state.collected += 1;
        if state.collected == shared.readers {
            (state.generation, state.arrived, state.collected) = (state.generation + 1, 0, 0);
            shared.changed.notify_all();
        }
        Ok(None)
    }
}

/// The bandwidth floor: a STREAM-like add on `min(N, cores)` threads moving [`Collective::bytes`],
/// timed as the reductions are, from the first worker's start to the last one's return;
/// write-allocate reads count for neither side.
///
/// It was timed by its slowest worker's own call, which cannot see whether the workers ran at
/// the same time. The OS sometimes runs both threads of a 2-thread row on one CPU for tens of
/// milliseconds (the Xeon VM, `--threads 2 --sizes 65536 --spread none`, reduce: a floor row whose
/// workers' own calls took 5.2 µs, but 13.2 µs from the first start to the last return, with
/// 8 µs between their starts; the reduction rows beside it, sharing a CPU too, took 16-19 µs
/// where they take 5-7 µs, and came out at 28% and 35% of that floor). Timed from the first start,
/// a floor whose workers share a CPU shows it; in rounds where they ran side by side the two
/// timings agree within 1-2%.
#[derive(Default)]
struct StreamAdd {
    elements: usize,
    a: Vec<f32>,
    b: Vec<f32>,
    out: Vec<f32>,
}

/// Bytes the add moves per element: two f32 read, one written.
const BYTES_PER_ELEMENT: u64 = 12;

/// The floor's threads: one per core at most, since more cannot stream faster.
fn floor_workers(threads: usize) -> usize {
    threads.clamp(1, phasers::available_cores().max(1))
}

/// The elements each of `workers` threads adds so that all move `bytes` (rounded up).
fn shares(bytes: u64, workers: usize) -> Vec<usize> {
    let elements = usize::try_from(bytes.div_ceil(BYTES_PER_ELEMENT)).unwrap_or(usize::MAX);
    let workers = workers.max(1);
    let share = |worker| elements / workers + usize::from(worker < elements % workers);
    (0..workers).map(share).collect()
}

impl Work for StreamAdd {
    const SYNCHRONIZED: bool = false;

    fn prepare(&mut self) -> Result<(), Failure> {
        // Distinct small integers: nothing folds away, and every sum is exact.
        self.a = (0..self.elements).map(|i| (i % 1024) as f32).collect();
        self.b = (0..self.elements).map(|i| (i % 7) as f32).collect();
        self.out = vec![0.0; self.elements];
        Ok(())
    }

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        for ((out, a), b) in self.out.iter_mut().zip(&self.a).zip(&self.b) {
            *out = a + b;
        }
        // Only the check reads the sums: without this, later iterations' adds could be skipped.
        black_box(&mut self.out);
        Ok(None)
    }

    fn check(&mut self) -> Result<(), Failure> {
        let sums: Vec<f32> = self.a.iter().zip(&self.b).map(|(a, b)| a + b).collect();
        check(&self.out, &sums).map_err(Failure::Cause)
    }
}

/// Which metric a row's samples are (all five are always measured and written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Time from the last arrival to completion.
    LastArrival,
    /// Time in the reduction summed over participants.
    Total,
}

impl Metric {
    fn describe(self) -> &'static str {
        [
            "time from the last arrival to completion",
            "time in the reduction summed over participants",
        ][self as usize]
    }
}

/// The five metrics of [`series`], as the rows' keys name them; a [`Metric`] is its index here.
const METRICS: [&str; 5] = [
    "last_arrival_to_completion_ns",
    "total_in_reduction_ns",
    "arrival_window_ns",
    "first_arrival_to_completion_ns",
    "longest_call_ns",
];
/// A row's bandwidth in GB/s, and that as a fraction of its point's floor's.
const BANDWIDTH: [&str; 2] = ["bandwidth_gb_s", "fraction_of_floor"];

/// Each measured iteration's [`METRICS`]; completion is `root`'s return, or the last one if `None`.
/// Signed: a negative time would be a bug worth seeing.
fn series(timeline: &Timeline, root: Option<usize>) -> [Vec<f64>; 5] {
    let mut series: [Vec<f64>; 5] = Default::default();
    let threads = timeline.threads.max(1);
    let stamps = (timeline.arrive_ns.chunks(threads)).zip(timeline.return_ns.chunks(threads));
    for (arrive, ret) in stamps.skip(WARM_UP) {
        let (Some(&first), Some(&last)) = (arrive.iter().min(), arrive.iter().max()) else {
            continue;
        };
        let done = match root {
            Some(rank) => ret[rank.min(ret.len() - 1)],
            None => ret.iter().copied().max().unwrap_or(last),
        } as f64;
        let calls = ret.iter().zip(arrive).map(|(&r, &a)| r as f64 - a as f64);
        let (first, last) = (first as f64, last as f64);
        let values = [
            done - last,
            calls.clone().sum(),
            last - first,
            done - first,
            calls.fold(0.0, f64::max),
        ];
        series.iter_mut().zip(values).for_each(|(s, v)| s.push(v));
    }
    series
}

/// A row's stamps, or why there are none.
type Stamps = Result<Timeline, String>;

/// The stamps of `works` run at `point`, with its stalls if `stalled`.
fn stamped<W: Work>(works: Vec<W>, point: &Point, stalled: bool, name: &str) -> Stamps {
    let stalls = stalled.then(|| point.stalls().map(Arc::new)).transpose()?;
    let watch = Watch::new(name, works.len(), point.hang_after);
    let measured = engine::threads(works, &point.plan(stalls), &watch);
    match (measured.error, measured.timeline) {
        (Some(error), _) => Err(error),
        (None, Some(timeline)) => Ok(timeline),
        (None, None) => Err("the row ran no iteration".to_owned()),
    }
}

/// Rounds a contender's row is measured in, each next to a round of the bandwidth floor (which
/// goes first alternates), and its bandwidth held against the floor of those rounds. The 2-core
/// VMs change speed for milliseconds at a time with nothing else running: the floor's own work at
/// 64k floats (a single-threaded add over three 128 KB arrays) took a median of 4.2 µs in some
/// 2.5 ms windows and 5.5-6.4 µs in others, in stretches of 5 to 100 ms, on the Xeon VM. A floor
/// measured once before a block's rows could thus land in another state than a row measured
/// tens of milliseconds later: at 64k floats, reduce, a linear row came out at 58% of such a
/// floor and the auto row after it, running the same algorithm, at 62%, where rows paired with
/// their floors measured 78-84% and 85-94% in three runs. Four rounds keep a round at 64k floats to a few milliseconds, about the length of the
/// shortest stretches; the pairing, not the count, is what makes the comparison fair, so a
/// machine with other stretches needs no other count.
const FLOOR_PAIRED_ROUNDS: usize = 4;

/// The key of the bandwidth of the floor a row was measured next to.
const PAIRED_FLOOR: &str = "paired_floor_gb_s";

impl Point {
    /// Round `round` of `rounds` of a row at this point: its share of the iterations, of the time
    /// and of the budget, and its own stretch of the stall table (the first row of which is its
    /// warm-up's), so that the rounds together draw the stalls a single row would.
    fn round(&self, round: usize, rounds: usize) -> Point {
        let rounds = rounds.max(1);
        let each = (self.max_iterations / rounds).max(1);
        let start = (round * each * self.threads).min(self.stalls.len());
        Point {
            stalls: self.stalls[start..].to_vec(),
            min_iterations: self.min_iterations.div_ceil(rounds).min(each),
            min_time: self.min_time / rounds as u32,
            max_iterations: each,
            budget: self.budget / rounds as u32,
            ..self.clone()
        }
    }
}

/// Measures `contender`'s row at `point`, whose sequential sum is `sum`, its samples of `metric`:
/// the floor alone; any other contender in rounds, each next to a round of the floor, and its
/// bandwidth as a fraction of the floor of those rounds.
fn measure(contender: Contender, point: &Point, sum: &Arc<[f32]>, metric: Metric) -> Row {
    let start = Instant::now();
    let (name, kind) = (contender.name(), contender.kind());
    let mut row = point.row(name, kind);
    if contender == Contender::Floor {
        fill(&mut row, floor_stamps(point), None, point, metric);
        compare_with_floor(&mut row, None);
        row.row_s = start.elapsed().as_secs_f64();
        return row;
    }
    let (mut rounds, mut floors) = (Vec::new(), Vec::new());
    for round in 0..FLOOR_PAIRED_ROUNDS {
        let at = point.round(round, FLOOR_PAIRED_ROUNDS);
        let floor_first = round % 2 == 0;
        if floor_first {
            floors.push(floor_stamps(&at));
        }
        let stamps = stamps(contender, &at, sum, name);
        let failed = stamps.is_err();
        rounds.push(stamps);
        if !floor_first {
            floors.push(floor_stamps(&at));
        }
        if failed {
            break;
        }
    }
    // A reduce completes when its root (rank 0) returns; the rest when the last one does.
    let root = (point.mode == Collective::Reduce).then_some(0);
    let by_round: Vec<Option<f64>> = (rounds.iter().zip(&floors))
        .map(|(round, floor)| round_fraction(round, floor, root))
        .collect();
    let bytes = point.mode.bytes(point.threads, point.len) as f64;
    let round_floors: Vec<Option<f64>> = (floors.iter())
        .map(|floor| Some(bytes / round_median(floor, None)?))
        .collect();
    fill(&mut row, joined(rounds), root, point, metric);
    let mut floor = point.row(FLOOR_NAME, Kind::Floor);
    fill(&mut floor, joined(floors), None, point, metric);
    compare_with_floor(&mut floor, None);
    compare_with_floor(&mut row, Some(&floor));
    row.extra
        .set(PAIRED_FLOOR, json!(floor.value(BANDWIDTH[0])));
    row.extra.set(ROUND_FRACTIONS, json!(by_round));
    row.extra.set(ROUND_FLOORS, json!(round_floors));
    if let Some(note) = straddling(&by_round) {
        row.add_note(note);
    }
    row.row_s = start.elapsed().as_secs_f64();
    row
}

/// The key of a row's bandwidth over its floor's in each round alone (null for a failed round).
const ROUND_FRACTIONS: &str = "round_fractions_of_floor";

/// The key of the bandwidth of the floor in each round, in GB/s (null for a failed round).
const ROUND_FLOORS: &str = "round_floors_gb_s";

/// The median time from the first arrival to completion of one round, if it ran.
fn round_median(stamps: &Stamps, root: Option<usize>) -> Option<f64> {
    let timeline = stamps.as_ref().ok()?;
    stats::median(&series(timeline, root)[3]).filter(|&ns| ns > 0.0)
}

/// A round's bandwidth as a fraction of the floor measured next to it: the floor's median time
/// from the first arrival to completion over the round's.
fn round_fraction(round: &Stamps, floor: &Stamps, root: Option<usize>) -> Option<f64> {
    Some(round_median(floor, None)? / round_median(round, root)?)
}

/// A note giving every round's fraction of the floor when some rounds meet the bandwidth goal and
/// others do not: the row's one figure, pooled over its rounds, would hide which.
fn straddling(by_round: &[Option<f64>]) -> Option<String> {
    let measured: Vec<f64> = by_round.iter().flatten().copied().collect();
    let below = measured.iter().filter(|&&f| f < BANDWIDTH_GOAL).count();
    if below == 0 || below == measured.len() {
        return None;
    }
    let each: Vec<String> = measured
        .iter()
        .map(|f| format!("{:.0}%", f * 100.0))
        .collect();
    Some(format!(
        "÷floor by round: {} ({below} of {} under the {:.0}% goal)",
        each.join(", "),
        measured.len(),
        BANDWIDTH_GOAL * 100.0
    ))
}

/// The stamps of the bandwidth floor at `point`.
fn floor_stamps(point: &Point) -> Stamps {
    let bytes = point.mode.bytes(point.threads, point.len);
    let shares = shares(bytes, floor_workers(point.threads)).into_iter();
    let works = shares.map(|elements| StreamAdd {
        elements,
        ..StreamAdd::default()
    });
    stamped(works.collect(), point, false, FLOOR_NAME)
}

/// The stamps of one row of `contender` (not the floor) at `point`.
fn stamps(contender: Contender, point: &Point, sum: &Arc<[f32]>, name: &str) -> Stamps {
    match contender {
        Contender::Floor => floor_stamps(point),
        Contender::Ours(algorithm) => Reduction::<f32>::builder(point.threads)
            .op(Op::Sum)
            .algorithm(algorithm)
            .build()
            .map_err(|error| format!("cannot build the reduction: {error}"))
            .and_then(|group| {
                let reducers = group.participants().into_iter().map(|r| (r, point.mode));
                let works = participants(point, sum, reducers.collect());
                stamped(works, point, true, name)
            }),
        Contender::Mutex => stamped(participants(point, sum, merging(point)), point, true, name),
        Contender::OpenMp => openmp(point, sum, name),
        Contender::OpenMpActive => {
            // The child stops at the row budget; past that and the hang time, it is stuck.
            let limit = point.budget + point.hang_after + Duration::from_secs(5);
            child::delegate(OMP_ACTIVE_KIND, ACTIVE_WAIT_POLICY, point, limit)
        }
    }
}

/// The rounds of one row as one timeline: the first round whole, the later ones without their
/// warm-up, which the first round's stands for; the first failure if any round failed.
fn joined(rounds: Vec<Stamps>) -> Stamps {
    let mut rounds = rounds.into_iter();
    let mut all = rounds.next().unwrap_or(Err("no round ran".to_owned()))?;
    for round in rounds {
        let round = round?;
        let skip = WARM_UP.min(round.iterations);
        let stamps = skip * round.threads;
        all.iterations += round.iterations - skip;
        all.arrive_ns
            .extend(round.arrive_ns.get(stamps..).unwrap_or(&[]));
        all.return_ns
            .extend(round.return_ns.get(stamps..).unwrap_or(&[]));
        all.chose.extend(round.chose.get(skip..).unwrap_or(&[]));
    }
    Ok(all)
}

/// The OpenMP row of `point`, in this process, its warm-up's result checked against `sum`.
fn openmp(point: &Point, sum: &[f32], name: &str) -> Stamps {
    let plan = point.plan(Some(Arc::new(point.stalls()?)));
    let watch = Watch::new(name, point.threads, point.hang_after);
    let allreduce = point.mode == Collective::Allreduce;
    let (timeline, first) = omp_reduce::run(point.threads, point.len, allreduce, &plan, &watch)?;
    check(&first, sum)?;
    Ok(timeline)
}

/// Sets the row's bandwidth, its bytes over its median time from the first arrival to completion
/// in GB/s (bytes per ns), and that as a fraction of `floor`'s.
fn compare_with_floor(row: &mut Row, floor: Option<&Row>) {
    let own = row.kind == Kind::Floor;
    let ns = row
        .metric(METRICS[3])
        .map(|m| m.median)
        .filter(|&ns| ns > 0.0);
    let bandwidth = ns.map(|ns| row.value("bytes").unwrap_or(0.0) / ns);
    let floor = match own {
        true => bandwidth,
        false => floor.and_then(|floor| floor.value(BANDWIDTH[0])),
    };
    let fraction = bandwidth.zip(floor.filter(|&floor| floor > 0.0));
    let fraction = fraction.map(|(ours, floor)| ours / floor);
    row.extra.set(BANDWIDTH[0], json!(bandwidth));
    row.extra.set(BANDWIDTH[1], json!(fraction));
}

/// Fills `row` from its stamps: samples, summaries, what `auto` chose, and notes on trouble.
fn fill(row: &mut Row, timeline: Stamps, root: Option<usize>, point: &Point, metric: Metric) {
    let timeline = match timeline {
        Ok(timeline) => timeline,
        Err(error) => return row.error = Some(error),
    };
    let series = series(&timeline, root);
    let mut chose: BTreeMap<&str, u64> = BTreeMap::new();
    for algorithm in timeline.chose.iter().skip(WARM_UP) {
        *chose.entry(algorithm).or_insert(0) += 1;
    }
    row.resolved = resolved(&row.contender, &chose);
    row.extra.set("chose", json!(chose));
    for (key, samples) in METRICS.iter().zip(&series) {
        row.extra.set(key, json!(stats::summarize(samples)));
    }
    row.raw_ns.clone_from(&series[metric as usize]);
    let measured = row.raw_ns.len();
    (row.iterations_per_sample, row.sample_iterations) = (1, vec![1; measured]);
    row.finish(0, None);
    if measured < point.min_iterations && measured < point.max_iterations {
        let (min, budget) = (point.min_iterations, point.budget.as_secs_f64());
        row.add_note(format!(
            "{measured} of {min} iterations: the row's {budget} s budget ran out"
        ));
    }
    if row.metric(METRICS[0]).is_some_and(|s| s.min < 0.0) {
        row.add_note("a completion stamped before the last arrival: clocks disagree".to_owned());
    }
}

/// What `auto` ran, as its label shows it: the one algorithm, or each one's share.
fn resolved(name: &str, chose: &BTreeMap<&str, u64>) -> Option<String> {
    let total: u64 = chose.values().sum();
    let mut chosen: Vec<(&&str, &u64)> = chose.iter().collect();
    chosen.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let share = |count: u64| match count as f64 * 100.0 / total.max(1) as f64 {
        percent if count > 0 && percent < 0.5 => "<1%".to_owned(),
        percent => format!("{percent:.0}%"),
    };
    match chosen[..] {
        [] => None,
        [(only, _)] => (*only != name).then(|| only.to_string()),
        _ => {
            let shares = chosen.iter().map(|(n, c)| format!("{n} {}", share(**c)));
            Some(shares.collect::<Vec<_>>().join(", "))
        }
    }
}

/// The kind of the child job measuring the `OMP_WAIT_POLICY=active` row of a [`Point`].
pub const OMP_ACTIVE_KIND: &str = "bench reduce";

/// The child's side of the `OMP_WAIT_POLICY=active` row: the OpenMP row of the point handed.
pub fn omp_active_child() -> Result<(), String> {
    child::serve(|point: Point| {
        let sum = expected(point.threads, point.len);
        openmp(&point, &sum, OPENMP_ACTIVE_NAME)
    })
}

/// Runs `phasers bench reduce`.
pub fn run(args: &ReduceArgs) -> Result<(), String> {
    let reduce = Reduce::from_args(args)?;
    let output = OutputArgs {
        json: args.run.json.clone(),
        csv: args.run.csv.clone(),
        plot: args.plot.clone(),
        verbose: args.run.verbose,
    };
    let report = bench::run(&reduce, &output)?;
    files::failures(&report.rows, SLICE)
}

impl Benchmark for Reduce {
    type Contender = (Contender, Arc<Point>);

    fn name(&self) -> String {
        "bench reduce".into()
    }

    fn header(&self, provenance: &Provenance, floor: Option<&Floor>) -> String {
        let what = "array reductions (f32, Op::Sum) against OpenMP's reduction(+:arr[:n]), a \
                    mutex-merged reduction and the memory-bandwidth floor";
        let units = format!(
            "per iteration; median: of the {} (--metric), over the measured iterations; GB/s: the \
             bytes an optimal reduction moves over the median time from the first arrival to \
             completion (for the floor, from its first worker's start to its last one's return); \
             ÷floor: that over the \
             bandwidth of the floor measured in the rounds alternating with the row's (the floor \
             row shown ran alone, before the block); ÷omp: the median over OpenMP's; --verbose: min and median of the \
             time from the last arrival to completion, of the total time in the reduction summed \
             over participants, and of the window from first to last arrival",
            self.metric.describe()
        );
        let header = match floor {
            Some(floor) => Header::with_floors(provenance, what, &self.method, floor),
            None => Header::new(provenance, what).line("method", &self.method),
        };
        header.line("units", units).finish()
    }

    fn settings(&self) -> Settings {
        let spreads = self.spreads.iter().map(|spread| {
            let mut value = json!(spread);
            value["name"] = spread.name().into();
            value
        });
        let modes: Vec<&str> = self.modes.iter().map(|mode| mode.name()).collect();
        let base = &self.base;
        let large_min = base.min_iterations.min(LARGE_MIN_ITERATIONS);
        let own = Fields::default()
            .with("sizes", self.sizes.clone())
            .with("large_sizes_max_threads", json!(self.large_max_threads))
            .with("spreads", spreads.collect::<Vec<Value>>())
            .with("modes", modes)
            .with(
                "metric",
                self.metric
                    .to_possible_value()
                    .map(|v| v.get_name().to_owned()),
            )
            .with("warm_up_iterations", WARM_UP)
            .with("min_iterations", base.min_iterations)
            .with("large_array_min_iterations", large_min)
            .with("large_array_floats", LARGE_ARRAY)
            .with("max_iterations", base.max_iterations)
            .with("min_time_s", base.min_time.as_secs_f64())
            .with("budget_s", base.budget.as_secs_f64())
            .with("seed", self.seed);
        Settings {
            method: self.method.clone(),
            threads: self.threads.clone(),
            contenders: self.contenders.iter().map(|c| c.name().into()).collect(),
            pinned: false,
            debug_build: cfg!(debug_assertions),
            own,
        }
    }

    /// A table per N, collective and spread, in that order; a block per length, the floor first
    /// (measured at the first spread, shown again at the others).
    fn tables(&self) -> Vec<TablePlan<Self::Contender>> {
        let mut tables = Vec::new();
        let large_ok = |threads| self.large_max_threads.map_or(true, |most| threads <= most);
        let (min, large_min) = (
            self.base.min_iterations,
            self.base.min_iterations.min(LARGE_MIN_ITERATIONS),
        );
        for (&threads, &mode) in
            (self.threads.iter()).flat_map(|n| self.modes.iter().map(move |m| (n, m)))
        {
            for spread in &self.spreads {
                let seed = spread.seed_for(self.seed, threads);
                let iterations = self.base.max_iterations + WARM_UP;
                let stalls = Stalls::generate(spread, threads, iterations, seed);
                let fits = |&&len: &&usize| len < LARGE_ARRAY || large_ok(threads);
                let mut rows = Vec::new();
                for &len in self.sizes.iter().filter(fits) {
                    let point = Arc::new(Point {
                        threads,
                        len,
                        mode,
                        spread: *spread,
                        stalls: stalls.as_slice().to_vec(),
                        min_iterations: [min, large_min][usize::from(len >= LARGE_ARRAY)],
                        ..self.base.clone()
                    });
                    let all = [Contender::Floor]
                        .into_iter()
                        .chain(self.contenders.iter().copied());
                    for contender in all {
                        rows.push(RowPlan {
                            contender: (contender, Arc::clone(&point)),
                            name: contender.name().into(),
                            kind: contender.kind(),
                            at: point.at(contender.kind() == Kind::Floor),
                            subtracts: None,
                        });
                    }
                }
                tables.push(TablePlan {
                    threads,
                    rows,
                    rounds: 1,
                    dropped: 0,
                    floor: false,
                });
            }
        }
        tables
    }

    fn measure(&self, plan: &RowPlan<Self::Contender>, _: usize, _: usize) -> Row {
        let (contender, point) = &plan.contender;
        let key = (point.threads, point.len, point.mode);
        if let (Contender::Floor, Some(floor)) = (contender, self.floors.borrow().get(&key)) {
            return floor.clone();
        }
        let row = match self.prepare(point) {
            Err(why) => Row {
                note: Some(format!("not run: {why}")),
                ..point.row(&plan.name, plan.kind)
            },
            Ok(sum) => measure(*contender, point, &sum, self.metric),
        };
        if row.kind == Kind::Floor {
            self.floors.borrow_mut().insert(key, row.clone());
        }
        row
    }

    fn floor_once(&self) -> Option<Schedule> {
        Some(floor::BRIEFLY)
    }

    fn layout(&self) -> Layout {
        let value = |key, head| Column::Value {
            key,
            head,
            format: Format::Fixed(2),
        };
        let [bandwidth, fraction] = [value(BANDWIDTH[0], "GB/s"), value(BANDWIDTH[1], "÷floor")];
        let omp = Column::Over {
            head: "÷omp",
            by: Pick::Named(OPENMP_NAME.into()),
        };
        let tail = [bandwidth, fraction, omp];
        let of = |key, stat, head| Column::Metric { key, stat, head };
        let verbose = [
            of(METRICS[0], Stat::Min, "last→done min"),
            of(METRICS[0], Stat::Median, "median"),
            of(METRICS[1], Stat::Min, "total min"),
            of(METRICS[1], Stat::Median, "median"),
            of(METRICS[2], Stat::Median, "window"),
        ];
        Layout {
            concise: [&[Column::Label, Column::Median][..], &tail].concat(),
            verbose: [&[Column::Label][..], &verbose, &tail].concat(),
            block: Some("floats"),
            hide: &[],
            csv: &CSV,
            plot: Some(PlotSpec {
                slices: SLICE,
                y_label: format!("median {}", self.metric.describe()),
            }),
        }
    }

    /// The faster OpenMP row over auto and over our best, at each point.
    fn ratios(&self, _: &[&Row]) -> Vec<Ratio> {
        let omp = Pick::FastestNamed(vec![OPENMP_NAME.into(), OPENMP_ACTIVE_NAME.into()]);
        let auto = Pick::Named(ReduceAlgorithm::Auto.name().into());
        let ratios = [("auto", auto), ("our best", Pick::FastestKind(Kind::Ours))];
        let ratio = |(over, denominator): (&str, Pick)| Ratio {
            label: format!("fastest omp / {over}"),
            numerator: omp.clone(),
            denominator,
        };
        ratios.map(ratio).into()
    }

    fn summary(&self, report: &Report, verbose: bool) -> Vec<String> {
        let text = self.text(&report.rows, &report.ratios);
        vec![if verbose { text } else { fit(&text) }]
    }

    /// `N = 4 on 2 cores (oversubscribed), allreduce, spread low: stalls drawn with ...`.
    fn title(&self, table: &TablePlan<Self::Contender>, _: &[&Row], cores: usize) -> String {
        let Some((_, point)) = table.rows.first().map(|plan| &plan.contender) else {
            return format!("N = {}", table.threads);
        };
        let (threads, mode, spread) = (point.threads, point.mode.name(), point.spread.name());
        let over = is_oversubscribed(threads).then_some(" (oversubscribed)");
        let (s, over) = (if cores == 1 { "" } else { "s" }, over.unwrap_or_default());
        let mut title = format!("N = {threads} on {cores} core{s}{over}, {mode}, spread {spread}");
        if let (false, Ok(stalls)) = (point.spread.is_none(), point.stalls()) {
            let they = match StallPolicy::for_threads(threads) {
                StallPolicy::Spin => "spin",
                StallPolicy::Yield => "yield the core (oversubscribed)",
            };
            let drawn = stalls.realized();
            let [mean, sd, max] = [drawn.mean_ns, drawn.stddev_ns, drawn.max_ns as f64].map(time);
            title +=
                &format!(": stalls drawn with mean {mean}, stddev {sd}, max {max}; they {they}");
        }
        title
    }

    fn recorded(&self, plan: &RowPlan<Self::Contender>) -> bool {
        let (contender, point) = &plan.contender;
        *contender != Contender::Floor || point.spread == self.spreads[0]
    }
}

/// The CSV's keys after the core columns: the point's, then what each row measured.
static CSV: LazyLock<Vec<&str>> = LazyLock::new(|| {
    let point = "floats mode arrival_spread stall_policy workers bytes chose".split(' ');
    point.chain(METRICS).chain(BANDWIDTH).collect()
});

/// The largest array of the seed's headline claim.
const HEADLINE_MAX_LEN: usize = 10_000;
/// Where large arrays start for the bandwidth goal: the seed's largest size, 800 KB per array.
const LARGE_FROM: usize = 200_000;
/// The bandwidth goal, as a fraction of the floor.
const BANDWIDTH_GOAL: f64 = 0.70;
/// The sizes of the OpenMP comparison.
const OPENMP_SIZES: [usize; 3] = [1_000, 64_000, 16_000_000];

/// A point of the summaries: N, length, collective and spread.
type At<'a> = (usize, usize, Collective, &'a str);

/// The lowest of a row's per-round fractions of the floor (see [`round_fraction`]).
fn worst_round(row: &Row) -> Option<f64> {
    let rounds = row.extra.get(ROUND_FRACTIONS)?.as_array()?;
    let fractions = rounds.iter().filter_map(Value::as_f64);
    fractions.min_by(f64::total_cmp)
}

/// Whether `at`, at `threads`, is the point `want`.
fn is_at(at: &Fields, threads: usize, (n, len, mode, spread): At) -> bool {
    threads == n
        && at.get("floats") == Some(&len.into())
        && at.get("mode") == Some(&mode.name().into())
        && at.get("arrival_spread") == Some(&spread.into())
}

/// The row of contender `name` at `want`, if it ran without error.
fn find<'a>(rows: &'a [Row], name: &str, want: At) -> Option<&'a Row> {
    rows.iter().find(|row| {
        row.contender == name && row.error.is_none() && is_at(&row.at, row.threads, want)
    })
}

/// The lengths of `rows` that `keep` keeps, increasing.
fn sizes(rows: &[Row], keep: impl Fn(usize) -> bool) -> Vec<usize> {
    let lengths = rows
        .iter()
        .filter_map(|row| Some(row.value("floats")? as usize));
    sorted_unique(lengths.filter(|&len| keep(len)).collect())
}

impl Reduce {
    /// The three comparisons the issue asks for, as printed after the tables.
    fn text(&self, rows: &[Row], records: &[RatioRecord]) -> String {
        let heads: Vec<String> = self.threads.iter().map(|n| format!("N={n}")).collect();
        let (headline, bandwidth) = (self.headline(rows, &heads), self.bandwidth(rows));
        [headline, bandwidth, self.openmp(records, &heads)].join("\n")
    }

    /// (1) Does the seed's headline reproduce: dynamic pairs against static tree and linear.
    fn headline(&self, rows: &[Row], heads: &[String]) -> String {
        let title = "(1) the seed's headline: at the largest spread, dynamic pairs against the \
                     static tree and linear, time from the last arrival to completion, arrays up \
                     to 10,000 floats";
        let spreads = self.spreads.iter().filter(|spread| !spread.is_none());
        let widest = spreads.max_by(|a, b| a.max_ns.total_cmp(&b.max_ns));
        let Some(spread) = widest.map(Spread::name) else {
            return format!("{title}: not measured (no spread other than none)\n");
        };
        let mut out = format!(
            "{title}\n    spread {spread}; each cell: static-tree ÷ dynamic-pairs / linear ÷ \
             dynamic-pairs of the medians (above 1: dynamic pairs is faster)\n"
        );
        let (mut wins, mut measured) = (0, 0);
        use ReduceAlgorithm::{DynamicPairs, Linear, StaticTree};
        let median =
            |a: ReduceAlgorithm, at| Some(find(rows, a.name(), at)?.metric(METRICS[0])?.median);
        for &mode in &self.modes {
            let mut lines = Vec::new();
            for len in sizes(rows, |len| len <= HEADLINE_MAX_LEN) {
                let cells = self.threads.iter().map(|&threads| {
                    let at = (threads, len, mode, spread.as_str());
                    let [p, t, l] = [DynamicPairs, StaticTree, Linear].map(|a| median(a, at));
                    if let (Some(p), Some(t), Some(l)) = (p, t, l) {
                        measured += 1;
                        wins += usize::from(p < t && p < l);
                    }
                    format!("{} / {}", times(t, p), times(l, p))
                });
                lines.push((len.to_string(), cells.collect()));
            }
            out += &ratio::grid(&format!("  {} floats", mode.name()), heads, lines);
        }
        out + &match measured {
            0 => "    not measured: needs dynamic-pairs, static-tree and linear rows\n".to_owned(),
            _ => format!(
                "    dynamic pairs was faster than both in {wins} of {measured} cells; the seed \
                 found it faster than every other algorithm up to at least 10k floats at its \
                 largest spread\n"
            ),
        }
    }

    /// (2) Large arrays: allreduce's bandwidth over the floor's, at the smallest spread.
    fn bandwidth(&self, rows: &[Row]) -> String {
        let title = format!(
            "(2) large arrays (from {LARGE_FROM} floats): allreduce bandwidth as a fraction of the \
             floor's (goal: {:.0}% or more), over all rounds / in the worst round",
            BANDWIDTH_GOAL * 100.0
        );
        let sizes = sizes(rows, |len| len >= LARGE_FROM);
        let spread = (self.spreads.iter()).min_by(|a, b| a.max_ns.total_cmp(&b.max_ns));
        let allreduce = self.modes.contains(&Collective::Allreduce);
        let (Some(spread), false, true) = (spread.map(Spread::name), sizes.is_empty(), allreduce)
        else {
            return format!(
                "{title}: not measured (needs allreduce and a size of {LARGE_FROM} or more)\n"
            );
        };
        let reductions = rows.iter().filter(|row| row.kind != Kind::Floor);
        let names = first_of_each(reductions.map(|row| row.contender.as_str()).collect());
        let points = || (sizes.iter()).flat_map(|&len| self.threads.iter().map(move |&n| (len, n)));
        let heads: Vec<String> = points().map(|(len, n)| format!("{len} N={n}")).collect();
        let (mut lines, mut meeting) = (Vec::new(), Vec::new());
        for name in names {
            let at = |(len, n)| find(rows, name, (n, len, Collective::Allreduce, &spread));
            let fractions: Vec<_> = points().map(|p| at(p)?.value(BANDWIDTH[1])).collect();
            let worst: Vec<_> = points().map(|p| worst_round(at(p)?)).collect();
            let mut measured = fractions.iter().flatten().peekable();
            if measured.peek().is_some() && measured.all(|&f| f >= BANDWIDTH_GOAL) {
                meeting.push(name);
            }
            let percent = |f: Option<f64>| f.map_or("-".into(), |f| format!("{:.0}%", f * 100.0));
            let cells = (fractions.iter().zip(&worst))
                .map(|(&all, &worst)| format!("{} / {}", percent(all), percent(worst)));
            lines.push((name.to_owned(), cells.collect()));
        }
        let meeting = match meeting.is_empty() {
            true => "none".to_owned(),
            false => meeting.join(", "),
        };
        let grid = ratio::grid(&format!("    spread {spread}"), &heads, lines);
        format!("{title}\n{grid}    meeting the goal everywhere measured: {meeting}\n")
    }

    /// (3) The faster of OpenMP's two rows over auto and over our best, from the recorded ratios.
    fn openmp(&self, records: &[RatioRecord], heads: &[String]) -> String {
        let title = format!(
            "(3) against OpenMP's array reduction: omp ÷ auto / omp ÷ our best (which), medians \
             of the {}, omp the faster of its default and OMP_WAIT_POLICY=active rows (above 1: \
             ours is faster)",
            self.metric.describe()
        );
        let lengths = records.iter().filter_map(|r| r.at.get("floats")?.as_u64());
        let lengths = lengths.map(|len| len as usize);
        let sizes = sorted_unique(lengths.filter(|len| OPENMP_SIZES.contains(len)).collect());
        if sizes.is_empty() {
            return format!("{title}: not measured (none of 1000, 64000, 16M floats ran)\n");
        }
        let record = |label: &str, want: At| {
            let mut found = records.iter().filter(|r| r.record.label == label);
            Some(&found.find(|r| is_at(&r.at, r.record.threads, want))?.record)
        };
        let mut out = format!("{title}\n");
        for len in sizes {
            let mut lines = Vec::new();
            for (&mode, spread) in
                (self.modes.iter()).flat_map(|m| self.spreads.iter().map(move |s| (m, s.name())))
            {
                let cells = self.threads.iter().map(|&threads| {
                    let want = (threads, len, mode, spread.as_str());
                    let Some(best) = record("fastest omp / our best", want) else {
                        return "-".to_owned();
                    };
                    let auto = record("fastest omp / auto", want).map(|r| r.ratio);
                    let (auto, ours) = (times(auto, Some(1.0)), times(Some(best.ratio), Some(1.0)));
                    format!("{auto} / {ours} ({})", best.denominator)
                });
                lines.push((format!("{} {spread}", mode.name()), cells.collect()));
            }
            out += &ratio::grid(&format!("  {len} floats"), heads, lines);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round under the goal beside rounds above it is named, never pooled away; rows whose
    /// rounds agree about the goal get no note, and a failed round counts for neither side.
    #[test]
    fn rounds_on_both_sides_of_the_goal_are_listed() {
        let note = straddling(&[Some(0.28), Some(1.02), None, Some(0.94)]).unwrap();
        assert_eq!(
            note,
            "÷floor by round: 28%, 102%, 94% (1 of 3 under the 70% goal)"
        );
        assert_eq!(straddling(&[Some(0.8), Some(0.9)]), None);
        assert_eq!(straddling(&[Some(0.5), Some(0.6), None]), None);
        assert_eq!(straddling(&[]), None);
    }

    /// The run of the options `extra`, separated by spaces.
    fn parsed(extra: &str) -> Result<Reduce, String> {
        let argv = std::iter::once("reduce").chain(extra.split_whitespace());
        Reduce::from_args(&ReduceArgs::try_parse_from(argv).map_err(|e| e.to_string())?)
    }

    /// The point of every row of the run of `options`, in table order.
    fn points(options: &str) -> Vec<Arc<Point>> {
        let tables = parsed(options).unwrap().tables();
        let rows = tables.into_iter().flat_map(|table| table.rows);
        rows.map(|plan| plan.contender.1).collect()
    }

    #[test]
    fn defaults_are_the_issues_sweep_and_options_resolve_in_order() {
        let defaults = parsed("").unwrap();
        assert_eq!((defaults.spreads.len(), defaults.contenders.len()), (4, 8));
        assert_eq!(defaults.base.budget, Duration::from_millis(2500));
        let at = |p: &Arc<Point>| (p.threads, p.len, p.min_iterations);
        let measured = sorted_unique(points("").iter().map(at).collect());
        assert_eq!(measured.len(), 5 * 7 - 3);
        assert!(measured.contains(&(4, 16_000_000, 5)) && measured.contains(&(32, 1, 20)));
        let options = "--threads=8,2,8 --sizes=64k,1,16M,1_000 --spread=high,none,60/30/10,high \
                       --algorithms=dynamic,omp,mutex,auto --min-iterations=3";
        let given = parsed(options).unwrap();
        let measured = sorted_unique(points(options).iter().map(at).collect());
        assert_eq!(measured.len(), 2 * 4);
        assert!(measured.contains(&(8, 16_000_000, 3)));
        let spreads: Vec<String> = given.spreads.iter().map(Spread::name).collect();
        assert_eq!(spreads, ["high", "none", "60/30/10us"]);
        use ReduceAlgorithm::{DynamicPairs, StaticTree};
        let [pairs, tree] = [DynamicPairs, StaticTree].map(Contender::Ours);
        assert_eq!(given.contenders[0], pairs);
        let texts = [" OMP ", "static", "omp-active"].map(parse_contender);
        let want = [Contender::OpenMp, tree, Contender::OpenMpActive].map(Ok);
        assert_eq!(texts, want);
        let args = ReduceArgs::try_parse_from(["reduce", "--svg", "r.svg"]).unwrap();
        assert_eq!((args.plot, list().len()), (Some(PathBuf::from("r.svg")), 9));
    }

    #[test]
    fn bad_input_is_an_error_with_a_clear_message() {
        // tests/smoke.rs has the rest (N of 1, sizes 0 and big, min over max iterations, ...).
        for (bad, message) in [
            ("--sizes=300M", "1 GiB per array"),
            ("--metric=speed", "possible values: last-arrival, total"),
            ("--max-iterations=0", "0"),
        ] {
            let error = parsed(bad).err().unwrap();
            assert!(error.contains(message), "{bad}: {error}");
        }
    }

    #[test]
    fn any_order_of_addition_gives_the_exact_sum_and_the_check_names_a_wrong_element() {
        let mut backward = vec![0.0f32; 3];
        for rank in (0..4096).rev() {
            (backward.iter_mut().enumerate()).for_each(|(i, x)| *x += value(rank, i));
        }
        assert_eq!(expected(4096, 3), backward);
        let want = expected(3, 10);
        let mut got = want.clone();
        (got[4], got[7]) = (got[4] + 0.125, f32::NAN);
        let error = check(&got, &want).unwrap_err();
        assert!(error.contains("element 4"), "{error}");
        assert!(error.contains("2 of 10"), "{error}");
        assert!(check(&want[..3], &want).unwrap_err().contains("3 elements"));
        got.clone_from(&want);
        got[1] *= 1.0 + 1e-6;
        assert_eq!(check(&got, &want), Ok(()));
    }

    #[test]
    fn bytes_memory_and_the_floors_shares() {
        let (reduce, all) = (Collective::Reduce, Collective::Allreduce);
        assert_eq!(
            (reduce.bytes(4, 1000), all.bytes(4, 1000)),
            (5 * 4000, 8 * 4000)
        );
        assert_eq!(all.memory_needed(32, 16_000_000), 98 * 64_000_000);
        assert_eq!(reduce.memory_needed(2, 1), 7 * 4);
        let shares_of = shares(all.bytes(4, 1000), 3);
        let total = shares_of.iter().sum::<usize>() as u64 * BYTES_PER_ELEMENT;
        assert_eq!(total, all.bytes(4, 1000).next_multiple_of(12));
        assert!(shares_of.iter().max().unwrap() - shares_of.iter().min().unwrap() <= 1);
        assert_eq!(shares(reduce.bytes(2, 1), 2), vec![1, 0]);
        let cores = phasers::available_cores();
        assert_eq!(floor_workers(cores * 4), cores);
    }

    /// Many merges with no barrier between them, every result checked: the generation keeps a
    /// fast thread out of a sum still being read.
    #[test]
    fn every_mutex_receiver_gets_the_sum_every_time_without_a_barrier() {
        for (threads, mode) in [(5, "reduce"), (4, "allreduce")] {
            let point = &points(&format!("--threads={threads} --sizes=64 --mode={mode}"))[0];
            let expected: Arc<[f32]> = expected(threads, 64).into();
            std::thread::scope(|s| {
                for mut participant in participants(point, &expected, merging(point)) {
                    s.spawn(move || {
                        participant.prepare().unwrap();
                        for index in 0..200 {
                            participant.iteration(index).unwrap();
                            participant.check().unwrap();
                        }
                    });
                }
            });
        }
    }

    /// The rounds of a row share its iterations, time and budget, and read consecutive stretches
    /// of its stall table; joined, they are one timeline with one warm-up.
    #[test]
    fn paired_rounds_split_a_row_and_join_back_with_one_warm_up() {
        let options = "--threads 2 --sizes 1000 --spread low --mode reduce --max-iterations 10 \
            --min-iterations 4";
        let point = points(options).pop().unwrap();
        assert_eq!(point.stalls.len(), 2 * (10 + WARM_UP));
        let rounds: Vec<Point> = (0..4).map(|round| point.round(round, 4)).collect();
        for (index, round) in rounds.iter().enumerate() {
            assert_eq!(round.max_iterations, 2);
            assert_eq!(round.min_iterations, 1);
            assert_eq!(round.budget, point.budget / 4);
            assert_eq!(round.stalls[..], point.stalls[index * 2 * 2..]);
        }
        let stamps = |start: u64| Timeline {
            threads: 2,
            iterations: 2,
            arrive_ns: vec![start, start + 1, start + 10, start + 11],
            return_ns: vec![start + 5, start + 6, start + 15, start + 16],
            chose: vec!["warm-up", "linear"],
        };
        let joined = joined(vec![Ok(stamps(0)), Ok(stamps(100))]).unwrap();
        assert_eq!(joined.iterations, 3);
        assert_eq!(joined.arrive_ns, [0, 1, 10, 11, 110, 111]);
        assert_eq!(joined.return_ns, [5, 6, 15, 16, 115, 116]);
        assert_eq!(joined.chose, ["warm-up", "linear", "linear"]);
        let failed = joined_error(vec![Ok(stamps(0)), Err("hung".to_owned())]);
        assert_eq!(failed, "hung");
    }

    fn joined_error(rounds: Vec<Stamps>) -> String {
        match joined(rounds) {
            Ok(_) => panic!("a failed round must fail the row"),
            Err(error) => error,
        }
    }

    #[test]
    fn reduce_completes_when_the_root_returns_and_allreduce_when_the_last_does() {
        // Two iterations of three participants; the first is the warm-up.
        let timeline = Timeline {
            threads: 3,
            iterations: 2,
            arrive_ns: vec![0, 5, 10, 100, 130, 120],
            return_ns: vec![50, 20, 30, 170, 150, 125],
            chose: Vec::new(),
        };
        // Total: (170 - 100) + (150 - 130) + (125 - 120).
        let want = [40.0, 95.0, 30.0, 70.0, 70.0].map(|ns| vec![ns]);
        assert_eq!(series(&timeline, Some(0)), want);
        // Another root: rank 2 returned before the last arrival, and the sign shows it.
        assert_eq!(series(&timeline, Some(2))[0], vec![-5.0]);
        assert_eq!(series(&timeline, None)[0], vec![40.0]);
    }

    #[test]
    fn a_failed_or_short_row_says_so_and_auto_says_what_it_chose() {
        let point = &points("--threads=2 --sizes=1 --min-iterations=3 --max-iterations=10")[0];
        let (mut row, metric) = (point.row("x", Kind::Ours), Metric::LastArrival);
        fill(&mut row, Err("boom".into()), None, point, metric);
        assert_eq!((row.error.as_deref(), row.summary), (Some("boom"), None));
        let mut row = point.row("auto", Kind::Ours);
        let timeline = Timeline {
            threads: 1,
            iterations: 2,
            arrive_ns: vec![0, 10],
            return_ns: vec![5, 20],
            chose: vec!["linear", "static-tree"],
        };
        fill(&mut row, Ok(timeline), None, point, metric);
        assert_eq!(row.raw_ns, [10.0]);
        assert_eq!(row.label(), "auto → static-tree");
        assert!(row.note.as_deref().unwrap().contains("1 of 3 iterations"));
        let chose = BTreeMap::from([("static-tree", 97), ("linear", 1), ("dynamic-pairs", 2000)]);
        let shares = "dynamic-pairs 95%, static-tree 5%, linear <1%";
        assert_eq!(resolved("auto", &chose).unwrap(), shares);
        assert_eq!(resolved("linear", &BTreeMap::from([("linear", 3)])), None);
    }

    #[test]
    fn tables_show_each_floor_in_every_spread_but_record_it_once_and_titles_say_the_point() {
        let options = "--threads=2,3 --sizes=1,2 --spread=none,low --algorithms=auto";
        let reduce = parsed(options).unwrap();
        let tables = reduce.tables();
        // tests/smoke.rs counts the rows recorded; every spread's floor row is the same one.
        assert_eq!(tables[1].rows[0].name, FLOOR_NAME);
        assert!(tables[1].rows[0].at.get("arrival_spread").is_none());
        assert!(!reduce.recorded(&tables[1].rows[0]) && reduce.recorded(&tables[0].rows[0]));
        let low = reduce.title(&tables[1], &[], 1);
        let drawn = ", reduce, spread low: stalls drawn";
        assert!(low.starts_with("N = 2 on 1 core"), "{low}");
        assert!(low.contains(drawn), "{low}");
        let none = reduce.title(&tables[0], &[], 2);
        assert_eq!(none, "N = 2 on 2 cores, reduce, spread none");
    }

    #[test]
    fn the_summary_compares_dynamic_pairs_bandwidth_and_openmp() {
        let row = |name: &str, len: usize, mode: &str, spread: &str, last: f64| {
            let at = Fields::default().with("floats", len).with("mode", mode);
            let kind = [Kind::Ours, Kind::Baseline][usize::from(name.starts_with("omp"))];
            let mut row = Row::new(name, kind, 2, at.with("arrival_spread", spread));
            row.extra.set(METRICS[0], json!(stats::summarize(&[last])));
            row.raw_ns = vec![last];
            row.finish(0, None);
            row
        };
        let mut rows = vec![
            row("dynamic-pairs", 1000, "reduce", "high", 100.0),
            row("static-tree", 1000, "reduce", "high", 200.0),
            row("linear", 1000, "reduce", "high", 400.0),
            row("auto", 1000, "reduce", "high", 150.0),
            row(OPENMP_NAME, 1000, "reduce", "high", 300.0),
            row(OPENMP_ACTIVE_NAME, 1000, "reduce", "high", 240.0),
            row("auto", 200_000, "allreduce", "none", 1.0),
            row("linear", 200_000, "allreduce", "none", 1.0),
        ];
        rows[6].extra.set("fraction_of_floor", 0.75);
        rows[7].extra.set("fraction_of_floor", 0.5);
        let reduce = parsed("--threads=2 --spread=none,high").unwrap();
        let records = ratio::records(&rows[..6].iter().collect::<Vec<_>>(), &reduce.ratios(&[]));
        let text = reduce.text(&rows, &records);
        for part in [
            "spread high",
            "2.00x / 4.00x",
            "faster than both in 1 of 1 cells",
            "200000 N=2",
            "75%",
            "50%",
            "meeting the goal everywhere measured: auto\n",
            // omp is the faster of its two rows: 240 over auto's 150 and dynamic pairs' 100.
            "1.60x / 2.40x (dynamic-pairs)",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        let none = parsed("--threads=2 --spread=none").unwrap();
        assert!(none.headline(&rows, &[]).contains("not measured"));
    }
}
