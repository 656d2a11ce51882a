//! The one table renderer over [`Row`]s. By default a table fits 100 columns: notes, errors and
//! cut labels are footnotes, a cost below its resolution reads `< 2.0 ns`, an unsettled ratio
//! ends in `~`, and each mark used is explained once in a line under the table. `--verbose`
//! prints the layout's verbose columns and every note in full.

use super::footnotes::{self, Footnotes};
use super::noise;
use super::ratio::{self, Pick, NOISY_MARK, NOISY_NOTE};
use super::resolution::below_text;
use super::result::{Kind, Row};
use super::table::{aligned, time, Last};

/// What a benchmark's tables, CSV and plots show.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The default table's columns (the notes' marks come last).
    pub concise: Vec<Column>,
    /// The `--verbose` table's columns (the notes in full come last).
    pub verbose: Vec<Column>,
    /// A point key whose every new value starts a block of the table under a line naming it.
    pub block: Option<&'static str>,
    /// Kinds of rows the tables leave out (their JSON and CSV keep them).
    pub hide: &'static [Kind],
    /// The benchmark's keys in the CSV, after the core columns (see `files::csv`).
    pub csv: &'static [&'static str],
    /// The plots `--plot` draws, if the benchmark draws any.
    pub plot: Option<PlotSpec>,
}

/// The plots of a run: one file per combination of the `slices` keys' values.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSpec {
    /// Point keys whose values each get a file of their own.
    pub slices: &'static [&'static str],
    /// What the y axis shows.
    pub y_label: String,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// The contender and what it resolved to (cut at [`LABEL_WIDTH`] by default).
    Label,
    /// The thread count, `4*` when oversubscribed.
    Threads,
    /// The point key `.0`, headed `.1`.
    Key(&'static str, &'static str),
    /// Iterations per sample.
    Iterations,
    /// The smallest sample.
    Min,
    /// The median (`< x` below the resolution).
    Median,
    /// Mean ± half its 95% confidence interval.
    MeanCi,
    /// The spread of the rounds.
    Rounds,
    /// A statistic of an extra series.
    Metric {
        /// The extra key of the series.
        key: &'static str,
        /// Which statistic.
        stat: Stat,
        /// The column's head.
        head: &'static str,
    },
    /// A value of the point or the extra fields.
    Value {
        /// The point or extra key.
        key: &'static str,
        /// The column's head.
        head: &'static str,
        /// How a number prints (anything else prints as it is).
        format: Format,
    },
    /// The median over the median of the row `by` picks among those at the same thread count
    /// (and in the same block); a floor row's is blank.
    Over {
        /// The column's head (`÷floor`).
        head: &'static str,
        /// The divisor.
        by: Pick,
    },
}

/// Which statistic of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// The smallest.
    Min,
    /// The median.
    Median,
    /// The mean.
    Mean,
}

/// How a value prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// With this many decimals.
    Fixed(usize),
    /// As a duration in ns.
    Time,
}

/// The widest label a default table prints; a longer one is cut and given whole in a footnote.
pub const LABEL_WIDTH: usize = 48;

/// What a concise table says under its rows about a cost below its resolution.
pub const BELOW_NOTE: &str = "< x: below this run's resolution, so no ratio uses it";

/// What `*` after a thread count means.
pub const OVERSUBSCRIBED_NOTE: &str = "* threads outnumber the available cores";

/// `title`, then `rows` (but the hidden kinds) under `layout`'s columns, then the legends used.
pub fn table(title: &str, rows: &[&Row], layout: &Layout, verbose: bool) -> String {
    let (columns, last) = match verbose {
        true => (&layout.verbose, "note"),
        false => (&layout.concise, ""),
    };
    let hidden = |row: &&Row| layout.hide.contains(&row.kind);
    let shown: Vec<&Row> = rows.iter().copied().filter(|r| !hidden(r)).collect();
    let (mut notes, mut below, mut noisy) = (Footnotes::default(), false, false);
    let head = columns.iter().map(head).chain([last.into()]);
    let mut cells: Vec<Vec<String>> = vec![head.collect()];
    let (mut blocks, mut block) = (Vec::new(), None);
    for row in &shown {
        let value = layout.block.and_then(|key| row.at.get(key)).map(plain);
        if let Some(name) = value.clone().filter(|_| value != block) {
            blocks.push((cells.len(), name));
            block = value;
        }
        let cell = |column| cell(column, row, rows, layout.block, verbose);
        let mut line: Vec<String> = columns.iter().map(cell).collect();
        for (column, text) in columns.iter().zip(&line) {
            below |= *column == Column::Median && text.starts_with('<');
            noisy |= matches!(column, Column::Over { .. }) && text.ends_with(NOISY_MARK);
        }
        let label = row.label();
        let cut = !verbose && label.chars().count() > LABEL_WIDTH;
        if let (true, Some(index)) = (cut, columns.iter().position(|c| *c == Column::Label)) {
            let kept: String = label.chars().take(LABEL_WIDTH - 1).collect();
            line[index] = format!("{}…", kept.trim_end());
        }
        let error = row.error.as_ref().map(|error| format!("ERROR: {error}"));
        let noise = row.noise.as_ref().map(|noise| format!("noisy ({noise})"));
        let full = [&error, &noise, &row.note].into_iter().flatten().cloned();
        let cut_label = cut.then_some(label.as_str());
        line.push(match verbose {
            true => full.collect::<Vec<_>>().join("; "),
            false => notes.marks([cut_label, error.as_deref(), row.note.as_deref()]),
        });
        cells.push(line);
    }
    let mut out = footnotes::wrap("", title);
    for (index, line) in aligned(&cells, Last::Free).lines().enumerate() {
        for (_, heading) in blocks.iter().filter(|(at, _)| *at == index) {
            out.push_str(&format!("{heading}:\n"));
        }
        out.push_str(&format!("{line}\n"));
    }
    let oversubscribed =
        columns.contains(&Column::Threads) && shown.iter().any(|row| row.oversubscribed);
    let rounds = verbose && columns.contains(&Column::Rounds);
    let legends = [
        (below, BELOW_NOTE),
        (noisy, NOISY_NOTE),
        (oversubscribed, OVERSUBSCRIBED_NOTE),
        (rounds, noise::LEGEND),
    ];
    for (_, legend) in legends.into_iter().filter(|(used, _)| *used) {
        out.push_str(&footnotes::wrap("", legend));
    }
    out.push_str(&notes.text());
    out
}

fn head(column: &Column) -> String {
    match column {
        Column::Label => "contender",
        Column::Threads => "threads",
        Column::Key(_, head)
        | Column::Metric { head, .. }
        | Column::Value { head, .. }
        | Column::Over { head, .. } => head,
        Column::Iterations => "iterations",
        Column::Min => "min",
        Column::Median => "median",
        Column::MeanCi => "mean ± 95% CI",
        Column::Rounds => "rounds",
    }
    .to_owned()
}

/// A value as a cell: strings bare, numbers and the rest as JSON writes them.
fn plain(value: &serde_json::Value) -> String {
    value.as_str().map_or(value.to_string(), str::to_owned)
}

/// A row's cell of `column`: a noisy ratio ends in [`NOISY_MARK`] by default.
fn cell(column: &Column, row: &Row, rows: &[&Row], block: Option<&str>, verbose: bool) -> String {
    let dash = || "-".to_owned();
    match column {
        Column::Label => row.label(),
        Column::Threads if row.oversubscribed => format!("{}*", row.threads),
        Column::Threads => row.threads.to_string(),
        Column::Key(key, _) => row.at.get(key).map_or_else(dash, plain),
        Column::Iterations => row.iterations_per_sample.to_string(),
        Column::Min => row.min().map_or_else(dash, time),
        Column::Median => match (row.median(), ratio::cost(row)) {
            (_, Some(cost)) => time(cost),
            (Some(_), None) if row.error.is_none() => below_text(row.resolution_ns.unwrap_or(0.0)),
            _ => dash(),
        },
        Column::MeanCi => row.summary.map_or_else(dash, |s| match s.ci95 {
            Some(ci) => format!("{} ± {}", time(s.mean), time(ci)),
            None => time(s.mean),
        }),
        Column::Rounds => noise::spread_text(row.spread),
        Column::Metric { key, stat, .. } => match (row.metric(key), stat) {
            (Some(s), Stat::Min) => format!("{:.1}", s.min),
            (Some(s), Stat::Median) => format!("{:.1}", s.median),
            (Some(s), Stat::Mean) => format!("{:.1}", s.mean),
            (None, _) => dash(),
        },
        Column::Value { key, format, .. } => match (row.value(key), row.field(key), format) {
            (Some(value), _, Format::Fixed(decimals)) => format!("{value:.decimals$}"),
            (Some(value), _, Format::Time) => time(value),
            (None, Some(field), _) if !field.is_null() => plain(field),
            _ => dash(),
        },
        // A floor or a loop over anything is no ratio anyone reads.
        Column::Over { .. } if matches!(row.kind, Kind::Floor | Kind::Loop) => dash(),
        Column::Over { head, by } => {
            let same = |other: &&Row| {
                let block = block.map_or(true, |key| other.at.get(key) == row.at.get(key));
                other.threads == row.threads && block
            };
            let table: Vec<&Row> = rows.iter().copied().filter(same).collect();
            let divisor =
                ratio::pick(&table, by).filter(|divisor| divisor.contender != row.contender);
            let Some(record) = divisor.and_then(|divisor| ratio::divide(head, row, divisor)) else {
                return dash();
            };
            let noisy = record.record.noisy && !verbose;
            let mark = if noisy { NOISY_MARK } else { "" };
            super::table::ratio(Some(record.record.ratio), Some(1.0)) + mark
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::ratio::tests::row;

    #[test]
    fn a_table_fits_100_columns_with_footnotes_and_verbose_has_everything() {
        use Column::{Label, MeanCi, Median, Rounds, Threads, Value};
        let (head, by) = ("÷std", Pick::Named("std".into()));
        let over = Column::Over { head, by };
        let (key, head, format) = ("barriers", "barriers", Format::Fixed(0));
        let layout = Layout {
            concise: vec![Label, Median, over.clone(), Value { key, head, format }],
            verbose: vec![Threads, Label, MeanCi, Rounds, over],
            block: Some("app"),
            hide: &[Kind::Loop],
            csv: &[],
            plot: None,
        };
        let budget = "3 of 5 samples: row stopped at its 4 s budget";
        let mut phaser = row("phaser flat + sum i64", Kind::Ours, &[300.0, 420.0, 307.0]);
        phaser.resolved = Some("tiers 1 (flat), degree 64, wait policy spin-then-park".into());
        phaser.add_note(budget.into());
        phaser.extra.set("barriers", 12);
        let mut tiny = row("ticket", Kind::Ours, &[1.5]);
        (tiny.resolution_ns, tiny.resolved) = (Some(6.0), Some("ticket".into()));
        let mut failed = row("mcs", Kind::Ours, &[]);
        failed.error = Some("a thread panicked".into());
        failed.add_note(budget.into());
        let std = row("std", Kind::Baseline, &[330.0; 3]);
        let mut rows = [std, phaser, tiny, failed, row("loop", Kind::Loop, &[9.0])];
        let refs: Vec<&Row> = rows.iter().collect();
        let text = table("2 threads", &refs, &layout, false);
        let line = |text: &str, start: &str| {
            let line = text.lines().find(|line| line.starts_with(start));
            line.unwrap_or_else(|| panic!("{start}\n{text}")).to_owned()
        };
        assert!(text.lines().all(|line| line.chars().count() <= 100));
        assert_eq!(line(&text, "sor"), "sor:");
        assert!(!text.contains("loop") && !text.contains("noisy ("));
        let phaser = line(&text, "phaser flat + sum i64 → tiers 1 (flat), degree…");
        assert!(phaser.contains("307 ns  0.93x~        12  [1][2]"));
        assert!(line(&text, "ticket ").contains("< 6.0 ns"), "{text}");
        assert_eq!(text.matches(budget).count(), 1, "one footnote for both");
        for part in [
            BELOW_NOTE,
            NOISY_NOTE,
            "] phaser flat + sum i64 → tiers 1 (flat), degree 64, wait",
            "] ERROR: a thread panicked",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }

        rows[1].add_noise("÷std: rounds ×1.40 > gap ×1.07".into());
        (rows[1].threads, rows[1].oversubscribed) = (4, true);
        let refs: Vec<&Row> = rows.iter().collect();
        let text = table("title", &refs, &layout, true);
        let phaser = line(&text, "4* ");
        for part in [
            "wait policy spin-then-park",
            "342 ns ± ",
            "×1.40",
            "-  noisy (÷std: rounds ×1.40",
        ] {
            assert!(phaser.contains(part), "{part}: {text}");
        }
        for part in [
            &format!("ERROR: a thread panicked; {budget}"),
            OVERSUBSCRIBED_NOTE,
            "rounds: the slowest round",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }
}
