//! What heads every report file (docs/benchmark-json.md); bump [`SCHEMA_VERSION`] on any change a
//! reader could trip over (a renamed or removed field, a changed unit or meaning).

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::floors_record::{short_time, source_words, FloorsRecord};
use super::machine::Machine;

/// The version of the JSON layout of every report (docs/benchmark-json.md).
pub const SCHEMA_VERSION: u32 = 4;

/// Which program wrote a report, for which benchmark, when, how and where (top-level JSON fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// [`SCHEMA_VERSION`] of the program that wrote the file.
    pub schema_version: u32,
    /// The benchmark's name (`bench barrier`, `bench phaser`, ...).
    pub benchmark: String,
    /// The `phasers-cli` version that produced the report.
    pub version: String,
    /// The command line, as typed.
    pub command_line: Vec<String>,
    /// When the run started, in seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// The machine the run was on.
    pub machine: Machine,
    /// The floors the library derived its wait budgets from; `None` where it could not settle
    /// them, and in older files.
    #[serde(default)]
    pub floors: Option<FloorsRecord>,
}

impl Provenance {
    /// A run of `benchmark` starting now on this machine, typed as `command_line`.
    pub fn now(benchmark: &str, command_line: Vec<String>) -> Self {
        Provenance {
            schema_version: SCHEMA_VERSION,
            benchmark: benchmark.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            command_line,
            started_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.as_secs()),
            machine: Machine::detect(),
            // Cached by the library: the same values its objects use in this process.
            floors: FloorsRecord::current().ok(),
        }
    }
}

/// The floors as the header of every report states them, after `floors:`.
pub fn floors_line(provenance: &Provenance) -> String {
    match &provenance.floors {
        Some(floors) => format!(
            "round trip {}, yield hand-off {}, wake {} ({}; `phasers floors` explains them)",
            short_time(floors.round_trip_ns),
            short_time(floors.yield_ns),
            short_time(floors.wake_ns),
            source_words(&floors.source)
        ),
        None => "not known: the library could not settle them (see `phasers floors`)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // tests/floors.rs: the line of known floors, in a report of every benchmark.
    #[test]
    fn unknown_floors_say_so() {
        let provenance = Provenance {
            floors: None,
            ..Provenance::now("bench test", Vec::new())
        };
        assert!(floors_line(&provenance).starts_with("not known"));
    }
}
