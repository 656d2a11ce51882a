//! What `phasers app` writes to `--json`: the run's settings, one entry per application and
//! size with its sequential run and one row per thread count and barrier kind, the ratios the
//! issue asks for, and the interpreter's cost per NOP. `docs/benchmark-json.md` describes the
//! fields. Times are nanoseconds.

use serde::{Deserialize, Serialize};

use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::stats::Summary;

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppReport {
    /// Which program, benchmark (`app`), time and machine.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// How the rows were measured.
    pub settings: AppSettings,
    /// One entry per application and size, in the order run.
    pub runs: Vec<AppRun>,
    /// The interpreter's NOP program, when `interp` ran: one row per thread count and kind,
    /// and the ideal.
    pub nop: Vec<NopRow>,
}

/// The settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppSettings {
    /// The method, in words.
    pub method: String,
    /// Applications run.
    pub apps: Vec<String>,
    /// Sizes run.
    pub sizes: Vec<String>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Barrier kinds, by name.
    pub sync: Vec<String>,
    /// Runs per row.
    pub repeat: usize,
    /// NOPs per run of the NOP program.
    pub nops: u32,
    /// Whether the binary had debug assertions: its numbers mean little.
    pub debug_build: bool,
}

/// One application at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppRun {
    /// `sor`, `lu`, `streamcluster` or `interp`.
    pub app: String,
    /// `small`, `medium` or `large`.
    pub size: String,
    /// The problem, in words.
    pub problem: String,
    /// The sequential run's time, each repetition.
    pub sequential_samples_ns: Vec<f64>,
    /// Statistics over `sequential_samples_ns`.
    pub sequential: Option<Summary>,
    /// Why the sequential run failed (it is not repeatable), if it did.
    pub sequential_error: Option<String>,
    /// One row per thread count and kind.
    pub rows: Vec<AppRow>,
    /// Per thread count: `auto` against the baselines.
    pub ratios: Vec<Ratios>,
}

/// What a row's kind is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// One of the library's barriers or its phaser.
    Ours,
    /// What users would otherwise pick.
    Baseline,
    /// The interpreter with no barriers at all.
    Ideal,
}

/// Who a row measures, in both tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowId {
    /// Threads.
    pub threads: usize,
    /// Whether they outnumber the available cores.
    pub oversubscribed: bool,
    /// The kind's name (`auto`, an algorithm, `phaser`, `std::sync::Barrier`,
    /// `pthread_barrier_t`, `std::barrier (C++20)`), or `ideal` (no barriers).
    pub sync: String,
    /// Ours, a baseline, or the ideal.
    pub kind: Kind,
    /// For `auto`: the algorithm it resolved to at this thread count.
    pub resolved: Option<String>,
}

/// One thread count and barrier kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppRow {
    /// Threads and kind.
    #[serde(flatten)]
    pub id: RowId,
    /// Barrier waits per thread in one run.
    pub barriers: Option<u64>,
    /// The run's time, each repetition.
    pub samples_ns: Vec<f64>,
    /// Statistics over `samples_ns`.
    pub summary: Option<Summary>,
    /// The sequential run's median over this row's median.
    pub speedup_vs_sequential: Option<f64>,
    /// The same kind's 1-thread median over this row's median.
    pub speedup_vs_one_thread: Option<f64>,
    /// Why the row failed: `failed: ...` or `wrong result: ...`.
    pub error: Option<String>,
}

impl AppRow {
    /// The median run, when the row has one.
    pub fn median(&self) -> Option<f64> {
        self.summary.map(|summary| summary.median)
    }
}

/// `auto` against the baselines at one thread count (medians; below 1: ours is faster).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ratios {
    /// Threads.
    pub threads: usize,
    /// The fastest baseline row at this count.
    pub best_baseline: Option<String>,
    /// `auto` over `best_baseline`.
    pub auto_over_best_baseline: Option<f64>,
    /// `auto` over `std::sync::Barrier`.
    pub auto_over_std: Option<f64>,
}

/// The interpreter's NOP program at one thread count and kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NopRow {
    /// Threads and kind.
    #[serde(flatten)]
    pub id: RowId,
    /// NOPs per run.
    pub nops: u32,
    /// Nanoseconds per NOP, each repetition.
    pub ns_per_nop_samples: Vec<f64>,
    /// Statistics over `ns_per_nop_samples`.
    pub ns_per_nop: Option<Summary>,
    /// Cycles per NOP (x86_64 time-stamp counter ticks), each repetition; empty elsewhere.
    pub cycles_per_nop_samples: Vec<f64>,
    /// Statistics over `cycles_per_nop_samples`.
    pub cycles_per_nop: Option<Summary>,
    /// Barrier waits per NOP and thread (2, a little more for the final agreement; 0 for the
    /// ideal).
    pub barriers_per_nop: Option<f64>,
    /// Why the row failed.
    pub error: Option<String>,
}
