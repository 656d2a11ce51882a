//! Nanoseconds for people.

/// `850 ns`, `12.3 us`, `4.56 ms`.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "n/a".to_owned()
    } else if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e4 {
        format!("{:.2} us", ns / 1e3)
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(format_ns(850.2), "850 ns");
        assert_eq!(format_ns(1234.0), "1.23 us");
        assert_eq!(format_ns(123_456.0), "123.5 us");
        assert_eq!(format_ns(4_560_000.0), "4.56 ms");
        assert_eq!(format_ns(f64::NAN), "n/a");
    }
}
