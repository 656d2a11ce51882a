//! One row of a benchmark: one contender at one thread count, its raw samples in ns per
//! iteration and their summary, and how rows are measured ([`RowPlan`]: the mode, the schedule,
//! the hang time, pinning, EPCC's delay) on the round [`engine`].
//!
//! `docs/benchmark-json.md` documents the fields (`groups[].rows[]` of the sweeps).
//!
//! ```
//! use std::time::Duration;
//!
//! use phasers::{Algorithm, Barrier};
//! use phasers_cli::harness::row::{into_row, Mode, RowKind, RowPlan};
//! use phasers_cli::harness::schedule::Schedule;
//! use phasers_cli::harness::watchdog::Watch;
//!
//! let plan = RowPlan {
//!     mode: Mode::BackToBack,
//!     schedule: Schedule {
//!         episodes: Some(100),
//!         samples: 3,
//!         target_sample: Duration::from_millis(1),
//!         row_budget: Duration::from_secs(5),
//!     },
//!     hang_after: Duration::from_secs(60),
//!     pin: false,
//!     delay: 0,
//! };
//! let barrier = Barrier::with_algorithm(2, Algorithm::SenseReversing).unwrap();
//! let watch = Watch::new("sense-reversing", 2, plan.hang_after);
//! let measured = plan.measure(barrier.participants(), &watch);
//! let row = into_row("sense-reversing", RowKind::Ours, plan.schedule, measured);
//! assert_eq!(row.error, None);
//! assert_eq!(row.samples_ns.len(), 3);
//! assert!(row.median().is_some_and(|ns| ns > 0.0));
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::engine::{self, Measured, Pacing, Plan};
use super::schedule::Schedule;
use super::stats::{self, Summary};
use super::watchdog::Watch;
use super::work::Work;

/// The words of a row's note that count samples cut short at their round's deadline: the
/// default tables sum such notes up in one line, so they find them by these words.
pub const CUT_SAMPLES: &str = "sample(s) cut";

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

/// How every row of a run is measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RowPlan {
    /// What an iteration is.
    pub mode: Mode,
    /// Rounds and samples.
    pub schedule: Schedule,
    /// A row that completes no round for this long is taken to be hung.
    pub hang_after: Duration,
    /// Whether to pin each row's threads to CPUs, round robin.
    pub pin: bool,
    /// EPCC mode: iterations of the delay loop before each barrier.
    pub delay: u64,
}

impl RowPlan {
    /// The engine's plan of this one, paced as the mode says.
    pub fn engine(&self) -> Plan {
        let pacing = match self.mode {
            Mode::BackToBack => Pacing::BackToBack,
            Mode::Epcc => Pacing::Epcc { delay: self.delay },
        };
        Plan {
            pin: self.pin,
            ..Plan::new(self.schedule, pacing, self.hang_after)
        }
    }

    /// Measures one thread per work as this plan says (see [`engine::threads`]).
    pub fn measure<W: Work>(&self, works: Vec<W>, watch: &Watch) -> Measured {
        engine::threads(works, &self.engine(), watch)
    }
}

/// The raw row of what a row's threads produced: samples in ns per iteration, notes on anything
/// unusual. Nothing is dropped or subtracted yet.
pub fn into_row(name: &str, kind: RowKind, schedule: Schedule, measured: Measured) -> Row {
    let sampler = &measured.sampler;
    let mut row = Row::measured(name, kind, schedule.samples, sampler.per_episode_ns());
    row.error = measured.error;
    row.episodes_per_sample = sampler.episodes();
    row.sample_episodes = sampler
        .samples()
        .iter()
        .map(|sample| sample.episodes)
        .collect();
    row.row_s = measured.elapsed.as_secs_f64();
    let taken = row.raw_ns.len();
    if taken < schedule.samples {
        let why = if sampler.capped() {
            format!(
                "row stopped at its {} s budget",
                schedule.row_budget.as_secs_f64()
            )
        } else {
            "stopped by the error".to_owned()
        };
        row.add_note(format!("{taken} of {} samples: {why}", schedule.samples));
    }
    if sampler.cut() > 0 {
        let at = match schedule.episodes {
            Some(_) => "at the row budget",
            None => "at 4x the target length (preempted, or the barrier slowed)",
        };
        row.add_note(format!("{} {CUT_SAMPLES} {at}", sampler.cut()));
    }
    if let Some(note) = measured.pin_note {
        row.add_note(note);
    }
    row.finish(0, None);
    row
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
