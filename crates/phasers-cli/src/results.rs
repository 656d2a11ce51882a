//! The results of a run, as written to `--json` and printed as tables.

use serde::{Deserialize, Serialize};

use crate::floor::Floor;
use crate::machine::Machine;

/// Everything one `phasers bench barrier` run measured, and under what conditions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The benchmark's name, so files from later benchmarks can be told apart.
    pub benchmark: String,
    /// The `phasers-cli` version that produced the report.
    pub version: String,
    /// The command line, as typed.
    pub command_line: Vec<String>,
    /// When the run started, in seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// The machine the run was on.
    pub machine: Machine,
    /// The settings every row ran with.
    pub settings: Settings,
    /// The hardware floor, measured once per run.
    pub floor: Floor,
    /// One table per thread count, in increasing order.
    pub groups: Vec<Group>,
}

/// The settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// How the rows were measured, in words.
    pub method: String,
    /// The thread counts swept.
    pub threads: Vec<usize>,
    /// The library algorithms measured (the baselines always are).
    pub algorithms: Vec<String>,
    /// Timed samples wanted per row.
    pub samples: usize,
    /// Episodes per sample when fixed on the command line; `None` when each row calibrated its own.
    pub episodes: Option<u64>,
    /// Target duration of a calibrated sample, in milliseconds.
    pub target_sample_ms: f64,
    /// A row stops sampling once it has run this long, in seconds.
    pub row_budget_s: f64,
}

/// The rows measured at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Threads (and barrier parties) in every row of this group.
    pub threads: usize,
    /// Whether the threads outnumber the available cores.
    pub oversubscribed: bool,
    /// The rows: baselines first, then the library's algorithms.
    pub rows: Vec<Row>,
}

/// One barrier at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The barrier's name: `reference`, `std::sync::Barrier`, or an algorithm name.
    pub barrier: String,
    /// For the library's barriers, the algorithm that ran (what `auto` resolved to).
    pub resolved: Option<String>,
    /// For the library's barriers, the wait policy in force.
    pub wait_policy: Option<String>,
    /// Back-to-back episodes planned for each timed sample.
    pub episodes_per_sample: u64,
    /// Episodes each timed sample actually ran: fewer than planned where a sample was cut short.
    pub sample_episodes: Vec<u64>,
    /// Timed samples wanted.
    pub samples_wanted: usize,
    /// Nanoseconds per episode, one value per timed sample, in the order taken.
    pub samples_ns: Vec<f64>,
    /// The smallest of `samples_ns`.
    pub min_ns: Option<f64>,
    /// The median of `samples_ns`.
    pub median_ns: Option<f64>,
    /// Wall time the row took, warm-up, calibration and thread start-up included, in seconds.
    pub row_s: f64,
    /// Anything a reader of the numbers should know (fewer samples than wanted, for instance).
    pub note: Option<String>,
    /// Why the row failed, when a wait returned an error or a thread panicked.
    pub error: Option<String>,
}

impl Row {
    /// A row that could not run at all.
    pub fn failed(barrier: &str, samples_wanted: usize, error: String) -> Self {
        Row {
            barrier: barrier.to_owned(),
            resolved: None,
            wait_policy: None,
            episodes_per_sample: 0,
            sample_episodes: Vec::new(),
            samples_wanted,
            samples_ns: Vec::new(),
            min_ns: None,
            median_ns: None,
            row_s: 0.0,
            note: None,
            error: Some(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_survives_a_json_round_trip() {
        let row = Row {
            barrier: "auto".into(),
            resolved: Some("counting".into()),
            wait_policy: Some("auto".into()),
            episodes_per_sample: 123_456,
            sample_episodes: vec![123_456, 123_456, 1000],
            samples_wanted: 7,
            samples_ns: vec![101.5, 99.25, 250.0],
            min_ns: Some(99.25),
            median_ns: Some(101.5),
            row_s: 0.75,
            note: Some("3 of 7 samples".into()),
            error: None,
        };
        let text = serde_json::to_string(&row).unwrap();
        assert_eq!(serde_json::from_str::<Row>(&text).unwrap(), row);
    }

    #[test]
    fn report_survives_a_json_round_trip() {
        let report = Report {
            benchmark: "bench barrier".into(),
            version: "0.1.0".into(),
            command_line: vec!["phasers".into()],
            started_unix_s: 1,
            machine: Machine {
                available_cores: 2,
                cpu_model: None,
                os: "linux".into(),
                arch: "x86_64".into(),
                phasers_wait: Some("spin".into()),
                phasers_spin: None,
            },
            settings: Settings {
                method: "back-to-back".into(),
                threads: vec![1, 2],
                algorithms: vec!["auto".into()],
                samples: 7,
                episodes: None,
                target_sample_ms: 60.0,
                row_budget_s: 3.0,
            },
            floor: Floor {
                pinned_to: Some([0, 1]),
                round_trips_per_sample: 1000,
                samples_ns: vec![150.0],
                min_ns: Some(150.0),
                median_ns: Some(150.0),
                note: None,
            },
            groups: vec![Group {
                threads: 2,
                oversubscribed: false,
                rows: vec![Row::failed("mcs", 7, "boom".into())],
            }],
        };
        let text = serde_json::to_string_pretty(&report).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), report);
    }

    #[test]
    fn failed_row_has_no_numbers() {
        let row = Row::failed("mcs", 7, "broken".into());
        assert_eq!(row.error.as_deref(), Some("broken"));
        assert!(row.samples_ns.is_empty() && row.median_ns.is_none());
    }
}
