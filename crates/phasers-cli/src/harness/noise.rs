//! How far a ratio of two medians can be trusted on a machine that drifts.
//!
//! Rows run in interleaved rounds, so drift hits every row alike. A row's spread is how much its
//! rounds disagree: the slowest round's median over the fastest's. A ratio `r = a / b` of two
//! positive medians is *noisy* when `max(spread(a), spread(b)) > max(r, 1 / r)`: this run does not
//! settle which is faster. A side with no spread (one round) takes no part; with none on either
//! side, or a median not above zero, the ratio is not judged.

use serde::{Deserialize, Serialize};

use super::stats;

/// The slowest round's median over the fastest's (1.0: they agreed); `None` under two rounds, or
/// when a round's median is not above zero (EPCC costs near zero have no meaningful ratio).
pub fn spread(round_medians: &[f64]) -> Option<f64> {
    let min = stats::min(round_medians).filter(|_| round_medians.len() > 1)?;
    let max = round_medians.iter().copied().max_by(f64::total_cmp)?;
    (min > 0.0 && max.is_finite()).then(|| max / min)
}

/// A spread as the tables print it: `×1.08`.
pub fn spread_text(spread: Option<f64>) -> String {
    spread.map_or_else(|| "-".to_owned(), |spread| format!("×{spread:.2}"))
}

/// Why `ratio` is noise given the two rows' spreads (the rule is in the module docs), or `None`.
pub fn judge(ratio: f64, spreads: [Option<f64>; 2]) -> Option<String> {
    let gap = (ratio.is_finite() && ratio > 0.0).then(|| ratio.max(1.0 / ratio))?;
    let widest = spreads.into_iter().flatten().max_by(f64::total_cmp)?;
    (widest > gap).then(|| format!("rounds ×{widest:.2} > gap ×{gap:.2}"))
}

/// One side of a ratio: a row's median and the spread of its rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The row's name, as the report prints it.
    pub name: String,
    /// Its median cost, in ns.
    pub median_ns: f64,
    /// Its rounds' spread, if it had rounds.
    pub spread: Option<f64>,
}

/// A ratio the report prints after its tables, as the JSON records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioRecord {
    /// The thread count of the two rows.
    pub threads: usize,
    /// The ratio in words, as printed: `our best (mcs) / std::sync::Barrier`.
    pub label: String,
    /// The row above the line, by name (`floor` for the per-regime floor).
    pub numerator: String,
    /// The row below it.
    pub denominator: String,
    /// The numerator's median, in ns.
    pub numerator_ns: f64,
    /// The denominator's median, in ns.
    pub denominator_ns: f64,
    /// `numerator_ns / denominator_ns`; below 1 the numerator is faster.
    pub ratio: f64,
    /// Whether the rows' rounds disagree by more than the ratio's distance from 1.
    pub noisy: bool,
    /// When noisy, by how much: `rounds ×1.30 > gap ×1.05`.
    pub noise: Option<String>,
}

impl RatioRecord {
    /// `top / bottom` at `threads` threads, labelled `label`, or `None` when the bottom's median
    /// is not above zero (no meaningful ratio).
    pub fn of(threads: usize, label: String, top: &Side, bottom: &Side) -> Option<Self> {
        let valid = bottom.median_ns > 0.0 && top.median_ns.is_finite();
        let ratio = valid.then(|| top.median_ns / bottom.median_ns)?;
        let noise = judge(ratio, [top.spread, bottom.spread]);
        Some(RatioRecord {
            threads,
            label,
            numerator: top.name.clone(),
            denominator: bottom.name.clone(),
            numerator_ns: top.median_ns,
            denominator_ns: bottom.median_ns,
            ratio,
            noisy: noise.is_some(),
            noise,
        })
    }

    /// What a noisy ratio's line ends with; empty when it is not noisy.
    pub fn mark(&self) -> String {
        self.noise.iter().map(|n| format!("noisy: {n}")).collect()
    }
}

/// The legend printed under every table of a sweep.
pub const LEGEND: &str = "rounds: the slowest round's median over the fastest's; noisy: a \
                          ratio whose rows' rounds disagree by more than the two rows differ \
                          (spread > max(r, 1/r)), so this run does not settle which is faster";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_is_noisy_when_rounds_disagree_more_than_the_gap() {
        assert_eq!(spread(&[100.0, 125.0, 110.0]), Some(1.25));
        assert_eq!(spread(&[100.0]).or(spread(&[-2.0, 5.0])), None);
        // 105 vs 100 is a 5% gap; one row's rounds disagree by 20%; the rule is symmetric.
        let noise = judge(1.05, [Some(1.2), Some(1.01)]);
        assert_eq!(noise.as_deref(), Some("rounds ×1.20 > gap ×1.05"));
        assert!(judge(100.0 / 105.0, [Some(1.01), Some(1.2)]).is_some());
        // Settled, no spreads, or no ratio: not noisy.
        assert_eq!(judge(0.5, [Some(1.3), None]), None);
        assert_eq!(judge(1.05, [None, None]), None);
        assert_eq!(judge(-1.0, [Some(9.0), None]), None);
        let side = |median_ns| Side {
            name: "auto".into(),
            median_ns,
            spread: None,
        };
        assert_eq!(RatioRecord::of(2, "x".into(), &side(1.0), &side(0.0)), None);
    }
}
