//! Which phaser a row measures: its shape (flat, the seed's tree for the thread count, or a fixed
//! tiers × degree) and the reduction riding it, if any. Pure description; `phaser_row` builds it.

use std::borrow::Cow;

/// The tree of sub-phasers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// One tier: every registration signals the same phaser.
    Flat,
    /// The seed's choice for the thread count (its Table I): see [`table_one`].
    TableOne,
    /// The given tiers and degree, whatever the thread count (the sweep of the seed's figures 14
    /// and 15).
    Fixed {
        /// Levels of sub-phasers; 1 is flat.
        tiers: usize,
        /// Children per sub-phaser, registrations per leaf.
        degree: usize,
    },
}

/// The accumulator a row sends to before every `next()`, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// `Accumulator<i64>` with `Op::Sum`: EPCC's reduction, `a += 1` on every thread.
    SumI64,
    /// `Accumulator::<f64>::reproducible` with `Op::Sum`: the same, in floating point, with the
    /// same bits whatever the order the threads arrive in.
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

/// The seed's (tiers, degree) for a thread count (its Table I): 2 threads (1,1), 4 (2,2),
/// 8 (2,4), 16 (2,8), 32 and more (2,16). A count between two rows takes the row below it, so the
/// tree never has more leaves than the seed gave that many threads; 1 thread is flat.
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
    if tiers == 1 {
        "tiers 1 (flat)".to_owned()
    } else {
        format!("tiers {tiers}, degree {degree}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_one_follows_the_seed() {
        let rows: Vec<(usize, (usize, usize))> = [1, 2, 3, 4, 6, 8, 12, 16, 31, 32, 64, 128]
            .into_iter()
            .map(|threads| (threads, table_one(threads)))
            .collect();
        assert_eq!(
            rows,
            vec![
                (1, (1, 1)),
                (2, (1, 1)),
                (3, (1, 1)),
                (4, (2, 2)),
                (6, (2, 2)),
                (8, (2, 4)),
                (12, (2, 4)),
                (16, (2, 8)),
                (31, (2, 8)),
                (32, (2, 16)),
                (64, (2, 16)),
                (128, (2, 16)),
            ]
        );
    }

    #[test]
    fn names_say_shape_and_reduction() {
        assert_eq!(PhaserConfig::FLAT.name(), "phaser flat");
        let tree = PhaserConfig::TREE;
        assert_eq!(tree.name(), "phaser tree");
        assert_eq!(tree.with(Reduction::SumI64).name(), "phaser tree + sum i64");
        let fixed = PhaserConfig {
            shape: Shape::Fixed {
                tiers: 3,
                degree: 4,
            },
            reduction: Some(Reduction::SumF64Reproducible),
        };
        assert_eq!(fixed.name(), "phaser (3,4) + sum f64 reproducible");
        assert_eq!(fixed.tiers_and_degree(64), (3, 4));
        assert_eq!(tree.tiers_and_degree(8), (2, 4));
        assert_eq!(PhaserConfig::FLAT.tiers_and_degree(64), (1, 1));
    }

    #[test]
    fn labels_say_what_ran() {
        assert_eq!(shape_label(1, 1), "tiers 1 (flat)");
        assert_eq!(shape_label(2, 16), "tiers 2, degree 16");
    }
}
