//! Which thread counts a sweep runs.

/// The most threads one row may start. Far beyond any useful sweep on today's machines, and low
/// enough that a typo (`--threads 10000000`) is an error rather than an attempt to start millions
/// of threads.
pub const MAX_THREADS: usize = 4096;

/// Thread counts that show the oversubscribed regime even on a small machine.
const ALWAYS: [usize; 2] = [8, 64];

/// The default sweep on a machine with `cores` available cores: 1, 2, then powers of two up to
/// twice the cores, plus 8 and 64, sorted and without repeats.
pub fn default_thread_counts(cores: usize) -> Vec<usize> {
    let mut counts = vec![1, 2];
    let mut power = 4;
    while power <= cores.saturating_mul(2) && power <= MAX_THREADS {
        counts.push(power);
        power *= 2;
    }
    counts.extend(ALWAYS);
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

    #[test]
    fn default_on_two_cores_reaches_into_oversubscription() {
        assert_eq!(default_thread_counts(2), vec![1, 2, 4, 8, 64]);
    }

    #[test]
    fn default_on_other_machines() {
        assert_eq!(default_thread_counts(1), vec![1, 2, 8, 64]);
        assert_eq!(default_thread_counts(6), vec![1, 2, 4, 8, 64]);
        assert_eq!(default_thread_counts(48), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(default_thread_counts(64), vec![1, 2, 4, 8, 16, 32, 64, 128]);
    }

    #[test]
    fn thread_counts_parse_or_explain() {
        assert_eq!(parse_thread_count("8"), Ok(8));
        assert_eq!(parse_thread_count(" 3 "), Ok(3));
        assert!(parse_thread_count("0").unwrap_err().contains("at least 1"));
        assert!(parse_thread_count("x")
            .unwrap_err()
            .contains("not a thread count"));
        assert!(parse_thread_count("-1").is_err());
        assert!(parse_thread_count("").is_err());
        assert!(parse_thread_count("100000")
            .unwrap_err()
            .contains("allowed"));
    }
}
