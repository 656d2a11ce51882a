//! `phasers bench phaser`: seed 000's phaser figures (`--figure`) and the quick suite's phaser
//! part, each a sweep of `bench barrier` with its own rows and ratios. The tree figure ends with a
//! matrix of medians, shapes down and thread counts across.

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
    /// The name `--figure` takes: the variant's, in lower case.
    pub fn name(self) -> String {
        format!("{self:?}").to_lowercase()
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
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = |text: &str| parse_within(text, 1, MAX_TIERS, "number of tiers"))]
    pub tiers: Option<Vec<usize>>,

    /// Tree figure: degrees (children per sub-phaser, registrations per leaf), comma-separated
    /// [default: 2,4,8,16,32].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = |text: &str| parse_within(text, 2, threads::MAX_THREADS, "degree"))]
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

/// Runs the rows of `suite`.
pub fn run_suite(suite: Suite, args: &PhaserArgs) -> Result<(), String> {
    let threads = (args.threads.clone())
        .unwrap_or_else(|| threads::default_thread_counts(phasers::available_cores()));
    let (name, measures, contenders, ratios) = suite.plan();
    let mut sweep = args.measure.sweep(name, threads, contenders);
    sweep.measures = measures;
    let listed = ratios.clone();
    sweep.ratios = Box::new(move |_: &[&Row]| ratios.clone());
    sweep.summary =
        Box::new(move |report: &Report, verbose| listed_lines(report, &listed, verbose));
    files::failures(&bench::run(&sweep, &args.output)?.rows, &[])
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

/// A flat phaser with no reduction: the plain `SigWait` barrier.
pub const FLAT: PhaserConfig = PhaserConfig::barrier(Shape::Flat);
/// The phaser with the seed's tree for the thread count, with no reduction.
pub const TREE: PhaserConfig = PhaserConfig::barrier(Shape::TableOne);
const FLAT_SUM: PhaserConfig = FLAT.with(Reduction::SumI64);
const TREE_SUM: PhaserConfig = TREE.with(Reduction::SumI64);
const FLAT_SUM_F64: PhaserConfig = FLAT.with(Reduction::SumF64Reproducible);

/// Every phaser row of these benchmarks, for `phasers list` and the tests.
pub const PHASER_ROWS: [PhaserConfig; 5] = [FLAT, TREE, FLAT_SUM, TREE_SUM, FLAT_SUM_F64];

/// Our barriers the phasers are held against: `Auto` and the one it picks on small machines;
/// "best barrier" is the faster of the two in this run.
const BEST_BARRIERS: [Algorithm; 2] = [Algorithm::Auto, Algorithm::SenseReversing];

/// The faster of [`BEST_BARRIERS`].
fn best_barrier() -> Pick {
    Pick::FastestNamed(BEST_BARRIERS.map(|a| a.name().into()).into())
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
    /// Its report's name, what one iteration costs, its rows (the reference first) and ratios.
    pub fn plan(self) -> (&'static str, &'static str, Vec<PhaserRow>, Vec<Ratio>) {
        use Contender::{OmpReduction, OmpReductionActive, OpenMp, OpenMpActive};
        let row = |config| Some(PhaserRow::Phaser(config));
        let omp = |contender| Some(PhaserRow::Barrier(contender));
        // OpenMP with its default wait policy and as its users tune it (OMP_WAIT_POLICY=active),
        // so that the ratios hold us against whichever is faster here; `None` is the best barrier.
        let sums = vec![OpenMp, OmpReduction, OpenMpActive, OmpReductionActive];
        let (name, measures, phasers, openmp, pairs) = match self {
            Suite::Phaser => (
                "bench phaser",
                "the cost of one phaser phase (next: signal and wait)",
                vec![FLAT, TREE],
                vec![OpenMp, OpenMpActive],
                vec![
                    (row(FLAT), None),
                    (row(TREE), None),
                    (omp(OpenMp), row(FLAT)),
                    (omp(OpenMp), row(TREE)),
                    (omp(OpenMpActive), row(FLAT)),
                ],
            ),
            Suite::Reduction => (
                "bench reduction",
                "the cost of one barrier with a sum reduction",
                vec![FLAT_SUM, TREE_SUM, FLAT_SUM_F64],
                sums,
                vec![
                    (row(FLAT_SUM), None),
                    (row(TREE_SUM), None),
                    (omp(OmpReduction), row(FLAT_SUM)),
                    (omp(OmpReduction), row(TREE_SUM)),
                    (omp(OmpReductionActive), row(FLAT_SUM)),
                    (row(FLAT_SUM_F64), row(FLAT_SUM)),
                    (omp(OmpReduction), omp(OpenMp)),
                ],
            ),
            Suite::Quick => (
                "quick suite, part 2",
                "the cost of one phaser phase, with and without a sum",
                vec![FLAT, FLAT_SUM],
                sums,
                vec![
                    (row(FLAT), None),
                    (row(FLAT_SUM), None),
                    (omp(OmpReduction), row(FLAT_SUM)),
                    (omp(OmpReductionActive), row(FLAT_SUM)),
                ],
            ),
        };
        let barriers = std::iter::once(Contender::Reference)
            .chain(openmp)
            .chain(BEST_BARRIERS.map(Contender::Phasers));
        let rows = (barriers.map(PhaserRow::Barrier))
            .chain(phasers.into_iter().map(PhaserRow::Phaser))
            .collect();
        let side = |side: Option<PhaserRow>| match side {
            Some(row) => (row.name().into_owned(), Pick::Named(row.name())),
            None => ("best barrier".to_owned(), best_barrier()),
        };
        let ratio = |(top, bottom)| {
            let ((top, numerator), (bottom, denominator)) = (side(top), side(bottom));
            Ratio {
                label: format!("{top} / {bottom}"),
                numerator,
                denominator,
            }
        };
        (name, measures, rows, pairs.into_iter().map(ratio).collect())
    }
}

/// The tree figure: every shape of the grid, ending with the matrix of medians.
fn run_tree(args: &PhaserArgs) -> Result<(), String> {
    // The seed's thread counts, up to the 64 of its first machine, and its degrees; tiers 3 was
    // already too many for its 128 threads, 4 would add nothing at these counts.
    let threads = (args.threads.clone()).unwrap_or_else(|| vec![2, 4, 8, 16, 32, 64]);
    let tiers = (args.tiers.clone()).unwrap_or_else(|| vec![1, 2, 3]);
    let degrees = (args.degrees.clone()).unwrap_or_else(|| vec![2, 4, 8, 16, 32]);
    let shapes = shapes(&sorted_unique(tiers), &sorted_unique(degrees));
    // The reference barrier, then each shape without and with a sum.
    let phasers = shapes.iter().flat_map(|&shape| {
        let barrier = PhaserConfig::barrier(shape);
        [barrier, barrier.with(Reduction::SumI64)].map(PhaserRow::Phaser)
    });
    let rows = std::iter::once(PhaserRow::Barrier(Contender::Reference)).chain(phasers);
    let mut sweep = args.measure.sweep("bench tree", threads, rows.collect());
    sweep.measures = "the cost of one phaser phase, with and without a sum, by tiers and degree";
    sweep.keep = worth_running;
    sweep.ratios = Box::new(|_: &[&Row]| Vec::new());
    sweep.summary = Box::new(move |report: &Report, _: bool| vec![matrix(report, &shapes)]);
    files::failures(&bench::run(&sweep, &args.output)?.rows, &[])
}

/// The most tiers `--tiers` accepts: even degree 2 then has more leaves than `MAX_THREADS`.
pub const MAX_TIERS: usize = 13;

/// The grid: flat once (its degree means nothing), then each tiers by each degree.
pub fn shapes(tiers: &[usize], degrees: &[usize]) -> Vec<Shape> {
    let mut shapes = Vec::from_iter(tiers.contains(&1).then_some(Shape::Flat));
    for &tiers in tiers.iter().filter(|&&tiers| tiers > 1) {
        shapes.extend(degrees.iter().map(|&degree| Shape::Fixed { tiers, degree }));
    }
    shapes
}

/// Whether `contender` is worth running with `threads` threads: every row but a tree with more
/// than 4 leaves per thread (`degree^(tiers-1)` leaves), which is mostly empty sub-phasers.
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
    leaves.is_some_and(|leaves| leaves <= 4 * threads)
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
        let fastest = medians.min_by(|a, b| f64::total_cmp(&a.1, &b.1));
        fastest.map(|(shape, _)| shape)
    };
    let best: Vec<Option<Shape>> = threads.iter().map(|&threads| best(threads)).collect();
    let mut head = vec!["(tiers,degree)".to_owned()];
    head.extend(threads.iter().map(|threads| format!("{threads} threads")));
    let mut cells = vec![head];
    for &shape in shapes {
        let mut line = vec![match shape {
            Shape::Flat => "flat (1)".to_owned(),
            Shape::TableOne => "Table I".to_owned(),
            Shape::Fixed { tiers, degree } => format!("({tiers},{degree})"),
        }];
        for (&threads, best) in threads.iter().zip(&best) {
            let barrier = PhaserConfig::barrier(shape);
            let sum = barrier.with(Reduction::SumI64);
            let text = |ns: Option<f64>| ns.map_or_else(|| "-".to_owned(), time);
            line.push(match (median(threads, barrier), median(threads, sum)) {
                (None, None) => "-".to_owned(),
                (plain, sum) => {
                    let star = if *best == Some(shape) { "*" } else { "" };
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
        timing.record(row, measured);
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

/// A phaser row: per iteration, each thread's `SigWait` registration sends 1 if it sums, `next()`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PhaserConfig {
    /// The tree.
    pub shape: Shape,
    /// The reduction, if any.
    pub reduction: Option<Reduction>,
}

impl PhaserConfig {
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
    let children = creator.register_many(phasers::Mode::SigWait, threads.saturating_sub(1))?;
    Ok((phaser, std::iter::once(creator).chain(children).collect()))
}

/// The phaser of `config` shaped for `threads` parties, and its creator's `SigWait` registration.
pub fn create(config: PhaserConfig, threads: usize) -> phasers::Result<(Phaser, Registration)> {
    let (tiers, degree) = match config.shape {
        Shape::Flat => (1, 1),
        Shape::TableOne => table_one(threads),
        Shape::Fixed { tiers, degree } => (tiers, degree),
    };
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

/// Measures `registrations` sending `one` before each `next()`; a sum but `expected` fails the row.
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
    // The wrong sum is the root cause of anything that followed.
    measured.error = wrong.into_message().or(measured.error);
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
    use crate::benches::barrier::{report_of, rounds_row};

    fn fixed(tiers: usize, degree: usize) -> PhaserConfig {
        PhaserConfig::barrier(Shape::Fixed { tiers, degree })
    }

    // tests/smoke.rs runs every row of PHASER_ROWS clean and checks their names and trees.
    #[test]
    fn table_one_follows_the_seed_and_builds_what_it_says() {
        let counts = [1, 3, 4, 6, 8, 12, 16, 31, 32, 128];
        let seed = counts.map(|threads| format!("{:?}", table_one(threads)));
        let wanted = "(1, 1) (1, 1) (2, 2) (2, 2) (2, 4) (2, 4) (2, 8) (2, 8) (2, 16) (2, 16)";
        assert_eq!(seed.join(" "), wanted);
        let (phaser, registrations) = build(TREE, 8).unwrap();
        let shape = (phaser.tiers(), phaser.degree(), phaser.signallers());
        assert_eq!(shape, (2, 4, 8), "the seed's (2, 4)");
        let mut modes = registrations.iter().map(Registration::mode);
        assert!(modes.all(|mode| mode == phasers::Mode::SigWait));
        assert!(build(fixed(0, 4), 4).is_err(), "an impossible tree");
    }

    #[test]
    fn every_ratio_names_rows_of_its_suite() {
        for suite in [Suite::Phaser, Suite::Reduction, Suite::Quick] {
            let (_, _, rows, ratios) = suite.plan();
            let names: Vec<_> = rows.into_iter().map(PhaserRow::name).collect();
            assert_eq!(names[0], "reference", "{suite:?}");
            let sides = ratios
                .into_iter()
                .flat_map(|r| [r.numerator, r.denominator]);
            for side in sides {
                let sides = match side {
                    Pick::Named(name) => vec![name],
                    Pick::FastestNamed(names) => names,
                    other => panic!("{other:?}"),
                };
                assert!(sides.iter().all(|name| names.contains(name)), "{suite:?}");
            }
        }
    }

    #[test]
    fn listed_ratios_name_the_best_barrier() {
        let mut auto = rounds_row("auto", Kind::Ours, 2, &[60.0]);
        auto.resolved = Some("sense-reversing".into());
        let flat = rounds_row("phaser flat", Kind::Ours, 2, &[90.0]);
        let mut report = report_of(vec![auto, flat]);
        let ratios = Suite::Phaser.plan().3;
        report.ratios = ratio::records(&report.rows.iter().collect::<Vec<_>>(), &ratios);
        let text = listed_lines(&report, &ratios, true).join("\n");
        let [heading, flat] = [0, 1].map(|i| text.lines().nth(i).unwrap_or_default());
        assert!(heading.ends_with("best barrier: auto → sense-reversing"));
        assert!(flat.contains("90.0 ns / 60.0 ns = 1.50x"), "{text}");
        assert!(flat.ends_with("(auto)"), "{text}");
    }

    #[test]
    fn the_grid_keeps_trees_of_at_most_four_leaves_per_thread() {
        let grid = [Shape::Flat, fixed(2, 2).shape, fixed(3, 2).shape];
        assert_eq!(shapes(&[1, 2, 3], &[2]), grid);
        for (tiers, degree, threads, worth) in [
            (2, 8, 2, true),
            (2, 16, 2, false),
            (3, 16, 64, true),
            (3, 32, 64, false),
            (64, 1 << 20, 4096, false),
        ] {
            let row = PhaserRow::Phaser(fixed(tiers, degree));
            assert_eq!(worth_running(row, threads), worth, "{row:?} x{threads}");
        }
    }

    #[test]
    fn the_matrix_marks_the_fastest_shape_per_thread_count() {
        let row = |config: PhaserConfig, threads, median: f64| {
            rounds_row(&config.name(), Kind::Ours, threads, &[median])
        };
        let report = report_of(vec![
            row(FLAT, 2, 50.0),
            row(FLAT_SUM, 2, 100.0),
            row(FLAT, 8, 400.0),
            row(FLAT_SUM, 8, 800.0),
            row(fixed(2, 4), 8, 300.0),
        ]);
        let text = matrix(&report, &[Shape::Flat, fixed(2, 4).shape]);
        let [flat, tree] = [2, 3].map(|i| text.lines().nth(i).unwrap_or_default());
        assert!(flat.contains("*50.0 ns / 100 ns"), "{text}");
        assert!(flat.ends_with(" 400 ns / 800 ns"), "{text}");
        assert!(
            tree.contains(" - ") && tree.ends_with("*300 ns / -"),
            "{text}"
        );
    }
}
