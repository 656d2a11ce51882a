//! Interleaved rounds, as the `phasers` command measures: a row group's contenders (the MPI
//! baseline, the default team, the unchecked team) each run once per round, in an order that
//! rotates from round to round, and each contender's samples are split over the rounds. A machine
//! that drifts between fast and slow states then hits every contender alike, and the rounds'
//! disagreement (the spread) says how far it drifted.

use phasers_cli::harness::noise;
use serde::Serialize;

use crate::stats::Timing;

/// Rounds per contender: as asked, but at least one and at most one per sample, so that every
/// round has a sample.
pub fn count(asked: usize, samples: usize) -> usize {
    asked.clamp(1, samples.max(1))
}

/// Samples in round `index` of `rounds`: an even share, the first rounds taking one more when
/// they do not divide evenly.
pub fn samples_in(index: usize, rounds: usize, samples: usize) -> usize {
    samples / rounds + usize::from(index < samples % rounds)
}

/// The order of `contenders` contenders in round `round`: rotated by one each round, so that
/// each runs first (after another's cache traffic, or after the idle ranks' naps) as often as
/// the others.
pub fn order(round: usize, contenders: usize) -> Vec<usize> {
    (0..contenders).map(|i| (i + round) % contenders).collect()
}

/// One contender's rounds merged: every sample, the median of each round and their spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundTiming {
    /// Over every sample of every round.
    #[serde(flatten)]
    pub timing: Timing,
    /// The median of each round, in the order run.
    pub round_medians_ns: Vec<f64>,
    /// The slowest round's median over the fastest's; `None` with one round.
    pub spread: Option<f64>,
}

impl RoundTiming {
    /// Merges the rounds of one contender, in the order run; `None` without any.
    pub fn merge(rounds: &[Timing]) -> Option<RoundTiming> {
        let first = rounds.first()?;
        let samples: Vec<f64> = rounds
            .iter()
            .flat_map(|round| round.samples_ns.iter().copied())
            .collect();
        let round_medians_ns: Vec<f64> = rounds.iter().map(|round| round.median_ns).collect();
        Some(RoundTiming {
            // Every round runs the count the first one calibrated.
            timing: Timing::new(first.iterations_per_sample, samples)?,
            spread: noise::spread(&round_medians_ns),
            round_medians_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_split_over_rounds() {
        assert_eq!(count(5, 11), 5);
        assert_eq!(count(5, 3), 3);
        assert_eq!(count(0, 3), 1);
        let split: Vec<usize> = (0..5).map(|i| samples_in(i, 5, 11)).collect();
        assert_eq!(split, [3, 2, 2, 2, 2]);
        assert_eq!((0..3).map(|i| samples_in(i, 3, 3)).sum::<usize>(), 3);
    }

    #[test]
    fn the_order_rotates() {
        assert_eq!(order(0, 3), [0, 1, 2]);
        assert_eq!(order(1, 3), [1, 2, 0]);
        assert_eq!(order(2, 3), [2, 0, 1]);
        assert_eq!(order(3, 3), [0, 1, 2]);
        assert_eq!(order(1, 2), [1, 0]);
        // Over as many rounds as contenders, each runs first once.
        let firsts: Vec<usize> = (0..3).map(|r| order(r, 3)[0]).collect();
        assert_eq!(firsts, [0, 1, 2]);
    }

    #[test]
    fn rounds_merge() {
        let rounds = [
            Timing::new(8, vec![10.0, 12.0]).unwrap(),
            Timing::new(8, vec![20.0, 22.0]).unwrap(),
        ];
        let merged = RoundTiming::merge(&rounds).unwrap();
        assert_eq!(merged.timing.samples_ns, [10.0, 12.0, 20.0, 22.0]);
        assert_eq!(merged.timing.min_ns, 10.0);
        assert_eq!(merged.timing.median_ns, 16.0);
        assert_eq!(merged.timing.iterations_per_sample, 8);
        assert_eq!(merged.round_medians_ns, [11.0, 21.0]);
        assert_eq!(merged.spread, Some(21.0 / 11.0));
        assert_eq!(RoundTiming::merge(&rounds[..1]).unwrap().spread, None);
        assert_eq!(RoundTiming::merge(&[]), None);
    }
}
