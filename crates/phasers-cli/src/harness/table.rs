//! Tables on stdout: columns aligned, numbers right-aligned, and the number formats every table
//! shares (a duration in a readable unit, a ratio).

/// Lays out `cells` in columns: the first left-aligned, numbers right-aligned, and the last
/// left-aligned and unpadded when it is `Last::Free` (notes).
///
/// ```
/// use phasers_cli::harness::table::{aligned, Last};
///
/// let cells = [
///     vec!["barrier".to_owned(), "median".to_owned(), "note".to_owned()],
///     vec!["mcs".to_owned(), "51.0 ns".to_owned(), "".to_owned()],
///     vec!["std::sync::Barrier".to_owned(), "312 ns".to_owned(), "slow".to_owned()],
/// ];
/// let text = aligned(&cells, Last::Free);
/// assert_eq!(
///     text,
///     "barrier              median  note\n\
///      mcs                 51.0 ns\n\
///      std::sync::Barrier   312 ns  slow\n"
/// );
/// ```
pub fn aligned<L: AsRef<[String]>>(cells: &[L], last: Last) -> String {
    let columns = cells
        .iter()
        .map(|line| line.as_ref().len())
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            cells
                .iter()
                .filter_map(|line| line.as_ref().get(column))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in cells {
        let mut text = String::new();
        for (column, cell) in line.as_ref().iter().enumerate() {
            let pad = " ".repeat(widths[column] - cell.chars().count());
            match column {
                0 => text.push_str(&format!("{cell}{pad}")),
                c if c == columns - 1 && last == Last::Free => text.push_str(&format!("  {cell}")),
                _ => text.push_str(&format!("  {pad}{cell}")),
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// How [`aligned`] lays out the last column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// Right-aligned, like every number.
    Number,
    /// Left-aligned and unpadded: free text.
    Free,
}

/// A duration in nanoseconds, in the unit that keeps it readable. EPCC costs can be slightly
/// negative (a barrier cheaper than the noise of its reference loop), so the sign is kept.
///
/// ```
/// use phasers_cli::harness::table::time;
///
/// assert_eq!(time(12.34), "12.3 ns");
/// assert_eq!(time(45_600.0), "45.6 µs");
/// ```
pub fn time(ns: f64) -> String {
    let magnitude = ns.abs();
    if magnitude < 100.0 {
        format!("{ns:.1} ns")
    } else if magnitude < 10_000.0 {
        format!("{ns:.0} ns")
    } else if magnitude < 10_000_000.0 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.1} ms", ns / 1e6)
    }
}

/// `numerator / denominator` as "1.23x", or "-" when either is missing or the ratio is meaningless.
///
/// ```
/// use phasers_cli::harness::table::ratio;
///
/// assert_eq!(ratio(Some(300.0), Some(100.0)), "3.00x");
/// assert_eq!(ratio(Some(1.0), None), "-");
/// ```
pub fn ratio(numerator: Option<f64>, denominator: Option<f64>) -> String {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d > 0.0 && n.is_finite() => {
            let r = n / d;
            if r >= 100.0 {
                format!("{r:.0}x")
            } else {
                format!("{r:.2}x")
            }
        }
        _ => "-".into(),
    }
}

/// A row's name with what it resolved to when that differs: `auto → mcs-tree`.
///
/// ```
/// use phasers_cli::harness::table::resolved_label;
///
/// assert_eq!(resolved_label("auto", Some("mcs-tree")), "auto → mcs-tree");
/// assert_eq!(resolved_label("mcs-tree", Some("mcs-tree")), "mcs-tree");
/// assert_eq!(resolved_label("std", None), "std");
/// ```
pub fn resolved_label(name: &str, resolved: Option<&str>) -> String {
    match resolved {
        Some(resolved) if resolved != name => format!("{name} → {resolved}"),
        _ => name.to_owned(),
    }
}

/// A thread count as a table shows it: `4*` when the threads outnumber the cores.
///
/// ```
/// assert_eq!(phasers_cli::harness::table::threads_cell(4, true), "4*");
/// assert_eq!(phasers_cli::harness::table::threads_cell(2, false), "2");
/// ```
pub fn threads_cell(threads: usize, oversubscribed: bool) -> String {
    format!("{threads}{}", if oversubscribed { "*" } else { "" })
}

/// The note column of a row: `ERROR: why; notes` when it failed, else its notes, `; `-separated.
///
/// ```
/// use phasers_cli::harness::table::note_cell;
///
/// assert_eq!(note_cell(Some("boom"), &[Some("3 of 5 samples")]), "ERROR: boom; 3 of 5 samples");
/// assert_eq!(note_cell(None, &[None, Some("pinned")]), "pinned");
/// assert_eq!(note_cell(None, &[]), "");
/// ```
pub fn note_cell(error: Option<&str>, notes: &[Option<&str>]) -> String {
    let parts: Vec<&str> = std::iter::once(error)
        .chain(notes.iter().copied())
        .flatten()
        .collect();
    match error {
        Some(_) => format!("ERROR: {}", parts.join("; ")),
        None => parts.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_pick_readable_units() {
        assert_eq!(time(12.34), "12.3 ns");
        assert_eq!(time(1234.0), "1234 ns");
        assert_eq!(time(45_600.0), "45.6 µs");
        assert_eq!(time(12_300_000.0), "12.3 ms");
        assert_eq!(time(-3.25), "-3.2 ns");
        assert_eq!(time(-45_600.0), "-45.6 µs");
    }

    #[test]
    fn ratios_format() {
        assert_eq!(ratio(Some(300.0), Some(100.0)), "3.00x");
        assert_eq!(ratio(Some(25_000.0), Some(10.0)), "2500x");
        assert_eq!(ratio(None, Some(1.0)), "-");
        assert_eq!(ratio(Some(1.0), Some(0.0)), "-");
    }

    #[test]
    fn numbers_align_right_and_a_number_last_column_too() {
        let cells = [
            vec!["a".to_owned(), "1".to_owned()],
            vec!["bb".to_owned(), "100".to_owned()],
        ];
        assert_eq!(aligned(&cells, Last::Number), "a     1\nbb  100\n");
    }
}
