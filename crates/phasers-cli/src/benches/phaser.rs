//! `phasers bench phaser`: seed 000's phaser figures, chosen with `--figure`: EPCC's barrier test
//! (phase), its reduction test (reduction) and the (tiers, degree) sweep of the seed's figures 14
//! and 15 (tree), each a sweep of `bench barrier` with its own rows and ratios; and the phaser
//! part of the quick suite.
//!
//! The tree figure runs every shape with and without a sum (`next()`, `send(1); next()`) at every
//! thread count, and ends with one matrix of medians, shapes down and thread counts across.

use std::borrow::Cow;

use clap::{Parser, ValueEnum};
use phasers::{Accumulator, Algorithm, Element, Op, Phaser, Registration};
use phasers_cli::harness::args::{parse_within, sorted_unique};
use phasers_cli::harness::bench;
use phasers_cli::harness::files;
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::ratio::{self, Pick, Ratio};
use phasers_cli::harness::result::{Kind, Report, Row};
use phasers_cli::harness::table::{aligned, time, Last};
use phasers_cli::harness::threads;
use phasers_cli::harness::watchdog::Watch;
use phasers_cli::harness::work::{Failure, Work, WrongResult};

use super::barrier::{at_each, threads_text, Contender, MeasureArgs, SweepContender, Timing};

/// Which of seed 000's figures `bench phaser` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Figure {
    /// EPCC's barrier test: flat and tree phasers (`next()`) against our best barriers and OpenMP.
    Phase,
    /// EPCC's reduction test: `send(1); next()` against `omp for reduction`, every sum checked.
    Reduction,
    /// Figures 14 and 15: every tiers x degree, with and without a sum, then a matrix of medians.
    Tree,
}

impl Figure {
    /// The name `--figure` takes.
    pub fn name(self) -> String {
        let value = self.to_possible_value().expect("no figure is skipped");
        value.get_name().to_owned()
    }
}

/// Options of `phasers bench phaser`.
#[derive(Debug, Parser)]
#[command(name = "phaser")]
pub struct PhaserArgs {
    /// Which figure [default: phase, or tree when --tiers or --degrees is given].
    #[arg(long, value_enum)]
    pub figure: Option<Figure>,

    /// Thread counts, comma-separated [default: as `bench barrier`; tree: 2,4,8,16,32,64].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = threads::parse_thread_count)]
    pub threads: Option<Vec<usize>>,

    /// Tree figure: tiers, comma-separated; 1 is the flat phaser [default: 1,2,3].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_tiers)]
    pub tiers: Option<Vec<usize>>,

    /// Tree figure: degrees (children per sub-phaser, registrations per leaf), comma-separated
    /// [default: 2,4,8,16,32].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_degree)]
    pub degrees: Option<Vec<usize>>,

    #[command(flatten)]
    pub measure: MeasureArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

impl PhaserArgs {
    /// The figure asked for; `Err` when --tiers or --degrees come with a figure they do not shape.
    pub fn figure(&self) -> Result<Figure, String> {
        let shaped = self.tiers.is_some() || self.degrees.is_some();
        match self.figure {
            None if shaped => Ok(Figure::Tree),
            None => Ok(Figure::Phase),
            Some(figure) if shaped && figure != Figure::Tree => Err(format!(
                "--tiers and --degrees shape the tree figure, not --figure {}: add --figure tree \
                 or leave them out",
                figure.name()
            )),
            Some(figure) => Ok(figure),
        }
    }
}

/// Runs `phasers bench phaser`.
pub fn run(args: &PhaserArgs) -> Result<(), String> {
    args.measure.check()?;
    match args.figure()? {
        Figure::Phase => run_suite(Suite::Phaser, args),
        Figure::Reduction => run_suite(Suite::Reduction, args),
        Figure::Tree => run_tree(args),
    }
}

/// Runs the rows of `suite` (the phase and reduction figures, and the quick suite's part).
pub fn run_suite(suite: Suite, args: &PhaserArgs) -> Result<(), String> {
    let threads = (args.threads.clone())
        .unwrap_or_else(|| threads::default_thread_counts(phasers::available_cores()));
    let (name, measures) = suite.benchmark();
    let mut sweep = args.measure.sweep(name, threads, suite.contenders());
    sweep.measures = measures;
    sweep.ratios = Box::new(move |_: &[&Row]| suite.ratios());
    sweep.summary = Box::new(move |report: &Report, verbose: bool| {
        listed_lines(report, &suite.ratios(), verbose)
    });
    let report = bench::run(&sweep, &args.output)?;
    files::failures(&report.rows, &[])
}

/// The lines of `ratios` after the tables, one block per thread count.
fn listed_lines(report: &Report, ratios: &[Ratio], verbose: bool) -> Vec<String> {
    at_each(report, |rows, records| {
        let threads = threads_text(rows.first()?.threads);
        let mut heading = format!("{threads}, median ratios (below 1: the first is faster)");
        let best = ratio::pick(rows, &best_barrier());
        heading.extend(best.map(|best| format!("; best barrier: {}", best.label())));
        let records: Vec<_> = records.iter().map(|record| (*record).clone()).collect();
        Some(ratio::lines(&heading, &records, ratios, verbose))
    })
}

const TREE: PhaserConfig = PhaserConfig::TREE;
const FLAT_SUM: PhaserConfig = PhaserConfig::FLAT.with(Reduction::SumI64);
const TREE_SUM: PhaserConfig = TREE.with(Reduction::SumI64);
const FLAT_SUM_F64: PhaserConfig = PhaserConfig::FLAT.with(Reduction::SumF64Reproducible);

/// Every phaser row of these benchmarks, for `phasers list` and the tests.
pub const PHASER_ROWS: [PhaserConfig; 5] =
    [PhaserConfig::FLAT, TREE, FLAT_SUM, TREE_SUM, FLAT_SUM_F64];

/// Our barriers the phasers are held against: `Auto` and the one it picks on small machines;
/// "best barrier" is the faster of the two in this run.
const BEST_BARRIERS: [Algorithm; 2] = [Algorithm::Auto, Algorithm::SenseReversing];

/// The faster of [`BEST_BARRIERS`].
fn best_barrier() -> Pick {
    Pick::FastestNamed(
        BEST_BARRIERS
            .map(|algorithm| algorithm.name().into())
            .into(),
    )
}

/// The rows of a phaser benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// `bench phaser`: flat and tree phasers against our best barriers and OpenMP's barrier.
    Phaser,
    /// `bench reduction`: phasers with accumulators against OpenMP's reduction.
    Reduction,
    /// The quick suite's part: the flat phaser with and without a sum.
    Quick,
}

impl Suite {
    /// The name its report has, and what one iteration costs.
    pub fn benchmark(self) -> (&'static str, &'static str) {
        match self {
            Suite::Phaser => (
                "bench phaser",
                "the cost of one phaser phase (next: signal and wait)",
            ),
            Suite::Reduction => (
                "bench reduction",
                "the cost of one barrier with a sum reduction",
            ),
            Suite::Quick => (
                "quick suite, part 2",
                "the cost of one phaser phase, with and without a sum",
            ),
        }
    }

    /// The rows, in table order: the reference barrier first, as in every report.
    pub fn contenders(self) -> Vec<PhaserRow> {
        let phasers: &[PhaserConfig] = match self {
            Suite::Phaser => &[PhaserConfig::FLAT, TREE],
            Suite::Reduction => &[FLAT_SUM, TREE_SUM, FLAT_SUM_F64],
            Suite::Quick => &[PhaserConfig::FLAT, FLAT_SUM],
        };
        // OpenMP with its default wait policy and as its users tune it (OMP_WAIT_POLICY=active),
        // so that the ratios hold us against whichever is faster here.
        let openmp: &[Contender] = match self {
            Suite::Phaser => &[Contender::OpenMp, Contender::OpenMpActive],
            Suite::Reduction | Suite::Quick => &[
                Contender::OpenMp,
                Contender::OmpReduction,
                Contender::OpenMpActive,
                Contender::OmpReductionActive,
            ],
        };
        let barriers = std::iter::once(Contender::Reference)
            .chain(openmp.iter().copied())
            .chain(BEST_BARRIERS.map(Contender::Phasers));
        (barriers.map(PhaserRow::Barrier))
            .chain(phasers.iter().copied().map(PhaserRow::Phaser))
            .collect()
    }

    /// The ratios printed after the tables: "best barrier" is the faster of [`BEST_BARRIERS`].
    pub fn ratios(self) -> Vec<Ratio> {
        let row = |config: PhaserConfig| Some(PhaserRow::Phaser(config));
        let omp = |contender| Some(PhaserRow::Barrier(contender));
        let pairs = match self {
            Suite::Phaser => vec![
                (row(PhaserConfig::FLAT), None),
                (row(TREE), None),
                (omp(Contender::OpenMp), row(PhaserConfig::FLAT)),
                (omp(Contender::OpenMp), row(TREE)),
                (omp(Contender::OpenMpActive), row(PhaserConfig::FLAT)),
            ],
            Suite::Reduction => vec![
                (row(FLAT_SUM), None),
                (row(TREE_SUM), None),
                (omp(Contender::OmpReduction), row(FLAT_SUM)),
                (omp(Contender::OmpReduction), row(TREE_SUM)),
                (omp(Contender::OmpReductionActive), row(FLAT_SUM)),
                (row(FLAT_SUM_F64), row(FLAT_SUM)),
                (omp(Contender::OmpReduction), omp(Contender::OpenMp)),
            ],
            Suite::Quick => vec![
                (row(PhaserConfig::FLAT), None),
                (row(FLAT_SUM), None),
                (omp(Contender::OmpReduction), row(FLAT_SUM)),
                (omp(Contender::OmpReductionActive), row(FLAT_SUM)),
            ],
        };
        // `None` below the line is the best barrier.
        let side = |side: Option<PhaserRow>| match side {
            Some(contender) => (contender.name().into_owned(), Pick::Named(contender.name())),
            None => ("best barrier".to_owned(), best_barrier()),
        };
        let ratio = |(top, bottom): (Option<PhaserRow>, Option<PhaserRow>)| {
            let ((top, numerator), (bottom, denominator)) = (side(top), side(bottom));
            let label = format!("{top} / {bottom}");
            Ratio {
                label,
                numerator,
                denominator,
            }
        };
        pairs.into_iter().map(ratio).collect()
    }
}

/// The tree figure: every shape of the grid, ending with the matrix of medians.
fn run_tree(args: &PhaserArgs) -> Result<(), String> {
    let threads = (args.threads.clone()).unwrap_or_else(|| DEFAULT_THREADS.to_vec());
    let tiers = (args.tiers.clone()).unwrap_or_else(|| DEFAULT_TIERS.to_vec());
    let degrees = (args.degrees.clone()).unwrap_or_else(|| DEFAULT_DEGREES.to_vec());
    let shapes = shapes(&sorted_unique(tiers), &sorted_unique(degrees));
    let mut sweep = args
        .measure
        .sweep("bench tree", threads, contenders(&shapes));
    sweep.measures = "the cost of one phaser phase, with and without a sum, by tiers and degree";
    sweep.keep = worth_running;
    sweep.ratios = Box::new(|_: &[&Row]| Vec::new());
    sweep.summary = Box::new(move |report: &Report, _: bool| vec![matrix(report, &shapes)]);
    let report = bench::run(&sweep, &args.output)?;
    files::failures(&report.rows, &[])
}

/// The thread counts of the seed's figures, up to the 64 of its first machine.
pub const DEFAULT_THREADS: [usize; 6] = [2, 4, 8, 16, 32, 64];
/// Tiers 3 was already too many for the seed's 128 threads; 4 would add nothing at these counts.
pub const DEFAULT_TIERS: [usize; 3] = [1, 2, 3];
/// The degrees of the seed's figures.
pub const DEFAULT_DEGREES: [usize; 5] = [2, 4, 8, 16, 32];

/// The most tiers `--tiers` accepts: even degree 2 then has more leaves than `MAX_THREADS`.
pub const MAX_TIERS: usize = 13;

/// How many more leaves than threads a tree may have before it is too sparse to be worth a row:
/// a tree whose leaves outnumber its threads fourfold is mostly empty sub-phasers.
const LEAVES_PER_THREAD: usize = 4;

/// Parses one entry of `--tiers`.
pub fn parse_tiers(text: &str) -> Result<usize, String> {
    parse_within(text, 1, MAX_TIERS, "number of tiers")
}

/// Parses one entry of `--degrees`: a leaf of more registrations than the most threads a row may
/// start is never filled.
pub fn parse_degree(text: &str) -> Result<usize, String> {
    parse_within(text, 2, threads::MAX_THREADS, "degree")
}

/// The shapes of the grid, flat first (its degree means nothing, so it appears once), then by
/// tiers and degree.
pub fn shapes(tiers: &[usize], degrees: &[usize]) -> Vec<Shape> {
    let flat = tiers.contains(&1).then_some(Shape::Flat);
    let trees = (tiers.iter().filter(|&&tiers| tiers > 1)).flat_map(|&tiers| {
        degrees
            .iter()
            .map(move |&degree| Shape::Fixed { tiers, degree })
    });
    flat.into_iter().chain(trees).collect()
}

/// The rows: the reference barrier, then each shape without and with a sum.
pub fn contenders(shapes: &[Shape]) -> Vec<PhaserRow> {
    let phasers = shapes.iter().flat_map(|&shape| {
        let barrier = PhaserConfig::barrier(shape);
        [barrier, barrier.with(Reduction::SumI64)].map(PhaserRow::Phaser)
    });
    std::iter::once(PhaserRow::Barrier(Contender::Reference))
        .chain(phasers)
        .collect()
}

/// Whether `contender` is worth running with `threads` threads: every row but a tree with more
/// than [`LEAVES_PER_THREAD`] leaves per thread (`degree^(tiers-1)` leaves, unless it overflows).
pub fn worth_running(contender: PhaserRow, threads: usize) -> bool {
    let PhaserRow::Phaser(PhaserConfig {
        shape: Shape::Fixed { tiers, degree },
        ..
    }) = contender
    else {
        return true;
    };
    let exponent = tiers.checked_sub(1).and_then(|e| u32::try_from(e).ok());
    let leaves = exponent.and_then(|exponent| degree.checked_pow(exponent));
    leaves.is_some_and(|leaves| leaves <= LEAVES_PER_THREAD * threads)
}

/// The matrix the report ends with: for every shape and thread count, the median cost of a phase
/// without and with the sum; `*` marks the fastest shape of each column (by the barrier alone).
pub fn matrix(report: &Report, shapes: &[Shape]) -> String {
    let threads = &report.settings.threads;
    let median = |threads: usize, config: PhaserConfig| {
        let name = PhaserRow::Phaser(config).name();
        let ok =
            |row: &&Row| row.threads == threads && row.contender == name && row.error.is_none();
        report.rows.iter().find(ok).and_then(Row::median)
    };
    let best = |threads: usize| {
        let barrier =
            |&shape: &Shape| Some((shape, median(threads, PhaserConfig::barrier(shape))?));
        let medians = shapes.iter().filter_map(barrier);
        medians
            .min_by(|a, b| f64::total_cmp(&a.1, &b.1))
            .map(|(shape, _)| shape)
    };
    let head = threads.iter().map(|threads| format!("{threads} threads"));
    let mut cells = vec![std::iter::once("(tiers,degree)".to_owned())
        .chain(head)
        .collect()];
    for &shape in shapes {
        let mut line = vec![match shape {
            Shape::Flat => "flat (1)".to_owned(),
            Shape::TableOne => "Table I".to_owned(),
            Shape::Fixed { tiers, degree } => format!("({tiers},{degree})"),
        }];
        for &threads in threads {
            let barrier = PhaserConfig::barrier(shape);
            let sum = barrier.with(Reduction::SumI64);
            let text = |ns: Option<f64>| ns.map_or_else(|| "-".to_owned(), time);
            line.push(match (median(threads, barrier), median(threads, sum)) {
                (None, None) => "-".to_owned(),
                (plain, sum) => {
                    let star = if best(threads) == Some(shape) {
                        "*"
                    } else {
                        ""
                    };
                    format!("{star}{} / {}", text(plain), text(sum))
                }
            });
        }
        cells.push(line);
    }
    format!(
        "median cost per phase by (tiers, degree): next() / send(1) + next(); * the fastest \
         next() at that thread count; - not run (too many leaves for the threads) or failed\n{}",
        aligned(&cells, Last::Number)
    )
}

/// A row of a phaser sweep: one of `bench barrier`'s, or a phaser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaserRow {
    /// A barrier or OpenMP row, measured as `bench barrier` does.
    Barrier(Contender),
    /// One of the library's phasers, with or without an accumulator.
    Phaser(PhaserConfig),
}

impl SweepContender for PhaserRow {
    fn name(self) -> Cow<'static, str> {
        match self {
            PhaserRow::Barrier(contender) => contender.name(),
            PhaserRow::Phaser(config) => config.name(),
        }
    }

    fn kind(self) -> Kind {
        match self {
            PhaserRow::Barrier(contender) => contender.kind(),
            PhaserRow::Phaser(_) => Kind::Ours,
        }
    }

    fn runs_on_openmp(self) -> bool {
        matches!(self, PhaserRow::Barrier(contender) if contender.runs_on_openmp())
    }

    fn measure(self, row: &mut Row, timing: &Timing) {
        let config = match self {
            PhaserRow::Barrier(contender) => return contender.measure(row, timing),
            PhaserRow::Phaser(config) => config,
        };
        let threads = row.threads;
        let watch = Watch::new(&row.contender, threads, timing.hang_after);
        let measured = build(config, threads)
            .map_err(|error| format!("cannot build: {error}"))
            .and_then(|(phaser, registrations)| {
                row.resolved = Some(shape_label(phaser.tiers(), phaser.degree()));
                match config.reduction {
                    None => Ok(timing.threads(registrations, &watch)),
                    Some(Reduction::SumI64) => {
                        let sum = Accumulator::<i64>::new(&phaser, Op::Sum);
                        let expected = i64::try_from(threads).unwrap_or(i64::MAX);
                        with_sum(sum, registrations, (1, expected), timing, &watch)
                    }
                    Some(Reduction::SumF64Reproducible) => {
                        let sum = Accumulator::<f64>::reproducible(&phaser, Op::Sum);
                        with_sum(sum, registrations, (1.0, threads as f64), timing, &watch)
                    }
                }
            });
        match measured {
            Ok(measured) => row.record(measured, &timing.schedule),
            Err(error) => (row.samples_wanted, row.error) = (timing.schedule.samples, Some(error)),
        }
    }
}

/// The tree of sub-phasers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// One tier: every registration signals the same phaser.
    Flat,
    /// The seed's choice for the thread count (its Table I): see [`table_one`].
    TableOne,
    /// These tiers (1 is flat) and degree (children per sub-phaser), the seed's figures 14-15.
    #[allow(missing_docs)]
    Fixed { tiers: usize, degree: usize },
}

/// The accumulator a row sends to before every `next()`, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// `Accumulator<i64>` with `Op::Sum`: EPCC's reduction, `a += 1` on every thread.
    SumI64,
    /// `Accumulator::<f64>::reproducible` with `Op::Sum`: the same bits in any arrival order.
    SumF64Reproducible,
}

/// A phaser row: each thread owns one `SigWait` registration and calls `next()` per iteration,
/// after sending 1 to the accumulator when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PhaserConfig {
    /// The tree.
    pub shape: Shape,
    /// The reduction, if any.
    pub reduction: Option<Reduction>,
}

impl PhaserConfig {
    /// A flat phaser with no reduction: the plain `SigWait` barrier.
    pub const FLAT: PhaserConfig = PhaserConfig::barrier(Shape::Flat);
    /// The phaser with the seed's tree for the thread count, with no reduction.
    pub const TREE: PhaserConfig = PhaserConfig::barrier(Shape::TableOne);

    /// The phaser of `shape` with no reduction.
    pub const fn barrier(shape: Shape) -> PhaserConfig {
        PhaserConfig {
            shape,
            reduction: None,
        }
    }

    /// This phaser with `reduction` riding it.
    pub const fn with(self, reduction: Reduction) -> PhaserConfig {
        PhaserConfig {
            shape: self.shape,
            reduction: Some(reduction),
        }
    }

    /// The row's name: the same at every thread count, so a plot draws one line per config.
    pub fn name(self) -> Cow<'static, str> {
        let shape: Cow<'static, str> = match self.shape {
            Shape::Flat => "phaser flat".into(),
            Shape::TableOne => "phaser tree".into(),
            Shape::Fixed { tiers, degree } => format!("phaser ({tiers},{degree})").into(),
        };
        match self.reduction {
            None => shape,
            Some(Reduction::SumI64) => format!("{shape} + sum i64").into(),
            Some(Reduction::SumF64Reproducible) => format!("{shape} + sum f64 reproducible").into(),
        }
    }

    /// The tiers and degree to ask the builder for with `threads` parties.
    pub fn tiers_and_degree(self, threads: usize) -> (usize, usize) {
        match self.shape {
            Shape::Flat => (1, 1),
            Shape::TableOne => table_one(threads),
            Shape::Fixed { tiers, degree } => (tiers, degree),
        }
    }

    /// A line for `phasers list`.
    pub fn description(self) -> &'static str {
        match (self.shape, self.reduction) {
            (Shape::Flat, None) => "one-tier phaser: each thread a SigWait registration, next()",
            (Shape::TableOne, None) => {
                "hierarchical phaser, (tiers, degree) by the seed's Table I: 2 threads (1,1), \
                 4 (2,2), 8 (2,4), 16 (2,8), 32 and more (2,16)"
            }
            (Shape::Fixed { .. }, None) => "phaser with the (tiers, degree) in its name",
            (_, Some(Reduction::SumI64)) => {
                "the same phaser with an Accumulator<i64> Sum: send(1) then next(); the result \
                 is checked every phase"
            }
            (_, Some(Reduction::SumF64Reproducible)) => {
                "the same phaser with a reproducible Accumulator<f64> Sum (same bits in any \
                 arrival order): send(1.0) then next(); checked every phase"
            }
        }
    }
}

/// The seed's (tiers, degree) for a thread count (its Table I). A count between two rows takes
/// the row below it, so the tree never has more leaves than the seed gave that many threads.
pub fn table_one(threads: usize) -> (usize, usize) {
    match threads {
        32.. => (2, 16),
        16.. => (2, 8),
        8.. => (2, 4),
        4.. => (2, 2),
        _ => (1, 1),
    }
}

/// How a built phaser is labelled in a table: what actually ran.
pub fn shape_label(tiers: usize, degree: usize) -> String {
    match tiers {
        1 => "tiers 1 (flat)".to_owned(),
        _ => format!("tiers {tiers}, degree {degree}"),
    }
}

/// The phaser of `config` and one `SigWait` registration per thread, the creator's first.
pub fn build(config: PhaserConfig, threads: usize) -> phasers::Result<(Phaser, Vec<Registration>)> {
    let (phaser, creator) = create(config, threads)?;
    let mut registrations = vec![creator];
    for _ in 1..threads {
        let child = registrations[0].register(phasers::Mode::SigWait)?;
        registrations.push(child);
    }
    Ok((phaser, registrations))
}

/// The phaser of `config` shaped for `threads` parties, and its creator's `SigWait` registration.
pub fn create(config: PhaserConfig, threads: usize) -> phasers::Result<(Phaser, Registration)> {
    let (tiers, degree) = config.tiers_and_degree(threads);
    let builder = Phaser::builder()
        .mode(phasers::Mode::SigWait)
        .expected_parties(threads)
        .tiers(tiers);
    // A flat phaser has no sub-phasers to give a degree to.
    match tiers {
        1 => builder.build(),
        _ => builder.degree(degree).build(),
    }
}

/// Measures `registrations` each sending `one` to `accumulator` before `next()`; a result other
/// than `expected` fails the row, however fast it was.
fn with_sum<T: Element>(
    accumulator: phasers::Result<Accumulator<T>>,
    registrations: Vec<Registration>,
    (one, expected): (T, T),
    timing: &Timing,
    watch: &Watch,
) -> Result<phasers_cli::harness::engine::Measured, String> {
    let accumulator =
        accumulator.map_err(|error| format!("cannot build the accumulator: {error}"))?;
    let wrong = WrongResult::default();
    let handle = |registration| SumHandle {
        registration,
        accumulator: accumulator.clone(),
        one,
        expected,
        wrong: &wrong,
    };
    let mut measured = timing.threads(registrations.into_iter().map(handle).collect(), watch);
    if let Some(message) = wrong.into_message() {
        // The wrong sum is the root cause of anything that followed.
        measured.error = Some(message);
    }
    Ok(measured)
}

/// One thread's registration and accumulator: `send(one); next()`, then the result is checked.
struct SumHandle<'a, T: Element> {
    registration: Registration,
    accumulator: Accumulator<T>,
    one: T,
    expected: T,
    wrong: &'a WrongResult,
}

impl<T: Element> Work for SumHandle<'_, T> {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        self.accumulator.send(&mut self.registration, self.one)?;
        let phase = self.registration.next()?;
        // The next phase cannot complete before this thread signals it, so the result is still
        // the one of the phase just completed.
        let got = self.accumulator.result();
        if got != self.expected {
            let expected = self.expected;
            self.wrong.record(|| {
                format!("wrong result: the sum of phase {phase} was {got:?}, not {expected:?}")
            });
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benches::barrier::{one_round, report_of, rounds_row};

    fn fixed(tiers: usize, degree: usize) -> PhaserConfig {
        PhaserConfig::barrier(Shape::Fixed { tiers, degree })
    }

    #[test]
    fn every_phaser_row_completes_a_small_row_on_the_tree_asked_for() {
        let small = [
            "--samples",
            "3",
            "--rounds",
            "1",
            "--episodes",
            "50",
            "--mode",
        ];
        for config in PHASER_ROWS {
            for (threads, mode) in [(1, "back-to-back"), (3, "epcc")] {
                let row = one_round(
                    PhaserRow::Phaser(config),
                    threads,
                    &[&small[..], &[mode]].concat(),
                );
                let what = format!("{} x{threads} {mode}", config.name());
                assert_eq!(row.error, None, "{what}");
                assert_eq!(row.raw_ns.len(), 3 + usize::from(mode == "epcc"), "{what}");
                let resolved = row.resolved.unwrap_or_default();
                assert!(resolved.starts_with("tiers"), "{what}");
            }
        }
        let flat = PhaserConfig::FLAT;
        for (config, threads, tiers) in [(flat, 1, 1), (flat, 5, 1), (TREE, 8, 2)] {
            let (phaser, registrations) = build(config, threads).unwrap();
            assert_eq!((phaser.tiers(), phaser.signallers()), (tiers, threads));
            let mut modes = registrations.iter().map(Registration::mode);
            assert!(modes.all(|mode| mode == phasers::Mode::SigWait));
        }
        assert_eq!(
            build(TREE, 8).unwrap().0.degree(),
            4,
            "the seed's (2, 4) for 8 threads"
        );
        let impossible = build(fixed(0, 4), 4);
        assert!(impossible.is_err(), "an impossible tree is an error");
    }

    #[test]
    fn table_one_follows_the_seed_and_names_say_shape_and_reduction() {
        let seed = [
            (1, (1, 1)),
            (3, (1, 1)),
            (4, (2, 2)),
            (6, (2, 2)),
            (8, (2, 4)),
            (12, (2, 4)),
        ];
        for (threads, shape) in
            seed.into_iter()
                .chain([(16, (2, 8)), (31, (2, 8)), (32, (2, 16)), (128, (2, 16))])
        {
            assert_eq!(table_one(threads), shape, "{threads} threads");
        }
        let reproducible = fixed(3, 4).with(Reduction::SumF64Reproducible);
        for (config, name, threads, shape) in [
            (PhaserConfig::FLAT, "phaser flat", 64, (1, 1)),
            (TREE_SUM, "phaser tree + sum i64", 8, (2, 4)),
            (
                reproducible,
                "phaser (3,4) + sum f64 reproducible",
                64,
                (3, 4),
            ),
        ] {
            assert_eq!(
                (config.name().as_ref(), config.tiers_and_degree(threads)),
                (name, shape)
            );
        }
        assert_eq!(
            (shape_label(1, 1), shape_label(2, 16)),
            ("tiers 1 (flat)".into(), "tiers 2, degree 16".into())
        );
    }

    #[test]
    fn every_ratio_names_rows_of_its_suite() {
        for suite in [Suite::Phaser, Suite::Reduction, Suite::Quick] {
            let names: Vec<_> = suite
                .contenders()
                .into_iter()
                .map(PhaserRow::name)
                .collect();
            assert_eq!(names[0], "reference", "{suite:?}");
            for side in suite
                .ratios()
                .into_iter()
                .flat_map(|r| [r.numerator, r.denominator])
            {
                let sides = match side {
                    Pick::Named(name) => vec![name],
                    Pick::FastestNamed(names) => names,
                    other => panic!("{other:?}"),
                };
                assert!(sides.iter().all(|name| names.contains(name)), "{suite:?}");
            }
        }
        let labels: Vec<String> = Suite::Quick.ratios().into_iter().map(|r| r.label).collect();
        let quick = [
            "phaser flat / best barrier",
            "phaser flat + sum i64 / best barrier",
            "omp reduction / phaser flat + sum i64",
            "omp reduction (active) / phaser flat + sum i64",
        ];
        assert_eq!(labels, quick);
    }

    #[test]
    fn listed_ratios_divide_medians_and_name_the_best_barrier() {
        let mut auto = rounds_row("auto", Kind::Ours, 2, &[60.0]);
        auto.resolved = Some("sense-reversing".into());
        let mut failed = rounds_row("phaser tree", Kind::Ours, 2, &[1.0]);
        failed.error = Some("boom".into());
        let mut report = report_of(vec![
            auto,
            rounds_row("sense-reversing", Kind::Ours, 2, &[80.0]),
            rounds_row("phaser flat", Kind::Ours, 2, &[90.0]),
            rounds_row("omp barrier", Kind::Baseline, 2, &[450.0]),
            failed,
        ]);
        let ratios = Suite::Phaser.ratios();
        report.ratios = ratio::records(&report.rows.iter().collect::<Vec<_>>(), &ratios);
        let text = listed_lines(&report, &ratios, true).join("\n");
        let words = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
        let lines: Vec<String> = text.lines().map(words).collect();
        assert_eq!(lines[0], "2 threads, median ratios (below 1: the first is faster); best barrier: auto → sense-reversing");
        assert_eq!(
            lines[1],
            "phaser flat / best barrier 90.0 ns / 60.0 ns = 1.50x (auto)"
        );
        assert!(
            lines[2].starts_with("phaser tree / best barrier not computed*"),
            "{text}"
        );
        assert!(lines[3].ends_with("450 ns / 90.0 ns = 5.00x"), "{text}");
    }

    #[test]
    fn the_grid_has_flat_once_then_every_tree_and_leaves_out_sparse_ones() {
        let grid = [(2, 2), (2, 16), (3, 2), (3, 16)].map(|(t, d)| fixed(t, d).shape);
        assert_eq!(
            shapes(&[1, 2, 3], &[2, 16]),
            [&[Shape::Flat][..], &grid].concat()
        );
        let names: Vec<_> = contenders(&[Shape::Flat])
            .into_iter()
            .map(PhaserRow::name)
            .collect();
        assert_eq!(names, ["reference", "phaser flat", "phaser flat + sum i64"]);
        let row = |tiers, degree| PhaserRow::Phaser(fixed(tiers, degree));
        // 2 threads: up to 8 leaves; 64 threads: up to 256.
        for (tiers, degree, threads, worth) in [
            (2, 8, 2, true),
            (2, 16, 2, false),
            (3, 2, 2, true),
            (3, 4, 2, false),
            (3, 16, 64, true),
            (3, 32, 64, false),
            (64, 1 << 20, 4096, false),
        ] {
            assert_eq!(
                worth_running(row(tiers, degree), threads),
                worth,
                "({tiers},{degree}) x{threads}"
            );
        }
        assert!(worth_running(PhaserRow::Barrier(Contender::Reference), 1));
        assert_eq!(parse_tiers(" 2"), Ok(2));
        assert!(parse_tiers("0").unwrap_err().contains("from 1 to") && parse_tiers("99").is_err());
        assert!(parse_degree("1").unwrap_err().contains("from 2 to") && parse_degree("x").is_err());
    }

    #[test]
    fn the_matrix_marks_the_fastest_shape_per_thread_count() {
        let row = |config: PhaserConfig, threads, median: f64| {
            rounds_row(
                &PhaserRow::Phaser(config).name(),
                Kind::Ours,
                threads,
                &[median],
            )
        };
        let report = report_of(vec![
            row(PhaserConfig::FLAT, 2, 50.0),
            row(FLAT_SUM, 2, 100.0),
            row(PhaserConfig::FLAT, 8, 400.0),
            row(FLAT_SUM, 8, 800.0),
            row(fixed(2, 4), 8, 300.0),
        ]);
        let text = matrix(&report, &[Shape::Flat, fixed(2, 4).shape]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].starts_with("(tiers,degree)") && lines[1].ends_with(" 8 threads"),
            "{text}"
        );
        assert!(lines[2].contains("*50.0 ns / 100 ns") && lines[2].ends_with(" 400 ns / 800 ns"));
        assert!(
            lines[3].contains(" - ") && lines[3].ends_with("*300 ns / -"),
            "{text}"
        );
    }
}
