//! Summary statistics over samples, as EPCC syncbench reports them (the mean with a confidence
//! interval), and the minimum and median: on a shared machine a cost's long right tail makes the
//! mean say much about the neighbours, while the minimum approaches the intrinsic cost and the
//! median is what a program usually pays.

use serde::{Deserialize, Serialize};

/// The summary of one row's samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// How many samples were summarized.
    pub count: usize,
    /// The smallest sample.
    pub min: f64,
    /// The median (the mean of the two middle samples for an even count).
    pub median: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The sample standard deviation (divisor `count - 1`); 0 for a single sample.
    pub stddev: f64,
    /// Half the width of the 95% confidence interval of the mean, from Student's t with
    /// `count - 1` degrees of freedom; `None` for a single sample, which bounds nothing.
    pub ci95: Option<f64>,
}

/// Summarizes `values`, or `None` when there are none or any is not finite (a sample that is NaN
/// or infinite means the measurement failed, and averaging it in would hide that).
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() || values.iter().any(|value| !value.is_finite()) {
        return None;
    }
    let count = values.len();
    let mean = values.iter().sum::<f64>() / count as f64;
    // One sample's square is exactly 0, so its deviation is 0 with the divisor at least 1.
    let squares: f64 = values.iter().map(|value| (value - mean).powi(2)).sum();
    let stddev = (squares / (count - 1).max(1) as f64).sqrt();
    let ci95 = (count > 1).then(|| t_975(count - 1) * stddev / (count as f64).sqrt());
    Some(Summary {
        count,
        min: min(values)?,
        median: median(values)?,
        mean,
        stddev,
        ci95,
    })
}

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

/// Student's t at 0.975 (two-sided 95%) for `dof` degrees of freedom: tabulated to 30 (EPCC's 20
/// repetitions give 19), then anchors each used up to the next (erring wide), then the normal.
pub fn t_975(dof: usize) -> f64 {
    const SMALL: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    const LARGE: [(usize, f64); 4] = [(40, 2.021), (60, 2.000), (120, 1.980), (1000, 1.962)];
    match dof {
        0 => f64::INFINITY,
        1..=30 => SMALL[dof - 1],
        _ => LARGE
            .iter()
            .rev()
            .find(|(anchor, _)| dof >= *anchor)
            .map_or(SMALL[29], |(_, t)| *t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_have_the_middle_the_sample_deviation_and_the_t_interval() {
        assert_eq!((min(&[]), median(&[])), (None, None));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        let even = [4.0, 1.0, 3.0, 2.0];
        assert_eq!((min(&even), median(&even)), (Some(1.0), Some(2.5)));
        // Mean 5, squared deviations 20 over 4 degrees of freedom: variance 5; the half-width is
        // t(0.975, 4) * sqrt(5) / sqrt(5).
        let s = summarize(&[2.0, 4.0, 6.0, 8.0, 5.0]).unwrap();
        assert_eq!((s.count, s.min, s.median, s.mean), (5, 2.0, 5.0, 5.0));
        assert!((s.stddev - 5f64.sqrt()).abs() < 1e-9 && (s.ci95.unwrap() - 2.776).abs() < 1e-9);
        let one = summarize(&[7.5]).unwrap();
        assert_eq!((one.mean, one.stddev, one.ci95), (7.5, 0.0, None));
        let failed = summarize(&[1.0, f64::NAN]).or(summarize(&[1.0, f64::INFINITY]));
        assert_eq!(failed, None);
        assert_eq!((t_975(0), t_975(19)), (f64::INFINITY, 2.093));
        assert_eq!((t_975(35), t_975(59)), (2.042, 2.021));
        assert_eq!((t_975(100), t_975(1_000_000)), (2.0, 1.962));
        // Wider with fewer degrees of freedom, always.
        assert!((1..200).all(|dof| t_975(dof) >= t_975(dof + 1)));
    }
}
