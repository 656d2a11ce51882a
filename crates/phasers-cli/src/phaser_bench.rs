//! `phasers bench phaser`: seed 000's phaser figures, chosen with `--figure` (EPCC's barrier
//! test, its reduction test, and the tiers x degree sweep), and the phaser part of the quick
//! suite: their rows, and the ratios their reports end with.

use clap::{Parser, ValueEnum};
use phasers::Algorithm;
use phasers_cli::harness::args::sorted_unique;
use phasers_cli::harness::outputs::OutputArgs;
use phasers_cli::harness::threads;

use crate::contender::Contender;
use crate::measure_args::MeasureArgs;
use crate::phaser_config::{PhaserConfig, Reduction};
use crate::ratios::{Ratio, Ratios, Side};
use crate::sweep::Benchmark;
use crate::sweep_command;
use crate::tree;

/// Which of seed 000's figures `bench phaser` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Figure {
    /// EPCC's barrier test: flat and tree phasers (`next()`) against our best barriers and
    /// OpenMP's barrier.
    Phase,
    /// EPCC's reduction test: phasers with a sum accumulator (`send(1); next()`) against
    /// OpenMP's `omp for reduction`; every result is checked (once `bench reduction`).
    Reduction,
    /// Figures 14 and 15: every tiers x degree, with and without a sum, ending with a matrix of
    /// medians (once `bench tree`).
    Tree,
}

impl Figure {
    /// The name `--figure` takes.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Phase => "phase",
            Figure::Reduction => "reduction",
            Figure::Tree => "tree",
        }
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
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = tree::parse_tiers)]
    pub tiers: Option<Vec<usize>>,

    /// Tree figure: degrees (children per sub-phaser, registrations per leaf), comma-separated
    /// [default: 2,4,8,16,32].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = tree::parse_degree)]
    pub degrees: Option<Vec<usize>>,

    #[command(flatten)]
    pub measure: MeasureArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

impl PhaserArgs {
    /// The figure asked for; `Err` when --tiers or --degrees comes with a figure they do not
    /// shape.
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
    let threads = args
        .threads
        .clone()
        .unwrap_or_else(|| threads::default_thread_counts(phasers::available_cores()));
    let mut plan = args
        .measure
        .plan(suite.benchmark(), threads, suite.contenders());
    plan.ratios = suite.ratios();
    let report = sweep_command::run(&plan, &args.output, |_| Vec::new())?;
    sweep_command::failures(&report.groups)
}

/// The tree figure: every shape of the grid, ending with the matrix of medians.
fn run_tree(args: &PhaserArgs) -> Result<(), String> {
    let threads = (args.threads.clone()).unwrap_or_else(|| tree::DEFAULT_THREADS.to_vec());
    let tiers = (args.tiers.clone()).unwrap_or_else(|| tree::DEFAULT_TIERS.to_vec());
    let degrees = (args.degrees.clone()).unwrap_or_else(|| tree::DEFAULT_DEGREES.to_vec());
    let shapes = tree::shapes(&sorted_unique(tiers), &sorted_unique(degrees));
    let mut plan = (args.measure).plan(Benchmark::TREE, threads, tree::contenders(&shapes));
    plan.keep = tree::worth_running;
    let report = sweep_command::run(&plan, &args.output, |report| {
        vec![tree::matrix(report, &shapes)]
    })?;
    sweep_command::failures(&report.groups)
}

const TREE: PhaserConfig = PhaserConfig::TREE;
const FLAT_SUM: PhaserConfig = PhaserConfig::FLAT.with(Reduction::SumI64);
const TREE_SUM: PhaserConfig = TREE.with(Reduction::SumI64);
const FLAT_SUM_F64: PhaserConfig = PhaserConfig::FLAT.with(Reduction::SumF64Reproducible);

/// Every phaser row of these benchmarks, for `phasers list` and the tests.
pub const PHASER_ROWS: [PhaserConfig; 5] =
    [PhaserConfig::FLAT, TREE, FLAT_SUM, TREE_SUM, FLAT_SUM_F64];

/// Our fixed barriers the phasers are held against: `Auto`, and the centralized barrier it picks
/// on small machines, measured side by side so "best barrier" is the better of the two in this run.
const BEST_BARRIERS: [Algorithm; 2] = [Algorithm::Auto, Algorithm::SenseReversing];

/// The rows of a phaser benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// `bench phaser`: flat and tree phasers against our best barriers and OpenMP's barrier.
    Phaser,
    /// `bench reduction`: phasers with accumulators against OpenMP's reduction.
    Reduction,
    /// The quick suite's part: the flat phaser with and without a sum, against our best barriers
    /// and OpenMP's barrier and reduction.
    Quick,
}

impl Suite {
    /// The benchmark its report is of.
    pub fn benchmark(self) -> Benchmark {
        let (name, measures) = match self {
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
        };
        Benchmark { name, measures }
    }

    /// The rows, in table order: the reference barrier first, as in every report.
    pub fn contenders(self) -> Vec<Contender> {
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
        std::iter::once(Contender::Reference)
            .chain(openmp.iter().copied())
            .chain(BEST_BARRIERS.map(Contender::Phasers))
            .chain(phasers.iter().copied().map(Contender::Phaser))
            .collect()
    }

    /// The ratios printed after the tables: "best barrier" is the faster of [`BEST_BARRIERS`].
    pub fn ratios(self) -> Ratios {
        Ratios::Listed {
            ratios: self.listed(),
            barriers: BEST_BARRIERS
                .map(|algorithm| Contender::Phasers(algorithm).name())
                .to_vec(),
        }
    }

    fn listed(self) -> Vec<Ratio> {
        let row = |config: PhaserConfig| Side::Row(config.name());
        let omp = |contender: Contender| Side::Row(contender.name());
        match self {
            Suite::Phaser => vec![
                Ratio::of(row(PhaserConfig::FLAT), Side::BestBarrier),
                Ratio::of(row(TREE), Side::BestBarrier),
                Ratio::of(omp(Contender::OpenMp), row(PhaserConfig::FLAT)),
                Ratio::of(omp(Contender::OpenMp), row(TREE)),
                Ratio::of(omp(Contender::OpenMpActive), row(PhaserConfig::FLAT)),
            ],
            Suite::Reduction => vec![
                Ratio::of(row(FLAT_SUM), Side::BestBarrier),
                Ratio::of(row(TREE_SUM), Side::BestBarrier),
                Ratio::of(omp(Contender::OmpReduction), row(FLAT_SUM)),
                Ratio::of(omp(Contender::OmpReduction), row(TREE_SUM)),
                Ratio::of(omp(Contender::OmpReductionActive), row(FLAT_SUM)),
                Ratio::of(row(FLAT_SUM_F64), row(FLAT_SUM)),
                Ratio::of(omp(Contender::OmpReduction), omp(Contender::OpenMp)),
            ],
            Suite::Quick => vec![
                Ratio::of(row(PhaserConfig::FLAT), Side::BestBarrier),
                Ratio::of(row(FLAT_SUM), Side::BestBarrier),
                Ratio::of(omp(Contender::OmpReduction), row(FLAT_SUM)),
                Ratio::of(omp(Contender::OmpReductionActive), row(FLAT_SUM)),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn every_ratio_names_rows_of_its_suite() {
        for suite in [Suite::Phaser, Suite::Reduction, Suite::Quick] {
            let names: Vec<Cow<'static, str>> = suite
                .contenders()
                .into_iter()
                .map(Contender::name)
                .collect();
            assert_eq!(names[0], "reference", "{suite:?}");
            let Ratios::Listed { ratios, barriers } = suite.ratios() else {
                panic!("{suite:?} lists its ratios")
            };
            for ratio in ratios {
                for side in [ratio.numerator, ratio.denominator] {
                    if let Side::Row(name) = side {
                        assert!(names.contains(&name), "{suite:?}: {name}");
                    }
                }
            }
            for name in barriers {
                assert!(names.contains(&name), "{suite:?}: {name}");
            }
        }
    }

    #[test]
    fn the_quick_suite_prints_the_three_ratios_asked_for_and_tuned_openmp() {
        let ratios = Suite::Quick.listed();
        let text: Vec<String> = ratios
            .iter()
            .map(|ratio| format!("{:?} / {:?}", ratio.numerator, ratio.denominator))
            .collect();
        assert_eq!(text.len(), 4);
        assert!(text[0].contains("phaser flat") && text[0].contains("BestBarrier"));
        assert!(text[1].contains("phaser flat + sum i64") && text[1].contains("BestBarrier"));
        assert!(text[2].starts_with("Row(\"omp reduction\")"));
        assert!(text[3].starts_with("Row(\"omp reduction (active)\")"));
    }
}
