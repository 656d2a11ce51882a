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

/// `values` without repeats, each where it first appears (an order the user chose, such as
/// `--algorithms mcs,auto`, is kept).
///
/// ```
/// use phasers_cli::harness::args::first_of_each;
///
/// assert_eq!(first_of_each(vec!["mcs", "auto", "mcs"]), vec!["mcs", "auto"]);
/// ```
pub fn first_of_each<T: PartialEq>(values: Vec<T>) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(values.len());
    for value in values {
        if !kept.contains(&value) {
            kept.push(value);
        }
    }
    kept
}

/// A whole number from `least` to `most`, or an error naming `what` it should have been.
///
/// ```
/// use phasers_cli::harness::args::parse_within;
///
/// assert_eq!(parse_within(" 3 ", 2, 8, "degree"), Ok(3));
/// assert_eq!(parse_within("9", 2, 8, "degree"), Err("\"9\" is not a degree from 2 to 8".into()));
/// ```
pub fn parse_within(text: &str, least: usize, most: usize, what: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .ok()
        .filter(|value| (least..=most).contains(value))
        .ok_or_else(|| format!("{text:?} is not a {what} from {least} to {most}"))
}

/// A whole number written the way sizes are on a command line: `4096`, `100_000`, `64k`
/// (×1,000) or `16M` (×1,000,000); `None` when it is not one or overflows. The caller checks the
/// range and says what it should have been.
///
/// ```
/// use phasers_cli::harness::args::parse_scaled;
///
/// assert_eq!(parse_scaled("64k"), Some(64_000));
/// assert_eq!(parse_scaled(" 16M "), Some(16_000_000));
/// assert_eq!(parse_scaled("100_000"), Some(100_000));
/// assert_eq!(parse_scaled("1.5k"), None);
/// ```
pub fn parse_scaled(text: &str) -> Option<usize> {
    let trimmed = text.trim().replace('_', "");
    let (digits, scale) = match trimmed.as_bytes().last() {
        Some(b'k' | b'K') => (&trimmed[..trimmed.len() - 1], 1_000),
        Some(b'M') => (&trimmed[..trimmed.len() - 1], 1_000_000),
        _ => (trimmed.as_str(), 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(scale)
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

/// Parses a `--plot` path: the plots are SVG, so a name that says otherwise (`x.png`) is refused
/// rather than given SVG under the wrong name.
///
/// ```
/// use phasers_cli::harness::args::parse_svg_path;
///
/// assert!(parse_svg_path("runs/b.svg").is_ok());
/// assert!(parse_svg_path("b.png").unwrap_err().contains("b.svg"));
/// ```
pub fn parse_svg_path(text: &str) -> Result<std::path::PathBuf, String> {
    let path = std::path::PathBuf::from(text);
    match path.extension().and_then(|extension| extension.to_str()) {
        Some(extension) if extension.eq_ignore_ascii_case("svg") => Ok(path),
        _ => Err(format!(
            "{text:?}: plots are written as SVG, so the file must end in .svg (such as {:?})",
            path.with_extension("svg")
        )),
    }
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
