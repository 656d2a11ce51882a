//! The library's floors as every report records and states them: the cache-line round trip, the
//! yield hand-off and the wake-up that [`phasers::Floors`] measures once per process and derives
//! every wait budget from.
//!
//! Every table is read against them: a barrier near one round trip per episode is at the floor,
//! one near a wake-up is parking, and one oversubscribed barrier near a few yields is handing
//! cores over as it should. So each report heads its tables with [`floors_line`] and writes the
//! numbers into its JSON, where a file from another machine can be told apart by them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

// Stated from a report's provenance, which holds a `FloorsRecord`: so it lives with the
// provenance, below which this file stays, and is re-exported where readers look for it.
pub use super::provenance::floors_line;

/// The floors the library used in the process that wrote a report (`floors` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloorsRecord {
    /// A cache line's round trip between two cores, in ns: the least a barrier among threads on
    /// two cores can cost per episode.
    pub round_trip_ns: u64,
    /// One hand-off of a core between two threads on it (`sched_yield`), in ns.
    pub yield_ns: u64,
    /// From a futex wake call to the sleeper running on another core, in ns.
    pub wake_ns: u64,
    /// Where the library took them from: `measured`, `environment` (`PHASERS_FLOORS`),
    /// `environment+measured`, `profile` or `fixed`.
    pub source: String,
}

impl FloorsRecord {
    /// The record of `floors`.
    pub fn of(floors: &phasers::Floors) -> Self {
        FloorsRecord {
            round_trip_ns: nanos(floors.round_trip()),
            yield_ns: nanos(floors.yield_handoff()),
            wake_ns: nanos(floors.wake()),
            source: floors.source().name().to_owned(),
        }
    }

    /// The floors every object of this process uses ([`phasers::Floors::current`]), measured the
    /// first time they are asked for.
    ///
    /// `Err` with the library's message when `PHASERS_FLOORS` cannot be parsed: every builder of
    /// the library would refuse with it, and the command refuses to start (see
    /// [`phasers::check_environment`]).
    pub fn current() -> Result<Self, String> {
        phasers::Floors::current()
            .map(|floors| FloorsRecord::of(&floors))
            .map_err(|error| error.to_string())
    }
}

/// Where the floors came from, in a few words.
pub fn source_words(source: &str) -> &'static str {
    match source {
        "measured" => "measured once by the library",
        "environment" => "set by PHASERS_FLOORS",
        "environment+measured" => "partly set by PHASERS_FLOORS, the rest measured",
        "profile" => "recorded in the tuning profile by `phasers bench barrier --write-profile`",
        "fixed" => "fixed values",
        _ => "from an unknown source",
    }
}

/// `ns` with two or three significant digits, as a header line wants it: `65 ns`, `1.3 µs`,
/// `18 µs`, `4.0 ms`.
pub fn short_time(ns: u64) -> String {
    let ns = ns as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e4 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e6 {
        format!("{:.0} µs", ns / 1e3)
    } else {
        format!("{:.1} ms", ns / 1e6)
    }
}

/// Whole nanoseconds; a floor is at most a second, so nothing is lost.
pub fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_times_keep_two_or_three_digits() {
        assert_eq!(short_time(190), "190 ns");
        assert_eq!(short_time(4_200), "4.2 µs");
        assert_eq!(short_time(22_499), "22 µs");
        assert_eq!(short_time(4_000_000), "4.0 ms");
    }

    #[test]
    fn every_source_has_words() {
        for source in [
            phasers::FloorsSource::Measured,
            phasers::FloorsSource::Environment,
            phasers::FloorsSource::EnvironmentAndMeasured,
            phasers::FloorsSource::Profile,
            phasers::FloorsSource::Fixed,
        ] {
            assert_ne!(source_words(source.name()), "from an unknown source");
        }
    }

    #[test]
    fn this_process_has_floors() {
        let record = FloorsRecord::current().unwrap();
        assert!(record.round_trip_ns > 0 && record.yield_ns > 0 && record.wake_ns > 0);
    }
}
