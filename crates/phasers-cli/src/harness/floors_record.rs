//! The library's floors ([`phasers::Floors`]: round trip, yield hand-off, wake-up) as every report
//! records them: tables are read against them, and they tell another machine's file apart.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The floors the library used in the process that wrote a report (`floors` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloorsRecord {
    /// A cache line's round trip between two cores, in ns: the least a barrier episode can cost.
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

    /// The floors every object of this process uses; `Err` when `PHASERS_FLOORS` does not parse.
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

/// `ns` with two or three significant digits: `65 ns`, `1.3 µs`, `18 µs`, `4.0 ms`.
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

    // tests/floors.rs: a report's measured floors, and those PHASERS_FLOORS sets, in its header.
    #[test]
    fn times_keep_two_or_three_digits_and_every_source_has_words() {
        let times = [190, 4_200, 22_499, 4_000_000].map(short_time);
        assert_eq!(times, ["190 ns", "4.2 µs", "22 µs", "4.0 ms"]);
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
}
