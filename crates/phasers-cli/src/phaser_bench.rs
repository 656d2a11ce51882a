//! What `bench phaser`, `bench reduction` and the phaser part of the quick suite compare: their
//! rows, and the ratios their reports end with.

use phasers::Algorithm;

use crate::contender::Contender;
use crate::phaser_config::{PhaserConfig, Reduction};
use crate::ratios::{Ratio, Ratios, Side};
use crate::sweep::Benchmark;

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
