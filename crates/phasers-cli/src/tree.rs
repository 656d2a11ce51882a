//! The tree figure of `bench phaser` (`--figure tree`, once `bench tree`): the (tiers, degree)
//! sweep of the seed's figures 14 and 15. Every shape runs EPCC's barrier (`next()`) and barrier
//! with reduction (`send(1); next()`) at every thread count, and the report ends with one matrix
//! of medians, shapes down and thread counts across.

use phasers_cli::harness::args::parse_within;

use crate::contender::Contender;
use crate::phaser_config::{PhaserConfig, Reduction, Shape};
use crate::results::{Group, Report};
use phasers_cli::harness::table::{aligned, time, Last};

/// The thread counts of the seed's figures, up to the 64 of its first machine.
pub const DEFAULT_THREADS: [usize; 6] = [2, 4, 8, 16, 32, 64];
/// Tiers 3 was already too many for the seed's 128 threads; 4 would add nothing at these counts.
pub const DEFAULT_TIERS: [usize; 3] = [1, 2, 3];
/// The degrees of the seed's figures.
pub const DEFAULT_DEGREES: [usize; 5] = [2, 4, 8, 16, 32];

/// The most tiers `--tiers` accepts: even degree 2 then has more leaves than `MAX_THREADS`.
pub const MAX_TIERS: usize = 13;
/// The largest degree `--degrees` accepts: a leaf of more registrations than the most threads a
/// row may start is never filled.
pub const MAX_DEGREE: usize = phasers_cli::harness::threads::MAX_THREADS;

/// How many more leaves than threads a tree may have before it is too sparse to be worth a row:
/// a tree whose leaves outnumber its threads fourfold is mostly empty sub-phasers.
const LEAVES_PER_THREAD: usize = 4;

/// Parses one entry of `--tiers`.
pub fn parse_tiers(text: &str) -> Result<usize, String> {
    parse_within(text, 1, MAX_TIERS, "number of tiers")
}

/// Parses one entry of `--degrees`.
pub fn parse_degree(text: &str) -> Result<usize, String> {
    parse_within(text, 2, MAX_DEGREE, "degree")
}

/// The shapes of the grid, flat first (its degree means nothing, so it appears once), then by
/// tiers and degree.
pub fn shapes(tiers: &[usize], degrees: &[usize]) -> Vec<Shape> {
    let mut shapes = Vec::new();
    if tiers.contains(&1) {
        shapes.push(Shape::Flat);
    }
    for &tiers in tiers.iter().filter(|&&tiers| tiers > 1) {
        for &degree in degrees {
            shapes.push(Shape::Fixed { tiers, degree });
        }
    }
    shapes
}

/// The rows: the reference barrier, then each shape without and with a sum.
pub fn contenders(shapes: &[Shape]) -> Vec<Contender> {
    std::iter::once(Contender::Reference)
        .chain(shapes.iter().flat_map(|&shape| {
            let barrier = PhaserConfig::barrier(shape);
            [barrier, barrier.with(Reduction::SumI64)].map(Contender::Phaser)
        }))
        .collect()
}

/// Whether `contender` is worth running with `threads` threads: every row but a tree with more
/// than [`LEAVES_PER_THREAD`] leaves per thread (`degree^(tiers-1)` leaves).
pub fn worth_running(contender: Contender, threads: usize) -> bool {
    match contender {
        Contender::Phaser(PhaserConfig {
            shape: Shape::Fixed { tiers, degree },
            ..
        }) => leaves(tiers, degree).is_some_and(|leaves| leaves <= LEAVES_PER_THREAD * threads),
        _ => true,
    }
}

/// `degree^(tiers - 1)`, unless it overflows.
fn leaves(tiers: usize, degree: usize) -> Option<usize> {
    let exponent = u32::try_from(tiers.checked_sub(1)?).ok()?;
    degree.checked_pow(exponent)
}

/// The matrix the report ends with: for every shape and thread count, the median cost of a phase
/// without and with the sum; `*` marks the fastest shape of each column (by the barrier alone).
pub fn matrix(report: &Report, shapes: &[Shape]) -> String {
    let groups = &report.groups;
    let median = |group: &Group, config: PhaserConfig| {
        group
            .row(&Contender::Phaser(config).name())
            .and_then(|row| row.median())
    };
    let best: Vec<Option<Shape>> = groups
        .iter()
        .map(|group| {
            shapes
                .iter()
                .filter_map(|&shape| Some((shape, median(group, PhaserConfig::barrier(shape))?)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(shape, _)| shape)
        })
        .collect();
    let mut cells: Vec<Vec<String>> = vec![std::iter::once("(tiers,degree)".to_owned())
        .chain(
            groups
                .iter()
                .map(|group| format!("{} threads", group.threads)),
        )
        .collect()];
    for &shape in shapes {
        let mut line = vec![shape_name(shape)];
        for (group, best) in groups.iter().zip(&best) {
            let cell = match (
                median(group, PhaserConfig::barrier(shape)),
                median(group, PhaserConfig::barrier(shape).with(Reduction::SumI64)),
            ) {
                (None, None) => "-".to_owned(),
                (plain, sum) => format!(
                    "{}{} / {}",
                    if *best == Some(shape) { "*" } else { "" },
                    plain.map_or_else(|| "-".to_owned(), time),
                    sum.map_or_else(|| "-".to_owned(), time),
                ),
            };
            line.push(cell);
        }
        cells.push(line);
    }
    format!(
        "median cost per phase by (tiers, degree): next() / send(1) + next(); * the fastest \
         next() at that thread count; - not run (too many leaves for the threads) or failed\n{}",
        aligned(&cells, Last::Number)
    )
}

fn shape_name(shape: Shape) -> String {
    match shape {
        Shape::Flat => "flat (1)".to_owned(),
        Shape::TableOne => "Table I".to_owned(),
        Shape::Fixed { tiers, degree } => format!("({tiers},{degree})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::{self, report_of};
    use phasers_cli::harness::row::RowKind;

    fn fixed(tiers: usize, degree: usize) -> Shape {
        Shape::Fixed { tiers, degree }
    }

    #[test]
    fn the_grid_has_flat_once_then_every_tree() {
        assert_eq!(
            shapes(&[1, 2, 3], &[2, 16]),
            vec![
                Shape::Flat,
                fixed(2, 2),
                fixed(2, 16),
                fixed(3, 2),
                fixed(3, 16)
            ]
        );
        assert_eq!(shapes(&[2], &[4]), vec![fixed(2, 4)]);
        let rows = contenders(&[Shape::Flat]);
        let names: Vec<_> = rows.into_iter().map(Contender::name).collect();
        assert_eq!(names, ["reference", "phaser flat", "phaser flat + sum i64"]);
    }

    #[test]
    fn options_parse_or_explain() {
        assert_eq!(parse_tiers(" 2"), Ok(2));
        assert!(parse_tiers("0").unwrap_err().contains("from 1 to"));
        assert!(parse_tiers("99").is_err());
        assert_eq!(parse_degree("16"), Ok(16));
        assert!(parse_degree("1").unwrap_err().contains("from 2 to"));
        assert!(parse_degree("x").is_err());
    }

    #[test]
    fn sparse_trees_are_left_out() {
        let row = |tiers, degree| Contender::Phaser(PhaserConfig::barrier(fixed(tiers, degree)));
        // 2 threads: up to 8 leaves.
        assert!(worth_running(row(2, 8), 2));
        assert!(!worth_running(row(2, 16), 2));
        assert!(worth_running(row(3, 2), 2));
        assert!(!worth_running(row(3, 4), 2));
        // 64 threads: up to 256 leaves.
        assert!(worth_running(row(3, 16), 64));
        assert!(!worth_running(row(3, 32), 64));
        // Flat, the reference and a tree too deep to count are decided without overflow.
        assert!(worth_running(Contender::Phaser(PhaserConfig::FLAT), 1));
        assert!(worth_running(Contender::Reference, 1));
        assert!(!worth_running(row(64, 1 << 20), 4096));
    }

    #[test]
    fn the_matrix_marks_the_fastest_shape_per_thread_count() {
        let row = |config: PhaserConfig, median: f64| {
            fixtures::row(&Contender::Phaser(config).name(), RowKind::Ours, &[median])
        };
        let tree = PhaserConfig::barrier(fixed(2, 4));
        let group = |threads, flat: f64, tree_ns: Option<f64>| {
            let flat_sum = PhaserConfig::FLAT.with(Reduction::SumI64);
            let rows = [
                Some(row(PhaserConfig::FLAT, flat)),
                Some(row(flat_sum, flat * 2.0)),
                tree_ns.map(|ns| row(tree, ns)),
            ];
            fixtures::group(threads, false, rows.into_iter().flatten().collect())
        };
        let report = report_of(vec![group(2, 50.0, None), group(8, 400.0, Some(300.0))]);
        let text = matrix(&report, &[Shape::Flat, fixed(2, 4)]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("(tiers,degree)"), "{text}");
        assert!(lines[1].contains(" 2 threads ") && lines[1].ends_with(" 8 threads"));
        assert!(lines[2].starts_with("flat (1)"), "{text}");
        assert!(lines[2].contains("*50.0 ns / 100 ns"), "{text}");
        assert!(lines[2].ends_with(" 400 ns / 800 ns"), "{text}");
        assert!(
            lines[3].contains(" -  ") || lines[3].contains(" - "),
            "{text}"
        );
        assert!(lines[3].ends_with("*300 ns / -"), "{text}");
    }
}
