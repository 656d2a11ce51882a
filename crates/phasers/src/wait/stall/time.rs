//! The stall time: how long a waiter waits before it reports a stall. Each builder's
//! `stall_after`, else [`STALL_ENV`], else [`DEFAULT_STALL_AFTER`].
//!
//! Below both the stall latch (`latch.rs`) and the report (`report.rs`, whose message names
//! the variable), so that neither imports the other back.

use std::time::Duration;

use crate::error::{Error, Result};

/// The environment variable that sets the stall time of objects whose builder does not:
/// a duration such as `10s`, `500ms`, `1.5s` or `2min` (a bare number is seconds), or `off`
/// (also `0`) to turn stall reports off.
///
/// ```
/// assert_eq!(phasers::wait::STALL_ENV, "PHASERS_STALL");
/// ```
pub const STALL_ENV: &str = "PHASERS_STALL";

/// The stall time when neither the builder nor [`STALL_ENV`] sets one.
///
/// ```
/// use std::time::Duration;
///
/// assert_eq!(phasers::wait::DEFAULT_STALL_AFTER, Duration::from_secs(10));
/// ```
pub const DEFAULT_STALL_AFTER: Duration = Duration::from_secs(10);

/// The stall time from [`STALL_ENV`], else [`DEFAULT_STALL_AFTER`]; `None` when reports are off.
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming the variable when its value is not a stall time.
pub(crate) fn stall_after_from_env() -> Result<Option<Duration>> {
    match std::env::var(STALL_ENV) {
        Ok(text) => parse_stall_after(&text).map_err(|why| {
            Error::invalid(format!(
                "{STALL_ENV}={text:?} {why}; set it to a duration such as 10s, 500ms or 1.5s, or \
                 to off, or unset it"
            ))
        }),
        Err(std::env::VarError::NotPresent) => Ok(Some(DEFAULT_STALL_AFTER)),
        Err(std::env::VarError::NotUnicode(text)) => Err(Error::invalid(format!(
            "{STALL_ENV}={text:?} is not text; set it to a duration such as 10s, 500ms or 1.5s, \
             or to off, or unset it"
        ))),
    }
}

/// Parses a stall time: a number with a unit (`ns`, `us`, `ms`, `s`, `min`; none means seconds,
/// as `PHASERS_MPI_STALL_WARN`), or `off`. `None` when reports are off. The error says what is
/// wrong with the text, to follow the variable's name and value.
pub(crate) fn parse_stall_after(text: &str) -> std::result::Result<Option<Duration>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| "is not a duration".to_string())?;
    let seconds_per_unit = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "min" => 60.0,
        other => return Err(format!("has the unit {other:?}; use ns, us, ms, s or min")),
    };
    let after = Duration::try_from_secs_f64(value * seconds_per_unit)
        .map_err(|_| "is too long a duration".to_string())?;
    Ok(stall_after(after))
}

/// `after` as a stall time: `None` (no reports) for zero, as `PHASERS_STALL=0`, and for
/// [`Duration::MAX`].
pub(crate) fn stall_after(after: Duration) -> Option<Duration> {
    (!after.is_zero() && after != Duration::MAX).then_some(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_times_parse_in_every_unit() {
        for (text, after) in [
            ("10s", Some(Duration::from_secs(10))),
            ("250ms", Some(Duration::from_millis(250))),
            ("1.5s", Some(Duration::from_millis(1500))),
            (" 2min ", Some(Duration::from_secs(120))),
            ("500us", Some(Duration::from_micros(500))),
            ("500µs", Some(Duration::from_micros(500))),
            ("3", Some(Duration::from_secs(3))),
            ("0.25", Some(Duration::from_millis(250))),
            ("off", None),
            ("OFF", None),
            ("0", None),
            ("0ms", None),
        ] {
            assert_eq!(parse_stall_after(text), Ok(after), "{text:?}");
        }
    }

    #[test]
    fn bad_stall_times_say_what_is_wrong() {
        for (text, says) in [
            ("", "not a duration"),
            ("soon", "not a duration"),
            ("-1s", "not a duration"),
            ("1.2.3s", "not a duration"),
            ("10 seconds", "unit \"seconds\""),
            ("1e3", "unit \"e3\""),
            ("1h", "unit \"h\""),
            ("1000000000000000000000s", "too long"),
        ] {
            let why = parse_stall_after(text).unwrap_err();
            assert!(why.contains(says), "{text:?} gave {why:?}");
        }
    }

    #[test]
    fn zero_and_max_mean_never() {
        assert_eq!(stall_after(Duration::ZERO), None);
        assert_eq!(stall_after(Duration::MAX), None);
        assert_eq!(
            stall_after(Duration::from_secs(1)),
            Some(Duration::from_secs(1))
        );
    }
}
