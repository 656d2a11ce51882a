//! Which thread counts a sweep runs.

/// The most threads one row may start. Far beyond any useful sweep on today's machines, and low
/// enough that a typo (`--threads 10000000`) is an error rather than an attempt to start millions
/// of threads.
pub const MAX_THREADS: usize = 4096;

/// The default sweep on a machine with `cores` available cores: 1, powers of two, the core count
/// and twice the core count, up to twice the cores, sorted and without repeats. The upper half is
/// oversubscribed, so every default run shows how a barrier degrades when threads outnumber cores.
pub fn default_thread_counts(cores: usize) -> Vec<usize> {
    let cores = cores.clamp(1, MAX_THREADS / 2);
    let mut counts = vec![1, cores, 2 * cores];
    let mut power = 2;
    while power <= 2 * cores {
        counts.push(power);
        power *= 2;
    }
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// The sweep of `bench barrier --write-profile`: the default one, then further into
/// oversubscription (4x the cores, and 64, a common team size), so the profile covers every regime.
pub fn tune_thread_counts(cores: usize) -> Vec<usize> {
    let mut counts = default_thread_counts(cores);
    counts.extend([cores.saturating_mul(4).min(MAX_THREADS), 64]);
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// Parses one entry of `--threads`.
pub fn parse_thread_count(text: &str) -> Result<usize, String> {
    let count: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a thread count (a whole number from 1)"))?;
    match count {
        0 => Err("a barrier needs at least 1 thread".to_owned()),
        n if n > MAX_THREADS => Err(format!(
            "{n} threads is more than the {MAX_THREADS} allowed"
        )),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // tests/smoke.rs and main.rs: each way `--threads` is refused.
    #[test]
    fn sweeps_go_to_twice_the_cores_and_tuning_further() {
        for (cores, counts) in [
            (0, &[1, 2][..]),
            (1, &[1, 2]),
            (2, &[1, 2, 4]),
            (6, &[1, 2, 4, 6, 8, 12]),
            (16, &[1, 2, 4, 8, 16, 32]),
        ] {
            assert_eq!(default_thread_counts(cores), counts);
        }
        assert_eq!(tune_thread_counts(2), vec![1, 2, 4, 8, 64]);
        assert_eq!(tune_thread_counts(16), vec![1, 2, 4, 8, 16, 32, 64]);
    }
}
