//! The ratios a phaser report ends with: a phaser against our best barrier, OpenMP against a
//! phaser. Each is a ratio of medians measured in the same run, at the same thread count, marked
//! noisy when the rows' rounds disagree by more than the ratio's distance from 1 (see `noise`).

use std::borrow::Cow;

use crate::report::barrier_label;
use crate::results::Group;
use phasers_cli::harness::noise::{RatioRecord, Side as Measured};
use phasers_cli::harness::row::Row;
use phasers_cli::harness::table::{aligned, ratio, time, Last};

/// One side of a ratio.
#[derive(Debug, Clone, PartialEq)]
pub enum Side {
    /// The row of this name.
    Row(Cow<'static, str>),
    /// Whichever of the barrier rows named by the report has the lowest median.
    BestBarrier,
}

/// `numerator ÷ denominator`, by median.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// Above the line.
    pub numerator: Side,
    /// Below it.
    pub denominator: Side,
}

impl Ratio {
    /// The ratio of the rows `numerator` and `denominator`.
    pub fn of(numerator: Side, denominator: Side) -> Self {
        Ratio {
            numerator,
            denominator,
        }
    }
}

/// The best of the rows `barriers` names, by median.
fn best_of<'a>(group: &'a Group, barriers: &[Cow<'static, str>]) -> Option<&'a Row> {
    barriers
        .iter()
        .filter_map(|name| group.row(name))
        .filter_map(|row| Some((row, row.median()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(row, _)| row)
}

/// The `ratios` of one group with both sides measured, as the JSON records them; `barriers` names
/// the rows "our best barrier" is chosen from.
pub fn records(
    group: &Group,
    ratios: &[Ratio],
    barriers: &[Cow<'static, str>],
) -> Vec<RatioRecord> {
    let best = best_of(group, barriers);
    let resolve = |side: &Side| -> Option<(String, Measured)> {
        match side {
            Side::Row(name) => Some((name.to_string(), Measured::of(group.row(name)?)?)),
            Side::BestBarrier => Some(("best barrier".to_owned(), Measured::of(best?)?)),
        }
    };
    ratios
        .iter()
        .filter_map(|r| {
            let (top, top_side) = resolve(&r.numerator)?;
            let (bottom, bottom_side) = resolve(&r.denominator)?;
            let label = format!("{top} / {bottom}");
            RatioRecord::of(group.threads, label, &top_side, &bottom_side)
        })
        .collect()
}

/// The lines of `ratios` for one group; `barriers` names the rows "our best barrier" is chosen
/// from. `None` when no ratio has both sides measured.
pub fn lines(group: &Group, ratios: &[Ratio], barriers: &[Cow<'static, str>]) -> Option<String> {
    let best = best_of(group, barriers);
    let measured: Vec<[String; 2]> = records(group, ratios, barriers)
        .iter()
        .map(|record| {
            let (a, b) = (record.numerator_ns, record.denominator_ns);
            [
                record.label.clone(),
                format!(
                    "{} / {} = {}  {}",
                    time(a),
                    time(b),
                    ratio(Some(a), Some(b)),
                    record.mark()
                )
                .trim_end()
                .to_owned(),
            ]
        })
        .collect();
    if measured.is_empty() {
        return None;
    }
    let mut text = format!(
        "{} thread{}, median ratios (below 1: the first is faster)",
        group.threads,
        if group.threads == 1 { "" } else { "s" }
    );
    if let Some(best) = best {
        text.push_str(&format!("; best barrier: {}", barrier_label(best)));
    }
    for line in aligned(&measured, Last::Free).lines() {
        text.push_str(&format!("\n  {line}"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_cli::harness::row::RowKind;

    fn row(name: &str, median: f64) -> Row {
        let mut row = Row::measured(name, RowKind::Ours, 1, vec![median]);
        row.finish(0, None);
        row
    }

    fn group() -> Group {
        let mut auto = row("auto", 60.0);
        auto.resolved = Some("sense-reversing".into());
        Group {
            threads: 2,
            oversubscribed: false,
            reference_loop: None,
            openmp_reference_loop: None,
            rows: vec![
                auto,
                row("ticket", 80.0),
                row("phaser flat", 90.0),
                row("omp reduction", 450.0),
                Row::failed("phaser tree", RowKind::Ours, 1, "boom".into()),
            ],
        }
    }

    fn name(text: &'static str) -> Side {
        Side::Row(text.into())
    }

    #[test]
    fn ratios_divide_medians_and_name_the_best_barrier() {
        let barriers = ["auto".into(), "ticket".into()];
        let text = lines(
            &group(),
            &[
                Ratio::of(name("phaser flat"), Side::BestBarrier),
                Ratio::of(name("omp reduction"), name("phaser flat")),
            ],
            &barriers,
        )
        .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "2 threads, median ratios (below 1: the first is faster); best barrier: auto → \
             sense-reversing"
        );
        assert_eq!(
            lines[1],
            "  phaser flat / best barrier   90.0 ns / 60.0 ns = 1.50x"
        );
        assert_eq!(
            lines[2],
            "  omp reduction / phaser flat  450 ns / 90.0 ns = 5.00x"
        );
    }

    #[test]
    fn rounds_that_disagree_more_than_the_gap_mark_the_line() {
        let mut group = group();
        // phaser flat's rounds: 80, 90, 100 ns, ×1.25 apart; the best barrier is 60 ns.
        group.rows[2].round_medians_ns = vec![80.0, 90.0, 100.0];
        group.rows[2].spread = Some(1.25);
        group.rows[1].spread = Some(1.02);
        let ratios = [
            Ratio::of(name("phaser flat"), name("ticket")),
            Ratio::of(name("phaser flat"), Side::BestBarrier),
        ];
        let records = records(&group, &ratios, &["auto".into()]);
        // 90 / 80 is a gap of ×1.12, within the rounds' ×1.25; 90 / 60 is not.
        assert!(records[0].noisy && !records[1].noisy);
        assert_eq!(records[0].numerator, "phaser flat");
        let text = lines(&group, &ratios, &["auto".into()]).unwrap();
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .contains("noisy: rounds ×1.25 > gap ×1.1"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_or_missing_side_leaves_its_ratio_out() {
        let ratios = [
            Ratio::of(name("phaser tree"), Side::BestBarrier),
            Ratio::of(name("nowhere"), name("phaser flat")),
        ];
        assert_eq!(lines(&group(), &ratios, &["auto".into()]), None);
        // No barrier measured: no best barrier to divide by.
        let best = [Ratio::of(name("phaser flat"), Side::BestBarrier)];
        assert_eq!(lines(&group(), &best, &[]), None);
    }
}
