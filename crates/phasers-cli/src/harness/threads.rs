//! Which thread counts a sweep runs.

use super::args::sorted_unique;

/// The most threads one row may start: beyond any useful sweep, below a typo's millions.
pub const MAX_THREADS: usize = 4096;

/// The default sweep on `cores` cores: 1, powers of two, the cores and twice them, up to twice the
/// cores, so every default run shows how a barrier degrades when threads outnumber cores.
pub fn default_thread_counts(cores: usize) -> Vec<usize> {
    let cores = cores.clamp(1, MAX_THREADS / 2);
    let powers = std::iter::successors(Some(2), |power| Some(power * 2));
    let powers = powers.take_while(|&power| power <= 2 * cores);
    sorted_unique([1, cores, 2 * cores].into_iter().chain(powers).collect())
}

/// The sweep of `bench barrier --write-profile`: the default one, 4x the cores and 64 (a common
/// team size), so the profile covers every regime.
pub fn tune_thread_counts(cores: usize) -> Vec<usize> {
    let mut counts = default_thread_counts(cores);
    counts.extend([cores.saturating_mul(4).min(MAX_THREADS), 64]);
    sorted_unique(counts)
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
