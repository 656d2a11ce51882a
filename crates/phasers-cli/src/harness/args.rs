//! The command-line parsers every benchmark shares (thread counts are in
//! [`threads`](super::threads)), and the command line itself, for reports.

use std::time::Duration;

/// Parses a number of seconds above 0 and at most a day.
///
/// ```
/// use std::time::Duration;
/// use phasers_cli::harness::args::parse_seconds;
///
/// assert_eq!(parse_seconds("0.25"), Ok(Duration::from_millis(250)));
/// assert!(parse_seconds("0").unwrap_err().contains("not a number of seconds"));
/// ```
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .filter(|duration| !duration.is_zero() && *duration <= Duration::from_secs(86_400))
        .ok_or_else(|| format!("{text:?} is not a number of seconds above 0 and at most a day"))
}

/// Parses a delay in microseconds, from 0 to a second.
///
/// ```
/// use std::time::Duration;
/// use phasers_cli::harness::args::parse_delay;
///
/// assert_eq!(parse_delay("1.5"), Ok(Duration::from_nanos(1500)));
/// assert!(parse_delay("-0.1").unwrap_err().contains("not a delay"));
/// ```
pub fn parse_delay(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|micros| micros.is_finite() && (0.0..=1e6).contains(micros))
        .map(|micros| Duration::from_secs_f64(micros / 1e6))
        .ok_or_else(|| format!("{text:?} is not a delay in microseconds from 0 to 1000000"))
}

/// `values` in increasing order, each once.
///
/// ```
/// use phasers_cli::harness::args::sorted_unique;
///
/// assert_eq!(sorted_unique(vec![4, 1, 4, 2]), vec![1, 2, 4]);
/// ```
pub fn sorted_unique<T: Ord>(mut values: Vec<T>) -> Vec<T> {
    values.sort_unstable();
    values.dedup();
    values
}

/// The command line of this process, for reports.
///
/// ```
/// assert!(!phasers_cli::harness::args::command_line().is_empty());
/// ```
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_above_zero_and_at_most_a_day() {
        assert_eq!(parse_seconds(" 2 "), Ok(Duration::from_secs(2)));
        for bad in ["0", "-1", "soon", "nan", "inf", "86401"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn delays_are_from_zero_to_a_second() {
        assert_eq!(parse_delay("0"), Ok(Duration::ZERO));
        assert_eq!(parse_delay("1000000"), Ok(Duration::from_secs(1)));
        for bad in ["-0.1", "inf", "x", "1000001"] {
            assert!(parse_delay(bad).is_err(), "{bad}");
        }
    }
}
