//! What `bench reduce` writes to `--json` (and, summarized, to `--csv`): the run's settings, the
//! cache-line floor, and one row per contender and point (participants, array length, spread,
//! collective), plus one bandwidth-floor row per participants, length and collective.
//!
//! Times are nanoseconds per iteration; each summary is over the measured iterations, the warm-up
//! left out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::provenance::Provenance;

use super::config::{Point, ReduceSettings};
use super::contender::{Contender, Kind};
use super::metrics::{Metric, Summaries};
use super::workload::Collective;
use phasers_cli::harness::stalls::{Realized, StallPolicy};

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReduceReport {
    /// Which program, benchmark (`bench reduce`), time and machine.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// How the rows were measured.
    pub settings: ReduceSettings,
    /// The hardware floor: a cache-line round trip between two threads.
    pub floor: Floor,
    /// Every row, in the order measured: for each participant count, collective and spread, each
    /// length's bandwidth floor (the first time that length comes up) and contenders.
    pub rows: Vec<ReduceRow>,
}

/// One contender (or the bandwidth floor) at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReduceRow {
    /// The contender's name (`phasers list`), or `bandwidth floor`.
    pub name: String,
    /// What the row is.
    pub kind: Kind,
    /// Participants, N.
    pub threads: usize,
    /// Threads that ran: N, except for the bandwidth floor (min(N, cores)).
    pub workers: usize,
    /// Whether the threads that ran outnumber the available cores.
    pub oversubscribed: bool,
    /// Floats per array.
    pub len: usize,
    /// `reduce` or `allreduce`.
    pub mode: Collective,
    /// The spread's name; `None` for the bandwidth floor, which does not stall.
    pub spread: Option<String>,
    /// The stalls actually drawn for this point (all iterations in the table, not just those run).
    pub realized_spread: Option<Realized>,
    /// How the stalls waited.
    pub stall_policy: Option<StallPolicy>,
    /// For `auto`: how many measured iterations ran each algorithm.
    pub chose: BTreeMap<String, usize>,
    /// Measured iterations.
    pub iterations: usize,
    /// The metrics.
    #[serde(flatten)]
    pub summaries: Summaries,
    /// Bytes an optimal reduction of the point moves (and the floor's add moves).
    pub bytes: u64,
    /// `bytes` over the median time from the first arrival to completion (for the bandwidth floor,
    /// over the median of its slowest worker's time), in GB/s.
    pub bandwidth_gb_s: Option<f64>,
    /// `bandwidth_gb_s` over the bandwidth floor's at the same point.
    pub fraction_of_floor: Option<f64>,
    /// Wall time of the row, thread start-up and warm-up included, in seconds.
    pub row_s: f64,
    /// Anything a reader should know (a row cut by its budget, one skipped for memory).
    pub note: Option<String>,
    /// Why the row failed.
    pub error: Option<String>,
}

impl ReduceRow {
    /// The row of `contender` at `point`, not run (yet), saying why when `why` is given.
    pub fn skipped(contender: Contender, point: &Point<'_>, why: Option<&str>) -> ReduceRow {
        let (name, kind) = (contender.name(), contender.kind());
        let (threads, len) = (point.threads, point.len);
        let mut row = ReduceRow::new(name, kind, threads, threads, len, point.collective);
        row.spread = Some(point.spread.name());
        row.note = why.map(|why| format!("not run: {why}"));
        row
    }

    /// The row of `name` at a point, nothing measured yet.
    pub fn new(
        name: &str,
        kind: Kind,
        threads: usize,
        workers: usize,
        len: usize,
        mode: Collective,
    ) -> Self {
        ReduceRow {
            name: name.to_owned(),
            kind,
            threads,
            workers,
            oversubscribed: phasers::is_oversubscribed(workers),
            len,
            mode,
            spread: None,
            realized_spread: None,
            stall_policy: None,
            chose: BTreeMap::new(),
            iterations: 0,
            summaries: Summaries::default(),
            bytes: mode.bytes(threads, len),
            bandwidth_gb_s: None,
            fraction_of_floor: None,
            row_s: 0.0,
            note: None,
            error: None,
        }
    }

    /// The median of `metric`, when the row has one.
    pub fn median(&self, metric: Metric) -> Option<f64> {
        self.summaries.of(metric).map(|summary| summary.median)
    }

    /// Whether the row is of `name` at this point (any spread for the floor).
    pub fn is_at(
        &self,
        name: &str,
        threads: usize,
        len: usize,
        mode: Collective,
        spread: Option<&str>,
    ) -> bool {
        self.name == name
            && self.threads == threads
            && self.len == len
            && self.mode == mode
            && (self.kind == Kind::Floor || self.spread.as_deref() == spread)
    }

    /// The row's name with what `auto` chose: `auto → static-tree`, or the shares when it
    /// changed its mind.
    pub fn label(&self) -> String {
        let total: usize = self.chose.values().sum();
        let mut chosen: Vec<(&String, &usize)> = self.chose.iter().collect();
        chosen.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        match chosen[..] {
            [] => self.name.clone(),
            [(only, _)] if *only != self.name => format!("{} → {only}", self.name),
            [_] => self.name.clone(),
            _ => {
                let shares: Vec<String> = chosen
                    .iter()
                    .map(|(name, count)| format!("{name} {}", share(**count, total)))
                    .collect();
                format!("{} → {}", self.name, shares.join(", "))
            }
        }
    }
}

/// `count` of `total` as a percentage, never rounded down to nothing.
fn share(count: usize, total: usize) -> String {
    let percent = count as f64 * 100.0 / total.max(1) as f64;
    if count > 0 && percent < 0.5 {
        "<1%".to_owned()
    } else {
        format!("{percent:.0}%")
    }
}

/// Adds `note` to `existing`.
pub fn add_note(existing: &mut Option<String>, note: String) {
    *existing = Some(match existing.take() {
        Some(earlier) => format!("{earlier}; {note}"),
        None => note,
    });
}

/// Rows for the tests of what is drawn from rows (tables, ratios, files).
#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::reduce_bench::contender::{Contender, FLOOR_NAME};
    use phasers_cli::harness::stats::summarize;

    /// A row with the given medians (last arrival, total), for tests of what is drawn from rows;
    /// its kind is the contender's of that name, or the floor's, or ours for any other name.
    pub fn row(
        name: &str,
        threads: usize,
        len: usize,
        mode: Collective,
        spread: Option<&str>,
        medians: (f64, f64),
    ) -> ReduceRow {
        let contender = Contender::all().into_iter().find(|c| c.name() == name);
        let kind = match name {
            FLOOR_NAME => Kind::Floor,
            _ => contender.map_or(Kind::Ours, Contender::kind),
        };
        let mut row = ReduceRow::new(name, kind, threads, threads, len, mode);
        row.oversubscribed = false;
        row.spread = spread.map(str::to_owned);
        row.iterations = 1;
        row.summaries = Summaries {
            last_arrival_to_completion_ns: summarize(&[medians.0]),
            total_in_reduction_ns: summarize(&[medians.1]),
            arrival_window_ns: summarize(&[0.0]),
            first_arrival_to_completion_ns: summarize(&[medians.0]),
            longest_call_ns: summarize(&[medians.0]),
        };
        row
    }

    #[test]
    fn labels_say_what_auto_chose() {
        let mut auto = row("auto", 2, 10, Collective::Reduce, None, (1.0, 2.0));
        assert_eq!(auto.label(), "auto");
        auto.chose.insert("static-tree".into(), 20);
        assert_eq!(auto.label(), "auto → static-tree");
        auto.chose.insert("linear".into(), 5);
        assert_eq!(auto.label(), "auto → static-tree 80%, linear 20%");
        auto.chose.insert("dynamic-pairs".into(), 10_000);
        assert!(auto.label().ends_with("linear <1%"), "{}", auto.label());
        let mut linear = row("linear", 2, 10, Collective::Reduce, None, (1.0, 2.0));
        linear.chose.insert("linear".into(), 3);
        assert_eq!(linear.label(), "linear");
    }

    #[test]
    fn rows_survive_json_and_find_their_point() {
        let high = Some("high");
        let mut auto = row("auto", 4, 1000, Collective::Allreduce, high, (5.0, 9.0));
        auto.chose.insert("dynamic-pairs".into(), 7);
        let text = serde_json::to_string(&auto).unwrap();
        assert!(text.contains("\"last_arrival_to_completion_ns\""), "{text}");
        assert_eq!(serde_json::from_str::<ReduceRow>(&text).unwrap(), auto);
        assert!(auto.is_at("auto", 4, 1000, Collective::Allreduce, high));
        assert!(!auto.is_at("auto", 4, 1000, Collective::Allreduce, Some("none")));
        // The floor is at every spread of its point.
        let floor = row(
            "bandwidth floor",
            4,
            1000,
            Collective::Allreduce,
            None,
            (1.0, 1.0),
        );
        assert!(floor.is_at("bandwidth floor", 4, 1000, Collective::Allreduce, high));
    }
}
