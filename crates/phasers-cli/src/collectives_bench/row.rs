//! Turning what the harness measured into a report row, and a broadcast's bandwidth into a
//! fraction of the memcpy's.

use crate::results::Row;

use super::operation::Operation;
use super::part::Part;
use super::results::{CollectiveRow, Kind};

/// The row of `name` at `members` threads from what the harness measured (`measured.summary`
/// over its samples, in ns per operation), with its bandwidth where the operation has a payload.
pub fn from_measured(
    part: Part,
    operation: Operation,
    name: &str,
    kind: Kind,
    members: usize,
    measured: Row,
) -> CollectiveRow {
    let mut row = blank(part, operation, name, kind, members);
    row.resolved = measured.resolved;
    row.operations_per_sample = measured.episodes_per_sample;
    row.summary = measured.summary;
    row.samples_ns = measured.samples_ns;
    row.row_s = measured.row_s;
    row.note = measured.note;
    row.error = measured.error;
    row.bandwidth_gb_s = match (row.payload_bytes, row.median()) {
        (Some(bytes), Some(ns)) if ns > 0.0 => Some(bytes as f64 / ns),
        _ => None,
    };
    row
}

/// A row that was not run, saying why.
pub fn skipped(
    part: Part,
    operation: Operation,
    name: &str,
    kind: Kind,
    members: usize,
    why: &str,
) -> CollectiveRow {
    let mut row = blank(part, operation, name, kind, members);
    row.note = Some(format!("not run: {why}"));
    row
}

/// A row of `name` with nothing measured yet.
pub fn blank(
    part: Part,
    operation: Operation,
    name: &str,
    kind: Kind,
    members: usize,
) -> CollectiveRow {
    CollectiveRow {
        part,
        operation,
        name: name.to_owned(),
        kind,
        members,
        oversubscribed: phasers::is_oversubscribed(members),
        team: None,
        columns: None,
        team_sizes: Vec::new(),
        checked: None,
        sync_mode: None,
        resolved: None,
        operations_per_sample: 0,
        samples_ns: Vec::new(),
        summary: None,
        round_medians_ns: Vec::new(),
        payload_bytes: operation.payload_bytes(),
        bandwidth_gb_s: None,
        aggregate_gb_s: None,
        fraction_of_memcpy: None,
        row_s: 0.0,
        note: None,
        error: None,
    }
}

/// Sets the aggregate bandwidth of a row whose payload reaches `receivers` members each time.
pub fn set_receivers(row: &mut CollectiveRow, receivers: usize) {
    row.aggregate_gb_s = row
        .bandwidth_gb_s
        .map(|per_receiver| per_receiver * receivers as f64);
}

/// Sets a broadcast's fraction of the memcpy of the same length: the memcpy's median time over
/// the row's, which is also its bandwidth over the memcpy's.
pub fn compare_with_memcpy(row: &mut CollectiveRow, memcpy: &CollectiveRow) {
    row.fraction_of_memcpy = match (memcpy.median(), row.median()) {
        (Some(copy), Some(ours)) if ours > 0.0 && memcpy.error.is_none() => Some(copy / ours),
        _ => None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RowKind;

    #[test]
    fn a_measured_row_keeps_its_samples_and_gets_a_bandwidth() {
        let mut measured = Row::measured("team", RowKind::Ours, 2, vec![400.0, 200.0]);
        measured.finish(0, None);
        measured.episodes_per_sample = 1000;
        let operation = Operation::Broadcast { words: 100 };
        let mut row = from_measured(Part::Broadcast, operation, "team", Kind::Ours, 4, measured);
        assert_eq!(row.samples_ns, vec![400.0, 200.0]);
        assert_eq!(row.median(), Some(300.0));
        assert_eq!(row.min(), Some(200.0));
        assert_eq!(row.operations_per_sample, 1000);
        // 800 bytes in 300 ns.
        assert!((row.bandwidth_gb_s.unwrap() - 800.0 / 300.0).abs() < 1e-12);
        set_receivers(&mut row, 3);
        assert!((row.aggregate_gb_s.unwrap() - 3.0 * 800.0 / 300.0).abs() < 1e-12);
        let mut copy = Row::measured("memcpy", RowKind::Baseline, 1, vec![60.0]);
        copy.finish(0, None);
        let copy = from_measured(
            Part::Broadcast,
            Operation::Memcpy { words: 100 },
            "memcpy",
            Kind::Memcpy,
            1,
            copy,
        );
        compare_with_memcpy(&mut row, &copy);
        assert!((row.fraction_of_memcpy.unwrap() - 0.2).abs() < 1e-12);
        let barrier = from_measured(
            Part::Barrier,
            Operation::Barrier,
            "team",
            Kind::Ours,
            4,
            Row::failed("team", RowKind::Ours, 2, "boom".into()),
        );
        assert_eq!(barrier.bandwidth_gb_s, None);
        assert_eq!(barrier.error.as_deref(), Some("boom"));
        let not_run = skipped(Part::Alltoall, operation, "team", Kind::Ours, 64, "too big");
        assert_eq!(not_run.note.as_deref(), Some("not run: too big"));
    }
}
