//! Whether a row fits in memory: a benchmark skips, with a note, the rows [`too_big`] refuses
//! rather than be killed by the kernel an hour in.

/// The memory the kernel says is available without swapping (`MemAvailable`), in bytes.
pub fn available() -> Option<u64> {
    parse_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable` from the text of `/proc/meminfo`, in bytes.
fn parse_available(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemAvailable:")?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// Why a row needing `needed` bytes should be skipped when `available` are free, if it should:
/// it must leave a tenth for everything else. Nothing is skipped where the memory is not known.
pub fn too_big(needed: u64, available: Option<u64>) -> Option<String> {
    let available = available?;
    (needed > available / 10 * 9).then(|| {
        format!(
            "needs about {:.1} GB, and {:.1} GB is available",
            needed as f64 / 1e9,
            available as f64 / 1e9
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_is_read_in_kib_and_rows_past_nine_tenths_of_it_are_skipped() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   22000000 kB\n";
        assert_eq!(parse_available(text), Some(22_000_000 * 1024));
        assert_eq!(parse_available("MemTotal: 5 kB\n"), None);
        assert!(available().is_some_and(|bytes| bytes > 0));
        let gib = 1u64 << 30;
        let error = too_big(6_272_000_000, Some(4 * gib)).unwrap();
        assert!(error.contains("needs about 6.3 GB"), "{error}");
        assert_eq!(too_big(gib / 10 * 9, Some(gib)), None);
        assert!(too_big(gib / 10 * 9 + 1, Some(gib)).is_some());
        assert_eq!(too_big(u64::MAX, None), None);
    }
}
