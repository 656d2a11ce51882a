//! Time per operation over the samples of one row: min (the intrinsic cost, on a shared machine)
//! and median (what a program usually pays).

use phasers_cli::harness::stats::{median, min};
use serde::Serialize;

/// The samples of one row, as measured on rank 0.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// Operations in each timed sample (the same on every rank).
    pub iterations_per_sample: u64,
    /// Nanoseconds per operation, one value per sample.
    pub samples_ns: Vec<f64>,
    /// The smallest sample.
    pub min_ns: f64,
    /// The median sample (mean of the middle two for an even count).
    pub median_ns: f64,
}

impl Timing {
    /// Summarizes `samples_ns`; `None` when there are none.
    pub fn new(iterations_per_sample: u64, samples_ns: Vec<f64>) -> Option<Timing> {
        Some(Timing {
            iterations_per_sample,
            min_ns: min(&samples_ns)?,
            median_ns: median(&samples_ns)?,
            samples_ns,
        })
    }
}

/// `ours / theirs` for min and for median.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    /// Ratio of the minima.
    pub min: f64,
    /// Ratio of the medians.
    pub median: f64,
}

impl Ratio {
    pub fn of(ours: &Timing, theirs: &Timing) -> Ratio {
        Ratio {
            min: ours.min_ns / theirs.min_ns,
            median: ours.median_ns / theirs.median_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary() {
        let t = Timing::new(10, vec![3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((t.min_ns, t.median_ns), (1.0, 2.5));
        assert_eq!(Timing::new(1, vec![]), None);
        let r = Ratio::of(&t, &Timing::new(1, vec![2.0]).unwrap());
        assert_eq!((r.min, r.median), (0.5, 1.25));
    }
}
