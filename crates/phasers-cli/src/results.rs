//! The results of a run, as written to `--json` and `--csv` and printed as tables.
//!
//! `docs/benchmark-json.md` documents every field; bump the harness's `SCHEMA_VERSION`
//! (`phasers_cli::harness::provenance`) on any change a reader could trip over.

use serde::{Deserialize, Serialize};

pub use phasers_cli::harness::provenance::Provenance;

use crate::floor::Floor;
use crate::noise::RatioRecord;
use crate::regime_floor::RegimeFloor;
use crate::stats::{self, Summary};

/// Everything one sweep (`bench barrier`, `phaser`, `reduction`, `tree`) measured, and under what
/// conditions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Which program, benchmark, time and machine.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// The settings every row ran with.
    pub settings: Settings,
    /// The cache-line round trip, measured in every round at every thread count and merged.
    pub floor: Floor,
    /// One table per thread count, in increasing order.
    pub groups: Vec<Group>,
    /// The floor row of each table, in the order of `groups`: the round trip, or yield hand-offs
    /// where threads outnumber cores.
    #[serde(default)]
    pub regime_floors: Vec<RegimeFloor>,
    /// The ratios printed after the tables, with their noise verdicts.
    #[serde(default)]
    pub ratios: Vec<RatioRecord>,
}

impl Report {
    /// The floor row of the table of `threads` threads, if it has one.
    pub fn regime_floor(&self, threads: usize) -> Option<&RegimeFloor> {
        self.regime_floors
            .iter()
            .find(|floor| floor.threads == threads)
    }
}

/// How the rows were timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// EPCC syncbench: `delay(); barrier()` in a loop, minus the same loop without the barrier;
    /// outer repetitions after a dropped warm-up one.
    Epcc,
    /// Consecutive barrier episodes with no delay (seed 002): the raw cost per episode.
    BackToBack,
}

impl Mode {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Epcc => "epcc",
            Mode::BackToBack => "back-to-back",
        }
    }
}

/// The settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// How the rows were timed.
    pub mode: Mode,
    /// The same, in words.
    pub method: String,
    /// The thread counts swept.
    pub threads: Vec<usize>,
    /// The library algorithms measured.
    pub algorithms: Vec<String>,
    /// The baselines measured (the floor is always measured too).
    pub baselines: Vec<String>,
    /// Whether each row's threads were pinned to CPUs, round robin.
    pub pinned: bool,
    /// The time each test (row) aims to take, in seconds.
    pub time_per_test_s: f64,
    /// Timed samples kept per row (EPCC's outer repetitions), over all its rounds.
    pub samples: usize,
    /// Timed samples taken at the start of each round and dropped as warm-up (EPCC drops the
    /// first of each round).
    pub dropped_samples: usize,
    /// `--rounds`: each row's samples are split into this many rounds, and every row's round `i`
    /// runs before any row's round `i + 1`, so drift in the machine hits every row alike.
    #[serde(default = "one_round")]
    pub rounds: usize,
    /// Episodes per sample when fixed on the command line; `None` when each row sized its own.
    pub episodes: Option<u64>,
    /// Target duration of a sample, in milliseconds.
    pub target_sample_ms: f64,
    /// EPCC's delay before each barrier, in microseconds; `None` in back-to-back mode.
    pub delay_us: Option<f64>,
    /// Iterations of the delay loop that take `delay_us`, calibrated at the start of the run.
    pub delay_iterations: Option<u64>,
    /// A round of a row stops sampling once it has run this long, in seconds.
    pub row_budget_s: f64,
}

/// What files written before rounds existed did: every row in one piece.
fn one_round() -> usize {
    1
}

/// The rows measured at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Threads (and barrier parties) in every row of this group.
    pub threads: usize,
    /// Whether the threads outnumber the available cores.
    pub oversubscribed: bool,
    /// EPCC mode: the reference loop (the delays alone) on the same threads, per iteration; its
    /// mean is subtracted from every row run on Rust threads. `None` in back-to-back mode.
    pub reference_loop: Option<Row>,
    /// EPCC mode with the OpenMP row: the same delays in an OpenMP parallel region with no
    /// barrier, subtracted from the OpenMP row alone.
    pub openmp_reference_loop: Option<Row>,
    /// The rows: the reference barrier, the baselines, then the library's algorithms.
    pub rows: Vec<Row>,
}

impl Group {
    /// The row named `barrier`, when it ran without error.
    pub fn row(&self, barrier: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|row| row.barrier == barrier && row.error.is_none())
    }
}

/// What a row is, for colouring plots and for the ratios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowKind {
    /// The hand-written sense-reversing barrier every ratio divides by.
    Reference,
    /// What users pick today: std, pthread, C++20, OpenMP.
    Baseline,
    /// One of the library's algorithms.
    Ours,
    /// EPCC's reference loop: no barrier at all.
    Loop,
}

/// One barrier at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The barrier's name, as `phasers list` gives it.
    pub barrier: String,
    /// What the row is.
    pub kind: RowKind,
    /// For the library's barriers, the algorithm that ran (what `auto` resolved to).
    pub resolved: Option<String>,
    /// For the library's barriers, the wait policy in force.
    pub wait_policy: Option<String>,
    /// Iterations planned for each timed sample (EPCC's inner repetitions).
    pub episodes_per_sample: u64,
    /// Iterations each timed sample actually ran, dropped ones included: fewer than planned where
    /// a sample was cut short.
    pub sample_episodes: Vec<u64>,
    /// Timed samples wanted, dropped ones included.
    pub samples_wanted: usize,
    /// Nanoseconds per iteration of every timed sample, in the order taken, dropped ones included,
    /// before the reference loop is subtracted.
    pub raw_ns: Vec<f64>,
    /// How many of `raw_ns` were dropped as warm-up: the first of each round (see
    /// `round_samples`), or of the row when it ran in one piece.
    pub dropped: usize,
    /// How many of `raw_ns` each round took, in order; empty when the row ran in one piece.
    #[serde(default)]
    pub round_samples: Vec<usize>,
    /// EPCC mode: the reference loop's time per iteration subtracted from each sample.
    pub reference_ns: Option<f64>,
    /// The cost of one barrier in each kept sample: `raw_ns` past the dropped ones, minus
    /// `reference_ns`.
    pub samples_ns: Vec<f64>,
    /// Statistics over `samples_ns`; `None` when there are none.
    pub summary: Option<Summary>,
    /// The median of each round's kept samples, in the order run; empty when the row ran in one
    /// piece.
    #[serde(default)]
    pub round_medians_ns: Vec<f64>,
    /// The slowest round's median over the fastest's (see `noise::spread`); `None` with fewer
    /// than two rounds.
    #[serde(default)]
    pub spread: Option<f64>,
    /// Whether a ratio printed for this row (its ÷ref and ÷floor, and the ratio lines it heads)
    /// is within the noise of the rounds (see `noise`).
    #[serde(default)]
    pub noisy: bool,
    /// Which of those ratios, and by how much.
    #[serde(default)]
    pub noise: Option<String>,
    /// Wall time the row took, warm-up, calibration and thread start-up included, in seconds.
    pub row_s: f64,
    /// Anything a reader of the numbers should know (fewer samples than wanted, for instance).
    pub note: Option<String>,
    /// Why the row failed, when a wait returned an error or a thread panicked.
    pub error: Option<String>,
}

impl Row {
    /// A row that could not run at all.
    pub fn failed(barrier: &str, kind: RowKind, samples_wanted: usize, error: String) -> Self {
        Row {
            error: Some(error),
            ..Row::measured(barrier, kind, samples_wanted, Vec::new())
        }
    }

    /// A row of raw samples (ns per iteration), not yet [finished](Row::finish).
    pub fn measured(barrier: &str, kind: RowKind, samples_wanted: usize, raw_ns: Vec<f64>) -> Self {
        Row {
            barrier: barrier.to_owned(),
            kind,
            resolved: None,
            wait_policy: None,
            episodes_per_sample: 0,
            sample_episodes: Vec::new(),
            samples_wanted,
            raw_ns,
            dropped: 0,
            round_samples: Vec::new(),
            reference_ns: None,
            samples_ns: Vec::new(),
            summary: None,
            round_medians_ns: Vec::new(),
            spread: None,
            noisy: false,
            noise: None,
            row_s: 0.0,
            note: None,
            error: None,
        }
    }

    /// Drops the first `dropped` samples, subtracts `reference_ns` from the rest and summarizes
    /// them. With fewer samples than that to drop, the row keeps its last one rather than
    /// reporting nothing, and says so.
    pub fn finish(&mut self, dropped: usize, reference_ns: Option<f64>) {
        let dropped = dropped.min(self.raw_ns.len().saturating_sub(1));
        self.dropped = dropped;
        self.reference_ns = reference_ns;
        let minus = reference_ns.unwrap_or(0.0);
        self.samples_ns = self.raw_ns[dropped..]
            .iter()
            .map(|raw| raw - minus)
            .collect();
        self.summary = stats::summarize(&self.samples_ns);
    }

    /// The median cost, when the row has one.
    pub fn median(&self) -> Option<f64> {
        self.summary.map(|summary| summary.median)
    }

    /// The smallest cost, when the row has one.
    pub fn min(&self) -> Option<f64> {
        self.summary.map(|summary| summary.min)
    }

    /// Appends `note` to the row's notes.
    pub fn add_note(&mut self, note: String) {
        self.note = Some(match self.note.take() {
            Some(earlier) => format!("{earlier}; {note}"),
            None => note,
        });
    }

    /// Marks the row noisy, saying which ratio and why (`÷ref: rounds ×1.30 > gap ×1.05`).
    pub fn add_noise(&mut self, noise: String) {
        self.noisy = true;
        self.noise = Some(match self.noise.take() {
            Some(earlier) => format!("{earlier}; {noise}"),
            None => noise,
        });
    }
}

/// A report of `groups` with made-up surroundings, for tests of what is drawn from the groups.
#[cfg(test)]
pub fn report_of(groups: Vec<Group>) -> Report {
    Report {
        provenance: Provenance {
            schema_version: phasers_cli::harness::provenance::SCHEMA_VERSION,
            benchmark: "bench test".into(),
            version: "0".into(),
            command_line: Vec::new(),
            started_unix_s: 0,
            machine: crate::machine::Machine {
                available_cores: 2,
                cpu_model: None,
                os: "linux".into(),
                arch: "x86_64".into(),
                phasers_wait: None,
                phasers_spin: None,
                native: None,
                profile: None,
            },
            floors: None,
        },
        settings: Settings {
            mode: Mode::Epcc,
            method: String::new(),
            threads: groups.iter().map(|group| group.threads).collect(),
            algorithms: Vec::new(),
            baselines: Vec::new(),
            pinned: false,
            time_per_test_s: 1.0,
            samples: 1,
            dropped_samples: 0,
            rounds: 1,
            episodes: None,
            target_sample_ms: 1.0,
            delay_us: None,
            delay_iterations: None,
            row_budget_s: 1.0,
        },
        floor: Floor {
            pinned_to: None,
            round_trips_per_sample: 0,
            samples_ns: Vec::new(),
            min_ns: None,
            median_ns: None,
            note: None,
        },
        groups,
        regime_floors: Vec::new(),
        ratios: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_row(raw: &[f64]) -> Row {
        Row::measured("auto", RowKind::Ours, raw.len(), raw.to_vec())
    }

    #[test]
    fn finishing_drops_the_warm_up_and_subtracts_the_reference() {
        let mut row = raw_row(&[900.0, 300.0, 200.0, 250.0]);
        row.finish(1, Some(100.0));
        assert_eq!(row.dropped, 1);
        assert_eq!(row.samples_ns, vec![200.0, 100.0, 150.0]);
        let summary = row.summary.unwrap();
        assert_eq!(summary.median, 150.0);
        assert_eq!(summary.min, 100.0);
        assert_eq!(summary.mean, 150.0);
    }

    #[test]
    fn finishing_keeps_the_only_sample() {
        let mut row = raw_row(&[500.0]);
        row.finish(1, None);
        assert_eq!(row.dropped, 0);
        assert_eq!(row.samples_ns, vec![500.0]);
        let mut empty = raw_row(&[]);
        empty.finish(1, Some(3.0));
        assert!(empty.samples_ns.is_empty() && empty.summary.is_none());
    }

    #[test]
    fn notes_accumulate() {
        let mut row = raw_row(&[]);
        row.add_note("first".into());
        row.add_note("second".into());
        assert_eq!(row.note.as_deref(), Some("first; second"));
    }

    #[test]
    fn row_survives_a_json_round_trip() {
        let mut row = raw_row(&[101.5, 99.25, 250.0]);
        row.resolved = Some("counting".into());
        row.wait_policy = Some("auto".into());
        row.finish(1, Some(1.0));
        let text = serde_json::to_string(&row).unwrap();
        assert_eq!(serde_json::from_str::<Row>(&text).unwrap(), row);
        assert!(text.contains("\"kind\":\"ours\""), "{text}");
    }

    #[test]
    fn modes_are_kebab_case() {
        assert_eq!(
            serde_json::to_string(&Mode::BackToBack).unwrap(),
            "\"back-to-back\""
        );
        assert_eq!(Mode::Epcc.name(), "epcc");
    }
}
