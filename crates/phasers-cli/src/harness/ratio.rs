//! Ratios of medians between rows of one table (one thread count), as the JSON records them and
//! the lines after a table print them, with the noise verdict of [`super::noise`].

use std::borrow::Cow;

use super::footnotes;
use super::noise::{self, Side};
use super::result::{Kind, RatioRecord, Row};
use super::table::{aligned, ratio, time, Last};

/// What a noisy ratio's cell ends with by default, explained once under the table.
pub const NOISY_MARK: &str = "~";

/// The explanation of [`NOISY_MARK`].
pub const NOISY_NOTE: &str =
    "~ unsettled: the rounds disagree by more than the rows differ (--verbose: by how much)";

/// What a ratio that cannot be divided says by default; [`notes`] explains it.
pub const NOT_COMPUTED: &str = "not computed*";

/// Why a ratio is not computed.
const NOT_COMPUTED_NOTE: &str = "* a side failed, was not measured, or is below its resolution";

/// Which row of a table is one side of a ratio.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    /// The row of this contender.
    Named(Cow<'static, str>),
    /// The first row of this kind.
    Kind(Kind),
    /// The fastest of the rows of these contenders.
    FastestNamed(Vec<Cow<'static, str>>),
    /// The fastest row of this kind.
    FastestKind(Kind),
}

/// `numerator / denominator`, by median, under `label`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// The ratio in words, as printed and recorded.
    pub label: String,
    /// Above the line.
    pub numerator: Pick,
    /// Below it.
    pub denominator: Pick,
}

/// `row`'s median when error-free and above its resolution: only such is a best or a ratio's side.
pub fn cost(row: &Row) -> Option<f64> {
    let median = row.median().filter(|_| row.error.is_none())?;
    let resolution = row.resolution_ns.unwrap_or(0.0);
    (!super::resolution::below(median, resolution)).then_some(median)
}

/// The row of `rows` that `pick` names, when it ran without error.
pub fn pick<'a>(rows: &[&'a Row], pick: &Pick) -> Option<&'a Row> {
    let fits = |row: &Row| match pick {
        Pick::Named(name) => row.contender == *name,
        Pick::FastestNamed(names) => names.iter().any(|name| *name == row.contender),
        Pick::Kind(kind) | Pick::FastestKind(kind) => row.kind == *kind,
    };
    let mut candidates = rows.iter().copied().filter(|row| fits(row));
    match pick {
        Pick::Named(_) | Pick::Kind(_) => candidates.find(|row| row.error.is_none()),
        Pick::FastestNamed(_) | Pick::FastestKind(_) => candidates
            .filter_map(|row| Some((row, cost(row)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(row, _)| row),
    }
}

/// `top / bottom` as recorded, when both are sides.
pub(crate) fn divide(label: &str, top: &Row, bottom: &Row) -> Option<RatioRecord> {
    let side = |row: &Row| {
        Some(Side {
            name: row.contender.clone(),
            median_ns: cost(row)?,
            spread: row.spread,
        })
    };
    let record = noise::RatioRecord::of(top.threads, label.to_owned(), &side(top)?, &side(bottom)?);
    let (at, record) = (top.at.clone(), record?);
    Some(RatioRecord { at, record })
}

/// The `ratios` of one table's `rows` with both sides measured.
pub fn records(rows: &[&Row], ratios: &[Ratio]) -> Vec<RatioRecord> {
    let of = |r: &Ratio| {
        divide(
            &r.label,
            pick(rows, &r.numerator)?,
            pick(rows, &r.denominator)?,
        )
    };
    ratios.iter().filter_map(of).collect()
}

/// The lines after a table: `heading`, then one line per ratio, from its record in `records`
/// (`not computed` when it has none); `--verbose` says why a ratio is noisy.
pub fn lines(heading: &str, records: &[RatioRecord], ratios: &[Ratio], verbose: bool) -> String {
    let (mut noisy, mut missing) = (false, false);
    let mut cells: Vec<Vec<String>> = Vec::new();
    for r in ratios {
        let Some(RatioRecord { record, .. }) = records.iter().find(|x| x.record.label == r.label)
        else {
            missing = true;
            cells.push(vec![r.label.clone(), NOT_COMPUTED.to_owned()]);
            continue;
        };
        noisy |= record.noisy && !verbose;
        let who = match r.denominator {
            Pick::FastestKind(_) | Pick::FastestNamed(_) => format!("  ({})", record.denominator),
            _ => String::new(),
        };
        let line = format!("{}{who}", quotient(record, verbose));
        cells.push(vec![r.label.clone(), line.trim_end().to_owned()]);
    }
    let mut text = heading.to_owned();
    for line in aligned(&cells, Last::Free).lines() {
        text.push_str(&format!("\n  {line}"));
    }
    text + &notes(noisy, missing)
}

/// One ratio as its line prints it: `60.0 ns / 58.0 ns = 1.03x`, with [`NOISY_MARK`] when noisy
/// or, `--verbose`, by how much.
pub fn quotient(record: &noise::RatioRecord, verbose: bool) -> String {
    let mark = match (verbose, record.noisy) {
        (true, _) => format!("  {}", record.mark()),
        (false, true) => NOISY_MARK.to_owned(),
        (false, false) => String::new(),
    };
    let (a, b) = (record.numerator_ns, record.denominator_ns);
    let divided = ratio(Some(a), Some(b));
    format!("{} / {} = {divided}{mark}", time(a), time(b))
}

/// The footnotes under ratio lines, each on its own line: [`NOISY_NOTE`] when a line is marked
/// noisy, and why a ratio is [`NOT_COMPUTED`] when one is.
pub fn notes(noisy: bool, missing: bool) -> String {
    let notes = [(noisy, NOISY_NOTE), (missing, NOT_COMPUTED_NOTE)];
    let used = notes.into_iter().filter(|(used, _)| *used);
    let lines = used.map(|(_, note)| format!("\n{}", footnotes::wrap("  ", note).trim_end()));
    lines.collect()
}

/// A grid of figures: `title`, then a head line and one line per `(label, cells)`.
pub fn grid(title: &str, heads: &[String], lines: Vec<(String, Vec<String>)>) -> String {
    let mut cells = vec![[&[String::new()][..], heads].concat()];
    for (label, line) in lines {
        cells.push([vec![label], line].concat());
    }
    format!("{title}\n{}", aligned(&cells, Last::Number))
}

/// Marks noisy each row of one table whose ratio over a divisor of `over` (a table column, such
/// as `÷floor`) is noisy, and each row above the line of a noisy ratio of `records`.
pub fn mark_rows(rows: &mut [Row], over: &[(&str, Pick)], records: &[RatioRecord]) {
    let table: Vec<&Row> = rows.iter().collect();
    let marks = |row: &Row| -> Vec<String> {
        let judged = !matches!(row.kind, Kind::Floor | Kind::Loop);
        let columns = over.iter().filter(|_| judged).filter_map(|(column, by)| {
            let divisor = pick(&table, by).filter(|divisor| divisor.contender != row.contender)?;
            let noise = divide(column, row, divisor)?.record.noise?;
            Some(format!("{column}: {noise}"))
        });
        let heads = records.iter().filter_map(|RatioRecord { record: r, .. }| {
            let noise = r.noise.as_ref().filter(|_| r.numerator == row.contender)?;
            Some(format!("{}: {noise}", r.label))
        });
        columns.chain(heads).collect()
    };
    let marks: Vec<Vec<String>> = table.iter().map(|row| marks(row)).collect();
    for (row, marks) in rows.iter_mut().zip(marks) {
        marks.into_iter().for_each(|mark| row.add_noise(mark));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::harness::result::Fields;

    /// A row of one round per median (so it has a spread), at 2 threads.
    pub fn row(name: &str, kind: Kind, medians: &[f64]) -> Row {
        let mut row = Row::new(name, kind, 2, Fields::default().with("app", "sor"));
        row.raw_ns = medians.to_vec();
        row.finish(0, None);
        row.round_medians_ns = medians.to_vec();
        row.spread = noise::spread(medians);
        row
    }

    #[test]
    fn picks_skip_failed_rows_and_ratios_say_what_is_noisy_or_missing() {
        let mut cxx = row("cxx", Kind::Baseline, &[1.0]);
        cxx.error = Some("boom".into());
        let mut rows = vec![
            row("auto", Kind::Ours, &[50.0, 60.0, 70.0]),
            row("std", Kind::Baseline, &[100.0; 2]),
            row("pthread", Kind::Baseline, &[58.0; 2]),
            cxx,
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        let who = |by: Pick| pick(&refs, &by).map(|row| row.contender.as_str());
        assert_eq!(who(Pick::FastestKind(Kind::Baseline)), Some("pthread"));
        assert_eq!(who(Pick::Kind(Kind::Baseline)), Some("std"));
        assert_eq!(who(Pick::Named("cxx".into())), None);
        let names = Pick::FastestNamed(vec!["auto".into(), "std".into()]);
        assert_eq!(who(names), Some("auto"));
        let mut below = row("tiny", Kind::Ours, &[1.0]);
        below.resolution_ns = Some(2.0);
        assert_eq!(cost(&below), None, "below its resolution");

        let ratio = |label: &str, denominator| Ratio {
            label: label.into(),
            numerator: Pick::Named("auto".into()),
            denominator,
        };
        let ratios = [
            ratio("auto / fastest standard", Pick::FastestKind(Kind::Baseline)),
            ratio("auto / cxx", Pick::Named("cxx".into())),
        ];
        let records = records(&refs, &ratios);
        assert_eq!(records.len(), 1, "cxx failed");
        let text = lines("2 threads", &records, &ratios, false);
        for part in [
            "60.0 ns / 58.0 ns = 1.03x~  (pthread)",
            &format!("auto / cxx               {NOT_COMPUTED}"),
            NOT_COMPUTED_NOTE,
            NOISY_NOTE,
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        let verbose = lines("2 threads", &records, &ratios, true);
        assert!(verbose.contains("1.03x  noisy: rounds ×1.40 > gap ×1.03"));
        assert!(!verbose.contains(NOISY_NOTE));

        mark_rows(&mut rows, &[("÷std", Pick::Named("std".into()))], &records);
        let noise = "auto / fastest standard: rounds ×1.40 > gap ×1.03";
        assert_eq!(rows[0].noise.as_deref(), Some(noise));
        assert!(!rows[1].noisy, "std over itself is not judged");
        let cells = vec![("auto".into(), vec!["1.00x".into(), "-".into()])];
        let text = grid("figure", &["2".into(), "4".into()], cells);
        assert_eq!(text, "figure\n          2  4\nauto  1.00x  -\n");
    }
}
