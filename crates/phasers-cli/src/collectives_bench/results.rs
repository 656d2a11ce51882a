//! What `bench collectives` writes to `--json` (and, summarized, to `--csv`): the run's settings,
//! the cache-line floor, and one row per operation, size, team and contender at each member
//! count, plus one memcpy row per broadcast length. `docs/benchmark-json.md` describes the fields.
//!
//! Times are nanoseconds per operation; min and median are over the row's timed samples.

use serde::{Deserialize, Serialize};

use crate::floor::Floor;
use crate::results::Provenance;
use crate::stats::Summary;

use super::grid::Shape;
use super::operation::Operation;
use super::part::Part;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A team's collective.
    Ours,
    /// Our `Barrier`, which a team's barrier and allreduce are held against.
    OurBarrier,
    /// What users would otherwise pick: `std::sync::Barrier`, OpenMP.
    Baseline,
    /// The memcpy a broadcast's bandwidth is a fraction of.
    Memcpy,
}

/// One row: an operation of one size, on one team shape or baseline, at one member count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
        if self.part == super::part::Part::Checked {
            if let Some(checked) = self.checked {
                label.push_str(if checked { " checked" } else { " unchecked" });
            }
        }
        if self.part == super::part::Part::SyncModes {
            if let Some(mode) = &self.sync_mode {
                label.push(' ');
                label.push_str(mode);
            }
        }
        if let Some(resolved) = &self.resolved {
            label.push_str(" → ");
            label.push_str(resolved);
        }
        label
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
    use crate::stats::summarize;

    /// A row of `name` at `members` with one sample of `median_ns`.
    pub fn row(
        part: Part,
        operation: Operation,
        name: &str,
        kind: Kind,
        members: usize,
        team: Option<Shape>,
        median_ns: f64,
    ) -> CollectiveRow {
        CollectiveRow {
            part,
            operation,
            name: name.to_owned(),
            kind,
            members,
            oversubscribed: false,
            team,
            columns: None,
            team_sizes: team.map_or_else(Vec::new, |_| vec![members]),
            checked: team.map(|_| false),
            sync_mode: team.map(|_| "AllSync".to_owned()),
            resolved: None,
            operations_per_sample: 10,
            samples_ns: vec![median_ns],
            summary: summarize(&[median_ns]),
            round_medians_ns: vec![median_ns],
            payload_bytes: operation.payload_bytes(),
            bandwidth_gb_s: None,
            aggregate_gb_s: None,
            fraction_of_memcpy: None,
            row_s: 0.0,
            note: None,
            error: None,
        }
    }

    #[test]
    fn labels_say_which_team() {
        let mut team = row(
            Part::Broadcast,
            Operation::Broadcast { words: 8 },
            TEAM_NAME,
            Kind::Ours,
            32,
            Some(Shape::Row),
            5.0,
        );
        team.team_sizes = vec![8; 4];
        assert_eq!(team.label(), "team row (4 x 8)");
        team.team_sizes = vec![4, 4, 3];
        assert_eq!(team.label(), "team row (3 x 3-4)");
        team.team = Some(Shape::All);
        team.part = Part::SyncModes;
        team.sync_mode = Some("NoSync".into());
        assert_eq!(team.label(), "team all NoSync");
        team.part = Part::Checked;
        team.checked = Some(true);
        assert_eq!(team.label(), "team all checked");
        let mut ours = row(
            Part::Barrier,
            Operation::Barrier,
            "phasers::Barrier auto",
            Kind::OurBarrier,
            4,
            None,
            5.0,
        );
        ours.resolved = Some("dissemination".into());
        assert_eq!(ours.label(), "phasers::Barrier auto → dissemination");
    }

    #[test]
    fn rows_survive_a_json_round_trip() {
        let original = row(
            Part::Alltoall,
            Operation::Alltoall { block: 64 },
            TEAM_NAME,
            Kind::Ours,
            4,
            Some(Shape::Column),
            9.0,
        );
        let text = serde_json::to_string(&original).unwrap();
        assert!(text.contains(r#""op":"alltoall","block":64"#), "{text}");
        assert!(text.contains(r#""part":"alltoall""#), "{text}");
        assert!(text.contains(r#""team":"column""#), "{text}");
        assert_eq!(
            serde_json::from_str::<CollectiveRow>(&text).unwrap(),
            original
        );
    }
}
