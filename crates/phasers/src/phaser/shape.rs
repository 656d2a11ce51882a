//! The shape of the sub-phaser tree: `tiers` levels, each sub-phaser with up to `degree` children.
//!
//! Sub-phasers are numbered level by level from the root (0), so the tree lives in one array and a
//! parent is found by arithmetic. Registrations sit on the leaves, the last level.

use crate::error::{Error, Result};

/// More sub-phasers than this is a typo, not a plan: 2^20 sub-phasers already take 256 MiB.
const MAX_NODES: usize = 1 << 20;

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
        let mut nodes = 0usize;
        let mut level = 1usize;
        let mut first_leaf = 0;
        for tier in 0..tiers {
            if tier == tiers - 1 {
                first_leaf = nodes;
            }
            nodes = nodes.saturating_add(level);
            level = level.saturating_mul(degree);
        }
        if nodes > MAX_NODES {
            return Err(Error::invalid(format!(
                "tiers = {tiers} and degree = {degree} make {nodes} sub-phasers, more than the \
                 {MAX_NODES} allowed; use fewer tiers or a smaller degree"
            )));
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
    fn defaults_follow_table_one() {
        assert_eq!(default_shape(None), (1, 16));
        assert_eq!(default_shape(Some(2)), (1, 16));
        assert_eq!(default_shape(Some(4)), (2, 2));
        assert_eq!(default_shape(Some(16)), (2, 8));
        assert_eq!(default_shape(Some(128)), (2, 16));
    }
}
