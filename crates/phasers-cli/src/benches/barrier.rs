//! `phasers bench barrier`: every algorithm against the floor, the reference barrier and the
//! standard barriers at each thread count, in interleaved rounds, then the verdict; with
//! `--write-profile`, also the profile `Algorithm::Auto` reads. `bench phaser` reuses [`Sweep`].
//!
//! A cost below its resolution has no ratio: it beats any cost above it and is unsettled against
//! another below it. OpenMP rows run on OpenMP's threads, fork and join timed as EPCC syncbench
//! does; libgomp reads `OMP_WAIT_POLICY` at load, so the `active` rows are measured by a child
//! (`phasers internal-child "bench barrier"`) handed a [`Job`], raw: the sweep subtracts its own
//! OpenMP reference loop.

use std::borrow::Cow;
use std::hint::spin_loop;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::yield_now;
use std::time::{Duration, Instant};

use clap::{Args, Parser};
use crossbeam_utils::CachePadded;
use phasers::Algorithm;
use phasers_cli::harness::args::{first_of_each, parse_delay, parse_seconds};
use phasers_cli::harness::bench::{self, Benchmark};
use phasers_cli::harness::engine::{self, Measured, Pacing, Plan};
use phasers_cli::harness::files;
use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::footnotes::wrap;
use phasers_cli::harness::header::Header;
use phasers_cli::harness::interleave::{Regime, RowPlan, TablePlan};
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick, Ratio};
use phasers_cli::harness::render::{Column, Layout, PlotSpec};
use phasers_cli::harness::resolution::below_text;
use phasers_cli::harness::result::{Fields, Kind, RatioRecord, Report, Row, Settings};
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::table::{aligned, ratio as times, time, Last};
use phasers_cli::harness::watchdog::Watch;
use phasers_cli::harness::work::{Failure, Nothing, Work};
use phasers_cli::harness::{child, delay, threads};
use serde::{Deserialize, Serialize};

use super::profile;
use crate::native::{omp_round, CxxBarrier, Delay, OmpWork, PthreadBarrier};
use crate::native::{ACTIVE_WAIT_POLICY, SETTLE};

/// EPCC drops its first outer repetition: it pays for waking threads and warming caches.
pub const EPCC_DROPPED: usize = 1;

/// Rounds when --rounds is not given: enough to tell a drifting machine from a real difference
/// (each round is one vote), few enough that each round keeps several of the default 20 samples.
const DEFAULT_ROUNDS: u16 = 5;

/// The row users get without choosing.
const AUTO: &str = "auto";

/// The row of [`ReferenceBarrier`], the yardstick.
const REFERENCE: &str = "reference";

/// The row of [`BareCounting`].
const BARE: &str = "bare counting";

/// The algorithm [`BareCounting`] copies, as `auto`'s row names what it resolved to.
const BARE_COPIES: &str = "counting";

/// The verdict's outcome when a side failed or was not measured.
const NO_COMPARISON: &str = "no comparison";

/// The description of the hardware floor, which is measured once per run rather than per row.
pub const FLOOR_DESCRIPTION: &str =
    "cache-line round trip between two threads pinned to different cores: the hardware floor";

/// The job of the child that measures the `OMP_WAIT_POLICY=active` rows.
pub const CHILD_KIND: &str = "bench barrier";

/// How the rows of a sweep are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// EPCC syncbench: `delay(); barrier()` in a loop, minus the loop without the barrier.
    Epcc,
    /// Consecutive barrier episodes with no delay (seed 002): the raw cost per episode.
    BackToBack,
}

impl Mode {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Epcc => "epcc",
            Mode::BackToBack => "back-to-back",
        }
    }
}

/// How every row of a sweep is measured (a child process is handed it too).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// What an iteration is.
    pub mode: Mode,
    /// Rounds and samples.
    pub schedule: Schedule,
    /// A row that completes no round for this long is taken to be hung.
    pub hang_after: Duration,
    /// Whether to pin each row's threads to CPUs, round robin.
    pub pin: bool,
    /// EPCC mode: iterations of the delay loop before each barrier.
    pub delay: u64,
}

impl Timing {
    /// The engine's plan, paced as the mode says.
    pub fn engine(&self) -> Plan {
        let pacing = match self.mode {
            Mode::BackToBack => Pacing::BackToBack,
            Mode::Epcc => Pacing::Epcc { delay: self.delay },
        };
        let mut plan = Plan::new(self.schedule, pacing, self.hang_after);
        plan.pin = self.pin;
        plan
    }

    /// Records `measured` in `row`, or the error of a row that could not run at all.
    pub fn record(&self, row: &mut Row, measured: Result<Measured, String>) {
        match measured {
            Ok(measured) => row.record(measured, &self.schedule),
            Err(error) => (row.samples_wanted, row.error) = (self.schedule.samples, Some(error)),
        }
    }

    /// Measures one thread per work (see [`engine::threads`]).
    pub fn threads<W: Work>(&self, works: Vec<W>, watch: &Watch) -> Measured {
        engine::threads(works, &self.engine(), watch)
    }

    /// Measures `work` on `threads` OpenMP threads, one shim call per round; a reduction with a
    /// wrong sum fails (EPCC's check). libgomp's idle threads get [`SETTLE`] to stop spinning.
    pub fn openmp(&self, threads: usize, work: OmpWork) -> Measured {
        let delay = (self.mode == Mode::Epcc).then_some(Delay {
            function: delay::delay,
            arg: self.delay,
        });
        let measured = engine::calls(&self.engine(), |planned, deadline| {
            let round = omp_round(threads, planned, delay, work, self.pin, deadline)?;
            let expected = (threads as u64).checked_mul(round.ran);
            if work == OmpWork::Reduction
                && expected.and_then(|s| i64::try_from(s).ok()) != Some(round.sum)
            {
                return Err(format!(
                    "wrong result: the reduction of {} iterations on {threads} threads summed to \
                     {}, not {threads} x {}",
                    round.ran, round.sum, round.ran
                ));
            }
            Ok((round.ran, round.elapsed))
        });
        std::thread::sleep(SETTLE);
        measured
    }
}

/// How each test of a sweep is measured; shared by `bench barrier` and `bench phaser`.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// How each iteration is timed.
    #[arg(long, value_enum, default_value = "epcc")]
    pub mode: Mode,

    /// Pin each test's threads to the available CPUs, round robin.
    #[arg(long)]
    pub pin: bool,

    /// Seconds each test (one barrier at one thread count) aims to take.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub time: Duration,

    /// Timed samples per test (EPCC's outer repetitions); in EPCC mode one more is taken first
    /// and dropped.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub samples: u16,

    /// Split each test's samples into N interleaved rounds (round 1 of the floor and every row at a
    /// thread count, then round 2, ...), so a drifting machine hits every row alike; each round
    /// has a fresh barrier and its own warm-up, and ratios the rounds' disagreement could reverse
    /// are marked "noisy". At most --samples [default: 5, or --samples when fewer].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub rounds: Option<u16>,

    /// EPCC mode: the delay before each barrier, in microseconds (EPCC's default is 0.1).
    #[arg(long, value_name = "MICROSECONDS", default_value = "0.1", value_parser = parse_delay, allow_negative_numbers = true)]
    pub delay: Duration,

    /// Iterations per sample (EPCC's inner repetitions) [default: sized so the test takes
    /// --time].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub episodes: Option<u64>,

    /// Stop the whole run when a test completes no round for this many seconds: it is hung.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub hang_seconds: Duration,
}

impl MeasureArgs {
    /// Refuses options that contradict each other; run before anything is measured.
    pub fn check(&self) -> Result<(), String> {
        match self.rounds {
            Some(rounds) if rounds > self.samples => Err(format!(
                "--rounds {rounds} is more than --samples {}: each round needs at least one \
                 sample; ask for at most {0} rounds, or more samples",
                self.samples
            )),
            _ => Ok(()),
        }
    }

    /// The `bench barrier` sweep `name` over `threads` and `contenders`, measured this way.
    pub fn sweep<C>(
        &self,
        name: &'static str,
        threads: Vec<usize>,
        contenders: Vec<C>,
    ) -> Sweep<C> {
        let epcc = self.mode == Mode::Epcc;
        let samples = usize::from(self.samples) + if epcc { EPCC_DROPPED } else { 0 };
        let delay = epcc.then_some(self.delay);
        let row = Timing {
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
        };
        Sweep {
            name,
            measures: "the cost of one barrier episode",
            threads: phasers_cli::harness::args::sorted_unique(threads),
            contenders,
            keep: |_, _| true,
            row,
            rounds: usize::from(self.rounds.unwrap_or(DEFAULT_ROUNDS).min(self.samples)),
            delay,
            time_per_test: self.time,
            ratios: Box::new(barrier_ratios),
            // By default the verdict, which says the same for every thread count in one table,
            // and auto over the bare protocol it runs, which it does not say.
            summary: Box::new(|report: &Report, verbose: bool| {
                let lines = match verbose {
                    true => at_each(report, barrier_lines),
                    false => Vec::new(),
                };
                lines
                    .into_iter()
                    .chain(bare_lines(report, verbose))
                    .collect()
            }),
        }
    }
}

/// A row a sweep measures: a barrier, a phaser, an OpenMP construct.
pub trait SweepContender: Copy {
    /// The name in tables, JSON and `phasers list`.
    fn name(self) -> Cow<'static, str>;
    /// What the row is.
    fn kind(self) -> Kind;
    /// Whether it runs on OpenMP's threads, and so subtracts OpenMP's reference loop.
    fn runs_on_openmp(self) -> bool;
    /// Measures one round into `row` (named, at its threads): raw samples, or the error.
    fn measure(self, row: &mut Row, timing: &Timing);
}

/// What a sweep measures in a row: a contender, or the loop a row's cost is taken off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepRow<C> {
    /// EPCC's reference loop: the delays alone, on the same threads.
    Loop,
    /// The same in an OpenMP parallel region, subtracted from the OpenMP rows.
    OmpLoop,
    /// A contender.
    Row(C),
}

/// The ratios a sweep records for a table.
pub type RatiosOf = Box<dyn Fn(&[&Row]) -> Vec<Ratio>>;
/// The lines a sweep prints after its tables.
pub type SummaryOf = Box<dyn Fn(&Report, bool) -> Vec<String>>;

/// A sweep: every contender at every thread count, a table each, in interleaved rounds.
pub struct Sweep<C> {
    /// The name in reports.
    pub name: &'static str,
    /// What one iteration costs, for the header.
    pub measures: &'static str,
    /// Thread counts, in the order run.
    pub threads: Vec<usize>,
    /// The rows of every table, in order.
    pub contenders: Vec<C>,
    /// Whether a row runs at a thread count (`bench tree` leaves out trees far too big for it).
    pub keep: fn(C, usize) -> bool,
    /// How each row is measured, all rounds together: [`Sweep::round`] splits it.
    pub row: Timing,
    /// `--rounds`, at most the samples kept.
    pub rounds: usize,
    /// EPCC mode: the delay before each barrier.
    pub delay: Option<Duration>,
    /// The time each test aims to take.
    pub time_per_test: Duration,
    /// The ratios recorded for a table, given its rows.
    pub ratios: RatiosOf,
    /// The lines after the tables, given the report and whether `--verbose`.
    pub summary: SummaryOf,
}

impl<C> Sweep<C> {
    /// Timed samples dropped from the front of each round.
    pub fn dropped(&self) -> usize {
        EPCC_DROPPED * usize::from(self.row.mode == Mode::Epcc)
    }

    /// Timed samples kept per row, all rounds together.
    fn kept(&self) -> usize {
        self.row.schedule.samples - self.dropped()
    }

    /// Rounds per row: at least one, and no more than the samples kept.
    pub fn rounds(&self) -> usize {
        self.rounds.clamp(1, self.kept().max(1))
    }

    /// Round `index` of each row: its share of the kept samples (the first rounds take the
    /// remainder), its own warm-up, and its share of the time and budget.
    pub fn round(&self, index: usize) -> Timing {
        let (rounds, kept) = (self.rounds(), self.kept());
        let samples = kept / rounds + usize::from(index < kept % rounds) + self.dropped();
        let mut plan = self.row;
        plan.schedule.samples = samples;
        plan.schedule.target_sample = self.time_per_test / (rounds * samples) as u32;
        plan.schedule.row_budget = self.row.schedule.row_budget / rounds as u32;
        plan
    }
}

impl<C: SweepContender> Benchmark for Sweep<C> {
    type Contender = SweepRow<C>;

    fn name(&self) -> String {
        self.name.to_owned()
    }

    fn header(&self, provenance: &Provenance, _: Option<&Floor>) -> String {
        let (samples, rounds) = (self.kept(), self.rounds());
        let method = match self.delay {
            Some(delay) => format!(
                "EPCC syncbench: delay({:.2} µs) then barrier, reference loop subtracted; \
                 {samples} outer repetitions in {rounds} interleaved rounds, each after 1 dropped",
                delay.as_secs_f64() * 1e6
            ),
            None => format!(
                "back-to-back episodes, no delay; {samples} samples in {rounds} interleaved rounds"
            ),
        };
        let pinned = if self.row.pin { ", threads pinned" } else { "" };
        let time = self.time_per_test.as_secs_f64();
        let method = format!("{method}, about {time:.1} s per test{pinned}");
        Header::new(provenance, self.measures)
            .line("method", method)
            .machine(provenance)
            .floors(provenance)
            .line(
                "floor",
                "a row per table: the cache-line round trip while every thread has a core, \
                 ceil(threads / cores) yield hand-offs once threads outnumber cores; measured in \
                 every round",
            )
            .line(
                "units",
                "the median over the repetitions, in ns (µs or ms when large) per barrier; \
                 rounds: the slowest round's median over the fastest's; ÷ref and ÷floor divide \
                 the median by the reference barrier's and by the floor row's (lower is better); \
                 --verbose adds the mean, its 95% confidence interval and the min",
            )
            .finish()
    }

    fn settings(&self) -> Settings {
        let (kept, rounds) = (self.kept(), self.rounds());
        let names = |keep: &dyn Fn(Kind) -> bool| -> Vec<String> {
            let of = self.contenders.iter().filter(|c| keep(c.kind()));
            of.map(|contender| contender.name().into_owned()).collect()
        };
        let method = match self.row.mode {
            Mode::Epcc => format!(
                "EPCC syncbench: each thread loops `delay(); barrier()` (a reduction: `delay(); \
                 send(1); next()`, or OpenMP's `omp for reduction`); a row is {kept} outer \
                 repetitions of an inner loop sized to the target time, in {rounds} rounds on a \
                 fresh barrier each, interleaved with the other rows' and the floor's, each \
                 round's first repetition dropped; cost = (loop time - reference loop time) / \
                 inner repetitions, the reference loop being the same loop without the barrier on \
                 the same threads (OpenMP: its own parallel region), subtracted as its median over \
                 all its rounds"
            ),
            Mode::BackToBack => format!(
                "back-to-back: T threads on a fresh barrier per round; a row is {kept} samples of \
                 consecutive episodes timed on thread 0, in {rounds} rounds interleaved with the \
                 other rows' and the floor's, each after its own warm-up"
            ),
        };
        let round = self.round(0).schedule;
        let own = Fields::default()
            .with("mode", self.row.mode.name())
            .with("algorithms", names(&|kind| kind == Kind::Ours))
            .with("baselines", names(&|kind| kind != Kind::Ours))
            .with("time_per_test_s", self.time_per_test.as_secs_f64())
            .with("samples", kept)
            .with("dropped_samples", self.dropped())
            .with("rounds", rounds)
            .with("episodes", self.row.schedule.episodes)
            .with("target_sample_ms", round.target_sample.as_secs_f64() * 1e3)
            .with("delay_us", self.delay.map(|d| d.as_secs_f64() * 1e6))
            .with("delay_iterations", self.delay.map(|_| self.row.delay))
            .with("row_budget_s", round.row_budget.as_secs_f64());
        Settings {
            method,
            threads: self.threads.clone(),
            contenders: names(&|_| true),
            pinned: self.row.pin,
            debug_build: cfg!(debug_assertions),
            own,
        }
    }

    fn tables(&self) -> Vec<TablePlan<SweepRow<C>>> {
        let epcc = self.row.mode == Mode::Epcc;
        let at = Fields::default().with("mode", self.row.mode.name());
        let plan = |contender, name: Cow<str>, kind, subtracts| RowPlan {
            contender,
            name: name.into_owned(),
            kind,
            at: at.clone(),
            subtracts,
        };
        // An EPCC row subtracts the reference loop on its own kind of threads (table index 0 or 1).
        let row = |c: C| {
            let subtracts = epcc.then_some(usize::from(c.runs_on_openmp()));
            plan(SweepRow::Row(c), c.name(), c.kind(), subtracts)
        };
        let table = |threads: usize| {
            let contenders = (self.contenders.iter().copied()).filter(|&c| (self.keep)(c, threads));
            let openmp = epcc && contenders.clone().any(C::runs_on_openmp);
            let loops = [(SweepRow::Loop, "reference loop", epcc)]
                .into_iter()
                .chain([(SweepRow::OmpLoop, "omp reference loop", openmp)])
                .filter(|&(_, _, runs)| runs)
                .map(|(contender, name, _)| plan(contender, name.into(), Kind::Loop, None));
            TablePlan {
                threads,
                rows: loops.chain(contenders.map(row)).collect(),
                rounds: self.rounds(),
                dropped: self.dropped(),
                floor: true,
            }
        };
        self.threads.iter().map(|&threads| table(threads)).collect()
    }

    fn measure(&self, plan: &RowPlan<SweepRow<C>>, threads: usize, round: usize) -> Row {
        let timing = self.round(round);
        let mut row = Row::new(&plan.name, plan.kind, threads, plan.at.clone());
        let measured = match plan.contender {
            // Only EPCC has a reference loop, so the round's pacing is its delay.
            SweepRow::Loop => {
                let watch = Watch::new(&plan.name, threads, timing.hang_after);
                timing.threads(vec![Nothing; threads], &watch)
            }
            SweepRow::OmpLoop => timing.openmp(threads, OmpWork::Loop),
            SweepRow::Row(contender) => {
                contender.measure(&mut row, &timing);
                return row;
            }
        };
        row.record(measured, &timing.schedule);
        row
    }

    fn floor_schedule(&self, round: usize) -> Schedule {
        self.round(round).schedule
    }

    fn layout(&self) -> Layout {
        use Column::{Label, MeanCi, Median, Min, Rounds};
        let over = |head, kind| Column::Over {
            head,
            by: Pick::Kind(kind),
        };
        // The reference by name: the bare protocol is a yardstick of the same kind.
        let reference = Column::Over {
            head: "÷ref",
            by: Pick::Named(REFERENCE.into()),
        };
        let ratios = vec![reference, over("÷floor", Kind::Floor)];
        Layout {
            concise: [vec![Label, Median, Rounds], ratios.clone()].concat(),
            verbose: [vec![Label, MeanCi, Min, Median, Rounds], ratios].concat(),
            block: None,
            hide: &[Kind::Loop],
            csv: &["mode", "regime", "yield_handoffs"],
            plot: Some(PlotSpec {
                slices: &[],
                y_label: "median cost per barrier".into(),
            }),
        }
    }

    fn ratios(&self, table: &[&Row]) -> Vec<Ratio> {
        (self.ratios)(table)
    }

    fn summary(&self, report: &Report, verbose: bool) -> Vec<String> {
        (self.summary)(report, verbose)
    }
}

/// A row of the barrier table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    /// The hand-written sense-reversing barrier ([`ReferenceBarrier`]): the yardstick.
    Reference,
    /// The counting protocol by hand ([`BareCounting`]): what `auto` costs without the
    /// library's bookkeeping where it runs counting.
    Bare,
    /// `std::sync::Barrier`: what a Rust user gets without this library.
    Std,
    /// POSIX `pthread_barrier_t` (glibc), through the C shim.
    Pthread,
    /// C++20 `std::barrier` (libstdc++), through the C++ shim.
    CxxBarrier,
    /// OpenMP `#pragma omp barrier` (libgomp), on OpenMP's own threads.
    OpenMp,
    /// OpenMP `#pragma omp for reduction(+:a)` (libgomp): EPCC's reduction test.
    OmpReduction,
    /// [`Contender::OpenMp`] as OpenMP users tune it, `OMP_WAIT_POLICY=active`, in a child.
    OpenMpActive,
    /// [`Contender::OmpReduction`] under `OMP_WAIT_POLICY=active`, in a child.
    OmpReductionActive,
    /// One of the library's barrier algorithms, `Auto` included.
    Phasers(Algorithm),
}

impl Contender {
    /// The reference and the baselines, heading every table; OpenMP both default and tuned
    /// (`OMP_WAIT_POLICY=active`), so our barriers are held against whichever is faster here.
    pub const BASELINES: [Contender; 7] = [
        Contender::Reference,
        Contender::Bare,
        Contender::Std,
        Contender::Pthread,
        Contender::CxxBarrier,
        Contender::OpenMp,
        Contender::OpenMpActive,
    ];

    /// Every contender: the baselines, OpenMP's reductions, `auto` and every algorithm.
    pub fn all() -> impl Iterator<Item = Contender> {
        let reductions = [Contender::OmpReduction, Contender::OmpReductionActive];
        let ours = std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE);
        (Contender::BASELINES.into_iter().chain(reductions)).chain(ours.map(Contender::Phasers))
    }

    /// A one-line description for `phasers list`.
    pub fn description(self) -> &'static str {
        match self {
            Contender::Reference => {
                "hand-written centralized sense-reversing barrier (spin, yield every 64 spins): \
                 the yardstick every ratio divides by"
            }
            Contender::Bare => {
                "hand-written copy of counting, auto's protocol at 1-2 threads and when threads \
                 outnumber cores (two tagged counters, one fetch_sub, the last re-arms the other \
                 and swaps the release; spin, yield every 64 spins), with none of the library's \
                 bookkeeping: the summary's \"auto ÷ bare protocol\""
            }
            Contender::Std => "Rust's std::sync::Barrier (mutex + condition variable)",
            Contender::Pthread => "POSIX pthread_barrier_wait (glibc: futex-based, sleeps)",
            Contender::CxxBarrier => {
                "C++20 std::barrier::arrive_and_wait (libstdc++: tree of atomics, atomic wait)"
            }
            Contender::OpenMp => {
                "#pragma omp barrier (libgomp, on OpenMP's own threads; spins GOMP_SPINCOUNT, \
                 then futex)"
            }
            Contender::OmpReduction => {
                "#pragma omp for reduction(+:a) over one iteration per thread, the delay and \
                 a += 1 inside (libgomp): EPCC's reduction test; the sum is checked"
            }
            Contender::OpenMpActive => {
                "omp barrier with OMP_WAIT_POLICY=active, as OpenMP users tune it (waiting threads \
                 spin instead of sleeping); libgomp reads it at load, so a child process measures it"
            }
            Contender::OmpReductionActive => {
                "omp reduction with OMP_WAIT_POLICY=active, measured by a child process"
            }
            Contender::Phasers(algorithm) => algorithm.description(),
        }
    }
}

impl SweepContender for Contender {
    fn name(self) -> Cow<'static, str> {
        match self {
            Contender::Reference => REFERENCE.into(),
            Contender::Bare => BARE.into(),
            Contender::Std => "std::sync::Barrier".into(),
            Contender::Pthread => PthreadBarrier::NAME.into(),
            Contender::CxxBarrier => CxxBarrier::NAME.into(),
            Contender::OpenMp => "omp barrier".into(),
            Contender::OmpReduction => "omp reduction".into(),
            Contender::OpenMpActive => "omp barrier (active)".into(),
            Contender::OmpReductionActive => "omp reduction (active)".into(),
            Contender::Phasers(algorithm) => algorithm.name().into(),
        }
    }

    fn kind(self) -> Kind {
        match self {
            // A yardstick like the reference: neither a standard barrier nor one of ours.
            Contender::Reference | Contender::Bare => Kind::Reference,
            Contender::Phasers(_) => Kind::Ours,
            _ => Kind::Baseline,
        }
    }

    fn runs_on_openmp(self) -> bool {
        use Contender::{OmpReduction, OmpReductionActive, OpenMp, OpenMpActive};
        matches!(
            self,
            OpenMp | OmpReduction | OpenMpActive | OmpReductionActive
        )
    }

    fn measure(self, row: &mut Row, timing: &Timing) {
        let threads = row.threads;
        let watch = Watch::new(&row.contender, threads, timing.hang_after);
        let measured = match self {
            Contender::Reference => {
                Ok(timing.threads(ReferenceBarrier::new(threads).handles(), &watch))
            }
            Contender::Bare => Ok(timing.threads(BareCounting::new(threads).handles(), &watch)),
            Contender::Std => {
                let barrier = std::sync::Barrier::new(threads);
                Ok(timing.threads(vec![&barrier; threads], &watch))
            }
            Contender::Pthread => {
                PthreadBarrier::new(threads).map(|b| timing.threads(b.handles(), &watch))
            }
            Contender::CxxBarrier => {
                CxxBarrier::new(threads).map(|b| timing.threads(b.handles(), &watch))
            }
            Contender::OpenMp => Ok(timing.openmp(threads, OmpWork::Barrier)),
            Contender::OmpReduction => Ok(timing.openmp(threads, OmpWork::Reduction)),
            Contender::OpenMpActive => return in_child(row, Contender::OpenMp, timing),
            Contender::OmpReductionActive => return in_child(row, Contender::OmpReduction, timing),
            Contender::Phasers(algorithm) => phasers::Barrier::with_algorithm(threads, algorithm)
                .map_err(|error| format!("cannot build: {error}"))
                .map(|barrier| {
                    row.resolved = Some(barrier.algorithm().name().to_owned());
                    row.wait_policy = Some(barrier.wait_policy().name().to_owned());
                    timing.threads(barrier.participants(), &watch)
                }),
        };
        timing.record(row, measured);
    }
}

/// Measures `row` as `twin` in a child process under `OMP_WAIT_POLICY=active`; the row is raw.
fn in_child(row: &mut Row, twin: Contender, timing: &Timing) {
    let start = Instant::now();
    // The child stops itself at its row budget; past that and the hang time, it is stuck.
    let limit = timing.schedule.row_budget + timing.hang_after + SETTLE;
    let job = Job {
        threads: row.threads,
        contender: twin.name().into_owned(),
        timing: *timing,
    };
    match child::delegate::<_, Row>(CHILD_KIND, ACTIVE_WAIT_POLICY, &job, limit) {
        Ok(mut answer) => {
            (answer.contender, answer.at) = (std::mem::take(&mut row.contender), row.at.clone());
            answer.kind = row.kind;
            // Process start and libgomp's loading included, as a row's thread start-up is.
            answer.row_s = start.elapsed().as_secs_f64();
            *row = answer;
        }
        Err(error) => timing.record(row, Err(error)),
    }
}

/// What the child measures: a contender by name, on `threads` threads, timed as the parent's round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Threads.
    pub threads: usize,
    /// The contender's name, as [`SweepContender::name`] gives it.
    pub contender: String,
    /// How it is measured.
    pub timing: Timing,
}

/// The child's side: measures the [`Job`] on stdin and prints its raw row as one line of JSON.
pub fn child() -> Result<(), String> {
    child::serve(|job: Job| {
        let active = [Contender::OpenMpActive, Contender::OmpReductionActive];
        let contender = Contender::all()
            .filter(|contender| !active.contains(contender))
            .find(|contender| contender.name() == job.contender)
            .ok_or_else(|| format!("no contender {:?} runs in this process", job.contender))?;
        let kind = contender.kind();
        let mut row = Row::new(&job.contender, kind, job.threads, Fields::default());
        contender.measure(&mut row, &job.timing);
        Ok(row)
    })
}

/// Spins between yields: pure spinning collapses when threads outnumber cores (a waiter burns the
/// last arrival's time slice); this keeps those rows finite at no measurable cost otherwise.
const SPINS_PER_YIELD: u32 = 64;

/// The textbook centralized sense-reversing barrier (Mellor-Crummey and Scott), so "vs reference"
/// says what the library's machinery (timeouts, breaking on panic, spin-then-park) costs or gains
/// over the simplest thing that works; only for this benchmark. Counter and release word sit on
/// their own cache lines, so arrivals hammering the counter do not evict the line waiters poll.
#[derive(Debug)]
pub struct ReferenceBarrier {
    parties: usize,
    count: CachePadded<AtomicUsize>,
    sense: CachePadded<AtomicBool>,
}

impl ReferenceBarrier {
    /// A barrier for `parties` threads (at least 1).
    pub fn new(parties: usize) -> Self {
        ReferenceBarrier {
            parties: parties.max(1),
            count: CachePadded::new(AtomicUsize::new(0)),
            sense: CachePadded::new(AtomicBool::new(false)),
        }
    }

    /// One handle per thread, each carrying only its local sense.
    pub fn handles(&self) -> Vec<ReferenceHandle<'_>> {
        let handle = |_| ReferenceHandle {
            barrier: self,
            local_sense: false,
        };
        (0..self.parties).map(handle).collect()
    }
}

/// One thread's handle on a [`ReferenceBarrier`].
#[derive(Debug)]
pub struct ReferenceHandle<'a> {
    barrier: &'a ReferenceBarrier,
    local_sense: bool,
}

impl Work for ReferenceHandle<'_> {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        let barrier = self.barrier;
        // Flipping the sense each episode makes the barrier reusable without a second counter: a
        // fast thread re-arriving for the next episode cannot be confused with this one.
        self.local_sense = !self.local_sense;
        let sense = self.local_sense;
        // AcqRel: the last arrival sees every arrival's prior writes before it releases them.
        if barrier.count.fetch_add(1, Ordering::AcqRel) == barrier.parties - 1 {
            // Nobody touches the counter until they see the new sense: a relaxed reset ordered
            // before the Release store is enough.
            barrier.count.store(0, Ordering::Relaxed);
            barrier.sense.store(sense, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while barrier.sense.load(Ordering::Acquire) != sense {
                spin_loop();
                spins = spins.wrapping_add(1);
                if spins % SPINS_PER_YIELD == 0 {
                    yield_now();
                }
            }
        }
        Ok(None)
    }
}

/// The bits of a [`BareCounting`] counter above the count: the episode it is armed for.
const BARE_TAG_SHIFT: u32 = 32;
/// The tag keeps 31 bits, as the library's counting does (its bit 63 marks sleepers).
const BARE_TAG_MASK: u64 = (1 << 31) - 1;
/// The arrivals still expected.
const BARE_COUNT_MASK: u64 = (1 << BARE_TAG_SHIFT) - 1;

/// A counter armed for `episode`, expecting `parties` arrivals.
fn bare_armed(episode: u64, parties: usize) -> u64 {
    ((episode & BARE_TAG_MASK) << BARE_TAG_SHIFT) | parties as u64
}

/// The protocol of the library's `Counting` (`crates/phasers/src/barrier/counting.rs`), written
/// out by hand, so "auto ÷ bare protocol" measures what `Barrier::wait` adds around it: the
/// episode and roster bookkeeping, the broken and stall checks, the wait policy beyond spin then
/// yield, the dispatch. Only for this benchmark.
///
/// The same atomics on the same lines: two counters on their own cache lines, used alternately,
/// each a word tagged with the episode it is armed for over the arrivals still expected. An
/// arrival is one `fetch_sub` on its episode's counter; the last re-arms the other counter with a
/// plain store (everyone has arrived, so nobody still waits on it) and releases with a swap of the
/// new tag, which the others poll for. The library's party count is an atomic because
/// participants may leave; nobody leaves this one, so it is a plain field.
#[derive(Debug)]
pub struct BareCounting {
    parties: usize,
    counters: [CachePadded<AtomicU64>; 2],
}

impl BareCounting {
    /// A barrier for `parties` threads (at least 1).
    pub fn new(parties: usize) -> Self {
        let parties = parties.max(1);
        BareCounting {
            parties,
            counters: [0, 1]
                .map(|episode| CachePadded::new(AtomicU64::new(bare_armed(episode, parties)))),
        }
    }

    /// One handle per thread, each carrying only the episode it is at.
    pub fn handles(&self) -> Vec<BareHandle<'_>> {
        let handle = |_| BareHandle {
            barrier: self,
            episode: 0,
        };
        (0..self.parties).map(handle).collect()
    }
}

/// One thread's handle on a [`BareCounting`].
#[derive(Debug)]
pub struct BareHandle<'a> {
    barrier: &'a BareCounting,
    episode: u64,
}

impl Work for BareHandle<'_> {
    const SYNCHRONIZED: bool = true;

    // Always inlined into the engine's loop, as the library's rows are (see `harness/work.rs`).
    #[inline(always)]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        let barrier = self.barrier;
        let number = self.episode;
        self.episode += 1;
        let counter = &barrier.counters[(number & 1) as usize];
        // AcqRel: the last arrival sees every arrival's prior writes before it releases them.
        let before = counter.fetch_sub(1, Ordering::AcqRel);
        if before & BARE_COUNT_MASK == 1 {
            let next = &barrier.counters[((number + 1) & 1) as usize];
            next.store(bare_armed(number + 1, barrier.parties), Ordering::Release);
            // A swap, as the library's release (which looks for sleepers in the old word): the
            // same atomics, so the ratio is the bookkeeping alone. Tag `number + 2`, count 0:
            // the leader of `number + 1` arms it.
            counter.swap(bare_armed(number + 2, 0), Ordering::AcqRel);
        } else {
            let mine = number & BARE_TAG_MASK;
            let mut spins = 0u32;
            while counter.load(Ordering::Acquire) >> BARE_TAG_SHIFT == mine {
                spin_loop();
                spins = spins.wrapping_add(1);
                if spins % SPINS_PER_YIELD == 0 {
                    yield_now();
                }
            }
        }
        Ok(None)
    }
}

/// `f(rows, records)` of each thread count of `report`, those that say something.
pub fn at_each(
    report: &Report,
    f: impl Fn(&[&Row], &[&RatioRecord]) -> Option<String>,
) -> Vec<String> {
    let each = |&threads: &usize| {
        let records = report.ratios.iter().filter(|r| r.record.threads == threads);
        f(&rows_at(report, threads), &records.collect::<Vec<_>>())
    };
    report.settings.threads.iter().filter_map(each).collect()
}

/// `1 thread`, `4 threads`.
pub fn threads_text(threads: usize) -> String {
    format!("{threads} thread{}", if threads == 1 { "" } else { "s" })
}

/// The rows of `report` at `threads` threads.
fn rows_at(report: &Report, threads: usize) -> Vec<&Row> {
    let rows = report.rows.iter();
    rows.filter(|row| row.threads == threads).collect()
}

/// `row`'s median, or `< resolution` when it is below its resolution.
fn median_text(row: &Row) -> String {
    ratio::cost(row).map_or_else(|| below_text(row.resolution_ns.unwrap_or(0.0)), time)
}

/// `floor (2 yield hand-offs)`.
fn floor_label(floor: &Row) -> String {
    format!("floor ({})", Regime::of_row(floor).describe())
}

/// What our rows are divided by, each with its label: the reference, every baseline, the floor.
fn divisors(rows: &[&Row]) -> Vec<(String, Pick)> {
    let compared = (rows.iter()).filter(|row| matches!(row.kind, Kind::Reference | Kind::Baseline));
    let named = compared.map(|row| {
        (
            row.contender.clone(),
            Pick::Named(row.contender.clone().into()),
        )
    });
    let floor = rows.iter().find(|row| row.kind == Kind::Floor);
    let floor = floor.map(|row| (floor_label(row), Pick::Kind(Kind::Floor)));
    named.chain(floor).collect()
}

/// The heads of `bench barrier`'s ratios, by head: our best (`our best (mcs)`) and `auto`.
fn heads(rows: &[&Row]) -> Vec<(&'static str, String, Pick)> {
    let named = |name: &str| Pick::Named(name.to_owned().into());
    let best = ratio::pick(rows, &Pick::FastestKind(Kind::Ours)).map(|row| {
        let label = format!("our best ({})", row.contender);
        ("our best", label, named(&row.contender))
    });
    let auto = rows.iter().any(|row| row.contender == AUTO);
    let auto = auto.then(|| (AUTO, AUTO.to_owned(), named(AUTO)));
    best.into_iter().chain(auto).collect()
}

/// Our best and `auto` over the reference, every baseline and the floor: `auto` is what users get;
/// our best, picked after the fact from eight rows, would flatter us alone.
pub fn barrier_ratios(rows: &[&Row]) -> Vec<Ratio> {
    let divisors = divisors(rows);
    let each = |(_, head, top): (&str, String, Pick)| {
        divisors.iter().map(move |(name, bottom)| Ratio {
            label: format!("{head} / {name}"),
            numerator: top.clone(),
            denominator: bottom.clone(),
        })
    };
    heads(rows).into_iter().flat_map(each).collect()
}

/// `--verbose` lines at one thread count: a column per head, a line per divisor, the noise spelled
/// out. Says so when no row of ours costs more than its resolution; `None` when none has a median.
pub fn barrier_lines(rows: &[&Row], records: &[&RatioRecord]) -> Option<String> {
    let measured = |row: &&&Row| row.error.is_none() && row.median().is_some();
    let mut ours = rows.iter().filter(|row| row.kind == Kind::Ours);
    let threads = threads_text(ours.find(measured)?.threads);
    let Some(best) = ratio::pick(rows, &Pick::FastestKind(Kind::Ours)) else {
        let none = "every row of ours costs less than its resolution: no ratios";
        return Some(format!("{threads}: {none}"));
    };
    let (best, cost) = (best.label(), median_text(best));
    let mut text = format!("{threads}: our best is {best} at {cost} (median)");
    if let Some(auto) = rows.iter().filter(measured).find(|r| r.contender == AUTO) {
        text.push_str(&format!("; {} at {}", auto.label(), median_text(auto)));
    }
    let cost = |pick: &Pick| ratio::pick(rows, pick).and_then(ratio::cost);
    let heads = heads(rows)
        .into_iter()
        .filter(|head| cost(&head.2).is_some());
    let heads: Vec<_> = heads.collect();
    let head = (["divided by", "median"].into_iter()).chain(heads.iter().map(|head| head.0));
    let mut cells = vec![head.chain([""]).map(str::to_owned).collect::<Vec<_>>()];
    let divisors = divisors(rows).into_iter();
    for (name, bottom) in divisors.filter_map(|(name, pick)| Some((name, cost(&pick)?))) {
        let (mut line, mut noisy) = (vec![name.clone(), time(bottom)], Vec::new());
        for (head, label, _) in &heads {
            let label = format!("{label} / {name}");
            let record = records.iter().map(|r| &r.record).find(|r| r.label == label);
            line.push(times(record.map(|r| r.numerator_ns), Some(bottom)));
            let noise = record.and_then(|r| r.noise.as_ref());
            noisy.extend(noise.map(|noise| format!("{head}: {noise}")));
        }
        let noisy = (!noisy.is_empty()).then(|| format!("noisy ({})", noisy.join("; ")));
        cells.push([line, vec![noisy.unwrap_or_default()]].concat());
    }
    for line in aligned(&cells, Last::Free).lines() {
        text.push_str(&format!("\n  {line}"));
    }
    Some(text)
}

/// The summary's "auto ÷ bare protocol": at each thread count, `auto` over [`BareCounting`], the
/// protocol `auto` runs there by hand (unless the line says auto runs another protocol), so the
/// ratio is what the library's bookkeeping costs. `None` unless the sweep ran both rows.
pub fn bare_lines(report: &Report, verbose: bool) -> Option<String> {
    let label = format!("{AUTO} / {BARE}");
    let ran = |name: &str| report.rows.iter().any(|row| row.contender == name);
    if !(ran(AUTO) && ran(BARE)) {
        return None;
    }
    let (mut noisy, mut missing, mut cells) = (false, false, Vec::new());
    for &threads in &report.settings.threads {
        let rows = rows_at(report, threads);
        let Some(auto) = rows.iter().find(|row| row.contender == AUTO) else {
            continue;
        };
        let records = report.ratios.iter().map(|r| &r.record);
        let quotient = match records
            .filter(|r| r.threads == threads)
            .find(|r| r.label == label)
        {
            Some(record) => {
                noisy |= record.noisy && !verbose;
                ratio::quotient(record, verbose)
            }
            None => {
                missing = true;
                ratio::NOT_COMPUTED.to_owned()
            }
        };
        let other = (auto.resolved.as_deref()).filter(|&runs| runs != BARE_COPIES);
        let other = other.map(|_| "  (another protocol)");
        let line = format!("{quotient}{}", other.unwrap_or_default());
        cells.push([threads_text(threads), auto.label(), line]);
    }
    // The thread count and auto's label both left-aligned, as one first column.
    let width = cells.iter().map(|[threads, ..]| threads.len()).max();
    let cells = cells.into_iter().map(|[threads, label, line]| {
        let width = width.unwrap_or_default();
        vec![format!("{threads:<width$}  {label}"), line]
    });
    let mut text =
        format!("{AUTO} ÷ bare protocol: what Barrier::wait adds to the protocol ({BARE})");
    for line in aligned(&cells.collect::<Vec<_>>(), Last::Free).lines() {
        text.push_str(&format!("\n  {line}"));
    }
    Some(text + &ratio::notes(noisy, missing))
}

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
        println!("\n{}", verdict(&report).join("\n"));
    }
    result
}

/// Runs `phasers bench barrier`; hands back its report when it got that far (the quick suite).
pub fn run_and_keep(args: BarrierArgs) -> (Result<(), String>, Option<Report>) {
    let measured = move || -> Result<(Option<PathBuf>, Report), String> {
        let profile = (args.write_profile).map(|path| path.map_or_else(profile::default_path, Ok));
        let profile = profile.transpose()?;
        args.measure.check()?;
        let cores = phasers::available_cores();
        let threads = args.threads.unwrap_or_else(|| match profile {
            Some(_) => threads::tune_thread_counts(cores),
            None => threads::default_thread_counts(cores),
        });
        let all = || [&[Algorithm::Auto][..], &Algorithm::CONCRETE].concat();
        let ours = first_of_each(args.algorithms.unwrap_or_else(all)).into_iter();
        let contenders = Contender::BASELINES.into_iter();
        let contenders = contenders.chain(ours.map(Contender::Phasers)).collect();
        let sweep = args.measure.sweep("bench barrier", threads, contenders);
        Ok((profile, bench::run(&sweep, &args.output)?))
    };
    let (profile, report) = match measured() {
        Ok(measured) => measured,
        Err(error) => return (Err(error), None),
    };
    // The profile is written even when a baseline failed: it holds only our algorithms.
    let written = profile.map_or(Ok(()), |path| profile::write(&report, &path));
    let result = match (written, files::failures(&report.rows, &[])) {
        (Err(profile), Err(rows)) => Err(format!("{profile}; {rows}")),
        (written, rows) => written.and(rows),
    };
    (result, Some(report))
}

/// `row` against `standard` and the floor: the outcome (`unsettled`: within the rounds' noise or
/// both below their resolution), and the cells median, ÷standard, ÷floor.
fn compare(row: &Row, standard: Option<&Row>, floor: Option<f64>) -> (&'static str, Vec<String>) {
    let cost = ratio::cost(row);
    let cells = |over_standard: String| vec![median_text(row), over_standard, times(cost, floor)];
    let Some(standard) = standard else {
        return (NO_COMPARISON, cells("-".to_owned()));
    };
    let standard_cost = ratio::cost(standard);
    let outcome = match (cost, standard_cost) {
        (Some(cost), Some(standard_cost)) => {
            let sides = Ratio {
                label: String::new(),
                numerator: Pick::Named(row.contender.clone().into()),
                denominator: Pick::Named(standard.contender.clone().into()),
            };
            let records = ratio::records(&[row, standard], &[sides]);
            match (records.iter().any(|r| r.record.noisy), cost < standard_cost) {
                (true, _) => "unsettled",
                (false, true) => "faster",
                (false, false) => "slower",
            }
        }
        // Below its resolution: cheaper than anything measured above it.
        (None, Some(_)) => "faster",
        (Some(_), None) => "slower",
        (None, None) => "unsettled",
    };
    let over_standard = match cost.and(standard_cost) {
        Some(_) => format!("{} {outcome}", times(cost, standard_cost)),
        None => outcome.to_owned(),
    };
    (outcome, cells(over_standard))
}

/// The verdict: a title naming the CPU; at each thread count the fastest standard barrier, the
/// floor, `auto` and our best (one line when the same row); how often each beat the standard.
pub fn verdict(report: &Report) -> Vec<String> {
    let machine = &report.provenance.machine;
    let cpu = machine.cpu_model.as_deref().unwrap_or("an unnamed CPU");
    let title = format!(
        "verdict on {cpu}, {} cores: medians of the barrier sweep above; below 1x is faster, \
         \"unsettled\": the rounds disagree by more than the gap",
        machine.available_cores
    );
    let head = ["threads  row", "median", "÷fastest standard", "÷floor"];
    let mut cells = vec![head.map(str::to_owned).to_vec()];
    let (mut auto_outcomes, mut best_outcomes) = (Vec::new(), Vec::new());
    for &threads in &report.settings.threads {
        let rows = rows_at(report, threads);
        let start = cells.len();
        let mut line = |label: String, after: Vec<String>| {
            let shown = (cells.len() == start).then(|| threads.to_string());
            let first = format!("{:<7}  {label}", shown.unwrap_or_default());
            cells.push([vec![first], after].concat());
        };
        let standard = ratio::pick(&rows, &Pick::FastestKind(Kind::Baseline));
        match standard {
            Some(row) => line(
                format!("fastest standard: {}", row.contender),
                vec![time(ratio::cost(row).unwrap_or_default())],
            ),
            None => line("no standard barrier measured".to_owned(), Vec::new()),
        }
        let floor = rows.iter().find(|row| row.kind == Kind::Floor);
        let floor_ns = floor.and_then(|row| row.median());
        if let (Some(floor), Some(ns)) = (floor, floor_ns) {
            line(floor_label(floor), vec![time(ns)]);
        }
        let measured = |row: &&&Row| row.error.is_none() && row.median().is_some();
        let auto = (rows.iter().copied()).find(|row| row.contender == AUTO && measured(&row));
        // Our fastest above its resolution; when none is, the fastest of ours by median.
        let ours = ratio::pick(&rows, &Pick::FastestKind(Kind::Ours)).or_else(|| {
            let ours = (rows.iter()).filter(|row| row.kind == Kind::Ours && row.error.is_none());
            let medians = ours.filter_map(|row| Some((*row, row.median()?)));
            let fastest = medians.min_by(|a, b| a.1.total_cmp(&b.1));
            fastest.map(|(row, _)| row)
        });
        let same = matches!((auto, ours), (Some(a), Some(b)) if std::ptr::eq(a, b));
        for (label, row, outcomes) in [
            ("auto", auto, &mut auto_outcomes),
            ("our best", ours, &mut best_outcomes),
        ] {
            let Some(row) = row else {
                outcomes.push(NO_COMPARISON);
                line(format!("{label}: failed or not measured"), Vec::new());
                continue;
            };
            let (outcome, after) = compare(row, standard, floor_ns);
            outcomes.push(outcome);
            // When auto is our best, its line says so and our best has no line of its own.
            let name = match (label, same) {
                ("auto", true) => format!("{} (our best)", row.label()),
                ("auto", false) => row.label(),
                (_, true) => continue,
                _ => format!("our best: {}", row.label()),
            };
            line(name, after);
        }
    }
    let describe = |outcomes: &[&str], unit: &str| {
        let count = |which: &str| outcomes.iter().filter(|&&o| o == which).count();
        let others = (["slower", "unsettled", NO_COMPARISON].into_iter()).filter(|&w| count(w) > 0);
        let others: Vec<_> = others
            .map(|which| format!("{which} at {}", count(which)))
            .collect();
        let others = (!others.is_empty()).then(|| format!(" ({})", others.join(", ")));
        let (faster, all) = (count("faster"), outcomes.len());
        format!("{faster} of {all}{unit}{}", others.unwrap_or_default())
    };
    let in_short = format!(
        "auto (what users get) was faster than the fastest standard barrier at {}; our best \
         (picked after the fact) at {}",
        describe(&auto_outcomes, " thread counts"),
        describe(&best_outcomes, "")
    );
    let table = aligned(&cells, Last::Number);
    let text = [wrap("", &title), table, wrap("in short: ", &in_short)].concat();
    text.lines().map(str::to_owned).collect()
}

#[cfg(test)]
pub(crate) use tests::{report_of, rounds_row};

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_cli::harness::interleave::handoffs_row;

    /// A report of `rows` with made-up surroundings, for tests of what is drawn from the rows.
    pub(crate) fn report_of(rows: Vec<Row>) -> Report {
        let mut threads: Vec<usize> = rows.iter().map(|row| row.threads).collect();
        threads.dedup();
        let mut sweep = sweep_of("--mode back-to-back", 1, Vec::<Contender>::new());
        sweep.threads = threads;
        let mut report = Report {
            provenance: Provenance::now("bench barrier", Vec::new()),
            settings: sweep.settings(),
            floor: None,
            rows,
            ratios: Vec::new(),
        };
        let records = |&threads: &usize| {
            let rows = rows_at(&report, threads);
            ratio::records(&rows, &barrier_ratios(&rows))
        };
        report.ratios = report.settings.threads.iter().flat_map(records).collect();
        report
    }

    /// A row of `threads` threads measured in rounds of one sample each, with these medians.
    pub(crate) fn rounds_row(name: &str, kind: Kind, threads: usize, medians: &[f64]) -> Row {
        let round = |median: &f64| {
            let mut row = Row::new(name, kind, threads, Fields::default());
            row.raw_ns = vec![*median];
            row
        };
        let rounds: Vec<Row> = medians.iter().map(round).collect();
        phasers_cli::harness::interleave::merge(&rounds, 0, None)
    }

    /// The sweep `args` (sweep options) make of `contenders` at `threads` threads.
    fn sweep_of<C>(args: &str, threads: usize, contenders: Vec<C>) -> Sweep<C> {
        let args = ["barrier"].into_iter().chain(args.split_whitespace());
        let args = BarrierArgs::try_parse_from(args).unwrap();
        args.measure.sweep("test", vec![threads], contenders)
    }

    /// One round of `contender` on `threads` threads, timed as `args` (sweep options) say.
    pub(crate) fn one_round<C: SweepContender>(contender: C, threads: usize, args: &str) -> Row {
        let sweep = sweep_of(args, threads, vec![contender]);
        let table = sweep.tables().remove(0);
        sweep.measure(table.rows.last().unwrap(), threads, 0)
    }

    /// Tiny rows: 3 samples of 50 iterations.
    const SMALL: &str = "--samples 3 --rounds 1 --episodes 50";

    /// Every contender of this process, back to back on pinned threads (`tests/smoke.rs` runs
    /// each in EPCC mode, the reference loops and the child's rows included).
    #[test]
    fn every_contender_in_this_process_completes_a_pinned_back_to_back_row() {
        let active = [Contender::OpenMpActive, Contender::OmpReductionActive];
        for contender in Contender::all().filter(|c| !active.contains(c)) {
            let row = one_round(contender, 3, &format!("{SMALL} --mode back-to-back --pin"));
            let got = (row.error, row.note, row.kind, row.raw_ns.len());
            let got = (got, row.iterations_per_sample, row.resolved.is_some());
            let ours = contender.kind() == Kind::Ours;
            let what = contender.name();
            assert_eq!(got, ((None, None, contender.kind(), 3), 50, ours), "{what}");
        }
    }

    #[test]
    fn names_are_distinct_and_no_thread_passes_a_hand_written_barrier_before_all_arrive() {
        let names: std::collections::BTreeSet<_> = Contender::all().map(Contender::name).collect();
        assert_eq!(names.len(), Contender::all().count());
        hold_everyone_each_round(ReferenceBarrier::new(3).handles());
        // The bare protocol at 1 thread (the leader every time), 2, and more than this machine's
        // cores, where only its yields let it finish; its two counters alternate, so 200 rounds
        // re-arm each a hundred times.
        for threads in [1, 2, 3, 5] {
            hold_everyone_each_round(BareCounting::new(threads).handles());
        }
    }

    /// Runs 200 rounds of two iterations on one thread per handle, and checks that no thread
    /// leaves an iteration before every thread has arrived at it.
    fn hold_everyone_each_round<W: Work>(handles: Vec<W>) {
        const ROUNDS: u64 = 200;
        let threads = handles.len() as u64;
        let arrived = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for mut handle in handles {
                let arrived = &arrived;
                s.spawn(move || {
                    for round in 0..ROUNDS {
                        arrived.fetch_add(1, Ordering::Relaxed);
                        handle.iteration(round).unwrap();
                        // Everyone arrived at this round before anyone left it.
                        assert!(arrived.load(Ordering::Relaxed) >= (round + 1) * threads);
                        handle.iteration(round).unwrap();
                    }
                });
            }
        });
        assert_eq!(arrived.load(Ordering::Relaxed), ROUNDS * threads);
    }

    #[test]
    fn auto_over_the_bare_protocol_at_each_thread_count_says_when_auto_runs_another() {
        let auto = |threads, resolved: &str, medians: &[f64]| {
            let mut auto = rounds_row(AUTO, Kind::Ours, threads, medians);
            auto.resolved = Some(resolved.into());
            auto
        };
        let bare = |threads, medians: &[f64]| rounds_row(BARE, Kind::Reference, threads, medians);
        let mut failed = bare(8, &[30.0]);
        failed.error = Some("boom".into());
        let report = report_of(vec![
            auto(1, "counting", &[11.0, 11.2, 11.1]),
            bare(1, &[10.0, 10.1, 10.0]),
            auto(2, "counting", &[40.0, 60.0, 50.0]),
            bare(2, &[45.0, 46.0, 45.0]),
            auto(4, "sense-reversing", &[90.0; 3]),
            bare(4, &[60.0; 3]),
            auto(8, "counting", &[20.0]),
            failed,
        ]);
        assert_eq!(
            bare_lines(&report, false).unwrap(),
            "auto ÷ bare protocol: what Barrier::wait adds to the protocol (bare counting)
  1 thread   auto → counting         11.1 ns / 10.0 ns = 1.11x
  2 threads  auto → counting         50.0 ns / 45.0 ns = 1.11x~
  4 threads  auto → sense-reversing  90.0 ns / 60.0 ns = 1.50x  (another protocol)
  8 threads  auto → counting         not computed*
  ~ unsettled: the rounds disagree by more than the rows differ (--verbose: by how much)
  * a side failed, was not measured, or is below its resolution"
        );
        let verbose = bare_lines(&report, true).unwrap();
        assert!(
            verbose.contains("= 1.11x  noisy: rounds ×1.50 > gap ×1.11"),
            "{verbose}"
        );
        // Without either row, no line at all.
        let only_auto = report_of(vec![auto(1, "counting", &[11.0])]);
        assert_eq!(bare_lines(&only_auto, false), None);
    }

    /// The round count and the uneven split are `main.rs`'s `barrier_options_make_the_sweep`.
    #[test]
    fn each_round_takes_its_share_of_the_time_and_budget_and_its_own_warm_up() {
        let sweep = sweep_of("--samples 20 --rounds 5", 2, vec![Contender::Std]);
        // 4 kept and 1 dropped per round, a fifth of the time and of the budget.
        let round = sweep.round(0).schedule;
        let got = (round.samples, round.target_sample, round.row_budget);
        let (forty, eight_hundred) = (Duration::from_millis(40), Duration::from_millis(800));
        assert_eq!(got, (5, forty, eight_hundred));
    }

    /// 4 threads on 2 cores: the floor of 2 hand-offs of 10 ns, the reference, a baseline, `auto`
    /// with rounds ×1.40 apart, our fastest and a failed row.
    fn four_threads() -> Vec<Row> {
        let mut auto = rounds_row(AUTO, Kind::Ours, 4, &[50.0, 60.0, 70.0]);
        auto.resolved = Some("counting".into());
        let mut failed = rounds_row("tournament", Kind::Ours, 4, &[1.0]);
        failed.error = Some("boom".into());
        let reference = rounds_row("reference", Kind::Reference, 4, &[100.0; 3]);
        let std = rounds_row("std::sync::Barrier", Kind::Baseline, 4, &[58.0, 58.0]);
        let mcs = rounds_row("mcs", Kind::Ours, 4, &[40.0]);
        let floor = handoffs_row(4, 2, &[10.0; 3]);
        vec![floor, reference, std, auto, mcs, failed]
    }

    #[test]
    fn our_best_and_auto_are_divided_by_every_baseline_and_the_floor() {
        let rows = four_threads();
        let table: Vec<&Row> = rows.iter().collect();
        let records = ratio::records(&table, &barrier_ratios(&table));
        // Each cell is the record labelled `head / divisor`; auto's rounds span ×1.40, more than
        // its 3% gap to std.
        assert_eq!(records[2].record.denominator, "floor");
        let text = barrier_lines(&table, &records.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(
            text,
            "4 threads: our best is mcs at 40.0 ns (median); auto → counting at 60.0 ns
  divided by                  median  our best   auto
  reference                   100 ns     0.40x  0.60x
  std::sync::Barrier         58.0 ns     0.69x  1.03x  noisy (auto: rounds ×1.40 > gap ×1.03)
  floor (2 yield hand-offs)  20.0 ns     2.00x  3.00x"
        );
        let baselines = table.iter().copied().filter(|r| r.kind != Kind::Ours);
        let baselines: Vec<&Row> = baselines.collect();
        assert_eq!(barrier_lines(&baselines, &[]), None);
        // Below its resolution, a row is neither our best nor a side of a ratio.
        let mut rows = four_threads();
        rows.retain(|row| row.contender != "mcs");
        rows[3].resolution_ns = Some(100.0);
        let table: Vec<&Row> = rows.iter().collect();
        let text = barrier_lines(&table, &[]).unwrap();
        let none = "4 threads: every row of ours costs less than its resolution: no ratios";
        assert_eq!(text, none);
        assert!(ratio::records(&table, &barrier_ratios(&table)).is_empty());
    }

    /// The verdict's table and closing line, without the title (which names this machine's CPU).
    fn verdict_table(rows: Vec<Row>) -> String {
        let lines = verdict(&report_of(rows));
        let table = lines.iter().skip_while(|line| !line.starts_with("threads"));
        table.cloned().collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn the_verdict_names_the_cpu_and_compares_at_each_thread_count() {
        // At 2 threads, we win clearly; at 4, auto loses and our best is within noise.
        let mut auto2 = rounds_row("auto", Kind::Ours, 2, &[50.0; 3]);
        auto2.resolved = Some("counting".into());
        let mut report = report_of(vec![
            handoffs_row(2, 1, &[20.0]),
            rounds_row("std::sync::Barrier", Kind::Baseline, 2, &[400.0; 3]),
            rounds_row("pthread_barrier_t", Kind::Baseline, 2, &[200.0; 3]),
            auto2,
            rounds_row("mcs", Kind::Ours, 2, &[40.0; 3]),
            handoffs_row(4, 2, &[500.0]),
            rounds_row("pthread_barrier_t", Kind::Baseline, 4, &[1000.0; 3]),
            rounds_row("auto", Kind::Ours, 4, &[3000.0; 3]),
            rounds_row("mcs", Kind::Ours, 4, &[900.0, 1200.0, 950.0]),
        ]);
        report.provenance.machine.cpu_model = Some("AMD EPYC 7B13".into());
        report.provenance.machine.available_cores = 2;
        assert_eq!(
            verdict(&report).join("\n"),
            r#"verdict on AMD EPYC 7B13, 2 cores: medians of the barrier sweep above; below 1x is faster,
"unsettled": the rounds disagree by more than the gap
threads  row                                   median  ÷fastest standard  ÷floor
2        fastest standard: pthread_barrier_t   200 ns
         floor (1 yield hand-off)             20.0 ns
         auto → counting                      50.0 ns       0.25x faster   2.50x
         our best: mcs                        40.0 ns       0.20x faster   2.00x
4        fastest standard: pthread_barrier_t  1000 ns
         floor (2 yield hand-offs)            1000 ns
         auto                                 3000 ns       3.00x slower   3.00x
         our best: mcs                         950 ns    0.95x unsettled   0.95x
in short: auto (what users get) was faster than the fastest standard barrier at 1 of 2 thread counts
          (slower at 1); our best (picked after the fact) at 1 of 2 (unsettled at 1)"#
        );
    }

    #[test]
    fn auto_as_our_best_has_one_line_and_a_cost_below_resolution_beats_one_above_it() {
        let mut auto = rounds_row("auto", Kind::Ours, 2, &[30.0; 3]);
        auto.resolved = Some("counting".into());
        let std = |threads, ns| rounds_row("std::sync::Barrier", Kind::Baseline, threads, ns);
        let mcs = rounds_row("mcs", Kind::Ours, 2, &[40.0; 3]);
        assert_eq!(
            verdict_table(vec![std(2, &[400.0; 3]), auto, mcs]),
            "threads  row                                    median  ÷fastest standard  ÷floor
2        fastest standard: std::sync::Barrier   400 ns
         auto → counting (our best)            30.0 ns       0.07x faster       -
in short: auto (what users get) was faster than the fastest standard barrier at 1 of 1 thread
          counts; our best (picked after the fact) at 1 of 1"
        );
        let mut ticket = rounds_row("ticket", Kind::Ours, 1, &[-1.7, -1.7, -1.7]);
        ticket.resolution_ns = Some(6.0);
        assert_eq!(
            verdict_table(vec![std(1, &[250.0]), ticket]),
            "threads  row                                     median  ÷fastest standard  ÷floor
1        fastest standard: std::sync::Barrier    250 ns
         auto: failed or not measured
         our best: ticket                      < 6.0 ns             faster       -
in short: auto (what users get) was faster than the fastest standard barrier at 0 of 1 thread counts
          (no comparison at 1); our best (picked after the fact) at 1 of 1"
        );
    }
}
