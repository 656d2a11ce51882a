//! Whether a point fits in memory: 16 M floats at many participants can need more than a small
//! machine has, and a run that the kernel kills after an hour helps nobody. A point that does not
//! fit is skipped with a note instead.

/// A generous estimate of the bytes the largest row of a point needs at once: every
/// participant's input, one more array per participant (OpenMP's private copies, or whatever
/// buffers the library keeps), the outputs (one per participant for `allreduce`), the shared sum
/// and the sequential sum it is checked against.
pub fn estimate(threads: usize, len: usize, receivers: usize) -> u64 {
    let array = len as u64 * std::mem::size_of::<f32>() as u64;
    let arrays = 2 * threads as u64 + receivers as u64 + 2;
    arrays.saturating_mul(array)
}

/// The memory the kernel says is available without swapping (`MemAvailable`), in bytes, where it
/// says.
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

/// Why a point needing `needed` bytes should be skipped when `available` are free, if it should:
/// it must leave a tenth for everything else.
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
    fn meminfo_is_read_in_kib() {
        let text =
            "MemTotal:       24000000 kB\nMemFree:        1000 kB\nMemAvailable:   22000000 kB\n";
        assert_eq!(parse_available(text), Some(22_000_000 * 1024));
        assert_eq!(parse_available("MemTotal: 5 kB\n"), None);
        assert!(available().is_some_and(|bytes| bytes > 0));
    }

    #[test]
    fn big_points_are_skipped() {
        // 32 participants, 16 M floats, allreduce: 98 arrays of 64 MB.
        let needed = estimate(32, 16_000_000, 32);
        assert_eq!(needed, 98 * 64_000_000);
        assert!(too_big(needed, Some(4 << 30)).unwrap().contains("6.3 GB"));
        assert_eq!(too_big(needed, Some(64 << 30)), None);
        assert_eq!(too_big(needed, None), None);
    }
}
