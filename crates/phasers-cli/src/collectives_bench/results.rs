//! What `bench collectives` writes to `--json` (and, summarized, to `--csv`): the run's settings,
//! the cache-line floor, and one row per operation, size, team and contender at each member
//! count, plus one memcpy row per broadcast length. `docs/benchmark-json.md` describes the fields.
//!
//! Times are nanoseconds per operation; min and median are over the row's timed samples.

use phasers_cli::harness::floor::Floor;
use phasers_cli::harness::provenance::Provenance;
use phasers_cli::harness::row::Row;
use phasers_cli::harness::stats::{self, Summary};
use phasers_cli::harness::table::resolved_label;
use serde::{Deserialize, Serialize};

use super::grid::Shape;
use super::operation::{Operation, Part};

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectivesReport {
    /// Which program, benchmark (`bench collectives`), time and machine.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// How the rows were measured.
    pub settings: CollectivesSettings,
    /// The hardware floor: a cache-line round trip between two threads.
    pub floor: Floor,
    /// Every row, in the order measured.
    pub rows: Vec<CollectiveRow>,
}

/// The settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectivesSettings {
    /// The method, in words.
    pub method: String,
    /// Member counts.
    pub members: Vec<usize>,
    /// The teams the library's rows ran on.
    pub teams: Vec<Shape>,
    /// `--columns` of the grid; `None`: the near-square default, in each row's `columns`.
    pub columns: Option<usize>,
    /// The parts measured.
    pub parts: Vec<Part>,
    /// Broadcast lengths, in u64.
    pub broadcast_words: Vec<usize>,
    /// Alltoall blocks, in u64.
    pub alltoall_blocks: Vec<usize>,
    /// Broadcast lengths of the sync-mode comparison, in u64.
    pub sync_mode_words: Vec<usize>,
    /// How long each row aims to take, in seconds.
    pub time_per_row_s: f64,
    /// Timed samples per row.
    pub samples: usize,
    /// Rounds of part `checked` (`--rounds`).
    pub rounds: usize,
    /// How long each sample aims to take, in milliseconds.
    pub target_sample_ms: f64,
    /// A row stops taking samples after this long, in seconds.
    pub row_budget_s: f64,
    /// Whether each row's threads were pinned to CPUs, round robin.
    pub pinned: bool,
    /// Whether the binary was built with debug assertions: its numbers mean little.
    pub debug_build: bool,
}

/// What a row is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A team's collective.
    #[default]
    Ours,
    /// Our `Barrier`, which a team's barrier and allreduce are held against.
    OurBarrier,
    /// What users would otherwise pick: `std::sync::Barrier`, OpenMP.
    Baseline,
    /// The memcpy a broadcast's bandwidth is a fraction of.
    Memcpy,
}

/// One row: an operation of one size, on one team shape or baseline, at one member count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectiveRow {
    /// The part of the run.
    pub part: Part,
    /// The operation and its size (flattened: `op`, and `words` or `block`).
    #[serde(flatten)]
    pub operation: Operation,
    /// `team`, or the baseline's name (`phasers list`).
    pub name: String,
    /// What the row is.
    pub kind: Kind,
    /// Threads that ran: N (1 for memcpy).
    pub members: usize,
    /// Whether they outnumber the available cores.
    pub oversubscribed: bool,
    /// For teams: which teams.
    pub team: Option<Shape>,
    /// For row and column teams: the grid's columns.
    pub columns: Option<usize>,
    /// For teams: the size of each team that ran at once.
    pub team_sizes: Vec<usize>,
    /// For teams: whether the team checked that every member's call matched.
    pub checked: Option<bool>,
    /// For teams' broadcasts: the sync mode (`AllSync`, `MySync`, `NoSync`).
    pub sync_mode: Option<String>,
    /// For our `Barrier`: the algorithm `auto` resolved to.
    pub resolved: Option<String>,
    /// Planned operations per timed sample.
    pub operations_per_sample: u64,
    /// Nanoseconds per operation in each timed sample, in order.
    pub samples_ns: Vec<f64>,
    /// Statistics over `samples_ns`.
    pub summary: Option<Summary>,
    /// For rows measured in rounds (`--ops checked`): the median of each round, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_medians_ns: Vec<f64>,
    /// Bytes one operation delivers to each receiver (broadcast, memcpy).
    pub payload_bytes: Option<u64>,
    /// `payload_bytes` over the median time, in GB/s: what each receiver gets (the seed's
    /// bandwidth per thread).
    pub bandwidth_gb_s: Option<f64>,
    /// `payload_bytes` times the members that receive it (N less one root per team; 1 for
    /// memcpy), over the median time, in GB/s (the seed's aggregate bandwidth).
    pub aggregate_gb_s: Option<f64>,
    /// For broadcasts: the memcpy's median time over this row's (its bandwidth over memcpy's).
    pub fraction_of_memcpy: Option<f64>,
    /// Wall time of the row, thread start-up and calibration included, in seconds.
    pub row_s: f64,
    /// Anything a reader should know: fewer samples than wanted, a row not run and why.
    pub note: Option<String>,
    /// Why the row failed.
    pub error: Option<String>,
}

/// The name of the library's rows.
pub const TEAM_NAME: &str = "team";

impl CollectiveRow {
    /// A row of `name` with nothing measured yet.
    pub fn blank(part: Part, operation: Operation, name: &str, kind: Kind, members: usize) -> Self {
        CollectiveRow {
            part,
            operation,
            name: name.to_owned(),
            kind,
            members,
            oversubscribed: phasers::is_oversubscribed(members),
            payload_bytes: operation.payload_bytes(),
            ..CollectiveRow::default()
        }
    }

    /// The row of a contender the harness measured (`measured.summary` over its samples, in ns
    /// per operation), with its bandwidth where the operation has a payload.
    pub fn measured(
        part: Part,
        operation: Operation,
        kind: Kind,
        members: usize,
        measured: Row,
    ) -> Self {
        let mut row = CollectiveRow::blank(part, operation, &measured.barrier, kind, members);
        row.record(measured);
        row
    }

    /// Takes what the harness measured into this row.
    pub fn record(&mut self, measured: Row) {
        self.resolved = measured.resolved;
        self.operations_per_sample = measured.episodes_per_sample;
        self.samples_ns = measured.samples_ns;
        self.summary = measured.summary;
        self.row_s = measured.row_s;
        self.note = measured.note;
        self.error = measured.error;
        self.set_bandwidth();
    }

    /// Marks the row as not run, saying why.
    pub fn skip(&mut self, why: &str) {
        self.note = Some(format!("not run: {why}"));
    }

    /// The bandwidth per receiver from the payload and the median.
    fn set_bandwidth(&mut self) {
        self.bandwidth_gb_s = match (self.payload_bytes, self.median()) {
            (Some(bytes), Some(ns)) if ns > 0.0 => Some(bytes as f64 / ns),
            _ => None,
        };
    }

    /// Sets the aggregate bandwidth of a row whose payload reaches `receivers` members each time.
    pub fn set_receivers(&mut self, receivers: usize) {
        self.aggregate_gb_s = self
            .bandwidth_gb_s
            .map(|per_receiver| per_receiver * receivers as f64);
    }

    /// Sets a broadcast's fraction of the memcpy of the same length: the memcpy's median time
    /// over the row's, which is also its bandwidth over the memcpy's.
    pub fn compare_with_memcpy(&mut self, memcpy: &CollectiveRow) {
        self.fraction_of_memcpy = match (memcpy.median(), self.median()) {
            (Some(copy), Some(ours)) if ours > 0.0 && memcpy.error.is_none() => Some(copy / ours),
            _ => None,
        };
    }

    /// One row from its rounds (`--ops checked`), in the order measured: every sample, the
    /// median of each round, and the statistics over all the samples. The first error or note
    /// of a round is the row's.
    pub fn merge_rounds(rounds: Vec<CollectiveRow>) -> Option<CollectiveRow> {
        let mut rounds = rounds.into_iter();
        let mut merged = rounds.next()?;
        merged.round_medians_ns = merged.median().into_iter().collect();
        for round in rounds {
            merged.round_medians_ns.extend(round.median());
            merged.samples_ns.extend(round.samples_ns);
            merged.row_s += round.row_s;
            merged.error = merged.error.or(round.error);
            merged.note = merged.note.or(round.note);
        }
        merged.summary = stats::summarize(&merged.samples_ns);
        merged.set_bandwidth();
        Some(merged)
    }

    /// The median time per operation, when the row has one.
    pub fn median(&self) -> Option<f64> {
        self.summary.map(|summary| summary.median)
    }

    /// The smallest time per operation, when the row has one.
    pub fn min(&self) -> Option<f64> {
        self.summary.map(|summary| summary.min)
    }

    /// What a table calls the row: `team all`, `team row (4 x 8)`, `team all checked`, `team all
    /// NoSync`, `phasers::Barrier auto → mcs-tree`.
    pub fn label(&self) -> String {
        let mut label = self.name.clone();
        if let Some(shape) = self.team {
            label.push(' ');
            label.push_str(shape.name());
            if shape != Shape::All {
                label.push_str(&format!(
                    " ({} x {})",
                    self.team_sizes.len(),
                    sizes_text(&self.team_sizes)
                ));
            }
        }
        if self.part == Part::Checked {
            if let Some(checked) = self.checked {
                label.push_str(if checked { " checked" } else { " unchecked" });
            }
        }
        if self.part == Part::SyncModes {
            if let Some(mode) = &self.sync_mode {
                label.push(' ');
                label.push_str(mode);
            }
        }
        resolved_label(&label, self.resolved.as_deref())
    }
}

/// Team sizes as `8`, or `4-5` when they differ.
fn sizes_text(sizes: &[usize]) -> String {
    match (sizes.iter().min(), sizes.iter().max()) {
        (Some(least), Some(most)) if least == most => least.to_string(),
        (Some(least), Some(most)) => format!("{least}-{most}"),
        _ => "0".to_owned(),
    }
}

/// Rows for the tests of what is drawn from rows (tables, figures, files).
#[cfg(test)]
pub mod tests {
    use super::*;
    use phasers_cli::harness::row::RowKind;

    /// `row` with one sample of `median_ns`, in one round.
    fn sampled(mut row: CollectiveRow, median_ns: f64) -> CollectiveRow {
        row.oversubscribed = false;
        row.operations_per_sample = 10;
        row.samples_ns = vec![median_ns];
        row.summary = stats::summarize(&row.samples_ns);
        row.round_medians_ns = vec![median_ns];
        row
    }

    /// The library's row of `operation` on the teams of `shape` (one team of `members` each).
    pub fn team(
        part: Part,
        operation: Operation,
        members: usize,
        shape: Shape,
        median_ns: f64,
    ) -> CollectiveRow {
        let mut row = CollectiveRow::blank(part, operation, TEAM_NAME, Kind::Ours, members);
        row.team = Some(shape);
        row.team_sizes = vec![members];
        row.checked = Some(false);
        row.sync_mode = Some("AllSync".to_owned());
        sampled(row, median_ns)
    }

    /// A baseline's row.
    pub fn named(
        part: Part,
        operation: Operation,
        name: &str,
        kind: Kind,
        members: usize,
        median_ns: f64,
    ) -> CollectiveRow {
        sampled(
            CollectiveRow::blank(part, operation, name, kind, members),
            median_ns,
        )
    }

    #[test]
    fn labels_say_which_team() {
        let mut row = team(Part::Broadcast, Operation::Barrier, 32, Shape::Row, 5.0);
        row.team_sizes = vec![8; 4];
        assert_eq!(row.label(), "team row (4 x 8)");
        row.team_sizes = vec![4, 4, 3];
        assert_eq!(row.label(), "team row (3 x 3-4)");
        row.team = Some(Shape::All);
        row.part = Part::SyncModes;
        row.sync_mode = Some("NoSync".into());
        assert_eq!(row.label(), "team all NoSync");
        row.part = Part::Checked;
        row.checked = Some(true);
        assert_eq!(row.label(), "team all checked");
        let (part, operation, name) = (Part::Barrier, Operation::Barrier, "phasers::Barrier auto");
        let mut ours = named(part, operation, name, Kind::OurBarrier, 4, 5.0);
        ours.resolved = Some("dissemination".into());
        assert_eq!(ours.label(), "phasers::Barrier auto → dissemination");
    }

    #[test]
    fn rows_survive_a_json_round_trip() {
        let operation = Operation::Alltoall { block: 64 };
        let original = team(Part::Alltoall, operation, 4, Shape::Column, 9.0);
        let text = serde_json::to_string(&original).unwrap();
        assert!(text.contains(r#""op":"alltoall","block":64"#), "{text}");
        assert!(text.contains(r#""part":"alltoall""#), "{text}");
        assert!(text.contains(r#""team":"column""#), "{text}");
        assert_eq!(
            serde_json::from_str::<CollectiveRow>(&text).unwrap(),
            original
        );
    }

    #[test]
    fn a_measured_row_keeps_its_samples_and_gets_its_bandwidths() {
        let mut measured = Row::measured("team", RowKind::Ours, 2, vec![400.0, 200.0]);
        measured.finish(0, None);
        measured.episodes_per_sample = 1000;
        let operation = Operation::Broadcast { words: 100 };
        let mut row = CollectiveRow::measured(Part::Broadcast, operation, Kind::Ours, 4, measured);
        assert_eq!(row.samples_ns, vec![400.0, 200.0]);
        assert_eq!((row.min(), row.median()), (Some(200.0), Some(300.0)));
        assert_eq!(row.operations_per_sample, 1000);
        // 800 bytes in 300 ns.
        assert!((row.bandwidth_gb_s.unwrap() - 800.0 / 300.0).abs() < 1e-12);
        row.set_receivers(3);
        assert!((row.aggregate_gb_s.unwrap() - 3.0 * 800.0 / 300.0).abs() < 1e-12);
        let copy = Operation::Memcpy { words: 100 };
        let copy = named(Part::Broadcast, copy, "memcpy", Kind::Memcpy, 1, 60.0);
        row.compare_with_memcpy(&copy);
        assert!((row.fraction_of_memcpy.unwrap() - 0.2).abs() < 1e-12);
        let failed = Row::failed("team", RowKind::Ours, 2, "boom".into());
        let barrier =
            CollectiveRow::measured(Part::Barrier, Operation::Barrier, Kind::Ours, 4, failed);
        assert_eq!(barrier.bandwidth_gb_s, None);
        assert_eq!(barrier.error.as_deref(), Some("boom"));
    }

    #[test]
    fn merging_rounds_keeps_every_sample_and_each_rounds_median() {
        let round = |samples: &[f64]| {
            let mut row = team(Part::Checked, Operation::Barrier, 2, Shape::All, 0.0);
            row.samples_ns = samples.to_vec();
            row.summary = stats::summarize(samples);
            row.row_s = 0.5;
            row
        };
        let merged =
            CollectiveRow::merge_rounds(vec![round(&[1.0, 2.0, 3.0]), round(&[10.0, 20.0, 30.0])])
                .unwrap();
        assert_eq!(merged.samples_ns.len(), 6);
        assert_eq!(merged.round_medians_ns, vec![2.0, 20.0]);
        assert_eq!(merged.row_s, 1.0);
        assert!(CollectiveRow::merge_rounds(Vec::new()).is_none());
    }
}
