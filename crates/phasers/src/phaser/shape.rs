//! The shape of the sub-phaser tree: `tiers` levels, each sub-phaser with up to `degree` children.
//!
//! Sub-phasers are numbered level by level from the root (0), so the tree lives in one array and a
//! parent is found by arithmetic. Registrations sit on the leaves, the last level.

use crate::error::{Error, Result};

/// The most sub-phasers a [`Phaser`](crate::Phaser) tree may have: `1 + degree + degree^2 + ...
/// + degree^(tiers - 1)` must not exceed it.
///
/// Each sub-phaser costs about 160 bytes, and each [`Accumulator`](crate::Accumulator) on the
/// phaser 128 more, so the largest tree takes about 10 MiB plus 8 MiB per accumulator. It already
/// has tens of thousands of leaves, more than any machine has threads to register on them: a tree
/// beyond it is a mistake in the arguments (a swapped `tiers` and `degree`, say), refused with
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) rather than allocated. With degree 2
/// it allows up to 16 tiers; with 2 tiers, a degree up to 65,535; with degree 16 (the seed's
/// best), up to 4 tiers.
///
/// ```
/// use phasers::phaser::MAX_SUB_PHASERS;
/// use phasers::{Error, Phaser};
///
/// // 16 tiers of degree 2: 2^16 - 1 sub-phasers, within the limit.
/// let (phaser, mut creator) = Phaser::builder().tiers(16).degree(2).build()?;
/// assert_eq!(creator.next()?, 0);
/// // One tier more would need 2^17 - 1 of them.
/// let err = Phaser::builder().tiers(17).degree(2).build().unwrap_err();
/// assert!(matches!(err, Error::InvalidArgument { .. }));
/// assert!(err.to_string().contains(&MAX_SUB_PHASERS.to_string()));
/// # drop(phaser);
/// # Ok::<(), phasers::Error>(())
/// ```
pub const MAX_SUB_PHASERS: usize = 1 << 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    tiers: usize,
    degree: usize,
    nodes: usize,
    first_leaf: usize,
}

impl Shape {
    pub(crate) fn new(tiers: usize, degree: usize) -> Result<Self> {
        if tiers == 0 {
            return Err(Error::invalid(
                "a phaser needs at least 1 tier (tiers = 1 is a flat phaser); got tiers = 0",
            ));
        }
        if degree < 2 {
            return Err(Error::invalid(format!(
                "degree = {degree}: a sub-phaser needs room for at least 2 children or \
                 registrations; use degree >= 2 (the seed's best was 16)"
            )));
        }
        // Every tier at least doubles the level's width, so the count passes the limit within
        // about log2(MAX_SUB_PHASERS) tiers: the loop stops there, however many tiers were asked.
        let mut nodes = 0usize;
        let mut level = 1usize;
        let mut first_leaf = 0;
        for _ in 0..tiers {
            first_leaf = nodes;
            nodes = nodes.saturating_add(level);
            if nodes > MAX_SUB_PHASERS {
                return Err(Error::invalid(format!(
                    "tiers = {tiers} and degree = {degree} make more than {MAX_SUB_PHASERS} \
                     sub-phasers (phasers::phaser::MAX_SUB_PHASERS); use fewer tiers or a smaller \
                     degree (2 tiers of degree 16 serve 256 tasks with 17 sub-phasers)"
                )));
            }
            level = level.saturating_mul(degree);
        }
        Ok(Shape {
            tiers,
            degree,
            nodes,
            first_leaf,
        })
    }

    pub(crate) fn tiers(self) -> usize {
        self.tiers
    }

    pub(crate) fn degree(self) -> usize {
        self.degree
    }

    pub(crate) fn nodes(self) -> usize {
        self.nodes
    }

    pub(crate) fn parent(self, node: usize) -> Option<usize> {
        (node != 0).then(|| (node - 1) / self.degree)
    }

    /// Leaves in the order a registration placed from `leaf` tries them: its own first, then the
    /// following ones (its siblings first), wrapping around.
    pub(crate) fn leaves_from(self, leaf: usize) -> impl Iterator<Item = usize> {
        let count = self.nodes - self.first_leaf;
        let offset = leaf - self.first_leaf;
        let first = self.first_leaf;
        (0..count).map(move |step| first + (offset + step) % count)
    }

    pub(crate) fn first_leaf(self) -> usize {
        self.first_leaf
    }
}

/// The (tiers, degree) a phaser gets when the caller does not choose.
///
/// Seed 000's Table I, measured on 64- and 128-thread machines: flat up to 2 tasks, then two
/// tiers whose degree grows with the task count up to 16 (which beat the hardware's natural 8).
/// With no expected count the phaser is flat, the cheapest when it stays small.
pub(crate) fn default_shape(expected_parties: Option<usize>) -> (usize, usize) {
    match expected_parties {
        None | Some(0..=2) => (1, 16),
        Some(parties) => (2, (parties / 2).clamp(2, 16)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_and_leaves_of_a_three_tier_tree() {
        let shape = Shape::new(3, 2).unwrap();
        assert_eq!(shape.nodes(), 7);
        assert_eq!(shape.first_leaf(), 3);
        assert_eq!(shape.parent(0), None);
        assert_eq!(shape.parent(2), Some(0));
        assert_eq!(shape.parent(5), Some(2));
        assert_eq!(shape.leaves_from(5).collect::<Vec<_>>(), vec![5, 6, 3, 4]);
    }

    #[test]
    fn flat_is_one_node() {
        let shape = Shape::new(1, 16).unwrap();
        assert_eq!((shape.nodes(), shape.first_leaf()), (1, 0));
        assert_eq!(shape.leaves_from(0).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn bad_shapes_are_refused_with_a_reason() {
        assert!(Shape::new(0, 4).unwrap_err().to_string().contains("tiers"));
        assert!(Shape::new(2, 1).unwrap_err().to_string().contains("degree"));
        assert!(Shape::new(8, 64)
            .unwrap_err()
            .to_string()
            .contains("sub-phasers"));
    }

    #[test]
    fn huge_shapes_are_refused_at_once() {
        for (tiers, degree) in [
            (usize::MAX, 2),
            (usize::MAX, usize::MAX),
            (2, usize::MAX),
            (17, 2),
            (2, MAX_SUB_PHASERS),
        ] {
            let message = Shape::new(tiers, degree).unwrap_err().to_string();
            assert!(
                message.contains(&MAX_SUB_PHASERS.to_string()),
                "({tiers}, {degree}): {message}"
            );
        }
    }

    #[test]
    fn the_largest_shapes_fit() {
        assert_eq!(Shape::new(16, 2).unwrap().nodes(), MAX_SUB_PHASERS - 1);
        assert_eq!(
            Shape::new(2, MAX_SUB_PHASERS - 1).unwrap().nodes(),
            MAX_SUB_PHASERS
        );
        assert_eq!(Shape::new(1, usize::MAX).unwrap().nodes(), 1);
    }

    #[test]
    fn defaults_follow_table_one() {
        assert_eq!(default_shape(None), (1, 16));
        assert_eq!(default_shape(Some(2)), (1, 16));
        assert_eq!(default_shape(Some(4)), (2, 2));
        assert_eq!(default_shape(Some(16)), (2, 8));
        assert_eq!(default_shape(Some(128)), (2, 16));
    }
}
