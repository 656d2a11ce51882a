//! Which rows of a barrier sweep are noisy: the rule is the harness's
//! ([`phasers_cli::harness::noise`]); this applies it to a table's ÷ref and ÷floor columns and to
//! the ratio lines under it.

use phasers_cli::harness::noise::{RatioRecord, Side};

use crate::contender::Contender;
use crate::regime_floor::RegimeFloor;
use crate::results::Group;
use phasers_cli::harness::row::RowKind;

/// Marks noisy every row whose line in the table holds a noisy ratio (÷ref, ÷floor), and every row
/// above the line of a noisy ratio in `records` (those over the reference or the floor are the
/// same ratios as the columns, and said once).
pub fn mark_rows(group: &mut Group, floor: &RegimeFloor, records: &[RatioRecord]) {
    let reference_name = Contender::Reference.name();
    let reference = group.row(&reference_name).and_then(Side::of);
    let floor = floor.side();
    for row in &mut group.rows {
        let Some(side) = Side::of(row) else {
            continue;
        };
        // The reference over itself is 1.00x whatever its rounds did.
        let reference = reference
            .as_ref()
            .filter(|_| row.kind != RowKind::Reference);
        for (column, divisor) in [("÷ref", reference), ("÷floor", floor.as_ref())] {
            let Some(divisor) = divisor else { continue };
            if let Some(noise) = RatioRecord::of(group.threads, column.into(), &side, divisor)
                .and_then(|record| record.noise)
            {
                row.add_noise(format!("{column}: {noise}"));
            }
        }
        let heads: Vec<String> = records
            .iter()
            .filter(|record| record.numerator == row.barrier)
            .filter(|record| ![reference_name.as_ref(), "floor"].contains(&&*record.denominator))
            .filter_map(|record| Some(format!("{}: {}", record.label, record.noise.as_ref()?)))
            .collect();
        for noise in heads {
            row.add_noise(noise);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_cli::harness::row::Row;

    fn rounds_row(barrier: &str, kind: RowKind, medians: &[f64]) -> Row {
        let each: Vec<Row> = medians
            .iter()
            .map(|&median| Row::measured(barrier, kind, 1, vec![median]))
            .collect();
        crate::rounds::merge(&each, 0, None)
    }

    #[test]
    fn rows_whose_ratios_are_within_their_rounds_are_marked_noisy() {
        let mut group = Group {
            threads: 2,
            oversubscribed: false,
            reference_loop: None,
            openmp_reference_loop: None,
            rows: vec![
                rounds_row("reference", RowKind::Reference, &[100.0, 130.0, 100.0]),
                // 5% slower than the reference, with rounds 20% apart: noisy.
                rounds_row("auto", RowKind::Ours, &[105.0, 126.0, 105.0]),
                // Three times the reference: settled, whatever the rounds did.
                rounds_row("mcs", RowKind::Ours, &[300.0, 360.0, 300.0]),
                rounds_row("std::sync::Barrier", RowKind::Baseline, &[110.0; 3]),
            ],
        };
        let floor = RegimeFloor::yield_handoffs(2, 1, &[25.0, 25.0, 25.0]);
        let records = crate::barrier_ratios::records(&group, Some(&floor));
        mark_rows(&mut group, &floor, &records);
        let [reference, auto, mcs, std] = &group.rows[..] else {
            panic!("four rows")
        };
        assert!(
            !reference.noisy,
            "not divided by itself: {:?}",
            reference.noise
        );
        assert!(auto.noisy);
        let noise = auto.noise.as_deref().unwrap();
        // Against the reference once (its column), against std as the ratio lines say.
        assert!(
            noise.starts_with("÷ref: rounds ×1.30 > gap ×1.05; "),
            "{noise}"
        );
        assert!(noise.ends_with("auto / std::sync::Barrier: rounds ×1.20 > gap ×1.05"));
        // Std's own rounds agree, but the reference's do not: its ÷ref is noise too.
        assert_eq!(std.noise.as_deref(), Some("÷ref: rounds ×1.30 > gap ×1.10"));
        assert!(!mcs.noisy && mcs.noise.is_none(), "{:?}", mcs.noise);
    }
}
