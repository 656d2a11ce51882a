//! The one result type of every row report (schema 4, `docs/benchmark-json.md`): a [`Row`] is one
//! contender at one parameter point, with its raw samples, their summary and whatever else the
//! benchmark measured beside them; a [`Report`] is the rows of a run with what heads them.

use serde::ser::{Serialize, Serializer};
use serde_json::Value;

use super::engine::Measured;
use super::floor::Floor;
use super::noise;
use super::provenance::Provenance;
use super::resolution::clock_step_ns;
use super::schedule::Schedule;
use super::stats::{self, Summary};

/// Named values in the order declared, written as the keys of the object that holds them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields(pub Vec<(String, Value)>);

impl Fields {
    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find_map(|(k, v)| (k == key).then_some(v))
    }

    /// Sets `key` to `value`, in place when it is already set, else last.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        let value = value.into();
        match self.0.iter_mut().find(|(name, _)| name == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }

    /// These fields with `key` set to `value`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.set(key, value);
        self
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(key, value)| (key, value)))
    }
}

/// What a row is, for ratios, plots and which rows a table shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// One of the library's barriers, phasers or collectives.
    #[default]
    Ours,
    /// What users pick today: std, pthread, C++20, OpenMP.
    Baseline,
    /// What every ratio of its table divides by (the hand-written barrier, the sequential run).
    Reference,
    /// A loop with no synchronization at all, subtracted from other rows.
    Loop,
    /// A hardware floor: the cache-line round trip, yield hand-offs, memory bandwidth.
    Floor,
    /// The work alone, with no synchronization: what a contender could at best reach.
    Ideal,
}

/// One contender at one parameter point: times are ns per iteration. A child process sends one
/// back as JSON; the point and the extra fields do not travel back (the parent knows its point).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// Who ran, as `phasers list` names it.
    pub contender: String,
    /// What the row is.
    pub kind: Kind,
    /// Threads that ran it.
    pub threads: usize,
    /// Whether they outnumber the available cores.
    pub oversubscribed: bool,
    /// The rest of the parameter point (the benchmark's point keys).
    #[serde(flatten, skip_deserializing)]
    pub at: Fields,
    /// What the contender resolved to (`auto` → an algorithm, a phaser's shape).
    pub resolved: Option<String>,
    /// The wait policy in force, for the library's rows.
    pub wait_policy: Option<String>,
    /// Iterations planned for each timed sample.
    pub iterations_per_sample: u64,
    /// Iterations each sample ran, dropped ones included (fewer than planned where cut short).
    pub sample_iterations: Vec<u64>,
    /// Timed samples wanted, dropped ones included.
    pub samples_wanted: usize,
    /// Every sample in the order taken, dropped ones included, before any subtraction.
    pub raw_ns: Vec<f64>,
    /// How many of `raw_ns` were dropped as warm-up (the first of each round).
    pub dropped: usize,
    /// How many of `raw_ns` each round took; empty when the row ran in one piece.
    pub round_samples: Vec<usize>,
    /// The loop's median subtracted from each kept sample, if any.
    pub reference_ns: Option<f64>,
    /// The smallest cost this row can tell from nothing (`harness::resolution`).
    pub resolution_ns: Option<f64>,
    /// The kept samples: `raw_ns` past the dropped ones, minus `reference_ns`.
    pub samples_ns: Vec<f64>,
    /// Statistics over `samples_ns`.
    pub summary: Option<Summary>,
    /// Each round's median, in the order run; empty in one piece.
    pub round_medians_ns: Vec<f64>,
    /// The slowest round's median over the fastest's (`harness::noise`).
    pub spread: Option<f64>,
    /// Whether a ratio printed for this row is within the noise of the rounds.
    pub noisy: bool,
    /// Which ratios are noisy, and by how much.
    pub noise: Option<String>,
    /// What the benchmark measured besides the samples (the benchmark's extra keys).
    #[serde(flatten, skip_deserializing)]
    pub extra: Fields,
    /// Wall time the row took, in seconds.
    pub row_s: f64,
    /// What a reader of the numbers should know.
    pub note: Option<String>,
    /// Why the row failed.
    pub error: Option<String>,
}

impl Row {
    /// A row of `contender` at `threads` with nothing measured yet.
    pub fn new(contender: &str, kind: Kind, threads: usize, at: Fields) -> Self {
        Row {
            contender: contender.to_owned(),
            kind,
            threads,
            oversubscribed: phasers::is_oversubscribed(threads),
            at,
            ..Row::default()
        }
    }

    /// Drops the first `dropped` raw samples (keeping at least one), subtracts `reference_ns`
    /// from the rest and summarizes them.
    pub fn finish(&mut self, dropped: usize, reference_ns: Option<f64>) {
        self.dropped = dropped.min(self.raw_ns.len().saturating_sub(1));
        self.reference_ns = reference_ns;
        let minus = reference_ns.unwrap_or(0.0);
        let kept = &self.raw_ns[self.dropped..];
        self.samples_ns = kept.iter().map(|raw| raw - minus).collect();
        self.summary = stats::summarize(&self.samples_ns);
    }

    /// The median, when the row has one.
    pub fn median(&self) -> Option<f64> {
        self.summary.map(|summary| summary.median)
    }

    /// The smallest sample, when the row has one.
    pub fn min(&self) -> Option<f64> {
        self.summary.map(|summary| summary.min)
    }

    /// The number under `key` in the point or the extra fields.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.field(key)?.as_f64()
    }

    /// The point's or the extra fields' value of `key`.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.at.get(key).or_else(|| self.extra.get(key))
    }

    /// The summary of the extra series `key` (see [`metric`]).
    pub fn metric(&self, key: &str) -> Option<Summary> {
        serde_json::from_value(self.extra.get(key)?.clone()).ok()
    }

    /// The name with what it resolved to, when that differs: `auto → mcs-tree`.
    pub fn label(&self) -> String {
        match &self.resolved {
            Some(to) if *to != self.contender => format!("{} → {to}", self.contender),
            _ => self.contender.clone(),
        }
    }

    /// Appends `note` to the row's notes.
    pub fn add_note(&mut self, note: String) {
        self.note = Some(join(self.note.take(), note));
    }

    /// Marks the row noisy, saying which ratio and why.
    pub fn add_noise(&mut self, noise: String) {
        self.noisy = true;
        self.noise = Some(join(self.noise.take(), noise));
    }

    /// Takes what the engine measured under `schedule`: its samples in ns per iteration (nothing
    /// dropped or subtracted), the clock's resolution per iteration, and a note on anything unusual.
    pub fn record(&mut self, measured: Measured, schedule: &Schedule) {
        let sampler = &measured.sampler;
        self.raw_ns = sampler.per_episode_ns();
        self.iterations_per_sample = sampler.episodes();
        self.sample_iterations = sampler.samples().iter().map(|s| s.episodes).collect();
        self.samples_wanted = schedule.samples;
        self.resolution_ns = Some(clock_step_ns() / self.iterations_per_sample.max(1) as f64);
        self.row_s = measured.elapsed.as_secs_f64();
        self.error = measured.error;
        let taken = self.raw_ns.len();
        if taken < schedule.samples {
            let budget = schedule.row_budget.as_secs_f64();
            let why = match sampler.capped() {
                true => format!("row stopped at its {budget} s budget"),
                false => "stopped by the error".to_owned(),
            };
            self.add_note(format!("{taken} of {} samples: {why}", schedule.samples));
        }
        if sampler.cut() > 0 {
            let at = match schedule.episodes {
                Some(_) => "at the row budget",
                None => "at 4x the target length (preempted, or the barrier slowed)",
            };
            self.add_note(format!("{} sample(s) cut {at}", sampler.cut()));
        }
        if let Some(note) = measured.pin_note {
            self.add_note(note);
        }
        self.finish(0, None);
    }
}

fn join(earlier: Option<String>, more: String) -> String {
    earlier.map_or_else(|| more.clone(), |earlier| format!("{earlier}; {more}"))
}

/// An extra series as a row records it: its samples and their summary in one object.
pub fn metric(samples: &[f64]) -> Value {
    let summary = serde_json::to_value(stats::summarize(samples)).unwrap_or_default();
    let mut object = summary.as_object().cloned().unwrap_or_default();
    object.insert("samples".into(), samples.into());
    Value::Object(object)
}

/// A whole run: what heads it, its settings, the run's floor, the rows and the ratios.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// Which program, benchmark, time and machine.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// How the rows were measured.
    pub settings: Settings,
    /// The cache-line round trip of the run, where it measured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<Floor>,
    /// Every row, in the order run.
    pub rows: Vec<Row>,
    /// The ratios printed after the tables.
    pub ratios: Vec<RatioRecord>,
}

/// A ratio as the JSON records it: the table's point (threads first), then the ratio.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RatioRecord {
    /// The point of the numerator's row, besides its thread count.
    #[serde(flatten)]
    pub at: Fields,
    /// Threads, sides, medians, the ratio and its noise verdict.
    #[serde(flatten)]
    pub record: noise::RatioRecord,
}

/// The settings every report states, and the benchmark's own.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Settings {
    /// The method, in words.
    pub method: String,
    /// The thread counts run.
    pub threads: Vec<usize>,
    /// The contenders run, by name.
    pub contenders: Vec<String>,
    /// Whether each row's threads were pinned to CPUs.
    pub pinned: bool,
    /// Whether the binary had debug assertions: its numbers mean little.
    pub debug_build: bool,
    /// The benchmark's own settings.
    #[serde(flatten)]
    pub own: Fields,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_keeps_its_keys_in_order_and_finishes_from_raw_samples() {
        let at = Fields::default().with("app", "sor").with("size", "small");
        let mut row = Row::new("auto", Kind::Ours, 2, at);
        row.raw_ns = vec![900.0, 300.0, 100.0, 200.0];
        row.finish(1, Some(50.0));
        assert_eq!(row.dropped, 1);
        assert_eq!(row.samples_ns, [250.0, 50.0, 150.0]);
        assert_eq!((row.median(), row.min()), (Some(150.0), Some(50.0)));
        row.extra.set("barriers", 7);
        row.extra.set("cycles", metric(&[3.0, 5.0]));
        assert_eq!(row.value("barriers"), Some(7.0));
        assert_eq!(row.field("app"), Some(&"sor".into()));
        assert_eq!(row.metric("cycles").unwrap().median, 4.0);
        row.add_note("a".into());
        row.add_note("b".into());
        assert_eq!(row.note.as_deref(), Some("a; b"));
        let text = serde_json::to_string(&row).unwrap();
        let order = "contender app size resolved barriers row_s".split(' ');
        let find = |key| text.find(&format!("\"{key}\"")).unwrap();
        let at: Vec<usize> = order.map(find).collect();
        assert!(at.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
    }
}
