//! Tables on stdout: columns aligned, numbers right-aligned, and the number formats every table
//! shares (a duration in a readable unit, a ratio).

/// Lays out `cells` in columns: the first left-aligned, numbers right-aligned, and the last
/// left-aligned and unpadded when it is `Last::Free` (notes).
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

/// A duration in nanoseconds, in the unit that keeps it readable: `12.3 ns`, `45.6 µs`. EPCC
/// costs can be slightly negative (a barrier cheaper than the noise of its reference loop), so the
/// sign is kept.
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
pub fn ratio(numerator: Option<f64>, denominator: Option<f64>) -> String {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d > 0.0 && n.is_finite() => match n / d {
            r if r >= 100.0 => format!("{r:.0}x"),
            r => format!("{r:.2}x"),
        },
        _ => "-".into(),
    }
}

/// A row's name with what it resolved to when that differs: `auto → mcs-tree`.
pub fn resolved_label(name: &str, resolved: Option<&str>) -> String {
    match resolved {
        Some(resolved) if resolved != name => format!("{name} → {resolved}"),
        _ => name.to_owned(),
    }
}

/// A thread count as a table shows it: `4*` when the threads outnumber the cores.
pub fn threads_cell(threads: usize, oversubscribed: bool) -> String {
    format!("{threads}{}", if oversubscribed { "*" } else { "" })
}

/// The note column of a row: `ERROR: why; notes` when it failed, else its notes, `; `-separated.
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
    fn numbers_format_in_readable_units() {
        for (ns, text) in [
            (12.34, "12.3 ns"),
            (1234.0, "1234 ns"),
            (45_600.0, "45.6 µs"),
            (12_300_000.0, "12.3 ms"),
            (-3.25, "-3.2 ns"),
            (-45_600.0, "-45.6 µs"),
        ] {
            assert_eq!(time(ns), text);
        }
        for (n, d, text) in [
            (Some(300.0), Some(100.0), "3.00x"),
            (Some(25_000.0), Some(10.0), "2500x"),
            (None, Some(1.0), "-"),
            (Some(1.0), Some(0.0), "-"),
        ] {
            assert_eq!(ratio(n, d), text);
        }
    }

    #[test]
    fn cells_say_what_resolved_oversubscribed_and_failed() {
        assert_eq!(resolved_label("auto", Some("mcs-tree")), "auto → mcs-tree");
        assert_eq!(resolved_label("mcs-tree", Some("mcs-tree")), "mcs-tree");
        assert_eq!(resolved_label("std", None), "std");
        assert_eq!(
            (threads_cell(4, true), threads_cell(2, false)),
            ("4*".into(), "2".into())
        );
        let failed = note_cell(Some("boom"), &[Some("3 of 5 samples")]);
        assert_eq!(failed, "ERROR: boom; 3 of 5 samples");
        assert_eq!(note_cell(None, &[None, Some("pinned")]), "pinned");
        assert_eq!(note_cell(None, &[]), "");
    }

    #[test]
    fn numbers_align_right_and_notes_left() {
        let cells = |rows: &[[&str; 3]]| -> Vec<Vec<String>> {
            rows.iter()
                .map(|row| row.map(str::to_owned).to_vec())
                .collect()
        };
        let notes = cells(&[
            ["barrier", "median", "note"],
            ["mcs", "51.0 ns", ""],
            ["std", "312 ns", "slow"],
        ]);
        let text = "barrier   median  note\nmcs      51.0 ns\nstd       312 ns  slow\n";
        assert_eq!(aligned(&notes, Last::Free), text);
        let numbers = cells(&[["a", "1", "10"], ["bb", "100", "2"]]);
        assert_eq!(
            aligned(&numbers, Last::Number),
            "a     1  10\nbb  100   2\n"
        );
    }
}
