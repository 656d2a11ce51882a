//! Tables on stdout: columns aligned, numbers right-aligned, and the number formats every table
//! shares (a duration in a readable unit, a ratio).

/// Lays out `cells` in columns: the first left-aligned, numbers right-aligned, and the last
/// left-aligned and unpadded when it is `Last::Free` (notes).
pub fn aligned<L: AsRef<[String]>>(cells: &[L], last: Last) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for line in cells {
        widths.resize(widths.len().max(line.as_ref().len()), 0);
        for (width, cell) in widths.iter_mut().zip(line.as_ref()) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in cells {
        let mut text = String::new();
        for (column, cell) in line.as_ref().iter().enumerate() {
            let pad = " ".repeat(widths[column] - cell.chars().count());
            let free = column + 1 == widths.len() && last == Last::Free;
            match column {
                0 => text.push_str(&format!("{cell}{pad}")),
                _ if free => text.push_str(&format!("  {cell}")),
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

/// A duration in ns in a readable unit: `12.3 ns`, `45.6 µs`; the sign is kept, since EPCC costs
/// can be slightly negative (a barrier cheaper than the noise of its reference loop).
pub fn time(ns: f64) -> String {
    match ns.abs() {
        magnitude if magnitude < 100.0 => format!("{ns:.1} ns"),
        magnitude if magnitude < 10_000.0 => format!("{ns:.0} ns"),
        magnitude if magnitude < 10_000_000.0 => format!("{:.1} µs", ns / 1e3),
        _ => format!("{:.1} ms", ns / 1e6),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_format_in_readable_units_and_align_right() {
        assert_eq!(time(12.34), "12.3 ns");
        assert_eq!(time(1234.0), "1234 ns");
        assert_eq!(time(-45_600.0), "-45.6 µs");
        assert_eq!(time(12_300_000.0), "12.3 ms");
        assert_eq!(ratio(Some(2500.0), Some(1.0)), "2500x");
        assert_eq!(ratio(Some(1.0), Some(0.0)), "-");
        let cells = [["barrier", "median", "note"], ["mcs", "51.0 ns", ""]];
        let cells = cells.map(|row| row.map(String::from));
        let text = "barrier   median  note\nmcs      51.0 ns\n";
        assert_eq!(aligned(&cells, Last::Free), text);
    }
}
