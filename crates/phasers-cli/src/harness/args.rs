//! The command-line parsers every benchmark shares (thread counts are in
//! [`threads`](super::threads)), and the command line itself, for reports.

use std::time::Duration;

/// Parses a number of seconds above 0 and at most a day.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .filter(|duration| !duration.is_zero() && *duration <= Duration::from_secs(86_400))
        .ok_or_else(|| format!("{text:?} is not a number of seconds above 0 and at most a day"))
}

/// Parses a delay in microseconds, from 0 to a second.
pub fn parse_delay(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|micros| micros.is_finite() && (0.0..=1e6).contains(micros))
        .map(|micros| Duration::from_secs_f64(micros / 1e6))
        .ok_or_else(|| format!("{text:?} is not a delay in microseconds from 0 to 1000000"))
}

/// `values` in increasing order, each once.
pub fn sorted_unique<T: Ord>(mut values: Vec<T>) -> Vec<T> {
    values.sort_unstable();
    values.dedup();
    values
}

/// `values` without repeats, each where it first appears (`--algorithms mcs,auto` keeps order).
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
pub fn parse_within(text: &str, least: usize, most: usize, what: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .ok()
        .filter(|value| (least..=most).contains(value))
        .ok_or_else(|| format!("{text:?} is not a {what} from {least} to {most}"))
}

/// A size as a command line writes it: `4096`, `100_000`, `64k` (×1,000) or `16M` (×1,000,000);
/// `None` when it is not one or overflows (the caller checks the range).
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
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}

/// Parses a `--plot` path, refusing a name that is not `.svg` rather than write SVG under it.
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

    // tests/smoke.rs and main.rs: each option refuses a bad value with its parser's message.
    #[test]
    fn numbers_parse_within_their_range_as_the_command_line_writes_them() {
        assert_eq!(parse_seconds(" 0.25 "), Ok(Duration::from_millis(250)));
        for bad in ["0", "nan", "inf", "86401"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_delay("1.5"), Ok(Duration::from_nanos(1500)));
        assert_eq!(parse_delay("0"), Ok(Duration::ZERO));
        assert_eq!(parse_delay("1000000"), Ok(Duration::from_secs(1)));
        assert!(parse_delay("inf").is_err() && parse_delay("1000001").is_err());
        let error = parse_within("9", 2, 8, "degree").unwrap_err();
        assert_eq!(error, "\"9\" is not a degree from 2 to 8");
        let scaled = ["64k", " 16M ", "100_000", "1.5k"].map(parse_scaled);
        let expected = [Some(64_000), Some(16_000_000), Some(100_000), None];
        assert_eq!(scaled, expected);
    }

    #[test]
    fn lists_lose_repeats_in_sorted_or_first_order() {
        assert_eq!(sorted_unique(vec![4, 1, 4, 2]), vec![1, 2, 4]);
        let kept = first_of_each(vec!["mcs", "auto", "mcs"]);
        assert_eq!(kept, vec!["mcs", "auto"]);
    }
}
