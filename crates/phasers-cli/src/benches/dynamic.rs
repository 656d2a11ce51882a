//! `bench dynamic`: the seed's dynamic-parallelism benchmark (its figure 16 and Table II). A team
//! grows from 2 to N threads one task at a time, with a barrier at every size. OpenMP cannot change
//! a team inside a parallel region, so it forks a `parallel for num_threads(nth)` per size; a
//! phaser can: the creator registers one more task (an OS thread, `std::thread::scope`) per step on
//! the live phaser and `next()`s with everyone registered so far, each task running
//! `next(); delay()` until the team is full. As in the seed there are no inner repetitions (the
//! cost per barrier includes creating the tasks, which is the point); the whole run is repeated.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use phasers_cli::harness::args::{parse_delay, parse_seconds};
use phasers_cli::harness::bench::{self, Benchmark};
use phasers_cli::harness::delay::{self, delay};
use phasers_cli::harness::files;
use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::header::Header;
use phasers_cli::harness::interleave::{RowPlan, TablePlan};
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::ratio::{self, Pick, Ratio};
use phasers_cli::harness::render::{Column, Layout, PlotSpec};
use phasers_cli::harness::result::{Fields, Kind, Report, Row, Settings};
use phasers_cli::harness::schedule::Schedule;
use phasers_cli::harness::threads;
use phasers_cli::harness::watchdog::{panic_message, watch_until, Watch};

use super::app::timed;
use super::barrier::EPCC_DROPPED;
use super::phaser::{create, shape_label, PhaserConfig, FLAT, TREE};
use crate::native::{omp_dynamic, Delay, SETTLE};

/// Options of `phasers bench dynamic`.
#[derive(Debug, Args)]
pub struct DynamicArgs {
    /// The largest team, N: the team grows from 2 to N threads, one barrier per size
    /// [default: twice the available cores].
    #[arg(long, value_name = "N", value_parser = parse_largest_team)]
    threads: Option<usize>,

    /// Times the whole benchmark is repeated; one more run is taken first and dropped. Runs are
    /// short and have no inner repetitions, so it takes many for a steady median.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..=1000))]
    samples: u16,

    /// The delay each task runs after each barrier, in microseconds.
    #[arg(long, value_name = "MICROSECONDS", default_value = "0.1", value_parser = parse_delay, allow_negative_numbers = true)]
    delay: Duration,

    /// Stop the whole run when a phaser run completes no step for this many seconds: it is hung.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds, allow_negative_numbers = true)]
    hang_seconds: Duration,

    /// `--json`, `--csv`, `--plot` and `--verbose`.
    #[command(flatten)]
    output: OutputArgs,
}

/// The phaser rows, after OpenMP's re-forked regions: the flat phaser and the seed's tree for N.
const PHASERS: [PhaserConfig; 2] = [FLAT, TREE];

const OPENMP_NAME: &str = "omp parallel for, re-forked";

/// The benchmark: its options, N, and the delay calibrated to iterations.
struct Dynamic<'a> {
    args: &'a DynamicArgs,
    max: usize,
    iterations: u64,
}

/// Runs `phasers bench dynamic`.
pub fn run(args: &DynamicArgs) -> Result<(), String> {
    let dynamic = Dynamic {
        args,
        max: (args.threads).unwrap_or_else(|| default_largest_team(phasers::available_cores())),
        iterations: delay::calibrate(args.delay),
    };
    files::failures(&bench::run(&dynamic, &args.output)?.rows, &[])
}

impl Benchmark for Dynamic<'_> {
    /// `None`: OpenMP; else the phaser.
    type Contender = Option<PhaserConfig>;

    fn name(&self) -> String {
        "bench dynamic".to_owned()
    }

    fn header(&self, provenance: &Provenance, floor: Option<&Floor>) -> String {
        let what = "the cost of one barrier while the team grows";
        let floor = floor.expect("measured before the header");
        let header = Header::with_floors(provenance, what, self.settings().method, floor);
        let units = "per barrier; the median over the runs (--verbose: min and mean ± 95% CI \
                     too); ÷floor divides the median by the floor's (no reference barrier can \
                     change its team)";
        header.line("units", units).finish()
    }

    fn settings(&self) -> Settings {
        let (max, steps, samples) = (self.max, steps(self.max), self.args.samples);
        let own = Fields::default()
            .with("max_threads", max)
            .with("steps", steps)
            .with("samples", samples)
            .with("dropped_samples", EPCC_DROPPED)
            .with("delay_us", self.args.delay.as_secs_f64() * 1e6)
            .with("delay_iterations", self.iterations);
        let method = format!(
            "the seed's figure 16: the team grows from 2 to {max} threads, one barrier per size \
             and a delay after each; OpenMP forks a parallel for per size, the phaser registers \
             one more task (a new OS thread) per size on the live phaser; time per barrier = time \
             of the whole run / {steps}, no inner repetitions and nothing subtracted; {samples} \
             runs after {EPCC_DROPPED} dropped"
        );
        let rows = self.tables().remove(0).rows;
        Settings {
            method,
            threads: vec![max],
            contenders: rows.into_iter().map(|row| row.name).collect(),
            pinned: false,
            debug_build: cfg!(debug_assertions),
            own,
        }
    }

    fn tables(&self) -> Vec<TablePlan<Option<PhaserConfig>>> {
        let contenders = std::iter::once(None).chain(PHASERS.map(Some));
        let rows = contenders.map(|contender| RowPlan {
            contender,
            name: contender.map_or(OPENMP_NAME.into(), |config| config.name().into_owned()),
            kind: contender.map_or(Kind::Baseline, |_| Kind::Ours),
            at: Fields::default(),
            subtracts: None,
        });
        vec![TablePlan {
            threads: self.max,
            rows: rows.collect(),
            rounds: 1,
            dropped: EPCC_DROPPED,
            floor: false,
        }]
    }

    /// Each sample is one whole run, one call of the engine, of `steps` barriers.
    fn measure(&self, plan: &RowPlan<Option<PhaserConfig>>, max: usize, _: usize) -> Row {
        let steps = steps(max);
        let samples = usize::from(self.args.samples) + EPCC_DROPPED;
        let delay = Some(Delay {
            function: delay,
            arg: self.iterations,
        });
        let watch = Watch::new(&plan.name, max, self.args.hang_seconds);
        let mut row = Row::new(&plan.name, plan.kind, max, Fields::default());
        let trees = timed(&mut row, samples, steps, || match plan.contender {
            None => omp_dynamic(max, delay).map(|round| (round.ran, round.elapsed, None)),
            Some(config) => {
                let (elapsed, tree) = phaser_once(config, max, self.iterations, &watch)?;
                Ok((steps, elapsed, Some(tree)))
            }
        });
        if plan.contender.is_none() {
            // libgomp's pool keeps spinning a while: let it settle before the phasers run.
            std::thread::sleep(SETTLE);
        }
        row.resolved = trees.into_iter().flatten().last();
        row
    }

    fn floor_once(&self) -> Option<Schedule> {
        // The default sweep's sampling, scaled down: it is a line of the header here.
        Some(Schedule {
            episodes: None,
            samples: usize::from(self.args.samples) + EPCC_DROPPED,
            target_sample: Duration::from_millis(10),
            row_budget: Duration::from_secs(2),
        })
    }

    fn layout(&self) -> Layout {
        let over = Column::Over {
            head: "÷floor",
            by: Pick::Kind(Kind::Floor),
        };
        let (label, median) = (Column::Label, Column::Median);
        Layout {
            concise: vec![label.clone(), median.clone(), over.clone()],
            verbose: vec![label, Column::MeanCi, Column::Min, median, over],
            block: None,
            hide: &[],
            csv: &[],
            plot: Some(PlotSpec {
                slices: &[],
                y_label: "median cost per barrier".into(),
            }),
        }
    }

    fn ratios(&self, _: &[&Row]) -> Vec<Ratio> {
        let ratio = |config: PhaserConfig| Ratio {
            label: format!("{OPENMP_NAME} / {}", config.name()),
            numerator: Pick::Named(OPENMP_NAME.into()),
            denominator: Pick::Named(config.name()),
        };
        PHASERS.map(ratio).to_vec()
    }

    fn summary(&self, report: &Report, verbose: bool) -> Vec<String> {
        let heading = "median ratios (below 1: OpenMP is faster)";
        let ratios = self.ratios(&[]);
        vec![ratio::lines(heading, &report.ratios, &ratios, verbose)]
    }
}

/// N when `--threads` is not given: twice the cores, so the team outgrows the machine as it grows.
fn default_largest_team(cores: usize) -> usize {
    cores.saturating_mul(2).clamp(2, threads::MAX_THREADS)
}

/// Parses `--threads` of `bench dynamic`: a thread count of at least 2.
fn parse_largest_team(text: &str) -> Result<usize, String> {
    match threads::parse_thread_count(text)? {
        1 => Err("the team grows from 2 threads, so N must be at least 2".to_owned()),
        n => Ok(n),
    }
}

/// Barriers in one run: one per team size from 2 to `max`.
fn steps(max: usize) -> u64 {
    u64::try_from(max.saturating_sub(1)).unwrap_or(u64::MAX)
}

/// One run of the phaser version: the time from creating the phaser to every task's end (the
/// seed's `finish`), and the label of the tree that ran.
fn phaser_once(
    config: PhaserConfig,
    max: usize,
    iterations: u64,
    watch: &Watch,
) -> Result<(Duration, String), String> {
    let steps_done = AtomicU64::new(0);
    let watcher = std::thread::current();
    std::thread::scope(|scope| {
        let creator = scope.spawn(|| {
            let run = grow(scope, config, max, iterations, &steps_done);
            // A run takes far less than the watcher's interval: tell it at once.
            watcher.unpark();
            run
        });
        watch_until(|| creator.is_finished(), &steps_done, watch);
        creator.join().unwrap_or_else(|panic| {
            Err(format!("the creator panicked: {}", panic_message(&*panic)))
        })
    })
}

/// The creator's side of a run: registers and spawns one task per step, then joins them all.
fn grow<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    config: PhaserConfig,
    max: usize,
    iterations: u64,
    steps_done: &'scope AtomicU64,
) -> Result<(Duration, String), String> {
    let start = Instant::now();
    let (phaser, mut creator) =
        create(config, max).map_err(|error| format!("cannot build: {error}"))?;
    let label = shape_label(phaser.tiers(), phaser.degree());
    let mut tasks = Vec::with_capacity(max.saturating_sub(1));
    let mut failure = (2..=max).find_map(|nth| {
        let mut step = || -> Result<(), String> {
            let mut task = (creator.register(phasers::Mode::SigWait))
                .map_err(|error| format!("cannot register task {nth}: {error}"))?;
            let work = move || -> Result<(), phasers::Error> {
                for _ in nth..=max {
                    task.next()?;
                    delay(iterations);
                }
                Ok(())
            };
            let spawned = std::thread::Builder::new().spawn_scoped(scope, work);
            tasks.push(spawned.map_err(|error| format!("cannot start task {nth}: {error}"))?);
            (creator.next()).map_err(|error| format!("the creator's barrier {nth}: {error}"))?;
            Ok(())
        };
        let failed = step().err();
        if failed.is_none() {
            delay(iterations);
            steps_done.fetch_add(1, Ordering::Relaxed);
        }
        failed
    });
    // Leaving now lets the tasks finish without the creator, should it have stopped early.
    drop(creator);
    // Every task is joined, so none is left behind whatever happened.
    for (nth, task) in (2..).zip(tasks) {
        let problem = match task.join() {
            Ok(done) => done.err().map(|error| format!("task {nth}: {error}")),
            Err(panic) => Some(format!("task {nth} panicked: {}", panic_message(&*panic))),
        };
        failure = failure.or(problem);
    }
    let elapsed = start.elapsed();
    failure.map_or(Ok((elapsed, label)), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    // tests/smoke.rs: N=3 makes 2 steps, and N=1 is refused.
    #[test]
    fn by_default_the_team_grows_to_twice_the_cores() {
        assert_eq!((default_largest_team(2), default_largest_team(0)), (4, 2));
    }
}
