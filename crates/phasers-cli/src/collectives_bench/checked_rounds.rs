//! `--ops checked` in rounds: a checked team's row and its unchecked twin measured back to back
//! in every round, and their rounds merged.
//!
//! What checking costs is a few nanoseconds, far below how much a shared machine drifts between
//! two rows measured a second apart (a cache-line round trip can move fivefold for minutes). So
//! each round measures both twins back to back, alternating which goes first, and the figure
//! divides each round's checked median by the same round's unchecked one: the drift cancels in
//! each ratio, and the range of the ratios over the rounds shows what is left of it.

use super::results::CollectiveRow;
use crate::stats;

/// Whether round `round` measures the checked twin first: every other round, so that neither
/// twin always runs right after the other's threads wound down.
pub fn checked_first(round: usize) -> [bool; 2] {
    if round % 2 == 0 {
        [true, false]
    } else {
        [false, true]
    }
}

/// One row from its rounds, in the order measured: every sample, the median of each round, and
/// the statistics over all the samples. The first error or note of a round is the row's.
pub fn merge(rounds: Vec<CollectiveRow>) -> Option<CollectiveRow> {
    let mut rounds = rounds.into_iter();
    let mut merged = rounds.next()?;
    merged.round_medians_ns = merged.median().into_iter().collect();
    for round in rounds {
        merged.round_medians_ns.extend(round.median());
        merged.samples_ns.extend(round.samples_ns);
        merged.row_s += round.row_s;
        merged.error = merged.error.or(round.error);
        merged.note = merged.note.or(round.note);
    }
    merged.summary = stats::summarize(&merged.samples_ns);
    let median = merged.median();
    merged.bandwidth_gb_s = match (merged.payload_bytes, median) {
        (Some(bytes), Some(ns)) if ns > 0.0 => Some(bytes as f64 / ns),
        _ => None,
    };
    Some(merged)
}

/// The ratio of two twins' medians in each round both measured, in round order.
pub fn round_ratios(numerator: &CollectiveRow, denominator: &CollectiveRow) -> Vec<f64> {
    numerator
        .round_medians_ns
        .iter()
        .zip(&denominator.round_medians_ns)
        .filter(|(_, under)| **under > 0.0)
        .map(|(over, under)| over / under)
        .collect()
}

/// `1.02x [0.97-1.08]`: the median of the rounds' ratios and their range; `-` with none.
pub fn ratio_cell(ratios: &[f64]) -> String {
    let Some(median) = stats::median(ratios) else {
        return "-".to_owned();
    };
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if ratios.len() < 2 {
        return format!("{median:.2}x");
    }
    format!("{median:.2}x [{low:.2}-{high:.2}]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives_bench::operation::Operation;
    use crate::collectives_bench::part::Part;
    use crate::collectives_bench::results::Kind;
    use crate::collectives_bench::row;

    fn round(samples: &[f64]) -> CollectiveRow {
        let mut row = row::blank(Part::Checked, Operation::Barrier, "team", Kind::Ours, 2);
        row.samples_ns = samples.to_vec();
        row.summary = stats::summarize(samples);
        row.row_s = 0.5;
        row
    }

    #[test]
    fn merging_keeps_every_sample_and_each_rounds_median() {
        let merged = merge(vec![round(&[1.0, 2.0, 3.0]), round(&[10.0, 20.0, 30.0])]).unwrap();
        assert_eq!(merged.samples_ns.len(), 6);
        assert_eq!(merged.round_medians_ns, vec![2.0, 20.0]);
        assert_eq!(merged.row_s, 1.0);
        assert!(merge(Vec::new()).is_none());
    }

    #[test]
    fn ratios_pair_rounds_and_the_cell_shows_median_and_range() {
        let checked = merge(vec![round(&[2.2]), round(&[11.0]), round(&[3.0])]).unwrap();
        let unchecked = merge(vec![round(&[2.0]), round(&[10.0]), round(&[3.0])]).unwrap();
        let ratios = round_ratios(&checked, &unchecked);
        assert_eq!(ratios.len(), 3);
        assert_eq!(ratio_cell(&ratios), "1.10x [1.00-1.10]");
        assert_eq!(ratio_cell(&[]), "-");
        assert_eq!(checked_first(0), [true, false]);
        assert_eq!(checked_first(1), [false, true]);
    }
}
