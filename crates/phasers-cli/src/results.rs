//! The results of a run, as written to `--json` and `--csv` and printed as tables.
//!
//! `docs/benchmark-json.md` documents every field; bump the harness's `SCHEMA_VERSION`
//! (`phasers_cli::harness::provenance`) on any change a reader could trip over.

use serde::{Deserialize, Serialize};

use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::row::{Mode, Row};

use crate::regime_floor::RegimeFloor;
use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::noise::RatioRecord;
use phasers_cli::harness::resolution::{below, clock_step_ns, resolution_ns};

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

    /// The reference loop whose median was taken off `row`'s samples (EPCC mode), if any.
    pub fn subtracted(&self, row: &Row) -> Option<&Row> {
        let taken = row.reference_ns?;
        [&self.reference_loop, &self.openmp_reference_loop]
            .into_iter()
            .flatten()
            .find(|reference| reference.median() == Some(taken))
    }

    /// The smallest cost `row` can tell from nothing, in ns (see `harness::resolution`).
    pub fn resolution_ns(&self, row: &Row) -> f64 {
        resolution_ns(row, self.subtracted(row), clock_step_ns())
    }

    /// `row`'s median, when it ran without error and its median is above its resolution: the
    /// only medians that are anyone's best or a side of a ratio.
    pub fn cost(&self, row: &Row) -> Option<f64> {
        let median = row.median().filter(|_| row.error.is_none())?;
        (!below(median, self.resolution_ns(row))).then_some(median)
    }
}

/// Made-up rows, tables and reports, for the tests of what is drawn from them.
#[cfg(test)]
pub mod fixtures {
    use super::*;
    use phasers_cli::harness::row::RowKind;

    /// A row measured in one piece with these samples.
    pub fn row(barrier: &str, kind: RowKind, samples: &[f64]) -> Row {
        let mut row = Row::measured(barrier, kind, samples.len(), samples.to_vec());
        row.finish(0, None);
        row
    }

    /// A row measured in rounds of one sample each, with these medians, merged as a sweep merges
    /// them.
    pub fn rounds_row(barrier: &str, kind: RowKind, medians: &[f64]) -> Row {
        let each: Vec<Row> = medians
            .iter()
            .map(|&median| Row::measured(barrier, kind, 1, vec![median]))
            .collect();
        crate::rounds::merge(&each, 0, None)
    }

    /// A cache-line round trip pinned to CPUs 0 and 1, with these samples.
    pub fn floor(samples: &[f64]) -> Floor {
        Floor {
            pinned_to: Some([0, 1]),
            round_trips_per_sample: 1000,
            samples_ns: samples.to_vec(),
            min_ns: phasers_cli::harness::stats::min(samples),
            median_ns: phasers_cli::harness::stats::median(samples),
            note: None,
        }
    }

    /// The table of `threads` threads with `rows` and no reference loops.
    pub fn group(threads: usize, oversubscribed: bool, rows: Vec<Row>) -> Group {
        Group {
            threads,
            oversubscribed,
            reference_loop: None,
            openmp_reference_loop: None,
            rows,
        }
    }

    /// `group` as EPCC measures it: a reference loop of these samples (ns per iteration), its
    /// median taken off every row (the rows' samples are already the costs).
    pub fn with_reference_loop(mut group: Group, loop_samples: &[f64]) -> Group {
        let reference_loop = row("reference loop", RowKind::Loop, loop_samples);
        for row in &mut group.rows {
            row.reference_ns = reference_loop.median();
        }
        group.reference_loop = Some(reference_loop);
        group
    }

    /// A report of `groups` with made-up surroundings, for tests of what is drawn from the groups.
    pub fn report_of(groups: Vec<Group>) -> Report {
        Report {
            provenance: Provenance {
                schema_version: phasers_cli::harness::provenance::SCHEMA_VERSION,
                benchmark: "bench test".into(),
                version: "0".into(),
                command_line: Vec::new(),
                started_unix_s: 0,
                machine: phasers_cli::harness::machine::Machine {
                    available_cores: 2,
                    cpu_model: None,
                    os: "linux".into(),
                    arch: "x86_64".into(),
                    phasers_wait: None,
                    phasers_spin: None,
                    phasers_wake: None,
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
}
