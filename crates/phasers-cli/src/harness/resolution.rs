//! The smallest cost a row can tell from nothing: below it a cost prints as `< 2.0 ns`, and is
//! never anyone's best or side of a ratio. A sample cannot resolve less than [`clock_step_ns`] over
//! its episodes; an EPCC row also not less than its reference loop's interquartile range.

use std::sync::OnceLock;
use std::time::Instant;

use super::table::time;

/// Readings of the clock taken to find its step: many steps, well under a millisecond.
const CLOCK_READINGS: usize = 10_000;

/// The smallest positive step between two [`Instant::now`] readings in ns, measured once.
pub fn clock_step_ns() -> f64 {
    static STEP: OnceLock<f64> = OnceLock::new();
    *STEP.get_or_init(|| {
        let mut smallest = f64::INFINITY;
        let mut previous = Instant::now();
        for _ in 0..CLOCK_READINGS {
            let now = Instant::now();
            let step = now.duration_since(previous).as_secs_f64() * 1e9;
            if step > 0.0 {
                smallest = smallest.min(step);
            }
            previous = now;
        }
        if smallest.is_finite() {
            smallest
        } else {
            0.0
        }
    })
}

/// The interquartile range of `values` (interpolated percentiles); `None` with fewer than two.
pub fn interquartile_range(values: &[f64]) -> Option<f64> {
    if values.len() < 2 || values.iter().any(|value| !value.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let quantile = |q: f64| {
        let position = q * (sorted.len() - 1) as f64;
        let (low, high) = (position.floor() as usize, position.ceil() as usize);
        sorted[low] + (sorted[high] - sorted[low]) * (position - low as f64)
    };
    Some(quantile(0.75) - quantile(0.25))
}

/// Whether a cost of `median_ns` is below `resolution_ns` (a cost of zero or less always is).
pub fn below(median_ns: f64, resolution_ns: f64) -> bool {
    median_ns <= 0.0 || median_ns < resolution_ns
}

/// A cost below the resolution as a table prints it: `< 2.0 ns` (at least `< 0.1 ns`, never 0).
pub fn below_text(resolution_ns: f64) -> String {
    format!("< {}", time(resolution_ns.max(0.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_steps_forward_and_the_interquartile_range_ignores_outliers() {
        let step = clock_step_ns();
        assert!(step > 0.0 && step < 1e6, "{step}");
        assert_eq!(clock_step_ns(), step, "measured once");
        let samples = [100.0, 101.0, 102.0, 103.0, 400_000.0];
        assert_eq!(interquartile_range(&samples), Some(2.0));
        assert_eq!(interquartile_range(&[5.0]), None);
        assert_eq!(interquartile_range(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn zero_and_negative_costs_are_always_below() {
        assert!(below(-1.7, 0.0) && below(0.0, 0.0) && below(1.9, 2.0));
        assert!(!below(2.0, 2.0) && !below(50.0, 2.0));
        assert_eq!(
            [below_text(1.96), below_text(0.0)],
            ["< 2.0 ns", "< 0.1 ns"]
        );
    }
}
