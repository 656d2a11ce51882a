//! Summary statistics over samples.
//!
//! Only min and median: on a shared machine the distribution of a barrier's cost has a long right
//! tail (preemption, other tenants), so the mean says more about the neighbours than the barrier.
//! The minimum approaches the intrinsic cost; the median is what a program usually pays.

/// The smallest value, or `None` for no values.
pub fn min(values: &[f64]) -> Option<f64> {
    values.iter().copied().min_by(f64::total_cmp)
}

/// The median (the mean of the two middle values for an even count), or `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[mid]),
        _ => Some((sorted[mid - 1] + sorted[mid]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_has_no_summary() {
        assert_eq!(min(&[]), None);
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn odd_count_takes_the_middle() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(min(&[5.0, 1.0, 3.0]), Some(1.0));
    }

    #[test]
    fn even_count_averages_the_middle_pair() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn single_value() {
        assert_eq!(median(&[7.5]), Some(7.5));
        assert_eq!(min(&[7.5]), Some(7.5));
    }
}
